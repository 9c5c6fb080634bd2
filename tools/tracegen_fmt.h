/* tracegen_fmt.h — output buffer and hand-rolled number formatting for
 * tracegen. The generator writes hundreds of MB/s of JSON, so the hot path
 * never calls printf: integers go through a two-digit table, timestamps are
 * int64 nanoseconds printed as microseconds with exactly three decimals (the
 * way Kineto writes them), and fixed text is memcpy'd. Included only by
 * tools/tracegen.c. */
#ifndef TRACEGEN_FMT_H
#define TRACEGEN_FMT_H

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- growable output buffer; callers reserve before a run of puts. */
typedef struct obuf {
    char *p;
    size_t n, cap;
} obuf;

static void ob_grow(obuf *b, size_t need)
{
    size_t nc = b->cap ? b->cap : 1 << 16;
    while (nc < need) nc *= 2;
    char *np = realloc(b->p, nc);
    if (!np) {
        fprintf(stderr, "tracegen: out of memory (%zu bytes)\n", nc);
        exit(1);
    }
    b->p = np;
    b->cap = nc;
}
static inline void ob_reserve(obuf *b, size_t extra)
{
    if (b->n + extra > b->cap) ob_grow(b, b->n + extra);
}
static inline void ob_put(obuf *b, const char *s, size_t n)
{
    memcpy(b->p + b->n, s, n);
    b->n += n;
}
static inline void ob_putc(obuf *b, char c) { b->p[b->n++] = c; }
#define OB_LIT(b, s) ob_put((b), (s), sizeof(s) - 1)

static const char tg_digits2[201] =
    "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
    "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
    "8081828384858687888990919293949596979899";

static inline void ob_u64(obuf *b, uint64_t v)
{
    char tmp[24];
    char *e = tmp + sizeof tmp, *q = e;
    while (v >= 100) {
        unsigned r = (unsigned)(v % 100);
        v /= 100;
        q -= 2;
        memcpy(q, tg_digits2 + 2 * r, 2);
    }
    if (v >= 10) {
        q -= 2;
        memcpy(q, tg_digits2 + 2 * v, 2);
    } else {
        *--q = (char)('0' + v);
    }
    ob_put(b, q, (size_t)(e - q));
}
static inline void ob_i64(obuf *b, int64_t v)
{
    if (v < 0) {
        ob_putc(b, '-');
        ob_u64(b, (uint64_t)0 - (uint64_t)v);
    } else {
        ob_u64(b, (uint64_t)v);
    }
}
/* ns → "µs.ddd" (non-negative only; all trace times are). */
static inline void ob_us(obuf *b, int64_t ns)
{
    uint64_t u = (uint64_t)ns;
    ob_u64(b, u / 1000);
    unsigned f = (unsigned)(u % 1000);
    char t[4];
    t[0] = '.';
    t[1] = (char)('0' + f / 100);
    memcpy(t + 2, tg_digits2 + 2 * (f % 100), 2);
    ob_put(b, t, 4);
}
/* value given in millionths → "x.dddddd". */
static inline void ob_fix6(obuf *b, uint64_t micro)
{
    ob_u64(b, micro / 1000000);
    ob_putc(b, '.');
    unsigned f = (unsigned)(micro % 1000000);
    char t[6];
    for (int i = 5; i >= 0; i--) {
        t[i] = (char)('0' + f % 10);
        f /= 10;
    }
    ob_put(b, t, 6);
}
/* Cold path (model setup, header): printf into the buffer. */
static void ob_printf(obuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void ob_printf(obuf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    ob_reserve(b, (size_t)n + 1);
    va_start(ap, fmt);
    vsnprintf(b->p + b->n, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->n += (size_t)n;
}
static inline void ob_puts(obuf *b, const char *s)
{
    size_t n = strlen(s);
    ob_reserve(b, n);
    ob_put(b, s, n);
}

/* ---- deterministic randomness. splitmix64 for the shared stream; mix64
 * (the splitmix finaliser, same as tl_mix64) for stateless per-rank values so
 * that they never disturb the stream every rank must share. */
static inline uint64_t tg_mix(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ULL;
    x ^= x >> 33;
    return x;
}
static inline uint64_t tg_next(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}
static inline int64_t tg_range(uint64_t *s, int64_t lo, int64_t hi)
{
    return lo + (int64_t)(tg_next(s) % (uint64_t)(hi - lo + 1));
}

/* ---- persistent string arena for text built once per rank (op argument
 * blocks, kernel metadata); strings are never freed individually. */
typedef struct sarena {
    char **blocks;
    size_t nblocks;
    char *cur;
    size_t left;
} sarena;
static const char *sa_dup(sarena *a, const char *s, size_t n)
{
    if (n + 1 > a->left) {
        size_t bs = n + 1 > (1 << 16) ? n + 1 : (1 << 16);
        char *blk = malloc(bs);
        char **nb = realloc(a->blocks, (a->nblocks + 1) * sizeof *nb);
        if (!blk || !nb) {
            fprintf(stderr, "tracegen: out of memory\n");
            exit(1);
        }
        a->blocks = nb;
        a->blocks[a->nblocks++] = blk;
        a->cur = blk;
        a->left = bs;
    }
    char *r = a->cur;
    memcpy(r, s, n);
    r[n] = 0;
    a->cur += n + 1;
    a->left -= n + 1;
    return r;
}
static void sa_free(sarena *a)
{
    for (size_t i = 0; i < a->nblocks; i++) free(a->blocks[i]);
    free(a->blocks);
    memset(a, 0, sizeof *a);
}

#endif
