/*
 * suppress.c - reading `# noqa` and `# oomlint: ...` comments into line
 * ranges, and answering "is this finding suppressed?". Each suppression
 * keeps a bit set of the rules it names; collecting builds an index (one-line
 * suppressions by line, range suppressions swept into the lines where their
 * union changes) so a query is two binary searches.
 */
#include "suppress.h"

#include <ctype.h>
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
    size_t words;
} code_sink;

static void add_code(void *ctx, const char *code, size_t len)
{
    code_sink *sink = ctx;
    char name[16];
    if (len >= sizeof name)
        return; /* no rule code is that long */
    for (size_t i = 0; i < len; i++)
        name[i] = (char)toupper((unsigned char)code[i]);
    name[len] = '\0';
    const ol_rule *r = ol_rule_find(name);
    if (!r)
        return; /* another tool's code, or a typo: it suppresses nothing of ours */
    size_t i = ol_rule_index(r);
    sink->sup->rules[i / 64] |= (uint64_t)1 << (i % 64);
}

static ol_suppression new_suppression(const ol_suppressions *s, uint32_t first, uint32_t last)
{
    ol_suppression sup = {first, last, false, ol_xcalloc(s->words, sizeof(uint64_t))};
    return sup;
}

/* Parses a code list into sup; no code at all means every code. */
static void read_codes(const ol_suppressions *s, ol_suppression *sup, const char *p, size_t n)
{
    code_sink sink = {sup, s->words};
    if (ol_parse_code_list(p, n, add_code, &sink) == 0)
        sup->all = true;
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
    return first == OL_NONE ? t->src->len : t->nodes.items[first].start;
}

static void build_index(ol_suppressions *s);

void ol_suppressions_collect(ol_suppressions *s, const ol_tree *t)
{
    memset(s, 0, sizeof(*s));
    s->words = (ol_rule_count + 63) / 64;
    const ol_source *src = t->src;
    uint32_t code_start = first_code_offset(t);
    stmt_index stmts = {0};
    bool stmts_ready = false;
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
                ol_suppression sup = new_suppression(s, line, line);
                /* `# noqa:` with nothing after it is a blanket noqa, as in flake8 */
                if (q < end && *q == ':')
                    read_codes(s, &sup, q + 1, (size_t)(end - q - 1));
                else
                    sup.all = true;
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
        if (file && c->start > code_start)
            continue; /* only honoured in the leading comment block */
        ol_suppression sup = new_suppression(s, 0, 0);
        while (p < end && (*p == ' ' || *p == '\t'))
            p++;
        if (p < end && (*p == '=' || *p == ':'))
            read_codes(s, &sup, p + 1, (size_t)(end - p - 1));
        else
            sup.all = true; /* `# oomlint: disable` with no codes: every code */
        if (file) {
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

static void union_into(const ol_suppressions *s, ol_suppression *into, const ol_suppression *from)
{
    into->all |= from->all;
    for (size_t w = 0; w < s->words; w++)
        into->rules[w] |= from->rules[w];
}

static int cmp_first_line(const void *a, const void *b)
{
    const ol_suppression *x = a, *y = b;
    return x->first_line < y->first_line ? -1 : x->first_line > y->first_line;
}

typedef struct range_event {
    uint32_t line;
    int delta;                /* +1 opens, -1 closes */
    const ol_suppression *sup;
} range_event;

static int cmp_event(const void *a, const void *b)
{
    const range_event *x = a, *y = b;
    return x->line < y->line ? -1 : x->line > y->line;
}

static void build_index(ol_suppressions *s)
{
    OL_VEC(range_event) events = {0};
    for (size_t i = 0; i < s->items.len; i++) {
        const ol_suppression *sup = &s->items.items[i];
        if (sup->first_line == sup->last_line) {
            ol_suppression copy = new_suppression(s, sup->first_line, sup->last_line);
            union_into(s, &copy, sup);
            ol_vec_push(&s->by_line, copy);
            continue;
        }
        range_event open = {sup->first_line, 1, sup};
        ol_vec_push(&events, open);
        if (sup->last_line != UINT32_MAX) {
            range_event close = {sup->last_line + 1, -1, sup};
            ol_vec_push(&events, close);
        }
    }
    /* one entry per line */
    ol_sort(s->by_line.items, s->by_line.len, sizeof(ol_suppression), cmp_first_line);
    size_t keep = 0;
    for (size_t i = 0; i < s->by_line.len; i++) {
        if (keep > 0 && s->by_line.items[keep - 1].first_line == s->by_line.items[i].first_line) {
            union_into(s, &s->by_line.items[keep - 1], &s->by_line.items[i]);
            free(s->by_line.items[i].rules);
            continue;
        }
        s->by_line.items[keep++] = s->by_line.items[i];
    }
    s->by_line.len = keep;
    /* sweep the ranges: counts per rule of the ranges open at a line */
    ol_sort(events.items, events.len, sizeof(range_event), cmp_event);
    size_t rules = s->words * 64;
    long *open_per_rule = ol_xcalloc(rules, sizeof(long));
    long open_all = 0;
    for (size_t i = 0; i < events.len;) {
        uint32_t line = events.items[i].line;
        for (; i < events.len && events.items[i].line == line; i++) {
            const range_event *e = &events.items[i];
            open_all += e->sup->all ? e->delta : 0;
            for (size_t w = 0; w < s->words; w++)
                for (uint64_t bits = e->sup->rules[w]; bits; bits &= bits - 1)
                    open_per_rule[w * 64 + (size_t)__builtin_ctzll(bits)] += e->delta;
        }
        ol_suppression step = new_suppression(s, line, line);
        step.all = open_all > 0;
        for (size_t r = 0; r < rules; r++)
            if (open_per_rule[r] > 0)
                step.rules[r / 64] |= (uint64_t)1 << (r % 64);
        ol_vec_push(&s->steps, step);
    }
    free(open_per_rule);
    ol_vec_free(&events);
}

/* The last entry of v starting at or before line, or NULL. */
static const ol_suppression *at_or_before(const ol_suppression *items, size_t len, uint32_t line)
{
    size_t lo = 0, hi = len;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (items[mid].first_line <= line)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo > 0 ? &items[lo - 1] : NULL;
}

static bool covers(const ol_suppression *sup, long rule)
{
    return sup->all || (rule >= 0 && (sup->rules[rule / 64] >> (rule % 64) & 1));
}

bool ol_suppressed(const ol_suppressions *s, uint32_t line, const char *code)
{
    const ol_rule *r = ol_rule_find(code);
    long rule = r ? (long)ol_rule_index(r) : -1;
    const ol_suppression *one = at_or_before(s->by_line.items, s->by_line.len, line);
    if (one && one->first_line == line && covers(one, rule))
        return true;
    const ol_suppression *step = at_or_before(s->steps.items, s->steps.len, line);
    return step && covers(step, rule);
}

static void free_all(ol_suppression *items, size_t len)
{
    for (size_t i = 0; i < len; i++)
        free(items[i].rules);
}

void ol_suppressions_free(ol_suppressions *s)
{
    free_all(s->items.items, s->items.len);
    free_all(s->by_line.items, s->by_line.len);
    free_all(s->steps.items, s->steps.len);
    ol_vec_free(&s->items);
    ol_vec_free(&s->by_line);
    ol_vec_free(&s->steps);
}
