/* csv.c — tables to CSV text exactly as the reference tool's pandas to_csv
 * writes them (spec pytorch-report.md §11.1), so our CSV folders can be
 * diffed against the reference ones byte for byte where the numbers agree. */
#include "report/report.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* --csv-safe: set once by the CLI before any table is written. */
static int csv_safe;

void tl_report_csv_set_safe(int on) { csv_safe = on; }

/* Would a spreadsheet read text s as a formula? It starts with = + - @,
 * tab or CR (OWASP's list) and is not a plain number such as "-1.5". */
static int formula_like(const char *s)
{
    if (!s[0] || !strchr("=+-@\t\r", s[0])) return 0;
    if ((s[0] == '+' || s[0] == '-') && (isdigit((unsigned char)s[1]) || s[1] == '.')) {
        char *end;
        strtod(s, &end);
        if (end != s && *end == 0) return 0;
    }
    return 1;
}

/* A text cell (or header name): with csv_safe, a formula-like one gets a
 * leading ' so that a spreadsheet shows it as text. */
static void text_field(tl_buf *b, const char *s)
{
    size_t n = strlen(s);
    if (!csv_safe || !formula_like(s)) {
        tl_report_csv_field(b, s, n);
        return;
    }
    tl_buf guarded = {0};
    tl_buf_putc(&guarded, '\'');
    tl_buf_append(&guarded, s, n);
    tl_report_csv_field(b, guarded.p, guarded.n);
    tl_buf_free(&guarded);
}

void tl_report_csv_field(tl_buf *b, const char *s, size_t n)
{
    /* memchr scans are vectorised: four of them beat one byte loop on the
     * long kernel-detail cells */
    if (!memchr(s, ',', n) && !memchr(s, '"', n) && !memchr(s, '\n', n) && !memchr(s, '\r', n)) {
        tl_buf_append(b, s, n);
        return;
    }
    tl_buf_putc(b, '"');
    const char *p = s, *e = s + n, *q;
    while ((q = memchr(p, '"', (size_t)(e - p))) != NULL) {
        tl_buf_append(b, p, (size_t)(q + 1 - p)); /* includes the quote */
        tl_buf_putc(b, '"');
        p = q + 1;
    }
    tl_buf_append(b, p, (size_t)(e - p));
    tl_buf_putc(b, '"');
}

/* The whole CSV text of t appended to b. */
static void csv_text(const tl_table *t, tl_buf *b)
{
    for (size_t c = 0; c < t->ncols; c++) {
        if (c) tl_buf_putc_fast(b, ',');
        text_field(b, t->cols[c].name);
    }
    tl_buf_putc_fast(b, '\n');
    char tmp[64];
    for (size_t r = 0; r < t->nrows; r++) {
        for (size_t c = 0; c < t->ncols; c++) {
            if (c) tl_buf_putc_fast(b, ',');
            const char *s = tl_table_cell_text(t, c, r, tmp, sizeof tmp);
            if (t->cols[c].type == TL_STR) text_field(b, s);
            else tl_report_csv_field(b, s, strlen(s));
        }
        tl_buf_putc_fast(b, '\n');
    }
}

int tl_report_csv_write_fp(const tl_table *t, FILE *fp, tl_err *err)
{
    tl_buf b = {0};
    csv_text(t, &b);
    int rc = TL_OK;
    if (b.n && fwrite(b.p, 1, b.n, fp) != b.n) rc = tl_errf(err, TL_EIO, "write failed: %s", strerror(errno));
    tl_buf_free(&b);
    if (rc == TL_OK && fflush(fp) != 0) rc = tl_errf(err, TL_EIO, "write failed: %s", strerror(errno));
    return rc;
}

