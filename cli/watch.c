/* watch.c -- ddx watch: run a job (or follow its log files) and name a failure or a stall as it
 * happens, passing the job's output through unchanged.
 *
 * One thread, one poll loop over: the child's standard output and error (pipes, or pseudo-
 * terminals in raw mode when ddx's own are terminals, so the job still sees a terminal), an
 * inotify descriptor for the followed folders and files, and a self-pipe for signals. Bytes
 * from the child are written to the same descriptor of ddx at once (no line buffering: no
 * latency is added) and fed to the live diagnosis (src/live.c). A diagnosis runs when one is
 * due (a failure line's burst is over); its top finding is announced once per id (or when its
 * level rises). Stalls are checked every tick. At the end the whole diagnosis is printed.
 *
 * Processes: the child runs in its own process group. When ddx's standard input is the
 * terminal's and ddx is in the foreground, that group becomes the terminal's foreground group
 * (Ctrl-C reaches the job directly, and it can read the terminal); otherwise SIGINT, SIGTERM,
 * SIGHUP and SIGQUIT sent to ddx are forwarded to the group (the third SIGINT or SIGTERM sends
 * SIGKILL). ddx exits with the child's status, 128+N when signal N ended it.
 *
 * Hooks (--on-finding, --on-stall) run through /bin/sh -c without waiting for them; their
 * standard output goes to ddx's standard error. Events and notices: docs/watch.md.
 */
#include "cli.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <sys/inotify.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "attrib.h"
#include "input.h"
#include "live.h"

#define TICK_US (250 * 1000)            /* stall checks, file polling */
#define RESCAN_US (1000 * 1000)         /* folders walked again for new files */
#define DRAIN_US (1000 * 1000)          /* after the child exits: wait this long for EOF */
#define NOTICE_WAIT_US (500 * 1000)     /* a notice waits for the job's stderr line to end */
#define HOOK_WAIT_US (10 * 1000 * 1000) /* at the end: hooks still running get this long */
#define READ_MAX (64u << 10)
#define FILES_MAX 4096
#define DEPTH_MAX 8

/* ==== time and signals ======================================================================= */

static int64_t mono_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static int sig_pipe[2] = {-1, -1};

static void on_signal(int sig)
{
    int saved = errno;
    unsigned char b = (unsigned char)sig;
    if (write(sig_pipe[1], &b, 1) < 0) {
        /* the pipe is full: the loop has signals to read already */
    }
    errno = saved;
}

static const int forwarded[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};

static int set_nonblock(int fd)
{
    int fl = fcntl(fd, F_GETFL);
    return fl < 0 ? -1 : fcntl(fd, F_SETFL, fl | O_NONBLOCK);
}

/* ==== state ================================================================================== */

typedef struct stream {
    int fd;     /* our read end; -1 when closed */
    int out;    /* where its bytes go: 1 or 2 */
    int src;    /* live source */
    int closed; /* our own descriptor refused the bytes (EPIPE): the job gets EPIPE too */
    char lastc; /* the last byte passed through */
} stream;

typedef struct follow {
    char *path;
    int fd; /* -1: not open */
    dev_t dev;
    ino_t ino;
    off_t off;
    int src;  /* live source, -1 until it is classified as a log */
    int kind; /* 0 unknown yet, else dx_kind */
} follow;

typedef struct watch {
    cli_args *a;
    ddx_kb *kb;
    dx_live *lv;
    FILE *out;    /* notices and the final diagnosis */
    FILE *events; /* NULL: none */
    int64_t t0;
    /* the child */
    pid_t child;
    int child_done, child_status;
    int64_t child_done_at;
    int foreground; /* the child's group holds the terminal */
    int fwd_count;
    stream st[2];
    /* followed files */
    char **roots;
    size_t nroots;
    follow *f;
    size_t nf, capf;
    int ino_fd;
    int64_t next_rescan;
    int files_full;
    /* findings announced */
    char **said;
    int *said_level;
    size_t nsaid, capsaid;
    /* notices waiting for the job's stderr line to end */
    dx_buf pending;
    int64_t pending_since;
    /* hooks */
    pid_t hooks[64];
    size_t nhooks;
    int stop;
} watch;

/* ==== output: notices and events ============================================================= */

static void iso_now(char *buf, size_t cap)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    struct tm tm;
    gmtime_r(&ts.tv_sec, &tm);
    char s[32];
    strftime(s, sizeof s, "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(buf, cap, "%s.%03ldZ", s, ts.tv_nsec / 1000000);
}

/* A notice: one line of ddx's own. On standard error while the job's last byte there did not
 * end a line, it waits (up to NOTICE_WAIT_US) so it does not cut the job's line in two. */
static void notice(watch *w, const char *fmt, ...) DX_PRINTF(2, 3);
static void notice(watch *w, const char *fmt, ...)
{
    va_list ap;
    char line[1200];
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    if (w->out == stderr && w->child > 0 && w->st[1].lastc && w->st[1].lastc != '\n') {
        if (!w->pending.n)
            w->pending_since = mono_us();
        dx_buf_addf(&w->pending, "ddx: %s\n", line);
        return;
    }
    fprintf(w->out, "ddx: %s\n", line);
    fflush(w->out);
}

static void flush_pending(watch *w, int force)
{
    if (!w->pending.n)
        return;
    int mid = w->st[1].lastc && w->st[1].lastc != '\n';
    if (mid && !force && mono_us() - w->pending_since < NOTICE_WAIT_US)
        return;
    if (mid)
        fputc('\n', w->out);
    fwrite(w->pending.p, 1, w->pending.n, w->out);
    fflush(w->out);
    w->pending.n = 0;
}

