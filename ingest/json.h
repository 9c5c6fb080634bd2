/* json.h — the zero-copy JSON scanner every JSON reader (Kineto, rocprofv3,
 * catalog records) is built on. It never builds a DOM: a reader walks the
 * document with these primitives, taking string spans that point into the
 * input window.
 *
 * Streaming: the input arrives in a window that a source refills (mmap'd
 * file: the whole file at once; gzip: decompressed blocks). A primitive that
 * runs off the end of the window while more input exists returns TL_JNEED.
 * Readers parse in restartable units (one array element, one small value):
 * remember j->pos before the unit, and on TL_JNEED call tl_json_refill(j,
 * mark) — which moves the window so that `mark` is kept — and parse the unit
 * again. A unit must have no side effects until it has parsed completely.
 *
 * Errors name the file, the absolute byte offset (in the decompressed
 * stream) and what was expected. Validation is complete: strings must be
 * valid UTF-8 with legal escapes, numbers must be JSON numbers, nesting is
 * limited to TL_JSON_MAX_DEPTH. */
#ifndef TL_JSON_H
#define TL_JSON_H

#include <stdint.h>
#include <stddef.h>
#include "base/base.h"
#include "ingest/json_mask16.h"

#define TL_JNEED 1 /* positive: not an error, the window needs more input */
#define TL_JSON_MAX_DEPTH 512

struct tl_source;

typedef struct tl_json {
    const char *buf;   /* window start */
    size_t len;        /* bytes valid in the window */
    size_t pos;        /* current position in the window */
    uint64_t base;     /* absolute offset of buf[0] in the stream */
    int eof;           /* no input beyond the window */
    const char *file;  /* for messages */
    tl_err *err;
    struct tl_source *src; /* NULL for a fixed buffer */
    /* The extent scan of a long unit (see tl_json_refill): the unit's
     * start and how far it is scanned (absolute offsets), with the bracket
     * depth and string state there. */
    uint64_t ext_mark, ext_pos;
    int64_t ext_depth;
    uint8_t ext_on, ext_str, ext_esc;
} tl_json;

/* A scanner over a fixed, complete buffer. */
void tl_json_init_buf(tl_json *j, const char *buf, size_t len, const char *file, tl_err *err);
/* A scanner over a source (see source.h); reads the first window and
 * starts after a UTF-8 byte-order mark if the input begins with one. */
int tl_json_init_src(tl_json *j, struct tl_source *src, const char *file, tl_err *err);
/* Keeps bytes from `mark` on, appends more input. Returns 0, or an error
 * (including a truncated-input error when the source is exhausted). When
 * the kept unit is long (TL_JSON_EXTENT_MIN bytes), the appended bytes are
 * first scanned for brackets and strings only, resuming where the last
 * refill of the same unit stopped, until the unit may end in the window:
 * a long token is then parsed once more, not once per window. */
#define TL_JSON_EXTENT_MIN (1u << 20)
int tl_json_refill(tl_json *j, size_t mark);
/* Tells the source that everything before `pos` is consumed (lets an mmap
 * source drop those pages to bound memory). Returns 0, or TL_EEXIST when
 * the source asks the parse to stop (the trace is stored already). */
int tl_json_release(tl_json *j);

