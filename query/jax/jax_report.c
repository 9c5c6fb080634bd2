/* jax_report.c — TraceLens' JAX report over a stored XPlane trace (spec
 * formats.md §2.6-§2.11). The XPlane reader (ingest/xplane.c) stored events
 * the way xprof's trace viewer emits them plus the HLO "op dict" records,
 * so this file only reproduces TraceLens' pandas logic: GPU timelines,
 * kernel launchers (in JAX every kernel is its own launcher), their
 * summaries, the XLA fusion sheets and the perf-model sheets. Floating-point
 * steps follow the reference's order of operations (double µs from ns,
 * Kahan group sums, Welford std, NumPy pairwise sums inside the
 * kernel-detail summaries, all from query/core/stats.h) so that values match to the last digit where the
 * spec says they can. */
#include "query/jax/jax.h"
#include "ingest/xplane.h"
#include "query/core/interval.h"
#include "query/core/stats.h"
#include "query/perfmodel/perfmodel.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <math.h>
#include <ctype.h>
#include <inttypes.h>

#define JX_HOST_PID 701

/* ------------------------------------------------------------ statistics */

static double min_of(const double *v, size_t n)
{
    double m = NAN;
    for (size_t i = 0; i < n; i++) if (isnan(m) || v[i] < m) m = v[i];
    return m;
}
static double max_of(const double *v, size_t n)
{
    double m = NAN;
    for (size_t i = 0; i < n; i++) if (isnan(m) || v[i] > m) m = v[i];
    return m;
}

/* ------------------------------------------------------------ text helpers */

static void put_float(tl_buf *b, double v)
{
    char tmp[40];
    tl_fmt_pyfloat(v, tmp);
    tl_buf_puts(b, tmp);
}
static void put_np_float(tl_buf *b, double v)
{
    tl_buf_puts(b, "np.float64(");
    put_float(b, v);
    tl_buf_putc(b, ')');
}
static void put_pystr(tl_buf *b, const char *s) { tl_buf_pystr(b, s, strlen(s)); }

static char *buf_dup(tl_arena *a, const tl_buf *b) { return tl_arena_strndup(a, b->p ? b->p : "", b->n); }

/* Finds key in a flat JSON object written by the XPlane reader; (*v, *vn) is
 * the raw value text. Handles escapes in keys and string values. */
static int args_find(const char *a, size_t n, const char *key, const char **v, size_t *vn)
{
    size_t kl = strlen(key), i = 0;
    int depth = 0;
    while (i < n) {
        char c = a[i];
        if (c == '{' || c == '[') { depth++; i++; continue; }
        if (c == '}' || c == ']') { depth--; i++; continue; }
        if (c != '"') { i++; continue; }
        size_t s = ++i;
        while (i < n && a[i] != '"') i += a[i] == '\\' ? 2 : 1;
        size_t e = i++;
        size_t j = i;
        while (j < n && isspace((unsigned char)a[j])) j++;
        if (j < n && a[j] == ':' && depth == 1) {
            j++;
            while (j < n && isspace((unsigned char)a[j])) j++;
            size_t vs = j;
            if (j < n && a[j] == '"') {
                j++;
                while (j < n && a[j] != '"') j += a[j] == '\\' ? 2 : 1;
                j++;
            } else {
                while (j < n && a[j] != ',' && a[j] != '}' && !isspace((unsigned char)a[j])) j++;
            }
            if (j > n) j = n;
            if (e - s == kl && !memcmp(a + s, key, kl)) {
                *v = a + vs;
                *vn = j - vs;
                return 1;
            }
            i = j;
        }
    }
    return 0;
}

static int hexv(char c)
{
    return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

/* Decodes a JSON string value (or returns number text verbatim). */
static char *json_value_str(tl_arena *ar, const char *v, size_t n)
{
    if (!n || v[0] != '"') return tl_arena_strndup(ar, v, n);
    tl_buf b = {0};
    for (size_t i = 1; i + 1 < n || (i < n && v[i] != '"'); i++) {
        char c = v[i];
        if (c == '"') break;
        if (c != '\\' || i + 1 >= n) { tl_buf_putc(&b, c); continue; }
        c = v[++i];
        switch (c) {
        case 'n': tl_buf_putc(&b, '\n'); break;
        case 't': tl_buf_putc(&b, '\t'); break;
        case 'r': tl_buf_putc(&b, '\r'); break;
        case 'b': tl_buf_putc(&b, '\b'); break;
        case 'f': tl_buf_putc(&b, '\f'); break;
        case 'u': {
            unsigned cp = 0;
            int ok = i + 4 < n;
            for (int k = 1; ok && k <= 4; k++) {
                int h = hexv(v[i + k]);
                if (h < 0) ok = 0; else cp = cp * 16 + (unsigned)h;
            }
            if (!ok) break;
            i += 4;
            if (cp >= 0xD800 && cp < 0xDC00 && i + 6 < n && v[i + 1] == '\\' && v[i + 2] == 'u') {
                unsigned lo = 0;
                int ok2 = 1;
                for (int k = 3; k <= 6; k++) {
                    int h = hexv(v[i + k]);
                    if (h < 0) ok2 = 0; else lo = lo * 16 + (unsigned)h;
                }
                if (ok2 && lo >= 0xDC00 && lo < 0xE000) {
                    cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
                    i += 6;
                }
            }
            char u[4];
            int k = 0;
            if (cp < 0x80) u[k++] = (char)cp;
            else if (cp < 0x800) { u[k++] = (char)(0xC0 | (cp >> 6)); u[k++] = (char)(0x80 | (cp & 0x3F)); }
            else if (cp < 0x10000) { u[k++] = (char)(0xE0 | (cp >> 12)); u[k++] = (char)(0x80 | ((cp >> 6) & 0x3F)); u[k++] = (char)(0x80 | (cp & 0x3F)); }
            else { u[k++] = (char)(0xF0 | (cp >> 18)); u[k++] = (char)(0x80 | ((cp >> 12) & 0x3F)); u[k++] = (char)(0x80 | ((cp >> 6) & 0x3F)); u[k++] = (char)(0x80 | (cp & 0x3F)); }
            tl_buf_append(&b, u, (size_t)k);
            break;
        }
        default: tl_buf_putc(&b, c);
        }
    }
    char *r = buf_dup(ar, &b);
    tl_buf_free(&b);
    return r;
}

static char *args_str(tl_arena *ar, const char *a, size_t n, const char *key)
{
    const char *v;
    size_t vn;
    if (!a || !args_find(a, n, key, &v, &vn)) return NULL;
    if (vn == 4 && !memcmp(v, "null", 4)) return NULL;
    return json_value_str(ar, v, vn);
}

/* ------------------------------------------------------------- HLO records */

typedef struct jx_rec {
    const char *key;      /* "%name" */
    const char *output, *cct, *meta, *bcfg; /* NULL = key absent */
    const char **ops;
    size_t nops;
    size_t idx;           /* position in the module (dict order) */
} jx_rec;

typedef struct jx_mod {
    const char *name;
    int64_t program_id;
    jx_rec *recs; /* sorted by key */
    size_t nrecs;
} jx_mod;

static int cmp_rec(const void *a, const void *b) { return strcmp(((const jx_rec *)a)->key, ((const jx_rec *)b)->key); }
static int cmp_rec_idx(const void *a, const void *b)
{
    int c = cmp_rec(a, b);
    if (c) return c;
    size_t x = ((const jx_rec *)a)->idx, y = ((const jx_rec *)b)->idx;
    return x < y ? -1 : x > y;
}

static const jx_rec *mod_find(const jx_mod *m, const char *key)
{
    jx_rec k = {.key = key};
    return m && m->nrecs ? bsearch(&k, m->recs, m->nrecs, sizeof *m->recs, cmp_rec) : NULL;
}

/* Splits line into up to max TAB fields (in place). */
static size_t split_tabs(char *line, char **f, size_t max)
{
    size_t n = 0;
    f[n++] = line;
    for (char *p = line; *p && n < max; p++)
        if (*p == '\t') { *p = 0; f[n++] = p + 1; }
    return n;
}

static size_t parse_hlo_blob(tl_arena *ar, const char *blob, size_t len, jx_mod **out)
{
    *out = NULL;
    if (!blob || len < strlen(TL_XPLANE_HLO_MAGIC) || memcmp(blob, TL_XPLANE_HLO_MAGIC, strlen(TL_XPLANE_HLO_MAGIC)))
        return 0;
    char *text = tl_arena_strndup(ar, blob, len);
    TL_VEC(jx_mod) mods = {0};
    TL_VEC(jx_rec) recs = {0};
    char *save = NULL;
    for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        char *f[8];
        size_t nf = split_tabs(line, f, 8);
        if (f[0][0] == 'M' && nf >= 3) {
            if (mods.n) {
                mods.v[mods.n - 1].recs = recs.n ? tl_arena_alloc(ar, recs.n * sizeof *recs.v) : NULL;
                if (recs.n) memcpy(mods.v[mods.n - 1].recs, recs.v, recs.n * sizeof *recs.v);
                mods.v[mods.n - 1].nrecs = recs.n;
                recs.n = 0;
            }
            jx_mod m = {.name = f[2], .program_id = strtoll(f[1], NULL, 10)};
            tl_vec_push(&mods, m);
        } else if (f[0][0] == 'R' && nf >= 7 && mods.n) {
            jx_rec r = {.key = f[1], .output = *f[2] ? f[2] : NULL, .cct = *f[3] ? f[3] : NULL,
                        .meta = *f[4] ? f[4] : NULL, .bcfg = *f[5] ? f[5] : NULL};
            size_t no = 0;
            if (*f[6]) {
                no = 1;
                for (char *p = f[6]; *p; p++) no += *p == TL_XPLANE_OPSEP;
            }
            r.ops = tl_arena_alloc(ar, (no + 1) * sizeof *r.ops);
            if (no) {
                char *p = f[6];
                for (size_t k = 0; k < no; k++) {
                    char *e = strchr(p, TL_XPLANE_OPSEP);
                    if (e) *e = 0;
                    r.ops[k] = p;
                    p = e ? e + 1 : p + strlen(p);
                }
            }
            r.nops = no;
            tl_vec_push(&recs, r);
        }
    }
    if (mods.n) {
        mods.v[mods.n - 1].recs = recs.n ? tl_arena_alloc(ar, recs.n * sizeof *recs.v) : NULL;
        if (recs.n) memcpy(mods.v[mods.n - 1].recs, recs.v, recs.n * sizeof *recs.v);
        mods.v[mods.n - 1].nrecs = recs.n;
    }
    for (size_t i = 0; i < mods.n; i++) {
        /* Records form a dict: of duplicate keys the later record wins. */
        jx_mod *m = &mods.v[i];
        for (size_t k = 0; k < m->nrecs; k++) m->recs[k].idx = k;
        if (m->nrecs) qsort(m->recs, m->nrecs, sizeof *m->recs, cmp_rec_idx);
        size_t w = 0;
        for (size_t k = 0; k < m->nrecs; k++) {
            if (w && !strcmp(m->recs[w - 1].key, m->recs[k].key)) m->recs[w - 1] = m->recs[k];
            else m->recs[w++] = m->recs[k];
        }
        m->nrecs = w;
    }
    jx_mod *res = mods.n ? tl_arena_alloc(ar, mods.n * sizeof *res) : NULL;
    if (mods.n) memcpy(res, mods.v, mods.n * sizeof *res);
    size_t n = mods.n;
    tl_vec_free(&mods);
    tl_vec_free(&recs);
    *out = res;
    return n;
}

