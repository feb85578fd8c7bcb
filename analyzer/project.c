/*
 * project.c - the run's files, module resolution, and the thread-safe store
 * of their summaries. See project.h for the resolution rule.
 */
#include "project.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

typedef struct pfile {
    char *path;             /* absolute, normalized */
    size_t len;
    size_t dir_len;         /* path[0..dir_len) is its directory ("" for "/") */
    char *top;              /* the directory above its top-level package, or NULL */
    ol_file_summary *summary;
    atomic_bool claimed;
    bool evicted;           /* its summary was dropped for the budget: built again when asked for */
    size_t newer, older;    /* the list of held summaries, most recently used first (NONE ends it) */
    ol_file_saves *saves;   /* its torch.save calls, kept when the summary is dropped */
    ol_sum_import *imports; /* its module-level imports, kept as well: the callers index follows */
    size_t import_count;    /* the names a package re-exports through them (one block, strings after) */
    bool saves_known;       /* a summary was published since it was added or forgotten */
    bool pinned;            /* built again after it was dropped: kept for the rest of the run */
    bool rebuilding;        /* a thread builds its dropped summary again (ol_project_acquire) */
    atomic_int calls_save;  /* its text has `save(`: 0 not read yet, 1 no, 2 yes */
} pfile;

/* The callers index: each call record (summary.h) of every file, under
 * each (file, name) its dotted name reaches, first through the importing
 * file's resolution and then through re-exports. A slot holds one such key
 * and the first of its entries; entries chain through next (index + 1). */
typedef struct caller_entry {
    size_t caller;          /* the file that makes the call */
    size_t call;            /* the record's index in that file's saves */
    size_t next;
} caller_entry;

typedef struct caller_slot {
    const char *rest;       /* NULL: empty */
    size_t file;
    size_t head, tail;
} caller_slot;

#define NONE ((size_t)-1)

struct ol_project {
    pthread_mutex_t lock;
    pthread_cond_t published;
    pfile *files;
    size_t count, cap;
    size_t *slots;          /* open addressing over paths: index + 1, 0 = empty */
    size_t slot_count;
    char *root;             /* the common directory of all files */
    char **names;           /* every directory name and file stem in the paths: */
    size_t name_slots;      /* a module name starts with one of them (open addressing) */
    ol_arena name_arena;
    ol_project_processor process;
    void *job;
    size_t budget;          /* bytes of summaries held at most; 0: no bound */
    size_t held, most_held; /* bytes of summaries held now, and the most at once */
    size_t newest, oldest;  /* ends of the list of held summaries */
    size_t evictions, rebuilds;
    size_t pinned_bytes;    /* summaries kept out of the budget (pfile.pinned) */
    size_t known;           /* files whose saves are known (pfile.saves_known) */
    bool callers_stale;     /* the callers index must be built (again) before it is read */
    OL_VEC(caller_entry) callers;
    caller_slot *caller_slots;
    size_t caller_slot_count, caller_keys;
    ol_arena caller_arena;  /* the names of the index's keys */
};

/* ---- paths ----------------------------------------------------------------------- */

/* Makes path absolute and removes `.`, `..` and repeated slashes. */
static char *normalize(const char *path)
{
    ol_buf b = {0};
    if (path[0] != '/') {
        char cwd[PATH_MAX];
        if (getcwd(cwd, sizeof(cwd)))
            ol_buf_puts(&b, cwd);
    }
    ol_buf_putc(&b, '/');
    ol_buf_puts(&b, path);
    char *in = ol_buf_take(&b);
    size_t len = strlen(in);
    char *out = ol_xmalloc(len + 2);
    size_t o = 0;
    for (size_t i = 0; i < len;) {
        while (i < len && in[i] == '/')
            i++;
        size_t start = i;
        while (i < len && in[i] != '/')
            i++;
        size_t seg = i - start;
        if (seg == 0 || (seg == 1 && in[start] == '.'))
            continue;
        if (seg == 2 && in[start] == '.' && in[start + 1] == '.') {
            while (o > 0 && out[o - 1] != '/')
                o--;
            if (o > 0)
                o--;
            continue;
        }
        out[o++] = '/';
        memcpy(out + o, in + start, seg);
        o += seg;
    }
    if (o == 0)
        out[o++] = '/';
    out[o] = '\0';
    free(in);
    return out;
}

