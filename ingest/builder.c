/* builder.c — filling a tl_build and committing it to the store (see
 * builder.h). Strings are interned in one dictionary per trace; cold
 * columns and the args blob are encoded chunk by chunk as rows arrive. */
#include "ingest/builder_internal.h"
#include "ingest/json.h"

#include <stdlib.h>
#include <string.h>

static const struct { const char *name; tl_ctype type; } COLD_DEFS[COLD_N] = {
    [COLD_STREAM] = {TL_C_STREAM, TL_CT_I64},     [COLD_DEVICE] = {TL_C_DEVICE, TL_CT_I64},
    [COLD_SEQ] = {TL_C_SEQ, TL_CT_I64},           [COLD_FWDTID] = {TL_C_FWDTID, TL_CT_I64},
    [COLD_INDIMS] = {TL_C_INDIMS, TL_CT_U32},     [COLD_INTYPE] = {TL_C_INTYPE, TL_CT_U32},
    [COLD_INSTRIDES] = {TL_C_INSTRIDES, TL_CT_U32}, [COLD_CONCRETE] = {TL_C_CONCRETE, TL_CT_U32},
    [COLD_GRID] = {TL_C_GRID, TL_CT_U32},         [COLD_BLOCK] = {TL_C_BLOCK, TL_CT_U32},
};

/* A blob chunk is sealed at this many bytes even if it has fewer rows.
 * Small, because everything that handles args holds whole chunks: the
 * args buffer here, the encode queue, and readers that decode one chunk at
 * a time (the report's args pass). 65,536 rows of Kineto args are 20-30
 * MiB; 1 MiB keeps each of those small while LZ4 (64 KiB window) compresses
 * as well as before and per-chunk costs stay negligible. */
#define BLOB_CHUNK_BYTES (1u << 20)

static void drop_rows(tl_build *b);

tl_build *tl_build_new(void)
{
    tl_build *b = tl_xcalloc(1, sizeof *b);
    strcpy(b->format, "kineto");
    tl_hidx_init(&b->hidx, 1 << 11);
    for (int i = 0; i < COLD_N; i++) {
        b->cold[i].name = COLD_DEFS[i].name;
        b->cold[i].type = COLD_DEFS[i].type;
        b->cold[i].buf = tl_xmalloc((size_t)TL_CHUNK_ROWS * tl_ctype_size(COLD_DEFS[i].type));
    }
    b->cold_cap = TL_CHUNK_ROWS;
    tl_vec_push(&b->args.off, 0);
    tl_vec_push(&b->m_args.off, 0);
    tl_vec_push(&b->sel_args.off, 0);
    tl_build_rows_init(b);
    b->w = tl_wtrace_new(0);
    tl_wtrace_start_worker(b->w);
    /* id 0: absent; id 1: "" */
    tl_vec_push(&b->soff, 0);
    tl_buf_append(&b->sbytes, "", 1);
    tl_build_str(b, "", 0);
    return b;
}

void tl_build_free(tl_build *b)
{
    if (!b) return;
    drop_rows(b);
    tl_wtrace_free(b->w);
    for (size_t i = 0; i < b->extra_names.n; i++) free(b->extra_names.v[i]);
    tl_vec_free(&b->extra_names);
    free(b);
}

void tl_build_set_format(tl_build *b, const char *format)
{
    snprintf(b->format, sizeof b->format, "%s", format);
}

void tl_blob_add(blob_acc *a, const char *s, size_t n)
{
    tl_buf_append(&a->bytes, s, n);
    tl_buf_putc(&a->bytes, 0);
    tl_vec_push(&a->off, a->bytes.n);
}

static void flush_cold(tl_build *b)
{
    for (int i = 0; i < COLD_N; i++) {
        cold_col *c = &b->cold[i];
        if (!c->n || (b->shard && c->type == TL_CT_U32)) continue; /* see grow_cold_ids */
        tl_wtrace_put_chunk(b->w, TL_T_EVENTS, c->name, c->type, c->buf, c->n);
        c->n = 0;
    }
}

static void flush_args(tl_build *b)
{
    uint32_t rows = (uint32_t)(b->args.off.n - 1);
    if (!rows) return;
    tl_wtrace_put_blob_chunk(b->w, TL_T_EVENTS, TL_C_ARGS, b->args.off.v,
                             b->args.bytes.p ? b->args.bytes.p : "", rows);
    b->args_rows += rows;
    b->args.bytes.n = 0;
    b->args.off.n = 0;
    tl_vec_push(&b->args.off, 0);
}

