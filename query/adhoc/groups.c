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
            if ((fn == AQ_A_MEDIAN || fn == AQ_A_PCT) && b->vals[q].n) {
                tl_vec_reserve(&a->vals[d], b->vals[q].n);
                memcpy(a->vals[d].v + a->vals[d].n, b->vals[q].v, b->vals[q].n * sizeof(double));
                a->vals[d].n += b->vals[q].n;
            }
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

void aq_gstate_pack(tl_buf *b, const aq_gstate *g, const aq_plan *p, const aq_pool *pool)
{
    /* the pool's texts once; text codes below are this pool's ids */
    tl_pack_u64(b, pool->n);
    for (size_t i = 1; i < pool->n; i++) tl_pack_str(b, pool->text[i]);
    tl_pack_u64(b, g->ng);
    tl_pack_bytes(b, g->keys, g->ng * g->nkeys * sizeof *g->keys);
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
            tl_pack_u64(b, s->n);
            for (size_t i = 0; i < s->cap; i++)
                if (s->used[i]) tl_pack_bytes(b, s->keys + i * s->keylen, sizeof(gcode));
        }
    }
}

/* n fixed-width values into dst (n * width bytes); 0, or -1 when short. */
static int get_array(tl_unpack *in, void *dst, size_t n, size_t width)
{
    if (n > (size_t)(in->end - in->p) / width) { in->bad = 1; return -1; }
    const void *src = tl_unpack_bytes(in, n * width);
    if (!src) return -1;
    if (n) memcpy(dst, src, n * width);
    return 0;
}

/* A packed text code as an id of pool (map: packed id -> pool id), or -1. */
static int64_t map_code(uint64_t c, const uint32_t *map, size_t nmap)
{
    return c < nmap ? (int64_t)map[c] : -1;
}

/* The groups of a packed state, keys translated to pool: 0 or -1. */
static int get_groups(tl_unpack *in, aq_gstate *g, const aq_plan *p, uint64_t ng, const uint32_t *map, size_t nmap)
{
    size_t nk = g->nkeys;
    if (nk && ng > (uint64_t)(in->end - in->p) / (nk * 8)) return -1;
    const unsigned char *raw = tl_unpack_bytes(in, (size_t)ng * nk * 8);
    if (!raw) return -1;
    uint64_t *codes = tl_xmalloc((nk ? nk : 1) * sizeof *codes);
    int rc = 0;
    for (uint64_t q = 0; q < ng && !rc; q++) {
        memcpy(codes, raw + q * nk * 8, nk * 8);
        for (size_t k = 0; k < nk && !rc; k++) {
            if (!codes_are_text(&p->by[k])) continue;
            int64_t c = map_code(codes[k], map, nmap);
            if (c < 0) rc = -1;
            else codes[k] = (uint64_t)c;
        }
        uint64_t zero = 0;
        if (!rc && aq_group_of(g, p, nk ? codes : &zero) != q) rc = -1; /* a key packed twice */
    }
    free(codes);
    return rc;
}

/* One aggregate's accumulators of ng groups: 0 or -1. */
static int get_acc(tl_unpack *in, aq_acc *a, const aq_aggdef *ad, size_t ng, const uint32_t *map, size_t nmap)
{
    aq_afn fn = ad->fn;
    int bad = get_array(in, a->cnt, ng, sizeof *a->cnt);
    if (fn == AQ_A_SUM || fn == AQ_A_MEAN)
        bad |= a->isint ? get_array(in, a->isum, ng, 8) : get_array(in, a->fsum, ng, 8);
    if (fn == AQ_A_MIN || fn == AQ_A_MAX) {
        if (a->isint) bad |= get_array(in, a->imin, ng, 8) | get_array(in, a->imax, ng, 8);
        else bad |= get_array(in, a->fmin, ng, 8) | get_array(in, a->fmax, ng, 8);
    }
    if (fn == AQ_A_STD) bad |= get_array(in, a->w, ng, sizeof *a->w);
    if (fn == AQ_A_MEDIAN || fn == AQ_A_PCT)
        for (size_t q = 0; q < ng && !bad; q++) {
            uint64_t m = tl_unpack_u64(in);
            if (m > (uint64_t)(in->end - in->p) / sizeof(double)) return -1;
            tl_vec_reserve(&a->vals[q], (size_t)m);
            bad |= get_array(in, a->vals[q].v, (size_t)m, sizeof(double));
            a->vals[q].n = (size_t)m;
        }
    if (fn == AQ_A_NUNIQUE && !bad) {
        uint64_t m = tl_unpack_u64(in);
        if (m > (uint64_t)(in->end - in->p) / sizeof(gcode)) return -1;
        const unsigned char *raw = tl_unpack_bytes(in, (size_t)m * sizeof(gcode));
        if (!raw) return -1;
        if (m && !a->set.cap) tl_bmap_init(&a->set, sizeof(gcode), (size_t)m);
        int text = codes_are_text(&ad->col);
        for (uint64_t i = 0; i < m; i++) {
            gcode x;
            memcpy(&x, raw + i * sizeof x, sizeof x);
            int64_t c = text ? map_code(x.c, map, nmap) : (int64_t)x.c;
            if (x.g >= ng || (text && c < 0)) return -1;
            aq_nunique_add(&a->set, x.g, text ? (uint64_t)c : x.c);
        }
    }
    return bad ? -1 : 0;
}

int aq_gstate_unpack(tl_unpack *in, aq_gstate *g, const aq_plan *p, aq_pool *pool)
{
    tl_arena scratch;
    tl_arena_init(&scratch, 4096);
    uint64_t ntext = tl_unpack_u64(in);
    if (!ntext || ntext > (uint64_t)(in->end - in->p) / 8 + 1) in->bad = 1;
    size_t nmap = in->bad ? 0 : (size_t)ntext;
    uint32_t *map = tl_xcalloc(nmap ? nmap : 1, sizeof *map);
    for (size_t i = 1; i < nmap && !in->bad; i++) {
        const char *t = tl_unpack_str(in, &scratch);
        if (!t) in->bad = 1;
        else map[i] = aq_pool_intern(pool, t, strlen(t));
    }
    uint64_t ng = in->bad ? 0 : tl_unpack_u64(in);
    if (!in->bad && get_groups(in, g, p, ng, map, nmap)) in->bad = 1;
    for (size_t k = 0; k < g->nagg && !in->bad; k++)
        if (get_acc(in, &g->acc[k], &p->agg[k], (size_t)ng, map, nmap)) in->bad = 1;
    free(map);
    tl_arena_free(&scratch);
    return in->bad ? TL_EFORMAT : TL_OK;
}
