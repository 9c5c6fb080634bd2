/* source.c — input bytes for the scanners (see source.h).
 *
 * Plain files are mmap'd and handed over as one window; pages behind the
 * parser are dropped with MADV_DONTNEED so peak RSS stays small however
 * large the file. Gzip files (recognised by magic, not name) are inflated
 * with ISA-L (igzip) on a second thread into a small ring of blocks, so the
 * parser and the inflater run on two cores; the parser copies blocks into a
 * growable window that keeps only the bytes of the unit it is parsing.
 * ISA-L inflates faster than zlib here (bench/ingest compares them); both
 * are Debian packages. Multi-member gzip files are supported. */
#include "ingest/source.h"
#include "ingest/input_guard.h"

#include <errno.h>
#include <fcntl.h>
#include <isa-l/igzip_lib.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

/* The inflate ring: 4 x 256 KiB keeps the inflater ahead of the parser
 * (a hand-off per 256 KiB block costs nothing measurable against larger
 * blocks) while holding little memory: the ring and the parser's window
 * (two blocks and more) are most of a small trace's ingest memory, so
 * larger or more blocks show directly in its peak RSS. */
#define BLOCK_SIZE (1u << 18)
#define NBLOCKS 4
#define RELEASE_STEP (16u << 20)
/* The hasher keeps at most this much input mapped ahead of the parser
 * (or inflater); beyond it drops what it hashed, and the parser maps
 * those pages again. Bounds RSS whatever the file size. */
#define HASH_AHEAD (8u << 20)
#define HASH_DROP_STEP (8u << 20)
/* A plain file's release step (per parse part) scales with its size
 * between 1 MiB and RELEASE_STEP: with a fixed 16 MiB step a mid-sized
 * file parsed in two parts would hold a large share of its pages at once.
 * 1/64 of the file keeps the madvise calls (and their TLB shootdowns
 * across the parse threads) to ~64 per part. The hasher's window stays
 * HASH_AHEAD: scaling it too saves no memory and makes the parser
 * re-fault pages. */
#define RELEASE_FRACTION 64
#define RELEASE_MIN (1u << 20)
/* Slots for the parts of one mapped document parsed on other threads at
 * once (kineto_split.c); a closed part's slot is reused by a later part. */
#define MAX_PARTS 16

typedef struct block {
    char *data;
    size_t len;
} block;

struct tl_source {
    char *path;
    int fd;
    uint64_t fsize;
    unsigned char *map;
    int gz;
    int borrowed; /* map is caller memory (tl_source_open_mem) */
    int guard;    /* the map's input_guard slot, -1 none */
    struct timespec mtime; /* the file's modification time when opened */

    /* window over the decompressed stream (gzip only) */
    char *win;
    size_t win_len, win_cap;
    uint64_t win_base;
    int eof;

    /* inflater thread and its ring */
    tl_thread *thr;     /* NULL: none (a plain file) */
    pthread_mutex_t mu;
    pthread_cond_t cv;
    block ring[NBLOCKS];
    unsigned head, tail; /* head: next to consume; tail: next to fill */
    int done;            /* inflater finished (ok or error) */
    int stop;            /* consumer asks the inflater to quit */
    int gz_error;
    char gz_msg[256];
    uint64_t gz_err_in; /* compressed offset of the error */

    uint64_t out_bytes;
    tl_source_limits lim;
    uint64_t released;  /* plain: bytes dropped with MADV_DONTNEED */
    uint64_t release_step; /* plain: RELEASE_STEP scaled to the file */
    char *all;          /* tl_source_read_all buffer (gzip) */

    tl_progress_fn progress;
    void *progress_ctx;
    uint64_t progress_next;

