/* cli_summary.c — the terminal view of a report (`tracelens report ID`
 * without an output flag): which trace it is about, then the first rows of
 * the sheets that say the most, fitted to the terminal's width. */
#include "tools/cli.h"
#include "report/report.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

/* Columns of the terminal on standard output; 0 when it is not one (a
 * pipe or a file: nothing is cut to fit). */
static size_t term_width(void)
{
    struct winsize ws;
    if (!isatty(1) || ioctl(1, TIOCGWINSZ, &ws) != 0 || ws.ws_col == 0) return 0;
    return ws.ws_col;
}

tl_term_opts tl_cli_term_opts(const tl_table *t, size_t max_rows)
{
    tl_term_opts o = {0};
    o.title = 1;
    o.max_rows = max_rows;
    size_t w = term_width();
    if (!w) {
        o.max_cell = SIZE_MAX; /* a pipe or a file keeps every character */
    } else if (t && t->ncols) {
        /* two spaces between columns; each column gets an equal share */
        size_t share = (w > 2 * t->ncols ? w - 2 * t->ncols : 0) / t->ncols;
        o.max_cell = share < 8 ? 8 : share > 60 ? 60 : share;
    }
    return o;
}

void tl_cli_summary_head(const char *what, uint64_t id, const char *source)
{
    char hex[17];
    tl_id_format(id, hex);
    printf("%s of trace %s", what, hex);
    if (source && *source && strncmp(source, hex, strlen(source))) printf(" (%s)", source);
    printf("\n\n");
}

void tl_cli_summary_foot(size_t nsheets)
{
    size_t w = term_width();
    printf("\n%zu sheets; write them with --xlsx PATH,%s--csv-dir DIR or --html PATH.\n", nsheets,
           w && w < 72 ? "\n" : " ");
}

void tl_cli_print_summary(const char *what, uint64_t id, const char *source, tl_table *const *sheets, size_t n,
                          const char *const *show)
{
    tl_cli_summary_head(what, id, source);
    int first = 1;
    for (size_t k = 0; show[k]; k++)
        for (size_t i = 0; i < n; i++) {
            if (strcmp(sheets[i]->name, show[k])) continue;
            if (!first) putchar('\n');
            first = 0;
            tl_term_opts o = tl_cli_term_opts(sheets[i], 12);
            tl_report_term_print(stdout, sheets[i], &o);
        }
    tl_cli_summary_foot(n);
}

int tl_cli_write_html(tl_table *const *sheets, size_t n, const char *path, const char *source)
{
    char title[512];
    snprintf(title, sizeof title, "tracelens report: %s", source ? source : "");
    tl_html_opts o = {.title = title};
    tl_err err = {0};
    if (tl_report_html_write(path, sheets, n, &o, &err)) {
        fprintf(stderr, "tracelens: %s\n", err.msg);
        return TL_EXIT_FAIL;
    }
    printf("wrote %s\n", path);
    return TL_EXIT_OK;
}
