/* zip_write.c — a zip archive (PKWARE APPNOTE 6.3) written front to back.
 *
 * Each entry is deflated while it is streamed in, with ISA-L's igzip at
 * level 1: workbooks are mostly repetitive XML, which igzip deflates
 * several times faster than zlib's default level. The local header is
 * written with zero sizes and patched once the entry is done (the archive is a regular file), so no data
 * descriptors are needed. zip64 fields appear only where a size, an offset
 * or the entry count needs them. Times are the DOS epoch (1980-01-01):
 * reproducible output, and Excel does not read them.
 *
 * Data written to an entry is compressed on a second thread while the
 * caller generates the next block, so the two overlap on two cores;
 * everything else (headers, the end of an entry, the
 * directory) happens on the caller's thread while the compressor idles.
 *
 * An entry may also be deflated apart from the archive (tl_zdef), on any
 * thread, into memory, and added whole later: workbooks deflate their
 * sheets on several threads that way. Fed the same blocks, the stream is
 * the same bytes either way (one deflate state per entry, the same output
 * chunking). Such entries may also be written by offset (pwrite) on the
 * threads that made them, once their places are reserved in order.
 *
 * An entry's stream may be cut into segments (a sync flush, then a fresh
 * deflate state), so that one large entry is deflated on several threads,
 * a segment each, and the segments' bytes joined (tl_zdef_append, the
 * CRCs combined with zlib's crc32_combine). */
#include "report/zip_write.h"

#include <errno.h>
#include <isa-l/crc.h>
#include <isa-l/igzip_lib.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#define OUT_CHUNK (256u << 10)
#define U32_MAX_ 0xffffffffu

typedef struct zentry {
    char *name;
    uint64_t off, csize, usize;
    uint32_t crc;
    int big;
} zentry;

#define QUEUE_BLOCKS 4

typedef struct zblock {
    void *p;
    size_t n;
} zblock;

/* One entry's deflate stream: igzip's state, its output chunk, and the
 * CRC and sizes so far; the compressed bytes go to sink. */
typedef struct zdefl {
    struct isal_zstream zs;
    uint8_t *level_buf, *out;
    uint32_t crc;
    uint64_t usize, csize;
    int (*sink)(void *ctx, const void *p, size_t n, tl_err *err);
    void *sink_ctx;
} zdefl;

struct tl_zdef {
    zdefl d;
    char *name;
    tl_buf data; /* the compressed bytes */
};

struct tl_zipw {
    FILE *f;
    char *path;
    uint64_t pos; /* bytes written so far */
    TL_VEC(zentry) ents;
    zdefl d; /* the entry being streamed in */
    int direct; /* entries being placed by offset (enter_direct) */
    /* the compressor thread and its queue of blocks (owned copies) */
    tl_thread *thr;
    int started;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    zblock q[QUEUE_BLOCKS];
    size_t qhead, qn;
    int busy, stop;
    int failed;     /* the compressor's first error, in ferr */
    tl_err ferr;
};

static void le16(unsigned char *p, unsigned v) { p[0] = (unsigned char)v, p[1] = (unsigned char)(v >> 8); }
static void le32(unsigned char *p, uint32_t v)
{
    for (int i = 0; i < 4; i++) p[i] = (unsigned char)(v >> (8 * i));
}
static void le64(unsigned char *p, uint64_t v)
{
    for (int i = 0; i < 8; i++) p[i] = (unsigned char)(v >> (8 * i));
}

static int put(tl_zipw *z, const void *p, size_t n, tl_err *err)
{
    if (n && fwrite(p, 1, n, z->f) != n) return tl_errf(err, TL_EIO, "%s: write failed: %s", z->path, strerror(errno));
    z->pos += n;
    return TL_OK;
}

static int put_sink(void *ctx, const void *p, size_t n, tl_err *err) { return put(ctx, p, n, err); }

static void free_z(tl_zipw *z);
static int deflate_block(zdefl *d, const char *name, const uint8_t *s, size_t n, tl_err *err);
static int pump(zdefl *d, const char *name, int last, tl_err *err);

