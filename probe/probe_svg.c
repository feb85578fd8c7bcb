/*
 * probe_svg.c - `--plot FILE.svg`: the probe's measurements as a plain SVG
 * document, written here in C with no library: one small panel per scenario
 * (bad against fixed, per iteration) or, for --script, the budget per step,
 * what grows and when it runs out.
 *
 * Each panel scales its own y axis from zero (or the lowest value, when that
 * is negative) to its highest value or reference line, labels the top and
 * bottom in the unit's own terms (bytes in KiB/MiB, nodes, milliseconds),
 * and draws a polyline per series (a dashed one for a projection) or, for
 * parts of a whole, filled layers. Missing figures (NaN) break a line rather
 * than drop to zero. The legend sits in a band between the panel's title and
 * its plot area, so it never covers a figure; a panel without figures says
 * so instead of drawing an axis for nothing. Elements carry classes
 * (panel, plot-area, data, legend, legend-box, memory, run-out) so a test or
 * a stylesheet can find them.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "probe_internal.h"

#define PANEL_W 320
#define COLS 3
#define MARGIN_L 64
#define MARGIN_R 14
#define MARGIN_B 30
#define PLOT_H 120
#define TITLE_H 26          /* the panel's title line */
#define LEGEND_ROW 13       /* one row of the legend band */
#define LEGEND_GAP 6        /* between the legend band and the plot area */
#define CHAR_W 6            /* a generous width of a 10px sans-serif character */

static void xml_escape(ol_buf *b, const char *s)
{
    for (; *s; s++) {
        switch (*s) {
        case '&':
            ol_buf_puts(b, "&amp;");
            break;
        case '<':
            ol_buf_puts(b, "&lt;");
            break;
        case '>':
            ol_buf_puts(b, "&gt;");
            break;
        case '"':
            ol_buf_puts(b, "&quot;");
            break;
        default:
            if ((unsigned char)*s >= 0x20 || *s == '\t')
                ol_buf_putc(b, *s);
        }
    }
}

static void fmt_value(ol_buf *b, const char *unit, double v)
{
    if (strcmp(unit, "bytes") == 0)
        ol_fmt_bytes(b, v);
    else if (strcmp(unit, "s") == 0)
        ol_fmt_seconds(b, v);
    else if (fabs(v) >= 100 || v == floor(v))
        ol_buf_printf(b, "%.0f %s", v, unit);
    else
        ol_buf_printf(b, "%.2f %s", v, unit);
}

/* "36,414" */
static void fmt_step(ol_buf *b, double v)
{
    char digits[64];
    snprintf(digits, sizeof digits, "%.0f", v);
    size_t len = strlen(digits);
    for (size_t k = 0; k < len; k++) {
        ol_buf_putc(b, digits[k]);
        if (k + 1 < len && (len - k - 1) % 3 == 0 && digits[k] != '-')
            ol_buf_putc(b, ',');
    }
}

/* Characters, not bytes: a label's width for the legend's layout. */
static int text_width(const char *s)
{
    int n = 0;
    for (; *s; s++)
        n += ((unsigned char)*s & 0xC0) != 0x80;
    return n * CHAR_W;
}

/* ---- the legend ---------------------------------------------------------------------- */

typedef struct legend_item {
    const char *label;
    const char *color;
    int style;               /* LEG_FILL, LEG_LINE, LEG_DASH */
} legend_item;

enum { LEG_FILL, LEG_LINE, LEG_DASH };

static size_t legend_items(const ol_svg_panel *p, legend_item *items)
{
    size_t n = 0;
    for (size_t k = 0; k < p->line_count; k++)
        items[n++] = (legend_item){p->lines[k].label, p->lines[k].color,
                                   p->stacked ? LEG_FILL : p->line_dashed[k] ? LEG_DASH : LEG_LINE};
    if (p->hline.label)
        items[n++] = (legend_item){p->hline.label, "#000000", LEG_DASH};
    if (p->vline.label)
        items[n++] = (legend_item){p->vline.label, "#8c564b", LEG_DASH};
    return n;
}

#define ITEM_W(label) (16 + text_width(label) + 10)
#define LEGEND_W (PANEL_W - 8 - MARGIN_R)

