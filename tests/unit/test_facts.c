/* test_facts.c -- version comparison, ranges, conditions and the fact store. */
#include "facts.h"

#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>
#include <sys/stat.h>

static void test_version_order(void **state)
{
    (void)state;
    static const char *const ascending[] = {
        "0.9.5",           "0.14.0", "0.14.2",      "0.15",   "1.13.0a0", "1.13.1",
        "2.1.0a0+git1234", "2.1.0",  "2.5.1+cu121", "2.10.0", "12.2"};
    for (size_t i = 0; i + 1 < sizeof ascending / sizeof *ascending; i++) {
        assert_true(dx_version_cmp(ascending[i], ascending[i + 1]) < 0);
        assert_true(dx_version_cmp(ascending[i + 1], ascending[i]) > 0);
    }
    assert_int_equal(dx_version_cmp("2.5", "2.5.0"), 0);
    assert_int_equal(dx_version_cmp("2.5.1+cu121", "2.5.1"), 0);
    assert_true(dx_version_cmp("2.0.0rc1", "2.0.0") < 0);
    assert_true(dx_version_cmp("0.14.0.dev0", "0.14.0") < 0);
}

static void test_version_range(void **state)
{
    (void)state;
    assert_true(dx_version_in_range("0.14.2", ">=0.14.0,<0.15"));
    assert_false(dx_version_in_range("0.15.0", ">=0.14.0,<0.15"));
    assert_false(dx_version_in_range("0.13.9", ">=0.14.0, <0.15"));
    assert_true(dx_version_in_range("2.5.1+cu121", ">=2.5"));
    assert_true(dx_version_in_range("2.4.0", "!=2.5.0"));
    assert_true(dx_version_in_range("2.4.0", "==2.4"));
}

static void test_conditions(void **state)
{
    (void)state;
    dx_facts f = {0};
    assert_int_equal(dx_facts_set(&f, "deepspeed.version", " 0.14.2 ", 8, "env.txt", 14), DDX_OK);
    assert_int_equal(dx_facts_set(&f, "deepspeed.zero_stage", "3", 1, "ds.json", 0), DDX_OK);
    assert_int_equal(dx_facts_set(&f, "ddp.find_unused_parameters", "False", 5, "log", 2), DDX_OK);
    /* the first value wins */
    assert_int_equal(dx_facts_set(&f, "deepspeed.zero_stage", "2", 1, "other.json", 0), DDX_OK);
    assert_string_equal(dx_facts_get(&f, "deepspeed.version")->value, "0.14.2");
    assert_string_equal(dx_facts_get(&f, "deepspeed.zero_stage")->value, "3");

    dx_cond c = {"deepspeed.version", DX_OP_RANGE, ">=0.14,<0.15", 1.0, NULL, 0, 0};
    dx_fact *used = NULL;
    assert_int_equal(dx_cond_eval(&c, &f, &used), 1);
    assert_non_null(used);
    assert_int_equal(used->line, 14);
    dx_cond stage = {"deepspeed.zero_stage", DX_OP_EQUALS, "3", 1.0, NULL, 0, 0};
    assert_int_equal(dx_cond_eval(&stage, &f, NULL), 1);
    dx_cond stage2 = {"deepspeed.zero_stage", DX_OP_EQUALS, "2", 1.0, NULL, 0, 0};
    assert_int_equal(dx_cond_eval(&stage2, &f, NULL), 0);
    dx_cond b = {"ddp.find_unused_parameters", DX_OP_EQUALS, "false", 1.0, NULL, 0, 0};
    assert_int_equal(dx_cond_eval(&b, &f, NULL), 1);
    dx_cond re = {"deepspeed.version", DX_OP_MATCHES, "^0\\.1[45]\\.", 1.0, NULL, 0, 0};
    assert_int_equal(dx_cond_eval(&re, &f, NULL), 1);
    dx_cond re2 = {"deepspeed.version", DX_OP_MATCHES, "^0\\.9|^0\\.10", 1.0, NULL, 0, 0};
    assert_int_equal(dx_cond_eval(&re2, &f, NULL), 0);
    assert_int_equal(dx_facts_set(&f, "nccl.timeout_ms", "600000", 6, "log", 7), DDX_OK);
    assert_int_equal(dx_facts_derive(&f), DDX_OK);
    assert_string_equal(dx_facts_get(&f, "nccl.timeout_s")->value, "600");
    dx_cond missing = {"torch.version", DX_OP_RANGE, ">=2", 1.0, NULL, 0, 0};
    assert_int_equal(dx_cond_eval(&missing, &f, NULL), -1);
    dx_cond exists = {"torch.version", DX_OP_EXISTS, "false", 1.0, NULL, 0, 0};
    assert_int_equal(dx_cond_eval(&exists, &f, NULL), 1);
    dx_cond exists2 = {"torch.version", DX_OP_EXISTS, "true", 1.0, NULL, 0, 0};
    assert_int_equal(dx_cond_eval(&exists2, &f, NULL), -1); /* unseen is not disproved */
    dx_cond exists3 = {"deepspeed.version", DX_OP_EXISTS, "true", 1.0, NULL, 0, 0};
    assert_int_equal(dx_cond_eval(&exists3, &f, NULL), 1);
    dx_facts_fini(&f);
}

