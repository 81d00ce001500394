/* web_serve.c -- `ddx serve`: the catalogue, the upload page and the CLI's JSON over HTTP,
 * with libmicrohttpd (Debian's libmicrohttpd-dev).
 *
 * Routes (one table, GET and HEAD unless said):
 *   /, /index.html        the catalogue with search            (web_pages.c)
 *   /ref/<id>.html        one reference
 *   /diagnose             the upload page; POST: the HTML report of what was sent
 *   /api/refs             = ddx refs --json [QUERY] (?q=, ?category=, ?full=1)
 *   /api/refs/<id>        = ddx show --json ID
 *   /api/diagnose         POST: = ddx diagnose --json (a form's files, or the body itself)
 *
 * Limits: it listens on 127.0.0.1 unless --listen names another address, and then only
 * answers requests whose Host is that loopback name (no DNS rebinding). At most
 * MAX_CONNECTIONS connections, MAX_UPLOADS uploads being received and MAX_DIAGNOSES diagnoses
 * running at once (more uploads: 503; more diagnoses wait their turn). An upload is read into
 * memory and never written to disk; one whose declared size is over --max-upload is refused
 * before its body is read (413), one that turns out larger is read to its end but not kept,
 * then refused, and one that goes on far past the limit is cut off. Requests idle for
 * TIMEOUT_S seconds are dropped; headers are limited by libmicrohttpd's per-connection memory.
 * Every page carries the Content-Security-Policy of html.c, also sent as a header.
 *
 * Ctrl-C or SIGTERM stops it cleanly (sigwait in the main thread; the daemon's threads serve).
 */
#include "web.h"

#include <arpa/inet.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <strings.h>
#include <sys/socket.h>

#include "html.h"

#define DEFAULT_PORT 8080
#define DEFAULT_UPLOAD_MB 64
#define MAX_CONNECTIONS 32
#define MAX_UPLOADS 4
#define MAX_DIAGNOSES 2
#define MAX_PARTS 64
#define TIMEOUT_S 60
#define FORM_SLACK (64u << 10) /* a form's boundaries and part headers around the data */

typedef struct server {
    cli_web web;
    size_t max_upload;
    int loopback; /* listening on a loopback address: check Host */
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int uploads, diagnoses;
} server;

typedef struct part {
    char name[128];
    dx_buf data;
} part;

typedef struct request {
    server *s;
    int api;  /* /api/diagnose: answer JSON */
    int slot; /* holds one of the MAX_UPLOADS slots */
    struct MHD_PostProcessor *pp;
    part parts[MAX_PARTS];
    size_t nparts;
    uint64_t received; /* bytes of data seen, kept or not */
    int too_big, too_many, oom, bad_form;
} request;

/* ==== replies ============================================================================== */

typedef struct page {
    char *p;
    size_t n;
    FILE *f;
} page;

static int page_open(page *pg)
{
    pg->p = NULL;
    pg->n = 0;
    pg->f = open_memstream(&pg->p, &pg->n);
    return pg->f ? 0 : -1;
}

/* Sends body (malloc'd; taken) with the status and type, and the headers every answer has. */
static enum MHD_Result send_body(struct MHD_Connection *c, unsigned status, const char *type,
                                 char *body, size_t n)
{
    struct MHD_Response *r = MHD_create_response_from_buffer(n, body, MHD_RESPMEM_MUST_FREE);
    if (!r) {
        free(body);
        return MHD_NO;
    }
    char csp[200];
    snprintf(csp, sizeof csp,
             "default-src 'none'; style-src 'unsafe-inline'; img-src data:; script-src "
             "'sha256-%s'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'",
             dx_web_catalogue_js_sha256);
    MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
    MHD_add_response_header(r, "Content-Security-Policy", csp);
    MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
    MHD_add_response_header(r, "Referrer-Policy", "no-referrer");
    MHD_add_response_header(r, "Cache-Control", "no-store");
    enum MHD_Result ret = MHD_queue_response(c, status, r);
    MHD_destroy_response(r);
    return ret;
}

