/* pyval.c — JSON / Python-literal parser and Python repr()/str() writers for
 * the tl_pv value tree (see pyval.h). Recursive descent with an explicit depth
 * bound; every allocation goes to the caller's arena, so a failed parse leaks
 * nothing that outlives the arena. */
#include "query/core/pyval.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct pv_parser {
    const char *s;
    size_t n, i;
    tl_arena *a;
    tl_err *err;
    int depth;
} pv_parser;

static int pv_fail(pv_parser *p, const char *what)
{
    return tl_errf(p->err, TL_EFORMAT, "value text, byte %zu: %s", p->i, what);
}

static void pv_ws(pv_parser *p)
{
    while (p->i < p->n && (p->s[p->i] == ' ' || p->s[p->i] == '\t' || p->s[p->i] == '\n' ||
                           p->s[p->i] == '\r'))
        p->i++;
}

static tl_pv *pv_alloc(tl_arena *a, tl_pv_kind k)
{
    tl_pv *v = tl_arena_zalloc(a, sizeof *v);
    v->kind = (uint8_t)k;
    return v;
}

tl_pv *tl_pv_new_none(tl_arena *a) { return pv_alloc(a, TL_PV_NONE); }
tl_pv *tl_pv_new_bool(tl_arena *a, int b)
{
    tl_pv *v = pv_alloc(a, TL_PV_BOOL);
    v->u.b = b ? 1 : 0;
    return v;
}
tl_pv *tl_pv_new_int(tl_arena *a, int64_t x)
{
    tl_pv *v = pv_alloc(a, TL_PV_INT);
    v->u.i.v = x;
    return v;
}
tl_pv *tl_pv_new_float(tl_arena *a, double f)
{
    tl_pv *v = pv_alloc(a, TL_PV_FLOAT);
    v->u.f = f;
    return v;
}
tl_pv *tl_pv_new_strn(tl_arena *a, const char *s, size_t n)
{
    tl_pv *v = pv_alloc(a, TL_PV_STR);
    v->u.s.p = tl_arena_strndup(a, s, n);
    v->u.s.n = n;
    return v;
}
tl_pv *tl_pv_new_str(tl_arena *a, const char *s)
{
    return s ? tl_pv_new_strn(a, s, strlen(s)) : tl_pv_new_none(a);
}
tl_pv *tl_pv_new_seq(tl_arena *a, tl_pv_kind kind, size_t n)
{
    tl_pv *v = pv_alloc(a, kind);
    v->u.seq.n = n;
    v->u.seq.v = tl_arena_zalloc(a, (n ? n : 1) * sizeof(tl_pv *));
    if (kind == TL_PV_DICT) v->u.seq.k = tl_arena_zalloc(a, (n ? n : 1) * sizeof(tl_pv *));
    return v;
}

/* ---- string literals --------------------------------------------------- */

