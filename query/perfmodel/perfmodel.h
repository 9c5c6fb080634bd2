/* perfmodel.h — performance models (FLOPs, bytes moved), roofline, and the
 * per-category perf sheets of the PyTorch report (GEMM, SDPA_fwd/_bwd,
 * CONV_fwd/_bwd, UnaryElementwise, BinaryElementwise, Normalization,
 * Reduce_fwd/_bwd, GroupedGEMM, MoE_comm, SSM, RoPE, CrossEntropy).
 *
 * Contract: spec/perf-models.md (models, registry, quirks) and
 * spec/pytorch-report.md §7, §9.6, §9.10 (sheet layout and aggregation).
 * The models reproduce the reference tool's numbers exactly, including its
 * deliberate quirks (docs/PERFMODELS.md lists them).
 *
 * Three layers, each usable on its own:
 *   1. registry   tl_pm_find(name) -> the op's model, family and category;
 *   2. model      tl_pm_eval() on one op's raw args -> FLOPs, bytes,
 *                 Compute Spec and the ordered "param: <k>" values;
 *   3. sheets     tl_pm_family_sheets() on every instance of a family ->
 *                 the aggregated tl_tables with the reference's columns.
 * Plus the roofline (GPU arch tables, data/arch/NAME.json) and the kernel-list
 * summary text shared with ops_unique_args / unified_perf_summary.
 *
 * The caller (the report code) owns the trace: it supplies kernel sets and
 * busy times in the instances, and raw arg texts and kernel names through
 * a tl_pm_source; nothing here reads the store. */
#ifndef TL_PERFMODEL_H
#define TL_PERFMODEL_H

#include <stddef.h>
#include <stdint.h>
#include "base/base.h"
#include "query/core/pyval.h"
#include "query/core/table.h"

typedef enum tl_pm_mode { TL_PM_FWD = 0, TL_PM_BWD = 1 } tl_pm_mode;

/* ======================================================================
 * 1. Registry: the 165 op names specified by perf-models.md and the
 * reference's 80 further extension (pseudo-op) models, as data
 * (query/perfmodel/registry.c, one line per op, in the reference's table
 * order so that families come out in workbook order).
 * ==================================================================== */

enum {
    TL_PM_SINGLE = 1u, /* the op's family writes one sheet (GEMM, Unary-,
                          BinaryElementwise, Normalization), else _fwd + _bwd */
    TL_PM_HAS_BWD = 2u, /* the model has backward-mode formulas (else a
                          backward pass silently yields no row) */
    TL_PM_PENDING = 4u  /* the reference models the op, its formulas are not
                          built here: the op has a model (it stops the unified
                          summary's walk, has_perf_model True) whose evaluation
                          fails with TL_EFORMAT, leaving its metrics empty as
                          the reference leaves them when its model cannot read
                          the args; model_id is -1 */
};

typedef struct tl_pm_op {
    const char *name;         /* exact op name, e.g. "aten::addmm" */
    const char *family;       /* sheet family: "GEMM", "SDPA", "CONV", ... */
    const char *category;     /* ops-by-category name: "GEMM", "SDPA_fwd",
                                 "CONV_bwd", "elementwise", "NORM_fwd", "reduce" */
    const char *bwd_category; /* category its autograd backward is filed under
                                 (unified summary, §9.5), NULL when the model
                                 has no backward */
    const char *model;        /* model name of perf-models.md §5, e.g. "addmm" */
    int model_id;             /* internal dispatch index */
    unsigned flags;           /* TL_PM_SINGLE | TL_PM_HAS_BWD | TL_PM_PENDING */
} tl_pm_op;

/* The op's entry, or NULL when the name has no model. O(1) (hash). */
const tl_pm_op *tl_pm_find(const char *name);
const tl_pm_op *tl_pm_findn(const char *name, size_t n);
/* All entries in table order. */
size_t tl_pm_nops(void);
const tl_pm_op *tl_pm_op_at(size_t i);
/* Sheet families in workbook order ("GEMM", "SDPA", "CONV",
 * "BinaryElementwise", ..., "Normalization", "Reduce"). */
size_t tl_pm_nfamilies(void);
const char *tl_pm_family_at(size_t i);
/* 1 if the family writes one sheet named after itself. */
int tl_pm_family_single(const char *family);

/* ======================================================================
 * 2. Models
 * ==================================================================== */

/* Raw inputs of one op event. Arg texts are the JSON text of args[...]
 * exactly as in the trace (Python-literal text is accepted too); NULL means
 * the key is absent. */
