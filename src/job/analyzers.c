/* analyzers.c -- the output of flight-recorder analyzers, pasted into a report: PyTorch's
 * fr_trace (torchfrtrace) and the collectives table of the distributed debug server (its
 * "FR Trace" and "TorchComms FR Trace" dumps).
 *
 * Reading:
 *   fr-analyzer  fr_trace's blocks ("Not all ranks joining collective ...", "Collective sequence
 *                number: N has errors", "Input/output mismatch in the collective ...") with the
 *                group, collective, state, missing ranks and the culprit of each error; the
 *                collectives table's rows with their missing_ranks column; the ranks whose dumps
 *                the analyzer lacked. Votes for the missing ranks of the first block of each group
 *                (the analyzer stops pairing a group's collectives after its first mismatch, so
 *                later blocks of that group may only follow from it), else for the culprits of
 *                its error messages
 *
 * Formats: torch/distributed/flight_recorder/components/utils.py (error_analysis,
 * check_no_missing_dump_files) and types.py (EntryState.log, MatchInfo), three generations of
 * fr_trace's headings (2.5's "Not all ranks joining collective 5 at entry 4", the oldest "Not all
 * ranks joining collective for group G collective OP ... Missing ranks are {..}", today's
 * "..., sequence number: 5"); torch/distributed/debug/_debug_handlers.py (the tables of
 * tabulate(db.collectives, headers=Collective._fields, tablefmt="plain")).
 */
#include "job.h"

static const dx_reading_fact an_facts[] = {
    {"job.analyzer_missing", "string",
     "a flight-recorder analyzer's output (fr_trace's \"Not all ranks joining collective\" block, "
     "the debug server's collectives table with its missing_ranks column): the ranks that did "
     "not join a collective, with the collective, its sequence number and group"},
    {"job.analyzer_mismatch", "string",
     "fr_trace's \"has errors\" block: the collective and the culprit and error type its error "
     "message names (\"Culprit rank 3; Error type: COLLECTIVE_TYPE_MISMATCH\")"},
    {"job.analyzer_no_dumps", "string",
     "the ranks a flight-recorder analyzer had no dump of (fr_trace's \"we missed FR dumps from "
     "ranks\", \"Missing dump files from ranks\"): informative, never blamed"},
};

enum {
    AN_JOINING,
    AN_ERRORS,
    AN_IO,
    AN_GROUP,
    AN_COLLECTIVE,
    AN_MISSING,
    AN_STATE,
    AN_CULPRIT,
    AN_NO_DUMPS,
    AN_NO_FILES,
    AN_TABLE_ROW,
};

#define FR_UTILS "torch/distributed/flight_recorder/components/utils.py"
#define FR_TYPES "torch/distributed/flight_recorder/components/types.py (EntryState.log)"

