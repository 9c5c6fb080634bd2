/* tracelens_main.c — the tracelens program: the environment, then the
 * command line (tools/tracelens.c). */
#include "tools/cli.h"
#include "base/profile.h"

int main(int argc, char **argv)
{
    tl_cli_env_read();
    tl_env.own_process = 1;
    int rc = tl_cli_main(argc, argv);
    tl_prof_report(stderr); /* TL_PROFILE=1 or --profile */
    return rc;
}
