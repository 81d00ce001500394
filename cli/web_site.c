/* web_site.c -- `ddx site DIR`: the catalogue as static pages, to host on an internal wiki or
 * GitHub Pages, with the same pages as `ddx serve` (web_pages.c) less the upload page.
 *
 * Writes DIR/index.html and DIR/ref/<id>.html, creating DIR and DIR/ref when missing; each
 * file is written whole to a temporary name and renamed, so a failed run leaves no half page.
 * Files other than those are left alone.
 */
#include "web.h"

#include <errno.h>
#include <sys/stat.h>
#include <unistd.h>

static int make_dir(const char *path)
{
    if (mkdir(path, 0777) == 0 || errno == EEXIST) {
        struct stat st;
        if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
            return 0;
        return cli_fail("site: %s exists and is not a folder; give a folder for the pages", path);
    }
    return cli_fail("site: cannot create the folder %s: %s", path, strerror(errno));
}

typedef int (*page_fn)(FILE *out, const cli_web *w, size_t i);

static int index_page(FILE *out, const cli_web *w, size_t i)
{
    (void)i;
    return cli_web_catalogue(out, w);
}

static int write_page(const char *path, page_fn fn, const cli_web *w, size_t i)
{
    char tmp[4200];
    snprintf(tmp, sizeof tmp, "%s.tmp%ld", path, (long)getpid());
    FILE *f = fopen(tmp, "w");
    if (!f)
        return cli_fail("site: cannot create %s: %s", tmp, strerror(errno));
    int rc = fn(f, w, i);
    int err = errno;
    if (fclose(f) || rc || rename(tmp, path)) {
        err = errno ? errno : err;
        remove(tmp);
        return cli_fail("site: cannot write %s: %s", path, strerror(err));
    }
    return 0;
}

int cli_site(cli_args *a)
{
    if (a->nargs != 1)
        return cli_fail("site: give one DIR to write the pages to; see 'ddx site --help'");
    const char *dir = a->args[0];
    char path[4096];
    if (strlen(dir) > 3000)
        return cli_fail("site: the folder name is too long");
    ddx_kb *kb = NULL;
    if (cli_open_kb(a, &kb))
        return 2;
    cli_web w = {kb, 0, 0};
    int status = 2;
    snprintf(path, sizeof path, "%s/ref", dir);
    if (make_dir(dir) || make_dir(path))
        goto done;
    for (size_t i = 0; i < kb->nrefs; i++) {
        const char *id = kb->refs[i]->id;
        if (!*id || *id == '.' || strpbrk(id, "/\\") || strlen(id) > 200) {
            cli_fail("site: the reference id '%s' cannot be a file name; 'ddx lint' says how to "
                     "fix it",
                     id);
            goto done;
        }
        snprintf(path, sizeof path, "%s/ref/%s.html", dir, id);
        if (write_page(path, cli_web_ref, &w, i))
            goto done;
    }
    snprintf(path, sizeof path, "%s/index.html", dir);
    if (write_page(path, index_page, &w, 0))
        goto done;
    printf("ddx site: wrote %zu reference pages and the index to %s; open %s\n", kb->nrefs, dir,
           path);
    status = 0;
done:
    ddx_kb_close(kb);
    return status;
}
