/* test_diag.c -- the public API end to end on a small test knowledge base: scoring, the root
 * before its symptoms, context from facts, checks, noise, a healthy log, allocation failures. */
#include "diag.h"
#include "job/progress.h"
#include "job/watchdog.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "kb_fixture.h"

static int setup(void **state)
{
    (void)state;
    return kb_fixture_open("kb");
}

/* The rank of the first vote cast from source (vetoed or not), -1 none; its line in *why. */
static int vote_rank(const ddx_report *rep, const char *source, const char **why)
{
    for (size_t i = 0; i < rep->job.nvotes; i++)
        if (!strcmp(rep->job.votes[i].source, source) && rep->job.votes[i].nranks) {
            if (why)
                *why = rep->job.votes[i].why;
            return rep->job.votes[i].ranks[0];
        }
    return -1;
}

/* The watchdog's account of rank r. */
static const dx_timeout *wd(const ddx_report *rep, int r)
{
    const dx_timeout *t = dx_watchdog_of(&rep->job, dx_job_rank_get(&rep->job, r));
    assert_non_null(t);
    return t;
}

/* The straggler the steps reading names, -1 none. */
static int straggler(const ddx_report *rep)
{
    const dx_fact *x = dx_facts_get(&rep->facts, "job.straggler_rank");
    return x ? atoi(x->value) : -1;
}

/* The summary of rank r. */
static dx_rank_view view(const ddx_report *rep, int r)
{
    dx_rank_view v;
    assert_non_null(dx_job_rank_get(&rep->job, r));
    dx_job_rank_view(&rep->job, dx_job_rank_get(&rep->job, r), &v);
    return v;
}

/* Diagnoses the given (name, text) buffers. */
static ddx_report *run(int flags, size_t n, const char *const *bufs)
{
    ddx_job *job;
    ddx_report *rep = NULL;
    ddx_error e = {0};
    assert_int_equal(ddx_job_new(&job, kb, &e), DDX_OK);
    for (size_t i = 0; i < n; i++)
        assert_int_equal(
            ddx_job_add_buffer(job, bufs[2 * i], bufs[2 * i + 1], strlen(bufs[2 * i + 1]), &e),
            DDX_OK);
    assert_int_equal(ddx_job_diagnose(job, flags, &rep, &e), DDX_OK);
    ddx_job_free(job);
    return rep;
}

static void test_root_outranks_symptoms(void **state)
{
    (void)state;
    /* rank 0 times out later and louder; rank 1 failed first */
    const char *const in[] = {
        "rank0.log",
        "2024-05-01 12:00:09,000 Timed out waiting for peers\n"
        "2024-05-01 12:00:10,000 Timed out waiting for peers\n"
        "ChildFailedError\n",
        "rank1.log",
        "2024-05-01 12:00:01,000 RuntimeError: boom on rank 1\n",
    };
    ddx_report *rep = run(DDX_DIAG_ALL, 2, in);
    assert_true(ddx_report_count(rep) >= 2);
    assert_string_equal(ddx_report_id(rep, 0), "t-root");
    assert_string_equal(ddx_report_id(rep, 1), "t-symptom");
    assert_true(ddx_report_confidence(rep, 0) > ddx_report_confidence(rep, 1));
    assert_int_equal(ddx_report_culprit_rank(rep), 1);
    /* the score is explained: the earliest-root bonus names the line */
    const dx_finding *f = &rep->f[0];
    int found = 0;
    for (size_t i = 0; i < f->ncontribs; i++)
        found |= strstr(f->contribs[i].why, "earliest root failure") != NULL &&
                 strstr(f->contribs[i].why, "rank1.log:1") != NULL;
    assert_true(found);
    ddx_report_free(rep);
}

static void test_healthy_log_is_quiet(void **state)
{
    (void)state;
    const char *const in[] = {"train.log", "step 1 loss 2.3\nstep 2 loss 2.1\nharmless warning\n"};
    ddx_report *rep = run(0, 1, in);
    assert_int_equal(ddx_report_count(rep), 0);
    assert_int_equal(rep->noise_lines, 1);
    ddx_report_free(rep);
}

static void test_context_and_checks(void **state)
{
    (void)state;
    const char *const without[] = {"log", "RuntimeError: boom on rank 0\n"};
    const char *const with[] = {"log", "RuntimeError: boom on rank 0\n", "pip-freeze.txt",
                                "numpy==1.26.0\ntorch==2.1.0\n"};
    const char *const old[] = {"log", "RuntimeError: boom on rank 0\n", "pip-freeze.txt",
                               "torch==1.13.1\n"};
    ddx_report *a = run(0, 1, without), *b = run(0, 2, with), *c = run(0, 2, old);
    double ca = ddx_report_confidence(a, 0), cb = ddx_report_confidence(b, 0),
           cc = ddx_report_confidence(c, 0);
    assert_true(cb > ca);
    assert_true(cc < ca);
    /* checks: confirmed with torch 2.1, contradicted with 1.13, not visible without facts */
    assert_int_equal(a->f[0].checks[0].status, DX_CHECK_NOT_VISIBLE);
    assert_int_equal(b->f[0].checks[0].status, DX_CHECK_CONFIRMED);
    assert_non_null(strstr(b->f[0].checks[0].because, "pip-freeze.txt:2"));
    assert_int_equal(c->f[0].checks[0].status, DX_CHECK_CONTRADICTED);
    assert_int_equal(b->f[0].checks[1].status, DX_CHECK_NOT_VISIBLE);
    ddx_report_free(a);
    ddx_report_free(b);
    ddx_report_free(c);
}

static void test_variant_and_json(void **state)
{
    (void)state;
    const char *const in[] = {"log", "boom detail: gears\nRuntimeError: boom on rank 2\n"};
    ddx_report *rep = run(0, 1, in);
    assert_non_null(rep->f[0].variant);
    assert_string_equal(rep->f[0].variant->id, "detailed");
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    ddx_error e = {0};
    assert_int_equal(ddx_report_write_json(rep, f, &e), DDX_OK);
    fclose(f);
    static const char *const keys[] = {
        "\"schema\": 1", "\"ddx_version\"",       "\"inputs\"",   "\"culprit_rank\": 2",
        "\"diagnoses\"", "\"first_seen\"",        "\"evidence\"", "\"checks\"",
        "\"fix\"",       "\"sources\"",           "\"facts\"",    "\"timeline\"",
        "\"level\"",     "Do the detailed thing."};
    for (size_t i = 0; i < sizeof keys / sizeof *keys; i++)
        if (!strstr(buf, keys[i]))
            fail_msg("JSON lacks %s:\n%s", keys[i], buf);
    free(buf);
    ddx_report_free(rep);
}

static void test_invalid_bytes_in_evidence(void **state)
{
    (void)state;
    const char text[] = "RuntimeError: boom on rank 0 \xff\xfe\x01 end\n";
    ddx_job *job;
    ddx_report *rep;
    ddx_error e = {0};
    assert_int_equal(ddx_job_new(&job, kb, &e), DDX_OK);
    assert_int_equal(ddx_job_add_buffer(job, "log", text, sizeof text - 1, &e), DDX_OK);
    assert_int_equal(ddx_job_diagnose(job, 0, &rep, &e), DDX_OK);
    const char *t = rep->f[0].evid[0].ev->text;
    assert_non_null(strstr(t, "\xEF\xBF\xBD"));
    assert_null(strchr(t, '\x01'));
    ddx_report_free(rep);
    ddx_job_free(job);
}

static void test_missing_path(void **state)
{
    (void)state;
    ddx_job *job;
    ddx_error e = {0};
    assert_int_equal(ddx_job_new(&job, kb, &e), DDX_OK);
    assert_int_equal(ddx_job_add_path(job, "/nonexistent/rank3.log", &e), DDX_EIO);
    assert_non_null(strstr(e.message, "/nonexistent/rank3.log"));
    ddx_job_free(job);
}

static void test_culprit_behind_in_sequence(void **state)
{
    (void)state;
    /* torch 2.4 style: every rank times out; rank 2 completed one collective fewer */
    const char *const in[] = {
        "console.log",
        "[rank0]:[E501 12:00:00.1 ProcessGroupNCCL.cpp:1] [Rank 0] Watchdog caught collective "
        "operation timeout: WorkNCCL(SeqNum=11, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, "
        "Timeout(ms)=600000) ran for 600001 milliseconds before timing out.\n"
        "[rank0]:[E501 12:00:00.2 ProcessGroupNCCL.cpp:2] [PG 0 Rank 0] Exception (either an "
        "error or timeout) detected by watchdog at work: 11, last enqueued NCCL work: 11, last "
        "completed NCCL work: 10.\n"
        "[rank1]:[E501 12:00:00.1 ProcessGroupNCCL.cpp:1] [Rank 1] Watchdog caught collective "
        "operation timeout: WorkNCCL(SeqNum=11, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, "
        "Timeout(ms)=600000) ran for 600001 milliseconds before timing out.\n"
        "[rank1]:[E501 12:00:00.2 ProcessGroupNCCL.cpp:2] [PG 0 Rank 1] Exception (either an "
        "error or timeout) detected by watchdog at work: 11, last enqueued NCCL work: 11, last "
        "completed NCCL work: 10.\n"
        "[rank2]:[E501 12:00:00.1 ProcessGroupNCCL.cpp:1] [Rank 2] Watchdog caught collective "
        "operation timeout: WorkNCCL(SeqNum=10, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, "
        "Timeout(ms)=600000) ran for 600001 milliseconds before timing out.\n"
        "[rank2]:[E501 12:00:00.2 ProcessGroupNCCL.cpp:2] [PG 0 Rank 2] Exception (either an "
        "error or timeout) detected by watchdog at work: 10, last enqueued NCCL work: 10, last "
        "completed NCCL work: 9.\n"
        "Timed out waiting for peers\n",
    };
    ddx_report *rep = run(0, 1, in);
    assert_int_equal(ddx_report_culprit_rank(rep), 2);
    assert_int_equal(rep->job.nranks, 3);
    assert_int_equal(wd(rep, 2)->last_completed, 9);
    assert_int_equal(wd(rep, 0)->seq, 11);
    assert_string_equal(wd(rep, 0)->op, "ALLREDUCE");
    ddx_report_free(rep);
}

