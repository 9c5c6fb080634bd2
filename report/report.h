/* report.h — the report module: renders tl_tables (query/core/table.h) as CSV
 * files, xlsx workbooks (our own SpreadsheetML writer, xlsx_ooxml.c, with
 * native charts as DrawingML, xlsx_chart.c) and aligned
 * terminal tables, and reads report workbooks / CSV folders (ours or the
 * reference tool's) back into tl_tables for report comparison and tests.
 * It computes no metrics: every number arrives in a table.
 *
 * Text rules follow spec pytorch-report.md §11.1 (what pandas' to_csv
 * prints); reading infers column types the way pandas' read_csv does, so a
 * report read back compares like the reference tool's own reader. All
 * functions return 0 or a negative TL_E* code with a message in err. */
#ifndef TL_REPORT_H
#define TL_REPORT_H

#include <stdio.h>
#include "query/core/table.h"

/* A list of tables, e.g. the sheets of a workbook in sheet order. Works with
 * the tl_vec_* macros of base/base.h. */
typedef struct tl_report_tables {
    tl_table **v;
    size_t n, cap;
} tl_report_tables;
/* Frees every table and the list itself (the struct is left empty). */
void tl_report_tables_free(tl_report_tables *l);
/* Table with this exact name, or NULL. */
tl_table *tl_report_tables_find(const tl_report_tables *l, const char *name);

/* ---- CSV write (report/csv.c) ------------------------------------------
 * UTF-8, "\n" line ends, header row, minimal quoting (a field is quoted iff
 * it holds , " \n or \r; quotes doubled), missing cells empty. A table with
 * no columns is a file holding just "\n"; columns but no rows: header only. */
int tl_report_csv_write_fp(const tl_table *t, FILE *fp, tl_err *err);
/* Writes PATH, "-" = stdout. The text goes to PATH.tmp<pid> first and is
 * renamed over PATH when complete, so a failed write never leaves half a
 * file under the final name (devices and pipes are written directly). */
int tl_report_csv_write(const tl_table *t, const char *path, tl_err *err);
/* Creates DIR with parents and writes DIR/<table name>.csv for each table;
 * '/' in a name becomes '_'. */
int tl_report_csv_write_dir(tl_table *const *tables, size_t n, const char *dir, tl_err *err);
/* Text cells starting with = + - @ are written as they are, as the
 * reference's pandas does; with safe on (--csv-safe), text cells and
 * header names that start with = + - @, tab or CR and are not a plain
 * number get a leading ' (OWASP's advice against formula injection);
 * number columns never change. Process-wide, off by default. */
void tl_report_csv_set_safe(int on);
/* Appends one field with the quoting rule above. */
void tl_report_csv_field(tl_buf *b, const char *s, size_t n);

/* ---- reading (report/csv_read.c, xlsx_read.c, report_read.c) ---------
 * Column types are inferred per column like pandas: every non-empty cell an
 * integer -> TL_I64; integers/floats with empty cells (or all empty) ->
 * TL_F64 with NaN; True/False (any of True TRUE true / False FALSE false)
 * -> TL_BOOL (empty -> missing); anything else TL_STR with the text as
 * written. pandas' default NA strings (NaN, nan, None, NULL, NA, N/A, #N/A,
 * <NA>, ... ) count as empty. Duplicate header names get ".1", ".2"
 * suffixes and empty ones "Unnamed: <i>", as pandas names them. */
enum {
    TL_READ_RAW = 1,       /* no inference: every column TL_STR, only "" missing,
                              header names as written (no ".1" suffixes) */
    TL_READ_REF_CELLS = 2, /* tl_report_table_fill_text: cells already live
                              in the table's arena; store pointers, no copy */
    TL_READ_ALL_SHEETS = 4 /* xlsx: also read hidden sheets (default: skip
                              them; our chart data lives in one) */
};

/* Fills an empty table (no columns) from a grid of text cells: header[c]
 * (NULL or "" = unnamed) and cells[r * ncols + c] (NULL = empty). */
void tl_report_table_fill_text(tl_table *t, const char *const *header, size_t ncols,
                               const char *const *cells, size_t nrows, unsigned flags);

/* RFC 4180 CSV (quoted fields may hold commas, quotes, newlines; CRLF or LF;
 * a leading UTF-8 BOM is skipped; blank lines are skipped). A zero-byte or
 * "\n"-only file gives a table with no columns. Table name = file stem. */
int tl_report_csv_read(const char *path, unsigned flags, tl_table **out, tl_err *err);
int tl_report_csv_read_mem(const char *data, size_t n, const char *name, unsigned flags,
                           tl_table **out, tl_err *err);
