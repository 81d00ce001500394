/* slurm.h -- what Slurm says about a job: scontrol's records, host lists, output file patterns,
 * and the task-to-node layout; the facts a diagnosis of a Slurm job carries.
 *
 * Pure functions over text (scontrol's and sacct's output, the batch script): the CLI runs the
 * commands (cli/slurm.c) and this module reads what they printed, so every parser here is
 * tested on recorded output without a cluster.
 */
#ifndef DX_SLURM_H
#define DX_SLURM_H

#include "dx.h"

/* Expands a Slurm host list ("node[01-03,07],gpu5", "rack[1-2]-n[1-2]") into out as host names
 * separated by commas, at most max of them. Returns how many, or -1 when expr is malformed. */
DX_HIDDEN long dx_hostlist_expand(const char *expr, dx_buf *out, size_t max);

/* One job record of `scontrol -o -d show job` (a heterogeneous job has one per component; an
 * array one per task). Values are borrowed from the parsed text; missing ones are "". */
typedef struct dx_slurm_rec {
    dx_str job_id, array_job_id, array_task_id, het_job_id, het_offset;
    dx_str name, user, partition, state, reason, exit_code, derived_ec;
    dx_str start, end, node_list, num_nodes, num_tasks, cpus_per_task, tasks_per_node;
    dx_str work_dir, std_out, std_err, cluster;
    long uid; /* from UserId=name(uid), -1 unknown */
    /* "-d": each node's CPU ids ("Nodes=vm CPU_IDs=0-2"), in order */
    dx_str det_nodes[64], det_cpus[64];
    size_t ndet;
} dx_slurm_rec;

/* Parses scontrol's one-line-per-record output (-o) into recs (up to cap). Returns how many
 * records there are (more than cap: only cap are filled). */
DX_HIDDEN size_t dx_slurm_parse(const char *text, size_t len, dx_slurm_rec *recs, size_t cap);

/* Parses `sacct -P -n -X -j ID --format=JobID,JobName,User,Partition,State,ExitCode,Start,End,
 * NodeList,NNodes,NTasks,WorkDir,Cluster` lines (sacct has no StdOut before Slurm 23.02: the
 * caller looks in WorkDir). Returns how many records. */
DX_HIDDEN size_t dx_slurm_parse_sacct(const char *text, size_t len, dx_slurm_rec *recs, size_t cap);

/* Whether the record's state says the job did not succeed: FAILED, TIMEOUT, OUT_OF_MEMORY,
 * NODE_FAIL, BOOT_FAIL, DEADLINE, CANCELLED (by a signal or the user), or a non-zero exit
 * code while it completes. */
DX_HIDDEN int dx_slurm_failed(const dx_slurm_rec *r);
/* 1 when r reads COMPLETING with no node list yet (its epilog runs, its nodes are released). */
DX_HIDDEN int dx_slurm_nodes_pending(const dx_slurm_rec *r);

/* Expands an output file pattern of sbatch or srun (%j %J %A %a %u %x %N %n %t %s %% and the
 * zero-padded %5t forms) for the job: job-level fields are filled; per-task and per-node fields
 * (%t %n %N %s) become '*' so the result is a glob. Returns 0, or -1 when the pattern has an
 * unknown conversion. */
typedef struct dx_slurm_fill {
    const char *job_id, *array_job_id, *array_task_id, *user, *name, *first_node;
} dx_slurm_fill;
DX_HIDDEN int dx_slurm_pattern(const char *pattern, const dx_slurm_fill *f, dx_buf *out);

/* The output patterns of `srun ... --output=P` / `-o P` / `--error=P` / `-e P` lines in a batch
 * script, appended to out one per line. Returns how many. */
DX_HIDDEN size_t dx_slurm_script_outputs(const char *script, size_t len, dx_buf *out);

/* The host of each task under Slurm's default block layout: tasks fill the first node's CPUs
 * (CPUs/Task each), then the next; --ntasks-per-node, when set, fixes the count per node.
 * hosts: the expanded node list; cpus: CPUs per node (NULL: spread evenly). Writes ntasks
 * indices into hosts to task_host. */
DX_HIDDEN void dx_slurm_task_layout(size_t nhosts, const long *cpus, long cpus_per_task,
                                    long tasks_per_node, size_t ntasks, int *task_host);

/* Adds what Slurm says to a report as facts (slurm.job_id, slurm.nodes, slurm.task_nodes, ...)
 * and, when the culprit rank is known, job.culprit_host: the rank's own host when its lines
 * gave one, else the node of its task (or, under a per-node launcher with nproc_per_node ranks
 * a node, of its node rank). hosts: the expanded node list, comma-separated; task_host: the
 * node index of each task. Returns the culprit's host (borrowed from the report) or NULL. */
struct ddx_report;
DX_HIDDEN const char *dx_slurm_annotate(struct ddx_report *rep, const dx_slurm_rec *r,
                                        const char *hosts, const int *task_host, size_t ntasks);

#endif
