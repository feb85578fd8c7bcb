/*
 * emit_text.c - the human output: a header line per finding
 * (`path:line:col: CODE [severity] message`), a code frame with a caret
 * underline, a `help:` line saying what to write instead, a `note:` line
 * for each piece of evidence (with its place, and its line when it is in the
 * same file), and a summary.
 * Columns in the frame account for tabs and double-width characters so the
 * caret lands under the code it means. File names and messages are printed
 * through ol_escape_display: a name holding an escape sequence or a newline
 * cannot recolour the terminal or forge an output line. The concise form is
 * the header line alone, as Ruff prints it; --statistics prints a count per
 * rule instead.
 */
#include <stdlib.h>
#include <string.h>

#include "emit.h"
#include "rule.h"

#define C_RESET "\033[0m"
#define C_BOLD "\033[1m"
#define C_RED "\033[31m"
#define C_YELLOW "\033[33m"
#define C_CYAN "\033[36m"
#define C_BLUE "\033[34m"
#define C_GREEN "\033[32m"

typedef struct style {
    bool on;
} style;

static const char *sev_color(ol_severity s)
{
    return s == OL_SEV_ERROR ? C_RED : s == OL_SEV_WARNING ? C_YELLOW : C_CYAN;
}

void ol_escape_display(ol_buf *out, const char *s, bool escape_tab)
{
    size_t n = strlen(s);
    size_t i = 0;
    while (i < n) {
        const unsigned char *u = (const unsigned char *)s + i;
        int len = ol_utf8_seq_len(u, n - i);
        bool c1 = len == 2 && u[0] == 0xC2 && u[1] >= 0x80 && u[1] <= 0x9F;
        if (len == 0 || c1 || u[0] == 0x7F || (u[0] < 0x20 && (u[0] != '\t' || escape_tab))) {
            int count = len > 0 ? len : 1;
            for (int k = 0; k < count; k++)
                ol_buf_printf(out, "\\x%02x", u[k]);
            i += (size_t)count;
            continue;
        }
        ol_buf_add(out, s + i, (size_t)len);
        i += (size_t)len;
    }
}

/* fputs of s through ol_escape_display. */
static void put_escaped(FILE *out, const char *s, bool escape_tab)
{
    ol_buf b = {0};
    ol_escape_display(&b, s, escape_tab);
    fputs(b.data ? b.data : "", out);
    ol_buf_free(&b);
}

/* After the help line's advice: why the fix is unsafe, when it is. */
static void unsafe_note(FILE *out, const ol_diag *d)
{
    if (!d->fix || !d->fix->unsafe || !d->fix->unsafe_reason)
        return;
    fputs(" (unsafe fix: ", out);
    put_escaped(out, d->fix->unsafe_reason, false);
    fputc(')', out);
}

static void put(FILE *out, const style *st, const char *color, const char *text)
{
    if (st->on)
        fprintf(out, "%s%s%s", color, text, C_RESET);
    else
        fputs(text, out);
}

/* Display width of one code point (0, 1 or 2 columns). */
static int cp_width(uint32_t cp)
{
    if (cp == 0)
        return 0;
    if ((cp >= 0x0300 && cp <= 0x036F) || (cp >= 0x200B && cp <= 0x200F) || cp == 0xFEFF)
        return 0;
    if ((cp >= 0x1100 && cp <= 0x115F) || (cp >= 0x2E80 && cp <= 0xA4CF) || (cp >= 0xAC00 && cp <= 0xD7A3) ||
        (cp >= 0xF900 && cp <= 0xFAFF) || (cp >= 0xFE30 && cp <= 0xFE4F) || (cp >= 0xFF00 && cp <= 0xFF60) ||
        (cp >= 0xFFE0 && cp <= 0xFFE6) || (cp >= 0x1F300 && cp <= 0x1FAFF) || (cp >= 0x20000 && cp <= 0x3FFFD))
        return 2;
    return 1;
}

