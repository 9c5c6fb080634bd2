/* cli.h — what the subcommands of the tracelens CLI share: the command
 * table, the one option parser, resolving the store, turning "ID or FILE"
 * into a stored trace (ingesting a file on the fly), writing tables to
 * csv/xlsx, the environment read at start-up, and every run function.
 * The CLI only parses arguments and wires modules together. */
#ifndef TL_CLI_H
#define TL_CLI_H

#include <stdint.h>
#include <stdio.h>
#include "store/store.h"
#include "query/core/table.h"
#include "report/report.h"
#include "query/multirank/multirank.h"
#include "ingest/ingest.h"

/* ---- options: one parser for every command (tools/cli_opts.c) ---- */

/* What an option takes after it. */
typedef enum {
    TL_CLI_FLAG,     /* nothing */
    TL_CLI_VALUE,    /* one value: --name V, --name=V (-nV for a one-letter name) */
    TL_CLI_OPTIONAL, /* argparse nargs='?': a value when the next word is not an option */
    TL_CLI_VALUES,   /* argparse nargs='+': the words up to the next option */
} tl_cli_arg;

/* One option of a command: its spellings separated by '|', the first long
 * one naming it in messages ("--output_xlsx_path|--xlsx", "-o|--output"). */
typedef struct tl_cli_opt {
    const char *names;
    tl_cli_arg arg;
} tl_cli_opt;

/* What tl_cli_next returns when it does not return an option's index. */
enum {
    TL_CLI_END = -1,        /* no words left */
    TL_CLI_POSITIONAL = -2, /* p->arg is not an option */
    TL_CLI_UNKNOWN = -3,    /* p->arg looks like an option but names none */
    TL_CLI_BAD = -4,        /* ambiguous prefix, missing or unwanted value: p->msg says which */
};

/* The parser's state over one command line. */
typedef struct tl_cli_args {
    int argc;
    char **argv;
    const tl_cli_opt *opts;
    size_t nopts;
    int i;             /* the next word */
    const char *arg;   /* the word just read, as written */
    const char *val;   /* VALUE/OPTIONAL: the value (NULL: none); VALUES: the '=' value */
    int first, nwords; /* VALUES: argv[first .. first+nwords) follow val */
    char name[64];     /* the option just read, by its first long name */
    char msg[512];     /* TL_CLI_BAD: argparse's message ("ambiguous option: ...") */
} tl_cli_args;

/* The candidate nearest to word[0..nw) by edit distance ('-' and '_'
 * alike, case ignored), when it is near enough to be a slip (1 edit for
 * short words, up to 3 for long ones); NULL when none is. lens: the
 * candidates' lengths (NULL: NUL-terminated). */
const char *tl_cli_nearest(const char *word, size_t nw, const char *const *cands, const size_t *lens, size_t n);
/* The options every command takes (--max-input-bytes, --csv-safe). */
extern const tl_cli_opt *const tl_cli_common_opts;
extern const size_t tl_cli_ncommon;
/* After TL_CLI_UNKNOWN: " (did you mean --NAME?)" for the command's or a
 * common option nearest to the word, else "" — for the caller's message. */
const char *tl_cli_hint(const tl_cli_args *p);

/* Starts parsing argv[1..argc) against opts. */
void tl_cli_args_init(tl_cli_args *p, int argc, char **argv, const tl_cli_opt *opts, size_t nopts);
/* The next word: an option's index into opts, or a TL_CLI_* code. A long
 * option matches by its exact name, else by a unique prefix (argparse's
 * allow_abbrev); a prefix of several is TL_CLI_BAD with the candidates. */
int tl_cli_next(tl_cli_args *p);
/* VALUES: how many values the option got, and the k-th. */
size_t tl_cli_nvalues(const tl_cli_args *p);
const char *tl_cli_value(const tl_cli_args *p, size_t k);
/* Does word (an option as written, maybe abbreviated) take the next word
 * as its value? For dispatchers that look for the positional argument. */
int tl_cli_takes_next(const tl_cli_opt *opts, size_t nopts, const char *word);
/* The option word (without '=') names, exactly or by a unique prefix: its
 * index into opts, or -1. */
int tl_cli_match(const tl_cli_opt *opts, size_t nopts, const char *word);

