/*
 * server_actions.c - code actions and hovers.
 *
 * Code actions, each a WorkspaceEdit with `changes` (clients older than
 * `documentChanges` understand it):
 *   - a quickfix per finding with a fix, titled with the fix's message;
 *     unsafe fixes say "(unsafe)" and are never the preferred action;
 *   - "Disable OOMxxx for this line", which writes `# noqa: OOMxxx` at the
 *     end of the finding's first line (the line suppressions are matched
 *     against), or adds the code to a noqa comment already there. Lines
 *     that end inside a string or with a backslash get no such action: a
 *     comment there would change the code;
 *   - `source.fixAll.oomlint`: what `oomlint --fix` would do to the buffer
 *     (safe fixes in rounds, and unsafe ones too when the unsafeFixes
 *     setting is on), as one edit per document spanning what changed.
 * A notebook's fixes map edit by edit onto its cells; an edit that would
 * cross a cell boundary or touch a blanked IPython line is not offered.
 *
 * Hover over a finding shows its message and help, its evidence (a
 * `note:` line per note, with its place, for every client, whether or not it
 * shows relatedInformation) and whether it rests on a guess, then the rule's
 * page (docs.c renders it, as for `oomlint rule CODE --markdown`).
 */
#include "server.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "docs.h"
#include "fix.h"
#include "rule.h"
#include "syntax.h"

static bool kind_wanted(const cJSON *only, const char *kind)
{
    if (!cJSON_IsArray(only))
        return true;
    const cJSON *e;
    cJSON_ArrayForEach(e, only)
    {
        if (!cJSON_IsString(e))
            continue;
        size_t n = strlen(e->valuestring);
        if (strncmp(kind, e->valuestring, n) == 0 && (kind[n] == '\0' || kind[n] == '.'))
            return true;
    }
    return false;
}

static const char *uri_param(const cJSON *params)
{
    const cJSON *td = cJSON_GetObjectItemCaseSensitive(params, "textDocument");
    const cJSON *uri = cJSON_GetObjectItemCaseSensitive(td, "uri");
    return cJSON_IsString(uri) ? uri->valuestring : NULL;
}

/* ---- edits ------------------------------------------------------------------------ */

/* Adds a TextEdit for doc to a WorkspaceEdit's `changes`. */
static void add_text_edit(ol_server *s, cJSON *changes, const ol_doc *doc, uint32_t x, uint32_t y, const char *text,
                          size_t len)
{
    cJSON *list = cJSON_GetObjectItemCaseSensitive(changes, doc->uri);
    if (!list)
        list = cJSON_AddArrayToObject(changes, doc->uri);
    cJSON *e = cJSON_CreateObject();
    cJSON_AddItemToObject(e, "range", ol_lsp_range_json(ol_doc_position(doc, x, s->enc), ol_doc_position(doc, y, s->enc)));
    char *t = ol_xstrndup(text, len);
    cJSON_AddStringToObject(e, "newText", t);
    free(t);
    cJSON_AddItemToArray(list, e);
}

/* Maps [start, end) of the unit's text onto one document; false when it
 * crosses a cell boundary or covers text the notebook joining blanked. */
static bool map_span(ol_server *s, const ol_unit *u, uint32_t start, uint32_t end, ol_doc **doc, uint32_t *x,
                     uint32_t *y)
{
    ol_doc *da, *db;
    if (!ol_unit_place(s, u, start, false, &da, x) || !ol_unit_place(s, u, end, end > start, &db, y))
        return false;
    if (da != db || *y < *x || *y - *x != end - start)
        return false;
    if (end > u->result.src.len || memcmp(u->result.src.text + start, da->text.data + *x, end - start) != 0)
        return false;
    *doc = da;
    return true;
}

static cJSON *fix_edit(ol_server *s, const ol_unit *u, const ol_fix *fix)
{
    cJSON *edit = cJSON_CreateObject();
    cJSON *changes = cJSON_AddObjectToObject(edit, "changes");
    for (size_t i = 0; i < fix->edits.len; i++) {
        const ol_edit *e = &fix->edits.items[i];
        ol_doc *doc;
        uint32_t x, y;
        if (!map_span(s, u, e->start, e->end, &doc, &x, &y)) {
            cJSON_Delete(edit);
            return NULL;
        }
        add_text_edit(s, changes, doc, x, y, e->content, strlen(e->content));
    }
    return edit;
}

/* What the noqa actions of one request read: the unit's text parsed once
 * (not once per finding), and its strings that span a line break, in order
 * of their start with the furthest end so far, to tell whether a line ends
 * inside one. */
