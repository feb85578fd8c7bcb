/*
 * syntax.c - parsing with tree-sitter-python and flattening the result.
 *
 * The walk is iterative (an explicit stack of levels), so a file nested
 * thousands of levels deep cannot overflow the C stack here. It reads the
 * pinned runtime's subtrees directly rather than through a TSTreeCursor:
 * same result (tests/unit.c checks it against a cursor walk), a fraction of
 * the calls; with the cursor, flattening cost a fifth of the parse. A parse
 * that runs past its time budget is cancelled and reported as OOM002 rather
 * than hanging the run.
 */
#include "syntax.h"
#include "syntax_gaps.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <tree_sitter/api.h>

/* the runtime's own view of a tree, for the walk in flatten() */
#include "language.h"
#include "subtree.h"
#include "tree.h"

const TSLanguage *tree_sitter_python(void);

static const char *const named_kind_names[] = {
#define OL_X(name) #name,
    OL_NAMED_KINDS(OL_X)
#undef OL_X
};

static const char *const token_kind_texts[] = {
#define OL_X(name, text) text,
    OL_TOKEN_KINDS(OL_X)
#undef OL_X
};

static const char *const field_names[] = {
#define OL_X(name) #name,
    OL_FIELDS(OL_X)
#undef OL_X
};

const char *ol_kind_name(ol_kind k)
{
    if (k == OL_N_OTHER)
        return "other";
    if (k <= OL_N_ERROR)
        return named_kind_names[k - 1];
    if (k < OL_KIND_COUNT)
        return token_kind_texts[k - OL_N_ERROR - 1];
    return "?";
}

bool ol_grammar_init(ol_grammar *g)
{
    memset(g, 0, sizeof(*g));
    ol_parse_arena_install(); /* on the main thread, before any worker parses */
    const TSLanguage *lang = tree_sitter_python();
    uint32_t abi = ts_language_abi_version(lang);
    if (abi < TREE_SITTER_MIN_COMPATIBLE_LANGUAGE_VERSION || abi > TREE_SITTER_LANGUAGE_VERSION)
        return false;
    g->language = lang;
    g->symbol_count = ts_language_symbol_count(lang);
    g->symbol_kind = ol_xcalloc(g->symbol_count, sizeof(uint16_t));
    g->symbol_named = ol_xcalloc(g->symbol_count, sizeof(bool));
    for (uint32_t sym = 0; sym < g->symbol_count; sym++) {
        g->symbol_named[sym] = ts_language_symbol_metadata(lang, (TSSymbol)sym).named;
        const char *name = ts_language_symbol_name(lang, (TSSymbol)sym);
        if (!name)
            continue;
        TSSymbolType type = ts_language_symbol_type(lang, (TSSymbol)sym);
        if (type == TSSymbolTypeRegular || type == TSSymbolTypeSupertype) {
            for (size_t i = 0; i < OL_ARRAY_LEN(named_kind_names); i++)
                if (named_kind_names[i][0] == name[0] && strcmp(named_kind_names[i], name) == 0) {
                    g->symbol_kind[sym] = (uint16_t)(i + 1);
                    break;
                }
        } else if (type == TSSymbolTypeAnonymous) {
            for (size_t i = 0; i < OL_ARRAY_LEN(token_kind_texts); i++)
                if (token_kind_texts[i][0] == name[0] && strcmp(token_kind_texts[i], name) == 0) {
                    g->symbol_kind[sym] = (uint16_t)(OL_N_ERROR + 1 + i);
                    break;
                }
        }
    }
    g->field_count = ts_language_field_count(lang) + 1;
    g->field_kind = ol_xcalloc(g->field_count, 1);
    for (uint32_t f = 1; f < g->field_count; f++) {
        const char *name = ts_language_field_name_for_id(lang, (TSFieldId)f);
        if (!name)
            continue;
        for (size_t i = 0; i < OL_ARRAY_LEN(field_names); i++)
            if (strcmp(field_names[i], name) == 0)
                g->field_kind[f] = (uint8_t)(i + 1);
    }
    /* the field of each child of each production, so that the walk in
     * flatten() reads it instead of searching the production's field map
     * for every child */
    g->production_count = lang->production_id_count;
    g->child_field_width = 1;
    for (uint32_t p = 0; p < g->production_count && lang->field_count > 0; p++) {
        const TSFieldMapEntry *f, *end;
        ts_language_field_map(lang, p, &f, &end);
        for (; f < end; f++)
            if (f->child_index >= g->child_field_width)
                g->child_field_width = f->child_index + 1u;
    }
    g->child_field = ol_xcalloc((size_t)g->production_count * g->child_field_width + 1, 1);
    for (uint32_t p = 0; p < g->production_count && lang->field_count > 0; p++) {
        const TSFieldMapEntry *f, *end;
        ts_language_field_map(lang, p, &f, &end);
        uint8_t *row = &g->child_field[(size_t)p * g->child_field_width];
        for (; f < end; f++)
            if (!f->inherited && !row[f->child_index])
                row[f->child_index] = (uint8_t)(f->field_id < g->field_count ? f->field_id : 0);
    }
    return true;
}

void ol_grammar_free(ol_grammar *g)
{
    free(g->symbol_kind);
    free(g->symbol_named);
    free(g->field_kind);
    free(g->child_field);
    memset(g, 0, sizeof(*g));
}

void ol_parser_init(ol_parser *p, const ol_grammar *g)
{
    memset(p, 0, sizeof(*p));
    ol_parse_arena_install();
    ol_parse_arena_init(&p->arena);
    p->grammar = g;
    p->timeout_ms = 20000;
}

static void forget_last(ol_parser *p)
{
    if (p->last_tree)
        ts_tree_delete((TSTree *)p->last_tree);
    free(p->last_text);
    p->last_tree = NULL;
    p->last_text = NULL;
    p->last_len = 0;
}

void ol_parser_free(ol_parser *p)
{
    forget_last(p);
    if (p->ts)
        ts_parser_delete((TSParser *)p->ts);
    p->ts = NULL;
    ol_parse_arena_free(&p->arena);
}

static TSPoint point_at(const char *text, uint32_t byte)
{
    TSPoint pt = {0, 0};
    uint32_t line_start = 0;
    for (const char *nl = memchr(text, '\n', byte); nl; nl = memchr(nl + 1, '\n', byte - (uint32_t)(nl + 1 - text))) {
        pt.row++;
        line_start = (uint32_t)(nl - text) + 1;
        if (line_start >= byte)
            break;
    }
    pt.column = byte - line_start;
    return pt;
}

/* The last tree, edited to describe the change from the last text to src
 * (a copy the caller deletes), or NULL. */
