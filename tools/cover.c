/* cover.c -- ddx-cover: which signals of the built-in references read each message a framework's
 * source can print.
 *
 * Usage: ddx-cover match FILE.tsv     one line per matched row: "ROW<TAB>ref/signal,..." (a
 *                                     signal of role against or marker, or one that counts
 *                                     only at a log's end, names no cause and claims no row)
 *        ddx-cover check DIR          the coverage tests over every .tsv in DIR (exit 1 on a failure)
 *
 * The data files (data/source-strings/<framework>.tsv, written by tools/source_strings.py) hold
 * one message template a row, with placeholders `{name}` or `{name:T}` (T: d integer, x hex, f
 * float, p pointer) for what the framework computes. Each template is filled with several sets
 * of sample values (values guessed from the placeholder's name, then every placeholder 0, x and
 * empty), split into lines, and matched, with the source line a traceback prints for the raise,
 * by the same two-stage engine `ddx diagnose` uses (Vectorscan candidates, PCRE2 confirmation).
 *
 * `check` asserts two things, with no source tree at hand:
 *  - every row whose disposition claims signals ("ref:<id>/<signal>,...") is matched by each of
 *    them;
 *  - every signal whose `source` names a path (with a '/') that is a scanned file of a data set
 *    matches at least one row of that file, within the release range written after the path
 *    ("path [framework first..last]") when there is one.
 */
#include "facts.h"
#include "kb.h"
#include "lint.h"
#include "match.h"

#include <dirent.h>
#include <fnmatch.h>

/* ==== the data ============================================================================= */

typedef struct row {
    char *file, *first, *last, *kind, *tpl, *line, *disp;
    const char *framework; /* the data file's name without .tsv (owned by the set) */
    unsigned char *hit;    /* [nsig] 1 when the signal matched this row */
} row;

/* A line of <framework>.samples: in files matching glob, a placeholder whose lower-cased name
 * contains key (or is key after a leading '=') takes the values in turn (fill k takes value k
 * modulo their number). */
typedef struct altsample {
    char *glob, *key;
    char **values;
    size_t nvalues;
} altsample;

typedef struct rowset {
    row *rows;
    size_t n, cap;
    char **frameworks;
    size_t nfw, capfw;
    altsample *samples; /* of every framework, each line's glob names that framework's files */
    size_t nsamples, capsamples;
} rowset;

static char *unescape(const char *s, size_t n)
{
    char *out = dx_malloc(n + 1), *o = out;
    if (!out)
        return NULL;
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '\\' && i + 1 < n) {
            static const char from[] = "tnr\\", to[] = "\t\n\r\\";
            const char *k = strchr(from, s[i + 1]);
            if (k) {
                *o++ = to[k - from];
                i++;
                continue;
            }
        }
        *o++ = s[i];
    }
    *o = '\0';
    return out;
}

static char *read_all(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    dx_buf b = {0};
    char tmp[65536];
    size_t k;
    while ((k = fread(tmp, 1, sizeof tmp, f)) > 0)
        if (dx_buf_add(&b, tmp, k)) {
            dx_buf_fini(&b);
            fclose(f);
            return NULL;
        }
    fclose(f);
    if (!b.n && dx_buf_addc(&b, '\0') == 0)
        b.n = 0;
    return b.p;
}

/* The columns this program reads, in the order of the row struct's text fields. */
static const char *const columns[] = {"file",     "first", "last",       "kind",
                                      "template", "line",  "disposition"};

