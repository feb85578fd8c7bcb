/*
 * parse_arena.c - the per-file arena behind tree-sitter's allocator (see
 * parse_arena.h for why and for the contract).
 *
 * A block is a 16-byte header holding its size, then the caller's bytes
 * rounded up to 16, then (under ASan only) a 16-byte poisoned redzone.
 * Chunks double from 256 KiB up to 64 MiB each; when a scope ends the newest
 * chunk is kept for the next file if it is at most OL_RETAIN bytes, the rest
 * go back to libc, so a thread holds little between files however large one
 * file was.
 */
#include "parse_arena.h"

#include <pthread.h>
#include <stdint.h>
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

static size_t round_up(size_t n) { return (n + ALIGN - 1) & ~(size_t)(ALIGN - 1); }

static size_t *size_slot(void *p) { return (size_t *)((char *)p - HEADER); }

void ol_parse_arena_init(ol_parse_arena *a)
{
    memset(a, 0, sizeof(*a));
    a->next_chunk = FIRST_CHUNK;
}

static void drop_chunk(ol_parse_arena *a, ol_parse_arena_chunk *c)
{
    a->reserved -= c->size;
    UNPOISON(chunk_data(c), c->size);
    free(c);
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

static void new_chunk(ol_parse_arena *a, size_t need)
{
    size_t size = a->next_chunk;
    while (size < need)
        size *= 2;
    if (size > SIZE_MAX - sizeof(ol_parse_arena_chunk))
        ol_oom();
    ol_parse_arena_chunk *c = ol_xmalloc(sizeof(*c) + size);
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

void *ol_parse_arena_alloc(ol_parse_arena *a, size_t n)
{
    if (n > SIZE_MAX / 2)
        ol_oom();
    size_t need = HEADER + round_up(n) + REDZONE;
    if (!a->top || (size_t)(a->limit - a->top) < need)
        new_chunk(a, need);
    char *p = a->top + HEADER;
    a->top += need;
    UNPOISON(p - HEADER, HEADER + n);
    *size_slot(p) = n;
    a->last = p;
    a->used += n;
    if (a->used > a->peak)
        a->peak = a->used;
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
    size_t n = *size_slot(p);
    if (p == a->last) {
        /* the most recent block: its space is free for the next one */
        a->top = (char *)p - HEADER;
        a->last = NULL;
        POISON(a->top, HEADER + round_up(n));
    } else {
        POISON(p, n);
    }
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
    size_t old = *size_slot(p);
    if (p == a->last && n <= SIZE_MAX / 2 &&
        (size_t)(a->limit - (char *)p) >= round_up(n) + REDZONE) {
        /* the most recent block grows or shrinks where it is */
        a->top = (char *)p + round_up(n) + REDZONE;
        if (n > old) {
            UNPOISON((char *)p + old, n - old);
            a->used += n - old;
            if (a->used > a->peak)
                a->peak = a->used;
        } else {
            POISON((char *)p + n, old - n);
        }
        *size_slot(p) = n;
        return p;
    }
    if (n <= old) {
        POISON((char *)p + n, old - n);
        *size_slot(p) = n;
        return p;
    }
    void *q = ol_parse_arena_alloc(a, n);
    memcpy(q, p, old);
    POISON(p, old);
    return q;
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
    /* keep the newest (largest) chunk if it is small enough, drop the rest */
    ol_parse_arena_chunk *keep = a->chunks;
    if (keep && keep->size > OL_RETAIN)
        keep = NULL;
    ol_parse_arena_chunk *c = keep ? keep->next : a->chunks;
    while (c) {
        ol_parse_arena_chunk *next = c->next;
        drop_chunk(a, c);
        c = next;
    }
    a->chunks = keep;
    a->last = NULL;
    if (keep) {
        keep->next = NULL;
        a->top = chunk_data(keep);
        a->limit = a->top + keep->size;
        POISON(a->top, keep->size);
        a->next_chunk = keep->size * 2 < MAX_CHUNK ? keep->size * 2 : MAX_CHUNK;
    } else {
        a->top = a->limit = NULL;
        a->next_chunk = FIRST_CHUNK;
    }
    a->used = 0;
}

static void *hook_malloc(size_t n)
{
    ol_parse_arena *a = current;
    if (a)
        return ol_parse_arena_alloc(a, n);
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
    void *p = ol_parse_arena_alloc(a, count * size);
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
