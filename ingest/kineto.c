/* kineto.c — one element of a PyTorch profiler (Kineto) traceEvents array,
 * parsed as one restartable unit into the builder, and the reader state
 * that parse uses. Complete events keep their raw args text; the args the
 * reports need are promoted into typed columns (ints) or interned minified
 * JSON text (Input Dims …). See spec/pytorch-report.md §2 for the event
 * kinds. The document is read by kineto_doc.c, the array by
 * kineto_split.c. */
#include "ingest/kineto_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void tl_kreader_init(kreader *k, tl_json *j, tl_build *b, tl_source *src)
{
    memset(k, 0, sizeof *k);
    k->j = j;
    k->b = b;
    k->src = src;
    k->scache = tl_xcalloc(SCACHE_SLOTS, sizeof(scache_slot));
}

void tl_kreader_free(kreader *k)
{
    tl_buf_free(&k->tmp);
    tl_buf_free(&k->mini);
    free(k->kind_of);
    free(k->scache);
}

static uint8_t kind_of(kreader *k, uint32_t cat)
{
    if (cat >= k->kind_cap) {
        size_t nc = k->kind_cap ? k->kind_cap : 64;
        while (nc <= cat) nc *= 2;
        k->kind_of = tl_xrealloc(k->kind_of, nc);
        memset(k->kind_of + k->kind_cap, 0, nc - k->kind_cap);
        k->kind_cap = nc;
    }
    if (!k->kind_of[cat]) {
        size_t n;
        const char *s = tl_build_strget(k->b, cat, &n);
        k->kind_of[cat] = (uint8_t)(tl_kind_from_cat(s, n) + 1);
    }
    return (uint8_t)(k->kind_of[cat] - 1);
}

static uint32_t intern_cached(kreader *k, const char *s, size_t n)
{
    if (n == 0 || n > SCACHE_TEXT) return tl_build_str(k->b, s, n);
    uint64_t a = 0, z = 0;
    memcpy(&a, s, n < 8 ? n : 8);
    memcpy(&z, s + n - (n < 8 ? n : 8), n < 8 ? n : 8);
    uint64_t h = (a * 0x9E3779B97F4A7C15ull) ^ (z * 0xC2B2AE3D27D4EB4Full) ^ (n * 0x165667B19E3779F9ull);
    scache_slot *c = &k->scache[(h >> 32) & (SCACHE_SLOTS - 1)];
    if (c->len == n && memcmp(c->text, s, n) == 0) return c->id;
    uint32_t id = tl_build_str(k->b, s, n);
    c->id = id;
    c->len = (uint8_t)n;
    memcpy(c->text, s, n);
    return id;
}

/* Interns a string value (decoding escapes when present). */
static int str_id(kreader *k, uint32_t *id)
{
    const char *s;
    size_t n;
    int esc;
    int rc = tl_json_string(k->j, &s, &n, &esc);
    if (rc) return rc;
    if (esc) {
        tl_json_unescape(k->j, s, n, &k->tmp);
        *id = tl_build_str(k->b, k->tmp.p, k->tmp.n);
    } else {
        *id = intern_cached(k, s, n);
    }
    return 0;
}

/* pid/tid: an integer or a string (kept apart: 0 != "0"). */
static int id_value(kreader *k, int64_t *v, uint8_t *is_str)
{
    int p = tl_json_peek(k->j);
    if (p == TL_JWS_NEED) return TL_JNEED;
    if (p == '"') {
        uint32_t sid;
        int rc = str_id(k, &sid);
        if (rc) return rc;
        *v = sid;
        *is_str = 1;
        return 0;
    }
    *is_str = 0;
    if (p != '-' && (p < '0' || p > '9')) return tl_json_fail(k->j, "an integer or a string (pid/tid)");
    return tl_json_i64(k->j, v);
}

static int promoted_text(kreader *k, uint32_t *id)
{
    int rc = tl_json_skip_min(k->j, &k->mini);
    if (rc) return rc;
    *id = tl_build_str(k->b, k->mini.p, k->mini.n);
    return 0;
}

/* A JSON number with a whole value (12.0, 1.2e1) within int64: Python's
 * 12.0 == 12 (and hashes alike), so the reference links and groups such
 * values as the integer. */
static int whole_number(const char *s, size_t n, int64_t *v)
{
    char buf[64];
    if (n >= sizeof buf) return 0;
    memcpy(buf, s, n);
    buf[n] = 0;
    double d = strtod(buf, NULL);
    if (!(d >= -9223372036854775808.0 && d < 9223372036854775808.0) || d != floor(d)) return 0;
    *v = (int64_t)d;
    return 1;
}

