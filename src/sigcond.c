/* sigcond.c -- conditions on where a signal's line stands in the logs (sigcond.h).
 *
 * One rule per watched signal: its conditions (from its reference's conds), the signals its
 * after, not_after and not_followed_by name, the first and latest hit of it in the input being
 * read (for the rules that wait for it), and two holding lists: events waiting for the end of their input (a later
 * line of the not_followed_by signal, or any later line for at_end, drops them) and events
 * waiting for every input (at_end's "no failure anywhere", and the counting conditions, decided
 * over the whole job). The immediate tests need only the latest (after) or the first (not_after)
 * hit of the signal they name. Events the module holds are its own until they are committed or freed.
 */
#include "sigcond.h"

#include <strings.h>

#include "match.h"

typedef struct held {
    dx_event ev;
    int rank;      /* the rank the counting conditions see: the line's `rank` capture, else its */
    char *val;     /* the repeats or differs capture's value (copied), NULL none */
    long long num; /* missing: the capture's value, -1 none */
    long long of;  /* ... and out_of's */
} held;

typedef struct hlist {
    held *v;
    size_t n, cap;
} hlist;

typedef struct rule {
    uint32_t sig;
    const dx_sigcond *cond; /* NULL: a marker or a plain signal another rule names */
    int marker;
    int32_t after, nfb, nafter; /* the rules of the signals after, not_followed_by and not_after
                                   name, -1 none */
    /* its latest hit in the input being read */
    int seen;
    uint32_t last_input;
    uint64_t first_seq, last_seq; /* ... and its first */
    hlist cur;                    /* waiting for the end of their input */
    hlist job;                    /* waiting for every input */
} rule;

struct dx_sigcond_state {
    const ddx_kb *kb;
    int32_t *rule_of; /* [kb->nsig] its rule, -1 none */
    rule *rules;
    size_t nrules;
    uint32_t *at_end; /* the rules whose condition is at_end (every line looks at them only) */
    size_t nat_end;
};

static void held_free(held *h)
{
    dx_free(h->ev.text);
    dx_free(h->ev.caps);
    dx_free(h->val);
    memset(h, 0, sizeof *h);
}

static void hlist_clear(hlist *l)
{
    for (size_t i = 0; i < l->n; i++)
        held_free(&l->v[i]);
    l->n = 0;
}

static int hlist_add(hlist *l, held *h)
{
    if (dx_grow((void **)&l->v, &l->cap, l->n + 1, sizeof *l->v)) {
        held_free(h);
        return DDX_ENOMEM;
    }
    l->v[l->n++] = *h;
    return DDX_OK;
}

static int counting(const dx_sigcond *c) { return c && (c->repeats || c->missing || c->differs); }

/* ==== building the rules ==================================================================== */

/* The kb signal index of the signal named id in the reference whose signals start at first. */
static int32_t signal_named(const dx_ref *r, size_t first, const char *id)
{
    for (size_t i = 0; id && i < r->nsignals; i++)
        if (!strcmp(r->signals[i].id, id))
            return (int32_t)(first + i);
    return -1;
}

static int32_t rule_for(dx_sigcond_state *c, int32_t sig)
{
    if (sig < 0)
        return -1;
    if (c->rule_of[sig] < 0) {
        c->rule_of[sig] = (int32_t)c->nrules;
        rule *r = &c->rules[c->nrules++];
        memset(r, 0, sizeof *r);
        r->sig = (uint32_t)sig;
        r->after = r->nfb = r->nafter = -1;
    }
    return c->rule_of[sig];
}

