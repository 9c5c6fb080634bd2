/* inference.h — the inference report family: prefill/decode phase analysis,
 * graph-replay attribution from capture traces, and traces cut into steps. */
#ifndef TL_INFERENCE_INFERENCE_H
#define TL_INFERENCE_INFERENCE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "query/core/trace.h"
#include "query/core/table.h"
#include "query/pytorch/pytorch.h"
#include "ingest/builder.h"

/* ---- inference phase analysis (prefill vs decode) for the PyTorch
 * report: spec/diff-compare-phases.md Part C.
 *
 * Two sources of truth, in this order:
 *   1. step annotations written by the serving engine (C8:
 *      `execute_<tok>_context_<n>(..)_generation_<n>(..)`, `step[DECODE bs=..]`,
 *      `prefill[..]` / `decode[..]`). They are exact: every GPU event that runs
 *      inside a prefill-only or decode-only step gets that step's phase.
 *   2. the branch heuristics (C3-C5: kernel_names, framework_apis,
 *      attention_patterns, operation_frequency, gemm_params, hybrid, union),
 *      used for rows outside any step or inside a mixed prefill+decode step.
 * The produced `phase_analysis` sheet says which source labelled how many rows.
 *
 * Steps are also what `tracelens split` cuts along (tl_split_windows). */

typedef enum { TL_PHASE_MIXED = 0, TL_PHASE_PREFILL = 1, TL_PHASE_DECODE = 2 } tl_phase;
const char *tl_phase_name(int phase); /* "Mixed", "Prefill", "Decode" */

typedef enum {
    TL_PM_UNION = 0,
    TL_PM_GEMM_PARAMS,
    TL_PM_KERNEL_NAMES,
    TL_PM_ATTENTION_PATTERNS,
    TL_PM_FRAMEWORK_APIS,
    TL_PM_OPERATION_FREQUENCY,
    TL_PM_HYBRID,
} tl_phase_method;
/* --phase_detection_method value -> method. Unknown names run hybrid, as
 * the reference does (C3); *known is set to 0 for them (may be NULL). */
int tl_phase_method_parse(const char *s, int *known);
const char *tl_phase_method_name(int m);

/* One launcher row as the heuristics see it (C2). */
typedef struct tl_phase_row {
    const char *name;       /* cpu op (or runtime) name */
    const char *in_dims;    /* raw JSON text of "Input Dims", or NULL */
    const char **knames;    /* kernel names of kernel_details */
    size_t nk;
} tl_phase_row;

/* Labels rows with one method (C3/C4), out[i] = tl_phase. threshold is
 * --decode_threshold (C1, default 10). */
void tl_phase_classify(const tl_phase_row *rows, size_t n, int method, double threshold,
                       uint8_t *out);

/* Kernel category of C7 (the branch's categorize_kernel_by_name, kcat.c)
 * from a kernel name: a static string; "Unknown" for NULL. */
const char *tl_kernel_category(const char *kernel_name);
/* The branch's `Kernel category` column, first in kernel_summary, whose
 * rows then come in the branch's order (its group key starts with the
 * category; ties of the descending sort as pandas', or stable with
 * fix_quirks). A sheet without "Kernel name" is left as it is. */
void tl_inference_kernel_categories(tl_pyt_sheets *s, int fix_quirks);

/* ---- step annotations (C8) ---------------------------------------------- */

/* DIFFUSION: an xDiT step (`execute_diffusion_<bs>_<H>x<W>`), neither prefill
 * nor decode (the reference's phase None); PROFILER: a `ProfilerStep#<n>` of
 * tl_steps_find_profiler. Neither labels phases. */
typedef enum {
    TL_STEP_MIXED = 0,
    TL_STEP_PREFILL_ONLY = 1,
    TL_STEP_DECODE_ONLY = 2,
    TL_STEP_DIFFUSION = 3,
    TL_STEP_PROFILER = 4,
    TL_STEP_KINDS
} tl_step_kind;
/* "prefilldecode", "prefill_only", "decode_only", "diffusion", "profiler_step" */
const char *tl_step_kind_name(int k);

typedef struct tl_step {
    const char *name;       /* annotation text */
    int kind;               /* tl_step_kind */
    int64_t bs;             /* requests in the step (-1 unknown) */
    int64_t tokens;         /* tokens (-1 unknown) */
    int64_t ctx, gen;       /* context / generation request counts (-1 unknown) */
    int64_t cpu_ts, cpu_end; /* ns, host annotation interval */
    int64_t gpu_lo, gpu_hi; /* ns, span of GPU work launched inside it (lo > hi: none) */
    int32_t row;            /* annotation row (-1 when read from a stored step list) */
} tl_step;

typedef struct tl_steps {
    tl_step *v;
    size_t n;
    tl_arena arena;
} tl_steps;

