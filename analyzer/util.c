/*
 * util.c - allocation, growable arrays, string builder, arena, interner and
 * whole-file reads. See util.h for the contracts.
 */
/* memmem, in glibc's string.h only with _GNU_SOURCE (musl's with the
 * _DEFAULT_SOURCE the Makefile sets, macOS's with _DARWIN_C_SOURCE) */
#define _GNU_SOURCE
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* abort(), not exit(): a signal is what tells the supervisor (supervise.h)
 * that linting this file failed, so it can set the file aside and finish
 * the run; exit() from one thread would also run atexit handlers under the
 * others' feet. */
void ol_oom(void)
{
    fputs("oomlint: out of memory\n", stderr);
    abort();
}

void *ol_xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p)
        ol_oom();
    return p;
}

void *ol_xcalloc(size_t count, size_t size)
{
    void *p = calloc(count ? count : 1, size ? size : 1);
    if (!p)
        ol_oom();
    return p;
}

void *ol_xrealloc(void *p, size_t n)
{
    void *q = realloc(p, n ? n : 1);
    if (!q)
        ol_oom();
    return q;
}

char *ol_xstrdup(const char *s)
{
    return ol_xstrndup(s, strlen(s));
}

char *ol_xstrndup(const char *s, size_t n)
{
    char *p = ol_xmalloc(n + 1);
    memcpy(p, s, n);
    p[n] = '\0';
    return p;
}

char *ol_xasprintf(const char *fmt, ...)
{
    ol_buf b = {0};
    va_list ap;
    va_start(ap, fmt);
    ol_buf_vprintf(&b, fmt, ap);
    va_end(ap);
    return ol_buf_take(&b);
}

void ol_grow_(void **items, size_t *cap, size_t need, size_t elem_size)
{
    size_t new_cap = *cap ? *cap : 8;
    while (new_cap < need) {
        if (new_cap > SIZE_MAX / 2 / elem_size)
            ol_oom();
        new_cap *= 2;
    }
    *items = ol_xrealloc(*items, new_cap * elem_size);
    *cap = new_cap;
}

/* ---- string builder ---------------------------------------------------- */

void ol_buf_reserve(ol_buf *b, size_t extra)
{
    size_t need = b->len + extra + 1;
    if (need <= b->cap)
        return;
    size_t cap = b->cap ? b->cap : 64;
    while (cap < need)
        cap *= 2;
    b->data = ol_xrealloc(b->data, cap);
    b->cap = cap;
}

void ol_buf_add(ol_buf *b, const char *s, size_t n)
{
    ol_buf_reserve(b, n);
    if (n)
        memcpy(b->data + b->len, s, n);
    b->len += n;
    b->data[b->len] = '\0';
}

void ol_buf_puts(ol_buf *b, const char *s)
{
    ol_buf_add(b, s, strlen(s));
}

void ol_buf_putc(ol_buf *b, char c)
{
    ol_buf_add(b, &c, 1);
}

void ol_buf_vprintf(ol_buf *b, const char *fmt, va_list ap)
{
    va_list copy;
    va_copy(copy, ap);
    int n = vsnprintf(NULL, 0, fmt, copy);
    va_end(copy);
    if (n < 0)
        return;
    ol_buf_reserve(b, (size_t)n);
    vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
    b->len += (size_t)n;
}

void ol_buf_printf(ol_buf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    ol_buf_vprintf(b, fmt, ap);
    va_end(ap);
}

void ol_buf_clear(ol_buf *b)
{
    b->len = 0;
    if (b->data)
        b->data[0] = '\0';
}

char *ol_buf_take(ol_buf *b)
{
    char *s = b->data ? b->data : ol_xstrdup("");
    b->data = NULL;
    b->len = b->cap = 0;
    return s;
}

void ol_buf_free(ol_buf *b)
{
    free(b->data);
    b->data = NULL;
    b->len = b->cap = 0;
}

/* ---- arena ------------------------------------------------------------- */

struct ol_arena_block {
    ol_arena_block *next;
    size_t used, size;
    max_align_t data[];
};

static size_t round_up(size_t n, size_t align)
{
    return (n + align - 1) / align * align;
}

/* n bytes at a multiple of align from the block's start (the blocks
 * themselves are aligned for anything). */
