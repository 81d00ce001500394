/* frdump.c -- PyTorch NCCL flight-recorder dumps: a plain-data pickle reader, extraction of the
 * entries, and the cross-rank comparison.
 *
 * Both formats become jansson values first: JSON through json_loadb, pickle through the reader
 * below, which knows only the opcodes that plain data needs and refuses every opcode that could
 * name a callable (GLOBAL, REDUCE, ...). The reader keeps, with every stack item, the nesting
 * depth of the value, so trees stay shallow (jansson frees recursively); a memo get of a
 * container returns a copy (counted against a budget), so no value is shared and no cycle can
 * form. Then one extraction fills dx_frdump. See frdump.h for the contract and limits.
 * Called by diag.c (not yet) and tests/unit/test_frdump.c.
 */
#include "dx.h"

#include <jansson.h>

#include "attrib.h"
#include "frdump.h"

#define MAX_DEPTH 64u
#define MAX_STACK (1u << 20)
#define MAX_MARKS 256u
#define MAX_MEMO (1u << 20)
#define MAX_COPIED (1u << 20)
#define MAX_PG_RANKS 65536u

/* ---- the pickle reader ---- */

typedef struct pk_item {
    json_t *v;
    unsigned depth; /* 1 for a scalar or empty container */
} pk_item;

typedef struct pk {
    const char *name;
    const unsigned char *p, *end, *start;
    pk_item *st;
    size_t n, cap;
    size_t marks[MAX_MARKS];
    size_t nmarks;
    pk_item *memo;
    size_t nmemo, memocap;
    size_t copied;
    ddx_error *err;
} pk;

/* Opcodes we refuse, with their names; code-running ones say so. */
static const struct {
    unsigned char op;
    const char *name;
    int code; /* 1: can name or call code */
} refused[] = {
    {'c', "GLOBAL", 1},      {0x93, "STACK_GLOBAL", 1}, {'R', "REDUCE", 1},
    {'b', "BUILD", 1},       {'i', "INST", 1},          {'o', "OBJ", 1},
    {0x81, "NEWOBJ", 1},     {0x92, "NEWOBJ_EX", 1},    {'P', "PERSID", 1},
    {'Q', "BINPERSID", 1},   {0x82, "EXT1", 1},         {0x83, "EXT2", 1},
    {0x84, "EXT4", 1},       {0x97, "NEXT_BUFFER", 0},  {0x98, "READONLY_BUFFER", 0},
    {0x96, "BYTEARRAY8", 0}, {'I', "INT", 0},           {'L', "LONG", 0},
    {'S', "STRING", 0},      {'T', "BINSTRING", 0},     {'U', "SHORT_BINSTRING", 0},
    {'V', "UNICODE", 0},     {'F', "FLOAT", 0},         {'d', "DICT", 0},
    {'l', "LIST", 0},        {'p', "PUT", 0},           {'g', "GET", 0},
    {'2', "DUP", 0},         {0x8f, "EMPTY_SET", 0},    {0x90, "ADDITEMS", 0},
    {0x91, "FROZENSET", 0},
};

static int pk_fail(pk *k, const char *what)
{
    return dx_err(k->err, DDX_EFORMAT, "%s: pickle offset %zu: %s", k->name,
                  (size_t)(k->p - k->start), what);
}

static int pk_need(pk *k, size_t n)
{
    if ((size_t)(k->end - k->p) < n)
        return pk_fail(k, "truncated");
    return DDX_OK;
}

static uint64_t le(const unsigned char *p, size_t n)
{
    uint64_t v = 0;
    for (size_t i = n; i-- > 0;)
        v = v << 8 | p[i];
    return v;
}

/* Pushes v (adopted; NULL means allocation failed). */
static int pk_push(pk *k, json_t *v, unsigned depth)
{
    if (!v)
        return dx_err(k->err, DDX_ENOMEM, "%s: out of memory", k->name);
    if (k->n >= MAX_STACK) {
        json_decref(v);
        return pk_fail(k, "stack too deep");
    }
    if (dx_grow((void **)&k->st, &k->cap, k->n + 1, sizeof *k->st) != DDX_OK) {
        json_decref(v);
        return dx_err(k->err, DDX_ENOMEM, "%s: out of memory", k->name);
    }
    k->st[k->n].v = v;
    k->st[k->n].depth = depth;
    k->n++;
    return DDX_OK;
}

/* A deep copy of a memo'd container; *depth is set to its depth. */
static json_t *pk_copy(pk *k, json_t *v, unsigned *depth)
{
    if (++k->copied > MAX_COPIED)
        return NULL;
    *depth = 1;
    if (json_is_array(v)) {
        json_t *a = json_array();
        size_t i;
        json_t *x;
        if (!a)
            return NULL;
        json_array_foreach(v, i, x)
        {
            unsigned d;
            json_t *c = pk_copy(k, x, &d);
            if (!c || json_array_append_new(a, c) != 0) {
                json_decref(a);
                return NULL;
            }
            if (d + 1 > *depth)
                *depth = d + 1;
        }
        return a;
    }
    if (json_is_object(v)) {
        json_t *o = json_object();
        const char *key;
        size_t klen;
        json_t *x;
        void *tmp;
        if (!o)
            return NULL;
        json_object_keylen_foreach_safe(v, tmp, key, klen, x)
        {
            unsigned d;
            json_t *c = pk_copy(k, x, &d);
            if (!c || json_object_setn_new_nocheck(o, key, klen, c) != 0) {
                json_decref(o);
                return NULL;
            }
            if (d + 1 > *depth)
                *depth = d + 1;
        }
        return o;
    }
    return json_incref(v);
}

static int pk_memo_put(pk *k, uint64_t idx)
{
    if (k->n == 0)
        return pk_fail(k, "memo put on an empty stack");
    if (idx >= MAX_MEMO)
        return pk_fail(k, "memo index too large");
    if (idx >= k->nmemo) {
        size_t old = k->memocap;
        if (dx_grow((void **)&k->memo, &k->memocap, idx + 1, sizeof *k->memo) != DDX_OK)
            return dx_err(k->err, DDX_ENOMEM, "%s: out of memory", k->name);
        memset(k->memo + old, 0, (k->memocap - old) * sizeof *k->memo);
        k->nmemo = idx + 1;
    }
    json_decref(k->memo[idx].v);
    k->memo[idx] = k->st[k->n - 1];
    json_incref(k->memo[idx].v);
    return DDX_OK;
}

static int pk_memo_get(pk *k, uint64_t idx)
{
    if (idx >= k->nmemo || !k->memo[idx].v)
        return pk_fail(k, "memo get of an unknown index");
    json_t *v = k->memo[idx].v;
    if (json_is_array(v) || json_is_object(v)) {
        unsigned d;
        json_t *c = pk_copy(k, v, &d);
        if (!c)
            return pk_fail(k, "memo copies exceed the limit");
        return pk_push(k, c, d);
    }
    return pk_push(k, json_incref(v), 1);
}

