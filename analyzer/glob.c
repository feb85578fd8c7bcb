/*
 * glob.c - wildcard matching in pattern-times-text time (see glob.h): one
 * component's wildcards (ol_wildmatch), and a configuration's path
 * patterns with {a,b} alternatives as one automaton (ol_glob_path_match).
 */
#include "glob.h"

#include <ctype.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static bool class_match(const char *name, size_t n, unsigned char c)
{
#define CLASS(s, test)                                                                 \
    if (n == sizeof(s) - 1 && memcmp(name, s, n) == 0)                                 \
        return test(c) != 0;
    CLASS("alpha", isalpha)
    CLASS("digit", isdigit)
    CLASS("alnum", isalnum)
    CLASS("upper", isupper)
    CLASS("lower", islower)
    CLASS("space", isspace)
    CLASS("blank", isblank)
    CLASS("punct", ispunct)
    CLASS("xdigit", isxdigit)
    CLASS("cntrl", iscntrl)
    CLASS("graph", isgraph)
    CLASS("print", isprint)
#undef CLASS
    return false;
}

/* The bracket expression at p (which is '['), against c: returns what
 * follows its ']' and sets *hit, or NULL when p starts no bracket
 * expression (an unclosed '[' is an ordinary character). */
static const char *bracket(const char *p, unsigned char c, bool *hit)
{
    const char *q = p + 1;
    bool negate = *q == '!' || *q == '^';
    if (negate)
        q++;
    bool found = false, first = true;
    for (;;) {
        if (*q == '\0')
            return NULL;
        if (*q == ']' && !first)
            break;
        first = false;
        unsigned char lo;
        if (*q == '[' && q[1] == ':') {
            const char *end = strstr(q + 2, ":]");
            if (end) {
                found = found || class_match(q + 2, (size_t)(end - (q + 2)), c);
                q = end + 2;
                continue;
            }
        }
        if (*q == '\\' && q[1])
            q++;
        lo = (unsigned char)*q++;
        if (*q == '-' && q[1] && q[1] != ']') {
            q++;
            if (*q == '\\' && q[1])
                q++;
            unsigned char hi = (unsigned char)*q++;
            found = found || (c >= lo && c <= hi);
        } else {
            found = found || c == lo;
        }
    }
    *hit = found != negate;
    return q + 1;
}

/* One segment: '/' is an ordinary character here. Greedy, remembering only
 * the last star: a later star can absorb anything an earlier one could, so
 * going back further never finds a match the last star's retries miss. */
static bool match_segment(const char *pat, const char *pend, const char *s, const char *send)
{
    const char *star_p = NULL, *star_s = NULL;
    while (s < send) {
        if (pat < pend && *pat == '*') {
            while (pat < pend && *pat == '*')
                pat++;
            star_p = pat;
            star_s = s;
            continue;
        }
        bool ok = false;
        const char *next = pat + 1;
        if (pat < pend) {
            unsigned char c = (unsigned char)*s;
            if (*pat == '?') {
                ok = true;
            } else if (*pat == '[') {
                bool hit = false;
                const char *after = bracket(pat, c, &hit);
                /* a bracket expression never reaches past its segment */
                if (after && after <= pend) {
                    ok = hit;
                    next = after;
                } else {
                    ok = c == '[';
                }
            } else if (*pat == '\\') {
                /* a trailing backslash escapes nothing: the pattern is
                 * broken and matches nothing (as fnmatch without flags) */
                ok = pat + 1 < pend && c == (unsigned char)pat[1];
                next = pat + 2;
            } else {
                ok = c == (unsigned char)*pat;
            }
        }
        if (ok) {
            pat = next;
            s++;
        } else if (star_p) {
            pat = star_p;
            s = ++star_s;
        } else {
            return false;
        }
    }
    while (pat < pend && *pat == '*')
        pat++;
    return pat == pend;
}

bool ol_wildmatch(const char *pattern, const char *text, bool pathname)
{
    const char *pend = pattern + strlen(pattern), *send = text + strlen(text);
    if (!pathname)
        return match_segment(pattern, pend, text, send);
    /* each '/' of the text meets a '/' of the pattern: segment by segment */
    for (;;) {
        const char *ps = memchr(pattern, '/', (size_t)(pend - pattern));
        const char *ts = memchr(text, '/', (size_t)(send - text));
        if (!match_segment(pattern, ps ? ps : pend, text, ts ? ts : send))
            return false;
        if (!ps || !ts)
            return !ps && !ts;
        pattern = ps + 1;
        text = ts + 1;
    }
}