typedef struct tl_pm_args {
    const char *name;            /* the event's name; NULL: the op's. Models
                                    matched by name pattern read it (the
                                    Inductor Triton model parses its kernel name) */
    const char *input_dims;      /* args["Input Dims"] */
    const char *input_type;      /* args["Input type"] */
    const char *input_strides;   /* args["Input Strides"] */
    const char *concrete_inputs; /* args["Concrete Inputs"] */
    const char *output_type;     /* args["Output type"] (Reduce only; usually NULL) */
    const char *annotation;      /* the step annotation around the event (the
                                    name of the enclosing user annotation,
                                    "NA" when none), NULL when not looked up:
                                    InferenceAttention models read sq/sk from it */
    const char *pseudo_args;     /* the raw args JSON of a pseudo op
                                    (query/inference/pseudo_ops.c: "MoE topk",
                                    "MoE GEMM gated", ...), else NULL */
    int has_seq;                 /* args["Sequence number"] present (ConvBias*) */
    int64_t seq;
    /* Names of the op's GPU kernels sorted by start time (GEMM transpose
     * detection reads the first Tensile/hipBLASLt or nvjet name). */
    const char *const *kernel_names;
    size_t nkernels;
} tl_pm_args;

/* One "param: <key>" value. val NULL means Python None. */
typedef struct tl_pm_param {
    const char *key;
    const tl_pv *val;
} tl_pm_param;

typedef struct tl_pm_result {
    double flops;             /* FLOPs as a double (exact count converted once) */
    int has_bytes;            /* 0: bytes unknown (unknown dtype) -> NaN columns */
    double bytes;
    double gflops;            /* flops / 1e9 */
    double data_moved_mb;     /* bytes / 2^20 (MiB); NaN when unknown */
    double flops_per_byte;    /* (gflops*1e9) / bytes; NaN when unknown or 0 bytes */
    const char *compute_spec; /* "matrix_bf16", "vector_fp32", ... or "" */
    tl_pm_param *params;      /* model order, B/transpose appended for GEMMs */
    size_t nparams;
} tl_pm_result;

/* Per-report model state: the ConvBias cache (backward ConvBias ops copy the
 * shapes of the forward instance with the same sequence number; the
 * reference keeps this process-wide). One per report; not thread-safe. */
typedef struct tl_pm_ctx tl_pm_ctx;
tl_pm_ctx *tl_pm_ctx_new(void);
void tl_pm_ctx_free(tl_pm_ctx *ctx);

/* Evaluates op's model in the given mode. Everything it returns lives in a.
 * Returns 0; TL_EUNSUPPORTED when the model has no formula for the mode
 * ("not implemented": e.g. aten::mm backward); TL_EFORMAT when the args do
 * not fit the model (missing key, short list, wrong rank, unbroadcastable
 * shapes, rejected dtype mix, causal with N_Q != N_KV, ...). In both failure
 * cases the instance produces no row. Never crashes on any text. ctx may be
 * NULL (no ConvBias cache: ConvBias*_Backward then fails). */
int tl_pm_eval(const tl_pm_op *op, const tl_pm_args *in, tl_pm_mode mode, tl_pm_ctx *ctx,
               tl_arena *a, tl_pm_result *out, tl_err *err);

/* The model of an event, as the unified summary's walk asks it: the
 * registry's entry for the name, else the Inductor Triton model
 * (query/perfmodel/triton.c) when the name is an Inductor kernel's
 * (triton_poi_*, triton_red_*, triton_per_*) and args carry what that model
 * reads (Input Dims, Input type and integer Concrete Inputs); NULL otherwise.
 * The Triton entry belongs to no sheet family (tl_pm_op_at never lists it);
 * evaluate it with args->name set to the event's name. */
const tl_pm_op *tl_pm_resolve(const char *name, const tl_pm_args *args);
/* 1 when name has an Inductor Triton kernel's prefix. */
int tl_pm_triton_name(const char *name);
/* The params as a Python dict text, {'M': 141, 'bias': True, ...}: the
 * unified summary's perf_params cell. "" becomes None by the caller's rule
 * when nparams == 0. */
void tl_pm_params_repr(tl_buf *b, const tl_pm_result *r);

/* Tables of perf-models.md §3 (lookup on the lower-cased dtype string).
 * Bytes per element: 0 when unknown. Precision: NULL when none. */
int tl_pm_dtype_bytes(const char *dtype);
const char *tl_pm_dtype_precision(const char *dtype);