/* ------------------------------------------------------- classification */

const char *const tl_jax_timeline_rows[8] = {"computation_time", "exposed_comm_time", "exposed_memcpy_time",
                                             "busy_time", "idle_time", "total_time", "total_comm_time",
                                             "total_memcpy_time"};

static int contains_ci(const char *s, const char *w)
{
    size_t n = strlen(w);
    for (; *s; s++)
        if (!strncasecmp(s, w, n)) return 1;
    return 0;
}

int tl_jax_event_class(const char *name)
{
    if (!strncasecmp(name, "copy", 4) || !strncasecmp(name, "memcpy", 6) || !strncasecmp(name, "memset", 6))
        return TL_JAX_MEMCPY;
    if (contains_ci(name, "nccl") || contains_ci(name, "rccl") || contains_ci(name, "cross_device_reduce"))
        return TL_JAX_COMM;
    return TL_JAX_COMP;
}

static const struct {
    const char *cat;
    const char *kw[5];
} jx_cats[] = {
    {"GEMM", {"Cijk", "gemm", "nvjet", "cublasLt", NULL}},
    {"FA BWD", {"FmhaBwd", "flash_bprop", "ck_fused_attn::dk_dv_reduce_thd", "fmha_bwd", NULL}},
    {"FA FWD", {"FmhaFwd", "flash_fprop", "fmha_fwd", NULL}},
    {"FA V3", {"kernel_func", NULL}},
    {"Conv", {"conv_", "conv.", "conv-", NULL}},
    {"TE", {"transformer_engine", "te_fused_attn", NULL}},
    {"Communication rccl/nccl", {"rccl", "nccl", NULL}},
};
#define JX_NCATS (sizeof jx_cats / sizeof *jx_cats)
#define JX_UNCAT "Uncategorized Events/XLA"

static const char *match_cat(const char *s)
{
    for (size_t c = 0; c < JX_NCATS; c++)
        for (int k = 0; jx_cats[c].kw[k]; k++)
            if (strstr(s, jx_cats[c].kw[k])) return jx_cats[c].cat;
    return NULL;
}

const char *tl_jax_kernel_category(const char *name, const char *hlo_op)
{
    const char *c = match_cat(name);
    int fa = c && !strncmp(c, "FA ", 3);
    if (!fa && hlo_op && *hlo_op) {
        const char *h = match_cat(hlo_op);
        if (h) c = h;
    }
    return c ? c : JX_UNCAT;
}

/* ------------------------------------------------------------ intervals */

/* Sorts v stably by start (as Python's sorted) and merges it in place. */
static size_t merge_ivls(tl_fival *v, size_t n)
{
    tl_fival_sort(v, n);
    return tl_fival_union_sorted(v, n);
}

int tl_jax_timeline(const double *start, const double *end, const unsigned char *cls, size_t n, double out[8])
{
    if (!n) return -1;
    tl_fival *all = tl_xmalloc(n * sizeof *all), *c[3];
    size_t nc[3] = {0, 0, 0};
    for (int k = 0; k < 3; k++) c[k] = tl_xmalloc(n * sizeof(tl_fival));
    for (size_t i = 0; i < n; i++) {
        all[i] = (tl_fival){start[i], end[i]};
        int k = cls[i] <= 2 ? cls[i] : 0;
        c[k][nc[k]++] = all[i];
    }
    size_t na = merge_ivls(all, n);
    for (int k = 0; k < 3; k++) nc[k] = merge_ivls(c[k], nc[k]);
    tl_fival *t1 = tl_xmalloc((2 * n + 2) * sizeof *t1), *t2 = tl_xmalloc((2 * n + 2) * sizeof *t2);
    double comp = tl_fival_len(c[0], nc[0]);
    double comm = tl_fival_len(c[1], nc[1]);
    size_t m1 = tl_fival_sub(c[1], nc[1], c[0], nc[0], t1);
    double exp_comm = tl_fival_len(t1, m1);
    m1 = tl_fival_sub(c[2], nc[2], c[0], nc[0], t1);
    size_t m2 = tl_fival_sub(t1, m1, c[1], nc[1], t2);
    double exp_mem = tl_fival_len(t2, m2);
    double busy = tl_fival_len(all, na);
    double total = all[na - 1].e - all[0].s;
    out[0] = comp;
    out[1] = exp_comm;
    out[2] = exp_mem;
    out[3] = busy;
    out[4] = total - busy;
    out[5] = total;
    out[6] = comm;
    out[7] = tl_fival_len(c[2], nc[2]);
    free(all);
    free(t1);
    free(t2);
    for (int k = 0; k < 3; k++) free(c[k]);
    return 0;
}

/* CPython's iteration order of a set of small non-negative ints (the
 * reference iterates the set of GPU pids): open addressing with linear
 * probes of 9, perturbation, and growth x4 when 3/5 full. */
static size_t py_set_order(const int64_t *keys, size_t n, int64_t *out)
{
    size_t mask = 7, fill = 0;
    int64_t *tab = tl_xmalloc(8 * sizeof *tab);
    uint8_t *used = tl_xcalloc(8, 1);
    for (size_t i = 0; i < n; i++) {
        int64_t key = keys[i];
        uint64_t h = (uint64_t)(key == -1 ? -2 : key), perturb = h;
        size_t j = (size_t)(h & mask);
        int found = 0, placed = 0;
        while (!found && !placed) {
            size_t probes = j + 9 <= mask ? 9 : 0;
            for (size_t p = 0, q = j; p <= probes; p++, q++) {
                if (!used[q]) {
                    used[q] = 1;
                    tab[q] = key;
                    fill++;
                    placed = 1;
                    break;
                }
                if (tab[q] == key) { found = 1; break; }
            }
            if (found || placed) break;
            perturb >>= 5;
            j = (size_t)((j * 5 + 1 + perturb) & mask);
        }
        if (placed && fill * 5 >= mask * 3) {
            size_t ns = 8;
            while (ns <= fill * 4) ns <<= 1;
            int64_t *nt = tl_xmalloc(ns * sizeof *nt);
            uint8_t *nu = tl_xcalloc(ns, 1);
            size_t nm = ns - 1;
            for (size_t q = 0; q <= mask; q++) {
                if (!used[q]) continue;
                uint64_t hh = (uint64_t)(tab[q] == -1 ? -2 : tab[q]), pt = hh;
                size_t jj = (size_t)(hh & nm);
                for (;;) {
                    size_t k = jj, lim = jj + 9 <= nm ? 9 : 0, p;
                    for (p = 0; p <= lim && nu[k]; p++) k++;
                    if (p <= lim) { nu[k] = 1; nt[k] = tab[q]; break; }
                    pt >>= 5;
                    jj = (size_t)((jj * 5 + 1 + pt) & nm);
                }
            }
            free(tab);
            free(used);
            tab = nt;
            used = nu;
            mask = nm;
        }
    }
    size_t m = 0;
    for (size_t q = 0; q <= mask; q++)
        if (used[q]) out[m++] = tab[q];
    free(tab);
    free(used);
    return m;
}

/* -------------------------------------------------------------- kernels */

typedef struct jx_shape {
    int64_t *d;
    size_t nd;
    char *type;
} jx_shape;

enum { M_REST = 0, M_GEMM, M_TE_FWD, M_TE_BWD, M_CONV, M_CONV_BWD };

typedef struct jx_k {
    size_t row;
    uint32_t uid;
    const char *name;
    int64_t pid, tid;
    double ts, dur;
    const char *hlo_op, *hlo_module;
    const jx_rec *rec;
    const char *cat;
    double latency;
    jx_shape *in;      /* parsed operands used as inputs */
    size_t nin;
    jx_shape *out;     /* parsed output shapes */
    size_t nout;
    int model;
    const char *in_dims, *in_type, *concrete; /* repr texts */
    const char *kd;    /* kernel_details repr */
    const char *pname, *tname;
} jx_k;

/* <letters><digits>[d,d,...]{...} at the start of s. */
static int parse_shape(tl_arena *ar, const char *s, jx_shape *o)
{
    const char *p = s;
    while (*p >= 'a' && *p <= 'z') p++;
    if (p == s || !(*p >= '0' && *p <= '9')) return 0;
    while (*p >= '0' && *p <= '9') p++;
    if (*p != '[') return 0;
    size_t tl = (size_t)(p - s);
    const char *q = ++p;
    size_t nd = 0;
    while (*q && *q != ']') {
        if (!(*q >= '0' && *q <= '9') && *q != ',') return 0;
        nd += *q == ',';
        q++;
    }
    if (*q != ']' || q == p) return 0;
    if (q[1] != '{') return 0;
    const char *r = q + 2;
    while (*r && ((*r >= '0' && *r <= '9') || *r == ',')) r++;
    if (*r != '}') return 0;
    nd++;
    o->d = tl_arena_alloc(ar, nd * sizeof *o->d);
    o->nd = 0;
    for (const char *x = p; x < q;) {
        o->d[o->nd++] = strtoll(x, (char **)&x, 10);
        if (*x == ',') x++;
        else if (x < q) return 0;
    }
    o->type = tl_arena_strndup(ar, s, tl);
    return 1;
}

