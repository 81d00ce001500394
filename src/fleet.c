/* fleet.c -- the fleet store (SQLite) and the report across jobs (see fleet.h, docs/fleet.md).
 *
 * Schema versions are rows of `migrations` below, applied in order inside one transaction each
 * and recorded in PRAGMA user_version; PRAGMA application_id marks the file as ddx's. Nothing is
 * written to a file before it is known to be a ddx store (or a new, empty one).
 *
 * The bad-host test: a job counts when its culprit rank is known and is not rank 0, it ran on
 * two or more hosts, and the culprit's host is one of them. Under the null hypothesis the
 * culprit's host is any of the job's hosts with equal chance, so host h is the culprit of job j
 * with probability 1/n_j. The number of jobs that blame h is then a sum of independent
 * Bernoulli trials (Poisson-binomial; binomial when the n_j are equal), and its one-sided
 * p-value is the exact upper tail P(X >= observed). Holm's step-down procedure over every host
 * tested keeps the family-wise error rate at alpha; a host is flagged when its adjusted p-value
 * is at most alpha and it is the culprit of two jobs or more.
 */
#include "fleet.h"

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <nettle/sha2.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <time.h>

#include "slurm.h"

#define APP_ID 0x64647866 /* "ddxf" */
#define INGEST_BATCH 500  /* reports per transaction while ingesting */
#define REPORT_MAX (64u << 20)
#define CLASS_JOBS 20 /* job ids listed per failure class */
#define HOST_JOBS 50  /* evidence jobs listed per flagged host */
#define HOSTS_CLOSE 5 /* unflagged hosts shown for comparison */
#define NODES_MAX 100000

struct dx_fleet {
    sqlite3 *db;
    char *path;
    int busy_ms;
};

/* ==== schema ================================================================================= */

static const char *const migrations[] = {
    /* 1: one row per job: its metadata, the top finding and the report it came from */
    "CREATE TABLE jobs ("
    " id INTEGER PRIMARY KEY,"
    " job_key TEXT NOT NULL UNIQUE," /* cluster/job id, or sha256:<report> */
    " cluster TEXT, job_id TEXT, user TEXT, partition TEXT,"
    " nodes TEXT," /* host names, comma-separated, in task order */
    " nnodes INTEGER,"
    " start_time INTEGER, end_time INTEGER," /* Unix seconds */
    " state TEXT, exit_code TEXT,"
    " finding TEXT, title TEXT, category TEXT, level TEXT, confidence REAL,"
    " culprit_rank INTEGER, culprit_host TEXT,"
    " evidence TEXT," /* where the finding was first seen, and the line */
    " source TEXT,"   /* the report's file, when it came from one */
    " report_sha TEXT NOT NULL,"
    " report TEXT NOT NULL,"
    " recorded_at INTEGER NOT NULL);"
    "CREATE INDEX jobs_end ON jobs(end_time);"
    "CREATE INDEX jobs_finding ON jobs(finding);",
    /* 2: the hosts of each job as rows, for the per-host test (filled from jobs.nodes) */
    "CREATE TABLE job_nodes ("
    " job INTEGER NOT NULL REFERENCES jobs(id) ON DELETE CASCADE,"
    " host TEXT NOT NULL,"
    " PRIMARY KEY (job, host)) WITHOUT ROWID;"
    "CREATE INDEX job_nodes_host ON job_nodes(host);"
    "WITH RECURSIVE split(job, host, rest) AS ("
    "  SELECT id, '', nodes || ',' FROM jobs WHERE nodes IS NOT NULL AND nodes <> ''"
    "  UNION ALL"
    "  SELECT job, substr(rest, 1, instr(rest, ',') - 1), substr(rest, instr(rest, ',') + 1)"
    "  FROM split WHERE rest <> '')"
    " INSERT OR IGNORE INTO job_nodes SELECT job, host FROM split WHERE host <> '';",
};
_Static_assert(DX_ARRAY_LEN(migrations) == DX_FLEET_SCHEMA, "one migration per version");

/* ==== errors ================================================================================= */

/* SQLite's failures as people read them: what happened, and what to do. */
static const struct {
    int code; /* primary result code */
    int status;
    const char *what, *advice;
} db_errors[] = {
    {SQLITE_BUSY, DDX_EIO, "the fleet store is locked by another process",
     "nothing was written; try again"},
    {SQLITE_LOCKED, DDX_EIO, "the fleet store is locked by another process",
     "nothing was written; try again"},
    {SQLITE_NOTADB, DDX_EFORMAT, "not a ddx fleet store, or a damaged one",
     "it was left as it is: move it aside to start a new store, or restore a copy"},
    {SQLITE_CORRUPT, DDX_EFORMAT, "not a ddx fleet store, or a damaged one",
     "it was left as it is: move it aside to start a new store, or restore a copy"},
    {SQLITE_READONLY, DDX_EIO, "cannot open or write the fleet store",
     "check the path and its permissions"},
    {SQLITE_CANTOPEN, DDX_EIO, "cannot open or write the fleet store",
     "check the path and its permissions"},
    {SQLITE_PERM, DDX_EIO, "cannot open or write the fleet store",
     "check the path and its permissions"},
    {SQLITE_FULL, DDX_EIO, "the disk is full", "nothing was written"},
};

/* A clear message for an SQLite failure while doing something to the store. */
static int db_err(dx_fleet *f, int rc, ddx_error *err, const char *doing)
{
    char detail[300];
    const char *what = NULL, *advice = "nothing was written";
    int status = DDX_EIO;
    for (size_t i = 0; i < DX_ARRAY_LEN(db_errors); i++)
        if (db_errors[i].code == (rc & 0xff)) {
            what = db_errors[i].what;
            advice = db_errors[i].advice;
            status = db_errors[i].status;
        }
    if ((rc & 0xff) == SQLITE_BUSY || (rc & 0xff) == SQLITE_LOCKED)
        snprintf(detail, sizeof detail, "waited %d ms", f->busy_ms);
    else
        snprintf(detail, sizeof detail, "%s", f->db ? sqlite3_errmsg(f->db) : sqlite3_errstr(rc));
    if (!what)
        return dx_err(err, status, "%s: %s while %s; %s", f->path, detail, doing, advice);
    return dx_err(err, status, "%s: %s (%s) while %s; %s", f->path, what, detail, doing, advice);
}

static int exec(dx_fleet *f, const char *sql, ddx_error *err, const char *doing)
{
    int rc = sqlite3_exec(f->db, sql, NULL, NULL, NULL);
    return rc == SQLITE_OK ? DDX_OK : db_err(f, rc, err, doing);
}

