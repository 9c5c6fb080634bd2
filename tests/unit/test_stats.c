/* test_stats.c — query/core/stats against values computed with pandas
 * 1.5.3 / NumPy 1.24.2 (the expression that gave each literal is in the
 * comment above it), with the edge cases: inf, -inf, NaN, -0.0, empty,
 * one element, and a pairwise sum longer than one 128-element block. The
 * quickselect median is also checked against sorting on random ties. */
#include "tests/unit/tl_test.h"
#include "query/core/stats.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#define CHECK_SAME(a, b) do { double a_ = (a), b_ = (b); tl_test_checks++; \
    if (!(a_ == b_ ? signbit(a_) == signbit(b_) : (isnan(a_) && isnan(b_)))) { tl_test_failures++; \
    fprintf(stderr, "%s:%d: %s == %.17g, expected %.17g\n", __FILE__, __LINE__, #a, a_, b_); } } while (0)

/* a_i = 0.1*i + 0.001*(i%7), i = 1..300 */
static double v300[300];

static void fill300(void)
{
    for (int i = 1; i <= 300; i++) v300[i - 1] = 0.1 * i + 1e-3 * (i % 7);
}

static void test_pairwise(void)
{
    fill300();
    /* np.sum(v300) == pd.Series(v300).sum(); sequential sum(v300) is 4515.903000000001 */
    CHECK_SAME(tl_sum_pairwise(v300, 300), 4515.903);
    /* np.mean(v300) */
    CHECK_SAME(tl_mean_pairwise(v300, 300), 15.05301);
    /* np.std(v300) */
    CHECK_SAME(tl_std_pairwise(v300, 300, 0), 8.660235119011878);
    /* pd.Series(v300).std() with compute.use_bottleneck=False, == np.std(v300, ddof=1);
     * bottleneck's sequential sums give 8.674705029050656 */
    CHECK_SAME(tl_std_pairwise(v300, 300, 1), 8.674705029050658);
    double s3[] = {1.5, 2.25, -3.0};
    /* np.sum([1.5, 2.25, -3.0]); np.std(...); pd.Series(...).std() */
    CHECK_SAME(tl_sum_pairwise(s3, 3), 0.75);
    CHECK_SAME(tl_std_pairwise(s3, 3, 0), 2.318404623873926);
    CHECK_SAME(tl_std_pairwise(s3, 3, 1), 2.839454172900137);
    /* w_i = 0.3*i, i = 0..19, w[3] = NaN: pd.Series(w).sum() (NaN as 0 in
     * place); np.sum of the 19 compacted values is 56.1 */
    double w[20];
    for (int i = 0; i < 20; i++) w[i] = 0.3 * i;
    w[3] = NAN;
    CHECK_SAME(tl_sum_pairwise_skipna(w, 20), 56.099999999999994);
    CHECK(isnan(tl_sum_pairwise(w, 20)));
    /* np.sum([-0.0]) == np.sum([-0.0, -0.0]) == 0.0 (the identity is +0.0) */
    double nz[] = {-0.0, -0.0};
    CHECK_SAME(tl_sum_pairwise(nz, 1), 0.0);
    CHECK_SAME(tl_sum_pairwise(nz, 2), 0.0);
    /* np.sum([]) == 0.0; np.mean([]) and pd.Series([]).std() are NaN */
    CHECK_SAME(tl_sum_pairwise(NULL, 0), 0.0);
    CHECK_SAME(tl_sum_pairwise_skipna(NULL, 0), 0.0);
    CHECK(isnan(tl_mean_pairwise(NULL, 0)));
    CHECK(isnan(tl_std_pairwise(NULL, 0, 1)));
    /* pd.Series([5.0]).std() is NaN, np.std([5.0]) is 0.0 */
    double one = 5.0;
    CHECK(isnan(tl_std_pairwise(&one, 1, 1)));
    CHECK_SAME(tl_std_pairwise(&one, 1, 0), 0.0);
    /* np.sum([inf, -inf]) is NaN; np.sum([1.0, inf]) is inf; np.std([1.0, inf]) is NaN */
    double inf2[] = {INFINITY, -INFINITY}, finf[] = {1.0, INFINITY};
    CHECK(isnan(tl_sum_pairwise(inf2, 2)));
    CHECK_SAME(tl_sum_pairwise(finf, 2), INFINITY);
    CHECK(isnan(tl_std_pairwise(finf, 2, 0)));
    /* b_i = 1e3 * ((i * 2654435761 mod 2^32) % 1000003) / 1000003, i < 100000:
     * np.sum(b), np.mean(b), np.std(b). np.sum adds 8192-element chunks, each
     * summed pairwise: one pairwise tree over all of b gives 50002407.329778016,
     * the sequential sum 50002407.329777986 */
    enum { BIG = 100000 };
    double *big = malloc(BIG * sizeof *big);
    for (unsigned i = 0; i < BIG; i++) big[i] = 1e3 * (double)((i * 2654435761u) % 1000003u) / 1000003.0;
    CHECK_SAME(tl_sum_pairwise(big, BIG), 50002407.32977801);
    CHECK_SAME(tl_mean_pairwise(big, BIG), 500.0240732977801);
    CHECK_SAME(tl_std_pairwise(big, BIG, 0), 288.6752592773452);
    free(big);
}

/* the block structure itself: sequential below 8, 8 accumulators up to 128 */
static void test_pairwise_blocks(void)
{
    double a[5] = {0.1, 0.2, 0.3, 0.4, 0.5};
    CHECK_SAME(tl_sum_pairwise(a, 5), (((0.1 + 0.2) + 0.3) + 0.4) + 0.5);
    double b[9] = {1e16, 1, 1, 1, 1, 1, 1, 1, 1};
    double want = ((1e16 + 1.0) + (1.0 + 1.0)) + ((1.0 + 1.0) + (1.0 + 1.0));
    want += 1.0;
    CHECK_SAME(tl_sum_pairwise(b, 9), want);
    double c[16];
    for (int i = 0; i < 16; i++) c[i] = 0.1 * i;
    double r[8];
    for (int j = 0; j < 8; j++) r[j] = c[j] + c[8 + j];
    CHECK_SAME(tl_sum_pairwise(c, 16), ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7])));
}

