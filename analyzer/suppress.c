/*
 * suppress.c - reading `# noqa` and `# oomlint: ...` comments into line
 * ranges, and answering "is this finding suppressed?" (and by which
 * suppression, for OOM003).
 *
 * Collecting builds an index: for each rule, and for the blanket
 * suppressions, the line ranges sorted by their first line. The ranges come
 * from lines and blocks, so they nest or are disjoint; the narrowest range
 * covering a line is then the last one starting at or before it that still
 * reaches it. A query finds the last start by binary search and, while that
 * range ends too early, jumps to the nearest earlier range that ends later
 * (precomputed with a stack), so it climbs enclosing blocks only.
 */
#include "suppress.h"

#include <ctype.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "rule.h"

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

typedef struct code_sink {
    ol_suppression *sup;
    const char *text; /* the source text the codes point into */
} code_sink;

static void add_code(void *ctx, const char *code, size_t len)
{
    code_sink *sink = ctx;
    char *c = ol_xstrndup(code, len);
    for (char *p = c; *p; p++)
        *p = (char)toupper((unsigned char)*p);
    ol_vec_push(&sink->sup->codes, c);
    ol_span span = {(uint32_t)(code - sink->text), (uint32_t)(code - sink->text + len)};
    ol_vec_push(&sink->sup->code_spans, span);
    ol_vec_push(&sink->sup->code_used, false);
    sink->sup->end = span.end;
}

/* The directive's own '#' when only blanks separate it from the keyword. */
static uint32_t directive_start(const char *text, uint32_t comment_start, uint32_t keyword)
{
    uint32_t p = keyword;
    while (p > comment_start && (text[p - 1] == ' ' || text[p - 1] == '\t'))
        p--;
    /* p > comment_start here: a comment starts with its own '#' */
    return text[p - 1] == '#' ? p - 1 : keyword;
}

static void free_suppression(ol_suppression *sup)
{
    for (size_t k = 0; k < sup->codes.len; k++)
        free(sup->codes.items[k]);
    ol_vec_free(&sup->codes);
    ol_vec_free(&sup->code_spans);
    ol_vec_free(&sup->code_used);
}

static void invalid(ol_suppressions *s, uint32_t at, const char *message)
{
    ol_invalid_directive d = {at, ol_xstrdup(message)};
    ol_vec_push(&s->invalid, d);
}

/* Statements (children of a block or of the module) in preorder: their
 * starts strictly increase. */
typedef OL_VEC(ol_nid) stmt_index;

static void index_statements(const ol_tree *t, stmt_index *out)
{
    for (ol_nid n = 1; n < t->nodes.len; n++) {
        ol_nid parent = t->nodes.items[n].parent;
        ol_kind pk = parent == OL_NONE ? OL_N_OTHER : (ol_kind)t->nodes.items[parent].kind;
        if (pk == OL_N_block || pk == OL_N_module)
            ol_vec_push(out, n);
    }
}

/* The lines a directive on a line of its own covers: from that line to the
 * end of the block holding the next statement, when that statement is
 * indented like the directive (the directive opens a region of that block);
 * otherwise just the line itself. */
static void directive_lines(const ol_tree *t, const stmt_index *stmts, uint32_t at, uint32_t *first, uint32_t *last)
{
    const ol_source *src = t->src;
    uint32_t line = ol_source_line_index(src, at);
    *first = *last = line + 1;
    uint32_t column = at - src->line_starts[line];
    size_t lo = 0, hi = stmts->len;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (t->nodes.items[stmts->items[mid]].start <= at)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == stmts->len)
        return;
    const ol_node *node = &t->nodes.items[stmts->items[lo]];
    ol_nid parent = node->parent;
    ol_kind pk = (ol_kind)t->nodes.items[parent].kind;
    uint32_t nline = ol_source_line_index(src, node->start);
    if (node->start - src->line_starts[nline] != column)
        return;
    *last = pk == OL_N_module ? src->line_count : ol_source_line_index(src, t->nodes.items[parent].end) + 1;
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

static void build_index(ol_suppressions *s);