    /* content hash (trace id): computed before opening returns
     * (tl_source_open), or on a thread beside the parser
     * (tl_source_open_async) so that hashing costs no parse time */
    uint64_t hash;
    tl_thread *hthr;    /* the hashing thread until joined, then NULL */
    int hthr_started;   /* the hash was computed on a thread */
    _Atomic uint64_t hashed;   /* file bytes hashed so far */
    _Atomic uint64_t consumed; /* file bytes the parser (plain) or inflater (gzip) has passed */
    atomic_int hash_done;
    tl_source_known_fn known;  /* "is this id stored already?" */
    void *known_ctx;
    int known_checked, known_abort;

    /* parallel parse (tl_source_part_open): the part in slot k (>= 1,
     * part_open[k] set) starts at part_start[k] and its parser has passed
     * part_pos[k]; the hasher keeps what lies just ahead of any open part,
     * and each part drops the pages behind it (part_released[k], touched
     * only by that part's thread while it runs). nparts: one past the
     * highest slot used so far. */
    atomic_int nparts;
    atomic_int part_open[MAX_PARTS];
    uint64_t part_start[MAX_PARTS];
    _Atomic uint64_t part_pos[MAX_PARTS];
    uint64_t part_released[MAX_PARTS];
    int max_parts; /* tl_source_set_parts; 0: automatic */
    size_t split_min; /* tl_source_set_split */
    int timing;
};

static int is_gzip(const unsigned char *p, uint64_t n) { return n >= 2 && p[0] == 0x1f && p[1] == 0x8b; }

/* A reader (parser, part, inflater) has passed `upto`: drops the mapped
 * pages from *released up to there, page-aligned, once a step's worth has
 * gathered, but never what the hasher has still to read. */
static void drop_behind(tl_source *s, uint64_t *released, uint64_t upto, uint64_t step)
{
    if (s->hthr_started && !atomic_load(&s->hash_done)) {
        uint64_t h = atomic_load(&s->hashed);
        if (h < upto) upto = h;
    }
    uint64_t end = upto & ~(uint64_t)4095;
    if (end < *released + step) return;
    madvise(s->map + *released, (size_t)(end - *released), MADV_DONTNEED);
    *released = end;
}

static void *inflate_thread(void *arg)
{
    tl_source *s = arg;
    struct inflate_state st;
    isal_inflate_init(&st);
    st.crc_flag = ISAL_GZIP;
    st.next_in = s->map;
    uint64_t in_left = s->fsize;
    uint64_t in_pos = 0, in_released = 0;
    uint64_t release_step = s->fsize / 4; /* a quarter of the file, within [64 KiB, RELEASE_STEP] */
    if (release_step > RELEASE_STEP) release_step = RELEASE_STEP;
    if (release_step < 65536) release_step = 65536;
    int err = 0;
    const char *msg = NULL;
    for (;;) {
        pthread_mutex_lock(&s->mu);
        while (s->tail - s->head == NBLOCKS && !s->stop) pthread_cond_wait(&s->cv, &s->mu);
        int stop = s->stop;
        pthread_mutex_unlock(&s->mu);
        if (stop) break;
        block *b = &s->ring[s->tail % NBLOCKS];
        if (!b->data) b->data = tl_xmalloc(BLOCK_SIZE);
        st.next_out = (uint8_t *)b->data;
        st.avail_out = BLOCK_SIZE;
        int finished_member = 0;
        while (st.avail_out > 0) {
            if (st.avail_in == 0 && in_left > 0) {
                uint32_t chunk = in_left > (1u << 30) ? (1u << 30) : (uint32_t)in_left;
                st.avail_in = chunk;
                in_left -= chunk;
            }
            uint32_t before_in = st.avail_in;
            int rc = isal_inflate(&st);
            in_pos += before_in - st.avail_in;
            atomic_store(&s->consumed, in_pos);
            /* Drop compressed pages already inflated: a large .gz would
             * otherwise stay resident in full (steps of a quarter of the
             * file at most, so small files are dropped too). */
            if (!s->borrowed) drop_behind(s, &in_released, in_pos, release_step);
            if (rc < 0) {
                err = 1;
                msg = rc == ISAL_INCORRECT_CHECKSUM ? "gzip CRC mismatch (corrupt data)"
                      : rc == ISAL_INVALID_WRAPPER  ? "invalid gzip header"
                                                    : "corrupt deflate data";
                break;
            }
            if (st.block_state == ISAL_BLOCK_FINISH) {
                /* End of one gzip member; another may follow. */
                finished_member = 1;
                uint64_t rest = st.avail_in + in_left;
                if (rest == 0) break;
                const unsigned char *nx = st.next_in;
                if (rest >= 2 && nx[0] == 0x1f && nx[1] == 0x8b) {
                    uint32_t avail = st.avail_in;
                    isal_inflate_reset(&st);
                    st.crc_flag = ISAL_GZIP;
                    st.next_in = (uint8_t *)nx;
                    st.avail_in = avail;
                    finished_member = 0;
                    continue;
                }
                err = 1;
                msg = "trailing garbage after gzip data";
                break;
            }
            if (st.avail_in == 0 && in_left == 0 && st.avail_out > 0) {
                err = 1;
                msg = "truncated gzip data (unexpected end of file)";
                break;
            }
        }
        size_t produced = BLOCK_SIZE - st.avail_out;
        pthread_mutex_lock(&s->mu);
        if (produced) {
            b->len = produced;
            s->tail++;
        }
        if (err) {
            s->gz_error = 1;
            snprintf(s->gz_msg, sizeof s->gz_msg, "%s", msg);
            s->gz_err_in = in_pos;
        }
        int end = err || (finished_member && st.avail_in == 0 && in_left == 0);
        if (end) s->done = 1;
        pthread_cond_broadcast(&s->cv);
        pthread_mutex_unlock(&s->mu);
        if (end) break;
    }
    pthread_mutex_lock(&s->mu);
    s->done = 1;
    pthread_cond_broadcast(&s->cv);
    pthread_mutex_unlock(&s->mu);
    return NULL;
}

