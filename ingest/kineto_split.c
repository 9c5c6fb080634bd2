/* kineto_split.c — the elements of a Kineto traceEvents array, parsed on
 * this thread or, for a large mapped document, on several (a single trace
 * otherwise parses on one core).
 *
 * The array is cut into parts of a bounded size at guessed element
 * boundaries: from each cut point the text is scanned forward for "}" ","
 * "{" followed by a known event key, and a thread parses from that '{'
 * into a shard builder of its own. The parts run as a pipeline on N
 * worker threads (one per allowed core; worker w parses parts w + 1,
 * w + 1 + N, ...): at most N parts are in flight, since a part's rows are
 * held until it is joined, and part i + N starts only once the main
 * parser has joined (or discarded) and freed part i. So the memory the
 * parts hold is bounded whatever the document's size; a worker reuses
 * its own malloc arena part after part.
 * A guess can be wrong (the same text can occur inside args or a string),
 * so none is trusted: the main parser, which reads from the true start of
 * the array, joins the next part only when one of its own elements starts
 * exactly at that part's first byte, and each joined part joins the next
 * one the same way. A part nobody joins is discarded (the parser that went
 * past its start reads that text itself). A part also stops at the first
 * element past twice the part size from its start (the main parser, once
 * it has joined it, reads on from there), so that wrong guesses in a row
 * cannot make one part hold the rest of the document. The result — events, their
 * order, errors and the byte offsets in them — is therefore the serial
 * parse's, whatever the guesses were; only the time differs. */
#include "ingest/kineto_internal.h"

#include <pthread.h>
#include <stdio.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

/* A document is cut into parts when it holds at least two parts of
 * MIN_PART_BYTES (about 40 ms of parsing each); the parts are the document
 * cut evenly over the threads, but no larger than MAX_PART_BYTES, which
 * bounds what a part holds until it is joined (its rows at ~90 bytes an
 * event, its args text and its own dictionary: ~50 MB for 64 MiB of
 * tracegen JSON) and so the parse's memory.
 * TRACELENS_SPLIT_MIN sets the part size itself (tests cut small files
 * into many parts). */
#define MIN_PART_BYTES ((size_t)32 << 20)
#define MAX_PART_BYTES ((size_t)64 << 20)

/* A part's end: it stopped at its byte cap, at the start of an element. */
#define LINK_CAPPED (-2)

typedef struct part {
    int src_part;        /* its tl_source_part_open slot while it runs, or -1 */
    tl_json j;
    tl_err err;
    kreader k;
    atomic_int cancel;   /* nobody will join it: stop early, or never start */
    int done;            /* its worker is finished with it (under pl->mu) */
    int rc;
    int link;            /* the part it reached the start of, -1 (it reached ']') or
                            LINK_CAPPED */
} part;

/* The parts of one document and the workers that parse them. */
typedef struct pipeline {
    kreader *main;       /* the main parser: its document and source */
    part *parts;         /* [1, nstarts) */
    const uint64_t *starts;
    int nstarts, slots;
    uint64_t cap;        /* a part stops at the first element this far past its start */
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int freed;           /* parts 1..freed are joined or discarded and freed */
    int stop;
} pipeline;

/* The size of the parts of a document whose elements start at j->pos,
 * or 0 when it is parsed on this thread alone. */
static size_t part_bytes(kreader *k)
{
    tl_json *j = k->j;
    /* the whole document must be in one window that never moves */
    if (!k->src || !j->eof || j->base != 0) return 0;
    int n = tl_source_parts_allowed(k->src);
    size_t rest = j->len - j->pos, forced = tl_source_split_min(k->src);
    if (n < 2) return 0;
    if (forced > 0) return rest >= 2 * forced ? forced : 0;
    if (rest < 2 * MIN_PART_BYTES) return 0;
    size_t even = rest / (size_t)n;
    return even < MIN_PART_BYTES ? MIN_PART_BYTES : even > MAX_PART_BYTES ? MAX_PART_BYTES : even;
}