static TSTree *edited_last_tree(const ol_parser *p, const char *text, uint32_t len)
{
    if (!p->incremental || !p->last_tree || ts_node_has_error(ts_tree_root_node((const TSTree *)p->last_tree)))
        return NULL;
    const char *a = p->last_text, *b = text;
    uint32_t an = p->last_len, bn = len;
    uint32_t pre = 0;
    while (pre < an && pre < bn && a[pre] == b[pre])
        pre++;
    uint32_t suf = 0;
    while (suf < an - pre && suf < bn - pre && a[an - 1 - suf] == b[bn - 1 - suf])
        suf++;
    TSInputEdit e;
    e.start_byte = pre;
    e.old_end_byte = an - suf;
    e.new_end_byte = bn - suf;
    e.start_point = point_at(a, pre);
    e.old_end_point = point_at(a, an - suf);
    e.new_end_point = point_at(b, bn - suf);
    TSTree *old = ts_tree_copy((const TSTree *)p->last_tree);
    ts_tree_edit(old, &e);
    return old;
}

/* ---- parsing ------------------------------------------------------------ */

typedef struct parse_input {
    const char *text;
    uint32_t len;
} parse_input;

static const char *read_input(void *payload, uint32_t byte, TSPoint pos, uint32_t *bytes_read)
{
    (void)pos;
    const parse_input *in = payload;
    if (byte >= in->len) {
        *bytes_read = 0;
        return "";
    }
    *bytes_read = in->len - byte;
    return in->text + byte;
}

typedef struct parse_deadline {
    struct timespec until;
    bool expired;
    unsigned calls;
} parse_deadline;

/* The budget is the parsing thread's CPU time, not wall time: on a machine
 * whose cores are busy with other work (CI runners, a pre-commit hook beside
 * an IDE), a big file must not be cut off for time it spent waiting. Reading
 * that clock is a system call, and tree-sitter asks every 100 operations:
 * every 32nd question is answered from the clock. */
#define PARSE_CLOCK CLOCK_THREAD_CPUTIME_ID

static bool check_deadline(TSParseState *state)
{
    parse_deadline *d = state->payload;
    if (d->calls++ % 32 != 0)
        return d->expired;
    struct timespec now;
    clock_gettime(PARSE_CLOCK, &now);
    if (now.tv_sec > d->until.tv_sec || (now.tv_sec == d->until.tv_sec && now.tv_nsec >= d->until.tv_nsec))
        d->expired = true;
    return d->expired;
}

/* A short, single-line rendering of the first token inside an error node. */
static void describe_error(const ol_source *src, TSNode node, ol_buf *msg)
{
    TSNode leaf = node;
    while (ts_node_child_count(leaf) > 0)
        leaf = ts_node_child(leaf, 0);
    uint32_t s = ts_node_start_byte(leaf), e = ts_node_end_byte(leaf);
    if (e > src->len)
        e = src->len;
    uint32_t n = 0;
    while (s + n < e && n < 24 && src->text[s + n] != '\n' && src->text[s + n] != '\r')
        n++;
    /* don't cut a UTF-8 sequence in half */
    while (n > 0 && s + n < e && ((unsigned char)src->text[s + n] & 0xC0) == 0x80)
        n--;
    if (n == 0)
        ol_buf_puts(msg, "invalid syntax");
    else
        ol_buf_printf(msg, "invalid syntax near `%.*s`%s", (int)n, src->text + s, s + n < e ? "..." : "");
}

/* A complete statement: what an ERROR node holds of the code before the
 * point where parsing failed. */
static bool whole_statement(TSNode n)
{
    if (!ts_node_is_named(n) || ts_node_has_error(n) || ts_node_is_missing(n))
        return false;
    const char *type = ts_node_type(n);
    return ol_str_has_suffix(type, "_statement") || ol_str_has_suffix(type, "_definition") ||
           strcmp(type, "comment") == 0;
}

/* Where an ERROR node's trouble starts. tree-sitter wraps in one ERROR
 * everything from the start of the construct it could not finish, often
 * the whole file (`import` at line 1 for a stray line in a method 300
 * lines down); the statements it completed before the failure lead the
 * node, and a statement the failure broke shows as a node with an error
 * inside. So: past the leading complete statements, into the first node
 * that holds an error, down to the innermost ERROR or missing token; a
 * fragment met first (`def`, a name: the start of what was never
 * finished) is the place itself. */
static TSNode error_focus(TSNode err)
{
    /* a cursor: ts_node_child(n, i) walks the children from the first each
     * time, and an ERROR over a whole broken file has as many as it has
     * statements */
    TSTreeCursor cur = ts_tree_cursor_new(err);
    TSNode at = err;
    for (int depth = 0; depth < 256 && ts_tree_cursor_goto_first_child(&cur); depth++) {
        bool in_error = ts_node_is_error(at), found = false;
        uint32_t index = 0;
        do {
            TSNode c = ts_tree_cursor_current_node(&cur);
            if (ts_node_is_error(c) || ts_node_is_missing(c) || ts_node_has_error(c)) {
                found = true;
            } else if (in_error && !ts_node_is_extra(c) && !whole_statement(c)) {
                /* a fragment first: the start of what was never finished
                 * (the node itself when nothing complete came before) */
                if (index > 0)
                    at = c;
                ts_tree_cursor_delete(&cur);
                return at;
            }
            index++;
        } while (!found && ts_tree_cursor_goto_next_sibling(&cur));
        if (!found)
            break;
        at = ts_tree_cursor_current_node(&cur);
        if (ts_node_is_missing(at))
            break;
    }
    ts_tree_cursor_delete(&cur);
    return at;
}

/* Records an error at [start, end) of a parser's error region that starts
 * at from (from == start but for an ERROR node reported inside it). */
static void add_error_in(ol_tree *t, uint32_t from, uint32_t start, uint32_t end, char *message)
{
    if (t->errors.len >= 20) {
        free(message);
        return;
    }
    /* underline at most the first line of the error region */
    const ol_source *src = t->src;
    uint32_t stop = start;
    while (stop < end && stop < src->len && src->text[stop] != '\n')
        stop++;
    ol_syntax_error e = {start, stop, message, false, from};
    ol_vec_push(&t->errors, e);
}

static void add_error(ol_tree *t, uint32_t start, uint32_t end, char *message)
{
    add_error_in(t, start, start, end, message);
}

static char *missing_message(const TSLanguage *lang, TSSymbol sym, bool named)
{
    const char *what = ts_language_symbol_name(lang, sym);
    return ol_xasprintf("invalid syntax: missing %s%s%s", named ? "" : "`", what ? what : "?", named ? "" : "`");
}