static int query_int(dx_fleet *f, const char *sql, long long *out)
{
    sqlite3_stmt *st;
    int rc = sqlite3_prepare_v2(f->db, sql, -1, &st, NULL);
    if (rc != SQLITE_OK)
        return rc;
    rc = sqlite3_step(st);
    *out = rc == SQLITE_ROW ? sqlite3_column_int64(st, 0) : 0;
    sqlite3_finalize(st);
    return rc == SQLITE_ROW || rc == SQLITE_DONE ? SQLITE_OK : rc;
}

static void rollback(dx_fleet *f) { sqlite3_exec(f->db, "ROLLBACK", NULL, NULL, NULL); }

/* ==== opening ================================================================================ */

void dx_fleet_close(dx_fleet *f)
{
    if (!f)
        return;
    sqlite3_close(f->db);
    dx_free(f->path);
    dx_free(f);
}

int dx_fleet_version(dx_fleet *f)
{
    long long v = 0;
    return query_int(f, "PRAGMA user_version", &v) == SQLITE_OK ? (int)v : -1;
}

int dx_fleet_open(dx_fleet **out, const char *path, int busy_ms, int version, ddx_error *err)
{
    *out = NULL;
    dx_fleet *f = dx_calloc(1, sizeof *f);
    if (!f || !(f->path = dx_strdup(path))) {
        dx_free(f);
        return dx_err(err, DDX_ENOMEM, "out of memory");
    }
    f->busy_ms = busy_ms > 0 ? busy_ms : DX_FLEET_BUSY_MS;
    int target = version > 0 && version <= DX_FLEET_SCHEMA ? version : DX_FLEET_SCHEMA;
    int rc = sqlite3_open_v2(
        path, &f->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, NULL);
    if (rc != SQLITE_OK) {
        rc = db_err(f, rc, err, "opening it");
        dx_fleet_close(f);
        return rc;
    }
    sqlite3_extended_result_codes(f->db, 1);
    sqlite3_busy_timeout(f->db, f->busy_ms);
    /* read before anything is written: is it ours (or new and empty)? */
    long long app = 0, ver = 0, tables = 0;
    if ((rc = query_int(f, "PRAGMA application_id", &app)) ||
        (rc = query_int(f, "PRAGMA user_version", &ver)) ||
        (rc = query_int(f, "SELECT count(*) FROM sqlite_schema WHERE type = 'table'", &tables))) {
        rc = db_err(f, rc, err, "reading its header");
        dx_fleet_close(f);
        return rc;
    }
    if (app != APP_ID && (app != 0 || tables > 0)) {
        rc = dx_err(err, DDX_EFORMAT,
                    "%s: an SQLite database, but not a ddx fleet store (it holds other data); "
                    "it was left as it is: give another path (--db)",
                    path);
        dx_fleet_close(f);
        return rc;
    }
    if (ver > DX_FLEET_SCHEMA) {
        rc = dx_err(err, DDX_EFORMAT,
                    "%s: written by a newer ddx (store schema %lld, this ddx knows %d); it was "
                    "left as it is: use that ddx or a newer one",
                    path, ver, DX_FLEET_SCHEMA);
        dx_fleet_close(f);
        return rc;
    }
    if ((rc = exec(f, "PRAGMA journal_mode = WAL", err, "turning on its write-ahead log")) ||
        (rc = exec(f, "PRAGMA foreign_keys = ON", err, "opening it"))) {
        dx_fleet_close(f);
        return rc;
    }
    for (long long v = ver + 1; v <= target; v++) {
        char doing[64], bump[96];
        snprintf(doing, sizeof doing, "upgrading it to schema %lld", v);
        /* the first version also marks the file as a ddx store */
        snprintf(bump, sizeof bump, "PRAGMA user_version = %lld;%s%d", v,
                 v == 1 ? "PRAGMA application_id = " : "-- ", APP_ID);
        if ((rc = exec(f, "BEGIN IMMEDIATE", err, doing)))
            break;
        if ((rc = exec(f, migrations[v - 1], err, doing)) || (rc = exec(f, bump, err, doing)) ||
            (rc = exec(f, "COMMIT", err, doing))) {
            rollback(f);
            break;
        }
    }
    if (rc) {
        dx_fleet_close(f);
        return rc;
    }
    *out = f;
    return DDX_OK;
}

/* ==== time =================================================================================== */

int dx_fleet_parse_when(const char *s, int64_t now, int64_t *out)
{
    char *end;
    double v = strtod(s, &end);
    static const struct {
        char unit;
        int64_t secs;
    } units[] = {{'s', 1}, {'m', 60}, {'h', 3600}, {'d', 86400}, {'w', 7 * 86400}};
    for (size_t i = 0; end != s && i < DX_ARRAY_LEN(units); i++)
        if (end[0] == units[i].unit && !end[1] && v >= 0 && v < 1e6) {
            *out = now - (int64_t)(v * (double)units[i].secs);
            return 0;
        }
    struct tm tm;
    memset(&tm, 0, sizeof tm);
    int y, mo, d, h = 0, mi = 0, sec = 0, n = 0;
    if (sscanf(s, "%4d-%2d-%2d%n", &y, &mo, &d, &n) != 3 || mo < 1 || mo > 12 || d < 1 || d > 31)
        return -1;
    const char *p = s + n;
    if (*p == 'T' || *p == ' ') {
        int k = 0;
        if (sscanf(p + 1, "%2d:%2d%n", &h, &mi, &k) != 2)
            return -1;
        p += 1 + k;
        if (*p == ':') {
            if (sscanf(p + 1, "%2d%n", &sec, &k) != 1)
                return -1;
            p += 1 + k;
        }
        if (*p == '.' || *p == ',')
            for (p++; *p >= '0' && *p <= '9'; p++) {
            }
    }
    tm.tm_year = y - 1900;
    tm.tm_mon = mo - 1;
    tm.tm_mday = d;
    tm.tm_hour = h;
    tm.tm_min = mi;
    tm.tm_sec = sec;
    if (!*p) {
        tm.tm_isdst = -1;
        *out = (int64_t)mktime(&tm); /* no zone: local time, as Slurm prints it */
        return 0;
    }
    int64_t off = 0;
    if (*p == 'Z' && !p[1])
        off = 0;
    else if ((*p == '+' || *p == '-') && strlen(p) >= 3) {
        int oh = 0, om = 0;
        if (sscanf(p + 1, "%2d:%2d", &oh, &om) < 1 && sscanf(p + 1, "%2d%2d", &oh, &om) < 1)
            return -1;
        off = (*p == '+' ? 1 : -1) * ((int64_t)oh * 3600 + om * 60);
    } else
        return -1;
    *out = (int64_t)timegm(&tm) - off;
    return 0;
}

