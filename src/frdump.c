/* frdump.c -- PyTorch NCCL flight-recorder dumps: a plain-data pickle reader, extraction of the
 * entries, and the comparison across ranks that names the ranks a hang waits for.
 *
 * Both formats become jansson values first: JSON through json_loadb, pickle through the reader
 * below, which knows only the opcodes that plain data needs and refuses every opcode that could
 * name a callable (GLOBAL, REDUCE, ...). The reader keeps, with every stack item, the nesting
 * depth of the value, so trees stay shallow (jansson frees recursively); a memo get of a
 * container returns a copy (counted against a budget), so no value is shared and no cycle can
 * form. Then one extraction fills dx_frdump (one tree at a time, freed before the next dump).
 *
 * The comparison: each dump is placed at its rank; process groups are matched across ranks by
 * name and member ranks; within each group every member's progress (last enqueued collective,
 * from pg_status and the entries), its entries sequence by sequence and position by position
 * (presence, operation, sizes, dtypes, state, the collective's own rules) and its idleness in a
 * dump of unfinished work are compared with the others'. Then the culprits: the ranks named out
 * of step, or that keep others waiting, minus the ranks that themselves wait in another group
 * for a rank behind there (victims of the same hang). See frdump.h for the contract and limits.
 * Called by diag.c and tests/unit/test_frdump.c.
 */
#include "dx.h"

#include <ctype.h>
#include <jansson.h>
#include <strings.h>

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

/* An integer field; JSON dumps write pg_status values and the analyzer's tests seq ids as
 * strings. -1 when absent or not a number. */
