/* fuzz_store.c — libFuzzer target for the store reader, the trace loader
 * and the PyTorch report over damaged stored values: a damaged chunk or
 * catalog record must give a clean error or a report, never a crash,
 * leak, sanitizer report or hang.
 *
 * At start-up a small Kineto trace (below) is ingested into a store in a
 * temporary directory, and every column chunk of the trace and its
 * catalog record are remembered. Each input picks one of those values,
 * changes it, writes it back, loads the trace (tl_trace_load_cols,
 * TL_TRACE_ALL), computes the PyTorch report, runs tl_store_check, and
 * restores the value. Input layout:
 *   [0..1] u16 LE  the value: index modulo (chunks + 1), the last is the
 *                  catalog record
 *   [2]    mode    bits 0-1 the change: 0 replace the value with the
 *                  payload, 1 XOR the payload in at the offset, 2 write it
 *                  over the value at the offset (extending it), 3 cut the
 *                  value at the offset and append it;
 *                  bit 2 recompute the checksum after the change, so that
 *                  the decoders and the loader's range checks see it;
 *                  bit 3 (with bit 2, chunks) first set the header's sizes
 *                  to what the value's length implies
 *   [3..4] u16 LE  the offset, modulo the value's length (plus one)
 *   [5..]          the payload
 * The chunk layout (16-byte header, payload, XXH3 of both when the
 * header's flag 0x01 is set) and the catalog record (text, NUL, XXH3 of
 * both) are those of store/store.c and docs/ARCHITECTURE.md. */
#include "ingest/ingest.h"
#include "query/core/trace.h"
#include "query/pytorch/pytorch.h"
#include "store/store_internal.h" /* the LMDB environment, to change values in place */

#include <lmdb.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CHUNK_HDR 16
#define CHUNK_SUMMED 0x01
#define SUM_BYTES 8

/* A host op with a nested op that launches a kernel (flow-linked), a
 * memcpy, a second stream kernel and metadata: enough for every table
 * the loader reads to hold rows. */
