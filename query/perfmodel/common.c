/* common.c — shared machinery of the perf models: Python-like integer/float
 * arithmetic (the reference computes shape products on unbounded ints and
 * mixes in floats only where its formulas do), the raising accessors over
 * the parsed args, the text conversions of perf-models.md §1.3, the dtype
 * tables of §3, and param/value builders. */
#include "query/perfmodel/pm_internal.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* ---- numbers ------------------------------------------------------------ */

double pn_d(pnum a)
{
    return a.fl ? a.f : (double)a.i;
}

pnum pn_add(pnum a, pnum b)
{
    if (a.bad || b.bad) return PN_BAD();
    if (!a.fl && !b.fl) {
        pnum r = PN_I(0);
        if (__builtin_add_overflow(a.i, b.i, &r.i)) return PN_BAD();
        return r;
    }
    return PN_F(pn_d(a) + pn_d(b));
}

pnum pn_sub(pnum a, pnum b)
{
    if (a.bad || b.bad) return PN_BAD();
    if (!a.fl && !b.fl) {
        pnum r = PN_I(0);
        if (__builtin_sub_overflow(a.i, b.i, &r.i)) return PN_BAD();
        return r;
    }
    return PN_F(pn_d(a) - pn_d(b));
}

pnum pn_mul(pnum a, pnum b)
{
    if (a.bad || b.bad) return PN_BAD();
    if (!a.fl && !b.fl) {
        pnum r = PN_I(0);
        if (__builtin_mul_overflow(a.i, b.i, &r.i)) return PN_BAD();
        return r;
    }
    return PN_F(pn_d(a) * pn_d(b));
}

static int fits53(__int128 v)
{
    const __int128 lim = (__int128)1 << 53;
    return v <= lim && v >= -lim;
}

pnum pn_div(pnum a, pnum b)
{
    if (a.bad || b.bad) return PN_BAD();
    if (!b.fl ? b.i == 0 : b.f == 0) return PN_BAD(); /* ZeroDivisionError */
    if (!a.fl && !b.fl && !(fits53(a.i) && fits53(b.i))) {
        /* Python divides big ints with correct rounding; long double gets
         * within an ulp, which is as close as traces ever need. */
        return PN_F((double)((long double)a.i / (long double)b.i));
    }
    return PN_F(pn_d(a) / pn_d(b));
}

pnum pn_fdiv(pnum a, pnum b)
{
    if (a.bad || b.bad) return PN_BAD();
    if (!b.fl ? b.i == 0 : b.f == 0) return PN_BAD();
    if (!a.fl && !b.fl) {
        __int128 q = a.i / b.i, r = a.i % b.i;
        if (r != 0 && ((r < 0) != (b.i < 0))) q -= 1;
        pnum o = PN_I(0);
        o.i = q;
        return o;
    }
    /* CPython float_floor_div */
    double vx = pn_d(a), wx = pn_d(b);
    double mod = fmod(vx, wx);
    double div = (vx - mod) / wx;
    if (mod) {
        if ((wx < 0) != (mod < 0)) div -= 1.0;
    }
    double fl;
    if (div) {
        fl = floor(div);
        if (div - fl > 0.5) fl += 1.0;
    } else {
        fl = copysign(0.0, vx / wx);
    }
    return PN_F(fl);
}

int pn_cmp(pnum a, pnum b)
{
    if (!a.fl && !b.fl) return a.i < b.i ? -1 : a.i > b.i;
    double x = pn_d(a), y = pn_d(b);
    return x < y ? -1 : x > y;
}

/* ---- raising accessors --------------------------------------------------- */

_Noreturn void pm_raise(pm_in *in, const char *why)
{
    in->why = why;
    longjmp(*in->jb, 1);
}

size_t pm_ndims(pm_in *in)
{
    if (!tl_pv_is_seq(in->dims)) pm_raise(in, "Input Dims missing");
    return tl_pv_len(in->dims);
}

const tl_pv *pm_dims(pm_in *in, long i)
{
    size_t n = pm_ndims(in);
    if (i < 0) i += (long)n;
    if (i < 0 || (size_t)i >= n) pm_raise(in, "Input Dims index out of range");
    return tl_pv_at(in->dims, i);
}

