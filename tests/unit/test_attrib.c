/* test_attrib.c -- tests for attrib.c: prefix recognisers, ranks from file names, time keys.
 *
 * Every line is copied into a malloc'd buffer of exactly its length, without a terminator, so
 * that AddressSanitizer catches a recogniser reading past the end; every prefix of every line is
 * also run that way. Lines come from the labelled corpus (../shared/corpus/<case>/log.txt beside the repository,
 * named in a comment) where it has the format; the rest are built from the format as the
 * launcher's or logger's source prints it, and say so.
 */
#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "attrib.h"

/* ---- running one line ---- */

typedef struct seen {
    dx_attr a;
    char host[256]; /* the host view, copied before the line's buffer is freed */
    char body[1024];
} seen;

static char *exact_copy(const char *text, size_t n)
{
    char *buf = malloc(n ? n : 1);
    assert_non_null(buf);
    memcpy(buf, text, n);
    return buf;
}

static seen attrib(const char *text)
{
    seen s;
    size_t n = strlen(text);
    char *buf = exact_copy(text, n);
    dx_attrib_line(buf, n, &s.a);
    assert_true(s.a.body <= n);
    assert_true(s.a.host.n < sizeof s.host);
    if (s.a.host.n)
        assert_true(s.a.host.p >= buf && s.a.host.p + s.a.host.n <= buf + n);
    memcpy(s.host, s.a.host.p ? s.a.host.p : "", s.a.host.n);
    s.host[s.a.host.n] = 0;
    size_t bn = n - s.a.body < sizeof s.body - 1 ? n - s.a.body : sizeof s.body - 1;
    memcpy(s.body, buf + s.a.body, bn);
    s.body[bn] = 0;
    free(buf);
    s.a.host.p = NULL; /* it pointed into buf */
    return s;
}

/* The scan's shortcuts (dx_attrib_rank for the lines no pattern proposes, dx_attrib_may_have_time
 * before looking for a time) say what the whole table says of the line buf[0..n). */
static void assert_shortcuts(const char *buf, size_t n)
{
    dx_attr a;
    dx_attrib_line(buf, n, &a);
    int rank = a.rank >= 0 ? a.rank : a.local_rank;
    if (dx_attrib_rank(buf, n) != rank)
        fail_msg("dx_attrib_rank %d, dx_attrib_line %d on '%.*s'", dx_attrib_rank(buf, n), rank,
                 (int)n, buf);
    if (a.has_time && !dx_attrib_may_have_time(buf, n))
        fail_msg("a time dx_attrib_may_have_time misses in '%.*s'", (int)n, buf);
}

/* Every line of every log of the test corpus (tests/corpus/<case>/log.txt), and the shapes the
 * four rank-naming rows take. */
static void test_shortcuts_agree(void **state)
{
    (void)state;
    static const char *const lines[] = {
        "[rank3]: Traceback (most recent call last):",
        "[default3]:[rank3]: RuntimeError: x",
        "[1,3]<stderr>:   File \"train.py\", line 1",
        "3: [rank5]: x",
        "  12: srun line",
        "[default0]:2024-05-01 08:00:00,000 - INFO - step 1",
        "2024-05-01 08:00:00,000 - INFO - no rank: 12:00:00",
        "host:1234:1234 [3] NCCL INFO Init COMPLETE",
        "[2024-05-01 08:00:00,000] [INFO] [logging.py:96:log_dist] [Rank 3] step=1",
        "I0501 08:00:00.000000 1234 ProcessGroupNCCL.cpp:1] [Rank 3] x",
        "E0501 08:00:00.000000 1234 x.cc:1] [rank3]: y",
        "[rank]: x",
        "]: >: ::",
    };
    for (size_t k = 0; k < DX_ARRAY_LEN(lines); k++)
        for (size_t len = 0; len <= strlen(lines[k]); len++) {
            char *buf = exact_copy(lines[k], len);
            assert_shortcuts(buf, len);
            free(buf);
        }
    const char *data = getenv("DDX_TEST_DATA");
    assert_non_null(data);
    char dir[2048];
    if ((size_t)snprintf(dir, sizeof dir, "%s/../corpus", data) >= sizeof dir)
        fail_msg("DDX_TEST_DATA is too long");
    DIR *d = opendir(dir);
    assert_non_null(d);
    size_t nlines = 0;
    for (struct dirent *e; (e = readdir(d));) {
        if (e->d_name[0] == '.')
            continue;
        char path[4096];
        if ((size_t)snprintf(path, sizeof path, "%s/%.256s/log.txt", dir, e->d_name) >= sizeof path)
            continue;
        FILE *f = fopen(path, "rb");
        if (!f)
            continue;
        char line[1 << 16];
        while (fgets(line, sizeof line, f)) {
            size_t n = strcspn(line, "\n");
            char *buf = exact_copy(line, n);
            assert_shortcuts(buf, n);
            free(buf);
            nlines++;
        }
        fclose(f);
    }
    closedir(d);
    assert_true(nlines > 4000); /* the corpus was read: 566 cases, 4,268 lines */
}

/* No prefix at all: everything unknown, the body is the whole line. */
static void assert_plain(const char *text)
{
    seen s = attrib(text);
    assert_int_equal(s.a.recognised, 0);
    assert_int_equal(s.a.body, 0);
    assert_int_equal(s.a.rank, -1);
    assert_int_equal(s.a.local_rank, -1);
    assert_int_equal(s.a.pid, -1);
    assert_int_equal(s.a.has_time, 0);
    assert_int_equal(s.a.host.n, 0);
    assert_int_equal(s.a.level, 0);
}

static void assert_time(const dx_time *t, int y, int mo, int d, int h, int mi, int sec, int usec)
{
    assert_int_equal(t->year, y);
    assert_int_equal(t->month, mo);
    assert_int_equal(t->day, d);
    assert_int_equal(t->hour, h);
    assert_int_equal(t->min, mi);
    assert_int_equal(t->sec, sec);
    assert_int_equal(t->usec, usec);
}

/* ---- torchrun ---- */

