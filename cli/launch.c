/* launch.c -- `ddx serve` and `ddx site` in the static ddx binary: they run ddx-web, the same
 * command line linked with the web libraries, with the same arguments.
 *
 * Why two executables: ddx is linked statically so `ddx diagnose` starts in a few milliseconds
 * (CMakeLists.txt, DDX_STATIC). Debian ships libmicrohttpd as a static archive, but it needs
 * GnuTLS, whose own dependencies (p11-kit, libunistring) come only as shared libraries; md4c
 * comes only as a shared library. Linking them into ddx would make it a dynamic executable and
 * cost every diagnosis the loading of a dozen libraries. So the web commands live in ddx-web
 * (cli/web_*.c), dynamically linked, built beside ddx; ddx replaces itself with it (execv) for
 * those two commands only, and nothing else changes for the commands that must start fast.
 */
#include "cli.h"

#include <errno.h>
#include <limits.h>
#include <unistd.h>

/* Runs ddx-web from the folder of this executable with our own arguments; returns only on
 * failure (with the message printed). */
static int run_web(cli_args *a)
{
    char self[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n <= 0)
        return cli_fail("%s: cannot find where ddx is installed (/proc/self/exe): %s", a->argv[1],
                        strerror(errno));
    self[n] = '\0';
    char *slash = strrchr(self, '/');
    char web[PATH_MAX + 16];
    snprintf(web, sizeof web, "%.*s/ddx-web", slash ? (int)(slash - self) : 1, slash ? self : ".");
    char *argv0 = a->argv[0];
    a->argv[0] = web;
    execv(web, a->argv);
    int err = errno;
    a->argv[0] = argv0;
    return cli_fail("%s: cannot run %s (%s); it is built beside ddx when libmicrohttpd and md4c "
                    "are installed (scripts/install-deps.sh, then cmake --build build)",
                    a->argv[1], web, strerror(err));
}

int cli_serve(cli_args *a) { return run_web(a); }

int cli_site(cli_args *a) { return run_web(a); }
