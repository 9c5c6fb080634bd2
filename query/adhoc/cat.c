/* cat.c — the catalog side of ad-hoc queries: parsing each trace's
 * catalog record once per query (so trace-level filters never touch a
 * column), the --trace selectors (id, label, config, rank, ingest time,
 * last N), trace-level column values, and the text pool that gives equal
 * strings from different traces one id. */
#include "query/adhoc/adhoc_internal.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Kind names as the catalog record's "kinds" object spells them (index =
 * tl_kind). */
static const char *const aq_kind_names[TL_K_COUNT] = {
    "other", "cpu_op", "python_function", "cuda_runtime", "cuda_driver", "kernel",
    "gpu_memcpy", "gpu_memset", "user_annotation", "gpu_user_annotation",
};

/* ---- JSON helpers (catalog text is JSON we wrote ourselves, but metadata
 * inside it comes from traces, so parse defensively) ---------------------- */
const char *aq_json_ws(const char *p, const char *end)
{
    while (p < end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')) p++;
    return p;
}

const char *aq_json_skip(const char *p, const char *end)
{
    p = aq_json_ws(p, end);
    if (p >= end) return end;
    if (*p == '"') {
        for (p++; p < end && *p != '"'; p++)
            if (*p == '\\' && p + 1 < end) p++;
        return p < end ? p + 1 : end;
    }
    if (*p == '{' || *p == '[') {
        int depth = 0;
        for (; p < end; p++) {
            if (*p == '"') {
                p = aq_json_skip(p, end) - 1;
            } else if (*p == '{' || *p == '[') depth++;
            else if (*p == '}' || *p == ']') {
                if (--depth == 0) return p + 1;
            }
        }
        return end;
    }
    while (p < end && *p != ',' && *p != '}' && *p != ']' && !isspace((unsigned char)*p)) p++;
    return p;
}

static void put_utf8(tl_buf *b, unsigned cp)
{
    char u[4];
    if (cp < 0x80) tl_buf_putc(b, (char)cp);
    else if (cp < 0x800) { u[0] = (char)(0xC0 | cp >> 6); u[1] = (char)(0x80 | (cp & 63)); tl_buf_append(b, u, 2); }
    else if (cp < 0x10000) { u[0] = (char)(0xE0 | cp >> 12); u[1] = (char)(0x80 | (cp >> 6 & 63)); u[2] = (char)(0x80 | (cp & 63)); tl_buf_append(b, u, 3); }
    else { u[0] = (char)(0xF0 | cp >> 18); u[1] = (char)(0x80 | (cp >> 12 & 63)); u[2] = (char)(0x80 | (cp >> 6 & 63)); u[3] = (char)(0x80 | (cp & 63)); tl_buf_append(b, u, 4); }
}

const char *aq_json_str(const char *p, const char *end, tl_buf *out)
{
    if (p >= end || *p != '"') return p;
    const char *q = memchr(p + 1, '"', (size_t)(end - p - 1));
    if (q && !memchr(p + 1, '\\', (size_t)(q - p - 1))) {
        tl_buf_append(out, p + 1, (size_t)(q - p - 1));
        return q + 1;
    }
    for (p++; p < end && *p != '"'; p++) {
        if (*p != '\\' || p + 1 >= end) { tl_buf_putc(out, *p); continue; }
        p++;
        switch (*p) {
        case 'n': tl_buf_putc(out, '\n'); break;
        case 't': tl_buf_putc(out, '\t'); break;
        case 'r': tl_buf_putc(out, '\r'); break;
        case 'b': tl_buf_putc(out, '\b'); break;
        case 'f': tl_buf_putc(out, '\f'); break;
        case 'u': {
            unsigned cp = 0;
            int k = 0;
            for (; k < 4 && p + 1 < end && isxdigit((unsigned char)p[1]); k++, p++)
                cp = cp * 16 + (unsigned)(isdigit((unsigned char)p[1]) ? p[1] - '0' : (tolower((unsigned char)p[1]) - 'a' + 10));
            if (cp >= 0xD800 && cp < 0xDC00 && p + 6 < end && p[1] == '\\' && p[2] == 'u') {
                unsigned lo = (unsigned)strtoul((char[5]){p[3], p[4], p[5], p[6], 0}, NULL, 16);
                if (lo >= 0xDC00 && lo < 0xE000) { cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00); p += 6; }
            }
            put_utf8(out, cp);
            break;
        }
        default: tl_buf_putc(out, *p); break;
        }
    }
    return p < end ? p + 1 : end;
}