void ol_suppressions_collect(ol_suppressions *s, const ol_tree *t)
{
    memset(s, 0, sizeof(*s));
    const ol_source *src = t->src;
    uint32_t code_start = first_code_offset(t);
    stmt_index stmts = {0};
    bool stmts_ready = false;
    for (size_t i = 0; i < t->comments.len; i++) {
        const ol_span *c = &t->comments.items[i];
        const char *text = src->text + c->start;
        size_t n = c->end - c->start;
        uint32_t line = ol_source_line_index(src, c->start) + 1;

        /* # noqa / # noqa: CODES (anywhere in the comment, after a '#');
         * most comments hold no `q` at all, which memchr tells fastest */
        const char *hit = memchr(text, 'q', n) || memchr(text, 'Q', n) ? ol_find_ci(text, n, "noqa") : NULL;
        while (hit) {
            const char *p = hit;
            while (p > text && (p[-1] == ' ' || p[-1] == '\t'))
                p--;
            bool after_hash = p > text && p[-1] == '#';
            const char *end = text + n;
            const char *q = hit + 4;
            if (after_hash && (q == end || !is_code_char(*q))) {
                ol_suppression sup = {0};
                sup.first_line = sup.last_line = line;
                sup.kind = OL_SUPPRESS_NOQA;
                sup.comment_start = c->start;
                sup.comment_end = c->end;
                sup.keyword = (uint32_t)(hit - src->text);
                sup.start = (uint32_t)(p - 1 - src->text);
                sup.end = sup.keyword + 4;
                if (q < end && *q == ':') {
                    q++;
                    code_sink sink = {&sup, src->text};
                    if (ol_parse_code_list(q, (size_t)(end - q), add_code, &sink) == 0)
                        /* `# noqa:` with no codes suppresses nothing in particular:
                         * a blanket noqa, as flake8 and Ruff read it, and a warning */
                        invalid(s, sup.start, "invalid `# noqa` directive: expected a comma-separated list of "
                                              "codes after `# noqa:` (e.g. `# noqa: OOM101, OOM102`); read as "
                                              "a blanket `# noqa`");
                } else {
                    /* `# noqa OOM102`: the colon is missing, so this is a blanket
                     * noqa (flake8 and Ruff read it so), whatever the words after
                     * it meant; Ruff warns, and so does oomlint. Another comment
                     * after it (`# noqa  # why`) is fine. */
                    const char *w = q;
                    while (w < end && (*w == ' ' || *w == '\t'))
                        w++;
                    if (w < end && *w != '#')
                        invalid(s, sup.start, "invalid `# noqa` directive: expected `:` followed by a "
                                              "comma-separated list of codes (e.g. `# noqa: OOM101, OOM102`); "
                                              "read as a blanket `# noqa`, which suppresses every rule on "
                                              "this line");
                }
                ol_vec_push(&s->items, sup);
                break;
            }
            hit = ol_find_ci(hit + 4, (size_t)(text + n - (hit + 4)), "noqa");
        }

        /* # oomlint: disable=CODES / disable-file[=CODES] / noqa[: CODES] */
        const char *d = memchr(text, ':', n) ? ol_find_ci(text, n, "oomlint:") : NULL;
        if (!d)
            continue;
        const char *p = d + strlen("oomlint:");
        const char *end = text + n;
        while (p < end && (*p == ' ' || *p == '\t'))
            p++;
        /* written as a directive: `oomlint:` right after a '#' */
        uint32_t hash = directive_start(src->text, c->start, (uint32_t)(d - src->text));
        bool directive_like = src->text[hash] == '#';
        bool file = false, file_noqa = false;
        if ((size_t)(end - p) >= 12 && ol_mem_ieq(p, "disable-file", 12)) {
            file = true;
            p += 12;
        } else if ((size_t)(end - p) >= 7 && ol_mem_ieq(p, "disable", 7) &&
                   (end - p == 7 || !is_code_char(p[7]))) {
            p += 7;
        } else if ((size_t)(end - p) >= 4 && ol_mem_ieq(p, "noqa", 4) && (end - p == 4 || !is_code_char(p[4]))) {
            file = file_noqa = true;
            p += 4;
        } else {
            if (directive_like) {
                size_t wlen = 0;
                while (p + wlen < end && wlen < 40 && (is_code_char(p[wlen]) || p[wlen] == '-' || p[wlen] == '_'))
                    wlen++;
                bool ignore = wlen == 6 && ol_mem_ieq(p, "ignore", 6);
                char *msg = ol_xasprintf("unknown `# oomlint:` directive `%.*s`: it suppresses nothing (the "
                                         "directives are `# oomlint: disable=CODES`, `# oomlint: disable-file` "
                                         "and `# oomlint: noqa`%s)",
                                         (int)wlen, p, ignore ? "; `ignore=` is spelt `disable=` here" : "");
                invalid(s, hash, msg);
                free(msg);
            }
            continue;
        }
        if (file_noqa && !own_line(src, c->start)) {
            /* Ruff's file-level `# ruff: noqa` sits on a line of its own; after
             * code it is most likely meant for that line alone */
            invalid(s, hash, "`# oomlint: noqa` exempts the whole file and must be on a line of its own; after "
                             "code it suppresses nothing (to suppress this line, write `# noqa: CODES`)");
            continue;
        }
        ol_suppression sup = {0};
        sup.kind = file_noqa ? OL_SUPPRESS_FILE_NOQA : file ? OL_SUPPRESS_DISABLE_FILE : OL_SUPPRESS_DISABLE;
        sup.comment_start = c->start;
        sup.comment_end = c->end;
        sup.keyword = (uint32_t)(d - src->text);
        sup.start = directive_start(src->text, c->start, sup.keyword);
        sup.end = (uint32_t)(p - src->text);
        while (p < end && (*p == ' ' || *p == '\t'))
            p++;
        if (p < end && (*p == '=' || *p == ':')) {
            p++;
            code_sink sink = {&sup, src->text};
            if (ol_parse_code_list(p, (size_t)(end - p), add_code, &sink) == 0)
                invalid(s, sup.start, "invalid `# oomlint:` directive: expected a comma-separated list of codes "
                                      "after its `=` or `:`; read as covering every rule");
        }
        /* else: `# oomlint: disable` (or disable-file, noqa) with no codes: every code */
        if (file) {
            if (!file_noqa && c->start > code_start) {
                invalid(s, sup.start, "`# oomlint: disable-file` is honoured only in the file's leading comments, "
                                      "before the first statement; this one suppresses nothing (`# oomlint: noqa` "
                                      "on a line of its own works anywhere)");
                free_suppression(&sup);
                continue;
            }
            sup.first_line = 1;
            sup.last_line = UINT32_MAX;
        } else if (own_line(src, c->start)) {
            if (!stmts_ready) {
                index_statements(t, &stmts);
                stmts_ready = true;
            }
            directive_lines(t, &stmts, c->start, &sup.first_line, &sup.last_line);
        } else {
            sup.first_line = sup.last_line = line;
        }
        ol_vec_push(&s->items, sup);
    }
    ol_vec_free(&stmts);
    build_index(s);
}