/* Appends every DIR/<stem>.csv to out in ascending file-name order (sheet = stem). */
int tl_report_csv_read_dir(const char *dir, unsigned flags, tl_report_tables *out, tl_err *err);

/* Appends every worksheet of an xlsx workbook to out in workbook order
 * (names from xl/workbook.xml via its relationships): shared strings, inline
 * strings, numbers, booleans, cached formula values. The first row is the
 * header. Numbers are typed like pandas' read_excel (integral values count
 * as integers) and then inferred as above. Trailing all-empty rows are
 * dropped. */
int tl_report_xlsx_read(const char *path, unsigned flags, tl_report_tables *out, tl_err *err);

/* A report in any form: a directory of CSVs, an .xlsx workbook or one .csv
 * file. Appends its sheets to out. */
int tl_report_read(const char *path, unsigned flags, tl_report_tables *out, tl_err *err);

/* ---- xlsx write (report/xlsx.c) ------------------------------------------ */
typedef struct tl_xlsx tl_xlsx;

typedef struct tl_xlsx_opts {
    int charts;         /* 1: charts will be added (every visible sheet then
                           carries a drawing for them). 0 (default): tables
                           only, and adding a chart fails. */
    size_t max_rows;    /* data rows a sheet may have; larger tables go to a
                           CSV beside the workbook. 0 = Excel's 1,048,575. */
    int quiet;          /* no notes on stderr about renamed sheets (the CSV
                           fallback is always reported) */
    int threads;        /* tl_report_xlsx_add_tables: threads making sheets
                           (and segments of large ones); 0 = the online CPUs */
} tl_xlsx_opts;

#define TL_XLSX_MAX_ROWS 1048575u /* 1,048,576 rows minus the header */
#define TL_XLSX_MAX_COLS 16384u
#define TL_XLSX_COL_WIDTH_MAX 60.0

/* Starts a workbook at path (written by tl_report_xlsx_close). */
int tl_report_xlsx_open(const char *path, const tl_xlsx_opts *opts, tl_xlsx **out, tl_err *err);

/* Adds a table as a worksheet: header row bold and frozen, numbers as
 * numbers, strings as strings (cut to Excel's 32,767 characters with a
 * note), missing cells empty, booleans as Excel booleans, inf as the text
 * "inf" (pandas' inf_rep), column widths from content (at most
 * TL_XLSX_COL_WIDTH_MAX), tl_column.hidden columns hidden.
 * The sheet name is the table name made valid for Excel: []:*?/\ become
 * '_', at most 31 characters, never empty, and unique (case-insensitive as
 * Excel compares): a name that collides with an earlier sheet gets a "_2",
 * "_3", ... suffix inside the 31 characters instead of overwriting it.
 * *sheet_name (if not NULL) receives the final name, valid until close, or
 * NULL when the table had more rows (or columns) than a sheet holds: it is
 * then written to "<xlsx path without .xlsx>_<table name>.csv" and a message
 * says so on stderr. */
int tl_report_xlsx_add_table(tl_xlsx *x, const tl_table *t, const char **sheet_name, tl_err *err);

/* The same workbook as tl_report_xlsx_add_table on each of tables[0..n) in
 * order, but the sheets' XML is generated and deflated on several threads
 * (tl_xlsx_opts.threads), each sheet on one or, past 262,144 cells, in
 * segments of rows on several, while the threads that finish them put
 * them into the file in order. The tables must stay unchanged
 * until it returns. */
int tl_report_xlsx_add_tables(tl_xlsx *x, tl_table *const *tables, size_t n, tl_err *err);

/* Final sheet name of an added table (by table name or final name), or NULL
 * (not added, or sent to CSV). */
const char *tl_report_xlsx_sheet_name(const tl_xlsx *x, const char *name);

/* Excel-valid form of one name without the uniqueness step (for callers
 * that want to print names up front). out must hold 128 bytes. */
void tl_report_sheet_name_clean(const char *name, char out[128]);

/* Native Excel charts over a range of an already-added sheet. */
typedef enum {
    TL_CHART_BAR = 0,    /* horizontal bars */
    TL_CHART_COLUMN = 1, /* vertical bars */
    TL_CHART_PIE = 2,
    TL_CHART_DOUGHNUT = 3,
} tl_chart_kind;

