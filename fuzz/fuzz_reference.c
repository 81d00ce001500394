/* fuzz_reference.c -- libFuzzer target for the reference parser (front matter and body).
 *
 * Build and run: make fuzz (docs/robustness.md).
 */
#include "kb.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    dx_arena *a = dx_arena_new();
    if (!a)
        return 0;
    char *text = dx_strndup((const char *)data, size);
    if (text) {
        dx_ref r;
        ddx_error e = {0};
        dx_kb_parse(a, "fuzz/x.md", text, size, &r, &e);
    }
    dx_free(text);
    dx_arena_free(a);
    return 0;
}
