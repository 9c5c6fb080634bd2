/* fuzz_pftrace.c — libFuzzer target for the Perfetto trace reader: any byte
 * string (plain or gzip, through the memory source) must give a clean error
 * or a build, never a crash, leak or sanitizer report. Runs the tree
 * builder on what parsed, and the fixed-buffer entry point and the sniffer
 * over the same bytes. Seeds: tests/fuzz/corpus/fuzz_pftrace (.pftrace
 * files written by tests/golden/pftrace/pftrace_encode.py). */
#include "ingest/ingest.h"
#include "ingest/pftrace.h"

#include <stdint.h>
#include <stddef.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    tl_err err = {0};
    tl_source *src;
    if (tl_source_open_mem(data, size, "fuzz", &src, &err) == 0) {
        tl_build *b = tl_build_new();
        if (tl_read_pftrace(src, "fuzz", b, &err) == 0) tl_build_tree(b, &err);
        tl_build_free(b);
        tl_source_close(src);
    }
    tl_build *b = tl_build_new();
    tl_pftrace_parse_buf(data, size, "fuzz", b, &err);
    tl_build_free(b);
    tl_pftrace_sniff((const char *)data, size);
    return 0;
}