static char *canonical(const char *path)
{
    char *real = realpath(path, NULL);
    if (real) {
        char *n = normalize(real);
        free(real);
        return n;
    }
    return normalize(path);
}

static size_t dir_len_of(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash ? (size_t)(slash - path) : 0;
}

static uint64_t hash_str(const char *s, size_t n)
{
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++)
        h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
    return h;
}

static size_t lookup_n(const ol_project *p, const char *path, size_t n)
{
    if (!p->slot_count)
        return (size_t)-1;
    size_t mask = p->slot_count - 1;
    for (size_t i = (size_t)hash_str(path, n) & mask;; i = (i + 1) & mask) {
        size_t v = p->slots[i];
        if (v == 0)
            return (size_t)-1;
        const pfile *f = &p->files[v - 1];
        if (f->len == n && memcmp(f->path, path, n) == 0)
            return v - 1;
    }
}

static void rehash(ol_project *p)
{
    free(p->slots);
    p->slot_count = 64;
    while (p->slot_count < p->count * 2 + 2)
        p->slot_count *= 2;
    p->slots = ol_xcalloc(p->slot_count, sizeof(size_t));
    size_t mask = p->slot_count - 1;
    for (size_t k = 0; k < p->count; k++) {
        const char *f = p->files[k].path;
        size_t i = (size_t)hash_str(f, strlen(f)) & mask;
        while (p->slots[i])
            i = (i + 1) & mask;
        p->slots[i] = k + 1;
    }
}

/* ---- the project ----------------------------------------------------------------- */

ol_project *ol_project_new(void)
{
    ol_project *p = ol_xcalloc(1, sizeof(*p));
    p->newest = p->oldest = NONE;
    p->callers_stale = true;
    pthread_mutex_init(&p->lock, NULL);
    pthread_cond_init(&p->published, NULL);
    return p;
}

void ol_project_free(ol_project *p)
{
    if (!p)
        return;
    for (size_t i = 0; i < p->count; i++) {
        free(p->files[i].path);
        free(p->files[i].top);
        if (p->files[i].summary)
            ol_file_summary_release(p->files[i].summary);
        ol_file_saves_release(p->files[i].saves);
        free(p->files[i].imports);
    }
    free(p->files);
    ol_vec_free(&p->callers);
    free(p->caller_slots);
    ol_arena_free(&p->caller_arena);
    free(p->slots);
    free(p->root);
    free(p->names);
    ol_arena_free(&p->name_arena);
    pthread_cond_destroy(&p->published);
    pthread_mutex_destroy(&p->lock);
    free(p);
}

size_t ol_project_count(const ol_project *p)
{
    return p->count;
}

const char *ol_project_path(const ol_project *p, size_t file)
{
    return file < p->count ? p->files[file].path : NULL;
}

size_t ol_project_find(const ol_project *p, const char *path)
{
    char *c = canonical(path);
    size_t i = lookup_n(p, c, strlen(c));
    free(c);
    return i;
}

size_t ol_project_add(ol_project *p, const char *path)
{
    char *c = canonical(path);
    size_t found = lookup_n(p, c, strlen(c));
    if (found != (size_t)-1) {
        free(c);
        return found;
    }
    if (p->count == p->cap) {
        p->cap = p->cap ? p->cap * 2 : 16;
        p->files = ol_xrealloc(p->files, p->cap * sizeof(pfile));
    }
    pfile *f = &p->files[p->count++];
    memset(f, 0, sizeof(*f));
    f->path = c;
    f->len = strlen(c);
    f->dir_len = dir_len_of(c);
    f->newer = f->older = NONE;
    atomic_init(&f->claimed, false);
    atomic_init(&f->calls_save, 0);
    p->callers_stale = true; /* a name may resolve to the new file */
    if (p->count * 2 + 2 > p->slot_count)
        rehash(p);
    else {
        size_t mask = p->slot_count - 1;
        size_t i = (size_t)hash_str(c, strlen(c)) & mask;
        while (p->slots[i])
            i = (i + 1) & mask;
        p->slots[i] = p->count;
    }
    return p->count - 1;
}

