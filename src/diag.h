/* diag.h -- the report of a diagnosis, shared by diag.c (which builds it) and report.c (which
 * writes it as JSON or text).
 *
 * The report owns every event it keeps (copied text), the facts, and the per-input summary.
 * Findings point into the knowledge base, which must outlive the report.
 */
#ifndef DX_DIAG_H
#define DX_DIAG_H

#include "attrib.h"
#include "facts.h"
#include "frdump.h"
#include "input.h"
#include "job.h"
#include "kb.h"
#include "unrec.h"

#define DX_HITS_KEEP 4                        /* events kept per signal: the earliest in time */
#define DX_WARN_KEEP 100                      /* warnings kept (and passed on) per report */
#define DX_SEQ_LINE ((UINT64_C(1) << 40) - 1) /* the line number part of an event's seq */

typedef struct dx_event {
    uint32_t input; /* index into the report's inputs */
    uint64_t line;
    int rank;   /* -1 unknown */
    int blamed; /* the rank the line itself blames (a "culprit" capture), -1 none */
    int has_time;
    dx_time time;
    int64_t tkey; /* sortable time (valid when has_time) */
    uint64_t seq; /* order of reading: input then line */
    char *text;   /* the line, cleaned for output (valid UTF-8, at most 400 bytes) */
    char *caps;   /* "name=value, ..." of the named captures, or NULL */
    /* up to DX_CONTEXT_LINES lines before and after it, as read in the same chunk: each
       "NUMBER\tTEXT" with TEXT cleaned like text, joined by '\n'; NULL when none (noise lines
       keep none) */
    char *before, *after;
} dx_event;

#define DX_CONTEXT_LINES 3

typedef struct dx_sighits {
    uint64_t count;
    uint64_t last_seq;         /* the seq of the latest line counted */
    dx_event ev[DX_HITS_KEEP]; /* earliest first */
    size_t nev;
    int ranks[32]; /* distinct ranks that printed it (first 32) */
    size_t nranks;
} dx_sighits;

typedef struct dx_input_info {
    char *path;
    int kind; /* dx_kind */
    uint64_t bytes;
    uint64_t lines;
    int *ranks; /* distinct ranks seen, sorted */
    size_t nranks, capranks;
} dx_input_info;

typedef struct dx_contrib {
    double value;
    char *why;
} dx_contrib;

typedef struct dx_evid {
    const dx_event *ev; /* owned by the report's hits */
    const dx_signal *sig;
    double weight;
} dx_evid;

enum { DX_CHECK_CONTRADICTED = 0, DX_CHECK_CONFIRMED = 1, DX_CHECK_NOT_VISIBLE = -1 };

typedef struct dx_checkres {
    const dx_check *chk;
    int status;
    char *because;
} dx_checkres;

typedef struct dx_finding {
    const dx_ref *ref;
    const dx_variant *variant;
    double logit;
    double confidence;
    int has_root;
    int fact_root;         /* a context condition with root: true holds (no root line needed) */
    const dx_event *first; /* where it started: earliest root (else any) event */
    const dx_event *first_ranked; /* the earliest root event whose rank is known */
    dx_contrib *contribs;
    size_t ncontribs, capcontribs;
    dx_evid *evid; /* sorted by time */
    size_t nevid, capevid;
    int *ranks;
    size_t nranks, capranks;
    dx_checkres *checks;
    size_t nchecks;
    double raw;   /* the softmax share before calibration: what keeping a finding decides on */
    int earliest; /* it reads the earliest root failure of the job */
    const char *capped; /* why its confidence stays below likely (calibration), or NULL */
    int ctx_pos;        /* context conditions that hold for it (its own framework or setting) */
    int unexplained;    /* a rank raised an exception of its own that its lines do not include */
} dx_finding;

typedef struct dx_tl {
    const dx_event *ev;
    const dx_ref *ref;
    const dx_signal *sig;
} dx_tl;

