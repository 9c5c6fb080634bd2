/* for_codec.h — frame-of-reference narrowing of 64-bit integer chunks (the
 * store's chunk encoding 2, see store.c and docs/ARCHITECTURE.md).
 *
 * A chunk of int64 values whose range (largest minus smallest, ignoring
 * INT64_MIN, the integer columns' "missing" value TL_NONE) fits in 1, 2 or
 * 4 bytes is stored as the smallest value (the base) and each value's
 * offset from it in that width; the all-ones offset stands for INT64_MIN.
 * Timestamps, durations, external ids, sequence numbers, correlations, pids
 * and tids of a 64k-row chunk all fit in 4 bytes or fewer, and widening
 * them back runs at memory speed, several times faster than LZ4 decodes
 * the same columns. */
#ifndef TL_FOR_CODEC_H
#define TL_FOR_CODEC_H

#include <stddef.h>
#include <stdint.h>

/* Width (1, 2 or 4) and base for x[0..n), or 0 when the range needs 8
 * bytes. A chunk of only INT64_MIN gets width 1 and base 0. */
int tl_for_plan(const int64_t *x, size_t n, int64_t *base);
/* Writes the n offsets of width w (little-endian) to out (n * w bytes). */
void tl_for_narrow(const int64_t *x, size_t n, int w, int64_t base, unsigned char *out);
/* The inverse: n values into dst. src may be exactly dst's last n * w
 * bytes (decoding in place: offset i is read before value i is written,
 * and value i, bytes 8i .. 8i + 8, ends before offset i + 1 begins). */
void tl_for_widen(int64_t *dst, const unsigned char *src, size_t n, int w, int64_t base);

#endif
