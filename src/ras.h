/* ras.h -- NCCL's RAS report (`ncclras`, NCCL 2.24+): its communicators, each rank's operation
 * counts, the ranks and processes missing or dead, and what they say about a hang.
 *
 * NCCL's RAS subsystem (src/ras/client_support.cc) answers the `ncclras` client with a text report
 * (a job summary, a table of communicator groups, then "Errors": INCOMPLETE, DEAD, "#g-i (hash)
 * INCOMPLETE|ERROR" blocks, and "Warnings": "#g-i (hash) MISMATCH" blocks naming ranks with their
 * GPU, process and node) or, from 2.29 (`ncclras -f json`), a JSON document with every rank of
 * every communicator: host, pid, GPUs, status and per-function operation counts, and the missing
 * ranks, unresponsive or considered dead. The text is read line by line by the job reading
 * nccl-ras (src/job/ras.c), which feeds the model through dx_ras_*; the JSON is read whole here.
 *
 * A rank here is a rank of its communicator; a communicator as large as the largest one reported
 * is taken as the job's world, whose ranks are global. Everything is owned by the dx_ras.
 */
#ifndef DX_RAS_H
#define DX_RAS_H

#include "dx.h"

#define DX_RAS_MAX_COMMS 4096
#define DX_RAS_MAX_RANKS 65536

typedef struct dx_ras_rank {
    int rank;        /* in its communicator */
    char host[64];   /* "" unknown */
    long long pid;   /* -1 unknown */
    int cuda_dev;    /* -1 unknown */
    long long ops;   /* operations launched of the function whose counts differ, -1 unknown */
    char status[12]; /* RUNNING, INIT, FINALIZE, ABORT, NOCOMM; "" unknown */
    char error[40];  /* the error it reported ("Remote process error"), "" none */
    int missing;     /* RAS got no data about this communicator from it */
    int dead;        /* its process is considered dead */
} dx_ras_rank;

typedef struct dx_ras_comm {
    char hash[24];      /* "fa93daea854b060b" */
    int size;           /* ranks in the communicator, -1 unknown */
    char func[16];      /* the function whose operation counts differ ("AllGather"), "" none */
    dx_ras_rank *ranks; /* the ranks the report names */
    size_t nranks, cap;
    long long group_ops[8]; /* "N ranks have launched up to operation X": the counts listed */
    int group_n[8];         /* ... and how many ranks each */
    size_t ngroups;
} dx_ras_comm;

typedef struct dx_ras_proc {
    long long pid;
    char host[64];
    char gpus[24];
    int dead; /* 1 considered dead, 0 only missing */
} dx_ras_proc;

typedef struct dx_ras {
    dx_ras_comm *comms;
    size_t ncomms, capcomms;
    dx_ras_proc *procs;
    size_t nprocs, capprocs;
    int ndead;          /* processes the report counts as dead */
    int nmissing_procs; /* processes it got no communicator data from */
    int reports;        /* RAS reports read (text or JSON) */
} dx_ras;

/* What the reports say. */
typedef struct dx_ras_verdict {
    int culprits[64]; /* global ranks (the world communicator's), ascending */
    size_t nculprits;
    int why_kind;       /* 1 dead, 2 behind in operation count, 3 missing data, 4 error */
    char why[320];      /* one sentence, naming the culprits' processes */
    char behind[320];   /* a minority behind in operation count: "rank 3 of ..."; "" none */
    char mismatch[320]; /* any operation-count difference, as the report shows it; "" none */
    char dead[240];     /* processes considered dead; "" none */
    char missing[240];  /* ranks or processes without data; "" none */
    char error[240];    /* ranks that reported an error; "" none */
} dx_ras_verdict;

DX_HIDDEN void dx_ras_fini(dx_ras *r);

/* The communicator with this hash (added when new); NULL past the limit or out of memory
 * (*oom set). */
DX_HIDDEN dx_ras_comm *dx_ras_comm_get(dx_ras *r, const char *hash, size_t n, int *oom);
/* The record of comm rank `rank` (added when new); NULL when out of range or memory. */
DX_HIDDEN dx_ras_rank *dx_ras_rank_get(dx_ras_comm *c, int rank, int *oom);
/* A process the report lists as dead or missing. */
DX_HIDDEN int dx_ras_proc_add(dx_ras *r, long long pid, const char *host, size_t hn,
                              const char *gpus, size_t gn, int dead);

/* Reads a JSON report (`ncclras -f json`, NCCL 2.29+). Errors: DDX_EFORMAT (not a RAS report,
 * malformed), DDX_ENOMEM; err's message starts with name. */
DX_HIDDEN int dx_ras_json(dx_ras *r, const char *name, const char *text, size_t len,
                          ddx_error *err);
/* Whether a JSON document's head is a RAS report's. */
DX_HIDDEN int dx_ras_json_head(const char *head, size_t n);

/* The culprits and the facts, from everything read: dead processes first, then the ranks a
 * minority behind in a communicator's operation count, then ranks without data, then ranks that
 * reported errors. */
DX_HIDDEN void dx_ras_judge(const dx_ras *r, dx_ras_verdict *v);

#endif
