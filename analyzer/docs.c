/*
 * docs.c - rendering a rule's documentation (see docs.h).
 *
 * After the fix come the rule's measured cost and its references
 * (references.c). The measured cost of a rule with a probe scenario is the
 * figures of every committed probe/results/ *.json (compiled in, see
 * figures.h), each naming its device and torch version. Nothing is estimated: a device with
 * no committed figures is said to be unmeasured.
 */
#include "docs.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "figures.h"
#include "references.h"

static void put_bytes(ol_buf *b, double v)
{
    double a = fabs(v);
    if (isnan(v))
        ol_buf_puts(b, "-");
    else if (a < 1024)
        ol_buf_printf(b, "%.0f B", v);
    else if (a < 1024.0 * 1024)
        ol_buf_printf(b, "%.1f KiB", v / 1024);
    else if (a < 1024.0 * 1024 * 1024)
        ol_buf_printf(b, "%.1f MiB", v / (1024.0 * 1024));
    else
        ol_buf_printf(b, "%.2f GiB", v / (1024.0 * 1024 * 1024));
}

static void put_growth(ol_buf *b, double v)
{
    if (!isnan(v) && v > 0)
        ol_buf_putc(b, '+');
    put_bytes(b, isnan(v) || fabs(v) >= 1 ? v : 0);
}

static void put_seconds(ol_buf *b, double s)
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

static void put_nodes(ol_buf *b, double v)
{
    if (isnan(v))
        ol_buf_puts(b, "-");
    else
        ol_buf_printf(b, "%+.1f", fabs(v) < 0.05 ? 0.0 : v);
}

static bool has_figures(const ol_rule *r, bool *gpu)
{
    bool any = false;
    *gpu = false;
    for (size_t i = 0; i < ol_probe_figure_count; i++) {
        const ol_probe_figure *f = &ol_probe_figures[i];
        if (strcmp(f->rule, r->code) != 0)
            continue;
        any = true;
        if (strcmp(f->device, "cpu") != 0)
            *gpu = true;
    }
    return any;
}

static void verdict_text(ol_buf *b, const ol_probe_figure *f)
{
    ol_buf_puts(b, f->verdict);
    if (f->confirmed_by[0])
        ol_buf_printf(b, " (%s)", f->confirmed_by);
}

static void agree_text(ol_buf *b, const ol_probe_figure *f)
{
    ol_buf_puts(b, f->agree == 1 ? "yes" : f->agree == 0 ? "NO" : "-");
}

/* One variant's figures on a line, for the terminal and plain text. */
static void side_line(ol_buf *b, const char *indent, const char *label, const ol_probe_side *s)
{
    ol_buf_printf(b, "%s%-6s peak ", indent, label);
    put_bytes(b, s->peak_bytes);
    ol_buf_puts(b, ", ");
    put_growth(b, s->growth_bytes_per_step);
    ol_buf_puts(b, " per step kept, ");
    put_nodes(b, s->graph_nodes_per_step);
    ol_buf_puts(b, " autograd nodes per step, ");
    put_seconds(b, s->time_per_step_s);
    ol_buf_puts(b, " per step");
    if (!isnan(s->zero_grad_fraction))
        ol_buf_printf(b, ", %.2f%% zero gradients", 100 * s->zero_grad_fraction);
    if (!isnan(s->reserved_peak_bytes)) {
        ol_buf_puts(b, ", reserved ");
        put_bytes(b, s->reserved_peak_bytes);
    }
    if (!isnan(s->driver_peak_bytes)) {
        ol_buf_puts(b, ", the driver sees ");
        put_bytes(b, s->driver_peak_bytes);
    }
    ol_buf_putc(b, '\n');
}

static bool not_measured(const ol_probe_figure *f)
{
    return strcmp(f->verdict, "not measured") == 0;
}

/* The scenario's description, from whichever results file has it. */
static const char *scenario_summary(const ol_probe_figure *f)
{
    if (f->summary[0])
        return f->summary;
    for (size_t i = 0; i < ol_probe_figure_count; i++) {
        const ol_probe_figure *g = &ol_probe_figures[i];
        if (strcmp(g->rule, f->rule) == 0 && strcmp(g->scenario, f->scenario) == 0 && g->summary[0])
            return g->summary;
    }
    return "";
}

