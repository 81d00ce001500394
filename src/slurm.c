/* slurm.c -- reading what Slurm says about a job: scontrol's and sacct's records, host lists,
 * output file patterns of sbatch and srun, and the default task layout (see slurm.h).
 *
 * scontrol -o prints one record a line as "Key=Value" words; a value may hold '=' (TRES=cpu=3)
 * and spaces (JobName=my job), so a word without a key continues the value before it. Keys are
 * taken from a table (one row per field, its offset in dx_slurm_rec); others are ignored.
 */
#include "slurm.h"

#include <ctype.h>

#include "diag.h"

/* ==== host lists ============================================================================= */

/* Expands one item ("rack[1-2]-n[01-03]") at p[0..n) after prefix; appends to out. */
static long expand_item(const char *p, size_t n, dx_buf *prefix, dx_buf *out, size_t max,
                        long count)
{
    const char *open = memchr(p, '[', n);
    if (!open) {
        if ((size_t)count >= max)
            return count;
        size_t base = prefix->n;
        dx_buf_add(prefix, p, n);
        dx_buf_addf(out, "%s%.*s", out->n ? "," : "", (int)prefix->n, prefix->p);
        prefix->n = base;
        return count + 1;
    }
    const char *close = memchr(open, ']', n - (size_t)(open - p));
    if (!close)
        return -1;
    size_t base = prefix->n;
    dx_buf_add(prefix, p, (size_t)(open - p));
    const char *q = open + 1;
    while (q < close) {
        const char *comma = memchr(q, ',', (size_t)(close - q));
        const char *end = comma ? comma : close;
        const char *dash = memchr(q, '-', (size_t)(end - q));
        const char *hi_s = dash ? dash + 1 : q;
        size_t lo_len = (size_t)((dash ? dash : end) - q);
        if (!lo_len || lo_len > 9 || (dash && (end - hi_s < 1 || end - hi_s > 9)))
            return -1;
        long lo = 0, hi = 0;
        for (const char *c = q; c < q + lo_len; c++) {
            if (!isdigit((unsigned char)*c))
                return -1;
            lo = lo * 10 + (*c - '0');
        }
        hi = lo;
        if (dash) {
            hi = 0;
            for (const char *c = hi_s; c < end; c++) {
                if (!isdigit((unsigned char)*c))
                    return -1;
                hi = hi * 10 + (*c - '0');
            }
        }
        if (hi < lo)
            return -1;
        for (long v = lo; v <= hi && (size_t)count < max; v++) {
            size_t b2 = prefix->n;
            dx_buf_addf(prefix, "%0*ld", (int)lo_len, v);
            count = expand_item(close + 1, n - (size_t)(close + 1 - p), prefix, out, max, count);
            prefix->n = b2;
            if (count < 0)
                return -1;
        }
        q = end + 1;
    }
    prefix->n = base;
    return count;
}

long dx_hostlist_expand(const char *expr, dx_buf *out, size_t max)
{
    dx_buf prefix = {0};
    long count = 0;
    const char *p = expr;
    while (*p && count >= 0) {
        /* an item ends at a comma outside brackets */
        const char *e = p;
        int depth = 0;
        while (*e && (depth || *e != ',')) {
            depth += *e == '[' ? 1 : *e == ']' ? -1 : 0;
            e++;
        }
        while (p < e && isspace((unsigned char)*p))
            p++;
        size_t n = (size_t)(e - p);
        while (n && isspace((unsigned char)p[n - 1]))
            n--;
        if (n)
            count = expand_item(p, n, &prefix, out, max, count);
        p = *e ? e + 1 : e;
    }
    dx_buf_fini(&prefix);
    if (count >= 0)
        dx_buf_cstr(out);
    return count;
}

/* ==== scontrol records ======================================================================= */

#define FIELD(name, member)                                                                        \
    {                                                                                              \
        name, offsetof(dx_slurm_rec, member)                                                       \
    }
