/* check.c — the whole-store check (tl_store_check) and compaction
 * (tl_store_compact into a folder, tl_store_compact_replace in place),
 * see store.h.
 *
 * The check walks every catalog record and every column chunk in key
 * order, both sorted by trace id: each record must carry a sound checksum
 * and parse as a JSON object; each chunk must pass the read path's checks
 * (header sizes, checksum, a full decode) and the chunks of a column must
 * be numbered 0, 1, 2, ... with one type. Problems are collected per trace;
 * repair deletes the damaged traces whole in one write transaction. */
#include "store/store_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- JSON syntax (the catalog records) ---------------------------------
 * A validator, no values: the grammar of RFC 8259 plus NaN, Infinity and
 * -Infinity, which the ingest accepts in trace metadata it copies
 * verbatim. Depth is bounded so that damage cannot exhaust the stack. */
#define JSON_MAX_DEPTH 512

static const char *json_value(const char *p, int depth);

static const char *json_ws(const char *p)
{
    while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r') p++;
    return p;
}

static const char *json_string(const char *p)
{
    for (p++; *p != '"'; p++) {
        if ((unsigned char)*p < 0x20) return NULL; /* also the terminating NUL */
        if (*p != '\\') continue;
        p++;
        if (*p == 'u') {
            for (int i = 1; i <= 4; i++)
                if (!strchr("0123456789abcdefABCDEF", p[i]) || !p[i]) return NULL;
            p += 4;
        } else if (!*p || !strchr("\"\\/bfnrt", *p)) {
            return NULL;
        }
    }
    return p + 1;
}

static const char *json_digits(const char *p)
{
    if (*p < '0' || *p > '9') return NULL;
    while (*p >= '0' && *p <= '9') p++;
    return p;
}

static const char *json_number(const char *p)
{
    if (*p == '-') p++;
    if (!strncmp(p, "Infinity", 8)) return p + 8;
    if (!(p = json_digits(p))) return NULL;
    if (*p == '.' && !(p = json_digits(p + 1))) return NULL;
    if (*p == 'e' || *p == 'E') {
        p++;
        if (*p == '+' || *p == '-') p++;
        p = json_digits(p);
    }
    return p;
}

/* Members of an object or elements of an array, from after the opening
 * bracket to after the closing one. */
static const char *json_container(const char *p, char close, int depth)
{
    p = json_ws(p);
    if (*p == close) return p + 1;
    for (;;) {
        if (close == '}') {
            if (*p != '"' || !(p = json_string(p))) return NULL;
            p = json_ws(p);
            if (*p++ != ':') return NULL;
        }
        if (!(p = json_value(p, depth + 1))) return NULL;
        p = json_ws(p);
        if (*p == close) return p + 1;
        if (*p++ != ',') return NULL;
        p = json_ws(p);
    }
}

static const char *json_value(const char *p, int depth)
{
    if (depth > JSON_MAX_DEPTH) return NULL;
    p = json_ws(p);
    switch (*p) {
    case '{': return json_container(p + 1, '}', depth);
    case '[': return json_container(p + 1, ']', depth);
    case '"': return json_string(p);
    case 't': return strncmp(p, "true", 4) ? NULL : p + 4;
    case 'f': return strncmp(p, "false", 5) ? NULL : p + 5;
    case 'n': return strncmp(p, "null", 4) ? NULL : p + 4;
    case 'N': return strncmp(p, "NaN", 3) ? NULL : p + 3;
    default: return json_number(p);
    }
}

/* A catalog record's text: one JSON object and nothing after it. */
static int json_object_ok(const char *text)
{
    const char *p = json_ws(text);
    if (*p != '{' || !(p = json_value(p, 0))) return 0;
    return *json_ws(p) == 0;
}

/* ---- the walk ------------------------------------------------------------ */
typedef struct trace_state {
    uint64_t id;
    int in_catalog;
    uint64_t chunks, bad;
    char problem[600]; /* the first one; empty while sound */
} trace_state;

