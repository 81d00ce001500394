/* test_frdump.c -- tests for frdump.c: the plain-data pickle reader, JSON and pickle dumps
 * giving the same entries, refused and broken inputs, and the cross-rank comparison.
 *
 * Fixtures are in tests/data/frdump/, written by gen.py there with Python's own json and pickle
 * modules (the same dump of rank 3 as JSON and as pickles of protocols 2, 4 and 5). Every buffer
 * handed to the parser is a malloc'd copy of exactly its length, so AddressSanitizer catches a
 * read past the end; every strict prefix of the pickles is parsed and must fail. The analysis
 * cases build per-rank JSON dumps in memory.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "frdump.h"

/* ---- helpers ---- */

static char *load(const char *file, size_t *len)
{
    char path[1024];
    const char *dir = getenv("DDX_TEST_DATA");
    assert_non_null(dir);
    snprintf(path, sizeof path, "%s/frdump/%s", dir, file);
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    char *buf = malloc(1 << 20);
    assert_non_null(buf);
    *len = fread(buf, 1, 1 << 20, f);
    fclose(f);
    char *exact = malloc(*len ? *len : 1);
    assert_non_null(exact);
    memcpy(exact, buf, *len);
    free(buf);
    return exact;
}

static int parse_bytes(const char *name, const void *data, size_t n, dx_frdump *d, ddx_error *err)
{
    char *copy = malloc(n ? n : 1);
    assert_non_null(copy);
    if (n)
        memcpy(copy, data, n);
    int rc = dx_frdump_parse(name, copy, n, d, err);
    free(copy);
    return rc;
}

static void parse_file(const char *file, dx_frdump *d)
{
    size_t n;
    char *data = load(file, &n);
    ddx_error err = {0};
    int rc = dx_frdump_parse(file, data, n, d, &err);
    if (rc != DDX_OK)
        fail_msg("%s: %s", file, err.message);
    free(data);
}

/* ---- parsing ---- */

static void check_rank3(const dx_frdump *d)
{
    assert_int_equal(d->rank, 3);
    assert_string_equal(d->version, "2.4");
    assert_string_equal(d->nccl_version, "2.21.5");
    assert_int_equal(d->npgs, 1);
    assert_string_equal(d->pgs[0].name, "0");
    assert_string_equal(d->pgs[0].desc, "default_pg");
    assert_int_equal(d->pgs[0].nranks, 4);
    for (int i = 0; i < 4; i++)
        assert_int_equal(d->pgs[0].ranks[i], i);
    assert_true(d->pgs[0].has_status);
    assert_int_equal(d->pgs[0].last_enqueued, 4);
    assert_int_equal(d->pgs[0].last_started, 3);
    assert_int_equal(d->pgs[0].last_completed, 2);
    assert_int_equal(d->nentries, 5);
    const dx_fr_entry *e = d->entries;
    assert_string_equal(d->pgs[e[0].pg].name, "0");
    assert_int_equal(e[0].pg_id, 0);
    assert_int_equal(e[0].coll_seq, 1);
    assert_string_equal(e[0].op, "nccl:all_reduce");
    assert_string_equal(e[0].in_sizes, "[[1024,1024]]");
    assert_string_equal(e[0].in_dtypes, "Float");
    assert_int_equal(e[0].state, DX_FR_COMPLETED);
    assert_true(e[0].duration_ms == 1.5);
    assert_string_equal(e[1].in_sizes, "[[4096],[4096]]");
    assert_string_equal(e[1].in_dtypes, "BFloat16,BFloat16");
    assert_true(e[2].is_p2p);
    assert_int_equal(e[2].p2p_seq, 1);
    assert_string_equal(e[2].op, "nccl:send 3->0");
    assert_true(e[2].duration_ms == -1);
    assert_int_equal(e[3].state, DX_FR_STARTED);
    assert_string_equal(e[3].op, "nccl:_reduce_scatter_base");
    assert_int_equal(e[4].state, DX_FR_SCHEDULED);
    assert_int_equal(e[4].coll_seq, 4);
    assert_false(e[4].is_p2p);
}

