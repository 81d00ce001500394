/* attrib.h -- attributing a log line to a rank, a node and a time.
 *
 * A table of recognisers (one row per launcher or logger format) peels the prefixes that
 * launchers and loggers put before a message, possibly nested ("host1: [default3]:[2024-...]"):
 *   torchrun --tee "[rank3]:" and "[default3]:" (role + local rank), mpirun "[1,3]<stderr>:",
 *   srun -l "3: ", pdsh/deepspeed "host1: ", Ray "(RayTrainWorker pid=123, ip=10.0.0.1)",
 *   and timestamps: glog "E0501 12:00:01.123456 1234 file.cc:12]", Python logging
 *   "2024-05-01 12:00:01,123", ISO 8601 "2024-05-01T12:00:01.123Z", DeepSpeed
 *   "[2024-05-01 12:00:01,123] [INFO]", NCCL "host:pid:tid [dev] NCCL INFO" (host and pid),
 *   torch 2.4+ "[rank3]:[E0501 12:00:01.123456789 ProcessGroupNCCL.cpp:1234]".
 * Per-rank file names ("rank_3.log", "rank3.txt", "log.rank-3", SLURM "%t" outputs like
 * "job-1234-3.out", torchrun --log-dir "<run_id>/attempt_0/3/stderr.log") give a default rank.
 *
 * Pure functions over borrowed text: no allocation, safe on any bytes.
 */
#ifndef DX_ATTRIB_H
#define DX_ATTRIB_H

#include "dx.h"

typedef struct dx_time {
    int year;        /* 0 when the format has no year (glog) */
    int month, day;  /* 0 when the format has no date */
    int hour, min, sec;
    int usec;        /* microseconds */
    int tz_known;    /* 1 when the text carried a zone ("Z", "+02:00"); then fields are UTC */
} dx_time;

typedef struct dx_attr {
    int rank;          /* global rank, -1 unknown */
    int local_rank;    /* local rank, -1 unknown ("[default3]:" gives local rank 3) */
    int has_time;      /* time is valid */
    dx_time time;
    long pid;          /* -1 unknown */
    dx_str host;       /* borrowed from the line; n == 0 when unknown */
    size_t body;       /* offset of the message after every recognised prefix */
    unsigned recognised; /* bit set of DX_PFX_* that matched */
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
    DX_PFX_TORCH_GLOG = 1u << 11      /* [E0501 12:00:01.123456789 ProcessGroupNCCL.cpp:12] */
};

/* Attributes one line (without its newline). Never reads past line[n-1]. */
DX_HIDDEN void dx_attrib_line(const char *line, size_t n, dx_attr *out);

/* The rank a file's name implies, or -1. Sets *is_local when the number is a local rank
 * (torchrun --log-dir layouts). path is the member's relative path. */
DX_HIDDEN int dx_attrib_rank_from_name(const char *path, int *is_local);

/* A sortable key in microseconds; missing year/date are taken from def (may be NULL -> 0). */
DX_HIDDEN int64_t dx_time_key(const dx_time *t, const dx_time *def);

/* Formats as ISO 8601 ("2024-05-01T12:00:01.123456Z", or "12:00:01.123456" without a date). */
DX_HIDDEN size_t dx_time_format(const dx_time *t, char *buf, size_t cap);

#endif
