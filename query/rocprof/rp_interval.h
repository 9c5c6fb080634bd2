/* rp_interval.h — the interval merge the rocprof report uses for busy time
 * (spec/formats.md §1.6): sort by start, extend the current interval while
 * the next one starts at or before its end, sum the merged lengths. Two
 * flavours because the report has two arithmetics: exact int64 ns (default)
 * and the reference's float µs endpoints (--reference-units). Kept under a
 * tl_rp_ prefix until the shared interval module replaces them. */
#ifndef TL_RP_INTERVAL_H
#define TL_RP_INTERVAL_H

#include <stddef.h>
#include <stdint.h>

typedef struct tl_rp_ival { int64_t s, e; } tl_rp_ival;
typedef struct tl_rp_fival { double s, e; } tl_rp_fival;

/* Sorts v in place and returns the total length of the union. */
int64_t tl_rp_union_len(tl_rp_ival *v, size_t n);
double tl_rp_union_len_f(tl_rp_fival *v, size_t n);
/* out = the sorted a and b merged (out has room for na + nb); a and b must
 * be sorted, e.g. by a union_len call. Saves a second full sort for the
 * union of two sets. */
void tl_rp_merge_sorted(const tl_rp_ival *a, size_t na, const tl_rp_ival *b, size_t nb, tl_rp_ival *out);
void tl_rp_merge_sorted_f(const tl_rp_fival *a, size_t na, const tl_rp_fival *b, size_t nb, tl_rp_fival *out);

#endif