static const char TRACE[] =
    "{\"schemaVersion\":1,\"distributedInfo\":{\"backend\":\"nccl\",\"rank\":0,\"world_size\":2},\n"
    "\"deviceProperties\":[{\"id\":0,\"name\":\"AMD Instinct MI300X\"}],\n\"traceEvents\":[\n"
    "{\"ph\":\"X\",\"cat\":\"python_function\",\"name\":\"model.py(10): forward\",\"pid\":542,\"tid\":639,"
    "\"ts\":1000,\"dur\":200,\"args\":{\"Python id\":1,\"Python parent id\":null}},\n"
    "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::linear\",\"pid\":542,\"tid\":639,\"ts\":1010,\"dur\":80,"
    "\"args\":{\"External id\":1026,\"Input Dims\":[[10,1000],[1000,1000],[1000]],"
    "\"Input type\":[\"c10::BFloat16\",\"c10::BFloat16\",\"c10::BFloat16\"]}},\n"
    "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::addmm\",\"pid\":542,\"tid\":639,\"ts\":1020,\"dur\":44,"
    "\"args\":{\"External id\":1027,\"Concrete Inputs\":[\"\",\"\",\"\",\"1\"],"
    "\"Input type\":[\"c10::BFloat16\",\"c10::BFloat16\",\"c10::BFloat16\",\"Scalar\"],"
    "\"Input Strides\":[[],[1000,1],[1000,1],[]],\"Input Dims\":[[],[10,1000],[1000,1000],[]]}},\n"
    "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"hipLaunchKernel\",\"pid\":542,\"tid\":639,\"ts\":1030,"
    "\"dur\":5.5,\"args\":{\"External id\":1027,\"correlation\":77}},\n"
    "{\"ph\":\"s\",\"id\":77,\"pid\":542,\"tid\":639,\"ts\":1030,\"cat\":\"ac2g\",\"name\":\"ac2g\"},\n"
    "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"Cijk_gemm\",\"pid\":4,\"tid\":7,\"ts\":1040,\"dur\":12.25,"
    "\"args\":{\"External id\":1027,\"device\":0,\"stream\":7,\"correlation\":77,\"grid\":[128,1,1],"
    "\"block\":[256,1,1]}},\n"
    "{\"ph\":\"f\",\"id\":77,\"pid\":4,\"tid\":7,\"ts\":1040,\"cat\":\"ac2g\",\"name\":\"ac2g\",\"bp\":\"e\"},\n"
    "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::copy_\",\"pid\":542,\"tid\":639,\"ts\":1100,\"dur\":30,"
    "\"args\":{\"External id\":1028,\"Input Dims\":[[10,1000],[10,1000]]}},\n"
    "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"hipMemcpyAsync\",\"pid\":542,\"tid\":639,\"ts\":1105,"
    "\"dur\":4,\"args\":{\"External id\":1028,\"correlation\":78}},\n"
    "{\"ph\":\"s\",\"id\":78,\"pid\":542,\"tid\":639,\"ts\":1105,\"cat\":\"ac2g\",\"name\":\"ac2g\"},\n"
    "{\"ph\":\"X\",\"cat\":\"gpu_memcpy\",\"name\":\"Memcpy DtoD (Device -> Device)\",\"pid\":4,\"tid\":8,"
    "\"ts\":1120,\"dur\":3,\"args\":{\"device\":0,\"stream\":8,\"correlation\":78,\"bytes\":20000}},\n"
    "{\"ph\":\"f\",\"id\":78,\"pid\":4,\"tid\":8,\"ts\":1120,\"cat\":\"ac2g\",\"name\":\"ac2g\",\"bp\":\"e\"},\n"
    "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"elementwise_kernel\",\"pid\":4,\"tid\":7,\"ts\":1300,"
    "\"dur\":2,\"args\":{\"device\":0,\"stream\":7,\"correlation\":90}},\n"
    "{\"name\":\"process_name\",\"ph\":\"M\",\"ts\":0,\"pid\":542,\"tid\":0,\"args\":{\"name\":\"python3\"}},\n"
    "{\"name\":\"thread_name\",\"ph\":\"M\",\"ts\":0,\"pid\":4,\"tid\":7,\"args\":{\"name\":\"stream 7\"}}\n"
    "]}\n";

/* One stored value of the trace: its database, key and original bytes. */
typedef struct stored_value {
    MDB_dbi dbi;
    int catalog;
    MDB_val key;
    MDB_val orig;
} stored_value;

static tl_store *S;
static uint64_t ID;
static stored_value *VALS;
static size_t NVALS;
static char DIR_PATH[64], TRACE_PATH[96];

_Noreturn static void die(const char *what, const char *msg)
{
    fprintf(stderr, "fuzz_store: %s: %s\n", what, msg);
    abort();
}

static void *copy_bytes(const void *p, size_t n)
{
    void *q = malloc(n ? n : 1);
    if (!q) die("setup", "out of memory");
    if (n) memcpy(q, p, n);
    return q;
}

static void remember(MDB_dbi dbi, int catalog, const MDB_val *k, const MDB_val *v)
{
    VALS = realloc(VALS, (NVALS + 1) * sizeof *VALS);
    if (!VALS) die("setup", "out of memory");
    stored_value *sv = &VALS[NVALS++];
    sv->dbi = dbi;
    sv->catalog = catalog;
    sv->key = (MDB_val){k->mv_size, copy_bytes(k->mv_data, k->mv_size)};
    sv->orig = (MDB_val){v->mv_size, copy_bytes(v->mv_data, v->mv_size)};
}

/* Every chunk of trace ID (keys start with its 8-byte big-endian id), in
 * key order, then its catalog record. */