static void *arena_take(ol_arena *a, size_t n, size_t align)
{
    ol_arena_block *blk = a->head;
    size_t at = blk ? round_up(blk->used, align) : 0;
    if (!blk || at > blk->size || blk->size - at < n) {
        /* blocks grow from 512 bytes to 16 KB: a run keeps one arena per
         * file (its summary), and most hold a few names, so a fixed 16 KB
         * first block made 100,000 small files cost gigabytes */
        size_t size = blk ? (blk->size < 16384 ? blk->size * 2 : 16384) : 512;
        if (size < n)
            size = n;
        blk = ol_xmalloc(sizeof(*blk) + size);
        blk->size = size;
        blk->used = 0;
        blk->next = a->head;
        a->head = blk;
        at = 0;
    }
    void *p = (char *)blk->data + at;
    blk->used = at + n;
    return p;
}

void *ol_arena_alloc(ol_arena *a, size_t n)
{
    return arena_take(a, n, sizeof(max_align_t));
}

void *ol_arena_alloc_aligned(ol_arena *a, size_t n, size_t align)
{
    return arena_take(a, n, align);
}

char *ol_arena_strndup(ol_arena *a, const char *s, size_t n)
{
    /* text needs no alignment: a summary is mostly names */
    char *p = arena_take(a, n + 1, 1);
    memcpy(p, s, n);
    p[n] = '\0';
    return p;
}

bool ol_arena_compact_begin(ol_arena *a, ol_arena_compaction *c)
{
    const size_t align = sizeof(max_align_t);
    memset(c, 0, sizeof(*c));
    size_t total = 0, tails = 0;
    for (const ol_arena_block *blk = a->head; blk; blk = blk->next) {
        total += round_up(blk->used, align);
        tails += blk->size - blk->used;
    }
    /* one block already, or so little to let go that a copy buys nothing */
    if (!a->head || (!a->head->next && tails < 256) || total == 0)
        return false;
    ol_arena_block *one = ol_xmalloc(sizeof(*one) + total);
    one->next = NULL;
    one->size = one->used = total;
    size_t at = 0;
    for (const ol_arena_block *blk = a->head; blk; blk = blk->next) {
        if (!blk->used)
            continue;
        char *to = (char *)one->data + at;
        memcpy(to, blk->data, blk->used);
        ol_arena_span span = {(uintptr_t)blk->data, blk->used, to};
        ol_vec_push(&c->spans, span);
        at += round_up(blk->used, align);
    }
    c->old = a->head;
    a->head = one;
    return true;
}

void *ol_arena_moved(const ol_arena_compaction *c, const void *p)
{
    if (!p)
        return NULL;
    uintptr_t at = (uintptr_t)p;
    /* a block's end counts as its own (an empty array allocated last) */
    for (size_t i = 0; i < c->spans.len; i++)
        if (at - c->spans.items[i].from <= c->spans.items[i].len)
            return c->spans.items[i].to + (at - c->spans.items[i].from);
    return (void *)(uintptr_t)p;
}

void ol_arena_compact_end(ol_arena_compaction *c)
{
    ol_arena_free(&(ol_arena){c->old});
    c->old = NULL;
    ol_vec_free(&c->spans);
}

char *ol_arena_printf(ol_arena *a, const char *fmt, ...)
{
    ol_buf b = {0};
    va_list ap;
    va_start(ap, fmt);
    ol_buf_vprintf(&b, fmt, ap);
    va_end(ap);
    char *p = ol_arena_strndup(a, b.data ? b.data : "", b.len);
    ol_buf_free(&b);
    return p;
}

const char *ol_tmpdir(void)
{
    const char *dir = getenv("TMPDIR");
    return dir && *dir ? dir : "/tmp";
}

size_t ol_env_kb(const char *name, unsigned long long min_kb, size_t fallback)
{
    const char *v = getenv(name);
    if (v && *v) {
        char *end;
        unsigned long long kb = strtoull(v, &end, 10);
        if (*end == '\0' && kb >= min_kb && kb < SIZE_MAX / 1024)
            return (size_t)kb * 1024;
    }
    return fallback;
}

int ol_temp_fd(const char *stem)
{
    char *path = ol_xasprintf("%s/oomlint-%s-XXXXXX", ol_tmpdir(), stem);
    int fd = mkstemp(path);
    if (fd >= 0) {
        unlink(path);
        fcntl(fd, F_SETFD, FD_CLOEXEC);
    }
    free(path);
    return fd;
}

