/* xlsx_read.c — worksheets of an xlsx workbook into tl_tables, for report
 * comparison (the reference tool's compare command accepts workbooks) and
 * for testing our own writer. libzip opens the package and expat parses the
 * parts as a stream, so large sheets are never held as one XML string. The
 * sheet list comes from xl/workbook.xml resolved through its relationships
 * (never from guessed part names); cell text then goes through the same
 * pandas-like type inference as the CSV reader. */
#include "report/report.h"

#include <errno.h>
#include <expat.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <zip.h>
#include "base/lazylib.h"

/* The libzip and expat functions this file calls, bound on first use
 * (base/lazylib.h): only reading a workbook loads the libraries. */
#define ZIP_FUNCS(X) \
    X(zip_discard) \
    X(zip_error_fini) \
    X(zip_error_init_with_code) \
    X(zip_error_strerror) \
    X(zip_fclose) \
    X(zip_file_strerror) \
    X(zip_fopen_index) \
    X(zip_fread) \
    X(zip_name_locate) \
    X(zip_open) \
    X(zip_strerror)
#define EXPAT_FUNCS(X) \
    X(XML_ErrorString) \
    X(XML_GetBuffer) \
    X(XML_GetCurrentLineNumber) \
    X(XML_GetErrorCode) \
    X(XML_ParseBuffer) \
    X(XML_ParserCreateNS) \
    X(XML_ParserFree) \
    X(XML_SetCharacterDataHandler) \
    X(XML_SetElementHandler) \
    X(XML_SetUserData) \
    X(XML_StopParser)
TL_LAZY_API(ZP, ZIP_FUNCS, TL_SONAME_ZIP, "reading xlsx workbooks");
TL_LAZY_API(XP, EXPAT_FUNCS, TL_SONAME_EXPAT, "reading xlsx workbooks");

#define NS_SEP '|'

/* Local part of an expat namespace-qualified name ("uri|local"). */
static const char *local(const XML_Char *n)
{
    const char *p = strrchr(n, NS_SEP);
    return p ? p + 1 : n;
}

static const char *attr(const XML_Char **a, const char *name, int want_ns)
{
    for (; a && a[0]; a += 2) {
        int has_ns = strchr(a[0], NS_SEP) != NULL;
        if (has_ns == want_ns && strcmp(local(a[0]), name) == 0) return a[1];
    }
    return NULL;
}

/* ---- streaming one zip entry through expat */
typedef struct part_ctx {
    XML_Parser p;
    int failed; /* handler error: message already in err */
    tl_err *err;
} part_ctx;

static int parse_part(zip_t *z, const char *xlsx, const char *name, part_ctx *pc, void *ud,
                      XML_StartElementHandler st, XML_EndElementHandler en,
                      XML_CharacterDataHandler cd, int optional)
{
    zip_int64_t idx = ZP.zip_name_locate(z, name, 0);
    if (idx < 0) idx = ZP.zip_name_locate(z, name, ZIP_FL_NOCASE);
    if (idx < 0) {
        if (optional) return TL_ENOTFOUND;
        return tl_errf(pc->err, TL_EFORMAT, "%s: not a valid xlsx workbook: part %s is missing", xlsx, name);
    }
    zip_file_t *zf = ZP.zip_fopen_index(z, (zip_uint64_t)idx, 0);
    if (!zf) return tl_errf(pc->err, TL_EFORMAT, "%s: %s: %s", xlsx, name, ZP.zip_strerror(z));
    XML_Parser p = XP.XML_ParserCreateNS(NULL, NS_SEP);
    if (!p) {
        ZP.zip_fclose(zf);
        return tl_errf(pc->err, TL_ENOMEM, "%s: cannot create XML parser", xlsx);
    }
    pc->p = p;
    pc->failed = 0;
    XP.XML_SetUserData(p, ud);
    XP.XML_SetElementHandler(p, st, en);
    XP.XML_SetCharacterDataHandler(p, cd);
    int rc = TL_OK;
    for (;;) {
        void *buf = XP.XML_GetBuffer(p, 1 << 16);
        if (!buf) {
            rc = tl_errf(pc->err, TL_ENOMEM, "%s: %s: out of memory", xlsx, name);
            break;
        }
        zip_int64_t k = ZP.zip_fread(zf, buf, 1 << 16);
        if (k < 0) {
            rc = tl_errf(pc->err, TL_EFORMAT, "%s: %s: %s", xlsx, name, ZP.zip_file_strerror(zf));
            break;
        }
        if (XP.XML_ParseBuffer(p, (int)k, k == 0) == XML_STATUS_ERROR) {
            if (pc->failed) rc = pc->err ? pc->err->code : TL_EFORMAT;
            else
                rc = tl_errf(pc->err, TL_EFORMAT, "%s: %s: line %lu: %s", xlsx, name,
                             (unsigned long)XP.XML_GetCurrentLineNumber(p), XP.XML_ErrorString(XP.XML_GetErrorCode(p)));
            break;
        }
        if (k == 0) break;
    }
    XP.XML_ParserFree(p);
    ZP.zip_fclose(zf);
    return rc;
}