static int load_tsv(rowset *set, const char *path, const char *framework)
{
    char *text = read_all(path);
    if (!text) {
        fprintf(stderr, "ddx-cover: cannot read %s\n", path);
        return -1;
    }
    char *fw = dx_strdup(framework);
    if (!fw || dx_grow((void **)&set->frameworks, &set->capfw, set->nfw + 1, sizeof(char *))) {
        dx_free(fw);
        dx_free(text);
        return -1;
    }
    set->frameworks[set->nfw++] = fw;
    int col[DX_ARRAY_LEN(columns)];
    int have_header = 0, rc = 0;
    size_t lineno = 0;
    for (char *p = text; *p && !rc;) {
        char *nl = strchr(p, '\n');
        size_t len = nl ? (size_t)(nl - p) : strlen(p);
        lineno++;
        char *next = nl ? nl + 1 : p + len;
        if (len == 0 || p[0] == '#') {
            p = next;
            continue;
        }
        const char *cell[16];
        size_t cell_len[16], ncell = 0;
        for (const char *c = p; ncell < 16;) {
            const char *tab = memchr(c, '\t', (size_t)(p + len - c));
            cell[ncell] = c;
            cell_len[ncell++] = tab ? (size_t)(tab - c) : (size_t)(p + len - c);
            if (!tab)
                break;
            c = tab + 1;
        }
        if (!have_header) {
            for (size_t k = 0; k < DX_ARRAY_LEN(columns); k++) {
                col[k] = -1;
                for (size_t c = 0; c < ncell; c++)
                    if (cell_len[c] == strlen(columns[k]) &&
                        !memcmp(cell[c], columns[k], cell_len[c]))
                        col[k] = (int)c;
                if (col[k] < 0) {
                    fprintf(stderr, "ddx-cover: %s: no column '%s'\n", path, columns[k]);
                    rc = -1;
                }
            }
            have_header = 1;
            p = next;
            continue;
        }
        if (dx_grow((void **)&set->rows, &set->cap, set->n + 1, sizeof(row))) {
            rc = -1;
            break;
        }
        row *r = &set->rows[set->n];
        memset(r, 0, sizeof *r);
        char **field[] = {&r->file, &r->first, &r->last, &r->kind, &r->tpl, &r->line, &r->disp};
        for (size_t k = 0; k < DX_ARRAY_LEN(columns); k++) {
            size_t c = (size_t)col[k];
            *field[k] = c < ncell ? unescape(cell[c], cell_len[c]) : dx_strdup("");
            if (!*field[k])
                rc = -1;
        }
        r->framework = fw;
        set->n++;
        if (rc)
            fprintf(stderr, "ddx-cover: %s:%zu: out of memory\n", path, lineno);
        p = next;
    }
    dx_free(text);
    return rc;
}

/* Reads <framework>.samples (optional): glob, key, then one value a cell. */
static int load_samples(rowset *set, const char *path)
{
    char *text = read_all(path);
    if (!text)
        return 0; /* no samples for this framework */
    int rc = 0;
    for (char *p = text; *p && !rc;) {
        char *nl = strchr(p, '\n');
        size_t len = nl ? (size_t)(nl - p) : strlen(p);
        char *next = nl ? nl + 1 : p + len;
        if (len == 0 || p[0] == '#') {
            p = next;
            continue;
        }
        if (dx_grow((void **)&set->samples, &set->capsamples, set->nsamples + 1,
                    sizeof(altsample))) {
            rc = -1;
            break;
        }
        altsample *a = &set->samples[set->nsamples];
        memset(a, 0, sizeof *a);
        size_t ncell = 0, cap = 0;
        char **cells = NULL;
        for (const char *c = p;;) {
            const char *tab = memchr(c, '\t', (size_t)(p + len - c));
            size_t n = tab ? (size_t)(tab - c) : (size_t)(p + len - c);
            if (dx_grow((void **)&cells, &cap, ncell + 1, sizeof *cells) ||
                !(cells[ncell] = unescape(c, n))) {
                rc = -1;
                break;
            }
            ncell++;
            if (!tab)
                break;
            c = tab + 1;
        }
        if (!rc && ncell < 3) {
            fprintf(stderr, "ddx-cover: %s: a line needs a glob, a key and a value: %.*s\n", path,
                    (int)len, p);
            rc = -1;
        }
        if (rc) {
            for (size_t i = 0; i < ncell; i++)
                dx_free(cells[i]);
            dx_free(cells);
            break;
        }
        for (char *k = cells[1]; *k; k++)
            if (*k >= 'A' && *k <= 'Z')
                *k = (char)(*k - 'A' + 'a');
        a->glob = cells[0];
        a->key = cells[1];
        a->values = cells + 2;
        a->nvalues = ncell - 2;
        set->nsamples++;
        p = next;
    }
    dx_free(text);
    return rc;
}

static void rowset_fini(rowset *set)
{
    for (size_t i = 0; i < set->nsamples; i++) {
        altsample *a = &set->samples[i];
        for (size_t k = 0; k < a->nvalues; k++)
            dx_free(a->values[k]);
        dx_free(a->glob);
        dx_free(a->key);
        dx_free(a->values - 2); /* the cells array the line was read into */
    }
    dx_free(set->samples);
    for (size_t i = 0; i < set->n; i++) {
        row *r = &set->rows[i];
        char *f[] = {r->file, r->first, r->last, r->kind, r->tpl, r->line, r->disp};
        for (size_t k = 0; k < DX_ARRAY_LEN(f); k++)
            dx_free(f[k]);
        dx_free(r->hit);
    }
    for (size_t i = 0; i < set->nfw; i++)
        dx_free(set->frameworks[i]);
    dx_free(set->frameworks);
    dx_free(set->rows);
}

/* ==== filling a template =================================================================== */

/* A placeholder's sample value from its name, for the first filling. The first row whose key
 * the lower-cased name contains gives the value. */