static void test_round_trip(void **state)
{
    (void)state;
    static const char *const files[] = {"rank3.json", "rank3.p2.pkl", "rank3.p4.pkl",
                                        "rank3.p5.pkl"};
    dx_frdump ref;
    parse_file(files[0], &ref);
    check_rank3(&ref);
    for (size_t i = 1; i < DX_ARRAY_LEN(files); i++) {
        dx_frdump d;
        parse_file(files[i], &d);
        check_rank3(&d);
        assert_int_equal(d.nentries, ref.nentries);
        for (size_t j = 0; j < d.nentries; j++)
            assert_memory_equal(&d.entries[j], &ref.entries[j], sizeof d.entries[j]);
        dx_frdump_fini(&d);
    }
    dx_frdump_fini(&ref);
}

static void expect_refused(const char *name, const void *data, size_t n, const char *needle)
{
    dx_frdump d;
    ddx_error err = {0};
    assert_int_equal(parse_bytes(name, data, n, &d, &err), DDX_EFORMAT);
    assert_int_equal(err.code, DDX_EFORMAT);
    if (!strstr(err.message, needle) || strncmp(err.message, name, strlen(name)))
        fail_msg("message '%s' lacks '%s'", err.message, needle);
    assert_int_equal(d.nentries, 0);
    dx_frdump_fini(&d);
}

static void test_refuses_code(void **state)
{
    (void)state;
    size_t n;
    char *p = load("evil.p2.pkl", &n);
    expect_refused("evil.p2.pkl", p, n,
                   "pickle opcode 0x63 (GLOBAL) is not plain data; ddx reads flight-recorder "
                   "dumps without executing code");
    free(p);
    p = load("evil.p4.pkl", &n);
    expect_refused("evil.p4.pkl", p, n, "pickle opcode 0x93 (STACK_GLOBAL) is not plain data");
    free(p);
    expect_refused("nccl_trace_rank_1", "\x80\x02N)R.", 6,
                   "nccl_trace_rank_1: pickle opcode 0x52 (REDUCE) is not plain data");
    expect_refused("x", "\x80\x02}N}b.", 7, "(BUILD) is not plain data");
    expect_refused("x", "\x80\x02(I1\n.", 7, "(INT) is not supported");
}

static void test_broken(void **state)
{
    (void)state;
    static const char *const files[] = {"rank3.p2.pkl", "rank3.p4.pkl", "rank3.json"};
    for (size_t f = 0; f < DX_ARRAY_LEN(files); f++) {
        size_t n;
        char *p = load(files[f], &n);
        /* no bytes at all: an empty dump (a rank that left an empty file), not a broken one */
        dx_frdump e;
        assert_int_equal(parse_bytes(files[f], p, 0, &e, NULL), DDX_OK);
        assert_int_equal(e.status, DX_FR_EMPTY);
        assert_int_equal(e.nentries, 0);
        dx_frdump_fini(&e);
        for (size_t k = 1; k < n; k += f == 2 ? 7 : 1) {
            dx_frdump d;
            ddx_error err = {0};
            int rc = parse_bytes(files[f], p, k, &d, &err);
            if (rc == DDX_OK)
                fail_msg("%s cut at %zu parsed", files[f], k);
            assert_int_equal(rc, DDX_EFORMAT);
            assert_int_equal(d.nentries, 0);
            assert_int_equal(d.status, DX_FR_REFUSED);
            dx_frdump_fini(&d);
        }
        /* every byte changed: any result but a crash or a leak */
        if (f < 2)
            for (size_t k = 0; k < n; k++)
                for (unsigned v = 0; v < 256; v += 102) {
                    dx_frdump d;
                    p[k] ^= (char)(v | 1);
                    (void)parse_bytes(files[f], p, n, &d, NULL);
                    p[k] ^= (char)(v | 1);
                    dx_frdump_fini(&d);
                }
        free(p);
    }
    expect_refused("x",
                   "\x80\x02"
                   "a.",
                   4, "APPEND on a short stack");
    expect_refused("x", "\x80\x02h\x05.", 5, "memo get of an unknown index");
    expect_refused("x", "\x80\x01}.", 4, "neither JSON nor a pickle");
    expect_refused("x", "\x80\x02}}.", 5, "STOP with a stack");
    expect_refused("x", "\x80\x02].", 4, "the top is not a dict");
    expect_refused("x", "{\"version\": \"2.4\"}", 18, "no 'entries'");
    expect_refused("x", " \n", 2, "neither JSON"); /* blank, not empty (an empty dump) */
    /* nesting: 60 lists are fine (inside a dict), 70 are refused */
    char buf[256];
    for (int depth = 60; depth <= 70; depth += 10) {
        size_t k = 0;
        memcpy(buf,
               "\x80\x02}X\x07\x00\x00\x00"
               "entries",
               15);
        k = 15;
        for (int i = 0; i < depth; i++)
            buf[k++] = ']';
        for (int i = 1; i < depth; i++)
            buf[k++] = 'a';
        buf[k++] = 's';
        buf[k++] = '.';
        dx_frdump d;
        ddx_error err = {0};
        int rc = parse_bytes("deep", buf, k, &d, &err);
        if (depth == 60)
            assert_int_equal(rc, DDX_OK);
        else
            assert_non_null(strstr(err.message, "nested too deep"));
        dx_frdump_fini(&d);
    }
    /* memo copies cannot blow up: each get of a doubling list copies it */
    {
        size_t k = 0;
        char big[512];
        memcpy(big, "\x80\x02]q\x00", 5);
        k = 5;
        for (int i = 0; i < 40; i++) {
            memcpy(big + k,
                   "]h\x00"
                   "ah\x00"
                   "aq\x00",
                   9); /* l = [l, l] (copies) */
            k += 9;
        }
        big[k++] = '.';
        dx_frdump d;
        ddx_error err = {0};
        assert_int_equal(parse_bytes("bomb", big, k, &d, &err), DDX_EFORMAT);
        assert_non_null(strstr(err.message, "memo copies exceed the limit"));
        dx_frdump_fini(&d);
    }
}