static int is_ws(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }

/* Does b[p..] start with a quoted key that Kineto events have? */
static int event_key_at(const char *b, size_t p, size_t len)
{
    static const char *const keys[] = {"ph", "cat", "name", "pid", "tid", "ts", "dur", "args", "id", "s", "bp"};
    if (p >= len || b[p] != '"') return 0;
    for (size_t i = 0; i < sizeof keys / sizeof *keys; i++) {
        size_t n = strlen(keys[i]);
        if (p + n + 2 <= len && memcmp(b + p + 1, keys[i], n) == 0 && b[p + 1 + n] == '"') return 1;
    }
    return 0;
}

/* The first '{' in [from, limit) that looks like the start of an array
 * element: after "}" ws "," ws, and followed by ws and an event key.
 * Returns its offset, or 0 when there is none. */
static size_t guess_start(const char *b, size_t len, size_t from, size_t limit)
{
    if (limit > len) limit = len;
    for (size_t p = from; p < limit;) {
        const char *c = memchr(b + p, '}', limit - p);
        if (!c) return 0;
        size_t q = (size_t)(c - b) + 1;
        p = q;
        while (q < len && is_ws(b[q])) q++;
        if (q >= len || b[q] != ',') continue;
        q++;
        while (q < len && is_ws(b[q])) q++;
        if (q >= len || b[q] != '{') continue;
        size_t open = q++;
        while (q < len && is_ws(b[q])) q++;
        if (event_key_at(b, q, len)) return open;
    }
    return 0;
}

/* Parses elements from j->pos (first: right after '[' or at a part's
 * first '{') until ']' (*link = -1), until an element starts exactly at
 * starts[m] for some m >= from (*link = m), or, with stop_at > 0, until
 * an element starts at or past stop_at (*link = LINK_CAPPED, j->pos at
 * that element). The main parser releases its pages through the source
 * (which may stop it: trace stored already); a part through its own
 * cursor, and it stops when cancelled. */
static int run_elements(kreader *k, int first, const uint64_t *starts, int nstarts, int from, int *link,
                        atomic_int *cancel, int src_part, part *parts, uint64_t stop_at)
{
    tl_json *j = k->j;
    int rc, more = 1, m = from;
    for (;;) {
        if ((rc = tl_json_arr_next_stream(j, &first, &more))) return rc;
        if (!more) {
            *link = -1;
            return 0;
        }
        while (m < nstarts && starts[m] < j->pos) {
            /* the main parser went past part m's start: nobody can join
             * that part any more */
            if (parts) atomic_store(&parts[m].cancel, 1);
            m++;
        }
        if (m < nstarts && starts[m] == j->pos) {
            *link = m;
            return 0;
        }
        if (stop_at && j->pos >= stop_at) {
            *link = LINK_CAPPED;
            return 0;
        }
        /* the element is the restartable unit */
        size_t mark = j->pos;
        while ((rc = tl_kineto_event(k)) == TL_JNEED) {
            if ((rc = tl_json_refill(j, mark))) return rc;
            mark = j->pos;
        }
        if (rc) return rc;
        if ((k->uid & 0xfff) == 0) {
            if (!cancel) {
                if ((rc = tl_json_release(j))) return rc;
            } else {
                tl_source_part_release(k->src, src_part, j->base + j->pos);
                if (atomic_load(cancel)) return TL_EEXIST; /* discarded */
            }
        }
    }
}

