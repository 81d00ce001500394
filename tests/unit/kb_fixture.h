/* kb_fixture.h -- the test knowledge base a unit test opens once for its group of tests:
 * DDX_TEST_DATA/<dir> (tests/data/<dir>), as `kb`; include after ddx.h and cmocka.h, then
 * `cmocka_run_group_tests(tests, setup, kb_fixture_close)` with a setup that calls
 * kb_fixture_open. */
#ifndef DDX_TEST_KB_FIXTURE_H
#define DDX_TEST_KB_FIXTURE_H

#include <stdio.h>
#include <stdlib.h>

static ddx_kb *kb;

static int kb_fixture_open(const char *dir)
{
    char path[4096];
    ddx_error e = {0};
    snprintf(path, sizeof path, "%s/%s", getenv("DDX_TEST_DATA"), dir);
    return ddx_kb_open_dir(&kb, path, &e);
}

static int kb_fixture_close(void **state)
{
    (void)state;
    ddx_kb_close(kb);
    return 0;
}

#endif
