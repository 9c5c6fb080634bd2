/* fuzz_rocprof.c — libFuzzer target for the rocprofv3 reader: any byte
 * string (plain or gzip, through the memory source) must give a clean error
 * or a build, never a crash, leak or sanitizer report. Runs the tree
 * builder on what parsed (it links by correlation id for rocprof), and the
 * fixed-buffer entry point and the sniffer over the same bytes. */
#include "ingest/ingest.h"
#include "ingest/rocprof.h"

#include <stdint.h>
#include <stddef.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    tl_err err = {0};
    tl_source *src;
    if (tl_source_open_mem(data, size, "fuzz", &src, &err) == 0) {
        tl_build *b = tl_build_new();
        if (tl_read_rocprof(src, "fuzz", b, &err) == 0) tl_build_tree(b, &err);
        tl_build_free(b);
        tl_source_close(src);
    }
    tl_build *b = tl_build_new();
    tl_rocprof_parse_buf((const char *)data, size, "fuzz", b, &err);
    tl_build_free(b);
    tl_rocprof_sniff((const char *)data, size);
    return 0;
}