static void test_culprit_silent_rank(void **state)
{
    (void)state;
    /* ranks 0 and 2 time out; rank 1 printed ordinary lines and nothing else */
    const char *const in[] = {
        "console.log",
        "[rank1]: step 7 loss 0.5\n"
        "[rank0]:[E ProcessGroupNCCL.cpp:1] [Rank 0] Watchdog caught collective operation "
        "timeout: WorkNCCL(SeqNum=8, OpType=ALLREDUCE, Timeout(ms)=1800000) ran for 1800001 "
        "milliseconds before timing out.\n"
        "[rank2]:[E ProcessGroupNCCL.cpp:1] [Rank 2] Watchdog caught collective operation "
        "timeout: WorkNCCL(SeqNum=8, OpType=ALLREDUCE, Timeout(ms)=1800000) ran for 1800001 "
        "milliseconds before timing out.\n"
        "Timed out waiting for peers\n",
    };
    ddx_report *rep = run(0, 1, in);
    assert_int_equal(ddx_report_culprit_rank(rep), 1);
    assert_true(rep->nculprit_signals >= 1);
    assert_non_null(strstr(rep->culprit_signals[0], "rank 1"));
    ddx_report_free(rep);
}

static void test_victim_timeout_never_outranks_root(void **state)
{
    (void)state;
    /* the root failure comes later in the file than the timeouts, but earlier in time */
    const char *const in[] = {
        "console.log",
        "[rank0]: 2024-05-01 12:10:00,000 Timed out waiting for peers\n"
        "[rank2]: 2024-05-01 12:10:01,000 Timed out waiting for peers\n"
        "[rank1]: 2024-05-01 12:00:00,000 RuntimeError: boom on rank 1\n",
    };
    ddx_report *rep = run(DDX_DIAG_ALL, 1, in);
    assert_string_equal(ddx_report_id(rep, 0), "t-root");
    assert_int_equal(ddx_report_culprit_rank(rep), 1);
    ddx_report_free(rep);
}

static void test_desync_from_watchdog(void **state)
{
    (void)state;
    /* same SeqNum, different OpType: rank 2 is in a BROADCAST while the others all-reduce */
    dx_buf b = {0};
    for (int r = 0; r < 3; r++)
        dx_buf_addf(&b,
                    "[rank%d]:[E501 12:00:00.1 ProcessGroupNCCL.cpp:1] [Rank %d] Watchdog "
                    "caught collective operation timeout: WorkNCCL(SeqNum=42, OpType=%s, "
                    "NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for 600001 milliseconds "
                    "before timing out.\n",
                    r, r, r == 2 ? "BROADCAST" : "ALLREDUCE");
    dx_buf_addf(&b, "Timed out waiting for peers\n");
    const char *const in[] = {"console.log", dx_buf_cstr(&b)};
    ddx_report *rep = run(0, 1, in);
    assert_int_equal(vote_rank(rep, "desync", NULL), 2);
    const dx_fact *x = dx_facts_get(&rep->facts, "job.desync");
    assert_non_null(x);
    assert_non_null(strstr(x->value, "SeqNum 42"));
    assert_int_equal(ddx_report_culprit_rank(rep), 2);
    ddx_report_free(rep);
    dx_buf_fini(&b);
}

static void test_desync_by_size(void **state)
{
    (void)state;
    /* same SeqNum and operation, different sizes: rank 1 gathers something else */
    dx_buf b = {0};
    for (int r = 0; r < 3; r++)
        dx_buf_addf(&b,
                    "[rank%d]:[E501 12:00:00.1 ProcessGroupNCCL.cpp:1] [Rank %d] Watchdog "
                    "caught collective operation timeout: WorkNCCL(SeqNum=2109, "
                    "OpType=_ALLGATHER_BASE, NumelIn=%s, NumelOut=1, Timeout(ms)=600000) ran "
                    "for 600001 milliseconds before timing out.\n",
                    r, r, r == 1 ? "40960" : "262711296");
    const char *const in[] = {"console.log", dx_buf_cstr(&b)};
    ddx_report *rep = run(0, 1, in);
    assert_int_equal(vote_rank(rep, "desync", NULL), 1);
    assert_non_null(strstr(dx_facts_get(&rep->facts, "job.desync")->value, "40960"));
    ddx_report_free(rep);
    dx_buf_fini(&b);
}

static void test_desync_from_blocking_wait(void **state)
{
    (void)state;
    /* the blocking-wait form of a timeout (TORCH_NCCL_BLOCKING_WAIT=1), as in a real FSDP log */
    dx_buf b = {0};
    for (int r = 0; r < 3; r++)
        dx_buf_addf(&b,
                    "[rank%d]:[E616 13:41:10.043090898 ProcessGroupNCCL.cpp:628] [Rank %d] "
                    "Work WorkNCCL(SeqNum=2109, OpType=_ALLGATHER_BASE, NumelIn=%s, "
                    "NumelOut=81920, Timeout(ms)=1800000) timed out in blocking wait "
                    "(TORCH_NCCL_BLOCKING_WAIT=1).\n",
                    r, r, r == 0 ? "40960" : "262711296");
    const char *const in[] = {"console.log", dx_buf_cstr(&b)};
    ddx_report *rep = run(0, 1, in);
    assert_int_equal(rep->job.nranks, 3);
    assert_true(wd(rep, 1)->timed_out);
    assert_int_equal(wd(rep, 1)->seq, 2109);
    assert_int_equal(vote_rank(rep, "desync", NULL), 0);
    ddx_report_free(rep);
    dx_buf_fini(&b);
}

static void test_desync_old_format_odd_first(void **state)
{
    (void)state;
    /* torch < 1.11 prints no SeqNum; rank 0 alone all-reduces while the others broadcast */
    dx_buf b = {0};
    for (int r = 0; r < 4; r++)
        dx_buf_addf(&b,
                    "[E ProcessGroupNCCL.cpp:566] [Rank %d] Watchdog caught collective "
                    "operation timeout: WorkNCCL(OpType=%s, Timeout(ms)=1800000) ran for "
                    "1801060 milliseconds before timing out.\n",
                    r, r == 0 ? "ALLREDUCE" : "BROADCAST");
    const char *const in[] = {"console.log", dx_buf_cstr(&b)};
    ddx_report *rep = run(0, 1, in);
    assert_int_equal(vote_rank(rep, "desync", NULL), 0);
    assert_non_null(dx_facts_get(&rep->facts, "job.desync"));
    ddx_report_free(rep);
    dx_buf_fini(&b);
}

static void test_torchelastic_table(void **state)
{
    (void)state;
    const char *const in[] = {
        "console.log",
        "ChildFailedError\n"
        "Failures:\n"
        "[1]:\n"
        "  time      : 2024-05-01_12:00:05\n"
        "  rank      : 0 (local_rank: 0)\n"
        "  exitcode  : -15 (pid: 11)\n"
        "Root Cause (first observed failure):\n"
        "[0]:\n"
        "  time      : 2024-05-01_12:00:01\n"
        "  host      : node1\n"
        "  rank      : 3 (local_rank: 3)\n"
        "  exitcode  : -9 (pid: 12)\n"
        "Timed out waiting for peers\n",
    };
    ddx_report *rep = run(0, 1, in);
    const char *why = NULL;
    assert_int_equal(vote_rank(rep, "table", &why), 3);
    assert_non_null(strstr(why, "exit code -9"));
    assert_int_equal(ddx_report_culprit_rank(rep), 3);
    assert_non_null(strstr(rep->culprit_signals[0], "killed by signal 9"));
    ddx_report_free(rep);
}

static void expect_fact(const ddx_report *rep, const char *name, const char *value)
{
    const dx_fact *x = dx_facts_get(&rep->facts, name);
    if (!x)
        fail_msg("no fact %s", name);
    if (strcmp(x->value, value) != 0)
        fail_msg("fact %s = '%s', expected '%s'", name, x->value, value);
}