/* first line ascending; among equal starts the narrower later, and among
 * equal ranges the earlier suppression later: the query takes the last one */
static int cmp_entry(const void *a, const void *b)
{
    const ol_suppress_entry *x = a, *y = b;
    if (x->first_line != y->first_line)
        return x->first_line < y->first_line ? -1 : 1;
    if (x->last_line != y->last_line)
        return x->last_line > y->last_line ? -1 : 1;
    return x->item > y->item ? -1 : x->item < y->item;
}

static void build_index(ol_suppressions *s)
{
    s->key_count = ol_rule_count + 1;
    s->keys = ol_xcalloc(s->key_count, sizeof(ol_suppress_key));
    bool *seen = ol_xcalloc(ol_rule_count, sizeof(bool));
    for (size_t i = 0; i < s->items.len; i++) {
        const ol_suppression *sup = &s->items.items[i];
        ol_suppress_entry e = {sup->first_line, sup->last_line, (uint32_t)i, 0, UINT32_MAX};
        if (sup->codes.len == 0) {
            ol_vec_push(&s->keys[ol_rule_count], e);
            continue;
        }
        /* a code listed twice is credited at its first mention */
        for (size_t k = 0; k < sup->codes.len; k++) {
            const ol_rule *r = ol_rule_find(sup->codes.items[k]);
            if (!r || seen[ol_rule_index(r)])
                continue;
            seen[ol_rule_index(r)] = true;
            e.code = (uint32_t)k;
            ol_vec_push(&s->keys[ol_rule_index(r)], e);
        }
        for (size_t k = 0; k < sup->codes.len; k++) {
            const ol_rule *r = ol_rule_find(sup->codes.items[k]);
            if (r)
                seen[ol_rule_index(r)] = false;
        }
    }
    free(seen);
    OL_VEC(uint32_t) stack = {0};
    for (size_t k = 0; k < s->key_count; k++) {
        ol_suppress_key *key = &s->keys[k];
        ol_sort(key->items, key->len, sizeof(ol_suppress_entry), cmp_entry);
        stack.len = 0;
        for (uint32_t i = 0; i < key->len; i++) {
            while (stack.len && key->items[ol_vec_last(&stack)].last_line <= key->items[i].last_line)
                stack.len--;
            key->items[i].prev_wider = stack.len ? ol_vec_last(&stack) : UINT32_MAX;
            ol_vec_push(&stack, i);
        }
    }
    ol_vec_free(&stack);
}