void tl_build_select_args(tl_build *b) { b->sel_on = 1; }
int tl_build_selects_args(const tl_build *b) { return b->sel_on; }

static void flush_sel(tl_build *b)
{
    uint32_t rows = (uint32_t)b->sel_row.n;
    if (!rows) return;
    tl_wtrace_put_chunk(b->w, TL_T_ARGS_SEL, TL_C_ROW, TL_CT_U32, b->sel_row.v, rows);
    tl_wtrace_put_blob_chunk(b->w, TL_T_ARGS_SEL, TL_C_ARGS, b->sel_args.off.v,
                             b->sel_args.bytes.p ? b->sel_args.bytes.p : "", rows);
    b->sel_row.n = 0;
    b->sel_args.bytes.n = 0;
    b->sel_args.off.n = 0;
    tl_vec_push(&b->sel_args.off, 0);
}

/* Is row e one of the args_sel table's (schema.h)? */
static int args_selected(tl_build *b, const tl_ev_in *e)
{
    if (e->args_sel) return 1;
    if (e->kind != TL_K_KERNEL) return 0;
    uint32_t id = e->name;
    while (b->name_comm.n <= id) tl_vec_push(&b->name_comm, 0);
    if (!b->name_comm.v[id]) {
        size_t n;
        const char *s = tl_build_strget(b, id, &n);
        b->name_comm.v[id] = tl_is_comm_kernel_name(s, n) ? 2 : 1;
    }
    return b->name_comm.v[id] == 2;
}

const char *const TL_ARGS_SEL_KEYS[] = {
    TL_ARG_PG_NAME,  TL_ARG_PG_RANKS,  TL_ARG_COLL_NAME, TL_ARG_GROUP_SIZE, TL_ARG_DTYPE,       TL_ARG_IN_NELEMS,
    TL_ARG_OUT_NELEMS, TL_ARG_IN_SPLIT, TL_ARG_OUT_SPLIT, TL_ARG_STREAM,    TL_ARG_RANK,        TL_ARG_OUTPUT_TYPE,
    NULL};

static int sel_key(const char *k, size_t kn)
{
    for (const char *const *p = TL_ARGS_SEL_KEYS; *p; p++)
        if (strlen(*p) == kn && !memcmp(*p, k, kn)) return 1;
    return 0;
}

/* args (a JSON object the parser validated) with only its members of
 * TL_ARGS_SEL_KEYS, each copied verbatim, in order, into out; -1 when it
 * does not scan as an object (then the row keeps its whole text). */
static int sel_filter(const char *args, size_t n, tl_buf *out)
{
    tl_err err = {0};
    tl_json j;
    tl_json_init_buf(&j, args, n, "args", &err);
    if (tl_json_expect(&j, '{', "{")) return -1;
    out->n = 0;
    tl_buf_putc(out, '{');
    int first = 1, any = 0;
    for (;;) {
        const char *k, *v;
        size_t kn, vn;
        if (tl_json_obj_next(&j, &first, &k, &kn)) return -1;
        if (!k) break;
        if (tl_json_skip_validated(&j, &v, &vn)) return -1; /* the parser checked it */
        if (!sel_key(k, kn)) continue;
        /* the member verbatim, from its key's opening quote (keys are raw
         * spans of args, json.h) to the end of its value */
        const char *ks = k - 1;
        if (ks < args || ks >= args + n || *ks != '"') return -1;
        if (any) tl_buf_putc(out, ',');
        tl_buf_append(out, ks, (size_t)(v + vn - ks));
        any = 1;
    }
    tl_buf_putc(out, '}');
    return 0;
}

void tl_build_sel_add(tl_build *b, uint32_t row, const char *args, size_t n)
{
    tl_vec_push(&b->sel_row, row);
    if (sel_filter(args, n, &b->sel_tmp) == 0) tl_blob_add(&b->sel_args, b->sel_tmp.p, b->sel_tmp.n);
    else tl_blob_add(&b->sel_args, args, n);
    if (!b->shard && (b->sel_row.n == TL_CHUNK_ROWS || b->sel_args.bytes.n >= BLOB_CHUNK_BYTES)) flush_sel(b);
}

void tl_build_flush_chunks(tl_build *b)
{
    flush_cold(b);
    flush_args(b);
    if (!b->shard) flush_sel(b); /* a shard's rows are renumbered by tl_build_append */
}

