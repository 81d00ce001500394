/* test_slurm.c -- reading what Slurm prints: host lists, scontrol and sacct records (recorded
 * from Slurm 22.05, Debian 12), failed states, output patterns, batch scripts, task layouts. */
#include "slurm.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

static void expect_hosts(const char *expr, long n, const char *want)
{
    dx_buf b = {0};
    long got = dx_hostlist_expand(expr, &b, 1000);
    if (got != n || (want && strcmp(b.p ? b.p : "", want) != 0))
        fail_msg("%s: %ld hosts '%s', expected %ld '%s'", expr, got, b.p ? b.p : "", n,
                 want ? want : "");
    dx_buf_fini(&b);
}

static void test_hostlist(void **state)
{
    (void)state;
    expect_hosts("node[01-03,07],gpu5", 5, "node01,node02,node03,node07,gpu5");
    expect_hosts("vm", 1, "vm");
    expect_hosts("rack[1-2]-n[8-9]", 4, "rack1-n8,rack1-n9,rack2-n8,rack2-n9");
    expect_hosts("a[098-101]", 4, "a098,a099,a100,a101");
    expect_hosts(" x , y ", 2, "x,y");
    expect_hosts("", 0, NULL);
    expect_hosts("node[1-", -1, NULL);
    expect_hosts("node[3-1]", -1, NULL);
    expect_hosts("node[a-b]", -1, NULL);
    dx_buf b = {0};
    assert_int_equal(dx_hostlist_expand("n[1-100000]", &b, 10), 10); /* capped */
    dx_buf_fini(&b);
}

/* scontrol -o -d show job, Slurm 22.05: a job name with a space, TRES with '=', -d details */
static const char scontrol_job[] =
    "JobId=2 JobName=my job UserId=alice(1000) GroupId=alice(1000) MCS_label=N/A "
    "Priority=4294901758 Nice=0 Account=(null) QOS=(null) JobState=FAILED "
    "Reason=NonZeroExitCode Dependency=(null) Requeue=1 Restarts=0 BatchFlag=1 Reboot=0 "
    "ExitCode=2:0 DerivedExitCode=2:0 RunTime=00:00:00 TimeLimit=UNLIMITED TimeMin=N/A "
    "SubmitTime=2026-12-07T12:58:49 StartTime=2026-12-07T12:58:50 "
    "EndTime=2026-12-07T12:58:50 Deadline=N/A Partition=debug AllocNode:Sid=localhost:9388 "
    "ReqNodeList=(null) ExcNodeList=(null) NodeList=node[01-02] BatchHost=node01 NumNodes=2 "
    "NumCPUs=6 NumTasks=6 CPUs/Task=1 ReqB:S:C:T=0:0:*:* TRES=cpu=6,node=2,billing=6 "
    "Socks/Node=* NtasksPerN:B:S:C=0:0:*:* CoreSpec=* JOB_GRES=(null)   Nodes=node01 "
    "CPU_IDs=0-3 Mem=0 GRES=   Nodes=node02 CPU_IDs=0-1 Mem=0 GRES= MinCPUsNode=1 "
    "Features=(null) OverSubscribe=OK Command=(null) WorkDir=/scratch/alice/run "
    "StdErr=/scratch/alice/run/out-2.txt StdIn=/dev/null StdOut=/scratch/alice/run/out-2.txt "
    "Power= \n";

static int is(dx_str s, const char *lit) { return s.n == strlen(lit) && !memcmp(s.p, lit, s.n); }

static void test_scontrol_record(void **state)
{
    (void)state;
    dx_slurm_rec r[2];
    assert_int_equal(dx_slurm_parse(scontrol_job, sizeof scontrol_job - 1, r, 2), 1);
    assert_true(is(r[0].job_id, "2"));
    assert_true(is(r[0].name, "my job"));
    assert_true(is(r[0].user, "alice"));
    assert_int_equal(r[0].uid, 1000);
    assert_true(is(r[0].state, "FAILED"));
    assert_true(is(r[0].exit_code, "2:0"));
    assert_true(is(r[0].node_list, "node[01-02]"));
    assert_true(is(r[0].num_tasks, "6"));
    assert_true(is(r[0].cpus_per_task, "1"));
    assert_true(is(r[0].tasks_per_node, "0:0:*:*"));
    assert_true(is(r[0].std_out, "/scratch/alice/run/out-2.txt"));
    assert_true(is(r[0].work_dir, "/scratch/alice/run"));
    assert_int_equal(r[0].array_job_id.n, 0);
    assert_int_equal((int)r[0].ndet, 2);
    assert_true(is(r[0].det_nodes[1], "node02"));
    assert_true(is(r[0].det_cpus[0], "0-3"));
    assert_true(dx_slurm_failed(&r[0]));
}

