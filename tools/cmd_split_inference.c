/* cmd_split_inference.c — TraceLens_split_inference_trace, the reference's
 * inference trace splitter (TraceLens/TraceUtils/
 * split_inference_trace_annotation.py) with its flags, defaults, output
 * names and messages: the trace is ingested into the store (or read from
 * it), query/inference cuts the pieces, and this file writes each piece as
 * gzip'd Kineto JSON and the execution_details files. */
#include "tools/cli.h"
#include "query/core/trace.h"
#include "query/inference/inference.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

static const char *USAGE =
    "usage: TraceLens_split_inference_trace [-h] -o OUTPUT_DIR [--iterations ITERATIONS]\n"
    "                                       [--store-single-iteration] [--find-steady-state]\n"
    "                                       [--num-steps NUM_STEPS] [--CONC CONC] [--OSL OSL] [--R R]\n"
    "                                       [--divide-phases] [--db DIR]\n"
    "                                       trace_path\n";

static const char *HELP =
    "\n"
    "Split vLLM trace into per-iteration traces\n"
    "\n"
    "Iteration roots are the user annotations of the serving engine's steps:\n"
    "first the detailed forms (vLLM execute_<n>_context_<n>(sq..sk..sqsq..sqsk..)\n"
    "_generation_<n>(..), ATOM prefill[.. sqsq=..]/decode[..], SGLang step[.. sqsq=..]),\n"
    "else the native ones (execute_context_<n>(<n>)_generation_<n>(<n>), step[EXTEND|\n"
    "DECODE|MIXED ..], prefill[..]/decode[..], xDiT execute_diffusion_<bs>_<HxW>).\n"
    "Without any, see below. A piece holds, for each of its roots, the events of the\n"
    "root's thread that lie inside it and the flows and GPU events (kernel,\n"
    "gpu_memcpy, gpu_memset, gpu_user_annotation) of their correlation ids. Without\n"
    "any option but -o nothing is written, as with the reference.\n"
    "\n"
    "positional arguments:\n"
    "  trace_path            Path to trace file (.json or .json.gz), or the id of a\n"
    "                        stored trace\n"
    "\n"
    "options:\n"
    "  -h, --help            show this help message and exit\n"
    "  -o OUTPUT_DIR, --output-dir OUTPUT_DIR\n"
    "                        Output directory\n"
    "  --iterations ITERATIONS, -i ITERATIONS\n"
    "                        Iteration range: 'all', single index '50', or range\n"
    "                        '10:20' (default: all)\n"
    "  --store-single-iteration\n"
    "                        Store each iteration separately:\n"
    "                        <base>_annotation_iteration_<idx>_<annotation>.json.gz\n"
    "  --find-steady-state   For iterations, find steady state region and extract\n"
    "                        from there instead of sequential iterations: three\n"
    "                        windows, mixed_steady_state_*, decode_only_steady_state_*\n"
    "                        and prefilldecode_steady_state_*\n"
    "  --num-steps NUM_STEPS\n"
    "                        Number of iterations to extract for steady state\n"
    "                        (default: 32)\n"
    "  --CONC CONC           Expected peak concurrency (number of concurrent\n"
    "                        requests). A warning is printed if the trace peak\n"
    "                        differs from this value.\n"
    "  --OSL OSL             Maximum output sequence length (decode tokens per\n"
    "                        request). Used with --R to compute the ideal PD ratio\n"
    "                        for mixed-window selection.\n"
    "  --R R                 OSL window ratio in [0, 1]. OSL per request is sampled\n"
    "                        from [R*OSL, OSL], giving mean OSL = OSL*(1+R)/2. R=0\n"
    "                        means all requests have exactly OSL tokens; R=1 means\n"
    "                        OSL is uniform in [0, OSL].\n"
    "  --divide-phases       Find all steady-state regions and store each individual\n"
    "                        step into phase-specific sub-folders:\n"
    "                        output_dir/prefilldecodemix/ and output_dir/decode_only/.\n"
    "                        Each step is a separate trace file.\n"
    "  --db DIR              trace store (tracelens; default $TRACELENS_DB, else\n"
    "                        $XDG_DATA_HOME/tracelens): the trace is ingested there\n"
    "\n"
    "Outputs in OUTPUT_DIR: the pieces (.json.gz, Kineto JSON), execution_details.json\n"
    "(per piece: idx, output_path, event_count, num_gpu_events, gpu_duration,\n"
    "gpu_busy_duration in us, steps, phase) and execution_details.csv (the same,\n"
    "flat), both only when a piece was written.\n"
    "Without step annotations, as the reference, the iteration roots are the blocks\n"
    "of the first repeating sequence of GPU-launching calls found breadth first in\n"
    "the call tree (python functions included), one block per repetition.\n"
    "Differences from the reference: metadata events (ph M, which Kineto writes with\n"
    "a ts) are never copied (the reference copies those without a ts); times are\n"
    "written to the ns; --num-steps below 1 is refused.\n"
    "Exit status: 0 ok (also when nothing was extracted); 1 failure (a file that\n"
    "could not be written included); 2 bad command line; 3 store error; 4 no such\n"
    "trace.\n";