/* A fresh igzip state (no history), the CRC and sizes kept. */
static void zdefl_start(zdefl *d)
{
    isal_deflate_init(&d->zs);
    d->zs.level = 1;
    d->zs.level_buf = d->level_buf;
    d->zs.level_buf_size = ISAL_DEF_LVL1_DEFAULT;
    d->zs.flush = NO_FLUSH;
}

static void zdefl_init(zdefl *d, int (*sink)(void *, const void *, size_t, tl_err *), void *ctx)
{
    if (!d->level_buf) d->level_buf = tl_xmalloc(ISAL_DEF_LVL1_DEFAULT);
    if (!d->out) d->out = tl_xmalloc(OUT_CHUNK);
    zdefl_start(d);
    d->crc = 0;
    d->usize = d->csize = 0;
    d->sink = sink;
    d->sink_ctx = ctx;
}

static void zdefl_free(zdefl *d)
{
    free(d->level_buf);
    free(d->out);
}

/* One call of the compressor into the output chunk, handed to the sink. */
static int deflate_round(zdefl *d, const char *name, tl_err *err)
{
    d->zs.next_out = d->out;
    d->zs.avail_out = OUT_CHUNK;
    if (isal_deflate(&d->zs) != COMP_OK) return tl_errf(err, TL_EIO, "zip entry %s: deflate failed", name);
    size_t got = OUT_CHUNK - d->zs.avail_out;
    d->csize += got;
    return d->sink(d->sink_ctx, d->out, got, err);
}

/* Ends the stream's segment: everything fed so far is output, up to a
 * byte boundary (a sync flush: an empty stored block, not a final one),
 * and the next byte starts a fresh stream that refers to nothing before
 * it. So the segments of an entry can be deflated apart and their bytes
 * joined (tl_zdef_append): the same bytes as deflating it in one go with
 * the same cuts. */
static int zdefl_cut(zdefl *d, const char *name, tl_err *err)
{
    d->zs.next_in = NULL;
    d->zs.avail_in = 0;
    d->zs.end_of_stream = 0;
    d->zs.flush = SYNC_FLUSH;
    do {
        int rc = deflate_round(d, name, err);
        if (rc) return rc;
    } while (d->zs.internal_state.state != ZSTATE_NEW_HDR);
    zdefl_start(d);
    return TL_OK;
}

static void *compressor(void *arg)
{
    tl_zipw *z = arg;
    pthread_mutex_lock(&z->mu);
    for (;;) {
        while (!z->qn && !z->stop) pthread_cond_wait(&z->cv, &z->mu);
        if (!z->qn) break;
        zblock b = z->q[z->qhead];
        z->busy = 1;
        pthread_mutex_unlock(&z->mu);
        tl_err e = {0};
        const char *name = z->ents.v[z->ents.n - 1].name;
        int rc = z->failed ? TL_OK : b.p ? deflate_block(&z->d, name, b.p, b.n, &e) : zdefl_cut(&z->d, name, &e);
        free(b.p);
        pthread_mutex_lock(&z->mu);
        if (rc && !z->failed) z->failed = 1, z->ferr = e;
        z->qhead = (z->qhead + 1) % QUEUE_BLOCKS;
        z->qn--;
        z->busy = 0;
        pthread_cond_broadcast(&z->cv);
    }
    pthread_mutex_unlock(&z->mu);
    return NULL;
}

/* Waits until the compressor has done every block; returns its error. */
static int drain(tl_zipw *z, tl_err *err)
{
    pthread_mutex_lock(&z->mu);
    while (z->qn || z->busy) pthread_cond_wait(&z->cv, &z->mu);
    int failed = z->failed;
    pthread_mutex_unlock(&z->mu);
    if (failed && err) *err = z->ferr;
    return failed ? z->ferr.code : TL_OK;
}

