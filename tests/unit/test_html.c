/* test_html.c -- the HTML report and its helpers: escaping, safe links, inline code, markup in
 * log lines shown as text, the context lines around evidence, the per-rank spans and series the
 * drawings read (jobview.c), a bounded page for a job of many ranks, allocation failures. */
#include "html.h"
#include "jobview.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "kb_fixture.h"

static int setup(void **state)
{
    (void)state;
    return kb_fixture_open("kb");
}

/* What fn wrote, as a string the caller frees. */
typedef struct mem {
    char *p;
    size_t n;
    FILE *f;
} mem;

static FILE *mem_open(mem *m)
{
    m->p = NULL;
    m->n = 0;
    m->f = open_memstream(&m->p, &m->n);
    assert_non_null(m->f);
    return m->f;
}

static char *mem_close(mem *m)
{
    assert_int_equal(fclose(m->f), 0);
    return m->p;
}

static ddx_report *diagnose(size_t n, const char *const *bufs)
{
    ddx_job *job;
    ddx_report *rep = NULL;
    ddx_error e = {0};
    assert_int_equal(ddx_job_new(&job, kb, &e), DDX_OK);
    for (size_t i = 0; i < n; i++)
        assert_int_equal(
            ddx_job_add_buffer(job, bufs[2 * i], bufs[2 * i + 1], strlen(bufs[2 * i + 1]), &e),
            DDX_OK);
    assert_int_equal(ddx_job_diagnose(job, 0, &rep, &e), DDX_OK);
    ddx_job_free(job);
    return rep;
}

static char *report_html(const ddx_report *rep, int flags)
{
    mem m;
    ddx_error e = {0};
    assert_int_equal(ddx_report_write_html(rep, flags, mem_open(&m), &e), DDX_OK);
    return mem_close(&m);
}

static void test_escape(void **state)
{
    (void)state;
    mem m;
    FILE *f = mem_open(&m);
    dx_html_text(f, "a<b>&\"'\x01\x7f\tc\n");
    dx_html_text(f, NULL);
    char *s = mem_close(&m);
    assert_string_equal(s, "a&lt;b&gt;&amp;&quot;&#39;\xef\xbf\xbd\xef\xbf\xbd\tc\n");
    free(s);
    f = mem_open(&m);
    dx_html_inline(f, "run `a<b` then `x` and a lone ` quote");
    s = mem_close(&m);
    assert_string_equal(s, "run <code>a&lt;b</code> then <code>x</code> and a lone ` quote");
    free(s);
}

static void test_links(void **state)
{
    (void)state;
    assert_true(dx_html_url_ok("https://github.com/pytorch/pytorch/issues/1"));
    assert_true(dx_html_url_ok("ref/cuda-oom.html"));
    assert_true(dx_html_url_ok("../index.html#cat-nccl"));
    assert_false(dx_html_url_ok("javascript:alert(1)"));
    assert_false(dx_html_url_ok("JavaScript:alert(1)"));
    assert_false(dx_html_url_ok("data:text/html,<script>"));
    assert_false(dx_html_url_ok("https://x.org/\"onmouseover=alert(1)"));
    assert_false(dx_html_url_ok(""));
    mem m;
    FILE *f = mem_open(&m);
    dx_html_link(f, "javascript:alert(1)", NULL);
    dx_html_link(f, "https://example.org/?a=1&b=2", "x<y");
    char *s = mem_close(&m);
    assert_string_equal(s, "javascript:alert(1)<a href=\"https://example.org/?a=1&amp;b=2\">"
                           "x&lt;y</a>");
    free(s);
}

/* A log line's markup is text in the page: escaped in the evidence, its context, the timeline's
 * tooltips and the ranks table; the page has no script, image or event handler of its own. */
