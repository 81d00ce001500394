/* kb_load.c -- reading references from Markdown files with YAML front matter.
 *
 * A reference file is "---\n<YAML>\n---\n<Markdown body>". The YAML is loaded with libyaml's
 * document API and walked key by key; an unknown key, a missing field or a value of the wrong
 * type is an error that names the file and the line ("nccl/x.md:12: unknown key 'severty'").
 * Strings are copied into an arena owned by the caller's dx_reflist, so a loaded reference
 * has the same shape as a built-in one. The numbered items under "## Fix" in the body become
 * the reference's fix steps.
 */
#include "facts.h"
#include "kb.h"

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <sys/stat.h>
#include <yaml.h>

/* ==== arena ================================================================================ */

struct dx_arena {
    char **blocks;
    size_t nblocks, capblocks;
    char *cur;
    size_t left;
};

dx_arena *dx_arena_new(void) { return dx_calloc(1, sizeof(dx_arena)); }

void dx_arena_free(dx_arena *a)
{
    if (!a)
        return;
    for (size_t i = 0; i < a->nblocks; i++)
        dx_free(a->blocks[i]);
    dx_free(a->blocks);
    dx_free(a);
}

void *dx_arena_alloc(dx_arena *a, size_t n)
{
    n = (n + 15) & ~(size_t)15;
    if (n > a->left) {
        size_t sz = n > 65536 ? n : 65536;
        char *b = dx_calloc(1, sz);
        if (!b)
            return NULL;
        if (dx_grow((void **)&a->blocks, &a->capblocks, a->nblocks + 1, sizeof(char *)) != DDX_OK) {
            dx_free(b);
            return NULL;
        }
        a->blocks[a->nblocks++] = b;
        a->cur = b;
        a->left = sz;
    }
    void *p = a->cur;
    a->cur += n;
    a->left -= n;
    return p;
}

char *dx_arena_strndup(dx_arena *a, const char *s, size_t n)
{
    char *d = dx_arena_alloc(a, n + 1);
    if (d) {
        memcpy(d, s, n);
        d[n] = '\0';
    }
    return d;
}

/* ==== names ================================================================================ */

static const char *const role_names[] = {"root",    "symptom", "wrapper",
                                         "against", "noise",   "marker"};
static const char *const op_names[] = {"equals", "range", "matches", "exists"};

const char *dx_role_name(int role)
{
    return role >= 0 && (size_t)role < DX_ARRAY_LEN(role_names) ? role_names[role] : "?";
}

const char *dx_op_name(int op)
{
    return op >= 0 && (size_t)op < DX_ARRAY_LEN(op_names) ? op_names[op] : "?";
}

static int lookup(const char *const *names, size_t n, const char *s)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(names[i], s) == 0)
            return (int)i;
    return -1;
}

/* ==== YAML walking ========================================================================= */

typedef struct parse_ctx {
    yaml_document_t *doc;
    dx_arena *arena;
    const char *path;
    int line_base; /* file line of YAML line 0 */
    ddx_error *err;
    /* the conditions of the signals parsed so far, in order (a signal's conditions are kept
       beside it, in dx_ref.conds); any: one of them has one */
    dx_sigcond *conds;
    size_t nconds, capconds;
    int anycond;
} parse_ctx;

static int node_line(parse_ctx *c, yaml_node_t *n)
{
    return c->line_base + (int)n->start_mark.line;
}

static int fail_at(parse_ctx *c, yaml_node_t *n, const char *what, const char *key)
{
    return dx_err(c->err, DDX_EFORMAT, "%s:%d: %s%s%s%s", c->path, n ? node_line(c, n) : 1, what,
                  key ? " '" : "", key ? key : "", key ? "'" : "");
}

static const char *scalar(yaml_node_t *n)
{
    return n && n->type == YAML_SCALAR_NODE ? (const char *)n->data.scalar.value : NULL;
}

static int get_str(parse_ctx *c, yaml_node_t *n, const char *key, const char **out)
{
    const char *s = scalar(n);
    if (!s)
        return fail_at(c, n, "expected a text value for", key);
    *out = dx_arena_strndup(c->arena, s, n->data.scalar.length);
    return *out ? DDX_OK : DDX_ENOMEM;
}

static int get_num(parse_ctx *c, yaml_node_t *n, const char *key, double *out)
{
    const char *s = scalar(n);
    char *end = NULL;
    if (!s || !*s)
        return fail_at(c, n, "expected a number for", key);
    errno = 0;
    double v = strtod(s, &end);
    if (*end || errno || !isfinite(v))
        return fail_at(c, n, "expected a number for", key);
    *out = v;
    return DDX_OK;
}

