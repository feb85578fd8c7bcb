/*
 * probe_stats.c - the few statistics the probe needs, over per-iteration
 * series in which a missing figure is NaN: the least-squares slope after
 * warm-up (growth per step), maximum, median (time per step), checksum
 * comparison, and human-readable bytes and seconds.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "probe_internal.h"

double ol_stat_round(double v)
{
    /* past 2^52 every double is an integer already */
    if (!(fabs(v) < 4503599627370496.0))
        return v;
    return (double)(long long)(v < 0 ? v - 0.5 : v + 0.5);
}

size_t ol_stat_warmup(size_t n)
{
    size_t w = n / 5;
    return w < 1 ? 1 : w;
}

double ol_stat_slope(const ol_dvec *v, size_t from)
{
    double sx = 0, sy = 0, sxx = 0, sxy = 0;
    size_t k = 0;
    for (size_t i = from; i < v->len; i++) {
        double y = v->items[i];
        if (!isfinite(y))
            continue;
        double x = (double)i;
        sx += x;
        sy += y;
        sxx += x * x;
        sxy += x * y;
        k++;
    }
    if (k < 2)
        return NAN;
    double denom = (double)k * sxx - sx * sx;
    if (denom == 0)
        return NAN;
    return ((double)k * sxy - sx * sy) / denom;
}

double ol_stat_max(const ol_dvec *v, size_t from)
{
    double m = NAN;
    for (size_t i = from; i < v->len; i++)
        if (isfinite(v->items[i]) && (isnan(m) || v->items[i] > m))
            m = v->items[i];
    return m;
}

double ol_stat_last(const ol_dvec *v)
{
    for (size_t i = v->len; i > 0; i--)
        if (isfinite(v->items[i - 1]))
            return v->items[i - 1];
    return NAN;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median_of(double *xs, size_t k)
{
    if (k == 0)
        return NAN;
    qsort(xs, k, sizeof *xs, cmp_double);
    return k % 2 ? xs[k / 2] : (xs[k / 2 - 1] + xs[k / 2]) / 2;
}

double ol_stat_median(const ol_dvec *v, size_t from)
{
    double *xs = ol_xmalloc((v->len + 1) * sizeof *xs);
    size_t k = 0;
    for (size_t i = from; i < v->len; i++)
        if (isfinite(v->items[i]))
            xs[k++] = v->items[i];
    double m = median_of(xs, k);
    free(xs);
    return m;
}

bool ol_stat_close(double a, double b, double rtol)
{
    if (!isfinite(a) || !isfinite(b))
        return false;
    double scale = fabs(a) > fabs(b) ? fabs(a) : fabs(b);
    return fabs(a - b) <= rtol * scale + 1e-12;
}

void ol_fmt_bytes(ol_buf *b, double bytes)
{
    if (isnan(bytes)) {
        ol_buf_puts(b, "-");
        return;
    }
    double a = fabs(bytes);
    if (a < 1024)
        ol_buf_printf(b, "%.0f B", bytes);
    else if (a < 1024.0 * 1024)
        ol_buf_printf(b, "%.1f KiB", bytes / 1024);
    else if (a < 1024.0 * 1024 * 1024)
        ol_buf_printf(b, "%.1f MiB", bytes / (1024.0 * 1024));
    else
        ol_buf_printf(b, "%.2f GiB", bytes / (1024.0 * 1024 * 1024));
}

void ol_fmt_seconds(ol_buf *b, double s)
{
    if (isnan(s))
        ol_buf_puts(b, "-");
    else if (s < 1e-3)
        ol_buf_printf(b, "%.0f us", s * 1e6);
    else if (s < 1)
        ol_buf_printf(b, "%.1f ms", s * 1e3);
    else
        ol_buf_printf(b, "%.2f s", s);
}
