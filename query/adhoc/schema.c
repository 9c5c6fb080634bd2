/* schema.c — the tables and columns ad-hoc queries see, shared by the
 * verb engine and the SQL virtual tables so both answer over one schema.
 * Column names are SQL-friendly (lower case, '_'); report sheets keep their
 * reference headers in `store` so either spelling resolves. */
#include "query/adhoc/adhoc_internal.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Trace-level columns: present in every table, one value per trace. */
static const aq_coldef TRACE_COLS[] = {
    {"trace_id", AQ_STR, AQ_S_TRACE_ID, NULL, "trace id (16 hex digits, content hash of the source file)"},
    {"path", AQ_STR, AQ_S_PATH, NULL, "source file path at ingest"},
    {"format", AQ_STR, AQ_S_FORMAT, NULL, "kineto, rocprof or xplane"},
    {"config", AQ_STR, AQ_S_CONFIG, NULL, "configuration (folder of a multi-rank corpus), null if none"},
    {"rank", AQ_INT, AQ_S_RANK, NULL, "rank, null if unknown"},
    {"run", AQ_STR, AQ_S_RUN, NULL, "run name, null if none"},
    {"ingest_time", AQ_INT, AQ_S_INGEST_TIME, NULL, "ingest wall-clock time, ns since the epoch"},
    {"ingested", AQ_STR, AQ_S_INGESTED, NULL, "ingest time as local YYYY-MM-DD HH:MM:SS"},
    {"events", AQ_INT, AQ_S_CATNUM, "events", "complete events in the trace"},
    {"gpu_events", AQ_INT, AQ_S_CATNUM, "gpu_events", "GPU events (kernel, memcpy, memset)"},
    {"n_kernels", AQ_INT, AQ_S_KINDCOUNT, "kernel", "kernel events"},
    {"n_cpu_ops", AQ_INT, AQ_S_KINDCOUNT, "cpu_op", "cpu_op events"},
    {"flows", AQ_INT, AQ_S_CATNUM, "flows", "flow events"},
    {"source_bytes", AQ_INT, AQ_S_CATNUM, "source_bytes", "size of the source file"},
    {"ts_min", AQ_INT, AQ_S_CATNUM, "ts_min_ns", "first event start, ns"},
    {"ts_max", AQ_INT, AQ_S_CATNUM, "ts_max_ns", "last event end, ns"},
    {"gpu_ts_min", AQ_INT, AQ_S_CATNUM, "gpu_ts_min_ns", "first GPU event start, ns"},
    {"gpu_ts_max", AQ_INT, AQ_S_CATNUM, "gpu_ts_max_ns", "last GPU event end, ns"},
    {"gpu_span", AQ_INT, AQ_S_GPU_SPAN, NULL, "gpu_ts_max - gpu_ts_min, ns"},
    {"label.KEY", AQ_STR, AQ_S_LABEL, NULL, "user label KEY (ingest --label KEY=VALUE); also label_KEY"},
    {"meta.PATH", AQ_DYN, AQ_S_META, NULL, "value at a dotted PATH of the trace's top-level metadata"},
};

