/* test_kb.c -- parsing references: fields, errors with file and line, fix steps, lint rules. */
#include "kb.h"
#include "lint.h"
#include "match.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

static const char *const good =
    "---\n"
    "id: x-ref\n"
    "title: X\n"
    "category: test\n"
    "kind: crash\n"
    "prior: 0.1\n"
    "signals:\n"
    "  - id: s1\n"
    "    role: root\n"
    "    weight: 2\n"
    "    pattern: 'exact (?<rank>\\d+)'\n"
    "sources: [https://a.example, https://b.example]\n"
    "---\n"
    "## What happens\nText.\n## Fix\n1. One\n   continued.\n2. Two.\n\nAfter.\n## Tell it apart from\nX\n";

/* The arenas hold the strings the tests inspect; they are freed after the last test. */
static dx_arena *arenas[64];
static size_t narenas;

static int parse(const char *text, dx_ref *r, ddx_error *e)
{
    dx_arena *a = dx_arena_new();
    assert_non_null(a);
    assert_true(narenas < sizeof arenas / sizeof *arenas);
    arenas[narenas++] = a;
    return dx_kb_parse(a, "test/x-ref.md", text, strlen(text), r, e);
}

static int free_arenas(void **state)
{
    (void)state;
    for (size_t i = 0; i < narenas; i++)
        dx_arena_free(arenas[i]);
    narenas = 0;
    return 0;
}

static void test_parse_good(void **state)
{
    (void)state;
    dx_ref r;
    ddx_error e = {0};
    assert_int_equal(parse(good, &r, &e), DDX_OK);
    assert_string_equal(r.id, "x-ref");
    assert_int_equal(r.nsignals, 1);
    assert_int_equal(r.signals[0].role, DX_ROLE_ROOT);
    assert_string_equal(r.signals[0].pattern, "exact (?<rank>\\d+)");
    assert_int_equal(r.nsources, 2);
    assert_int_equal(r.nfix, 2);
    assert_string_equal(r.fix[0], "One continued.");
    assert_string_equal(r.fix[1], "Two.");
    assert_string_equal(r.file, "test/x-ref.md");
}

static void test_section(void **state)
{
    (void)state;
    dx_ref r;
    ddx_error e = {0};
    size_t n = 0;
    const char *head = NULL;
    assert_int_equal(parse(good, &r, &e), DDX_OK);
    const char *t = dx_ref_section(&r, "## Fix", &n, &head);
    assert_non_null(t);
    assert_int_equal(n, strlen("1. One\n   continued.\n2. Two.\n\nAfter.\n"));
    assert_memory_equal(t, "1. One\n", 7);
    assert_memory_equal(head, "## Fix\n", 7);
    t = dx_ref_section(&r, "## Tell it apart from", &n, NULL);
    assert_non_null(t);
    assert_int_equal(n, 2); /* "X\n", the last section runs to the end */
    assert_null(dx_ref_section(&r, DX_EXAMPLES_SECTION, &n, NULL));
    assert_null(dx_ref_section(&r, "## What", &n, NULL)); /* the whole heading line, not a prefix */
    /* a heading on the last line, without a newline: an empty section that starts there */
    static const char *const tail = "---\nid: y\ntitle: Y\ncategory: test\nkind: crash\nprior: "
                                    "0.1\n---\n## Fix\n1. One.\n## About the examples";
    assert_int_equal(parse(tail, &r, &e), DDX_OK);
    t = dx_ref_section(&r, DX_EXAMPLES_SECTION, &n, &head);
    assert_non_null(t);
    assert_int_equal(n, 0);
    assert_string_equal(head, DX_EXAMPLES_SECTION);
}

static void expect_error(const char *text, const char *fragment)
{
    dx_ref r;
    ddx_error e = {0};
    assert_int_equal(parse(text, &r, &e), DDX_EFORMAT);
    if (!strstr(e.message, fragment))
        fail_msg("message '%s' lacks '%s'", e.message, fragment);
}

