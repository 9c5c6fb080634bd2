/* cmd_split.c — `tracelens split`: cuts an inference trace into per-step or
 * steady-state windows along its step annotations, and with
 * --capture_folder first merges graph-capture traces into a graph-replay
 * trace (query/inference/inference.h). Also home of tl_cli_graph_merge, the
 * CLI side of the merge that the report command calls. The query layer
 * builds these derived traces; this file stores them (ingesting the capture
 * files, committing the builds): tools/ may write the store, query/ may not. */
#include "tools/cli.h"
#include "query/core/trace.h"
#include "query/inference/inference.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *HELP =
    "Usage: tracelens [--db DIR] split ID|FILE [--steady-state] [--capture_folder DIR]\n"
    "                                          [--merge-only] [--out DIR]\n"
    "\n"
    "Cuts an inference trace into windows along the step annotations the serving\n"
    "engine writes (vLLM/SGLang/ATOM: execute_<tok>_context_<n>(..)_generation_<n>(..),\n"
    "step[DECODE bs=..], prefill[..]/decode[..]; xDiT: execute_diffusion_<bs>_<HxW>).\n"
    "A trace without any of them falls back to torch.profiler's ProfilerStep#<n>\n"
    "annotations, one window per profiler step (the reference instead looks for a\n"
    "repeating call sequence in the call tree). Each window is stored as its own\n"
    "trace, labelled step (prefill, decode, prefilldecode, diffusion,\n"
    "profiler_step), kind, bs, tokens,\n"
    "parent and window, so phases can be reported, compared (`tracelens compare`)\n"
    "and queried across runs. Splitting twice stores nothing new.\n"
    "\n"
    "Options:\n"
    "  --steady-state        instead of one window per step, the three windows of the\n"
    "                        reference's splitter (TraceLens_split_inference_trace\n"
    "                        --find-steady-state, --num-steps 32): inside the largest\n"
    "                        region of steps whose request count stays near the peak,\n"
    "                        mixed_steady_state (the 32 steps whose prefill share is\n"
    "                        nearest the regions'), decode_only_steady_state and\n"
    "                        prefilldecode_steady_state (the longest run of decode-only\n"
    "                        / prefill-bearing steps, up to 32); an empty one is left out\n"
    "  --capture_folder DIR  graph-capture traces (execution_details.json or every\n"
    "                        *.json[.gz]); the kernels replayed by each graph launch\n"
    "                        are first attributed to the CPU ops that captured them,\n"
    "                        and the merged trace is what gets split. The graph\n"
    "                        launch table (resolution per launch) is printed.\n"
    "  --merge-only          with --capture_folder: store the merged trace, no split\n"
    "  --out DIR             also write each piece as PyTorch Kineto JSON,\n"
    "                        DIR/<trace>_step<N>.json (_<window>-<N> for a steady\n"
    "                        window, N its first step; _graph-merged_\n"
    "                        before it after a merge), readable by any Kineto tool\n"
    "                        (the reference's report included). A piece's UIDs are\n"
    "                        its own positions (0..), stored and written alike\n"
    "  --db DIR              trace store (default $TRACELENS_DB, else\n"
    "                        $XDG_DATA_HOME/tracelens)\n"
    "  -h, --help            this text\n"
    "\n"
    "Output: one line per stored trace: id, step, bs, window (tab-separated).\n"
    "Exit status: 0 ok; 1 failure (a piece that could not be written included);\n"
    "2 bad command line; 3 store error; 4 no such trace; 5 the trace has no step\n"
    "annotations (nothing to split).\n";

/* *have = 1 when the store already holds trace id (a fresh snapshot). */
static int stored_already(tl_store *s, uint64_t id, int *have, tl_err *err)
{
    tl_reader *r;
    int rc = tl_reader_open(s, &r, err);
    if (rc) return rc;
    *have = tl_reader_has(r, id);
    tl_reader_close(r);
    return 0;
}

/* Stores a derived trace the way ingest stores a parsed file: seal, then
 * one write transaction. Frees the build. */
