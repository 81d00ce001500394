/* frdump.h -- reading PyTorch NCCL flight-recorder dumps and comparing them across ranks.
 *
 * How to call it (from diag.c or anywhere):
 *
 *     dx_frdump *d = dx_calloc(n, sizeof *d);          // one per dump file, zeroed
 *     for (i = 0; i < n; i++)
 *         if (dx_frdump_parse(name[i], data[i], len[i], &d[i], &err) != DDX_OK)
 *             ... warn with err.message; d[i] stays valid (refused) and is still passed on
 *     dx_frdump_empty(name_of_an_empty_file, &d[n++]); // a rank that left an empty file
 *     dx_fr_finding f[32];
 *     dx_fr_verdict v;
 *     size_t k = dx_frdump_analyze(d, n, f, 32, &v);   // f[0..k-1]: the culprits' first
 *     for (i = 0; i < n; i++) dx_frdump_fini(&d[i]);
 *     dx_free(d);
 *
 * The format is the one torch/csrc/distributed/c10d/FlightRecorder*.{hpp,cpp} writes (dump
 * versions 2.x; torchcomms' hook writes the same): a top dict with "version", "comm_lib_version"
 * (older "nccl_version"), "pg_config" {group name: {name, desc, ranks: "[0, 1]"}}, "pg_status"
 * {the rank's local process-group id: {last_enqueued_collective, last_started_collective,
 * last_completed_collective}} and "entries" (left out of JSON dumps when empty; only the
 * entries not yet completed when the dump was taken with only-active set). Each entry names its
 * group by "process_group" [name, desc] and by "pg_id", the rank's local id, which differs from
 * rank to rank: a group is matched across ranks by its name and member ranks (as PyTorch's
 * analyzer, torch/distributed/flight_recorder, does), never by a local id; a pg_status key is
 * mapped to a group through an entry of the same dump with that pg_id, and key "0" without one
 * to the default group.
 *
 * The rank: the dump's own "rank" field when it has one, else the trailing digits of the file's
 * name (after a .json/.pkl/... extension) as PyTorch's analyzer reads any common prefix
 * ("nccl_trace_rank_7", "_dump_12", "trace_3", "torchcomm_fr_trace_5"), else a rank the name
 * spells out ("rank3_dump"), else -1: such a dump is parsed but left out of the comparison, and
 * the verdict warns about it. data need not be NUL-terminated. The content is detected, not the
 * name: JSON when the first non-blank byte is '{', pickle when it starts with 0x80 and protocol
 * 2..5, an empty dump when there are no bytes at all; anything else gives DDX_EFORMAT.
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
#define DX_FR_MAX_CULPRITS 64
#define DX_FR_NO_PG UINT32_MAX

enum dx_fr_state { DX_FR_UNKNOWN = 0, DX_FR_SCHEDULED = 1, DX_FR_STARTED = 2, DX_FR_COMPLETED = 3 };

/* What became of a dump file. */
enum dx_fr_status {
    DX_FR_READ = 0, /* parsed */
    DX_FR_EMPTY,    /* no bytes at all */
    DX_FR_REFUSED   /* not readable to the end (truncated, malformed, not plain data) */
};

typedef struct dx_fr_entry {
    long long record_id; /* -1 when absent */
    long long pg_id;     /* the rank's local process-group id, -1 when absent */
    long long coll_seq;  /* collective_seq_id, -1 when absent */
    long long p2p_seq;   /* p2p_seq_id, -1 when absent */
    uint32_t pg;         /* index into the dump's pgs (its process_group), DX_FR_NO_PG none */
    int state;           /* enum dx_fr_state */
    int is_p2p;
    double duration_ms; /* -1 when absent */
    double created_ms;  /* time_created_ns / 1e6 (enqueue time on the rank), -1 when absent */
    long long in_numel, out_numel; /* elements of the first input / output, -1 unknown */
    char op[48];                   /* profiling_name: "nccl:all_reduce", "nccl:send 1->2" */
    char in_sizes[64];             /* input_sizes flattened: "[[1024,1024]]"; cut with "..." */
    char out_sizes[64];
    char in_dtypes[32]; /* input_dtypes joined with ',': "Float", "Float,Half" */
    char out_dtypes[32];
} dx_fr_entry;

typedef struct dx_fr_pg {
    char name[64]; /* the group's name (pg_config key, process_group[0]) */
    char desc[64]; /* its description: "default_pg", "undefined", "mesh_tp" */
    int *ranks;    /* global member ranks from pg_config "ranks"; NULL when absent or "[]" */
    size_t nranks;
    long long local_id; /* this rank's pg_id for it, -1 unknown */
    int has_status;     /* a pg_status record was mapped to it */
    long long last_enqueued, last_started, last_completed; /* -1 when unknown */
} dx_fr_pg;

typedef struct dx_frdump {
    int rank;              /* global rank, -1 unknown */
    int rank_from_field;   /* the rank is the dump's own "rank" field */
    int status;            /* enum dx_fr_status */
    char name[96];         /* the file's base name, for messages */
    char prefix[64];       /* the base name before its trailing rank digits; "" when none */
    char version[32];      /* "version" */
    char nccl_version[32]; /* "comm_lib_version" or older "nccl_version" */
    dx_fr_pg *pgs;         /* owned: pg_config, then groups only entries name */
    size_t npgs;
    dx_fr_entry *entries; /* owned, in dump order */
    size_t nentries;
    size_t dropped;         /* entries over DX_FR_MAX_ENTRIES, not kept */
    size_t status_unmapped; /* pg_status records no entry or default group explains */
    int completed_entries;  /* some entry is completed (a full dump, not only-active) */
    char other[48];         /* a pickle that holds something else: what ("a CUDA memory
                                snapshot"); "" otherwise */
} dx_frdump;

