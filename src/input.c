/* input.c -- reading what a job left behind as a stream of clean, line-aligned chunks.
 *
 * Three layers, bottom up:
 *   1. byte sources (struct src): a file descriptor, a caller's buffer, or the current entry of
 *      a libarchive reader. Each source first loads its "head" (up to HEAD_MAX bytes) so the
 *      format can be sniffed from magic bytes, then replays it, so nothing needs to seek and
 *      standard input works like a file.
 *   2. codecs (struct codec): gzip (zlib; concatenated members are one stream), zstd, xz,
 *      bzip2 and lz4, decompressed on the fly. A compressed stream is itself a source
 *      (SRC_CODEC) that hands out every byte decoded before any damage, then the error. Archives
 *      (tar, zip) are left to libarchive, fed through archive_read_open callbacks (a tar.gz is
 *      a tar read from a SRC_CODEC, so libarchive sees every member up to the point of damage,
 *      as GNU tar does) and read block by block with archive_read_data_block (a member whose
 *      check fails at its end, a zip's bad CRC, keeps its lines and gets a warning); nothing
 *      is extracted to disk. Whether a stream is a tar or zip is libarchive's call, made on the
 *      head alone (is_archive). A member can itself be compressed or an archive, up to
 *      MAX_NEST levels in all.
 *   3. the reader (struct dx_reader): one buffer of BUF_CAP = DX_CHUNK_MAX + DX_LINE_MAX bytes,
 *      shared by every member of a walk. Raw bytes are read into it and cleaned in place: the
 *      cleaned text is never longer than the raw text, so the write position w never passes
 *      the read position r. A chunk closes at the first line end at or past CHUNK_CLOSE, so a
 *      chunk is at most DX_CHUNK_MAX bytes and at least DX_LINE_MAX bytes stay free for reading
 *      whatever the line lengths. An over-long line keeps DX_LINE_MAX bytes; the rest streams
 *      past and is dropped, never buffered. Besides that buffer a walk holds a HEAD_MAX head
 *      per open source, a BLOCK_SIZE block for compressed input, and the decoders' own state
 *      (the zstd window, at most 2^ZSTD_WINDOW_LOG_MAX; the xz dictionary, at most
 *      XZ_MEMLIMIT; bzip2 and lz4 a few MiB). Memory is bounded by these constants and
 *      MAX_NEST, never by the size of an input.
 *   4. text that is not UTF-8: a run of NUL bytes where a file starts (logrotate's
 *      copytruncate, a crash that left a hole) is skipped before the head is sniffed, NULs
 *      inside lines are dropped as they are cleaned, and UTF-16/UTF-32 text (a byte order mark,
 *      or the zero bytes of ASCII in either byte order) is turned into UTF-8 with iconv between
 *      the source and the cleaning.
 *
 * The hot path (no ESC in the buffer, no '\r' before the '\n') is one memchr per line; ESC
 * bytes are found with one memchr per buffer, so cleaning costs nothing when there is nothing
 * to clean. Errors of a member (truncated or corrupt compression, damaged archive data) are
 * held until the lines decoded before them have been handed out, then returned by
 * dx_reader_next with a message naming the member.
 *
 * The walk (dx_input_walk) visits directories sorted by name (strcmp), skipping hidden names,
 * symlinked directories (loops) and anything that is not a regular file (symlinks to files are
 * read), and archive members in stored order. Members that cannot be read go to the warn
 * callback and the walk goes on; only a top-level path that cannot be opened fails it.
 */
#include "dx.h"

#include "input.h"

#include <archive.h>
#include <archive_entry.h>
#include <bzlib.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <iconv.h>
#include <lz4frame.h>
#include <lzma.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>

#define HEAD_MAX (64u << 10)                     /* sniffed and peeked bytes */
#define BLOCK_SIZE (256u << 10)                  /* compressed input / archive blocks */
#define BUF_CAP (DX_CHUNK_MAX + DX_LINE_MAX)     /* the one line buffer of a walk */
#define CHUNK_CLOSE (DX_CHUNK_MAX - DX_LINE_MAX) /* a chunk ends at the first line end past this */
#define TRUNC_MAX (DX_CHUNK_MAX / DX_LINE_MAX)   /* truncated lines one chunk can hold */
#define MAX_NEST 4 /* archives and compressed streams inside each other */
#define MAX_DIR_DEPTH 64
#define XZ_MEMLIMIT (80ull << 20) /* xz -9 needs 65 MiB; refuse absurd dictionaries */
#define ZSTD_WINDOW_LOG_MAX 27    /* 128 MiB, zstd's own default limit */
#define WIDE_BUF (64u << 10)      /* UTF-16/32 bytes waiting to be converted */
#define ESC 0x1b

_Static_assert(DX_LINE_MAX < CHUNK_CLOSE, "a chunk must hold at least one whole line");
/* Each truncated line takes DX_LINE_MAX + 1 bytes of a chunk and a chunk closes past
 * CHUNK_CLOSE, so at most CHUNK_CLOSE / (DX_LINE_MAX + 1) + 1 of them fit in one chunk. */
_Static_assert(CHUNK_CLOSE / (DX_LINE_MAX + 1) + 1 <= TRUNC_MAX, "trunc array too small");

/* ============================================================================================
 * Byte sources
 * ========================================================================================== */

enum src_kind { SRC_FD, SRC_MEM, SRC_ARCHIVE, SRC_CODEC };

struct codec;
typedef struct src {
    enum src_kind kind;
    const char *path;         /* display path, for messages; borrowed */
    int fd;                   /* SRC_FD */
    bool seekable;            /* SRC_FD on a regular file opened by us, or SRC_MEM */
    const unsigned char *mem; /* SRC_MEM: the caller's bytes */
    size_t mem_len, mem_pos;
    struct archive *ar;        /* SRC_ARCHIVE: reads the current entry of ar */
    const struct src *parent;  /* SRC_ARCHIVE: the source ar reads */
    const unsigned char *ab;   /* SRC_ARCHIVE: the rest of the current data block */
    size_t ab_len;             /* its length */
    bool ab_eof;               /* the entry's data ended */
    int ab_warn;               /* libarchive warned at the end of the entry (a bad CRC): */
    char ab_why[256];          /* returned as an error once its bytes are read */
    struct codec *cod;         /* SRC_CODEC: decompresses cod->in */
    const unsigned char *head; /* the first bytes; for SRC_MEM a view of mem */
    unsigned char *head_own;   /* storage of head for SRC_FD / SRC_ARCHIVE / SRC_CODEC */
    size_t head_len, head_pos; /* head_pos < head_len: bytes still to replay */
    unsigned char *block;      /* scratch for src_block on SRC_FD / SRC_ARCHIVE / SRC_CODEC */
    uint64_t pos;              /* bytes delivered so far (the logical offset) */
    bool failed;               /* a read failed (reported through the caller's err) */
    int fail_rc;               /* its code: DDX_ENOMEM ends the walk even through libarchive */
    char why[sizeof(((ddx_error *)0)->message)]; /* that failure, for the archive reading it */
} src;

static void src_init_fd(src *s, const char *path, int fd, bool seekable)
{
    memset(s, 0, sizeof *s);
    s->kind = SRC_FD;
    s->path = path;
    s->fd = fd;
    s->seekable = seekable;
}

static void src_init_mem(src *s, const char *path, const void *data, size_t len)
{
    memset(s, 0, sizeof *s);
    s->kind = SRC_MEM;
    s->path = path;
    s->fd = -1;
    s->mem = data;
    s->mem_len = data ? len : 0;
    s->seekable = true;
}

static void src_init_archive(src *s, const char *path, struct archive *ar, const src *parent)
{
    memset(s, 0, sizeof *s);
    s->kind = SRC_ARCHIVE;
    s->path = path;
    s->fd = -1;
    s->ar = ar;
    s->parent = parent;
}

static void src_init_codec(src *s, const char *path, struct codec *c)
{
    memset(s, 0, sizeof *s);
    s->kind = SRC_CODEC;
    s->path = path;
    s->fd = -1;
    s->cod = c;
}

static void src_fini(src *s)
{
    dx_free(s->head_own);
    dx_free(s->block);
    s->head_own = s->block = NULL;
}

static int src_fail(src *s, ddx_error *err, int code, const char *fmt, ...) DX_PRINTF(4, 5);
static int src_fail(src *s, ddx_error *err, int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(s->why, sizeof s->why, fmt, ap);
    va_end(ap);
    s->failed = true;
    s->fail_rc = code;
    return dx_err(err, code, "%s", s->why);
}

static int codec_read(struct codec *c, unsigned char *dst, size_t n, size_t *got, ddx_error *err);

/* The next data block of the current archive entry. libarchive's own warning at the end of an
 * entry (a zip's bad CRC) comes after the entry's bytes: it is kept and returned as an error
 * once they are read, so the lines decoded before it are not lost. */
static int ab_next(src *s, ddx_error *err)
{
    while (s->ab_len == 0 && !s->ab_eof) {
        const void *b;
        size_t n;
        la_int64_t off;
        int r = archive_read_data_block(s->ar, &b, &n, &off);
        if (r == ARCHIVE_EOF) {
            s->ab_eof = true;
            break;
        }
        const char *why = archive_error_string(s->ar);
        if (r == ARCHIVE_WARN) {
            s->ab_warn = 1;
            snprintf(s->ab_why, sizeof s->ab_why, "%s", why ? why : "a warning");
            for (size_t k = strlen(s->ab_why); k && strchr("\r\n ", s->ab_why[k - 1]); k--)
                s->ab_why[k - 1] = '\0'; /* libarchive keeps a line end in some messages */
        } else if (r < ARCHIVE_WARN) {
            if (s->parent && s->parent->fail_rc == DDX_ENOMEM)
                return src_fail(s, err, DDX_ENOMEM, "%s: out of memory", s->path);
            if (s->parent && s->parent->failed) /* the archive itself is cut or damaged */
                return src_fail(s, err, DDX_EFORMAT,
                                "%s: cut short by damage to the archive (%s); the lines before "
                                "the damage were read",
                                s->path, s->parent->why);
            return src_fail(s, err, DDX_EFORMAT,
                            "%s: damaged archive data (%s); the lines before the damage were "
                            "read: re-copy the archive, or extract it with tar/unzip to see "
                            "what is left",
                            s->path, why ? why : "unknown error");
        }
        s->ab = b;
        s->ab_len = b ? n : 0;
        if (r == ARCHIVE_WARN && !s->ab_len)
            break;
    }
    if (s->ab_len == 0 && s->ab_warn) { /* (again on every read: the head may have hidden it) */
        s->ab_eof = true;
        return src_fail(s, err, DDX_EFORMAT,
                        "%s: %s; its lines were read all the same, but the member may be "
                        "damaged: re-copy the archive to be sure",
                        s->path, s->ab_why);
    }
    return DDX_OK;
}

