/* util.c — implementation of the shared toolkit declared in util.h. */
#include "util.h"

#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <xxhash.h>

int tl_errf(tl_err *err, int code, const char *fmt, ...)
{
    if (err) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err->msg, sizeof err->msg, fmt, ap);
        va_end(ap);
        err->code = code;
    }
    return code;
}

int tl_err_prefix(tl_err *err, const char *fmt, ...)
{
    if (!err) return TL_EIO;
    char pre[512], old[sizeof err->msg];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(pre, sizeof pre, fmt, ap);
    va_end(ap);
    memcpy(old, err->msg, sizeof old);
    snprintf(err->msg, sizeof err->msg, "%s: %s", pre, old);
    return err->code;
}

static void oom(size_t n)
{
    fprintf(stderr, "tracelens: out of memory (allocating %zu bytes)\n", n);
    abort();
}

void *tl_xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p) oom(n);
    return p;
}

void *tl_xcalloc(size_t n, size_t sz)
{
    void *p = calloc(n ? n : 1, sz ? sz : 1);
    if (!p) oom(n * sz);
    return p;
}

void *tl_xrealloc(void *p, size_t n)
{
    void *q = realloc(p, n ? n : 1);
    if (!q) oom(n);
    return q;
}

char *tl_xstrdup(const char *s) { return tl_xstrndup(s, strlen(s)); }

char *tl_xstrndup(const char *s, size_t n)
{
    char *p = tl_xmalloc(n + 1);
    memcpy(p, s, n);
    p[n] = 0;
    return p;
}

/* ---- arena */
struct tl_arena_block {
    tl_arena_block *next;
    size_t used, cap;
    _Alignas(16) unsigned char data[];
};

void tl_arena_init(tl_arena *a, size_t block_size)
{
    a->head = NULL;
    a->block_size = block_size ? block_size : 64 * 1024;
}

void *tl_arena_alloc(tl_arena *a, size_t n)
{
    n = (n + 15) & ~(size_t)15;
    if (!a->block_size) a->block_size = 64 * 1024;
    tl_arena_block *b = a->head;
    if (!b || b->used + n > b->cap) {
        size_t cap = n > a->block_size ? n : a->block_size;
        b = tl_xmalloc(sizeof *b + cap);
        b->used = 0;
        b->cap = cap;
        /* A big one-off allocation goes behind the current block so the
         * current block's free space is not wasted. */
        if (a->head && n > a->block_size) {
            b->next = a->head->next;
            a->head->next = b;
        } else {
            b->next = a->head;
            a->head = b;
        }
    }
    void *p = b->data + b->used;
    b->used += n;
    return p;
}

void *tl_arena_zalloc(tl_arena *a, size_t n)
{
    void *p = tl_arena_alloc(a, n);
    memset(p, 0, n);
    return p;
}

char *tl_arena_strndup(tl_arena *a, const char *s, size_t n)
{
    char *p = tl_arena_alloc(a, n + 1);
    memcpy(p, s, n);
    p[n] = 0;
    return p;
}

char *tl_arena_strdup(tl_arena *a, const char *s) { return tl_arena_strndup(a, s, strlen(s)); }

char *tl_arena_printf(tl_arena *a, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    char *p = tl_arena_alloc(a, (size_t)n + 1);
    va_start(ap, fmt);
    vsnprintf(p, (size_t)n + 1, fmt, ap);
    va_end(ap);
    return p;
}

void tl_arena_free(tl_arena *a)
{
    tl_arena_block *b = a->head;
    while (b) {
        tl_arena_block *n = b->next;
        free(b);
        b = n;
    }
    a->head = NULL;
}

/* ---- buffers */
void tl_buf_reserve(tl_buf *b, size_t extra)
{
    if (b->n + extra + 1 > b->cap) {
        size_t nc = b->cap ? b->cap * 2 : 256;
        while (nc < b->n + extra + 1) nc *= 2;
        b->p = tl_xrealloc(b->p, nc);
        b->cap = nc;
    }
}

void tl_buf_append(tl_buf *b, const void *d, size_t n)
{
    tl_buf_reserve(b, n);
    memcpy(b->p + b->n, d, n);
    b->n += n;
    b->p[b->n] = 0;
}

void tl_buf_putc(tl_buf *b, char c) { tl_buf_append(b, &c, 1); }
void tl_buf_puts(tl_buf *b, const char *s) { tl_buf_append(b, s, strlen(s)); }