static void test_fact_extractors(void **state)
{
    (void)state;
    /* lines as printed by pip, collect_env, ds_report, nvidia-smi, env and launchers */
    const char *const in[] = {
        "env.txt",
        "Collecting environment information...\n"
        "PyTorch version: 2.1.0+cu121\n"
        "CUDA used to build PyTorch: 12.1\n"
        "Python version: 3.10.12 (main, Nov 20 2023, 15:14:05) [GCC 11.4.0] (64-bit runtime)\n"
        "GPU 0: NVIDIA A100-SXM4-80GB\n"
        "Nvidia driver version: 535.104.05\n"
        "[pip3] numpy==1.26.4\n"
        "[conda] deepspeed                 0.14.2                   pypi_0    pypi\n",
        "pip.txt",
        "transformers==4.40.1\n"
        "accelerate     0.30.0\n"
        "nvidia-nccl-cu12==2.20.5\n"
        "flash-attn==2.5.8\n"
        "deepspeed  0.14.9\n",
        "console.log",
        "$ torchrun --nproc_per_node=8 --nnodes 2 --master_port=29501 train.py\n"
        "node1:123:456 [0] NCCL INFO NCCL version 2.18.1+cuda12.1\n"
        "[2024-05-01 12:00:00,000] [INFO] [logging.py:96:log_dist] [Rank 0] DeepSpeed info: "
        "version=0.14.0, git-hash=unknown, git-branch=unknown\n"
        "  File \"/opt/conda/lib/python3.10/site-packages/deepspeed/runtime/engine.py\", line 1\n"
        "ddp_find_unused_parameters=False,\n",
        "printenv.txt",
        "NCCL_DEBUG=INFO\nMASTER_ADDR=10.0.0.1\nHOME=/root\nWORLD_SIZE=16\n",
    };
    ddx_report *rep = run(0, 4, in);
    expect_fact(rep, "torch.version", "2.1.0+cu121");
    expect_fact(rep, "cuda.version", "12.1");
    expect_fact(rep, "python.version", "3.10.12");
    expect_fact(rep, "gpu.model", "NVIDIA A100-SXM4-80GB");
    expect_fact(rep, "cuda.driver_version", "535.104.05");
    expect_fact(rep, "numpy.version", "1.26.4");
    /* the first value seen wins: the env dump's 0.14.2 before the log's 0.14.0 */
    expect_fact(rep, "deepspeed.version", "0.14.2");
    expect_fact(rep, "transformers.version", "4.40.1");
    expect_fact(rep, "accelerate.version", "0.30.0");
    expect_fact(rep, "nccl.version", "2.20.5");
    expect_fact(rep, "flash_attn.version", "2.5.8");
    expect_fact(rep, "launcher.nproc_per_node", "8");
    expect_fact(rep, "launcher.nnodes", "2");
    expect_fact(rep, "launcher.master_port", "29501");
    expect_fact(rep, "launcher.name", "torchrun");
    expect_fact(rep, "deepspeed.in_traceback", "true");
    expect_fact(rep, "ddp.find_unused_parameters", "False");
    expect_fact(rep, "env.NCCL_DEBUG", "INFO");
    expect_fact(rep, "env.MASTER_ADDR", "10.0.0.1");
    expect_fact(rep, "env.WORLD_SIZE", "16");
    assert_null(dx_facts_get(&rep->facts, "env.HOME"));
    assert_null(dx_facts_get(&rep->facts, "trainer.deepspeed")); /* not from "deepspeed==x" */
    /* each fact remembers where it came from */
    const dx_fact *x = dx_facts_get(&rep->facts, "deepspeed.version");
    assert_string_equal(x->path, "env.txt");
    assert_int_equal(x->line, 8);
    ddx_report_free(rep);
}

static void test_straggler_from_step_times(void **state)
{
    (void)state;
    /* Megatron-style per-iteration times: rank 2 runs at about half the speed of the others */
    dx_buf b = {0};
    for (int step = 1; step <= 8; step++)
        for (int r = 0; r < 4; r++)
            dx_buf_addf(&b, "[rank%d]: iteration %d/100 | elapsed time per iteration (ms): %d.5\n",
                        r, step, r == 2 ? 2000 + step : 1000 + step * (r + 1));
    const char *const in[] = {"train.log", dx_buf_cstr(&b)};
    ddx_report *rep = run(0, 1, in);
    assert_int_equal(straggler(rep), 2);
    assert_true(view(rep, 2).slow);
    assert_false(view(rep, 0).slow);
    assert_true(view(rep, 2).rel_speed < 0.75);
    assert_true(view(rep, 2).step_median[0] > 1.9);
    expect_fact(rep, "job.straggler_rank", "2");
    ddx_report_free(rep);
    dx_buf_fini(&b);

    /* no straggler when every rank runs at the same pace */
    dx_buf even = {0};
    for (int step = 1; step <= 8; step++)
        for (int r = 0; r < 4; r++)
            dx_buf_addf(&even, "[rank%d]: step %d loss 0.1 step_time %d.%03ds\n", r, step, 1,
                        10 * r);
    const char *const in2[] = {"train.log", dx_buf_cstr(&even)};
    rep = run(0, 1, in2);
    assert_int_equal(straggler(rep), -1);
    assert_null(dx_facts_get(&rep->facts, "job.straggler_rank"));
    ddx_report_free(rep);
    dx_buf_fini(&even);
}

static void test_torchelastic_killed_rank_over_named_victim(void **state)
{
    (void)state;
    /* the 1.13 table names rank 0 (an error file, same second) although rank 1 was killed */
    const char *const in[] = {
        "console.log",
        "Failures:\n"
        "[1]:\n"
        "  time      : 2026-11-30_05:54:58\n"
        "  rank      : 1 (local_rank: 1)\n"
        "  exitcode  : -9 (pid: 18673)\n"
        "  traceback : Signal 9 (SIGKILL) received by PID 18673\n"
        "Root Cause (first observed failure):\n"
        "[0]:\n"
        "  time      : 2026-11-30_05:54:58\n"
        "  rank      : 0 (local_rank: 0)\n"
        "  exitcode  : 1 (pid: 18672)\n"
        "Timed out waiting for peers\n",
    };
    ddx_report *rep = run(0, 1, in);
    const char *why = NULL;
    assert_int_equal(vote_rank(rep, "table-killed", &why), 1);
    assert_non_null(strstr(why, "'first observed failure', rank 0,"));
    assert_int_equal(ddx_report_culprit_rank(rep), 1);
    ddx_report_free(rep);
}

static void test_rank_output_stops_early(void **state)
{
    (void)state;
    /* rank 1 prints nothing after 12:00:05 while ranks 0 and 2 go on until their timeouts */
    const char *const in[] = {
        "console.log",
        "[rank0]: 2024-05-01 12:00:04,000 step 10\n"
        "[rank1]: 2024-05-01 12:00:05,000 step 10\n"
        "[rank2]: 2024-05-01 12:00:04,500 step 10\n"
        "[rank0]: 2024-05-01 12:10:06,000 Timed out waiting for peers\n"
        "[rank2]: 2024-05-01 12:10:06,000 Timed out waiting for peers\n",
    };
    ddx_report *rep = run(0, 1, in);
    assert_int_equal(vote_rank(rep, "stopped", NULL), 1);
    assert_true(view(rep, 1).stopped);
    assert_int_equal(ddx_report_culprit_rank(rep), 1);
    ddx_report_free(rep);
}

static void test_stack_dumps(void **state)
{
    (void)state;
    /* py-spy dumps of ranks 0 and 1 (in all_reduce) and a faulthandler dump of rank 2, which is
     * still loading data: rank 2 is the one the others wait for */
    const char *const in[] = {
        "rank0.txt",
        "Process 101: python train.py\n"
        "Python v3.10.12 (/usr/bin/python3.10)\n\n"
        "Thread 101 (active): \"MainThread\"\n"
        "    all_reduce (torch/distributed/distributed_c10d.py:2050)\n"
        "    train_step (train.py:88)\n",
        "rank1.txt",
        "Thread 102 (idle): \"MainThread\"\n"
        "    all_reduce (torch/distributed/distributed_c10d.py:2050)\n"
        "    train_step (train.py:88)\n",
        "rank2.txt",
        "Current thread 0x00007f0a1b2c3d40 (most recent call first):\n"
        "  File \"/data/loader.py\", line 41 in __getitem__\n"
        "  File \"train.py\", line 80 in train_step\n",
    };
    ddx_report *rep = run(0, 3, in);
    assert_non_null(view(rep, 0).waits_in);
    assert_string_equal(view(rep, 0).waits_in,
                        "all_reduce (torch/distributed/distributed_c10d.py:2050)");
    assert_string_equal(view(rep, 2).waits_in, "__getitem__ (/data/loader.py:41)");
    assert_int_equal(vote_rank(rep, "stack", NULL), 2);
    /* nothing failed: the dumps alone make it a hang, and rank 2 the one to look at */
    assert_non_null(dx_facts_get(&rep->facts, "job.hang"));
    assert_int_equal(ddx_report_culprit_rank(rep), 2);
    ddx_report_free(rep);
}