/* Reads from the underlying fd/archive/codec, bypassing the head replay. */
static int src_read_raw(src *s, void *dst, size_t n, size_t *got, ddx_error *err)
{
    *got = 0;
    if (s->kind == SRC_FD) {
        for (;;) {
            ssize_t k = read(s->fd, dst, n);
            if (k >= 0) {
                *got = (size_t)k;
                return DDX_OK;
            }
            if (errno != EINTR)
                break;
        }
        return src_fail(s, err, DDX_EIO,
                        "%s: read failed: %s; check the disk or copy the file "
                        "somewhere readable and retry",
                        s->path, strerror(errno));
    }
    if (s->kind == SRC_CODEC) {
        int rc = codec_read(s->cod, dst, n, got, err);
        if (rc < 0) {
            s->failed = true;
            s->fail_rc = rc;
            snprintf(s->why, sizeof s->why, "%s", err ? err->message : "read failed");
        }
        return rc;
    }
    /* SRC_ARCHIVE */
    int rc = ab_next(s, err);
    if (rc < 0)
        return rc;
    size_t k = s->ab_len < n ? s->ab_len : n;
    if (k)
        memcpy(dst, s->ab, k);
    s->ab += k;
    s->ab_len -= k;
    *got = k;
    return DDX_OK;
}

/* Copies up to n bytes into dst: the head replay first, then the rest. *got == 0 at the end. */
static int src_read(src *s, void *dst, size_t n, size_t *got, ddx_error *err)
{
    *got = 0;
    if (n == 0)
        return DDX_OK;
    if (s->kind == SRC_MEM) {
        size_t k = s->mem_len - s->mem_pos;
        if (k > n)
            k = n;
        if (k)
            memcpy(dst, s->mem + s->mem_pos, k);
        s->mem_pos += k;
        s->pos += k;
        *got = k;
        return DDX_OK;
    }
    if (s->head_pos < s->head_len) {
        size_t k = s->head_len - s->head_pos;
        if (k > n)
            k = n;
        memcpy(dst, s->head + s->head_pos, k);
        s->head_pos += k;
        s->pos += k;
        *got = k;
        return DDX_OK;
    }
    int rc = src_read_raw(s, dst, n, got, err);
    s->pos += *got;
    return rc;
}

/* Returns the next block of bytes without copying where possible; valid until the next call. */
static int src_block(src *s, const unsigned char **p, size_t *got, ddx_error *err)
{
    *p = NULL;
    *got = 0;
    if (s->kind == SRC_MEM) {
        *p = s->mem + s->mem_pos;
        *got = s->mem_len - s->mem_pos;
        s->mem_pos = s->mem_len;
        s->pos += *got;
        return DDX_OK;
    }
    if (s->head_pos < s->head_len) {
        *p = s->head + s->head_pos;
        *got = s->head_len - s->head_pos;
        s->head_pos = s->head_len;
        s->pos += *got;
        return DDX_OK;
    }
    if (s->kind == SRC_ARCHIVE) {
        int rc = ab_next(s, err);
        if (rc < 0)
            return rc;
        *p = s->ab;
        *got = s->ab_len;
        s->ab_len = 0;
        s->pos += *got;
        return DDX_OK;
    }
    if (!s->block && !(s->block = dx_malloc(BLOCK_SIZE)))
        return src_fail(s, err, DDX_ENOMEM, "%s: out of memory", s->path);
    int rc = src_read_raw(s, s->block, BLOCK_SIZE, got, err);
    *p = s->block;
    s->pos += *got;
    return rc;
}

/* Loads the first HEAD_MAX bytes (fewer at the end of the source) for sniffing and replay. A
 * read error keeps the bytes before it: the error comes again when the rest is read (a file,
 * a codec and an archive entry all repeat their error), so the member is handed out with it. */
static int src_load_head(src *s, ddx_error *err)
{
    if (s->kind == SRC_MEM) {
        s->head = s->mem;
        s->head_len = s->mem_len < HEAD_MAX ? s->mem_len : HEAD_MAX;
        s->head_pos = s->head_len; /* reads start again at mem_pos 0: nothing to replay */
        return DDX_OK;
    }
    if (!(s->head_own = dx_malloc(HEAD_MAX)))
        return dx_err(err, DDX_ENOMEM, "%s: out of memory", s->path);
    size_t n = 0;
    while (n < HEAD_MAX) {
        size_t got;
        int rc = src_read_raw(s, s->head_own + n, HEAD_MAX - n, &got, err);
        if (rc == DDX_ENOMEM)
            return rc;
        if (rc < 0 || got == 0)
            break;
        n += got;
    }
    s->head = s->head_own;
    s->head_len = n;
    s->head_pos = 0;
    return DDX_OK;
}

/* ============================================================================================
 * Codecs: single compressed streams
 * ========================================================================================== */

enum codec_kind { CODEC_NONE, CODEC_GZIP, CODEC_ZSTD, CODEC_XZ, CODEC_BZIP2, CODEC_LZ4 };

static const char *const codec_names[] = {NULL, "gzip", "zstd", "xz", "bzip2", "lz4"};

typedef struct codec {
    enum codec_kind kind;
    src *in;
    const unsigned char *next_in; /* compressed bytes not yet consumed */
    size_t avail_in;
    bool in_eof;       /* the source has no more compressed bytes */
    bool in_frame;     /* inside a gzip member / zstd or lz4 frame / xz or bzip2 stream */
    bool done;         /* the stream ended cleanly */
    uint64_t consumed; /* compressed bytes consumed, for messages */
    z_stream z;
    ZSTD_DStream *zs;
    lzma_stream lz;
    bz_stream bz;
    LZ4F_dctx *l4;
    bool live; /* the library state was initialised */
} codec;

static bool bzip2_magic(const unsigned char *p, size_t n)
{
    /* "BZh1".."BZh9", then a block's or the end-of-stream's magic */
    return n >= 10 && memcmp(p, "BZh", 3) == 0 && p[3] >= '1' && p[3] <= '9' &&
           (memcmp(p + 4, "\x31\x41\x59\x26\x53\x59", 6) == 0 ||
            memcmp(p + 4, "\x17\x72\x45\x38\x50\x90", 6) == 0);
}

static enum codec_kind sniff_codec(const unsigned char *p, size_t n)
{
    if (n >= 2 && p[0] == 0x1f && p[1] == 0x8b)
        return CODEC_GZIP;
    if (n >= 4 && memcmp(p, "\x28\xb5\x2f\xfd", 4) == 0)
        return CODEC_ZSTD;
    if (n >= 6 && memcmp(p, "\xfd\x37\x7a\x58\x5a\x00", 6) == 0)
        return CODEC_XZ;
    if (bzip2_magic(p, n))
        return CODEC_BZIP2;
    if (n >= 4 && memcmp(p, "\x04\x22\x4d\x18", 4) == 0)
        return CODEC_LZ4;
    return CODEC_NONE;
}

/* zlib, liblzma and libbz2 allocate through dx_malloc, so allocation-failure tests reach them
 * too. */
static voidpf z_alloc(voidpf opaque, uInt items, uInt size)
{
    (void)opaque;
    return dx_calloc(items, size);
}
static void z_free(voidpf opaque, voidpf p)
{
    (void)opaque;
    dx_free(p);
}
static void *lz_alloc(void *opaque, size_t nmemb, size_t size)
{
    (void)opaque;
    return dx_calloc(nmemb, size);
}
static void lz_free(void *opaque, void *p)
{
    (void)opaque;
    dx_free(p);
}
static const lzma_allocator lz_allocator = {lz_alloc, lz_free, NULL};
static void *bz_alloc(void *opaque, int items, int size)
{
    (void)opaque;
    return items > 0 && size > 0 ? dx_calloc((size_t)items, (size_t)size) : NULL;
}
static void bz_free(void *opaque, void *p)
{
    (void)opaque;
    dx_free(p);
}

static int codec_init(codec *c, enum codec_kind kind, src *in, ddx_error *err)
{
    memset(c, 0, sizeof *c);
    c->kind = kind;
    c->in = in;
    switch (kind) {
    case CODEC_GZIP:
        c->z.zalloc = z_alloc;
        c->z.zfree = z_free;
        if (inflateInit2(&c->z, 15 + 16) != Z_OK) /* 16: gzip wrapper only */
            return dx_err(err, DDX_ENOMEM, "%s: out of memory", in->path);
        break;
    case CODEC_ZSTD:
        if (!(c->zs = ZSTD_createDStream()))
            return dx_err(err, DDX_ENOMEM, "%s: out of memory", in->path);
        ZSTD_initDStream(c->zs);
        ZSTD_DCtx_setParameter(c->zs, ZSTD_d_windowLogMax, ZSTD_WINDOW_LOG_MAX);
        break;
    case CODEC_XZ: {
        lzma_stream init = LZMA_STREAM_INIT;
        c->lz = init;
        c->lz.allocator = &lz_allocator;
        if (lzma_stream_decoder(&c->lz, XZ_MEMLIMIT, LZMA_CONCATENATED) != LZMA_OK)
            return dx_err(err, DDX_ENOMEM, "%s: out of memory", in->path);
        break;
    }
    case CODEC_BZIP2:
        c->bz.bzalloc = bz_alloc;
        c->bz.bzfree = bz_free;
        if (BZ2_bzDecompressInit(&c->bz, 0, 0) != BZ_OK)
            return dx_err(err, DDX_ENOMEM, "%s: out of memory", in->path);
        break;
    case CODEC_LZ4:
        if (LZ4F_isError(LZ4F_createDecompressionContext(&c->l4, LZ4F_VERSION)))
            return dx_err(err, DDX_ENOMEM, "%s: out of memory", in->path);
        break;
    case CODEC_NONE:
        return DDX_OK;
    }
    c->live = true;
    return DDX_OK;
}

static void codec_fini(codec *c)
{
    if (!c->live)
        return;
    switch (c->kind) {
    case CODEC_GZIP:
        inflateEnd(&c->z);
        break;
    case CODEC_ZSTD:
        ZSTD_freeDStream(c->zs);
        break;
    case CODEC_XZ:
        lzma_end(&c->lz);
        break;
    case CODEC_BZIP2:
        BZ2_bzDecompressEnd(&c->bz);
        break;
    case CODEC_LZ4:
        LZ4F_freeDecompressionContext(c->l4);
        break;
    case CODEC_NONE:
        break;
    }
    c->live = false;
}

static int codec_truncated(codec *c, ddx_error *err)
{
    return dx_err(err, DDX_EFORMAT,
                  "%s: truncated %s stream at byte %llu: the file is "
                  "incomplete; re-copy it or pass the uncompressed log",
                  c->in->path, codec_names[c->kind], (unsigned long long)c->consumed);
}