/* ---- path patterns with {a,b} alternatives ---------------------------------------
 *
 * A configuration pattern is matched as one automaton over the path's text
 * (its components joined by '/'), never by writing out its alternatives:
 * `{a,b}{c,d}...` has 2^k of them, and a group's tail was copied once per
 * alternative per path. States are (element of the pattern, mode): an
 * element is a character to match (a literal, `?`, a bracket expression,
 * the backslash-escaped character), `*`, a '/' or a brace token; a brace
 * token only moves to other elements without reading text ('{' to the
 * start of each alternative, ',' and '}' past the group's end). The mode
 * carries what splitting an alternative into components decided: the first
 * character of the alternative is '/' (anchored); a component that is `.`
 * or empty is dropped; a component that is exactly `**` matches any number
 * of whole components. A match then costs the pattern's length times the
 * path's, whatever the alternatives, and the memory of one state set. */

enum { G_LIT, G_ANY, G_STAR, G_CLASS, G_SEP, G_OPEN, G_COMMA, G_CLOSE, G_DEAD };

/* S_REL / S_ABS: nothing read yet (an unanchored or an anchored match);
 * CST: at a component's start; MID: inside one; DOT: after a `.` that may
 * be a component of its own; DS1 / DS2: after one or two `*` at a
 * component's start (maybe a `**` component); DSTAR: inside a `**`
 * component, whose element is the '/' or the end that closes it. TAIL,
 * TDOT, TDS1, TDS2: after a component's end and a '/' the path has not
 * got: only components that are dropped (empty, `.`) or match nothing
 * (`**`) may follow, up to the pattern's end (`gen/`, or `gen` and a
 * last component `**`). */
enum { S_REL, S_ABS, CST, MID, DOT, DS1, DS2, DSTAR, TAIL, TDOT, TDS1, TDS2, MODES };

typedef struct glob_prog {
    const char *pat;
    size_t n;
    uint8_t *kind;        /* per position; meaningful where an element starts */
    uint32_t *len;        /* the element's length in bytes */
    uint32_t *jump;       /* G_COMMA: past its group; G_OPEN: the first of its alternatives in alts */
    uint32_t *alt_count;  /* G_OPEN: how many alternatives */
    uint32_t *alts;       /* starts of alternatives, group by group */
    int depth;            /* the deepest nesting of groups */
} glob_prog;

static void prog_free(glob_prog *g)
{
    free(g->kind);
    free(g->len);
    free(g->jump);
    free(g->alt_count);
    free(g->alts);
}

/* Reads pattern's structure as {a,b} expansion did: a '{' is a group when
 * a '}' closes it (depth counted, backslash escapes skipped); from the
 * first '{' that none closes on, the rest of the pattern is literal; ','
 * separates alternatives directly inside a group. Returns false when the
 * pattern is past the bounds (it then matches nothing). */