static void test_torchrun_rank_with_torch_glog(void **state)
{
    (void)state;
    /* corpus ddp-027 (torch 2.5) */
    seen s =
        attrib("[rank0]:[E1218 12:49:09.086536415 ProcessGroupNCCL.cpp:616] [Rank 0] Watchdog "
               "caught collective operation timeout: WorkNCCL(SeqNum=517, OpType=_ALLGATHER_BASE)");
    assert_int_equal(s.a.recognised, DX_PFX_TORCHRUN_RANK | DX_PFX_TORCH_GLOG);
    assert_int_equal(s.a.rank, 0);
    assert_int_equal(s.a.local_rank, -1);
    assert_true(s.a.has_time);
    assert_time(&s.a.time, 0, 12, 18, 12, 49, 9, 86536); /* nanoseconds cut to microseconds */
    assert_int_equal(s.a.time.tz_known, 0);
    assert_int_equal(s.a.level, 'E');
    assert_string_equal(s.body, "[Rank 0] Watchdog caught collective operation timeout: "
                                "WorkNCCL(SeqNum=517, OpType=_ALLGATHER_BASE)");

    /* corpus fsdp-045: the month is not padded ("E114" is January 14) */
    s = attrib(
        "[rank4]:[E114 15:08:00.554388780 ProcessGroupNCCL.cpp:1709] [PG 0 (default_pg) Rank 4] "
        "Timeout at NCCL work: 175");
    assert_int_equal(s.a.rank, 4);
    assert_time(&s.a.time, 0, 1, 14, 15, 8, 0, 554388);
    assert_string_equal(s.body, "[PG 0 (default_pg) Rank 4] Timeout at NCCL work: 175");

    /* corpus ddp-012 */
    s = attrib(
        "[rank1]:[W516 14:34:56.854597329 socket.cpp:489] [c10d] waitForInput: poll for socket");
    assert_int_equal(s.a.rank, 1);
    assert_int_equal(s.a.level, 'W');
    assert_time(&s.a.time, 0, 5, 16, 14, 34, 56, 854597);
    assert_string_equal(s.body, "[c10d] waitForInput: poll for socket");
}

static void test_torchrun_rank_keeps_indentation(void **state)
{
    (void)state;
    /* corpus ddp-012: one blank belongs to the prefix, the traceback's own indentation stays */
    seen s = attrib("[rank1]: Traceback (most recent call last):");
    assert_int_equal(s.a.recognised, DX_PFX_TORCHRUN_RANK);
    assert_int_equal(s.a.rank, 1);
    assert_string_equal(s.body, "Traceback (most recent call last):");
    s = attrib("[rank1]:   File \"<frozen runpy>\", line 198, in _run_module_as_main");
    assert_string_equal(s.body, "  File \"<frozen runpy>\", line 198, in _run_module_as_main");
    /* blanks before a prefix are skipped */
    s = attrib("   [rank12]: x");
    assert_int_equal(s.a.rank, 12);
    assert_string_equal(s.body, "x");
    /* corpus fsdp-030: an exception group's margin is not a prefix */
    assert_plain("        | [rank0]: Traceback (most recent call last):");
}

static void test_torchrun_role(void **state)
{
    (void)state;
    /* torchrun --tee: "[{role}{local_rank}]:" (torch/distributed/elastic/multiprocessing) */
    seen s = attrib("[default3]:Traceback (most recent call last):");
    assert_int_equal(s.a.recognised, DX_PFX_TORCHRUN_ROLE);
    assert_int_equal(s.a.local_rank, 3);
    assert_int_equal(s.a.rank, -1);
    assert_string_equal(s.body, "Traceback (most recent call last):");
    s = attrib("[trainer12]: hello");
    assert_int_equal(s.a.local_rank, 12);
    assert_string_equal(s.body, "hello");
    /* nested under pdsh, with a DeepSpeed header inside (constructed from the three formats) */
    s = attrib("host1: [default3]:[2024-05-01 12:00:01,123] [INFO] [launch.py:123:main] WORLD INFO "
               "DICT");
    assert_int_equal(s.a.recognised, DX_PFX_HOST | DX_PFX_TORCHRUN_ROLE | DX_PFX_DEEPSPEED);
    assert_string_equal(s.host, "host1");
    assert_int_equal(s.a.local_rank, 3);
    assert_time(&s.a.time, 2024, 5, 1, 12, 0, 1, 123000);
    assert_int_equal(s.a.level, 'I');
    assert_string_equal(s.body, "WORLD INFO DICT");
    /* not roles */
    assert_plain("[default]: x");
    assert_plain("[3]: x");
    assert_plain("[Rank 0] Watchdog caught collective operation timeout");
}

/* ---- mpirun, srun, pdsh, Ray ---- */

static void test_mpirun(void **state)
{
    (void)state;
    seen s = attrib("[1,3]<stderr>:Traceback (most recent call last):");
    assert_int_equal(s.a.recognised, DX_PFX_MPIRUN);
    assert_int_equal(s.a.rank, 3);
    assert_string_equal(s.body, "Traceback (most recent call last):");

    /* corpus ox-024: a collector's time, then mpirun, then NCCL */
    s = attrib("2020-11-08 20:25:49 [1,0]<stdout>:az-scus-v100-2-worker-mgfopa:993:993 [3] "
               "misc/ibvwrap.cc:63 NCCL WARN Failed to open libibverbs.so[.1]");
    assert_int_equal(s.a.recognised, DX_PFX_PYLOG | DX_PFX_MPIRUN | DX_PFX_NCCL);
    assert_int_equal(s.a.rank, 0);
    assert_time(&s.a.time, 2020, 11, 8, 20, 25, 49, 0);
    assert_string_equal(s.host, "az-scus-v100-2-worker-mgfopa");
    assert_int_equal(s.a.pid, 993);
    assert_int_equal(s.a.level, 'W');
    assert_string_equal(s.body, "misc/ibvwrap.cc:63 NCCL WARN Failed to open libibverbs.so[.1]");

    /* corpus ox-018: mpirun --timestamp-output (ctime, no blank), then glog */
    s = attrib("Tue Nov 27 13:49:06 2018[1,10]<stdout>:F1127 13:49:06.743296 17418 "
               "hl_cuda_device.cc:565] Check failed: cudaSuccess == cudaStat (0 vs. 35)");
    assert_int_equal(s.a.recognised, DX_PFX_CTIME | DX_PFX_MPIRUN | DX_PFX_GLOG);
    assert_int_equal(s.a.rank, 10);
    assert_time(&s.a.time, 2018, 11, 27, 13, 49, 6, 0); /* the dated time wins over glog's */
    assert_int_equal(s.a.level, 'F');
    assert_int_equal(s.a.pid, -1); /* glog's number is a thread id */
    assert_string_equal(s.body, "Check failed: cudaSuccess == cudaStat (0 vs. 35)");

    assert_plain("[1,3] <stderr>: x");
    assert_plain("[1,3]<>: x");
}