static void test_parse_errors(void **state)
{
    (void)state;
    expect_error("no front matter\n", "test/x-ref.md:1:");
    expect_error("---\nid: x\n", "not closed");
    expect_error("---\nid: x\nseverty: 3\n---\n", "test/x-ref.md:3: unknown key 'severty'");
    expect_error("---\nid: x\ntitle: t\ncategory: c\nkind: crash\n---\n", "missing 'prior'");
    expect_error("---\nid: x\nprior: high\n---\n", "expected a number");
    expect_error(
        "---\nid: x\nsignals:\n  - id: s\n    role: cause\n    weight: 1\n    pattern: a\n---\n",
        "test/x-ref.md:5: role must be");
    expect_error("---\nid: [x\n---\n", "YAML error");
    expect_error("---\nid: x\nsignals:\n  - id: s\n    role: root\n    pattern: a\n---\n",
                 "without a weight");
    expect_error("---\nid: x\nchecks:\n  - says: s\n    fact: env.X\n    expect: exists\n---\n",
                 "test/x-ref.md:6: expect compares the fact's value");
    expect_error(
        "---\nid: x\nchecks:\n  - says: s\n    fact: torch.version\n    expect: '>=2'\n---\n",
        "test/x-ref.md:6: expect compares the fact's value");
    /* every item's table: an unknown key names the item and its line */
    expect_error("---\nid: x\nneighbours:\n  - id: y\n    tel: z\n---\n",
                 "test/x-ref.md:5: unknown key in neighbour: 'tel'");
    expect_error("---\nid: x\nexamples:\n  - path: a\n    sorce: b\n---\n",
                 "test/x-ref.md:5: unknown key in example: 'sorce'");
    expect_error("---\nid: x\nvariants:\n  - id: v\n    titel: t\n---\n",
                 "test/x-ref.md:5: unknown key in variant: 'titel'");
    expect_error("---\nid: x\ncontext:\n  - fact: env.X\n    wieght: 1\n---\n",
                 "test/x-ref.md:5: unknown key in context: 'wieght'");
    expect_error("---\nid: x\nchecks:\n  - says: s\n    comand: c\n---\n",
                 "test/x-ref.md:5: unknown key in check: 'comand'");
    expect_error("---\nid: x\nsignals:\n  - id: s\n    role: root\n    after_: a\n---\n",
                 "test/x-ref.md:6: unknown key in signal: 'after_'");
    /* values of the wrong kind, per kind of field */
    expect_error("---\nid: x\nculprit: every-rank\n---\n",
                 "test/x-ref.md:3: culprit must be this-rank, other-rank or rank-zero, found "
                 "'every-rank'");
    expect_error("---\nid: x\nexamples:\n  - path: a\n    constructed: maybe\n---\n",
                 "test/x-ref.md:5: expected true or false for 'constructed'");
    expect_error("---\nid: x\nsources:\n  a: b\n---\n", "expected a list for 'sources'");
    expect_error("---\nid: x\nsignals: s\n---\n", "expected a list for 'signals'");
    expect_error("---\nid: x\ntitle: [t]\n---\n", "expected a text value for 'title'");
    expect_error("---\nid: x\ncontext:\n  - fact: env.X\n    weight: 1\n    equals: a\n"
                 "    exists: true\n---\n",
                 "only one of equals/range/matches/exists may be given, found 'exists'");
    expect_error("---\nid: x\ncontext:\n  - fact: env.X\n    weight: 1\n---\n",
                 "needs equals, range, matches or exists for 'env.X'");
    expect_error("---\nid: x\nchecks:\n  - says: s\n    exists: true\n---\n",
                 "check with an expectation but no fact");
    expect_error("---\nid: x\nvariants:\n  - id: v\n    title: t\n---\n",
                 "variant names no signals: 'v'");
}