int64_t pm_int(pm_in *in, const tl_pv *v)
{
    if (v && v->kind == TL_PV_INT && !v->u.i.big) return v->u.i.v;
    if (v && v->kind == TL_PV_BOOL) return v->u.b;
    pm_raise(in, "expected an integer");
}

size_t pm_len(pm_in *in, const tl_pv *shape)
{
    if (!tl_pv_is_seq(shape)) pm_raise(in, "expected a shape list");
    return tl_pv_len(shape);
}

int64_t pm_dim(pm_in *in, const tl_pv *shape, long i)
{
    size_t n = pm_len(in, shape);
    if (i < 0) i += (long)n;
    if (i < 0 || (size_t)i >= n) pm_raise(in, "shape index out of range");
    return pm_int(in, tl_pv_at(shape, i));
}

pnum pm_prod(pm_in *in, const tl_pv *shape)
{
    size_t n = pm_len(in, shape);
    pnum p = PN_I(1);
    for (size_t k = 0; k < n; k++) p = pn_mul(p, PN_I(pm_int(in, tl_pv_at(shape, (long)k))));
    if (p.bad) pm_raise(in, "shape product overflow");
    return p;
}

size_t pm_ntypes(pm_in *in)
{
    if (!tl_pv_is_seq(in->types)) pm_raise(in, "Input type missing");
    return tl_pv_len(in->types);
}

const char *pm_type(pm_in *in, long i)
{
    size_t n = pm_ntypes(in);
    if (i < 0) i += (long)n;
    if (i < 0 || (size_t)i >= n) pm_raise(in, "Input type index out of range");
    const tl_pv *v = tl_pv_at(in->types, i);
    if (!v || v->kind != TL_PV_STR) pm_raise(in, "Input type entry is not a string");
    return v->u.s.p;
}

const tl_pv *pm_stride(pm_in *in, long i)
{
    if (!tl_pv_is_seq(in->strides)) pm_raise(in, "Input Strides missing");
    long n = (long)tl_pv_len(in->strides);
    if (i < 0) i += n;
    if (i < 0 || i >= n) pm_raise(in, "Input Strides index out of range");
    return tl_pv_at(in->strides, i);
}

const tl_pv *pm_stride_opt(pm_in *in, long i)
{
    if (!in->strides) return NULL;
    return pm_stride(in, i);
}

const char *pm_ci(pm_in *in, long i)
{
    if (!tl_pv_is_seq(in->ci)) pm_raise(in, "Concrete Inputs missing");
    long n = (long)tl_pv_len(in->ci);
    if (i < 0) i += n;
    if (i < 0 || i >= n) pm_raise(in, "Concrete Inputs index out of range");
    const tl_pv *v = tl_pv_at(in->ci, i);
    if (!v || v->kind != TL_PV_STR) pm_raise(in, "Concrete Inputs entry is not a string");
    return v->u.s.p;
}

const char *pm_ci_opt(pm_in *in, long i)
{
    if (!tl_pv_is_seq(in->ci)) return NULL;
    const tl_pv *v = tl_pv_at(in->ci, i);
    if (!v || v->kind != TL_PV_STR) return NULL;
    return v->u.s.p;
}

/* ---- text conversions ------------------------------------------------------ */

static const char *trim(const char *s, size_t *n)
{
    size_t len = strlen(s);
    while (len && isspace((unsigned char)*s)) { s++; len--; }
    while (len && isspace((unsigned char)s[len - 1])) len--;
    *n = len;
    return s;
}

const tl_pv *pm_literal(pm_in *in, const char *s)
{
    tl_pv *v;
    tl_err e;
    if (!s || tl_pv_parse(in->a, s, strlen(s), &v, &e) != 0) pm_raise(in, "not a Python literal");
    return v;
}

int pm_py_bool(pm_in *in, const char *s)
{
    if (!s) pm_raise(in, "missing boolean");
    return tl_pv_truthy(pm_literal(in, s));
}

int pm_lower_true(const char *s)
{
    if (!s) return 0;
    return strcasecmp(s, "true") == 0;
}

int pm_truthy_string(const char *s) { return s && *s; }

