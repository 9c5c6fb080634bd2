/* tracelens.c — the command-line entry: dispatches on the subcommand, or on
 * the name it was called by (the reference tool's command names are links
 * to this binary), and wires the modules together. No analysis here. */
#include "tools/cli.h"

#include <stdlib.h>
#include <string.h>

/* Every command: tracelens --help and the dispatch (by subcommand, or by
 * the reference tool's name the binary was called by) come from here. */
static const tl_cli_cmd COMMANDS[] = {
    /* reference commands without a subcommand of their own: `tracelens
     * report` picks them by the trace's format */
    {NULL, NULL, NULL, "TraceLens_generate_perf_report_pytorch", 1, tl_cmd_report_pytorch},
    {NULL, NULL, NULL, "TraceLens_generate_perf_report_pytorch_inference", 1, tl_cmd_report_pytorch_inference},
    {NULL, NULL, NULL, "TraceLens_generate_perf_report_rocprof", 1, tl_cmd_report_rocprof},
    {NULL, NULL, NULL, "TraceLens_generate_perf_report_jax", 1, tl_cmd_report_jax},
    {NULL, NULL, NULL, "TraceLens_generate_perf_report_pftrace_hip_api", 1, tl_cmd_report_pftrace_hip_api},
    {NULL, NULL, NULL, "TraceLens_generate_perf_report_pftrace_hip_activity", 1, tl_cmd_report_pftrace_hip_activity},
    {NULL, NULL, NULL, "TraceLens_generate_perf_report_pftrace_memory_copy", 1, tl_cmd_report_pftrace_memory_copy},
    {NULL, NULL, NULL, "TraceLens_generate_perf_report_genesis", 1, tl_cmd_report_genesis},
    {NULL, NULL, NULL, "TraceLens_split_inference_trace", 1, tl_cmd_split_inference},
    {"ingest", "PATH...", "parse traces (files or folders) into the store", NULL, 0, tl_cmd_ingest},
    {"ls", "", "list stored traces", NULL, 0, tl_cmd_ls},
    {"info", "ID", "everything the catalog knows about a trace, and table sizes", NULL, 0, tl_cmd_info},
    {"rm", "ID...", "remove traces from the store", NULL, 0, tl_cmd_rm},
    {"label", "ID KEY=VALUE...", "set, change or remove labels of stored traces", NULL, 0, tl_cmd_label},
    {"check", "[--repair]", "verify every stored trace; --repair removes damaged ones", NULL, 0, tl_cmd_check},
    {"compact", "[--into DIR]", "give the space of removed traces back to the disk", NULL, 0, tl_cmd_compact},
    {"report", "ID|FILE", "the performance report (PyTorch, rocprofv3, pftrace or JAX by format)", NULL, 0, tl_cmd_report},
    {"diff", "A B --out DIR", "TraceDiff of two traces", NULL, 0, tl_cmd_diff},
    {"compare", "A B ...", "compare reports side by side", "TraceLens_compare_perf_reports_pytorch", 1,
     tl_cmd_compare},
    {"query", "...", "ad-hoc questions over stored traces", NULL, 0, tl_cmd_query},
    {"sql", "\"SELECT ...\"", "SQL over stored traces", NULL, 0, tl_cmd_sql},
    {"corpus-report", "...", "one workbook per configuration of a multi-rank corpus",
     "TraceLens_generate_multi_config_perf_report", 0, tl_cmd_corpus_report},
    {"collective", "...", "multi-rank collective analysis (latency, skew, bus bandwidth)",
     "TraceLens_generate_multi_rank_collective_report_pytorch", 1, tl_cmd_collective},
    {"split", "ID", "cut an inference trace into per-step traces", NULL, 0, tl_cmd_split},
};
#define NCOMMANDS (sizeof COMMANDS / sizeof *COMMANDS)

static const char *USAGE_HEAD =
    "tracelens — GPU profiler traces into a column store; reports, diffs and queries from it.\n"
    "\n"
    "Usage: tracelens [--db DIR] COMMAND [ARGS]\n"
    "\n"
    "Commands:\n";

static const char *USAGE_STORE =
    "\n"
    "The store: --db DIR, else $TRACELENS_DB, else $XDG_DATA_HOME/tracelens\n"
    "(~/.local/share/tracelens). `tracelens COMMAND --help` explains each command.\n"
    "A store list reads several stores (shards) as one: --db A --db B ..., or\n"
    "--db @FILE listing one store folder per line; ls, info, report, diff, compare,\n"
    "query and sql take one (a trace id in two shards is the same trace).\n"
    "\n"
    "Reference-compatible commands (links to this binary):\n";

