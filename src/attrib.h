/* attrib.h -- attributing a log line to a rank, a node and a time.
 *
 * A table of recognisers (one row per launcher or logger format) peels the prefixes that
 * launchers and loggers put before a message, possibly nested ("host1: [default3]:[2024-...]"):
 *   torchrun --tee "[rank3]:" and "[default3]:" (role + local rank), mpirun "[1,3]<stderr>:",
 *   srun -l "3: ", pdsh/deepspeed "host1: ", Ray "(RayTrainWorker pid=123, ip=10.0.0.1)",
 *   and timestamps: glog "E0501 12:00:01.123456 1234 file.cc:12]", Python logging
 *   "2024-05-01 12:00:01,123", ISO 8601 "2024-05-01T12:00:01.123Z", DeepSpeed
 *   "[2024-05-01 12:00:01,123] [INFO]", NCCL "host:pid:tid [dev] NCCL INFO" (host and pid),
 *   torch 2.4+ "[rank3]:[E0501 12:00:01.123456789 ProcessGroupNCCL.cpp:1234]", and more (the
 *   table in attrib.c is the list).
 * Per-rank file names ("rank_3.log", "rank3.txt", "log.rank-3", SLURM "%t" outputs like
 * "job-1234-3.out", torchrun --log-dir "<run_id>/attempt_0/3/stderr.log") give a default rank:
 * see dx_attrib_rank_from_name.
 *
 * Pure functions over borrowed text: no allocation, safe on any bytes.
 */
#ifndef DX_ATTRIB_H
#define DX_ATTRIB_H

#include "dx.h"

typedef struct dx_time {
    int year;       /* 0 when the format has no year (glog) */
    int month, day; /* 0 when the format has no date */
    int hour, min, sec;
    int usec;     /* microseconds */
    int tz_known; /* 1 when the text carried a zone ("Z", "+02:00"); then fields are UTC */
} dx_time;

typedef struct dx_attr {
    int rank;       /* global rank, -1 unknown */
    int local_rank; /* local rank, -1 unknown ("[default3]:" gives local rank 3) */
    int has_time;   /* time is valid */
    dx_time time;
    long pid;            /* -1 unknown */
    dx_str host;         /* borrowed from the line; n == 0 when unknown */
    size_t body;         /* offset of the message after every recognised prefix */
    unsigned recognised; /* bit set of DX_PFX_* that matched */
    /* severity a prefix named: 'T' trace, 'D' debug, 'I' info, 'W' warning, * 'E' error, 'F'
       fatal/critical; 0 unknown */
    char level;
} dx_attr;

enum {
    DX_PFX_TORCHRUN_RANK = 1u << 0,   /* [rank3]: */
    DX_PFX_TORCHRUN_ROLE = 1u << 1,   /* [default3]: */
    DX_PFX_MPIRUN = 1u << 2,          /* [1,3]<stderr>: */
    DX_PFX_SRUN = 1u << 3,            /* 3: */
    DX_PFX_HOST = 1u << 4,            /* host1: (pdsh, deepspeed multi-node) */
    DX_PFX_RAY = 1u << 5,             /* (RayTrainWorker pid=123, ip=...) */
    DX_PFX_GLOG = 1u << 6,            /* E0501 12:00:01.123456 1234 file.cc:12] */
    DX_PFX_PYLOG = 1u << 7,           /* 2024-05-01 12:00:01,123 */
    DX_PFX_ISO = 1u << 8,             /* 2024-05-01T12:00:01Z */
    DX_PFX_DEEPSPEED = 1u << 9,       /* [2024-05-01 12:00:01,123] [INFO] */
    DX_PFX_NCCL = 1u << 10,           /* host:pid:tid [dev] NCCL INFO */
    DX_PFX_TORCH_GLOG = 1u << 11,     /* [E0501 12:00:01.123456789 ProcessGroupNCCL.cpp:12] */
    DX_PFX_TIME_BRACKET = 1u << 12,   /* [2024-05-01 12:00:01] (no level after it; NCCL 2.26+) */
    DX_PFX_CTIME = 1u << 13,          /* Tue Nov 27 13:49:06 2018 (mpirun --timestamp-output) */
    DX_PFX_PYLOG_LEVEL = 1u << 14,    /* ERROR:torch.distributed.elastic...api: (basicConfig) */
    DX_PFX_SYSLOG = 1u << 15,         /* May  1 12:00:01 node1 python[1234]: (syslog, journal) */
    DX_PFX_LIGHTNING_RANK = 1u << 16, /* [rank: 3] (Lightning's rank_prefixed_message) */
    DX_PFX_KUBECTL = 1u << 17         /* [pod/trainer-worker-0/pytorch] (kubectl logs --prefix) */
};

