/*
 * util.h - small generic helpers used everywhere in oomlint.
 *
 * One growable-array macro family (OL_VEC) instead of ad-hoc realloc loops, a
 * string builder (ol_buf), a bump arena for per-file allocations, and a string
 * interner so the semantic model can compare names as integers. Allocation
 * failure is fatal (ol_oom prints and aborts): a linter that runs out of host
 * memory cannot report anything useful, and checking every small allocation
 * at every call site would hide the logic that matters.
 *
 * Nothing here holds global mutable state; every object is owned by its caller.
 *
 * In analyzer/public/, the rules' side of the engine: this half declares
 * what rules may use; the engine's own declarations of the same part are
 * in analyzer/util.h, which includes this one. Rules are compiled with
 * analyzer/public/ alone on their include path.
 */
#ifndef OL_PUBLIC_UTIL_H
#define OL_PUBLIC_UTIL_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#if defined(__GNUC__)
#define OL_PRINTF(fmt, args) __attribute__((format(printf, fmt, args)))
#define OL_NORETURN __attribute__((noreturn))
#else
#define OL_PRINTF(fmt, args)
#define OL_NORETURN
#endif

#define OL_ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

OL_NORETURN void ol_oom(void);
void *ol_xmalloc(size_t n);
void *ol_xcalloc(size_t count, size_t size);
void *ol_xrealloc(void *p, size_t n);
char *ol_xstrdup(const char *s);
char *ol_xstrndup(const char *s, size_t n);
char *ol_xasprintf(const char *fmt, ...) OL_PRINTF(1, 2);

/* Growable array: OL_VEC(int) v = {0}; ol_vec_push(&v, 3); ol_vec_free(&v); */
#define OL_VEC(T) struct { T *items; size_t len, cap; }
#define ol_vec_reserve(v, n)                                                        \
    ((n) > (v)->cap ? ol_grow_((void **)&(v)->items, &(v)->cap, (n), sizeof(*(v)->items)) \
                    : (void)0)
#define ol_vec_push(v, x)                                                           \
    (ol_vec_reserve((v), (v)->len + 1), (v)->items[(v)->len++] = (x))
#define ol_vec_free(v) (free((v)->items), (v)->items = NULL, (v)->len = (v)->cap = 0)
#define ol_vec_last(v) ((v)->items[(v)->len - 1])
void ol_grow_(void **items, size_t *cap, size_t need, size_t elem_size);

/* String builder; data is always NUL-terminated once anything was added. */
typedef struct ol_buf {
    char *data;
    size_t len, cap;
} ol_buf;

void ol_buf_reserve(ol_buf *b, size_t extra);
void ol_buf_add(ol_buf *b, const char *s, size_t n);
void ol_buf_puts(ol_buf *b, const char *s);
void ol_buf_putc(ol_buf *b, char c);
void ol_buf_printf(ol_buf *b, const char *fmt, ...) OL_PRINTF(2, 3);
void ol_buf_vprintf(ol_buf *b, const char *fmt, va_list ap) OL_PRINTF(2, 0);
void ol_buf_clear(ol_buf *b);
char *ol_buf_take(ol_buf *b); /* returns the string (never NULL), resets b */
void ol_buf_free(ol_buf *b);

/* Bump arena: many small allocations freed together. */
typedef struct ol_arena_block ol_arena_block;
typedef struct ol_arena {
    ol_arena_block *head;
} ol_arena;

void *ol_arena_alloc(ol_arena *a, size_t n); /* aligned for any object */
void *ol_arena_alloc_aligned(ol_arena *a, size_t n, size_t align); /* align: a power of two up to max_align_t's */
char *ol_arena_strndup(ol_arena *a, const char *s, size_t n); /* unaligned: text packs tight */
char *ol_arena_printf(ol_arena *a, const char *fmt, ...) OL_PRINTF(2, 3);
void ol_arena_free(ol_arena *a);
/* Bytes the arena holds (its blocks, headers included). */
size_t ol_arena_bytes(const ol_arena *a);

/* Moving what an arena holds into one block of exactly that size (a
 * summary kept for the whole run, its blocks' empty tails let go):
 * ol_arena_compact_begin copies it, ol_arena_moved says where a pointer
 * into the old blocks now points (others come back as they were: text
 * that never was in the arena), ol_arena_compact_end frees the old
 * blocks. begin returns false when there is nothing to gain; then the
 * arena is as it was and nothing is to be moved. */
typedef struct ol_arena_span {
    uintptr_t from;
    size_t len;
    char *to;
} ol_arena_span;
typedef struct ol_arena_compaction {
    ol_arena_block *old;
    OL_VEC(ol_arena_span) spans;
} ol_arena_compaction;
bool ol_arena_compact_begin(ol_arena *a, ol_arena_compaction *c);
void *ol_arena_moved(const ol_arena_compaction *c, const void *p);
void ol_arena_compact_end(ol_arena_compaction *c);

/* String interner: equal strings get equal ids; id 0 is reserved for "none". */
typedef struct ol_interner {
    uint32_t *slots;  /* hash table of ids (0 = empty) */
    size_t slot_count;
    OL_VEC(const char *) strings; /* id -> string (index 0 unused) */
    OL_VEC(uint32_t) lengths;
    ol_arena arena;
} ol_interner;

size_t ol_interned_len(const ol_interner *in, uint32_t id);

/* qsort that accepts an empty (even NULL) array. */
void ol_sort(void *base, size_t count, size_t size, int (*cmp)(const void *, const void *));
/* Comparison of two uint64_t, for ol_sort. */
int ol_cmp_u64(const void *a, const void *b);
/* Comparison of two uint32_t, for ol_sort and bsearch. */
int ol_cmp_u32(const void *a, const void *b);
/* The first position of the ascending array items[0..n) whose value is not
 * below key (n when there is none). */
size_t ol_lower_bound_u32(const uint32_t *items, size_t n, uint32_t key);
size_t ol_lower_bound_u64(const uint64_t *items, size_t n, uint64_t key);

/* Text helpers. */
/* a == b, the first bytes compared before strcmp: the names of the lists
 * asked about every call of a file mostly differ there, and glibc's strcmp
 * costs about 20 instructions to set up. */
static inline bool ol_str_eq(const char *a, const char *b)
{
    return a[0] == b[0] && strcmp(a, b) == 0;
}
bool ol_str_has_prefix(const char *s, const char *prefix);
bool ol_str_has_suffix(const char *s, const char *suffix);
bool ol_mem_eq_cstr(const char *s, size_t n, const char *c);
/* Case-insensitive ASCII comparison of n bytes. */
bool ol_mem_ieq(const char *a, const char *b, size_t n);
/* The first place `needle` occurs in s[0..n), ASCII case ignored, or NULL. */
const char *ol_find_ci(const char *s, size_t n, const char *needle);
/* The first place `needle` occurs in s[0..n), or NULL. */
const char *ol_find(const char *s, size_t n, const char *needle);

#endif
