/*
 * fix.h - applying fixes, as `--fix`, `--unsafe-fixes` and `--diff` do.
 *
 * Fixes are applied in rounds, as in Ruff: the applicable fixes of a lint
 * that change different statements are applied together, the result is
 * linted again, and so on until nothing changes (at most OL_FIX_ROUNDS
 * rounds). This module plans a round and applies it; it never lints. The
 * run (run.c, ol_fix_file in lint.h) lints each round and keeps it only if
 * the new text adds no syntax error and no finding. Writing goes
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

/* The fixes of one round, in the order they apply. */
typedef OL_VEC(const ol_diag *) ol_fix_plan;
/* Fixes set aside (a round with them failed), by signature. */
typedef OL_VEC(char *) ol_fix_sigs;

/* Plans a round: the applicable fixes of diags (unsafe ones too if unsafe),
 * widest first, one per statement, none of those in block. */
void ol_fix_plan_round(const ol_source *src, const ol_diag_vec *diags, bool unsafe, const ol_fix_sigs *block,
                       ol_fix_plan *plan);
/* Applies plan[0..count) to text in one pass; an edit identical to one
 * already taken is applied once. */
void ol_fix_apply_plan(const char *text, size_t len, const ol_diag *const *plan, size_t count, ol_buf *out);
/* What identifies d's fix across rounds (rule, line text, edits): a new
 * string. */
char *ol_fix_signature(const ol_source *src, const ol_diag *d);
bool ol_fix_blocked(const ol_fix_sigs *block, const ol_source *src, const ol_diag *d);
void ol_fix_sigs_free(ol_fix_sigs *sigs);

/* Writes, diffs or outputs (per mode) src's text, the fixed state of the
 * file read as orig_text, in the file's own form: only the changed spans
 * re-encoded, a notebook's changed cells. A failure sets outcome->error
 * (and failed when the file on disk was not written). */
struct ol_file_snapshot;
void ol_fix_write(const ol_source *src, const char *path, const char *orig_text, size_t orig_len,
                  const struct ol_file_snapshot *snapshot, ol_fix_mode mode, ol_fix_outcome *outcome);

/* Unified diff of two texts, with 3 lines of context. */
void ol_unified_diff(const char *path, const char *a, size_t alen, const char *b, size_t blen, ol_buf *out);

/* Writes data to path safely (ol_replace_file without a snapshot). Returns 0
 * or an errno value. */
int ol_write_atomic(const char *path, const char *data, size_t len);

void ol_fix_outcome_free(ol_fix_outcome *o);

#endif
