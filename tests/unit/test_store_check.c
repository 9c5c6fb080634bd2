/* test_store_check.c — a damaged store is refused with an error, never a
 * signal. A small store of three traces (raw, LZ4, narrowed and blob
 * chunks) is damaged in seeded, repeatable ways: bits flipped in chunk and
 * catalog values through LMDB, bits flipped, pages zeroed and 2,000 random
 * bytes written in data.mdb, data.mdb truncated (to 8192 bytes, to half, by
 * its last page, to a partial page) or replaced. Each trial runs in a
 * forked child that opens the store, reads every column of every trace
 * and runs tl_store_check; the child must exit normally, and the damage
 * must be reported where it can be seen (every flip in a chunk or record,
 * every truncation). Then check --repair removes a damaged trace and keeps
 * the others, compaction copies a store, chunks and records written
 * before schema 3 (no checksum) still read, and a fault inside a guarded
 * read (what LMDB does on some damaged B-tree pages) becomes an error. */
#include "tests/unit/tl_test.h"
#include "store/store.h"
#include "store/store_internal.h" /* the fault guard, tested directly */

#include <fcntl.h>
#include <lmdb.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define NTRACES 3
#define NROWS 70000u /* two chunks of each fixed-width column */
#define NARGS 3000u  /* blob rows, in chunks of 1000 */
static const uint64_t ids[NTRACES] = {0x1111000000000001ULL, 0x2222000000000002ULL, 0x3333000000000003ULL};
static char root[256], pristine[300], trial[300];

