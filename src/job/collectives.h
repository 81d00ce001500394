/* collectives.h -- the readings of ranks in different collectives (desync, tracebacks), and what
 * counts as a collective of torch.distributed in a stack frame. */
#ifndef DX_JOB_COLLECTIVES_H
#define DX_JOB_COLLECTIVES_H

#include "job.h"

/* Is a stack frame (function fn in file) a collective of torch.distributed or a wait on one?
 * ("wait" only in torch.distributed's own files: the standard library's threading wait is not a
 * collective; "synchronize" only CUDA's.) */
DX_HIDDEN int dx_frame_in_collective(const dx_str *fn, const dx_str *file);

/* The latest traceback frame line read ("" none), its rank and where (tracebacks reading). */
DX_HIDDEN const char *dx_traceback_last_frame(const dx_job_model *jm, uint64_t *seq, int *rank);

/* Does rank's traceback pass through autograd's backward before any collective (DDP's gradient
 * all-reduce is issued there)? And the collective of torch.distributed its first traceback
 * through distributed_c10d waits in (NULL none). */
DX_HIDDEN int dx_traceback_in_backward(const dx_job_model *jm, int rank);
DX_HIDDEN const char *dx_traceback_collective(const dx_job_model *jm, int rank);

#endif