static size_t pk_top_mark(pk *k, int *rc)
{
    if (k->nmarks == 0) {
        *rc = pk_fail(k, "no MARK on the stack");
        return 0;
    }
    *rc = DDX_OK;
    return k->marks[--k->nmarks];
}

/* Items st[from..n) become the entries of a new array (or are added to st[from-1] when into). */
static int pk_append(pk *k, size_t from)
{
    if (from == 0 || from > k->n)
        return pk_fail(k, "APPEND without a list");
    pk_item *l = &k->st[from - 1];
    if (!json_is_array(l->v))
        return pk_fail(k, "APPEND to a value that is not a list");
    for (size_t i = from; i < k->n; i++) {
        if (k->st[i].depth + 1 > MAX_DEPTH)
            return pk_fail(k, "values nested too deep");
        if (k->st[i].depth + 1 > l->depth)
            l->depth = k->st[i].depth + 1;
        json_t *v = k->st[i].v;
        k->st[i].v = NULL;
        if (json_array_append_new(l->v, v) != 0)
            return dx_err(k->err, DDX_ENOMEM, "%s: out of memory", k->name);
    }
    k->n = from;
    return DDX_OK;
}

static int pk_key(json_t *key, char *buf, size_t cap, const char **p, size_t *n)
{
    if (json_is_string(key)) {
        *p = json_string_value(key);
        *n = json_string_length(key);
        return 1;
    }
    if (json_is_integer(key)) {
        int w = snprintf(buf, cap, "%lld", (long long)json_integer_value(key));
        *p = buf;
        *n = w > 0 && (size_t)w < cap ? (size_t)w : 0;
        return 1;
    }
    return 0; /* other keys are dropped: no dump uses them */
}

static int pk_setitems(pk *k, size_t from)
{
    if (from == 0 || from > k->n || (k->n - from) % 2)
        return pk_fail(k, "SETITEMS without a dict or with an odd number of items");
    pk_item *d = &k->st[from - 1];
    if (!json_is_object(d->v))
        return pk_fail(k, "SETITEM on a value that is not a dict");
    for (size_t i = from; i < k->n; i += 2) {
        char buf[32];
        const char *key;
        size_t klen;
        if (k->st[i + 1].depth + 1 > MAX_DEPTH)
            return pk_fail(k, "values nested too deep");
        if (pk_key(k->st[i].v, buf, sizeof buf, &key, &klen)) {
            if (k->st[i + 1].depth + 1 > d->depth)
                d->depth = k->st[i + 1].depth + 1;
            json_t *v = k->st[i + 1].v;
            k->st[i + 1].v = NULL;
            if (json_object_setn_new_nocheck(d->v, key, klen, v) != 0)
                return dx_err(k->err, DDX_ENOMEM, "%s: out of memory", k->name);
        }
    }
    for (size_t i = from; i < k->n; i++)
        json_decref(k->st[i].v);
    k->n = from;
    return DDX_OK;
}

static int pk_tuple(pk *k, size_t from)
{
    /* a MARK set above items that were consumed since then must not resurrect them */
    if (from > k->n)
        return pk_fail(k, "TUPLE after its MARK's items were consumed");
    json_t *a = json_array();
    unsigned depth = 1;
    if (!a)
        return dx_err(k->err, DDX_ENOMEM, "%s: out of memory", k->name);
    for (size_t i = from; i < k->n; i++) {
        if (k->st[i].depth + 1 > MAX_DEPTH) {
            json_decref(a);
            return pk_fail(k, "values nested too deep");
        }
        if (k->st[i].depth + 1 > depth)
            depth = k->st[i].depth + 1;
        json_t *v = k->st[i].v;
        k->st[i].v = NULL;
        if (json_array_append_new(a, v) != 0) {
            json_decref(a);
            return dx_err(k->err, DDX_ENOMEM, "%s: out of memory", k->name);
        }
    }
    k->n = from;
    return pk_push(k, a, depth);
}

static int pk_refuse(pk *k, unsigned op)
{
    for (size_t i = 0; i < DX_ARRAY_LEN(refused); i++)
        if (refused[i].op == op) {
            if (refused[i].code)
                return dx_err(k->err, DDX_EFORMAT,
                              "%s: pickle opcode 0x%02x (%s) is not plain data; ddx reads "
                              "flight-recorder dumps without executing code",
                              k->name, op, refused[i].name);
            return dx_err(k->err, DDX_EFORMAT,
                          "%s: pickle opcode 0x%02x (%s) is not supported; ddx reads only the "
                          "plain-data opcodes of protocols 2-5",
                          k->name, op, refused[i].name);
        }
    return dx_err(k->err, DDX_EFORMAT, "%s: pickle offset %zu: unknown opcode 0x%02x", k->name,
                  (size_t)(k->p - 1 - k->start), op);
}

/* A str or bytes value: bytes are kept as strings of their raw bytes (only ever copied). */
static int pk_string(pk *k, size_t lenbytes)
{
    int rc = pk_need(k, lenbytes);
    if (rc)
        return rc;
    uint64_t n = le(k->p, lenbytes);
    k->p += lenbytes;
    if (n > (uint64_t)(k->end - k->p))
        return pk_fail(k, "truncated string");
    json_t *s = json_stringn_nocheck((const char *)k->p, (size_t)n);
    k->p += n;
    return pk_push(k, s, 1);
}