void tl_buf_printf(tl_buf *b, const char *fmt, ...)
{
    /* One formatting pass when the text fits the spare capacity (the usual
     * case in report loops); else grow and format again. */
    va_list ap;
    size_t room = b->cap > b->n ? b->cap - b->n : 0;
    va_start(ap, fmt);
    int n = vsnprintf(room ? b->p + b->n : NULL, room, fmt, ap);
    va_end(ap);
    if (n < 0) return;
    if ((size_t)n >= room) {
        tl_buf_reserve(b, (size_t)n);
        va_start(ap, fmt);
        vsnprintf(b->p + b->n, (size_t)n + 1, fmt, ap);
        va_end(ap);
    }
    b->n += (size_t)n;
}

void tl_buf_free(tl_buf *b)
{
    free(b->p);
    b->p = NULL;
    b->n = b->cap = 0;
}

void tl_buf_json_str(tl_buf *b, const char *s, size_t n)
{
    tl_buf_putc(b, '"');
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        switch (c) {
        case '"': tl_buf_puts(b, "\\\""); break;
        case '\\': tl_buf_puts(b, "\\\\"); break;
        case '\n': tl_buf_puts(b, "\\n"); break;
        case '\r': tl_buf_puts(b, "\\r"); break;
        case '\t': tl_buf_puts(b, "\\t"); break;
        default:
            if (c < 0x20) tl_buf_printf(b, "\\u%04x", c);
            else tl_buf_putc(b, (char)c);
        }
    }
    tl_buf_putc(b, '"');
}

/* ---- hashing and ids */
uint64_t tl_hash64(const void *p, size_t n, uint64_t seed) { return XXH3_64bits_withSeed(p, n, seed); }

void tl_id_format(uint64_t id, char out[17]) { snprintf(out, 17, "%016llx", (unsigned long long)id); }

int tl_id_parse(const char *s, uint64_t *id)
{
    size_t n = strlen(s);
    if (n == 0 || n > 16) return -1;
    uint64_t v = 0;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        int d;
        if (c >= '0' && c <= '9') d = c - '0';
        else if (c >= 'a' && c <= 'f') d = c - 'a' + 10;
        else if (c >= 'A' && c <= 'F') d = c - 'A' + 10;
        else return -1;
        v = v << 4 | (uint64_t)d;
    }
    *id = v;
    return 0;
}

/* ---- Python repr formats */

/* Shortest round-trip digits of a normal double in [1e-6, 1e15) with exact
 * integer arithmetic (no printf/strtod, which dominated report CSV writing).
 * v = mant * 2^-k exactly. For n = 15, 16, 17 significant digits the
 * n-digit decimal nearest to v is q * 10^-d with q = round(mant * 10^d /
 * 2^k) (half-even, as printf's %.{n-1}e); it reads back as v iff it lies
 * within half a gap of v (strtod ties go to the even significand). A
 * round-tripping <= 15-digit decimal is unique (DBL_DIG), so the first n
 * that round-trips gives Python's repr digits (trailing zeros stripped by
 * the caller); n = 17 always does. Returns the digit count of q written to
 * mant_out (q = 10^n: the caller sees n+1 digits) and the decimal exponent
 * of its first digit in *exp10, or 0 when v is outside the range. */
__extension__ typedef unsigned __int128 tl_u128;