bool ol_pwrite_all(int fd, const void *data, size_t n, uint64_t off)
{
    const char *p = data;
    while (n > 0) {
        ssize_t w = pwrite(fd, p, n, (off_t)off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            if (w == 0)
                errno = ENOSPC;
            return false;
        }
        p += w;
        n -= (size_t)w;
        off += (uint64_t)w;
    }
    return true;
}

bool ol_pread_all(int fd, void *data, size_t n, uint64_t off)
{
    char *p = data;
    while (n > 0) {
        ssize_t r = pread(fd, p, n, (off_t)off);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0) {
            if (r == 0)
                errno = EIO; /* the file is shorter than what was written to it */
            return false;
        }
        p += r;
        n -= (size_t)r;
        off += (uint64_t)r;
    }
    return true;
}

size_t ol_arena_bytes(const ol_arena *a)
{
    size_t n = 0;
    for (const ol_arena_block *blk = a->head; blk; blk = blk->next)
        n += sizeof(*blk) + blk->size;
    return n;
}

void ol_arena_free(ol_arena *a)
{
    ol_arena_block *blk = a->head;
    while (blk) {
        ol_arena_block *next = blk->next;
        free(blk);
        blk = next;
    }
    a->head = NULL;
}

/* ---- interner ---------------------------------------------------------- */

static uint32_t hash_bytes(const char *s, size_t n)
{
    uint32_t h = 2166136261u; /* FNV-1a */
    for (size_t i = 0; i < n; i++) {
        h ^= (unsigned char)s[i];
        h *= 16777619u;
    }
    return h;
}

void ol_interner_init(ol_interner *in)
{
    memset(in, 0, sizeof(*in));
    in->slot_count = 256;
    in->slots = ol_xcalloc(in->slot_count, sizeof(uint32_t));
    ol_vec_push(&in->strings, "");
    ol_vec_push(&in->lengths, 0);
}

static size_t find_slot(const ol_interner *in, const char *s, size_t n, uint32_t h)
{
    size_t mask = in->slot_count - 1;
    size_t i = h & mask;
    for (;;) {
        uint32_t id = in->slots[i];
        if (id == 0)
            return i;
        if (in->lengths.items[id] == n && memcmp(in->strings.items[id], s, n) == 0)
            return i;
        i = (i + 1) & mask;
    }
}

uint32_t ol_intern_find(const ol_interner *in, const char *s, size_t n)
{
    return in->slots[find_slot(in, s, n, hash_bytes(s, n))];
}

uint32_t ol_intern(ol_interner *in, const char *s, size_t n)
{
    uint32_t h = hash_bytes(s, n);
    size_t slot = find_slot(in, s, n, h);
    if (in->slots[slot])
        return in->slots[slot];
    uint32_t id = (uint32_t)in->strings.len;
    ol_vec_push(&in->strings, ol_arena_strndup(&in->arena, s, n));
    ol_vec_push(&in->lengths, (uint32_t)n);
    in->slots[slot] = id;
    if (in->strings.len * 2 > in->slot_count) {
        size_t old_count = in->slot_count;
        uint32_t *old = in->slots;
        in->slot_count *= 2;
        in->slots = ol_xcalloc(in->slot_count, sizeof(uint32_t));
        for (size_t i = 0; i < old_count; i++) {
            uint32_t oid = old[i];
            if (!oid)
                continue;
            const char *os = in->strings.items[oid];
            size_t on = in->lengths.items[oid];
            in->slots[find_slot(in, os, on, hash_bytes(os, on))] = oid;
        }
        free(old);
    }
    return id;
}

uint32_t ol_intern_cstr(ol_interner *in, const char *s)
{
    return ol_intern(in, s, strlen(s));
}

const char *ol_interned(const ol_interner *in, uint32_t id)
{
    return id < in->strings.len ? in->strings.items[id] : "";
}

size_t ol_interned_len(const ol_interner *in, uint32_t id)
{
    return id < in->lengths.len ? in->lengths.items[id] : 0;
}

void ol_interner_free(ol_interner *in)
{
    free(in->slots);
    ol_vec_free(&in->strings);
    ol_vec_free(&in->lengths);
    ol_arena_free(&in->arena);
    memset(in, 0, sizeof(*in));
}