/* A promoted integer args key (stream, device, correlation, ...). The
 * reference reads these values as opaque Python objects, so any JSON value
 * is accepted: an integer number, a whole-valued float, or a string
 * spelling an integer (tl_parse_int_text) is that integer; anything else
 * (other strings, fractions, true/false, null, objects, arrays) is TL_NONE.
 * The args text keeps the value verbatim. */
static int int_arg(kreader *k, int64_t *v)
{
    tl_json *j = k->j;
    int p = tl_json_peek(j);
    if (p == TL_JWS_NEED) return TL_JNEED;
    const char *s;
    size_t n;
    int rc;
    if (p == '"') {
        rc = tl_json_string(j, &s, &n, NULL);
    } else if (p == '-' || (p >= '0' && p <= '9')) {
        rc = tl_json_number_span(j, &s, &n);
    } else {
        *v = TL_NONE;
        return tl_json_skip(j, NULL, NULL);
    }
    if (rc) return rc;
    if (!tl_parse_int_text(s, n, v) && (p == '"' || !whole_number(s, n, v))) *v = TL_NONE;
    return 0;
}

#define KEYIS(lit) (kn == sizeof(lit) - 1 && memcmp(key, lit, kn) == 0)

static int parse_args(kreader *k, tl_ev_in *e)
{
    tl_json *j = k->j;
    int first = 1, rc;
    const char *key;
    size_t kn;
    rc = tl_json_expect(j, '{', "'{' (args object)");
    if (rc) return rc;
    for (;;) {
        rc = tl_json_obj_next(j, &first, &key, &kn);
        if (rc) return rc;
        if (!key) return 0;
        switch (kn) {
        case 6:
            if (KEYIS("stream")) { rc = int_arg(k, &e->stream); break; }
            if (KEYIS("device")) { rc = int_arg(k, &e->device); break; }
            goto skip;
        case 7:
            if (KEYIS("corr_id")) { rc = int_arg(k, &e->corr); break; } /* rocprofv3's Perfetto output */
            goto skip;
        case 4:
            if (KEYIS("grid")) { rc = promoted_text(k, &e->grid); break; }
            goto skip;
        case 5:
            if (KEYIS("block")) { rc = promoted_text(k, &e->block); break; }
            goto skip;
        case 10:
            if (KEYIS("Input Dims")) { rc = promoted_text(k, &e->in_dims); break; }
            if (KEYIS("Input type")) { rc = promoted_text(k, &e->in_type); break; }
            goto skip;
        case 11:
            if (KEYIS("correlation")) { rc = int_arg(k, &e->corr); break; }
            if (KEYIS("External id")) { rc = int_arg(k, &e->ext_id); break; }
            if (KEYIS(TL_ARG_OUTPUT_TYPE)) e->args_sel = 1; /* the Reduce model reads it */
            goto skip;
        case 13:
            if (KEYIS("Input Strides")) { rc = promoted_text(k, &e->in_strides); break; }
            if (KEYIS("Fwd thread id")) { rc = int_arg(k, &e->fwd_tid); break; }
            goto skip;
        case 15:
            if (KEYIS("Concrete Inputs")) { rc = promoted_text(k, &e->concrete); break; }
            if (KEYIS("Sequence number")) { rc = int_arg(k, &e->seq); break; }
            goto skip;
        default:
        skip:
            rc = tl_json_skip(j, NULL, NULL);
        }
        if (rc) return rc;
    }
}

enum { F_PH = 1, F_CAT = 2, F_NAME = 4, F_PID = 8, F_TID = 16, F_TS = 32, F_DUR = 64, F_ARGS = 128, F_ID = 256 };

/* Does the number text s[0..n) (whitespace before it included) hold a
 * fraction or an exponent, i.e. is it a JSON float, not an integer? */
static int num_text_float(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (s[i] == '.' || s[i] == 'e' || s[i] == 'E') return 1;
    return 0;
}

/* One element of traceEvents. No side effects on the builder until the
 * whole object parsed (apart from interning, which is idempotent). */
