/* kineto_export.c — a stored trace written back out as PyTorch Kineto JSON,
 * so that a split piece can be read by any tool (the reference included).
 * Complete events, flow events and metadata events are written in uid
 * order, so that each row's uid is its position in traceEvents again (the
 * reference's UID); the catalog's top-level metadata (schemaVersion,
 * deviceProperties, ...) becomes the top-level keys. Times are written in
 * µs with the stored nanoseconds exact, except a graph-merged trace's
 * copies, which get nested slices of their graph launch's span
 * (inf_export_times) so that a reader nesting by time rebuilds the tree.
 * The reference splitter's pieces are written the same way from a list of
 * rows (tl_kineto_write_sel). */
#include "query/inference/inference.h"
#include "query/inference/inference_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ingest/json.h"

enum { EX_EVENT, EX_FLOW, EX_META };
typedef struct ex_item {
    uint32_t uid;
    uint8_t what;
    size_t row;
} ex_item;

static int cmp_item(const void *a, const void *b)
{
    const ex_item *x = a, *y = b;
    return x->uid < y->uid ? -1 : x->uid > y->uid;
}

static void put_us(tl_buf *b, int64_t ns)
{
    uint64_t a = ns < 0 ? (uint64_t)0 - (uint64_t)ns : (uint64_t)ns;
    tl_buf_printf(b, "%s%llu.%03llu", ns < 0 ? "-" : "", (unsigned long long)(a / 1000),
                  (unsigned long long)(a % 1000));
}

static void put_str(tl_buf *b, const tl_trace *t, uint32_t sid)
{
    size_t n = 0;
    const char *s = sid ? tl_dict_get(&t->dict, sid, &n) : NULL;
    tl_buf_json_str(b, s ? s : "", s ? n : 0);
}

static void put_id(tl_buf *b, const tl_trace *t, int64_t v, int is_str)
{
    if (is_str) put_str(b, t, (uint32_t)v);
    else tl_buf_printf(b, "%lld", (long long)v);
}

/* The args object with its "correlation" set to corr (the stored column,
 * which a graph-replay merge may have changed from the source's args). */
static void put_args(tl_buf *b, const char *a, size_t n, int64_t corr)
{
    static const char key[] = "\"correlation\"";
    while (a && n && a[n - 1] == '\0') n--; /* a derived trace's blob may pad with NULs */
    if (!a || !n) a = "{}", n = 2;
    if (corr == TL_NONE) {
        tl_buf_append(b, a, n);
        return;
    }
    const char *k = memmem(a, n, key, sizeof key - 1);
    if (!k) {
        size_t open = 0;
        while (open < n && a[open] != '{') open++;
        size_t rest = open + 1;
        while (rest < n && (a[rest] == ' ' || a[rest] == '\n' || a[rest] == '\t' || a[rest] == '\r')) rest++;
        tl_buf_append(b, a, open + 1);
        tl_buf_printf(b, "\"correlation\": %lld%s", (long long)corr, rest < n && a[rest] != '}' ? ", " : "");
        tl_buf_append(b, a + open + 1, n - open - 1);
        return;
    }
    size_t v = (size_t)(k - a) + sizeof key - 1;
    while (v < n && (a[v] == ' ' || a[v] == ':' || a[v] == '\n' || a[v] == '\t')) v++;
    size_t e = v;
    while (e < n && (a[e] == '-' || (a[e] >= '0' && a[e] <= '9'))) e++;
    tl_buf_append(b, a, v);
    tl_buf_printf(b, "%lld", (long long)corr);
    tl_buf_append(b, a + e, n - e);
}

static void put_event(tl_buf *b, const tl_trace *t, size_t i, const int64_t *tm)
{
    tl_buf_puts(b, "{\"ph\":\"X\",\"cat\":");
    put_str(b, t, t->cat[i]);
    tl_buf_puts(b, ",\"name\":");
    put_str(b, t, t->name[i]);
    tl_buf_puts(b, ",\"pid\":");
    put_id(b, t, t->pid[i], t->idflags[i] & 1);
    tl_buf_puts(b, ",\"tid\":");
    put_id(b, t, t->tid[i], (t->idflags[i] >> 1) & 1);
    tl_buf_puts(b, ",\"ts\":");
    put_us(b, tm ? tm[2 * i] : t->ts[i]);
    tl_buf_puts(b, ",\"dur\":");
    put_us(b, tm ? tm[2 * i + 1] : t->dur[i]);
    size_t al = 0;
    const char *a = tl_trace_args(t, i, &al);
    tl_buf_puts(b, ",\"args\":");
    put_args(b, a, al, t->corr[i]);
    tl_buf_putc(b, '}');
}

