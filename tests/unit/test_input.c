/* test_input.c -- tests of src/input.c: chunking and cleaning, codecs, archives, directory
 * walks, errors, and classification.
 *
 * Compressed files and archives are written at test time (zlib, zstd, liblzma, libarchive)
 * into a temporary directory or memory, so the repository holds no binaries. Every walk goes
 * through collect(), which also checks the chunk invariants of input.h on every chunk: whole
 * lines ending in '\n', exact nlines, contiguous first_line, at most DX_CHUNK_MAX bytes.
 * Classification cases are data: tests/data/input/classify/<kind>/<file>.
 */
#include "dx.h"

#include "input.h"

#include <archive.h>
#include <archive_entry.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <lzma.h>
#include <setjmp.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>

#include <cmocka.h>

/* ---- collecting what a walk delivers ---- */

#define MAX_MEMBERS 32
#define BUF_BYTES (DX_CHUNK_MAX + DX_LINE_MAX) /* the reader's buffer */
#define MAX_WARN 16

typedef struct rec {
    char path[512];
    char name[512];
    char codec[16];
    uint64_t size_hint;
    dx_buf text; /* every chunk, concatenated */
    size_t nchunks;
    size_t max_chunk; /* longest chunk */
    uint64_t lines;   /* sum of nlines */
    uint64_t trunc[64];
    size_t ntrunc;
    int rc; /* what dx_reader_next ended with: 0 or a DDX_E* */
    char err[512];
    char peek[64]; /* first bytes of the peek */
    size_t peek_len;
} rec;

typedef struct collect {
    rec m[MAX_MEMBERS];
    size_t n;
    char warn[MAX_WARN][1024];
    char warn_path[MAX_WARN][512];
    dx_warn_kind warn_kind[MAX_WARN];
    size_t nwarn;
    int stop_after; /* > 0: return DDX_EINVAL from the callback for member number stop_after */
} collect;

static int on_member(void *ud, const dx_member *m, dx_reader *r)
{
    collect *c = ud;
    assert_true(c->n < MAX_MEMBERS);
    rec *x = &c->m[c->n++];
    snprintf(x->path, sizeof x->path, "%s", m->path);
    snprintf(x->name, sizeof x->name, "%s", m->name);
    snprintf(x->codec, sizeof x->codec, "%s", m->codec ? m->codec : "");
    x->size_hint = m->size_hint;
    const char *p;
    size_t n;
    dx_reader_peek(r, &p, &n);
    x->peek_len = n;
    memcpy(x->peek, p, n < sizeof x->peek ? n : sizeof x->peek);

    uint64_t next_line = 1;
    dx_chunk ch;
    ddx_error err = {0};
    int rc;
    while ((rc = dx_reader_next(r, &ch, &err)) > 0) {
        /* The invariants of dx_chunk, checked on every chunk of every test. */
        assert_true(ch.len > 0);
        assert_true(ch.len <= DX_CHUNK_MAX);
        assert_int_equal(ch.data[ch.len - 1], '\n');
        uint64_t nl = 0;
        for (const char *q = ch.data; (q = memchr(q, '\n', ch.len - (size_t)(q - ch.data))); q++)
            nl++;
        assert_int_equal(nl, ch.nlines);
        assert_int_equal(ch.first_line, next_line);
        next_line += ch.nlines;
        for (size_t i = 0; i < ch.ntrunc; i++) {
            assert_true(ch.trunc_lines[i] >= ch.first_line);
            assert_true(ch.trunc_lines[i] < ch.first_line + ch.nlines);
            if (x->ntrunc < DX_ARRAY_LEN(x->trunc))
                x->trunc[x->ntrunc++] = ch.trunc_lines[i];
        }
        assert_int_equal(dx_buf_add(&x->text, ch.data, ch.len), DDX_OK);
        x->nchunks++;
        x->lines += ch.nlines;
        if (ch.len > x->max_chunk)
            x->max_chunk = ch.len;
    }
    x->rc = rc;
    if (rc < 0)
        snprintf(x->err, sizeof x->err, "%s", err.message);
    if ((int)c->n == c->stop_after)
        return DDX_EINVAL;
    return 0;
}

static void on_warn(void *ud, dx_warn_kind kind, const char *path, const char *msg)
{
    collect *c = ud;
    assert_true(c->nwarn < MAX_WARN);
    assert_non_null(path);
    c->warn_kind[c->nwarn] = kind;
    snprintf(c->warn_path[c->nwarn], sizeof c->warn_path[0], "%s", path);
    snprintf(c->warn[c->nwarn++], sizeof c->warn[0], "%s", msg);
}

static void collect_free(collect *c)
{
    for (size_t i = 0; i < c->n; i++)
        dx_buf_fini(&c->m[i].text);
    c->n = 0;
}

static collect *walk_buf(const char *name, const void *data, size_t len, int expect_rc)
{
    collect *c = calloc(1, sizeof *c);
    assert_non_null(c);
    ddx_error err = {0};
    int rc = dx_input_walk_buffer(name, data, len, on_member, on_warn, c, &err);
    if (rc != expect_rc)
        fail_msg("walk_buffer(%s) = %d (%s), expected %d", name, rc, err.message, expect_rc);
    return c;
}

static collect *walk_path(const char *path, int expect_rc, ddx_error *err_out)
{
    collect *c = calloc(1, sizeof *c);
    assert_non_null(c);
    ddx_error err = {0};
    int rc = dx_input_walk(path, on_member, on_warn, c, &err);
    if (rc != expect_rc)
        fail_msg("walk(%s) = %d (%s), expected %d", path, rc, err.message, expect_rc);
    if (err_out)
        *err_out = err;
    return c;
}

static void done(collect *c)
{
    collect_free(c);
    free(c);
}

static void assert_text(const rec *x, const char *want, size_t want_len)
{
    if (x->text.n != want_len || memcmp(x->text.p, want, want_len) != 0) {
        size_t i = 0;
        while (i < x->text.n && i < want_len && x->text.p[i] == want[i])
            i++;
        size_t from = i > 40 ? i - 40 : 0;
        fprintf(stderr, "first difference at byte %zu:\n got: %.80s\nwant: %.80s\n", i,
                x->text.p + from, want + from);
        fail_msg("%s: text differs (got %zu bytes, want %zu)", x->path, x->text.n, want_len);
    }
}

/* ---- temporary files ---- */

static char tmp_root[256];

static void rm_rf(const char *path)
{
    struct stat st;
    if (lstat(path, &st) != 0)
        return;
    if (S_ISDIR(st.st_mode)) {
        chmod(path, 0700);
        DIR *d = opendir(path);
        if (d) {
            struct dirent *de;
            while ((de = readdir(d))) {
                if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
                    continue;
                char sub[1024];
                snprintf(sub, sizeof sub, "%s/%s", path, de->d_name);
                rm_rf(sub);
            }
            closedir(d);
        }
        rmdir(path);
    } else {
        unlink(path);
    }
}

static int setup_tmp(void **state)
{
    (void)state;
    snprintf(tmp_root, sizeof tmp_root, "/tmp/ddx-test-input-XXXXXX");
    return mkdtemp(tmp_root) ? 0 : -1;
}

static int teardown_tmp(void **state)
{
    (void)state;
    rm_rf(tmp_root);
    return 0;
}

static const char *tmp_path(const char *rel)
{
    static char buf[4][1024];
    static int i;
    i = (i + 1) % 4;
    snprintf(buf[i], sizeof buf[i], "%s/%s", tmp_root, rel);
    return buf[i];
}

static void write_file(const char *path, const void *data, size_t len)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(data, 1, len, f), len);
    assert_int_equal(fclose(f), 0);
}

static void make_dir(const char *path) { assert_int_equal(mkdir(path, 0755), 0); }

static char *read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        fail_msg("cannot open %s", path);
    dx_buf b = {0};
    char tmp[4096];
    size_t n;
    while ((n = fread(tmp, 1, sizeof tmp, f)) > 0)
        assert_int_equal(dx_buf_add(&b, tmp, n), DDX_OK);
    fclose(f);
    *len = b.n;
    return b.p ? b.p : dx_strdup("");
}

/* ---- generating compressed data ---- */