static int codec_corrupt(codec *c, const char *why, ddx_error *err)
{
    return dx_err(err, DDX_EFORMAT,
                  "%s: corrupt %s data at byte %llu (%s): the file is "
                  "damaged; re-copy it or pass the uncompressed log",
                  c->in->path, codec_names[c->kind], (unsigned long long)c->consumed, why);
}

/* One decoder step from next_in into dst. Sets *out to the bytes produced; may end the frame
 * (in_frame = false) or the stream (done). */
static int codec_step(codec *c, unsigned char *dst, size_t n, size_t *out, ddx_error *err)
{
    *out = 0;
    switch (c->kind) {
    case CODEC_GZIP: {
        if (!c->in_frame) {
            /* Between gzip members: another member may follow (concatenated .gz files are
             * valid); anything else after a complete member is ignored, as gzip does. */
            if (c->avail_in == 0)
                return DDX_OK;
            if (c->next_in[0] != 0x1f) {
                c->done = true;
                return DDX_OK;
            }
            if (c->consumed > 0)
                inflateReset(&c->z);
            c->in_frame = true;
        }
        uInt in_n = c->avail_in > UINT_MAX ? UINT_MAX : (uInt)c->avail_in;
        uInt out_n = n > UINT_MAX ? UINT_MAX : (uInt)n;
        c->z.next_in = (Bytef *)(uintptr_t)c->next_in;
        c->z.avail_in = in_n;
        c->z.next_out = dst;
        c->z.avail_out = out_n;
        int zr = inflate(&c->z, Z_NO_FLUSH);
        size_t used = in_n - c->z.avail_in;
        c->next_in += used;
        c->avail_in -= used;
        c->consumed += used;
        *out = out_n - c->z.avail_out;
        if (zr == Z_STREAM_END)
            c->in_frame = false;
        else if (zr == Z_DATA_ERROR || zr == Z_NEED_DICT || zr == Z_STREAM_ERROR)
            return codec_corrupt(c, c->z.msg ? c->z.msg : "invalid data", err);
        else if (zr == Z_MEM_ERROR)
            return dx_err(err, DDX_ENOMEM, "%s: out of memory", c->in->path);
        return DDX_OK;
    }
    case CODEC_ZSTD: {
        ZSTD_inBuffer in = {c->next_in, c->avail_in, 0};
        ZSTD_outBuffer ob = {dst, n, 0};
        size_t zr = ZSTD_decompressStream(c->zs, &ob, &in);
        c->next_in += in.pos;
        c->avail_in -= in.pos;
        c->consumed += in.pos;
        *out = ob.pos;
        if (ZSTD_isError(zr))
            return codec_corrupt(c, ZSTD_getErrorName(zr), err);
        /* 0: a frame is complete and flushed; the next call starts the next frame, if any.
         * A call that moved nothing says nothing about frames. */
        if (in.pos || ob.pos)
            c->in_frame = zr != 0;
        return DDX_OK;
    }
    case CODEC_XZ: {
        c->lz.next_in = c->next_in;
        c->lz.avail_in = c->avail_in;
        c->lz.next_out = dst;
        c->lz.avail_out = n;
        lzma_ret lr = lzma_code(&c->lz, c->in_eof ? LZMA_FINISH : LZMA_RUN);
        size_t used = c->avail_in - c->lz.avail_in;
        c->next_in += used;
        c->avail_in -= used;
        c->consumed += used;
        *out = n - c->lz.avail_out;
        if (lr == LZMA_STREAM_END) {
            c->in_frame = false;
            c->done = true;
        } else if (lr == LZMA_BUF_ERROR) {
            if (c->in_eof && *out == 0)
                return codec_truncated(c, err);
        } else if (lr == LZMA_MEM_ERROR) {
            return dx_err(err, DDX_ENOMEM, "%s: out of memory", c->in->path);
        } else if (lr == LZMA_MEMLIMIT_ERROR) {
            return dx_err(err, DDX_EFORMAT,
                          "%s: the xz dictionary needs more than %llu MiB; "
                          "decompress it with xz first",
                          c->in->path, XZ_MEMLIMIT >> 20);
        } else if (lr != LZMA_OK) {
            return codec_corrupt(c, lr == LZMA_FORMAT_ERROR ? "not xz" : "invalid data", err);
        }
        return DDX_OK;
    }
    case CODEC_BZIP2: {
        if (!c->in_frame) {
            /* Between streams: pbzip2 writes several; anything else after one is ignored. */
            if (c->avail_in == 0)
                return DDX_OK;
            if (c->avail_in < 3 || memcmp(c->next_in, "BZh", 3) != 0) {
                c->done = true;
                return DDX_OK;
            }
            if (c->consumed > 0) {
                BZ2_bzDecompressEnd(&c->bz);
                c->live = false;
                if (BZ2_bzDecompressInit(&c->bz, 0, 0) != BZ_OK)
                    return dx_err(err, DDX_ENOMEM, "%s: out of memory", c->in->path);
                c->live = true;
            }
            c->in_frame = true;
        }
        unsigned in_n = c->avail_in > UINT_MAX ? UINT_MAX : (unsigned)c->avail_in;
        unsigned out_n = n > UINT_MAX ? UINT_MAX : (unsigned)n;
        c->bz.next_in = (char *)(uintptr_t)c->next_in;
        c->bz.avail_in = in_n;
        c->bz.next_out = (char *)dst;
        c->bz.avail_out = out_n;
        int br = BZ2_bzDecompress(&c->bz);
        size_t used = in_n - c->bz.avail_in;
        c->next_in += used;
        c->avail_in -= used;
        c->consumed += used;
        *out = out_n - c->bz.avail_out;
        if (br == BZ_STREAM_END)
            c->in_frame = false;
        else if (br == BZ_MEM_ERROR)
            return dx_err(err, DDX_ENOMEM, "%s: out of memory", c->in->path);
        else if (br != BZ_OK)
            return codec_corrupt(c, br == BZ_DATA_ERROR_MAGIC ? "not bzip2" : "invalid data", err);
        return DDX_OK;
    }
    case CODEC_LZ4: {
        if (!c->in_frame && c->avail_in >= 4 && memcmp(c->next_in, "\x04\x22\x4d\x18", 4) != 0 &&
            !((c->next_in[0] & 0xf0) == 0x50 && memcmp(c->next_in + 1, "\x2a\x4d\x18", 3) == 0)) {
            c->done = true; /* after a frame: neither a frame nor a skippable frame */
            return DDX_OK;
        }
        size_t in_n = c->avail_in, out_n = n;
        size_t hint = LZ4F_decompress(c->l4, dst, &out_n, c->next_in, &in_n, NULL);
        c->next_in += in_n;
        c->avail_in -= in_n;
        c->consumed += in_n;
        *out = out_n;
        if (LZ4F_isError(hint))
            return codec_corrupt(c, LZ4F_getErrorName(hint), err);
        if (in_n || out_n)
            c->in_frame = hint != 0;
        return DDX_OK;
    }
    case CODEC_NONE:
        break;
    }
    return DDX_OK;
}

/* Decompresses up to n bytes into dst; *got == 0 only at the clean end of the stream. */
static int codec_read(struct codec *c, unsigned char *dst, size_t n, size_t *got, ddx_error *err)
{
    *got = 0;
    if (c->kind == CODEC_XZ)
        c->in_frame = !c->done; /* an xz stream is one frame from start to end */
    while (!c->done) {
        if (c->avail_in == 0 && !c->in_eof) {
            int rc = src_block(c->in, &c->next_in, &c->avail_in, err);
            if (rc < 0)
                return rc;
            if (c->avail_in == 0)
                c->in_eof = true;
        }
        size_t in_before = c->avail_in, out = 0;
        int rc = codec_step(c, dst, n, &out, err);
        if (rc < 0)
            return rc;
        if (out > 0) {
            *got = out;
            return DDX_OK;
        }
        if (c->avail_in == 0 && c->in_eof && in_before == 0) {
            /* No input left and the decoder made no output: the end, clean or not. */
            if (c->in_frame)
                return codec_truncated(c, err);
            c->done = true;
        }
    }
    return DDX_OK;
}

/* ============================================================================================
 * The reader: cleaning and chunking
 * ========================================================================================== */

/* Escape-sequence state; a sequence never spans a '\n'. */
enum esc_state {
    E_NONE,
    E_ESC,    /* after ESC */
    E_CSI,    /* ESC [ parameters... final byte 0x40-0x7e */
    E_NF,     /* ESC intermediate(s) 0x20-0x2f ... final byte 0x30-0x7e, e.g. ESC ( B */
    E_STR,    /* ESC ] (OSC) or ESC P/X/^/_ : a string up to BEL or ESC \ */
    E_STR_ESC /* ESC inside such a string */
};

/* Text in UTF-16 or UTF-32, found by its byte order mark or by the zero bytes of ASCII. */
enum wide_kind { WIDE_NONE, WIDE_16LE, WIDE_16BE, WIDE_32LE, WIDE_32BE };
static const char *const wide_names[] = {NULL, "UTF-16LE", "UTF-16BE", "UTF-32LE", "UTF-32BE"};
static const unsigned wide_unit[] = {1, 2, 2, 4, 4};

struct dx_reader {
    const char *path; /* display path, for messages; borrowed */
    src *in;
    char *buf;         /* the walk's line buffer, BUF_CAP bytes; borrowed */
    size_t w;          /* end of the cleaned text */
    size_t r, len;     /* raw bytes not yet cleaned: buf[r..len) */
    size_t line_start; /* where the current (unfinished) line starts in the cleaned text */
    size_t esc_at;     /* first ESC at or after r, or len */
    size_t chunk_len;  /* length of the chunk handed out by the last call, 0 if none */
    size_t peek_len;
    enum esc_state esc;
    bool skip;      /* the current line is over DX_LINE_MAX: drop the rest of it */
    bool line_raw;  /* raw bytes of the current line were seen (for the last line) */
    bool eof;       /* the source is exhausted (or failed: see pend) */
    bool started;   /* dx_reader_next or dx_reader_read_all was called */
    uint64_t lines; /* lines finished in the member so far */
    uint64_t total; /* bytes taken from the source (after decompression) */
    uint64_t chunk_first;
    uint64_t trunc[TRUNC_MAX];
    size_t ntrunc;
    int pend; /* error to return once the bytes before it are delivered */
    ddx_error pend_err;
    uint64_t nul_skipped; /* NUL bytes skipped where the member starts */
    /* UTF-16/32 input: raw bytes wait in wbuf[wpos..wlen) to be converted into UTF-8 */
    enum wide_kind wide;
    iconv_t cd;
    unsigned char *wbuf;
    size_t wpos, wlen;
    bool wide_eof;
};

/* Appends U+FFFD (the replacement character) at dst if 3 bytes fit; returns bytes written. */
static size_t put_replacement(char *dst, size_t n)
{
    if (n < 3)
        return 0;
    memcpy(dst, "\xEF\xBF\xBD", 3);
    return 3;
}