static void test_one_stack_dump(void **state)
{
    (void)state;
    /* one rank's py-spy dump, posted under a heading that names the rank: its main thread is
     * in threading's wait, called from the data iterator; nothing failed. The standard
     * library's wait is not a collective, and the caller outside it says what it waits for. */
    const char *const in[] = {
        "hang.txt",
        "The stack for rank3:\n"
        "Thread 0x7FA6E7C01740 (idle): \"MainThread\"\n"
        "    wait (threading.py:302)\n"
        "    get (queue.py:170)\n"
        "    __next__ (fairseq/data/iterators.py:648)\n"
        "    train (fairseq_cli/train.py:274)\n",
    };
    ddx_report *rep = run(DDX_DIAG_ALL, 1, in);
    assert_non_null(rep->job.by_rank[3]);
    assert_string_equal(view(rep, 3).waits_in, "wait (threading.py:302), called from __next__ "
                                               "(fairseq/data/iterators.py:648)");
    assert_int_equal(vote_rank(rep, "stack", NULL), 3);
    assert_null(dx_facts_get(&rep->facts, "job.hang"));
    assert_non_null(dx_facts_get(&rep->facts, "job.stuck_rank"));
    assert_int_equal(ddx_report_culprit_rank(rep), 3);
    ddx_report_free(rep);
    /* the same rank's stack inside torch.distributed's wait is a waiting rank: no suspect */
    const char *const waits[] = {
        "hang.txt",
        "Process 4242: python train.py --local_rank=1\n"
        "Python v3.10.12 (/usr/bin/python3.10)\n\n"
        "Thread 4242 (idle): \"MainThread\"\n"
        "    wait (torch/distributed/distributed_c10d.py:1200)\n"
        "    train_step (train.py:88)\n",
    };
    rep = run(DDX_DIAG_ALL, 1, waits);
    assert_non_null(rep->job.by_rank[1]);
    assert_int_equal(vote_rank(rep, "stack", NULL), -1);
    assert_non_null(dx_facts_get(&rep->facts, "job.hang"));
    ddx_report_free(rep);
}

static void test_timeout_after_loop(void **state)
{
    (void)state;
    const char *wd = "[E ProcessGroupNCCL.cpp:828] [Rank 0] Watchdog caught collective operation "
                     "timeout: WorkNCCL(SeqNum=2778, OpType=_ALLGATHER_BASE, Timeout(ms)=1800000) "
                     "ran for 1801649 milliseconds before timing out.\n";
    const char *bar = "100%|##########| 9/9 [01:54<00:00, 12.76s/it]\n";
    char after[512], before[512];
    snprintf(after, sizeof after, "%s%s", bar, wd);
    snprintf(before, sizeof before, "%s%s", wd, bar);
    /* (that such a timeout points at what follows the loop is the references' rule, their
     * `after: loop-end` signals; the job model keeps the rank that timed out there alone) */
    const char *const in1[] = {"console.log", after};
    ddx_report *rep = run(DDX_DIAG_ALL, 1, in1);
    assert_int_equal(dx_after_loop_rank(&rep->job), 0);
    ddx_report_free(rep);
    /* a bar that ends after the timeout says nothing about when it happened */
    const char *const in2[] = {"console.log", before};
    rep = run(DDX_DIAG_ALL, 1, in2);
    assert_int_equal(dx_after_loop_rank(&rep->job), -1);
    ddx_report_free(rep);
    /* a bar still running is not the end of a loop */
    const char *const in3[] = {"console.log",
                               "75%|#######5  | 3/4 [01:51<00:25, 25.36s/it]\n"
                               "[E ProcessGroupNCCL.cpp:828] [Rank 0] Watchdog caught collective "
                               "operation timeout: WorkNCCL(SeqNum=5, OpType=ALLREDUCE, "
                               "Timeout(ms)=1800000) ran for 1800012 milliseconds before timing "
                               "out.\n"};
    rep = run(DDX_DIAG_ALL, 1, in3);
    assert_int_equal(dx_after_loop_rank(&rep->job), -1);
    ddx_report_free(rep);
}

static void test_rank0_bar_before_timeouts(void **state)
{
    (void)state;
    /* rank 0's evaluation bar, then ranks 7 and 3 time out; rank 0 does not: it was busy */
    const char *const in[] = {
        "console.log",
        " 94%|#########3| 5651/6019 [00:10<00:00, 998.96it/s]\n"
        " 97%|#########7| 5853/6019 [00:10<00:00, 1245.09it/s]\n"
        "                                                     \n"
        "[E ProcessGroupNCCL.cpp:566] [Rank 7] Watchdog caught collective operation timeout: "
        "WorkNCCL(OpType=ALLREDUCE, Timeout(ms)=1800000) ran for 1806871 milliseconds before "
        "timing out.\n"
        "[E ProcessGroupNCCL.cpp:566] [Rank 3] Watchdog caught collective operation timeout: "
        "WorkNCCL(OpType=ALLREDUCE, Timeout(ms)=1800000) ran for 1806762 milliseconds before "
        "timing out.\n",
    };
    ddx_report *rep = run(DDX_DIAG_ALL, 1, in);
    assert_int_equal(vote_rank(rep, "busy", NULL), 0);
    const char *why = NULL;
    assert_int_equal(vote_rank(rep, "busy", &why), 0);
    assert_non_null(strstr(why, "5853/6019"));
    ddx_report_free(rep);
    /* a training bar cut mid-loop by the timeouts: every rank stalled in that step */
    const char *const mid[] = {
        "console.log",
        "  3%|3         | 270/9847 [05:50<3:17:42,  1.24s/it]\n"
        "[E ProcessGroupNCCL.cpp:467] [Rank 1] Watchdog caught collective operation timeout: "
        "WorkNCCL(SeqNum=211067, OpType=_ALLGATHER_BASE, NumelIn=2359296, NumelOut=18874368, "
        "Timeout(ms)=1800000) ran for 1800493 milliseconds before timing out.\n",
    };
    rep = run(DDX_DIAG_ALL, 1, mid);
    assert_int_equal(vote_rank(rep, "busy", NULL), -1);
    ddx_report_free(rep);
    /* the same with rank 0 timing out as well: it waited like the others */
    const char *const all[] = {
        "console.log",
        " 97%|#########7| 5853/6019 [00:10<00:00, 1245.09it/s]\n"
        "[E ProcessGroupNCCL.cpp:566] [Rank 0] Watchdog caught collective operation timeout: "
        "WorkNCCL(OpType=ALLREDUCE, Timeout(ms)=1800000) ran for 1806871 milliseconds before "
        "timing out.\n"
        "[E ProcessGroupNCCL.cpp:566] [Rank 3] Watchdog caught collective operation timeout: "
        "WorkNCCL(OpType=ALLREDUCE, Timeout(ms)=1800000) ran for 1806762 milliseconds before "
        "timing out.\n",
    };
    rep = run(DDX_DIAG_ALL, 1, all);
    assert_int_equal(vote_rank(rep, "busy", NULL), -1);
    ddx_report_free(rep);
}

static void test_watchdogs_run_together(void **state)
{
    (void)state;
    /* three ranks' watchdog lines run together on one console line; rank 0 printed nothing:
     * each is its rank's own timeout, and rank 0 is the one the others wait for */
    const char *const in[] = {
        "console.log",
        "[rank2]:[E1112 01:08:10.035905893 ProcessGroupNCCL.cpp:607] [Rank 2] Watchdog caught "
        "collective operation timeout: WorkNCCL(SeqNum=2, OpType=ALLREDUCE, NumelIn=1, "
        "NumelOut=1, Timeout(ms)=600000) ran for 600061 milliseconds before timing out. "
        "[rank3]:[E1112 01:08:10.036188421 ProcessGroupNCCL.cpp:607] [Rank 3] Watchdog caught "
        "collective operation timeout: WorkNCCL(SeqNum=2, OpType=ALLREDUCE, NumelIn=1, "
        "NumelOut=1, Timeout(ms)=600000) ran for 600062 milliseconds before timing out. "
        "[rank1]:[E1112 01:08:10.036309765 ProcessGroupNCCL.cpp:607] [Rank 1] Watchdog caught "
        "collective operation timeout: WorkNCCL(SeqNum=2, OpType=ALLREDUCE, NumelIn=1, "
        "NumelOut=1, Timeout(ms)=600000) ran for 600063 milliseconds before timing out.\n",
    };
    ddx_report *rep = run(DDX_DIAG_ALL, 1, in);
    for (int r = 1; r <= 3; r++) {
        assert_non_null(rep->job.by_rank[r]);
        assert_true(wd(rep, r)->timed_out);
        assert_int_equal(wd(rep, r)->seq, 2);
        assert_int_equal(wd(rep, r)->numel, 1);
        assert_string_equal(wd(rep, r)->op, "ALLREDUCE");
    }
    assert_null(dx_facts_get(&rep->facts, "job.desync"));
    expect_fact(rep, "job.stuck_rank", "0");
    assert_int_equal(ddx_report_culprit_rank(rep), 0);
    ddx_report_free(rep);
}

