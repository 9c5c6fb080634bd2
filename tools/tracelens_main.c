/* tracelens_main.c — the tracelens program: the environment, then the
 * command line (tools/tracelens.c). */
#include "tools/cli.h"

int main(int argc, char **argv)
{
    tl_cli_env_read();
    return tl_cli_main(argc, argv);
}
