/* base.h — the small shared toolkit every module builds on: the error
 * context (message with file and byte offset), a bump arena for per-ingest
 * and per-query memory, growable byte buffers, hashing, and the exact text
 * formats the reference tool prints (Python float repr, Python string repr).
 * It lives in store/ because store is the bottom layer; it knows no trace
 * format. */
#ifndef TL_UTIL_H
#define TL_UTIL_H

#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* Status codes: 0 ok, negative on failure. */
enum {
    TL_OK = 0,
    TL_EIO = -1,       /* file system or OS error */
    TL_EFORMAT = -2,   /* malformed input (JSON, gzip, protobuf) */
    TL_ENOMEM = -3,
    TL_ESTORE = -4,    /* LMDB or store consistency error */
    TL_ENOTFOUND = -5, /* no such trace / table / column */
    TL_EVERSION = -6,  /* store schema version mismatch */
    TL_EUSAGE = -7,    /* bad command-line or query */
    TL_EUNSUPPORTED = -8,
    TL_EEXIST = -9,    /* refuses to overwrite */
    TL_ENOTTRACE = -10, /* well-formed input that is not a trace (e.g. JSON without traceEvents) */
};

/* Process exit codes, documented in README and --help. */
enum {
    TL_EXIT_OK = 0,
    TL_EXIT_FAIL = 1,     /* at least one input failed; others may have succeeded */
    TL_EXIT_USAGE = 2,    /* bad command line */
    TL_EXIT_STORE = 3,    /* store could not be opened / wrong version */
    TL_EXIT_NOTFOUND = 4, /* named trace not in the store */
};

typedef struct tl_err {
    int code;
    char msg[1024];
} tl_err;

