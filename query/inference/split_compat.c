/* split_compat.c — the reference's trace splitter
 * (TraceLens_split_inference_trace: TraceLens/TraceUtils/
 * split_inference_trace_annotation.py and split_inference/) over a stored
 * trace: iteration roots are the user annotations of the first pattern
 * tier that matches any (split_annot.c); pieces are cut as the reference
 * cuts them (split_extract.c) along its per-iteration, steady-state
 * (split_steady.c) and phase-divided windows, named, counted and
 * summarised in execution_details.json / .csv as it does, with its
 * progress messages; the caller writes each piece. */
#include "query/inference/inference.h"
#include "query/inference/split_internal.h"

#include <stdlib.h>
#include <string.h>

/* One entry of execution_details. */
typedef struct sc_entry {
    long idx;
    char *path;
    size_t events, gpu_events, steps;
    double gpu_dur, gpu_busy;
    int dur_float, busy_float;
    int64_t phase[5];
    tl_sc_detail *d;
} sc_entry;

typedef struct sc_ctx {
    const tl_trace *t;
    const tl_sc_opts *o;
    FILE *log;
    sc_index x;
    sc_root *roots; /* iteration roots, in ts order */
    size_t nroots;
    TL_VEC(sc_entry) entries;
    tl_sc_write_fn write;
    void *wctx;
} sc_ctx;

static const char *str_of(const tl_trace *t, uint32_t sid) { return sid ? tl_trace_str(t, sid) : ""; }

/* Python's int(sum / len) of one detail key. */
static int64_t avg_of(const tl_sc_detail *d, size_t n, int bs)
{
    if (!n) return 0;
    double s = 0;
    for (size_t i = 0; i < n; i++) s += (double)(bs ? d[i].batch_size : d[i].num_requests);
    return (int64_t)(s / (double)n);
}

/* find_phase_from_window: prefill-only, mixed and decode-only counts, the
 * mean batch size and request count. */
static void phase_of(const tl_sc_detail *d, size_t n, int64_t ph[5])
{
    memset(ph, 0, 5 * sizeof *ph);
    for (size_t i = 0; i < n; i++) {
        ph[0] += sc_is_prefill_only(&d[i]);
        ph[1] += sc_is_mixed(&d[i]);
        ph[2] += sc_is_decode_only(&d[i]);
    }
    ph[3] = avg_of(d, n, 1);
    ph[4] = avg_of(d, n, 0);
}

/* iteration_details of root rows */
static tl_sc_detail *details_of(const sc_ctx *c, const sc_root *rows, size_t n)
{
    tl_sc_detail *d = tl_xmalloc((n ? n : 1) * sizeof *d);
    for (size_t i = 0; i < n; i++) sc_annotation(str_of(c->t, c->t->name[rows[i].row]), &d[i]);
    return d;
}

/* os.path.join(dir, name) */
static char *path_join(const char *dir, const char *name)
{
    size_t dl = strlen(dir), nl = strlen(name);
    char *p = tl_xmalloc(dl + nl + 2);
    memcpy(p, dir, dl);
    size_t k = dl;
    if (dl && dir[dl - 1] != '/') p[k++] = '/';
    memcpy(p + k, name, nl + 1);
    return p;
}

/* The name of a single root's piece: its annotation with '/', '(', ':',
 * ' ' and ')' rewritten as the reference rewrites them. */
static void single_name(const char *root, tl_buf *b)
{
    for (const char *s = root; *s; s++) {
        if (*s == '/' || *s == '(' || *s == ' ') tl_buf_putc(b, '_');
        else if (*s != ')' && *s != ':') tl_buf_putc(b, *s);
    }
}


/* extract_and_save of one window of roots: the piece, its name (the
 * phase-aware name for windows and labelled pieces, the annotation for a
 * single root), written through c->write, and its execution_details entry. */
