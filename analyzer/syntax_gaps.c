/*
 * syntax_gaps.c - valid Python that tree-sitter-python 0.25 cannot parse,
 * rewritten into equivalent Python that it can.
 *
 * The grammar is the newest published, and a few valid constructs still
 * come out as ERROR nodes (see the list below). A linter that calls valid
 * code a syntax error loses its users' trust on the first file, so when a
 * parse has errors, ol_parse asks this file for a copy of the text in which
 * each known gap is replaced, byte for byte, by something that means the
 * same to Python's parser and that tree-sitter reads correctly; the copy is
 * parsed again. Every rewrite keeps the text's length and every other byte,
 * so node offsets, lines and columns still point into the user's file.
 *
 * The gaps:
 *   - a continuation line inside brackets that is indented less than the
 *     block it belongs to (`print(1 +` / `2)` at column 0 inside an `if`):
 *     the scanner reads a dedent there. Inside brackets line breaks mean
 *     nothing to Python, so they become spaces (a backslash before one goes
 *     too, and a comment before one is blanked and reported back so that
 *     `# noqa` in it still counts);
 *   - star-unpacking of a bracketed expression in a bare tuple or a
 *     subscript (`return a, *[b]`, `x = y, *(z)`, `t[*[i]]`): the star goes,
 *     which leaves an expression Python accepts in the same place;
 *   - PEP 696 type-parameter defaults (`def f[T = int]()`): the `= default`
 *     is blanked.
 * A rewrite can make an invalid construct valid (`x = *[a]` alone), so a
 * rare real error may go unreported; it never makes valid code invalid.
 *
 * Strings, f-strings (with the nesting Python 3.12 allows) and comments are
 * skipped by a small tokenizer: nothing inside a string is ever changed.
 */
#include "syntax_gaps.h"

#include <string.h>

/* Deepest f-string nesting followed; deeper text is treated as string. */
#define GAP_MAX_NEST 64

typedef struct gap_bracket {
    char open;
    bool subscript;  /* `[` after an operand */
    bool typeparams; /* `[` after `def NAME`, `class NAME`, `type NAME` */
} gap_bracket;

typedef struct gap_state {
    const char *src;
    char *out;   /* NULL until the first change */
    uint32_t len;
    ol_span_vec *blanked;
} gap_state;

static void blank(gap_state *g, uint32_t from, uint32_t to)
{
    if (!g->out) {
        g->out = ol_xmalloc((size_t)g->len + 1);
        memcpy(g->out, g->src, g->len);
        g->out[g->len] = '\0';
    }
    for (uint32_t i = from; i < to && i < g->len; i++)
        g->out[i] = ' ';
}

static bool ident_byte(unsigned char c)
{
    return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c >= 0x80;
}

/* Length of a string prefix (r, b, u, f, t and their pairs) at i that a
 * quote follows, or -1 when i does not start a string. */
static int string_prefix(const char *s, uint32_t len, uint32_t i)
{
    uint32_t n = 0;
    while (n < 3 && i + n < len && strchr("rRbBuUfFtT", s[i + n]) != NULL && s[i + n] != '\0')
        n++;
    if (i + n >= len || (s[i + n] != '\'' && s[i + n] != '"'))
        return -1;
    if (n == 0)
        return 0;
    if (i > 0 && ident_byte((unsigned char)s[i - 1]))
        return -1;
    if (n == 3)
        return -1;
    char a = (char)(s[i] | 0x20), b = n == 2 ? (char)(s[i + 1] | 0x20) : 0;
    if (n == 1)
        return 1;
    /* br, rb, fr, rf, tr, rt */
    if ((a == 'r' && strchr("bft", b)) || (b == 'r' && strchr("bft", a)))
        return 2;
    return -1;
}

static uint32_t skip_string(const char *s, uint32_t len, uint32_t i, int nest);

/* A format spec after `:` in a replacement field; returns the index after
 * the field's closing `}`. */
static uint32_t skip_format_spec(const char *s, uint32_t len, uint32_t i, int nest);

/* The expression of an f-string replacement field, from just after its `{`;
 * returns the index after the field's closing `}`. */
