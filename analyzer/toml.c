/*
 * toml.c - building a TOML value tree from tree-sitter-toml's syntax tree.
 *
 * The grammar accepts the shape of TOML; the rest of TOML 1.0 is checked
 * here while the tree is built: every key is defined once, a [table] header
 * appears once and never names a table made by dotted keys or an inline
 * table, [[array]] headers append to arrays they made, dotted keys extend
 * only tables that dotted keys made. Strings are decoded from their source
 * text (the grammar has already checked their escapes are well formed).
 * Nesting is capped (OL_TOML_MAX_DEPTH) so the recursive conversion and
 * free cannot exhaust the stack on hostile input; the dotted-key walk is
 * iterative because its syntax nodes nest once per component.
 */
#include "toml.h"

#include <stdlib.h>
#include <string.h>

#include <tree_sitter/api.h>

const TSLanguage *tree_sitter_toml(void);

#define OL_TOML_MAX_DEPTH 100

/* How a table was made; decides what may extend it later (toml.h). */
enum {
    ORIGIN_IMPLICIT = 1, /* an intermediate of a [a.b.c] header */
    ORIGIN_HEADER,       /* named by a [header] or [[header]] */
    ORIGIN_DOTTED,       /* made by a dotted key a.b = 1 */
    ORIGIN_INLINE,       /* an inline table { ... }: sealed */
};

typedef struct builder {
    const char *text;
    size_t len;
    uint32_t *err_line;
    ol_buf *err;
} builder;

typedef struct key_part {
    char *name;
    uint32_t line;
} key_part;

typedef OL_VEC(key_part) key_path;

/* ---- values ------------------------------------------------------------- */

static ol_toml_value *value_new(ol_toml_type type, uint32_t line)
{
    ol_toml_value *v = ol_xcalloc(1, sizeof(*v));
    v->type = type;
    v->line = line;
    return v;
}

static void value_free(ol_toml_value *v)
{
    if (!v)
        return;
    for (size_t i = 0; i < v->items.len; i++)
        value_free(v->items.items[i]);
    ol_vec_free(&v->items);
    for (size_t i = 0; i < v->entries.len; i++) {
        free(v->entries.items[i].key);
        value_free(v->entries.items[i].value);
    }
    ol_vec_free(&v->entries);
    free(v->index);
    free(v->text);
    free(v);
}

/* Tables of up to this many entries are searched linearly. */
#define OL_TOML_INDEX_FROM 16

static uint64_t hash_key(const char *s)
{
    uint64_t h = 1469598103934665603u;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211u;
    return h;
}

static void index_insert(ol_toml_value *t, size_t entry)
{
    size_t i = (size_t)hash_key(t->entries.items[entry].key) & (t->index_cap - 1);
    while (t->index[i])
        i = (i + 1) & (t->index_cap - 1);
    t->index[i] = (uint32_t)(entry + 1);
}

/* Appends an entry, keeping the index (if any) at most half full. */
static void add_entry(ol_toml_value *t, ol_toml_entry e)
{
    ol_vec_push(&t->entries, e);
    size_t n = t->entries.len;
    if (n <= OL_TOML_INDEX_FROM)
        return;
    if (n * 2 > t->index_cap) {
        free(t->index);
        t->index_cap = t->index_cap ? t->index_cap * 2 : 4 * OL_TOML_INDEX_FROM;
        t->index = ol_xcalloc(t->index_cap, sizeof(uint32_t));
        for (size_t k = 0; k < n; k++)
            index_insert(t, k);
    } else {
        index_insert(t, n - 1);
    }
}

const ol_toml_entry *ol_toml_get(const ol_toml_value *table, const char *key)
{
    if (!table || table->type != OL_TOML_TABLE)
        return NULL;
    if (table->index) {
        size_t i = (size_t)hash_key(key) & (table->index_cap - 1);
        for (; table->index[i]; i = (i + 1) & (table->index_cap - 1)) {
            const ol_toml_entry *e = &table->entries.items[table->index[i] - 1];
            if (strcmp(e->key, key) == 0)
                return e;
        }
        return NULL;
    }
    for (size_t i = 0; i < table->entries.len; i++)
        if (strcmp(table->entries.items[i].key, key) == 0)
            return &table->entries.items[i];
    return NULL;
}