/* The measured cost as indented text (terminal) or flush left (plain). */
static void measured_text(const ol_rule *r, ol_buf *b, const char *indent)
{
    bool gpu;
    if (!has_figures(r, &gpu))
        return;
    char inner[16];
    snprintf(inner, sizeof inner, "%s  ", indent);
    for (size_t i = 0; i < ol_probe_figure_count; i++) {
        const ol_probe_figure *f = &ol_probe_figures[i];
        if (strcmp(f->rule, r->code) != 0)
            continue;
        ol_buf_printf(b, "%s%s, torch %s, scenario %s: ", indent, f->device, f->torch, f->scenario);
        if (not_measured(f)) {
            ol_buf_printf(b, "not measured%s%s%s\n", f->note[0] ? " (" : "", f->note, f->note[0] ? ")" : "");
            continue;
        }
        verdict_text(b, f);
        ol_buf_puts(b, "; the variants agree: ");
        agree_text(b, f);
        ol_buf_putc(b, '\n');
        if (f->summary[0])
            ol_buf_printf(b, "%s%s\n", inner, f->summary);
        if (f->measured) {
            side_line(b, inner, "bad:", &f->bad);
            side_line(b, inner, "fixed:", &f->fixed);
        }
        if (f->note[0])
            ol_buf_printf(b, "%snote: %s\n", inner, f->note);
    }
    if (!gpu)
        ol_buf_printf(b, "%sGPU: not measured yet (no GPU figures are committed).\n", indent);
    ol_buf_printf(b, "%sReproduce: oomlint probe --rules %s\n", indent, r->code);
}

static void measured_markdown(const ol_rule *r, ol_buf *b)
{
    bool gpu;
    if (!has_figures(r, &gpu))
        return;
    ol_buf_puts(b, "\n## Measured cost\n\n"
                   "Measured with `oomlint probe`: a `bad` and a `fixed` variant of the same small step, "
                   "each in a fresh process. On the CPU, memory is what autograd keeps for backward (the peak adds "
                   "the gradients alive at the same time); on a GPU it is what the CUDA allocator holds, and the "
                   "driver's view (NVML) adds the CUDA context and the allocator's cached blocks. GPU figures "
                   "come first.\n\n");
    ol_buf_puts(b, "| device | torch | scenario | verdict | agree | peak bad / fixed | growth per step bad / fixed "
                   "| autograd nodes per step bad / fixed | time per step bad / fixed | driver sees bad / fixed |\n"
                   "|---|---|---|---|---|---|---|---|---|---|\n");
    for (size_t i = 0; i < ol_probe_figure_count; i++) {
        const ol_probe_figure *f = &ol_probe_figures[i];
        if (strcmp(f->rule, r->code) != 0)
            continue;
        ol_buf_printf(b, "| %s | %s | %s | ", f->device, f->torch, f->scenario);
        if (not_measured(f)) {
            ol_buf_printf(b, "not measured%s%s | - | - | - | - | - | - |\n", f->note[0] ? ": " : "", f->note);
            continue;
        }
        verdict_text(b, f);
        ol_buf_puts(b, " | ");
        agree_text(b, f);
        ol_buf_puts(b, " | ");
        if (f->measured) {
            put_bytes(b, f->bad.peak_bytes);
            ol_buf_puts(b, " / ");
            put_bytes(b, f->fixed.peak_bytes);
            ol_buf_puts(b, " | ");
            put_growth(b, f->bad.growth_bytes_per_step);
            ol_buf_puts(b, " / ");
            put_growth(b, f->fixed.growth_bytes_per_step);
            ol_buf_puts(b, " | ");
            put_nodes(b, f->bad.graph_nodes_per_step);
            ol_buf_puts(b, " / ");
            put_nodes(b, f->fixed.graph_nodes_per_step);
            ol_buf_puts(b, " | ");
            put_seconds(b, f->bad.time_per_step_s);
            ol_buf_puts(b, " / ");
            put_seconds(b, f->fixed.time_per_step_s);
            ol_buf_puts(b, " | ");
            if (isnan(f->bad.driver_peak_bytes)) {
                ol_buf_puts(b, "-");
            } else {
                put_bytes(b, f->bad.driver_peak_bytes);
                ol_buf_puts(b, " / ");
                put_bytes(b, f->fixed.driver_peak_bytes);
            }
            ol_buf_puts(b, " |\n");
        } else {
            ol_buf_puts(b, "- | - | - | - | - |\n");
        }
    }
    ol_buf_putc(b, '\n');
    for (size_t i = 0; i < ol_probe_figure_count; i++) {
        const ol_probe_figure *f = &ol_probe_figures[i];
        if (strcmp(f->rule, r->code) != 0)
            continue;
        bool again = false; /* each scenario once, with the first note measured */
        for (size_t j = 0; j < i && !again; j++)
            again = strcmp(ol_probe_figures[j].rule, f->rule) == 0 &&
                    strcmp(ol_probe_figures[j].scenario, f->scenario) == 0 && !not_measured(&ol_probe_figures[j]);
        if (again || not_measured(f))
            continue;
        ol_buf_printf(b, "- `%s`: %s.", f->scenario, scenario_summary(f));
        if (f->note[0])
            ol_buf_printf(b, " Note: %s.", f->note);
        ol_buf_putc(b, '\n');
    }
    if (!gpu)
        ol_buf_puts(b, "\nNo GPU figures are committed yet.\n");
    ol_buf_printf(b, "\nReproduce with `oomlint probe --rules %s`.\n", r->code);
}