static const struct {
    const char *key;
    size_t off;
} fields[] = {
    FIELD("JobId", job_id),
    FIELD("ArrayJobId", array_job_id),
    FIELD("ArrayTaskId", array_task_id),
    FIELD("HetJobId", het_job_id),
    FIELD("HetJobOffset", het_offset),
    FIELD("JobName", name),
    FIELD("UserId", user),
    FIELD("Partition", partition),
    FIELD("JobState", state),
    FIELD("Reason", reason),
    FIELD("ExitCode", exit_code),
    FIELD("DerivedExitCode", derived_ec),
    FIELD("StartTime", start),
    FIELD("EndTime", end),
    FIELD("NodeList", node_list),
    FIELD("NumNodes", num_nodes),
    FIELD("NumTasks", num_tasks),
    FIELD("CPUs/Task", cpus_per_task),
    FIELD("NtasksPerN:B:S:C", tasks_per_node),
    FIELD("WorkDir", work_dir),
    FIELD("StdOut", std_out),
    FIELD("StdErr", std_err),
    FIELD("ClusterName", cluster),
};

/* The length of the key of a "Key=value" word at p[0..n), or 0 when the word has none. */
static size_t key_len(const char *p, size_t n)
{
    if (!n || !isalpha((unsigned char)p[0]))
        return 0;
    for (size_t i = 1; i < n; i++) {
        if (p[i] == '=')
            return i;
        if (!isalnum((unsigned char)p[i]) && p[i] != '_' && p[i] != ':' && p[i] != '/')
            return 0;
    }
    return 0;
}

static void set_field(dx_slurm_rec *r, const char *key, size_t klen, dx_str v)
{
    if (klen == 5 && !memcmp(key, "Nodes", 5)) {
        if (r->ndet < DX_ARRAY_LEN(r->det_nodes))
            r->det_nodes[r->ndet++] = v;
        return;
    }
    if (klen == 7 && !memcmp(key, "CPU_IDs", 7)) {
        if (r->ndet)
            r->det_cpus[r->ndet - 1] = v;
        return;
    }
    for (size_t i = 0; i < DX_ARRAY_LEN(fields); i++)
        if (strlen(fields[i].key) == klen && !memcmp(fields[i].key, key, klen)) {
            dx_str *dst = (dx_str *)((char *)r + fields[i].off);
            if (!dst->n)
                *dst = v;
        }
}

/* "(null)", "N/A", "Unknown" and "None" are Slurm's ways of saying there is no value. */
static dx_str value_of(const char *p, size_t n)
{
    static const char *const none[] = {"(null)", "N/A", "Unknown", "None"};
    for (size_t i = 0; i < DX_ARRAY_LEN(none); i++)
        if (strlen(none[i]) == n && !memcmp(p, none[i], n))
            return (dx_str){"", 0};
    return (dx_str){p, n};
}

/* A user as scontrol prints it: "alice(1000)". */
static dx_str user_name(dx_str v)
{
    const char *paren = v.n ? memchr(v.p, '(', v.n) : NULL;
    return paren ? (dx_str){v.p, (size_t)(paren - v.p)} : v;
}

/* The next blank-separated word of [*p, le): *w and its length; *p moves past it. */
static size_t next_word(const char **p, const char *le, const char **w)
{
    while (*p < le && isspace((unsigned char)**p))
        (*p)++;
    *w = *p;
    while (*p < le && !isspace((unsigned char)**p))
        (*p)++;
    return (size_t)(*p - *w);
}

/* Reads one line of scontrol -o into r. */
static void scontrol_line(dx_slurm_rec *r, const char *line, const char *le)
{
    const char *key = NULL, *val = NULL, *vend = NULL;
    size_t klen = 0;
    const char *w;
    for (const char *p = line; next_word(&p, le, &w);) {
        size_t kl = key_len(w, (size_t)(p - w));
        if (kl) {
            if (key)
                set_field(r, key, klen, value_of(val, (size_t)(vend - val)));
            key = w;
            klen = kl;
            val = w + kl + 1;
            vend = p;
        } else if (key) {
            vend = p; /* a word without a key continues the value */
        }
    }
    if (key) /* the line's last field */
        set_field(r, key, klen, value_of(val, (size_t)(vend - val)));
    r->uid = -1;
    if (r->user.n) {
        const char *paren = memchr(r->user.p, '(', r->user.n);
        if (paren)
            r->uid = strtol(paren + 1, NULL, 10);
    }
    r->user = user_name(r->user);
}