int tl_zipw_open(const char *path, tl_zipw **out, tl_err *err)
{
    FILE *f = fopen(path, "wb");
    if (!f) return tl_errf(err, TL_EIO, "%s: cannot create: %s", path, strerror(errno));
    tl_zipw *z = tl_xcalloc(1, sizeof *z);
    z->f = f;
    setvbuf(f, NULL, _IOFBF, 1 << 20);
    z->path = tl_xstrdup(path);
    pthread_mutex_init(&z->mu, NULL);
    pthread_cond_init(&z->cv, NULL);
    if (!(z->thr = tl_thread_start(compressor, z))) {
        fclose(f);
        free_z(z);
        return tl_errf(err, TL_EIO, "%s: cannot start the compressor thread", path);
    }
    z->started = 1;
    *out = z;
    return TL_OK;
}

/* local header of e into hb: 30 bytes, the name, and with e->big a zip64
 * extra (20 bytes); with known, its CRC and sizes (else zeros, patched by
 * tl_zipw_end) */
static void local_header(tl_buf *hb, const zentry *e, int known)
{
    size_t nl = strlen(e->name);
    unsigned char h[30];
    memset(h, 0, sizeof h);
    le32(h, 0x04034b50);
    le16(h + 4, e->big ? 45 : 20);
    le16(h + 8, 8);       /* deflate */
    le16(h + 12, 0x0021); /* 1980-01-01 */
    if (known) {
        le32(h + 14, e->crc);
        le32(h + 18, e->big ? U32_MAX_ : (uint32_t)e->csize);
        le32(h + 22, e->big ? U32_MAX_ : (uint32_t)e->usize);
    }
    le16(h + 26, (unsigned)nl);
    le16(h + 28, e->big ? 20 : 0);
    hb->n = 0;
    tl_buf_append(hb, h, 30);
    tl_buf_append(hb, e->name, nl);
    if (e->big) {
        unsigned char x[20] = {0};
        le16(x, 1);
        le16(x + 2, 16);
        if (known) le64(x + 4, e->usize), le64(x + 12, e->csize);
        tl_buf_append(hb, x, 20);
    }
}

static int put_local_header(tl_zipw *z, const zentry *e, int known, tl_err *err)
{
    tl_buf hb = {0};
    local_header(&hb, e, known);
    int rc = put(z, hb.p, hb.n, err);
    tl_buf_free(&hb);
    return rc;
}

/* Entries placed by offset (tl_zipw_reserve, tl_zipw_put_at) bypass the
 * FILE buffer: it is flushed before the first of them, and the stream is
 * moved past the last before anything else is written. */
static int enter_direct(tl_zipw *z, tl_err *err)
{
    if (z->direct) return TL_OK;
    if (drain(z, err)) return err->code;
    if (fflush(z->f)) return tl_errf(err, TL_EIO, "%s: write failed: %s", z->path, strerror(errno));
    z->direct = 1;
    return TL_OK;
}

static int leave_direct(tl_zipw *z, tl_err *err)
{
    if (!z->direct) return TL_OK;
    z->direct = 0;
    if (fseeko(z->f, (off_t)z->pos, SEEK_SET)) return tl_errf(err, TL_EIO, "%s: seek failed: %s", z->path, strerror(errno));
    return TL_OK;
}

int tl_zipw_begin(tl_zipw *z, const char *name, int big, tl_err *err)
{
    if (drain(z, err) || leave_direct(z, err)) return err->code;
    zentry e = {tl_xstrdup(name), z->pos, 0, 0, 0, big};
    tl_vec_push(&z->ents, e);
    int rc = put_local_header(z, &z->ents.v[z->ents.n - 1], 0, err);
    if (rc) return rc;
    zdefl_init(&z->d, put_sink, z);
    return TL_OK;
}

/* ---- entries deflated apart (tl_zdef) */

static int buf_sink(void *ctx, const void *p, size_t n, tl_err *err)
{
    (void)err;
    tl_buf_append(ctx, p, n);
    return TL_OK;
}

tl_zdef *tl_zdef_new(const char *name)
{
    tl_zdef *d = tl_xcalloc(1, sizeof *d);
    d->name = tl_xstrdup(name);
    zdefl_init(&d->d, buf_sink, &d->data);
    return d;
}