enum { O_HELP, O_OUT, O_ITER, O_SINGLE, O_STEADY, O_NSTEPS, O_CONC, O_OSL, O_R, O_DIVIDE, O_DB };
static const tl_cli_opt OPTS[] = {
    [O_HELP] = {"-h|--help", TL_CLI_FLAG},
    [O_OUT] = {"-o|--output-dir", TL_CLI_VALUE},
    [O_ITER] = {"--iterations|-i", TL_CLI_VALUE},
    [O_SINGLE] = {"--store-single-iteration", TL_CLI_FLAG},
    [O_STEADY] = {"--find-steady-state", TL_CLI_FLAG},
    [O_NSTEPS] = {"--num-steps", TL_CLI_VALUE},
    [O_CONC] = {"--CONC", TL_CLI_VALUE},
    [O_OSL] = {"--OSL", TL_CLI_VALUE},
    [O_R] = {"--R", TL_CLI_VALUE},
    [O_DIVIDE] = {"--divide-phases", TL_CLI_FLAG},
    [O_DB] = {"--db", TL_CLI_VALUE},
};

static int usage_error(const char *fmt, const char *a, const char *b)
{
    fputs(USAGE, stderr);
    fputs("TraceLens_split_inference_trace: error: ", stderr);
    fprintf(stderr, fmt, a, b);
    fputc('\n', stderr);
    return TL_EXIT_USAGE;
}

/* argparse's type=int and type=float. */
static int parse_long(const char *s, long *v)
{
    char *e;
    errno = 0;
    *v = strtol(s, &e, 10);
    while (*e == ' ' || *e == '\t' || *e == '\n') e++;
    return e == s || *e || errno ? -1 : 0;
}

static int parse_double(const char *s, double *v)
{
    char *e;
    *v = strtod(s, &e);
    while (*e == ' ' || *e == '\t' || *e == '\n') e++;
    return e == s || *e ? -1 : 0;
}

static int to_gz(void *ctx, const void *p, size_t n)
{
    return gzwrite(ctx, p, (unsigned)n) != (int)n;
}

/* Writes one piece as gzip'd Kineto JSON, making its folder first. */
static int write_piece(void *ctx, const tl_trace *t, const tl_sc_piece *p, tl_err *err)
{
    (void)ctx;
    int rc = tl_mkdir_p(p->dir, err);
    if (rc) return rc;
    gzFile gz = gzopen(p->path, "wb1");
    if (!gz) return tl_errf(err, TL_EIO, "%s: cannot create: %s", p->path, strerror(errno));
    rc = tl_kineto_write_sel(t, p->items, p->nitems, to_gz, gz, p->path, err);
    if (gzclose(gz) != Z_OK && !rc) rc = tl_errf(err, TL_EIO, "%s: write failed", p->path);
    return rc;
}

static int write_text(const char *dir, const char *name, const tl_buf *b, const char *what)
{
    char path[4096];
    size_t dl = strlen(dir);
    snprintf(path, sizeof path, "%s%s%s", dir, dl && dir[dl - 1] != '/' ? "/" : "", name);
    FILE *f = fopen(path, "w");
    int bad = !f || fwrite(b->p, 1, b->n, f) != b->n;
    if (f && fclose(f)) bad = 1;
    if (bad) {
        fprintf(stderr, "TraceLens_split_inference_trace: %s: cannot write: %s\n", path, strerror(errno));
        return TL_EXIT_FAIL;
    }
    printf("Wrote execution details %s to %s\n", what, path);
    return TL_EXIT_OK;
}

/* The reference's base name: the file name without .pt.trace, .json.gz
 * and .json (every occurrence, in that order). */
static void base_name(const char *path, char *out, size_t cap)
{
    const char *s = strrchr(path, '/');
    snprintf(out, cap, "%s", s ? s + 1 : path);
    static const char *const EXT[] = {".pt.trace", ".json.gz", ".json"};
    for (size_t e = 0; e < 3; e++) {
        size_t l = strlen(EXT[e]);
        for (char *x; (x = strstr(out, EXT[e]));) memmove(x, x + l, strlen(x + l) + 1);
    }
}