/* Pulls up to n bytes of UTF-8 converted from the member's UTF-16/32 bytes into dst. A unit
 * iconv refuses (a lone surrogate) becomes U+FFFD; a unit cut by the end of the member too. */
static int wide_pull(dx_reader *rd, char *dst, size_t n, size_t *got)
{
    *got = 0;
    unsigned unit = wide_unit[rd->wide];
    for (;;) {
        size_t made = 0;
        while (rd->wpos < rd->wlen && made + 4 <= n) {
            char *ip = (char *)rd->wbuf + rd->wpos, *op = dst + made;
            size_t il = rd->wlen - rd->wpos, ol = n - made;
            size_t r = iconv(rd->cd, &ip, &il, &op, &ol);
            int e = errno;
            rd->wpos = rd->wlen - il;
            made = (size_t)(op - dst);
            if (r != (size_t)-1 || e == E2BIG)
                break;
            if (e == EINVAL && !rd->wide_eof)
                break; /* a unit cut by the end of wbuf: wait for the rest */
            /* an invalid unit, or a unit cut by the end of the member */
            size_t skip = rd->wlen - rd->wpos < unit ? rd->wlen - rd->wpos : unit;
            rd->wpos += skip;
            made += put_replacement(dst + made, n - made);
        }
        if (made) {
            *got = made;
            return DDX_OK;
        }
        if (rd->wide_eof && rd->wpos >= rd->wlen)
            return DDX_OK;
        /* refill: keep the unconverted rest at the front */
        if (rd->wpos) {
            memmove(rd->wbuf, rd->wbuf + rd->wpos, rd->wlen - rd->wpos);
            rd->wlen -= rd->wpos;
            rd->wpos = 0;
        }
        size_t g = 0;
        int rc = src_read(rd->in, rd->wbuf + rd->wlen, WIDE_BUF - rd->wlen, &g, &rd->pend_err);
        if (rc < 0)
            return rc;
        rd->wlen += g;
        if (g == 0)
            rd->wide_eof = true;
    }
}

/* Pulls up to n bytes of the member (decompressed, converted to UTF-8) into dst. */
static int reader_pull(dx_reader *rd, char *dst, size_t n, size_t *got)
{
    int rc;
    if (rd->wide != WIDE_NONE)
        rc = wide_pull(rd, dst, n, got);
    else
        rc = src_read(rd->in, dst, n, got, &rd->pend_err);
    if (rc < 0) {
        *got = 0;
        rd->pend = rc;
        rd->eof = true;
        return rc;
    }
    if (*got == 0)
        rd->eof = true;
    rd->total += *got;
    return DDX_OK;
}

/* Fills the buffer with the first HEAD_MAX bytes of the member (fewer at its end). NUL bytes
 * where the member starts are skipped (a hole logrotate's copytruncate or a crash left before
 * the text), four at a time so UTF-16/32 text keeps its alignment: they hold no line end, so
 * line numbers do not change, and the few left are dropped with the other NULs of a line. */
static void reader_prefill(dx_reader *rd)
{
    bool lead = true;
    while (!rd->eof && rd->len + 4 <= HEAD_MAX) { /* a UTF-8 character from UTF-16/32 fits */
        size_t got;
        if (reader_pull(rd, rd->buf + rd->len, HEAD_MAX - rd->len, &got) < 0)
            break;
        rd->len += got;
        if (lead) {
            size_t z = 0;
            while (z < rd->len && rd->buf[z] == '\0')
                z++;
            lead = z == rd->len;
            z &= ~(size_t)3;
            if (z) {
                memmove(rd->buf, rd->buf + z, rd->len - z);
                rd->len -= z;
                rd->nul_skipped += z;
            }
        }
    }
    rd->peek_len = rd->len < HEAD_MAX ? rd->len : HEAD_MAX;
}

/* UTF-16 or UTF-32 text: a byte order mark (its length in *bom), or, without one, ASCII's zero
 * bytes in one byte order on nine in ten units of the first 4 KiB (at least 16 units). */
static enum wide_kind sniff_wide(const unsigned char *p, size_t n, size_t *bom)
{
    *bom = 0;
    if (n >= 4 && !memcmp(p, "\xff\xfe\0\0", 4))
        return *bom = 4, WIDE_32LE;
    if (n >= 4 && !memcmp(p, "\0\0\xfe\xff", 4))
        return *bom = 4, WIDE_32BE;
    if (n >= 2 && !memcmp(p, "\xff\xfe", 2))
        return *bom = 2, WIDE_16LE;
    if (n >= 2 && !memcmp(p, "\xfe\xff", 2))
        return *bom = 2, WIDE_16BE;
    if (n > 4096)
        n = 4096;
    size_t u32 = n / 4, le32 = 0, be32 = 0;
    for (size_t i = 0; i + 4 <= n; i += 4) {
        le32 += p[i] && !p[i + 1] && !p[i + 2] && !p[i + 3];
        be32 += !p[i] && !p[i + 1] && !p[i + 2] && p[i + 3];
    }
    if (u32 >= 16 && le32 * 10 >= u32 * 9)
        return WIDE_32LE;
    if (u32 >= 16 && be32 * 10 >= u32 * 9)
        return WIDE_32BE;
    size_t u16 = n / 2, le16 = 0, be16 = 0;
    for (size_t i = 0; i + 2 <= n; i += 2) {
        le16 += p[i] && !p[i + 1];
        be16 += !p[i] && p[i + 1];
    }
    if (u16 >= 16 && le16 * 10 >= u16 * 9)
        return WIDE_16LE;
    if (u16 >= 16 && be16 * 10 >= u16 * 9)
        return WIDE_16BE;
    return WIDE_NONE;
}

/* When the prefilled head is UTF-16/32 text, turns the reader into a converting one: the raw
 * head moves to wbuf (less its byte order mark) and the head is filled again as UTF-8. */
static int reader_widen(dx_reader *rd, ddx_error *err)
{
    size_t bom;
    enum wide_kind w = sniff_wide((const unsigned char *)rd->buf, rd->len, &bom);
    if (w == WIDE_NONE)
        return DDX_OK;
    rd->cd = iconv_open("UTF-8", wide_names[w]);
    if (rd->cd == (iconv_t)-1)
        return DDX_OK; /* no converter: read as it is */
    if (!(rd->wbuf = dx_malloc(WIDE_BUF))) {
        iconv_close(rd->cd);
        return dx_err(err, DDX_ENOMEM, "%s: out of memory", rd->path);
    }
    /* the prefill holds at most HEAD_MAX <= WIDE_BUF bytes; an error the source gave while
       filling it stays pending, after the converted text */
    _Static_assert(HEAD_MAX <= WIDE_BUF, "the raw head must fit the conversion buffer");
    memcpy(rd->wbuf, rd->buf + bom, rd->len - bom);
    rd->wlen = rd->len - bom;
    rd->wpos = 0;
    rd->wide_eof = rd->eof;
    rd->wide = w;
    rd->len = 0;
    rd->eof = false;
    rd->total = 0;
    reader_prefill(rd);
    return DDX_OK;
}

/* Appends raw bytes buf[src..src+n) to the current line at w, cutting the line when it
 * grows past DX_LINE_MAX. One byte over the limit is kept provisionally: it may be a '\r'
 * that the line end removes. Returns the new w. */
static size_t line_append(dx_reader *rd, char *b, size_t w, size_t ls, size_t from, size_t n)
{
    if (rd->skip || n == 0)
        return w;
    size_t have = w - ls;
    if (have + n <= DX_LINE_MAX + 1) {
        if (w != from)
            memmove(b + w, b + from, n);
        return w + n;
    }
    size_t keep = have < DX_LINE_MAX ? DX_LINE_MAX - have : 0;
    if (keep)
        memmove(b + w, b + from, keep);
    rd->skip = true;
    return ls + DX_LINE_MAX;
}

/* Ends the current line at w (the cleaned text of the line is b[ls..w)): drops a trailing
 * '\r', applies the length limit, appends '\n'. Returns the new w. */
static size_t line_end(dx_reader *rd, char *b, size_t w, size_t ls)
{
    if (!rd->skip) {
        if (w > ls && b[w - 1] == '\r')
            w--;
        if (w - ls > DX_LINE_MAX) {
            w = ls + DX_LINE_MAX;
            rd->skip = true;
        }
    }
    rd->lines++;
    if (rd->skip) {
        if (rd->ntrunc < TRUNC_MAX) /* always true: see the _Static_assert on TRUNC_MAX */
            rd->trunc[rd->ntrunc++] = rd->lines;
        rd->skip = false;
    }
    b[w++] = '\n';
    rd->esc = E_NONE;
    rd->line_raw = false;
    return w;
}

static size_t find_byte(const char *b, char c, size_t from, size_t len)
{
    const char *e = from < len ? memchr(b + from, c, len - from) : NULL;
    return e ? (size_t)(e - b) : len;
}

/* The first ESC or NUL in b[from..len), or len. */
static size_t find_special(const char *b, size_t from, size_t len)
{
    if (from >= len)
        return len;
    const char *e = memchr(b + from, ESC, len - from);
    size_t stop = e ? (size_t)(e - b) : len;
    const char *z = memchr(b + from, '\0', stop - from);
    return z ? (size_t)(z - b) : stop;
}

/* The slow path: cleans raw b[r..end) (no '\n' inside) through the escape-sequence state
 * machine, appending the kept text at w; NUL bytes (padding, holes) are dropped. Runs without
 * ESC or NUL are moved in one piece. */
static size_t clean_segment(dx_reader *rd, char *b, size_t r, size_t end, size_t w, size_t ls)
{
    while (r < end && !rd->skip) {
        if (rd->esc == E_NONE) {
            size_t stop = find_special(b, r, end);
            w = line_append(rd, b, w, ls, r, stop - r);
            r = stop;
            if (r < end && b[r] == ESC) {
                rd->esc = E_ESC;
                r++;
            }
            while (r < end && b[r] == '\0')
                r++;
            continue;
        }
        unsigned char c = (unsigned char)b[r];
        switch (rd->esc) {
        case E_ESC:
            if (c == '[')
                rd->esc = E_CSI;
            else if (c == ']' || c == 'P' || c == 'X' || c == '^' || c == '_')
                rd->esc = E_STR;
            else if (c >= 0x20 && c <= 0x2f)
                rd->esc = E_NF;
            else if (c >= 0x30 && c <= 0x7e)
                rd->esc = E_NONE; /* two-byte sequence: ESC 7, ESC =, ESC M ... */
            else if (c != ESC) {
                rd->esc = E_NONE; /* a lone ESC is dropped; c is text */
                continue;
            }
            r++;
            break;
        case E_CSI:
        case E_NF: {
            unsigned char lo = rd->esc == E_CSI ? 0x40 : 0x30;
            if (c >= lo && c <= 0x7e)
                rd->esc = E_NONE;
            else if (c == ESC)
                rd->esc = E_ESC;
            else if (c < 0x20 || c > 0x7e) {
                rd->esc = E_NONE; /* malformed: the sequence ends, c is text */
                continue;
            }
            r++;
            break;
        }
        case E_STR:
            if (c == 0x07)
                rd->esc = E_NONE;
            else if (c == ESC)
                rd->esc = E_STR_ESC;
            r++;
            break;
        case E_STR_ESC:
            if (c == '\\') {
                rd->esc = E_NONE;
                r++;
            } else {
                rd->esc = E_ESC; /* the ESC starts a new sequence; look at c again */
            }
            break;
        case E_NONE:
            break;
        }
    }
    return w;
}

