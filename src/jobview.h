/* jobview.h -- the job as the HTML report draws it: each rank's span of lines, state, place,
 * first error, timeout, step-time series; the culprit ranks; restarts.
 *
 * The one place the HTML report reads the job model: report_html.c goes through these
 * accessors, which read the model through its own (dx_job_rank_view, and the accessors of the
 * readings' family headers under src/job/), so a change to how a reading keeps its state changes
 * this file at most. Everything returned is borrowed from the report and valid until it is
 * freed.
 *
 * The report keeps one record per rank of where its lines start and end (reading order and
 * time), filled by dx_view_note_line while the inputs are read; the job model keeps only the
 * end.
 *
 * Series: step time and time waiting for data come from the job model's step samples today.
 * Loss and gradient norm are the hook for the metrics reading: dx_view_series returns no
 * samples for them and dx_view_series_mark no onset until that reading records per-rank
 * metrics; the report then draws their plots with no other change.
 */
#ifndef DX_JOBVIEW_H
#define DX_JOBVIEW_H

#include "diag.h"

typedef enum dx_series_kind {
    DX_SERIES_STEP = 0,  /* seconds per step (or per flight-recorder work interval) */
    DX_SERIES_DATA_WAIT, /* seconds per step spent waiting for data */
    DX_SERIES_LOSS,      /* the metrics reading (not yet): the training loss */
    DX_SERIES_GRAD_NORM, /* the metrics reading (not yet): the gradient norm */
    DX_SERIES_COUNT
} dx_series_kind;

/* The most samples of one series per rank the report draws: the most recent ones. */
#define DX_VIEW_SERIES_MAX 64

typedef struct dx_rank_info {
    int rank;
    const char *state; /* "failed", "slow", "silent", "timed out" or "healthy" */
    const char *host;  /* NULL when unknown */
    int gpu;           /* CUDA device, -1 unknown */
    long long pid;     /* -1 unknown */
    uint64_t lines;
    /* the first and last of its lines: where (input << 40 | line; 0 none) and, when they carry
       one, when (key: microseconds, see dx_time_key) */
    uint64_t first_seq, last_seq;
    int has_first_time, has_last_time;
    dx_time first_time, last_time;
    int64_t first_key, last_key;
    const char *first_error; /* its first root line, NULL none */
    int timed_out;
    const char *timeout_op; /* "ALLREDUCE", NULL unknown */
    long long timeout_seq;  /* -1 unknown */
    int has_timeout_time;   /* when its watchdog fired, when the log said */
    int64_t timeout_key;
    long long last_completed; /* the last collective it completed, -1 unknown */
    int slow;                 /* flagged as the straggler */
    double rel_speed;         /* fastest rank's median step / its own, 0 unknown */
    double step_median;       /* seconds, 0 unknown */
    const char *waits_in;     /* the frame its stack dump waits in, NULL none */
    int has_prog;
    long long prog_n, prog_m; /* its last "step N/M" */
    int culprit;              /* one of the culprit ranks */
} dx_rank_info;

/* Records one line of rank (>= 0) at seq (input << 40 | line) with its attribution: the
 * spans. Called by the reader for every attributed log line. */
DX_HIDDEN int dx_view_note_line(ddx_report *rep, int rank, uint64_t seq, const dx_attr *a);
/* Frees the spans (ddx_report_free). */
DX_HIDDEN void dx_view_fini(ddx_report *rep);

/* Ranks are numbered below this; dx_view_rank says which were seen. */
DX_HIDDEN size_t dx_view_rank_limit(const ddx_report *rep);
/* How many ranks were seen. */
DX_HIDDEN size_t dx_view_rank_count(const ddx_report *rep);
/* Fills *out for rank r and returns 1, or returns 0 when the inputs never named rank r. */
DX_HIDDEN int dx_view_rank(const ddx_report *rep, size_t r, dx_rank_info *out);

/* The state every report form gives rank r: its readings' state, except that a rank the
 * flight-recorder dumps decisively hold responsible and nothing else marks is "silent" (it
 * stopped short of the collective the others wait in), not "healthy". */
DX_HIDDEN const char *dx_view_state(const ddx_report *rep, int rank, const char *state);
/* The culprit ranks, first the one ddx holds most responsible; at most max written. */
DX_HIDDEN size_t dx_view_culprits(const ddx_report *rep, int *out, size_t max);
/* torchelastic's worker-group restarts seen ("will restart worker group"). */
DX_HIDDEN int dx_view_restarts(const ddx_report *rep);
/* The straggler ddx named (-1 none) and why (may be ""). */
DX_HIDDEN int dx_view_straggler(const ddx_report *rep, const char **why);

/* Series kind's title and unit for a plot ("Step time", "s"). */
DX_HIDDEN const char *dx_view_series_title(const ddx_report *rep, dx_series_kind kind);
DX_HIDDEN const char *dx_view_series_unit(dx_series_kind kind);
/* Writes up to max of rank's most recent samples of kind, oldest first; returns how many. */
DX_HIDDEN size_t dx_view_series(const ddx_report *rep, int rank, dx_series_kind kind, double *out,
                                size_t max);
/* The index (in what dx_view_series returns) where the series turns bad on rank (a loss that
 * becomes NaN), -1 none. */
DX_HIDDEN long dx_view_series_mark(const ddx_report *rep, int rank, dx_series_kind kind);

#endif
