/* builder_dict.c — the trace's string dictionary while it is built: texts
 * in one buffer, each interned once (builder.h: tl_build_str). */
#include "ingest/builder_internal.h"

#include <string.h>

uint32_t tl_build_str(tl_build *b, const char *s, size_t n)
{
    uint64_t h = tl_hash64(s, n, 0);
    size_t i = tl_hidx_home(&b->hidx, h);
    for (; b->hidx.ids[i]; i = tl_hidx_next(&b->hidx, i)) {
        if (b->hidx.hashes[i] != h) continue;
        uint32_t id = b->hidx.ids[i] - 1;
        uint64_t off = b->soff.v[id];
        uint64_t end = (size_t)id + 1 < b->soff.n ? b->soff.v[id + 1] : b->sbytes.n;
        if (end - off - 1 == n && memcmp(b->sbytes.p + off, s, n) == 0) return id;
    }
    uint32_t id = (uint32_t)b->soff.n;
    tl_vec_push(&b->soff, b->sbytes.n);
    tl_buf_append(&b->sbytes, s, n);
    tl_buf_putc(&b->sbytes, 0);
    tl_hidx_set(&b->hidx, i, h, id);
    return id;
}

const char *tl_build_strget(const tl_build *b, uint32_t id, size_t *len)
{
    if (id >= b->soff.n) { if (len) *len = 0; return ""; }
    uint64_t off = b->soff.v[id];
    uint64_t end = (size_t)id + 1 < b->soff.n ? b->soff.v[id + 1] : b->sbytes.n;
    if (len) *len = (size_t)(end - off - 1);
    return b->sbytes.p + off;
}