static unsigned char *gzip_bytes(const void *data, size_t len, size_t *out_len)
{
    z_stream z;
    memset(&z, 0, sizeof z);
    assert_int_equal(deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY), Z_OK);
    size_t cap = deflateBound(&z, (uLong)len) + 64;
    unsigned char *out = malloc(cap);
    assert_non_null(out);
    z.next_in = (Bytef *)(uintptr_t)data;
    z.avail_in = (uInt)len;
    z.next_out = out;
    z.avail_out = (uInt)cap;
    assert_int_equal(deflate(&z, Z_FINISH), Z_STREAM_END);
    *out_len = cap - z.avail_out;
    deflateEnd(&z);
    return out;
}

static unsigned char *zstd_bytes(const void *data, size_t len, size_t *out_len)
{
    size_t cap = ZSTD_compressBound(len);
    unsigned char *out = malloc(cap);
    assert_non_null(out);
    ZSTD_CCtx *cc = ZSTD_createCCtx();
    ZSTD_CCtx_setParameter(cc, ZSTD_c_checksumFlag, 1);
    size_t n = ZSTD_compress2(cc, out, cap, data, len);
    assert_false(ZSTD_isError(n));
    ZSTD_freeCCtx(cc);
    *out_len = n;
    return out;
}

static unsigned char *xz_bytes(const void *data, size_t len, size_t *out_len)
{
    size_t cap = lzma_stream_buffer_bound(len);
    unsigned char *out = malloc(cap);
    assert_non_null(out);
    size_t pos = 0;
    assert_int_equal(lzma_easy_buffer_encode(6, LZMA_CHECK_CRC64, NULL, data, len, out, &pos, cap),
                     LZMA_OK);
    *out_len = pos;
    return out;
}

typedef struct entry {
    const char *name;
    const void *data;
    size_t len;
    int type; /* AE_IFREG, AE_IFDIR, AE_IFLNK */
} entry;

/* Writes an archive in memory with libarchive: format "ustar", "pax" or "zip", filter "gzip",
 * "zstd", "xz" or NULL. */
static unsigned char *archive_bytes(const char *format, const char *filter, const entry *e,
                                    size_t ne, size_t *out_len)
{
    struct archive *a = archive_write_new();
    assert_int_equal(archive_write_set_format_by_name(a, format), ARCHIVE_OK);
    if (filter)
        assert_int_equal(archive_write_add_filter_by_name(a, filter), ARCHIVE_OK);
    size_t cap = 1 << 20;
    for (size_t i = 0; i < ne; i++)
        cap += e[i].len * 2 + 4096;
    unsigned char *out = malloc(cap);
    assert_non_null(out);
    size_t used = 0;
    assert_int_equal(archive_write_open_memory(a, out, cap, &used), ARCHIVE_OK);
    for (size_t i = 0; i < ne; i++) {
        struct archive_entry *ae = archive_entry_new();
        archive_entry_set_pathname(ae, e[i].name);
        archive_entry_set_filetype(ae, (unsigned)e[i].type);
        archive_entry_set_perm(ae, 0644);
        archive_entry_set_mtime(ae, 1717236000, 0);
        if (e[i].type == AE_IFLNK)
            archive_entry_set_symlink(ae, "target.log");
        archive_entry_set_size(ae, e[i].type == AE_IFREG ? (la_int64_t)e[i].len : 0);
        assert_int_equal(archive_write_header(a, ae), ARCHIVE_OK);
        if (e[i].type == AE_IFREG && e[i].len)
            assert_int_equal(archive_write_data(a, e[i].data, e[i].len), (la_ssize_t)e[i].len);
        archive_entry_free(ae);
    }
    assert_int_equal(archive_write_close(a), ARCHIVE_OK);
    archive_write_free(a);
    *out_len = used;
    return out;
}

/* Deterministic log text: n lines of varying length, some long, with line numbers. */
static char *gen_log(size_t n, size_t *len)
{
    dx_buf b = {0};
    uint32_t x = 12345;
    for (size_t i = 0; i < n; i++) {
        x = x * 1103515245u + 12345u;
        size_t pad = (x >> 16) % 300;
        if (i % 997 == 0)
            pad = 20000 + (x >> 8) % 30000; /* occasional long (but legal) lines */
        assert_int_equal(dx_buf_addf(&b, "[rank%zu]: line %zu ", i % 8, i + 1), DDX_OK);
        for (size_t k = 0; k < pad; k++)
            assert_int_equal(dx_buf_addc(&b, (char)('a' + (k + i) % 26)), DDX_OK);
        assert_int_equal(dx_buf_addc(&b, '\n'), DDX_OK);
    }
    *len = b.n;
    return b.p;
}

/* ============================================================================================
 * Cleaning and chunking
 * ========================================================================================== */

static void check_clean(const char *raw, size_t raw_len, const char *want, size_t want_len,
                        uint64_t lines)
{
    collect *c = walk_buf("t.log", raw, raw_len, DDX_OK);
    assert_int_equal(c->n, 1);
    assert_text(&c->m[0], want, want_len);
    assert_int_equal(c->m[0].lines, lines);
    assert_int_equal(c->m[0].rc, 0);
    done(c);
}
#define CLEAN(raw, want, lines) check_clean(raw, sizeof(raw) - 1, want, sizeof(want) - 1, lines)

static void test_lines_basic(void **state)
{
    (void)state;
    CLEAN("a\nb\nc\n", "a\nb\nc\n", 3);
    CLEAN("a\nb\nc", "a\nb\nc\n", 3); /* the last line gets its '\n' */
    CLEAN("\n\n", "\n\n", 2);         /* empty lines count */
    CLEAN("x", "x\n", 1);
    collect *c = walk_buf("empty.log", "", 0, DDX_OK);
    assert_int_equal(c->n, 1); /* an empty member is still a member */
    assert_int_equal(c->m[0].nchunks, 0);
    assert_int_equal(c->m[0].rc, 0);
    done(c);
}

static void test_crlf(void **state)
{
    (void)state;
    CLEAN("a\r\nb\r\n", "a\nb\n", 2);
    CLEAN("a\r\n\r\nb\r", "a\n\nb\n", 3); /* trailing '\r' of the last line */
    CLEAN("a\rb\n", "a\rb\n", 1);         /* a '\r' inside a line stays */
    CLEAN("a\r\r\n", "a\r\n", 1);         /* only the one before '\n' goes */
    CLEAN("\r", "\n", 1);
}

static void test_ansi(void **state)
{
    (void)state;
    CLEAN("\x1b[31mERROR\x1b[0m: x\n", "ERROR: x\n", 1);
    CLEAN("\x1b[1;38;5;196mred\x1b[m\n", "red\n", 1);
    CLEAN("\x1b]0;title\x07text\n", "text\n", 1);                     /* OSC ... BEL */
    CLEAN("\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\\n", "link\n", 1); /* OSC ... ST */
    CLEAN("a\x1b(Bb\x1b"
          "7c\n",
          "abc\n", 1);                          /* charset, ESC 7 */
    CLEAN("abc\x1b\nnext\n", "abc\nnext\n", 2); /* lone ESC */
    CLEAN("\x1b[12\nnext\n", "\nnext\n", 2);    /* a sequence never spans lines */
    CLEAN("\x1b]unterminated\nok\n", "\nok\n", 2);
    CLEAN("x\x1b[Kdone\r\n", "xdone\n", 1);
    CLEAN("a\x1b\x1b[1mb\n", "ab\n", 1);
    CLEAN("p\x1b[1\x01q\n", "p\x01q\n", 1); /* malformed CSI: the byte stays */
    CLEAN("ok\r\x1b[0m\n", "ok\n", 1);      /* '\r' is trailing once ANSI is gone */
    CLEAN("tail\x1b[0m", "tail\n", 1);
    CLEAN("a\x1b\x01"
          "b\n",
          "a\x01"
          "b\n",
          1);                                /* lone ESC before a control byte */
    CLEAN("a\x1b[1\x1b[2mb\n", "ab\n", 1);   /* ESC restarts a CSI */
    CLEAN("a\x1b]0;t\x1b[1mb\n", "ab\n", 1); /* ESC in an OSC not followed by '\\' */
}

/* NUL bytes inside lines are dropped (padding, holes a crash or copytruncate left); the lines
 * and their numbers stay. */
