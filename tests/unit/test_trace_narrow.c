/* test_trace_narrow.c — a TL_TC_NARROW load hands out the same values as a
 * wide one. A Kineto trace of more than two column chunks (65,536 rows
 * each) is ingested; its int64 columns hold values at every edge of the
 * 4-byte form (TL_NONE, INT32_MIN and INT32_MIN + 1, which the narrow form
 * reserves, INT32_MAX and just above, durations past 2^31 ns, negative
 * ids) and pids / tids as numbers and strings, some threads recurring
 * after others. Every row's dur, corr, ext_id, stream, seq, pid and tid
 * must read the same through the accessors from both loads; a narrow
 * load's wide pointers are NULL (a reader that misses the accessors
 * crashes rather than reading another form); values that do not fit sit
 * in the exception lists. */
#include "tests/unit/tl_test.h"
#include "query/core/trace.h"
#include "ingest/ingest.h"

#include <stdlib.h>
#include <string.h>

#define ROWS 140000

static char tmpdir[256];

/* An int64 value for row i of an id column: mostly small, with the edges
 * every few rows. */
static long long edge_value(size_t i, long long base)
{
    static const long long EDGES[] = {
        -2147483648LL, -2147483647LL, -2147483646LL, 2147483647LL, 2147483648LL, 5000000000LL, -1LL, 0LL,
        -9000000000000LL,
    };
    if (i % 7 == 3) return EDGES[(i / 7) % (sizeof EDGES / sizeof *EDGES)];
    return base + (long long)i;
}

static void write_trace(FILE *f)
{
    fputs("{\"traceEvents\":[\n", f);
    for (size_t i = 0; i < ROWS; i++) {
        /* durations in µs with ns digits; every 1,001st row longer than 2^31 ns */
        double dur = i % 1001 == 5 ? 2147483.649 + (double)i : (double)(i % 900) + 0.125;
        fprintf(f, "{\"ph\":\"X\",\"cat\":\"%s\",\"name\":\"op%zu\",", i % 3 ? "cpu_op" : "kernel", i % 50);
        if (i % 5 == 0) fprintf(f, "\"pid\":\"proc%zu\",", i % 4);
        else fprintf(f, "\"pid\":%lld,", i % 5 == 1 ? 4000000000LL + (long long)(i % 3) : (long long)(i % 6));
        if (i % 4 == 0) fprintf(f, "\"tid\":\"thread%zu\",", (i / 1000) % 9);
        else fprintf(f, "\"tid\":%lld,", i % 11 == 2 ? -5LL : (long long)((i / 3000) % 17));
        fprintf(f, "\"ts\":%zu.5,\"dur\":%.3f,\"args\":{", 1000 + 2 * i, dur);
        if (i % 2) fprintf(f, "\"correlation\":%lld,", edge_value(i, 100));
        if (i % 3) fprintf(f, "\"External id\":%lld,", edge_value(i + 1, 7));
        if (i % 5) fprintf(f, "\"Sequence number\":%lld,", edge_value(i + 2, 0));
        if (i % 3 == 0) fprintf(f, "\"stream\":%lld,", i % 21 == 0 ? 3000000000LL : (long long)(i % 8));
        fprintf(f, "\"n\":%zu}}%s\n", i, i + 1 < ROWS ? "," : "");
    }
    fputs("]}\n", f);
}

/* The rows of one column that differ between the two loads. */
#define DIFFS(acc)                                                                                     \
    do {                                                                                               \
        size_t bad = 0;                                                                                \
        for (size_t i = 0; i < w->n; i++) bad += acc(w, i) != acc(nw, i);                               \
        if (bad) fprintf(stderr, #acc ": %zu rows differ\n", bad);                                      \
        CHECK_EQ_I(bad, 0);                                                                            \
    } while (0)

static void compare(const tl_trace *w, const tl_trace *nw)
{
    CHECK_EQ_I(w->n, ROWS);
    CHECK_EQ_I(nw->n, ROWS);
    CHECK(nw->dur == NULL && nw->corr == NULL && nw->ext_id == NULL && nw->stream == NULL && nw->seq == NULL);
    CHECK(nw->pid == NULL && nw->tid == NULL && nw->ts != NULL);
    CHECK(w->dur != NULL && w->pid != NULL && w->thread == NULL && w->narrow[TL_TCI_DUR].v == NULL);
    DIFFS(tl_trace_dur);
    DIFFS(tl_trace_corr);
    DIFFS(tl_trace_ext_id);
    DIFFS(tl_trace_stream);
    DIFFS(tl_trace_seq);
    DIFFS(tl_trace_pid);
    DIFFS(tl_trace_tid);
    size_t bad = 0;
    for (size_t i = 0; i < w->n; i++) {
        bad += tl_trace_dur_us(w, i) != tl_trace_dur_us(nw, i);
        bad += w->idflags[i] != nw->idflags[i];
    }
    CHECK_EQ_I(bad, 0);
    /* the edges went to the exception lists, not to the 4-byte values */
    CHECK(nw->narrow[TL_TCI_DUR].nexc > 100);
    CHECK(nw->narrow[TL_TCI_CORR].nexc > 1000);
    CHECK(nw->narrow[TL_TCI_STREAM].nexc > 1000);
    CHECK(nw->nthreads > 10 && nw->nthreads < 1000);
    char a[64], b[64];
    CHECK_EQ_S(tl_trace_pid_text(w, 5, a, sizeof a), tl_trace_pid_text(nw, 5, b, sizeof b));
    CHECK_EQ_S(tl_trace_tid_text(w, 4, a, sizeof a), tl_trace_tid_text(nw, 4, b, sizeof b));
}

int main(void)
{
    tl_store *store = tl_test_store_open("tl_trace_narrow_", tmpdir, sizeof tmpdir);
    char path[400];
    snprintf(path, sizeof path, "%s/t.json", tmpdir);
    FILE *f = fopen(path, "w");
    CHECK(f != NULL);
    if (!f) return tl_test_done("test_trace_narrow");
    write_trace(f);
    fclose(f);
    tl_ingest_opts o = {.rank = -1};
    tl_ingest_result res;
    tl_err err = {0};
    CHECK_EQ_I(tl_ingest_file(store, path, &o, &res, &err), 0);
    tl_reader *r;
    CHECK_EQ_I(tl_reader_open(store, &r, &err), 0);
    tl_trace *w = NULL, *nw = NULL;
    CHECK_EQ_I(tl_trace_load(r, res.id, &w, &err), 0);
    CHECK_EQ_I(tl_trace_load_cols(r, res.id, TL_TRACE_PYTORCH | TL_TC_OWNED, &nw, &err), 0);
    if (w && nw) compare(w, nw);
    if (nw) {
        /* dropping the columns frees the narrow forms too */
        tl_trace_drop_columns(nw);
        CHECK(nw->thread == NULL && nw->narrow[TL_TCI_SEQ].v == NULL && nw->dur_us_sub == NULL);
    }
    tl_trace_free(w);
    tl_trace_free(nw);
    tl_reader_close(r);
    tl_test_store_close(store, tmpdir);
    return tl_test_done("test_trace_narrow");
}