static uint32_t decode(const char *s, uint32_t len, uint32_t *i)
{
    const unsigned char *u = (const unsigned char *)s;
    int n = ol_utf8_seq_len(u + *i, len - *i);
    uint32_t cp;
    if (n <= 1) {
        cp = u[*i];
        (*i)++;
        return cp;
    }
    if (n == 2)
        cp = (uint32_t)(u[*i] & 0x1F) << 6 | (u[*i + 1] & 0x3F);
    else if (n == 3)
        cp = (uint32_t)(u[*i] & 0x0F) << 12 | (uint32_t)(u[*i + 1] & 0x3F) << 6 | (u[*i + 2] & 0x3F);
    else
        cp = (uint32_t)(u[*i] & 0x07) << 18 | (uint32_t)(u[*i + 1] & 0x3F) << 12 | (uint32_t)(u[*i + 2] & 0x3F) << 6 |
             (u[*i + 3] & 0x3F);
    *i += (uint32_t)n;
    return cp;
}

/* Writes a source line with tabs expanded; returns display columns of the
 * byte offsets from and to (relative to the line) through *c_from / *c_to. */
static void render_line(ol_buf *b, const char *s, uint32_t len, uint32_t from, uint32_t to, uint32_t *c_from,
                        uint32_t *c_to)
{
    uint32_t col = 0, i = 0;
    *c_from = *c_to = 0;
    bool from_set = false, to_set = false;
    while (i < len) {
        if (!from_set && i >= from) {
            *c_from = col;
            from_set = true;
        }
        if (!to_set && i >= to) {
            *c_to = col;
            to_set = true;
        }
        if (s[i] == '\t') {
            uint32_t w = 4 - col % 4;
            for (uint32_t k = 0; k < w; k++)
                ol_buf_putc(b, ' ');
            col += w;
            i++;
            continue;
        }
        uint32_t start = i;
        uint32_t cp = decode(s, len, &i);
        if (cp < 0x20 || cp == 0x7F) {
            ol_buf_putc(b, ' ');
            col++;
            continue;
        }
        ol_buf_add(b, s + start, i - start);
        col += (uint32_t)cp_width(cp);
    }
    if (!from_set)
        *c_from = col;
    if (!to_set)
        *c_to = col;
}

/* A line longer than this many bytes is shown as a window around the
 * finding, with "..." for what is cut: a 10 MB line (minified or generated
 * code) must not become a 10 MB code frame. */
#define FRAME_MAX_BYTES 240
#define FRAME_BEFORE 80

static uint32_t utf8_back(const char *s, uint32_t i)
{
    while (i > 0 && ((unsigned char)s[i] & 0xC0) == 0x80)
        i--;
    return i;
}

/* The part [*ws, *we) of a line of len bytes to show for a finding over
 * [from, to) in it. */
static void frame_window(const char *s, uint32_t len, uint32_t from, uint32_t *ws, uint32_t *we)
{
    *ws = 0;
    *we = len;
    if (len <= FRAME_MAX_BYTES)
        return;
    uint32_t start = from > FRAME_BEFORE ? from - FRAME_BEFORE : 0;
    if (start + FRAME_MAX_BYTES > len)
        start = len - FRAME_MAX_BYTES;
    *ws = utf8_back(s, start);
    uint32_t end = *ws + FRAME_MAX_BYTES;
    *we = end >= len ? len : utf8_back(s, end);
}