static void test_rank_from_name(void **state)
{
    (void)state;
    static const struct {
        const char *name;
        int rank;
    } cases[] = {{"nccl_trace_rank_3", 3},
                 {"/tmp/nccl_trace_rank_12", 12},
                 {"rank_3", 3},
                 {"dumps/nccl_trace_rank_0", 0},
                 {"flight_recorder.bin", -1},
                 {"_dump_12", 12},
                 {"trace_3", 3},
                 {"torchcomm_fr_trace_5", 5},
                 {"dumps/nccl_trace_rank_7.json", 7},
                 {"rank3.p2.pkl", 3},
                 {"comm_lib_trace_rank_15.pkl", 15},
                 {"trace_20240501123000", -1}};
    const char *json = "{\"entries\": []}";
    for (size_t i = 0; i < DX_ARRAY_LEN(cases); i++) {
        dx_frdump d;
        assert_int_equal(parse_bytes(cases[i].name, json, strlen(json), &d, NULL), DDX_OK);
        assert_int_equal(d.rank, cases[i].rank);
        dx_frdump_fini(&d);
    }
    const char *with_rank = "  {\"rank\": 5, \"entries\": []}";
    dx_frdump d;
    assert_int_equal(parse_bytes("trace.json", with_rank, strlen(with_rank), &d, NULL), DDX_OK);
    assert_int_equal(d.rank, 5);
    dx_frdump_fini(&d);
    /* the dump's own field wins over its name */
    assert_int_equal(parse_bytes("trace_3", with_rank, strlen(with_rank), &d, NULL), DDX_OK);
    assert_int_equal(d.rank, 5);
    assert_true(d.rank_from_field);
    assert_string_equal(d.prefix, "trace_");
    dx_frdump_fini(&d);
    assert_true(dx_frdump_name_ranked("x/_dump_12"));
    assert_false(dx_frdump_name_ranked("rank0.log"));
}