/* Cleans the raw bytes buf[r..len) into lines. Returns true when the chunk is full (a line
 * ended past CHUNK_CLOSE); the unprocessed raw bytes then stay at buf[r..len). */
static bool reader_scan(dx_reader *rd)
{
    char *b = rd->buf;
    size_t r = rd->r, len = rd->len, w = rd->w, ls = rd->line_start;
    /* the next ESC and the next NUL, each searched again only once passed */
    size_t esc_at = find_byte(b, ESC, r, len), nul_at = find_byte(b, '\0', r, len);
    bool full = false;

    while (r < len) {
        if (esc_at < r)
            esc_at = find_byte(b, ESC, r, len);
        if (nul_at < r)
            nul_at = find_byte(b, '\0', r, len);
        const char *nl = memchr(b + r, '\n', len - r);
        size_t end = nl ? (size_t)(nl - b) : len;
        if (rd->skip) {
            /* the rest of an over-long line: dropped unread */
        } else if (rd->esc == E_NONE && esc_at >= end && nul_at >= end) {
            /* the hot path: nothing to clean in this piece of line */
            size_t n = end - r;
            if (w - ls + n <= DX_LINE_MAX + 1) {
                if (w != r)
                    memmove(b + w, b + r, n);
                w += n;
            } else {
                w = line_append(rd, b, w, ls, r, n);
            }
        } else {
            w = clean_segment(rd, b, r, end, w, ls);
        }
        if (!nl) {
            if (end > r)
                rd->line_raw = true;
            r = len;
            break;
        }
        w = line_end(rd, b, w, ls);
        r = end + 1;
        ls = w;
        if (w >= CHUNK_CLOSE) {
            full = true;
            break;
        }
    }
    rd->r = r;
    rd->w = w;
    rd->line_start = ls;
    return full;
}

static int reader_chunk(dx_reader *rd, dx_chunk *out)
{
    out->data = rd->buf;
    out->len = rd->w;
    out->first_line = rd->chunk_first;
    out->nlines = rd->lines - (rd->chunk_first - 1);
    out->trunc_lines = rd->trunc;
    out->ntrunc = rd->ntrunc;
    rd->chunk_len = rd->w;
    return 1;
}

int dx_reader_next(dx_reader *r, dx_chunk *out, ddx_error *err)
{
    memset(out, 0, sizeof *out);
    if (r->chunk_len) {
        /* The previous chunk is released: move the raw bytes not yet cleaned to the front. */
        size_t rest = r->len - r->r;
        if (rest)
            memmove(r->buf, r->buf + r->r, rest);
        r->r = r->w = r->line_start = r->chunk_len = 0;
        r->len = rest;
    }
    r->started = true;
    r->chunk_first = r->lines + 1;
    r->ntrunc = 0;

    for (;;) {
        if (r->r == r->len) {
            if (r->eof)
                break;
            /* Everything read is cleaned: read more right after the cleaned text. At least
             * DX_LINE_MAX bytes are free here (see CHUNK_CLOSE). */
            r->r = r->len = r->w;
            size_t got;
            if (reader_pull(r, r->buf + r->len, BUF_CAP - r->len, &got) < 0)
                continue;
            r->len += got;
            continue;
        }
        if (reader_scan(r))
            return reader_chunk(r, out);
    }
    /* The end of the member: finish a last line without '\n'. */
    if (r->line_raw || r->skip || r->w > r->line_start) {
        r->w = line_end(r, r->buf, r->w, r->line_start);
        r->line_start = r->w;
    }
    if (r->w > 0)
        return reader_chunk(r, out);
    if (r->pend) {
        if (err)
            *err = r->pend_err;
        return r->pend;
    }
    return 0;
}

void dx_reader_peek(dx_reader *r, const char **p, size_t *n)
{
    if (r->started) {
        *p = "";
        *n = 0;
        return;
    }
    *p = r->buf;
    *n = r->peek_len;
}

int dx_reader_read_all(dx_reader *r, size_t max, char **out, size_t *len, ddx_error *err)
{
    *out = NULL;
    *len = 0;
    if (r->started)
        return dx_err(err, DDX_EINVAL, "%s: dx_reader_read_all after dx_reader_next", r->path);
    r->started = true;
    dx_buf all = {0};
    int rc = DDX_OK;
    for (;;) {
        size_t n = r->len - r->r;
        if (n > max - all.n) {
            rc = dx_err(err, DDX_EFORMAT,
                        "%s: larger than %zu bytes, the limit for this kind "
                        "of file; pass a smaller file or split it",
                        r->path, max);
            goto fail;
        }
        if (n && dx_buf_add(&all, r->buf + r->r, n) != DDX_OK) {
            rc = dx_err(err, DDX_ENOMEM, "%s: out of memory", r->path);
            goto fail;
        }
        r->r = r->len = 0;
        if (r->eof)
            break;
        size_t got;
        if (reader_pull(r, r->buf, BUF_CAP, &got) == DDX_OK)
            r->len = got;
    }
    if (r->pend) {
        if (err)
            *err = r->pend_err;
        rc = r->pend;
        goto fail;
    }
    if (!all.p && dx_buf_add(&all, "", 0) != DDX_OK) {
        rc = dx_err(err, DDX_ENOMEM, "%s: out of memory", r->path);
        goto fail;
    }
    *out = all.p;
    *len = all.n;
    return DDX_OK;
fail:
    dx_buf_fini(&all);
    return rc;
}

uint64_t dx_reader_bytes(const dx_reader *r) { return r->total - (r->len - r->r); }

/* ============================================================================================
 * Walking files, directories and archives
 * ========================================================================================== */

typedef struct walk {
    dx_member_fn fn;
    dx_warn_fn warn;
    void *ud;
    char *buf;    /* the line buffer, BUF_CAP bytes, shared by every reader of the walk */
    bool stopped; /* the callback asked to stop: its code goes back to the caller as is */
} walk;

static void warn_msg(walk *wk, dx_warn_kind kind, const char *path, const char *msg)
{
    if (wk->warn)
        wk->warn(wk->ud, kind, path, msg);
}

static void warnf(walk *wk, dx_warn_kind kind, const char *path, const char *fmt, ...)
    DX_PRINTF(4, 5);
static void warnf(walk *wk, dx_warn_kind kind, const char *path, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    warn_msg(wk, kind, path, msg);
}

/* Errors that end the whole walk rather than one member. */
static bool walk_fatal(const walk *wk, int rc) { return wk->stopped || rc == DDX_ENOMEM; }

static int walk_stream(walk *wk, src *s, const char *path, const char *name, const char *cname,
                       uint64_t size_hint, int depth, ddx_error *err);

/* ---- archives ---- */

static la_ssize_t ar_read_cb(struct archive *a, void *ud, const void **buf)
{
    src *s = ud;
    ddx_error e = {0};
    const unsigned char *p;
    size_t got;
    if (src_block(s, &p, &got, &e) < 0) {
        archive_set_error(a, EIO, "%s", e.message);
        return -1;
    }
    *buf = p;
    return (la_ssize_t)got;
}

static la_int64_t ar_seek_cb(struct archive *a, void *ud, la_int64_t off, int whence)
{
    src *s = ud;
    (void)a;
    int64_t base = whence == SEEK_SET   ? 0
                   : whence == SEEK_CUR ? (int64_t)s->pos
                                        : (int64_t)(s->kind == SRC_MEM ? s->mem_len : 0);
    s->head_pos = s->head_len; /* after a seek the head is never replayed */
    if (s->kind == SRC_MEM) {
        int64_t to = base + off;
        if (to < 0 || (uint64_t)to > s->mem_len)
            return ARCHIVE_FATAL;
        s->mem_pos = (size_t)to;
        s->pos = (uint64_t)to;
        return to;
    }
    off_t to = whence == SEEK_END ? lseek(s->fd, (off_t)off, SEEK_END)
                                  : lseek(s->fd, (off_t)(base + off), SEEK_SET);
    if (to < 0)
        return ARCHIVE_FATAL;
    s->pos = (uint64_t)to;
    return to;
}

/* Archives only: compressed streams are decoded by the codecs above, so that every byte before
 * a point of damage reaches the archive reader. */
static struct archive *archive_new_reader(void)
{
    struct archive *a = archive_read_new();
    if (!a)
        return NULL;
    archive_read_support_format_tar(a);
    archive_read_support_format_zip(a);
    return a;
}

/* Whether the head carries the magic of an archive libarchive may open: zip or ustar. */
static bool maybe_archive(const unsigned char *p, size_t n)
{
    if (n >= 4 && p[0] == 'P' && p[1] == 'K' &&
        ((p[2] == 3 && p[3] == 4) || (p[2] == 5 && p[3] == 6)))
        return true;
    return n >= 262 && memcmp(p + 257, "ustar", 5) == 0;
}

/* Lets libarchive decide from the head alone whether this is an archive it can read. */
static bool is_archive(const unsigned char *p, size_t n)
{
    if (!maybe_archive(p, n))
        return false;
    struct archive *a = archive_new_reader();
    if (!a)
        return false;
    bool yes = false;
    struct archive_entry *e;
    if (archive_read_open_memory(a, p, n) == ARCHIVE_OK) {
        int ar = archive_read_next_header(a, &e);
        yes = ar == ARCHIVE_OK || ar == ARCHIVE_WARN || ar == ARCHIVE_EOF;
    }
    archive_read_free(a);
    return yes;
}

/* Hidden members (a path component starting with '.', other than "." and "..") and macOS
 * resource forks are skipped. */
static bool archive_name_hidden(const char *name)
{
    if (strncmp(name, "__MACOSX/", 9) == 0)
        return true;
    for (const char *c = name; *c;) {
        size_t n = strcspn(c, "/");
        if (c[0] == '.' && !(n == 1 || (n == 2 && c[1] == '.')))
            return true;
        c += n;
        while (*c == '/')
            c++;
    }
    return false;
}