static void frame(FILE *out, const style *st, const ol_file_result *r, const ol_diag *d, ol_severity sev)
{
    const ol_source *src = &r->src;
    uint32_t first = ol_source_line_index(src, d->start);
    uint32_t last = ol_source_line_index(src, d->end > d->start ? d->end - 1 : d->start);
    if (last < first)
        last = first;
    bool truncated = false;
    if (last - first >= 4) {
        last = first + 3;
        truncated = true;
    }
    /* one line of context above, within the same notebook cell */
    uint32_t context = first;
    if (first > 0) {
        uint32_t len;
        ol_source_line(src, first - 1, &len);
        const ol_cell *a = ol_source_cell(src, first - 1), *b = ol_source_cell(src, first);
        if (len > 0 && a == b)
            context = first - 1;
    }
    uint32_t cell_base = 0;
    if (src->notebook) {
        const ol_cell *c = ol_source_cell(src, first);
        if (c)
            cell_base = c->first_line;
    }
    char num[16];
    snprintf(num, sizeof num, "%u", last + 1 - cell_base);
    int gutter = (int)strlen(num);
    ol_buf line = {0};
    fprintf(out, "%*s ", gutter, "");
    put(out, st, C_BLUE, "|");
    fputc('\n', out);
    for (uint32_t l = context; l <= last; l++) {
        uint32_t len;
        const char *s = ol_source_line(src, l, &len);
        uint32_t line_start = src->line_starts[l];
        uint32_t from = d->start > line_start ? d->start - line_start : 0;
        uint32_t to = d->end > line_start ? d->end - line_start : 0;
        if (to > len)
            to = len;
        if (from > len)
            from = len;
        /* a line the finding continues onto is underlined from its code,
         * not its indentation; a blank one not at all */
        bool blank = false;
        if (l > first) {
            while (from < to && (s[from] == ' ' || s[from] == '\t'))
                from++;
            blank = from == to;
        }
        ol_buf_clear(&line);
        uint32_t c_from, c_to, ws, we;
        frame_window(s, len, from, &ws, &we);
        if (ws > 0)
            ol_buf_puts(&line, "...");
        uint32_t prefix = (uint32_t)line.len;
        from = from > ws ? from - ws : 0;
        to = to > ws ? to - ws : 0;
        if (to > we - ws)
            to = we - ws;
        if (from > to)
            from = to;
        render_line(&line, s + ws, we - ws, from, to, &c_from, &c_to);
        c_from += prefix;
        c_to += prefix;
        if (we < len)
            ol_buf_puts(&line, "...");
        snprintf(num, sizeof num, "%u", l + 1 - cell_base);
        if (st->on)
            fprintf(out, "%s%*s |%s %s\n", C_BLUE, gutter, num, C_RESET, line.data ? line.data : "");
        else
            fprintf(out, "%*s | %s\n", gutter, num, line.data ? line.data : "");
        if (l < first || blank)
            continue;
        uint32_t width = c_to > c_from ? c_to - c_from : 1;
        fprintf(out, "%*s ", gutter, "");
        put(out, st, C_BLUE, "|");
        fputc(' ', out);
        for (uint32_t k = 0; k < c_from; k++)
            fputc(' ', out);
        if (st->on)
            fputs(sev_color(sev), out);
        for (uint32_t k = 0; k < width; k++)
            fputc('^', out);
        if (st->on)
            fputs(C_RESET, out);
        fputc('\n', out);
    }
    if (truncated) {
        fprintf(out, "%*s ", gutter, "");
        put(out, st, C_BLUE, "|");
        fputs(" ...\n", out);
    }
    ol_buf_free(&line);
    if (d->help || d->fix) {
        fprintf(out, "%*s ", gutter, "");
        put(out, st, C_BLUE, "=");
        fputc(' ', out);
        put(out, st, C_BOLD, "help:");
        fputc(' ', out);
        put_escaped(out, d->help ? d->help : d->fix->message, false);
        unsafe_note(out, d);
        fputc('\n', out);
    }
}

