/* test_scan.c -- a chunk's scan through the shape cache gives what a scan of every line gives.
 *
 * The shape cache (match.c) hands a line the candidates of the last line of its shape (its text
 * with every digit read as '0') instead of scanning it, which is exact only because every
 * expression of the database is digit-blind. Here: the blind rewriting on the constructs it
 * reads; the built-in database's expressions all blind; and dx_piece_scan with the cache against
 * dx_piece_scan without it, hit for hit (signal, captures, attribution), on every reference
 * example and corpus log, then on the same lines with other digits (each line's shape kept from
 * the first pass, so most are not scanned) and on trainer step lines. A cache that reuses a wrong
 * decision (a shape that reads every letter alike) must fail the same comparison. */
#include "scan.h"

#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <cmocka.h>
#include <sys/stat.h>

/* ---- the blind rewriting ---------------------------------------------------------------------- */

static void expect_blind(const char *in, const char *want, int want_sure)
{
    int sure = -1;
    char *out = dx_blind_expression(in, &sure);
    assert_non_null(out);
    if (strcmp(out, want) || sure != want_sure)
        fail_msg("'%s' became '%s' (sure %d), want '%s' (sure %d)", in, out, sure, want, want_sure);
    /* a blind expression is left as it is */
    if (want_sure) {
        char *again = dx_blind_expression(out, &sure);
        assert_string_equal(again, out);
        dx_free(again);
    }
    dx_free(out);
}

static void test_blind_rewriting(void **state)
{
    (void)state;
    expect_blind("exit code 137", "exit code \\d\\d\\d", 1);
    expect_blind("\\b\\d{1,2}%\\|[^|\\n]*\\| *[1-9]\\d*/\\d+",
                 "\\b\\d{1,2}%\\|[^|\\n]*\\| *[\\d1-9]\\d*/\\d+", 1);
    expect_blind("[^0x\\n]y", "[^\\n]y", 1); /* a negated class of some digits */
    expect_blind("[]0]", "[]\\d0]", 1);      /* a leading ']' stays first */
    expect_blind("[!-5]", "[\\d!-5]", 1);    /* a range ending in a digit */
    expect_blind("[ -~]x", "[ -~]x", 1);     /* a range holding every digit */
    expect_blind("[\\x30-\\x34]", "[\\d\\x30-\\x34]", 1);
    expect_blind("\\x35\\x41", "\\d\\x41", 1); /* \x naming a digit, and a letter */
    expect_blind("(?<r1>\\d+)-(?<r2>\\w+)", "(?<r1>\\d+)-(?<r2>\\w+)", 1); /* names */
    expect_blind("={20,}|-{3}|x{2,5}", "={20,}|-{3}|x{2,5}", 1);           /* counts */
    expect_blind("a{,3}", "a{,\\d}", 1); /* not a quantifier: a literal '{' */
    expect_blind("[[:alpha:]0]", "[\\d[:alpha:]0]", 1);
    expect_blind("[[:alnum:]]", "[[:alnum:]]", 1);
    expect_blind("(?<=x)1", "(?<=x)\\d", 1); /* a look-behind is no name */
    expect_blind("(\\w)\\1", "(\\w)\\1", 0); /* a back reference: not read */
    expect_blind("\\p{L}9", "\\p{L}\\d", 0);
}

/* ---- the built-in database ------------------------------------------------------------------ */

static void test_builtin_database_is_blind(void **state)
{
    (void)state;
    ddx_kb *kb = NULL;
    ddx_error e = {0};
    assert_int_equal(ddx_kb_open(&kb, NULL, &e), DDX_OK);
    char msg[2048] = "";
    int n = dx_matcher_exprs_blind(kb->m, msg, sizeof msg);
    if (n < 0)
        fail_msg("%s", msg);
    assert_true(n > 1000);
    ddx_kb_close(kb);
}

/* ---- scans with and without the cache ------------------------------------------------------- */

typedef struct lines {
    dx_buf text; /* whole lines, each with its '\n' */
} lines;

static void add_file(lines *l, const char *path, size_t cap)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return;
    char buf[8192];
    while (l->text.n < cap && fgets(buf, sizeof buf, f)) {
        size_t n = strlen(buf);
        if (!n || buf[n - 1] != '\n')
            continue; /* a line longer than the buffer, or the last without its newline */
        assert_int_equal(dx_buf_add(&l->text, buf, n), DDX_OK);
    }
    fclose(f);
}