/* Parses part i into a shard builder of its own, on this worker. */
static void part_parse(pipeline *pl, int i)
{
    kreader *mk = pl->main;
    part *p = &pl->parts[i];
    p->link = -1;
    tl_json_init_buf(&p->j, mk->j->buf, mk->j->len, mk->j->file, &p->err);
    p->j.pos = (size_t)pl->starts[i];
    tl_build *b = tl_build_new_shard();
    if (tl_build_selects_args(mk->b)) tl_build_select_args(b);
    tl_kreader_init(&p->k, &p->j, b, mk->src);
    p->rc = run_elements(&p->k, 1, pl->starts, pl->nstarts, i + 1, &p->link, &p->cancel, p->src_part, NULL,
                         pl->starts[i] + pl->cap);
}

typedef struct worker_arg {
    pipeline *pl;
    int first;           /* its first part */
    tl_thread *thr;
} worker_arg;

/* Worker: parts first, first + slots, ...; each starts once the part
 * `slots` before it is freed, unless nobody can join it any more (then it
 * is only marked done). */
static void *worker(void *arg)
{
    worker_arg *wa = arg;
    pipeline *pl = wa->pl;
    for (int i = wa->first; i < pl->nstarts; i += pl->slots) {
        part *p = &pl->parts[i];
        pthread_mutex_lock(&pl->mu);
        while (!pl->stop && pl->freed < i - pl->slots) pthread_cond_wait(&pl->cv, &pl->mu);
        int run = !pl->stop && !atomic_load(&p->cancel);
        if (run) p->src_part = tl_source_part_open(pl->main->src, pl->starts[i]);
        pthread_mutex_unlock(&pl->mu);
        if (run) part_parse(pl, i);
        /* its pages up to where it stopped are dropped, its slot freed */
        if (p->src_part > 0) tl_source_part_close(pl->main->src, p->src_part);
        pthread_mutex_lock(&pl->mu);
        p->src_part = -1;
        p->done = 1;
        pthread_cond_broadcast(&pl->cv);
        int stop = pl->stop;
        pthread_mutex_unlock(&pl->mu);
        if (stop) break;
    }
    return NULL;
}

/* Waits until part i's worker is finished with it. */
static void part_wait(pipeline *pl, int i)
{
    pthread_mutex_lock(&pl->mu);
    while (!pl->parts[i].done) pthread_cond_wait(&pl->cv, &pl->mu);
    pthread_mutex_unlock(&pl->mu);
}

/* Frees part i (joined and appended, or discarded) and lets the part
 * `slots` further on start. */
static void part_free(pipeline *pl, int i)
{
    part *p = &pl->parts[i];
    if (p->k.b) tl_build_free(p->k.b);
    tl_kreader_free(&p->k);
    p->k.b = NULL;
    pthread_mutex_lock(&pl->mu);
    pl->freed = i;
    pthread_cond_broadcast(&pl->cv);
    pthread_mutex_unlock(&pl->mu);
}

/* The parts' first bytes: starts[0] = j->pos (the main parser's), then
 * a guessed element start near every `step` bytes. */
static uint64_t *part_starts(const tl_json *j, size_t step, int *nstarts)
{
    size_t cap = (j->len - j->pos) / step + 1, n = 1;
    uint64_t *starts = tl_xmalloc(cap * sizeof *starts);
    starts[0] = j->pos;
    for (size_t at = j->pos + step; at < j->len && n < cap; at += step) {
        if (at <= starts[n - 1]) continue;
        size_t g = guess_start(j->buf, j->len, at, at + step / 2);
        if (g > starts[n - 1]) starts[n++] = g;
    }
    *nstarts = (int)n;
    return starts;
}

/* Follows the chain of parts that joined, from `link` (the main parser's
 * status rc): each is appended as if the main parser had read it; after a
 * part that stopped at its cap the main parser reads on from its end to
 * the next part's start; parts skipped over are discarded. Returns the
 * status and the parts joined and capped. */