static void remember_trace(void)
{
    unsigned char idk[8];
    for (int i = 0; i < 8; i++) idk[i] = (unsigned char)(ID >> (56 - 8 * i));
    MDB_txn *txn;
    MDB_cursor *c;
    if (mdb_txn_begin(S->env, NULL, MDB_RDONLY, &txn) || mdb_cursor_open(txn, S->columns, &c))
        die("setup", "cannot read the store");
    MDB_val k = {sizeof idk, idk}, v;
    int rc = mdb_cursor_get(c, &k, &v, MDB_SET_RANGE);
    while (rc == 0 && k.mv_size >= 8 && memcmp(k.mv_data, idk, 8) == 0) {
        remember(S->columns, 0, &k, &v);
        rc = mdb_cursor_get(c, &k, &v, MDB_NEXT);
    }
    mdb_cursor_close(c);
    k = (MDB_val){sizeof idk, idk};
    if (mdb_get(txn, S->catalog, &k, &v)) die("setup", "no catalog record");
    remember(S->catalog, 1, &k, &v);
    mdb_txn_abort(txn);
    if (NVALS < 2) die("setup", "no column chunks");
}

static void cleanup(void)
{
    if (S) tl_store_close(S);
    char p[128];
    snprintf(p, sizeof p, "%s/data.mdb", DIR_PATH);
    unlink(p);
    snprintf(p, sizeof p, "%s/lock.mdb", DIR_PATH);
    unlink(p);
    unlink(TRACE_PATH);
    rmdir(DIR_PATH);
}

/* Loads the stored trace, reports on it and checks the store; returns
 * the first failure's code (for damaged values every error is an
 * expected outcome) with its message in err. */
static int read_back(tl_err *err)
{
    tl_reader *r;
    int rc = tl_reader_open(S, &r, err);
    if (rc == 0) {
        tl_trace *t = NULL;
        rc = tl_trace_load_cols(r, ID, TL_TRACE_ALL, &t, err);
        if (rc == 0) {
            if (!t->format || strcmp(t->format, "kineto") != 0) {
                rc = TL_ESTORE;
                snprintf(err->msg, sizeof err->msg, "not a Kineto trace");
            } else {
                tl_pyt_opts o;
                tl_pyt_opts_default(&o);
                o.quiet = 1;
                o.serial = 1;
                o.kernel_summary = 1;
                o.short_kernel_study = 1;
                o.include_overlap_info = 1;
                tl_pyt_sheets sh = {0};
                rc = tl_pytorch_report(t, &o, &sh, err);
                tl_pyt_sheets_free(&sh);
            }
            tl_trace_free(t);
        }
        tl_reader_close(r);
    }
    tl_err cerr = {0};
    int crc = tl_store_check(S, 0, NULL, NULL, &cerr);
    if (rc == 0 && crc) {
        *err = cerr;
        rc = crc;
    }
    return rc;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    snprintf(DIR_PATH, sizeof DIR_PATH, "/tmp/fuzz_store.XXXXXX");
    if (!mkdtemp(DIR_PATH)) die("setup", "cannot make a temporary directory");
    snprintf(TRACE_PATH, sizeof TRACE_PATH, "%s/trace.json", DIR_PATH);
    atexit(cleanup);
    FILE *f = fopen(TRACE_PATH, "wb");
    if (!f || fwrite(TRACE, 1, sizeof TRACE - 1, f) != sizeof TRACE - 1 || fclose(f))
        die("setup", "cannot write the trace");
    tl_err err = {0};
    if (tl_store_open(DIR_PATH, &S, &err)) die("open", err.msg);
    tl_ingest_opts o = {.rank = -1, .parse_threads = 1};
    tl_ingest_result res;
    if (tl_ingest_file(S, TRACE_PATH, &o, &res, &err)) die("ingest", err.msg);
    ID = res.id;
    remember_trace();
    /* the undamaged store must load, report and check cleanly, or the
     * inputs exercise nothing past the first error */
    if (read_back(&err)) die("the undamaged trace", err.msg);
    return 0;
}

static void put_le32(unsigned char *p, uint32_t x)
{
    for (int i = 0; i < 4; i++) p[i] = (unsigned char)(x >> (8 * i));
}