static int get_bool(parse_ctx *c, yaml_node_t *n, const char *key, int *out)
{
    const char *s = scalar(n);
    if (s && (!strcmp(s, "true") || !strcmp(s, "yes")))
        *out = 1;
    else if (s && (!strcmp(s, "false") || !strcmp(s, "no")))
        *out = 0;
    else
        return fail_at(c, n, "expected true or false for", key);
    return DDX_OK;
}

/* A list of strings (a YAML sequence of scalars; a single scalar counts as a list of one). */
static int get_strlist(parse_ctx *c, yaml_node_t *n, const char *key, const char *const **out,
                       size_t *count)
{
    if (n->type == YAML_SCALAR_NODE) {
        const char **arr = dx_arena_alloc(c->arena, sizeof(char *));
        if (!arr || get_str(c, n, key, &arr[0]) != DDX_OK)
            return c->err && c->err->code ? c->err->code : DDX_ENOMEM;
        *out = arr;
        *count = 1;
        return DDX_OK;
    }
    if (n->type != YAML_SEQUENCE_NODE)
        return fail_at(c, n, "expected a list for", key);
    size_t len = (size_t)(n->data.sequence.items.top - n->data.sequence.items.start);
    const char **arr = dx_arena_alloc(c->arena, (len ? len : 1) * sizeof(char *));
    if (!arr)
        return DDX_ENOMEM;
    for (size_t i = 0; i < len; i++) {
        yaml_node_t *it = yaml_document_get_node(c->doc, n->data.sequence.items.start[i]);
        int rc = get_str(c, it, key, &arr[i]);
        if (rc)
            return rc;
    }
    *out = arr;
    *count = len;
    return DDX_OK;
}

typedef int (*item_fn)(parse_ctx *c, yaml_node_t *item, void *dst);

/* Parses a sequence of mappings into an arena array of elem-sized items. */
static int get_seq(parse_ctx *c, yaml_node_t *n, const char *key, size_t elem, item_fn fn,
                   void **out, size_t *count)
{
    if (n->type != YAML_SEQUENCE_NODE)
        return fail_at(c, n, "expected a list for", key);
    size_t len = (size_t)(n->data.sequence.items.top - n->data.sequence.items.start);
    char *arr = dx_arena_alloc(c->arena, (len ? len : 1) * elem);
    if (!arr)
        return DDX_ENOMEM;
    for (size_t i = 0; i < len; i++) {
        yaml_node_t *it = yaml_document_get_node(c->doc, n->data.sequence.items.start[i]);
        if (!it || it->type != YAML_MAPPING_NODE)
            return fail_at(c, it, "expected a mapping in", key);
        int rc = fn(c, it, arr + i * elem);
        if (rc)
            return rc;
    }
    *out = arr;
    *count = len;
    return DDX_OK;
}

#define FOR_EACH_PAIR(c, map, k, v)                                                                \
    for (yaml_node_pair_t *p_ = (map)->data.mapping.pairs.start;                                   \
         p_ < (map)->data.mapping.pairs.top; p_++)                                                 \
        for (yaml_node_t *k = yaml_document_get_node((c)->doc, p_->key),                           \
                         *v = yaml_document_get_node((c)->doc, p_->value);                         \
             k; k = NULL)

/* ==== fields =============================================================================== */

/* A mapping's keys are read by a table: each row names a key, the kind of its value and where
 * the value goes in the item being filled (the item is a reference, a signal, a check, ...).
 * Keys whose reading is more than a store (a condition's operator, "expect") go to the
 * mapping's own function. */
typedef enum field_kind {
    FK_STR,     /* text */
    FK_NUM,     /* a finite number (double) */
    FK_BOOL,    /* true/yes or false/no (int) */
    FK_NAME,    /* one word of a list; the value is the word's index (int) */
    FK_STRLIST, /* a list of texts, with its count (size_t) */
    FK_SEQ      /* a list of mappings, each read by fn into an elem-sized item, with its count */
} field_kind;

typedef struct field {
    const char *key;
    field_kind kind;
    size_t off;               /* where the value goes */
    size_t count_off;         /* FK_STRLIST, FK_SEQ: where the count goes */
    size_t elem;              /* FK_SEQ: an item's size */
    item_fn fn;               /* FK_SEQ: reads one item */
    const char *const *names; /* FK_NAME: the words allowed */
    size_t nnames;
    const char *bad; /* FK_NAME: the error when the value is none of them */
} field;

