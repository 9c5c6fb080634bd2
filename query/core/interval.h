/* interval.h — union, intersection and subtraction over interval arrays
 * (spec pytorch-report.md §5, formats.md §1.6): the busy, exposed and idle
 * times of every report family. Two arithmetics, the same algorithms:
 * tl_ival holds exact int64 ns, tl_fival the reference's double µs
 * endpoints.
 *
 * Conventions, shared by both:
 *  - an interval is [s, e) with length e - s;
 *  - sorting is stable by start (equal starts keep their input order, as
 *    Python's sorted does);
 *  - union: in start order, an interval whose start is <= the running end
 *    extends it, so touching intervals ([0,5) and [5,9)) merge into one;
 *  - union lengths are summed merged interval by merged interval in start
 *    order, which keeps double results bit-identical to the reference;
 *  - intersection and subtraction take merged lists (the output of a
 *    union) and yield no zero-length pieces.
 * Functions named _sorted require input sorted by start; the others sort
 * (reordering the caller's array). */
#ifndef TL_INTERVAL_H
#define TL_INTERVAL_H

#include <stddef.h>
#include <stdint.h>

typedef struct tl_ival { int64_t s, e; } tl_ival;
typedef struct tl_fival { double s, e; } tl_fival;

/* Stable sort by start; linear when already sorted (the common case:
 * events arrive in start order per stream). */
void tl_ival_sort(tl_ival *v, size_t n);
void tl_fival_sort(tl_fival *v, size_t n);

/* Merges sorted v in place into its union; returns the merged count. */
size_t tl_ival_union_sorted(tl_ival *v, size_t n);
size_t tl_fival_union_sorted(tl_fival *v, size_t n);

/* Sorts v and returns the length of its union (v is sorted, not merged). */
int64_t tl_ival_union_len(tl_ival *v, size_t n);
double tl_fival_union_len(tl_fival *v, size_t n);

/* Sum of the lengths of v, in order. */
int64_t tl_ival_len(const tl_ival *v, size_t n);
double tl_fival_len(const tl_fival *v, size_t n);

/* Length of the intersection of two merged lists. */
int64_t tl_ival_inter_len(const tl_ival *a, size_t na, const tl_ival *b, size_t nb);
double tl_fival_inter_len(const tl_fival *a, size_t na, const tl_fival *b, size_t nb);

/* out = a - b for merged lists; out has room for na + nb; returns its
 * count. */
size_t tl_ival_sub(const tl_ival *a, size_t na, const tl_ival *b, size_t nb, tl_ival *out);
size_t tl_fival_sub(const tl_fival *a, size_t na, const tl_fival *b, size_t nb, tl_fival *out);

/* out = sorted a and b interleaved in start order, a's first on equal
 * starts (out has room for na + nb): the input of a union of two sorted
 * sets without a second sort. */
void tl_ival_interleave(const tl_ival *a, size_t na, const tl_ival *b, size_t nb, tl_ival *out);
void tl_fival_interleave(const tl_fival *a, size_t na, const tl_fival *b, size_t nb, tl_fival *out);

#endif