/* A new event object with its kind and times. */
static json_t *event_new(const watch *w, const char *kind)
{
    char t[64];
    iso_now(t, sizeof t);
    json_t *o = json_object();
    json_object_set_new(o, "event", json_string(kind));
    json_object_set_new(o, "time", json_string(t));
    json_object_set_new(o, "elapsed_s", json_real(round((double)(mono_us() - w->t0) / 1e3) / 1e3));
    return o;
}

/* Writes the event as one line (when events are asked for) and returns its text (the caller
 * frees it), for hooks. Takes the object. */
static char *event_emit(watch *w, json_t *o)
{
    char *text = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(10));
    json_decref(o);
    if (text && w->events) {
        fputs(text, w->events);
        fputc('\n', w->events);
        fflush(w->events);
    }
    return text;
}

/* The report as a JSON object (the contract of docs/json.md). */
static json_t *report_json(const ddx_report *rep)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&buf, &len);
    if (!m)
        return NULL;
    ddx_error e = {0};
    int rc = ddx_report_write_json(rep, m, &e);
    fclose(m);
    json_t *o = rc ? NULL : json_loadb(buf, len, 0, NULL);
    free(buf);
    return o;
}

/* ==== the job's processes ==================================================================== */

/* The pids of root and its descendants (from /proc), space-separated into b. */
static void job_pids(pid_t root, dx_buf *b)
{
    if (root <= 0)
        return;
    DIR *d = opendir("/proc");
    if (!d) {
        dx_buf_addf(b, "%ld", (long)root);
        return;
    }
    /* (pid, ppid) of every process */
    long(*pp)[2] = NULL;
    size_t n = 0, cap = 0;
    struct dirent *de;
    while ((de = readdir(d))) {
        char *end;
        long pid = strtol(de->d_name, &end, 10);
        if (*end || pid <= 0)
            continue;
        char path[64], buf[512];
        snprintf(path, sizeof path, "/proc/%ld/stat", pid);
        FILE *f = fopen(path, "r");
        if (!f)
            continue;
        size_t k = fread(buf, 1, sizeof buf - 1, f);
        fclose(f);
        buf[k] = '\0';
        const char *rp = strrchr(buf, ')'); /* the name may hold spaces and parentheses */
        long ppid;
        char state;
        if (!rp || sscanf(rp + 1, " %c %ld", &state, &ppid) != 2)
            continue;
        if (dx_grow((void **)&pp, &cap, n + 1, sizeof *pp))
            break;
        pp[n][0] = pid;
        pp[n][1] = ppid;
        n++;
    }
    closedir(d);
    /* breadth first from root */
    long *q = dx_malloc((n + 1) * sizeof(long));
    size_t nq = 0;
    if (q) {
        q[nq++] = root;
        for (size_t i = 0; i < nq; i++)
            for (size_t k = 0; k < n && nq <= n; k++)
                if (pp[k][1] == q[i] && pp[k][0] != q[i])
                    q[nq++] = pp[k][0];
        for (size_t i = 0; i < nq; i++)
            dx_buf_addf(b, "%s%ld", i ? " " : "", q[i]);
    }
    dx_free(q);
    dx_free(pp);
}

