/* ingest.c — one file into the store: open (hash = trace id), skip if
 * already stored, sniff the format by content, run the reader, build the
 * tree, commit in one transaction. Also the progress bar. */
#include "ingest.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Readers that live in optional modules are weak so the core links
 * without them; a missing one gives a clear "not supported" error. */
int tl_read_rocprof(tl_source *src, const char *path, tl_build *b, tl_err *err) __attribute__((weak));
int tl_read_xplane(tl_source *src, const char *path, tl_build *b, tl_err *err) __attribute__((weak));

const char *tl_format_name(tl_format f)
{
    switch (f) {
    case TL_FMT_KINETO: return "kineto";
    case TL_FMT_ROCPROF: return "rocprof";
    case TL_FMT_XPLANE: return "xplane";
    default: return "unknown";
    }
}

tl_format tl_sniff(tl_source *src, tl_err *err)
{
    const char *p;
    size_t n = tl_source_peek(src, &p, 4096, err);
    size_t i = 0;
    while (i < n && (p[i] == ' ' || p[i] == '\n' || p[i] == '\r' || p[i] == '\t')) i++;
    if (i < n && p[i] == '{') {
        if (memmem(p, n, "\"rocprofiler-sdk-tool\"", 22)) return TL_FMT_ROCPROF;
        return TL_FMT_KINETO;
    }
    /* Other JSON, or nothing but whitespace: the JSON reader names the
     * problem precisely ("expected '{'", "empty file"). */
    if ((i < n && p[i] == '[') || (i == n && n < 4096)) return TL_FMT_KINETO;
    /* XSpace: field 1 (planes, length-delimited) -> tag byte 0x0a; also
     * accept field 2-4 tags that XSpace writers may put first. */
    if (n >= 2 && (unsigned char)p[0] == 0x0a) return TL_FMT_XPLANE;
    return TL_FMT_UNKNOWN;
}

typedef struct progress {
    const char *path;
    double t0;
    int shown;
} progress;

static void progress_cb(void *ctx, uint64_t done, uint64_t total)
{
    progress *pr = ctx;
    double dt = tl_now() - pr->t0;
    if (dt < 0.5) return;
    double mb = (double)done / 1e6;
    if (total)
        fprintf(stderr, "\r  %-40.40s %3d%%  %8.0f MB  %6.0f MB/s", pr->path, (int)(100.0 * (double)done / (double)total),
                mb, mb / dt);
    else
        fprintf(stderr, "\r  %-40.40s %8.0f MB  %6.0f MB/s", pr->path, mb, mb / dt);
    pr->shown = 1;
}

static uint64_t catalog_events(const char *json)
{
    const char *p = strstr(json, "\"events\":");
    return p ? strtoull(p + 9, NULL, 10) : 0;
}

/* Parses an opened source (consumed: closed on return). */
static int parse_source(tl_source *src, uint64_t id, const char *path, const tl_ingest_opts *o,
                        tl_build **out, tl_build_info *info, tl_ingest_result *res, tl_err *err)
{
    *out = NULL;
    double t0 = tl_now();
    int rc;
    progress pr = {path, t0, 0};
    if (o && o->progress && isatty(2)) tl_source_set_progress(src, progress_cb, &pr);
    tl_err sniff_err = {0};
    tl_format f = tl_sniff(src, &sniff_err);
    if (sniff_err.code) { /* e.g. corrupt gzip in the first block */
        if (err) *err = sniff_err;
        tl_source_close(src);
        return sniff_err.code;
    }
    tl_build *b = tl_build_new();
    switch (f) {
    case TL_FMT_KINETO: rc = tl_read_kineto(src, path, b, err); break;
    case TL_FMT_ROCPROF:
        rc = tl_read_rocprof ? tl_read_rocprof(src, path, b, err)
                             : tl_errf(err, TL_EUNSUPPORTED, "%s: rocprofv3 input is not supported by this build", path);
        break;
    case TL_FMT_XPLANE:
        rc = tl_read_xplane ? tl_read_xplane(src, path, b, err)
                            : tl_errf(err, TL_EUNSUPPORTED, "%s: XPlane input is not supported by this build", path);
        break;
    default: {
        const char *p;
        size_t n = tl_source_peek(src, &p, 1, err);
        rc = tl_errf(err, TL_EFORMAT, n ? "%s: byte 0: not a trace (expected a JSON object, gzip data or an XSpace protobuf)"
                                        : "%s: empty file", path);
    }
    }
    if (pr.shown) fprintf(stderr, "\r%*s\r", 78, "");
    double t_parse = tl_now();
    if (rc == 0) rc = tl_build_tree(b, err);
    if (getenv("TRACELENS_TIMING"))
        fprintf(stderr, "timing: parse %.3f s, tree %.3f s\n", t_parse - t0, tl_now() - t_parse);
    if (rc) {
        tl_build_free(b);
        tl_source_close(src);
        return rc;
    }
    memset(info, 0, sizeof *info);
    info->id = id;
    info->format = tl_format_name(f);
    info->src_bytes = tl_source_file_size(src);
    info->json_bytes = tl_source_bytes_out(src);
    info->rank = o ? o->rank : -1;
    if (o) {
        info->config = o->config;
        info->run = o->run;
        info->labels_json = o->labels_json;
    }
    if (res) {
        res->id = id;
        res->events = tl_build_nevents(b);
        res->format = f;
        res->in_bytes = info->src_bytes;
        res->json_bytes = info->json_bytes;
        res->seconds = tl_now() - t0;
        res->existed = 0;
    }
    tl_source_close(src);
    *out = b;
    return TL_OK;
}

int tl_ingest_parse(const char *path, const tl_ingest_opts *o, tl_build **out, tl_build_info *info,
                    tl_ingest_result *res, tl_err *err)
{
    tl_source *src;
    uint64_t id;
    int rc = tl_source_open(path, &src, &id, err);
    if (rc) return rc;
    return parse_source(src, id, path, o, out, info, res, err);
}

int tl_ingest_file(tl_store *s, const char *path, const tl_ingest_opts *o, tl_ingest_result *res,
                   tl_err *err)
{
    double t0 = tl_now();
    memset(res, 0, sizeof *res);
    char *abs = realpath(path, NULL);
    const char *p = abs ? abs : path;
    /* Existence check before parsing: hashing is far faster than parsing. */
    tl_source *src;
    uint64_t id;
    int rc = tl_source_open(p, &src, &id, err);
    if (rc) { free(abs); return rc; }
    tl_reader *r;
    rc = tl_reader_open(s, &r, err);
    if (rc) { tl_source_close(src); free(abs); return rc; }
    const char *cat;
    if (tl_reader_catalog(r, id, &cat, NULL) == 0) {
        res->id = id;
        res->existed = 1;
        res->events = catalog_events(cat);
        tl_reader_close(r);
        tl_source_close(src);
        free(abs);
        res->seconds = tl_now() - t0;
        return TL_OK;
    }
    tl_reader_close(r);
    tl_build *b;
    tl_build_info info;
    rc = parse_source(src, id, p, o, &b, &info, res, err);
    if (rc) { free(abs); return rc; }
    info.path = p;
    double t_commit = tl_now();
    rc = tl_build_commit(b, s, &info, err);
    if (getenv("TRACELENS_TIMING")) fprintf(stderr, "timing: commit %.3f s\n", tl_now() - t_commit);
    tl_build_free(b);
    free(abs);
    if (rc == TL_EEXIST) { res->existed = 1; rc = TL_OK; }
    res->seconds = tl_now() - t0;
    return rc;
}