typedef struct noqa_ctx {
    bool parsed;
    ol_tree tree;
    OL_VEC(uint32_t) str_start;
    OL_VEC(uint32_t) str_reach; /* the largest end of the strings up to this one */
} noqa_ctx;

static void noqa_ctx_free(noqa_ctx *c)
{
    if (c->parsed)
        ol_tree_free(&c->tree);
    ol_vec_free(&c->str_start);
    ol_vec_free(&c->str_reach);
}

static int cmp_span_start(const void *a, const void *b)
{
    const uint32_t *x = a, *y = b;
    return *x < *y ? -1 : *x > *y;
}

static void noqa_ctx_parse(ol_server *s, const ol_source *src, noqa_ctx *c)
{
    if (c->parsed)
        return;
    c->parsed = true;
    ol_parse(&s->linter.parser, src, &c->tree);
    /* pairs (start, end) of multi-line strings, sorted by start */
    OL_VEC(uint32_t) pairs = {0};
    for (size_t i = 0; i < c->tree.nodes.len; i++) {
        const ol_node *nd = &c->tree.nodes.items[i];
        if (nd->kind == OL_N_string && memchr(src->text + nd->start, '\n', nd->end - nd->start)) {
            ol_vec_push(&pairs, nd->start);
            ol_vec_push(&pairs, nd->end);
        }
    }
    ol_sort(pairs.items, pairs.len / 2, 2 * sizeof(uint32_t), cmp_span_start);
    uint32_t reach = 0;
    for (size_t i = 0; i + 1 < pairs.len; i += 2) {
        reach = pairs.items[i + 1] > reach ? pairs.items[i + 1] : reach;
        ol_vec_push(&c->str_start, pairs.items[i]);
        ol_vec_push(&c->str_reach, reach);
    }
    ol_vec_free(&pairs);
}

/* Does a string run on past byte le (it starts before and ends after)? */
static bool inside_string(const noqa_ctx *c, uint32_t le)
{
    size_t k = ol_lower_bound_u32(c->str_start.items, c->str_start.len, le); /* first starting at or after le */
    return k > 0 && c->str_reach.items[k - 1] > le;
}

/* Where and what to write to suppress code on the line of byte `at`:
 * returns false when no comment can go there. */
static bool noqa_insertion(ol_server *s, noqa_ctx *ctx, const ol_source *src, uint32_t at, const char *code,
                           uint32_t *pos, ol_buf *text)
{
    uint32_t line = ol_source_line_index(src, at), len;
    const char *ltext = ol_source_line(src, line, &len);
    uint32_t ls = (uint32_t)(ltext - src->text), le = ls + len;
    noqa_ctx_parse(s, src, ctx);
    const ol_tree *t = &ctx->tree;
    bool ok = !t->timed_out;
    /* the last comment starting on the line (comments are in order) */
    const ol_span *comment = NULL;
    size_t lo = 0, hi = t->comments.len;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (t->comments.items[mid].start < le)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (ok && lo > 0 && t->comments.items[lo - 1].start >= ls)
        comment = &t->comments.items[lo - 1];
    if (ok && comment) {
        const char *c = src->text + comment->start;
        size_t n = comment->end - comment->start;
        const char *end = c + n;
        const char *hit = ol_find_ci(c, n, "noqa");
        while (hit) {
            const char *p = hit;
            while (p > c && (p[-1] == ' ' || p[-1] == '\t'))
                p--;
            const char *q = hit + 4;
            if (p > c && p[-1] == '#' && (q == end || !isalnum((unsigned char)*q)))
                break;
            hit = ol_find_ci(hit + 4, (size_t)(end - (hit + 4)), "noqa");
        }
        if (hit) {
            /* `# noqa: A1, B2`: add the code after the last one */
            const char *q = hit + 4;
            const char *last = NULL;
            if (q < end && *q == ':') {
                q++;
                for (;;) {
                    while (q < end && (*q == ' ' || *q == '\t' || *q == ','))
                        q++;
                    const char *w = q, *digits;
                    while (q < end && isalpha((unsigned char)*q))
                        q++;
                    digits = q;
                    while (q < end && isdigit((unsigned char)*q))
                        q++;
                    if (w == digits || digits == q)
                        break;
                    last = q;
                }
            }
            if (!last) {
                ok = false; /* a blanket noqa: the finding would not be here */
            } else {
                *pos = (uint32_t)(last - src->text);
                ol_buf_printf(text, ", %s", code);
            }
        } else {
            uint32_t p = comment->end;
            while (p > comment->start && isspace((unsigned char)src->text[p - 1]))
                p--;
            *pos = p;
            ol_buf_printf(text, "  # noqa: %s", code);
        }
    } else if (ok) {
        /* a comment inside a string that goes on past this line would be text */
        if (inside_string(ctx, le))
            ok = false;
        uint32_t p = le;
        while (p > ls && (src->text[p - 1] == ' ' || src->text[p - 1] == '\t'))
            p--;
        if (p > ls && src->text[p - 1] == '\\')
            ok = false; /* a comment cannot follow a line continuation */
        if (p == ls)
            ok = false;
        *pos = p;
        ol_buf_printf(text, "  # noqa: %s", code);
    }
    return ok;
}