static int commit_derived(tl_store *s, tl_derived *d, tl_err *err)
{
    tl_build_seal(d->build, &d->info);
    int rc = tl_build_commit(d->build, s, &d->info, err);
    tl_derived_free(d);
    return rc;
}

/* Merges the replay with its capture traces and stores the merged trace
 * unless it is stored already; *summary as tl_gr_merge. */
static int merge_and_store(tl_store *s, const tl_trace *rp, const tl_gr_source *src, size_t n,
                           uint64_t *merged_id, tl_table **summary, tl_err *err)
{
    *merged_id = tl_gr_merged_id(rp, src, n);
    int have;
    int rc = stored_already(s, *merged_id, &have, err);
    if (rc) return rc;
    tl_derived d;
    rc = tl_gr_merge(rp, src, n, have ? NULL : &d, summary, err);
    if (rc || have) return rc;
    return commit_derived(s, &d, err);
}

int tl_cli_graph_merge(tl_store *s, uint64_t replay_id, const char *dir, uint64_t *merged_id,
                       tl_table **summary)
{
    tl_err err = {0};
    char **files;
    int64_t *bs;
    int *full;
    int n = tl_gr_read_folder(dir, &files, &bs, &full, &err);
    if (n < 0) {
        fprintf(stderr, "tracelens: %s\n", err.msg);
        return TL_EXIT_FAIL;
    }
    if (n == 0) {
        fprintf(stderr, "tracelens: %s: no capture traces\n", dir);
        return TL_EXIT_FAIL;
    }
    int rc = TL_EXIT_OK;
    tl_reader **rd = calloc((size_t)n + 1, sizeof *rd);
    tl_trace **ct = calloc((size_t)n, sizeof *ct);
    tl_gr_source *src = calloc((size_t)n, sizeof *src);
    tl_trace *rp = NULL;
    for (int i = 0; i < n && !rc; i++) {
        uint64_t id;
        rc = tl_cli_open_trace(s, files[i], &rd[i], &id);
        if (rc) break;
        if (tl_trace_load(rd[i], id, &ct[i], &err)) {
            fprintf(stderr, "tracelens: %s: %s\n", files[i], err.msg);
            rc = TL_EXIT_FAIL;
            break;
        }
        int64_t cbs;
        int cfull;
        tl_gr_classify(ct[i], &cbs, &cfull);
        const char *base = strrchr(files[i], '/');
        src[i] = (tl_gr_source){ct[i], base ? base + 1 : files[i], bs[i] >= 0 ? bs[i] : cbs,
                                full[i] >= 0 ? full[i] : cfull};
    }
    if (!rc) {
        if (tl_reader_open(s, &rd[n], &err) || tl_trace_load(rd[n], replay_id, &rp, &err)) {
            fprintf(stderr, "tracelens: %s\n", err.msg);
            rc = TL_EXIT_FAIL;
        } else if (merge_and_store(s, rp, src, (size_t)n, merged_id, summary, &err)) {
            fprintf(stderr, "tracelens: graph merge: %s\n", err.msg);
            rc = TL_EXIT_FAIL;
        }
    }
    if (rp) tl_trace_free(rp);
    for (int i = 0; i < n; i++) {
        if (ct[i]) tl_trace_free(ct[i]);
        if (rd[i]) tl_reader_close(rd[i]);
        free(files[i]);
    }
    if (rd[n]) tl_reader_close(rd[n]);
    free(rd), free(ct), free(src), free(files), free(bs), free(full);
    return rc;
}

/* Stores window w of t as its own trace unless a split stored it before
 * (*existed 1). */
static int split_and_store(tl_store *s, const tl_trace *t, const tl_window *w, int steady, uint64_t *id,
                           int *existed, tl_err *err)
{
    *id = tl_split_id(t, w, steady);
    int rc = stored_already(s, *id, existed, err);
    if (rc || *existed) return rc;
    tl_derived d;
    rc = tl_split_build(t, w, steady, &d, err);
    if (rc) return rc;
    return commit_derived(s, &d, err);
}