int tl_zdef_write(tl_zdef *d, const void *p, size_t n, tl_err *err)
{
    return n ? deflate_block(&d->d, d->name, p, n, err) : TL_OK;
}

int tl_zdef_cut(tl_zdef *d, tl_err *err) { return zdefl_cut(&d->d, d->name, err); }

void tl_zdef_append(tl_zdef *d, tl_zdef *next)
{
    tl_buf_append(&d->data, next->data.p, next->data.n);
    d->d.crc = (uint32_t)crc32_combine(d->d.crc, next->d.crc, (z_off_t)next->d.usize);
    d->d.usize += next->d.usize;
    d->d.csize += next->d.csize;
    tl_zdef_free(next);
}

int tl_zdef_finish(tl_zdef *d, tl_err *err)
{
    d->d.zs.next_in = NULL;
    d->d.zs.avail_in = 0;
    int rc = pump(&d->d, d->name, 1, err);
    /* the deflate state is not needed any more: only the bytes wait */
    zdefl_free(&d->d);
    d->d.level_buf = d->d.out = NULL;
    return rc;
}

void tl_zdef_free(tl_zdef *d)
{
    if (!d) return;
    zdefl_free(&d->d);
    tl_buf_free(&d->data);
    free(d->name);
    free(d);
}

static int check_size(const tl_zipw *z, const tl_zdef *d, int big, tl_err *err)
{
    if (!big && (d->d.usize >= U32_MAX_ || d->d.csize >= U32_MAX_))
        return tl_errf(err, TL_EIO, "%s: %s: entry over 4 GiB without zip64 sizes", z->path, d->name);
    return TL_OK;
}

int tl_zipw_add_deflated(tl_zipw *z, const tl_zdef *d, int big, tl_err *err)
{
    if (drain(z, err) || leave_direct(z, err) || check_size(z, d, big, err)) return err->code;
    zentry e = {tl_xstrdup(d->name), z->pos, d->d.csize, d->d.usize, d->d.crc, big};
    tl_vec_push(&z->ents, e);
    int rc = put_local_header(z, &z->ents.v[z->ents.n - 1], 1, err);
    if (!rc) rc = put(z, d->data.p, d->data.n, err);
    return rc;
}

int tl_zipw_reserve(tl_zipw *z, const tl_zdef *d, int big, uint64_t *off, tl_err *err)
{
    if (enter_direct(z, err) || check_size(z, d, big, err)) return err->code;
    zentry e = {tl_xstrdup(d->name), z->pos, d->d.csize, d->d.usize, d->d.crc, big};
    tl_vec_push(&z->ents, e);
    *off = z->pos;
    z->pos += 30 + strlen(d->name) + (big ? 20 : 0) + d->data.n;
    return TL_OK;
}

/* pwrite of all n bytes at off */
static int write_at(const tl_zipw *z, const void *p, size_t n, uint64_t off, tl_err *err)
{
    const char *c = p;
    while (n) {
        ssize_t k = pwrite(fileno(z->f), c, n, (off_t)off);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) return tl_errf(err, TL_EIO, "%s: write failed: %s", z->path, k < 0 ? strerror(errno) : "no space");
        c += k, n -= (size_t)k, off += (uint64_t)k;
    }
    return TL_OK;
}

int tl_zipw_put_at(tl_zipw *z, const tl_zdef *d, int big, uint64_t off, tl_err *err)
{
    zentry e = {d->name, off, d->d.csize, d->d.usize, d->d.crc, big};
    tl_buf hb = {0};
    local_header(&hb, &e, 1);
    int rc = write_at(z, hb.p, hb.n, off, err);
    if (!rc) rc = write_at(z, d->data.p, d->data.n, off + hb.n, err);
    tl_buf_free(&hb);
    return rc;
}