/* ======================================================================
 * Models on plain shapes, for kernels that carry operand shapes instead of
 * PyTorch args (the JAX report's XLA kernels). Same formulas as the
 * registry's GEMM and convolution models; sizes are exact integers and the
 * results are converted to double once.
 * ==================================================================== */

typedef struct tl_pm_counts {
    double flops;
    int has_bytes; /* 0: element width unknown */
    double bytes;
} tl_pm_counts;

/* batch × (M×K · K×N), plus an added operand C of c_rows × N elements
 * (0: none, 1: a bias vector, M: an accumulated matrix):
 * flops = batch·(2·M·N·K + M·N when C is added),
 * bytes = batch·(M·K + K·N + M·N + c_rows·N)·bpe; bpe 0 means unknown. */
void tl_pm_gemm_counts(int64_t batch, int64_t m, int64_t n, int64_t k, int64_t c_rows, int bpe,
                       tl_pm_counts *out);

/* A (non-transposed) convolution from input x and filter w to output out,
 * each with its own rank: flops = 2·prod(out)·prod(w[1:]) (+ prod(out) with
 * bias), bytes = (prod(x) + prod(w) + out[1] with bias + prod(out))·bpe;
 * bpe 0 means unknown. */
void tl_pm_conv_counts(const int64_t *x, size_t nx, const int64_t *w, size_t nw, const int64_t *out, size_t nout,
                       int bias, int bpe, tl_pm_counts *c);

/* ======================================================================
 * Roofline: GPU arch tables (§6.5) — data/arch/<NAME>.json
 * ==================================================================== */

typedef struct tl_pm_arch {
    char *name;
    int has_mem_bw;
    double mem_bw_gbps;   /* GB/s */
    double memory_gb;     /* informational; NaN when absent */
    size_t npeaks;
    char **peak_spec;     /* Compute Spec keys: "matrix_bf16", ... */
    double *peak_tflops;  /* max_achievable_tflops[key] */
    tl_arena arena;
} tl_pm_arch;

/* Parses an arch JSON object: {"name": ..., "mem_bw_gbps": ...,
 * "max_achievable_tflops": {"matrix_bf16": 708, ...}}; extra keys (source,
 * notes, memory_gb) are allowed. */
int tl_pm_arch_parse(const char *json, size_t n, tl_pm_arch **out, tl_err *err);
int tl_pm_arch_load_file(const char *path, tl_pm_arch **out, tl_err *err);
/* --gpu_arch_platform NAME: loads <datadir>/arch/<NAME>.json (NAME is
 * matched as given, then upper-cased; names with '/' are refused).
 * datadir is the installed data folder (CMake's TL_DATADIR). */
int tl_pm_arch_load_platform(const char *datadir, const char *platform, tl_pm_arch **out,
                             tl_err *err);
/* Platform name of a trace's deviceProperties GPU name ("AMD Instinct
 * MI300X" -> "MI300X", "NVIDIA H100 80GB HBM3" -> "H100_SXM"), or NULL when
 * no shipped table fits (e.g. PCIe parts, whose clocks differ). */
const char *tl_pm_arch_platform_for_gpu(const char *device_name);
void tl_pm_arch_free(tl_pm_arch *arch);
/* Peak TFLOP/s for a Compute Spec; 0 when the key is present, else -1. */
int tl_pm_arch_peak(const tl_pm_arch *arch, const char *compute_spec, double *tflops);

typedef struct tl_pm_roofline {
    int valid;          /* 0: no roofline for this instance (columns missing) */
    double time_us;     /* Roofline Time (µs) = max(compute, memory) */
    const char *bound;  /* "COMPUTE_BOUND" / "MEMORY_BOUND" */
    double pct;         /* Pct Roofline = time / kernel time * 100; NaN if t == 0 */
    double compute_us, memory_us;
} tl_pm_roofline;

/* §6.5: valid only when the arch has a peak for compute_spec, a memory
 * bandwidth, the bytes are known and gflops > 0. */
void tl_pm_roofline_eval(const tl_pm_arch *arch, double gflops, int has_bytes, double bytes,
                         const char *compute_spec, double kernel_time_us, tl_pm_roofline *out);

/* ======================================================================
 * 3. Sheets
 * ==================================================================== */

/* One GPU activity (kernel, memcpy, memset) of an op. */
typedef struct tl_pm_kernel {
    const char *name;
    double dur;         /* raw "dur" in µs, as written in the trace */
    int has_stream;
    int64_t stream;     /* args.stream */
} tl_pm_kernel;

