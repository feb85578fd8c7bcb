/*
 * parse_arena.c - the per-file arena behind tree-sitter's allocator (see
 * parse_arena.h for why and for the contract).
 *
 * A block is a 16-byte header holding its size (and, while the block is
 * free, the next free block of its bin), then the caller's bytes rounded up
 * to 16, then (under ASan only) a 16-byte poisoned redzone. A freed block
 * goes to a bin by its size and is handed out again: tree-sitter's parse
 * frees as much as it keeps (arrays it outgrows, the stack's discarded
 * versions, subtrees of abandoned parses), and without reuse a 400 KB file
 * held 33 MB.
 * Chunks double from 256 KiB up to 64 MiB each; when a scope ends the
 * largest chunk of at most OL_RETAIN bytes is kept for the next file, the
 * rest go back to the system, so a thread holds little between files however
 * large one file was.
 */
#include "parse_arena.h"

#include <pthread.h>
#include <stdint.h>
#include <sys/mman.h>
#include <stdlib.h>
#include <string.h>

#include <tree_sitter/api.h>

#include "util.h"

#if defined(__SANITIZE_ADDRESS__)
#define OL_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define OL_ASAN 1
#endif
#endif

#ifdef OL_ASAN
#include <sanitizer/asan_interface.h>
#define POISON(p, n) ASAN_POISON_MEMORY_REGION((p), (n))
#define UNPOISON(p, n) ASAN_UNPOISON_MEMORY_REGION((p), (n))
#define REDZONE 16u
#else
#define POISON(p, n) ((void)(p), (void)(n))
#define UNPOISON(p, n) ((void)(p), (void)(n))
#define REDZONE 0u
#endif

#define ALIGN 16u
#define HEADER 16u
#define FIRST_CHUNK ((size_t)256 * 1024)
#define MAX_CHUNK ((size_t)64 * 1024 * 1024)
#define OL_RETAIN ((size_t)4 * 1024 * 1024)

struct ol_parse_arena_chunk {
    ol_parse_arena_chunk *next;
    size_t size; /* bytes of data after this header */
};

/* 16 bytes on every platform we build on; the data after it stays aligned */
typedef char chunk_header_is_aligned[sizeof(ol_parse_arena_chunk) % ALIGN == 0 ? 1 : -1];

static char *chunk_data(ol_parse_arena_chunk *c) { return (char *)(c + 1); }


static size_t *size_slot(void *p) { return (size_t *)((char *)p - HEADER); }

/* The header's second word: the block's capacity while it is in use (what
 * it can hold without moving), the next block of its bin while it is free
 * (when the first word holds the capacity instead of the size). */
static size_t *cap_slot(void *p) { return (size_t *)((char *)p - HEADER + sizeof(size_t)); }
static void **link_slot(void *p) { return (void **)((char *)p - HEADER + sizeof(size_t)); }

/* Bins: exact sizes in steps of 16 up to SMALL_MAX, then one bin per power
 * of two (a block is in bin k when its capacity is in [2^k, 2^(k+1))). */
#define SMALL_MAX 1024u
#define SMALL_BINS (SMALL_MAX / ALIGN)

static size_t log2_floor(size_t n)
{
    size_t k = 0;
    while (n >>= 1)
        k++;
    return k;
}

static size_t bin_of(size_t capacity)
{
    if (capacity <= SMALL_MAX)
        return capacity / ALIGN - 1;
    size_t k = SMALL_BINS + log2_floor(capacity) - log2_floor(SMALL_MAX);
    return k < OL_ARENA_BINS ? k : OL_ARENA_BINS - 1;
}

static size_t capacity_of(size_t n)
{
    size_t c = (n + ALIGN - 1) & ~(size_t)(ALIGN - 1);
    return c ? c : ALIGN;
}

void ol_parse_arena_init(ol_parse_arena *a)
{
    memset(a, 0, sizeof(*a));
    a->next_chunk = FIRST_CHUNK;
}

