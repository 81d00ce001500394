/* fuzz_ras.c -- libFuzzer target for NCCL's RAS report in its JSON form and the verdict over
 * what it read.
 *
 *   clang -fsanitize=fuzzer,address,undefined -Iinclude -Isrc fuzz/fuzz_ras.c src/ras.c \
 *     src/util.c $(pkg-config --libs jansson) -lm -o fuzz_ras
 */
#include "ras.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    dx_ras r = {0};
    ddx_error e = {0};
    dx_ras_json(&r, "ras.json", (const char *)data, size, &e);
    dx_ras_verdict v;
    dx_ras_judge(&r, &v);
    dx_ras_fini(&r);
    return 0;
}
