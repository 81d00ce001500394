/* slurm.c -- ddx slurm JOBID: find a Slurm job's outputs and diagnose them with what Slurm says.
 *
 * Runs `scontrol -o -d show job JOBID` (or, for a job slurmctld has forgotten, sacct), reads the
 * record(s) with src/slurm.c, and gathers the job's outputs: StdOut and StdErr; the files of the
 * srun --output/--error patterns in its batch script (`scontrol write batch_script`), as globs
 * in its working folder; files in the working folder (and the StdOut folder) whose name holds
 * the job id as a word; and any PATH given. The node list and the task-to-node layout become
 * facts, the culprit's host too; the JSON report gains a "job" object (docs/fleet.md), which
 * the fleet store reads. A heterogeneous job is one job (its components' outputs and nodes
 * together); an array is many: name one task (1234_5).
 *
 * For the scheduler's epilog: --if-failed (nothing unless the job failed), --save (the JSON
 * beside the job's output, owned by the job's user when run as root), --db (the fleet store).
 */
#include "cli.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <jansson.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "fleet.h"
#include "slurm.h"

#define OUT_MAX (16u << 20) /* what a Slurm command may print */
#define RECS_MAX 64
#define FILES_MAX 4096
#define HOSTS_MAX 100000

/* Runs argv (no shell) and captures its standard output (and error) up to OUT_MAX bytes.
 * Returns the exit status, or -1 when it could not run. */