static void test_nul_dropped(void **state)
{
    (void)state;
    static const char raw[] = "a\0b\n\0\0\n\xff\xfe\n";
    static const char want[] = "ab\n\n\xff\xfe\n";
    check_clean(raw, sizeof raw - 1, want, sizeof want - 1, 3);
    collect *c = walk_buf("t.log", raw, sizeof raw - 1, DDX_OK);
    assert_int_equal(c->m[0].text.n, sizeof want - 1);
    assert_memory_equal(c->m[0].text.p, want, sizeof want - 1);
    done(c);
}

/* Golden files: clean/<name>.log must come out as clean/<name>.expected. */
static void test_clean_golden(void **state)
{
    (void)state;
    const char *data = getenv("DDX_TEST_DATA");
    assert_non_null(data);
    static const char *const cases[] = {"ansi_crlf", "nul_bytes"};
    for (size_t i = 0; i < DX_ARRAY_LEN(cases); i++) {
        char raw_path[1024], want_path[1024];
        snprintf(raw_path, sizeof raw_path, "%s/input/clean/%s.log", data, cases[i]);
        snprintf(want_path, sizeof want_path, "%s/input/clean/%s.expected", data, cases[i]);
        size_t want_len;
        char *want = read_file(want_path, &want_len);
        collect *c = walk_path(raw_path, DDX_OK, NULL);
        assert_int_equal(c->n, 1);
        assert_string_equal(c->m[0].path, raw_path);
        assert_text(&c->m[0], want, want_len);
        done(c);
        dx_free(want);
    }
}

/* Builds raw text with CRLF and escape sequences around known clean text, then checks the
 * reader gives back exactly the clean text over many chunks, from memory and from a file. */
static void test_chunk_boundaries(void **state)
{
    (void)state;
    dx_buf raw = {0}, want = {0};
    uint32_t x = 7;
    size_t nlines = 60000;
    for (size_t i = 0; i < nlines; i++) {
        x = x * 1664525u + 1013904223u;
        size_t pad = (x >> 20) % 200;
        if (i % 4099 == 0)
            pad = 30000 + (x >> 4) % 30000; /* long, but under DX_LINE_MAX */
        char head[64];
        int hn = snprintf(head, sizeof head, "line %zu:", i + 1);
        assert_int_equal(dx_buf_add(&want, head, (size_t)hn), DDX_OK);
        if (i % 3 == 0)
            assert_int_equal(dx_buf_add(&raw, "\x1b[1;32m", 7), DDX_OK);
        assert_int_equal(dx_buf_add(&raw, head, (size_t)hn), DDX_OK);
        for (size_t k = 0; k < pad; k++) {
            char ch = (char)('A' + (k * 7 + i) % 26);
            if (k % 50 == 25 && i % 5 == 0)
                assert_int_equal(dx_buf_add(&raw, "\x1b[0m", 4), DDX_OK);
            assert_int_equal(dx_buf_addc(&raw, ch), DDX_OK);
            assert_int_equal(dx_buf_addc(&want, ch), DDX_OK);
        }
        assert_int_equal(dx_buf_add(&raw, i % 2 ? "\r\n" : "\n", i % 2 ? 2 : 1), DDX_OK);
        assert_int_equal(dx_buf_addc(&want, '\n'), DDX_OK);
    }
    collect *c = walk_buf("big.log", raw.p, raw.n, DDX_OK);
    assert_int_equal(c->n, 1);
    assert_true(c->m[0].nchunks > 4);
    assert_int_equal(c->m[0].lines, nlines);
    assert_int_equal(c->m[0].ntrunc, 0);
    assert_text(&c->m[0], want.p, want.n);
    done(c);

    write_file(tmp_path("big.log"), raw.p, raw.n);
    c = walk_path(tmp_path("big.log"), DDX_OK, NULL);
    assert_int_equal(c->m[0].size_hint, raw.n);
    assert_text(&c->m[0], want.p, want.n);
    done(c);
    unlink(tmp_path("big.log"));
    dx_buf_fini(&raw);
    dx_buf_fini(&want);
}

/* Bytes arriving a few at a time through a pipe (standard input): escape sequences, CRLF and
 * long lines cut at every possible place must come out exactly as from one buffer. */
static void test_pipe_small_reads(void **state)
{
    (void)state;
    dx_buf raw = {0}, want = {0};
    for (size_t i = 0; i < 1000; i++) { /* the first 64 KiB+ arrive at once (the head) */
        assert_int_equal(dx_buf_addf(&raw,
                                     "head line %zu padding padding padding padding "
                                     "padding padding\n",
                                     i),
                         DDX_OK);
        assert_int_equal(dx_buf_addf(&want,
                                     "head line %zu padding padding padding padding "
                                     "padding padding\n",
                                     i),
                         DDX_OK);
    }
    size_t head = raw.n;
    for (size_t i = 0; i < 300; i++) {
        assert_int_equal(
            dx_buf_addf(&raw, "\x1b[1;3%zumrank%zu\x1b[0m \x1b]0;t\x07msg %zu\r\n", i % 8, i, i),
            DDX_OK);
        assert_int_equal(dx_buf_addf(&want, "rank%zu msg %zu\n", i, i), DDX_OK);
    }
    for (size_t k = 0; k < DX_LINE_MAX + 10; k++) { /* a cut line, arriving in pieces */
        assert_int_equal(dx_buf_addc(&raw, (char)('a' + k % 26)), DDX_OK);
        if (k < DX_LINE_MAX)
            assert_int_equal(dx_buf_addc(&want, (char)('a' + k % 26)), DDX_OK);
    }
    static const char tail[] = "\r\nend\x1b[0m\r";
    assert_int_equal(dx_buf_add(&raw, tail, sizeof tail - 1), DDX_OK);
    assert_int_equal(dx_buf_add(&want, "\nend\n", 5), DDX_OK);

    int fds[2];
    assert_int_equal(pipe(fds), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        close(fds[0]);
        if (write(fds[1], raw.p, head) != (ssize_t)head)
            _exit(1);
        for (size_t off = head; off < raw.n;) {
            size_t n = off % 5 + 1;
            if (n > raw.n - off)
                n = raw.n - off;
            if (write(fds[1], raw.p + off, n) != (ssize_t)n)
                _exit(1);
            off += n;
            if (off < head + 4000)
                usleep(20); /* slower than the reader: it sees a few bytes per read */
        }
        _exit(0);
    }
    close(fds[1]);
    int saved = dup(STDIN_FILENO);
    assert_int_equal(dup2(fds[0], STDIN_FILENO), STDIN_FILENO);
    close(fds[0]);
    collect *c = walk_path("-", DDX_OK, NULL);
    dup2(saved, STDIN_FILENO);
    close(saved);
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    assert_int_equal(c->n, 1);
    assert_int_equal(c->m[0].ntrunc, 1);
    assert_int_equal(c->m[0].trunc[0], 1000 + 300 + 1);
    assert_text(&c->m[0], want.p, want.n);
    done(c);
    dx_buf_fini(&raw);
    dx_buf_fini(&want);
}

/* A 10 MB line keeps DX_LINE_MAX bytes, is listed in trunc_lines, and never makes a chunk
 * bigger than DX_CHUNK_MAX. */
static void test_monster_line(void **state)
{
    (void)state;
    size_t big = 10u << 20;
    dx_buf raw = {0};
    assert_int_equal(dx_buf_add(&raw, "first\n", 6), DDX_OK);
    char *line = malloc(big);
    assert_non_null(line);
    for (size_t i = 0; i < big; i++)
        line[i] = (char)('a' + i % 26);
    assert_int_equal(dx_buf_add(&raw, line, big), DDX_OK);
    assert_int_equal(dx_buf_add(&raw, "\nlast\n", 6), DDX_OK);
    assert_int_equal(dx_buf_add(&raw, line, big), DDX_OK); /* and one at the very end */

    write_file(tmp_path("monster.log"), raw.p, raw.n);
    for (int from_file = 0; from_file < 2; from_file++) {
        collect *c = from_file ? walk_path(tmp_path("monster.log"), DDX_OK, NULL)
                               : walk_buf("monster.log", raw.p, raw.n, DDX_OK);
        rec *m = &c->m[0];
        assert_int_equal(m->lines, 4);
        assert_int_equal(m->ntrunc, 2);
        assert_int_equal(m->trunc[0], 2);
        assert_int_equal(m->trunc[1], 4);
        assert_true(m->max_chunk <= DX_CHUNK_MAX);
        assert_int_equal(m->text.n, 6 + DX_LINE_MAX + 1 + 5 + DX_LINE_MAX + 1);
        assert_memory_equal(m->text.p, "first\n", 6);
        assert_memory_equal(m->text.p + 6, line, DX_LINE_MAX);
        assert_memory_equal(m->text.p + 6 + DX_LINE_MAX, "\nlast\n", 6);
        done(c);
    }
    unlink(tmp_path("monster.log"));
    free(line);
    dx_buf_fini(&raw);
}

