/* inference_internal.h — what the files of query/inference share beyond
 * inference.h; not a public API. */
#ifndef TL_INFERENCE_INTERNAL_H
#define TL_INFERENCE_INTERNAL_H

#include "query/pytorch/pytorch_internal.h"

/* ops_summary_by_category as the inference branch writes it: launchers of
 * category "other" take the op-level family of their direct kernels with
 * the largest total duration (branch_sheets.c). */
tl_table *inf_by_category_regrouped(pyt_ctx *c);

/* t's tree (both kinds of parent) pinned (tl_build_pin_parent) on the
 * host events of b, which hold t's events as rows 0 .. t->n - 1: the
 * reference adds to a built tree and never rebuilds it, and a merged
 * trace's tree is not the one its times give. */
void inf_pin_source_tree(const tl_trace *t, tl_build *b);

/* For a cut of a merged trace (the rows keep holds, copied into b in
 * order, tl_split_build): t's tree pinned on the copied host events, each
 * under its nearest kept ancestor; a merged trace's tree is not the one
 * its times give. Other traces are left to the tree builder. */
void inf_pin_kept_tree(const tl_trace *t, tl_build *b, const uint8_t *keep);

/* The times (ns: ts, dur per row, interleaved) a Kineto export writes so
 * that a reader nesting by time rebuilds t's tree: a merged trace's copies
 * (the subtrees of its CaptureRoot events) all share the graph launch's
 * span, so each is given a nested slice of it in depth-first order, one
 * counter step of at least 1 ns each; every other row keeps its own. NULL
 * when t has no CaptureRoot. */
int64_t *inf_export_times(const tl_trace *t);

/* The reference's UID of an event appended to t (its len(tree.events)):
 * the "uid_end" label of a merged or derived trace, else every
 * traceEvents element the catalog counts; at least one past every
 * event's uid. */
uint32_t inf_uid_end(const tl_trace *t);

/* Finishes a derived trace whose events the caller copied from t into b
 * (derived.c): t's flows, metadata events, top-level keys and steps are
 * copied, the tree is built, and out gets the build with its catalog facts:
 * id, path "<t's path>#<suffix>", labels labels_open + ,"uid_end":"<uid_end>"
 * (inf_uid_end of the derived trace),"parent":"<t's id>"}.
 * Frees b on failure. */
int inf_derived_finish(const tl_trace *t, tl_build *b, uint32_t uid_end, uint64_t id, const char *suffix, const char *labels_open,
                       tl_derived *out, tl_err *err);

/* Calls fn with each member of the catalog's "metadata" object (the
 * source's top-level keys), key and raw JSON value, in order (split.c). */
void inf_catalog_metadata_each(const tl_trace *t,
                               void (*fn)(void *ctx, const char *k, size_t kn, const char *v, size_t vn), void *ctx);

#endif