static uint32_t skip_replacement(const char *s, uint32_t len, uint32_t i, int nest)
{
    int depth = 0;
    while (i < len) {
        char c = s[i];
        if (string_prefix(s, len, i) >= 0) {
            i = skip_string(s, len, i, nest + 1);
            continue;
        }
        if (c == '(' || c == '[' || c == '{') {
            depth++;
        } else if (c == ')' || c == ']') {
            if (depth > 0)
                depth--;
        } else if (c == '}') {
            if (depth == 0)
                return i + 1;
            depth--;
        } else if (c == ':' && depth == 0) {
            return skip_format_spec(s, len, i + 1, nest);
        } else if (c == '#') {
            while (i < len && s[i] != '\n')
                i++;
            continue;
        }
        i++;
    }
    return len;
}

static uint32_t skip_format_spec(const char *s, uint32_t len, uint32_t i, int nest)
{
    while (i < len && s[i] != '\n') {
        if (s[i] == '{') {
            i = nest < GAP_MAX_NEST ? skip_replacement(s, len, i + 1, nest + 1) : i + 1;
            continue;
        }
        if (s[i] == '}')
            return i + 1;
        i++;
    }
    return i;
}

/* The string literal starting at i (prefix included); returns the index
 * after its closing quote (or where an unterminated one gives out). */
static uint32_t skip_string(const char *s, uint32_t len, uint32_t i, int nest)
{
    bool fmt = false;
    while (i < len && s[i] != '\'' && s[i] != '"') {
        char p = (char)(s[i] | 0x20);
        if (p == 'f' || p == 't')
            fmt = true;
        i++;
    }
    if (i >= len)
        return len;
    char q = s[i];
    bool triple = i + 2 < len && s[i + 1] == q && s[i + 2] == q;
    i += triple ? 3 : 1;
    while (i < len) {
        char c = s[i];
        if (c == '\\') {
            i += 2;
            continue;
        }
        if (c == '\n' && !triple)
            return i;
        if (fmt && c == '{') {
            if (i + 1 < len && s[i + 1] == '{')
                i += 2;
            else if (nest < GAP_MAX_NEST)
                i = skip_replacement(s, len, i + 1, nest + 1);
            else
                i++;
            continue;
        }
        if (c == q && (!triple || (i + 2 < len && s[i + 1] == q && s[i + 2] == q)))
            return i + (triple ? 3 : 1);
        i++;
    }
    return len;
}

static bool is_keyword(const char *w, uint32_t n)
{
    static const char *const kw[] = {"and", "as", "assert", "async", "await", "break", "class", "continue",
                                     "def", "del", "elif", "else", "except", "finally", "for", "from",
                                     "global", "if", "import", "in", "is", "lambda", "nonlocal", "not",
                                     "or", "pass", "raise", "return", "try", "while", "with", "yield"};
    for (size_t k = 0; k < OL_ARRAY_LEN(kw); k++)
        if (strlen(kw[k]) == n && memcmp(kw[k], w, n) == 0)
            return true;
    return false;
}

static bool word_is(const char *s, uint32_t at, uint32_t n, const char *w)
{
    return strlen(w) == n && memcmp(s + at, w, n) == 0;
}

