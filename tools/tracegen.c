/* tracegen.c — synthetic but realistic PyTorch profiler (Kineto) traces of any
 * size, single-rank or a multi-rank corpus whose NCCL collectives line up
 * and carry planted, documented timings (docs/TRACEGEN.md). Output is
 * streamed step by step: memory stays bounded by one profiler step whatever
 * the requested size. Deterministic: same arguments, same bytes.
 *
 * Layout of the source: tracegen_fmt.h (buffer, number formatting, rng),
 * tracegen_model.h (event records, timeline primitives, planted formulas),
 * tracegen_build.h + tracegen_catalog.h (per-rank op/kernel catalogue),
 * tracegen_step.h (one step's script); this file emits JSON, sizes the
 * output and drives ranks. */
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#include "tools/tracegen_step.h"

/* -------------------------------------------------------------- sink */
typedef struct sink {
    int fd, gz;
    z_stream zs;
    unsigned char *zb;
    uint64_t raw;
    const char *path;
} sink;
#define ZB_SIZE (1 << 20)

static int write_all(int fd, const void *p, size_t n, const char *path)
{
    const char *c = p;
    while (n) {
        ssize_t w = write(fd, c, n);
        if (w < 0) {
            if (errno == EINTR) continue;
            fprintf(stderr, "tracegen: %s: write: %s\n", path, strerror(errno));
            return -1;
        }
        c += w, n -= (size_t)w;
    }
    return 0;
}
static int sink_open(sink *s, const char *path, int gz, int level)
{
    memset(s, 0, sizeof *s);
    s->path = path;
    s->gz = gz;
    s->fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (s->fd < 0) {
        fprintf(stderr, "tracegen: %s: %s\n", path, strerror(errno));
        return -1;
    }
    if (gz) {
        /* windowBits 15+16: gzip wrapper; zlib writes mtime 0, so output is
         * byte-identical across runs */
        if (deflateInit2(&s->zs, level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
            fprintf(stderr, "tracegen: deflateInit2 failed\n");
            return -1;
        }
        s->zb = malloc(ZB_SIZE);
        if (!s->zb) return -1;
    }
    return 0;
}
static int sink_deflate(sink *s, int flush)
{
    int rc;
    do {
        s->zs.next_out = s->zb;
        s->zs.avail_out = ZB_SIZE;
        rc = deflate(&s->zs, flush);
        if (rc == Z_STREAM_ERROR) return -1;
        size_t have = ZB_SIZE - s->zs.avail_out;
        if (have && write_all(s->fd, s->zb, have, s->path)) return -1;
    } while (s->zs.avail_out == 0 || (flush == Z_FINISH && rc != Z_STREAM_END));
    return 0;
}
static int sink_write(sink *s, const void *p, size_t n)
{
    s->raw += n;
    if (!s->gz) return write_all(s->fd, p, n, s->path);
    const unsigned char *c = p;
    while (n) {
        size_t chunk = n > (1u << 30) ? (1u << 30) : n;
        s->zs.next_in = (unsigned char *)c;
        s->zs.avail_in = (uInt)chunk;
        if (sink_deflate(s, Z_NO_FLUSH)) return -1;
        c += chunk, n -= chunk;
    }
    return 0;
}
static int sink_close(sink *s)
{
    int rc = 0;
    if (s->gz) {
        s->zs.next_in = NULL;
        s->zs.avail_in = 0;
        rc = sink_deflate(s, Z_FINISH);
        deflateEnd(&s->zs);
        free(s->zb);
    }
    if (close(s->fd) && !rc) {
        fprintf(stderr, "tracegen: %s: close: %s\n", s->path, strerror(errno));
        rc = -1;
    }
    return rc;
}

/* ------------------------------------------------------------ emission */
static void e_head(obuf *b, const char *ph_cat, size_t n1, const char *name, uint32_t nlen)
{
    ob_put(b, ph_cat, n1);
    ob_put(b, name, nlen);
}
#define HEAD(b, lit, name, nlen) e_head((b), (lit), sizeof(lit) - 1, (name), (nlen))

static void emit_host(obuf *b, const model *m, const hev *e, int thr, uint64_t evidx)
{
    ob_reserve(b, 512 + e->nlen + e->alen);
    if (e->kind == HK_PY)
        HEAD(b, "  {\n    \"ph\": \"X\", \"cat\": \"python_function\", \"name\": \"", e->name, e->nlen);
    else if (e->kind == HK_UA)
        HEAD(b, "  {\n    \"ph\": \"X\", \"cat\": \"user_annotation\", \"name\": \"", e->name, e->nlen);
    else
        HEAD(b, "  {\n    \"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"", e->name, e->nlen);
    OB_LIT(b, "\", \"pid\": ");
    ob_i64(b, m->pid);
    OB_LIT(b, ", \"tid\": ");
    ob_i64(b, thr ? m->tid_bwd : m->tid_main);
    OB_LIT(b, ",\n    \"ts\": ");
    ob_us(b, e->ts);
    OB_LIT(b, ", \"dur\": ");
    ob_us(b, e->end - e->ts);
    OB_LIT(b, ",\n    \"args\": {\n      ");
    switch (e->kind) {
    case HK_PY:
        OB_LIT(b, "\"Python parent id\": ");
        if (e->seq < 0)
            OB_LIT(b, "null");
        else
            ob_i64(b, e->seq);
        OB_LIT(b, ", \"Python id\": ");
        ob_u64(b, e->id);
        if (e->modid >= 0) {
            OB_LIT(b, ", \"Python module id\": ");
            ob_i64(b, e->modid);
        }
        break;
    case HK_EVAL:
        OB_LIT(b, "\"External id\": ");
        ob_u64(b, e->id);
        OB_LIT(b, ",\"Record function id\": 0, \"Sequence number\": ");
        ob_i64(b, e->seq);
        OB_LIT(b, ", \"Fwd thread id\": 1");
        break;
    case HK_SEQ:
        OB_LIT(b, "\"External id\": ");
        ob_u64(b, e->id);
        OB_LIT(b, ",\"Sequence number\": ");
        ob_i64(b, e->seq);
        OB_LIT(b, ", \"Fwd thread id\": ");
        ob_u64(b, e->fwdtid);
        OB_LIT(b, ", \"Record function id\": 0");
        if (e->alen) {
            OB_LIT(b, ", ");
            ob_put(b, e->args, e->alen);
        }
        break;
    default:
        OB_LIT(b, "\"External id\": ");
        ob_u64(b, e->id);
        OB_LIT(b, ",\"Record function id\": 0");
        if (e->alen) {
            OB_LIT(b, ", ");
            ob_put(b, e->args, e->alen);
        }
    }
    OB_LIT(b, ", \"Ev Idx\": ");
    ob_u64(b, evidx);
    OB_LIT(b, "\n    }\n  },\n");
}

static void emit_flow(obuf *b, char ph, uint64_t id, int64_t pid, int64_t tid, int64_t ts)
{
    OB_LIT(b, "  {\n    \"ph\": \"");
    ob_putc(b, ph);
    OB_LIT(b, "\", \"id\": ");
    ob_u64(b, id);
    OB_LIT(b, ", \"pid\": ");
    ob_i64(b, pid);
    OB_LIT(b, ", \"tid\": ");
    ob_i64(b, tid);
    OB_LIT(b, ", \"ts\": ");
    ob_us(b, ts);
    if (ph == 's')
        OB_LIT(b, ",\n    \"cat\": \"ac2g\", \"name\": \"ac2g\"\n  },\n");
    else
        OB_LIT(b, ",\n    \"cat\": \"ac2g\", \"name\": \"ac2g\", \"bp\": \"e\"\n  },\n");
}

static void emit_rt(obuf *b, const model *m, const rev *r)
{
    const char *name = tg_api[r->api].name;
    int64_t tid = r->thr ? m->tid_bwd : m->tid_main;
    ob_reserve(b, 768);
    if (tg_api[r->api].driver)
        OB_LIT(b, "  {\n    \"ph\": \"X\", \"cat\": \"cuda_driver\", \"name\": \"");
    else
        OB_LIT(b, "  {\n    \"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"");
    ob_put(b, name, strlen(name));
    OB_LIT(b, "\", \"pid\": ");
    ob_i64(b, m->pid);
    OB_LIT(b, ", \"tid\": ");
    ob_i64(b, tid);
    OB_LIT(b, ",\n    \"ts\": ");
    ob_us(b, r->ts);
    OB_LIT(b, ", \"dur\": ");
    ob_us(b, r->dur);
    OB_LIT(b, ",\n    \"args\": {\n      ");
    if (r->ext) {
        OB_LIT(b, "\"External id\": ");
        ob_u64(b, r->ext);
        OB_LIT(b, ",\n      ");
    }
    OB_LIT(b, "\"cbid\": ");
    ob_u64(b, (uint64_t)tg_api[r->api].cbid);
    OB_LIT(b, ", \"correlation\": ");
    ob_u64(b, r->corr);
    OB_LIT(b, "\n    }\n  },\n");
    if (tg_api[r->api].flow == FLOW_S)
        emit_flow(b, 's', r->corr, m->pid, tid, r->ts);
    else if (tg_api[r->api].flow == FLOW_F)
        emit_flow(b, 'f', r->corr, m->pid, tid, r->ts);
}

static void emit_gpu(obuf *b, const model *m, const gev *e)
{
    const kspec *k = e->k;
    ob_reserve(b, 1024 + k->nlen + k->mlen + e->clen);
    if (k->kind == GK_KERNEL)
        HEAD(b, "  {\n    \"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"", k->name, k->nlen);
    else if (k->kind == GK_MEMCPY)
        HEAD(b, "  {\n    \"ph\": \"X\", \"cat\": \"gpu_memcpy\", \"name\": \"", k->name, k->nlen);
    else
        HEAD(b, "  {\n    \"ph\": \"X\", \"cat\": \"gpu_memset\", \"name\": \"", k->name, k->nlen);
    OB_LIT(b, "\", \"pid\": ");
    ob_u64(b, (uint64_t)m->dev);
    OB_LIT(b, ", \"tid\": ");
    ob_u64(b, e->stream);
    OB_LIT(b, ",\n    \"ts\": ");
    ob_us(b, e->ts);
    OB_LIT(b, ", \"dur\": ");
    ob_us(b, e->dur);
    OB_LIT(b, ",\n    \"args\": {\n      \"External id\": ");
    ob_u64(b, e->ext);
    if (k->kind == GK_KERNEL)
        OB_LIT(b, ",\n      \"queued\": 0, \"device\": ");
    else
        OB_LIT(b, ",\n      \"device\": ");
    ob_u64(b, (uint64_t)m->dev);
    OB_LIT(b, ", \"context\": 1,\n      \"stream\": ");
    ob_u64(b, e->stream);
    OB_LIT(b, ", \"correlation\": ");
    ob_u64(b, e->corr);
    if (k->kind == GK_KERNEL) {
        ob_put(b, k->meta, k->mlen);
        if (e->clen) ob_put(b, e->coll, e->clen);
    } else {
        OB_LIT(b, ",\n      \"bytes\": ");
        ob_i64(b, k->bytes);
        OB_LIT(b, ", \"memory bandwidth (GB/s)\": ");
        ob_fix6(b, (uint64_t)(k->bytes * 1000000 / (e->dur > 0 ? e->dur : 1)));
    }
    OB_LIT(b, "\n    }\n  },\n");
    emit_flow(b, 'f', e->corr, m->dev, e->stream, e->ts);
}

static void emit_mem(obuf *b, const model *m, const mev *e, uint64_t evidx)
{
    ob_reserve(b, 512);
    OB_LIT(b, "  {\n    \"ph\": \"i\", \"cat\": \"cpu_instant_event\", \"s\": \"t\", \"name\": \"[memory]\",\n    \"pid\": ");
    ob_i64(b, m->pid);
    OB_LIT(b, ", \"tid\": ");
    ob_i64(b, e->thr ? m->tid_bwd : m->tid_main);
    OB_LIT(b, ",\n    \"ts\": ");
    ob_us(b, e->ts);
    OB_LIT(b, ",\n    \"args\": {\n      \"Total Reserved\": ");
    ob_i64(b, e->reserved);
    OB_LIT(b, ", \"Total Allocated\": ");
    ob_i64(b, e->total);
    OB_LIT(b, ", \"Bytes\": ");
    ob_i64(b, e->bytes);
    OB_LIT(b, ", \"Addr\": ");
    ob_u64(b, e->addr);
    OB_LIT(b, ", \"Device Id\": ");
    ob_u64(b, (uint64_t)m->dev);
    OB_LIT(b, ", \"Device Type\": 1, \"Ev Idx\": ");
    ob_u64(b, evidx);
    OB_LIT(b, "\n    }\n  },\n");
}

static void emit_gua(obuf *b, const model *m, const gua *u)
{
    ob_reserve(b, 512 + u->nlen);
    HEAD(b, "  {\n    \"ph\": \"X\", \"cat\": \"gpu_user_annotation\", \"name\": \"", u->name, u->nlen);
    OB_LIT(b, "\", \"pid\": ");
    ob_u64(b, (uint64_t)m->dev);
    OB_LIT(b, ", \"tid\": ");
    ob_u64(b, u->stream);
    OB_LIT(b, ",\n    \"ts\": ");
    ob_us(b, u->ts);
    OB_LIT(b, ", \"dur\": ");
    ob_us(b, u->dur);
    OB_LIT(b, ",\n    \"args\": {\n      \"External id\": ");
    ob_u64(b, u->ext);
    OB_LIT(b, "\n    }\n  },\n");
}

/* Kineto's order: host ops per thread, instants, python frames, runtime
 * calls, GPU activity, GPU annotations. Not globally sorted by ts. */
static void emit_step(obuf *b, gen *g)
{
    const model *m = g->m;
    for (int thr = 0; thr < 2; thr++)
        for (size_t i = 0; i < g->ops[thr].n; i++) emit_host(b, m, &g->ops[thr].v[i], thr, g->st.evidx++);
    for (size_t i = 0; i < g->mem.n; i++) emit_mem(b, m, &g->mem.v[i], g->st.evidx++);
    for (size_t i = 0; i < g->py.n; i++) emit_host(b, m, &g->py.v[i], 0, g->st.evidx++);
    for (size_t i = 0; i < g->rt.n; i++) emit_rt(b, m, &g->rt.v[i]);
    for (size_t i = 0; i < g->gpu.n; i++) emit_gpu(b, m, &g->gpu.v[i]);
    for (size_t i = 0; i < g->gua.n; i++) emit_gua(b, m, &g->gua.v[i]);
}

/* ------------------------------------------------------ header, trailer */
static void emit_header(obuf *b, const model *m, int distributed)
{
    ob_puts(b, "{\n  \"schemaVersion\": 1,\n  \"deviceProperties\": [\n");
    for (int d = 0; d < m->gpn; d++)
        ob_printf(b,
                  "    {\n      \"id\": %d, \"name\": \"NVIDIA H100 80GB HBM3\", \"totalGlobalMem\": 85029158912,\n"
                  "      \"computeMajor\": 9, \"computeMinor\": 0,\n"
                  "      \"maxThreadsPerBlock\": 1024, \"maxThreadsPerMultiprocessor\": 2048,\n"
                  "      \"regsPerBlock\": 65536, \"warpSize\": 32,\n"
                  "      \"sharedMemPerBlock\": 49152, \"numSms\": 132\n"
                  "    , \"regsPerMultiprocessor\": 65536, \"sharedMemPerBlockOptin\": 232448, "
                  "\"sharedMemPerMultiprocessor\": 233472\n    }%s\n",
                  d, d + 1 < m->gpn ? "," : "");
    ob_puts(b, "  ],\n  \"cupti_version\": 22,\n  \"cuda_runtime_version\": 12040,\n");
    if (distributed) {
        ob_printf(b, "  \"distributedInfo\": {\"backend\": \"nccl\", \"rank\": %d, \"world_size\": %d, \"pg_count\": %d, \"pg_config\": [",
                  m->rank, m->world, m->tp ? 2 : 1);
        for (int i = 0; i < (m->tp ? 2 : 1); i++) {
            int p = i ? m->my_tp_pg : 0;
            ob_printf(b, "%s{\"pg_name\": \"%d\", \"pg_desc\": \"%s\", \"backend_config\": \"cuda:nccl\", \"pg_size\": %d, \"ranks\": ",
                      i ? ", " : "", p, p ? "tp_group" : "default_pg", pg_size(m, p));
            ob_reserve(b, 64);
            ob_rank_list(b, m, p);
            ob_puts(b, "}");
        }
        ob_puts(b, "], \"nccl_version\": \"2.21.5\"},\n");
    }
    uint64_t h1 = tg_mix(m->seed ^ 0x7472616365ULL ^ ((uint64_t)m->rank << 32)), h2 = tg_mix(h1);
    ob_printf(b, "  \"record_shapes\": 1,\n  \"profile_memory\": 1,\n  \"with_stack\": 1,\n  \"with_modules\": 1,\n"
                 "  \"cuda_driver_version\": 12090,\n  \"trace_id\": \"%016llX%016llX\",\n  \"traceEvents\": [\n",
              (unsigned long long)h1, (unsigned long long)h2);
}

static void emit_meta(obuf *b, const char *name, int64_t ts, int64_t pid, int64_t tid, const char *key,
                      const char *sval, int64_t ival)
{
    ob_reserve(b, 512);
    OB_LIT(b, "  {\n    \"name\": \"");
    ob_puts(b, name);
    OB_LIT(b, "\", \"ph\": \"M\", \"ts\": ");
    ob_us(b, ts);
    OB_LIT(b, ", \"pid\": ");
    ob_i64(b, pid);
    OB_LIT(b, ", \"tid\": ");
    ob_i64(b, tid);
    ob_printf(b, ",\n    \"args\": {\n      \"%s\": ", key);
    if (sval)
        ob_printf(b, "\"%s\"", sval);
    else
        ob_printf(b, "%lld", (long long)ival);
    ob_puts(b, "\n    }\n  },\n");
}
static void emit_trailer(obuf *b, const model *m, int64_t t_start, int64_t t_end, uint64_t seed)
{
    char s[96];
    emit_meta(b, "process_name", t_start, m->pid, 0, "name", "python3", 0);
    emit_meta(b, "process_labels", t_start, m->pid, 0, "labels", "CPU", 0);
    emit_meta(b, "process_sort_index", t_start, m->pid, 0, "sort_index", NULL, m->pid);
    for (int d = 0; d < m->gpn; d++) {
        snprintf(s, sizeof s, "GPU %d", d);
        emit_meta(b, "process_name", t_start, d, 0, "name", "python3", 0);
        emit_meta(b, "process_labels", t_start, d, 0, "labels", s, 0);
        emit_meta(b, "process_sort_index", t_start, d, 0, "sort_index", NULL, 5000000 + d);
    }
    int streams[4] = {tg_stream_id[SS_COMP], tg_stream_id[SS_COPY], TG_STREAM_COMM0, TG_STREAM_COMMTP};
    for (int i = 0; i < (m->tp ? 4 : 3); i++) {
        snprintf(s, sizeof s, "stream %d ", streams[i]);
        emit_meta(b, "thread_name", t_start, m->dev, streams[i], "name", s, 0);
        emit_meta(b, "thread_sort_index", t_start, m->dev, streams[i], "sort_index", NULL, streams[i]);
    }
    snprintf(s, sizeof s, "thread %lld (python3)", (long long)m->tid_main);
    emit_meta(b, "thread_name", t_start, m->pid, m->tid_main, "name", s, 0);
    emit_meta(b, "thread_sort_index", t_start, m->pid, m->tid_main, "sort_index", NULL, m->tid_main);
    snprintf(s, sizeof s, "thread %lld (pt_autograd_0)", (long long)m->tid_bwd);
    emit_meta(b, "thread_name", t_start, m->pid, m->tid_bwd, "name", s, 0);
    emit_meta(b, "thread_sort_index", t_start, m->pid, m->tid_bwd, "sort_index", NULL, m->tid_bwd);
    ob_reserve(b, 2048);
    OB_LIT(b, "  {\n    \"ph\": \"X\", \"cat\": \"Trace\", \"ts\": ");
    ob_us(b, t_start);
    OB_LIT(b, ", \"dur\": ");
    ob_us(b, t_end - t_start);
    OB_LIT(b, ",\n    \"pid\": \"Spans\", \"tid\": \"PyTorch Profiler\",\n    \"name\": \"PyTorch Profiler (0)\",\n"
              "    \"args\": {\n      \"Op count\": 0\n    }\n  },\n");
    OB_LIT(b, "  {\n    \"name\": \"process_sort_index\", \"ph\": \"M\", \"ts\": ");
    ob_us(b, t_start);
    OB_LIT(b, ",\n    \"pid\": \"Spans\", \"tid\": 0,\n    \"args\": {\n      \"sort_index\": 536870912\n    }\n  },\n");
    OB_LIT(b, "  {\n    \"name\": \"Iteration Start: PyTorch Profiler\", \"ph\": \"i\", \"s\": \"g\",\n"
              "    \"pid\": \"Traces\", \"tid\": \"Trace PyTorch Profiler\", \"ts\": ");
    ob_us(b, t_start);
    OB_LIT(b, "\n  },\n  {\n    \"name\": \"Record Window End\", \"ph\": \"i\", \"s\": \"g\",\n    \"pid\": \"\", \"tid\": \"\", \"ts\": ");
    ob_us(b, t_end);
    ob_printf(b, "\n  }\n  ],\n  \"traceName\": \"/tmp/tracegen/seed%llu/rank%d.pt.trace.json\",\n"
                 "  \"displayTimeUnit\": \"ms\",\n  \"baseTimeNanoseconds\": 1751410836000000000\n}\n",
              (unsigned long long)seed, m->rank);
}

/* ------------------------------------------------------------- driver */
typedef struct cfg {
    uint64_t size, seed;
    int gz, level, ranks, world, quiet;
    const char *out;
} cfg;

typedef struct plan { /* decided by rank 0, replayed by every other rank */
    int L;                  /* blocks per full step */
    int64_t nfull;          /* full steps before the last one */
    int lastL;              /* blocks of the last step */
    int64_t lastfill;       /* extra [memory] instants in the last step */
    int lastmode;           /* 0 training step, 1 forward-only step */
    int64_t ncoll;          /* collectives written to truth.json */
    int valid;
} plan;

typedef struct rankstat {
    uint64_t bytes, events;
    int64_t steps;
} rankstat;

static void gen_init(gen *g, const model *m, uint64_t seed)
{
    memset(g, 0, sizeof *g);
    g->m = m;
    gs_alloc(&g->st, m->npg);
    g->st.rng = tg_mix(seed ^ 0x73746570ULL);
    int64_t t0 = 2200000000000000LL + (int64_t)(tg_mix(seed ^ 0x74696d65ULL) % 50000000000000ULL);
    g->st.cur[0] = g->st.cur[1] = t0;
    for (int i = 0; i < SS_N; i++) g->st.nom[i] = g->st.act[i] = t0;
    for (int p = 0; p < m->npg; p++) g->st.pg_nom[p] = g->st.pg_act[p] = t0;
    g->st.corr = 100000 + tg_mix(seed ^ 0x636f7272ULL) % 200000;
    g->st.seq = 200 + tg_mix(seed ^ 0x736571ULL) % 4000;
    g->st.alloc = 3LL << 30;
    g->st.reserved = 4LL << 30;
    g->seqs = calloc((size_t)(m->L + 1) * SQ_N, sizeof(int64_t));
    if (!g->seqs) exit(1);
}
static void gen_reset_step(gen *g)
{
    g->ops[0].n = g->ops[1].n = g->py.n = g->rt.n = g->gpu.n = g->mem.n = g->gua.n = 0;
    g->nop[0] = g->nop[1] = g->next[0] = g->next[1] = g->npy = 0;
}
static void gen_free(gen *g)
{
    free(g->ops[0].v), free(g->ops[1].v), free(g->py.v), free(g->rt.v), free(g->gpu.v);
    free(g->mem.v), free(g->gua.v), free(g->seqs);
    gs_free(&g->st);
}
static size_t step_events(const gen *g)
{
    size_t n = g->ops[0].n + g->ops[1].n + g->mem.n + g->py.n + g->gua.n;
    for (size_t i = 0; i < g->rt.n; i++) n += 1 + (tg_api[g->rt.v[i].api].flow != FLOW_NONE);
    return n + 2 * g->gpu.n;
}

/* Generates one step into sb (and truth text into tb), from the current state. */
static void try_step(gen *g, obuf *sb, obuf *tb, int L, int64_t fill, int mode)
{
    char name[48];
    snprintf(name, sizeof name, "ProfilerStep#%lld", (long long)g->st.step + 1);
    gen_reset_step(g);
    sb->n = 0;
    if (tb) tb->n = 0;
    g->truth = tb;
    g->st.fill_left = fill;
    g->st.fill_q = fill ? (fill + 199) / 200 : 0; /* ~200 alloc sites per step */
    if (g->st.fill_q > 40) g->st.fill_q = 40;
    gen_step(g, L, name, mode);
    emit_step(sb, g);
}

static const char *ext_for(const cfg *c) { return c->gz ? ".json.gz" : ".json"; }

/* Size of one step with L blocks, from a scratch copy of the start state. */
static size_t probe(const model *m, uint64_t seed, int L)
{
    gen g;
    gen_init(&g, m, seed);
    obuf sb = {0};
    try_step(&g, &sb, NULL, L, 0, 0);
    size_t n = sb.n;
    free(sb.p);
    gen_free(&g);
    return n;
}

static int gen_rank(const cfg *c, int rank, plan *pl, FILE *truth, const char *path, rankstat *rs)
{
    double t_begin = (double)clock() / CLOCKS_PER_SEC;
    model m;
    if (!pl->valid) {
        /* pick blocks per step so a file holds ~40 steps (1..24 blocks) */
        model_build(&m, c->seed, rank, c->world, 24);
        size_t s0 = probe(&m, c->seed, 0), s2 = probe(&m, c->seed, 2);
        model_free(&m);
        double per = (double)(s2 - s0) / 2, want = (double)c->size / 40;
        int L = (int)((want - (double)s0) / per);
        pl->L = L < 1 ? 1 : L > 24 ? 24 : L;
    }
    model_build(&m, c->seed, rank, c->world, pl->L);
    gen g;
    gen_init(&g, &m, c->seed);
    int64_t t_start = g.st.cur[0] - 1234567;
    sink s;
    if (sink_open(&s, path, c->gz, c->level)) return -1;
    obuf hb = {0}, sb = {0}, tb = {0};
    emit_header(&hb, &m, c->world > 0);
    if (sink_write(&s, hb.p, hb.n)) return -1;
    obuf tr = {0};
    emit_trailer(&tr, &m, t_start, t_start + 100000000000LL, c->seed);
    int64_t budget = (int64_t)c->size - (int64_t)hb.n - (int64_t)tr.n;
    gstate save = {0};
    gs_alloc(&save, m.npg);
    int64_t written = 0, steps = 0;
    uint64_t events = 0;
    size_t s_full = 0, s_min = 0;
    obuf *tbp = truth ? &tb : NULL;
    for (;;) {
        int L = pl->L, mode = 0;
        int64_t fill = 0, last = 0;
        if (pl->valid && pl->lastL < 0 && steps >= pl->nfull) break;
        if (pl->valid) {
            if (steps < pl->nfull) {
                try_step(&g, &sb, tbp, L, 0, 0);
            } else {
                try_step(&g, &sb, tbp, pl->lastL, pl->lastfill, pl->lastmode);
                last = 1;
            }
        } else {
            int64_t remaining = budget - written;
            gs_copy(&save, &g.st, m.npg);
            if (!s_min) {
                try_step(&g, &sb, NULL, 0, 0, 0);
                s_min = sb.n;
                gs_copy(&g.st, &save, m.npg);
            }
            try_step(&g, &sb, tbp, L, 0, 0);
            s_full = sb.n;
            if (remaining < (int64_t)(s_full + s_min)) {
                /* last step: drop trailing blocks (then fall back to a
                 * forward-only step), and pad with [memory] instants */
                last = 1;
                double per = L ? (double)(s_full - s_min) / L : 1e18;
                int l2 = (int)((double)(remaining - (int64_t)s_min) / per);
                if (l2 > L) l2 = L;
                if (l2 < 0) l2 = 0;
                int fits = 0;
                for (mode = 0; mode < 2 && !fits; mode++) {
                    for (l2 = mode ? L : l2; l2 >= 0; l2--) {
                        gs_copy(&g.st, &save, m.npg);
                        try_step(&g, &sb, tbp, l2, 0, mode);
                        if ((int64_t)sb.n <= remaining) {
                            fits = 1;
                            break;
                        }
                    }
                }
                mode--;
                if (!fits) {
                    if (steps > 0) { /* nothing fits: end the trace here */
                        gs_copy(&g.st, &save, m.npg);
                        pl->nfull = steps, pl->lastL = -1, pl->lastfill = 0;
                        break;
                    }
                    l2 = 0; /* a trace needs one step, even if it overshoots */
                    gs_copy(&g.st, &save, m.npg);
                    try_step(&g, &sb, tbp, l2, 0, mode);
                }
                L = l2;
                int64_t base = (int64_t)sb.n, best = base, bestf = 0;
                if (remaining > base + 300) {
                    fill = (remaining - base) / 300;
                    for (int it = 0; it < 4 && fill > 0; it++) {
                        gs_copy(&g.st, &save, m.npg);
                        try_step(&g, &sb, tbp, L, fill, mode);
                        int64_t got = (int64_t)sb.n;
                        if (llabs(remaining - got) < llabs(remaining - best)) best = got, bestf = fill;
                        double per_ev = (double)(got - base) / (double)fill;
                        int64_t nf = fill + (int64_t)((double)(remaining - got) / per_ev);
                        if (nf == fill || nf < 0) break;
                        fill = nf;
                    }
                    fill = bestf;
                    gs_copy(&g.st, &save, m.npg);
                    try_step(&g, &sb, tbp, L, fill, mode);
                }
                pl->nfull = steps, pl->lastL = L, pl->lastfill = fill, pl->lastmode = mode;
            }
        }
        if (sink_write(&s, sb.p, sb.n)) return -1;
        if (truth && tb.n && fwrite(tb.p, 1, tb.n, truth) != tb.n) return -1;
        written += (int64_t)sb.n;
        events += step_events(&g);
        steps++;
        if (last) break;
    }
    if (!pl->valid) pl->valid = 1;
    if (truth) pl->ncoll = g.st.truth_n;
    int64_t t_end = g.st.cur[0];
    for (int i = 0; i < SS_N; i++)
        if (g.st.act[i] > t_end) t_end = g.st.act[i];
    for (int p = 0; p < m.npg; p++)
        if (g.st.pg_act[p] > t_end) t_end = g.st.pg_act[p];
    tr.n = 0;
    emit_trailer(&tr, &m, t_start, t_end + 2345, c->seed);
    int rc = sink_write(&s, tr.p, tr.n);
    events += (uint64_t)(3 * (m.gpn + 1) + 2 * ((m.tp ? 4 : 3) + 2) + 4);
    if (sink_close(&s)) rc = -1;
    rs->bytes = s.raw, rs->events = events, rs->steps = steps;
    if (!c->quiet) {
        double dt = (double)clock() / CLOCKS_PER_SEC - t_begin;
        fprintf(stderr, "tracegen: %s: %llu bytes, %lld steps (%d blocks), %llu events, %.2f s cpu, %.0f MB/s\n",
                path, (unsigned long long)s.raw, (long long)steps, pl->L, (unsigned long long)events, dt,
                dt > 0 ? (double)s.raw / dt / 1e6 : 0.0);
    }
    free(hb.p), free(sb.p), free(tb.p), free(tr.p);
    gs_free(&save);
    gen_free(&g);
    model_free(&m);
    return rc;
}

/* ------------------------------------------------------------ CLI */
static const char *USAGE =
    "usage: tracegen --size SIZE [--seed N] [--gzip] [--gzip-level L] [--ranks N] [-q] -o PATH\n"
    "\n"
    "Writes a synthetic PyTorch profiler (Kineto JSON) trace of about SIZE bytes of\n"
    "JSON: a data-parallel ViT training loop on H100s (conv patch embedding, flash\n"
    "SDPA, GEMMs, layer norms, MoE blocks with all_to_allv, DDP gradient allreduce,\n"
    "fused AdamW, loss.item() sync), Kineto's layout and event order, streamed with\n"
    "bounded memory. Same arguments give byte-identical output.\n"
    "\n"
    "  --size SIZE      uncompressed JSON bytes per file: 64K, 10M, 2G, 1T or bytes\n"
    "                   (K/M/G/T = 1024-based). Output lands within ~0.1% of\n"
    "                   SIZE; the smallest possible trace is about 65K.\n"
    "  --seed N         model shape, timings and ids derive from N (default 1)\n"
    "  --gzip           write gzip (zlib), level 1 unless --gzip-level\n"
    "  --gzip-level L   0..9\n"
    "  --ranks N        -o is a directory (created) holding rank_0.json ...\n"
    "                   rank_{N-1}.json (.gz with --gzip), each of SIZE, plus\n"
    "                   truth.json listing every collective. Without --ranks the\n"
    "                   single file is rank 0 of an 8-rank job.\n"
    "  -o PATH          output file (or directory with --ranks)\n"
    "  -q               no summary line on stderr\n"
    "\n"
    "Planted collective timings (all ranks share one op sequence; the k-th\n"
    "collective of process group pg (0 = world; j = 1..N/2 = TP pair {2j-2, 2j-1},\n"
    "present when N >= 4 is even) is the same collective on every member rank r).\n"
    "Times in ns:\n"
    "  arrival(pg,k,r) = 1000*((7k + 3r + 5pg) mod 11) + (r == N-1 && N > 1 ? 5000 : 0)\n"
    "  tail(pg,k,r)    = 100*((k + 3r + pg) mod 7)            (0..600)\n"
    "  xfer            = 6000 + ceil(floor(bytes*f) / bw), f = 2(n-1)/n allreduce,\n"
    "                    (n-1)/n allgather/reduce_scatter/all_to_allv, 1 broadcast\n"
    "                    (n = group size, bytes = full message: out for allgather,\n"
    "                    in otherwise), bw = 150 B/ns in one 8-GPU node, 45 across\n"
    "  kernel ts(r)     = t0 + arrival(pg,k,r)\n"
    "  kernel end(r)    = t0 + max_r' arrival(pg,k,r') + xfer + tail(pg,k,r)\n"
    "  so the last rank to arrive waits for nobody and every rank ends within 0.6 us.\n"
    "  t0 (common to all ranks) and every rank's ts/dur as written are in truth.json.\n"
    "See docs/TRACEGEN.md.\n";

static int parse_u64(const char *s, uint64_t *out)
{
    char *e;
    errno = 0;
    unsigned long long v = strtoull(s, &e, 10);
    if (errno || e == s || *e || s[0] == '-') return -1;
    *out = v;
    return 0;
}
static int parse_size(const char *s, uint64_t *out)
{
    char *e;
    errno = 0;
    double v = strtod(s, &e);
    if (errno || e == s || v <= 0 || s[0] == '-') return -1;
    double mul = 1;
    switch (*e) {
    case 'k': case 'K': mul = 1024.0, e++; break;
    case 'm': case 'M': mul = 1048576.0, e++; break;
    case 'g': case 'G': mul = 1073741824.0, e++; break;
    case 't': case 'T': mul = 1099511627776.0, e++; break;
    default: break;
    }
    if (*e == 'i' && e[1] == 'B') e += 2;
    else if (*e == 'B') e++;
    if (*e) return -1;
    *out = (uint64_t)(v * mul);
    return *out ? 0 : -1;
}
static int mkdir_p(const char *path)
{
    char tmp[4096];
    size_t n = strlen(path);
    if (n == 0 || n >= sizeof tmp) return -1;
    memcpy(tmp, path, n + 1);
    for (char *p = tmp + 1; *p; p++) {
        if (*p != '/') continue;
        *p = 0;
        if (mkdir(tmp, 0755) && errno != EEXIST) return -1;
        *p = '/';
    }
    if (mkdir(tmp, 0755) && errno != EEXIST) return -1;
    struct stat st;
    return stat(tmp, &st) == 0 && S_ISDIR(st.st_mode) ? 0 : -1;
}

static void truth_footer(FILE *f, const cfg *c, const plan *pl, int64_t ncoll)
{
    model m;
    model_build(&m, c->seed, 0, c->world, pl->L);
    fprintf(f, "\n  ],\n  \"num_collectives\": %lld,\n  \"generator\": \"tracegen\",\n  \"seed\": %llu,\n  \"world_size\": %d,\n"
               "  \"size\": %llu,\n  \"gzip\": %s,\n  \"gpus_per_node\": %d,\n  \"tp_size\": %d,\n",
            (long long)ncoll, (unsigned long long)c->seed, c->world, (unsigned long long)c->size,
            c->gz ? "true" : "false", m.gpn, m.tp);
    fprintf(f, "  \"model\": {\"hidden\": %lld, \"heads\": %lld, \"seq\": %lld, \"batch\": %lld, \"blocks\": %d, "
               "\"experts_per_rank\": %lld, \"steps\": %lld, \"last_step_blocks\": %d},\n",
            (long long)m.H, (long long)m.NH, (long long)m.S, (long long)m.Bt, pl->L, (long long)m.E,
            (long long)(pl->nfull + (pl->lastL >= 0)), pl->lastL >= 0 ? pl->lastL : pl->L);
    fprintf(f, "  \"planted\": {\"arrival_ns\": \"1000*((7*k + 3*r + 5*pg) %% 11) + (r == world_size-1 and world_size > 1 ? 5000 : 0)\", "
               "\"tail_ns\": \"100*((k + 3*r + pg) %% 7)\", \"tail_max_ns\": %d, "
               "\"xfer_ns\": \"6000 + ceil(full_bytes*f/bw); f: allreduce 2(n-1)/n, broadcast 1 (0 if n == 1), others (n-1)/n; bw 150 B/ns within a node, 45 across\", "
               "\"ts\": \"t0 + arrival\", \"end\": \"t0 + max_arrival + xfer + tail\"},\n",
            TG_TAIL_MAX);
    fprintf(f, "  \"process_groups\": [");
    for (int p = 0; p < m.npg; p++) {
        obuf b = {0};
        ob_reserve(&b, 64);
        ob_rank_list(&b, &m, p);
        fprintf(f, "%s\n    {\"pg_name\": \"%d\", \"pg_desc\": \"%s\", \"stream\": %d, \"ranks\": %.*s}", p ? "," : "", p,
                p ? "tp_group" : "default_pg", p ? TG_STREAM_COMMTP : TG_STREAM_COMM0, (int)b.n, b.p);
        free(b.p);
    }
    fprintf(f, "\n  ],\n  \"files\": [");
    for (int r = 0; r < c->world; r++) fprintf(f, "%s\"rank_%d%s\"", r ? ", " : "", r, ext_for(c));
    fprintf(f, "]\n}\n");
    model_free(&m);
}

int main(int argc, char **argv)
{
    cfg c = {0};
    c.seed = 1, c.level = 1;
    int have_size = 0, have_level = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            fputs(USAGE, stdout);
            return 0;
        } else if (!strcmp(a, "--gzip")) {
            c.gz = 1;
        } else if (!strcmp(a, "-q") || !strcmp(a, "--quiet")) {
            c.quiet = 1;
        } else if (!strcmp(a, "--size") && v) {
            if (parse_size(v, &c.size)) goto bad_value;
            have_size = 1, i++;
        } else if (!strcmp(a, "--seed") && v) {
            if (parse_u64(v, &c.seed)) goto bad_value;
            i++;
        } else if (!strcmp(a, "--gzip-level") && v) {
            uint64_t l;
            if (parse_u64(v, &l) || l > 9) goto bad_value;
            c.level = (int)l, have_level = 1, i++;
        } else if (!strcmp(a, "--ranks") && v) {
            uint64_t n;
            if (parse_u64(v, &n) || n < 1 || n > 4096) goto bad_value;
            c.ranks = (int)n, i++;
        } else if (!strcmp(a, "-o") && v) {
            c.out = v, i++;
        } else {
            fprintf(stderr, "tracegen: unknown or incomplete option '%s' (see --help)\n", a);
            return 2;
        }
        continue;
    bad_value:
        fprintf(stderr, "tracegen: bad value for %s: '%s'\n", a, v);
        return 2;
    }
    if (!have_size || !c.out) {
        fprintf(stderr, "tracegen: --size and -o are required (see --help)\n");
        return 2;
    }
    if (have_level) c.gz = 1;
    plan pl = {0};
    rankstat rs;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    uint64_t total = 0;
    if (!c.ranks) {
        c.world = 8;
        if (gen_rank(&c, 0, &pl, NULL, c.out, &rs)) {
            unlink(c.out);
            return 1;
        }
        total = rs.bytes;
    } else {
        c.world = c.ranks;
        if (mkdir_p(c.out)) {
            fprintf(stderr, "tracegen: cannot create directory %s: %s\n", c.out, strerror(errno));
            return 1;
        }
        size_t plen = strlen(c.out) + 64;
        char *path = malloc(plen), *tpath = malloc(plen), *tfinal = malloc(plen);
        if (!path || !tpath || !tfinal) return 1;
        snprintf(tpath, plen, "%s/truth.json.tmp", c.out);
        snprintf(tfinal, plen, "%s/truth.json", c.out);
        FILE *tf = fopen(tpath, "w");
        if (!tf) {
            fprintf(stderr, "tracegen: %s: %s\n", tpath, strerror(errno));
            return 1;
        }
        static char tbuf[1 << 16];
        setvbuf(tf, tbuf, _IOFBF, sizeof tbuf);
        fputs("{\n  \"collectives\": [", tf);
        for (int r = 0; r < c.world; r++) {
            snprintf(path, plen, "%s/rank_%d%s", c.out, r, ext_for(&c));
            if (gen_rank(&c, r, &pl, r == 0 ? tf : NULL, path, &rs)) {
                unlink(path);
                fclose(tf);
                unlink(tpath);
                return 1;
            }
            total += rs.bytes;
        }
        truth_footer(tf, &c, &pl, pl.ncoll);
        if (fclose(tf) || rename(tpath, tfinal)) {
            fprintf(stderr, "tracegen: %s: %s\n", tfinal, strerror(errno));
            return 1;
        }
        free(path), free(tpath), free(tfinal);
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double dt = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
    if (!c.quiet)
        fprintf(stderr, "tracegen: total %llu bytes of JSON in %.2f s wall (%.0f MB/s)\n",
                (unsigned long long)total, dt, dt > 0 ? (double)total / dt / 1e6 : 0.0);
    return 0;
}
