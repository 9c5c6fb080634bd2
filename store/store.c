/* store.c — writing and reading the catalog and column chunks (see store.h;
 * opening the environment is open.c).
 *
 * Named databases:
 *   meta     "schema_version" -> decimal text
 *   catalog  trace id (8 bytes big-endian) -> JSON text, NUL, then the
 *            u64 XXH3 of text and NUL (schema 3; older records end at the NUL)
 *   columns  id(8 BE) | table | 0 | column | 0 | chunk (4 BE) -> chunk
 * A chunk is a 16-byte header {'T', encoding, ctype, flags, u32 nrows,
 * u32 raw_bytes, u32 stored_bytes} followed by the payload: the values
 * (fixed width), or for blobs (nrows+1) u64 offsets then the bytes; with
 * flag CHUNK_SUMMED (every chunk written since schema 3) the u64 XXH3 of
 * header and payload follows, checked on every decode. The
 * payload is LZ4 (encoding 1) when that saves at least half, else raw
 * (encoding 0) so hot numeric columns can be used in place from the map;
 * int64 chunks whose values fit in 4 bytes or fewer are narrowed instead
 * (encoding 2, for_codec.h): a 16-byte header {u8 width, u8 inner (0 raw,
 * 1 LZ4), 6 zero, i64 base}, then the offsets, LZ4'd when that saves half. */
#include "store/store_internal.h"
#include "store/for_codec.h"

#include <errno.h>
#include <lz4.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define CHUNK_HDR 16
#define CHUNK_SUMMED 0x01 /* header byte 3: an XXH3 of header and payload follows the payload */
#define SUM_BYTES 8
#ifndef QUEUE_BYTES
#define QUEUE_BYTES (4u << 20)
#endif
enum { ENC_RAW = 0, ENC_LZ4 = 1, ENC_FOR = 2 };
#define FOR_HDR 16
/* A trace's encoded values beyond SPILL_AT bytes go to a spill file, and
 * tl_store_write commits them in transactions of about WRITE_BATCH bytes
 * (LMDB holds a transaction's dirty pages in memory). */
#ifndef SPILL_AT
#define SPILL_AT (32u << 20)
#endif
#ifndef WRITE_BATCH
#define WRITE_BATCH (32u << 20)
#endif

size_t tl_ctype_size(tl_ctype t)
{
    switch (t) {
    case TL_CT_U8: return 1;
    case TL_CT_I32: case TL_CT_U32: return 4;
    case TL_CT_I64: case TL_CT_F64: return 8;
    default: return 0;
    }
}

const char *tl_ctype_name(tl_ctype t)
{
    switch (t) {
    case TL_CT_U8: return "u8";
    case TL_CT_I32: return "i32";
    case TL_CT_U32: return "u32";
    case TL_CT_I64: return "i64";
    case TL_CT_F64: return "f64";
    case TL_CT_BLOB: return "blob";
    }
    return "?";
}


static void put_be64(unsigned char *p, uint64_t v)
{
    for (int i = 7; i >= 0; i--) { p[i] = (unsigned char)v; v >>= 8; }
}
static uint64_t get_be64(const unsigned char *p)
{
    uint64_t v = 0;
    for (int i = 0; i < 8; i++) v = v << 8 | p[i];
    return v;
}
static void put_be32(unsigned char *p, uint32_t v)
{
    for (int i = 3; i >= 0; i--) { p[i] = (unsigned char)v; v >>= 8; }
}
static uint32_t get_be32(const unsigned char *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}
/* Checksums are stored little-endian. */
static void put_le64(unsigned char *p, uint64_t v)
{
    for (int i = 0; i < 8; i++) { p[i] = (unsigned char)v; v >>= 8; }
}
static uint64_t get_le64(const unsigned char *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--) v = v << 8 | p[i];
    return v;
}

/* Builds a column key; returns its length. */
static size_t col_key(unsigned char *k, size_t cap, uint64_t id, const char *table, const char *col,
                      uint32_t chunk, int with_chunk)
{
    size_t tl = strlen(table), cl = strlen(col);
    if (8 + tl + 1 + cl + 1 + 4 > cap) return 0;
    put_be64(k, id);
    memcpy(k + 8, table, tl + 1);
    memcpy(k + 8 + tl + 1, col, cl + 1);
    size_t n = 8 + tl + 1 + cl + 1;
    if (with_chunk) { put_be32(k + n, chunk); n += 4; }
    return n;
}

/* ---- writer ------------------------------------------------------------ */
/* A chunk's value is in memory (val) or, once the trace's values pass
 * SPILL_AT, in the writer's spill file at off (val NULL, spilled set). */
typedef struct wchunk {
    unsigned char *key;
    size_t klen;
    unsigned char *val;
    size_t vlen;
    uint64_t off;
    int spilled;
} wchunk;

typedef struct wcolseq {
    char *table, *col;
    uint32_t next;
} wcolseq;

/* A chunk waiting for the background encoder: its slot in chunks is
 * reserved at enqueue time so chunk order never depends on the thread. */
typedef struct wjob {
    struct wjob *next;
    size_t slot;
    tl_ctype type;
    uint32_t nrows;
    const char *payload;
    size_t n;
    int owned; /* payload is recycled once encoded (else the caller's, see put_column) */
    size_t cap; /* owned: the payload buffer's size */
} wjob;

/* Payload buffers of encoded chunks go back to a small pool and are
 * refilled with the next chunks rather than freed and allocated again:
 * where malloc returns freed memory to the system (the PyTorch report sets
 * it to), a fresh buffer is fresh pages, and every args chunk would fault
 * its pages in anew. POOL_MAX covers the chunks in flight between the builder and the
 * encoder; the pool is emptied when the encoder stops (wtrace_drain). */
#define POOL_MAX 4
#define POOL_ROUND (256u << 10) /* sizes rounded up so that chunks of varying size fit a pooled buffer */
typedef struct pool_buf {
    char *p;
    size_t cap;
} pool_buf;

struct tl_wtrace {
    uint64_t id;
    TL_VEC(wchunk) chunks;
    TL_VEC(wcolseq) seqs;
    char *catalog;
    size_t bytes;
    /* background LZ4 encoder (tl_wtrace_start_worker) */
    int worker;
    tl_thread *thr;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    wjob *head, *tail;
    size_t queued_bytes;
    int stop;
    int free_as_written; /* write_fn found room: chunks are freed as written */
    pool_buf pool[POOL_MAX]; /* under mu while the worker runs */
    int npool;
    /* spill file (unlinked; -1 none yet, -2 none to be had): values past
     * SPILL_AT bytes go there, so that a large trace's encoded form is not
     * held in memory */
    int spill_fd;
    uint64_t spill_end;
    size_t mem_bytes;  /* values held in memory */
    int spill_err;      /* an errno from reading the spill file back (tl_wtrace_append) */
    size_t wpos, wnext; /* tl_store_write: chunks committed; the batch in flight ends at wnext */
};

tl_wtrace *tl_wtrace_new(uint64_t id)
{
    tl_wtrace *w = tl_xcalloc(1, sizeof *w);
    w->id = id;
    w->spill_fd = -1;
    return w;
}

static void *encode_worker(void *arg);

void tl_wtrace_start_worker(tl_wtrace *w)
{
    if (w->worker) return;
    pthread_mutex_init(&w->mu, NULL);
    pthread_cond_init(&w->cv, NULL);
    if ((w->thr = tl_thread_start(encode_worker, w)) != NULL) w->worker = 1;
}

static void pool_free(tl_wtrace *w)
{
    for (int i = 0; i < w->npool; i++) free(w->pool[i].p);
    w->npool = 0;
}

/* Waits until every queued chunk is encoded and stops the worker; empties
 * the payload pool. */
static void wtrace_drain(tl_wtrace *w)
{
    if (!w->worker) {
        pool_free(w);
        return;
    }
    pthread_mutex_lock(&w->mu);
    w->stop = 1;
    pthread_cond_broadcast(&w->cv);
    pthread_mutex_unlock(&w->mu);
    tl_thread_join(w->thr);
    pthread_mutex_destroy(&w->mu);
    pthread_cond_destroy(&w->cv);
    w->worker = 0;
    pool_free(w);
}

/* A payload buffer of at least n bytes: the smallest pooled one that
 * fits, else a new one (*cap: its size). */
static char *payload_get(tl_wtrace *w, size_t n, size_t *cap)
{
    char *p = NULL;
    if (w->worker) pthread_mutex_lock(&w->mu);
    int best = -1;
    for (int i = 0; i < w->npool; i++)
        if (w->pool[i].cap >= n && (best < 0 || w->pool[i].cap < w->pool[best].cap)) best = i;
    if (best >= 0) {
        p = w->pool[best].p;
        *cap = w->pool[best].cap;
        w->pool[best] = w->pool[--w->npool];
    }
    if (w->worker) pthread_mutex_unlock(&w->mu);
    if (!p) {
        *cap = n < POOL_ROUND ? (n ? n : 1) : (n + POOL_ROUND - 1) / POOL_ROUND * POOL_ROUND;
        p = tl_xmalloc(*cap);
    }
    return p;
}