/* The limit is on the cleaned line: exactly DX_LINE_MAX is kept whole, with or without CRLF
 * or escape sequences; one byte more is cut. */
static void test_line_limit_exact(void **state)
{
    (void)state;
    struct {
        const char *pre, *post;
        size_t body;
        bool cut;
    } cases[] = {
        {"", "\n", DX_LINE_MAX, false},
        {"", "\r\n", DX_LINE_MAX, false},
        {"\x1b[1m", "\x1b[0m\r\n", DX_LINE_MAX, false},
        {"", "\n", DX_LINE_MAX + 1, true},
        {"", "\r\n", DX_LINE_MAX + 1, true},
        {"", "", DX_LINE_MAX + 1, true}, /* the last line, no '\n' */
    };
    for (size_t i = 0; i < DX_ARRAY_LEN(cases); i++) {
        dx_buf raw = {0};
        assert_int_equal(dx_buf_add(&raw, "x\n", 2), DDX_OK);
        assert_int_equal(dx_buf_add(&raw, cases[i].pre, strlen(cases[i].pre)), DDX_OK);
        for (size_t k = 0; k < cases[i].body; k++)
            assert_int_equal(dx_buf_addc(&raw, (char)('0' + k % 10)), DDX_OK);
        assert_int_equal(dx_buf_add(&raw, cases[i].post, strlen(cases[i].post)), DDX_OK);
        collect *c = walk_buf("limit.log", raw.p, raw.n, DDX_OK);
        rec *m = &c->m[0];
        assert_int_equal(m->lines, 2);
        assert_int_equal(m->ntrunc, cases[i].cut ? 1 : 0);
        if (cases[i].cut)
            assert_int_equal(m->trunc[0], 2);
        assert_int_equal(m->text.n, 2 + DX_LINE_MAX + 1);
        assert_int_equal(m->text.p[m->text.n - 1], '\n');
        assert_int_equal(m->text.p[m->text.n - 2], '0' + (DX_LINE_MAX - 1) % 10);
        done(c);
        dx_buf_fini(&raw);
    }
}

/* Many long lines: the truncated-lines list of a chunk and the chunk size stay bounded. */
static void test_many_truncated_lines(void **state)
{
    (void)state;
    dx_buf raw = {0};
    size_t lines = 200;
    for (size_t i = 0; i < lines; i++) {
        size_t len = DX_LINE_MAX + 1 + i * 97;
        for (size_t k = 0; k < len; k++)
            assert_int_equal(dx_buf_addc(&raw, 'z'), DDX_OK);
        assert_int_equal(dx_buf_addc(&raw, '\n'), DDX_OK);
    }
    collect *c = walk_buf("long.log", raw.p, raw.n, DDX_OK);
    rec *m = &c->m[0];
    assert_int_equal(m->lines, lines);
    assert_int_equal(m->ntrunc, 64); /* the first 64 recorded by collect() */
    for (size_t i = 0; i < 64; i++)
        assert_int_equal(m->trunc[i], i + 1);
    assert_int_equal(m->text.n, lines * (DX_LINE_MAX + 1));
    assert_true(m->max_chunk <= DX_CHUNK_MAX);
    done(c);
    dx_buf_fini(&raw);
}

static void test_peek(void **state)
{
    (void)state;
    size_t len;
    char *text = gen_log(3000, &len);
    assert_true(len > (64u << 10));

    /* peek: the raw first 64 KiB, before any chunk */
    collect *c = walk_buf("peek.log", text, len, DDX_OK);
    assert_int_equal(c->m[0].peek_len, 64u << 10);
    assert_memory_equal(c->m[0].peek, text, sizeof c->m[0].peek);
    done(c);
    free(text);
}

typedef struct read_all_ctx {
    size_t max;
    int rc;
    char *data;
    size_t len;
    uint64_t bytes_before, bytes_after;
    int next_rc_after;
    size_t peek_after;
} read_all_ctx;

static int on_member_read_all(void *ud, const dx_member *m, dx_reader *r)
{
    (void)m;
    read_all_ctx *x = ud;
    ddx_error err = {0};
    x->bytes_before = dx_reader_bytes(r);
    x->rc = dx_reader_read_all(r, x->max, &x->data, &x->len, &err);
    x->bytes_after = dx_reader_bytes(r);
    const char *p;
    size_t n;
    dx_reader_peek(r, &p, &n);
    x->peek_after = n;
    char *again = NULL;
    size_t again_len;
    x->next_rc_after = dx_reader_read_all(r, x->max, &again, &again_len, &err);
    dx_free(again);
    return 0;
}

static void test_read_all(void **state)
{
    (void)state;
    static const char raw[] = "{\r\n  \"\x1b[1mbf16\": true\r\n}";
    size_t gz_len;
    unsigned char *gz = gzip_bytes(raw, sizeof raw - 1, &gz_len);
    read_all_ctx x = {.max = 1 << 20};
    assert_int_equal(
        dx_input_walk_buffer("c.json.gz", gz, gz_len, on_member_read_all, NULL, &x, NULL), DDX_OK);
    assert_int_equal(x.rc, DDX_OK);
    assert_int_equal(x.len, sizeof raw - 1);
    assert_memory_equal(x.data, raw, x.len);
    assert_int_equal(x.data[x.len], '\0');
    assert_int_equal(x.bytes_before, 0);
    assert_int_equal(x.bytes_after, sizeof raw - 1);
    assert_int_equal(x.next_rc_after, DDX_EINVAL); /* only once, before any chunk */
    dx_free(x.data);

    assert_int_equal(x.peek_after, 0); /* the peek is gone once the member is read */

    /* a member much bigger than the head and than one buffer, whole and over the limit */
    size_t big_len, big_gz_len;
    char *big = gen_log(9000, &big_len);
    assert_true(big_len > BUF_BYTES);
    unsigned char *big_gz = gzip_bytes(big, big_len, &big_gz_len);
    read_all_ctx z = {.max = big_len};
    assert_int_equal(
        dx_input_walk_buffer("big.json.gz", big_gz, big_gz_len, on_member_read_all, NULL, &z, NULL),
        DDX_OK);
    assert_int_equal(z.rc, DDX_OK);
    assert_int_equal(z.len, big_len);
    assert_memory_equal(z.data, big, big_len);
    dx_free(z.data);
    read_all_ctx z2 = {.max = big_len - 1};
    assert_int_equal(dx_input_walk_buffer("big.json.gz", big_gz, big_gz_len, on_member_read_all,
                                          NULL, &z2, NULL),
                     DDX_OK);
    assert_int_equal(z2.rc, DDX_EFORMAT);
    assert_null(z2.data);
    /* a truncated one gives the stream's error */
    read_all_ctx z3 = {.max = big_len};
    assert_int_equal(dx_input_walk_buffer("big.json.gz", big_gz, big_gz_len / 2, on_member_read_all,
                                          NULL, &z3, NULL),
                     DDX_OK);
    assert_int_equal(z3.rc, DDX_EFORMAT);
    assert_null(z3.data);
    free(big_gz);
    free(big);

    read_all_ctx y = {.max = 10};
    assert_int_equal(
        dx_input_walk_buffer("c.json", raw, sizeof raw - 1, on_member_read_all, NULL, &y, NULL),
        DDX_OK);
    assert_int_equal(y.rc, DDX_EFORMAT);
    assert_null(y.data);
    free(gz);
}

static int on_member_bytes(void *ud, const dx_member *m, dx_reader *r)
{
    (void)m;
    uint64_t *seen = ud;
    dx_chunk ch;
    int rc;
    while ((rc = dx_reader_next(r, &ch, NULL)) > 0)
        ;
    *seen = dx_reader_bytes(r);
    return rc < 0 ? rc : 0;
}

static void test_reader_bytes(void **state)
{
    (void)state;
    size_t len;
    char *text = gen_log(5000, &len);
    uint64_t seen = 0;
    assert_int_equal(dx_input_walk_buffer("b.log", text, len, on_member_bytes, NULL, &seen, NULL),
                     DDX_OK);
    assert_int_equal(seen, len);
    free(text);
}

