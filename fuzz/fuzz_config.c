/* fuzz_config.c -- libFuzzer target for the config readers of facts.c (DeepSpeed JSON,
 * accelerate/FSDP/NeMo YAML, Ray's env_vars): any bytes as a config file.
 *
 * Checks that every fact set has a name, a value and the file's path, and (through the time
 * and memory limits of the run, docs/robustness.md) that no nesting, alias or size makes the
 * readers slow or large.
 *
 * Build and run: make fuzz.
 */
#include "facts.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    if (!text)
        return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    dx_facts f = {0};
    if (dx_facts_from_config(&f, "fuzz/config.yaml", text, size, NULL) == DDX_OK) {
        for (size_t i = 0; i < f.n; i++)
            if (!f.v[i].name || !f.v[i].value || !f.v[i].path ||
                strcmp(f.v[i].path, "fuzz/config.yaml") != 0)
                __builtin_trap();
        (void)dx_facts_derive(&f);
    }
    dx_facts_fini(&f);
    free(text);
    return 0;
}