static void header(FILE *out, const style *st, const ol_file_result *r, const ol_diag *d)
{
    ol_location loc = ol_diag_location(r, d);
    char pos[96];
    if (loc.cell)
        snprintf(pos, sizeof pos, ":cell %u:%u:%u:", loc.cell, loc.line, loc.col);
    else
        snprintf(pos, sizeof pos, ":%u:%u:", loc.line, loc.col);
    ol_buf path = {0};
    ol_escape_display(&path, r->path, true);
    put(out, st, C_BOLD, path.data ? path.data : "");
    ol_buf_free(&path);
    fputs(pos, out);
    fputc(' ', out);
    const ol_rule *rule = d->rule;
    if (st->on)
        fprintf(out, "%s%s%s%s", C_BOLD, sev_color(rule->severity), rule->code, C_RESET);
    else
        fputs(rule->code, out);
    fprintf(out, " [%s] ", ol_severity_name(rule->severity));
    put_escaped(out, d->message, false);
    if (d->fix) {
        fputc(' ', out);
        put(out, st, C_GREEN, d->fix->unsafe ? "(unsafe fix available)" : "(fix available)");
    }
    fputc('\n', out);
}

/* ---- the evidence: notes under a finding ---------------------------------------- */

static int digits(uint32_t n)
{
    int w = 1;
    while (n >= 10) {
        n /= 10;
        w++;
    }
    return w;
}

/* The width of the line numbers frame() draws for d (the notes' `=` lines
 * line up with its `= help:`): the last line it shows, at most four lines
 * from the first, counted in the cell for notebooks. */
static int frame_gutter(const ol_file_result *r, const ol_diag *d)
{
    if (!r->has_source || d->rule == &ol_rule_oom001)
        return 1;
    const ol_source *src = &r->src;
    uint32_t first = ol_source_line_index(src, d->start);
    uint32_t last = ol_source_line_index(src, d->end > d->start ? d->end - 1 : d->start);
    if (last < first)
        last = first;
    if (last - first >= 4)
        last = first + 3;
    const ol_cell *c = src->notebook ? ol_source_cell(src, first) : NULL;
    return digits(last + 1 - (c ? c->first_line : 0));
}

/* A note in the finding's own file, placed there (an own-file note of a
 * file with no text, OOM001's, has no place to show). */
static bool note_in_text(const ol_file_result *r, const ol_diag *d, const ol_note *n)
{
    return !n->path && r->has_source && d->rule != &ol_rule_oom001;
}

/* The one-line frame of a note in the finding's own file: its first line,
 * underlined with `-` from the note's start to its end or the line's. */
static void note_frame(FILE *out, const style *st, const ol_file_result *r, const ol_note *n, int indent, int width,
                       uint32_t number)
{
    const ol_source *src = &r->src;
    uint32_t l = ol_source_line_index(src, n->start);
    uint32_t len;
    const char *s = ol_source_line(src, l, &len);
    uint32_t line_start = src->line_starts[l];
    uint32_t from = n->start > line_start ? n->start - line_start : 0;
    uint32_t to = n->end > line_start ? n->end - line_start : 0;
    if (to > len)
        to = len;
    if (from > to)
        from = to;
    uint32_t ws, we, c_from, c_to;
    frame_window(s, len, from, &ws, &we);
    ol_buf line = {0};
    if (ws > 0)
        ol_buf_puts(&line, "...");
    uint32_t prefix = (uint32_t)line.len;
    from = from > ws ? from - ws : 0;
    to = to > ws ? to - ws : 0;
    if (to > we - ws)
        to = we - ws;
    if (from > to)
        from = to;
    render_line(&line, s + ws, we - ws, from, to, &c_from, &c_to);
    if (we < len)
        ol_buf_puts(&line, "...");
    c_from += prefix;
    c_to += prefix;
    char num[16];
    snprintf(num, sizeof num, "%u", number);
    fprintf(out, "%*s", indent, "");
    if (st->on)
        fprintf(out, "%s%*s |%s %s\n", C_BLUE, width, num, C_RESET, line.data ? line.data : "");
    else
        fprintf(out, "%*s | %s\n", width, num, line.data ? line.data : "");
    fprintf(out, "%*s%*s ", indent, "", width, "");
    put(out, st, C_BLUE, "|");
    fputc(' ', out);
    for (uint32_t k = 0; k < c_from; k++)
        fputc(' ', out);
    if (st->on)
        fputs(C_BLUE, out);
    for (uint32_t k = 0, w = c_to > c_from ? c_to - c_from : 1; k < w; k++)
        fputc('-', out);
    if (st->on)
        fputs(C_RESET, out);
    fputc('\n', out);
    ol_buf_free(&line);
}

