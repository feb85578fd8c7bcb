/*
 * explain_snapshot.c - what a memory snapshot says was alive when the job
 * ran out of memory, by the user's source line that allocated it.
 *
 * A snapshot (torch.cuda.memory._snapshot(), pickled by _dump_snapshot) is
 * a dict: "segments", the allocator's reserve as cudaMalloc'd segments, each
 * with its "blocks" (size, state: active_allocated, active_pending_free or
 * inactive, and with _record_memory_history on, the "frames" of the stack
 * that allocated it, innermost first: filename, line, name); and
 * "device_traces", one ring buffer per device of the allocator's last
 * actions (alloc, free_requested, free_completed, segment_alloc,
 * segment_free, oom, snapshot), each with its address, size and frames.
 * PyTorch 1.13 pickled the list of segments alone, with each block's frames
 * under "history". Both are read.
 *
 * Alive at the failure: the blocks the snapshot shows allocated, taken back
 * to the moment of the trace's last "oom" entry when there is one (a block
 * allocated after it was not alive then; one freed after it was, with the
 * stack of its allocation where the trace has it). So a snapshot dumped by
 * an OOM observer, or after the error was caught, gives the memory of the
 * failure itself. The blocks are grouped by the innermost frame in the
 * user's own files (ol_oom_user_file), and each caller's line on the way
 * out is counted too, so that a loop's line can be credited with what the
 * calls under it allocated.
 *
 * The values came from a file anyone may have written: every access checks
 * kinds, and the walk is bounded (MAX_WORK frames and items visited in all)
 * since the memo can make one list appear many times, and so are the
 * blocks held at once (MAX_ALIVE); past a bound the figures cover what was
 * read and say so.
 */
#include <stdlib.h>
#include <string.h>

#include "explain.h"

#define MAX_WORK 20000000u
/* blocks kept in memory at once (about 40 bytes each with the index) */
#define MAX_ALIVE 2000000u
#define MAX_FRAMES_PER_BLOCK 256
#define MAX_LINES 200

typedef struct alive_block {
    int64_t addr, size;
    const ol_pval *frames;
} alive_block;

typedef struct walk {
    ol_mem_snapshot *s;
    uint64_t work;
    OL_VEC(alive_block) alive;
    /* addr -> index in alive (+1), open addressing */
    size_t *slots;
    size_t nslots;
} walk;

static bool spend(walk *w, uint64_t n)
{
    w->work += n;
    if (w->work > MAX_WORK) {
        w->s->partial = true;
        return false;
    }
    return true;
}

static size_t hash_addr(int64_t a)
{
    uint64_t x = (uint64_t)a;
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    return (size_t)x;
}

static void index_rebuild(walk *w, size_t want)
{
    free(w->slots);
    w->nslots = 64;
    while (w->nslots < want * 2)
        w->nslots *= 2;
    w->slots = ol_xcalloc(w->nslots, sizeof(size_t));
    for (size_t i = 0; i < w->alive.len; i++) {
        if (w->alive.items[i].size < 0)
            continue;
        size_t h = hash_addr(w->alive.items[i].addr) & (w->nslots - 1);
        while (w->slots[h])
            h = (h + 1) & (w->nslots - 1);
        w->slots[h] = i + 1;
    }
}

static alive_block *find_alive(walk *w, int64_t addr)
{
    if (!w->nslots)
        return NULL;
    size_t h = hash_addr(addr) & (w->nslots - 1);
    while (w->slots[h]) {
        alive_block *b = &w->alive.items[w->slots[h] - 1];
        if (b->addr == addr && b->size >= 0)
            return b;
        h = (h + 1) & (w->nslots - 1);
    }
    return NULL;
}

static void add_alive(walk *w, int64_t addr, int64_t size, const ol_pval *frames)
{
    if (w->alive.len >= MAX_ALIVE) {
        w->s->partial = true;
        return;
    }
    alive_block b = {addr, size, frames};
    ol_vec_push(&w->alive, b);
    if (w->alive.len * 2 >= w->nslots) {
        index_rebuild(w, w->alive.len);
        return;
    }
    size_t h = hash_addr(addr) & (w->nslots - 1);
    while (w->slots[h])
        h = (h + 1) & (w->nslots - 1);
    w->slots[h] = w->alive.len;
}

