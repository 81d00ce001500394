/* test_sigcond.c -- the conditions on a signal (src/sigcond.c): at_end, after, not_followed_by,
 * repeats with missing/out_of, differs, and markers, each shown to count where it should and
 * not where it should not, over the references of tests/data/kb-sigcond. */
#include "diag.h"
#include "lint.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "kb_fixture.h"

static int setup(void **state)
{
    (void)state;
    return kb_fixture_open("kb-sigcond");
}

/* Diagnoses the (name, text) buffers with only the test references. */
static ddx_report *run(size_t n, const char *const *bufs)
{
    ddx_job *job;
    ddx_report *rep = NULL;
    ddx_error e = {0};
    assert_int_equal(ddx_job_new(&job, kb, &e), DDX_OK);
    for (size_t i = 0; i < n; i++)
        assert_int_equal(
            ddx_job_add_buffer(job, bufs[2 * i], bufs[2 * i + 1], strlen(bufs[2 * i + 1]), &e),
            DDX_OK);
    assert_int_equal(ddx_job_diagnose(job, DDX_DIAG_ALL, &rep, &e), DDX_OK);
    ddx_job_free(job);
    return rep;
}

/* The hits signal id of t-conditions counted. */
static const dx_sighits *hits(const ddx_report *rep, const char *id)
{
    static const dx_sighits none;
    for (size_t s = 0; s < rep->kb->nsig; s++)
        if (DX_SIG_IS_REF(rep->kb->sig_ref[s]) &&
            !strcmp(rep->kb->refs[rep->kb->sig_ref[s]]->id, "t-conditions") &&
            !strcmp(rep->kb->sigs[s]->id, id))
            return rep->hits[s] ? rep->hits[s] : &none;
    fail_msg("no signal %s", id);
    return &none;
}

static void test_at_end(void **state)
{
    (void)state;
    /* the last line of its input, nothing failing: counts, and only that line */
    const char *const ends[] = {"a.log", "phase begins: setup\nstep 1\nphase begins: eval\n\n"};
    ddx_report *rep = run(1, ends);
    assert_int_equal(hits(rep, "phase")->count, 1);
    assert_int_equal(hits(rep, "phase")->ev[0].line, 3);
    ddx_report_free(rep);
    /* a later line in its input */
    const char *const later[] = {"a.log", "phase begins: eval\nstep 2\n"};
    rep = run(1, later);
    assert_int_equal(hits(rep, "phase")->count, 0);
    ddx_report_free(rep);
    /* a failure line in another input */
    const char *const failed[] = {"a.log", "phase begins: eval\n", "b.log", "fatal crash here\n"};
    rep = run(2, failed);
    assert_int_equal(hits(rep, "phase")->count, 0);
    ddx_report_free(rep);
    /* a rule of dashes that closes a banner is no later line; a line with a word is */
    const char *const rule[] = {"a.log", "phase begins: eval\n------------\n=====\n"};
    rep = run(1, rule);
    assert_int_equal(hits(rep, "phase")->count, 1);
    ddx_report_free(rep);
    const char *const word[] = {"a.log", "phase begins: eval\n------------\n-- ok --\n"};
    rep = run(1, word);
    assert_int_equal(hits(rep, "phase")->count, 0);
    ddx_report_free(rep);
    /* a poster's mark that lines were left out: the log went on, so it was not the last line */
    static const char *const marks[] = {"[...]",  "...",         "  \xe2\x80\xa6",
                                        "<snip>", "(truncated)", "[\xe2\x80\xa6]"};
    for (size_t k = 0; k < sizeof marks / sizeof *marks; k++) {
        char text[80];
        snprintf(text, sizeof text, "phase begins: eval\n%s\n", marks[k]);
        const char *const cut[] = {"a.log", text};
        rep = run(1, cut);
        assert_int_equal(hits(rep, "phase")->count, 0);
        ddx_report_free(rep);
    }
    /* two dots or a lone bracket are no such mark */
    const char *const notmark[] = {"a.log", "phase begins: eval\n..\n[]\n"};
    rep = run(1, notmark);
    assert_int_equal(hits(rep, "phase")->count, 1);
    ddx_report_free(rep);
    /* two inputs each ending on one: both count */
    const char *const two[] = {"a.log", "phase begins: eval\n", "b.log", "x\nphase begins: gen\n"};
    rep = run(2, two);
    assert_int_equal(hits(rep, "phase")->count, 2);
    ddx_report_free(rep);
}

static void test_after_marker(void **state)
{
    (void)state;
    const char *const in[] = {"a.log", "timed out in barrier\nloop ended\ntimed out in gather\n",
                              "b.log", "timed out in scatter\n"};
    ddx_report *rep = run(2, in);
    /* only the line after the marker, in the marker's input; the marker itself is no evidence */
    assert_int_equal(hits(rep, "late-timeout")->count, 1);
    assert_non_null(strstr(hits(rep, "late-timeout")->ev[0].text, "gather"));
    assert_int_equal(hits(rep, "loop-end")->count, 0);
    ddx_report_free(rep);
}

static void test_not_followed_by(void **state)
{
    (void)state;
    const char *const in[] = {"a.log", "waiting for peers\npeers arrived\n", "b.log",
                              "peers arrived\nwaiting for peers\nwaiting for peers\n"};
    ddx_report *rep = run(2, in);
    /* a.log's wait was answered; b.log's two were not */
    assert_int_equal(hits(rep, "waiting")->count, 2);
    assert_int_equal(hits(rep, "waiting")->ev[0].input, 1);
    ddx_report_free(rep);
}