/* Output text "(a,b)" or "a" -> parsed array shapes. */
static size_t parse_output(tl_arena *ar, const char *s, jx_shape **out)
{
    size_t cap = 4, n = 0;
    jx_shape *v = tl_arena_alloc(ar, cap * sizeof *v);
    for (const char *p = s; p && *p;) {
        while (*p == '(' || *p == ',' || *p == ' ' || *p == ')') p++;
        if (!*p) break;
        jx_shape sh;
        if (parse_shape(ar, p, &sh)) {
            if (n == cap) {
                jx_shape *nv = tl_arena_alloc(ar, 2 * cap * sizeof *nv);
                memcpy(nv, v, n * sizeof *v);
                v = nv;
                cap *= 2;
            }
            v[n++] = sh;
        }
        /* skip to the end of this element */
        int depth = 0;
        while (*p) {
            if (*p == '[' || *p == '{') depth++;
            else if (*p == ']' || *p == '}') depth--;
            else if ((*p == ',' || *p == ')') && depth == 0) break;
            p++;
        }
    }
    *out = v;
    return n;
}

static void put_dims_tuple(tl_buf *b, const int64_t *d, size_t n)
{
    tl_buf_putc(b, '(');
    for (size_t i = 0; i < n; i++) tl_buf_printf(b, "%s%" PRId64, i ? ", " : "", d[i]);
    if (n == 1) tl_buf_putc(b, ',');
    tl_buf_putc(b, ')');
}

static const char *shapes_dims_repr(tl_arena *ar, const jx_shape *s, size_t n)
{
    tl_buf b = {0};
    tl_buf_putc(&b, '(');
    for (size_t i = 0; i < n; i++) {
        if (i) tl_buf_puts(&b, ", ");
        put_dims_tuple(&b, s[i].d, s[i].nd);
    }
    if (n == 1) tl_buf_putc(&b, ',');
    tl_buf_putc(&b, ')');
    char *r = buf_dup(ar, &b);
    tl_buf_free(&b);
    return r;
}

static const char *shapes_type_repr(tl_arena *ar, const jx_shape *s, size_t n)
{
    tl_buf b = {0};
    tl_buf_putc(&b, '(');
    for (size_t i = 0; i < n; i++) {
        if (i) tl_buf_puts(&b, ", ");
        put_pystr(&b, s[i].type);
    }
    if (n == 1) tl_buf_putc(&b, ',');
    tl_buf_putc(&b, ')');
    char *r = buf_dup(ar, &b);
    tl_buf_free(&b);
    return r;
}

/* One kernel_details entry's keys other than name/dur. */
static void put_detail_fields(tl_buf *b, const jx_rec *r)
{
    tl_buf_puts(b, "'custom_call_target': ");
    if (r && r->cct) put_pystr(b, r->cct); else tl_buf_puts(b, "'NA'");
    tl_buf_puts(b, ", 'operands': ");
    if (r) {
        tl_buf_putc(b, '[');
        for (size_t i = 0; i < r->nops; i++) {
            if (i) tl_buf_puts(b, ", ");
            put_pystr(b, r->ops[i]);
        }
        tl_buf_putc(b, ']');
    } else {
        tl_buf_puts(b, "'NA'");
    }
    tl_buf_puts(b, ", 'outputs': 'NA', 'metadata': ");
    if (r && r->meta) put_pystr(b, r->meta); else tl_buf_puts(b, "'NA'");
}

/* Bytes per element for total_input_bytes (df_xla_perf). */
static int dtype_bytes(const char *t)
{
    static const struct { const char *n; int b; } tab[] = {
        {"f32", 4}, {"bf16", 2}, {"s32", 4}, {"fp16", 2}, {"u32", 4}, {"f16", 2}, {"u64", 8},
        {"f8e4m3fn", 1}, {"f8e4m3fnuz", 1}, {"f8e5m2", 1}, {"f8e5m2fnuz", 1}, {"pred", 1}};
    for (size_t i = 0; i < sizeof tab / sizeof *tab; i++)
        if (!strcmp(t, tab[i].n)) return tab[i].b;
    if (!strncmp(t, "f8", 2) || !strncmp(t, "s8", 2)) return 1;
    return 0;
}

/* Σ prod(dims) × bytes(dtype) over operand texts "dtype[dims]{layout?}". */
static int64_t total_input_bytes(const jx_rec *r, tl_buf *warn, const char *kname)
{
    int64_t tot = 0;
    if (!r) return 0;
    for (size_t i = 0; i < r->nops; i++) {
        const char *s = r->ops[i], *br = strchr(s, '[');
        if (!br || br == s) continue;
        const char *cl = strchr(br, ']');
        if (!cl) continue;
        char dt[32];
        size_t dl = (size_t)(br - s);
        if (dl >= sizeof dt) continue;
        memcpy(dt, s, dl);
        dt[dl] = 0;
        int valid = 1;
        for (size_t k = 0; k < dl; k++) if (!isalnum((unsigned char)dt[k])) valid = 0;
        if (!valid) continue;
        int bpe = dtype_bytes(dt);
        if (!bpe) {
            if (warn) tl_buf_printf(warn, "warning: unknown dtype '%s' in operands of %s; skipped in total_input_bytes\n", dt, kname);
            continue;
        }
        int64_t prod = 1;
        for (const char *x = br + 1; x < cl;) {
            char *e;
            long long v = strtoll(x, &e, 10);
            if (e == x) break;
            prod *= v;
            x = *e == ',' ? e + 1 : e;
        }
        tot += prod * bpe;
    }
    return tot;
}

/* ---------------------------------------------------------- perf models */

typedef struct jx_pm {
    const char *keys[12];
    const char *vals[12];
    size_t n;
    double flops, bytes; /* bytes NaN when unknown */
} jx_pm;

static const char *dims_repr(tl_arena *ar, const int64_t *d, size_t n)
{
    tl_buf b = {0};
    put_dims_tuple(&b, d, n);
    char *r = buf_dup(ar, &b);
    tl_buf_free(&b);
    return r;
}

static void pm_add(jx_pm *pm, const char *k, const char *v)
{
    if (pm->n < 12) { pm->keys[pm->n] = k; pm->vals[pm->n] = v; pm->n++; }
}

static int conv_bpe(const char *t)
{
    if (!strcmp(t, "f32")) return 4;
    if (!strcmp(t, "f16") || !strcmp(t, "bf16")) return 2;
    if (!strcmp(t, "f8") || !strcmp(t, "fp8")) return 1;
    return 0;
}

/* Conv (§2.11): Filter Shape keeps only the spatial dims (reference quirk). */
static int model_conv(tl_arena *ar, const jx_k *k, jx_pm *pm)
{
    if (k->nin < 2 || k->nout < 1) return 0;
    const jx_shape *x = &k->in[0];
    const int64_t *filt;
    size_t nf;
    if (k->model == M_CONV) {
        if (k->in[1].nd < 2) return 0;
        filt = k->in[1].d + 2;
        nf = k->in[1].nd - 2;
    } else {
        if (k->out[0].nd < 2) return 0;
        filt = k->out[0].d + 2;
        nf = k->out[0].nd - 2;
    }
    const jx_shape *o = &k->out[0];
    const char *nd = x->nd == 3 ? "conv1d" : x->nd == 4 ? "conv2d" : x->nd == 5 ? "conv3d" : NULL;
    if (!nd) return 0;
    int bias = k->nin == 3;
    int bpe = conv_bpe(k->in[0].type);
    pm_add(pm, "convNd", nd);
    pm_add(pm, "input_shape", dims_repr(ar, x->d, x->nd));
    pm_add(pm, "filter_shape", dims_repr(ar, filt, nf));
    pm_add(pm, "output_shape", dims_repr(ar, o->d, o->nd));
    pm_add(pm, "bias", bias ? "True" : "False");
    pm_add(pm, "bytes_per_element", bpe ? tl_arena_printf(ar, "%d", bpe) : NULL);
    pm_add(pm, "transposed_conv", "False");
    tl_pm_counts c;
    tl_pm_conv_counts(x->d, x->nd, filt, nf, o->d, o->nd, bias, bpe, &c);
    pm->flops = c.flops;
    pm->bytes = c.has_bytes ? c.bytes : NAN;
    return 1;
}

/* Integers of a JSON list value "key":["1","2"] inside the backend config text. */
static size_t bcfg_list(const char *cfg, const char *key, int64_t *out, size_t max)
{
    const char *p = cfg ? strstr(cfg, key) : NULL;
    size_t n = 0;
    if (!p) return 0;
    p = strchr(p, '[');
    if (!p) return 0;
    for (p++; *p && *p != ']' && n < max;) {
        if (*p >= '0' && *p <= '9') out[n++] = strtoll(p, (char **)&p, 10);
        else p++;
    }
    return n;
}

/* GEMM from the dot dimension numbers in gemm_backend_config (UNSURE in the
 * spec; documented in docs/CONFORMANCE.md). */
static int model_gemm(tl_arena *ar, const jx_k *k, jx_pm *pm)
{
    if (k->nin < 2) return 0;
    const jx_shape *a = &k->in[0], *b = &k->in[1];
    const char *cfg = k->rec ? k->rec->bcfg : NULL;
    int64_t lc[8], rc[8], lb[8], rb[8];
    size_t nlc = bcfg_list(cfg, "lhs_contracting_dimensions", lc, 8);
    size_t nrc = bcfg_list(cfg, "rhs_contracting_dimensions", rc, 8);
    size_t nlb = bcfg_list(cfg, "lhs_batch_dimensions", lb, 8);
    size_t nrb = bcfg_list(cfg, "rhs_batch_dimensions", rb, 8);
    if (!nlc) { lc[0] = (int64_t)a->nd - 1; nlc = 1; }
    if (!nrc) { rc[0] = b->nd >= 2 ? (int64_t)b->nd - 2 : 0; nrc = 1; }
    int64_t K = 1, B = 1, M = 1, N = 1;
    for (size_t i = 0; i < a->nd; i++) {
        int isc = 0, isb = 0;
        for (size_t j = 0; j < nlc; j++) isc |= lc[j] == (int64_t)i;
        for (size_t j = 0; j < nlb; j++) isb |= lb[j] == (int64_t)i;
        if (isc) K *= a->d[i];
        else if (isb) B *= a->d[i];
        else M *= a->d[i];
    }
    for (size_t i = 0; i < b->nd; i++) {
        int isc = 0, isb = 0;
        for (size_t j = 0; j < nrc; j++) isc |= rc[j] == (int64_t)i;
        for (size_t j = 0; j < nrb; j++) isb |= rb[j] == (int64_t)i;
        if (!isc && !isb) N *= b->d[i];
    }
    double beta = 0;
    const char *bp = cfg ? strstr(cfg, "\"beta\":") : NULL;
    if (bp) beta = strtod(bp + 7, NULL);
    pm_add(pm, "M", tl_arena_printf(ar, "%" PRId64, M));
    pm_add(pm, "N", tl_arena_printf(ar, "%" PRId64, N));
    pm_add(pm, "K", tl_arena_printf(ar, "%" PRId64, K));
    pm_add(pm, "B", tl_arena_printf(ar, "%" PRId64, B));
    char fb[40];
    tl_fmt_pyfloat(beta, fb);
    pm_add(pm, "Beta", tl_arena_strdup(ar, fb));
    pm_add(pm, "dtype_A_B", tl_arena_printf(ar, "('%s', '%s')", a->type, b->type));
    /* beta != 0: the output accumulates into C, an M × N matrix read once */
    tl_pm_counts c;
    tl_pm_gemm_counts(B, M, N, K, beta != 0 ? M : 0, dtype_bytes(a->type), &c);
    pm->flops = c.flops;
    pm->bytes = c.has_bytes ? c.bytes : NAN;
    return 1;
}