/* ============================================================================================
 * Codecs
 * ========================================================================================== */

static void test_gzip_roundtrip(void **state)
{
    (void)state;
    size_t len, gz_len;
    char *text = gen_log(8000, &len);
    unsigned char *gz = gzip_bytes(text, len, &gz_len);
    collect *c = walk_buf("job/rank3.log.gz", gz, gz_len, DDX_OK);
    assert_int_equal(c->n, 1);
    assert_string_equal(c->m[0].path, "job/rank3.log.gz");
    assert_string_equal(c->m[0].name, "job/rank3.log"); /* the inner file's name */
    assert_string_equal(c->m[0].codec, "gzip");
    assert_int_equal(c->m[0].size_hint, 0);
    assert_int_equal(c->m[0].rc, 0);
    assert_text(&c->m[0], text, len);
    done(c);

    /* concatenated members (cat a.gz b.gz) are one stream */
    size_t half = 1000, g1, g2;
    unsigned char *a = gzip_bytes(text, half, &g1);
    unsigned char *b = gzip_bytes(text + half, len - half, &g2);
    unsigned char *ab = malloc(g1 + g2);
    assert_non_null(ab);
    memcpy(ab, a, g1);
    memcpy(ab + g1, b, g2);
    c = walk_buf("cat.gz", ab, g1 + g2, DDX_OK);
    assert_int_equal(c->m[0].rc, 0);
    assert_text(&c->m[0], text, len);
    done(c);

    /* the same through a file and through standard input */
    write_file(tmp_path("cat.gz"), ab, g1 + g2);
    c = walk_path(tmp_path("cat.gz"), DDX_OK, NULL);
    assert_text(&c->m[0], text, len);
    done(c);
    int saved = dup(STDIN_FILENO);
    int fd = open(tmp_path("cat.gz"), O_RDONLY);
    assert_true(saved >= 0 && fd >= 0);
    assert_int_equal(dup2(fd, STDIN_FILENO), STDIN_FILENO);
    close(fd);
    c = walk_path("-", DDX_OK, NULL);
    dup2(saved, STDIN_FILENO);
    close(saved);
    assert_int_equal(c->n, 1);
    assert_string_equal(c->m[0].path, "<stdin>");
    assert_string_equal(c->m[0].codec, "gzip");
    assert_text(&c->m[0], text, len);
    done(c);
    unlink(tmp_path("cat.gz"));
    free(a);
    free(b);
    free(ab);
    free(gz);
    free(text);
}

static void test_zstd_xz_roundtrip(void **state)
{
    (void)state;
    size_t len, n1, n2;
    char *text = gen_log(6000, &len);
    unsigned char *z1 = zstd_bytes(text, 5000, &n1);
    unsigned char *z2 = zstd_bytes(text + 5000, len - 5000, &n2);
    unsigned char *zz = malloc(n1 + n2);
    assert_non_null(zz);
    memcpy(zz, z1, n1);
    memcpy(zz + n1, z2, n2); /* two frames */
    collect *c = walk_buf("r.log.zst", zz, n1 + n2, DDX_OK);
    assert_string_equal(c->m[0].codec, "zstd");
    assert_string_equal(c->m[0].name, "r.log");
    assert_int_equal(c->m[0].rc, 0);
    assert_text(&c->m[0], text, len);
    done(c);

    size_t xn;
    unsigned char *xz = xz_bytes(text, len, &xn);
    c = walk_buf("r.log.xz", xz, xn, DDX_OK);
    assert_string_equal(c->m[0].codec, "xz");
    assert_string_equal(c->m[0].name, "r.log");
    assert_int_equal(c->m[0].rc, 0);
    assert_text(&c->m[0], text, len);
    done(c);

    /* compression is found from the magic bytes, not the name */
    c = walk_buf("no-suffix", xz, xn, DDX_OK);
    assert_string_equal(c->m[0].codec, "xz");
    assert_string_equal(c->m[0].name, "no-suffix");
    assert_text(&c->m[0], text, len);
    done(c);
    free(z1);
    free(z2);
    free(zz);
    free(xz);
    free(text);
}

/* A truncated gzip file: the lines before the cut are delivered, then an error that names the
 * member and says what to do. */
static void test_truncated_gzip(void **state)
{
    (void)state;
    size_t len, gz_len;
    char *text = gen_log(20000, &len);
    unsigned char *gz = gzip_bytes(text, len, &gz_len);
    size_t cut = gz_len / 2;
    make_dir(tmp_path("job"));
    write_file(tmp_path("job/rank3.log.gz"), gz, cut);
    write_file(tmp_path("job/rank4.log"), "fine\n", 5);

    ddx_error err;
    collect *c = walk_path(tmp_path("job"), DDX_OK, &err);
    assert_int_equal(c->n, 2); /* the walk goes on after the broken member */
    rec *m = &c->m[0];
    assert_int_equal(m->rc, DDX_EFORMAT);
    char want[1100];
    snprintf(want, sizeof want, "%s: truncated gzip stream at byte", tmp_path("job/rank3.log.gz"));
    if (strncmp(m->err, want, strlen(want)) != 0)
        fail_msg("unexpected error: %s", m->err);
    assert_non_null(strstr(m->err, "re-copy"));
    /* what was decompressed before the cut came out first, as whole lines of the original */
    assert_true(m->text.n > len / 4);
    assert_true(m->text.n < len);
    assert_memory_equal(m->text.p, text, m->text.n - 1);
    assert_string_equal(c->m[1].name, "rank4.log");
    assert_text(&c->m[1], "fine\n", 5);
    done(c);

    /* cut right after the header: an error, no chunk */
    c = walk_buf("tiny.gz", gz, 12, DDX_OK);
    assert_int_equal(c->m[0].rc, DDX_EFORMAT);
    assert_non_null(strstr(c->m[0].err, "tiny.gz: truncated gzip stream"));
    done(c);
    rm_rf(tmp_path("job"));
    free(gz);
    free(text);
}

static void test_corrupt_streams(void **state)
{
    (void)state;
    size_t len, n;
    char *text = gen_log(4000, &len);
    unsigned char *z = zstd_bytes(text, len, &n);
    for (size_t i = n / 2; i < n / 2 + 64; i++)
        z[i] ^= 0x5a;
    collect *c = walk_buf("bad.zst", z, n, DDX_OK);
    assert_int_equal(c->m[0].rc, DDX_EFORMAT);
    assert_non_null(strstr(c->m[0].err, "bad.zst: corrupt zstd data at byte"));
    assert_non_null(strstr(c->m[0].err, "re-copy"));
    done(c);
    free(z);

    unsigned char *gz = gzip_bytes(text, len, &n);
    for (size_t i = n / 2; i < n / 2 + 64; i++)
        gz[i] ^= 0xa5;
    c = walk_buf("bad.gz", gz, n, DDX_OK);
    assert_int_equal(c->m[0].rc, DDX_EFORMAT);
    assert_non_null(strstr(c->m[0].err, "bad.gz: "));
    assert_true(c->m[0].text.n < len);
    done(c);
    free(gz);

    unsigned char *xz = xz_bytes(text, len, &n);
    c = walk_buf("cut.xz", xz, n - 100, DDX_OK);
    assert_int_equal(c->m[0].rc, DDX_EFORMAT);
    assert_non_null(strstr(c->m[0].err, "cut.xz: "));
    done(c);
    free(xz);
    free(text);
}

/* ============================================================================================
 * Archives
 * ========================================================================================== */

