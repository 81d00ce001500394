/* match.h -- the two-stage pattern engine: Vectorscan finds candidate lines for every signal of
 * every reference in one pass over a chunk; PCRE2 (JIT, with match limits) confirms each
 * candidate line and extracts named captures.
 *
 * A dx_matcher is built once (from a serialised database when the built-in knowledge base is
 * used alone, else compiled) and is read-only afterwards; each thread scans with its own
 * dx_scan, which owns the Vectorscan scratch and the PCRE2 match data.
 */
#ifndef DX_MATCH_H
#define DX_MATCH_H

#include "kb.h"

typedef struct dx_matcher dx_matcher;
typedef struct dx_scan dx_scan;

/* Builds the matcher over sigs[0..nsig) (borrowed: they must outlive it); signal number s is
 * sigs[s]; pre (NULL: none) gives signal s's own prefilter in pre[s] (NULL: none). When hsdb is
 * given it must be an image made by dx_matcher_image over the same signals and prefilters,
 * 64-byte aligned, that outlives the matcher (the built-in one lives in the binary); it is used
 * in place. If it cannot be used, the database is compiled instead. */
DX_HIDDEN int dx_matcher_new(dx_matcher **out, const dx_signal *const *sigs,
                             const dx_prefilter_fn *pre, size_t nsig, const unsigned char *hsdb,
                             size_t hsdb_len, ddx_error *err);
DX_HIDDEN void dx_matcher_free(dx_matcher *m);
DX_HIDDEN size_t dx_matcher_count(const dx_matcher *m);
/* The compiled database laid out for a 64-byte aligned address (its offsets are relative), to
 * embed in an array declared with that alignment. */
DX_HIDDEN int dx_matcher_image(const dx_matcher *m, char **bytes, size_t *len, ddx_error *err);
/* Compile for any CPU of this architecture rather than for this one (the generator sets it). */
DX_HIDDEN void dx_matcher_portable(int on);

/* The fast pattern of a signal (match.c): the literals, one a line (" (any case)" after a
 * caseless one), appended to out, of which every match holds one and that the database scans
 * for instead of the pattern. Returns how many, 0 when the pattern goes into the database itself
 * (no literal it must hold is strong enough), or DDX_ENOMEM. */
DX_HIDDEN int dx_pattern_literals(const char *pattern, int caseless, dx_buf *out);
/* Checks one pattern in both engines; fills msg on failure. */
/* The pattern as Vectorscan compiles it (negated classes also exclude the newline); free it. */
DX_HIDDEN char *dx_hs_pattern(const char *pattern);
DX_HIDDEN int dx_pattern_check(const char *pattern, int caseless, char *msg, size_t cap);

typedef struct dx_cand {
    size_t line; /* offset of the start of the candidate line in the chunk */
    size_t end;  /* offset of its '\n' (or the chunk's end) */
    uint32_t sig;
} dx_cand;

DX_HIDDEN int dx_scan_new(dx_scan **out, dx_matcher *m, ddx_error *err);
DX_HIDDEN void dx_scan_free(dx_scan *s);
/* Finds candidate (line, signal) pairs in a chunk of whole lines, sorted by line then signal,
 * one per pair. The array is owned by s and valid until the next call. */
DX_HIDDEN int dx_scan_chunk(dx_scan *s, const char *data, size_t len, const dx_cand **cands,
                            size_t *ncands, ddx_error *err);
/* The same, given the chunk's lines: line i starts at lines[i] (lines[0..nlines], lines[nlines]
 * past the last line's newline, or len + 1 when it has none), so that the lines are not looked
 * for again. */
DX_HIDDEN int dx_scan_chunk_lines(dx_scan *s, const char *data, size_t len, const uint32_t *lines,
                                  size_t nlines, const dx_cand **cands, size_t *ncands,
                                  ddx_error *err);
/* The shape cache (match.c): a line whose shape (its text, every digit read as '0') the scan saw
 * gets that shape's candidates without being scanned, in dx_scan_chunk_lines. ON by default;
 * OFF scans every line; WRONG is for the test that shows a cache reusing wrong decisions fails
 * it (its shape reads every letter alike too). */
enum { DX_SHAPES_ON = 0, DX_SHAPES_OFF, DX_SHAPES_WRONG };
/* An expression made digit-blind (no digit's value can change what it matches; each match of
 * the original is one of it), a new string or NULL when out of memory; *sure 0 when it holds a
 * construct the reading does not know (left as it is). */
DX_HIDDEN char *dx_blind_expression(const char *expr, int *sure);
/* Checks that every expression the matcher's database is compiled from is digit-blind (left
 * as it is by dx_blind_expression, and sure): how many there are, or -1 with the first that is
 * not in msg. */
DX_HIDDEN int dx_matcher_exprs_blind(const dx_matcher *m, char *msg, size_t cap);
DX_HIDDEN void dx_scan_shapes(dx_scan *s, int mode);
/* The lines that got their shape's candidates, and the lines looked up, since s was made. */
DX_HIDDEN void dx_scan_shape_stats(const dx_scan *s, uint64_t *reused, uint64_t *lines);
/* Confirms signal sig on one line with PCRE2. Returns 1 on a match, 0 otherwise. */
DX_HIDDEN int dx_scan_confirm(dx_scan *s, uint32_t sig, const char *line, size_t len);
/* The same with PCRE2 even where the signal has a hand-written matcher (match.c), and whether it
 * has one: for the test that compares the two. */
DX_HIDDEN int dx_scan_confirm_pcre2(dx_scan *s, uint32_t sig, const char *line, size_t len);
DX_HIDDEN int dx_scan_hand_written(const dx_scan *s, uint32_t sig);
/* Confirms signal sig on a line whose body (the message after the launcher's and logger's
 * prefixes, without the suffixes a cluster framework adds) is line[body..body+body_len): an
 * anchored pattern (^ or $) that fails on the whole line is tried on the body, where ^ and $
 * mean the start and end of the message. Returns 1 on a match, 0 otherwise. */
DX_HIDDEN int dx_scan_confirm_line(dx_scan *s, uint32_t sig, const char *line, size_t len,
                                   size_t body, size_t body_len);
/* The most capture groups (and the whole match) a confirmed match keeps. */
#define DX_SCAN_PAIRS 32
/* After a confirmed match: where its subject starts (the line or the line's body), and its
 * capture offsets from there (start, end of each group, UINT32_MAX when unset); returns how many
 * pairs. Valid until the next confirmation. To hand a match to another scan (another thread). */
DX_HIDDEN size_t dx_scan_last(const dx_scan *s, const char **base, const uint32_t **ov);
/* Makes a match confirmed elsewhere (dx_scan_last's, copied) the last confirmed match of s, so
 * dx_scan_capture reads it; ov is borrowed until the next confirmation or replay. */
DX_HIDDEN void dx_scan_replay(dx_scan *s, uint32_t sig, const char *base, const uint32_t *ov,
                              size_t npairs);
/* After a confirmed match: the named capture name, if it matched. */
DX_HIDDEN int dx_scan_capture(dx_scan *s, const char *name, dx_str *out);
/* After a confirmed match: all named captures, one at a time (i from 0); 0 when done. */
DX_HIDDEN int dx_scan_capture_at(dx_scan *s, size_t i, const char **name, dx_str *value);

#endif