/* Under the finding's frame and help, one `= note: MESSAGE` per note with
 * its place (`--> path:line:col`) and, in the finding's own file, its line
 * underlined, as rustc prints a secondary span; then whether the finding
 * rests on a guess. */
static void notes(FILE *out, const style *st, const ol_file_result *r, const ol_diag *d)
{
    if (!d->notes.len && !d->guess)
        return;
    int gutter = frame_gutter(r, d);
    int indent = gutter + 3; /* under the text after `= ` */
    int width = 1;
    for (size_t i = 0; i < d->notes.len; i++) {
        const char *path;
        ol_location loc = ol_note_location(r, &d->notes.items[i], &path);
        if (note_in_text(r, d, &d->notes.items[i]) && digits(loc.line) > width)
            width = digits(loc.line);
    }
    ol_buf place = {0};
    for (size_t i = 0; i < d->notes.len; i++) {
        const ol_note *n = &d->notes.items[i];
        const char *path;
        ol_location loc = ol_note_location(r, n, &path);
        fprintf(out, "%*s ", gutter, "");
        put(out, st, C_BLUE, "=");
        fputc(' ', out);
        put(out, st, C_BOLD, "note:");
        fputc(' ', out);
        put_escaped(out, n->message, false);
        fputc('\n', out);
        bool own = note_in_text(r, d, n);
        if (!own && !n->path)
            continue;
        ol_buf_clear(&place);
        ol_escape_display(&place, path, true);
        if (loc.cell)
            ol_buf_printf(&place, ":cell %u:%u:%u", loc.cell, loc.line, loc.col);
        else if (loc.col)
            ol_buf_printf(&place, ":%u:%u", loc.line, loc.col);
        else
            ol_buf_printf(&place, ":%u", loc.line);
        fprintf(out, "%*s", indent + width, "");
        put(out, st, C_BLUE, "-->");
        fprintf(out, " %s\n", place.data);
        if (own)
            note_frame(out, st, r, n, indent, width, loc.line);
    }
    ol_buf_free(&place);
    if (d->guess) {
        fprintf(out, "%*s ", gutter, "");
        put(out, st, C_BLUE, "=");
        fputc(' ', out);
        put(out, st, C_BOLD, "note:");
        fputs(" this finding rests on a guess (", out);
        put_escaped(out, d->guess, false);
        fputs(")\n", out);
    }
}

/* Does this finding's fix apply in this run (safe, or unsafe with --unsafe-fixes)? */
static bool fix_applies(const ol_diag *d, const ol_emit_options *o)
{
    return d->fix && (!d->fix->unsafe || o->unsafe_fixes);
}

/* --statistics, in the columns Ruff (and Flake8) print: count, code, and
 * `[*]` before the name when every finding of the rule has a fix that
 * applies (safe ones; unsafe ones too with --unsafe-fixes), `[~]` when some
 * have, `[ ]` when none has, as Ruff marks them; the marker column is left
 * out when nothing is fixable. Returns whether a `[~]` was printed, which
 * the summary then explains (Ruff leaves it unexplained). */