/* runs the compressor over the pending input; with last, to the end */
static int pump(zdefl *d, const char *name, int last, tl_err *err)
{
    d->zs.end_of_stream = (uint16_t)last;
    do {
        int rc = deflate_round(d, name, err);
        if (rc) return rc;
    } while (d->zs.avail_in || (last && d->zs.internal_state.state != ZSTATE_END));
    return TL_OK;
}

/* on the compressor thread (or the caller's, while it idles), or on a
 * tl_zdef's thread */
static int deflate_block(zdefl *d, const char *name, const uint8_t *s, size_t n, tl_err *err)
{
    while (n) {
        uint32_t k = n > (1u << 30) ? 1u << 30 : (uint32_t)n; /* avail_in is 32-bit */
        d->crc = crc32_gzip_refl(d->crc, s, k);
        d->usize += k;
        d->zs.next_in = (uint8_t *)s;
        d->zs.avail_in = k;
        int rc = pump(d, name, 0, err);
        if (rc) return rc;
        s += k;
        n -= k;
    }
    return TL_OK;
}

/* Queues b for the compressor (a block of data it owns, or {NULL, 0}: cut
 * the segment), waiting for room; the compressor's first error, if any,
 * instead (b's data is then freed). */
static int enqueue(tl_zipw *z, zblock b, tl_err *err)
{
    pthread_mutex_lock(&z->mu);
    while (z->qn == QUEUE_BLOCKS) pthread_cond_wait(&z->cv, &z->mu);
    int failed = z->failed;
    if (!failed) {
        z->q[(z->qhead + z->qn) % QUEUE_BLOCKS] = b;
        z->qn++;
        pthread_cond_broadcast(&z->cv);
    }
    pthread_mutex_unlock(&z->mu);
    if (!failed) return TL_OK;
    free(b.p);
    *err = z->ferr;
    return err->code;
}

int tl_zipw_write(tl_zipw *z, const void *p, size_t n, tl_err *err)
{
    if (!n) return TL_OK;
    void *copy = tl_xmalloc(n);
    memcpy(copy, p, n);
    return enqueue(z, (zblock){copy, n}, err);
}

int tl_zipw_cut(tl_zipw *z, tl_err *err) { return enqueue(z, (zblock){NULL, 0}, err); }

int tl_zipw_end(tl_zipw *z, tl_err *err)
{
    if (drain(z, err)) return err->code;
    zentry *e = &z->ents.v[z->ents.n - 1];
    z->d.zs.next_in = NULL;
    z->d.zs.avail_in = 0;
    int rc = pump(&z->d, e->name, 1, err);
    if (rc) return rc;
    e->crc = z->d.crc;
    e->usize = z->d.usize;
    e->csize = z->d.csize;
    if (!e->big && (e->usize >= U32_MAX_ || e->csize >= U32_MAX_))
        return tl_errf(err, TL_EIO, "%s: %s: entry over 4 GiB without zip64 sizes", z->path, e->name);
    unsigned char f[12];
    le32(f, e->crc);
    le32(f + 4, e->big ? U32_MAX_ : (uint32_t)e->csize);
    le32(f + 8, e->big ? U32_MAX_ : (uint32_t)e->usize);
    if (fseeko(z->f, (off_t)(e->off + 14), SEEK_SET) || fwrite(f, 1, 12, z->f) != 12)
        return tl_errf(err, TL_EIO, "%s: write failed: %s", z->path, strerror(errno));
    if (e->big) {
        unsigned char x[16];
        le64(x, e->usize);
        le64(x + 8, e->csize);
        if (fseeko(z->f, (off_t)(e->off + 30 + strlen(e->name) + 4), SEEK_SET) || fwrite(x, 1, 16, z->f) != 16)
            return tl_errf(err, TL_EIO, "%s: write failed: %s", z->path, strerror(errno));
    }
    if (fseeko(z->f, (off_t)z->pos, SEEK_SET)) return tl_errf(err, TL_EIO, "%s: seek failed: %s", z->path, strerror(errno));
    return TL_OK;
}

