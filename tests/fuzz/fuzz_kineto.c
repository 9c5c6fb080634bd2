/* fuzz_kineto.c — libFuzzer target for the JSON scanner and the Kineto
 * reader: any byte string must give a clean error or a build, never a
 * crash, leak or sanitizer report. Also runs the tree builder on what
 * parsed, and the generic validating skip over the same bytes. */
#include "ingest/ingest.h"
#include "ingest/json.h"

#include <stdint.h>
#include <stddef.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    tl_err err = {0};
    tl_source *src;
    if (tl_source_open_mem(data, size, "fuzz", &src, &err) == 0) {
        tl_build *b = tl_build_new();
        if (tl_read_kineto(src, "fuzz", b, &err) == 0) tl_build_tree(b, &err);
        tl_build_free(b);
        tl_source_close(src);
    }
    tl_json j;
    tl_json_init_buf(&j, (const char *)data, size, "fuzz", &err);
    const char *s;
    size_t n;
    tl_json_skip(&j, &s, &n);
    return 0;
}