static int write_all(int fd, const char *p, size_t n)
{
    while (n) {
        ssize_t w = write(fd, p, n);
        if (w < 0) {
            if (errno == EINTR) continue;
            return -1;
        }
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

/* b holds the file's text (one buffer per file: a single write call). */
static int write_file(const char *path, const tl_buf *b, tl_err *err)
{
    /* Write beside the target and rename, unless the target is a device or
     * pipe (e.g. /dev/stdout), which a rename would replace. */
    struct stat st;
    int exists = stat(path, &st) == 0;
    int direct = exists && !S_ISREG(st.st_mode);
    char *tmp = direct ? tl_xstrdup(path) : NULL;
    if (!direct) {
        size_t n = strlen(path) + 32;
        tmp = tl_xmalloc(n);
        snprintf(tmp, n, "%s.tmp%ld", path, (long)getpid());
    }
    int fd = open(tmp, O_WRONLY | O_CREAT | (direct ? 0 : O_TRUNC), 0666);
    if (fd < 0) {
        int rc = tl_errf(err, TL_EIO, "%s: cannot create: %s", path, strerror(errno));
        free(tmp);
        return rc;
    }
    int rc = TL_OK;
    if (b->n && write_all(fd, b->p, b->n) != 0) rc = tl_errf(err, TL_EIO, "write failed: %s", strerror(errno));
    if (close(fd) != 0 && rc == TL_OK) rc = tl_errf(err, TL_EIO, "close failed: %s", strerror(errno));
    /* An existing file is unlinked first: renaming over it makes ext4
     * (auto_da_alloc) start writeback of the new file on the spot, which
     * doubled the write time of a report rewritten in place. Readers may
     * miss the file for that moment; they never see it half written. */
    if (rc == TL_OK && !direct && exists) unlink(path);
    if (rc == TL_OK && !direct && rename(tmp, path) != 0)
        rc = tl_errf(err, TL_EIO, "rename failed: %s", strerror(errno));
    if (rc != TL_OK) {
        if (!direct) unlink(tmp);
        tl_err_prefix(err, "%s", path);
    }
    free(tmp);
    return rc;
}

int tl_report_csv_write(const tl_table *t, const char *path, tl_err *err)
{
    if (strcmp(path, "-") == 0) return tl_report_csv_write_fp(t, stdout, err);
    tl_buf b = {0};
    csv_text(t, &b);
    int rc = write_file(path, &b, err);
    tl_buf_free(&b);
    return rc;
}

/* A CSV folder is written by two threads taking tables in turn: the text
 * of a report's sheets (mostly float formatting) is a few ms, about as much
 * as the rest of a small report. */
typedef struct csv_dir_job {
    tl_table *const *tables;
    size_t n;
    const char *dir;
    size_t next;            /* next table to take (atomic) */
    int failed;             /* some table failed: take no more (atomic) */
    int *rc;                /* per table */
    tl_err *errs;           /* per table */
} csv_dir_job;

static void *csv_dir_worker(void *arg)
{
    csv_dir_job *j = arg;
    tl_buf path = {0}, text = {0};
    for (;;) {
        if (__atomic_load_n(&j->failed, __ATOMIC_RELAXED)) break;
        size_t i = __atomic_fetch_add(&j->next, 1, __ATOMIC_RELAXED);
        if (i >= j->n) break;
        path.n = 0;
        tl_buf_printf(&path, "%s/", j->dir);
        for (const char *p = j->tables[i]->name; *p; p++) tl_buf_putc(&path, *p == '/' ? '_' : *p);
        tl_buf_puts(&path, ".csv");
        text.n = 0; /* the buffer is reused across files */
        csv_text(j->tables[i], &text);
        j->rc[i] = write_file(path.p, &text, &j->errs[i]);
        if (j->rc[i]) __atomic_store_n(&j->failed, 1, __ATOMIC_RELAXED);
    }
    tl_buf_free(&path);
    tl_buf_free(&text);
    return NULL;
}

int tl_report_csv_write_dir(tl_table *const *tables, size_t n, const char *dir, tl_err *err)
{
    int rc = tl_mkdir_p(dir, err);
    if (rc) return rc;
    csv_dir_job j = {.tables = tables, .n = n, .dir = dir};
    j.rc = tl_xcalloc(n ? n : 1, sizeof *j.rc);
    j.errs = tl_xcalloc(n ? n : 1, sizeof *j.errs);
    tl_thread *thr = n > 1 ? tl_thread_start(csv_dir_worker, &j) : NULL;
    csv_dir_worker(&j);
    if (thr) tl_thread_join(thr);
    for (size_t i = 0; i < n && !rc; i++)
        if (j.rc[i]) {
            rc = j.rc[i];
            if (err) *err = j.errs[i];
        }
    free(j.rc);
    free(j.errs);
    return rc;
}