static int emit(sc_ctx *c, const sc_root *rows, size_t n, long idx, const char *dir, const char *label, tl_err *err)
{
    tl_sc_detail *d = details_of(c, rows, n);
    sc_piece p;
    sc_extract(&c->x, rows, n, &p);
    int structured = label || n > 1;
    if (structured) {
        int64_t *u = tl_xmalloc((p.batch.n + 1) * sizeof *u);
        size_t nu = sc_py_set_order(p.batch.v, p.batch.n, u);
        if (nu == n)
            for (size_t i = 0; i < n; i++) d[i].batch_size = u[i];
        free(u);
    }
    int64_t ph[5];
    phase_of(d, n, ph);
    tl_buf app = {0}, name = {0};
    if (structured)
        tl_buf_printf(&app, "prefill_%lld_prefilldecode_%lld_decode_%lld_bs%lld_conc%lld", (long long)ph[0],
                      (long long)ph[1], (long long)ph[2], (long long)ph[3], (long long)ph[4]);
    else if (sc_known_annotation(str_of(c->t, c->t->name[rows[0].row])))
        single_name(str_of(c->t, c->t->name[rows[0].row]), &app);
    tl_buf_putc(&app, 0);
    if (label) tl_buf_printf(&name, "%s_%s_%s.json.gz", label, app.p, c->o->base_name);
    else
        tl_buf_printf(&name, "%s_annotation_iteration_%ld%s%s.json.gz", c->o->base_name, idx, app.p[0] ? "_" : "",
                      app.p);
    tl_buf_putc(&name, 0);
    char *path = path_join(dir, name.p);
    tl_buf_free(&app), tl_buf_free(&name);
    tl_sc_piece pc = {path, dir, p.items.v, p.items.n};
    int rc = c->write(c->wctx, c->t, &pc, err);
    if (!rc) {
        fprintf(c->log, "  annotation_iteration %ld: %zu events -> %s\n", idx, p.items.n, path);
        sc_entry e = {idx, path, p.items.n, p.gpu_events, n, p.gpu_dur, p.gpu_busy,
                      p.gpu_events && !(c->x.ts_int && c->x.dur_int), p.gpu_events && !c->x.dur_int,
                      {ph[0], ph[1], ph[2], ph[3], ph[4]}, d};
        tl_vec_push(&c->entries, e);
    } else {
        free(path), free(d);
    }
    sc_piece_free(&p);
    return rc;
}

/* extract_and_save's guard for an empty window. */
static int emit_window(sc_ctx *c, const sc_root *rows, size_t n, const char *dir, const char *label, tl_err *err)
{
    if (!n) {
        fputs("No annotation_iteration events found in the specified range, skipping extraction\n", c->log);
        return 0;
    }
    return emit(c, rows, n, 0, dir, label, err);
}

/* json.dumps of a string with ensure_ascii: non-ASCII as \uXXXX. */
static void json_ascii(tl_buf *b, const char *s)
{
    tl_buf_putc(b, '"');
    for (const unsigned char *p = (const unsigned char *)s; *p;) {
        unsigned c = *p;
        if (c == '"' || c == '\\') tl_buf_printf(b, "\\%c", c), p++;
        else if (c == '\n') tl_buf_puts(b, "\\n"), p++;
        else if (c == '\r') tl_buf_puts(b, "\\r"), p++;
        else if (c == '\t') tl_buf_puts(b, "\\t"), p++;
        else if (c < 0x20) tl_buf_printf(b, "\\u%04x", c), p++;
        else if (c < 0x80) tl_buf_putc(b, (char)c), p++;
        else {
            int len = c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : 2;
            unsigned cp = c & (len == 4 ? 0x07 : len == 3 ? 0x0f : 0x1f);
            int k = 1;
            for (; k < len && (p[k] & 0xc0) == 0x80; k++) cp = (cp << 6) | (p[k] & 0x3f);
            p += k;
            if (cp >= 0x10000) {
                cp -= 0x10000;
                tl_buf_printf(b, "\\u%04x\\u%04x", 0xd800 + (cp >> 10), 0xdc00 + (cp & 0x3ff));
            } else tl_buf_printf(b, "\\u%04x", cp);
        }
    }
    tl_buf_putc(b, '"');
}

