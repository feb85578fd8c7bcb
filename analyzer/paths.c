/*
 * paths.c - the files a path names (see saves.h): the file-name literals it
 * is spelled with, also through the names it is bound to, the shapes it may
 * take, and whether it names the rank. What links a `torch.load` to the
 * `torch.save` that wrote its file.
 */
#include "saves.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dataflow.h"
#include "eval.h"
#include "util.h"

/* ---- file-name literals ------------------------------------------------------------- */

/* The file name an f-string ends with (`f"{root}/adjacency.pt"`): the text
 * after the last interpolation, from its last "/" on. */
static bool fstring_file(const ol_tree *t, ol_nid n, const char **s, uint32_t *len)
{
    ol_nid last = OL_NONE, tail = OL_NONE;
    bool interpolated = false;
    for (ol_nid p = ol_first_named(t, n); p != OL_NONE; p = ol_next_named(t, p)) {
        ol_kind k = ol_kind_of(t, p);
        interpolated |= k == OL_N_interpolation;
        if (k != OL_N_string_start && k != OL_N_string_end)
            last = p;
    }
    if (!interpolated || last == OL_NONE || ol_kind_of(t, last) != OL_N_string_content)
        return false;
    tail = last;
    uint32_t n_text;
    const char *text = ol_text(t, tail, &n_text);
    for (uint32_t i = n_text; i > 0; i--)
        if (text[i - 1] == '/') {
            *s = text + i;
            *len = n_text - i;
            return *len > 0;
        }
    return false;
}

bool ol_file_literal(const ol_tree *t, ol_nid n, const char **s, uint32_t *len)
{
    if (ol_kind_of(t, n) != OL_N_string || (!ol_string_value(t, n, s, len) && !fstring_file(t, n, s, len)))
        return false;
    const char *base = *s;
    for (uint32_t i = 0; i < *len; i++) {
        if ((*s)[i] == ' ')
            return false;
        if ((*s)[i] == '/')
            base = *s + i + 1;
    }
    const char *dot = memchr(base, '.', (size_t)(*s + *len - base));
    return dot && dot > base && dot + 1 < *s + *len;
}

size_t ol_file_literals(const ol_tree *t, ol_nid e, const char **s, uint32_t *len, size_t cap)
{
    size_t n = 0;
    for (ol_nid x = e; n < cap && x < t->nodes.len && t->nodes.items[x].start < t->nodes.items[e].end; x++)
        if (ol_file_literal(t, x, &s[n], &len[n]))
            n++;
    return n;
}

/* how many bindings deep ol_path_literals follows a path's names */
#define PATH_LITERAL_DEPTH 3

static void path_literals_at(ol_model *m, ol_nid e, int depth, const char **s, uint32_t *len, size_t cap, size_t *n)
{
    const ol_tree *t = m->tree;
    for (ol_nid x = e; *n < cap && x < t->nodes.len && t->nodes.items[x].start < t->nodes.items[e].end; x++) {
        if (ol_file_literal(t, x, &s[*n], &len[*n])) {
            (*n)++;
            continue;
        }
        if (depth >= PATH_LITERAL_DEPTH || ol_kind_of(t, x) != OL_N_identifier)
            continue;
        /* a name, not an attribute's (`args.checkpoint`) or a keyword's */
        ol_nid up = ol_parent(t, x);
        ol_kind uk = up != OL_NONE ? ol_kind_of(t, up) : OL_N_module;
        if ((uk == OL_N_attribute && ol_field(t, up, OL_F_attribute) == x) ||
            (uk == OL_N_keyword_argument && ol_field(t, up, OL_F_name) == x))
            continue;
        uint32_t defs[4];
        size_t count = ol_reaching_defs(m, m->node_scope[x], ol_node_sym(m, x), x, defs, 4);
        for (size_t i = 0; i < count && count < 4; i++) {
            const ol_def *d = &m->defs.items[defs[i]];
            if (d->kind == OL_DEF_ASSIGN && d->path_len == 0 && !d->starred && d->value != OL_NONE)
                path_literals_at(m, d->value, depth + 1, s, len, cap, n);
        }
    }
}