static void test_srun(void **state)
{
    (void)state;
    /* srun -l, then torchrun and torch 2.4+ logging (constructed from the three formats) */
    seen s = attrib("0: [rank0]:[E0501 12:00:01.123456789 ProcessGroupNCCL.cpp:1234] [PG 0 Rank 0] "
                    "Process group watchdog thread terminated with exception");
    assert_int_equal(s.a.recognised, DX_PFX_SRUN | DX_PFX_TORCHRUN_RANK | DX_PFX_TORCH_GLOG);
    assert_int_equal(s.a.rank, 0);
    assert_time(&s.a.time, 0, 5, 1, 12, 0, 1, 123456);
    assert_string_equal(s.body,
                        "[PG 0 Rank 0] Process group watchdog thread terminated with exception");

    s = attrib("12: Traceback (most recent call last):");
    assert_int_equal(s.a.recognised, DX_PFX_SRUN);
    assert_int_equal(s.a.rank, 12);
    assert_string_equal(s.body, "Traceback (most recent call last):");

    /* times and numbers are not task labels, and srun is only ever the outermost prefix */
    assert_plain("12:00:01 starting");
    assert_plain("3:x");
    assert_plain("3.5: x");
    assert_plain("1234567: x");
    s = attrib("[rank0]: 3: x");
    assert_int_equal(s.a.recognised, DX_PFX_TORCHRUN_RANK);
    assert_string_equal(s.body, "3: x");
}

static void test_host(void **state)
{
    (void)state;
    /* pdsh / DeepSpeed multi-node runner (constructed; "%s: %s" as pdsh prints) */
    seen s = attrib("worker-1: Traceback (most recent call last):");
    assert_int_equal(s.a.recognised, DX_PFX_HOST);
    assert_string_equal(s.host, "worker-1");
    assert_string_equal(s.body, "Traceback (most recent call last):");
    s = attrib("node001: RuntimeError: NCCL error");
    assert_string_equal(s.host, "node001");
    assert_string_equal(s.body, "RuntimeError: NCCL error");
    s = attrib("10.0.0.1: [rank8]: x");
    assert_string_equal(s.host, "10.0.0.1");
    assert_int_equal(s.a.rank, 8);
    s = attrib(
        "gpu-node-12.cluster.local: [2024-05-01 12:00:01,123] [WARNING] [runner.py:202:main] y");
    assert_string_equal(s.host, "gpu-node-12.cluster.local");
    assert_int_equal(s.a.level, 'W');
    assert_string_equal(s.body, "y");

    assert_plain("Traceback (most recent call last):");
    assert_plain("RuntimeError: CUDA error: an illegal memory access was encountered");
    assert_plain("WARNING: Logging before InitGoogleLogging() is written to STDERR");
    assert_plain("localhost: no digit");
    assert_plain("Node1: upper case");
    assert_plain("epoch3: loss 0.25");
    assert_plain("step_100: loss 0.25");
    assert_plain("node1:");
    assert_plain("1.5: x");
    s = attrib("[rank0]: node1: x"); /* only as the first prefix */
    assert_string_equal(s.host, "");
    assert_string_equal(s.body, "node1: x");
}

static void test_ray(void **state)
{
    (void)state;
    /* Ray's worker log prefix (constructed; ray/_private/ray_logging format) */
    seen s = attrib(
        "(RayTrainWorker pid=1234, ip=10.0.0.1) [rank0]: Traceback (most recent call last):");
    assert_int_equal(s.a.recognised, DX_PFX_RAY | DX_PFX_TORCHRUN_RANK);
    assert_int_equal(s.a.pid, 1234);
    assert_string_equal(s.host, "10.0.0.1");
    assert_int_equal(s.a.rank, 0);
    assert_string_equal(s.body, "Traceback (most recent call last):");
    s = attrib("(pid=4321) hello");
    assert_int_equal(s.a.pid, 4321);
    assert_string_equal(s.host, "");
    assert_string_equal(s.body, "hello");
    s = attrib("(raylet, ip=10.0.0.2) msg");
    assert_int_equal(s.a.pid, -1);
    assert_string_equal(s.host, "10.0.0.2");
    assert_string_equal(s.body, "msg");
    /* Ray's C++ log header (spdlog pattern in src/ray/util/logging.cc): level, pid, thread */
    s = attrib("(raylet, ip=10.0.0.2) [2024-05-01 12:00:01,000 E 99 100] node_manager.cc:12: lost");
    assert_int_equal(s.a.recognised, DX_PFX_RAY | DX_PFX_TIME_BRACKET);
    assert_int_equal(s.a.pid, 99);
    assert_int_equal(s.a.level, 'E');
    assert_string_equal(s.body, "node_manager.cc:12: lost");

    assert_plain("(1, 2) is a tuple");
    assert_plain("(most recent call last)");
    assert_plain("(pid=12a) x");
    assert_plain("(RayTrainWorker pid=1234, ip=10.0.0.1");
}

/* ---- loggers ---- */