/* Is `<dir>/__init__.py` one of the project's files? */
static bool has_init(const ol_project *p, const char *dir, size_t dir_len)
{
    ol_buf b = {0};
    ol_buf_add(&b, dir, dir_len);
    ol_buf_puts(&b, "/__init__.py");
    bool found = lookup_n(p, b.data, b.len) != (size_t)-1;
    ol_buf_free(&b);
    return found;
}

static bool name_known(const ol_project *p, const char *s, size_t n)
{
    if (!p->name_slots)
        return false;
    size_t mask = p->name_slots - 1;
    for (size_t i = (size_t)hash_str(s, n) & mask; p->names[i]; i = (i + 1) & mask)
        if (strlen(p->names[i]) == n && memcmp(p->names[i], s, n) == 0)
            return true;
    return false;
}

static void add_name(ol_project *p, const char *s, size_t n)
{
    if (n == 0 || name_known(p, s, n))
        return;
    size_t mask = p->name_slots - 1;
    size_t i = (size_t)hash_str(s, n) & mask;
    while (p->names[i])
        i = (i + 1) & mask;
    p->names[i] = ol_arena_strndup(&p->name_arena, s, n);
}

/* Every directory name and file stem of the project's paths: a dotted name
 * whose first part is none of them names no file of the project, whatever
 * the base (most names: torch, numpy, os, ...). */
static void index_names(ol_project *p)
{
    free(p->names);
    ol_arena_free(&p->name_arena);
    size_t parts = 0;
    for (size_t i = 0; i < p->count; i++)
        for (const char *c = p->files[i].path; *c; c++)
            parts += *c == '/';
    p->name_slots = 64;
    while (p->name_slots < parts * 2 + 2)
        p->name_slots *= 2;
    p->names = ol_xcalloc(p->name_slots, sizeof(char *));
    for (size_t i = 0; i < p->count; i++) {
        const char *path = p->files[i].path;
        for (const char *c = path; *c;) {
            while (*c == '/')
                c++;
            const char *end = c;
            while (*end && *end != '/')
                end++;
            size_t n = (size_t)(end - c);
            if (!*end && n > 3 && memcmp(end - 3, ".py", 3) == 0)
                n -= 3;
            add_name(p, c, n);
            c = end;
        }
    }
}

void ol_project_index(ol_project *p)
{
    p->callers_stale = true;
    index_names(p);
    free(p->root);
    p->root = NULL;
    size_t root_len = 0;
    for (size_t i = 0; i < p->count; i++) {
        pfile *f = &p->files[i];
        /* the common directory: shorten to the longest shared prefix that ends at a '/' */
        if (!p->root) {
            p->root = ol_xstrndup(f->path, f->dir_len);
            root_len = f->dir_len;
        } else {
            size_t k = 0;
            while (k < root_len && k < f->dir_len && p->root[k] == f->path[k])
                k++;
            if (!(k == root_len && (f->dir_len == k || f->path[k] == '/'))) {
                while (k > 0 && p->root[k] != '/')
                    k--;
                root_len = k;
                p->root[k] = '\0';
            }
        }
        /* the top-level package: walk up while the directory has an __init__.py */
        free(f->top);
        f->top = NULL;
        size_t d = f->dir_len;
        bool in_package = false;
        while (d > 0 && has_init(p, f->path, d)) {
            in_package = true;
            while (d > 0 && f->path[d - 1] != '/')
                d--;
            d = d > 0 ? d - 1 : 0;
        }
        if (in_package)
            f->top = ol_xstrndup(f->path, d);
    }
}

void ol_project_set_processor(ol_project *p, ol_project_processor fn, void *job)
{
    p->process = fn;
    p->job = job;
}

/* ---- resolution ------------------------------------------------------------------ */

#define MAX_PARTS 32

/* Tries `<base>/<parts[0..k)>.py` and `.../__init__.py` for k from the
 * longest down to min_k; on a match sets *file and *consumed. */
