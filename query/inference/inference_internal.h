/* inference_internal.h — what the files of query/inference share beyond
 * inference.h; not a public API. */
#ifndef TL_INFERENCE_INTERNAL_H
#define TL_INFERENCE_INTERNAL_H

#include "query/pytorch/pytorch_internal.h"

/* ops_summary_by_category as the inference branch writes it: launchers of
 * category "other" take the op-level family of their direct kernels with
 * the largest total duration (branch_sheets.c). */
tl_table *inf_by_category_regrouped(pyt_ctx *c);

#endif
