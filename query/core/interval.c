/* interval.c — interval union, intersection and subtraction (see
 * interval.h). One body per operation, instantiated for int64 ns and
 * double µs by the IVAL_OPS macro. */
#include "query/core/interval.h"

#include "base/base.h"

#include <stdlib.h>
#include <string.h>

/* Radix key of a start: unsigned, in the order of the value. */
static inline uint64_t ikey(int64_t s) { return (uint64_t)s ^ 0x8000000000000000ULL; }
static inline uint64_t fkey(double s)
{
    uint64_t b;
    memcpy(&b, &s, 8);
    return b & 0x8000000000000000ULL ? ~b : b | 0x8000000000000000ULL;
}

/* Below this many intervals a stable insertion sort beats the radix
 * passes. */
#define IVAL_SMALL 64

/* IVAL_OPS(P, T, V, KEY) defines the tl_P* functions over type T with
 * endpoint type V; KEY maps a start to its radix key. */
#define IVAL_OPS(P, T, V, KEY)                                                                     \
    /* LSD radix sort by start (11-bit digits, only the passes the key range                       \
     * needs): ranks hold 10^5-10^6 intervals interleaved across streams. */                      \
    static void P##_radix(T *a, size_t n)                                                          \
    {                                                                                              \
        uint64_t mn = KEY(a[0].s), mx = mn;                                                        \
        for (size_t i = 1; i < n; i++) {                                                           \
            uint64_t k = KEY(a[i].s);                                                              \
            if (k < mn) mn = k;                                                                    \
            if (k > mx) mx = k;                                                                    \
        }                                                                                          \
        uint64_t range = mx - mn;                                                                  \
        T *tmp = tl_xmalloc(n * sizeof *tmp), *src = a, *dst = tmp;                                \
        size_t cnt[2048];                                                                          \
        for (int shift = 0; shift < 64 && (range >> shift); shift += 11) {                         \
            memset(cnt, 0, sizeof cnt);                                                            \
            for (size_t i = 0; i < n; i++) cnt[((KEY(src[i].s) - mn) >> shift) & 2047]++;         \
            size_t sum = 0;                                                                        \
            for (int d = 0; d < 2048; d++) {                                                       \
                size_t c = cnt[d];                                                                 \
                cnt[d] = sum;                                                                      \
                sum += c;                                                                          \
            }                                                                                      \
            for (size_t i = 0; i < n; i++) dst[cnt[((KEY(src[i].s) - mn) >> shift) & 2047]++] = src[i]; \
            T *t = src;                                                                            \
            src = dst, dst = t;                                                                    \
        }                                                                                          \
        if (src != a) memcpy(a, src, n * sizeof *a);                                               \
        free(tmp);                                                                                 \
    }                                                                                              \
                                                                                                   \
    void P##_sort(T *v, size_t n)                                                                  \
    {                                                                                              \
        size_t i = 1;                                                                              \
        while (i < n && v[i - 1].s <= v[i].s) i++;                                                 \
        if (i >= n) return;                                                                        \
        if (n > IVAL_SMALL) {                                                                      \
            P##_radix(v, n);                                                                       \
            return;                                                                                \
        }                                                                                          \
        for (; i < n; i++) {                                                                       \
            T x = v[i];                                                                            \
            size_t j = i;                                                                          \
            while (j > 0 && v[j - 1].s > x.s) { v[j] = v[j - 1]; j--; }                            \
            v[j] = x;                                                                              \
        }                                                                                          \
    }                                                                                              \
                                                                                                   \
    size_t P##_union_sorted(T *v, size_t n)                                                        \
    {                                                                                              \
        if (!n) return 0;                                                                          \
        size_t k = 0;                                                                              \
        for (size_t i = 1; i < n; i++) {                                                           \
            if (v[i].s <= v[k].e) {                                                                \
                if (v[i].e > v[k].e) v[k].e = v[i].e;                                              \
            } else {                                                                               \
                v[++k] = v[i];                                                                     \
            }                                                                                      \
        }                                                                                          \
        return k + 1;                                                                              \
    }                                                                                              \
                                                                                                   \
    V P##_union_len(T *v, size_t n)                                                                \
    {                                                                                              \
        if (!n) return 0;                                                                          \
        P##_sort(v, n);                                                                            \
        V total = 0, s = v[0].s, e = v[0].e;                                                       \
        for (size_t i = 1; i < n; i++) {                                                           \
            if (v[i].s <= e) {                                                                     \
                if (v[i].e > e) e = v[i].e;                                                        \
            } else {                                                                               \
                total += e - s;                                                                    \
                s = v[i].s;                                                                        \
                e = v[i].e;                                                                        \
            }                                                                                      \
        }                                                                                          \
        return total + (e - s);                                                                    \
    }                                                                                              \
                                                                                                   \
    V P##_len(const T *v, size_t n)                                                                \
    {                                                                                              \
        V t = 0;                                                                                   \
        for (size_t i = 0; i < n; i++) t += v[i].e - v[i].s;                                       \
        return t;                                                                                  \
    }                                                                                              \
                                                                                                   \
    V P##_inter_len(const T *a, size_t na, const T *b, size_t nb)                                  \
    {                                                                                              \
        V t = 0;                                                                                   \
        size_t i = 0, j = 0;                                                                       \
        while (i < na && j < nb) {                                                                 \
            V s = a[i].s > b[j].s ? a[i].s : b[j].s;                                               \
            V e = a[i].e < b[j].e ? a[i].e : b[j].e;                                               \
            if (e > s) t += e - s;                                                                 \
            if (a[i].e < b[j].e) i++;                                                              \
            else j++;                                                                              \
        }                                                                                          \
        return t;                                                                                  \
    }                                                                                              \
                                                                                                   \
    size_t P##_sub(const T *a, size_t na, const T *b, size_t nb, T *out)                           \
    {                                                                                              \
        size_t m = 0, j = 0;                                                                       \
        for (size_t i = 0; i < na; i++) {                                                          \
            V s = a[i].s, e = a[i].e;                                                              \
            while (j < nb && b[j].e <= s) j++;                                                     \
            for (size_t k = j; k < nb && b[k].s < e; k++) {                                        \
                if (b[k].s > s) out[m++] = (T){s, b[k].s};                                         \
                if (b[k].e > s) s = b[k].e;                                                        \
                if (s >= e) break;                                                                 \
            }                                                                                      \
            if (s < e) out[m++] = (T){s, e};                                                       \
        }                                                                                          \
        return m;                                                                                  \
    }                                                                                              \
                                                                                                   \
    void P##_interleave(const T *a, size_t na, const T *b, size_t nb, T *out)                      \
    {                                                                                              \
        size_t i = 0, j = 0, k = 0;                                                                \
        while (i < na && j < nb) out[k++] = b[j].s < a[i].s ? b[j++] : a[i++];                     \
        while (i < na) out[k++] = a[i++];                                                          \
        while (j < nb) out[k++] = b[j++];                                                          \
    }

IVAL_OPS(tl_ival, tl_ival, int64_t, ikey)
IVAL_OPS(tl_fival, tl_fival, double, fkey)