#define F_STR(T, k, m)                                                                             \
    {                                                                                              \
        .key = k, .kind = FK_STR, .off = offsetof(T, m)                                            \
    }
#define F_NUM(T, k, m)                                                                             \
    {                                                                                              \
        .key = k, .kind = FK_NUM, .off = offsetof(T, m)                                            \
    }
#define F_BOOL(T, k, m)                                                                            \
    {                                                                                              \
        .key = k, .kind = FK_BOOL, .off = offsetof(T, m)                                           \
    }
#define F_NAME(T, k, m, words, msg)                                                                \
    {                                                                                              \
        .key = k, .kind = FK_NAME, .off = offsetof(T, m), .names = words,                          \
        .nnames = DX_ARRAY_LEN(words), .bad = msg                                                  \
    }
#define F_LIST(T, k, m, n)                                                                         \
    {                                                                                              \
        .key = k, .kind = FK_STRLIST, .off = offsetof(T, m), .count_off = offsetof(T, n)           \
    }
#define F_SEQ(T, k, m, n, E, f)                                                                    \
    {                                                                                              \
        .key = k, .kind = FK_SEQ, .off = offsetof(T, m), .count_off = offsetof(T, n),              \
        .elem = sizeof(E), .fn = f                                                                 \
    }

/* Reads key's value into item by the table; 1 when no row has that key. */
static int read_field(parse_ctx *c, const field *tab, size_t n, const char *key, yaml_node_t *v,
                      void *item)
{
    const field *f = NULL;
    for (size_t i = 0; i < n && !f; i++)
        if (!strcmp(tab[i].key, key))
            f = &tab[i];
    if (!f)
        return 1;
    char *at = (char *)item + f->off;
    int rc = DDX_OK;
    switch (f->kind) {
    case FK_STR: {
        const char *s = NULL;
        if (!(rc = get_str(c, v, key, &s)))
            memcpy(at, &s, sizeof s);
        return rc;
    }
    case FK_NUM:
        return get_num(c, v, key, (double *)(void *)at);
    case FK_BOOL:
        return get_bool(c, v, key, (int *)(void *)at);
    case FK_NAME: {
        const char *s = scalar(v);
        int i = s ? lookup(f->names, f->nnames, s) : -1;
        if (i < 0)
            return fail_at(c, v, f->bad, s ? s : "?");
        memcpy(at, &i, sizeof i);
        return DDX_OK;
    }
    case FK_STRLIST: {
        const char *const *l = NULL;
        size_t cnt = 0;
        rc = get_strlist(c, v, key, &l, &cnt);
        if (!rc) {
            memcpy(at, &l, sizeof l);
            memcpy((char *)item + f->count_off, &cnt, sizeof cnt);
        }
        return rc;
    }
    case FK_SEQ: {
        void *arr = NULL;
        size_t cnt = 0;
        rc = get_seq(c, v, key, f->elem, f->fn, &arr, &cnt);
        if (!rc) {
            memcpy(at, &arr, sizeof arr);
            memcpy((char *)item + f->count_off, &cnt, sizeof cnt);
        }
        return rc;
    }
    }
    return 1;
}

/* A mapping's own keys, those no table row reads; 1 when key is not one of them either. */
typedef int (*extra_fn)(parse_ctx *c, const char *key, yaml_node_t *v, void *item);

/* Reads every key of mapping m into item: by the table, else by extra (may be NULL); a key
 * neither knows is an error "<unknown> '<key>'". */
static int read_map(parse_ctx *c, yaml_node_t *m, const field *tab, size_t n, extra_fn extra,
                    const char *unknown, void *item)
{
    FOR_EACH_PAIR(c, m, k, v)
    {
        const char *key = scalar(k);
        if (!key)
            return fail_at(c, k, "expected a key", NULL);
        int rc = read_field(c, tab, n, key, v, item);
        if (rc == 1 && extra)
            rc = extra(c, key, v, item);
        if (rc == 1)
            return fail_at(c, k, unknown, key);
        if (rc)
            return rc;
    }
    return DDX_OK;
}

/* A condition's operator key (equals/range/matches/exists) and its value; 1 when key is no
 * operator. */
