/* ingest.c — one file into the store: open (hash = trace id), skip if
 * already stored, sniff the format by content, run the reader, build the
 * tree, commit in one transaction. Also the progress bar. */
#include "ingest/ingest.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ingest/pftrace.h"
#include "ingest/rocprof.h"
#include "ingest/xplane.h"

const char *tl_format_name(tl_format f)
{
    switch (f) {
    case TL_FMT_KINETO: return "kineto";
    case TL_FMT_ROCPROF: return "rocprof";
    case TL_FMT_XPLANE: return "xplane";
    case TL_FMT_PFTRACE: return "pftrace";
    default: return "unknown";
    }
}

tl_format tl_sniff(tl_source *src, tl_err *err)
{
    const char *p;
    size_t n = tl_source_peek(src, &p, 4096, err);
    size_t i = n >= 3 && memcmp(p, "\xef\xbb\xbf", 3) == 0 ? 3 : 0; /* UTF-8 byte-order mark */
    while (i < n && (p[i] == ' ' || p[i] == '\n' || p[i] == '\r' || p[i] == '\t')) i++;
    if (i < n && p[i] == '{') {
        if (tl_rocprof_sniff(p, n)) return TL_FMT_ROCPROF;
        return TL_FMT_KINETO;
    }
    /* Other JSON, or nothing but whitespace: the JSON reader names the
     * problem precisely ("expected '{'", "empty file"). */
    if ((i < n && p[i] == '[') || (i == n && n < 4096)) return TL_FMT_KINETO;
    if (tl_pftrace_sniff(p, n)) return TL_FMT_PFTRACE; /* before XSpace: both start with field 1 */
    if (tl_xplane_sniff(p, n)) return TL_FMT_XPLANE;
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

/* The source limits for options o (NULL: the defaults). */
static tl_source_limits source_limits(const tl_ingest_opts *o)
{
    uint64_t max_bytes = o && o->max_input_bytes ? o->max_input_bytes : TL_INGEST_DEFAULT_MAX_INPUT_BYTES;
    uint64_t ratio = o && o->max_inflate_ratio ? o->max_inflate_ratio : TL_INGEST_DEFAULT_MAX_INFLATE_RATIO;
    tl_source_limits l = {max_bytes == UINT64_MAX ? 0 : max_bytes, ratio == UINT64_MAX ? 0 : ratio,
                          TL_INGEST_RATIO_FLOOR};
    return l;
}

/* Parses an opened source (consumed: closed on return). The trace id is
 * the source's hash, read once parsing is done (it may be computed on a
 * thread beside the parser). TL_EEXIST: the source stopped the parse
 * because the trace is stored already. */
static int parse_source(tl_source *src, const char *path, const tl_ingest_opts *o,
                        tl_build **out, tl_build_info *info, tl_ingest_result *res, tl_err *err)
{
    *out = NULL;
    double t0 = tl_now();
    int rc;
    progress pr = {path, t0, 0};
    if (o && o->progress && isatty(2)) tl_source_set_progress(src, progress_cb, &pr);
    if (o) {
        tl_source_set_parts(src, o->parse_threads > 0 ? o->parse_threads : o->parse_parts);
        tl_source_set_split(src, o->split_min, o->timing);
    }
    tl_source_limits lim = source_limits(o);
    if ((rc = tl_source_set_limits(src, &lim, err))) {
        tl_source_close(src);
        return rc;
    }
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
    case TL_FMT_ROCPROF: rc = tl_read_rocprof(src, path, b, err); break;
    case TL_FMT_XPLANE: rc = tl_read_xplane(src, path, b, err); break;
    case TL_FMT_PFTRACE: rc = tl_read_pftrace(src, path, b, err); break;
    default: {
        const char *p;
        size_t n = tl_source_peek(src, &p, 1, err);
        rc = tl_errf(err, TL_EFORMAT, n ? "%s: byte 0: not a trace (expected a JSON object, gzip data, an XSpace or a Perfetto protobuf)"
                                        : "%s: empty file", path);
    }
    }
    if (pr.shown) fprintf(stderr, "\r%*s\r", 78, "");
    /* Done with the input: free its buffers and mapping before the tree
     * allocates its indexes (that is where ingest memory peaks). */
    uint64_t id = tl_source_id(src);
    tl_err changed = {0};
    if (tl_source_unchanged(src, &changed)) { /* its error explains the parser's, if any */
        if (err) *err = changed;
        rc = changed.code;
    }
    uint64_t src_bytes = tl_source_file_size(src), json_bytes = tl_source_bytes_out(src);
    tl_mem_mark("parsed");
    tl_source_close(src);
    double t_parse = tl_now();
    if (rc == 0) rc = tl_build_check_times(b, path, err);
    if (rc == 0) rc = tl_build_tree(b, err);
    tl_mem_mark("tree");
    if (o && o->timing)
        fprintf(stderr, "timing: parse %.3f s, tree %.3f s\n", t_parse - t0, tl_now() - t_parse);
    if (rc) {
        tl_build_free(b);
        return rc;
    }
    memset(info, 0, sizeof *info);
    info->id = id;
    info->format = tl_format_name(f);
    info->src_bytes = src_bytes;
    info->json_bytes = json_bytes;
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
    *out = b;
    return TL_OK;
}

