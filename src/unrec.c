/* unrec.c -- the failure ddx could not place, and the references closest to it.
 *
 * A failed job always says something, even when no reference fits: the report then names the
 * root error itself. Which one, in order:
 *   - the first original exception (by reading order) on any rank: neither an echo of another
 *     rank's failure (a peer that closed the connection, a reset, a watchdog or gloo timeout,
 *     an aborted communicator: the lines a waiting rank prints) nor a launcher's wrapper around
 *     a child's failure;
 *   - a traceback cut before its exception line (a poster's excerpt, a log copied
 *     mid-stream), named by its innermost frame;
 *   - the first echo, when every exception is one (the failing rank's own output is then not
 *     in the inputs);
 *   - a process that died in native code without any exception: a signal, C++'s terminate, a
 *     fatal Python error, glibc's checks (the native-crash reading);
 *   - a line that states a failure in another form than an exception line: a logger's ERROR
 *     record, argparse's error, ssh refusing a launcher, torch's NCCL error text, an NCCL WARN
 *     (the failure-lines reading);
 *   - the launcher's record of a failed rank (torchelastic's root-cause entry, its agent,
 *     srun), when there is no exception at all;
 *   - the first echo or launcher's wrapper that no rank printed (a KeyboardInterrupt, a
 *     CalledProcessError pasted alone);
 *   - a hang, when nothing else shows a failure: a stack dump of a live process (py-spy,
 *     faulthandler: people take one of a job that stopped moving), or a note in the log that its
 *     output stopped or the job froze. A log that simply ends is not one: healthy excerpts end
 *     anywhere, in NCCL's set-up or mid-epoch, as a hung job's do.
 * The closest references come from nearest.c and are only pointers for the reader.
 */
#include "unrec.h"

#include <ctype.h>

#include "diag.h"
#include "job/collectives.h"
#include "job/failline.h"
#include "job/launchers.h"
#include "job/native.h"
#include "job/stacks.h"

/* Lines a rank prints because another rank failed, or a launcher prints around a child's
 * failure. Each is a wording of torch, gloo, NCCL, torchelastic, torch.multiprocessing or Ray. */
static const char *const echoes[] = {
    "Connection closed by peer",                    /* gloo transport/tcp/pair.cc */
    "Connection reset by peer",                     /* gloo, TCPStore, any socket */
    "Broken pipe",                                  /* gloo pair.cc write to a dead peer */
    "Watchdog caught collective operation timeout", /* ProcessGroupNCCL */
    "for recv operation to complete",               /* gloo unbound_buffer.cc timeout */
    "for send operation to complete",
    "Some NCCL operations have failed or timed out", /* ProcessGroupNCCL */
    "NCCL communicator was aborted",                 /* ProcessGroupNCCL, after a peer's failure */
    "remote process exited or there was a network error", /* NCCL remote error */
    "ChildFailedError",                                   /* torchelastic's table */
    "ProcessExitedException",                             /* torch.multiprocessing.spawn */
    "ProcessRaisedException",                             /* ... whose child's traceback follows */
    "CalledProcessError",                                 /* a launcher's subprocess.check_call */
    "SignalException",                                    /* torchelastic's agent got a signal */
    "KeyboardInterrupt",                                  /* the launcher's SIGINT to its workers */
    "ActorDiedError",                                     /* Ray: another process died */
    "RayActorError",
    "RayTaskError", /* Ray's wrapper of a task's exception, whose traceback follows */
};

int dx_unrec_is_echo(const char *text, size_t len)
{
    for (size_t i = 0; i < DX_ARRAY_LEN(echoes); i++)
        if (memmem(text, len, echoes[i], strlen(echoes[i])))
            return 1;
    return 0;
}

size_t dx_unrec_exception(const char *text, size_t len, const char **cls)
{
    static const char *const ends[] = {"Error", "Exception", "Interrupt",
                                       "Exit",  "Failure",   "Fault"};
    size_t i = 0, last = 0;
    while (i < len && (isalnum((unsigned char)text[i]) || text[i] == '_' || text[i] == '.')) {
        if (text[i] == '.')
            last = i + 1;
        i++;
    }
    if (i == 0 || (i < len && text[i] != ':' && text[i] != '('))
        return 0;
    size_t n = i - last;
    for (size_t k = 0; k < DX_ARRAY_LEN(ends); k++) {
        size_t e = strlen(ends[k]);
        if (n >= e && !memcmp(text + i - e, ends[k], e)) {
            *cls = text + last;
            return n;
        }
    }
    return 0;
}

void dx_unrec_fini(dx_unrec *u)
{
    if (!u)
        return;
    dx_free(u->text);
    dx_free(u->exception);
    memset(u, 0, sizeof *u);
}

/* ==== the root error ======================================================================= */

typedef struct pick {
    int rank;
    uint64_t seq;
    const char *text;
} pick;

static void consider(pick *p, int rank, uint64_t seq, const char *text)
{
    if (text && (!p->text || seq < p->seq))
        *p = (pick){rank, seq, text};
}

/* "path:line" of torchelastic's root-cause entry as a seq, when its path is one of the inputs. */
static int where_seq(const ddx_report *rep, const char *where, uint64_t *seq)
{
    const char *colon = where ? strrchr(where, ':') : NULL;
    if (!colon)
        return 0;
    for (size_t i = 0; i < rep->ninputs; i++)
        if (strlen(rep->inputs[i].path) == (size_t)(colon - where) &&
            !memcmp(rep->inputs[i].path, where, (size_t)(colon - where))) {
            *seq = (uint64_t)i << 40 | strtoull(colon + 1, NULL, 10);
            return 1;
        }
    return 0;
}

