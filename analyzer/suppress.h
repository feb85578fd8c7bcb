/*
 * suppress.h - suppression comments.
 *
 *   x += loss  # noqa                 every finding on this line
 *   x += loss  # noqa: OOM101,OOM102  only these codes, on this line
 *   x += loss  # oomlint: disable=OOM101
 *                                     the same, oomlint's own spelling
 *   # oomlint: disable=OOM101         on a line of its own: from here to the
 *                                     end of the enclosing block
 *   # oomlint: disable-file           in the file's first comment block:
 *                                     the whole file (or =CODES)
 *
 * Codes are matched exactly (case-insensitive). Suppressions are read from
 * the comments the parser set aside, so a `# noqa` inside a string does not
 * count. Collecting is linear in the comments and a query is logarithmic
 * in them, so a file full of suppressions, or one enormous code list,
 * costs no more than its size.
 */
#ifndef OL_SUPPRESS_H
#define OL_SUPPRESS_H

#include <stdbool.h>
#include <stdint.h>

#include "syntax.h"
#include "util.h"

/* Which rules a suppression names: a bit per registry index (codes that
 * name no rule cannot suppress anything and are dropped, so a `# noqa:` list
 * of any length costs a few words), or every rule. */
typedef struct ol_suppression {
    uint32_t first_line, last_line; /* 1-based, inclusive */
    bool all;                       /* no codes: every code */
    uint64_t *rules;                /* ol_suppressions.words words; owned */
} ol_suppression;

typedef struct ol_suppressions {
    OL_VEC(ol_suppression) items;   /* as collected */
    size_t words;                   /* 64-bit words per rule set */
    /* the index the queries use, built once: one-line suppressions sorted
     * by line (merged per line), and the lines where the union of the
     * range suppressions changes, with that union from there on */
    OL_VEC(ol_suppression) by_line;
    OL_VEC(ol_suppression) steps;
} ol_suppressions;

void ol_suppressions_collect(ol_suppressions *s, const ol_tree *t);
bool ol_suppressed(const ol_suppressions *s, uint32_t line, const char *code);
void ol_suppressions_free(ol_suppressions *s);

/* Parses a code list such as "OOM101, OOM102 OOM2" into codes; returns the
 * number parsed. Exposed for unit tests. */
size_t ol_parse_code_list(const char *s, size_t n, void (*add)(void *ctx, const char *code, size_t len),
                          void *ctx);

#endif
