/* scan.h -- reading a log's chunks on every core: the work on a chunk that needs nothing of the
 * report (its logical lines, Vectorscan's candidates and their PCRE2 confirmation, each line's
 * rank), and the pipeline that spreads chunks over threads and hands the results back, in the
 * order they were read, to the one thread that applies them to the report.
 *
 * A dx_piece is one chunk of one member, or the end of a member. Its scan (dx_piece_scan) is a
 * pure function of its text and the knowledge base: any thread may run it, with its own dx_scan.
 * Applying a piece (the caller's apply function: events, facts, the job model) happens on the
 * thread that submits, strictly in submission order, so the report is byte for byte the same
 * with one thread or many.
 *
 * Memory: with one thread a chunk is scanned and applied while the reader still holds it (no
 * copy); with more, each piece in flight owns a copy, and at most DX_PIPE_MAX pieces are in
 * flight, whatever the size of the input.
 */
#ifndef DX_SCAN_H
#define DX_SCAN_H

#include "attrib.h"
#include "input.h"
#include "kb.h"
#include "match.h"
#include "norm.h"

#define DX_PIPE_MAX 16 /* pieces in flight */

/* A confirmed candidate: signal sig on logical line `line`, its captures replayable with
 * dx_scan_replay (subject: the line, or its body when on_body). */
typedef struct dx_hitrec {
    uint32_t line;
    uint32_t sig;
    uint32_t ov; /* its capture offsets: the piece's ovs[ov .. ov + 2 * npairs) */
    uint16_t npairs;
    uint8_t on_body;
} dx_hitrec;

/* A line with candidates, attributed (the others are attributed only when needed). */
typedef struct dx_cline {
    uint32_t line;
    size_t body_end; /* dx_norm_body_end of its body */
    dx_attr a;
} dx_cline;

enum { DX_PIECE_CHUNK = 0, DX_PIECE_END };

typedef struct dx_piece {
    int kind;
    void *member; /* the caller's record of the member it belongs to */
    /* the chunk as read: the reader's (one thread) or an owned copy */
    const char *raw;
    size_t rawlen;
    char *copy;
    size_t copycap;
    uint64_t first_line, nlines;
    uint64_t bytes; /* the member's bytes read once this piece was */
    uint64_t trunc[DX_CHUNK_MAX / DX_LINE_MAX];
    size_t ntrunc;
    /* the end of a member: how reading it ended */
    int end_rc;
    ddx_error end_err;
    /* what the scan found */
    int rc; /* of the scan itself */
    ddx_error err;
    dx_norm norm;
    int logical;      /* the lines are norm's logical lines (norm.first gives their numbers) */
    const char *data; /* the lines scanned: raw, or norm's */
    size_t dlen;
    size_t nl;     /* lines */
    uint32_t *off; /* [nl + 1] where each line starts; off[nl] is dlen + 1 */
    int32_t *rank; /* [nl] the rank its prefixes name (dx_attrib_rank), -1 none */
    size_t capnl;
    dx_cline *cl; /* lines with candidates, in order */
    size_t ncl, capcl;
    dx_hitrec *hits; /* confirmed candidates, by line then signal */
    size_t nhits, caphits;
    uint32_t *ovs;
    size_t novs, capovs;
} dx_piece;

/* Scans piece p (kind DX_PIECE_CHUNK) with s: sets everything under "what the scan found". */
DX_HIDDEN void dx_piece_scan(dx_piece *p, dx_scan *s);
/* Frees what a piece holds (its line index, candidates, normalised text; not the copy of its
 * chunk) and zeroes it. */
DX_HIDDEN void dx_piece_fini(dx_piece *p);
/* Line i of p: its text and length (without the '\n'). */
DX_HIDDEN const char *dx_piece_line(const dx_piece *p, size_t i, size_t *len);
/* The physical line number line i of p starts on. */
DX_HIDDEN uint64_t dx_piece_lineno(const dx_piece *p, size_t i);

/* ---- the pipeline ---------------------------------------------------------------------------- */

typedef struct dx_pipe dx_pipe;
/* Applies one scanned piece; a nonzero return stops the pipeline with that status. */
typedef int (*dx_apply_fn)(void *ud, dx_piece *p);

/* threads: how many threads scan (the caller's among them); 1 scans in the caller's thread as
 * each chunk is submitted. More threads are started only once a second chunk arrives. */
DX_HIDDEN int dx_pipe_new(dx_pipe **out, dx_matcher *m, int threads, dx_apply_fn apply, void *ud,
                          ddx_error *err);
/* Submits chunk c of member (the member record is borrowed until its end is applied), bytes the
 * member's bytes read so far. Returns DDX_OK, or the first nonzero status of an apply or of
 * memory. */
DX_HIDDEN int dx_pipe_chunk(dx_pipe *pp, void *member, const dx_chunk *c, uint64_t bytes);
/* Submits the end of member, with how its reading ended (rc, err) and its bytes. */
DX_HIDDEN int dx_pipe_end(dx_pipe *pp, void *member, int rc, const ddx_error *err, uint64_t bytes);
/* Applies everything submitted; returns the first nonzero status. */
DX_HIDDEN int dx_pipe_drain(dx_pipe *pp);
/* Stops the threads (after dx_pipe_drain, or to give up) and frees the pipeline. */
DX_HIDDEN void dx_pipe_free(dx_pipe *pp);

/* The number of threads to use when the caller asks for none in particular: the processors this
 * process may run on, at most 8. */
DX_HIDDEN int dx_pipe_default_threads(void);

#endif