static const aq_coldef EVENT_COLS[] = {
    {"uid", AQ_INT, AQ_S_U32, TL_C_UID, "position of the event in traceEvents (the reference UID)"},
    {"ts", AQ_INT, AQ_S_I64, TL_C_TS, "start, ns"},
    {"dur", AQ_INT, AQ_S_I64, TL_C_DUR, "duration, ns"},
    {"end_ts", AQ_INT, AQ_S_END, NULL, "ts + dur, ns"},
    {"name", AQ_STR, AQ_S_STR, TL_C_NAME, "event name"},
    {"cat", AQ_STR, AQ_S_STR, TL_C_CAT, "category as written in the trace"},
    {"kind", AQ_STR, AQ_S_KIND, TL_C_KIND, "kind: cpu_op, python_function, cuda_runtime, cuda_driver, kernel, gpu_memcpy, gpu_memset, user_annotation, gpu_user_annotation, other"},
    {"pid", AQ_DYN, AQ_S_IDTEXT, TL_C_PID, "process id (text when the trace names it)"},
    {"tid", AQ_DYN, AQ_S_IDTEXT, TL_C_TID, "thread id (text when the trace names it)"},
    {"correlation", AQ_INT, AQ_S_I64, TL_C_CORR, "correlation id"},
    {"external_id", AQ_INT, AQ_S_I64, TL_C_EXTID, "External id"},
    {"stream", AQ_INT, AQ_S_I64, TL_C_STREAM, "GPU stream"},
    {"device", AQ_INT, AQ_S_I64, TL_C_DEVICE, "GPU device"},
    {"seq", AQ_INT, AQ_S_I64, TL_C_SEQ, "Sequence number"},
    {"fwd_tid", AQ_INT, AQ_S_I64, TL_C_FWDTID, "Fwd thread id"},
    {"input_dims", AQ_STR, AQ_S_STR, TL_C_INDIMS, "args Input Dims (JSON text)"},
    {"input_type", AQ_STR, AQ_S_STR, TL_C_INTYPE, "args Input type (JSON text)"},
    {"input_strides", AQ_STR, AQ_S_STR, TL_C_INSTRIDES, "args Input Strides (JSON text)"},
    {"concrete_inputs", AQ_STR, AQ_S_STR, TL_C_CONCRETE, "args Concrete Inputs (JSON text)"},
    {"grid", AQ_STR, AQ_S_STR, TL_C_GRID, "kernel grid (JSON text)"},
    {"block", AQ_STR, AQ_S_STR, TL_C_BLOCK, "kernel block (JSON text)"},
    {"args", AQ_STR, AQ_S_BLOB, TL_C_ARGS, "raw args JSON"},
    {"args.KEY", AQ_DYN, AQ_S_ARGKEY, TL_C_ARGS, "one key of args (text; compares as a number with numbers)"},
    {"parent", AQ_INT, AQ_S_ROWUID, TL_C_PARENT, "uid of the tree parent (python functions skipped)"},
    {"parent_py", AQ_INT, AQ_S_ROWUID, TL_C_PARENT_PY, "uid of the tree parent (python functions included)"},
    {"parent_name", AQ_STR, AQ_S_ROWNAME, TL_C_PARENT, "name of the tree parent"},
    {"launcher", AQ_INT, AQ_S_ROWUID, TL_C_LAUNCHER, "GPU events: uid of the launching cpu_op (or runtime call)"},
    {"launcher_name", AQ_STR, AQ_S_ROWNAME, TL_C_LAUNCHER, "GPU events: name of the launcher"},
    {"linked", AQ_INT, AQ_S_U8, TL_C_LINKED, "GPU events: 1 if reached from a runtime call"},
};

static const aq_coldef OP_COLS[] = {
    {"uid", AQ_INT, AQ_S_U32, TL_C_UID, "position of the op in traceEvents (the reference UID)"},
    {"parent", AQ_INT, AQ_S_ROWUID, TL_C_PARENT, "uid of the parent op, null at the top"},
    {"parent_name", AQ_STR, AQ_S_ROWNAME, TL_C_PARENT, "name of the parent op"},
    {"name", AQ_STR, AQ_S_STR, TL_C_NAME, "op name (aten::mm, ...)"},
    {"ts", AQ_INT, AQ_S_I64, TL_C_TS, "start, ns"},
    {"dur", AQ_INT, AQ_S_I64, TL_C_DUR, "CPU duration, ns"},
    {"end_ts", AQ_INT, AQ_S_END, NULL, "ts + dur, ns"},
    {"kernel_time", AQ_INT, AQ_S_KTIME, NULL, "sum of dur of the GPU events (kernels, memcpy, memset) this op launched directly, ns"},
    {"kernel_count", AQ_INT, AQ_S_KCOUNT, NULL, "number of GPU events this op launched directly"},
    {"args", AQ_STR, AQ_S_BLOB, TL_C_ARGS, "raw args JSON"},
    {"args.KEY", AQ_DYN, AQ_S_ARGKEY, TL_C_ARGS, "one key of args"},
    {"input_dims", AQ_STR, AQ_S_STR, TL_C_INDIMS, "Input Dims (JSON text)"},
    {"input_type", AQ_STR, AQ_S_STR, TL_C_INTYPE, "Input type (JSON text)"},
    {"input_strides", AQ_STR, AQ_S_STR, TL_C_INSTRIDES, "Input Strides (JSON text)"},
    {"concrete_inputs", AQ_STR, AQ_S_STR, TL_C_CONCRETE, "Concrete Inputs (JSON text)"},
    {"pid", AQ_DYN, AQ_S_IDTEXT, TL_C_PID, "process id"},
    {"tid", AQ_DYN, AQ_S_IDTEXT, TL_C_TID, "thread id"},
    {"seq", AQ_INT, AQ_S_I64, TL_C_SEQ, "Sequence number"},
    {"fwd_tid", AQ_INT, AQ_S_I64, TL_C_FWDTID, "Fwd thread id"},
    {"external_id", AQ_INT, AQ_S_I64, TL_C_EXTID, "External id"},
    {"parent_py", AQ_INT, AQ_S_ROWUID, TL_C_PARENT_PY, "uid of the parent, python functions included"},
};

