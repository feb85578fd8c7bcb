/*
 * notebook.c - reading .ipynb files into a Python source, and writing fixed
 * code back into them.
 *
 * Two passes over the JSON. A small scanner of our own validates the text
 * (with a nesting bound, so a hostile file cannot exhaust anything) and
 * records where each cell's "source" value sits: its byte range and the
 * .ipynb line of each source line. cJSON then reads the content. Writing
 * back replaces only the "source" values of changed cells, in the layout
 * they had, so the rest of the notebook stays byte-for-byte as it was.
 *
 * Magic and shell lines are blanked length-preservingly (`pass` padded with
 * spaces when it fits, spaces otherwise), so byte offsets inside a cell are
 * the same in the joined text as in the original cell source.
 */
#include "notebook.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <cjson/cJSON.h>

#define NB_MAX_DEPTH 256

bool ol_is_notebook_path(const char *path)
{
    return ol_str_has_suffix(path, ".ipynb");
}

/* ---- the scanner ------------------------------------------------------------ */

typedef struct cell_pos {
    uint32_t value_start, value_end; /* byte range of the "source" value */
    bool is_array;
    OL_VEC(uint32_t) lines;          /* 1-based line of each string in it */
    uint32_t elem_indent;            /* columns before the first element (array form on lines) */
    uint32_t close_indent;           /* columns before the closing ']' */
    bool multiline;                  /* array elements on their own lines */
} cell_pos;

typedef OL_VEC(cell_pos) cell_pos_vec;

typedef struct frame {
    bool is_object;
    uint32_t index;          /* arrays: element index */
    char key[16];            /* objects: current key (truncated, enough for the keys we track) */
    int role;                /* what this container is, see ROLE_* */
} frame;

enum {
    ROLE_OTHER,
    ROLE_ROOT,
    ROLE_CELLS,        /* the cells array */
    ROLE_CELL,         /* one cell object */
    ROLE_SOURCE,       /* a cell's source array */
    ROLE_WORKSHEETS,   /* nbformat 3 */
    ROLE_WORKSHEET,
};

typedef struct scanner {
    const char *s;
    size_t n, i;
    uint32_t line;
    frame stack[NB_MAX_DEPTH];
    int depth;
    cell_pos_vec *cells;
    const char *error;
} scanner;

static void skip_ws(scanner *sc)
{
    while (sc->i < sc->n) {
        char c = sc->s[sc->i];
        if (c == '\n')
            sc->line++;
        else if (c != ' ' && c != '\t' && c != '\r')
            return;
        sc->i++;
    }
}

/* Scans a string token; copies up to cap-1 raw bytes of it into out. */
static bool scan_string(scanner *sc, char *out, size_t cap)
{
    size_t k = 0;
    sc->i++; /* opening quote */
    while (sc->i < sc->n) {
        unsigned char c = (unsigned char)sc->s[sc->i];
        if (c == '"') {
            sc->i++;
            if (out)
                out[k] = '\0';
            return true;
        }
        if (c < 0x20) {
            sc->error = "control character in a string";
            return false;
        }
        if (c == '\\') {
            if (sc->i + 1 >= sc->n) {
                sc->error = "unterminated string";
                return false;
            }
            char e = sc->s[sc->i + 1];
            if (e == 'u') {
                for (int h = 2; h < 6; h++) {
                    char x = sc->i + (size_t)h < sc->n ? sc->s[sc->i + (size_t)h] : 0;
                    if (!((x >= '0' && x <= '9') || (x >= 'a' && x <= 'f') || (x >= 'A' && x <= 'F'))) {
                        sc->error = "bad \\u escape";
                        return false;
                    }
                }
                sc->i += 6;
                continue;
            }
            if (!strchr("\"\\/bfnrt", e)) {
                sc->error = "bad escape in a string";
                return false;
            }
            sc->i += 2;
            continue;
        }
        if (out && k + 1 < cap)
            out[k++] = (char)c;
        sc->i++;
    }
    sc->error = "unterminated string";
    return false;
}