/* Reports the ERROR node err where its trouble starts (error_focus). */
static void add_error_node(ol_tree *t, TSNode err)
{
    TSNode focus = error_focus(err);
    uint32_t from = ts_node_start_byte(err), start = ts_node_start_byte(focus), end = ts_node_end_byte(focus);
    if (ts_node_is_missing(focus)) {
        add_error_in(t, from, start, start,
                     missing_message(ts_node_language(focus), ts_node_symbol(focus), ts_node_is_named(focus)));
        return;
    }
    ol_buf msg = {0};
    describe_error(t->src, focus, &msg);
    add_error_in(t, from, start, end, ol_buf_take(&msg));
}

/* One level of the walk: the children of one subtree, visible or hidden.
 * Hidden subtrees (the grammar's _rules, repetitions) are walked through:
 * their visible children belong to the nearest kept ancestor, as they do
 * for a TSTreeCursor. */
typedef struct walk_level {
    const Subtree *children;
    uint32_t count, next;  /* children[next] is the next to visit */
    uint32_t structural;   /* index among non-extra children (aliases, fields) */
    uint32_t pos;          /* start byte of children[next] */
    const TSSymbol *aliases;
    const uint8_t *fields; /* the production's row of child_field, or NULL */
    uint32_t frame;        /* the kept node that visible children attach to */
    uint8_t inherited;     /* the field a child without one of its own takes */
    bool owns_frame;       /* the kept node's own children, not a hidden subtree's */
} walk_level;

typedef struct kept_frame {
    ol_nid node, last_child;
    uint32_t depth;
    bool in_error;
} kept_frame;

typedef OL_VEC(walk_level) walk_levels;

static void push_level(walk_levels *levels, const ol_grammar *g, const TSLanguage *lang, Subtree parent, uint32_t pos,
                       uint32_t frame, uint8_t inherited, bool owns_frame)
{
    walk_level l;
    l.children = ts_subtree_children(parent);
    l.count = parent.ptr->child_count;
    l.next = 0;
    l.structural = 0;
    l.pos = pos;
    uint32_t production = parent.ptr->production_id;
    l.aliases = ts_language_alias_sequence(lang, production);
    l.fields = production < g->production_count ? &g->child_field[(size_t)production * g->child_field_width] : NULL;
    l.frame = frame;
    l.inherited = inherited;
    l.owns_frame = owns_frame;
    ol_vec_push(levels, l);
}

static ol_nid push_node(ol_tree *t, ol_kind kind, uint8_t field, uint8_t flags, ol_nid parent, uint32_t start,
                        uint32_t end)
{
    if (end > t->src->len)
        end = t->src->len;
    if (start > end)
        start = end;
    ol_node node = {(uint16_t)kind, field, flags, parent, OL_NONE, OL_NONE, start, end};
    ol_nid id = (ol_nid)t->nodes.len;
    ol_vec_push(&t->nodes, node);
    return id;
}

/* Copies the tree into t->nodes, reading tree-sitter's subtrees directly:
 * the same nodes, fields and ranges a TSTreeCursor walk gives (the unit
 * tests hold the two side by side), for a fraction of the calls. The
 * runtime is pinned (grammar/pins.mk), so its internal layout is too. */
static void flatten(ol_tree *t, const ol_grammar *g, TSTree *tree)
{
    const TSLanguage *lang = tree->language;
    Subtree root = tree->root;
    uint32_t root_start = ts_subtree_padding(root).bytes;
    ol_vec_reserve(&t->nodes, (size_t)ts_subtree_visible_descendant_count(root) + 1);
    uint8_t root_flags = ts_subtree_named(root) ? OL_NF_NAMED : 0;
    bool root_error = ts_subtree_symbol(root) == ts_builtin_sym_error;
    if (root_error)
        root_flags |= OL_NF_ERROR;
    if (ts_subtree_error_cost(root) > 0)
        root_flags |= OL_NF_HAS_ERROR;
    /* the file is the module, even when all of it failed */
    push_node(t, OL_N_module, OL_F_NONE, root_flags, OL_NONE, root_start,
              root_start + ts_subtree_size(root).bytes);
    OL_VEC(kept_frame) frames = {0};
    walk_levels levels = {0};
    kept_frame top = {0, OL_NONE, 1, false};
    if (root_error) {
        add_error_node(t, ts_tree_root_node(tree));
        top.in_error = true;
    }
    ol_vec_push(&frames, top);
    if (ts_subtree_child_count(root) > 0)
        push_level(&levels, g, lang, root, root_start, 0, 0, false);
    while (levels.len > 0) {
        walk_level *l = &levels.items[levels.len - 1];
        if (l->next == l->count) {
            if (l->owns_frame)
                frames.len--;
            levels.len--;
            continue;
        }
        const Subtree *child = &l->children[l->next++];
        uint32_t start = l->pos, end = start + ts_subtree_size(*child).bytes;
        l->pos = end;
        if (l->next < l->count)
            l->pos += ts_subtree_padding(l->children[l->next]).bytes;
        bool extra = ts_subtree_extra(*child);
        TSSymbol alias = 0;
        uint8_t field = 0;
        if (!extra) {
            if (l->aliases)
                alias = l->aliases[l->structural];
            if (l->fields && l->structural < g->child_field_width)
                field = l->fields[l->structural];
            if (!field)
                field = l->inherited;
            l->structural++;
        }
        if (!alias && !ts_subtree_visible(*child)) {
            if (ts_subtree_child_count(*child) > 0)
                push_level(&levels, g, lang, *child, start, l->frame, field, false);
            continue;
        }
        /* a visible node: its owner frame has a visible descendant */
        kept_frame *parent = &frames.items[l->frame];
        if (parent->depth > t->max_depth && l->frame > 0)
            t->max_depth = parent->depth;
        TSSymbol sym = alias ? alias : ts_subtree_symbol(*child);
        bool named = alias ? g->symbol_named[alias] : ts_subtree_named(*child);
        bool is_error = sym == ts_builtin_sym_error;
        if (ts_subtree_missing(*child)) {
            if (!parent->in_error)
                add_error(t, start, start, missing_message(lang, sym, named));
            continue;
        }
        ol_kind k = is_error ? OL_N_ERROR : sym < g->symbol_count ? (ol_kind)g->symbol_kind[sym] : OL_N_OTHER;
        if (k == OL_N_comment) {
            ol_span c = {start, end};
            ol_vec_push(&t->comments, c);
            continue;
        }
        if (k == OL_N_line_continuation || !(named || k != OL_N_OTHER || is_error))
            continue;
        uint8_t flags = (uint8_t)((named ? OL_NF_NAMED : 0) | (is_error ? OL_NF_ERROR : 0) |
                                  (ts_subtree_error_cost(*child) > 0 ? OL_NF_HAS_ERROR : 0));
        ol_nid id = push_node(t, k, g->field_kind[field], flags, parent->node, start, end);
        if (parent->last_child == OL_NONE)
            t->nodes.items[parent->node].first_child = id;
        else
            t->nodes.items[parent->last_child].next_sibling = id;
        parent->last_child = id;
        bool in_error = parent->in_error;
        if (is_error && !in_error) {
            Length at = {start, {0, 0}};
            add_error_node(t, ts_node_new(tree, child, at, alias));
            in_error = true;
        }
        if (ts_subtree_child_count(*child) > 0) {
            kept_frame f = {id, OL_NONE, parent->depth + 1, in_error};
            uint32_t frame = (uint32_t)frames.len;
            ol_vec_push(&frames, f);
            push_level(&levels, g, lang, *child, start, frame, 0, true);
        }
    }
    ol_vec_free(&levels);
    ol_vec_free(&frames);
}