/* Back to the pool (or freed when it is full); the caller holds mu when
 * the worker runs. */
static void payload_put(tl_wtrace *w, const char *p, size_t cap)
{
    if (w->npool < POOL_MAX) w->pool[w->npool++] = (pool_buf){(char *)p, cap};
    else free((char *)p);
}

void tl_wtrace_free(tl_wtrace *w)
{
    if (!w) return;
    wtrace_drain(w);
    for (size_t i = 0; i < w->chunks.n; i++) {
        free(w->chunks.v[i].key);
        free(w->chunks.v[i].val);
    }
    tl_vec_free(&w->chunks);
    if (w->spill_fd >= 0) close(w->spill_fd);
    for (size_t i = 0; i < w->seqs.n; i++) {
        free(w->seqs.v[i].table);
        free(w->seqs.v[i].col);
    }
    tl_vec_free(&w->seqs);
    free(w->catalog);
    free(w);
}

/* The (table, column) chunk sequence, created empty on first use. */
static wcolseq *find_seq(tl_wtrace *w, const char *table, const char *col)
{
    for (size_t i = 0; i < w->seqs.n; i++)
        if (!strcmp(w->seqs.v[i].table, table) && !strcmp(w->seqs.v[i].col, col)) return &w->seqs.v[i];
    wcolseq s = {tl_xstrdup(table), tl_xstrdup(col), 0};
    tl_vec_push(&w->seqs, s);
    return &w->seqs.v[w->seqs.n - 1];
}

static uint32_t next_chunk_no(tl_wtrace *w, const char *table, const char *col)
{
    return find_seq(w, table, col)->next++;
}

/* Encoding 2 of an int64 chunk into v + CHUNK_HDR (room for n bytes):
 * returns the stored size, or 0 when the values need 8 bytes. Preferred
 * to LZ4 and to raw whenever it applies: widening decodes at memory speed,
 * several times faster than LZ4 on these columns, and the offsets are at
 * most half the raw size (docs/ARCHITECTURE.md, "Chunk"). */
static size_t encode_for(const int64_t *x, uint32_t nrows, unsigned char *v)
{
    int64_t base;
    int w = tl_for_plan(x, nrows, &base);
    if (!w) return 0;
    size_t nb = (size_t)nrows * (size_t)w;
    unsigned char *narrow = tl_xmalloc(nb ? nb : 1);
    tl_for_narrow(x, nrows, w, base, narrow);
    unsigned char *h = v + CHUNK_HDR;
    memset(h, 0, FOR_HDR);
    h[0] = (unsigned char)w;
    memcpy(h + 8, &base, 8);
    size_t stored = FOR_HDR + nb;
    int c = nb >= 256 ? LZ4_compress_default((const char *)narrow, (char *)h + FOR_HDR, (int)nb, (int)(nb / 2)) : 0;
    if (c > 0) {
        h[1] = 1;
        stored = FOR_HDR + (size_t)c;
    } else {
        memcpy(h + FOR_HDR, narrow, nb);
    }
    free(narrow);
    return stored;
}

/* LZ4's acceleration for blob chunks (args texts, most of what ingest
 * compresses): 4 encodes about 1.5 times as fast as the default for an args
 * column a few percent larger, and decoding speed does not change. Numeric
 * chunks keep the default, whose better ratio is what keeps them LZ4'd
 * under the half-size bar (encode_chunk). */
#define BLOB_LZ4_ACCELERATION 4

/* Encodes payload (raw bytes of length n) into a chunk value: int64
 * chunks narrowed when their range allows (encode_for), else LZ4 or raw.
 * LZ4 gets a destination of half the raw size (it fails when the output
 * would not fit, which is then stored raw, and gives up early on data that
 * does not compress), and the value is shrunk to what was written: encoded
 * chunks wait in memory until the commit, so a value allocated at the raw
 * size would make them take as much memory as the raw columns.
 *
 * Why half: LZ4 decodes numeric columns that compress less than 2x (parent
 * rows: short matches) several times slower than copying raw bytes out of
 * the map, and columns are read far more often than written. A higher bar
 * keeps more columns raw and decodes faster, but grows the store and the
 * corpus ingest's peak memory (sealed traces wait for the writer in their
 * stored form); narrowing (encoding 2) takes the int64 columns out of that
 * trade. */
static unsigned char *encode_chunk(tl_ctype type, uint32_t nrows, const void *payload, size_t n,
                                   size_t *vlen)
{
    unsigned char *v = tl_xmalloc(CHUNK_HDR + n + 8);
    int enc = ENC_RAW;
    size_t stored = 0;
    if (type == TL_CT_I64 && n >= 256 && n == (size_t)nrows * 8) stored = encode_for(payload, nrows, v);
    if (stored) {
        enc = ENC_FOR;
    } else {
        stored = n;
        int c = n >= 256 /* tiny payloads are not worth an LZ4 frame */
                    ? LZ4_compress_fast(payload, (char *)v + CHUNK_HDR, (int)n, (int)(n / 2),
                                        type == TL_CT_BLOB ? BLOB_LZ4_ACCELERATION : 1)
                    : 0;
        if (c > 0) {
            enc = ENC_LZ4;
            stored = (size_t)c;
        }
    }
    if (enc == ENC_RAW) memcpy(v + CHUNK_HDR, payload, n);
    v[0] = 'T';
    v[1] = (unsigned char)enc;
    v[2] = (unsigned char)type;
    v[3] = CHUNK_SUMMED;
    uint32_t f[3] = {nrows, (uint32_t)n, (uint32_t)stored};
    memcpy(v + 4, f, 12);
    put_le64(v + CHUNK_HDR + stored, tl_hash64(v, CHUNK_HDR + stored, 0));
    *vlen = CHUNK_HDR + stored + SUM_BYTES;
    if (enc != ENC_RAW) v = tl_xrealloc(v, *vlen);
    return v;
}

/* Reserves the next chunk slot of (table, col); returns its index. */
static size_t reserve_chunk(tl_wtrace *w, const char *table, const char *col)
{
    unsigned char kb[600];
    uint32_t no = next_chunk_no(w, table, col);
    size_t kl = col_key(kb, sizeof kb, w->id, table, col, no, 1);
    wchunk c = {tl_xmalloc(kl ? kl : 1), kl, NULL, 0, 0, 0};
    memcpy(c.key, kb, kl);
    if (w->worker) pthread_mutex_lock(&w->mu);
    tl_vec_push(&w->chunks, c);
    size_t slot = w->chunks.n - 1;
    if (w->worker) pthread_mutex_unlock(&w->mu);
    return slot;
}

/* An unlinked file in $TMPDIR (or /tmp) for spilled values; -2 when none
 * can be made (the values then stay in memory). */
static int spill_open(void)
{
    const char *dir = getenv("TMPDIR");
    char path[4096];
    snprintf(path, sizeof path, "%s/tracelens-spill.XXXXXX", dir && *dir ? dir : "/tmp");
    int fd = mkstemp(path);
    if (fd < 0) return -2;
    unlink(path);
    return fd;
}

/* Writes all of p at off; 0, or -1 (a full disk: the caller keeps p). */
static int spill_write(int fd, const unsigned char *p, size_t n, uint64_t off)
{
    while (n) {
        ssize_t k = pwrite(fd, p, n, (off_t)off);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) return -1;
        p += k, n -= (size_t)k, off += (uint64_t)k;
    }
    return 0;
}

/* Stores chunk slot's value (val is taken over): in memory while the
 * trace's values stay under SPILL_AT bytes, else in the spill file. The
 * caller holds mu when the worker runs. */
static void hold_value(tl_wtrace *w, size_t slot, unsigned char *val, size_t vlen)
{
    wchunk *c = &w->chunks.v[slot];
    c->vlen = vlen;
    w->bytes += vlen;
    if (w->mem_bytes + vlen > SPILL_AT && w->spill_fd == -1) w->spill_fd = spill_open();
    if (w->mem_bytes + vlen > SPILL_AT && w->spill_fd >= 0 &&
        spill_write(w->spill_fd, val, vlen, w->spill_end) == 0) {
        c->off = w->spill_end;
        c->spilled = 1;
        w->spill_end += vlen;
        free(val);
        return;
    }
    c->val = val;
    w->mem_bytes += vlen;
}

static void fill_chunk(tl_wtrace *w, size_t slot, unsigned char *val, size_t vlen)
{
    if (w->worker) pthread_mutex_lock(&w->mu);
    hold_value(w, slot, val, vlen);
    if (w->worker) pthread_mutex_unlock(&w->mu);
}

