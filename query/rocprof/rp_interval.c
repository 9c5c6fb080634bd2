/* rp_interval.c — interval union lengths for the rocprof report (see
 * rp_interval.h). */
#include "query/rocprof/rp_interval.h"

#include <stdlib.h>

static int cmp_i(const void *a, const void *b)
{
    const tl_rp_ival *x = a, *y = b;
    if (x->s != y->s) return x->s < y->s ? -1 : 1;
    return (x->e > y->e) - (x->e < y->e);
}

static int cmp_f(const void *a, const void *b)
{
    const tl_rp_fival *x = a, *y = b;
    if (x->s != y->s) return x->s < y->s ? -1 : 1;
    return (x->e > y->e) - (x->e < y->e);
}

/* Already sorted is the common case (dispatches come in start order on one
 * queue); checking first avoids qsort's cost on large traces. */
int64_t tl_rp_union_len(tl_rp_ival *v, size_t n)
{
    if (!n) return 0;
    for (size_t i = 1; i < n; i++)
        if (cmp_i(&v[i - 1], &v[i]) > 0) {
            qsort(v, n, sizeof *v, cmp_i);
            break;
        }
    int64_t total = 0, s = v[0].s, e = v[0].e;
    for (size_t i = 1; i < n; i++) {
        if (v[i].s <= e) {
            if (v[i].e > e) e = v[i].e;
        } else {
            total += e - s;
            s = v[i].s;
            e = v[i].e;
        }
    }
    return total + (e - s);
}

/* The reference sums merged lengths in merge order; the same order here
 * keeps the float result bit-identical. */
double tl_rp_union_len_f(tl_rp_fival *v, size_t n)
{
    if (!n) return 0;
    for (size_t i = 1; i < n; i++)
        if (cmp_f(&v[i - 1], &v[i]) > 0) {
            qsort(v, n, sizeof *v, cmp_f);
            break;
        }
    double total = 0, s = v[0].s, e = v[0].e;
    for (size_t i = 1; i < n; i++) {
        if (v[i].s <= e) {
            if (v[i].e > e) e = v[i].e;
        } else {
            total += e - s;
            s = v[i].s;
            e = v[i].e;
        }
    }
    return total + (e - s);
}

void tl_rp_merge_sorted(const tl_rp_ival *a, size_t na, const tl_rp_ival *b, size_t nb, tl_rp_ival *out)
{
    size_t i = 0, j = 0, k = 0;
    while (i < na && j < nb) out[k++] = cmp_i(&b[j], &a[i]) < 0 ? b[j++] : a[i++];
    while (i < na) out[k++] = a[i++];
    while (j < nb) out[k++] = b[j++];
}

void tl_rp_merge_sorted_f(const tl_rp_fival *a, size_t na, const tl_rp_fival *b, size_t nb, tl_rp_fival *out)
{
    size_t i = 0, j = 0, k = 0;
    while (i < na && j < nb) out[k++] = cmp_f(&b[j], &a[i]) < 0 ? b[j++] : a[i++];
    while (i < na) out[k++] = a[i++];
    while (j < nb) out[k++] = b[j++];
}