static int cond_key(parse_ctx *c, const char *key, yaml_node_t *v, dx_cond *cond, int *seen)
{
    int op = lookup(op_names, DX_ARRAY_LEN(op_names), key);
    if (op < 0)
        return 1; /* not an operator key */
    if (*seen)
        return fail_at(c, v, "only one of equals/range/matches/exists may be given, found", key);
    *seen = 1;
    cond->op = op;
    return get_str(c, v, key, &cond->value);
}

/* ==== the items ============================================================================ */

/* A signal and its conditions on where its line stands, read from one mapping. */
typedef struct signal_draft {
    dx_signal sig;
    dx_sigcond cond;
} signal_draft;

static const field signal_fields[] = {
    F_STR(signal_draft, "id", sig.id),
    F_NAME(signal_draft, "role", sig.role, role_names,
           "role must be root, symptom, wrapper, against, noise or marker, found"),
    F_NUM(signal_draft, "weight", sig.weight),
    F_STR(signal_draft, "pattern", sig.pattern),
    F_STR(signal_draft, "source", sig.source),
    F_BOOL(signal_draft, "caseless", sig.caseless),
    F_BOOL(signal_draft, "at_end", cond.at_end),
    F_STR(signal_draft, "after", cond.after),
    F_STR(signal_draft, "not_followed_by", cond.not_followed_by),
    F_STR(signal_draft, "not_after", cond.not_after),
    F_STR(signal_draft, "repeats", cond.repeats),
    F_STR(signal_draft, "missing", cond.missing),
    F_STR(signal_draft, "out_of", cond.out_of),
    F_STR(signal_draft, "differs", cond.differs),
};

static int parse_signal(parse_ctx *c, yaml_node_t *m, void *dst)
{
    signal_draft d = {.sig = {.role = -1, .weight = NAN}};
    int rc = read_map(c, m, signal_fields, DX_ARRAY_LEN(signal_fields), NULL,
                      "unknown key in signal:", &d);
    if (rc)
        return rc;
    if (!d.sig.id)
        return fail_at(c, m, "signal without", "id");
    if (!d.sig.pattern)
        return fail_at(c, m, "signal without a pattern:", d.sig.id);
    if (d.sig.role < 0)
        return fail_at(c, m, "signal without a role:", d.sig.id);
    if (isnan(d.sig.weight))
        return fail_at(c, m, "signal without a weight:", d.sig.id);
    if (dx_grow((void **)&c->conds, &c->capconds, c->nconds + 1, sizeof *c->conds))
        return DDX_ENOMEM;
    c->conds[c->nconds++] = d.cond;
    c->anycond |= DX_SIGCOND_ANY(&d.cond);
    memcpy(dst, &d.sig, sizeof d.sig);
    return DDX_OK;
}

/* A context condition, or a check, and whether an operator key was seen. */
typedef struct cond_draft {
    dx_cond cond;
    int seen;
} cond_draft;

typedef struct check_draft {
    dx_check check;
    int seen;
} check_draft;

static const field context_fields[] = {
    F_STR(cond_draft, "fact", cond.fact),  F_NUM(cond_draft, "weight", cond.weight),
    F_STR(cond_draft, "says", cond.says),  F_BOOL(cond_draft, "raise_only", cond.raise_only),
    F_BOOL(cond_draft, "root", cond.root),
};

static int context_key(parse_ctx *c, const char *key, yaml_node_t *v, void *item)
{
    cond_draft *d = item;
    return cond_key(c, key, v, &d->cond, &d->seen);
}

static int parse_context(parse_ctx *c, yaml_node_t *m, void *dst)
{
    cond_draft d = {.cond = {.weight = NAN}};
    int rc = read_map(c, m, context_fields, DX_ARRAY_LEN(context_fields), context_key,
                      "unknown key in context:", &d);
    if (rc)
        return rc;
    if (!d.cond.fact)
        return fail_at(c, m, "context condition without a", "fact");
    if (!d.seen)
        return fail_at(c, m, "context condition needs equals, range, matches or exists for",
                       d.cond.fact);
    if (isnan(d.cond.weight))
        return fail_at(c, m, "context condition without a weight:", d.cond.fact);
    if (d.cond.root && d.cond.weight < 2.0)
        return fail_at(c, m,
                       "a root context condition needs a weight of 2 or more (a fact that "
                       "alone proves the reference):",
                       d.cond.fact);
    memcpy(dst, &d.cond, sizeof d.cond);
    return DDX_OK;
}