/* A shard's string-id cold columns (U32) grow instead of being flushed:
 * tl_build_append maps their ids. Its other cold columns are flushed as
 * in any builder. */
static void grow_cold_ids(tl_build *b)
{
    b->cold_cap *= 2;
    for (int i = 0; i < COLD_N; i++)
        if (b->cold[i].type == TL_CT_U32)
            b->cold[i].buf = tl_xrealloc(b->cold[i].buf, (size_t)b->cold_cap * tl_ctype_size(b->cold[i].type));
}

void tl_build_time_text(tl_build *b, int ts_float, int dur_float)
{
    b->time_text |= (uint8_t)(1 | (ts_float ? 2 : 0) | (dur_float ? 4 : 0));
}

void tl_build_event(tl_build *b, const tl_ev_in *e)
{
    if (b->sel_on && e->args && args_selected(b, e)) tl_build_sel_add(b, (uint32_t)b->n, e->args, e->args_len);
    if (e->ts_us != 0 || e->dur_us != 0) {
        tl_vec_push(&b->sub_row, (uint32_t)b->n);
        tl_vec_push(&b->sub_ts, e->ts_us != 0 ? e->ts_us : tl_ns_us(e->ts));
        tl_vec_push(&b->sub_dur, e->dur_us != 0 ? e->dur_us : tl_ns_us(e->dur));
    }
    uint8_t idflags = (uint8_t)((e->pid_is_str ? 1 : 0) | (e->tid_is_str ? 2 : 0));
    if (b->shard) {
        tl_vec_push(&b->uid, e->uid);
        tl_vec_push(&b->ts, e->ts);
        tl_vec_push(&b->dur, e->dur);
        tl_vec_push(&b->name, e->name);
        tl_vec_push(&b->cat, e->cat);
        tl_vec_push(&b->kind, e->kind);
        tl_vec_push(&b->pid, e->pid);
        tl_vec_push(&b->tid, e->tid);
        tl_vec_push(&b->idflags, idflags);
        tl_vec_push(&b->corr, e->corr);
        tl_vec_push(&b->ext_id, e->ext_id);
        b->n++;
    } else {
        tl_build_add_row(b, e->uid, e->ts, e->dur, e->name, e->cat, e->kind, e->pid, e->tid, idflags, e->corr,
                         e->ext_id);
    }

    int64_t i64s[4] = {e->stream, e->device, e->seq, e->fwd_tid};
    uint32_t u32s[6] = {e->in_dims, e->in_type, e->in_strides, e->concrete, e->grid, e->block};
    uint32_t row = b->cold[COLD_STREAM].n;
    for (int i = 0; i < 4; i++) ((int64_t *)b->cold[COLD_STREAM + i].buf)[row] = i64s[i];
    for (int i = 0; i < 4; i++) b->cold[COLD_STREAM + i].n++;
    row = b->cold[COLD_INDIMS].n;
    for (int i = 0; i < 6; i++) ((uint32_t *)b->cold[COLD_INDIMS + i].buf)[row] = u32s[i];
    for (int i = 0; i < 6; i++) b->cold[COLD_INDIMS + i].n++;
    if (b->shard) {
        if (b->cold[COLD_INDIMS].n == b->cold_cap) grow_cold_ids(b);
        if (b->cold[COLD_STREAM].n == TL_CHUNK_ROWS) flush_cold(b); /* the U32 ones are never full here */
    } else if (b->cold[COLD_STREAM].n == TL_CHUNK_ROWS) {
        flush_cold(b);
    }

    tl_blob_add(&b->args, e->args ? e->args : "", e->args ? e->args_len : 0);
    if (b->args.off.n - 1 == TL_CHUNK_ROWS || b->args.bytes.n >= BLOB_CHUNK_BYTES) flush_args(b);
}

