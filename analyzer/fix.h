/*
 * fix.h - applying fixes, as `--fix`, `--unsafe-fixes` and `--diff` do.
 *
 * Fixes are applied in rounds, as in Ruff: the non-overlapping applicable
 * fixes of a lint are applied together, the result is linted again, and so
 * on until nothing changes (at most OL_FIX_ROUNDS rounds). The final text must
 * parse with no syntax error the original did not have, or the file is left
 * alone. Writing is atomic: a temporary file in the same directory, flushed,
 * given the original's mode, then renamed over it. Text is written back in
 * the file's own encoding, BOM and line endings; notebooks get only their
 * changed cells' sources rewritten.
 */
#ifndef OL_FIX_H
#define OL_FIX_H

#include <stdbool.h>
#include <stddef.h>

#include "diag.h"
#include "lint.h"
#include "source.h"

#define OL_FIX_ROUNDS 10

typedef enum ol_fix_mode {
    OL_FIX_NONE,
    OL_FIX_WRITE,   /* --fix */
    OL_FIX_DIFF,    /* --diff: compute, print, do not write */
    OL_FIX_OUTPUT,  /* --fix on stdin: the fixed text goes to stdout */
} ol_fix_mode;

typedef struct ol_fix_outcome {
    size_t applied;     /* findings whose fix was applied */
    char *diff;         /* unified diff (--diff), or NULL */
    char *error;        /* why the file was left unchanged, or NULL */
    char *output;       /* OL_FIX_OUTPUT: the whole fixed file */
    size_t output_len;
} ol_fix_outcome;

/* Applies the applicable fixes in diags to text once. Returns how many
 * findings' fixes were applied; the new text goes to out. */
size_t ol_apply_fixes(const char *text, size_t len, const ol_diag_vec *diags, bool unsafe, ol_buf *out);

/* Runs the rounds on r (which must hold its source), updating r's source and
 * findings to the final state, writing or diffing per mode (OL_FIX_NONE:
 * neither; the fixed text is left in r's source). */
void ol_fix_file(ol_linter *lt, ol_file_result *r, ol_fix_mode mode, bool unsafe, ol_fix_outcome *outcome);

/* Unified diff of two texts, with 3 lines of context. */
void ol_unified_diff(const char *path, const char *a, size_t alen, const char *b, size_t blen, ol_buf *out);

/* Writes data to path atomically, keeping path's mode. Returns 0 or errno. */
int ol_write_atomic(const char *path, const char *data, size_t len);

void ol_fix_outcome_free(ol_fix_outcome *o);

#endif