/* Rows the legend takes when wrapped to the panel's width. */
static int legend_rows(const ol_svg_panel *p)
{
    legend_item items[8];
    size_t n = legend_items(p, items);
    int rows = n ? 1 : 0, x = 0;
    for (size_t i = 0; i < n; i++) {
        int w = ITEM_W(items[i].label);
        if (x > 0 && x + w > LEGEND_W) {
            rows++;
            x = 0;
        }
        x += w;
    }
    return rows;
}

static void legend(ol_buf *b, const ol_svg_panel *p, int x0, int y0)
{
    legend_item items[8];
    size_t n = legend_items(p, items);
    if (!n)
        return;
    int rows = legend_rows(p);
    int widest = 0, x = 0;
    for (size_t i = 0; i < n; i++) {
        int w = ITEM_W(items[i].label);
        if (x > 0 && x + w > LEGEND_W)
            x = 0;
        x += w;
        if (x > widest)
            widest = x;
    }
    ol_buf_printf(b, "<g class=\"legend\">\n<rect class=\"legend-box\" x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" "
                     "fill=\"none\" stroke=\"#e0e0e0\"/>\n",
                  x0 - 2, y0, widest - 6, rows * LEGEND_ROW + 2);
    int row = 0;
    x = 0;
    for (size_t i = 0; i < n; i++) {
        int w = ITEM_W(items[i].label);
        if (x > 0 && x + w > LEGEND_W) {
            row++;
            x = 0;
        }
        int ix = x0 + x, iy = y0 + 1 + row * LEGEND_ROW;
        if (items[i].style == LEG_FILL)
            ol_buf_printf(b, "<rect x=\"%d\" y=\"%d\" width=\"12\" height=\"9\" fill=\"%s\" fill-opacity=\"0.75\"/>\n", ix,
                          iy + 2, items[i].color);
        else
            ol_buf_printf(b, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"%s\" stroke-width=\"1.8\"%s/>\n", ix,
                          iy + 6, ix + 12, iy + 6, items[i].color,
                          items[i].style == LEG_DASH ? " stroke-dasharray=\"3 2\"" : "");
        ol_buf_printf(b, "<text x=\"%d\" y=\"%d\" font-size=\"10\" fill=\"#333\">", ix + 16, iy + 10);
        xml_escape(b, items[i].label);
        ol_buf_puts(b, "</text>\n");
        x += w;
    }
    ol_buf_puts(b, "</g>\n");
}

/* ---- a panel ----------------------------------------------------------------------------- */

/* The sum of the first k+1 series at step i (missing figures count as 0). */
static double stack_at(const ol_svg_panel *p, size_t k, size_t i)
{
    double sum = 0;
    for (size_t j = 0; j <= k; j++) {
        const ol_dvec *y = p->lines[j].y;
        if (i < y->len && isfinite(y->items[i]))
            sum += y->items[i];
    }
    return sum;
}

/* Where the plot area is and what it spans. */
typedef struct frame {
    int px, py, pw, ph;
    double lo, hi;           /* y */
    double x_lo, x_hi;       /* steps */
} frame;

static double fx(const frame *f, double step)
{
    return f->px + (f->x_hi > f->x_lo ? (step - f->x_lo) / (f->x_hi - f->x_lo) : 0.5) * f->pw;
}

static double fy(const frame *f, double v)
{
    return f->py + f->ph - (v - f->lo) / (f->hi - f->lo) * f->ph;
}

/* The step of point i of line k. */
static double x_of(const ol_svg_panel *p, size_t k, size_t i)
{
    const ol_dvec *x = p->line_x[k];
    return x ? (i < x->len ? x->items[i] : NAN) : (double)(i + 1);
}

/* Parts of a whole, filled one on top of the other, the first at the bottom. */
static void stacked(ol_buf *b, const ol_svg_panel *p, size_t n, const frame *f)
{
    for (size_t k = 0; k < p->line_count; k++) {
        ol_buf_printf(b, "<polygon class=\"data\" fill=\"%s\" fill-opacity=\"0.75\" stroke=\"none\" points=\"",
                      p->lines[k].color);
        for (size_t i = 0; i < n; i++)
            ol_buf_printf(b, "%.1f,%.1f ", fx(f, (double)(i + 1)), fy(f, stack_at(p, k, i)));
        for (size_t i = n; i-- > 0;)
            ol_buf_printf(b, "%.1f,%.1f ", fx(f, (double)(i + 1)), fy(f, k ? stack_at(p, k - 1, i) : 0));
        ol_buf_puts(b, "\"/>\n");
    }
}

