/* facts.c -- ddx facts: the job model's readings, the facts they publish and the culprit policy,
 * listed from the registry (src/job/registry.c) and the policy table (src/job/culprit.c).
 *
 * --markdown prints the job rows of docs/facts.md; a test fails when that file is stale.
 */
#include "cli.h"

#include "job.h"
#include "job/culprit.h"

static void list_readings(void)
{
    printf("Job readings (src/job/registry.c), in the order they run:\n");
    for (size_t i = 0; i < dx_nreadings; i++) {
        const dx_reading *rd = dx_readings[i];
        printf("\n%s: %s\n", rd->name, rd->doc);
        for (size_t k = 0; k < rd->nfacts; k++)
            printf("    fact     %s (%s)\n", rd->facts[k].name, rd->facts[k].type);
        for (size_t k = 0; k < rd->npatterns; k++)
            printf("    pattern  %s: %s\n", rd->patterns[k].id, rd->patterns[k].source);
    }
    printf("\nCulprit votes (src/job/culprit.c), in the order culprit_signals lists them:\n");
    int prec;
    const char *reason, *source;
    for (size_t i = 0; (source = dx_culprit_source(i, &prec, &reason)) != NULL; i++) {
        if (prec < 0)
            printf("  %-16s never decides\n", source);
        else
            printf("  %-16s precedence %3d  %s\n", source, prec, reason);
    }
}

/* The rows of docs/facts.md's job table: a "|" in a text would end its cell. */
static void markdown(void)
{
    printf("| name | type | from | reading |\n|---|---|---|---|\n");
    for (size_t i = 0; i < dx_nreadings; i++)
        for (size_t k = 0; k < dx_readings[i]->nfacts; k++) {
            const dx_reading_fact *f = &dx_readings[i]->facts[k];
            printf("| %s | %s | %s | %s |\n", f->name, f->type, f->from, dx_readings[i]->name);
        }
}

int cli_facts(cli_args *a)
{
    if (a->nargs)
        return cli_fail("facts: takes no arguments; see 'ddx facts --help'");
    if (a->markdown)
        markdown();
    else
        list_readings();
    return fflush(stdout) ? cli_fail("cannot write the output") : 0;
}