/* Steps to the next member of a JSON object, *p being inside it (past the
 * '{' or a previous value): returns the member's value start, with *p set
 * there and its key in k, or NULL at the object's end or on text that is
 * not a member. */
static const char *obj_member(const char **pp, const char *end, tl_buf *k)
{
    const char *p = *pp;
    for (;;) {
        p = aq_json_ws(p, end);
        if (p >= end || *p == '}') return NULL;
        if (*p == ',') { p++; continue; }
        if (*p != '"') return NULL;
        k->n = 0;
        p = aq_json_str(p, end, k);
        p = aq_json_ws(p, end);
        if (p >= end || *p != ':') return NULL;
        return *pp = aq_json_ws(p + 1, end);
    }
}

/* Enters the object starting at p (after white space): the position past
 * its '{', or NULL when p is not at an object. */
static const char *obj_enter(const char *p, const char *end)
{
    p = aq_json_ws(p, end);
    return p < end && *p == '{' ? p + 1 : NULL;
}

/* Finds key in the object starting at p; returns the value start or NULL. */
static const char *obj_get(const char *p, const char *end, const char *key, size_t klen)
{
    if (!(p = obj_enter(p, end))) return NULL;
    tl_buf k = {0};
    const char *v;
    while ((v = obj_member(&p, end, &k))) {
        if (k.n == klen && memcmp(k.p, key, klen) == 0) break;
        p = aq_json_skip(v, end);
    }
    tl_buf_free(&k);
    return v;
}

static char *json_text(tl_arena *a, const char *p, const char *end)
{
    p = aq_json_ws(p, end);
    if (p >= end || !strncmp(p, "null", 4)) return NULL;
    if (*p == '"') {
        tl_buf b = {0};
        aq_json_str(p, end, &b);
        char *s = tl_arena_strndup(a, b.p ? b.p : "", b.n);
        tl_buf_free(&b);
        return s;
    }
    const char *q = aq_json_skip(p, end);
    return tl_arena_strndup(a, p, (size_t)(q - p));
}

static int64_t json_i64(const char *p, const char *end, int64_t dflt)
{
    p = aq_json_ws(p, end);
    if (p >= end || (*p != '-' && !isdigit((unsigned char)*p))) return dflt;
    return strtoll(p, NULL, 10);
}

/* ---- catalog ------------------------------------------------------------ */
typedef struct load_ctx {
    aq_catalog *c;
} load_ctx;