/* central directory record of e: zip64 extra with the fields that need it */
static int put_central(tl_zipw *z, const zentry *e, tl_err *err)
{
    int zu = e->big || e->usize >= U32_MAX_, zc = e->big || e->csize >= U32_MAX_, zo = e->off >= U32_MAX_;
    unsigned char x[4 + 24];
    size_t xl = 0;
    if (zu || zc || zo) {
        xl = 4;
        if (zu) le64(x + xl, e->usize), xl += 8;
        if (zc) le64(x + xl, e->csize), xl += 8;
        if (zo) le64(x + xl, e->off), xl += 8;
        le16(x, 1);
        le16(x + 2, (unsigned)(xl - 4));
    }
    size_t nl = strlen(e->name);
    unsigned char h[46] = {0};
    le32(h, 0x02014b50);
    le16(h + 4, 45);
    le16(h + 6, xl || e->big ? 45 : 20);
    le16(h + 10, 8);
    le16(h + 14, 0x0021);
    le32(h + 16, e->crc);
    le32(h + 20, zc ? U32_MAX_ : (uint32_t)e->csize);
    le32(h + 24, zu ? U32_MAX_ : (uint32_t)e->usize);
    le16(h + 28, (unsigned)nl);
    le16(h + 30, (unsigned)xl);
    le32(h + 42, zo ? U32_MAX_ : (uint32_t)e->off);
    int rc = put(z, h, 46, err);
    if (!rc) rc = put(z, e->name, nl, err);
    if (!rc) rc = put(z, x, xl, err);
    return rc;
}

static void free_z(tl_zipw *z)
{
    if (z->started) {
        pthread_mutex_lock(&z->mu);
        z->stop = 1;
        pthread_cond_broadcast(&z->cv);
        pthread_mutex_unlock(&z->mu);
        tl_thread_join(z->thr);
    }
    for (size_t i = 0; i < z->qn; i++) free(z->q[(z->qhead + i) % QUEUE_BLOCKS].p);
    pthread_mutex_destroy(&z->mu);
    pthread_cond_destroy(&z->cv);
    for (size_t i = 0; i < z->ents.n; i++) free(z->ents.v[i].name);
    tl_vec_free(&z->ents);
    zdefl_free(&z->d);
    free(z->path);
    free(z);
}

int tl_zipw_close(tl_zipw *z, tl_err *err)
{
    int rc = drain(z, err);
    if (!rc) rc = leave_direct(z, err);
    uint64_t cd = z->pos, n = z->ents.n;
    for (size_t i = 0; i < n && !rc; i++) rc = put_central(z, &z->ents.v[i], err);
    uint64_t cds = z->pos - cd;
    int z64 = n >= 0xffff || cd >= U32_MAX_ || cds >= U32_MAX_;
    if (!rc && z64) {
        unsigned char r[56 + 20] = {0};
        le32(r, 0x06064b50);
        le64(r + 4, 44);
        le16(r + 12, 45);
        le16(r + 14, 45);
        le64(r + 24, n);
        le64(r + 32, n);
        le64(r + 40, cds);
        le64(r + 48, cd);
        le32(r + 56, 0x07064b50); /* locator */
        le64(r + 64, z->pos);
        le32(r + 72, 1);
        rc = put(z, r, sizeof r, err);
    }
    if (!rc) {
        unsigned char r[22] = {0};
        le32(r, 0x06054b50);
        le16(r + 8, z64 ? 0xffff : (unsigned)n);
        le16(r + 10, z64 ? 0xffff : (unsigned)n);
        le32(r + 12, z64 ? U32_MAX_ : (uint32_t)cds);
        le32(r + 16, z64 ? U32_MAX_ : (uint32_t)cd);
        rc = put(z, r, 22, err);
    }
    if (fclose(z->f) != 0 && !rc) rc = tl_errf(err, TL_EIO, "%s: write failed: %s", z->path, strerror(errno));
    free_z(z);
    return rc;
}

void tl_zipw_abort(tl_zipw *z)
{
    if (!z) return;
    drain(z, NULL);
    fclose(z->f);
    free_z(z);
}