int dx_sigcond_new(dx_sigcond_state **out, const ddx_kb *kb)
{
    *out = NULL;
    size_t want = 0;
    for (size_t i = 0; i < kb->nrefs; i++)
        for (size_t k = 0; k < kb->refs[i]->nsignals; k++)
            want += (kb->refs[i]->conds && DX_SIGCOND_ANY(&kb->refs[i]->conds[k])) ||
                    kb->refs[i]->signals[k].role == DX_ROLE_MARKER;
    if (!want)
        return DDX_OK;
    dx_sigcond_state *c = dx_calloc(1, sizeof *c);
    if (!c || !(c->rule_of = dx_malloc((kb->nsig ? kb->nsig : 1) * sizeof *c->rule_of)) ||
        !(c->rules = dx_calloc(4 * want, sizeof *c->rules)) ||
        !(c->at_end = dx_calloc(4 * want, sizeof *c->at_end))) {
        dx_sigcond_free(c);
        return DDX_ENOMEM;
    }
    c->kb = kb;
    for (size_t s = 0; s < kb->nsig; s++)
        c->rule_of[s] = -1;
    /* the references' signals come first in kb->sigs, in reference order */
    for (size_t i = 0, first = 0; i < kb->nrefs; first += kb->refs[i++]->nsignals) {
        const dx_ref *r = kb->refs[i];
        for (size_t k = 0; k < r->nsignals; k++) {
            const dx_sigcond *cd = r->conds && DX_SIGCOND_ANY(&r->conds[k]) ? &r->conds[k] : NULL;
            int marker = r->signals[k].role == DX_ROLE_MARKER;
            if (!cd && !marker)
                continue;
            int32_t x = rule_for(c, (int32_t)(first + k));
            c->rules[x].cond = cd;
            c->rules[x].marker = marker;
            if (cd) {
                int32_t a = rule_for(c, signal_named(r, first, cd->after));
                int32_t b = rule_for(c, signal_named(r, first, cd->not_followed_by));
                int32_t n = rule_for(c, signal_named(r, first, cd->not_after));
                c->rules[x].after = a;
                c->rules[x].nfb = b;
                c->rules[x].nafter = n;
            }
        }
    }
    for (size_t i = 0; i < c->nrules; i++)
        if (c->rules[i].cond && c->rules[i].cond->at_end)
            c->at_end[c->nat_end++] = (uint32_t)i;
    *out = c;
    return DDX_OK;
}

void dx_sigcond_free(dx_sigcond_state *c)
{
    if (!c)
        return;
    for (size_t i = 0; i < c->nrules; i++) {
        hlist_clear(&c->rules[i].cur);
        hlist_clear(&c->rules[i].job);
        dx_free(c->rules[i].cur.v);
        dx_free(c->rules[i].job.v);
    }
    dx_free(c->rules);
    dx_free(c->at_end);
    dx_free(c->rule_of);
    dx_free(c);
}

int dx_sigcond_watches(const dx_sigcond_state *c, uint32_t sig)
{
    return c && sig < c->kb->nsig && c->rule_of[sig] >= 0;
}

/* ==== reading ================================================================================ */

/* Does the text hold an ASCII letter or digit? A line without one (blank, a rule of dashes or
 * box-drawing characters that closes a banner) shows no progress, so it does not end an at_end
 * line's chance to be last. */
static int has_word(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        unsigned char ch = (unsigned char)s[i];
        if ((ch >= '0' && ch <= '9') || ((ch | 0x20) >= 'a' && (ch | 0x20) <= 'z'))
            return 1;
    }
    return 0;
}

/* Is the line a poster's mark that text was left out ("[...]", "...", "…", "<snip>",
 * "(truncated)")? The log went on past it, so a line before it was not the job's last. */
static int is_elision(const char *s, size_t n)
{
    while (n && (s[n - 1] == ' ' || s[n - 1] == '\t'))
        n--;
    while (n && (*s == ' ' || *s == '\t'))
        s++, n--;
    if (n >= 2 && strchr("[(<", s[0]) && strchr("])>", s[n - 1]))
        s++, n -= 2;
    if (!n)
        return 0;
    static const char *const words[] = {"snip", "snipped", "truncated", "omitted", "\xe2\x80\xa6"};
    for (size_t k = 0; k < DX_ARRAY_LEN(words); k++)
        if (n == strlen(words[k]) && !strncasecmp(s, words[k], n))
            return 1;
    size_t dots = 0;
    while (dots < n && s[dots] == '.')
        dots++;
    return dots == n && dots >= 3;
}