/* libarchive's message without the line ends it sometimes keeps. */
static const char *ar_why(struct archive *a, char *buf, size_t cap)
{
    const char *why = archive_error_string(a);
    snprintf(buf, cap, "%s", why ? why : "unknown error");
    size_t n = strlen(buf);
    while (n && (buf[n - 1] == '\n' || buf[n - 1] == '\r' || buf[n - 1] == ' '))
        buf[--n] = '\0';
    return buf;
}

static int walk_archive(walk *wk, src *s, const char *path, int depth, ddx_error *err)
{
    int rc = DDX_OK;
    dx_buf mpath = {0};
    char why[512];
    struct archive *a = archive_new_reader();
    if (!a)
        return dx_err(err, DDX_ENOMEM, "%s: out of memory", path);
    archive_read_set_read_callback(a, ar_read_cb);
    archive_read_set_callback_data(a, s);
    if (s->seekable)
        archive_read_set_seek_callback(a, ar_seek_cb);
    if (archive_read_open1(a) != ARCHIVE_OK) {
        rc = dx_err(err, s->fail_rc == DDX_ENOMEM ? DDX_ENOMEM : DDX_EFORMAT,
                    "%s: cannot open the archive (%s); re-copy it, or "
                    "extract it and pass the directory",
                    path, s->failed ? s->why : ar_why(a, why, sizeof why));
        goto fail;
    }
    size_t seen = 0, read = 0;
    int retries = 0;
    bool member_failed = false;
    for (;;) {
        struct archive_entry *e;
        int ar = archive_read_next_header(a, &e);
        if (ar == ARCHIVE_EOF)
            break;
        if (ar == ARCHIVE_RETRY && ++retries < 16)
            continue;
        if (ar < ARCHIVE_WARN) {
            /* the source's own error (a truncated gzip under a tar) says more than libarchive */
            const char *w = s->failed ? s->why : ar_why(a, why, sizeof why);
            if (s->fail_rc == DDX_ENOMEM) {
                rc = dx_err(err, DDX_ENOMEM, "%s: out of memory", path);
                goto fail;
            }
            if (seen == 0) {
                rc = dx_err(err, DDX_EFORMAT,
                            "%s: damaged archive (%s); re-copy it, or "
                            "extract what you can and pass the directory",
                            path, w);
                goto fail;
            }
            if (!member_failed)
                warnf(wk, DX_WARN_DAMAGED, path,
                      "%s: damaged archive after %zu members (%s); the %zu members before "
                      "the damage were read, what follows it is lost: re-copy the archive",
                      path, seen, w, read);
            break;
        }
        retries = 0;
        seen++;
        /* Regular files only; a tar hard link repeats a member already read. */
        if (archive_entry_filetype(e) != AE_IFREG || archive_entry_hardlink(e))
            continue;
        const char *name = archive_entry_pathname_utf8(e);
        if (!name)
            name = archive_entry_pathname(e);
        if (!name)
            continue;
        while (name[0] == '.' && name[1] == '/')
            name += 2;
        while (name[0] == '/')
            name++;
        if (!name[0] || archive_name_hidden(name))
            continue;
        mpath.n = 0;
        if (dx_buf_addf(&mpath, "%s:%s", path, name) != DDX_OK) {
            rc = dx_err(err, DDX_ENOMEM, "%s: out of memory", path);
            goto fail;
        }
        if (archive_entry_is_encrypted(e)) {
            warnf(wk, DX_WARN_UNREADABLE, mpath.p,
                  "%s: encrypted; not read: decrypt the archive and pass it again", mpath.p);
            continue;
        }
        src ms;
        ddx_error merr = {0};
        src_init_archive(&ms, mpath.p, a, s);
        uint64_t size = archive_entry_size_is_set(e) ? (uint64_t)archive_entry_size(e) : 0;
        int mrc = walk_stream(wk, &ms, mpath.p, name, NULL, size, depth + 1, &merr);
        member_failed = ms.failed;
        read++;
        src_fini(&ms);
        if (s->fail_rc == DDX_ENOMEM && mrc >= 0)
            mrc = dx_err(&merr, DDX_ENOMEM, "%s: out of memory", path);
        if (mrc < 0 && walk_fatal(wk, mrc)) {
            if (!wk->stopped && err)
                *err = merr;
            rc = mrc;
            goto fail;
        }
        if (mrc < 0)
            warn_msg(wk, DX_WARN_UNREADABLE, mpath.p, merr.message);
    }
fail:
    archive_read_free(a);
    dx_buf_fini(&mpath);
    return rc;
}

/* ---- one stream: an archive, a compressed member or a plain member ---- */

/* The member's name without the suffix of the codec that was removed ("rank3.log.gz" ->
 * "rank3.log", "logs.tgz" -> "logs.tar"), so classification by name sees the inner file. */
static char *strip_codec_suffix(const char *name, enum codec_kind k)
{
    static const char *const sfx[][4] = {
        [CODEC_NONE] = {NULL},
        [CODEC_GZIP] = {".gz", ".gzip", ".tgz", NULL},
        [CODEC_ZSTD] = {".zst", ".zstd", ".tzst", NULL},
        [CODEC_XZ] = {".xz", ".txz", NULL},
        [CODEC_BZIP2] = {".bz2", ".bzip2", ".tbz2", NULL},
        [CODEC_LZ4] = {".lz4", NULL},
    };
    size_t n = strlen(name);
    for (size_t i = 0; i < 4 && sfx[k][i]; i++) {
        size_t m = strlen(sfx[k][i]);
        if (n > m && strcmp(name + n - m, sfx[k][i]) == 0) {
            if (sfx[k][i][1] != 't') /* .gz, .zst, ...: the name under it */
                return dx_strndup(name, n - m);
            dx_buf b = {0}; /* .tgz and the like: a tar */
            if (dx_buf_add(&b, name, n - m) != DDX_OK || dx_buf_add(&b, ".tar", 4) != DDX_OK) {
                dx_buf_fini(&b);
                return NULL;
            }
            return b.p;
        }
    }
    return dx_strdup(name);
}

/* A compressed stream: decoded through a SRC_CODEC source and walked again (it may hold a tar,
 * or another compressed stream), as a member named without the codec's suffix. */
static int walk_codec(walk *wk, src *s, enum codec_kind ck, const char *path, const char *name,
                      int depth, ddx_error *err)
{
    codec c;
    src cs;
    char *inner = NULL;
    int rc = codec_init(&c, ck, s, err);
    src_init_codec(&cs, path, &c);
    if (rc < 0)
        goto fail;
    if (!(inner = strip_codec_suffix(name, ck))) {
        rc = dx_err(err, DDX_ENOMEM, "%s: out of memory", path);
        goto fail;
    }
    rc = walk_stream(wk, &cs, path, inner, codec_names[ck], 0, depth + 1, err);
fail:
    src_fini(&cs);
    codec_fini(&c);
    dx_free(inner);
    return rc;
}

static int walk_stream(walk *wk, src *s, const char *path, const char *name, const char *cname,
                       uint64_t size_hint, int depth, ddx_error *err)
{
    int rc = src_load_head(s, err);
    if (rc < 0)
        return rc;
    if (depth < MAX_NEST) {
        if (is_archive(s->head, s->head_len))
            return walk_archive(wk, s, path, depth, err);
        enum codec_kind ck = sniff_codec(s->head, s->head_len);
        if (ck != CODEC_NONE)
            return walk_codec(wk, s, ck, path, name, depth, err);
    }

    dx_reader rd;
    memset(&rd, 0, sizeof rd);
    if (!wk->buf && !(wk->buf = dx_malloc(BUF_CAP)))
        return dx_err(err, DDX_ENOMEM, "%s: out of memory", path);
    rd.path = path;
    rd.in = s;
    rd.buf = wk->buf;
    reader_prefill(&rd);
    if (rd.pend == DDX_ENOMEM || (rc = reader_widen(&rd, err)) < 0) {
        rc = DDX_ENOMEM;
        if (err && rd.pend == DDX_ENOMEM)
            *err = rd.pend_err;
        goto fail;
    }

    dx_member m = {path, name, cname, size_hint, rd.wide != WIDE_NONE ? wide_names[rd.wide] : NULL};
    rc = wk->fn(wk->ud, &m, &rd);
    if (rc < 0)
        wk->stopped = true;
    else
        rc = DDX_OK;
fail:
    if (rd.wide != WIDE_NONE)
        iconv_close(rd.cd);
    dx_free(rd.wbuf);
    return rc;
}

/* ---- files and directories ---- */

static int walk_file(walk *wk, const char *path, const char *name, ddx_error *err)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return dx_err(err, DDX_EIO, "%s: %s; check that it exists and is readable", path,
                      strerror(errno));
    struct stat st;
    bool reg = fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
#ifdef POSIX_FADV_SEQUENTIAL
    if (reg)
        (void)posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
#endif
    src s;
    src_init_fd(&s, path, fd, reg);
    int rc = walk_stream(wk, &s, path, name, NULL, reg ? (uint64_t)st.st_size : 0, 0, err);
    src_fini(&s);
    close(fd);
    return rc;
}

static int cmp_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Walks the directory whose display path is in path; path->p + rel is the name relative to
 * the top directory. path is restored before returning. */
static int walk_dir(walk *wk, dx_buf *path, size_t rel, int depth, ddx_error *err)
{
    int rc = DDX_OK;
    char **names = NULL;
    size_t n = 0, cap = 0;
    DIR *d = opendir(path->p);
    if (!d)
        return dx_err(err, DDX_EIO, "%s: %s; check that the directory exists and is readable",
                      path->p, strerror(errno));
    for (;;) {
        errno = 0;
        struct dirent *de = readdir(d);
        if (!de) {
            if (errno)
                warnf(wk, DX_WARN_UNREADABLE, path->p,
                      "%s: listing stopped early: %s; some files may be missing", path->p,
                      strerror(errno));
            break;
        }
        if (de->d_name[0] == '.') /* hidden, ".", ".." */
            continue;
        if (dx_grow((void **)&names, &cap, n + 1, sizeof *names) != DDX_OK ||
            !(names[n] = dx_strdup(de->d_name))) {
            rc = dx_err(err, DDX_ENOMEM, "%s: out of memory", path->p);
            goto fail;
        }
        n++;
    }
    closedir(d);
    d = NULL;
    if (n > 1)
        qsort(names, n, sizeof *names, cmp_names);

    size_t base = path->n;
    for (size_t i = 0; i < n; i++) {
        path->n = base;
        path->p[base] = '\0';
        bool slash = base > 0 && path->p[base - 1] == '/';
        if (dx_buf_addf(path, "%s%s", slash ? "" : "/", names[i]) != DDX_OK) {
            rc = dx_err(err, DDX_ENOMEM, "%s: out of memory", path->p);
            goto fail;
        }
        size_t rel_here = rel ? rel : base + (slash ? 0 : 1);
        struct stat st;
        if (lstat(path->p, &st) != 0) {
            warnf(wk, DX_WARN_UNREADABLE, path->p, "%s: %s; not read", path->p, strerror(errno));
            continue;
        }
        if (S_ISLNK(st.st_mode)) {
            if (stat(path->p, &st) != 0) {
                warnf(wk, DX_WARN_UNREADABLE, path->p, "%s: broken symbolic link (%s); not read",
                      path->p, strerror(errno));
                continue;
            }
            if (S_ISDIR(st.st_mode)) /* never followed: links can make loops */
                continue;
        }
        ddx_error merr = {0};
        int mrc;
        if (S_ISDIR(st.st_mode)) {
            if (depth + 1 >= MAX_DIR_DEPTH) {
                warnf(wk, DX_WARN_NOTE, path->p,
                      "%s: directories nested deeper than %d levels are skipped", path->p,
                      MAX_DIR_DEPTH);
                continue;
            }
            mrc = walk_dir(wk, path, rel_here, depth + 1, &merr);
        } else if (S_ISREG(st.st_mode)) {
            mrc = walk_file(wk, path->p, path->p + rel_here, &merr);
        } else {
            continue; /* fifos, sockets, devices */
        }
        if (mrc < 0 && walk_fatal(wk, mrc)) {
            if (!wk->stopped && err)
                *err = merr;
            rc = mrc;
            goto fail;
        }
        if (mrc < 0)
            warn_msg(wk, DX_WARN_UNREADABLE, path->p, merr.message);
    }
    path->n = base;
    path->p[base] = '\0';
fail:
    if (d)
        closedir(d);
    for (size_t i = 0; i < n; i++)
        dx_free(names[i]);
    dx_free(names);
    return rc;
}