/* No exception at all: the launcher's own record of the rank that failed (text in buf). */
static pick launcher_record(const ddx_report *rep, char *buf, size_t cap)
{
    const dx_job_model *jm = &rep->job;
    int rc_code, rc_has_code;
    const char *rc_where;
    int rc_rank = dx_table_root(jm, &rc_code, &rc_has_code, &rc_where);
    dx_launched l;
    dx_launcher_report(jm, &l);
    int rank = rc_rank >= 0    ? rc_rank
               : l.nagent == 1 ? l.agent_rank
               : l.nsrun == 1  ? l.srun_rank
                               : -1;
    int code = rc_rank >= 0 && rc_has_code ? rc_code
               : l.nagent == 1             ? l.agent_code
               : l.nsrun == 1              ? l.srun_code
                                           : 0;
    if (rank < 0 || code == 0)
        return (pick){-1, 0, NULL};
    snprintf(buf, cap,
             "rank %d exited with code %d (the launcher's record; the rank's "
             "own output holds no error)",
             rank, code);
    pick p = {rank, DX_UNREC_NOWHERE, buf};
    if (rc_rank >= 0)
        (void)where_seq(rep, rc_where, &p.seq);
    return p;
}

/* Nothing failed in the inputs, but they show the job hung: a stack dump of a live process (one
 * is taken of a job that stopped moving), else a note that the output stopped (text in buf). */
static pick hang(const dx_job_model *jm, char *buf, size_t cap)
{
    int rank;
    uint64_t seq;
    const char *frame = dx_stacks_first_dump(jm, &rank, &seq);
    if (frame) {
        snprintf(buf, cap,
                 "the job hung: a stack dump of a live process, with no error; its innermost "
                 "frame: %s",
                 frame);
        return (pick){rank, seq, buf};
    }
    const char *note = dx_stall_note(jm, &rank, &seq);
    if (note) {
        snprintf(buf, cap, "the job hung, as a note in the inputs says (no error line): %s", note);
        return (pick){rank, seq, buf};
    }
    return (pick){-1, 0, NULL};
}

int dx_unrec_find(ddx_report *rep, dx_unrec **out)
{
    *out = NULL;
    const dx_job_model *jm = &rep->job;
    pick orig = {-1, 0, NULL}, echo = {-1, 0, NULL};
    uint64_t seq;
    for (size_t r = 0; r < jm->nby; r++) {
        const dx_rank *x = jm->by_rank[r];
        if (!x)
            continue;
        const char *text = dx_exception_original(jm, x, &seq);
        consider(&orig, x->rank, seq, text);
        text = dx_exception_first(jm, x, &seq);
        consider(&echo, x->rank, seq, text);
    }
    const char *unranked = dx_exception_unranked_original(jm, &seq);
    consider(&orig, -1, seq, unranked);
    pick p = orig;
    char buf[400];
    int own = 0, frame_rank; /* own: the rank's own failure, not an exception line to name */
    uint64_t frame_seq;
    const char *frame = dx_traceback_last_frame(jm, &frame_seq, &frame_rank);
    if (!p.text && frame[0] && frame_seq > dx_exception_last_seq(jm)) {
        /* a traceback cut before its exception line: its innermost frame is all there is */
        snprintf(buf, sizeof buf,
                 "a traceback cut before its exception line; its innermost frame: %s", frame);
        p = (pick){frame_rank, frame_seq, buf};
        own = 1;
    }
    int echoed = 0; /* the line only echoes a failure elsewhere, or is the launcher's record */
    if (!p.text) {
        p = echo;
        echoed = p.text != NULL;
    }
    if (!p.text) {
        /* no exception at all: a process that died below Python */
        int nrank;
        uint64_t nseq;
        const char *native = dx_native_crash(jm, &nrank, &nseq);
        if (native) {
            p = (pick){nrank, nseq, native};
            own = 1;
        }
    }
    if (!p.text) {
        /* no exception, no native crash: a failure stated in another form (not known to be the
         * rank's own: such lines also come from launchers and waiting ranks) */
        int frank;
        uint64_t fseq;
        const char *line = dx_failure_line(jm, &frank, &fseq);
        if (line)
            p = (pick){frank, fseq, line};
    }
    if (!p.text) {
        p = launcher_record(rep, buf, sizeof buf);
        echoed = p.text != NULL;
    }
    if (!p.text) {
        /* an echo or a launcher's wrapper that no rank printed (an excerpt pasted without the
         * launcher's prefixes), after the launcher's own record of the rank */
        p.text = dx_exception_unranked_first(jm, &p.seq);
        p.rank = -1;
        echoed = p.text != NULL;
    }
    if (!p.text)
        p = hang(jm, buf, sizeof buf);
    if (!p.text)
        return DDX_OK;
    dx_unrec *u = dx_calloc(1, sizeof *u);
    if (!u)
        return DDX_ENOMEM;
    u->rank = p.rank;
    u->seq = p.seq;
    u->original = orig.text != NULL || own;
    u->echo = echoed;
    size_t n = strlen(p.text);
    const char *cls;
    size_t cn = own ? 0 : dx_unrec_exception(p.text, n, &cls);
    if (!(u->text = dx_clean_text(p.text, n, 300)) ||
        (cn && !(u->exception = dx_strndup(cls, cn))) ||
        dx_nearest_find(rep->kb, p.text, n, u->nearest, DX_NEAREST_MAX, &u->nnearest)) {
        dx_unrec_fini(u);
        dx_free(u);
        return DDX_ENOMEM;
    }
    *out = u;
    return DDX_OK;
}
