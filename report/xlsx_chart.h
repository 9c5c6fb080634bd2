/* xlsx_chart.h — the XML of one native Excel chart (DrawingML,
 * xl/charts/chartN.xml) over cell ranges (report/xlsx_chart.c). Internal
 * to report/: xlsx.c describes a chart with it and hands the XML to the
 * SpreadsheetML writer (xlsx_ooxml.c), which anchors it on a sheet. */
#ifndef TL_REPORT_XLSX_CHART_H
#define TL_REPORT_XLSX_CHART_H

#include <stdint.h>
#include "base/base.h"

typedef enum {
    TL_OXC_BAR,     /* horizontal bars */
    TL_OXC_COLUMN,  /* vertical bars */
    TL_OXC_PIE,
    TL_OXC_DOUGHNUT,
    TL_OXC_SCATTER,
} tl_oxc_type;

/* One series. Ranges are formulas such as 'GEMM'!$M$2:$M$4 (categories or
 * x values in cat, values or y values in val). */
typedef struct tl_oxc_series {
    const char *name;      /* legend text; NULL: the cell at name_ref */
    const char *name_ref;
    const char *cat, *val;
    int line;              /* scatter: a dashed line of colour rgb without
                              markers; else circles without a line */
    uint32_t rgb;
    size_t npoints;        /* pie and doughnut: the slices, each given its
                              own colour */
} tl_oxc_series;

typedef struct tl_oxc_chart {
    tl_oxc_type type;
    const char *title, *x_title, *y_title; /* NULL: none */
    int log_x, log_y;      /* scatter: log10 axes */
    const tl_oxc_series *ser;
    size_t nser;
} tl_oxc_chart;

/* Appends the chart part's XML to b. Bars and columns of one series have
 * no legend (the title says it), of several a legend at the bottom; pies a
 * legend at the right, scatters at the bottom. As in Excel, a bar chart's x axis is its horizontal value axis.
 * Every series, slice and marker has an explicit colour: the workbook has
 * no theme, and without one LibreOffice draws "automatic" fills as none. */
void tl_oxc_chart_xml(tl_buf *b, const tl_oxc_chart *c);

/* Appends the formula of a range of sheet (0-based rows and columns,
 * inclusive), e.g. 'gpu_timeline'!$A$2:$A$4, or one cell when r0 == r1
 * and c0 == c1. */
void tl_oxc_range(tl_buf *b, const char *sheet, size_t r0, size_t c0, size_t r1, size_t c1);

#endif
