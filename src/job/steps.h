/* steps.h -- the readings of step times: per-rank step and data-wait times, stragglers, and
 * Megatron's straggler detector. */
#ifndef DX_JOB_STEPS_H
#define DX_JOB_STEPS_H

#include "job.h"

/* Did any rank's log give whole-step times? */
DX_HIDDEN int dx_steps_from_logs(const dx_job_model *jm);
/* A flight-recorder work interval of rank (dx_frdump_work's callback; jm is the model): used as
 * that rank's step samples when the logs gave none. */
DX_HIDDEN void dx_steps_add_fr_work(void *jm, int rank, double seconds);

/* Rank's most recent step samples of kind (0 whole step, 1 data wait), oldest first, at most
 * max of them in out; returns how many (the HTML report's plots, jobview.c). */
DX_HIDDEN size_t dx_steps_samples(const dx_job_model *jm, int rank, int kind, double *out,
                                  size_t max);
/* The straggler the steps reading named (-1 none), why ("" none), and whether the samples are
 * flight-recorder work intervals rather than step times (*from_fr, may be NULL). */
DX_HIDDEN int dx_steps_straggler(const dx_job_model *jm, const char **why, int *from_fr);

/* Megatron's straggler reports, and how often (and at what speed, the most favourable seen) one
 * of them named rank x the slowest. */
DX_HIDDEN int dx_megatron_reports(const dx_job_model *jm);
DX_HIDDEN int dx_megatron_named(const dx_job_model *jm, const dx_rank *x, double *ratio);

#endif
