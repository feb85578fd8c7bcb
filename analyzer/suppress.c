/*
 * suppress.c - reading `# noqa` and `# oomlint: ...` comments into line
 * ranges, and answering "is this finding suppressed?".
 */
#include "suppress.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

static bool is_code_char(char c)
{
    return isalnum((unsigned char)c) != 0;
}

size_t ol_parse_code_list(const char *s, size_t n, void (*add)(void *ctx, const char *code, size_t len),
                          void *ctx)
{
    size_t count = 0, i = 0;
    for (;;) {
        while (i < n && (s[i] == ' ' || s[i] == '\t' || s[i] == ','))
            i++;
        size_t start = i;
        while (i < n && is_code_char(s[i]))
            i++;
        if (i == start)
            break;
        /* a code is letters then digits: OOM101 */
        size_t j = start;
        while (j < i && isalpha((unsigned char)s[j]))
            j++;
        if (j == start || j == i)
            break;
        add(ctx, s + start, i - start);
        count++;
        /* stop at anything that is not a separator (free text after codes) */
        if (i < n && s[i] != ',' && s[i] != ' ' && s[i] != '\t')
            break;
    }
    return count;
}

static void add_code(void *ctx, const char *code, size_t len)
{
    ol_suppression *sup = ctx;
    char *c = ol_xstrndup(code, len);
    for (char *p = c; *p; p++)
        *p = (char)toupper((unsigned char)*p);
    ol_vec_push(&sup->codes, c);
}

/* Finds `needle` case-insensitively in s[0..n). */
static const char *find_ci(const char *s, size_t n, const char *needle)
{
    size_t m = strlen(needle);
    for (size_t i = 0; i + m <= n; i++)
        if (ol_mem_ieq(s + i, needle, m))
            return s + i;
    return NULL;
}

/* The lines a directive on a line of its own covers: from that line to the
 * end of the block holding the next statement, when that statement is
 * indented like the directive (the directive opens a region of that block);
 * otherwise just the line itself. */
static void directive_lines(const ol_tree *t, uint32_t at, uint32_t *first, uint32_t *last)
{
    const ol_source *src = t->src;
    uint32_t line = ol_source_line_index(src, at);
    *first = *last = line + 1;
    uint32_t column = at - src->line_starts[line];
    for (ol_nid n = 1; n < t->nodes.len; n++) {
        const ol_node *node = &t->nodes.items[n];
        if (node->start <= at)
            continue;
        ol_nid parent = node->parent;
        ol_kind pk = parent == OL_NONE ? OL_N_OTHER : (ol_kind)ol_node_at(t, parent)->kind;
        if (pk != OL_N_block && pk != OL_N_module)
            continue;
        uint32_t nline = ol_source_line_index(src, node->start);
        if (node->start - src->line_starts[nline] != column)
            return;
        *last = pk == OL_N_module ? src->line_count : ol_source_line_index(src, ol_node_at(t, parent)->end) + 1;
        return;
    }
}

static bool own_line(const ol_source *src, uint32_t at)
{
    uint32_t line = ol_source_line_index(src, at);
    for (uint32_t i = src->line_starts[line]; i < at; i++)
        if (src->text[i] != ' ' && src->text[i] != '\t' && src->text[i] != '\f')
            return false;
    return true;
}

/* Start of the first statement, or the end of the file. */
static uint32_t first_code_offset(const ol_tree *t)
{
    ol_nid first = ol_first(t, 0);
    return first == OL_NONE ? t->src->len : ol_node_at(t, first)->start;
}

void ol_suppressions_collect(ol_suppressions *s, const ol_tree *t)
{
    memset(s, 0, sizeof(*s));
    const ol_source *src = t->src;
    uint32_t code_start = first_code_offset(t);
    for (size_t i = 0; i < t->comments.len; i++) {
        const ol_span *c = &t->comments.items[i];
        const char *text = src->text + c->start;
        size_t n = c->end - c->start;
        uint32_t line = ol_source_line_index(src, c->start) + 1;

        /* # noqa / # noqa: CODES (anywhere in the comment, after a '#') */
        const char *hit = find_ci(text, n, "noqa");
        while (hit) {
            const char *p = hit;
            while (p > text && (p[-1] == ' ' || p[-1] == '\t'))
                p--;
            bool after_hash = p > text && p[-1] == '#';
            const char *end = text + n;
            const char *q = hit + 4;
            if (after_hash && (q == end || !is_code_char(*q))) {
                ol_suppression sup = {line, line, {0}};
                if (q < end && *q == ':') {
                    q++;
                    if (ol_parse_code_list(q, (size_t)(end - q), add_code, &sup) == 0) {
                        /* `# noqa:` with nothing after it suppresses nothing in particular:
                         * treat as a blanket noqa, as flake8 does */
                    }
                }
                ol_vec_push(&s->items, sup);
                break;
            }
            hit = find_ci(hit + 4, (size_t)(text + n - (hit + 4)), "noqa");
        }

        /* # oomlint: disable=CODES / disable-file[=CODES] */
        const char *d = find_ci(text, n, "oomlint:");
        if (!d)
            continue;
        const char *p = d + strlen("oomlint:");
        const char *end = text + n;
        while (p < end && (*p == ' ' || *p == '\t'))
            p++;
        bool file = false;
        if ((size_t)(end - p) >= 12 && ol_mem_ieq(p, "disable-file", 12)) {
            file = true;
            p += 12;
        } else if ((size_t)(end - p) >= 7 && ol_mem_ieq(p, "disable", 7)) {
            p += 7;
        } else {
            continue;
        }
        ol_suppression sup = {0, 0, {0}};
        while (p < end && (*p == ' ' || *p == '\t'))
            p++;
        if (p < end && (*p == '=' || *p == ':')) {
            p++;
            ol_parse_code_list(p, (size_t)(end - p), add_code, &sup);
        } else if (!file) {
            /* `# oomlint: disable` with no codes: every code */
        }
        if (file) {
            if (c->start > code_start) {
                for (size_t k = 0; k < sup.codes.len; k++)
                    free(sup.codes.items[k]);
                ol_vec_free(&sup.codes);
                continue; /* only honoured in the leading comment block */
            }
            sup.first_line = 1;
            sup.last_line = UINT32_MAX;
        } else if (own_line(src, c->start)) {
            directive_lines(t, c->start, &sup.first_line, &sup.last_line);
        } else {
            sup.first_line = sup.last_line = line;
        }
        ol_vec_push(&s->items, sup);
    }
}

bool ol_suppressed(const ol_suppressions *s, uint32_t line, const char *code)
{
    for (size_t i = 0; i < s->items.len; i++) {
        const ol_suppression *sup = &s->items.items[i];
        if (line < sup->first_line || line > sup->last_line)
            continue;
        if (sup->codes.len == 0)
            return true;
        for (size_t k = 0; k < sup->codes.len; k++)
            if (strcmp(sup->codes.items[k], code) == 0)
                return true;
    }
    return false;
}

void ol_suppressions_free(ol_suppressions *s)
{
    for (size_t i = 0; i < s->items.len; i++) {
        for (size_t k = 0; k < s->items.items[i].codes.len; k++)
            free(s->items.items[i].codes.items[k]);
        ol_vec_free(&s->items.items[i].codes);
    }
    ol_vec_free(&s->items);
}
