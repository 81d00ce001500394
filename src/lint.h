/* lint.h -- validating a folder of references (parse, rules, examples rank first). */
#ifndef DX_LINT_H
#define DX_LINT_H

#include "kb.h"

typedef struct dx_lint_stats {
    size_t refs;
    size_t examples;
} dx_lint_stats;

/* Loads dir, checks every rule and every example. With with_builtin, the built-in references
 * take part (a reference in dir replaces a built-in one with the same id). Every problem is
 * appended to problems, one per line. On success and when out is not NULL, *out receives the
 * opened knowledge base (the caller closes it). */
DX_HIDDEN int dx_lint_dir(const char *dir, int with_builtin, ddx_kb **out, dx_buf *problems,
                          dx_lint_stats *stats, ddx_error *err);

/* Checks that Vectorscan proposes every line PCRE2 matches, for every signal of kb, over the
 * files under path (label names them in problems). Returns 0 when it does, 1 when a line was
 * missed (each listed in problems), -1 when path could not be read. */
DX_HIDDEN int dx_prefilter_check(const ddx_kb *kb, const char *path, const char *label,
                                 dx_buf *problems);

/* Whether cmd parses as a POSIX shell command (what a check's `command:` must be). Returns 0
 * when it does; -1 when not, with why (when not NULL) saying where it fails. */
DX_HIDDEN int dx_lint_shell(const char *cmd, char *why, size_t cap);

/* The documentation site a link points to (a host such as docs.jax.dev or *.readthedocs.io, a
 * documentation path such as pytorch.org/docs/, a docs/ folder of a repository), written into
 * buf; NULL when the link is no documentation page. */
DX_HIDDEN const char *dx_lint_doc_site(const char *url, char *buf, size_t cap);

/* Checks the release ranges written in signals' sources ("path [framework first..last]",
 * docs/reference-format.md); appends one line per malformed range. Returns 1 on a problem. */
DX_HIDDEN int dx_lint_source_ranges(const dx_ref *r, dx_buf *problems);

#endif
