/* test_live.c -- the live diagnosis on the small test knowledge base with a clock the test sets:
 * when a diagnosis is due, the digest's bounds and line numbers, rotation, and stalls (the
 * whole job, one rank silent while others progress, finished ranks, a job not yet started). */
#include "diag.h"
#include "live.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "kb_fixture.h"

#define MS 1000
#define SEC (1000 * MS)

static int setup(void **state)
{
    (void)state;
    return kb_fixture_open("kb");
}

static dx_live *live_new(int *src)
{
    dx_live *lv;
    ddx_error e = {0};
    assert_int_equal(dx_live_new(&lv, kb, 0, &e), DDX_OK);
    assert_int_equal(dx_live_add_source(lv, "<stderr>", 0, src, &e), DDX_OK);
    return lv;
}

static void feed(dx_live *lv, int src, const char *text, int64_t now)
{
    assert_int_equal(dx_live_feed(lv, src, text, strlen(text), now), DDX_OK);
}

static void test_due_after_the_burst(void **state)
{
    (void)state;
    int s;
    dx_live *lv = live_new(&s);
    feed(lv, s, "[rank0]:step 1/10 loss 1.0\n[rank1]:step 1/10 loss 1.0\n", 0);
    assert_int_equal(dx_live_due(lv), 0); /* no failure line: nothing due */
    feed(lv, s, "[rank1]:RuntimeError: boom on rank 1\n", 1 * SEC);
    /* quiet for the settle time, or the longest wait, whichever is first */
    assert_int_equal(dx_live_due(lv), 1 * SEC + DX_LIVE_SETTLE_US);
    feed(lv, s, "[rank0]:more output\n", 1 * SEC + 250 * MS);
    assert_int_equal(dx_live_due(lv), 1 * SEC + 250 * MS + DX_LIVE_SETTLE_US);
    feed(lv, s, "[rank0]:more output\n", 1 * SEC + 900 * MS);
    assert_int_equal(dx_live_due(lv), 1 * SEC + DX_LIVE_WAIT_US);
    dx_live_line t;
    dx_live_trigger(lv, &t);
    assert_int_equal(t.source, s);
    assert_int_equal((int)t.line, 3);
    assert_int_equal(t.rank, 1);
    assert_string_equal(t.text, "[rank1]:RuntimeError: boom on rank 1");
    ddx_report *rep;
    ddx_error e = {0};
    assert_int_equal(dx_live_diagnose(lv, NULL, 0, 0, &rep, &e), DDX_OK);
    assert_int_equal(dx_live_due(lv), 0); /* the diagnosis was made */
    assert_true(ddx_report_count(rep) >= 1);
    assert_string_equal(ddx_report_id(rep, 0), "t-root");
    ddx_report_free(rep);
    dx_live_free(lv);
}

/* A long output: the digest stays small, and the report's line numbers are the output's. */
static void test_digest_bounded_and_numbered(void **state)
{
    (void)state;
    int s;
    dx_live *lv = live_new(&s);
    char line[128];
    for (int i = 0; i < 50000; i++) {
        snprintf(line, sizeof line, "[rank%d]:loader: prefetched shard %d\n", i % 4, i);
        feed(lv, s, line, i);
    }
    dx_live_stats st;
    dx_live_get_stats(lv, &st);
    assert_int_equal((int)st.lines, 50000);
    /* the head, the source's tail, four ranks' tails */
    assert_true(st.kept_lines <= DX_LIVE_HEAD_LINES + DX_LIVE_TAIL + 4 * DX_LIVE_RANK_TAIL);
    feed(lv, s, "[rank2]:RuntimeError: boom on rank 2\n", 60 * SEC);
    for (int i = 0; i < 5000; i++)
        feed(lv, s, "[rank0]:loader: more\n", 61 * SEC);
    ddx_report *rep;
    ddx_error e = {0};
    assert_int_equal(dx_live_diagnose(lv, NULL, 0, 0, &rep, &e), DDX_OK);
    assert_string_equal(ddx_report_id(rep, 0), "t-root");
    assert_int_equal((int)rep->f[0].first->line, 50001);
    assert_int_equal(rep->f[0].first->rank, 2);
    assert_int_equal((int)rep->inputs[0].lines, 55001);
    assert_int_equal(ddx_report_culprit_rank(rep), 2);
    ddx_report_free(rep);
    dx_live_free(lv);
}

static void test_partial_line_and_restart(void **state)
{
    (void)state;
    int s;
    dx_live *lv = live_new(&s);
    feed(lv, s, "one\ntwo\nRuntimeError: boom ", 0);
    assert_int_equal(dx_live_due(lv), 0); /* the line has not ended */
    feed(lv, s, "on rank 3", 10);
    assert_int_equal(dx_live_end_line(lv, s, 20), DDX_OK); /* the source ended */
    dx_live_line t;
    dx_live_trigger(lv, &t);
    assert_int_equal((int)t.line, 3);
    assert_int_equal(t.rank, 3);
    /* the file was rotated: its new lines are numbered from 1 */
    assert_int_equal(dx_live_restart(lv, s, 30), DDX_OK);
    feed(lv, s, "a\nRuntimeError: boom on rank 4\n", 40);
    dx_live_trigger(lv, &t);
    assert_int_equal((int)t.line, 2);
    assert_int_equal(t.rank, 4);
    dx_live_free(lv);
}