static void test_glog(void **state)
{
    (void)state;
    /* Debian's torch (see design/torch-on-cpu-notes.md): glog with the year */
    seen s = attrib("W20261130 03:41:27.523504 21248 socket.cpp:426] [c10d] The server socket has "
                    "failed to listen on any local network address.");
    assert_int_equal(s.a.recognised, DX_PFX_GLOG);
    assert_time(&s.a.time, 2026, 11, 30, 3, 41, 27, 523504);
    assert_int_equal(s.a.level, 'W');
    assert_string_equal(
        s.body, "[c10d] The server socket has failed to listen on any local network address.");
    /* glog pads the thread id to five columns */
    s = attrib("E0501 12:00:01.123456   123 file.cc:12] boom");
    assert_time(&s.a.time, 0, 5, 1, 12, 0, 1, 123456);
    assert_string_equal(s.body, "boom");

    /* torch 2.4+ torch._logging for torchelastic: glog's header with a Python path */
    s = attrib("E0501 12:00:01.123000 140234 torch/distributed/elastic/multiprocessing/api.py:833] "
               "failed (exitcode: 1) local_rank: 0 (pid: 1234) of binary: /usr/bin/python3");
    assert_int_equal(s.a.recognised, DX_PFX_GLOG);
    assert_int_equal(s.a.level, 'E');
    assert_string_equal(
        s.body, "failed (exitcode: 1) local_rank: 0 (pid: 1234) of binary: /usr/bin/python3");

    assert_plain("E0501 is the error code");
    assert_plain("E0501 12:00:01.123456 no location here");
    assert_plain("I1399 12:00:01.123456 1 a.cc:1] bad month");
}

static void test_torch_glog_without_time(void **state)
{
    (void)state;
    /* corpus ddp-015 (torch 1.x) */
    seen s = attrib("[E ProcessGroupNCCL.cpp:566] [Rank 0] Watchdog caught collective operation "
                    "timeout: WorkNCCL(OpType=ALLREDUCE, Timeout(ms)=1800000)");
    assert_int_equal(s.a.recognised, DX_PFX_TORCH_GLOG);
    assert_int_equal(s.a.has_time, 0);
    assert_int_equal(s.a.level, 'E');
    assert_string_equal(s.body, "[Rank 0] Watchdog caught collective operation timeout: "
                                "WorkNCCL(OpType=ALLREDUCE, Timeout(ms)=1800000)");
    /* corpus ox-039, ox-012 */
    s = attrib("[W socket.cpp:558] [c10d] The client socket cannot be initialized");
    assert_int_equal(s.a.level, 'W');
    assert_string_equal(s.body, "[c10d] The client socket cannot be initialized");
    s = attrib("[W reducer.cpp:1050] Warning: find_unused_parameters=True was specified");
    assert_string_equal(s.body, "Warning: find_unused_parameters=True was specified");

    assert_plain("[E] something");
    assert_plain("[INFO] no date");
    assert_plain("[Error] x");
    assert_plain("[E no location] x");
}

static void test_pylog(void **state)
{
    (void)state;
    seen s = attrib("2024-05-01 12:00:01,123 - INFO - msg"); /* logging's default asctime */
    assert_int_equal(s.a.recognised, DX_PFX_PYLOG);
    assert_time(&s.a.time, 2024, 5, 1, 12, 0, 1, 123000);
    assert_int_equal(s.a.time.tz_known, 0);
    assert_int_equal(s.a.level, 'I');
    assert_string_equal(s.body, "msg");

    /* corpus ddp-009 (Hugging Face examples: %m/%d/%Y, level, logger name) */
    s = attrib("09/04/2024 02:49:57 - INFO - __main__ - Distributed environment: MULTI_GPU  "
               "Backend: nccl");
    assert_time(&s.a.time, 2024, 9, 4, 2, 49, 57, 0);
    assert_string_equal(s.body, "Distributed environment: MULTI_GPU  Backend: nccl");

    /* corpus ddp-030 (fairseq) */
    s = attrib("2022-05-10 05:38:33 | INFO | torch.distributed.distributed_c10d | Waiting in store "
               "based barrier");
    assert_int_equal(s.a.level, 'I');
    assert_string_equal(s.body, "Waiting in store based barrier");

    /* corpus mx-030 (XLA/TSL logging) */
    s = attrib(
        "2024-10-09 15:47:38.568412: E external/xla/xla/tsl/distributed_runtime/coordination/"
        "coordination_service.cc:1170] /job:jax_worker/replica:0/task:1 heartbeat timeout");
    assert_int_equal(s.a.level, 'E');
    assert_time(&s.a.time, 2024, 10, 9, 15, 47, 38, 568412);
    assert_string_equal(s.body, "/job:jax_worker/replica:0/task:1 heartbeat timeout");

    s = attrib("2024-05-01 12:00:01,123 - root - ERROR - bad");
    assert_int_equal(s.a.level, 'E');
    assert_string_equal(s.body, "bad");
    s = attrib("2024-05-01 12:00:01,123 WARNING oops");
    assert_int_equal(s.a.level, 'W');
    assert_string_equal(s.body, "oops");
    s = attrib("2024-05-01 12:00:01,123 [ERROR] oops");
    assert_int_equal(s.a.level, 'E');
    assert_string_equal(s.body, "oops");
    s = attrib("2024/05/01 12:00:01 plain");
    assert_time(&s.a.time, 2024, 5, 1, 12, 0, 1, 0);
    assert_string_equal(s.body, "plain");
    s = attrib("2024-05-01 12:00:01,123 - some text - not a level");
    assert_string_equal(s.body, "- some text - not a level");
    s = attrib("2024-05-01 12:00:01,123 - INFO without a separator"); /* no half-read level */
    assert_int_equal(s.a.level, 0);
    assert_string_equal(s.body, "- INFO without a separator");
    s = attrib("2024-05-01 12:00:01,123 [INFO no bracket");
    assert_int_equal(s.a.level, 0);

    /* corpus fsdp-027: basicConfig's "%(levelname)s:%(name)s:%(message)s" */
    s = attrib(
        "ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: -9) local_rank: 6 "
        "(pid: 730) of binary: /data/Anaconda/anaconda3/envs/autogpt/bin/python3.10");
    assert_int_equal(s.a.recognised, DX_PFX_PYLOG_LEVEL);
    assert_int_equal(s.a.level, 'E');
    assert_int_equal(s.a.has_time, 0);
    assert_string_equal(s.body, "failed (exitcode: -9) local_rank: 6 (pid: 730) of binary: "
                                "/data/Anaconda/anaconda3/envs/autogpt/bin/python3.10");
    s = attrib("WARNING:root:x");
    assert_int_equal(s.a.level, 'W');
    assert_string_equal(s.body, "x");
    assert_plain("ERROR: disk full");
    assert_plain("ERROR:root");
    assert_plain("ERRORS:root:x");
    assert_plain("Error:root:x");

    assert_plain("2024-05-01 is a date");
    assert_plain("2024-13-01 12:00:01 bad month");
    assert_plain("2023-02-29 12:00:01 not a leap year");
    assert_plain("2024-05-01 25:00:01 bad hour");
}

