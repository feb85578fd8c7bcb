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
 * The pinned sources are included as they are: the runtime's lib.c (itself
 * one translation unit of the runtime) from its lib/src, and the grammar's
 * src/parser.c and src/scanner.c from the grammar's top directory, which the
 * Makefile puts on the include path. The scanner's tree_sitter/alloc.h
 * shares the runtime's include guard, so the scanner allocates through the
 * runtime's hooks, as TREE_SITTER_REUSE_ALLOCATOR makes it do when built
 * apart.
 */
#include "lib.c"
#include "src/parser.c"
#include "src/scanner.c"
