/* test_nearest.c -- the references closest to a failure no reference explains: the built-in
 * catalogue ranks the reference that shares a failure's distinctive words first, explains why,
 * and returns nothing for text that shares only common words. */
#include "nearest.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

static ddx_kb *kb;

static int setup(void **state)
{
    (void)state;
    ddx_error e = {0};
    return ddx_kb_open(&kb, NULL, &e);
}

static int teardown(void **state)
{
    (void)state;
    ddx_kb_close(kb);
    return 0;
}

static size_t find(const char *text, dx_nearest *out)
{
    size_t n = 99;
    assert_int_equal(dx_nearest_find(kb, text, strlen(text), out, DX_NEAREST_MAX, &n), DDX_OK);
    assert_true(n <= DX_NEAREST_MAX);
    return n;
}

static int has(const dx_nearest *v, size_t n, const char *id)
{
    for (size_t i = 0; i < n; i++)
        if (!strcmp(v[i].ref->id, id))
            return 1;
    return 0;
}

static void test_distinctive_words_rank_first(void **state)
{
    (void)state;
    dx_nearest v[DX_NEAREST_MAX];
    /* a wording no signal matches, sharing the failure's words */
    size_t n = find("SafetensorError: could not deserialize the header of shard 3: the file "
                    "looks truncated",
                    v);
    assert_true(n >= 1);
    assert_string_equal(v[0].ref->id, "safetensors-truncated-file");
    assert_non_null(strstr(v[0].why, "'safetensor"));
    for (size_t i = 1; i < n; i++)
        assert_true(v[i - 1].score >= v[i].score);
}

static void test_identifiers_split(void **state)
{
    (void)state;
    dx_nearest v[DX_NEAREST_MAX];
    /* camel case and underscores split into the words the references use */
    size_t n = find("ValueError: DistributedDataParallelFindUnusedParameters must be set; "
                    "some parameters did not receive grad (unused_parameters)",
                    v);
    assert_true(has(v, n, "ddp-unused-parameters"));
}

static void test_common_words_only(void **state)
{
    (void)state;
    dx_nearest v[DX_NEAREST_MAX];
    assert_int_equal(find("RuntimeError: the error was raised in the file", v), 0);
    assert_int_equal(find("", v), 0);
}

static void test_no_memory(void **state)
{
    (void)state;
    dx_nearest v[DX_NEAREST_MAX];
    size_t n;
    const char *t = "SafetensorError: header truncated";
    for (long k = 1; k < 6; k++) {
        dx_alloc_fail_after(k);
        int rc = dx_nearest_find(kb, t, strlen(t), v, DX_NEAREST_MAX, &n);
        dx_alloc_fail_after(0);
        assert_true(rc == DDX_OK || rc == DDX_ENOMEM);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_distinctive_words_rank_first),
        cmocka_unit_test(test_identifiers_split),
        cmocka_unit_test(test_common_words_only),
        cmocka_unit_test(test_no_memory),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