/* Runs the opcodes; on success *out is the value STOP returned. */
static int pk_run(pk *k, json_t **out)
{
    int rc = DDX_OK;
    for (;;) {
        if ((rc = pk_need(k, 1)))
            return rc;
        unsigned op = *k->p++;
        size_t from;
        switch (op) {
        case 0x80: /* PROTO */
            if ((rc = pk_need(k, 1)))
                return rc;
            if (k->p[0] < 2 || k->p[0] > 5)
                return pk_fail(k, "unsupported pickle protocol");
            k->p++;
            break;
        case 0x95: /* FRAME: 8-byte length; frames are only a hint to buffered readers */
            if ((rc = pk_need(k, 8)))
                return rc;
            k->p += 8;
            break;
        case '.': /* STOP */
            if (k->n != 1 || k->nmarks)
                return pk_fail(k, "STOP with a stack that does not hold one value");
            *out = k->st[0].v;
            k->st[0].v = NULL;
            k->n = 0;
            return DDX_OK;
        case '(': /* MARK */
            if (k->nmarks >= MAX_MARKS)
                return pk_fail(k, "MARKs nested too deep");
            k->marks[k->nmarks++] = k->n;
            break;
        case '}':
            rc = pk_push(k, json_object(), 1);
            break;
        case ']':
            rc = pk_push(k, json_array(), 1);
            break;
        case ')':
            rc = pk_push(k, json_array(), 1);
            break;
        case 's': /* SETITEM */
            if (k->n < 3)
                return pk_fail(k, "SETITEM on a short stack");
            rc = pk_setitems(k, k->n - 2);
            break;
        case 'u': /* SETITEMS */
            from = pk_top_mark(k, &rc);
            if (!rc)
                rc = pk_setitems(k, from);
            break;
        case 'a': /* APPEND */
            if (k->n < 2)
                return pk_fail(k, "APPEND on a short stack");
            rc = pk_append(k, k->n - 1);
            break;
        case 'e': /* APPENDS */
            from = pk_top_mark(k, &rc);
            if (!rc)
                rc = pk_append(k, from);
            break;
        case 't': /* TUPLE */
            from = pk_top_mark(k, &rc);
            if (!rc)
                rc = pk_tuple(k, from);
            break;
        case 0x85: /* TUPLE1 */
        case 0x86: /* TUPLE2 */
        case 0x87: /* TUPLE3 */
            if (k->n < op - 0x84u)
                return pk_fail(k, "TUPLE on a short stack");
            rc = pk_tuple(k, k->n - (op - 0x84u));
            break;
        case '0': /* POP */
            if (k->n == 0)
                return pk_fail(k, "POP on an empty stack");
            json_decref(k->st[--k->n].v);
            break;
        case '1': /* POP_MARK */
            from = pk_top_mark(k, &rc);
            while (!rc && k->n > from)
                json_decref(k->st[--k->n].v);
            break;
        case 'J': /* BININT */
            if ((rc = pk_need(k, 4)))
                return rc;
            rc = pk_push(k, json_integer((int32_t)(uint32_t)le(k->p, 4)), 1);
            k->p += 4;
            break;
        case 'K': /* BININT1 */
            if ((rc = pk_need(k, 1)))
                return rc;
            rc = pk_push(k, json_integer(k->p[0]), 1);
            k->p += 1;
            break;
        case 'M': /* BININT2 */
            if ((rc = pk_need(k, 2)))
                return rc;
            rc = pk_push(k, json_integer((json_int_t)le(k->p, 2)), 1);
            k->p += 2;
            break;
        case 0x8a:   /* LONG1 */
        case 0x8b: { /* LONG4 */
            size_t lb = op == 0x8a ? 1 : 4;
            if ((rc = pk_need(k, lb)))
                return rc;
            uint64_t n = le(k->p, lb);
            k->p += lb;
            if (n > (uint64_t)(k->end - k->p))
                return pk_fail(k, "truncated integer");
            json_t *v;
            if (n == 0)
                v = json_integer(0);
            else if (n <= 8) {
                uint64_t u = le(k->p, (size_t)n);
                if (n < 8 && (k->p[n - 1] & 0x80))
                    u |= ~(uint64_t)0 << (8 * n); /* sign-extend */
                v = json_integer((json_int_t)(int64_t)u);
            } else
                v = json_null(); /* wider than 64 bits: no dump field needs it */
            k->p += n;
            rc = pk_push(k, v, 1);
            break;
        }
        case 'G': { /* BINFLOAT, big-endian */
            if ((rc = pk_need(k, 8)))
                return rc;
            uint64_t u = 0;
            for (int i = 0; i < 8; i++)
                u = u << 8 | k->p[i];
            double d;
            memcpy(&d, &u, sizeof d);
            k->p += 8;
            rc = pk_push(k, d == d && d - d == 0 ? json_real(d) : json_null(), 1);
            break;
        }
        case 'N':
            rc = pk_push(k, json_null(), 1);
            break;
        case 0x88:
            rc = pk_push(k, json_true(), 1);
            break;
        case 0x89:
            rc = pk_push(k, json_false(), 1);
            break;
        case 0x8c: /* SHORT_BINUNICODE */
        case 'C':  /* SHORT_BINBYTES */
            rc = pk_string(k, 1);
            break;
        case 'X': /* BINUNICODE */
        case 'B': /* BINBYTES */
            rc = pk_string(k, 4);
            break;
        case 0x8d: /* BINUNICODE8 */
        case 0x8e: /* BINBYTES8 */
            rc = pk_string(k, 8);
            break;
        case 0x94: /* MEMOIZE */
            rc = pk_memo_put(k, k->nmemo);
            break;
        case 'q':   /* BINPUT */
        case 'r':   /* LONG_BINPUT */
        case 'h':   /* BINGET */
        case 'j': { /* LONG_BINGET */
            size_t lb = op == 'q' || op == 'h' ? 1 : 4;
            if ((rc = pk_need(k, lb)))
                return rc;
            uint64_t idx = le(k->p, lb);
            k->p += lb;
            rc = op == 'q' || op == 'r' ? pk_memo_put(k, idx) : pk_memo_get(k, idx);
            break;
        }
        default:
            return pk_refuse(k, op);
        }
        if (rc)
            return rc;
    }
}

static int pickle_load(const char *name, const unsigned char *data, size_t len, json_t **out,
                       ddx_error *err)
{
    pk k;
    memset(&k, 0, sizeof k);
    k.name = name;
    k.p = k.start = data;
    k.end = data + len;
    k.err = err;
    *out = NULL;
    int rc = pk_run(&k, out);
    for (size_t i = 0; i < k.n; i++)
        json_decref(k.st[i].v);
    for (size_t i = 0; i < k.nmemo; i++)
        json_decref(k.memo[i].v);
    dx_free(k.st);
    dx_free(k.memo);
    return rc;
}

/* ---- extraction ---- */

static void copy_str(char *dst, size_t cap, const char *s, size_t n)
{
    if (n >= cap) {
        n = cap - 1;
        if (cap > 4) {
            memcpy(dst, s, cap - 4);
            memcpy(dst + cap - 4, "...", 4);
            return;
        }
    }
    memcpy(dst, s, n);
    dst[n] = 0;
}

static void copy_json_str(char *dst, size_t cap, json_t *v)
{
    if (json_is_string(v))
        copy_str(dst, cap, json_string_value(v), json_string_length(v));
    else if (json_is_integer(v)) {
        char buf[32];
        int w = snprintf(buf, sizeof buf, "%lld", (long long)json_integer_value(v));
        copy_str(dst, cap, buf, w > 0 ? (size_t)w : 0);
    } else
        dst[0] = 0;
}