static void add_tree(lines *l, const char *dir, size_t cap)
{
    DIR *d = opendir(dir);
    if (!d)
        return;
    struct dirent *de;
    char **names = NULL;
    size_t n = 0;
    while ((de = readdir(d)))
        if (de->d_name[0] != '.') {
            names = realloc(names, (n + 1) * sizeof *names);
            names[n++] = strdup(de->d_name);
        }
    closedir(d);
    qsort(names, n, sizeof *names, (int (*)(const void *, const void *))strcmp);
    for (size_t i = 0; i < n; i++) {
        char path[4096];
        struct stat sb;
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        if (stat(path, &sb) == 0 && S_ISDIR(sb.st_mode))
            add_tree(l, path, cap);
        else if (!strstr(names[i], ".json") && !strstr(names[i], ".md"))
            add_file(l, path, cap);
        free(names[i]);
    }
    free(names);
}

/* Trainer step lines of a few styles, with numbers from a fixed generator: shapes that repeat. */
static void add_steps(lines *l, size_t count)
{
    uint64_t x = 88172645463325252ull;
    for (size_t i = 0; i < count; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        char buf[512];
        unsigned r = (unsigned)(x % 64), a = (unsigned)(x >> 8) % 60, b = (unsigned)(x >> 16) % 60;
        double v = (double)(x >> 20 & 0xffff) / 6553.6;
        int n;
        switch (i / 700 % 3) {
        case 0:
            n = snprintf(buf, sizeof buf,
                         "[rank%u]: 2024-05-01 08:%02u:%02u,%03u - INFO - train - step %u/500000 "
                         "| loss %.4f | lr %.3e | grad_norm %.3f\n",
                         r, a, b, (unsigned)(x % 1000), (unsigned)(i % 5000), v, v / 1e4, v / 3);
            break;
        case 1:
            n = snprintf(buf, sizeof buf,
                         "[rank%u]: [titan] 2024-05-01 08:%02u:%02u,%03u - root - INFO - step: %u "
                         " loss: %7.4f  tps: %.0f  mfu: %.2f%%\n",
                         r, a, b, (unsigned)(x % 1000), (unsigned)(i % 5000), v, v * 1000, v * 4);
            break;
        default:
            n = snprintf(buf, sizeof buf,
                         "[rank%u]: iter %u: loss %.4f, time %02u%02u.%03ums, mfu %.2f%%\n", r,
                         (unsigned)(i % 5000), v, a, b, (unsigned)(x % 1000), v * 4);
        }
        assert_int_equal(dx_buf_add(&l->text, buf, (size_t)n), DDX_OK);
    }
}

/* The text with every digit changed (the same shapes), or every letter (other text, the same
 * shapes to a cache that reads letters alike). */
static char *other_digits(const char *t, size_t n)
{
    char *o = malloc(n);
    for (size_t i = 0; i < n; i++)
        o[i] = t[i] >= '0' && t[i] <= '9' ? (char)('0' + (t[i] - '0' + 7) % 10) : t[i];
    return o;
}

static char *other_letters(const char *t, size_t n)
{
    char *o = malloc(n);
    for (size_t i = 0; i < n; i++)
        o[i] = t[i] >= 'a' && t[i] <= 'z'   ? (char)('a' + (t[i] - 'a' + 11) % 26)
               : t[i] >= 'A' && t[i] <= 'Z' ? (char)('A' + (t[i] - 'A' + 11) % 26)
                                            : t[i];
    return o;
}

static void piece_scan(dx_piece *p, dx_scan *s, const char *text, size_t n)
{
    p->kind = DX_PIECE_CHUNK;
    p->raw = text;
    p->rawlen = n;
    p->first_line = 1;
    dx_piece_scan(p, s);
    assert_int_equal(p->rc, DDX_OK);
}

/* Whether two scans of the same text found the same: hits (line, signal, where its captures
 * are, each offset) and lines with candidates (their attribution). */
