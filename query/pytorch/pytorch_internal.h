/* pytorch_internal.h — what the query/pytorch_*.c files share: the report
 * context built once per report from the stored trace (µs times, the tree as
 * a children array with pre-order ranges, GPU classes, launchers, fwd/bwd
 * links, recompute marks, metadata names), the interval arithmetic, the
 * pandas-compatible statistics and small table helpers. Not a public API. */
#ifndef TL_PYTORCH_INTERNAL_H
#define TL_PYTORCH_INTERNAL_H

#include <math.h>
#include <stdint.h>
#include <string.h>
#include "query/pytorch/pytorch.h"
#include "query/core/pyval.h"
#include "query/core/table.h"
#include "query/perfmodel/perfmodel.h"

/* GPU classes of §5.1 (0: not a GPU event). */
enum { PYT_G_NONE = 0, PYT_G_COMP = 1, PYT_G_COMM = 2, PYT_G_MEMCPY = 3 };

/* One GPU activity as the kernel-detail dicts see it. */
typedef struct pyt_kernel {
    int32_t row;
} pyt_kernel;


typedef struct pyt_ctx {
    const tl_trace *t;
    const tl_pyt_opts *o;
    const tl_catreg *cat;
    size_t n;
    int python;                /* python functions in the tree (§4.1) */
    const int32_t *parent;     /* t->parent or t->parent_py (or all -1) */
    int32_t *parent_own;       /* owned fallback when the column is absent */

    uint8_t *gclass;           /* PYT_G_* per event */
    uint8_t *name_comm;        /* per name id: 0 unknown, 1 no, 2 comm kernel */

    /* pre-order over the forest, children in tree order (host children by
     * stable ts, GPU children by UID); subtree of i = order[pos[i] ..
     * end[i]). The children lists themselves are not kept: i's children are
     * order[q] for q = pos[i] + 1, then q = end[order[q]], while q < end[i]
     * (pyt_child_first, pyt_child_next) */
    uint32_t *pos, *end;
    int32_t *order;
    /* GPU events sorted by pre-order position (for subtree queries) */
    int32_t *gpu_by_pos;       /* a subtree's are a contiguous run of it */
    size_t ngpu;

    /* launchers (§4.4), in launcher order */
    size_t nl;
    int32_t *l_row;
    uint32_t *l_koff;          /* nl+1 into l_k */
    int32_t *l_k;              /* direct kernels, UID order */
    double *l_direct, *l_subtree;
    const char **l_cat;        /* op category */
    int32_t *l_first;          /* first direct kernel by ts */

    /* fwd/bwd links (§4.6), few next to the events: (bwd, fwd) pairs
     * sorted by bwd row in fwd_link, (fwd, bwd) by fwd row in bwd_link;
     * looked up with pyt_fwd_of / pyt_bwd_of */
    int32_t (*fwd_link)[2], (*bwd_link)[2];
    size_t nlink;
    /* one bit per event: is the bwd end (has_fwd) / the fwd end (has_bwd)
     * of a link, so that most lookups skip the search */
    uint8_t *has_fwd, *has_bwd;
    /* recompute marks (§4.7), NULL when --detect_recompute is off */
    uint8_t *recompute;

    /* metadata lookup (§2.4), see pyt_meta_names */
    void *meta;

    /* per string id caches */
    const char **tuple_repr;   /* list->tuple repr of an arg text ("" absent) */
    const char **list_repr;    /* repr keeping lists */
    const char **name_cat;     /* registry/pattern category of a name id, or NULL */
    uint8_t *name_cat_done;

    int gpu_only;              /* no cpu_op at all (§4.8) */
    int any_gpu;
    double total_time_ms;      /* first gpu_timeline total_time / 1000 */
    tl_arena arena;
    /* the perf-model instances (perf.c): the perf job's, in row order
     * (found by binary search on their row), and in pm_inst (row ->
     * struct tl_pm_instance *) those of other rows built on demand */
    const struct tl_pm_instance *pm_sorted;
    size_t pm_nsorted;
    tl_imap pm_inst;
    /* perf jobs' instance blocks that pm_sorted points into: the context
     * owns them (perf.c builds each job instance once, in its job's slot) */
    TL_VEC(struct tl_pm_instance *) pm_blocks;
    struct pyt_overlap *overlap;     /* --include_overlap_info sweep, lazily */
    /* kernel-detail summary cache (pyt_kdetails) */
    int kd_init;
    tl_bmap kd_map;
    void *kd_ents;
    size_t kd_n, kd_cap;
    uint8_t *pm_mark;
    /* user annotations sorted by start (perf.c's step annotations), lazily */
    int32_t *ann_rows;
    size_t n_ann;
    int ann_done;
    /* pyt_perf_start's instances are its job's alone, freed with it, and
     * not the context's cache too, which keeps them until the context is
     * freed: for callers that build no unified_perf_summary afterwards (the
     * corpus workbook) */
    int pm_uncached;
    int32_t execute_id;        /* name id of "execute" (-1 none) */
    const struct tl_pm_op **pm_op_of; /* per name id: registry entry (pyt_pm_op), lazily */
    uint8_t *pm_op_done;
    /* args of the events the report reads args of (pyt_args); NULL when
     * tl_trace_args is used directly */
    struct pyt_args_job *args_job;
    /* interned texts (pyt_intern) */
    int intern_init;
    tl_smap intern;
    const char **intern_str;
    size_t nintern, capintern;
} pyt_ctx;