static bool scan_literal(scanner *sc)
{
    static const char *const words[] = {"true", "false", "null"};
    for (size_t w = 0; w < 3; w++) {
        size_t len = strlen(words[w]);
        if (sc->i + len <= sc->n && memcmp(sc->s + sc->i, words[w], len) == 0) {
            sc->i += len;
            return true;
        }
    }
    /* number */
    size_t start = sc->i;
    if (sc->i < sc->n && sc->s[sc->i] == '-')
        sc->i++;
    bool digits = false;
    while (sc->i < sc->n && ((sc->s[sc->i] >= '0' && sc->s[sc->i] <= '9') || sc->s[sc->i] == '.' ||
                             sc->s[sc->i] == 'e' || sc->s[sc->i] == 'E' || sc->s[sc->i] == '+' ||
                             sc->s[sc->i] == '-')) {
        digits = true;
        sc->i++;
    }
    if (!digits || sc->i == start) {
        sc->error = "unexpected character";
        return false;
    }
    return true;
}

static uint32_t column_of(const scanner *sc, size_t at)
{
    uint32_t col = 0;
    while (at > 0 && sc->s[at - 1] != '\n' && sc->s[at - 1] != '\r') {
        at--;
        col++;
    }
    return col;
}

/* Role of a container that opens as the value of the current position. */
static int child_role(const scanner *sc, bool is_object)
{
    if (sc->depth == 0)
        return is_object ? ROLE_ROOT : ROLE_OTHER;
    const frame *top = &sc->stack[sc->depth - 1];
    if (top->role == ROLE_ROOT && top->is_object && !is_object) {
        if (strcmp(top->key, "cells") == 0)
            return ROLE_CELLS;
        if (strcmp(top->key, "worksheets") == 0)
            return ROLE_WORKSHEETS;
    }
    if (top->role == ROLE_WORKSHEETS && is_object)
        return ROLE_WORKSHEET;
    if (top->role == ROLE_WORKSHEET && !is_object && strcmp(top->key, "cells") == 0)
        return ROLE_CELLS;
    if (top->role == ROLE_CELLS && is_object)
        return ROLE_CELL;
    if (top->role == ROLE_CELL && !is_object && (strcmp(top->key, "source") == 0 || strcmp(top->key, "input") == 0))
        return ROLE_SOURCE;
    return ROLE_OTHER;
}

static bool in_cell_source_key(const scanner *sc)
{
    if (sc->depth == 0)
        return false;
    const frame *top = &sc->stack[sc->depth - 1];
    return top->role == ROLE_CELL && (strcmp(top->key, "source") == 0 || strcmp(top->key, "input") == 0);
}