/* tree-sitter-python lets an assignment's right side start on the next line
 * (`lr =` then `x = 1` reads as `lr = x = 1`); CPython does not. Reports
 * each `=` followed by a line break that no backslash continues. */
static void check_dangling_assignments(ol_tree *t)
{
    const ol_source *src = t->src;
    for (ol_nid n = 0; n < t->nodes.len; n++) {
        ol_kind k = (ol_kind)t->nodes.items[n].kind;
        if (k != OL_N_assignment && k != OL_N_augmented_assignment)
            continue;
        ol_nid left = ol_field(t, n, OL_F_left), right = ol_field(t, n, OL_F_right);
        if (left == OL_NONE || right == OL_NONE)
            continue;
        /* inside brackets a line break is fine: only statements matter */
        ol_nid p = t->nodes.items[n].parent;
        if (p != OL_NONE && t->nodes.items[p].kind != OL_N_expression_statement &&
            t->nodes.items[p].kind != OL_N_assignment)
            continue;
        /* from the `=` (after any annotation, which may span lines in brackets) */
        uint32_t from = t->nodes.items[left].end, to = t->nodes.items[right].start;
        ol_nid type = ol_field(t, n, OL_F_type);
        if (type != OL_NONE && t->nodes.items[type].end <= to && t->nodes.items[type].end > from)
            from = t->nodes.items[type].end;
        uint32_t op = from; /* the `=` (or `+=`) itself */
        while (op < to && op < src->len && src->text[op] != '=' && src->text[op] != '\n')
            op++;
        if (op >= to || op >= src->len || src->text[op] != '=')
            op = from;
        while (op > from && src->text[op - 1] != '\0' && strchr("+-*/%@&|^<>", src->text[op - 1]) != NULL)
            op--;
        bool in_comment = false;
        for (uint32_t i = from; i < to && i < src->len; i++) {
            char c = src->text[i];
            if (c == '#')
                in_comment = true;
            if (c != '\n')
                continue;
            uint32_t j = i;
            while (j > from && (src->text[j - 1] == '\r' || src->text[j - 1] == ' ' || src->text[j - 1] == '\t'))
                j--;
            if (!in_comment && j > from && src->text[j - 1] == '\\')
                break; /* explicit continuation */
            /* what the parser then made of the next line is the same mistake */
            size_t kept = 0;
            for (size_t e = 0; e < t->errors.len; e++) {
                ol_syntax_error *err = &t->errors.items[e];
                if (!err->soft && err->start > i && err->start < to)
                    free(err->message);
                else
                    t->errors.items[kept++] = *err;
            }
            t->errors.len = kept;
            add_error(t, op, i, ol_xstrdup("invalid syntax: nothing after `=` on this line"));
            if (t->errors.len > 0)
                ol_vec_last(&t->errors).soft = true;
            break;
        }
    }
}

/* `async` and `await` are keywords since Python 3.7, but the grammar still
 * reads them as names in some places (`x.cuda(async=True)`, `obj.async`),
 * so code written for Python 2 or 3.6 would pass as valid. Reports each
 * such name that no syntax error already covers (one inside an ERROR node
 * is part of an error reported where that node starts). */
static void check_reserved_names(ol_tree *t)
{
    const ol_source *src = t->src;
    size_t parse_errors = t->errors.len;
    for (ol_nid n = 0; n < t->nodes.len; n++) {
        const ol_node *node = &t->nodes.items[n];
        if (node->kind != OL_N_identifier)
            continue;
        uint32_t len = node->end - node->start;
        const char *s = src->text + node->start;
        if (!(len == 5 && memcmp(s, "async", 5) == 0) && !(len == 5 && memcmp(s, "await", 5) == 0))
            continue;
        bool covered = false;
        for (ol_nid a = node->parent; a != OL_NONE && !covered; a = t->nodes.items[a].parent)
            covered = (t->nodes.items[a].flags & OL_NF_ERROR) != 0;
        for (size_t e = 0; e < parse_errors && !covered; e++)
            covered = t->errors.items[e].start <= node->end && node->start <= t->errors.items[e].end;
        if (!covered)
            add_error(t, node->start, node->end,
                      ol_xasprintf("`%.*s` is a keyword since Python 3.7 and cannot be used as a name",
                                   (int)len, s));
    }
}

/* Merges the comments blanked by a gap rewrite into t's, keeping order. */
static void merge_comments(ol_tree *t, const ol_span_vec *blanked)
{
    if (blanked->len == 0)
        return;
    ol_span_vec merged = {0};
    ol_vec_reserve(&merged, t->comments.len + blanked->len);
    size_t a = 0, b = 0;
    while (a < t->comments.len || b < blanked->len) {
        bool take_a = b >= blanked->len ||
                      (a < t->comments.len && t->comments.items[a].start <= blanked->items[b].start);
        ol_vec_push(&merged, take_a ? t->comments.items[a++] : blanked->items[b++]);
    }
    ol_vec_free(&t->comments);
    t->comments = merged;
}

/* tree-sitter balances each tree it finishes (a pass over all of it that
 * rotates the long chains repetitions parse into), which pays only when the
 * tree is edited and parsed again or read through TSNode calls from the
 * root. A tree that is flattened once and dropped with the arena, and has no
 * errors (whose errors are read through TSNode calls), skips that pass
 * (grammar/edit_runtime.py): 3% of oomlint's time on the benchmark's corpus
 * (docs/performance.md). flatten() then walks a chain a level of its stack
 * per item, so a text past this size is balanced as before: at this size, a
 * file of one-letter statements holds 24 MB of levels while it is walked. */
#define OL_UNBALANCED_MAX_SOURCE ((uint32_t)1024 * 1024)

static TSTree *parse_input_with(TSParser *ts, TSTree *old, TSInput input, TSParseOptions options, bool walked_once)
{
    ol_ts_unbalanced = walked_once;
    TSTree *tree = ts_parser_parse_with_options(ts, old, input, options);
    ol_ts_unbalanced = false;
    return tree;
}

