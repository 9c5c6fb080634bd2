/* map.c — the hash maps of base.h: string keys (tl_smap), integer keys
 * (tl_imap), keys the caller stores (tl_hidx), fixed-size binary keys
 * (tl_bmap); allocation and growth. */
#include "base/base.h"

#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <xxhash.h>

/* Capacity for hint keys at most half full: a power of two, at least 64. */
static size_t map_cap(size_t hint)
{
    size_t cap = 64;
    while (cap < hint * 2) cap *= 2;
    return cap;
}

/* ---- string keys ---------------------------------------------------------- */

void tl_smap_init(tl_smap *m, size_t hint)
{
    m->cap = map_cap(hint);
    m->keys = tl_xcalloc(m->cap, sizeof *m->keys);
    m->hashes = tl_xmalloc(m->cap * sizeof *m->hashes);
    m->vals = tl_xmalloc(m->cap * sizeof *m->vals);
    m->n = 0;
}

void tl_smap_free(tl_smap *m)
{
    free(m->keys);
    free(m->hashes);
    free(m->vals);
    memset(m, 0, sizeof *m);
}

/* Doubles the capacity (a zeroed map gets its first 64 slots); the stored
 * hashes place the keys without rehashing their text. */
void tl_smap_grow(tl_smap *m)
{
    tl_smap o = *m;
    tl_smap_init(m, o.cap);
    size_t mask = m->cap - 1;
    for (size_t i = 0; i < o.cap; i++) {
        if (!o.keys[i]) continue;
        size_t j = o.hashes[i] & mask;
        while (m->keys[j]) j = (j + 1) & mask;
        m->keys[j] = o.keys[i];
        m->hashes[j] = o.hashes[i];
        m->vals[j] = o.vals[i];
    }
    m->n = o.n;
    free(o.keys);
    free(o.hashes);
    free(o.vals);
}

/* ---- keys stored by the caller -------------------------------------------- */

void tl_hidx_init(tl_hidx *x, size_t hint)
{
    x->cap = map_cap(hint);
    x->ids = tl_xcalloc(x->cap, sizeof *x->ids);
    x->hashes = tl_xmalloc(x->cap * sizeof *x->hashes);
    x->n = 0;
}

void tl_hidx_free(tl_hidx *x)
{
    free(x->ids);
    free(x->hashes);
    memset(x, 0, sizeof *x);
}

void tl_hidx_grow(tl_hidx *x)
{
    tl_hidx o = *x;
    tl_hidx_init(x, o.cap);
    for (size_t i = 0; i < o.cap; i++) {
        if (!o.ids[i]) continue;
        size_t j = tl_hidx_home(x, o.hashes[i]);
        while (x->ids[j]) j = tl_hidx_next(x, j);
        x->ids[j] = o.ids[i];
        x->hashes[j] = o.hashes[i];
    }
    x->n = o.n;
    free(o.ids);
    free(o.hashes);
}

/* ---- integer keys --------------------------------------------------------- */

void tl_imap_init(tl_imap *m, size_t hint)
{
    m->cap = map_cap(hint);
    m->keys = tl_xmalloc(m->cap * sizeof *m->keys);
    m->vals = tl_xmalloc(m->cap * sizeof *m->vals);
    m->used = tl_xcalloc(m->cap, 1);
    m->n = 0;
}

void tl_imap_free(tl_imap *m)
{
    free(m->keys);
    free(m->vals);
    free(m->used);
    memset(m, 0, sizeof *m);
}

void tl_imap_grow(tl_imap *m)
{
    tl_imap o = *m;
    tl_imap_init(m, o.cap);
    for (size_t i = 0; i < o.cap; i++) {
        if (!o.used[i]) continue;
        size_t j = tl_imap_slot(m, o.keys[i]);
        m->keys[j] = o.keys[i];
        m->vals[j] = o.vals[i];
        m->used[j] = 1;
    }
    m->n = o.n;
    free(o.keys);
    free(o.vals);
    free(o.used);
}

/* ---- fixed-size binary keys ----------------------------------------------- */

void tl_bmap_init(tl_bmap *m, size_t keylen, size_t hint)
{
    m->keylen = keylen;
    m->cap = map_cap(hint);
    m->keys = tl_xmalloc(m->cap * keylen);
    m->vals = tl_xmalloc(m->cap * sizeof *m->vals);
    m->used = tl_xcalloc(m->cap, 1);
    m->n = 0;
}

void tl_bmap_free(tl_bmap *m)
{
    free(m->keys);
    free(m->vals);
    free(m->used);
    memset(m, 0, sizeof *m);
}

/* Keys of up to four 8-byte words (pointers, ids) are mixed word by word,
 * which is cheaper than the byte hash for the millions of lookups of
 * collective matching. */
static uint64_t bmap_hash(const void *key, size_t keylen)
{
    if (keylen % 8 || keylen > 32) return tl_hash64(key, keylen, 0);
    uint64_t h = keylen, w;
    for (size_t o = 0; o < keylen; o += 8) {
        memcpy(&w, (const char *)key + o, 8);
        h = tl_mix64(h ^ w);
    }
    return h;
}

static size_t bmap_slot(const tl_bmap *m, const void *key, uint64_t h, int *found)
{
    size_t i = h & (m->cap - 1);
    while (m->used[i]) {
        if (!memcmp(m->keys + i * m->keylen, key, m->keylen)) { *found = 1; return i; }
        i = (i + 1) & (m->cap - 1);
    }
    *found = 0;
    return i;
}

size_t *tl_bmap_put(tl_bmap *m, const void *key, int *isnew)
{
    if ((m->n + 1) * 2 > m->cap) {
        tl_bmap o = *m;
        tl_bmap_init(m, o.keylen, o.cap);
        for (size_t i = 0; i < o.cap; i++)
            if (o.used[i]) {
                int f;
                const char *k = o.keys + i * o.keylen;
                size_t s = bmap_slot(m, k, bmap_hash(k, o.keylen), &f);
                memcpy(m->keys + s * m->keylen, k, m->keylen);
                m->vals[s] = o.vals[i];
                m->used[s] = 1;
                m->n++;
            }
        tl_bmap_free(&o);
    }
    int found;
    size_t s = bmap_slot(m, key, bmap_hash(key, m->keylen), &found);
    *isnew = !found;
    if (!found) {
        memcpy(m->keys + s * m->keylen, key, m->keylen);
        m->vals[s] = 0;
        m->used[s] = 1;
        m->n++;
    }
    return &m->vals[s];
}