typedef struct tl_chart_spec {
    tl_chart_kind kind;
    const char *sheet;        /* data: a table name given to add_table (or its sheet name) */
    size_t label_col, value_col; /* 0-based column indices in that table */
    size_t first_row, nrows;  /* data rows, 0 = first row below the header;
                                 nrows 0 = through the last row */
    size_t also_row;          /* 0: none; else 1 + one more data row after the
                                 range (e.g. idle after the busy parts) */
    const size_t *more_values; /* bar and column charts: further value columns,
                                  one series each beside value_col (e.g.
                                  baseline and variant); NULL: none */
    size_t nmore;
    const char *title, *x_title, *y_title; /* NULL: none */
    const char *dest_sheet;   /* sheet that shows the chart; NULL = the data sheet */
    int anchor_row, anchor_col; /* top-left cell (0-based); anchor_col < 0:
                                   two columns right of the data sheet's table */
    double x_scale, y_scale;  /* chart size factors; 0 = 1 */
} tl_chart_spec;
int tl_report_xlsx_add_chart(tl_xlsx *x, const tl_chart_spec *c, tl_err *err);

/* An explicit series of points (e.g. a roofline's memory or compute roof). */
typedef struct tl_xy_series {
    const char *name;
    const double *x, *y;
    size_t n;
} tl_xy_series;

/* Scatter chart, log-log unless linear_x / linear_y: the points of columns
 * x_col / y_col of a sheet (e.g. FLOPS/Byte vs TFLOPS/s), plus explicit
 * series drawn as lines without markers. Explicit points are stored in a
 * hidden worksheet "_chart_data" (Excel charts can only plot cell ranges). */
typedef struct tl_scatter_spec {
    const char *sheet;
    size_t x_col, y_col;
    size_t first_row, nrows;  /* as in tl_chart_spec */
    const char *series_name;  /* legend text of the sheet's points; NULL = y column name */
    const tl_xy_series *lines;
    size_t nlines;
    int linear_x, linear_y;
    const char *title, *x_title, *y_title;
    const char *dest_sheet;
    int anchor_row, anchor_col;
    double x_scale, y_scale;
} tl_scatter_spec;
int tl_report_xlsx_add_scatter(tl_xlsx *x, const tl_scatter_spec *s, tl_err *err);

/* The charts of a report whose command draws none of its own, chosen by
 * sheet and column names (report/xlsx_overview.c): the GPU time pie with
 * idle and timeline bars, kernel time by category, top kernels and ops,
 * per-rank compute and collective wait, latency per collective, and a
 * compare workbook's reports side by side. Sheets it
 * does not know get none. x must be open with charts and hold the tables. */
int tl_report_xlsx_add_overview(tl_xlsx *x, tl_table *const *tables, size_t n, tl_err *err);

/* Writes the file and frees x (also on error). */
int tl_report_xlsx_close(tl_xlsx *x, tl_err *err);
/* Frees x without writing a file. */
void tl_report_xlsx_discard(tl_xlsx *x);

/* Convenience: one workbook from a list of tables (no charts). */
int tl_report_xlsx_write(const char *path, tl_table *const *tables, size_t n,
                         const tl_xlsx_opts *opts, tl_err *err);

/* ---- HTML (report/html.c, charts in html_svg.c) -------------------------- */
typedef struct tl_html_opts {
    const char *title;      /* page title (default "tracelens report") */
    const char *subtitle;   /* e.g. the trace's path and id; may be NULL */
    const char *arch_name;  /* the roofline's roof, when known (else 0/NULL) */
    double mem_bw_tbs;
    double peak_tflops;
} tl_html_opts;
/* One self-contained HTML page (inline CSS and SVG, no script, no network)
 * of the sheets: the GPU time split with idle, op categories, top ops and
 * kernels, a labelled log-log roofline, the short-kernel histogram and
 * per-rank bars for the sheets it recognises by name, then every sheet as
 * a table. Written whole or not at all. */
int tl_report_html_write(const char *path, tl_table *const *tables, size_t n, const tl_html_opts *o, tl_err *err);

/* ---- terminal (report/term.c) -------------------------------------------- */
typedef struct tl_term_opts {
    size_t max_rows;  /* rows shown before "… N more rows"; 0 = 50, SIZE_MAX = all */
    size_t max_cell;  /* display columns per cell, longer text ends in "…"; 0 = 40 */
    int precision;    /* digits after the point for floats; 0 = default 3, <0 = exact repr */
    int title;        /* print the table name (and its size) above it */
} tl_term_opts;

/* Prints the table aligned: widths from content (UTF-8 aware: "µ" is one
 * column, CJK two), numbers right-aligned with fixed precision (scientific
 * notation for very large or small magnitudes), text left-aligned, newlines
 * and tabs shown as spaces. opts may be NULL. */
int tl_report_term_print(FILE *fp, const tl_table *t, const tl_term_opts *opts);
/* Display columns of UTF-8 text (for callers that align their own output). */
size_t tl_report_text_width(const char *s, size_t n);

#endif