/* Does [off, off+n) lie just ahead of a part's parser (so it reads it soon)? */
static int near_a_part(tl_source *s, uint64_t off, uint64_t n)
{
    int np = atomic_load(&s->nparts);
    for (int k = 1; k < np; k++) {
        if (!atomic_load(&s->part_open[k])) continue;
        uint64_t p = atomic_load(&s->part_pos[k]);
        if (off + n > p && off <= p + HASH_AHEAD) return 1;
    }
    return 0;
}

/* XXH3-64 of the raw file bytes (the trace id); the value does not depend
 * on the slice size. Run on its own thread by tl_source_open_async, or
 * directly before any reading by tl_source_open. Pages behind the parser
 * (plain) or inflater (gzip) are theirs to drop, and they never drop what
 * has not been hashed yet; what is hashed far ahead of them is dropped
 * here, so the file never becomes resident in full. */
static void *hash_thread(void *arg)
{
    tl_source *s = arg;
    XXH3_state_t *st = XXH3_createState();
    XXH3_64bits_reset(st);
    const uint64_t slice = 1u << 20;
    uint64_t drop = 0, ndrop = 0; /* hashed slices far ahead, not yet dropped */
    for (uint64_t off = 0; off < s->fsize; off += slice) {
        uint64_t n = s->fsize - off < slice ? s->fsize - off : slice;
        XXH3_64bits_update(st, s->map + off, (size_t)n);
        atomic_store(&s->hashed, off + n);
        /* Far ahead of the reader: drop the slice again, or the whole
         * file would become resident; HASH_DROP_STEP at a time, as each
         * drop is a TLB shootdown on every CPU running the process. */
        int far = !s->borrowed && off > atomic_load(&s->consumed) + HASH_AHEAD && !near_a_part(s, off, n);
        if (far) {
            if (!ndrop) drop = off;
            ndrop += n;
        }
        if (ndrop && (!far || ndrop >= HASH_DROP_STEP)) {
            madvise(s->map + drop, (size_t)ndrop, MADV_DONTNEED);
            ndrop = 0;
        }
    }
    if (ndrop) madvise(s->map + drop, (size_t)ndrop, MADV_DONTNEED);
    s->hash = XXH3_64bits_digest(st);
    XXH3_freeState(st);
    atomic_store(&s->hash_done, 1);
    return NULL;
}

