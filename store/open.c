/* open.c — opening a store's LMDB environment: creating a new store (and
 * removing what was made when that fails), opening an existing one for
 * reading (read-only where the files cannot be written), reserving disk
 * space before LMDB writes to it, and the messages of LMDB errors.
 *
 * LMDB maps lock.mdb and writes into the map: on a full file system a
 * sparse lock file makes that first write a SIGBUS. The lock file is
 * therefore allocated (posix_fallocate) before LMDB maps it, and the blocks
 * past the data file's end that a write transaction may fill before it
 * writes (tl_store_reserve), so that a full disk is an error: "No space
 * left on device". */
#include "store/store_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#define MAX_READERS 256
/* The length LMDB 0.9 gives lock.mdb for MAX_READERS readers: a 192-byte
 * header (MDB_txninfo) and 64 bytes per further reader. A lock file of
 * another length is left as it is (its length sets the reader table size
 * every process of the store uses). */
#define LOCK_FILE_BYTES ((MAX_READERS - 1) * 64 + 192)

/* Whether the file system of dir has no space left for a write. */
static int disk_full(const char *dir)
{
    struct statvfs v;
    return dir && statvfs(dir, &v) == 0 && (uint64_t)v.f_bavail * v.f_frsize < ((uint64_t)1 << 20);
}

int tl_store_lmdb_err(tl_err *err, int rc, const char *what, const char *dir)
{
    /* LMDB reports a short write (the disk filled during it) as EIO */
    if (rc == ENOSPC || rc == EDQUOT || (rc == EIO && disk_full(dir)))
        return tl_errf(err, TL_ESTORE, "store %s: %s: No space left on device%s", dir ? dir : "", what,
                       rc == EDQUOT ? " (disk quota exceeded)" : "");
    return tl_errf(err, TL_ESTORE, "store %s: %s: %s", dir ? dir : "", what, mdb_strerror(rc));
}

/* Initial map size. LMDB maps the file sparsely, so this is address space,
 * not disk; it is raised (doubling) whenever a write hits MDB_MAP_FULL. */
static size_t initial_mapsize_bytes = (size_t)1 << 30;

void tl_store_set_initial_mapsize(size_t bytes)
{
    initial_mapsize_bytes = bytes >= 65536 ? bytes : (size_t)1 << 30;
}

int tl_store_reserve(tl_store *s, size_t bytes, tl_err *err)
{
    int fd;
    struct stat st;
    if (mdb_env_get_fd(s->env, &fd) || fstat(fd, &st)) return TL_OK;
    if ((size_t)st.st_size >= bytes) return TL_OK;
    /* past the end, keeping the length: LMDB's writes then land in
     * allocated blocks, and the file stays as long as its pages in use */
    int rc;
    do rc = fallocate(fd, FALLOC_FL_KEEP_SIZE, st.st_size, (off_t)bytes - st.st_size) ? errno : 0;
    while (rc == EINTR);
    /* a file system without fallocate: LMDB's own writes report a full disk */
    if (rc == 0 || rc == EOPNOTSUPP || rc == ENOSYS || rc == EINVAL) return TL_OK;
    if (rc == ENOSPC || rc == EDQUOT)
        return tl_errf(err, TL_ESTORE, "store %s: writing %.1f MB more: No space left on device%s", s->dir,
                       (double)(bytes - (size_t)st.st_size) / 1e6, rc == EDQUOT ? " (disk quota exceeded)" : "");
    return tl_errf(err, TL_ESTORE, "store %s: reserving space: %s", s->dir, strerror(rc));
}

/* Allocates lock.mdb of a store about to be opened for writing (see the
 * file comment): 0 or an errno value. */
static int allocate_lock_file(const char *dir)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/lock.mdb", dir);
    int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0664);
    if (fd < 0) return errno;
    struct stat st;
    int rc = fstat(fd, &st) ? errno : 0;
    while (!rc && (rc = posix_fallocate(fd, 0, st.st_size > 0 ? st.st_size : LOCK_FILE_BYTES)) == EINTR) rc = 0;
    close(fd);
    return rc == EOPNOTSUPP || rc == EINVAL ? 0 : rc;
}

/* Opens the named databases in txn, refusing an LMDB environment that
 * holds records but no "meta" database (another program's): 0, an LMDB
 * code, or TL_ESTORE with the message set. Read-only: nothing is created. */
static int open_dbis(tl_store *s, MDB_txn *txn, tl_err *err)
{
    unsigned create = s->readonly ? 0 : MDB_CREATE;
    int rc = mdb_dbi_open(txn, "meta", 0, &s->meta);
    if (rc == MDB_NOTFOUND) {
        MDB_stat st;
        if ((rc = mdb_stat(txn, 0 /* the main database */, &st))) return rc;
        if (st.ms_entries || s->readonly)
            return tl_errf(err, TL_ESTORE, "%s is not a tracelens store (an LMDB environment of another program)",
                           s->dir);
        rc = mdb_dbi_open(txn, "meta", MDB_CREATE, &s->meta);
    }
    if (rc || (rc = mdb_dbi_open(txn, "catalog", create, &s->catalog)) ||
        (rc = mdb_dbi_open(txn, "columns", create, &s->columns)))
        return rc;
    return 0;
}

