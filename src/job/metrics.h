/* metrics.h -- per-rank numeric metrics in the spellings trainers print, and the readings on top
 * of them: NaN onset, the samples of the straggler reading, batches per epoch and progress.
 *
 * dx_metrics_parse is the one reader: a tokenizer over one line that finds every "name value"
 * pair, whatever the spelling (k=v, k: v, k v, Python dicts, JSON, Megatron's `|` fields, tqdm
 * bars and postfixes, Lightning bars), reads the value's unit (ms, s, it/s, s/it, samples/s, GB,
 * ...) from the value or the name (step_time_ms, "(ms)"), and maps the name to a quantity through
 * one table. It keeps no state and allocates nothing.
 */
#ifndef DX_JOB_METRICS_H
#define DX_JOB_METRICS_H

#include "job.h"

/* The quantities a name maps to. Values are normalised: times in seconds, memory in bytes,
 * rates per second; the others as printed. */
typedef enum dx_qty {
    DX_Q_NONE = 0,
    DX_Q_LOSS,       /* a training loss (loss, lm loss, train_loss, ...) */
    DX_Q_EVAL_LOSS,  /* a validation or evaluation loss */
    DX_Q_GRAD_NORM,  /* the gradient norm */
    DX_Q_LR,         /* the learning rate */
    DX_Q_STEP_TIME,  /* seconds per step */
    DX_Q_DATA_TIME,  /* seconds per step spent waiting for data */
    DX_Q_STEP_RATE,  /* steps per second (it/s, ups) */
    DX_Q_THROUGHPUT, /* samples or tokens per second */
    DX_Q_MEMORY,     /* bytes (or as printed when no unit says) */
    DX_Q_STEP,       /* the step's index; total: the steps of the loop ("it 3/8") */
    DX_Q_TOTAL,      /* the steps (batches) of a loop: total_steps, num_batches, ... */
    DX_Q_EPOCH,      /* the epoch */
    DX_Q_RANK,       /* the rank the line names itself; total: the world size ("rank 1/4") */
    DX_Q_NAN_COUNT,  /* iterations counted as NaN so far (Megatron) */
    DX_Q_COUNT
} dx_qty;

typedef struct dx_metric {
    int q;        /* dx_qty */
    double v;     /* normalised; NaN and infinities are kept as such */
    double total; /* the N of "n/N", -1 when none */
    uint32_t key; /* the name as written: offset and length in the line (0, 0 when none) */
    uint32_t nkey;
} dx_metric;

/* Reads every metric of one line (its body: no launcher prefix needed, but one does no harm)
 * into out[0..cap); returns how many. Never reads past s[n-1]; at most the first 4 KiB. */
DX_HIDDEN size_t dx_metrics_parse(const char *s, size_t n, dx_metric *out, size_t cap);

/* A memo of the line shapes read so far (see metrics.c, "line shapes"): with one, a line shaped
 * like an earlier one (the same bytes but for its digits) is read without cutting it into tokens
 * again; what is found is exactly what dx_metrics_parse finds. For one thread at a time. */
typedef struct dx_metrics_memo dx_metrics_memo;

/* A new, empty memo (NULL when out of memory: then parse without one). */
DX_HIDDEN dx_metrics_memo *dx_metrics_memo_new(void);
DX_HIDDEN void dx_metrics_memo_free(dx_metrics_memo *m);

/* dx_metrics_parse through memo m (NULL: none). */
DX_HIDDEN size_t dx_metrics_parse_memo(dx_metrics_memo *m, const char *s, size_t n, dx_metric *out,
                                       size_t cap);

/* Whether the reader's name and unit tables are sorted and hold no digit (the memo relies on
 * it; its unit test asks). */
DX_HIDDEN int dx_metrics_tables_sorted(void);

/* The quantity's name ("loss", "grad_norm", ...), or "?". */
DX_HIDDEN const char *dx_qty_name(int q);

/* What the metrics said about rank x: its last step and the steps of its loop (-1 unknown). */
DX_HIDDEN int dx_metrics_step(const dx_job_model *jm, const dx_rank *x, double *step,
                              double *total);

#endif