static void test_tar_roundtrip(void **state)
{
    (void)state;
    size_t len, gz_len;
    char *text = gen_log(3000, &len);
    unsigned char *gz = gzip_bytes("compressed member\n", 18, &gz_len);
    entry e[] = {
        {"./node1/", NULL, 0, AE_IFDIR},
        {"./node1/rank0.log", "r0 a\nr0 b\n", 10, AE_IFREG},
        {"./node1/rank1.log", text, len, AE_IFREG},
        {"./node1/.hidden.log", "secret\n", 7, AE_IFREG},
        {"./.git/config", "x\n", 2, AE_IFREG},
        {"./node1/link.log", NULL, 0, AE_IFLNK},
        {"./node2/rank2.log.gz", gz, gz_len, AE_IFREG},
        {"./empty.log", "", 0, AE_IFREG},
    };
    static const char *const filters[] = {NULL, "gzip", "zstd", "xz"};
    static const char *const suffix[] = {".tar", ".tar.gz", ".tar.zst", ".tar.xz"};
    for (size_t f = 0; f < DX_ARRAY_LEN(filters); f++) {
        size_t an;
        unsigned char *ar = archive_bytes("pax", filters[f], e, DX_ARRAY_LEN(e), &an);
        char name[64];
        snprintf(name, sizeof name, "logs%s", suffix[f]);
        write_file(tmp_path(name), ar, an);
        for (int from_file = 0; from_file < 2; from_file++) {
            collect *c = from_file ? walk_path(tmp_path(name), DDX_OK, NULL)
                                   : walk_buf(name, ar, an, DDX_OK);
            const char *prefix = from_file ? tmp_path(name) : name;
            assert_int_equal(c->n, 4);
            char want[1100];
            snprintf(want, sizeof want, "%s:node1/rank0.log", prefix);
            assert_string_equal(c->m[0].path, want);
            assert_string_equal(c->m[0].name, "node1/rank0.log");
            assert_string_equal(c->m[0].codec, "");
            assert_int_equal(c->m[0].size_hint, 10);
            assert_text(&c->m[0], "r0 a\nr0 b\n", 10);
            assert_string_equal(c->m[1].name, "node1/rank1.log");
            assert_text(&c->m[1], text, len);
            snprintf(want, sizeof want, "%s:node2/rank2.log.gz", prefix);
            assert_string_equal(c->m[2].path, want);
            assert_string_equal(c->m[2].name, "node2/rank2.log");
            assert_string_equal(c->m[2].codec, "gzip");
            assert_text(&c->m[2], "compressed member\n", 18);
            assert_string_equal(c->m[3].name, "empty.log");
            assert_int_equal(c->m[3].nchunks, 0);
            assert_int_equal(c->nwarn, 0);
            done(c);
        }
        unlink(tmp_path(name));
        free(ar);
    }
    free(gz);
    free(text);
}

static void test_zip_roundtrip(void **state)
{
    (void)state;
    size_t len;
    char *text = gen_log(2000, &len);
    entry e[] = {
        {"logs/", NULL, 0, AE_IFDIR},
        {"logs/rank0.log", text, len, AE_IFREG},
        {"logs/rank1.log", "one\r\ntwo\r\n", 10, AE_IFREG},
        {"__MACOSX/logs/._rank0.log", "junk", 4, AE_IFREG},
    };
    size_t an;
    unsigned char *zip = archive_bytes("zip", NULL, e, DX_ARRAY_LEN(e), &an);
    write_file(tmp_path("logs.zip"), zip, an);
    for (int from_file = 0; from_file < 2; from_file++) {
        collect *c = from_file ? walk_path(tmp_path("logs.zip"), DDX_OK, NULL)
                               : walk_buf("logs.zip", zip, an, DDX_OK);
        assert_int_equal(c->n, 2);
        assert_string_equal(c->m[0].name, "logs/rank0.log");
        assert_text(&c->m[0], text, len);
        assert_string_equal(c->m[1].name, "logs/rank1.log");
        assert_text(&c->m[1], "one\ntwo\n", 8);
        done(c);
    }
    /* a zip from standard input is read without seeking */
    int saved = dup(STDIN_FILENO);
    int fd = open(tmp_path("logs.zip"), O_RDONLY);
    assert_true(saved >= 0 && fd >= 0);
    assert_int_equal(dup2(fd, STDIN_FILENO), STDIN_FILENO);
    close(fd);
    collect *c = walk_path("-", DDX_OK, NULL);
    dup2(saved, STDIN_FILENO);
    close(saved);
    assert_int_equal(c->n, 2);
    assert_string_equal(c->m[1].path, "<stdin>:logs/rank1.log");
    assert_text(&c->m[1], "one\ntwo\n", 8);
    done(c);
    unlink(tmp_path("logs.zip"));
    free(zip);
    free(text);
}

/* An archive inside an archive is walked too, its members named by both paths. */
static void test_nested_archive(void **state)
{
    (void)state;
    entry inner[] = {{"rank5.log", "inner line\n", 11, AE_IFREG}};
    size_t in_n;
    unsigned char *in = archive_bytes("ustar", "gzip", inner, 1, &in_n);
    entry outer[] = {{"node3/logs.tar.gz", in, in_n, AE_IFREG}, {"top.log", "top\n", 4, AE_IFREG}};
    size_t out_n;
    unsigned char *out = archive_bytes("zip", NULL, outer, 2, &out_n);
    collect *c = walk_buf("job.zip", out, out_n, DDX_OK);
    assert_int_equal(c->n, 2);
    assert_string_equal(c->m[0].path, "job.zip:node3/logs.tar.gz:rank5.log");
    assert_string_equal(c->m[0].name, "rank5.log");
    assert_text(&c->m[0], "inner line\n", 11);
    assert_string_equal(c->m[1].path, "job.zip:top.log");
    done(c);
    free(in);
    free(out);
}

/* A tar.gz cut in the middle: members before the cut are delivered, the damage is reported
 * (through the member's error or a warning), nothing crashes. */
static void test_truncated_archive(void **state)
{
    (void)state;
    size_t len;
    char *text = gen_log(6000, &len);
    entry e[] = {{"a.log", "first member\n", 13, AE_IFREG},
                 {"b.log", text, len, AE_IFREG},
                 {"c.log", "never seen\n", 11, AE_IFREG}};
    size_t an;
    unsigned char *ar = archive_bytes("ustar", "gzip", e, 3, &an);
    collect *c = walk_buf("logs.tar.gz", ar, an / 2, DDX_OK);
    assert_true(c->n >= 2);
    assert_text(&c->m[0], "first member\n", 13);
    assert_int_equal(c->m[1].rc, DDX_EFORMAT);
    assert_non_null(strstr(c->m[1].err, "logs.tar.gz:b.log: "));
    assert_true(c->m[1].text.n > 0);
    for (size_t i = 0; i < c->n; i++)
        assert_string_not_equal(c->m[i].name, "c.log");
    done(c);
    free(ar);
    free(text);
}

/* A tar cut inside a header: the members before it are read, then one warning says the rest
 * of the archive is lost. */
static void test_damaged_archive_header(void **state)
{
    (void)state;
    char data[512];
    memset(data, 'q', sizeof data);
    data[511] = '\n';
    entry e[] = {{"a.log", data, 512, AE_IFREG},
                 {"b.log", data, 512, AE_IFREG},
                 {"c.log", data, 512, AE_IFREG}};
    size_t an;
    unsigned char *ar = archive_bytes("ustar", NULL, e, 3, &an);
    collect *c = walk_buf("logs.tar", ar, 4 * 512 + 100, DDX_OK);
    assert_int_equal(c->n, 2);
    assert_int_equal(c->m[1].rc, 0);
    assert_int_equal(c->nwarn, 1);
    assert_non_null(strstr(c->warn[0], "logs.tar: damaged archive after 2 members"));
    done(c);
    free(ar);
}

/* An encrypted zip member is a warning naming it; the walk goes on. */
static void test_encrypted_zip_member(void **state)
{
    (void)state;
    struct archive *a = archive_write_new();
    assert_int_equal(archive_write_set_format_zip(a), ARCHIVE_OK);
    if (archive_write_set_options(a, "zip:encryption=zipcrypt") != ARCHIVE_OK) {
        archive_write_free(a); /* this libarchive cannot write encrypted zips */
        skip();
    }
    assert_int_equal(archive_write_set_passphrase(a, "pw"), ARCHIVE_OK);
    size_t cap = 1 << 16, used = 0;
    unsigned char *out = malloc(cap);
    assert_non_null(out);
    assert_int_equal(archive_write_open_memory(a, out, cap, &used), ARCHIVE_OK);
    static const char *const names[] = {"secret.log", "secret2.log"};
    for (int i = 0; i < 2; i++) {
        struct archive_entry *ae = archive_entry_new();
        archive_entry_set_pathname(ae, names[i]);
        archive_entry_set_filetype(ae, AE_IFREG);
        archive_entry_set_perm(ae, 0644);
        archive_entry_set_size(ae, 6);
        assert_int_equal(archive_write_header(a, ae), ARCHIVE_OK);
        assert_int_equal(archive_write_data(a, "hello\n", 6), 6);
        archive_entry_free(ae);
    }
    assert_int_equal(archive_write_close(a), ARCHIVE_OK);
    archive_write_free(a);
    collect *c = walk_buf("logs.zip", out, used, DDX_OK);
    assert_int_equal(c->n, 0);
    assert_int_equal(c->nwarn, 2);
    assert_non_null(strstr(c->warn[0], "logs.zip:secret.log: encrypted"));
    assert_non_null(strstr(c->warn[1], "logs.zip:secret2.log: encrypted"));
    done(c);
    free(out);
}