static int pyfloat_digits_exact(double v, char *mant_out, int *exp10)
{
    static const uint64_t P10[] = {1ull, 10ull, 100ull, 1000ull, 10000ull, 100000ull, 1000000ull,
                                   10000000ull, 100000000ull, 1000000000ull, 10000000000ull,
                                   100000000000ull, 1000000000000ull, 10000000000000ull,
                                   100000000000000ull, 1000000000000000ull, 10000000000000000ull,
                                   100000000000000000ull, 1000000000000000000ull,
                                   10000000000000000000ull};
    if (!(v >= 1e-6 && v < 1e15)) return 0;
    uint64_t bits;
    memcpy(&bits, &v, sizeof bits);
    int be = (int)(bits >> 52);                   /* biased exponent (v > 0, normal) */
    uint64_t mant = (bits & ((1ull << 52) - 1)) | (1ull << 52);
    int k = 1075 - be;                            /* v = mant * 2^-k, 0 < k <= 73 */
    /* floor(log10 v) is floor((be - 1023) * log10 2) or one more */
    int e10 = ((be - 1023) * 78913) >> 18;
    /* make e10 exact: 10^e10 <= v < 10^(e10+1) */
    for (int it = 0; it < 2; it++) {
        if (e10 >= 0) {
            if (v < (double)P10[e10]) e10--;
            else if (e10 + 1 <= 15 && v >= (double)P10[e10 + 1]) e10++;
        } else {
            /* v >= 10^e10  <=>  mant * 10^-e10 >= 2^k */
            tl_u128 lhs = (tl_u128)mant * P10[-e10];
            tl_u128 one = (tl_u128)1 << k;
            if (lhs < one) e10--;
            else if (-e10 - 1 >= 0 && (tl_u128)mant * P10[-e10 - 1] >= one) e10++;
        }
    }
    if (e10 < -6 || e10 > 14) return 0;
    const tl_u128 ONE = 1;
    for (int n = 15; n <= 17; n++) {
        int d = n - 1 - e10;                      /* 0 <= d <= 22 */
        /* 10^d may exceed 2^64 (d > 19): build it in 128 bits */
        tl_u128 p = d <= 19 ? (tl_u128)P10[d] : (tl_u128)P10[19] * P10[d - 19];
        tl_u128 x = (tl_u128)mant * p;  /* < 2^53 * 10^22 < 2^127 */
        tl_u128 q = x >> k, r = x - (q << k), half = ONE << (k - 1);
        int up = r > half || (r == half && (q & 1));
        /* |residual| = |v - q*10^-d| * 2^k * 10^d */
        tl_u128 res = up ? (q + 1) * (ONE << k) - x : r;
        if (up) q++;
        int ok = 1;
        if (n < 17) {
            /* within half the gap: 2|res| < 10^d; below a power of two the
             * gap under v is half as wide */
            tl_u128 twice = res * (!up && mant == (1ull << 52) && res ? 4 : 2);
            ok = twice < p || (twice == p && !(mant & 1));
            if (!ok && !up && mant == (1ull << 52)) {
                /* the nearest decimal fell in the narrow gap below a power
                 * of two: the next one up may still read back as v (Python
                 * then prints it, e.g. 2^-24 -> 5.960464477539063e-08) */
                tl_u128 res_up = (q + 1) * (ONE << k) - x;
                if (res_up * 2 <= p) { q++; ok = 1; } /* mant even: a tie reads back as v */
            }
        }
        if (ok) {
            uint64_t qq = (uint64_t)q;
            char tmp[24];
            int nd = 0;
            do { tmp[nd++] = (char)('0' + qq % 10); qq /= 10; } while (qq);
            for (int i = 0; i < nd; i++) mant_out[i] = tmp[nd - 1 - i];
            mant_out[nd] = 0;
            *exp10 = e10 + (nd - n);
            return nd;
        }
    }
    return 0; /* not reached: 17 digits always round-trip */
}

/* digits holds v's nearest 16-digit decimal "[-]d.ddddddddddddddde[+-]XX",
 * which does not read back as v. When v is a power of two and that decimal
 * lies below it (in the half-width gap), the next 16-digit decimal up may
 * read back (Python prints it): try it; returns 1 with digits replaced. */
static int pow2_next16(double v, char digits[40])
{
    int e2;
    if (frexp(fabs(v), &e2) != 0.5 || fabs(strtod(digits, NULL)) > fabs(v)) return 0;
    char t[40];
    memcpy(t, digits, 40);
    char *m = t + (t[0] == '-'), *e = strchr(m, 'e');
    if (!e) return 0;
    char *q = e - 1;
    for (;; q--) {
        if (*q == '.') continue;
        if (*q != '9') { (*q)++; break; }
        *q = '0';
        if (q == m) {
            /* 9.99..9 -> 10.00..0: renormalise to 1.000..0 and exponent + 1 */
            char buf[40];
            snprintf(buf, sizeof buf, "%s1.000000000000000e%+03d", t[0] == '-' ? "-" : "", atoi(e + 1) + 1);
            memcpy(t, buf, sizeof buf);
            break;
        }
    }
    if (strtod(t, NULL) != v) return 0;
    memcpy(digits, t, 40);
    return 1;
}

