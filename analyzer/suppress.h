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
 *   # oomlint: noqa                   on a line of its own, anywhere: the
 *                                     whole file (or `: CODES`), as Ruff's
 *                                     `# ruff: noqa` is
 *
 * A directive that is written wrong suppresses what Ruff would have it
 * suppress and is reported as invalid (a warning, as Ruff warns): `# noqa
 * OOM102` (no colon: a blanket noqa, as in flake8 and Ruff), `# noqa:` with
 * no codes, `# oomlint: ignore=...` and other unknown `# oomlint:` words
 * (nothing), `# oomlint: noqa` after code on its line (nothing), and
 * `# oomlint: disable-file` below the first statement (nothing).
 *
 * Codes are matched exactly (case-insensitive). Suppressions are read from
 * the comments the parser set aside, so a `# noqa` inside a string does not
 * count. Each suppression remembers where it is written and which of its
 * codes suppressed a finding, so that OOM003 (unused-noqa) can report and
 * remove the ones that suppress nothing. Collecting is linear in the
 * comments (plus a sort), and a query is a binary search plus a walk that
 * only climbs enclosing blocks, so a file full of suppressions, or one
 * enormous code list, costs no more than its size.
 */
#ifndef OL_SUPPRESS_H
#define OL_SUPPRESS_H

#include <stdbool.h>
#include <stdint.h>

#include "syntax.h"
#include "util.h"

typedef enum ol_suppression_kind {
    OL_SUPPRESS_NOQA,         /* # noqa, # noqa: CODES */
    OL_SUPPRESS_DISABLE,      /* # oomlint: disable[=CODES] */
    OL_SUPPRESS_DISABLE_FILE, /* # oomlint: disable-file[=CODES] */
    OL_SUPPRESS_FILE_NOQA,    /* # oomlint: noqa[: CODES], on its own line */
} ol_suppression_kind;

typedef struct ol_suppression {
    uint32_t first_line, last_line; /* 1-based, inclusive */
    OL_VEC(char *) codes;           /* empty: every code */
    /* where it is written (byte offsets in the source text) */
    ol_suppression_kind kind;
    uint32_t comment_start, comment_end; /* the comment that holds it */
    uint32_t start;                 /* its '#', or its keyword when no '#' comes right before */
    uint32_t keyword;               /* `noqa` or `oomlint:` */
    uint32_t end;                   /* after its last code (or its keyword, for a blanket one) */
    OL_VEC(ol_span) code_spans;     /* each code as written, parallel to codes */
    /* what it did in this lint: set by ol_suppression_use */
    bool used;                      /* suppressed at least one finding */
    OL_VEC(bool) code_used;         /* parallel to codes */
} ol_suppression;

/* One line range in which a suppression silences one rule (or, under the
 * blanket key, every rule); the query index is built from these. */
typedef struct ol_suppress_entry {
    uint32_t first_line, last_line;
    uint32_t item;       /* index in ol_suppressions.items */
    uint32_t code;       /* index in that item's codes (0 for a blanket one) */
    uint32_t prev_wider; /* the nearest earlier entry (in this key's order) ending later, or UINT32_MAX */
} ol_suppress_entry;

typedef OL_VEC(ol_suppress_entry) ol_suppress_key;

/* A comment that looks like a directive but is written wrong. */
typedef struct ol_invalid_directive {
    uint32_t at;   /* byte offset of its '#' */
    char *message; /* what is wrong and how it was read; owned */
} ol_invalid_directive;

typedef struct ol_suppressions {
    OL_VEC(ol_suppression) items;
    OL_VEC(ol_invalid_directive) invalid;
    /* the index: per registry rule, then one blanket key at ol_rule_count;
     * each sorted by first line (narrower first among equal starts) */
    ol_suppress_key *keys;
    size_t key_count;
} ol_suppressions;

void ol_suppressions_collect(ol_suppressions *s, const ol_tree *t);
bool ol_suppressed(const ol_suppressions *s, uint32_t line, const char *code);
/* The same, and records which suppression (the narrowest that applies) and
 * which of its codes did it. */
bool ol_suppression_use(ol_suppressions *s, uint32_t line, const char *code);
/* The same, leaving out the directive that starts at directive_start when it
 * is a blanket one: an OOM003 finding about `# oomlint: disable` is not
 * suppressed by that directive itself. */
bool ol_suppression_use_other(ol_suppressions *s, uint32_t line, const char *code, uint32_t directive_start);
void ol_suppressions_free(ol_suppressions *s);

/* Parses a code list such as "OOM101, OOM102 OOM2" into codes; returns the
 * number parsed. Exposed for unit tests. */
size_t ol_parse_code_list(const char *s, size_t n, void (*add)(void *ctx, const char *code, size_t len),
                          void *ctx);

/* OOM003: reports the suppressions in s that suppressed nothing, once the
 * other findings have been filtered (lint.c, unused_noqa.c); enabled is the
 * file's rule set. */
struct ol_check;
void ol_report_unused_suppressions(struct ol_check *c, const ol_suppressions *s, const bool *enabled);

#endif
