/* test_map.c — base/map.c: tl_smap (string keys), tl_imap (integer keys)
 * and tl_hidx (keys the caller stores) through growth from a zeroed map and from a sized one, colliding
 * probes (keys equal in their low hash bits, strings of a common prefix),
 * misses, and every value read back after growth. The maps have no
 * deletion. */
#include "tests/unit/tl_test.h"
#include "base/base.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static void test_smap_growth(void)
{
    enum { N = 5000 };
    static char keys[N][24];
    tl_smap m = {0};
    CHECK(tl_smap_get(&m, "x", 1) == NULL); /* zeroed map: empty */
    for (size_t i = 0; i < N; i++) {
        int len = snprintf(keys[i], sizeof keys[i], "kernel_%zu", i);
        int isnew = 0;
        size_t *v = tl_smap_put(&m, keys[i], (size_t)len, &isnew);
        CHECK(isnew);
        *v = i * 3;
    }
    CHECK_EQ_I(m.n, N);
    CHECK(m.cap >= 2 * N && (m.cap & (m.cap - 1)) == 0);
    size_t bad = 0;
    for (size_t i = 0; i < N; i++) {
        char probe[24]; /* a different pointer with the same text */
        int len = snprintf(probe, sizeof probe, "kernel_%zu", i);
        size_t *v = tl_smap_get(&m, probe, (size_t)len);
        bad += !v || *v != i * 3;
        int isnew = 1;
        v = tl_smap_put(&m, probe, (size_t)len, &isnew);
        bad += isnew || *v != i * 3;
    }
    CHECK_EQ_I(bad, 0);
    CHECK_EQ_I(m.n, N);
    /* prefixes and extensions of stored keys are other keys */
    CHECK(tl_smap_get(&m, "kernel_1", 7) == NULL);
    CHECK(tl_smap_get(&m, "kernel_10000", 12) == NULL);
    CHECK(tl_smap_get(&m, "", 0) == NULL);
    /* the length, not the NUL, ends the looked-up key */
    CHECK(tl_smap_get(&m, "kernel_12xyz", 9) != NULL);
    tl_smap_free(&m);
    CHECK(m.cap == 0 && m.keys == NULL);
}

static void test_smap_sized(void)
{
    tl_smap m;
    tl_smap_init(&m, 1000);
    size_t cap = m.cap;
    CHECK(cap >= 2000);
    static const char *words[] = {"", "a", "ab", "abc", "b", "ba"};
    for (size_t i = 0; i < 6; i++) *tl_smap_put(&m, words[i], strlen(words[i]), NULL) = i + 1;
    for (size_t i = 0; i < 6; i++) {
        size_t *v = tl_smap_get(&m, words[i], strlen(words[i]));
        CHECK(v && *v == i + 1);
    }
    CHECK_EQ_I(m.cap, cap);
    tl_smap_free(&m);
}

/* Integer keys: growth over 20,000 keys, then collisions in a 64-slot
 * table filled to its load limit (32 keys, every one found through its
 * probe chain) and the 33rd key growing it. */
static void test_imap(void)
{
    tl_imap m = {0};
    CHECK(tl_imap_get(&m, 7) == NULL);
    enum { N = 20000 };
    for (uint64_t i = 0; i < N; i++) {
        int isnew = 0;
        uint64_t key = i * 0x100000000ULL + (i & 1 ? UINT64_MAX - i : i); /* high and low words */
        size_t *v = tl_imap_put(&m, key, &isnew);
        CHECK(isnew);
        *v = (size_t)i;
    }
    CHECK_EQ_I(m.n, N);
    size_t bad = 0;
    for (uint64_t i = 0; i < N; i++) {
        uint64_t key = i * 0x100000000ULL + (i & 1 ? UINT64_MAX - i : i);
        size_t *v = tl_imap_get(&m, key);
        bad += !v || *v != i;
        int isnew = 1;
        v = tl_imap_put(&m, key, &isnew);
        bad += isnew || *v != i;
    }
    CHECK_EQ_I(bad, 0);
    CHECK(tl_imap_get(&m, 0x100000000ULL * (N + 5)) == NULL);
    tl_imap_free(&m);

    /* key 0 and UINT64_MAX are ordinary keys */
    tl_imap z;
    tl_imap_init(&z, 4);
    CHECK_EQ_I(z.cap, 64);
    *tl_imap_put(&z, 0, NULL) = 11;
    *tl_imap_put(&z, UINT64_MAX, NULL) = 22;
    CHECK(*tl_imap_get(&z, 0) == 11 && *tl_imap_get(&z, UINT64_MAX) == 22);
    /* a full 64-slot table at its limit: 32 keys, all reachable */
    for (uint64_t k = 1; k < 31; k++) *tl_imap_put(&z, k << 6, NULL) = (size_t)k;
    CHECK_EQ_I(z.n, 32);
    CHECK_EQ_I(z.cap, 64);
    bad = 0;
    for (uint64_t k = 1; k < 31; k++) bad += *tl_imap_get(&z, k << 6) != k;
    CHECK_EQ_I(bad, 0);
    *tl_imap_put(&z, 99, NULL) = 1; /* the 33rd grows it */
    CHECK_EQ_I(z.cap, 128);
    CHECK(*tl_imap_get(&z, 0) == 11 && *tl_imap_get(&z, 30 << 6) == 30);
    tl_imap_free(&z);
}

/* Caller-stored keys: an interner over one text buffer that moves as it
 * grows, with every hash forced equal for some keys so that the caller's
 * compare, not the hash, tells them apart. */
typedef TL_VEC(size_t) offvec;
static uint32_t intern(tl_hidx *x, tl_buf *text, offvec *off, const char *s, int collide)
{
    size_t n = strlen(s);
    uint64_t h = collide ? 42 : tl_hash64(s, n, 0);
    size_t i = tl_hidx_home(x, h);
    for (; x->ids[i]; i = tl_hidx_next(x, i))
        if (x->hashes[i] == h && !strcmp(text->p + off->v[x->ids[i] - 1], s)) return x->ids[i] - 1;
    uint32_t id = (uint32_t)off->n;
    tl_vec_push(off, text->n);
    tl_buf_append(text, s, n + 1);
    tl_hidx_set(x, i, h, id);
    return id;
}

static void test_hidx(void)
{
    tl_hidx x;
    tl_hidx_init(&x, 0);
    tl_buf text = {0};
    offvec off = {0};
    char s[32];
    size_t bad = 0;
    for (int round = 0; round < 2; round++)
        for (uint32_t i = 0; i < 3000; i++) {
            snprintf(s, sizeof s, "name%u", i);
            bad += intern(&x, &text, &off, s, i % 7 == 0) != i; /* round 1: all found */
        }
    CHECK_EQ_I(bad, 0);
    CHECK_EQ_I(x.n, 3000);
    CHECK_EQ_I(off.n, 3000);
    CHECK(x.cap >= 6000);
    tl_hidx_free(&x);
    tl_buf_free(&text);
    tl_vec_free(&off);
}

int main(void)
{
    test_hidx();
    test_smap_growth();
    test_smap_sized();
    test_imap();
    return tl_test_done("test_map");
}