/* TE fused attention: q, k, v as (B, S, H, D); a packed (B, S, 3, H, D)
 * first operand stands for all three. SDPA formulas of perf-models §5.2
 * with bpe 2. */
static int model_te(tl_arena *ar, const jx_k *k, jx_pm *pm)
{
    if (k->nin < 1) return 0;
    const jx_shape *q = &k->in[0];
    double Bq, Sq, Hq, Dq, Skv, Hkv, Dv;
    if (q->nd == 5) {
        Bq = (double)q->d[0]; Sq = (double)q->d[1]; Hq = (double)q->d[3]; Dq = (double)q->d[4];
        Skv = Sq; Hkv = Hq; Dv = Dq;
    } else if (q->nd == 4 && k->nin >= 3 && k->in[1].nd == 4 && k->in[2].nd == 4) {
        Bq = (double)q->d[0]; Sq = (double)q->d[1]; Hq = (double)q->d[2]; Dq = (double)q->d[3];
        Skv = (double)k->in[1].d[1]; Hkv = (double)k->in[1].d[2]; Dv = (double)k->in[2].d[3];
    } else {
        return 0;
    }
    pm_add(pm, "B", tl_arena_printf(ar, "%.0f", Bq));
    pm_add(pm, "N_Q", tl_arena_printf(ar, "%.0f", Sq));
    pm_add(pm, "H_Q", tl_arena_printf(ar, "%.0f", Hq));
    pm_add(pm, "N_KV", tl_arena_printf(ar, "%.0f", Skv));
    pm_add(pm, "H_KV", tl_arena_printf(ar, "%.0f", Hkv));
    pm_add(pm, "d_h_qk", tl_arena_printf(ar, "%.0f", Dq));
    pm_add(pm, "d_h_v", tl_arena_printf(ar, "%.0f", Dv));
    if (k->model == M_TE_FWD) {
        pm->flops = Bq * Hq * (2 * Sq * Skv * Dq) + Bq * Hq * (2 * Sq * Skv * Dv);
        pm->bytes = (Bq * Sq * Hq * Dq + Bq * Skv * Hkv * Dq + Bq * Skv * Hkv * Dv + Bq * Sq * Hq * Dv) * 2;
    } else {
        double r = Hkv > 0 ? floor(Hq / Hkv) - 1 : 0;
        pm->flops = Bq * Hq * 2 * Sq * Skv * Dq + Bq * Hq * 2 * Skv * Sq * Dv + Bq * Skv * Dv * r +
                    Bq * Hq * 2 * Sq * Skv * Dv + Bq * Hq * 2 * Sq * Skv * Dq + Bq * Hq * 2 * Skv * Sq * Dq +
                    Bq * Skv * Dq * r;
        pm->bytes = (2 * Bq * Sq * Hq * Dq + 2 * Bq * Skv * Hkv * Dq + 2 * Bq * Skv * Hkv * Dv + Bq * Sq * Hq * Dv) * 2;
    }
    return 1;
}

/* ---------------------------------------------------------- the report */

typedef struct jx {
    const tl_trace *t;
    tl_arena ar;
    tl_buf *warn;
    jx_mod *mods;
    size_t nmods;
    jx_k *kernels; /* launchers, UID order */
    size_t nkernels;
    size_t npids; /* distinct pids among launchers */
} jx;

typedef struct name_pt { int64_t pid, tid; const char *name; } name_pt;

static int cmp_name_pt(const void *a, const void *b)
{
    const name_pt *x = a, *y = b;
    if (x->pid != y->pid) return x->pid < y->pid ? -1 : 1;
    return x->tid < y->tid ? -1 : x->tid > y->tid;
}

static const char *lookup_pt(const name_pt *v, size_t n, int64_t pid, int64_t tid)
{
    name_pt key = {pid, tid, NULL};
    const name_pt *r = bsearch(&key, v, n, sizeof *v, cmp_name_pt);
    return r ? r->name : NULL;
}

static const jx_mod *find_module(const jx *J, const char *name, int64_t program_id, int has_pid)
{
    const jx_mod *best = NULL;
    if (!name) return NULL;
    for (size_t i = 0; i < J->nmods; i++) {
        const jx_mod *m = &J->mods[i];
        if (strcmp(m->name, name)) continue;
        if (has_pid && m->program_id == program_id) return m;
        if (!best || m->program_id < best->program_id) best = m;
    }
    return best;
}

/* Async collectives named all-to-all.N etc. are looked up among the
 * "-start" (else "-done") records of their family, in ascending N. */
static const jx_rec *collective_fallback(const jx *J, const jx_mod *m, const char *op)
{
    static const char *const fam[] = {"all-to-all", "reduce-scatter", "all-gather"};
    for (size_t f = 0; f < 3; f++) {
        size_t fl = strlen(fam[f]);
        if (strncmp(op, fam[f], fl) || op[fl] != '.' || !isdigit((unsigned char)op[fl + 1])) continue;
        long mine = strtol(op + fl + 1, NULL, 10);
        /* numbers of this family among the module's missing kernels */
        TL_VEC(long) nums = {0};
        for (size_t i = 0; i < J->nkernels; i++) {
            const jx_k *k = &J->kernels[i];
            if (!k->hlo_op || !k->hlo_module || strcmp(k->hlo_module, m->name)) continue;
            if (strncmp(k->hlo_op, fam[f], fl) || k->hlo_op[fl] != '.') continue;
            long v = strtol(k->hlo_op + fl + 1, NULL, 10);
            int dup = 0;
            for (size_t j = 0; j < nums.n; j++) dup |= nums.v[j] == v;
            if (!dup) tl_vec_push(&nums, v);
        }
        size_t rank = 0;
        for (size_t j = 0; j < nums.n; j++) rank += nums.v[j] < mine;
        tl_vec_free(&nums);
        for (int pass = 0; pass < 2; pass++) {
            char pre[48];
            snprintf(pre, sizeof pre, "%%%s-%s", fam[f], pass ? "done" : "start");
            size_t first = SIZE_MAX, cnt = 0;
            for (size_t r = 0; r < m->nrecs; r++)
                if (!strncmp(m->recs[r].key, pre, strlen(pre))) {
                    if (first == SIZE_MAX) first = r;
                    cnt++;
                }
            if (cnt) return &m->recs[first + (rank < cnt ? rank : cnt - 1)];
        }
    }
    return NULL;
}

static int has_keyword(const jx_k *k, const tl_jax_opts *o)
{
    if (!o || !o->n_metadata_keywords) return 1;
    if (!k->rec || !k->rec->meta) return 0;
    for (size_t i = 0; i < o->n_metadata_keywords; i++)
        if (strstr(k->rec->meta, o->metadata_keywords[i])) return 1;
    return 0;
}

/* kernel_details-style summary of one group (single-entry lists in JAX). */
static const char *details_summary(tl_arena *ar, const jx_k *const *rows, size_t n, int with_hlo)
{
    tl_buf b = {0};
    double *d = tl_xmalloc((n ? n : 1) * sizeof *d);
    for (size_t i = 0; i < n; i++) d[i] = rows[i]->dur;
    tl_buf_puts(&b, "[{'name': ");
    put_pystr(&b, rows[0]->name);
    if (with_hlo) {
        tl_buf_puts(&b, ", ");
        put_detail_fields(&b, rows[0]->rec);
    }
    double tot = tl_sum_pairwise(d, n);
    double sd = tl_std_pairwise(d, n, 0); /* before the median reorders d */
    tl_buf_printf(&b, ", 'count': %zu, 'total_duration_us': ", n);
    put_np_float(&b, tot);
    tl_buf_puts(&b, ", 'mean_duration_us': ");
    put_np_float(&b, tot / (double)n);
    tl_buf_puts(&b, ", 'median_duration_us': ");
    put_np_float(&b, tl_median_f64(d, n));
    tl_buf_puts(&b, ", 'std_dev_duration_us': ");
    put_np_float(&b, sd);
    tl_buf_puts(&b, ", 'min_duration_us': ");
    put_np_float(&b, min_of(d, n));
    tl_buf_puts(&b, ", 'max_duration_us': ");
    put_np_float(&b, max_of(d, n));
    tl_buf_puts(&b, "}]");
    free(d);
    char *r = buf_dup(ar, &b);
    tl_buf_free(&b);
    return r;
}

/* Sort helper: indices by (key desc, tie asc). */
typedef struct sort_ent { double key; int64_t tie; const char *stie; size_t i; } sort_ent;
static int cmp_sort_ent(const void *a, const void *b)
{
    const sort_ent *x = a, *y = b;
    if (x->key != y->key) return x->key > y->key ? -1 : 1;
    if (x->stie && y->stie) {
        int c = strcmp(x->stie, y->stie);
        if (c) return c;
    }
    if (x->tie != y->tie) return x->tie < y->tie ? -1 : 1;
    return x->i < y->i ? -1 : x->i > y->i;
}

/* kernel_launchers_summary / xla_summary: group by (possibly renamed) name. */
typedef struct grp_in { const char *name; const jx_k *k; } grp_in;
static int cmp_grp_in(const void *a, const void *b)
{
    const grp_in *x = a, *y = b;
    int c = strcmp(x->name, y->name);
    if (c) return c;
    return x->k->uid < y->k->uid ? -1 : x->k->uid > y->k->uid;
}

static size_t count_pids(const jx_k *const *rows, size_t n)
{
    size_t c = 0;
    for (size_t i = 0; i < n; i++) {
        int seen = 0;
        for (size_t j = 0; j < i && !seen; j++) seen = rows[j]->pid == rows[i]->pid;
        c += !seen;
    }
    return c;
}

