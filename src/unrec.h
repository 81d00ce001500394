/* unrec.h -- the failure ddx could not place: when the inputs show that the job failed and no
 * reference explains it, the root error itself (rank, file and line, exception) and the
 * catalogue references closest to it (nearest.c), never counted as a finding.
 *
 * The job model (job.c) asks dx_unrec_is_echo of every exception line, to keep each rank's
 * first original exception apart from the echoes of another rank's failure; diag.c calls
 * dx_unrec_find after scoring when no finding is kept.
 */
#ifndef DX_UNREC_H
#define DX_UNREC_H

#include "nearest.h"

typedef struct dx_unrec {
    int rank;        /* -1 unknown */
    uint64_t seq;    /* input << 40 | line, as events; DX_UNREC_NOWHERE when unknown */
    char *text;      /* the line, cleaned for output */
    char *exception; /* its exception class ("SafetensorError"), or NULL */
    int original;    /* the rank's own exception (not an echo, a wrapper or a launcher record) */
    int echo; /* an echo of a failure elsewhere, or the launcher's record: the failing process left
                 no error in the inputs (a failure line or a hang is neither) */
    dx_nearest nearest[DX_NEAREST_MAX];
    size_t nnearest;
} dx_unrec;

/* Whether an exception or failure line only echoes another rank's failure (a peer closed the
 * connection, a reset, a watchdog or gloo timeout, an aborted communicator) or is a launcher's
 * wrapper around a child's failure (ChildFailedError, ProcessExitedException, ...). */
DX_HIDDEN int dx_unrec_is_echo(const char *text, size_t len);

/* The exception class a Python exception line starts with ("torch.distributed.DistBackendError"
 * gives "DistBackendError"); 0 when the line is not one. */
DX_HIDDEN size_t dx_unrec_exception(const char *text, size_t len, const char **cls);

DX_HIDDEN void dx_unrec_fini(dx_unrec *u);

#define DX_UNREC_NOWHERE UINT64_MAX

/* After scoring, when the report holds no finding: the root error of a job the inputs show
 * failed, in a new dx_unrec (*out; the caller frees it with dx_unrec_fini and dx_free), or
 * *out = NULL when nothing shows a failure. Returns DDX_OK or DDX_ENOMEM. */
DX_HIDDEN int dx_unrec_find(struct ddx_report *rep, dx_unrec **out);

#endif
