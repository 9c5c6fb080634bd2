/* json.c — the zero-copy, validating JSON scanner (see json.h). The hot
 * paths — whitespace runs of pretty-printed traces and string bodies — scan
 * 16 bytes at a time through the masks of json_mask16.h (SSE2, or a scalar
 * loop without it); everything else is plain byte code. */
#include "ingest/json.h"
#include "ingest/source.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

void tl_json_init_buf(tl_json *j, const char *buf, size_t len, const char *file, tl_err *err)
{
    memset(j, 0, sizeof *j);
    j->buf = buf;
    j->len = len;
    j->eof = 1;
    j->file = file ? file : "<input>";
    j->err = err;
}

int tl_json_init_src(tl_json *j, tl_source *src, const char *file, tl_err *err)
{
    memset(j, 0, sizeof *j);
    j->file = file ? file : "<input>";
    j->err = err;
    j->src = src;
    int rc = tl_source_window(src, 0, &j->buf, &j->len, &j->base, &j->eof, err);
    /* A UTF-8 byte-order mark (some editors and Windows tools write one)
     * is skipped; offsets still count from the first byte of the input. */
    if (rc == 0 && j->len >= 3 && memcmp(j->buf, "\xef\xbb\xbf", 3) == 0) j->pos = 3;
    return rc;
}

/* Scans the window from j->ext_pos for the unit's possible end: a ',', '}'
 * or ']' at depth 0 or below, or a string closing at depth 0. Returns 1
 * there (j->ext_pos just after it), 0 at the window end. Strings are
 * skipped 16 bytes at a time. */
static int extent_scan(tl_json *j)
{
    const char *b = j->buf;
    size_t p = (size_t)(j->ext_pos - j->base), len = j->len;
    while (p < len) {
        if (j->ext_str) {
            if (j->ext_esc) { j->ext_esc = 0; p++; continue; }
            while (p + 16 <= len) {
                unsigned m = tl_json_mask16_quote(b + p) | tl_json_mask16_unplain(b + p);
                if (m) { p += (size_t)__builtin_ctz(m); break; }
                p += 16;
            }
            if (p >= len) break;
            char c = b[p++];
            if (c == '\\') j->ext_esc = 1;
            else if (c == '"') {
                j->ext_str = 0;
                if (j->ext_depth == 0) { j->ext_pos = j->base + p; return 1; }
            }
            continue;
        }
        /* long numbers: digit runs 16 bytes at a time */
        while (p + 16 <= len && tl_json_mask16_digit(b + p) == 0xffff) p += 16;
        if (p >= len) break;
        char c = b[p++];
        if (c == '"') j->ext_str = 1;
        else if (c == '{' || c == '[') j->ext_depth++;
        else if (c == '}' || c == ']' || c == ',') {
            if (c != ',') j->ext_depth--;
            if (j->ext_depth <= 0) { j->ext_pos = j->base + p; return 1; }
        }
    }
    j->ext_pos = j->base + p;
    return 0;
}

int tl_json_refill(tl_json *j, size_t mark)
{
    if (!j->src || j->eof) return tl_json_fail_at(j, j->len, "unexpected end of input (truncated file?)");
    uint64_t keep = j->base + mark;
    int long_unit = j->len - mark >= TL_JSON_EXTENT_MIN;
    if (long_unit && (!j->ext_on || j->ext_mark != keep)) {
        j->ext_on = 1;
        j->ext_mark = j->ext_pos = keep;
        j->ext_depth = 0;
        j->ext_str = j->ext_esc = 0;
    }
    for (;;) {
        int rc = tl_source_window(j->src, keep, &j->buf, &j->len, &j->base, &j->eof, j->err);
        if (rc) return rc;
        j->pos = (size_t)(keep - j->base);
        /* At EOF the caller re-parses and, since no more input can come,
         * reports a precise error if the unit is incomplete. */
        if (!long_unit || j->eof || extent_scan(j)) return 0;
    }
}

int tl_json_release(tl_json *j)
{
    return j->src ? tl_source_release(j->src, j->base + j->pos) : 0;
}

