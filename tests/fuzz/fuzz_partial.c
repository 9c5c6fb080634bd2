/* fuzz_partial.c — libFuzzer target for the partial answers of
 * `query --mpi` (query/adhoc/part.c, groups.c): a partial that another
 * process damaged or cut must give a clean error from the merge and from
 * the finish, never a crash, leak or sanitizer report.
 *
 * Random bytes rarely get past a partial's first field, so the target
 * edits real ones: at start-up it stores a small trace and makes one
 * partial per query shape (groups with every kind of accumulator, row
 * output). An input then picks a shape (byte 0), a length to cut the
 * partial to (bytes 1-2, when the input's length is odd), and byte
 * writes (each 3 bytes: a position, a value). */
#include "query/adhoc/adhoc.h"
#include "ingest/ingest.h"

#include <stdint.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *TRACE =
    "{\"traceEvents\":[\n"
    "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::mm\",\"pid\":10,\"tid\":1,\"ts\":100,\"dur\":50,\"args\":{\"External id\":1}},\n"
    "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",\"pid\":10,\"tid\":1,\"ts\":110,\"dur\":5,\"args\":{\"correlation\":1}},\n"
    "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::relu\",\"pid\":10,\"tid\":1,\"ts\":300,\"dur\":30,\"args\":{\"External id\":3}},\n"
    "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",\"pid\":10,\"tid\":1,\"ts\":305,\"dur\":5,\"args\":{\"correlation\":3}},\n"
    "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"gemm_a\",\"pid\":0,\"tid\":7,\"ts\":150,\"dur\":10.5,\"args\":{\"correlation\":1,\"stream\":7,\"device\":0}},\n"
    "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"relu_k\",\"pid\":0,\"tid\":7,\"ts\":340,\"dur\":3,\"args\":{\"correlation\":3,\"stream\":7,\"device\":0}},\n"
    "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"orphan\",\"pid\":0,\"tid\":8,\"ts\":600,\"dur\":1,\"args\":{\"stream\":8,\"device\":0}}\n"
    "]}\n";

enum { NSHAPES = 3 };
static tl_adhoc_query Q[NSHAPES];
static tl_buf PART[NSHAPES];

static int alone(void *ctx, const void *p, size_t n, tl_buf *all)
{
    (void)ctx;
    tl_buf_append(all, p, n);
    return 0;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc, (void)argv;
    char dir[] = "/tmp/tl_fuzz_partial_XXXXXX";
    if (!mkdtemp(dir)) abort();
    char path[600], db[600];
    snprintf(path, sizeof path, "%s/t.json", dir);
    snprintf(db, sizeof db, "%s/db", dir);
    FILE *fp = fopen(path, "w");
    if (!fp) abort();
    fputs(TRACE, fp);
    fclose(fp);
    tl_store *s;
    tl_err err = {0};
    if (tl_store_open(db, &s, &err)) abort();
    tl_ingest_opts o = {.rank = -1};
    tl_ingest_result res;
    if (tl_ingest_file(s, path, &o, &res, &err)) abort();
    for (int k = 0; k < NSHAPES; k++) Q[k].limit = -1, Q[k].threads = 1;
    Q[0].by = "name,stream";
    Q[0].agg = "count,sum(dur),min(dur),max(dur),median(dur),std(dur),nunique(name),nunique(device)";
    Q[1].select = "name,dur,stream";
    Q[2].by = "trace_id";
    Q[2].agg = "mean(dur),p90(dur)";
    Q[2].pivot = "stream";
    tl_adhoc_share share = {alone, NULL, 0, 0};
    for (int k = 0; k < NSHAPES; k++)
        if (tl_adhoc_run_part(s, &Q[k], &share, &PART[k], &err)) abort();
    tl_store_close(s);
    char cmd[700];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd)) { /* best effort */ }
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!size) return 0;
    int k = data[0] % NSHAPES;
    const tl_buf *base = &PART[k];
    tl_buf b = {0};
    tl_buf_append(&b, base->p, base->n);
    size_t at = 1;
    if (size % 2 == 0 && size >= 3) { /* even: cut first */
        size_t cut = ((size_t)data[1] << 8 | data[2]) % (b.n + 1);
        b.n = cut;
        at = 3;
    }
    for (; at + 3 <= size && b.n; at += 3) b.p[((size_t)data[at] << 8 | data[at + 1]) % b.n] = (char)data[at + 2];
    tl_err err = {0};
    tl_table *t = NULL;
    if (tl_adhoc_part_finish(&Q[k], b.p, b.n, &t, &err) == 0) tl_table_free(t);
    tl_buf acc = {0};
    tl_buf_append(&acc, base->p, base->n);
    tl_adhoc_part_merge(&Q[k], &acc, b.p, b.n, &err);
    t = NULL;
    if (tl_adhoc_part_finish(&Q[k], acc.p, acc.n, &t, &err) == 0) tl_table_free(t);
    tl_adhoc_part_merge(&Q[k], &b, base->p, base->n, &err);
    tl_buf_free(&acc);
    tl_buf_free(&b);
    return 0;
}