static long long get_int(json_t *o, const char *key)
{
    json_t *v = json_object_get(o, key);
    if (json_is_integer(v))
        return (long long)json_integer_value(v);
    if (json_is_string(v)) {
        char *e;
        long long x = strtoll(json_string_value(v), &e, 10);
        if (e != json_string_value(v) && !*e)
            return x;
    }
    return -1;
}

/* Appends the flattened form of a sizes value ("[[1024,1024]]") to b, up to limit bytes. */
static void flatten(dx_buf *b, json_t *v, unsigned depth, size_t limit)
{
    if (b->n > limit)
        return;
    if (json_is_array(v) && depth < 8) {
        size_t i;
        json_t *x;
        dx_buf_addc(b, '[');
        json_array_foreach(v, i, x)
        {
            if (i)
                dx_buf_addc(b, ',');
            flatten(b, x, depth + 1, limit);
            if (b->n > limit)
                return;
        }
        dx_buf_addc(b, ']');
    } else if (json_is_integer(v))
        dx_buf_addf(b, "%lld", (long long)json_integer_value(v));
    else if (json_is_string(v))
        dx_buf_add(b, json_string_value(v),
                   json_string_length(v) < 32 ? json_string_length(v) : 32);
    else
        dx_buf_addc(b, '?');
}

static void flat_field(char *dst, size_t cap, json_t *v, int join)
{
    dx_buf b = {0};
    if (join && json_is_array(v)) {
        size_t i;
        json_t *x;
        json_array_foreach(v, i, x)
        {
            if (i)
                dx_buf_addc(&b, ',');
            flatten(&b, x, 1, cap);
            if (b.n > cap)
                break;
        }
    } else if (v)
        flatten(&b, v, 0, cap);
    copy_str(dst, cap, b.p ? b.p : "", b.n);
    dx_buf_fini(&b);
}

static int state_of(const char *s)
{
    if (!s)
        return DX_FR_UNKNOWN;
    if (!strcmp(s, "scheduled"))
        return DX_FR_SCHEDULED;
    if (!strcmp(s, "started"))
        return DX_FR_STARTED;
    if (!strcmp(s, "completed"))
        return DX_FR_COMPLETED;
    return DX_FR_UNKNOWN;
}

static void get_entry(json_t *e, dx_fr_entry *x)
{
    memset(x, 0, sizeof *x);
    json_t *pg = json_object_get(e, "process_group");
    copy_json_str(x->pg, sizeof x->pg, json_is_array(pg) ? json_array_get(pg, 0) : pg);
    x->pg_id = get_int(e, "pg_id");
    x->coll_seq = get_int(e, "collective_seq_id");
    x->p2p_seq = get_int(e, "p2p_seq_id");
    copy_json_str(x->op, sizeof x->op, json_object_get(e, "profiling_name"));
    x->state = state_of(json_string_value(json_object_get(e, "state")));
    json_t *d = json_object_get(e, "duration_ms");
    x->duration_ms = json_is_number(d) ? json_number_value(d) : -1;
    json_t *c = json_object_get(e, "time_created_ns");
    x->created_ms =
        json_is_number(c) && json_number_value(c) >= 0 ? json_number_value(c) / 1e6 : -1;
    flat_field(x->in_sizes, sizeof x->in_sizes, json_object_get(e, "input_sizes"), 0);
    flat_field(x->in_dtypes, sizeof x->in_dtypes, json_object_get(e, "input_dtypes"), 1);
    x->is_p2p = json_is_true(json_object_get(e, "is_p2p"));
}

static dx_fr_pg *pg_find(dx_frdump *d, const char *name)
{
    for (size_t i = 0; i < d->npgs; i++)
        if (!strcmp(d->pgs[i].name, name))
            return &d->pgs[i];
    return NULL;
}

static int pg_add(dx_frdump *d, size_t *cap, const char *name, dx_fr_pg **out)
{
    char key[64];
    copy_str(key, sizeof key, name, strlen(name));
    *out = pg_find(d, key);
    if (*out)
        return DDX_OK;
    if (d->npgs >= DX_FR_MAX_PGS)
        return DDX_OK; /* *out stays NULL: ignored */
    if (dx_grow((void **)&d->pgs, cap, d->npgs + 1, sizeof *d->pgs) != DDX_OK)
        return DDX_ENOMEM;
    dx_fr_pg *p = &d->pgs[d->npgs++];
    memset(p, 0, sizeof *p);
    memcpy(p->name, key, sizeof key);
    p->last_enqueued = p->last_started = p->last_completed = -1;
    *out = p;
    return DDX_OK;
}

/* "[0, 1, 2]" or a list of ints; an empty list leaves ranks NULL. */
static int pg_ranks(dx_fr_pg *p, json_t *v)
{
    int *r = NULL;
    size_t n = 0, cap = 0;
    if (json_is_string(v)) {
        const char *s = json_string_value(v);
        while (*s && n < MAX_PG_RANKS) {
            if (*s >= '0' && *s <= '9') {
                long x = 0;
                while (*s >= '0' && *s <= '9') {
                    if (x < 100000000)
                        x = x * 10 + (*s - '0');
                    s++;
                }
                if (dx_grow((void **)&r, &cap, n + 1, sizeof *r) != DDX_OK)
                    goto fail;
                r[n++] = (int)x;
            } else
                s++;
        }
    } else if (json_is_array(v)) {
        size_t i;
        json_t *x;
        json_array_foreach(v, i, x)
        {
            if (!json_is_integer(x) || n >= MAX_PG_RANKS)
                continue;
            if (dx_grow((void **)&r, &cap, n + 1, sizeof *r) != DDX_OK)
                goto fail;
            r[n++] = (int)json_integer_value(x);
        }
    }
    dx_free(p->ranks);
    p->ranks = n ? r : NULL;
    p->nranks = n;
    if (!n)
        dx_free(r);
    return DDX_OK;
fail:
    dx_free(r);
    return DDX_ENOMEM;
}