/* The other end of row's link in a sorted pair array, -1 when none. */
static inline int32_t pyt_link_find(const int32_t (*v)[2], size_t n, int32_t row)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (v[mid][0] < row) lo = mid + 1;
        else hi = mid;
    }
    return lo < n && v[lo][0] == row ? v[lo][1] : -1;
}
/* sorts (row, value) pairs by row for pyt_link_find */
void pyt_link_sort(int32_t (*v)[2], size_t n);
/* (row, value) pairs sorted by row: a map over few of the events */
typedef struct pyt_rowmap {
    int32_t (*v)[2];
    size_t n;
} pyt_rowmap;
/* the forward row of backward row `row` / the backward row of forward row `row` */
static inline int32_t pyt_fwd_of(const pyt_ctx *c, int32_t row)
{
    return (c->has_fwd[row >> 3] >> (row & 7)) & 1 ? pyt_link_find(c->fwd_link, c->nlink, row) : -1;
}
static inline int32_t pyt_bwd_of(const pyt_ctx *c, int32_t row)
{
    return (c->has_bwd[row >> 3] >> (row & 7)) & 1 ? pyt_link_find(c->bwd_link, c->nlink, row) : -1;
}


/* Pre-order position of row's first child; row has children while the
 * position is below end[row]. */
static inline uint32_t pyt_child_first(const pyt_ctx *c, int32_t row) { return c->pos[row] + 1; }
/* Position of the next sibling of the child at position q. */
static inline uint32_t pyt_child_next(const pyt_ctx *c, uint32_t q) { return c->end[c->order[q]]; }

/* An event's start in µs as the reference computes it (§3.2): ts/1000.0,
 * the same double on every call; worked out on use rather than kept per
 * event (8 bytes an event, 178 MB of a 10 GB trace). */
static inline double pyt_ts(const pyt_ctx *c, size_t row)
{
    return tl_trace_ts_us(c->t, row);
}

/* Its end: ts + dur/1000.0, likewise (18 MB of a 1 GB rank). Needs the dur
 * column (loaded). */
static inline double pyt_te(const pyt_ctx *c, int32_t row)
{
    return pyt_ts(c, (size_t)row) + tl_trace_dur_us(c->t, (size_t)row);
}

/* ---- context.c ---- */
/* Busy time (length of the union) of the given GPU rows; 0 when n == 0. */
double pyt_busy(const pyt_ctx *c, const int32_t *rows, size_t n);
/* Whether o builds family's sheets (o->perf_families). */
int pyt_family_wanted(const tl_pyt_opts *o, const char *family);
int pyt_ctx_init(pyt_ctx *c, const tl_trace *t, const tl_pyt_opts *o, const tl_catreg *cat,
                 tl_err *err);