static void *encode_worker(void *arg)
{
    tl_wtrace *w = arg;
    pthread_mutex_lock(&w->mu);
    for (;;) {
        while (!w->head && !w->stop) pthread_cond_wait(&w->cv, &w->mu);
        wjob *j = w->head;
        if (!j) break;
        w->head = j->next;
        if (!w->head) w->tail = NULL;
        pthread_mutex_unlock(&w->mu);
        size_t vlen;
        unsigned char *v = encode_chunk(j->type, j->nrows, j->payload, j->n, &vlen);
        pthread_mutex_lock(&w->mu);
        hold_value(w, j->slot, v, vlen);
        w->queued_bytes -= j->n;
        pthread_cond_broadcast(&w->cv);
        if (j->owned) payload_put(w, j->payload, j->cap);
        free(j);
    }
    pthread_mutex_unlock(&w->mu);
    return NULL;
}

/* Hands a payload to the encoder (owned: it frees it), or encodes it here:
 * without a worker, and also when the worker is behind. The queue is kept
 * to a few MiB, since more only adds to peak RSS when the encoder loses its
 * core for a while; a full queue means there is more encoding than one
 * thread keeps up with (the hot columns, all encoded at commit), and the
 * submitting thread then encodes too instead of waiting. */
static void submit(tl_wtrace *w, const char *table, const char *col, tl_ctype type, uint32_t nrows,
                   const char *payload, size_t n, int owned, size_t cap)
{
    size_t slot = reserve_chunk(w, table, col);
    int inline_enc = !w->worker;
    if (w->worker) {
        pthread_mutex_lock(&w->mu);
        if (w->queued_bytes > QUEUE_BYTES) {
            inline_enc = 1;
        } else {
            wjob *j = tl_xmalloc(sizeof *j);
            *j = (wjob){NULL, slot, type, nrows, payload, n, owned, cap};
            if (w->tail) w->tail->next = j; else w->head = j;
            w->tail = j;
            w->queued_bytes += n;
            pthread_cond_broadcast(&w->cv);
        }
        pthread_mutex_unlock(&w->mu);
    }
    if (inline_enc) {
        size_t vlen;
        unsigned char *v = encode_chunk(type, nrows, payload, n, &vlen);
        if (owned) {
            if (w->worker) pthread_mutex_lock(&w->mu);
            payload_put(w, payload, cap);
            if (w->worker) pthread_mutex_unlock(&w->mu);
        }
        fill_chunk(w, slot, v, vlen);
    }
}

void tl_wtrace_put_chunk(tl_wtrace *w, const char *table, const char *col, tl_ctype type,
                         const void *data, uint32_t nrows)
{
    size_t n = (size_t)nrows * tl_ctype_size(type), cap;
    char *payload = payload_get(w, n, &cap);
    memcpy(payload, data, n);
    submit(w, table, col, type, nrows, payload, n, 1, cap);
}

void tl_wtrace_put_blob_chunk(tl_wtrace *w, const char *table, const char *col,
                              const uint64_t *offsets, const char *bytes, uint32_t nrows)
{
    size_t ob = ((size_t)nrows + 1) * 8, nb = (size_t)(offsets[nrows] - offsets[0]), cap;
    char *payload = payload_get(w, ob + nb, &cap);
    for (uint32_t i = 0; i <= nrows; i++) {
        uint64_t o = offsets[i] - offsets[0];
        memcpy(payload + (size_t)i * 8, &o, 8);
    }
    memcpy(payload + ob, bytes + offsets[0], nb);
    submit(w, table, col, TL_CT_BLOB, nrows, payload, ob + nb, 1, cap);
}

void tl_wtrace_put_column(tl_wtrace *w, const char *table, const char *col, tl_ctype type,
                          const void *data, uint64_t nrows)
{
    size_t es = tl_ctype_size(type);
    uint64_t done = 0;
    do { /* chunks encoded straight from the caller's column: no copy */
        uint32_t n = nrows - done > TL_CHUNK_ROWS ? TL_CHUNK_ROWS : (uint32_t)(nrows - done);
        submit(w, table, col, type, n, (const char *)data + done * es, (size_t)n * es, 0, 0);
        done += n;
    } while (done < nrows);
}

void tl_wtrace_append(tl_wtrace *w, tl_wtrace *src)
{
    wtrace_drain(src);
    for (size_t c = 0; c < src->chunks.n; c++) {
        wchunk ch = src->chunks.v[c];
        /* the key is id, table NUL, column NUL, chunk number (col_key) */
        const char *table = (const char *)ch.key + 8;
        const char *col = table + strlen(table) + 1;
        /* src's chunks of a sequence are in order (numbered as reserved):
         * each takes the next number of that sequence in w */
        put_be32(ch.key + ch.klen - 4, next_chunk_no(w, table, col));
        put_be64(ch.key, w->id);
        unsigned char *val = ch.val;
        if (ch.spilled) { /* read back from src's file, to be held by w */
            val = tl_xmalloc(ch.vlen ? ch.vlen : 1);
            int e = tl_store_read_at(src->spill_fd, val, ch.vlen, ch.off);
            if (e) w->spill_err = e;
        }
        ch.val = NULL;
        ch.spilled = 0;
        if (w->worker) pthread_mutex_lock(&w->mu);
        tl_vec_push(&w->chunks, ch);
        hold_value(w, w->chunks.n - 1, val, ch.vlen);
        if (w->worker) pthread_mutex_unlock(&w->mu);
    }
    src->chunks.n = 0;
    src->bytes = src->mem_bytes = 0;
}

void tl_wtrace_set_id(tl_wtrace *w, uint64_t id)
{
    wtrace_drain(w);
    w->id = id;
    for (size_t i = 0; i < w->chunks.n; i++) put_be64(w->chunks.v[i].key, id);
}

void tl_wtrace_set_catalog(tl_wtrace *w, const char *json)
{
    free(w->catalog);
    w->catalog = tl_xstrdup(json);
}

size_t tl_wtrace_bytes(const tl_wtrace *w) { return w->bytes; }

/* LMDB aborts the whole transaction on MAP_FULL, so the retry starts from
 * scratch and a failed attempt leaves nothing behind. */
int tl_store_with_write_txn(tl_store *s, int (*fn)(tl_store *, MDB_txn *, void *, tl_err *), void *ctx,
                            tl_err *err)
{
    if (s->readonly)
        return tl_errf(err, TL_ESTORE, "store %s is read-only here (its files or file system cannot be written)",
                       s->dir);
    for (int attempt = 0; attempt < 40; attempt++) {
        MDB_txn *txn;
        int rc = mdb_txn_begin(s->env, NULL, 0, &txn);
        if (rc == MDB_MAP_RESIZED) {
            /* Another process grew the map: adopt its size. */
            mdb_env_set_mapsize(s->env, 0);
            continue;
        }
        if (rc) return tl_store_lmdb_err(err, rc, "cannot begin write", s->dir);
        rc = fn(s, txn, ctx, err);
        if (rc == 0) {
            rc = mdb_txn_commit(txn);
            if (rc == 0) return TL_OK;
        } else {
            mdb_txn_abort(txn);
        }
        if (rc == MDB_MAP_FULL) {
            MDB_envinfo info;
            mdb_env_info(s->env, &info);
            size_t cur = info.me_mapsize > s->mapsize ? info.me_mapsize : s->mapsize;
            s->mapsize = cur * 2;
            rc = mdb_env_set_mapsize(s->env, s->mapsize);
            if (rc) return tl_store_lmdb_err(err, rc, "cannot grow the map", s->dir);
            continue;
        }
        if (tl_store_own_code(rc)) return rc; /* message already set */
        return tl_store_lmdb_err(err, rc, "write failed", s->dir);
    }
    return tl_errf(err, TL_ESTORE, "store %s: could not grow the map enough", s->dir);
}

/* Pages the chunks from chunk `from` on and the catalog record will take
 * (values + headers, overflow pages), with a margin for B-tree and
 * freelist pages: an upper bound (LMDB also reuses freed pages). */
static size_t pages_needed(const tl_wtrace *w, size_t from, size_t psize)
{
    size_t pages = 16;
    for (size_t i = from; i < w->chunks.n; i++) {
        size_t v = w->chunks.v[i].vlen + 64;
        pages += v > psize / 2 ? (v + psize - 1) / psize : 1;
    }
    pages += (w->catalog ? strlen(w->catalog) + 64 : 64) / psize + 1;
    return pages + pages / 8;
}

/* Bytes of map the rest of the write needs: the pages in use plus
 * pages_needed. */
static size_t map_needed(tl_store *s, const tl_wtrace *w, size_t *cur)
{
    MDB_envinfo info;
    MDB_stat st;
    mdb_env_info(s->env, &info);
    mdb_env_stat(s->env, &st);
    *cur = info.me_mapsize > s->mapsize ? info.me_mapsize : s->mapsize;
    return ((size_t)info.me_last_pgno + 1 + pages_needed(w, w->wpos, st.ms_psize)) * st.ms_psize;
}

/* Grows the map before the write, with a margin, so that the write does
 * not find it too small (see write_fn). */
