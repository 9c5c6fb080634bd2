/* plugin.h — the extension surface of the PyTorch report (spec
 * pytorch-report.md §13), in place of the reference tool's Python extension
 * file. Two kinds of extension:
 *
 *   1. data: a TSV file "op name<TAB>category" (--extension_file FILE.tsv)
 *      that adds or overrides op categories (query/pytorch/pytorch.h);
 *   2. code: a shared object (--extension_file FILE.so) exporting
 *
 *          int tracelens_plugin_register(const tl_plugin_api *api, void *host);
 *
 *      which calls back into api to add categories, perf models (FLOPs and
 *      bytes per op from its shape args: the op then gets a perf-model sheet,
 *      has_perf_model in unified_perf_summary and its model's category) and
 *      extra tables built from the trace after the built-in sheets.
 *
 * A plugin is compiled against this header only: every service it needs
 * (table building, trace access, busy time) is a function pointer in the
 * api struct, so it does not link against tracelens and does not depend on
 * the executable exporting symbols. docs/EXTENSIONS.md has a worked example
 * (examples/plugin/). The api only grows: fields are appended and
 * TL_PLUGIN_ABI is bumped; a plugin built for an older ABI keeps working. */
#ifndef TL_PLUGIN_H
#define TL_PLUGIN_H

#include <stddef.h>
#include <stdint.h>

#define TL_PLUGIN_ABI 1

struct tl_table;
struct tl_trace;
struct tl_pyt_sheets;
struct tl_catreg;
struct tl_err;

/* Read-only view of the trace handed to table builders. Rows are the
 * trace's complete events in file order (uid = the reference UID). */
typedef struct tl_plugin_trace {
    size_t n;                   /* events */
    const uint32_t *uid;
    const int64_t *ts_ns, *dur_ns;
    const uint8_t *kind;        /* ingest/schema.h tl_kind: 1 cpu_op, 5 kernel, ... */
    const int32_t *parent;      /* host tree parent (GPU rows: their runtime call), -1 none */
    const int32_t *launcher;    /* GPU rows: the op that launched them (§4.4), -1 none */
    const void *impl;           /* for the accessor functions below */
} tl_plugin_trace;

/* A perf model supplied by a plugin for one op name. The callback gets the
 * op's raw JSON arg texts (NULL when absent) and fills flops/bytes and up
 * to 16 parameters; returns 0, or non-zero when it cannot model this
 * instance (no row, as a Python model raising). */
typedef struct tl_plugin_params {
    size_t n;
    const char *key[16];
    char val[16][128];          /* Python-literal text of each value, e.g. "(8, 1)", "True" */
} tl_plugin_params;

typedef struct tl_plugin_perf_model {
    const char *op;             /* exact op name */
    const char *category;       /* ops_summary category, e.g. "GEMM" */
    const char *sheet;          /* perf sheet name; NULL: "<category>_plugin" */
    const char *compute_spec;   /* e.g. "matrix_bf16", or NULL/"" */
    int (*eval)(void *user, const char *input_dims, const char *input_type,
                const char *input_strides, const char *concrete_inputs, double *flops,
                double *bytes, int *has_bytes, tl_plugin_params *params);
    void *user;
} tl_plugin_perf_model;

typedef int (*tl_plugin_table_fn)(void *user, const tl_plugin_trace *trace, struct tl_table *out);

typedef struct tl_plugin_api {
    int abi;                    /* TL_PLUGIN_ABI of the host */
    /* registration */
    void (*add_category)(void *host, const char *op, const char *category);
    void (*add_perf_model)(void *host, const tl_plugin_perf_model *model);
    /* An extra sheet named `name` appended after the built-in sheets: fn is
     * called with an empty table to fill (an empty table is not written). */
    void (*add_table)(void *host, const char *name, tl_plugin_table_fn fn, void *user);
    void (*log)(void *host, const char *message);

    /* services for table builders */
    const char *(*event_name)(const tl_plugin_trace *t, size_t row);
    const char *(*event_cat)(const tl_plugin_trace *t, size_t row);
    /* raw JSON text of one args key of an event, or NULL (valid until the
     * next call) */
    const char *(*event_arg)(const tl_plugin_trace *t, size_t row, const char *key);
    /* length of the union of [ts, ts+dur] of the given GPU rows, in µs,
     * computed as the report computes busy time */
    double (*busy_time_us)(const tl_plugin_trace *t, const int32_t *rows, size_t n);

    /* table building (query/core/table.h semantics) */
    size_t (*col_str)(struct tl_table *t, const char *name);
    size_t (*col_i64)(struct tl_table *t, const char *name);
    size_t (*col_f64)(struct tl_table *t, const char *name);
    size_t (*add_row)(struct tl_table *t);
    void (*set_str)(struct tl_table *t, size_t col, size_t row, const char *s);
    void (*set_i64)(struct tl_table *t, size_t col, size_t row, int64_t v);
    void (*set_f64)(struct tl_table *t, size_t col, size_t row, double v);
} tl_plugin_api;

/* The symbol a plugin exports. Return 0 on success. */
typedef int (*tl_plugin_register_fn)(const tl_plugin_api *api, void *host);
#define TL_PLUGIN_REGISTER_SYMBOL "tracelens_plugin_register"

/* ---- host side ------------------------------------------------------------ */
typedef struct tl_plugin_set tl_plugin_set;

tl_plugin_set *tl_plugin_set_new(void);
void tl_plugin_set_free(tl_plugin_set *s);
/* Is path a plugin by docs/EXTENSIONS.md's rule (its name ends in ".so")?
 * Any other --extension_file is data. */
int tl_plugin_is_plugin_path(const char *path);
/* dlopens path (a plugin by tl_plugin_is_plugin_path, else refused) and
 * calls its registration function. */
int tl_plugin_load(tl_plugin_set *s, const char *path, struct tl_err *err);
/* Applies registered categories (and plugin perf models' categories) to r. */
void tl_plugin_apply_categories(const tl_plugin_set *s, struct tl_catreg *r);
/* Perf models registered for op, or NULL. */
const tl_plugin_perf_model *tl_plugin_perf_model_for(const tl_plugin_set *s, const char *op);
size_t tl_plugin_nperf_models(const tl_plugin_set *s);
const tl_plugin_perf_model *tl_plugin_perf_model_at(const tl_plugin_set *s, size_t i);
/* Builds the registered extra tables over trace t and appends them to out. */
int tl_plugin_run_tables(const tl_plugin_set *s, const struct tl_trace *t,
                         struct tl_pyt_sheets *out, struct tl_err *err);

#endif