/* Options every command takes besides its own, applied by tl_cli_next
 * itself when a word names none of the command's options (spelled in
 * full): --csv-safe (text CSV cells that look like formulas get a leading
 * ', set in report/ at once) and --max-input-bytes N (the ingest's input
 * limit, kept here for tl_cli_ingest_env). */
typedef struct tl_cli_common {
    uint64_t max_input_bytes; /* 0: not given; UINT64_MAX: off */
    /* every --db of the command line being parsed, in order (the parser
     * records them; a read command given several reads them as one store) */
    const char *dbs[256];
    size_t ndbs;
} tl_cli_common;
extern tl_cli_common tl_cli_flags;
/* A size: digits with an optional k, M, G or T suffix (powers of 1024,
 * "512M", "2GiB"), or "off"/"none" (UINT64_MAX). 0 ok, -1 not a size. */
int tl_cli_parse_size(const char *s, uint64_t *out);
/* Applies the common options of argv (skipping the values of opts) for a
 * dispatcher that ingests before the command's own parser runs; prints a
 * bad value as "tracelens CMD: ..." and returns TL_EXIT_USAGE, else 0. */
int tl_cli_apply_common(int argc, char **argv, const tl_cli_opt *opts, size_t nopts, const char *cmd);

/* ---- the command table (tools/tracelens.c) ---- */

typedef struct tl_cli_cmd {
    const char *name;     /* the subcommand ("report") */
    const char *synopsis; /* its arguments in tracelens --help ("ID|FILE") */
    const char *summary;  /* one line for tracelens --help */
    const char *ref_name; /* the reference tool's command (a link to this binary), or NULL */
    int ref_listed;       /* ref_name shown in tracelens --help */
    int (*run)(int argc, char **argv);
} tl_cli_cmd;

/* ---- the environment, read once in main (tools/cli_env.c) ---- */

/* Every environment variable tracelens reads, read once in main; the
 * library gets what it needs as parameters and option fields (docs/ and
 * each command's --help describe them). NULL or 0: unset. */
typedef struct tl_cli_env {
    const char *db;             /* TRACELENS_DB: the store directory */
    const char *xdg_data_home;  /* XDG_DATA_HOME, HOME: where the default store is */
    const char *home;
    const char *xdg_state_home; /* XDG_STATE_HOME: where one-time notes are marked */
    const char *datadir;        /* TRACELENS_DATADIR, else the data folder installed
                                 * beside the program: data/ (categories, GPU tables) */
    int timing;                 /* TRACELENS_TIMING: phase times on stderr */
    int parse_threads;          /* TRACELENS_PARSE_THREADS: threads parsing one JSON file */
    size_t split_min;           /* TRACELENS_SPLIT_MIN: part size of a parallel parse */
    int report_serial;          /* TRACELENS_REPORT_THREADS=0: the report runs on one thread */
    int query_cores;            /* TRACELENS_THREADS: cores a query counts */
    int args_full_pass;         /* TRACELENS_ARGS_PASS=full: no stored args selection */
    int debug;                  /* TRACELENS_DEBUG=1: diff's debug output */
    int no_hugepages;           /* TRACELENS_NO_HUGEPAGES: no huge-page re-exec */
    const char *glibc_tunables; /* GLIBC_TUNABLES: set by the huge-page re-exec or the user */
    const char *path;           /* PATH: where the node-replay tools would be */
    uint64_t max_input_bytes;   /* TRACELENS_MAX_INPUT_BYTES: the ingest's input
                                 * limit (a size, tl_cli_parse_size) */
    uint64_t max_ratio;         /* TRACELENS_MAX_RATIO: how many times its size a
                                 * gzip file may inflate (a number or off) */
    uint64_t mem_budget;        /* TRACELENS_MEM_BUDGET: the PyTorch report's resident
                                 * set budget in bytes (UINT64_MAX: off) */
    int own_process;            /* the tracelens program (not the Python library):
                                 * process-wide settings such as nice values are ours */
} tl_cli_env;

extern tl_cli_env tl_env;

/* Fills tl_env from the environment and hands the process-wide settings
 * (memory marks, the store's map size, the args pass) to the library;
 * main calls it first. */
void tl_cli_env_read(void);
/* The whole command line of the tracelens program (tools/tracelens.c):
 * dispatch on argv[0] (a reference command's name) or on the subcommand.
 * The program's main (tools/tracelens_main.c) and the shared library's
 * entry (tools/libtracelens.c) read the environment, then call this. */
