/* test_ras.c -- tests for ras.c: NCCL's RAS report in its JSON form (NCCL 2.29's layout,
 * src/ras/client_support.cc), refused documents, and the verdict's rules: dead processes first,
 * then a minority behind in operation count (never a majority: the few ahead only wait), then
 * ranks without data, then errors.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "ras.h"

/* One communicator of n ranks whose AllReduce counts are counts[]; missing: a rank reported
 * missing (dead when dead is set), -1 none. */
static void doc(char *buf, size_t cap, int n, const long long *counts, int missing, int dead)
{
    size_t k = 0;
    k += (size_t)snprintf(buf + k, cap - k,
                          "{\n  \"nccl_version\": \"2.29.2\",\n  \"communicators_count\": 1,\n"
                          "  \"communicators\": [\n    {\n      \"hash\": \"0xabc123\",\n"
                          "      \"size\": %d,\n      \"ranks\": [\n",
                          n);
    for (int r = 0; r < n; r++) {
        if (r == missing)
            continue;
        k += (size_t)snprintf(buf + k, cap - k,
                              "%s        {\"rank\": %d, \"host\": \"node-%d\", \"pid\": %d, "
                              "\"cuda_dev\": %d, \"nvml_dev\": %d, \"status\": {\"init_state\": "
                              "0, \"async_error\": 0, \"finalize_called\": false, "
                              "\"destroy_flag\": false, \"abort_flag\": false}, "
                              "\"collective_counts\": {\"Broadcast\": 1, \"AllReduce\": %lld}}",
                              r && !(r == 1 && missing == 0) ? ",\n" : "", r, r / 4, 100 + r, r % 4,
                              r % 4, counts[r]);
    }
    k += (size_t)snprintf(buf + k, cap - k, "\n      ],\n      \"missing_ranks\": [");
    if (missing >= 0)
        k += (size_t)snprintf(buf + k, cap - k,
                              "{\"rank\": %d, \"host\": \"node-9\", \"pid\": 999, \"cuda_dev\": 1, "
                              "\"nvml_dev\": 1, \"status\": {\"unresponsive\": true, "
                              "\"considered_dead\": %s}}",
                              missing, dead ? "true" : "false");
    k += (size_t)snprintf(buf + k, cap - k, "]\n    }\n  ],\n  \"ras\": {}\n}\n");
    assert_true(k < cap);
}

static void judge(const char *js, dx_ras_verdict *v)
{
    dx_ras r = {0};
    ddx_error e = {0};
    if (dx_ras_json(&r, "ras.json", js, strlen(js), &e) != DDX_OK)
        fail_msg("%s", e.message);
    dx_ras_judge(&r, v);
    dx_ras_fini(&r);
}

static void test_behind_minority(void **state)
{
    (void)state;
    static const long long counts[] = {50, 50, 50, 49, 50, 50, 50, 50};
    char js[8192];
    doc(js, sizeof js, 8, counts, -1, 0);
    assert_true(dx_ras_json_head(js, strlen(js)));
    dx_ras_verdict v;
    judge(js, &v);
    assert_int_equal(v.nculprits, 1);
    assert_int_equal(v.culprits[0], 3);
    assert_int_equal(v.why_kind, 2);
    assert_non_null(strstr(v.behind, "rank 3 (GPU 3, process 103 on node-0) launched AllReduce "
                                     "operations only up to 49 while the others reached 50"));
    assert_non_null(strstr(v.mismatch, "1 rank has not launched AllReduce operation 50, which the "
                                       "other 7 launched"));
}

/* Most ranks behind: the two ahead only wait, and no rank is named. */
static void test_behind_majority(void **state)
{
    (void)state;
    static const long long counts[] = {640, 640, 641, 641, 640, 640, 640, 640};
    char js[8192];
    doc(js, sizeof js, 8, counts, -1, 0);
    dx_ras_verdict v;
    judge(js, &v);
    assert_int_equal(v.nculprits, 0);
    assert_string_equal(v.behind, "");
    assert_non_null(strstr(v.mismatch, "6 ranks have not launched AllReduce operation 641"));
}

/* A dead process outranks a count: its rank is the culprit. */
static void test_dead_first(void **state)
{
    (void)state;
    static const long long counts[] = {10, 10, 10, 9, 10, 10, 10, 10};
    char js[8192];
    doc(js, sizeof js, 8, counts, 6, 1);
    dx_ras_verdict v;
    judge(js, &v);
    assert_int_equal(v.why_kind, 1);
    assert_int_equal(v.nculprits, 1);
    assert_int_equal(v.culprits[0], 6);
    assert_non_null(strstr(v.dead, "rank 6 (GPU 1, process 999 on node-9)"));
    assert_non_null(strstr(v.behind, "rank 3")); /* still said, not blamed */
    /* unresponsive but not dead: missing data, after the count */
    doc(js, sizeof js, 8, counts, 6, 0);
    judge(js, &v);
    assert_int_equal(v.why_kind, 2);
    assert_int_equal(v.culprits[0], 3);
    assert_non_null(strstr(v.missing, "rank 6 (GPU 1, process 999 on node-9) sent no data"));
}

static void test_refused(void **state)
{
    (void)state;
    dx_ras r = {0};
    ddx_error e = {0};
    const char *notras = "{\"nccl_version\": \"2.29.2\"}";
    assert_int_equal(dx_ras_json(&r, "x.json", notras, strlen(notras), &e), DDX_EFORMAT);
    assert_non_null(strstr(e.message, "x.json: not an NCCL RAS report"));
    const char *broken = "{\"communicators\": [";
    assert_int_equal(dx_ras_json(&r, "y.json", broken, strlen(broken), &e), DDX_EFORMAT);
    assert_int_equal(strncmp(e.message, "y.json:", 7), 0);
    /* odd values are skipped, not trusted */
    const char *odd = "{\"nccl_version\": \"x\", \"communicators\": [{\"hash\": 5}, {\"hash\": "
                      "\"0x1\", \"size\": \"8\", \"ranks\": [{\"rank\": -4}, 7, {\"rank\": 1, "
                      "\"pid\": \"x\"}]}]}";
    assert_int_equal(dx_ras_json(&r, "z.json", odd, strlen(odd), &e), DDX_OK);
    assert_int_equal(r.ncomms, 1);
    assert_int_equal(r.comms[0].nranks, 1);
    assert_int_equal(r.comms[0].ranks[0].pid, -1);
    dx_ras_verdict v;
    dx_ras_judge(&r, &v);
    assert_int_equal(v.nculprits, 0);
    dx_ras_fini(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_behind_minority),
        cmocka_unit_test(test_behind_majority),
        cmocka_unit_test(test_dead_first),
        cmocka_unit_test(test_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
