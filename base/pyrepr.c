/* pyrepr.c — the reference tool's text of values: Python float and str repr */
#include "base/base.h"

#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <xxhash.h>

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

int tl_parse_int_text(const char *s, size_t n, int64_t *v)
{
    size_t i = 0;
    int neg = n > 0 && s[0] == '-';
    i += (size_t)neg;
    unsigned base = 10;
    if (n - i > 2 && s[i] == '0' && (s[i + 1] == 'x' || s[i + 1] == 'X')) { base = 16; i += 2; }
    if (i == n) return 0;
    uint64_t acc = 0;
    for (; i < n; i++) {
        char c = s[i];
        unsigned d = c >= '0' && c <= '9' ? (unsigned)(c - '0')
                   : base == 16 && c >= 'a' && c <= 'f' ? (unsigned)(c - 'a' + 10)
                   : base == 16 && c >= 'A' && c <= 'F' ? (unsigned)(c - 'A' + 10) : base;
        if (d >= base || acc > (UINT64_MAX - d) / base) return 0;
        acc = acc * base + d;
    }
    if (neg ? acc > (uint64_t)INT64_MAX + 1 : acc > (uint64_t)INT64_MAX) return 0;
    *v = neg ? (int64_t)(0 - acc) : (int64_t)acc;
    return 1;
}