/* Finds the steps of a trace, in time order. A trace written by graph-replay
 * merging carries its steps as the extra blob "inference_steps" (its host
 * times no longer say which GPU work belongs to which step); that list wins.
 * Annotations nested in an accepted step (SGLang writes both
 * `execute_..` and `step[..]` for one step) are folded into it. */
int tl_steps_find(const tl_trace *t, tl_steps *out);
/* The fallback for traces without step annotations (`tracelens split`):
 * the `ProfilerStep#<n>` annotations of torch.profiler's schedule as steps
 * of kind TL_STEP_PROFILER, GPU spans found as tl_steps_find does. */
int tl_steps_find_profiler(const tl_trace *t, tl_steps *out);
void tl_steps_free(tl_steps *s);
/* Parses one annotation name; 1 if it is a step annotation. */
int tl_step_parse(const char *name, tl_step *st);
/* Step whose GPU span contains ts (ns), or -1. */
long tl_steps_at_gpu(const tl_steps *s, int64_t ts);
/* Serialises / parses the "inference_steps" extra blob (tab-separated text). */
void tl_steps_serialise(const tl_steps *s, tl_buf *out);
/* Table `inference_steps`: one row per step. */
tl_table *tl_steps_table(const tl_steps *s);

/* ---- the report's phase sheets (C6) ------------------------------------- */

typedef struct tl_phase_opts {
    int method;             /* tl_phase_method, default union */
    double decode_threshold; /* default 10 */
    int kernel_summary;     /* --enable_kernel_summary: kernel_summary_prefill/decode */
    int no_annotations;     /* heuristics only, even where step annotations exist */
} tl_phase_opts;
void tl_phase_opts_default(tl_phase_opts *o);

/* Appends to out, in this order: `phase_analysis` (source, method, row counts),
 * `inference_steps` (when steps exist), `ops_summary_by_category` as the
 * branch regroups it (launchers of category "other" under their kernels'
 * dominant family; it replaces the report's own), `ops_summary_prefill`,
 * `ops_summary_decode`, and with kernel_summary `kernel_summary_prefill`,
 * `kernel_summary_decode` (each only when it has rows). GPU-only traces get
 * only the kernel sheets. po: the report's options (categories, etc.). */
int tl_phase_sheets(const tl_trace *t, const tl_pyt_opts *po, const tl_phase_opts *o,
                    tl_pyt_sheets *out, tl_err *err);


/* ---- the reference's inference report (report.c) ------------------------ */

/* Sets the options the inference report always uses over the PyTorch
 * report's (module summaries, per-kernel call stacks, no collective
 * analysis, the step annotation for the attention ops it names); the caller adds group_by_parent_module and the rest from its
 * flags. */
void tl_inference_report_opts(tl_pyt_opts *o);
/* Turns the PyTorch report's sheets (computed with those options) into the
 * inference report's: perf sheets of families other than GEMM and the
 * elementwise ones named "<family>_fwd", no "_bwd" sheets. */
void tl_inference_report_sheets(tl_pyt_sheets *s);

/* ---- derived traces: traces built from stored ones (a graph-replay merge,
 * a split window). They come back built and unstored; the command layer
 * stores them the way ingest stores a parsed file (ingest/builder.h), so
 * this family only reads the store. */
typedef struct tl_derived {
    tl_build *build;        /* tree built, not sealed */
    tl_build_info info;     /* id, path, format, rank -1, labels (point into path/labels) */
    char path[4096];
    char labels[512];
} tl_derived;
/* Frees the build (once stored, or when it is not stored). */
void tl_derived_free(tl_derived *d);

/* ---- SGLang profiler op names (sglang_names.c): the reference's
 * --enable_pseudo_ops first renames cpu ops "sglang_profiler::<name>_<digits>"
 * to "sglang_profiler::<name>". */

/* How many cpu-op rows of t such a renaming changes. */
size_t tl_sglang_names(const tl_trace *t);
/* Id of t's renamed trace (a hash of t's id: renaming twice finds it). */
uint64_t tl_sglang_names_id(const tl_trace *t);
/* The renamed trace, built and not stored, with its catalog facts (path
 * "<t's path>#sglang-names", labels parent). t needs every column. */
int tl_sglang_names_build(const tl_trace *t, tl_derived *out, tl_err *err);

/* ---- the reference's pseudo ops (pseudo_ops.c, --enable_pseudo_ops after
 * the SGLang renaming): synthetic cpu ops, each over one kernel of a fused
 * framework op, so that the kernel gets its own perf model. Built: the
 * unfused Triton MoE of vLLM (pseudo_op::moe_triton_unfused_up/_down/
 * _finalize_matmul_scatter under vllm::moe_forward). */