static int pregrow(tl_store *s, const tl_wtrace *w, tl_err *err)
{
    size_t cur, need = map_needed(s, w, &cur);
    if (need + need / 4 <= cur) return TL_OK;
    size_t nsz = cur;
    while (nsz < need + need / 4) nsz *= 2;
    int rc = mdb_env_set_mapsize(s->env, nsz);
    if (rc) return tl_store_lmdb_err(err, rc, "cannot grow the map", s->dir);
    s->mapsize = nsz;
    return TL_OK;
}

static void drop_map_pages(const tl_store *s);

/* The count_chunks walk drops the map's pages after this many chunks. */
#define COUNT_DROP_EVERY 1024

/* The number of chunk keys stored under id. Reading a chunk's node touches
 * the first page of its value, and the kernel maps the pages around each
 * such fault (fault-around: 64 KiB): over a 10 GB trace's ~14,000 chunks
 * that was ~800 MB of the store file resident at once, the ingest's peak.
 * So the walk drops the map's pages every COUNT_DROP_EVERY chunks. */
static int count_chunks(tl_store *s, MDB_txn *txn, const unsigned char idk[8], size_t *n)
{
    MDB_cursor *c;
    int rc = mdb_cursor_open(txn, s->columns, &c);
    if (rc) return rc;
    MDB_val ck = {8, (void *)idk}, cv;
    *n = 0;
    for (rc = mdb_cursor_get(c, &ck, &cv, MDB_SET_RANGE); rc == 0 && ck.mv_size >= 8 && !memcmp(ck.mv_data, idk, 8);
         rc = mdb_cursor_get(c, &ck, &cv, MDB_NEXT))
        if (++*n % COUNT_DROP_EVERY == 0) drop_map_pages(s);
    mdb_cursor_close(c);
    return rc == 0 || rc == MDB_NOTFOUND ? 0 : rc;
}

/* Puts chunks [w->wpos, end) with MDB_RESERVE. A value of more than a
 * page gets overflow pages of its own: LMDB keeps a write transaction's
 * dirty pages in memory where it allocated them until the commit, unless
 * it runs out of room for them (MDB_IDL_UM_MAX, 2^17 pages: 512 MB) and
 * spills some to the file, which a batch of WRITE_BATCH bytes plus one
 * chunk never reaches. Those values, in memory or in the spill file, are
 * therefore copied after the last put, all at once on several threads
 * (tl_store_dirty_copy); a smaller one sits in a leaf page that the next
 * put may split, and is copied at once. Every in-memory value is freed
 * once copied (on failure, uncopied). */
static int put_chunks(tl_store *s, MDB_txn *txn, tl_wtrace *w, size_t end, tl_err *err)
{
    MDB_stat ms;
    mdb_env_stat(s->env, &ms);
    size_t ncopies = 0;
    tl_dirty_copy *copies = tl_xmalloc((end - w->wpos + 1) * sizeof *copies);
    int rc = 0, rerr = 0; /* rerr: an errno reading the spill file */
    for (size_t i = w->wpos; i < end && !rc && !rerr; i++) {
        wchunk *c = &w->chunks.v[i];
        if (!c->val && !c->spilled) { /* freed by an attempt that hit MAP_FULL */
            rc = tl_errf(err, TL_ESTORE, "store %s: the map filled during a write", s->dir);
            break;
        }
        MDB_val ck = {c->klen, c->key};
        MDB_val cv = {c->vlen, NULL};
        if ((rc = mdb_put(txn, s->columns, &ck, &cv, MDB_RESERVE))) break;
        if (c->vlen > ms.ms_psize) /* overflow pages of its own: copied after the last put */
            copies[ncopies++] = c->spilled ? (tl_dirty_copy){cv.mv_data, NULL, c->vlen, w->spill_fd, c->off}
                                           : (tl_dirty_copy){cv.mv_data, c->val, c->vlen, -1, 0};
        else if (c->spilled)
            rerr = tl_store_read_at(w->spill_fd, cv.mv_data, c->vlen, c->off);
        else {
            memcpy(cv.mv_data, c->val, c->vlen);
            free(c->val);
        }
        c->val = NULL;
    }
    if (rc || rerr)
        for (size_t i = 0; i < ncopies; i++) free(copies[i].src);
    else
        rerr = tl_store_dirty_copy(copies, ncopies);
    if (rerr) rc = tl_errf(err, TL_ESTORE, "store %s: reading the ingest's spill file: %s", s->dir, strerror(rerr));
    free(copies);
    return rc;
}

/* One write transaction of tl_store_write: the chunks from w->wpos on, up
 * to WRITE_BATCH bytes of them (w->wnext: where it stops), and, in the
 * transaction that writes the last chunk, the catalog record. A trace
 * that fits one batch is written in one transaction. A larger one is
 * written in several, the catalog record last: readers look a trace up
 * there first, so until then its chunks are invisible, and an ingest
 * killed between them leaves chunks under an id the catalog does not list,
 * which `tracelens check --repair` removes and the next ingest of the same
 * file replaces (its first transaction deletes them). */
static int write_fn(tl_store *s, MDB_txn *txn, void *ctx, tl_err *err)
{
    tl_wtrace *w = ctx;
    unsigned char idk[8];
    put_be64(idk, w->id);
    MDB_val k = {8, idk}, v;
    int rc = mdb_get(txn, s->catalog, &k, &v);
    if (rc == 0) return tl_errf(err, TL_EEXIST, "trace already stored");
    if (rc != MDB_NOTFOUND) return rc;
    /* With the writer lock held nobody else can use up the map: when the
     * pages in use plus an upper bound of ours fit, MDB_MAP_FULL cannot
     * happen, and every in-memory chunk is freed once LMDB has its copy
     * (the dirty pages, put_chunks), so the encoded trace is not held
     * twice at the commit. When they do not fit (another process wrote since
     * pregrow), the map is grown and the write redone before anything was
     * freed. */
    size_t cur, need = map_needed(s, w, &cur);
    if (need > cur) return MDB_MAP_FULL;
    if ((rc = tl_store_reserve(s, need, err))) return rc;
    size_t end = w->wpos, batch = 0;
    while (end < w->chunks.n && (batch < WRITE_BATCH || end == w->wpos)) batch += w->chunks.v[end++].vlen;
    if (w->wpos == 0 && end < w->chunks.n && (rc = tl_store_txn_delete_trace(s, txn, w->id))) return rc;
    w->free_as_written = 1;
    if ((rc = put_chunks(s, txn, w, end, err))) return rc;
    w->wnext = end;
    if (end < w->chunks.n) return 0;
    if (w->wpos > 0) { /* several transactions: all of them must be there */
        size_t have;
        if ((rc = count_chunks(s, txn, idk, &have))) return rc;
        if (have != w->chunks.n)
            return tl_errf(err, TL_ESTORE, "store %s: another ingest of the same trace ran at the same time; "
                           "run this one again", s->dir);
    }
    /* the record: text, NUL, and the checksum of both */
    const char *cat = w->catalog ? w->catalog : "{}";
    size_t n = strlen(cat) + 1;
    v.mv_size = n + SUM_BYTES;
    v.mv_data = NULL;
    if ((rc = mdb_put(txn, s->catalog, &k, &v, MDB_RESERVE))) return rc;
    memcpy(v.mv_data, cat, n);
    put_le64((unsigned char *)v.mv_data + n, tl_hash64(cat, n, 0));
    return 0;
}

/* Drops the store's map pages from this process's resident set (the page
 * cache keeps them): LMDB maps data.mdb read-only and does not expose the
 * address, so the mapping is looked up in /proc/self/maps. Between the
 * transactions of a large write, where LMDB's B-tree walks fault the pages
 * around them in, which would otherwise stay counted. */
static void drop_map_pages(const tl_store *s)
{
    FILE *f = fopen("/proc/self/maps", "r");
    if (!f) return;
    char line[4352], want[4200];
    snprintf(want, sizeof want, "%s/data.mdb", s->dir);
    size_t wl = strlen(want);
    while (fgets(line, sizeof line, f)) {
        size_t n = strlen(line);
        while (n && (line[n - 1] == '\n' || line[n - 1] == ' ')) line[--n] = 0;
        unsigned long lo, hi;
        if (n < wl || strcmp(line + n - wl, want) || sscanf(line, "%lx-%lx", &lo, &hi) != 2) continue;
        if (strstr(line, " r--s ")) madvise((void *)lo, hi - lo, MADV_DONTNEED);
    }
    fclose(f);
}

int tl_store_write(tl_store *s, tl_wtrace *w, tl_err *err)
{
    if (s->nshards) return tl_store_refuse_list(s, "ingest", err);
    wtrace_drain(w);
    if (w->spill_err)
        return tl_errf(err, TL_ESTORE, "store %s: reading the ingest's spill file: %s", s->dir,
                       strerror(w->spill_err));
    w->free_as_written = 0;
    w->wpos = 0;
    tl_err perr = {0};
    (void)pregrow(s, w, &perr); /* on failure write_fn finds the map too small and grows it */
    int rc, several = 0;
    do {
        rc = tl_store_with_write_txn(s, write_fn, w, err);
        if (rc) break;
        several |= w->wnext < w->chunks.n;
        w->wpos = w->wnext;
        if (several) drop_map_pages(s);
    } while (w->wpos < w->chunks.n);
    if (rc == TL_ESTORE && w->wpos > 0)
        tl_err_prefix(err, "the trace was not stored (the chunks written so far are listed nowhere: "
                           "tracelens check --repair removes them, the next ingest of it replaces them)");
    else if (rc == TL_ESTORE && w->free_as_written)
        tl_err_prefix(err, "nothing was written; run the ingest again");
    return rc;
}