int tl_cli_main(int argc, char **argv);
/* Ingest options from the environment and the common options (parse
 * threads, split size, timing, input limits). */
void tl_cli_ingest_env(tl_ingest_opts *o);
/* The default of TRACELENS_MEM_BUDGET: 900 MiB. */
#define TL_CLI_MEM_BUDGET ((uint64_t)900 << 20)
/* Before a PyTorch report loads trace id: when its events would take more
 * memory than the budget, the report's per-event arrays go to scratch
 * files within that resident budget (tl_big_budget, base/bigmem.c; in the
 * tracelens program its threads then yield to the trimming thread), and
 * 1 says to load the columns into blocks of their own (TL_TC_OWNED). */
int tl_cli_mem_budget(tl_reader *r, uint64_t id);

/* ---- store, traces, sheets (tools/cli.c) ---- */

/* The store directory: db, else $TRACELENS_DB, else $XDG_DATA_HOME/tracelens,
 * else ~/.local/share/tracelens (buf holds the last two). A %r in db or
 * $TRACELENS_DB is replaced by the MPI rank (0 outside MPI), giving each
 * process of an --mpi run its own shard. */
const char *tl_cli_store_dir(const char *db, char *buf, size_t n);
/* Opens the store (db may be NULL: default location). Prints the error and
 * returns NULL on failure. A command line naming several stores (--db
 * given more than once) or a list file (--db @FILE) opens them as one
 * store list (tl_store_open_list): it reads all and writes none. */
tl_store *tl_cli_store(const char *db);
/* The same for a command that only reads: a missing store is "no store at
 * DIR (ingest creates one)" and nothing is created; a store this process
 * cannot write is opened read-only. */
tl_store *tl_cli_store_read(const char *db);
/* With --mpi, the stores of this process (*out, NULL for none): a store
 * named with %r is each process's own; of a store list (several --db, or
 * --db @FILE) each process opens its contiguous share of the shards; a
 * single store without %r is rank 0's. 0, or an exit code after printing
 * the error. */
int tl_cli_store_share(const char *db, tl_store **out);
/* The store for commands taking "ID or FILE" arguments: tl_cli_store when
 * one of args[0..n) is a file (it will be ingested), else tl_cli_store_read. */
tl_store *tl_cli_store_for(const char *db, const char *const *args, size_t n);

/* arg is a trace id (or unique prefix) in the store, or a path to a trace
 * file, which is ingested first when not yet stored. On success *r is an
 * open reader and *id the trace id. Prints errors itself; returns an exit code. */
int tl_cli_open_trace(tl_store *s, const char *arg, tl_reader **r, uint64_t *id);

/* The exit code of a command whose library call failed with `code`:
 * TL_EXIT_STORE when the store is damaged or of another version
 * (TL_ESTORE, TL_EVERSION; `tracelens check` says more), else fallback. */
int tl_cli_exit_for(int code, int fallback);

/* Writes sheets: every table into csv_dir (if not NULL) as <name>.csv, and
 * into an xlsx workbook at xlsx_path (if not NULL), made on `threads`
 * threads (0: one per online CPU). Returns an exit code. */
int tl_cli_write_sheets(tl_table **tables, size_t n, const char *csv_dir, const char *xlsx_path, int threads);

/* Graph-replay merge (tools/cmd_split.c): ingests the capture traces of
 * capture_dir, merges them with the stored replay_id and stores the merged
 * trace (reused when stored before). Prints its errors; returns a TL_EXIT_*
 * code. summary (may be NULL) gets the `graph_launches` table. */
int tl_cli_graph_merge(tl_store *s, uint64_t replay_id, const char *capture_dir, uint64_t *merged_id,
                       tl_table **summary);

/* A query/sql result as table, csv, jsonl/json or xlsx, to out_path or
 * stdout (tools/cmd_query.c). all: every row on the terminal. */
int tl_cli_write_result(const tl_table *t, const char *format, const char *out_path, int all);
/* The format that writer uses: format, or for "table" the one out_path's
 * extension names (.csv, .jsonl/.json, .xlsx). */
const char *tl_cli_result_format(const char *format, const char *out_path);

/* The terminal summary of a collective analysis: counts, the slowest
 * collectives, rank imbalance (tools/cmd_collective.c). */