static void test_lone_timeout_after_loop(void **state)
{
    (void)state;
    /* rank 0 alone times out after Lightning's end of fit (its watchdog message wrapped after
     * the first words): a collective of rank-0-only code the finished ranks never joined */
    const char *const in[] = {
        "console.log",
        "`Trainer.fit` stopped: `max_epochs=3` reached.\n"
        "[Rank 0] Watchdog caught collective operation timeout:\n"
        "  WorkNCCL(SeqNum=9, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=1800000)\n",
    };
    ddx_report *rep = run(DDX_DIAG_ALL, 1, in);
    assert_true(wd(rep, 0)->timed_out);
    assert_int_equal(dx_after_loop_rank(&rep->job), 0);
    assert_int_equal(ddx_report_culprit_rank(rep), 0);
    ddx_report_free(rep);
    /* rank 2 alone times out after the bar closed: it waited for rank 0's own work */
    const char *const wait[] = {
        "console.log",
        "100%|##########| 21/21 [01:54<00:00, 5.4s/it]\n"
        "[rank2]:[E501 12:00:00.000000000 ProcessGroupNCCL.cpp:616] [Rank 2] Watchdog caught "
        "collective operation timeout: WorkNCCL(SeqNum=70, OpType=ALLREDUCE, NumelIn=1, "
        "NumelOut=1, Timeout(ms)=600000) ran for 600012 milliseconds before timing out.\n",
    };
    rep = run(DDX_DIAG_ALL, 1, wait);
    assert_int_equal(dx_after_loop_rank(&rep->job), 2);
    assert_int_equal(ddx_report_culprit_rank(rep), 0);
    ddx_report_free(rep);
    /* two ranks timing out after the loop: not one rank's extra collective */
    const char *const two[] = {
        "console.log",
        "100%|##########| 21/21 [01:54<00:00, 5.4s/it]\n"
        "[rank2]:[E501 12:00:00.000000000 ProcessGroupNCCL.cpp:616] [Rank 2] Watchdog caught "
        "collective operation timeout: WorkNCCL(SeqNum=70, OpType=ALLREDUCE, NumelIn=1, "
        "NumelOut=1, Timeout(ms)=600000) ran for 600012 milliseconds before timing out.\n"
        "[rank0]:[E501 12:00:00.000000000 ProcessGroupNCCL.cpp:616] [Rank 0] Watchdog caught "
        "collective operation timeout: WorkNCCL(SeqNum=70, OpType=ALLREDUCE, NumelIn=1, "
        "NumelOut=1, Timeout(ms)=600000) ran for 600012 milliseconds before timing out.\n",
    };
    rep = run(DDX_DIAG_ALL, 1, two);
    assert_int_equal(dx_after_loop_rank(&rep->job), -1);
    ddx_report_free(rep);
}

static void test_hosts_and_restarts(void **state)
{
    (void)state;
    /* NCCL names host, GPU and bus per rank (the world communicator's ranks; a 2-rank subgroup's
     * "rank 0" is not global rank 0); torchelastic's table names the host of its entry */
    const char *const in[] = {
        "console.log",
        "node1:1234:1234 [3] NCCL INFO ncclCommInitRank comm 0x55aa rank 3 nranks 8 cudaDev 3 "
        "nvmlDev 3 busId 1c000 commId 0x1234 - Init COMPLETE\n"
        "node2:99:99 [0] NCCL INFO comm 0x7f rank 0 nranks 2 cudaDev 0 busId 1b000 - Init "
        "COMPLETE\n"
        "[default] Worker group FAILED. 2/3 attempts left; will restart worker group\n"
        "  restart_count=2\n"
        "Root Cause (first observed failure):\n"
        "[0]:\n"
        "  time      : 2024-05-01_12:00:00\n"
        "  host      : node7\n"
        "  rank      : 5 (local_rank: 1)\n"
        "  exitcode  : 1 (pid: 77)\n",
    };
    ddx_report *rep = run(DDX_DIAG_ALL, 1, in);
    assert_string_equal(rep->job.by_rank[3]->host, "node1");
    assert_int_equal(rep->job.by_rank[3]->cuda_dev, 3);
    assert_string_equal(rep->job.by_rank[3]->bus_id, "1c000");
    assert_true(rep->job.nby <= 0 || !rep->job.by_rank[0] || !rep->job.by_rank[0]->host[0]);
    assert_string_equal(rep->job.by_rank[5]->host, "node7");
    assert_int_equal(rep->job.by_rank[5]->pid, 77);
    assert_int_equal(rep->job.by_rank[3]->pid, 1234);
    expect_fact(rep, "job.restarts", "2");
    expect_fact(rep, "job.hosts", "2");
    ddx_report_free(rep);
    /* nvidia-resiliency-ext's ft_launcher numbers its restart cycles (the message of
     * shared_utils/profiling.py, without the logger's prefix): cycle 3 follows the third
     * detected failure */
    const char *const ft[] = {
        "launcher.log",
        "  - Cycle: 0 "
        "Event: rendezvous_started Node: node1 Rank: 0 Time: 2025-06-01 10:00:00.000 UTC\n"
        "  - Cycle: 3 "
        "Event: failure_detected Node: node1 Rank: 0 Time: 2025-06-01 11:00:00.000 UTC\n",
    };
    rep = run(DDX_DIAG_ALL, 1, ft);
    expect_fact(rep, "job.restarts", "3");
    ddx_report_free(rep);
}

static void test_allocation_failures(void **state)
{
    (void)state;
    const char *text =
        "2024-05-01 12:00:01,000 RuntimeError: boom on rank 1\nTimed out waiting for peers\n";
    for (long n = 1; n < 400; n++) {
        ddx_job *job = NULL;
        ddx_report *rep = NULL;
        ddx_error e = {0};
        dx_alloc_fail_after(n);
        int rc = ddx_job_new(&job, kb, &e);
        if (!rc)
            rc = ddx_job_add_buffer(job, "log", text, strlen(text), &e);
        if (!rc)
            rc = ddx_job_diagnose(job, 0, &rep, &e);
        dx_alloc_fail_after(0);
        assert_true(rc == DDX_OK || rc == DDX_ENOMEM);
        ddx_report_free(rep);
        ddx_job_free(job);
    }
}

static void test_uneven_inputs_from_progress(void **state)
{
    (void)state;
    /* rank 1 printed the last step of a 4-step loop; rank 0, with 6 steps, timed out */
    const char *const in[] = {
        "console.log",
        "[default1]:[rank 1] step 3/4 loss 1.0\n"
        "[default1]:[rank 1] step 4/4 loss 0.6\n"
        "[default0]:[rank 0] step 4/6 loss 4.0\n"
        "[default0]:RuntimeError: [./gloo/transport/tcp/unbound_buffer.cc:81] Timed out waiting "
        "5000ms for recv operation to complete\n",
    };
    ddx_report *rep = run(DDX_DIAG_ALL, 1, in);
    assert_non_null(dx_facts_get(&rep->facts, "job.uneven_inputs"));
    assert_null(dx_facts_get(&rep->facts, "job.stuck_rank"));
    ddx_report_free(rep);
    /* the ranks' own printed data sizes say it too */
    const char *const sizes[] = {
        "console.log",
        "Rank = 0, Number of batches 4\nRank = 1 Number of batches 4\n"
        "Rank = 2, Number of batches 8\nRank = 3, Number of batches 4\n",
    };
    rep = run(DDX_DIAG_ALL, 1, sizes);
    const dx_fact *u = dx_facts_get(&rep->facts, "job.uneven_inputs");
    assert_non_null(u);
    assert_non_null(strstr(u->value, "rank 2 has 8 batches"));
    /* one rank of four differs: its extra collectives are the ones nobody joins */
    assert_int_equal(ddx_report_culprit_rank(rep), 2);
    ddx_report_free(rep);
    /* two ranks with different sizes: neither is the odd one out */
    const char *const two[] = {"console.log",
                               "Rank = 0, Number of batches 6\nRank = 1, Number of batches 4\n"};
    rep = run(DDX_DIAG_ALL, 1, two);
    assert_non_null(dx_facts_get(&rep->facts, "job.uneven_inputs"));
    assert_int_equal(vote_rank(rep, "uneven", NULL), -1);
    ddx_report_free(rep);
    const char *const even[] = {"console.log",
                                "rank 0: len(dataloader)=120\nrank 1: len(dataloader)=120\n"};
    rep = run(DDX_DIAG_ALL, 1, even);
    assert_null(dx_facts_get(&rep->facts, "job.uneven_inputs"));
    ddx_report_free(rep);
    rep = run(DDX_DIAG_ALL, 1, in);
    /* the rank that finished its loop is not stuck, and rank 0 only waited */
    assert_int_equal(ddx_report_culprit_rank(rep), -1);
    ddx_report_free(rep);
}

static void test_stuck_rank_mid_loop(void **state)
{
    (void)state;
    /* the same picture, but rank 1 stopped at step 2 of 6: it is the one the others wait for */
    const char *const in[] = {
        "console.log",
        "[default1]:[rank 1] step 2/6 loss 1.0\n"
        "[default0]:[rank 0] step 2/6 loss 4.0\n"
        "[default0]:RuntimeError: [./gloo/transport/tcp/unbound_buffer.cc:81] Timed out waiting "
        "5000ms for recv operation to complete\n",
    };
    ddx_report *rep = run(DDX_DIAG_ALL, 1, in);
    assert_null(dx_facts_get(&rep->facts, "job.uneven_inputs"));
    expect_fact(rep, "job.stuck_rank", "1");
    assert_int_equal(ddx_report_culprit_rank(rep), 1);
    ddx_report_free(rep);
}

static void test_stuck_rank_printed_nothing(void **state)
{
    (void)state;
    /* ranks 1, 2 and 3 time out at one collective; rank 0 printed nothing at all */
    const char *const in[] = {
        "console.log",
        "[E ProcessGroupNCCL.cpp:737] [Rank 3] Watchdog caught collective operation timeout: "
        "WorkNCCL(SeqNum=56693, OpType=BROADCAST, Timeout(ms)=1800000) ran for 1804371 "
        "milliseconds before timing out.\n"
        "[E ProcessGroupNCCL.cpp:737] [Rank 2] Watchdog caught collective operation timeout: "
        "WorkNCCL(SeqNum=56693, OpType=BROADCAST, Timeout(ms)=1800000) ran for 1804371 "
        "milliseconds before timing out.\n"
        "[E ProcessGroupNCCL.cpp:737] [Rank 1] Watchdog caught collective operation timeout: "
        "WorkNCCL(SeqNum=56693, OpType=BROADCAST, Timeout(ms)=1800000) ran for 1804376 "
        "milliseconds before timing out.\n",
    };
    ddx_report *rep = run(DDX_DIAG_ALL, 1, in);
    expect_fact(rep, "job.stuck_rank", "0");
    assert_int_equal(ddx_report_culprit_rank(rep), 0);
    ddx_report_free(rep);
}