/* Every field a table reads lands where the reference keeps it. */
static void test_parse_fields(void **state)
{
    (void)state;
    static const char *const text =
        "---\nid: x\ntitle: T\ncategory: c\nkind: hang\nsummary: S\nprior: 0.25\n"
        "frameworks: [a, b]\nsources: one\nculprit: rank-zero\n"
        "signals:\n  - id: s1\n    role: symptom\n    weight: 1.5\n    pattern: p1\n"
        "    source: f.py\n    caseless: true\n  - id: s2\n    role: marker\n    weight: 0\n"
        "    pattern: p2\n    after: s1\n    not_after: s3\n    at_end: yes\n"
        "    repeats: r\n    missing: m\n    out_of: o\n    differs: d\n    not_followed_by: n\n"
        "context:\n  - fact: env.X\n    range: '>=2'\n    weight: 2\n    says: X\n"
        "    raise_only: true\n    root: true\n"
        "checks:\n  - says: look\n    command: ls\n    fact: env.Y\n    expect: '1'\n"
        "variants:\n  - id: v\n    title: V\n    signals: [s1]\n    fix: [f1, f2]\n"
        "neighbours:\n  - id: y\n    tell: Z\n"
        "examples:\n  - path: e.log\n    source: u\n    constructed: false\n---\n";
    dx_ref r;
    ddx_error e = {0};
    assert_int_equal(parse(text, &r, &e), DDX_OK);
    assert_string_equal(r.summary, "S");
    assert_true(r.prior == 0.25);
    assert_int_equal(r.nframeworks, 2);
    assert_string_equal(r.frameworks[1], "b");
    assert_int_equal(r.nsources, 1);
    assert_string_equal(r.sources[0], "one");
    assert_int_equal(r.culprit_other, 2);
    assert_int_equal(r.nsignals, 2);
    assert_int_equal(r.signals[0].role, DX_ROLE_SYMPTOM);
    assert_true(r.signals[0].weight == 1.5);
    assert_string_equal(r.signals[0].source, "f.py");
    assert_int_equal(r.signals[0].caseless, 1);
    assert_int_equal(r.signals[1].role, DX_ROLE_MARKER);
    assert_non_null(r.conds);
    assert_null(r.conds[0].after);
    assert_int_equal(r.conds[1].at_end, 1);
    assert_string_equal(r.conds[1].after, "s1");
    assert_string_equal(r.conds[1].not_after, "s3");
    assert_string_equal(r.conds[1].repeats, "r");
    assert_string_equal(r.conds[1].missing, "m");
    assert_string_equal(r.conds[1].out_of, "o");
    assert_string_equal(r.conds[1].differs, "d");
    assert_string_equal(r.conds[1].not_followed_by, "n");
    assert_int_equal(r.ncontext, 1);
    assert_int_equal(r.context[0].op, DX_OP_RANGE);
    assert_string_equal(r.context[0].value, ">=2");
    assert_string_equal(r.context[0].says, "X");
    assert_int_equal(r.context[0].raise_only, 1);
    assert_int_equal(r.context[0].root, 1);
    assert_int_equal(r.nchecks, 1);
    assert_string_equal(r.checks[0].command, "ls");
    assert_int_equal(r.checks[0].cond.op, DX_OP_EQUALS);
    assert_string_equal(r.checks[0].cond.value, "1");
    assert_int_equal(r.nvariants, 1);
    assert_int_equal(r.variants[0].nfix, 2);
    assert_string_equal(r.variants[0].signals[0], "s1");
    assert_string_equal(r.neighbours[0].tell, "Z");
    assert_int_equal(r.nexamples, 1);
    assert_int_equal(r.examples[0].constructed, 0);
    /* no signal with a condition: none kept */
    assert_int_equal(parse(good, &r, &e), DDX_OK);
    assert_null(r.conds);
}

static void test_lint_rules(void **state)
{
    (void)state;
    dx_buf problems = {0};
    dx_lint_stats st;
    ddx_error e = {0};
    char path[4096];
    snprintf(path, sizeof path, "%s/kb", getenv("DDX_TEST_DATA"));
    assert_int_equal(dx_lint_dir(path, 0, NULL, &problems, &st, &e), DDX_OK);
    assert_int_equal(st.refs, 4);
    assert_int_equal(st.examples, 6);
    dx_buf_fini(&problems);

    /* a bad pattern is caught by the engines */
    char msg[300];
    assert_int_equal(dx_pattern_check("unclosed (group", 0, msg, sizeof msg), DDX_EFORMAT);
    assert_non_null(strstr(msg, "PCRE2"));
    assert_int_equal(dx_pattern_check("fine \\d+ (?<rank>\\d+)", 0, msg, sizeof msg), DDX_OK);
}

static void test_lint_bad_dir(void **state)
{
    (void)state;
    dx_buf problems = {0};
    dx_lint_stats st;
    ddx_error e = {0};
    char path[4096];
    snprintf(path, sizeof path, "%s/kb-bad", getenv("DDX_TEST_DATA"));
    assert_int_equal(dx_lint_dir(path, 0, NULL, &problems, &st, &e), DDX_EFORMAT);
    assert_non_null(problems.p);
    assert_non_null(strstr(problems.p, "at least two sources"));
    assert_non_null(strstr(problems.p, "is already used"));
    assert_non_null(strstr(problems.p, "ranks"));
    assert_non_null(strstr(problems.p, "category 'wrong' differs"));
    /* a constructed example needs the note on what was searched */
    assert_non_null(
        strstr(problems.p, "test/b.md: 1 example is constructed; add a '## About the examples'"));
    dx_buf_fini(&problems);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_good),   cmocka_unit_test(test_parse_errors),
        cmocka_unit_test(test_parse_fields), cmocka_unit_test(test_section),
        cmocka_unit_test(test_lint_rules),   cmocka_unit_test(test_lint_bad_dir),
    };
    return cmocka_run_group_tests(tests, NULL, free_arenas);
}