static void test_iso(void **state)
{
    (void)state;
    seen s = attrib("2024-05-01T12:00:01.123456Z msg"); /* kubectl logs --timestamps */
    assert_int_equal(s.a.recognised, DX_PFX_ISO);
    assert_time(&s.a.time, 2024, 5, 1, 12, 0, 1, 123456);
    assert_int_equal(s.a.time.tz_known, 1);
    assert_string_equal(s.body, "msg");
    s = attrib("2024-05-01T14:00:01.123456789+02:00 x");
    assert_time(&s.a.time, 2024, 5, 1, 12, 0, 1, 123456);
    assert_int_equal(s.a.time.tz_known, 1);
    s = attrib("2024-01-01T01:00:00+05:30 x"); /* back over a year */
    assert_time(&s.a.time, 2023, 12, 31, 19, 30, 0, 0);
    s = attrib("2024-03-01T00:30:00+0100 x"); /* into a leap day */
    assert_time(&s.a.time, 2024, 2, 29, 23, 30, 0, 0);
    s = attrib("2024-12-31T23:30:00-01:00 x"); /* forward over a year */
    assert_time(&s.a.time, 2025, 1, 1, 0, 30, 0, 0);
    s = attrib("2024-05-01T12:00:01 no zone");
    assert_int_equal(s.a.time.tz_known, 0);
    assert_string_equal(s.body, "no zone");
    s = attrib("2024-05-01T12:00:01.5Z INFO started");
    assert_int_equal(s.a.time.usec, 500000);
    assert_int_equal(s.a.level, 'I');
    assert_string_equal(s.body, "started");
    /* a container runtime's log file (CRI format, containerd's and CRI-O's writer): time, stream,
       F for a full line or P for a part; the message's indentation stays in the body */
    s = attrib("2024-05-01T12:00:01.123456789Z stderr F     store = TCPStore(");
    assert_int_equal(s.a.recognised, DX_PFX_ISO);
    assert_time(&s.a.time, 2024, 5, 1, 12, 0, 1, 123456);
    assert_string_equal(s.body, "    store = TCPStore(");
    s = attrib("2024-05-01T12:00:01.123456789+00:00 stdout P [rank1]: RuntimeError: x");
    assert_int_equal(s.a.recognised, DX_PFX_ISO | DX_PFX_TORCHRUN_RANK);
    assert_int_equal(s.a.rank, 1);
    assert_string_equal(s.body, "RuntimeError: x");
    s = attrib("2024-05-01T12:00:01Z stderr X msg"); /* no such tag: the word stays */
    assert_string_equal(s.body, "stderr X msg");
}

static void test_logger_layouts(void **state)
{
    (void)state;
    /* loguru's default format, built from its source (loguru/_defaults.py LOGURU_FORMAT): the
       level padded to eight columns, then module:function:line */
    seen s = attrib("2024-05-01 12:00:01.123 | ERROR    | train:main:42 - CUDA out of memory");
    assert_int_equal(s.a.recognised, DX_PFX_PYLOG);
    assert_int_equal(s.a.level, 'E');
    assert_time(&s.a.time, 2024, 5, 1, 12, 0, 1, 123000);
    assert_string_equal(s.body, "CUDA out of memory");
    s = attrib("2024-05-01 12:00:01.123 | CRITICAL | __main__:<module>:7 - boom");
    assert_int_equal(s.a.level, 'F');
    assert_string_equal(s.body, "boom");
    /* fairseq's layout keeps its logger name */
    s = attrib("2022-05-10 05:38:33 | INFO | fairseq.trainer | begin training");
    assert_string_equal(s.body, "begin training");
    /* Hydra's job logging ("[%(asctime)s][%(name)s][%(levelname)s] - %(message)s") */
    s = attrib("[2024-05-01 12:00:01,123][fairseq_cli.train][ERROR] - x failed");
    assert_int_equal(s.a.recognised, DX_PFX_TIME_BRACKET);
    assert_int_equal(s.a.level, 'E');
    assert_time(&s.a.time, 2024, 5, 1, 12, 0, 1, 123000);
    assert_string_equal(s.body, "x failed");
    /* Lightning's rank_prefixed_message, alone and behind a time */
    s = attrib("[rank: 3] Seed set to 42");
    assert_int_equal(s.a.recognised, DX_PFX_LIGHTNING_RANK);
    assert_int_equal(s.a.rank, 3);
    assert_string_equal(s.body, "Seed set to 42");
    s = attrib("2024-05-01 12:00:01,123 [rank: 1] RuntimeError: x");
    assert_int_equal(s.a.rank, 1);
    assert_string_equal(s.body, "RuntimeError: x");
    assert_int_equal(attrib("[rank: x] no").a.recognised, 0);
    /* kubectl logs --prefix: the pod is the host; a traceback's indentation stays */
    s = attrib("[pod/llama-worker-1/pytorch]     store = TCPStore(");
    assert_int_equal(s.a.recognised, DX_PFX_KUBECTL);
    assert_string_equal(s.host, "llama-worker-1");
    assert_string_equal(s.body, "    store = TCPStore(");
    assert_int_equal(attrib("[pod/no-container] x").a.recognised, 0);
}