static void indent_block(ol_buf *b, const char *text, const char *prefix)
{
    const char *p = text;
    while (*p) {
        const char *nl = strchr(p, '\n');
        size_t len = nl ? (size_t)(nl - p) : strlen(p);
        ol_buf_puts(b, prefix);
        ol_buf_add(b, p, len);
        ol_buf_putc(b, '\n');
        p += len + (nl ? 1 : 0);
    }
}

/* `oomlint rule` fits a terminal of this many columns: prose is wrapped to
 * it at spaces, code examples are not (a wrapped line of code is a
 * different program), and a word longer than a line (a URL) keeps its line. */
#define DOC_COLUMNS 100

/* Columns of UTF-8 text: one per code point. */
static size_t columns(const char *s, size_t n)
{
    size_t cols = 0;
    for (size_t i = 0; i < n; i++)
        cols += ((unsigned char)s[i] & 0xC0) != 0x80;
    return cols;
}

/* Appends one line of text wrapped to DOC_COLUMNS: its first line after
 * `indent`, the others after `hang`. */
static void put_wrapped_line(ol_buf *b, const char *text, size_t len, const char *indent, const char *hang)
{
    const char *lead = indent;
    size_t i = 0;
    while (i < len && text[i] == ' ')
        i++;
    for (;;) {
        size_t room = DOC_COLUMNS > columns(lead, strlen(lead)) ? DOC_COLUMNS - columns(lead, strlen(lead)) : 1;
        /* as many words as fit, at least one */
        size_t end = i, last_fit = i;
        while (end < len) {
            size_t word_end = end;
            while (word_end < len && text[word_end] == ' ')
                word_end++;
            while (word_end < len && text[word_end] != ' ')
                word_end++;
            if (columns(text + i, word_end - i) > room && last_fit > i)
                break;
            last_fit = end = word_end;
        }
        ol_buf_puts(b, lead);
        ol_buf_add(b, text + i, last_fit - i);
        ol_buf_putc(b, '\n');
        i = last_fit;
        while (i < len && text[i] == ' ')
            i++;
        if (i >= len)
            return;
        lead = hang;
    }
}

/* Appends text, each of its lines wrapped to DOC_COLUMNS after `indent`. */
static void put_wrapped(ol_buf *b, const char *text, const char *indent)
{
    const char *p = text;
    do {
        const char *nl = strchr(p, '\n');
        size_t len = nl ? (size_t)(nl - p) : strlen(p);
        if (len == 0)
            ol_buf_putc(b, '\n');
        else
            put_wrapped_line(b, p, len, indent, indent);
        p += len + (nl ? 1 : 0);
    } while (*p);
}

/* Appends rendered lines, each wrapped to DOC_COLUMNS with what runs over
 * indented two more than the line itself. */
static void put_wrapped_lines(ol_buf *b, const char *text, size_t n)
{
    const char *p = text, *end = text + n;
    char hang[64];
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        size_t len = nl ? (size_t)(nl - p) : (size_t)(end - p);
        size_t lead = 0;
        while (lead < len && p[lead] == ' ')
            lead++;
        size_t h = lead + 2 < sizeof hang ? lead + 2 : sizeof hang - 1;
        memset(hang, ' ', h);
        hang[h] = '\0';
        char indent[64];
        size_t k = lead < sizeof indent ? lead : sizeof indent - 1;
        memset(indent, ' ', k);
        indent[k] = '\0';
        if (len == 0)
            ol_buf_putc(b, '\n');
        else
            put_wrapped_line(b, p + lead, len - lead, indent, hang);
        p += len + (nl ? 1 : 0);
    }
}

/* ---- References: the pages that explain a rule's cost (references.c) ---- */

static void references_terminal(const ol_rule *r, ol_buf *b)
{
    const ol_reference *refs = ol_rule_references(r->code);
    if (!refs || !refs->title)
        return;
    ol_buf_puts(b, "\nReferences\n");
    for (; refs->title; refs++) {
        put_wrapped_line(b, refs->title, strlen(refs->title), "  - ", "      ");
        ol_buf_printf(b, "    %s\n", refs->url);
    }
}