void tl_cli_coll_print_summary(FILE *fp, const tl_coll_sheets *sh, const tl_coll_summary *sum);

/* ---- store lists (tools/cli_shards.c) ---- */

/* The shard folders of a store list. */
typedef struct tl_cli_shards {
    char **dirs;
    size_t n, cap;
} tl_cli_shards;
/* names[0..n): folders, or @FILE naming a file that lists folders one per
 * line (# comments and blank lines skipped; relative to the file's
 * folder). 0, or -1 after printing why. */
int tl_cli_shards_of(const char *const *names, size_t n, tl_cli_shards *out);
void tl_cli_shards_free(tl_cli_shards *sh);

/* ---- MPI (tools/cli_mpi.c) ----
 * `--mpi` of ingest, corpus-report and collective: under mpirun each
 * process takes a contiguous share of the rank files, ingests it into its
 * own store (--db /local/tl-%r: %r is the MPI rank) and computes its ranks'
 * partial results; rank 0 gathers them and writes the outputs (query
 * --mpi: each process its share of the shards, partials folded up a
 * tree). Outside
 * MPI (or built without it) a process is rank 0 of 1. */

/* Starts MPI (MPI_Init) for cmd; 0, or an exit code after printing why
 * (built without MPI: how to enable it). root_prints: the standard output
 * of processes other than rank 0 goes to /dev/null (rank 0 prints what
 * one process would). */
int tl_cli_mpi_start(const char *cmd, int root_prints);
/* The MPI library --mpi loads (its soname), or NULL: built without MPI. */
const char *tl_cli_mpi_library(void);
int tl_cli_mpi_rank(void);
int tl_cli_mpi_size(void);
/* Whether position i of n is this process's: [rank*n/size, (rank+1)*n/size). */
int tl_cli_mpi_mine(size_t i, size_t n);
/* Whether flag is set on any process (every process gets the answer). */
int tl_cli_mpi_any(int flag);
/* Each process's n bytes at p to rank 0: there *all gets every process's
 * bytes concatenated in rank order; elsewhere *all is left empty. */
int tl_cli_mpi_gather(const void *p, size_t n, tl_buf *all);
/* Each process's n bytes at p to every process: *all gets them
 * concatenated in rank order everywhere. */
int tl_cli_mpi_allgather(const void *p, size_t n, tl_buf *all);
/* Folds every process's bytes *mine into rank 0's up a binary tree
 * (log2(size) rounds, the merges of a round in parallel): merge(ctx, acc,
 * in, n) folds a higher rank's bytes into acc. Rank 0's *mine ends with
 * the fold of all; elsewhere *mine is left as sent. Returns 0 or the
 * first error of this process's merges. */
int tl_cli_mpi_reduce(tl_buf *mine, int (*merge)(void *ctx, tl_buf *acc, const void *in, size_t n), void *ctx);
/* Ends MPI when started; every process returns the largest rc of all. */
int tl_cli_mpi_finish(int rc);

/* ---- folder walk (tools/cli_walk.c) ---- */

/* What a walk calls: file for each regular file (links followed; name is
 * the last component of path), unreadable for a folder or entry that
 * cannot be read (a path too long for the system), with its errno; NULL
 * prints a warning naming the path. */
typedef struct tl_cli_walk_fns {
    void (*file)(void *ctx, const char *path, const char *name);
    void (*unreadable)(void *ctx, const char *dir, int errnum);
    void *ctx;
} tl_cli_walk_fns;

/* Every non-hidden file below dir, depth first, names in byte order within
 * each folder. A folder (also one reached through a link) is entered once
 * per (device, inode), so link loops end; paths have no length limit. */
void tl_cli_walk(const char *dir, const tl_cli_walk_fns *fns);

/* ---- the terminal view of a report (tools/cli_summary.c) ---- */

/* Printing options for one table of a summary: a title, max_rows rows,
 * cells cut to share the terminal's width (not cut when standard output
 * is not a terminal). */
tl_term_opts tl_cli_term_opts(const tl_table *t, size_t max_rows);
/* "WHAT of trace ID (SOURCE)" and a blank line; SOURCE (the path or id as
 * given) is left out when it is the id itself. */
