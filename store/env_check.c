/* env_check.c — checks a store's data.mdb before LMDB maps it. LMDB maps
 * the file and trusts it: a truncated file makes any page access past its
 * end a SIGBUS, and a damaged meta page sends it anywhere. Here the two meta
 * pages are read with pread and the file's length compared with what they
 * say is in use, so such a store is refused with a message instead.
 *
 * The LMDB file layout (stable since LMDB 0.9, data version 1): page 0 and
 * page 1 are meta pages, each a 16-byte page header (u16 flags at byte 10,
 * P_META = 0x08) followed by MDB_meta: u32 magic 0xBEEFC0DE, u32 version,
 * the map address and size (8 bytes each), two 48-byte MDB_db records (free
 * pages, main; the first's u32 md_pad is the page size, md_root is the u64
 * at byte 40 of each), the u64 last page used and the u64 transaction id.
 * Native byte order. LMDB uses the meta with the larger transaction id. */
#include "store/store_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define META_AT 16           /* MDB_meta after the page header */
#define META_BYTES (META_AT + 136)
#define P_META 0x08
#define MDB_MAGIC 0xBEEFC0DEu
#define MDB_DATA_VERSION 1u
#define P_INVALID UINT64_MAX /* md_root of an empty tree */

typedef struct lmdb_meta {
    uint32_t psize;
    uint64_t free_root, main_root, last_pg, txnid;
} lmdb_meta;

static uint32_t rd32(const unsigned char *p)
{
    uint32_t v;
    memcpy(&v, p, 4);
    return v;
}

static uint64_t rd64(const unsigned char *p)
{
    uint64_t v;
    memcpy(&v, p, 8);
    return v;
}

/* Reads the meta page at off: 0, -1 when it is not an LMDB meta page, -2
 * when the file ends before it. */
static int read_meta(int fd, off_t off, lmdb_meta *m)
{
    unsigned char b[META_BYTES];
    if (pread(fd, b, sizeof b, off) != (ssize_t)sizeof b) return -2;
    uint16_t flags;
    memcpy(&flags, b + 10, 2);
    if (!(flags & P_META) || rd32(b + META_AT) != MDB_MAGIC || rd32(b + META_AT + 4) != MDB_DATA_VERSION)
        return -1;
    m->psize = rd32(b + META_AT + 24);
    m->free_root = rd64(b + META_AT + 24 + 40);
    m->main_root = rd64(b + META_AT + 24 + 48 + 40);
    m->last_pg = rd64(b + META_AT + 120);
    m->txnid = rd64(b + META_AT + 128);
    return 0;
}

static int damaged(tl_err *err, const char *dir, const char *what)
{
    return tl_errf(err, TL_ESTORE,
                   "store %s is damaged: %s; restore data.mdb from a copy, or move the store away and "
                   "ingest the traces again",
                   dir, what);
}

/* The checks of an open data.mdb (fd); dir for the messages. */
static int check_file(int fd, const char *dir, tl_err *err)
{
    lmdb_meta m[2];
    int e = read_meta(fd, 0, &m[0]);
    if (e == -2) return damaged(err, dir, "data.mdb ends inside its first page (truncated?)");
    /* a file whose first page is not LMDB's, unless the second meta page
     * (at the usual page size) shows it is a damaged store */
    if (e && read_meta(fd, 4096, &m[1]))
        return tl_errf(err, TL_ESTORE, "%s is not a tracelens store (data.mdb is not an LMDB file)", dir);
    if (e) return damaged(err, dir, "the first meta page is damaged");
    uint32_t ps = m[0].psize;
    if (ps < 512 || ps > 65536 || (ps & (ps - 1))) return damaged(err, dir, "the first meta page is damaged");
    if (read_meta(fd, ps, &m[1])) return damaged(err, dir, "the second meta page is damaged or missing");
    if (m[1].psize != ps) return damaged(err, dir, "the meta pages disagree on the page size");
    uint64_t last = 0;
    for (int i = 0; i < 2; i++) {
        if (m[i].last_pg < 1 || m[i].last_pg > (UINT64_MAX >> 17))
            return damaged(err, dir, "a meta page holds an impossible last page");
        if ((m[i].free_root != P_INVALID && m[i].free_root > m[i].last_pg) ||
            (m[i].main_root != P_INVALID && m[i].main_root > m[i].last_pg))
            return damaged(err, dir, "a meta page points past the pages in use");
        if (m[i].last_pg > last) last = m[i].last_pg;
    }
    /* The size is read after the metas: a writer extends the file before
     * it writes the meta that counts the new pages. */
    struct stat st;
    if (fstat(fd, &st)) return tl_errf(err, TL_EIO, "store %s: data.mdb: %s", dir, strerror(errno));
    uint64_t size = (uint64_t)st.st_size, need = (last + 1) * ps;
    char what[200];
    if (size % ps) {
        snprintf(what, sizeof what, "data.mdb is %llu bytes, not a whole number of %u-byte pages (truncated?)",
                 (unsigned long long)size, ps);
        return damaged(err, dir, what);
    }
    if (size < need) {
        snprintf(what, sizeof what, "data.mdb is %llu bytes, but its pages in use end at %llu (truncated?)",
                 (unsigned long long)size, (unsigned long long)need);
        return damaged(err, dir, what);
    }
    return TL_OK;
}

int tl_store_env_check(const char *dir, tl_err *err)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/data.mdb", dir);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        if (errno == ENOENT) return TL_OK; /* a new store */
        return tl_errf(err, TL_ESTORE, "store %s: cannot read data.mdb: %s", dir, strerror(errno));
    }
    struct stat st;
    int rc = TL_OK;
    /* An empty file is one LMDB created and never wrote to: it starts over. */
    if (fstat(fd, &st) || st.st_size != 0) rc = check_file(fd, dir, err);
    close(fd);
    return rc;
}