static void test_syslog(void **state)
{
    (void)state;
    /* rsyslog's traditional template and journalctl's short output, built from their formats:
       month, day (blank-padded or two digits), time, host, program[pid]: */
    seen s = attrib("May  1 12:00:01 gpu-node7 python[4242]: [rank3]: RuntimeError: boom");
    assert_int_equal(s.a.recognised, DX_PFX_SYSLOG | DX_PFX_TORCHRUN_RANK);
    assert_time(&s.a.time, 0, 5, 1, 12, 0, 1, 0);
    assert_string_equal(s.host, "gpu-node7");
    assert_int_equal(s.a.pid, 4242);
    assert_int_equal(s.a.rank, 3);
    assert_string_equal(s.body, "RuntimeError: boom");
    s = attrib("Dec 07 18:03:11 node1 kernel: NVRM: Xid (PCI:0000:3b:00): 79, GPU has fallen");
    assert_int_equal(s.a.recognised, DX_PFX_SYSLOG);
    assert_int_equal(s.a.pid, -1);
    assert_string_equal(s.host, "node1");
    assert_string_equal(s.body, "NVRM: Xid (PCI:0000:3b:00): 79, GPU has fallen");
    /* a later time with a year (the program's own logger) replaces the yearless one */
    s = attrib("Dec 07 18:03:11 node1 train.sh[9]: 2026-12-07 18:03:11,500 - INFO - step 5");
    assert_time(&s.a.time, 2026, 12, 7, 18, 3, 11, 500000);
    assert_string_equal(s.body, "step 5");
    /* not syslog: no program, a bad day, prose that starts with a month */
    assert_int_equal(attrib("May 01 12:00:01 node1").a.recognised, 0);
    assert_int_equal(attrib("Feb 30 12:00:01 node1 python[1]: x").a.recognised, 0);
    assert_int_equal(attrib("May the job finish soon: 12:00:01").a.recognised, 0);
}

static void test_bracketed_times(void **state)
{
    (void)state;
    /* corpus ds-012 (DeepSpeed) */
    seen s = attrib("[2021-01-26 22:03:55,650] [INFO] [timer.py:166:stop] 0/130, "
                    "SamplesPerSec=29.524899679768");
    assert_int_equal(s.a.recognised, DX_PFX_DEEPSPEED);
    assert_time(&s.a.time, 2021, 1, 26, 22, 3, 55, 650000);
    assert_int_equal(s.a.level, 'I');
    assert_string_equal(s.body, "0/130, SamplesPerSec=29.524899679768");
    s = attrib(
        "[2021-01-26 22:04:09,191] [INFO] [logging.py:60:log_dist] [Rank 0] Overflow detected.");
    assert_string_equal(s.body, "[Rank 0] Overflow detected.");

    s = attrib("[2024-05-01 12:00:01] | MnRtt/Rnk: 3.2ms/0 |"); /* Megatron straggler line */
    assert_int_equal(s.a.recognised, DX_PFX_TIME_BRACKET);
    assert_time(&s.a.time, 2024, 5, 1, 12, 0, 1, 0);
    assert_string_equal(s.body, "| MnRtt/Rnk: 3.2ms/0 |");

    /* NCCL 2.26+ with NCCL_DEBUG_TIMESTAMP_FORMAT="[%F %T.%3f] " (src/debug.cc) */
    s = attrib("[2025-01-01 12:00:00.123] host1:1234:5678 [0] NCCL INFO comm 0x5 rank 3 nranks 8 - "
               "Init COMPLETE");
    assert_int_equal(s.a.recognised, DX_PFX_TIME_BRACKET | DX_PFX_NCCL);
    assert_time(&s.a.time, 2025, 1, 1, 12, 0, 0, 123000);
    assert_string_equal(s.host, "host1");
    assert_int_equal(s.a.pid, 1234);
    assert_int_equal(s.a.level, 'I');
    assert_string_equal(s.body, "NCCL INFO comm 0x5 rank 3 nranks 8 - Init COMPLETE");

    /* torchelastic in torch 2.1-2.3 ("[%(asctime)s] %(name)s: [%(levelname)s] %(message)s") */
    s = attrib(
        "[2024-05-01 12:00:01,123] torch.distributed.elastic.multiprocessing.api: [ERROR] failed "
        "(exitcode: 1) local_rank: 0 (pid: 1234) of binary: /usr/bin/python3");
    assert_int_equal(s.a.recognised, DX_PFX_TIME_BRACKET);
    assert_int_equal(s.a.level, 'E');
    assert_string_equal(
        s.body, "failed (exitcode: 1) local_rank: 0 (pid: 1234) of binary: /usr/bin/python3");

    assert_plain("[2024-05-01] x");
    assert_plain("[2024-05-01 12:00:01 x");
}

static void test_nccl(void **state)
{
    (void)state;
    /* corpus ox-003 */
    seen s =
        attrib("7635c25c81cd:41588:41837 [0] include/shm.h:28 NCCL WARN Call to posix_fallocate "
               "failed : No space left on device");
    assert_int_equal(s.a.recognised, DX_PFX_NCCL);
    assert_string_equal(s.host, "7635c25c81cd");
    assert_int_equal(s.a.pid, 41588);
    assert_int_equal(s.a.level, 'W');
    assert_string_equal(s.body,
                        "include/shm.h:28 NCCL WARN Call to posix_fallocate failed : No space "
                        "left on device");
    s = attrib("7635c25c81cd:41590:41835 [0] NCCL INFO Channel 00 : 3[1c0] -> 2[1b0] via direct "
               "shared memory");
    assert_int_equal(s.a.level, 'I');
    assert_string_equal(s.body, "NCCL INFO Channel 00 : 3[1c0] -> 2[1b0] via direct shared memory");
    /* corpus ox-033 (old NCCL: "WARN" alone) and ox-045 (a host name cut by the excerpt) */
    s = attrib(
        "e66aa18dc444:3171:3171 [0] misc/ibvwrap.cu:61 WARN Failed to open libibverbs.so[.1]");
    assert_int_equal(s.a.level, 'W');
    s = attrib("-worker-1:946:988 [0] transport/net_ib.cc:839 NCCL WARN NET/IB : Got completion "
               "with error 12");
    assert_string_equal(s.host, "-worker-1");
    assert_int_equal(s.a.pid, 946);
    /* NCCL 2.30 puts the function in parentheses (src/debug.cc) */
    s = attrib("node7:12:13 [1] transport.cc:12 (ncclTransportP2pSetup) NCCL WARN Connect failed");
    assert_int_equal(s.a.level, 'W');

    assert_plain("host:12:13 [x] NCCL INFO");
    assert_plain("host:12 [0] NCCL INFO");
}

