/* xlsx_chart.c — chart parts (ECMA-376 Part 1, §21.2 DrawingML Charts) for
 * the workbook writer: bar, column, pie and doughnut charts of one series
 * and scatter charts (log-log rooflines with their roofs as lines).
 *
 * The parts hold the series' ranges and no cached values: Excel and
 * LibreOffice read the values from the cells when the workbook opens, and
 * the cells are written once, in the sheets. Element order follows the
 * schema (Excel repairs a part whose elements are out of order). */
#include "report/xlsx_chart.h"

#include <string.h>

#define PUT_LIT(b, s) tl_buf_append(b, s, sizeof s - 1)

#define NS_C "http://schemas.openxmlformats.org/drawingml/2006/chart"
#define NS_A "http://schemas.openxmlformats.org/drawingml/2006/main"
#define NS_R "http://schemas.openxmlformats.org/officeDocument/2006/relationships"

/* the two axes' ids (any pair of numbers unique within the chart) */
#define AX_X "50010001"
#define AX_Y "50010002"

/* XML character data / attribute value */
static void put_esc(tl_buf *b, const char *s)
{
    for (; *s; s++) {
        switch (*s) {
        case '&': PUT_LIT(b, "&amp;"); break;
        case '<': PUT_LIT(b, "&lt;"); break;
        case '>': PUT_LIT(b, "&gt;"); break;
        case '"': PUT_LIT(b, "&quot;"); break;
        default: tl_buf_putc(b, *s); break;
        }
    }
}

static void put_cell(tl_buf *b, size_t r, size_t c)
{
    char col[4], *p = col + sizeof col;
    *--p = 0;
    for (c++; c; c = (c - 1) / 26) *--p = (char)('A' + (c - 1) % 26);
    tl_buf_printf(b, "$%s$%zu", p, r + 1);
}

void tl_oxc_range(tl_buf *b, const char *sheet, size_t r0, size_t c0, size_t r1, size_t c1)
{
    /* always quoted: names such as "A1" or "my sheet" need it, and a
     * quoted name is valid for any sheet */
    tl_buf_putc(b, '\'');
    for (const char *s = sheet; *s; s++) {
        if (*s == '\'') tl_buf_putc(b, '\'');
        tl_buf_putc(b, *s);
    }
    PUT_LIT(b, "'!");
    put_cell(b, r0, c0);
    if (r0 != r1 || c0 != c1) {
        tl_buf_putc(b, ':');
        put_cell(b, r1, c1);
    }
}

/* A title (of the chart or an axis); rotated reads bottom to top. */
static void put_title(tl_buf *b, const char *text, int rotated)
{
    PUT_LIT(b, "<c:title><c:tx><c:rich>");
    if (rotated) PUT_LIT(b, "<a:bodyPr rot=\"-5400000\" vert=\"horz\"/>");
    else PUT_LIT(b, "<a:bodyPr/>");
    PUT_LIT(b, "<a:lstStyle/><a:p><a:pPr><a:defRPr/></a:pPr><a:r><a:rPr lang=\"en-US\"/><a:t>");
    put_esc(b, text);
    PUT_LIT(b, "</a:t></a:r></a:p></c:rich></c:tx><c:layout/><c:overlay val=\"0\"/></c:title>");
}

static void put_ref(tl_buf *b, const char *tag, const char *kind, const char *f)
{
    tl_buf_printf(b, "<c:%s><c:%s><c:f>", tag, kind);
    put_esc(b, f);
    tl_buf_printf(b, "</c:f></c:%s></c:%s>", kind, tag);
}

/* Fill colours of series and slices, in order (Tableau 10). */
static const uint32_t PALETTE[] = {0x4E79A7, 0xF28E2B, 0xE15759, 0x76B7B2, 0x59A14F,
                                   0xEDC948, 0xB07AA1, 0xFF9DA7, 0x9C755F, 0xBAB0AC};
#define NPALETTE (sizeof PALETTE / sizeof *PALETTE)