static bool scan(scanner *sc)
{
    /* states: expecting a value, or after a value inside a container */
    bool expect_value = true;
    for (;;) {
        skip_ws(sc);
        if (sc->i >= sc->n) {
            if (sc->depth == 0 && !expect_value)
                return true;
            sc->error = "unexpected end of file";
            return false;
        }
        char c = sc->s[sc->i];
        if (expect_value) {
            if (c == '{' || c == '[') {
                if (sc->depth >= NB_MAX_DEPTH) {
                    sc->error = "nested too deeply";
                    return false;
                }
                bool obj = c == '{';
                int role = child_role(sc, obj);
                if (role == ROLE_CELL) {
                    cell_pos cp = {0};
                    ol_vec_push(sc->cells, cp);
                }
                if (role == ROLE_SOURCE && sc->cells->len > 0) {
                    cell_pos *cp = &ol_vec_last(sc->cells);
                    cp->value_start = (uint32_t)sc->i;
                    cp->is_array = true;
                }
                frame f = {obj, 0, "", role};
                sc->stack[sc->depth++] = f;
                sc->i++;
                skip_ws(sc);
                if (sc->i < sc->n && sc->s[sc->i] == (obj ? '}' : ']')) {
                    expect_value = false;
                    continue; /* the close is handled below */
                }
                if (obj) {
                    if (sc->i >= sc->n || sc->s[sc->i] != '"') {
                        sc->error = "expected a key";
                        return false;
                    }
                    char key[16];
                    if (!scan_string(sc, key, sizeof key))
                        return false;
                    memcpy(sc->stack[sc->depth - 1].key, key, sizeof key);
                    skip_ws(sc);
                    if (sc->i >= sc->n || sc->s[sc->i] != ':') {
                        sc->error = "expected ':'";
                        return false;
                    }
                    sc->i++;
                }
                continue;
            }
            if (c == '"') {
                size_t start = sc->i;
                uint32_t line = sc->line;
                bool whole_source = in_cell_source_key(sc);
                bool source_elem = sc->depth > 0 && sc->stack[sc->depth - 1].role == ROLE_SOURCE;
                if (!scan_string(sc, NULL, 0))
                    return false;
                if ((whole_source || source_elem) && sc->cells->len > 0) {
                    cell_pos *cp = &ol_vec_last(sc->cells);
                    ol_vec_push(&cp->lines, line);
                    if (whole_source) {
                        cp->value_start = (uint32_t)start;
                        cp->value_end = (uint32_t)sc->i;
                    } else if (cp->lines.len == 1) {
                        cp->elem_indent = column_of(sc, start);
                        /* a line break of any style (JSON allows CR alone) */
                        cp->multiline = (size_t)cp->value_start < start &&
                                        (memchr(sc->s + cp->value_start, '\n', start - cp->value_start) ||
                                         memchr(sc->s + cp->value_start, '\r', start - cp->value_start));
                    }
                }
                expect_value = false;
                continue;
            }
            if (!scan_literal(sc))
                return false;
            expect_value = false;
            continue;
        }
        /* after a value */
        if (sc->depth == 0) {
            sc->error = "trailing characters after the JSON value";
            return false;
        }
        frame *top = &sc->stack[sc->depth - 1];
        if (c == ',') {
            sc->i++;
            if (top->is_object) {
                skip_ws(sc);
                if (sc->i >= sc->n || sc->s[sc->i] != '"') {
                    sc->error = "expected a key";
                    return false;
                }
                char key[16];
                if (!scan_string(sc, key, sizeof key))
                    return false;
                memcpy(top->key, key, sizeof key);
                skip_ws(sc);
                if (sc->i >= sc->n || sc->s[sc->i] != ':') {
                    sc->error = "expected ':'";
                    return false;
                }
                sc->i++;
            } else {
                top->index++;
            }
            expect_value = true;
            continue;
        }
        if (c == (top->is_object ? '}' : ']')) {
            if (top->role == ROLE_SOURCE && sc->cells->len > 0) {
                cell_pos *cp = &ol_vec_last(sc->cells);
                cp->value_end = (uint32_t)sc->i + 1;
                cp->close_indent = column_of(sc, sc->i);
            }
            sc->depth--;
            sc->i++;
            expect_value = false;
            continue;
        }
        sc->error = top->is_object ? "expected ',' or '}'" : "expected ',' or ']'";
        return false;
    }
}

static void free_cell_pos(cell_pos_vec *v)
{
    for (size_t i = 0; i < v->len; i++)
        ol_vec_free(&v->items[i].lines);
    ol_vec_free(v);
}

/* ---- building the joined text ---------------------------------------------------- */

static bool is_python_cell_magic(const char *line, size_t len)
{
    static const char *const keep[] = {"%%time", "%%timeit", "%%capture", "%%prun", "%%memit", NULL};
    for (const char *const *k = keep; *k; k++) {
        size_t kl = strlen(*k);
        if (len >= kl && memcmp(line, *k, kl) == 0 && (len == kl || line[kl] == ' ' || line[kl] == '\t'))
            return true;
    }
    return false;
}

/* Blanks a magic/shell line in place, keeping its byte length. */
static void blank_line(char *line, size_t len)
{
    size_t i = 0;
    while (i < len && (line[i] == ' ' || line[i] == '\t'))
        i++;
    if (len - i >= 4) {
        memcpy(line + i, "pass", 4);
        i += 4;
    }
    for (; i < len; i++)
        line[i] = ' ';
}

/* `model?`, `torch.nn.Linear??`, `torch.*Tensor?`: IPython's help and
 * search syntax. */
static bool help_line(const char *s, size_t n)
{
    while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\r'))
        n--;
    size_t q = 0;
    while (q < 2 && n > 0 && s[n - 1] == '?') {
        n--;
        q++;
    }
    if (q == 0 || n == 0)
        return false;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        /* `torch.*Tensor?`: a wildcard search (%psearch) */
        bool ok = c == '_' || c == '.' || c == '*' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                  (c >= '0' && c <= '9');
        if (!ok)
            return false;
    }
    return !(s[0] >= '0' && s[0] <= '9');
}