struct ddx_report {
    const ddx_kb *kb;
    dx_input_info *inputs;
    size_t ninputs, capinputs;
    dx_finding *f; /* every candidate, best first */
    size_t nf;
    size_t nkept;     /* the first nkept are reported */
    size_t nreported; /* how many would be reported without DDX_DIAG_ALL */
    dx_unrec *unrec;  /* the failure no reference explains (when nreported is 0), or NULL */
    int culprit;
    int culprit_ranks[DX_VOTE_RANKS]; /* the ranks the deciding vote names, culprit first */
    size_t nculprit_ranks;
    char *culprit_why;
    char *culprit_decided; /* the deciding signal's own line (where the culprit stands) */
    dx_facts facts;
    dx_sighits **hits; /* [kb->nsig], each allocated at its signal's first hit */
    dx_tl *timeline;
    size_t ntimeline;
    char **warnings; /* the first DX_WARN_KEEP warnings; the rest are counted */
    size_t nwarnings, capwarnings;
    size_t warnings_dropped; /* warnings over DX_WARN_KEEP, summed up by the last one kept */
    size_t nunreadable;      /* inputs that could not be read at all */
    size_t nread;            /* inputs whose text was read (log, env, config, flight recorder) */
    size_t nreports;         /* ddx's own reports found among the inputs and skipped */
    size_t fr_refused;       /* flight-recorder dumps that could not be used */
    int wide_ranks;          /* lines whose rank is beyond the model were seen (warned once) */
    uint64_t noise_lines;    /* lines recognised as known-harmless */
    int all;                 /* DDX_DIAG_ALL was given */
    dx_job_model job;        /* ranks, timeouts, the launcher's root-cause entry */
    char **culprit_signals;  /* one line per independent signal about the culprit */
    size_t nculprit_signals;
    dx_frdump *fr; /* flight-recorder dumps read from the inputs */
    size_t nfr, capfr;
    dx_fr_finding frf[32]; /* their comparison across ranks, the culprits' reasons first */
    size_t nfrf;
    dx_fr_verdict frv;     /* what the dumps say as a whole */
    struct dx_span *spans; /* [nspans] by rank: where each rank's lines start and end (jobview.c) */
    size_t nspans;
};

DX_HIDDEN const char *dx_level_name(double confidence);
/* The answer to a hang that every report form leads with (report.c): set when the top finding is
 * a hang and the culprit is known; where: where the culprit stands (the flight recorder's reading
 * when it names the culprit, prefixed with the rank, else the deciding signal's line); read: what
 * the flight-recorder dumps were ("8 flight-recorder dumps, 7 compared, 1 empty"), "" none. */
typedef struct dx_hang_view {
    int known;
    int from_fr; /* where is the flight recorder's reading */
    char where[360];
    char read[200];
} dx_hang_view;
DX_HIDDEN void dx_report_hang(const ddx_report *rep, dx_hang_view *v);
/* "N <noun>s, M compared, ..." for the flight-recorder dumps; "" when there were none. */
DX_HIDDEN void dx_report_fr_count(const ddx_report *rep, const char *noun, char *buf, size_t cap);
/* Whether the dumps support "every rank reached the same collectives": at least two compared,
 * none missing, empty, unreadable or without a rank, and no finding. */
DX_HIDDEN int dx_report_fr_all_same(const ddx_report *rep);
/* How many lines the (noise) reference with index ref matched, and the earliest of them. */
DX_HIDDEN size_t dx_report_noise(const ddx_report *rep, size_t ref, const dx_event **first);
/* Is name a fact diag.c derives itself (flight-recorder comparison, configuration sanity)? */
DX_HIDDEN int dx_diag_fact_known(const char *name);
/* Copies text into a new string that is valid UTF-8 without control characters, cut to max
 * bytes at a character boundary (with "..." when cut). */
DX_HIDDEN char *dx_clean_text(const char *p, size_t n, size_t max);
/* Writes the NUL-terminated s to out as dx_clean_text would keep it (no control character, C1
 * code or direction override: nothing an input holds can drive a terminal), cut to max bytes
 * with "...". For every name and text from an input shown on a terminal. */
DX_HIDDEN void dx_clean_write(FILE *out, const char *s, size_t max);
/* A copy of s with invalid UTF-8 replaced by U+FFFD (control characters kept): JSON strings. */
DX_HIDDEN char *dx_utf8_dup(const char *s);

#endif
