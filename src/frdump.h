/* frdump.h -- reading PyTorch NCCL flight-recorder dumps and comparing them across ranks.
 *
 * How to call it (from diag.c or anywhere):
 *
 *     dx_frdump *d = dx_calloc(n, sizeof *d);          // one per dump file, zeroed
 *     for (i = 0; i < n; i++)
 *         if (dx_frdump_parse(name[i], data[i], len[i], &d[i], &err) != DDX_OK)
 *             ... warn with err.message; d[i] stays valid (empty) and may still be passed on
 *     dx_fr_finding f[32];
 *     size_t k = dx_frdump_analyze(d, n, f, 32);       // f[0..k-1], earliest sequence first
 *     for (i = 0; i < n; i++) dx_frdump_fini(&d[i]);
 *     dx_free(d);
 *
 * name is the file's name or relative path ("nccl_trace_rank_3", "/tmp/nccl_trace_rank_3"): the
 * rank comes from it (dx_attrib_rank_from_name), else from a top-level "rank" key, else -1. A
 * dump whose rank is -1 is parsed but left out of the analysis. data need not be NUL-terminated.
 * The content is detected, not the name: JSON when the first non-blank byte is '{', pickle when
 * it starts with 0x80 and protocol 2..5. A file that is neither gives DDX_EFORMAT, so a caller
 * can try every file named like a dump and ignore that code.
 *
 * Pickles are never unpickled: a reader for the plain-data opcodes alone (dicts, lists, tuples,
 * str, bytes, int, float, bool, None, memo) builds jansson values, so both formats share one
 * extraction. Any other opcode (GLOBAL, REDUCE, BUILD, ...) is refused with DDX_EFORMAT.
 *
 * Limits: DX_FR_MAX_ENTRIES entries per dump (later ones are counted in `dropped`), strings cut
 * to the sizes of the fields below, container nesting 64, pickle stack 1M items, memo 1M slots,
 * 1M values copied by memo gets. Everything the structs hold is owned by them (dx_frdump_fini).
 */
#ifndef DX_FRDUMP_H
#define DX_FRDUMP_H

#include "dx.h"

#define DX_FR_MAX_ENTRIES 20000
#define DX_FR_MAX_PGS 4096

enum dx_fr_state { DX_FR_UNKNOWN = 0, DX_FR_SCHEDULED = 1, DX_FR_STARTED = 2, DX_FR_COMPLETED = 3 };

typedef struct dx_fr_entry {
    char pg[64];        /* process_group[0] (the PG's name), "" when absent */
    long long pg_id;    /* pg_id, -1 when absent */
    long long coll_seq; /* collective_seq_id, -1 when absent */
    long long p2p_seq;  /* p2p_seq_id, -1 when absent */
    char op[64];        /* profiling_name: "nccl:all_reduce", "nccl:send 1->2" */
    int state;          /* enum dx_fr_state */
    double duration_ms; /* -1 when absent */
    double created_ms;  /* time_created_ns / 1e6 (enqueue time on the rank), -1 when absent */
    char in_sizes[96];  /* input_sizes flattened: "[[1024,1024]]"; cut with "..." */
    char in_dtypes[48]; /* input_dtypes joined with ',': "Float", "Float,Half" */
    int is_p2p;
} dx_fr_entry;

typedef struct dx_fr_pg {
    char name[64]; /* pg_config key / name */
    char desc[64];
    int *ranks; /* global ranks from pg_config "ranks"; NULL when absent or "[]" */
    size_t nranks;
    int has_status;                                        /* pg_status had this PG */
    long long last_enqueued, last_started, last_completed; /* -1 when unknown */
} dx_fr_pg;

typedef struct dx_frdump {
    int rank;              /* global rank, -1 unknown */
    char version[32];      /* "version" */
    char nccl_version[32]; /* "comm_lib_version" or older "nccl_version" */
    dx_fr_pg *pgs;         /* owned; pg_config and pg_status merged by name */
    size_t npgs;
    dx_fr_entry *entries; /* owned, in dump order */
    size_t nentries;
    size_t dropped; /* entries over DX_FR_MAX_ENTRIES, not kept */
} dx_frdump;

enum dx_fr_kind {
    DX_FR_MISSING_RANK = 1, /* a rank never reached a collective the others reached, or no dump */
    DX_FR_OP,               /* profiling_name differs from the majority at the same sequence */
    DX_FR_SIZE,             /* input sizes differ */
    DX_FR_DTYPE,            /* input dtypes differ */
    DX_FR_STATE             /* a rank did not start/complete what the others did */
};

typedef struct dx_fr_finding {
    int kind; /* enum dx_fr_kind */
    int rank; /* the odd rank out, -1 when no single rank */
    char pg[64];
    long long seq; /* collective_seq_id; -1 for "no dump for rank N" */
    char why[320]; /* one sentence naming the ranks and values */
} dx_fr_finding;

/* The short name of a kind: "missing-rank", "op", "size", "dtype", "state"; "?" otherwise. */
DX_HIDDEN const char *dx_frdump_kind_name(int kind);

/* Parses one dump. out is always initialised (empty on error) and must be finished with
 * dx_frdump_fini. Errors: DDX_EFORMAT (not a dump, refused opcode, malformed or truncated),
 * DDX_ENOMEM; err's message starts with name. */
DX_HIDDEN int dx_frdump_parse(const char *name, const void *data, size_t len, dx_frdump *out,
                              ddx_error *err);
DX_HIDDEN void dx_frdump_fini(dx_frdump *d);

/* Compares the dumps of one job. Writes at most max findings, earliest sequence first ("no dump"
 * findings last), and returns how many it wrote. Collectives are matched by (PG name,
 * collective_seq_id) among the ranks of the PG (pg_config ranks when any dump has them, else the
 * dumps that mention the PG), each rank compared with the majority of the ranks that have the
 * entry; a tie names no rank (-1). P2P entries are not compared. Returns what it found so far
 * when memory runs out. */
DX_HIDDEN size_t dx_frdump_analyze(const dx_frdump *dumps, size_t n, dx_fr_finding *out,
                                   size_t max);

/* Each rank's working time between its collectives, from its own dump alone: for consecutive
 * completed collectives k-1, k of one PG with durations and creation times, the time from the
 * end of k-1 (created + duration_ms: every rank leaves a collective together) to the creation of
 * k. A straggler works longest and waits least. Calls add(ctx, rank, seconds) for each interval
 * (negative ones, a CPU running ahead of its GPU, are skipped) and returns how many it gave. */
DX_HIDDEN size_t dx_frdump_work(const dx_frdump *dumps, size_t n,
                                void (*add)(void *ctx, int rank, double seconds), void *ctx);

#endif