static void test_collective_mismatch_in_tracebacks(void **state)
{
    (void)state;
    /* rank 0 is in all_reduce called from evaluate(); rank 1 waits at a barrier */
    const char *const in[] = {
        "console.log",
        "[default1]:  File \"/home/u/train.py\", line 30, in main\n"
        "[default1]:  File \"/usr/lib/python3/dist-packages/torch/distributed/distributed_c10d.py\""
        ", line 3152, in barrier\n"
        "[default1]:RuntimeError: [./gloo/transport/tcp/unbound_buffer.cc:81] Timed out waiting "
        "5000ms for recv operation to complete\n"
        "[default0]:  File \"/home/u/train.py\", line 15, in evaluate\n"
        "[default0]:  File \"/usr/lib/python3/dist-packages/torch/distributed/distributed_c10d.py\""
        ", line 1541, in all_reduce\n"
        "[default0]:RuntimeError: [./gloo/transport/tcp/unbound_buffer.cc:81] Timed out waiting "
        "5000ms for recv operation to complete\n",
    };
    ddx_report *rep = run(DDX_DIAG_ALL, 1, in);
    expect_fact(rep, "job.eval_collective_rank", "0");
    const dx_fact *m = dx_facts_get(&rep->facts, "job.collective_mismatch");
    assert_non_null(m);
    assert_non_null(strstr(m->value, "all_reduce (called from evaluate)"));
    assert_int_equal(ddx_report_culprit_rank(rep), 0);
    ddx_report_free(rep);
}

static void test_desync_from_fingerprints(void **state)
{
    (void)state;
    /* the reports pair the ranks differently, but only rank 1 runs BROADCAST */
    const char *const in[] = {
        "console.log",
        "[default1]:RuntimeError: Detected mismatch between collectives on ranks. Rank 1 is "
        "running collective: CollectiveFingerPrint(OpType=BROADCAST, TensorShape=[1]), but Rank 0 "
        "is running collective: CollectiveFingerPrint(OpType=ALLREDUCE, TensorShape=[161]).\n"
        "[default2]:RuntimeError: Detected mismatch between collectives on ranks. Rank 2 is "
        "running collective: CollectiveFingerPrint(SequenceNumber=4, OpType=ALLREDUCE, "
        "TensorShape=[161]), but Rank 0 is running collective: CollectiveFingerPrint("
        "SequenceNumber=4, OpType=ALLREDUCE, TensorShape=[161]).\n",
    };
    ddx_report *rep = run(DDX_DIAG_ALL, 1, in);
    const dx_fact *d = dx_facts_get(&rep->facts, "job.desync");
    assert_non_null(d);
    assert_non_null(strstr(d->value, "rank 1 running BROADCAST"));
    ddx_report_free(rep);
}

static void test_launcher_names_failed_rank(void **state)
{
    (void)state;
    /* the agent saw local rank 3 die with -9 and stopped the others; no traceback of its own */
    const char *const in[] = {
        "console.log",
        "W0613 07:54:19.850000 180275 site-packages/torch/distributed/elastic/multiprocessing/"
        "api.py:897] Sending process 180494 closing signal SIGTERM\n"
        "W0613 07:54:19.895000 180275 site-packages/torch/distributed/elastic/multiprocessing/"
        "api.py:897] Sending process 180495 closing signal SIGTERM\n"
        "E0613 07:54:22.195000 180275 site-packages/torch/distributed/elastic/multiprocessing/"
        "api.py:869] failed (exitcode: -9) local_rank: 3 (pid: 180497) of binary: /usr/bin/python3\n",
    };
    ddx_report *rep = run(DDX_DIAG_ALL, 1, in);
    expect_fact(rep, "job.launcher_failed_rank", "3");
    expect_fact(rep, "job.launcher_exitcode", "-9");
    ddx_report_free(rep);
    /* mp.spawn reports the process index */
    const char *const sp[] = {
        "console.log",
        "torch.multiprocessing.spawn.ProcessExitedException: process 1 terminated with signal "
        "SIGKILL\n",
    };
    rep = run(DDX_DIAG_ALL, 1, sp);
    expect_fact(rep, "job.launcher_failed_rank", "1");
    expect_fact(rep, "job.launcher_exitcode", "-9");
    ddx_report_free(rep);
    /* exit -6 while a rank reports a timeout (here only the 2.4+ "Timeout at NCCL work" line):
     * the watchdog took a waiting rank down; the launcher's first failure is a victim */
    const char *const ab[] = {
        "console.log",
        "[rank7]:[E1129 11:56:57.642513817 ProcessGroupNCCL.cpp:1834] [PG ID 0 PG GUID "
        "0(default_pg) Rank 7] Timeout at NCCL work: 28956, last enqueued NCCL work: 28956, last "
        "completed NCCL work: 28955.\n"
        "W1129 11:56:59.150000 29471 torch/distributed/elastic/multiprocessing/api.py:897] "
        "Sending process 29574 closing signal SIGTERM\n"
        "E1129 11:57:07.249000 29471 torch/distributed/elastic/multiprocessing/api.py:869] "
        "failed (exitcode: -6) local_rank: 3 (pid: 29577) of binary: /usr/bin/python\n",
    };
    rep = run(DDX_DIAG_ALL, 1, ab);
    assert_true(wd(rep, 7)->timed_out);
    assert_int_equal(wd(rep, 7)->seq, 28956);
    assert_null(dx_facts_get(&rep->facts, "job.launcher_failed_rank"));
    ddx_report_free(rep);
    /* torchelastic's failures dict as printed (dlrover's agent prints it too) */
    const char *const pf[] = {
        "agent.log",
        "The worker fails with {0: ProcessFailure(local_rank=0, pid=54, exitcode=-7, "
        "error_file='<N/A>', error_file_data={'message': '<NONE>'}, message='Signal 7 (SIGBUS) "
        "received by PID 54', timestamp=1711419181)}\n",
    };
    rep = run(DDX_DIAG_ALL, 1, pf);
    expect_fact(rep, "job.launcher_failed_rank", "0");
    expect_fact(rep, "job.launcher_exitcode", "-7");
    ddx_report_free(rep);
}

static void test_table_lists_all_but_one(void **state)
{
    (void)state;
    /* torchelastic's table lists ranks 1, 2 and 3 as failed (no error files); rank 0 is
     * neither listed nor printed anything: it is the one that did not fail, i.e. was stuck */
    const char *const in[] = {
        "console.log",
        "Failures:\n[1]:\n  time      : 2024-05-01_12:00:00\n  host      : n1\n"
        "  rank      : 2 (local_rank: 2)\n  exitcode  : 1 (pid: 12)\n"
        "[2]:\n  time      : 2024-05-01_12:00:00\n  host      : n1\n"
        "  rank      : 3 (local_rank: 3)\n  exitcode  : 1 (pid: 13)\n"
        "Root Cause (first observed failure):\n[0]:\n  time      : 2024-05-01_12:00:00\n"
        "  host      : n1\n  rank      : 1 (local_rank: 1)\n  exitcode  : 1 (pid: 11)\n",
    };
    ddx_report *rep = run(DDX_DIAG_ALL, 1, in);
    expect_fact(rep, "job.stuck_rank", "0");
    ddx_report_free(rep);
    /* a table pasted without its line breaks still names the killed rank */
    const char *const flat[] = {
        "console.log",
        "Root Cause (first observed failure) :\n[0]:\n"
        "rank2 (local rank: 2)exitcode: -9 (pid: 36071)error file: <N/A>\n",
    };
    rep = run(DDX_DIAG_ALL, 1, flat);
    const char *why = NULL;
    assert_int_equal(vote_rank(rep, "table", &why), 2);
    assert_non_null(strstr(why, "exit code -9"));
    ddx_report_free(rep);
}

static void test_same_root_on_every_rank_names_none(void **state)
{
    (void)state;
    /* both ranks raise the same error with no times to order them, and torchelastic's table
     * (whole-second times) picks rank 0: no rank is to blame more than another */
    const char *const in[] = {
        "console.log",
        "[rank0]: RuntimeError: boom on rank 0\n"
        "[rank1]: RuntimeError: boom on rank 1\n"
        "Root Cause (first observed failure):\n[0]:\n  time      : 2024-05-01_12:00:00\n"
        "  host      : n1\n  rank      : 0 (local_rank: 0)\n  exitcode  : 1 (pid: 11)\n",
    };
    ddx_report *rep = run(DDX_DIAG_ALL, 1, in);
    assert_string_equal(ddx_report_id(rep, 0), "t-root");
    assert_int_equal(ddx_report_culprit_rank(rep), -1);
    ddx_report_free(rep);
    /* with times, the rank that failed first is the culprit */
    const char *const timed[] = {
        "console.log",
        "[rank0]: 2024-05-01 12:00:05,000 RuntimeError: boom on rank 0\n"
        "[rank1]: 2024-05-01 12:00:01,000 RuntimeError: boom on rank 1\n",
    };
    rep = run(DDX_DIAG_ALL, 1, timed);
    assert_int_equal(ddx_report_culprit_rank(rep), 1);
    ddx_report_free(rep);
}