/* A CUDA memory snapshot found beside the dumps is named for what it is and left out. */
static void test_not_a_dump(void **state)
{
    (void)state;
    static const unsigned char snap[] = {0x80, 0x02, '}', 'X', 8,   0,   0,   0,   's', 'e',
                                         'g',  'm',  'e', 'n', 't', 's', ']', 's', '.'};
    dx_frdump d[2];
    ddx_error e = {0};
    assert_int_equal(parse_bytes("snapshot_0.pickle", snap, sizeof snap, &d[0], &e), DDX_EFORMAT);
    assert_non_null(strstr(e.message, "a CUDA memory snapshot"));
    assert_string_not_equal(d[0].other, "");
    const char *js = "{\"pg_config\": {}, \"entries\": []}";
    assert_int_equal(parse_bytes("nccl_trace_rank_1", js, strlen(js), &d[1], NULL), DDX_OK);
    dx_fr_finding f[4];
    dx_fr_verdict v;
    assert_int_equal(dx_frdump_analyze(d, 2, f, 4, &v), 0);
    assert_int_equal(v.ndumps, 1);
    assert_int_equal(v.nrefused, 0);
    assert_int_equal(v.ncompared, 0);
    dx_frdump_fini(&d[0]);
    dx_frdump_fini(&d[1]);
}

/* Which dumps count: a second dump of one rank and a dump without a rank are warned about and
 * left out; an empty file counts when a dump of the job shares its name's prefix. */
static void test_placement(void **state)
{
    (void)state;
    const char *js = "{\"pg_config\": {\"0\": {\"name\": \"0\", \"desc\": \"default_pg\", "
                     "\"ranks\": \"[0, 1, 2]\"}}, \"pg_status\": {}}";
    dx_frdump d[6];
    assert_int_equal(parse_bytes("trace_0", js, strlen(js), &d[0], NULL), DDX_OK);
    assert_int_equal(parse_bytes("trace_1", js, strlen(js), &d[1], NULL), DDX_OK);
    assert_int_equal(parse_bytes("again/trace_1.json", js, strlen(js), &d[2], NULL), DDX_OK);
    assert_int_equal(parse_bytes("flight.json", js, strlen(js), &d[3], NULL), DDX_OK);
    dx_frdump_empty("trace_2", &d[4]);
    dx_frdump_empty("worker_9", &d[5]); /* another prefix: not this job's dump */
    dx_fr_finding f[8];
    dx_fr_verdict v;
    size_t k = dx_frdump_analyze(d, 6, f, 8, &v);
    assert_int_equal(v.ndumps, 3);
    assert_int_equal(v.nread, 2);
    assert_int_equal(v.nempty, 1);
    assert_int_equal(v.nduplicate, 1);
    assert_int_equal(v.nunplaced, 1);
    assert_int_equal(v.nwarn, 2);
    assert_non_null(strstr(v.warn[0], "trace_1 and trace_1.json both hold rank 1's"));
    assert_non_null(strstr(v.warn[1], "flight.json: a flight-recorder dump that names no rank"));
    assert_int_equal(k, 1);
    assert_int_equal(f[0].kind, DX_FR_EMPTY_DUMP);
    assert_int_equal(f[0].rank, 2);
    assert_string_equal(f[0].why, "rank 2 wrote an empty dump (trace_2)");
    /* nobody waits: the empty dump alone names no culprit */
    assert_int_equal(v.nculprits, 0);
    for (size_t i = 0; i < 6; i++)
        dx_frdump_fini(&d[i]);
}

/* The writer-format sets (gen_sets.py: JSON and pickle, full and only-active, two with rank 5's
 * dump empty), each read under every file-name style real tools write: ranks 3 and 6 are the
 * culprits; ranks 2 and 7, behind in their expert group only because they wait in tensor
 * parallel for them, are not. */
