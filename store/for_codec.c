/* for_codec.c — frame-of-reference narrowing of int64 chunks (for_codec.h). */
#include "store/for_codec.h"

#include <string.h>

/* TL_NO_SIMD, or a target without SSE2 (aarch64), widens with the scalar
 * loops of tl_for_widen alone; they give the same values. */
#if defined(__SSE2__) && !defined(TL_NO_SIMD)
#define TL_FOR_SSE2 1
#include <emmintrin.h>
#else
#define TL_FOR_SSE2 0
#endif

int tl_for_plan(const int64_t *x, size_t n, int64_t *base)
{
    int64_t lo = INT64_MAX, hi = INT64_MIN;
    int any = 0;
    for (size_t i = 0; i < n; i++) {
        int64_t v = x[i];
        if (v == INT64_MIN) continue;
        any = 1;
        if (v < lo) lo = v;
        if (v > hi) hi = v;
    }
    *base = any ? lo : 0;
    if (!any) return 1;
    uint64_t range = (uint64_t)hi - (uint64_t)lo; /* all-ones is kept for INT64_MIN */
    if (range < 0xFFu) return 1;
    if (range < 0xFFFFu) return 2;
    if (range < 0xFFFFFFFFu) return 4;
    return 0;
}

void tl_for_narrow(const int64_t *x, size_t n, int w, int64_t base, unsigned char *out)
{
    for (size_t i = 0; i < n; i++) {
        uint32_t u = x[i] == INT64_MIN ? 0xFFFFFFFFu : (uint32_t)((uint64_t)x[i] - (uint64_t)base);
        if (w == 1) {
            out[i] = (unsigned char)u;
        } else if (w == 2) {
            uint16_t h = (uint16_t)u;
            memcpy(out + 2 * i, &h, 2);
        } else {
            memcpy(out + 4 * i, &u, 4);
        }
    }
}

#if TL_FOR_SSE2
/* SSE2: four 4-byte offsets (or eight 2-byte ones) at a time, zero-extended
 * to 64-bit lanes, added to the base, the all-ones ones replaced by
 * INT64_MIN. In place (src inside dst's tail) each block's loads come
 * before its stores, and its stores end before the next block's offsets. */
static size_t widen4_sse2(int64_t *dst, const unsigned char *src, size_t n, int64_t base)
{
    const __m128i b = _mm_set1_epi64x(base), none = _mm_set1_epi64x(INT64_MIN), zero = _mm_setzero_si128();
    const __m128i ones = _mm_set1_epi32(-1);
    size_t i = 0;
    for (; i + 4 <= n; i += 4) {
        __m128i u = _mm_loadu_si128((const __m128i *)(const void *)(src + 4 * i));
        __m128i m = _mm_cmpeq_epi32(u, ones);
        __m128i lo = _mm_add_epi64(_mm_unpacklo_epi32(u, zero), b);
        __m128i hi = _mm_add_epi64(_mm_unpackhi_epi32(u, zero), b);
        __m128i mlo = _mm_unpacklo_epi32(m, m), mhi = _mm_unpackhi_epi32(m, m);
        lo = _mm_or_si128(_mm_and_si128(mlo, none), _mm_andnot_si128(mlo, lo));
        hi = _mm_or_si128(_mm_and_si128(mhi, none), _mm_andnot_si128(mhi, hi));
        _mm_storeu_si128((__m128i *)(void *)(dst + i), lo);
        _mm_storeu_si128((__m128i *)(void *)(dst + i + 2), hi);
    }
    return i;
}

static size_t widen2_sse2(int64_t *dst, const unsigned char *src, size_t n, int64_t base)
{
    const __m128i b = _mm_set1_epi64x(base), none = _mm_set1_epi64x(INT64_MIN), zero = _mm_setzero_si128();
    const __m128i ones = _mm_set1_epi16(-1);
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        __m128i u = _mm_loadu_si128((const __m128i *)(const void *)(src + 2 * i));
        __m128i m = _mm_cmpeq_epi16(u, ones);
        __m128i u32[2] = {_mm_unpacklo_epi16(u, zero), _mm_unpackhi_epi16(u, zero)};
        __m128i m32[2] = {_mm_unpacklo_epi16(m, m), _mm_unpackhi_epi16(m, m)};
        __m128i out[4];
        for (int h = 0; h < 2; h++) {
            __m128i lo = _mm_add_epi64(_mm_unpacklo_epi32(u32[h], zero), b);
            __m128i hi = _mm_add_epi64(_mm_unpackhi_epi32(u32[h], zero), b);
            __m128i mlo = _mm_unpacklo_epi32(m32[h], m32[h]), mhi = _mm_unpackhi_epi32(m32[h], m32[h]);
            out[2 * h] = _mm_or_si128(_mm_and_si128(mlo, none), _mm_andnot_si128(mlo, lo));
            out[2 * h + 1] = _mm_or_si128(_mm_and_si128(mhi, none), _mm_andnot_si128(mhi, hi));
        }
        /* the block's 16 bytes of offsets were read above, before its
         * stores (64 bytes from dst + i) */
        for (int k = 0; k < 4; k++) _mm_storeu_si128((__m128i *)(void *)(dst + i + 2 * k), out[k]);
    }
    return i;
}
#endif

void tl_for_widen(int64_t *dst, const unsigned char *src, size_t n, int w, int64_t base)
{
    /* the SIMD blocks, then one scalar loop per width for the rest */
#if TL_FOR_SSE2
    size_t i0 = w == 4 ? widen4_sse2(dst, src, n, base) : w == 2 ? widen2_sse2(dst, src, n, base) : 0;
#else
    size_t i0 = 0;
#endif
    dst += i0, src += i0 * (size_t)w, n -= i0;
    if (w == 1) {
        for (size_t i = 0; i < n; i++) {
            uint8_t u = src[i];
            dst[i] = u == 0xFFu ? INT64_MIN : base + (int64_t)u;
        }
    } else if (w == 2) {
        for (size_t i = 0; i < n; i++) {
            uint16_t u;
            memcpy(&u, src + 2 * i, 2);
            dst[i] = u == 0xFFFFu ? INT64_MIN : base + (int64_t)u;
        }
    } else {
        for (size_t i = 0; i < n; i++) {
            uint32_t u;
            memcpy(&u, src + 4 * i, 4);
            dst[i] = u == 0xFFFFFFFFu ? INT64_MIN : base + (int64_t)u;
        }
    }
}