typedef struct sample {
    const char *key;
    const char *value;
} sample;

static const sample samples[] = {
    {"logprefix", "[PG ID 0 PG GUID 0(default_pg) Rank 1] "},
    {"__file__", NULL}, /* the row's own file, as a build prints it */
    {"__line__", "123"},
    {"work", "WorkNCCL(SeqNum=12, OpType=ALLREDUCE, NumelIn=1048576, NumelOut=1048576, "
             "Timeout(ms)=600000)"},
    {"optype", "ALLREDUCE"},
    {"opname", "ALLREDUCE"},
    {"timeout", "600000"},
    {"rank", "1"},
    {"world", "4"},
    {"seq", "12"},
    {"port", "29500"},
    {"pid", "4242"},
    {"sizes", "[2, 3]"},
    {"strides", "[3, 1]"},
    {"shape", "torch.Size([2, 3])"},
    {"dtype", "torch.float32"},
    {"device", "cuda:0"},
    {"path", "/tmp/ckpt/model.pt"},
    {"file", "/tmp/ckpt/model.pt"},
    {"dir", "/tmp/ckpt"},
    {"host", "node-1"},
    {"addr", "10.0.0.1"},
    {"err", "unhandled system error"},
    {"what", "unhandled system error"},
    {"reason", "unhandled system error"},
    {"msg", "unhandled system error"},
    {"size", "2"},
    {"numel", "2"},
    {"count", "2"},
    {"num", "2"},
    {"len", "2"},
    {"idx", "2"},
    {"index", "2"},
    {"id", "2"},
    {"name", "model.layers.0.weight"},
    {"fqn", "model.layers.0.weight"},
    {"key", "model.layers.0.weight"},
};

/* The fillings after the guessed ones give every placeholder the same text. */
static const char *const fill_all[] = {"0", "x", ""};
#define MAX_ALT 16 /* at most this many guessed fillings a row */

/* The framework's alternatives for a placeholder (name: its text between the braces, without
 * the conversion), or NULL. */
static const altsample *alternatives(const rowset *set, const char *name, size_t n,
                                     const char *file)
{
    char low[128];
    size_t k = n < sizeof low - 1 ? n : sizeof low - 1;
    for (size_t i = 0; i < k; i++)
        low[i] = (char)((name[i] >= 'A' && name[i] <= 'Z') ? name[i] - 'A' + 'a' : name[i]);
    low[k] = '\0';
    for (size_t i = 0; i < set->nsamples; i++) {
        const char *key = set->samples[i].key;
        int hit = key[0] == '=' ? !strcmp(low, key + 1) : strstr(low, key) != NULL;
        if (hit && !fnmatch(set->samples[i].glob, file, 0))
            return &set->samples[i];
    }
    return NULL;
}

/* A placeholder's value in guessed filling alt: the framework's alternatives when it has them,
 * else the conversion's or the generic table's. */
static const char *guess(const rowset *set, const char *name, size_t n, const char *file,
                         size_t alt, dx_buf *tmp)
{
    const char *colon = memchr(name, ':', n);
    char conv = '\0';
    if (colon && colon + 2 == name + n) {
        conv = colon[1];
        n = (size_t)(colon - name);
    }
    const altsample *a = alternatives(set, name, n, file);
    if (a)
        return a->values[alt % a->nvalues];
    switch (conv) {
    case 'd':
        return "3";
    case 'x':
        return "0x1f";
    case 'f':
        return "1.5";
    case 'p':
        return "0x55d0c0ffee00";
    default:
        break;
    }
    char low[64];
    size_t k = n < sizeof low - 1 ? n : sizeof low - 1;
    for (size_t i = 0; i < k; i++)
        low[i] = (char)((name[i] >= 'A' && name[i] <= 'Z') ? name[i] - 'A' + 'a' : name[i]);
    low[k] = '\0';
    for (size_t i = 0; i < DX_ARRAY_LEN(samples); i++) {
        if (!strstr(low, samples[i].key))
            continue;
        if (samples[i].value)
            return samples[i].value;
        tmp->n = 0;
        dx_buf_addf(tmp, "../%s", file);
        return dx_buf_cstr(tmp);
    }
    return "x";
}

/* How many guessed fillings the template needs: the most alternatives of its placeholders. */
static size_t nalt(const rowset *set, const char *tpl, const char *file)
{
    size_t most = 1;
    for (const char *p = tpl; *p; p++) {
        if ((p[0] == '{' && p[1] == '{') || (p[0] == '}' && p[1] == '}')) {
            p++;
            continue;
        }
        const char *end = p[0] == '{' ? strchr(p, '}') : NULL;
        if (!end)
            continue;
        const char *colon = memchr(p, ':', (size_t)(end - p));
        const altsample *a =
            alternatives(set, p + 1, (size_t)((colon ? colon : end) - p - 1), file);
        if (a && a->nvalues > most)
            most = a->nvalues;
        p = end;
    }
    return most < MAX_ALT ? most : MAX_ALT;
}

