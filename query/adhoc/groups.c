/* groups.c — the accumulators of a grouped query: one group per distinct
 * tuple of key codes (strings as text-pool ids, numbers as their bits),
 * per aggregate the running count, sum, min/max, Welford state, values
 * (median, percentiles) or distinct codes (nunique); merged across
 * workers and processes, and made into the result table's rows. */
#include "query/adhoc/adhoc_internal.h"
#include "query/core/packed.h"
#include "query/core/stats.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* A nunique accumulator's distinct (group, code) pairs: keys of a tl_bmap. */
typedef struct gcode {
    uint64_t c;
    uint32_t g, pad; /* pad zeroed: the key is hashed as bytes */
} gcode;

void aq_nunique_add(tl_bmap *s, uint32_t g, uint64_t c)
{
    if (!s->cap) tl_bmap_init(s, sizeof(gcode), 512);
    gcode k = {c, g, 0};
    int isnew;
    tl_bmap_put(s, &k, &isnew);
}

void aq_gstate_init(aq_gstate *g, const aq_plan *p)
{
    memset(g, 0, sizeof *g);
    g->nkeys = p->nby;
    g->nagg = p->nagg;
    g->acc = tl_xcalloc(p->nagg ? p->nagg : 1, sizeof *g->acc);
    for (size_t k = 0; k < p->nagg; k++)
        g->acc[k].isint = p->agg[k].star || p->agg[k].col.def->type == AQ_INT;
    tl_hidx_init(&g->idx, 512);
}

void aq_gstate_free(aq_gstate *g)
{
    for (size_t k = 0; k < g->nagg; k++) {
        aq_acc *a = &g->acc[k];
        free(a->cnt); free(a->isum); free(a->fsum); free(a->imin); free(a->imax);
        free(a->fmin); free(a->fmax); free(a->w);
        if (a->vals) {
            for (size_t i = 0; i < g->ng; i++) tl_vec_free(&a->vals[i]);
            free(a->vals);
        }
        tl_bmap_free(&a->set);
    }
    free(g->acc);
    free(g->keys);
    tl_hidx_free(&g->idx);
}

static void acc_grow(aq_gstate *g, const aq_plan *p, size_t ncap)
{
    size_t old = g->cap;
    g->keys = tl_xrealloc(g->keys, ncap * (g->nkeys ? g->nkeys : 1) * sizeof(uint64_t));
    for (size_t k = 0; k < g->nagg; k++) {
        aq_acc *a = &g->acc[k];
        aq_afn fn = p->agg[k].fn;
#define GROW(arr, T, init)                                                   \
        do {                                                                 \
            a->arr = tl_xrealloc(a->arr, ncap * sizeof(T));                  \
            for (size_t i = old; i < ncap; i++) a->arr[i] = (init);          \
        } while (0)
        GROW(cnt, int64_t, 0);
        if (fn == AQ_A_SUM || fn == AQ_A_MEAN) {
            if (a->isint) GROW(isum, int64_t, 0); else GROW(fsum, double, 0.0);
        }
        if (fn == AQ_A_MIN || fn == AQ_A_MAX) {
            if (a->isint) { GROW(imin, int64_t, INT64_MAX); GROW(imax, int64_t, INT64_MIN); }
            else { GROW(fmin, double, INFINITY); GROW(fmax, double, -INFINITY); }
        }
        if (fn == AQ_A_STD) GROW(w, tl_welford, ((tl_welford){0, 0, 0}));
        if (fn == AQ_A_MEDIAN || fn == AQ_A_PCT) {
            a->vals = tl_xrealloc(a->vals, ncap * sizeof(*a->vals));
            memset(a->vals + old, 0, (ncap - old) * sizeof(*a->vals));
        }
#undef GROW
    }
    g->cap = ncap;
}