static void references_markdown(const ol_rule *r, ol_buf *b)
{
    const ol_reference *refs = ol_rule_references(r->code);
    if (!refs || !refs->title)
        return;
    ol_buf_puts(b, "\n## References\n\n");
    for (; refs->title; refs++)
        ol_buf_printf(b, "- [%s](%s)\n", refs->title, refs->url);
}

static void references_plain(const ol_rule *r, ol_buf *b)
{
    const ol_reference *refs = ol_rule_references(r->code);
    if (!refs || !refs->title)
        return;
    ol_buf_puts(b, "\nReferences\n");
    for (; refs->title; refs++)
        ol_buf_printf(b, "- %s: %s\n", refs->title, refs->url);
}

void ol_rule_doc_terminal(const ol_rule *r, ol_buf *b)
{
    ol_buf_printf(b, "%s %s [%s]%s\n\n", r->code, r->name, ol_severity_name(r->severity),
                  r->opt_in ? " (opt-in)" : "");
    put_wrapped(b, r->summary, "");
    ol_buf_puts(b, "\nWhat it does\n");
    put_wrapped(b, r->what, "  ");
    ol_buf_puts(b, "\nWhy is this bad?\n");
    put_wrapped(b, r->why, "  ");
    ol_buf_puts(b, "\nExample\n");
    indent_block(b, r->example, "    ");
    ol_buf_puts(b, "\nUse instead\n");
    indent_block(b, r->instead, "    ");
    const char *const sections[][2] = {{"Fix", r->fix}, {"Fix safety", r->fix_safety}, {"Accuracy", r->accuracy}};
    for (size_t i = 0; i < OL_ARRAY_LEN(sections); i++) {
        if (!sections[i][1])
            continue;
        ol_buf_printf(b, "\n%s\n", sections[i][0]);
        put_wrapped(b, sections[i][1], "  ");
    }
    bool gpu;
    if (has_figures(r, &gpu)) {
        ol_buf_puts(b, "\nMeasured (oomlint probe)\n");
        ol_buf measured = {0};
        measured_text(r, &measured, "  ");
        put_wrapped_lines(b, measured.data ? measured.data : "", measured.len);
        ol_buf_free(&measured);
    }
    references_terminal(r, b);
    ol_buf_printf(b, "\nMore: %s%s.md\n", OL_DOCS_URL, r->code);
}

void ol_rule_doc_markdown(const ol_rule *r, ol_buf *b)
{
    ol_buf_printf(b, "# %s %s\n\n", r->code, r->name);
    ol_buf_printf(b, "Severity: %s%s. Fix: %s.\n\n", ol_severity_name(r->severity),
                  r->opt_in ? " (opt-in: runs only when selected by its code)" : "",
                  r->fix ? "available" : "none");
    ol_buf_printf(b, "%s\n\n", r->summary);
    ol_buf_printf(b, "## What it does\n\n%s\n\n", r->what);
    ol_buf_printf(b, "## Why is this bad?\n\n%s\n\n", r->why);
    ol_buf_puts(b, "## Example\n\n```python\n");
    ol_buf_puts(b, r->example);
    ol_buf_puts(b, "\n```\n\n## Use instead\n\n```python\n");
    ol_buf_puts(b, r->instead);
    ol_buf_puts(b, "\n```\n");
    if (r->fix)
        ol_buf_printf(b, "\n## Fix\n\n%s\n", r->fix);
    if (r->fix_safety)
        ol_buf_printf(b, "\n## Fix safety\n\n%s\n", r->fix_safety);
    if (r->accuracy)
        ol_buf_printf(b, "\n## Accuracy\n\n%s\n", r->accuracy);
    measured_markdown(r, b);
    references_markdown(r, b);
}

void ol_rule_doc_plain(const ol_rule *r, ol_buf *b)
{
    ol_buf_printf(b, "%s\n\nWhat it does\n%s\n\nWhy is this bad?\n%s\n\nExample\n%s\n\nUse instead\n%s\n", r->summary,
                  r->what, r->why, r->example, r->instead);
    if (r->fix)
        ol_buf_printf(b, "\nFix\n%s\n", r->fix);
    if (r->fix_safety)
        ol_buf_printf(b, "\nFix safety\n%s\n", r->fix_safety);
    if (r->accuracy)
        ol_buf_printf(b, "\nAccuracy\n%s\n", r->accuracy);
    bool gpu;
    if (has_figures(r, &gpu)) {
        ol_buf_puts(b, "\nMeasured (oomlint probe)\n");
        measured_text(r, b, "");
    }
    references_plain(r, b);
}
