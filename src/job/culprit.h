/* culprit.h -- picking the culprit rank from the votes of the readings and the scorer. */
#ifndef DX_JOB_CULPRIT_H
#define DX_JOB_CULPRIT_H

#include "job.h"

/* What the scorer knows that the policy's vetoes ask about. */
typedef struct dx_culprit_ctx {
    size_t nkept;         /* findings reported */
    const char *top_kind; /* the top finding's kind (crash, hang, perf, ...), NULL when none */
    int unrecognised;     /* the report names a failure no reference explains */
} dx_culprit_ctx;

typedef struct dx_culprit {
    int rank; /* -1 none */
    int ranks[DX_VOTE_RANKS];
    size_t nranks;  /* the ranks the deciding vote names, rank first (0 when none) */
    char *why;      /* owned; NULL when none */
    char *decided;  /* owned: the deciding vote's own line; NULL when none */
    char **signals; /* owned: one line per vote that survived the vetoes, in the policy's order */
    size_t nsignals;
} dx_culprit;

/* Applies the policy's vetoes to jm's votes, picks the culprit and explains it. */
DX_HIDDEN int dx_culprit_pick(dx_job_model *jm, const dx_culprit_ctx *ctx, dx_culprit *out);
DX_HIDDEN void dx_culprit_fini(dx_culprit *c);

/* The policy, for documentation and listings: row i's source, precedence (lower wins; -1 never
 * picks) and reason text; NULL past the last row. */
DX_HIDDEN const char *dx_culprit_source(size_t i, int *precedence, const char **reason);

#endif