size_t ol_path_literals(ol_model *m, ol_nid e, const char **s, uint32_t *len, size_t cap)
{
    size_t n = 0;
    if (e != OL_NONE)
        path_literals_at(m, e, 0, s, len, cap, &n);
    return n;
}

/* ---- path shapes -------------------------------------------------------------------- */

/* steps one path's shapes may take at most */
#define SHAPE_MAX_DEPTH 6
#define SHAPE_MAX_STEPS 400

typedef struct shaping {
    ol_model *m;
    int steps;
} shaping;

static void shapes_clear(ol_shapes *s)
{
    for (size_t i = 0; i < s->len; i++)
        free(s->items[i]);
    s->len = 0;
}

void ol_shapes_free(ol_shapes *s)
{
    shapes_clear(s);
}

static bool shapes_has(const ol_shapes *s, const char *x)
{
    for (size_t i = 0; i < s->len; i++)
        if (strcmp(s->items[i], x) == 0)
            return true;
    return false;
}

/* Adds x (taken) to s unless it is there already; false when s is full. */
static bool shapes_add(ol_shapes *s, char *x)
{
    if (shapes_has(s, x)) {
        free(x);
        return true;
    }
    if (s->len == OL_SHAPES_MAX) {
        free(x);
        return false;
    }
    s->items[s->len++] = x;
    return true;
}

bool ol_shapes_add(ol_shapes *s, const char *x)
{
    return shapes_add(s, ol_xstrdup(x));
}

bool ol_shapes_meet(const ol_shapes *a, const ol_shapes *b)
{
    for (size_t i = 0; i < a->len; i++)
        if (shapes_has(b, a->items[i]))
            return true;
    return false;
}

bool ol_shapes_has(const ol_shapes *s, const char *x)
{
    if (shapes_has(s, x))
        return true;
    /* "fn#3(": any call of that function */
    for (size_t i = 0; i < s->len; i++) {
        size_t n = strlen(s->items[i]);
        if (n > 0 && s->items[i][n - 1] == '(' && strncmp(s->items[i], x, n) == 0)
            return true;
    }
    return false;
}

/* Every shape of s followed by the text x. */
static void shapes_append(ol_shapes *s, const char *x, size_t n)
{
    for (size_t i = 0; i < s->len; i++) {
        size_t have = strlen(s->items[i]);
        s->items[i] = ol_xrealloc(s->items[i], have + n + 1);
        memcpy(s->items[i] + have, x, n);
        s->items[i][have + n] = '\0';
    }
}

static void shapes_puts(ol_shapes *s, const char *x)
{
    shapes_append(s, x, strlen(x));
}

/* s := every shape of s followed by every shape of tail; false when that
 * makes too many. */
static bool shapes_concat(ol_shapes *s, const ol_shapes *tail)
{
    ol_shapes out = {0};
    bool ok = true;
    for (size_t i = 0; i < s->len && ok; i++)
        for (size_t j = 0; j < tail->len && ok; j++)
            ok = shapes_add(&out, ol_xasprintf("%s%s", s->items[i], tail->items[j]));
    shapes_clear(s);
    *s = out;
    return ok;
}

static bool shape_of(shaping *c, ol_nid e, int depth, ol_shapes *out);

/* s := s followed by the shapes of e. */
static bool shapes_then(shaping *c, ol_shapes *s, ol_nid e, int depth)
{
    ol_shapes part = {0};
    bool ok = shape_of(c, e, depth, &part) && shapes_concat(s, &part);
    shapes_clear(&part);
    return ok;
}

/* Adds the shapes of e to out. */
static bool shapes_union(shaping *c, ol_shapes *out, ol_nid e, int depth)
{
    ol_shapes part = {0};
    bool ok = shape_of(c, e, depth, &part);
    for (size_t i = 0; ok && i < part.len; i++) {
        ok = shapes_add(out, part.items[i]);
        part.items[i] = NULL;
    }
    for (size_t i = 0; i < part.len; i++)
        free(part.items[i]);
    return ok;
}

/* A name: what each binding that reaches it holds. A binding whose value
 * is not followed (a parameter, an unpacking, a loop over something else
 * than a literal) is a token of its own, so that the same parameter in
 * two functions is two different files. */