static tl_table *summary_table(const char *sheet, grp_in *in, size_t n, int main_cols)
{
    tl_table *t = tl_table_new(sheet);
    size_t c_name = tl_table_add_col(t, "name", TL_STR);
    size_t c_cats = main_cols ? tl_table_add_col(t, "Categories", TL_STR) : 0;
    size_t c_sum = tl_table_add_col(t, "total_direct_kernel_time_sum", TL_F64);
    size_t c_ssum = main_cols ? tl_table_add_col(t, "total_subtree_kernel_time_sum", TL_F64) : 0;
    size_t c_cnt = tl_table_add_col(t, "Count", TL_I64);
    size_t c_ms = tl_table_add_col(t, "total_direct_kernel_time_ms", TL_F64);
    size_t c_sms = main_cols ? tl_table_add_col(t, "total_subtree_kernel_time_ms", TL_F64) : 0;
    size_t c_pct = tl_table_add_col(t, "Percentage (%)", TL_F64);
    size_t c_cum = tl_table_add_col(t, "Cumulative Percentage (%)", TL_F64);
    size_t c_pg = tl_table_add_col(t, "time ms per gpu", TL_F64);
    (void)c_name;
    qsort(in, n, sizeof *in, cmp_grp_in);
    const jx_k **all = tl_xmalloc((n ? n : 1) * sizeof *all);
    for (size_t i = 0; i < n; i++) all[i] = in[i].k;
    double ngpu = (double)count_pids(all, n);
    free(all);
    TL_VEC(sort_ent) ord = {0};
    double *d = tl_xmalloc((n ? n : 1) * sizeof *d);
    for (size_t i = 0; i < n;) {
        size_t j = i;
        while (j < n && !strcmp(in[j].name, in[i].name)) j++;
        size_t r = tl_table_add_row(t);
        tl_table_set_str(t, 0, r, in[i].name);
        for (size_t k = i; k < j; k++) d[k - i] = in[k].k->dur;
        double s = tl_sum_kahan(d, j - i);
        tl_table_set_f64(t, c_sum, r, s);
        tl_table_set_i64(t, c_cnt, r, (int64_t)(j - i));
        tl_table_set_f64(t, c_ms, r, s / 1000);
        if (main_cols) {
            tl_table_set_f64(t, c_ssum, r, s);
            tl_table_set_f64(t, c_sms, r, s / 1000);
            /* sorted unique categories */
            const char *cs[JX_NCATS + 1];
            size_t nc = 0;
            for (size_t k = i; k < j; k++) {
                int dup = 0;
                for (size_t q = 0; q < nc; q++) dup |= !strcmp(cs[q], in[k].k->cat);
                if (!dup && nc < JX_NCATS + 1) cs[nc++] = in[k].k->cat;
            }
            for (size_t a = 1; a < nc; a++)
                for (size_t q = a; q > 0 && strcmp(cs[q - 1], cs[q]) > 0; q--) {
                    const char *tmp = cs[q]; cs[q] = cs[q - 1]; cs[q - 1] = tmp;
                }
            tl_buf b = {0};
            tl_buf_putc(&b, '[');
            for (size_t q = 0; q < nc; q++) {
                if (q) tl_buf_puts(&b, ", ");
                put_pystr(&b, cs[q]);
            }
            tl_buf_putc(&b, ']');
            tl_table_set_strn(t, c_cats, r, b.p, b.n);
            tl_buf_free(&b);
        }
        sort_ent e = {s / 1000, 0, in[i].name, r};
        tl_vec_push(&ord, e);
        i = j;
    }
    free(d);
    if (ord.n) qsort(ord.v, ord.n, sizeof *ord.v, cmp_sort_ent);
    size_t *perm = tl_xmalloc((ord.n ? ord.n : 1) * sizeof *perm);
    for (size_t i = 0; i < ord.n; i++) perm[i] = ord.v[i].i;
    tl_table_permute(t, perm, ord.n);
    free(perm);
    tl_vec_free(&ord);
    double tot = 0;
    for (size_t r = 0; r < t->nrows; r++) tot += tl_table_num(t, c_ms, r);
    double cum = 0;
    for (size_t r = 0; r < t->nrows; r++) {
        double ms = tl_table_num(t, c_ms, r), p = ms / tot * 100;
        cum += p;
        tl_table_set_f64(t, c_pct, r, p);
        tl_table_set_f64(t, c_cum, r, cum);
        tl_table_set_f64(t, c_pg, r, ms / ngpu);
    }
    return t;
}

static void launcher_cols(tl_table *t, int xla)
{
    tl_table_add_col(t, "name", TL_STR);
    tl_table_add_col(t, "UID", TL_I64);
    tl_table_add_col(t, "op category", TL_STR);
    tl_table_add_col(t, "total_direct_kernel_time", TL_F64);
    tl_table_add_col(t, "total_subtree_kernel_time", TL_F64);
    tl_table_add_col(t, "direct_kernel_count", TL_I64);
    tl_table_add_col(t, "pid", TL_I64);
    tl_table_add_col(t, "tid", TL_I64);
    tl_table_add_col(t, "Input Dims", TL_STR);
    tl_table_add_col(t, "Input type", TL_STR);
    tl_table_add_col(t, "Input Strides", TL_STR);
    tl_table_add_col(t, "Concrete Inputs", TL_STR);
    tl_table_add_col(t, "kernel_details", TL_STR);
    tl_table_add_col(t, "GPU_kernel_launch_latency", TL_F64);
    if (xla) tl_table_add_col(t, "total_input_bytes", TL_I64);
}

static void launcher_row(tl_table *t, const jx_k *k, tl_buf *warn)
{
    size_t r = tl_table_add_row(t);
    tl_table_set_str(t, 0, r, k->name);
    tl_table_set_i64(t, 1, r, k->uid);
    tl_table_set_str(t, 2, r, k->cat);
    tl_table_set_f64(t, 3, r, k->dur);
    tl_table_set_f64(t, 4, r, k->dur);
    tl_table_set_i64(t, 5, r, 1);
    tl_table_set_i64(t, 6, r, k->pid);
    tl_table_set_i64(t, 7, r, k->tid);
    tl_table_set_str(t, 8, r, k->in_dims);
    tl_table_set_str(t, 9, r, k->in_type);
    tl_table_set_str(t, 10, r, "()");
    tl_table_set_str(t, 11, r, k->concrete);
    tl_table_set_str(t, 12, r, k->kd);
    tl_table_set_f64(t, 13, r, k->latency);
    if (t->ncols > 14) tl_table_set_i64(t, 14, r, total_input_bytes(k->rec, warn, k->name));
}

static char *strip_digits(tl_arena *ar, const char *s)
{
    char *r = tl_arena_strdup(ar, s), *w = r;
    for (const char *p = s; *p; p++)
        if (!isdigit((unsigned char)*p)) *w++ = *p;
    *w = 0;
    return r;
}

/* unique-args grouping key text */
typedef struct ua_in { const char *key; const jx_k *k; size_t pos; } ua_in;
static int cmp_ua(const void *a, const void *b)
{
    const ua_in *x = a, *y = b;
    int c = strcmp(x->key, y->key);
    if (c) return c;
    return x->pos < y->pos ? -1 : x->pos > y->pos;
}

static tl_table *unique_args_table(jx *J)
{
    tl_table *t = tl_table_new("kernel_launchers_unique_args");
    const char *cols[] = {"name", "Input Dims", "Input type", "Input Strides", "Concrete Inputs", "op category"};
    for (size_t i = 0; i < 6; i++) tl_table_add_col(t, cols[i], TL_STR);
    size_t c_cnt = tl_table_add_col(t, "operation_count", TL_I64);
    const char *st[] = {"mean", "median", "std", "min", "max", "sum"};
    size_t c_st = t->ncols;
    for (size_t i = 0; i < 6; i++) {
        char nm[64];
        snprintf(nm, sizeof nm, "total_direct_kernel_time_%s", st[i]);
        tl_table_add_col(t, nm, TL_F64);
    }
    size_t c_ex = tl_table_add_col(t, "ex_UID", TL_I64);
    size_t c_kd = tl_table_add_col(t, "kernel_details_summary", TL_STR);
    size_t c_pct = tl_table_add_col(t, "Percentage (%)", TL_F64);
    size_t c_cum = tl_table_add_col(t, "Cumulative Percentage (%)", TL_F64);
    size_t n = J->nkernels;
    ua_in *in = tl_xmalloc((n ? n : 1) * sizeof *in);
    tl_buf b = {0};
    for (size_t i = 0; i < n; i++) {
        const jx_k *k = &J->kernels[i];
        b.n = 0;
        tl_buf_printf(&b, "%s\x1f%s\x1f%s\x1f()\x1f%s\x1f%s", k->name, k->in_dims, k->in_type, k->concrete, k->cat);
        in[i].key = buf_dup(&J->ar, &b);
        in[i].k = k;
        in[i].pos = i;
    }
    tl_buf_free(&b);
    qsort(in, n, sizeof *in, cmp_ua);
    TL_VEC(sort_ent) ord = {0};
    const jx_k **rows = tl_xmalloc((n ? n : 1) * sizeof *rows);
    double *d = tl_xmalloc((n ? n : 1) * sizeof *d);
    for (size_t i = 0; i < n;) {
        size_t j = i;
        while (j < n && !strcmp(in[j].key, in[i].key)) j++;
        size_t m = j - i;
        for (size_t q = 0; q < m; q++) { rows[q] = in[i + q].k; d[q] = rows[q]->dur; }
        const jx_k *f = rows[0];
        size_t r = tl_table_add_row(t);
        tl_table_set_str(t, 0, r, f->name);
        tl_table_set_str(t, 1, r, f->in_dims);
        tl_table_set_str(t, 2, r, f->in_type);
        tl_table_set_str(t, 3, r, "()");
        tl_table_set_str(t, 4, r, f->concrete);
        tl_table_set_str(t, 5, r, f->cat);
        tl_table_set_i64(t, c_cnt, r, (int64_t)m);
        double s = tl_sum_kahan(d, m);
        tl_table_set_f64(t, c_st + 0, r, s / (double)m);
        tl_table_set_f64(t, c_st + 2, r, tl_std_welford(d, m, 1)); /* before the median reorders d */
        tl_table_set_f64(t, c_st + 1, r, tl_median_f64(d, m));
        tl_table_set_f64(t, c_st + 3, r, min_of(d, m));
        tl_table_set_f64(t, c_st + 4, r, max_of(d, m));
        tl_table_set_f64(t, c_st + 5, r, s);
        tl_table_set_i64(t, c_ex, r, f->uid);
        tl_table_set_str(t, c_kd, r, details_summary(&J->ar, rows, m, 1));
        sort_ent e = {s, f->uid, NULL, r};
        tl_vec_push(&ord, e);
        i = j;
    }
    free(rows);
    free(d);
    free(in);
    if (ord.n) qsort(ord.v, ord.n, sizeof *ord.v, cmp_sort_ent);
    size_t *perm = tl_xmalloc((ord.n ? ord.n : 1) * sizeof *perm);
    for (size_t i = 0; i < ord.n; i++) perm[i] = ord.v[i].i;
    tl_table_permute(t, perm, ord.n);
    free(perm);
    tl_vec_free(&ord);
    double tot = 0, cum = 0;
    for (size_t r = 0; r < t->nrows; r++) tot += tl_table_num(t, c_st + 5, r);
    for (size_t r = 0; r < t->nrows; r++) {
        double p = tl_table_num(t, c_st + 5, r) / tot * 100;
        cum += p;
        tl_table_set_f64(t, c_pct, r, p);
        tl_table_set_f64(t, c_cum, r, cum);
    }
    return t;
}