static bool try_base(const ol_project *p, const char *base, size_t base_len, const char *const *parts,
                     const size_t *lens, size_t nparts, size_t min_k, size_t *file, size_t *consumed)
{
    ol_buf b = {0};
    bool found = false;
    for (size_t k = nparts + 1; k-- > min_k && !found;) {
        ol_buf_clear(&b);
        ol_buf_add(&b, base, base_len);
        for (size_t i = 0; i < k; i++) {
            ol_buf_putc(&b, '/');
            ol_buf_add(&b, parts[i], lens[i]);
        }
        size_t stem = b.len;
        size_t hit = (size_t)-1;
        if (k > 0) {
            ol_buf_puts(&b, ".py");
            hit = lookup_n(p, b.data, b.len);
            b.len = stem;
        }
        if (hit == (size_t)-1) {
            ol_buf_puts(&b, "/__init__.py");
            hit = lookup_n(p, b.data, b.len);
        }
        if (hit != (size_t)-1) {
            *file = hit;
            *consumed = k;
            found = true;
        }
    }
    ol_buf_free(&b);
    return found;
}

bool ol_project_resolve(const ol_project *p, size_t from, const char *qual, size_t *file, const char **rest)
{
    if (from >= p->count || !qual)
        return false;
    size_t level = 0;
    while (qual[level] == '.')
        level++;
    const char *parts[MAX_PARTS];
    size_t lens[MAX_PARTS];
    size_t nparts = 0;
    for (const char *s = qual + level; *s && nparts < MAX_PARTS;) {
        const char *dot = strchr(s, '.');
        size_t n = dot ? (size_t)(dot - s) : strlen(s);
        if (n == 0)
            return false;
        parts[nparts] = s;
        lens[nparts++] = n;
        s += n + (dot ? 1 : 0);
        if (!dot)
            break;
    }
    /* relative names may start with an attribute of the package's __init__.py */
    if (level == 0 && nparts > 0 && !name_known(p, parts[0], lens[0]))
        return false;
    const pfile *f = &p->files[from];
    size_t consumed = 0;
    bool found = false;
    if (level > 0) {
        size_t d = f->dir_len;
        for (size_t up = 1; up < level; up++) {
            while (d > 0 && f->path[d - 1] != '/')
                d--;
            if (d == 0)
                return false;
            d--;
        }
        found = try_base(p, f->path, d, parts, lens, nparts, 0, file, &consumed);
    } else {
        if (nparts == 0)
            return false;
        /* in a package, an absolute import starts at the package's root
         * (Python 3 has no implicit relative imports): `import pkg.mod` in
         * pkg/other.py is pkg/mod.py even when pkg/pkg.py exists; a
         * script's siblings are found from its own directory */
        if (f->top)
            found = try_base(p, f->top, strlen(f->top), parts, lens, nparts, 1, file, &consumed);
        if (!found)
            found = try_base(p, f->path, f->dir_len, parts, lens, nparts, 1, file, &consumed);
        if (!found && p->root) {
            /* the run's common directory and every directory above it: only a
             * name spelling a run file's path below one of them matches */
            size_t d = strlen(p->root);
            for (;;) {
                found = try_base(p, p->root, d, parts, lens, nparts, 1, file, &consumed);
                if (found || d == 0)
                    break;
                while (d > 0 && p->root[d - 1] != '/')
                    d--;
                d = d > 0 ? d - 1 : 0;
            }
        }
    }
    if (!found)
        return false;
    if (consumed == 0) {
        *rest = qual + level;
    } else {
        const char *end = parts[consumed - 1] + lens[consumed - 1];
        *rest = *end == '.' ? end + 1 : end;
    }
    return true;
}

/* ---- claims and summaries ------------------------------------------------------------ */

bool ol_project_claim(ol_project *p, size_t file)
{
    return file < p->count && !atomic_exchange(&p->files[file].claimed, true);
}

bool ol_project_claimed(ol_project *p, size_t file)
{
    return file < p->count && atomic_load(&p->files[file].claimed);
}

/* ---- the budget ------------------------------------------------------------------- */

void ol_project_set_budget(ol_project *p, size_t bytes)
{
    p->budget = bytes;
}

void ol_project_stats(ol_project *p, ol_project_usage *u)
{
    pthread_mutex_lock(&p->lock);
    u->most_held = p->most_held;
    u->evictions = p->evictions;
    u->rebuilds = p->rebuilds;
    pthread_mutex_unlock(&p->lock);
}