static const field check_fields[] = {
    F_STR(check_draft, "says", check.says),
    F_STR(check_draft, "command", check.command),
    F_STR(check_draft, "fact", check.cond.fact),
};

/* "expect: VALUE" (the fact equals VALUE) and the operator keys. */
static int check_key(parse_ctx *c, const char *key, yaml_node_t *v, void *item)
{
    check_draft *d = item;
    if (strcmp(key, "expect") != 0)
        return cond_key(c, key, v, &d->check.cond, &d->seen);
    d->seen = 1;
    d->check.cond.op = DX_OP_EQUALS;
    int rc = get_str(c, v, key, &d->check.cond.value);
    const char *val = d->check.cond.value;
    /* "expect: exists" would compare the fact's value with the word "exists" */
    if (!rc && val &&
        (!strcmp(val, "exists") || !strcmp(val, "range") || !strcmp(val, "matches") ||
         val[0] == '<' || val[0] == '>'))
        return fail_at(c, v,
                       "expect compares the fact's value; to test an operator write "
                       "it as the key (exists: true, range: '>=2', matches: ...), not",
                       val);
    return rc;
}

static int parse_check(parse_ctx *c, yaml_node_t *m, void *dst)
{
    check_draft d = {0};
    int rc = read_map(c, m, check_fields, DX_ARRAY_LEN(check_fields), check_key,
                      "unknown key in check:", &d);
    if (rc)
        return rc;
    if (!d.check.says)
        return fail_at(c, m, "check without", "says");
    if (d.check.cond.fact && !d.seen)
        return fail_at(
            c, m, "check with a fact needs expect, range, matches or exists:", d.check.cond.fact);
    if (!d.check.cond.fact && d.seen)
        return fail_at(c, m, "check with an expectation but no fact:", d.check.says);
    memcpy(dst, &d.check, sizeof d.check);
    return DDX_OK;
}

static const field variant_fields[] = {
    F_STR(dx_variant, "id", id),
    F_STR(dx_variant, "title", title),
    F_LIST(dx_variant, "signals", signals, nsignals),
    F_LIST(dx_variant, "fix", fix, nfix),
};

static int parse_variant(parse_ctx *c, yaml_node_t *m, void *dst)
{
    dx_variant *d = dst;
    memset(d, 0, sizeof *d);
    int rc = read_map(c, m, variant_fields, DX_ARRAY_LEN(variant_fields), NULL,
                      "unknown key in variant:", d);
    if (rc)
        return rc;
    if (!d->id || !d->title)
        return fail_at(c, m, "variant needs an id and a title", NULL);
    if (!d->nsignals)
        return fail_at(c, m, "variant names no signals:", d->id);
    return DDX_OK;
}

static const field neighbour_fields[] = {
    F_STR(dx_neighbour, "id", id),
    F_STR(dx_neighbour, "tell", tell),
};

static int parse_neighbour(parse_ctx *c, yaml_node_t *m, void *dst)
{
    dx_neighbour *d = dst;
    memset(d, 0, sizeof *d);
    int rc = read_map(c, m, neighbour_fields, DX_ARRAY_LEN(neighbour_fields), NULL,
                      "unknown key in neighbour:", d);
    if (rc)
        return rc;
    if (!d->id || !d->tell)
        return fail_at(c, m, "neighbour needs an id and a tell", NULL);
    return DDX_OK;
}

static const field example_fields[] = {
    F_STR(dx_example, "path", path),
    F_STR(dx_example, "source", source),
    F_BOOL(dx_example, "constructed", constructed),
};

static int parse_example(parse_ctx *c, yaml_node_t *m, void *dst)
{
    dx_example *d = dst;
    memset(d, 0, sizeof *d);
    int rc = read_map(c, m, example_fields, DX_ARRAY_LEN(example_fields), NULL,
                      "unknown key in example:", d);
    if (rc)
        return rc;
    if (!d->path || !d->source)
        return fail_at(c, m, "example needs a path and a source", NULL);
    return DDX_OK;
}

/* "culprit:" words; the index is dx_ref.culprit_other */
static const char *const culprit_names[] = {"this-rank", "other-rank", "rank-zero"};