static const ol_pval *list_of(const ol_pval *v)
{
    return v && (v->kind == OL_PV_LIST || v->kind == OL_PV_TUPLE) ? v : NULL;
}

/* The frames of a block: "frames" (2.x) or its first "history" entry's (1.13). */
static const ol_pval *block_frames(const ol_pval *block)
{
    const ol_pval *f = list_of(ol_pval_get(block, "frames"));
    if (f)
        return f;
    const ol_pval *h = list_of(ol_pval_get(block, "history"));
    if (h && h->len && h->u.items[0]->kind == OL_PV_DICT)
        return list_of(ol_pval_get(h->u.items[0], "frames"));
    return NULL;
}

static const char *str_of(ol_mem_snapshot *s, const ol_pval *v)
{
    if (!v || v->kind != OL_PV_STR)
        return "";
    return ol_interned(&s->strings, ol_intern(&s->strings, v->u.s, v->len));
}

static void read_segments(walk *w, const ol_pval *segments, int device)
{
    ol_mem_snapshot *s = w->s;
    for (uint32_t i = 0; i < segments->len; i++) {
        const ol_pval *seg = segments->u.items[i];
        if (seg->kind != OL_PV_DICT || !spend(w, 1))
            continue;
        int64_t dev = ol_pval_int(ol_pval_get(seg, "device"), -1);
        if (device >= 0 && dev >= 0 && dev != device)
            continue;
        int64_t total = ol_pval_int(ol_pval_get(seg, "total_size"), 0);
        if (total > 0)
            s->reserved += total;
        const ol_pval *blocks = list_of(ol_pval_get(seg, "blocks"));
        if (!blocks)
            continue;
        int64_t addr = ol_pval_int(ol_pval_get(seg, "address"), 0);
        for (uint32_t k = 0; k < blocks->len; k++) {
            const ol_pval *b = blocks->u.items[k];
            if (b->kind != OL_PV_DICT || !spend(w, 1))
                continue;
            int64_t size = ol_pval_int(ol_pval_get(b, "size"), 0);
            if (size < 0)
                size = 0;
            int64_t baddr = ol_pval_int(ol_pval_get(b, "address"), addr);
            const ol_pval *state = ol_pval_get(b, "state");
            if (ol_pval_str_is(state, "active_allocated"))
                add_alive(w, baddr, size, block_frames(b));
            else if (ol_pval_str_is(state, "active_pending_free"))
                s->pending_free += size;
            else {
                s->inactive += size;
                if (size > s->largest_inactive)
                    s->largest_inactive = size;
            }
            addr = baddr + size;
        }
    }
}