uint32_t aq_group_of(aq_gstate *g, const aq_plan *p, const uint64_t *codes)
{
    uint64_t h = 0x12345;
    for (size_t k = 0; k < g->nkeys; k++) h = tl_mix64(h ^ (codes[k] + 0x9E3779B97F4A7C15ULL * (k + 1)));
    size_t i = tl_hidx_home(&g->idx, h);
    for (; g->idx.ids[i]; i = tl_hidx_next(&g->idx, i)) {
        uint32_t gi = g->idx.ids[i] - 1;
        if (g->idx.hashes[i] == h && !memcmp(g->keys + gi * g->nkeys, codes, g->nkeys * sizeof(uint64_t)))
            return gi;
    }
    if (g->ng == g->cap) acc_grow(g, p, g->cap ? g->cap * 2 : 256);
    uint32_t gi = (uint32_t)g->ng++;
    if (g->nkeys) memcpy(g->keys + gi * g->nkeys, codes, g->nkeys * sizeof(uint64_t));
    tl_hidx_set(&g->idx, i, h, gi);
    return gi;
}

void aq_gstate_merge(aq_gstate *dst, const aq_gstate *src, const aq_plan *p)
{
    for (size_t q = 0; q < src->ng; q++) {
        uint32_t d = aq_group_of(dst, p, src->keys + q * src->nkeys);
        for (size_t k = 0; k < p->nagg; k++) {
            aq_acc *a = &dst->acc[k];
            const aq_acc *b = &src->acc[k];
            aq_afn fn = p->agg[k].fn;
            int64_t n1 = b->cnt[q];
            if (fn == AQ_A_STD) tl_welford_merge(&a->w[d], &b->w[q]);
            a->cnt[d] += n1;
            if (fn == AQ_A_SUM || fn == AQ_A_MEAN) {
                if (a->isint) a->isum[d] += b->isum[q]; else a->fsum[d] += b->fsum[q];
            }
            if (fn == AQ_A_MIN || fn == AQ_A_MAX) {
                if (a->isint) {
                    if (b->imin[q] < a->imin[d]) a->imin[d] = b->imin[q];
                    if (b->imax[q] > a->imax[d]) a->imax[d] = b->imax[q];
                } else {
                    if (b->fmin[q] < a->fmin[d]) a->fmin[d] = b->fmin[q];
                    if (b->fmax[q] > a->fmax[d]) a->fmax[d] = b->fmax[q];
                }
            }
            if (fn == AQ_A_MEDIAN || fn == AQ_A_PCT)
                for (size_t i = 0; i < b->vals[q].n; i++) tl_vec_push(&a->vals[d], b->vals[q].v[i]);
        }
    }
    /* nunique sets: remap group ids */
    for (size_t k = 0; k < p->nagg; k++) {
        if (p->agg[k].fn != AQ_A_NUNIQUE) continue;
        const tl_bmap *s = &src->acc[k].set;
        for (size_t i = 0; i < s->cap; i++) {
            if (!s->used[i]) continue;
            const gcode *x = (const gcode *)(s->keys + i * s->keylen);
            uint32_t d = aq_group_of(dst, p, src->keys + (size_t)x->g * src->nkeys);
            aq_nunique_add(&dst->acc[k].set, d, x->c);
        }
    }
}

