/*
 * diag.h - findings (diagnostics) and their fixes.
 *
 * A finding points at a byte range of the decoded source, names its rule,
 * and carries a message (what is wrong and why), a help line (what to write
 * instead) and optionally a fix: a set of non-overlapping text edits marked
 * safe or unsafe, as in Ruff. Emitters turn byte offsets into lines and
 * columns; fix application (fix.c) works on the byte offsets directly.
 *
 * In analyzer/public/, the rules' side of the engine: this half declares
 * what rules may use; the engine's own declarations of the same part are
 * in analyzer/diag.h, which includes this one. Rules are compiled with
 * analyzer/public/ alone on their include path.
 */
#ifndef OL_PUBLIC_DIAG_H
#define OL_PUBLIC_DIAG_H

#include <stdbool.h>
#include <stdint.h>

#include "util.h"

struct ol_rule;

typedef enum ol_severity {
    OL_SEV_ERROR,
    OL_SEV_WARNING,
    OL_SEV_INFO,
} ol_severity;

typedef struct ol_edit {
    uint32_t start, end; /* byte range replaced */
    char *content;       /* replacement text (owned) */
    /* The statement the edit changes (set by ol_fix_claim_statements; 0, 0
     * until then): two fixes that change one statement are never applied in
     * the same round, so unsafe fixes cannot stack into broken code. */
    uint32_t claim_start, claim_end;
} ol_edit;

typedef struct ol_fix {
    bool unsafe;
    char *message;
    char *unsafe_reason;   /* unsafe fixes: what it may break, shown with it; else NULL */
    OL_VEC(ol_edit) edits; /* sorted by start, non-overlapping */
} ol_fix;

typedef enum ol_note_kind {
    OL_NOTE_FACT, /* a related place */
    OL_NOTE_STEP, /* one step of the chain of calls that leads to the finding
                     (in order; rendered also as a SARIF codeFlow) */
} ol_note_kind;

typedef struct ol_note {
    ol_note_kind kind;
    char *path;            /* NULL: the finding's own file; else another file of the run, as the run names it */
    uint32_t start, end;   /* own file: byte range in the decoded source (as ol_diag's) */
    uint32_t line, col, end_line, end_col; /* another file: 1-based, columns in code points, end exclusive
                                              (columns 0: unknown, the note names the line only) */
    char *message;         /* short: "the forward runs here, with autograd on: no no_grad; called from
                              `train()` at line 80" */
} ol_note;

typedef struct ol_diag {
    const struct ol_rule *rule;
    uint32_t start, end;  /* byte range in the source text */
    char *message;
    char *help;           /* may be NULL */
    ol_fix *fix;          /* may be NULL */
    bool once;            /* on code that runs once: kept only when the rule is
                             selected by its exact code (lint.c) */
    OL_VEC(ol_note) notes; /* the evidence, in the order it was added */
    const char *guess;    /* NULL: every fact was read from the code; else a static
                             string saying what the finding guesses from ("a name's
                             spelling", "an unseen base class", "an unresolved import") */
    bool host_only;       /* on code that never runs on a GPU: kept only as `once` is */
    bool in_test;         /* in test code outside a test file (a pytest function in
                             tests.py): left out as the test files' findings are */
} ol_diag;

typedef OL_VEC(ol_diag) ol_diag_vec;

ol_fix *ol_fix_new(bool unsafe, const char *message);
/* Marks f unsafe and says why: what the fix may change in how the program
 * behaves (printed in the help line, JSON and SARIF). */
void ol_fix_unsafe_because(ol_fix *f, const char *fmt, ...) OL_PRINTF(2, 3);
void ol_fix_edit(ol_fix *f, uint32_t start, uint32_t end, const char *content);
/* Sorts edits; returns false (and keeps the fix) when two edits overlap. */
bool ol_fix_normalize(ol_fix *f);
ol_fix *ol_fix_copy(const ol_fix *f);
void ol_fix_free(ol_fix *f);

/* Adds a note at bytes [start, end) of the finding's own file. */
void ol_diag_note(ol_diag *d, ol_note_kind kind, uint32_t start, uint32_t end, const char *fmt, ...) OL_PRINTF(5, 6);

#endif