int dx_input_walk(const char *path, dx_member_fn fn, dx_warn_fn warn, void *ud, ddx_error *err)
{
    if (!path || !fn)
        return dx_err(err, DDX_EINVAL, "dx_input_walk: no path or no callback");
    walk wk = {fn, warn, ud, NULL, false};
    int rc;
    if (strcmp(path, "-") == 0) {
        src s;
        src_init_fd(&s, "<stdin>", STDIN_FILENO, false);
        rc = walk_stream(&wk, &s, "<stdin>", "<stdin>", NULL, 0, 0, err);
        src_fini(&s);
        goto fail;
    }
    struct stat st;
    if (stat(path, &st) != 0) {
        rc = dx_err(err, DDX_EIO,
                    "%s: %s; check the path (ddx reads a log file, a directory, "
                    "an archive, or - for standard input)",
                    path, strerror(errno));
        goto fail;
    }
    if (S_ISDIR(st.st_mode)) {
        dx_buf p = {0};
        if (dx_buf_add(&p, path, strlen(path)) != DDX_OK) {
            rc = dx_err(err, DDX_ENOMEM, "%s: out of memory", path);
            goto fail;
        }
        rc = walk_dir(&wk, &p, 0, 0, err);
        dx_buf_fini(&p);
    } else {
        rc = walk_file(&wk, path, path, err);
        /* The top-level input itself is unreadable: that fails the walk. */
        if (rc < 0 && !walk_fatal(&wk, rc) && rc != DDX_EFORMAT)
            rc = DDX_EIO;
    }
fail:
    dx_free(wk.buf);
    return rc;
}

int dx_input_walk_buffer(const char *name, const void *data, size_t len, dx_member_fn fn,
                         dx_warn_fn warn, void *ud, ddx_error *err)
{
    if (!fn || (!data && len))
        return dx_err(err, DDX_EINVAL, "dx_input_walk_buffer: no data or no callback");
    if (!name)
        name = "<buffer>";
    walk wk = {fn, warn, ud, NULL, false};
    src s;
    src_init_mem(&s, name, data, len);
    int rc = walk_stream(&wk, &s, name, name, NULL, len, 0, err);
    src_fini(&s);
    dx_free(wk.buf);
    return rc;
}

/* ============================================================================================
 * Classification
 * ========================================================================================== */

const char *dx_kind_name(dx_kind k)
{
    switch (k) {
    case DX_KIND_LOG:
        return "log";
    case DX_KIND_ENV:
        return "env";
    case DX_KIND_CONFIG:
        return "config";
    case DX_KIND_FRDUMP:
        return "flight-recorder";
    case DX_KIND_RAS:
        return "nccl-ras";
    case DX_KIND_BINARY:
        return "binary";
    case DX_KIND_REPORT:
        return "ddx-report";
    case DX_KIND_UNREADABLE:
        return "unreadable";
    case DX_KIND_UNKNOWN:
        break;
    }
    return "unknown";
}

/* Whether needle occurs in h[0..n). */
static bool has(const char *h, size_t n, const char *needle)
{
    size_t m = strlen(needle);
    if (m == 0)
        return true;
    for (const char *p = h, *end = h + n; (size_t)(end - p) >= m;) {
        p = memchr(p, needle[0], (size_t)(end - p) - m + 1);
        if (!p)
            return false;
        if (memcmp(p, needle, m) == 0)
            return true;
        p++;
    }
    return false;
}

/* Text or not: counts control bytes other than whitespace and ESC, and bytes that are not
 * valid UTF-8, in the first 8 KiB that are not NUL. More than 10% of them is binary. NUL bytes
 * are left out: padding and holes (a log truncated in place, a crash) are NULs between text,
 * and what else a binary file holds gives it away. */
static bool looks_binary(const unsigned char *p, size_t n)
{
    size_t bad = 0, seen = 0;
    for (size_t i = 0; i < n && seen < 8192;) {
        unsigned char c = p[i];
        if (c == 0) {
            i++;
            continue;
        }
        seen++;
        if (c < 0x80) {
            if ((c < 0x20 && !(c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v' ||
                               c == ESC || c == '\b')) ||
                c == 0x7f)
                bad++;
            i++;
            continue;
        }
        size_t len = c >= 0xf0 && c <= 0xf4 ? 4 : c >= 0xe0 ? 3 : c >= 0xc2 && c < 0xe0 ? 2 : 0;
        if (len == 0 || c > 0xf4) {
            bad++;
            i++;
            continue;
        }
        size_t k = 1;
        while (k < len && i + k < n && (p[i + k] & 0xc0) == 0x80)
            k++;
        if (k < len && i + k < n) /* a sequence cut by the end of the sample is fine */
            bad += k;
        i += k;
        seen += k - 1;
    }
    return bad * 10 > seen;
}

typedef struct line_view {
    const char *p;
    size_t n;
} line_view;

/* Iterates over the lines of h[0..n): returns false at the end. */
static bool next_line(const char *h, size_t n, size_t *pos, line_view *l)
{
    if (*pos >= n)
        return false;
    const char *s = h + *pos;
    const char *e = memchr(s, '\n', n - *pos);
    size_t len = e ? (size_t)(e - s) : n - *pos;
    *pos += len + (e ? 1 : 0);
    while (len && (s[len - 1] == '\r' || s[len - 1] == ' ' || s[len - 1] == '\t'))
        len--;
    l->p = s;
    l->n = len;
    return true;
}

static bool starts(const line_view *l, const char *prefix)
{
    size_t m = strlen(prefix);
    return l->n >= m && memcmp(l->p, prefix, m) == 0;
}

static bool is_digit(char c) { return c >= '0' && c <= '9'; }
static bool is_upper_key(char c) { return (c >= 'A' && c <= 'Z') || c == '_'; }
static bool is_name_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || is_digit(c) || c == '_' ||
           c == '-' || c == '.';
}

/* "KEY=VALUE" with an upper-case key, after an optional "export " / "declare -x ". */
static bool env_assignment(const line_view *l)
{
    size_t i = 0;
    if (starts(l, "export "))
        i = 7;
    else if (starts(l, "declare -x "))
        i = 11;
    size_t k = i;
    while (k < l->n && (is_upper_key(l->p[k]) || (k > i && is_digit(l->p[k]))))
        k++;
    return k > i && k < l->n && l->p[k] == '=';
}

/* "name==1.2.3", "name[extra]>=1.0", "name @ file:///...", "-e git+..." (pip freeze). */
static bool pip_requirement(const line_view *l)
{
    if (starts(l, "-e "))
        return true;
    size_t k = 0;
    while (k < l->n && is_name_char(l->p[k]))
        k++;
    if (k == 0)
        return false;
    if (k < l->n && l->p[k] == '[') {
        while (k < l->n && l->p[k] != ']')
            k++;
        k++;
    }
    while (k < l->n && l->p[k] == ' ')
        k++;
    if (k + 2 >= l->n)
        return false;
    const char *op = l->p + k;
    return (op[0] == '=' && op[1] == '=') || (op[0] == '~' && op[1] == '=') ||
           (op[0] == '>' && op[1] == '=') || (op[0] == '@' && op[1] == ' ');
}

/* A line that reports an error: a Python exception line ("torch.OutOfMemoryError: ...",
 * "[rank1]: RuntimeError: ..."), or the CUDA and NCCL error texts. */
static bool error_line(const line_view *l)
{
    if (has(l->p, l->n, "CUDA error: ") || has(l->p, l->n, "NCCL error") ||
        has(l->p, l->n, "Watchdog caught collective operation timeout"))
        return true;
    size_t i = 0;
    while (i < l->n && (l->p[i] == ' ' || l->p[i] == '\t'))
        i++;
    if (i + 5 < l->n && l->p[i] == '[' && !strncmp(l->p + i, "[rank", 5)) {
        while (i < l->n && l->p[i] != ']')
            i++;
        i += i + 2 < l->n && l->p[i + 1] == ':' ? 2 : 1;
        while (i < l->n && l->p[i] == ' ')
            i++;
    }
    size_t k = i;
    while (k < l->n && (is_name_char(l->p[k]) || l->p[k] == '.'))
        k++;
    if (k == i || k + 1 >= l->n || l->p[k] != ':' || l->p[k + 1] != ' ')
        return false;
    return (k - i >= 5 && !strncmp(l->p + k - 5, "Error", 5)) ||
           (k - i >= 9 && !strncmp(l->p + k - 9, "Exception", 9));
}

/* A line as loggers and launchers write them: a date or time stamp first, a level tag, a rank
 * prefix, a traceback. */
static bool log_line(const line_view *l)
{
    const char *p = l->p;
    size_t n = l->n;
    if (n && p[0] == '[') {
        p++;
        n--;
    }
    /* 2024-05-01..., glog E0501 12:00:01 */
    if (n >= 10 && is_digit(p[0]) && is_digit(p[1]) && is_digit(p[2]) && is_digit(p[3]) &&
        p[4] == '-' && is_digit(p[5]) && is_digit(p[6]) && p[7] == '-')
        return true;
    if (n >= 14 && p[0] && strchr("IWEF", p[0]) && is_digit(p[1]) && is_digit(p[4]) &&
        p[5] == ' ' && is_digit(p[6]) && p[8] == ':')
        return true;
    static const char *const marks[] = {
        "Traceback (most recent call last)",
        "[rank",
        "[default",
        "NCCL INFO",
        "NCCL WARN",
        "[INFO]",
        "[WARNING]",
        "[ERROR]",
        " INFO ",
        " ERROR ",
        "INFO:",
        "WARNING:",
        "ERROR:",
        "Error: ",
        "torch.distributed",
    };
    for (size_t i = 0; i < DX_ARRAY_LEN(marks); i++)
        if (has(l->p, l->n, marks[i]))
            return true;
    return false;
}

