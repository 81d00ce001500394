/* progress.h -- the readings of how far each rank got: progress it printed, the phase a log ends
 * in, a rank busy alone, uneven inputs, a stuck rank, output that stops early. */
#ifndef DX_JOB_PROGRESS_H
#define DX_JOB_PROGRESS_H

#include "job.h"

/* The last "step N/M" progress rank x printed: 1 with *n and *m, 0 when none. */
DX_HIDDEN int dx_progress_of(const dx_job_model *jm, const dx_rank *x, long long *n, long long *m);
/* Progress "n/m" of rank's read elsewhere (the metrics reading's step and loop length). */
DX_HIDDEN void dx_progress_note(dx_job_model *jm, int rank, long long n, long long m);
/* Did rank x print the last step of its loop ("step 4/4")? */
DX_HIDDEN int dx_rank_finished(const dx_job_model *jm, const dx_rank *x);
/* What showed a loop's end ("a progress bar at 9/9"), "" none yet. */
DX_HIDDEN const char *dx_progress_done_what(const dx_job_model *jm);
/* The last unprefixed progress bar read before the first watchdog timeout ("" none), whether
 * its loop ended (*closed), and whether the same bar went on after a timeout line (*moved). */
DX_HIDDEN const char *dx_progress_bar0(const dx_job_model *jm, int *closed, int *moved);

/* The last phase read before the first watchdog timeout line ("evaluation", "checkpoint", ...;
 * NULL when no timeout, or no phase before it), with that phase line's rank (-1 unprefixed) and
 * where it is ("path:line", in where). */
DX_HIDDEN const char *dx_phase_before_timeout(const dx_job_model *jm, int *rank, char *where,
                                              size_t cap);

/* The line l gave a step (the metrics reading): training is the latest phase when l is the
 * latest phase line. */
DX_HIDDEN void dx_phases_note_step(dx_job_model *jm, const dx_line *l);

/* A long stretch without progress before the end of the job: 1 when the latest progress line
 * (a timed "step N/M" or bar of any rank, *last) came DX_PROGRESS_GAP_S seconds or more before
 * the end (the scheduler's time limit when its line was read, *time_limit set; otherwise the last
 * timed line of any rank), with the gap in *seconds. */
#define DX_PROGRESS_GAP_S 600
DX_HIDDEN int dx_progress_gap(const dx_job_model *jm, double *seconds, int *time_limit,
                              dx_time *last);

/* When rank's watchdog timeout was printed (a timed "ran for N milliseconds" line): 1 with *t,
 * 0 when no such line of rank was read (the first 16 are kept). */
DX_HIDDEN int dx_progress_timeout_at(const dx_job_model *jm, int rank, dx_time *t);

/* The stuck rank (-1 none); *timed is how many ranks timed out when it was seen in the logs (0
 * otherwise) and *why says why. */
DX_HIDDEN int dx_stuck_rank(dx_job_model *jm, size_t *timed, const char **why);

/* The job-progress row's prefilter: true on every line its pattern can match (see dx_signal). */
DX_HIDDEN int dx_progress_step_words(const char *line, size_t len);

#endif