static bool name_shapes(shaping *c, ol_nid e, int depth, ol_shapes *out)
{
    ol_model *m = c->m;
    const ol_tree *t = m->tree;
    uint32_t defs[8];
    ol_sym name = ol_node_sym(m, e);
    size_t n = ol_reaching_defs(m, m->node_scope[e], name, e, defs, 8);
    if (n == 8)
        return false;
    if (n == 0)
        return ol_shapes_add(out, ol_sym_str(m, name));
    for (size_t i = 0; i < n; i++) {
        const ol_def *d = &m->defs.items[defs[i]];
        ol_nid v = d->value != OL_NONE ? ol_unparen(t, d->value) : OL_NONE;
        bool ok;
        if (d->kind == OL_DEF_ASSIGN && d->path_len == 0 && !d->starred && v != OL_NONE) {
            ok = shapes_union(c, out, v, depth + 1);
        } else if (d->kind == OL_DEF_FOR && d->path_len == 0 && !d->starred && v != OL_NONE &&
                   (ol_kind_of(t, v) == OL_N_tuple || ol_kind_of(t, v) == OL_N_list)) {
            /* `for name in (A, B)`: each of them */
            ok = true;
            for (ol_nid a = ol_first_named(t, v); a != OL_NONE && ok; a = ol_next_named(t, a))
                ok = shapes_union(c, out, a, depth + 1);
        } else if (d->kind == OL_DEF_PARAM && d->index == 0 &&
                   (strcmp(ol_sym_str(m, name), "self") == 0 || strcmp(ol_sym_str(m, name), "cls") == 0)) {
            ok = ol_shapes_add(out, "self");
        } else if (d->kind == OL_DEF_IMPORT && d->qual) {
            ok = ol_shapes_add(out, ol_sym_str(m, d->qual));
        } else {
            ok = shapes_add(out, ol_xasprintf("%s#%u", ol_sym_str(m, name), defs[i]));
        }
        if (!ok)
            return false;
    }
    return true;
}

/* A string: its value in one spelling, an f-string's interpolations by
 * their shapes (`f'{d}/x.pt'` and `f"{d}/x.pt"` are one shape). */
static bool string_shapes(shaping *c, ol_nid e, int depth, ol_shapes *out)
{
    const ol_tree *t = c->m->tree;
    const char *s;
    uint32_t len;
    if (ol_string_value(t, e, &s, &len)) {
        char *x = ol_xmalloc((size_t)len + 3);
        x[0] = '"';
        memcpy(x + 1, s, len);
        x[len + 1] = '"';
        x[len + 2] = '\0';
        return shapes_add(out, x);
    }
    if (!ol_shapes_add(out, "f\""))
        return false;
    for (ol_nid p = ol_first_named(t, e); p != OL_NONE; p = ol_next_named(t, p)) {
        ol_kind k = ol_kind_of(t, p);
        if (k == OL_N_string_content || k == OL_N_escape_sequence) {
            uint32_t n;
            const char *text = ol_text(t, p, &n);
            shapes_append(out, text, n);
        } else if (k == OL_N_interpolation) {
            ol_nid x = ol_first_named(t, p);
            if (x == OL_NONE)
                return false;
            shapes_puts(out, "{");
            if (!shapes_then(c, out, x, depth + 1))
                return false;
            /* a conversion or format spec (`!r`, `:03d`) stays as written */
            uint32_t n;
            const char *text = ol_text(t, p, &n);
            uint32_t from = ol_node_at(t, x)->end - ol_node_at(t, p)->start;
            shapes_append(out, text + from, from < n ? n - from : 0);
        } else if (k != OL_N_string_start && k != OL_N_string_end) {
            return false;
        }
    }
    shapes_puts(out, "\"");
    return true;
}