/* A JSON / CSV number: an int when the reference's value is one. */
static void put_num(tl_buf *b, double v, int is_float)
{
    char f[40];
    if (!is_float) tl_buf_printf(b, "%lld", (long long)v);
    else {
        tl_fmt_pyfloat(v, f);
        tl_buf_puts(b, f);
    }
}

static const char *const DETAIL_KEYS[6] = {"batch_size",          "num_requests",   "context_requests",
                                           "context_sum",         "generation_requests", "generation_sum"};
static const char *const PHASE_KEYS[5] = {"num_prefill", "num_prefilldecode", "num_decode", "avg_bs", "avg_conc"};

/* execution_details.json as json.dump(..., indent=2) writes it. */
static void details_json(const sc_ctx *c, tl_buf *b)
{
    tl_buf_puts(b, "[");
    for (size_t k = 0; k < c->entries.n; k++) {
        const sc_entry *e = &c->entries.v[k];
        tl_buf_printf(b, "%s\n  {\n    \"idx\": %ld,\n    \"output_path\": ", k ? "," : "", e->idx);
        json_ascii(b, e->path);
        tl_buf_printf(b, ",\n    \"event_count\": %zu,\n    \"num_gpu_events\": %zu,\n    \"gpu_duration\": ", e->events,
                      e->gpu_events);
        put_num(b, e->gpu_dur, e->dur_float);
        tl_buf_puts(b, ",\n    \"gpu_busy_duration\": ");
        put_num(b, e->gpu_busy, e->busy_float);
        tl_buf_puts(b, ",\n    \"steps\": [");
        for (size_t s = 0; s < e->steps; s++) {
            const tl_sc_detail *d = &e->d[s];
            int64_t v[6] = {d->batch_size,  d->num_requests,        d->context_requests,
                            d->context_sum, d->generation_requests, d->generation_sum};
            tl_buf_printf(b, "%s\n      {", s ? "," : "");
            for (int j = 0; j < 6; j++)
                tl_buf_printf(b, "%s\n        \"%s\": %lld", j ? "," : "", DETAIL_KEYS[j], (long long)v[j]);
            tl_buf_puts(b, "\n      }");
        }
        tl_buf_puts(b, e->steps ? "\n    ],\n    \"phase\": {" : "],\n    \"phase\": {");
        for (int j = 0; j < 5; j++)
            tl_buf_printf(b, "%s\n      \"%s\": %lld", j ? "," : "", PHASE_KEYS[j], (long long)e->phase[j]);
        tl_buf_puts(b, "\n    }\n  }");
    }
    tl_buf_puts(b, c->entries.n ? "\n]" : "]");
}

/* A CSV cell as pandas quotes it (QUOTE_MINIMAL). */
static void csv_cell(tl_buf *b, const char *s)
{
    if (!strpbrk(s, ",\"\n\r")) {
        tl_buf_puts(b, s);
        return;
    }
    tl_buf_putc(b, '"');
    for (; *s; s++) {
        if (*s == '"') tl_buf_putc(b, '"');
        tl_buf_putc(b, *s);
    }
    tl_buf_putc(b, '"');
}

/* execution_details.csv: the entries flattened (phase_* columns, the step
 * count), floats of a float column with two decimals. */
static void details_csv(const sc_ctx *c, tl_buf *b)
{
    int dur_f = 0, busy_f = 0;
    for (size_t k = 0; k < c->entries.n; k++) dur_f |= c->entries.v[k].dur_float, busy_f |= c->entries.v[k].busy_float;
    tl_buf_puts(b, "idx,output_path,event_count,num_gpu_events,gpu_duration,gpu_busy_duration");
    for (int j = 0; j < 5; j++) tl_buf_printf(b, ",phase_%s", PHASE_KEYS[j]);
    tl_buf_puts(b, ",num_steps\n");
    for (size_t k = 0; k < c->entries.n; k++) {
        const sc_entry *e = &c->entries.v[k];
        tl_buf_printf(b, "%ld,", e->idx);
        csv_cell(b, e->path);
        tl_buf_printf(b, ",%zu,%zu,", e->events, e->gpu_events);
        if (dur_f) tl_buf_printf(b, "%.2f,", e->gpu_dur);
        else tl_buf_printf(b, "%lld,", (long long)e->gpu_dur);
        if (busy_f) tl_buf_printf(b, "%.2f", e->gpu_busy);
        else tl_buf_printf(b, "%lld", (long long)e->gpu_busy);
        for (int j = 0; j < 5; j++) tl_buf_printf(b, ",%lld", (long long)e->phase[j]);
        tl_buf_printf(b, ",%zu\n", e->steps);
    }
}

