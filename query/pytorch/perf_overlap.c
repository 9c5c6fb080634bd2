/* perf_overlap.c — the overlap fields of the perf-sheet instances, for the
 * per-family _kl_overlap sheets of --include_overlap_info (GEMM_kl_overlap,
 * SDPA_fwd_kl_overlap, ...). The reference copies them from the event,
 * where only its kernel-launcher pass set them (overlapping kernel names,
 * details and overlap_pct of the launcher's direct kernels); an event that
 * launches no kernel directly has None there. */
#include "query/pytorch/pytorch_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

int32_t *pyt_launcher_index(const pyt_ctx *c)
{
    int32_t *lj = tl_xmalloc((c->n ? c->n : 1) * sizeof *lj);
    for (size_t i = 0; i < c->n; i++) lj[i] = -1;
    for (size_t j = 0; j < c->nl; j++) lj[c->l_row[j]] = (int32_t)j;
    return lj;
}

void pyt_instance_overlap(pyt_ctx *c, const int32_t *lj, int32_t row, tl_pm_instance *in)
{
    int32_t j = lj[row];
    if (j < 0) return;
    if (!c->overlap) c->overlap = pyt_overlap_build(c);
    /* the direct kernels by time, as the launcher pass orders them */
    size_t dn = c->l_koff[j + 1] - c->l_koff[j];
    int32_t *d = tl_xmalloc((dn ? dn : 1) * sizeof *d);
    memcpy(d, c->l_k + c->l_koff[j], dn * sizeof *d);
    pyt_sort_rows_by_ts(c, d, dn);
    pyt_ovf f;
    pyt_overlap_fields(c, c->overlap, d, dn, &c->arena, &f);
    free(d);
    if (!f.names) return;
    /* a new extra record: an instance copied from the context's cache
     * shares the cached one's */
    tl_pm_extra *x = tl_arena_alloc(&c->arena, sizeof *x);
    if (in->extra) *x = *in->extra;
    else *x = (tl_pm_extra){.ov_pct = NAN};
    x->ov_names = f.names;
    x->ov_details = f.details;
    x->ov_detail_pct = f.detail_pct;
    x->ov_ndetails = f.ndetails;
    x->ov_pct = f.pct;
    in->extra = x;
}