/* ==== recording ============================================================================== */

static const char *jstr(const json_t *o, const char *key)
{
    return json_string_value(json_object_get(o, key));
}

/* A JSON value as text: strings as they are, integers printed (job ids come as either). */
static const char *jtext(const json_t *v, char *buf, size_t cap)
{
    if (json_is_string(v))
        return json_string_value(v);
    if (json_is_integer(v)) {
        snprintf(buf, cap, "%lld", (long long)json_integer_value(v));
        return buf;
    }
    return NULL;
}

static void sha256_hex(const char *p, size_t n, char hex[65])
{
    struct sha256_ctx c;
    uint8_t d[SHA256_DIGEST_SIZE];
    sha256_init(&c);
    sha256_update(&c, n, (const uint8_t *)p);
    sha256_digest(&c, sizeof d, d);
    for (size_t i = 0; i < sizeof d; i++)
        snprintf(hex + 2 * i, 3, "%02x", d[i]);
}

typedef struct jobrow {
    const char *cluster, *job_id, *user, *partition, *state, *exit_code;
    dx_buf nodes; /* expanded, comma-separated */
    long nnodes;
    int has_start, has_end;
    int64_t start, end;
    const char *finding, *title, *category, *level;
    double confidence;
    int has_culprit;
    long long culprit;
    const char *culprit_host;
    dx_buf evidence;
    char idbuf[32];
} jobrow;

static int is_loopback(const char *h)
{
    return !strcmp(h, "localhost") || !strncmp(h, "127.", 4) || !strcmp(h, "::1") ||
           !strncmp(h, "localhost.", 10);
}

/* The host of the culprit rank: the report's own (a rank's host read from its lines), else
 * the job's task layout. */
static const char *culprit_host(const json_t *root, const json_t *job, long long cr)
{
    const char *h = jstr(job, "culprit_host");
    if (h)
        return h;
    json_t *ranks = json_object_get(root, "ranks"), *x;
    size_t i;
    json_array_foreach(ranks, i, x)
    {
        const char *rh = jstr(x, "host");
        /* a loopback name (torchelastic's table on a one-node run) names no node of the fleet */
        if (json_integer_value(json_object_get(x, "rank")) == cr && rh && !is_loopback(rh))
            return rh;
    }
    json_t *tasks = json_object_get(job, "task_nodes");
    if (cr >= 0 && json_is_array(tasks) && (size_t)cr < json_array_size(tasks))
        return json_string_value(json_array_get(tasks, (size_t)cr));
    return NULL;
}

/* Reads the fields stored for a report; meta's values win. DDX_EFORMAT when it is not one. */
static int read_report(const json_t *root, const dx_fleet_meta *m, jobrow *r, const char *source,
                       ddx_error *err)
{
    if (!json_is_object(root) || !json_is_integer(json_object_get(root, "schema")) ||
        !json_is_array(json_object_get(root, "diagnoses")))
        return dx_err(err, DDX_EFORMAT,
                      "%s: not a ddx report (no \"schema\" and \"diagnoses\"); give the output "
                      "of ddx diagnose --json or ddx slurm --json",
                      source);
    const json_t *job = json_object_get(root, "job");
    r->cluster = m && m->cluster ? m->cluster : jstr(job, "cluster");
    r->job_id =
        m && m->job_id ? m->job_id : jtext(json_object_get(job, "id"), r->idbuf, sizeof r->idbuf);
    r->user = m && m->user ? m->user : jstr(job, "user");
    r->partition = m && m->partition ? m->partition : jstr(job, "partition");
    r->state = jstr(job, "state");
    r->exit_code = jstr(job, "exit_code");
    if (m && m->nodes) {
        if (dx_hostlist_expand(m->nodes, &r->nodes, NODES_MAX) < 0)
            return dx_err(err, DDX_EINVAL, "--nodes '%s': not a host list (node[01-04],gpu7)",
                          m->nodes);
    } else {
        json_t *nodes = json_object_get(job, "nodes"), *x;
        size_t i;
        json_array_foreach(nodes, i, x)
        {
            if (json_is_string(x))
                dx_buf_addf(&r->nodes, "%s%s", r->nodes.n ? "," : "", json_string_value(x));
        }
    }
    for (size_t i = 0; i < r->nodes.n; i++)
        r->nnodes += r->nodes.p[i] == ',';
    r->nnodes += r->nodes.n > 0;
    const char *start = m && m->start ? m->start : jstr(job, "start");
    const char *end = m && m->end ? m->end : jstr(job, "end");
    if (start && !(r->has_start = !dx_fleet_parse_when(start, 0, &r->start)) && m && m->start)
        return dx_err(err, DDX_EINVAL, "--start '%s': not a time (2024-05-01T12:00:00)", start);
    if (end && !(r->has_end = !dx_fleet_parse_when(end, 0, &r->end)) && m && m->end)
        return dx_err(err, DDX_EINVAL, "--end '%s': not a time (2024-05-01T12:00:00)", end);
    json_t *top = json_array_get(json_object_get(root, "diagnoses"), 0);
    if (top) {
        r->finding = jstr(top, "id");
        r->title = jstr(top, "title");
        r->category = jstr(top, "category");
        r->level = jstr(top, "level");
        r->confidence = json_number_value(json_object_get(top, "confidence"));
        /* where it started, with its line's text from the evidence when listed there */
        json_t *fs = json_object_get(top, "first_seen"), *ev = NULL, *x;
        size_t i;
        json_array_foreach(json_object_get(top, "evidence"), i, x)
        {
            if (!ev || (fs && json_equal(json_object_get(x, "path"), json_object_get(fs, "path")) &&
                        json_equal(json_object_get(x, "line"), json_object_get(fs, "line"))))
                ev = x;
        }
        const json_t *at = ev ? ev : fs;
        if (at)
            dx_buf_addf(&r->evidence, "%s:%lld: %s", jstr(at, "path") ? jstr(at, "path") : "?",
                        (long long)json_integer_value(json_object_get(at, "line")),
                        jstr(at, "text") ? jstr(at, "text") : "");
    }
    json_t *cr = json_object_get(root, "culprit_rank");
    if (json_is_integer(cr)) {
        r->has_culprit = 1;
        r->culprit = json_integer_value(cr);
        r->culprit_host = culprit_host(root, job, r->culprit);
    }
    return DDX_OK;
}

static void bind_text(sqlite3_stmt *st, int i, const char *s)
{
    if (s)
        sqlite3_bind_text(st, i, s, -1, SQLITE_TRANSIENT);
    else
        sqlite3_bind_null(st, i);
}

