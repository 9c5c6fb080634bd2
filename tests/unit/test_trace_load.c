/* test_trace_load.c — the trace loader range-checks every stored index
 * once, at load. A small Kineto trace is ingested the normal way, then
 * copied to new trace ids with one column rewritten to hold an
 * out-of-range value (through the store's writer, so every chunk's
 * checksum is valid: only the loader's checks can catch it). Each load of
 * a damaged copy runs in a forked child and must end in TL_ESTORE whose
 * message names the trace, table and column and says to run `tracelens
 * check`, never in a signal; `tracelens report` of the copy must exit 3. */
#include "tests/unit/tl_test.h"
#include "query/core/trace.h"
#include "ingest/ingest.h"

#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static char tmpdir[256];
static tl_store *store;

/* 0 aten::mm, 1 launch, 2 kernel (its child through the ac2g flow) */
static const char TRACE[] =
    "{\"traceEvents\":[\n"
    "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::mm\",\"pid\":1,\"tid\":\"main\",\"ts\":100,\"dur\":50},\n"
    "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",\"pid\":1,\"tid\":\"main\",\"ts\":110,"
    "\"dur\":5,\"args\":{\"correlation\":1}},\n"
    "{\"ph\":\"s\",\"cat\":\"ac2g\",\"name\":\"ac2g\",\"id\":1,\"pid\":1,\"tid\":\"main\",\"ts\":110},\n"
    "{\"ph\":\"f\",\"cat\":\"ac2g\",\"name\":\"ac2g\",\"id\":1,\"pid\":0,\"tid\":7,\"ts\":200,\"bp\":\"e\"},\n"
    "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":1,\"args\":{\"name\":\"python\"}},\n"
    "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"nccl_allreduce\",\"pid\":0,\"tid\":7,\"ts\":200,\"dur\":10,"
    "\"args\":{\"correlation\":1,\"stream\":7,\"Collective name\":\"allreduce\"}}\n"
    "]}\n";

static const char *const TABLES[][2] = {
    {"events", "uid"}, {"events", "ts"}, {"events", "dur"}, {"events", "name"}, {"events", "cat"},
    {"events", "kind"}, {"events", "pid"}, {"events", "tid"}, {"events", "idflags"},
    {"events", "correlation"}, {"events", "external_id"}, {"events", "stream"}, {"events", "device"},
    {"events", "seq"}, {"events", "fwd_tid"}, {"events", "input_dims"}, {"events", "input_type"},
    {"events", "input_strides"}, {"events", "concrete_inputs"}, {"events", "grid"}, {"events", "block"},
    {"events", "args"}, {"events", "parent"}, {"events", "parent_py"}, {"events", "launcher"},
    {"events", "linked"}, {"flows", "uid"}, {"flows", "ph"}, {"flows", "cat"}, {"flows", "name"},
    {"flows", "id"}, {"flows", "pid"}, {"flows", "tid"}, {"flows", "idflags"}, {"flows", "ts"},
    {"meta", "uid"}, {"meta", "name"}, {"meta", "pid"}, {"meta", "tid"}, {"meta", "idflags"},
    {"meta", "args"}, {"args_sel", "row"}, {"args_sel", "args"}, {"dict", "str"},
};

/* One damage: row `row` of table.col set to `value`. */
typedef struct damage {
    const char *table, *col;
    uint32_t row;
    int64_t value;
} damage;