static const field ref_fields[] = {
    F_STR(dx_ref, "id", id),
    F_STR(dx_ref, "title", title),
    F_STR(dx_ref, "category", category),
    F_STR(dx_ref, "kind", kind),
    F_STR(dx_ref, "summary", summary),
    F_NUM(dx_ref, "prior", prior),
    F_LIST(dx_ref, "frameworks", frameworks, nframeworks),
    F_LIST(dx_ref, "sources", sources, nsources),
    F_SEQ(dx_ref, "signals", signals, nsignals, dx_signal, parse_signal),
    F_SEQ(dx_ref, "context", context, ncontext, dx_cond, parse_context),
    F_SEQ(dx_ref, "checks", checks, nchecks, dx_check, parse_check),
    F_SEQ(dx_ref, "variants", variants, nvariants, dx_variant, parse_variant),
    F_SEQ(dx_ref, "neighbours", neighbours, nneighbours, dx_neighbour, parse_neighbour),
    F_NAME(dx_ref, "culprit", culprit_other, culprit_names,
           "culprit must be this-rank, other-rank or rank-zero, found"),
    F_SEQ(dx_ref, "examples", examples, nexamples, dx_example, parse_example),
};

/* ==== the body ============================================================================= */

/* Collects the numbered items ("1. ...", possibly wrapped over several lines) under "## Fix". */
static int parse_fix(dx_arena *a, const char *body, dx_ref *r)
{
    const char *s = strstr(body, "\n## Fix");
    if (!s && strncmp(body, "## Fix", 6) == 0)
        s = body;
    else if (s)
        s++;
    r->fix = NULL;
    r->nfix = 0;
    if (!s)
        return DDX_OK;
    s = strchr(s, '\n');
    if (!s)
        return DDX_OK;
    const char *items[32];
    size_t lens[32], n = 0;
    for (const char *line = s + 1; *line;) {
        const char *eol = strchr(line, '\n');
        size_t len = eol ? (size_t)(eol - line) : strlen(line);
        if (len >= 3 && line[0] == '#' && line[1] == '#')
            break;
        const char *q = line;
        while (q < line + len && *q >= '0' && *q <= '9')
            q++;
        if (q > line && q + 1 < line + len && *q == '.' && q[1] == ' ') {
            if (n < DX_ARRAY_LEN(items)) {
                items[n] = q + 2;
                lens[n] = len - (size_t)(q + 2 - line);
                n++;
            }
        } else if (n && len > 0 && (line[0] == ' ' || line[0] == '\t')) {
            lens[n - 1] = (size_t)(line + len - items[n - 1]); /* continuation line */
        }
        if (!eol)
            break;
        line = eol + 1;
    }
    if (!n)
        return DDX_OK;
    const char **arr = dx_arena_alloc(a, n * sizeof(char *));
    if (!arr)
        return DDX_ENOMEM;
    for (size_t i = 0; i < n; i++) {
        /* fold the wrapped lines into one line of text */
        char *t = dx_arena_strndup(a, items[i], lens[i]);
        if (!t)
            return DDX_ENOMEM;
        size_t w = 0;
        int space = 0;
        for (size_t j = 0; t[j]; j++) {
            char ch = t[j];
            if (ch == '\n' || ch == '\t' || ch == ' ') {
                space = 1;
                continue;
            }
            if (space && w)
                t[w++] = ' ';
            space = 0;
            t[w++] = ch;
        }
        t[w] = '\0';
        arr[i] = t;
    }
    r->fix = arr;
    r->nfix = n;
    return DDX_OK;
}

/* ==== one file ============================================================================= */

