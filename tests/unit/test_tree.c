/* test_tree.c — unit tests of the event tree built at ingest (ingest/
 * tree.c, spec pytorch-report.md §4): host nesting, runtime -> GPU links
 * through ac2g flows (the flow end's pid and tid must be the kernel's),
 * graph launches by correlation, launcher attribution, and linking by
 * correlation alone when a trace has no ac2g flow. Each trace is ingested
 * twice, once with small consecutive correlation ids and once with ids
 * spread over 2^60, so that both forms of the link-value index (an array;
 * a hash map) are checked against the same expected edges. Pinned parents
 * (tl_build_pin_parent) replace the nesting's for events of equal span. */
#include "tests/unit/tl_test.h"
#include "query/core/trace.h"
#include "ingest/ingest.h"
#include "ingest/builder.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char tmpdir[256];
static tl_store *store;

/* Rows (complete events in file order): 0 aten::mm, 1 launch c1,
 * 2 graph launch c2, 3 launch c3, 4 kernel c1, 5 graph kernel c2,
 * 6 graph kernel c2, 7 kernel c3 (its flow ends on another stream). */
static void write_trace(const char *path, int64_t c1, int64_t c2, int64_t c3, int flows)
{
    FILE *f = fopen(path, "w");
    if (!f) return;
    fprintf(f, "{\"traceEvents\":[\n"
               "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::mm\",\"pid\":1,\"tid\":1,\"ts\":100,\"dur\":50},\n"
               "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",\"pid\":1,\"tid\":1,"
               "\"ts\":110,\"dur\":5,\"args\":{\"correlation\":%" PRId64 "}},\n"
               "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaGraphLaunch\",\"pid\":1,\"tid\":1,"
               "\"ts\":120,\"dur\":5,\"args\":{\"correlation\":%" PRId64 "}},\n"
               "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",\"pid\":1,\"tid\":1,"
               "\"ts\":130,\"dur\":5,\"args\":{\"correlation\":%" PRId64 "}},\n",
            c1, c2, c3);
    if (flows)
        fprintf(f, "{\"ph\":\"s\",\"cat\":\"ac2g\",\"name\":\"ac2g\",\"id\":%" PRId64 ",\"pid\":1,\"tid\":1,\"ts\":110},\n"
                   "{\"ph\":\"f\",\"cat\":\"ac2g\",\"name\":\"ac2g\",\"id\":%" PRId64 ",\"pid\":0,\"tid\":7,\"ts\":200,\"bp\":\"e\"},\n"
                   "{\"ph\":\"s\",\"cat\":\"ac2g\",\"name\":\"ac2g\",\"id\":%" PRId64 ",\"pid\":1,\"tid\":1,\"ts\":130},\n"
                   "{\"ph\":\"f\",\"cat\":\"ac2g\",\"name\":\"ac2g\",\"id\":%" PRId64 ",\"pid\":0,\"tid\":9,\"ts\":260,\"bp\":\"e\"},\n",
                c1, c1, c3, c3);
    fprintf(f, "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k1\",\"pid\":0,\"tid\":7,\"ts\":200,\"dur\":10,"
               "\"args\":{\"correlation\":%" PRId64 ",\"stream\":7}},\n"
               "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"g1\",\"pid\":0,\"tid\":7,\"ts\":220,\"dur\":10,"
               "\"args\":{\"correlation\":%" PRId64 ",\"stream\":7}},\n"
               "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"g2\",\"pid\":0,\"tid\":7,\"ts\":240,\"dur\":10,"
               "\"args\":{\"correlation\":%" PRId64 ",\"stream\":7}},\n"
               "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k3\",\"pid\":0,\"tid\":7,\"ts\":260,\"dur\":10,"
               "\"args\":{\"correlation\":%" PRId64 ",\"stream\":7}}\n"
               "]}\n",
            c1, c2, c2, c3);
    fclose(f);
}

/* Ingests the trace and checks its edges against parent[] and launcher[]
 * (8 rows each). */
static void check_edges(const char *name, int64_t c1, int64_t c2, int64_t c3, int flows,
                        const int32_t *parent, const int32_t *launcher)
{
    char path[400];
    snprintf(path, sizeof path, "%s/%s.json", tmpdir, name);
    write_trace(path, c1, c2, c3, flows);
    tl_ingest_opts o = {.rank = -1};
    tl_ingest_result res;
    tl_err err = {0};
    tl_reader *r = NULL;
    tl_trace *t = NULL;
    int rc = tl_ingest_file(store, path, &o, &res, &err);
    if (!rc) rc = tl_reader_open(store, &r, &err);
    if (!rc) rc = tl_trace_load(r, res.id, &t, &err);
    if (rc) fprintf(stderr, "%s: %s\n", name, err.msg);
    CHECK(rc == 0 && t && t->n == 8);
    if (!rc && t && t->n == 8) {
        for (int i = 0; i < 8; i++) {
            if (t->parent[i] != parent[i] || t->launcher[i] != launcher[i])
                fprintf(stderr, "%s row %d: parent %d launcher %d, expected %d %d\n", name, i, t->parent[i],
                        t->launcher[i], parent[i], launcher[i]);
            CHECK_EQ_I(t->parent[i], parent[i]);
            CHECK_EQ_I(t->launcher[i], launcher[i]);
        }
    }
    tl_trace_free(t);
    tl_reader_close(r);
}