/* Copies trace src to id dst, every column as stored except d's. */
static int copy_damaged(uint64_t src, uint64_t dst, const damage *d)
{
    tl_err err = {0};
    tl_reader *r;
    if (tl_reader_open(store, &r, &err)) return 1;
    tl_wtrace *w = tl_wtrace_new(dst);
    const char *catalog;
    int rc = tl_reader_catalog(r, src, &catalog, &err);
    if (!rc) tl_wtrace_set_catalog(w, catalog);
    for (size_t i = 0; !rc && i < sizeof TABLES / sizeof *TABLES; i++) {
        tl_colview v;
        int e = tl_reader_column(r, src, TABLES[i][0], TABLES[i][1], &v, &err);
        if (e == TL_ENOTFOUND) continue;
        if ((rc = e)) break;
        if (v.type == TL_CT_BLOB) {
            tl_wtrace_put_blob_chunk(w, TABLES[i][0], TABLES[i][1], v.offsets, v.bytes, (uint32_t)v.n);
            continue;
        }
        size_t width = tl_ctype_size(v.type);
        char *data = malloc(v.n * width + 1);
        memcpy(data, v.data, v.n * width);
        if (!strcmp(d->table, TABLES[i][0]) && !strcmp(d->col, TABLES[i][1]) && d->row < v.n) {
            char *p = data + d->row * width;
            if (width == 1) *(uint8_t *)p = (uint8_t)d->value;
            else if (width == 4) *(uint32_t *)p = (uint32_t)d->value;
            else *(int64_t *)p = d->value;
        }
        tl_wtrace_put_chunk(w, TABLES[i][0], TABLES[i][1], v.type, data, (uint32_t)v.n);
        free(data);
    }
    tl_reader_close(r);
    if (!rc) rc = tl_store_write(store, w, &err);
    tl_wtrace_free(w);
    if (rc) fprintf(stderr, "copy: %s\n", err.msg);
    return rc;
}

static int walk_nop(void *ctx, uint32_t chunk, const tl_colview *v) { (void)ctx; (void)chunk; (void)v; return 0; }
static int sel_nop(void *ctx, uint32_t row, const char *a, size_t n) { (void)ctx; (void)row; (void)a; (void)n; return 0; }

/* In a child: loads trace id (every column, the PyTorch set, an owned
 * set, a chunk walk of the damaged column, the args_sel walk) and exits
 * 0 when one of them failed with the expected TL_ESTORE message. */
static void child_load(uint64_t id, const damage *d)
{
    char hex[17], want[128];
    tl_id_format(id, hex);
    snprintf(want, sizeof want, "table %s, column %s", d->table, d->col);
    tl_reader *r;
    tl_err err = {0};
    if (tl_reader_open(store, &r, &err)) _exit(2);
    tl_trace *t = NULL;
    int rc;
    const tl_trace_cols sets[] = {TL_TRACE_ALL, TL_TRACE_PYTORCH, TL_TC(NAME) | TL_TC(PARENT) | TL_TC_OWNED};
    int failed = 0, ok = 1;
    for (size_t s = 0; s < sizeof sets / sizeof *sets; s++) {
        rc = tl_trace_load_cols(r, id, sets[s], &t, &err);
        tl_trace_free(t);
        t = NULL;
        if (!rc) continue;
        failed++;
        if (rc != TL_ESTORE || !strstr(err.msg, hex) || !strstr(err.msg, want) || !strstr(err.msg, "tracelens check")) {
            fprintf(stderr, "%s: unexpected error %d: %s\n", want, rc, err.msg);
            ok = 0;
        }
    }
    /* a parent loop needs the whole column: chunk walks check ranges only */
    int loop = !strncmp(d->col, "parent", 6) && d->value == (int64_t)d->row;
    if (!strcmp(d->table, "events") && !loop) {
        tl_dict dict;
        const char *cat;
        int64_t nev = 0;
        if (tl_reader_dict(r, id, &dict, &err) || tl_reader_catalog(r, id, &cat, &err)) _exit(2);
        tl_args_get_i64(cat, strlen(cat), "events", &nev);
        tl_trace_bounds b = {(uint64_t)nev, dict.n};
        rc = tl_trace_column_chunks(r, id, d->col, &b, walk_nop, NULL, &err);
        /* pid and tid are checked with idflags, in whole loads only */
        if (strcmp(d->col, "pid") && strcmp(d->col, "tid") && (rc != TL_ESTORE || !strstr(err.msg, want))) {
            fprintf(stderr, "%s: chunk walk gave %d: %s\n", want, rc, err.msg);
            ok = 0;
        }
    }
    if (!strcmp(d->table, "args_sel")) {
        rc = tl_args_sel_walk(r, id, sel_nop, NULL, &err);
        if (rc == TL_ESTORE && strstr(err.msg, want)) failed++;
        else {
            fprintf(stderr, "%s: args_sel walk gave %d: %s\n", want, rc, err.msg);
            ok = 0;
        }
    }
    tl_reader_close(r);
    _exit(ok && failed ? 0 : 1);
}

