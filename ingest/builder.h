/* builder.h — the in-memory form of one trace while it is being ingested,
 * and the contract between the format readers (Kineto, rocprofv3, XPlane)
 * and the store. Every reader turns its input into the same "Kineto-like"
 * event model: complete events (ph X) with int64 ns times, a category, a
 * name, pid/tid, the raw args JSON text, and a few promoted args as typed
 * columns; plus flows (ph s/f), metadata events (ph M) and the top-level
 * metadata keys. The tree/link builder (tree.c) then fills the edge columns,
 * and tl_build_commit() writes everything to the store (store.h: one
 * transaction, or several with the catalog record last for a large trace).
 *
 * Every stored column is encoded into LZ4 chunks of TL_CHUNK_ROWS rows as
 * rows arrive, and encoded chunks past 32 MiB wait in a spill file, so no
 * column is held whole; the tree build keeps what it needs of each event
 * in compact arrays (builder_rows.c, ~30 bytes an event), which bounds the
 * ingest's memory well below the size of the JSON (docs/MEMORY.md). */
#ifndef TL_BUILDER_H
#define TL_BUILDER_H

#include <stdint.h>
#include <stddef.h>
#include "base/base.h"
#include "store/store.h"
#include "ingest/schema.h"

typedef struct tl_build tl_build;

/* One complete event as a reader hands it over. Absent ints are TL_NONE,
 * absent strings are string id 0. pid/tid: when *_is_str is set the value is
 * a string id (the JSON had a string), else the integer. */
typedef struct tl_ev_in {
    uint32_t uid;        /* position in the source's event array */
    int64_t ts, dur;     /* ns */
    /* 0, or the double nearest the text of a ts / dur whose digits below
     * the ns the ns value rounds off (tl_json_us_to_ns); the builder then
     * stores the trace's sub_ns table (schema.h). Such a double is 0 only
     * when the text underflows, and then equals tl_ns_us of its ns. */
    double ts_us, dur_us;
    uint32_t name, cat;  /* string ids */
    uint8_t kind;        /* tl_kind (schema.h) */
    int64_t pid, tid;
    uint8_t pid_is_str, tid_is_str;
    int64_t corr, ext_id, stream, device, seq, fwd_tid; /* promoted args */
    uint32_t in_dims, in_type, in_strides, concrete, grid, block; /* raw JSON text ids */
    const char *args; size_t args_len; /* raw JSON of the args object, or NULL */
    uint8_t args_sel;    /* args has a key the reports read from args ("Output type") */
} tl_ev_in;

tl_build *tl_build_new(void);
void tl_build_free(tl_build *b);

/* Interns a string; id 0 means absent, id 1 is "". Stable for the build. */
uint32_t tl_build_str(tl_build *b, const char *s, size_t n);
const char *tl_build_strget(const tl_build *b, uint32_t id, size_t *len);

void tl_build_event(tl_build *b, const tl_ev_in *e);
/* A reader of JSON text times (Kineto) reports, per complete event,
 * whether its ts / dur text had a fraction or an exponent; the catalog
 * then records "ts_text" and "dur_text": "int" when every one was a JSON
 * integer (the reference keeps those as Python ints and prints them so),
 * else "float". Readers that never call this leave both out. */
void tl_build_time_text(tl_build *b, int ts_float, int dur_float);
/* The reader sets tl_ev_in.args_sel on every event whose args the reports
 * read by key: the builder then also stores the args_sel table (schema.h)
 * and marks the catalog ("args_sel":true). */
void tl_build_select_args(tl_build *b);
int tl_build_selects_args(const tl_build *b);

/* A flow event (ph 's' or 'f'), e.g. Kineto's ac2g. */
void tl_build_flow(tl_build *b, uint32_t uid, char ph, uint32_t cat, uint32_t name, int64_t id,
                   int64_t pid, int64_t tid, uint8_t pid_is_str, uint8_t tid_is_str, int64_t ts);