static void test_kahan(void)
{
    fill300();
    /* pd.DataFrame({'g': 0, 'x': v300}).groupby('g').x.sum() / .mean() */
    CHECK_SAME(tl_sum_kahan(v300, 300), 4515.903);
    CHECK_SAME(tl_mean_kahan(v300, 300), 15.05301);
    /* the same group sum over [1.0, 1e100, 1.0, -1e100]: 0.0 */
    double big[] = {1.0, 1e100, 1.0, -1e100};
    CHECK_SAME(tl_sum_kahan(big, 4), 0.0);
    /* group sum of [inf, 1.0, 2.0] and [1.0, inf, 2.0] is NaN in pandas 1.5
     * (the compensation becomes NaN), of [1.0, 2.0, inf] is inf; mean alike */
    double a[] = {INFINITY, 1.0, 2.0}, b[] = {1.0, INFINITY, 2.0}, c[] = {1.0, 2.0, INFINITY};
    CHECK(isnan(tl_sum_kahan(a, 3)));
    CHECK(isnan(tl_sum_kahan(b, 3)));
    CHECK(isnan(tl_mean_kahan(a, 3)));
    CHECK_SAME(tl_sum_kahan(c, 3), INFINITY);
    CHECK_SAME(tl_mean_kahan(c, 3), INFINITY);
    /* group sum of [inf, -inf]: NaN */
    double d[] = {INFINITY, -INFINITY};
    CHECK(isnan(tl_sum_kahan(d, 2)));
    /* group sum / mean of [nan, 1.0]: 1.0 (NaN skipped) */
    double e[] = {NAN, 1.0};
    CHECK_SAME(tl_sum_kahan(e, 2), 1.0);
    CHECK_SAME(tl_mean_kahan(e, 2), 1.0);
    /* group sum / mean of [-0.0]: 0.0 */
    double nz = -0.0;
    CHECK_SAME(tl_sum_kahan(&nz, 1), 0.0);
    CHECK_SAME(tl_mean_kahan(&nz, 1), 0.0);
    /* empty group: sum 0.0, mean NaN; all-NaN alike */
    double nn = NAN;
    CHECK_SAME(tl_sum_kahan(NULL, 0), 0.0);
    CHECK(isnan(tl_mean_kahan(NULL, 0)));
    CHECK_SAME(tl_sum_kahan(&nn, 1), 0.0);
    CHECK(isnan(tl_mean_kahan(&nn, 1)));
    /* the running form is the same update */
    tl_kahan k = {0, 0};
    for (int i = 0; i < 300; i++) tl_kahan_add(&k, v300[i]);
    CHECK_SAME(k.sum, 4515.903);
}

