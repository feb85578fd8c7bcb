/*
 * pyfloor.c - the oldest Python a project declares, and the syntax newer
 * than it (pyfloor.h).
 *
 * The floor is read only when a fix is about to be kept (fix.c), from a few
 * small files above the fixed one, as torchfloor.c reads torch's. The
 * syntax check is one pass over the flattened tree: f-strings are read from
 * their delimiter and the bytes of each replacement field, the rest from
 * node kinds.
 */
#include "pyfloor.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rule.h"
#include "util.h"

/* ---- the declared floor ---------------------------------------------------------- */

/* "3.9" at s (up to end): major * 100 + minor; false when s holds no version. */
static bool read_version(const char *s, const char *end, unsigned *out)
{
    unsigned major = 0, minor = 0;
    const char *p = s;
    while (p < end && *p >= '0' && *p <= '9' && major < 100)
        major = major * 10 + (unsigned)(*p++ - '0');
    if (p == s)
        return false;
    if (p < end && *p == '.') {
        p++;
        while (p < end && *p >= '0' && *p <= '9' && minor < 100)
            minor = minor * 10 + (unsigned)(*p++ - '0');
    }
    *out = major * 100 + (minor > 99 ? 99 : minor);
    return true;
}

/* The lowest version a PEP 440 specifier set (">=3.9,<4", "~=3.10") or a
 * Poetry constraint ("^3.9") allows, or 0 when it gives no lower bound. */
static unsigned lower_bound(const char *s, const char *end)
{
    unsigned lowest = 0;
    while (s < end) {
        const char *comma = memchr(s, ',', (size_t)(end - s));
        const char *clause_end = comma ? comma : end;
        while (s < clause_end && (*s == ' ' || *s == '\t'))
            s++;
        /* `>=`, `==`, `===`, `~=`, `>`, `^`, `~`: a lower bound; `<`, `!=`: none */
        bool bound = false;
        if (s + 1 < clause_end && (s[0] == '>' || s[0] == '=' || s[0] == '~') && s[1] == '=') {
            s += 2;
            bound = true;
            if (s < clause_end && *s == '=')
                s++;
        } else if (s < clause_end && (*s == '>' || *s == '^' || *s == '~')) {
            s++;
            bound = true;
        }
        while (s < clause_end && (*s == ' ' || *s == '\t'))
            s++;
        unsigned v;
        if (bound && read_version(s, clause_end, &v) && (lowest == 0 || v < lowest))
            lowest = v;
        s = comma ? comma + 1 : end;
    }
    /* a Python 2 floor: the oldest Python 3 grammar is the one that applies */
    return lowest && lowest < 300 ? 300 : lowest;
}

unsigned ol_python_floor_in_text(const char *text, size_t len)
{
    static const char key[] = "requires-python";
    const char *end = text + len;
    for (const char *line = text; line < end;) {
        const char *nl = memchr(line, '\n', (size_t)(end - line));
        const char *line_end = nl ? nl : end;
        const char *p = line;
        while (p < line_end && (*p == ' ' || *p == '\t'))
            p++;
        if ((size_t)(line_end - p) > sizeof key && memcmp(p, key, sizeof key - 1) == 0) {
            p += sizeof key - 1;
            while (p < line_end && (*p == ' ' || *p == '\t'))
                p++;
            if (p < line_end && *p == '=') {
                p++;
                while (p < line_end && (*p == ' ' || *p == '\t'))
                    p++;
                if (p < line_end && (*p == '"' || *p == '\'')) {
                    const char *close = memchr(p + 1, *p, (size_t)(line_end - p - 1));
                    if (close) {
                        unsigned floor = lower_bound(p + 1, close);
                        if (floor)
                            return floor;
                    }
                }
            }
        }
        line = nl ? nl + 1 : end;
    }
    return 0;
}

static char *parent_of(const char *dir)
{
    const char *slash = strrchr(dir, '/');
    if (!slash)
        return NULL;
    if (slash == dir)
        return dir[1] ? ol_xstrdup("/") : NULL;
    return ol_xstrndup(dir, (size_t)(slash - dir));
}