static void put_utf8(tl_buf *b, uint32_t cp)
{
    char o[4];
    size_t n;
    if (cp < 0x80) { o[0] = (char)cp; n = 1; }
    else if (cp < 0x800) { o[0] = (char)(0xc0 | (cp >> 6)); o[1] = (char)(0x80 | (cp & 0x3f)); n = 2; }
    else if (cp < 0x10000) {
        o[0] = (char)(0xe0 | (cp >> 12));
        o[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
        o[2] = (char)(0x80 | (cp & 0x3f));
        n = 3;
    } else {
        if (cp > 0x10ffff) cp = 0xfffd;
        o[0] = (char)(0xf0 | (cp >> 18));
        o[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
        o[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
        o[3] = (char)(0x80 | (cp & 0x3f));
        n = 4;
    }
    tl_buf_append(b, o, n);
}

static int hexval(char c)
{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

/* Reads `digits` hex digits at p->i; -1 on malformed input. */
static long pv_hex(pv_parser *p, int digits)
{
    if (p->n - p->i < (size_t)digits) return -1;
    long v = 0;
    for (int k = 0; k < digits; k++) {
        int h = hexval(p->s[p->i + (size_t)k]);
        if (h < 0) return -1;
        v = v * 16 + h;
    }
    p->i += (size_t)digits;
    return v;
}

static int pv_string(pv_parser *p, tl_pv **out)
{
    char q = p->s[p->i++];
    tl_buf b = {0};
    int rc = 0;
    for (;;) {
        if (p->i >= p->n) { rc = pv_fail(p, "unterminated string"); goto done; }
        char c = p->s[p->i++];
        if (c == q) break;
        if (c != '\\') { tl_buf_putc(&b, c); continue; }
        if (p->i >= p->n) { rc = pv_fail(p, "unterminated escape"); goto done; }
        char e = p->s[p->i++];
        long cp;
        switch (e) {
        case 'n': tl_buf_putc(&b, '\n'); break;
        case 't': tl_buf_putc(&b, '\t'); break;
        case 'r': tl_buf_putc(&b, '\r'); break;
        case 'b': tl_buf_putc(&b, '\b'); break;
        case 'f': tl_buf_putc(&b, '\f'); break;
        case 'v': tl_buf_putc(&b, '\v'); break;
        case 'a': tl_buf_putc(&b, '\a'); break;
        case '\\': case '\'': case '"': case '/': tl_buf_putc(&b, e); break;
        case '\n': break; /* Python line continuation */
        case 'x':
            if ((cp = pv_hex(p, 2)) < 0) { rc = pv_fail(p, "bad \\x escape"); goto done; }
            put_utf8(&b, (uint32_t)cp);
            break;
        case 'u':
            if ((cp = pv_hex(p, 4)) < 0) { rc = pv_fail(p, "bad \\u escape"); goto done; }
            /* JSON writes astral characters as surrogate pairs. */
            if (cp >= 0xd800 && cp < 0xdc00 && p->i + 6 <= p->n && p->s[p->i] == '\\' &&
                p->s[p->i + 1] == 'u') {
                size_t save = p->i;
                p->i += 2;
                long lo = pv_hex(p, 4);
                if (lo >= 0xdc00 && lo < 0xe000) cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
                else p->i = save;
            }
            put_utf8(&b, (uint32_t)cp);
            break;
        case 'U':
            if ((cp = pv_hex(p, 8)) < 0) { rc = pv_fail(p, "bad \\U escape"); goto done; }
            put_utf8(&b, (uint32_t)cp);
            break;
        default:
            if (e >= '0' && e <= '7') { /* Python octal escape, up to 3 digits */
                long v = e - '0';
                for (int k = 0; k < 2 && p->i < p->n && p->s[p->i] >= '0' && p->s[p->i] <= '7'; k++)
                    v = v * 8 + (p->s[p->i++] - '0');
                put_utf8(&b, (uint32_t)v);
            } else { /* Python keeps unknown escapes verbatim */
                tl_buf_putc(&b, '\\');
                tl_buf_putc(&b, e);
            }
        }
    }
    *out = tl_pv_new_strn(p->a, b.p ? b.p : "", b.n);
done:
    tl_buf_free(&b);
    return rc;
}

/* ---- numbers and names ------------------------------------------------- */

static int pv_number(pv_parser *p, int neg, tl_pv **out)
{
    size_t st = p->i;
    int isfloat = 0;
    char tmp[128];
    size_t k = 0;
    if (neg) tmp[k++] = '-';
    while (p->i < p->n) {
        char c = p->s[p->i];
        if (isdigit((unsigned char)c)) {
        } else if (c == '.') {
            isfloat = 1;
        } else if (c == 'e' || c == 'E') {
            isfloat = 1;
            if (p->i + 1 < p->n && (p->s[p->i + 1] == '+' || p->s[p->i + 1] == '-')) {
                if (k + 2 >= sizeof tmp) return pv_fail(p, "number too long");
                tmp[k++] = c;
                c = p->s[++p->i];
            }
        } else if (c == '_') {
            p->i++;
            continue;
        } else {
            break;
        }
        if (k + 2 >= sizeof tmp) return pv_fail(p, "number too long");
        tmp[k++] = c;
        p->i++;
    }
    tmp[k] = 0;
    if (p->i == st) return pv_fail(p, "expected a value");
    char *end;
    if (isfloat) {
        errno = 0;
        double f = strtod(tmp, &end);
        if (*end) return pv_fail(p, "malformed number");
        *out = tl_pv_new_float(p->a, f);
        return 0;
    }
    errno = 0;
    long long v = strtoll(tmp, &end, 10);
    if (*end) return pv_fail(p, "malformed number");
    tl_pv *r = tl_pv_new_int(p->a, 0);
    if (errno == ERANGE) {
        /* Python ints are unbounded: keep the digits (without leading zeros). */
        const char *d = tmp + (neg ? 1 : 0);
        while (d[0] == '0' && d[1]) d++;
        r->u.i.big = tl_arena_printf(p->a, "%s%s", neg ? "-" : "", d);
    } else {
        r->u.i.v = v;
    }
    *out = r;
    return 0;
}

static int pv_value(pv_parser *p, tl_pv **out);

static int name_is(const char *s, size_t n, const char *lit)
{
    return strlen(lit) == n && memcmp(s, lit, n) == 0;
}

static int pv_name(pv_parser *p, int neg, tl_pv **out)
{
    size_t st = p->i;
    while (p->i < p->n && (isalnum((unsigned char)p->s[p->i]) || p->s[p->i] == '_' || p->s[p->i] == '.'))
        p->i++;
    const char *s = p->s + st;
    size_t n = p->i - st;
    if (name_is(s, n, "Infinity") || name_is(s, n, "inf")) {
        *out = tl_pv_new_float(p->a, neg ? -INFINITY : INFINITY);
        return 0;
    }
    if (name_is(s, n, "NaN") || name_is(s, n, "nan")) {
        *out = tl_pv_new_float(p->a, NAN);
        return 0;
    }
    if (neg) return pv_fail(p, "'-' before a name");
    if (name_is(s, n, "True") || name_is(s, n, "true")) { *out = tl_pv_new_bool(p->a, 1); return 0; }
    if (name_is(s, n, "False") || name_is(s, n, "false")) { *out = tl_pv_new_bool(p->a, 0); return 0; }
    if (name_is(s, n, "None") || name_is(s, n, "null")) { *out = tl_pv_new_none(p->a); return 0; }
    int isnp = (n > 3 && memcmp(s, "np.", 3) == 0) || (n > 6 && memcmp(s, "numpy.", 6) == 0);
    if (isnp && (name_is(s, n, "np.True_") || name_is(s, n, "numpy.True_"))) {
        *out = tl_pv_new_bool(p->a, 1);
        (*out)->np = 1;
        return 0;
    }
    if (isnp && (name_is(s, n, "np.False_") || name_is(s, n, "numpy.False_"))) {
        *out = tl_pv_new_bool(p->a, 0);
        (*out)->np = 1;
        return 0;
    }
    pv_ws(p);
    if (isnp && p->i < p->n && p->s[p->i] == '(') {
        /* NumPy scalar repr: np.float64(1.5), np.int64(3), np.str_('x') */
        p->i++;
        int rc = pv_value(p, out);
        if (rc) return rc;
        pv_ws(p);
        if (p->i >= p->n || p->s[p->i] != ')') return pv_fail(p, "expected ')'");
        p->i++;
        if (*out && (*out)->kind != TL_PV_STR) (*out)->np = 1;
        return 0;
    }
    p->i = st;
    return pv_fail(p, "unknown name");
}

/* ---- containers -------------------------------------------------------- */

typedef TL_VEC(tl_pv *) pv_vec;

static tl_pv *pv_finish(pv_parser *p, tl_pv_kind kind, pv_vec *items, pv_vec *keys)
{
    tl_pv *v = tl_pv_new_seq(p->a, kind, items->n);
    if (items->n) memcpy(v->u.seq.v, items->v, items->n * sizeof(tl_pv *));
    if (kind == TL_PV_DICT && items->n) memcpy(v->u.seq.k, keys->v, items->n * sizeof(tl_pv *));
    return v;
}

static int pv_container(pv_parser *p, tl_pv **out)
{
    char open = p->s[p->i++];
    char close = open == '[' ? ']' : open == '(' ? ')' : '}';
    pv_vec items = {0}, keys = {0};
    int rc = 0, saw_comma = 0;
    for (;;) {
        pv_ws(p);
        if (p->i >= p->n) { rc = pv_fail(p, "unterminated container"); goto done; }
        if (p->s[p->i] == close) { p->i++; break; }
        if (items.n && !saw_comma) { rc = pv_fail(p, "expected ','"); goto done; }
        tl_pv *v = NULL, *k = NULL;
        if (open == '{') {
            if ((rc = pv_value(p, &k))) goto done;
            pv_ws(p);
            if (p->i >= p->n || p->s[p->i] != ':') { rc = pv_fail(p, "expected ':'"); goto done; }
            p->i++;
        }
        if ((rc = pv_value(p, &v))) goto done;
        tl_vec_push(&items, v);
        if (open == '{') tl_vec_push(&keys, k);
        pv_ws(p);
        saw_comma = 0;
        if (p->i < p->n && p->s[p->i] == ',') {
            saw_comma = 1;
            p->i++;
        }
    }
    if (open == '(' && items.n == 1 && !saw_comma)
        *out = items.v[0]; /* (x) is just x */
    else
        *out = pv_finish(p, open == '[' ? TL_PV_LIST : open == '(' ? TL_PV_TUPLE : TL_PV_DICT,
                         &items, &keys);
done:
    tl_vec_free(&items);
    tl_vec_free(&keys);
    return rc;
}

static int pv_value(pv_parser *p, tl_pv **out)
{
    pv_ws(p);
    if (p->i >= p->n) return pv_fail(p, "expected a value");
    if (++p->depth > TL_PV_MAX_DEPTH) return pv_fail(p, "nesting too deep");
    int rc;
    char c = p->s[p->i];
    if (c == '[' || c == '(' || c == '{') {
        rc = pv_container(p, out);
    } else if (c == '"' || c == '\'') {
        rc = pv_string(p, out);
    } else {
        int neg = 0;
        if (c == '-' || c == '+') {
            neg = c == '-';
            p->i++;
            pv_ws(p);
            if (p->i >= p->n) { p->depth--; return pv_fail(p, "expected a number"); }
            c = p->s[p->i];
        }
        if (isdigit((unsigned char)c) || c == '.') rc = pv_number(p, neg, out);
        else if (isalpha((unsigned char)c) || c == '_') rc = pv_name(p, neg, out);
        else rc = pv_fail(p, "unexpected character");
    }
    p->depth--;
    return rc;
}

int tl_pv_parse(tl_arena *a, const char *text, size_t n, tl_pv **out, tl_err *err)
{
    pv_parser p = {.s = text ? text : "", .n = text ? n : 0, .a = a, .err = err};
    tl_pv *v = NULL;
    int rc = pv_value(&p, &v);
    if (rc) return rc;
    pv_ws(&p);
    if (p.i != p.n) return pv_fail(&p, "trailing characters");
    *out = v;
    return 0;
}

/* ---- writers ------------------------------------------------------------ */

static void write_num_wrapped(tl_buf *b, const char *pre, const char *txt, int np)
{
    if (np) tl_buf_puts(b, pre);
    tl_buf_puts(b, txt);
    if (np) tl_buf_putc(b, ')');
}

void tl_pv_write_repr(tl_buf *b, const tl_pv *v, unsigned flags)
{
    char num[48];
    if (!v || v->kind == TL_PV_NONE) {
        tl_buf_puts(b, "None");
        return;
    }
    switch ((tl_pv_kind)v->kind) {
    case TL_PV_NONE:
        break;
    case TL_PV_BOOL:
        tl_buf_puts(b, v->np ? (v->u.b ? "np.True_" : "np.False_") : (v->u.b ? "True" : "False"));
        break;
    case TL_PV_INT:
        if (v->u.i.big) write_num_wrapped(b, "np.int64(", v->u.i.big, v->np);
        else {
            snprintf(num, sizeof num, "%lld", (long long)v->u.i.v);
            write_num_wrapped(b, "np.int64(", num, v->np);
        }
        break;
    case TL_PV_FLOAT:
        tl_fmt_pyfloat(v->u.f, num);
        write_num_wrapped(b, "np.float64(", num, v->np);
        break;
    case TL_PV_STR:
        tl_buf_pystr(b, v->u.s.p, v->u.s.n);
        break;
    case TL_PV_LIST:
    case TL_PV_TUPLE: {
        int tup = v->kind == TL_PV_TUPLE || (flags & TL_PV_TUPLES);
        tl_buf_putc(b, tup ? '(' : '[');
        for (size_t i = 0; i < v->u.seq.n; i++) {
            if (i) tl_buf_puts(b, ", ");
            tl_pv_write_repr(b, v->u.seq.v[i], flags);
        }
        if (tup && v->u.seq.n == 1) tl_buf_putc(b, ',');
        tl_buf_putc(b, tup ? ')' : ']');
        break;
    }
    case TL_PV_DICT:
        tl_buf_putc(b, '{');
        for (size_t i = 0; i < v->u.seq.n; i++) {
            if (i) tl_buf_puts(b, ", ");
            tl_pv_write_repr(b, v->u.seq.k[i], flags);
            tl_buf_puts(b, ": ");
            tl_pv_write_repr(b, v->u.seq.v[i], flags);
        }
        tl_buf_putc(b, '}');
        break;
    }
}

void tl_pv_write_str(tl_buf *b, const tl_pv *v, unsigned flags)
{
    if (v && v->kind == TL_PV_STR) tl_buf_append(b, v->u.s.p, v->u.s.n);
    else tl_pv_write_repr(b, v, flags);
}

char *tl_pv_repr(tl_arena *a, const tl_pv *v, unsigned flags)
{
    tl_buf b = {0};
    tl_pv_write_repr(&b, v, flags);
    char *s = tl_arena_strndup(a, b.p ? b.p : "", b.n);
    tl_buf_free(&b);
    return s;
}

int tl_pv_reformat(tl_arena *a, const char *text, size_t n, unsigned flags, char **out, tl_err *err)
{
    tl_pv *v;
    int rc = tl_pv_parse(a, text, n, &v, err);
    if (rc) return rc;
    *out = tl_pv_repr(a, v, flags);
    return 0;
}

tl_pv *tl_pv_to_tuple(tl_arena *a, const tl_pv *v)
{
    if (!v) return NULL;
    if (v->kind != TL_PV_LIST && v->kind != TL_PV_TUPLE && v->kind != TL_PV_DICT) return (tl_pv *)v;
    tl_pv *r = tl_pv_new_seq(a, v->kind == TL_PV_DICT ? TL_PV_DICT : TL_PV_TUPLE, v->u.seq.n);
    for (size_t i = 0; i < v->u.seq.n; i++) {
        r->u.seq.v[i] = tl_pv_to_tuple(a, v->u.seq.v[i]);
        if (v->kind == TL_PV_DICT) r->u.seq.k[i] = v->u.seq.k[i];
    }
    return r;
}

/* ---- access ------------------------------------------------------------- */

size_t tl_pv_len(const tl_pv *v)
{
    if (!v) return 0;
    if (v->kind == TL_PV_LIST || v->kind == TL_PV_TUPLE || v->kind == TL_PV_DICT) return v->u.seq.n;
    return 0;
}

const tl_pv *tl_pv_at(const tl_pv *v, long i)
{
    if (!tl_pv_is_seq(v)) return NULL;
    long n = (long)v->u.seq.n;
    if (i < 0) i += n;
    if (i < 0 || i >= n) return NULL;
    return v->u.seq.v[i];
}

const tl_pv *tl_pv_get(const tl_pv *d, const char *key)
{
    if (!d || d->kind != TL_PV_DICT) return NULL;
    const tl_pv *r = NULL;
    size_t kn = strlen(key);
    for (size_t i = 0; i < d->u.seq.n; i++) {
        const tl_pv *k = d->u.seq.k[i];
        if (k && k->kind == TL_PV_STR && k->u.s.n == kn && memcmp(k->u.s.p, key, kn) == 0)
            r = d->u.seq.v[i];
    }
    return r;
}

int tl_pv_truthy(const tl_pv *v)
{
    if (!v) return 0;
    switch ((tl_pv_kind)v->kind) {
    case TL_PV_NONE: return 0;
    case TL_PV_BOOL: return v->u.b;
    case TL_PV_INT: return v->u.i.big ? 1 : v->u.i.v != 0;
    case TL_PV_FLOAT: return v->u.f != 0;
    case TL_PV_STR: return v->u.s.n != 0;
    default: return v->u.seq.n != 0;
    }
}

int tl_pv_num(const tl_pv *v, double *out)
{
    if (!v) return -1;
    if (v->kind == TL_PV_BOOL) { *out = v->u.b; return 0; }
    if (v->kind == TL_PV_INT) { *out = v->u.i.big ? strtod(v->u.i.big, NULL) : (double)v->u.i.v; return 0; }
    if (v->kind == TL_PV_FLOAT) { *out = v->u.f; return 0; }
    return -1;
}

static int is_number(const tl_pv *v)
{
    return v && (v->kind == TL_PV_BOOL || v->kind == TL_PV_INT || v->kind == TL_PV_FLOAT);
}

int tl_pv_equal(const tl_pv *a, const tl_pv *b)
{
    if (tl_pv_is_none(a) || tl_pv_is_none(b)) return tl_pv_is_none(a) && tl_pv_is_none(b);
    if (is_number(a) && is_number(b)) {
        if (a->kind != TL_PV_FLOAT && b->kind != TL_PV_FLOAT) {
            const char *ab = a->kind == TL_PV_INT ? a->u.i.big : NULL;
            const char *bb = b->kind == TL_PV_INT ? b->u.i.big : NULL;
            if (ab || bb) return ab && bb && strcmp(ab, bb) == 0;
            int64_t x = a->kind == TL_PV_BOOL ? a->u.b : a->u.i.v;
            int64_t y = b->kind == TL_PV_BOOL ? b->u.b : b->u.i.v;
            return x == y;
        }
        double x, y;
        tl_pv_num(a, &x);
        tl_pv_num(b, &y);
        return x == y;
    }
    if (a->kind != b->kind) return 0;
    if (a->kind == TL_PV_STR) return a->u.s.n == b->u.s.n && memcmp(a->u.s.p, b->u.s.p, a->u.s.n) == 0;
    if (a->u.seq.n != b->u.seq.n) return 0;
    for (size_t i = 0; i < a->u.seq.n; i++) {
        if (a->kind == TL_PV_DICT && !tl_pv_equal(a->u.seq.k[i], b->u.seq.k[i])) return 0;
        if (!tl_pv_equal(a->u.seq.v[i], b->u.seq.v[i])) return 0;
    }
    return 1;
}