static void test_states(void **state)
{
    (void)state;
    static const struct {
        const char *text;
        int failed;
    } cases[] = {
        {"JobId=5 JobState=COMPLETED Reason=None ExitCode=0:0\n", 0},
        {"JobId=5 JobState=TIMEOUT Reason=TimeLimit ExitCode=0:15\n", 1},
        {"JobId=5 JobState=OUT_OF_MEMORY Reason=OutOfMemory ExitCode=0:125\n", 1},
        {"JobId=5 JobState=NODE_FAIL Reason=NodeDown ExitCode=0:0\n", 1},
        /* while the epilog runs: still completing, the exit code tells */
        {"JobId=5 JobState=COMPLETING Reason=NonZeroExitCode ExitCode=1:0\n", 1},
        {"JobId=5 JobState=COMPLETING Reason=None ExitCode=0:0\n", 0},
        {"JobId=5 JobState=CANCELLED Reason=None ExitCode=0:15\n", 1},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        dx_slurm_rec r;
        assert_int_equal(dx_slurm_parse(cases[i].text, strlen(cases[i].text), &r, 1), 1);
        if (dx_slurm_failed(&r) != cases[i].failed)
            fail_msg("%s: failed=%d", cases[i].text, dx_slurm_failed(&r));
    }
}