static void put_flow(tl_buf *b, const tl_trace *t, size_t f)
{
    tl_buf_printf(b, "{\"ph\":\"%c\",\"id\":", (char)t->f_ph[f]);
    if (t->f_id[f] < 0) put_str(b, t, (uint32_t)(-t->f_id[f] - 1));
    else tl_buf_printf(b, "%lld", (long long)t->f_id[f]);
    tl_buf_puts(b, ",\"pid\":");
    put_id(b, t, t->f_pid[f], t->f_idflags[f] & 1);
    tl_buf_puts(b, ",\"tid\":");
    put_id(b, t, t->f_tid[f], (t->f_idflags[f] >> 1) & 1);
    tl_buf_puts(b, ",\"ts\":");
    put_us(b, t->f_ts[f]);
    tl_buf_puts(b, ",\"cat\":");
    put_str(b, t, t->f_cat[f]);
    tl_buf_puts(b, ",\"name\":");
    put_str(b, t, t->f_name[f]);
    tl_buf_puts(b, t->f_ph[f] == 'f' ? ",\"bp\":\"e\"}" : "}");
}

static void put_meta(tl_buf *b, const tl_trace *t, size_t m)
{
    tl_buf_puts(b, "{\"ph\":\"M\",\"name\":");
    put_str(b, t, t->m_name[m]);
    tl_buf_puts(b, ",\"pid\":");
    put_id(b, t, t->m_pid[m], t->m_idflags[m] & 1);
    if ((t->m_idflags[m] >> 2) & 1) {
        tl_buf_puts(b, ",\"tid\":");
        put_id(b, t, t->m_tid[m], (t->m_idflags[m] >> 1) & 1);
    }
    const char *a = NULL;
    size_t al = 0;
    if (t->m_args.offsets && m < t->m_args.n) {
        a = t->m_args.bytes + t->m_args.offsets[m];
        al = (size_t)(t->m_args.offsets[m + 1] - t->m_args.offsets[m]);
    }
    tl_buf_puts(b, ",\"args\":");
    put_args(b, a, al, TL_NONE);
    tl_buf_putc(b, '}');
}

/* One member of the catalog's "metadata" object, followed by ",". */
static void put_member(void *ctx, const char *k, size_t kn, const char *v, size_t vn)
{
    tl_buf *b = ctx;
    if (kn == 11 && !memcmp(k, "traceEvents", 11)) return;
    tl_buf_json_str(b, k, kn);
    tl_buf_putc(b, ':');
    tl_buf_append(b, v, vn);
    tl_buf_putc(b, ',');
}

/* The members of the catalog's "metadata" object, each followed by ",". */
static void put_toplevel(tl_buf *b, const tl_trace *t)
{
    inf_catalog_metadata_each(t, put_member, b);
}

/* Writes the items as {top-level keys, "traceEvents":[...]}, flushing
 * to out every MiB. */
static int write_items(const tl_trace *t, const ex_item *it, size_t n, int (*out)(void *, const void *, size_t),
                       void *ctx, const char *path, tl_err *err)
{
    int64_t *tm = inf_export_times(t); /* a merged trace's copies: nested slices */
    tl_buf b = {0};
    tl_buf_putc(&b, '{');
    put_toplevel(&b, t);
    tl_buf_puts(&b, "\"traceEvents\":[");
    int bad = 0;
    for (size_t i = 0; i < n && !bad; i++) {
        if (i) tl_buf_puts(&b, ",\n");
        if (it[i].what == EX_EVENT) put_event(&b, t, it[i].row, tm);
        else if (it[i].what == EX_FLOW) put_flow(&b, t, it[i].row);
        else put_meta(&b, t, it[i].row);
        if (b.n > (1u << 20)) {
            bad = out(ctx, b.p, b.n) != 0;
            b.n = 0;
        }
    }
    tl_buf_puts(&b, "]}\n");
    if (!bad) bad = out(ctx, b.p, b.n) != 0;
    tl_buf_free(&b);
    free(tm);
    return bad ? tl_errf(err, TL_EIO, "%s: write failed", path) : 0;
}

static int to_file(void *ctx, const void *p, size_t n) { return fwrite(p, 1, n, ctx) != n; }

int tl_kineto_write(const tl_trace *t, FILE *f, const char *path, tl_err *err)
{
    size_t n = t->n + t->nflows + t->nmeta, k = 0;
    ex_item *it = tl_xmalloc((n ? n : 1) * sizeof *it);
    for (size_t i = 0; i < t->n; i++) it[k++] = (ex_item){t->uid[i], EX_EVENT, i};
    for (size_t i = 0; i < t->nflows; i++) it[k++] = (ex_item){t->f_uid[i], EX_FLOW, i};
    for (size_t i = 0; i < t->nmeta; i++) it[k++] = (ex_item){t->m_uid[i], EX_META, i};
    qsort(it, n, sizeof *it, cmp_item);
    int rc = write_items(t, it, n, to_file, f, path, err);
    free(it);
    return rc;
}

int tl_kineto_write_sel(const tl_trace *t, const tl_kx_item *items, size_t n,
                        int (*out)(void *ctx, const void *p, size_t n), void *ctx, const char *path, tl_err *err)
{
    ex_item *it = tl_xmalloc((n ? n : 1) * sizeof *it);
    for (size_t i = 0; i < n; i++)
        it[i] = (ex_item){0, items[i].what == TL_KX_FLOW ? EX_FLOW : EX_EVENT, items[i].row};
    int rc = write_items(t, it, n, out, ctx, path, err);
    free(it);
    return rc;
}
