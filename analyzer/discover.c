/*
 * discover.c - directory walking (iterative, sorted, symlinked directories
 * not followed) and exclude matching. While walking, only regular files
 * (and symlinks to them) are taken: FIFOs, sockets, devices and dangling or
 * looping links are passed over in silence; named on the command line, they
 * are reported as not regular files.
 */
#include "discover.h"
#include "gitignore.h"

#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "glob.h"

static const char *const skipped_dirs[] = {
    "__pycache__", "__pypackages__", "_build", "buck-out", "build", "dist", "node_modules",
    "site-packages", "venv", NULL,
};

static bool is_source_name(const char *name)
{
    return ol_str_has_suffix(name, ".py") || ol_str_has_suffix(name, ".ipynb");
}

bool ol_path_excluded(const char *path, const ol_strvec *patterns)
{
    if (!patterns || patterns->len == 0)
        return false;
    const char *rel = path;
    while (rel[0] == '.' && rel[1] == '/')
        rel += 2;
    for (size_t i = 0; i < patterns->len; i++) {
        char *p = ol_xstrdup(patterns->items[i]);
        size_t pl = strlen(p);
        while (pl > 1 && p[pl - 1] == '/')
            p[--pl] = '\0';
        bool hit = ol_wildmatch(p, rel, false) || ol_wildmatch(p, path, false);
        if (!hit && !strchr(p, '/')) {
            /* a pattern without a slash matches any one component: `gen`
             * excludes every file under a directory named gen */
            const char *c = path;
            while (*c && !hit) {
                const char *slash = strchr(c, '/');
                size_t len = slash ? (size_t)(slash - c) : strlen(c);
                char *component = ol_xstrndup(c, len);
                hit = len > 0 && ol_wildmatch(p, component, false);
                free(component);
                c += len + (slash ? 1 : 0);
            }
        } else if (!hit) {
            /* a pattern with a slash matches a path prefix or suffix: `src/gen`
             * excludes src/gen/a.py and /abs/src/gen/a.py */
            for (const char *c = path; *c && !hit; c++) {
                if (c != path && c[-1] != '/')
                    continue;
                size_t len = strlen(c);
                for (size_t k = len; k > 0 && !hit; k--) {
                    if (c[k] != '/' && c[k] != '\0')
                        continue;
                    char *prefix = ol_xstrndup(c, k);
                    hit = ol_wildmatch(p, prefix, true);
                    free(prefix);
                }
            }
        }
        free(p);
        if (hit)
            return true;
    }
    return false;
}

static char *join_path(const char *dir, const char *name)
{
    size_t dl = strlen(dir);
    if (dl > 0 && dir[dl - 1] == '/')
        return ol_xasprintf("%s%s", dir, name);
    if (strcmp(dir, ".") == 0)
        return ol_xstrdup(name);
    return ol_xasprintf("%s/%s", dir, name);
}