static void test_no_prefix_and_edges(void **state)
{
    (void)state;
    assert_plain("Traceback (most recent call last):");
    assert_plain("  File \"train.py\", line 10, in <module>");
    assert_plain("torch.distributed.elastic.multiprocessing.errors.ChildFailedError:");
    assert_plain("");
    assert_plain("   ");
    assert_plain("\"quoted\"");

    dx_attr a;
    dx_attrib_line(NULL, 10, &a);
    assert_int_equal(a.rank, -1);
    assert_int_equal(a.body, 0);

    /* blanks after the last prefix stay in the body; blanks alone end the scan */
    seen s = attrib("[rank2]:   ");
    assert_int_equal(s.a.rank, 2);
    assert_string_equal(s.body, "  ");

    /* the same recogniser twice: the second stays in the body */
    s = attrib("[rank1]:[rank2]: x");
    assert_int_equal(s.a.rank, 1);
    assert_string_equal(s.body, "[rank2]: x");
}

/* Every prefix of every line above, in an exact-size buffer: ASan catches any over-read. */
static const char *const torture_lines[] = {
    "[rank0]:[E1218 12:49:09.086536415 ProcessGroupNCCL.cpp:616] [Rank 0] Watchdog",
    "2020-11-08 20:25:49 [1,0]<stdout>:az-scus-v100-2-worker-mgfopa:993:993 [3] misc/ibvwrap.cc:63 "
    "NCCL WARN F",
    "Tue Nov 27 13:49:06 2018[1,10]<stdout>:F1127 13:49:06.743296 17418 hl_cuda_device.cc:565] "
    "Check",
    "0: [rank0]:[E0501 12:00:01.123456789 ProcessGroupNCCL.cpp:1234] [PG 0 Rank 0] x",
    "host1: [default3]:[2024-05-01 12:00:01,123] [INFO] [launch.py:123:main] x",
    "(RayTrainWorker pid=1234, ip=10.0.0.1) [rank0]: x",
    "W20261130 03:41:27.523504 21248 socket.cpp:426] [c10d] x",
    "09/04/2024 02:49:57 - INFO - __main__ - x",
    "2022-05-10 05:38:33 | INFO | torch.distributed.distributed_c10d | x",
    "2024-10-09 15:47:38.568412: E external/xla/coordination_service.cc:1170] x",
    "2024-01-01T01:00:00.123456789+05:30 INFO x",
    "[2025-01-01 12:00:00.123] host1:1234:5678 [0] NCCL INFO x",
    "node7:12:13 [1] transport.cc:12 (ncclTransportP2pSetup) NCCL WARN x",
    "[W socket.cpp:558] [c10d] x",
    "worker-1: x",
    "[1,3]<stderr>:x",
    "ERROR:torch.distributed.elastic.multiprocessing.api:failed",
    "[2024-05-01 12:00:01,123] torch.distributed.run: [WARNING] x",
    "(raylet, ip=10.0.0.2) [2024-05-01 12:00:01,000 E 99 100] node_manager.cc:12: lost",
};

static void test_every_truncation(void **state)
{
    (void)state;
    for (size_t k = 0; k < DX_ARRAY_LEN(torture_lines); k++) {
        size_t n = strlen(torture_lines[k]);
        for (size_t len = 0; len <= n; len++) {
            char *buf = exact_copy(torture_lines[k], len);
            dx_attr a;
            dx_attrib_line(buf, len, &a);
            assert_true(a.body <= len);
            if (a.host.n)
                assert_true(a.host.p >= buf && a.host.p + a.host.n <= buf + len);
            assert_shortcuts(buf, len);
            free(buf);
        }
    }
}

static void test_random_bytes(void **state)
{
    (void)state;
    /* bytes drawn from the characters prefixes are made of, so that parsers get deep */
    static const char alphabet[] =
        "[]()<>:,.-_ 0123456789rankdefaultEWIFTZ+pid=ip=/stdoutNCCL INFO";
    uint32_t x = 12345;
    char line[64];
    for (int iter = 0; iter < 20000; iter++) {
        size_t n = (size_t)(iter % 63) + 1;
        for (size_t i = 0; i < n; i++) {
            x = x * 1103515245u + 12345u;
            line[i] = alphabet[(x >> 16) % (sizeof alphabet - 1)];
        }
        char *buf = exact_copy(line, n);
        dx_attr a;
        dx_attrib_line(buf, n, &a);
        assert_true(a.body <= n);
        assert_shortcuts(buf, n);
        free(buf);
    }
}

static void test_prefix_names(void **state)
{
    (void)state;
    assert_string_equal(dx_attrib_prefix_name(DX_PFX_GLOG), "glog");
    assert_string_equal(dx_attrib_prefix_name(DX_PFX_TORCHRUN_RANK), "torchrun-rank");
    assert_null(dx_attrib_prefix_name(0));
    assert_null(dx_attrib_prefix_name(DX_PFX_GLOG | DX_PFX_NCCL));
    for (unsigned bit = 0; bit <= 17; bit++) /* every DX_PFX_* has a row */
        assert_non_null(dx_attrib_prefix_name(1u << bit));
}

/* ---- ranks from file names ---- */

static void expect_rank(const char *path, int rank, int local)
{
    int is_local = -7;
    int r = dx_attrib_rank_from_name(path, &is_local);
    if (r != rank)
        fail_msg("%s: rank %d, expected %d", path, r, rank);
    if (rank >= 0 && is_local != local)
        fail_msg("%s: is_local %d, expected %d", path, is_local, local);
    if (rank < 0)
        assert_int_equal(is_local, 0);
}