static int extract(const char *name, json_t *root, dx_frdump *d, ddx_error *err)
{
    size_t pgcap = 0, ecap = 0;
    const char *key;
    json_t *v;
    if (!json_is_object(root))
        return dx_err(err, DDX_EFORMAT, "%s: not a flight-recorder dump (the top is not a dict)",
                      name);
    json_t *entries = json_object_get(root, "entries");
    if (!json_is_array(entries) && !json_object_get(root, "pg_status"))
        return dx_err(err, DDX_EFORMAT,
                      "%s: not a flight-recorder dump (no 'entries' and no 'pg_status')", name);
    if (d->rank < 0 && json_is_integer(json_object_get(root, "rank")))
        d->rank = (int)json_integer_value(json_object_get(root, "rank"));
    copy_json_str(d->version, sizeof d->version, json_object_get(root, "version"));
    v = json_object_get(root, "comm_lib_version");
    if (!v)
        v = json_object_get(root, "nccl_version");
    copy_json_str(d->nccl_version, sizeof d->nccl_version, v);

    size_t i;
    json_array_foreach(entries, i, v)
    {
        if (!json_is_object(v))
            continue;
        if (d->nentries >= DX_FR_MAX_ENTRIES) {
            d->dropped++;
            continue;
        }
        if (dx_grow((void **)&d->entries, &ecap, d->nentries + 1, sizeof *d->entries) != DDX_OK)
            goto nomem;
        get_entry(v, &d->entries[d->nentries++]);
    }

    json_t *cfg = json_object_get(root, "pg_config");
    json_object_foreach(cfg, key, v)
    {
        dx_fr_pg *p;
        json_t *nm = json_object_get(v, "name");
        if (pg_add(d, &pgcap, json_is_string(nm) ? json_string_value(nm) : key, &p) != DDX_OK)
            goto nomem;
        if (!p)
            continue;
        copy_json_str(p->desc, sizeof p->desc, json_object_get(v, "desc"));
        if (pg_ranks(p, json_object_get(v, "ranks")) != DDX_OK)
            goto nomem;
    }
    /* pg_status is keyed by pg_id: the entries of that pg_id name the PG; without any, the key
     * is taken as the name (the default PG is named "0" and has pg_id 0). */
    json_t *st = json_object_get(root, "pg_status");
    json_object_foreach(st, key, v)
    {
        const char *pgname = key;
        char *e;
        long long id = strtoll(key, &e, 10);
        if (e != key && !*e)
            for (size_t j = 0; j < d->nentries; j++)
                if (d->entries[j].pg_id == id && d->entries[j].pg[0]) {
                    pgname = d->entries[j].pg;
                    break;
                }
        dx_fr_pg *p;
        if (pg_add(d, &pgcap, pgname, &p) != DDX_OK)
            goto nomem;
        if (!p)
            continue;
        p->has_status = 1;
        p->last_enqueued = get_int(v, "last_enqueued_collective");
        p->last_started = get_int(v, "last_started_collective");
        p->last_completed = get_int(v, "last_completed_collective");
    }
    return DDX_OK;
nomem:
    return dx_err(err, DDX_ENOMEM, "%s: out of memory", name);
}

const char *dx_frdump_kind_name(int kind)
{
    switch (kind) {
    case DX_FR_MISSING_RANK:
        return "missing-rank";
    case DX_FR_OP:
        return "op";
    case DX_FR_SIZE:
        return "size";
    case DX_FR_DTYPE:
        return "dtype";
    case DX_FR_STATE:
        return "state";
    default:
        return "?";
    }
}

void dx_frdump_fini(dx_frdump *d)
{
    if (!d)
        return;
    for (size_t i = 0; i < d->npgs; i++)
        dx_free(d->pgs[i].ranks);
    dx_free(d->pgs);
    dx_free(d->entries);
    memset(d, 0, sizeof *d);
    d->rank = -1;
}

int dx_frdump_parse(const char *name, const void *data, size_t len, dx_frdump *out, ddx_error *err)
{
    const unsigned char *p = data;
    json_t *root = NULL;
    int rc;
    memset(out, 0, sizeof *out);
    out->rank = -1;
    if (!name)
        name = "(flight recorder dump)";
    if (!data && len)
        return dx_err(err, DDX_EINVAL, "%s: no data", name);
    out->rank = dx_attrib_rank_from_name(name, NULL);
    size_t i = 0;
    while (i < len && (p[i] == ' ' || p[i] == '\t' || p[i] == '\n' || p[i] == '\r'))
        i++;
    if (i < len && p[i] == '{') {
        json_error_t je;
        root = json_loadb((const char *)data, len, JSON_REJECT_DUPLICATES, &je);
        if (!root)
            return dx_err(err, DDX_EFORMAT, "%s:%d: JSON: %s", name, je.line, je.text);
    } else if (len >= 2 && p[0] == 0x80 && p[1] >= 2 && p[1] <= 5) {
        rc = pickle_load(name, p, len, &root, err);
        if (rc)
            return rc;
    } else
        return dx_err(err, DDX_EFORMAT,
                      "%s: not a flight-recorder dump (neither JSON nor a pickle of protocol 2-5)",
                      name);
    rc = extract(name, root, out, err);
    json_decref(root);
    if (rc) {
        int rank = out->rank;
        dx_frdump_fini(out);
        out->rank = rank;
    }
    return rc;
}

/* ---- comparing ranks ---- */

typedef struct an {
    dx_fr_finding *f; /* every finding, sorted and cut at the end */
    size_t n, cap;
    int oom;
} an;

static void add_finding(an *a, int kind, int rank, const char *pg, long long seq, dx_buf *why)
{
    if (a->oom || dx_grow((void **)&a->f, &a->cap, a->n + 1, sizeof *a->f) != DDX_OK) {
        a->oom = 1;
        return;
    }
    dx_fr_finding *f = &a->f[a->n++];
    memset(f, 0, sizeof *f);
    f->kind = kind;
    f->rank = rank;
    f->seq = seq;
    copy_str(f->pg, sizeof f->pg, pg, strlen(pg));
    copy_str(f->why, sizeof f->why, why->p ? why->p : "", why->n);
}

/* "0, 1 and 3" (the first 8, then "and N more"). */
static void add_ranks(dx_buf *b, const int *r, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (i == 8) {
            dx_buf_addf(b, " and %zu more", n - 8);
            return;
        }
        if (i)
            dx_buf_add(b, i + 1 == n ? " and " : ", ", i + 1 == n ? 5 : 2);
        dx_buf_addf(b, "%d", r[i]);
    }
}

#define MAX_DISTINCT 32

/* The unique most common of the non-NULL vals, or NULL (none, or a tie). */
static const char *modal_str(const char *const *vals, size_t m)
{
    const char *d[MAX_DISTINCT];
    size_t c[MAX_DISTINCT], nd = 0;
    for (size_t i = 0; i < m; i++) {
        if (!vals[i])
            continue;
        size_t j = 0;
        while (j < nd && strcmp(d[j], vals[i]))
            j++;
        if (j == nd) {
            if (nd == MAX_DISTINCT)
                continue;
            d[nd] = vals[i];
            c[nd++] = 0;
        }
        c[j]++;
    }
    size_t best = 0, second = 0;
    const char *mode = NULL;
    for (size_t j = 0; j < nd; j++)
        if (c[j] > best) {
            second = best;
            best = c[j];
            mode = d[j];
        } else if (c[j] > second)
            second = c[j];
    return best > second ? mode : NULL;
}