static void test_markup_stays_text(void **state)
{
    (void)state;
    const char *const in[] = {
        "rank1.log",
        "2024-05-01 12:00:00,000 start <script>alert(1)</script>\n"
        "2024-05-01 12:00:01,000 RuntimeError: boom on rank 1 \"><img src=x onerror=alert(2)>\n"
        "2024-05-01 12:00:02,000 after it <b>bold</b>\n",
        "upload<script>.log",
        "2024-05-01 12:00:09,000 Timed out waiting for peers\n",
    };
    ddx_report *rep = diagnose(2, in);
    assert_true(ddx_report_count(rep) >= 1);
    char *s = report_html(rep, 0);
    assert_null(strstr(s, "<script"));
    assert_null(strstr(s, "<img"));
    assert_null(strstr(s, "<b>"));
    assert_null(strstr(s, "\"><img"));
    assert_non_null(strstr(s, "boom on rank 1 &quot;&gt;&lt;img src=x onerror=alert(2)&gt;"));
    /* the lines before and after the evidence line, numbered */
    assert_non_null(strstr(s, "<span class=\"n\">1</span>2024-05-01 12:00:00,000 start "
                              "&lt;script&gt;alert(1)&lt;/script&gt;"));
    assert_non_null(strstr(s, "<span class=\"n\">3</span>2024-05-01 12:00:02,000 after it "
                              "&lt;b&gt;bold&lt;/b&gt;"));
    assert_non_null(strstr(s, "upload&lt;script&gt;.log"));
    assert_non_null(strstr(s, "default-src 'none'"));
    assert_null(strstr(s, "script-src"));
    /* not in the site: ids are not links */
    assert_null(strstr(s, "href=\"ref/"));
    free(s);
    s = report_html(rep, DDX_HTML_SITE);
    assert_non_null(strstr(s, "<a href=\"ref/t-root.html\"><code>t-root</code></a>"));
    assert_non_null(strstr(s, "href=\"diagnose\""));
    free(s);
    ddx_report_free(rep);
}

/* Each rank's first and last line, in reading order and in time; the step-time series oldest
 * first, the most recent DX_VIEW_SERIES_MAX of them. */
static void test_spans_and_series(void **state)
{
    (void)state;
    char *a = NULL;
    size_t na = 0;
    FILE *f = open_memstream(&a, &na);
    for (int i = 0; i < 100; i++)
        fprintf(f, "2024-05-01 12:%02d:%02d,000 step %d step_time %d.5s\n", i / 60, i % 60, i,
                i < 90 ? 1 : 2);
    fclose(f);
    const char *const in[] = {"rank2.log", a, "rank0.log",
                              "no time here\n2024-05-01 13:00:00,000 last\n"};
    ddx_report *rep = diagnose(2, in);
    free(a);
    dx_rank_info v;
    assert_true(dx_view_rank(rep, 2, &v));
    assert_int_equal(v.first_seq & 0xffffffffffu, 1);
    assert_int_equal(v.last_seq & 0xffffffffffu, 100);
    assert_true(v.has_first_time && v.has_last_time);
    assert_int_equal(v.first_time.min, 0);
    assert_int_equal(v.last_time.min, 1);
    assert_int_equal(v.last_time.sec, 39);
    assert_int_equal(v.last_key - v.first_key, INT64_C(99) * 1000000);
    assert_false(dx_view_rank(rep, 1, &v));
    assert_true(dx_view_rank(rep, 0, &v));
    assert_int_equal(v.first_seq >> 40, 1); /* the second input */
    assert_int_equal(v.first_seq & 0xffffffffffu, 1);
    assert_int_equal(v.first_time.hour, 13); /* the first line with a time */
    assert_int_equal(dx_view_rank_count(rep), 2);
    double s[DX_VIEW_SERIES_MAX];
    size_t n = dx_view_series(rep, 2, DX_SERIES_STEP, s, DX_VIEW_SERIES_MAX);
    assert_int_equal(n, DX_VIEW_SERIES_MAX);
    assert_true(s[0] == 1.5);      /* step 36 */
    assert_true(s[n - 11] == 1.5); /* step 89 */
    assert_true(s[n - 10] == 2.5); /* step 90 */
    assert_true(s[n - 1] == 2.5);
    n = dx_view_series(rep, 2, DX_SERIES_STEP, s, 3);
    assert_int_equal(n, 3);
    assert_true(s[0] == 2.5 && s[2] == 2.5);
    assert_int_equal(dx_view_series(rep, 2, DX_SERIES_LOSS, s, DX_VIEW_SERIES_MAX), 0);
    assert_int_equal(dx_view_series_mark(rep, 2, DX_SERIES_LOSS), -1);
    char *html = report_html(rep, 0);
    assert_non_null(strstr(html, "id=\"plots\""));
    assert_non_null(strstr(html, "Step time"));
    free(html);
    ddx_report_free(rep);
}