/* How many pseudo ops t gets (0: the trace is reported as it is). */
size_t tl_pseudo_ops(const tl_trace *t);
/* Id of t's trace with pseudo ops (a hash of t's id). */
uint64_t tl_pseudo_ops_id(const tl_trace *t);
/* t with its pseudo ops, built and not stored, with its catalog facts (path
 * "<t's path>#pseudo-ops", labels parent). t needs every column. */
int tl_pseudo_ops_build(const tl_trace *t, tl_derived *out, tl_err *err);

/* ---- kernels replayed from CUDA/HIP graphs, attributed to the
 * CPU ops that captured them (spec/diff-compare-phases.md C8, graph mode;
 * spec/pytorch-report.md §4.3 for how a graph launch owns its kernels).
 *
 * A replay trace shows one `hipGraphLaunch`/`cudaGraphLaunch` owning hundreds
 * of kernels, so ops_summary and the roofline sheets see one opaque row. The
 * graph-capture traces (--capture_folder) recorded the CPU ops, shapes and
 * launch calls while the graph was captured. Each graph launch's kernel
 * sequence is matched against the capture windows (StreamBeginCapture ..
 * StreamEndCapture) by kernel names, and a merged trace is built: the replay
 * unchanged except that every matched kernel is re-linked to a copy of its
 * capturing launch call, which hangs with copies of the capturing CPU ops
 * under the graph launch as the reference's merge hangs them (a CaptureRoot,
 * the launch's ts and dur on every copy, the reference's UIDs, the tree
 * pinned; one synthetic thread per graph launch). GPU events
 * and their times are untouched, so every GPU total is unchanged; the report
 * then runs on the merged trace as on any trace. */

/* C8 classification of a capture trace: FULL if it has at most one
 * StreamBeginCapture runtime call, else PIECEWISE; batch size from a
 * `capture_<bs>_<kind>` annotation, else the most common first dimension of
 * cpu-op inputs (-1 if none). */
void tl_gr_classify(const tl_trace *cap, int64_t *batch_size, int *full);

/* One capture trace handed to the merge. */
typedef struct tl_gr_source {
    const tl_trace *t;
    const char *file;     /* for the summary */
    int64_t batch_size;   /* from execution_details.json or tl_gr_classify */
    int full;
} tl_gr_source;

/* Id of the merged trace: a hash of the replay and capture ids, so a merge
 * already stored is recognised before any work. */
uint64_t tl_gr_merged_id(const tl_trace *replay, const tl_gr_source *caps, size_t ncap);

/* Matches the replay's graph launches against the capture windows. *summary
 * (may be NULL) gets the `graph_launches` table with the resolution of every
 * launch; out (NULL when the merged trace is already stored) gets the merged
 * trace, built and not stored, with its catalog facts. */
int tl_gr_merge(const tl_trace *replay, const tl_gr_source *caps, size_t ncap, tl_derived *out,
                tl_table **summary, tl_err *err);

/* `graph_launches` for a trace without capture traces: every graph launch
 * with its kernel count, kernel time and share of GPU kernel time, and a note
 * that --capture_folder would resolve them. NULL when there is none. */
tl_table *tl_gr_launch_table(const tl_trace *t);

/* execution_details.json of a capture folder: entries {file, batch_size,
 * mode}. Without that file every *.json / *.json.gz in dir is listed with
 * batch_size -1 and mode unknown (-1: classify from the trace). Returns the
 * count; the files, bs and full arrays are malloc'd (files: malloc'd full paths). */
int tl_gr_read_folder(const char *dir, char ***files, int64_t **bs, int **full, tl_err *err);

/* ---- traces derived from stored ones: copying a selection of a trace's
 * rows into a builder (used by graph-replay merging) and cutting an
 * inference trace into per-step or steady-state windows along its step
 * annotations (`tracelens split`, spec/diff-compare-phases.md C8). Each
 * window becomes its own trace with
 * labels (step kind, batch size, parent id), so phases can be compared with
 * `tracelens compare` and queried across runs like any other trace. */

/* Fills e from row i of t, strings re-interned into b (caller may change
 * fields before tl_build_event). */
void tl_event_in(tl_build *b, const tl_trace *t, size_t i, tl_ev_in *e);
/* Interns string id sid of t into b. */
uint32_t tl_restr(tl_build *b, const tl_trace *t, uint32_t sid);
/* Copies rows of t into b (keep NULL: all rows), re-interning strings.
 * corr (may be NULL): per row a replacement correlation (TL_NONE: keep).
 * Flows are copied when their id is the correlation of a kept event (all
 * flows when keep is NULL), metadata events always, and the catalog's
 * top-level metadata (deviceProperties, ...) as top-level keys. fresh_uids:
 * the copied rows are renumbered 0.. in uid order (a split piece's uids are
 * its positions, as in the Kineto JSON it is written out as); else they keep
 * their uids. */
void tl_copy_rows(tl_build *b, const tl_trace *t, const uint8_t *keep, const int64_t *corr, int fresh_uids);