/* A stable insertion sort by ts (roots are few; no comparator context). */
static void sort_roots(sc_root *r, size_t n)
{
    for (size_t i = 1; i < n; i++) {
        sc_root v = r[i];
        size_t j = i;
        while (j > 0 && r[j - 1].ts > v.ts) r[j] = r[j - 1], j--;
        r[j] = v;
    }
}

/* find_iteration_roots: the user annotations of the primary pattern tier,
 * else of the backup tier, in ts order; the names are printed. */
static void find_roots(sc_ctx *c)
{
    const tl_trace *t = c->t;
    c->roots = tl_xmalloc((t->n + 1) * sizeof *c->roots);
    static const char *const LABEL[3] = {"", "execution steps (iteration)", "execution steps (iteration, backup)"};
    for (int tier = 1; tier <= 2 && !c->nroots; tier++) {
        if (tier == 2) fputs("No primary annotations found; falling back to backup patterns...\n", c->log);
        for (size_t i = 0; i < t->n; i++)
            if (!strcmp(str_of(t, t->cat[i]), "user_annotation") && sc_pattern_tier(str_of(t, t->name[i])) == tier)
                c->roots[c->nroots++] = (sc_root){i, c->x.ts[i], c->x.end[i]};
        sort_roots(c->roots, c->nroots);
        fprintf(c->log, "Found %zu %s events\n", c->nroots, LABEL[tier]);
        for (size_t k = 0; k < c->nroots; k++) fprintf(c->log, "%s\n", str_of(t, t->name[c->roots[k].row]));
    }
    if (!c->nroots) {
        fputs("No annotation patterns found; trying generic call-tree traversal...\n", c->log);
        free(c->roots);
        c->nroots = sc_generic_roots(&c->x, c->log, &c->roots);
    }
}

/* Python's int() of a --iterations part. */
static int py_int(const char *s, size_t n, long *v)
{
    while (n && (*s == ' ' || *s == '\t')) s++, n--;
    while (n && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\n')) n--;
    int neg = 0;
    if (n && (*s == '-' || *s == '+')) neg = *s == '-', s++, n--;
    if (!n || s[0] == '_' || s[n - 1] == '_') return -1;
    long x = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '_' && s[i + 1] != '_') continue;
        if (s[i] < '0' || s[i] > '9') return -1;
        x = x * 10 + (s[i] - '0');
    }
    *v = neg ? -x : x;
    return 0;
}

/* parse_range: 'all', 'N' (N .. N+1) or 'START:END', END capped at n. */
static int parse_range(const char *s, long n, long *start, long *end, tl_err *err)
{
    if (!strcmp(s, "all")) {
        *start = 0, *end = n;
        return 0;
    }
    const char *colon = strchr(s, ':');
    size_t l0 = colon ? (size_t)(colon - s) : strlen(s);
    if (py_int(s, l0, start))
        return tl_errf(err, TL_EUSAGE, "--iterations: invalid literal for int() with base 10: '%.*s'", (int)l0, s);
    if (colon) {
        size_t l1 = strcspn(colon + 1, ":");
        if (py_int(colon + 1, l1, end))
            return tl_errf(err, TL_EUSAGE, "--iterations: invalid literal for int() with base 10: '%.*s'", (int)l1,
                           colon + 1);
    } else *end = *start + 1;
    if (*end > n) *end = n;
    return 0;
}