/* The entry of key that suppresses line (the last starting at or before it
 * that reaches it), leaving out suppression `skip`; NULL when none does. */
static const ol_suppress_entry *find(const ol_suppress_key *key, uint32_t line, size_t skip)
{
    size_t lo = 0, hi = key->len;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (key->items[mid].first_line <= line)
            lo = mid + 1;
        else
            hi = mid;
    }
    uint32_t i = lo > 0 ? (uint32_t)(lo - 1) : UINT32_MAX;
    while (i != UINT32_MAX) {
        const ol_suppress_entry *e = &key->items[i];
        if (e->last_line < line)
            i = e->prev_wider;
        else if (e->item == skip)
            i = i > 0 ? i - 1 : UINT32_MAX;
        else
            return e;
    }
    return NULL;
}

/* The narrowest suppression of code at line (ties: the one written first). */
static const ol_suppress_entry *lookup(const ol_suppressions *s, uint32_t line, const char *code, size_t skip)
{
    const ol_rule *r = ol_rule_find(code);
    const ol_suppress_entry *named = r ? find(&s->keys[ol_rule_index(r)], line, skip) : NULL;
    const ol_suppress_entry *blanket = find(&s->keys[ol_rule_count], line, skip);
    if (!named || !blanket)
        return named ? named : blanket;
    uint32_t wn = named->last_line - named->first_line, wb = blanket->last_line - blanket->first_line;
    if (wn != wb)
        return wn < wb ? named : blanket;
    return named->item < blanket->item ? named : blanket;
}

bool ol_suppressed(const ol_suppressions *s, uint32_t line, const char *code)
{
    return lookup(s, line, code, SIZE_MAX) != NULL;
}

static bool use(ol_suppressions *s, uint32_t line, const char *code, size_t skip)
{
    /* the narrowest suppression that applies gets the credit, so a directive
     * made redundant by a closer one is the one reported as unused */
    const ol_suppress_entry *e = lookup(s, line, code, skip);
    if (!e)
        return false;
    ol_suppression *best = &s->items.items[e->item];
    best->used = true;
    if (best->codes.len)
        best->code_used.items[e->code] = true;
    return true;
}

bool ol_suppression_use(ol_suppressions *s, uint32_t line, const char *code)
{
    return use(s, line, code, SIZE_MAX);
}

bool ol_suppression_use_other(ol_suppressions *s, uint32_t line, const char *code, uint32_t directive_start)
{
    /* a blanket directive would hide its own report; one that names the
     * code (`# noqa: OOM101, OOM003`) asks for exactly that */
    /* items are in comment order: find the comment holding the directive */
    size_t lo = 0, hi = s->items.len;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (s->items.items[mid].comment_end <= directive_start)
            lo = mid + 1;
        else
            hi = mid;
    }
    size_t skip = SIZE_MAX;
    for (size_t i = lo; i < s->items.len && s->items.items[i].comment_start <= directive_start; i++)
        if (s->items.items[i].start == directive_start && s->items.items[i].codes.len == 0)
            skip = i;
    return use(s, line, code, skip);
}

void ol_suppressions_free(ol_suppressions *s)
{
    for (size_t i = 0; i < s->invalid.len; i++)
        free(s->invalid.items[i].message);
    ol_vec_free(&s->invalid);
    for (size_t i = 0; i < s->items.len; i++)
        free_suppression(&s->items.items[i]);
    ol_vec_free(&s->items);
    for (size_t k = 0; k < s->key_count; k++)
        ol_vec_free(&s->keys[k]);
    free(s->keys);
    s->keys = NULL;
    s->key_count = 0;
}