static int run_capture(char *const argv[], dx_buf *out, dx_buf *errout)
{
    int po[2], pe[2];
    if (pipe(po))
        return -1;
    if (pipe(pe)) {
        close(po[0]);
        close(po[1]);
        return -1;
    }
    fflush(NULL);
    pid_t p = fork();
    if (p < 0)
        return -1;
    if (p == 0) {
        dup2(po[1], 1);
        dup2(pe[1], 2);
        close(po[0]);
        close(pe[0]);
        int devnull = open("/dev/null", O_RDONLY);
        if (devnull >= 0)
            dup2(devnull, 0);
        execvp(argv[0], argv);
        _exit(127);
    }
    close(po[1]);
    close(pe[1]);
    /* stderr is small; read stdout first, then stderr (a full stderr pipe would only stall a
     * command that prints more than 64 KiB of errors) */
    int fds[2] = {po[0], pe[0]};
    dx_buf *bufs[2] = {out, errout};
    for (int i = 0; i < 2; i++) {
        char buf[8192];
        ssize_t n;
        while ((n = read(fds[i], buf, sizeof buf)) > 0 || (n < 0 && errno == EINTR))
            if (n > 0 && bufs[i]->n + (size_t)n <= OUT_MAX)
                dx_buf_add(bufs[i], buf, (size_t)n);
        close(fds[i]);
    }
    int st;
    while (waitpid(p, &st, 0) < 0)
        if (errno != EINTR)
            return -1;
    dx_buf_cstr(out);
    dx_buf_cstr(errout);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static int valid_job_id(const char *s)
{
    size_t i = 0, seps = 0;
    for (; s[i]; i++) {
        if (s[i] == '_' || s[i] == '+') {
            if (!i || seps++ || !s[i + 1])
                return 0;
        } else if (s[i] < '0' || s[i] > '9')
            return 0;
    }
    return i > 0 && i < 32;
}

static char *str_dup(dx_str s) { return dx_strndup(s.p ? s.p : "", s.n); }

/* ==== the job's files ======================================================================== */

typedef struct files {
    char **v;
    size_t n, cap;
} files;

static void add_file(files *f, const char *path)
{
    struct stat st;
    if (f->n >= FILES_MAX || stat(path, &st) != 0 || !S_ISREG(st.st_mode))
        return;
    char *real = realpath(path, NULL);
    if (!real)
        return;
    for (size_t i = 0; i < f->n; i++)
        if (!strcmp(f->v[i], real)) {
            free(real);
            return;
        }
    if (dx_grow((void **)&f->v, &f->cap, f->n + 1, sizeof(char *)) ||
        !(f->v[f->n] = dx_strdup(real))) {
        free(real);
        return;
    }
    f->n++;
    free(real);
}

/* Whether name holds id as a word: not inside a longer number. */
static int has_id(const char *name, const char *id)
{
    size_t k = strlen(id);
    for (const char *p = strstr(name, id); p; p = strstr(p + 1, id)) {
        int before = p > name && p[-1] >= '0' && p[-1] <= '9';
        int after = p[k] >= '0' && p[k] <= '9';
        if (!before && !after)
            return 1;
    }
    return 0;
}

static void files_named_after(files *f, const char *dir, const char *id)
{
    if (strlen(id) < 3)
        return; /* a short id is in too many names (task numbers, dates) to tell */
    DIR *d = dir && *dir ? opendir(dir) : NULL;
    if (!d)
        return;
    struct dirent *de;
    dx_buf path = {0};
    while ((de = readdir(d))) {
        if (de->d_name[0] == '.' || !has_id(de->d_name, id))
            continue;
        if (!strncmp(de->d_name, "ddx-", 4))
            continue; /* our own report of an earlier run */
        path.n = 0;
        dx_buf_addf(&path, "%s/%s", dir, de->d_name);
        add_file(f, path.p);
    }
    dx_buf_fini(&path);
    closedir(d);
}

static void add_glob(files *f, const char *pattern, const char *workdir)
{
    dx_buf full = {0};
    if (pattern[0] != '/' && workdir && *workdir)
        dx_buf_addf(&full, "%s/%s", workdir, pattern);
    else
        dx_buf_addf(&full, "%s", pattern);
    glob_t g;
    if (glob(full.p, 0, NULL, &g) == 0) {
        for (size_t i = 0; i < g.gl_pathc; i++)
            add_file(f, g.gl_pathv[i]);
        globfree(&g);
    }
    dx_buf_fini(&full);
}

/* ==== the command ============================================================================ */

typedef struct sjob {
    dx_slurm_rec recs[RECS_MAX];
    size_t nrec;
    const dx_slurm_rec *lead;
    dx_buf text;  /* scontrol's output: the records point into it */
    dx_buf hosts; /* every component's nodes, expanded, in order */
    int *task_host;
    size_t ntasks;
    int failed;
    char id[64];
} sjob;

/* Half-second tries while a job reads COMPLETING without its nodes: 30 s in all. */
enum { COMPLETING_TRIES = 60 };

static int still_completing(const sjob *j)
{
    for (size_t i = 0; i < j->nrec && i < RECS_MAX; i++) {
        if (dx_slurm_nodes_pending(&j->recs[i]))
            return 1;
    }
    return 0;
}

static int load_job(const char *id, sjob *j)
{
    dx_buf err = {0};
    char *sc[] = {"scontrol", "-o", "-d", "show", "job", (char *)id, NULL};
    int rc = run_capture(sc, &j->text, &err);
    if (rc == 0)
        j->nrec = dx_slurm_parse(j->text.p, j->text.n, j->recs, RECS_MAX);
    /* A job still completing (its epilog runs, its nodes are being released) may show no nodes
     * yet: ask again for a while, as the epilog's ddx runs the moment the job ends. */
    for (int tries = 0; rc == 0 && tries < COMPLETING_TRIES && still_completing(j); tries++) {
        nanosleep(&(struct timespec){.tv_nsec = 500000000L}, NULL);
        j->text.n = 0;
        err.n = 0;
        j->nrec = 0;
        rc = run_capture(sc, &j->text, &err);
        if (rc == 0)
            j->nrec = dx_slurm_parse(j->text.p, j->text.n, j->recs, RECS_MAX);
    }
    if (!j->nrec) {
        /* slurmctld forgets a job MinJobAge seconds after it ends: ask the accounting */
        dx_buf serr = {0};
        j->text.n = 0;
        char *sa[] = {"sacct",
                      "-P",
                      "-n",
                      "-X",
                      "-j",
                      (char *)id,
                      "--format=JobID,JobName,User,Partition,State,ExitCode,Start,End,NodeList,"
                      "NNodes,NTasks,WorkDir,Cluster",
                      NULL};
        if (run_capture(sa, &j->text, &serr) == 0)
            j->nrec = dx_slurm_parse_sacct(j->text.p, j->text.n, j->recs, RECS_MAX);
        if (!j->nrec) {
            const char *why = err.n ? err.p : rc < 0 ? "scontrol could not be run" : "";
            size_t wl = strcspn(why, "\n");
            cli_fail("slurm: job %s: not found by scontrol (%.*s) nor sacct (%.*s); check the "
                     "id, and that this host is a Slurm client (scontrol, sacct on PATH)",
                     id, (int)wl, why, (int)strcspn(serr.n ? serr.p : "no record", "\n"),
                     serr.n ? serr.p : "no record");
            dx_buf_fini(&serr);
            dx_buf_fini(&err);
            return -1;
        }
        dx_buf_fini(&serr);
    }
    dx_buf_fini(&err);
    if (j->nrec > RECS_MAX)
        j->nrec = RECS_MAX;
    /* an array named by its master id: many jobs, name one */
    if (j->nrec > 1 && !j->recs[0].het_job_id.n) {
        dx_buf ids = {0};
        for (size_t i = 0; i < j->nrec && i < 8; i++)
            dx_buf_addf(&ids, "%s%.*s_%.*s", i ? ", " : "", (int)j->recs[i].array_job_id.n,
                        j->recs[i].array_job_id.p, (int)j->recs[i].array_task_id.n,
                        j->recs[i].array_task_id.p);
        cli_fail("slurm: %s is an array of %zu tasks, each its own job: name one (%s%s)", id,
                 j->nrec, ids.p ? ids.p : "", j->nrec > 8 ? ", ..." : "");
        dx_buf_fini(&ids);
        return -1;
    }
    j->lead = &j->recs[0];
    for (size_t i = 0; i < j->nrec; i++) {
        j->failed |= dx_slurm_failed(&j->recs[i]);
        char *nl = str_dup(j->recs[i].node_list);
        if (nl && dx_hostlist_expand(nl, &j->hosts, HOSTS_MAX) < 0) {
            cli_fail("slurm: job %s: cannot read its node list '%s'", id, nl);
            dx_free(nl);
            return -1;
        }
        dx_free(nl);
    }
    dx_buf_cstr(&j->hosts);
    /* tasks on the nodes, each component after the other */
    size_t total = 0;
    for (size_t i = 0; i < j->nrec; i++)
        total += (size_t)strtol(j->recs[i].num_tasks.n ? j->recs[i].num_tasks.p : "0", NULL, 10);
    j->task_host = dx_calloc(total ? total : 1, sizeof(int));
    size_t host_base = 0;
    for (size_t i = 0; j->task_host && i < j->nrec; i++) {
        const dx_slurm_rec *r = &j->recs[i];
        size_t nt = (size_t)strtol(r->num_tasks.n ? r->num_tasks.p : "0", NULL, 10);
        dx_buf mine = {0};
        char *nl = str_dup(r->node_list);
        long nh = nl ? dx_hostlist_expand(nl, &mine, HOSTS_MAX) : 0;
        dx_free(nl);
        dx_buf_fini(&mine);
        long cpus[64];
        for (size_t k = 0; k < r->ndet && k < DX_ARRAY_LEN(cpus); k++) {
            /* CPU_IDs=0-2,5: count them (one detail line may cover several nodes: equal) */
            dx_buf ids = {0};
            char *c = str_dup(r->det_cpus[k]);
            dx_buf_addf(&ids, "c[%s]", c ? c : "");
            dx_free(c);
            dx_buf cs = {0};
            cpus[k] = dx_hostlist_expand(ids.p, &cs, 4096);
            dx_buf_fini(&cs);
            dx_buf_fini(&ids);
        }
        long per_task = strtol(r->cpus_per_task.n ? r->cpus_per_task.p : "1", NULL, 10);
        long per_node = strtol(r->tasks_per_node.n ? r->tasks_per_node.p : "0", NULL, 10);
        int use_cpus = r->ndet && (long)r->ndet == nh;
        dx_slurm_task_layout(nh > 0 ? (size_t)nh : 0, use_cpus ? cpus : NULL, per_task, per_node,
                             nt, j->task_host + j->ntasks);
        for (size_t t = 0; t < nt; t++)
            if (j->task_host[j->ntasks + t] >= 0)
                j->task_host[j->ntasks + t] += (int)host_base;
        j->ntasks += nt;
        host_base += nh > 0 ? (size_t)nh : 0;
    }
    snprintf(j->id, sizeof j->id, "%.*s", (int)j->lead->job_id.n, j->lead->job_id.p);
    return 0;
}

static void job_files(const char *id, sjob *j, const cli_args *a, files *f)
{
    for (size_t i = 0; i < j->nrec; i++) {
        char *o = str_dup(j->recs[i].std_out), *e = str_dup(j->recs[i].std_err);
        if (o && *o)
            add_file(f, o);
        if (e && *e)
            add_file(f, e);
        dx_free(o);
        dx_free(e);
    }
    char *wd = str_dup(j->lead->work_dir);
    char *user = str_dup(j->lead->user), *name = str_dup(j->lead->name);
    char *aj = str_dup(j->lead->array_job_id), *at = str_dup(j->lead->array_task_id);
    /* srun's own output patterns, from the batch script */
    dx_buf script = {0}, err = {0}, pats = {0};
    char *ws[] = {"scontrol", "write", "batch_script", (char *)id, "-", NULL};
    if (run_capture(ws, &script, &err) == 0 && dx_slurm_script_outputs(script.p, script.n, &pats)) {
        char host0[256] = "";
        size_t hl = strcspn(j->hosts.n ? j->hosts.p : "", ",");
        if (hl < sizeof host0)
            snprintf(host0, sizeof host0, "%.*s", (int)hl, j->hosts.p ? j->hosts.p : "");
        dx_slurm_fill fill = {j->id, aj, at, user, name, host0};
        for (char *p = pats.p; p && *p;) {
            char *nl = strchr(p, '\n');
            *nl = '\0';
            dx_buf g = {0};
            if (!dx_slurm_pattern(p, &fill, &g))
                add_glob(f, g.p, wd);
            dx_buf_fini(&g);
            p = nl + 1;
        }
    }
    /* files named after the job, in its working folder and beside its output: an array
     * task by "<array id>_<task id>" (its own job id may be the array's) */
    char name_id[80];
    if (aj && *aj && at && *at)
        snprintf(name_id, sizeof name_id, "%s_%s", aj, at);
    else
        snprintf(name_id, sizeof name_id, "%s", j->id);
    files_named_after(f, wd, name_id);
    char *o = str_dup(j->lead->std_out);
    char *slash = o ? strrchr(o, '/') : NULL;
    if (slash) {
        *slash = '\0';
        files_named_after(f, o, name_id);
    }
    dx_free(o);
    for (size_t i = 1; i < a->nargs; i++) {
        struct stat st;
        if (stat(a->args[i], &st) == 0 && S_ISDIR(st.st_mode) && f->n < FILES_MAX) {
            if (!dx_grow((void **)&f->v, &f->cap, f->n + 1, sizeof(char *)) &&
                (f->v[f->n] = dx_strdup(a->args[i])))
                f->n++;
        } else
            add_file(f, a->args[i]);
    }
    dx_free(wd);
    dx_free(user);
    dx_free(name);
    dx_free(aj);
    dx_free(at);
    dx_buf_fini(&script);
    dx_buf_fini(&err);
    dx_buf_fini(&pats);
}

/* Slurm's local time as ISO 8601 UTC ("" stays ""). */
static json_t *jtime(dx_str s)
{
    char *t = str_dup(s);
    int64_t v;
    json_t *o = json_null();
    if (t && *t && !dx_fleet_parse_when(t, 0, &v)) {
        time_t tt = (time_t)v;
        struct tm tm;
        char buf[40];
        gmtime_r(&tt, &tm);
        strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
        o = json_string(buf);
    }
    dx_free(t);
    return o;
}

static json_t *jstrn(dx_str s) { return s.n ? json_stringn(s.p, s.n) : json_null(); }

static json_t *job_object(const sjob *j, const files *f, const char *culprit_host)
{
    const dx_slurm_rec *r = j->lead;
    json_t *o = json_object();
    json_object_set_new(o, "scheduler", json_string("slurm"));
    json_object_set_new(o, "id", json_string(j->id));
    /* scontrol does not print the cluster; the epilog's environment names it */
    const char *cl = getenv("SLURM_CLUSTER_NAME");
    json_object_set_new(o, "cluster",
                        r->cluster.n ? jstrn(r->cluster)
                        : cl && *cl  ? json_string(cl)
                                     : json_null());
    if (r->array_job_id.n && r->array_task_id.n) {
        json_object_set_new(o, "array_job_id", jstrn(r->array_job_id));
        json_object_set_new(o, "array_task_id", jstrn(r->array_task_id));
    }
    if (r->het_job_id.n)
        json_object_set_new(o, "het_components", json_integer((json_int_t)j->nrec));
    json_object_set_new(o, "name", jstrn(r->name));
    json_object_set_new(o, "user", jstrn(r->user));
    json_object_set_new(o, "partition", jstrn(r->partition));
    json_object_set_new(o, "state", jstrn(r->state));
    json_object_set_new(o, "reason", jstrn(r->reason));
    json_object_set_new(o, "exit_code", jstrn(r->exit_code));
    json_object_set_new(o, "failed", json_boolean(j->failed));
    json_object_set_new(o, "start", jtime(r->start));
    json_object_set_new(o, "end", jtime(r->end));
    json_t *nodes = json_array(), *tasks = json_array(), *outs = json_array();
    for (const char *p = j->hosts.n ? j->hosts.p : ""; *p;) {
        size_t n = strcspn(p, ",");
        json_array_append_new(nodes, json_stringn(p, n));
        p += n + (p[n] == ',');
    }
    for (size_t t = 0; t < j->ntasks; t++) {
        json_t *h = json_array_get(nodes, (size_t)(j->task_host[t] >= 0 ? j->task_host[t] : 0));
        json_array_append(tasks, h ? h : json_null());
    }
    for (size_t i = 0; i < f->n; i++)
        json_array_append_new(outs, json_string(f->v[i]));
    json_object_set_new(o, "nodes", nodes);
    json_object_set_new(o, "task_nodes", tasks);
    json_object_set_new(o, "work_dir", jstrn(r->work_dir));
    json_object_set_new(o, "outputs", outs);
    json_object_set_new(o, "culprit_host", culprit_host ? json_string(culprit_host) : json_null());
    return o;
}

/* Where --save writes: beside StdOut (else in WorkDir). */
static void save_path(const sjob *j, dx_buf *b)
{
    char *o = str_dup(j->lead->std_out);
    char *slash = o ? strrchr(o, '/') : NULL;
    if (slash)
        dx_buf_addf(b, "%.*s/ddx-%s.json", (int)(slash - o), o, j->id);
    else
        dx_buf_addf(b, "%.*s/ddx-%s.json", (int)j->lead->work_dir.n,
                    j->lead->work_dir.n ? j->lead->work_dir.p : ".", j->id);
    dx_free(o);
}

/* Writes the report beside the job's output, whole or not at all (a temporary file renamed:
 * whoever ingests the folder never reads half a report), owned by the job's user when root. */
static int save_report(const sjob *j, const char *text)
{
    dx_buf p = {0}, tmp = {0};
    save_path(j, &p);
    dx_buf_addf(&tmp, "%s.tmp.%ld", p.p, (long)getpid());
    FILE *s = fopen(tmp.p, "w");
    int bad = !s || fputs(text, s) < 0 || fputc('\n', s) < 0;
    bad |= s && fclose(s) != 0;
    if (!bad && geteuid() == 0 && j->lead->uid >= 0 && chown(tmp.p, (uid_t)j->lead->uid, (gid_t)-1))
        fprintf(stderr, "ddx: slurm: %s: cannot give it to uid %ld: %s\n", p.p, j->lead->uid,
                strerror(errno));
    if (bad || rename(tmp.p, p.p)) {
        cli_fail("slurm: cannot write %s: %s", p.p, strerror(errno));
        unlink(tmp.p);
    } else
        fprintf(stderr, "ddx: slurm: wrote %s\n", p.p);
    int rc = bad ? -1 : access(p.p, F_OK);
    dx_buf_fini(&p);
    dx_buf_fini(&tmp);
    return rc;
}

int cli_slurm(cli_args *a)
{
    if (!a->nargs)
        return cli_fail("slurm: give a job id (1234, 1234_5 for an array task, 1234+1 for a "
                        "heterogeneous job's component); see 'ddx slurm --help'");
    const char *id = a->args[0];
    if (!valid_job_id(id))
        return cli_fail("slurm: '%s' is not a Slurm job id (1234, 1234_5, 1234+1)", id);
    static sjob j; /* large: the records hold detail lines */
    memset(&j, 0, sizeof j);
    files f = {0};
    ddx_kb *kb = NULL;
    ddx_job *job = NULL;
    ddx_report *rep = NULL;
    ddx_error e = {0};
    json_t *root = NULL;
    char *text = NULL;
    int status = 2;
    if (load_job(id, &j))
        goto done;
    if (a->if_failed && !j.failed) {
        fprintf(stderr, "ddx: slurm: job %s did not fail (%.*s, exit code %.*s); nothing to do\n",
                j.id, (int)j.lead->state.n, j.lead->state.p, (int)j.lead->exit_code.n,
                j.lead->exit_code.p);
        status = 0;
        goto done;
    }
    job_files(id, &j, a, &f);
    if (!f.n) {
        cli_fail("slurm: job %s: none of its outputs could be found (StdOut %.*s, working folder "
                 "%.*s); give them as PATH",
                 j.id, (int)j.lead->std_out.n, j.lead->std_out.p, (int)j.lead->work_dir.n,
                 j.lead->work_dir.p);
        goto done;
    }
    if (cli_open_kb(a, &kb))
        goto done;
    if (ddx_job_new(&job, kb, &e)) {
        cli_fail("%s", e.message);
        goto done;
    }
    for (size_t i = 0; i < f.n; i++)
        if (ddx_job_add_path(job, f.v[i], &e)) {
            cli_fail("%s", e.message);
            goto done;
        }
    if (ddx_job_diagnose(job, a->all ? DDX_DIAG_ALL : 0, &rep, &e)) {
        cli_fail("%s", e.message);
        goto done;
    }
    const char *chost =
        dx_slurm_annotate(rep, j.lead, j.hosts.n ? j.hosts.p : "", j.task_host, j.ntasks);
    /* the JSON report with the job, for --json, --save and --db */
    char *buf = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&buf, &len);
    int rc = m ? ddx_report_write_json(rep, m, &e) : DDX_ENOMEM;
    if (m)
        fclose(m);
    if (!rc && (root = json_loadb(buf, len, 0, NULL)))
        json_object_set_new(root, "job", job_object(&j, &f, chost));
    free(buf);
    if (!root) {
        cli_fail("slurm: cannot write the report: %s", e.message[0] ? e.message : "out of memory");
        goto done;
    }
    text = json_dumps(root, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(10));
    if (a->save && save_report(&j, text))
        goto done;
    if (a->db) {
        dx_fleet *db = NULL;
        int outcome = 0;
        rc = dx_fleet_open(&db, a->db, 0, 0, &e);
        if (!rc)
            rc = dx_fleet_record(db, text, strlen(text), NULL, j.id, &outcome, &e);
        dx_fleet_close(db);
        if (rc) {
            cli_fail("%s", e.message);
            goto done;
        }
    }
    if (a->json) {
        fputs(text, stdout);
        fputc('\n', stdout);
    } else {
        printf("Slurm job %s (%.*s, user %.*s): %.*s, exit code %.*s; %zu task%s on %s\n\n", j.id,
               (int)j.lead->name.n, j.lead->name.p, (int)j.lead->user.n, j.lead->user.p,
               (int)j.lead->state.n, j.lead->state.p, (int)j.lead->exit_code.n, j.lead->exit_code.p,
               j.ntasks, j.ntasks == 1 ? "" : "s", j.hosts.n ? j.hosts.p : "(no nodes)");
        if (ddx_report_write_text(rep, cli_text_flags(a, stdout), stdout, &e)) {
            cli_fail("%s", e.message);
            goto done;
        }
        if (chost)
            printf("Culprit host: %s\n", chost);
    }
    if (fflush(stdout)) {
        cli_fail("slurm: cannot write the output");
        goto done;
    }
    status = ddx_report_count(rep) ? 1 : 0;
done:
    free(text);
    json_decref(root);
    ddx_report_free(rep);
    ddx_job_free(job);
    ddx_kb_close(kb);
    for (size_t i = 0; i < f.n; i++)
        dx_free(f.v[i]);
    dx_free(f.v);
    dx_free(j.task_host);
    dx_buf_fini(&j.text);
    dx_buf_fini(&j.hosts);
    return status;
}
