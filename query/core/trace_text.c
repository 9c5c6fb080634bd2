/* trace_text.c — what the catalog records about how the source wrote its
 * times: a Kineto trace whose every complete event has a JSON-integer ts
 * (or dur) text gives the reference Python ints there, which pandas prints
 * as integers ("1682725898094377", not "...377.0"); reports that print raw
 * times follow it. */
#include "query/core/trace.h"

#include <string.h>

static int text_is(const char *catalog, const char *key, int *is_int)
{
    tl_buf b = {0};
    int found = tl_args_get_str(catalog, strlen(catalog), key, &b) == 0 && b.p;
    if (found) *is_int = b.n == 3 && memcmp(b.p, "int", 3) == 0;
    tl_buf_free(&b);
    return found;
}

int tl_catalog_time_text(const char *catalog, int *ts_int, int *dur_int)
{
    *ts_int = *dur_int = 0;
    if (!catalog || !text_is(catalog, "ts_text", ts_int) || !text_is(catalog, "dur_text", dur_int)) {
        *ts_int = *dur_int = 0;
        return 0;
    }
    return 1;
}

int tl_trace_time_text(const tl_trace *t, int *ts_int, int *dur_int)
{
    return tl_catalog_time_text(t->catalog, ts_int, dur_int);
}