static cJSON *noqa_edit(ol_server *s, noqa_ctx *ctx, const ol_unit *u, const ol_diag *d)
{
    uint32_t pos;
    ol_buf text = {0};
    cJSON *edit = NULL;
    if (noqa_insertion(s, ctx, &u->result.src, d->start, d->rule->code, &pos, &text)) {
        ol_doc *doc;
        uint32_t x, y;
        if (map_span(s, u, pos, pos, &doc, &x, &y)) {
            edit = cJSON_CreateObject();
            cJSON *changes = cJSON_AddObjectToObject(edit, "changes");
            add_text_edit(s, changes, doc, x, x, text.data, text.len);
        }
    }
    ol_buf_free(&text);
    return edit;
}

/* ---- fix all ------------------------------------------------------------------------ */

/* One edit turning old[0..on) into new[0..nn) over what differs, at
 * character boundaries: *p bytes in common at the start, *q at the end. */
static void changed_middle(const char *old, size_t on, const char *nw, size_t nn, size_t *p, size_t *q)
{
    size_t a = 0;
    while (a < on && a < nn && old[a] == nw[a])
        a++;
    while (a > 0 && ((unsigned char)old[a] & 0xC0) == 0x80)
        a--;
    size_t b = 0;
    while (b < on - a && b < nn - a && old[on - 1 - b] == nw[nn - 1 - b])
        b++;
    while (b > 0 && on - b < on && ((unsigned char)old[on - b] & 0xC0) == 0x80)
        b--;
    *p = a;
    *q = b;
}

static void copy_source(const ol_source *from, ol_source *to)
{
    ol_source_init_text(to, from->path, ol_xstrndup(from->text, from->len), from->len);
    to->notebook = from->notebook;
    for (size_t i = 0; i < from->cells.len; i++) {
        ol_cell c = from->cells.items[i];
        c.file_lines = ol_xcalloc(c.line_count ? c.line_count : 1, sizeof(uint32_t));
        ol_vec_push(&to->cells, c);
    }
}

/* The byte range line block [first, first+count) spans in src. */
static void lines_span(const ol_source *src, uint32_t first, uint32_t count, uint32_t *start, uint32_t *end)
{
    *start = first < src->line_count ? src->line_starts[first] : src->len;
    *end = first + count < src->line_count ? src->line_starts[first + count] : src->len;
}

static bool has_applicable_fix(const ol_server *s, const ol_unit *u)
{
    for (size_t i = 0; i < u->result.diags.len; i++) {
        const ol_diag *d = &u->result.diags.items[i];
        if (d->fix && (!d->fix->unsafe || s->settings.unsafe_fixes) && ol_server_shown(s, d))
            return true;
    }
    return false;
}

