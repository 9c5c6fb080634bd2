/* mem.c — allocation that aborts on exhaustion, arenas and growable buffers */
#include "base/base.h"

#include <errno.h>
#include <fcntl.h>
#include <float.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <xxhash.h>

static void oom(size_t n)
{
    fprintf(stderr, "tracelens: out of memory (allocating %zu bytes)\n", n);
    abort();
}

void *tl_xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p) oom(n);
    return p;
}

void *tl_xcalloc(size_t n, size_t sz)
{
    void *p = calloc(n ? n : 1, sz ? sz : 1);
    if (!p) oom(n * sz);
    return p;
}

void *tl_xrealloc(void *p, size_t n)
{
    void *q = realloc(p, n ? n : 1);
    if (!q) oom(n);
    return q;
}

char *tl_xstrdup(const char *s) { return tl_xstrndup(s, strlen(s)); }

char *tl_xstrndup(const char *s, size_t n)
{
    char *p = tl_xmalloc(n + 1);
    memcpy(p, s, n);
    p[n] = 0;
    return p;
}

/* ---- arena */
struct tl_arena_block {
    tl_arena_block *next;
    size_t used, cap;
    _Alignas(16) unsigned char data[];
};

void tl_arena_init(tl_arena *a, size_t block_size)
{
    a->head = NULL;
    a->block_size = block_size ? block_size : 64 * 1024;
}

void *tl_arena_alloc(tl_arena *a, size_t n)
{
    n = (n + 15) & ~(size_t)15;
    if (!a->block_size) a->block_size = 64 * 1024;
    tl_arena_block *b = a->head;
    if (!b || b->used + n > b->cap) {
        size_t cap = n > a->block_size ? n : a->block_size;
        b = tl_xmalloc(sizeof *b + cap);
        b->used = 0;
        b->cap = cap;
        /* A big one-off allocation goes behind the current block so the
         * current block's free space is not wasted. */
        if (a->head && n > a->block_size) {
            b->next = a->head->next;
            a->head->next = b;
        } else {
            b->next = a->head;
            a->head = b;
        }
    }
    void *p = b->data + b->used;
    b->used += n;
    return p;
}

void *tl_arena_zalloc(tl_arena *a, size_t n)
{
    void *p = tl_arena_alloc(a, n);
    memset(p, 0, n);
    return p;
}

char *tl_arena_strndup(tl_arena *a, const char *s, size_t n)
{
    char *p = tl_arena_alloc(a, n + 1);
    memcpy(p, s, n);
    p[n] = 0;
    return p;
}

char *tl_arena_strdup(tl_arena *a, const char *s) { return tl_arena_strndup(a, s, strlen(s)); }

char *tl_arena_printf(tl_arena *a, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    char *p = tl_arena_alloc(a, (size_t)n + 1);
    va_start(ap, fmt);
    vsnprintf(p, (size_t)n + 1, fmt, ap);
    va_end(ap);
    return p;
}

void tl_arena_free(tl_arena *a)
{
    tl_arena_block *b = a->head;
    while (b) {
        tl_arena_block *n = b->next;
        free(b);
        b = n;
    }
    a->head = NULL;
}

/* ---- buffers */
void tl_buf_reserve(tl_buf *b, size_t extra)
{
    if (b->n + extra + 1 > b->cap) {
        size_t nc = b->cap ? b->cap * 2 : 256;
        while (nc < b->n + extra + 1) nc *= 2;
        b->p = tl_xrealloc(b->p, nc);
        b->cap = nc;
    }
}

void tl_buf_append(tl_buf *b, const void *d, size_t n)
{
    tl_buf_reserve(b, n);
    memcpy(b->p + b->n, d, n);
    b->n += n;
    b->p[b->n] = 0;
}

void tl_buf_putc(tl_buf *b, char c) { tl_buf_append(b, &c, 1); }
void tl_buf_puts(tl_buf *b, const char *s) { tl_buf_append(b, s, strlen(s)); }

void tl_buf_printf(tl_buf *b, const char *fmt, ...)
{
    /* One formatting pass when the text fits the spare capacity (the usual
     * case in report loops); else grow and format again. */
    va_list ap;
    size_t room = b->cap > b->n ? b->cap - b->n : 0;
    va_start(ap, fmt);
    int n = vsnprintf(room ? b->p + b->n : NULL, room, fmt, ap);
    va_end(ap);
    if (n < 0) return;
    if ((size_t)n >= room) {
        tl_buf_reserve(b, (size_t)n);
        va_start(ap, fmt);
        vsnprintf(b->p + b->n, (size_t)n + 1, fmt, ap);
        va_end(ap);
    }
    b->n += (size_t)n;
}

void tl_buf_free(tl_buf *b)
{
    free(b->p);
    b->p = NULL;
    b->n = b->cap = 0;
}

void tl_buf_json_str(tl_buf *b, const char *s, size_t n)
{
    tl_buf_putc(b, '"');
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        switch (c) {
        case '"': tl_buf_puts(b, "\\\""); break;
        case '\\': tl_buf_puts(b, "\\\\"); break;
        case '\n': tl_buf_puts(b, "\\n"); break;
        case '\r': tl_buf_puts(b, "\\r"); break;
        case '\t': tl_buf_puts(b, "\\t"); break;
        case '\b': tl_buf_puts(b, "\\b"); break;
        case '\f': tl_buf_puts(b, "\\f"); break;
        default:
            if (c < 0x20) tl_buf_printf(b, "\\u%04x", c);
            else tl_buf_putc(b, (char)c);
        }
    }
    tl_buf_putc(b, '"');
}

#if defined(__SANITIZE_ADDRESS__)
#define TL_HEAP_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TL_HEAP_SANITIZED 1
#endif
#endif

void tl_heap_trim(void)
{
#if defined(__GLIBC__) && !defined(TL_HEAP_SANITIZED)
    malloc_trim(0);
#endif
}

int tl_resident(int statm_fd, uint64_t *rss, uint64_t *file)
{
    int fd = statm_fd >= 0 ? statm_fd : open("/proc/self/statm", O_RDONLY | O_CLOEXEC);
    char buf[128];
    ssize_t n = fd < 0 ? -1 : pread(fd, buf, sizeof buf - 1, 0);
    if (fd >= 0 && statm_fd < 0) close(fd);
    if (n <= 0) return 0;
    buf[n] = 0;
    unsigned long size, res, shared;
    if (sscanf(buf, "%lu %lu %lu", &size, &res, &shared) != 3) return 0;
    uint64_t pg = (uint64_t)sysconf(_SC_PAGESIZE);
    *rss = (uint64_t)res * pg;
    *file = (uint64_t)shared * pg;
    return 1;
}

int tl_heap_trim_above(uint64_t bytes)
{
    uint64_t rss, file;
    if (tl_resident(-1, &rss, &file) && (file < rss ? rss - file : 0) <= bytes) return 0;
    tl_heap_trim();
    return 1;
}