static uint64_t plain_release_step(uint64_t fsize)
{
    uint64_t w = fsize / RELEASE_FRACTION;
    return w < RELEASE_MIN ? RELEASE_MIN : w > RELEASE_STEP ? RELEASE_STEP : w;
}

static int open_common(const char *path, tl_source **out, uint64_t *id, int async, tl_err *err)
{
    *out = NULL;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return tl_errf(err, TL_EIO, "%s: cannot open: %s", path, strerror(errno));
    struct stat st;
    if (fstat(fd, &st) != 0) {
        close(fd);
        return tl_errf(err, TL_EIO, "%s: cannot stat: %s", path, strerror(errno));
    }
    if (S_ISDIR(st.st_mode)) {
        close(fd);
        return tl_errf(err, TL_EIO, "%s: is a directory", path);
    }
    tl_source *s = tl_xcalloc(1, sizeof *s);
    s->path = tl_xstrdup(path);
    s->fd = fd;
    s->fsize = (uint64_t)st.st_size;
    s->mtime = st.st_mtim;
    s->guard = -1;
    if (s->fsize > 0) {
        s->map = mmap(NULL, s->fsize, PROT_READ, MAP_SHARED, fd, 0);
        if (s->map == MAP_FAILED) {
            int e = errno;
            close(fd);
            free(s->path);
            free(s);
            return tl_errf(err, TL_EIO, "%s: cannot map: %s", path, strerror(e));
        }
        madvise(s->map, s->fsize, MADV_SEQUENTIAL);
        s->guard = tl_input_guard_add(s->map, s->fsize);
    }
    s->gz = is_gzip(s->map, s->fsize);
    s->release_step = plain_release_step(s->fsize);
    if (async) {
        if ((s->hthr = tl_thread_start(hash_thread, s)) != NULL) s->hthr_started = 1;
        else hash_thread(s);
    } else {
        hash_thread(s);
        if (id) *id = s->hash;
    }
    pthread_mutex_init(&s->mu, NULL);
    pthread_cond_init(&s->cv, NULL);
    if (s->gz) {
        if (!(s->thr = tl_thread_start(inflate_thread, s))) {
            tl_source_close(s);
            return tl_errf(err, TL_EIO, "%s: cannot start the inflate thread", path);
        }
    }
    *out = s;
    return TL_OK;
}

int tl_source_open(const char *path, tl_source **out, uint64_t *id, tl_err *err)
{
    return open_common(path, out, id, 0, err);
}

int tl_source_open_async(const char *path, tl_source **out, tl_err *err)
{
    return open_common(path, out, NULL, 1, err);
}

uint64_t tl_source_id(tl_source *s)
{
    if (s->hthr) {
        tl_thread_join(s->hthr);
        s->hthr = NULL;
    }
    return s->hash;
}

void tl_source_set_known(tl_source *s, tl_source_known_fn fn, void *ctx)
{
    s->known = fn;
    s->known_ctx = ctx;
}

/* Once the hash is ready, asks whether the trace is stored already; then
 * the parse can stop early. Returns TL_EEXIST to stop, else 0. */
static int check_known(tl_source *s)
{
    if (s->known_abort) return TL_EEXIST;
    if (s->known_checked || !s->known || !s->hthr_started || !atomic_load(&s->hash_done)) return 0;
    s->known_checked = 1;
    if (s->known(s->known_ctx, tl_source_id(s))) s->known_abort = 1;
    return s->known_abort ? TL_EEXIST : 0;
}