size_t tl_fmt_pyfloat(double v, char out[40])
{
    if (isnan(v)) return (size_t)snprintf(out, 40, "nan");
    if (isinf(v)) return (size_t)snprintf(out, 40, v < 0 ? "-inf" : "inf");
    if (v == 0) return (size_t)snprintf(out, 40, signbit(v) ? "-0.0" : "0.0");
    char mant[24];
    int nm, exp, neg = v < 0;
    if ((nm = pyfloat_digits_exact(fabs(v), mant, &exp)) == 0) {
        /* Outside the exact path's range: shortest round-trip digits via
         * printf. For normal doubles a round-tripping decimal of <= 15
         * significant digits is unique (DBL_DIG), so the 15-digit rounding,
         * trailing zeros stripped below, is the shortest whenever it
         * round-trips; else 16, else 17. Subnormals lose that uniqueness and
         * take the binary search (round-tripping is monotonic in the digit
         * count). */
        char digits[40];
        if (fabs(v) >= DBL_MIN) {
            snprintf(digits, sizeof digits, "%.14e", v);
            if (strtod(digits, NULL) != v) {
                snprintf(digits, sizeof digits, "%.15e", v);
                if (strtod(digits, NULL) != v && !pow2_next16(v, digits))
                    snprintf(digits, sizeof digits, "%.16e", v);
            }
        } else {
            int lo = 1, hi = 17;
            while (lo < hi) {
                int mid = (lo + hi) / 2;
                snprintf(digits, sizeof digits, "%.*e", mid - 1, v);
                if (strtod(digits, NULL) == v) hi = mid;
                else lo = mid + 1;
            }
            snprintf(digits, sizeof digits, "%.*e", lo - 1, v);
        }
        /* digits = "[-]d.ddde[+-]XX": split mantissa digits and exponent. */
        const char *p = digits;
        if (*p == '-') p++;
        nm = 0;
        for (; *p && *p != 'e'; p++)
            if (*p != '.') mant[nm++] = *p;
        mant[nm] = 0;
        exp = atoi(p + 1);
    }
    while (nm > 1 && mant[nm - 1] == '0') mant[--nm] = 0;
    char *o = out;
    if (neg) *o++ = '-';
    if (exp >= -4 && exp < 16) {
        if (exp < 0) {
            *o++ = '0';
            *o++ = '.';
            for (int i = -1; i > exp; i--) *o++ = '0';
            for (int i = 0; i < nm; i++) *o++ = mant[i];
        } else {
            for (int i = 0; i <= exp; i++) *o++ = i < nm ? mant[i] : '0';
            *o++ = '.';
            if (nm > exp + 1)
                for (int i = exp + 1; i < nm; i++) *o++ = mant[i];
            else
                *o++ = '0';
        }
        *o = 0;
    } else {
        *o++ = mant[0];
        if (nm > 1) {
            *o++ = '.';
            for (int i = 1; i < nm; i++) *o++ = mant[i];
        }
        o += sprintf(o, "e%c%02d", exp < 0 ? '-' : '+', exp < 0 ? -exp : exp);
    }
    return (size_t)(o - out);
}

/* Decodes one UTF-8 sequence; returns its length (1 for invalid bytes). */
static size_t utf8_decode(const unsigned char *s, size_t n, uint32_t *cp)
{
    unsigned char c = s[0];
    if (c < 0x80) { *cp = c; return 1; }
    size_t len = (c >= 0xf0) ? 4 : (c >= 0xe0) ? 3 : (c >= 0xc0) ? 2 : 0;
    if (!len || len > n) { *cp = c; return 1; }
    uint32_t v = c & (0x3f >> (len - 1));
    for (size_t i = 1; i < len; i++) {
        if ((s[i] & 0xc0) != 0x80) { *cp = c; return 1; }
        v = v << 6 | (s[i] & 0x3f);
    }
    *cp = v;
    return len;
}

void tl_buf_pystr(tl_buf *b, const char *s, size_t n)
{
    int has_sq = memchr(s, '\'', n) != NULL, has_dq = memchr(s, '"', n) != NULL;
    char q = (has_sq && !has_dq) ? '"' : '\'';
    tl_buf_putc(b, q);
    const unsigned char *u = (const unsigned char *)s;
    for (size_t i = 0; i < n;) {
        /* plain printable ASCII goes in one append (kernel names are long) */
        size_t j = i;
        while (j < n && u[j] >= 0x20 && u[j] < 0x7f && u[j] != '\\' && u[j] != (unsigned char)q) j++;
        if (j > i) {
            tl_buf_append(b, s + i, j - i);
            i = j;
            continue;
        }
        uint32_t cp;
        size_t len = utf8_decode(u + i, n - i, &cp);
        if (cp == '\\') tl_buf_puts(b, "\\\\");
        else if (cp == (uint32_t)q) { tl_buf_putc(b, '\\'); tl_buf_putc(b, q); }
        else if (cp == '\n') tl_buf_puts(b, "\\n");
        else if (cp == '\r') tl_buf_puts(b, "\\r");
        else if (cp == '\t') tl_buf_puts(b, "\\t");
        else if (cp < 0x20 || cp == 0x7f || (cp >= 0x80 && cp < 0xa0)) tl_buf_printf(b, "\\x%02x", cp);
        else tl_buf_append(b, s + i, len);
        i += len;
    }
    tl_buf_putc(b, q);
}

