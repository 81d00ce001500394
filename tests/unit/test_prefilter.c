/* test_prefilter.c -- the two-stage engine's promise on real logs: with the built-in knowledge
 * base (every reference signal, fact and job extractor in one Vectorscan database), every line
 * PCRE2 matches also gets a Vectorscan candidate. Vectorscan has faults where one pattern of a
 * database silently stops others from matching; this walks the corpora, the fact cases and the
 * recorded scenario logs and fails on any line it would lose. */
#include "lint.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <sys/stat.h>

static void check_dir(const ddx_kb *kb, const char *rel)
{
    char path[4096];
    struct stat sb;
    snprintf(path, sizeof path, "%s/%s", getenv("DDX_TEST_DATA"), rel);
    if (stat(path, &sb) != 0)
        return; /* the shared corpus is optional */
    dx_buf problems = {0};
    int rc = dx_prefilter_check(kb, path, rel, &problems);
    if (rc != 0)
        fail_msg("%s", problems.n ? dx_buf_cstr(&problems) : "cannot read the inputs");
    dx_buf_fini(&problems);
}

static void test_builtin_kb_on_real_logs(void **state)
{
    (void)state;
    ddx_kb *kb = NULL;
    ddx_error e = {0};
    assert_int_equal(ddx_kb_open(&kb, NULL, &e), DDX_OK);
    check_dir(kb, "../corpus");
    check_dir(kb, "../facts");
    check_dir(kb, "../scenarios/golden");
    check_dir(kb, "../context");
    check_dir(kb, "../../../shared/corpus");
    ddx_kb_close(kb);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_builtin_kb_on_real_logs),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