void pyt_ctx_free(pyt_ctx *c);
/* Frees the pre-order (pos, end, order) and the GPU rows by position (13
 * bytes an event), leaving their pointers NULL: for the report once the
 * last reader of subtrees is done (unified_perf_summary and the perf
 * instances; kernel_summary, the short-kernel study and coll_analysis
 * read none). */
void pyt_ctx_drop_tree(pyt_ctx *c);
static inline const char *pyt_name(const pyt_ctx *c, int32_t row) { return tl_trace_str(c->t, c->t->name[row]); }
/* A pseudo op put over one launch call (query/inference/pseudo_ops.c; the
 * reference's inject_pseudo_op: every "pseudo_op::" name but the flydsl
 * ones, which it puts above an existing event). The reference leaves the
 * launch call's parent as it was, so the search for a kernel's launcher
 * passes over it, and gives it no duration. */
static inline int pyt_is_pseudo_op(const pyt_ctx *c, int32_t row)
{
    const char *s = pyt_name(c, row);
    return !strncmp(s, "pseudo_op::", 11) && strncmp(s + 11, "moe_flydsl_", 11);
}
static inline double pyt_dur(const pyt_ctx *c, int32_t row) { return tl_trace_dur_us(c->t, (size_t)row); }
static inline int pyt_is_gpu(const pyt_ctx *c, int32_t row) { return c->gclass[row] != PYT_G_NONE; }
int pyt_is_comm_name(const char *s);
/* tl_pm_find of an event's name, cached per name id. */
const struct tl_pm_op *pyt_pm_op(pyt_ctx *c, int32_t row);
/* Raw args JSON of an event, as tl_trace_args. The report needs args only
 * of Reduce-model ops ("Output type") and communication kernels
 * (coll_analysis): pyt_args_start, called before the context is built,
 * copies those out on a worker thread in one pass over the args column's
 * chunks (no decoding of the whole column into one block: 29 MB on owlv2);
 * the first pyt_args call waits for it. Other rows fall back to
 * tl_trace_args. The caller hands the job to the context (c->args_job),
 * which frees it; nothing may use the trace's reader before the first
 * pyt_args or pyt_args_join. */
typedef struct pyt_args_job pyt_args_job;
pyt_args_job *pyt_args_start(const tl_trace *t, const tl_pyt_opts *o);
void pyt_args_free(pyt_args_job *j);
void pyt_args_join(pyt_ctx *c);
/* ms the report waited for the worker (TRACELENS_TIMING) */
double pyt_args_wait_ms(const pyt_ctx *c);
const char *pyt_args(pyt_ctx *c, int32_t row, size_t *len);
int pyt_row_is_comm(pyt_ctx *c, int32_t row);
/* GPU events of the subtree of row (excluding row), appended to out in
 * pre-order; the caller sorts as needed. */
void pyt_subtree_gpu(const pyt_ctx *c, int32_t row, int32_t **out, size_t *n, size_t *cap);
/* Same, ordered as the reference's gpu_events list (runtime UID, then GPU UID). */
void pyt_gpu_events(const pyt_ctx *c, int32_t row, int32_t **out, size_t *n, size_t *cap);
/* Process/thread names of an event (never NULL; "Unknown" when absent). */
void pyt_meta_names(pyt_ctx *c, int32_t row, const char **pname, const char **plabel,
                    const char **tname);
/* Repr text of a stored arg string id: tuples (list->tuple) or lists; NULL
 * when the arg is absent (sid 0). */