/* ---- misc */
double tl_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void tl_mem_mark(const char *stage)
{
    if (!getenv("TRACELENS_MEM")) return; /* read each time: corpus workers call this concurrently */
    FILE *f = fopen("/proc/self/status", "r");
    if (!f) return;
    char line[256];
    long hwm = 0, rss = 0, anon = 0, file = 0;
    while (fgets(line, sizeof line, f)) {
        sscanf(line, "VmHWM: %ld", &hwm);
        sscanf(line, "VmRSS: %ld", &rss);
        sscanf(line, "RssAnon: %ld", &anon);
        sscanf(line, "RssFile: %ld", &file);
    }
    fclose(f);
    fprintf(stderr, "mem: %-14s hwm=%.1f rss=%.1f anon=%.1f file=%.1f\n", stage,
            hwm / 1024.0, rss / 1024.0, anon / 1024.0, file / 1024.0);
}

int64_t tl_wall_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

long tl_peak_rss_kb(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_maxrss;
}

int tl_mkdir_p(const char *path, tl_err *err)
{
    char tmp[4096];
    size_t n = strlen(path);
    if (n >= sizeof tmp) return tl_errf(err, TL_EIO, "%s: path too long", path);
    memcpy(tmp, path, n + 1);
    for (size_t i = 1; i <= n; i++) {
        if (tmp[i] == '/' || tmp[i] == 0) {
            char c = tmp[i];
            tmp[i] = 0;
            if (mkdir(tmp, 0777) != 0 && errno != EEXIST)
                return tl_errf(err, TL_EIO, "%s: cannot create directory: %s", tmp, strerror(errno));
            tmp[i] = c;
        }
    }
    return TL_OK;
}

void tl_radix_sort_rows(uint32_t *rows, uint64_t *k, size_t n)
{
    if (n < 2) return;
    uint64_t mn = UINT64_MAX, mx = 0;
    for (size_t i = 0; i < n; i++) {
        if (k[i] < mn) mn = k[i];
        if (k[i] > mx) mx = k[i];
    }
    uint64_t range = mx - mn;
    if (!range) return; /* all keys equal: stable order is the order */
    /* Digits of at most 12 bits, as few passes as the key range needs:
     * timestamps span 30-36 bits, three passes rather than four of 11
     * bits. All histograms come from one read of the keys. */
    int bits = 64 - __builtin_clzll(range);
    int passes = (bits + 11) / 12, width = (bits + passes - 1) / passes;
    uint64_t mask = ((uint64_t)1 << width) - 1;
    size_t *count = tl_xcalloc((size_t)passes << width, sizeof *count);
    for (size_t i = 0; i < n; i++) {
        uint64_t v = k[i] -= mn;
        for (int p = 0; p < passes; p++) count[((size_t)p << width) + ((v >> (p * width)) & mask)]++;
    }
    uint64_t *k2 = tl_xmalloc(n * sizeof *k2), *own = k2;
    uint32_t *r2 = tl_xmalloc(n * sizeof *r2);
    for (int p = 0; p < passes; p++) {
        size_t *c = count + ((size_t)p << width), sum = 0;
        for (size_t d = 0; d <= mask; d++) { size_t x = c[d]; c[d] = sum; sum += x; }
        int shift = p * width;
        for (size_t i = 0; i < n; i++) {
            size_t q = c[(k[i] >> shift) & mask]++;
            r2[q] = rows[i];
            k2[q] = k[i];
        }
        memcpy(rows, r2, n * sizeof *rows);
        uint64_t *t = k; k = k2; k2 = t;
    }
    free(count);
    free(own);
    free(r2);
}