enum dx_fr_kind {
    DX_FR_MISSING_RANK = 1, /* a rank never reached a collective the others reached, has
                               nothing in flight while they wait, lacks an entry they have, or
                               left no dump (seq -1) */
    DX_FR_OP,               /* profiling_name differs from the majority at the same sequence */
    DX_FR_SIZE,             /* input or output sizes differ, or break the collective's rule */
    DX_FR_DTYPE,            /* input or output dtypes differ */
    DX_FR_STATE,            /* a rank did not start/complete what the others did */
    DX_FR_EMPTY_DUMP        /* a rank's dump is empty or unreadable (seq -1) */
};

typedef struct dx_fr_finding {
    int kind;      /* enum dx_fr_kind */
    int rank;      /* the odd rank out, -1 when no single rank */
    int root;      /* the rank is one the verdict holds responsible (not a rank that only waits) */
    int rule;      /* every rank's entry alike breaks the collective's own rule (no rank differs) */
    char pg[64];   /* the group's name */
    char desc[48]; /* its description */
    long long seq; /* collective_seq_id; -1 for a dump that is missing, empty or unreadable */
    char op[48];   /* the collective concerned, "" unknown */
    char why[320]; /* one sentence naming the ranks and values */
} dx_fr_finding;

/* What the dumps say as a whole. */
typedef struct dx_fr_verdict {
    size_t ndumps;    /* dumps of this job: read, empty (named like the others) or refused */
    size_t nread;     /* parsed, with a rank */
    size_t ncompared; /* read dumps compared with at least one other rank's */
    size_t nempty, nrefused, nunplaced, nduplicate;
    size_t ngroups;                   /* process groups matched across ranks */
    int culprits[DX_FR_MAX_CULPRITS]; /* the ranks the dumps hold responsible, ascending */
    size_t nculprits;
    int decisive;      /* the culprits are a minority the compared dumps agree on */
    int kind;          /* the kind of finding behind the first culprit, 0 none */
    char where[200];   /* where the first culprit stands: "never enqueued collective 7
                        (nccl:all_reduce) of group 0 (default_pg)"; "" none */
    char warn[4][240]; /* placement warnings: dumps without a rank, two dumps of one rank */
    size_t nwarn;
} dx_fr_verdict;

/* The short name of a kind: "missing-rank", "op", "size", "dtype", "state", "empty-dump"; "?"
 * otherwise. */
DX_HIDDEN const char *dx_frdump_kind_name(int kind);

/* Parses one dump. out is always initialised (refused on error, with the rank its name gives)
 * and must be finished with dx_frdump_fini. No bytes at all make an empty dump (DDX_OK).
 * Errors: DDX_EFORMAT (not a dump, refused opcode, malformed or truncated), DDX_ENOMEM; err's
 * message starts with name. */
DX_HIDDEN int dx_frdump_parse(const char *name, const void *data, size_t len, dx_frdump *out,
                              ddx_error *err);
/* An empty file named like a dump: out records its rank and name (status DX_FR_EMPTY). It is
 * counted only when another dump of the job shares its name's prefix. */
DX_HIDDEN void dx_frdump_empty(const char *name, dx_frdump *out);
DX_HIDDEN void dx_frdump_fini(dx_frdump *d);

/* Whether name looks like a dump's: a base name ending in a rank number. */
DX_HIDDEN int dx_frdump_name_ranked(const char *name);

/* Compares the dumps of one job. Writes at most max findings, those naming the verdict's
 * culprits first, then the others earliest sequence first ("no dump" findings last), and
 * returns how many it wrote; v (may be NULL) gets the verdict. Collectives are matched by group
 * (name and member ranks), collective_seq_id and their order within it (a coalesced batch shares
 * one sequence number), among the group's ranks (pg_config's when any dump has them, else the
 * dumps that mention the group); each rank is compared with the majority of the ranks that have
 * the entry. A tie names no rank, except that ranks behind (not enqueued, not finished) are
 * named when the ranks ahead wait for them. A rank named behind that itself waits in another
 * group for a rank behind there is a victim, not a culprit. P2P entries are not compared.
 * Returns what it found so far when memory runs out. */
DX_HIDDEN size_t dx_frdump_analyze(const dx_frdump *dumps, size_t n, dx_fr_finding *out, size_t max,
                                   dx_fr_verdict *v);

/* Each rank's working time between its collectives, from its own dump alone: for consecutive
 * completed collectives k-1, k of one PG with durations and creation times, the time from the
 * end of k-1 (created + duration_ms: every rank leaves a collective together) to the creation of
 * k. A straggler works longest and waits least. Calls add(ctx, rank, seconds) for each interval
 * (negative ones, a CPU running ahead of its GPU, are skipped) and returns how many it gave. */
DX_HIDDEN size_t dx_frdump_work(const dx_frdump *dumps, size_t n,
                                void (*add)(void *ctx, int rank, double seconds), void *ctx);

#endif