/* `pip install timm`, `cd data`, `conda install -y x`: a line magic written
 * without its `%`, which IPython runs as one (automagic, on by default).
 * Only a magic's name followed by a word or an option, never by an
 * operator, a bracket or a Python keyword (`ls in dirs`, `cd = 3` and
 * `time(x)` are Python). */
static bool automagic_line(const char *s, size_t n)
{
    static const char *const magics[] = {"pip", "conda", "mamba", "cd", "ls", "ll", "pwd", "mkdir", "rmdir", "rm",
                                         "cp", "mv", "cat", "env", "load_ext", "reload_ext", "matplotlib",
                                         "pylab", "timeit", "time", "run", "autoreload", "pushd", "popd", "who",
                                         "whos", "reset", "history", "psearch", "pinfo", "pdef", "xmode",
                                         "config", "store", "alias", "system", "sx", "sc", "less", "man", NULL};
    static const char *const keywords[] = {"in", "is", "if", "else", "and", "or", "not", "for", "lambda", "as", NULL};
    size_t w = 0;
    while (w < n && (s[w] == '_' || (s[w] >= 'a' && s[w] <= 'z') || (s[w] >= '0' && s[w] <= '9')))
        w++;
    bool known = false;
    for (const char *const *m = magics; *m && !known; m++)
        known = strlen(*m) == w && memcmp(s, *m, w) == 0;
    if (!known || w >= n || (s[w] != ' ' && s[w] != '\t'))
        return false;
    size_t i = w;
    while (i < n && (s[i] == ' ' || s[i] == '\t'))
        i++;
    if (i >= n)
        return false;
    char c = s[i];
    bool word = c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
    if (!word && c != '-' && c != '/' && c != '~' && c != '.' && c != '$')
        return false;
    if (c == '-' && i + 1 < n && (s[i + 1] == ' ' || s[i + 1] == '=' || (s[i + 1] >= '0' && s[i + 1] <= '9')))
        return false; /* `time - 1`, `time -= 1`, `ls -1`: arithmetic */
    if (c == '.' && i + 1 < n && s[i + 1] >= '0' && s[i + 1] <= '9')
        return false;
    size_t e = i;
    while (e < n && (s[e] == '_' || (s[e] >= 'a' && s[e] <= 'z') || (s[e] >= 'A' && s[e] <= 'Z') ||
                     (s[e] >= '0' && s[e] <= '9')))
        e++;
    for (const char *const *k = keywords; *k; k++)
        if (strlen(*k) == e - i && memcmp(s + i, *k, e - i) == 0)
            return false;
    return true;
}

/* `files = !ls`, `t = %timeit -o f()`: a shell or magic result bound to a
 * name (IPython's capture assignment). */