/* The list of held summaries, under the lock: the newest is the one asked
 * for last; the budget drops the oldest. Pinned summaries are not in it. */
static void unlink_held(ol_project *p, size_t i)
{
    pfile *f = &p->files[i];
    if (f->newer != NONE)
        p->files[f->newer].older = f->older;
    else if (p->newest == i)
        p->newest = f->older;
    if (f->older != NONE)
        p->files[f->older].newer = f->newer;
    else if (p->oldest == i)
        p->oldest = f->newer;
    f->newer = f->older = NONE;
}

static void link_newest(ol_project *p, size_t i)
{
    pfile *f = &p->files[i];
    f->newer = NONE;
    f->older = p->newest;
    if (p->newest != NONE)
        p->files[p->newest].newer = i;
    p->newest = i;
    if (p->oldest == NONE)
        p->oldest = i;
}

static void touch(ol_project *p, size_t i)
{
    if (p->newest == i || p->files[i].pinned)
        return;
    unlink_held(p, i);
    link_newest(p, i);
}

/* Takes file i's summary out of the store (the lock is held). A reader
 * holding a reference keeps it alive until it lets go. */
static void drop(ol_project *p, size_t i, bool evicted)
{
    pfile *f = &p->files[i];
    if (!f->summary)
        return;
    if (f->pinned) {
        p->pinned_bytes -= f->summary->bytes;
        f->pinned = false;
    } else {
        unlink_held(p, i);
        p->held -= f->summary->bytes;
    }
    ol_file_summary_release(f->summary);
    f->summary = NULL;
    f->evicted = evicted;
    if (evicted)
        p->evictions++;
}

/* Drops the summaries asked for least recently until the held ones fit the
 * budget, sparing `keep` (just published: its reader is about to ask). */
static void fit_budget(ol_project *p, size_t keep)
{
    while (p->budget && p->held > p->budget && p->oldest != NONE && p->oldest != keep)
        drop(p, p->oldest, true);
}

/* Keeps a copy of a summary's imports with the file (the lock is held). */
static void keep_imports(pfile *f, const ol_file_summary *s)
{
    free(f->imports);
    f->imports = NULL;
    f->import_count = 0;
    size_t bytes = s->import_count * sizeof(ol_sum_import);
    for (size_t i = 0; i < s->import_count; i++)
        bytes += strlen(s->imports[i].bound) + strlen(s->imports[i].qual) + 2;
    if (!s->import_count)
        return;
    f->imports = ol_xmalloc(bytes);
    char *text = (char *)(f->imports + s->import_count);
    for (size_t i = 0; i < s->import_count; i++) {
        const char *parts[2] = {s->imports[i].bound, s->imports[i].qual};
        const char *copies[2];
        for (int k = 0; k < 2; k++) {
            size_t n = strlen(parts[k]) + 1;
            memcpy(text, parts[k], n);
            copies[k] = text;
            text += n;
        }
        f->imports[i].bound = copies[0];
        f->imports[i].qual = copies[1];
    }
    f->import_count = s->import_count;
}

static void put(ol_project *p, size_t file, ol_file_summary *s, bool replace)
{
    if (file >= p->count || !s)
        return;
    pthread_mutex_lock(&p->lock);
    pfile *f = &p->files[file];
    if (!f->summary || replace) {
        /* a summary built again because it was dropped, while its file is
         * still imported: the budget cannot keep it between its readers
         * (larger than the budget, or needed far apart), so it stays,
         * and a file is summarized at most twice however many import it */
        bool again = f->evicted && !replace;
        if (f->evicted)
            p->rebuilds++;
        drop(p, file, false);
        ol_file_summary_retain(s);
        f->summary = s;
        f->evicted = false;
        if (!f->saves_known || replace) {
            ol_file_saves_release(f->saves);
            f->saves = s->saves;
            if (f->saves)
                ol_file_saves_retain(f->saves);
            keep_imports(f, s);
            if (!f->saves_known)
                p->known++;
            f->saves_known = true;
            p->callers_stale = true;
        }
        if (again) {
            f->pinned = true;
            p->pinned_bytes += s->bytes;
        } else {
            p->held += s->bytes;
            link_newest(p, file);
        }
        if (p->held + p->pinned_bytes > p->most_held)
            p->most_held = p->held + p->pinned_bytes;
        fit_budget(p, file);
        pthread_cond_broadcast(&p->published);
    }
    pthread_mutex_unlock(&p->lock);
}

