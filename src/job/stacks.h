/* stacks.h -- the reading of stack dumps (py-spy, faulthandler): where each rank waits. */
#ifndef DX_JOB_STACKS_H
#define DX_JOB_STACKS_H

#include "job.h"

/* The one dumped rank, outside any collective, when it is the only dump and nothing failed (-1
 * none), with why. */
DX_HIDDEN int dx_stacks_lone_rank(dx_job_model *jm, const char **why);

/* The innermost frame of the first stack dump in the inputs (py-spy, faulthandler), ranked or
 * not, with the rank (-1 unknown) and where its thread line was; NULL when none. */
DX_HIDDEN const char *dx_stacks_first_dump(const dx_job_model *jm, int *rank, uint64_t *seq);

#endif
