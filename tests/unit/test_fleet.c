/* test_fleet.c -- the fleet store: the upper tail of the host test against binomial sums, time
 * parsing, a store of the first schema upgraded with its rows kept, and a small report. */
#include "fleet.h"

#include <math.h>
#include <setjmp.h>
#include <sqlite3.h>
#include <stdarg.h>
#include <stddef.h>
#include <unistd.h>
#include <cmocka.h>

static double binom_tail(int n, double p, int k)
{
    double s = 0;
    for (int i = k; i <= n; i++)
        s += exp(lgamma(n + 1) - lgamma(i + 1) - lgamma(n - i + 1) + i * log(p) +
                 (n - i) * log1p(-p));
    return s;
}

static void test_tail(void **state)
{
    (void)state;
    double p[40];
    for (int i = 0; i < 40; i++)
        p[i] = 0.5;
    assert_true(fabs(dx_fleet_tail(p, 10, 8) - 56.0 / 1024) < 1e-15);
    assert_true(dx_fleet_tail(p, 10, 0) == 1.0);
    assert_true(dx_fleet_tail(p, 10, 11) == 0.0);
    /* a tiny tail keeps its precision (no 1 - almost 1) */
    for (int i = 0; i < 40; i++)
        p[i] = 0.01;
    double want = binom_tail(40, 0.01, 20), got = dx_fleet_tail(p, 40, 20);
    assert_true(want > 0 && want < 1e-20);
    assert_true(fabs(got - want) / want < 1e-9);
    /* unequal chances: one sure trial and one never */
    const double q[] = {1.0, 0.0, 0.5};
    assert_true(fabs(dx_fleet_tail(q, 3, 2) - 0.5) < 1e-15);
    assert_true(dx_fleet_tail(q, 3, 3) == 0.0);
}

static void test_when(void **state)
{
    (void)state;
    int64_t t;
    assert_int_equal(dx_fleet_parse_when("2026-01-02T03:04:05Z", 0, &t), 0);
    assert_int_equal((long long)t, 1767323045LL);
    assert_int_equal(dx_fleet_parse_when("2026-01-02T05:04:05+02:00", 0, &t), 0);
    assert_int_equal((long long)t, 1767323045LL);
    assert_int_equal(dx_fleet_parse_when("2026-01-02T03:04:05.250Z", 0, &t), 0);
    assert_int_equal((long long)t, 1767323045LL);
    assert_int_equal(dx_fleet_parse_when("7d", 1000000, &t), 0);
    assert_int_equal((long long)t, 1000000 - 7 * 86400);
    assert_int_equal(dx_fleet_parse_when("90m", 10000, &t), 0);
    assert_int_equal((long long)t, 10000 - 5400);
    assert_int_equal(dx_fleet_parse_when("yesterday", 0, &t), -1);
    assert_int_equal(dx_fleet_parse_when("2026-13-01", 0, &t), -1);
    assert_int_equal(dx_fleet_parse_when("2026-01-02T03:04:05Q", 0, &t), -1);
}

static void temp_db(char *path, size_t cap)
{
    snprintf(path, cap, "/tmp/ddx-test-fleet-XXXXXX");
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    unlink(path); /* a new store: no file yet */
}

static void remove_db(const char *path)
{
    char p[300];
    unlink(path);
    snprintf(p, sizeof p, "%s-wal", path);
    unlink(p);
    snprintf(p, sizeof p, "%s-shm", path);
    unlink(p);
}

/* A store of schema 1 (before the per-host table) keeps its jobs when upgraded, and gains the
 * hosts of each from the nodes column. */