/* A metadata event (ph M): name is e.g. "process_name"; args is the raw args JSON. */
void tl_build_meta(tl_build *b, uint32_t uid, uint32_t name, int64_t pid, int64_t tid,
                   uint8_t pid_is_str, uint8_t tid_is_str, uint8_t has_tid,
                   const char *args, size_t args_len);
/* Counts non-X, non-flow, non-M elements (instants, counters, ...). */
void tl_build_other(tl_build *b, uint32_t uid, char ph);
/* A top-level key of the document other than the event array, raw JSON value
 * (kept verbatim in the catalog, e.g. deviceProperties, distributedInfo). */
void tl_build_toplevel(tl_build *b, const char *key, size_t klen, const char *json, size_t n);
/* Extra format-specific table (e.g. rocprof agents, XPlane HLO modules):
 * a named blob stored as table "extra", column <name>. */
void tl_build_extra(tl_build *b, const char *name, const void *data, size_t n);

/* Parallel parse of one document (kineto_split.c): a later part is read
 * into a shard builder, then appended, in document order, to the main
 * builder with tl_build_append — its string ids mapped, its event
 * positions (uid) shifted by uid_base (the main parser's element count at
 * the join), as if the main parser had read it. The shard can be freed
 * afterwards. */
tl_build *tl_build_new_shard(void);
void tl_build_append(tl_build *b, tl_build *shard, uint32_t uid_base);

/* Which reader produced this build ("kineto", "rocprof", "xplane"); the tree
 * builder applies the Kineto rules only to "kineto". */
void tl_build_set_format(tl_build *b, const char *format);

/* Number of complete events so far. */
size_t tl_build_nevents(const tl_build *b);

/* The end time ts + dur of an event in *end; nonzero when it is not
 * representable in int64 ns (readers report that as an error). */
static inline int tl_time_end(int64_t ts, int64_t dur, int64_t *end) { return __builtin_add_overflow(ts, dur, end); }
/* Checks that every event's end time and the span of the whole trace
 * (last end - first start) are representable in int64 ns, so that no
 * later sum wraps. Returns 0, or TL_EFORMAT with a message naming path. */
int tl_build_check_times(const tl_build *b, const char *path, tl_err *err);

/* Builds the host tree and runtime->GPU links exactly as
 * spec/pytorch-report.md §3-§4 (Kineto), or by correlation id alone for
 * formats without flows. Fills the edge columns. */
int tl_build_tree(tl_build *b, tl_err *err);
/* Gives host event `row` the tree parents `parent` (python functions
 * excluded) and `parent_py` (rows, or -1) in place of the ones its times
 * give; tl_build_tree applies them after the nesting. A derived trace
 * says its source's tree this way, and the graph-capture merge the tree
 * of copied events that all share one time span. */
void tl_build_pin_parent(tl_build *b, uint32_t row, int32_t parent, int32_t parent_py);
/* Catalog fields a reader or the CLI knows. */
typedef struct tl_build_info {
    uint64_t id;           /* content hash */
    const char *path;      /* absolute source path */
    const char *format;    /* "kineto", "rocprof", "xplane" */
    uint64_t src_bytes;    /* size of the source file */
    uint64_t json_bytes;   /* decompressed size */
    int64_t rank;          /* -1 unknown */
    const char *config;    /* corpus configuration or NULL */
    const char *run;       /* corpus run or NULL */
    const char *labels_json; /* {"k":"v",...} or NULL */
} tl_build_info;

/* Encodes every table and the catalog record into the pending write and
 * frees the rows: afterwards only tl_build_nevents and tl_build_commit
 * may be used. Done on the parsing thread, so that the single writer only
 * writes and a trace waiting for it holds its compact encoded form. */
void tl_build_seal(tl_build *b, const tl_build_info *info);

/* Seals (unless sealed) and writes the trace in one write transaction
 * (growing the map when full). */
int tl_build_commit(tl_build *b, tl_store *s, const tl_build_info *info, tl_err *err);

#endif