static bool prog_compile(glob_prog *g, const char *pattern)
{
    memset(g, 0, sizeof(*g));
    g->pat = pattern;
    size_t n = strlen(pattern);
    g->n = n;
    if (n > OL_GLOB_MAX_BYTES)
        return false;
    size_t cap = n + 1;
    g->kind = calloc(cap, 1);
    g->len = calloc(cap, sizeof(uint32_t));
    g->jump = calloc(cap, sizeof(uint32_t));
    g->alt_count = calloc(cap, sizeof(uint32_t));
    uint32_t *match = calloc(cap, sizeof(uint32_t)); /* '{' -> its '}' + 1 (0: none) */
    uint32_t *stack = calloc(cap, sizeof(uint32_t));
    uint32_t *group = calloc(cap, sizeof(uint32_t)); /* structural ',': its group's '{' */
    if (!g->kind || !g->len || !g->jump || !g->alt_count || !match || !stack || !group) {
        free(match);
        free(stack);
        free(group);
        prog_free(g);
        return false;
    }
    /* which braces pair up */
    size_t top = 0;
    for (size_t i = 0; i < n; i++) {
        if (pattern[i] == '\\' && i + 1 < n)
            i++;
        else if (pattern[i] == '{')
            stack[top++] = (uint32_t)i;
        else if (pattern[i] == '}' && top > 0)
            match[stack[--top]] = (uint32_t)i + 1;
    }
    size_t literal_from = n;
    for (size_t i = 0; i < n; i++) {
        if (pattern[i] == '\\' && i + 1 < n)
            i++;
        else if (pattern[i] == '{' && !match[i]) {
            literal_from = i;
            break;
        }
    }
    /* the groups and their alternatives: brace tokens, found as expansion
     * found them (backslash escapes skipped, brackets not looked at) */
    top = 0;
    size_t nalts = 0;
    for (size_t i = 0; i < literal_from; i++) {
        char c = pattern[i];
        if (c == '\\' && i + 1 < n) {
            i++;
        } else if (c == '{') {
            g->kind[i] = G_OPEN;
            stack[top++] = (uint32_t)i;
            if ((int)top > g->depth)
                g->depth = (int)top;
            g->alt_count[i] = 1;
            nalts++;
        } else if (c == ',' && top > 0) {
            g->kind[i] = G_COMMA;
            group[i] = stack[top - 1];
            g->jump[i] = match[stack[top - 1]];
            g->alt_count[stack[top - 1]]++;
            nalts++;
        } else if (c == '}' && top > 0) {
            g->kind[i] = G_CLOSE;
            top--;
        }
    }
    /* every other element, between them */
    for (size_t i = 0; i < n;) {
        unsigned char c = (unsigned char)pattern[i];
        uint32_t len = 1;
        uint8_t kind = g->kind[i] == G_OPEN || g->kind[i] == G_COMMA || g->kind[i] == G_CLOSE ? g->kind[i] : G_LIT;
        if (kind != G_LIT) {
            /* a brace token */
        } else if (c == '\\') {
            /* a backslash escapes the next character; before a '/' or at
             * the end it escapes nothing, and the pattern matches nothing */
            kind = i + 1 < n && pattern[i + 1] != '/' ? G_LIT : G_DEAD;
            len = i + 1 < n ? 2 : 1;
        } else if (c == '/') {
            kind = G_SEP;
        } else if (c == '?') {
            kind = G_ANY;
        } else if (c == '*') {
            kind = G_STAR;
        } else if (c == '[') {
            /* a bracket expression within this run of text: it reaches
             * neither past a '/' nor past a brace token */
            size_t end = i + 1;
            while (end < n && pattern[end] != '/' && g->kind[end] != G_OPEN && g->kind[end] != G_COMMA &&
                   g->kind[end] != G_CLOSE)
                end++;
            bool hit;
            const char *after = bracket(pattern + i, 0, &hit);
            if (after && after <= pattern + end) {
                kind = G_CLASS;
                len = (uint32_t)(after - (pattern + i));
            }
        }
        g->kind[i] = kind;
        g->len[i] = len;
        i += len;
    }
    g->kind[n] = G_DEAD; /* the end is handled apart */
    g->alts = calloc(nalts ? nalts : 1, sizeof(uint32_t));
    if (!g->alts) {
        free(match);
        free(stack);
        free(group);
        prog_free(g);
        return false;
    }
    /* each group's alternatives, in order: after its '{' and after each of its ',' */
    size_t at = 0;
    for (size_t i = 0; i < n; i += g->len[i])
        if (g->kind[i] == G_OPEN) {
            g->jump[i] = (uint32_t)at;
            g->alts[at] = (uint32_t)i + 1;
            at += g->alt_count[i];
            g->alt_count[i] = 1; /* counted again as they are filed */
        }
    for (size_t i = 0; i < n; i += g->len[i])
        if (g->kind[i] == G_COMMA) {
            uint32_t o = group[i];
            g->alts[g->jump[o] + g->alt_count[o]++] = (uint32_t)i + 1;
        }
    free(match);
    free(stack);
    free(group);
    return g->depth <= OL_GLOB_MAX_NESTING;
}

const char *ol_glob_check(const char *pattern)
{
    if (strlen(pattern) > OL_GLOB_MAX_BYTES)
        return "is longer than " OL_GLOB_STR(OL_GLOB_MAX_BYTES) " bytes";
    glob_prog g;
    bool ok = prog_compile(&g, pattern);
    int depth = g.depth;
    prog_free(&g);
    if (!ok && depth > OL_GLOB_MAX_NESTING)
        return "nests {...} groups more than " OL_GLOB_STR(OL_GLOB_MAX_NESTING) " deep";
    return ok ? NULL : "could not be read (out of memory)";
}

/* One run of the automaton over text: a prefix of whole components
 * (unanchored or anchored), or, bare, the whole of one component with no
 * '/' in the pattern. */
typedef enum { RUN_REL, RUN_ABS, RUN_BARE } run_kind;

typedef struct glob_run {
    const glob_prog *g;
    const char *text;
    size_t len;
    bool bare;
    uint32_t *mark;       /* per state: the step that added it last */
    uint32_t step;
    uint32_t *list;       /* states of this step that read text or end the pattern */
    size_t count;
    uint32_t *todo;       /* states whose moves without text are still to be taken */
} glob_run;