static enum MHD_Result page_send(struct MHD_Connection *c, unsigned status, const char *type,
                                 page *pg, int rc)
{
    if (fclose(pg->f) || rc) {
        free(pg->p);
        return MHD_NO;
    }
    return send_body(c, status, type, pg->p, pg->n);
}

#define HTML "text/html; charset=utf-8"
#define JSON "application/json"

/* An error: a JSON object for the API, else a page that says it. */
static enum MHD_Result send_error(struct MHD_Connection *c, const server *s, int api,
                                  unsigned status, const char *title, const char *message)
{
    page pg;
    if (page_open(&pg))
        return MHD_NO;
    int rc = 0;
    if (api) {
        fputs("{\"error\": \"", pg.f);
        for (const char *p = message; *p; p++) {
            unsigned char ch = (unsigned char)*p;
            if (ch == '"' || ch == '\\')
                fprintf(pg.f, "\\%c", ch);
            else if (ch < 0x20)
                fprintf(pg.f, "\\u%04x", ch);
            else
                fputc(ch, pg.f);
        }
        fprintf(pg.f, "\", \"status\": %u}\n", status);
    } else
        rc = cli_web_message(pg.f, &s->web, "/", title, message);
    return page_send(c, status, api ? JSON : HTML, &pg, rc);
}

/* ==== GET ================================================================================== */

typedef enum MHD_Result (*route_fn)(server *s, struct MHD_Connection *c, const char *rest);

static enum MHD_Result get_catalogue(server *s, struct MHD_Connection *c, const char *rest)
{
    (void)rest;
    page pg;
    if (page_open(&pg))
        return MHD_NO;
    return page_send(c, MHD_HTTP_OK, HTML, &pg, cli_web_catalogue(pg.f, &s->web));
}

static enum MHD_Result get_upload(server *s, struct MHD_Connection *c, const char *rest)
{
    (void)rest;
    page pg;
    if (page_open(&pg))
        return MHD_NO;
    return page_send(c, MHD_HTTP_OK, HTML, &pg, cli_web_upload(pg.f, &s->web, NULL));
}

/* The reference named by rest ("<id>" plus suffix), or 0 with a 404 sent. */
static int find_ref(server *s, const char *rest, const char *suffix, size_t *idx)
{
    char id[256];
    size_t n = strlen(rest), ns = strlen(suffix);
    if (n <= ns || n - ns >= sizeof id || strcmp(rest + n - ns, suffix) != 0)
        return 0;
    memcpy(id, rest, n - ns);
    id[n - ns] = '\0';
    return ddx_kb_find(s->web.kb, id, idx) == 0;
}

static enum MHD_Result get_ref(server *s, struct MHD_Connection *c, const char *rest)
{
    size_t idx;
    if (!find_ref(s, rest, ".html", &idx))
        return send_error(c, s, 0, MHD_HTTP_NOT_FOUND, "No such reference",
                          "The catalogue has no reference by that name; search for it in the "
                          "catalogue.");
    page pg;
    if (page_open(&pg))
        return MHD_NO;
    return page_send(c, MHD_HTTP_OK, HTML, &pg, cli_web_ref(pg.f, &s->web, idx));
}

static enum MHD_Result get_api_refs(server *s, struct MHD_Connection *c, const char *rest)
{
    (void)rest;
    const char *q = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "q");
    const char *cat = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "category");
    const char *full = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "full");
    page pg;
    if (page_open(&pg))
        return MHD_NO;
    cli_refs_json(pg.f, s->web.kb, q && *q ? q : NULL, cat && *cat ? cat : NULL,
                  full && strcmp(full, "0") != 0);
    return page_send(c, MHD_HTTP_OK, JSON, &pg, 0);
}

static enum MHD_Result get_api_ref(server *s, struct MHD_Connection *c, const char *rest)
{
    size_t idx;
    if (!find_ref(s, rest, "", &idx))
        return send_error(c, s, 1, MHD_HTTP_NOT_FOUND, "",
                          "no such reference; list them at /api/refs");
    page pg;
    if (page_open(&pg))
        return MHD_NO;
    ddx_error e = {0};
    return page_send(c, MHD_HTTP_OK, JSON, &pg, ddx_kb_write_ref_json(s->web.kb, idx, 1, pg.f, &e));
}

