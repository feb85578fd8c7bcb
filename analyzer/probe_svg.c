/*
 * probe_svg.c - `--plot FILE.svg`: the probe's measurements as a plain SVG
 * document, written here in C with no library: one small panel per scenario
 * (bad against fixed, per iteration) or, for --script, per growing line.
 *
 * Each panel scales its own y axis from zero (or the lowest value, when that
 * is negative) to its highest value, labels the top and bottom in the unit's
 * own terms (bytes in KiB/MiB, nodes, milliseconds), and draws a polyline
 * per series. Missing figures (NaN) break a line rather than drop to zero.
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
#define PANEL_H 190
#define COLS 3
#define MARGIN_L 64
#define MARGIN_R 12
#define MARGIN_T 30
#define MARGIN_B 30

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

/* Parts of a whole, filled one on top of the other, the first at the bottom. */
static void stacked(ol_buf *b, const ol_svg_panel *p, size_t n, double lo, double hi, int px, int py, int pw, int ph)
{
    for (size_t k = 0; k < p->line_count; k++) {
        ol_buf_printf(b, "<polygon fill=\"%s\" fill-opacity=\"0.75\" stroke=\"none\" points=\"", p->lines[k].color);
        for (size_t i = 0; i < n; i++) {
            double fx = n > 1 ? (double)i / (double)(n - 1) : 0.5;
            double fy = (stack_at(p, k, i) - lo) / (hi - lo);
            ol_buf_printf(b, "%.1f,%.1f ", px + fx * pw, py + ph - fy * ph);
        }
        for (size_t i = n; i-- > 0;) {
            double fx = n > 1 ? (double)i / (double)(n - 1) : 0.5;
            double fy = k ? (stack_at(p, k - 1, i) - lo) / (hi - lo) : (0 - lo) / (hi - lo);
            ol_buf_printf(b, "%.1f,%.1f ", px + fx * pw, py + ph - fy * ph);
        }
        ol_buf_puts(b, "\"/>\n");
        ol_buf_printf(b, "<text x=\"%d\" y=\"%d\" font-size=\"10\" fill=\"%s\">", px + 4 + (int)k * 48, py + 12,
                      p->lines[k].color);
        xml_escape(b, p->lines[k].label);
        ol_buf_puts(b, "</text>\n");
    }
}

static void panel(ol_buf *b, const ol_svg_panel *p, int x0, int y0)
{
    double lo = 0, hi = 0;
    size_t n = 0;
    bool any = false;
    if (p->stacked) {
        for (size_t k = 0; k < p->line_count; k++)
            if (p->lines[k].y->len > n)
                n = p->lines[k].y->len;
        for (size_t i = 0; i < n; i++) {
            double v = stack_at(p, p->line_count - 1, i);
            if (!any || v > hi)
                hi = v;
            any = true;
        }
    }
    for (size_t k = 0; k < p->line_count && !p->stacked; k++) {
        const ol_dvec *y = p->lines[k].y;
        if (y->len > n)
            n = y->len;
        for (size_t i = 0; i < y->len; i++) {
            double v = y->items[i];
            if (!isfinite(v))
                continue;
            if (!any || v > hi)
                hi = v;
            if (!any || v < lo)
                lo = v;
            any = true;
        }
    }
    if (lo > 0)
        lo = 0;
    if (hi <= lo)
        hi = lo + 1;
    int pw = PANEL_W - MARGIN_L - MARGIN_R, ph = PANEL_H - MARGIN_T - MARGIN_B;
    int px = x0 + MARGIN_L, py = y0 + MARGIN_T;
    ol_buf_printf(b, "<g>\n<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"#fafafa\" stroke=\"#ccc\"/>\n", px,
                  py, pw, ph);
    ol_buf_printf(b, "<text x=\"%d\" y=\"%d\" font-size=\"12\" font-weight=\"bold\">", x0 + 8, y0 + 18);
    xml_escape(b, p->title);
    ol_buf_puts(b, "</text>\n");
    ol_buf val = {0};
    fmt_value(&val, p->unit, hi);
    ol_buf_printf(b, "<text x=\"%d\" y=\"%d\" font-size=\"10\" text-anchor=\"end\">", px - 4, py + 10);
    xml_escape(b, val.data);
    ol_buf_puts(b, "</text>\n");
    ol_buf_clear(&val);
    fmt_value(&val, p->unit, lo);
    ol_buf_printf(b, "<text x=\"%d\" y=\"%d\" font-size=\"10\" text-anchor=\"end\">", px - 4, py + ph);
    xml_escape(b, val.data);
    ol_buf_puts(b, "</text>\n");
    ol_buf_free(&val);
    ol_buf_printf(b, "<text x=\"%d\" y=\"%d\" font-size=\"10\">step</text>\n", px + pw / 2 - 12, py + ph + 14);
    ol_buf_printf(b, "<text x=\"%d\" y=\"%d\" font-size=\"10\" text-anchor=\"end\">%zu</text>\n", px + pw, py + ph + 14,
                  n);
    if (!any) {
        ol_buf_printf(b, "<text x=\"%d\" y=\"%d\" font-size=\"11\" fill=\"#888\">no figures</text>\n", px + 10,
                      py + ph / 2);
    }
    if (p->stacked && any)
        stacked(b, p, n, lo, hi, px, py, pw, ph);
    for (size_t k = 0; k < p->line_count && !p->stacked; k++) {
        const ol_dvec *y = p->lines[k].y;
        bool open = false;
        for (size_t i = 0; i < y->len; i++) {
            double v = y->items[i];
            if (!isfinite(v)) {
                if (open)
                    ol_buf_puts(b, "\"/>\n");
                open = false;
                continue;
            }
            double fx = n > 1 ? (double)i / (double)(n - 1) : 0.5;
            double fy = (v - lo) / (hi - lo);
            if (!open) {
                ol_buf_printf(b, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"1.8\" points=\"",
                              p->lines[k].color);
                open = true;
            }
            ol_buf_printf(b, "%.1f,%.1f ", px + fx * pw, py + ph - fy * ph);
        }
        if (open)
            ol_buf_puts(b, "\"/>\n");
        ol_buf_printf(b, "<text x=\"%d\" y=\"%d\" font-size=\"10\" fill=\"%s\">", px + 6 + (int)k * 64, py + 12,
                      p->lines[k].color);
        xml_escape(b, p->lines[k].label);
        ol_buf_puts(b, "</text>\n");
    }
    ol_buf_puts(b, "</g>\n");
}

void ol_svg_render(ol_buf *out, const char *title, const ol_svg_panels *panels)
{
    size_t count = panels->len;
    size_t rows = count ? (count + COLS - 1) / COLS : 1;
    int cols = count < COLS ? (count ? (int)count : 1) : COLS;
    int width = cols * PANEL_W, height = (int)rows * PANEL_H + 36;
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
        panel(out, &panels->items[i], (int)(i % COLS) * PANEL_W, 36 + (int)(i / COLS) * PANEL_H);
    ol_buf_puts(out, "</svg>\n");
}

void ol_svg_panels_free(ol_svg_panels *p)
{
    for (size_t i = 0; i < p->len; i++) {
        free(p->items[i].title);
        free(p->items[i].unit);
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
