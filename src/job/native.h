/* native.h -- the reading of a process that died in native code (a signal, C++ terminate, a fatal
 * Python error, glibc's checks). */
#ifndef DX_JOB_NATIVE_H
#define DX_JOB_NATIVE_H

#include "job.h"

/* The job's first line saying a process died in native code, its rank (-1 unknown) and where it
 * was; NULL when none. */
DX_HIDDEN const char *dx_native_crash(const dx_job_model *jm, int *rank, uint64_t *seq);

#endif
