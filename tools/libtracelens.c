/* libtracelens.c — the shared library's one entry point, for programs
 * that embed tracelens (the Python module python/tracelens loads it with
 * ctypes). A call runs one command line exactly as the tracelens program
 * would, in the calling process: its files land where the flags say and
 * its exit code is returned. Only tracelens_run and tracelens_version are
 * exported; everything else in the library is hidden. */
#include "tools/cli.h"

#include <stdio.h>

#define TL_EXPORT __attribute__((visibility("default")))

/* argv[0] picks the command as for the program: "tracelens" followed by a
 * subcommand, or a reference command's name. The environment is read on
 * every call (a caller may change TRACELENS_DB between calls). The
 * huge-page re-execution is never done here: it would replace the caller's
 * process. Standard output and error are flushed before returning, so a
 * caller reading the files or the streams sees everything. */
TL_EXPORT int tracelens_run(int argc, char **argv)
{
    tl_cli_env_read();
    tl_env.no_hugepages = 1;
    int rc = tl_cli_main(argc, argv);
    fflush(stdout);
    fflush(stderr);
    return rc;
}

TL_EXPORT const char *tracelens_version(void) { return TL_VERSION; }
