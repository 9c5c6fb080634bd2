/* html_svg.h — inline SVG charts for the HTML report (report/html.c
 * only; other folders use report/report.h). Each function appends one
 * <svg> element to b. */
#ifndef TL_REPORT_HTML_SVG_H
#define TL_REPORT_HTML_SVG_H

#include "base/base.h"

/* Text with <, >, &, " escaped; cut after max_chars characters (0: all). */
void tl_html_esc(tl_buf *b, const char *s, size_t max_chars);
/* A number with at most 3 decimals (whole numbers without; %g when very
 * large or small); nothing for NaN. */
void tl_html_num(tl_buf *b, double v);

/* Horizontal bars, one per label, longest = largest value. */
void tl_html_svg_hbars(tl_buf *b, const char *title, const char *const *labels, const double *values,
                       size_t n, const char *unit);
/* One 100 % bar split into parts, with a legend of values and shares. */
void tl_html_svg_split(tl_buf *b, const char *title, const char *const *labels, const double *values,
                       size_t n, const char *unit);

typedef struct tl_html_roofline {
    const char *title;
    const double *x, *y;        /* FLOPS/Byte, TFLOPS/s per point */
    const char *const *labels;  /* per point */
    size_t n;
    size_t nlabelled;           /* the first points get a text label */
    double mem_bw_tbs;          /* the roof (0: not drawn) */
    double peak_tflops;
} tl_html_roofline;
/* Log-log scatter with decade grid, labelled points and the roof. */
void tl_html_svg_roofline(tl_buf *b, const tl_html_roofline *r);

/* Vertical bars over bins [lo[i], hi[i]). */
void tl_html_svg_histogram(tl_buf *b, const char *title, const double *lo, const double *hi,
                           const double *count, size_t n, const char *unit);

#endif