static void print_table(const tl_table *t)
{
    char buf[64];
    for (size_t c = 0; c < t->ncols; c++) printf("%s%s", c ? "\t" : "# ", t->cols[c].name);
    printf("\n");
    for (size_t r = 0; r < t->nrows; r++) {
        for (size_t c = 0; c < t->ncols; c++)
            printf("%s%s", c ? "\t" : "# ", tl_table_cell_text(t, c, r, buf, sizeof buf));
        printf("\n");
    }
}

/* The file name of a piece: the parent's file name without .json[.gz] /
 * .pt.trace, '#' parts joined with '_', then _step<N> or _<label>-<N>. */
static void piece_name(const tl_trace *t, const tl_window *w, char *out, size_t cap)
{
    const char *pp = t->catalog ? strstr(t->catalog, "\"path\":\"") : NULL;
    char base[1024] = "trace";
    if (pp) {
        pp += 8;
        size_t k = 0;
        while (pp[k] && pp[k] != '"' && k + 1 < sizeof base) base[k] = pp[k], k++;
        base[k] = 0;
    }
    const char *slash = strrchr(base, '/');
    char *b = (char *)(slash ? slash + 1 : base);
    static const char *const ext[] = {".json.gz", ".json", ".pt.trace"};
    for (size_t e = 0; e < sizeof ext / sizeof *ext; e++) {
        char *x;
        while ((x = strstr(b, ext[e]))) memmove(x, x + strlen(ext[e]), strlen(x + strlen(ext[e])) + 1);
    }
    for (char *c = b; *c; c++)
        if (*c == '#' || *c == '/') *c = '_';
    snprintf(out, cap, "%s_%s%s%zu.json", b, w->label ? w->label : "step", w->label ? "-" : "", w->first_step);
}

/* Writes stored piece id to dir/name. */
static int write_piece(tl_store *s, uint64_t id, const char *dir, const char *name)
{
    tl_err err = {0};
    tl_reader *r;
    tl_trace *t = NULL;
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    int rc = tl_reader_open(s, &r, &err);
    if (!rc) rc = tl_trace_load(r, id, &t, &err);
    FILE *f = rc ? NULL : fopen(path, "w");
    if (!rc && !f) rc = tl_errf(&err, TL_EIO, "%s: cannot create", path);
    if (!rc) rc = tl_kineto_write(t, f, path, &err);
    if (f && fclose(f) && !rc) rc = tl_errf(&err, TL_EIO, "%s: write failed", path);
    if (t) tl_trace_free(t);
    if (r) tl_reader_close(r);
    if (rc) fprintf(stderr, "tracelens split: %s\n", err.msg);
    return rc ? TL_EXIT_FAIL : TL_EXIT_OK;
}

/* Splits stored trace id, prints a line per piece and with outdir writes
 * each piece out as Kineto JSON (read back through a fresh reader, which
 * sees the pieces just stored). */
static int split_trace(tl_store *s, tl_reader *r, uint64_t id, int steady, const char *outdir)
{
    tl_err err = {0};
    tl_trace *t;
    if (outdir && tl_mkdir_p(outdir, &err)) {
        fprintf(stderr, "tracelens split: %s\n", err.msg);
        return TL_EXIT_FAIL;
    }
    if (tl_trace_load(r, id, &t, &err)) {
        fprintf(stderr, "tracelens: %s\n", err.msg);
        return TL_EXIT_FAIL;
    }
    tl_window *w;
    size_t nw = tl_split_windows(t, steady, &w);
    if (!nw) {
        fprintf(stderr, "tracelens split: no step annotations in the trace (execute_.._context_.."
                        "_generation_.., step[..], prefill[..]/decode[..], execute_diffusion_.., ProfilerStep#..); "
                        "nothing to split\n");
        tl_trace_free(t);
        return 5;
    }
    int rc = TL_EXIT_OK;
    for (size_t k = 0; k < nw && !rc; k++) {
        uint64_t wid;
        int existed;
        if (split_and_store(s, t, &w[k], steady, &wid, &existed, &err)) {
            fprintf(stderr, "tracelens split: window %zu: %s\n", k, err.msg);
            rc = TL_EXIT_FAIL;
            break;
        }
        printf("%016llx\t%s\tbs=%lld\t%s %zu-%zu%s\n", (unsigned long long)wid,
               tl_split_step_label(w[k].kind),
               (long long)w[k].bs, w[k].label ? w[k].label : "step", w[k].first_step,
               w[k].first_step + w[k].nsteps - 1, existed ? "\t(already stored)" : "");
        if (outdir) {
            char name[1200];
            piece_name(t, &w[k], name, sizeof name);
            rc = write_piece(s, wid, outdir, name);
        }
    }
    free(w);
    tl_trace_free(t);
    return rc;
}