static const struct {
    const char *path;
    int prefix; /* path is a prefix; the rest of the URL goes to the function */
    route_fn fn;
} routes[] = {
    {"/", 0, get_catalogue}, {"/index.html", 0, get_catalogue}, {"/diagnose", 0, get_upload},
    {"/ref/", 1, get_ref},   {"/api/refs", 0, get_api_refs},    {"/api/refs/", 1, get_api_ref},
};

static enum MHD_Result route_get(server *s, struct MHD_Connection *c, const char *url)
{
    for (size_t i = 0; i < DX_ARRAY_LEN(routes); i++) {
        size_t n = strlen(routes[i].path);
        if (routes[i].prefix ? !strncmp(url, routes[i].path, n) && url[n]
                             : !strcmp(url, routes[i].path))
            return routes[i].fn(s, c, url + (routes[i].prefix ? n : strlen(url)));
    }
    return send_error(c, s, !strncmp(url, "/api/", 5), MHD_HTTP_NOT_FOUND, "Not found",
                      "There is no page at this address.");
}

/* ==== POST: uploads ======================================================================== */

/* Keeps n bytes of the upload in part p unless the upload is over the limit. */
static void keep(request *rq, part *p, const char *data, size_t n)
{
    rq->received += n;
    if (rq->too_big || rq->received > rq->s->max_upload) {
        rq->too_big = 1;
        return;
    }
    if (dx_buf_add(&p->data, data, n))
        rq->oom = 1;
}

static part *new_part(request *rq, const char *filename)
{
    if (rq->nparts == MAX_PARTS) {
        rq->too_many = 1;
        return NULL;
    }
    part *p = &rq->parts[rq->nparts++];
    /* the file's own name, without folders, names it in the report (escaped there) */
    const char *base = filename ? strrchr(filename, '/') : NULL;
    base = base ? base + 1 : filename;
    if (base && strrchr(base, '\\'))
        base = strrchr(base, '\\') + 1;
    snprintf(p->name, sizeof p->name, "%s", base && *base ? base : "pasted.log");
    return p;
}

static enum MHD_Result on_field(void *cls, enum MHD_ValueKind kind, const char *key,
                                const char *filename, const char *content_type,
                                const char *transfer_encoding, const char *data, uint64_t off,
                                size_t size)
{
    request *rq = cls;
    (void)kind;
    (void)content_type;
    (void)transfer_encoding;
    if (strcmp(key, "text") != 0 && strcmp(key, "file") != 0)
        return MHD_YES; /* other fields are not ours */
    part *p = off == 0 ? new_part(rq, filename) : rq->nparts ? &rq->parts[rq->nparts - 1] : NULL;
    if (p && size)
        keep(rq, p, data, size);
    return MHD_YES;
}

static void request_free(request *rq)
{
    if (rq->pp)
        MHD_destroy_post_processor(rq->pp);
    for (size_t i = 0; i < rq->nparts; i++)
        dx_buf_fini(&rq->parts[i].data);
    if (rq->slot) {
        pthread_mutex_lock(&rq->s->mu);
        rq->s->uploads--;
        pthread_mutex_unlock(&rq->s->mu);
    }
    dx_free(rq);
}

static void on_done(void *cls, struct MHD_Connection *c, void **ctx,
                    enum MHD_RequestTerminationCode toe)
{
    (void)cls;
    (void)c;
    (void)toe;
    if (*ctx)
        request_free(*ctx);
    *ctx = NULL;
}