static void fail(part_ctx *pc, int code, const char *msg)
{
    if (pc->failed) return;
    pc->failed = 1;
    tl_errf(pc->err, code, "%s", msg);
    XP.XML_StopParser(pc->p, XML_FALSE);
}

/* ---- relationships (_rels/.rels, xl/_rels/workbook.xml.rels) */
typedef struct rel {
    char *id, *type, *target;
} rel;
typedef struct rels_ctx {
    part_ctx pc;
    TL_VEC(rel) v;
} rels_ctx;

static void rels_start(void *ud, const XML_Char *name, const XML_Char **a)
{
    rels_ctx *c = ud;
    if (strcmp(local(name), "Relationship") != 0) return;
    const char *id = attr(a, "Id", 0), *ty = attr(a, "Type", 0), *tg = attr(a, "Target", 0);
    const char *mode = attr(a, "TargetMode", 0);
    if (!id || !ty || !tg || (mode && strcmp(mode, "External") == 0)) return;
    rel r = {tl_xstrdup(id), tl_xstrdup(ty), tl_xstrdup(tg)};
    tl_vec_push(&c->v, r);
}

static void rels_free(rels_ctx *c)
{
    for (size_t i = 0; i < c->v.n; i++) {
        free(c->v.v[i].id);
        free(c->v.v[i].type);
        free(c->v.v[i].target);
    }
    tl_vec_free(&c->v);
}

static int ends_with(const char *s, const char *suf)
{
    size_t a = strlen(s), b = strlen(suf);
    return a >= b && strcmp(s + a - b, suf) == 0;
}

/* Resolves a relationship target against the directory of the source part
 * ("xl/"): absolute targets start at the package root; ".." climbs. */
static char *resolve(const char *base_dir, const char *target)
{
    tl_buf b = {0};
    if (target[0] == '/') target++;
    else tl_buf_puts(&b, base_dir);
    tl_buf_puts(&b, target);
    /* collapse "dir/../" segments */
    char *s = b.p ? b.p : tl_xstrdup("");
    for (char *q; (q = strstr(s, "/../"));) {
        char *prev = q;
        while (prev > s && prev[-1] != '/') prev--;
        memmove(prev, q + 4, strlen(q + 4) + 1);
    }
    while (strncmp(s, "../", 3) == 0) memmove(s, s + 3, strlen(s + 3) + 1);
    return s;
}

/* ---- workbook.xml: sheet names, order, visibility */
typedef struct wsheet {
    char *name, *rid;
    int hidden;
} wsheet;
typedef struct wb_ctx {
    part_ctx pc;
    TL_VEC(wsheet) v;
} wb_ctx;

static void wb_start(void *ud, const XML_Char *name, const XML_Char **a)
{
    wb_ctx *c = ud;
    if (strcmp(local(name), "sheet") != 0) return;
    const char *nm = attr(a, "name", 0), *rid = attr(a, "id", 1), *state = attr(a, "state", 0);
    if (!nm || !rid) {
        fail(&c->pc, TL_EFORMAT, "workbook.xml: <sheet> without name or r:id");
        return;
    }
    wsheet w = {tl_xstrdup(nm), tl_xstrdup(rid), state && strcmp(state, "visible") != 0};
    tl_vec_push(&c->v, w);
}

/* ---- sharedStrings.xml: <si> = plain <t> or rich-text runs <r><t>;
 * phonetic runs (<rPh>) are not part of the displayed text. */