static bool statistics(FILE *out, const style *st, const ol_file_result *results, size_t count,
                       const ol_emit_options *o)
{
    size_t *per_rule = ol_xcalloc(ol_rule_count, sizeof(size_t));
    size_t *fixable = ol_xcalloc(ol_rule_count, sizeof(size_t));
    for (size_t f = 0; f < count; f++)
        for (size_t i = 0; i < results[f].diags.len; i++) {
            size_t ri = ol_rule_index(results[f].diags.items[i].rule);
            per_rule[ri]++;
            if (fix_applies(&results[f].diags.items[i], o))
                fixable[ri]++;
        }
    /* most frequent first, then by code */
    size_t *order = ol_xcalloc(ol_rule_count, sizeof(size_t));
    for (size_t i = 0; i < ol_rule_count; i++)
        order[i] = i;
    for (size_t i = 1; i < ol_rule_count; i++)
        for (size_t j = i; j > 0 && per_rule[order[j]] > per_rule[order[j - 1]]; j--) {
            size_t tmp = order[j];
            order[j] = order[j - 1];
            order[j - 1] = tmp;
        }
    int count_width = 1, code_width = 1;
    bool any_fixable = false, some_fixable = false;
    for (size_t i = 0; i < ol_rule_count; i++) {
        if (!per_rule[i])
            continue;
        char num[32];
        int w = snprintf(num, sizeof num, "%zu", per_rule[i]);
        if (w > count_width)
            count_width = w;
        if ((int)strlen(ol_rules[i]->code) > code_width)
            code_width = (int)strlen(ol_rules[i]->code);
        if (fixable[i] > 0)
            any_fixable = true;
    }
    for (size_t k = 0; k < ol_rule_count; k++) {
        size_t i = order[k];
        if (!per_rule[i])
            continue;
        const ol_rule *r = ol_rules[i];
        char num[32];
        snprintf(num, sizeof num, "%zu", per_rule[i]);
        fprintf(out, "%*s", count_width - (int)strlen(num), "");
        put(out, st, C_BOLD, num);
        fputc('\t', out);
        if (st->on)
            fprintf(out, "%s%s%-*s%s", C_BOLD, sev_color(r->severity), code_width, r->code, C_RESET);
        else
            fprintf(out, "%-*s", code_width, r->code);
        fputc('\t', out);
        if (any_fixable) {
            if (fixable[i] > 0) {
                fputc('[', out);
                put(out, st, C_CYAN, fixable[i] == per_rule[i] ? "*" : "~");
                fputs("] ", out);
                some_fixable |= fixable[i] < per_rule[i];
            } else {
                fputs("[ ] ", out);
            }
        }
        fprintf(out, "%s\n", r->name);
    }
    free(order);
    free(per_rule);
    free(fixable);
    return some_fixable;
}

/* --output-format concise: `path:line:col: CODE [*] message`, one line per
 * finding, `[*]` marking a fix that --fix would apply (as Ruff prints it). */
static void concise_line(FILE *out, const style *st, const ol_file_result *r, const ol_diag *d,
                         const ol_emit_options *o)
{
    ol_location loc = ol_diag_location(r, d);
    ol_buf path = {0};
    ol_escape_display(&path, r->path, true);
    put(out, st, C_BOLD, path.data ? path.data : "");
    ol_buf_free(&path);
    if (loc.cell)
        fprintf(out, ":cell %u:%u:%u: ", loc.cell, loc.line, loc.col);
    else
        fprintf(out, ":%u:%u: ", loc.line, loc.col);
    if (st->on)
        fprintf(out, "%s%s%s%s", C_BOLD, sev_color(d->rule->severity), d->rule->code, C_RESET);
    else
        fputs(d->rule->code, out);
    if (fix_applies(d, o)) {
        fputs(" [", out);
        put(out, st, C_CYAN, "*");
        fputc(']', out);
    }
    fputc(' ', out);
    put_escaped(out, d->message, true);
    fputc('\n', out);
}

/* One file's findings: a header, code frame and help each, or a line each
 * in the concise form (nothing with --statistics). */