static const dx_signal an_patterns[] = {
    [AN_JOINING] = {"job-fr-joining", DX_ROLE_NOISE, 0,
                    "Not all ranks joining collective(?:, sequence number: (?<seq>\\d+)| "
                    "(?<seq2>\\d+) at entry \\d+| for group (?<pg>\\S+) collective (?<op>\\S+)"
                    "(?:\\s+Missing ranks are \\{(?<ranks>[\\d, ]*)\\})?)",
                    FR_UTILS " (error_analysis; 'collective N at entry R' in 2.5, 'for group G "
                             "collective OP' before)",
                    0},
    [AN_ERRORS] =
        {"job-fr-errors", DX_ROLE_NOISE, 0,
         "^\\s*Collective (?:sequence number: (?<seq>\\d+) has errors|(?<seq2>\\d+) at entry "
         "\\d+ errors)",
         FR_UTILS " (error_analysis)", 0},
    [AN_IO] = {"job-fr-io-mismatch", DX_ROLE_NOISE, 0,
               "^\\s*Input/output mismatch in the collective (?:sequence number: )?(?<seq>\\d+)",
               FR_UTILS " (error_analysis, all_to_all)", 0},
    [AN_GROUP] = {"job-fr-group", DX_ROLE_NOISE, 0, "^\\s*group info: (?<pg>\\S+)", FR_TYPES, 0},
    [AN_COLLECTIVE] = {"job-fr-collective", DX_ROLE_NOISE, 0, "^\\s*collective: (?<op>\\S+)",
                       FR_TYPES, 0},
    [AN_MISSING] = {"job-fr-missing", DX_ROLE_NOISE, 0,
                    "^\\s*missing ranks: \\{(?<ranks>\\d+(?:, \\d+)*)\\}", FR_TYPES, 0},
    [AN_STATE] = {"job-fr-state", DX_ROLE_NOISE, 0,
                  "^\\s*collective state: (?<state>scheduled|started|completed)", FR_TYPES, 0},
    [AN_CULPRIT] = {"job-fr-culprit", DX_ROLE_NOISE, 0,
                    "^\\s*error (?:msg|message): Culprit rank (?<rank>\\d+); (?:Error type: )?"
                    "(?:MatchState\\.)?(?<type>[A-Z_]+)",
                    FR_TYPES " (the errors, 'Culprit rank R; Error type: T, ...', MatchInfo)", 0},
    [AN_NO_DUMPS] = {"job-fr-no-dumps", DX_ROLE_NOISE, 0,
                     "because we missed FR dumps from ranks \\(\\{(?<ranks>\\d+(?:, \\d+)*)\\}\\)",
                     FR_UTILS " (error_analysis: 'We cannot decide what's wrong with this "
                              "collective entry because we missed FR dumps from ranks ({..})')",
                     0},
    [AN_NO_FILES] = {"job-fr-no-files", DX_ROLE_NOISE, 0,
                     "Missing dump files from ranks \\{(?<ranks>\\d+(?:, \\d+)*)\\}",
                     FR_UTILS " (check_no_missing_dump_files)", 0},
    [AN_TABLE_ROW] = {"job-fr-table-row", DX_ROLE_NOISE, 0,
                      "^\\s*\\d+\\s+\\S+\\s+(?:True|False)\\s+(?<seq>\\d+)\\s+\\d+\\s+\\d+\\s+"
                      "(?<pg>\\S+)\\s+(?<op>[a-z]+:\\S+)\\s.*?\\s(?<state>scheduled|started|"
                      "completed)\\s+\\[.*?\\]\\s+(?:\\d+\\s+\\d+\\s+)?"
                      "\\{(?<ranks>\\d+(?:, \\d+)*)\\}",
                      "torch/distributed/debug/_debug_handlers.py (FlightRecorderHandler.dump, "
                      "TorchCommsFlightRecorderHandler.dump: the Collective table, "
                      "types.py's field order, its missing_ranks column)",
                      0},
};

#define AN_MAX_RANKS 64

/* One block of fr_trace's output, or one row of the table. */
typedef struct an_block {
    int kind; /* AN_JOINING, AN_ERRORS, AN_IO, AN_TABLE_ROW */
    long long seq;
    char pg[64], op[48], state[12];
    int ranks[AN_MAX_RANKS]; /* missing ranks, or the culprits of the errors */
    size_t nranks;
    char type[40]; /* the first error type */
} an_block;

typedef struct an_state {
    an_block b[16];
    size_t nb;
    an_block *cur;            /* the block whose lines follow */
    int nodump[AN_MAX_RANKS]; /* ranks the analyzer had no dump of (reported, never blamed) */
    size_t nnodump;
    int culprits[AN_MAX_RANKS];
    size_t nculprits;
    char missing[320], mismatch[320];
} an_state;

static void add_rank(int *v, size_t *n, long long r)
{
    if (r < 0 || r >= DX_JOB_MAX_RANK)
        return;
    for (size_t i = 0; i < *n; i++)
        if (v[i] == r)
            return;
    if (*n < AN_MAX_RANKS)
        v[(*n)++] = (int)r;
}