typedef struct sst_ctx {
    part_ctx pc;
    tl_buf text;             /* all strings, NUL-separated */
    TL_VEC(size_t) off;      /* start of string i in text */
    int in_si, in_t, in_rph;
} sst_ctx;

static void sst_start(void *ud, const XML_Char *name, const XML_Char **a)
{
    sst_ctx *c = ud;
    const char *l = local(name);
    if (strcmp(l, "si") == 0) {
        c->in_si = 1;
        tl_vec_push(&c->off, c->text.n);
    } else if (strcmp(l, "rPh") == 0) c->in_rph++;
    else if (strcmp(l, "t") == 0 && c->in_si && !c->in_rph) c->in_t = 1;
}

static void sst_end(void *ud, const XML_Char *name)
{
    sst_ctx *c = ud;
    const char *l = local(name);
    if (strcmp(l, "si") == 0) {
        c->in_si = 0;
        tl_buf_putc(&c->text, 0);
    } else if (strcmp(l, "rPh") == 0) c->in_rph--;
    else if (strcmp(l, "t") == 0) c->in_t = 0;
}

static void sst_text(void *ud, const XML_Char *s, int len)
{
    sst_ctx *c = ud;
    if (c->in_t) tl_buf_append(&c->text, s, (size_t)len);
}

/* ---- worksheet: <sheetData><row r><c r t><v>…</v> | <is><t>…</t></is></c> */
typedef struct xcell {
    uint32_t row, col;
    size_t off; /* NUL-terminated text in sheet_ctx.text */
} xcell;

typedef struct sheet_ctx {
    part_ctx pc;
    const sst_ctx *sst;
    tl_buf text;       /* cell texts, NUL-terminated */
    tl_buf cur;        /* text of the current <v> or inline <t> */
    TL_VEC(xcell) cells;
    uint32_t row, col;  /* current position (0-based) */
    int64_t last_row, last_col;
    char ctype[16];
    int in_c, in_v, in_is, in_t, in_rph, capture;
    uint32_t max_row, max_col;
    int any;
} sheet_ctx;

/* "AB12" -> col 27, row 11 (0-based); returns 0 on malformed refs. */
static int parse_ref(const char *r, uint32_t *row, uint32_t *col)
{
    uint32_t c = 0, n = 0;
    int letters = 0;
    for (; *r >= 'A' && *r <= 'Z'; r++, letters++) {
        c = c * 26 + (uint32_t)(*r - 'A' + 1);
        if (c > 16384) return 0;
    }
    if (!letters || *r < '0' || *r > '9') return 0;
    for (; *r >= '0' && *r <= '9'; r++) {
        n = n * 10 + (uint32_t)(*r - '0');
        if (n > 1048576) return 0;
    }
    if (*r || n == 0) return 0;
    *row = n - 1;
    *col = c - 1;
    return 1;
}

static void sheet_start(void *ud, const XML_Char *name, const XML_Char **a)
{
    sheet_ctx *c = ud;
    const char *l = local(name);
    if (!c->in_c) {
        if (strcmp(l, "row") == 0) {
            const char *r = attr(a, "r", 0);
            long v = r ? strtol(r, NULL, 10) : 0;
            c->row = v > 0 && v <= 1048576 ? (uint32_t)(v - 1) : (uint32_t)(c->last_row + 1);
            c->last_row = c->row;
            c->last_col = -1;
        } else if (strcmp(l, "c") == 0) {
            const char *r = attr(a, "r", 0), *t = attr(a, "t", 0);
            uint32_t rr, cc;
            if (r && parse_ref(r, &rr, &cc)) {
                c->row = rr;
                c->col = cc;
            } else {
                c->col = (uint32_t)(c->last_col + 1);
            }
            c->last_col = c->col;
            snprintf(c->ctype, sizeof c->ctype, "%s", t ? t : "n");
            c->in_c = 1;
            c->cur.n = 0;
            c->capture = 0;
        }
        return;
    }
    if (strcmp(l, "v") == 0) c->in_v = c->capture = 1;
    else if (strcmp(l, "is") == 0) c->in_is = 1;
    else if (strcmp(l, "rPh") == 0) c->in_rph++;
    else if (strcmp(l, "t") == 0 && c->in_is && !c->in_rph) c->in_t = c->capture = 1;
}