static void test_repeats_and_missing(void **state)
{
    (void)state;
    /* member 1 joined twice and member 2 of 3 never: counts (the repeated lines) */
    const char *const dup[] = {
        "a.log", "member 0 of 3 joined\nmember 1 of 3 joined\nmember 1 of 3 joined\n"};
    ddx_report *rep = run(1, dup);
    assert_int_equal(hits(rep, "announce")->count, 2);
    ddx_report_free(rep);
    /* every member once: no repeat */
    const char *const once[] = {
        "a.log", "member 0 of 3 joined\nmember 1 of 3 joined\nmember 2 of 3 joined\n"};
    rep = run(1, once);
    assert_int_equal(hits(rep, "announce")->count, 0);
    ddx_report_free(rep);
    /* a repeat, but every member present: a log read twice, not a missing rank */
    const char *const full[] = {
        "a.log", "member 0 of 2 joined\nmember 1 of 2 joined\nmember 1 of 2 joined\n"};
    rep = run(1, full);
    assert_int_equal(hits(rep, "announce")->count, 0);
    ddx_report_free(rep);
    /* the same member in two inputs (a console copy beside the rank's file) is no repeat */
    const char *const copies[] = {"a.log", "member 1 of 3 joined\n", "b.log",
                                  "member 1 of 3 joined\n"};
    rep = run(2, copies);
    assert_int_equal(hits(rep, "announce")->count, 0);
    ddx_report_free(rep);
}

static void test_differs(void **state)
{
    (void)state;
    const char *const in[] = {
        "a.log", "rank 0 has 8 batches\nrank 1 has 8 batches\nrank 2 has 12 batches\n"};
    ddx_report *rep = run(1, in);
    assert_int_equal(hits(rep, "batches")->count, 1);
    assert_int_equal(hits(rep, "batches")->ev[0].blamed, 2);
    ddx_report_free(rep);
    /* two ranks: neither is the odd one */
    const char *const two[] = {"a.log", "rank 0 has 8 batches\nrank 1 has 12 batches\n"};
    rep = run(1, two);
    assert_int_equal(hits(rep, "batches")->count, 0);
    ddx_report_free(rep);
    /* three values: no one rank against an agreeing rest */
    const char *const three[] = {"a.log",
                                 "rank 0 has 8 batches\nrank 1 has 10 batches\nrank 2 has 12 "
                                 "batches\n"};
    rep = run(1, three);
    assert_int_equal(hits(rep, "batches")->count, 0);
    ddx_report_free(rep);
}

static void test_not_after(void **state)
{
    (void)state;
    /* a.log: lost before the give-up counts, lost after it does not; b.log: its own input */
    const char *const in[] = {"a.log",
                              "store connection lost\ngave up waiting\nstore connection lost\n",
                              "b.log", "store connection lost\n"};
    ddx_report *rep = run(2, in);
    assert_int_equal(hits(rep, "store-lost")->count, 2);
    assert_int_equal(hits(rep, "store-lost")->ev[0].line, 1);
    assert_int_equal(hits(rep, "store-lost")->ev[1].input, 1);
    assert_int_equal(hits(rep, "store-gave-up")->count, 0);
    ddx_report_free(rep);
}

/* A reference with a marker no signal names, a condition naming an unknown signal, a capture
 * the pattern lacks: lint says each. */
static void test_lint(void **state)
{
    (void)state;
    dx_signal s[3] = {{"m", DX_ROLE_MARKER, 1.0, "marker line", NULL, 0},
                      {"x", DX_ROLE_SYMPTOM, 1.0, "x (?<a>\\d+)", NULL, 0},
                      {"y", DX_ROLE_SYMPTOM, 1.0, "y line", NULL, 0}};
    dx_sigcond c[3] = {{0},
                       {0, "nope", NULL, "b", "a", NULL, NULL, "zz"},
                       {0, NULL, "y", NULL, NULL, NULL, NULL, NULL}};
    dx_ref r = {0};
    r.id = "t-lint";
    r.file = "test/t-lint.md";
    r.kind = "hang";
    r.signals = s;
    r.nsignals = 3;
    r.conds = c;
    dx_buf problems = {0};
    assert_int_equal(dx_lint_conditions(&r, &problems), 1);
    const char *p = dx_buf_cstr(&problems);
    assert_non_null(strstr(p, "'m': a marker is no evidence; give it weight 0"));
    assert_non_null(
        strstr(p, "'m': no signal's after, not_after or not_followed_by names this marker"));
    assert_non_null(strstr(p, "'x': after names 'nope', no signal of this reference"));
    assert_non_null(strstr(p, "'x': not_after names 'zz', no signal of this reference"));
    assert_non_null(strstr(p, "'x': repeats names the capture 'b'"));
    assert_non_null(strstr(p, "'x': missing and out_of go together"));
    assert_non_null(strstr(p, "'y': not_followed_by names the signal itself"));
    dx_buf_fini(&problems);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_at_end),
        cmocka_unit_test(test_after_marker),
        cmocka_unit_test(test_not_followed_by),
        cmocka_unit_test(test_repeats_and_missing),
        cmocka_unit_test(test_differs),
        cmocka_unit_test(test_not_after),
        cmocka_unit_test(test_lint),
    };
    return cmocka_run_group_tests(tests, setup, kb_fixture_close);
}
