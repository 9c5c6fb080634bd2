/* xlsx_ooxml.h — workbooks written as SpreadsheetML straight into a zip
 * (report/xlsx_ooxml.c): tables, a hidden sheet of chart points and the
 * charts' drawings. Internal to report/: xlsx.c writes every workbook
 * through it. */
#ifndef TL_REPORT_XLSX_OOXML_H
#define TL_REPORT_XLSX_OOXML_H

#include <stdint.h>
#include "report/report.h"
#include "base/base.h"

typedef struct tl_ooxml tl_ooxml;
/* Cell text XML can carry (see tl_ooxml_add_sheet). */
typedef const char *(*tl_ooxml_text_fn)(const char *s, tl_buf *b, int *cut);

/* drawings: charts will be added; every visible sheet then refers to a
 * drawing (empty where no chart lands), since a sheet's XML is finished
 * before the charts are known. */
int tl_ooxml_open(const char *path, int drawings, tl_ooxml **out, tl_err *err);
/* Writes t as the next sheet (its XML is deflated into the file now, so t
 * may be freed on return): a bold header row, frozen; widths[c] in Excel
 * character units; strings through xml_text (which returns text XML may
 * carry, cut to Excel's cell limit). */
int tl_ooxml_add_sheet(tl_ooxml *o, const char *sheet_name, const tl_table *t, const double *widths,
                       tl_ooxml_text_fn xml_text, int *cut, tl_err *err);

/* One sheet of tl_ooxml_add_sheets: its name and table, and on return
 * whether a cell was cut. */
typedef struct tl_ooxml_sheet_in {
    const char *name;
    const tl_table *t;
    int cut;
} tl_ooxml_sheet_in;
/* Writes n tables as the next n sheets, the same bytes as n calls of
 * tl_ooxml_add_sheet: each sheet's widths (widths(t, w), w with a slot per
 * column) and XML are made and deflated on up to `threads` threads (the
 * caller's among them), a large sheet in segments of rows on several,
 * largest pieces first; the threads that finish them put the sheets into
 * the zip in order. The tables must not
 * change meanwhile; widths and xml_text run on several threads at once. */
int tl_ooxml_add_sheets(tl_ooxml *o, tl_ooxml_sheet_in *in, size_t n, void (*widths)(const tl_table *t, double *w),
                        tl_ooxml_text_fn xml_text, int threads, tl_err *err);
/* Adds an empty sheet (a workbook needs one visible sheet). */
int tl_ooxml_add_empty(tl_ooxml *o, const char *sheet_name, tl_err *err);
/* Adds a hidden sheet of chart points, the series one below the other: a
 * row with the series' name and "y", its points (x in column A, y in B;
 * non-finite values left empty), one blank row. */
int tl_ooxml_add_points_sheet(tl_ooxml *o, const char *sheet_name, const tl_xy_series *s, size_t n, tl_err *err);
/* Sheets added so far: the number (1-based) of the last one. */
size_t tl_ooxml_sheet_count(const tl_ooxml *o);
/* Writes xml as the next chart part (xl/charts/chartN.xml) and places it
 * on sheet (1-based number), its top-left corner at row, col (0-based),
 * width_px x height_px in size (the columns' widths decide which cell the
 * bottom-right corner falls in). TL_EUSAGE when the workbook was opened
 * without drawings. */
int tl_ooxml_add_chart(tl_ooxml *o, size_t sheet, size_t row, size_t col, uint32_t width_px, uint32_t height_px,
                       const tl_buf *xml, tl_err *err);
/* Writes the workbook parts and the zip directory; frees o either way. */
int tl_ooxml_close(tl_ooxml *o, tl_err *err);
void tl_ooxml_discard(tl_ooxml *o);

/* Shortest-ish text of a finite double that parses back to exactly v;
 * returns its length (at most 24 bytes are written). */
size_t tl_ooxml_fmt_double(char *o, double v);

#endif