typedef struct text_stats {
    size_t lines;  /* non-empty lines */
    size_t env_kv; /* KEY=VALUE */
    size_t pip;    /* pip freeze requirements */
    size_t log;    /* log-looking lines */
    size_t yaml;   /* "key: value", "key:", "- item", comments */
    bool traceback;
    bool error; /* a line that reports an error: "ValueError: ...", "CUDA error: ..." */
    bool jsonl; /* one JSON object per line: structured logs */
} text_stats;

static void text_scan(const char *h, size_t n, text_stats *ts)
{
    memset(ts, 0, sizeof *ts);
    size_t pos = 0, json_lines = 0;
    line_view l;
    while (next_line(h, n, &pos, &l)) {
        size_t i = 0;
        while (i < l.n && (l.p[i] == ' ' || l.p[i] == '\t'))
            i++;
        if (i == l.n)
            continue;
        ts->lines++;
        if (env_assignment(&l))
            ts->env_kv++;
        if (pip_requirement(&l))
            ts->pip++;
        if (log_line(&l))
            ts->log++;
        if (has(l.p, l.n, "Traceback (most recent call last)"))
            ts->traceback = true;
        if (!ts->error && error_line(&l))
            ts->error = true;
        if (l.p[i] == '{' && l.p[l.n - 1] == '}')
            json_lines++;
        line_view t = {l.p + i, l.n - i};
        size_t k = 0;
        while (k < t.n && is_name_char(t.p[k]))
            k++;
        if (t.p[0] == '#' || starts(&t, "- ") || (t.n == 1 && t.p[0] == '-') || starts(&t, "---") ||
            (k > 0 && k < t.n && t.p[k] == ':' && (k + 1 == t.n || t.p[k + 1] == ' ')))
            ts->yaml++;
    }
    ts->jsonl = json_lines >= 2 && json_lines * 2 >= ts->lines;
}

/* A report ddx wrote itself, saved beside the logs it describes (ddx diagnose logs/ >
 * logs/report.txt): its JSON (the schema and version keys ddx writes first), its text report
 * (the level line under the first finding, or the line that says nothing was found, and the
 * closing hint) or its HTML page. Reading it back would count its quoted evidence twice. */
static bool is_ddx_report(const char *h, size_t n)
{
    size_t i = 0;
    while (i < n && (h[i] == ' ' || h[i] == '\n' || h[i] == '\r' || h[i] == '\t'))
        i++;
    size_t top = n < 512 ? n : 512;
    if (i < n && h[i] == '{')
        return has(h, top, "\"schema\"") && has(h, top, "\"ddx_version\"");
    if (has(h, top, "<!doctype html") || has(h, top, "<html"))
        return has(h, n, "<meta name=\"generator\" content=\"ddx") ||
               (has(h, n, "class=\"brand\"") && has(h, n, ">ddx</a>"));
    static const char *const levels[] = {"\n  confirmed, confidence ", "\n  likely, confidence ",
                                         "\n  possible, confidence "};
    size_t first = n < 2048 ? n : 2048;
    for (size_t k = 0; k < DX_ARRAY_LEN(levels); k++)
        if (has(h, first, levels[k]) && has(h, n, "\n  evidence\n"))
            return true;
    return (starts(&(line_view){h + i, n - i}, "No known failure found in ") ||
            has(h, first, "\nNo known failure found in ")) &&
           has(h, n, "More: --verbose (score terms, facts, timeline), --json.");
}

/* Output of a tool that dumps the environment, recognised by its banner near the top. */
static bool env_banner(const char *h, size_t n)
{
    size_t top = n < 4096 ? n : 4096;
    static const char *const near_top[] = {
        "Collecting environment information",                 /* torch collect_env */
        "DeepSpeed C++/CUDA extension op report",             /* ds_report */
        "Copy-and-paste the text below in your GitHub issue", /* accelerate/transformers env */
        "# packages in environment at",                       /* conda list */
        "NVSMI LOG",                                          /* nvidia-smi -q */
    };
    for (size_t i = 0; i < DX_ARRAY_LEN(near_top); i++)
        if (has(h, top, near_top[i]))
            return true;
    if (has(h, n, "DeepSpeed general environment info"))
        return true;
    if (has(h, top, "NVIDIA-SMI") && has(h, n, "Driver Version"))
        return true;
    /* collect_env without its first line: two of its labels */
    static const char *const labels[] = {
        "PyTorch version:", "Is debug build:", "CUDA used to build PyTorch:", "Is CUDA available:",
        "Python platform:"};
    int found = 0;
    for (size_t i = 0; i < DX_ARRAY_LEN(labels); i++)
        found += has(h, top, labels[i]);
    if (found >= 2)
        return true;
    /* pip list: "Package    Version" over a line of dashes */
    size_t pos = 0;
    line_view l, prev = {NULL, 0};
    while (pos < top && next_line(h, top, &pos, &l)) {
        if (prev.p && starts(&prev, "Package ") && has(prev.p, prev.n, " Version") &&
            starts(&l, "---"))
            return true;
        prev = l;
    }
    return false;
}

/* Configs recognised by their keys whatever the file is called. */
static bool config_keys(const char *h, size_t n)
{
    static const char *const yaml_keys[] = {
        "compute_environment:", "distributed_type:", "deepspeed_config:", "fsdp_config:"};
    static const char *const json_keys[] = {"\"zero_optimization\"", "\"train_batch_size\"",
                                            "\"train_micro_batch_size_per_gpu\"",
                                            "\"gradient_accumulation_steps\""};
    for (size_t i = 0; i < DX_ARRAY_LEN(yaml_keys); i++)
        if (has(h, n, yaml_keys[i]))
            return true;
    for (size_t i = 0; i < DX_ARRAY_LEN(json_keys); i++)
        if (has(h, n, json_keys[i]))
            return true;
    return false;
}

static const char *base_name(const char *name)
{
    const char *s = name ? strrchr(name, '/') : NULL;
    return s ? s + 1 : name ? name : "";
}

static bool ends_with_ci(const char *s, const char *sfx)
{
    size_t n = strlen(s), m = strlen(sfx);
    return n >= m && strcasecmp(s + n - m, sfx) == 0;
}

/* Names that environment dumps are usually saved under: "env.txt", "pip_freeze.txt",
 * "nvidia-smi.log", "collect_env_rank0.txt", ... (the stem, then '.', '_', '-' or the end). */
static bool env_name(const char *name)
{
    static const char *const stems[] = {"env",          "environment", "printenv",   "collect_env",
                                        "pip_freeze",   "pip-freeze",  "pip_list",   "pip-list",
                                        "requirements", "conda_list",  "conda-list", "nvidia-smi",
                                        "nvidia_smi",   "ds_report"};
    const char *b = base_name(name);
    for (size_t i = 0; i < DX_ARRAY_LEN(stems); i++) {
        size_t m = strlen(stems[i]);
        if (strncasecmp(b, stems[i], m) == 0 &&
            (b[m] == '\0' || b[m] == '.' || b[m] == '_' || b[m] == '-'))
            return true;
    }
    return false;
}

dx_kind dx_input_classify(const char *name, const char *head, size_t n)
{
    const unsigned char *p = (const unsigned char *)head;
    if (!head)
        n = 0;
    const char *b = base_name(name);
    bool config_name =
        ends_with_ci(b, ".json") || ends_with_ci(b, ".yaml") || ends_with_ci(b, ".yml");

    /* 1. Pickles: flight-recorder dumps, unless it is a tensor checkpoint's pickle. */
    if (n >= 2 && p[0] == 0x80 && p[1] >= 2 && p[1] <= 5)
        return has(head, n, "_rebuild_tensor") ? DX_KIND_BINARY : DX_KIND_FRDUMP;
    if (n == 0)
        return config_name ? DX_KIND_CONFIG : DX_KIND_LOG;
    /* 2. Not text at all, or ddx's own report. */
    if (looks_binary(p, n))
        return DX_KIND_BINARY;
    if (is_ddx_report(head, n))
        return DX_KIND_REPORT;

    size_t i = 0;
    if (n >= 3 && memcmp(head, "\xef\xbb\xbf", 3) == 0) /* UTF-8 byte order mark */
        i = 3;
    while (i < n && (head[i] == ' ' || head[i] == '\t' || head[i] == '\n' || head[i] == '\r'))
        i++;
    char first = i < n ? head[i] : '\0';

    /* 3. Flight-recorder dumps written as JSON; NCCL's RAS report as JSON. */
    if (first == '{' && (has(head, n, "\"pg_config\"") ||
                         (has(head, n, "\"entries\"") && has(head, n, "collective_seq_id"))))
        return DX_KIND_FRDUMP;
    if (first == '{' && has(head, n, "\"communicators\"") && has(head, n, "\"nccl_version\""))
        return DX_KIND_RAS;

    text_stats ts;
    text_scan(head, n, &ts);

    /* 4. Environment dumps: a tool's banner (unless a log merely starts with one, or the text
     * reports an error), or mostly KEY=VALUE lines, or mostly pip requirements. */
    if (env_banner(head, n) && !ts.traceback && !ts.error && ts.log <= 5)
        return DX_KIND_ENV;
    bool quiet = !ts.traceback && ts.log * 10 <= ts.lines; /* hardly any log lines */
    if (quiet && ts.lines >= 3 && ts.env_kv * 2 >= ts.lines)
        return DX_KIND_ENV;
    if (quiet && ts.lines >= 3 && ts.pip * 10 >= ts.lines * 6)
        return DX_KIND_ENV;

    /* 5. Configs by content: a JSON document (not one object per line), known config keys. */
    if (first == '{' && !ts.jsonl)
        return DX_KIND_CONFIG;
    if (config_keys(head, n) && ts.log == 0)
        return DX_KIND_CONFIG;
    if (ts.lines >= 3 && ts.log == 0 && ts.yaml * 10 >= ts.lines * 9 &&
        starts(&(line_view){head + i, n - i}, "---"))
        return DX_KIND_CONFIG;

    /* 6. The name decides only when the content shows no sign of being a log. */
    if (ts.log == 0 && !ts.jsonl) {
        if (config_name)
            return DX_KIND_CONFIG;
        if (env_name(name))
            return DX_KIND_ENV;
    }
    return DX_KIND_LOG;
}