static int cmp_strp(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static int load_cb(void *ctx, uint64_t id, const char *json)
{
    aq_catalog *c = ((load_ctx *)ctx)->c;
    tl_arena *a = &c->arena;
    aq_trace t;
    memset(&t, 0, sizeof t);
    t.id = id;
    tl_id_format(id, t.hex);
    t.json = json;
    t.rank = INT64_MIN;
    /* Every field we need precedes the (large) trace metadata, which the
     * ingest writes last: parse a bounded prefix and stop at "metadata",
     * so a 1,000-trace catalog costs microseconds per trace, not a scan
     * of every trace's metadata. Fall back to the whole text if needed. */
    size_t bound = 1024, len = strnlen(json, bound);
    int full = len < bound, seen_meta = 0;
again:;
    const char *end = json + len;
    const char *p = obj_enter(json, end);
    if (!p) { tl_vec_push(&c->v, t); return 0; }
    tl_buf k = {0};
    while (obj_member(&p, end, &k)) {
        tl_buf_putc(&k, 0);
        k.n--;
        const char *key = k.p;
        if (!strcmp(key, "metadata")) { seen_meta = 1; break; }
        const char *v = p, *ve = aq_json_skip(p, end);
        if (!strcmp(key, "path")) t.path = json_text(a, v, ve);
        else if (!strcmp(key, "format")) t.format = json_text(a, v, ve);
        else if (!strcmp(key, "config")) t.config = json_text(a, v, ve);
        else if (!strcmp(key, "run")) t.run = json_text(a, v, ve);
        else if (!strcmp(key, "rank")) t.rank = json_i64(v, ve, INT64_MIN);
        else if (!strcmp(key, "ingest_time_ns")) t.ingest_ns = json_i64(v, ve, 0);
        else if (!strcmp(key, "events")) t.events = json_i64(v, ve, 0);
        else if (!strcmp(key, "gpu_events")) t.gpu_events = json_i64(v, ve, 0);
        else if (!strcmp(key, "flows")) t.flows = json_i64(v, ve, 0);
        else if (!strcmp(key, "source_bytes")) t.source_bytes = json_i64(v, ve, 0);
        else if (!strcmp(key, "ts_min_ns")) t.ts_min = json_i64(v, ve, 0);
        else if (!strcmp(key, "ts_max_ns")) t.ts_max = json_i64(v, ve, 0);
        else if (!strcmp(key, "gpu_ts_min_ns")) t.gpu_ts_min = json_i64(v, ve, 0);
        else if (!strcmp(key, "gpu_ts_max_ns")) t.gpu_ts_max = json_i64(v, ve, 0);
        else if (!strcmp(key, "kinds")) {
            const char *q = obj_enter(v, ve);
            tl_buf kk = {0};
            while (q && obj_member(&q, ve, &kk)) {
                for (int i = 0; i < TL_K_COUNT; i++)
                    if (strlen(aq_kind_names[i]) == kk.n && !memcmp(aq_kind_names[i], kk.p, kk.n)) t.kinds[i] = json_i64(q, ve, 0);
                q = aq_json_skip(q, ve);
            }
            tl_buf_free(&kk);
        } else if (!strcmp(key, "labels")) {
            TL_VEC(char *) ks = {0};
            TL_VEC(char *) vs = {0};
            const char *q = obj_enter(v, ve);
            tl_buf lk = {0};
            while (q && obj_member(&q, ve, &lk)) {
                const char *qe = aq_json_skip(q, ve);
                tl_vec_push(&ks, tl_arena_strndup(a, lk.p ? lk.p : "", lk.n));
                char *lv = json_text(a, q, qe);
                tl_vec_push(&vs, lv ? lv : tl_arena_strdup(a, ""));
                q = qe;
            }
            tl_buf_free(&lk);
            t.nlabels = ks.n;
            t.lkey = tl_arena_alloc(a, (ks.n + 1) * sizeof(char *));
            t.lval = tl_arena_alloc(a, (ks.n + 1) * sizeof(char *));
            for (size_t i = 0; i < ks.n; i++) {
                t.lkey[i] = ks.v[i];
                t.lval[i] = vs.v[i];
                int seen = 0;
                for (size_t j = 0; j < c->label_keys.n && !seen; j++) seen = !strcmp(c->label_keys.v[j], ks.v[i]);
                if (!seen) tl_vec_push(&c->label_keys, ks.v[i]);
            }
            tl_vec_free(&ks);
            tl_vec_free(&vs);
        }
        p = ve;
    }
    tl_buf_free(&k);
    if (!seen_meta && !full) {
        /* the prefix ended inside a field: parse the whole record */
        bound *= 8;
        len = strnlen(json, bound);
        full = len < bound;
        t.nlabels = 0;
        goto again;
    }
    tl_vec_push(&c->v, t);
    return 0;
}

int aq_catalog_load(tl_reader *r, aq_catalog *c, tl_err *err)
{
    memset(c, 0, sizeof *c);
    tl_arena_init(&c->arena, 64 * 1024);
    load_ctx lc = {c};
    int rc = tl_reader_foreach(r, load_cb, &lc, err);
    if (c->label_keys.n) qsort(c->label_keys.v, c->label_keys.n, sizeof(char *), cmp_strp);
    return rc;
}

void aq_catalog_free(aq_catalog *c)
{
    tl_vec_free(&c->v);
    tl_vec_free(&c->label_keys);
    tl_arena_free(&c->arena);
}

const char *aq_trace_label(const aq_trace *t, const char *key)
{
    for (size_t i = 0; i < t->nlabels; i++)
        if (!strcmp(t->lkey[i], key)) return t->lval[i];
    return NULL;
}

int aq_trace_meta(const aq_trace *t, const char *path, tl_buf *out)
{
    if (!t->json) return -1;
    const char *end = t->json + strlen(t->json);
    const char *v = obj_get(t->json, end, "metadata", 8);
    if (!v) return -1;
    const char *ve = aq_json_skip(v, end);
    /* The catalog nests the trace's top-level keys under "metadata"; a
     * path may name them with or without a leading "metadata.". */
    for (int attempt = 0; attempt < 2; attempt++) {
        const char *cur = v, *cend = ve, *s = path;
        int ok = 1;
        while (*s) {
            const char *dot = strchr(s, '.');
            size_t kl = dot ? (size_t)(dot - s) : strlen(s);
            const char *nv = NULL;
            const char *q = aq_json_ws(cur, cend);
            if (q < cend && *q == '[') {
                /* numeric index into an array */
                char *e;
                long idx = strtol(s, &e, 10);
                if (e != s + kl) { ok = 0; break; }
                q++;
                for (long i = 0; q < cend; i++) {
                    q = aq_json_ws(q, cend);
                    if (*q == ']') break;
                    if (i == idx) { nv = q; break; }
                    q = aq_json_skip(q, cend);
                    q = aq_json_ws(q, cend);
                    if (q < cend && *q == ',') q++;
                }
            } else {
                nv = obj_get(cur, cend, s, kl);
            }
            if (!nv) { ok = 0; break; }
            cur = nv;
            cend = aq_json_skip(nv, cend);
            s = dot ? dot + 1 : s + kl;
        }
        if (ok) {
            const char *q = aq_json_ws(cur, cend);
            if (q < cend && !strncmp(q, "null", 4)) return -1;
            if (q < cend && *q == '"') aq_json_str(q, cend, out);
            else tl_buf_append(out, q, (size_t)(cend - q));
            tl_buf_putc(out, 0);
            out->n--;
            return 0;
        }
        /* second attempt: the catalog's metadata may itself hold "metadata" */
        const char *inner = obj_get(v, ve, "metadata", 8);
        if (!inner) break;
        v = inner;
        ve = aq_json_skip(inner, ve);
    }
    return -1;
}

/* ---- glob ------------------------------------------------------------- */
int tl_adhoc_glob(const char *pat, const char *s)
{
    const char *star = NULL, *ss = NULL;
    while (*s) {
        if (*pat == '?' || *pat == *s) { pat++; s++; }
        else if (*pat == '*') { star = pat++; ss = s; }
        else if (star) { pat = star + 1; s = ++ss; }
        else return 0;
    }
    while (*pat == '*') pat++;
    return *pat == 0;
}

/* ---- selectors ----------------------------------------------------------- */
static int parse_when(const char *s, int64_t *ns)
{
    char *e;
    double v = strtod(s, &e);
    if (e != s && *e && !e[1] && strchr("smhdw", *e) && !strchr(s, '-')) {
        double mult = *e == 's' ? 1 : *e == 'm' ? 60 : *e == 'h' ? 3600 : *e == 'd' ? 86400 : 604800;
        *ns = tl_wall_ns() - (int64_t)(v * mult * 1e9);
        return 0;
    }
    struct tm tmv;
    memset(&tmv, 0, sizeof tmv);
    int Y, M, D, h = 0, mi = 0, sec = 0;
    int n = sscanf(s, "%d-%d-%d%*[T ]%d:%d:%d", &Y, &M, &D, &h, &mi, &sec);
    if (n < 3) return -1;
    tmv.tm_year = Y - 1900;
    tmv.tm_mon = M - 1;
    tmv.tm_mday = D;
    tmv.tm_hour = h;
    tmv.tm_min = mi;
    tmv.tm_sec = sec;
    tmv.tm_isdst = -1;
    time_t tt = mktime(&tmv);
    if (tt == (time_t)-1) return -1;
    if ((int64_t)tt > INT64_MAX / 1000000000LL) *ns = INT64_MAX;
    else if ((int64_t)tt < INT64_MIN / 1000000000LL) *ns = INT64_MIN;
    else *ns = (int64_t)tt * 1000000000LL;
    return 0;
}

static int is_hex(const char *s)
{
    if (!*s) return 0;
    for (; *s; s++)
        if (!isxdigit((unsigned char)*s)) return 0;
    return 1;
}

/* One alternative of a selector against one trace. key may be "" (id). */
static int alt_match(const aq_trace *t, const char *key, const char *val, int64_t when)
{
    if (!*key) return strncasecmp(t->hex, val, strlen(val)) == 0;
    if (!strcmp(key, "label")) {
        const char *eq = strchr(val, '=');
        char k[256];
        size_t kl = eq ? (size_t)(eq - val) : strlen(val);
        if (kl >= sizeof k) kl = sizeof k - 1;
        memcpy(k, val, kl);
        k[kl] = 0;
        const char *lv = aq_trace_label(t, k);
        if (!lv) return 0;
        return !eq || tl_adhoc_glob(eq + 1, lv);
    }
    if (!strcmp(key, "config")) return t->config && tl_adhoc_glob(val, t->config);
    if (!strcmp(key, "run")) return t->run && tl_adhoc_glob(val, t->run);
    if (!strcmp(key, "format")) return t->format && !strcasecmp(val, t->format);
    if (!strcmp(key, "path")) return t->path && strstr(t->path, val) != NULL;
    if (!strcmp(key, "rank")) {
        if (t->rank == INT64_MIN) return 0;
        char *e;
        long a = strtol(val, &e, 10), b = a;
        if (*e == '-') b = strtol(e + 1, NULL, 10);
        return t->rank >= a && t->rank <= b;
    }
    if (!strcmp(key, "since")) return t->ingest_ns >= when;
    if (!strcmp(key, "until")) return t->ingest_ns <= when;
    return 0;
}

typedef struct idx_time { size_t i; int64_t t; } idx_time;
static int cmp_time_desc(const void *a, const void *b)
{
    const idx_time *x = a, *y = b;
    if (x->t != y->t) return x->t > y->t ? -1 : 1;
    return x->i < y->i ? -1 : x->i > y->i;
}

int aq_select_traces(tl_reader *r, const aq_catalog *c, const char *const *sel, size_t nsel,
                     uint8_t *keep, aq_select_global *g, tl_err *err)
{
    (void)r;
    if (g) g->last = -1;
    size_t n = c->v.n;
    for (size_t i = 0; i < n; i++) keep[i] = 1;
    int64_t last = -1;
    uint8_t *hit = tl_xcalloc(n ? n : 1, 1);
    for (size_t s = 0; s < nsel; s++) {
        char *dup = tl_xstrdup(sel[s]);
        char key[32] = "", lkey[256] = "";
        int any_alt = 0;
        memset(hit, 0, n ? n : 1);
        int is_last = 0;
        char *save = NULL;
        for (char *alt = strtok_r(dup, ",", &save); alt; alt = strtok_r(NULL, ",", &save)) {
            while (*alt == ' ') alt++;
            if (!*alt) continue;
            any_alt = 1;
            const char *colon = strchr(alt, ':');
            const char *val = alt;
            if (colon && colon - alt < (long)sizeof key) {
                memcpy(key, alt, (size_t)(colon - alt));
                key[colon - alt] = 0;
                for (char *k = key; *k; k++) *k = (char)tolower((unsigned char)*k);
                val = colon + 1;
                lkey[0] = 0;
            }
            static const char *KEYS[] = {"", "label", "config", "run", "format", "path", "rank", "since", "until", "last"};
            int known = 0;
            for (size_t k = 0; k < sizeof KEYS / sizeof *KEYS; k++) known |= !strcmp(KEYS[k], key);
            if (!known) {
                tl_errf(err, TL_EUSAGE, "--trace %s: unknown selector '%s:' (use an id, label:KEY=VALUE, "
                        "config:, rank:, run:, format:, path:, since:, until: or last:N)", sel[s], key);
                free(dup); free(hit);
                return TL_EUSAGE;
            }
            char vbuf[512];
            if (!strcmp(key, "label")) {
                /* "label:set=a,b": a later alternative without '=' reuses the key */
                const char *eq = strchr(val, '=');
                if (eq) {
                    size_t kl = (size_t)(eq - val);
                    if (kl >= sizeof lkey) kl = sizeof lkey - 1;
                    memcpy(lkey, val, kl);
                    lkey[kl] = 0;
                } else if (lkey[0] && !colon) {
                    snprintf(vbuf, sizeof vbuf, "%s=%s", lkey, val);
                    val = vbuf;
                }
            }
            int64_t when = 0;
            if (!*key) {
                if (strlen(val) < 4 || strlen(val) > 16 || !is_hex(val)) {
                    tl_errf(err, TL_EUSAGE, "--trace %s: '%s' is neither a trace id (4 to 16 hex digits) "
                            "nor a KEY:VALUE selector", sel[s], val);
                    free(dup); free(hit);
                    return TL_EUSAGE;
                }
            } else if (!strcmp(key, "since") || !strcmp(key, "until")) {
                if (parse_when(val, &when)) {
                    tl_errf(err, TL_EUSAGE, "--trace %s: '%s' is not a time (YYYY-MM-DD[THH:MM[:SS]] or an age like 12h, 7d)",
                            sel[s], val);
                    free(dup); free(hit);
                    return TL_EUSAGE;
                }
            } else if (!strcmp(key, "last")) {
                char *e;
                long v = strtol(val, &e, 10);
                if (*e || v < 0) {
                    tl_errf(err, TL_EUSAGE, "--trace %s: last: wants a count", sel[s]);
                    free(dup); free(hit);
                    return TL_EUSAGE;
                }
                if (last < 0 || v < last) last = v;
                is_last = 1;
                continue;
            } else if (!strcmp(key, "rank")) {
                char *e;
                strtol(val, &e, 10);
                if (e == val || (*e && *e != '-')) {
                    tl_errf(err, TL_EUSAGE, "--trace %s: rank: wants N or A-B", sel[s]);
                    free(dup); free(hit);
                    return TL_EUSAGE;
                }
            }
            aq_id_alt *ia = NULL; /* an id checked once every process's matches are known */
            if (!*key && g) {
                tl_vec_reserve(&g->ids, 1);
                ia = &g->ids.v[g->ids.n++];
                memset(ia, 0, sizeof *ia);
                ia->sel = tl_xstrdup(sel[s]);
                ia->val = tl_xstrdup(val);
            }
            size_t found = 0;
            for (size_t i = 0; i < n; i++)
                if (alt_match(&c->v.v[i], key, val, when)) {
                    hit[i] = 1;
                    found++;
                    if (ia) tl_vec_push(&ia->hits, c->v.v[i].id);
                }
            if (ia) continue;
            if (!*key && !found) {
                tl_errf(err, TL_ENOTFOUND, "--trace %s: no trace %s in the store", sel[s], val);
                free(dup); free(hit);
                return TL_ENOTFOUND;
            }
            if (!*key && found > 1) {
                tl_errf(err, TL_EUSAGE, "--trace %s: id prefix %s is ambiguous (%zu traces)", sel[s], val, found);
                free(dup); free(hit);
                return TL_EUSAGE;
            }
        }
        free(dup);
        if (!any_alt) continue;
        if (is_last && !strchr(sel[s], ',')) continue; /* pure last:N */
        for (size_t i = 0; i < n; i++) keep[i] &= hit[i];
    }
    free(hit);
    if (g) g->last = last; /* applied to every process's traces together */
    else if (last >= 0) {
        idx_time *it = tl_xmalloc((n ? n : 1) * sizeof *it);
        size_t m = 0;
        for (size_t i = 0; i < n; i++)
            if (keep[i]) it[m++] = (idx_time){i, c->v.v[i].ingest_ns};
        qsort(it, m, sizeof *it, cmp_time_desc);
        for (size_t k = (size_t)last; k < m; k++) keep[it[k].i] = 0;
        free(it);
    }
    return TL_OK;
}

/* ---- trace-level values ------------------------------------------------ */
int aq_trace_value(const aq_trace *t, const aq_colref *c, tl_arena *a, aq_vec *out)
{
    memset(out, 0, sizeof *out);
    out->konst = 1;
    out->n = 1;
    const char *s = NULL;
    int64_t iv = INT64_MIN;
    int is_str = 1;
    switch (c->def->src) {
    case AQ_S_TRACE_ID: s = t->hex; break;
    case AQ_S_PATH: s = t->path; break;
    case AQ_S_FORMAT: s = t->format; break;
    case AQ_S_CONFIG: s = t->config; break;
    case AQ_S_RUN: s = t->run; break;
    case AQ_S_RANK: is_str = 0; iv = t->rank; break;
    case AQ_S_INGEST_TIME: is_str = 0; iv = t->ingest_ns; break;
    case AQ_S_INGESTED: {
        time_t tt = (time_t)(t->ingest_ns / 1000000000);
        struct tm tmv;
        localtime_r(&tt, &tmv);
        char buf[32];
        strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S", &tmv);
        s = tl_arena_strdup(a, buf);
        break;
    }
    case AQ_S_LABEL: s = aq_trace_label(t, c->arg); break;
    case AQ_S_META: {
        tl_buf b = {0};
        if (aq_trace_meta(t, c->arg, &b) == 0) s = tl_arena_strndup(a, b.p ? b.p : "", b.n);
        tl_buf_free(&b);
        break;
    }
    case AQ_S_CATNUM: {
        is_str = 0;
        const char *k = c->def->store;
        iv = !strcmp(k, "events") ? t->events : !strcmp(k, "gpu_events") ? t->gpu_events
           : !strcmp(k, "flows") ? t->flows : !strcmp(k, "source_bytes") ? t->source_bytes
           : !strcmp(k, "ts_min_ns") ? t->ts_min : !strcmp(k, "ts_max_ns") ? t->ts_max
           : !strcmp(k, "gpu_ts_min_ns") ? t->gpu_ts_min : !strcmp(k, "gpu_ts_max_ns") ? t->gpu_ts_max : INT64_MIN;
        break;
    }
    case AQ_S_KINDCOUNT:
        is_str = 0;
        for (int i = 0; i < TL_K_COUNT; i++)
            if (!strcmp(aq_kind_names[i], c->def->store)) iv = t->kinds[i];
        break;
    case AQ_S_GPU_SPAN: is_str = 0; iv = t->gpu_ts_max - t->gpu_ts_min; break;
    default: return -1;
    }
    if (is_str) {
        out->vt = AQ_V_TEXT;
        out->t = tl_arena_alloc(a, sizeof(const char *));
        out->t[0] = s;
    } else {
        out->vt = AQ_V_I64;
        out->i = tl_arena_alloc(a, sizeof(int64_t));
        out->i[0] = iv;
    }
    return 0;
}

/* ---- text pool ----------------------------------------------------------- */
void aq_pool_init(aq_pool *p, tl_arena *a)
{
    memset(p, 0, sizeof *p);
    p->arena = a;
    p->cap = 1024;
    p->text = tl_xmalloc(p->cap * sizeof *p->text);
    p->n = 1; /* id 0 = null */
    p->text[0] = NULL;
    tl_hidx_init(&p->idx, 1024);
}

void aq_pool_free(aq_pool *p)
{
    free(p->text);
    tl_hidx_free(&p->idx);
    memset(p, 0, sizeof *p);
}

uint32_t aq_pool_intern(aq_pool *p, const char *s, size_t n)
{
    uint64_t h = tl_hash64(s, n, 0x51);
    size_t i = tl_hidx_home(&p->idx, h);
    for (; p->idx.ids[i]; i = tl_hidx_next(&p->idx, i)) {
        uint32_t id = p->idx.ids[i] - 1;
        if (p->idx.hashes[i] == h && strncmp(p->text[id], s, n) == 0 && p->text[id][n] == 0) return id;
    }
    if (p->n == p->cap) {
        p->cap *= 2;
        p->text = tl_xrealloc(p->text, p->cap * sizeof *p->text);
    }
    uint32_t id = (uint32_t)p->n++;
    p->text[id] = tl_arena_strndup(p->arena, s, n);
    tl_hidx_set(&p->idx, i, h, id);
    return id;
}
