/* schema.h — names and codes of the stored trace tables: the contract
 * between ingest (which writes them) and query (which reads them). The
 * store itself is format-agnostic; this file says what a trace looks like.
 * docs/ARCHITECTURE.md describes the same layout for reading a store by hand.
 * Bump TL_SCHEMA_VERSION (store/store.h) whenever this changes. */
#ifndef TL_SCHEMA_H
#define TL_SCHEMA_H

#include <stddef.h>
#include <stdint.h>

/* Absent integer value in a promoted-arg column. */
#define TL_NONE INT64_MIN

/* Event kind, derived from the category string at ingest
 * (spec/pytorch-report.md §2.3; categories are compared case-sensitively). */
typedef enum tl_kind {
    TL_K_OTHER = 0,
    TL_K_CPU_OP = 1,          /* cpu_op */
    TL_K_PYTHON = 2,          /* python_function */
    TL_K_RUNTIME = 3,         /* cuda_runtime */
    TL_K_DRIVER = 4,          /* cuda_driver */
    TL_K_KERNEL = 5,          /* kernel */
    TL_K_MEMCPY = 6,          /* gpu_memcpy */
    TL_K_MEMSET = 7,          /* gpu_memset */
    TL_K_USER_ANNOTATION = 8, /* user_annotation */
    TL_K_GPU_ANNOTATION = 9,  /* gpu_user_annotation */
    TL_K_COUNT
} tl_kind;

static inline int tl_kind_is_gpu(int k) { return k == TL_K_KERNEL || k == TL_K_MEMCPY || k == TL_K_MEMSET; }
static inline int tl_kind_is_runtime(int k) { return k == TL_K_RUNTIME || k == TL_K_DRIVER; }

/* The µs value of a stored ns time (ts, dur) as the reference holds it:
 * the double nearest to ns / 1000, i.e. to the trace's decimal µs text
 * (its JSON parser's value) whenever that text had at most 3 decimals.
 * (double)ns / 1000.0 rounds twice once |ns| >= 2^53 (epoch timestamps,
 * ~1.7e18 ns): there ns = q * 1000 + r, with q and r / 1000.0 exact or
 * rounded off every midpoint of the result's spacing (>= 2^-9 µs: the
 * midpoints are dyadic, r / 1000 is not unless exact), so their sum is
 * rounded once; past |q| >= 2^53 the spacing is 2 and the result is the
 * even integer nearest to ns / 1000, rounded half to even. */
static inline double tl_ns_us(int64_t ns)
{
    const uint64_t lim = (uint64_t)1 << 53; /* |x| < lim: x + lim < 2 lim */
    if ((uint64_t)ns + lim < 2 * lim) return (double)ns / 1000.0;
    int64_t q = ns / 1000, r = ns % 1000;
    if ((uint64_t)q + lim < 2 * lim) return (double)q + (double)r / 1000.0;
    uint64_t m = ns < 0 ? 0 - (uint64_t)ns : (uint64_t)ns;
    uint64_t h = m / 2000, rem = m % 2000;
    h += rem > 1000 || (rem == 1000 && (h & 1));
    double v = (double)(h * 2);
    return ns < 0 ? -v : v;
}

/* Tables (see docs/ARCHITECTURE.md). Row i of every events column is the
 * i-th complete event in file order. */
#define TL_T_EVENTS "events"
#define TL_T_FLOWS "flows"
#define TL_T_META "meta"
#define TL_T_EXTRA "extra"
/* The args the reports read, apart from the whole args column: the rows
 * (ascending) of communication kernels (kind kernel, name containing
 * nccl/rccl/cross_device_reduce, any case) and of events whose args have
 * an "Output type" key, with their args text. Written when the catalog
 * says "args_sel":true (Kineto ingest); the collective analysis and the
 * Reduce perf model then read these instead of decoding the args column. */
#define TL_T_ARGS_SEL "args_sel"
/* Args keys the reports read by name from args_sel rows: the collective
 * analysis (query/multirank/collective_read.c), coll_analysis (query/pytorch/coll.c)
 * and the Reduce perf model (query/pytorch/perf.c). Each text is written
 * once, here, so that TL_ARGS_SEL_KEYS keeps what the readers look for. */
