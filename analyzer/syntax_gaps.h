/*
 * syntax_gaps.h - rewriting valid Python that the pinned grammar misparses
 * into equivalent text of the same length that it parses (syntax_gaps.c).
 */
#ifndef OL_SYNTAX_GAPS_H
#define OL_SYNTAX_GAPS_H

#include <stdint.h>

#include "syntax.h"

/* A copy of src[0, len) (NUL-terminated, caller frees) with every known
 * grammar gap rewritten, or NULL when there is none. Comments that had to
 * be blanked are appended to blanked, in order. */
char *ol_syntax_gap_rewrite(const char *src, uint32_t len, ol_span_vec *blanked);

#endif
