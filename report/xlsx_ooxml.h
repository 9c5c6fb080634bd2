/* xlsx_ooxml.h — workbooks of plain tables written as SpreadsheetML
 * straight into a zip (report/xlsx_ooxml.c). Internal to report/: xlsx.c
 * uses it for every workbook without charts, libxlsxwriter for the others. */
#ifndef TL_REPORT_XLSX_OOXML_H
#define TL_REPORT_XLSX_OOXML_H

#include "query/core/table.h"
#include "base/base.h"

typedef struct tl_ooxml tl_ooxml;

int tl_ooxml_open(const char *path, tl_ooxml **out, tl_err *err);
/* Writes t as the next sheet (its XML is deflated into the file now, so t
 * may be freed on return): a bold header row, frozen; widths[c] in Excel
 * character units; strings through xml_text (which returns text XML may
 * carry, cut to Excel's cell limit). */
int tl_ooxml_add_sheet(tl_ooxml *o, const char *sheet_name, const tl_table *t, const double *widths,
                       const char *(*xml_text)(const char *s, tl_buf *b, int *cut), int *cut, tl_err *err);
/* Adds an empty sheet (a workbook needs one visible sheet). */
int tl_ooxml_add_empty(tl_ooxml *o, const char *sheet_name, tl_err *err);
/* Writes the workbook parts and the zip directory; frees o either way. */
int tl_ooxml_close(tl_ooxml *o, tl_err *err);
void tl_ooxml_discard(tl_ooxml *o);

/* Shortest-ish text of a finite double that parses back to exactly v;
 * returns its length (at most 24 bytes are written). */
size_t tl_ooxml_fmt_double(char *o, double v);

#endif
