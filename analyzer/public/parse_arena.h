/*
 * parse_arena.h - a per-file arena for tree-sitter's allocations.
 *
 * tree-sitter allocates and frees hundreds of thousands of small blocks per
 * file (subtrees, stack nodes, arrays it grows) and frees them one by one
 * when the tree is deleted. A file's parse is one lifetime: everything the
 * parser, its tree and a cursor over it allocate can go into one bump arena
 * and be dropped at once when the file is done, which saves malloc's work,
 * the walk that deletes the tree, and the allocator's fragmentation.
 *
 * tree-sitter takes one allocator for the whole process (ts_set_allocator),
 * so the hooks installed here dispatch through a thread-local pointer to the
 * arena this thread has made current (ol_parse_arena_begin); with none
 * current they are plain malloc/calloc/realloc/free. That pointer is the
 * only thread-local state in oomlint, forced by the shape of that API.
 *
 * Inside an arena, a freed block goes to a free list by its size and is
 * handed out again (the last block is given back to the bump pointer, so
 * stack-like use reuses memory), and realloc grows a block in place when it
 * is the last one or has room, or copies. A block the arena does not own (allocated before begin) passes
 * through to libc, so nothing breaks if one is freed inside the scope.
 * The contract for the caller: no block allocated between begin and end is
 * used after end; in practice, every tree-sitter object made in the scope
 * (parser, tree, cursor) is abandoned in it, see ol_parse in syntax.c.
 *
 * Under AddressSanitizer every block has a poisoned redzone after it, and
 * freed blocks and reset chunks are poisoned, so overflows and uses after
 * the end of a file are still reported.
 *
 * In analyzer/public/, the rules' side of the engine: this half declares
 * what rules may use; the engine's own declarations of the same part are
 * in analyzer/parse_arena.h, which includes this one. Rules are compiled
 * with analyzer/public/ alone on their include path.
 */
#ifndef OL_PUBLIC_PARSE_ARENA_H
#define OL_PUBLIC_PARSE_ARENA_H

#include <stdbool.h>
#include <stddef.h>

typedef struct ol_parse_arena_chunk ol_parse_arena_chunk;

/* free lists: 64 exact sizes up to 1 KiB, then one per power of two */
#define OL_ARENA_BINS 96

typedef struct ol_parse_arena {
    ol_parse_arena_chunk *chunks; /* newest first; blocks are cut from the newest */
    char *top, *limit;            /* free space in the newest chunk */
    char *last;                   /* the most recent block, which can grow or shrink in place */
    size_t next_chunk;            /* size of the next chunk to allocate */
    size_t used, peak;            /* bytes handed out in this scope; the most in any scope */
    size_t reserved;              /* bytes of chunks held */
    void *bins[OL_ARENA_BINS];    /* freed blocks by size, linked through their headers */
} ol_parse_arena;

#endif
