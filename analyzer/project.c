/*
 * project.c - the run's files, module resolution, and the thread-safe store
 * of their summaries. See project.h for the resolution rule.
 */
#include "project.h"

#include "words.h"

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
    bool pinned;            /* large, built again after it was dropped: kept for the rest of the run */
    bool rebuilding;        /* a thread builds its dropped summary again (ol_project_acquire) */
    size_t wanting;         /* acquires waiting for its summary */
    ol_file_summary *handoff; /* the last summary published while any did: theirs even if the budget drops it */
    atomic_int calls_save;  /* its text has `save(`: 0 not read yet, 1 no, 2 yes */
    atomic_int scanned;     /* its words (words.h): 0 not read yet, 1 a thread reads them, 2 read */
    ol_words *words;        /* set under the lock once scanned is 2 */
    bool text_elsewhere;    /* linted from standard input: its words are not the disk's */
    bool indexed;           /* its calls are in the callers index */
    size_t stalls;          /* the first call whose name waits for its imports (index + 1; 0: none) */
    bool stall_listed;      /* in the project's list of files with waiting calls */
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

/* A call whose name reached a file whose imports are not known yet (its
 * summary not built): it is followed further, from hop `hop`, once they are.
 * Chained per file through next (index + 1). */
typedef struct caller_stall {
    size_t caller, call;
    int hop;
    uint64_t last;          /* the word hash of the name's last part there */
    size_t next;
} caller_stall;

#define NONE ((size_t)-1)

/* Every file's words at once, for a first look: each file's filter
 * folded (or repeated) to one size and stored by bit, a row of files per
 * bit, so that a question reads a few rows instead of every file's filter
 * (most files of a run hold none of a name's words). A file the rows pass
 * is asked again of its own filter: the answer is the filters', only found
 * sooner. Files whose text may not show their words pass always. */
typedef struct word_rows {
    size_t bits;      /* rows, a power of two; 0: not built */
    size_t files;     /* the files they were built for */
    size_t row_words; /* words of a row (a bit per file) */
    uint64_t *rows;   /* bits * row_words */
    uint64_t *always; /* row_words: files that may hold any word */
} word_rows;

/* The rows' size: up to 4,096 bits a file (a file of 300 distinct words,
 * about the mean of the benchmark's corpus, sets a fifth of them), fewer to
 * keep them to 512 KB (2,048 for 1,500 files), as few as 64 (from about
 * 33,000 files; under some 1,000 bits they pass most files and only cost
 * their reading). */
#define ROWS_MAX_BITS 4096
#define ROWS_MAX_BYTES ((size_t)512 * 1024)