int tl_kineto_event(kreader *k)
{
    tl_json *j = k->j;
    size_t start = j->pos;
    int rc = tl_json_expect(j, '{', "'{' (an event object in traceEvents)");
    if (rc) return rc;
    tl_ev_in e = {0};
    e.corr = e.ext_id = e.stream = e.device = e.seq = e.fwd_tid = TL_NONE;
    e.pid = e.tid = 0;
    char ph = 0;
    unsigned seen = 0;
    int64_t flow_id = 0;
    int ts_float = 0, dur_float = 0;
    const char *args = NULL;
    size_t args_len = 0;
    int first = 1;
    const char *key;
    size_t kn;
    for (;;) {
        rc = tl_json_obj_next(j, &first, &key, &kn);
        if (rc) return rc;
        if (!key) break;
        unsigned bit = 0;
        size_t kpos = j->pos;
        if (kn == 2 && key[0] == 'p' && key[1] == 'h') {
            bit = F_PH;
            const char *s;
            size_t n;
            rc = tl_json_string(j, &s, &n, NULL);
            if (rc) return rc;
            if (n != 1) return tl_json_fail_at(j, kpos, "\"ph\": expected a one-letter phase, found \"%.*s\"", (int)(n > 20 ? 20 : n), s);
            ph = s[0];
        } else if (kn == 3 && KEYIS("cat")) {
            bit = F_CAT;
            rc = str_id(k, &e.cat);
        } else if (kn == 4 && KEYIS("name")) {
            bit = F_NAME;
            rc = str_id(k, &e.name);
        } else if (kn == 3 && KEYIS("pid")) {
            bit = F_PID;
            rc = id_value(k, &e.pid, &e.pid_is_str);
        } else if (kn == 3 && KEYIS("tid")) {
            bit = F_TID;
            rc = id_value(k, &e.tid, &e.tid_is_str);
        } else if (kn == 2 && key[0] == 't' && key[1] == 's') {
            bit = F_TS;
            size_t p0 = j->pos;
            rc = tl_json_us_to_ns(j, &e.ts, &e.ts_us);
            ts_float = !rc && num_text_float(j->buf + p0, j->pos - p0);
        } else if (kn == 3 && KEYIS("dur")) {
            bit = F_DUR;
            size_t p0 = j->pos;
            rc = tl_json_us_to_ns(j, &e.dur, &e.dur_us);
            dur_float = !rc && num_text_float(j->buf + p0, j->pos - p0);
        } else if (kn == 4 && KEYIS("args")) {
            bit = F_ARGS;
            size_t a0;
            tl_json_peek(j);
            a0 = j->pos;
            int p = tl_json_peek(j);
            if (p == TL_JWS_NEED) return TL_JNEED;
            if (p != '{') return tl_json_fail(j, "'{' (args object)");
            rc = parse_args(k, &e);
            if (rc) return rc;
            args = j->buf + a0;
            args_len = j->pos - a0;
        } else if (kn == 2 && key[0] == 'i' && key[1] == 'd') {
            bit = F_ID;
            int p = tl_json_peek(j);
            if (p == TL_JWS_NEED) return TL_JNEED;
            if (p == '"') {
                /* string flow ids: interned, kept distinct from ints by sign */
                uint32_t sid;
                rc = str_id(k, &sid);
                flow_id = -(int64_t)sid - 1;
            } else {
                rc = tl_json_i64(j, &flow_id);
            }
        } else {
            rc = tl_json_skip(j, NULL, NULL);
        }
        if (rc) return rc;
        if (bit) {
            if (seen & bit) return tl_json_fail_at(j, kpos, "duplicate key \"%.*s\" in event", (int)kn, key);
            seen |= bit;
        }
    }
    uint32_t uid = k->uid;
    switch (ph) {
    case 'X':
        if (!(seen & F_TS)) return tl_json_fail_at(j, start, "complete event (ph X) without \"ts\"");
        if (!(seen & F_DUR)) return tl_json_fail_at(j, start, "complete event (ph X) without \"dur\"");
        if (e.dur < 0) return tl_json_fail_at(j, start, "complete event with negative \"dur\"");
        int64_t end;
        if (tl_time_end(e.ts, e.dur, &end))
            return tl_json_fail_at(j, start, "complete event: \"ts\" + \"dur\" (%lld + %lld ns) is out of range",
                                   (long long)e.ts, (long long)e.dur);
        if (!(seen & F_NAME)) e.name = 1;
        e.uid = uid;
        e.kind = (seen & F_CAT) ? kind_of(k, e.cat) : TL_K_OTHER;
        e.args = args;
        e.args_len = args_len;
        tl_build_event(k->b, &e);
        tl_build_time_text(k->b, ts_float, dur_float);
        break;
    case 's':
    case 'f':
    case 't':
        tl_build_flow(k->b, uid, ph, e.cat, e.name, flow_id, e.pid, e.tid, e.pid_is_str, e.tid_is_str,
                      (seen & F_TS) ? e.ts : TL_NONE);
        break;
    case 'M':
        tl_build_meta(k->b, uid, e.name, e.pid, e.tid, e.pid_is_str, e.tid_is_str, (seen & F_TID) ? 1 : 0,
                      args, args_len);
        break;
    case 0:
        return tl_json_fail_at(j, start, "event without \"ph\"");
    default:
        tl_build_other(k->b, uid, ph);
    }
    k->uid++;
    return 0;
}
