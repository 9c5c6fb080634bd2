/* json_mask16.h — byte-class masks over 16 bytes for the JSON scanner's hot
 * paths (json.h, json.c). Bit i of a mask is set when byte p[i] is in the
 * class; all 16 bytes at p must be readable. With SSE2 each mask is one
 * compare and a movemask; without it (TL_NO_SIMD, or a target such as
 * aarch64 that has no SSE2) a byte loop computes the same bits, so token
 * boundaries and error offsets do not depend on the build. */
#ifndef TL_JSON_MASK16_H
#define TL_JSON_MASK16_H

#if defined(__SSE2__) && !defined(TL_NO_SIMD)
#define TL_JSON_SSE2 1
#include <emmintrin.h>
#else
#define TL_JSON_SSE2 0
#endif

/* '"' bytes. */
static inline __attribute__((always_inline)) unsigned tl_json_mask16_quote(const char *p)
{
#if TL_JSON_SSE2
    __m128i v = _mm_loadu_si128((const __m128i *)(const void *)p);
    return (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(v, _mm_set1_epi8('"')));
#else
    unsigned m = 0;
    for (int i = 0; i < 16; i++) m |= (unsigned)(p[i] == '"') << i;
    return m;
#endif
}

/* Bytes that end a plain-ASCII string run: '\\', controls below 0x20 and
 * every byte >= 0x80 (the signed compare counts those as negative). */
static inline __attribute__((always_inline)) unsigned tl_json_mask16_unplain(const char *p)
{
#if TL_JSON_SSE2
    __m128i v = _mm_loadu_si128((const __m128i *)(const void *)p);
    return (unsigned)_mm_movemask_epi8(_mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8('\\')),
                                                    _mm_cmplt_epi8(v, _mm_set1_epi8(0x20))));
#else
    unsigned m = 0;
    for (int i = 0; i < 16; i++) {
        unsigned char c = (unsigned char)p[i];
        m |= (unsigned)(c == '\\' || c < 0x20 || c >= 0x80) << i;
    }
    return m;
#endif
}

/* JSON whitespace: ' ', '\n', '\r', '\t'. */
static inline __attribute__((always_inline)) unsigned tl_json_mask16_ws(const char *p)
{
#if TL_JSON_SSE2
    __m128i v = _mm_loadu_si128((const __m128i *)(const void *)p);
    __m128i ws = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8(' ')),
                                           _mm_cmpeq_epi8(v, _mm_set1_epi8('\n'))),
                              _mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8('\r')),
                                           _mm_cmpeq_epi8(v, _mm_set1_epi8('\t'))));
    return (unsigned)_mm_movemask_epi8(ws);
#else
    unsigned m = 0;
    for (int i = 0; i < 16; i++) {
        char c = p[i];
        m |= (unsigned)(c == ' ' || c == '\n' || c == '\r' || c == '\t') << i;
    }
    return m;
#endif
}

/* ASCII digits '0'..'9'. */
static inline __attribute__((always_inline)) unsigned tl_json_mask16_digit(const char *p)
{
#if TL_JSON_SSE2
    __m128i t = _mm_sub_epi8(_mm_loadu_si128((const __m128i *)(const void *)p), _mm_set1_epi8('0'));
    return (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(_mm_min_epu8(t, _mm_set1_epi8(9)), t));
#else
    unsigned m = 0;
    for (int i = 0; i < 16; i++) m |= (unsigned)((unsigned char)(p[i] - '0') <= 9) << i;
    return m;
#endif
}

#endif