int tl_json_fail_at(tl_json *j, size_t pos, const char *fmt, ...)
{
    char what[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    return tl_errf(j->err, TL_EFORMAT, "%s: byte %llu: %s", j->file,
                   (unsigned long long)(j->base + pos), what);
}

static const char *describe(tl_json *j, size_t pos, char *buf, size_t n)
{
    if (pos >= j->len) return "end of input";
    unsigned char c = (unsigned char)j->buf[pos];
    if (c >= 0x20 && c < 0x7f) snprintf(buf, n, "'%c'", c);
    else snprintf(buf, n, "byte 0x%02x", c);
    return buf;
}

int tl_json_fail(tl_json *j, const char *expected)
{
    char d[32];
    if (j->pos >= j->len && j->eof)
        return tl_json_fail_at(j, j->pos, "expected %s, found end of input (truncated file?)", expected);
    return tl_json_fail_at(j, j->pos, "expected %s, found %s", expected, describe(j, j->pos, d, sizeof d));
}

/* Returns 1 when more input exists beyond the window (caller returns TL_JNEED). */
static inline int need(tl_json *j) { return !j->eof; }

size_t tl_json_skip_ws_slow(const char *b, size_t pos, size_t len)
{
    /* Runs here are mostly a newline plus indentation: one 16-byte compare
     * usually finds the next token. */
    for (;;) {
        while (pos + 16 <= len) {
            unsigned m = tl_json_mask16_ws(b + pos);
            if (m != 0xffff) return pos + (size_t)__builtin_ctz(~m & 0xffff);
            pos += 16;
        }
        if (pos >= len) return pos;
        char c = b[pos];
        if (c == ' ' || c == '\n' || c == '\r' || c == '\t') { pos++; continue; }
        return pos;
    }
}

int tl_json_expect(tl_json *j, char c, const char *what)
{
    int p = tl_json_peek(j);
    if (p == c) { j->pos++; return 0; }
    if (p == TL_JWS_NEED) return TL_JNEED;
    return tl_json_fail(j, what);
}

/* Validates one UTF-8 sequence at b[pos] (first byte >= 0x80); returns its
 * length, 0 if invalid, -1 if cut off by the window end. */
static int utf8_len(const unsigned char *b, size_t pos, size_t len)
{
    unsigned char c = b[pos];
    int n;
    uint32_t min;
    if (c >= 0xc2 && c <= 0xdf) { n = 2; min = 0x80; }
    else if (c >= 0xe0 && c <= 0xef) { n = 3; min = 0x800; }
    else if (c >= 0xf0 && c <= 0xf4) { n = 4; min = 0x10000; }
    else return 0;
    if (pos + (size_t)n > len) return -1;
    uint32_t cp = c & (0x7f >> n);
    for (int i = 1; i < n; i++) {
        if ((b[pos + i] & 0xc0) != 0x80) return 0;
        cp = cp << 6 | (b[pos + i] & 0x3f);
    }
    if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return 0;
    return n;
}

static inline int hexval(char c)
{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

int tl_json_string_slow(tl_json *j, const char **s, size_t *n, int *esc)
{
    int p = tl_json_peek(j);
    if (p == TL_JWS_NEED) return TL_JNEED;
    if (p != '"') return tl_json_fail(j, "a string");
    const char *b = j->buf;
    size_t len = j->len, start = j->pos + 1, pos = start;
    int has_esc = 0;
    for (;;) {
        while (pos + 16 <= len) {
            unsigned mask = tl_json_mask16_quote(b + pos) | tl_json_mask16_unplain(b + pos);
            if (mask) { pos += (size_t)__builtin_ctz(mask); goto special; }
            pos += 16;
        }
        while (pos < len) {
            unsigned char c = (unsigned char)b[pos];
            if (c == '"' || c == '\\' || c < 0x20 || c >= 0x80) goto special;
            pos++;
        }
        if (need(j)) return TL_JNEED;
        return tl_json_fail_at(j, pos, "unterminated string (truncated file?)");
    special:;
        unsigned char c = (unsigned char)b[pos];
        if (c == '"') {
            *s = b + start;
            *n = pos - start;
            if (esc) *esc = has_esc;
            j->pos = pos + 1;
            return 0;
        }
        if (c == '\\') {
            has_esc = 1;
            if (pos + 1 >= len) {
                if (need(j)) return TL_JNEED;
                return tl_json_fail_at(j, pos, "unterminated string (truncated file?)");
            }
            char e = b[pos + 1];
            if (e == 'u') {
                if (pos + 6 > len) {
                    if (need(j)) return TL_JNEED;
                    return tl_json_fail_at(j, pos, "unterminated string (truncated file?)");
                }
                for (int i = 2; i < 6; i++)
                    if (hexval(b[pos + i]) < 0) return tl_json_fail_at(j, pos, "invalid \\u escape in string");
                pos += 6;
            } else if (e == '"' || e == '\\' || e == '/' || e == 'b' || e == 'f' || e == 'n' || e == 'r' || e == 't') {
                pos += 2;
            } else {
                return tl_json_fail_at(j, pos, "invalid escape '\\%c' in string", e);
            }
            continue;
        }
        if (c < 0x20) return tl_json_fail_at(j, pos, "control character 0x%02x in string", c);
        int ul = utf8_len((const unsigned char *)b, pos, len);
        if (ul == -1) {
            if (need(j)) return TL_JNEED;
            return tl_json_fail_at(j, pos, "invalid UTF-8 in string (truncated sequence)");
        }
        if (ul == 0) return tl_json_fail_at(j, pos, "invalid UTF-8 in string");
        pos += (size_t)ul;
    }
}

static void put_utf8(tl_buf *o, uint32_t cp)
{
    char t[4];
    int n;
    if (cp < 0x80) { t[0] = (char)cp; n = 1; }
    else if (cp < 0x800) { t[0] = (char)(0xc0 | cp >> 6); t[1] = (char)(0x80 | (cp & 0x3f)); n = 2; }
    else if (cp < 0x10000) {
        t[0] = (char)(0xe0 | cp >> 12); t[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
        t[2] = (char)(0x80 | (cp & 0x3f)); n = 3;
    } else {
        t[0] = (char)(0xf0 | cp >> 18); t[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
        t[2] = (char)(0x80 | ((cp >> 6) & 0x3f)); t[3] = (char)(0x80 | (cp & 0x3f)); n = 4;
    }
    tl_buf_append(o, t, (size_t)n);
}

int tl_json_unescape(tl_json *j, const char *s, size_t n, tl_buf *out)
{
    out->n = 0;
    tl_buf_reserve(out, n);
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (c != '\\') { tl_buf_putc(out, c); continue; }
        char e = s[++i];
        switch (e) {
        case 'b': tl_buf_putc(out, '\b'); break;
        case 'f': tl_buf_putc(out, '\f'); break;
        case 'n': tl_buf_putc(out, '\n'); break;
        case 'r': tl_buf_putc(out, '\r'); break;
        case 't': tl_buf_putc(out, '\t'); break;
        case 'u': {
            uint32_t cp = 0;
            for (int k = 1; k <= 4; k++) cp = cp << 4 | (uint32_t)hexval(s[i + k]);
            i += 4;
            if (cp >= 0xd800 && cp <= 0xdbff && i + 6 < n + 1 && s[i + 1] == '\\' && s[i + 2] == 'u') {
                uint32_t lo = 0;
                for (int k = 3; k <= 6; k++) lo = lo << 4 | (uint32_t)hexval(s[i + k]);
                if (lo >= 0xdc00 && lo <= 0xdfff) {
                    cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
                    i += 6;
                }
            }
            if (cp >= 0xd800 && cp <= 0xdfff) cp = 0xfffd; /* lone surrogate */
            put_utf8(out, cp);
            break;
        }
        default: tl_buf_putc(out, e); break;
        }
    }
    if (!out->p) tl_buf_reserve(out, 1);
    out->p[out->n] = 0;
    return 0;
}

/* A byte that may follow a number: the fast paths accept only these and
 * leave everything else (fractions, exponents, garbage) to the full grammar. */
static inline int is_delim(char c)
{
    return c == ',' || c == '}' || c == ']' || c == ' ' || c == '\n' || c == '\r' || c == '\t';
}

static const uint64_t POW10[20] = {1ull, 10ull, 100ull, 1000ull, 10000ull, 100000ull, 1000000ull,
    10000000ull, 100000000ull, 1000000000ull, 10000000000ull, 100000000000ull, 1000000000000ull,
    10000000000000ull, 100000000000000ull, 1000000000000000ull, 10000000000000000ull,
    100000000000000000ull, 1000000000000000000ull, 10000000000000000000ull};

/* Length of the run of ASCII digits at s, at most 16 (16 bytes readable). */
static inline int digit_run16(const char *s)
{
    return __builtin_ctz((~tl_json_mask16_digit(s) & 0xffffu) | 0x10000u);
}

/* Value of the n digits at s (1 <= n <= 8) by SWAR (as in simdjson);
 * reads the 8 bytes ending at s + n, so s + n - 8 must be readable. */
static inline uint64_t parse_upto8(const char *s, int n)
{
    uint64_t v;
    memcpy(&v, s + n - 8, 8);
    if (n < 8) { /* the bytes before s become '0' */
        uint64_t keep = ~0ull << (8 * (8 - n));
        v = (v & keep) | (0x3030303030303030ull & ~keep);
    }
    v -= 0x3030303030303030ull;
    v = v * 10 + (v >> 8);
    v = (((v & 0x000000FF000000FFull) * 0x000F424000000064ull) +
         (((v >> 16) & 0x000000FF000000FFull) * 0x0000271000000001ull)) >> 32;
    return v;
}

/* Value of the n digits at s (1 <= n <= 16), same reading rule. */
static inline uint64_t parse_upto16(const char *s, int n)
{
    if (n <= 8) return parse_upto8(s, n);
    return parse_upto8(s, 8) * POW10[n - 8] + parse_upto8(s + 8, n - 8);
}

/* Scans a JSON number's extent and grammar: returns 0 and *end, TL_JNEED,
 * or an error. */
static int number_extent(tl_json *j, size_t *end)
{
    const char *b = j->buf;
    size_t len = j->len, p = j->pos;
#define AT_END() (p >= len)
#define NEED_OR_FAIL(msg) do { if (need(j)) return TL_JNEED; return tl_json_fail_at(j, p, msg); } while (0)
    if (!AT_END() && b[p] == '-') p++;
    if (AT_END()) NEED_OR_FAIL("expected a digit (truncated number?)");
    if (b[p] == '0') p++;
    else if (b[p] >= '1' && b[p] <= '9') { while (!AT_END() && b[p] >= '0' && b[p] <= '9') p++; }
    else return tl_json_fail(j, "a number");
    if (!AT_END() && b[p] == '.') {
        p++;
        if (AT_END()) NEED_OR_FAIL("expected a digit after '.'");
        if (!(b[p] >= '0' && b[p] <= '9')) return tl_json_fail_at(j, p, "expected a digit after '.'");
        while (!AT_END() && b[p] >= '0' && b[p] <= '9') p++;
    }
    if (!AT_END() && (b[p] == 'e' || b[p] == 'E')) {
        p++;
        if (!AT_END() && (b[p] == '+' || b[p] == '-')) p++;
        if (AT_END()) NEED_OR_FAIL("expected an exponent digit");
        if (!(b[p] >= '0' && b[p] <= '9')) return tl_json_fail_at(j, p, "expected an exponent digit");
        while (!AT_END() && b[p] >= '0' && b[p] <= '9') p++;
    }
    /* A number touching the window end may continue in the next window. */
    if (AT_END() && need(j)) return TL_JNEED;
#undef AT_END
#undef NEED_OR_FAIL
    *end = p;
    return 0;
}

int tl_json_number_span(tl_json *j, const char **s, size_t *n)
{
    int p = tl_json_peek(j);
    if (p == TL_JWS_NEED) return TL_JNEED;
    if (p != '-' && !(p >= '0' && p <= '9')) return tl_json_fail(j, "a number");
    /* Fast path: a plain integer (-?(0|[1-9][0-9]*)) followed by a
     * delimiter, the common case inside shape lists and ids. */
    {
        const char *b = j->buf;
        size_t q = j->pos, len = j->len;
        if (q + 24 <= len) {
            if (b[q] == '-') q++;
            if (b[q] == '0') q++;
            else if (b[q] >= '1' && b[q] <= '9') { while (++q < len && (unsigned)(b[q] - '0') < 10) {} }
            else q = 0;
            if (q && q < len && is_delim(b[q])) {
                *s = b + j->pos;
                *n = q - j->pos;
                j->pos = q;
                return 0;
            }
            /* digits up to the window end: the number goes on in the next */
            if (q == len && need(j)) return TL_JNEED;
        }
    }
    size_t end = j->pos;
    int rc = number_extent(j, &end);
    if (rc) return rc;
    *s = j->buf + j->pos;
    *n = end - j->pos;
    j->pos = end;
    return 0;
}

int tl_json_i64(tl_json *j, int64_t *v)
{
    const char *s;
    size_t n;
    if (tl_json_peek(j) == TL_JWS_NEED) return TL_JNEED;
    {
        /* Fast path: up to 18 digits (always in range) and a delimiter. */
        const char *b = j->buf;
        size_t q = j->pos;
        if (q >= 8 && q + 24 <= j->len) {
            int neg = b[q] == '-';
            q += (size_t)neg;
            int nd = digit_run16(b + q);
            if (nd > 0 && nd < 16 && (b[q] != '0' || nd == 1) && is_delim(b[q + (size_t)nd])) {
                uint64_t acc = parse_upto16(b + q, nd);
                *v = neg ? -(int64_t)acc : (int64_t)acc;
                j->pos = q + (size_t)nd;
                return 0;
            }
        }
    }
    size_t start = j->pos;
    int rc = tl_json_number_span(j, &s, &n);
    if (rc) return rc;
    size_t i = 0;
    int neg = 0;
    if (s[0] == '-') { neg = 1; i = 1; }
    uint64_t acc = 0;
    for (; i < n; i++) {
        char c = s[i];
        if (c < '0' || c > '9')
            return tl_json_fail_at(j, start, "expected an integer, found '%.*s'", (int)(n > 40 ? 40 : n), s);
        if (acc > (UINT64_MAX - 9) / 10) return tl_json_fail_at(j, start, "integer out of range");
        acc = acc * 10 + (uint64_t)(c - '0');
    }
    if (neg ? acc > (uint64_t)INT64_MAX + 1 : acc > (uint64_t)INT64_MAX)
        return tl_json_fail_at(j, start, "integer out of range");
    *v = neg ? (int64_t)(0 - acc) : (int64_t)acc;
    return 0;
}

int tl_json_f64(tl_json *j, double *v)
{
    const char *s;
    size_t n;
    int rc = tl_json_number_span(j, &s, &n);
    if (rc) return rc;
    char tmp[128];
    if (n >= sizeof tmp) return tl_json_fail_at(j, j->pos - n, "number too long");
    memcpy(tmp, s, n);
    tmp[n] = 0;
    *v = strtod(tmp, NULL);
    return 0;
}

int tl_json_us_to_ns(tl_json *j, int64_t *v, double *sub_us)
{
    int p = tl_json_peek(j);
    if (p == TL_JWS_NEED) return TL_JNEED;
    const char *b = j->buf;
    size_t start = j->pos;
    /* Fastest path: up to 15 digits, '.', exactly 3 digits, a delimiter
     * (how Kineto writes ts and dur). */
    if (start >= 8 && start + 40 <= j->len) {
        size_t q = start;
        int neg = b[q] == '-';
        q += (size_t)neg;
        int nd = digit_run16(b + q);
        if (nd > 0 && nd <= 15 && (b[q] != '0' || nd == 1) && b[q + (size_t)nd] == '.' &&
            digit_run16(b + q + (size_t)nd + 1) == 3 && is_delim(b[q + (size_t)nd + 4])) {
            const char *f = b + q + nd + 1;
            uint64_t ns = parse_upto16(b + q, nd) * 1000 +
                          (uint64_t)((f[0] - '0') * 100 + (f[1] - '0') * 10 + (f[2] - '0'));
            *v = neg ? -(int64_t)ns : (int64_t)ns;
            j->pos = q + (size_t)nd + 4;
            return 0;
        }
    }
    /* Fast path: [-]digits[.ddd] followed by a delimiter. */
    {
        size_t q = start;
        int neg = 0;
        if (q < j->len && b[q] == '-') { neg = 1; q++; }
        uint64_t ip = 0;
        size_t d0 = q;
        if (q + 32 <= j->len && digit_run16(b + q) >= 8) { ip = parse_upto8(b + q, 8); q += 8; }
        while (q < j->len && (unsigned)(b[q] - '0') < 10 && q - d0 < 15) ip = ip * 10 + (uint64_t)(b[q++] - '0');
        if (q > d0 && q < j->len && (q - d0 == 1 || b[d0] != '0')) {
            uint64_t frac = 0;
            int fd = 0;
            if (b[q] == '.') {
                size_t f0 = ++q;
                while (q < j->len && (unsigned)(b[q] - '0') < 10 && fd < 3) { frac = frac * 10 + (uint64_t)(b[q++] - '0'); fd++; }
                if (q == f0) goto slow;
            }
            if (q < j->len && is_delim(b[q])) {
                uint64_t ns = ip * 1000 + frac * POW10[3 - fd];
                *v = neg ? -(int64_t)ns : (int64_t)ns;
                j->pos = q;
                return 0;
            }
        }
    }
slow:;
    const char *s;
    size_t n;
    int rc = tl_json_number_span(j, &s, &n);
    if (rc) return rc;
    /* Exact decimal: mantissa digits m (up to 19 significant), exponent e. */
    size_t i = 0;
    int neg = 0;
    if (s[0] == '-') { neg = 1; i = 1; }
    uint64_t m = 0;
    int e = 0, sig = 0, sticky = 0, dropped_first = -1;
    int in_frac = 0;
    for (; i < n && s[i] != 'e' && s[i] != 'E'; i++) {
        if (s[i] == '.') { in_frac = 1; continue; }
        int d = s[i] - '0';
        if (sig < 19) {
            if (m || d) { m = m * 10 + (uint64_t)d; if (m) sig++; }
            if (in_frac) e--;
        } else {
            if (dropped_first < 0) dropped_first = d; else if (d) sticky = 1;
            if (!in_frac) e++;
        }
    }
    if (i < n) {
        int ee = atoi(s + i + 1);
        if (ee > 400) ee = 400;
        if (ee < -400) ee = -400;
        e += ee;
    }
    int scale = e + 3; /* ns = m * 10^scale */
    uint64_t ns;
    if (m == 0) ns = 0;
    else if (scale >= 0) {
        if (scale > 19) return tl_json_fail_at(j, start, "timestamp out of range");
        __uint128_t r = (__uint128_t)m * POW10[scale];
        /* digits past the 19th: below the ns when scale is 0 (rounded half
         * to even), else the value is past the range anyway */
        if (dropped_first >= 0 && scale == 0)
            r += dropped_first > 5 || (dropped_first == 5 && (sticky || (m & 1)));
        if (r > (__uint128_t)INT64_MAX) return tl_json_fail_at(j, start, "timestamp out of range");
        ns = (uint64_t)r;
        if (dropped_first >= 0 && scale) return tl_json_fail_at(j, start, "timestamp out of range");
    } else {
        int sh = -scale;
        if (sh > 19) ns = 0;
        else {
            /* Round half to even; dropped low digits break ties upward. */
            uint64_t div = POW10[sh], q = m / div, rem = m % div, half = div / 2;
            int lower_nonzero = sticky || dropped_first > 0;
            int up = rem > half || (rem == half && (lower_nonzero || (q & 1)));
            ns = q + (uint64_t)up;
        }
    }
    /* digits below the ns that are not all zero: the µs double of the text */
    if (sub_us && ((scale < 0 && m && (-scale > 19 || m % POW10[-scale])) || dropped_first > 0 || sticky)) {
        char small[64], *tmp = n < sizeof small ? small : tl_xmalloc(n + 1);
        memcpy(tmp, s, n);
        tmp[n] = 0;
        *sub_us = strtod(tmp, NULL);
        if (tmp != small) free(tmp);
    }
    *v = neg ? -(int64_t)ns : (int64_t)ns;
    return 0;
}

int tl_json_literal(tl_json *j, const char *lit)
{
    int p = tl_json_peek(j);
    if (p == TL_JWS_NEED) return TL_JNEED;
    size_t n = strlen(lit);
    for (size_t i = 0; i < n; i++) {
        if (j->pos + i >= j->len) {
            if (need(j)) return TL_JNEED;
            return tl_json_fail_at(j, j->pos + i, "unexpected end of input in '%s'", lit);
        }
        if (j->buf[j->pos + i] != lit[i]) return tl_json_fail(j, "a JSON value");
    }
    j->pos += n;
    return 0;
}

static int skip_value(tl_json *j, int depth)
{
    if (depth > TL_JSON_MAX_DEPTH)
        return tl_json_fail_at(j, j->pos, "nesting deeper than %d levels", TL_JSON_MAX_DEPTH);
    int p = tl_json_peek(j);
    if (p == TL_JWS_NEED) return TL_JNEED;
    int rc;
    switch (p) {
    case '"': {
        const char *s;
        size_t n;
        return tl_json_string(j, &s, &n, NULL);
    }
    case '{': {
        j->pos++;
        int first = 1;
        const char *k;
        size_t kn;
        for (;;) {
            rc = tl_json_obj_next(j, &first, &k, &kn);
            if (rc) return rc;
            if (!k) return 0;
            rc = skip_value(j, depth + 1);
            if (rc) return rc;
        }
    }
    case '[': {
        j->pos++;
        int first = 1, more;
        for (;;) {
            rc = tl_json_arr_next(j, &first, &more);
            if (rc) return rc;
            if (!more) return 0;
            rc = skip_value(j, depth + 1);
            if (rc) return rc;
        }
    }
    case 't': return tl_json_literal(j, "true");
    case 'f': return tl_json_literal(j, "false");
    case 'n': return tl_json_literal(j, "null");
    case -1: return tl_json_fail(j, "a JSON value");
    default: {
        const char *s;
        size_t n;
        return tl_json_number_span(j, &s, &n);
    }
    }
}

static int skip_min_value(tl_json *j, tl_buf *o, int depth)
{
    if (depth > TL_JSON_MAX_DEPTH)
        return tl_json_fail_at(j, j->pos, "nesting deeper than %d levels", TL_JSON_MAX_DEPTH);
    int p = tl_json_peek(j);
    if (p == TL_JWS_NEED) return TL_JNEED;
    int rc;
    const char *s;
    size_t n;
    if (p == '"') {
        size_t st = j->pos;
        rc = tl_json_string(j, &s, &n, NULL);
        if (rc) return rc;
        tl_buf_append(o, j->buf + st, j->pos - st);
        return 0;
    }
    if (p == '[' || p == '{') {
        char close = p == '[' ? ']' : '}';
        j->pos++;
        tl_buf_putc_fast(o, (char)p);
        int first = 1, more;
        for (;;) {
            if (close == ']') {
                rc = tl_json_arr_next(j, &first, &more);
                if (rc) return rc;
                if (!more) break;
                if (o->p[o->n - 1] != '[') tl_buf_putc_fast(o, ',');
            } else {
                const char *k;
                size_t kn;
                rc = tl_json_obj_next(j, &first, &k, &kn);
                if (rc) return rc;
                if (!k) break;
                if (o->p[o->n - 1] != '{') tl_buf_putc_fast(o, ',');
                tl_buf_putc_fast(o, '"');
                tl_buf_append(o, k, kn);
                tl_buf_append(o, "\":", 2);
            }
            rc = skip_min_value(j, o, depth + 1);
            if (rc) return rc;
        }
        tl_buf_putc_fast(o, close);
        return 0;
    }
    size_t st = j->pos;
    rc = skip_value(j, depth);
    if (rc) return rc;
    tl_buf_append(o, j->buf + st, j->pos - st);
    return 0;
}

/* Appends n bytes at s to o, which has 64 bytes of room; s has at least
 * 32 readable bytes (the fast path's slack), so short tokens are copied
 * as a fixed 16 bytes, which the compiler turns into one move instead of
 * a variable-length memcpy call. */
static inline void copy_token(tl_buf *o, const char *s, size_t n)
{
    if (n <= 16) {
        memcpy(o->p + o->n, s, 16);
    } else {
        tl_buf_reserve(o, n + 64);
        memcpy(o->p + o->n, s, n);
    }
    o->n += n;
}

/* Fast path of tl_json_skip_min for the values Kineto promotes (Input
 * Dims, Input type, Input Strides, Concrete Inputs, grid, block): arrays,
 * nested to any depth, of plain integers and of ASCII strings without
 * escapes. It accepts only that subset of JSON, so whatever it accepts is
 * valid; on anything else (fractions, escapes, non-ASCII, literals,
 * objects, the window end, deep nesting) it returns 0 without moving
 * j->pos and the general path starts over. On success the minified text
 * is in o (NUL-terminated) and it returns 1. */
static int min_fast(tl_json *j, tl_buf *o)
{
    const char *b = j->buf;
    size_t p = j->pos, len = j->len;
    if (p + 64 > len) return 0;
    const size_t lim = len - 32; /* reads happen at < lim + 32 */
    o->n = 0;
    int depth = 0;
    for (;;) {
        /* a value */
        if (p >= lim) return 0;
        if (o->n + 64 > o->cap) tl_buf_reserve(o, 64);
        p = tl_json_ws_fast(b, p, len);
        if (p >= lim) return 0;
        char c = b[p];
        if (c == '[') {
            if (++depth > TL_JSON_MAX_DEPTH) return 0;
            o->p[o->n++] = '[';
            p = tl_json_ws_fast(b, p + 1, len);
            if (p >= lim) return 0;
            if (b[p] != ']') continue;
            o->p[o->n++] = ']';
            p++;
            depth--;
        } else if (c == '"') {
            size_t q = p + 1;
            for (;;) {
                if (q >= lim) return 0;
                unsigned m = tl_json_mask16_quote(b + q) | tl_json_mask16_unplain(b + q);
                if (!m) { q += 16; continue; }
                q += (size_t)__builtin_ctz(m);
                if (b[q] != '"') return 0;
                break;
            }
            q++;
            copy_token(o, b + p, q - p);
            p = q;
        } else {
            size_t q = p;
            if (b[q] == '-') q++;
            if (b[q] == '0') q++;
            else if (b[q] >= '1' && b[q] <= '9') { while (++q < lim && (unsigned)(b[q] - '0') < 10) {} }
            else return 0;
            if (q >= lim || !is_delim(b[q])) return 0;
            copy_token(o, b + p, q - p);
            p = q;
        }
        /* after a value: ',' or closing brackets */
        for (;;) {
            if (depth == 0) {
                j->pos = p;
                o->p[o->n] = 0;
                return 1;
            }
            if (o->n + 64 > o->cap) tl_buf_reserve(o, 64);
            p = tl_json_ws_fast(b, p, len);
            if (p >= lim) return 0;
            if (b[p] == ']') { o->p[o->n++] = ']'; p++; depth--; continue; }
            if (b[p] != ',') return 0;
            o->p[o->n++] = ',';
            p++;
            break;
        }
    }
}

int tl_json_skip_min(tl_json *j, tl_buf *out)
{
    if (min_fast(j, out)) return 0;
    out->n = 0;
    tl_buf_reserve(out, 64);
    int rc = skip_min_value(j, out, 1);
    if (rc == 0) out->p[out->n] = 0;
    return rc;
}

int tl_json_skip(tl_json *j, const char **s, size_t *n)
{
    int p = tl_json_peek(j);
    if (p == TL_JWS_NEED) return TL_JNEED;
    size_t start = j->pos;
    const char *ts;
    size_t tn;
    /* scalars directly (most skipped args values) */
    int rc = p == '"'                                 ? tl_json_string(j, &ts, &tn, NULL)
             : (p >= '0' && p <= '9') || p == '-' ? tl_json_number_span(j, &ts, &tn)
                                                      : skip_value(j, 1);
    if (rc) return rc;
    if (s) *s = j->buf + start;
    if (n) *n = j->pos - start;
    return 0;
}

int tl_json_skip_validated(tl_json *j, const char **s, size_t *n)
{
    int p = tl_json_peek(j);
    const char *b = j->buf;
    size_t q = j->pos;
    if ((p >= '0' && p <= '9') || p == '-') {
        while (q < j->len && b[q] != ',' && b[q] != '}' && b[q] != ']' && (unsigned char)b[q] > ' ') q++;
    } else if (p == '[') {
        int depth = 0; /* number lists ("grid", "block"); strings and objects are not scanned */
        for (; q < j->len; q++) {
            char ch = b[q];
            if (ch == '[') depth++;
            else if (ch == ']' && --depth == 0) { q++; break; }
            else if (ch == '"' || ch == '{') { q = j->len; break; }
        }
        if (depth) q = j->len;
    } else {
        return tl_json_skip(j, s, n);
    }
    if (q >= j->len && !j->eof) return tl_json_skip(j, s, n); /* may continue in the next window */
    if (q == j->pos || (p == '[' && q >= j->len)) return tl_json_skip(j, s, n);
    if (s) *s = b + j->pos;
    if (n) *n = q - j->pos;
    j->pos = q;
    return 0;
}

int tl_json_obj_next_slow(tl_json *j, int *first, const char **k, size_t *kn)
{
    int p = tl_json_peek(j);
    if (p == TL_JWS_NEED) return TL_JNEED;
    if (*first) {
        if (p == '}') { j->pos++; *k = NULL; return 0; }
    } else {
        if (p == '}') { j->pos++; *k = NULL; return 0; }
        if (p != ',') return tl_json_fail(j, "',' or '}' in object");
        j->pos++;
    }
    int rc = tl_json_string(j, k, kn, NULL);
    if (rc) {
        if (rc < 0 && tl_json_peek(j) != '"') return tl_json_fail(j, "a key string");
        return rc;
    }
    rc = tl_json_expect(j, ':', "':' after key");
    if (rc) return rc;
    *first = 0;
    return 0;
}

int tl_json_arr_next_slow(tl_json *j, int *first, int *more)
{
    int p = tl_json_peek(j);
    if (p == TL_JWS_NEED) return TL_JNEED;
    if (p == ']') { j->pos++; *more = 0; return 0; }
    if (!*first) {
        if (p != ',') return tl_json_fail(j, "',' or ']' in array");
        j->pos++;
        p = tl_json_peek(j);
        if (p == TL_JWS_NEED) return TL_JNEED;
        if (p == ']') return tl_json_fail(j, "a value after ','");
    }
    *first = 0;
    *more = 1;
    return 0;
}

int tl_json_skip_ws_stream(tl_json *j)
{
    while (tl_json_peek(j) == TL_JWS_NEED) {
        int rc = tl_json_refill(j, j->pos);
        if (rc) return rc;
    }
    return 0;
}

/* The window ends inside the separator: takes it again from j->pos,
 * piece by piece, dropping the whitespace around the ','. */
int tl_json_arr_next_stream_slow(tl_json *j, int *first, int *more)
{
    int rc;
    if ((rc = tl_json_skip_ws_stream(j))) return rc;
    int p = tl_json_peek(j);
    if (p == ']') { j->pos++; *more = 0; return 0; }
    if (!*first) {
        if (p != ',') return tl_json_fail(j, "',' or ']' in array");
        j->pos++;
        if ((rc = tl_json_skip_ws_stream(j))) return rc;
        if (tl_json_peek(j) == ']') return tl_json_fail(j, "a value after ','");
    }
    *first = 0;
    *more = 1;
    return 0;
}