static cJSON *compute_fix_all(ol_server *s, ol_unit *u)
{
    if (!u->settings || !u->result.has_source || !has_applicable_fix(s, u))
        return NULL;
    ol_source src;
    copy_source(&u->result.src, &src);
    ol_file_result fixed = {0};
    s->linter.settings = u->settings;
    /* with the neighbours' facts, as the unit was linted (and as `--fix` on a folder) */
    s->linter.project = ol_server_unit_project(s, u, &s->linter.file);
    ol_lint_source(&s->linter, &src, &fixed);
    ol_fix_outcome outcome;
    ol_fix_file(&s->linter, &fixed, OL_FIX_NONE, s->settings.unsafe_fixes, &outcome);
    s->linter.project = NULL;
    s->linter.file = 0;
    cJSON *edit = NULL;
    if (outcome.applied > 0 && !outcome.error) {
        edit = cJSON_CreateObject();
        cJSON *changes = cJSON_AddObjectToObject(edit, "changes");
        const ol_source *a = &u->result.src, *b = &fixed.src;
        if (!u->notebook) {
            ol_doc *doc = ol_docs_find(&s->docs, u->uri);
            size_t p, q;
            changed_middle(a->text, a->len, b->text, b->len, &p, &q);
            if (doc && doc->text.len == a->len && (p < a->len - q || p < b->len - q))
                add_text_edit(s, changes, doc, (uint32_t)p, (uint32_t)(a->len - q), b->text + p, b->len - q - p);
        } else {
            /* fixes keep a notebook's lines where they were, so each cell
             * is the same block of lines before and after */
            for (size_t i = 0; i < a->cells.len && i < u->segments.len && i < b->cells.len; i++) {
                const ol_cell *c = &a->cells.items[i];
                uint32_t as, ae, bs, be;
                lines_span(a, c->first_line, c->line_count, &as, &ae);
                lines_span(b, c->first_line, c->line_count, &bs, &be);
                size_t p, q;
                changed_middle(a->text + as, ae - as, b->text + bs, be - bs, &p, &q);
                if (p >= (ae - as) - q && p >= (be - bs) - q)
                    continue; /* this cell did not change */
                ol_doc *doc;
                uint32_t x, y;
                if (!map_span(s, u, as + (uint32_t)p, ae - (uint32_t)q, &doc, &x, &y))
                    continue;
                add_text_edit(s, changes, doc, x, y, b->text + bs + p, (be - bs) - q - p);
            }
        }
        if (!cJSON_GetArraySize(changes)) {
            cJSON_Delete(edit);
            edit = NULL;
        }
    }
    ol_fix_outcome_free(&outcome);
    ol_file_result_free(&fixed);
    return edit;
}

static cJSON *fix_all(ol_server *s, ol_unit *u)
{
    if (!u->fix_all) {
        cJSON *edit = compute_fix_all(s, u);
        u->fix_all = edit ? edit : cJSON_CreateNull();
    }
    return cJSON_IsNull(u->fix_all) ? NULL : cJSON_Duplicate(u->fix_all, true);
}

/* ---- requests ------------------------------------------------------------------------ */

static cJSON *action(const char *title, const char *kind, cJSON *diag, cJSON *edit, bool preferred)
{
    cJSON *a = cJSON_CreateObject();
    cJSON_AddStringToObject(a, "title", title);
    cJSON_AddStringToObject(a, "kind", kind);
    if (diag) {
        cJSON *list = cJSON_AddArrayToObject(a, "diagnostics");
        cJSON_AddItemToArray(list, diag);
    }
    if (preferred)
        cJSON_AddBoolToObject(a, "isPreferred", true);
    cJSON_AddItemToObject(a, "edit", edit);
    return a;
}

cJSON *ol_server_code_actions(ol_server *s, const cJSON *params, int *error)
{
    const char *uri = uri_param(params);
    ol_lsp_pos ra, rb;
    if (!uri || !ol_lsp_range_read(cJSON_GetObjectItemCaseSensitive(params, "range"), &ra, &rb)) {
        *error = OL_RPC_INVALID_PARAMS;
        return NULL;
    }
    const cJSON *context = cJSON_GetObjectItemCaseSensitive(params, "context");
    const cJSON *only = cJSON_GetObjectItemCaseSensitive(context, "only");
    cJSON *actions = cJSON_CreateArray();
    ol_doc *doc = ol_docs_find(&s->docs, uri);
    ol_unit *u = ol_server_unit_of(s, uri);
    if (!doc || !u)
        return actions;
    ol_server_lint(s, u);
    uint32_t from = ol_doc_offset(doc, ra, s->enc), to = ol_doc_offset(doc, rb, s->enc);
    if (to < from) {
        uint32_t t = from;
        from = to;
        to = t;
    }
    if (kind_wanted(only, "quickfix")) {
        noqa_ctx noqa = {0};
        for (size_t i = 0; i < u->result.diags.len; i++) {
            const ol_diag *d = &u->result.diags.items[i];
            ol_doc *where;
            uint32_t x, y;
            if (!ol_server_shown(s, d) || !ol_unit_span(s, u, d->start, d->end, &where, &x, &y) || where != doc)
                continue;
            if (x > to || y < from)
                continue;
            ol_lsp_pos a = ol_doc_position(doc, x, s->enc), b = ol_doc_position(doc, y, s->enc);
            if (d->fix) {
                cJSON *edit = fix_edit(s, u, d->fix);
                if (edit) {
                    char *title = ol_xasprintf("%s: %s%s", d->rule->code, d->fix->message,
                                               d->fix->unsafe ? " (unsafe)" : "");
                    cJSON_AddItemToArray(actions, action(title, "quickfix", ol_server_diagnostic(s, u, d, a, b), edit,
                                                         !d->fix->unsafe));
                    free(title);
                }
            }
            cJSON *edit = noqa_edit(s, &noqa, u, d);
            if (edit) {
                char *title = ol_xasprintf("Disable %s for this line", d->rule->code);
                cJSON_AddItemToArray(actions,
                                     action(title, "quickfix", ol_server_diagnostic(s, u, d, a, b), edit, false));
                free(title);
            }
        }
        noqa_ctx_free(&noqa);
    }
    if (kind_wanted(only, "source.fixAll.oomlint")) {
        cJSON *edit = fix_all(s, u);
        if (edit)
            cJSON_AddItemToArray(actions, action("Fix all oomlint findings that have a fix", "source.fixAll.oomlint",
                                                 NULL, edit, false));
    }
    return actions;
}