int tl_ingest_parse(const char *path, const tl_ingest_opts *o, tl_build **out, tl_build_info *info,
                    tl_ingest_result *res, tl_err *err)
{
    tl_source *src;
    int rc = tl_source_open(path, &src, NULL, err);
    if (rc) return rc;
    return parse_source(src, path, o, out, info, res, err);
}

/* Is trace id in the store? Sets *cat_events from its catalog record. */
static int stored(tl_store *s, uint64_t id, uint64_t *cat_events)
{
    tl_reader *r;
    tl_err e = {0};
    if (tl_reader_open(s, &r, &e) != 0) return 0;
    const char *cat;
    int found = tl_reader_catalog(r, id, &cat, NULL) == 0;
    if (found && cat_events) *cat_events = catalog_events(cat);
    tl_reader_close(r);
    return found;
}

typedef struct known_ctx {
    tl_store *s;
    uint64_t id; /* the id the source asked about */
} known_ctx;

static int known_cb(void *ctx, uint64_t id)
{
    known_ctx *k = ctx;
    k->id = id;
    return stored(k->s, id, NULL);
}

int tl_ingest_prepare(tl_store *s, const char *path, const tl_ingest_opts *o, tl_ingest_prep *pp,
                      tl_err *err)
{
    double t0 = tl_now();
    memset(pp, 0, sizeof *pp);
    pp->timing = o && o->timing;
    char *abs = realpath(path, NULL);
    pp->path = abs ? abs : tl_xstrdup(path);
    /* The file is hashed on a thread while it is parsed; as soon as the
     * hash is known, the parser asks whether the trace is stored already
     * and stops early if so (re-ingesting a corpus costs little). */
    tl_source *src;
    int rc = tl_source_open_async(pp->path, &src, err);
    if (rc) return rc;
    known_ctx kc = {s, 0};
    tl_source_set_known(src, known_cb, &kc);
    tl_err perr = {0};
    rc = parse_source(src, pp->path, o, &pp->build, &pp->info, &pp->res, &perr);
    if (rc == 0 && stored(s, pp->res.id, NULL)) { /* hash finished after the last check */
        tl_build_free(pp->build);
        pp->build = NULL;
        rc = TL_EEXIST;
    }
    if (rc == TL_EEXIST) {
        uint64_t id = pp->res.id ? pp->res.id : kc.id;
        memset(&pp->res, 0, sizeof pp->res);
        pp->res.id = id;
        pp->res.existed = 1;
        stored(s, id, &pp->res.events);
        pp->res.seconds = tl_now() - t0;
        return TL_OK;
    }
    if (rc) {
        if (err) *err = perr;
        return rc;
    }
    pp->info.path = pp->path;
    double t_seal = tl_now();
    tl_build_seal(pp->build, &pp->info);
    tl_mem_mark("sealed");
    if (pp->timing) fprintf(stderr, "timing: seal %.3f s\n", tl_now() - t_seal);
    pp->res.seconds += tl_now() - t_seal;
    return TL_OK;
}

int tl_ingest_commit(tl_store *s, tl_ingest_prep *pp, tl_err *err)
{
    int rc = TL_OK;
    if (pp->build) {
        double t0 = tl_now();
        rc = tl_build_commit(pp->build, s, &pp->info, err);
        tl_mem_mark("committed");
        if (pp->timing) fprintf(stderr, "timing: commit %.3f s\n", tl_now() - t0);
        if (rc == TL_EEXIST) { pp->res.existed = 1; rc = TL_OK; }
        pp->res.seconds += tl_now() - t0;
    }
    return rc;
}

void tl_ingest_prep_free(tl_ingest_prep *pp)
{
    tl_build_free(pp->build);
    free(pp->path);
    memset(pp, 0, sizeof *pp);
}

int tl_ingest_file(tl_store *s, const char *path, const tl_ingest_opts *o, tl_ingest_result *res,
                   tl_err *err)
{
    tl_ingest_prep pp;
    int rc = tl_ingest_prepare(s, path, o, &pp, err);
    if (rc == 0) rc = tl_ingest_commit(s, &pp, err);
    *res = pp.res;
    tl_ingest_prep_free(&pp);
    return rc;
}
