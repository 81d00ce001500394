/* replay.c -- a fuzz target's entry point run on files, without libFuzzer.
 *
 * Linked with one fuzz/fuzz_<parser>.c, it makes the regression test of that parser: every input
 * a campaign found (a crash, a sanitizer report, a timeout or a slow unit; tests/data/fuzz/
 * <target>/, docs/robustness.md) is passed to LLVMFuzzerTestOneInput once, under the test's time
 * limit and, in the ASan build, the sanitizers. It exits 2 when a file cannot be read.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int main(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        FILE *f = fopen(argv[i], "rb");
        if (!f) {
            fprintf(stderr, "replay: %s: cannot open it\n", argv[i]);
            return 2;
        }
        size_t cap = 1 << 16, n = 0;
        uint8_t *buf = malloc(cap);
        size_t got;
        while (buf && (got = fread(buf + n, 1, cap - n, f)) > 0) {
            n += got;
            if (n == cap) {
                uint8_t *b = realloc(buf, cap * 2);
                if (!b) {
                    free(buf);
                    buf = NULL;
                    break;
                }
                buf = b;
                cap *= 2;
            }
        }
        int bad = ferror(f) || !buf;
        fclose(f);
        if (bad) {
            fprintf(stderr, "replay: %s: cannot read it\n", argv[i]);
            free(buf);
            return 2;
        }
        LLVMFuzzerTestOneInput(buf, n);
        free(buf);
    }
    printf("replay: %d input%s passed\n", argc - 1, argc == 2 ? "" : "s");
    return 0;
}
