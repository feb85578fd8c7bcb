/*
 * diag.h - the declarations of this part of the engine that only the
 * engine uses: freeing, sorting and comparing findings, severity names.
 * What rules may use of it is declared in public/diag.h, included here,
 * so each thing is declared once and rules, whose include path holds only
 * analyzer/public/, see only their half (docs/how-it-works.md).
 */
#ifndef OL_DIAG_H
#define OL_DIAG_H

#include <stdbool.h>
#include <stdint.h>

#include "util.h"

#include "public/diag.h"

const char *ol_severity_name(ol_severity s);

/* A severity by its name (error, warning, info); false if unknown. */
bool ol_severity_parse(const char *name, ol_severity *out);
bool ol_fix_equal(const ol_fix *a, const ol_fix *b);

/* Adds a note in another file of the run (path as the run names it; a NULL
 * path adds nothing): 1-based lines, columns in code points, end exclusive;
 * columns 0 when only the line is known. */
void ol_diag_note_file(ol_diag *d, ol_note_kind kind, const char *path, uint32_t line, uint32_t col,
                       uint32_t end_line, uint32_t end_col, const char *fmt, ...) OL_PRINTF(8, 9);

/* "fact" or "step", as JSON spells the kinds. */
const char *ol_note_kind_name(ol_note_kind k);
bool ol_note_equal(const ol_note *a, const ol_note *b);

/* Of two findings of one rule at one place (one is dropped as the other's
 * duplicate), whether d should be kept instead of kept: it rests on no
 * guess where kept does. */
bool ol_diag_supersedes(const ol_diag *d, const ol_diag *kept);
void ol_diag_free(ol_diag *d);

/* Frees what only the report reads (message, help, notes, the fix's text
 * and edits) once the finding is written, keeping its rule, place and whether
 * it has a fix (safe or not) for the run's counts; message becomes NULL. */
void ol_diag_slim(ol_diag *d);
void ol_diag_vec_free(ol_diag_vec *v);

/* Sorts by position, then code. */
void ol_diag_vec_sort(ol_diag_vec *v);

#endif