static int same_scan(const dx_piece *a, const dx_piece *b, const char *what)
{
    if (a->nl != b->nl || a->nhits != b->nhits || a->ncl != b->ncl) {
        if (what)
            print_message("%s: %zu hits on %zu lines, without the cache %zu on %zu\n", what,
                          a->nhits, a->ncl, b->nhits, b->ncl);
        return 0;
    }
    for (size_t i = 0; i < a->nhits; i++) {
        const dx_hitrec *x = &a->hits[i], *y = &b->hits[i];
        if (x->line != y->line || x->sig != y->sig || x->npairs != y->npairs ||
            x->on_body != y->on_body ||
            memcmp(a->ovs + x->ov, b->ovs + y->ov, 2 * x->npairs * sizeof *a->ovs))
            return 0;
    }
    for (size_t i = 0; i < a->ncl; i++)
        if (a->cl[i].line != b->cl[i].line || a->cl[i].body_end != b->cl[i].body_end ||
            a->cl[i].a.body != b->cl[i].a.body || a->cl[i].a.rank != b->cl[i].a.rank)
            return 0;
    return 1;
}

#define CHUNK (256u << 10)

/* Scans every chunk of text (cut at line ends), first as given, then changed by vary (the shapes
 * the cache keeps from the first), with the cache in mode and without; returns how many chunks
 * differed, and the lines reused in *reused. */
static size_t compare(const ddx_kb *kb, const dx_buf *text, char *(*vary)(const char *, size_t),
                      int mode, uint64_t *reused, uint64_t *looked, size_t *hits)
{
    dx_scan *on = NULL, *off = NULL;
    ddx_error e = {0};
    assert_int_equal(dx_scan_new(&on, kb->m, &e), DDX_OK);
    assert_int_equal(dx_scan_new(&off, kb->m, &e), DDX_OK);
    dx_scan_shapes(on, mode);
    dx_scan_shapes(off, DX_SHAPES_OFF);
    size_t differ = 0;
    for (size_t at = 0; at < text->n;) {
        size_t n = text->n - at > CHUNK ? CHUNK : text->n - at;
        while (at + n < text->n && text->p[at + n - 1] != '\n')
            n--;
        char *first = mode == DX_SHAPES_WRONG ? other_letters(text->p + at, n) : NULL;
        char *second = vary ? vary(text->p + at, n) : NULL;
        const char *pass[2] = {first ? first : text->p + at, second ? second : text->p + at};
        for (int k = 0; k < 2; k++) {
            dx_piece a = {0}, b = {0};
            piece_scan(&a, on, pass[k], n);
            piece_scan(&b, off, pass[k], n);
            *hits += b.nhits;
            differ += !same_scan(&a, &b, mode == DX_SHAPES_WRONG ? NULL : "a chunk");
            dx_piece_fini(&a);
            dx_piece_fini(&b);
        }
        free(first);
        free(second);
        at += n;
    }
    dx_scan_shape_stats(on, reused, looked);
    dx_scan_free(on);
    dx_scan_free(off);
    return differ;
}

static void test_cache_gives_what_a_scan_gives(void **state)
{
    (void)state;
    ddx_kb *kb = NULL;
    ddx_error e = {0};
    assert_int_equal(ddx_kb_open(&kb, NULL, &e), DDX_OK);
    lines l = {0};
    char path[4096];
    snprintf(path, sizeof path, "%s/../../references/examples", getenv("DDX_TEST_DATA"));
    add_tree(&l, path, 2u << 20);
    snprintf(path, sizeof path, "%s/../corpus", getenv("DDX_TEST_DATA"));
    add_tree(&l, path, 4u << 20);
    add_steps(&l, 12000);
    assert_true(l.text.n > (1u << 20));
    uint64_t reused = 0, looked = 0;
    size_t hits = 0, whits = 0;
    assert_int_equal(compare(kb, &l.text, other_digits, DX_SHAPES_ON, &reused, &looked, &hits), 0);
    assert_true(hits > 10000); /* lines that matter */
    /* the cache was used: the second pass reuses most of the first's shapes */
    assert_true(looked > 0 && reused * 3 > looked);

    /* a cache that reuses a wrong decision fails the comparison */
    uint64_t wr = 0, wl = 0;
    size_t wd = compare(kb, &l.text, NULL, DX_SHAPES_WRONG, &wr, &wl, &whits);
    assert_true(wd > 0);
    assert_true(wr > 0);
    dx_buf_fini(&l.text);
    ddx_kb_close(kb);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_blind_rewriting),
        cmocka_unit_test(test_builtin_database_is_blind),
        cmocka_unit_test(test_cache_gives_what_a_scan_gives),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
