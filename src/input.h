/* input.h -- reading what a job left behind: files, directories, stdin, buffers, compressed
 * files and archives, as a stream of line-aligned chunks.
 *
 * dx_input_walk visits every member of an input in a stable order (a plain file is one member;
 * a directory is walked recursively, sorted by name; a .gz/.zst/.xz file is one member whose
 * bytes are decompressed on the fly; each regular file inside a .tar/.tar.gz/.tar.zst/.tar.xz/
 * .zip is one member, read in memory, never extracted to disk). Compression and archive formats
 * are detected from the content (magic bytes), not from the name.
 *
 * For each member the callback gets a dx_reader. Memory is bounded: the reader keeps one buffer
 * of at most DX_CHUNK_MAX + DX_LINE_MAX bytes, whatever the size of the input.
 */
#ifndef DX_INPUT_H
#define DX_INPUT_H

#include "dx.h"

#define DX_CHUNK_MAX (1u << 20) /* target size of one chunk of lines */
#define DX_LINE_MAX (64u << 10) /* longer lines are cut to this and flagged */

typedef enum dx_kind {
    DX_KIND_UNKNOWN = 0,
    DX_KIND_LOG,    /* console output, per-rank logs */
    DX_KIND_ENV,    /* collect_env, pip list/freeze, conda list, ds_report, nvidia-smi, env dumps */
    DX_KIND_CONFIG, /* DeepSpeed JSON, accelerate/FSDP YAML, other JSON/YAML configs */
    DX_KIND_FRDUMP, /* PyTorch flight-recorder dump (pickle or JSON) */
    DX_KIND_RAS,    /* NCCL's RAS report in its JSON form (ncclras -f json) */
    DX_KIND_BINARY, /* anything else that is not text: skipped with a note */
    DX_KIND_REPORT, /* a report ddx wrote (JSON, text, HTML): never evidence, skipped with a note */
    DX_KIND_UNREADABLE /* (never classified) an input that could not be read at all */
} dx_kind;

/* "log", "env", "config", "flight-recorder", "binary", "ddx-report", "unreadable" */
DX_HIDDEN const char *dx_kind_name(dx_kind k);

typedef struct dx_member {
    const char *path;     /* display path: "job/logs.tar.gz:node1/rank3.log"; borrowed */
    const char *name;     /* the member's own relative path inside its container; borrowed */
    const char *codec;    /* "gzip", "zstd", "xz", "bzip2", "lz4" or NULL for plain bytes */
    uint64_t size_hint;   /* size in bytes when known, else 0 */
    const char *encoding; /* "UTF-16LE", ... when the text was converted to UTF-8, else NULL */
} dx_member;

typedef struct dx_reader dx_reader;

/* One chunk of whole lines, cleaned for matching:
 * - every line ends in '\n' (one is added after the last line of a member when missing);
 * - "\r\n" line ends become "\n"; a trailing '\r' is removed;
 * - ANSI escape sequences (ESC [ ... final byte, ESC ] ... BEL) are removed;
 * - a line longer than DX_LINE_MAX keeps its first DX_LINE_MAX bytes and its line number is
 *   listed in trunc_lines (the rest of it is skipped, never buffered);
 * - other bytes (NUL, invalid UTF-8) are passed through unchanged.
 * data is mutable and owned by the reader: valid until the next dx_reader_next call. */
typedef struct dx_chunk {
    char *data;
    size_t len;
    uint64_t first_line; /* 1-based number of the first line in data */
    uint64_t nlines;     /* number of lines in data */
    const uint64_t *trunc_lines;
    size_t ntrunc;
} dx_chunk;

/* Returns 1 with a chunk, 0 at the end, or a negative DDX_E* with err naming the member and
 * what to do (e.g. "logs/rank3.log.gz: truncated gzip stream at byte 1048576: the file is
 * incomplete; re-copy it or pass the uncompressed log"). */
DX_HIDDEN int dx_reader_next(dx_reader *r, dx_chunk *out, ddx_error *err);

/* The first bytes of the member (up to 64 KiB, raw, before cleaning), for classification.
 * Valid until the first dx_reader_next or dx_reader_read_all. */
DX_HIDDEN void dx_reader_peek(dx_reader *r, const char **p, size_t *n);

/* Reads the whole member raw (no cleaning) into a new buffer the caller frees with dx_free.
 * Fails with DDX_EFORMAT when it is larger than max bytes. For configs and flight-recorder dumps. */
DX_HIDDEN int dx_reader_read_all(dx_reader *r, size_t max, char **out, size_t *len, ddx_error *err);

/* Bytes consumed from the member so far (after decompression). */
DX_HIDDEN uint64_t dx_reader_bytes(const dx_reader *r);

/* Called once per member. Return 0 to go on, a negative DDX_E* to stop the walk with that code.
 * The reader is only valid during the call. */
typedef int (*dx_member_fn)(void *ud, const dx_member *m, dx_reader *r);

/* What a warning of the walk is about. */
typedef enum dx_warn_kind {
    DX_WARN_NOTE = 0,   /* something skipped on purpose (too deep) */
    DX_WARN_DAMAGED,    /* an archive damaged after some members: the rest is lost */
    DX_WARN_UNREADABLE, /* a file or member that could not be read at all */
} dx_warn_kind;

/* Called when one member (inside a directory or archive) cannot be read, or an archive is
 * damaged; the walk goes on. path is the file or member the warning is about (its display
 * path), msg names it and says what to do. */
typedef void (*dx_warn_fn)(void *ud, dx_warn_kind kind, const char *path, const char *msg);

/* Walks path ("-" is standard input). Fails with DDX_EIO (err naming the path) when path cannot
 * be opened at all; problems with single members inside it go to warn and the walk goes on. */
DX_HIDDEN int dx_input_walk(const char *path, dx_member_fn fn, dx_warn_fn warn, void *ud,
                            ddx_error *err);
/* The same over a caller's buffer (borrowed for the duration of the call). */
DX_HIDDEN int dx_input_walk_buffer(const char *name, const void *data, size_t len, dx_member_fn fn,
                                   dx_warn_fn warn, void *ud, ddx_error *err);

/* Classifies a member from its name and first bytes. */
DX_HIDDEN dx_kind dx_input_classify(const char *name, const char *head, size_t n);

#endif
