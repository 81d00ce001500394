/* gen.c -- the knowledge-base generator: validates references/ and writes it as C.
 *
 * Usage: ddx-gen REFERENCES_DIR OUTPUT.c
 *
 * Runs every lint rule (dx_lint_dir: fields, both pattern engines, examples ranking their
 * reference first) and fails the build on any problem. Then writes the references as static
 * const C data with the serialised Vectorscan database over every signal, so `ddx` starts
 * without parsing YAML or compiling patterns. The output is written to a temporary file and
 * renamed, so a failed run never leaves a half-written table behind.
 */
#include "kb.h"
#include "lint.h"
#include "match.h"

static FILE *out;      /* where the arrays a reference points to go */
static FILE *refs_out; /* where the initialisers of refs[] go */
static unsigned counter;

/* Writes s as a C string literal, escaping everything that is not plain printable ASCII. */
static void cstr(const char *s)
{
    if (!s) {
        fputs("NULL", out);
        return;
    }
    fputc('"', out);
    size_t col = 0;
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (col > 100 && *p != '\n') {
            fputs("\"\n    \"", out);
            col = 0;
        }
        if (*p == '"' || *p == '\\')
            fprintf(out, "\\%c", *p);
        else if (*p == '\n') {
            fputs("\\n\"\n    \"", out);
            col = 0;
            continue;
        } else if (*p < 0x20 || *p >= 0x7f || *p == '?')
            fprintf(out, "\\%03o", *p);
        else
            fputc(*p, out);
        col++;
    }
    fputc('"', out);
}

/* Emits an array of strings and returns its number (-1 when empty: write NULL). */
static long strlist(const char *const *v, size_t n)
{
    if (!n)
        return -1;
    unsigned id = counter++;
    fprintf(out, "static const char *const s%u[] = {\n", id);
    for (size_t i = 0; i < n; i++) {
        fputs("    ", out);
        cstr(v[i]);
        fputs(",\n", out);
    }
    fputs("};\n", out);
    return id;
}

static void ref_strs(long id, const char *prefix)
{
    if (id < 0)
        fputs("NULL", out);
    else
        fprintf(out, "%s%ld", prefix, id);
}

static void cond(const dx_cond *c)
{
    fputs("{", out);
    cstr(c->fact);
    fprintf(out, ", %d, ", c->op);
    cstr(c->value);
    fprintf(out, ", %.17g, ", c->weight);
    cstr(c->says);
    fprintf(out, ", %d, %d", c->raise_only, c->root);
    fputs("}", out);
}