void ol_describe_read_error(ol_buf *out, int err, size_t max_bytes, const char *what)
{
    switch (err) {
    case ENOENT:
        ol_buf_puts(out, "no such file or directory");
        break;
    case EACCES:
        ol_buf_puts(out, "permission denied");
        break;
    case EISDIR:
        ol_buf_puts(out, "is a directory");
        break;
    case EFBIG:
        if (max_bytes >= 1024 * 1024)
            ol_buf_printf(out, "file is larger than the %zu MiB oomlint reads%s%s", max_bytes / (1024 * 1024),
                          what ? " for " : "", what ? what : "");
        else
            ol_buf_printf(out, "file is larger than the %zu KiB oomlint reads%s%s", max_bytes / 1024,
                          what ? " for " : "", what ? what : "");
        break;
    case OL_ERR_FIFO:
    case OL_ERR_SOCKET:
    case OL_ERR_DEVICE:
    case OL_ERR_NOT_REGULAR:
        ol_buf_puts(out, err == OL_ERR_FIFO     ? "is a FIFO (named pipe), not a regular file"
                         : err == OL_ERR_SOCKET ? "is a socket, not a regular file"
                         : err == OL_ERR_DEVICE ? "is a device, not a regular file"
                                                : "is not a regular file");
        /* sources: say what to do instead */
        if (!what)
            ol_buf_puts(out, err == OL_ERR_FIFO ? "; skipped (to lint a stream, pipe it to `oomlint -`)" : "; skipped");
        break;
    default:
        ol_buf_puts(out, strerror(err));
    }
}

void ol_sort(void *base, size_t count, size_t size, int (*cmp)(const void *, const void *))
{
    if (count > 1)
        qsort(base, count, size, cmp);
}

int ol_cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* ---- text -------------------------------------------------------------- */

bool ol_str_has_prefix(const char *s, const char *prefix)
{
    for (; *prefix; s++, prefix++)
        if (*s != *prefix)
            return false;
    return true;
}

bool ol_str_has_suffix(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && memcmp(s + n - m, suffix, m) == 0;
}

/* One pass, no calls: asked of most names the rules read, and most differ
 * at the first byte. */
bool ol_mem_eq_cstr(const char *s, size_t n, const char *c)
{
    for (size_t i = 0; i < n; i++)
        if (c[i] != s[i] || c[i] == '\0')
            return false;
    return c[n] == '\0';
}

bool ol_mem_ieq(const char *a, const char *b, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        unsigned char x = (unsigned char)a[i], y = (unsigned char)b[i];
        if (x >= 'A' && x <= 'Z')
            x = (unsigned char)(x - 'A' + 'a');
        if (y >= 'A' && y <= 'Z')
            y = (unsigned char)(y - 'A' + 'a');
        if (x != y)
            return false;
    }
    return true;
}

const char *ol_find_ci(const char *s, size_t n, const char *needle)
{
    size_t m = strlen(needle);
    if (m == 0)
        return s;
    /* most places differ at the first byte: settled here, without a call */
    unsigned char first = (unsigned char)needle[0];
    unsigned char other = first >= 'A' && first <= 'Z'   ? (unsigned char)(first - 'A' + 'a')
                          : first >= 'a' && first <= 'z' ? (unsigned char)(first - 'a' + 'A')
                                                         : first;
    for (size_t i = 0; i + m <= n; i++) {
        unsigned char c = (unsigned char)s[i];
        if ((c == first || c == other) && ol_mem_ieq(s + i + 1, needle + 1, m - 1))
            return s + i;
    }
    return NULL;
}

const char *ol_find(const char *s, size_t n, const char *needle)
{
    size_t m = strlen(needle);
    if (m == 0)
        return s;
    return m <= n ? memmem(s, n, needle, m) : NULL;
}

/* ---- files ------------------------------------------------------------- */