typedef struct tl_window {
    int64_t host_lo, host_hi; /* ns: host rows fully inside are kept */
    int64_t gpu_lo, gpu_hi;   /* ns: GPU rows starting inside are kept */
    int kind;                 /* tl_step_kind of its steps */
    int64_t bs, tokens;       /* batch size / tokens (mean over steps for steady windows) */
    size_t first_step, nsteps;
    const char *label;        /* steady windows: "mixed_steady_state", "decode_only_steady_state",
                                 "prefilldecode_steady_state"; NULL for a step */
} tl_window;

/* Windows of a trace: one per step annotation, or (steady) the reference
 * splitter's three steady-state windows (split_steady.c: the mixed window
 * whose prefill share is nearest the steady regions', the longest
 * decode-only run and the longest prefill-bearing run, each of up to 32
 * steps, inside the largest region of near-peak request counts); a window
 * the reference finds empty is left out. Returns the count (0: no step
 * annotations); *out is malloc'd. */
size_t tl_split_windows(const tl_trace *t, int steady, tl_window **out);

/* A window's `step` label: "prefill", "decode", "prefilldecode", "diffusion",
 * "profiler_step". */
const char *tl_split_step_label(int kind);

/* Id of window w's trace, derived from t's id and the window, so that
 * splitting twice finds the first split's traces. */
uint64_t tl_split_id(const tl_trace *t, const tl_window *w, int steady);
/* Builds window w of t as a new trace (not stored) with its catalog facts:
 * labels step, kind, bs, tokens, parent, window, steps; path "<parent
 * path>#step<N>" or "#steady-<N>". */
int tl_split_build(const tl_trace *t, const tl_window *w, int steady, tl_derived *out, tl_err *err);

/* ---- a stored trace written out as PyTorch Kineto JSON (traceEvents in
 * uid order: complete, flow and metadata events; the catalog's top-level
 * metadata as top-level keys; each args object verbatim except its
 * "correlation", set to the stored one; a graph-merged trace's copies with
 * nested slices of their launch's span, so that nesting by time rebuilds the
 * tree). A piece with fresh uids reads back with the same uids. path names
 * the file in errors. */
int tl_kineto_write(const tl_trace *t, FILE *f, const char *path, tl_err *err);

/* ---- selected rows of a stored trace written as Kineto JSON, in the
 * given order (an item may repeat): the reference splitter's pieces. The
 * bytes go to out (nonzero return: a write failure). */
enum { TL_KX_EVENT, TL_KX_FLOW };
typedef struct tl_kx_item {
    uint8_t what; /* TL_KX_EVENT: a complete event row; TL_KX_FLOW: a flows row */
    size_t row;
} tl_kx_item;
int tl_kineto_write_sel(const tl_trace *t, const tl_kx_item *items, size_t n,
                        int (*out)(void *ctx, const void *p, size_t n), void *ctx, const char *path, tl_err *err);

/* ---- the reference's splitter, TraceLens_split_inference_trace
 * (split_compat.c, split_steady.c, split_annot.c): iteration roots from
 * the step annotations' pattern tiers, pieces cut as the reference cuts
 * them (the roots' threads' events inside each root, the GPU events and
 * flows of their correlation ids), its per-iteration, steady-state and
 * phase-divided file names, and execution_details.json / .csv. */
typedef struct tl_sc_opts {
    const char *output_dir;   /* as given: output paths are joined to it */
    const char *base_name;    /* the trace file's name without .pt.trace / .json.gz / .json */
    const char *iterations;   /* "all", "N" or "START:END" */
    int store_single, find_steady, divide_phases;
    long num_steps;           /* default 32 */
    int has_conc, has_osl, has_r;
    long conc;
    double osl, r;
    FILE *log;                /* the reference's progress messages */
} tl_sc_opts;

/* One piece to write: path (output_dir joined), the folder it lies in
 * (made by the writer), and its events in the reference's order. */
typedef struct tl_sc_piece {
    const char *path, *dir;
    const tl_kx_item *items;
    size_t nitems;
} tl_sc_piece;
typedef int (*tl_sc_write_fn)(void *ctx, const tl_trace *t, const tl_sc_piece *p, tl_err *err);

/* What a split produced: execution_details.json and .csv text (empty
 * when npieces is 0). */
typedef struct tl_sc_result {
    tl_buf json, csv;
    size_t npieces;
} tl_sc_result;
/* Runs the splitter over t (loaded with every column and the flows),
 * calling write for each piece. TL_EUSAGE for an --iterations value that
 * is not "all", N or START:END. */
int tl_split_compat(const tl_trace *t, const tl_sc_opts *o, tl_sc_write_fn write, void *ctx, tl_sc_result *res,
                    tl_err *err);
void tl_sc_result_free(tl_sc_result *r);

#endif