static void test_multi_group_set(void **state)
{
    (void)state;
    static const struct {
        const char *file, *ext; /* the set's files: file, the rank, ext */
        int empty;              /* rank 5's dump is empty */
    } sets[] = {{"sets/active-pickle-tc/torchcomm_fr_trace_", "", 1},
                {"sets/full-json-nccl/nccl_trace_rank_", "", 0},
                {"sets/full-pickle-dump/_dump_", "", 1},
                {"sets/active-json-trace/trace_", ".json", 0}};
    static const char *const styles[][2] = {
        {"dumps/_dump_", ""},        {"trace_", ""},
        {"torchcomm_fr_trace_", ""}, {"host-b/nccl_trace_rank_", ""},
        {"fr/trace_", ".json"},      {"comm_lib_trace_rank_", ".pkl"}};
    for (size_t s = 0; s < DX_ARRAY_LEN(sets); s++)
        for (size_t y = 0; y < DX_ARRAY_LEN(styles); y++) {
            dx_frdump d[8];
            for (int r = 0; r < 8; r++) {
                char file[128], name[128];
                snprintf(file, sizeof file, "%s%d%s", sets[s].file, r, sets[s].ext);
                snprintf(name, sizeof name, "%s%d%s", styles[y][0], r, styles[y][1]);
                size_t n;
                char *p = load(file, &n);
                assert_int_equal(parse_bytes(name, p, n, &d[r], NULL), DDX_OK);
                free(p);
                assert_int_equal(d[r].rank, r);
            }
            dx_fr_finding f[32];
            dx_fr_verdict v;
            size_t k = dx_frdump_analyze(d, 8, f, 32, &v);
            for (int r = 0; r < 8; r++)
                dx_frdump_fini(&d[r]);
            assert_true(k >= 2);
            assert_int_equal(v.nculprits, 2);
            assert_int_equal(v.culprits[0], 3);
            assert_int_equal(v.culprits[1], 6);
            assert_true(v.decisive);
            assert_int_equal(v.ngroups, 13); /* default, 4 tp, 4 ep and 4 pp, each kind one name */
            assert_int_equal(v.nempty, (size_t)sets[s].empty);
            assert_int_equal(v.nunplaced, 0);
            assert_non_null(strstr(v.where, "never joined collective"));
            for (size_t i = 0; i < k; i++)
                if (f[i].root)
                    assert_true(f[i].rank == 3 || f[i].rank == 6);
                else
                    assert_true(f[i].rank != 3 && f[i].rank != 6);
        }
}

static void test_entry_cap(void **state)
{
    (void)state;
    size_t n = DX_FR_MAX_ENTRIES + 5, k = 0, cap = 16 + 4 * n;
    char *js = malloc(cap);
    assert_non_null(js);
    memcpy(js, "{\"entries\": [", 13);
    k = 13;
    for (size_t i = 0; i < n; i++) {
        memcpy(js + k, i ? ",{}" : "{}", i ? 3 : 2);
        k += i ? 3 : 2;
    }
    memcpy(js + k, "]}", 2);
    k += 2;
    dx_frdump d;
    assert_int_equal(parse_bytes("nccl_trace_rank_0", js, k, &d, NULL), DDX_OK);
    assert_int_equal(d.nentries, DX_FR_MAX_ENTRIES);
    assert_int_equal(d.dropped, 5);
    assert_int_equal(d.entries[0].coll_seq, -1);
    assert_true(d.entries[0].duration_ms == -1);
    dx_frdump_fini(&d);
    free(js);
}

/* pg_status is keyed by the rank's local pg_id: the entries of that pg_id name the group, and a
 * key no entry explains (other than "0", the default group) is not taken for a group's name.
 * Ranks may be a list. */
static void test_pg_status_by_id(void **state)
{
    (void)state;
    const char *js =
        "{\"pg_config\": {\"tp\": {\"name\": \"tp\", \"desc\": \"tensor\", "
        "\"ranks\": [5, 4]}}, \"entries\": [{\"pg_id\": 7, \"process_group\": "
        "[\"tp\", \"tensor\"], \"collective_seq_id\": 9, \"duration_ms\": 2, "
        "\"future\": {\"a\": [1]}}], \"pg_status\": {\"7\": "
        "{\"last_enqueued_collective\": 9, \"last_started_collective\": 9, "
        "\"last_completed_collective\": 8}, \"3\": {\"last_enqueued_collective\": 1}}}";
    dx_frdump d;
    assert_int_equal(parse_bytes("nccl_trace_rank_4", js, strlen(js), &d, NULL), DDX_OK);
    assert_int_equal(d.npgs, 1);
    assert_string_equal(d.pgs[0].name, "tp");
    assert_int_equal(d.pgs[0].nranks, 2);
    assert_int_equal(d.pgs[0].ranks[0], 4); /* sorted */
    assert_int_equal(d.pgs[0].ranks[1], 5);
    assert_int_equal(d.pgs[0].local_id, 7);
    assert_int_equal(d.pgs[0].last_completed, 8);
    assert_int_equal(d.status_unmapped, 1);
    assert_true(d.entries[0].duration_ms == 2);
    dx_frdump_fini(&d);
    /* without an entry, key "0" is the default group, whatever its name */
    const char *js0 = "{\"pg_config\": {\"main\": {\"name\": \"main\", \"desc\": "
                      "\"default_pg\", \"ranks\": \"[0, 1]\"}}, \"pg_status\": {\"0\": "
                      "{\"last_enqueued_collective\": \"12\", \"last_started_collective\": "
                      "\"12\", \"last_completed_collective\": \"11\"}}}";
    assert_int_equal(parse_bytes("trace_1", js0, strlen(js0), &d, NULL), DDX_OK);
    assert_int_equal(d.rank, 1);
    assert_int_equal(d.npgs, 1);
    assert_true(d.pgs[0].has_status);
    assert_int_equal(d.pgs[0].last_enqueued, 12);
    assert_int_equal(d.pgs[0].last_completed, 11);
    assert_int_equal(d.status_unmapped, 0);
    dx_frdump_fini(&d);
}

