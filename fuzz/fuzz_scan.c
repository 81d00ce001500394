/* fuzz_scan.c -- libFuzzer target for the whole scan: any bytes as a job input (plain,
 * compressed or archived), diagnosed against the built-in knowledge base. The first byte picks
 * the input's name, so the same bytes are also read as a YAML or JSON config and an env dump.
 *
 * Build and run: make fuzz (docs/robustness.md).
 */
#include "diag.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static ddx_kb *kb;
    ddx_error e = {0};
    if (!kb && ddx_kb_open(&kb, NULL, &e) != DDX_OK)
        return 0;
    static const char *const names[] = {"fuzz.log", "config.yaml", "ds_config.json", "env.txt"};
    const char *name = names[0];
    if (size > 0) {
        name = names[data[0] % (sizeof names / sizeof names[0])];
        data++;
        size--;
    }
    ddx_job *job = NULL;
    ddx_report *rep = NULL;
    if (ddx_job_new(&job, kb, &e) == DDX_OK &&
        ddx_job_add_buffer(job, name, data, size, &e) == DDX_OK &&
        ddx_job_diagnose(job, DDX_DIAG_ALL, &rep, &e) == DDX_OK) {
        FILE *null = fopen("/dev/null", "w");
        if (null) {
            ddx_report_write_json(rep, null, &e);
            ddx_report_write_text(rep, DDX_TEXT_VERBOSE, null, &e);
            fclose(null);
        }
    }
    ddx_report_free(rep);
    ddx_job_free(job);
    return 0;
}