/* JobID|JobName|User|Partition|State|ExitCode|Start|End|NodeList|NNodes|NTasks|WorkDir|Cluster */
static const size_t sacct_cols[] = {
    offsetof(dx_slurm_rec, job_id),    offsetof(dx_slurm_rec, name),
    offsetof(dx_slurm_rec, user),      offsetof(dx_slurm_rec, partition),
    offsetof(dx_slurm_rec, state),     offsetof(dx_slurm_rec, exit_code),
    offsetof(dx_slurm_rec, start),     offsetof(dx_slurm_rec, end),
    offsetof(dx_slurm_rec, node_list), offsetof(dx_slurm_rec, num_nodes),
    offsetof(dx_slurm_rec, num_tasks), offsetof(dx_slurm_rec, work_dir),
    offsetof(dx_slurm_rec, cluster)};

/* Reads one line of sacct -P into r. */
static void sacct_line(dx_slurm_rec *r, const char *line, const char *le)
{
    size_t c = 0;
    for (const char *p = line; p <= le && c < DX_ARRAY_LEN(sacct_cols); c++) {
        const char *bar = memchr(p, '|', (size_t)(le - p));
        const char *fe = bar ? bar : le;
        *(dx_str *)((char *)r + sacct_cols[c]) = value_of(p, (size_t)(fe - p));
        p = fe + 1;
        if (!bar)
            break;
    }
    /* "CANCELLED by 1000": the state is the first word */
    const char *sp = memchr(r->state.p ? r->state.p : "", ' ', r->state.n);
    if (sp)
        r->state.n = (size_t)(sp - r->state.p);
    r->uid = -1;
}

/* One record a line, read by fn; a line without a job id is none. Records past cap are counted,
 * not kept. */
static size_t each_record(const char *text, size_t len, dx_slurm_rec *recs, size_t cap,
                          void (*fn)(dx_slurm_rec *r, const char *line, const char *le))
{
    size_t nrec = 0;
    const char *end = text + len;
    for (const char *line = text; line < end;) {
        const char *nl = memchr(line, '\n', (size_t)(end - line));
        const char *le = nl ? nl : end;
        dx_slurm_rec tmp;
        dx_slurm_rec *r = nrec < cap ? &recs[nrec] : &tmp;
        memset(r, 0, sizeof *r);
        fn(r, line, le);
        nrec += r->job_id.n > 0;
        line = nl ? nl + 1 : end;
    }
    return nrec;
}

size_t dx_slurm_parse(const char *text, size_t len, dx_slurm_rec *recs, size_t cap)
{
    return each_record(text, len, recs, cap, scontrol_line);
}

size_t dx_slurm_parse_sacct(const char *text, size_t len, dx_slurm_rec *recs, size_t cap)
{
    return each_record(text, len, recs, cap, sacct_line);
}

static int str_is(dx_str s, const char *lit)
{
    return strlen(lit) == s.n && !memcmp(s.p, lit, s.n);
}

int dx_slurm_nodes_pending(const dx_slurm_rec *r)
{
    return str_is(r->state, "COMPLETING") && !r->node_list.n; /* "(null)" reads as empty */
}

int dx_slurm_failed(const dx_slurm_rec *r)
{
    static const char *const bad[] = {"FAILED",    "TIMEOUT",  "OUT_OF_MEMORY", "NODE_FAIL",
                                      "BOOT_FAIL", "DEADLINE", "CANCELLED",     "PREEMPTED"};
    for (size_t i = 0; i < DX_ARRAY_LEN(bad); i++)
        if (str_is(r->state, bad[i]))
            return 1;
    /* while the epilog runs the state may still read COMPLETING: the exit code tells */
    static const char *const why[] = {"NonZeroExitCode", "TimeLimit", "NodeDown", "OutOfMemory"};
    for (size_t i = 0; i < DX_ARRAY_LEN(why); i++)
        if (str_is(r->reason, why[i]))
            return 1;
    return r->exit_code.n && !str_is(r->exit_code, "0:0");
}

/* ==== output patterns ======================================================================== */

int dx_slurm_pattern(const char *pat, const dx_slurm_fill *f, dx_buf *out)
{
    for (const char *p = pat; *p; p++) {
        if (*p != '%') {
            dx_buf_addc(out, *p);
            continue;
        }
        p++;
        while (isdigit((unsigned char)*p))
            p++; /* %5t: a zero-padded width */
        const char *v;
        switch (*p) {
        case '%':
            v = "%";
            break;
        case 'j':
        case 'J':
            v = f->job_id;
            break;
        case 'A':
            v = f->array_job_id && *f->array_job_id ? f->array_job_id : f->job_id;
            break;
        case 'a':
            v = f->array_task_id && *f->array_task_id ? f->array_task_id : "4294967294";
            break;
        case 'u':
            v = f->user;
            break;
        case 'x':
            v = f->name;
            break;
        case 'N':
        case 'n':
        case 't':
        case 's':
            v = "*";
            break;
        default:
            return -1;
        }
        dx_buf_addf(out, "%s", v ? v : "*");
    }
    dx_buf_cstr(out);
    return 0;
}

