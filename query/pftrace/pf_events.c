/* pf_events.c — the stored complete events as the reference's event dicts,
 * Python's int()/str() of their values, and the statistics the pftrace
 * sheets print (pf_internal.h). */
#include "query/pftrace/pf_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Python int() of text: surrounding white space, a sign, decimal digits
 * with single underscores between them. */
static int py_int_text(const char *s, size_t n, int64_t *out)
{
    size_t i = 0;
    while (i < n && (s[i] == ' ' || (s[i] >= '\t' && s[i] <= '\r'))) i++;
    while (n > i && (s[n - 1] == ' ' || (s[n - 1] >= '\t' && s[n - 1] <= '\r'))) n--;
    int neg = 0;
    if (i < n && (s[i] == '+' || s[i] == '-')) neg = s[i++] == '-';
    if (i == n) return -1;
    uint64_t acc = 0;
    int prev_digit = 0;
    for (; i < n; i++) {
        char c = s[i];
        if (c == '_' && prev_digit && i + 1 < n && s[i + 1] >= '0' && s[i + 1] <= '9') {
            prev_digit = 0;
            continue;
        }
        if (c < '0' || c > '9') return -1;
        unsigned d = (unsigned)(c - '0');
        if (acc > (UINT64_MAX - d) / 10) return -1;
        acc = acc * 10 + d;
        prev_digit = 1;
    }
    if (neg ? acc > (uint64_t)INT64_MAX + 1 : acc > (uint64_t)INT64_MAX) return -1;
    *out = neg ? (int64_t)(0 - acc) : (int64_t)acc;
    return 0;
}

int pf_py_int(const tl_pv *v, int64_t *out)
{
    if (!v) return -1;
    switch (v->kind) {
    case TL_PV_BOOL: *out = v->u.b ? 1 : 0; return 0;
    case TL_PV_INT:
        if (v->u.i.big) return -1;
        *out = v->u.i.v;
        return 0;
    case TL_PV_FLOAT: {
        double f = trunc(v->u.f);
        if (!isfinite(f) || f >= 9223372036854775808.0 || f < -9223372036854775808.0) return -1;
        *out = (int64_t)f;
        return 0;
    }
    case TL_PV_STR: return py_int_text(v->u.s.p, v->u.s.n, out);
    default: return -1;
    }
}

const char *pf_py_str(tl_arena *a, const tl_pv *v)
{
    tl_buf b = {0};
    tl_pv_write_str(&b, v, 0);
    const char *s = tl_arena_strndup(a, b.p ? b.p : "", b.n);
    tl_buf_free(&b);
    return s;
}

const char *pf_lower(tl_arena *a, const char *s)
{
    char *o = tl_arena_strdup(a, s);
    for (char *p = o; *p; p++)
        if (*p >= 'A' && *p <= 'Z') *p = (char)(*p + 32);
    return o;
}

const char *pf_strip_digits(tl_arena *a, const char *s)
{
    char *o = tl_arena_strdup(a, s), *w = o;
    for (const char *p = s; *p; p++)
        if (*p < '0' || *p > '9') *w++ = *p;
    *w = 0;
    return o;
}

const tl_pv *pf_arg(const pf_ev *e, const char *key, int *present)
{
    *present = 0;
    const tl_pv *d = e->args;
    if (!d || d->kind != TL_PV_DICT) return NULL;
    const tl_pv *found = NULL;
    for (size_t i = 0; i < d->u.seq.n; i++) {
        const tl_pv *k = d->u.seq.k[i];
        if (k && k->kind == TL_PV_STR && !strcmp(k->u.s.p, key)) {
            *present = 1;
            found = d->u.seq.v[i];
        }
    }
    return found;
}

/* int() of a stored pid/tid: numbers as they are, string ids by their text. */
static int id_value(const tl_trace *t, const int64_t *col, size_t i, int is_str, int64_t *out)
{
    if (!is_str) {
        *out = col[i];
        return 0;
    }
    const char *s = tl_trace_str(t, (uint32_t)col[i]);
    return s ? py_int_text(s, strlen(s), out) : -1;
}

int pf_events_load(const tl_trace *t, pf_events *out, tl_err *err)
{
    memset(out, 0, sizeof *out);
    tl_arena_init(&out->arena, 1 << 16);
    out->v = tl_xcalloc(t->n ? t->n : 1, sizeof *out->v);
    out->n = t->n;
    for (size_t i = 0; i < t->n; i++) {
        pf_ev *e = &out->v[i];
        const char *s = tl_trace_str(t, t->name[i]);
        e->name = s ? s : "";
        s = tl_trace_str(t, t->cat[i]);
        e->cat = s ? s : "";
        uint8_t fl = t->idflags ? t->idflags[i] : 0;
        if (id_value(t, t->pid, i, fl & 1, &e->pid) || id_value(t, t->tid, i, fl & 2, &e->tid))
            return tl_errf(err, TL_EFORMAT, "event %zu (%s): pid or tid is text that int() refuses", i, e->name);
        e->ts_us = t->ts[i] / 1000; /* C division truncates toward zero, as int() */
        e->dur_us = t->dur[i] / 1000;
        size_t alen;
        const char *a = tl_trace_args(t, i, &alen);
        if (a && alen) {
            tl_pv *pv;
            if (tl_pv_parse(&out->arena, a, alen, &pv, err)) {
                char why[256];
                snprintf(why, sizeof why, "%s", err->msg);
                return tl_errf(err, TL_EFORMAT, "event %zu (%s): args: %s", i, e->name, why);
            }
            e->args = pv && pv->kind == TL_PV_DICT ? pv : NULL;
        }
    }
    return 0;
}

void pf_events_free(pf_events *e)
{
    free(e->v);
    tl_arena_free(&e->arena);
    memset(e, 0, sizeof *e);
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

void pf_stats_of(int64_t *v, size_t n, pf_stats *s)
{
    memset(s, 0, sizeof *s);
    s->n = n;
    if (!n) return;
    qsort(v, n, sizeof *v, cmp_i64);
    __int128 sum = 0, sq = 0;
    for (size_t i = 0; i < n; i++) {
        sum += v[i];
        sq += (__int128)v[i] * v[i];
    }
    s->sum = (int64_t)sum;
    s->avg = (double)sum / (double)n;
    s->med = n % 2 ? (double)v[n / 2] : ((double)v[n / 2 - 1] + (double)v[n / 2]) / 2.0;
    s->min = v[0];
    s->max = v[n - 1];
    /* exact n^2 * variance = n * sum(x^2) - sum(x)^2, then one rounding */
    __int128 num = (__int128)n * sq - sum * sum;
    s->std = n > 1 ? (double)(sqrtl((long double)num) / (long double)n) : 0.0;
}