/* Writes TL_SCHEMA_VERSION into meta (a new store, or an upgrade). */
static int put_version(tl_store *s, MDB_txn *txn)
{
    char ver[16];
    int n = snprintf(ver, sizeof ver, "%d", TL_SCHEMA_VERSION);
    MDB_val k = {strlen("schema_version"), "schema_version"}, v = {(size_t)n, ver};
    return mdb_put(txn, s->meta, &k, &v, 0);
}

/* Stamps a new store, upgrades an older one, refuses another version:
 * 0, an LMDB code, or TL_EVERSION with the message set. A read-only store
 * is read as it is. */
static int check_version(tl_store *s, MDB_txn *txn, tl_err *err)
{
    MDB_val k = {strlen("schema_version"), "schema_version"}, v;
    int rc = mdb_get(txn, s->meta, &k, &v);
    if (rc == MDB_NOTFOUND) return s->readonly ? 0 : put_version(s, txn);
    if (rc) return rc;
    char ver[16] = {0};
    memcpy(ver, v.mv_data, v.mv_size < 15 ? v.mv_size : 15);
    int have = atoi(ver);
    /* Version 2 added chunk encoding 2 (for_codec.h), version 3 chunk and
     * catalog checksums; both read older chunks and records as they are.
     * A version 1 or 2 store is stamped 3 so that an older tracelens,
     * which cannot read what is written from now on (or would not verify
     * it), refuses it with this message. */
    if (have == 1 || have == 2) return s->readonly ? 0 : put_version(s, txn);
    if (have != TL_SCHEMA_VERSION)
        return tl_errf(err, TL_EVERSION,
                       "store %s has schema version %d; this tracelens reads version %d "
                       "(re-ingest into a new store with --db, or use a matching tracelens)",
                       s->dir, have, TL_SCHEMA_VERSION);
    return 0;
}

/* Creates and opens s->env with flags (LMDB wants a failed handle closed):
 * 0 or an LMDB code. */
static int env_open(tl_store *s, unsigned flags)
{
    int rc = mdb_env_create(&s->env);
    if (rc) return rc;
    mdb_env_set_maxdbs(s->env, 8);
    mdb_env_set_maxreaders(s->env, MAX_READERS);
    mdb_env_set_mapsize(s->env, s->mapsize);
    rc = mdb_env_open(s->env, s->dir, flags, 0664);
    if (rc) {
        mdb_env_close(s->env);
        s->env = NULL;
    }
    return rc;
}

/* Opens the environment: read-write, or MDB_RDONLY, falling back to
 * MDB_NOLOCK when lock.mdb cannot be opened for writing (LMDB itself goes
 * without it only on a read-only file system, EROFS). Without the lock
 * file no reader is registered: a process writing the store meanwhile
 * may reuse pages this one reads, which the checks of every read turn
 * into a damage error, never into wrong results. */
static int env_open_mode(tl_store *s)
{
    /* MDB_NOTLS: readers may be used from worker threads. */
    if (!s->readonly) return env_open(s, MDB_NOTLS);
    int rc = env_open(s, MDB_NOTLS | MDB_RDONLY);
    if (rc == EACCES || rc == EPERM || rc == EROFS) rc = env_open(s, MDB_NOTLS | MDB_RDONLY | MDB_NOLOCK);
    return rc;
}

/* The named databases and the schema version, in one transaction. */
static int open_txn(tl_store *s, tl_err *err)
{
    MDB_txn *txn;
    unsigned flags = s->readonly ? MDB_RDONLY : 0;
    int rc = mdb_txn_begin(s->env, NULL, flags, &txn);
    if (rc == MDB_MAP_RESIZED) {
        mdb_env_set_mapsize(s->env, 0);
        rc = mdb_txn_begin(s->env, NULL, flags, &txn);
    }
    if (rc) return rc;
    if ((rc = open_dbis(s, txn, err)) || (rc = check_version(s, txn, err))) {
        mdb_txn_abort(txn);
        return rc;
    }
    return mdb_txn_commit(txn);
}

static int open_env(tl_store *s, tl_err *err)
{
    /* data.mdb is checked before LMDB maps it: a damaged file fails here */
    int rc = tl_store_env_check(s->dir, err);
    if (rc) return rc;
    tl_fault_guard_install();
    /* Keep the larger of our default and what the file already uses. */
    s->mapsize = initial_mapsize_bytes;
    if (!s->readonly && (rc = allocate_lock_file(s->dir))) return tl_store_lmdb_err(err, rc, "cannot open", s->dir);
    if (!(rc = env_open_mode(s))) {
        MDB_envinfo info;
        mdb_env_info(s->env, &info);
        if (info.me_mapsize > s->mapsize) s->mapsize = info.me_mapsize;
        rc = open_txn(s, err);
    }
    if (rc && !tl_store_own_code(rc)) rc = tl_store_lmdb_err(err, rc, "cannot open", s->dir);
    return rc;
}