static const aq_coldef KERNEL_COLS[] = {
    {"uid", AQ_INT, AQ_S_U32, TL_C_UID, "position of the kernel in traceEvents (the reference UID)"},
    {"launcher", AQ_INT, AQ_S_ROWUID, TL_C_LAUNCHER, "uid of the launching cpu_op (or runtime call), null if unlinked"},
    {"launcher_name", AQ_STR, AQ_S_ROWNAME, TL_C_LAUNCHER, "name of the launcher"},
    {"name", AQ_STR, AQ_S_STR, TL_C_NAME, "kernel name"},
    {"ts", AQ_INT, AQ_S_I64, TL_C_TS, "start, ns"},
    {"dur", AQ_INT, AQ_S_I64, TL_C_DUR, "duration, ns"},
    {"end_ts", AQ_INT, AQ_S_END, NULL, "ts + dur, ns"},
    {"device", AQ_INT, AQ_S_I64, TL_C_DEVICE, "GPU device"},
    {"stream", AQ_INT, AQ_S_I64, TL_C_STREAM, "GPU stream"},
    {"correlation", AQ_INT, AQ_S_I64, TL_C_CORR, "correlation id"},
    {"grid", AQ_STR, AQ_S_STR, TL_C_GRID, "grid (JSON text)"},
    {"block", AQ_STR, AQ_S_STR, TL_C_BLOCK, "block (JSON text)"},
    {"parent", AQ_INT, AQ_S_ROWUID, TL_C_PARENT, "uid of the runtime call that launched it"},
    {"linked", AQ_INT, AQ_S_U8, TL_C_LINKED, "1 if reached from a runtime call"},
    {"pid", AQ_DYN, AQ_S_IDTEXT, TL_C_PID, "process id"},
    {"tid", AQ_DYN, AQ_S_IDTEXT, TL_C_TID, "thread id"},
    {"external_id", AQ_INT, AQ_S_I64, TL_C_EXTID, "External id"},
    {"args", AQ_STR, AQ_S_BLOB, TL_C_ARGS, "raw args JSON"},
    {"args.KEY", AQ_DYN, AQ_S_ARGKEY, TL_C_ARGS, "one key of args"},
};

static const aq_coldef GPU_TIMELINE_COLS[] = {
    {"type", AQ_STR, AQ_S_REPCOL, "type", "computation_time, exposed_comm_time, exposed_memcpy_time, busy_time, idle_time, total_time, total_comm_time, total_memcpy_time"},
    {"time_ms", AQ_FLOAT, AQ_S_REPCOL, "time ms", "time, ms"},
    {"percent", AQ_FLOAT, AQ_S_REPCOL, "percent", "share of total_time, %"},
};