/* "3" or "1, 5" into v */
static void parse_ranks(const dx_hit *h, int *v, size_t *n)
{
    dx_str s;
    if (!dx_hit_str(h, "ranks", &s))
        return;
    for (size_t i = 0; i < s.n;) {
        long long r = 0;
        int digits = 0;
        while (i < s.n && s.p[i] >= '0' && s.p[i] <= '9' && r < DX_JOB_MAX_RANK) {
            r = r * 10 + (s.p[i++] - '0');
            digits = 1;
        }
        if (digits)
            add_rank(v, n, r);
        i++;
    }
}

static an_block *new_block(an_state *st, int kind, const dx_hit *h)
{
    if (st->nb >= DX_ARRAY_LEN(st->b))
        return st->cur = NULL;
    an_block *b = &st->b[st->nb++];
    memset(b, 0, sizeof *b);
    b->kind = kind;
    b->seq = dx_hit_ll(h, "seq", -1);
    if (b->seq < 0)
        b->seq = dx_hit_ll(h, "seq2", -1);
    dx_hit_copy(h, "pg", b->pg, sizeof b->pg);
    dx_hit_copy(h, "op", b->op, sizeof b->op);
    parse_ranks(h, b->ranks, &b->nranks);
    return st->cur = b;
}

static int an_hit(dx_job_model *jm, void *stp, size_t row, const dx_hit *h)
{
    (void)jm;
    an_state *st = stp;
    an_block *b = st->cur;
    switch (row) {
    case AN_JOINING:
    case AN_ERRORS:
    case AN_IO:
        (void)new_block(st, (int)row, h);
        break;
    case AN_TABLE_ROW:
        if ((b = new_block(st, AN_TABLE_ROW, h)) != NULL)
            dx_hit_copy(h, "state", b->state, sizeof b->state);
        st->cur = NULL;
        break;
    case AN_GROUP:
        if (b)
            dx_hit_copy(h, "pg", b->pg, sizeof b->pg);
        break;
    case AN_COLLECTIVE:
        if (b)
            dx_hit_copy(h, "op", b->op, sizeof b->op);
        break;
    case AN_MISSING:
        if (b && b->kind == AN_JOINING)
            parse_ranks(h, b->ranks, &b->nranks);
        break;
    case AN_STATE:
        if (b)
            dx_hit_copy(h, "state", b->state, sizeof b->state);
        break;
    case AN_CULPRIT:
        if (b && b->kind == AN_ERRORS) {
            add_rank(b->ranks, &b->nranks, dx_hit_ll(h, "rank", -1));
            if (!b->type[0])
                dx_hit_copy(h, "type", b->type, sizeof b->type);
        }
        break;
    default: /* ranks without a dump */
        parse_ranks(h, st->nodump, &st->nnodump);
        break;
    }
    return DDX_OK;
}

/* "collective 5 (nccl:all_reduce) of group 0:default_pg, scheduled" */
static void say_block(dx_buf *b, const an_block *x)
{
    dx_buf_addf(b, "collective %lld", x->seq);
    if (x->op[0])
        dx_buf_addf(b, " (%s)", x->op);
    if (x->pg[0])
        dx_buf_addf(b, " of group %s", x->pg);
    if (x->state[0])
        dx_buf_addf(b, ", %s", x->state);
}

static void say_ranks(dx_buf *b, const int *r, size_t n)
{
    dx_buf_addf(b, "rank%s ", n > 1 ? "s" : "");
    for (size_t i = 0; i < n && i < 16; i++)
        dx_buf_addf(b, "%s%d", i ? (i + 1 == n ? " and " : ", ") : "", r[i]);
}

/* The first block of each group that names missing ranks: those ranks never joined; later
 * blocks of the same group may follow from the first. Else the culprits of error messages. */
