/* fuzz_kineto.c — libFuzzer target for the JSON scanner and the Kineto
 * reader: any byte string must give a clean error or a build, never a
 * crash, leak or sanitizer report. Also runs the tree builder on what
 * parsed, the parallel parse against the serial one, and the generic
 * validating skip over the same bytes. */
#include "ingest/ingest.h"
#include "ingest/json.h"

#include <stdint.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Parses with `parts` threads; returns the status, the error text and
 * the event count. */
static int parse(const uint8_t *data, size_t size, int parts, tl_err *err, size_t *events)
{
    tl_source *src;
    *events = 0;
    int rc = tl_source_open_mem(data, size, "fuzz", &src, err);
    if (rc) return rc;
    tl_source_set_parts(src, parts);
    /* the parallel parse must give what the serial one gives, whatever its
     * cut guesses: cut even tiny inputs */
    tl_source_set_split(src, 16, 0);
    tl_build *b = tl_build_new();
    rc = tl_read_kineto(src, "fuzz", b, err);
    if (rc == 0) rc = tl_build_tree(b, err);
    *events = tl_build_nevents(b);
    tl_build_free(b);
    tl_source_close(src);
    return rc;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    tl_err err = {0}, err4 = {0};
    size_t n1, n4;
    int rc1 = parse(data, size, 1, &err, &n1);
    int rc4 = parse(data, size, 4, &err4, &n4);
    if (rc1 != rc4 || (rc1 == 0 && n1 != n4) || strcmp(err.msg, err4.msg) != 0) {
        fprintf(stderr, "serial and split parses differ: %d/%d, %zu/%zu events,\n  %s\n  %s\n", rc1, rc4, n1, n4,
                err.msg, err4.msg);
        abort();
    }
    tl_json j;
    tl_json_init_buf(&j, (const char *)data, size, "fuzz", &err);
    const char *s;
    size_t n;
    tl_json_skip(&j, &s, &n);
    return 0;
}