/* Text a pandas user would see for one cell (see tl_report_xlsx_read). */
static void cell_text(sheet_ctx *c, tl_buf *out)
{
    const char *v = c->cur.p ? c->cur.p : "";
    const char *t = c->ctype;
    if (!strcmp(t, "s")) {
        char *end;
        unsigned long i = strtoul(v, &end, 10);
        if (end == v || i >= c->sst->off.n) {
            fail(&c->pc, TL_EFORMAT, "shared string index out of range");
            return;
        }
        tl_buf_puts(out, c->sst->text.p + c->sst->off.v[i]);
    } else if (!strcmp(t, "b")) {
        if (*v) tl_buf_puts(out, strcmp(v, "0") ? "True" : "False");
    } else if (!strcmp(t, "n") && *v) {
        /* openpyxl + pandas: an integral number is an int, else a float */
        char *end;
        double d;
        if (!strpbrk(v, ".eE")) tl_buf_puts(out, v); /* integer literal already */
        else if ((d = strtod(v, &end)), *end) tl_buf_puts(out, v);
        else if (d == floor(d) && fabs(d) < 9.2e18) tl_buf_printf(out, "%lld", (long long)d);
        else tl_buf_puts(out, v); /* already a float literal; inference parses it */
    } else {
        tl_buf_puts(out, v); /* inlineStr, str (formula text), e (#N/A ...), d (ISO date) */
    }
}

static void sheet_end(void *ud, const XML_Char *name)
{
    sheet_ctx *c = ud;
    const char *l = local(name);
    if (!c->in_c) return;
    if (strcmp(l, "c") == 0) {
        c->in_c = c->in_v = c->in_is = c->in_t = c->in_rph = 0;
        tl_buf_putc(&c->cur, 0);
        c->cur.n--;
        size_t off = c->text.n;
        cell_text(c, &c->text);
        if (c->text.n == off) return; /* empty cell: nothing to record */
        tl_buf_putc(&c->text, 0);
        xcell x = {c->row, c->col, off};
        tl_vec_push(&c->cells, x);
        if (!c->any || c->row > c->max_row) c->max_row = c->row;
        if (!c->any || c->col > c->max_col) c->max_col = c->col;
        c->any = 1;
    } else if (strcmp(l, "v") == 0) c->in_v = c->capture = 0;
    else if (strcmp(l, "is") == 0) c->in_is = 0;
    else if (strcmp(l, "rPh") == 0) c->in_rph--;
    else if (strcmp(l, "t") == 0) c->in_t = c->capture = 0;
}

static void sheet_chars(void *ud, const XML_Char *s, int len)
{
    sheet_ctx *c = ud;
    if (c->capture) tl_buf_append(&c->cur, s, (size_t)len);
}

static int read_sheet(zip_t *z, const char *xlsx, const char *part, const char *name,
                      const sst_ctx *sst, unsigned flags, tl_table **out, tl_err *err)
{
    sheet_ctx c;
    memset(&c, 0, sizeof c);
    c.pc.err = err;
    c.sst = sst;
    c.last_row = -1;
    c.last_col = -1;
    int rc = parse_part(z, xlsx, part, &c.pc, &c, sheet_start, sheet_end, sheet_chars, 0);
    if (rc == TL_OK) {
        tl_table *t = tl_table_new(name);
        if (c.any) {
            size_t ncols = (size_t)c.max_col + 1, nrows = c.max_row; /* rows below the header */
            const char **header = tl_xcalloc(ncols, sizeof *header);
            const char **grid = tl_xcalloc(nrows * ncols + 1, sizeof *grid);
            for (size_t i = 0; i < c.cells.n; i++) {
                const xcell *x = &c.cells.v[i];
                const char *s = c.text.p + x->off;
                if (x->row == 0) header[x->col] = s;
                else grid[(size_t)(x->row - 1) * ncols + x->col] = s;
            }
            tl_report_table_fill_text(t, header, ncols, grid, nrows, flags & ~(unsigned)TL_READ_REF_CELLS);
            free(header);
            free(grid);
        }
        *out = t;
    } else {
        tl_err_prefix(err, "sheet '%s'", name);
    }
    tl_buf_free(&c.text);
    tl_buf_free(&c.cur);
    tl_vec_free(&c.cells);
    return rc;
}

