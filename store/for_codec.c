/* for_codec.c — frame-of-reference narrowing of int64 chunks (for_codec.h). */
#include "for_codec.h"

#include <string.h>

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

void tl_for_widen(int64_t *dst, const unsigned char *src, size_t n, int w, int64_t base)
{
    /* one loop per width, so that each is a plain load-compare-store loop */
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
