/* job.h -- the job model: what each rank did, and the launcher's own account of the failure.
 *
 * Built while the inputs are read: every attributed line updates its rank (lines, last time
 * seen); a small table of job extractors (matched in the same Vectorscan pass as the
 * references' signals) records NCCL watchdog timeouts per rank (sequence number, operation,
 * last completed work) and torchelastic's "Root Cause (first observed failure)" entry. diag.c
 * combines these with the findings to name a culprit rank and say which signals agree.
 */
#ifndef DX_JOB_H
#define DX_JOB_H

#include "attrib.h"
#include "kb.h"

struct dx_scan;

typedef struct dx_rank {
    int rank;
    uint64_t lines;
    int has_time;
    dx_time last_time;
    int timed_out;            /* printed a watchdog timeout */
    long long timeout_seq;    /* its SeqNum, -1 unknown */
    long long timeout_numel;  /* its NumelIn, -1 unknown */
    char timeout_op[24];      /* its OpType */
    long long last_completed; /* "last completed NCCL work", -1 unknown */
    long long last_enqueued;  /* "last enqueued NCCL work" on the same line, -1 unknown */
    /* "First PG on this rank to signal dumping" / "... from this local rank": its own watchdog
       fired */
    int dump_first;
    int dump_observed; /* "Observed flight recorder dump signal from another rank" */
    int has_last_completed;
    char *first_error;     /* the first root line of any reference on this rank */
    char *first_exception; /* the first Python exception line printed by this rank */
    uint64_t first_exception_seq;
    /* the first exception line that is its own failure: not an echo of another rank's
       (dx_unrec_is_echo) nor a launcher's wrapper */
    char *first_original;
    uint64_t first_original_seq;
    /* per-step durations in seconds, the most recent DX_STEP_KEEP of each kind */
    float step[2][64];     /* [0] whole step, [1] time waiting for data */
    uint32_t nstep[2];     /* samples seen (the ring holds the last 64) */
    double step_median[2]; /* computed by dx_job_finish; 0 when too few samples */
    double step_mad[2];
    double rel_speed; /* fastest rank's median step / this rank's (1 = fastest) */
    /* innermost frame of the main thread in a py-spy or faulthandler dump: "all_reduce
       (torch/distributed/distributed_c10d.py:2050)" */
    char *waits_in;
    int waits_coll; /* that frame (or its first caller outside the standard library's waits) is
                       a collective of torch.distributed or a wait on one */
    /* frames still to read of the main thread's stack: the innermost, then callers until one
       outside the standard library's waits */
    int stack_pending;
    long long prog_n, prog_m; /* the last "step N/M" progress it printed */
    int has_prog;
    long long nbatches; /* "Rank 2, Number of batches 8": its batches per epoch, -1 unknown */
    char tb_caller[64]; /* the innermost frame outside torch of the traceback being read */
    /* the collective its first traceback through distributed_c10d waits in ("all_reduce"), and
       the frame that called it */
    char *coll;
    char *coll_caller;
    char fp_op[24]; /* its operation in "Detected mismatch between collectives" lines */
    char host[64];  /* from NCCL's Init COMPLETE line or torchelastic's table */
    int cuda_dev;   /* -1 unknown */
    /* its process id (NCCL's host:pid:tid prefix, torchelastic's table), -1 unknown */
    long long pid;
    int in_table; /* listed as failed in torchelastic's ChildFailedError table */
    char bus_id[20];
    /* NCCL COLL INFO lines: the first opCounts this rank issued */
    struct {
        long long oc, count;
        int dt;
        char op[16];
    } coll_sig[8];
    int ncoll_sig;
    int meg_votes; /* Megatron straggler-detector reports naming it the slowest */
    /* its speed relative to the best in those reports (median-free: the largest ratio seen, the
       most favourable to it) */
    double meg_ratio;
    int slow;    /* flagged as a straggler */
    int stopped; /* its output stopped long before the other ranks' */
} dx_rank;

