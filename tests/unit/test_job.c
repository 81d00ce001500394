/* test_job.c -- the job model's registry and the culprit policy: every reading well formed, facts
 * owned by one reading, patterns numbered across the registry, private state per rank, and the
 * votes picked and vetoed as the policy table says. */
#include "job.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "job/culprit.h"

static void test_registry_well_formed(void **state)
{
    (void)state;
    size_t npatterns = 0;
    for (size_t i = 0; i < dx_nreadings; i++) {
        const dx_reading *rd = dx_readings[i];
        assert_non_null(rd->name);
        assert_non_null(rd->doc);
        for (const char *c = rd->name; *c; c++) /* the name of its test folder */
            assert_true((*c >= 'a' && *c <= 'z') || (*c >= '0' && *c <= '9') || *c == '-');
        for (size_t j = 0; j < i; j++)
            assert_string_not_equal(rd->name, dx_readings[j]->name);
        /* a reading is seen through its patterns, or derives from other readings' state */
        assert_true(rd->npatterns || rd->finish || rd->publish);
        assert_true(!rd->nfacts || rd->publish);
        for (size_t k = 0; k < rd->nfacts; k++) {
            assert_ptr_equal(dx_job_fact_owner(rd->facts[k].name), rd);
            assert_non_null(rd->facts[k].type);
            assert_true(strlen(rd->facts[k].from) > 20);
            assert_null(strchr(rd->facts[k].from, '|')); /* a cell of docs/facts.md's table */
        }
        for (size_t k = 0; k < rd->npatterns; k++) {
            assert_non_null(rd->patterns[k].source);
            assert_true(!strncmp(rd->patterns[k].id, "job-", 4));
            assert_ptr_equal(dx_job_extractor_signal(npatterns + k), &rd->patterns[k]);
        }
        npatterns += rd->npatterns;
    }
    assert_int_equal(dx_job_extractor_count(), npatterns);
    assert_null(dx_job_extractor_signal(npatterns));
    assert_null(dx_job_fact_owner("job.world_size")); /* facts.c's, not a reading's */
}

static void test_rank_state_is_private(void **state)
{
    (void)state;
    dx_job_model jm;
    assert_int_equal(dx_job_model_init(&jm), DDX_OK);
    assert_null(dx_job_rank_get(&jm, 3));
    assert_null(dx_job_rstate(&jm, dx_readings[0], 3, 0)); /* asking creates nothing */
    assert_int_equal(jm.nranks, 0);
    /* each reading with per-rank state gets its own zeroed (or initialised) block */
    unsigned char *seen[64] = {0};
    size_t n = 0;
    for (size_t i = 0; i < dx_nreadings && n < 64; i++) {
        unsigned char *p = dx_job_rstate(&jm, dx_readings[i], 3, 1);
        if (!dx_readings[i]->rank_size) {
            assert_null(p);
            continue;
        }
        assert_non_null(p);
        for (size_t k = 0; k < n; k++)
            assert_ptr_not_equal(seen[k], p);
        seen[n++] = p;
    }
    assert_int_equal(jm.nranks, 1);
    assert_int_equal(dx_job_rank_get(&jm, 3)->pid, -1);
    assert_null(dx_job_rank(&jm, DX_JOB_MAX_RANK));
    dx_job_model_fini(&jm);
}

/* Casts the votes "source:rank" (rank -1: none) into a fresh model and picks. */
static void pick(dx_job_model *jm, dx_culprit *c, size_t nkept, const char *top_kind,
                 const char *const *votes, size_t n)
{
    assert_int_equal(dx_job_model_init(jm), DDX_OK);
    for (size_t i = 0; i < n; i++) {
        char src[32];
        const char *colon = strchr(votes[i], ':');
        snprintf(src, sizeof src, "%.*s", (int)(colon - votes[i]), votes[i]);
        /* the source must outlive the model: use the policy's own string */
        const char *s = NULL, *reason;
        int prec;
        for (size_t k = 0; (s = dx_culprit_source(k, &prec, &reason)) != NULL; k++)
            if (!strcmp(s, src))
                break;
        assert_non_null(s);
        assert_int_equal(dx_job_vote(jm, s, atoi(colon + 1), 1, "%s", votes[i]), DDX_OK);
    }
    dx_culprit_ctx ctx = {nkept, top_kind, 0};
    assert_int_equal(dx_culprit_pick(jm, &ctx, c), DDX_OK);
}

