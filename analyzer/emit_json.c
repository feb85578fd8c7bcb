/*
 * emit_json.c - the JSON output: one array, one object per finding, sorted
 * by path, line and column, with the fields DESIGN.md fixes (code, name,
 * severity, path, line, column, end_line, end_column, message, help, url,
 * fix), "cell" for notebooks, and the evidence: each note of the finding
 * with its place, and how confident the finding is (low when it rests on a
 * guess, with what it guesses from). The output is always valid UTF-8: a file
 * name that is not gets U+FFFD in "path" and its exact bytes, percent-
 * encoded, in "raw_path". With --statistics, a count per rule instead, in
 * Ruff's shape.
 */
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "emit.h"
#include "rule.h"

cJSON *ol_json_add_text(cJSON *obj, const char *key, const char *s)
{
    size_t n = strlen(s);
    if (ol_utf8_validate(s, n) == n)
        return cJSON_AddStringToObject(obj, key, s);
    ol_buf b = {0};
    size_t i = 0;
    while (i < n) {
        int len = ol_utf8_seq_len((const unsigned char *)s + i, n - i);
        if (len == 0) {
            ol_buf_puts(&b, "\xEF\xBF\xBD");
            i++;
        } else {
            ol_buf_add(&b, s + i, (size_t)len);
            i += (size_t)len;
        }
    }
    cJSON *item = cJSON_AddStringToObject(obj, key, b.data ? b.data : "");
    ol_buf_free(&b);
    return item;
}

void ol_percent_encode_bytes(ol_buf *b, const char *path)
{
    for (const unsigned char *p = (const unsigned char *)path; *p; p++) {
        if (*p == '%' || *p < 0x20 || *p >= 0x7F)
            ol_buf_printf(b, "%%%02X", *p);
        else
            ol_buf_putc(b, (char)*p);
    }
}

bool ol_format_parse(const char *name, ol_format *out)
{
    static const struct {
        const char *name;
        ol_format format;
    } formats[] = {
        {"full", OL_FMT_TEXT}, {"text", OL_FMT_TEXT},   {"concise", OL_FMT_CONCISE},
        {"json", OL_FMT_JSON}, {"sarif", OL_FMT_SARIF}, {"github", OL_FMT_GITHUB},
        {"gitlab", OL_FMT_GITLAB}, {"junit", OL_FMT_JUNIT},
    };
    for (size_t i = 0; i < OL_ARRAY_LEN(formats); i++)
        if (strcmp(name, formats[i].name) == 0) {
            *out = formats[i].format;
            return true;
        }
    return false;
}

ol_location ol_diag_location(const ol_file_result *r, const ol_diag *d)
{
    ol_location loc = {1, 1, 1, 1, 1, 1, 0, 1, 1};
    if (!r->has_source || d->rule == &ol_rule_oom001)
        return loc;
    const ol_source *src = &r->src;
    ol_pos a = ol_source_pos(src, d->start), b = ol_source_pos(src, d->end);
    loc.line = a.line;
    loc.col = a.col;
    loc.col16 = a.col16;
    loc.end_line = b.line;
    loc.end_col = b.col;
    loc.end_col16 = b.col16;
    loc.file_line = a.line;
    loc.file_end_line = b.line;
    if (src->notebook) {
        const ol_cell *cell = ol_source_cell(src, a.line - 1);
        if (cell) {
            loc.cell = cell->index;
            uint32_t first = cell->first_line;
            loc.line = a.line - first;
            loc.file_line = cell->file_lines[a.line - 1 - first];
            if (b.line - 1 < first + cell->line_count) {
                loc.end_line = b.line - first;
                loc.file_end_line = cell->file_lines[b.line - 1 - first];
            } else {
                /* ends past the cell (a trailing newline): stop at its last line */
                uint32_t len;
                ol_source_line(src, first + cell->line_count - 1, &len);
                loc.end_line = cell->line_count;
                ol_pos e = ol_source_pos(src, src->line_starts[first + cell->line_count - 1] + len);
                loc.end_col = e.col;
                loc.end_col16 = e.col16;
                loc.file_end_line = cell->file_lines[cell->line_count - 1];
            }
            if (loc.file_line == 0)
                loc.file_line = 1;
            if (loc.file_end_line < loc.file_line)
                loc.file_end_line = loc.file_line;
        }
    }
    return loc;
}

ol_location ol_note_location(const ol_file_result *r, const ol_note *n, const char **path)
{
    if (!n->path) {
        *path = r->path;
        ol_diag span = {0};
        span.start = n->start;
        span.end = n->end;
        return ol_diag_location(r, &span);
    }
    *path = n->path;
    ol_location loc = {0};
    loc.line = loc.file_line = n->line;
    loc.end_line = loc.file_end_line = n->end_line;
    loc.col = loc.col16 = n->col;
    loc.end_col = loc.end_col16 = n->end_col;
    return loc;
}

