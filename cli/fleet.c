/* fleet.c -- ddx record and ddx fleet (ingest, report): the fleet store from the command line.
 *
 * The store is --db FILE, else $DDX_DB, else ddx-fleet.db in the current folder. How long a
 * writer waits for another: $DDX_DB_BUSY_MS (default 5000). The work is src/fleet.c's; this
 * file reads the reports and prints outcomes.
 */
#include "cli.h"

#include <errno.h>
#include <time.h>

#include "fleet.h"

#define REPORT_MAX (64u << 20)

static const char *db_path(const cli_args *a)
{
    const char *env = getenv("DDX_DB");
    return a->db ? a->db : env && *env ? env : "ddx-fleet.db";
}

static int open_store(const cli_args *a, dx_fleet **db)
{
    const char *busy = getenv("DDX_DB_BUSY_MS");
    int ms = busy ? atoi(busy) : 0;
    ddx_error e = {0};
    if (dx_fleet_open(db, db_path(a), ms, 0, &e))
        return cli_fail("%s", e.message);
    return 0;
}

/* Reads a whole file ("-": standard input) into b. */
static int slurp(const char *path, dx_buf *b)
{
    FILE *f = strcmp(path, "-") ? fopen(path, "rb") : stdin;
    if (!f)
        return cli_fail("%s: %s (give a JSON report of ddx diagnose --json or ddx slurm --json)",
                        path, strerror(errno));
    char buf[65536];
    size_t n;
    int rc = 0;
    while ((n = fread(buf, 1, sizeof buf, f)) > 0)
        if (b->n + n > REPORT_MAX || dx_buf_add(b, buf, n)) {
            rc = cli_fail("%s: larger than %u MiB; not a ddx report", path, REPORT_MAX >> 20);
            break;
        }
    if (!rc && ferror(f))
        rc = cli_fail("%s: %s", path, strerror(errno));
    if (f != stdin)
        fclose(f);
    return rc;
}

int cli_record(cli_args *a)
{
    if (!a->nargs)
        return cli_fail("record: give the JSON reports to store (- for standard input); see "
                        "'ddx record --help'");
    if (a->nargs > 1 && (a->job_id || a->nodes || a->start || a->end))
        return cli_fail("record: --job-id, --nodes, --start and --end describe one job: give "
                        "one report with them");
    dx_fleet *db;
    if (open_store(a, &db))
        return 2;
    dx_fleet_meta m = {a->cluster, a->job_id, a->user, a->partition, a->nodes, a->start, a->end};
    static const char *const said[] = {"", "stored", "updated", "already stored"};
    int status = 0;
    for (size_t i = 0; i < a->nargs && !status; i++) {
        dx_buf b = {0};
        if (slurp(a->args[i], &b)) {
            status = 2;
        } else {
            int outcome = 0;
            ddx_error e = {0};
            const char *name = strcmp(a->args[i], "-") ? a->args[i] : "<stdin>";
            if (dx_fleet_record(db, b.p ? b.p : "", b.n, &m, name, &outcome, &e))
                status = cli_fail("%s", e.message);
            else
                printf("%s: %s in %s\n", name, said[outcome], db_path(a));
        }
        dx_buf_fini(&b);
    }
    dx_fleet_close(db);
    return status;
}

static int fleet_ingest(cli_args *a)
{
    if (a->nargs < 2)
        return cli_fail("fleet ingest: give the folders of JSON reports (the epilog's)");
    dx_fleet *db;
    if (open_store(a, &db))
        return 2;
    int status = 0;
    for (size_t i = 1; i < a->nargs && !status; i++) {
        dx_fleet_counts c;
        ddx_error e = {0};
        if (dx_fleet_ingest(db, a->args[i], &c, &e))
            status = cli_fail("%s", e.message);
        else
            printf("%s: %zu stored, %zu updated, %zu already stored, %zu skipped (not ddx "
                   "reports)\n",
                   a->args[i], c.inserted, c.updated, c.unchanged, c.skipped);
    }
    dx_fleet_close(db);
    return status;
}

static int fleet_report(cli_args *a)
{
    if (a->nargs > 1)
        return cli_fail("fleet report: no arguments after 'report' (the window is --since and "
                        "--until)");
    int64_t now = (int64_t)time(NULL), since, until = now;
    if (dx_fleet_parse_when(a->since ? a->since : "7d", now, &since))
        return cli_fail("--since '%s': give 7d, 12h, 30m or a date (2024-05-01[T12:00:00Z])",
                        a->since);
    if (a->until && dx_fleet_parse_when(a->until, now, &until))
        return cli_fail("--until '%s': give 7d, 12h, 30m or a date (2024-05-01[T12:00:00Z])",
                        a->until);
    if (until <= since)
        return cli_fail("fleet report: --until must come after --since");
    dx_fleet *db;
    if (open_store(a, &db))
        return 2;
    json_t *rep = NULL;
    ddx_error e = {0};
    int status = 0;
    if (dx_fleet_report(db, since, until, a->alpha > 0 ? a->alpha : DX_FLEET_ALPHA, &rep, &e)) {
        status = cli_fail("%s", e.message);
        goto done;
    }
    if (a->html) {
        FILE *h = fopen(a->html, "w");
        if (!h) {
            status = cli_fail("fleet report: cannot write %s: %s", a->html, strerror(errno));
            goto done;
        }
        int rc = dx_fleet_write_html(rep, h);
        if (fclose(h) || rc) {
            status = cli_fail("fleet report: cannot write %s", a->html);
            goto done;
        }
    }
    if (a->json) {
        json_dumpf(rep, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(10));
        fputc('\n', stdout);
    } else
        dx_fleet_write_text(rep, stdout);
    if (fflush(stdout))
        status = cli_fail("fleet report: cannot write the output");
done:
    json_decref(rep);
    dx_fleet_close(db);
    return status;
}

int cli_fleet(cli_args *a)
{
    static const struct {
        const char *name;
        int (*run)(cli_args *a);
    } subs[] = {{"ingest", fleet_ingest}, {"report", fleet_report}};
    for (size_t i = 0; a->nargs && i < DX_ARRAY_LEN(subs); i++)
        if (!strcmp(a->args[0], subs[i].name))
            return subs[i].run(a);
    return cli_fail("fleet: give 'ingest DIR...' or 'report'; see 'ddx fleet --help'");
}