/* The same for non-negative ints (-1 skipped); returns -1 when there is none or a tie. */
static long long modal_int(const long long *vals, size_t m)
{
    long long d[MAX_DISTINCT];
    size_t c[MAX_DISTINCT], nd = 0;
    for (size_t i = 0; i < m; i++) {
        if (vals[i] < 0)
            continue;
        size_t j = 0;
        while (j < nd && d[j] != vals[i])
            j++;
        if (j == nd) {
            if (nd == MAX_DISTINCT)
                continue;
            d[nd] = vals[i];
            c[nd++] = 0;
        }
        c[j]++;
    }
    size_t best = 0, second = 0;
    long long mode = -1;
    for (size_t j = 0; j < nd; j++)
        if (c[j] > best) {
            second = best;
            best = c[j];
            mode = d[j];
        } else if (c[j] > second)
            second = c[j];
    return best > second ? mode : -1;
}

/* One member of the PG being compared. */
typedef struct mem {
    int rank;
    const dx_frdump *d;      /* NULL: no dump */
    const dx_fr_pg *pg;      /* this dump's record of the PG, may be NULL */
    const dx_fr_entry **ent; /* its collective entries of the PG, by coll_seq */
    size_t nent;
    long long last_enq; /* -1 without a dump */
    unsigned reported;  /* bit per kind already reported */
} mem;

static int cmp_ent(const void *a, const void *b)
{
    const dx_fr_entry *x = *(const dx_fr_entry *const *)a, *y = *(const dx_fr_entry *const *)b;
    return x->coll_seq < y->coll_seq ? -1 : x->coll_seq > y->coll_seq;
}

static const dx_fr_entry *ent_at(const mem *m, long long seq)
{
    size_t lo = 0, hi = m->nent;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (m->ent[mid]->coll_seq < seq)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < m->nent && m->ent[lo]->coll_seq == seq ? m->ent[lo] : NULL;
}

/* A member's state for collective seq: its entry, else what pg_status implies. */
static int state_at(const mem *m, long long seq)
{
    const dx_fr_entry *e = ent_at(m, seq);
    if (e)
        return e->state;
    if (m->pg && m->pg->has_status) {
        if (m->pg->last_completed >= seq)
            return DX_FR_COMPLETED;
        if (m->pg->last_started >= seq)
            return DX_FR_STARTED;
        if (m->pg->last_enqueued >= seq)
            return DX_FR_SCHEDULED;
    }
    return DX_FR_UNKNOWN;
}

static const char *state_name(int s)
{
    static const char *const names[] = {"unknown", "scheduled", "started", "completed"};
    return s >= 0 && s <= 3 ? names[s] : "unknown";
}

/* The op some member recorded at seq, for messages. */
static const char *op_at(const mem *ms, size_t nm, long long seq)
{
    for (size_t i = 0; i < nm; i++) {
        const dx_fr_entry *e = ms[i].d ? ent_at(&ms[i], seq) : NULL;
        if (e && e->op[0])
            return e->op;
    }
    return "?";
}

static int skip_sizes(const char *op)
{
    return strstr(op, "all_to_all") || strstr(op, "alltoall") || strstr(op, "coalesced");
}

/* Compares one field (0 op, 1 sizes, 2 dtypes) at seq. */
static void compare_field(an *a, const char *pgname, mem *ms, size_t nm, long long seq, int field,
                          const char **vals, int *ranks, unsigned *tie_reported)
{
    static const int kinds[] = {DX_FR_OP, DX_FR_SIZE, DX_FR_DTYPE};
    static const char *const what[] = {"runs", "has input sizes", "has input dtypes"};
    int kind = kinds[field];
    size_t m = 0;
    const char *mop = NULL;
    if (field > 0) {
        for (size_t i = 0; i < nm; i++) {
            const dx_fr_entry *e = ms[i].d ? ent_at(&ms[i], seq) : NULL;
            vals[i] = e ? e->op : NULL;
        }
        mop = modal_str(vals, nm);
        if (!mop || skip_sizes(mop))
            return;
    }
    for (size_t i = 0; i < nm; i++) {
        const dx_fr_entry *e = ms[i].d ? ent_at(&ms[i], seq) : NULL;
        vals[i] = NULL;
        if (!e || (mop && strcmp(e->op, mop)))
            continue;
        vals[i] = field == 0 ? e->op : field == 1 ? e->in_sizes : e->in_dtypes;
        if (!vals[i][0])
            vals[i] = NULL;
        else
            m++;
    }
    if (m < 2)
        return;
    const char *mode = modal_str(vals, nm);
    size_t nsame = 0, ndiff = 0;
    for (size_t i = 0; i < nm; i++)
        if (vals[i] && mode && !strcmp(vals[i], mode))
            ranks[nsame++] = ms[i].rank;
    for (size_t i = 0; i < nm; i++) {
        if (!vals[i] || (mode && !strcmp(vals[i], mode)))
            continue;
        ndiff++;
        if (!mode || (ms[i].reported & (1u << kind)))
            continue;
        ms[i].reported |= 1u << kind;
        dx_buf b = {0};
        dx_buf_addf(&b, "at collective %lld of PG %s, rank %d %s %s while rank%s ", seq, pgname,
                    ms[i].rank, what[field], vals[i], nsame > 1 ? "s" : "");
        add_ranks(&b, ranks, nsame);
        dx_buf_addf(&b, " %s %s", field == 0 ? "run" : "have", mode);
        if (field > 0)
            dx_buf_addf(&b, " (%s)", mop);
        add_finding(a, kind, ms[i].rank, pgname, seq, &b);
        dx_buf_fini(&b);
    }
    if (!mode && ndiff && !(*tie_reported & (1u << kind))) {
        *tie_reported |= 1u << kind;
        dx_buf b = {0};
        dx_buf_addf(&b, "at collective %lld of PG %s the ranks disagree with no majority:", seq,
                    pgname);
        size_t shown = 0;
        for (size_t i = 0; i < nm && shown < 6; i++)
            if (vals[i]) {
                dx_buf_addf(&b, "%s rank %d %s %s", shown ? "," : "", ms[i].rank, what[field],
                            vals[i]);
                shown++;
            }
        add_finding(a, kind, -1, pgname, seq, &b);
        dx_buf_fini(&b);
    }
}