/* Python's slice bounds [a:b] over n items. */
static void py_slice(long a, long b, long n, long *lo, long *hi)
{
    if (a < 0) a = a + n < 0 ? 0 : a + n;
    if (b < 0) b = b + n < 0 ? 0 : b + n;
    *lo = a > n ? n : a;
    *hi = b > n ? n : b < *lo ? *lo : b;
}

/* divide_phases_and_save: the steps of the regions, prefill-bearing or
 * decode-only (others skipped), in contiguous runs of one phase, each run
 * one piece in output_dir/prefilldecodemix or output_dir/decode_only. */
static int divide_phases(sc_ctx *c, const sc_root *w, size_t n, const sc_range *rg, size_t nr, tl_err *err)
{
    tl_sc_detail *d = details_of(c, w, n);
    fputs("[divide-phases] Steady-state regions: ", c->log);
    sc_print_regions(c->log, rg, nr);
    size_t *steps = tl_xmalloc((n + 1) * sizeof *steps), ns = 0;
    uint8_t *pd = tl_xmalloc(n + 1);
    for (size_t k = 0; k < nr; k++)
        for (long i = rg[k].start < 0 ? 0 : rg[k].start; i < rg[k].end && i < (long)n; i++)
            if (sc_has_context(&d[i]) || sc_has_generation(&d[i])) pd[ns] = sc_has_context(&d[i]), steps[ns++] = (size_t)i;
    size_t runs[2] = {0, 0}, nsteps[2] = {0, 0};
    for (size_t k = 0; k < ns; k++) {
        runs[pd[k]] += !k || pd[k] != pd[k - 1];
        nsteps[pd[k]]++;
    }
    fprintf(c->log,
            "\n[divide-phases] %zu prefilldecodemix runs (%zu steps) and %zu decode_only runs (%zu steps) across all "
            "steady-state regions.\n",
            runs[1], nsteps[1], runs[0], nsteps[0]);
    char *dir[2] = {path_join(c->o->output_dir, "decode_only"), path_join(c->o->output_dir, "prefilldecodemix")};
    size_t chunk[2] = {0, 0};
    sc_root *rows = tl_xmalloc((n + 1) * sizeof *rows);
    int rc = 0;
    for (size_t a = 0; a < ns && !rc;) {
        size_t b = a;
        while (b < ns && pd[b] == pd[a]) rows[b - a] = w[steps[b]], b++;
        tl_sc_detail *cd = details_of(c, rows, b - a);
        int64_t ph[5];
        phase_of(cd, b - a, ph);
        free(cd);
        char label[160];
        snprintf(label, sizeof label, "%s_chunk%zu_steps%zu_bs%lld_conc%lld", pd[a] ? "prefilldecodemix" : "decode_only",
                 chunk[pd[a]]++, b - a, (long long)ph[3], (long long)ph[4]);
        rc = emit(c, rows, b - a, 0, dir[pd[a]], label, err);
        a = b;
    }
    free(dir[0]), free(dir[1]), free(rows), free(steps), free(pd), free(d);
    return rc;
}

/* --find-steady-state: the mixed, decode-only and prefill-decode windows. */
static int steady_windows(sc_ctx *c, const sc_root *w, size_t n, const sc_range *rg, size_t nr, tl_err *err)
{
    static const char *const HEAD[3] = {"\n--- Finding mixed steady-state window ---\n",
                                        "\n--- Finding decode-only steady-state window ---\n",
                                        "\n--- Finding biggest prefill-decode steady-state window ---\n"};
    static const char *const LABEL[3] = {"mixed_steady_state", "decode_only_steady_state", "prefilldecode_steady_state"};
    static const sc_mode MODE[3] = {SC_MIXED, SC_DECODE_ONLY, SC_MAX_PREFILLDECODE};
    const tl_sc_opts *o = c->o;
    sc_target tg = {o->has_conc, o->has_osl, o->has_r, o->conc, o->osl, o->r};
    tl_sc_detail *d = details_of(c, w, n);
    int rc = 0;
    for (int k = 0; k < 3 && !rc; k++) {
        fputs(HEAD[k], c->log);
        sc_range x = sc_steady_window(d, n, o->num_steps, rg, nr, MODE[k], &tg, c->log);
        rc = emit_window(c, w + x.start, x.end > x.start ? (size_t)(x.end - x.start) : 0, o->output_dir, LABEL[k], err);
    }
    free(d);
    return rc;
}