/* One candidate event of a family, filled by the report code: only what
 * cannot be read again from the trace. Its texts (name, args, process and
 * thread names) and its kernels' name, duration and stream are fetched
 * through the caller's tl_pm_source where they are printed or grouped, so
 * an instance costs 48 bytes and 4 bytes a kernel. */
typedef struct tl_pm_extra tl_pm_extra;
typedef struct tl_pm_instance {
    /* kernel handles (tl_pm_source.kernel): the forward set (the event's
     * own subtree) k[0 .. nfwd), then the backward set (the union of its
     * backward events' subtrees) k[nfwd .. nfwd + nbwd), each by start time;
     * NULL when both are empty */
    const int32_t *k;
    const tl_pm_extra *extra;    /* NULL: none of its fields */
    /* busy time of each set in µs (pytorch-report.md §5.3: union of
     * [ts, ts+dur] in double µs), computed by the caller; 0 for an empty
     * set (which the sheet treats as the reference's integer 0) */
    double fwd_time_us, bwd_time_us;
    int32_t row;                 /* the caller's handle of the event */
    uint32_t nfwd, nbwd;
    int8_t has_bwd_events;       /* the event itself has linked backward events */
    int8_t is_recompute;         /* -1 absent, else 0/1 (--detect_recompute) */
} tl_pm_instance;

/* What few instances have (NULL text = absent). */
struct tl_pm_extra {
    const char *output_type;     /* args["Output type"] (Reduce only) */
    const char *annotation;      /* as tl_pm_args.annotation (one text, one address) */
    const char *pseudo_args;     /* as tl_pm_args.pseudo_args */
    /* The event's kernel-overlap fields (--include_overlap_info), read only
     * for the _kl_overlap sheets: set for a kernel launcher whose direct
     * kernels overlap others, else ov_names NULL (the reference's None). */
    const char *ov_names;        /* Python list text of the overlapping names */
    const tl_pm_kernel *ov_details;
    const double *ov_detail_pct; /* each detail's overlap_pct */
    size_t ov_ndetails;
    double ov_pct;               /* NaN: none */
};

/* An instance's event as the models and sheets read it. Strings are
 * borrowed from the caller's trace (one address per distinct text: the
 * sheets' memo keys hold addresses); NULL text = absent. */
typedef struct tl_pm_fields {
    const char *name;
    int64_t uid;                 /* 0-based index in traceEvents */
    const char *process_name;    /* "Unknown" when the trace has no metadata */
    const char *process_label;
    const char *thread_name;
    const char *input_dims, *input_type, *input_strides, *concrete_inputs; /* raw JSON */
    int has_seq;                 /* "Sequence number" */
    int64_t seq;
} tl_pm_fields;

/* How the sheets read the caller's trace, for any instance it passed:
 * name (the event's name), fields (all of tl_pm_fields) and kernel (a
 * kernel handle's name, duration and stream). src is the caller's; the
 * functions may run on a worker thread and must only read. */
typedef struct tl_pm_source {
    const void *src;
    const char *(*name)(const void *src, const tl_pm_instance *in);
    void (*fields)(const void *src, const tl_pm_instance *in, tl_pm_fields *out);
    void (*kernel)(const void *src, int32_t k, tl_pm_kernel *out);
} tl_pm_source;

/* The GPU activities timed for one instance in one mode: a view of its
 * kernel handles (tl_pm_kset_of). */
typedef struct tl_pm_kset {
    double time_us;
    const int32_t *k;
    size_t n;
} tl_pm_kset;

static inline tl_pm_kset tl_pm_kset_of(const tl_pm_instance *in, tl_pm_mode mode)
{
    if (mode == TL_PM_FWD) return (tl_pm_kset){in->fwd_time_us, in->k, in->nfwd};
    return (tl_pm_kset){in->bwd_time_us, in->k ? in->k + in->nfwd : NULL, in->nbwd};
}

/* The model inputs of an instance (every tl_pm_args member but the kernel
 * names, which the caller lists from the forward set). */
void tl_pm_args_of(const tl_pm_fields *f, const tl_pm_instance *in, tl_pm_args *out);
/* The names of an instance's forward kernels in order, read through src,
 * into names[0, in->nfwd): tl_pm_args.kernel_names (transpose detection). */
void tl_pm_kernel_names(const tl_pm_source *src, const tl_pm_instance *in, const char **names);