/* A tree with errors may be valid Python the grammar cannot read (see
 * syntax_gaps.c): parse the rewritten text, and keep that tree when it has
 * no more errors (the rewrites never break valid code, so what is left is
 * real). Offsets are the same, so the tree still reads src. */
static void reparse_around_gaps(ol_parser *p, TSParser *ts, bool in_arena, const ol_source *src, ol_tree *t,
                                TSParseOptions options)
{
    ol_span_vec blanked = {0};
    char *text = ol_syntax_gap_rewrite(src->text, src->len, &blanked);
    if (!text)
        return;
    parse_input in = {text, src->len};
    TSInput input = {&in, read_input, TSInputEncodingUTF8, NULL};
    TSTree *tree = parse_input_with(ts, NULL, input, options, in_arena && src->len <= OL_UNBALANCED_MAX_SOURCE);
    if (tree) {
        ol_tree alt;
        memset(&alt, 0, sizeof(alt));
        alt.src = src;
        flatten(&alt, p->grammar, tree);
        if (!in_arena)
            ts_tree_delete(tree);
        if (alt.errors.len <= t->errors.len) {
            merge_comments(&alt, &blanked);
            ol_tree_free(t);
            *t = alt;
        } else {
            ol_tree_free(&alt);
        }
    } else {
        ts_parser_reset(ts); /* out of time: the first tree stands */
    }
    free(text);
    ol_vec_free(&blanked);
}

/* ---- long runs of comment lines ------------------------------------------- */

/* tree-sitter-python's external scanner, deciding NEWLINE/INDENT/DEDENT,
 * reads ahead over every comment line that follows, and does so again at
 * each of them: a run of k comment lines costs k^2 (10,000 commented-out
 * lines took seconds; 40,000 ran out of the parse budget and the file went
 * unanalyzed). Blank lines cost nothing there. So runs of at least
 * COMMENT_RUN_MIN comment-only lines are parsed as blank lines (same length:
 * every offset stays put), and their comments are recorded by hand. A run
 * that was really inside a string (a line starting with # in a triple-quoted
 * string) shows in the tree as a token or string over the blanked bytes:
 * then the original text is parsed instead. */
#define COMMENT_RUN_MIN 64

typedef struct comment_run {
    uint32_t start, end; /* from the first line's start to the last line's end */
} comment_run;

typedef OL_VEC(comment_run) comment_runs;

/* The start of the comment on the line at i, or UINT32_MAX when the line
 * holds anything but blanks before a '#'. Sets *next to the next line. */
static uint32_t comment_line(const char *text, uint32_t len, uint32_t i, uint32_t *next)
{
    uint32_t j = i;
    while (j < len && (text[j] == ' ' || text[j] == '\t' || text[j] == '\f'))
        j++;
    uint32_t hash = j < len && text[j] == '#' ? j : UINT32_MAX;
    const char *nl = memchr(text + i, '\n', len - i);
    *next = nl ? (uint32_t)(nl - text) + 1 : len;
    return hash;
}

static void find_comment_runs(const char *text, uint32_t len, comment_runs *out)
{
    uint32_t i = 0, run_start = 0, run_lines = 0;
    while (i < len) {
        uint32_t next;
        uint32_t hash = comment_line(text, len, i, &next);
        if (hash != UINT32_MAX) {
            if (run_lines++ == 0)
                run_start = i;
        } else {
            if (run_lines >= COMMENT_RUN_MIN) {
                comment_run r = {run_start, i};
                ol_vec_push(out, r);
            }
            run_lines = 0;
        }
        i = next;
    }
    if (run_lines >= COMMENT_RUN_MIN) {
        comment_run r = {run_start, len};
        ol_vec_push(out, r);
    }
}

/* Turns [from, to) of text into spaces, its line breaks kept: every
 * offset, line and column stays where it was. */
static void blank_span(char *text, uint32_t from, uint32_t to)
{
    for (uint32_t i = from; i < to; i++)
        if (text[i] != '\n' && text[i] != '\r')
            text[i] = ' ';
}

/* The text with the runs' comments turned into spaces (newlines kept). */
static char *blank_runs(const char *text, uint32_t len, const comment_runs *runs)
{
    char *copy = ol_xmalloc((size_t)len + 1);
    memcpy(copy, text, len);
    copy[len] = '\0';
    for (size_t r = 0; r < runs->len; r++)
        blank_span(copy, runs->items[r].start, runs->items[r].end);
    return copy;
}

/* Did the parse of the blanked text see the runs as blank lines? Only
 * containers (module, blocks, statements, brackets) may span them. */
static bool runs_were_blank(const ol_tree *t, const comment_runs *runs)
{
    for (ol_nid n = 0; n < t->nodes.len; n++) {
        const ol_node *node = &t->nodes.items[n];
        for (size_t r = 0; r < runs->len; r++) {
            const comment_run *run = &runs->items[r];
            if (node->start >= run->end || node->end <= run->start)
                continue;
            bool container = node->first_child != OL_NONE && node->kind != OL_N_string &&
                             node->kind != OL_N_concatenated_string && node->kind != OL_N_ERROR;
            if (!container || node->start > run->start || node->end < run->end)
                return false; /* a token, a string or an error over blanked bytes, or a node that starts
                               * or ends inside the run */
        }
    }
    return true;
}

/* Records the comments of the runs in t->comments, keeping it in order. */
static void add_run_comments(ol_tree *t, const comment_runs *runs)
{
    const char *text = t->src->text;
    uint32_t len = t->src->len;
    for (size_t r = 0; r < runs->len; r++) {
        for (uint32_t i = runs->items[r].start; i < runs->items[r].end;) {
            uint32_t next;
            uint32_t hash = comment_line(text, len, i, &next);
            uint32_t end = next;
            while (end > hash && (text[end - 1] == '\n' || text[end - 1] == '\r'))
                end--;
            if (hash != UINT32_MAX) {
                ol_span c = {hash, end};
                ol_vec_push(&t->comments, c);
            }
            i = next;
        }
    }
    /* the tree's comments and these interleave only by runs: sort */
    for (size_t i = 1; i < t->comments.len; i++) {
        ol_span x = t->comments.items[i];
        size_t j = i;
        while (j > 0 && t->comments.items[j - 1].start > x.start) {
            t->comments.items[j] = t->comments.items[j - 1];
            j--;
        }
        t->comments.items[j] = x;
    }
}

/* Files larger than this are parsed with malloc, not the arena (see
 * parse_text). With freed blocks reused, the arena holds about what malloc
 * does even on deeply nested code (376 against 374 MB for 2 MB of 10,000-deep
 * parentheses, 490 against 434 MB for lists), and its chunks go back to the
 * system when the file is done, where malloc's heap kept the largest parse's
 * memory for the rest of the run; the bound only keeps one chunk list from
 * spanning gigabytes. */
