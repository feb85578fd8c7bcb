/*
 * addnoqa.h - `--add-noqa`'s directives: which lines get one and with which
 * codes, the text with them, whether the text linted again says what was
 * meant, and writing it. The run (run.c) lints the new text and decides.
 */
#ifndef OL_ADDNOQA_H
#define OL_ADDNOQA_H

#include <stdbool.h>
#include <stddef.h>

#include "diag.h"
#include "fix.h"
#include "source.h"

typedef struct ol_noqa_line {
    uint32_t line; /* 0-based */
    OL_VEC(const char *) codes;
} ol_noqa_line;

typedef OL_VEC(ol_noqa_line) ol_noqa_lines;

/* The lines with findings that can be suppressed (not OOM001 or OOM002), each
 * with its codes, sorted. */
void ol_noqa_collect(const ol_source *src, const ol_diag_vec *diags, ol_noqa_lines *out);
/* src's text with directives on the lines in `chosen` (a flag per entry of
 * lines): appended to a `# noqa:` list the line ends with, else as
 * `  # noqa: CODE, CODE` at its end. */
void ol_noqa_build(const ol_source *src, const ol_noqa_lines *lines, const bool *chosen, ol_buf *out);
/* Does the text linted again say what the directives meant: no rule reports
 * more than before, no finding is left on a line that got a directive, and
 * the lines are the same? */
bool ol_noqa_as_meant(const ol_source *before_src, const ol_diag_vec *before, const ol_source *after_src,
                      const ol_diag_vec *after, const ol_noqa_lines *lines, const bool *chosen);
/* Writes the new text over path as --fix writes (writefile.h); false with
 * outcome->error (and failed) set when it could not. */
struct ol_file_snapshot;
bool ol_noqa_write(const ol_source *src, const ol_source *after_src, const char *path,
                   const struct ol_file_snapshot *snapshot, const char *text, size_t text_len, ol_fix_outcome *outcome);
void ol_noqa_lines_free(ol_noqa_lines *lines);

#endif