void aq_gstate_table(const aq_gstate *g, const aq_plan *p, const aq_pool *pool, tl_table *t)
{
    size_t nk = p->nby;
    for (size_t k = 0; k < nk; k++) tl_table_add_col(t, p->by[k].display, aq_out_type(&p->by[k]));
    for (size_t k = 0; k < p->nagg; k++) {
        const aq_aggdef *ad = &p->agg[k];
        tl_type ty = TL_F64;
        if (ad->fn == AQ_A_COUNT || ad->fn == AQ_A_NUNIQUE) ty = TL_I64;
        else if ((ad->fn == AQ_A_SUM || ad->fn == AQ_A_MIN || ad->fn == AQ_A_MAX) && g->acc[k].isint) ty = TL_I64;
        tl_table_add_col(t, ad->name, ty);
    }
    tl_table_set_nrows(t, g->ng);
    for (size_t q = 0; q < g->ng; q++) {
        for (size_t k = 0; k < nk; k++) {
            uint64_t c = g->keys[q * nk + k];
            switch (t->cols[k].type) {
            case TL_STR: if (c) tl_table_set_str_ref(t, k, q, pool->text[c]); break;
            case TL_I64: if ((int64_t)c != INT64_MIN) tl_table_set_i64(t, k, q, (int64_t)c); break;
            default: { double d; memcpy(&d, &c, 8); tl_table_set_f64(t, k, q, d); break; }
            }
        }
        for (size_t k = 0; k < p->nagg; k++) {
            const aq_acc *a = &g->acc[k];
            size_t col = nk + k;
            int64_t n = a->cnt[q];
            switch (p->agg[k].fn) {
            case AQ_A_COUNT: tl_table_set_i64(t, col, q, n); break;
            case AQ_A_SUM:
                if (n) { if (a->isint) tl_table_set_i64(t, col, q, a->isum[q]); else tl_table_set_f64(t, col, q, a->fsum[q]); }
                break;
            case AQ_A_MEAN:
                if (n) tl_table_set_f64(t, col, q, a->isint ? (double)a->isum[q] / (double)n : a->fsum[q] / (double)n);
                break;
            case AQ_A_MIN: case AQ_A_MAX: {
                int mx = p->agg[k].fn == AQ_A_MAX;
                if (!n) break;
                if (a->isint) tl_table_set_i64(t, col, q, mx ? a->imax[q] : a->imin[q]);
                else tl_table_set_f64(t, col, q, mx ? a->fmax[q] : a->fmin[q]);
                break;
            }
            case AQ_A_STD:
                if (n > 1) tl_table_set_f64(t, col, q, tl_welford_std(&a->w[q], 1));
                break;
            case AQ_A_MEDIAN: case AQ_A_PCT:
                if (a->vals[q].n) tl_table_set_f64(t, col, q, tl_quantile_linear(a->vals[q].v, a->vals[q].n, p->agg[k].q));
                break;
            case AQ_A_NUNIQUE: break;
            }
        }
    }
    for (size_t k = 0; k < p->nagg; k++) {
        if (p->agg[k].fn != AQ_A_NUNIQUE) continue;
        for (size_t q = 0; q < g->ng; q++) tl_table_set_i64(t, nk + k, q, 0);
        const tl_bmap *s = &g->acc[k].set;
        for (size_t i = 0; i < s->cap; i++)
            if (s->used[i]) t->cols[nk + k].v.i[((const gcode *)(s->keys + i * s->keylen))->g]++;
    }
}

/* Whether a column's group codes are text-pool ids (else numbers' bits). */
static int codes_are_text(const aq_colref *c) { return c->def->type == AQ_STR || c->def->type == AQ_DYN; }

static void put_code(tl_buf *b, uint64_t code, int text, const aq_pool *pool)
{
    if (text) tl_pack_str(b, code ? pool->text[code] : NULL);
    else tl_pack_u64(b, code);
}

static uint64_t get_code(tl_unpack *in, int text, aq_pool *pool, tl_arena *scratch)
{
    if (!text) return tl_unpack_u64(in);
    const char *s = tl_unpack_str(in, scratch);
    return s ? aq_pool_intern(pool, s, strlen(s)) : 0;
}

void aq_gstate_pack(tl_buf *b, const aq_gstate *g, const aq_plan *p, const aq_pool *pool)
{
    tl_pack_u64(b, g->ng);
    for (size_t q = 0; q < g->ng; q++)
        for (size_t k = 0; k < g->nkeys; k++) put_code(b, g->keys[q * g->nkeys + k], codes_are_text(&p->by[k]), pool);
    for (size_t k = 0; k < g->nagg; k++) {
        const aq_acc *a = &g->acc[k];
        aq_afn fn = p->agg[k].fn;
        tl_pack_bytes(b, a->cnt, g->ng * sizeof *a->cnt);
        if (fn == AQ_A_SUM || fn == AQ_A_MEAN) {
            if (a->isint) tl_pack_bytes(b, a->isum, g->ng * sizeof *a->isum);
            else tl_pack_bytes(b, a->fsum, g->ng * sizeof *a->fsum);
        }
        if (fn == AQ_A_MIN || fn == AQ_A_MAX) {
            if (a->isint) {
                tl_pack_bytes(b, a->imin, g->ng * sizeof *a->imin);
                tl_pack_bytes(b, a->imax, g->ng * sizeof *a->imax);
            } else {
                tl_pack_bytes(b, a->fmin, g->ng * sizeof *a->fmin);
                tl_pack_bytes(b, a->fmax, g->ng * sizeof *a->fmax);
            }
        }
        if (fn == AQ_A_STD) tl_pack_bytes(b, a->w, g->ng * sizeof *a->w);
        if (fn == AQ_A_MEDIAN || fn == AQ_A_PCT)
            for (size_t q = 0; q < g->ng; q++) {
                tl_pack_u64(b, a->vals[q].n);
                tl_pack_bytes(b, a->vals[q].v, a->vals[q].n * sizeof(double));
            }
        if (fn == AQ_A_NUNIQUE) {
            const tl_bmap *s = &a->set;
            size_t n = 0;
            for (size_t i = 0; i < s->cap; i++) n += s->used[i] != 0;
            tl_pack_u64(b, n);
            for (size_t i = 0; i < s->cap; i++) {
                if (!s->used[i]) continue;
                const gcode *x = (const gcode *)(s->keys + i * s->keylen);
                tl_pack_u64(b, x->g);
                put_code(b, x->c, codes_are_text(&p->agg[k].col), pool);
            }
        }
    }
}