static const aq_coldef OPS_SUMMARY_COLS[] = {
    {"name", AQ_STR, AQ_S_REPCOL, "name", "launcher op name"},
    {"total_direct_kernel_time_sum", AQ_FLOAT, AQ_S_REPCOL, "total_direct_kernel_time_sum", "µs"},
    {"total_subtree_kernel_time_sum", AQ_FLOAT, AQ_S_REPCOL, "total_subtree_kernel_time_sum", "µs"},
    {"total_direct_kernel_time_ms", AQ_FLOAT, AQ_S_REPCOL, "total_direct_kernel_time_ms", "ms"},
    {"total_subtree_kernel_time_ms", AQ_FLOAT, AQ_S_REPCOL, "total_subtree_kernel_time_ms", "ms"},
    {"count", AQ_INT, AQ_S_REPCOL, "Count", "launcher instances"},
    {"categories", AQ_STR, AQ_S_REPCOL, "Categories", "op categories (Python list text)"},
    {"percentage", AQ_FLOAT, AQ_S_REPCOL, "Percentage (%)", "share of direct kernel time, %"},
    {"cumulative_percentage", AQ_FLOAT, AQ_S_REPCOL, "Cumulative Percentage (%)", "running sum of percentage"},
};

static const aq_coldef OPS_BY_CAT_COLS[] = {
    {"op_category", AQ_STR, AQ_S_REPCOL, "op category", "op category"},
    {"count", AQ_INT, AQ_S_REPCOL, "Count", "launcher instances"},
    {"total_direct_kernel_time_ms", AQ_FLOAT, AQ_S_REPCOL, "total_direct_kernel_time_ms", "ms"},
    {"percentage", AQ_FLOAT, AQ_S_REPCOL, "Percentage (%)", "%"},
    {"cumulative_percentage", AQ_FLOAT, AQ_S_REPCOL, "Cumulative Percentage (%)", "%"},
};

static const aq_coldef OPS_UNIQUE_COLS[] = {
    {"name", AQ_STR, AQ_S_REPCOL, "name", "op name"},
    {"op_category", AQ_STR, AQ_S_REPCOL, "op category", "op category"},
    {"input_dims", AQ_STR, AQ_S_REPCOL, "Input Dims", "Input Dims (Python literal text)"},
    {"input_type", AQ_STR, AQ_S_REPCOL, "Input type", "Input type"},
    {"input_strides", AQ_STR, AQ_S_REPCOL, "Input Strides", "Input Strides"},
    {"concrete_inputs", AQ_STR, AQ_S_REPCOL, "Concrete Inputs", "Concrete Inputs"},
    {"operation_count", AQ_INT, AQ_S_REPCOL, "operation_count", "instances"},
    {"total_direct_kernel_time_sum", AQ_FLOAT, AQ_S_REPCOL, "total_direct_kernel_time_sum", "µs"},
    {"total_direct_kernel_time_mean", AQ_FLOAT, AQ_S_REPCOL, "total_direct_kernel_time_mean", "µs"},
    {"total_direct_kernel_time_median", AQ_FLOAT, AQ_S_REPCOL, "total_direct_kernel_time_median", "µs"},
    {"total_direct_kernel_time_std", AQ_FLOAT, AQ_S_REPCOL, "total_direct_kernel_time_std", "µs"},
    {"total_direct_kernel_time_min", AQ_FLOAT, AQ_S_REPCOL, "total_direct_kernel_time_min", "µs"},
    {"total_direct_kernel_time_max", AQ_FLOAT, AQ_S_REPCOL, "total_direct_kernel_time_max", "µs"},
    {"total_subtree_kernel_time_sum", AQ_FLOAT, AQ_S_REPCOL, "total_subtree_kernel_time_sum", "µs"},
    {"ex_uid", AQ_INT, AQ_S_REPCOL, "ex_UID", "uid of the first instance"},
    {"percentage", AQ_FLOAT, AQ_S_REPCOL, "Percentage (%)", "%"},
    {"cumulative_percentage", AQ_FLOAT, AQ_S_REPCOL, "Cumulative Percentage (%)", "%"},
};

