/*
 * glob.c - wildcard matching in pattern-times-text time (see glob.h).
 */
#include "glob.h"

#include <ctype.h>
#include <stddef.h>
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