typedef struct tl_pm_sheet_opts {
    const tl_pm_arch *arch;   /* non-NULL: roofline columns */
    int group_by_num_kernels; /* --group_by_num_kernels: num_kernels key column */
    int detect_recompute;     /* --detect_recompute: is_recompute key column */
    tl_pm_ctx *ctx;           /* ConvBias cache shared across families; NULL: own */
    int kl_overlap;           /* the _kl_overlap twin sheets instead (names
                                 "<sheet>_kl_overlap"): grouped also by the
                                 overlapping kernel names, with their details
                                 summary and overlap_pct statistics, sorted
                                 by the totals of the groups without them */
} tl_pm_sheet_opts;

/* Builds the sheet(s) of one family from its candidate events, given in
 * trace (UID) order — every event whose name tl_pm_find() maps to the
 * family, nested ones included (§9.6.1). Single-sheet families: *fwd gets
 * the sheet named after the family, *bwd NULL. Others: *fwd "<F>_fwd" and
 * *bwd "<F>_bwd" with the set-aside rules (convolution_backward and friends
 * move from _fwd to _bwd; forward conv names are dropped from _bwd). A sheet
 * without rows comes back NULL (no file). Instances whose name is not in
 * the family are ignored. */
int tl_pm_family_sheets(const char *family, const tl_pm_source *src, const tl_pm_instance *inst,
                        size_t n, const tl_pm_sheet_opts *opts, tl_table **fwd, tl_table **bwd,
                        tl_err *err);

/* Lower level: one aggregated sheet from the given instances in one mode,
 * no set-aside rules. *out is NULL when no instance survives. */
int tl_pm_sheet_build(const char *sheet_name, const tl_pm_source *src, const tl_pm_instance *inst,
                      size_t n, tl_pm_mode mode, const tl_pm_sheet_opts *opts, tl_table **out,
                      tl_err *err);

/* Per-instance metrics (§9.6.2), also what unified_perf_summary copies
 * (§9.5.3) for an op with a model or a sole backward op (mode BWD with the
 * forward op's instance). */
typedef struct tl_pm_metrics {
    tl_pm_result r;
    double kernel_time_us;   /* busy time of the mode's kernel set */
    int kernel_time_is_int;  /* empty set: the reference's integer 0 */
    double tflops_s;         /* NaN when kernel time is 0 */
    double tb_s;             /* NaN when bytes unknown or kernel time 0 */
    tl_pm_roofline roof;     /* valid only with an arch */
    size_t num_kernels;
} tl_pm_metrics;

/* Returns as tl_pm_eval; additionally fails (TL_ENOTFOUND) in backward mode
 * when the instance has no backward events. */
int tl_pm_metrics_eval(const tl_pm_op *op, const tl_pm_source *src, const tl_pm_instance *inst,
                       tl_pm_mode mode, const tl_pm_arch *arch, tl_pm_ctx *ctx, tl_arena *a, tl_pm_metrics *m,
                       tl_err *err);
/* The rates of m->r over kernel time t (µs): sets kernel_time_us,
 * tflops_s, tb_s and roof as tl_pm_metrics_eval does, for callers that
 * keep a model result and derive its metrics where they print them. */
void tl_pm_metrics_rates(const tl_pm_arch *arch, double t, tl_pm_metrics *m);

/* ======================================================================
 * Kernel-list summaries (pytorch-report.md §9.10), query/perfmodel/kdetails.c
 * ==================================================================== */

/* Summarises a group's kernel lists (one per row, in row order): positions
 * are aligned against the first non-empty list; lists of another length are
 * skipped. Appends to *summary the Python text of the list of dicts
 * ([{'name': ..., 'stream': 0, 'count': 4, 'total_duration_us':
 * np.float64(113.656), ...}], "[]" when every list is empty) and to *trunc
 * the trunc_kernel_details text; returns 0 when trunc is None (empty
 * summary: leave that cell empty), 1 otherwise. Either buffer may be NULL.
 * Statistics follow NumPy (pairwise sum, population std, median of the two
 * middle values, round-half-even to 2 decimals for trunc). */
int tl_pm_kdetails_summarize(const tl_pm_kernel *const *lists, const size_t *lens, size_t nlists,
                             tl_buf *summary, tl_buf *trunc);
/* The same for overlap-detail lists: pcts[i][p] is entry p's overlap_pct,
 * printed after its stream as the reference's template dict holds it
 * (pcts[i] NULL: none). */
int tl_pm_kdetails_summarize_overlap(const tl_pm_kernel *const *lists, const double *const *pcts,
                                     const size_t *lens, size_t nlists, tl_buf *summary, tl_buf *trunc);

#endif