static void test_migration(void **state)
{
    (void)state;
    char path[256];
    temp_db(path, sizeof path);
    dx_fleet *f;
    ddx_error e = {0};
    assert_int_equal(dx_fleet_open(&f, path, 0, 1, &e), DDX_OK);
    assert_int_equal(dx_fleet_version(f), 1);
    dx_fleet_close(f);
    sqlite3 *db;
    assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
    assert_int_equal(
        sqlite3_exec(db,
                     "INSERT INTO jobs (job_key, job_id, nodes, nnodes, culprit_rank, "
                     "culprit_host, report_sha, report, recorded_at) VALUES ('c/1', '1', "
                     "'gpu1,gpu2,gpu3', 3, 9, 'gpu2', 'x', '{}', 0)",
                     NULL, NULL, NULL),
        SQLITE_OK);
    sqlite3_close(db);
    assert_int_equal(dx_fleet_open(&f, path, 0, 0, &e), DDX_OK);
    assert_int_equal(dx_fleet_version(f), DX_FLEET_SCHEMA);
    dx_fleet_close(f);
    assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
    sqlite3_stmt *st;
    assert_int_equal(sqlite3_prepare_v2(db,
                                        "SELECT group_concat(host, ' ') FROM (SELECT host FROM "
                                        "job_nodes ORDER BY host)",
                                        -1, &st, NULL),
                     SQLITE_OK);
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    assert_string_equal((const char *)sqlite3_column_text(st, 0), "gpu1 gpu2 gpu3");
    sqlite3_finalize(st);
    sqlite3_close(db);
    remove_db(path);
}

static void test_record_and_report(void **state)
{
    (void)state;
    char path[256];
    temp_db(path, sizeof path);
    dx_fleet *f;
    ddx_error e = {0};
    assert_int_equal(dx_fleet_open(&f, path, 0, 0, &e), DDX_OK);
    static const char *const reps[] = {
        "{\"schema\":1,\"culprit_rank\":3,\"diagnoses\":[{\"id\":\"cuda-oom\",\"title\":\"OOM\","
        "\"category\":\"cuda\",\"level\":\"confirmed\",\"confidence\":0.9}],\"job\":{\"id\":"
        "\"11\",\"nodes\":[\"a\",\"b\"],\"task_nodes\":[\"a\",\"a\",\"b\",\"b\"],\"start\":"
        "\"2026-01-10T00:00:00Z\",\"end\":\"2026-01-10T03:00:00Z\"}}",
        "{\"schema\":1,\"culprit_rank\":null,\"diagnoses\":[{\"id\":\"cuda-oom\"}],\"job\":"
        "{\"id\":12,\"nodes\":[\"a\"],\"start\":\"2026-01-11T00:00:00Z\",\"end\":"
        "\"2026-01-11T01:00:00Z\"}}",
        "{\"schema\":1,\"culprit_rank\":null,\"diagnoses\":[],\"job\":{\"id\":\"13\",\"end\":"
        "\"2026-01-03T00:00:00Z\"}}",
    };
    for (size_t i = 0; i < 3; i++) {
        int outcome;
        assert_int_equal(dx_fleet_record(f, reps[i], strlen(reps[i]), NULL, "test", &outcome, &e),
                         DDX_OK);
        assert_int_equal(outcome, DX_FLEET_INSERTED);
    }
    int outcome;
    assert_int_equal(dx_fleet_record(f, "[1]", 3, NULL, "x.json", &outcome, &e), DDX_EFORMAT);
    assert_non_null(strstr(e.message, "x.json: not a ddx report"));
    int64_t since, until;
    assert_int_equal(dx_fleet_parse_when("2026-01-08", 0, &since), 0);
    assert_int_equal(dx_fleet_parse_when("2026-01-15", 0, &until), 0);
    json_t *rep;
    assert_int_equal(dx_fleet_report(f, since, until, 0.01, &rep, &e), DDX_OK);
    assert_int_equal(json_integer_value(json_object_get(rep, "jobs")), 2);
    /* 2 nodes x 3 h + 1 node x 1 h */
    assert_true(fabs(json_real_value(json_object_get(rep, "node_hours_lost")) - 7.0) < 1e-9);
    json_t *c = json_array_get(json_object_get(rep, "classes"), 0);
    assert_string_equal(json_string_value(json_object_get(c, "id")), "cuda-oom");
    assert_int_equal(json_integer_value(json_object_get(c, "jobs")), 2);
    assert_string_equal(json_string_value(json_object_get(c, "trend")), "new");
    /* the one job with a known culprit on two hosts: rank 3 is on host b */
    json_t *t = json_object_get(rep, "host_test");
    assert_int_equal(json_integer_value(json_object_get(t, "jobs_considered")), 1);
    assert_int_equal(json_array_size(json_object_get(rep, "bad_hosts")), 0);
    json_decref(rep);
    dx_fleet_close(f);
    remove_db(path);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tail),
        cmocka_unit_test(test_when),
        cmocka_unit_test(test_migration),
        cmocka_unit_test(test_record_and_report),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