int dx_kb_parse(dx_arena *a, const char *relpath, const char *text, size_t len, dx_ref *r,
                ddx_error *err)
{
    memset(r, 0, sizeof *r);
    r->prior = NAN;
    if (len < 4 || strncmp(text, "---", 3) != 0 || (text[3] != '\n' && text[3] != '\r'))
        return dx_err(err, DDX_EFORMAT,
                      "%s:1: a reference starts with a '---' line and YAML front "
                      "matter (see docs/reference-format.md)",
                      relpath);
    const char *fm = text + 4;
    const char *end = NULL;
    for (const char *p = fm; p < text + len;) {
        const char *eol = memchr(p, '\n', (size_t)(text + len - p));
        size_t l = eol ? (size_t)(eol - p) : (size_t)(text + len - p);
        if (l >= 3 && strncmp(p, "---", 3) == 0 && (l == 3 || p[3] == '\r')) {
            end = p;
            break;
        }
        if (!eol)
            break;
        p = eol + 1;
    }
    if (!end)
        return dx_err(err, DDX_EFORMAT, "%s: the front matter is not closed by a '---' line",
                      relpath);
    const char *body = strchr(end, '\n');
    body = body ? body + 1 : text + len;

    /* libyaml slows down with nesting (quadratically); no real front matter nests deep */
    size_t deep_line;
    if (dx_nesting_depth(fm, (size_t)(end - fm), DX_CONFIG_DEPTH, &deep_line) > DX_CONFIG_DEPTH)
        return dx_err(err, DDX_EFORMAT,
                      "%s:%zu: the front matter is nested deeper than %d levels; a reference "
                      "nests a few (see docs/reference-format.md)",
                      relpath, deep_line + 1, DX_CONFIG_DEPTH);
    yaml_parser_t parser;
    yaml_document_t doc;
    if (!yaml_parser_initialize(&parser))
        return dx_err(err, DDX_ENOMEM, "out of memory");
    yaml_parser_set_input_string(&parser, (const unsigned char *)fm, (size_t)(end - fm));
    if (!yaml_parser_load(&parser, &doc)) {
        int rc = dx_err(err, DDX_EFORMAT, "%s:%d: YAML error: %s", relpath,
                        2 + (int)parser.problem_mark.line,
                        parser.problem ? parser.problem : "cannot parse the front matter");
        yaml_parser_delete(&parser);
        return rc;
    }
    yaml_parser_delete(&parser);

    parse_ctx c = {.doc = &doc, .arena = a, .path = relpath, .line_base = 2, .err = err};
    int rc = DDX_OK;
    yaml_node_t *root = yaml_document_get_root_node(&doc);
    if (!root || root->type != YAML_MAPPING_NODE) {
        rc = dx_err(err, DDX_EFORMAT, "%s:2: the front matter must be a YAML mapping", relpath);
        goto fail;
    }
    rc = read_map(&c, root, ref_fields, DX_ARRAY_LEN(ref_fields), NULL, "unknown key", r);
    if (rc)
        goto fail;
    /* the signals' conditions, kept beside them when one has any */
    if (c.anycond && c.nconds == r->nsignals) {
        dx_sigcond *cd = dx_arena_alloc(a, r->nsignals * sizeof *cd);
        if (!cd) {
            rc = DDX_ENOMEM;
            goto fail;
        }
        r->conds = memcpy(cd, c.conds, r->nsignals * sizeof *cd);
    }
    static const char *const required[] = {"id", "title", "category", "kind"};
    const char *const have[] = {r->id, r->title, r->category, r->kind};
    for (size_t i = 0; i < DX_ARRAY_LEN(required); i++)
        if (!have[i]) {
            rc = dx_err(err, DDX_EFORMAT, "%s:2: missing '%s'", relpath, required[i]);
            goto fail;
        }
    if (isnan(r->prior)) {
        rc = dx_err(err, DDX_EFORMAT, "%s:2: missing 'prior'", relpath);
        goto fail;
    }
    r->file = dx_arena_strndup(a, relpath, strlen(relpath));
    r->body = dx_arena_strndup(a, body, (size_t)(text + len - body));
    if (!r->file || !r->body) {
        rc = DDX_ENOMEM;
        goto fail;
    }
    rc = parse_fix(a, r->body, r);
fail:
    dx_free(c.conds);
    yaml_document_delete(&doc);
    return rc;
}

/* ==== a folder ============================================================================= */

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Lists the sorted entries of dir (without "." entries); caller frees each and the array. */
static int list_dir(const char *dir, char ***out, size_t *count)
{
    DIR *d = opendir(dir);
    if (!d)
        return DDX_EIO;
    char **names = NULL;
    size_t n = 0, cap = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        if (dx_grow((void **)&names, &cap, n + 1, sizeof(char *)) != DDX_OK ||
            !(names[n] = dx_strdup(e->d_name))) {
            closedir(d);
            for (size_t i = 0; i < n; i++)
                dx_free(names[i]);
            dx_free(names);
            return DDX_ENOMEM;
        }
        n++;
    }
    closedir(d);
    if (n)
        qsort(names, n, sizeof(char *), cmp_str);
    *out = names;
    *count = n;
    return DDX_OK;
}

static int read_file(const char *path, char **out, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return DDX_EIO;
    dx_buf b = {0};
    char tmp[16384];
    size_t got;
    while ((got = fread(tmp, 1, sizeof tmp, f)) > 0)
        if (dx_buf_add(&b, tmp, got) != DDX_OK) {
            fclose(f);
            dx_buf_fini(&b);
            return DDX_ENOMEM;
        }
    int bad = ferror(f);
    fclose(f);
    if (bad) {
        dx_buf_fini(&b);
        return DDX_EIO;
    }
    dx_buf_cstr(&b);
    *out = b.p;
    *len = b.n;
    return DDX_OK;
}

