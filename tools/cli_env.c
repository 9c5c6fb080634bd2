/* cli_env.c — the environment the CLI reads, once, before any command runs
 * (see tl_cli_env in cli.h). */
#include "tools/cli.h"

#include <stdlib.h>
#include <string.h>

tl_cli_env tl_env;

void tl_cli_env_read(void)
{
    const char *dd = getenv("TRACELENS_DATADIR");
    const char *dbg = getenv("TRACELENS_DEBUG");
    tl_env.datadir = dd;
    tl_env.timing = getenv("TRACELENS_TIMING") != NULL;
    tl_env.debug = dbg && !strcmp(dbg, "1");
    tl_env.no_hugepages = getenv("TRACELENS_NO_HUGEPAGES") != NULL;
    tl_env.glibc_tunables = getenv("GLIBC_TUNABLES");
    tl_env.path = getenv("PATH");
}