typedef struct dx_job_model {
    dx_rank **by_rank; /* dense: by_rank[r] for r < nby */
    size_t nby;
    size_t nranks;
    int rc_lines_left; /* lines still inside a "Root Cause" block */
    int rc_rank;       /* torchelastic's root-cause rank, -1 none */
    int rc_exitcode;
    int rc_has_exitcode;
    char *rc_where;  /* "path:line" of its rank line */
    int table_rank;  /* the rank of the table entry being read, -1 none */
    int killed_rank; /* a table entry killed by SIGKILL (exit code -9), -1 none */
    /* the local rank torchelastic's agent saw fail ("failed (exitcode: -9) local_rank: 3"),
       when it is the only one, else -1 */
    int agent_rank;
    int agent_code;
    int nagent; /* distinct local ranks the agent reported failed */
    /* a launcher reported the failures itself (mp.spawn's exception, torchelastic's failures
       dict): it stopped the other workers */
    int launcher_report;
    int closing;             /* the agent's "Sending process N closing signal" lines */
    int unranked_exc;        /* exception lines not attributed to any rank */
    char *unranked_original; /* the first of them that is an original failure, and where */
    uint64_t unranked_original_seq;
    /* the latest traceback frame line read ("File \"x.py\", line 3, in f"), its rank and
       where, and where the latest exception line was: a frame after the last exception line is
       a traceback cut before its exception */
    char last_frame[240];
    int last_frame_rank;
    uint64_t last_frame_seq;
    uint64_t last_exc_seq;
    int worker_exc;      /* exception lines other than the launchers' own */
    int ds_killing;      /* the DeepSpeed launcher's "Killing subprocess N" lines */
    char table_host[64]; /* the "host :" line of the table entry being read */
    int nccl_nranks;     /* the largest communicator seen in Init COMPLETE lines */
    int restarts;        /* torchelastic "will restart worker group" lines */
    int max_restarts;
    int line_has_time; /* the time of the line being read (set by the reader) */
    dx_time line_time;
    int year; /* the job's year, for times that carry none (set before finish) */
    struct {
        dx_time t;
        int rank;
    } work[16]; /* timed lines saying a rank starts long work */
    int nwork;
    struct {
        dx_time t;
        int rank;
        long long ran_ms;
    } wait[16]; /* timed watchdog timeouts */
    int nwait;
    char busy_why[300];
    /* the rank whose progress bar a collective error cut off (rank 0 when the bar carries no
       rank: trainers draw bars on rank 0) */
    int busy_rank;
    int dump_from; /* "Received a dump signal ... from rank K": K, -1 none */
    int srun_rank; /* the one srun task that exited with an error, -1 none */
    int srun_code;
    int nsrun;
    int desync_rank;      /* the rank alone in a different collective at one SeqNum, -1 */
    char desync_why[256]; /* "" when no desync was seen */
    int stopped_rank;     /* a rank whose output stops long before the others', -1 none */
    char stopped_why[200];
    /* a rank whose stack is outside any collective while the other dumped ranks wait in one, -1
       none */
    int stack_rank;
    char stack_why[300];
    int hdr_rank;  /* the rank a stack dump's heading names ("The stack for rank0:") */
    int hdr_left;  /* lines left in which that heading applies */
    int stack_cur; /* the rank of the stack dump being read, -1 none */
    int uneven;    /* a rank finished its loop while a peer with more steps waited */
    char uneven_why[256];
    int uneven_rank; /* the one rank whose data size differs from all (>= 2) others */
    /* the one rank that neither finished, failed nor timed out while the others timed out
       waiting, -1 none */
    int stuck_rank;
    char stuck_why[256];
    size_t stuck_timed; /* ranks that timed out, when the stuck rank was seen in the logs */
    /* stack dumps show ranks waiting in collectives and no rank failed: a hang ("" when not) */
    char hang_why[200];
    int coll_rank; /* the rank alone in a different collective in the tracebacks */
    int eval_coll; /* ... called from an evaluation function */
    char coll_why[300];
    int meg_reports; /* Megatron straggler-detector report lines */
    /* the widest spreads any of them showed: 1 - min/max throughput, max/min round trip - 1
       (-1 none) */
    double meg_etpt_spread, meg_rtt_spread;
    char coll_host[64];  /* the host of NCCL COLL lines, "" until one is seen */
    int coll_multi_host; /* COLL lines came from more than one host */
    int straggler;       /* the slowest flagged rank, -1 none */
    int straggler_kind;  /* 0 step time, 1 data wait */
    char straggler_why[256];
    int steps_from_fr;        /* the step samples are flight-recorder work intervals */
    char done_what[64];       /* what showed a loop's end ("a progress bar at 9/9"), "" none */
    char after_done_why[200]; /* a watchdog timeout printed after that, "" none */
    int after_done_rank;      /* its rank, when it is the only rank that timed out or failed */
    int nwatchdog;            /* watchdog timeout lines read so far */
    /* the last unprefixed progress bar ("5853/6019") read before the first watchdog timeout, ""
       none */
    char bar0_before[48];
    int bar0_closed; /* ... and that bar's loop ended (n = total, or the bar blanked) */
    /* Lightning's "GLOBAL_RANK: g, MEMBER: m/n" lines: how many processes announced each
       global rank (for the first 1024), and the world size they state */
    unsigned char members[1024];
    int member_world;
    /* the store-based barrier of process-group set-up: its world size and the most processes
       seen checked in */
    int barrier_world;
    int barrier_joined;
    /* nccl-tests: a result-table header seen, result rows after the latest header, a test
       failure, the GPUs of its device list and their host(s) */
    int nt_header, nt_rows, nt_fail, nt_gpus, nt_multi_host;
    char nt_host[64];
    /* a view() whose shape asks for exactly k times the elements its tensor holds (a shard of
       a tensor split k ways viewed with the full head count): k, 0 none; and that shape */
    int view_shard;
    char view_shape[64];
    /* NCCL's "Using network X" lines: 1 IB seen, 2 Socket seen (both: the ranks disagree) */
    int nets;
    /* GPU monitors (nvidia-smi's process table, gpustat): per GPU index, processes holding
       1 GiB or more, and whether the GPU was listed at all */
    unsigned char gpu_big[64];
    unsigned char gpu_listed[64];
    /* a 1-D size mismatch between two large tensors where one is k (2 to 64) times the other
       up to FSDP's padding: flattened shards saved with one world size, used with another */
    int shard_ratio;
    char shard_sizes[64];
    /* the latest line that starts a phase (validation, generation, a Ray trainer's start-up):
       which phase (DX_PHASE_*, 0 none), where, its text, and whether it is still the last
       non-blank line of its input (diag.c clears it when another line follows) */
    int phase;
    uint64_t phase_seq;
    int phase_last;
    char phase_text[240]; /* raw bytes of the line (diag.c cleans them for display) */
    size_t phase_len;
    char phase_where[512];
} dx_job_model;