/* Diagnoses the parts; the report (HTML or JSON) or an error message in *pg. */
static int diagnose(server *s, request *rq, page *pg, char *why, size_t cap)
{
    ddx_job *job = NULL;
    ddx_report *rep = NULL;
    ddx_error e = {0};
    int rc = -1;
    pthread_mutex_lock(&s->mu);
    while (s->diagnoses >= MAX_DIAGNOSES)
        pthread_cond_wait(&s->cv, &s->mu);
    s->diagnoses++;
    pthread_mutex_unlock(&s->mu);
    if (ddx_job_new(&job, s->web.kb, &e))
        goto done;
    for (size_t i = 0; i < rq->nparts; i++)
        if (rq->parts[i].data.n && ddx_job_add_buffer(job, rq->parts[i].name, rq->parts[i].data.p,
                                                      rq->parts[i].data.n, &e))
            goto done;
    if (ddx_job_diagnose(job, 0, &rep, &e))
        goto done;
    rc = rq->api ? ddx_report_write_json(rep, pg->f, &e)
                 : ddx_report_write_html(rep, DDX_HTML_SITE, pg->f, &e);
done:
    if (rc)
        snprintf(why, cap, "%s", e.message[0] ? e.message : "out of memory");
    ddx_report_free(rep);
    ddx_job_free(job);
    pthread_mutex_lock(&s->mu);
    s->diagnoses--;
    pthread_cond_signal(&s->cv);
    pthread_mutex_unlock(&s->mu);
    return rc;
}

static enum MHD_Result upload_done(server *s, struct MHD_Connection *c, request *rq)
{
    char why[600];
    size_t have = 0;
    for (size_t i = 0; i < rq->nparts; i++)
        have += rq->parts[i].data.n;
    if (rq->too_big) {
        snprintf(why, sizeof why,
                 "The upload is larger than this server takes (%.1f MiB; ddx serve "
                 "--max-upload); send fewer or compressed files, or run ddx diagnose on them.",
                 (double)s->max_upload / 1048576.0);
        return send_error(c, s, rq->api, MHD_HTTP_CONTENT_TOO_LARGE, "Upload too large", why);
    }
    if (rq->too_many) {
        snprintf(why, sizeof why,
                 "The upload has more than %d files; pack them in one .tar.gz or .zip archive.",
                 MAX_PARTS);
        return send_error(c, s, rq->api, MHD_HTTP_CONTENT_TOO_LARGE, "Too many files", why);
    }
    if (rq->bad_form)
        return send_error(c, s, rq->api, MHD_HTTP_BAD_REQUEST, "Not a form",
                          "The form could not be read; send it with the upload page or "
                          "curl -F file=@LOG.");
    if (rq->oom)
        return send_error(c, s, rq->api, MHD_HTTP_SERVICE_UNAVAILABLE, "Out of memory",
                          "The server ran out of memory reading the upload; try a smaller one.");
    if (!have) {
        if (rq->api)
            return send_error(c, s, 1, MHD_HTTP_BAD_REQUEST, "",
                              "nothing to diagnose: send the log as the request body, or as "
                              "form fields named file or text");
        page pg;
        if (page_open(&pg))
            return MHD_NO;
        return page_send(
            c, MHD_HTTP_BAD_REQUEST, HTML, &pg,
            cli_web_upload(pg.f, &s->web, "Nothing to diagnose: paste a log or choose a file."));
    }
    page pg;
    if (page_open(&pg))
        return MHD_NO;
    if (diagnose(s, rq, &pg, why, sizeof why)) {
        fclose(pg.f);
        free(pg.p);
        return send_error(c, s, rq->api, MHD_HTTP_UNPROCESSABLE_CONTENT, "Cannot read the upload",
                          why);
    }
    return page_send(c, MHD_HTTP_OK, rq->api ? JSON : HTML, &pg, 0);
}