/* Appends the template filled with guessed filling alt (uniform: NULL) or with the text uniform
 * everywhere; literal {{ and }} become single braces. */
static int fill(const rowset *set, dx_buf *out, const char *tpl, size_t alt, const char *uniform,
                const char *file)
{
    dx_buf tmp = {0};
    int rc = 0;
    for (const char *p = tpl; *p && !rc;) {
        if ((p[0] == '{' && p[1] == '{') || (p[0] == '}' && p[1] == '}')) {
            rc = dx_buf_addc(out, p[0]);
            p += 2;
            continue;
        }
        const char *end = p[0] == '{' ? strchr(p, '}') : NULL;
        if (!end) {
            rc = dx_buf_addc(out, *p++);
            continue;
        }
        const char *v =
            uniform ? uniform : guess(set, p + 1, (size_t)(end - p - 1), file, alt, &tmp);
        rc = dx_buf_add(out, v, strlen(v));
        p = end + 1;
    }
    dx_buf_fini(&tmp);
    return rc;
}

/* ==== printed forms ======================================================================== */

/* A log message as its logger prints it: the prefixes the frameworks' loggers put before the
 * message, for a row of a given kind and file type. %L is the level letter, %W the level word,
 * %M the Python module, %F the file, %B its base name. */
typedef struct form {
    const char *kind_prefix; /* rows whose kind starts with this */
    const char *ext;         /* and whose file ends with this */
    const char *prefix;
} form;

static const form forms[] = {
    {"log-", ".py", "%W:%M:"},                               /* logging's default format */
    {"log-", ".py", "%M: [%W] "},                            /* torchelastic's own format */
    {"log-", ".py", "%L1204 10:00:00.123000 4242 %F:123] "}, /* torch's own handler, 2.4+ */
    {"log-", ".py", "[default0]:%L1204 10:00:00.123000 4242 %F:123] "},
    {"log-", ".py", "2021-10-29 13:32:44,123\t%W %B:123 -- "}, /* Ray's logging format */
    {"log-", ".cpp", "[%L1204 10:00:00.123456789 %B:123] "},   /* glog as c10 prints it */
    {"log-", ".cpp", "[rank1]:[%L1204 10:00:00.123456789 %B:123] "},
    {"log-", ".cpp", "[%L %B:123] "}, /* before 2.4 */
    {"log-", ".hpp", "[%L1204 10:00:00.123456789 %B:123] "},
    {"log-", ".h", "[%L1204 10:00:00.123456789 %B:123] "},
    {"warn", ".py", "%F:123: UserWarning: "},
    {"warn", ".cpp", "[W1204 10:00:00.123456789 %B:123] Warning: "}, /* TORCH_WARN */
    {"warn", ".hpp", "[W1204 10:00:00.123456789 %B:123] Warning: "},
    {"warn", ".h", "[W1204 10:00:00.123456789 %B:123] Warning: "},
    {"str", "socket.cpp", "[c10d] "}, /* a message the c10d socket code logs with C10D_* */
    /* NCCL's debug output (src/debug.cc): host:pid:tid [cudaDev], the file for a warning */
    {"nccl-info", "", "node-1:4242:4300 [0] NCCL INFO "},
    {"nccl-warn", "", "node-1:4242:4300 [0] %B:123 NCCL WARN "},
    /* a C++ error as Python raises it: c10::Error and the c10d errors' Python classes */
    {"check", "", "RuntimeError: "},
    {"check", "", "torch.distributed.DistBackendError: "},
    {"throw", "", "RuntimeError: "},
    {"throw", "", "torch.distributed.DistBackendError: "},
    {"throw", "", "torch.distributed.DistNetworkError: "},
    {"throw", "", "torch.distributed.DistStoreError: "},
    {"internal-assert", "", "RuntimeError: "},
};

static int ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && !strcmp(s + n - k, suffix);
}

