/* csv_read.c — CSV files and folders back into tl_tables, with column types
 * inferred the way pandas' read_csv infers them, because the reference tool
 * compares reports after reading them with pandas: a report we read must
 * have the same nulls, ints and floats. The same inference serves the xlsx
 * reader (tl_report_table_fill_text). Also the report-list helpers. */
#include "report/report.h"

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

/* ---- table lists */
void tl_report_tables_free(tl_report_tables *l)
{
    tl_tables_free(l->v, l->n);
    l->v = NULL;
    l->n = l->cap = 0;
}

tl_table *tl_report_tables_find(const tl_report_tables *l, const char *name)
{
    return tl_tables_find(l->v, l->n, name);
}

/* ---- pandas-style cell classification */

/* pandas 1.5's default na_values, as read_csv and read_excel apply them
 * for the reference (pandas 2.0 added "None"; under 1.5 the text "None" the
 * reference writes for a missing perf-model parameter stays text, so a
 * compared column such as `param: stride_output` is kept, not dropped as
 * all-NA). */
static int is_na_text(const char *s)
{
    static const char *const na[] = {"",     "#N/A", "#N/A N/A", "#NA",     "-1.#IND", "-1.#QNAN",
                                     "-NaN", "-nan", "1.#IND",   "1.#QNAN", "<NA>",    "N/A",
                                     "NA",   "NULL", "NaN",      "n/a",     "nan",     "null"};
    if (!s) return 1;
    if (s[0] && !memchr("#-1<NnN", s[0], 7)) return 0; /* fast path for most text */
    for (size_t i = 0; i < sizeof na / sizeof *na; i++)
        if (strcmp(s, na[i]) == 0) return 1;
    return 0;
}

static const char *skip_sp(const char *s)
{
    while (*s == ' ') s++;
    return s;
}

/* Integer per pandas' C parser: optional spaces, sign, digits, spaces.
 * Returns 1 ok, 2 syntactically an integer but outside int64, 0 not one. */
static int parse_int(const char *s, int64_t *out)
{
    s = skip_sp(s);
    int neg = 0;
    if (*s == '+' || *s == '-') neg = *s++ == '-';
    if (*s < '0' || *s > '9') return 0;
    uint64_t v = 0;
    int over = 0;
    for (; *s >= '0' && *s <= '9'; s++) {
        unsigned d = (unsigned)(*s - '0');
        if (v > (UINT64_MAX - d) / 10) over = 1;
        else v = v * 10 + d;
    }
    if (*skip_sp(s)) return 0;
    if (over || v > (uint64_t)INT64_MAX + (uint64_t)neg) return 2;
    *out = neg ? (int64_t)(0 - v) : (int64_t)v;
    return 1;
}

/* Float per pandas: decimal with optional exponent, or inf/infinity (any
 * case, optional sign). No hex, no "nan" (those are NA strings). */
static int parse_float(const char *s, double *out)
{
    s = skip_sp(s);
    const char *p = s;
    if (*p == '+' || *p == '-') p++;
    if (strncasecmp(p, "inf", 3) == 0) {
        const char *q = p + 3;
        if (strncasecmp(q, "inity", 5) == 0) q += 5;
        if (*skip_sp(q)) return 0;
        *out = *s == '-' ? -INFINITY : INFINITY;
        return 1;
    }
    int digits = 0;
    while (*p >= '0' && *p <= '9') p++, digits++;
    if (*p == '.') {
        p++;
        while (*p >= '0' && *p <= '9') p++, digits++;
    }
    if (!digits) return 0;
    if (*p == 'e' || *p == 'E') {
        p++;
        if (*p == '+' || *p == '-') p++;
        if (*p < '0' || *p > '9') return 0;
        while (*p >= '0' && *p <= '9') p++;
    }
    if (*skip_sp(p)) return 0;
    *out = strtod(s, NULL);
    return 1;
}

static int parse_bool(const char *s, int *v)
{
    if (!strcmp(s, "True") || !strcmp(s, "TRUE") || !strcmp(s, "true")) return *v = 1, 1;
    if (!strcmp(s, "False") || !strcmp(s, "FALSE") || !strcmp(s, "false")) return *v = 0, 1;
    return 0;
}

/* pandas' _dedup_names: the second "x" becomes "x.1", and so on. */
static char *unique_name(tl_arena *a, char **names, size_t n, const char *want)
{
    char *cur = tl_arena_strdup(a, want);
    for (unsigned k = 1;; k++) {
        size_t i;
        for (i = 0; i < n; i++)
            if (strcmp(names[i], cur) == 0) break;
        if (i == n) return cur;
        cur = tl_arena_printf(a, "%s.%u", want, k);
    }
}