int pm_parse_bool_text(const char *s)
{
    if (!s) return 0;
    size_t n;
    const char *t = trim(s, &n);
    if ((n == 4 && strncasecmp(t, "true", 4) == 0) || (n == 1 && t[0] == '1')) return 1;
    if ((n == 5 && strncasecmp(t, "false", 5) == 0) || (n == 1 && t[0] == '0') || n == 0) return 0;
    return 1;
}

int pm_parse_bool(const tl_pv *v)
{
    if (!v || v->kind == TL_PV_NONE) return 0;
    if (v->kind == TL_PV_STR) return pm_parse_bool_text(v->u.s.p);
    return tl_pv_truthy(v);
}

/* Python float(text): decimal, inf/infinity/nan with sign, '_' between digits. */
static int py_float_text(const char *s, double *out)
{
    size_t n;
    const char *t = trim(s, &n);
    if (!n || n > 120) return -1;
    char buf[128];
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        char c = t[i];
        if (c == '_') {
            if (!i || i + 1 >= n || !isdigit((unsigned char)t[i - 1]) || !isdigit((unsigned char)t[i + 1]))
                return -1;
            continue;
        }
        if (c == 'x' || c == 'X' || c == '(') return -1; /* strtod-only forms */
        buf[k++] = c;
    }
    buf[k] = 0;
    char *end;
    errno = 0;
    double v = strtod(buf, &end);
    if (end == buf || *end) return -1;
    *out = v;
    return 0;
}

double pm_py_float(pm_in *in, const char *s)
{
    double v;
    if (!s || py_float_text(s, &v) != 0) pm_raise(in, "not a float");
    return v;
}

double pm_optional_float(const char *s)
{
    double v;
    if (!s || !*s || strcmp(s, "None") == 0) return 0.0;
    if (py_float_text(s, &v) != 0) return 0.0;
    return v;
}

int pm_py_int_text(const char *s, int64_t *out)
{
    if (!s) return -1;
    size_t n;
    const char *t = trim(s, &n);
    char buf[64];
    size_t k = 0;
    if (!n || n >= sizeof buf) return -1;
    for (size_t i = 0; i < n; i++) {
        char c = t[i];
        if (c == '_' && i && i + 1 < n && isdigit((unsigned char)t[i - 1]) && isdigit((unsigned char)t[i + 1]))
            continue;
        if (!(isdigit((unsigned char)c) || (i == 0 && (c == '-' || c == '+')))) return -1;
        buf[k++] = c;
    }
    buf[k] = 0;
    if (!isdigit((unsigned char)buf[k - 1])) return -1;
    errno = 0;
    long long v = strtoll(buf, NULL, 10);
    if (errno == ERANGE) return -1;
    *out = v;
    return 0;
}

int64_t pm_py_int(pm_in *in, const char *s)
{
    if (!s) pm_raise(in, "missing integer");
    int64_t v;
    if (pm_py_int_text(s, &v) != 0) pm_raise(in, "not an integer");
    return v;
}

size_t pm_int_list(pm_in *in, const char *s, int64_t *vals, size_t max)
{
    size_t len = s ? strlen(s) : 0;
    if (len < 2) pm_raise(in, "not an int list");
    /* s[1:-1].split(',') then int() of each piece */
    size_t cnt = 0, st = 1;
    for (size_t i = 1; i <= len - 1; i++) {
        if (i == len - 1 || s[i] == ',') {
            if (cnt >= max) pm_raise(in, "int list too long");
            char piece[64];
            size_t pl = i - st;
            if (pl >= sizeof piece) pm_raise(in, "not an integer");
            memcpy(piece, s + st, pl);
            piece[pl] = 0;
            vals[cnt++] = pm_py_int(in, piece);
            st = i + 1;
        }
    }
    return cnt;
}

/* ---- dtypes (perf-models.md §3) -------------------------------------------- */

static int lower_eq(const char *a, const char *lit) { return strcasecmp(a, lit) == 0; }

int pm_bpe(const char *d)
{
    if (!d) return 0;
    static const struct { const char *n; int b; } t[] = {
        {"double", 8}, {"long int", 8},
        {"float", 4}, {"scalar", 4}, {"int", 4},
        {"c10::half", 2}, {"c10::bfloat16", 2},
        {"c10::float8_e4m3fnuz", 1}, {"c10::float8_e4m3fn", 1}, {"c10::float8_e5m2", 1},
        {"c10::float8_e8m0fnu", 1}, {"unsigned char", 1}, {"signed char", 1}, {"fp8", 1},
        {"c10::float4_e2m1fn_x2", 1}, {"fp4", 1},
    };
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++)
        if (lower_eq(d, t[i].n)) return t[i].b;
    return 0;
}