/* ---- analysis ---- */

/* A dump of rank r in PG "0" (ranks as given): entry i is "op;sizes;dtype;state" at seq i+1. */
static void mk(dx_frdump *d, int rank, const char *ranks, const char *const *ents, size_t n)
{
    static char js[16384];
    size_t k = 0;
    long long started = 0, completed = 0;
    k += (size_t)snprintf(js + k, sizeof js - k,
                          "{\"version\": \"2.4\", \"pg_config\": {\"0\": {\"name\": \"0\", "
                          "\"desc\": \"default_pg\", \"ranks\": \"%s\"}}, \"entries\": [",
                          ranks);
    for (size_t i = 0; i < n; i++) {
        char op[64], sizes[64], dtype[32], st[32];
        assert_int_equal(sscanf(ents[i], "%63[^;];%63[^;];%31[^;];%31s", op, sizes, dtype, st), 4);
        if (!strcmp(st, "completed"))
            completed = (long long)i + 1;
        if (strcmp(st, "scheduled"))
            started = (long long)i + 1;
        k += (size_t)snprintf(js + k, sizeof js - k,
                              "%s{\"pg_id\": 0, \"process_group\": [\"0\", \"default_pg\"], "
                              "\"collective_seq_id\": %zu, \"p2p_seq_id\": 0, "
                              "\"profiling_name\": \"nccl:%s\", \"input_sizes\": %s, "
                              "\"input_dtypes\": [\"%s\"], \"state\": \"%s\", \"is_p2p\": false}",
                              i ? ", " : "", i + 1, op, sizes, dtype, st);
    }
    k += (size_t)snprintf(js + k, sizeof js - k,
                          "], \"pg_status\": {\"0\": {\"last_enqueued_collective\": %zu, "
                          "\"last_started_collective\": %lld, \"last_completed_collective\": "
                          "%lld}}}",
                          n, started, completed);
    assert_true(k < sizeof js);
    char name[64];
    snprintf(name, sizeof name, "nccl_trace_rank_%d", rank);
    ddx_error err = {0};
    if (parse_bytes(name, js, k, d, &err) != DDX_OK)
        fail_msg("%s", err.message);
    assert_int_equal(d->rank, rank);
}

#define AR "all_reduce;[[1024,1024]];Float;completed"
#define AR_STARTED "all_reduce;[[1024,1024]];Float;started"

static dx_fr_verdict last_verdict;

static size_t run(dx_frdump *d, size_t n, dx_fr_finding *f, size_t max)
{
    size_t k = dx_frdump_analyze(d, n, f, max, &last_verdict);
    for (size_t i = 0; i < n; i++)
        dx_frdump_fini(&d[i]);
    for (size_t i = 0; i < k; i++)
        print_message("  %s rank %d seq %lld: %s\n", dx_frdump_kind_name(f[i].kind), f[i].rank,
                      f[i].seq, f[i].why);
    return k;
}

static void test_behind(void **state)
{
    (void)state;
    const char *full[] = {AR, AR, AR_STARTED};
    dx_frdump d[4];
    for (int r = 0; r < 4; r++)
        mk(&d[r], r, "[0, 1, 2, 3]", full, r == 2 ? 2 : 3);
    dx_fr_finding f[8];
    size_t k = run(d, 4, f, 8);
    assert_int_equal(k, 1);
    assert_int_equal(f[0].kind, DX_FR_MISSING_RANK);
    assert_int_equal(f[0].rank, 2);
    assert_int_equal(f[0].seq, 3);
    assert_string_equal(f[0].pg, "0");
    assert_non_null(strstr(f[0].why, "rank 2 of PG 0 never enqueued collective 3 "
                                     "(nccl:all_reduce) that ranks 0, 1 and 3 reached"));
}