static const aq_coldef KERNEL_SUMMARY_COLS[] = {
    {"parent_op_category", AQ_STR, AQ_S_REPCOL, "Parent op category", "category of the parent cpu_op"},
    {"parent_cpu_op", AQ_STR, AQ_S_REPCOL, "Parent cpu_op", "parent cpu_op (or launcher) name"},
    {"kernel_name", AQ_STR, AQ_S_REPCOL, "Kernel name", "kernel name"},
    {"kernel_stream", AQ_INT, AQ_S_REPCOL, "Kernel stream", "stream"},
    {"kernel_duration_us_sum", AQ_FLOAT, AQ_S_REPCOL, "Kernel duration (µs)_sum", "µs"},
    {"kernel_duration_us_count", AQ_INT, AQ_S_REPCOL, "Kernel duration (µs)_count", "kernels"},
    {"kernel_duration_us_mean", AQ_FLOAT, AQ_S_REPCOL, "Kernel duration (µs)_mean", "µs"},
    {"kernel_duration_us_min", AQ_FLOAT, AQ_S_REPCOL, "Kernel duration (µs)_min", "µs"},
    {"kernel_duration_us_max", AQ_FLOAT, AQ_S_REPCOL, "Kernel duration (µs)_max", "µs"},
    {"percent_of_kernels_time", AQ_FLOAT, AQ_S_REPCOL, "Percent of kernels time (%)", "%"},
    {"percent_of_total_time", AQ_FLOAT, AQ_S_REPCOL, "Percent of total time (%)", "%"},
};

#define N(a) (sizeof(a) / sizeof *(a))
static const aq_tabdef TABLES[] = {
    {"kernels", AQ_TAB_ROWS, TL_K_KERNEL, KERNEL_COLS, N(KERNEL_COLS),
     "trace_id,uid,name,ts,dur,device,stream,launcher_name",
     "GPU events of category kernel (memcpy/memset excluded)"},
    {"ops", AQ_TAB_ROWS, TL_K_CPU_OP, OP_COLS, N(OP_COLS),
     "trace_id,uid,parent,name,ts,dur,kernel_time,input_dims",
     "CPU ops (category cpu_op)"},
    {"events", AQ_TAB_ROWS, -1, EVENT_COLS, N(EVENT_COLS),
     "trace_id,uid,kind,name,ts,dur",
     "every complete event of every kind"},
    {"traces", AQ_TAB_TRACES, -1, NULL, 0,
     "trace_id,format,config,rank,events,gpu_events,gpu_span,ingested,path",
     "the catalog: one row per stored trace"},
    {"gpu_timeline", AQ_TAB_REPORT, -1, GPU_TIMELINE_COLS, N(GPU_TIMELINE_COLS),
     "trace_id,type,time_ms,percent", "PyTorch report sheet gpu_timeline, per trace"},
    {"ops_summary", AQ_TAB_REPORT, -1, OPS_SUMMARY_COLS, N(OPS_SUMMARY_COLS),
     "trace_id,name,total_direct_kernel_time_ms,count,categories,percentage",
     "PyTorch report sheet ops_summary, per trace"},
    {"ops_summary_by_category", AQ_TAB_REPORT, -1, OPS_BY_CAT_COLS, N(OPS_BY_CAT_COLS),
     "trace_id,op_category,count,total_direct_kernel_time_ms,percentage",
     "PyTorch report sheet ops_summary_by_category, per trace"},
    {"ops_unique_args", AQ_TAB_REPORT, -1, OPS_UNIQUE_COLS, N(OPS_UNIQUE_COLS),
     "trace_id,name,input_dims,operation_count,total_direct_kernel_time_sum",
     "PyTorch report sheet ops_unique_args, per trace"},
    {"kernel_summary", AQ_TAB_REPORT, -1, KERNEL_SUMMARY_COLS, N(KERNEL_SUMMARY_COLS),
     "trace_id,parent_cpu_op,kernel_name,kernel_duration_us_sum,kernel_duration_us_count",
     "PyTorch report sheet kernel_summary, per trace"},
};

static const char *TABLE_NAMES[N(TABLES) + 1];

