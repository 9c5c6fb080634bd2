/* phases.h — inference phase analysis (prefill vs decode) for the PyTorch
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
 * Steps are also what `tracelens split` cuts along (query/split.h). */
#ifndef TL_PHASES_H
#define TL_PHASES_H

#include <stddef.h>
#include <stdint.h>
#include "trace.h"
#include "table.h"
#include "pytorch_report.h"

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

/* Kernel category of C7 (branch `Kernel category`) from a kernel name. */
const char *tl_kernel_category(const char *kernel_name);

/* ---- step annotations (C8) ---------------------------------------------- */

typedef enum { TL_STEP_MIXED = 0, TL_STEP_PREFILL_ONLY = 1, TL_STEP_DECODE_ONLY = 2 } tl_step_kind;
const char *tl_step_kind_name(int k); /* "prefilldecode", "prefill_only", "decode_only" */

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
 * `inference_steps` (when steps exist), `ops_summary_prefill`,
 * `ops_summary_decode`, and with kernel_summary `kernel_summary_prefill`,
 * `kernel_summary_decode` (each only when it has rows). GPU-only traces get
 * only the kernel sheets. po: the report's options (categories, etc.). */
int tl_phase_sheets(const tl_trace *t, const tl_pyt_opts *po, const tl_phase_opts *o,
                    tl_pyt_sheets *out, tl_err *err);

#endif