#define TL_ARG_PG_NAME "Process Group Name"
#define TL_ARG_PG_RANKS "Process Group Ranks"
#define TL_ARG_COLL_NAME "Collective name"
#define TL_ARG_GROUP_SIZE "Group size"
#define TL_ARG_DTYPE "dtype"
#define TL_ARG_IN_NELEMS "In msg nelems"
#define TL_ARG_OUT_NELEMS "Out msg nelems"
#define TL_ARG_IN_SPLIT "In split size"
#define TL_ARG_OUT_SPLIT "Out split size"
#define TL_ARG_STREAM "stream"
#define TL_ARG_RANK "rank"
#define TL_ARG_OUTPUT_TYPE "Output type"
/* The args members an args_sel row keeps (the rest of its args text is
 * dropped: a kernel's args have ~24 members, ~550 bytes, of which these
 * readers use a few): the collective analysis' (query/multirank/collective_read.c)
 * and coll_analysis' (query/pytorch/coll.c) keys and the Reduce model's
 * "Output type". A reader of any other key must read the args column.
 * Rows of stores written before keep their whole args text. NULL-ended. */
extern const char *const TL_ARGS_SEL_KEYS[];
/* §5.1 communication kernel name: contains nccl, rccl or
 * cross_device_reduce, any case (ingest/comm_kernel.c). */
int tl_is_comm_kernel_name(const char *s, size_t n);
/* Event kind of a category (exact, case-sensitive): Kineto's categories
 * (§2.3) and rocprofv3's Perfetto ones (kernel_dispatch, memory_copy,
 * hip_api, hsa_api; ingest/event_kind.c). */
int tl_kind_from_cat(const char *c, size_t n);
#define TL_C_ROW "row"             /* args_sel, sub_ns: u32 event row */
/* Events whose ts or dur text has nonzero digits below the ns (e.g. a dur
 * written with 18 decimals), which their ns columns round off: rows
 * ascending, with both times as the µs doubles nearest their texts (the
 * reference's values; a time without such digits is tl_ns_us of its ns).
 * Written when there is any such event (the catalog's "sub_ns" counts
 * them); tl_trace_ts_us / tl_trace_dur_us read through it. */
#define TL_T_SUB_NS "sub_ns"
#define TL_C_TS_US "ts_us"         /* sub_ns: f64 µs */
#define TL_C_DUR_US "dur_us"       /* sub_ns: f64 µs */

/* events columns */
#define TL_C_UID "uid"             /* u32: position in traceEvents (reference UID) */
#define TL_C_TS "ts"               /* i64 ns */
#define TL_C_DUR "dur"             /* i64 ns */
#define TL_C_NAME "name"           /* str */
#define TL_C_CAT "cat"             /* str */
#define TL_C_KIND "kind"           /* u8 tl_kind */
#define TL_C_PID "pid"             /* i64 (string id when pid_str) */
#define TL_C_TID "tid"             /* i64 (string id when tid_str) */
#define TL_C_IDFLAGS "idflags"     /* u8: bit0 pid is a string id, bit1 tid is */
#define TL_C_CORR "correlation"    /* i64, TL_NONE when absent */
#define TL_C_EXTID "external_id"   /* i64 */
#define TL_C_STREAM "stream"       /* i64 */
#define TL_C_DEVICE "device"       /* i64 */
#define TL_C_SEQ "seq"             /* i64 Sequence number */
#define TL_C_FWDTID "fwd_tid"      /* i64 Fwd thread id */
#define TL_C_INDIMS "input_dims"   /* str: raw JSON text of args["Input Dims"] */
#define TL_C_INTYPE "input_type"
#define TL_C_INSTRIDES "input_strides"
#define TL_C_CONCRETE "concrete_inputs"
#define TL_C_GRID "grid"
#define TL_C_BLOCK "block"
#define TL_C_ARGS "args"           /* blob: raw JSON text of the args object */
/* edge columns, filled by the tree builder (row indexes, -1 = none) */
#define TL_C_PARENT "parent"       /* i32: tree parent, python functions excluded */
#define TL_C_PARENT_PY "parent_py" /* i32: tree parent, python functions included */
#define TL_C_LAUNCHER "launcher"   /* i32: GPU rows: kernel launcher (§4.4), no python */
#define TL_C_LINKED "linked"       /* u8: GPU rows: reached from a runtime call (§4.3) */

/* flows columns */
#define TL_C_F_PH "ph"             /* u8 's' or 'f' */
#define TL_C_F_ID "id"             /* i64 */
/* (plus uid, cat, name, pid, tid, idflags, ts as for events) */

/* args_sel columns: row (u32), args (blob) */

/* meta columns: uid, name (str), pid, tid, idflags (bit2: has tid), args (blob) */

#endif
