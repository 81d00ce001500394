/* kb.h -- the knowledge base in memory: references, their signals, context, checks and examples.
 *
 * The same structures hold the built-in references (generated as static C data by tools/gen.c,
 * see kb_data.c in the build folder) and references loaded at run time from a directory (parsed
 * by kb_load.c into an arena). The pattern database over every signal is built by match.c.
 * Everything here is read-only once loaded.
 */
#ifndef DX_KB_H
#define DX_KB_H

#include "dx.h"

typedef enum dx_role {
    DX_ROLE_ROOT = 0,
    DX_ROLE_SYMPTOM,
    DX_ROLE_WRAPPER,
    DX_ROLE_AGAINST,
    DX_ROLE_NOISE,
    DX_ROLE_MARKER /* a landmark for another signal's after/not_followed_by, never evidence */
} dx_role;

typedef enum dx_op { DX_OP_EQUALS = 0, DX_OP_RANGE, DX_OP_MATCHES, DX_OP_EXISTS } dx_op;

typedef struct dx_cond {
    const char *fact;  /* NULL: no machine condition (a check done by hand) */
    int op;            /* dx_op */
    const char *value; /* scalar as text: "false", "3", "cpu", ">=0.14,<0.15", a regex */
    double weight;
    const char *says; /* may be NULL */
    int raise_only;   /* context: adds its weight when it holds, nothing when it fails */
    int root;         /* context: when it holds, the fact shows the failure itself, as a root line
                         would (the reference is no mere consequence of another's root line) */
} dx_cond;

typedef struct dx_signal {
    const char *id;
    int role; /* dx_role */
    double weight;
    const char *pattern;
    const char *source; /* may be NULL */
    int caseless;
} dx_signal;

/* A signal's own prefilter (optional, for the job model's rows): true on every line (without its
 * newline) on which the signal's pattern can match. A signal with one stays out of the Vectorscan
 * database: its candidates are the lines the test accepts, confirmed by PCRE2 as any other
 * (match.c). For patterns whose literals are common on noise, as a trainer's step lines are. */
typedef int (*dx_prefilter_fn)(const char *line, size_t len);

/* Conditions on where a signal's line stands in the logs (docs/reference-format.md, "Conditions
 * on a signal"); every one given must hold for a line to count (sigcond.c). */
typedef struct dx_sigcond {
    int at_end;                  /* the last non-blank line of its input, no failure anywhere */
    const char *after;           /* a signal id of the reference: only after a line of it */
    const char *not_followed_by; /* a signal id of the reference: only when none follows */
    const char *repeats;         /* a capture: only when one value of it is on two lines */
    const char *missing;         /* a capture: only when some value 0..N-1 is on no line, */
    const char *out_of;          /* ... N the largest value of this capture */
    const char *differs;   /* a capture: only the one rank whose value differs from all others' */
    const char *not_after; /* a signal id of the reference: only when no line of it came before */
} dx_sigcond;

/* Does *c (not NULL) hold any condition? */
#define DX_SIGCOND_ANY(c)                                                                          \
    ((c)->at_end || (c)->after || (c)->not_followed_by || (c)->repeats || (c)->missing ||          \
     (c)->differs || (c)->not_after)

typedef struct dx_check {
    const char *says;
    const char *command; /* may be NULL */
    dx_cond cond;        /* cond.fact NULL: check by hand */
} dx_check;

typedef struct dx_variant {
    const char *id;
    const char *title;
    const char *const *signals; /* signal ids */
    size_t nsignals;
    const char *const *fix;
    size_t nfix;
} dx_variant;

typedef struct dx_neighbour {
    const char *id;
    const char *tell;
} dx_neighbour;

typedef struct dx_example {
    const char *path; /* relative to the references folder */
    const char *source;
    int constructed;
} dx_example;

typedef struct dx_ref {
    const char *id;
    const char *title;
    const char *category;
    const char *kind;
    const char *summary; /* may be NULL */
    const char *file;    /* "nccl/nccl-ib-error.md", relative to the references folder */
    double prior;
    const char *const *frameworks;
    size_t nframeworks;
    const dx_signal *signals;
    size_t nsignals;
    const dx_sigcond *conds; /* [nsignals], the signals' conditions; NULL when none has one */
    const dx_cond *context;
    size_t ncontext;
    const dx_check *checks;
    size_t nchecks;
    const dx_variant *variants;
    size_t nvariants;
    const dx_neighbour *neighbours;
    size_t nneighbours;
    const char *const *sources;
    size_t nsources;
    const dx_example *examples;
    size_t nexamples;
    const char *const *fix; /* the numbered items under "## Fix" */
    size_t nfix;
    const char *body; /* the Markdown body */
    /* "culprit: other-rank" (1): the ranks printing these lines are victims; the culprit is
       another rank. "rank-zero" (2): victims too, and the cause itself is rank 0 working alone */
    int culprit_other;
} dx_ref;