#define STATE(pos, mode) ((uint32_t)(pos) * MODES + (mode))

static void add_state(glob_run *r, size_t pos, int mode, size_t t)
{
    size_t ntodo = 0;
    uint32_t s = STATE(pos, mode);
    if (r->mark[s] == r->step)
        return;
    r->mark[s] = r->step;
    r->todo[ntodo++] = s;
    const glob_prog *g = r->g;
    while (ntodo > 0) {
        s = r->todo[--ntodo];
        pos = s / MODES;
        mode = (int)(s % MODES);
        bool keep = false; /* reads text (or ends the pattern) */
#define GO(p, m)                                                                       \
    do {                                                                               \
        uint32_t s_ = STATE((p), (m));                                                 \
        if (r->mark[s_] != r->step) {                                                  \
            r->mark[s_] = r->step;                                                     \
            r->todo[ntodo++] = s_;                                                     \
        }                                                                              \
    } while (0)
        if (mode == DSTAR) {
            keep = true;
            /* a `**` component ends where a component would start */
            if (t == 0 || t == r->len || r->text[t - 1] == '/')
                GO(pos, CST);
        } else if (pos == g->n) {
            if (mode == DS2)
                GO(pos, DSTAR);
            else if (mode == DOT || mode == TAIL || mode == TDOT || mode == TDS2)
                GO(pos, CST);
            else if (mode == CST || mode == MID)
                keep = true;
        } else if (mode >= TAIL) {
            uint8_t k = g->kind[pos];
            if (k == G_OPEN) {
                for (uint32_t a = 0; a < g->alt_count[pos]; a++)
                    GO(g->alts[g->jump[pos] + a], mode);
            } else if (k == G_COMMA) {
                GO(g->jump[pos], mode);
            } else if (k == G_CLOSE) {
                GO(pos + 1, mode);
            } else if (k == G_SEP) {
                if (mode != TDS1)
                    GO(pos + 1, TAIL);
            } else if (k == G_STAR && (mode == TAIL || mode == TDS1)) {
                GO(pos + 1, mode == TAIL ? TDS1 : TDS2);
            } else if (k == G_LIT && g->pat[pos] == '.' && mode == TAIL) {
                GO(pos + 1, TDOT);
            }
        } else {
            uint8_t k = g->kind[pos];
            if (k == G_OPEN) {
                for (uint32_t a = 0; a < g->alt_count[pos]; a++)
                    GO(g->alts[g->jump[pos] + a], mode);
            } else if (k == G_COMMA) {
                GO(g->jump[pos], mode);
            } else if (k == G_CLOSE) {
                GO(pos + 1, mode);
            } else if (k == G_SEP) {
                if (r->bare || mode == S_REL || mode == DS1)
                    ; /* no '/' in a bare name; an anchored alternative; `*` then '/' */
                else if (mode == MID) {
                    keep = true; /* the path's '/' */
                    GO(pos + 1, TAIL);
                } else if (mode == DS2)
                    GO(pos, DSTAR);
                else /* S_ABS, CST, DOT: an empty or `.` component is dropped */
                    GO(pos + 1, CST);
            } else if (k != G_DEAD) {
                bool plain_dot = k == G_LIT && g->pat[pos] == '.';
                if (mode == S_REL)
                    mode = CST;
                if (mode == DS1) {
                    if (k == G_STAR)
                        GO(pos + 1, DS2);
                } else if (mode == CST || mode == MID) {
                    if (mode == CST && k == G_STAR)
                        GO(pos + 1, DS1);
                    if (mode == CST && plain_dot)
                        GO(pos + 1, DOT);
                    if (k == G_STAR)
                        GO(pos + 1, MID);
                    keep = true;
                    s = STATE(pos, mode);
                }
                /* S_ABS: an unanchored alternative; DS2, DOT: not a whole `**` or `.` */
            }
        }
#undef GO
        if (keep)
            r->list[r->count++] = s;
    }
}

/* Does the element of state s take character c (never a '/' of a path
 * component, which only G_SEP and `**` read)? Adds where it leads. */