static void compare_states(an *a, const char *pgname, mem *ms, size_t nm, long long seq,
                           long long *st, int *ranks)
{
    for (size_t i = 0; i < nm; i++)
        st[i] = ms[i].d ? state_at(&ms[i], seq) : -1;
    for (size_t i = 0; i < nm; i++)
        if (st[i] == DX_FR_UNKNOWN)
            st[i] = -1;
    long long mode = modal_int(st, nm);
    if (mode < DX_FR_STARTED)
        return;
    size_t nsame = 0;
    for (size_t i = 0; i < nm; i++)
        if (st[i] == mode)
            ranks[nsame++] = ms[i].rank;
    for (size_t i = 0; i < nm; i++) {
        if (st[i] < 0 || st[i] >= mode || (ms[i].reported & (1u << DX_FR_STATE)))
            continue;
        ms[i].reported |= 1u << DX_FR_STATE;
        dx_buf b = {0};
        dx_buf_addf(&b, "rank %d has collective %lld of PG %s (%s) %s while rank%s ", ms[i].rank,
                    seq, pgname, op_at(ms, nm, seq), state_name((int)st[i]), nsame > 1 ? "s" : "");
        add_ranks(&b, ranks, nsame);
        dx_buf_addf(&b, " %s it", mode == DX_FR_COMPLETED ? "completed" : "started");
        add_finding(a, DX_FR_STATE, ms[i].rank, pgname, seq, &b);
        dx_buf_fini(&b);
    }
}

/* How far each member got, against the majority. */
static void compare_progress(an *a, const char *pgname, mem *ms, size_t nm, long long *le,
                             int *ranks)
{
    size_t k = 0;
    long long mx = -1;
    for (size_t i = 0; i < nm; i++) {
        le[i] = ms[i].last_enq;
        if (le[i] > mx)
            mx = le[i];
        if (le[i] >= 0)
            k++;
    }
    if (k < 2)
        return;
    long long mode = modal_int(le, nm);
    if (mode < 0) { /* no majority: the ranks at the front against the others */
        size_t nf = 0, nb = 0;
        for (size_t i = 0; i < nm; i++)
            if (le[i] == mx)
                ranks[nf++] = ms[i].rank;
        dx_buf b = {0};
        dx_buf_addf(&b, "ranks ");
        add_ranks(&b, ranks, nf);
        dx_buf_addf(&b, " of PG %s reached collective %lld (%s) but ranks ", pgname, mx,
                    op_at(ms, nm, mx));
        for (size_t i = 0; i < nm; i++)
            if (le[i] >= 0 && le[i] < mx)
                ranks[nb++] = ms[i].rank;
        add_ranks(&b, ranks, nb);
        dx_buf_addf(&b, " did not, and no majority says which side is behind");
        long long lo = mx;
        for (size_t i = 0; i < nm; i++)
            if (le[i] >= 0 && le[i] < lo)
                lo = le[i];
        add_finding(a, DX_FR_MISSING_RANK, -1, pgname, lo + 1, &b);
        dx_buf_fini(&b);
        return;
    }
    size_t nsame = 0, nahead = 0;
    for (size_t i = 0; i < nm; i++)
        if (le[i] == mode)
            ranks[nsame++] = ms[i].rank;
    for (size_t i = 0; i < nm; i++) {
        if (le[i] < 0 || le[i] >= mode) {
            nahead += le[i] > mode;
            continue;
        }
        dx_buf b = {0};
        dx_buf_addf(&b, "rank %d of PG %s never enqueued collective %lld (%s) that rank%s ",
                    ms[i].rank, pgname, le[i] + 1, op_at(ms, nm, le[i] + 1), nsame > 1 ? "s" : "");
        add_ranks(&b, ranks, nsame);
        dx_buf_addf(&b, " reached; its last enqueued collective is %lld", le[i]);
        add_finding(a, DX_FR_MISSING_RANK, ms[i].rank, pgname, le[i] + 1, &b);
        dx_buf_fini(&b);
    }
    if (nahead) {
        int ahead = -1;
        for (size_t i = 0; i < nm; i++)
            if (le[i] > mode)
                ahead = nahead == 1 ? ms[i].rank : -1;
        dx_buf b = {0};
        size_t na = 0;
        for (size_t i = 0; i < nm; i++)
            if (le[i] > mode)
                ranks[na++] = ms[i].rank;
        dx_buf_addf(&b, "only rank%s ", na > 1 ? "s" : "");
        add_ranks(&b, ranks, na);
        dx_buf_addf(&b, " of PG %s enqueued collective %lld (%s); the majority stopped at %lld",
                    pgname, mode + 1, op_at(ms, nm, mode + 1), mode);
        add_finding(a, DX_FR_MISSING_RANK, ahead, pgname, mode + 1, &b);
        dx_buf_fini(&b);
    }
}

static const dx_fr_pg *dump_pg(const dx_frdump *d, const char *name)
{
    for (size_t i = 0; i < d->npgs; i++)
        if (!strcmp(d->pgs[i].name, name))
            return &d->pgs[i];
    return NULL;
}

static int dump_mentions(const dx_frdump *d, const char *name)
{
    if (dump_pg(d, name))
        return 1;
    for (size_t i = 0; i < d->nentries; i++)
        if (!strcmp(d->entries[i].pg, name))
            return 1;
    return 0;
}

static const dx_frdump *dump_of(const dx_frdump *dumps, size_t n, int rank)
{
    for (size_t i = 0; i < n; i++)
        if (dumps[i].rank == rank)
            return &dumps[i];
    return NULL;
}

#define MAX_SEQ_SPAN 200000

