/* sigcond.h -- conditions on where a signal's line stands in the logs: the reference format's
 * sequence and counting primitives (docs/reference-format.md, "Conditions on a signal").
 *
 * A signal may count only on the last line of its input with no failure anywhere (at_end), only
 * after a line of another signal of its reference (after), only when no line of another came
 * before it (not_after), only when no line of another follows (not_followed_by), only when one value of a capture is read twice (repeats), only when some
 * value 0..N-1 of a capture is read nowhere (missing, out_of), or only for the one rank whose
 * capture differs from every other rank's (differs: that rank is blamed). A marker is a signal
 * that only stands as a landmark for the others.
 *
 * diag.c gives every confirmed hit of a watched signal (one with a condition, a marker, or the
 * target of another's after/not_after/not_followed_by) to dx_sigcond_hit as a built event; the module owns
 * it from then on and hands each event that passes its conditions back through the commit
 * callback, at once (after, not_after), at the end of its input (not_followed_by, at_end's last line) or
 * when every input is read (at_end's "no failure", repeats, missing, differs). Inputs are read
 * one after the other.
 */
#ifndef DX_SIGCOND_H
#define DX_SIGCOND_H

#include "diag.h"

struct dx_scan;
typedef struct dx_sigcond_state dx_sigcond_state;

/* Hands an event that counts to its owner (which takes the event's text and captures). */
typedef int (*dx_sigcond_commit)(void *ud, uint32_t sig, dx_event *ev);

/* The state for one diagnosis over kb's signals; *out NULL (and DDX_OK) when no signal of kb has
 * a condition or is a marker. */
DX_HIDDEN int dx_sigcond_new(dx_sigcond_state **out, const ddx_kb *kb);
DX_HIDDEN void dx_sigcond_free(dx_sigcond_state *c);

/* Is signal sig one the module must see (conditional, a marker, or a target of one)? */
DX_HIDDEN int dx_sigcond_watches(const dx_sigcond_state *c, uint32_t sig);

/* Every log line of the input being read (before its hits), by its message body: a line with a
 * letter or a digit ends the chance of an earlier line of its input to be its last (blank lines
 * and rules of dashes or '=' do not). */
DX_HIDDEN void dx_sigcond_line(dx_sigcond_state *c, uint32_t input, uint64_t seq, const char *body,
                               size_t len);

/* Whether a line of an at_end signal waits to be the last of its input: then every later line
 * must be given to dx_sigcond_line (a scan may skip the lines no pattern hits otherwise). */
DX_HIDDEN int dx_sigcond_wants_lines(const dx_sigcond_state *c);

/* A confirmed hit of watched signal sig on the line whose captures scan holds: ev (text and
 * captures built, rank and blame set) is taken in every case. */
DX_HIDDEN int dx_sigcond_hit(dx_sigcond_state *c, uint32_t sig, dx_event *ev, struct dx_scan *scan,
                             dx_sigcond_commit commit, void *ud);

/* The input being read has ended. */
DX_HIDDEN int dx_sigcond_input_end(dx_sigcond_state *c, dx_sigcond_commit commit, void *ud);

/* Every input is read: at_end's lines count when failed(ud) says no reference read a failure
 * line; then the counting conditions are decided over the whole job. */
DX_HIDDEN int dx_sigcond_finish(dx_sigcond_state *c, int (*failed)(void *ud),
                                dx_sigcond_commit commit, void *ud);

#endif