const char *const *tl_adhoc_tables(void)
{
    for (size_t i = 0; i < N(TABLES); i++) TABLE_NAMES[i] = TABLES[i].name;
    TABLE_NAMES[N(TABLES)] = NULL;
    return TABLE_NAMES;
}

const aq_tabdef *aq_table_find(const char *name)
{
    for (size_t i = 0; i < N(TABLES); i++)
        if (!strcasecmp(TABLES[i].name, name)) return &TABLES[i];
    return NULL;
}

const aq_tabdef *aq_table_at(size_t i) { return i < N(TABLES) ? &TABLES[i] : NULL; }

const aq_coldef *aq_trace_cols(size_t *n)
{
    *n = N(TRACE_COLS);
    return TRACE_COLS;
}

void aq_norm_name(const char *s, char *out, size_t n)
{
    size_t k = 0;
    int us = 0;
    for (; *s && k + 1 < n; s++) {
        unsigned char c = (unsigned char)*s;
        if (isalnum(c) || c >= 0x80) {
            if (us && k) out[k++] = '_';
            us = 0;
            if (k + 1 < n) out[k++] = (char)(c >= 0x80 ? c : tolower(c));
        } else {
            us = 1;
        }
    }
    out[k] = 0;
    /* "µs" reads as "us" so kernel_duration_us_sum matches "(µs)". */
    char *m;
    while ((m = strstr(out, "\xc2\xb5"))) {
        *m = 'u';
        memmove(m + 1, m + 2, strlen(m + 2) + 1);
    }
}

static int is_dynamic(const aq_coldef *d) { return d->src == AQ_S_LABEL || d->src == AQ_S_META || d->src == AQ_S_ARGKEY; }

/* Levenshtein distance, for "did you mean". */
static size_t edit_distance(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    if (la > 64 || lb > 64) return 99;
    size_t row[65];
    for (size_t j = 0; j <= lb; j++) row[j] = j;
    for (size_t i = 1; i <= la; i++) {
        size_t prev = row[0];
        row[0] = i;
        for (size_t j = 1; j <= lb; j++) {
            size_t cur = row[j];
            size_t sub = prev + (tolower((unsigned char)a[i - 1]) != tolower((unsigned char)b[j - 1]));
            size_t v = row[j] + 1 < row[j - 1] + 1 ? row[j] + 1 : row[j - 1] + 1;
            row[j] = v < sub ? v : sub;
            prev = cur;
        }
    }
    return row[lb];
}

static int set_ref(aq_colref *out, const aq_coldef *d, const char *arg, const char *display, tl_arena *a)
{
    out->def = d;
    out->arg = arg ? tl_arena_strdup(a, arg) : NULL;
    out->display = tl_arena_strdup(a, display);
    return 0;
}