static void analyze_pg(an *a, const dx_frdump *dumps, size_t n, const char *pgname,
                       int *nodump_reported, size_t nodump_cap)
{
    const int *listed = NULL;
    size_t nlisted = 0, nm = 0;
    for (size_t i = 0; i < n && !listed; i++) {
        const dx_fr_pg *p = dumps[i].rank >= 0 ? dump_pg(&dumps[i], pgname) : NULL;
        if (p && p->ranks) {
            listed = p->ranks;
            nlisted = p->nranks;
        }
    }
    mem *ms = dx_calloc(listed ? nlisted : n, sizeof *ms);
    const char **vals = dx_calloc(listed ? nlisted : n, sizeof *vals);
    long long *tmp = dx_calloc(listed ? nlisted : n, sizeof *tmp);
    int *ranks = dx_calloc(listed ? nlisted : n, sizeof *ranks);
    if (!ms || !vals || !tmp || !ranks) {
        a->oom = 1;
        goto done;
    }
    if (listed) {
        for (size_t i = 0; i < nlisted; i++) {
            size_t j = 0;
            while (j < nm && ms[j].rank != listed[i])
                j++;
            if (j == nm)
                ms[nm++].rank = listed[i];
        }
    } else
        for (size_t i = 0; i < n; i++)
            if (dumps[i].rank >= 0 && dump_mentions(&dumps[i], pgname) &&
                !dump_of(dumps, i, dumps[i].rank))
                ms[nm++].rank = dumps[i].rank;

    long long lo = -1, hi = -1;
    for (size_t i = 0; i < nm; i++) {
        mem *m = &ms[i];
        m->last_enq = -1;
        m->d = dump_of(dumps, n, m->rank);
        if (!m->d) {
            int r = m->rank;
            if (r >= 0 && (size_t)r < nodump_cap && nodump_reported[r])
                continue;
            if (r >= 0 && (size_t)r < nodump_cap)
                nodump_reported[r] = 1;
            dx_buf b = {0};
            dx_buf_addf(&b, "no dump for rank %d, which PG %s lists among its ranks", r, pgname);
            add_finding(a, DX_FR_MISSING_RANK, r, pgname, -1, &b);
            dx_buf_fini(&b);
            continue;
        }
        m->pg = dump_pg(m->d, pgname);
        size_t k = 0;
        for (size_t j = 0; j < m->d->nentries; j++) {
            const dx_fr_entry *e = &m->d->entries[j];
            k += !e->is_p2p && e->coll_seq >= 0 && !strcmp(e->pg, pgname);
        }
        m->ent = k ? dx_calloc(k, sizeof *m->ent) : NULL;
        if (k && !m->ent) {
            a->oom = 1;
            goto done;
        }
        for (size_t j = 0; j < m->d->nentries; j++) {
            const dx_fr_entry *e = &m->d->entries[j];
            if (!e->is_p2p && e->coll_seq >= 0 && !strcmp(e->pg, pgname))
                m->ent[m->nent++] = e;
        }
        if (m->nent > 1)
            qsort(m->ent, m->nent, sizeof *m->ent, cmp_ent);
        /* A dump that has no word of the PG: it never enqueued on it when the dump has a
         * pg_status (newer versions list every PG there), else unknown. */
        int any_status = 0;
        for (size_t j = 0; j < m->d->npgs; j++)
            any_status |= m->d->pgs[j].has_status;
        if (m->pg && m->pg->has_status && m->pg->last_enqueued > 0)
            m->last_enq = m->pg->last_enqueued;
        else
            m->last_enq = m->pg || k || any_status ? 0 : -1;
        if (m->nent) {
            long long first = m->ent[0]->coll_seq, last = m->ent[m->nent - 1]->coll_seq;
            if (last > m->last_enq)
                m->last_enq = last;
            if (lo < 0 || first < lo)
                lo = first;
            if (last > hi)
                hi = last;
        }
    }
    compare_progress(a, pgname, ms, nm, tmp, ranks);
    if (hi >= 0 && hi - lo > MAX_SEQ_SPAN)
        lo = hi - MAX_SEQ_SPAN;
    unsigned tie = 0;
    for (long long s = lo; hi >= 0 && s <= hi && !a->oom; s++) {
        for (int field = 0; field < 3; field++)
            compare_field(a, pgname, ms, nm, s, field, vals, ranks, &tie);
        compare_states(a, pgname, ms, nm, s, tmp, ranks);
    }
done:
    if (ms)
        for (size_t i = 0; i < nm; i++)
            dx_free((void *)ms[i].ent);
    dx_free(ms);
    dx_free(vals);
    dx_free(tmp);
    dx_free(ranks);
}

static int cmp_finding(const void *x, const void *y)
{
    const dx_fr_finding *a = x, *b = y;
    unsigned long long sa = (unsigned long long)a->seq,
                       sb = (unsigned long long)b->seq; /* -1 last */
    if (sa != sb)
        return sa < sb ? -1 : 1;
    if (a->kind != b->kind)
        return a->kind - b->kind;
    int pg = strcmp(a->pg, b->pg);
    if (pg)
        return pg;
    return (a->rank > b->rank) - (a->rank < b->rank);
}

size_t dx_frdump_analyze(const dx_frdump *dumps, size_t n, dx_fr_finding *out, size_t max)
{
    an a = {0};
    const char **names = NULL;
    size_t nn = 0, ncap = 0;
    int maxrank = -1;
    for (size_t i = 0; i < n; i++) {
        const dx_frdump *d = &dumps[i];
        if (d->rank < 0)
            continue;
        for (size_t j = 0; j < d->npgs; j++)
            if (d->pgs[j].ranks)
                for (size_t r = 0; r < d->pgs[j].nranks; r++)
                    if (d->pgs[j].ranks[r] > maxrank)
                        maxrank = d->pgs[j].ranks[r];
        for (size_t j = 0; j < d->npgs + d->nentries; j++) {
            const char *nm = j < d->npgs ? d->pgs[j].name : d->entries[j - d->npgs].pg;
            if (j > 0 && j >= d->npgs &&
                !strcmp(nm, j > d->npgs ? d->entries[j - d->npgs - 1].pg : d->pgs[j - 1].name))
                continue; /* the same PG as the entry before */
            size_t k = 0;
            while (k < nn && strcmp(names[k], nm))
                k++;
            if (k < nn || nn >= DX_FR_MAX_PGS)
                continue;
            if (dx_grow((void **)&names, &ncap, nn + 1, sizeof *names) != DDX_OK) {
                a.oom = 1;
                break;
            }
            names[nn++] = nm;
        }
    }
    size_t ndr = maxrank >= 0 && maxrank < (int)MAX_PG_RANKS ? (size_t)maxrank + 1 : 0;
    int *nodump = ndr ? dx_calloc(ndr, sizeof *nodump) : NULL;
    for (size_t k = 0; k < nn && !a.oom; k++)
        analyze_pg(&a, dumps, n, names[k], nodump, nodump ? ndr : 0);
    if (a.n > 1)
        qsort(a.f, a.n, sizeof *a.f, cmp_finding);
    size_t w = a.n < max ? a.n : max;
    if (w)
        memcpy(out, a.f, w * sizeof *out);
    dx_free(a.f);
    dx_free(names);
    dx_free(nodump);
    return w;
}

size_t dx_frdump_work(const dx_frdump *dumps, size_t n,
                      void (*add)(void *ctx, int rank, double seconds), void *ctx)
{
    size_t given = 0;
    for (size_t i = 0; i < n; i++) {
        const dx_frdump *d = &dumps[i];
        if (d->rank < 0)
            continue;
        for (size_t k = 1; k < d->nentries; k++) {
            const dx_fr_entry *a = &d->entries[k - 1], *b = &d->entries[k];
            if (a->is_p2p || b->is_p2p || a->state != DX_FR_COMPLETED ||
                b->state != DX_FR_COMPLETED || a->duration_ms < 0 || a->created_ms < 0 ||
                b->created_ms < 0 || a->coll_seq < 0 || b->coll_seq != a->coll_seq + 1 ||
                strcmp(a->pg, b->pg))
                continue;
            double work = b->created_ms - (a->created_ms + a->duration_ms);
            if (work < 0)
                continue;
            add(ctx, d->rank, work / 1000.0);
            given++;
        }
    }
    return given;
}