char *ol_syntax_gap_rewrite(const char *src, uint32_t len, ol_span_vec *blanked)
{
    gap_state g = {src, NULL, len, blanked};
    OL_VEC(gap_bracket) stack = {0};
    bool operand = false;      /* the previous token ends an operand */
    bool stmt_start = true;    /* the next token starts a logical line */
    int header = 0;            /* 1: after def/class/type; 2: after its name */
    size_t default_depth = 0;  /* blanking a type-parameter default at this depth (0: not) */
    uint32_t i = 0;
    while (i < len) {
        char c = src[i];
        if (default_depth && stack.len == default_depth && (c == ',' || c == ']'))
            default_depth = 0;
        if (default_depth) {
            /* everything of `= default` goes, strings, comments and brackets included */
            uint32_t from = i;
            if (string_prefix(src, len, i) >= 0) {
                i = skip_string(src, len, i, 0);
            } else if (c == '#') {
                while (i < len && src[i] != '\n' && src[i] != '\r')
                    i++;
            } else {
                if (c == '(' || c == '[' || c == '{') {
                    gap_bracket b = {c, false, false};
                    ol_vec_push(&stack, b);
                } else if ((c == ')' || c == ']' || c == '}') && stack.len > default_depth) {
                    stack.len--;
                }
                i++;
            }
            blank(&g, from, i);
            continue;
        }
        if (c == '#') {
            uint32_t end = i;
            while (end < len && src[end] != '\n' && src[end] != '\r')
                end++;
            if (stack.len > 0) {
                ol_span sp = {i, end};
                ol_vec_push(blanked, sp);
                blank(&g, i, end);
            }
            i = end;
            continue;
        }
        if (c == '\n' || c == '\r') {
            if (stack.len > 0) {
                blank(&g, i, i + 1);
            } else {
                stmt_start = true;
                operand = false;
                header = 0;
            }
            i++;
            continue;
        }
        if (c == '\\' && i + 1 < len && (src[i + 1] == '\n' || src[i + 1] == '\r')) {
            uint32_t end = i + 2;
            if (src[i + 1] == '\r' && end < len && src[end] == '\n')
                end++;
            if (stack.len > 0)
                blank(&g, i, end);
            i = end;
            continue;
        }
        if (c == ' ' || c == '\t' || c == '\f') {
            i++;
            continue;
        }
        if (string_prefix(src, len, i) >= 0) {
            i = skip_string(src, len, i, 0);
            operand = true;
            stmt_start = false;
            header = 0;
            continue;
        }
        if (ident_byte((unsigned char)c)) {
            uint32_t start = i;
            while (i < len && ident_byte((unsigned char)src[i]))
                i++;
            uint32_t n = i - start;
            bool digit = c >= '0' && c <= '9';
            if (digit) {
                /* 1.5e-3: the sign of an exponent is part of the number */
                while (i < len && (ident_byte((unsigned char)src[i]) || src[i] == '.' ||
                                   ((src[i] == '+' || src[i] == '-') && (src[i - 1] | 0x20) == 'e')))
                    i++;
            }
            bool kw = !digit && is_keyword(src + start, n);
            if (header == 1 && !kw && !digit)
                header = 2;
            else if (!digit && (word_is(src, start, n, "def") || word_is(src, start, n, "class") ||
                                (stmt_start && stack.len == 0 && word_is(src, start, n, "type"))))
                header = 1;
            else
                header = 0;
            operand = !kw || word_is(src, start, n, "True") || word_is(src, start, n, "False") ||
                      word_is(src, start, n, "None");
            stmt_start = false;
            continue;
        }
        if (c == '(' || c == '[' || c == '{') {
            gap_bracket b = {c, c == '[' && operand && header != 2, c == '[' && header == 2};
            ol_vec_push(&stack, b);
            operand = false;
            header = 0;
            stmt_start = false;
            i++;
            continue;
        }
        if (c == ')' || c == ']' || c == '}') {
            if (stack.len > 0)
                stack.len--;
            operand = true;
            header = 0;
            i++;
            continue;
        }
        if (c == '*' && !operand && (i + 1 >= len || (src[i + 1] != '*' && src[i + 1] != '=')) &&
            (stack.len == 0 || ol_vec_last(&stack).subscript)) {
            uint32_t j = i + 1;
            while (j < len && (src[j] == ' ' || src[j] == '\t'))
                j++;
            if (j < len && (src[j] == '(' || src[j] == '[' || src[j] == '{'))
                blank(&g, i, i + 1);
            i++;
            continue;
        }
        if (c == '=' && stack.len > 0 && ol_vec_last(&stack).typeparams && !(i + 1 < len && src[i + 1] == '=')) {
            default_depth = stack.len;
            continue; /* the loop's first branch blanks from here */
        }
        if (c == ';')
            stmt_start = true;
        else
            stmt_start = false;
        /* operators: two-character ones are consumed whole so `**` is not two stars */
        if (i + 1 < len && strchr("*/<>=!:-+%&|^@", c) && (src[i + 1] == '=' || (src[i + 1] == c && strchr("*/<>", c))))
            i += 2;
        else
            i++;
        operand = false;
        header = 0;
    }
    ol_vec_free(&stack);
    return g.out;
}