int tl_store_txn_delete_trace(tl_store *s, MDB_txn *txn, uint64_t id)
{
    unsigned char idk[8];
    put_be64(idk, id);
    MDB_val k = {8, idk};
    int rc = mdb_del(txn, s->catalog, &k, NULL);
    if (rc && rc != MDB_NOTFOUND) return rc;
    MDB_cursor *c;
    rc = mdb_cursor_open(txn, s->columns, &c);
    if (rc) return rc;
    MDB_val ck = {8, idk}, cv;
    rc = mdb_cursor_get(c, &ck, &cv, MDB_SET_RANGE);
    while (rc == 0 && ck.mv_size >= 8 && memcmp(ck.mv_data, idk, 8) == 0) {
        rc = mdb_cursor_del(c, 0);
        if (rc) break;
        rc = mdb_cursor_get(c, &ck, &cv, MDB_GET_CURRENT);
        if (rc == EINVAL) rc = mdb_cursor_get(c, &ck, &cv, MDB_NEXT);
    }
    mdb_cursor_close(c);
    return rc == MDB_NOTFOUND ? 0 : rc;
}

static int delete_fn(tl_store *s, MDB_txn *txn, void *ctx, tl_err *err)
{
    uint64_t id = *(uint64_t *)ctx;
    unsigned char idk[8];
    put_be64(idk, id);
    MDB_val k = {8, idk}, v;
    int rc = mdb_get(txn, s->catalog, &k, &v);
    if (rc == MDB_NOTFOUND) {
        char hex[17];
        tl_id_format(id, hex);
        return tl_errf(err, TL_ENOTFOUND, "no trace %s in the store", hex);
    }
    if (rc) return rc;
    return tl_store_txn_delete_trace(s, txn, id);
}

int tl_store_delete(tl_store *s, uint64_t id, tl_err *err)
{
    if (s->nshards) return tl_store_refuse_list(s, "deleting a trace", err);
    return tl_store_with_write_txn(s, delete_fn, &id, err);
}

typedef struct catalog_edit {
    uint64_t id;
    tl_catalog_edit_fn edit;
    void *ctx;
} catalog_edit;

static int edit_fn(tl_store *s, MDB_txn *txn, void *ctx, tl_err *err)
{
    catalog_edit *e = ctx;
    unsigned char idk[8];
    put_be64(idk, e->id);
    MDB_val k = {8, idk}, v;
    int rc = mdb_get(txn, s->catalog, &k, &v);
    if (rc == MDB_NOTFOUND) {
        char hex[17];
        tl_id_format(e->id, hex);
        return tl_errf(err, TL_ENOTFOUND, "no trace %s in the store", hex);
    }
    if (rc) return rc;
    if ((rc = tl_store_catalog_verify(s->dir, e->id, &v, err))) return rc;
    char *text = e->edit(e->ctx, v.mv_data, err);
    if (!text) return err->code ? err->code : TL_EUSAGE;
    size_t n = strlen(text) + 1;
    MDB_val nv = {n + SUM_BYTES, NULL};
    if ((rc = mdb_put(txn, s->catalog, &k, &nv, MDB_RESERVE)) == 0) {
        memcpy(nv.mv_data, text, n);
        put_le64((unsigned char *)nv.mv_data + n, tl_hash64(text, n, 0));
    }
    free(text);
    return rc;
}

int tl_store_edit_catalog(tl_store *s, uint64_t id, tl_catalog_edit_fn edit, void *ctx, tl_err *err)
{
    if (s->nshards) return tl_store_refuse_list(s, "changing a catalog record", err);
    catalog_edit e = {id, edit, ctx};
    return tl_store_with_write_txn(s, edit_fn, &e, err);
}

/* ---- reader ------------------------------------------------------------ */
int tl_reader_one_open(tl_store *s, tl_reader **out, tl_err *err)
{
    tl_reader *r = tl_xcalloc(1, sizeof *r);
    r->s = s;
    tl_arena_init(&r->arena, 1 << 20);
    int rc = mdb_txn_begin(s->env, NULL, MDB_RDONLY, &r->txn);
    if (rc == MDB_MAP_RESIZED) {
        mdb_env_set_mapsize(s->env, 0);
        rc = mdb_txn_begin(s->env, NULL, MDB_RDONLY, &r->txn);
    }
    if (rc) {
        free(r);
        return tl_store_lmdb_err(err, rc, "cannot begin read", s->dir);
    }
    *out = r;
    return TL_OK;
}

void tl_reader_one_close(tl_reader *r)
{
    if (!r) return;
    if (r->hold_pages) tl_reader_one_hold_pages(r, 0); /* a held reader's pages go now */
    mdb_txn_abort(r->txn);
    tl_arena_free(&r->arena);
    free(r);
}

void tl_reader_one_drop_resident(tl_reader *r)
{
    /* LMDB does not expose its map address: drop the span of the values
     * this reader decoded (the B-tree pages between them go too and fault
     * back in when needed) */
    if (r->hold_pages || r->map_hi <= r->map_lo) return;
    size_t psz = (size_t)sysconf(_SC_PAGESIZE); /* no static: readers on several threads */
    uintptr_t a = r->map_lo & ~(uintptr_t)(psz - 1);
    uintptr_t e = (r->map_hi + psz - 1) & ~(uintptr_t)(psz - 1);
    madvise((void *)a, e - a, MADV_DONTNEED);
    r->map_lo = r->map_hi = 0;
}

void tl_reader_one_hold_pages(tl_reader *r, int on)
{
    r->hold_pages = on != 0;
    if (!on) tl_reader_one_drop_resident(r);
}

/* The message for a damaged record or chunk: where, what, and what to do. */
static int damaged(tl_err *err, const char *dir, uint64_t id, const char *where, const char *what)
{
    char hex[17];
    tl_id_format(id, hex);
    return tl_errf(err, TL_ESTORE,
                   "store %s: trace %s, %s: %s; the store is damaged: run `tracelens check` (--repair "
                   "removes the damaged traces, to be ingested again)",
                   dir, hex, where, what);
}

int tl_store_catalog_verify(const char *dir, uint64_t id, const MDB_val *v, tl_err *err)
{
    const unsigned char *p = v->mv_data;
    const unsigned char *nul = memchr(p, 0, v->mv_size);
    size_t n = nul ? (size_t)(nul - p) + 1 : 0;
    if (nul && v->mv_size == n) return TL_OK; /* written before schema 3: no checksum */
    if (!nul || v->mv_size != n + SUM_BYTES) return damaged(err, dir, id, "catalog record", "wrong length");
    if (get_le64(p + n) != tl_hash64(p, n, 0)) return damaged(err, dir, id, "catalog record", "checksum mismatch");
    return TL_OK;
}

static int reader_has(tl_reader *r, uint64_t id)
{
    unsigned char idk[8];
    put_be64(idk, id);
    MDB_val k = {8, idk}, v;
    return mdb_get(r->txn, r->s->catalog, &k, &v) == 0;
}

int tl_reader_one_has(tl_reader *r, uint64_t id)
{
    STORE_GUARDED(0, reader_has(r, id));
}

static int reader_catalog(tl_reader *r, uint64_t id, const char **json, tl_err *err)
{
    *json = NULL;
    unsigned char idk[8];
    put_be64(idk, id);
    MDB_val k = {8, idk}, v;
    int rc = mdb_get(r->txn, r->s->catalog, &k, &v);
    if (rc == MDB_NOTFOUND) {
        char hex[17];
        tl_id_format(id, hex);
        return tl_errf(err, TL_ENOTFOUND, "no trace %s in the store %s", hex, r->s->dir);
    }
    if (rc) return tl_store_lmdb_err(err, rc, "catalog read", r->s->dir);
    if ((rc = tl_store_catalog_verify(r->s->dir, id, &v, err))) return rc;
    *json = v.mv_data;
    return TL_OK;
}

int tl_reader_one_catalog(tl_reader *r, uint64_t id, const char **json, tl_err *err)
{
    STORE_GUARDED(tl_fault_error(r->s->dir, err), reader_catalog(r, id, json, err));
}