static const char *USAGE_EXIT =
    "\n"
    "Every command also takes:\n"
    "  --max-input-bytes N   refuse a trace larger than N bytes once decompressed\n"
    "                        (512M, 2G; off: no limit; default: none). With a limit\n"
    "                        set, gzip files are not held to the inflation ratio\n"
    "  --profile             the stage profile on stderr at the end (also\n"
    "                        TL_PROFILE=1): wall and CPU per stage and thread, time\n"
    "                        waiting on locks, the writer and workers, and the\n"
    "                        serial fraction (docs/SCALING.md)\n"
    "  --csv-safe            CSV text cells starting with = + - @ (formulas to a\n"
    "                        spreadsheet) get a leading '; by default they are\n"
    "                        written as they are, as the reference does\n"
    "Environment: TRACELENS_MAX_INPUT_BYTES (as --max-input-bytes, which wins);\n"
    "TRACELENS_MAX_RATIO=N|off: how many times its size a gzip file may inflate\n"
    "(default 1000, checked past 1 GiB). TRACELENS_MEM_BUDGET=SIZE|off: the PyTorch\n"
    "report's resident-memory budget (default 900M): a trace whose events would\n"
    "pass it keeps its per-event arrays in scratch files in $TMPDIR, read back\n"
    "as needed (slower; the output is the same).\n"
    "\n"
    "Exit codes: 0 success; 1 an input or output failed (others may have succeeded);\n"
    "2 bad command line; 3 no store, or it could not be opened, or it is damaged\n"
    "(`tracelens check`); 4 trace not found; 5 nothing to do (split: the trace has no\n"
    "step annotations); 130 interrupted (Ctrl-C in query or sql).\n";

/* tracelens --help: the commands and the reference names from the table,
 * the names wrapped to 83 columns. */
static void usage(FILE *fp)
{
    fputs(USAGE_HEAD, fp);
    for (size_t k = 0; k < NCOMMANDS; k++) {
        const tl_cli_cmd *c = &COMMANDS[k];
        if (!c->name) continue;
        char left[64];
        snprintf(left, sizeof left, "%s%s%s", c->name, c->synopsis[0] ? " " : "", c->synopsis);
        fprintf(fp, "  %-22s%s\n", left, c->summary);
    }
    fputs(USAGE_STORE, fp);
    size_t col = 0;
    for (size_t k = 0; k < NCOMMANDS; k++) {
        if (!COMMANDS[k].ref_name || !COMMANDS[k].ref_listed) continue;
        size_t n = strlen(COMMANDS[k].ref_name);
        if (col && col + 2 + n + 1 > 83) {
            fputs(",\n", fp);
            col = 0;
        } else if (col) {
            fputs(", ", fp);
            col += 2;
        }
        if (!col) col = (size_t)fprintf(fp, "  ");
        fputs(COMMANDS[k].ref_name, fp);
        col += n;
    }
    fputs("\n", fp);
    fputs(USAGE_EXIT, fp);
}

int tl_cli_main(int argc, char **argv)
{
    const char *self = strrchr(argv[0], '/');
    self = self ? self + 1 : argv[0];
    for (size_t k = 0; k < NCOMMANDS; k++)
        if (COMMANDS[k].ref_name && !strcmp(self, COMMANDS[k].ref_name)) return COMMANDS[k].run(argc, argv);

    int i = 1, ndb = 0; /* global --db words (several: a store list), passed on to the command */
    for (; i < argc; i++) {
        if (!strcmp(argv[i], "--db") && i + 1 < argc) i++, ndb++;
        else if (!strncmp(argv[i], "--db=", 5)) ndb++;
        else break;
    }
    if (i >= argc || !strcmp(argv[i], "-h") || !strcmp(argv[i], "--help") || !strcmp(argv[i], "help")) {
        usage(i >= argc ? stderr : stdout);
        return i >= argc ? TL_EXIT_USAGE : 0;
    }
    if (!strcmp(argv[i], "--version")) {
        const char *mpi = tl_cli_mpi_library();
        printf("tracelens " TL_VERSION "\nMPI: %s\n", mpi ? mpi : "not built in (install libopenmpi-dev and configure again)");
        return 0;
    }
    const tl_cli_cmd *cmd = NULL;
    for (size_t k = 0; k < NCOMMANDS && !cmd; k++)
        if (COMMANDS[k].name && !strcmp(argv[i], COMMANDS[k].name)) cmd = &COMMANDS[k];
    if (!cmd) {
        const char *names[NCOMMANDS];
        size_t n = 0;
        for (size_t k = 0; k < NCOMMANDS; k++)
            if (COMMANDS[k].name) names[n++] = COMMANDS[k].name;
        const char *near = tl_cli_nearest(argv[i], strlen(argv[i]), names, NULL, n);
        if (near) fprintf(stderr, "tracelens: unknown command '%s' (did you mean %s?)\n", argv[i], near);
        else fprintf(stderr, "tracelens: unknown command '%s' (see tracelens --help)\n", argv[i]);
        return TL_EXIT_USAGE;
    }
    /* Commands see argv starting at their name; global --db options are passed on. */
    char **sub = argv + i;
    int subc = argc - i;
    if (!ndb) return cmd->run(subc, sub);
    char **withdb = tl_xmalloc(sizeof(char *) * ((size_t)subc + (size_t)i + 1));
    int m = 0;
    withdb[m++] = sub[0];
    for (int k = 1; k < i; k++) withdb[m++] = argv[k];
    for (int k = 1; k < subc; k++) withdb[m++] = sub[k];
    withdb[m] = NULL;
    int rc = cmd->run(m, withdb);
    free(withdb);
    return rc;
}
