/* groupby.h — group rows by a key and aggregate a column per group, the
 * pandas DataFrame.groupby(...).agg(...) of the reports, written once.
 *
 * Grouping: the caller gives one key per row (text, an integer, or a
 * fixed-size record of bytes such as a struct of interned pointers with
 * its padding zeroed). Groups are numbered in order of first occurrence,
 * as pandas' groupby(sort=False); tl_groups_sort renumbers them in key
 * order, as sort=True. The members of each group are kept in row order
 * (CSR layout), which is the order pandas' cythonised aggregations visit
 * them and so fixes the last digits of sums and deviations.
 *
 * Aggregation: a float64 column indexed by row number, with pandas'
 * group-by semantics (query/core/stats.h does the arithmetic): NaN values
 * are skipped; count counts the others; sum is the Kahan sum (0.0 for a
 * group with no values); mean, std (Welford), min, max, median and first
 * are NaN for a group with no values, std also for one value with
 * ddof = 1. */
#ifndef TL_GROUPBY_H
#define TL_GROUPBY_H

#include <stddef.h>
#include <stdint.h>

typedef struct tl_groups {
    size_t nrows, ngroups;
    uint32_t *group_of; /* [nrows] the group id of each row */
    size_t *start;      /* [ngroups + 1] group g holds rows[start[g] .. start[g + 1]) */
    uint32_t *rows;     /* [nrows] row numbers, grouped, in row order within a group */
} tl_groups;

/* Row i's key is the text keys[i][0..lens[i]) (any bytes). */
void tl_groupby_bytes(tl_groups *g, const char *const *keys, const size_t *lens, size_t n);
/* Row i's key is keys[i]. */
void tl_groupby_i64(tl_groups *g, const int64_t *keys, size_t n);
/* Row i's key is the keylen bytes at (const char *)keys + i * keylen. */
void tl_groupby_fixed(tl_groups *g, const void *keys, size_t keylen, size_t n);
void tl_groups_free(tl_groups *g);

/* Renumbers the groups in the order cmp(ctx, a, b) gives on their first
 * rows (a and b are row numbers; negative when a's key sorts first);
 * groups that cmp calls equal keep their first-occurrence order. */
typedef int (*tl_row_cmp)(const void *ctx, size_t a, size_t b);
void tl_groups_sort(tl_groups *g, tl_row_cmp cmp, const void *ctx);
/* groupby(sort=True) order for text keys: byte order, a prefix first
 * (Python's order of str for UTF-8 text). keys and lens as grouped. */
void tl_groups_sort_bytes(tl_groups *g, const char *const *keys, const size_t *lens);
/* groupby(sort=True) order for integer keys: ascending. */
void tl_groups_sort_i64(tl_groups *g, const int64_t *keys);

/* Per-group aggregates of col (col[r] is row r's value); out has
 * ngroups entries. */
void tl_groups_count(const tl_groups *g, const double *col, int64_t *out);
void tl_groups_sum(const tl_groups *g, const double *col, double *out);
void tl_groups_mean(const tl_groups *g, const double *col, double *out);
void tl_groups_std(const tl_groups *g, const double *col, int ddof, double *out);
void tl_groups_min(const tl_groups *g, const double *col, double *out);
void tl_groups_max(const tl_groups *g, const double *col, double *out);
void tl_groups_median(const tl_groups *g, const double *col, double *out);
void tl_groups_first(const tl_groups *g, const double *col, double *out);

#endif