/* ============================================================================================
 * Directories and paths
 * ========================================================================================== */

static void test_directory_walk(void **state)
{
    (void)state;
    make_dir(tmp_path("d"));
    make_dir(tmp_path("d/c"));
    make_dir(tmp_path("d/.git"));
    make_dir(tmp_path("d/B"));
    write_file(tmp_path("d/b.log"), "b\n", 2);
    write_file(tmp_path("d/a.log"), "a\n", 2);
    write_file(tmp_path("d/c/z.log"), "z\n", 2);
    write_file(tmp_path("d/B/y.log"), "y\n", 2);
    write_file(tmp_path("d/.hidden.log"), "h\n", 2);
    write_file(tmp_path("d/.git/x.log"), "x\n", 2);
    assert_int_equal(symlink("c", tmp_path("d/link")), 0);          /* directory link: skipped */
    assert_int_equal(symlink("a.log", tmp_path("d/alias.log")), 0); /* file link: read */
    assert_int_equal(symlink("nowhere", tmp_path("d/broken.log")), 0);
    assert_int_equal(mkfifo(tmp_path("d/fifo"), 0600), 0);

    collect *c = walk_path(tmp_path("d"), DDX_OK, NULL);
    static const char *const want[] = {"B/y.log", "a.log", "alias.log", "b.log", "c/z.log"};
    assert_int_equal(c->n, DX_ARRAY_LEN(want));
    for (size_t i = 0; i < c->n; i++) {
        assert_string_equal(c->m[i].name, want[i]);
        char p[1100];
        snprintf(p, sizeof p, "%s/%s", tmp_path("d"), want[i]);
        assert_string_equal(c->m[i].path, p);
    }
    assert_int_equal(c->m[1].size_hint, 2);
    assert_int_equal(c->nwarn, 1); /* the broken link */
    assert_non_null(strstr(c->warn[0], "broken.log"));
    done(c);

    /* a trailing slash does not double it */
    char with_slash[1100];
    snprintf(with_slash, sizeof with_slash, "%s/", tmp_path("d"));
    c = walk_path(with_slash, DDX_OK, NULL);
    char p[1100];
    snprintf(p, sizeof p, "%s/B/y.log", tmp_path("d"));
    assert_string_equal(c->m[0].path, p);
    done(c);

    /* an unreadable file is a warning naming it; the walk goes on (root reads anything) */
    if (geteuid() != 0) {
        assert_int_equal(chmod(tmp_path("d/b.log"), 0), 0);
        assert_int_equal(chmod(tmp_path("d/B"), 0), 0);
        c = walk_path(tmp_path("d"), DDX_OK, NULL);
        assert_int_equal(c->n, 3);
        assert_int_equal(c->nwarn, 3);
        assert_non_null(strstr(c->warn[0], "d/B: Permission denied"));
        assert_non_null(strstr(c->warn[1], "d/b.log: Permission denied"));
        done(c);
        chmod(tmp_path("d/B"), 0755);
    }
    rm_rf(tmp_path("d"));
}

static void test_missing_path(void **state)
{
    (void)state;
    ddx_error err;
    collect *c = walk_path("/nonexistent/job/rank0.log", DDX_EIO, &err);
    assert_int_equal(c->n, 0);
    const char *want = "/nonexistent/job/rank0.log: No such file or directory; check the path";
    if (strncmp(err.message, want, strlen(want)) != 0)
        fail_msg("unexpected error: %s", err.message);
    done(c);

    if (geteuid() != 0) {
        write_file(tmp_path("secret.log"), "x\n", 2);
        chmod(tmp_path("secret.log"), 0);
        c = walk_path(tmp_path("secret.log"), DDX_EIO, &err);
        assert_non_null(strstr(err.message, "secret.log: Permission denied"));
        done(c);
        unlink(tmp_path("secret.log"));
    }
}

static void test_callback_stops_walk(void **state)
{
    (void)state;
    make_dir(tmp_path("s"));
    write_file(tmp_path("s/1.log"), "1\n", 2);
    write_file(tmp_path("s/2.log"), "2\n", 2);
    write_file(tmp_path("s/3.log"), "3\n", 2);
    collect *c = calloc(1, sizeof *c);
    assert_non_null(c);
    c->stop_after = 2;
    assert_int_equal(dx_input_walk(tmp_path("s"), on_member, on_warn, c, NULL), DDX_EINVAL);
    assert_int_equal(c->n, 2);
    done(c);
    rm_rf(tmp_path("s"));
}

/* Every allocation failing in turn: a clean DDX_ENOMEM or success, never a crash or leak. */
static void test_alloc_failures(void **state)
{
    (void)state;
    size_t len, gz_len;
    char *text = gen_log(200, &len);
    unsigned char *gz = gzip_bytes(text, len, &gz_len);
    entry e[] = {{"a.log", text, len, AE_IFREG}, {"b.log.gz", gz, gz_len, AE_IFREG}};
    size_t an;
    unsigned char *ar = archive_bytes("ustar", "gzip", e, 2, &an);
    make_dir(tmp_path("af"));
    write_file(tmp_path("af/x.tar.gz"), ar, an);
    write_file(tmp_path("af/y.log"), text, len);
    size_t successes = 0;
    for (long n = 1; n < 60; n++) {
        for (int which = 0; which < 3; which++) {
            uint64_t bytes = 0;
            dx_alloc_fail_after(n);
            int rc =
                which == 0
                    ? dx_input_walk_buffer("x.gz", gz, gz_len, on_member_bytes, NULL, &bytes, NULL)
                : which == 1
                    ? dx_input_walk_buffer("x.tar.gz", ar, an, on_member_bytes, NULL, &bytes, NULL)
                    : dx_input_walk(tmp_path("af"), on_member_bytes, NULL, &bytes, NULL);
            dx_alloc_fail_after(0);
            if (!(rc == DDX_OK || rc == DDX_ENOMEM))
                fail_msg("allocation %ld failing, walk %d: %d", n, which, rc);
            if (rc == DDX_OK) {
                successes++;
                assert_int_equal(bytes, len); /* every member read whole, or the walk failed */
            }
        }
    }
    assert_true(successes > 0);
    rm_rf(tmp_path("af"));
    free(ar);
    free(gz);
    free(text);
}

/* ============================================================================================
 * Classification
 * ========================================================================================== */

/* Every file under classify/<kind>/ is classified as <kind>, from its name and first bytes
 * as the reader peeks them. */
static void test_classify_fixtures(void **state)
{
    (void)state;
    const char *data = getenv("DDX_TEST_DATA");
    assert_non_null(data);
    static const dx_kind kinds[] = {DX_KIND_LOG, DX_KIND_ENV, DX_KIND_CONFIG, DX_KIND_FRDUMP};
    size_t total = 0;
    for (size_t k = 0; k < DX_ARRAY_LEN(kinds); k++) {
        char dir[1024];
        snprintf(dir, sizeof dir, "%s/input/classify/%s", data, dx_kind_name(kinds[k]));
        DIR *d = opendir(dir);
        if (!d)
            fail_msg("cannot open %s", dir);
        struct dirent *de;
        while ((de = readdir(d))) {
            if (de->d_name[0] == '.')
                continue;
            char path[1400];
            snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
            size_t n;
            char *head = read_file(path, &n);
            dx_kind got = dx_input_classify(de->d_name, head, n);
            if (got != kinds[k])
                fail_msg("%s: classified as %s, expected %s", path, dx_kind_name(got),
                         dx_kind_name(kinds[k]));
            /* with a neutral name too, except where only the name can tell */
            if (strcmp(de->d_name, "requirements.txt") != 0 &&
                strcmp(de->d_name, "hparams.yml") != 0) {
                got = dx_input_classify("input", head, n);
                if (got != kinds[k])
                    fail_msg("%s named 'input': classified as %s, expected %s", path,
                             dx_kind_name(got), dx_kind_name(kinds[k]));
            }
            dx_free(head);
            total++;
        }
        closedir(d);
    }
    assert_true(total >= 20);
}

