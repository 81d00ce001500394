/* fuzz_frdump.c -- libFuzzer target for the flight-recorder reader (JSON and the plain-data
 * pickle subset) and the cross-rank comparison.
 *
 * Build and run: make fuzz (docs/robustness.md).
 */
#include "frdump.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    dx_frdump d[2];
    ddx_error e = {0};
    dx_frdump_parse("nccl_trace_rank_0", data, size, &d[0], &e);
    dx_frdump_parse("nccl_trace_rank_1", data, size / 2, &d[1], &e);
    dx_fr_finding f[8];
    dx_fr_verdict v;
    dx_frdump_analyze(d, 2, f, 8, &v);
    dx_frdump_fini(&d[0]);
    dx_frdump_fini(&d[1]);
    return 0;
}
