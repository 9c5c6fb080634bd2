/* stats.h — the report arithmetic, defined once: sums, means, standard
 * deviations, medians and quantiles computed with the algorithms of
 * pandas 1.5 / NumPy 1.24, the versions that produce the reference's
 * numbers. Matching the algorithm (summation order, compensation, update
 * formula), not only the math, keeps the last digits equal.
 *
 * Two families of sums exist because the reference uses both:
 *  - pairwise: NumPy's np.add.reduce (np.sum, np.mean, np.std and pandas'
 *    Series.sum/mean/std without bottleneck);
 *  - Kahan: pandas' compensated group-by and rolling sums and means.
 * Edge cases are those of the library each family reproduces: an empty
 * pairwise sum is 0.0, a sum starts from +0.0 so all -0.0 inputs give 0.0,
 * inf + -inf is NaN, and counts at or below ddof give NaN. */
#ifndef TL_STATS_H
#define TL_STATS_H

#include <stddef.h>
#include <stdint.h>

/* ---- NumPy pairwise family (NaN propagates, as in NumPy) ---- */

/* np.add.reduce over a contiguous float64 array: chunks of 8192 (NumPy's
 * buffer size) added in order to the identity 0.0, each chunk summed
 * pairwise: blocks of up to 128 with 8 accumulators, longer ranges split
 * near the middle on a multiple of 8. */
double tl_sum_pairwise(const double *v, size_t n);
/* pandas Series.sum(): NaN counts as 0.0 in place (positions, and so the
 * pairwise order, are kept). */
double tl_sum_pairwise_skipna(const double *v, size_t n);
/* np.mean: pairwise sum / n; NaN when n == 0. */
double tl_mean_pairwise(const double *v, size_t n);
/* np.std(ddof=ddof): two passes, the squared deviations pairwise-summed and
 * divided by n - ddof; NaN when n <= ddof. pandas Series.std() is the
 * same arithmetic with ddof = 1 over the non-NaN values when bottleneck is
 * not used (with bottleneck its sums are sequential). */
double tl_std_pairwise(const double *v, size_t n, int ddof);

/* ---- pandas Kahan family (NaN skipped, as pandas' group-by) ---- */

/* Running compensated sum, pandas' group_sum/group_mean/rolling sum
 * update. Like pandas 1.5, no reset of the compensation: once an infinite
 * value is followed by another value the sum is NaN. */
typedef struct tl_kahan {
    double sum, comp;
} tl_kahan;

static inline void tl_kahan_add(tl_kahan *k, double x)
{
    if (x != x) return;
    double y = x - k->comp, t = k->sum + y;
    k->comp = t - k->sum - y;
    k->sum = t;
}

/* Group sum over the non-NaN values of v (0.0 when there are none). */
double tl_sum_kahan(const double *v, size_t n);
/* Group mean: the Kahan sum / the number of non-NaN values (NaN if none). */
double tl_mean_kahan(const double *v, size_t n);

/* ---- pandas Welford family (group_var) ---- */

/* Running count, mean and sum of squared deviations in pandas' group_var
 * update order; NaN values are skipped. */
typedef struct tl_welford {
    int64_t n;
    double mean, m2;
} tl_welford;

void tl_welford_add(tl_welford *w, double x);
/* Chan's combination of two partial states (b folded into a). */
void tl_welford_merge(tl_welford *a, const tl_welford *b);
/* sqrt(m2 / (n - ddof)); NaN when n <= ddof. */
double tl_welford_std(const tl_welford *w, int ddof);
/* Group std of v's non-NaN values in order (pandas' GroupBy.std). */
double tl_std_welford(const double *v, size_t n, int ddof);

/* ---- order statistics (v is reordered; no NaNs; NaN when n == 0) ---- */

/* Median: the middle value, or the two middle values averaged when n is
 * even (pandas' group median and np.median agree on it). Quickselect:
 * linear on average, where a sort per group was a tenth of a workbook. */
double tl_median_f64(double *v, size_t n);
/* The same over int64 values (the two middle values averaged as doubles). */
double tl_median_i64(int64_t *v, size_t n);
/* np.quantile(v, q, method="linear") for q in [0, 1]: virtual index
 * (n - 1) * q between the neighbouring order statistics a <= b, then
 * NumPy's _lerp: a + (b - a) * g, or b - (b - a) * (1 - g) when g >= 0.5. */
double tl_quantile_linear(double *v, size_t n, double q);

/* ---- pandas' sort_values of one float column (npsort.c) ---- */

/* Reorders idx[0..n) as DataFrame.sort_values(key, ascending) orders the
 * rows idx lists (key is indexed by the values of idx): NumPy's
 * argsort(kind="quicksort"), unstable above 16 rows, through pandas'
 * nargsort (descending = reverse, sort, reverse); NaN keys last in their
 * order. */
void tl_pd_sort_values(size_t *idx, size_t n, const double *key, int ascending);

#endif