/* The recogniser's short name for one DX_PFX_* bit ("torchrun-rank", "glog", ...), or NULL. */
DX_HIDDEN const char *dx_attrib_prefix_name(unsigned flag);

/* Attributes one line (without its newline). Never reads past line[n-1]; line may be NULL.
 * When nested prefixes disagree, the outermost that names a rank, local rank, pid or host wins;
 * a time is replaced only by a later one that has a year where the first had none. Each prefix
 * takes one blank after it, so indentation after the last prefix stays in the body. */
DX_HIDDEN void dx_attrib_line(const char *line, size_t n, dx_attr *out);

/* The rank dx_attrib_line would give the line (its rank, else its local rank, else -1), at a
 * fraction of the cost on lines whose prefixes name none. */
DX_HIDDEN int dx_attrib_rank(const char *line, size_t n);

/* False when dx_attrib_line cannot find a time in the line (it holds no "HH:MM:SS"): a cheap
 * test before it. */
DX_HIDDEN bool dx_attrib_may_have_time(const char *line, size_t n);

/* The rank a file's name implies, or -1. Sets *is_local (may be NULL) to 1 when the number is a
 * local rank, else 0. path is the member's relative path, NUL-terminated. Accepted, first match
 * wins:
 *   torchrun --log-dir ".../attempt_<k>/<n>/{stdout,stderr}.log" or ".../error.json": local n;
 *   in the file's name, "rank" or then "worker" (any case) at the start or after '_' '-' '.',
 *     an optional '_' '-' '.', digits, then the end or '_' '-' '.': "rank_3.log", "rank3.txt",
 *     "rank-3.out", "log.rank-3", "node0_rank3.log", "worker_3.log", "nccl_trace_rank_3";
 *     "local_rank3" / "localrank3" are local; "node_rank", "group_rank", "tp_rank" (and pp, dp,
 *     ep, cp, sp, mp) are no rank at all;
 *   SLURM "%t": "<name>[-_.]<jobid>[-_.]<task>.out|.err" with a job id of 3+ digits and a task id
 *     without leading zeros ("slurm-1234_3.out", "job.1234.3.out"); note that an array job's
 *     "slurm-%A_%a.out" has the same shape, so this is only a default;
 *   a parent directory named like the first rule: "logs/rank3/stdout.txt".
 * "resnet50.log", "2024-05-01.log", "llama3_8b.log", "rank3of8.log" give -1. */
DX_HIDDEN int dx_attrib_rank_from_name(const char *path, int *is_local);

/* A sortable key in microseconds since 1970-01-01 (zone ignored: local times count as UTC).
 * A missing date (month 0) is taken from def, a missing year (0) from def's year; without
 * them 1970-01-01 / 1970 stand in. def may be NULL. */
DX_HIDDEN int64_t dx_time_key(const dx_time *t, const dx_time *def);

/* Formats as ISO 8601: "2024-05-01T12:00:01.123456Z" when tz_known, without the "Z" for a local
 * time, "--05-01T12:00:01.123456" without a year (glog), "12:00:01.123456" without a date.
 * snprintf's contract: returns the full length, writes at most cap bytes, NUL-terminated when
 * cap > 0 (buf may be NULL when cap is 0). */
DX_HIDDEN size_t dx_time_format(const dx_time *t, char *buf, size_t cap);

#endif