/* Appends form f's prefix for row r. */
static int add_prefix(dx_buf *out, const form *f, const row *r)
{
    static const struct {
        const char *kind, *letter, *word;
    } levels[] = {{"log-error", "E", "ERROR"},
                  {"log-warning", "W", "WARNING"},
                  {"log-info", "I", "INFO"},
                  {"log-debug", "I", "DEBUG"},
                  {"warn", "W", "WARNING"}};
    const char *letter = "I", *word = "INFO";
    for (size_t i = 0; i < DX_ARRAY_LEN(levels); i++)
        if (!strcmp(r->kind, levels[i].kind)) {
            letter = levels[i].letter;
            word = levels[i].word;
        }
    int rc = 0;
    for (const char *p = f->prefix; *p && !rc; p++) {
        if (p[0] != '%' || !p[1]) {
            rc = dx_buf_addc(out, *p);
            continue;
        }
        p++;
        const char *base = strrchr(r->file, '/');
        base = base ? base + 1 : r->file;
        if (*p == 'L')
            rc = dx_buf_add(out, letter, strlen(letter));
        else if (*p == 'W')
            rc = dx_buf_add(out, word, strlen(word));
        else if (*p == 'F')
            rc = dx_buf_add(out, r->file, strlen(r->file));
        else if (*p == 'B')
            rc = dx_buf_add(out, base, strlen(base));
        else if (*p == 'M') /* torch/distributed/run.py -> torch.distributed.run */
            for (const char *c = r->file; *c && !rc && strcmp(c, ".py"); c++)
                rc = dx_buf_addc(out, *c == '/' ? '.' : *c);
    }
    return rc;
}

/* ==== matching ============================================================================= */

/* The lines a row is matched as: every filling of its template, the guessed ones again in each
 * printed form its kind has, and its source line; one line each, '\n'-terminated. */
static int row_lines(const rowset *set, const row *r, dx_buf *out)
{
    int rc = 0;
    size_t na = nalt(set, r->tpl, r->file), nf = na + DX_ARRAY_LEN(fill_all);
    for (size_t f = 0; f < nf && !rc; f++) {
        rc = fill(set, out, r->tpl, f < na ? f : 0, f < na ? NULL : fill_all[f - na], r->file);
        if (!rc)
            rc = dx_buf_addc(out, '\n');
    }
    for (size_t k = 0; k < DX_ARRAY_LEN(forms) && !rc; k++) {
        if (strncmp(r->kind, forms[k].kind_prefix, strlen(forms[k].kind_prefix)) ||
            !ends_with(r->file, forms[k].ext))
            continue;
        for (size_t f = 0; f < na && !rc; f++) {
            rc = add_prefix(out, &forms[k], r);
            if (!rc)
                rc = fill(set, out, r->tpl, f, NULL, r->file);
            if (!rc)
                rc = dx_buf_addc(out, '\n');
        }
    }
    if (!rc && r->line[0]) {
        rc = dx_buf_add(out, r->line, strlen(r->line));
        if (!rc)
            rc = dx_buf_addc(out, '\n');
    }
    for (size_t k = 0; k < out->n; k++)
        if (out->p[k] == '\r')
            out->p[k] = '\n';
    return rc;
}

/* Vectorscan's faults can depend on where a match starts in the buffer (two near-identical
 * patterns once stopped proposing "[0] joined but didn't finish ..." past its 16th byte): every
 * signal a line matches is also checked behind prefixes as long as launchers and loggers write. */
static const char *const behind[] = {
    "[rank3]: ",
    "[rank12]:[E1205 12:00:00.123456789 ProcessGroupNCCL.cpp:1234] ",
};

static int check_behind(const ddx_kb *kb, dx_scan *scan, const row *r, const char *line, size_t len,
                        const uint32_t *sigs, size_t ns, dx_buf *faults)
{
    dx_buf b = {0};
    ddx_error err = {0};
    int rc = DDX_OK;
    for (size_t p = 0; p < DX_ARRAY_LEN(behind) && !rc; p++) {
        size_t plen = strlen(behind[p]);
        b.n = 0;
        if (dx_buf_add(&b, behind[p], plen) || dx_buf_add(&b, line, len) || dx_buf_addc(&b, '\n')) {
            rc = DDX_ENOMEM;
            break;
        }
        const dx_cand *cands;
        size_t ncands;
        if ((rc = dx_scan_chunk(scan, b.p, b.n, &cands, &ncands, &err)))
            break;
        unsigned char *seen = dx_calloc(kb->nsig ? kb->nsig : 1, 1);
        if (!seen) {
            rc = DDX_ENOMEM;
            break;
        }
        for (size_t c = 0; c < ncands; c++)
            seen[cands[c].sig] = 1;
        for (size_t k = 0; k < ns; k++)
            if (r->hit[sigs[k]] && !seen[sigs[k]] &&
                dx_scan_confirm_line(scan, sigs[k], b.p, b.n - 1, plen, len))
                dx_buf_addf(faults,
                            "%s: %s: signal '%s' matches with PCRE2 behind a %zu-byte prefix but "
                            "Vectorscan proposed no candidate (a Vectorscan fault; rewrite a "
                            "pattern of this database): %.*s\n",
                            r->framework, r->file, kb->sigs[sigs[k]]->id, plen, (int)len, line);
        dx_free(seen);
    }
    dx_buf_fini(&b);
    return rc;
}