/* Stores one report inside the caller's transaction. */
static int record_one(dx_fleet *f, const char *json, size_t len, const dx_fleet_meta *meta,
                      const char *source, int *outcome, ddx_error *err)
{
    json_error_t je;
    json_t *root = json_loadb(json, len, 0, &je);
    if (!root)
        return dx_err(err, DDX_EFORMAT, "%s:%d: not JSON (%s); give a ddx report", source, je.line,
                      je.text);
    jobrow r;
    memset(&r, 0, sizeof r);
    int rc = read_report(root, meta, &r, source, err);
    char sha[65], key[512];
    sha256_hex(json, len, sha);
    if (r.job_id)
        snprintf(key, sizeof key, "%s/%s", r.cluster ? r.cluster : "", r.job_id);
    else
        snprintf(key, sizeof key, "sha256:%s", sha);
    sqlite3_stmt *st = NULL;
    long long id = -1;
    const char *doing = "storing a report";
    if (!rc) {
        int s = sqlite3_prepare_v2(f->db, "SELECT id, report_sha FROM jobs WHERE job_key = ?", -1,
                                   &st, NULL);
        if (s == SQLITE_OK) {
            bind_text(st, 1, key);
            s = sqlite3_step(st);
            if (s == SQLITE_ROW) {
                id = sqlite3_column_int64(st, 0);
                const char *old = (const char *)sqlite3_column_text(st, 1);
                *outcome = old && !strcmp(old, sha) ? DX_FLEET_UNCHANGED : DX_FLEET_UPDATED;
                s = SQLITE_OK;
            } else if (s == SQLITE_DONE) {
                *outcome = DX_FLEET_INSERTED;
                s = SQLITE_OK;
            }
        }
        sqlite3_finalize(st);
        st = NULL;
        if (s != SQLITE_OK)
            rc = db_err(f, s, err, doing);
    }
    if (!rc && *outcome != DX_FLEET_UNCHANGED) {
        static const char *const sql[] = {
            "INSERT INTO jobs (job_key, cluster, job_id, user, partition, nodes, nnodes,"
            " start_time, end_time, state, exit_code, finding, title, category, level,"
            " confidence, culprit_rank, culprit_host, evidence, source, report_sha, report,"
            " recorded_at, id) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13,"
            " ?14, ?15, ?16, ?17, ?18, ?19, ?20, ?21, ?22, ?23, NULL)",
            "UPDATE jobs SET job_key = ?1, cluster = ?2, job_id = ?3, user = ?4, partition = ?5,"
            " nodes = ?6, nnodes = ?7, start_time = ?8, end_time = ?9, state = ?10,"
            " exit_code = ?11, finding = ?12, title = ?13, category = ?14, level = ?15,"
            " confidence = ?16, culprit_rank = ?17, culprit_host = ?18, evidence = ?19,"
            " source = ?20, report_sha = ?21, report = ?22, recorded_at = ?23 WHERE id = ?24"};
        int s = sqlite3_prepare_v2(f->db, sql[*outcome == DX_FLEET_UPDATED], -1, &st, NULL);
        if (s == SQLITE_OK) {
            bind_text(st, 1, key);
            bind_text(st, 2, r.cluster);
            bind_text(st, 3, r.job_id);
            bind_text(st, 4, r.user);
            bind_text(st, 5, r.partition);
            bind_text(st, 6, r.nodes.n ? r.nodes.p : NULL);
            if (r.nnodes)
                sqlite3_bind_int64(st, 7, r.nnodes);
            if (r.has_start)
                sqlite3_bind_int64(st, 8, r.start);
            if (r.has_end)
                sqlite3_bind_int64(st, 9, r.end);
            bind_text(st, 10, r.state);
            bind_text(st, 11, r.exit_code);
            bind_text(st, 12, r.finding);
            bind_text(st, 13, r.title);
            bind_text(st, 14, r.category);
            bind_text(st, 15, r.level);
            if (r.finding)
                sqlite3_bind_double(st, 16, r.confidence);
            if (r.has_culprit)
                sqlite3_bind_int64(st, 17, r.culprit);
            bind_text(st, 18, r.culprit_host);
            bind_text(st, 19, r.evidence.n ? r.evidence.p : NULL);
            bind_text(st, 20, source);
            bind_text(st, 21, sha);
            sqlite3_bind_text(st, 22, json, (int)len, SQLITE_TRANSIENT);
            sqlite3_bind_int64(st, 23, (sqlite3_int64)time(NULL));
            if (id >= 0)
                sqlite3_bind_int64(st, 24, id);
            s = sqlite3_step(st);
            s = s == SQLITE_DONE ? SQLITE_OK : s;
        }
        sqlite3_finalize(st);
        st = NULL;
        if (s == SQLITE_OK && id < 0)
            id = sqlite3_last_insert_rowid(f->db);
        /* the job's hosts as rows */
        if (s == SQLITE_OK) {
            char del[80];
            snprintf(del, sizeof del, "DELETE FROM job_nodes WHERE job = %lld", id);
            s = sqlite3_exec(f->db, del, NULL, NULL, NULL);
        }
        if (s == SQLITE_OK && r.nodes.n)
            s = sqlite3_prepare_v2(f->db, "INSERT OR IGNORE INTO job_nodes VALUES (?, ?)", -1, &st,
                                   NULL);
        for (const char *p = r.nodes.n ? r.nodes.p : ""; s == SQLITE_OK && *p;) {
            const char *comma = strchr(p, ',');
            size_t n = comma ? (size_t)(comma - p) : strlen(p);
            sqlite3_bind_int64(st, 1, id);
            sqlite3_bind_text(st, 2, p, (int)n, SQLITE_TRANSIENT);
            s = sqlite3_step(st);
            s = s == SQLITE_DONE ? SQLITE_OK : s;
            sqlite3_reset(st);
            p = comma ? comma + 1 : p + n;
        }
        sqlite3_finalize(st);
        if (s != SQLITE_OK)
            rc = db_err(f, s, err, doing);
    }
    dx_buf_fini(&r.nodes);
    dx_buf_fini(&r.evidence);
    json_decref(root);
    return rc;
}

int dx_fleet_record(dx_fleet *f, const char *json, size_t len, const dx_fleet_meta *meta,
                    const char *source, int *outcome, ddx_error *err)
{
    int rc = exec(f, "BEGIN IMMEDIATE", err, "storing a report");
    if (rc)
        return rc;
    if ((rc = record_one(f, json, len, meta, source, outcome, err))) {
        rollback(f);
        return rc;
    }
    return exec(f, "COMMIT", err, "storing a report");
}

/* ==== ingesting a folder ===================================================================== */