const char *pyt_arg_tuple(pyt_ctx *c, uint32_t sid);
const char *pyt_arg_list(pyt_ctx *c, uint32_t sid);
/* §6 category of an event given its first kernel (row or -1). */
const char *pyt_category(pyt_ctx *c, int32_t row, int32_t first_kernel);
const char *pyt_category_name(pyt_ctx *c, const char *name, const char *first_kernel_name);
/* stream of a GPU event, has = 0 when absent */
static inline int pyt_stream(const pyt_ctx *c, int32_t row, int64_t *s)
{
    *s = tl_trace_stream(c->t, row);
    return *s != TL_NONE;
}
/* Stable sort of rows by ts (ties keep the given order). */
void pyt_sort_rows_by_ts(const pyt_ctx *c, int32_t *rows, size_t n);
/* Stable sort of an index array by a double key (descending if desc). */
void pyt_sort_idx_f64(size_t *idx, size_t n, const double *key, int desc);
/* pandas' single-column sort_values(ascending=False): NumPy's unstable
 * introsort, so ties come out in the reference's order (§8 note). idx is
 * the pre-sort row order; key is indexed by idx values. */
void pyt_sort_desc_np(size_t *idx, size_t n, const double *key);
/* The report's single-column descending sort: pandas' order, or stable
 * with --fix_quirks. */
void pyt_sort_desc(const pyt_ctx *c, size_t *idx, size_t n, const double *key);

/* ---- timeline.c ---- */
typedef struct pyt_metrics {
    double total, comp, comm, exposed_comm, memcpy, exposed_memcpy, busy, idle, micro_idle,
        macro_idle;
} pyt_metrics;
int pyt_timeline_metrics(const pyt_ctx *c, const int32_t *rows, size_t n, pyt_metrics *m);
int pyt_sheet_gpu_timeline(pyt_ctx *c, tl_pyt_sheets *out, tl_err *err);

/* ---- ops.c ---- */
int pyt_sheets_ops(pyt_ctx *c, tl_pyt_sheets *out, tl_err *err);
/* Kernel-detail list text helpers (§9.10), shared with unified. */
typedef struct pyt_klist {
    const int32_t *rows;
    size_t n;
} pyt_klist;
/* Summary + trunc texts of a group's kernel lists (rows ordered per list).
 * *trunc NULL when the summary is empty. Returns 0, or -1 when the
 * perf-model module's summariser is not linked in. */
int pyt_kdetails(pyt_ctx *c, const pyt_klist *lists, size_t nlists, tl_arena *a,
                 const char **summary, const char **trunc);

/* ---- kernels.c ---- */
int pyt_sheet_kernel_summary(pyt_ctx *c, tl_pyt_sheets *out, tl_err *err);
int pyt_sheets_short_kernels(pyt_ctx *c, tl_pyt_sheets *out, tl_err *err);

/* ---- unified.c ---- */
int pyt_sheet_unified(pyt_ctx *c, tl_pyt_sheets *out, tl_err *err);

/* ---- perf.c ---- */
int pyt_sheets_perf(pyt_ctx *c, tl_pyt_sheets *out, tl_err *err);
/* The same in steps: start builds the instances; launch builds the family
 * sheets from them on a worker thread (which never touches the context);
 * finish launches if that was not done, waits and pushes them, then the
 * plugin perf sheets. finish with out NULL only discards (error paths).
 * The report launches after unified_perf_summary, so that the sheets'
 * memory and unified_perf_summary's transient do not add up. */
typedef struct pyt_perf_job pyt_perf_job;
pyt_perf_job *pyt_perf_start(pyt_ctx *c);
void pyt_perf_launch(pyt_ctx *c, pyt_perf_job *j);
int pyt_perf_finish(pyt_ctx *c, pyt_perf_job *j, tl_pyt_sheets *out, tl_err *err);
struct tl_pm_instance;
/* The perf-model instance of an event (kernel sets: forward = its subtree,
 * backward = subtrees of its backward events), built once per report. */
const struct tl_pm_instance *pyt_pm_instance(pyt_ctx *c, int32_t row);
/* Its event's fields from the trace, process and thread names left NULL
 * (the perf sheets' source fills those). */
void pyt_pm_fields(const pyt_ctx *c, const tl_pm_instance *in, tl_pm_fields *f);