static uint64_t rng_state;
static uint64_t rng(void) /* splitmix64 */
{
    uint64_t z = (rng_state += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

/* The columns of trace t, generated the same way for writing and checking. */
static int64_t ts_of(int t, uint64_t i) { return 1000000 * (t + 1) + (int64_t)i * 1000 + (int64_t)(i % 7); }
static double dur_of(int t, uint64_t i) { return (double)((i * 2654435761u) % 1000003) / 7.0 + t; }
static uint8_t kind_of(int t, uint64_t i) { return (uint8_t)((i / 10 + (uint64_t)t) % 5); }
static void arg_of(int t, uint64_t i, char *buf, size_t n) { snprintf(buf, n, "{\"i\":%llu,\"t\":%d}", (unsigned long long)i, t); }

static void write_traces(tl_store *s)
{
    int64_t *ts = malloc(NROWS * sizeof *ts);
    double *dur = malloc(NROWS * sizeof *dur);
    uint8_t *kind = malloc(NROWS);
    for (int t = 0; t < NTRACES; t++) {
        tl_wtrace *w = tl_wtrace_new(0);
        for (uint64_t i = 0; i < NROWS; i++) {
            ts[i] = ts_of(t, i);
            dur[i] = dur_of(t, i);
            kind[i] = kind_of(t, i);
        }
        tl_wtrace_put_column(w, "events", "ts", TL_CT_I64, ts, NROWS);    /* narrowed */
        tl_wtrace_put_column(w, "events", "dur", TL_CT_F64, dur, NROWS);  /* raw */
        tl_wtrace_put_column(w, "events", "kind", TL_CT_U8, kind, NROWS); /* LZ4 */
        for (uint32_t c = 0; c < NARGS / 1000; c++) {
            tl_buf b = {0};
            uint64_t off[1001];
            for (uint32_t j = 0; j < 1000; j++) {
                char a[64];
                arg_of(t, c * 1000 + j, a, sizeof a);
                off[j] = b.n;
                tl_buf_append(&b, a, strlen(a) + 1);
            }
            off[1000] = b.n;
            tl_wtrace_put_blob_chunk(w, "events", "args", off, b.p, 1000);
            tl_buf_free(&b);
        }
        const char *bytes = "\0\0kernel\0memcpy";
        uint64_t off[5] = {0, 1, 2, 9, 16};
        tl_wtrace_put_blob_chunk(w, "dict", "str", off, bytes, 4);
        char cat[128];
        snprintf(cat, sizeof cat, "{\"format\":\"test\",\"events\":%u,\"labels\":{\"t\":[%d,true,null]}}", NROWS, t);
        tl_wtrace_set_catalog(w, cat);
        tl_wtrace_set_id(w, ids[t]);
        tl_err err = {0};
        CHECK_EQ_I(tl_store_write(s, w, &err), 0);
        tl_wtrace_free(w);
    }
    free(ts);
    free(dur);
    free(kind);
}

/* Reads every column of trace t: 0 when all reads succeed with the data
 * written, 1 when a read fails, 2 when a read succeeds with other data. */
static int read_trace(tl_reader *r, int t)
{
    tl_err err = {0};
    const char *cat;
    tl_colview v;
    tl_dict d;
    if (tl_reader_catalog(r, ids[t], &cat, &err)) return 1;
    int bad = strncmp(cat, "{\"format\":\"test\"", 16) != 0;
    if (tl_reader_column(r, ids[t], "events", "ts", &v, &err)) return 1;
    for (uint64_t i = 0; i < v.n; i++) bad |= ((const int64_t *)v.data)[i] != ts_of(t, i);
    bad |= v.n != NROWS;
    double *dur = malloc(NROWS * sizeof *dur);
    int rc = tl_reader_column_into(r, ids[t], "events", "dur", dur, 8, NROWS, &err);
    for (uint64_t i = 0; !rc && i < NROWS; i++) bad |= dur[i] != dur_of(t, i);
    free(dur);
    if (rc) return 1;
    if (tl_reader_column(r, ids[t], "events", "kind", &v, &err)) return 1;
    for (uint64_t i = 0; i < v.n; i++) bad |= ((const uint8_t *)v.data)[i] != kind_of(t, i);
    bad |= v.n != NROWS;
    if (tl_reader_column(r, ids[t], "events", "args", &v, &err)) return 1;
    bad |= v.n != NARGS;
    for (uint64_t i = 0; !bad && i < v.n; i++) {
        char a[64];
        arg_of(t, i, a, sizeof a);
        bad |= strcmp(v.bytes + v.offsets[i], a) != 0;
    }
    if (tl_reader_dict(r, ids[t], &d, &err)) return 1;
    bad |= d.n != 4 || strcmp(tl_dict_get(&d, 3, NULL), "memcpy") != 0;
    char *sizes = NULL;
    if (tl_reader_sizes(r, ids[t], &sizes, &err)) return 1;
    free(sizes);
    return bad ? 2 : 0;
}

/* What a child saw, as its exit status. */
enum { SAW_OPEN_ERR = 1, SAW_READ_ERR = 2, SAW_CHECK_ERR = 4, SAW_WRONG_DATA = 8, SAW_NO_MESSAGE = 16 };

/* Opens the trial store, reads everything, checks: the SAW_* bits. */
static int open_read_check(const char *dir)
{
    tl_store *s;
    tl_err err = {0};
    if (tl_store_open(dir, &s, &err)) return SAW_OPEN_ERR | (err.msg[0] ? 0 : SAW_NO_MESSAGE);
    int saw = 0;
    tl_reader *r;
    if (tl_reader_open(s, &r, &err)) {
        saw |= SAW_READ_ERR;
    } else {
        for (int t = 0; t < NTRACES; t++) {
            int rc = read_trace(r, t);
            saw |= rc == 1 ? SAW_READ_ERR : rc == 2 ? SAW_WRONG_DATA : 0;
        }
        tl_reader_close(r);
    }
    err.msg[0] = 0;
    if (tl_store_check(s, 0, NULL, NULL, &err)) saw |= SAW_CHECK_ERR | (err.msg[0] ? 0 : SAW_NO_MESSAGE);
    tl_store_close(s);
    return saw;
}

static void copy_file(const char *from, const char *to)
{
    int in = open(from, O_RDONLY), out = open(to, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    char buf[1 << 16];
    ssize_t n;
    while (in >= 0 && out >= 0 && (n = read(in, buf, sizeof buf)) > 0)
        if (write(out, buf, (size_t)n) != n) break;
    if (in >= 0) close(in);
    if (out >= 0) close(out);
}

/* A fresh copy of the pristine store in trial/ (data.mdb only). */
static void fresh_trial(void)
{
    char p[400], q[400];
    mkdir(trial, 0755);
    snprintf(p, sizeof p, "%s/lock.mdb", trial);
    unlink(p);
    snprintf(p, sizeof p, "%s/data.mdb", pristine);
    snprintf(q, sizeof q, "%s/data.mdb", trial);
    copy_file(p, q);
}

static off_t data_size(void)
{
    char p[400];
    struct stat st;
    snprintf(p, sizeof p, "%s/data.mdb", trial);
    return stat(p, &st) == 0 ? st.st_size : 0;
}

/* Writes n bytes at off of trial/data.mdb. */
static void poke(off_t off, const void *b, size_t n)
{
    char p[400];
    snprintf(p, sizeof p, "%s/data.mdb", trial);
    int fd = open(p, O_RDWR);
    if (fd < 0 || pwrite(fd, b, n, off) != (ssize_t)n) exit(99);
    close(fd);
}

static void truncate_to(off_t size)
{
    char p[400];
    snprintf(p, sizeof p, "%s/data.mdb", trial);
    if (truncate(p, size)) exit(99);
}

/* Flips one bit of the value of the k-th record (k taken modulo their
 * number) of database db ("columns" or "catalog") through LMDB. */
static void flip_value(const char *db, uint64_t k, uint64_t bit)
{
    MDB_env *env;
    MDB_txn *txn;
    MDB_dbi dbi;
    MDB_cursor *c;
    MDB_val key, val;
    MDB_stat st;
    if (mdb_env_create(&env) || mdb_env_set_maxdbs(env, 8) || mdb_env_set_mapsize(env, 1 << 26) ||
        mdb_env_open(env, trial, 0, 0644) || mdb_txn_begin(env, NULL, 0, &txn) || mdb_dbi_open(txn, db, 0, &dbi) ||
        mdb_stat(txn, dbi, &st) || !st.ms_entries || mdb_cursor_open(txn, dbi, &c))
        exit(99);
    int rc = mdb_cursor_get(c, &key, &val, MDB_FIRST);
    for (uint64_t i = 0; i < k % st.ms_entries && !rc; i++) rc = mdb_cursor_get(c, &key, &val, MDB_NEXT);
    if (rc) exit(99);
    unsigned char *copy = malloc(val.mv_size);
    memcpy(copy, val.mv_data, val.mv_size);
    copy[(bit / 8) % val.mv_size] ^= (unsigned char)(1u << (bit % 8));
    unsigned char kcopy[512];
    memcpy(kcopy, key.mv_data, key.mv_size);
    MDB_val k2 = {key.mv_size, kcopy}, v2 = {val.mv_size, copy};
    mdb_cursor_close(c);
    if (mdb_put(txn, dbi, &k2, &v2, 0) || mdb_txn_commit(txn)) exit(99);
    mdb_env_close(env);
    free(copy);
}

typedef enum damage {
    D_CHUNK_FLIP, D_CATALOG_FLIP, D_FILE_FLIP, D_ZERO_PAGE, D_RANDOM_BYTES,
    D_TRUNC_8192, D_TRUNC_HALF, D_TRUNC_LAST_PAGE, D_TRUNC_PARTIAL, D_FOREIGN, D_KINDS
} damage;
static const char *const damage_name[D_KINDS] = {
    "chunk bit flip", "catalog bit flip", "file bit flip", "zeroed page", "2,000 random bytes",
    "truncated to 8192", "truncated to half", "last page cut", "partial page cut", "foreign file"};

static void apply(damage d)
{
    off_t size = data_size();
    long ps = 4096;
    unsigned char b[4096];
    switch (d) {
    case D_CHUNK_FLIP: flip_value("columns", rng(), rng()); break;
    case D_CATALOG_FLIP: flip_value("catalog", rng(), rng()); break;
    case D_FILE_FLIP: {
        off_t off = (off_t)(rng() % (uint64_t)size);
        unsigned char x;
        char p[400];
        snprintf(p, sizeof p, "%s/data.mdb", trial);
        int fd = open(p, O_RDONLY);
        if (fd < 0 || pread(fd, &x, 1, off) != 1) exit(99);
        close(fd);
        x ^= (unsigned char)(1u << (rng() % 8));
        poke(off, &x, 1);
        break;
    }
    case D_ZERO_PAGE:
        memset(b, 0, sizeof b);
        poke((off_t)(rng() % (uint64_t)(size / ps)) * ps, b, sizeof b);
        break;
    case D_RANDOM_BYTES:
        for (int i = 0; i < 2000; i++) {
            unsigned char x = (unsigned char)rng();
            poke((off_t)(rng() % (uint64_t)size), &x, 1);
        }
        break;
    case D_TRUNC_8192: truncate_to(8192); break;
    case D_TRUNC_HALF: truncate_to(size / 2 / ps * ps); break;
    case D_TRUNC_LAST_PAGE: truncate_to(size - ps); break;
    case D_TRUNC_PARTIAL: truncate_to(size - 100); break;
    case D_FOREIGN:
        for (size_t i = 0; i < sizeof b; i++) b[i] = (unsigned char)rng();
        truncate_to(0);
        for (int i = 0; i < 8; i++) poke(i * ps, b, sizeof b);
        break;
    default: break;
    }
}

/* One trial in a child: the SAW_* bits, or -1 when the child died of a
 * signal (or could not apply the damage: 99). */
static int run_trial(damage d, uint64_t seed)
{
    fresh_trial();
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        rng_state = seed;
        apply(d);
        _exit(open_read_check(trial));
    }
    int st;
    if (pid < 0 || waitpid(pid, &st, 0) != pid) return -1;
    if (!WIFEXITED(st)) {
        fprintf(stderr, "trial %s seed %llu: child killed by signal %d\n", damage_name[d], (unsigned long long)seed,
                WIFSIGNALED(st) ? WTERMSIG(st) : 0);
        return -1;
    }
    return WEXITSTATUS(st) == 99 ? -1 : WEXITSTATUS(st);
}

/* The trials: per kind, how many and what must be seen. Damage that can
 * land in free pages or unused bytes (file flips, zeroed pages, random
 * bytes) may leave the store readable; then the data must read back as
 * written, or the check must fail. */
static void test_trials(void)
{
    static const int count[D_KINDS] = {70, 20, 40, 30, 30, 5, 5, 5, 5, 5};
    int signals = 0, detected[D_KINDS] = {0}, total = 0;
    for (int d = 0; d < D_KINDS; d++) {
        for (int i = 0; i < count[d]; i++) {
            uint64_t seed = (uint64_t)d * 1000003 + (uint64_t)i;
            int saw = run_trial((damage)d, seed);
            total++;
            if (saw < 0) { signals++; continue; }
            CHECK(!(saw & SAW_NO_MESSAGE));
            if (saw & (SAW_OPEN_ERR | SAW_READ_ERR | SAW_CHECK_ERR)) detected[d]++;
            switch (d) {
            case D_CHUNK_FLIP: /* every flip in a chunk: refused by the read and by the check */
                if (!(saw & SAW_READ_ERR) || !(saw & SAW_CHECK_ERR) || (saw & SAW_WRONG_DATA))
                    fprintf(stderr, "chunk flip seed %llu: saw %d\n", (unsigned long long)seed, saw);
                CHECK((saw & SAW_READ_ERR) && (saw & SAW_CHECK_ERR) && !(saw & SAW_WRONG_DATA));
                break;
            case D_CATALOG_FLIP:
                CHECK((saw & SAW_READ_ERR) && (saw & SAW_CHECK_ERR));
                break;
            case D_FILE_FLIP: case D_ZERO_PAGE: case D_RANDOM_BYTES:
                if ((saw & SAW_WRONG_DATA) && !(saw & SAW_CHECK_ERR))
                    fprintf(stderr, "%s seed %llu: wrong data unnoticed\n", damage_name[d], (unsigned long long)seed);
                CHECK(!(saw & SAW_WRONG_DATA) || (saw & SAW_CHECK_ERR));
                break;
            default: /* truncated or foreign: refused at open */
                CHECK_EQ_I(saw, SAW_OPEN_ERR);
                break;
            }
        }
    }
    CHECK(total >= 200);
    CHECK_EQ_I(signals, 0);
    printf("%d trials, %d ended by a signal; damage reported:", total, signals);
    for (int d = 0; d < D_KINDS; d++) printf(" %s %d/%d;", damage_name[d], detected[d], count[d]);
    printf("\n");
}

/* The messages: a flipped chunk names trace, column and chunk and the
 * check to run; a truncated file says so; a foreign file is not a store. */
static void test_messages(void)
{
    fresh_trial();
    /* records 0..9 are trace 1111...'s chunks: dict.str 0, events.args 0-2, dur, kind, ts */
    flip_value("columns", 2, 8 * 40); /* events.args chunk 1 */
    tl_store *s;
    tl_err err = {0};
    CHECK_EQ_I(tl_store_open(trial, &s, &err), 0);
    tl_reader *r;
    CHECK_EQ_I(tl_reader_open(s, &r, &err), 0);
    tl_colview v;
    CHECK_EQ_I(tl_reader_column(r, ids[0], "events", "args", &v, &err), TL_ESTORE);
    CHECK(strstr(err.msg, "1111000000000001") && strstr(err.msg, "events.args") && strstr(err.msg, "chunk 1") &&
          strstr(err.msg, "tracelens check"));
    tl_reader_close(r);
    tl_store_close(s);

    fresh_trial();
    truncate_to(data_size() - 4096);
    CHECK_EQ_I(tl_store_open(trial, &s, &err), TL_ESTORE);
    CHECK(strstr(err.msg, "damaged") && strstr(err.msg, "truncated"));
    truncate_to(0);
    unsigned char junk[8192];
    memset(junk, 'x', sizeof junk);
    poke(0, junk, sizeof junk);
    CHECK_EQ_I(tl_store_open(trial, &s, &err), TL_ESTORE);
    CHECK(strstr(err.msg, "not a tracelens store") != NULL);
}

typedef struct seen {
    int n, removed, ok;
    uint64_t removed_id;
} seen;

static void on_finding(void *ctx, const tl_check_finding *f)
{
    seen *s = ctx;
    s->n++;
    s->ok += f->ok;
    if (f->removed) { s->removed++; s->removed_id = f->id; }
    CHECK(f->ok == (f->problem == NULL));
}

/* check --repair: the damaged trace goes, the others stay readable. */
static void test_repair(void)
{
    fresh_trial();
    tl_store *s;
    tl_err err = {0};
    CHECK_EQ_I(tl_store_open(trial, &s, &err), 0);
    seen a = {0};
    CHECK_EQ_I(tl_store_check(s, 0, on_finding, &a, &err), TL_OK);
    CHECK_EQ_I(a.n, NTRACES);
    CHECK_EQ_I(a.ok, NTRACES);
    tl_store_close(s);

    /* the second trace's 10 chunks are records 10..19 (ids ascending) */
    flip_value("columns", 15, 8 * 20 + 3);
    CHECK_EQ_I(tl_store_open(trial, &s, &err), 0);
    seen b = {0};
    CHECK_EQ_I(tl_store_check(s, 0, on_finding, &b, &err), TL_ESTORE);
    CHECK_EQ_I(b.ok, NTRACES - 1);
    CHECK_EQ_I(b.removed, 0);
    seen c = {0};
    CHECK_EQ_I(tl_store_check(s, 1, on_finding, &c, &err), TL_OK);
    CHECK_EQ_I(c.removed, 1);
    CHECK_EQ_I(c.removed_id, ids[1]);
    seen e = {0};
    CHECK_EQ_I(tl_store_check(s, 0, on_finding, &e, &err), TL_OK);
    CHECK_EQ_I(e.n, NTRACES - 1);
    tl_reader *r;
    CHECK_EQ_I(tl_reader_open(s, &r, &err), 0);
    CHECK_EQ_I(read_trace(r, 0), 0);
    CHECK_EQ_I(read_trace(r, 2), 0);
    CHECK(!tl_reader_has(r, ids[1]));
    tl_reader_close(r);

    /* compaction: a copy that reads the same, refused over a store */
    char dest[400];
    snprintf(dest, sizeof dest, "%s/compact", root);
    CHECK_EQ_I(tl_store_compact(s, dest, &err), TL_OK);
    CHECK_EQ_I(tl_store_compact(s, dest, &err), TL_EEXIST);
    tl_store_close(s);
    CHECK_EQ_I(tl_store_open(dest, &s, &err), 0);
    CHECK_EQ_I(tl_reader_open(s, &r, &err), 0);
    CHECK_EQ_I(read_trace(r, 0), 0);
    CHECK_EQ_I(read_trace(r, 2), 0);
    tl_reader_close(r);
    tl_store_close(s);
}

/* Rewrites every chunk and catalog record of the trial store as schema 2
 * wrote them (flags 0, no checksum) and stamps it 2; or, with keep_sum,
 * clears only the flag (damage that must be caught by the length). */
static void make_v2(int keep_sum)
{
    MDB_env *env;
    MDB_txn *txn;
    MDB_dbi dbi[3];
    if (mdb_env_create(&env) || mdb_env_set_maxdbs(env, 8) || mdb_env_set_mapsize(env, 1 << 26) ||
        mdb_env_open(env, trial, 0, 0644) || mdb_txn_begin(env, NULL, 0, &txn) ||
        mdb_dbi_open(txn, "columns", 0, &dbi[0]) || mdb_dbi_open(txn, "catalog", 0, &dbi[1]) ||
        mdb_dbi_open(txn, "meta", 0, &dbi[2])) {
        CHECK(0);
        return;
    }
    for (int d = 0; d < 2; d++) {
        /* the new values are put after the walk, not under the cursor */
        MDB_cursor *c;
        MDB_val k, v;
        TL_VEC(MDB_val) keys = {0}, vals = {0};
        mdb_cursor_open(txn, dbi[d], &c);
        for (int rc = mdb_cursor_get(c, &k, &v, MDB_FIRST); !rc; rc = mdb_cursor_get(c, &k, &v, MDB_NEXT)) {
            if (d == 1 && keep_sum) continue;
            MDB_val nk = {k.mv_size, malloc(k.mv_size)}, nv = {keep_sum ? v.mv_size : v.mv_size - 8, malloc(v.mv_size)};
            memcpy(nk.mv_data, k.mv_data, k.mv_size);
            memcpy(nv.mv_data, v.mv_data, nv.mv_size);
            if (d == 0) ((unsigned char *)nv.mv_data)[3] = 0;
            tl_vec_push(&keys, nk);
            tl_vec_push(&vals, nv);
        }
        mdb_cursor_close(c);
        for (size_t i = 0; i < keys.n; i++) {
            CHECK_EQ_I(mdb_put(txn, dbi[d], &keys.v[i], &vals.v[i], 0), 0);
            free(keys.v[i].mv_data);
            free(vals.v[i].mv_data);
        }
        tl_vec_free(&keys);
        tl_vec_free(&vals);
    }
    MDB_val k = {14, "schema_version"}, v = {1, "2"};
    CHECK_EQ_I(mdb_put(txn, dbi[2], &k, &v, 0), 0);
    CHECK_EQ_I(mdb_txn_commit(txn), 0);
    mdb_env_close(env);
}

static void test_v2_store(void)
{
    fresh_trial();
    make_v2(0);
    tl_store *s;
    tl_err err = {0};
    CHECK_EQ_I(tl_store_open(trial, &s, &err), 0);
    tl_reader *r;
    CHECK_EQ_I(tl_reader_open(s, &r, &err), 0);
    for (int t = 0; t < NTRACES; t++) CHECK_EQ_I(read_trace(r, t), 0);
    tl_reader_close(r);
    if (tl_store_check(s, 0, NULL, NULL, &err)) fprintf(stderr, "v2 check: %s\n", err.msg);
    CHECK_EQ_I(tl_store_check(s, 0, NULL, NULL, &err), TL_OK);
    tl_store_close(s);
    char cmd[600];
    snprintf(cmd, sizeof cmd, "command -v mdb_dump >/dev/null || exit 0; mdb_dump -s meta -p %s | grep -qx ' 3'", trial);
    CHECK_EQ_I(system(cmd), 0); /* upgraded */

    fresh_trial();
    make_v2(1);
    CHECK_EQ_I(tl_store_open(trial, &s, &err), 0);
    CHECK_EQ_I(tl_reader_open(s, &r, &err), 0);
    tl_colview v;
    CHECK_EQ_I(tl_reader_column(r, ids[0], "events", "ts", &v, &err), TL_ESTORE);
    tl_reader_close(r);
    tl_store_close(s);
}

/* A read of an unmapped page, as LMDB makes when a damaged node points
 * past the map. */
static int read_unmapped(volatile const char *p) { return p[0]; }

static int guarded_read(volatile const char *p, tl_err *err)
{
    STORE_GUARDED(tl_fault_error("/nowhere", err), read_unmapped(p));
}

/* In a child: the guarded read returns an error (twice: the guard is
 * reusable), and the process lives on. */
static void test_fault_guard(void)
{
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        tl_fault_guard_install();
        tl_err err = {0};
        int rc1 = guarded_read((const char *)16, &err);
        int rc2 = guarded_read((const char *)32, &err);
        _exit(rc1 == TL_ESTORE && rc2 == TL_ESTORE && strstr(err.msg, "SIGSEGV") && !tl_fault_guard_get() ? 0 : 1);
    }
    int st;
    CHECK_EQ_I(waitpid(pid, &st, 0), pid);
    CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

int main(void)
{
    snprintf(root, sizeof root, "/tmp/tl_test_store_check_XXXXXX");
    if (!mkdtemp(root)) return 1;
    snprintf(pristine, sizeof pristine, "%s/pristine", root);
    snprintf(trial, sizeof trial, "%s/trial", root);
    tl_store *s;
    tl_err err = {0};
    CHECK_EQ_I(tl_store_open(pristine, &s, &err), 0);
    write_traces(s);
    tl_reader *r;
    CHECK_EQ_I(tl_reader_open(s, &r, &err), 0);
    for (int t = 0; t < NTRACES; t++) CHECK_EQ_I(read_trace(r, t), 0);
    tl_reader_close(r);
    tl_store_close(s);

    test_messages();
    test_repair();
    test_v2_store();
    test_fault_guard();
    test_trials();

    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf %s", root);
    if (system(cmd)) return 1;
    return tl_test_done("test_store_check");
}