#define OL_ARENA_MAX_SOURCE ((uint32_t)64 * 1024 * 1024)

static void parse_text(ol_parser *p, const ol_source *src, const char *text, ol_tree *t);

void ol_parse(ol_parser *p, const ol_source *src, ol_tree *t)
{
    comment_runs runs = {0};
    find_comment_runs(src->text, src->len, &runs);
    if (runs.len > 0) {
        char *blanked = blank_runs(src->text, src->len, &runs);
        parse_text(p, src, blanked, t);
        free(blanked);
        if (!t->timed_out && runs_were_blank(t, &runs)) {
            add_run_comments(t, &runs);
            ol_vec_free(&runs);
            return;
        }
        ol_tree_free(t);
    }
    ol_vec_free(&runs);
    parse_text(p, src, src->text, t);
}

/* ---- cascades ------------------------------------------------------------ */

/* After a real error (stray prose inside a method, an unclosed bracket) the
 * parser may lose the block structure and recover only at later lines that
 * are valid (`def` after `def`): errors CPython never reports, since it stops
 * at the first. An error is kept when it is still there once the lines of the
 * errors before it are blanked (spaces, same length): the first error always;
 * then, one reparse at a time, the first error after the lines blanked so
 * far, when the file has an error on that line (an error only the blanking
 * made, such as a block left empty, is blanked in turn and not reported).
 * Errors that vanish were the parser's recovery. When a reparse has an
 * error starting in the lines already judged, the errors still to judge are
 * kept. The reparses are bounded (CASCADE_MAX_REPARSES, CASCADE_MAX_BYTES
 * in all); past the bound the errors not yet examined are kept as they are. */
#define CASCADE_MAX_REPARSES 10
#define CASCADE_MAX_BYTES ((size_t)16 * 1024 * 1024)

/* Blanks line `line` of text, a copy of src's (same line breaks: src's line
 * index holds for it); returns where the next line starts. */
static uint32_t blank_line(const ol_source *src, char *text, uint32_t line)
{
    uint32_t from = src->line_starts[line];
    uint32_t to = line + 1 < src->line_count ? src->line_starts[line + 1] : src->len;
    blank_span(text, from, to);
    return to;
}

void ol_drop_cascades(ol_parser *p, const ol_source *src, ol_tree *t)
{
    size_t n = t->errors.len;
    if (t->timed_out || n < 2 || src->len == 0)
        return;
    size_t budget = CASCADE_MAX_BYTES / src->len;
    if (budget > CASCADE_MAX_REPARSES)
        budget = CASCADE_MAX_REPARSES;
    if (budget == 0)
        return;
    /* each error's line, and whether it is kept */
    uint32_t *lines = ol_xcalloc(n, sizeof(*lines));
    bool *keep = ol_xcalloc(n, sizeof(*keep));
    uint32_t first = 0;
    for (size_t i = 0; i < n; i++) {
        lines[i] = ol_source_line_index(src, t->errors.items[i].start);
        if (lines[i] < lines[first])
            first = (uint32_t)i;
    }
    char *text = ol_xstrndup(src->text, src->len);
    ol_source alt = *src;
    alt.text = text;
    uint32_t line = lines[first];
    for (size_t i = 0; i < n; i++)
        keep[i] = lines[i] == line;
    uint32_t settled = blank_line(src, text, line);
    /* the reparses are fresh parses of a scratch text: nothing of them is
     * kept for the next edit */
    bool incremental = p->incremental;
    p->incremental = false;
    bool examined = false;
    for (size_t round = 0; round < budget && !examined; round++) {
        ol_tree again;
        ol_parse(p, &alt, &again);
        const ol_syntax_error *next = NULL;
        bool unsure = again.timed_out;
        for (size_t i = 0; i < again.errors.len && !unsure; i++) {
            const ol_syntax_error *e = &again.errors.items[i];
            /* an error that starts in the lines already judged (a statement
             * those lines began, read on into the next): what it covers
             * cannot be told from here */
            unsure = e->start < settled;
            if (!next || e->start < next->start)
                next = e;
        }
        if (unsure) {
            ol_tree_free(&again);
            break;
        }
        if (!next) {
            examined = true;
        } else {
            line = ol_source_line_index(src, next->start);
            for (size_t i = 0; i < n; i++)
                keep[i] |= lines[i] == line;
            settled = blank_line(src, text, line);
        }
        ol_tree_free(&again);
    }
    p->incremental = incremental;
    size_t kept = 0;
    for (size_t i = 0; i < n; i++) {
        ol_syntax_error *e = &t->errors.items[i];
        if (keep[i] || (!examined && e->start >= settled))
            t->errors.items[kept++] = *e;
        else
            free(e->message);
    }
    t->errors.len = kept;
    free(lines);
    free(keep);
    free(text);
}