/* The first call of a POST: refuse it at once, or set up its reading. */
static enum MHD_Result upload_start(server *s, struct MHD_Connection *c, const char *url,
                                    void **ctx)
{
    int api = !strcmp(url, "/api/diagnose");
    if (!api && strcmp(url, "/diagnose") != 0)
        return send_error(c, s, !strncmp(url, "/api/", 5), MHD_HTTP_METHOD_NOT_ALLOWED,
                          "Not allowed", "Only /diagnose and /api/diagnose take a POST.");
    const char *len =
        MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
    if (len && strtoull(len, NULL, 10) > s->max_upload + FORM_SLACK) {
        char why[300];
        snprintf(why, sizeof why,
                 "The upload is %.1f MiB; this server takes at most %.1f MiB (ddx serve "
                 "--max-upload). Send fewer or compressed files, or run ddx diagnose on them.",
                 (double)strtoull(len, NULL, 10) / 1048576.0, (double)s->max_upload / 1048576.0);
        return send_error(c, s, api, MHD_HTTP_CONTENT_TOO_LARGE, "Upload too large", why);
    }
    pthread_mutex_lock(&s->mu);
    int busy = s->uploads >= MAX_UPLOADS;
    s->uploads += !busy;
    pthread_mutex_unlock(&s->mu);
    if (busy)
        return send_error(c, s, api, MHD_HTTP_SERVICE_UNAVAILABLE, "Busy",
                          "The server is reading other uploads; try again in a moment.");
    request *rq = dx_calloc(1, sizeof *rq);
    if (!rq) {
        pthread_mutex_lock(&s->mu);
        s->uploads--;
        pthread_mutex_unlock(&s->mu);
        return MHD_NO;
    }
    rq->s = s;
    rq->api = api;
    rq->slot = 1;
    *ctx = rq;
    /* a form (the upload page, curl -F), or for the API the body itself as the one input */
    const char *type =
        MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_TYPE);
    int multipart = type && !strncasecmp(type, "multipart/form-data", 19);
    int urlencoded = type && !strncasecmp(type, "application/x-www-form-urlencoded", 33);
    if (multipart || (urlencoded && !api)) {
        if (!(rq->pp = MHD_create_post_processor(c, 64 * 1024, on_field, rq)))
            return send_error(c, s, api, MHD_HTTP_BAD_REQUEST, "Not a form",
                              "The form could not be read (no boundary in its Content-Type); "
                              "send it with the upload page or curl -F file=@LOG.");
    } else if (!api)
        return send_error(c, s, 0, MHD_HTTP_UNSUPPORTED_MEDIA_TYPE, "Not a form",
                          "Send the log with the form of the upload page.");
    else
        new_part(rq, "upload");
    return MHD_YES;
}

/* ==== the handler ========================================================================== */

/* With a loopback address, only loopback names may be asked for (no DNS rebinding). */
static int host_ok(const server *s, struct MHD_Connection *c)
{
    if (!s->loopback)
        return 1;
    const char *h = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_HOST);
    if (!h)
        return 0;
    static const char *const names[] = {"127.0.0.1", "localhost", "[::1]"};
    for (size_t i = 0; i < DX_ARRAY_LEN(names); i++) {
        size_t n = strlen(names[i]);
        if (!strncmp(h, names[i], n) && (!h[n] || h[n] == ':'))
            return 1;
    }
    return 0;
}

static enum MHD_Result handle(void *cls, struct MHD_Connection *c, const char *url,
                              const char *method, const char *version, const char *data,
                              size_t *size, void **ctx)
{
    server *s = cls;
    request *rq = *ctx;
    (void)version;
    if (!rq) {
        if (!host_ok(s, c))
            return send_error(c, s, 0, MHD_HTTP_MISDIRECTED_REQUEST, "Wrong host",
                              "This server answers only to 127.0.0.1 or localhost.");
        if (!strcmp(method, MHD_HTTP_METHOD_POST))
            return upload_start(s, c, url, ctx);
        if (strcmp(method, MHD_HTTP_METHOD_GET) != 0 && strcmp(method, MHD_HTTP_METHOD_HEAD) != 0)
            return send_error(c, s, 0, MHD_HTTP_METHOD_NOT_ALLOWED, "Not allowed",
                              "This server answers GET, HEAD and POST only.");
        return route_get(s, c, url);
    }
    if (*size) {
        if (rq->pp) {
            if (!rq->bad_form && MHD_post_process(rq->pp, data, *size) != MHD_YES)
                rq->bad_form = 1; /* read the rest, then say so */
        } else
            keep(rq, &rq->parts[0], data, *size);
        *size = 0;
        /* read a little past the limit, so the client sees the refusal; not forever */
        return rq->received > 2 * (uint64_t)s->max_upload + FORM_SLACK ? MHD_NO : MHD_YES;
    }
    return upload_done(s, c, rq);
}

