/* ras.h -- the nccl-ras reading's accessor: NCCL's RAS report in its JSON form. */
#ifndef DX_JOB_RAS_H
#define DX_JOB_RAS_H

#include "job.h"

/* Reads a RAS report's JSON form (`ncclras -f json`) into the reading, whose finish judges it
 * with the text form's lines. Errors as dx_ras_json (src/ras.h). */
DX_HIDDEN int dx_nccl_ras_json(dx_job_model *jm, const char *name, const char *text, size_t len,
                               ddx_error *err);

#endif