/* k-th smallest of v[0..n) (Hoare's selection, as the quickselect pandas
 * uses for medians; v is reordered so that v[0..k) <= v[k] <= v[k+1..n)),
 * and the median from it: the upper middle, averaged with the largest of
 * the lower half when n is even. One body for each element type. */
#define TL_SELECT(T, KTH, MEDIAN)                                              \
    static T KTH(T *v, size_t n, size_t k)                                     \
    {                                                                          \
        ptrdiff_t lo = 0, hi = (ptrdiff_t)n - 1, kk = (ptrdiff_t)k;            \
        while (lo < hi) {                                                      \
            T x = v[kk];                                                       \
            ptrdiff_t i = lo, j = hi;                                          \
            do {                                                               \
                while (v[i] < x) i++;                                          \
                while (x < v[j]) j--;                                          \
                if (i <= j) {                                                  \
                    T t = v[i];                                                \
                    v[i] = v[j];                                               \
                    v[j] = t;                                                  \
                    i++;                                                       \
                    j--;                                                       \
                }                                                              \
            } while (i <= j);                                                  \
            if (j < kk) lo = i;                                                \
            if (kk < i) hi = j;                                                \
        }                                                                      \
        return v[kk];                                                          \
    }                                                                          \
    double MEDIAN(T *v, size_t n)                                              \
    {                                                                          \
        T hi = KTH(v, n, n / 2);                                               \
        if (n & 1) return (double)hi;                                          \
        T lo = v[0];                                                           \
        for (size_t i = 1; i < n / 2; i++)                                     \
            if (v[i] > lo) lo = v[i];                                          \
        return ((double)lo + (double)hi) / 2;                                  \
    }
TL_SELECT(double, kth_f64, tl_median_f64)
TL_SELECT(int64_t, kth_i64, tl_median_i64)
#undef TL_SELECT

/* ---- maps of fixed-size binary keys -------------------------------------- */

void tl_bmap_init(tl_bmap *m, size_t keylen, size_t hint)
{
    m->keylen = keylen;
    m->cap = 64;
    while (m->cap < hint * 2) m->cap *= 2;
    m->keys = tl_xmalloc(m->cap * keylen);
    m->vals = tl_xmalloc(m->cap * sizeof *m->vals);
    m->used = tl_xcalloc(m->cap, 1);
    m->n = 0;
}

void tl_bmap_free(tl_bmap *m)
{
    free(m->keys);
    free(m->vals);
    free(m->used);
    memset(m, 0, sizeof *m);
}

/* Keys of up to four 8-byte words (pointers, ids) are mixed word by word:
 * the byte hash cost the collective matching ~25 ms on 2.7 M lookups. */
static uint64_t bmap_hash(const void *key, size_t keylen)
{
    if (keylen % 8 || keylen > 32) return tl_hash64(key, keylen, 0);
    uint64_t h = keylen, w;
    for (size_t o = 0; o < keylen; o += 8) {
        memcpy(&w, (const char *)key + o, 8);
        h = tl_mix64(h ^ w);
    }
    return h;
}

static size_t bmap_slot(const tl_bmap *m, const void *key, uint64_t h, int *found)
{
    size_t i = h & (m->cap - 1);
    while (m->used[i]) {
        if (!memcmp(m->keys + i * m->keylen, key, m->keylen)) { *found = 1; return i; }
        i = (i + 1) & (m->cap - 1);
    }
    *found = 0;
    return i;
}

size_t *tl_bmap_put(tl_bmap *m, const void *key, int *isnew)
{
    if ((m->n + 1) * 2 > m->cap) {
        tl_bmap o = *m;
        tl_bmap_init(m, o.keylen, o.cap);
        for (size_t i = 0; i < o.cap; i++)
            if (o.used[i]) {
                int f;
                const char *k = o.keys + i * o.keylen;
                size_t s = bmap_slot(m, k, bmap_hash(k, o.keylen), &f);
                memcpy(m->keys + s * m->keylen, k, m->keylen);
                m->vals[s] = o.vals[i];
                m->used[s] = 1;
                m->n++;
            }
        tl_bmap_free(&o);
    }
    int found;
    size_t s = bmap_slot(m, key, bmap_hash(key, m->keylen), &found);
    *isnew = !found;
    if (!found) {
        memcpy(m->keys + s * m->keylen, key, m->keylen);
        m->vals[s] = 0;
        m->used[s] = 1;
        m->n++;
    }
    return &m->vals[s];
}