static void test_op(void **state)
{
    (void)state;
    const char *same[] = {AR, AR, AR};
    const char *odd[] = {AR, "all_gather;[[1024,1024]];Float;completed", AR};
    dx_frdump d[4];
    for (int r = 0; r < 4; r++)
        mk(&d[r], r, "[0, 1, 2, 3]", r == 1 ? odd : same, 3);
    dx_fr_finding f[8];
    size_t k = run(d, 4, f, 8);
    assert_int_equal(k, 1);
    assert_int_equal(f[0].kind, DX_FR_OP);
    assert_int_equal(f[0].rank, 1);
    assert_int_equal(f[0].seq, 2);
    assert_non_null(strstr(f[0].why, "rank 1 runs nccl:all_gather while ranks 0, 2 and 3 run "
                                     "nccl:all_reduce"));
}

static void test_size_dtype_order(void **state)
{
    (void)state;
    const char *same[] = {AR, AR, AR};
    const char *r3[] = {"all_reduce;[[2048,1024]];Float;completed", AR, AR};
    const char *r2[] = {AR, AR, "all_reduce;[[1024,1024]];Half;completed"};
    dx_frdump d[4];
    for (int r = 0; r < 4; r++)
        mk(&d[r], r, "[0, 1, 2, 3]", r == 3 ? r3 : r == 2 ? r2 : same, 3);
    dx_fr_finding f[8];
    size_t k = run(d, 4, f, 8);
    assert_int_equal(k, 2);
    assert_int_equal(f[0].kind, DX_FR_SIZE);
    assert_int_equal(f[0].rank, 3);
    assert_int_equal(f[0].seq, 1);
    assert_non_null(strstr(f[0].why, "[[2048,1024]]"));
    assert_int_equal(f[1].kind, DX_FR_DTYPE);
    assert_int_equal(f[1].rank, 2);
    assert_int_equal(f[1].seq, 3);
    /* max cuts the list, keeping the earliest */
    for (int r = 0; r < 4; r++)
        mk(&d[r], r, "[0, 1, 2, 3]", r == 3 ? r3 : r == 2 ? r2 : same, 3);
    assert_int_equal(run(d, 4, f, 1), 1);
    assert_int_equal(f[0].kind, DX_FR_SIZE);
}

/* Rank 0 is the odd one: a rank-0-anchored comparison would blame everyone else. */
static void test_no_first_rank_bias(void **state)
{
    (void)state;
    const char *same[] = {AR, AR, AR, AR_STARTED};
    const char *r0[] = {AR, "all_gather;[[1024,1024]];Float;completed", AR};
    dx_frdump d[4];
    for (int r = 0; r < 4; r++)
        mk(&d[r], r, "[0, 1, 2, 3]", r == 0 ? r0 : same, r == 0 ? 3 : 4);
    dx_fr_finding f[8];
    size_t k = run(d, 4, f, 8);
    assert_int_equal(k, 2);
    assert_int_equal(f[0].kind, DX_FR_OP);
    assert_int_equal(f[0].rank, 0);
    assert_int_equal(f[0].seq, 2);
    assert_int_equal(f[1].kind, DX_FR_MISSING_RANK);
    assert_int_equal(f[1].rank, 0);
    assert_int_equal(f[1].seq, 4);
    /* the dumps given in another order change nothing */
    for (int r = 0; r < 4; r++)
        mk(&d[3 - r], r, "[0, 1, 2, 3]", r == 0 ? r0 : same, r == 0 ? 3 : 4);
    dx_fr_finding g[8];
    assert_int_equal(run(d, 4, g, 8), 2);
    assert_memory_equal(f, g, 2 * sizeof *f);
}