static int is_dir(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

static int ends_with(const char *s, const char *suffix)
{
    size_t a = strlen(s), b = strlen(suffix);
    return a >= b && strcmp(s + a - b, suffix) == 0;
}

int dx_kb_load_dir(const char *dir, dx_reflist *out, dx_buf *problems, ddx_error *err)
{
    char **cats = NULL;
    size_t ncats = 0;
    int bad = 0;
    if (!is_dir(dir))
        return dx_err(err, DDX_EIO,
                      "%s: not a folder of references (expected "
                      "<category>/<id>.md files)",
                      dir);
    if (!out->arena && !(out->arena = dx_arena_new()))
        return dx_err(err, DDX_ENOMEM, "out of memory");
    if (list_dir(dir, &cats, &ncats) != DDX_OK)
        return dx_err(err, DDX_EIO, "%s: cannot list the folder: %s", dir, strerror(errno));
    int rc = DDX_OK;
    for (size_t i = 0; i < ncats && rc == DDX_OK; i++) {
        dx_buf cpath = {0};
        char **files = NULL;
        size_t nfiles = 0;
        if (!strcmp(cats[i], "examples"))
            goto next_cat;
        if (dx_buf_addf(&cpath, "%s/%s", dir, cats[i]) != DDX_OK) {
            rc = DDX_ENOMEM;
            goto next_cat;
        }
        if (!is_dir(cpath.p))
            goto next_cat; /* README.md and the like */
        if (list_dir(cpath.p, &files, &nfiles) != DDX_OK) {
            dx_buf_addf(problems, "%s: cannot list the folder\n", cpath.p);
            bad = 1;
            goto next_cat;
        }
        for (size_t j = 0; j < nfiles && rc == DDX_OK; j++) {
            if (!ends_with(files[j], ".md"))
                continue;
            dx_buf fpath = {0}, rel = {0};
            char *text = NULL;
            size_t len = 0;
            ddx_error e = {0};
            if (dx_buf_addf(&fpath, "%s/%s", cpath.p, files[j]) ||
                dx_buf_addf(&rel, "%s/%s", cats[i], files[j])) {
                rc = DDX_ENOMEM;
            } else if (read_file(fpath.p, &text, &len) != DDX_OK) {
                dx_buf_addf(problems, "%s: cannot read the file\n", fpath.p);
                bad = 1;
            } else if (dx_grow((void **)&out->refs, &out->cap, out->n + 1, sizeof(dx_ref))) {
                rc = DDX_ENOMEM;
            } else {
                int prc = dx_kb_parse(out->arena, rel.p, text, len, &out->refs[out->n], &e);
                if (prc == DDX_ENOMEM)
                    rc = DDX_ENOMEM;
                else if (prc) {
                    dx_buf_addf(problems, "%s/%s\n", dir, e.message); /* the path as given */
                    bad = 1;
                } else {
                    dx_ref *r = &out->refs[out->n];
                    if (strcmp(r->category, cats[i]) != 0) {
                        dx_buf_addf(problems, "%s: category '%s' differs from its folder '%s'\n",
                                    fpath.p, r->category, cats[i]);
                        bad = 1;
                    }
                    size_t idlen = strlen(files[j]) - 3;
                    if (strlen(r->id) != idlen || strncmp(r->id, files[j], idlen) != 0) {
                        dx_buf_addf(problems, "%s: id '%s' differs from the file name\n", fpath.p,
                                    r->id);
                        bad = 1;
                    }
                    out->n++;
                }
            }
            dx_free(text);
            dx_buf_fini(&fpath);
            dx_buf_fini(&rel);
        }
    next_cat:
        for (size_t j = 0; j < nfiles; j++)
            dx_free(files[j]);
        dx_free(files);
        dx_buf_fini(&cpath);
    }
    for (size_t i = 0; i < ncats; i++)
        dx_free(cats[i]);
    dx_free(cats);
    if (rc)
        return dx_err(err, rc, "out of memory while loading %s", dir);
    if (bad)
        return dx_err(err, DDX_EFORMAT, "%s: some references are invalid", dir);
    return DDX_OK;
}

void dx_reflist_fini(dx_reflist *l)
{
    dx_free(l->refs);
    dx_arena_free(l->arena);
    memset(l, 0, sizeof *l);
}