/* A job whose epilog runs may read COMPLETING before its nodes are listed: ddx slurm asks again. */
static void test_nodes_pending(void **state)
{
    (void)state;
    static const struct {
        const char *text;
        int pending;
    } cases[] = {
        {"JobId=5 JobState=COMPLETING Reason=NonZeroExitCode ExitCode=1:0 NodeList=\n", 1},
        {"JobId=5 JobState=COMPLETING Reason=NonZeroExitCode ExitCode=1:0 NodeList=(null)\n", 1},
        /* the line's last field is read too */
        {"JobId=5 JobState=COMPLETING Reason=NonZeroExitCode ExitCode=1:0 NodeList=gpu[1-2]\n", 0},
        {"JobId=5 JobState=FAILED Reason=NonZeroExitCode ExitCode=1:0 NodeList=\n", 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        dx_slurm_rec r;
        assert_int_equal(dx_slurm_parse(cases[i].text, strlen(cases[i].text), &r, 1), 1);
        if (dx_slurm_nodes_pending(&r) != cases[i].pending)
            fail_msg("%s: pending=%d", cases[i].text, dx_slurm_nodes_pending(&r));
    }
}

static void test_het_and_array(void **state)
{
    (void)state;
    static const char het[] =
        "JobId=10 HetJobId=10 HetJobOffset=0 JobName=a JobState=FAILED NodeList=g1 NumTasks=1 "
        "StdOut=/w/het-10.out\n"
        "JobId=11 HetJobId=10 HetJobOffset=1 JobName=a JobState=COMPLETED NodeList=g[2-3] "
        "NumTasks=2 StdOut=/w/het-10.out\n";
    dx_slurm_rec r[4];
    assert_int_equal(dx_slurm_parse(het, sizeof het - 1, r, 4), 2);
    assert_true(is(r[1].het_job_id, "10"));
    assert_true(is(r[1].het_offset, "1"));
    static const char arr[] = "JobId=4 ArrayJobId=3 ArrayTaskId=0 JobState=COMPLETED\n"
                              "JobId=3 ArrayJobId=3 ArrayTaskId=1 JobState=FAILED\n";
    assert_int_equal(dx_slurm_parse(arr, sizeof arr - 1, r, 4), 2);
    assert_true(is(r[0].array_task_id, "0"));
    /* more records than room: counted, not written */
    assert_int_equal(dx_slurm_parse(arr, sizeof arr - 1, r, 1), 2);
}

static void test_sacct(void **state)
{
    (void)state;
    static const char text[] = "123|train|bob|gpu|CANCELLED by 1000|0:15|2026-01-02T03:00:00|"
                               "2026-01-02T04:00:00|n[1-2]|2|16|/home/bob|alpha\n";
    dx_slurm_rec r;
    assert_int_equal(dx_slurm_parse_sacct(text, sizeof text - 1, &r, 1), 1);
    assert_true(is(r.state, "CANCELLED"));
    assert_true(is(r.node_list, "n[1-2]"));
    assert_true(is(r.work_dir, "/home/bob"));
    assert_true(is(r.cluster, "alpha"));
    assert_true(dx_slurm_failed(&r));
}

static void expect_pattern(const char *pat, const char *want)
{
    dx_slurm_fill f = {"123", "120", "3", "alice", "train", "node01"};
    dx_buf b = {0};
    int rc = dx_slurm_pattern(pat, &f, &b);
    if (want ? rc != 0 || strcmp(b.p, want) != 0 : rc != -1)
        fail_msg("%s: '%s' (rc %d), expected '%s'", pat, b.p ? b.p : "", rc, want ? want : "-1");
    dx_buf_fini(&b);
}

static void test_patterns(void **state)
{
    (void)state;
    expect_pattern("task-%j-%t.out", "task-123-*.out");
    expect_pattern("%x_%A_%a.%N.log", "train_120_3.*.log");
    expect_pattern("logs/%u/%5t.err", "logs/alice/*.err");
    expect_pattern("100%%-%J", "100%-123");
    expect_pattern("bad-%q", NULL);
}

static void test_script_outputs(void **state)
{
    (void)state;
    static const char script[] = "#!/bin/bash\n"
                                 "#SBATCH --output=batch-%j.out\n"
                                 "srun --output=task-%j-%t.out python train.py\n"
                                 "  srun -N2 -o logs/%N-%t.log --error \"err-%t.txt\" python x.py\n"
                                 "echo srun --output=not-a-srun-line\n"
                                 "/usr/bin/srun -oplain-%t.out hostname\n";
    dx_buf b = {0};
    assert_int_equal(dx_slurm_script_outputs(script, sizeof script - 1, &b), 4);
    assert_string_equal(b.p, "task-%j-%t.out\nlogs/%N-%t.log\nerr-%t.txt\nplain-%t.out\n");
    dx_buf_fini(&b);
}

static void test_task_layout(void **state)
{
    (void)state;
    int t[16];
    const long cpus[] = {4, 2};
    dx_slurm_task_layout(2, cpus, 1, 0, 6, t); /* block: fill node 0's CPUs, then node 1 */
    const int want1[] = {0, 0, 0, 0, 1, 1};
    assert_memory_equal(t, want1, sizeof want1);
    dx_slurm_task_layout(3, NULL, 1, 2, 6, t); /* --ntasks-per-node=2 */
    const int want2[] = {0, 0, 1, 1, 2, 2};
    assert_memory_equal(t, want2, sizeof want2);
    dx_slurm_task_layout(2, NULL, 1, 0, 5, t); /* no CPU counts: spread evenly */
    const int want3[] = {0, 0, 0, 1, 1};
    assert_memory_equal(t, want3, sizeof want3);
    dx_slurm_task_layout(2, cpus, 2, 0, 3, t); /* 2 CPUs a task */
    const int want4[] = {0, 0, 1};
    assert_memory_equal(t, want4, sizeof want4);
    dx_slurm_task_layout(1, cpus, 1, 0, 6, t); /* oversubscribed: the rest go round */
    for (int i = 0; i < 6; i++)
        assert_int_equal(t[i], 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hostlist),      cmocka_unit_test(test_scontrol_record),
        cmocka_unit_test(test_states),        cmocka_unit_test(test_nodes_pending),
        cmocka_unit_test(test_het_and_array), cmocka_unit_test(test_sacct),
        cmocka_unit_test(test_patterns),      cmocka_unit_test(test_script_outputs),
        cmocka_unit_test(test_task_layout),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