static void test_policy_precedence_and_agreement(void **state)
{
    (void)state;
    dx_job_model jm;
    dx_culprit c;
    /* a desync beats the root failure, which beats the launcher's table */
    const char *const v1[] = {"table:3", "root:1", "desync:2"};
    pick(&jm, &c, 1, "crash", v1, 3);
    assert_int_equal(c.rank, 2);
    assert_int_equal(c.nranks, 1);
    assert_non_null(strstr(c.why, "it is alone in a different collective"));
    assert_non_null(strstr(c.why, "other signals disagree"));
    /* listed in the policy's order, not the order of casting */
    assert_int_equal(c.nsignals, 3);
    assert_string_equal(c.signals[0], "desync:2");
    assert_string_equal(c.signals[1], "root:1");
    assert_string_equal(c.signals[2], "table:3");
    dx_culprit_fini(&c);
    dx_job_model_fini(&jm);
    /* all agree */
    const char *const v2[] = {"table:1", "root:1", "dump:4"};
    pick(&jm, &c, 1, "crash", v2, 3);
    assert_int_equal(c.rank, 1);
    assert_non_null(strstr(c.why, "the first root failure is on this rank; the other signals "
                                  "agree or are silent"));
    assert_int_equal(c.nsignals, 3); /* the informative dump vote is listed, decides nothing */
    dx_culprit_fini(&c);
    dx_job_model_fini(&jm);
}

static void test_policy_vetoes(void **state)
{
    (void)state;
    dx_job_model jm;
    dx_culprit c;
    /* step times name a straggler only under a finding about speed */
    const char *const slow[] = {"straggler:2", "table:0"};
    pick(&jm, &c, 1, "crash", slow, 2);
    assert_int_equal(c.rank, 0);
    assert_int_equal(c.nsignals, 1);
    dx_culprit_fini(&c);
    dx_job_model_fini(&jm);
    pick(&jm, &c, 1, "perf", slow, 2);
    assert_int_equal(c.rank, 2);
    dx_culprit_fini(&c);
    dx_job_model_fini(&jm);
    /* the launcher's rank yields to torchelastic's table */
    const char *const la[] = {"launcher:5", "table:3"};
    pick(&jm, &c, 1, "crash", la, 2);
    assert_int_equal(c.rank, 3);
    assert_int_equal(c.nsignals, 1);
    dx_culprit_fini(&c);
    dx_job_model_fini(&jm);
    /* the table's pick among ranks tied on the same root failure is no evidence */
    const char *const tied[] = {"table:1", "root-tied:1"};
    pick(&jm, &c, 1, "crash", tied, 2);
    assert_int_equal(c.rank, -1);
    assert_null(c.why);
    assert_int_equal(c.nsignals, 0); /* the tie is not a culprit signal */
    dx_culprit_fini(&c);
    dx_job_model_fini(&jm);
    /* with nothing reported, a launcher's account alone names no culprit ... */
    const char *const weak[] = {"table:1", "stopped:1"};
    pick(&jm, &c, 0, NULL, weak, 2);
    assert_int_equal(c.rank, -1);
    assert_int_equal(c.nsignals, 2);
    dx_culprit_fini(&c);
    dx_job_model_fini(&jm);
    /* ... nor a rank whose output stopped early, whatever else names it */
    const char *const stopped[] = {"watchdog:1", "stopped:1"};
    pick(&jm, &c, 0, NULL, stopped, 2);
    assert_int_equal(c.rank, -1);
    dx_culprit_fini(&c);
    dx_job_model_fini(&jm);
    pick(&jm, &c, 1, "hang", stopped, 2);
    assert_int_equal(c.rank, 1);
    dx_culprit_fini(&c);
    dx_job_model_fini(&jm);
}

static void test_several_ranks(void **state)
{
    (void)state;
    dx_job_model jm;
    assert_int_equal(dx_job_model_init(&jm), DDX_OK);
    const int ranks[] = {3, 7};
    assert_int_equal(dx_job_vote_ranks(&jm, "root", ranks, 2, 1, "two faulty nodes"), DDX_OK);
    assert_int_equal(dx_job_vote(&jm, "table", 7, 1, "table"), DDX_OK);
    dx_culprit_ctx ctx = {1, "hardware", 0};
    dx_culprit c;
    assert_int_equal(dx_culprit_pick(&jm, &ctx, &c), DDX_OK);
    assert_int_equal(c.rank, 3);
    assert_int_equal(c.nranks, 2);
    assert_int_equal(c.ranks[1], 7);
    /* the table names one of the picked ranks: it agrees */
    assert_non_null(strstr(c.why, "agree or are silent"));
    dx_culprit_fini(&c);
    dx_job_model_fini(&jm);
    /* a vote for another rank disagrees */
    assert_int_equal(dx_job_model_init(&jm), DDX_OK);
    assert_int_equal(dx_job_vote_ranks(&jm, "root", ranks, 2, 1, "two faulty nodes"), DDX_OK);
    assert_int_equal(dx_job_vote(&jm, "table", 5, 1, "table"), DDX_OK);
    assert_int_equal(dx_culprit_pick(&jm, &ctx, &c), DDX_OK);
    assert_non_null(strstr(c.why, "disagree"));
    dx_culprit_fini(&c);
    dx_job_model_fini(&jm);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_registry_well_formed),
        cmocka_unit_test(test_rank_state_is_private),
        cmocka_unit_test(test_policy_precedence_and_agreement),
        cmocka_unit_test(test_policy_vetoes),
        cmocka_unit_test(test_several_ranks),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