/* Sets a format error at the current position: "<file>: byte N: expected X". */
int tl_json_fail(tl_json *j, const char *expected);
int tl_json_fail_at(tl_json *j, size_t pos, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Skips whitespace; returns the next byte, -1 at the end of all input, or
 * TL_JNEED-as-(-2) when the window is exhausted but input remains. */
#define TL_JWS_NEED (-2)
size_t tl_json_skip_ws_slow(const char *b, size_t pos, size_t len);
static inline int tl_json_peek(tl_json *j)
{
    /* Inline fast path: the next byte is already a token. */
    if (j->pos < j->len && (unsigned char)j->buf[j->pos] > ' ') return (unsigned char)j->buf[j->pos];
    /* one space before a token (after ':' and ','): the commonest run */
    if (j->pos + 1 < j->len && j->buf[j->pos] == ' ' && (unsigned char)j->buf[j->pos + 1] > ' ')
        return (unsigned char)j->buf[++j->pos];
    j->pos = tl_json_skip_ws_slow(j->buf, j->pos, j->len);
    if (j->pos < j->len) return (unsigned char)j->buf[j->pos];
    return j->eof ? -1 : TL_JWS_NEED;
}

/* Expects byte c (after whitespace) and consumes it. */
int tl_json_expect(tl_json *j, char c, const char *what);

/* A string: on return (s, n) is the raw text between the quotes (escapes
 * not decoded) and *esc tells whether it contains a backslash. */
int tl_json_string_slow(tl_json *j, const char **s, size_t *n, int *esc);
/* Inline fast path: a plain ASCII string whose closing quote lies within the
 * next 32 bytes (keys, names, categories); everything else takes the slow
 * path, which validates escapes and UTF-8. */
static inline int tl_json_string(tl_json *j, const char **s, size_t *n, int *esc)
{
    if (tl_json_peek(j) != '"') return tl_json_string_slow(j, s, n, esc);
    size_t p = j->pos;
    if (p + 33 <= j->len) {
        for (size_t off = 0; off < 32; off += 16) {
            unsigned q = tl_json_mask16_quote(j->buf + p + 1 + off);
            unsigned bad = tl_json_mask16_unplain(j->buf + p + 1 + off);
            if (q) {
                int at = __builtin_ctz(q);
                if (bad & ((1u << at) - 1)) break;
                *s = j->buf + p + 1;
                *n = off + (size_t)at;
                if (esc) *esc = 0;
                j->pos = p + 2 + off + (size_t)at;
                return 0;
            }
            if (bad) break;
        }
    }
    return tl_json_string_slow(j, s, n, esc);
}
/* Decodes the escapes of a raw string span into out (NUL-terminated). */
int tl_json_unescape(tl_json *j, const char *s, size_t n, tl_buf *out);

/* Numbers. _i64 accepts only integers in range; _f64 any JSON number;
 * _ns parses a decimal number of microseconds into exact int64 ns (digits
 * beyond the third decimal are rounded half-even), rejecting out-of-range.
 * When such digits are not all zero, *sub_us (if sub_us is not NULL) is
 * set to the double nearest the text, the µs value the reference reads
 * (tl_ns_us of the ns is that double for every other text; the double
 * is 0 only for a text that underflows, whose ns is 0 too); otherwise it
 * is left as it was. */
int tl_json_i64(tl_json *j, int64_t *v);
int tl_json_f64(tl_json *j, double *v);
int tl_json_us_to_ns(tl_json *j, int64_t *v, double *sub_us);
/* The raw text of a number (validated). */
int tl_json_number_span(tl_json *j, const char **s, size_t *n);

/* Skips any value, fully validated, returning its raw span. */
int tl_json_skip(tl_json *j, const char **s, size_t *n);
/* The same span, for text validated before (stored args, checked by the
 * ingest parser): numbers and arrays of numbers end at their delimiter or
 * closing bracket, without the grammar check; anything else, or a value
 * that reaches the end of a window with more input to come, goes through
 * tl_json_skip. */
int tl_json_skip_validated(tl_json *j, const char **s, size_t *n);
/* Same, and appends the value without insignificant whitespace to out. */
int tl_json_skip_min(tl_json *j, tl_buf *out);
/* Literals. */
int tl_json_literal(tl_json *j, const char *lit);

/* Object/array iteration:
 *   tl_json_expect(j,'{'); int first = 1;
 *   while ((rc = tl_json_obj_next(j, &first, &k, &kn)) == 0 && k) { ...value... }
 * obj_next consumes ',' / '}' and the key with its ':'; sets *k = NULL at '}'. */
int tl_json_obj_next_slow(tl_json *j, int *first, const char **k, size_t *kn);
/* arr_next consumes ',' or ']'; returns 0 and sets *more = 0 at ']'. */
int tl_json_arr_next_slow(tl_json *j, int *first, int *more);

/* The inline fast paths below work on locals and touch j->pos only on
 * success; anything unusual (window end, escapes, non-ASCII, long keys,
 * long whitespace runs) goes to the _slow functions, which start again
 * from j->pos and validate everything. TL_JSON_SLACK keeps the fast paths
 * away from the window end so they never need bounds checks per byte. */
#define TL_JSON_SLACK 48

/* Skips a whitespace run at b[p] (p + 16 <= len). Pretty-printed Kineto
 * has "\n" plus indentation between lines and one space after ':' and ','. */
static inline __attribute__((always_inline)) size_t tl_json_ws_fast(const char *b, size_t p, size_t len)
{
    if ((unsigned char)b[p] > ' ') return p;
    if (b[p] == ' ' && (unsigned char)b[p + 1] > ' ') return p + 1;
    return tl_json_skip_ws_slow(b, p, len);
}

static inline __attribute__((always_inline)) int tl_json_obj_next(tl_json *j, int *first, const char **k, size_t *kn)
{
    const char *b = j->buf;
    size_t p = j->pos, len = j->len;
    if (p + TL_JSON_SLACK > len) goto slow;
    p = tl_json_ws_fast(b, p, len);
    if (p + TL_JSON_SLACK > len) goto slow;
    if (b[p] == '}') { j->pos = p + 1; *k = NULL; return 0; }
    if (!*first) {
        if (b[p] != ',') goto slow;
        p = tl_json_ws_fast(b, p + 1, len);
        if (p + TL_JSON_SLACK > len) goto slow;
    }
    if (b[p] != '"') goto slow;
    {
        unsigned q = tl_json_mask16_quote(b + p + 1);
        unsigned bad = tl_json_mask16_unplain(b + p + 1);
        if (!q) goto slow;
        int at = __builtin_ctz(q);
        if (bad & ((1u << at) - 1)) goto slow;
        *k = b + p + 1;
        *kn = (size_t)at;
        p += (size_t)at + 2;
    }
    if (b[p] != ':') {
        p = tl_json_ws_fast(b, p, len);
        if (p + TL_JSON_SLACK > len || b[p] != ':') goto slow;
    }
    j->pos = p + 1;
    *first = 0;
    return 0;
slow:
    return tl_json_obj_next_slow(j, first, k, kn);
}

static inline __attribute__((always_inline)) int tl_json_arr_next(tl_json *j, int *first, int *more)
{
    const char *b = j->buf;
    size_t p = j->pos, len = j->len;
    if (p + TL_JSON_SLACK > len) goto slow;
    p = tl_json_ws_fast(b, p, len);
    if (p + TL_JSON_SLACK > len) goto slow;
    if (b[p] == ']') { j->pos = p + 1; *more = 0; return 0; }
    if (!*first) {
        if (b[p] != ',') goto slow;
        size_t q = tl_json_ws_fast(b, p + 1, len);
        if (q + TL_JSON_SLACK > len || b[q] == ']') goto slow;
        p = q;
    }
    j->pos = p;
    *first = 0;
    *more = 1;
    return 0;
slow:
    return tl_json_arr_next_slow(j, first, more);
}

/* Streaming forms for readers over a source: whitespace runs that cross
 * the window end are dropped as they are skipped (refilling from the
 * current position), never kept in the window, however long. skip_ws_stream
 * returns 0 with j->pos at the next token or the end of input. arr_next_stream
 * is tl_json_arr_next, with the same checks and messages. */
int tl_json_skip_ws_stream(tl_json *j);
int tl_json_arr_next_stream_slow(tl_json *j, int *first, int *more);
static inline int tl_json_arr_next_stream(tl_json *j, int *first, int *more)
{
    size_t mark = j->pos;
    int f = *first;
    int rc = tl_json_arr_next(j, first, more);
    if (rc != TL_JNEED) return rc;
    *first = f;
    j->pos = mark;
    return tl_json_arr_next_stream_slow(j, first, more);
}

static inline uint64_t tl_json_offset(const tl_json *j) { return j->base + j->pos; }

#endif