/* `tracelens report` of trace id with flags; its exit status (-1: no binary). */
static int report_status(uint64_t id, const char *flags)
{
    const char *build = getenv("TL_BUILD");
    if (!build) return -1;
    char hex[17], cmd[1400];
    tl_id_format(id, hex);
    snprintf(cmd, sizeof cmd, "'%s/tracelens' --db '%s/db' report %s %s --csv-dir '%s/out' >/dev/null 2>&1", build,
             tmpdir, hex, flags, tmpdir);
    int st = system(cmd);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

int main(void)
{
    store = tl_test_store_open("tl_trace_load_", tmpdir, sizeof tmpdir);
    char path[400];
    snprintf(path, sizeof path, "%s/t.json", tmpdir);
    FILE *f = fopen(path, "w");
    CHECK(f != NULL);
    if (!f) return tl_test_done("test_trace_load");
    fputs(TRACE, f);
    fclose(f);
    tl_ingest_opts o = {.rank = -1};
    tl_ingest_result res;
    tl_err err = {0};
    CHECK_EQ_I(tl_ingest_file(store, path, &o, &res, &err), 0);

    /* the undamaged copy loads and reports */
    damage none = {"events", "uid", 99, 0};
    CHECK_EQ_I(copy_damaged(res.id, 0x7e57000000000001ULL, &none), 0);
    int st = report_status(0x7e57000000000001ULL, "");
    if (st >= 0) CHECK_EQ_I(st, 0);

    const damage cases[] = {
        {"events", "parent", 1, 3},          {"events", "parent", 1, -2},
        {"events", "parent_py", 2, 1 << 30}, {"events", "launcher", 2, 3},
        {"events", "name", 0, 1 << 20},      {"events", "cat", 2, 1 << 20},
        {"events", "concrete_inputs", 0, 99999},  {"events", "grid", 2, 99999},
        {"events", "kind", 1, 200},          {"events", "uid", 2, 0},
        {"events", "tid", 0, 1 << 20},       {"flows", "name", 0, 1 << 20},
        {"flows", "tid", 0, 1 << 20},        {"meta", "name", 0, 1 << 20},
        {"args_sel", "row", 0, 3},
        /* in range, but a loop: a row its own parent */
        {"events", "parent", 1, 1},          {"events", "parent_py", 0, 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        uint64_t id = 0x7e57000000000010ULL + i;
        const damage *d = &cases[i];
        if (copy_damaged(res.id, id, d)) { CHECK(0); continue; }
        fflush(stderr);
        pid_t p = fork();
        if (p == 0) child_load(id, d);
        int ws = 0;
        waitpid(p, &ws, 0);
        if (!WIFEXITED(ws) || WEXITSTATUS(ws))
            fprintf(stderr, "case %s.%s row %u = %lld: child status %#x\n", d->table, d->col, d->row,
                    (long long)d->value, ws);
        CHECK(WIFEXITED(ws) && WEXITSTATUS(ws) == 0);
        /* the PyTorch report reads neither the flows table, args_sel, grid,
         * launcher nor (without --include_call_stack) parent_py */
        if (strcmp(d->table, "args_sel") && strcmp(d->table, "flows") && strcmp(d->col, "grid") &&
            strcmp(d->col, "launcher") && strcmp(d->col, "parent_py") &&
            (st = report_status(id, "")) >= 0)
            CHECK_EQ_I(st, TL_EXIT_STORE);
        if (!strcmp(d->col, "parent_py") && (st = report_status(id, "--include_call_stack")) >= 0)
            CHECK_EQ_I(st, TL_EXIT_STORE);
    }
    tl_test_store_close(store, tmpdir);
    return tl_test_done("test_trace_load");
}