static tl_table *by_category_table(jx *J)
{
    tl_table *t = tl_table_new("kernel_launchers_summary_by_category");
    tl_table_add_col(t, "op category", TL_STR);
    tl_table_add_col(t, "Count", TL_I64);
    tl_table_add_col(t, "total_direct_kernel_time_ms", TL_F64);
    tl_table_add_col(t, "Percentage (%)", TL_F64);
    tl_table_add_col(t, "Cumulative Percentage (%)", TL_F64);
    tl_table_add_col(t, "time ms per gpu", TL_F64);
    size_t n = J->nkernels;
    grp_in *in = tl_xmalloc((n ? n : 1) * sizeof *in);
    for (size_t i = 0; i < n; i++) { in[i].name = J->kernels[i].cat; in[i].k = &J->kernels[i]; }
    qsort(in, n, sizeof *in, cmp_grp_in);
    double *d = tl_xmalloc((n ? n : 1) * sizeof *d);
    TL_VEC(sort_ent) ord = {0};
    for (size_t i = 0; i < n;) {
        size_t j = i;
        while (j < n && !strcmp(in[j].name, in[i].name)) j++;
        for (size_t q = i; q < j; q++) d[q - i] = in[q].k->dur;
        double s = tl_sum_kahan(d, j - i);
        size_t r = tl_table_add_row(t);
        tl_table_set_str(t, 0, r, in[i].name);
        tl_table_set_i64(t, 1, r, (int64_t)(j - i));
        tl_table_set_f64(t, 2, r, s / 1000);
        sort_ent e = {s / 1000, 0, in[i].name, r};
        tl_vec_push(&ord, e);
        i = j;
    }
    free(d);
    free(in);
    if (ord.n) qsort(ord.v, ord.n, sizeof *ord.v, cmp_sort_ent);
    size_t *perm = tl_xmalloc((ord.n ? ord.n : 1) * sizeof *perm);
    for (size_t i = 0; i < ord.n; i++) perm[i] = ord.v[i].i;
    tl_table_permute(t, perm, ord.n);
    free(perm);
    tl_vec_free(&ord);
    double tot = 0, cum = 0;
    for (size_t r = 0; r < t->nrows; r++) tot += tl_table_num(t, 2, r);
    for (size_t r = 0; r < t->nrows; r++) {
        double ms = tl_table_num(t, 2, r), p = ms / tot * 100;
        cum += p;
        tl_table_set_f64(t, 3, r, p);
        tl_table_set_f64(t, 4, r, cum);
        tl_table_set_f64(t, 5, r, ms / (double)(J->npids ? J->npids : 1));
    }
    return t;
}

/* One op_<category> sheet (perf models), or NULL when no row has a model. */
typedef struct pm_row { const jx_k *k; jx_pm pm; const char *key; } pm_row;
static int cmp_pm_row(const void *a, const void *b)
{
    const pm_row *x = a, *y = b;
    int c = strcmp(x->key, y->key);
    if (c) return c;
    return x->k->uid < y->k->uid ? -1 : x->k->uid > y->k->uid;
}

static tl_table *op_sheet(jx *J, const char *cat)
{
    TL_VEC(pm_row) rows = {0};
    for (size_t i = 0; i < J->nkernels; i++) {
        const jx_k *k = &J->kernels[i];
        if (strcasecmp(k->cat, cat) || k->model == M_REST) continue;
        pm_row r = {k, {{0}, {0}, 0, NAN, NAN}, NULL};
        int ok = 0;
        switch (k->model) {
        case M_CONV: case M_CONV_BWD: ok = model_conv(&J->ar, k, &r.pm); break;
        case M_GEMM: ok = model_gemm(&J->ar, k, &r.pm); break;
        case M_TE_FWD: case M_TE_BWD: ok = model_te(&J->ar, k, &r.pm); break;
        }
        if (ok && !isnan(r.pm.flops)) tl_vec_push(&rows, r);
    }
    if (!rows.n) {
        tl_vec_free(&rows);
        return NULL;
    }
    /* param columns in order of first appearance */
    const char *pk[32];
    size_t npk = 0;
    for (size_t i = 0; i < rows.n; i++)
        for (size_t q = 0; q < rows.v[i].pm.n; q++) {
            int seen = 0;
            for (size_t z = 0; z < npk; z++) seen |= !strcmp(pk[z], rows.v[i].pm.keys[q]);
            if (!seen && npk < 32) pk[npk++] = rows.v[i].pm.keys[q];
        }
    tl_buf b = {0};
    for (size_t i = 0; i < rows.n; i++) {
        b.n = 0;
        tl_buf_puts(&b, rows.v[i].k->name);
        for (size_t z = 0; z < npk; z++) {
            const char *v = "\x01";
            for (size_t q = 0; q < rows.v[i].pm.n; q++)
                if (!strcmp(rows.v[i].pm.keys[q], pk[z]) && rows.v[i].pm.vals[q]) v = rows.v[i].pm.vals[q];
            tl_buf_printf(&b, "\x1f%s", v);
        }
        rows.v[i].key = buf_dup(&J->ar, &b);
    }
    tl_buf_free(&b);
    qsort(rows.v, rows.n, sizeof *rows.v, cmp_pm_row);

    char sheet[96];
    snprintf(sheet, sizeof sheet, "op_%s", cat);
    for (char *p = sheet; *p; p++) *p = *p == ' ' ? '_' : (char)tolower((unsigned char)*p);
    tl_table *t = tl_table_new(sheet);
    tl_table_add_col(t, "name", TL_STR);
    for (size_t z = 0; z < npk; z++) {
        char nm[80];
        snprintf(nm, sizeof nm, "param: %s", pk[z]);
        tl_table_add_col(t, nm, TL_STR);
    }
    size_t c0 = t->ncols;
    const char *fcols[] = {"GFLOPS_first", "Data Moved (MB)_first", "FLOPS/Byte_first"};
    for (int i = 0; i < 3; i++) tl_table_add_col(t, fcols[i], TL_F64);
    const char *st5[] = {"mean", "median", "std", "min", "max"};
    char nm[80];
    for (int i = 0; i < 5; i++) { snprintf(nm, sizeof nm, "TB/s_%s", st5[i]); tl_table_add_col(t, nm, TL_F64); }
    for (int i = 0; i < 5; i++) { snprintf(nm, sizeof nm, "TFLOPS/s_%s", st5[i]); tl_table_add_col(t, nm, TL_F64); }
    size_t c_pn = tl_table_add_col(t, "process_name_first", TL_STR);
    size_t c_tn = tl_table_add_col(t, "thread_name_first", TL_STR);
    size_t c_kd = tl_table_add_col(t, "kernel_details__summarize_kernel_stats", TL_STR);
    size_t c_id = tl_table_add_col(t, "Input Dims_first", TL_STR);
    size_t c_it = tl_table_add_col(t, "Input type_first", TL_STR);
    size_t c_kt = t->ncols;
    const char *st6[] = {"mean", "median", "std", "min", "max", "sum"};
    for (int i = 0; i < 6; i++) { snprintf(nm, sizeof nm, "Kernel Time (\xc2\xb5s)_%s", st6[i]); tl_table_add_col(t, nm, TL_F64); }
    size_t c_nc = tl_table_add_col(t, "name_count", TL_I64);
    size_t c_uid = tl_table_add_col(t, "UID_first", TL_I64);

    TL_VEC(sort_ent) ord = {0};
    size_t n = rows.n;
    const jx_k **ks = tl_xmalloc(n * sizeof *ks);
    double *tb = tl_xmalloc(n * sizeof *tb), *tf = tl_xmalloc(n * sizeof *tf), *kt = tl_xmalloc(n * sizeof *kt);
    for (size_t i = 0; i < n;) {
        size_t j = i;
        while (j < n && !strcmp(rows.v[j].key, rows.v[i].key)) j++;
        size_t m = j - i, ntb = 0, ntf = 0;
        for (size_t q = 0; q < m; q++) {
            const pm_row *pr = &rows.v[i + q];
            double g = pr->pm.flops / 1e9, t_us = pr->k->dur;
            ks[q] = pr->k;
            kt[q] = t_us;
            if (t_us != 0) {
                tf[ntf++] = (g / 1e3) / (t_us / 1e6);
                if (!isnan(pr->pm.bytes)) tb[ntb++] = (pr->pm.bytes / 1e12) / (t_us / 1e6);
            }
        }
        const pm_row *f = &rows.v[i];
        size_t r = tl_table_add_row(t);
        tl_table_set_str(t, 0, r, f->k->name);
        for (size_t z = 0; z < npk; z++)
            for (size_t q = 0; q < f->pm.n; q++)
                if (!strcmp(f->pm.keys[q], pk[z]) && f->pm.vals[q]) tl_table_set_str(t, 1 + z, r, f->pm.vals[q]);
        double g = f->pm.flops / 1e9;
        tl_table_set_f64(t, c0, r, g);
        tl_table_set_f64(t, c0 + 1, r, f->pm.bytes / (1024.0 * 1024.0));
        tl_table_set_f64(t, c0 + 2, r, f->pm.bytes > 0 ? (g * 1e9) / f->pm.bytes : NAN);
        double *src[2] = {tb, tf};
        size_t ns[2] = {ntb, ntf};
        for (int s = 0; s < 2; s++) {
            size_t base = c0 + 3 + (size_t)s * 5;
            tl_table_set_f64(t, base, r, tl_mean_kahan(src[s], ns[s]));
            tl_table_set_f64(t, base + 2, r, tl_std_welford(src[s], ns[s], 1)); /* before the median */
            tl_table_set_f64(t, base + 1, r, tl_median_f64(src[s], ns[s]));
            tl_table_set_f64(t, base + 3, r, min_of(src[s], ns[s]));
            tl_table_set_f64(t, base + 4, r, max_of(src[s], ns[s]));
        }
        tl_table_set_str(t, c_pn, r, f->k->pname ? f->k->pname : "Unknown");
        tl_table_set_str(t, c_tn, r, f->k->tname ? f->k->tname : "Unknown");
        tl_table_set_str(t, c_kd, r, details_summary(&J->ar, ks, m, 0));
        tl_table_set_str(t, c_id, r, f->k->in_dims);
        tl_table_set_str(t, c_it, r, f->k->in_type);
        double s = tl_sum_kahan(kt, m);
        tl_table_set_f64(t, c_kt, r, s / (double)m);
        tl_table_set_f64(t, c_kt + 2, r, tl_std_welford(kt, m, 1)); /* before the median reorders kt */
        tl_table_set_f64(t, c_kt + 1, r, tl_median_f64(kt, m));
        tl_table_set_f64(t, c_kt + 3, r, min_of(kt, m));
        tl_table_set_f64(t, c_kt + 4, r, max_of(kt, m));
        tl_table_set_f64(t, c_kt + 5, r, s);
        tl_table_set_i64(t, c_nc, r, (int64_t)m);
        tl_table_set_i64(t, c_uid, r, f->k->uid);
        sort_ent e = {s, f->k->uid, NULL, r};
        tl_vec_push(&ord, e);
        i = j;
    }
    free(ks);
    free(tb);
    free(tf);
    free(kt);
    tl_vec_free(&rows);
    if (ord.n) qsort(ord.v, ord.n, sizeof *ord.v, cmp_sort_ent);
    size_t *perm = tl_xmalloc((ord.n ? ord.n : 1) * sizeof *perm);
    for (size_t i = 0; i < ord.n; i++) perm[i] = ord.v[i].i;
    tl_table_permute(t, perm, ord.n);
    free(perm);
    tl_vec_free(&ord);
    return t;
}