/* Parses text (src's own, or a copy of the same length) into t. */
static void parse_text(ol_parser *p, const ol_source *src, const char *text, ol_tree *t)
{
    memset(t, 0, sizeof(*t));
    t->src = src;
    t->absent_reads = ol_xcalloc(1, sizeof(*t->absent_reads));
    parse_input in = {text, src->len};
    TSInput input = {&in, read_input, TSInputEncodingUTF8, NULL};
    parse_deadline deadline = {{0, 0}, false, 0};
    /* the budget grows with the text, a second per megabyte (a parse runs at
     * 3-7 MB/s, and slower on a core another process shares), so that only
     * a parse gone far past linear is stopped: a fixed 20 s cut off a 50 MB
     * file on a busy machine */
    uint64_t budget_ms = (uint64_t)p->timeout_ms + src->len / 1000;
    clock_gettime(PARSE_CLOCK, &deadline.until);
    deadline.until.tv_sec += (time_t)(budget_ms / 1000);
    deadline.until.tv_nsec += (long)(budget_ms % 1000) * 1000000L;
    if (deadline.until.tv_nsec >= 1000000000L) {
        deadline.until.tv_sec++;
        deadline.until.tv_nsec -= 1000000000L;
    }
    TSParseOptions options = {&deadline, check_deadline};
    /* A parser per file, in the arena with everything it makes: a parser
     * kept across files would keep arena blocks (its subtree pool, its
     * stack) past the end of the scope. Making one costs a few hundred
     * instructions. An incremental parser keeps its tree for the next
     * parse, so it keeps one tree-sitter parser and allocates with libc;
     * so does a file over OL_ARENA_MAX_SOURCE. */
    bool in_arena = !p->incremental && src->len <= OL_ARENA_MAX_SOURCE;
    TSParser *ts;
    if (in_arena) {
        ol_parse_arena_begin(&p->arena);
        ts = ts_parser_new();
        ts_parser_set_language(ts, (const TSLanguage *)p->grammar->language);
    } else {
        if (!p->ts) {
            p->ts = ts_parser_new();
            ts_parser_set_language((TSParser *)p->ts, (const TSLanguage *)p->grammar->language);
        }
        ts = (TSParser *)p->ts;
    }
    /* Error recovery can place errors differently when reparsing than when
     * parsing afresh, and findings must match a fresh run's: a text with
     * syntax errors is parsed afresh, and so is the next one (while a file
     * stays broken, one parse per edit, not two). */
    /* the last tree is of the text it parsed (comment runs blanked or not):
     * edits are taken against that text, so no subtree is reused for bytes
     * that differ */
    TSTree *old = edited_last_tree(p, text, src->len);
    bool walked_once = in_arena && src->len <= OL_UNBALANCED_MAX_SOURCE;
    TSTree *tree = parse_input_with(ts, old, input, options, walked_once);
    if (old) {
        ts_tree_delete(old);
        if (tree && ts_node_has_error(ts_tree_root_node(tree))) {
            ts_tree_delete(tree);
            tree = parse_input_with(ts, NULL, input, options, walked_once);
        }
    }
    forget_last(p);
    if (!tree) {
        if (in_arena) {
            ts_parser_delete(ts);
            ol_parse_arena_end(&p->arena);
        } else {
            ts_parser_reset(ts);
        }
        t->timed_out = deadline.expired;
        ol_node root = {OL_N_module, OL_F_NONE, OL_NF_NAMED, OL_NONE, OL_NONE, OL_NONE, 0, src->len};
        ol_vec_push(&t->nodes, root);
        add_error(t, 0, 0,
                  ol_xasprintf(t->timed_out ? "parsing took longer than %llu ms of CPU time and was stopped; the file "
                                              "was not analyzed"
                                            : "the parser gave up on this file (%llu ms budget); it was not "
                                              "analyzed",
                               (unsigned long long)budget_ms));
        return;
    }
    flatten(t, p->grammar, tree);
    bool broken = ts_node_has_error(ts_tree_root_node(tree));
    /* a broken text's tree is not kept for the next edit: it is parsed
     * afresh (see above), and the gap rewrite below replaces it anyway.
     * In the arena there is no ts_tree_delete: the tree is arena memory,
     * dropped with the rest. */
    if (p->incremental && !broken) {
        p->last_tree = tree;
        p->last_text = ol_xstrndup(text, src->len);
        p->last_len = src->len;
    } else if (!in_arena) {
        ts_tree_delete(tree);
    }
    if (broken)
        reparse_around_gaps(p, ts, in_arena, src, t, options);
    /* The parser is deleted because its external scanner allocates with
     * libc, not through tree-sitter's allocator. */
    if (in_arena) {
        ts_parser_delete(ts);
        ol_parse_arena_end(&p->arena);
    }
    check_dangling_assignments(t);
    check_reserved_names(t);
}

static void free_messages(ol_syntax_error *errors, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(errors[i].message);
}

void ol_tree_free(ol_tree *t)
{
    free_messages(t->errors.items, t->errors.len);
    ol_vec_free(&t->errors);
    ol_vec_free(&t->nodes);
    ol_vec_free(&t->comments);
    free(t->absent_reads);
    memset(t, 0, sizeof(*t));
}

/* ---- packed trees ------------------------------------------------------ */

/* Most bytes a node packs to: a varint of up to 5 bytes for each of its
 * kind, parent, start and length, and one byte for its field (five bits)
 * and flags (three). */
#define PACKED_NODE_MAX 21
_Static_assert(OL_FIELD_COUNT <= 32, "a packed node keeps its field in five bits");
_Static_assert((OL_NF_NAMED | OL_NF_ERROR | OL_NF_HAS_ERROR) < 8, "a packed node keeps its flags in three bits");

