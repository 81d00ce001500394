/* fuzz_input.c -- libFuzzer target for input.c: any bytes as a file that may be compressed
 * (gzip, zstd, xz, bzip2, lz4), an archive (tar, zip, nested up to the limit), UTF-16/32 text or
 * plain text, walked member by member and read chunk by chunk.
 *
 * Checks the reader's contract: a chunk is whole lines, each ending in '\n', at most
 * DX_CHUNK_MAX bytes, no line longer than DX_LINE_MAX, with line numbers that follow on; the
 * classifier returns a known kind; warnings and errors name the input.
 *
 * Build and run: make fuzz.
 */
#include "input.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_msg(const char *msg)
{
    if (!msg || strncmp(msg, "fuzz.bin", 8) != 0)
        __builtin_trap();
}

static void on_warn(void *ud, dx_warn_kind kind, const char *path, const char *msg)
{
    (void)ud;
    if (kind != DX_WARN_NOTE && kind != DX_WARN_DAMAGED && kind != DX_WARN_UNREADABLE)
        __builtin_trap();
    check_msg(path);
    check_msg(msg);
}

static int on_member(void *ud, const dx_member *m, dx_reader *r)
{
    (void)ud;
    const char *head;
    size_t n;
    dx_reader_peek(r, &head, &n);
    dx_kind k = dx_input_classify(m->name, head, n);
    if (k > DX_KIND_REPORT)
        __builtin_trap();
    dx_chunk c;
    ddx_error e = {0};
    uint64_t next = 1;
    int rc;
    while ((rc = dx_reader_next(r, &c, &e)) > 0) {
        if (c.len == 0 || c.len > DX_CHUNK_MAX || c.data[c.len - 1] != '\n' || c.first_line != next)
            __builtin_trap();
        uint64_t lines = 0;
        for (size_t s = 0; s < c.len; lines++) {
            const char *nl = memchr(c.data + s, '\n', c.len - s);
            if ((size_t)(nl - (c.data + s)) > DX_LINE_MAX)
                __builtin_trap();
            s = (size_t)(nl - c.data) + 1;
        }
        if (lines != c.nlines)
            __builtin_trap();
        next += c.nlines;
    }
    if (rc < 0)
        check_msg(e.message);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    ddx_error e = {0};
    if (dx_input_walk_buffer("fuzz.bin", data, size, on_member, on_warn, NULL, &e) < 0)
        check_msg(e.message);
    return 0;
}