void tl_cli_summary_head(const char *what, uint64_t id, const char *source);
/* How to write the nsheets sheets (two lines on a narrow terminal). */
void tl_cli_summary_foot(size_t nsheets);
/* The head, then the sheets named in show (NULL-terminated, in that
 * order) that the report has, then how to write every sheet. */
void tl_cli_print_summary(const char *what, uint64_t id, const char *source, tl_table *const *sheets, size_t n,
                          const char *const *show);

/* --html PATH of a report without a roofline (rocprofv3, JAX): the page
 * of its sheets; prints "wrote PATH"; 0 or an exit code. */
int tl_cli_write_html(tl_table *const *sheets, size_t n, const char *path, const char *source);

/* ---- huge pages (tools/cli_hugepages.c) ---- */

/* Set in the environment of the re-executed process (and removed by
 * tl_cli_env_read): its environment's warnings were printed already. */
#define TL_CLI_REEXEC_VAR "TRACELENS_HUGEPAGES_REEXEC"

/* Re-executes the process once with malloc on transparent huge pages
 * (glibc.malloc.hugetlb=1), where glibc and the kernel allow it; returns
 * when it does not apply. Call before any work. */
void tl_cli_hugepages_reexec(void);
/* 0 when the re-exec has happened (the tunable is set) or is opted out of
 * (TRACELENS_NO_HUGEPAGES): cheap checks for a caller's own gate. */
int tl_cli_hugepages_wanted(void);
/* The report's gate for tl_cli_hugepages_reexec: a stored trace, or a
 * large file (tools/cmd_report_pytorch.c). */
void tl_cli_report_hugepages_reexec(const char *input, const char *db);

/* ---- the commands' run functions (tools/cmd_*.c) ---- */

int tl_cmd_ingest(int argc, char **argv);
int tl_cmd_ls(int argc, char **argv);
int tl_cmd_label(int argc, char **argv);
/* In cmd_label.c: a catalog record's labels as KEY=VALUE,KEY=VALUE (key
 * NULL) or the value of one key ("" when absent) into out (NUL-terminated);
 * -1 when the record does not parse. */
int tl_cli_catalog_labels(const char *json, const char *key, tl_buf *out);
int tl_cmd_info(int argc, char **argv);
int tl_cmd_rm(int argc, char **argv);
int tl_cmd_report(int argc, char **argv);
int tl_cmd_report_pytorch(int argc, char **argv);
int tl_cmd_report_kineto(int argc, char **argv);
/* A report built on the PyTorch report's command line (tools/cmd_report_pytorch.c):
 * its usage text, and how it changes the report's options once parsed. */
struct tl_pyt_opts;
typedef struct tl_cli_report_variant {
    const char *usage;
    int inference;                            /* the inference report's flags and sheets */
    void (*adjust)(struct tl_pyt_opts *o);    /* after parsing */
} tl_cli_report_variant;
/* The inference report (tools/cmd_report_inference.c). */
int tl_cmd_report_pytorch_inference(int argc, char **argv);
/* `tracelens report --inference` on a Kineto trace (tools/cmd_report.c). */
int tl_cmd_report_kineto_inference(int argc, char **argv);
/* The PyTorch report's command with a variant (tools/cmd_report_pytorch.c);
 * tracelens_style: `tracelens report` (positional trace, terminal summary). */
int tl_cli_report_pytorch_as(int argc, char **argv, const tl_cli_report_variant *v, int tracelens_style);
int tl_cmd_report_rocprof(int argc, char **argv);
int tl_cmd_report_jax(int argc, char **argv);
int tl_cmd_report_pftrace_hip_api(int argc, char **argv);
int tl_cmd_report_pftrace_hip_activity(int argc, char **argv);
int tl_cmd_report_pftrace_memory_copy(int argc, char **argv);
int tl_cmd_report_genesis(int argc, char **argv);
int tl_cmd_compare(int argc, char **argv);
int tl_cmd_diff(int argc, char **argv);
int tl_cmd_query(int argc, char **argv);
int tl_cmd_sql(int argc, char **argv);
int tl_cmd_corpus_report(int argc, char **argv);
int tl_cmd_collective(int argc, char **argv);
int tl_cmd_split(int argc, char **argv);
int tl_cmd_split_inference(int argc, char **argv);
int tl_cmd_check(int argc, char **argv);
int tl_cmd_compact(int argc, char **argv);

#endif