static long long int_of(json_t *v)
{
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

static long long get_int(json_t *o, const char *key) { return int_of(json_object_get(o, key)); }

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

/* The number of elements of the first tensor of a sizes value ([[4, 4], ...] gives 16; [[]], a
 * scalar, 1), -1 when there is none. */
static long long numel0(json_t *sizes)
{
    json_t *t = json_array_get(sizes, 0);
    if (!json_is_array(t))
        return -1;
    long long n = 1;
    size_t i;
    json_t *d;
    json_array_foreach(t, i, d)
    {
        if (!json_is_integer(d) || json_integer_value(d) < 0)
            return -1;
        long long x = (long long)json_integer_value(d);
        if (x && n > (1LL << 62) / x)
            return -1;
        n *= x;
    }
    return n;
}

static int state_of(const char *s)
{
    static const char *const names[] = {"scheduled", "started", "completed"};
    for (size_t i = 0; s && i < DX_ARRAY_LEN(names); i++)
        if (!strcmp(s, names[i]))
            return (int)i + DX_FR_SCHEDULED;
    return DX_FR_UNKNOWN;
}

static dx_fr_pg *pg_find(dx_frdump *d, const char *name)
{
    for (size_t i = 0; i < d->npgs; i++)
        if (!strcmp(d->pgs[i].name, name))
            return &d->pgs[i];
    return NULL;
}

/* The group called name (added when new; *out NULL past DX_FR_MAX_PGS). */
static int pg_add(dx_frdump *d, size_t *cap, const char *name, dx_fr_pg **out)
{
    char key[64];
    copy_str(key, sizeof key, name, strlen(name));
    *out = pg_find(d, key);
    if (*out)
        return DDX_OK;
    if (d->npgs >= DX_FR_MAX_PGS)
        return DDX_OK;
    if (dx_grow((void **)&d->pgs, cap, d->npgs + 1, sizeof *d->pgs) != DDX_OK)
        return DDX_ENOMEM;
    dx_fr_pg *p = &d->pgs[d->npgs++];
    memset(p, 0, sizeof *p);
    memcpy(p->name, key, sizeof key);
    p->local_id = p->last_enqueued = p->last_started = p->last_completed = -1;
    *out = p;
    return DDX_OK;
}

static int cmp_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

/* "[0, 1, 2]" or a list of ints, kept sorted and unique; an empty list leaves ranks NULL. A rank
 * of MAX_PG_RANKS or more is left out: no job ddx models has it, and the comparison sizes its
 * tables by the largest rank. */
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
                if (x >= (long)MAX_PG_RANKS)
                    continue; /* no rank of a job ddx models: not a member to compare */
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
            if (!json_is_integer(x) || json_integer_value(x) < 0 ||
                json_integer_value(x) >= MAX_PG_RANKS || n >= MAX_PG_RANKS)
                continue;
            if (dx_grow((void **)&r, &cap, n + 1, sizeof *r) != DDX_OK)
                goto fail;
            r[n++] = (int)json_integer_value(x);
        }
    }
    if (n > 1) {
        qsort(r, n, sizeof *r, cmp_int);
        size_t w = 1;
        for (size_t i = 1; i < n; i++)
            if (r[i] != r[w - 1])
                r[w++] = r[i];
        n = w;
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

static int get_entry(dx_frdump *d, size_t *pgcap, json_t *e, dx_fr_entry *x)
{
    memset(x, 0, sizeof *x);
    x->pg = DX_FR_NO_PG;
    json_t *pg = json_object_get(e, "process_group");
    char name[64];
    copy_json_str(name, sizeof name, json_is_array(pg) ? json_array_get(pg, 0) : pg);
    if (name[0]) {
        dx_fr_pg *p;
        if (pg_add(d, pgcap, name, &p) != DDX_OK)
            return DDX_ENOMEM;
        if (p) {
            x->pg = (uint32_t)(p - d->pgs);
            if (!p->desc[0] && json_is_array(pg))
                copy_json_str(p->desc, sizeof p->desc, json_array_get(pg, 1));
        }
    }
    x->record_id = get_int(e, "record_id");
    x->pg_id = get_int(e, "pg_id");
    x->coll_seq = get_int(e, "collective_seq_id");
    x->p2p_seq = get_int(e, "p2p_seq_id");
    copy_json_str(x->op, sizeof x->op, json_object_get(e, "profiling_name"));
    x->state = state_of(json_string_value(json_object_get(e, "state")));
    d->completed_entries |= x->state == DX_FR_COMPLETED;
    json_t *v = json_object_get(e, "duration_ms");
    x->duration_ms = json_is_number(v) ? json_number_value(v) : -1;
    v = json_object_get(e, "time_created_ns");
    x->created_ms =
        json_is_number(v) && json_number_value(v) >= 0 ? json_number_value(v) / 1e6 : -1;
    v = json_object_get(e, "input_sizes");
    flat_field(x->in_sizes, sizeof x->in_sizes, v, 0);
    x->in_numel = numel0(v);
    v = json_object_get(e, "output_sizes");
    flat_field(x->out_sizes, sizeof x->out_sizes, v, 0);
    x->out_numel = numel0(v);
    flat_field(x->in_dtypes, sizeof x->in_dtypes, json_object_get(e, "input_dtypes"), 1);
    flat_field(x->out_dtypes, sizeof x->out_dtypes, json_object_get(e, "output_dtypes"), 1);
    x->is_p2p = json_is_true(json_object_get(e, "is_p2p"));
    return DDX_OK;
}

/* The group a pg_status key (a local id) stands for: the group of an entry with that pg_id, else
 * for "0" the default group; NULL when nothing says. */
static dx_fr_pg *status_pg(dx_frdump *d, const char *key)
{
    char *e;
    long long id = strtoll(key, &e, 10);
    if (e == key || *e)
        return NULL;
    for (size_t j = 0; j < d->nentries; j++)
        if (d->entries[j].pg_id == id && d->entries[j].pg != DX_FR_NO_PG)
            return &d->pgs[d->entries[j].pg];
    if (id != 0)
        return NULL;
    for (size_t i = 0; i < d->npgs; i++)
        if (!strcmp(d->pgs[i].desc, "default_pg"))
            return &d->pgs[i];
    return pg_find(d, "0");
}

/* Top-level keys of pickles that are not flight-recorder dumps but are found beside them. */
static const struct {
    const char *key;
    const char *what;
} not_dumps[] = {
    {"segments", "a CUDA memory snapshot (torch.cuda.memory._dump_snapshot)"},
    {"device_traces", "a CUDA memory snapshot (torch.cuda.memory._dump_snapshot)"},
};

static int extract(const char *name, json_t *root, dx_frdump *d, ddx_error *err)
{
    size_t pgcap = 0, ecap = 0;
    const char *key;
    json_t *v;
    if (!json_is_object(root))
        return dx_err(err, DDX_EFORMAT, "%s: not a flight-recorder dump (the top is not a dict)",
                      name);
    json_t *entries = json_object_get(root, "entries");
    if (!json_is_array(entries) && !json_object_get(root, "pg_status") &&
        !json_object_get(root, "pg_config")) {
        for (size_t i = 0; i < DX_ARRAY_LEN(not_dumps); i++)
            if (json_object_get(root, not_dumps[i].key)) {
                copy_str(d->other, sizeof d->other, not_dumps[i].what, strlen(not_dumps[i].what));
                return dx_err(err, DDX_EFORMAT, "%s: %s, not a flight-recorder dump", name,
                              not_dumps[i].what);
            }
        return dx_err(err, DDX_EFORMAT,
                      "%s: not a flight-recorder dump (no 'entries', 'pg_config' or "
                      "'pg_status')",
                      name);
    }
    v = json_object_get(root, "rank");
    if (json_is_integer(v) && json_integer_value(v) >= 0 && json_integer_value(v) < MAX_PG_RANKS) {
        d->rank = (int)json_integer_value(v);
        d->rank_from_field = 1;
    }
    copy_json_str(d->version, sizeof d->version, json_object_get(root, "version"));
    v = json_object_get(root, "comm_lib_version");
    if (!v)
        v = json_object_get(root, "nccl_version");
    copy_json_str(d->nccl_version, sizeof d->nccl_version, v);

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
        if (get_entry(d, &pgcap, v, &d->entries[d->nentries++]) != DDX_OK)
            goto nomem;
    }
    for (size_t j = 0; j < d->nentries; j++)
        if (d->entries[j].pg != DX_FR_NO_PG && d->entries[j].pg_id >= 0)
            d->pgs[d->entries[j].pg].local_id = d->entries[j].pg_id;
    /* pg_status is keyed by the rank's local ids, which name different groups on different
     * ranks: a key counts only through an entry with that pg_id, or "0" as the default group */
    json_t *st = json_object_get(root, "pg_status");
    json_object_foreach(st, key, v)
    {
        dx_fr_pg *p = status_pg(d, key);
        if (!p) {
            d->status_unmapped++;
            continue;
        }
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
    static const char *const names[] = {"?",     "missing-rank", "op",        "size",
                                        "dtype", "state",        "empty-dump"};
    return kind > 0 && (size_t)kind < DX_ARRAY_LEN(names) ? names[kind] : "?";
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

/* The base name without a dump's extension. */
static size_t stem(const char *name, const char **base)
{
    static const char *const exts[] = {".json", ".pkl", ".pickle", ".p", ".bin", ".dump", ".txt"};
    const char *b = name;
    for (const char *p = name; *p; p++)
        if (*p == '/' || *p == '\\')
            b = p + 1;
    size_t n = strlen(b);
    for (size_t i = 0; i < DX_ARRAY_LEN(exts); i++) {
        size_t m = strlen(exts[i]);
        if (n > m && !strcasecmp(b + n - m, exts[i])) {
            n -= m;
            break;
        }
    }
    *base = b;
    return n;
}

/* The rank in a name's trailing digits and the prefix before them; -1 when none. */
static int trailing_rank(const char *name, char *prefix, size_t cap)
{
    const char *b;
    size_t n = stem(name, &b), k = n;
    for (size_t i = 0; i < n; i++) /* a name of word characters alone, as the analyzer's */
        if (!isalnum((unsigned char)b[i]) && b[i] != '_' && b[i] != '-')
            return -1;
    while (k > 0 && b[k - 1] >= '0' && b[k - 1] <= '9')
        k--;
    if (k == n || n - k > 6)
        return -1;
    long r = strtol(b + k, NULL, 10);
    if (prefix)
        copy_str(prefix, cap, b, k);
    return r < MAX_PG_RANKS ? (int)r : -1;
}

int dx_frdump_name_ranked(const char *name) { return trailing_rank(name, NULL, 0) >= 0; }

static void name_dump(dx_frdump *d, const char *name)
{
    const char *b;
    size_t n = stem(name, &b);
    copy_str(d->name, sizeof d->name, b, strlen(b));
    d->rank = trailing_rank(name, d->prefix, sizeof d->prefix);
    if (d->rank < 0)
        d->rank = dx_attrib_rank_from_name(name, NULL);
    (void)n;
}

void dx_frdump_empty(const char *name, dx_frdump *out)
{
    memset(out, 0, sizeof *out);
    name_dump(out, name ? name : "");
    out->status = DX_FR_EMPTY;
}

int dx_frdump_parse(const char *name, const void *data, size_t len, dx_frdump *out, ddx_error *err)
{
    const unsigned char *p = data;
    json_t *root = NULL;
    int rc;
    memset(out, 0, sizeof *out);
    if (!name)
        name = "(flight recorder dump)";
    name_dump(out, name);
    out->status = DX_FR_REFUSED;
    if (!data && len)
        return dx_err(err, DDX_EINVAL, "%s: no data", name);
    if (len == 0) {
        out->status = DX_FR_EMPTY;
        return DDX_OK;
    }
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
    int rank = out->rank;
    rc = extract(name, root, out, err);
    json_decref(root);
    if (rc) {
        char other[sizeof out->other];
        memcpy(other, out->other, sizeof other);
        dx_frdump_fini(out);
        name_dump(out, name);
        out->rank = rank;
        out->status = DX_FR_REFUSED;
        memcpy(out->other, other, sizeof other);
        return rc;
    }
    out->status = DX_FR_READ;
    return DDX_OK;
}

/* ---- comparing ranks ---- */

typedef struct an {
    dx_fr_finding *f; /* every finding, sorted and cut at the end */
    size_t n, cap;
    int oom;
} an;

/* A process group matched across ranks: its name and member ranks (pg_config's), or its name
 * alone when no dump lists its ranks. Names and rank lists are borrowed from the dumps. */
typedef struct grp {
    const char *name, *desc;
    const int *ranks; /* sorted; NULL: the dumps that mention the group are its members */
    size_t nranks;
} grp;

/* One member of the group being compared. */
typedef struct mem {
    int rank;
    const dx_frdump *d;      /* NULL: no dump */
    const dx_fr_pg *pg;      /* the dump's record of the group, may be NULL */
    const dx_fr_entry **ent; /* its collective entries of the group, by (coll_seq, dump order) */
    size_t nent, cur;        /* cur: the first entry at or after the sequence compared */
    long long enq;           /* last enqueued, -1 unknown */
    long long pend;          /* the first collective it has not completed, -1 none */
    int data;                /* a readable dump */
    int active_only;         /* its dump keeps only work not completed */
    unsigned reported;       /* bit per kind already reported */
} mem;

/* What the roots need of a member once its group is compared. */
typedef struct view {
    int rank;
    long long enq, pend;
    int data, active_only, idle;
} view;

typedef struct gview {
    view *v;
    size_t n;
} gview;

static void add_finding(an *a, int kind, int rank, const grp *g, long long seq, const char *op,
                        dx_buf *why)
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
    copy_str(f->pg, sizeof f->pg, g->name, strlen(g->name));
    copy_str(f->desc, sizeof f->desc, g->desc, strlen(g->desc));
    if (op)
        copy_str(f->op, sizeof f->op, op, strlen(op));
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

/* "PG 0" or "PG 3 (mesh_tp)": the group as messages name it. */
static void add_pg(dx_buf *b, const grp *g)
{
    dx_buf_addf(b, "PG %s", g->name);
    if (g->desc[0] && strcmp(g->desc, "undefined") && strcmp(g->desc, "default_pg"))
        dx_buf_addf(b, " (%s)", g->desc);
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

static int cmp_ent(const void *a, const void *b)
{
    const dx_fr_entry *x = *(const dx_fr_entry *const *)a, *y = *(const dx_fr_entry *const *)b;
    if (x->coll_seq != y->coll_seq)
        return x->coll_seq < y->coll_seq ? -1 : 1;
    return x < y ? -1 : x > y; /* dump order within one sequence number */
}

/* The entries of m at seq: *k of them from m->ent[*first]. Calls come with seq ascending. */
static void ents_at(mem *m, long long seq, size_t *first, size_t *k)
{
    while (m->cur < m->nent && m->ent[m->cur]->coll_seq < seq)
        m->cur++;
    size_t e = m->cur;
    while (e < m->nent && m->ent[e]->coll_seq == seq)
        e++;
    *first = m->cur;
    *k = e - m->cur;
}

static const char *state_name(int s)
{
    static const char *const names[] = {"unknown", "scheduled", "started", "completed"};
    return s >= 0 && s <= 3 ? names[s] : "unknown";
}

/* A member's state for collective seq when it has no entry there: what pg_status implies. */
static int status_state(const mem *m, long long seq)
{
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

/* The collective's name without its library prefix and peer: "nccl:send 1->2" gives "send". */
static void base_op(const char *op, char *out, size_t cap)
{
    const char *c = strchr(op, ':');
    const char *b = c ? c + 1 : op;
    size_t n = strcspn(b, " ");
    copy_str(out, cap, b, n);
}

static int op_is(const char *base, const char *const *list, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!strcmp(base, list[i]))
            return 1;
    return 0;
}

/* Sizes whose first tensor has no dimensions listed ("[]", "[[]]") are not compared. */
static int sizes_empty(const char *s) { return !s[0] || !strcmp(s, "[]") || !strncmp(s, "[[]", 3); }

/* Whether field f (0 op, 1 input sizes, 2 output sizes, 3 input dtypes, 4 output dtypes) of
 * collective op is compared across ranks, as PyTorch's analyzer decides (types.py, Op.match):
 * all-to-all sizes differ by design, a scatter's inputs and a gather's outputs live on the root
 * alone, a broadcast's and a scatter's input dtypes likewise; coalesced markers carry no sizes. */
static int field_compared(int f, const char *op)
{
    char b[48];
    base_op(op, b, sizeof b);
    int a2a = strstr(b, "all_to_all") || strstr(b, "alltoall");
    int coal = strstr(b, "coalesced") != NULL;
    switch (f) {
    case 1:
        return !a2a && !coal && strcmp(b, "scatter");
    case 2:
        return !a2a && !coal && strcmp(b, "gather");
    case 3:
        return strcmp(b, "scatter") && strcmp(b, "broadcast");
    case 4:
        return strcmp(b, "gather");
    default:
        return 1;
    }
}

static const char *field_of(const dx_fr_entry *e, int f)
{
    switch (f) {
    case 0:
        return e->op;
    case 1:
        return e->in_sizes;
    case 2:
        return e->out_sizes;
    case 3:
        return sizes_empty(e->in_sizes) ? "" : e->in_dtypes;
    default:
        return sizes_empty(e->out_sizes) ? "" : e->out_dtypes;
    }
}

/* Compares field f of the entries at (seq, position idx): ents[i] is member i's, or NULL. */
static void compare_field(an *a, const grp *g, mem *ms, size_t nm, long long seq,
                          const dx_fr_entry *const *ents, int f, const char **vals, int *ranks,
                          unsigned *tie_reported)
{
    static const int kinds[] = {DX_FR_OP, DX_FR_SIZE, DX_FR_SIZE, DX_FR_DTYPE, DX_FR_DTYPE};
    static const char *const what[] = {"runs", "has input sizes", "has output sizes",
                                       "has input dtypes", "has output dtypes"};
    int kind = kinds[f];
    size_t m = 0;
    const char *mop = NULL;
    if (f > 0) {
        for (size_t i = 0; i < nm; i++)
            vals[i] = ents[i] ? ents[i]->op : NULL;
        mop = modal_str(vals, nm);
        if (!mop || !field_compared(f, mop))
            return;
    }
    for (size_t i = 0; i < nm; i++) {
        const dx_fr_entry *e = ents[i];
        vals[i] = NULL;
        if (!e || (mop && strcmp(e->op, mop)))
            continue;
        vals[i] = field_of(e, f);
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
        dx_buf_addf(&b, "at collective %lld of ", seq);
        add_pg(&b, g);
        dx_buf_addf(&b, ", rank %d %s %s while rank%s ", ms[i].rank, what[f], vals[i],
                    nsame > 1 ? "s" : "");
        add_ranks(&b, ranks, nsame);
        dx_buf_addf(&b, " %s %s", f == 0 ? "run" : "have", mode);
        if (f > 0)
            dx_buf_addf(&b, " (%s)", mop);
        add_finding(a, kind, ms[i].rank, g, seq, f == 0 ? vals[i] : mop, &b);
        dx_buf_fini(&b);
    }
    if (!mode && ndiff && !(*tie_reported & (1u << kind))) {
        *tie_reported |= 1u << kind;
        dx_buf b = {0};
        dx_buf_addf(&b, "at collective %lld of ", seq);
        add_pg(&b, g);
        dx_buf_addf(&b, " the ranks disagree with no majority:");
        size_t shown = 0;
        for (size_t i = 0; i < nm && shown < 6; i++)
            if (vals[i]) {
                dx_buf_addf(&b, "%s rank %d %s %s", shown ? "," : "", ms[i].rank, what[f], vals[i]);
                shown++;
            }
        add_finding(a, kind, -1, g, seq, mop ? mop : vals[0] ? vals[0] : NULL, &b);
        dx_buf_fini(&b);
    }
}

/* Which rule of its collective an entry breaks (PyTorch's analyzer, Op.match): an all-reduce's
 * output is its input; an all-gather's output holds the group's inputs; a reduce-scatter's input
 * holds the group's outputs; inputs and outputs share their dtypes. 0 none, else the kind, with
 * the detail in w. */
static int broken_rule(const dx_fr_entry *e, size_t gsize, dx_buf *w)
{
    static const char *const reduce[] = {"all_reduce", "allreduce_coalesced"};
    static const char *const gather[] = {"all_gather", "_all_gather_base",
                                         "all_gather_into_tensor_coalesced"};
    static const char *const scatter[] = {"reduce_scatter", "_reduce_scatter_base",
                                          "reduce_scatter_tensor_coalesced"};
    static const char *const own_dtypes[] = {"scatter", "gather", "broadcast"};
    char b[48];
    base_op(e->op, b, sizeof b);
    long long gs = (long long)gsize;
    if (op_is(b, reduce, DX_ARRAY_LEN(reduce)) && !sizes_empty(e->in_sizes) &&
        !sizes_empty(e->out_sizes) && strcmp(e->in_sizes, e->out_sizes)) {
        dx_buf_addf(w, "input sizes %s but output sizes %s", e->in_sizes, e->out_sizes);
        return DX_FR_SIZE;
    }
    if (op_is(b, gather, DX_ARRAY_LEN(gather)) && e->in_numel >= 0 && e->out_numel >= 0 &&
        e->out_numel != e->in_numel * gs) {
        dx_buf_addf(w, "%lld input elements, so %lld output elements for a group of %zu, but %lld",
                    e->in_numel, e->in_numel * gs, gsize, e->out_numel);
        return DX_FR_SIZE;
    }
    if (op_is(b, scatter, DX_ARRAY_LEN(scatter)) && e->in_numel >= 0 && e->out_numel >= 0 &&
        e->in_numel != e->out_numel * gs) {
        dx_buf_addf(w, "%lld output elements, so %lld input elements for a group of %zu, but %lld",
                    e->out_numel, e->out_numel * gs, gsize, e->in_numel);
        return DX_FR_SIZE;
    }
    if (!op_is(b, own_dtypes, DX_ARRAY_LEN(own_dtypes)) && !sizes_empty(e->in_sizes) &&
        !sizes_empty(e->out_sizes) && e->in_dtypes[0] && e->out_dtypes[0] &&
        strcmp(e->in_dtypes, e->out_dtypes)) {
        dx_buf_addf(w, "input dtypes %s but output dtypes %s", e->in_dtypes, e->out_dtypes);
        return DX_FR_DTYPE;
    }
    return 0;
}

/* A rule broken alike on every rank that has the entry (when ranks differ, compare_field says
 * so): reported once per group and kind, naming no rank. */
static void check_rules(an *a, const grp *g, long long seq, const dx_fr_entry *const *ents,
                        size_t nm, size_t gsize, unsigned *rule_reported)
{
    const dx_fr_entry *e = NULL;
    size_t have = 0;
    int kind = 0;
    dx_buf w = {0};
    for (size_t i = 0; i < nm; i++) {
        if (!ents[i])
            continue;
        dx_buf one = {0};
        int k = broken_rule(ents[i], gsize, &one);
        int same = !e || (!strcmp(ents[i]->op, e->op) && k == kind &&
                          !strcmp(one.p ? one.p : "", w.p ? w.p : ""));
        if (!e) {
            e = ents[i];
            kind = k;
            w = one;
        } else
            dx_buf_fini(&one);
        if (!same || !kind) {
            kind = 0;
            break;
        }
        have++;
    }
    if (kind && have >= 2 && !(*rule_reported & (1u << kind))) {
        *rule_reported |= 1u << kind;
        dx_buf m = {0};
        dx_buf_addf(&m, "at collective %lld of ", seq);
        add_pg(&m, g);
        dx_buf_addf(&m, " every rank records %s with %s, which the collective does not allow",
                    e->op, w.p ? w.p : "");
        add_finding(a, kind, -1, g, seq, e->op, &m);
        if (!a->oom)
            a->f[a->n - 1].rule = 1;
        dx_buf_fini(&m);
    }
    dx_buf_fini(&w);
}

/* Entry position idx at seq is absent on some members that went past seq. */
static void compare_presence(an *a, const grp *g, mem *ms, size_t nm, long long seq, size_t idx,
                             const dx_fr_entry *const *ents, size_t maxc, int *others)
{
    size_t np = 0, na = 0;
    const char *op = NULL;
    for (size_t i = 0; i < nm; i++) {
        if (ents[i]) {
            np++;
            op = op ? op : ents[i]->op;
        } else if (ms[i].data && ms[i].nent && !ms[i].active_only && ms[i].enq >= seq)
            na++;
    }
    if (!na || !np || na > np)
        return; /* nobody lacks it, or the few that have it are the odd ones (compare_field) */
    size_t nhave = 0;
    for (size_t i = 0; i < nm; i++)
        if (ents[i])
            others[nhave++] = ms[i].rank;
    for (size_t i = 0; i < nm; i++) {
        if (ents[i] || !ms[i].data || !ms[i].nent || ms[i].active_only || ms[i].enq < seq ||
            (ms[i].reported & (1u << DX_FR_MISSING_RANK)))
            continue;
        ms[i].reported |= 1u << DX_FR_MISSING_RANK;
        dx_buf b = {0};
        dx_buf_addf(&b, "rank %d of ", ms[i].rank);
        add_pg(&b, g);
        dx_buf_addf(&b, " has no entry for %s (collective %lld, op %zu of %zu there) that rank%s ",
                    op, seq, idx + 1, maxc, nhave > 1 ? "s" : "");
        add_ranks(&b, others, nhave);
        dx_buf_addf(&b, " recorded: it never joined it");
        add_finding(a, DX_FR_MISSING_RANK, ms[i].rank, g, seq, op, &b);
        dx_buf_fini(&b);
    }
}

static void compare_states(an *a, const grp *g, mem *ms, size_t nm, long long seq,
                           const dx_fr_entry *const *ents, const size_t *count, long long *st,
                           int *ranks)
{
    const char *op = NULL;
    size_t known = 0;
    for (size_t i = 0; i < nm; i++) {
        st[i] = ents[i]                       ? ents[i]->state
                : count[i] == 0 && ms[i].data ? status_state(&ms[i], seq)
                                              : DX_FR_UNKNOWN;
        if (ents[i] && !op)
            op = ents[i]->op;
        if (st[i] == DX_FR_UNKNOWN)
            st[i] = -1;
        else
            known++;
    }
    long long mode = modal_int(st, nm), top = -1;
    for (size_t i = 0; i < nm; i++)
        top = st[i] > top ? st[i] : top;
    int tie = mode < 0;
    if (tie)
        mode = top; /* no majority: the ranks that got furthest, when few lag (below) */
    if (mode < DX_FR_STARTED)
        return;
    size_t nsame = 0, nlow = 0;
    for (size_t i = 0; i < nm; i++) {
        if (st[i] == mode)
            ranks[nsame++] = ms[i].rank;
        nlow += st[i] >= 0 && st[i] < mode;
    }
    if (tie && 2 * nlow > known)
        return;
    for (size_t i = 0; i < nm; i++) {
        if (st[i] < 0 || st[i] >= mode || (ms[i].reported & (1u << DX_FR_STATE)))
            continue;
        ms[i].reported |= 1u << DX_FR_STATE;
        dx_buf b = {0};
        dx_buf_addf(&b, "rank %d has collective %lld of ", ms[i].rank, seq);
        add_pg(&b, g);
        dx_buf_addf(&b, " (%s) %s while rank%s ", op ? op : "?", state_name((int)st[i]),
                    nsame > 1 ? "s" : "");
        add_ranks(&b, ranks, nsame);
        dx_buf_addf(&b, " %s it", mode == DX_FR_COMPLETED ? "completed" : "started");
        add_finding(a, DX_FR_STATE, ms[i].rank, g, seq, op, &b);
        dx_buf_fini(&b);
    }
}

/* The op some member recorded at seq, for messages. */
static const char *op_at(const mem *ms, size_t nm, long long seq)
{
    for (size_t i = 0; i < nm; i++)
        for (size_t j = 0; j < ms[i].nent; j++)
            if (ms[i].ent[j]->coll_seq == seq && ms[i].ent[j]->op[0])
                return ms[i].ent[j]->op;
    return "?";
}

/* Member i, whose last enqueued collective is enq, never enqueued the next one that the n ranks
 * ahead reached (and wait in). */
static void report_behind(an *a, const grp *g, const mem *ms, size_t nm, size_t i, long long enq,
                          const int *ahead, size_t n, int wait)
{
    const char *op = op_at(ms, nm, enq + 1);
    dx_buf b = {0};
    dx_buf_addf(&b, "rank %d of ", ms[i].rank);
    add_pg(&b, g);
    dx_buf_addf(&b, " never enqueued collective %lld (%s) that rank%s ", enq + 1, op,
                n > 1 ? "s" : "");
    add_ranks(&b, ahead, n);
    dx_buf_addf(&b, " reached%s; its last enqueued collective is %lld",
                !wait   ? ""
                : n > 1 ? " and wait in"
                        : " and waits in",
                enq);
    add_finding(a, DX_FR_MISSING_RANK, ms[i].rank, g, enq + 1, op, &b);
    dx_buf_fini(&b);
}

/* How far each member got, against the majority; with no majority, the ranks behind are named
 * when every rank ahead waits in the collective they never reached. */
static void compare_progress(an *a, const grp *g, mem *ms, size_t nm, long long *le, int *ranks)
{
    size_t k = 0;
    long long mx = -1;
    for (size_t i = 0; i < nm; i++) {
        le[i] = ms[i].data ? ms[i].enq : -1;
        if (le[i] > mx)
            mx = le[i];
        if (le[i] >= 0)
            k++;
    }
    if (k < 2)
        return;
    long long mode = modal_int(le, nm);
    if (mode < 0) {
        size_t nf = 0, nb = 0, waiting = 0;
        long long lo = mx;
        for (size_t i = 0; i < nm; i++) {
            if (le[i] == mx) {
                ranks[nf++] = ms[i].rank;
                waiting += ms[i].pend >= 0 && ms[i].pend <= mx;
            } else if (le[i] >= 0 && le[i] < lo)
                lo = le[i];
        }
        if (waiting == nf) { /* the front waits: the others never came */
            for (size_t i = 0; i < nm; i++)
                if (le[i] >= 0 && le[i] < mx)
                    report_behind(a, g, ms, nm, i, le[i], ranks, nf, 1);
            return;
        }
        dx_buf b = {0};
        dx_buf_addf(&b, "ranks ");
        add_ranks(&b, ranks, nf);
        dx_buf_addf(&b, " of ");
        add_pg(&b, g);
        dx_buf_addf(&b, " reached collective %lld (%s) but ranks ", mx, op_at(ms, nm, mx));
        for (size_t i = 0; i < nm; i++)
            if (le[i] >= 0 && le[i] < mx)
                ranks[nb++] = ms[i].rank;
        add_ranks(&b, ranks, nb);
        dx_buf_addf(&b, " did not, and no majority says which side is behind");
        add_finding(a, DX_FR_MISSING_RANK, -1, g, lo + 1, op_at(ms, nm, lo + 1), &b);
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
        report_behind(a, g, ms, nm, i, le[i], ranks, nsame, 0);
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
        dx_buf_addf(&b, " of ");
        add_pg(&b, g);
        dx_buf_addf(&b, " enqueued collective %lld (%s); the majority stopped at %lld", mode + 1,
                    op_at(ms, nm, mode + 1), mode);
        add_finding(a, DX_FR_MISSING_RANK, ahead, g, mode + 1, op_at(ms, nm, mode + 1), &b);
        dx_buf_fini(&b);
    }
}

/* A member whose dump keeps only unfinished work and has nothing of the group in flight, while
 * others wait in one of its collectives: it never entered that collective. */
static void compare_idle(an *a, const grp *g, mem *ms, size_t nm, int *ranks)
{
    long long s = -1;
    size_t nw = 0;
    for (size_t i = 0; i < nm; i++)
        if (ms[i].data && ms[i].pend >= 0 && (s < 0 || ms[i].pend < s))
            s = ms[i].pend;
    if (s < 0)
        return;
    for (size_t i = 0; i < nm; i++)
        if (ms[i].data && ms[i].pend == s)
            ranks[nw++] = ms[i].rank;
    for (size_t i = 0; i < nm; i++) {
        mem *m = &ms[i];
        if (!m->data || !m->active_only || m->nent || m->enq >= 0 ||
            (m->reported & (1u << DX_FR_MISSING_RANK)))
            continue;
        m->reported |= 1u << DX_FR_MISSING_RANK;
        dx_buf b = {0};
        dx_buf_addf(&b, "rank %d has nothing of ", m->rank);
        add_pg(&b, g);
        dx_buf_addf(&b, " in flight while rank%s ", nw > 1 ? "s" : "");
        add_ranks(&b, ranks, nw);
        dx_buf_addf(&b, " wait%s in collective %lld (%s): it never entered it", nw > 1 ? "" : "s",
                    s, op_at(ms, nm, s));
        add_finding(a, DX_FR_MISSING_RANK, m->rank, g, s, op_at(ms, nm, s), &b);
        dx_buf_fini(&b);
    }
}

#define MAX_SEQ_SPAN 200000
#define MAX_PER_SEQ 64

/* Sequence by sequence, position by position: who lacks an entry, and whose operation, sizes,
 * dtypes or state differ from the others'. */
static void compare_entries(an *a, const grp *g, mem *ms, size_t nm, size_t gsize,
                            const char **vals, long long *tmp, int *ranks, int *others,
                            const dx_fr_entry **ents, size_t *first, size_t *count)
{
    long long lo = -1, hi = -1;
    for (size_t i = 0; i < nm; i++) {
        if (!ms[i].nent)
            continue;
        long long f = ms[i].ent[0]->coll_seq, l = ms[i].ent[ms[i].nent - 1]->coll_seq;
        if (!ms[i].active_only && (lo < 0 || f > lo))
            lo = f; /* the window every full buffer still holds */
        if (l > hi)
            hi = l;
    }
    if (lo < 0)
        for (size_t i = 0; i < nm; i++)
            if (ms[i].nent && (lo < 0 || ms[i].ent[0]->coll_seq < lo))
                lo = ms[i].ent[0]->coll_seq;
    if (hi < 0)
        return;
    if (hi - lo > MAX_SEQ_SPAN)
        lo = hi - MAX_SEQ_SPAN;
    unsigned tie = 0, rule = 0;
    for (long long s = lo; s <= hi && !a->oom; s++) {
        size_t maxc = 0;
        for (size_t i = 0; i < nm; i++) {
            ents_at(&ms[i], s, &first[i], &count[i]);
            if (count[i] > maxc)
                maxc = count[i];
        }
        if (maxc > MAX_PER_SEQ)
            maxc = MAX_PER_SEQ;
        for (size_t idx = 0; idx < maxc; idx++) {
            for (size_t i = 0; i < nm; i++)
                ents[i] = idx < count[i] ? ms[i].ent[first[i] + idx] : NULL;
            compare_presence(a, g, ms, nm, s, idx, ents, maxc, others);
            for (int f = 0; f < 5; f++)
                compare_field(a, g, ms, nm, s, ents, f, vals, ranks, &tie);
            check_rules(a, g, s, ents, nm, gsize, &rule);
            compare_states(a, g, ms, nm, s, ents, count, tmp, ranks);
        }
        if (maxc == 0) { /* no entry anywhere: pg_status alone may still tell states apart */
            for (size_t i = 0; i < nm; i++)
                ents[i] = NULL;
            compare_states(a, g, ms, nm, s, ents, count, tmp, ranks);
        }
    }
}

/* ---- the job's dumps: placement, groups, the comparison, the culprits ---- */

typedef struct placed {
    int rank;
    size_t idx; /* into dumps */
} placed;

static int cmp_placed(const void *x, const void *y)
{
    const placed *a = x, *b = y;
    return (a->rank > b->rank) - (a->rank < b->rank);
}

typedef struct job {
    const dx_frdump *dumps;
    size_t n;
    placed *pl; /* the dumps that count, by rank */
    size_t npl;
    uint32_t **gof; /* [dump][pg] its group, UINT32_MAX none */
    grp *g;
    size_t ng, capg;
    gview *gv;   /* [group] the members as compared */
    int *nodata; /* [rank] 1: a member without a readable dump already reported */
    size_t nnodata;
} job;

static const dx_frdump *dump_of(const job *j, int rank)
{
    placed key = {rank, 0};
    const placed *p = bsearch(&key, j->pl, j->npl, sizeof *j->pl, cmp_placed);
    return p ? &j->dumps[p->idx] : NULL;
}

static void warn(dx_fr_verdict *v, const char *fmt, ...) DX_PRINTF(2, 3);
static void warn(dx_fr_verdict *v, const char *fmt, ...)
{
    if (v->nwarn >= DX_ARRAY_LEN(v->warn))
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(v->warn[v->nwarn++], sizeof v->warn[0], fmt, ap);
    va_end(ap);
}

/* Which dumps count and for which rank: a dump needs a rank, the first of two dumps of one rank
 * wins, and an empty file counts only when a dump of the job shares its name's prefix. */
static int place(job *j, dx_fr_verdict *v)
{
    j->pl = dx_calloc(j->n ? j->n : 1, sizeof *j->pl);
    if (!j->pl)
        return DDX_ENOMEM;
    for (size_t i = 0; i < j->n; i++) {
        const dx_frdump *d = &j->dumps[i];
        if (d->other[0])
            continue; /* something else found beside the dumps */
        if (d->status == DX_FR_EMPTY) {
            int kin = 0;
            for (size_t k = 0; k < j->n && !kin; k++)
                kin = j->dumps[k].status != DX_FR_EMPTY && !j->dumps[k].other[0] &&
                      !strcmp(j->dumps[k].prefix, d->prefix) && d->prefix[0];
            if (!kin || d->rank < 0)
                continue;
        }
        if (d->rank < 0) {
            v->nunplaced++;
            warn(v,
                 "%s: a flight-recorder dump that names no rank (no 'rank' field, no rank number "
                 "at the end of its name); left out of the comparison",
                 d->name);
            continue;
        }
        size_t dup = 0;
        while (dup < j->npl && j->pl[dup].rank != d->rank)
            dup++;
        if (dup < j->npl) {
            v->nduplicate++;
            warn(v, "%s and %s both hold rank %d's flight-recorder dump; the first is compared",
                 j->dumps[j->pl[dup].idx].name, d->name, d->rank);
            continue;
        }
        j->pl[j->npl].rank = d->rank;
        j->pl[j->npl++].idx = i;
        v->ndumps++;
        v->nread += d->status == DX_FR_READ;
        v->nempty += d->status == DX_FR_EMPTY;
        v->nrefused += d->status == DX_FR_REFUSED;
    }
    if (j->npl > 1)
        qsort(j->pl, j->npl, sizeof *j->pl, cmp_placed);
    return DDX_OK;
}

static int same_ranks(const int *a, size_t na, const int *b, size_t nb)
{
    return na == nb && (!na || !memcmp(a, b, na * sizeof *a));
}

/* The job's groups: one per (name, member ranks); a group no dump gives ranks for joins the one
 * group of its name that has them. */
static int build_groups(job *j)
{
    j->gof = dx_calloc(j->n ? j->n : 1, sizeof *j->gof);
    if (!j->gof)
        return DDX_ENOMEM;
    for (size_t p = 0; p < j->npl; p++) {
        const dx_frdump *d = &j->dumps[j->pl[p].idx];
        if (d->status != DX_FR_READ || !d->npgs)
            continue;
        uint32_t *gof = j->gof[j->pl[p].idx] = dx_malloc(d->npgs * sizeof *gof);
        if (!gof)
            return DDX_ENOMEM;
        for (size_t k = 0; k < d->npgs; k++) {
            const dx_fr_pg *pg = &d->pgs[k];
            size_t gi = 0;
            while (gi < j->ng &&
                   (strcmp(j->g[gi].name, pg->name) ||
                    !same_ranks(j->g[gi].ranks, j->g[gi].nranks, pg->ranks, pg->nranks)))
                gi++;
            if (gi == j->ng) {
                if (j->ng >= DX_FR_MAX_PGS) {
                    gof[k] = UINT32_MAX;
                    continue;
                }
                if (dx_grow((void **)&j->g, &j->capg, j->ng + 1, sizeof *j->g))
                    return DDX_ENOMEM;
                j->g[j->ng++] = (grp){pg->name, pg->desc, pg->ranks, pg->nranks};
            }
            if (!j->g[gi].desc[0])
                j->g[gi].desc = pg->desc;
            gof[k] = (uint32_t)gi;
        }
    }
    /* a rankless group joins the one group of its name with ranks */
    for (size_t gi = 0; gi < j->ng; gi++) {
        if (j->g[gi].ranks)
            continue;
        size_t to = j->ng, nwith = 0;
        for (size_t k = 0; k < j->ng; k++)
            if (j->g[k].ranks && !strcmp(j->g[k].name, j->g[gi].name)) {
                to = k;
                nwith++;
            }
        if (nwith != 1)
            continue;
        for (size_t p = 0; p < j->npl; p++) {
            const dx_frdump *d = &j->dumps[j->pl[p].idx];
            uint32_t *gof = j->gof[j->pl[p].idx];
            for (size_t k = 0; gof && k < d->npgs; k++)
                if (gof[k] == gi)
                    gof[k] = (uint32_t)to;
        }
        j->g[gi].name = ""; /* emptied */
    }
    return DDX_OK;
}

/* The dump's record of group gi, or NULL. */
static const dx_fr_pg *pg_of(const job *j, const dx_frdump *d, size_t gi, size_t *k)
{
    const uint32_t *gof = j->gof[d - j->dumps];
    for (size_t i = 0; gof && i < d->npgs; i++)
        if (gof[i] == gi) {
            *k = i;
            return &d->pgs[i];
        }
    return NULL;
}

/* Reports, once per rank, a member that has no readable dump. */
static void report_nodata(an *a, job *j, const grp *g, int rank, const dx_frdump *d)
{
    if (rank < 0 || (size_t)rank >= j->nnodata || j->nodata[rank])
        return;
    j->nodata[rank] = 1;
    dx_buf b = {0};
    int kind = DX_FR_MISSING_RANK;
    if (!d) {
        dx_buf_addf(&b, "no dump for rank %d, which ", rank);
        add_pg(&b, g);
        dx_buf_addf(&b, " lists among its ranks");
    } else {
        kind = DX_FR_EMPTY_DUMP;
        dx_buf_addf(&b, "rank %d %s (%s)", rank,
                    d->status == DX_FR_EMPTY ? "wrote an empty dump"
                                             : "left a dump that cannot be read",
                    d->name);
    }
    add_finding(a, kind, rank, g, -1, NULL, &b);
    dx_buf_fini(&b);
}

static void analyze_group(an *a, job *j, size_t gi)
{
    const grp *g = &j->g[gi];
    size_t nm = 0, cap = g->ranks ? g->nranks : j->npl;
    mem *ms = dx_calloc(cap ? cap : 1, sizeof *ms);
    const char **vals = dx_calloc(cap ? cap : 1, sizeof *vals);
    long long *tmp = dx_calloc(cap ? cap : 1, sizeof *tmp);
    int *ranks = dx_calloc(cap ? cap : 1, sizeof *ranks);
    int *others = dx_calloc(cap ? cap : 1, sizeof *others);
    const dx_fr_entry **ents = dx_calloc(cap ? cap : 1, sizeof *ents);
    size_t *first = dx_calloc(cap ? cap : 1, sizeof *first);
    size_t *count = dx_calloc(cap ? cap : 1, sizeof *count);
    if (!ms || !vals || !tmp || !ranks || !others || !ents || !first || !count) {
        a->oom = 1;
        goto done;
    }
    if (g->ranks)
        for (size_t i = 0; i < g->nranks; i++)
            ms[nm++].rank = g->ranks[i];
    else
        for (size_t p = 0; p < j->npl; p++) {
            size_t k;
            const dx_frdump *d = &j->dumps[j->pl[p].idx];
            if (d->status == DX_FR_READ && pg_of(j, d, gi, &k))
                ms[nm++].rank = j->pl[p].rank;
        }
    for (size_t i = 0; i < nm; i++) {
        mem *m = &ms[i];
        m->enq = m->pend = -1;
        m->d = dump_of(j, m->rank);
        if (!m->d || m->d->status != DX_FR_READ)
            continue;
        m->data = 1;
        m->active_only = !m->d->completed_entries;
        size_t pgk = 0;
        m->pg = pg_of(j, m->d, gi, &pgk);
        size_t k = 0;
        for (size_t e = 0; m->pg && e < m->d->nentries; e++) {
            const dx_fr_entry *x = &m->d->entries[e];
            k += x->pg == pgk && !x->is_p2p && x->coll_seq >= 0;
        }
        m->ent = k ? dx_calloc(k, sizeof *m->ent) : NULL;
        if (k && !m->ent) {
            a->oom = 1;
            goto done;
        }
        for (size_t e = 0; m->pg && e < m->d->nentries; e++) {
            const dx_fr_entry *x = &m->d->entries[e];
            if (x->pg == pgk && !x->is_p2p && x->coll_seq >= 0)
                m->ent[m->nent++] = x;
        }
        if (m->nent > 1)
            qsort(m->ent, m->nent, sizeof *m->ent, cmp_ent);
        if (m->pg && m->pg->has_status && m->pg->last_enqueued >= 0)
            m->enq = m->pg->last_enqueued;
        if (m->nent && m->ent[m->nent - 1]->coll_seq > m->enq)
            m->enq = m->ent[m->nent - 1]->coll_seq;
        for (size_t e = 0; e < m->nent && m->pend < 0; e++)
            if (m->ent[e]->state != DX_FR_COMPLETED)
                m->pend = m->ent[e]->coll_seq;
    }
    /* members without a readable dump: an empty or unreadable file always counts; a dump that
     * is not there only when the group has dumps to compare (one dump alone misses no one) */
    size_t ndata = 0;
    for (size_t i = 0; i < nm; i++)
        ndata += ms[i].data;
    for (size_t i = 0; i < nm; i++)
        if (!ms[i].data && (ms[i].d || ndata >= 2))
            report_nodata(a, j, g, ms[i].rank, ms[i].d);
    compare_progress(a, g, ms, nm, tmp, ranks);
    compare_idle(a, g, ms, nm, ranks);
    compare_entries(a, g, ms, nm, g->ranks ? g->nranks : nm, vals, tmp, ranks, others, ents, first,
                    count);
    /* what the culprits need of this group */
    view *v = dx_calloc(nm ? nm : 1, sizeof *v);
    if (!v) {
        a->oom = 1;
        goto done;
    }
    for (size_t i = 0; i < nm; i++)
        v[i] = (view){
            ms[i].rank,        ms[i].enq,
            ms[i].pend,        ms[i].data,
            ms[i].active_only, ms[i].data && ms[i].active_only && !ms[i].nent && ms[i].enq < 0};
    j->gv[gi] = (gview){v, nm};
done:
    if (ms)
        for (size_t i = 0; i < nm; i++)
            dx_free((void *)ms[i].ent);
    dx_free(ms);
    dx_free(vals);
    dx_free(tmp);
    dx_free(ranks);
    dx_free(others);
    dx_free((void *)ents);
    dx_free(first);
    dx_free(count);
}

/* ---- the culprits ---- */

typedef struct rset {
    int *r;
    size_t n, cap;
} rset;

static int rset_has(const rset *s, int r)
{
    for (size_t i = 0; i < s->n; i++)
        if (s->r[i] == r)
            return 1;
    return 0;
}

static void rset_add(rset *s, int r, int *oom)
{
    if (r < 0 || rset_has(s, r))
        return;
    if (dx_grow((void **)&s->r, &s->cap, s->n + 1, sizeof *s->r)) {
        *oom = 1;
        return;
    }
    s->r[s->n++] = r;
}

/* The members of a group that keep a rank waiting at seq: those readable and behind (never
 * enqueued it, or with nothing in flight in a dump of unfinished work), else, when none is,
 * those without a readable dump. Counted only when they are at most half the group. */
static void blockers(const gview *gv, size_t w, rset *out, int *oom)
{
    long long s = gv->v[w].pend;
    size_t nr = 0, nd = 0;
    for (size_t i = 0; i < gv->n; i++) {
        const view *m = &gv->v[i];
        if (i == w)
            continue;
        if (m->data && ((m->enq >= 0 && m->enq < s) || m->idle))
            nr++;
        else if (!m->data)
            nd++;
    }
    size_t nb = nr ? nr : nd;
    if (!nb || 2 * nb > gv->n)
        return;
    for (size_t i = 0; i < gv->n; i++) {
        const view *m = &gv->v[i];
        if (i != w && (nr ? m->data && ((m->enq >= 0 && m->enq < s) || m->idle) : !m->data))
            rset_add(out, m->rank, oom);
    }
}

/* The culprits: the ranks named out of step (or keeping others waiting) that do not themselves
 * wait for another rank. */
static void culprits(an *a, job *j, dx_fr_verdict *v)
{
    rset named = {0}, blocking = {0}, victims = {0}, roots = {0};
    int oom = 0, tie = 0;
    for (size_t i = 0; i < a->n; i++) {
        const dx_fr_finding *f = &a->f[i];
        if (f->rank >= 0 && f->kind != DX_FR_EMPTY_DUMP && f->seq >= 0)
            rset_add(&named, f->rank, &oom);
        tie |= f->rank < 0 && !f->rule;
    }
    for (size_t gi = 0; gi < j->ng; gi++) {
        const gview *gv = &j->gv[gi];
        for (size_t w = 0; w < gv->n; w++) {
            if (!gv->v[w].data || gv->v[w].pend < 0)
                continue;
            size_t before = blocking.n;
            rset b = {0};
            blockers(gv, w, &b, &oom);
            for (size_t k = 0; k < b.n; k++)
                rset_add(&blocking, b.r[k], &oom);
            if (b.n)
                rset_add(&victims, gv->v[w].rank, &oom);
            dx_free(b.r);
            (void)before;
        }
    }
    for (size_t i = 0; i < named.n; i++)
        if (!rset_has(&victims, named.r[i]))
            rset_add(&roots, named.r[i], &oom);
    for (size_t i = 0; i < blocking.n; i++)
        if (!rset_has(&victims, blocking.r[i]))
            rset_add(&roots, blocking.r[i], &oom);
    if (!roots.n)
        for (size_t i = 0; i < named.n; i++)
            rset_add(&roots, named.r[i], &oom);
    if (roots.n > 1)
        qsort(roots.r, roots.n, sizeof *roots.r, cmp_int);
    for (size_t i = 0; i < roots.n && v->nculprits < DX_FR_MAX_CULPRITS; i++)
        v->culprits[v->nculprits++] = roots.r[i];
    for (size_t i = 0; i < a->n; i++)
        a->f[i].root = a->f[i].rank >= 0 && rset_has(&roots, a->f[i].rank);
    /* decisive: a minority the readable dumps agree on, not a tie */
    v->decisive = roots.n && v->ncompared >= 2 && 2 * roots.n <= v->ndumps && !tie;
    if (oom)
        a->oom = 1;
    dx_free(named.r);
    dx_free(blocking.r);
    dx_free(victims.r);
    dx_free(roots.r);
}

/* Root findings first (the dumps' own reasons for their culprits), then the rest by sequence
 * (findings without one last), kind, group and rank. */
static int cmp_finding(const void *x, const void *y)
{
    const dx_fr_finding *a = x, *b = y;
    if (a->root != b->root)
        return b->root - a->root;
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

/* Where the first culprit stands, as the report's headline says it. */
static void describe_where(const dx_fr_finding *f, char *out, size_t cap)
{
    char pg[120];
    if (f->desc[0] && strcmp(f->desc, "undefined"))
        snprintf(pg, sizeof pg, "process group %.40s (%.40s)", f->pg, f->desc);
    else
        snprintf(pg, sizeof pg, "process group %.60s", f->pg);
    const char *op = f->op[0] ? f->op : "a collective";
    switch (f->kind) {
    case DX_FR_MISSING_RANK:
        if (f->seq < 0)
            snprintf(out, cap, "left no flight-recorder dump while its peers in %.100s wait", pg);
        else
            snprintf(out, cap, "never joined collective %lld (%.47s) of %.100s", f->seq, op, pg);
        break;
    case DX_FR_STATE:
        snprintf(out, cap, "did not finish collective %lld (%.47s) of %.100s", f->seq, op, pg);
        break;
    case DX_FR_EMPTY_DUMP:
        snprintf(out, cap, "left no readable flight-recorder dump while its peers in %.100s wait",
                 pg);
        break;
    default:
        snprintf(out, cap, "issued %.47s at collective %lld of %.100s, unlike its peers", op,
                 f->seq, pg);
        break;
    }
}

size_t dx_frdump_analyze(const dx_frdump *dumps, size_t n, dx_fr_finding *out, size_t max,
                         dx_fr_verdict *vout)
{
    an a = {0};
    job j = {0};
    dx_fr_verdict vv;
    dx_fr_verdict *v = vout ? vout : &vv;
    memset(v, 0, sizeof *v);
    j.dumps = dumps;
    j.n = n;
    if (place(&j, v) || build_groups(&j)) {
        a.oom = 1;
        goto done;
    }
    int maxrank = -1;
    for (size_t p = 0; p < j.npl; p++)
        maxrank = j.pl[p].rank > maxrank ? j.pl[p].rank : maxrank;
    for (size_t gi = 0; gi < j.ng; gi++)
        for (size_t r = 0; r < j.g[gi].nranks; r++)
            maxrank = j.g[gi].ranks[r] > maxrank ? j.g[gi].ranks[r] : maxrank;
    j.nnodata = maxrank >= 0 ? (size_t)maxrank + 1 : 0;
    j.nodata = dx_calloc(j.nnodata ? j.nnodata : 1, sizeof *j.nodata);
    j.gv = dx_calloc(j.ng ? j.ng : 1, sizeof *j.gv);
    if (!j.nodata || !j.gv) {
        a.oom = 1;
        goto done;
    }
    for (size_t gi = 0; gi < j.ng && !a.oom; gi++)
        if (j.g[gi].name[0])
            analyze_group(&a, &j, gi);
    /* readable dumps compared with another rank's in some group */
    for (size_t p = 0; p < j.npl; p++) {
        int compared = 0;
        for (size_t gi = 0; gi < j.ng && !compared; gi++) {
            size_t nd = 0, self = 0;
            for (size_t i = 0; i < j.gv[gi].n; i++) {
                nd += j.gv[gi].v[i].data;
                self |= j.gv[gi].v[i].data && j.gv[gi].v[i].rank == j.pl[p].rank;
            }
            compared = self && nd >= 2;
        }
        v->ncompared += compared;
    }
    for (size_t gi = 0; gi < j.ng; gi++)
        v->ngroups += j.g[gi].name[0] != 0;
    if (!a.oom)
        culprits(&a, &j, v);
    if (a.n > 1)
        qsort(a.f, a.n, sizeof *a.f, cmp_finding);
    if (a.n && a.f[0].root) {
        v->kind = a.f[0].kind;
        describe_where(&a.f[0], v->where, sizeof v->where);
    }
done:;
    size_t w = a.n < max ? a.n : max;
    if (w)
        memcpy(out, a.f, w * sizeof *out);
    dx_free(a.f);
    for (size_t i = 0; j.gof && i < j.n; i++)
        dx_free(j.gof[i]);
    dx_free(j.gof);
    for (size_t gi = 0; j.gv && gi < j.ng; gi++)
        dx_free(j.gv[gi].v);
    dx_free(j.gv);
    dx_free(j.g);
    dx_free(j.pl);
    dx_free(j.nodata);
    return w;
}

size_t dx_frdump_work(const dx_frdump *dumps, size_t n,
                      void (*add)(void *ctx, int rank, double seconds), void *ctx)
{
    size_t given = 0;
    for (size_t i = 0; i < n; i++) {
        const dx_frdump *d = &dumps[i];
        if (d->rank < 0 || d->status != DX_FR_READ)
            continue;
        for (size_t k = 1; k < d->nentries; k++) {
            const dx_fr_entry *a = &d->entries[k - 1], *b = &d->entries[k];
            if (a->is_p2p || b->is_p2p || a->state != DX_FR_COMPLETED ||
                b->state != DX_FR_COMPLETED || a->duration_ms < 0 || a->created_ms < 0 ||
                b->created_ms < 0 || a->coll_seq < 0 || b->coll_seq != a->coll_seq + 1 ||
                a->pg != b->pg)
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
