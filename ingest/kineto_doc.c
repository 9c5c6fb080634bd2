/* kineto_doc.c — the PyTorch profiler (Kineto) JSON reader's entry: streams
 * the document with the zero-copy scanner, keeps the top-level object's keys
 * other than traceEvents verbatim for the catalog, and hands the
 * traceEvents array to kineto_split.c, which parses its elements with
 * kineto.c. */
#include "ingest/kineto_internal.h"

#include <string.h>

int tl_read_kineto(tl_source *src, const char *path, tl_build *b, tl_err *err)
{
    tl_json jj, *j = &jj;
    int rc = tl_json_init_src(j, src, path, err);
    if (rc) return rc;
    kreader k;
    tl_kreader_init(&k, j, b, src);
    tl_build_set_format(b, "kineto");
    tl_build_select_args(b); /* parse_args flags "Output type" */
    if ((rc = tl_json_skip_ws_stream(j))) goto out;
    int p = tl_json_peek(j);
    if (p == -1) { rc = tl_errf(err, TL_EFORMAT, "%s: empty file (no JSON document)", path); goto out; }
    if (p != '{') { rc = tl_json_fail(j, "'{' at the start of a trace (not a JSON trace object)"); goto out; }
    j->pos++;
    int first = 1, have_events = 0;
    for (;;) {
        const char *key;
        size_t kn;
        if ((rc = tl_json_skip_ws_stream(j))) goto out;
        size_t mark = j->pos;
        int fsave = first;
        for (;;) {
            rc = tl_json_obj_next(j, &first, &key, &kn);
            if (rc == 0 && key && !(kn == 11 && memcmp(key, "traceEvents", 11) == 0)) {
                const char *v;
                size_t vn;
                size_t kcopy_n = kn;
                char kcopy[256];
                memcpy(kcopy, key, kn < sizeof kcopy ? kn : sizeof kcopy);
                if (kcopy_n > sizeof kcopy) kcopy_n = sizeof kcopy;
                rc = tl_json_skip(j, &v, &vn);
                if (rc == 0) tl_build_toplevel(b, kcopy, kcopy_n, v, vn);
            }
            if (rc != TL_JNEED) break;
            first = fsave;
            if ((rc = tl_json_refill(j, mark))) goto out;
            mark = j->pos;
        }
        if (rc) goto out;
        if (!key) break;
        if (kn == 11 && memcmp(key, "traceEvents", 11) == 0) {
            if (have_events) { rc = tl_json_fail_at(j, j->pos, "duplicate key \"traceEvents\""); goto out; }
            have_events = 1;
            for (;;) {
                rc = tl_json_expect(j, '[', "'[' (traceEvents must be an array)");
                if (rc != TL_JNEED) break;
                if ((rc = tl_json_refill(j, j->pos))) goto out;
            }
            if (rc) goto out;
            if ((rc = tl_kineto_events(&k))) goto out;
        }
    }
    if ((rc = tl_json_skip_ws_stream(j))) goto out;
    p = tl_json_peek(j);
    if (p != -1) { rc = tl_json_fail(j, "end of input after the trace object"); goto out; }
    if (!have_events) {
        tl_json_fail_at(j, j->pos, "no \"traceEvents\" array in the document (not a PyTorch profiler trace?)");
        rc = err->code = TL_ENOTTRACE;
        goto out;
    }
    rc = 0;
out:
    tl_kreader_free(&k);
    return rc;
}