/* Loads the trace, splits it and writes the execution details. */
static int run_split(const char *db, const char *arg, tl_sc_opts *o)
{
    printf("Loading trace: %s\n", arg);
    fflush(stdout);
    tl_store *s = tl_cli_store_for(db, &arg, 1);
    if (!s) return TL_EXIT_STORE;
    tl_reader *r = NULL;
    tl_trace *t = NULL;
    uint64_t id;
    tl_err err = {0};
    int rc = tl_cli_open_trace(s, arg, &r, &id);
    if (!rc && tl_trace_load(r, id, &t, &err)) {
        fprintf(stderr, "TraceLens_split_inference_trace: %s\n", err.msg);
        rc = tl_cli_exit_for(err.code, TL_EXIT_FAIL);
    }
    size_t dropped; /* the call tree of the generic fallback links GPU events as the reference does */
    if (!rc && tl_trace_reference_links(t, &dropped, &err)) {
        fprintf(stderr, "TraceLens_split_inference_trace: %s\n", err.msg);
        rc = TL_EXIT_FAIL;
    }
    if (!rc && tl_mkdir_p(o->output_dir, &err)) {
        fprintf(stderr, "TraceLens_split_inference_trace: %s\n", err.msg);
        rc = TL_EXIT_FAIL;
    }
    tl_sc_result res = {0};
    if (!rc && tl_split_compat(t, o, write_piece, NULL, &res, &err)) {
        fprintf(stderr, "TraceLens_split_inference_trace: %s\n", err.msg);
        rc = err.code == TL_EUSAGE ? TL_EXIT_USAGE : TL_EXIT_FAIL;
    }
    if (!rc && res.npieces) rc = write_text(o->output_dir, "execution_details.json", &res.json, "JSON");
    if (!rc && res.npieces) rc = write_text(o->output_dir, "execution_details.csv", &res.csv, "CSV");
    tl_sc_result_free(&res);
    if (t) tl_trace_free(t);
    if (r) tl_reader_close(r);
    tl_store_close(s);
    return rc;
}

int tl_cmd_split_inference(int argc, char **argv)
{
    const char *db = NULL, *arg = NULL, *nsteps_text = "32";
    char base[1024];
    tl_sc_opts o = {.iterations = "all", .num_steps = 32, .log = stdout};
    tl_cli_args p;
    tl_cli_args_init(&p, argc, argv, OPTS, sizeof OPTS / sizeof *OPTS);
    for (int k; (k = tl_cli_next(&p)) != TL_CLI_END;) {
        if (k == O_HELP) {
            fputs(USAGE, stdout);
            fputs(HELP, stdout);
            return TL_EXIT_OK;
        } else if (k == O_OUT) o.output_dir = p.val;
        else if (k == O_ITER) o.iterations = p.val;
        else if (k == O_SINGLE) o.store_single = 1;
        else if (k == O_STEADY) o.find_steady = 1;
        else if (k == O_DIVIDE) o.divide_phases = 1;
        else if (k == O_DB) db = p.val;
        else if (k == O_NSTEPS && (nsteps_text = p.val, parse_long(p.val, &o.num_steps)))
            return usage_error("argument --num-steps: invalid int value: '%s'%s", p.val, "");
        else if (k == O_CONC && (o.has_conc = 1, parse_long(p.val, &o.conc)))
            return usage_error("argument --CONC: invalid int value: '%s'%s", p.val, "");
        else if (k == O_OSL && (o.has_osl = 1, parse_double(p.val, &o.osl)))
            return usage_error("argument --OSL: invalid float value: '%s'%s", p.val, "");
        else if (k == O_R && (o.has_r = 1, parse_double(p.val, &o.r)))
            return usage_error("argument --R: invalid float value: '%s'%s", p.val, "");
        else if (k == TL_CLI_BAD) return usage_error("%s%s", p.msg, "");
        else if (k == TL_CLI_UNKNOWN) return usage_error("unrecognized arguments: %s%s", p.arg, tl_cli_hint(&p));
        else if (k == TL_CLI_POSITIONAL && !arg) arg = p.arg;
        else if (k == TL_CLI_POSITIONAL) return usage_error("unrecognized arguments: %s%s", p.arg, "");
    }
    if (!arg || !o.output_dir)
        return usage_error("the following arguments are required: %s%s", !arg ? "trace_path" : "-o/--output-dir",
                           !arg && !o.output_dir ? ", -o/--output-dir" : "");
    if (o.num_steps < 1) return usage_error("argument --num-steps: must be at least 1, got '%s'%s", nsteps_text, "");
    base_name(arg, base, sizeof base);
    o.base_name = base;
    return run_split(db, arg, &o);
}