static uint32_t get_le32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static void put_le64(unsigned char *p, uint64_t x)
{
    for (int i = 0; i < 8; i++) p[i] = (unsigned char)(x >> (8 * i));
}

/* Makes a changed chunk pass the checksum: with fix_sizes, the header's
 * stored size (and, for a raw payload, its raw size and row count) first
 * follow from the value's length. A value that is no summed chunk or
 * whose sizes disagree is left as it is. */
static void reseal_chunk(unsigned char *p, size_t n, int fix_sizes)
{
    if (n < CHUNK_HDR + SUM_BYTES || !(p[3] & CHUNK_SUMMED)) return;
    if (fix_sizes) {
        uint32_t stored = (uint32_t)(n - CHUNK_HDR - SUM_BYTES);
        put_le32(p + 12, stored);
        if (p[1] == 0) {
            put_le32(p + 8, stored);
            size_t es = p[2] >= TL_CT_U8 && p[2] <= TL_CT_F64 ? tl_ctype_size((tl_ctype)p[2]) : 0;
            if (es && stored % es == 0) put_le32(p + 4, (uint32_t)(stored / es));
        }
    }
    uint64_t stored = get_le32(p + 12);
    if ((uint64_t)CHUNK_HDR + stored + SUM_BYTES != n) return;
    put_le64(p + CHUNK_HDR + stored, tl_hash64(p, CHUNK_HDR + (size_t)stored, 0));
}

/* Makes a changed catalog record pass its check: the text up to its
 * first NUL (all of it when there is none), a NUL, and the checksum. The
 * buffer has room for the 9 bytes this may add. */
static size_t reseal_catalog(unsigned char *p, size_t n)
{
    unsigned char *nul = memchr(p, 0, n);
    size_t text = nul ? (size_t)(nul - p) : n;
    p[text] = 0;
    put_le64(p + text + 1, tl_hash64(p, text + 1, 0));
    return text + 1 + SUM_BYTES;
}

/* Writes the n bytes at p as the value of sv's key, in a write transaction of its own. */
static void put_value(const stored_value *sv, const void *p, size_t n)
{
    MDB_txn *txn;
    MDB_val k = sv->key, v = {n, (void *)p};
    if (mdb_txn_begin(S->env, NULL, 0, &txn)) die("write", "cannot begin a write transaction");
    int rc = mdb_put(txn, sv->dbi, &k, &v, 0);
    if (rc) die("write", mdb_strerror(rc));
    if ((rc = mdb_txn_commit(txn))) die("write", mdb_strerror(rc));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    tl_err err = {0};
    if (size < 5) {
        read_back(&err);
        return 0;
    }
    const stored_value *sv = &VALS[(data[0] | (size_t)data[1] << 8) % NVALS];
    int mode = data[2];
    size_t off = data[3] | (size_t)data[4] << 8;
    const uint8_t *pay = data + 5;
    size_t np = size - 5, n = sv->orig.mv_size;
    unsigned char *v = malloc(n + np + SUM_BYTES + 1);
    if (!v) die("input", "out of memory");
    memcpy(v, sv->orig.mv_data, n);
    switch (mode & 3) {
    case 0:
        memcpy(v, pay, np);
        n = np;
        break;
    case 1:
        off = n ? off % n : 0;
        for (size_t i = 0; i < np && off + i < n; i++) v[off + i] ^= pay[i];
        break;
    case 2:
        off %= n + 1;
        memcpy(v + off, pay, np);
        if (off + np > n) n = off + np;
        break;
    default:
        off %= n + 1;
        memcpy(v + off, pay, np);
        n = off + np;
        break;
    }
    if (mode & 4) {
        if (sv->catalog) n = reseal_catalog(v, n);
        else reseal_chunk(v, n, mode & 8);
    }
    put_value(sv, v, n);
    free(v);
    read_back(&err);
    put_value(sv, sv->orig.mv_data, sv->orig.mv_size);
    return 0;
}