/* A record whose key names no trace (deleted by key on repair). */
typedef struct stray_key {
    MDB_dbi dbi;
    size_t len;
    unsigned char *key;
} stray_key;

typedef struct walk {
    tl_reader *r;
    TL_VEC(trace_state) traces; /* by id */
    TL_VEC(stray_key) strays;
    /* the column being walked: its key without the chunk number */
    unsigned char col[600];
    size_t col_len;
    uint32_t next_chunk;
    unsigned char col_type;
} walk;

static uint64_t be64(const unsigned char *p)
{
    uint64_t v = 0;
    for (int i = 0; i < 8; i++) v = v << 8 | p[i];
    return v;
}

/* The state of trace id, added in order when it is not there yet. */
static trace_state *trace_of(walk *w, uint64_t id)
{
    size_t lo = 0, hi = w->traces.n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (w->traces.v[mid].id < id) lo = mid + 1;
        else hi = mid;
    }
    if (lo < w->traces.n && w->traces.v[lo].id == id) return &w->traces.v[lo];
    tl_vec_reserve(&w->traces, 1);
    memmove(&w->traces.v[lo + 1], &w->traces.v[lo], (w->traces.n - lo) * sizeof *w->traces.v);
    w->traces.n++;
    trace_state *t = &w->traces.v[lo];
    memset(t, 0, sizeof *t);
    t->id = id;
    return t;
}

/* Keeps the first problem of a trace, without the advice to run the
 * check that the read path's messages end with. */
static void note(trace_state *t, const char *problem)
{
    if (t->problem[0]) return;
    const char *advice = strstr(problem, "; the store is damaged");
    int n = advice ? (int)(advice - problem) : (int)strlen(problem);
    snprintf(t->problem, sizeof t->problem, "%.*s", n, problem);
}

static void add_stray(walk *w, MDB_dbi dbi, const MDB_val *k)
{
    stray_key sk = {dbi, k->mv_size, tl_xmalloc(k->mv_size ? k->mv_size : 1)};
    memcpy(sk.key, k->mv_data, k->mv_size);
    tl_vec_push(&w->strays, sk);
}

static int lmdb_walk_err(walk *w, int rc, tl_err *err)
{
    return tl_errf(err, TL_ESTORE,
                   "store %s: its B-tree is damaged (%s), beyond what removing traces repairs; restore "
                   "data.mdb from a copy, or move the store away and ingest the traces again",
                   w->r->s->dir, mdb_strerror(rc));
}

static int walk_catalog(walk *w, tl_err *err)
{
    MDB_cursor *c;
    int rc = mdb_cursor_open(w->r->txn, w->r->s->catalog, &c);
    if (rc) return lmdb_walk_err(w, rc, err);
    MDB_val k, v;
    for (rc = mdb_cursor_get(c, &k, &v, MDB_FIRST); rc == 0; rc = mdb_cursor_get(c, &k, &v, MDB_NEXT)) {
        if (k.mv_size != 8) {
            add_stray(w, w->r->s->catalog, &k);
            continue;
        }
        trace_state *t = trace_of(w, be64(k.mv_data));
        t->in_catalog = 1;
        tl_err e = {0};
        if (tl_store_catalog_verify(w->r->s->dir, t->id, &v, &e)) note(t, e.msg);
        else if (!json_object_ok(v.mv_data)) note(t, "the catalog record is not a JSON object");
    }
    mdb_cursor_close(c);
    return rc == MDB_NOTFOUND ? TL_OK : lmdb_walk_err(w, rc, err);
}