void tl_build_flow(tl_build *b, uint32_t uid, char ph, uint32_t cat, uint32_t name, int64_t id,
                   int64_t pid, int64_t tid, uint8_t pid_is_str, uint8_t tid_is_str, int64_t ts)
{
    if (!b->shard) {
        tl_build_add_flow(b, uid, (uint8_t)ph, cat, name, id, pid, tid,
                          (uint8_t)((pid_is_str ? 1 : 0) | (tid_is_str ? 2 : 0)), ts);
        return;
    }
    tl_vec_push(&b->f_uid, uid);
    tl_vec_push(&b->f_ph, (uint8_t)ph);
    tl_vec_push(&b->f_cat, cat);
    tl_vec_push(&b->f_name, name);
    tl_vec_push(&b->f_id, id);
    tl_vec_push(&b->f_pid, pid);
    tl_vec_push(&b->f_tid, tid);
    tl_vec_push(&b->f_idflags, (uint8_t)((pid_is_str ? 1 : 0) | (tid_is_str ? 2 : 0)));
    tl_vec_push(&b->f_ts, ts);
    b->nflows++;
}

void tl_build_meta(tl_build *b, uint32_t uid, uint32_t name, int64_t pid, int64_t tid,
                   uint8_t pid_is_str, uint8_t tid_is_str, uint8_t has_tid, const char *args,
                   size_t args_len)
{
    tl_vec_push(&b->m_uid, uid);
    tl_vec_push(&b->m_name, name);
    tl_vec_push(&b->m_pid, pid);
    tl_vec_push(&b->m_tid, tid);
    tl_vec_push(&b->m_idflags, (uint8_t)((pid_is_str ? 1 : 0) | (tid_is_str ? 2 : 0) | (has_tid ? 4 : 0)));
    tl_blob_add(&b->m_args, args ? args : "", args ? args_len : 0);
    b->nmeta++;
}

void tl_build_other(tl_build *b, uint32_t uid, char ph)
{
    (void)uid;
    if (ph == 'i' || ph == 'I') b->n_instant++;
    else b->n_other++;
}

void tl_build_toplevel(tl_build *b, const char *key, size_t klen, const char *json, size_t n)
{
    tl_buf_putc(&b->toplevel, ',');
    tl_buf_json_str(&b->toplevel, key, klen);
    tl_buf_putc(&b->toplevel, ':');
    tl_buf_append(&b->toplevel, json, n);
}

void tl_build_extra(tl_build *b, const char *name, const void *data, size_t n)
{
    uint64_t off[2] = {0, n + 1};
    char *tmp = tl_xmalloc(n + 1);
    memcpy(tmp, data, n);
    tmp[n] = 0;
    tl_wtrace_put_blob_chunk(b->w, TL_T_EXTRA, name, off, tmp, 1);
    free(tmp);
    tl_vec_push(&b->extra_names, tl_xstrdup(name));
}

size_t tl_build_nevents(const tl_build *b) { return b->n; }

static const char *KIND_NAMES[TL_K_COUNT] = {"other", "cpu_op", "python_function", "cuda_runtime",
    "cuda_driver", "kernel", "gpu_memcpy", "gpu_memset", "user_annotation", "gpu_user_annotation"};

/* Frees the row data of every table (the string dictionary included);
 * the counts stay. */
static void drop_rows(tl_build *b)
{
    tl_buf_free(&b->sbytes);
    tl_vec_free(&b->soff);
    tl_hidx_free(&b->hidx);
    tl_vec_free(&b->uid); tl_vec_free(&b->ts); tl_vec_free(&b->dur); tl_vec_free(&b->name);
    tl_vec_free(&b->cat); tl_vec_free(&b->kind); tl_vec_free(&b->pid); tl_vec_free(&b->tid);
    tl_vec_free(&b->idflags); tl_vec_free(&b->corr); tl_vec_free(&b->ext_id);
    tl_build_rows_free(b);
    tl_vec_free(&b->pin_row); tl_vec_free(&b->pin_parent); tl_vec_free(&b->pin_parent_py);
    for (int i = 0; i < COLD_N; i++) {
        free(b->cold[i].buf);
        b->cold[i].buf = NULL;
    }
    tl_buf_free(&b->args.bytes); tl_vec_free(&b->args.off);
    tl_vec_free(&b->name_comm); tl_vec_free(&b->sel_row);
    tl_vec_free(&b->sub_row); tl_vec_free(&b->sub_ts); tl_vec_free(&b->sub_dur);
    tl_buf_free(&b->sel_args.bytes); tl_vec_free(&b->sel_args.off);
    tl_buf_free(&b->sel_tmp);
    free(b->parent); free(b->parent_py); free(b->launcher); free(b->linked);
    b->parent = b->parent_py = b->launcher = NULL;
    b->linked = NULL;
    tl_vec_free(&b->f_uid); tl_vec_free(&b->f_cat); tl_vec_free(&b->f_name); tl_vec_free(&b->f_ph);
    tl_vec_free(&b->f_idflags); tl_vec_free(&b->f_id); tl_vec_free(&b->f_pid); tl_vec_free(&b->f_tid);
    tl_vec_free(&b->f_ts);
    tl_vec_free(&b->m_uid); tl_vec_free(&b->m_name); tl_vec_free(&b->m_pid); tl_vec_free(&b->m_tid);
    tl_vec_free(&b->m_idflags);
    tl_buf_free(&b->m_args.bytes); tl_vec_free(&b->m_args.off);
    tl_buf_free(&b->toplevel);
}