static bool shape_of(shaping *c, ol_nid e, int depth, ol_shapes *out)
{
    ol_model *m = c->m;
    const ol_tree *t = m->tree;
    e = ol_unparen(t, e);
    if (e == OL_NONE || depth > SHAPE_MAX_DEPTH || --c->steps < 0)
        return false;
    uint32_t n;
    switch (ol_kind_of(t, e)) {
    case OL_N_identifier:
        return name_shapes(c, e, depth, out);
    case OL_N_string:
        return string_shapes(c, e, depth, out);
    case OL_N_concatenated_string:
        if (!ol_shapes_add(out, ""))
            return false;
        for (ol_nid p = ol_first_named(t, e); p != OL_NONE; p = ol_next_named(t, p))
            if (!shapes_then(c, out, p, depth + 1))
                return false;
        return true;
    case OL_N_integer:
    case OL_N_float:
    case OL_N_true:
    case OL_N_false:
    case OL_N_none: {
        const char *text = ol_text(t, e, &n);
        return shapes_add(out, ol_xstrndup(text, n));
    }
    case OL_N_attribute: {
        if (!shape_of(c, ol_field(t, e, OL_F_object), depth + 1, out))
            return false;
        const char *text = ol_text(t, ol_field(t, e, OL_F_attribute), &n);
        shapes_puts(out, ".");
        shapes_append(out, text, n);
        return true;
    }
    case OL_N_subscript:
        if (!shape_of(c, ol_field(t, e, OL_F_value), depth + 1, out))
            return false;
        shapes_puts(out, "[");
        if (!shapes_then(c, out, ol_field(t, e, OL_F_subscript), depth + 1))
            return false;
        shapes_puts(out, "]");
        return true;
    case OL_N_binary_operator: {
        ol_nid l = ol_field(t, e, OL_F_left), r = ol_field(t, e, OL_F_right);
        if (!shape_of(c, l, depth + 1, out))
            return false;
        /* the operator, without the spaces around it */
        const char *src = ol_text(t, e, &n);
        uint32_t from = ol_node_at(t, l)->end - ol_node_at(t, e)->start;
        uint32_t to = ol_node_at(t, r)->start - ol_node_at(t, e)->start;
        for (uint32_t i = from; i < to && i < n; i++)
            if (src[i] != ' ' && src[i] != '\t' && src[i] != '\n' && src[i] != '\\' && src[i] != '\r' &&
                src[i] != '(' && src[i] != ')')
                shapes_append(out, src + i, 1);
        return shapes_then(c, out, r, depth + 1);
    }
    case OL_N_conditional_expression: {
        /* `A if cond else B`: either */
        ol_nid body = ol_first_named(t, e);
        ol_nid cond = body != OL_NONE ? ol_next_named(t, body) : OL_NONE;
        ol_nid other = cond != OL_NONE ? ol_next_named(t, cond) : OL_NONE;
        return other != OL_NONE && shapes_union(c, out, body, depth + 1) && shapes_union(c, out, other, depth + 1);
    }
    case OL_N_call: {
        ol_nid callee = ol_unparen(t, ol_field(t, e, OL_F_function));
        ol_nid args = ol_field(t, e, OL_F_arguments);
        if (args == OL_NONE || ol_kind_of(t, args) != OL_N_argument_list)
            return false;
        /* `super().folder`: the object's own attribute */
        if (ol_kind_of(t, callee) == OL_N_identifier && ol_text_is(t, callee, "super") &&
            ol_first_named(t, args) == OL_NONE)
            return ol_shapes_add(out, "self");
        /* a function of this source names the file (`self.ckpt_path(epoch)`):
         * it is the shape, with the string literals it is given
         * (`path_of("feats.pt")` is not `path_of("model.pt")`) but whatever
         * else it is given (the epoch) as "*" */
        uint32_t fn = ol_callee_function(m, e);
        if (fn != OL_NO_INDEX) {
            ol_buf b = {0};
            ol_buf_printf(&b, "fn#%u(", fn);
            for (ol_nid a = ol_first_named(t, args); a != OL_NONE; a = ol_next_named(t, a)) {
                ol_nid v = ol_kind_of(t, a) == OL_N_keyword_argument ? ol_field(t, a, OL_F_value) : a;
                const char *str;
                uint32_t len;
                if (v != a) {
                    const char *name = ol_text(t, ol_field(t, a, OL_F_name), &len);
                    ol_buf_printf(&b, "%.*s=", (int)len, name);
                }
                if (ol_kind_of(t, v) == OL_N_string && ol_string_value(t, v, &str, &len))
                    ol_buf_printf(&b, "\"%.*s\",", (int)len, str);
                else
                    ol_buf_puts(&b, "*,");
            }
            ol_buf_puts(&b, ")");
            return shapes_add(out, ol_buf_take(&b));
        }
        if (!shape_of(c, callee, depth + 1, out))
            return false;
        shapes_puts(out, "(");
        bool first = true;
        for (ol_nid a = ol_first_named(t, args); a != OL_NONE; a = ol_next_named(t, a)) {
            if (!first)
                shapes_puts(out, ",");
            first = false;
            ol_nid v = a;
            if (ol_kind_of(t, a) == OL_N_keyword_argument) {
                const char *name = ol_text(t, ol_field(t, a, OL_F_name), &n);
                shapes_append(out, name, n);
                shapes_puts(out, "=");
                v = ol_field(t, a, OL_F_value);
            } else if (ol_kind_of(t, a) == OL_N_list_splat || ol_kind_of(t, a) == OL_N_dictionary_splat) {
                return false;
            }
            if (!shapes_then(c, out, v, depth + 1))
                return false;
        }
        shapes_puts(out, ")");
        return true;
    }
    default:
        return false;
    }
}