/* The events the reference loads: every traceEvents entry. */
static size_t loaded_events(const tl_trace *t)
{
    size_t n = t->n + t->nflows + t->nmeta;
    static const char *const KEYS[2] = {"\"instant_events\":", "\"other_events\":"};
    for (int k = 0; k < 2; k++) {
        const char *p = t->catalog ? strstr(t->catalog, KEYS[k]) : NULL;
        if (p) n += (size_t)strtoull(p + strlen(KEYS[k]), NULL, 10);
    }
    return n;
}

/* The windows the options ask for, after the roots are known. */
static int split_roots(sc_ctx *c, tl_err *err)
{
    const tl_sc_opts *o = c->o;
    long start, end, lo, hi, n = (long)c->nroots;
    int rc = parse_range(o->iterations, n, &start, &end, err);
    if (rc) return rc;
    py_slice(start, end, n, &lo, &hi);
    if (o->store_single) {
        fprintf(c->log, "\nExtracting iterations %ld to %ld individually...\n", start, end - 1);
        if (hi <= lo) fputs("No annotation_iteration events found in the specified range, skipping extraction\n", c->log);
        for (long k = lo; k < hi && !rc; k++) rc = emit(c, &c->roots[k], 1, start + (k - lo), o->output_dir, NULL, err);
    }
    const sc_root *w = c->roots;
    size_t nw = c->nroots, nr = 0;
    sc_range *rg = NULL;
    if (strcmp(o->iterations, "all")) {
        w = c->roots + lo, nw = (size_t)(hi - lo);
        rg = tl_xmalloc(sizeof *rg), nr = 1;
        rg[0] = (sc_range){0, end - start};
        fprintf(c->log, "\nUsing explicit iteration range [%ld, %ld) as the working region.\n", start, end);
    } else if (o->find_steady || o->divide_phases) {
        tl_sc_detail *d = details_of(c, w, nw);
        rg = sc_steady_regions(d, nw, o->num_steps, c->log, &nr);
        free(d);
    }
    if (!rc && nw && o->divide_phases) {
        fputs("\n--- Dividing steady-state steps by phase ---\n", c->log);
        rc = divide_phases(c, w, nw, rg, nr, err);
    } else if (!rc && nw && o->find_steady) {
        rc = steady_windows(c, w, nw, rg, nr, err);
    }
    free(rg);
    return rc;
}

int tl_split_compat(const tl_trace *t, const tl_sc_opts *o, tl_sc_write_fn write, void *ctx, tl_sc_result *res,
                    tl_err *err)
{
    memset(res, 0, sizeof *res);
    sc_ctx c = {.t = t, .o = o, .log = o->log, .write = write, .wctx = ctx};
    sc_index_build(&c.x, t);
    fprintf(c.log, "Loaded %zu events\n", loaded_events(t));
    find_roots(&c);
    int rc = 0;
    if (o->iterations[0] && c.nroots) rc = split_roots(&c, err);
    if (!rc) {
        fprintf(c.log, "\nDone! Extracted %zu traces to %s\n", c.entries.n, o->output_dir);
        res->npieces = c.entries.n;
        if (c.entries.n) {
            details_json(&c, &res->json);
            details_csv(&c, &res->csv);
        }
    }
    for (size_t k = 0; k < c.entries.n; k++) free(c.entries.v[k].path), free(c.entries.v[k].d);
    tl_vec_free(&c.entries);
    free(c.roots);
    sc_index_free(&c.x);
    return rc;
}

void tl_sc_result_free(tl_sc_result *r)
{
    tl_buf_free(&r->json);
    tl_buf_free(&r->csv);
}
