/* split_internal.h — what the files of the reference-compatible splitter
 * (split_annot.c, split_steady.c, split_compat.c) share; not a public API. */
#ifndef TL_SPLIT_INTERNAL_H
#define TL_SPLIT_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "query/inference/inference.h"

/* One step as the reference's IterationAnnotation.iter_details() reads its
 * annotation (the six keys of execution_details.json's "steps", in that
 * order), plus the c_sq / g_sq it derives them from. */
typedef struct tl_sc_detail {
    int64_t batch_size, num_requests, context_requests, context_sum, generation_requests, generation_sum;
    int64_t c_sq, g_sq;
} tl_sc_detail;

/* Fills d from an annotation name; 1 when one of the reference's formats
 * matched, 0 for a generic step (one decode-equivalent request). */
int sc_annotation(const char *name, tl_sc_detail *d);
/* 1: the name matches a primary pattern (ITERATION_PATTERNS), 2: a backup
 * one (ITERATION_BACKUP_PATTERNS), 0: neither. */
int sc_pattern_tier(const char *name);
/* Does the name match any iteration pattern (either tier)? */
int sc_known_annotation(const char *name);

static inline int sc_has_context(const tl_sc_detail *d) { return d->context_requests > 0; }
static inline int sc_has_generation(const tl_sc_detail *d) { return d->generation_requests > 0; }
static inline int sc_is_mixed(const tl_sc_detail *d) { return sc_has_context(d) && sc_has_generation(d); }
static inline int sc_is_decode_only(const tl_sc_detail *d) { return sc_has_generation(d) && !sc_has_context(d); }
static inline int sc_is_prefill_only(const tl_sc_detail *d) { return sc_has_context(d) && !sc_has_generation(d); }

/* A region or window of steps: [start, end) indexes into the step list. */
typedef struct sc_range {
    long start, end;
} sc_range;

/* identify_steady_state_regions: the regions (malloc'd, *n of them), with
 * the reference's messages on log. */
sc_range *sc_steady_regions(const tl_sc_detail *d, size_t n, long num_steps, FILE *log, size_t *nregions);

typedef enum { SC_MIXED, SC_DECODE_ONLY, SC_MAX_PREFILLDECODE } sc_mode;
/* The CONC / OSL / R options of the mixed window (has_*: given). */
typedef struct sc_target {
    int has_conc, has_osl, has_r;
    long conc;
    double osl, r;
} sc_target;
/* find_steady_state_window: the window [start, end) of steps (end <=
 * start: none) in the largest region, with the reference's messages. */
sc_range sc_steady_window(const tl_sc_detail *d, size_t n, long num_steps, const sc_range *regions, size_t nregions,
                          sc_mode mode, const sc_target *tg, FILE *log);

/* tracelens split --steady-state: the three windows over the steps' step
 * indexes, as TraceLens_split_inference_trace --find-steady-state picks
 * them (num_steps 32, no messages); w gets up to 3, the count returned. */
size_t sc_steps_steady(const tl_steps *s, tl_window *w);

/* The regions as Python prints a list of tuples: "[(0, 5), (7, 9)]". */
void sc_print_regions(FILE *log, const sc_range *r, size_t n);

/* ---- extraction (split_extract.c) ---- */
typedef struct sc_pair {
    int64_t key;
    size_t row;
} sc_pair;

/* The trace's rows indexed for extraction (preprocess_trace). */
typedef struct sc_index {
    const tl_trace *t;
    double *ts, *end;     /* µs per row, as the reference reads them */
    size_t *by_ts;        /* rows in ts order */
    sc_pair *gpu, *flow;  /* GPU-category rows by correlation, s/f flows with a ts by id */
    size_t ngpu, nflow;
    size_t *meta;         /* flows without a ts: every piece gets them */
    size_t nmeta;
    int ts_int, dur_int;  /* the trace's times are JSON integers */
} sc_index;
void sc_index_build(sc_index *x, const tl_trace *t);
void sc_index_free(sc_index *x);

/* What extract_iteration gathers for a piece. */
typedef struct sc_piece {
    TL_VEC(tl_kx_item) items;
    TL_VEC(int64_t) batch; /* "Input Dims"[0][0] of the batch-marking ops */
    size_t gpu_events;
    double gpu_dur, gpu_busy; /* µs: the sum of each root's GPU span; the sum of GPU durations */
} sc_piece;
/* An iteration root: an annotation row with its µs interval, or for the
 * generic fallback the first row of a repeated block with the block's. */
typedef struct sc_root {
    size_t row;
    double ts, end;
} sc_root;
/* The piece of roots[0..n). */
void sc_extract(const sc_index *x, const sc_root *roots, size_t n, sc_piece *p);
/* find_iteration_roots_generic (split_generic.c): in the host call tree
 * with python functions, the first node (breadth first from each thread's
 * top) whose GPU-bearing children repeat a name sequence 3+ times over
 * more than half of them; one root per repetition. Messages on log;
 * returns the count, *out malloc'd. */
size_t sc_generic_roots(const sc_index *x, FILE *log, sc_root **out);
void sc_piece_free(sc_piece *p);
/* CPython's list(set(v)) order of v[0..n) into out; returns the count. */
size_t sc_py_set_order(const int64_t *v, size_t n, int64_t *out);

#endif
