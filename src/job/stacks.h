/* stacks.h -- the reading of stack dumps (py-spy, faulthandler): where each rank waits. */
#ifndef DX_JOB_STACKS_H
#define DX_JOB_STACKS_H

#include "job.h"

/* The one dumped rank, outside any collective, when it is the only dump and nothing failed (-1
 * none), with why. */
DX_HIDDEN int dx_stacks_lone_rank(dx_job_model *jm, const char **why);

#endif
