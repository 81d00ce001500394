/* nccltests.c -- nccl-tests (all_reduce_perf and its siblings) that stopped after their header.
 *
 * Reading:
 *   nccl-tests  the result table's header, its rows, its failures and its device list; a header
 *               with no row after it on one host with two GPUs or more means the first
 *               collective never ended
 */
#include "job.h"

static const dx_reading_fact nt_facts[] = {
    {"job.nccltests_stalled", "string",
     "nccl-tests listed two or more GPUs on one host, printed its result table's header and no "
     "result row or test failure after it: its first collective never completed"},
};

enum { NT_HEADER, NT_ROW, NT_FAIL, NT_DEVICE };

static const dx_signal nt_patterns[] = {
    [NT_HEADER] = {"job-nccltests-header", DX_ROLE_NOISE, 0,
                   "\\b(?:size|bytes)\\s+(?:count|N)\\s+type\\s+(?:redop|op)\\b",
                   "nccl-tests src/common.cu (the table header: '#  size  count  type  redop  "
                   "root  time  algbw  busbw #wrong ...'; 'bytes N type op time ...' before 2.0; "
                   "the columns after the operation are not required, as a pasted header is "
                   "often cut there)",
                   0},
    [NT_ROW] = {"job-nccltests-row", DX_ROLE_NOISE, 0,
                "\\b\\d+\\s+\\d+\\s+(?:float|half|double|bfloat16|int8|uint8|int32|uint32|"
                "int64|uint64|fp8_e4m3|fp8_e5m2)\\s+(?:sum|prod|max|min|avg|mulsum|none)\\s",
                "nccl-tests src/common.cu (a result row: size, count, type, redop, ...)", 0},
    [NT_FAIL] = {"job-nccltests-fail", DX_ROLE_NOISE, 0, "Test (?:NCCL |CUDA )?failure \\S+:\\d+",
                 "nccl-tests src/common.h (NCCLCHECK/CUDACHECK: 'Test NCCL failure common.cu:N')",
                 0},
    [NT_DEVICE] = {"job-nccltests-device", DX_ROLE_NOISE, 0,
                   "Rank\\s+\\d+ (?:Group\\s+\\d+ )?(?:Pid\\s+\\d+ on\\s+(?<host>\\S+) "
                   "device|uses device)\\s+\\d+ \\[",
                   "nccl-tests src/common.cu (the device list: '#  Rank  0 Group  0 Pid 587622 "
                   "on host device  0 [0x21] ...'; 'Rank  0 uses device  0 [0x05] ...' before "
                   "2.0)",
                   0},
};

/* a result-table header seen, result rows after the latest header, a test failure, the GPUs of
 * its device list and their host(s) */
typedef struct nt_state {
    int header, rows, fail, gpus, multi_host;
    char host[64];
} nt_state;

static int nt_hit(dx_job_model *jm, void *stp, size_t row, const dx_hit *h)
{
    (void)jm;
    nt_state *st = stp;
    dx_str host;
    switch (row) {
    case NT_HEADER:
        st->header = 1;
        st->rows = 0;
        break;
    case NT_ROW:
        st->rows++;
        break;
    case NT_FAIL:
        st->fail = 1;
        break;
    default:
        st->gpus++;
        if (dx_hit_str(h, "host", &host) && host.n && host.n < sizeof st->host) {
            if (!st->host[0])
                snprintf(st->host, sizeof st->host, "%.*s", (int)host.n, host.p);
            else if (strlen(st->host) != host.n || memcmp(st->host, host.p, host.n))
                st->multi_host = 1;
        }
    }
    return DDX_OK;
}

/* nccl-tests stopped after its table header on one host: the first collective of a single-node
 * multi-GPU run never completed (the peer-to-peer path hangs) */
static int nt_publish(dx_job_model *jm, void *stp, dx_facts *f)
{
    (void)jm;
    const nt_state *st = stp;
    if (!st->header || st->rows || st->fail || st->multi_host || st->gpus < 2)
        return DDX_OK;
    return dx_job_fact(f, "job.nccltests_stalled", "nccl-tests' device list and result table",
                       "nccl-tests listed %d GPUs on one host, printed its result table's header "
                       "and no result row",
                       st->gpus);
}

const dx_reading dx_reading_nccl_tests = {
    .name = "nccl-tests",
    .doc = "an nccl-tests run on one host that printed its result table's header and nothing "
           "after it",
    .facts = nt_facts,
    .nfacts = DX_ARRAY_LEN(nt_facts),
    .patterns = nt_patterns,
    .npatterns = DX_ARRAY_LEN(nt_patterns),
    .state_size = sizeof(nt_state),
    .on_hit = nt_hit,
    .publish = nt_publish,
};