void ol_emit_text_file(FILE *out, const ol_file_result *r, const ol_emit_options *o)
{
    style st = {o->color};
    if (o->statistics)
        return;
    for (size_t i = 0; i < r->diags.len; i++) {
        const ol_diag *d = &r->diags.items[i];
        if (o->format == OL_FMT_CONCISE) {
            concise_line(out, &st, r, d, o);
            continue;
        }
        header(out, &st, r, d);
        if (r->has_source && d->rule != &ol_rule_oom001)
            frame(out, &st, r, d, d->rule->severity);
        else if (d->help) {
            fputs("  = ", out);
            put(out, &st, C_BOLD, "help:");
            fputc(' ', out);
            put_escaped(out, d->help, false);
            unsafe_note(out, d);
            fputc('\n', out);
        }
        notes(out, &st, r, d);
        fputc('\n', out);
    }
}

/* "fix" or "fixes" */
static const char *es(size_t n)
{
    return n == 1 ? "" : "es";
}

static const char *plural(size_t n)
{
    return n == 1 ? "" : "s";
}

/* The summary follows Ruff's: "Found 13 findings (9 fixed, 4 remaining).",
 * then what can be fixed ("[*] 4 fixable with the `--fix` option (2 hidden
 * fixes can be enabled with the `--unsafe-fixes` option).", or "No fixes
 * available (...)" when only unsafe ones are), then how many findings the
 * default per-file-ignores kept out of test code. */
void ol_emit_text_end(FILE *out, const ol_file_result *results, size_t count, const ol_emit_options *o)
{
    style st = {o->color};
    size_t remaining = 0, applicable = 0, hidden_unsafe = 0, files = 0, fixed = 0, hidden = 0, host_only = 0;
    for (size_t f = 0; f < count; f++) {
        const ol_file_result *r = &results[f];
        if (r->read_ok)
            files++;
        fixed += r->fixed;
        hidden += r->hidden;
        host_only += r->host_only;
        for (size_t i = 0; i < r->diags.len; i++) {
            const ol_diag *d = &r->diags.items[i];
            remaining++;
            if (d->fix && (!d->fix->unsafe || o->unsafe_fixes))
                applicable++;
            else if (d->fix)
                hidden_unsafe++;
        }
    }
    bool some_fixable = o->statistics && statistics(out, &st, results, count, o);
    if (o->quiet)
        return;
    if (some_fixable) {
        fputc('[', out);
        put(out, &st, C_CYAN, "~");
        fputs("] marks a rule only some of whose findings `--fix` can fix.\n", out);
    }
    size_t total = fixed + remaining;
    if (fixed > 0) {
        fprintf(out, "Found %zu finding%s (%zu fixed, %zu remaining).\n", total, plural(total), fixed, remaining);
    } else if (remaining > 0) {
        fprintf(out, "Found %zu finding%s.\n", remaining, plural(remaining));
    } else {
        if (files > 0)
            put(out, &st, C_GREEN, "All checks passed!");
        else
            fputs("No files were analyzed.", out);
        fputc('\n', out);
    }
    if (applicable > 0 && hidden_unsafe > 0) {
        fputc('[', out);
        put(out, &st, C_CYAN, "*");
        fprintf(out, "] %zu fixable with the `--fix` option (%zu hidden fix%s can be enabled with the "
                     "`--unsafe-fixes` option).\n",
                applicable, hidden_unsafe, es(hidden_unsafe));
    } else if (applicable > 0) {
        fputc('[', out);
        put(out, &st, C_CYAN, "*");
        fprintf(out, "] %zu fixable with the `--fix` option.\n", applicable);
    } else if (hidden_unsafe > 0) {
        fprintf(out, "No fixes available (%zu hidden fix%s can be enabled with the `--unsafe-fixes` option).\n",
                hidden_unsafe, es(hidden_unsafe));
    }
    if (hidden > 0)
        fprintf(out, "%zu finding%s in test code not shown: the default per-file-ignores leave training rules out "
                     "of tests (see `oomlint --show-settings FILE`).\n",
                hidden, plural(hidden));
    if (host_only > 0)
        fprintf(out, "%zu finding%s on code that never runs on a GPU not shown: select a rule by its code to see "
                     "them (`--extend-select OOM201`).\n",
                host_only, plural(host_only));
}