void ol_project_publish(ol_project *p, size_t file, ol_file_summary *s)
{
    put(p, file, s, false);
}

void ol_project_replace(ol_project *p, size_t file, ol_file_summary *s)
{
    put(p, file, s, true);
}

void ol_project_publish_missing(ol_project *p, size_t file)
{
    if (file >= p->count)
        return;
    pthread_mutex_lock(&p->lock);
    bool missing = p->files[file].summary == NULL && !p->files[file].evicted;
    pthread_mutex_unlock(&p->lock);
    if (missing) {
        ol_file_summary *empty = ol_file_summary_empty();
        put(p, file, empty, false);
        ol_file_summary_release(empty);
    }
}

void ol_project_forget(ol_project *p, size_t file)
{
    if (file >= p->count)
        return;
    pthread_mutex_lock(&p->lock);
    drop(p, file, false);
    pfile *f = &p->files[file];
    ol_file_saves_release(f->saves);
    f->saves = NULL;
    free(f->imports);
    f->imports = NULL;
    f->import_count = 0;
    if (f->saves_known)
        p->known--;
    f->saves_known = false;
    p->callers_stale = true;
    atomic_store(&f->calls_save, 0);
    atomic_store(&f->claimed, false);
    pthread_mutex_unlock(&p->lock);
}

bool ol_project_evicted(ol_project *p, size_t file)
{
    if (file >= p->count)
        return false;
    pthread_mutex_lock(&p->lock);
    bool evicted = p->files[file].evicted;
    pthread_mutex_unlock(&p->lock);
    return evicted;
}

/* How many times an acquire has a summary built before it gives up. Once
 * dropped, a summary is built again and pinned (put), so the second try
 * finds it: only a file whose summary cannot be built at all (the
 * supervisor set it aside) reaches the last. */
#define MAX_TRIES 3

ol_file_summary *ol_project_acquire(ol_project *p, size_t file, void *worker)
{
    if (file >= p->count)
        return NULL;
    pfile *f = &p->files[file];
    ol_file_summary *s;
    pthread_mutex_lock(&p->lock);
    for (int tries = 0;; tries++) {
        /* a dropped summary that another thread builds again: it is
         * published (and pinned) before that thread can wait for anyone,
         * so waiting for it ends, and the file is parsed once more, not
         * once per thread that wants it */
        while (!f->summary && f->rebuilding)
            pthread_cond_wait(&p->published, &p->lock);
        s = f->summary;
        if (s || !p->process || tries == MAX_TRIES)
            break;
        bool rebuild = f->evicted;
        if (rebuild)
            f->rebuilding = true;
        pthread_mutex_unlock(&p->lock);
        p->process(p->job, worker, file);
        pthread_mutex_lock(&p->lock);
        if (rebuild) {
            f->rebuilding = false;
            pthread_cond_broadcast(&p->published);
        }
        while (!f->summary && !f->evicted)
            pthread_cond_wait(&p->published, &p->lock);
    }
    if (s) {
        ol_file_summary_retain(s);
        touch(p, file);
    }
    pthread_mutex_unlock(&p->lock);
    return s; /* NULL: what it does stays unknown, as for a file outside the run */
}

/* ---- saves across the project ------------------------------------------------------- */

/* Files larger than this are not parsed (source.c), so their saves are
 * never known either. */
#define SCAN_MAX_BYTES ((off_t)64 << 20)

static bool contains(const char *hay, size_t n, const char *needle, size_t nlen)
{
    const char *end = hay + n;
    for (const char *p = hay; (size_t)(end - p) >= nlen; p++) {
        p = memchr(p, needle[0], (size_t)(end - p) - nlen + 1);
        if (!p)
            return false;
        if (memcmp(p, needle, nlen) == 0)
            return true;
    }
    return false;
}

/* Does the regular file at path contain needle? Read in chunks, never
 * waiting on a FIFO or a device. */
