/* table.h — tl_table, the one result type every analysis returns: a named
 * list of typed columns of equal length. xlsx, csv and terminal output share
 * one renderer over it (report/), and tests compare tables. Cells may be
 * missing: a missing STR is NULL, a missing F64 is NaN, a missing I64/BOOL has
 * valid[row] == 0. Memory for names and string cells lives in the table's
 * arena; one tl_table_free releases everything. */
#ifndef TL_TABLE_H
#define TL_TABLE_H

#include <stddef.h>
#include <stdint.h>
#include "base/base.h"

typedef enum {
    TL_STR = 0,  /* UTF-8 text; also used for pre-formatted Python-literal cells */
    TL_I64 = 1,  /* integers; printed as "8.0" if the column has missing values
                    and as_float is set (pandas' int+NaN -> float rule) */
    TL_F64 = 2,  /* doubles, printed with Python repr (25.0, 1e-05) */
    TL_BOOL = 3, /* True / False */
} tl_type;

typedef struct tl_column {
    char *name;
    tl_type type;
    union {
        const char **s;
        int64_t *i;
        double *f;
        uint8_t *b;
    } v;
    uint8_t *valid;   /* NULL: every I64/BOOL cell present; else 0/1 per row */
    int as_float;     /* I64 only: print as float (e.g. "8.0") */
    int hidden;       /* xlsx: hide this column (report comparison) */
} tl_column;

typedef struct tl_table {
    char *name;       /* sheet name */
    size_t nrows, ncols;
    size_t cap_rows, cap_cols;
    tl_column *cols;
    tl_arena arena;
} tl_table;

tl_table *tl_table_new(const char *name);
void tl_table_free(tl_table *t);
/* Lists of tables (a workbook's sheets, {v, n}): frees every table and the
 * array; finds a table by exact name (NULL if none). Every sheet-list type
 * (tl_pyt_sheets, tl_coll_sheets, ...) is built on these two. */
void tl_tables_free(tl_table **v, size_t n);
tl_table *tl_tables_find(tl_table *const *v, size_t n, const char *name);

/* Adds a column (all existing rows missing); returns its index. */
size_t tl_table_add_col(tl_table *t, const char *name, tl_type type);
/* Index of a column by exact name, or -1. */
long tl_table_col(const tl_table *t, const char *name);

/* Appends one row with every cell missing; returns its index. */
size_t tl_table_add_row(tl_table *t);
/* Ensures nrows == n (new rows missing). */
void tl_table_set_nrows(tl_table *t, size_t n);
/* For a table whose new rows are filled by row ranges on threads: grows t
 * to n rows without touching the new cells. Before a new cell is read or
 * set, tl_table_clear_rows must have marked it missing, which threads
 * may do for their own ranges at once (marking a large table's rows
 * missing then is not one thread's work). */
void tl_table_set_nrows_uncleared(tl_table *t, size_t n);
/* Marks rows [from, to) of column col missing, as tl_table_set_nrows
 * does for new rows. After tl_table_set_nrows_uncleared, disjoint ranges
 * (or columns) may be cleared on different threads at once. */
void tl_table_clear_rows(tl_table *t, size_t col, size_t from, size_t to);

/* Cell setters. Strings are copied into the table's arena. */
void tl_table_set_str(tl_table *t, size_t col, size_t row, const char *s);
void tl_table_set_strn(tl_table *t, size_t col, size_t row, const char *s, size_t n);
/* Stores a pointer the caller guarantees outlives the table (e.g. arena'd). */
void tl_table_set_str_ref(tl_table *t, size_t col, size_t row, const char *s);
void tl_table_set_i64(tl_table *t, size_t col, size_t row, int64_t v);
void tl_table_set_f64(tl_table *t, size_t col, size_t row, double v);
void tl_table_set_bool(tl_table *t, size_t col, size_t row, int v);
void tl_table_set_missing(tl_table *t, size_t col, size_t row);

int tl_table_is_missing(const tl_table *t, size_t col, size_t row);
/* Cell (sc, sr) of src into cell (dc, dr) of dst, a column of the same
 * type (texts copied into dst's arena); a missing cell is left as dst has
 * it. */
void tl_table_copy_cell(tl_table *dst, size_t dc, size_t dr, const tl_table *src, size_t sc, size_t sr);
/* Numeric view of a cell (I64, F64, BOOL); NaN when missing or STR. */
double tl_table_num(const tl_table *t, size_t col, size_t row);
/* Text of a cell as the CSV would print it (§11.1); "" when missing. An
 * I64 column with as_float set prints as a float ("8.0") whether or not it
 * has missing cells. Returns a pointer into buf or into the table. */
const char *tl_table_cell_text(const tl_table *t, size_t col, size_t row, char *buf, size_t bufsz);

/* Reorders rows: new row i = old row perm[i]. n may differ from nrows (a
 * gather: the table then has n rows, so it can filter or repeat rows). */
void tl_table_permute(tl_table *t, const size_t *perm, size_t n);

/* 1 if any cell of the column is missing. */
int tl_table_col_has_missing(const tl_table *t, size_t col);
/* Sets as_float on every I64 column that has a missing cell: producers that
 * follow pandas' int+NaN rule call it once at the end. */
void tl_table_int_na_as_float(tl_table *t);
/* Turns an F64 column into I64 (values rounded to the nearest integer, NaN
 * missing): for producers that compute in doubles and learn only at the end
 * that the source numbers were integers (pandas' int64 columns). */
void tl_table_f64_to_i64(tl_table *t, size_t col);

#endif