static void put_fill(tl_buf *b, uint32_t rgb)
{
    tl_buf_printf(b, "<c:spPr><a:solidFill><a:srgbClr val=\"%06X\"/></a:solidFill></c:spPr>", (unsigned)rgb);
}

static void put_series(tl_buf *b, const tl_oxc_chart *c, size_t i)
{
    const tl_oxc_series *s = &c->ser[i];
    tl_buf_printf(b, "<c:ser><c:idx val=\"%zu\"/><c:order val=\"%zu\"/>", i, i);
    if (s->name) {
        PUT_LIT(b, "<c:tx><c:v>");
        put_esc(b, s->name);
        PUT_LIT(b, "</c:v></c:tx>");
    } else if (s->name_ref) {
        put_ref(b, "tx", "strRef", s->name_ref);
    }
    if (c->type == TL_OXC_PIE || c->type == TL_OXC_DOUGHNUT) {
        for (size_t k = 0; k < s->npoints; k++) {
            tl_buf_printf(b, "<c:dPt><c:idx val=\"%zu\"/><c:bubble3D val=\"0\"/>", k);
            put_fill(b, PALETTE[k % NPALETTE]);
            PUT_LIT(b, "</c:dPt>");
        }
    } else if (c->type != TL_OXC_SCATTER) {
        put_fill(b, PALETTE[i % NPALETTE]);
    }
    if (c->type != TL_OXC_SCATTER) {
        put_ref(b, "cat", "strRef", s->cat);
        put_ref(b, "val", "numRef", s->val);
        PUT_LIT(b, "</c:ser>");
        return;
    }
    if (s->line)
        tl_buf_printf(b, "<c:spPr><a:ln w=\"25400\"><a:solidFill><a:srgbClr val=\"%06X\"/></a:solidFill>"
                         "<a:prstDash val=\"dash\"/></a:ln></c:spPr><c:marker><c:symbol val=\"none\"/></c:marker>",
                      (unsigned)s->rgb);
    else
        tl_buf_printf(b, "<c:spPr><a:ln w=\"28575\"><a:noFill/></a:ln></c:spPr>"
                         "<c:marker><c:symbol val=\"circle\"/><c:size val=\"5\"/><c:spPr><a:solidFill>"
                         "<a:srgbClr val=\"%06X\"/></a:solidFill></c:spPr></c:marker>",
                      (unsigned)PALETTE[i % NPALETTE]);
    put_ref(b, "xVal", "numRef", s->cat);
    put_ref(b, "yVal", "numRef", s->val);
    PUT_LIT(b, "<c:smooth val=\"0\"/></c:ser>");
}

/* One axis. cat: a category axis (bars, columns); pos: "b" or "l". */
static void put_axis(tl_buf *b, const tl_oxc_chart *c, int cat, const char *id, const char *cross, const char *pos,
                     int log, const char *title)
{
    tl_buf_printf(b, "<c:%s><c:axId val=\"%s\"/><c:scaling>", cat ? "catAx" : "valAx", id);
    if (log) PUT_LIT(b, "<c:logBase val=\"10\"/>");
    tl_buf_printf(b, "<c:orientation val=\"minMax\"/></c:scaling><c:delete val=\"0\"/><c:axPos val=\"%s\"/>", pos);
    /* gridlines across the values: vertical ones on a bar chart's
     * horizontal value axis, else horizontal ones on the vertical axis */
    if (cat ? 0 : c->type == TL_OXC_BAR ? pos[0] == 'b' : pos[0] == 'l') PUT_LIT(b, "<c:majorGridlines/>");
    if (title) put_title(b, title, pos[0] == 'l');
    tl_buf_printf(b, "<c:numFmt formatCode=\"General\" sourceLinked=\"1\"/><c:tickLblPos val=\"nextTo\"/>"
                     "<c:crossAx val=\"%s\"/><c:crosses val=\"autoZero\"/>", cross);
    if (cat)
        PUT_LIT(b, "<c:auto val=\"1\"/><c:lblAlgn val=\"ctr\"/><c:lblOffset val=\"100\"/></c:catAx>");
    else
        tl_buf_printf(b, "<c:crossBetween val=\"%s\"/></c:valAx>", c->type == TL_OXC_SCATTER ? "midCat" : "between");
}