const char *ol_diag_confidence(const ol_diag *d)
{
    return d->guess ? "low" : "high";
}

cJSON *ol_fix_json(const ol_file_result *r, const ol_fix *fix)
{
    if (!fix)
        return cJSON_CreateNull();
    cJSON *obj = cJSON_CreateObject();
    cJSON_AddStringToObject(obj, "applicability", fix->unsafe ? "unsafe" : "safe");
    ol_json_add_text(obj, "message", fix->message);
    if (fix->unsafe && fix->unsafe_reason)
        ol_json_add_text(obj, "unsafe_reason", fix->unsafe_reason);
    cJSON *edits = cJSON_AddArrayToObject(obj, "edits");
    for (size_t i = 0; i < fix->edits.len; i++) {
        const ol_edit *e = &fix->edits.items[i];
        ol_diag tmp = {0};
        tmp.rule = NULL;
        tmp.start = e->start;
        tmp.end = e->end;
        ol_location loc = ol_diag_location(r, &tmp);
        cJSON *edit = cJSON_CreateObject();
        cJSON_AddNumberToObject(edit, "line", loc.line);
        cJSON_AddNumberToObject(edit, "column", loc.col);
        cJSON_AddNumberToObject(edit, "end_line", loc.end_line);
        cJSON_AddNumberToObject(edit, "end_column", loc.end_col);
        ol_json_add_text(edit, "content", e->content);
        if (loc.cell)
            cJSON_AddNumberToObject(edit, "cell", loc.cell);
        cJSON_AddItemToArray(edits, edit);
    }
    return obj;
}

void ol_json_pretty_at(const char *compact, int depth, ol_buf *out)
{
    bool in_string = false, escaped = false;
    for (const char *p = compact; *p; p++) {
        char c = *p;
        if (in_string) {
            ol_buf_putc(out, c);
            if (escaped)
                escaped = false;
            else if (c == '\\')
                escaped = true;
            else if (c == '"')
                in_string = false;
            continue;
        }
        switch (c) {
        case '"':
            in_string = true;
            ol_buf_putc(out, c);
            break;
        case '{':
        case '[':
            ol_buf_putc(out, c);
            if (p[1] == (c == '{' ? '}' : ']')) {
                ol_buf_putc(out, *++p);
                break;
            }
            depth++;
            ol_buf_putc(out, '\n');
            for (int i = 0; i < depth; i++)
                ol_buf_puts(out, "  ");
            break;
        case '}':
        case ']':
            depth--;
            ol_buf_putc(out, '\n');
            for (int i = 0; i < depth; i++)
                ol_buf_puts(out, "  ");
            ol_buf_putc(out, c);
            break;
        case ',':
            ol_buf_putc(out, ',');
            ol_buf_putc(out, '\n');
            for (int i = 0; i < depth; i++)
                ol_buf_puts(out, "  ");
            break;
        case ':':
            ol_buf_puts(out, ": ");
            break;
        default:
            ol_buf_putc(out, c);
        }
    }
}

/* --statistics --format json: what Ruff prints there, one object per rule
 * with findings, most frequent first: code, name, count, and fixable (every
 * finding has a fix that applies in this run). */
static cJSON *statistics_json(const ol_file_result *results, size_t count, const ol_emit_options *o)
{
    size_t *per_rule = ol_xcalloc(ol_rule_count, sizeof(size_t));
    size_t *fixable = ol_xcalloc(ol_rule_count, sizeof(size_t));
    for (size_t f = 0; f < count; f++)
        for (size_t i = 0; i < results[f].diags.len; i++) {
            const ol_diag *d = &results[f].diags.items[i];
            size_t ri = ol_rule_index(d->rule);
            per_rule[ri]++;
            if (d->fix && (!d->fix->unsafe || o->unsafe_fixes))
                fixable[ri]++;
        }
    cJSON *array = cJSON_CreateArray();
    for (;;) {
        size_t best = ol_rule_count;
        for (size_t i = 0; i < ol_rule_count; i++)
            if (per_rule[i] && (best == ol_rule_count || per_rule[i] > per_rule[best]))
                best = i;
        if (best == ol_rule_count)
            break;
        cJSON *obj = cJSON_CreateObject();
        cJSON_AddStringToObject(obj, "code", ol_rules[best]->code);
        cJSON_AddStringToObject(obj, "name", ol_rules[best]->name);
        cJSON_AddNumberToObject(obj, "count", (double)per_rule[best]);
        cJSON_AddBoolToObject(obj, "fixable", fixable[best] == per_rule[best]);
        cJSON_AddNumberToObject(obj, "fixable_count", (double)fixable[best]);
        cJSON_AddItemToArray(array, obj);
        per_rule[best] = 0;
    }
    free(per_rule);
    free(fixable);
    return array;
}