static void lines(ol_buf *b, const ol_svg_panel *p, const frame *f)
{
    for (size_t k = 0; k < p->line_count; k++) {
        const ol_svg_line *l = &p->lines[k];
        bool open = false;
        for (size_t i = 0; i < l->y->len; i++) {
            double v = l->y->items[i], x = x_of(p, k, i);
            if (!isfinite(v) || !isfinite(x)) {
                if (open)
                    ol_buf_puts(b, "\"/>\n");
                open = false;
                continue;
            }
            if (!open) {
                ol_buf_printf(b, "<polyline class=\"data\" fill=\"none\" stroke=\"%s\" stroke-width=\"1.8\"%s points=\"",
                              l->color, p->line_dashed[k] ? " stroke-dasharray=\"5 3\"" : "");
                open = true;
            }
            ol_buf_printf(b, "%.1f,%.1f ", fx(f, x), fy(f, v));
        }
        if (open)
            ol_buf_puts(b, "\"/>\n");
    }
}

static void marks(ol_buf *b, const ol_svg_panel *p, const frame *f)
{
    if (p->hline.label && isfinite(p->hline.at)) {
        double y = fy(f, p->hline.at);
        ol_buf_printf(b, "<line class=\"%s\" x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#000000\" "
                         "stroke-width=\"1.2\" stroke-dasharray=\"3 2\"/>\n",
                      p->hline.kind ? p->hline.kind : "hline", f->px, y, f->px + f->pw, y);
    }
    if (p->vline.label && isfinite(p->vline.at)) {
        double x = fx(f, p->vline.at);
        ol_buf_printf(b, "<line class=\"%s\" x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#8c564b\" "
                         "stroke-width=\"1.2\" stroke-dasharray=\"3 2\"/>\n",
                      p->vline.kind ? p->vline.kind : "vline", x, f->py, x, f->py + f->ph);
    }
}

static void axis_label(ol_buf *b, int x, int y, const char *anchor, const char *text)
{
    ol_buf_printf(b, "<text x=\"%d\" y=\"%d\" font-size=\"10\" text-anchor=\"%s\">", x, y, anchor);
    xml_escape(b, text);
    ol_buf_puts(b, "</text>\n");
}

static void panel(ol_buf *b, const ol_svg_panel *p, int x0, int y0, int legend_band)
{
    frame f = {0};
    size_t n = 0;
    bool any = false;
    double lo = 0, hi = 0, x_hi = 1;
    for (size_t k = 0; k < p->line_count; k++) {
        const ol_svg_line *l = &p->lines[k];
        if (l->y->len > n && !p->line_x[k])
            n = l->y->len;
        for (size_t i = 0; i < l->y->len; i++) {
            double v = p->stacked ? stack_at(p, p->line_count - 1, i) : l->y->items[i], x = x_of(p, k, i);
            if (!isfinite(v) || !isfinite(x))
                continue;
            if (!any || v > hi)
                hi = v;
            if (!any || v < lo)
                lo = v;
            if (x > x_hi)
                x_hi = x;
            any = true;
        }
    }
    bool all_zero = any && lo == 0 && hi == 0;
    if (any && p->hline.label && isfinite(p->hline.at)) {
        hi = p->hline.at > hi ? p->hline.at : hi;
        lo = p->hline.at < lo ? p->hline.at : lo;
    }
    if (any && p->vline.label && isfinite(p->vline.at) && p->vline.at > x_hi)
        x_hi = p->vline.at;
    if (lo > 0)
        lo = 0;
    if (hi <= lo)
        hi = lo + 1;
    f.pw = PANEL_W - MARGIN_L - MARGIN_R;
    f.ph = PLOT_H;
    f.px = x0 + MARGIN_L;
    f.py = y0 + TITLE_H + legend_band + LEGEND_GAP;
    f.lo = lo;
    f.hi = hi;
    f.x_lo = 1;
    f.x_hi = x_hi;
    ol_buf_puts(b, "<g class=\"panel\">\n");
    ol_buf_printf(b, "<text x=\"%d\" y=\"%d\" font-size=\"12\" font-weight=\"bold\">", x0 + 8, y0 + 18);
    xml_escape(b, p->title);
    ol_buf_puts(b, "</text>\n");
    ol_buf_printf(b, "<rect class=\"plot-area\" x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"#fafafa\" "
                     "stroke=\"#ccc\"/>\n",
                  f.px, f.py, f.pw, f.ph);
    if (!any || all_zero) {
        /* no axis for nothing: say what there is instead */
        const char *note = !any ? (p->empty_note ? p->empty_note : "no figures")
                                : "every figure is 0";
        ol_buf_printf(b, "<text x=\"%d\" y=\"%d\" font-size=\"11\" fill=\"#888\" text-anchor=\"middle\">",
                      f.px + f.pw / 2, f.py + f.ph / 2);
        xml_escape(b, note);
        ol_buf_puts(b, "</text>\n</g>\n");
        return;
    }
    legend(b, p, x0 + 10, y0 + TITLE_H);
    ol_buf val = {0};
    fmt_value(&val, p->unit, hi);
    axis_label(b, f.px - 4, f.py + 10, "end", val.data);
    ol_buf_clear(&val);
    fmt_value(&val, p->unit, lo);
    axis_label(b, f.px - 4, f.py + f.ph, "end", val.data);
    ol_buf_clear(&val);
    axis_label(b, f.px, f.py + f.ph + 14, "start", "1");
    axis_label(b, f.px + f.pw / 2, f.py + f.ph + 14, "middle", "step");
    fmt_step(&val, x_hi);
    axis_label(b, f.px + f.pw, f.py + f.ph + 14, "end", val.data);
    ol_buf_free(&val);
    if (p->stacked)
        stacked(b, p, n, &f);
    else
        lines(b, p, &f);
    marks(b, p, &f);
    ol_buf_puts(b, "</g>\n");
}