int tl_report_xlsx_read(const char *path, unsigned flags, tl_report_tables *out, tl_err *err)
{
    int rc = tl_lazylib_bind(&ZP_lib, &ZP, err);
    if (!rc) rc = tl_lazylib_bind(&XP_lib, &XP, err);
    if (rc) return rc;
    int zerr = 0;
    zip_t *z = ZP.zip_open(path, ZIP_RDONLY, &zerr);
    if (!z) {
        zip_error_t ze;
        ZP.zip_error_init_with_code(&ze, zerr);
        rc = tl_errf(err, zerr == ZIP_ER_OPEN || zerr == ZIP_ER_NOENT ? TL_EIO : TL_EFORMAT,
                         "%s: cannot open as xlsx: %s", path, ZP.zip_error_strerror(&ze));
        ZP.zip_error_fini(&ze);
        return rc;
    }
    rels_ctx root = {0}, wbrels = {0};
    wb_ctx wb = {0};
    sst_ctx sst = {0};
    char *wb_part = NULL, *wb_dir = NULL, *wb_rels = NULL, *sst_part = NULL;
    root.pc.err = wbrels.pc.err = wb.pc.err = sst.pc.err = err;

    /* The package root names the workbook part; fall back to the usual one. */
    rc = parse_part(z, path, "_rels/.rels", &root.pc, &root, rels_start, NULL, NULL, 1);
    if (rc && rc != TL_ENOTFOUND) goto done;
    for (size_t i = 0; i < root.v.n && !wb_part; i++)
        if (ends_with(root.v.v[i].type, "/officeDocument")) wb_part = resolve("", root.v.v[i].target);
    if (!wb_part) wb_part = tl_xstrdup("xl/workbook.xml");
    {
        const char *slash = strrchr(wb_part, '/');
        size_t dl = slash ? (size_t)(slash - wb_part) + 1 : 0;
        wb_dir = tl_xstrndup(wb_part, dl);
        size_t n = strlen(wb_part) + 16;
        wb_rels = tl_xmalloc(n);
        snprintf(wb_rels, n, "%s_rels/%s.rels", wb_dir, wb_part + dl);
    }
    rc = parse_part(z, path, wb_part, &wb.pc, &wb, wb_start, NULL, NULL, 0);
    if (rc) goto done;
    rc = parse_part(z, path, wb_rels, &wbrels.pc, &wbrels, rels_start, NULL, NULL, 0);
    if (rc) goto done;
    for (size_t i = 0; i < wbrels.v.n && !sst_part; i++)
        if (ends_with(wbrels.v.v[i].type, "/sharedStrings")) sst_part = resolve(wb_dir, wbrels.v.v[i].target);
    if (sst_part) {
        rc = parse_part(z, path, sst_part, &sst.pc, &sst, sst_start, sst_end, sst_text, 1);
        if (rc && rc != TL_ENOTFOUND) goto done;
        rc = TL_OK;
    }
    for (size_t i = 0; i < wb.v.n; i++) {
        const wsheet *w = &wb.v.v[i];
        if (w->hidden && !(flags & TL_READ_ALL_SHEETS)) continue;
        const rel *r = NULL;
        for (size_t j = 0; j < wbrels.v.n && !r; j++)
            if (strcmp(wbrels.v.v[j].id, w->rid) == 0) r = &wbrels.v.v[j];
        if (!r) {
            rc = tl_errf(err, TL_EFORMAT, "%s: sheet '%s' has no relationship %s", path, w->name, w->rid);
            goto done;
        }
        if (!ends_with(r->type, "/worksheet")) continue; /* chartsheet, dialog sheet: no cells */
        char *part = resolve(wb_dir, r->target);
        tl_table *t = NULL;
        rc = read_sheet(z, path, part, w->name, &sst, flags, &t, err);
        free(part);
        if (rc) goto done;
        tl_vec_push(out, t);
    }
done:
    rels_free(&root);
    rels_free(&wbrels);
    for (size_t i = 0; i < wb.v.n; i++) {
        free(wb.v.v[i].name);
        free(wb.v.v[i].rid);
    }
    tl_vec_free(&wb.v);
    tl_buf_free(&sst.text);
    tl_vec_free(&sst.off);
    free(wb_part);
    free(wb_dir);
    free(wb_rels);
    free(sst_part);
    ZP.zip_discard(z);
    return rc;
}