static void test_same_root_on_some_ranks_names_them(void **state)
{
    (void)state;
    /* two of four ranks raise the same error with nothing to order them (two faulty nodes among
     * healthy ones): both are the culprits, the first read first */
    const char *const in[] = {
        "console.log",
        "[rank0]: step 7 loss 0.5\n"
        "[rank1]: RuntimeError: boom on rank 1\n"
        "[rank2]: step 7 loss 0.5\n"
        "[rank3]: RuntimeError: boom on rank 3\n",
    };
    ddx_report *rep = run(DDX_DIAG_ALL, 1, in);
    assert_string_equal(ddx_report_id(rep, 0), "t-root");
    assert_int_equal(ddx_report_culprit_rank(rep), 1);
    const int *ranks;
    assert_int_equal(ddx_report_culprit_ranks(rep, &ranks), 2);
    assert_int_equal(ranks[0], 1);
    assert_int_equal(ranks[1], 3);
    assert_non_null(strstr(rep->culprit_why, "this rank and others"));
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    ddx_error e = {0};
    assert_int_equal(ddx_report_write_json(rep, f, &e), DDX_OK);
    fclose(f);
    assert_non_null(strstr(buf, "\"culprit_ranks\": [\n    1,\n    3\n  ]"));
    free(buf);
    ddx_report_free(rep);
    /* three of four: more likely the whole job's failure, no culprit */
    const char *const most[] = {
        "console.log",
        "[rank0]: RuntimeError: boom on rank 0\n"
        "[rank1]: RuntimeError: boom on rank 1\n"
        "[rank2]: step 7 loss 0.5\n"
        "[rank3]: RuntimeError: boom on rank 3\n",
    };
    rep = run(DDX_DIAG_ALL, 1, most);
    assert_int_equal(ddx_report_culprit_rank(rep), -1);
    assert_int_equal(ddx_report_culprit_ranks(rep, &ranks), 0);
    ddx_report_free(rep);
}

static void test_idle_rank_and_dump_signal(void **state)
{
    (void)state;
    /* PyTorch 2.4 lines: rank 1's watchdog fires first and signals the dump; ranks 1-3 have
     * work 80 enqueued and 79 completed; rank 0 has nothing in flight (79/79): it never entered
     * collective 80 */
    const char *const in[] = {
        "console.log",
        "[rank1]:[E810 03:04:11.063479079 ProcessGroupNCCL.cpp:2573] [PG ID 0 PG GUID 0(default_pg) "
        "Rank 1] First PG on this rank to signal dumping.\n"
        "[rank1]:[E810 03:04:11.1 ProcessGroupNCCL.cpp:1785] [PG ID 0 PG GUID 0(default_pg) Rank 1] "
        "Exception (either an error or timeout) detected by watchdog at work: 80, last enqueued NCCL "
        "work: 80, last completed NCCL work: 79.\n"
        "[rank2]:[E810 03:04:11.2 ProcessGroupNCCL.cpp:1785] [PG ID 0 PG GUID 0(default_pg) Rank 2] "
        "Exception (either an error or timeout) detected by watchdog at work: 80, last enqueued NCCL "
        "work: 80, last completed NCCL work: 79.\n"
        "[rank3]:[E810 03:04:11.3 ProcessGroupNCCL.cpp:1785] [PG ID 0 PG GUID 0(default_pg) Rank 3] "
        "Exception (either an error or timeout) detected by watchdog at work: 80, last enqueued NCCL "
        "work: 80, last completed NCCL work: 79.\n"
        "[rank0]:[E810 03:04:12.0 ProcessGroupNCCL.cpp:1746] [PG ID 0 PG GUID 0(default_pg) Rank 0] "
        "Received a dump signal due to a collective timeout from rank 1 and we will try our best to "
        "dump the debug info. Last enqueued NCCL work: 79, last completed NCCL work: 79.\n",
    };
    ddx_report *rep = run(DDX_DIAG_ALL, 1, in);
    assert_int_equal(vote_rank(rep, "dump", NULL), 1);
    assert_int_equal(wd(rep, 0)->last_enqueued, 79);
    int named = 0, dump = 0;
    for (size_t i = 0; i < rep->nculprit_signals; i++) {
        named |= strstr(rep->culprit_signals[i], "rank 0 had no collective in flight") != NULL;
        dump |= strstr(rep->culprit_signals[i], "rank 1's watchdog fired first") != NULL;
    }
    assert_true(named);
    assert_true(dump);
    ddx_report_free(rep);
}

static void test_straggler_formats(void **state)
{
    (void)state;
    /* Megatron's straggler detector names the slowest rank itself */
    const char *const meg[] = {
        "console.log",
        "INFO:megatron.core.utils:[2024-03-14 23:07:56] | MnRtt/Rnk: 3453.08ms/8 | MxRtt/Rnk: "
        "5468.20ms/5 | MnPwr/Rnk: 601796W/8 | MxPwr/Rnk: 683801W/18 | MnEtpt/Rnk: 196.02TF/5 | "
        "MxEtpt/Rnk: 297.32TF/8\n"
        "INFO:megatron.core.utils:[2024-03-14 23:08:56] | MnRtt/Rnk: 3453.08ms/8 | MxRtt/Rnk: "
        "5468.20ms/5 | MnPwr/Rnk: 601796W/8 | MxPwr/Rnk: 683801W/18 | MnEtpt/Rnk: 199.02TF/5 | "
        "MxEtpt/Rnk: 297.32TF/8\n",
    };
    ddx_report *rep = run(DDX_DIAG_ALL, 1, meg);
    assert_int_equal(straggler(rep), 5);
    expect_fact(rep, "job.straggler_speed_pct", "67");
    ddx_report_free(rep);
    /* a report within 75 % of the best names nobody */
    const char *const even[] = {
        "console.log",
        "| MnRtt/Rnk: 3453.08ms/8 | MxRtt/Rnk: 3468.20ms/0 | MnEtpt/Rnk: 296.02TF/0 | MxEtpt/Rnk: "
        "297.32TF/8\n",
    };
    rep = run(DDX_DIAG_ALL, 1, even);
    assert_int_equal(straggler(rep), -1);
    ddx_report_free(rep);
    /* generic "Step N ... took X sec" lines and Lightning's bar ("8.12it/s, loss=...") */
    char buf[2048] = "";
    for (int i = 1; i <= 6; i++) {
        char line[200];
        snprintf(line, sizeof line,
                 "[rank0]: Step %d: loss=0.5, took 0.20 sec\n"
                 "[rank1]: Step %d: loss=0.5, took 0.45 sec\n",
                 i, i);
        strcat(buf, line);
    }
    const char *const gen[] = {"console.log", buf};
    rep = run(DDX_DIAG_ALL, 1, gen);
    assert_int_equal(straggler(rep), 1);
    ddx_report_free(rep);
    char bar[2048] = "";
    for (int i = 1; i <= 6; i++) {
        char line[200];
        snprintf(line, sizeof line,
                 "[rank0]: Epoch 0:  %d%%| | %d/100 [00:05<00:06,  8.00it/s, "
                 "loss=0.5, v_num=0]\n[rank1]: Epoch 0:  %d%%| | %d/100 [00:05<00:06,  2.00it/s, "
                 "loss=0.5, v_num=0]\n",
                 i, i, i, i);
        strcat(bar, line);
    }
    const char *const lit[] = {"console.log", bar};
    rep = run(DDX_DIAG_ALL, 1, lit);
    assert_int_equal(straggler(rep), 1);
    ddx_report_free(rep);
}

static void test_desync_from_nccl_coll_lines(void **state)
{
    (void)state;
    /* NCCL_DEBUG_SUBSYS=COLL lines of one node (no rank prefix: the CUDA device tells): at
     * opCount 0 rank 0 broadcasts 25503912 fp16 values, ranks 1-3 broadcast 53 floats */
    const char *const in[] = {
        "console.log",
        "n1:32615:32615 [0] NCCL INFO Broadcast: opCount 0 sendbuff 0x7f88e4000000 recvbuff "
        "0x7f88e4000000 count 25503912 datatype 6 op 0 root 0 comm 0x7f88e005a260 [nranks=4] "
        "stream 0x55\n"
        "n1:32617:32617 [1] NCCL INFO Broadcast: opCount 0 sendbuff 0x7f3b recvbuff 0x7f3b count 53 "
        "datatype 4 op 0 root 0 comm 0x7f3b [nranks=4] stream 0x55\n"
        "n1:32619:32619 [2] NCCL INFO Broadcast: opCount 0 sendbuff 0x7fc1 recvbuff 0x7fc1 count 53 "
        "datatype 4 op 0 root 0 comm 0x7fc1 [nranks=4] stream 0x55\n"
        "n1:32621:32621 [3] NCCL INFO Broadcast: opCount 0 sendbuff 0x7efb recvbuff 0x7efb count 53 "
        "datatype 4 op 0 root 0 comm 0x7efb [nranks=4] stream 0x56\n",
    };
    ddx_report *rep = run(DDX_DIAG_ALL, 1, in);
    assert_int_equal(vote_rank(rep, "desync", NULL), 0);
    assert_non_null(
        strstr(dx_facts_get(&rep->facts, "job.desync")->value, "count 25503912 datatype 6"));
    ddx_report_free(rep);
}

