/* init.h -- the readings of process-group set-up: NCCL's communicators and transport, ranks
 * announced at set-up, the store-based barrier, the hosts. */
#ifndef DX_JOB_INIT_H
#define DX_JOB_INIT_H

#include "job.h"

/* The largest communicator seen in NCCL's Init COMPLETE lines (0 none). */
DX_HIDDEN int dx_nccl_nranks(const dx_job_model *jm);

#endif