void tl_report_table_fill_text(tl_table *t, const char *const *header, size_t ncols,
                               const char *const *cells, size_t nrows, unsigned flags)
{
    int raw = (flags & TL_READ_RAW) != 0, ref = (flags & TL_READ_REF_CELLS) != 0;
    /* Raw tables keep the header text as written (the reference's two-line
     * MultiIndex header repeats a name); typed ones name columns as pandas. */
    char **names = tl_xmalloc((ncols ? ncols : 1) * sizeof *names);
    for (size_t c = 0; c < ncols; c++) {
        const char *h = header ? header[c] : NULL;
        char unnamed[40];
        if (raw) {
            names[c] = tl_arena_strdup(&t->arena, h ? h : "");
            continue;
        }
        if (!h || !*h) {
            snprintf(unnamed, sizeof unnamed, "Unnamed: %zu", c);
            h = unnamed;
        }
        names[c] = unique_name(&t->arena, names, c, h);
    }
    tl_table_set_nrows(t, nrows);
    for (size_t c = 0; c < ncols; c++) {
        size_t n_int = 0, n_num = 0, n_bool = 0, n_val = 0;
        if (!raw) {
            for (size_t r = 0; r < nrows; r++) {
                const char *s = cells[r * ncols + c];
                if (is_na_text(s)) continue;
                n_val++;
                int64_t iv;
                double fv;
                int bv, k = parse_int(s, &iv);
                if (k == 1) n_int++, n_num++;
                else if (k == 2 || parse_float(s, &fv)) n_num++;
                else if (parse_bool(s, &bv)) n_bool++;
                else break; /* text: the column is STR */
            }
        }
        tl_type ty = TL_STR;
        if (!raw && nrows) {
            if (n_val == 0) ty = TL_F64;
            else if (n_int == nrows) ty = TL_I64;
            else if (n_num == n_val) ty = TL_F64;
            else if (n_bool == n_val) ty = TL_BOOL;
        }
        size_t col = tl_table_add_col(t, names[c], ty);
        for (size_t r = 0; r < nrows; r++) {
            const char *s = cells[r * ncols + c];
            if (raw ? (!s || !*s) : is_na_text(s)) continue; /* already missing */
            int64_t iv;
            double fv;
            int bv;
            switch (ty) {
            case TL_STR:
                if (ref) tl_table_set_str_ref(t, col, r, s);
                else tl_table_set_str(t, col, r, s);
                break;
            case TL_I64:
                parse_int(s, &iv);
                tl_table_set_i64(t, col, r, iv);
                break;
            case TL_F64:
                if (parse_int(s, &iv) == 1) fv = (double)iv;
                else if (!parse_float(s, &fv)) fv = strtod(skip_sp(s), NULL);
                tl_table_set_f64(t, col, r, fv);
                break;
            case TL_BOOL:
                parse_bool(s, &bv);
                tl_table_set_bool(t, col, r, bv);
                break;
            }
        }
    }
    free(names);
}

/* ---- CSV tokenizer: in place over a private, NUL-padded copy of the file;
 * unquoted fields end where their delimiter was, quoted ones are unescaped
 * leftwards (the text only shrinks), so every cell is a C string in the
 * table's arena without another copy. */
typedef TL_VEC(const char *) cellvec;