/* One chunk: its own checks, then its place in its column's sequence. */
static void walk_chunk(walk *w, const MDB_val *k, const MDB_val *v)
{
    trace_state *t = trace_of(w, be64(k->mv_data));
    t->chunks++;
    tl_err e = {0};
    int bad = tl_store_chunk_verify(w->r, k, v, &e) != TL_OK;
    size_t cl = k->mv_size - 4;
    const unsigned char *kb = k->mv_data;
    uint32_t no = (uint32_t)kb[cl] << 24 | (uint32_t)kb[cl + 1] << 16 | (uint32_t)kb[cl + 2] << 8 | kb[cl + 3];
    unsigned char type = v->mv_size > 2 ? ((const unsigned char *)v->mv_data)[2] : 0;
    if (cl != w->col_len || memcmp(kb, w->col, cl)) { /* a new column */
        w->col_len = cl < sizeof w->col ? cl : 0;
        memcpy(w->col, kb, w->col_len);
        w->next_chunk = 0;
        w->col_type = type;
    }
    /* chunk_key_ok made sure table and column are NUL-terminated */
    const char *table = (const char *)kb + 8, *col = table + strlen(table) + 1;
    if (!bad && no != w->next_chunk) {
        snprintf(e.msg, sizeof e.msg, "store %s: trace %016llx, column %.150s.%.150s: chunk %u missing",
                 w->r->s->dir, (unsigned long long)t->id, table, col, w->next_chunk);
        bad = 1;
    } else if (!bad && type != w->col_type) {
        snprintf(e.msg, sizeof e.msg, "store %s: trace %016llx, column %.150s.%.150s, chunk %u: type differs from chunk 0's",
                 w->r->s->dir, (unsigned long long)t->id, table, col, no);
        bad = 1;
    }
    w->next_chunk = no + 1;
    if (bad) {
        t->bad++;
        note(t, e.msg);
    }
}

/* Chunk keys are id, table NUL, column NUL, u32 chunk: a key without that
 * shape is a stray (chunk_damaged's parse, repeated on the raw bytes). */
static int chunk_key_ok(const MDB_val *k)
{
    const char *key = k->mv_data, *end = key + k->mv_size;
    if (k->mv_size < 8 + 2 + 4) return 0;
    const char *tend = memchr(key + 8, 0, k->mv_size - 8);
    const char *cend = tend ? memchr(tend + 1, 0, (size_t)(end - tend - 1)) : NULL;
    return cend && end == cend + 5;
}

static int walk_columns(walk *w, tl_err *err)
{
    MDB_cursor *c;
    int rc = mdb_cursor_open(w->r->txn, w->r->s->columns, &c);
    if (rc) return lmdb_walk_err(w, rc, err);
    MDB_val k, v;
    for (rc = mdb_cursor_get(c, &k, &v, MDB_FIRST); rc == 0; rc = mdb_cursor_get(c, &k, &v, MDB_NEXT)) {
        if (!chunk_key_ok(&k)) {
            if (k.mv_size < 8) add_stray(w, w->r->s->columns, &k);
            else note(trace_of(w, be64(k.mv_data)), "a column chunk with a malformed key");
            continue;
        }
        walk_chunk(w, &k, &v);
        tl_reader_drop_resident(w->r);
    }
    mdb_cursor_close(c);
    return rc == MDB_NOTFOUND ? TL_OK : lmdb_walk_err(w, rc, err);
}

/* ---- repair ------------------------------------------------------------- */
static int repair_fn(tl_store *s, MDB_txn *txn, void *ctx, tl_err *err)
{
    (void)err;
    walk *w = ctx;
    for (size_t i = 0; i < w->traces.n; i++) {
        trace_state *t = &w->traces.v[i];
        if (!t->problem[0]) continue;
        int rc = tl_store_txn_delete_trace(s, txn, t->id);
        if (rc) return rc;
    }
    for (size_t i = 0; i < w->strays.n; i++) {
        MDB_val k = {w->strays.v[i].len, w->strays.v[i].key};
        int rc = mdb_del(txn, w->strays.v[i].dbi, &k, NULL);
        if (rc && rc != MDB_NOTFOUND) return rc;
    }
    return 0;
}

static void walk_free(walk *w)
{
    tl_vec_free(&w->traces);
    for (size_t i = 0; i < w->strays.n; i++) free(w->strays.v[i].key);
    tl_vec_free(&w->strays);
}

