/* inference_internal.h — what the files of query/inference share beyond
 * inference.h; not a public API. */
#ifndef TL_INFERENCE_INTERNAL_H
#define TL_INFERENCE_INTERNAL_H

#include "query/pytorch/pytorch_internal.h"

/* ops_summary_by_category as the inference branch writes it: launchers of
 * category "other" take the op-level family of their direct kernels with
 * the largest total duration (branch_sheets.c). */
tl_table *inf_by_category_regrouped(pyt_ctx *c);

/* Finishes a derived trace whose events the caller copied from t into b
 * (derived.c): t's flows, metadata events, top-level keys and steps are
 * copied, the tree is built, and out gets the build with its catalog facts:
 * id, path "<t's path>#<suffix>", labels labels_open + ,"parent":"<t's id>"}.
 * Frees b on failure. */
int inf_derived_finish(const tl_trace *t, tl_build *b, uint64_t id, const char *suffix, const char *labels_open,
                       tl_derived *out, tl_err *err);

/* Calls fn with each member of the catalog's "metadata" object (the
 * source's top-level keys), key and raw JSON value, in order (split.c). */
void inf_catalog_metadata_each(const tl_trace *t,
                               void (*fn)(void *ctx, const char *k, size_t kn, const char *v, size_t vn), void *ctx);

#endif
