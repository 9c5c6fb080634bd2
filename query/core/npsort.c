/* npsort.c — NumPy's argsort(kind="quicksort") and pandas' nargsort.
 *
 * pandas' sort_values of one float column argsorts with NumPy's introsort
 * (median-of-3 quicksort, insertion sort below 17 items, heapsort past the
 * depth limit): unstable for more than 16 rows, so the reference's row
 * order among tied values comes from exactly this code path (NumPy 1.24,
 * scalar), reproduced here. Descending, pandas reverses the values, sorts
 * ascending and reverses the result. */
#include "query/core/stats.h"
#include "base/base.h"

#include <math.h>
#include <stdlib.h>

static int np_less(double a, double b) { return a < b || (b != b && a == a); }

static void np_aheapsort(const double *v, size_t *tosort, size_t n)
{
    size_t *a = tosort - 1, i, j, l, tmp;
    for (l = n >> 1; l > 0; --l) {
        tmp = a[l];
        for (i = l, j = l << 1; j <= n;) {
            if (j < n && np_less(v[a[j]], v[a[j + 1]])) j += 1;
            if (np_less(v[tmp], v[a[j]])) { a[i] = a[j]; i = j; j += j; }
            else break;
        }
        a[i] = tmp;
    }
    for (; n > 1;) {
        tmp = a[n];
        a[n] = a[1];
        n -= 1;
        for (i = 1, j = 2; j <= n;) {
            if (j < n && np_less(v[a[j]], v[a[j + 1]])) j++;
            if (np_less(v[tmp], v[a[j]])) { a[i] = a[j]; i = j; j += j; }
            else break;
        }
        a[i] = tmp;
    }
}

#define NP_SWAP(a, b) do { size_t t_ = (a); (a) = (b); (b) = t_; } while (0)

static void np_aquicksort(const double *v, size_t *tosort, size_t num)
{
    if (num < 2) return;
    size_t *pl = tosort, *pr = tosort + num - 1;
    size_t *stack[128], **sptr = stack;
    int depth[64], *psdepth = depth;
    int cdepth = 0;
    for (size_t u = num; u >>= 1;) cdepth++;
    cdepth *= 2;
    size_t *pm, *pi, *pj, *pk, vi;
    double vp;
    for (;;) {
        if (cdepth < 0) {
            np_aheapsort(v, pl, (size_t)(pr - pl) + 1);
            goto stack_pop;
        }
        while ((pr - pl) > 15) {
            pm = pl + ((pr - pl) >> 1);
            if (np_less(v[*pm], v[*pl])) NP_SWAP(*pm, *pl);
            if (np_less(v[*pr], v[*pm])) NP_SWAP(*pr, *pm);
            if (np_less(v[*pm], v[*pl])) NP_SWAP(*pm, *pl);
            vp = v[*pm];
            pi = pl;
            pj = pr - 1;
            NP_SWAP(*pm, *pj);
            for (;;) {
                do { ++pi; } while (np_less(v[*pi], vp));
                do { --pj; } while (np_less(vp, v[*pj]));
                if (pi >= pj) break;
                NP_SWAP(*pi, *pj);
            }
            pk = pr - 1;
            NP_SWAP(*pi, *pk);
            if (pi - pl < pr - pi) {
                *sptr++ = pi + 1;
                *sptr++ = pr;
                pr = pi - 1;
            } else {
                *sptr++ = pl;
                *sptr++ = pi - 1;
                pl = pi + 1;
            }
            *psdepth++ = --cdepth;
        }
        for (pi = pl + 1; pi <= pr; ++pi) {
            vi = *pi;
            vp = v[vi];
            pj = pi;
            pk = pi - 1;
            while (pj > pl && np_less(vp, v[*pk])) *pj-- = *pk--;
            *pj = vi;
        }
    stack_pop:
        if (sptr == stack) break;
        pr = *(--sptr);
        pl = *(--sptr);
        cdepth = *(--psdepth);
    }
}

void tl_pd_sort_values(size_t *idx, size_t n, const double *key, int ascending)
{
    if (n < 2) return;
    /* nargsort(na_position="last"): NaN positions out, in order */
    size_t nn = 0, nnan = 0;
    double *v = tl_xmalloc(n * sizeof *v);
    size_t *vi = tl_xmalloc(n * sizeof *vi), *nan_idx = tl_xmalloc(n * sizeof *nan_idx);
    for (size_t i = 0; i < n; i++) {
        double k = key[idx[i]];
        if (isnan(k)) nan_idx[nnan++] = idx[i];
    }
    /* the non-NaN items, reversed when descending */
    for (size_t j = 0; j < n; j++) {
        size_t i = ascending ? j : n - 1 - j;
        double k = key[idx[i]];
        if (isnan(k)) continue;
        v[nn] = k;
        vi[nn++] = idx[i];
    }
    size_t *ord = tl_xmalloc((nn ? nn : 1) * sizeof *ord);
    for (size_t i = 0; i < nn; i++) ord[i] = i;
    np_aquicksort(v, ord, nn);
    /* indexer = vi[ord] (reversed when descending); NaN positions appended */
    for (size_t i = 0; i < nn; i++) idx[i] = vi[ord[ascending ? i : nn - 1 - i]];
    for (size_t i = 0; i < nnan; i++) idx[nn + i] = nan_idx[i];
    free(ord);
    free(v);
    free(vi);
    free(nan_idx);
}
