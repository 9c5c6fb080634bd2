/* plan.c — a query's plan and its result's last steps: the table, where
 * expression, group keys, aggregates, row columns and sort keys parsed
 * from the flags; then the sort and limit of the result, the pivot and
 * the time unit. */
#include "query/adhoc/adhoc_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

int aq_plan_build(const tl_adhoc_query *q, aq_plan *p, tl_err *err)
{
    memset(p, 0, sizeof *p);
    tl_arena_init(&p->arena, 16 * 1024);
    const char *tname = q->table && *q->table ? q->table : "kernels";
    p->tab = aq_table_find(tname);
    if (!p->tab) {
        char list[400];
        size_t n = 0;
        list[0] = 0;
        for (size_t i = 0; aq_table_at(i); i++)
            n += (size_t)snprintf(list + n, sizeof list - n, "%s%s", i ? ", " : "", aq_table_at(i)->name);
        return tl_errf(err, TL_EUSAGE, "--table: unknown table '%s' (tables: %s)", tname, list);
    }
    p->limit = q->limit;
    aq_parse_ctx pc = {p->tab, NULL, NULL, &p->arena};
    int rc;
    if (q->where && *q->where) {
        pc.what = "--where";
        pc.text = q->where;
        if ((rc = aq_parse_where(&pc, &p->where, err))) return rc;
    }
    if (q->by && *q->by) {
        pc.what = "--by";
        pc.text = q->by;
        if ((rc = aq_parse_cols(&pc, &p->by, &p->nby, err))) return rc;
    }
    if (q->pivot && *q->pivot) {
        aq_colref *pv;
        size_t npv;
        pc.what = "--pivot";
        pc.text = q->pivot;
        if ((rc = aq_parse_cols(&pc, &pv, &npv, err))) return rc;
        if (npv != 1) return tl_errf(err, TL_EUSAGE, "--pivot takes one column, got '%s'", q->pivot);
        aq_colref *nb = tl_arena_alloc(&p->arena, (p->nby + 1) * sizeof *nb);
        if (p->nby) memcpy(nb, p->by, p->nby * sizeof *nb);
        nb[p->nby++] = pv[0];
        p->by = nb;
        p->pivot = 1;
        p->limit = -1; /* the limit counts pivoted rows */
    }
    if (q->agg && *q->agg) {
        pc.what = "--agg";
        pc.text = q->agg;
        if ((rc = aq_parse_aggs(&pc, &p->agg, &p->nagg, err))) return rc;
    }
    p->group_mode = p->nby || p->nagg;
    if (p->group_mode && !p->nagg) {
        pc.what = "--agg";
        pc.text = "count";
        if ((rc = aq_parse_aggs(&pc, &p->agg, &p->nagg, err))) return rc;
    }
    if (q->select && *q->select && p->group_mode)
        return tl_errf(err, TL_EUSAGE, "--select lists row columns; with --by/--agg the result columns are the group keys and aggregates");
    if (!p->group_mode) {
        pc.what = "--select";
        pc.text = q->select && *q->select ? q->select : p->tab->default_select;
        if ((rc = aq_parse_cols(&pc, &p->sel, &p->nsel, err))) return rc;
    }
    if (q->sort && *q->sort) {
        pc.what = "--sort";
        pc.text = q->sort;
        if ((rc = aq_parse_sort(&pc, &p->sort, &p->nsort, err))) return rc;
        if (!p->group_mode) {
            /* row mode: a sort column not selected is added to the output */
            for (size_t k = 0; k < p->nsort; k++) {
                int found = 0;
                char a1[256], b1[256];
                aq_norm_name(p->sort[k].name, a1, sizeof a1);
                for (size_t c = 0; c < p->nsel && !found; c++) {
                    aq_norm_name(p->sel[c].display, b1, sizeof b1);
                    found = !strcmp(a1, b1);
                }
                if (found) continue;
                aq_colref cr;
                char hint[600];
                if (aq_resolve_col(p->tab, p->sort[k].name, &cr, &p->arena, hint, sizeof hint))
                    return aq_errtok(err, "--sort", q->sort, p->sort[k].pos, p->sort[k].len, "unknown column '%s' in table %s%s",
                                     p->sort[k].name, p->tab->name, hint);
                aq_colref *ns = tl_arena_alloc(&p->arena, (p->nsel + 1) * sizeof *ns);
                memcpy(ns, p->sel, p->nsel * sizeof *ns);
                ns[p->nsel++] = cr;
                p->sel = ns;
            }
        }
    }
    return TL_OK;
}

void aq_plan_free(aq_plan *p)
{
    aq_expr_free(p->where);
    tl_arena_free(&p->arena);
}

tl_type aq_out_type(const aq_colref *c)
{
    switch (c->def->type) {
    case AQ_INT: return TL_I64;
    case AQ_FLOAT: return TL_F64;
    default: return TL_STR;
    }
}

typedef struct sortspec {
    const tl_table *t;
    size_t *cols;
    int *desc;
    size_t n;
} sortspec;