size_t dx_slurm_script_outputs(const char *script, size_t len, dx_buf *out)
{
    static const char *const opts[] = {"--output=", "--error=", "-o", "-e", "--output", "--error"};
    size_t found = 0;
    const char *end = script + len;
    for (const char *line = script; line < end;) {
        const char *nl = memchr(line, '\n', (size_t)(end - line));
        const char *le = nl ? nl : end;
        const char *s = line;
        while (s < le && isspace((unsigned char)*s))
            s++;
        /* srun's own lines only (not #SBATCH: scontrol already gives StdOut and StdErr) */
        int is_srun = 0;
        for (const char *q = s; q + 4 <= le; q++)
            if (!memcmp(q, "srun", 4) &&
                (q == s || isspace((unsigned char)q[-1]) || q[-1] == '/') &&
                (q + 4 == le || isspace((unsigned char)q[4]))) {
                is_srun = 1;
                s = q + 4;
                break;
            }
        for (const char *p = s; is_srun && p < le;) {
            const char *w;
            size_t wl = next_word(&p, le, &w);
            for (size_t i = 0; i < DX_ARRAY_LEN(opts); i++) {
                size_t ol = strlen(opts[i]);
                const char *v = NULL, *ve = NULL;
                if (opts[i][ol - 1] == '=' && wl > ol && !memcmp(w, opts[i], ol)) {
                    v = w + ol;
                    ve = p;
                } else if (wl == ol && !memcmp(w, opts[i], ol)) {
                    ve = v = NULL;
                    size_t vl = next_word(&p, le, &v); /* "-o PATTERN": the next word */
                    ve = v + vl;
                } else if (ol == 2 && wl > 2 && !memcmp(w, opts[i], 2) && w[1] != '-') {
                    v = w + 2; /* -otask-%t.out */
                    ve = p;
                }
                if (v && ve > v) {
                    /* quotes around the pattern are the shell's */
                    if ((*v == '"' || *v == '\'') && ve - v >= 2 && ve[-1] == *v) {
                        v++;
                        ve--;
                    }
                    if (memchr(v, '%', (size_t)(ve - v)) || memchr(v, '/', (size_t)(ve - v)) ||
                        memchr(v, '.', (size_t)(ve - v))) {
                        dx_buf_add(out, v, (size_t)(ve - v));
                        dx_buf_addc(out, '\n');
                        found++;
                    }
                    break;
                }
            }
        }
        line = nl ? nl + 1 : end;
    }
    return found;
}

void dx_slurm_task_layout(size_t nhosts, const long *cpus, long cpus_per_task, long tasks_per_node,
                          size_t ntasks, int *task_host)
{
    if (!nhosts) {
        for (size_t t = 0; t < ntasks; t++)
            task_host[t] = -1;
        return;
    }
    if (cpus_per_task < 1)
        cpus_per_task = 1;
    size_t t = 0;
    for (size_t h = 0; h < nhosts && t < ntasks; h++) {
        size_t per;
        if (tasks_per_node > 0)
            per = (size_t)tasks_per_node;
        else if (cpus && cpus[h] > 0)
            per = (size_t)(cpus[h] / cpus_per_task);
        else
            per = (ntasks - t + (nhosts - h) - 1) / (nhosts - h);
        if (!per)
            per = 1;
        for (size_t k = 0; k < per && t < ntasks; k++)
            task_host[t++] = (int)h;
    }
    /* more tasks than the layout holds (oversubscribed): the rest go round the nodes */
    for (size_t h = 0; t < ntasks; t++, h = (h + 1) % nhosts)
        task_host[t] = (int)h;
}

/* ==== facts ================================================================================== */

static int fact(ddx_report *rep, const char *name, const char *value, const char *why)
{
    return dx_facts_set(&rep->facts, name, value, strlen(value), why, 0);
}