static void steps(dx_live *lv, int s, const int *ranks, size_t n, int step, int64_t now)
{
    char line[96];
    for (size_t i = 0; i < n; i++) {
        snprintf(line, sizeof line, "[rank%d]:step %d/100 loss 0.5\n", ranks[i], step);
        feed(lv, s, line, now);
    }
}

static void test_stall_of_the_job(void **state)
{
    (void)state;
    int s;
    dx_live *lv = live_new(&s);
    dx_live_stall_opts o = {2.0, 10, 60};
    dx_live_stall st;
    assert_int_equal(dx_live_stall_check(lv, &o, 0, &st), 0);
    /* nothing printed yet: a job starting up is not stalled */
    assert_int_equal(dx_live_stall_check(lv, &o, 30 * SEC, &st), 0);
    const int both[] = {0, 1};
    for (int i = 1; i <= 5; i++)
        steps(lv, s, both, 2, i, 30 * SEC + i * 100 * MS);
    steps(lv, s, both + 1, 1, 6, 30 * SEC + 600 * MS); /* rank 1 one step ahead */
    int64_t last = 30 * SEC + 600 * MS;
    assert_int_equal(dx_live_stall_check(lv, &o, last + 1900 * MS, &st), 0);
    assert_int_equal(dx_live_stall_check(lv, &o, last + 2100 * MS, &st), 1);
    assert_int_equal(st.kind, DX_STALL_JOB);
    assert_true(st.from_option);
    assert_int_equal((int)st.nsilent, 2);
    assert_int_equal(st.silent[0], 0); /* silent longest first */
    assert_int_equal((int)st.nlagging, 1);
    assert_int_equal(st.lagging[0], 0); /* behind the others' last step */
    assert_true(st.step_s > 0.09 && st.step_s < 0.11);
    /* once per stall, until progress resumes */
    assert_int_equal(dx_live_stall_check(lv, &o, last + 5 * SEC, &st), 0);
    steps(lv, s, both, 2, 7, last + 6 * SEC);
    assert_int_equal(dx_live_stall_check(lv, &o, last + 7 * SEC, &st), 0);
    assert_int_equal(dx_live_stall_check(lv, &o, last + 8100 * MS, &st), 1);
    dx_live_free(lv);
}

static void test_one_rank_silent(void **state)
{
    (void)state;
    int s;
    dx_live *lv = live_new(&s);
    dx_live_stall_opts o = {0, 10, 0.5}; /* 10 x the median step time, at least 0.5 s */
    dx_live_stall st;
    const int all[] = {0, 1, 2}, others[] = {0, 2};
    int64_t t = 0;
    for (int i = 1; i <= 10; i++, t += 100 * MS)
        steps(lv, s, all, 3, i, t);
    /* rank 1 stops; 0 and 2 go on */
    int64_t stop = t - 100 * MS;
    for (int i = 11; i <= 25; i++, t += 100 * MS) {
        steps(lv, s, others, 2, i, t);
        int got = dx_live_stall_check(lv, &o, t, &st);
        if (t - stop < 1 * SEC) {
            assert_int_equal(got, 0);
            continue;
        }
        assert_int_equal(got, 1);
        assert_int_equal(st.kind, DX_STALL_RANKS);
        assert_false(st.from_option);
        assert_true(st.threshold_s > 0.99 && st.threshold_s < 1.01);
        assert_int_equal((int)st.nsilent, 1);
        assert_int_equal(st.silent[0], 1);
        assert_int_equal((int)st.nactive, 2);
        assert_int_equal(st.active[0], 0);
        assert_int_equal(st.active[1], 2);
        /* once */
        assert_int_equal(dx_live_stall_check(lv, &o, t + 1, &st), 0);
        break;
    }
    dx_live_rank x;
    assert_int_equal(dx_live_rank_info(lv, 1, &x), DDX_OK);
    assert_int_equal((int)x.step, 10);
    assert_string_equal(x.last_text, "step 10/100 loss 0.5");
    dx_live_free(lv);
}

static void test_finished_ranks_are_not_silent(void **state)
{
    (void)state;
    int s;
    dx_live *lv = live_new(&s);
    dx_live_stall_opts o = {1.0, 10, 60};
    dx_live_stall st;
    char line[64];
    for (int i = 1; i <= 10; i++) {
        snprintf(line, sizeof line, "[rank0]:step %d/10\n", i);
        feed(lv, s, line, i * 100 * MS);
        snprintf(line, sizeof line, "[rank1]:step %d/20\n", i);
        feed(lv, s, line, i * 100 * MS);
    }
    for (int i = 11; i <= 20; i++) {
        snprintf(line, sizeof line, "[rank1]:step %d/20\n", i);
        feed(lv, s, line, i * 100 * MS);
    }
    /* rank 0 finished its loop at 1 s: not silent while rank 1 goes on */
    assert_int_equal(dx_live_stall_check(lv, &o, 2 * SEC, &st), 0);
    /* and when both are done, the job is ending, not stalled */
    assert_int_equal(dx_live_stall_check(lv, &o, 10 * SEC, &st), 0);
    dx_live_free(lv);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_due_after_the_burst),
        cmocka_unit_test(test_digest_bounded_and_numbered),
        cmocka_unit_test(test_partial_line_and_restart),
        cmocka_unit_test(test_stall_of_the_job),
        cmocka_unit_test(test_one_rank_silent),
        cmocka_unit_test(test_finished_ranks_are_not_silent),
    };
    return cmocka_run_group_tests(tests, setup, kb_fixture_close);
}