enum {
    DX_PHASE_NONE,
    DX_PHASE_VALIDATION,
    DX_PHASE_GENERATION,
    DX_PHASE_RAY_START,
    DX_PHASE_FIRST_COLLECTIVE
};

#define DX_JOB_MAX_RANK 65536

DX_HIDDEN void dx_job_model_init(dx_job_model *jm);
DX_HIDDEN void dx_job_model_fini(dx_job_model *jm);
/* The record of rank r (created on first use); NULL when r is out of range or memory ran out. */
DX_HIDDEN dx_rank *dx_job_rank(dx_job_model *jm, int r);
/* Called for every log line with its attributed rank (may be -1). */
DX_HIDDEN int dx_job_line(dx_job_model *jm, int rank, const dx_attr *a);

/* A flight-recorder work interval of rank (dx_frdump_work's callback; jm is the model): used
 * as that rank's step samples when the logs gave none. */
DX_HIDDEN void dx_job_add_fr_work(void *jm, int rank, double seconds);

/* Did rank x print the last step of its loop ("step 4/4")? */
DX_HIDDEN int dx_rank_finished(const dx_rank *x);

/* After every input is read: per-rank step statistics and the straggler, if any. */
DX_HIDDEN void dx_job_finish(dx_job_model *jm);

DX_HIDDEN size_t dx_job_extractor_count(void);
DX_HIDDEN const dx_signal *dx_job_extractor_signal(size_t i);
/* A confirmed hit of job extractor i on a line attributed to rank (may be -1). */
DX_HIDDEN int dx_job_hit(dx_job_model *jm, size_t i, struct dx_scan *s, int rank, const char *path,
                         uint64_t line, const char *text, size_t len, uint64_t seq);

#endif
