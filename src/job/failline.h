/* failline.h -- the reading of lines that say a job failed or hung without a Python exception
 * (a logger's ERROR record, argparse's error, ssh, NCCL's errors and warnings, a note that the
 * output stopped). */
#ifndef DX_JOB_FAILLINE_H
#define DX_JOB_FAILLINE_H

#include "job.h"

/* The job's first line stating a failure that is not a Python exception line, its rank (-1
 * unknown) and where it was; NULL when none. */
DX_HIDDEN const char *dx_failure_line(const dx_job_model *jm, int *rank, uint64_t *seq);

/* The job's first note that its output stopped or it froze; NULL when none. */
DX_HIDDEN const char *dx_stall_note(const dx_job_model *jm, int *rank, uint64_t *seq);

#endif