/* Sets err (if not NULL) and returns code. printf-style. */
int tl_errf(tl_err *err, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Prefixes the existing message ("<prefix>: <old>"). Returns err->code. */
int tl_err_prefix(tl_err *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* ---- allocation helpers that abort on OOM (an OOM mid-ingest cannot be
 * recovered meaningfully; the store stays untouched because nothing was
 * committed). */
void *tl_xmalloc(size_t n);
void *tl_xcalloc(size_t n, size_t sz);
void *tl_xrealloc(void *p, size_t n);
char *tl_xstrdup(const char *s);
char *tl_xstrndup(const char *s, size_t n);

/* ---- large per-event arrays (bigmem.c). With a budget set
 * (tl_big_budget, bytes of resident set; 0, the default: off), blocks of
 * 1 MiB or more are mappings of unlinked scratch files in $TMPDIR, and a
 * thread drops their pages from the resident set whenever it nears the
 * budget; the data stays in the page cache and faults back in on use.
 * Without a budget, or when no scratch file can be made, they are heap
 * blocks. Free them with tl_big_free only. */
void tl_big_budget(uint64_t bytes);
void *tl_big_alloc(size_t n);
void *tl_big_calloc(size_t n, size_t sz);
void tl_big_free(void *p);
unsigned long tl_big_trims(void); /* how often the pages were dropped */
/* Raises the nice value of every thread of the process but the trimmer by
 * 5 (threads started later inherit it): on busy cores a trim then gets
 * the CPU it needs to end before the workers fault back in what it
 * drops. For a process of its own: a nice value cannot be lowered back. */
void tl_big_favour_trimmer(void);

/* ---- arena: bump allocator, one free at the end. */
typedef struct tl_arena_block tl_arena_block;
typedef struct tl_arena {
    tl_arena_block *head;
    size_t block_size;
} tl_arena;
void tl_arena_init(tl_arena *a, size_t block_size);
void *tl_arena_alloc(tl_arena *a, size_t n); /* 16-byte aligned, uninitialised */
void *tl_arena_zalloc(tl_arena *a, size_t n);
char *tl_arena_strdup(tl_arena *a, const char *s);
char *tl_arena_strndup(tl_arena *a, const char *s, size_t n);
char *tl_arena_printf(tl_arena *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void tl_arena_free(tl_arena *a);

/* ---- growable byte buffer. */
typedef struct tl_buf {
    char *p;
    size_t n, cap;
} tl_buf;
void tl_buf_reserve(tl_buf *b, size_t extra);
void tl_buf_append(tl_buf *b, const void *d, size_t n);
void tl_buf_putc(tl_buf *b, char c);
/* Inline append of one byte (hot loops). */
static inline void tl_buf_putc_fast(tl_buf *b, char c)
{
    if (b->n + 2 > b->cap) tl_buf_reserve(b, 1);
    b->p[b->n++] = c;
}
void tl_buf_puts(tl_buf *b, const char *s);
void tl_buf_printf(tl_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void tl_buf_free(tl_buf *b);
/* Appends s as a JSON string literal, escaped as Python's json.dumps with
 * ensure_ascii=False does (\b and \f short, other controls as \u00XX). */
void tl_buf_json_str(tl_buf *b, const char *s, size_t n);

/* ---- typed growable arrays: TL_VEC(int64_t) v = {0}; tl_vec_push(&v, x); */
#define TL_VEC(T) struct { T *v; size_t n, cap; }
#define tl_vec_reserve(vec, extra)                                                      \
    do {                                                                                \
        if ((vec)->n + (extra) > (vec)->cap) {                                          \
            size_t nc_ = (vec)->cap ? (vec)->cap * 2 : 16;                              \
            while (nc_ < (vec)->n + (extra)) nc_ *= 2;                                  \
            (vec)->v = tl_xrealloc((vec)->v, nc_ * sizeof(*(vec)->v));                  \
            (vec)->cap = nc_;                                                           \
        }                                                                               \
    } while (0)
#define tl_vec_push(vec, x)                                                             \
    do {                                                                                \
        tl_vec_reserve(vec, 1);                                                         \
        (vec)->v[(vec)->n++] = (x);                                                     \
    } while (0)
#define tl_vec_free(vec)                                                                \
    do {                                                                                \
        free((vec)->v);                                                                 \
        (vec)->v = NULL;                                                                \
        (vec)->n = (vec)->cap = 0;                                                      \
    } while (0)

/* ---- hashing (XXH3 64-bit). */
uint64_t tl_hash64(const void *p, size_t n, uint64_t seed);
/* Mixes a 64-bit integer into a hash (integer keys, word-wise keys). */
static inline uint64_t tl_mix64(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ULL;
    x ^= x >> 33;
    return x;
}


/* ---- hash maps: open addressing, linear probes, at most half full, the
 * capacity a power of two. A zeroed map is empty and ready; no deletion.
 * Lookups are static inline so that hot loops (interning, grouping) pay
 * no call per probe; growth is out of line (map.c). */

/* String keys -> size_t. Keys are borrowed: the NUL-terminated text must
 * outlive the map (arena or interned text). A key is key[0..len) with no
 * NUL inside (C-string text). Each slot keeps the key's hash, so probes
 * compare text only on a hash match. */
typedef struct tl_smap {
    const char **keys; /* NULL: empty slot */
    uint64_t *hashes;
    size_t *vals;
    size_t cap, n;
} tl_smap;
/* An empty map sized for hint keys without growing. */
void tl_smap_init(tl_smap *m, size_t hint);
void tl_smap_free(tl_smap *m);
void tl_smap_grow(tl_smap *m);
/* The slot of key[0..len) (its own or the empty one it would take). */
static inline size_t tl_smap_slot(const tl_smap *m, const char *key, size_t len, uint64_t h)
{
    size_t mask = m->cap - 1, i = h & mask;
    while (m->keys[i] && !(m->hashes[i] == h && !strncmp(m->keys[i], key, len) && !m->keys[i][len]))
        i = (i + 1) & mask;
    return i;
}
/* The value of key[0..len), NULL when absent. */
static inline size_t *tl_smap_get(const tl_smap *m, const char *key, size_t len)
{
    if (!m->cap) return NULL;
    size_t i = tl_smap_slot(m, key, len, tl_hash64(key, len, 0));
    return m->keys[i] ? &m->vals[i] : NULL;
}
/* The value slot of key[0..len) (key[len] == 0), inserted as 0 with
 * *isnew = 1 when absent (isnew may be NULL). */
static inline size_t *tl_smap_put(tl_smap *m, const char *key, size_t len, int *isnew)
{
    if ((m->n + 1) * 2 > m->cap) tl_smap_grow(m);
    uint64_t h = tl_hash64(key, len, 0);
    size_t i = tl_smap_slot(m, key, len, h);
    int fresh = !m->keys[i];
    if (fresh) {
        m->keys[i] = key;
        m->hashes[i] = h;
        m->vals[i] = 0;
        m->n++;
    }
    if (isnew) *isnew = fresh;
    return &m->vals[i];
}

/* Keys the caller stores and numbers 0, 1, 2... (texts in one growing
 * buffer, where pointers would not stay valid; tuples of codes): slots
 * hold id + 1 and the key's hash, and the caller compares its keys on a
 * hash match. Needs tl_hidx_init. The probe:
 *     size_t i = tl_hidx_home(x, h);
 *     for (; x->ids[i]; i = tl_hidx_next(x, i))
 *         if (x->hashes[i] == h && <key of x->ids[i] - 1 equals key>) ...;
 *     tl_hidx_set(x, i, h, new_id); */
typedef struct tl_hidx {
    uint32_t *ids; /* id + 1; 0: empty slot */
    uint64_t *hashes;
    size_t cap, n;
} tl_hidx;
void tl_hidx_init(tl_hidx *x, size_t hint);
void tl_hidx_free(tl_hidx *x);
void tl_hidx_grow(tl_hidx *x);
static inline size_t tl_hidx_home(const tl_hidx *x, uint64_t h) { return h & (x->cap - 1); }
static inline size_t tl_hidx_next(const tl_hidx *x, size_t i) { return (i + 1) & (x->cap - 1); }
/* Stores id in the empty slot i that the probe for hash h ended on. */
static inline void tl_hidx_set(tl_hidx *x, size_t i, uint64_t h, uint32_t id)
{
    x->ids[i] = id + 1;
    x->hashes[i] = h;
    if (++x->n * 2 > x->cap) tl_hidx_grow(x);
}

/* Integer keys (ids, pointers as uintptr_t) -> size_t, hashed by
 * tl_mix64. */
typedef struct tl_imap {
    uint64_t *keys;
    size_t *vals;
    uint8_t *used;
    size_t cap, n;
} tl_imap;
void tl_imap_init(tl_imap *m, size_t hint);
void tl_imap_free(tl_imap *m);
void tl_imap_grow(tl_imap *m);
static inline size_t tl_imap_slot(const tl_imap *m, uint64_t key)
{
    size_t mask = m->cap - 1, i = tl_mix64(key) & mask;
    while (m->used[i] && m->keys[i] != key) i = (i + 1) & mask;
    return i;
}
static inline size_t *tl_imap_get(const tl_imap *m, uint64_t key)
{
    if (!m->cap) return NULL;
    size_t i = tl_imap_slot(m, key);
    return m->used[i] ? &m->vals[i] : NULL;
}
static inline size_t *tl_imap_put(tl_imap *m, uint64_t key, int *isnew)
{
    if ((m->n + 1) * 2 > m->cap) tl_imap_grow(m);
    size_t i = tl_imap_slot(m, key);
    int fresh = !m->used[i];
    if (fresh) {
        m->keys[i] = key;
        m->vals[i] = 0;
        m->used[i] = 1;
        m->n++;
    }
    if (isnew) *isnew = fresh;
    return &m->vals[i];
}

/* Map of fixed-size binary keys (structs of pointers and ids; zero any
 * padding) -> index, open addressing on tl_hash64 of the key bytes. */
typedef struct tl_bmap {
    char *keys;
    size_t *vals;
    uint8_t *used;
    size_t keylen, cap, n;
} tl_bmap;
void tl_bmap_init(tl_bmap *m, size_t keylen, size_t hint);
void tl_bmap_free(tl_bmap *m);
/* Returns the key's value slot (0 when new, with *isnew set). */
size_t *tl_bmap_put(tl_bmap *m, const void *key, int *isnew);

/* Stable LSD radix sort of rows[n] by keys[n] (keys[i] is rows[i]'s key;
 * keys is used as scratch and left in an unspecified state). Digits of up
 * to 12 bits, only the passes the key range needs. */
void tl_radix_sort_rows(uint32_t *rows, uint64_t *keys, size_t n);

/* Trace ids are printed as 16 lowercase hex digits. */
void tl_id_format(uint64_t id, char out[17]);
/* Parses 1..16 hex digits; returns 0 on success. */
int tl_id_parse(const char *s, uint64_t *id);

/* ---- the reference tool's text formats (spec pytorch-report.md §11.2). */
/* Python repr of a double: shortest round-trip, "25.0", "1e-05", "nan". */
size_t tl_fmt_pyfloat(double v, char out[40]);
/* Python repr of a string ('...' or "..." with escapes), appended to b. */
void tl_buf_pystr(tl_buf *b, const char *s, size_t n);
/* The integer s[0..n) spells as Python's int(s, 0) reads the forms traces
 * use: decimal digits or 0x-hex, with an optional '-' (ROCm 6.2 writes
 * "stream": "0x0"). 1 and *v set, or 0 when the text is anything else or
 * does not fit in an int64. */
int tl_parse_int_text(const char *s, size_t n, int64_t *v);

/* ---- Python regex pieces as POSIX ERE (base/pyregex.c), for the flags
 * that take the reference's Python patterns. */
/* The ERE of escape class \c (d D w W s S): a bracket expression, or the
 * items to put inside one (in_set; NULL for D W S there); NULL for any
 * other c. */
const char *tl_pyre_class(char c, int in_set);
/* The Python set starting at p (after its '[') as an ERE bracket
 * expression appended to out; *end past its ']'. Inside the set \d \w \s
 * become their items and other escapes their character, except \D \W \S,
 * refused when refuse_negated (else read as the letter). -1 when the set
 * is unterminated or refused. */
int tl_pyre_set(const char *p, tl_buf *out, const char **end, int refuse_negated);

/* ---- fault handlers in a chain (sig.c) */
/* Installs fn (SA_SIGINFO) for sig; the disposition it replaces goes to *prev. */
void tl_sig_install(int sig, void (*fn)(int, siginfo_t *, void *), struct sigaction *prev);
/* From a handler installed so: hands the signal to the disposition it
 * replaced (its handler is called; for the default, the default is put
 * back and the faulting access, run again, ends the process). The calling
 * handler stays installed. */
void tl_sig_pass_on(const struct sigaction *prev, int sig, siginfo_t *si, void *uc);

/* ---- misc */
double tl_now(void);          /* monotonic seconds */
int64_t tl_wall_ns(void);     /* wall-clock ns since epoch */
long tl_peak_rss_kb(void);    /* from getrusage */
int tl_cpus_allowed(void);     /* CPUs this process may run on (its affinity; >= 1) */
/* The process's resident and file-backed resident bytes, from
   /proc/self/statm (read through statm_fd when >= 0, for callers that
   read it often; else opened for the call); 0 when unreadable. */
int tl_resident(int statm_fd, uint64_t *rss, uint64_t *file);
/* When turned on (tl_mem_marks; the CLI does for TRACELENS_MEM=1): prints
   "mem: STAGE hwm=.. rss=.. anon=.. file=.." (MB, from /proc/self/status,
   then " trims=N" once tl_big_trims is N > 0) on stderr; a profiling aid
   for the memory targets. */
void tl_mem_mark(const char *stage);
void tl_mem_marks(int on);
/* Hands the heap's free memory back to the system (glibc's malloc_trim);
   nothing in sanitizer builds, whose allocator owns the heap: glibc's
   arenas are never set up there, and trimming them from two threads at
   once races on their first initialisation. */
void tl_heap_trim(void);
/* tl_heap_trim when the process's resident memory less its file-backed
   pages exceeds `bytes` (or cannot be read): a trim walks every arena and
   drops each free run of pages, a TLB shootdown on every CPU running the
   process, and the pages fault in again when next allocated. Returns
   whether it trimmed. */
int tl_heap_trim_above(uint64_t bytes);
int tl_mkdir_p(const char *path, tl_err *err);

/* fn(arg) on a thread of its own, one kept for the process's life and
   reused (base/thread.c); NULL when no thread could be made (the caller
   then runs fn itself). Every started thread is joined exactly once:
   tl_thread_join waits for fn's return and gives its value. */
typedef struct tl_thread tl_thread;
#define TL_THREAD_NAME "tl-kept" /* the kept threads' name (/proc/self/task/N/comm) */
tl_thread *tl_thread_start(void *(*fn)(void *), void *arg);
void *tl_thread_join(tl_thread *t);

/* fn(ctx, i) for every i < n, each once, on up to `threads` threads (the
   caller's among them, at most 16; fewer when n is smaller), each thread's
   share profiled as the parallel stage `stage` (a string literal; NULL:
   not profiled). Returns when every call has returned. */
void tl_par_for(size_t n, int threads, const char *stage, void (*fn)(void *ctx, size_t i), void *ctx);

#endif