struct ol_project {
    pthread_mutex_t lock;
    pthread_cond_t published;
    const char *const *spells_words; /* ol_project_spells_any's last question and answer */
    int spells_answer;
    pfile *files;
    size_t count, cap;
    size_t *slots;          /* open addressing over paths: index + 1, 0 = empty */
    size_t slot_count;
    char *root;             /* the common directory of all files */
    char *input_dir, *input_dir_real; /* the last input's directory, and its real path (canonical_input) */
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
    OL_VEC(size_t) unindexed; /* files whose calls became known since the index was last read */
    OL_VEC(caller_stall) stalls;
    OL_VEC(size_t) stalled; /* the files calls wait on (some may be done waiting) */
    size_t scanned_count;   /* files whose words are read */
    bool aliases_ready;     /* aliases holds every file's `a as b` */
    bool aliases_unsure;    /* some file may bind names its bytes do not show */
    OL_VEC(ol_word_alias) aliases; /* sorted by name */
    word_rows rows;         /* every file's words at once, built with aliases */
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

/* canonical(path) for a run's inputs, which come a directory at a time: the
 * directory's real path is worked out once (realpath reads every component
 * of a path as a link, five to ten calls to the kernel per file) and a file
 * that is not a link itself is that directory's entry. Anything else (a
 * link, a path that is not there, `.` or `..` last) takes canonical(). */
static char *canonical_input(ol_project *p, const char *path)
{
    const char *slash = strrchr(path, '/');
    const char *base = slash ? slash + 1 : path;
    struct stat st;
    if (!slash || !*base || strcmp(base, ".") == 0 || strcmp(base, "..") == 0 || lstat(path, &st) != 0 ||
        S_ISLNK(st.st_mode))
        return canonical(path);
    size_t dir_len = slash == path ? 1 : (size_t)(slash - path);
    if (!p->input_dir || strlen(p->input_dir) != dir_len || memcmp(p->input_dir, path, dir_len) != 0) {
        free(p->input_dir);
        free(p->input_dir_real);
        p->input_dir = ol_xstrndup(path, dir_len);
        p->input_dir_real = realpath(p->input_dir, NULL);
    }
    if (!p->input_dir_real)
        return canonical(path);
    char *joined = ol_xasprintf("%s/%s", p->input_dir_real, base);
    char *n = normalize(joined);
    free(joined);
    return n;
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
        ol_file_summary_release(p->files[i].handoff);
        ol_file_saves_release(p->files[i].saves);
        free(p->files[i].imports);
        ol_words_free(p->files[i].words);
    }
    free(p->files);
    ol_vec_free(&p->unindexed);
    ol_vec_free(&p->stalls);
    ol_vec_free(&p->stalled);
    ol_vec_free(&p->aliases);
    free(p->rows.rows);
    free(p->rows.always);
    ol_vec_free(&p->callers);
    free(p->caller_slots);
    ol_arena_free(&p->caller_arena);
    free(p->slots);
    free(p->input_dir);
    free(p->input_dir_real);
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
    char *c = canonical_input(p, path);
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
    atomic_init(&f->scanned, 0);
    p->callers_stale = true; /* a name may resolve to the new file */
    p->aliases_ready = false;
    p->spells_words = NULL; /* the words changed */
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

static size_t lookup_hashed(const ol_project *p, uint64_t h, const char *path, size_t n)
{
    if (!p->slot_count)
        return (size_t)-1;
    size_t mask = p->slot_count - 1;
    for (size_t i = (size_t)h & mask;; i = (i + 1) & mask) {
        size_t v = p->slots[i];
        if (v == 0)
            return (size_t)-1;
        const pfile *f = &p->files[v - 1];
        if (f->len == n && memcmp(f->path, path, n) == 0)
            return v - 1;
    }
}

static uint64_t hash_more(uint64_t h, const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
    return h;
}

/* Tries `<base>/<parts[0..k)>.py` and `.../__init__.py` for k from the
 * longest down to min_k; on a match sets *file and *consumed. Asked for
 * every dotted name a file's summary follows, from several bases each: the
 * path is built once on the stack and hashed as it grows. */
static bool try_base(const ol_project *p, const char *base, size_t base_len, const char *const *parts,
                     const size_t *lens, size_t nparts, size_t min_k, size_t *file, size_t *consumed)
{
    char stack[1024];
    size_t need = base_len + sizeof("/__init__.py");
    for (size_t i = 0; i < nparts; i++)
        need += lens[i] + 1;
    char *buf = need <= sizeof stack ? stack : ol_xmalloc(need);
    /* the hash and length of `<base>/<parts[0..i)>` for each i */
    uint64_t hashes[MAX_PARTS + 1];
    size_t ends[MAX_PARTS + 1];
    memcpy(buf, base, base_len);
    size_t len = base_len;
    uint64_t h = hash_more(1469598103934665603ull, base, base_len);
    hashes[0] = h;
    ends[0] = len;
    for (size_t i = 0; i < nparts; i++) {
        buf[len++] = '/';
        memcpy(buf + len, parts[i], lens[i]);
        h = hash_more(hash_more(h, "/", 1), parts[i], lens[i]);
        len += lens[i];
        hashes[i + 1] = h;
        ends[i + 1] = len;
    }
    bool found = false;
    for (size_t k = nparts + 1; k-- > min_k && !found;) {
        size_t stem = ends[k];
        size_t hit = (size_t)-1;
        if (k > 0) {
            memcpy(buf + stem, ".py", 3);
            hit = lookup_hashed(p, hash_more(hashes[k], ".py", 3), buf, stem + 3);
        }
        if (hit == (size_t)-1) {
            memcpy(buf + stem, "/__init__.py", 12);
            hit = lookup_hashed(p, hash_more(hashes[k], "/__init__.py", 12), buf, stem + 12);
        }
        if (hit != (size_t)-1) {
            *file = hit;
            *consumed = k;
            found = true;
        }
        /* what was written after stem is past every shorter path */
    }
    if (buf != stack)
        free(buf);
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
    /* a path has only directory names and stems in it: the parts after the
     * first that is neither (a function's name, mostly) name no file, so
     * no base is tried with them */
    size_t named = 0;
    while (named < nparts && name_known(p, parts[named], lens[named]))
        named++;
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
        found = try_base(p, f->path, d, parts, lens, named, 0, file, &consumed);
    } else {
        if (nparts == 0)
            return false;
        /* in a package, an absolute import starts at the package's root
         * (Python 3 has no implicit relative imports): `import pkg.mod` in
         * pkg/other.py is pkg/mod.py even when pkg/pkg.py exists; a
         * script's siblings are found from its own directory */
        if (f->top)
            found = try_base(p, f->top, strlen(f->top), parts, lens, named, 1, file, &consumed);
        if (!found)
            found = try_base(p, f->path, f->dir_len, parts, lens, named, 1, file, &consumed);
        if (!found && p->root) {
            /* the run's common directory and every directory above it: only a
             * name spelling a run file's path below one of them matches */
            size_t d = strlen(p->root);
            for (;;) {
                found = try_base(p, p->root, d, parts, lens, named, 1, file, &consumed);
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
        /* a large summary built again because it was dropped, while its
         * file is still imported: the budget cannot keep it between its
         * readers, so it stays, and such a file is summarized at most twice
         * however many import it. A smaller one goes back into the budget's
         * order as the newest: pinning every summary built again held them
         * all on a large run (54 MB of them for a 16 MB budget, 3,000
         * generated files), for no fewer parses */
        bool again = f->evicted && !replace && s->bytes > p->budget / 4;
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
            if (replace)
                p->callers_stale = true;
            else
                ol_vec_push(&p->unindexed, file); /* filed when the index is next read */
            f->saves_known = true;
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
        if (f->wanting) {
            ol_file_summary_retain(s);
            ol_file_summary_release(f->handoff);
            f->handoff = s;
        }
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
    if (atomic_load(&f->scanned) == 2) {
        ol_words_free(f->words);
        f->words = NULL;
        atomic_store(&f->scanned, 0);
        p->scanned_count--;
        p->aliases_ready = false;
        p->spells_words = NULL; /* the words changed */
    }
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

/* How many times an acquire has a summary built before it gives up. What
 * is published while an acquire waits is handed to it even when the budget
 * drops it before the acquire reads it (a busy run's other threads could
 * drop a summary each time it was built, and the acquire gave up with what
 * the file does unknown: findings varied from run to run), so the first try
 * finds it; only a file whose summary cannot be built at all (the
 * supervisor set it aside) reaches the last try. */
#define MAX_TRIES 3

ol_file_summary *ol_project_acquire(ol_project *p, size_t file, void *worker)
{
    if (file >= p->count)
        return NULL;
    pfile *f = &p->files[file];
    ol_file_summary *s;
    bool wants = false;
    pthread_mutex_lock(&p->lock);
    for (int tries = 0;; tries++) {
        if (!f->summary && !wants) {
            f->wanting++; /* what is published next is handed to this acquire too */
            wants = true;
        }
        /* a dropped summary that another thread builds again: it is
         * published (and pinned) before that thread can wait for anyone,
         * so waiting for it ends, and the file is parsed once more, not
         * once per thread that wants it */
        while (!f->summary && !f->handoff && f->rebuilding)
            pthread_cond_wait(&p->published, &p->lock);
        s = f->summary ? f->summary : f->handoff;
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
        while (!f->summary && !f->handoff && !f->evicted)
            pthread_cond_wait(&p->published, &p->lock);
    }
    if (s) {
        ol_file_summary_retain(s);
        if (s == f->summary)
            touch(p, file);
    }
    if (wants && --f->wanting == 0) {
        ol_file_summary_release(f->handoff);
        f->handoff = NULL;
    }
    pthread_mutex_unlock(&p->lock);
    return s; /* NULL: what it does stays unknown, as for a file outside the run */
}

ol_file_summary *ol_project_held(ol_project *p, size_t file)
{
    if (file >= p->count)
        return NULL;
    pthread_mutex_lock(&p->lock);
    ol_file_summary *s = p->files[file].summary;
    if (s)
        ol_file_summary_retain(s);
    pthread_mutex_unlock(&p->lock);
    return s;
}

/* ---- the words of each file ------------------------------------------------------------
 *
 * Read from the disk once per file, when a question first needs them
 * (words.h): whether its text calls a `save(`, and which words it holds. */

static _Thread_local bool words_timed;
static _Thread_local uint64_t words_ns;

void ol_project_time_words(bool on)
{
    words_timed = on;
}

uint64_t ol_project_words_ns(void)
{
    return words_ns;
}

void ol_project_words_rewind(uint64_t to)
{
    words_ns = to;
}

static uint64_t words_clock(void)
{
    return words_timed ? ol_now_ns() : 0;
}

static void words_clock_stop(uint64_t start)
{
    if (words_timed)
        words_ns += ol_now_ns() - start;
}

/* Reads file i's words unless another thread has begun to; false when one
 * has and is not done. */
static bool scan_unless_taken(ol_project *p, size_t i)
{
    pfile *f = &p->files[i];
    int expect = 0;
    if (!atomic_compare_exchange_strong(&f->scanned, &expect, 1))
        return expect == 2;
    ol_words *w = ol_words_scan(f->path);
    atomic_store(&f->calls_save, ol_words_calls_save(w) ? 2 : 1);
    pthread_mutex_lock(&p->lock);
    f->words = w;
    atomic_store(&f->scanned, 2);
    p->scanned_count++;
    p->aliases_ready = false;
    p->spells_words = NULL; /* the words changed */
    pthread_cond_broadcast(&p->published);
    pthread_mutex_unlock(&p->lock);
    return true;
}

/* Waits for another thread's reading of file i's words (reading never
 * waits for anything, so this wait ends). */
static void wait_scanned(ol_project *p, size_t i)
{
    pthread_mutex_lock(&p->lock);
    while (atomic_load(&p->files[i].scanned) != 2)
        pthread_cond_wait(&p->published, &p->lock);
    pthread_mutex_unlock(&p->lock);
}

/* Reads file i's words unless another thread does; then waits for them. */
static void scan_file(ol_project *p, size_t i)
{
    uint64_t start = words_clock();
    if (!scan_unless_taken(p, i))
        wait_scanned(p, i);
    words_clock_stop(start);
}

static bool calls_save(ol_project *p, size_t i)
{
    if (atomic_load(&p->files[i].scanned) != 2)
        scan_file(p, i);
    return atomic_load(&p->files[i].calls_save) == 2;
}

void ol_project_text_elsewhere(ol_project *p, size_t file)
{
    if (file >= p->count)
        return;
    pthread_mutex_lock(&p->lock);
    p->files[file].text_elsewhere = true;
    p->aliases_ready = false;
    p->spells_words = NULL; /* the words changed */
    pthread_mutex_unlock(&p->lock);
}

static int cmp_alias(const void *a, const void *b)
{
    const ol_word_alias *x = a, *y = b;
    if (x->name != y->name)
        return x->name < y->name ? -1 : 1;
    return x->bound < y->bound ? -1 : x->bound > y->bound;
}

static void set_bit(uint64_t *set, size_t i)
{
    set[i / 64] |= (uint64_t)1 << (i % 64);
}

static bool in_set(const uint64_t *set, size_t i)
{
    return set[i / 64] >> (i % 64) & 1;
}

/* The words of a set of the run's files, a bit each. */
static size_t file_set_words(const ol_project *p)
{
    return p->count / 64 + 1;
}

/* An empty set of the run's files (free it). */
static uint64_t *file_set(const ol_project *p)
{
    return ol_xcalloc(file_set_words(p), sizeof(uint64_t));
}

static void add_every_file(const ol_project *p, uint64_t *set)
{
    for (size_t i = 0; i < p->count; i++)
        set_bit(set, i);
}

/* Do file f's words go unseen: not read (yet, or again), or its text not
 * the disk's? Then it may hold any word. */
static bool words_unseen(const pfile *f)
{
    return f->text_elsewhere || !f->words;
}

/* The rows of every file's words (word_rows), under the lock once all
 * are read. */
static void build_rows(ol_project *p)
{
    word_rows *r = &p->rows;
    r->files = p->count;
    r->row_words = (p->count + 63) / 64;
    r->bits = ROWS_MAX_BITS;
    while (r->bits > 64 && r->bits * r->row_words * sizeof(uint64_t) > ROWS_MAX_BYTES)
        r->bits /= 2;
    free(r->rows);
    free(r->always);
    r->rows = ol_xcalloc(r->bits * r->row_words + 1, sizeof(uint64_t));
    r->always = ol_xcalloc(r->row_words + 1, sizeof(uint64_t));
    for (size_t i = 0; i < p->count; i++) {
        const pfile *f = &p->files[i];
        const uint64_t *bits;
        size_t n = words_unseen(f) ? 0 : ol_words_filter(f->words, &bits);
        if (n == 0) {
            set_bit(r->always, i);
            continue;
        }
        /* a smaller filter repeats across the rows (a probe's position in
         * it is the rows' position's low bits); a larger one is folded */
        for (size_t w = 0; w < (n + 63) / 64; w++)
            for (uint64_t word = bits[w]; word; word &= word - 1) {
                size_t bit = w * 64 + (size_t)__builtin_ctzll(word);
                for (size_t row = bit & (r->bits - 1); row < r->bits; row += n < r->bits ? n : r->bits)
                    set_bit(r->rows + row * r->row_words, i);
            }
    }
}

/* Into out (a file_set), the files whose words may hold one of the n keys
 * by the rows: every file whose own words may hold one is among them; every
 * file when the rows are not those of the words now. Under the lock. */
static void rows_may_hold_any(const ol_project *p, const ol_word_key *keys, size_t n, uint64_t *out)
{
    const word_rows *r = &p->rows;
    if (!p->aliases_ready || r->bits == 0 || r->files != p->count) {
        add_every_file(p, out);
        return;
    }
    memcpy(out, r->always, r->row_words * sizeof(uint64_t));
    for (size_t k = 0; k < n; k++) {
        size_t probe[OL_WORD_PROBES];
        ol_word_key_probes(keys[k], r->bits, probe);
        _Static_assert(OL_WORD_PROBES == 3, "a key's rows are read three at a time");
        const uint64_t *a = r->rows + probe[0] * r->row_words, *b = r->rows + probe[1] * r->row_words,
                       *c = r->rows + probe[2] * r->row_words;
        for (size_t w = 0; w < r->row_words; w++)
            out[w] |= a[w] & b[w] & c[w];
    }
}

/* The next file at or after i in the set, or `count` when none. */
static size_t next_in(const uint64_t *set, size_t i, size_t count)
{
    while (i < count) {
        uint64_t word = set[i / 64] >> (i % 64);
        if (word)
            return i + (size_t)__builtin_ctzll(word);
        i = (i / 64 + 1) * 64;
    }
    return count;
}

/* Every file's words, and the run's `a as b` pairs sorted by name. */
static void scan_all(ol_project *p)
{
    pthread_mutex_lock(&p->lock);
    bool all = p->scanned_count == p->count;
    pthread_mutex_unlock(&p->lock);
    if (!all) {
        /* threads asking at once read different files, then wait for the
         * files the others are still reading */
        uint64_t start = words_clock();
        for (size_t i = 0; i < p->count; i++)
            if (atomic_load(&p->files[i].scanned) == 0)
                scan_unless_taken(p, i);
        for (size_t i = 0; i < p->count; i++)
            if (atomic_load(&p->files[i].scanned) != 2)
                wait_scanned(p, i);
        words_clock_stop(start);
    }
    pthread_mutex_lock(&p->lock);
    if (!p->aliases_ready) {
        p->aliases.len = 0;
        p->aliases_unsure = false;
        for (size_t i = 0; i < p->count; i++) {
            size_t n;
            const ol_word_alias *a = ol_words_aliases(p->files[i].words, &n);
            for (size_t k = 0; k < n; k++)
                ol_vec_push(&p->aliases, a[k]);
            p->aliases_unsure = p->aliases_unsure || !ol_words_aliases_sure(p->files[i].words);
        }
        ol_sort(p->aliases.items, p->aliases.len, sizeof(ol_word_alias), cmp_alias);
        build_rows(p);
        p->aliases_ready = true;
    }
    pthread_mutex_unlock(&p->lock);
}

/* The words a name's part may be written as in a file that calls it: the
 * part itself and, through `a as b` pairs (any file's, followed again),
 * each name an import binds to it. Returns 0 when there are too many to
 * follow (then every file may call it). Under the lock. */
#define MAX_SPELLINGS 32

static size_t spellings_through(const ol_project *p, uint64_t word, uint64_t *out, bool last_only)
{
    size_t n = 0;
    out[n++] = word;
    for (size_t i = 0; i < n; i++) {
        size_t lo = 0, hi = p->aliases.len;
        while (lo < hi) {
            size_t mid = lo + (hi - lo) / 2;
            if (p->aliases.items[mid].name < out[i])
                lo = mid + 1;
            else
                hi = mid;
        }
        for (; lo < p->aliases.len && p->aliases.items[lo].name == out[i]; lo++) {
            if (last_only && !p->aliases.items[lo].last)
                continue;
            uint64_t b = p->aliases.items[lo].bound;
            bool have = false;
            for (size_t k = 0; k < n && !have; k++)
                have = out[k] == b;
            if (have)
                continue;
            if (n == MAX_SPELLINGS)
                return 0;
            out[n++] = b;
        }
    }
    return n;
}

static size_t spellings(const ol_project *p, uint64_t word, uint64_t *out)
{
    return spellings_through(p, word, out, false);
}

/* The words a module may be spelled with where a file passes it on: its
 * own, and the names an import binds to it (`import pkg.core as engine`
 * binds `engine` to `core`, not to `pkg`). Returns 0 when too many. */
static size_t module_spellings(const ol_project *p, uint64_t word, uint64_t *out)
{
    return spellings_through(p, word, out, true);
}

/* What a file's text must hold to call a name: a spelling of its first
 * part and one of its last. */
typedef struct name_words {
    bool any;               /* no filter: every file may call it */
    uint64_t head[MAX_SPELLINGS], last[MAX_SPELLINGS];
    size_t head_count, last_count;
    /* the same words, ready to be looked up in every file's */
    ol_word_key head_keys[MAX_SPELLINGS], last_keys[MAX_SPELLINGS];
} name_words;

/* Only names of ASCII identifier parts are filtered: a summary's name is
 * made of such parts as the text spells them (UTF-8 words may be spelled in
 * another encoding, and anything else is not a word). */
static bool plain_part(const char *s, size_t n)
{
    if (n == 0)
        return false;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_'))
            return false;
    }
    return true;
}

static uint64_t last_part_hash(const char *rest)
{
    const char *dot = strrchr(rest, '.');
    const char *last = dot ? dot + 1 : rest;
    return ol_word_hash(last, strlen(last));
}

static void words_of_name(const ol_project *p, const char *rest, name_words *w)
{
    const char *dot = strchr(rest, '.');
    size_t head_len = dot ? (size_t)(dot - rest) : strlen(rest);
    const char *last_dot = strrchr(rest, '.');
    const char *last = last_dot ? last_dot + 1 : rest;
    w->any = p->aliases_unsure || !plain_part(rest, head_len) || !plain_part(last, strlen(last));
    if (w->any)
        return;
    w->head_count = spellings(p, ol_word_hash(rest, head_len), w->head);
    w->last_count = spellings(p, ol_word_hash(last, strlen(last)), w->last);
    w->any = w->head_count == 0 || w->last_count == 0;
    for (size_t i = 0; i < w->head_count; i++)
        w->head_keys[i] = ol_word_key_of(w->head[i]);
    for (size_t i = 0; i < w->last_count; i++)
        w->last_keys[i] = ol_word_key_of(w->last[i]);
}

/* May file f's text hold one of the words? Yes also where its words go
 * unseen or are opaque. */
static bool may_hold_any(const pfile *f, const ol_word_key *keys, size_t n)
{
    return words_unseen(f) || ol_words_may_hold_any(f->words, keys, n);
}

/* May file f's text call the name? */
static bool may_call(const pfile *f, const name_words *w)
{
    return w->any ||
           (may_hold_any(f, w->last_keys, w->last_count) && may_hold_any(f, w->head_keys, w->head_count));
}

static bool is_spelling(const name_words *w, uint64_t last)
{
    if (w->any)
        return true;
    for (size_t i = 0; i < w->last_count; i++)
        if (w->last[i] == last)
            return true;
    return false;
}

size_t *ol_project_may_define_files(ol_project *p, size_t self, const char *part, const char *method,
                                    size_t *count)
{
    scan_all(p);
    size_t *out = ol_xmalloc((p->count + 1) * sizeof(size_t));
    size_t n = 0;
    bool plain = plain_part(method, strlen(method));
    ol_word_key key = ol_word_key_of(ol_word_hash(method, strlen(method)));
    pthread_mutex_lock(&p->lock);
    /* a method's name the words cannot hold leaves every file to its classes */
    uint64_t *pass = file_set(p);
    if (plain)
        rows_may_hold_any(p, &key, 1, pass);
    else
        add_every_file(p, pass);
    for (size_t i = next_in(pass, 0, p->count); i < p->count; i = next_in(pass, i + 1, p->count)) {
        const pfile *f = &p->files[i];
        if (i != self && (words_unseen(f) || ((!plain || ol_words_may_hold_any(f->words, &key, 1)) &&
                                              ol_words_may_name_class(f->words, part))))
            out[n++] = i;
    }
    pthread_mutex_unlock(&p->lock);
    free(pass);
    *count = n;
    return out;
}

/* ---- saves across the project ------------------------------------------------------- */

/* Builds file i's summary unless its saves and calls are known already,
 * which publishes them. */
static void summarize_if_unknown(ol_project *p, size_t i, void *worker)
{
    pthread_mutex_lock(&p->lock);
    bool known = p->files[i].saves_known;
    pthread_mutex_unlock(&p->lock);
    if (!known) {
        ol_file_summary *s = ol_project_acquire(p, i, worker);
        if (s)
            ol_file_summary_release(s);
    }
}

/* Summarizes every other file that calls a save and whose saves are not
 * known yet: the records the visitor below reads are made with a file's
 * summary. */
static void make_saves_known(ol_project *p, size_t self, void *worker)
{
    for (size_t i = 0; i < p->count; i++) {
        if (i == self || !calls_save(p, i))
            continue;
        summarize_if_unknown(p, i, worker);
    }
}

void ol_project_visit_saves(ol_project *p, size_t self, void *worker, ol_project_save_visitor fn, void *ctx)
{
    size_t count = p->count;
    make_saves_known(p, self, worker);
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

static bool ident_byte(unsigned char c)
{
    return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c >= 0x80;
}

/* Does a file's text spell one of the words, whole? Read from the disk: a
 * notebook's raw JSON holds its code's identifiers as the same bytes. A
 * file that cannot be read does. */
static bool text_spells_any(const char *path, const char *const *words, size_t n)
{
    char *text = NULL;
    size_t len = 0;
    if (ol_read_file(path, (size_t)64 << 20, &text, &len) != 0)
        return true;
    bool found = false;
    for (size_t i = 0; i < n && !found; i++) {
        size_t wl = strlen(words[i]);
        for (const char *at = text; !found && (at = ol_find(at, len - (size_t)(at - text), words[i])) != NULL;
             at++)
            found = (at == text || !ident_byte((unsigned char)at[-1])) &&
                    ((size_t)(at - text) + wl == len || !ident_byte((unsigned char)at[wl]));
    }
    free(text);
    return found;
}

bool ol_project_spells_any(ol_project *p, const char *const *words, size_t n)
{
    scan_all(p);
    ol_word_key keys[16];
    if (n > 16)
        return true;
    for (size_t i = 0; i < n; i++)
        keys[i] = ol_word_key_of(ol_word_hash(words[i], strlen(words[i])));
    pthread_mutex_lock(&p->lock);
    if (p->spells_words == words) {
        bool answer = p->spells_answer;
        pthread_mutex_unlock(&p->lock);
        return answer;
    }
    /* the files whose words may hold one: read again to tell (a word's
     * filter lets about 1.7% of the words a file lacks pass, and a run of
     * hundreds of files would always have one) */
    size_t *maybe = ol_xmalloc((p->count + 1) * sizeof(size_t));
    size_t maybe_count = 0;
    bool found = false;
    for (size_t i = 0; i < p->count && !found; i++) {
        const pfile *f = &p->files[i];
        if (f->text_elsewhere || !f->words)
            found = true;
        else if (ol_words_may_hold_any(f->words, keys, n))
            maybe[maybe_count++] = i;
    }
    pthread_mutex_unlock(&p->lock);
    /* paths do not change once added */
    for (size_t k = 0; k < maybe_count && !found; k++)
        found = text_spells_any(p->files[maybe[k]].path, words, n);
    free(maybe);
    pthread_mutex_lock(&p->lock);
    p->spells_words = words;
    p->spells_answer = found;
    pthread_mutex_unlock(&p->lock);
    return found;
}

/* ---- the callers index ----------------------------------------------------------------
 *
 * "Which calls of the other files run function `rest` of file F?" is asked
 * for every function whose grad mode its callers decide, so the answer
 * cannot be a walk over every call of the run: each record is resolved
 * once, when its file's summary is published (filed the next time the
 * index is read), and filed under every (file, name) it reaches. A name
 * followed through a package's re-exports needs that package's imports:
 * while its summary is not built, the record waits on it (a stall) and is
 * followed further once it is.
 *
 * The question parses only the files that can answer it: those whose words
 * (words.h) can spell a call of the name, and the files such calls' names
 * wait on. The others are left to be linted in their turn, so a run parses
 * each file once, where summarizing every file for the first question
 * parsed most files twice. The answer is the same: a file that cannot
 * spell the name has no record that reaches it. */

/* How many files a name is followed through: the importing file's
 * resolution, then re-exports (`from .resnet import ResNet` in a package's
 * __init__.py, itself imported by another package's). */
#define MAX_HOPS 4

static uint64_t caller_hash(size_t file, const char *rest)
{
    return hash_str(rest, strlen(rest)) ^ ((uint64_t)file * 0x9E3779B97F4A7C15ull);
}

/* The file the index files OL_ANY_CALL records under: none of the run's. */
#define ANY_CLASS SIZE_MAX

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
 * dotted name reaches, from hop `from_hop` on (the hops before it were
 * filed before the record stalled); a file reached twice counts where it is
 * reached first (there the name either is what the call runs or is not). */
static void index_call(ol_project *p, size_t caller, size_t call, int from_hop)
{
    const char *qual = p->files[caller].saves->calls[call].qual;
    if (strncmp(qual, OL_ANY_CALL, sizeof(OL_ANY_CALL) - 1) == 0) {
        /* a method by its name alone: filed under no file */
        add_caller(p, ANY_CLASS, qual + sizeof(OL_ANY_CALL) - 1, caller, call);
        return;
    }
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
            if (hop >= from_hop)
                add_caller(p, file, rest, caller, call);
        }
        if (!*rest || hop + 1 == MAX_HOPS)
            break;
        pfile *f = &p->files[file];
        if (!f->saves_known) {
            caller_stall st = {caller, call, hop + 1, last_part_hash(rest), f->stalls};
            ol_vec_push(&p->stalls, st);
            f->stalls = p->stalls.len;
            if (!f->stall_listed) {
                f->stall_listed = true;
                ol_vec_push(&p->stalled, file);
            }
            break;
        }
        const char *dot = strchr(rest, '.');
        const ol_sum_import *imp = file_import(f, rest, dot ? (size_t)(dot - rest) : strlen(rest));
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

/* Brings the index up to date, under the lock: the records of the files
 * summarized since it was last read, and those that waited on them. */
static void update_callers(ol_project *p)
{
    if (p->callers_stale) {
        p->callers.len = 0;
        if (p->caller_slots)
            memset(p->caller_slots, 0, p->caller_slot_count * sizeof(caller_slot));
        p->caller_keys = 0;
        ol_arena_free(&p->caller_arena);
        p->stalls.len = 0;
        p->stalled.len = 0;
        p->unindexed.len = 0;
        for (size_t i = 0; i < p->count; i++) {
            p->files[i].indexed = false;
            p->files[i].stalls = 0;
            p->files[i].stall_listed = false;
            if (p->files[i].saves_known)
                ol_vec_push(&p->unindexed, i);
        }
        p->callers_stale = false;
    }
    for (size_t u = 0; u < p->unindexed.len; u++) {
        size_t i = p->unindexed.items[u];
        pfile *f = &p->files[i];
        if (!f->saves_known)
            continue;
        if (!f->indexed) {
            f->indexed = true;
            for (size_t k = 0; f->saves && k < f->saves->call_count; k++)
                index_call(p, i, k, 0);
        }
        /* its imports are known now: the records that waited on them go on */
        size_t st = f->stalls;
        f->stalls = 0;
        while (st) {
            caller_stall s = p->stalls.items[st - 1];
            index_call(p, s.caller, s.call, s.hop);
            st = s.next;
        }
    }
    p->unindexed.len = 0;
}

/* ---- the files that may reach a file ---------------------------------------------------
 *
 * A record reaches `rest` of file F through dotted names made from text:
 * its own file's (words.h), then, past each file it reaches, that file's
 * import of the name's first part (index_call). A name resolves to F only
 * if one of its parts spells F's module (its stem, or for a package's
 * __init__.py its directory's name), or if it is relative (`from . import
 * fit`), which reaches the __init__.py of the importing file's directory,
 * or with more dots of one above it, without naming it. So a file makes a
 * record reaching `rest` of F only if its words spell the module of F or of
 * a file on a way to F, where such a file spells the name's first part (it
 * imports the name to pass it on) and in turn the module of one nearer F.
 * A file that passes on a module rather than the name (`import pkg.core as
 * engine`, then `engine.fit()` in the caller) is no exception: the caller
 * spells the module, under its own name or a name bound to it, and so every
 * module word is taken with its spellings through `a as b`. Other files are
 * not parsed for the question (`open` and `split` are spelled by hundreds
 * of files, of which a few import the module that defines them). */

/* How many module spellings one step may hold before every file is taken
 * to reach F (a cost bound: each is looked up in the files that spell the
 * name). */
#define MAX_REACH_MODULES 512

typedef enum { MODULE_NONE, MODULE_WORD, MODULE_ODD } module_kind;

/* The word a dotted name spells to reach file f, and whether f is a
 * package's __init__.py (reached by relative names from below it). */
static module_kind module_of(const pfile *f, uint64_t *word, bool *init)
{
    const char *base = f->path + f->dir_len + 1;
    size_t n = strlen(base);
    *init = strcmp(base, "__init__.py") == 0;
    const char *name = base;
    size_t name_len;
    if (*init) {
        size_t d = f->dir_len;
        while (d > 0 && f->path[d - 1] != '/')
            d--;
        name = f->path + d;
        name_len = f->dir_len - d;
    } else if (n > 3 && strcmp(base + n - 3, ".py") == 0) {
        name_len = n - 3;
    } else {
        return MODULE_NONE; /* no dotted name resolves to it */
    }
    /* a word the scan may file otherwise (a letter outside ASCII) */
    if (!plain_part(name, name_len))
        return MODULE_ODD;
    *word = ol_word_hash(name, name_len);
    return MODULE_WORD;
}

/* May a relative import of file b name the package whose __init__.py is
 * pkg (`from .. import fit` two dots up: b is in pkg's directory or one
 * below it)? */
static bool relative_reach(const pfile *b, const pfile *pkg)
{
    if (!(b->len > pkg->dir_len && memcmp(b->path, pkg->path, pkg->dir_len) == 0 && b->path[pkg->dir_len] == '/'))
        return false;
    unsigned below = 0;
    for (size_t i = pkg->dir_len; i < b->dir_len; i++)
        below += b->path[i] == '/';
    return b->text_elsewhere || !b->words || ol_words_relative_level(b->words) > below;
}

/* The files that may make a record reaching the name `w` of file `file`,
 * as a flag per file, or NULL when any file may. Under the lock, with every
 * file's words read. */
static bool *reachers(const ol_project *p, size_t file, const name_words *w)
{
    if (w->any)
        return NULL;
    /* the files that may spell the name's first part */
    OL_VEC(size_t) spell = {0};
    uint64_t *pass = file_set(p);
    rows_may_hold_any(p, w->head_keys, w->head_count, pass);
    for (size_t b = next_in(pass, 0, p->count); b < p->count; b = next_in(pass, b + 1, p->count))
        if (b != file && may_hold_any(&p->files[b], w->head_keys, w->head_count))
            ol_vec_push(&spell, b);
    bool *in = ol_xcalloc(p->count, sizeof(bool));
    in[file] = true;
    size_t *frontier = ol_xmalloc((spell.len + 1) * sizeof(size_t));
    size_t *next = ol_xmalloc((spell.len + 1) * sizeof(size_t));
    size_t nf = 1;
    frontier[0] = file;
    bool all = false;
    uint64_t *words = ol_xmalloc(MAX_REACH_MODULES * sizeof(uint64_t));
    ol_word_key *keys = ol_xmalloc(MAX_REACH_MODULES * sizeof(ol_word_key));
    const pfile **pkgs = ol_xmalloc(MAX_REACH_MODULES * sizeof(pfile *));
    for (int hop = 0; hop < MAX_HOPS && nf && !all; hop++) {
        size_t nw = 0, np = 0;
        for (size_t k = 0; k < nf && !all; k++) {
            uint64_t word = 0;
            bool init = false;
            module_kind kind = module_of(&p->files[frontier[k]], &word, &init);
            if (kind == MODULE_NONE)
                continue;
            uint64_t spelled[MAX_SPELLINGS];
            size_t ns = kind == MODULE_WORD ? module_spellings(p, word, spelled) : 0;
            all = ns == 0 || (init && np == MAX_REACH_MODULES);
            for (size_t i = 0; i < ns && !all; i++) {
                bool have = false;
                for (size_t j = 0; j < nw && !have; j++)
                    have = words[j] == spelled[i];
                if (have)
                    continue;
                all = nw == MAX_REACH_MODULES;
                if (!all) {
                    keys[nw] = ol_word_key_of(spelled[i]);
                    words[nw++] = spelled[i];
                }
            }
            if (init && !all)
                pkgs[np++] = &p->files[frontier[k]];
        }
        size_t nn = 0;
        /* the rows first: most files hold none of the module's words */
        if (!all)
            rows_may_hold_any(p, keys, nw, pass);
        for (size_t k = 0; k < spell.len && !all; k++) {
            size_t b = spell.items[k];
            if (in[b])
                continue;
            const pfile *fb = &p->files[b];
            bool may = in_set(pass, b) && may_hold_any(fb, keys, nw);
            for (size_t i = 0; i < np && !may; i++)
                may = relative_reach(fb, pkgs[i]);
            if (may) {
                in[b] = true;
                next[nn++] = b;
            }
        }
        size_t *t = frontier;
        frontier = next;
        next = t;
        nf = nn;
    }
    free(words);
    free(keys);
    free(pkgs);
    free(pass);
    free(frontier);
    free(next);
    ol_vec_free(&spell);
    if (all) {
        free(in);
        return NULL;
    }
    return in;
}

/* Summarizes the files whose records can reach `rest` of `file`: those
 * whose words can spell a call of it, then each file that such a record
 * waits on (followed until none is left), each once. */
/* reachers(), computed when first needed: most questions have no candidate */
typedef struct lazy_reach {
    bool *files;
    bool found;
} lazy_reach;

/* Is file i on a way to `file` for the name w (the lock is held)? */
static bool on_a_way(ol_project *p, size_t file, const name_words *w, lazy_reach *r, size_t i)
{
    if (!r->found) {
        r->files = reachers(p, file, w);
        r->found = true;
    }
    return !r->files || r->files[i];
}

static int cmp_index(const void *a, const void *b)
{
    size_t x = *(const size_t *)a, y = *(const size_t *)b;
    return x < y ? -1 : x > y;
}

static void make_callers_known(ol_project *p, size_t file, const char *rest, void *worker)
{
    pthread_mutex_lock(&p->lock);
    bool all = p->known == p->count;
    pthread_mutex_unlock(&p->lock);
    if (all)
        return;
    scan_all(p);
    name_words *w = ol_xmalloc(sizeof(*w));
    OL_VEC(size_t) todo = {0};
    bool *tried = ol_xcalloc(p->count, sizeof(bool));
    pthread_mutex_lock(&p->lock);
    words_of_name(p, rest, w);
    /* the files the rows pass, each then asked of its own words */
    uint64_t *pass = file_set(p), *head = file_set(p);
    if (w->any) {
        add_every_file(p, pass);
    } else {
        rows_may_hold_any(p, w->last_keys, w->last_count, pass);
        rows_may_hold_any(p, w->head_keys, w->head_count, head);
        for (size_t k = 0; k < file_set_words(p); k++)
            pass[k] &= head[k];
    }
    for (size_t i = next_in(pass, 0, p->count); i < p->count; i = next_in(pass, i + 1, p->count))
        if (i != file && !p->files[i].saves_known && may_call(&p->files[i], w))
            ol_vec_push(&todo, i);
    free(pass);
    free(head);
    /* of those, the files on a way to `file` (found only when some spell the name) */
    lazy_reach reach = {NULL, false};
    size_t kept = 0;
    for (size_t k = 0; k < todo.len; k++)
        if (on_a_way(p, file, w, &reach, todo.items[k]))
            todo.items[kept++] = todo.items[k];
    todo.len = kept;
    pthread_mutex_unlock(&p->lock);
    /* also when none is left to summarize: the files summarized before the
     * question (by another thread, or for another question) may hold
     * records that wait on a file no one has summarized */
    do {
        for (size_t k = 0; k < todo.len; k++) {
            size_t i = todo.items[k];
            tried[i] = true;
            summarize_if_unknown(p, i, worker);
        }
        todo.len = 0;
        /* the records that wait on a file whose name can still become rest
         * (the list of such files drops those done waiting as it is read) */
        pthread_mutex_lock(&p->lock);
        update_callers(p);
        size_t listed = 0;
        for (size_t s = 0; s < p->stalled.len; s++) {
            size_t i = p->stalled.items[s];
            pfile *f = &p->files[i];
            if (!f->stalls) {
                f->stall_listed = false;
                continue;
            }
            p->stalled.items[listed++] = i;
            if (tried[i] || f->saves_known)
                continue;
            for (size_t st = f->stalls; st; st = p->stalls.items[st - 1].next)
                if (is_spelling(w, p->stalls.items[st - 1].last)) {
                    if (on_a_way(p, file, w, &reach, i))
                        ol_vec_push(&todo, i);
                    break;
                }
        }
        p->stalled.len = listed;
        pthread_mutex_unlock(&p->lock);
        /* summarized in the order of the files, whatever order the list holds them in */
        ol_sort(todo.items, todo.len, sizeof(size_t), cmp_index);
    } while (todo.len);
    ol_vec_free(&todo);
    free(tried);
    free(reach.files);
    free(w);
}

static int cmp_entry(const void *a, const void *b)
{
    const caller_entry *x = a, *y = b;
    if (x->caller != y->caller)
        return x->caller < y->caller ? -1 : 1;
    return x->call < y->call ? -1 : x->call > y->call;
}

/* Calls fn with each record the index files under (file, rest) that a
 * file other than `skip` made, in the order of the files and their
 * records however the index was filed, with the index brought up to date
 * and the store locked. */
static void visit_filed(ol_project *p, size_t file, const char *rest, size_t skip, ol_project_call_visitor fn,
                        void *ctx)
{
    pthread_mutex_lock(&p->lock);
    update_callers(p);
    caller_slot *slot = p->caller_slot_count ? caller_slot_of(p, file, rest) : NULL;
    OL_VEC(caller_entry) found = {0};
    for (size_t e = slot && slot->rest ? slot->head : 0; e; e = p->callers.items[e - 1].next)
        if (p->callers.items[e - 1].caller != skip)
            ol_vec_push(&found, p->callers.items[e - 1]);
    ol_sort(found.items, found.len, sizeof(caller_entry), cmp_entry);
    for (size_t k = 0; k < found.len; k++)
        fn(ctx, found.items[k].caller, &p->files[found.items[k].caller].saves->calls[found.items[k].call]);
    pthread_mutex_unlock(&p->lock);
    ol_vec_free(&found);
}

void ol_project_visit_callers(ol_project *p, size_t file, const char *rest, void *worker, ol_project_call_visitor fn,
                              void *ctx)
{
    if (file >= p->count)
        return;
    make_callers_known(p, file, rest, worker);
    visit_filed(p, file, rest, file, fn, ctx);
}

void ol_project_visit_any_calls(ol_project *p, size_t self, const char *method, void *worker,
                                ol_project_call_visitor fn, void *ctx)
{
    if (self >= p->count || !plain_part(method, strlen(method)))
        return;
    scan_all(p);
    ol_word_key key = ol_word_key_of(ol_word_hash(method, strlen(method)));
    OL_VEC(size_t) todo = {0};
    pthread_mutex_lock(&p->lock);
    uint64_t *pass = file_set(p);
    rows_may_hold_any(p, &key, 1, pass);
    for (size_t i = next_in(pass, 0, p->count); i < p->count; i = next_in(pass, i + 1, p->count))
        if (i != self && !p->files[i].saves_known && may_hold_any(&p->files[i], &key, 1))
            ol_vec_push(&todo, i);
    pthread_mutex_unlock(&p->lock);
    free(pass);
    for (size_t k = 0; k < todo.len; k++)
        summarize_if_unknown(p, todo.items[k], worker);
    ol_vec_free(&todo);
    visit_filed(p, ANY_CLASS, method, self, fn, ctx);
}

void ol_project_visit_own_calls(ol_project *p, size_t file, const char *qual, void *worker,
                                ol_project_call_visitor fn, void *ctx)
{
    if (file >= p->count || !qual)
        return;
    summarize_if_unknown(p, file, worker);
    pthread_mutex_lock(&p->lock);
    const ol_file_saves *sv = p->files[file].saves;
    size_t lo = 0, hi = sv ? sv->call_count : 0;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (strcmp(sv->calls[mid].qual, qual) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    for (size_t k = lo; sv && k < sv->call_count && strcmp(sv->calls[k].qual, qual) == 0; k++)
        fn(ctx, file, &sv->calls[k]);
    pthread_mutex_unlock(&p->lock);
}
