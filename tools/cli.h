/* cli.h — helpers shared by the subcommands of the tracelens CLI:
 * resolving the store, turning "ID or FILE" into a stored trace (ingesting
 * a file on the fly), writing tables to csv/xlsx, and flag parsing helpers.
 * The CLI only parses arguments and wires modules together. */
#ifndef TL_CLI_H
#define TL_CLI_H

#include <stdint.h>
#include <stdio.h>
#include "store/store.h"
#include "query/core/table.h"

/* Opens the store (db may be NULL: default location). Prints the error and
 * returns NULL on failure. */
tl_store *tl_cli_store(const char *db);

/* arg is a trace id (or unique prefix) in the store, or a path to a trace
 * file, which is ingested first when not yet stored. On success *r is an
 * open reader and *id the trace id. Prints errors itself; returns an exit code. */
int tl_cli_open_trace(tl_store *s, const char *arg, tl_reader **r, uint64_t *id);

/* Writes sheets: every table into csv_dir (if not NULL) as <name>.csv, and
 * into an xlsx workbook at xlsx_path (if not NULL). Returns an exit code. */
int tl_cli_write_sheets(tl_table **tables, size_t n, const char *csv_dir, const char *xlsx_path);

/* Graph-replay merge (tools/cmd_split.c): ingests the capture traces of
 * capture_dir, merges them with the stored replay_id and stores the merged
 * trace (reused when stored before). Prints its errors; returns a TL_EXIT_*
 * code. summary (may be NULL) gets the `graph_launches` table. */
int tl_cli_graph_merge(tl_store *s, uint64_t replay_id, const char *capture_dir, uint64_t *merged_id,
                       tl_table **summary);

/* "--flag value" / "--flag=value" matching; returns the value or NULL. */
const char *tl_cli_flagval(int argc, char **argv, int *i, const char *flag);

/* Re-executes the process once with malloc on transparent huge pages
 * (glibc.malloc.hugetlb=1), where glibc and the kernel allow it; returns
 * when it does not apply (tools/cli_hugepages.c). Call before any work. */
void tl_cli_hugepages_reexec(void);
/* 0 when the re-exec has happened (the tunable is set) or is opted out of
 * (TRACELENS_NO_HUGEPAGES): cheap checks for a caller's own gate. */
int tl_cli_hugepages_wanted(void);

#endif