static int cell_cmp(const tl_table *t, size_t c, size_t a, size_t b)
{
    int ma = tl_table_is_missing(t, c, a), mb = tl_table_is_missing(t, c, b);
    if (ma || mb) return ma - mb; /* missing sorts last either way */
    const tl_column *col = &t->cols[c];
    switch (col->type) {
    case TL_STR: {
        /* numbers held as text (labels such as bs=16) sort by value */
        const char *x = col->v.s[a], *y = col->v.s[b];
        char *ex, *ey;
        double dx = strtod(x, &ex), dy = strtod(y, &ey);
        if (ex != x && ey != y && !*ex && !*ey && dx != dy) return dx < dy ? -1 : 1;
        return strcmp(x, y);
    }
    case TL_I64: return col->v.i[a] < col->v.i[b] ? -1 : col->v.i[a] > col->v.i[b];
    case TL_F64: return col->v.f[a] < col->v.f[b] ? -1 : col->v.f[a] > col->v.f[b];
    case TL_BOOL: return (int)col->v.b[a] - (int)col->v.b[b];
    }
    return 0;
}

static int row_cmp(const void *x, const void *y, void *ctx)
{
    const sortspec *s = ctx;
    size_t a = *(const size_t *)x, b = *(const size_t *)y;
    for (size_t k = 0; k < s->n; k++) {
        int ma = tl_table_is_missing(s->t, s->cols[k], a), mb = tl_table_is_missing(s->t, s->cols[k], b);
        int c;
        if (ma || mb) c = ma - mb;
        else {
            c = cell_cmp(s->t, s->cols[k], a, b);
            if (s->desc[k]) c = -c;
        }
        if (c) return c;
    }
    return a < b ? -1 : a > b;
}

int aq_sort_and_limit(aq_plan *p, tl_table *t, const char *sort_text, tl_err *err)
{
    sortspec s = {t, tl_xmalloc((p->nsort + t->ncols + 1) * sizeof(size_t)), tl_xmalloc((p->nsort + t->ncols + 1) * sizeof(int)), 0};
    for (size_t k = 0; k < p->nsort; k++) {
        long c = aq_table_col_named(t, p->sort[k].name);
        if (c < 0) {
            char cols[600];
            size_t n = 0;
            cols[0] = 0;
            for (size_t i = 0; i < t->ncols && n + 80 < sizeof cols; i++)
                n += (size_t)snprintf(cols + n, sizeof cols - n, "%s%s", i ? ", " : "", t->cols[i].name);
            free(s.cols); free(s.desc);
            return aq_errtok(err, "--sort", sort_text, p->sort[k].pos, p->sort[k].len,
                             "'%s' is not a result column (result columns: %s)", p->sort[k].name, cols);
        }
        s.cols[s.n] = (size_t)c;
        s.desc[s.n++] = p->sort[k].desc;
    }
    if (p->group_mode) {
        if (!p->nsort && p->nagg) {
            /* default: biggest first by the first aggregate */
            s.cols[s.n] = p->nby;
            s.desc[s.n++] = 1;
        }
        for (size_t k = 0; k < p->nby; k++) {
            s.cols[s.n] = k;
            s.desc[s.n++] = 0;
        }
    }
    size_t n = t->nrows;
    size_t keep = p->limit >= 0 && (size_t)p->limit < n ? (size_t)p->limit : n;
    if (s.n || keep < n) {
        size_t *perm = tl_xmalloc((n ? n : 1) * sizeof *perm);
        for (size_t i = 0; i < n; i++) perm[i] = i;
        if (s.n) qsort_r(perm, n, sizeof *perm, row_cmp, &s);
        tl_table_permute(t, perm, keep);
        free(perm);
    }
    free(s.cols);
    free(s.desc);
    return TL_OK;
}

tl_table *aq_finish(const aq_plan *p, const tl_adhoc_query *q, tl_table *t)
{
    size_t nout = p->group_mode ? p->nby + p->nagg : p->nsel;
    size_t *src = tl_xmalloc((t->ncols + t->ncols * t->nrows + 1) * sizeof *src);
    for (size_t c = 0; c < t->ncols; c++) src[c] = c;
    if (p->pivot) {
        /* label values are named with their key: "bs=8" */
        const aq_colref *pv = &p->by[p->nby - 1];
        char prefix[300] = "";
        if (pv->def->src == AQ_S_LABEL) snprintf(prefix, sizeof prefix, "%s=", pv->arg);
        tl_table *pt = aq_pivot(t, p->nby - 1, p->nagg, prefix, src);
        tl_table_free(t);
        t = pt;
        if (q->limit >= 0 && (size_t)q->limit < t->nrows) t->nrows = (size_t)q->limit;
    }
    const char *unit;
    double div;
    if (q->units && !tl_adhoc_unit(q->units, &unit, &div) && div != 1) {
        uint8_t *is_time = tl_xcalloc(t->ncols ? t->ncols : 1, 1);
        for (size_t c = 0; c < t->ncols; c++) {
            size_t k = src[c];
            if (k >= nout) continue; /* columns of the catalog listing */
            if (!p->group_mode) is_time[c] = (uint8_t)aq_colref_is_time(&p->sel[k]);
            else if (k < p->nby) is_time[c] = (uint8_t)aq_colref_is_time(&p->by[k]);
            else {
                const aq_aggdef *ad = &p->agg[k - p->nby];
                is_time[c] = ad->fn != AQ_A_COUNT && ad->fn != AQ_A_NUNIQUE && !ad->star && aq_colref_is_time(&ad->col);
            }
        }
        tl_adhoc_convert_times(t, is_time, unit, div);
        free(is_time);
    }
    free(src);
    return t;
}