/* The idx-th name of a comma-separated list into buf. */
static const char *nth_host(const char *hosts, int idx, char *buf, size_t cap)
{
    const char *p = hosts;
    for (int i = 0; i < idx && p; i++) {
        p = strchr(p, ',');
        p = p ? p + 1 : NULL;
    }
    if (!p || idx < 0)
        return NULL;
    size_t n = strcspn(p, ",");
    if (!n || n >= cap)
        return NULL;
    memcpy(buf, p, n);
    buf[n] = '\0';
    return buf;
}

const char *dx_slurm_annotate(ddx_report *rep, const dx_slurm_rec *r, const char *hosts,
                              const int *task_host, size_t ntasks)
{
    static const char from[] = "scontrol show job";
    char v[256];
    size_t nhosts = 0;
    for (const char *p = hosts; *p; p++)
        nhosts += *p == ',';
    nhosts += *hosts != '\0';
    snprintf(v, sizeof v, "%.*s", (int)r->job_id.n, r->job_id.p);
    fact(rep, "slurm.job_id", v, from);
    if (r->state.n) {
        snprintf(v, sizeof v, "%.*s", (int)r->state.n, r->state.p);
        fact(rep, "slurm.state", v, from);
    }
    if (r->exit_code.n) {
        snprintf(v, sizeof v, "%.*s", (int)r->exit_code.n, r->exit_code.p);
        fact(rep, "slurm.exit_code", v, from);
    }
    snprintf(v, sizeof v, "%zu", nhosts);
    fact(rep, "slurm.nnodes", v, from);
    if (*hosts)
        fact(rep, "slurm.nodes", hosts, from);
    /* the task map, as runs: "0-3:node01,4-7:node02" */
    dx_buf map = {0};
    char h[128];
    for (size_t t = 0; t < ntasks;) {
        size_t u = t;
        while (u + 1 < ntasks && task_host[u + 1] == task_host[t])
            u++;
        const char *name = nth_host(hosts, task_host[t], h, sizeof h);
        if (u > t)
            dx_buf_addf(&map, "%s%zu-%zu:%s", map.n ? "," : "", t, u, name ? name : "?");
        else
            dx_buf_addf(&map, "%s%zu:%s", map.n ? "," : "", t, name ? name : "?");
        t = u + 1;
    }
    if (map.n)
        fact(rep, "slurm.task_nodes", map.p,
             "scontrol show job: Slurm's default block layout of the tasks on the nodes");
    dx_buf_fini(&map);
    int cr = rep->culprit;
    if (cr < 0)
        return NULL;
    const char *host = NULL, *why = NULL;
    /* the rank's own host, from its lines, when it is one of the job's nodes (by its short
     * name: "node01.cluster" is node01; "localhost" is none of them) */
    if ((size_t)cr < rep->job.nby && rep->job.by_rank[cr] && rep->job.by_rank[cr]->host[0]) {
        const char *own = rep->job.by_rank[cr]->host;
        size_t ol = strcspn(own, ".");
        for (size_t i = 0; i < nhosts && !host; i++) {
            const char *name = nth_host(hosts, (int)i, h, sizeof h);
            if (name && strcspn(name, ".") == ol && !strncmp(name, own, ol)) {
                host = name;
                why = "the culprit rank's own lines (NCCL or torchelastic), a node of the job";
            }
        }
    }
    const dx_fact *launcher = dx_facts_get(&rep->facts, "launcher.name");
    const dx_fact *per = dx_facts_get(&rep->facts, "launcher.nproc_per_node");
    long p = per ? strtol(per->value, NULL, 10) : 0;
    if (!host && nhosts == 1) {
        host = nth_host(hosts, 0, h, sizeof h);
        why = "the job's only node";
    } else if (!host && launcher && p > 0 && strcmp(launcher->value, "srun") != 0) {
        host = nth_host(hosts, (int)(cr / p), h, sizeof h);
        why = "node rank = rank / nproc_per_node of the launcher, in the job's node order";
    } else if (!host && (size_t)cr < ntasks) {
        host = nth_host(hosts, task_host[cr], h, sizeof h);
        why = "the culprit rank's task in Slurm's task layout";
    }
    if (!host || fact(rep, "job.culprit_host", host, why))
        return NULL;
    const dx_fact *x = dx_facts_get(&rep->facts, "job.culprit_host");
    return x ? x->value : NULL;
}
