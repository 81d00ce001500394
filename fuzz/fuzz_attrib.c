/* fuzz_attrib.c -- libFuzzer target for attrib.c: line prefixes and file names.
 *
 * The input is used twice: as one log line of exactly its size (no terminator, so ASan sees
 * any read past the end) and, cut at its first NUL, as a file name. Checks the invariants the
 * callers rely on: the body offset is inside the line, a host view points into the line, ranks
 * are -1 or non-negative, a time's fields are in range, and formatting never overflows.
 *
 * Build and run: make fuzz (docs/robustness.md).
 */
#include "attrib.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *line = malloc(size ? size : 1);
    if (!line)
        return 0;
    memcpy(line, data, size);

    dx_attr a;
    dx_attrib_line(line, size, &a);
    if (a.body > size || a.rank < -1 || a.local_rank < -1 || a.pid < -1)
        __builtin_trap();
    if (a.host.n && (a.host.p < line || a.host.p + a.host.n > line + size))
        __builtin_trap();
    if (a.has_time) {
        const dx_time *t = &a.time;
        if (t->month < 0 || t->month > 12 || t->day < 0 || t->day > 31 || t->hour > 23 ||
            t->min > 59 || t->sec > 60 || t->usec < 0 || t->usec > 999999)
            __builtin_trap();
        char buf[16];
        size_t want = dx_time_format(t, buf, sizeof buf);
        if (strlen(buf) >= sizeof buf || (want < sizeof buf && strlen(buf) != want))
            __builtin_trap();
        (void)dx_time_key(t, NULL);
    }
    free(line);

    /* the same bytes as a NUL-terminated path */
    char *path = malloc(size + 1);
    if (!path)
        return 0;
    memcpy(path, data, size);
    path[size] = 0;
    int is_local = -1;
    int r = dx_attrib_rank_from_name(path, &is_local);
    if (r < -1 || (is_local != 0 && is_local != 1))
        __builtin_trap();
    free(path);
    return 0;
}