typedef struct ingest {
    dx_fleet *f;
    dx_fleet_counts *c;
    size_t in_batch;
    ddx_error *err;
} ingest;

static int ends_with(const char *s, const char *sfx)
{
    size_t n = strlen(s), k = strlen(sfx);
    return n >= k && !strcmp(s + n - k, sfx);
}

static int ingest_file(ingest *g, const char *path)
{
    FILE *fp = fopen(path, "rb");
    if (!fp) {
        g->c->skipped++;
        return DDX_OK;
    }
    dx_buf b = {0};
    char buf[65536];
    size_t n;
    int too_big = 0;
    while ((n = fread(buf, 1, sizeof buf, fp)) > 0) {
        if (b.n + n > REPORT_MAX) {
            too_big = 1;
            break;
        }
        if (dx_buf_add(&b, buf, n)) {
            fclose(fp);
            dx_buf_fini(&b);
            return dx_err(g->err, DDX_ENOMEM, "out of memory");
        }
    }
    fclose(fp);
    int rc = DDX_OK;
    if (too_big || !b.n) {
        g->c->skipped++;
    } else {
        if (!g->in_batch && (rc = exec(g->f, "BEGIN IMMEDIATE", g->err, "ingesting reports")))
            goto done;
        int outcome = 0;
        ddx_error e = {0};
        rc = record_one(g->f, b.p, b.n, NULL, path, &outcome, &e);
        if (rc == DDX_EFORMAT) {
            g->c->skipped++; /* some other JSON file */
            rc = DDX_OK;
        } else if (rc) {
            *g->err = e;
            rollback(g->f);
            g->in_batch = 0;
            goto done;
        } else {
            g->c->inserted += outcome == DX_FLEET_INSERTED;
            g->c->updated += outcome == DX_FLEET_UPDATED;
            g->c->unchanged += outcome == DX_FLEET_UNCHANGED;
        }
        if (++g->in_batch >= INGEST_BATCH) {
            rc = exec(g->f, "COMMIT", g->err, "ingesting reports");
            g->in_batch = 0;
        }
    }
done:
    dx_buf_fini(&b);
    return rc;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static int ingest_dir(ingest *g, const char *dir, int depth)
{
    DIR *d = opendir(dir);
    if (!d)
        return depth ? DDX_OK
                     : dx_err(g->err, DDX_EIO, "%s: %s (give a folder of JSON reports)", dir,
                              strerror(errno));
    char **names = NULL;
    size_t n = 0, cap = 0;
    struct dirent *de;
    int rc = DDX_OK;
    while ((de = readdir(d))) {
        if (de->d_name[0] == '.')
            continue;
        if (dx_grow((void **)&names, &cap, n + 1, sizeof(char *)) ||
            !(names[n] = dx_strdup(de->d_name))) {
            rc = dx_err(g->err, DDX_ENOMEM, "out of memory");
            break;
        }
        n++;
    }
    closedir(d);
    qsort(names, n, sizeof(char *), cmp_str); /* a stable order: the same store every time */
    dx_buf path = {0};
    for (size_t i = 0; i < n && !rc; i++) {
        path.n = 0;
        dx_buf_addf(&path, "%s/%s", dir, names[i]);
        struct stat st;
        if (stat(path.p, &st) != 0)
            continue;
        if (S_ISDIR(st.st_mode) && depth < 16)
            rc = ingest_dir(g, path.p, depth + 1);
        else if (S_ISREG(st.st_mode) && ends_with(names[i], ".json"))
            rc = ingest_file(g, path.p);
    }
    for (size_t i = 0; i < n; i++)
        dx_free(names[i]);
    dx_free(names);
    dx_buf_fini(&path);
    return rc;
}

int dx_fleet_ingest(dx_fleet *f, const char *dir, dx_fleet_counts *counts, ddx_error *err)
{
    memset(counts, 0, sizeof *counts);
    ingest g = {f, counts, 0, err};
    int rc = ingest_dir(&g, dir, 0);
    if (g.in_batch) {
        if (rc)
            rollback(f);
        else
            rc = exec(f, "COMMIT", err, "ingesting reports");
    }
    return rc;
}

/* ==== the host test ========================================================================== */

double dx_fleet_tail(const double *p, size_t n, size_t k)
{
    if (k == 0)
        return 1.0;
    if (k > n)
        return 0.0;
    /* states 0..k-1 successes so far, and an absorbing "k or more" whose mass is the tail:
     * summed directly, without subtracting from 1 (no cancellation for tiny tails) */
    double *d = dx_calloc(k, sizeof(double));
    if (!d)
        return NAN;
    d[0] = 1.0;
    double top = 0.0;
    for (size_t i = 0; i < n; i++) {
        double q = p[i];
        top += d[k - 1] * q;
        for (size_t j = k - 1; j > 0; j--)
            d[j] = d[j] * (1.0 - q) + d[j - 1] * q;
        d[0] *= 1.0 - q;
    }
    dx_free(d);
    return top;
}

typedef struct host_stat {
    char *host;
    size_t jobs, culprit;
    double expected, p, adj;
    double *probs;
    size_t nprobs, capprobs;
} host_stat;

static int cmp_host_p(const void *a, const void *b)
{
    const host_stat *x = a, *y = b;
    if (x->p != y->p)
        return x->p < y->p ? -1 : 1;
    if (x->culprit != y->culprit)
        return x->culprit > y->culprit ? -1 : 1;
    return strcmp(x->host, y->host);
}

/* Prepares sql with the window bound as ?1 and ?2 (Unix seconds). */
static int prepare_window(dx_fleet *f, const char *sql, int64_t since, int64_t until,
                          sqlite3_stmt **st)
{
    int s = sqlite3_prepare_v2(f->db, sql, -1, st, NULL);
    if (s == SQLITE_OK) {
        sqlite3_bind_int64(*st, 1, since);
        sqlite3_bind_int64(*st, 2, until);
    }
    return s;
}

/* The jobs the host test counts (see the top of this file), in the window ?1..?2. */
#define CANDIDATES                                                                                 \
    "SELECT id, job_id, job_key, finding, culprit_rank, culprit_host, nnodes, evidence,"           \
    " end_time FROM jobs j WHERE COALESCE(end_time, recorded_at) >= ?1"                            \
    " AND COALESCE(end_time, recorded_at) < ?2 AND culprit_rank IS NOT NULL"                       \
    " AND culprit_rank <> 0 AND culprit_host IS NOT NULL AND nnodes >= 2"                          \
    " AND EXISTS (SELECT 1 FROM job_nodes n WHERE n.job = j.id AND n.host = j.culprit_host)"

static int host_test(dx_fleet *f, int64_t since, int64_t until, double alpha, json_t *out,
                     ddx_error *err)
{
    sqlite3_stmt *st = NULL;
    host_stat *hs = NULL;
    size_t nh = 0, caph = 0;
    long long njobs = 0;
    int rc = DDX_OK;
    int s = prepare_window(f,
                           "WITH c AS (" CANDIDATES ") SELECT n.host, c.nnodes,"
                           " c.culprit_host = n.host FROM job_nodes n JOIN c ON n.job = c.id"
                           " ORDER BY n.host",
                           since, until, &st);
    if (s == SQLITE_OK) {
        while ((s = sqlite3_step(st)) == SQLITE_ROW) {
            const char *h = (const char *)sqlite3_column_text(st, 0);
            if (!nh || strcmp(hs[nh - 1].host, h) != 0) {
                if (dx_grow((void **)&hs, &caph, nh + 1, sizeof *hs))
                    break;
                memset(&hs[nh], 0, sizeof *hs);
                if (!(hs[nh].host = dx_strdup(h)))
                    break;
                nh++;
            }
            host_stat *x = &hs[nh - 1];
            double p = 1.0 / (double)sqlite3_column_int64(st, 1);
            if (dx_grow((void **)&x->probs, &x->capprobs, x->nprobs + 1, sizeof(double)))
                break;
            x->probs[x->nprobs++] = p;
            x->jobs++;
            x->expected += p;
            x->culprit += sqlite3_column_int(st, 2) != 0;
        }
        s = s == SQLITE_DONE ? SQLITE_OK : s == SQLITE_ROW ? SQLITE_NOMEM : s;
    }
    sqlite3_finalize(st);
    st = NULL;
    if (s == SQLITE_OK)
        s = prepare_window(f, "WITH c AS (" CANDIDATES ") SELECT count(*) FROM c", since, until,
                           &st);
    if (s == SQLITE_OK) {
        s = sqlite3_step(st);
        njobs = s == SQLITE_ROW ? sqlite3_column_int64(st, 0) : 0;
        s = s == SQLITE_ROW ? SQLITE_OK : s;
    }
    sqlite3_finalize(st);
    st = NULL;
    if (s != SQLITE_OK) {
        rc = s == SQLITE_NOMEM ? dx_err(err, DDX_ENOMEM, "out of memory")
                               : db_err(f, s, err, "testing hosts");
        goto done;
    }
    for (size_t i = 0; i < nh; i++)
        hs[i].p = dx_fleet_tail(hs[i].probs, hs[i].nprobs, hs[i].culprit);
    qsort(hs, nh, sizeof *hs, cmp_host_p);
    /* Holm: the i-th smallest p (from 0) times (m - i), kept monotone, at most 1 */
    double run = 0;
    for (size_t i = 0; i < nh; i++) {
        double a = hs[i].p * (double)(nh - i);
        run = a > run ? a : run;
        hs[i].adj = run < 1 ? run : 1;
    }
    json_t *test = json_object();
    json_object_set_new(test, "method",
                        json_string("one-sided exact Poisson-binomial tail per host (each job "
                                    "blames one of its n hosts with chance 1/n), Holm's step-down "
                                    "correction over the hosts tested"));
    json_object_set_new(test, "alpha", json_real(alpha));
    json_object_set_new(test, "hosts_tested", json_integer((json_int_t)nh));
    json_object_set_new(test, "jobs_considered", json_integer(njobs));
    json_object_set_new(out, "host_test", test);
    json_t *flagged = json_array(), *close = json_array();
    for (size_t i = 0; i < nh; i++) {
        host_stat *x = &hs[i];
        int flag = x->adj <= alpha && x->culprit >= 2;
        if (!flag && json_array_size(close) >= HOSTS_CLOSE)
            continue;
        json_t *o = json_object();
        json_object_set_new(o, "host", json_string(x->host));
        json_object_set_new(o, "culprit_jobs", json_integer((json_int_t)x->culprit));
        json_object_set_new(o, "jobs", json_integer((json_int_t)x->jobs));
        json_object_set_new(o, "expected", json_real(round(x->expected * 1000) / 1000));
        json_object_set_new(o, "p_value", json_real(x->p));
        json_object_set_new(o, "p_adjusted", json_real(x->adj));
        json_object_set_new(o, "flagged", json_boolean(flag));
        if (flag) {
            json_t *ev = json_array();
            s = prepare_window(f,
                               "WITH c AS (" CANDIDATES ") SELECT job_id, job_key, finding,"
                               " culprit_rank, evidence, end_time FROM c WHERE"
                               " culprit_host = ?3 ORDER BY end_time, job_key LIMIT ?4",
                               since, until, &st);
            if (s == SQLITE_OK) {
                sqlite3_bind_text(st, 3, x->host, -1, SQLITE_STATIC);
                sqlite3_bind_int(st, 4, HOST_JOBS);
                while (sqlite3_step(st) == SQLITE_ROW) {
                    json_t *j = json_object();
                    const char *id = (const char *)sqlite3_column_text(st, 0);
                    json_object_set_new(
                        j, "job_id",
                        json_string(id ? id : (const char *)sqlite3_column_text(st, 1)));
                    const char *fnd = (const char *)sqlite3_column_text(st, 2);
                    json_object_set_new(j, "finding", fnd ? json_string(fnd) : json_null());
                    json_object_set_new(j, "culprit_rank", json_integer(sqlite3_column_int(st, 3)));
                    const char *evt = (const char *)sqlite3_column_text(st, 4);
                    json_object_set_new(j, "evidence", evt ? json_string(evt) : json_null());
                    json_array_append_new(ev, j);
                }
            }
            sqlite3_finalize(st);
            st = NULL;
            json_object_set_new(o, "jobs_as_evidence", ev);
        }
        json_array_append_new(flag ? flagged : close, o);
    }
    json_object_set_new(out, "bad_hosts", flagged);
    json_object_set_new(out, "closest_hosts", close);
done:
    for (size_t i = 0; i < nh; i++) {
        dx_free(hs[i].host);
        dx_free(hs[i].probs);
    }
    dx_free(hs);
    return rc;
}

/* ==== the report ============================================================================= */

static void iso(int64_t t, char *buf, size_t cap)
{
    time_t tt = (time_t)t;
    struct tm tm;
    gmtime_r(&tt, &tm);
    strftime(buf, cap, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

#define WINDOW " COALESCE(end_time, recorded_at) >= ?1 AND COALESCE(end_time, recorded_at) < ?2"
#define NODE_HOURS                                                                                 \
    " COALESCE(SUM(CASE WHEN nnodes IS NOT NULL AND start_time IS NOT NULL AND end_time IS NOT"    \
    " NULL AND end_time >= start_time THEN nnodes * (end_time - start_time) END), 0) / 3600.0"

int dx_fleet_report(dx_fleet *f, int64_t since, int64_t until, double alpha, json_t **out,
                    ddx_error *err)
{
    *out = NULL;
    json_t *rep = json_object();
    char a[40], b[40];
    iso(since, a, sizeof a);
    iso(until, b, sizeof b);
    json_object_set_new(rep, "schema", json_integer(1));
    json_object_set_new(rep, "since", json_string(a));
    json_object_set_new(rep, "until", json_string(b));
    sqlite3_stmt *st = NULL;
    int s =
        prepare_window(f, "SELECT count(*), count(finding)," NODE_HOURS " FROM jobs WHERE" WINDOW,
                       since, until, &st);
    if (s == SQLITE_OK) {
        if ((s = sqlite3_step(st)) == SQLITE_ROW) {
            json_object_set_new(rep, "jobs", json_integer(sqlite3_column_int64(st, 0)));
            json_object_set_new(rep, "jobs_with_finding",
                                json_integer(sqlite3_column_int64(st, 1)));
            json_object_set_new(
                rep, "jobs_without_finding",
                json_integer(sqlite3_column_int64(st, 0) - sqlite3_column_int64(st, 1)));
            json_object_set_new(rep, "node_hours_lost",
                                json_real(round(sqlite3_column_double(st, 2) * 100) / 100));
            s = SQLITE_OK;
        }
    }
    sqlite3_finalize(st);
    st = NULL;
    /* failure classes, with the same span before the window for the trend */
    json_t *classes = json_array();
    json_object_set_new(rep, "classes", classes);
    if (s == SQLITE_OK)
        s = prepare_window(f,
                           "SELECT finding, MAX(title), MAX(category), count(*)," NODE_HOURS ","
                           " (SELECT count(*) FROM jobs p WHERE p.finding = jobs.finding AND"
                           "  COALESCE(p.end_time, p.recorded_at) >= ?1 - (?2 - ?1) AND"
                           "  COALESCE(p.end_time, p.recorded_at) < ?1)"
                           " FROM jobs WHERE finding IS NOT NULL AND" WINDOW
                           " GROUP BY finding ORDER BY count(*) DESC, finding",
                           since, until, &st);
    if (s == SQLITE_OK) {
        while ((s = sqlite3_step(st)) == SQLITE_ROW) {
            json_t *o = json_object();
            const char *id = (const char *)sqlite3_column_text(st, 0);
            long long n = sqlite3_column_int64(st, 3), prev = sqlite3_column_int64(st, 5);
            json_object_set_new(o, "id", json_string(id));
            const char *t = (const char *)sqlite3_column_text(st, 1);
            const char *c = (const char *)sqlite3_column_text(st, 2);
            json_object_set_new(o, "title", t ? json_string(t) : json_null());
            json_object_set_new(o, "category", c ? json_string(c) : json_null());
            json_object_set_new(o, "jobs", json_integer(n));
            json_object_set_new(o, "previous", json_integer(prev));
            json_object_set_new(o, "trend",
                                json_string(!prev      ? "new"
                                            : n > prev ? "up"
                                            : n < prev ? "down"
                                                       : "same"));
            json_object_set_new(o, "node_hours",
                                json_real(round(sqlite3_column_double(st, 4) * 100) / 100));
            json_t *ids = json_array();
            sqlite3_stmt *q = NULL;
            if (prepare_window(f,
                               "SELECT COALESCE(job_id, job_key) FROM jobs WHERE finding = ?3"
                               " AND" WINDOW " ORDER BY end_time DESC, job_key LIMIT ?4",
                               since, until, &q) == SQLITE_OK) {
                sqlite3_bind_text(q, 3, id, -1, SQLITE_TRANSIENT);
                sqlite3_bind_int(q, 4, CLASS_JOBS);
                while (sqlite3_step(q) == SQLITE_ROW)
                    json_array_append_new(ids,
                                          json_string((const char *)sqlite3_column_text(q, 0)));
            }
            sqlite3_finalize(q);
            json_object_set_new(o, "job_ids", ids);
            json_array_append_new(classes, o);
        }
        s = s == SQLITE_DONE ? SQLITE_OK : s;
    }
    sqlite3_finalize(st);
    int rc = s == SQLITE_OK ? DDX_OK : db_err(f, s, err, "reading it for the report");
    if (!rc)
        rc = host_test(f, since, until, alpha, rep, err);
    if (rc) {
        json_decref(rep);
        return rc;
    }
    *out = rep;
    return DDX_OK;
}

/* ==== writing the report ===================================================================== */

static const char *js(const json_t *o, const char *k)
{
    const char *s = json_string_value(json_object_get(o, k));
    return s ? s : "";
}

static long long ji(const json_t *o, const char *k)
{
    return (long long)json_integer_value(json_object_get(o, k));
}

static double jd(const json_t *o, const char *k)
{
    return json_number_value(json_object_get(o, k));
}

int dx_fleet_write_text(const json_t *rep, FILE *out)
{
    fprintf(out, "Fleet report, %s to %s\n", js(rep, "since"), js(rep, "until"));
    fprintf(out,
            "%lld failed jobs: %lld with a known failure, %lld without; %.1f node-hours "
            "lost\n",
            ji(rep, "jobs"), ji(rep, "jobs_with_finding"), ji(rep, "jobs_without_finding"),
            jd(rep, "node_hours_lost"));
    json_t *classes = json_object_get(rep, "classes"), *c;
    size_t i;
    if (json_array_size(classes))
        fprintf(out, "\nFailure classes (jobs, the span before, trend, node-hours):\n");
    json_array_foreach(classes, i, c)
    {
        fprintf(out, "  %5lld  %5lld  %-4s %9.1f  %s", ji(c, "jobs"), ji(c, "previous"),
                js(c, "trend"), jd(c, "node_hours"), js(c, "id"));
        if (*js(c, "title"))
            fprintf(out, " -- %s", js(c, "title"));
        fputs("\n         jobs:", out);
        json_t *ids = json_object_get(c, "job_ids"), *x;
        size_t k;
        json_array_foreach(ids, k, x) fprintf(out, " %s", json_string_value(x));
        if ((long long)json_array_size(ids) < ji(c, "jobs"))
            fputs(" ...", out);
        fputc('\n', out);
    }
    json_t *test = json_object_get(rep, "host_test");
    json_t *bad = json_object_get(rep, "bad_hosts"), *h;
    fprintf(out,
            "\nHosts implicated as culprit more often than chance allows (%lld hosts tested over "
            "%lld jobs, alpha %g):\n",
            ji(test, "hosts_tested"), ji(test, "jobs_considered"), jd(test, "alpha"));
    if (!json_array_size(bad))
        fputs("  none\n", out);
    json_array_foreach(bad, i, h)
    {
        fprintf(out,
                "  %s: culprit of %lld of its %lld jobs (%.2f expected), p = %.3g, adjusted "
                "%.3g\n",
                js(h, "host"), ji(h, "culprit_jobs"), ji(h, "jobs"), jd(h, "expected"),
                jd(h, "p_value"), jd(h, "p_adjusted"));
        json_t *ev = json_object_get(h, "jobs_as_evidence"), *j;
        size_t k;
        json_array_foreach(ev, k, j)
        {
            fprintf(out, "    job %s: %s, rank %lld: %s\n", js(j, "job_id"),
                    json_is_string(json_object_get(j, "finding")) ? js(j, "finding")
                                                                  : "(no known failure)",
                    ji(j, "culprit_rank"), js(j, "evidence"));
        }
    }
    json_t *close = json_object_get(rep, "closest_hosts");
    if (json_array_size(close)) {
        fputs("  next (not flagged):", out);
        json_array_foreach(close, i, h)
        {
            fprintf(out, " %s %lld/%lld (p %.2g)", js(h, "host"), ji(h, "culprit_jobs"),
                    ji(h, "jobs"), jd(h, "p_adjusted"));
        }
        fputc('\n', out);
    }
    fprintf(out, "\nTest: %s.\n", js(test, "method"));
    return ferror(out) ? DDX_EIO : DDX_OK;
}

/* Text with HTML's special characters escaped. */
static void html_text(FILE *out, const char *s)
{
    for (; *s; s++) {
        switch (*s) {
        case '<':
            fputs("&lt;", out);
            break;
        case '>':
            fputs("&gt;", out);
            break;
        case '&':
            fputs("&amp;", out);
            break;
        case '"':
            fputs("&quot;", out);
            break;
        default:
            fputc(*s, out);
        }
    }
}

int dx_fleet_write_html(const json_t *rep, FILE *out)
{
    fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
          "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
          "<title>ddx fleet report</title>\n<style>\n"
          "body{font:15px/1.45 system-ui,sans-serif;margin:2rem auto;max-width:72rem;"
          "padding:0 1rem;color:#1d1d1f}\n"
          "h1{font-size:1.5rem}h2{font-size:1.15rem;margin-top:2rem;border-bottom:1px solid "
          "#ddd}\n"
          "table{border-collapse:collapse;width:100%}th,td{text-align:left;padding:.3rem "
          ".5rem;border-bottom:1px solid #eee;vertical-align:top}\n"
          "td.n{text-align:right;font-variant-numeric:tabular-nums}\n"
          ".bad{color:#b00020;font-weight:600}.dim{color:#666}.up{color:#b00020}"
          ".down{color:#1b7f3b}\n"
          "code{font:13px ui-monospace,monospace;background:#f5f5f7;padding:0 .2rem}\n"
          "</style></head><body>\n<h1>ddx fleet report</h1>\n",
          out);
    fputs("<p>", out);
    html_text(out, js(rep, "since"));
    fputs(" to ", out);
    html_text(out, js(rep, "until"));
    fprintf(out,
            ": <b>%lld</b> failed jobs, %lld with a known failure, %lld without; <b>%.1f</b> "
            "node-hours lost.</p>\n",
            ji(rep, "jobs"), ji(rep, "jobs_with_finding"), ji(rep, "jobs_without_finding"),
            jd(rep, "node_hours_lost"));
    json_t *test = json_object_get(rep, "host_test");
    json_t *bad = json_object_get(rep, "bad_hosts"), *h;
    size_t i;
    fputs("<h2>Hosts implicated more often than chance allows</h2>\n", out);
    if (!json_array_size(bad))
        fputs("<p>None.</p>\n", out);
    json_array_foreach(bad, i, h)
    {
        fputs("<p class=\"bad\">", out);
        html_text(out, js(h, "host"));
        fprintf(out,
                ": culprit of %lld of its %lld jobs (%.2f expected), p = %.3g, adjusted "
                "%.3g</p>\n<table><tr><th>job</th><th>finding</th><th>rank</th><th>evidence</th>"
                "</tr>\n",
                ji(h, "culprit_jobs"), ji(h, "jobs"), jd(h, "expected"), jd(h, "p_value"),
                jd(h, "p_adjusted"));
        json_t *ev = json_object_get(h, "jobs_as_evidence"), *j;
        size_t k;
        json_array_foreach(ev, k, j)
        {
            fputs("<tr><td>", out);
            html_text(out, js(j, "job_id"));
            fputs("</td><td>", out);
            html_text(out, js(j, "finding"));
            fprintf(out, "</td><td class=\"n\">%lld</td><td><code>", ji(j, "culprit_rank"));
            html_text(out, js(j, "evidence"));
            fputs("</code></td></tr>\n", out);
        }
        fputs("</table>\n", out);
    }
    fprintf(out,
            "<p class=\"dim\">%lld hosts tested over %lld jobs at a family-wise error rate "
            "of %g: ",
            ji(test, "hosts_tested"), ji(test, "jobs_considered"), jd(test, "alpha"));
    html_text(out, js(test, "method"));
    fputs(".</p>\n<h2>Failure classes</h2>\n<table><tr><th>failure</th><th>jobs</th>"
          "<th>before</th><th>trend</th><th>node-hours</th><th>jobs</th></tr>\n",
          out);
    json_t *classes = json_object_get(rep, "classes"), *c;
    json_array_foreach(classes, i, c)
    {
        fputs("<tr><td><code>", out);
        html_text(out, js(c, "id"));
        fputs("</code><br><span class=\"dim\">", out);
        html_text(out, js(c, "title"));
        fprintf(out,
                "</span></td><td class=\"n\">%lld</td><td class=\"n\">%lld</td>"
                "<td class=\"%s\">%s</td><td class=\"n\">%.1f</td><td>",
                ji(c, "jobs"), ji(c, "previous"), js(c, "trend"), js(c, "trend"),
                jd(c, "node_hours"));
        json_t *ids = json_object_get(c, "job_ids"), *x;
        size_t k;
        json_array_foreach(ids, k, x)
        {
            fputs(k ? ", " : "", out);
            html_text(out, json_string_value(x));
        }
        if ((long long)json_array_size(ids) < ji(c, "jobs"))
            fputs(", ...", out);
        fputs("</td></tr>\n", out);
    }
    fputs("</table>\n</body></html>\n", out);
    return ferror(out) ? DDX_EIO : DDX_OK;
}