/* ---- the built-in data (kb_data.c, generated) ---- */
typedef struct dx_builtin {
    const dx_ref *refs;
    size_t nrefs;
    const unsigned char *hsdb; /* Vectorscan database image over every signal, or NULL */
    size_t hsdb_len;
} dx_builtin;
DX_HIDDEN const dx_builtin *dx_builtin_get(void);

/* ---- loading references from Markdown (kb_load.c) ---- */
typedef struct dx_arena dx_arena;
DX_HIDDEN dx_arena *dx_arena_new(void);
DX_HIDDEN void dx_arena_free(dx_arena *a);
DX_HIDDEN void *dx_arena_alloc(dx_arena *a, size_t n);
DX_HIDDEN char *dx_arena_strndup(dx_arena *a, const char *s, size_t n);

/* A list of references loaded from a folder; refs are allocated in arena. */
typedef struct dx_reflist {
    dx_ref *refs;
    size_t n, cap;
    dx_arena *arena;
} dx_reflist;

/* Parses one reference file's text. relpath ("nccl/x.md") is used in messages and as ref->file.
 * Errors name "relpath:line: what". */
DX_HIDDEN int dx_kb_parse(dx_arena *a, const char *relpath, const char *text, size_t len,
                          dx_ref *out, ddx_error *err);
/* Loads every references/<category>/<id>.md under dir (the examples/ folder is skipped).
 * Each problem is appended to problems (one per line); returns DDX_EFORMAT if any. */
DX_HIDDEN int dx_kb_load_dir(const char *dir, dx_reflist *out, dx_buf *problems, ddx_error *err);
DX_HIDDEN void dx_reflist_fini(dx_reflist *l);

/* Checks every rule that does not need the engine (ids, roles, weights, both engines accept
 * each pattern, neighbours exist, sources, examples, body sections); appends one line per
 * problem. dir, when given, is where example paths are checked. only_user limits it to the
 * references loaded from a folder. */
DX_HIDDEN int dx_kb_lint(const ddx_kb *kb, const char *dir, int only_user, dx_buf *problems);

DX_HIDDEN const char *dx_role_name(int role);
DX_HIDDEN const char *dx_op_name(int op);

/* The optional last body section: where the examples come from and, for constructed ones, what
 * was searched for real logs. */
#define DX_EXAMPLES_SECTION "## About the examples"
/* The text of the body section whose heading line is exactly heading (without the heading, up
 * to the next "## " line or the end), or NULL when the body has no such section; *head, when
 * head is given, is where its heading line starts. */
DX_HIDDEN const char *dx_ref_section(const dx_ref *r, const char *heading, size_t *len,
                                     const char **head);
/* How many of the reference's examples are constructed. */
DX_HIDDEN size_t dx_ref_nconstructed(const dx_ref *r);

/* ---- the opened knowledge base (kb.c) ---- */
struct dx_matcher;
struct ddx_kb {
    const dx_ref **refs; /* built-in then user references (a user id replaces a built-in) */
    size_t nrefs;
    dx_reflist user; /* owns the user references */
    /* every signal: the references' in order, then fact and job extractors */
    const dx_signal **sigs;
    size_t nsig;
    uint32_t *sig_ref; /* [nsig] reference index, or DX_SIG_FACT / DX_SIG_JOB */
    uint32_t *sig_idx; /* [nsig] signal index within its reference, or extractor index */
    struct dx_matcher *m;
    const char *dir; /* folder the references came from when not built in (examples) */
};

#define DX_SIG_FACT UINT32_MAX      /* sig_ref of a fact extractor (facts.c) */
#define DX_SIG_JOB (UINT32_MAX - 1) /* sig_ref of a job extractor (job.c) */
#define DX_SIG_IS_REF(x) ((x) < DX_SIG_JOB)

/* Fills kb->refs with the built-in references (when with_builtin) and kb->user's, a user
 * reference replacing a built-in one with the same id. */
DX_HIDDEN int dx_kb_merge(ddx_kb *kb, int with_builtin, ddx_error *err);

/* Builds an opened knowledge base over refs (borrowed; kb->user may own them). */
DX_HIDDEN int dx_kb_build(ddx_kb *kb, const unsigned char *hsdb, size_t hsdb_len, ddx_error *err);

#endif
