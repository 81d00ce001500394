/* launchers.h -- the readings of what launchers and Python said about a failure: torchelastic's
 * table, the agent's, srun's and mp.spawn's reports, teardown, restarts, exceptions. */
#ifndef DX_JOB_LAUNCHERS_H
#define DX_JOB_LAUNCHERS_H

#include "job.h"

/* The first Python exception line rank x printed (NULL none), and when (*seq). */
DX_HIDDEN const char *dx_exception_first(const dx_job_model *jm, const dx_rank *x, uint64_t *seq);
/* The first exception of rank x that is neither a launcher's wrapper nor an echo of another
 * rank's failure (NULL none). */
DX_HIDDEN const char *dx_exception_original(const dx_job_model *jm, const dx_rank *x,
                                            uint64_t *seq);
/* Exception lines not attributed to any rank, and those other than the launchers' own. */
DX_HIDDEN int dx_exception_unranked(const dx_job_model *jm);
DX_HIDDEN int dx_exception_workers(const dx_job_model *jm);

/* Is rank x listed as failed in torchelastic's table? */
DX_HIDDEN int dx_table_lists(const dx_job_model *jm, const dx_rank *x);

/* The local ranks torchelastic's agent (or mp.spawn, or the failures dict) reported failed, and
 * the first one's exit code. */
DX_HIDDEN int dx_launcher_agent(const dx_job_model *jm, int *code);
/* The agent's "Sending process N closing signal" lines. */
DX_HIDDEN int dx_teardown_closing(const dx_job_model *jm);
/* Restarts so far. */
DX_HIDDEN int dx_restarts(const dx_job_model *jm);

#endif
