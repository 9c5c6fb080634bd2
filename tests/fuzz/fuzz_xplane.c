/* fuzz_xplane.c — libFuzzer target for the XPlane reader: arbitrary bytes
 * go through the sniffer and the full XSpace decode + xprof conversion +
 * HLO record extraction (ingest/xplane.c). Any crash, leak or UB report is
 * a bug; a clean error return is the expected outcome for most inputs.
 * Seeds: tests/fuzz/make_xplane_seeds.sh (derived from the shared samples at
 * test time, never committed). */
#include <stdint.h>
#include <stddef.h>
#include "ingest/xplane.h"
#include "ingest/builder.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    (void)tl_xplane_sniff((const char *)data, size);
    tl_build *b = tl_build_new();
    tl_err err = {0};
    (void)tl_xplane_parse(data, size, "fuzz.xplane.pb", b, &err);
    tl_build_free(b);
    tl_buf hb = {0};
    (void)tl_xplane_hlo_blob(data, size, "fuzz.xplane.pb", &hb, &err);
    tl_buf_free(&hb);
    return 0;
}