static size_t count(const char *s, const char *what)
{
    size_t n = 0;
    for (const char *p = s; (p = strstr(p, what)) != NULL; p++)
        n++;
    return n;
}

/* A job of 3000 ranks with step times and a failure: the page stays small and draws a bounded
 * number of ranks, the failed one among them. */
static void test_bounded_for_many_ranks(void **state)
{
    (void)state;
    dx_buf b = {0};
    for (int step = 0; step < 70; step++)
        for (int r = 0; r < 3000; r++)
            dx_buf_addf(&b, "[rank%d]: 2024-05-01 12:%02d:%02d,000 step_time %.2fs\n", r, step / 60,
                        step % 60, r == 1234 ? 0.9 : 0.5);
    dx_buf_addf(&b, "[rank2999]: 2024-05-01 12:02:00,000 RuntimeError: boom on rank 2999\n");
    const char *const in[] = {"console.log", dx_buf_cstr(&b)};
    ddx_report *rep = diagnose(1, in);
    dx_buf_fini(&b);
    assert_int_equal(dx_view_rank_count(rep), 3000);
    char *s = report_html(rep, 0);
    size_t len = strlen(s);
    assert_true(len < 400 * 1024);
    assert_int_equal(count(s, "<rect class=\"bar"), 48);
    assert_non_null(strstr(s, ">rank 2999 ★</text>"));
    assert_non_null(strstr(s, "48 of 3000 ranks drawn"));
    assert_non_null(strstr(s, "64 of 3000 ranks listed"));
    assert_non_null(strstr(s, "of each of 3000 ranks"));
    free(s);
    ddx_report_free(rep);
}

/* A job without times: the timeline runs in reading order. A job with nothing found still
 * makes a page. */
static void test_no_times_and_no_finding(void **state)
{
    (void)state;
    const char *const in[] = {"console.log", "[rank0]: hello\n[rank1]: RuntimeError: boom on "
                                             "rank 1\n[rank0]: still here\n"};
    ddx_report *rep = diagnose(1, in);
    char *s = report_html(rep, 0);
    assert_non_null(strstr(s, "the axis is the order in which lines were read"));
    assert_non_null(strstr(s, ">line 1</text>"));
    free(s);
    ddx_report_free(rep);
    const char *const calm[] = {"calm.log", "all good\n"};
    rep = diagnose(1, calm);
    s = report_html(rep, 0);
    assert_non_null(strstr(s, "No known failure found"));
    assert_null(strstr(s, "id=\"timeline\""));
    free(s);
    ddx_report_free(rep);
}

static void test_allocation_failures(void **state)
{
    (void)state;
    const char *text = "2024-05-01 12:00:00,000 step_time 0.5s\n"
                       "2024-05-01 12:00:01,000 step_time 0.5s\n"
                       "2024-05-01 12:00:02,000 RuntimeError: boom on rank 1\n"
                       "after\n";
    for (long n = 1; n < 300; n++) {
        ddx_job *job = NULL;
        ddx_report *rep = NULL;
        ddx_error e = {0};
        dx_alloc_fail_after(n);
        int rc = ddx_job_new(&job, kb, &e);
        if (!rc)
            rc = ddx_job_add_buffer(job, "rank1.log", text, strlen(text), &e);
        if (!rc)
            rc = ddx_job_diagnose(job, 0, &rep, &e);
        if (!rc) {
            mem m;
            rc = ddx_report_write_html(rep, 0, mem_open(&m), &e);
            free(mem_close(&m));
        }
        dx_alloc_fail_after(0);
        assert_true(rc == DDX_OK || rc == DDX_ENOMEM);
        ddx_report_free(rep);
        ddx_job_free(job);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_escape),
        cmocka_unit_test(test_links),
        cmocka_unit_test(test_markup_stays_text),
        cmocka_unit_test(test_spans_and_series),
        cmocka_unit_test(test_bounded_for_many_ranks),
        cmocka_unit_test(test_no_times_and_no_finding),
        cmocka_unit_test(test_allocation_failures),
    };
    return cmocka_run_group_tests(tests, setup, kb_fixture_close);
}