static ol_toml_entry *find_entry(ol_toml_value *table, const char *key)
{
    return (ol_toml_entry *)ol_toml_get(table, key);
}

const char *ol_toml_type_name(ol_toml_type t)
{
    switch (t) {
    case OL_TOML_STRING:
        return "a string";
    case OL_TOML_INTEGER:
        return "an integer";
    case OL_TOML_FLOAT:
        return "a float";
    case OL_TOML_BOOLEAN:
        return "a boolean";
    case OL_TOML_DATETIME:
        return "a date-time";
    case OL_TOML_ARRAY:
        return "an array";
    case OL_TOML_TABLE:
        return "a table";
    }
    return "a value";
}

static void key_path_free(key_path *k)
{
    for (size_t i = 0; i < k->len; i++)
        free(k->items[i].name);
    ol_vec_free(k);
}

/* a.b."c d" for messages */
static void key_path_show(const key_path *k, size_t count, ol_buf *b)
{
    for (size_t i = 0; i < count; i++) {
        if (i)
            ol_buf_putc(b, '.');
        bool bare = k->items[i].name[0] != '\0';
        for (const char *c = k->items[i].name; *c && bare; c++)
            bare = (*c >= 'A' && *c <= 'Z') || (*c >= 'a' && *c <= 'z') || (*c >= '0' && *c <= '9') ||
                   *c == '_' || *c == '-';
        if (bare)
            ol_buf_puts(b, k->items[i].name);
        else
            ol_buf_printf(b, "\"%s\"", k->items[i].name);
    }
}

/* ---- errors --------------------------------------------------------------- */

static bool fail(builder *b, uint32_t line, const char *fmt, ...) OL_PRINTF(3, 4);

static bool fail(builder *b, uint32_t line, const char *fmt, ...)
{
    *b->err_line = line;
    ol_buf_clear(b->err);
    va_list ap;
    va_start(ap, fmt);
    ol_buf_vprintf(b->err, fmt, ap);
    va_end(ap);
    return false;
}

static uint32_t line_of(TSNode n)
{
    return ts_node_start_point(n).row + 1;
}

static uint32_t line_at(const builder *b, size_t offset)
{
    uint32_t line = 1;
    for (size_t i = 0; i < offset && i < b->len; i++)
        if (b->text[i] == '\n')
            line++;
    return line;
}

static bool is_comment(TSNode n)
{
    return strcmp(ts_node_type(n), "comment") == 0;
}

/* Named children that are not comments (the grammar lets comments in
 * wherever whitespace may be). */
static TSNode next_named(TSNode parent, uint32_t *i)
{
    uint32_t count = ts_node_named_child_count(parent);
    while (*i < count) {
        TSNode c = ts_node_named_child(parent, (*i)++);
        if (!is_comment(c))
            return c;
    }
    TSNode none = {0};
    return none;
}