void dx_sigcond_line(dx_sigcond_state *c, uint32_t input, uint64_t seq, const char *body,
                     size_t len)
{
    (void)input;
    if (!c || !(has_word(body, len) || is_elision(body, len)))
        return;
    for (size_t k = 0; k < c->nat_end; k++) {
        rule *r = &c->rules[c->at_end[k]];
        if (r->cur.n && r->cur.v[r->cur.n - 1].ev.seq != seq)
            hlist_clear(&r->cur); /* a later line: it was not the last */
    }
}

int dx_sigcond_wants_lines(const dx_sigcond_state *c)
{
    for (size_t k = 0; c && k < c->nat_end; k++)
        if (c->rules[c->at_end[k]].cur.n)
            return 1;
    return 0;
}

static long long capture_ll(struct dx_scan *scan, const char *name)
{
    dx_str v;
    if (!name || !dx_scan_capture(scan, name, &v) || !v.n || v.n > 12)
        return -1;
    long long n = 0;
    for (size_t i = 0; i < v.n; i++) {
        if (v.p[i] < '0' || v.p[i] > '9')
            return -1;
        n = n * 10 + (v.p[i] - '0');
    }
    return n;
}

int dx_sigcond_hit(dx_sigcond_state *c, uint32_t sig, dx_event *ev, struct dx_scan *scan,
                   dx_sigcond_commit commit, void *ud)
{
    rule *r = &c->rules[c->rule_of[sig]];
    held h = {*ev, ev->rank, NULL, -1, -1};
    /* a line of the signal a not_followed_by names drops what waited before it */
    for (size_t i = 0; i < c->nrules; i++) {
        rule *q = &c->rules[i];
        if (q->nfb != c->rule_of[sig])
            continue;
        for (size_t k = 0; k < q->cur.n;) {
            if (q->cur.v[k].ev.seq < ev->seq) {
                held_free(&q->cur.v[k]);
                q->cur.v[k] = q->cur.v[--q->cur.n];
            } else
                k++;
        }
    }
    if (!r->seen)
        r->first_seq = ev->seq;
    r->seen = 1;
    r->last_input = ev->input;
    r->last_seq = ev->seq;
    if (r->marker) {
        held_free(&h);
        return DDX_OK;
    }
    const dx_sigcond *cd = r->cond;
    if (!cd)
        return commit(ud, sig, &h.ev); /* a plain signal another rule names */
    if (cd->after) {
        const rule *x = r->after >= 0 ? &c->rules[r->after] : NULL;
        if (!x || !x->seen || x->last_input != ev->input || x->last_seq >= ev->seq) {
            held_free(&h);
            return DDX_OK;
        }
    }
    if (cd->not_after) {
        /* (its first line in this input came before: the latest may be this very line) */
        const rule *x = r->nafter >= 0 ? &c->rules[r->nafter] : NULL;
        if (x && x->seen && x->last_input == ev->input && x->first_seq < ev->seq) {
            held_free(&h);
            return DDX_OK;
        }
    }
    /* one physical line read as several logical lines counts once */
    hlist *to = cd->at_end || cd->not_followed_by ? &r->cur : counting(cd) ? &r->job : NULL;
    if (to && to->n && to->v[to->n - 1].ev.seq == ev->seq) {
        held_free(&h);
        return DDX_OK;
    }
    long long rk = capture_ll(scan, "rank");
    if (rk >= 0 && rk < DX_JOB_MAX_RANK)
        h.rank = (int)rk;
    const char *vname = cd->repeats ? cd->repeats : cd->differs;
    dx_str v;
    if (vname && dx_scan_capture(scan, vname, &v) && !(h.val = dx_strndup(v.p, v.n))) {
        held_free(&h);
        return DDX_ENOMEM;
    }
    h.num = capture_ll(scan, cd->missing);
    h.of = capture_ll(scan, cd->out_of);
    if (!to)
        return commit(ud, sig, &h.ev);
    if (cd->at_end)
        hlist_clear(to); /* only the latest line can be the last */
    return hlist_add(to, &h);
}