int ol_read_stream(int fd, size_t max_bytes, char **out, size_t *out_len)
{
    ol_buf b = {0};
    for (;;) {
        ol_buf_reserve(&b, 65536);
        ssize_t got = read(fd, b.data + b.len, 65536);
        if (got < 0) {
            if (errno == EINTR)
                continue;
            int err = errno;
            ol_buf_free(&b);
            return err;
        }
        if (got == 0)
            break;
        b.len += (size_t)got;
        if (b.len > max_bytes) {
            ol_buf_free(&b);
            return EFBIG;
        }
    }
    ol_buf_reserve(&b, 0);
    b.data[b.len] = '\0';
    /* reads are 64 KiB at a time: give back what a small file does not use
     * (a run keeps the text of every file with findings, and 100,000 small
     * files at 128 KiB each would be gigabytes) */
    if (b.cap - b.len > 4096) {
        b.data = ol_xrealloc(b.data, b.len + 1);
        b.cap = b.len + 1;
    }
    *out_len = b.len;
    *out = ol_buf_take(&b);
    return 0;
}

int ol_file_type_error(unsigned mode)
{
    if (S_ISREG(mode) || S_ISDIR(mode))
        return 0;
    if (S_ISFIFO(mode))
        return OL_ERR_FIFO;
    if (S_ISSOCK(mode))
        return OL_ERR_SOCKET;
    if (S_ISCHR(mode) || S_ISBLK(mode))
        return OL_ERR_DEVICE;
    return OL_ERR_NOT_REGULAR;
}

int ol_read_file_stat(const char *path, size_t max_bytes, char **out, size_t *out_len, struct stat *st_out)
{
    /* Look before opening: opening a device can have effects of its own.
     * The open itself is non-blocking (a FIFO that became one after the
     * stat opens at once instead of waiting for a writer) and fstat
     * decides on what was really opened. */
    struct stat st;
    if (stat(path, &st) != 0)
        return errno;
    if (S_ISDIR(st.st_mode))
        return EISDIR;
    int kind = ol_file_type_error(st.st_mode);
    if (kind)
        return kind;
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
    if (fd < 0)
        return errno;
    if (fstat(fd, &st) != 0) {
        int err = errno;
        close(fd);
        return err;
    }
    kind = S_ISDIR(st.st_mode) ? EISDIR : ol_file_type_error(st.st_mode);
    if (!kind && (uintmax_t)st.st_size > max_bytes)
        kind = EFBIG;
    if (kind) {
        close(fd);
        return kind;
    }
    int rc = ol_read_stream(fd, max_bytes, out, out_len);
    close(fd);
    if (rc == 0 && st_out)
        *st_out = st;
    return rc;
}

int ol_read_file(const char *path, size_t max_bytes, char **out, size_t *out_len)
{
    return ol_read_file_stat(path, max_bytes, out, out_len, NULL);
}

int ol_cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

size_t ol_lower_bound_u32(const uint32_t *items, size_t n, uint32_t key)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (items[mid] < key)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

size_t ol_lower_bound_u64(const uint64_t *items, size_t n, uint64_t key)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (items[mid] < key)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

size_t ol_edit_distance(const char *a, size_t a_len, const char *b, size_t b_len)
{
    if (a_len > 64 || b_len > 64)
        return SIZE_MAX;
    size_t row[65];
    for (size_t j = 0; j <= b_len; j++)
        row[j] = j;
    for (size_t i = 1; i <= a_len; i++) {
        size_t diag = row[0];
        row[0] = i;
        for (size_t j = 1; j <= b_len; j++) {
            size_t up = row[j];
            size_t best = diag + (a[i - 1] == b[j - 1] ? 0 : 1);
            if (up + 1 < best)
                best = up + 1;
            if (row[j - 1] + 1 < best)
                best = row[j - 1] + 1;
            row[j] = best;
            diag = up;
        }
    }
    return row[b_len];
}

const char *ol_closest_word(const char *word, size_t len, const char *const *names, size_t count)
{
    const char *best = NULL, *prefixed = NULL;
    size_t best_d = (len <= 4 ? 1 : len <= 12 ? 2 : 3) + 1, prefixes = 0;
    for (size_t k = 0; k < count; k++) {
        size_t d = ol_edit_distance(word, len, names[k], strlen(names[k]));
        if (d < best_d) {
            best_d = d;
            best = names[k];
        }
        if (len >= 3 && strncmp(names[k], word, len) == 0) {
            prefixes++;
            prefixed = names[k];
        }
    }
    return best ? best : prefixes == 1 ? prefixed : NULL;
}

uint64_t ol_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}
