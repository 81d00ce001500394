/* fleet.h -- the fleet store: diagnoses of many jobs in SQLite, and the report across them
 * (failure classes and their trend, time lost, hosts implicated more often than chance allows).
 *
 * The store is one SQLite file in WAL mode (readers never block the writer; concurrent writers
 * on one host wait for each other up to a busy timeout). Its schema is versioned: the
 * migrations table in fleet.c brings any older store up to date, one transaction each; a store
 * written by a newer ddx is refused. Every write is one transaction, so a failure (a locked or
 * damaged file, a full disk) leaves what was stored as it was. Schema and test: docs/fleet.md.
 *
 * A diagnosis is stored from its JSON report (ddx diagnose --json, ddx slurm --json): the top
 * finding, the culprit rank and its host, and the job's metadata from the report's "job" object
 * (ddx slurm writes it) or from the caller.
 */
#ifndef DX_FLEET_H
#define DX_FLEET_H

#include "dx.h"

#include <jansson.h>

#define DX_FLEET_SCHEMA 2     /* the newest schema version */
#define DX_FLEET_BUSY_MS 5000 /* default wait for another writer */
#define DX_FLEET_ALPHA 0.01   /* default family-wise error rate of the host test */

typedef struct dx_fleet dx_fleet;

/* Opens (creating it when missing) the store at path and migrates it to DX_FLEET_SCHEMA, or to
 * version when version > 0 (tests: an older store). busy_ms: how long to wait for another
 * writer (0: DX_FLEET_BUSY_MS). Fails with DDX_EFORMAT when path is not a ddx store, is damaged
 * or is newer than this ddx, DDX_EIO when it cannot be opened or stays locked. */
DX_HIDDEN int dx_fleet_open(dx_fleet **out, const char *path, int busy_ms, int version,
                            ddx_error *err);
DX_HIDDEN void dx_fleet_close(dx_fleet *db);
DX_HIDDEN int dx_fleet_version(dx_fleet *db);

/* What the caller knows of a job beyond its report (each NULL when unknown); these win over
 * the report's own "job" object. nodes: host names, comma-separated, Slurm ranges allowed. */
typedef struct dx_fleet_meta {
    const char *cluster, *job_id, *user, *partition, *nodes, *start, *end;
} dx_fleet_meta;

enum { DX_FLEET_INSERTED = 1, DX_FLEET_UPDATED, DX_FLEET_UNCHANGED };

/* Stores one JSON report (text of len bytes); source names where it came from (for messages
 * and the store). *outcome tells whether it was new, replaced an older report of the same job,
 * or was stored already. DDX_EFORMAT when the text is not a ddx report. */
DX_HIDDEN int dx_fleet_record(dx_fleet *db, const char *json, size_t len, const dx_fleet_meta *meta,
                              const char *source, int *outcome, ddx_error *err);

typedef struct dx_fleet_counts {
    size_t inserted, updated, unchanged, skipped;
} dx_fleet_counts;

/* Stores every *.json report under dir (recursively; files that are not ddx reports are
 * skipped and counted). Idempotent. A write error stops it with what was stored before kept. */
DX_HIDDEN int dx_fleet_ingest(dx_fleet *db, const char *dir, dx_fleet_counts *counts,
                              ddx_error *err);

/* The report over jobs that ended in [since, until) (Unix seconds) as a JSON object (new
 * reference; schema in docs/fleet.md). alpha: the host test's family-wise error rate. */
DX_HIDDEN int dx_fleet_report(dx_fleet *db, int64_t since, int64_t until, double alpha,
                              json_t **out, ddx_error *err);
DX_HIDDEN int dx_fleet_write_text(const json_t *rep, FILE *out);
DX_HIDDEN int dx_fleet_write_html(const json_t *rep, FILE *out);

/* "7d", "12h", "30m", "90s" (before now) or a date "2024-05-01", "2024-05-01T12:00:00[Z]" (a
 * time without a zone is local time). Returns 0 and sets *out, or -1. */
DX_HIDDEN int dx_fleet_parse_when(const char *s, int64_t now, int64_t *out);

/* P(X >= k) for X the number of successes of independent trials with probabilities p[0..n)
 * (the Poisson-binomial upper tail; the binomial tail when every p is the same). */
DX_HIDDEN double dx_fleet_tail(const double *p, size_t n, size_t k);

#endif