static void test_flows(void)
{
    /* k1 through its flow; the graph kernels by correlation; k3's flow ends
     * on stream 9, where no kernel is, so k3 stays unlinked (§4.3) */
    static const int32_t parent[8] = {-1, 0, 0, 0, 1, 2, 2, -1};
    static const int32_t launcher[8] = {-1, -1, -1, -1, 0, 0, 0, -1};
    check_edges("flows_dense", 11, 12, 13, 1, parent, launcher);
    check_edges("flows_sparse", 7, (int64_t)1 << 40, (int64_t)1 << 60, 1, parent, launcher);
}

static void test_no_flows(void)
{
    /* no ac2g flow at all: every kernel linked by correlation (beyond the
     * reference, which finds no GPU events then) */
    static const int32_t parent[8] = {-1, 0, 0, 0, 1, 2, 2, 3};
    static const int32_t launcher[8] = {-1, -1, -1, -1, 0, 0, 0, 0};
    check_edges("corr_dense", 11, 12, 13, 0, parent, launcher);
    check_edges("corr_sparse", -((int64_t)1 << 60), 5, (int64_t)1 << 59, 0, parent, launcher);
}

/* Four host events of one span on one thread (0 cpu op, 1 python
 * function, 2 cpu op, 3 runtime): by time they chain 0 > 1 > 2 > 3 (2
 * under 0 without python functions); pinned, 1 and 2 hang under 0, 3
 * under 1 (its plain parent 0), and the pins survive the store. */
static void test_pins(void)
{
    tl_build *b = tl_build_new();
    tl_build_set_format(b, "kineto");
    static const uint8_t kinds[4] = {TL_K_CPU_OP, TL_K_PYTHON, TL_K_CPU_OP, TL_K_RUNTIME};
    static const char *const cats[4] = {"cpu_op", "python_function", "cpu_op", "cuda_runtime"};
    for (uint32_t i = 0; i < 4; i++) {
        tl_ev_in e = {.uid = i, .ts = 1000, .dur = 500, .name = tl_build_str(b, cats[i], strlen(cats[i])),
                      .cat = tl_build_str(b, cats[i], strlen(cats[i])), .kind = kinds[i], .pid = 1, .tid = 1,
                      .corr = TL_NONE, .ext_id = TL_NONE, .stream = TL_NONE, .device = TL_NONE, .seq = TL_NONE,
                      .fwd_tid = TL_NONE};
        tl_build_event(b, &e);
    }
    tl_build_pin_parent(b, 1, -1, 0);
    tl_build_pin_parent(b, 2, 0, 0);
    tl_build_pin_parent(b, 3, 0, 1);
    tl_err err = {0};
    tl_build_info info = {.id = 0x70696e73ULL, .path = "pins", .format = "kineto", .rank = -1};
    tl_reader *r = NULL;
    tl_trace *t = NULL;
    int rc = tl_build_tree(b, &err);
    if (!rc) rc = tl_build_commit(b, store, &info, &err);
    tl_build_free(b);
    if (!rc) rc = tl_reader_open(store, &r, &err);
    if (!rc) rc = tl_trace_load(r, info.id, &t, &err);
    if (rc) fprintf(stderr, "pins: %s\n", err.msg);
    CHECK(rc == 0 && t && t->n == 4);
    if (!rc && t && t->n == 4) {
        static const int32_t parent[4] = {-1, -1, 0, 0}, parent_py[4] = {-1, 0, 0, 1};
        for (int i = 0; i < 4; i++) {
            CHECK_EQ_I(t->parent[i], parent[i]);
            CHECK_EQ_I(t->parent_py[i], parent_py[i]);
        }
    }
    tl_trace_free(t);
    tl_reader_close(r);
}

int main(void)
{
    snprintf(tmpdir, sizeof tmpdir, "/tmp/tl_test_tree_XXXXXX");
    if (!mkdtemp(tmpdir)) return 1;
    char db[300];
    snprintf(db, sizeof db, "%s/db", tmpdir);
    tl_err err = {0};
    if (tl_store_open(db, &store, &err)) {
        fprintf(stderr, "%s\n", err.msg);
        return 1;
    }
    test_flows();
    test_no_flows();
    test_pins();
    tl_store_close(store);
    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    if (system(cmd)) {}
    return tl_test_done("test_tree");
}