static int reader_foreach(tl_reader *r, int (*cb)(void *ctx, uint64_t id, const char *json), void *ctx,
                          tl_err *err)
{
    MDB_cursor *c;
    int rc = mdb_cursor_open(r->txn, r->s->catalog, &c);
    if (rc) return tl_store_lmdb_err(err, rc, "catalog scan", r->s->dir);
    MDB_val k, v;
    int bad = TL_OK;
    tl_err berr = {0};
    /* damaged records are skipped; the first is reported at the end */
    for (rc = mdb_cursor_get(c, &k, &v, MDB_FIRST); rc == 0; rc = mdb_cursor_get(c, &k, &v, MDB_NEXT)) {
        if (k.mv_size != 8) continue;
        uint64_t id = get_be64(k.mv_data);
        if (tl_store_catalog_verify(r->s->dir, id, &v, bad ? NULL : &berr)) { bad = TL_ESTORE; continue; }
        sigjmp_buf *g = tl_fault_guard_get();
        tl_fault_guard_set(NULL);
        int stop = cb(ctx, id, v.mv_data);
        tl_fault_guard_set(g);
        if (stop) break;
    }
    mdb_cursor_close(c);
    if (rc && rc != MDB_NOTFOUND) return tl_store_lmdb_err(err, rc, "catalog scan", r->s->dir);
    if (bad && err) *err = berr;
    return bad;
}

int tl_reader_one_foreach(tl_reader *r, int (*cb)(void *ctx, uint64_t id, const char *json), void *ctx,
                      tl_err *err)
{
    STORE_GUARDED(tl_fault_error(r->s->dir, err), reader_foreach(r, cb, ctx, err));
}

/* Walks the catalog's ids only (a damaged record is then refused by the
 * read of its catalog or chunks, naming the trace, instead of looking
 * absent). */
static int reader_resolve(tl_reader *r, const char *prefix, uint64_t *id, tl_err *err)
{
    size_t n = strlen(prefix);
    uint64_t dummy;
    if (n < 4 || n > 16 || tl_id_parse(prefix, &dummy))
        return tl_errf(err, TL_ENOTFOUND, "'%s' is not a trace id (4 to 16 hex digits)", prefix);
    MDB_cursor *c;
    int rc = mdb_cursor_open(r->txn, r->s->catalog, &c);
    if (rc) return tl_store_lmdb_err(err, rc, "catalog scan", r->s->dir);
    MDB_val k, v;
    int count = 0;
    uint64_t found = 0;
    /* the first matches, for the message of an ambiguous prefix */
    char listed[8 * 18 + 1] = "";
    size_t nlisted = 0;
    for (rc = mdb_cursor_get(c, &k, &v, MDB_FIRST); rc == 0; rc = mdb_cursor_get(c, &k, &v, MDB_NEXT)) {
        if (k.mv_size != 8) continue;
        char hex[17];
        tl_id_format(get_be64(k.mv_data), hex);
        if (strncasecmp(hex, prefix, n) == 0) {
            found = get_be64(k.mv_data);
            if (count++ < 8) nlisted += (size_t)snprintf(listed + nlisted, sizeof listed - nlisted, "%s%s",
                                                         nlisted ? ", " : "", hex);
        }
    }
    mdb_cursor_close(c);
    if (rc != MDB_NOTFOUND) return tl_store_lmdb_err(err, rc, "catalog scan", r->s->dir);
    if (count == 0) return tl_errf(err, TL_ENOTFOUND, "no trace %s in the store %s", prefix, r->s->dir);
    if (count > 1)
        return tl_errf(err, TL_ENOTFOUND, "trace id prefix %s is ambiguous: %s%s", prefix, listed,
                       count > 8 ? " and more (give more digits)" : " (give more digits)");
    *id = found;
    return TL_OK;
}

int tl_reader_one_resolve(tl_reader *r, const char *prefix, uint64_t *id, tl_err *err)
{
    STORE_GUARDED(tl_fault_error(r->s->dir, err), reader_resolve(r, prefix, id, err));
}

/* Splits a chunk key (id, table NUL, column NUL, u32 BE chunk): 1, or 0
 * when it is malformed. */
static int parse_chunk_key(const MDB_val *k, const char **table, const char **col, uint32_t *chunk)
{
    const char *key = k->mv_data, *end = key + k->mv_size;
    if (k->mv_size < 8 + 2 + 4) return 0;
    const char *tend = memchr(key + 8, 0, k->mv_size - 8);
    const char *cend = tend ? memchr(tend + 1, 0, (size_t)(end - tend - 1)) : NULL;
    if (!cend || end != cend + 5) return 0;
    *table = key + 8;
    *col = tend + 1;
    *chunk = get_be32((const unsigned char *)cend + 1);
    return 1;
}

/* A damaged chunk: the message names the trace, column and chunk number
 * read from its key. */
static int chunk_damaged(const char *dir, const MDB_val *k, const char *what, tl_err *err)
{
    const char *t, *c;
    uint32_t no;
    uint64_t id = k->mv_size >= 8 ? get_be64(k->mv_data) : 0;
    char where[400];
    if (parse_chunk_key(k, &t, &c, &no))
        snprintf(where, sizeof where, "column %.150s.%.150s, chunk %u", t, c, no);
    else
        snprintf(where, sizeof where, "a column chunk with a malformed key");
    return damaged(err, dir, id, where, what);
}

/* Reads and checks a chunk header: 0, or an error naming the chunk (key k)
 * when the value is not a chunk or its sizes disagree. Every size a decode
 * relies on is checked here, before any payload byte is touched: the value
 * is exactly header, payload and (when summed) checksum; a fixed-width
 * payload is rows x width; a blob payload holds at least its offsets; a raw
 * payload is stored as is; LZ4 expands less than 260-fold (which bounds
 * what a damaged header of a chunk written before schema 3 can allocate). */
static int chunk_hdr(const char *dir, const MDB_val *k, const MDB_val *v, uint32_t f[3], tl_err *err)
{
    const unsigned char *p = v->mv_data;
    if (v->mv_size < CHUNK_HDR || p[0] != 'T' || p[1] > ENC_FOR || p[2] < TL_CT_U8 || p[2] > TL_CT_BLOB ||
        (p[3] & ~CHUNK_SUMMED))
        return chunk_damaged(dir, k, "not a column chunk", err);
    memcpy(f, p + 4, 12);
    uint32_t nrows = f[0], raw = f[1], stored = f[2];
    size_t sum = (p[3] & CHUNK_SUMMED) ? SUM_BYTES : 0;
    if ((uint64_t)CHUNK_HDR + stored + sum != v->mv_size)
        return chunk_damaged(dir, k, "chunk length differs from its header", err);
    size_t es = tl_ctype_size(p[2]);
    int ok = es ? (uint64_t)nrows * es == raw : ((uint64_t)nrows + 1) * 8 <= raw;
    if (p[1] == ENC_RAW) ok = ok && stored == raw;
    else if (p[1] == ENC_LZ4) ok = ok && raw <= (uint64_t)stored * 260 + 1024;
    else ok = ok && p[2] == TL_CT_I64 && stored >= FOR_HDR;
    if (!ok) return chunk_damaged(dir, k, "inconsistent chunk header", err);
    return TL_OK;
}

/* The checksum of a summed chunk whose header chunk_hdr accepted. */
static int chunk_sum_ok(const MDB_val *v, uint32_t stored)
{
    const unsigned char *p = v->mv_data;
    if (!(p[3] & CHUNK_SUMMED)) return 1; /* written before schema 3 */
    return get_le64(p + CHUNK_HDR + stored) == tl_hash64(p, CHUNK_HDR + (size_t)stored, 0);
}

/* Blob offsets (n + 1 of them): from 0, each past the previous, ending at
 * the payload's end, and each value NUL-terminated, so every value lies
 * inside the bytes and a reader's length (next offset - offset - 1) is
 * never negative. */
static int blob_offsets_ok(const unsigned char *payload, uint32_t n, uint32_t raw)
{
    uint64_t prev = 0, o;
    uint64_t nbytes = (uint64_t)raw - ((uint64_t)n + 1) * 8;
    const unsigned char *bytes = payload + ((size_t)n + 1) * 8;
    memcpy(&o, payload, 8);
    if (o != 0) return 0;
    for (uint32_t i = 1; i <= n; i++) {
        memcpy(&o, payload + (size_t)i * 8, 8);
        if (o <= prev || o > nbytes || bytes[o - 1] != 0) return 0;
        prev = o;
    }
    return prev == nbytes;
}

/* A chunk value that was decoded into memory is not read from the map
 * again: its whole pages (large values sit on their own overflow pages)
 * leave the process's resident set. The map is read-only and shared, so
 * this only drops our mapping of page-cache pages; a later read faults
 * them back in. Small values share B-tree pages and are left alone. */
static void drop_pages(const tl_reader *r, const void *p, size_t n)
{
    if (r->hold_pages) return; /* the release drops the span at once */
    size_t psz = (size_t)sysconf(_SC_PAGESIZE); /* per call: readers run on several threads */
    if (n < 2 * psz) return;
    uintptr_t a = ((uintptr_t)p + psz - 1) & ~(uintptr_t)(psz - 1);
    uintptr_t e = ((uintptr_t)p + n) & ~(uintptr_t)(psz - 1);
    if (e > a) madvise((void *)a, e - a, MADV_DONTNEED);
}