static void test_busy_rank_and_enqueued_behind(void **state)
{
    (void)state;
    /* rank 0 logs "Saving ... checkpoint" (no rank prefix) when rank 7's collective starts:
     * the watchdog line is 20 minutes later and says the collective ran for 20 minutes */
    const char *const save[] = {
        "console.log",
        "2026-02-18T10:28:25.497Z 2026-02-18 10:28:25,496 - root - INFO - Saving latest "
        "checkpoint model trained for 3 complete epochs\n"
        "2026-02-18T10:48:25.681Z [rank7]:[E218 10:48:25.033625188 ProcessGroupNCCL.cpp:632] "
        "[Rank 7] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=1512677, "
        "OpType=ALLREDUCE, NumelIn=306176, NumelOut=306176, Timeout(ms)=1200000) ran for 1200027 "
        "milliseconds before timing out.\n",
    };
    ddx_report *rep = run(DDX_DIAG_ALL, 1, save);
    expect_fact(rep, "job.busy_rank", "0");
    assert_int_equal(ddx_report_culprit_rank(rep), 0);
    ddx_report_free(rep);
    /* a progress bar the collective error cuts off */
    const char *const bar[] = {
        "console.log",
        "  Class  Images  96%|######  | 85/89 [01:07<00:05,  1.42s/it][E ProcessGroupNCCL.cpp:327] "
        "Some NCCL operations have failed or timed out.\n"
        "  what():  [Rank 1] Watchdog caught collective operation timeout: WorkNCCL(OpType="
        "BROADCAST, Timeout(ms)=60000) ran for 69479 milliseconds before timing out.\n",
    };
    rep = run(DDX_DIAG_ALL, 1, bar);
    expect_fact(rep, "job.busy_rank", "0");
    ddx_report_free(rep);
    /* same SeqNum, different sizes on ranks 2 and 3; rank 2 enqueued only up to 7219 while
     * rank 3 reached 7220 and rank 0 7221: rank 2 is behind */
    const char *const behind[] = {
        "console.log",
        "[rank3]:[E918 19:29:24.1 ProcessGroupNCCL.cpp:689] [Rank 3] Watchdog caught collective "
        "operation timeout: WorkNCCL(SeqNum=7219, OpType=BROADCAST, NumelIn=64, NumelOut=64, "
        "Timeout(ms)=3000000) ran for 3000063 milliseconds before timing out.\n"
        "[rank3]:[E918 19:29:24.2 ProcessGroupNCCL.cpp:2303] [PG ID 0 PG GUID 0(default_pg) Rank 3]"
        "  failure detected by watchdog at work sequence id: 7219 PG status: last enqueued work: "
        "7220, last completed work: 7218\n"
        "[rank2]:[E918 19:29:25.9 ProcessGroupNCCL.cpp:689] [Rank 2] Watchdog caught collective "
        "operation timeout: WorkNCCL(SeqNum=7219, OpType=BROADCAST, NumelIn=24084544, NumelOut="
        "24084544, Timeout(ms)=3000000) ran for 3000058 milliseconds before timing out.\n"
        "[rank2]:[E918 19:29:25.9 ProcessGroupNCCL.cpp:2303] [PG ID 0 PG GUID 0(default_pg) Rank 2]"
        "  failure detected by watchdog at work sequence id: 7219 PG status: last enqueued work: "
        "7219, last completed work: 7218\n"
        "[rank0]:[E918 19:29:44.8 ProcessGroupNCCL.cpp:689] [Rank 0] Watchdog caught collective "
        "operation timeout: WorkNCCL(SeqNum=7221, OpType=ALLREDUCE, NumelIn=593920, NumelOut="
        "593920, Timeout(ms)=3000000) ran for 3000012 milliseconds before timing out.\n"
        "[rank1]: step 7200\n",
    };
    rep = run(DDX_DIAG_ALL, 1, behind);
    assert_int_equal(ddx_report_culprit_rank(rep), 2);
    ddx_report_free(rep);
}

/* dx_clean_text on text mixing printable runs, controls, tabs, C1 codes, valid and broken UTF-8,
 * at every limit: printable ASCII is kept as is and the text stops with "..." once a further
 * unit could pass max - 3 bytes, exactly as if each character were added in turn (the reference
 * below adds them so). */
static void test_clean_text_runs(void **state)
{
    (void)state;
    static const char *const parts[] = {"abc",      " ",        "\t",           "\x01",
                                        "\xc2\x85", "\xc3\xa9", "\xe2\x80\xae", "\xff",
                                        "\xe2\x82", "xyz 123",  "\x7f"};
    unsigned x = 1;
    for (int round = 0; round < 400; round++) {
        char in[128];
        size_t n = 0;
        while (n < 96) {
            x = x * 1103515245u + 12345u;
            const char *q = parts[(x >> 16) % DX_ARRAY_LEN(parts)];
            memcpy(in + n, q, strlen(q));
            n += strlen(q);
        }
        for (size_t max = 4; max < 140; max += 7) {
            /* the reference: unit by unit */
            char want[512];
            size_t w = 0, m = n;
            const unsigned char *p = (const unsigned char *)in;
            while (m && (p[m - 1] == ' ' || p[m - 1] == '\t'))
                m--;
            for (size_t i = 0; i < m;) {
                if (w + 4 > max) {
                    memcpy(want + w, "...", 3);
                    w += 3;
                    break;
                }
                unsigned char c = p[i];
                size_t l = c < 0x80 ? 1 : (c & 0xE0) == 0xC0 ? 2 : (c & 0xF0) == 0xE0 ? 3 : 0;
                for (size_t k = 1; l && k < l; k++)
                    if (i + k >= m || (p[i + k] & 0xC0) != 0x80)
                        l = 0;
                if (l == 2 && c < 0xC2)
                    l = 0;
                if (!l) {
                    memcpy(want + w, "\xEF\xBF\xBD", 3);
                    w += 3;
                    i++;
                } else if ((l == 1 && (c < 0x20 || c == 0x7F)) ||
                           (l == 2 && c == 0xC2 && p[i + 1] < 0xA0) ||
                           (l == 3 && c == 0xE2 && p[i + 1] == 0x80 && p[i + 2] >= 0xAA &&
                            p[i + 2] <= 0xAE)) {
                    want[w++] = c == '\t' ? ' ' : '?';
                    i += l;
                } else {
                    memcpy(want + w, p + i, l);
                    w += l;
                    i += l;
                }
            }
            want[w] = '\0';
            char *got = dx_clean_text(in, n, max);
            assert_non_null(got);
            assert_string_equal(got, want);
            free(got);
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_clean_text_runs),
        cmocka_unit_test(test_root_outranks_symptoms),
        cmocka_unit_test(test_healthy_log_is_quiet),
        cmocka_unit_test(test_context_and_checks),
        cmocka_unit_test(test_variant_and_json),
        cmocka_unit_test(test_invalid_bytes_in_evidence),
        cmocka_unit_test(test_missing_path),
        cmocka_unit_test(test_culprit_behind_in_sequence),
        cmocka_unit_test(test_culprit_silent_rank),
        cmocka_unit_test(test_victim_timeout_never_outranks_root),
        cmocka_unit_test(test_desync_from_watchdog),
        cmocka_unit_test(test_desync_old_format_odd_first),
        cmocka_unit_test(test_desync_from_blocking_wait),
        cmocka_unit_test(test_desync_by_size),
        cmocka_unit_test(test_torchelastic_table),
        cmocka_unit_test(test_fact_extractors),
        cmocka_unit_test(test_straggler_from_step_times),
        cmocka_unit_test(test_torchelastic_killed_rank_over_named_victim),
        cmocka_unit_test(test_rank_output_stops_early),
        cmocka_unit_test(test_stack_dumps),
        cmocka_unit_test(test_one_stack_dump),
        cmocka_unit_test(test_timeout_after_loop),
        cmocka_unit_test(test_rank0_bar_before_timeouts),
        cmocka_unit_test(test_watchdogs_run_together),
        cmocka_unit_test(test_lone_timeout_after_loop),
        cmocka_unit_test(test_allocation_failures),
        cmocka_unit_test(test_uneven_inputs_from_progress),
        cmocka_unit_test(test_stuck_rank_mid_loop),
        cmocka_unit_test(test_stuck_rank_printed_nothing),
        cmocka_unit_test(test_collective_mismatch_in_tracebacks),
        cmocka_unit_test(test_desync_from_fingerprints),
        cmocka_unit_test(test_launcher_names_failed_rank),
        cmocka_unit_test(test_hosts_and_restarts),
        cmocka_unit_test(test_table_lists_all_but_one),
        cmocka_unit_test(test_same_root_on_every_rank_names_none),
        cmocka_unit_test(test_same_root_on_some_ranks_names_them),
        cmocka_unit_test(test_idle_rank_and_dump_signal),
        cmocka_unit_test(test_straggler_formats),
        cmocka_unit_test(test_desync_from_nccl_coll_lines),
        cmocka_unit_test(test_busy_rank_and_enqueued_behind),
    };
    return cmocka_run_group_tests(tests, setup, kb_fixture_close);
}