unsigned ol_python_floor(const char *path)
{
    if (!path || !*path)
        return OL_PYTHON_FLOOR_DEFAULT;
    char *dir = strchr(path, '/') ? parent_of(path) : ol_xstrdup(".");
    unsigned floor = 0;
    for (int level = 0; dir && level < 8 && !floor; level++) {
        char *file = ol_xasprintf("%s/pyproject.toml", dir);
        char *text = NULL;
        size_t len = 0;
        if (ol_read_file(file, 1 << 20, &text, &len) == 0 && text)
            floor = ol_python_floor_in_text(text, len);
        free(text);
        free(file);
        char *git = ol_xasprintf("%s/.git", dir);
        bool root = access(git, F_OK) == 0;
        free(git);
        if (root || strcmp(dir, ".") == 0)
            break;
        char *up = parent_of(dir);
        free(dir);
        dir = up;
    }
    free(dir);
    return floor ? floor : OL_PYTHON_FLOOR_DEFAULT;
}

/* ---- syntax newer than the floor ----------------------------------------------------- */

typedef struct newer_count {
    size_t count;
    ol_newer_syntax first;
} newer_count;

static void found(newer_count *c, uint32_t at, uint32_t end, unsigned needs, const char *what)
{
    if (c->count++ == 0 || at < c->first.at) {
        c->first.at = at;
        c->first.end = end;
        c->first.needs = needs;
        c->first.what = what;
    }
}

/* An f-string's delimiter: its quote character and how many of it (1 or
 * 3). False for any other string. */
static bool fstring_delimiter(const ol_tree *t, ol_nid string, char *quote, uint32_t *quote_len)
{
    ol_nid start = ol_first(t, string);
    if (ol_kind_of(t, start) != OL_N_string_start)
        return false;
    uint32_t len;
    const char *s = ol_text(t, start, &len);
    bool f = false;
    uint32_t i = 0;
    for (; i < len && s[i] != '"' && s[i] != '\''; i++)
        f |= s[i] == 'f' || s[i] == 'F';
    if (!f || i == len)
        return false;
    *quote = s[i];
    *quote_len = len - i >= 3 ? 3 : 1;
    return true;
}

static bool holds(const char *s, uint32_t len, const char *what, uint32_t what_len)
{
    for (uint32_t i = 0; i + what_len <= len; i++)
        if (memcmp(s + i, what, what_len) == 0)
            return true;
    return false;
}

/* Before Python 3.12 (PEP 701) a replacement field could not hold the
 * f-string's own quote, nor, in its expression, a backslash or a comment,
 * nor a line break in an f-string on one line. */
static void check_fstring(const ol_tree *t, ol_nid string, newer_count *c)
{
    char quote;
    uint32_t quote_len;
    if (!fstring_delimiter(t, string, &quote, &quote_len))
        return;
    const char delimiter[3] = {quote, quote, quote};
    for (ol_nid f = ol_first(t, string); f != OL_NONE; f = ol_next(t, f)) {
        if (ol_kind_of(t, f) != OL_N_interpolation)
            continue;
        uint32_t len;
        const char *s = ol_text(t, f, &len);
        const ol_node *field = ol_node_at(t, f);
        if (len >= 2 && holds(s + 1, len - 2, delimiter, quote_len))
            found(c, field->start, field->end, 312, "the f-string's own quote inside a replacement field");
        if (quote_len == 1 && memchr(s, '\n', len))
            found(c, field->start, field->end, 312, "a line break inside a replacement field of a one-line f-string");
        /* the expression part: from the brace to a conversion (`!r`) or a
         * format spec (`:>8`), whose literal text may hold what it likes;
         * a comment is not in the tree, so the bytes are read */
        uint32_t elen = len >= 2 ? len - 2 : 0;
        for (ol_nid part = ol_first_named(t, f); part != OL_NONE; part = ol_next_named(t, part)) {
            uint32_t plen;
            const char *p = ol_text(t, part, &plen);
            if (ol_kind_of(t, part) == OL_N_OTHER && plen > 0 && (p[0] == '!' || p[0] == ':') && p > s) {
                elen = (uint32_t)(p - s) - 1;
                break;
            }
        }
        const char *e = s + 1;
        if (memchr(e, '\\', elen))
            found(c, field->start, field->end, 312, "a backslash inside an f-string's expression");
        if (memchr(e, '#', elen))
            found(c, field->start, field->end, 312, "a `#` inside an f-string's expression");
    }
}