/* Decodes one chunk value (key k) into a view, after checking its header
 * and checksum. Raw, suitably aligned payloads are used in place;
 * everything else is copied/decompressed into dst when given (at least
 * raw + 8 bytes), else into the reader's arena. */
static int decode_chunk(tl_reader *r, const MDB_val *k, const MDB_val *v, char *dst, tl_colview *out, tl_err *err)
{
    const unsigned char *p = v->mv_data;
    uint32_t f[3];
    int e = chunk_hdr(r->s->dir, k, v, f, err);
    if (e) return e;
    uint32_t nrows = f[0], raw = f[1], stored = f[2];
    if (!chunk_sum_ok(v, stored)) return chunk_damaged(r->s->dir, k, "checksum mismatch", err);
    tl_ctype type = p[2];
    if (!r->map_lo || (uintptr_t)p < r->map_lo) r->map_lo = (uintptr_t)p;
    if ((uintptr_t)p + v->mv_size > r->map_hi) r->map_hi = (uintptr_t)p + v->mv_size;
    const char *payload;
    if (p[1] == ENC_LZ4) {
        char *d = dst ? dst : tl_arena_alloc(&r->arena, raw + 8);
        int n = LZ4_decompress_safe((const char *)p + CHUNK_HDR, d, (int)stored, (int)raw);
        if (n != (int)raw) return chunk_damaged(r->s->dir, k, "LZ4 payload does not decode to its size", err);
        payload = d;
        drop_pages(r, p, v->mv_size);
    } else if (p[1] == ENC_FOR) {
        const unsigned char *h = p + CHUNK_HDR;
        int w = h[0];
        if ((w != 1 && w != 2 && w != 4) || h[1] > 1)
            return chunk_damaged(r->s->dir, k, "bad narrowed-chunk header", err);
        int64_t base;
        memcpy(&base, h + 8, 8);
        size_t nb = (size_t)nrows * (size_t)w;
        char *d = dst ? dst : tl_arena_alloc(&r->arena, raw + 8);
        const unsigned char *src = h + FOR_HDR;
        if (h[1]) { /* the offsets decompressed into the end of d, widened in place */
            unsigned char *tmp = (unsigned char *)d + raw - nb;
            if (LZ4_decompress_safe((const char *)src, (char *)tmp, (int)(stored - FOR_HDR), (int)nb) != (int)nb)
                return chunk_damaged(r->s->dir, k, "narrowed LZ4 payload does not decode to its size", err);
            src = tmp;
        } else if (stored - FOR_HDR != nb) {
            return chunk_damaged(r->s->dir, k, "narrowed payload size differs from rows x width", err);
        }
        tl_for_widen((int64_t *)(void *)d, src, nrows, w, base);
        payload = d;
        drop_pages(r, p, v->mv_size);
    } else if (((uintptr_t)(p + CHUNK_HDR) & 7) == 0) {
        payload = (const char *)p + CHUNK_HDR;
    } else {
        char *d = dst ? dst : tl_arena_alloc(&r->arena, raw + 8);
        memcpy(d, p + CHUNK_HDR, raw);
        payload = d;
        drop_pages(r, p, v->mv_size);
    }
    if (type == TL_CT_BLOB && !blob_offsets_ok((const unsigned char *)payload, nrows, raw))
        return chunk_damaged(r->s->dir, k, "blob offsets out of order, past the payload or not at a NUL", err);
    out->type = type;
    out->n = nrows;
    if (type == TL_CT_BLOB) {
        out->offsets = (const uint64_t *)payload;
        out->bytes = payload + ((size_t)nrows + 1) * 8;
        out->data = NULL;
    } else {
        out->data = payload;
        out->offsets = NULL;
        out->bytes = NULL;
    }
    return TL_OK;
}

int tl_store_chunk_verify(tl_reader *r, const MDB_val *k, const MDB_val *v, tl_err *err)
{
    uint32_t f[3];
    int e = chunk_hdr(r->s->dir, k, v, f, err);
    if (e) return e;
    char *buf = tl_xmalloc((size_t)f[1] + 8);
    tl_colview cv;
    e = decode_chunk(r, k, v, buf, &cv, err);
    free(buf);
    return e;
}

/* The chunks of one column, in order: its keys are the column key plus a
 * 4-byte chunk number (col_key), so they sit together in the B-tree. */
typedef struct chunk_cursor {
    MDB_cursor *c;
    unsigned char kb[600];
    size_t kl;
    int started;
    MDB_val key; /* the current chunk's key */
} chunk_cursor;

static int chunks_open(tl_reader *r, uint64_t id, const char *table, const char *col, chunk_cursor *cc,
                       tl_err *err)
{
    cc->kl = col_key(cc->kb, sizeof cc->kb, id, table, col, 0, 0);
    cc->started = 0;
    if (!cc->kl) return tl_errf(err, TL_EUSAGE, "column name too long");
    int rc = mdb_cursor_open(r->txn, r->s->columns, &cc->c);
    return rc ? tl_store_lmdb_err(err, rc, "column scan", r->s->dir) : TL_OK;
}

/* The next chunk's value into *v: 1, or 0 after the last. */
static int chunks_next(chunk_cursor *cc, MDB_val *v)
{
    MDB_val *k = &cc->key;
    *k = (MDB_val){cc->kl, cc->kb};
    int rc = mdb_cursor_get(cc->c, k, v, cc->started ? MDB_NEXT : MDB_SET_RANGE);
    cc->started = 1;
    return rc == 0 && k->mv_size == cc->kl + 4 && memcmp(k->mv_data, cc->kb, cc->kl) == 0;
}

static int no_column(tl_err *err, uint64_t id, const char *table, const char *col)
{
    char hex[17];
    tl_id_format(id, hex);
    return tl_errf(err, TL_ENOTFOUND, "trace %s has no column %s.%s", hex, table, col);
}

/* Walks the chunks of one column in order: mode 0 decodes into the arena
 * (views live as long as the reader), mode 1 into one scratch buffer reused
 * for every chunk (views live until the callback returns). */
static int column_walk(tl_reader *r, uint64_t id, const char *table, const char *col, int scratch,
                       int (*cb)(void *ctx, uint32_t chunk, const tl_colview *v), void *ctx,
                       tl_err *err)
{
    chunk_cursor cc;
    int rc = chunks_open(r, id, table, col, &cc, err);
    if (rc) return rc;
    MDB_val v;
    int found = 0;
    uint32_t no = 0;
    char *buf = NULL;
    size_t bufcap = 0;
    while (chunks_next(&cc, &v)) {
        char *dst = NULL;
        if (scratch) {
            uint32_t f[3];
            int e = chunk_hdr(r->s->dir, &cc.key, &v, f, err);
            if (e) { mdb_cursor_close(cc.c); free(buf); return e; }
            if ((size_t)f[1] + 8 > bufcap) {
                free(buf);
                bufcap = (size_t)f[1] + 8;
                buf = tl_xmalloc(bufcap);
            }
            dst = buf;
        }
        tl_colview cv;
        int e = decode_chunk(r, &cc.key, &v, dst, &cv, err);
        if (e) { mdb_cursor_close(cc.c); free(buf); return e; }
        found = 1;
        sigjmp_buf *g = tl_fault_guard_get();
        tl_fault_guard_set(NULL);
        int stop = cb(ctx, no++, &cv);
        tl_fault_guard_set(g);
        if (stop) break;
    }
    mdb_cursor_close(cc.c);
    free(buf);
    return found ? TL_OK : no_column(err, id, table, col);
}

int tl_reader_one_column_chunks(tl_reader *r, uint64_t id, const char *table, const char *col,
                            int (*cb)(void *ctx, uint32_t chunk, const tl_colview *v), void *ctx,
                            tl_err *err)
{
    STORE_GUARDED(tl_fault_error(r->s->dir, err), column_walk(r, id, table, col, 0, cb, ctx, err));
}

int tl_reader_one_column_scan(tl_reader *r, uint64_t id, const char *table, const char *col,
                          int (*cb)(void *ctx, uint32_t chunk, const tl_colview *v), void *ctx,
                          tl_err *err)
{
    STORE_GUARDED(tl_fault_error(r->s->dir, err), column_walk(r, id, table, col, 1, cb, ctx, err));
}

/* The fixed-width chunks from the cursor's position decoded into
 * dst[row..] (LZ4 straight into place, raw chunks copied), up to `rows`
 * values of `es` bytes; *got counts them. */