static void test_config_json(void **state)
{
    (void)state;
    dx_facts f = {0};
    const char *cfg =
        "{\"train_batch_size\": 64, \"zero_optimization\": {\"stage\": 3, "
        "\"offload_optimizer\": {\"device\": \"cpu\"}}, \"bf16\": {\"enabled\": true}}";
    assert_int_equal(dx_facts_from_config(&f, "ds.json", cfg, strlen(cfg), NULL), DDX_OK);
    assert_string_equal(dx_facts_get(&f, "deepspeed.zero_stage")->value, "3");
    assert_string_equal(dx_facts_get(&f, "deepspeed.offload_optimizer")->value, "cpu");
    assert_string_equal(dx_facts_get(&f, "deepspeed.bf16")->value, "true");
    assert_string_equal(dx_facts_get(&f, "deepspeed.train_batch_size")->value, "64");
    assert_null(dx_facts_get(&f, "deepspeed.offload_param"));
    dx_facts_fini(&f);
}

static void test_config_yaml(void **state)
{
    (void)state;
    dx_facts f = {0};
    /* an accelerate config as written by `accelerate config` */
    const char *cfg = "compute_environment: LOCAL_MACHINE\n"
                      "distributed_type: FSDP\n"
                      "fsdp_config:\n"
                      "  fsdp_auto_wrap_policy: TRANSFORMER_BASED_WRAP\n"
                      "  fsdp_offload_params: false\n"
                      "  fsdp_sharding_strategy: FULL_SHARD\n"
                      "  fsdp_use_orig_params: true\n"
                      "mixed_precision: bf16\n"
                      "num_processes: 8\n";
    assert_int_equal(dx_facts_from_config(&f, "accelerate.yaml", cfg, strlen(cfg), NULL), DDX_OK);
    assert_string_equal(dx_facts_get(&f, "fsdp.enabled")->value, "true");
    assert_string_equal(dx_facts_get(&f, "fsdp.auto_wrap_policy")->value, "TRANSFORMER_BASED_WRAP");
    assert_string_equal(dx_facts_get(&f, "fsdp.cpu_offload")->value, "false");
    assert_string_equal(dx_facts_get(&f, "fsdp.use_orig_params")->value, "true");
    assert_string_equal(dx_facts_get(&f, "accelerate.mixed_precision")->value, "bf16");
    assert_int_equal(dx_facts_get(&f, "fsdp.sharding_strategy")->line, 6);
    dx_facts_fini(&f);
    const char *ds = "distributed_type: DEEPSPEED\ndeepspeed_config:\n  zero_stage: 3\n"
                     "  offload_optimizer_device: cpu\n";
    assert_int_equal(dx_facts_from_config(&f, "ds.yaml", ds, strlen(ds), NULL), DDX_OK);
    assert_string_equal(dx_facts_get(&f, "deepspeed.zero_stage")->value, "3");
    assert_string_equal(dx_facts_get(&f, "deepspeed.offload_optimizer")->value, "cpu");
    dx_facts_fini(&f);
}

/* Every line extractor matches at least one line of the real output pasted in public reports
 * that tests/facts holds (each case cites its thread); the values and file:line they give are
 * checked by tests/facts/run.sh. */
static void read_tree(const char *dir, dx_buf *all)
{
    DIR *d = opendir(dir);
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        struct stat sb;
        if (stat(path, &sb) != 0)
            continue;
        if (S_ISDIR(sb.st_mode)) {
            read_tree(path, all);
            continue;
        }
        if (!strcmp(e->d_name, "expect.txt"))
            continue;
        FILE *f = fopen(path, "rb");
        if (!f)
            continue;
        char buf[65536];
        size_t n;
        while ((n = fread(buf, 1, sizeof buf, f)) > 0)
            assert_int_equal(dx_buf_add(all, buf, n), DDX_OK);
        assert_int_equal(dx_buf_add(all, "\n", 1), DDX_OK);
        fclose(f);
    }
    closedir(d);
}

static void test_every_row_has_real_output(void **state)
{
    (void)state;
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/../facts", getenv("DDX_TEST_DATA"));
    dx_buf all = {0};
    read_tree(dir, &all);
    assert_true(all.n > 0);
    size_t missing = 0;
    for (size_t i = 0; i < dx_fact_extractor_count(); i++) {
        const dx_signal *s = dx_fact_extractor_signal(i);
        int ec;
        PCRE2_SIZE eo;
        pcre2_code *re =
            pcre2_compile((PCRE2_SPTR)s->pattern, PCRE2_ZERO_TERMINATED,
                          PCRE2_MULTILINE | (s->caseless ? PCRE2_CASELESS : 0), &ec, &eo, NULL);
        assert_non_null(re);
        pcre2_match_data *md = pcre2_match_data_create_from_pattern(re, NULL);
        int rc = pcre2_match(re, (PCRE2_SPTR)all.p, all.n, 0, 0, md, NULL);
        if (rc < 0) {
            print_message("extractor row '%s' matches no line of tests/facts\n", s->id);
            missing++;
        }
        pcre2_match_data_free(md);
        pcre2_code_free(re);
    }
    dx_buf_fini(&all);
    assert_int_equal(missing, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_version_order), cmocka_unit_test(test_version_range),
        cmocka_unit_test(test_conditions),    cmocka_unit_test(test_config_json),
        cmocka_unit_test(test_config_yaml),   cmocka_unit_test(test_every_row_has_real_output),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