static void emit_ref(const dx_ref *r, unsigned idx)
{
    long fw = strlist(r->frameworks, r->nframeworks);
    long src = strlist(r->sources, r->nsources);
    long fix = strlist(r->fix, r->nfix);
    long *vsig = calloc(r->nvariants + 1, sizeof(long));
    long *vfix = calloc(r->nvariants + 1, sizeof(long));
    for (size_t i = 0; i < r->nvariants; i++) {
        vsig[i] = strlist(r->variants[i].signals, r->variants[i].nsignals);
        vfix[i] = strlist(r->variants[i].fix, r->variants[i].nfix);
    }
    if (r->nsignals) {
        fprintf(out, "static const dx_signal sig%u[] = {\n", idx);
        for (size_t i = 0; i < r->nsignals; i++) {
            const dx_signal *s = &r->signals[i];
            fputs("    {", out);
            cstr(s->id);
            fprintf(out, ", %d, %.17g, ", s->role, s->weight);
            cstr(s->pattern);
            fputs(", ", out);
            cstr(s->source);
            fprintf(out, ", %d},\n", s->caseless);
        }
        fputs("};\n", out);
    }
    if (r->conds) {
        fprintf(out, "static const dx_sigcond sc%u[] = {\n", idx);
        for (size_t i = 0; i < r->nsignals; i++) {
            const dx_sigcond *c = &r->conds[i];
            fprintf(out, "    {%d, ", c->at_end);
            const char *v[] = {c->after,  c->not_followed_by, c->repeats,  c->missing,
                               c->out_of, c->differs,         c->not_after};
            for (size_t k = 0; k < DX_ARRAY_LEN(v); k++) {
                cstr(v[k]);
                fputs(k + 1 < DX_ARRAY_LEN(v) ? ", " : "},\n", out);
            }
        }
        fputs("};\n", out);
    }
    if (r->ncontext) {
        fprintf(out, "static const dx_cond ctx%u[] = {\n", idx);
        for (size_t i = 0; i < r->ncontext; i++) {
            fputs("    ", out);
            cond(&r->context[i]);
            fputs(",\n", out);
        }
        fputs("};\n", out);
    }
    if (r->nchecks) {
        fprintf(out, "static const dx_check chk%u[] = {\n", idx);
        for (size_t i = 0; i < r->nchecks; i++) {
            fputs("    {", out);
            cstr(r->checks[i].says);
            fputs(", ", out);
            cstr(r->checks[i].command);
            fputs(", ", out);
            cond(&r->checks[i].cond);
            fputs("},\n", out);
        }
        fputs("};\n", out);
    }
    if (r->nvariants) {
        fprintf(out, "static const dx_variant var%u[] = {\n", idx);
        for (size_t i = 0; i < r->nvariants; i++) {
            fputs("    {", out);
            cstr(r->variants[i].id);
            fputs(", ", out);
            cstr(r->variants[i].title);
            fputs(", ", out);
            ref_strs(vsig[i], "s");
            fprintf(out, ", %zu, ", r->variants[i].nsignals);
            ref_strs(vfix[i], "s");
            fprintf(out, ", %zu},\n", r->variants[i].nfix);
        }
        fputs("};\n", out);
    }
    if (r->nneighbours) {
        fprintf(out, "static const dx_neighbour nb%u[] = {\n", idx);
        for (size_t i = 0; i < r->nneighbours; i++) {
            fputs("    {", out);
            cstr(r->neighbours[i].id);
            fputs(", ", out);
            cstr(r->neighbours[i].tell);
            fputs("},\n", out);
        }
        fputs("};\n", out);
    }
    if (r->nexamples) {
        fprintf(out, "static const dx_example ex%u[] = {\n", idx);
        for (size_t i = 0; i < r->nexamples; i++) {
            fputs("    {", out);
            cstr(r->examples[i].path);
            fputs(", ", out);
            cstr(r->examples[i].source);
            fprintf(out, ", %d},\n", r->examples[i].constructed);
        }
        fputs("};\n", out);
    }
    fprintf(out, "static const char body%u[] = ", idx);
    cstr(r->body);
    fputs(";\n\n", out);
    free(vsig);
    free(vfix);
    /* the dx_ref initialiser itself goes to refs[], collected in a second stream */
    FILE *aux = out;
    out = refs_out;
    fputs("    {", out);
    cstr(r->id);
    fputs(", ", out);
    cstr(r->title);
    fputs(", ", out);
    cstr(r->category);
    fputs(", ", out);
    cstr(r->kind);
    fputs(", ", out);
    cstr(r->summary);
    fputs(", ", out);
    cstr(r->file);
    fprintf(out, ", %.17g, ", r->prior);
    ref_strs(fw, "s");
    fprintf(out, ", %zu, ", r->nframeworks);
    if (r->nsignals)
        fprintf(out, "sig%u, %zu, ", idx, r->nsignals);
    else
        fputs("NULL, 0, ", out);
    if (r->conds)
        fprintf(out, "sc%u, ", idx);
    else
        fputs("NULL, ", out);
    if (r->ncontext)
        fprintf(out, "ctx%u, %zu, ", idx, r->ncontext);
    else
        fputs("NULL, 0, ", out);
    if (r->nchecks)
        fprintf(out, "chk%u, %zu, ", idx, r->nchecks);
    else
        fputs("NULL, 0, ", out);
    if (r->nvariants)
        fprintf(out, "var%u, %zu, ", idx, r->nvariants);
    else
        fputs("NULL, 0, ", out);
    if (r->nneighbours)
        fprintf(out, "nb%u, %zu, ", idx, r->nneighbours);
    else
        fputs("NULL, 0, ", out);
    ref_strs(src, "s");
    fprintf(out, ", %zu, ", r->nsources);
    if (r->nexamples)
        fprintf(out, "ex%u, %zu, ", idx, r->nexamples);
    else
        fputs("NULL, 0, ", out);
    ref_strs(fix, "s");
    fprintf(out, ", %zu, body%u, %d},\n", r->nfix, idx, r->culprit_other);
    out = aux;
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: ddx-gen REFERENCES_DIR OUTPUT.c\n");
        return 2;
    }
    dx_buf problems = {0};
    dx_lint_stats stats;
    dx_matcher_portable(1); /* the embedded database must run on any x86-64 */
    ddx_error err = {0};
    ddx_kb *kb = NULL;
    int rc = dx_lint_dir(argv[1], 0, &kb, &problems, &stats, &err);
    const char *draft = getenv("DDX_GEN_DRAFT");
    if (rc == DDX_EFORMAT && draft && *draft && kb) {
        /* drafting references: report the problems but still write the table */
        fputs(problems.p ? problems.p : "", stderr);
        rc = DDX_OK;
    }
    if (rc) {
        if (problems.n)
            fputs(problems.p, stderr);
        fprintf(stderr, "ddx-gen: %s\n", err.message);
        dx_buf_fini(&problems);
        ddx_kb_close(kb);
        return 1;
    }
    dx_buf_fini(&problems);
    char *db = NULL;
    size_t dblen = 0;
    if (dx_matcher_image(kb->m, &db, &dblen, &err)) {
        fprintf(stderr, "ddx-gen: %s\n", err.message);
        ddx_kb_close(kb);
        return 1;
    }
    dx_buf tmp = {0};
    dx_buf_addf(&tmp, "%s.tmp", argv[2]);
    out = fopen(tmp.p, "w");
    if (!out) {
        fprintf(stderr, "ddx-gen: cannot write %s\n", tmp.p);
        return 1;
    }
    fputs("/* kb_data.c -- generated by ddx-gen from references/: do not edit. */\n"
          "#include \"kb.h\"\n\n",
          out);
    char *refs_text = NULL;
    size_t refs_len = 0;
    refs_out = open_memstream(&refs_text, &refs_len);
    if (!refs_out) {
        fprintf(stderr, "ddx-gen: out of memory\n");
        return 1;
    }
    for (size_t i = 0; i < kb->nrefs; i++)
        emit_ref(kb->refs[i], (unsigned)i);
    fclose(refs_out);
    fputs("static const dx_ref refs[] = {\n", out);
    fwrite(refs_text, 1, refs_len, out);
    if (!kb->nrefs)
        fputs("    {0},\n", out);
    fputs("};\n\n", out);
    free(refs_text);
    fprintf(out, "static const unsigned char hsdb[%zu] __attribute__((aligned(64))) = {",
            dblen ? dblen : 1);
    for (size_t i = 0; i < dblen; i++)
        fprintf(out, "%s%u,", i % 24 ? "" : "\n    ", (unsigned char)db[i]);
    if (!dblen)
        fputs("0", out);
    fputs("\n};\n\n", out);
    fprintf(out,
            "const dx_builtin *dx_builtin_get(void)\n{\n"
            "    static const dx_builtin b = {refs, %zu, %s, %zu};\n    return &b;\n}\n",
            kb->nrefs, dblen ? "hsdb" : "NULL", dblen);
    if (fclose(out) != 0 || rename(tmp.p, argv[2]) != 0) {
        fprintf(stderr, "ddx-gen: cannot write %s\n", argv[2]);
        return 1;
    }
    fprintf(stderr,
            "ddx-gen: %zu references, %zu examples rank first, %zu-byte pattern "
            "database\n",
            stats.refs, stats.examples, dblen);
    dx_buf_fini(&tmp);
    free(db);
    ddx_kb_close(kb);
    return 0;
}