static tl_table *timeline_table(const char *name, int with_pid)
{
    tl_table *t = tl_table_new(name);
    tl_table_add_col(t, "type", TL_STR);
    tl_table_add_col(t, "time ms", TL_F64);
    tl_table_add_col(t, "percent", TL_F64);
    if (with_pid) tl_table_add_col(t, "gpu_pid", TL_I64);
    return t;
}

static void timeline_rows(tl_table *t, const double m[8], int64_t pid, int with_pid)
{
    for (int i = 0; i < 8; i++) {
        size_t r = tl_table_add_row(t);
        tl_table_set_str(t, 0, r, tl_jax_timeline_rows[i]);
        tl_table_set_f64(t, 1, r, m[i] / 1000);
        tl_table_set_f64(t, 2, r, m[i] / m[5] * 100);
        if (with_pid) tl_table_set_i64(t, 3, r, pid);
    }
}

void tl_jax_sheets_free(tl_table **sheets, size_t n) { tl_tables_free(sheets, n); }

typedef TL_VEC(tl_table *) sheet_vec;

/* Process and thread names from the metadata events, sorted for lookup_pt. */
typedef struct jx_names {
    name_pt *procs, *threads;
    size_t nprocs, nthreads;
} jx_names;

static void read_names(const tl_trace *t, tl_arena *ar, jx_names *nm)
{
    nm->procs = tl_xcalloc(t->nmeta + 1, sizeof *nm->procs);
    nm->threads = tl_xcalloc(t->nmeta + 1, sizeof *nm->threads);
    nm->nprocs = nm->nthreads = 0;
    for (size_t i = 0; i < t->nmeta; i++) {
        const char *mn = tl_trace_str(t, t->m_name[i]);
        int isp = !strcmp(mn, "process_name"), ist = !strcmp(mn, "thread_name");
        if (!isp && !ist) continue;
        const char *a = t->m_args.bytes + t->m_args.offsets[i];
        size_t al = (size_t)(t->m_args.offsets[i + 1] - t->m_args.offsets[i]);
        char *name = args_str(ar, a, al, "name");
        if (!name) continue;
        if (isp) nm->procs[nm->nprocs++] = (name_pt){t->m_pid[i], 0, name};
        else nm->threads[nm->nthreads++] = (name_pt){t->m_pid[i], t->m_tid[i], name};
    }
    qsort(nm->procs, nm->nprocs, sizeof *nm->procs, cmp_name_pt);
    qsort(nm->threads, nm->nthreads, sizeof *nm->threads, cmp_name_pt);
}

/* Marks the rows on a /device:GPU process; returns the GPU pids in
 * CPython's set order (*pids malloc'd). */
static size_t gpu_rows(const tl_trace *t, const jx_names *nm, uint8_t *is_gpu, int64_t **pids)
{
    int64_t *keys = tl_xmalloc((t->n + 1) * sizeof *keys);
    size_t nkeys = 0;
    for (size_t i = 0; i < t->n; i++) {
        const char *p = lookup_pt(nm->procs, nm->nprocs, t->pid[i], 0);
        if (p && strstr(p, "/device:GPU")) {
            is_gpu[i] = 1;
            keys[nkeys++] = t->pid[i];
        }
    }
    *pids = tl_xmalloc((nkeys + 1) * sizeof **pids);
    size_t n = py_set_order(keys, nkeys, *pids);
    free(keys);
    return n;
}

/* A host event's correlation id, row and position in the source. */
typedef struct corr_ent { int64_t corr; size_t row; uint32_t uid; } corr_ent;
typedef TL_VEC(corr_ent) corr_vec;

/* Host (pid 701) events with a correlation id, sorted by (corr, uid) with
 * a stable merge sort: the last entry of a corr run is the launch parent. */
static void host_corr_index(const tl_trace *t, corr_vec *ce)
{
    for (size_t i = 0; i < t->n; i++)
        if (t->pid[i] == JX_HOST_PID && t->corr[i] != TL_NONE) {
            corr_ent e = {t->corr[i], i, t->uid[i]};
            tl_vec_push(ce, e);
        }
    if (ce->n < 2) return;
    corr_ent *tmp = tl_xmalloc(ce->n * sizeof *tmp);
    for (size_t w = 1; w < ce->n; w *= 2) {
        for (size_t lo = 0; lo < ce->n; lo += 2 * w) {
            size_t mid = lo + w < ce->n ? lo + w : ce->n, hi = lo + 2 * w < ce->n ? lo + 2 * w : ce->n;
            size_t a = lo, b = mid, k = lo;
            while (a < mid && b < hi) {
                const corr_ent *x = &ce->v[a], *y = &ce->v[b];
                int yfirst = y->corr < x->corr || (y->corr == x->corr && y->uid < x->uid);
                tmp[k++] = yfirst ? ce->v[b++] : ce->v[a++];
            }
            while (a < mid) tmp[k++] = ce->v[a++];
            while (b < hi) tmp[k++] = ce->v[b++];
        }
        memcpy(ce->v, tmp, ce->n * sizeof *tmp);
    }
    free(tmp);
}

/* Launch latency of a kernel: its start minus the start of the last host
 * event with the same correlation id (NaN when none). */
static double launch_latency(const tl_trace *t, const corr_vec *ce, size_t row, double kernel_ts)
{
    if (t->corr[row] == TL_NONE) return NAN;
    size_t lo = 0, hi = ce->n;
    while (lo < hi) { /* first entry with corr > c */
        size_t mid = (lo + hi) / 2;
        if (ce->v[mid].corr <= t->corr[row]) lo = mid + 1; else hi = mid;
    }
    if (lo > 0 && ce->v[lo - 1].corr == t->corr[row]) return kernel_ts - (double)t->ts[ce->v[lo - 1].row] / 1e3;
    return NAN;
}

/* gpu_timeline (one block per GPU pid) and gpu_events_averages. Fails, as
 * the reference does, when a GPU has no events on a 'Stream #' line or
 * there is no GPU at all. */
static int timeline_sheets(const tl_trace *t, const jx_names *nm, const uint8_t *is_gpu, const int64_t *gpu_pids,
                           size_t ngpu, const char *src, sheet_vec *sheets, tl_err *err)
{
    size_t n = t->n;
    tl_table *tt = timeline_table("gpu_timeline", 1);
    double avg[8] = {0};
    double *ts = tl_xmalloc((n + 1) * sizeof *ts), *te = tl_xmalloc((n + 1) * sizeof *te);
    unsigned char *cls = tl_xmalloc(n + 1);
    int rc = 0;
    for (size_t g = 0; g < ngpu && !rc; g++) {
        size_t m = 0;
        for (size_t i = 0; i < n; i++) {
            if (t->pid[i] != gpu_pids[g] || !is_gpu[i]) continue;
            const char *th = lookup_pt(nm->threads, nm->nthreads, t->pid[i], t->tid[i]);
            if (th ? strncmp(th, "Stream #", 8) : !(t->tid[i] < 100)) continue;
            double s = (double)t->ts[i] / 1e3, d = t->dur[i] > 0 ? (double)t->dur[i] / 1e3 : 1e-6;
            ts[m] = s;
            te[m] = s + d;
            cls[m] = (unsigned char)tl_jax_event_class(tl_trace_str(t, t->name[i]));
            m++;
        }
        double met[8];
        if (tl_jax_timeline(ts, te, cls, m, met)) {
            rc = tl_errf(err, TL_EFORMAT,
                         "%s: No GPU events found in the trace (GPU pid %" PRId64
                         " has no events on a 'Stream #' line)", src, gpu_pids[g]);
            break;
        }
        timeline_rows(tt, met, gpu_pids[g], 1);
        for (int k = 0; k < 8; k++) avg[k] += met[k];
    }
    free(ts);
    free(te);
    free(cls);
    if (!rc && !ngpu)
        rc = tl_errf(err, TL_EFORMAT, "%s: No GPU events found in the trace (no /device:GPU plane with events)", src);
    if (rc) {
        tl_table_free(tt);
        return rc;
    }
    tl_vec_push(sheets, tt);
    for (int k = 0; k < 8; k++) avg[k] /= (double)ngpu;
    tl_table *ta = timeline_table("gpu_events_averages", 0);
    timeline_rows(ta, avg, 0, 0);
    tl_vec_push(sheets, ta);
    return 0;
}