/* ==== the command ========================================================================== */

int cli_serve(cli_args *a)
{
    if (a->nargs)
        return cli_fail("serve: takes no arguments, only options; see 'ddx serve --help'");
    struct sockaddr_storage ss;
    memset(&ss, 0, sizeof ss);
    const char *addr = a->listen ? a->listen : "127.0.0.1";
    unsigned port = a->port >= 0 ? (unsigned)a->port : DEFAULT_PORT;
    struct sockaddr_in *v4 = (struct sockaddr_in *)&ss;
    struct sockaddr_in6 *v6 = (struct sockaddr_in6 *)&ss;
    int ipv6 = 0, loopback;
    if (inet_pton(AF_INET, addr, &v4->sin_addr) == 1) {
        v4->sin_family = AF_INET;
        v4->sin_port = htons((uint16_t)port);
        loopback = (ntohl(v4->sin_addr.s_addr) >> 24) == 127;
    } else if (inet_pton(AF_INET6, addr, &v6->sin6_addr) == 1) {
        v6->sin6_family = AF_INET6;
        v6->sin6_port = htons((uint16_t)port);
        loopback = IN6_IS_ADDR_LOOPBACK(&v6->sin6_addr);
        ipv6 = 1;
    } else
        return cli_fail("serve: --listen takes an IP address (127.0.0.1, 0.0.0.0, ::1), not "
                        "'%s'",
                        addr);
    ddx_kb *kb = NULL;
    if (cli_open_kb(a, &kb))
        return 2;
    server s = {
        .max_upload =
            (size_t)((a->max_upload_mb > 0 ? a->max_upload_mb : DEFAULT_UPLOAD_MB) * 1048576.0),
        .loopback = loopback};
    s.web = (cli_web){kb, 1, s.max_upload};
    pthread_mutex_init(&s.mu, NULL);
    pthread_cond_init(&s.cv, NULL);
    /* the daemon's threads inherit this mask: only sigwait below sees these signals */
    sigset_t stop;
    sigemptyset(&stop);
    sigaddset(&stop, SIGINT);
    sigaddset(&stop, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &stop, NULL);
    signal(SIGPIPE, SIG_IGN);
    struct MHD_Daemon *d = MHD_start_daemon(
        MHD_USE_AUTO | MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_THREAD_PER_CONNECTION |
            MHD_USE_ERROR_LOG | (ipv6 ? MHD_USE_IPv6 : 0),
        (uint16_t)port, NULL, NULL, handle, &s, MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&ss,
        MHD_OPTION_CONNECTION_LIMIT, (unsigned)MAX_CONNECTIONS, MHD_OPTION_CONNECTION_TIMEOUT,
        (unsigned)TIMEOUT_S, MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)(64 << 10),
        MHD_OPTION_NOTIFY_COMPLETED, on_done, &s, MHD_OPTION_END);
    int status = 0;
    if (!d) {
        status = cli_fail("serve: cannot listen on %s port %u (in use? try another --port, or "
                          "--port 0 for any free one)",
                          addr, port);
        goto done;
    }
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT);
    if (info && info->port)
        port = info->port;
    fprintf(stderr,
            "ddx serve: the catalogue is at http://%s%s%s:%u/ (%zu references; uploads up to "
            "%.1f MiB). Ctrl-C stops it.\n",
            ipv6 ? "[" : "", addr, ipv6 ? "]" : "", port, kb->nrefs,
            (double)s.max_upload / 1048576.0);
    if (!loopback)
        fprintf(stderr,
                "ddx serve: listening on %s: anyone who can reach this machine can "
                "browse the catalogue and upload logs\n",
                addr);
    int sig = 0;
    sigwait(&stop, &sig);
    MHD_stop_daemon(d);
    fprintf(stderr, "ddx serve: stopped\n");
done:
    pthread_cond_destroy(&s.cv);
    pthread_mutex_destroy(&s.mu);
    ddx_kb_close(kb);
    return status;
}