int tl_source_open_mem(const void *buf, size_t n, const char *name, tl_source **out, tl_err *err)
{
    tl_source *s = tl_xcalloc(1, sizeof *s);
    s->path = tl_xstrdup(name ? name : "<memory>");
    s->fd = -1;
    s->fsize = n;
    s->map = (unsigned char *)buf;
    s->borrowed = 1;
    s->guard = -1;
    s->gz = is_gzip(s->map, s->fsize);
    pthread_mutex_init(&s->mu, NULL);
    pthread_cond_init(&s->cv, NULL);
    if (s->gz) {
        if (!(s->thr = tl_thread_start(inflate_thread, s))) {
            tl_source_close(s);
            return tl_errf(err, TL_EIO, "%s: cannot start the inflate thread", s->path);
        }
    }
    *out = s;
    return TL_OK;
}

void tl_source_close(tl_source *s)
{
    if (!s) return;
    tl_source_id(s); /* joins the hashing thread */
    if (s->thr) {
        pthread_mutex_lock(&s->mu);
        s->stop = 1;
        pthread_cond_broadcast(&s->cv);
        pthread_mutex_unlock(&s->mu);
        tl_thread_join(s->thr);
    }
    for (int i = 0; i < NBLOCKS; i++) free(s->ring[i].data);
    pthread_mutex_destroy(&s->mu);
    pthread_cond_destroy(&s->cv);
    tl_input_guard_remove(s->guard);
    if (s->map && s->map != MAP_FAILED && !s->borrowed) munmap(s->map, s->fsize);
    if (s->fd >= 0) close(s->fd);
    free(s->win);
    free(s->all);
    free(s->path);
    free(s);
}

int tl_source_unchanged(tl_source *s, tl_err *err)
{
    if (s->fd < 0) return TL_OK;
    tl_source_id(s); /* the hashing thread is done reading */
    struct stat st;
    if (fstat(s->fd, &st) != 0) memset(&st, 0, sizeof st);
    uint64_t fault = tl_input_guard_fault(s->guard);
    if (fault == UINT64_MAX && (uint64_t)st.st_size == s->fsize && st.st_mtim.tv_sec == s->mtime.tv_sec &&
        st.st_mtim.tv_nsec == s->mtime.tv_nsec)
        return TL_OK;
    uint64_t end = (uint64_t)st.st_size > fault ? fault : (uint64_t)st.st_size; /* first byte lost */
    if (end < s->fsize)
        return tl_errf(err, TL_EIO,
                       "%s: the file shrank while it was read (%llu bytes when opened, %llu now; no data at byte "
                       "%llu): nothing of it was stored",
                       s->path, (unsigned long long)s->fsize, (unsigned long long)st.st_size,
                       (unsigned long long)end);
    return tl_errf(err, TL_EIO, "%s: the file changed while it was read (%llu bytes when opened, %llu now): nothing "
                   "of it was stored", s->path, (unsigned long long)s->fsize, (unsigned long long)st.st_size);
}

int tl_source_is_gzip(const tl_source *s) { return s->gz; }
uint64_t tl_source_file_size(const tl_source *s) { return s->fsize; }
uint64_t tl_source_bytes_out(const tl_source *s) { return s->gz ? s->out_bytes : s->fsize; }

void tl_source_set_progress(tl_source *s, tl_progress_fn fn, void *ctx)
{
    s->progress = fn;
    s->progress_ctx = ctx;
}

int tl_source_set_limits(tl_source *s, const tl_source_limits *l, tl_err *err)
{
    s->lim = *l;
    if (!s->gz && l->max_bytes && s->fsize > l->max_bytes)
        return tl_errf(err, TL_EFORMAT, "%s: byte %llu: the file is larger than the input limit of %llu bytes "
                       "(--max-input-bytes / TRACELENS_MAX_INPUT_BYTES)", s->path,
                       (unsigned long long)l->max_bytes, (unsigned long long)l->max_bytes);
    return 0;
}