int tl_report_csv_read_mem(const char *data, size_t n, const char *name, unsigned flags,
                           tl_table **out, tl_err *err)
{
    tl_table *t = tl_table_new(name);
    char *p = tl_arena_alloc(&t->arena, n + 1);
    memcpy(p, data, n);
    p[n] = 0;
    size_t i = 0;
    if (n >= 3 && (unsigned char)p[0] == 0xef && (unsigned char)p[1] == 0xbb && (unsigned char)p[2] == 0xbf)
        i = 3;
    cellvec cells = {0};
    size_t ncols = 0, nrows = 0, line = 1;
    int have_header = 0;
    const char **header = NULL;
    while (i < n) {
        if (p[i] == '\n' || p[i] == '\r') { /* blank line */
            i += (p[i] == '\r' && i + 1 < n && p[i + 1] == '\n') ? 2 : 1;
            line++;
            continue;
        }
        size_t rec_line = line, nf = 0;
        for (;;) {
            char *field = p + i;
            char delim;
            if (p[i] == '"') {
                size_t r = i + 1, w = i;
                for (;;) {
                    if (r >= n) {
                        tl_vec_free(&cells);
                        free(header);
                        tl_table_free(t);
                        return tl_errf(err, TL_EFORMAT, "%s: line %zu: unterminated quoted field", name, rec_line);
                    }
                    if (p[r] == '"') {
                        if (r + 1 < n && p[r + 1] == '"') {
                            p[w++] = '"';
                            r += 2;
                            continue;
                        }
                        r++;
                        break;
                    }
                    if (p[r] == '\n') line++;
                    p[w++] = p[r++];
                }
                /* Text after the closing quote joins the field (as pandas). */
                while (r < n && p[r] != ',' && p[r] != '\n' && p[r] != '\r') p[w++] = p[r++];
                delim = r < n ? p[r] : 0;
                p[w] = 0;
                i = r;
            } else {
                size_t r = i;
                while (r < n && p[r] != ',' && p[r] != '\n' && p[r] != '\r') r++;
                delim = r < n ? p[r] : 0;
                p[r] = 0;
                i = r;
            }
            if (have_header && nf >= ncols) {
                tl_vec_free(&cells);
                free(header);
                tl_table_free(t);
                return tl_errf(err, TL_EFORMAT, "%s: line %zu: expected %zu fields, saw more", name,
                               rec_line, ncols);
            }
            tl_vec_push(&cells, field);
            nf++;
            if (delim == ',') {
                i++;
                continue; /* a trailing ',' at EOF still opens one empty field */
            }
            if (delim == '\r') i += (i + 1 < n && p[i + 1] == '\n') ? 2 : 1;
            else if (delim == '\n') i++;
            line++;
            break;
        }
        if (!have_header) {
            have_header = 1;
            ncols = nf;
            header = tl_xmalloc(ncols * sizeof *header);
            memcpy(header, cells.v, ncols * sizeof *header);
            cells.n = 0;
        } else {
            for (; nf < ncols; nf++) tl_vec_push(&cells, (const char *)NULL);
            nrows++;
        }
    }
    if (have_header)
        tl_report_table_fill_text(t, header, ncols, cells.v, nrows, flags | TL_READ_REF_CELLS);
    tl_vec_free(&cells);
    free(header);
    *out = t;
    return TL_OK;
}

static char *file_stem(const char *path)
{
    const char *b = strrchr(path, '/');
    b = b ? b + 1 : path;
    const char *dot = strrchr(b, '.');
    return tl_xstrndup(b, dot && dot != b ? (size_t)(dot - b) : strlen(b));
}

int tl_report_csv_read(const char *path, unsigned flags, tl_table **out, tl_err *err)
{
    FILE *fp = fopen(path, "rb");
    if (!fp) return tl_errf(err, TL_EIO, "%s: cannot open: %s", path, strerror(errno));
    tl_buf b = {0};
    char chunk[65536];
    size_t k;
    while ((k = fread(chunk, 1, sizeof chunk, fp)) > 0) tl_buf_append(&b, chunk, k);
    int bad = ferror(fp);
    fclose(fp);
    if (bad) {
        tl_buf_free(&b);
        return tl_errf(err, TL_EIO, "%s: read error", path);
    }
    char *stem = file_stem(path);
    int rc = tl_report_csv_read_mem(b.p ? b.p : "", b.n, stem, flags, out, err);
    if (rc) {
        /* the tokenizer names the sheet; give the full path instead */
        size_t sl = strlen(stem);
        if (err && strncmp(err->msg, stem, sl) == 0 && err->msg[sl] == ':') {
            char msg[sizeof err->msg];
            snprintf(msg, sizeof msg, "%s%s", path, err->msg + sl);
            memcpy(err->msg, msg, sizeof msg);
        }
    }
    free(stem);
    tl_buf_free(&b);
    return rc;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

int tl_report_csv_read_dir(const char *dir, unsigned flags, tl_report_tables *out, tl_err *err)
{
    DIR *d = opendir(dir);
    if (!d) return tl_errf(err, TL_EIO, "%s: cannot open directory: %s", dir, strerror(errno));
    TL_VEC(char *) names = {0};
    struct dirent *e;
    while ((e = readdir(d))) {
        size_t l = strlen(e->d_name);
        /* kept as stems: the reference sorts stems, and "a-b" < "a" as file
         * names ('-' < '.') but not as stems */
        if (l > 4 && strcmp(e->d_name + l - 4, ".csv") == 0) tl_vec_push(&names, tl_xstrndup(e->d_name, l - 4));
    }
    closedir(d);
    qsort(names.v, names.n, sizeof *names.v, cmp_str);
    int rc = TL_OK;
    tl_buf path = {0};
    for (size_t i = 0; i < names.n; i++) {
        if (rc == TL_OK) {
            path.n = 0;
            tl_buf_printf(&path, "%s/%s.csv", dir, names.v[i]);
            struct stat st;
            if (stat(path.p, &st) == 0 && S_ISREG(st.st_mode)) {
                tl_table *t;
                rc = tl_report_csv_read(path.p, flags, &t, err);
                if (rc == TL_OK) tl_vec_push(out, t);
            }
        }
        free(names.v[i]);
    }
    tl_vec_free(&names);
    tl_buf_free(&path);
    return rc;
}