enum { S_HELP, S_DB, S_CAPTURE, S_STEADY, S_MERGE, S_OUT };
static const tl_cli_opt OPTS[] = {
    [S_HELP] = {"-h|--help", TL_CLI_FLAG},
    [S_DB] = {"--db", TL_CLI_VALUE},
    [S_CAPTURE] = {"--capture_folder", TL_CLI_VALUE},
    [S_STEADY] = {"--steady-state|--steady_state", TL_CLI_FLAG},
    [S_MERGE] = {"--merge-only", TL_CLI_FLAG},
    [S_OUT] = {"--out", TL_CLI_VALUE},
};

int tl_cmd_split(int argc, char **argv)
{
    const char *db = NULL, *arg = NULL, *capdir = NULL, *outdir = NULL;
    int steady = 0, merge_only = 0;
    tl_cli_args p;
    tl_cli_args_init(&p, argc, argv, OPTS, sizeof OPTS / sizeof *OPTS);
    for (int k; (k = tl_cli_next(&p)) != TL_CLI_END;) {
        if (k == S_HELP) {
            fputs(HELP, stdout);
            return TL_EXIT_OK;
        } else if (k == S_DB) db = p.val;
        else if (k == S_CAPTURE) capdir = p.val;
        else if (k == S_STEADY) steady = 1;
        else if (k == S_MERGE) merge_only = 1;
        else if (k == S_OUT) outdir = p.val;
        else if (k == TL_CLI_BAD) {
            fprintf(stderr, "tracelens split: %s\n", p.msg);
            return TL_EXIT_USAGE;
        } else if (k == TL_CLI_UNKNOWN) {
            fprintf(stderr, "tracelens split: unknown option %s%s (see --help)\n", p.arg, tl_cli_hint(&p));
            return TL_EXIT_USAGE;
        } else if (!arg) arg = p.arg;
        else {
            fprintf(stderr, "tracelens split: one trace at a time (see --help)\n");
            return TL_EXIT_USAGE;
        }
    }
    if (!arg || (merge_only && !capdir)) {
        fprintf(stderr, "tracelens split: %s (see --help)\n",
                !arg ? "missing trace" : "--merge-only needs --capture_folder");
        return TL_EXIT_USAGE;
    }
    tl_store *s = tl_cli_store_for(db, &arg, 1); /* a stored id needs a store */
    if (!s) return TL_EXIT_STORE;
    tl_reader *r = NULL;
    uint64_t id;
    int rc = tl_cli_open_trace(s, arg, &r, &id);
    if (rc) {
        tl_store_close(s);
        return rc;
    }
    if (capdir) {
        tl_table *sum = NULL;
        uint64_t mid;
        rc = tl_cli_graph_merge(s, id, capdir, &mid, &sum);
        if (sum) {
            print_table(sum);
            tl_table_free(sum);
        }
        if (rc) goto done;
        printf("%016llx\tgraph-merged\t-\tall\n", (unsigned long long)mid);
        id = mid;
        tl_reader_close(r);
        tl_err e = {0};
        if (tl_reader_open(s, &r, &e)) {
            fprintf(stderr, "tracelens: %s\n", e.msg);
            r = NULL;
            rc = TL_EXIT_STORE;
            goto done;
        }
        if (merge_only) goto done;
    }
    rc = split_trace(s, r, id, steady, outdir);
done:
    if (r) tl_reader_close(r);
    tl_store_close(s);
    return rc;
}