static void test_rank_from_name(void **state)
{
    (void)state;
    expect_rank("rank_3.log", 3, 0);
    expect_rank("rank3.txt", 3, 0);
    expect_rank("rank-3.out", 3, 0);
    expect_rank("logs/RANK_12.log", 12, 0);
    expect_rank("log.rank-3", 3, 0);
    expect_rank("worker_3.log", 3, 0);
    expect_rank("node0_rank3.log", 3, 0);
    expect_rank("job/node1/rank_0.log", 0, 0);
    expect_rank("/tmp/nccl_trace_rank_3", 3, 0); /* flight recorder: global */
    expect_rank("local_rank_2.log", 2, 1);
    expect_rank("localrank5.txt", 5, 1);
    expect_rank("logs/rank7/stdout.txt", 7, 0); /* a directory per rank */
    /* torchrun --log-dir */
    expect_rank("1234_abcd/attempt_0/3/stderr.log", 3, 1);
    expect_rank("logs/run-7/attempt_12/0/stdout.log", 0, 1);
    expect_rank("run/attempt_0/5/error.json", 5, 1);
    /* SLURM %t outputs */
    expect_rank("slurm-1234_3.out", 3, 0);
    expect_rank("job.1234.3.out", 3, 0);
    expect_rank("job-56789-0.err", 0, 0);

    expect_rank("resnet50.log", -1, 0);
    expect_rank("2024-05-01.log", -1, 0);
    expect_rank("2024-05-01.out", -1, 0);
    expect_rank("llama3_8b.log", -1, 0);
    expect_rank("train.log", -1, 0);
    expect_rank("myrank3.log", -1, 0);
    expect_rank("rank3of8.log", -1, 0);
    expect_rank("ranks.log", -1, 0);
    expect_rank("node_rank_1.log", -1, 0);
    expect_rank("tp_rank_0.log", -1, 0);
    expect_rank("slurm-1234.out", -1, 0);
    expect_rank("job-1234-03.out", -1, 0); /* padded: not %t */
    expect_rank("v1.2.3.out", -1, 0);
    expect_rank("attempt_0/3/other.log", -1, 0);
    expect_rank("attempt_/3/stderr.log", -1, 0);
    expect_rank("x/attempt_0/3x/stderr.log", -1, 0);
    expect_rank("", -1, 0);
    assert_int_equal(dx_attrib_rank_from_name(NULL, NULL), -1);
    assert_int_equal(dx_attrib_rank_from_name("rank_4.log", NULL), 4);
}

/* ---- time keys and formatting ---- */

static void test_time_key(void **state)
{
    (void)state;
    dx_time epoch = {.year = 1970, .month = 1, .day = 1};
    assert_int_equal(dx_time_key(&epoch, NULL), 0);
    dx_time t = {.year = 2024, .month = 5, .day = 1, .hour = 12, .sec = 1, .usec = 123456};
    assert_int_equal(dx_time_key(&t, NULL), INT64_C(1714564801123456));
    dx_time before = {.year = 1969, .month = 12, .day = 31, .hour = 23, .min = 59, .sec = 59};
    assert_int_equal(dx_time_key(&before, NULL), INT64_C(-1000000));

    /* glog: no year, taken from the default */
    dx_time glog = {.month = 5, .day = 1, .hour = 12, .sec = 1, .usec = 123456};
    dx_time def = {.year = 2024, .month = 1, .day = 1};
    assert_int_equal(dx_time_key(&glog, &def), INT64_C(1714564801123456));
    /* no date at all: the default's date */
    dx_time tod = {.hour = 12, .sec = 1, .usec = 123456};
    dx_time def2 = {.year = 2024, .month = 5, .day = 1};
    assert_int_equal(dx_time_key(&tod, &def2), INT64_C(1714564801123456));
    /* no default: 1970-01-01 stands in, keys still order within a day */
    assert_int_equal(dx_time_key(&tod, NULL), INT64_C(43201123456));
    dx_time later = tod;
    later.usec++;
    assert_true(dx_time_key(&later, NULL) > dx_time_key(&tod, NULL));
    /* a leap day */
    dx_time leap = {.year = 2024, .month = 2, .day = 29};
    dx_time mar1 = {.year = 2024, .month = 3, .day = 1};
    assert_int_equal(dx_time_key(&mar1, NULL) - dx_time_key(&leap, NULL), INT64_C(86400000000));
}

static void test_time_format(void **state)
{
    (void)state;
    char buf[64];
    dx_time t = {
        .year = 2024, .month = 5, .day = 1, .hour = 12, .sec = 1, .usec = 123456, .tz_known = 1};
    assert_int_equal(dx_time_format(&t, buf, sizeof buf), 27);
    assert_string_equal(buf, "2024-05-01T12:00:01.123456Z");
    t.tz_known = 0; /* a local time: no "Z" */
    dx_time_format(&t, buf, sizeof buf);
    assert_string_equal(buf, "2024-05-01T12:00:01.123456");
    dx_time glog = {.month = 12, .day = 18, .hour = 12, .min = 49, .sec = 9, .usec = 86536};
    dx_time_format(&glog, buf, sizeof buf);
    assert_string_equal(buf, "--12-18T12:49:09.086536");
    dx_time tod = {.hour = 3, .min = 4, .sec = 5, .usec = 6};
    dx_time_format(&tod, buf, sizeof buf);
    assert_string_equal(buf, "03:04:05.000006");
    /* truncation: snprintf's contract */
    t.tz_known = 1;
    char small[5];
    assert_int_equal(dx_time_format(&t, small, sizeof small), 27);
    assert_string_equal(small, "2024");
    assert_int_equal(dx_time_format(&t, NULL, 0), 27);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_torchrun_rank_with_torch_glog),
        cmocka_unit_test(test_torchrun_rank_keeps_indentation),
        cmocka_unit_test(test_torchrun_role),
        cmocka_unit_test(test_mpirun),
        cmocka_unit_test(test_srun),
        cmocka_unit_test(test_host),
        cmocka_unit_test(test_ray),
        cmocka_unit_test(test_glog),
        cmocka_unit_test(test_torch_glog_without_time),
        cmocka_unit_test(test_pylog),
        cmocka_unit_test(test_iso),
        cmocka_unit_test(test_syslog),
        cmocka_unit_test(test_logger_layouts),
        cmocka_unit_test(test_bracketed_times),
        cmocka_unit_test(test_nccl),
        cmocka_unit_test(test_no_prefix_and_edges),
        cmocka_unit_test(test_every_truncation),
        cmocka_unit_test(test_random_bytes),
        cmocka_unit_test(test_shortcuts_agree),
        cmocka_unit_test(test_prefix_names),
        cmocka_unit_test(test_rank_from_name),
        cmocka_unit_test(test_time_key),
        cmocka_unit_test(test_time_format),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