/* Sets rows[i].hit for every row. Each line is scanned alone, as the only line of its chunk, so
 * what one message matches never depends on the messages next to it in the data. */
static int match_rows(const ddx_kb *kb, rowset *set, dx_buf *faults)
{
    dx_buf lines = {0};
    dx_scan *scan = NULL;
    ddx_error err = {0};
    int rc = dx_scan_new(&scan, kb->m, &err);
    for (size_t i = 0; i < set->n && !rc; i++) {
        row *r = &set->rows[i];
        r->hit = dx_calloc(kb->nsig ? kb->nsig : 1, 1);
        lines.n = 0;
        if (!r->hit || row_lines(set, r, &lines)) {
            rc = DDX_ENOMEM;
            break;
        }
        for (size_t off = 0; off < lines.n && !rc;) {
            const char *line = lines.p + off;
            size_t len = (size_t)((const char *)memchr(line, '\n', lines.n - off) - line);
            const dx_cand *cands;
            size_t ncands;
            rc = dx_scan_chunk(scan, line, len + 1, &cands, &ncands, &err);
            /* the confirmations reuse the scan's state, not its candidate array */
            uint32_t sigs[256];
            size_t ns = 0;
            for (size_t c = 0; !rc && c < ncands && ns < DX_ARRAY_LEN(sigs); c++)
                sigs[ns++] = cands[c].sig;
            for (size_t c = 0; c < ns; c++)
                if (DX_SIG_IS_REF(kb->sig_ref[sigs[c]]) &&
                    dx_scan_confirm(scan, sigs[c], line, len))
                    r->hit[sigs[c]] = 1;
            if (!rc && faults)
                rc = check_behind(kb, scan, r, line, len, sigs, ns, faults);
            off += len + 1;
        }
    }
    if (rc)
        fprintf(stderr, "ddx-cover: matching failed: %s\n", err.message[0] ? err.message : "");
    dx_scan_free(scan);
    dx_buf_fini(&lines);
    return rc;
}

/* "<ref id>/<signal id>" of signal s. */
static void sig_name(const ddx_kb *kb, uint32_t s, dx_buf *out)
{
    out->n = 0;
    dx_buf_addf(out, "%s/%s", kb->refs[kb->sig_ref[s]]->id, kb->sigs[s]->id);
}

/* Loads FILE.tsv and, when there is one, FILE.samples beside it. */
static int load_framework(rowset *set, const char *tsv, const char *framework)
{
    int rc = load_tsv(set, tsv, framework);
    size_t n = strlen(tsv);
    if (!rc && n > 4 && !strcmp(tsv + n - 4, ".tsv")) {
        dx_buf sp = {0};
        dx_buf_add(&sp, tsv, n - 4);
        dx_buf_addf(&sp, ".samples");
        rc = load_samples(set, dx_buf_cstr(&sp));
        dx_buf_fini(&sp);
    }
    return rc;
}

/* Whether a match of signal s claims a message: a signal that argues against its reference
 * (role against), only marks a place for another signal's condition (role marker), or counts
 * only as the last line of a log with no failure in it (at_end: where a stalled job stopped)
 * names no cause, so a message it matches is not read by that reference. */
static int claims(const ddx_kb *kb, uint32_t s)
{
    int role = kb->sigs[s]->role;
    const dx_ref *ref = kb->refs[kb->sig_ref[s]];
    if (ref->conds && ref->conds[kb->sig_idx[s]].at_end)
        return 0;
    return role != DX_ROLE_AGAINST && role != DX_ROLE_MARKER;
}

static int cmd_match(const ddx_kb *kb, const char *path)
{
    rowset set = {0};
    int rc = load_framework(&set, path, "data");
    if (!rc)
        rc = match_rows(kb, &set, NULL);
    dx_buf name = {0};
    for (size_t i = 0; i < set.n && !rc; i++) {
        int first = 1;
        for (uint32_t s = 0; s < kb->nsig; s++) {
            if (!set.rows[i].hit[s] || !claims(kb, s))
                continue;
            sig_name(kb, s, &name);
            if (first)
                printf("%zu\t%s", i, dx_buf_cstr(&name));
            else
                printf(",%s", dx_buf_cstr(&name));
            first = 0;
        }
        if (!first)
            putchar('\n');
    }
    dx_buf_fini(&name);
    rowset_fini(&set);
    return rc ? 2 : 0;
}