/* A path as "path", and as "raw_path" too when it is not UTF-8. */
static void add_path(cJSON *obj, const char *path)
{
    ol_json_add_text(obj, "path", path);
    if (ol_utf8_validate(path, strlen(path)) != strlen(path)) {
        /* the name as text has U+FFFD in it; these are its bytes */
        ol_buf raw = {0};
        ol_percent_encode_bytes(&raw, path);
        cJSON_AddStringToObject(obj, "raw_path", raw.data);
        ol_buf_free(&raw);
    }
}

static void add_column(cJSON *obj, const char *key, uint32_t col)
{
    if (col)
        cJSON_AddNumberToObject(obj, key, col);
    else
        cJSON_AddNullToObject(obj, key);
}

/* The finding's notes, in order: kind, path, [cell,] line, column, end_line,
 * end_column (columns null where the note names a line only), message. */
static cJSON *evidence_json(const ol_file_result *r, const ol_diag *d)
{
    cJSON *list = cJSON_CreateArray();
    for (size_t i = 0; i < d->notes.len; i++) {
        const ol_note *n = &d->notes.items[i];
        const char *path;
        ol_location loc = ol_note_location(r, n, &path);
        cJSON *obj = cJSON_CreateObject();
        cJSON_AddStringToObject(obj, "kind", ol_note_kind_name(n->kind));
        add_path(obj, path);
        if (loc.cell)
            cJSON_AddNumberToObject(obj, "cell", loc.cell);
        cJSON_AddNumberToObject(obj, "line", loc.line);
        add_column(obj, "column", loc.col);
        cJSON_AddNumberToObject(obj, "end_line", loc.end_line);
        add_column(obj, "end_column", loc.end_col);
        ol_json_add_text(obj, "message", n->message);
        cJSON_AddItemToArray(list, obj);
    }
    return list;
}

/* One finding as a JSON object. */
static cJSON *finding_json(const ol_file_result *r, const ol_diag *d)
{
    ol_location loc = ol_diag_location(r, d);
    cJSON *obj = cJSON_CreateObject();
    cJSON_AddStringToObject(obj, "code", d->rule->code);
    cJSON_AddStringToObject(obj, "name", d->rule->name);
    cJSON_AddStringToObject(obj, "severity", ol_severity_name(d->rule->severity));
    add_path(obj, r->path);
    if (loc.cell)
        cJSON_AddNumberToObject(obj, "cell", loc.cell);
    cJSON_AddNumberToObject(obj, "line", loc.line);
    cJSON_AddNumberToObject(obj, "column", loc.col);
    cJSON_AddNumberToObject(obj, "end_line", loc.end_line);
    cJSON_AddNumberToObject(obj, "end_column", loc.end_col);
    ol_json_add_text(obj, "message", d->message);
    if (d->help)
        ol_json_add_text(obj, "help", d->help);
    else
        cJSON_AddNullToObject(obj, "help");
    char *url = ol_xasprintf("%s%s.md", OL_DOCS_URL, d->rule->code);
    cJSON_AddStringToObject(obj, "url", url);
    free(url);
    cJSON_AddItemToObject(obj, "fix", ol_fix_json(r, d->fix));
    cJSON_AddItemToObject(obj, "evidence", evidence_json(r, d));
    cJSON_AddStringToObject(obj, "confidence", ol_diag_confidence(d));
    if (d->guess)
        ol_json_add_text(obj, "guessed_from", d->guess);
    return obj;
}

void ol_json_items(ol_buf *b, cJSON *item, int depth)
{
    char *text = cJSON_PrintUnformatted(item);
    if (!text)
        ol_oom();
    ol_json_pretty_at(text, depth, b);
    cJSON_free(text);
    cJSON_Delete(item);
}

void ol_json_print(FILE *out, cJSON *item)
{
    ol_buf pretty = {0};
    ol_json_items(&pretty, item, 0);
    ol_buf_putc(&pretty, '\n');
    fwrite(pretty.data, 1, pretty.len, out);
    ol_buf_free(&pretty);
}

void ol_emit_json_file(ol_buf *b, const ol_file_result *r)
{
    for (size_t i = 0; i < r->diags.len; i++) {
        if (i > 0)
            ol_buf_puts(b, ",\n  ");
        ol_json_items(b, finding_json(r, &r->diags.items[i]), 1);
    }
}

void ol_emit_json_end(FILE *out, const ol_file_result *results, size_t count, const ol_emit_options *o,
                      size_t parts)
{
    if (!o->statistics) {
        fputs(parts ? "\n]\n" : "[]\n", out);
        return;
    }
    ol_json_print(out, statistics_json(results, count, o));
}