/* Takes the alive set back from the snapshot to the trace's last OOM. */
static void rewind_to_oom(walk *w, const ol_pval *trace)
{
    ol_mem_snapshot *s = w->s;
    size_t oom = SIZE_MAX;
    for (uint32_t i = 0; i < trace->len; i++) {
        if (!spend(w, 1))
            return;
        const ol_pval *e = trace->u.items[i];
        if (ol_pval_str_is(ol_pval_get(e, "action"), "oom"))
            oom = i;
    }
    if (oom == SIZE_MAX)
        return;
    const ol_pval *e = trace->u.items[oom];
    s->at_oom = true;
    s->oom_requested = ol_pval_int(ol_pval_get(e, "size"), OL_BYTES_UNKNOWN);
    s->oom_device_free = ol_pval_int(ol_pval_get(e, "device_free"), ol_pval_int(ol_pval_get(e, "addr"), OL_BYTES_UNKNOWN));
    const ol_pval *frames = list_of(ol_pval_get(e, "frames"));
    for (uint32_t k = 0; frames && k < frames->len && k < MAX_FRAMES_PER_BLOCK; k++) {
        const ol_pval *f = frames->u.items[k];
        ol_oom_frame fr = {str_of(s, ol_pval_get(f, "filename")), (uint32_t)ol_pval_int(ol_pval_get(f, "line"), 0),
                           str_of(s, ol_pval_get(f, "name")), ""};
        ol_vec_push(&s->oom_frames, fr);
    }
    /* which addresses had their free requested at all: a free_completed
     * stands for the free only when no free_requested was recorded */
    walk requested = {0};
    requested.s = s;
    for (uint32_t i = 0; i < trace->len; i++) {
        const ol_pval *t = trace->u.items[i];
        if (ol_pval_str_is(ol_pval_get(t, "action"), "free_requested") && !find_alive(&requested, ol_pval_int(ol_pval_get(t, "addr"), 0)))
            add_alive(&requested, ol_pval_int(ol_pval_get(t, "addr"), 0), 0, NULL);
        if (!spend(w, 1))
            break;
    }
    for (size_t i = trace->len; i-- > oom + 1;) {
        if (!spend(w, 1))
            break;
        const ol_pval *t = trace->u.items[i];
        const ol_pval *action = ol_pval_get(t, "action");
        int64_t addr = ol_pval_int(ol_pval_get(t, "addr"), 0);
        if (ol_pval_str_is(action, "alloc")) {
            alive_block *b = find_alive(w, addr);
            if (b)
                b->size = -1; /* allocated after the failure */
        } else if (ol_pval_str_is(action, "free_requested") ||
                   (ol_pval_str_is(action, "free_completed") && !find_alive(&requested, addr))) {
            if (find_alive(w, addr))
                continue;
            /* alive at the failure: with the stack of its allocation, the
             * last alloc of that address before the OOM, where recorded */
            const ol_pval *fr = list_of(ol_pval_get(t, "frames"));
            for (size_t k = oom; k-- > 0;) {
                const ol_pval *a = trace->u.items[k];
                if (!spend(w, 1))
                    break;
                if (ol_pval_int(ol_pval_get(a, "addr"), -1) == addr && ol_pval_str_is(ol_pval_get(a, "action"), "alloc")) {
                    fr = list_of(ol_pval_get(a, "frames"));
                    break;
                }
            }
            add_alive(w, addr, ol_pval_int(ol_pval_get(t, "size"), 0), fr);
        }
    }
    free(requested.slots);
    ol_vec_free(&requested.alive);
}

/* ---- by line ------------------------------------------------------------------ */

typedef struct line_table {
    OL_VEC(ol_snap_line) lines;
    size_t *slots;
    size_t nslots;
} line_table;

static size_t line_hash(const char *file, uint32_t line, bool leaf)
{
    return hash_addr((int64_t)(uintptr_t)file ^ ((int64_t)line << 1) ^ (int64_t)leaf);
}

static void line_add(line_table *t, const char *file, uint32_t line, const char *func, int64_t bytes, bool leaf)
{
    if (t->lines.len * 2 >= t->nslots) {
        free(t->slots);
        t->nslots = t->nslots ? t->nslots * 2 : 64;
        t->slots = ol_xcalloc(t->nslots, sizeof(size_t));
        for (size_t i = 0; i < t->lines.len; i++) {
            const ol_snap_line *l = &t->lines.items[i];
            size_t h = line_hash(l->file, l->line, l->leaf) & (t->nslots - 1);
            while (t->slots[h])
                h = (h + 1) & (t->nslots - 1);
            t->slots[h] = i + 1;
        }
    }
    size_t h = line_hash(file, line, leaf) & (t->nslots - 1);
    while (t->slots[h]) {
        ol_snap_line *l = &t->lines.items[t->slots[h] - 1];
        if (l->file == file && l->line == line && l->leaf == leaf) {
            l->bytes += bytes;
            l->blocks++;
            return;
        }
        h = (h + 1) & (t->nslots - 1);
    }
    ol_snap_line nl = {file, line, func, bytes, 1, leaf};
    ol_vec_push(&t->lines, nl);
    t->slots[h] = t->lines.len;
}

static int by_bytes(const void *a, const void *b)
{
    const ol_snap_line *x = a, *y = b;
    if (x->leaf != y->leaf)
        return x->leaf ? -1 : 1;
    if (x->bytes != y->bytes)
        return x->bytes > y->bytes ? -1 : 1;
    if (x->line != y->line)
        return x->line < y->line ? -1 : 1;
    return strcmp(x->file, y->file);
}