/* Reaps the hooks that ended; with wait_all, waits up to HOOK_WAIT_US for the others. */
static void reap_hooks(watch *w, int wait_all)
{
    int64_t until = mono_us() + HOOK_WAIT_US;
    for (;;) {
        for (size_t i = 0; i < w->nhooks;) {
            int st;
            pid_t r = waitpid(w->hooks[i], &st, WNOHANG);
            if (r == w->hooks[i] || (r < 0 && errno == ECHILD))
                w->hooks[i] = w->hooks[--w->nhooks];
            else
                i++;
        }
        if (!wait_all || !w->nhooks || mono_us() >= until)
            return;
        struct timespec ts = {0, 50 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
}

/* Runs cmd through /bin/sh -c with the event in the environment; does not wait for it. */
static void run_hook(watch *w, const char *cmd, const char *kind, const char *event,
                     const char *extra_name, const char *extra)
{
    if (!cmd || !event)
        return;
    reap_hooks(w, 0);
    if (w->nhooks >= DX_ARRAY_LEN(w->hooks)) {
        notice(w, "[watch] %s hook not run: %zu hooks still running", kind, w->nhooks);
        return;
    }
    dx_buf pids = {0}, rpids = {0};
    job_pids(w->child > 0 ? w->child : (pid_t)w->a->pid, &pids);
    int ranks[1024];
    size_t nr = dx_live_ranks(w->lv, ranks, DX_ARRAY_LEN(ranks));
    for (size_t i = 0; i < nr && i < DX_ARRAY_LEN(ranks); i++) {
        dx_live_rank x;
        if (!dx_live_rank_info(w->lv, ranks[i], &x) && x.pid > 0)
            dx_buf_addf(&rpids, "%s%d:%ld", rpids.n ? " " : "", ranks[i], x.pid);
    }
    fflush(NULL);
    pid_t p = fork();
    if (p == 0) {
        char num[32];
        setenv("DDX_EVENT", event, 1);
        setenv("DDX_EVENT_KIND", kind, 1);
        setenv("DDX_PIDS", pids.p ? pids.p : "", 1);
        setenv("DDX_RANK_PIDS", rpids.p ? rpids.p : "", 1);
        snprintf(num, sizeof num, "%ld", (long)(w->child > 0 ? w->child : 0));
        setenv("DDX_CHILD_PID", num, 1);
        if (extra_name)
            setenv(extra_name, extra ? extra : "", 1);
        int devnull = open("/dev/null", O_RDONLY);
        if (devnull >= 0)
            dup2(devnull, 0);
        dup2(2, 1);
        for (size_t i = 0; i < DX_ARRAY_LEN(forwarded); i++)
            signal(forwarded[i], SIG_DFL);
        signal(SIGPIPE, SIG_DFL);
        execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
        _exit(127);
    }
    if (p > 0)
        w->hooks[w->nhooks++] = p;
    else
        notice(w, "[watch] cannot run the %s hook: %s", kind, strerror(errno));
    dx_buf_fini(&pids);
    dx_buf_fini(&rpids);
}

/* ==== findings and stalls ==================================================================== */

static int level_rank(const char *level)
{
    return !strcmp(level, "confirmed") ? 3 : !strcmp(level, "likely") ? 2 : 1;
}

/* Whether finding i of rep is news: a new id, or a higher level than announced before. */
static int is_news(watch *w, const ddx_report *rep, size_t i)
{
    const char *id = ddx_report_id(rep, i);
    int level = level_rank(ddx_report_level(rep, i));
    size_t k = 0;
    while (k < w->nsaid && strcmp(w->said[k], id) != 0)
        k++;
    if (k < w->nsaid) {
        if (w->said_level[k] >= level)
            return 0;
        w->said_level[k] = level;
        return 1;
    }
    if (dx_grow((void **)&w->said, &w->capsaid, w->nsaid + 1, sizeof(char *)) ||
        !(w->said_level = dx_realloc(w->said_level, w->capsaid * sizeof(int))) ||
        !(w->said[k] = dx_strdup(id)))
        return 0;
    w->said_level[k] = level;
    w->nsaid++;
    return 1;
}

/* Announces finding i of rep (full: the report's JSON): one line, one event, the hook. */
static void announce(watch *w, const ddx_report *rep, const json_t *full, size_t i)
{
    const char *id = ddx_report_id(rep, i);
    const char *level = ddx_report_level(rep, i);
    json_t *d = json_array_get(json_object_get(full, "diagnoses"), i);
    json_t *o = event_new(w, "finding");
    json_object_set_new(o, "id", json_string(id));
    json_object_set_new(o, "level", json_string(level));
    json_object_set_new(o, "confidence",
                        json_real(round(ddx_report_confidence(rep, i) * 1000) / 1000));
    json_object_set_new(o, "rank_in_report", json_integer((json_int_t)i));
    int cr = ddx_report_culprit_rank(rep);
    json_object_set_new(o, "culprit_rank", cr >= 0 ? json_integer(cr) : json_null());
    dx_live_line t;
    dx_live_trigger(w->lv, &t);
    json_t *tj = json_object();
    json_object_set_new(tj, "path",
                        t.source >= 0 ? json_string(dx_live_source_name(w->lv, t.source))
                                      : json_null());
    json_object_set_new(tj, "line", json_integer((json_int_t)t.line));
    json_object_set_new(tj, "rank", t.rank >= 0 ? json_integer(t.rank) : json_null());
    json_object_set_new(tj, "text", json_string(t.text));
    json_object_set_new(tj, "after_s", json_real(round((double)(mono_us() - t.at) / 1e3) / 1e3));
    json_object_set_new(o, "trigger", tj);
    if (d) {
        json_object_set(o, "title", json_object_get(d, "title"));
        json_object_set(o, "diagnosis", d);
    }
    const char *title = json_string_value(json_object_get(o, "title"));
    json_t *fs = d ? json_object_get(d, "first_seen") : NULL;
    char where[600] = "";
    if (json_is_object(fs))
        snprintf(where, sizeof where, "; first seen %s:%lld",
                 json_string_value(json_object_get(fs, "path")),
                 (long long)json_integer_value(json_object_get(fs, "line")));
    char culprit[48] = "";
    if (cr >= 0 && i == 0)
        snprintf(culprit, sizeof culprit, ", culprit rank %d", cr);
    notice(w, "[watch] %s %s: %s (confidence %.2f%s%s)", level, id, title ? title : "",
           ddx_report_confidence(rep, i), culprit, where);
    char *text = event_emit(w, o);
    run_hook(w, w->a->on_finding, "finding", text, "DDX_FINDING_ID", id);
    free(text);
}

/* Diagnoses what arrived so far and announces what is news: the top finding, and any other
 * finding at level likely or confirmed (a second failure), each once per id (again when its
 * level rises). */
static void live_diagnosis(watch *w)
{
    ddx_report *rep = NULL;
    ddx_error e = {0};
    const char *paths[FILES_MAX];
    size_t np = 0;
    for (size_t i = 0; i < w->nf && np < FILES_MAX; i++)
        if (w->f[i].kind && w->f[i].src < 0)
            paths[np++] = w->f[i].path; /* configs and dumps are read whole */
    if (dx_live_diagnose(w->lv, paths, np, 0, &rep, &e)) {
        notice(w, "[watch] diagnosis failed: %s", e.message);
        return;
    }
    json_t *full = NULL;
    for (size_t i = 0; i < ddx_report_count(rep); i++) {
        if (i && level_rank(ddx_report_level(rep, i)) < 2)
            continue;
        if (!is_news(w, rep, i))
            continue;
        if (!full && !(full = report_json(rep)))
            break;
        announce(w, rep, full, i);
    }
    json_decref(full);
    ddx_report_free(rep);
}

static void ranks_text(dx_buf *b, const int *r, size_t n, size_t total)
{
    for (size_t i = 0; i < n; i++)
        dx_buf_addf(b, "%s%d", i ? "," : "", r[i]);
    if (total > n)
        dx_buf_addf(b, ",... (%zu in all)", total);
}

static void check_stall(watch *w, int64_t now)
{
    dx_live_stall_opts o = {w->a->stall_after > 0 ? w->a->stall_after : 0,
                            w->a->stall_factor > 0 ? w->a->stall_factor : 10,
                            w->a->stall_min > 0 ? w->a->stall_min : 60};
    dx_live_stall s;
    if (!dx_live_stall_check(w->lv, &o, now, &s))
        return;
    json_t *ev = event_new(w, "stall");
    json_object_set_new(ev, "kind", json_string(s.kind == DX_STALL_JOB ? "job" : "ranks"));
    json_object_set_new(ev, "silent_s", json_real(round(s.silent_s * 1000) / 1000));
    json_object_set_new(ev, "threshold_s", json_real(round(s.threshold_s * 1000) / 1000));
    json_object_set_new(ev, "threshold_from",
                        json_string(s.from_option ? "stall-after" : "step-time"));
    json_object_set_new(ev, "step_s",
                        s.step_s > 0 ? json_real(round(s.step_s * 1e4) / 1e4) : json_null());
    json_t *sr = json_array(), *ar = json_array(), *lr = json_array(), *last = json_array();
    for (size_t i = 0; i < s.nsilent; i++) {
        json_array_append_new(sr, json_integer(s.silent[i]));
        dx_live_rank x;
        if (dx_live_rank_info(w->lv, s.silent[i], &x))
            continue;
        json_t *l = json_object();
        json_object_set_new(l, "rank", json_integer(s.silent[i]));
        json_object_set_new(l, "path", json_string(dx_live_source_name(w->lv, x.source)));
        json_object_set_new(l, "line", json_integer((json_int_t)x.line));
        json_object_set_new(l, "text", json_string(x.last_text));
        json_object_set_new(l, "age_s", json_real(round((double)(now - x.last_at) / 1e3) / 1e3));
        json_object_set_new(l, "step", x.step >= 0 ? json_integer(x.step) : json_null());
        json_array_append_new(last, l);
    }
    for (size_t i = 0; i < s.nactive; i++)
        json_array_append_new(ar, json_integer(s.active[i]));
    for (size_t i = 0; i < s.nlagging; i++)
        json_array_append_new(lr, json_integer(s.lagging[i]));
    json_object_set_new(ev, "silent_ranks", sr);
    json_object_set_new(ev, "active_ranks", ar);
    json_object_set_new(ev, "lagging_ranks", lr);
    json_object_set_new(ev, "last_lines", last);

    dx_buf silent = {0}, active = {0};
    ranks_text(&silent, s.silent, s.nsilent, s.nsilent_total);
    ranks_text(&active, s.active, s.nactive, s.nactive);
    char thr[96];
    if (s.from_option)
        snprintf(thr, sizeof thr, "--stall-after %g s", s.threshold_s);
    else
        snprintf(thr, sizeof thr, "%.1f s, from a median step of %.3g s", s.threshold_s, s.step_s);
    if (s.kind == DX_STALL_JOB)
        notice(w, "[watch] stall: no progress on any rank for %.1f s (threshold %s); ranks %s",
               s.silent_s, thr, silent.n ? silent.p : "(none known)");
    else
        notice(w,
               "[watch] stall: rank%s %s silent for %.1f s while rank%s %s progress (threshold "
               "%s)",
               s.nsilent > 1 ? "s" : "", silent.p, s.silent_s, s.nactive > 1 ? "s" : "", active.p,
               thr);
    char *text = event_emit(w, ev);
    run_hook(w, w->a->on_stall, "stall", text, "DDX_SILENT_RANKS", silent.p ? silent.p : "");
    free(text);
    dx_buf_fini(&silent);
    dx_buf_fini(&active);
}

/* ==== following files ======================================================================== */

static follow *follow_find(watch *w, const char *path)
{
    for (size_t i = 0; i < w->nf; i++)
        if (!strcmp(w->f[i].path, path))
            return &w->f[i];
    return NULL;
}

static void follow_add(watch *w, const char *path)
{
    if (follow_find(w, path))
        return;
    if (w->nf >= FILES_MAX) {
        if (!w->files_full++)
            notice(w, "[watch] following the first %d files only", FILES_MAX);
        return;
    }
    if (dx_grow((void **)&w->f, &w->capf, w->nf + 1, sizeof(follow)))
        return;
    follow *f = &w->f[w->nf];
    memset(f, 0, sizeof *f);
    if (!(f->path = dx_strdup(path)))
        return;
    f->fd = -1;
    f->src = -1;
    w->nf++;
}

static void add_watch(watch *w, const char *dir)
{
    if (w->ino_fd >= 0)
        inotify_add_watch(w->ino_fd, dir,
                          IN_MODIFY | IN_CREATE | IN_MOVED_TO | IN_MOVED_FROM | IN_DELETE |
                              IN_CLOSE_WRITE | IN_ATTRIB);
}

static void walk_dir(watch *w, dx_buf *path, int depth)
{
    DIR *d = opendir(dx_buf_cstr(path));
    if (!d)
        return;
    add_watch(w, path->p);
    size_t base = path->n;
    struct dirent *de;
    while ((de = readdir(d))) {
        if (de->d_name[0] == '.')
            continue; /* ., .., hidden files */
        path->n = base;
        dx_buf_addf(path, "%s%s", path->p[base - 1] == '/' ? "" : "/", de->d_name);
        struct stat st;
        if (stat(path->p, &st) != 0)
            continue;
        if (S_ISDIR(st.st_mode) && depth < DEPTH_MAX)
            walk_dir(w, path, depth + 1);
        else if (S_ISREG(st.st_mode))
            follow_add(w, path->p);
    }
    path->n = base;
    path->p[base] = '\0';
    closedir(d);
}

/* Finds the files under the roots (new ones appear as the job writes them). */
static void rescan(watch *w)
{
    dx_buf path = {0};
    for (size_t i = 0; i < w->nroots; i++) {
        struct stat st;
        if (stat(w->roots[i], &st) != 0)
            continue; /* not there yet: the job may create it */
        if (S_ISDIR(st.st_mode)) {
            path.n = 0;
            dx_buf_addf(&path, "%s", w->roots[i]);
            walk_dir(w, &path, 0);
        } else {
            follow_add(w, w->roots[i]);
            char *slash = strrchr(w->roots[i], '/');
            path.n = 0;
            if (slash)
                dx_buf_add(&path, w->roots[i], (size_t)(slash - w->roots[i]) + 1);
            else
                dx_buf_addf(&path, ".");
            add_watch(w, dx_buf_cstr(&path)); /* a rotation renames and creates in the folder */
        }
    }
    dx_buf_fini(&path);
}

/* Decides what a new file is from its name and first bytes: a log (followed line by line) or
 * something read whole at each diagnosis (a config, a flight-recorder dump). 0: too early. */
static int classify(watch *w, follow *f)
{
    char head[4096];
    ssize_t n = pread(f->fd, head, sizeof head, 0);
    if (n <= 0)
        return 0;
    if (n < (ssize_t)sizeof head && !memchr(head, '\n', (size_t)n))
        return 0; /* not even one line yet */
    f->kind = dx_input_classify(f->path, head, (size_t)n);
    if (f->kind == DX_KIND_LOG || f->kind == DX_KIND_ENV) {
        ddx_error e = {0};
        if (dx_live_add_source(w->lv, f->path, 1, &f->src, &e))
            f->kind = 0;
    }
    return f->kind;
}

static void follow_close(watch *w, follow *f, int64_t now)
{
    if (f->fd >= 0)
        close(f->fd);
    f->fd = -1;
    f->off = 0;
    if (f->src >= 0)
        dx_live_restart(w->lv, f->src, now);
}

/* Reads what is new in every followed file; handles truncation and rotation. */
static void poll_files(watch *w, int64_t now)
{
    static char buf[READ_MAX];
    for (size_t i = 0; i < w->nf; i++) {
        follow *f = &w->f[i];
        if (f->fd < 0) {
            f->fd = open(f->path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
            if (f->fd < 0)
                continue;
            struct stat st;
            if (fstat(f->fd, &st) == 0) {
                f->dev = st.st_dev;
                f->ino = st.st_ino;
            }
            f->off = 0;
        }
        if (!f->kind && !classify(w, f))
            continue;
        if (f->src < 0)
            continue; /* read whole at each diagnosis */
        struct stat st;
        if (fstat(f->fd, &st) == 0 && st.st_size < f->off) {
            /* truncated (copytruncate): the job writes from the start again */
            dx_live_restart(w->lv, f->src, now);
            f->off = 0;
        }
        for (int rounds = 0; rounds < 64; rounds++) {
            ssize_t n = pread(f->fd, buf, sizeof buf, f->off);
            if (n <= 0)
                break;
            f->off += n;
            dx_live_feed(w->lv, f->src, buf, (size_t)n, now);
        }
        /* rotated or removed: what the old file held is read; follow the new one */
        struct stat ps;
        if (stat(f->path, &ps) != 0 || ps.st_ino != f->ino || ps.st_dev != f->dev)
            follow_close(w, f, now);
    }
}

/* ==== the child ============================================================================== */

/* A pseudo-terminal in raw mode (bytes pass unchanged) sized like ours; the master is *m. */
static int open_pty(int like, int *m, int *s)
{
    *m = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
    if (*m < 0)
        return -1;
    char name[128];
    if (grantpt(*m) || unlockpt(*m) || ptsname_r(*m, name, sizeof name)) {
        close(*m);
        return -1;
    }
    *s = open(name, O_RDWR | O_NOCTTY);
    if (*s < 0) {
        close(*m);
        return -1;
    }
    struct termios t;
    if (tcgetattr(*s, &t) == 0) {
        cfmakeraw(&t);
        tcsetattr(*s, TCSANOW, &t);
    }
    struct winsize ws;
    if (ioctl(like, TIOCGWINSZ, &ws) == 0)
        ioctl(*m, TIOCSWINSZ, &ws);
    return 0;
}

static void copy_winsize(watch *w)
{
    for (int i = 0; i < 2; i++) {
        struct winsize ws;
        if (w->st[i].fd >= 0 && isatty(w->st[i].out) && ioctl(w->st[i].out, TIOCGWINSZ, &ws) == 0)
            ioctl(w->st[i].fd, TIOCSWINSZ, &ws);
    }
    if (w->child > 0)
        kill(-w->child, SIGWINCH);
}

static int start_child(watch *w)
{
    int rd[2], wr[2];
    for (int i = 0; i < 2; i++) {
        int ours = i + 1;
        if (isatty(ours) && open_pty(ours, &rd[i], &wr[i]) == 0)
            continue;
        int p[2];
        if (pipe(p))
            return cli_fail("watch: cannot make a pipe: %s", strerror(errno));
        rd[i] = p[0];
        wr[i] = p[1];
        fcntl(rd[i], F_SETFD, FD_CLOEXEC);
    }
    int fg = isatty(STDIN_FILENO) && tcgetpgrp(STDIN_FILENO) == getpgrp();
    int exec_err[2];
    if (pipe(exec_err))
        return cli_fail("watch: cannot make a pipe: %s", strerror(errno));
    fcntl(exec_err[0], F_SETFD, FD_CLOEXEC);
    fcntl(exec_err[1], F_SETFD, FD_CLOEXEC);
    fflush(NULL);
    pid_t p = fork();
    if (p < 0)
        return cli_fail("watch: cannot start %s: %s", w->a->cmd[0], strerror(errno));
    if (p == 0) {
        setpgid(0, 0);
        if (fg) {
            signal(SIGTTOU, SIG_IGN);
            tcsetpgrp(STDIN_FILENO, getpid());
        }
        sigset_t none;
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, NULL);
        for (int s = 1; s < NSIG; s++)
            if (s != SIGKILL && s != SIGSTOP)
                signal(s, SIG_DFL);
        dup2(wr[0], 1);
        dup2(wr[1], 2);
        close(wr[0]);
        close(wr[1]);
        close(exec_err[0]);
        execvp(w->a->cmd[0], w->a->cmd);
        int e = errno;
        if (write(exec_err[1], &e, sizeof e) < 0) {
            /* nothing more to say */
        }
        _exit(127);
    }
    setpgid(p, p);
    if (fg) {
        signal(SIGTTOU, SIG_IGN);
        tcsetpgrp(STDIN_FILENO, p);
        w->foreground = 1;
    }
    w->child = p;
    close(wr[0]);
    close(wr[1]);
    close(exec_err[1]);
    int e = 0;
    ssize_t n;
    while ((n = read(exec_err[0], &e, sizeof e)) < 0 && errno == EINTR) {
    }
    close(exec_err[0]);
    if (n == (ssize_t)sizeof e) {
        cli_fail("watch: cannot run '%s': %s", w->a->cmd[0], strerror(e));
        waitpid(p, NULL, 0);
        w->child = -1;
        close(rd[0]);
        close(rd[1]);
        return e == ENOENT ? 127 : 126;
    }
    static const char *const names[] = {"<stdout>", "<stderr>"};
    for (int i = 0; i < 2; i++) {
        ddx_error err = {0};
        w->st[i].fd = rd[i];
        w->st[i].out = i + 1;
        set_nonblock(rd[i]);
        if (dx_live_add_source(w->lv, names[i], 0, &w->st[i].src, &err))
            return cli_fail("%s", err.message);
    }
    return 0;
}

/* Writes all n bytes to fd; 0, or -1 with errno (EPIPE: the reader is gone). */
static int write_all(int fd, const char *p, size_t n)
{
    while (n) {
        ssize_t k = write(fd, p, n);
        if (k < 0) {
            if (errno == EINTR)
                continue;
            if (errno == EAGAIN) {
                struct pollfd pf = {fd, POLLOUT, 0};
                poll(&pf, 1, 1000);
                continue;
            }
            return -1;
        }
        p += k;
        n -= (size_t)k;
    }
    return 0;
}

/* Passes what the child wrote on stream i through, and feeds it to the diagnosis. */
static void pump(watch *w, int i, int64_t now)
{
    static char buf[READ_MAX];
    stream *s = &w->st[i];
    ssize_t n = read(s->fd, buf, sizeof buf);
    if (n < 0 && (errno == EAGAIN || errno == EINTR))
        return;
    if (n <= 0) { /* EOF, or EIO: a pseudo-terminal whose every writer is gone */
        close(s->fd);
        s->fd = -1;
        dx_live_end_line(w->lv, s->src, now);
        return;
    }
    if (!s->closed && write_all(s->out, buf, (size_t)n) < 0) {
        /* our reader is gone: so is the job's, as if it ran bare */
        s->closed = 1;
        close(s->fd);
        s->fd = -1;
    }
    s->lastc = buf[n - 1];
    dx_live_feed(w->lv, s->src, buf, (size_t)n, now);
}

static void child_exited(watch *w, int status, int64_t now)
{
    w->child_done = 1;
    w->child_status = status;
    w->child_done_at = now;
    if (w->foreground) {
        tcsetpgrp(STDIN_FILENO, getpgrp());
        w->foreground = 0;
    }
    json_t *o = event_new(w, "exit");
    if (WIFEXITED(status)) {
        json_object_set_new(o, "status", json_integer(WEXITSTATUS(status)));
        json_object_set_new(o, "signal", json_null());
    } else {
        json_object_set_new(o, "status", json_integer(128 + WTERMSIG(status)));
        json_object_set_new(o, "signal", json_integer(WTERMSIG(status)));
    }
    free(event_emit(w, o));
}

static void reap(watch *w, int64_t now)
{
    int st;
    if (w->child > 0 && !w->child_done) {
        pid_t r = waitpid(w->child, &st, WNOHANG);
        if (r == w->child)
            child_exited(w, st, now);
    }
    reap_hooks(w, 0);
}

static void handle_signal(watch *w, int sig)
{
    if (sig == SIGCHLD)
        return; /* reaped by the loop */
    if (sig == SIGWINCH) {
        copy_winsize(w);
        return;
    }
    if (w->child > 0 && !w->child_done) {
        int kill_it = (sig == SIGINT || sig == SIGTERM) && ++w->fwd_count >= 3;
        kill(-w->child, kill_it ? SIGKILL : sig);
        return;
    }
    w->stop = 1; /* following files only: end, with the diagnosis */
}

/* ==== the loop =============================================================================== */

static void drain_inotify(watch *w, int *rescan_now)
{
    char buf[8192] __attribute__((aligned(__alignof__(struct inotify_event))));
    ssize_t n;
    while ((n = read(w->ino_fd, buf, sizeof buf)) > 0) {
        for (char *p = buf; p < buf + n;) {
            struct inotify_event *ev = (struct inotify_event *)p;
            if (ev->mask & (IN_CREATE | IN_MOVED_TO | IN_Q_OVERFLOW))
                *rescan_now = 1;
            p += sizeof *ev + ev->len;
        }
    }
}

static int setup_signals(void)
{
    if (pipe(sig_pipe))
        return -1;
    for (int i = 0; i < 2; i++) {
        set_nonblock(sig_pipe[i]);
        fcntl(sig_pipe[i], F_SETFD, FD_CLOEXEC);
    }
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART;
    for (size_t i = 0; i < DX_ARRAY_LEN(forwarded); i++)
        sigaction(forwarded[i], &sa, NULL);
    sigaction(SIGCHLD, &sa, NULL);
    sigaction(SIGWINCH, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);
    return 0;
}

/* Whether pid runs (a zombie its parent has not reaped yet has ended). */
static int pid_alive(pid_t pid)
{
    if (kill(pid, 0) != 0 && errno == ESRCH)
        return 0;
    char path[64], buf[512];
    snprintf(path, sizeof path, "/proc/%ld/stat", (long)pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return 1;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    const char *rp = strrchr(buf, ')');
    return !(rp && rp[1] == ' ' && (rp[2] == 'Z' || rp[2] == 'X'));
}

static int loop(watch *w)
{
    int64_t next_tick = mono_us();
    while (!w->stop) {
        int64_t now = mono_us();
        struct pollfd pf[4];
        int idx[4];
        int n = 0;
        pf[n] = (struct pollfd){sig_pipe[0], POLLIN, 0};
        idx[n++] = -1;
        for (int i = 0; i < 2; i++)
            if (w->st[i].fd >= 0) {
                pf[n] = (struct pollfd){w->st[i].fd, POLLIN, 0};
                idx[n++] = i;
            }
        if (w->ino_fd >= 0) {
            pf[n] = (struct pollfd){w->ino_fd, POLLIN, 0};
            idx[n++] = 2;
        }
        int64_t wake = next_tick;
        int64_t due = dx_live_due(w->lv);
        if (due && due < wake)
            wake = due;
        if (w->pending.n && w->pending_since + NOTICE_WAIT_US < wake)
            wake = w->pending_since + NOTICE_WAIT_US;
        int timeout = wake > now ? (int)((wake - now + 999) / 1000) : 0;
        int r = poll(pf, (nfds_t)n, timeout);
        now = mono_us();
        if (r < 0 && errno != EINTR)
            return cli_fail("watch: poll: %s", strerror(errno));
        int rescan_now = 0, files_now = 0;
        for (int i = 0; r > 0 && i < n; i++) {
            if (!pf[i].revents)
                continue;
            if (idx[i] == -1) {
                unsigned char sigs[64];
                ssize_t k = read(sig_pipe[0], sigs, sizeof sigs);
                for (ssize_t j = 0; j < k; j++)
                    handle_signal(w, sigs[j]);
            } else if (idx[i] == 2) {
                drain_inotify(w, &rescan_now);
                files_now = 1;
            } else
                pump(w, idx[i], now);
        }
        reap(w, now);
        if (rescan_now || (w->nroots && now >= w->next_rescan)) {
            rescan(w);
            w->next_rescan = now + RESCAN_US;
            files_now = 1;
        }
        if (now >= next_tick) {
            files_now = 1;
            next_tick = now + TICK_US;
        }
        if (files_now && w->nf)
            poll_files(w, now);
        due = dx_live_due(w->lv);
        if (due && now >= due)
            live_diagnosis(w);
        if (w->nroots || w->child > 0)
            check_stall(w, now);
        flush_pending(w, 0);
        /* the end: the child is gone and its output ended (or stayed open too long after) */
        if (w->child > 0 && w->child_done &&
            ((w->st[0].fd < 0 && w->st[1].fd < 0) || now - w->child_done_at > DRAIN_US))
            break;
        if (w->child <= 0 && w->a->pid > 0 && !pid_alive((pid_t)w->a->pid))
            break;
    }
    return 0;
}

/* ==== the command ============================================================================ */

static int final_diagnosis(watch *w)
{
    int64_t now = mono_us();
    for (int i = 0; i < 2; i++)
        if (w->st[i].src >= 0 && w->child > 0)
            dx_live_end_line(w->lv, w->st[i].src, now);
    if (w->nf)
        poll_files(w, now);
    /* a failure line still waiting for its burst to end: announce it (and run the hook) */
    if (dx_live_due(w->lv))
        live_diagnosis(w);
    /* the files are read whole (they are on disk); the streams from the digest */
    ddx_report *rep = NULL;
    ddx_error e = {0};
    const char **paths = dx_calloc(w->nroots + 1, sizeof(char *));
    size_t np = 0;
    for (size_t i = 0; paths && i < w->nroots; i++) {
        struct stat st;
        if (stat(w->roots[i], &st) == 0)
            paths[np++] = w->roots[i];
    }
    int rc = paths
                 ? dx_live_diagnose(w->lv, paths, np,
                                    DX_LIVE_STREAMS_ONLY | (w->a->all ? DDX_DIAG_ALL : 0), &rep, &e)
                 : DDX_ENOMEM;
    dx_free(paths);
    if (rc) {
        cli_fail("watch: %s", e.message[0] ? e.message : "out of memory");
        return -1;
    }
    flush_pending(w, 1);
    int found = ddx_report_count(rep) > 0;
    if (w->child > 0) {
        int st = w->child_status;
        if (WIFEXITED(st))
            fprintf(w->out, "ddx: [watch] the job ended with exit status %d; %s\n", WEXITSTATUS(st),
                    found ? "the diagnosis:" : "no known failure found.");
        else
            fprintf(w->out, "ddx: [watch] the job ended by signal %d (%s); %s\n", WTERMSIG(st),
                    strsignal(WTERMSIG(st)), found ? "the diagnosis:" : "no known failure found.");
    }
    if (found || w->child <= 0 || w->a->json) {
        if (w->a->json)
            rc = ddx_report_write_json(rep, w->out, &e);
        else
            rc = ddx_report_write_text(rep, cli_text_flags(w->a, w->out), w->out, &e);
    }
    fflush(w->out);
    json_t *o = event_new(w, "end");
    json_t *full = report_json(rep);
    json_object_set_new(o, "report", full ? full : json_null());
    dx_live_stats ls;
    dx_live_get_stats(w->lv, &ls);
    json_t *stats = json_object();
    json_object_set_new(stats, "lines", json_integer((json_int_t)ls.lines));
    json_object_set_new(stats, "kept_lines", json_integer((json_int_t)ls.kept_lines));
    json_object_set_new(stats, "kept_bytes", json_integer((json_int_t)ls.kept_bytes));
    json_object_set_new(stats, "diagnoses", json_integer((json_int_t)ls.diagnoses));
    json_object_set_new(o, "stats", stats);
    free(event_emit(w, o));
    ddx_report_free(rep);
    return rc ? -1 : found;
}

static void watch_fini(watch *w)
{
    for (size_t i = 0; i < w->nf; i++) {
        if (w->f[i].fd >= 0)
            close(w->f[i].fd);
        dx_free(w->f[i].path);
    }
    dx_free(w->f);
    for (size_t i = 0; i < w->nsaid; i++)
        dx_free(w->said[i]);
    dx_free(w->said);
    dx_free(w->said_level);
    dx_buf_fini(&w->pending);
    for (int i = 0; i < 2; i++)
        if (w->st[i].fd >= 0)
            close(w->st[i].fd);
    if (w->ino_fd >= 0)
        close(w->ino_fd);
    if (w->events && w->events != stdout)
        fclose(w->events);
    if (w->out && w->out != stderr && w->out != stdout)
        fclose(w->out);
    dx_live_free(w->lv);
    ddx_kb_close(w->kb);
}

int cli_watch(cli_args *a)
{
    if (a->cmd && !a->ncmd)
        return cli_fail("watch: nothing after --: give the command to run");
    if (!a->nargs && !a->ncmd)
        return cli_fail("watch: give a command after -- (ddx watch -- torchrun ...), or the "
                        "log files and folders of a running job to follow; see 'ddx watch "
                        "--help'");
    if (a->pid > 0 && a->ncmd)
        return cli_fail("watch: --pid is for following files; with a command, ddx watches "
                        "the command itself");
    watch w;
    memset(&w, 0, sizeof w);
    w.a = a;
    w.child = -1;
    w.ino_fd = -1;
    w.st[0].fd = w.st[1].fd = -1;
    w.st[0].src = w.st[1].src = -1;
    w.roots = a->args;
    w.nroots = a->nargs;
    w.t0 = mono_us();
    w.out = stderr;
    int status = 2;
    ddx_error e = {0};
    if (cli_open_kb(a, &w.kb))
        return 2;
    if (dx_live_new(&w.lv, w.kb, 0, &e)) {
        cli_fail("%s", e.message);
        goto done;
    }
    if (a->output && !(w.out = fopen(a->output, "w"))) {
        w.out = stderr;
        cli_fail("watch: cannot write %s: %s", a->output, strerror(errno));
        goto done;
    }
    if (a->events) {
        w.events = !strcmp(a->events, "-") ? stdout : fopen(a->events, "w");
        if (!w.events) {
            cli_fail("watch: cannot write %s: %s", a->events, strerror(errno));
            goto done;
        }
    }
    for (size_t i = 0; i < a->nargs; i++) {
        struct stat st;
        if (stat(a->args[i], &st) != 0 && !a->ncmd) {
            cli_fail("watch: %s: %s (give the log files or folders of a running job; with a "
                     "command after --, a folder the job will create may be named)",
                     a->args[i], strerror(errno));
            goto done;
        }
    }
    if (setup_signals()) {
        cli_fail("watch: cannot set up signals: %s", strerror(errno));
        goto done;
    }
    if (a->nargs) {
        w.ino_fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
        rescan(&w);
        w.next_rescan = mono_us() + RESCAN_US;
    }
    json_t *o = event_new(&w, "start");
    json_object_set_new(o, "ddx_version", json_string(DDX_VERSION));
    json_t *cmd = json_array(), *paths = json_array();
    for (size_t i = 0; i < a->ncmd; i++)
        json_array_append_new(cmd, json_string(a->cmd[i]));
    for (size_t i = 0; i < a->nargs; i++)
        json_array_append_new(paths, json_string(a->args[i]));
    json_object_set_new(o, "command", cmd);
    json_object_set_new(o, "paths", paths);
    if (a->ncmd) {
        int rc = start_child(&w);
        if (rc) {
            json_decref(o);
            status = rc;
            goto done;
        }
        json_object_set_new(o, "pid", json_integer(w.child));
    }
    free(event_emit(&w, o));
    if (loop(&w))
        goto done;
    int found = final_diagnosis(&w);
    reap_hooks(&w, 1);
    if (a->ncmd) {
        if (!w.child_done) {
            /* the output ended but the child did not: wait for it */
            int st;
            if (waitpid(w.child, &st, 0) == w.child)
                child_exited(&w, st, mono_us());
        }
        status = WIFEXITED(w.child_status) ? WEXITSTATUS(w.child_status)
                                           : 128 + WTERMSIG(w.child_status);
    } else
        status = found < 0 ? 2 : found;
done:
    watch_fini(&w);
    return status;
}