/* Reports the first ERROR or MISSING node in document order. */
static void describe_syntax_error(builder *b, TSNode root)
{
    TSTreeCursor cur = ts_tree_cursor_new(root);
    TSNode found = root;
    for (;;) {
        TSNode n = ts_tree_cursor_current_node(&cur);
        if (ts_node_is_missing(n) || ts_node_is_error(n)) {
            found = n;
            break;
        }
        if (ts_node_has_error(n) && ts_tree_cursor_goto_first_child(&cur))
            continue;
        bool moved = false;
        while (!(moved = ts_tree_cursor_goto_next_sibling(&cur)))
            if (!ts_tree_cursor_goto_parent(&cur))
                break;
        if (!moved)
            break;
    }
    ts_tree_cursor_delete(&cur);
    if (ts_node_is_missing(found)) {
        fail(b, line_of(found), "invalid TOML: missing `%s`", ts_node_type(found));
        return;
    }
    uint32_t at = ts_node_start_byte(found), end = ts_node_end_byte(found);
    uint32_t line = line_at(b, at);
    size_t eol = at;
    while (eol < b->len && b->text[eol] != '\n')
        eol++;
    size_t text = at;
    while (text < eol && (b->text[text] == ' ' || b->text[text] == '\t' || b->text[text] == '\r'))
        text++;
    ol_buf msg = {0};
    if (text == eol || b->text[text] == '#') {
        /* the error starts where a line ended: quote what came before it */
        size_t bol = at;
        while (bol > 0 && b->text[bol - 1] != '\n')
            bol--;
        while (bol < at && (b->text[bol] == ' ' || b->text[bol] == '\t'))
            bol++;
        size_t n = at - bol;
        if (n > 40) {
            bol = at - 40;
            n = 40;
        }
        if (n)
            ol_buf_printf(&msg, "invalid TOML: the line ends unexpectedly after `%.*s`", (int)n, b->text + bol);
        else
            ol_buf_puts(&msg, "invalid TOML: unexpected end of line");
    } else {
        size_t n = 0;
        while (text + n < end && text + n < eol && n < 40 && b->text[text + n] != '\r')
            n++;
        ol_buf_printf(&msg, "invalid TOML near `%.*s`", (int)n, b->text + text);
    }
    /* inside an array that began on an earlier line: likely an unclosed `[` */
    for (TSNode up = ts_node_parent(found); !ts_node_is_null(up); up = ts_node_parent(up)) {
        if (strcmp(ts_node_type(up), "array") == 0 && line_of(up) < line) {
            ol_buf_printf(&msg, " (in the array opened on line %u: is a `]` or `,` missing?)", line_of(up));
            break;
        }
    }
    fail(b, line, "%s", msg.data);
    ol_buf_free(&msg);
}

/* ---- strings ---------------------------------------------------------------- */

static void put_utf8(ol_buf *out, uint32_t cp)
{
    if (cp < 0x80) {
        ol_buf_putc(out, (char)cp);
    } else if (cp < 0x800) {
        ol_buf_putc(out, (char)(0xC0 | (cp >> 6)));
        ol_buf_putc(out, (char)(0x80 | (cp & 0x3F)));
    } else if (cp < 0x10000) {
        ol_buf_putc(out, (char)(0xE0 | (cp >> 12)));
        ol_buf_putc(out, (char)(0x80 | ((cp >> 6) & 0x3F)));
        ol_buf_putc(out, (char)(0x80 | (cp & 0x3F)));
    } else {
        ol_buf_putc(out, (char)(0xF0 | (cp >> 18)));
        ol_buf_putc(out, (char)(0x80 | ((cp >> 12) & 0x3F)));
        ol_buf_putc(out, (char)(0x80 | ((cp >> 6) & 0x3F)));
        ol_buf_putc(out, (char)(0x80 | (cp & 0x3F)));
    }
}