int tl_build_check_times(const tl_build *b, const char *path, tl_err *err)
{
    int64_t span;
    if (b->bad_row != SIZE_MAX)
        return tl_errf(err, TL_EFORMAT, "%s: event %zu: start %lld ns + duration %lld ns is out of range",
                       path, b->bad_row, (long long)b->bad_ts, (long long)b->bad_dur);
    if (b->n && __builtin_sub_overflow(b->ts_max, b->ts_min, &span))
        return tl_errf(err, TL_EFORMAT, "%s: the trace spans from %lld ns to %lld ns, out of the int64 ns range",
                       path, (long long)b->ts_min, (long long)b->ts_max);
    return 0;
}

void tl_build_seal(tl_build *b, const tl_build_info *info)
{
    if (b->sealed) return;
    b->sealed = 1;
    tl_wtrace *w = b->w;
    flush_cold(b);
    flush_args(b);
    flush_sel(b);
    size_t n = b->n;
    tl_build_rows_seal(b);
    if (n && b->parent) {
        tl_wtrace_put_column(w, TL_T_EVENTS, TL_C_PARENT, TL_CT_I32, b->parent, n);
        tl_wtrace_put_column(w, TL_T_EVENTS, TL_C_PARENT_PY, TL_CT_I32, b->parent_py, n);
        tl_wtrace_put_column(w, TL_T_EVENTS, TL_C_LAUNCHER, TL_CT_I32, b->launcher, n);
        tl_wtrace_put_column(w, TL_T_EVENTS, TL_C_LINKED, TL_CT_U8, b->linked, n);
    }
    if (b->sub_row.n) {
        size_t m = b->sub_row.n;
        tl_wtrace_put_column(w, TL_T_SUB_NS, TL_C_ROW, TL_CT_U32, b->sub_row.v, m);
        tl_wtrace_put_column(w, TL_T_SUB_NS, TL_C_TS_US, TL_CT_F64, b->sub_ts.v, m);
        tl_wtrace_put_column(w, TL_T_SUB_NS, TL_C_DUR_US, TL_CT_F64, b->sub_dur.v, m);
    }
    if (b->nmeta) {
        size_t m = b->nmeta;
        tl_wtrace_put_column(w, TL_T_META, TL_C_UID, TL_CT_U32, b->m_uid.v, m);
        tl_wtrace_put_column(w, TL_T_META, TL_C_NAME, TL_CT_U32, b->m_name.v, m);
        tl_wtrace_put_column(w, TL_T_META, TL_C_PID, TL_CT_I64, b->m_pid.v, m);
        tl_wtrace_put_column(w, TL_T_META, TL_C_TID, TL_CT_I64, b->m_tid.v, m);
        tl_wtrace_put_column(w, TL_T_META, TL_C_IDFLAGS, TL_CT_U8, b->m_idflags.v, m);
        uint32_t rows = (uint32_t)(b->m_args.off.n - 1);
        /* meta is small; chunk it like any blob */
        for (uint32_t done = 0; done < rows;) {
            uint32_t k = rows - done > TL_CHUNK_ROWS ? TL_CHUNK_ROWS : rows - done;
            tl_wtrace_put_blob_chunk(w, TL_T_META, TL_C_ARGS, b->m_args.off.v + done, b->m_args.bytes.p, k);
            done += k;
        }
    }
    /* dictionary */
    {
        tl_vec_push(&b->soff, b->sbytes.n);
        size_t ns = b->soff.n - 1;
        for (size_t done = 0; done < ns;) {
            uint32_t k = ns - done > TL_CHUNK_ROWS ? TL_CHUNK_ROWS : (uint32_t)(ns - done);
            tl_wtrace_put_blob_chunk(w, "dict", "str", b->soff.v + done, b->sbytes.p, k);
            done += k;
        }
        b->soff.n--; /* keep the builder usable */
    }

    /* catalog record */
    const uint64_t *kinds = b->kinds;
    int64_t ts_min = b->ts_min, ts_max = b->ts_max, g_min = b->g_min, g_max = b->g_max;
    uint64_t ngpu = b->ngpu;
    char hex[17];
    tl_id_format(info->id, hex);
    tl_buf c = {0};
    tl_buf_printf(&c, "{\"id\":\"%s\",\"schema\":%d,\"format\":", hex, TL_SCHEMA_VERSION);
    tl_buf_json_str(&c, info->format ? info->format : b->format, strlen(info->format ? info->format : b->format));
    tl_buf_puts(&c, ",\"path\":");
    tl_buf_json_str(&c, info->path ? info->path : "", strlen(info->path ? info->path : ""));
    tl_buf_printf(&c, ",\"source_bytes\":%llu,\"json_bytes\":%llu,\"ingest_time_ns\":%lld",
                  (unsigned long long)info->src_bytes, (unsigned long long)info->json_bytes,
                  (long long)tl_wall_ns());
    if (info->rank >= 0) tl_buf_printf(&c, ",\"rank\":%lld", (long long)info->rank);
    else tl_buf_puts(&c, ",\"rank\":null");
    tl_buf_puts(&c, ",\"config\":");
    if (info->config) tl_buf_json_str(&c, info->config, strlen(info->config)); else tl_buf_puts(&c, "null");
    tl_buf_puts(&c, ",\"run\":");
    if (info->run) tl_buf_json_str(&c, info->run, strlen(info->run)); else tl_buf_puts(&c, "null");
    tl_buf_printf(&c, ",\"labels\":%s", info->labels_json ? info->labels_json : "{}");
    if (b->sel_on) tl_buf_puts(&c, ",\"args_sel\":true");
    if (b->sub_row.n) tl_buf_printf(&c, ",\"sub_ns\":%zu", b->sub_row.n);
    tl_buf_printf(&c, ",\"events\":%zu,\"flows\":%zu,\"meta_events\":%zu,\"instant_events\":%llu,"
                  "\"other_events\":%llu,\"strings\":%zu,\"gpu_events\":%llu",
                  n, b->nflows, b->nmeta, (unsigned long long)b->n_instant,
                  (unsigned long long)b->n_other, b->soff.n, (unsigned long long)ngpu);
    if (n) tl_buf_printf(&c, ",\"ts_min_ns\":%lld,\"ts_max_ns\":%lld", (long long)ts_min, (long long)ts_max);
    if (ngpu) tl_buf_printf(&c, ",\"gpu_ts_min_ns\":%lld,\"gpu_ts_max_ns\":%lld", (long long)g_min, (long long)g_max);
    if (b->time_text & 1)
        tl_buf_printf(&c, ",\"ts_text\":\"%s\",\"dur_text\":\"%s\"", b->time_text & 2 ? "float" : "int",
                      b->time_text & 4 ? "float" : "int");
    tl_buf_puts(&c, ",\"kinds\":{");
    for (int k = 0; k < TL_K_COUNT; k++)
        tl_buf_printf(&c, "%s\"%s\":%llu", k ? "," : "", KIND_NAMES[k], (unsigned long long)kinds[k]);
    tl_buf_puts(&c, "},\"extra\":[");
    for (size_t i = 0; i < b->extra_names.n; i++) {
        if (i) tl_buf_putc(&c, ',');
        tl_buf_json_str(&c, b->extra_names.v[i], strlen(b->extra_names.v[i]));
    }
    tl_buf_puts(&c, "],\"metadata\":{");
    if (b->toplevel.n) tl_buf_append(&c, b->toplevel.p + 1, b->toplevel.n - 1);
    tl_buf_puts(&c, "}}");
    tl_wtrace_set_catalog(w, c.p);
    tl_buf_free(&c);
    tl_wtrace_set_id(w, info->id); /* waits for every chunk to be encoded */
    /* The chunks hold everything now: the rows go. A sealed trace waiting
     * for the writer (corpus ingest) holds only its encoded form, and the
     * write does not have the decoded columns beside LMDB's dirty pages. */
    drop_rows(b);
}

int tl_build_commit(tl_build *b, tl_store *s, const tl_build_info *info, tl_err *err)
{
    tl_build_seal(b, info);
    return tl_store_write(s, b->w, err);
}