static void test_welford(void)
{
    fill300();
    /* pd.DataFrame({'g': 0, 'x': v300}).groupby('g').x.std() */
    CHECK_SAME(tl_std_welford(v300, 300, 1), 8.674705029050656);
    /* groupby std of [1.0, nan, 2.0, 4.0], ddof=1 and ddof=0 */
    double a[] = {1.0, NAN, 2.0, 4.0};
    CHECK_SAME(tl_std_welford(a, 4, 1), 1.5275252316519465);
    CHECK_SAME(tl_std_welford(a, 4, 0), 1.247219128924647);
    /* groupby std of [1.0, inf] and [inf, 1.0, 2.0]: NaN; of [-0.0, -0.0]: 0.0 */
    double b[] = {1.0, INFINITY}, c[] = {INFINITY, 1.0, 2.0}, nz[] = {-0.0, -0.0};
    CHECK(isnan(tl_std_welford(b, 2, 1)));
    CHECK(isnan(tl_std_welford(c, 3, 1)));
    CHECK_SAME(tl_std_welford(nz, 2, 1), 0.0);
    /* one value or none: NaN for ddof=1 */
    CHECK(isnan(tl_std_welford(a, 1, 1)));
    CHECK(isnan(tl_std_welford(NULL, 0, 1)));
    /* merging two halves gives the same std to rounding */
    tl_welford x = {0, 0, 0}, y = {0, 0, 0};
    for (int i = 0; i < 150; i++) tl_welford_add(&x, v300[i]);
    for (int i = 150; i < 300; i++) tl_welford_add(&y, v300[i]);
    tl_welford_merge(&x, &y);
    CHECK_EQ_I(x.n, 300);
    CHECK_NEAR(tl_welford_std(&x, 1), 8.674705029050656, 1e-12);
}

static uint64_t rng = 0x9e3779b97f4a7c15ULL;
static uint64_t next(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

static int cmp_dbl(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static void test_median_random(void)
{
    double v[257], s[257];
    for (int trial = 0; trial < 2000; trial++) {
        size_t n = 1 + next() % 257;
        unsigned spread = 1 + (unsigned)(next() % 50); /* few distinct values: ties */
        for (size_t i = 0; i < n; i++) v[i] = s[i] = (double)(next() % spread) * 0.25 - 3;
        qsort(s, n, sizeof *s, cmp_dbl);
        double want = n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
        double got = tl_median_f64(v, n);
        tl_test_checks++;
        if (got != want) {
            tl_test_failures++;
            fprintf(stderr, "median of %zu values: %g, expected %g\n", n, got, want);
            return;
        }
    }
}

static void test_order_stats(void)
{
    fill300();
    double w[300];
    /* pd.Series(v300).median() */
    memcpy(w, v300, sizeof w);
    CHECK_SAME(tl_median_f64(w, 300), 15.0535);
    /* np.quantile(v300, 0.37) and 0.9 (linear) */
    memcpy(w, v300, sizeof w);
    CHECK_SAME(tl_quantile_linear(w, 300, 0.37), 11.165220000000001);
    memcpy(w, v300, sizeof w);
    CHECK_SAME(tl_quantile_linear(w, 300, 0.9), 27.014100000000003);
    /* pd.Series([1., 2, 3, 4]).quantile(0.9) == np.quantile(..., 0.9) */
    double q4[] = {4.0, 1.0, 3.0, 2.0};
    CHECK_SAME(tl_quantile_linear(q4, 4, 0.9), 3.7);
    /* pd.Series([4.0, 1.0, 3.0, 2.0]).median(); pd.Series([9, 2, 4, 2]).median() */
    double m4[] = {4.0, 1.0, 3.0, 2.0};
    CHECK_SAME(tl_median_f64(m4, 4), 2.5);
    int64_t i4[] = {9, 2, 4, 2}, i3[] = {5, 1, 3};
    CHECK_SAME(tl_median_i64(i4, 4), 3.0);
    CHECK_SAME(tl_median_i64(i3, 3), 3.0);
    /* np.quantile([1, 2, inf], 0.5) is NaN: 2 + (inf - 2) * 0 */
    double qi[] = {INFINITY, 1.0, 2.0};
    CHECK(isnan(tl_quantile_linear(qi, 3, 0.5)));
    /* groupby median of [-0.0, -0.0]: -0.0 (np.median gives 0.0: it adds the
     * middle pair to 0.0); pd.Series([-0.0]).median(): -0.0;
     * np.quantile([-0.0], 0.0) and 1.0: -0.0 */
    double nz[] = {-0.0, -0.0}, nz1 = -0.0;
    CHECK_SAME(tl_median_f64(nz, 2), -0.0);
    CHECK_SAME(tl_median_f64(&nz1, 1), -0.0);
    CHECK_SAME(tl_quantile_linear(&nz1, 1, 0.0), -0.0);
    CHECK_SAME(tl_quantile_linear(&nz1, 1, 1.0), -0.0);
    /* one value; empty: NaN */
    double one = 7;
    CHECK_SAME(tl_median_f64(&one, 1), 7.0);
    CHECK_SAME(tl_quantile_linear(&one, 1, 0.5), 7.0);
    CHECK(isnan(tl_median_f64(NULL, 0)));
    CHECK(isnan(tl_median_i64(NULL, 0)));
    CHECK(isnan(tl_quantile_linear(NULL, 0, 0.5)));
    /* -inf and inf are ordinary order statistics */
    double ii[] = {INFINITY, -INFINITY, 3.0};
    CHECK_SAME(tl_median_f64(ii, 3), 3.0);
}

int main(void)
{
    test_pairwise();
    test_pairwise_blocks();
    test_kahan();
    test_welford();
    test_median_random();
    test_order_stats();
    return tl_test_done("stats");
}