/* Reports every trace, and every stray record as a finding of id 0;
 * returns the number of damaged ones. */
static size_t report_all(walk *w, int removed, tl_check_report_fn report, void *ctx)
{
    size_t damaged = 0;
    for (size_t i = 0; i < w->traces.n; i++) {
        trace_state *t = &w->traces.v[i];
        tl_check_finding f = {t->id, !t->problem[0], t->chunks, t->bad, t->problem[0] ? t->problem : NULL,
                              t->problem[0] && removed};
        damaged += !f.ok;
        if (report) report(ctx, &f);
    }
    for (size_t i = 0; i < w->strays.n; i++) {
        tl_check_finding f = {0, 0, 0, 0, "a record with a malformed key", removed};
        damaged++;
        if (report) report(ctx, &f);
    }
    return damaged;
}

static int walk_all(walk *w, tl_err *err)
{
    int rc = walk_catalog(w, err);
    return rc ? rc : walk_columns(w, err);
}

/* The walk, with a fault inside LMDB (a B-tree page too damaged for its
 * own checks) reported as such. */
static int walk_guarded(walk *w, tl_err *err)
{
    STORE_GUARDED(lmdb_walk_err(w, MDB_CORRUPTED, err), walk_all(w, err));
}

int tl_store_check(tl_store *s, int repair, tl_check_report_fn report, void *ctx, tl_err *err)
{
    if (s->nshards) return tl_store_refuse_list(s, "check", err);
    walk w = {0};
    int rc = tl_reader_open(s, &w.r, err);
    if (rc) return rc;
    if ((rc = walk_guarded(&w, err))) {
        tl_reader_close(w.r);
        walk_free(&w);
        return rc;
    }
    tl_reader_close(w.r);
    w.r = NULL;
    size_t damaged = 0;
    for (size_t i = 0; i < w.traces.n; i++) {
        if (!w.traces.v[i].in_catalog) note(&w.traces.v[i], "column chunks of a trace the catalog does not list");
        damaged += w.traces.v[i].problem[0] != 0;
    }
    damaged += w.strays.n;
    int removed = 0;
    if (repair && damaged) {
        rc = tl_store_with_write_txn(s, repair_fn, &w, err);
        if (rc) {
            report_all(&w, 0, report, ctx);
            walk_free(&w);
            return tl_err_prefix(err, "store %s: repair failed, nothing was removed", s->dir);
        }
        removed = 1;
    }
    report_all(&w, removed, report, ctx);
    walk_free(&w);
    if (damaged && !removed)
        return tl_errf(err, TL_ESTORE,
                       "store %s: %zu damaged trace(s) or record(s); repair removes them (each trace to be "
                       "ingested again)",
                       s->dir, damaged);
    return TL_OK;
}

int tl_store_compact(tl_store *s, const char *dest_dir, tl_err *err)
{
    if (s->nshards) return tl_store_refuse_list(s, "compact", err);
    if (tl_mkdir_p(dest_dir, err)) return err ? err->code : TL_EIO;
    char path[4096];
    snprintf(path, sizeof path, "%s/data.mdb", dest_dir);
    if (access(path, F_OK) == 0)
        return tl_errf(err, TL_EEXIST, "%s already holds a store; compact into a new folder", dest_dir);
    int rc = mdb_env_copy2(s->env, dest_dir, MDB_CP_COMPACT);
    if (rc) {
        unlink(path); /* a partial copy */
        return tl_errf(err, TL_ESTORE, "store %s: compacting into %s: %s", s->dir, dest_dir, mdb_strerror(rc));
    }
    return TL_OK;
}