/* Would a stream grown to `out` bytes exceed the limits? Sets the error. */
static int over_limits(tl_source *s, uint64_t out, tl_err *err)
{
    const tl_source_limits *l = &s->lim;
    uint64_t in = atomic_load(&s->consumed);
    if (l->max_bytes && out > l->max_bytes)
        return tl_errf(err, TL_EFORMAT, "%s: byte %llu of the decompressed stream (byte %llu of the file): "
                       "inflates to more than the input limit of %llu bytes "
                       "(--max-input-bytes / TRACELENS_MAX_INPUT_BYTES)", s->path,
                       (unsigned long long)s->out_bytes, (unsigned long long)in, (unsigned long long)l->max_bytes);
    uint64_t ratio_cap;
    if (l->max_ratio && out > l->ratio_floor &&
        (__builtin_mul_overflow(s->fsize, l->max_ratio, &ratio_cap) ? 0 : out > ratio_cap))
        return tl_errf(err, TL_EFORMAT, "%s: byte %llu of the decompressed stream (byte %llu of the file): "
                       "inflates more than %llu\u00d7 its size (a gzip bomb?); "
                       "--max-input-bytes / TRACELENS_MAX_RATIO raise the limits", s->path,
                       (unsigned long long)s->out_bytes, (unsigned long long)in, (unsigned long long)l->max_ratio);
    return 0;
}

/* Moves the next inflated block into the window. 0 ok, 1 no more, <0 error. */
static int pull_block(tl_source *s, tl_err *err)
{
    pthread_mutex_lock(&s->mu);
    while (s->head == s->tail && !s->done) pthread_cond_wait(&s->cv, &s->mu);
    if (s->head == s->tail) {
        int e = s->gz_error;
        pthread_mutex_unlock(&s->mu);
        if (e)
            return tl_errf(err, TL_EFORMAT, "%s: byte %llu of the compressed file: %s", s->path,
                           (unsigned long long)s->gz_err_in, s->gz_msg);
        return 1;
    }
    block *b = &s->ring[s->head % NBLOCKS];
    pthread_mutex_unlock(&s->mu);
    int lrc = over_limits(s, s->out_bytes + b->len, err);
    if (lrc) return lrc;
    if (s->win_len + b->len > s->win_cap) {
        size_t nc = s->win_cap ? s->win_cap : (size_t)BLOCK_SIZE * 2;
        while (nc < s->win_len + b->len) nc *= 2;
        s->win = tl_xrealloc(s->win, nc + 64);
        s->win_cap = nc;
    }
    memcpy(s->win + s->win_len, b->data, b->len);
    s->win_len += b->len;
    s->out_bytes += b->len;
    pthread_mutex_lock(&s->mu);
    s->head++;
    pthread_cond_broadcast(&s->cv);
    pthread_mutex_unlock(&s->mu);
    if (s->progress && s->out_bytes >= s->progress_next) {
        s->progress(s->progress_ctx, s->fsize ? (uint64_t)((double)s->out_bytes) : 0, 0);
        s->progress_next = s->out_bytes + (32u << 20);
    }
    return 0;
}

int tl_source_window(tl_source *s, uint64_t keep, const char **buf, size_t *len, uint64_t *base,
                     int *eof, tl_err *err)
{
    if (!s->gz) {
        *buf = (const char *)s->map;
        *len = (size_t)s->fsize;
        *base = 0;
        *eof = 1;
        return 0;
    }
    int krc = check_known(s);
    if (krc) return krc;
    /* Drop what is before keep, then append at least one block. */
    if (keep > s->win_base) {
        size_t drop = (size_t)(keep - s->win_base);
        if (drop > s->win_len) drop = s->win_len;
        memmove(s->win, s->win + drop, s->win_len - drop);
        s->win_len -= drop;
        s->win_base += drop;
    }
    size_t target = s->win_len + (s->win_len ? s->win_len : 1);
    while (!s->eof && s->win_len < target) {
        int rc = pull_block(s, err);
        if (rc < 0) return rc;
        if (rc == 1) s->eof = 1;
    }
    *buf = s->win ? s->win : "";
    *len = s->win_len;
    *base = s->win_base;
    *eof = s->eof;
    return 0;
}

