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
/* The first original exception line not attributed to any rank (NULL none), and where; where
 * the latest exception line of any kind was (0 none). */
DX_HIDDEN const char *dx_exception_unranked_original(const dx_job_model *jm, uint64_t *seq);
/* The first exception line of any kind not attributed to any rank (NULL none), and where. */
DX_HIDDEN const char *dx_exception_unranked_first(const dx_job_model *jm, uint64_t *seq);
DX_HIDDEN uint64_t dx_exception_last_seq(const dx_job_model *jm);
/* Exception lines not attributed to any rank, and those other than the launchers' own. */
DX_HIDDEN int dx_exception_unranked(const dx_job_model *jm);
DX_HIDDEN int dx_exception_workers(const dx_job_model *jm);

/* torchelastic's root-cause entry: its rank (-1 none), its exit code (*has_code when read) and
 * "path:line" of its rank line (*where, NULL none). */
DX_HIDDEN int dx_table_root(const dx_job_model *jm, int *code, int *has_code, const char **where);

/* What the launchers reported: the local ranks torchelastic's agent (or mp.spawn, or the
 * failures dict) saw fail, the first one and its exit code; the same for srun's tasks. */
typedef struct dx_launched {
    int agent_rank, agent_code, nagent;
    int srun_rank, srun_code, nsrun;
} dx_launched;
DX_HIDDEN void dx_launcher_report(const dx_job_model *jm, dx_launched *out);

/* Is rank x listed as failed in torchelastic's table? */
DX_HIDDEN int dx_table_lists(const dx_job_model *jm, const dx_rank *x);

/* The local ranks torchelastic's agent (or mp.spawn, or the failures dict) reported failed, and
 * the first one's exit code. */
DX_HIDDEN int dx_launcher_agent(const dx_job_model *jm, int *code);
/* The first worker whose own exception mp.spawn reported ("-- Process N terminated with the
 * following error:"), -1 none, and how many lines of that report were given to it (*lines). */
DX_HIDDEN int dx_spawn_raised(const dx_job_model *jm, uint32_t *lines);
/* The agent's "Sending process N closing signal" lines. */
DX_HIDDEN int dx_teardown_closing(const dx_job_model *jm);
/* Restarts so far. */
DX_HIDDEN int dx_restarts(const dx_job_model *jm);

#endif