/* Chunks are mapped from the kernel, not taken from malloc: given back, they
 * leave no hole in malloc's heap. (Through malloc, freeing one large chunk
 * raised glibc's mmap threshold to its size, so the next file's chunks came
 * from the heap, between blocks that outlive the file, and a thread kept the
 * memory of the largest parse for the rest of the run.) */
static void drop_chunk(ol_parse_arena *a, ol_parse_arena_chunk *c)
{
    a->reserved -= c->size;
    UNPOISON(chunk_data(c), c->size);
    munmap(c, sizeof(*c) + c->size);
}

void ol_parse_arena_free(ol_parse_arena *a)
{
    ol_parse_arena_chunk *c = a->chunks;
    while (c) {
        ol_parse_arena_chunk *next = c->next;
        drop_chunk(a, c);
        c = next;
    }
    memset(a, 0, sizeof(*a));
}

/* Fresh memory costs a page fault per page first touched: a microsecond on
 * bare metal, 16 on the virtual machine oomlint's CI runs on (measured:
 * mapping, touching and unmapping 8 MB, 16 us per 4 KB page), where the
 * chunks that large files map and drop cost 20,000 faults on the benchmark's
 * corpus. map_chunk asked for huge pages (a multiple of 2 MB) maps it on a
 * 2 MB boundary and asks for transparent huge pages, one fault per 2 MB
 * (0.25 us per 4 KB there); where the kernel gives none (THP off, or not
 * Linux) it is plain memory, as before. */
#define HUGE_PAGE ((size_t)2 * 1024 * 1024)