static int join_parts(pipeline *pl, int rc, int link, int *joined, int *capped)
{
    kreader *k = pl->main;
    tl_json *j = k->j;
    int cur = rc ? -1 : link;
    for (int i = 1; i < pl->nstarts; i++) {
        part *p = &pl->parts[i];
        if (i != cur) atomic_store(&p->cancel, 1);
        part_wait(pl, i);
        if (i == cur && p->rc) {
            *j->err = p->err;
            rc = p->rc;
            cur = -1;
        } else if (i == cur) {
            tl_build_append(k->b, p->k.b, k->uid);
            ++*joined;
            k->uid += p->k.uid;
            j->pos = p->j.pos;
            cur = p->link;
            /* what the part read counts as read (page release, progress,
             * and the stop when the trace is stored already) */
            if ((rc = tl_json_release(j))) cur = -1;
            if (cur == LINK_CAPPED) {
                ++*capped;
                rc = run_elements(k, 1, pl->starts, pl->nstarts, i + 1, &cur, NULL, 0, pl->parts, 0);
                if (rc) cur = -1;
            }
        }
        part_free(pl, i);
    }
    return rc;
}

static int split_events(kreader *k, size_t step)
{
    pipeline pl = {.main = k, .slots = tl_source_parts_allowed(k->src), .cap = 2 * (uint64_t)step};
    uint64_t *starts = part_starts(k->j, step, &pl.nstarts);
    pl.starts = starts;
    if (pl.slots > pl.nstarts - 1) pl.slots = pl.nstarts - 1;
    pl.parts = tl_xcalloc((size_t)pl.nstarts, sizeof *pl.parts);
    for (int i = 1; i < pl.nstarts; i++) pl.parts[i].src_part = -1;
    pthread_mutex_init(&pl.mu, NULL);
    pthread_cond_init(&pl.cv, NULL);
    worker_arg *wa = tl_xcalloc((size_t)pl.slots, sizeof *wa);
    int nw = 0;
    for (; nw < pl.slots; nw++) {
        wa[nw] = (worker_arg){.pl = &pl, .first = nw + 1};
        if (!(wa[nw].thr = tl_thread_start(worker, &wa[nw]))) break;
    }
    int rc = 0, link = -1, joined = 1, capped = 0;
    double t0 = tl_now(), t1 = t0;
    if (nw == pl.slots) {
        rc = run_elements(k, 1, starts, pl.nstarts, 1, &link, NULL, 0, pl.parts, 0);
        t1 = tl_now();
        rc = join_parts(&pl, rc, link, &joined, &capped);
    } else { /* a worker failed to start: its parts would never run */
        pthread_mutex_lock(&pl.mu);
        pl.stop = 1;
        pthread_cond_broadcast(&pl.cv);
        pthread_mutex_unlock(&pl.mu);
    }
    for (int w = 0; w < nw; w++) tl_thread_join(wa[w].thr);
    for (int i = 1; i < pl.nstarts; i++) /* only after a failed start */
        if (pl.parts[i].k.b) part_free(&pl, i);
    if (nw < pl.slots) rc = run_elements(k, 1, NULL, 0, 0, &link, NULL, 0, NULL, 0);
    free(wa);
    free(pl.parts);
    free(starts);
    pthread_cond_destroy(&pl.cv);
    pthread_mutex_destroy(&pl.mu);
    /* the workers' malloc arenas keep a part's worth of memory each once
     * the parts are freed (~70 MB on tracegen 4G); hand it back before
     * the rest of the ingest builds on top */
    tl_heap_trim();
    if (tl_source_timing(k->src))
        fprintf(stderr,
                "timing: split into %d parts, %d joined, %d at once, %d stopped at their cap; first part %.3f s, "
                "the rest joined after %.3f s\n",
                pl.nstarts, joined, pl.slots, capped, t1 - t0, tl_now() - t1);
    return rc;
}

int tl_kineto_events(kreader *k)
{
    size_t step = part_bytes(k);
    if (step > 0) return split_events(k, step);
    int link;
    return run_elements(k, 1, NULL, 0, 0, &link, NULL, 0, NULL, 0);
}