typedef TL_VEC(jx_k) kernel_vec;

/* The GPU events of category "kernel", in UID order, with their HLO args,
 * process/thread names and launch latency. */
static void collect_kernels(jx *J, const jx_names *nm, const uint8_t *is_gpu, kernel_vec *ks)
{
    const tl_trace *t = J->t;
    corr_vec ce = {0};
    host_corr_index(t, &ce);
    for (size_t i = 0; i < t->n; i++) {
        if (!is_gpu[i] || strcmp(tl_trace_str(t, t->cat[i]), "kernel")) continue;
        jx_k k;
        memset(&k, 0, sizeof k);
        k.row = i;
        k.uid = t->uid[i];
        k.name = tl_trace_str(t, t->name[i]);
        k.pid = t->pid[i];
        k.tid = t->tid[i];
        k.ts = (double)t->ts[i] / 1e3;
        k.dur = t->dur[i] > 0 ? (double)t->dur[i] / 1e3 : 1e-6;
        size_t al;
        const char *a = tl_trace_args(t, i, &al);
        k.hlo_op = args_str(&J->ar, a, al, "hlo_op");
        k.hlo_module = args_str(&J->ar, a, al, "hlo_module");
        k.pname = lookup_pt(nm->procs, nm->nprocs, k.pid, 0);
        k.tname = lookup_pt(nm->threads, nm->nthreads, k.pid, k.tid);
        k.latency = launch_latency(t, &ce, i, k.ts);
        tl_vec_push(ks, k);
    }
    tl_vec_free(&ce);
}

/* Each kernel's HLO record (warning once per missing (module, op)) and
 * category. */
static void resolve_hlo(jx *J)
{
    typedef struct { const char *module, *op; } miss;
    TL_VEC(miss) missing = {0};
    for (size_t i = 0; i < J->nkernels; i++) {
        jx_k *k = &J->kernels[i];
        if (k->hlo_op && k->hlo_module) {
            size_t al;
            const char *a = tl_trace_args(J->t, k->row, &al);
            char *pidtxt = args_str(&J->ar, a, al, "program_id");
            const jx_mod *m = find_module(J, k->hlo_module, pidtxt ? strtoll(pidtxt, NULL, 10) : 0, pidtxt != NULL);
            char *key = tl_arena_printf(&J->ar, "%%%s", k->hlo_op);
            k->rec = mod_find(m, key);
            if (!k->rec && m) k->rec = collective_fallback(J, m, k->hlo_op);
            if (!k->rec && J->warn) {
                int seen = 0;
                for (size_t q = 0; q < missing.n && !seen; q++)
                    seen = !strcmp(missing.v[q].module, k->hlo_module) && !strcmp(missing.v[q].op, k->hlo_op);
                if (!seen) {
                    miss ms = {k->hlo_module, k->hlo_op};
                    tl_vec_push(&missing, ms);
                    tl_buf_printf(J->warn, "warning: Missing hlo_op: %%%s in hlo_module: %s\n", k->hlo_op,
                                  k->hlo_module);
                }
            }
        }
        k->cat = tl_jax_kernel_category(k->name, k->hlo_op);
    }
    tl_vec_free(&missing);
}

/* Perf-model name of a kernel (§2.11.1) from its custom-call target. */
static int kernel_model(const jx_k *k)
{
    const jx_rec *r = k->rec;
    if (!r || !r->nops || !r->cct) return M_REST;
    const char *c = r->cct;
    if ((strstr(c, "matmul") || strstr(c, "cublas")) && !strcmp(k->cat, "GEMM")) return M_GEMM;
    if (strstr(c, "te_fused_attn_forward_ffi")) return M_TE_FWD;
    if (strstr(c, "te_fused_attn_backward_ffi")) return M_TE_BWD;
    if ((strstr(c, "cudnn$convForward") || strstr(c, "cudnn$convBiasActivationForward")) && !strcmp(k->cat, "Conv"))
        return M_CONV;
    if (strstr(c, "cudnn$convBackward") && !strcmp(k->cat, "Conv")) return M_CONV_BWD;
    return M_REST;
}

/* Model, parsed operands and outputs, their repr texts and the
 * kernel_details text of one kernel. */
static void describe_kernel(jx *J, jx_k *k)
{
    const jx_rec *r = k->rec;
    k->model = kernel_model(k);
    size_t no = r ? r->nops : 0;
    jx_shape *sh = tl_arena_alloc(&J->ar, (no + 1) * sizeof *sh);
    size_t ns = 0;
    for (size_t q = 0; q < no; q++)
        if (parse_shape(&J->ar, r->ops[q], &sh[ns])) ns++;
    k->in = sh;
    k->nin = ns;
    k->concrete = "()";
    if (k->model == M_TE_FWD || k->model == M_TE_BWD) {
        if (ns > 3) k->concrete = tl_arena_printf(&J->ar, "(%s,)", dims_repr(&J->ar, sh[3].d, sh[3].nd));
        if (k->nin > 3) k->nin = 3;
    }
    k->nout = r && r->output ? parse_output(&J->ar, r->output, &k->out) : 0;
    k->in_dims = shapes_dims_repr(&J->ar, k->in, k->nin);
    k->in_type = shapes_type_repr(&J->ar, k->in, k->nin);
    tl_buf b = {0};
    tl_buf_puts(&b, "[{'name': ");
    put_pystr(&b, k->name);
    tl_buf_puts(&b, ", 'dur': ");
    put_float(&b, k->dur);
    tl_buf_puts(&b, ", ");
    put_detail_fields(&b, r);
    tl_buf_puts(&b, "}]");
    k->kd = buf_dup(&J->ar, &b);
    tl_buf_free(&b);
}

/* kernel_launchers, its summaries, the unique-args table, and the XLA
 * fusion sheets (df_xla_perf, xla_summary). */
static void launcher_sheets(jx *J, sheet_vec *sheets)
{
    tl_table *kl = tl_table_new("kernel_launchers");
    launcher_cols(kl, 0);
    for (size_t i = 0; i < J->nkernels; i++) launcher_row(kl, &J->kernels[i], NULL);
    tl_vec_push(sheets, kl);

    grp_in *gi = tl_xmalloc((J->nkernels + 1) * sizeof *gi);
    for (size_t i = 0; i < J->nkernels; i++) { gi[i].name = J->kernels[i].name; gi[i].k = &J->kernels[i]; }
    tl_vec_push(sheets, summary_table("kernel_launchers_summary", gi, J->nkernels, 1));
    tl_vec_push(sheets, by_category_table(J));
    tl_vec_push(sheets, unique_args_table(J));

    tl_table *xp = tl_table_new("df_xla_perf");
    launcher_cols(xp, 1);
    size_t nx = 0;
    for (size_t i = 0; i < J->nkernels; i++) {
        if (strcmp(J->kernels[i].cat, JX_UNCAT)) continue;
        launcher_row(xp, &J->kernels[i], J->warn);
        gi[nx].name = strip_digits(&J->ar, J->kernels[i].name);
        gi[nx].k = &J->kernels[i];
        nx++;
    }
    tl_vec_push(sheets, xp);
    tl_vec_push(sheets, summary_table("xla_summary", gi, nx, 0));
    free(gi);
}

/* One op_<category> sheet per category with a perf model; a category with
 * kernels but no model row gets the reference's "Skipping" warning. */
static void perf_sheets(jx *J, sheet_vec *sheets)
{
    for (size_t c = 0; c < JX_NCATS; c++) {
        tl_table *os = op_sheet(J, jx_cats[c].cat);
        if (os) {
            tl_vec_push(sheets, os);
        } else if (J->warn) {
            int any = 0;
            for (size_t i = 0; i < J->nkernels && !any; i++) any = !strcasecmp(J->kernels[i].cat, jx_cats[c].cat);
            if (any)
                tl_buf_printf(J->warn, "warning: Skipping category '%s': DataFrame is missing 'perf model' column\n",
                              jx_cats[c].cat);
        }
    }
}

int tl_jax_report(const tl_trace *t, const tl_jax_opts *o, tl_table ***sheets_out, size_t *nsheets_out,
                  tl_buf *warn, tl_err *err)
{
    const char *src = o && o->source ? o->source : "trace";
    jx J;
    memset(&J, 0, sizeof J);
    J.t = t;
    J.warn = warn;
    tl_arena_init(&J.ar, 1 << 16);
    *sheets_out = NULL;
    *nsheets_out = 0;
    sheet_vec sheets = {0};

    jx_names nm;
    read_names(t, &J.ar, &nm);
    size_t hlen = 0;
    const char *hblob = tl_trace_extra(t, TL_XPLANE_HLO_EXTRA, &hlen);
    J.nmods = parse_hlo_blob(&J.ar, hblob, hlen, &J.mods);
    uint8_t *is_gpu = tl_xcalloc(t->n + 1, 1);
    int64_t *gpu_pids;
    size_t ngpu = gpu_rows(t, &nm, is_gpu, &gpu_pids);

    int rc = timeline_sheets(t, &nm, is_gpu, gpu_pids, ngpu, src, &sheets, err);
    if (!rc) {
        kernel_vec ks = {0};
        collect_kernels(&J, &nm, is_gpu, &ks);
        J.kernels = ks.v;
        J.nkernels = ks.n;
        resolve_hlo(&J);
        if (o && o->n_metadata_keywords) {
            size_t w = 0;
            for (size_t i = 0; i < J.nkernels; i++)
                if (has_keyword(&J.kernels[i], o)) J.kernels[w++] = J.kernels[i];
            J.nkernels = w;
        }
        for (size_t i = 0; i < J.nkernels; i++) describe_kernel(&J, &J.kernels[i]);
        const jx_k **all = tl_xmalloc((J.nkernels + 1) * sizeof *all);
        for (size_t i = 0; i < J.nkernels; i++) all[i] = &J.kernels[i];
        J.npids = count_pids(all, J.nkernels);
        free(all);
        launcher_sheets(&J, &sheets);
        perf_sheets(&J, &sheets);
        tl_vec_free(&ks);
        J.kernels = NULL;
    }
    free(nm.procs);
    free(nm.threads);
    free(is_gpu);
    free(gpu_pids);
    if (rc) {
        for (size_t i = 0; i < sheets.n; i++) tl_table_free(sheets.v[i]);
        tl_vec_free(&sheets);
    } else {
        *sheets_out = sheets.v;
        *nsheets_out = sheets.n;
    }
    tl_arena_free(&J.ar);
    return rc;
}