static int decode_fixed_into(tl_reader *r, chunk_cursor *cc, char *dst, size_t es, uint64_t rows, uint64_t *got,
                             tl_err *err)
{
    MDB_val v;
    uint64_t row = 0;
    while (chunks_next(cc, &v)) {
        uint32_t f[3];
        int e = chunk_hdr(r->s->dir, &cc->key, &v, f, err);
        if (e) return e;
        if (tl_ctype_size(((const unsigned char *)v.mv_data)[2]) != es)
            return chunk_damaged(r->s->dir, &cc->key, "chunk type differs from the column's", err);
        if (row + f[0] > rows) return chunk_damaged(r->s->dir, &cc->key, "more rows than the column has", err);
        tl_colview p;
        if ((e = decode_chunk(r, &cc->key, &v, dst + row * es, &p, err))) return e;
        if (p.data != dst + row * es) {
            memcpy(dst + row * es, p.data, p.n * es);
            drop_pages(r, v.mv_data, v.mv_size);
        }
        row += p.n;
    }
    *got = row;
    return TL_OK;
}

static int reader_column_into(tl_reader *r, uint64_t id, const char *table, const char *col, void *dst,
                              size_t width, uint64_t rows, tl_err *err)
{
    chunk_cursor cc;
    int rc = chunks_open(r, id, table, col, &cc, err);
    if (rc) return rc;
    uint64_t got = 0;
    rc = decode_fixed_into(r, &cc, dst, width, rows, &got, err);
    mdb_cursor_close(cc.c);
    if (rc) return rc;
    if (!got) return no_column(err, id, table, col);
    if (got != rows)
        return tl_errf(err, TL_ESTORE, "store %s: column %s.%s has %llu rows, expected %llu", r->s->dir, table, col,
                       (unsigned long long)got, (unsigned long long)rows);
    return TL_OK;
}

int tl_reader_one_column_into(tl_reader *r, uint64_t id, const char *table, const char *col, void *dst, size_t width,
                          uint64_t rows, tl_err *err)
{
    STORE_GUARDED(tl_fault_error(r->s->dir, err), reader_column_into(r, id, table, col, dst, width, rows, err));
}

/* tl_reader_column over several chunks: the chunk headers give the total
 * size, then every chunk is decoded straight into its place in the one
 * result block (decoding chunk by chunk into the arena and then copying
 * would keep the column twice). */
typedef struct gather {
    tl_ctype type;
    uint64_t rows, bytes;   /* totals (bytes: blob text) */
    size_t maxraw;          /* largest blob chunk payload */
    uint32_t nchunks;
} gather;

static int reader_column(tl_reader *r, uint64_t id, const char *table, const char *col, tl_colview *out,
                         tl_err *err)
{
    chunk_cursor cc;
    int rc = chunks_open(r, id, table, col, &cc, err);
    if (rc) return rc;
    MDB_cursor *c = cc.c;
    MDB_val v;
    gather g = {0};
    MDB_val first = {0, NULL}, first_key = {0, NULL};
    while (chunks_next(&cc, &v)) {
        uint32_t f[3];
        int e = chunk_hdr(r->s->dir, &cc.key, &v, f, err);
        if (e) { mdb_cursor_close(c); return e; }
        tl_ctype type = ((const unsigned char *)v.mv_data)[2];
        if (!g.nchunks) { g.type = type; first = v; first_key = cc.key; }
        else if (type != g.type) {
            mdb_cursor_close(c);
            return chunk_damaged(r->s->dir, &cc.key, "chunk type differs from the column's", err);
        }
        g.nchunks++;
        g.rows += f[0];
        if (type == TL_CT_BLOB) {
            uint64_t ob = ((uint64_t)f[0] + 1) * 8;
            g.bytes += f[1] - ob;
            if (f[1] > g.maxraw) g.maxraw = f[1];
        }
    }
    if (!g.nchunks) {
        mdb_cursor_close(c);
        return no_column(err, id, table, col);
    }
    if (g.nchunks == 1) {
        mdb_cursor_close(c);
        return decode_chunk(r, &first_key, &first, NULL, out, err);
    }
    memset(out, 0, sizeof *out);
    out->type = g.type;
    out->n = g.rows;
    size_t es = tl_ctype_size(g.type);
    uint64_t *off = NULL;
    char *bytes = NULL, *data = NULL, *tmp = NULL;
    if (g.type == TL_CT_BLOB) {
        off = tl_arena_alloc(&r->arena, (g.rows + 1) * 8);
        bytes = tl_arena_alloc(&r->arena, g.bytes + 1);
        tmp = tl_xmalloc(g.maxraw + 8);
    } else {
        data = tl_arena_alloc(&r->arena, g.rows * es + 8);
    }
    uint64_t row = 0, base = 0;
    int e = TL_OK;
    cc.started = 0; /* second pass: from the first chunk again */
    if (g.type != TL_CT_BLOB) {
        e = decode_fixed_into(r, &cc, data, es, g.rows, &row, err);
    } else {
        while (row <= g.rows && chunks_next(&cc, &v)) {
            tl_colview p;
            if ((e = decode_chunk(r, &cc.key, &v, tmp, &p, err))) break;
            uint64_t nb = p.offsets[p.n];
            if (row + p.n > g.rows || base + nb > g.bytes) {
                e = chunk_damaged(r->s->dir, &cc.key, "column changed between reads", err);
                break;
            }
            for (uint64_t j = 0; j < p.n; j++) off[row++] = base + p.offsets[j];
            memcpy(bytes + base, p.bytes, nb);
            base += nb;
        }
    }
    mdb_cursor_close(c);
    free(tmp);
    if (e) return e;
    if (g.type == TL_CT_BLOB) {
        off[row] = base;
        out->offsets = off;
        out->bytes = bytes;
    } else {
        out->data = data;
    }
    return TL_OK;
}

int tl_reader_one_column(tl_reader *r, uint64_t id, const char *table, const char *col, tl_colview *out,
                     tl_err *err)
{
    STORE_GUARDED(tl_fault_error(r->s->dir, err), reader_column(r, id, table, col, out, err));
}

int tl_reader_check_type(uint64_t id, const char *table, const char *col, tl_ctype type, int rc,
                         const tl_colview *v, tl_err *err)
{
    if (rc || v->type == type) return rc;
    char hex[17];
    tl_id_format(id, hex);
    return tl_errf(err, TL_ESTORE,
                   "trace %s, table %s, column %s: holds %s values, not %s; the store is damaged or was written "
                   "by another program: run `tracelens check`",
                   hex, table, col, tl_ctype_name(v->type), tl_ctype_name(type));
}

int tl_reader_one_dict(tl_reader *r, uint64_t id, tl_dict *out, tl_err *err)
{
    tl_colview v;
    int rc = tl_reader_one_column(r, id, "dict", "str", &v, err);
    if ((rc = tl_reader_check_type(id, "dict", "str", TL_CT_BLOB, rc, &v, err))) return rc;
    out->n = v.n;
    out->offsets = v.offsets;
    out->bytes = v.bytes;
    return TL_OK;
}

static int reader_sizes(tl_reader *r, uint64_t id, char **json_out, tl_err *err)
{
    unsigned char idk[8];
    put_be64(idk, id);
    MDB_cursor *c;
    int rc = mdb_cursor_open(r->txn, r->s->columns, &c);
    if (rc) return tl_store_lmdb_err(err, rc, "column scan", r->s->dir);
    MDB_val k = {8, idk}, v;
    tl_buf b = {0};
    tl_buf_putc(&b, '{');
    char cur[300] = "";
    uint64_t stored = 0, raw = 0, chunks = 0;
    int first = 1;
    for (rc = mdb_cursor_get(c, &k, &v, MDB_SET_RANGE);; rc = mdb_cursor_get(c, &k, &v, MDB_NEXT)) {
        int done = rc != 0 || k.mv_size < 8 || memcmp(k.mv_data, idk, 8) != 0;
        char name[300] = "";
        const char *t, *cn;
        uint32_t no;
        if (!done && !parse_chunk_key(&k, &t, &cn, &no)) {
            mdb_cursor_close(c);
            tl_buf_free(&b);
            return chunk_damaged(r->s->dir, &k, "malformed key", err);
        }
        if (!done) snprintf(name, sizeof name, "%s.%s", t, cn);
        if ((done || strcmp(name, cur)) && cur[0]) {
            tl_buf_printf(&b, "%s\"%s\":{\"chunks\":%llu,\"stored_bytes\":%llu,\"raw_bytes\":%llu}",
                          first ? "" : ",", cur, (unsigned long long)chunks,
                          (unsigned long long)stored, (unsigned long long)raw);
            first = 0;
            stored = raw = chunks = 0;
        }
        if (done) break;
        snprintf(cur, sizeof cur, "%s", name);
        uint32_t f[3];
        int e = chunk_hdr(r->s->dir, &k, &v, f, err);
        if (e) {
            mdb_cursor_close(c);
            tl_buf_free(&b);
            return e;
        }
        stored += v.mv_size;
        raw += f[1] + CHUNK_HDR;
        chunks++;
    }
    mdb_cursor_close(c);
    tl_buf_putc(&b, '}');
    *json_out = b.p;
    return TL_OK;
}

int tl_reader_one_sizes(tl_reader *r, uint64_t id, char **json_out, tl_err *err)
{
    STORE_GUARDED(tl_fault_error(r->s->dir, err), reader_sizes(r, id, json_out, err));
}