static void add_input(ol_input_vec *out, const char *path, int error)
{
    ol_input in = {0};
    in.path = ol_xstrdup(path);
    in.error = error;
    ol_vec_push(out, in);
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static bool is_virtualenv(const char *dir)
{
    char *cfg = join_path(dir, "pyvenv.cfg");
    struct stat st;
    bool yes = stat(cfg, &st) == 0;
    free(cfg);
    return yes;
}

static bool excluded(const char *path, const ol_discover_options *opts)
{
    return ol_path_excluded(path, opts->exclude) || (opts->excluded && opts->excluded(opts->excluded_ctx, path));
}

static void walk(const char *root, const ol_discover_options *opts, ol_input_vec *out)
{
    OL_VEC(char *) stack = {0};
    OL_VEC(ol_gitignore *) rules = {0}; /* each stacked directory's gitignore rules */
    ol_gitignore *top = opts->respect_gitignore ? ol_gitignore_open(root) : NULL;
    ol_vec_push(&stack, ol_xstrdup(root));
    ol_vec_push(&rules, top);
    while (stack.len > 0) {
        char *dir = stack.items[--stack.len];
        ol_gitignore *ignore = rules.items[--rules.len];
        DIR *d = opendir(dir);
        if (!d) {
            add_input(out, dir, errno ? errno : EACCES);
            free(dir);
            continue;
        }
        OL_VEC(char *) names = {0};
        struct dirent *e;
        while ((e = readdir(d)) != NULL) {
            if (e->d_name[0] == '.')
                continue; /* hidden files and directories, and . / .. */
            ol_vec_push(&names, ol_xstrdup(e->d_name));
        }
        closedir(d);
        ol_sort(names.items, names.len, sizeof(char *), cmp_str);
        /* push subdirectories in reverse so they pop in order */
        OL_VEC(char *) subdirs = {0};
        OL_VEC(ol_gitignore *) subrules = {0};
        for (size_t i = 0; i < names.len; i++) {
            char *path = join_path(dir, names.items[i]);
            struct stat st;
            if (lstat(path, &st) != 0) {
                free(path);
                continue;
            }
            if (ignore && ol_gitignore_ignored(ignore, names.items[i], S_ISDIR(st.st_mode))) {
                free(path);
                continue;
            }
            if (excluded(path, opts)) {
                if (opts->excluded_count && (S_ISDIR(st.st_mode) || is_source_name(names.items[i])))
                    (*opts->excluded_count)++;
                free(path);
                continue;
            }
            if (S_ISDIR(st.st_mode)) {
                bool skip = false;
                for (const char *const *s = skipped_dirs; *s; s++)
                    if (strcmp(names.items[i], *s) == 0)
                        skip = true;
                if (skip || is_virtualenv(path)) {
                    free(path);
                    continue;
                }
                ol_vec_push(&subdirs, path);
                ol_vec_push(&subrules, ol_gitignore_enter(ignore, names.items[i]));
                continue;
            }
            if (is_source_name(names.items[i])) {
                /* regular files, and symlinks to them (not to directories) */
                struct stat target;
                if (S_ISREG(st.st_mode) || (S_ISLNK(st.st_mode) && stat(path, &target) == 0 && S_ISREG(target.st_mode)))
                    add_input(out, path, 0);
            }
            free(path);
        }
        for (size_t i = subdirs.len; i-- > 0;) {
            ol_vec_push(&stack, subdirs.items[i]);
            ol_vec_push(&rules, subrules.items[i]);
        }
        ol_vec_free(&subdirs);
        ol_vec_free(&subrules);
        for (size_t i = 0; i < names.len; i++)
            free(names.items[i]);
        ol_vec_free(&names);
        free(dir);
    }
    ol_vec_free(&stack);
    ol_vec_free(&rules);
    ol_gitignore_free(top);
}

/* "./a//b/" -> "a/b" for display; "." stays "." */
static char *normalize(const char *path)
{
    ol_buf b = {0};
    const char *p = path;
    while (p[0] == '.' && p[1] == '/') {
        p += 2;
        while (*p == '/')
            p++;
    }
    for (; *p; p++) {
        if (*p == '/' && b.len > 0 && b.data[b.len - 1] == '/')
            continue;
        ol_buf_putc(&b, *p);
    }
    while (b.len > 1 && b.data[b.len - 1] == '/')
        b.data[--b.len] = '\0';
    if (b.len == 0)
        ol_buf_puts(&b, path[0] == '/' ? "/" : ".");
    return ol_buf_take(&b);
}

static int cmp_input(const void *a, const void *b)
{
    const ol_input *x = a, *y = b;
    return strcmp(x->path, y->path);
}

typedef struct file_id {
    dev_t dev;
    ino_t ino;
    size_t index;
} file_id;

static int cmp_file_id(const void *a, const void *b)
{
    const file_id *x = a, *y = b;
    if (x->dev != y->dev)
        return x->dev < y->dev ? -1 : 1;
    if (x->ino != y->ino)
        return x->ino < y->ino ? -1 : 1;
    return x->index < y->index ? -1 : x->index > y->index;
}

/* One file named twice under different paths (a symlink beside its target,
 * `extra/lib.py -> ../res/lib.py`) is linted once, under the first path in
 * the sorted order: a second copy would report every finding twice, and
 * --fix would write one file from two threads. */
static void drop_same_files(ol_input_vec *out)
{
    if (out->len < 2)
        return;
    file_id *ids = ol_xcalloc(out->len, sizeof(file_id));
    bool *drop = ol_xcalloc(out->len, sizeof(bool));
    size_t n = 0;
    for (size_t i = 0; i < out->len; i++) {
        struct stat st;
        if (out->items[i].from_stdin || out->items[i].error || stat(out->items[i].path, &st) != 0 ||
            !S_ISREG(st.st_mode))
            continue;
        ids[n++] = (file_id){st.st_dev, st.st_ino, i};
    }
    ol_sort(ids, n, sizeof(file_id), cmp_file_id);
    for (size_t k = 1; k < n; k++)
        if (ids[k].dev == ids[k - 1].dev && ids[k].ino == ids[k - 1].ino)
            drop[ids[k].index] = true;
    size_t keep = 0;
    for (size_t i = 0; i < out->len; i++) {
        if (drop[i]) {
            free(out->items[i].path);
            continue;
        }
        out->items[keep++] = out->items[i];
    }
    out->len = keep;
    free(ids);
    free(drop);
}

void ol_discover(const char *const *paths, size_t count, const ol_discover_options *opts, ol_input_vec *out)
{
    for (size_t i = 0; i < count; i++) {
        if (strcmp(paths[i], "-") == 0) {
            ol_input in = {0};
            in.path = ol_xstrdup(opts->stdin_filename ? opts->stdin_filename : "-");
            in.from_stdin = true;
            ol_vec_push(out, in);
            continue;
        }
        char *path = normalize(paths[i]);
        struct stat st;
        if (stat(path, &st) != 0) {
            add_input(out, path, errno);
        } else if (S_ISDIR(st.st_mode)) {
            walk(path, opts, out);
        } else if (!opts->force_exclude || !excluded(path, opts)) {
            /* a FIFO, socket or device is reported and skipped, never read */
            add_input(out, path, ol_file_type_error(st.st_mode));
        } else if (opts->excluded_count) {
            (*opts->excluded_count)++;
        }
        free(path);
    }
    /* stable order, no file twice (`oomlint a.py .` names a.py twice) */
    ol_sort(out->items, out->len, sizeof(ol_input), cmp_input);
    size_t keep = 0;
    for (size_t i = 0; i < out->len; i++) {
        if (keep > 0 && strcmp(out->items[keep - 1].path, out->items[i].path) == 0 &&
            out->items[keep - 1].from_stdin == out->items[i].from_stdin) {
            free(out->items[i].path);
            continue;
        }
        out->items[keep++] = out->items[i];
    }
    out->len = keep;
    drop_same_files(out);
}

void ol_input_vec_free(ol_input_vec *v)
{
    for (size_t i = 0; i < v->len; i++)
        free(v->items[i].path);
    ol_vec_free(v);
}
