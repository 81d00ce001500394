/* watchdog.h -- the readings of collective timeouts: NCCL's and gloo's watchdog lines, sequence
 * numbers, the dump signal, a timeout after a loop's end. */
#ifndef DX_JOB_WATCHDOG_H
#define DX_JOB_WATCHDOG_H

#include "job.h"

/* What one rank's watchdog said. */
typedef struct dx_timeout {
    int timed_out;            /* printed a watchdog or gloo timeout */
    long long seq;            /* its SeqNum, -1 unknown */
    long long numel;          /* its NumelIn, -1 unknown */
    char op[24];              /* its OpType ("gloo recv" for gloo) */
    long long last_completed; /* "last completed NCCL work", -1 unknown */
    long long last_enqueued;  /* "last enqueued NCCL work" on the same line, -1 unknown */
    int has_last_completed;
} dx_timeout;

/* The watchdog's account of rank x (NULL when it has none). */
DX_HIDDEN const dx_timeout *dx_watchdog_of(const dx_job_model *jm, const dx_rank *x);
DX_HIDDEN int dx_watchdog_timed_out(const dx_job_model *jm, int rank);
/* Ranks that timed out, and watchdog timeout lines read so far. */
DX_HIDDEN size_t dx_watchdog_ranks(const dx_job_model *jm);
DX_HIDDEN int dx_watchdog_lines(const dx_job_model *jm);

/* The one rank that timed out after a loop's end while no other rank timed out or failed (-1
 * none), and what showed the loop's end (NULL none). */
DX_HIDDEN int dx_after_loop_rank(dx_job_model *jm);

#endif