static void attribute(walk *w)
{
    ol_mem_snapshot *s = w->s;
    line_table t = {0};
    for (size_t i = 0; i < w->alive.len; i++) {
        const alive_block *b = &w->alive.items[i];
        if (b->size < 0)
            continue;
        s->alive += b->size;
        s->alive_blocks++;
        bool leaf_found = false;
        /* distinct user lines on the way out, so a recursion counts once */
        const char *seen_file[16];
        uint32_t seen_line[16];
        size_t seen = 0;
        const ol_pval *frames = b->frames;
        for (uint32_t k = 0; frames && k < frames->len && k < MAX_FRAMES_PER_BLOCK; k++) {
            if (!spend(w, 1))
                break;
            const ol_pval *f = frames->u.items[k];
            if (f->kind != OL_PV_DICT)
                continue;
            const ol_pval *fn = ol_pval_get(f, "filename");
            if (!fn || fn->kind != OL_PV_STR)
                continue;
            const char *file = str_of(s, fn);
            if (!ol_oom_user_file(file))
                continue;
            uint32_t line = (uint32_t)ol_pval_int(ol_pval_get(f, "line"), 0);
            bool dup = false;
            for (size_t d = 0; d < seen; d++)
                dup |= seen_file[d] == file && seen_line[d] == line;
            if (dup)
                continue;
            if (seen < 16) {
                seen_file[seen] = file;
                seen_line[seen] = line;
                seen++;
            }
            line_add(&t, file, line, str_of(s, ol_pval_get(f, "name")), b->size, !leaf_found);
            leaf_found = true;
        }
        if (!leaf_found)
            s->unattributed += b->size;
        if (s->partial)
            break;
    }
    ol_sort(t.lines.items, t.lines.len, sizeof(ol_snap_line), by_bytes);
    /* the largest of each kind */
    size_t leaves = 0, callers = 0;
    for (size_t i = 0; i < t.lines.len; i++) {
        ol_snap_line *l = &t.lines.items[i];
        if (l->leaf ? leaves++ < MAX_LINES : callers++ < MAX_LINES)
            ol_vec_push(&s->lines, *l);
    }
    ol_vec_free(&t.lines);
    free(t.slots);
}

bool ol_mem_snapshot_read(ol_mem_snapshot *s, const ol_pval *root, int device, ol_buf *err)
{
    memset(s, 0, sizeof(*s));
    ol_interner_init(&s->strings);
    s->device = device;
    s->oom_requested = s->oom_device_free = OL_BYTES_UNKNOWN;
    const ol_pval *segments = NULL, *traces = NULL;
    if (root && root->kind == OL_PV_DICT) {
        segments = list_of(ol_pval_get(root, "segments"));
        traces = list_of(ol_pval_get(root, "device_traces"));
        s->format = traces ? "segments+device_traces" : "segments";
    } else if (root && root->kind == OL_PV_LIST) {
        segments = root;
        s->format = "1.13 list";
    }
    if (!segments) {
        ol_buf_puts(err, root && root->kind == OL_PV_DICT
                             ? "not a memory snapshot: a dict without a \"segments\" list"
                             : "not a memory snapshot: it holds neither a dict with \"segments\" nor a list of segments");
        ol_interner_free(&s->strings);
        return false;
    }
    walk w = {0};
    w.s = s;
    read_segments(&w, segments, device);
    if (device >= 0 && s->reserved == 0 && w.alive.len == 0) {
        /* nothing on that device: the snapshot came from another one's process */
        s->device = -1;
        read_segments(&w, segments, -1);
    }
    if (traces) {
        for (uint32_t d = 0; d < traces->len; d++) {
            const ol_pval *trace = list_of(traces->u.items[d]);
            if (!trace || (s->device >= 0 && traces->len > 1 && (int)d != s->device))
                continue;
            rewind_to_oom(&w, trace);
        }
    }
    attribute(&w);
    free(w.slots);
    ol_vec_free(&w.alive);
    return true;
}

void ol_mem_snapshot_free(ol_mem_snapshot *s)
{
    ol_vec_free(&s->lines);
    ol_vec_free(&s->oom_frames);
    ol_interner_free(&s->strings);
}
