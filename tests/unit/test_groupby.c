/* test_groupby.c — query/core/groupby against pandas 1.5.3: each expected
 * list is Series.groupby(keys, sort=...).<agg>().tolist() for the keys and
 * values above it. Cases: empty input, one group, NaN values (a group with
 * none left), inf and -inf, first-occurrence versus sorted key order for
 * text and integer keys, and fixed-size record keys. */
#include "tests/unit/tl_test.h"
#include "query/core/groupby.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

#define CHECK_SAME(a, b) do { double a_ = (a), b_ = (b); tl_test_checks++; \
    if (!(a_ == b_ ? signbit(a_) == signbit(b_) : (isnan(a_) && isnan(b_)))) { tl_test_failures++; \
    fprintf(stderr, "%s:%d: %s == %.17g, expected %.17g\n", __FILE__, __LINE__, #a, a_, b_); } } while (0)

/* The expected aggregates of one case, one list per aggregate. */
typedef struct expect {
    int64_t count[4];
    double sum[4], mean[4], std[4], min[4], max[4], median[4], first[4];
} expect;

static void check_aggs(const tl_groups *g, const double *v, const expect *e)
{
    int64_t cnt[4];
    double out[8][4];
    tl_groups_count(g, v, cnt);
    tl_groups_sum(g, v, out[0]);
    tl_groups_mean(g, v, out[1]);
    tl_groups_std(g, v, 1, out[2]);
    tl_groups_min(g, v, out[3]);
    tl_groups_max(g, v, out[4]);
    tl_groups_median(g, v, out[5]);
    tl_groups_first(g, v, out[6]);
    for (size_t k = 0; k < g->ngroups; k++) {
        CHECK_EQ_I(cnt[k], e->count[k]);
        CHECK_SAME(out[0][k], e->sum[k]);
        CHECK_SAME(out[1][k], e->mean[k]);
        CHECK_SAME(out[2][k], e->std[k]);
        CHECK_SAME(out[3][k], e->min[k]);
        CHECK_SAME(out[4][k], e->max[k]);
        CHECK_SAME(out[5][k], e->median[k]);
        CHECK_SAME(out[6][k], e->first[k]);
    }
}

static void group_texts(tl_groups *g, const char *const *keys, size_t n)
{
    size_t lens[16];
    for (size_t i = 0; i < n; i++) lens[i] = strlen(keys[i]);
    tl_groupby_bytes(g, keys, lens, n);
}

static void test_empty(void)
{
    tl_groups g;
    tl_groupby_bytes(&g, NULL, NULL, 0);
    CHECK_EQ_I(g.ngroups, 0);
    CHECK_EQ_I(g.start[0], 0);
    double sum[1] = {7.0};
    /* pd.Series([], dtype=float).groupby([]).sum().tolist() == [] */
    tl_groups_sum(&g, NULL, sum);
    CHECK_SAME(sum[0], 7.0);
    tl_groups_free(&g);
    tl_groupby_i64(&g, NULL, 0);
    tl_groups_sort_i64(&g, NULL);
    CHECK_EQ_I(g.ngroups, 0);
    tl_groups_free(&g);
}

static void test_one_group(void)
{
    const char *keys[] = {"a", "a", "a", "a"};
    double v[] = {1.5, 2.25, -3.0, 4.0};
    tl_groups g;
    group_texts(&g, keys, 4);
    CHECK_EQ_I(g.ngroups, 1);
    CHECK_EQ_I(g.start[1], 4);
    for (uint32_t i = 0; i < 4; i++) CHECK_EQ_I(g.rows[i], i);
    /* keys ['a'] * 4, values [1.5, 2.25, -3.0, 4.0] */
    expect e = {{4}, {4.75}, {1.1875}, {2.981715110469141}, {-3.0}, {4.0}, {1.875}, {1.5}};
    check_aggs(&g, v, &e);
    tl_groups_free(&g);
}

static void test_nan(void)
{
    const char *keys[] = {"b", "a", "b", "a", "c"};
    double v[] = {1.0, NAN, 3.0, NAN, NAN};
    tl_groups g;
    group_texts(&g, keys, 5);
    CHECK_EQ_I(g.ngroups, 3);
    /* keys ['b','a','b','a','c'], values [1, nan, 3, nan, nan], sort=False:
     * groups b, a, c; pandas' sum of no values is 0.0 (min_count=0) */
    expect e = {{2, 0, 0},
                {4.0, 0.0, 0.0},
                {2.0, NAN, NAN},
                {1.4142135623730951, NAN, NAN},
                {1.0, NAN, NAN},
                {3.0, NAN, NAN},
                {2.0, NAN, NAN},
                {1.0, NAN, NAN}};
    check_aggs(&g, v, &e);
    tl_groups_free(&g);
}

static void test_inf(void)
{
    const char *keys[] = {"x", "x", "y", "y", "z", "w", "w"};
    double v[] = {INFINITY, 1.0, -INFINITY, INFINITY, INFINITY, -INFINITY, -2.0};
    tl_groups g;
    group_texts(&g, keys, 7);
    /* keys ['x','x','y','y','z','w','w'], values [inf, 1, -inf, inf, inf,
     * -inf, -2], sort=False: pandas 1.5's Kahan sum turns inf followed by a
     * value into NaN; the median of [-inf, inf] is NaN */
    expect e = {{2, 2, 1, 2},
                {NAN, NAN, INFINITY, NAN},
                {NAN, NAN, INFINITY, NAN},
                {NAN, NAN, NAN, NAN},
                {1.0, -INFINITY, INFINITY, -INFINITY},
                {INFINITY, INFINITY, INFINITY, -2.0},
                {INFINITY, NAN, INFINITY, -INFINITY},
                {INFINITY, -INFINITY, INFINITY, -INFINITY}};
    check_aggs(&g, v, &e);
    tl_groups_free(&g);
}

/* keys ['b','a','c','a','b'] (or [5, -2, 7, -2, 5]), values
 * [0.1, 0.2, 0.3, 0.4, 0.5] */
static const double ORDER_V[] = {0.1, 0.2, 0.3, 0.4, 0.5};
/* sort=False: groups b, a, c */
static const expect ORDER_FIRST = {{2, 2, 1},
                                   {0.6, 0.6000000000000001, 0.3},
                                   {0.3, 0.30000000000000004, 0.3},
                                   {0.282842712474619, 0.1414213562373095, NAN},
                                   {0.1, 0.2, 0.3},
                                   {0.5, 0.4, 0.3},
                                   {0.3, 0.30000000000000004, 0.3},
                                   {0.1, 0.2, 0.3}};
/* sort=True: groups a, b, c (and -2, 5, 7) */
static const expect ORDER_SORTED = {{2, 2, 1},
                                    {0.6000000000000001, 0.6, 0.3},
                                    {0.30000000000000004, 0.3, 0.3},
                                    {0.1414213562373095, 0.282842712474619, NAN},
                                    {0.2, 0.1, 0.3},
                                    {0.4, 0.5, 0.3},
                                    {0.30000000000000004, 0.3, 0.3},
                                    {0.2, 0.1, 0.3}};

static void test_order_text(void)
{
    const char *keys[] = {"b", "a", "c", "a", "b"};
    size_t lens[] = {1, 1, 1, 1, 1};
    tl_groups g;
    tl_groupby_bytes(&g, keys, lens, 5);
    uint32_t first_ids[] = {0, 1, 2, 1, 0};
    for (size_t i = 0; i < 5; i++) CHECK_EQ_I(g.group_of[i], first_ids[i]);
    check_aggs(&g, ORDER_V, &ORDER_FIRST);
    tl_groups_sort_bytes(&g, keys, lens);
    uint32_t sorted_ids[] = {1, 0, 2, 0, 1}, members[] = {1, 3, 0, 4, 2};
    for (size_t i = 0; i < 5; i++) CHECK_EQ_I(g.group_of[i], sorted_ids[i]);
    for (size_t i = 0; i < 5; i++) CHECK_EQ_I(g.rows[i], members[i]);
    CHECK_EQ_I(g.start[1], 2);
    CHECK_EQ_I(g.start[2], 4);
    check_aggs(&g, ORDER_V, &ORDER_SORTED);
    tl_groups_free(&g);

    /* keys ['ab','a','b','ab'], sort=True: groups a, ab, b (a prefix first) */
    const char *pk[] = {"ab", "a", "b", "ab"};
    group_texts(&g, pk, 4);
    size_t plens[] = {2, 1, 1, 2};
    tl_groups_sort_bytes(&g, pk, plens);
    uint32_t pids[] = {1, 0, 2, 1};
    for (size_t i = 0; i < 4; i++) CHECK_EQ_I(g.group_of[i], pids[i]);
    tl_groups_free(&g);
}

static void test_order_int(void)
{
    int64_t keys[] = {5, -2, 7, -2, 5};
    tl_groups g;
    tl_groupby_i64(&g, keys, 5);
    check_aggs(&g, ORDER_V, &ORDER_FIRST);
    tl_groups_sort_i64(&g, keys);
    check_aggs(&g, ORDER_V, &ORDER_SORTED);
    tl_groups_free(&g);
}

static void test_fixed(void)
{
    /* the text case again with two-field records standing for 'b','a','c' */
    struct { int32_t a, b; } keys[] = {{1, 2}, {2, 1}, {1, 3}, {2, 1}, {1, 2}};
    tl_groups g;
    tl_groupby_fixed(&g, keys, sizeof *keys, 5);
    CHECK_EQ_I(g.ngroups, 3);
    check_aggs(&g, ORDER_V, &ORDER_FIRST);
    tl_groups_free(&g);
}

/* More rows than one hash table's first size: ids stay first-occurrence. */
static void test_many(void)
{
    enum { N = 5000, K = 701 };
    static int64_t keys[N];
    for (size_t i = 0; i < N; i++) keys[i] = (int64_t)((i * 7919) % K) - 300;
    tl_groups g;
    tl_groupby_i64(&g, keys, N);
    CHECK_EQ_I(g.ngroups, K);
    int ok = 1;
    for (size_t i = 0; i < K; i++) ok &= g.group_of[i] == i && g.rows[g.start[i]] == i;
    CHECK(ok);
    tl_groups_sort_i64(&g, keys);
    for (size_t k = 0; k + 1 < K; k++) ok &= keys[g.rows[g.start[k]]] < keys[g.rows[g.start[k + 1]]];
    for (size_t k = 0; k < K; k++)
        for (size_t j = g.start[k] + 1; j < g.start[k + 1]; j++) ok &= g.rows[j - 1] < g.rows[j];
    CHECK(ok);
    tl_groups_free(&g);
}

int main(void)
{
    test_empty();
    test_one_group();
    test_nan();
    test_inf();
    test_order_text();
    test_order_int();
    test_fixed();
    test_many();
    return tl_test_done("groupby");
}