/* plugin perf models (query/pytorch/plugin.h) */
struct tl_plugin_perf_model;
struct tl_plugin_params;
typedef struct pyt_plugin_metrics {
    const struct tl_plugin_params *params;
    const char *params_text;   /* perf_params dict text, NULL when none */
    double gflops, data_mb, fpb, tflops, tbs, ktime;
    int has_bytes;
    const char *cspec;
} pyt_plugin_metrics;
/* Evaluates a plugin model on an event; -1 when the model declines. */
int pyt_plugin_eval(pyt_ctx *c, const struct tl_plugin_perf_model *pm, int32_t row, pyt_plugin_metrics *m);
int pyt_sheets_plugin_perf(pyt_ctx *c, tl_pyt_sheets *out, tl_err *err);

/* ---- coll.c ---- */
int pyt_sheet_coll(pyt_ctx *c, tl_pyt_sheets *out, tl_err *err);

/* ---- optional.c: overlap sweep, call stacks ---- */
typedef struct pyt_ovpair { int32_t a, b; double lo, hi; } pyt_ovpair;
typedef struct pyt_overlap {
    uint32_t *off;     /* n+1: partners of event i are p[off[i] .. off[i+1]) */
    pyt_ovpair *p;     /* a = the event, b = its partner, [lo, hi) the overlap */
} pyt_overlap;
/* Per-op overlap fields (§5.5). names: interned list text or NULL. */
typedef struct pyt_ovf {
    const char *names;
    tl_pm_kernel *details;
    double *detail_pct;  /* each detail's overlap_pct */
    size_t ndetails;
    double pct;        /* NaN: nothing overlaps */
} pyt_ovf;
double pyt_round2(double x);
pyt_overlap *pyt_overlap_build(pyt_ctx *c);
void pyt_overlap_free(pyt_overlap *ov);
void pyt_overlap_fields(pyt_ctx *c, const pyt_overlap *ov, const int32_t *D, size_t nd, tl_arena *a,
                        pyt_ovf *f);
void pyt_overlap_summary(const pyt_ovf *const *rows, size_t n, tl_arena *a, const char **summary,
                         const char **trunc);
/* perf_overlap.c: row -> launcher index (-1: none; free() it), and the
 * overlap fields of a perf-sheet instance (None unless row is a launcher) */
int32_t *pyt_launcher_index(const pyt_ctx *c);
void pyt_instance_overlap(pyt_ctx *c, const int32_t *lj, int32_t row, tl_pm_instance *in);
/* call_stack_full text of an op's kernels; entry_point frame name */
const char *pyt_call_stack(pyt_ctx *c, const int32_t *gpu, size_t ng, tl_arena *a);
const char *pyt_entry_point(pyt_ctx *c, int32_t op);

/* ---- kstack.c: the inference report's call_stack_full / entry_point ---- */
/* From a group's kernel lists (one per instance, reference order) and its
 * op name; with_stack 0: the kernels carry no stack (synthetic rows).
 * Texts go into a; "Not found" when the group has no kernels. */
void pyt_kernel_call_stack(pyt_ctx *c, const int32_t *const *lists, const size_t *lens, size_t nlists,
                           const char *op, int with_stack, tl_arena *a, const char **stack, const char **entry);

/* ---- util.c: statistics with pandas' algorithms ---- */
typedef struct pyt_stats {
    size_t n;
    double sum, mean, median, std, min, max;
} pyt_stats;
/* Kahan sum, mean, median, sample std (Welford), min, max over the
 * non-NaN values of v (which is sorted in place for the median, so pass a
 * scratch copy). */
void pyt_stats_of(double *v, size_t n, pyt_stats *s);

void pyt_sheets_push(tl_pyt_sheets *s, tl_table *t);
void pyt_sheets_pending(tl_pyt_sheets *s, const char *name);
/* Appends "Percentage (%)" and "Cumulative Percentage (%)" from column vcol. */
void pyt_add_percentages(tl_table *t, size_t vcol);



/* One pointer per distinct text for the whole report (arena-owned). */
const char *pyt_intern(pyt_ctx *c, const char *s);

#endif
