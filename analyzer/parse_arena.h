/*
 * parse_arena.h - the declarations of this part of the engine that only
 * the engine uses: the per-file parse arena's allocator, which
 * tree-sitter calls. What rules may use of it is declared in
 * public/parse_arena.h, included here, so each thing is declared once and
 * rules, whose include path holds only analyzer/public/, see only their
 * half (docs/how-it-works.md).
 */
#ifndef OL_PARSE_ARENA_H
#define OL_PARSE_ARENA_H

#include <stdbool.h>
#include <stddef.h>

#include "public/parse_arena.h"

/* Points tree-sitter's allocator at the dispatching hooks. Idempotent and
 * thread-safe; call before any tree-sitter object exists that an arena scope
 * could touch (ol_grammar_init and ol_parser_init do). */
void ol_parse_arena_install(void);
void ol_parse_arena_init(ol_parse_arena *a);
void ol_parse_arena_free(ol_parse_arena *a);

/* Makes a this thread's current arena (scopes do not nest), and ends the
 * scope: every block in a is released at once, and the memory is kept for
 * the next scope up to a bound. */
void ol_parse_arena_begin(ol_parse_arena *a);
void ol_parse_arena_end(ol_parse_arena *a);

/* The allocator itself (what the hooks call; exposed for the unit tests).
 * Blocks are aligned for any type. Allocation failure is fatal, as with
 * ol_xmalloc. realloc and release pass blocks a does not own to libc. */
void *ol_parse_arena_alloc(ol_parse_arena *a, size_t n);
void *ol_parse_arena_realloc(ol_parse_arena *a, void *p, size_t n);
void ol_parse_arena_release(ol_parse_arena *a, void *p);
bool ol_parse_arena_owns(const ol_parse_arena *a, const void *p);

#endif