int aq_resolve_col(const aq_tabdef *t, const char *name, aq_colref *out, tl_arena *a, char *hint,
                   size_t hintsz)
{
    if (hint && hintsz) hint[0] = 0;
    memset(out, 0, sizeof *out);
    const aq_coldef *lists[2] = {t->cols, TRACE_COLS};
    size_t lens[2] = {t->ncols, N(TRACE_COLS)};
    /* pass 0: exact; 1: case-insensitive; 2: normalised (also against the report header) */
    char nn[256], cn[256];
    aq_norm_name(name, nn, sizeof nn);
    for (int pass = 0; pass < 3; pass++) {
        for (int l = 0; l < 2; l++) {
            for (size_t i = 0; i < lens[l]; i++) {
                const aq_coldef *d = &lists[l][i];
                if (is_dynamic(d)) continue;
                int hit = 0;
                if (pass == 0) hit = !strcmp(d->name, name) || (d->src == AQ_S_REPCOL && !strcmp(d->store, name));
                else if (pass == 1) hit = !strcasecmp(d->name, name) || (d->src == AQ_S_REPCOL && !strcasecmp(d->store, name));
                else {
                    aq_norm_name(d->name, cn, sizeof cn);
                    hit = !strcmp(cn, nn);
                    if (!hit && d->src == AQ_S_REPCOL) {
                        aq_norm_name(d->store, cn, sizeof cn);
                        hit = !strcmp(cn, nn);
                    }
                }
                if (hit) return set_ref(out, d, NULL, d->name, a);
            }
        }
    }
    /* dynamic columns */
    static const struct { const char *prefix; aq_src src; } DYN[] = {
        {"label.", AQ_S_LABEL}, {"labels.", AQ_S_LABEL}, {"label_", AQ_S_LABEL},
        {"meta.", AQ_S_META}, {"metadata.", AQ_S_META}, {"args.", AQ_S_ARGKEY}, {"arg.", AQ_S_ARGKEY},
    };
    for (size_t k = 0; k < N(DYN); k++) {
        size_t pl = strlen(DYN[k].prefix);
        if (strncasecmp(name, DYN[k].prefix, pl) || !name[pl]) continue;
        for (int l = 0; l < 2; l++)
            for (size_t i = 0; i < lens[l]; i++) {
                const aq_coldef *d = &lists[l][i];
                if (d->src != DYN[k].src) continue;
                char disp[300];
                const char *canon = d->src == AQ_S_LABEL ? "label." : d->src == AQ_S_META ? "meta." : "args.";
                snprintf(disp, sizeof disp, "%s%s", canon, name + pl);
                return set_ref(out, d, name + pl, disp, a);
            }
    }
    /* not found: suggest the closest name */
    if (hint && hintsz) {
        const char *best = NULL;
        size_t bd = 99;
        for (int l = 0; l < 2; l++)
            for (size_t i = 0; i < lens[l]; i++) {
                const aq_coldef *d = &lists[l][i];
                if (is_dynamic(d)) continue;
                size_t dd = edit_distance(name, d->name);
                if (dd < bd) { bd = dd; best = d->name; }
            }
        size_t lim = strlen(name) / 3;
        if (lim < 2) lim = 2;
        if (best && bd <= lim) snprintf(hint, hintsz, " (did you mean '%s'?)", best);
        else {
            /* list the table's columns, briefly */
            size_t k = (size_t)snprintf(hint, hintsz, "; %s has:", t->name);
            for (size_t i = 0; i < t->ncols && k + 40 < hintsz; i++)
                k += (size_t)snprintf(hint + k, hintsz - k, "%s %s", i ? "," : "", t->cols[i].name);
            if (k + 60 < hintsz)
                snprintf(hint + k, hintsz - k, "%s trace_id, label.KEY, config, rank, ... (--columns)", t->ncols ? "," : "");
        }
    }
    return -1;
}

static const char *type_name(aq_type t)
{
    switch (t) {
    case AQ_INT: return "int";
    case AQ_FLOAT: return "float";
    case AQ_STR: return "text";
    case AQ_DYN: return "text/number";
    }
    return "?";
}

int tl_adhoc_describe(const char *table, tl_table **out, tl_err *err)
{
    const aq_tabdef *t = aq_table_find(table);
    if (!t) return tl_errf(err, TL_EUSAGE, "unknown table '%s'", table);
    tl_table *r = tl_table_new(t->name);
    size_t c0 = tl_table_add_col(r, "column", TL_STR), c1 = tl_table_add_col(r, "type", TL_STR),
           c2 = tl_table_add_col(r, "description", TL_STR);
    for (int l = 0; l < 2; l++) {
        const aq_coldef *cols = l ? TRACE_COLS : t->cols;
        size_t n = l ? N(TRACE_COLS) : t->ncols;
        for (size_t i = 0; i < n; i++) {
            size_t row = tl_table_add_row(r);
            tl_table_set_str(r, c0, row, cols[i].name);
            tl_table_set_str(r, c1, row, type_name(cols[i].type));
            char doc[512];
            if (cols[i].src == AQ_S_REPCOL)
                snprintf(doc, sizeof doc, "%s [sheet column \"%s\"]", cols[i].doc, cols[i].store);
            else
                snprintf(doc, sizeof doc, "%s%s", cols[i].doc, l ? " [per trace]" : "");
            tl_table_set_str(r, c2, row, doc);
        }
    }
    *out = r;
    return TL_OK;
}