int dx_sigcond_input_end(dx_sigcond_state *c, dx_sigcond_commit commit, void *ud)
{
    int rc = DDX_OK;
    for (size_t i = 0; c && i < c->nrules; i++) {
        rule *r = &c->rules[i];
        for (size_t k = 0; k < r->cur.n; k++) {
            held *h = &r->cur.v[k];
            if (rc) {
                held_free(h);
            } else if (r->cond->at_end || counting(r->cond)) {
                rc = hlist_add(&r->job, h);
            } else {
                dx_free(h->val);
                rc = commit(ud, r->sig, &h->ev);
            }
        }
        r->cur.n = 0;
        r->seen = 0; /* an after names a line of the same input */
    }
    return rc;
}

/* ==== the whole job ========================================================================= */

/* Which held lines pass the counting conditions (pass[k] set), and the rank a differs blames. */
static void decide_counting(const dx_sigcond *cd, hlist *l, unsigned char *pass)
{
    for (size_t k = 0; k < l->n; k++)
        pass[k] = 1;
    if (cd->repeats)
        for (size_t k = 0; k < l->n; k++) {
            int twice = 0;
            for (size_t j = 0; j < l->n && !twice; j++)
                twice = j != k && l->v[k].val && l->v[j].val &&
                        l->v[j].ev.input == l->v[k].ev.input && !strcmp(l->v[j].val, l->v[k].val);
            pass[k] &= twice;
        }
    if (cd->missing) {
        long long n = -1;
        for (size_t k = 0; k < l->n; k++)
            n = l->v[k].of > n ? l->v[k].of : n;
        int gap = 0;
        for (long long v = 0; v < n && v < 65536 && !gap; v++) {
            int found = 0;
            for (size_t k = 0; k < l->n && !found; k++)
                found = l->v[k].num == v;
            gap = !found;
        }
        for (size_t k = 0; k < l->n; k++)
            pass[k] &= gap;
    }
    if (cd->differs) {
        /* each rank's latest value; the one rank alone in its value while two or more others
           share one */
        int lone = -1;
        for (size_t k = 0; k < l->n && lone < 0; k++) {
            const held *a = &l->v[k];
            if (a->rank < 0 || !a->val)
                continue;
            int same = 0, others = 0, agree = 1;
            const char *other = NULL;
            for (size_t j = 0; j < l->n; j++) {
                const held *b = &l->v[j];
                if (b->rank < 0 || b->rank == a->rank || !b->val)
                    continue;
                if (!strcmp(b->val, a->val))
                    same = 1;
                else if (!other)
                    other = b->val;
                else
                    agree &= !strcmp(b->val, other);
                others++;
            }
            int ranks = 0; /* distinct other ranks */
            for (size_t j = 0; j < l->n; j++) {
                int dup = 0;
                for (size_t i = 0; i < j && !dup; i++)
                    dup = l->v[i].rank == l->v[j].rank;
                ranks += !dup && l->v[j].rank >= 0 && l->v[j].rank != a->rank && l->v[j].val;
            }
            if (!same && agree && other && ranks >= 2)
                lone = a->rank;
        }
        for (size_t k = 0; k < l->n; k++) {
            pass[k] &= lone >= 0 && l->v[k].rank == lone;
            if (pass[k])
                l->v[k].ev.blamed = lone;
        }
    }
}

int dx_sigcond_finish(dx_sigcond_state *c, int (*failed)(void *ud), dx_sigcond_commit commit,
                      void *ud)
{
    int rc = DDX_OK, fail = -1;
    for (size_t i = 0; c && i < c->nrules; i++) {
        rule *r = &c->rules[i];
        hlist *l = &r->job;
        if (!l->n)
            continue;
        unsigned char *pass = dx_calloc(l->n, 1);
        if (!pass) {
            hlist_clear(l);
            return DDX_ENOMEM;
        }
        if (counting(r->cond))
            decide_counting(r->cond, l, pass);
        else
            memset(pass, 1, l->n);
        if (r->cond->at_end) {
            if (fail < 0)
                fail = failed(ud) != 0;
            if (fail)
                memset(pass, 0, l->n);
        }
        for (size_t k = 0; k < l->n; k++) {
            if (pass[k] && !rc) {
                dx_free(l->v[k].val);
                rc = commit(ud, r->sig, &l->v[k].ev);
                memset(&l->v[k], 0, sizeof l->v[k]);
            } else
                held_free(&l->v[k]);
        }
        l->n = 0;
        dx_free(pass);
    }
    return rc;
}