static void test_classify_rules(void **state)
{
    (void)state;
    /* pickles: protocol 2..5 is a flight-recorder dump, a tensor checkpoint is not */
    assert_int_equal(dx_input_classify("rank0", "\x80\x04\x95\x10\x00", 5), DX_KIND_FRDUMP);
    assert_int_equal(dx_input_classify("rank0", "\x80\x02}q\x00", 5), DX_KIND_FRDUMP);
    assert_int_equal(dx_input_classify("x", "\x80\x06\x95", 3), DX_KIND_BINARY);
    static const char ckpt[] = "\x80\x02\x63torch._utils\n_rebuild_tensor_v2\nq\x00";
    assert_int_equal(dx_input_classify("data.pkl", ckpt, sizeof ckpt - 1), DX_KIND_BINARY);

    /* binary: many NUL/control bytes or invalid UTF-8; a few NULs in a log are fine */
    unsigned char bin[512];
    for (size_t i = 0; i < sizeof bin; i++)
        bin[i] = (unsigned char)(i * 37 + 11);
    assert_int_equal(dx_input_classify("core.1234", (char *)bin, sizeof bin), DX_KIND_BINARY);
    static const char elf[] = "\x7f"
                              "ELF\x02\x01\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00"
                              "\x02\x00\x3e\x00\x01\x00\x00\x00";
    assert_int_equal(dx_input_classify("a.out", elf, sizeof elf - 1), DX_KIND_BINARY);
    char mostly_text[1000];
    memset(mostly_text, 'a', sizeof mostly_text);
    for (size_t i = 0; i < sizeof mostly_text; i += 80)
        mostly_text[i] = '\n';
    memset(mostly_text + 500, 0, 20);
    assert_int_equal(dx_input_classify("r.log", mostly_text, sizeof mostly_text), DX_KIND_LOG);
    static const char utf8[] = "loss \xe2\x86\x92 0.5 \xf0\x9f\x94\xa5 caf\xc3\xa9\n";
    assert_int_equal(dx_input_classify("r.log", utf8, sizeof utf8 - 1), DX_KIND_LOG);

    /* JSON flight recorder needs the keys; JSON lines are logs */
    static const char fr[] = "{\"pg_config\": {}}";
    assert_int_equal(dx_input_classify("x.json", fr, sizeof fr - 1), DX_KIND_FRDUMP);
    static const char entries[] = "{\"entries\": []}";
    assert_int_equal(dx_input_classify("x.json", entries, sizeof entries - 1), DX_KIND_CONFIG);

    /* env dump by KEY=VALUE majority; a log with a few assignments is a log */
    static const char env[] = "A=1\nNCCL_DEBUG=INFO\nexport WORLD_SIZE=8\nPATH=/bin\n";
    assert_int_equal(dx_input_classify("dump", env, sizeof env - 1), DX_KIND_ENV);
    static const char env_then_log[] =
        "A=1\nB=2\nC=3\nD=4\n[2024-06-01 10:00:00,000] INFO start\n"
        "Traceback (most recent call last):\nRuntimeError: NCCL error\n";
    assert_int_equal(dx_input_classify("job.out", env_then_log, sizeof env_then_log - 1),
                     DX_KIND_LOG);
    static const char some[] = "NCCL_DEBUG=INFO\nstarting job\nstep 1\nstep 2\nstep 3\n";
    assert_int_equal(dx_input_classify("dump", some, sizeof some - 1), DX_KIND_LOG);

    /* an nvidia-smi header pasted above the error: the error makes it a log, the banner
     * alone an environment dump */
    static const char smi_err[] =
        "NVIDIA-SMI 460.27.04    Driver Version: 460.27.04    CUDA Version: 11.2\n"
        "RuntimeError: CUDA error: no kernel image is available for execution on the device\n";
    assert_int_equal(dx_input_classify("log.txt", smi_err, sizeof smi_err - 1), DX_KIND_LOG);
    static const char smi_rank_err[] =
        "NVIDIA-SMI 535.54.03    Driver Version: 535.54.03    CUDA Version: 12.2\n"
        "[rank1]: torch.OutOfMemoryError: CUDA out of memory.\n";
    assert_int_equal(dx_input_classify("log.txt", smi_rank_err, sizeof smi_rank_err - 1),
                     DX_KIND_LOG);
    static const char smi[] =
        "NVIDIA-SMI 460.27.04    Driver Version: 460.27.04    CUDA Version: 11.2\n"
        "|   0  Tesla V100-SXM2...  On   | 00000000:00:1E.0 Off |                    0 |\n";
    assert_int_equal(dx_input_classify("log.txt", smi, sizeof smi - 1), DX_KIND_ENV);

    /* the name decides only when the content says nothing */
    static const char plain[] = "hello\nworld\n";
    assert_int_equal(dx_input_classify("x/env.txt", plain, sizeof plain - 1), DX_KIND_ENV);
    assert_int_equal(dx_input_classify("x/envoy.txt", plain, sizeof plain - 1), DX_KIND_LOG);
    assert_int_equal(dx_input_classify("x/c.yaml", plain, sizeof plain - 1), DX_KIND_CONFIG);
    static const char logline[] = "[2024-06-01 10:00:00,000] [INFO] hello\n";
    assert_int_equal(dx_input_classify("env.txt", logline, sizeof logline - 1), DX_KIND_LOG);
    assert_int_equal(dx_input_classify("c.yaml", logline, sizeof logline - 1), DX_KIND_LOG);
    assert_int_equal(dx_input_classify("c.json", "", 0), DX_KIND_CONFIG);
    assert_int_equal(dx_input_classify("r.log", "", 0), DX_KIND_LOG);
    assert_int_equal(dx_input_classify(NULL, NULL, 0), DX_KIND_LOG);
}

static void test_kind_names(void **state)
{
    (void)state;
    assert_string_equal(dx_kind_name(DX_KIND_LOG), "log");
    assert_string_equal(dx_kind_name(DX_KIND_ENV), "env");
    assert_string_equal(dx_kind_name(DX_KIND_CONFIG), "config");
    assert_string_equal(dx_kind_name(DX_KIND_FRDUMP), "flight-recorder");
    assert_string_equal(dx_kind_name(DX_KIND_BINARY), "binary");
    assert_string_equal(dx_kind_name(DX_KIND_UNKNOWN), "unknown");
    assert_string_equal(dx_kind_name((dx_kind)99), "unknown");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_lines_basic),
        cmocka_unit_test(test_crlf),
        cmocka_unit_test(test_ansi),
        cmocka_unit_test(test_nul_dropped),
        cmocka_unit_test(test_clean_golden),
        cmocka_unit_test(test_chunk_boundaries),
        cmocka_unit_test(test_pipe_small_reads),
        cmocka_unit_test(test_monster_line),
        cmocka_unit_test(test_line_limit_exact),
        cmocka_unit_test(test_many_truncated_lines),
        cmocka_unit_test(test_peek),
        cmocka_unit_test(test_read_all),
        cmocka_unit_test(test_reader_bytes),
        cmocka_unit_test(test_gzip_roundtrip),
        cmocka_unit_test(test_zstd_xz_roundtrip),
        cmocka_unit_test(test_truncated_gzip),
        cmocka_unit_test(test_corrupt_streams),
        cmocka_unit_test(test_tar_roundtrip),
        cmocka_unit_test(test_zip_roundtrip),
        cmocka_unit_test(test_nested_archive),
        cmocka_unit_test(test_truncated_archive),
        cmocka_unit_test(test_damaged_archive_header),
        cmocka_unit_test(test_encrypted_zip_member),
        cmocka_unit_test(test_directory_walk),
        cmocka_unit_test(test_missing_path),
        cmocka_unit_test(test_callback_stops_walk),
        cmocka_unit_test(test_alloc_failures),
        cmocka_unit_test(test_classify_fixtures),
        cmocka_unit_test(test_classify_rules),
        cmocka_unit_test(test_kind_names),
    };
    return cmocka_run_group_tests(tests, setup_tmp, teardown_tmp);
}