void ol_svg_render(ol_buf *out, const char *title, const ol_svg_panels *panels)
{
    size_t count = panels->len;
    size_t rows = count ? (count + COLS - 1) / COLS : 1;
    int cols = count < COLS ? (count ? (int)count : 1) : COLS;
    /* one legend band for every panel, as deep as the deepest legend, so
     * the plot areas of a row line up */
    int band = 0;
    for (size_t i = 0; i < count; i++) {
        int r = legend_rows(&panels->items[i]) * LEGEND_ROW + 2;
        if (r > band)
            band = r;
    }
    int panel_h = TITLE_H + band + LEGEND_GAP + PLOT_H + MARGIN_B;
    int width = cols * PANEL_W, height = (int)rows * panel_h + 36;
    ol_buf_printf(out,
                  "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
                  "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
                  "font-family=\"sans-serif\">\n"
                  "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n",
                  width, height, width, height);
    ol_buf_puts(out, "<text x=\"8\" y=\"22\" font-size=\"14\">");
    xml_escape(out, title);
    ol_buf_puts(out, "</text>\n");
    if (count == 0)
        ol_buf_puts(out, "<text x=\"8\" y=\"60\" font-size=\"12\" fill=\"#888\">nothing to plot</text>\n");
    for (size_t i = 0; i < count; i++)
        panel(out, &panels->items[i], (int)(i % COLS) * PANEL_W, 36 + (int)(i / COLS) * panel_h, band);
    ol_buf_puts(out, "</svg>\n");
}

void ol_svg_panels_free(ol_svg_panels *p)
{
    for (size_t i = 0; i < p->len; i++) {
        free(p->items[i].title);
        free(p->items[i].unit);
        free(p->items[i].empty_note);
    }
    ol_vec_free(p);
}

bool ol_write_file_atomic(const char *path, const char *data, size_t len, ol_buf *err)
{
    char *tmp = ol_xasprintf("%s.tmp-%ld", path, (long)getpid());
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) {
        ol_buf_printf(err, "cannot write '%s': %s", path, strerror(errno));
        free(tmp);
        return false;
    }
    size_t done = 0;
    while (done < len) {
        ssize_t w = write(fd, data + done, len - done);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            ol_buf_printf(err, "cannot write '%s': %s", path, w < 0 ? strerror(errno) : "short write");
            close(fd);
            unlink(tmp);
            free(tmp);
            return false;
        }
        done += (size_t)w;
    }
    if (close(fd) != 0 || rename(tmp, path) != 0) {
        ol_buf_printf(err, "cannot write '%s': %s", path, strerror(errno));
        unlink(tmp);
        free(tmp);
        return false;
    }
    free(tmp);
    return true;
}