static tl_store *store_new(const char *dir, int readonly)
{
    tl_store *s = tl_xcalloc(1, sizeof *s);
    s->dir = tl_xstrdup(dir);
    s->readonly = readonly;
    s->held_lock_fd = -1;
    return s;
}

/* The first directory of path (a prefix of it) that does not exist, into
 * buf; empty when path exists. */
static void first_missing(const char *path, char *buf, size_t n)
{
    snprintf(buf, n, "%s", path);
    struct stat st;
    if (stat(buf, &st) == 0) { buf[0] = 0; return; }
    for (;;) {
        char *slash = strrchr(buf, '/');
        if (!slash || slash == buf) return;
        *slash = 0;
        if (stat(buf, &st) == 0) { *slash = '/'; return; }
    }
}

/* Removes what a failed create made: the files of a store that did not
 * exist, and the directories from dir up to made (the first one created). */
static void undo_create(const char *dir, const char *made)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/data.mdb", dir);
    unlink(path);
    snprintf(path, sizeof path, "%s/lock.mdb", dir);
    unlink(path);
    if (!made[0]) return;
    snprintf(path, sizeof path, "%s", dir);
    size_t stop = strlen(made);
    while (strlen(path) >= stop && rmdir(path) == 0) {
        char *slash = strrchr(path, '/');
        if (!slash) break;
        *slash = 0;
    }
}

int tl_store_open(const char *dir, tl_store **out, tl_err *err)
{
    *out = NULL;
    char made[4096], data[4096];
    first_missing(dir, made, sizeof made);
    snprintf(data, sizeof data, "%s/data.mdb", dir);
    struct stat st;
    int is_new = stat(data, &st) != 0;
    if (tl_mkdir_p(dir, err)) {
        if (is_new) undo_create(dir, made);
        return err ? err->code : TL_EIO;
    }
    tl_store *s = store_new(dir, 0);
    int rc = open_env(s, err);
    if (rc) {
        tl_store_close(s);
        if (is_new) undo_create(dir, made);
        return rc;
    }
    *out = s;
    return TL_OK;
}

/* Whether this process may write the store's files (permissions, a
 * read-only mount). */
static int store_writable(const char *dir)
{
    char path[4096];
    if (access(dir, W_OK)) return 0;
    snprintf(path, sizeof path, "%s/data.mdb", dir);
    if (access(path, W_OK)) return 0;
    snprintf(path, sizeof path, "%s/lock.mdb", dir);
    return access(path, F_OK) || !access(path, W_OK);
}

int tl_store_open_read(const char *dir, tl_store **out, tl_err *err)
{
    *out = NULL;
    char data[4096];
    snprintf(data, sizeof data, "%s/data.mdb", dir);
    struct stat st;
    if (stat(data, &st) != 0) return tl_errf(err, TL_ENOTFOUND, "no store at %s (ingest creates one)", dir);
    tl_store *s = store_new(dir, !store_writable(dir));
    int rc = open_env(s, err);
    if (rc) {
        tl_store_close(s);
        return rc;
    }
    *out = s;
    return TL_OK;
}

int tl_store_open_list(const char *const *dirs, size_t n, tl_store **out, tl_err *err)
{
    if (n == 1) return tl_store_open_read(dirs[0], out, err);
    if (n == 0) return tl_errf(err, TL_EUSAGE, "an empty store list");
    tl_store *s = tl_xcalloc(1, sizeof *s);
    s->held_lock_fd = -1;
    s->readonly = 1;
    s->shards = tl_xcalloc(n, sizeof *s->shards);
    tl_buf names = {0};
    for (size_t i = 0; i < n; i++) {
        int rc = tl_store_open_read(dirs[i], &s->shards[i], err);
        if (rc) {
            tl_buf_free(&names);
            s->nshards = i;
            tl_store_close(s);
            return rc;
        }
        s->nshards = i + 1;
        if (i) tl_buf_puts(&names, " + ");
        tl_buf_puts(&names, dirs[i]);
    }
    tl_buf_putc(&names, 0);
    s->dir = names.p;
    *out = s;
    return TL_OK;
}

int tl_store_refuse_list(const tl_store *s, const char *what, tl_err *err)
{
    if (!s->nshards) return TL_OK;
    return tl_errf(err, TL_EUNSUPPORTED, "%s takes one store, not the store list %s", what, s->dir);
}

void tl_store_close(tl_store *s)
{
    if (!s) return;
    for (size_t i = 0; i < s->nshards; i++) tl_store_close(s->shards[i]);
    free(s->shards);
    if (s->env) mdb_env_close(s->env);
    /* after LMDB's lock is gone: closing any descriptor of lock.mdb drops
     * every lock this process holds on it */
    if (s->held_lock_fd >= 0) close(s->held_lock_fd);
    free(s->dir);
    free(s);
}

const char *tl_store_dir(const tl_store *s) { return s->dir; }

int tl_store_readonly(const tl_store *s) { return s->readonly; }
