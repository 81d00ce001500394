/* ddx.h -- the public C API of ddx, a differential diagnosis of failed distributed training jobs.
 *
 * The library reads what a failed job left behind (logs, environment dumps, configs, flight-
 * recorder dumps), matches every line against a knowledge base of known failures and returns a
 * report: findings ranked best first, each traced to the lines and facts that moved it.
 *
 * Rules of the API:
 * - Every function that can fail returns DDX_OK or a negative DDX_E* code and fills the optional
 *   ddx_error with a message naming the input and what to do.
 * - The library never prints and never exits.
 * - Handles are opaque. A ddx_kb is read-only once opened and may be shared by threads; a
 *   ddx_job and the report it produces belong to one thread at a time.
 * - Strings returned by ddx_*_get* functions are borrowed: valid until the owning handle is freed.
 */
#ifndef DDX_H
#define DDX_H

#include <stddef.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(DDX_BUILDING) && defined(__GNUC__)
#define DDX_API __attribute__((visibility("default")))
#else
#define DDX_API
#endif

#define DDX_VERSION "0.1.0"
#define DDX_SCHEMA 1

enum ddx_status {
    DDX_OK = 0,
    DDX_EINVAL = -1,   /* bad argument or bad usage */
    DDX_ENOMEM = -2,   /* out of memory */
    DDX_EIO = -3,      /* an input could not be read */
    DDX_EFORMAT = -4,  /* an input or reference is malformed */
    DDX_ENOTFOUND = -5 /* no such reference, file or fact */
};

typedef struct ddx_error {
    int code;          /* one of enum ddx_status */
    char message[512]; /* "references/nccl/x.md:12: unknown key 'severty'" */
} ddx_error;

typedef struct ddx_kb ddx_kb;         /* the compiled knowledge base */
typedef struct ddx_job ddx_job;       /* the inputs of one job being diagnosed */
typedef struct ddx_report ddx_report; /* the result of ddx_job_diagnose */

/* ---- knowledge base ---------------------------------------------------------------------- */

/* Opens the built-in knowledge base, plus the references in user_dir when it is not NULL. */
DDX_API int ddx_kb_open(ddx_kb **out, const char *user_dir, ddx_error *err);
DDX_API void ddx_kb_close(ddx_kb *kb);
/* Loads only the references under dir (no built-in ones): what `ddx lint DIR` checks. */
DDX_API int ddx_kb_open_dir(ddx_kb **out, const char *dir, ddx_error *err);
enum ddx_kb_flags {
    DDX_KB_NO_BUILTIN = 1 << 0, /* only the references of the folders */
    DDX_KB_OVERRIDE = 1 << 1    /* a folder's reference may replace a built-in one of its id */
};
/* The built-in references and those of dirs[0..n) (each <category>/<id>.md, each passing
 * lint's checks): an id already built in is refused unless DDX_KB_OVERRIDE, an id in two
 * folders always; err names the file as given. */
DDX_API int ddx_kb_open_dirs(ddx_kb **out, const char *const *dirs, size_t n, int flags,
                             ddx_error *err);

DDX_API size_t ddx_kb_count(const ddx_kb *kb);
/* The JSON of reference i (or of the reference named id): borrowed JSON text, NULL if none. */
DDX_API const char *ddx_kb_ref_id(const ddx_kb *kb, size_t i);
DDX_API int ddx_kb_find(const ddx_kb *kb, const char *id, size_t *index);
DDX_API int ddx_kb_write_ref_json(const ddx_kb *kb, size_t i, int full, FILE *out, ddx_error *err);
/* The text of reference i for a terminal; verbose adds its examples and the notes on where they
 * come from (the body's "## About the examples"). */
DDX_API int ddx_kb_write_ref_text(const ddx_kb *kb, size_t i, int color, int verbose, FILE *out,
                                  ddx_error *err);

/* ---- jobs and diagnosis ------------------------------------------------------------------ */

DDX_API int ddx_job_new(ddx_job **out, const ddx_kb *kb, ddx_error *err);
DDX_API void ddx_job_free(ddx_job *job);
/* Adds a file, a directory (recursively), an archive, a compressed file, or "-" for stdin.
 * Nothing is read until ddx_job_diagnose. Fails with DDX_EIO when path does not exist. */
DDX_API int ddx_job_add_path(ddx_job *job, const char *path, ddx_error *err);
/* Adds an in-memory input; the buffer is copied. */
DDX_API int ddx_job_add_buffer(ddx_job *job, const char *name, const void *data, size_t len,
                               ddx_error *err);