static bool file_contains(const char *path, const char *needle)
{
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
    if (fd < 0)
        return false;
    struct stat st;
    bool found = false;
    size_t nlen = strlen(needle);
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size <= SCAN_MAX_BYTES && nlen > 0 && nlen < 64) {
        char buf[65536 + 64];
        size_t keep = 0;
        for (;;) {
            ssize_t n = read(fd, buf + keep, sizeof(buf) - 64);
            if (n < 0 && errno == EINTR)
                continue;
            if (n <= 0)
                break;
            size_t have = keep + (size_t)n;
            if (contains(buf, have, needle, nlen)) {
                found = true;
                break;
            }
            keep = have < nlen - 1 ? have : nlen - 1;
            memmove(buf, buf + have - keep, keep);
        }
    }
    close(fd);
    return found;
}

static bool calls_save(ol_project *p, size_t i)
{
    pfile *f = &p->files[i];
    int known = atomic_load(&f->calls_save);
    if (known == 0) {
        known = file_contains(f->path, "save(") ? 2 : 1;
        atomic_store(&f->calls_save, known);
    }
    return known == 2;
}

/* Summarizes every other file whose saves (and calls) are not known yet, or
 * only those that call a save when only_savers (which also reads each
 * file's text once for that): the records the visitors below read are made
 * with a file's summary. Once every file's are known, which the first
 * question of a run sees to, nothing is left to summarize. */
static void make_saves_known(ol_project *p, size_t self, void *worker, bool only_savers)
{
    pthread_mutex_lock(&p->lock);
    bool all = p->known == p->count;
    pthread_mutex_unlock(&p->lock);
    if (all && !only_savers)
        return;
    for (size_t i = 0; i < p->count; i++) {
        if (i == self || (only_savers && !calls_save(p, i)) || all)
            continue;
        pthread_mutex_lock(&p->lock);
        bool known = p->files[i].saves_known;
        pthread_mutex_unlock(&p->lock);
        if (!known) {
            ol_file_summary *s = ol_project_acquire(p, i, worker);
            if (s)
                ol_file_summary_release(s);
        }
    }
}

void ol_project_visit_saves(ol_project *p, size_t self, void *worker, ol_project_save_visitor fn, void *ctx)
{
    size_t count = p->count;
    make_saves_known(p, self, worker, true);
    pthread_mutex_lock(&p->lock);
    for (size_t i = 0; i < count; i++) {
        const ol_file_saves *sv = p->files[i].saves;
        if (i == self || !sv || atomic_load(&p->files[i].calls_save) != 2)
            continue;
        for (size_t k = 0; k < sv->count; k++)
            fn(ctx, &sv->items[k]);
    }
    pthread_mutex_unlock(&p->lock);
}

/* ---- the callers index ----------------------------------------------------------------
 *
 * "Which calls of the other files run function `rest` of file F?" is asked
 * for every function whose grad mode its callers decide, so the answer
 * cannot be a walk over every call of the run: each record is resolved
 * once, when the index is built, and filed under every (file, name) it
 * reaches. The index is built under the lock the first time it is read
 * after a file's records or the run's files changed (in a lint run: once,
 * when every file has been summarized), from the project's own copies of
 * the records and imports, so building it summarizes nothing. */

/* How many files a name is followed through: the importing file's
 * resolution, then re-exports (`from .resnet import ResNet` in a package's
 * __init__.py, itself imported by another package's). */
#define MAX_HOPS 4

static uint64_t caller_hash(size_t file, const char *rest)
{
    return hash_str(rest, strlen(rest)) ^ ((uint64_t)file * 0x9E3779B97F4A7C15ull);
}

static caller_slot *caller_slot_of(ol_project *p, size_t file, const char *rest)
{
    size_t mask = p->caller_slot_count - 1;
    for (size_t i = (size_t)caller_hash(file, rest) & mask;; i = (i + 1) & mask) {
        caller_slot *slot = &p->caller_slots[i];
        if (!slot->rest || (slot->file == file && strcmp(slot->rest, rest) == 0))
            return slot;
    }
}