/* the chart group (the series and how they are drawn) and its axes */
static void put_plot(tl_buf *b, const tl_oxc_chart *c)
{
    int pie = c->type == TL_OXC_PIE || c->type == TL_OXC_DOUGHNUT;
    if (pie) tl_buf_puts(b, c->type == TL_OXC_PIE ? "<c:pieChart>" : "<c:doughnutChart>");
    else if (c->type == TL_OXC_SCATTER) PUT_LIT(b, "<c:scatterChart><c:scatterStyle val=\"lineMarker\"/>");
    else tl_buf_printf(b, "<c:barChart><c:barDir val=\"%s\"/><c:grouping val=\"clustered\"/>",
                       c->type == TL_OXC_BAR ? "bar" : "col");
    tl_buf_printf(b, "<c:varyColors val=\"%d\"/>", pie);
    for (size_t i = 0; i < c->nser; i++) put_series(b, c, i);
    if (pie) {
        PUT_LIT(b, "<c:firstSliceAng val=\"0\"/>");
        tl_buf_puts(b, c->type == TL_OXC_PIE ? "</c:pieChart>" : "<c:holeSize val=\"50\"/></c:doughnutChart>");
        return;
    }
    if (c->type != TL_OXC_SCATTER) PUT_LIT(b, "<c:gapWidth val=\"150\"/>");
    PUT_LIT(b, "<c:axId val=\"" AX_X "\"/><c:axId val=\"" AX_Y "\"/>");
    tl_buf_puts(b, c->type == TL_OXC_SCATTER ? "</c:scatterChart>" : "</c:barChart>");
    if (c->type == TL_OXC_SCATTER) {
        put_axis(b, c, 0, AX_X, AX_Y, "b", c->log_x, c->x_title);
        put_axis(b, c, 0, AX_Y, AX_X, "l", c->log_y, c->y_title);
    } else if (c->type == TL_OXC_BAR) { /* categories up the left, values along the bottom */
        put_axis(b, c, 1, AX_X, AX_Y, "l", 0, c->y_title);
        put_axis(b, c, 0, AX_Y, AX_X, "b", 0, c->x_title);
    } else {
        put_axis(b, c, 1, AX_X, AX_Y, "b", 0, c->x_title);
        put_axis(b, c, 0, AX_Y, AX_X, "l", 0, c->y_title);
    }
}

void tl_oxc_chart_xml(tl_buf *b, const tl_oxc_chart *c)
{
    PUT_LIT(b, "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"yes\"?>\n"
               "<c:chartSpace xmlns:c=\"" NS_C "\" xmlns:a=\"" NS_A "\" xmlns:r=\"" NS_R "\">"
               "<c:lang val=\"en-US\"/><c:roundedCorners val=\"0\"/><c:chart>");
    if (c->title) put_title(b, c->title, 0);
    tl_buf_printf(b, "<c:autoTitleDeleted val=\"%d\"/><c:plotArea><c:layout/>", c->title ? 0 : 1);
    put_plot(b, c);
    PUT_LIT(b, "</c:plotArea>");
    if (c->type == TL_OXC_PIE || c->type == TL_OXC_DOUGHNUT)
        PUT_LIT(b, "<c:legend><c:legendPos val=\"r\"/><c:layout/><c:overlay val=\"0\"/></c:legend>");
    else if (c->type == TL_OXC_SCATTER || c->nser > 1)
        PUT_LIT(b, "<c:legend><c:legendPos val=\"b\"/><c:layout/><c:overlay val=\"0\"/></c:legend>");
    PUT_LIT(b, "<c:plotVisOnly val=\"1\"/><c:dispBlanksAs val=\"gap\"/></c:chart></c:chartSpace>");
}