int tl_source_release(tl_source *s, uint64_t upto)
{
    int krc = check_known(s);
    if (krc) return krc;
    if (s->gz || !s->map || s->borrowed) return 0;
    atomic_store(&s->consumed, upto);
    if (s->progress && upto >= s->progress_next) {
        uint64_t done = upto; /* plus what the other parts have parsed */
        for (int k = 1; k < atomic_load(&s->nparts); k++)
            if (atomic_load(&s->part_open[k])) done += atomic_load(&s->part_pos[k]) - s->part_start[k];
        s->progress(s->progress_ctx, done, s->fsize);
        s->progress_next = upto + (32u << 20);
    }
    drop_behind(s, &s->released, upto, s->release_step);
    return 0;
}

void tl_source_set_parts(tl_source *s, int n) { s->max_parts = n; }

void tl_source_set_split(tl_source *s, size_t min_part, int timing)
{
    s->split_min = min_part;
    s->timing = timing;
}

size_t tl_source_split_min(const tl_source *s) { return s->split_min; }

int tl_source_timing(const tl_source *s) { return s->timing; }

int tl_source_parts_allowed(const tl_source *s)
{
    if (s->gz) return 1;
    int n = s->max_parts > 0 ? s->max_parts : tl_cpus_allowed();
    if (n > MAX_PARTS - 1) n = MAX_PARTS - 1; /* slot 0 is the main parser's */
    return n < 1 ? 1 : n;
}

int tl_source_part_open(tl_source *s, uint64_t start)
{
    if (s->gz || start > s->fsize) return -1;
    int k = 1; /* slot 0 is the main parser */
    while (k < MAX_PARTS && atomic_load(&s->part_open[k])) k++;
    if (k >= MAX_PARTS) return -1;
    s->part_start[k] = start;
    atomic_store(&s->part_pos[k], start);
    /* never drop the page holding the part's first byte: the part before
     * it may still have to read the bytes before start on that page */
    s->part_released[k] = (start + 4095) & ~(uint64_t)4095;
    atomic_store(&s->part_open[k], 1);
    if (atomic_load(&s->nparts) < k + 1) atomic_store(&s->nparts, k + 1);
    return k;
}

void tl_source_part_release(tl_source *s, int k, uint64_t upto)
{
    if (k <= 0 || k >= MAX_PARTS || !atomic_load(&s->part_open[k])) return;
    atomic_store(&s->part_pos[k], upto);
    if (s->gz || !s->map || s->borrowed) return;
    drop_behind(s, &s->part_released[k], upto, s->release_step);
}

void tl_source_part_close(tl_source *s, int k)
{
    if (k <= 0 || k >= MAX_PARTS || !atomic_load(&s->part_open[k])) return;
    /* what the part read since its last step would otherwise stay
     * resident for the rest of the parse, a step for every part */
    if (!s->gz && s->map && !s->borrowed) drop_behind(s, &s->part_released[k], atomic_load(&s->part_pos[k]), 0);
    atomic_store(&s->part_open[k], 0);
}

size_t tl_source_peek(tl_source *s, const char **p, size_t n, tl_err *err)
{
    if (!s->gz) {
        *p = (const char *)s->map;
        return s->fsize < n ? (size_t)s->fsize : n;
    }
    while (s->win_len < n && !s->eof) {
        int rc = pull_block(s, err);
        if (rc < 0) {
            *p = s->win ? s->win : "";
            return s->win_len;
        }
        if (rc == 1) s->eof = 1;
    }
    *p = s->win ? s->win : "";
    return s->win_len < n ? s->win_len : n;
}

int tl_source_read_all(tl_source *s, const char **buf, size_t *len, tl_err *err)
{
    if (!s->gz) {
        *buf = (const char *)s->map;
        *len = (size_t)s->fsize;
        return 0;
    }
    while (!s->eof) {
        int rc = pull_block(s, err);
        if (rc < 0) return rc;
        if (rc == 1) s->eof = 1;
    }
    *buf = s->win ? s->win : "";
    *len = s->win_len;
    return 0;
}