static void grow_caller_slots(ol_project *p)
{
    caller_slot *old = p->caller_slots;
    size_t old_count = p->caller_slot_count;
    p->caller_slot_count = old_count ? old_count * 2 : 256;
    p->caller_slots = ol_xcalloc(p->caller_slot_count, sizeof(caller_slot));
    for (size_t i = 0; i < old_count; i++)
        if (old[i].rest)
            *caller_slot_of(p, old[i].file, old[i].rest) = old[i];
    free(old);
}

static void add_caller(ol_project *p, size_t file, const char *rest, size_t caller, size_t call)
{
    if ((p->caller_keys + 1) * 2 > p->caller_slot_count)
        grow_caller_slots(p);
    caller_slot *slot = caller_slot_of(p, file, rest);
    if (!slot->rest) {
        slot->rest = ol_arena_strndup(&p->caller_arena, rest, strlen(rest));
        slot->file = file;
        p->caller_keys++;
    }
    caller_entry e = {caller, call, 0};
    ol_vec_push(&p->callers, e);
    size_t at = p->callers.len; /* index + 1 */
    if (slot->tail)
        p->callers.items[slot->tail - 1].next = at;
    else
        slot->head = at;
    slot->tail = at;
}

/* The import of file f that binds the name rest[0..n), as the file's
 * summary would answer (ol_summary_import: the same search over the same
 * sorted array). */
static const ol_sum_import *file_import(const pfile *f, const char *rest, size_t n)
{
    size_t lo = 0, hi = f->import_count;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        const char *b = f->imports[mid].bound;
        int c = strncmp(b, rest, n);
        if (c == 0 && b[n] != '\0')
            c = 1;
        if (c == 0)
            return &f->imports[mid];
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

/* Files call record `call` of file `caller` under each (file, name) its
 * dotted name reaches; a file reached twice counts where it is reached
 * first (there the name either is what the call runs or is not). */
static void index_call(ol_project *p, size_t caller, size_t call, const char *qual)
{
    size_t seen[MAX_HOPS];
    size_t nseen = 0;
    size_t from = caller;
    char *owned = NULL;
    for (int hop = 0; hop < MAX_HOPS; hop++) {
        size_t file;
        const char *rest;
        if (!ol_project_resolve(p, from, qual, &file, &rest))
            break;
        bool again = false;
        for (size_t k = 0; k < nseen; k++)
            again = again || seen[k] == file;
        if (!again) {
            seen[nseen++] = file;
            add_caller(p, file, rest, caller, call);
        }
        if (!*rest)
            break;
        const char *dot = strchr(rest, '.');
        const ol_sum_import *imp = file_import(&p->files[file], rest, dot ? (size_t)(dot - rest) : strlen(rest));
        if (!imp)
            break;
        char *next = ol_xasprintf("%s%s", imp->qual, dot ? dot : "");
        free(owned);
        owned = next;
        qual = next;
        from = file;
    }
    free(owned);
}

static void index_callers(ol_project *p)
{
    p->callers.len = 0;
    if (p->caller_slots)
        memset(p->caller_slots, 0, p->caller_slot_count * sizeof(caller_slot));
    p->caller_keys = 0;
    ol_arena_free(&p->caller_arena);
    for (size_t i = 0; i < p->count; i++) {
        const ol_file_saves *sv = p->files[i].saves;
        for (size_t k = 0; sv && k < sv->call_count; k++)
            index_call(p, i, k, sv->calls[k].qual);
    }
    p->callers_stale = false;
}

void ol_project_visit_callers(ol_project *p, size_t file, const char *rest, void *worker, ol_project_call_visitor fn,
                              void *ctx)
{
    if (file >= p->count)
        return;
    make_saves_known(p, file, worker, false);
    pthread_mutex_lock(&p->lock);
    if (p->callers_stale)
        index_callers(p);
    caller_slot *slot = p->caller_slot_count ? caller_slot_of(p, file, rest) : NULL;
    for (size_t e = slot && slot->rest ? slot->head : 0; e; e = p->callers.items[e - 1].next) {
        const caller_entry *c = &p->callers.items[e - 1];
        if (c->caller != file)
            fn(ctx, c->caller, &p->files[c->caller].saves->calls[c->call]);
    }
    pthread_mutex_unlock(&p->lock);
}