/* ==== check ================================================================================ */

static int is_path_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '.' || c == '/' || c == '-';
}

/* Whether file ends with the path token (a whole path component boundary). */
static int names_file(const char *file, const char *tok, size_t n)
{
    size_t fl = strlen(file);
    if (n > fl || memcmp(file + fl - n, tok, n))
        return 0;
    return n == fl || file[fl - n - 1] == '/';
}

/* Copies [p, p + n) into out (cap 64) when it fits; returns 0 when it does not. */
static int take(char *out, const char *p, size_t n)
{
    if (n == 0 || n >= 64)
        return 0;
    memcpy(out, p, n);
    out[n] = '\0';
    return 1;
}

/* Reads " [framework first..last]" at p (blanks first); leaves fw empty when p holds none. The
 * format is docs/reference-format.md's; lint checks it (dx_source_range). */
static void parse_range(const char *p, char *fw, char *lo, char *hi)
{
    while (*p == ' ')
        p++;
    const char *close = *p == '[' ? strchr(p, ']') : NULL;
    const char *sp = close ? memchr(p, ' ', (size_t)(close - p)) : NULL;
    const char *dots = sp ? strstr(sp, "..") : NULL;
    if (!dots || dots > close || !take(fw, p + 1, (size_t)(sp - p - 1)) ||
        !take(lo, sp + 1, (size_t)(dots - sp - 1)) ||
        !take(hi, dots + 2, (size_t)(close - dots - 2))) {
        fw[0] = '\0';
        return;
    }
}

/* Whether a signal says, in its source or its id, that it reads a traceback or stack frame, a
 * source line or a log prefix that a file produces rather than a message it prints
 * (docs/reference-format.md). */
static int reads_no_message(const dx_signal *sg)
{
    static const char *const words[] = {"frame", "source line", "stack", "prefix", "traceback"};
    for (size_t i = 0; i < DX_ARRAY_LEN(words); i++)
        if (strstr(sg->source, words[i]) || strstr(sg->id, words[i]))
            return 1;
    return ends_with(sg->id, "-line");
}

/* Whether a release the data of r's framework was scanned at lies in [lo, hi] and in r's own
 * range: the message was seen in a release the range names. */
static int scanned_in(const rowset *set, const row *r, const char *lo, const char *hi)
{
    for (size_t i = 0; i < set->n; i++) {
        const row *o = &set->rows[i];
        if (o->framework != r->framework)
            continue;
        const char *v[2] = {o->first, o->last};
        for (size_t k = 0; k < 2; k++)
            if (dx_version_cmp(v[k], lo) >= 0 && dx_version_cmp(v[k], hi) <= 0 &&
                dx_version_cmp(v[k], r->first) >= 0 && dx_version_cmp(v[k], r->last) <= 0)
                return 1;
    }
    return 0;
}

/* Checks one signal against the data files its source names: it must match at least one
 * message of one of them (within the release range written after a path, when there is one).
 * A signal whose source says it reads a frame, a source line or a prefix, and one whose ranges
 * hold none of the scanned releases, are counted and not checked. Appends problems. */
static void check_signal(const ddx_kb *kb, uint32_t s, const rowset *set, dx_buf *problems,
                         size_t *ntraced, size_t *nframes, size_t *nunscanned)
{
    const char *src = kb->sigs[s]->source;
    if (!src)
        return;
    int named = 0, in_range = 0, matched = 0;
    dx_buf files = {0};
    for (const char *p = src; *p;) {
        if (!is_path_char(*p) || (p > src && is_path_char(p[-1]))) {
            p++;
            continue;
        }
        const char *e = p;
        while (is_path_char(*e))
            e++;
        size_t n = (size_t)(e - p);
        while (n && (p[n - 1] == '.' || p[n - 1] == '/'))
            n--;
        /* an optional release range right after the path: " [framework first..last]" */
        char fw[64] = "", lo[64] = "", hi[64] = "";
        parse_range(e, fw, lo, hi);
        int this_named = 0;
        for (size_t i = 0; memchr(p, '/', n) && i < set->n; i++) {
            const row *r = &set->rows[i];
            if (!names_file(r->file, p, n) || (fw[0] && strcmp(fw, r->framework)))
                continue;
            this_named = named = 1;
            if (fw[0] && !scanned_in(set, r, lo, hi))
                continue;
            in_range = 1;
            matched |= r->hit[s];
        }
        if (this_named)
            dx_buf_addf(&files, "%s%.*s", files.n ? ", " : "", (int)n, p);
        p = e;
    }
    if (named && reads_no_message(kb->sigs[s]))
        (*nframes)++; /* it reads a frame, a source line or a prefix, not a message */
    else if (named && !in_range)
        (*nunscanned)++; /* none of the scanned releases is in its ranges */
    else if (named) {
        (*ntraced)++;
        if (!matched) {
            dx_buf name = {0};
            sig_name(kb, s, &name);
            dx_buf_addf(problems,
                        "%s: its source names %s but it matches none of the messages found "
                        "there\n",
                        dx_buf_cstr(&name), dx_buf_cstr(&files));
            dx_buf_fini(&name);
        }
    }
    dx_buf_fini(&files);
}