static void read_char(glob_run *r, uint32_t s, unsigned char c, size_t t)
{
    const glob_prog *g = r->g;
    size_t pos = s / MODES;
    int mode = (int)(s % MODES);
    if (mode == DSTAR) {
        add_state(r, pos, DSTAR, t);
        return;
    }
    if (pos == g->n)
        return;
    uint8_t k = g->kind[pos];
    if (k == G_SEP) {
        if (c == '/')
            add_state(r, pos + 1, CST, t);
        return;
    }
    if (c == '/')
        return;
    bool hit = false;
    switch (k) {
    case G_LIT:
        hit = (unsigned char)g->pat[pos + g->len[pos] - 1] == c;
        break;
    case G_ANY:
        hit = true;
        break;
    case G_STAR:
        add_state(r, pos, MID, t);
        return;
    case G_CLASS:
        bracket(g->pat + pos, c, &hit);
        break;
    default:
        break;
    }
    if (hit)
        add_state(r, pos + g->len[pos], MID, t);
}

/* Does the program match text (len bytes, components joined by '/')?
 * *step numbers the steps of all the runs over one mark array (the first
 * is 1, on an array cleared to 0), so it is cleared once per pattern and
 * path rather than once per run. */
static bool run_prog(const glob_prog *g, const char *text, size_t len, run_kind kind, uint32_t *mark, uint32_t *lists,
                     uint32_t *step)
{
    size_t states = (g->n + 1) * MODES;
    uint32_t *cur = lists, *next = lists + states;
    glob_run r = {g, text, len, kind == RUN_BARE, mark, ++*step, cur, 0, lists + 2 * states};
    add_state(&r, 0, kind == RUN_ABS ? S_ABS : S_REL, 0);
    bool hit = false;
    for (size_t t = 0;; t++) {
        size_t count = r.count;
        /* the pattern is used up at a whole component's end */
        bool boundary = kind == RUN_BARE ? t == len && len > 0
                                         : t > 0 && (t == len || text[t] == '/' || text[t - 1] == '/');
        for (size_t i = 0; i < count && boundary && !hit; i++) {
            uint32_t s = cur[i];
            hit = s / MODES == g->n && (s % MODES == CST || s % MODES == MID);
        }
        if (hit || t == len || count == 0)
            break;
        r.step = ++*step;
        r.list = next;
        r.count = 0;
        for (size_t i = 0; i < count; i++)
            read_char(&r, cur[i], (unsigned char)text[t], t + 1);
        uint32_t *swap = cur;
        cur = next;
        next = swap;
    }
    return hit;
}

/* Joins a path's components with '/', dropping empty ones and `.` (as
 * patterns are read); with `last`, only its last component. */
static char *join_components(const char *path, bool last)
{
    size_t n = strlen(path);
    char *out = malloc(n + 1);
    if (!out)
        return NULL;
    size_t o = 0;
    for (const char *p = path; *p;) {
        const char *slash = strchr(p, '/');
        size_t len = slash ? (size_t)(slash - p) : strlen(p);
        if (len > 0 && !(len == 1 && p[0] == '.')) {
            if (last)
                o = 0;
            else if (o > 0)
                out[o++] = '/';
            memcpy(out + o, p, len);
            o += len;
        }
        p += len + (slash ? 1 : 0);
    }
    out[o] = '\0';
    return out;
}

bool ol_glob_path_match(const char *pattern, const char *rel, const char *abs, bool any_name)
{
    glob_prog g;
    if (!prog_compile(&g, pattern)) {
        prog_free(&g);
        return false;
    }
    size_t states = (g.n + 1) * MODES;
    uint32_t *mark = calloc(states, sizeof(uint32_t));
    uint32_t *lists = malloc(3 * states * sizeof(uint32_t));
    uint32_t step = 0;
    bool hit = false;
    if (mark && lists) {
        /* a whole path, or a directory above it */
        const char *subjects[2] = {rel, abs};
        for (int k = 0; k < 2 && !hit; k++) {
            char *text = subjects[k] ? join_components(subjects[k], false) : NULL;
            if (text)
                hit = run_prog(&g, text, strlen(text), k == 0 ? RUN_REL : RUN_ABS, mark, lists, &step);
            free(text);
        }
        /* a bare name: the file's name, or with any_name any one component */
        const char *path = rel ? rel : (abs ? abs : "");
        char *comps = hit ? NULL : join_components(path, !any_name);
        for (char *c = comps; c && *c && !hit;) {
            char *slash = strchr(c, '/');
            size_t len = slash ? (size_t)(slash - c) : strlen(c);
            hit = run_prog(&g, c, len, RUN_BARE, mark, lists, &step);
            c += len + (slash ? 1 : 0);
        }
        free(comps);
    }
    free(mark);
    free(lists);
    prog_free(&g);
    return hit;
}