static int an_finish(dx_job_model *jm, void *stp)
{
    an_state *st = stp;
    dx_buf miss = {0}, mis = {0};
    for (size_t i = 0; i < st->nb; i++) {
        const an_block *x = &st->b[i];
        if ((x->kind != AN_JOINING && x->kind != AN_TABLE_ROW) || !x->nranks)
            continue;
        int seen = 0;
        for (size_t k = 0; k < i && !seen; k++)
            seen = (st->b[k].kind == AN_JOINING || st->b[k].kind == AN_TABLE_ROW) &&
                   st->b[k].nranks && !strcmp(st->b[k].pg, x->pg);
        if (seen)
            continue;
        for (size_t k = 0; k < x->nranks; k++)
            add_rank(st->culprits, &st->nculprits, x->ranks[k]);
        if (miss.n < 200) {
            dx_buf_addf(&miss, "%s", miss.n ? "; " : "");
            say_ranks(&miss, x->ranks, x->nranks);
            dx_buf_addf(&miss, " did not join ");
            say_block(&miss, x);
        }
    }
    for (size_t i = 0; i < st->nb; i++) {
        const an_block *x = &st->b[i];
        if (x->kind != AN_ERRORS && x->kind != AN_IO)
            continue;
        if (!mis.n) {
            say_block(&mis, x);
            if (x->kind == AN_IO)
                dx_buf_addf(&mis, ": the inputs and outputs of the all-to-all do not add up");
            else if (x->nranks) {
                dx_buf_addf(&mis, ": %s, culprit ", x->type[0] ? x->type : "an error");
                say_ranks(&mis, x->ranks, x->nranks);
            } else
                dx_buf_addf(&mis, " has errors");
        }
        if (!st->nculprits)
            for (size_t k = 0; k < x->nranks; k++)
                add_rank(st->culprits, &st->nculprits, x->ranks[k]);
    }
    snprintf(st->missing, sizeof st->missing, "%s", miss.p ? miss.p : "");
    snprintf(st->mismatch, sizeof st->mismatch, "%s", mis.p ? mis.p : "");
    dx_buf_fini(&miss);
    dx_buf_fini(&mis);
    int strong = st->missing[0] != 0;
    /* (the ranks it had no dump of name no culprit: a dump is also missing when it was not
     * collected) */
    if (!st->nculprits)
        return DDX_OK;
    return dx_job_vote_ranks(
        jm, "analyzer", st->culprits, st->nculprits < DX_VOTE_RANKS ? st->nculprits : DX_VOTE_RANKS,
        strong ? 2 : 1, "flight-recorder analyzer: %s", strong ? st->missing : st->mismatch);
}

static int an_publish(dx_job_model *jm, void *stp, dx_facts *f)
{
    (void)jm;
    const an_state *st = stp;
    int rc = DDX_OK;
    if (st->missing[0])
        rc = dx_job_fact(f, "job.analyzer_missing", "a flight-recorder analyzer's output", "%s",
                         st->missing);
    if (!rc && st->mismatch[0])
        rc = dx_job_fact(f, "job.analyzer_mismatch", "fr_trace's error block", "%s", st->mismatch);
    if (!rc && st->nnodump) {
        dx_buf b = {0};
        for (size_t i = 0; i < st->nnodump; i++)
            dx_buf_addf(&b, "%s%d", i ? "," : "", st->nodump[i]);
        rc = dx_job_fact(f, "job.analyzer_no_dumps", "a flight-recorder analyzer's output", "%s",
                         b.p ? b.p : "");
        dx_buf_fini(&b);
    }
    return rc;
}

const dx_reading dx_reading_fr_analyzer = {
    .name = "fr-analyzer",
    .doc = "the output of flight-recorder analyzers (PyTorch's fr_trace, the debug server's FR "
           "and TorchComms FR tables): the ranks that did not join a collective, the culprits of "
           "its errors; votes for them",
    .facts = an_facts,
    .nfacts = DX_ARRAY_LEN(an_facts),
    .patterns = an_patterns,
    .npatterns = DX_ARRAY_LEN(an_patterns),
    .state_size = sizeof(an_state),
    .on_hit = an_hit,
    .finish = an_finish,
    .publish = an_publish,
};
