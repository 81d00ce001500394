/* registry.c -- the job model's readings, one row each, in the order they run.
 *
 * On a line matched by patterns of several readings, the earlier row sees it first: the watchdog
 * reading comes before progress (a bar cut by a timeout on the same line is not rank 0's last bar
 * before the timeouts), before torchelastic and exceptions (which ask whether the line only
 * echoes a waiting rank's timeout), and nccl-init before phases (a 0/N bar counts only after
 * NCCL's communicators came up). Facts are published in this order too: it is the order of the
 * job facts in a report. Adding a reading: its file under src/job/, one row here, one folder
 * tests/job/<name>/ (docs/architecture.md).
 */
#include "job.h"

#define READINGS(X)                                                                                \
    X(nccl_init)                                                                                   \
    X(watchdog)                                                                                    \
    X(torchelastic)                                                                                \
    X(dump_signal)                                                                                 \
    X(exceptions)                                                                                  \
    X(native_crash)                                                                                \
    X(failure_lines)                                                                               \
    X(progress)                                                                                    \
    X(metrics)                                                                                     \
    X(nan_onset)                                                                                   \
    X(stopped_output)                                                                              \
    X(desync)                                                                                      \
    X(uneven_inputs)                                                                               \
    X(timeout_after_loop)                                                                          \
    X(stuck_rank)                                                                                  \
    X(left_early)                                                                                  \
    X(launcher)                                                                                    \
    X(param_counts)                                                                                \
    X(busy_rank)                                                                                   \
    X(stacks)                                                                                      \
    X(restarts)                                                                                    \
    X(members)                                                                                     \
    X(nccl_tests)                                                                                  \
    X(teardown)                                                                                    \
    X(gpu_monitors)                                                                                \
    X(oom_device)                                                                                  \
    X(shard_sizes)                                                                                 \
    X(phases)                                                                                      \
    X(store_barrier)                                                                               \
    X(monitored_barrier)                                                                           \
    X(megatron_straggler)                                                                          \
    X(nccl_net)                                                                                    \
    X(nccl_ras)                                                                                    \
    X(fr_analyzer)                                                                                 \
    X(view_shape)                                                                                  \
    X(param_shard)                                                                                 \
    X(hosts)                                                                                       \
    X(tracebacks)                                                                                  \
    X(steps)

#define DECLARE(n) extern const dx_reading dx_reading_##n;
READINGS(DECLARE)
#define ROW(n) &dx_reading_##n,
const dx_reading *const dx_readings[] = {READINGS(ROW)};
const size_t dx_nreadings = DX_ARRAY_LEN(dx_readings);