/* The hover's lines for d's notes and guess: `note: MESSAGE (line 3)`, with
 * the cell in a notebook and the file for another file. */
static void hover_notes(const ol_unit *u, const ol_diag *d, ol_buf *text)
{
    for (size_t i = 0; i < d->notes.len; i++) {
        const ol_note *n = &d->notes.items[i];
        const char *path;
        ol_location loc = ol_note_location(&u->result, n, &path);
        ol_buf_printf(text, "\nnote: %s (", n->message);
        if (n->path)
            ol_buf_printf(text, "%s:", path);
        else if (loc.cell)
            ol_buf_printf(text, "cell %u, ", loc.cell);
        ol_buf_printf(text, "%s%u)\n", n->path ? "" : "line ", loc.line);
    }
    if (d->guess)
        ol_buf_printf(text, "\nThis finding rests on a guess (%s).\n", d->guess);
}

cJSON *ol_server_hover(ol_server *s, const cJSON *params, int *error)
{
    const char *uri = uri_param(params);
    ol_lsp_pos at;
    if (!uri || !ol_lsp_pos_read(cJSON_GetObjectItemCaseSensitive(params, "position"), &at)) {
        *error = OL_RPC_INVALID_PARAMS;
        return NULL;
    }
    ol_doc *doc = ol_docs_find(&s->docs, uri);
    ol_unit *u = ol_server_unit_of(s, uri);
    if (!doc || !u)
        return cJSON_CreateNull();
    ol_server_lint(s, u);
    uint32_t byte = ol_doc_offset(doc, at, s->enc);
    ol_buf text = {0}, pages = {0};
    OL_VEC(const ol_rule *) rules = {0};
    cJSON *range = NULL;
    for (size_t i = 0; i < u->result.diags.len; i++) {
        const ol_diag *d = &u->result.diags.items[i];
        ol_doc *where;
        uint32_t x, y;
        if (!ol_server_shown(s, d) || !ol_unit_span(s, u, d->start, d->end, &where, &x, &y) || where != doc)
            continue;
        if (byte < x || byte > y || (byte == y && y > x))
            continue;
        if (!range)
            range = ol_lsp_range_json(ol_doc_position(doc, x, s->enc), ol_doc_position(doc, y, s->enc));
        ol_buf_printf(&text, "%s**%s** %s (%s): %s\n", text.len ? "\n" : "", d->rule->code, d->rule->name,
                      ol_severity_name(d->rule->severity), d->message);
        if (d->help)
            ol_buf_printf(&text, "\nhelp: %s\n", d->help);
        hover_notes(u, d, &text);
        bool seen = false;
        for (size_t k = 0; k < rules.len && !seen; k++)
            seen = rules.items[k] == d->rule;
        if (!seen) {
            ol_vec_push(&rules, d->rule);
            ol_buf_puts(&pages, "\n---\n\n");
            ol_rule_doc_markdown(d->rule, &pages);
        }
    }
    ol_vec_free(&rules);
    if (!range) {
        ol_buf_free(&text);
        ol_buf_free(&pages);
        return cJSON_CreateNull();
    }
    ol_buf_add(&text, pages.data, pages.len);
    cJSON *hover = cJSON_CreateObject();
    cJSON *contents = cJSON_AddObjectToObject(hover, "contents");
    cJSON_AddStringToObject(contents, "kind", "markdown");
    cJSON_AddStringToObject(contents, "value", text.data);
    cJSON_AddItemToObject(hover, "range", range);
    ol_buf_free(&text);
    ol_buf_free(&pages);
    return hover;
}