static void *map_chunk(size_t bytes, bool huge)
{
#if defined(MADV_HUGEPAGE) && !defined(OL_ASAN)
    if (huge && bytes % HUGE_PAGE == 0) {
        char *raw = mmap(NULL, bytes + HUGE_PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (raw == MAP_FAILED)
            ol_oom();
        char *at = (char *)(((uintptr_t)raw + HUGE_PAGE - 1) & ~(uintptr_t)(HUGE_PAGE - 1));
        if (at > raw)
            munmap(raw, (size_t)(at - raw));
        if (at + bytes < raw + bytes + HUGE_PAGE)
            munmap(at + bytes, (size_t)(raw + bytes + HUGE_PAGE - (at + bytes)));
        (void)madvise(at, bytes, MADV_HUGEPAGE);
        return at;
    }
#else
    (void)huge;
#endif
    void *mem = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (mem == MAP_FAILED)
        ol_oom();
    return mem;
}

static void new_chunk(ol_parse_arena *a, size_t need)
{
    size_t size = a->next_chunk;
    while (size < need)
        size *= 2;
    if (size > SIZE_MAX - sizeof(ol_parse_arena_chunk))
        ol_oom();
    /* a chunk larger than any kept between files is mapped anew for each
     * file that needs it: huge pages, which hold its header within its power
     * of two (a kept chunk stays in small pages, faulted in once: in huge ones
     * a file that touches 300 KB of it would hold 2 MB) */
    bool huge = size > OL_RETAIN && size - need >= sizeof(ol_parse_arena_chunk);
    void *mem = map_chunk(huge ? size : sizeof(ol_parse_arena_chunk) + size, huge);
    if (huge)
        size -= sizeof(ol_parse_arena_chunk);
    ol_parse_arena_chunk *c = mem;
    c->size = size;
    a->reserved += size;
    c->next = a->chunks;
    a->chunks = c;
    a->top = chunk_data(c);
    a->limit = a->top + size;
    POISON(a->top, size);
    if (a->next_chunk < MAX_CHUNK)
        a->next_chunk *= 2;
}

/* A freed block that holds n bytes, taken out of its bin; NULL if none.
 * Small sizes take the exact bin; larger ones the first fit among a few of
 * their own bin, or the head of the next bin up (at most four times the
 * size, so a large freed array is not spent on a small request). */
static void *reuse(ol_parse_arena *a, size_t cap)
{
    size_t k = bin_of(cap);
    if (cap <= SMALL_MAX) {
        void *p = a->bins[k];
        if (p)
            a->bins[k] = *link_slot(p);
        return p;
    }
    void **at = &a->bins[k];
    for (int tries = 0; *at && tries < 4; tries++, at = link_slot(*at)) {
        if (*size_slot(*at) >= cap) {
            void *p = *at;
            *at = *link_slot(p);
            return p;
        }
    }
    if (k + 1 < OL_ARENA_BINS && a->bins[k + 1]) {
        void *p = a->bins[k + 1];
        a->bins[k + 1] = *link_slot(p);
        return p;
    }
    return NULL;
}

static void count_used(ol_parse_arena *a, size_t n)
{
    a->used += n;
    if (a->used > a->peak)
        a->peak = a->used;
}

void *ol_parse_arena_alloc(ol_parse_arena *a, size_t n)
{
    if (n > SIZE_MAX / 2)
        ol_oom();
    size_t cap = capacity_of(n);
    char *p = reuse(a, cap);
    if (p) {
        /* a free block's header holds its capacity, then its bin's link */
        *cap_slot(p) = *size_slot(p);
    } else {
        size_t need = HEADER + cap + REDZONE;
        if (!a->top || (size_t)(a->limit - a->top) < need)
            new_chunk(a, need);
        p = a->top + HEADER;
        a->top += need;
        UNPOISON(p - HEADER, HEADER);
        *cap_slot(p) = cap;
        a->last = p;
    }
    UNPOISON(p, n);
    *size_slot(p) = n;
    count_used(a, n);
    return p;
}

bool ol_parse_arena_owns(const ol_parse_arena *a, const void *p)
{
    uintptr_t at = (uintptr_t)p;
    for (ol_parse_arena_chunk *c = a->chunks; c; c = c->next) {
        uintptr_t start = (uintptr_t)chunk_data(c);
        if (at >= start && at < start + c->size)
            return true;
    }
    return false;
}

void ol_parse_arena_release(ol_parse_arena *a, void *p)
{
    if (!p)
        return;
    if (!ol_parse_arena_owns(a, p)) {
        free(p);
        return;
    }
    size_t cap = *cap_slot(p);
    if (p == a->last) {
        /* the most recent block: its space is free for the next one */
        a->top = (char *)p - HEADER;
        a->last = NULL;
        POISON(a->top, HEADER + cap + REDZONE);
        return;
    }
    POISON(p, cap);
    size_t k = bin_of(cap);
    *size_slot(p) = cap;
    *link_slot(p) = a->bins[k];
    a->bins[k] = p;
}

void *ol_parse_arena_realloc(ol_parse_arena *a, void *p, size_t n)
{
    if (!p)
        return ol_parse_arena_alloc(a, n);
    if (!ol_parse_arena_owns(a, p)) {
        void *q = realloc(p, n);
        if (!q && n)
            ol_oom();
        return q;
    }
    if (n > SIZE_MAX / 2)
        ol_oom();
    size_t old = *size_slot(p), cap = *cap_slot(p);
    if (p == a->last && (size_t)(a->limit - (char *)p) >= capacity_of(n) + REDZONE) {
        /* the most recent block grows or shrinks where it is */
        cap = capacity_of(n);
        a->top = (char *)p + cap + REDZONE;
        *cap_slot(p) = cap;
    } else if (n > cap) {
        void *q = ol_parse_arena_alloc(a, n);
        memcpy(q, p, old);
        ol_parse_arena_release(a, p);
        return q;
    }
    /* it fits where it is */
    if (n > old) {
        UNPOISON((char *)p + old, n - old);
        count_used(a, n - old);
    } else {
        POISON((char *)p + n, old - n);
    }
    *size_slot(p) = n;
    return p;
}

/* ---- the current arena and the hooks -------------------------------------- */

static _Thread_local ol_parse_arena *current;

void ol_parse_arena_begin(ol_parse_arena *a)
{
    current = a;
    a->used = 0;
}

void ol_parse_arena_end(ol_parse_arena *a)
{
    if (current == a)
        current = NULL;
    /* keep the largest chunk that is small enough, drop the rest: a file
     * that outgrew it leaves it for the next (mapping fresh memory costs a
     * page fault per page touched) */
    ol_parse_arena_chunk *keep = NULL;
    for (ol_parse_arena_chunk *c = a->chunks; c; c = c->next)
        if (c->size <= OL_RETAIN && (!keep || c->size > keep->size))
            keep = c;
    for (ol_parse_arena_chunk *c = a->chunks; c;) {
        ol_parse_arena_chunk *next = c->next;
        if (c != keep)
            drop_chunk(a, c);
        c = next;
    }
    a->chunks = keep;
    a->last = NULL;
    memset(a->bins, 0, sizeof(a->bins));
    if (keep) {
        keep->next = NULL;
        a->top = chunk_data(keep);
        a->limit = a->top + keep->size;
        POISON(a->top, keep->size);
        /* the power of two after the kept one (a chunk of huge pages
         * holds its header within its power of two) */
        a->next_chunk = FIRST_CHUNK;
        while (a->next_chunk <= keep->size + sizeof(ol_parse_arena_chunk) && a->next_chunk < MAX_CHUNK)
            a->next_chunk *= 2;
    } else {
        a->top = a->limit = NULL;
        a->next_chunk = FIRST_CHUNK;
    }
    a->used = 0;
}

/* ol_parse_arena_alloc's common case, inlined into the hooks: a small
 * block from its bin or from the top of the chunk (the parser asks for
 * millions of them, and a call that saves every register cost a third of
 * the allocation). The sanitizer build takes the full path, which poisons. */
static inline void *alloc_small(ol_parse_arena *a, size_t n)
{
#ifndef OL_ASAN
    if (n - 1 < SMALL_MAX) {
        size_t cap = capacity_of(n);
        size_t k = cap / ALIGN - 1;
        char *p = a->bins[k];
        if (p) {
            a->bins[k] = *link_slot(p);
            *cap_slot(p) = *size_slot(p);
        } else if (a->top && (size_t)(a->limit - a->top) >= HEADER + cap) {
            p = a->top + HEADER;
            a->top += HEADER + cap;
            *cap_slot(p) = cap;
            a->last = p;
        } else {
            return ol_parse_arena_alloc(a, n);
        }
        *size_slot(p) = n;
        count_used(a, n);
        return p;
    }
#endif
    return ol_parse_arena_alloc(a, n);
}

static void *hook_malloc(size_t n)
{
    ol_parse_arena *a = current;
    if (a)
        return alloc_small(a, n);
    void *p = malloc(n);
    if (!p && n)
        ol_oom();
    return p;
}

static void *hook_calloc(size_t count, size_t size)
{
    ol_parse_arena *a = current;
    if (!a) {
        void *p = calloc(count, size);
        if (!p && count && size)
            ol_oom();
        return p;
    }
    if (size && count > SIZE_MAX / size)
        ol_oom();
    void *p = alloc_small(a, count * size);
    memset(p, 0, count * size);
    return p;
}

static void *hook_realloc(void *p, size_t n)
{
    ol_parse_arena *a = current;
    if (a)
        return ol_parse_arena_realloc(a, p, n);
    void *q = realloc(p, n);
    if (!q && n)
        ol_oom();
    return q;
}

static void hook_free(void *p)
{
    ol_parse_arena *a = current;
    if (a)
        ol_parse_arena_release(a, p);
    else
        free(p);
}

static void install_hooks(void) { ts_set_allocator(hook_malloc, hook_calloc, hook_realloc, hook_free); }

void ol_parse_arena_install(void)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, install_hooks);
}