/* Checks the claims of one row: each "ref/signal" named must exist and match. */
static void check_claims(const ddx_kb *kb, const row *r, dx_buf *problems, size_t *nclaims)
{
    if (strncmp(r->disp, "ref:", 4))
        return;
    dx_buf name = {0};
    for (const char *c = r->disp + 4; *c;) {
        const char *end = strchr(c, ',');
        size_t n = end ? (size_t)(end - c) : strlen(c);
        int found = 0;
        for (uint32_t s = 0; s < kb->nsig && !found; s++) {
            if (!DX_SIG_IS_REF(kb->sig_ref[s]))
                continue;
            sig_name(kb, s, &name);
            if (name.n == n && !memcmp(name.p, c, n)) {
                found = 1;
                if (!r->hit[s])
                    dx_buf_addf(problems,
                                "%s: %s claims the message '%.120s' but no longer matches it\n",
                                r->file, dx_buf_cstr(&name), r->tpl);
            }
        }
        if (!found)
            dx_buf_addf(problems, "%s: the claim '%.*s' names no signal of the catalogue\n",
                        r->file, (int)n, c);
        (*nclaims)++;
        c += n + (end ? 1 : 0);
    }
    dx_buf_fini(&name);
}

static int cmd_check(const ddx_kb *kb, const char *dir)
{
    DIR *d = opendir(dir);
    if (!d) {
        fprintf(stderr, "ddx-cover: cannot open %s\n", dir);
        return 2;
    }
    rowset set = {0};
    int rc = 0;
    struct dirent *de;
    while (!rc && (de = readdir(d))) {
        size_t n = strlen(de->d_name);
        if (n < 5 || strcmp(de->d_name + n - 4, ".tsv"))
            continue;
        dx_buf path = {0}, fw = {0};
        dx_buf_addf(&path, "%s/%s", dir, de->d_name);
        dx_buf_add(&fw, de->d_name, n - 4);
        rc = load_framework(&set, dx_buf_cstr(&path), dx_buf_cstr(&fw));
        dx_buf_fini(&path);
        dx_buf_fini(&fw);
    }
    closedir(d);
    if (!rc && !set.n) {
        fprintf(stderr, "ddx-cover: no data rows in %s/*.tsv\n", dir);
        rc = 2;
    }
    dx_buf problems = {0};
    if (!rc)
        rc = match_rows(kb, &set, &problems);
    if (rc) {
        rowset_fini(&set);
        dx_buf_fini(&problems);
        return 2;
    }
    size_t nclaims = 0, ntraced = 0, nframes = 0, nunscanned = 0;
    for (size_t i = 0; i < set.n; i++)
        check_claims(kb, &set.rows[i], &problems, &nclaims);
    for (uint32_t s = 0; s < kb->nsig; s++)
        if (DX_SIG_IS_REF(kb->sig_ref[s]))
            check_signal(kb, s, &set, &problems, &ntraced, &nframes, &nunscanned);
    if (problems.n)
        fputs(dx_buf_cstr(&problems), stdout);
    printf("%zu messages, %zu claims checked; signal sources naming scanned files: %zu traced to "
           "a message, %zu reading frames or prefixes, %zu outside the releases scanned: %s\n",
           set.n, nclaims, ntraced, nframes, nunscanned, problems.n ? "FAILED" : "ok");
    int bad = problems.n != 0;
    dx_buf_fini(&problems);
    rowset_fini(&set);
    return bad;
}

int main(int argc, char **argv)
{
    if (argc != 3 || (strcmp(argv[1], "match") && strcmp(argv[1], "check"))) {
        fputs("usage: ddx-cover match FILE.tsv | ddx-cover check DIR\n", stderr);
        return 2;
    }
    ddx_kb *kb = NULL;
    ddx_error err = {0};
    if (ddx_kb_open(&kb, NULL, &err)) {
        fprintf(stderr, "ddx-cover: %s\n", err.message);
        return 2;
    }
    int rc = !strcmp(argv[1], "match") ? cmd_match(kb, argv[2]) : cmd_check(kb, argv[2]);
    ddx_kb_close(kb);
    return rc;
}