static uint8_t *put_varint(uint8_t *o, uint32_t v)
{
    while (v >= 0x80) {
        *o++ = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    *o++ = (uint8_t)v;
    return o;
}

static uint32_t get_varint(const uint8_t **p)
{
    uint32_t v = 0;
    for (unsigned shift = 0;; shift += 7) {
        uint8_t c = *(*p)++;
        v |= (uint32_t)(c & 0x7f) << shift;
        if (!(c & 0x80))
            return v;
    }
}

void ol_tree_pack(ol_tree *t, ol_packed_tree *out)
{
    uint8_t *bytes = ol_xmalloc(t->nodes.len * PACKED_NODE_MAX + 1);
    uint8_t *o = bytes;
    uint32_t prev_start = 0;
    for (size_t i = 0; i < t->nodes.len; i++) {
        const ol_node *n = &t->nodes.items[i];
        o = put_varint(o, n->kind);
        *o++ = (uint8_t)(n->field | n->flags << 5);
        /* the module has no parent: 0, every other node's parent is before it */
        o = put_varint(o, n->parent == OL_NONE ? 0 : (uint32_t)i - n->parent);
        /* in the tree's order a start mostly moves forward: zigzag for the rest */
        int64_t d = (int64_t)n->start - (int64_t)prev_start;
        o = put_varint(o, d >= 0 ? (uint32_t)(d << 1) : (uint32_t)((-d << 1) - 1));
        o = put_varint(o, n->end - n->start);
        prev_start = n->start;
    }
    out->len = (size_t)(o - bytes);
    out->bytes = ol_xrealloc(bytes, out->len ? out->len : 1);
    out->count = t->nodes.len;
    out->comments = t->comments;
    out->errors = t->errors;
    out->max_depth = t->max_depth;
    memset(&t->comments, 0, sizeof(t->comments));
    memset(&t->errors, 0, sizeof(t->errors));
    ol_tree_free(t);
}

void ol_tree_unpack(ol_packed_tree *in, const ol_source *src, ol_tree *t)
{
    memset(t, 0, sizeof(*t));
    t->src = src;
    t->absent_reads = ol_xcalloc(1, sizeof(*t->absent_reads));
    ol_vec_reserve(&t->nodes, in->count ? in->count : 1);
    /* each node's last child so far, to link the next one after it */
    ol_nid *last = ol_xmalloc((in->count ? in->count : 1) * sizeof(ol_nid));
    const uint8_t *p = in->bytes;
    uint32_t prev_start = 0;
    for (size_t i = 0; i < in->count; i++) {
        ol_node n;
        n.kind = (uint16_t)get_varint(&p);
        n.field = *p & 31;
        n.flags = *p++ >> 5;
        uint32_t back = get_varint(&p);
        n.parent = back ? (ol_nid)(i - back) : OL_NONE;
        uint32_t z = get_varint(&p);
        n.start = (z & 1) ? prev_start - ((z + 1) >> 1) : prev_start + (z >> 1);
        n.end = n.start + get_varint(&p);
        n.first_child = OL_NONE;
        n.next_sibling = OL_NONE;
        prev_start = n.start;
        ol_nid id = (ol_nid)i;
        last[i] = OL_NONE;
        if (n.parent != OL_NONE) {
            if (last[n.parent] == OL_NONE)
                t->nodes.items[n.parent].first_child = id;
            else
                t->nodes.items[last[n.parent]].next_sibling = id;
            last[n.parent] = id;
        }
        ol_vec_push(&t->nodes, n);
    }
    free(last);
    t->comments = in->comments;
    t->errors = in->errors;
    t->max_depth = in->max_depth;
    memset(&in->comments, 0, sizeof(in->comments));
    memset(&in->errors, 0, sizeof(in->errors));
    ol_packed_tree_free(in);
}

void ol_packed_tree_free(ol_packed_tree *p)
{
    free_messages(p->errors.items, p->errors.len);
    ol_vec_free(&p->errors);
    ol_vec_free(&p->comments);
    free(p->bytes);
    memset(p, 0, sizeof(*p));
}

/* ---- navigation --------------------------------------------------------- */

const ol_node *ol_absent_node(const ol_tree *t, ol_nid n)
{
    static const ol_node absent = {OL_N_OTHER, OL_F_NONE, 0, OL_NONE, OL_NONE, OL_NONE, 0, 0};
#ifdef OL_STRICT_NODES
    fprintf(stderr, "oomlint: internal error: node %u read, the tree has %zu nodes\n", (unsigned)n, t->nodes.len);
    (void)absent;
    abort();
#else
    (void)n;
    if (t->absent_reads)
        (*t->absent_reads)++;
    return &absent;
#endif
}

ol_nid ol_named_child(const ol_tree *t, ol_nid n, uint32_t i)
{
    ol_nid c = ol_first_named(t, n);
    while (c != OL_NONE && i-- > 0)
        c = ol_next_named(t, c);
    return c;
}

uint32_t ol_named_count(const ol_tree *t, ol_nid n)
{
    uint32_t count = 0;
    for (ol_nid c = ol_first_named(t, n); c != OL_NONE; c = ol_next_named(t, c))
        count++;
    return count;
}

ol_nid ol_ancestor(const ol_tree *t, ol_nid n, ol_kind k)
{
    for (ol_nid a = ol_parent(t, n); a != OL_NONE; a = t->nodes.items[a].parent)
        if (t->nodes.items[a].kind == k)
            return a;
    return OL_NONE;
}

bool ol_contains(const ol_tree *t, ol_nid a, ol_nid b)
{
    if (a == OL_NONE || b == OL_NONE)
        return false;
    const ol_node *na = &t->nodes.items[a], *nb = &t->nodes.items[b];
    if (a == b)
        return true;
    /* byte ranges nest in a syntax tree; a zero-width node needs the walk */
    if (nb->start < na->start || nb->end > na->end)
        return false;
    for (ol_nid p = nb->parent; p != OL_NONE; p = t->nodes.items[p].parent)
        if (p == a)
            return true;
    return false;
}

bool ol_text_is(const ol_tree *t, ol_nid n, const char *s)
{
    if (n == OL_NONE)
        return false;
    uint32_t len;
    const char *p = ol_text(t, n, &len);
    return ol_mem_eq_cstr(p, len, s);
}

ol_nid ol_tail_name(const ol_tree *t, ol_nid n)
{
    n = ol_unparen(t, n);
    if (n != OL_NONE && t->nodes.items[n].kind == OL_N_attribute)
        n = ol_field(t, n, OL_F_attribute);
    return n != OL_NONE && t->nodes.items[n].kind == OL_N_identifier ? n : OL_NONE;
}

bool ol_string_value(const ol_tree *t, ol_nid n, const char **s, uint32_t *len)
{
    n = ol_unparen(t, n);
    if (n == OL_NONE || ol_kind_of(t, n) != OL_N_string)
        return false;
    ol_nid content = OL_NONE;
    for (ol_nid c = ol_first(t, n); c != OL_NONE; c = ol_next(t, c)) {
        ol_kind k = ol_kind_of(t, c);
        if (k == OL_N_string_start) {
            uint32_t sl;
            const char *st = ol_text(t, c, &sl);
            for (uint32_t i = 0; i < sl; i++)
                if (st[i] == 'f' || st[i] == 'F' || st[i] == 'b' || st[i] == 'B')
                    return false;
        } else if (k == OL_N_string_content) {
            if (content != OL_NONE)
                return false;
            content = c;
        } else if (k == OL_N_interpolation || k == OL_N_escape_sequence) {
            return false;
        }
    }
    if (content == OL_NONE) {
        *s = "";
        *len = 0;
        return true;
    }
    if (ol_first(t, content) != OL_NONE)
        return false; /* escapes inside */
    *s = ol_text(t, content, len);
    return true;
}

ol_nid ol_statement_of(const ol_tree *t, ol_nid n)
{
    while (n != OL_NONE) {
        ol_nid p = ol_parent(t, n);
        if (p == OL_NONE)
            return n;
        ol_kind pk = ol_kind_of(t, p);
        if (pk == OL_N_block || pk == OL_N_module)
            return n;
        n = p;
    }
    return n;
}

char *ol_node_str(const ol_tree *t, ol_nid n)
{
    uint32_t len;
    const char *s = ol_text(t, n, &len);
    return ol_xstrndup(s, len);
}

char *ol_node_str_short(const ol_tree *t, ol_nid n)
{
    char *s = ol_node_str(t, n);
    if (strlen(s) > 40)
        strcpy(s + 37, "...");
    return s;
}

ol_nid ol_node_covering(const ol_tree *t, uint32_t start, uint32_t end)
{
    size_t count = t->nodes.len;
    if (count == 0)
        return OL_NONE;
    /* the nodes are in pre-order, so by start: the last one starting at or
     * before `start` is the innermost there, or lies in a sibling subtree
     * that ends before it; its parents lead to the node that holds the
     * range (a binary search and a walk up: a finding costs the depth of
     * the tree, not the width of a level) */
    size_t lo = 0, hi = count;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (t->nodes.items[mid].start <= start)
            lo = mid + 1;
        else
            hi = mid;
    }
    ol_nid n = lo ? (ol_nid)(lo - 1) : 0;
    while (n != 0 && n != OL_NONE) {
        const ol_node *cn = &t->nodes.items[n];
        if (cn->start <= start && end <= cn->end && !(cn->start == cn->end && start != end))
            return n;
        n = cn->parent;
    }
    return 0;
}