/* n fixed-width values into dst (n * width bytes); 0, or -1 when short. */
static int get_array(tl_unpack *in, void *dst, size_t n, size_t width)
{
    const void *src = tl_unpack_bytes(in, n * width);
    if (!src) return -1;
    if (n) memcpy(dst, src, n * width);
    return 0;
}

int aq_gstate_unpack(tl_unpack *in, aq_gstate *g, const aq_plan *p, aq_pool *pool)
{
    tl_arena scratch;
    tl_arena_init(&scratch, 4096);
    uint64_t ng = tl_unpack_u64(in);
    if (ng > (uint64_t)(in->end - in->p)) in->bad = 1; /* every group takes a byte at least */
    uint64_t *codes = tl_xmalloc((g->nkeys ? g->nkeys : 1) * sizeof *codes);
    for (uint64_t q = 0; q < ng && !in->bad; q++) {
        for (size_t k = 0; k < g->nkeys; k++) codes[k] = get_code(in, codes_are_text(&p->by[k]), pool, &scratch);
        uint64_t zero = 0;
        if (aq_group_of(g, p, g->nkeys ? codes : &zero) != q) in->bad = 1; /* a key packed twice */
    }
    free(codes);
    for (size_t k = 0; k < g->nagg && !in->bad; k++) {
        aq_acc *a = &g->acc[k];
        aq_afn fn = p->agg[k].fn;
        size_t n = (size_t)ng;
        int bad = get_array(in, a->cnt, n, sizeof *a->cnt);
        if (fn == AQ_A_SUM || fn == AQ_A_MEAN)
            bad |= a->isint ? get_array(in, a->isum, n, sizeof *a->isum) : get_array(in, a->fsum, n, sizeof *a->fsum);
        if (fn == AQ_A_MIN || fn == AQ_A_MAX) {
            if (a->isint) bad |= get_array(in, a->imin, n, 8) | get_array(in, a->imax, n, 8);
            else bad |= get_array(in, a->fmin, n, 8) | get_array(in, a->fmax, n, 8);
        }
        if (fn == AQ_A_STD) bad |= get_array(in, a->w, n, sizeof *a->w);
        if (fn == AQ_A_MEDIAN || fn == AQ_A_PCT)
            for (size_t q = 0; q < n && !bad; q++) {
                uint64_t m = tl_unpack_u64(in);
                const double *v = m <= (uint64_t)(in->end - in->p) / sizeof(double)
                                      ? tl_unpack_bytes(in, (size_t)m * sizeof(double)) : NULL;
                if (!v) { bad = 1; break; }
                tl_vec_reserve(&a->vals[q], (size_t)m);
                if (m) memcpy(a->vals[q].v, v, (size_t)m * sizeof(double));
                a->vals[q].n = (size_t)m;
            }
        if (fn == AQ_A_NUNIQUE) {
            uint64_t m = tl_unpack_u64(in);
            for (uint64_t i = 0; i < m && !in->bad; i++) {
                uint64_t q = tl_unpack_u64(in);
                uint64_t c = get_code(in, codes_are_text(&p->agg[k].col), pool, &scratch);
                if (q >= ng) in->bad = 1;
                else aq_nunique_add(&a->set, (uint32_t)q, c);
            }
        }
        if (bad) in->bad = 1;
    }
    tl_arena_free(&scratch);
    return in->bad ? TL_EFORMAT : TL_OK;
}