static int hex_digit(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* Decodes the string literal at text[start, end) (quotes included) into out. */
static bool decode_string(builder *b, uint32_t start, uint32_t end, ol_buf *out)
{
    const char *s = b->text + start;
    size_t n = end - start;
    ol_buf_clear(out);
    ol_buf_add(out, "", 0);
    bool multi = n >= 6 && (memcmp(s, "\"\"\"", 3) == 0 || memcmp(s, "'''", 3) == 0);
    size_t quote = multi ? 3 : 1;
    if (n < 2 * quote)
        return fail(b, line_at(b, start), "invalid TOML: unterminated string");
    bool literal = s[0] == '\'';
    size_t i = quote, stop = n - quote;
    if (multi) {
        /* a newline right after the opening delimiter is not part of the value */
        if (i < stop && s[i] == '\n')
            i++;
        else if (i + 1 < stop && s[i] == '\r' && s[i + 1] == '\n')
            i += 2;
    }
    while (i < stop) {
        char c = s[i];
        if (literal || c != '\\') {
            ol_buf_putc(out, c);
            i++;
            continue;
        }
        char e = i + 1 < stop ? s[i + 1] : '\0';
        size_t digits = 0;
        switch (e) {
        case 'b': ol_buf_putc(out, '\b'); break;
        case 't': ol_buf_putc(out, '\t'); break;
        case 'n': ol_buf_putc(out, '\n'); break;
        case 'f': ol_buf_putc(out, '\f'); break;
        case 'r': ol_buf_putc(out, '\r'); break;
        case '"': ol_buf_putc(out, '"'); break;
        case '\\': ol_buf_putc(out, '\\'); break;
        case 'u': digits = 4; break;
        case 'U': digits = 8; break;
        default: {
            /* a line-ending backslash: drop it and the whitespace after it */
            size_t k = i + 1;
            while (k < stop && (s[k] == ' ' || s[k] == '\t'))
                k++;
            if (multi && k < stop && (s[k] == '\n' || s[k] == '\r')) {
                while (k < stop && (s[k] == ' ' || s[k] == '\t' || s[k] == '\n' || s[k] == '\r'))
                    k++;
                i = k;
                continue;
            }
            return fail(b, line_at(b, start + i), "invalid TOML: unknown escape `\\%c`", e ? e : ' ');
        }
        }
        if (!digits) {
            i += 2;
            continue;
        }
        uint32_t cp = 0;
        for (size_t d = 0; d < digits; d++) {
            int h = i + 2 + d < stop ? hex_digit(s[i + 2 + d]) : -1;
            if (h < 0)
                return fail(b, line_at(b, start + i), "invalid TOML: bad escape `\\%c`", e);
            cp = cp * 16 + (uint32_t)h;
        }
        if (cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
            return fail(b, line_at(b, start + i), "invalid TOML: `\\%c%.*s` is not a Unicode scalar value", e,
                        (int)digits, s + i + 2);
        put_utf8(out, cp);
        i += 2 + digits;
    }
    return true;
}

/* ---- keys ------------------------------------------------------------------ */

static bool key_component(builder *b, TSNode n, key_path *out)
{
    uint32_t start = ts_node_start_byte(n), end = ts_node_end_byte(n);
    key_part part = {NULL, line_of(n)};
    if (strcmp(ts_node_type(n), "quoted_key") == 0) {
        ol_buf v = {0};
        if (!decode_string(b, start, end, &v)) {
            ol_buf_free(&v);
            return false;
        }
        if (strlen(v.data) != v.len) {
            ol_buf_free(&v);
            return fail(b, part.line, "keys containing NUL characters are not supported");
        }
        part.name = ol_buf_take(&v);
    } else {
        part.name = ol_xstrndup(b->text + start, end - start);
    }
    ol_vec_push(out, part);
    return true;
}

/* bare_key, quoted_key or dotted_key -> its components, left to right. The
 * grammar nests dotted keys to the left, once per component: walk, don't recurse. */
static bool collect_key(builder *b, TSNode key, key_path *out)
{
    OL_VEC(TSNode) rights = {0};
    TSNode cur = key;
    bool ok = true;
    while (strcmp(ts_node_type(cur), "dotted_key") == 0) {
        uint32_t count = ts_node_named_child_count(cur);
        if (count < 2) {
            ok = fail(b, line_of(cur), "invalid TOML: malformed dotted key");
            break;
        }
        ol_vec_push(&rights, ts_node_named_child(cur, count - 1));
        if (rights.len > OL_TOML_MAX_DEPTH) {
            ok = fail(b, line_of(cur), "key has more than %d parts", OL_TOML_MAX_DEPTH);
            break;
        }
        cur = ts_node_named_child(cur, 0);
    }
    if (ok)
        ok = key_component(b, cur, out);
    for (size_t i = rights.len; ok && i-- > 0;)
        ok = key_component(b, rights.items[i], out);
    ol_vec_free(&rights);
    return ok;
}

/* ---- tables ------------------------------------------------------------------ */

static ol_toml_value *add_table(ol_toml_value *parent, const key_part *k, uint8_t origin)
{
    ol_toml_value *t = value_new(OL_TOML_TABLE, k->line);
    t->origin = origin;
    ol_toml_entry e = {ol_xstrdup(k->name), k->line, t};
    add_entry(parent, e);
    return t;
}

static bool too_deep(builder *b, uint32_t line, size_t depth)
{
    if (depth <= OL_TOML_MAX_DEPTH)
        return false;
    fail(b, line, "values nested more than %d deep are not supported", OL_TOML_MAX_DEPTH);
    return true;
}

/* Defines key = value in table (value is consumed either way). */
static bool define(builder *b, ol_toml_value *table, const key_path *key, ol_toml_value *value, size_t depth)
{
    ol_toml_value *t = table;
    for (size_t i = 0; i + 1 < key->len; i++) {
        if (too_deep(b, key->items[i].line, depth + i)) {
            value_free(value);
            return false;
        }
        ol_toml_entry *e = find_entry(t, key->items[i].name);
        if (!e) {
            t = add_table(t, &key->items[i], ORIGIN_DOTTED);
            continue;
        }
        if (e->value->type == OL_TOML_TABLE && e->value->origin == ORIGIN_DOTTED) {
            t = e->value;
            continue;
        }
        ol_buf name = {0};
        key_path_show(key, i + 1, &name);
        fail(b, key->items[i].line, "cannot add keys to `%s` with a dotted key: it is %s defined on line %u",
             name.data, ol_toml_type_name(e->value->type), e->line);
        ol_buf_free(&name);
        value_free(value);
        return false;
    }
    const key_part *last = &key->items[key->len - 1];
    const ol_toml_entry *dup = find_entry(t, last->name);
    if (dup) {
        ol_buf name = {0};
        key_path_show(key, key->len, &name);
        fail(b, last->line, "key `%s` is defined twice (first on line %u)", name.data, dup->line);
        ol_buf_free(&name);
        value_free(value);
        return false;
    }
    ol_toml_entry e = {ol_xstrdup(last->name), last->line, value};
    add_entry(t, e);
    return true;
}

static bool convert_value(builder *b, TSNode n, size_t depth, ol_toml_value **out);

static bool add_pair(builder *b, ol_toml_value *table, TSNode pair, size_t depth)
{
    uint32_t i = 0;
    TSNode key = next_named(pair, &i);
    TSNode val = next_named(pair, &i);
    if (ts_node_is_null(key) || ts_node_is_null(val))
        return fail(b, line_of(pair), "invalid TOML: a key needs a value");
    key_path path = {0};
    bool ok = collect_key(b, key, &path);
    ol_toml_value *value = NULL;
    if (ok)
        ok = convert_value(b, val, depth + path.len, &value);
    if (ok)
        ok = define(b, table, &path, value, depth);
    key_path_free(&path);
    return ok;
}

static bool convert_value(builder *b, TSNode n, size_t depth, ol_toml_value **out)
{
    *out = NULL;
    const char *type = ts_node_type(n);
    uint32_t line = line_of(n);
    if (too_deep(b, line, depth))
        return false;
    uint32_t start = ts_node_start_byte(n), end = ts_node_end_byte(n);
    ol_toml_value *v;
    if (strcmp(type, "string") == 0) {
        ol_buf text = {0};
        if (!decode_string(b, start, end, &text)) {
            ol_buf_free(&text);
            return false;
        }
        v = value_new(OL_TOML_STRING, line);
        v->len = text.len;
        v->text = ol_buf_take(&text);
    } else if (strcmp(type, "array") == 0) {
        v = value_new(OL_TOML_ARRAY, line);
        uint32_t i = 0;
        for (TSNode c = next_named(n, &i); !ts_node_is_null(c); c = next_named(n, &i)) {
            ol_toml_value *item;
            if (!convert_value(b, c, depth + 1, &item)) {
                value_free(v);
                return false;
            }
            ol_vec_push(&v->items, item);
        }
    } else if (strcmp(type, "inline_table") == 0) {
        v = value_new(OL_TOML_TABLE, line);
        v->origin = ORIGIN_DOTTED; /* while it is being built; sealed below */
        uint32_t i = 0;
        for (TSNode c = next_named(n, &i); !ts_node_is_null(c); c = next_named(n, &i)) {
            if (!add_pair(b, v, c, depth + 1)) {
                value_free(v);
                return false;
            }
        }
        v->origin = ORIGIN_INLINE;
    } else {
        ol_toml_type t;
        if (strcmp(type, "integer") == 0)
            t = OL_TOML_INTEGER;
        else if (strcmp(type, "float") == 0)
            t = OL_TOML_FLOAT;
        else if (strcmp(type, "boolean") == 0)
            t = OL_TOML_BOOLEAN;
        else if (strstr(type, "date") || strstr(type, "time"))
            t = OL_TOML_DATETIME;
        else
            return fail(b, line, "invalid TOML: unexpected `%s`", type);
        v = value_new(t, line);
        v->text = ol_xstrndup(b->text + start, end - start);
        v->len = end - start;
        v->boolean = t == OL_TOML_BOOLEAN && strcmp(v->text, "true") == 0;
    }
    *out = v;
    return true;
}

/* [a.b.c] or [[a.b.c]]: the table that the following pairs go into. */
static bool open_header(builder *b, ol_toml_value *root, const key_path *key, bool array, ol_toml_value **out)
{
    ol_toml_value *t = root;
    ol_buf name = {0};
    key_path_show(key, key->len, &name);
    bool ok = true;
    for (size_t i = 0; ok && i + 1 < key->len; i++) {
        ol_toml_entry *e = find_entry(t, key->items[i].name);
        if (!e) {
            t = add_table(t, &key->items[i], ORIGIN_IMPLICIT);
        } else if (e->value->type == OL_TOML_TABLE && e->value->origin != ORIGIN_INLINE) {
            t = e->value;
        } else if (e->value->type == OL_TOML_ARRAY && e->value->table_array && e->value->items.len > 0) {
            t = ol_vec_last(&e->value->items);
        } else {
            ol_buf part = {0};
            key_path_show(key, i + 1, &part);
            ok = fail(b, key->items[i].line, "cannot define [%s]: `%s` is %s%s defined on line %u", name.data,
                      part.data, e->value->origin == ORIGIN_INLINE ? "an inline table" : "",
                      e->value->origin == ORIGIN_INLINE ? "" : ol_toml_type_name(e->value->type), e->line);
            ol_buf_free(&part);
        }
    }
    const key_part *last = &key->items[key->len - 1];
    if (ok) {
        ol_toml_entry *e = find_entry(t, last->name);
        if (array) {
            if (!e) {
                ol_toml_value *arr = value_new(OL_TOML_ARRAY, last->line);
                arr->table_array = true;
                ol_toml_entry ne = {ol_xstrdup(last->name), last->line, arr};
                add_entry(t, ne);
                e = &ol_vec_last(&t->entries);
            }
            if (e->value->type == OL_TOML_ARRAY && e->value->table_array) {
                ol_toml_value *elem = value_new(OL_TOML_TABLE, last->line);
                elem->origin = ORIGIN_HEADER;
                ol_vec_push(&e->value->items, elem);
                t = elem;
            } else {
                ok = fail(b, last->line, "cannot define [[%s]]: it is %s defined on line %u", name.data,
                          ol_toml_type_name(e->value->type), e->line);
            }
        } else if (!e) {
            t = add_table(t, last, ORIGIN_HEADER);
        } else if (e->value->type == OL_TOML_TABLE && e->value->origin == ORIGIN_IMPLICIT) {
            e->value->origin = ORIGIN_HEADER;
            t = e->value;
        } else if (e->value->type == OL_TOML_TABLE) {
            ok = fail(b, last->line, "table [%s] is defined twice (first on line %u)", name.data, e->line);
        } else {
            ok = fail(b, last->line, "cannot define [%s]: it is %s defined on line %u", name.data,
                      ol_toml_type_name(e->value->type), e->line);
        }
    }
    ol_buf_free(&name);
    if (ok && too_deep(b, last->line, key->len))
        ok = false;
    *out = t;
    return ok;
}

static bool build(builder *b, TSNode document, ol_toml_value *root)
{
    uint32_t i = 0;
    for (TSNode c = next_named(document, &i); !ts_node_is_null(c); c = next_named(document, &i)) {
        const char *type = ts_node_type(c);
        if (strcmp(type, "pair") == 0) {
            if (!add_pair(b, root, c, 1))
                return false;
            continue;
        }
        bool array = strcmp(type, "table_array_element") == 0;
        if (!array && strcmp(type, "table") != 0)
            return fail(b, line_of(c), "invalid TOML: unexpected `%s`", type);
        uint32_t k = 0;
        TSNode keynode = next_named(c, &k);
        if (ts_node_is_null(keynode))
            return fail(b, line_of(c), "invalid TOML: a table header needs a name");
        key_path key = {0};
        ol_toml_value *table = NULL;
        bool ok = collect_key(b, keynode, &key) && open_header(b, root, &key, array, &table);
        size_t depth = key.len + 1;
        key_path_free(&key);
        if (!ok)
            return false;
        for (TSNode p = next_named(c, &k); !ts_node_is_null(p); p = next_named(c, &k))
            if (!add_pair(b, table, p, depth))
                return false;
    }
    return true;
}

/* TOML is UTF-8; tree-sitter would quietly replace bad bytes. */
static bool check_utf8(builder *b)
{
    const unsigned char *s = (const unsigned char *)b->text;
    size_t i = 0;
    while (i < b->len) {
        unsigned char c = s[i];
        size_t need;
        uint32_t cp;
        if (c < 0x80) {
            if (c == 0)
                return fail(b, line_at(b, i), "invalid TOML: NUL byte");
            i++;
            continue;
        } else if ((c & 0xE0) == 0xC0) {
            need = 1;
            cp = c & 0x1F;
        } else if ((c & 0xF0) == 0xE0) {
            need = 2;
            cp = c & 0x0F;
        } else if ((c & 0xF8) == 0xF0) {
            need = 3;
            cp = c & 0x07;
        } else {
            return fail(b, line_at(b, i), "invalid TOML: the file is not valid UTF-8");
        }
        for (size_t k = 1; k <= need; k++) {
            if (i + k >= b->len || (s[i + k] & 0xC0) != 0x80)
                return fail(b, line_at(b, i), "invalid TOML: the file is not valid UTF-8");
            cp = (cp << 6) | (s[i + k] & 0x3F);
        }
        static const uint32_t min_cp[] = {0, 0x80, 0x800, 0x10000};
        if (cp < min_cp[need] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
            return fail(b, line_at(b, i), "invalid TOML: the file is not valid UTF-8");
        i += need + 1;
    }
    return true;
}

bool ol_toml_parse(ol_toml_doc *doc, const char *text, size_t len, uint32_t *err_line, ol_buf *err)
{
    doc->root = NULL;
    *err_line = 0;
    builder b = {text, len, err_line, err};
    /* a byte order mark is not TOML, but editors write one; skip it */
    size_t skip = len >= 3 && memcmp(text, "\xEF\xBB\xBF", 3) == 0 ? 3 : 0;
    if (!check_utf8(&b))
        return false;
    if (len > UINT32_MAX)
        return fail(&b, 1, "file is too large");
    TSParser *parser = ts_parser_new();
    if (!ts_parser_set_language(parser, tree_sitter_toml())) {
        ts_parser_delete(parser);
        return fail(&b, 1, "the bundled TOML grammar is not compatible with the tree-sitter runtime");
    }
    /* parse after the BOM but keep byte offsets relative to text */
    TSTree *tree = ts_parser_parse_string(parser, NULL, text + skip, (uint32_t)(len - skip));
    ts_parser_delete(parser);
    if (!tree)
        return fail(&b, 1, "could not parse the file");
    builder bb = {text + skip, len - skip, err_line, err};
    TSNode root = ts_tree_root_node(tree);
    bool ok;
    ol_toml_value *top = value_new(OL_TOML_TABLE, 1);
    top->origin = ORIGIN_HEADER;
    if (ts_node_has_error(root)) {
        describe_syntax_error(&bb, root);
        ok = false;
    } else {
        ok = build(&bb, root, top);
    }
    ts_tree_delete(tree);
    if (!ok) {
        value_free(top);
        return false;
    }
    doc->root = top;
    return true;
}

void ol_toml_free(ol_toml_doc *doc)
{
    value_free(doc->root);
    doc->root = NULL;
}
