/*
 * fix.h - applying fixes, as `--fix`, `--unsafe-fixes` and `--diff` do.
 *
 * Fixes are applied in rounds, as in Ruff: the applicable fixes of a lint
 * that change different statements are applied together, the result is
 * linted again, and so on until nothing changes (at most OL_FIX_ROUNDS
 * rounds). A round is kept only if the new text adds no syntax error and no
 * finding; fixes that break it are set aside (see fix.c). Writing goes
 * through writefile.h: never over a file that changed since it was read,
 * atomically, keeping links, mode, owner and extended attributes. Only the
 * spans a fix changed are written, each in the file's own encoding and line
 * ending, into the bytes as read (ol_source_encode): every other byte stays
 * as it was. Notebooks get only their changed cells' sources rewritten.
 */
#ifndef OL_FIX_H
#define OL_FIX_H

#include <stdbool.h>
#include <stddef.h>

#include "diag.h"
#include "lint.h"
#include "source.h"
#include "syntax.h"

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
    bool failed;        /* error is a failure (not written, changed on disk): exit 2 */
    char *output;       /* OL_FIX_OUTPUT: the whole fixed file */
    size_t output_len;
} ol_fix_outcome;

/* Applies one round of the applicable fixes in diags to text (unproven: no
 * lint). Returns how many findings' fixes were applied; the new text goes
 * to out. */
size_t ol_apply_fixes(const char *text, size_t len, const ol_diag_vec *diags, bool unsafe, ol_buf *out);

/* Sets the claim of every fix edit in diags: the statement of t it changes. */
void ol_fix_claim_statements(const ol_tree *t, ol_diag_vec *diags);
/* Gives a fix edit that lands in an f-string's replacement field the quote
 * that f-string does not use (`reduction="sum"` in `f"{...}"` becomes
 * `reduction='sum'`), which every Python 3 parses; a fix that cannot be
 * made to parse before Python 3.12 (both quotes taken by nested
 * f-strings, a backslash) is dropped unless the project requires 3.12. */
void ol_fix_fit_quotes(const ol_tree *t, ol_diag_vec *diags);

/* Runs the rounds on r (which must hold its source), updating r's source and
 * findings to the final state, writing or diffing per mode (OL_FIX_NONE:
 * neither; the fixed text is left in r's source). When nothing is written
 * (a failure), r is left with the findings of the text on disk. */
void ol_fix_file(ol_linter *lt, ol_file_result *r, ol_fix_mode mode, bool unsafe, ol_fix_outcome *outcome);

/* Unified diff of two texts, with 3 lines of context. */
void ol_unified_diff(const char *path, const char *a, size_t alen, const char *b, size_t blen, ol_buf *out);

/* Writes data to path safely (ol_replace_file without a snapshot). Returns 0
 * or an errno value. */
int ol_write_atomic(const char *path, const char *data, size_t len);

void ol_fix_outcome_free(ol_fix_outcome *o);

/* Lints `text` as a new state of r's file (its encoding, BOM and cell map
 * kept) into *out, for edits made outside the fixes (--add-noqa). */
void ol_fix_relint(ol_linter *lt, const ol_file_result *r, const char *text, size_t len, ol_file_result *out);

/* --add-noqa: adds `# noqa: CODES` to every line of r with a finding (to
 * the codes of a `# noqa:` already there), keeps only the lines where the
 * new text lints to exactly that (no syntax error, nothing else changed,
 * every finding of the line suppressed), and writes the file as --fix
 * does. outcome->applied counts the directives added; a line that cannot
 * take one (its end is inside a string, after a backslash) is left, and
 * its findings stay in r. */
void ol_add_noqa(ol_linter *lt, ol_file_result *r, ol_fix_outcome *outcome);

#endif
