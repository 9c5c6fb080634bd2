/* cli_hugepages.c — transparent huge pages for malloc, for the commands
 * whose time is computing over a trace (`report` on a stored trace or on a
 * file of 256 MB of JSON or more, corpus-report).
 *
 * A report touches tens to hundreds of MB of fresh memory (decoded columns
 * and args chunks, the per-event arrays); faulting it in 4 KiB at a time
 * is the largest single cost of a report on a stored trace, and its TLB
 * misses slow the per-event loops. glibc maps malloc memory with
 * MADV_HUGEPAGE under the tunable glibc.malloc.hugetlb=1 (glibc >= 2.35),
 * which removes most of those faults for some more peak RSS (measurements:
 * the commit that brought it). Tunables are read once, at process start, so
 * the command re-executes itself once with it set (same argv, from
 * /proc/self/cmdline). Skipped when the tunable is already given, THP is
 * off, glibc is older, or TRACELENS_NO_HUGEPAGES is set; any failure just
 * carries on. */
#include "tools/cli.h"

#include <gnu/libc-version.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int tl_cli_hugepages_wanted(void)
{
    if (tl_env.no_hugepages) return 0;
    const char *tun = tl_env.glibc_tunables;
    return !(tun && strstr(tun, "glibc.malloc.hugetlb"));
}

void tl_cli_hugepages_reexec(void)
{
    if (!tl_cli_hugepages_wanted()) return;
    const char *tun = tl_env.glibc_tunables;
    int maj = 0, min = 0;
    if (sscanf(gnu_get_libc_version(), "%d.%d", &maj, &min) != 2 || maj < 2 || (maj == 2 && min < 35)) return;
    char thp[128] = "";
    FILE *f = fopen("/sys/kernel/mm/transparent_hugepage/enabled", "r");
    if (!f) return;
    if (!fgets(thp, sizeof thp, f)) thp[0] = 0;
    fclose(f);
    if (!strstr(thp, "[always]") && !strstr(thp, "[madvise]")) return;
    /* the process's own command line: NUL-separated words */
    f = fopen("/proc/self/cmdline", "rb");
    if (!f) return;
    tl_buf cl = {0};
    char chunk[4096];
    size_t got;
    while ((got = fread(chunk, 1, sizeof chunk, f)) > 0) tl_buf_append(&cl, chunk, got);
    fclose(f);
    if (!cl.n) { tl_buf_free(&cl); return; }
    size_t nw = 0;
    for (size_t i = 0; i < cl.n; i++) nw += cl.p[i] == 0;
    char **av = tl_xcalloc(nw + 2, sizeof *av);
    size_t k = 0;
    for (size_t i = 0; i < cl.n && k <= nw; i += strlen(cl.p + i) + 1) av[k++] = cl.p + i;
    av[k] = NULL;
    tl_buf v = {0};
    if (tun && *tun) tl_buf_printf(&v, "%s:", tun);
    tl_buf_puts(&v, "glibc.malloc.hugetlb=1");
    char *old = tun ? tl_xstrdup(tun) : NULL;
    if (setenv("GLIBC_TUNABLES", v.p, 1) == 0) {
        fflush(stdout);
        fflush(stderr);
        /* the environment's warnings were printed here: not again there */
        setenv(TL_CLI_REEXEC_VAR, "1", 1);
        execv("/proc/self/exe", av); /* returns only on failure */
        unsetenv(TL_CLI_REEXEC_VAR);
        if (old) setenv("GLIBC_TUNABLES", old, 1);
        else unsetenv("GLIBC_TUNABLES");
    }
    free(old);
    tl_buf_free(&v);
    free(av);
    tl_buf_free(&cl);
}