/* ---- compaction in place ------------------------------------------------
 * Every process with the store open holds a shared fcntl lock on byte 0 of
 * lock.mdb (LMDB takes it at open; the first process takes it exclusive
 * and resets the lock state). Taking it exclusive here therefore succeeds
 * only when no other process has the store open, and makes processes that
 * open it meanwhile wait. The compacted file starts a new transaction
 * numbering (LMDB writes it as transaction 1), which the lock state of the
 * old file contradicts: its magic is cleared so that a process that
 * waited, and so finds the lock state not reset, fails with "not an LMDB
 * file" instead of using it. The next open resets it. */

/* Takes byte 0 of lock.mdb exclusive on a descriptor kept until the store
 * is closed: 0, or TL_EEXIST when another process has the store open. */
static int hold_lock_file(tl_store *s, tl_err *err)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/lock.mdb", s->dir);
    int fd = open(path, O_RDWR | O_CLOEXEC);
    if (fd < 0) return tl_errf(err, TL_EIO, "store %s: %s: %s", s->dir, path, strerror(errno));
    s->held_lock_fd = fd;
    struct flock fl = {.l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 0, .l_len = 1};
    if (fcntl(fd, F_SETLK, &fl) == 0) return TL_OK;
    return tl_errf(err, TL_EEXIST,
                   "store %s is open in another process; compact it when nothing else uses it, or "
                   "compact --into DIR (a copy)", s->dir);
}

static uint64_t file_size(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 ? (uint64_t)st.st_size : 0;
}

/* Writes the compacted copy into tmp_dir and renames it over data.mdb
 * (made durable: the file, then the directory). */
static int copy_and_replace(tl_store *s, const char *tmp_dir, const char *data, tl_err *err)
{
    char copy[4096];
    snprintf(copy, sizeof copy, "%s/data.mdb", tmp_dir);
    int rc = mdb_env_copy2(s->env, tmp_dir, MDB_CP_COMPACT);
    if (rc) {
        unlink(copy);
        return tl_store_lmdb_err(err, rc, "compacting", s->dir);
    }
    int fd = open(copy, O_RDONLY | O_CLOEXEC);
    rc = fd < 0 || fsync(fd) ? errno : 0;
    if (fd >= 0) close(fd);
    if (rc || rename(copy, data)) {
        rc = rc ? rc : errno;
        unlink(copy);
        return tl_store_lmdb_err(err, rc, "replacing data.mdb", s->dir);
    }
    fd = open(s->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd >= 0) {
        if (fsync(fd)) {} /* the rename is done; a failed directory sync only delays it */
        close(fd);
    }
    return TL_OK;
}

int tl_store_compact_replace(tl_store *s, uint64_t *before, uint64_t *after, tl_err *err)
{
    if (s->nshards) return tl_store_refuse_list(s, "compact", err);
    if (s->readonly)
        return tl_errf(err, TL_ESTORE, "store %s cannot be written here; compact --into DIR makes a compacted copy",
                       s->dir);
    int rc = hold_lock_file(s, err);
    if (rc) return rc;
    MDB_txn *writer; /* holds the writer lock: nothing commits after the copy's snapshot */
    if ((rc = mdb_txn_begin(s->env, NULL, 0, &writer))) return tl_store_lmdb_err(err, rc, "cannot begin write", s->dir);
    char data[4096], tmp_dir[4096];
    snprintf(data, sizeof data, "%s/data.mdb", s->dir);
    snprintf(tmp_dir, sizeof tmp_dir, "%s/.compact-XXXXXX", s->dir);
    *before = file_size(data);
    if (!mkdtemp(tmp_dir)) {
        rc = tl_errf(err, TL_EIO, "store %s: a folder for the copy: %s", s->dir, strerror(errno));
    } else {
        rc = copy_and_replace(s, tmp_dir, data, err);
        rmdir(tmp_dir);
    }
    if (rc == TL_OK) {
        static const unsigned char no_magic[4] = {0};
        if (pwrite(s->held_lock_fd, no_magic, sizeof no_magic, 0) != (ssize_t)sizeof no_magic) {}
    }
    mdb_txn_abort(writer);
    *after = file_size(data);
    return rc;
}