const char *pm_prec(const char *d)
{
    if (!d) return NULL;
    static const struct { const char *n, *p; } t[] = {
        {"float", "fp32"}, {"double", "fp64"}, {"c10::half", "fp16"}, {"c10::bfloat16", "bf16"},
        {"c10::float8_e4m3fnuz", "fp8"}, {"c10::float8_e4m3fn", "fp8"}, {"unsigned char", "fp8"},
        {"fp8", "fp8"}, {"c10::float4_e2m1fn_x2", "fp4"}, {"fp4", "fp4"}, {"mxfp4", "fp4"},
    };
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++)
        if (lower_eq(d, t[i].n)) return t[i].p;
    return NULL;
}

int tl_pm_dtype_bytes(const char *dtype) { return pm_bpe(dtype); }
const char *tl_pm_dtype_precision(const char *dtype) { return pm_prec(dtype); }

/* ---- builders ------------------------------------------------------------- */

void pm_param(pm_in *in, pm_out *out, const char *key, const tl_pv *val)
{
    if (out->np >= PM_MAX_PARAMS) pm_raise(in, "too many params");
    out->params[out->np].key = key;
    out->params[out->np].val = val;
    out->np++;
}

long pm_find_param(const pm_out *out, const char *key)
{
    for (size_t i = 0; i < out->np; i++)
        if (strcmp(out->params[i].key, key) == 0) return (long)i;
    return -1;
}

tl_pv *pm_v_int(pm_in *in, int64_t v) { return tl_pv_new_int(in->a, v); }
tl_pv *pm_v_float(pm_in *in, double v) { return tl_pv_new_float(in->a, v); }
tl_pv *pm_v_bool(pm_in *in, int b) { return tl_pv_new_bool(in->a, b); }
tl_pv *pm_v_str(pm_in *in, const char *s) { return s ? tl_pv_new_str(in->a, s) : NULL; }

tl_pv *pm_v_pn(pm_in *in, pnum v)
{
    if (v.bad) pm_raise(in, "arithmetic error");
    if (v.fl) return tl_pv_new_float(in->a, v.f);
    if (v.i <= INT64_MAX && v.i >= INT64_MIN) return tl_pv_new_int(in->a, (int64_t)v.i);
    /* beyond int64: keep Python's digits */
    char d[48];
    int k = 0, neg = v.i < 0;
    unsigned __int128 u = neg ? -(unsigned __int128)v.i : (unsigned __int128)v.i;
    char rev[48];
    do { rev[k++] = (char)('0' + (int)(u % 10)); u /= 10; } while (u);
    int j = 0;
    if (neg) d[j++] = '-';
    while (k) d[j++] = rev[--k];
    d[j] = 0;
    tl_pv *r = tl_pv_new_int(in->a, 0);
    r->u.i.big = tl_arena_strdup(in->a, d);
    return r;
}

tl_pv *pm_v_tuple(pm_in *in, const tl_pv *v)
{
    if (tl_pv_is_none(v)) return NULL;
    if (!tl_pv_is_seq(v)) return (tl_pv *)v; /* tuple() of a non-list would raise; keep value */
    return tl_pv_to_tuple(in->a, v);
}

tl_pv *pm_v_tup(pm_in *in, size_t n, ...)
{
    tl_pv *t = tl_pv_new_seq(in->a, TL_PV_TUPLE, n);
    va_list ap;
    va_start(ap, n);
    for (size_t i = 0; i < n; i++) t->u.seq.v[i] = va_arg(ap, tl_pv *);
    va_end(ap);
    return t;
}

tl_pv *pm_v_ints(pm_in *in, tl_pv_kind kind, const int64_t *v, size_t n)
{
    tl_pv *t = tl_pv_new_seq(in->a, kind, n);
    for (size_t i = 0; i < n; i++) t->u.seq.v[i] = tl_pv_new_int(in->a, v[i]);
    return t;
}
