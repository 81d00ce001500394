/* facts.h -- facts about a job (versions, configuration, environment) and the conditions that
 * references state over them.
 *
 * A fact is a name ("deepspeed.version"), a value kept as text ("0.14.2"), and where it came
 * from (input path and line). The first value seen for a name wins; later different values are
 * counted as conflicts. Conditions compare facts as versions, numbers, booleans or text.
 * The extractors (which lines and files give which facts) are the table in facts.c.
 */
#ifndef DX_FACTS_H
#define DX_FACTS_H

#include "kb.h"

typedef struct dx_fact {
    char *name;
    char *value;
    char *path;    /* input display path */
    uint64_t line; /* 0 when not tied to a line */
    int used;      /* a context condition or check consulted it */
} dx_fact;

typedef struct dx_facts {
    dx_fact *v;
    size_t n, cap;
    /* an index by name (open addressing: i + 1 into v, 0 empty, power-of-two size): a job of
       100,000 ranks sets a few facts per rank, and looking each up by scanning was quadratic */
    uint32_t *idx;
    size_t idx_cap;
} dx_facts;

DX_HIDDEN int dx_facts_set(dx_facts *f, const char *name, const char *value, size_t vlen,
                           const char *path, uint64_t line);
DX_HIDDEN dx_fact *dx_facts_get(const dx_facts *f, const char *name);
DX_HIDDEN void dx_facts_fini(dx_facts *f);

/* Compares two versions the way people write them: "2.5.1+cu121" < "2.10", "0.14.2",
 * "2.1.0a0+git1234" (pre-release before release), "12.2". Returns <0, 0, >0. */
DX_HIDDEN int dx_version_cmp(const char *a, const char *b);
/* "range" is a comma-separated list of >=, >, <=, <, ==, != bounds: ">=0.14.0,<0.15". */
DX_HIDDEN int dx_version_in_range(const char *v, const char *range);

/* Facts computed from others once every input is read (nccl.timeout_s from the watchdog's ms). */
DX_HIDDEN int dx_facts_derive(dx_facts *f);

/* Evaluates a condition: 1 holds, 0 does not hold, -1 the fact is not known. */
DX_HIDDEN int dx_cond_eval(const dx_cond *c, dx_facts *f, dx_fact **used);

/* Fact extractors that read log and environment lines. They are extra signals of the matcher,
 * numbered after the references' signals; fact_of_signal tells which fact a hit sets. */
DX_HIDDEN size_t dx_fact_extractor_count(void);
DX_HIDDEN const dx_signal *dx_fact_extractor_signal(size_t i);
/* Records the fact(s) of extractor i given the confirmed match's captures. */
struct dx_scan;
DX_HIDDEN int dx_fact_extract(size_t i, struct dx_scan *s, dx_facts *f, const char *path,
                              uint64_t line);
/* Is name a fact the extractors, the config readers or the derivations above can set (job
 * facts aside: src/job/)? */
DX_HIDDEN int dx_fact_known(const char *name);

/* Facts from a whole config file (DeepSpeed JSON, accelerate YAML). A config nested deeper than
 * DX_CONFIG_DEPTH is not parsed (DDX_EFORMAT, err naming the file and the depth): parsers slow
 * down with nesting, and no real config nests that deep. DDX_OK otherwise, facts or none. */
#define DX_CONFIG_DEPTH 64
DX_HIDDEN int dx_facts_from_config(dx_facts *f, const char *path, const char *text, size_t len,
                                   ddx_error *err);
/* The deepest nesting of [ and { in text (outside quoted strings), stopping once past max; the
 * line where that depth was first reached in *line. For configs and reference front matter. */
DX_HIDDEN size_t dx_nesting_depth(const char *text, size_t len, size_t max, size_t *line);

#endif