static void test_missing_dump(void **state)
{
    (void)state;
    const char *same[] = {AR, AR_STARTED};
    dx_frdump d[3];
    for (int r = 0; r < 3; r++)
        mk(&d[r], r, "[0, 1, 2, 3]", same, 2);
    dx_fr_finding f[8];
    size_t k = run(d, 3, f, 8);
    assert_int_equal(k, 1);
    assert_int_equal(f[0].kind, DX_FR_MISSING_RANK);
    assert_int_equal(f[0].rank, 3);
    assert_int_equal(f[0].seq, -1);
    assert_non_null(strstr(f[0].why, "no dump for rank 3"));
    /* without a rank list the dumps present are the group: nothing is missing */
    for (int r = 0; r < 3; r++)
        mk(&d[r], r, "[]", same, 2);
    assert_int_equal(run(d, 3, f, 8), 0);
}

static void test_state_and_tie(void **state)
{
    (void)state;
    const char *same[] = {AR, AR_STARTED};
    const char *late[] = {AR, "all_reduce;[[1024,1024]];Float;scheduled"};
    dx_frdump d[4];
    for (int r = 0; r < 4; r++)
        mk(&d[r], r, "[0, 1, 2, 3]", r == 1 ? late : same, 2);
    dx_fr_finding f[8];
    size_t k = run(d, 4, f, 8);
    assert_int_equal(k, 1);
    assert_int_equal(f[0].kind, DX_FR_STATE);
    assert_int_equal(f[0].rank, 1);
    assert_int_equal(f[0].seq, 2);
    assert_non_null(strstr(f[0].why, "scheduled while ranks 0, 2 and 3 started it"));
    /* two against two: no single rank is named */
    const char *ag[] = {AR, "all_gather;[[1024,1024]];Float;completed"};
    const char *ar[] = {AR, AR};
    for (int r = 0; r < 4; r++)
        mk(&d[r], r, "[0, 1, 2, 3]", r < 2 ? ag : ar, 2);
    k = run(d, 4, f, 8);
    assert_int_equal(k, 1);
    assert_int_equal(f[0].kind, DX_FR_OP);
    assert_int_equal(f[0].rank, -1);
    /* one rank ahead of a majority that stopped: that rank is named */
    const char *three[] = {AR, AR, AR_STARTED};
    for (int r = 0; r < 4; r++)
        mk(&d[r], r, "[0, 1, 2, 3]", three, r == 3 ? 3 : 2);
    k = run(d, 4, f, 8);
    assert_int_equal(k, 1);
    assert_int_equal(f[0].kind, DX_FR_MISSING_RANK);
    assert_int_equal(f[0].rank, 3);
    assert_int_equal(f[0].seq, 3);
    assert_non_null(strstr(f[0].why, "only rank 3 of PG 0 enqueued collective 3"));
    /* a clean job has no findings */
    for (int r = 0; r < 4; r++)
        mk(&d[r], r, "[0, 1, 2, 3]", ar, 2);
    assert_int_equal(run(d, 4, f, 8), 0);
}

/* Found by fuzz/fuzz_frdump.c: a TUPLE whose MARK lies above items a SETITEM consumed since
 * must be refused, not resurrect the consumed (freed) stack slots. */
static void test_pickle_stale_mark(void **state)
{
    (void)state;
    static const unsigned char p[] = {0x80, 0x02, '}', 'X', 1,   0,   0,  0,
                                      'a',  '(',  'K', 1,   's', 't', '.'};
    dx_frdump d;
    ddx_error e = {0};
    assert_int_equal(dx_frdump_parse("nccl_trace_rank_0", p, sizeof p, &d, &e), DDX_EFORMAT);
    dx_frdump_fini(&d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pickle_stale_mark),
        cmocka_unit_test(test_round_trip),
        cmocka_unit_test(test_refuses_code),
        cmocka_unit_test(test_broken),
        cmocka_unit_test(test_rank_from_name),
        cmocka_unit_test(test_not_a_dump),
        cmocka_unit_test(test_placement),
        cmocka_unit_test(test_multi_group_set),
        cmocka_unit_test(test_behind),
        cmocka_unit_test(test_op),
        cmocka_unit_test(test_size_dtype_order),
        cmocka_unit_test(test_no_first_rank_bias),
        cmocka_unit_test(test_missing_dump),
        cmocka_unit_test(test_state_and_tie),
        cmocka_unit_test(test_entry_cap),
        cmocka_unit_test(test_pg_status_by_id),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