/* `with (open(a) as f, open(b) as g):` (Python 3.9's parser; 3.10 made it
 * official): an `as` inside parentheses that belong to the statement.
 * `with (a, b):` and `with (open(a)) as f:` were always valid. */
static bool parenthesised_with(const ol_tree *t, ol_nid clause)
{
    uint32_t len;
    const char *s = ol_text(t, clause, &len);
    if (len == 0 || s[0] != '(')
        return false;
    uint32_t clause_start = ol_node_at(t, clause)->start;
    for (ol_nid item = ol_first_named(t, clause); item != OL_NONE; item = ol_next_named(t, item)) {
        ol_nid inner = ol_first_named(t, item);
        if (ol_kind_of(t, inner) == OL_N_as_pattern && ol_node_at(t, item)->start > clause_start)
            return true;
        if (ol_kind_of(t, inner) == OL_N_parenthesized_expression &&
            ol_kind_of(t, ol_first_named(t, inner)) == OL_N_as_pattern && ol_node_at(t, inner)->start == clause_start)
            return true;
    }
    return false;
}

size_t ol_syntax_newer_than(const ol_tree *t, unsigned floor, ol_newer_syntax *first)
{
    newer_count c = {0, {0, 0, 0, NULL}};
    for (ol_nid n = 0; n < t->nodes.len; n++) {
        ol_kind k = (ol_kind)t->nodes.items[n].kind;
        if (k == OL_N_string && floor < 312)
            check_fstring(t, n, &c);
        else if (k == OL_N_match_statement && floor < 310)
            found(&c, t->nodes.items[n].start, t->nodes.items[n].end, 310, "a `match` statement");
        else if (k == OL_N_with_clause && floor < 309 && parenthesised_with(t, n))
            found(&c, t->nodes.items[n].start, t->nodes.items[n].end, 309, "a parenthesised context manager");
    }
    if (first && c.count)
        *first = c.first;
    return c.count;
}

/* ---- Python 2 --------------------------------------------------------------------- */

/* `0777` (an octal literal without 0o) or `10L`: a Python 2 integer. */
static bool python2_integer(const char *s, uint32_t len)
{
    if (len > 1 && (s[len - 1] == 'l' || s[len - 1] == 'L'))
        return true;
    if (len < 2 || s[0] != '0' || (s[1] >= 'a' && s[1] <= 'z') || (s[1] >= 'A' && s[1] <= 'Z'))
        return false;
    for (uint32_t i = 1; i < len; i++)
        if (s[i] >= '1' && s[i] <= '9')
            return true; /* `00` and `0_0` are Python 3 too */
    return false;
}

/* A string's Python 2 form: backquotes (`repr`) or the prefix `ur`. */
static const char *python2_string(const ol_tree *t, ol_nid string)
{
    ol_nid open = ol_first(t, string);
    if (ol_kind_of(t, open) != OL_N_string_start)
        return NULL;
    uint32_t len;
    const char *s = ol_text(t, open, &len);
    if (len > 0 && s[0] == '`') {
        /* two backquotes side by side are no `repr` (Python 2 has no empty
         * one): a Markdown fence (```python) pasted into the code */
        const ol_node *sn = ol_node_at(t, string);
        const char *text = t->src->text;
        if (sn->end - sn->start <= 2 || (sn->start > 0 && text[sn->start - 1] == '`') ||
            (sn->end < t->src->len && text[sn->end] == '`'))
            return NULL;
        return "backquotes";
    }
    bool u = false, r = false;
    for (uint32_t i = 0; i < len && s[i] != '"' && s[i] != '\''; i++) {
        u |= s[i] == 'u' || s[i] == 'U';
        r |= s[i] == 'r' || s[i] == 'R';
    }
    return u && r ? "a `ur` string prefix" : NULL;
}

/* `except E, e:` binding `e`: two expressions, no parentheses, the second
 * a name the clause's body reads (returned; else OL_NONE). Python 3.14 reads `except KeyError,
 * TypeError:` as two exception types (PEP 758); a name the handler then
 * uses is Python 2's way of binding the exception. */