bool ol_path_shapes(ol_model *m, ol_nid e, ol_shapes *out)
{
    shaping c = {m, SHAPE_MAX_STEPS};
    out->len = 0;
    if (e != OL_NONE && shape_of(&c, e, 0, out))
        return true;
    shapes_clear(out);
    return false;
}

/* ---- per-rank paths ----------------------------------------------------------------- */

static bool names_rank(const char *s, uint32_t len)
{
    /* `rank`, `local_rank`, `trainer.global_rank`, `get_rank()`, `rank_id`;
     * not `ranking` */
    for (uint32_t i = 0; i + 4 <= len; i++)
        if (ol_mem_ieq(s + i, "rank", 4) && (i == 0 || s[i - 1] == '_') &&
            (i + 4 == len || s[i + 4] == '_' || (s[i + 4] >= '0' && s[i + 4] <= '9')))
            return true;
    return ol_mem_eq_cstr(s, len, "process_index") || ol_mem_eq_cstr(s, len, "local_process_index");
}

static bool mentions_rank(ol_model *m, ol_nid e, int depth)
{
    const ol_tree *t = m->tree;
    if (e == OL_NONE || depth > 4)
        return false;
    for (ol_nid x = e; x < t->nodes.len && x < m->subtree_end[e]; x++) {
        if (ol_kind_of(t, x) != OL_N_identifier)
            continue;
        uint32_t len;
        const char *s = ol_text(t, x, &len);
        if (names_rank(s, len))
            return true;
        ol_nid p = ol_parent(t, x);
        if (ol_node_at(t, x)->field == OL_F_attribute) {
            /* `self.path`: what the class assigns to it */
            ol_nid obj = ol_unparen(t, ol_field(t, p, OL_F_object));
            uint32_t fn = ol_function_of(m, x);
            if (obj == OL_NONE || ol_kind_of(t, obj) != OL_N_identifier || !ol_text_is(t, obj, "self") ||
                fn == OL_NO_INDEX || m->functions.items[fn].cls == OL_NO_INDEX)
                continue;
            const ol_member *attrs;
            size_t count = ol_class_attrs_named(m, m->functions.items[fn].cls, ol_node_sym(m, x), &attrs);
            for (size_t i = 0; i < count && attrs[i].place < 256; i++) {
                const ol_def *d = &m->defs.items[attrs[i].index];
                if (d->kind == OL_DEF_ASSIGN && d->value != OL_NONE && d->value != e &&
                    mentions_rank(m, d->value, depth + 1))
                    return true;
            }
            continue;
        }
        if (p != OL_NONE && ol_kind_of(t, p) == OL_N_keyword_argument && ol_field(t, p, OL_F_name) == x)
            continue;
        uint32_t defs[4];
        size_t n = ol_reaching_defs(m, m->node_scope[x], ol_node_sym(m, x), x, defs, 4);
        for (size_t i = 0; i < n && n < 4; i++) {
            const ol_def *d = &m->defs.items[defs[i]];
            if (d->kind == OL_DEF_ASSIGN && d->value != OL_NONE && mentions_rank(m, d->value, depth + 1))
                return true;
        }
    }
    return false;
}

bool ol_path_per_rank(ol_model *m, ol_nid e)
{
    return mentions_rank(m, e, 0);
}