static bool capture_line(const char *s, size_t n)
{
    size_t i = 0;
    if (i >= n || !(s[i] == '_' || (s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z')))
        return false;
    while (i < n && (s[i] == '_' || (s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') ||
                     (s[i] >= '0' && s[i] <= '9')))
        i++;
    while (i < n && (s[i] == ' ' || s[i] == '\t'))
        i++;
    if (i + 1 >= n || s[i] != '=' || s[i + 1] == '=')
        return false;
    i++;
    while (i < n && (s[i] == ' ' || s[i] == '\t'))
        i++;
    return i < n && (s[i] == '!' || s[i] == '%');
}

/* Which lines of a cell are IPython syntax to blank: magics, shell escapes
 * and help (`%x`, `!x`, `?x`, `x?`, `y = !x`) at the start of a logical line, with the
 * lines a trailing backslash continues them on, or every line of a
 * whole-cell magic such as %%bash. A `%` that continues an open
 * bracket, a triple-quoted string or a backslash line (`"..." % (a, b)` over
 * two lines) is Python. Returns one flag per line (count in *lines). */
static bool *ipython_lines(const char *s, size_t n, size_t *lines)
{
    size_t count = 1;
    for (size_t i = 0; i < n; i++)
        count += s[i] == '\n';
    bool *magic = ol_xcalloc(count, sizeof(bool));
    size_t first_len = 0;
    while (first_len < n && s[first_len] != '\n')
        first_len++;
    bool blank_all = n >= 2 && s[0] == '%' && s[1] == '%' && !is_python_cell_magic(s, first_len);
    int depth = 0;
    char quote = 0;      /* open string's quote character */
    bool triple = false; /* ... and whether it is triple-quoted */
    bool continued = false;
    bool magic_continued = false; /* the line before is IPython syntax ending with a backslash */
    size_t line = 0, i = 0;
    while (i <= n && line < count) {
        size_t end = i;
        while (end < n && s[end] != '\n')
            end++;
        bool logical_start = depth == 0 && !(quote && triple) && !continued;
        size_t j = i;
        while (j < end && (s[j] == ' ' || s[j] == '\t'))
            j++;
        if (blank_all || magic_continued ||
            (logical_start && ((j < end && (s[j] == '%' || s[j] == '!' || s[j] == '?')) || help_line(s + j, end - j) ||
                               capture_line(s + j, end - j) || automagic_line(s + j, end - j))))
            magic[line] = true;
        /* `!python run.py \` goes on with the next line, as IPython joins it */
        size_t last = end;
        while (last > i && (s[last - 1] == '\r' || s[last - 1] == ' ' || s[last - 1] == '\t'))
            last--;
        magic_continued = magic[line] && last > i && s[last - 1] == '\\';
        /* advance the bracket and string state over this line */
        continued = false;
        if (!magic[line]) {
            for (size_t k = i; k < end; k++) {
                char c = s[k];
                if (quote) {
                    if (c == '\\') {
                        k++;
                        continue;
                    }
                    if (c == quote && (!triple || (k + 2 < end && s[k + 1] == quote && s[k + 2] == quote))) {
                        if (triple)
                            k += 2;
                        quote = 0;
                    }
                    continue;
                }
                if (c == '#')
                    break;
                if (c == '"' || c == '\'') {
                    quote = c;
                    triple = k + 2 < end && s[k + 1] == c && s[k + 2] == c;
                    if (triple)
                        k += 2;
                } else if (c == '(' || c == '[' || c == '{') {
                    depth++;
                } else if (c == ')' || c == ']' || c == '}') {
                    if (depth > 0)
                        depth--;
                } else if (c == '\\' && k + 1 == end) {
                    continued = true;
                }
            }
            if (quote && !triple)
                quote = 0; /* an unterminated one-line string ends with its line */
        }
        line++;
        i = end + 1;
    }
    *lines = count;
    return magic;
}

/* Appends one cell's source to the joined text, blanking IPython syntax. */
static uint32_t append_cell(ol_buf *out, const char *code, size_t len)
{
    size_t base = out->len;
    ol_buf_add(out, code, len);
    char *s = out->data + base;
    size_t count;
    bool *magic = ipython_lines(s, len, &count);
    uint32_t lines = 0;
    size_t i = 0, line = 0;
    while (i < len) {
        size_t end = i;
        while (end < len && s[end] != '\n')
            end++;
        if (line < count && magic[line])
            blank_line(s + i, end - i);
        lines++;
        line++;
        i = end + 1;
    }
    free(magic);
    if (len == 0 || code[len - 1] != '\n') {
        ol_buf_putc(out, '\n');
        if (len == 0)
            lines = 1;
    }
    return lines;
}

/* Is the notebook's language Python, or unstated? metadata.kernelspec.language
 * and metadata.language_info.name say ("python", "python3"); a Julia, R or
 * Scala notebook says another. */
static bool python_kernel(const cJSON *root)
{
    const cJSON *meta = cJSON_GetObjectItemCaseSensitive(root, "metadata");
    if (!cJSON_IsObject(meta))
        return true;
    const cJSON *names[2] = {NULL, NULL};
    const cJSON *ks = cJSON_GetObjectItemCaseSensitive(meta, "kernelspec");
    const cJSON *li = cJSON_GetObjectItemCaseSensitive(meta, "language_info");
    if (cJSON_IsObject(ks))
        names[0] = cJSON_GetObjectItemCaseSensitive(ks, "language");
    if (cJSON_IsObject(li))
        names[1] = cJSON_GetObjectItemCaseSensitive(li, "name");
    for (int i = 0; i < 2; i++)
        if (cJSON_IsString(names[i]) && names[i]->valuestring[0] &&
            strncasecmp(names[i]->valuestring, "python", 6) != 0 && strncasecmp(names[i]->valuestring, "ipython", 7) != 0)
            return false;
    return true;
}

bool ol_notebook_load(ol_source *src, const char *path, char *bytes, size_t n, ol_buf *err)
{
    memset(src, 0, sizeof(*src));
    src->path = ol_xstrdup(path);
    src->text = ol_xstrdup("");
    ol_source_index_lines(src);
    const char *body = bytes;
    size_t body_len = n;
    if (n >= 3 && memcmp(bytes, "\xEF\xBB\xBF", 3) == 0) {
        body += 3;
        body_len -= 3;
    }
    size_t bad = ol_utf8_validate(body, body_len);
    if (bad != body_len || memchr(body, '\0', body_len)) {
        ol_buf_puts(err, "notebook is not valid UTF-8 text");
        free(bytes);
        return false;
    }
    cell_pos_vec positions = {0};
    scanner sc = {body, body_len, 0, 1, {{0}}, 0, &positions, NULL};
    if (!scan(&sc)) {
        ol_buf_printf(err, "notebook is not valid JSON (%s at line %u)", sc.error, sc.line);
        free_cell_pos(&positions);
        free(bytes);
        return false;
    }
    cJSON *root = cJSON_ParseWithLength(body, body_len);
    if (!root || !cJSON_IsObject(root)) {
        ol_buf_puts(err, "notebook is not a JSON object");
        cJSON_Delete(root);
        free_cell_pos(&positions);
        free(bytes);
        return false;
    }
    /* nbformat 4: cells; nbformat 3: worksheets[*].cells */
    cJSON *cells = cJSON_GetObjectItemCaseSensitive(root, "cells");
    cJSON *worksheets = cJSON_GetObjectItemCaseSensitive(root, "worksheets");
    if (!cJSON_IsArray(cells) && !cJSON_IsArray(worksheets)) {
        ol_buf_puts(err, "notebook has no \"cells\" list");
        cJSON_Delete(root);
        free_cell_pos(&positions);
        free(bytes);
        return false;
    }
    /* a notebook of another language (a Julia or R kernel) holds no Python:
     * its code cells are not linted */
    bool foreign = !python_kernel(root);
    ol_buf text = {0};
    uint32_t line = 0, index = 0, json_index = 0;
    cJSON *ws = cJSON_IsArray(worksheets) ? worksheets->child : NULL;
    cJSON *list = cJSON_IsArray(cells) ? cells : (ws ? cJSON_GetObjectItemCaseSensitive(ws, "cells") : NULL);
    bool ok = true;
    while (list && ok) {
        for (cJSON *cell = list->child; cell; cell = cell->next, json_index++) {
            index++;
            if (!cJSON_IsObject(cell))
                continue;
            cJSON *type = cJSON_GetObjectItemCaseSensitive(cell, "cell_type");
            if (foreign || !cJSON_IsString(type) || strcmp(type->valuestring, "code") != 0)
                continue;
            cJSON *source = cJSON_GetObjectItemCaseSensitive(cell, "source");
            if (!source)
                source = cJSON_GetObjectItemCaseSensitive(cell, "input");
            ol_buf code = {0};
            if (cJSON_IsString(source)) {
                ol_buf_puts(&code, source->valuestring);
            } else if (cJSON_IsArray(source)) {
                for (cJSON *part = source->child; part; part = part->next)
                    if (cJSON_IsString(part))
                        ol_buf_puts(&code, part->valuestring);
            } else if (source) {
                ol_buf_printf(err, "cell %u has a source that is not text", index);
                ok = false;
                ol_buf_free(&code);
                break;
            }
            ol_cell c = {0};
            c.index = index;
            c.json_index = json_index;
            c.first_line = line;
            c.line_count = append_cell(&text, code.data ? code.data : "", code.len);
            c.file_lines = ol_xcalloc(c.line_count, sizeof(uint32_t));
            if (json_index < positions.len) {
                const cell_pos *cp = &positions.items[json_index];
                for (uint32_t k = 0; k < c.line_count; k++) {
                    if (cp->is_array && k < cp->lines.len)
                        c.file_lines[k] = cp->lines.items[k];
                    else if (cp->lines.len > 0)
                        c.file_lines[k] = cp->lines.items[cp->is_array ? cp->lines.len - 1 : 0];
                }
            }
            line += c.line_count;
            ol_vec_push(&src->cells, c);
            ol_buf_free(&code);
        }
        ws = ws ? ws->next : NULL;
        list = ws ? cJSON_GetObjectItemCaseSensitive(ws, "cells") : NULL;
    }
    cJSON_Delete(root);
    free_cell_pos(&positions);
    if (!ok) {
        ol_buf_free(&text);
        free(bytes);
        return false;
    }
    if (text.len >= UINT32_MAX) {
        ol_buf_puts(err, "notebook code is too large");
        ol_buf_free(&text);
        free(bytes);
        return false;
    }
    free(src->text);
    src->len = (uint32_t)text.len;
    src->text = ol_buf_take(&text);
    src->notebook = true;
    src->raw_len = n;
    src->raw = bytes;
    ol_source_index_lines(src);
    return true;
}

void ol_notebook_from_cells(ol_source *src, const char *path, const char *const *texts, const size_t *lens,
                            const uint32_t *indexes, size_t count)
{
    memset(src, 0, sizeof(*src));
    src->path = ol_xstrdup(path);
    ol_buf text = {0};
    uint32_t line = 0;
    for (size_t i = 0; i < count; i++) {
        ol_cell c = {0};
        c.index = indexes ? indexes[i] : (uint32_t)i + 1;
        c.json_index = (uint32_t)i;
        c.first_line = line;
        c.line_count = append_cell(&text, texts[i], lens[i]);
        c.file_lines = ol_xcalloc(c.line_count, sizeof(uint32_t));
        line += c.line_count;
        ol_vec_push(&src->cells, c);
    }
    ol_buf_reserve(&text, 0);
    src->len = (uint32_t)text.len;
    src->text = ol_buf_take(&text);
    src->notebook = true;
    ol_source_index_lines(src);
}

/* ---- writing back ------------------------------------------------------------------- */

static void json_string(ol_buf *out, const char *s, size_t n)
{
    ol_buf_putc(out, '"');
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        switch (c) {
        case '"':
            ol_buf_puts(out, "\\\"");
            break;
        case '\\':
            ol_buf_puts(out, "\\\\");
            break;
        case '\n':
            ol_buf_puts(out, "\\n");
            break;
        case '\r':
            ol_buf_puts(out, "\\r");
            break;
        case '\t':
            ol_buf_puts(out, "\\t");
            break;
        default:
            if (c < 0x20)
                ol_buf_printf(out, "\\u%04x", c);
            else
                ol_buf_putc(out, (char)c);
        }
    }
    ol_buf_putc(out, '"');
}

static void spaces(ol_buf *out, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++)
        ol_buf_putc(out, ' ');
}

bool ol_notebook_render(const ol_source *src, const char *text, size_t len, ol_buf *out, ol_buf *err)
{
    if (!src->notebook || !src->raw) {
        ol_buf_puts(err, "not a notebook");
        return false;
    }
    const char *body = src->raw;
    size_t body_len = src->raw_len;
    size_t bom = 0;
    if (body_len >= 3 && memcmp(body, "\xEF\xBB\xBF", 3) == 0)
        bom = 3;
    cell_pos_vec positions = {0};
    scanner sc = {body + bom, body_len - bom, 0, 1, {{0}}, 0, &positions, NULL};
    if (!scan(&sc)) {
        free_cell_pos(&positions);
        ol_buf_puts(err, "the notebook could not be re-read");
        return false;
    }
    /* split the new joined text at the old cell boundaries */
    uint32_t total_lines = 1;
    for (size_t i = 0; i < len; i++)
        if (text[i] == '\n')
            total_lines++;
    uint32_t expected = src->cells.len ? ol_vec_last(&src->cells).first_line + ol_vec_last(&src->cells).line_count + 1
                                       : 1;
    if (total_lines != expected) {
        free_cell_pos(&positions);
        ol_buf_puts(err, "a fix changed the number of lines in a notebook; notebooks are fixed line for line only");
        return false;
    }
    /* a rewritten multi-line source array breaks its lines as the rest of
     * the file does (a notebook saved on Windows keeps its CRLF) */
    const char *json_newline = "\n";
    const char *first_break = memchr(body, '\n', body_len);
    if (first_break && first_break > body && first_break[-1] == '\r')
        json_newline = "\r\n";
    else if (!first_break && memchr(body, '\r', body_len))
        json_newline = "\r";
    ol_buf_clear(out);
    ol_buf_add(out, body, bom);
    size_t copied = 0; /* offset in body+bom up to which the original was copied */
    const char *line_ptr = text;
    for (size_t ci = 0; ci < src->cells.len; ci++) {
        const ol_cell *cell = &src->cells.items[ci];
        /* the cell's new code: its lines of the joined text */
        const char *cell_start = line_ptr;
        for (uint32_t k = 0; k < cell->line_count; k++) {
            const char *nl = memchr(line_ptr, '\n', (size_t)(text + len - line_ptr));
            line_ptr = nl ? nl + 1 : text + len;
        }
        size_t cell_len = (size_t)(line_ptr - cell_start);
        if (cell->json_index >= positions.len)
            continue;
        const cell_pos *cp = &positions.items[cell->json_index];
        if (cp->value_end <= cp->value_start)
            continue;
        /* recover the original cell code to see whether it ended with a newline
         * and to restore magic lines, which the joined text blanked */
        cJSON *value = cJSON_ParseWithLength(body + bom + cp->value_start, cp->value_end - cp->value_start);
        ol_buf orig = {0};
        if (cJSON_IsString(value)) {
            ol_buf_puts(&orig, value->valuestring);
        } else if (cJSON_IsArray(value)) {
            for (cJSON *part = value->child; part; part = part->next)
                if (cJSON_IsString(part))
                    ol_buf_puts(&orig, part->valuestring);
        }
        cJSON_Delete(value);
        ol_buf code = {0};
        ol_buf_add(&code, cell_start, cell_len);
        bool orig_newline = orig.len > 0 && orig.data[orig.len - 1] == '\n';
        if (!orig_newline && code.len > 0 && code.data[code.len - 1] == '\n')
            code.data[--code.len] = '\0';
        /* restore the lines the joined text blanked, line by line */
        {
            const char *o = orig.data ? orig.data : "";
            size_t count;
            bool *magic = ipython_lines(o, orig.len, &count);
            size_t oi = 0, ni = 0, line = 0;
            while (oi < orig.len && ni < code.len) {
                size_t oe = oi, ne = ni;
                while (oe < orig.len && o[oe] != '\n')
                    oe++;
                while (ne < code.len && code.data[ne] != '\n')
                    ne++;
                if (line < count && magic[line] && oe - oi == ne - ni)
                    memcpy(code.data + ni, o + oi, oe - oi);
                oi = oe + 1;
                ni = ne + 1;
                line++;
            }
            free(magic);
        }
        bool changed = code.len != orig.len || memcmp(code.data ? code.data : "", orig.data ? orig.data : "", code.len) != 0;
        ol_buf_free(&orig);
        if (!changed) {
            ol_buf_free(&code);
            continue;
        }
        ol_buf_add(out, body + bom + copied, cp->value_start - copied);
        if (!cp->is_array) {
            json_string(out, code.data ? code.data : "", code.len);
        } else {
            ol_buf_putc(out, '[');
            size_t i = 0;
            bool first = true;
            while (i < code.len) {
                size_t end = i;
                while (end < code.len && code.data[end] != '\n')
                    end++;
                if (end < code.len)
                    end++;
                if (!first)
                    ol_buf_putc(out, ',');
                if (cp->multiline) {
                    ol_buf_puts(out, json_newline);
                    spaces(out, cp->elem_indent);
                } else if (!first) {
                    ol_buf_putc(out, ' ');
                }
                json_string(out, code.data + i, end - i);
                first = false;
                i = end;
            }
            if (cp->multiline) {
                ol_buf_puts(out, json_newline);
                spaces(out, cp->close_indent);
            }
            ol_buf_putc(out, ']');
        }
        copied = cp->value_end;
        ol_buf_free(&code);
    }
    ol_buf_add(out, body + bom + copied, body_len - bom - copied);
    free_cell_pos(&positions);
    return true;
}