static ol_nid except_comma(const ol_tree *t, ol_nid clause)
{
    ol_nid items[3] = {OL_NONE, OL_NONE, OL_NONE}, body = OL_NONE;
    size_t before_block = 0;
    for (ol_nid c = ol_first_named(t, clause); c != OL_NONE; c = ol_next_named(t, c)) {
        if (ol_kind_of(t, c) == OL_N_block) {
            body = c;
            break;
        }
        if (before_block < 3)
            items[before_block] = c;
        before_block++;
    }
    if (before_block != 2 || body == OL_NONE || ol_kind_of(t, items[1]) != OL_N_identifier)
        return OL_NONE;
    uint32_t len;
    const char *name = ol_text(t, items[1], &len);
    const ol_node *b = ol_node_at(t, body);
    for (ol_nid n = body + 1; n < t->nodes.len && t->nodes.items[n].start < b->end; n++) {
        uint32_t l;
        const char *s = ol_text(t, n, &l);
        if (t->nodes.items[n].kind == OL_N_identifier && l == len && memcmp(s, name, len) == 0)
            return items[1];
    }
    return OL_NONE;
}

size_t ol_python2_constructs(const ol_tree *t, ol_newer_syntax *first)
{
    newer_count c = {0, {0, 0, 0, NULL}};
    for (ol_nid n = 0; n < t->nodes.len; n++) {
        const ol_node *node = &t->nodes.items[n];
        const char *what = NULL;
        uint32_t len, end = node->end;
        const char *s;
        ol_nid name;
        switch ((ol_kind)node->kind) {
        case OL_N_print_statement:
            what = "a print statement";
            break;
        case OL_N_exec_statement:
            what = "an exec statement";
            break;
        case OL_T_LTGT:
            what = "the `<>` operator";
            break;
        case OL_N_integer:
            s = ol_text(t, n, &len);
            if (python2_integer(s, len))
                what = s[len - 1] == 'l' || s[len - 1] == 'L' ? "a long integer literal"
                                                              : "an octal literal without `0o`";
            break;
        case OL_N_string:
            what = python2_string(t, n);
            break;
        case OL_N_raise_statement:
            if (ol_kind_of(t, ol_first_named(t, n)) == OL_N_expression_list)
                what = "`raise E, value`";
            break;
        case OL_N_tuple_pattern:
            if (ol_kind_of(t, node->parent) == OL_N_parameters || ol_kind_of(t, node->parent) == OL_N_lambda_parameters)
                what = "a tuple parameter";
            break;
        case OL_N_except_clause:
            name = except_comma(t, n);
            if (name != OL_NONE) {
                what = "`except E, e:`";
                end = ol_node_at(t, name)->end; /* the clause's head */
            }
            break;
        default:
            break;
        }
        if (what)
            found(&c, node->start, end, 200, what);
    }
    if (first && c.count)
        *first = c.first;
    return c.count;
}

void ol_python2_report(const ol_tree *t, ol_diag_vec *diags)
{
    ol_newer_syntax first = {0, 0, 0, NULL};
    size_t count = ol_python2_constructs(t, &first);
    if (count == 0)
        return;
    uint32_t line = ol_source_line_index(t->src, first.at) + 1;
    /* the other syntax errors of a Python 2 file are most likely Python 2 too */
    for (size_t i = 0; i < diags->len; i++) {
        ol_diag *d = &diags->items[i];
        if (d->rule != &ol_rule_oom002)
            continue;
        char *help = ol_xasprintf("%s; the file looks like Python 2 (%s at line %u), and oomlint analyzes Python 3: "
                                  "port it (2to3) or exclude it",
                                  d->help ? d->help : "fix the syntax", first.what, line);
        free(d->help);
        d->help = help;
    }
    ol_diag d = {0};
    d.rule = &ol_rule_oom002;
    d.start = first.at;
    d.end = first.end;
    if (count > 1)
        d.message = ol_xasprintf("Python 2 syntax: %s, which Python 3 cannot parse (and %zu more Python 2 "
                                 "construct%s in this file)",
                                 first.what, count - 1, count == 2 ? "" : "s");
    else
        d.message = ol_xasprintf("Python 2 syntax: %s, which Python 3 cannot parse", first.what);
    d.help = ol_xstrdup("the file is written for Python 2, and oomlint analyzes Python 3: port it (2to3) or exclude "
                        "it (--extend-exclude)");
    ol_vec_push(diags, d);
}
