/* category.c — op categorisation of the PyTorch report (spec
 * pytorch-report.md §6): an op-name -> category registry kept as data
 * (data/op_categories.tsv plus the perf-model table's categories, extendable
 * by TSV files and plugins) and the rule chain that falls back to name
 * patterns and the first kernel's name. Data rather than code so that users
 * can categorise their own ops without rebuilding (docs/EXTENSIONS.md). */
#include "query/pytorch/pytorch_internal.h"
#include "query/perfmodel/perfmodel.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

struct tl_catreg {
    tl_smap map;       /* op name -> index into cats */
    const char **cats;
    size_t n, cap;
    tl_arena arena;
};

tl_catreg *tl_catreg_new(void)
{
    tl_catreg *r = tl_xcalloc(1, sizeof *r);
    tl_smap_init(&r->map, 512);
    tl_arena_init(&r->arena, 1 << 14);
    return r;
}

void tl_catreg_free(tl_catreg *r)
{
    if (!r) return;
    tl_smap_free(&r->map);
    free(r->cats);
    tl_arena_free(&r->arena);
    free(r);
}

void tl_catreg_set(tl_catreg *r, const char *op, const char *category)
{
    size_t len = strlen(op);
    size_t *slot = tl_smap_get(&r->map, op, len);
    const char *c = tl_arena_strdup(&r->arena, category);
    if (slot) {
        r->cats[*slot] = c;
        return;
    }
    int isnew;
    slot = tl_smap_put(&r->map, tl_arena_strdup(&r->arena, op), len, &isnew);
    if (r->n == r->cap) {
        r->cap = r->cap ? r->cap * 2 : 256;
        r->cats = tl_xrealloc(r->cats, r->cap * sizeof *r->cats);
    }
    r->cats[r->n] = c;
    *slot = r->n++;
}

tl_catreg *tl_catreg_copy(const tl_catreg *r)
{
    tl_catreg *o = tl_catreg_new();
    for (size_t i = 0; i < r->map.cap; i++)
        if (r->map.keys[i]) tl_catreg_set(o, r->map.keys[i], r->cats[r->map.vals[i]]);
    return o;
}

const char *tl_catreg_get(const tl_catreg *r, const char *op)
{
    if (!r || !op) return NULL;
    size_t *slot = tl_smap_get(&r->map, op, strlen(op));
    return slot ? r->cats[*slot] : NULL;
}

int tl_catreg_load_tsv(tl_catreg *r, const char *path, tl_err *err)
{
    FILE *f = fopen(path, "r");
    if (!f) return tl_errf(err, TL_EIO, "%s: %s", path, strerror(errno));
    char *line = NULL;
    size_t cap = 0;
    ssize_t len;
    long lineno = 0;
    int rc = 0;
    while ((len = getline(&line, &cap, f)) >= 0) {
        lineno++;
        while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r')) line[--len] = 0;
        if (len == 0 || line[0] == '#') continue;
        char *tab = strchr(line, '\t');
        /* the op name is everything before the LAST tab: op names may hold
         * spaces but never tabs; a category never holds a tab either */
        char *last = strrchr(line, '\t');
        if (!tab || last == line || !last[1]) {
            rc = tl_errf(err, TL_EFORMAT, "%s:%ld: expected \"op name<TAB>category\"", path, lineno);
            break;
        }
        *last = 0;
        tl_catreg_set(r, line, last + 1);
    }
    free(line);
    fclose(f);
    return rc;
}

tl_catreg *tl_catreg_builtin(const char *datadir, char *warn, size_t warnsz)
{
    tl_catreg *r = tl_catreg_new();
    if (warn && warnsz) warn[0] = 0;
    for (size_t i = 0; i < tl_pm_nops(); i++) {
        const tl_pm_op *op = tl_pm_op_at(i);
        if (op && op->category) tl_catreg_set(r, op->name, op->category);
    }
    /* where the data file may be: the caller's data folder, then beside
     * the executable (<bin>/../data in a build tree, <prefix>/share/tracelens
     * when installed) */
    char exe[4096], cand[3][4096];
    size_t nc = 0;
    if (datadir) snprintf(cand[nc++], sizeof cand[0], "%s", datadir);
    ssize_t el = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (el > 0) {
        exe[el] = 0;
        char *slash = strrchr(exe, '/');
        if (slash) {
            *slash = 0;
            snprintf(cand[nc++], sizeof cand[0], "%s/../data", exe);
            snprintf(cand[nc++], sizeof cand[0], "%s/../share/tracelens", exe);
        }
    }
    tl_err err = {0};
    char path[4200];
    for (size_t i = 0; i < nc; i++) {
        snprintf(path, sizeof path, "%s/op_categories.tsv", cand[i]);
        if (access(path, R_OK) != 0) continue;
        if (tl_catreg_load_tsv(r, path, &err) == 0) return r;
        break;
    }
    if (warn && warnsz)
        snprintf(warn, warnsz, "category data file op_categories.tsv not loaded (%s); only ops with a "
                 "perf model are categorised by name", err.msg[0] ? err.msg : "not found");
    return r;
}

static int starts(const char *s, const char *p) { return strncmp(s, p, strlen(p)) == 0; }

/* Rules 1-2 of §6: the part that depends on the name only. */
static const char *by_name(const tl_catreg *r, const char *op)
{
    const char *c = tl_catreg_get(r, op);
    if (c) return c;
    if (starts(op, "triton")) return "triton";
    if (starts(op, "record_param_comms")) return "record_param_comms";
    return NULL;
}

/* Rule 3: the first kernel's name when it is an ATen native kernel. */
static const char *by_kernel(const char *k)
{
    if (!k || !starts(k, "void at::native")) return NULL;
    if (strstr(k, "elementwise")) return "elementwise";
    if (strstr(k, "reduce")) return "reduce";
    if (strstr(k, "multi_tensor_apply")) return "multi_tensor_apply";
    return NULL;
}

const char *tl_op_category(const tl_catreg *r, const char *op, const char *first_kernel)
{
    const char *c = by_name(r, op ? op : "");
    if (c) return c;
    c = by_kernel(first_kernel);
    return c ? c : "other";
}

/* Context versions: the name part is cached per name id. */
const char *pyt_category_name(pyt_ctx *c, const char *name, const char *kname)
{
    return pyt_intern(c, tl_op_category(c->cat, name, kname));
}

const char *pyt_category(pyt_ctx *c, int32_t row, int32_t first_kernel)
{
    uint32_t id = c->t->name[row];
    if (id < c->t->dict.n) {
        if (!c->name_cat_done[id]) {
            c->name_cat[id] = pyt_intern(c, by_name(c->cat, tl_trace_str(c->t, id)));
            c->name_cat_done[id] = 1;
        }
        if (c->name_cat[id]) return c->name_cat[id];
    } else {
        const char *x = by_name(c->cat, pyt_name(c, row));
        if (x) return pyt_intern(c, x);
    }
    const char *k = by_kernel(first_kernel >= 0 ? pyt_name(c, first_kernel) : NULL);
    return pyt_intern(c, k ? k : "other");
}
