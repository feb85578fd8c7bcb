/*
 * parser_unity.c - the tree-sitter runtime and the Python grammar compiled
 * as one translation unit (the Makefile's $(OUT)/obj/vendor/parser.o).
 *
 * The runtime reaches the grammar's lexer, and the lexer the runtime's
 * cursor (advance, mark_end, eof), only through function pointers. Compiled
 * apart, each of those is an indirect call per character; compiled together
 * with a profile (grammar/pgo.mk), the compiler sees that each pointer always
 * holds the same function and calls it directly, inlined where it pays. Built
 * plainly (PGO=0, sanitizers, other platforms) it is the same code as the
 * three objects apart.
 *
 * The pinned sources are included as they are, from the runtime's lib/src
 * and the grammar's top directory (both on the include path), but for one
 * file: the runtime's parser.c comes as build/gen/ts_parser.c, the same
 * file with one edit (grammar/edit_runtime.py), so the files of the
 * runtime's own lib.c are listed here, in its order, in place of lib.c
 * (edit_runtime.py fails when a new pin's lib.c lists others). The
 * scanner's tree_sitter/alloc.h shares the runtime's include guard, so the
 * scanner allocates through the runtime's hooks, as
 * TREE_SITTER_REUSE_ALLOCATOR makes it do when built apart.
 */
#include <stdbool.h>

/* Set on a thread while it parses a text whose tree is walked once and
 * dropped (analyzer/syntax.c): such a tree, when it has no errors, is not
 * balanced (edit_runtime.py says why that is safe and what it saves). A
 * tree with errors is balanced as always: syntax.c reads its errors through
 * TSNode calls, which descend from the root. */
_Thread_local bool ol_ts_unbalanced;
#define OL_TS_SKIP_BALANCE(self) (ol_ts_unbalanced && ts_subtree_error_cost((self)->finished_tree) == 0)

/* Reference counts without locked instructions: every tree oomlint parses
 * is made, read and dropped by one thread (each thread has its own parser,
 * and the language server's incremental parser shares a tree only with its
 * own next parse, ts_tree_copy in analyzer/syntax.c), so no subtree is ever
 * retained or released on two threads, and the runtime's atomic increment
 * and decrement per retain and release (a locked instruction, which also
 * orders every memory access around it) guard nothing here. These are the
 * runtime's own plain versions (its atomic.h, for TinyCC), under the same
 * include guard, so its atomic.h is skipped. */
#define TREE_SITTER_ATOMIC_H_
#include <stddef.h>
#include <stdint.h>

static inline size_t atomic_load(const volatile size_t *p)
{
    return *p;
}

static inline uint32_t atomic_inc(volatile uint32_t *p)
{
    *p += 1;
    return *p;
}

static inline uint32_t atomic_dec(volatile uint32_t *p)
{
    *p -= 1;
    return *p;
}

#include "alloc.c"
#include "get_changed_ranges.c"
#include "language.c"
#include "lexer.c"
#include "node.c"
#include "ts_parser.c"
#include "query.c"
#include "stack.c"
#include "subtree.c"
#include "tree_cursor.c"
#include "tree.c"
#include "wasm_store.c"

#include "src/parser.c"
#include "src/scanner.c"