/* Called with each warning about the inputs as it happens during ddx_job_diagnose (the report
 * keeps them too); msg is borrowed for the call and may hold any bytes an input's name holds:
 * clean it before showing it on a terminal. At most 100 are passed on, then one that counts
 * the rest. */
typedef void (*ddx_warning_fn)(void *ud, const char *msg);
DDX_API void ddx_job_on_warning(ddx_job *job, ddx_warning_fn fn, void *ud);
/* Called after each chunk read during ddx_job_diagnose: the input being read (borrowed) and the
 * bytes of text read so far, in all. */
typedef void (*ddx_progress_fn)(void *ud, const char *path, unsigned long long bytes);
DDX_API void ddx_job_on_progress(ddx_job *job, ddx_progress_fn fn, void *ud);
/* Stops reading once max bytes of text were read, in all (0: no limit, the default); a warning
 * says where it stopped. */
DDX_API void ddx_job_set_max_bytes(ddx_job *job, unsigned long long max);

/* How many threads read the job's inputs (n >= 1); 0, the default, is one per processor this
 * process may use, at most 8. The report is the same whatever the number. */
DDX_API void ddx_job_set_threads(ddx_job *job, int n);

enum ddx_diagnose_flags {
    DDX_DIAG_ALL = 1 << 0 /* keep low-confidence candidates in the report */
};
DDX_API int ddx_job_diagnose(ddx_job *job, int flags, ddx_report **out, ddx_error *err);

/* ---- the report -------------------------------------------------------------------------- */

DDX_API void ddx_report_free(ddx_report *rep);
DDX_API size_t ddx_report_count(const ddx_report *rep); /* diagnoses kept */
/* 1 when the inputs show a failed job that no reference explains (the report then names the
 * root error and the closest references instead of a finding), else 0. */
DDX_API int ddx_report_unrecognised(const ddx_report *rep);
DDX_API const char *ddx_report_id(const ddx_report *rep, size_t i);
DDX_API double ddx_report_confidence(const ddx_report *rep, size_t i);
DDX_API const char *ddx_report_level(const ddx_report *rep,
                                     size_t i);             /* confirmed|likely|possible */
DDX_API int ddx_report_culprit_rank(const ddx_report *rep); /* -1 when unknown */
/* Every rank the deciding evidence names (two faulty nodes: both), the culprit rank first; *ranks
 * is borrowed. 0 when there is no culprit. */
DDX_API size_t ddx_report_culprit_ranks(const ddx_report *rep, const int **ranks);
/* Warnings about inputs that could not be read (the scan went on); borrowed strings. */
DDX_API size_t ddx_report_warning_count(const ddx_report *rep);
DDX_API const char *ddx_report_warning(const ddx_report *rep, size_t i);
/* Inputs whose text was read (logs, environment dumps, configs, flight-recorder dumps): 0 means
 * the report rests on nothing. Files and members skipped as binary or as ddx's own reports are
 * not counted. */
DDX_API size_t ddx_report_inputs_read(const ddx_report *rep);
/* Inputs that could not be read at all (each has a warning): the report is partial. */
DDX_API size_t ddx_report_inputs_unreadable(const ddx_report *rep);

DDX_API int ddx_report_write_json(const ddx_report *rep, FILE *out, ddx_error *err);
enum ddx_text_flags {
    DDX_TEXT_COLOR = 1 << 0,
    DDX_TEXT_VERBOSE = 1 << 1,    /* every candidate, every evidence line, facts, timeline */
    DDX_TEXT_NO_WARNINGS = 1 << 2 /* the warnings were shown as they came: only count them */
};
DDX_API int ddx_report_write_text(const ddx_report *rep, int flags, FILE *out, ddx_error *err);
enum ddx_html_flags {
    /* the page sits in the catalogue site (ddx serve): reference ids link to ref/<id>.html and
       the header links the catalogue and the upload page */
    DDX_HTML_SITE = 1 << 0
};
/* The report as one self-contained HTML page (inline style and SVG drawings, no script, no
 * request): the finding, the culprit rank, a per-rank timeline and series plots, evidence with
 * the lines around it, checks, fix, neighbours, sources, ranks, facts and inputs. Every byte
 * taken from an input is escaped. A few hundred KB at most, whatever the size of the job. */
DDX_API int ddx_report_write_html(const ddx_report *rep, int flags, FILE *out, ddx_error *err);

#ifdef __cplusplus
}
#endif
#endif
