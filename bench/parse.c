/*
 * parse.c - the bare parse that `make bench` measures oomlint against.
 *
 * Whole process, as a user would run it: walk the directories named on the
 * command line for *.py files, then on N threads read each file, parse it
 * with tree-sitter-python and delete the tree. Nothing else: no flattening,
 * no model, no rules, no output beyond one summary line on stderr. It links
 * the same pinned runtime and grammar as oomlint, compiled plain (the
 * Makefile's OPT, no profile-guided optimisation, tree-sitter's default
 * allocator), so "oomlint / parse" says what everything oomlint does costs
 * relative to the parse alone.
 *
 *     parse [-j THREADS] PATH...     (directories are walked; files taken as they are)
 */
#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <tree_sitter/api.h>

const TSLanguage *tree_sitter_python(void);

typedef struct paths {
    char **items;
    size_t len, cap;
} paths;

typedef struct job {
    const paths *files;
    atomic_size_t next;
    atomic_ullong bytes;
    atomic_ullong nodes;
    atomic_int failures;
} job;

static void *xrealloc(void *p, size_t n)
{
    void *q = realloc(p, n);
    if (!q) {
        fputs("parse: out of memory\n", stderr);
        exit(2);
    }
    return q;
}

static void push(paths *v, char *p)
{
    if (v->len == v->cap) {
        v->cap = v->cap ? v->cap * 2 : 256;
        v->items = xrealloc(v->items, v->cap * sizeof(*v->items));
    }
    v->items[v->len++] = p;
}

static void add_path(paths *v, const char *dir, const char *name)
{
    size_t n = strlen(dir) + strlen(name) + 2;
    char *p = xrealloc(NULL, n);
    snprintf(p, n, "%s/%s", dir, name);
    push(v, p);
}

static int compare_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Recursive is fine here: the bench corpus is a few levels deep. */
static void walk(paths *out, const char *dir)
{
    DIR *d = opendir(dir);
    if (!d) {
        fprintf(stderr, "parse: %s: %s\n", dir, strerror(errno));
        return;
    }
    paths here = {0};
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        add_path(&here, dir, e->d_name);
    }
    closedir(d);
    qsort(here.items, here.len, sizeof(*here.items), compare_names);
    for (size_t i = 0; i < here.len; i++) {
        struct stat st;
        char *p = here.items[i];
        size_t n = strlen(p);
        if (lstat(p, &st) != 0) {
            fprintf(stderr, "parse: %s: %s\n", p, strerror(errno));
        } else if (S_ISDIR(st.st_mode)) {
            walk(out, p);
        } else if (S_ISREG(st.st_mode) && n > 3 && strcmp(p + n - 3, ".py") == 0) {
            push(out, p);
            continue;
        }
        free(p);
    }
    free(here.items);
}

static char *read_all(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    size_t cap = 1 << 16, n = 0;
    char *buf = xrealloc(NULL, cap);
    size_t got;
    while ((got = fread(buf + n, 1, cap - n, f)) > 0) {
        n += got;
        if (n == cap)
            buf = xrealloc(buf, cap *= 2);
    }
    bool bad = ferror(f);
    fclose(f);
    if (bad) {
        free(buf);
        return NULL;
    }
    *len = n;
    return buf;
}

static void *worker(void *arg)
{
    job *jb = arg;
    TSParser *parser = ts_parser_new();
    ts_parser_set_language(parser, tree_sitter_python());
    for (;;) {
        size_t i = atomic_fetch_add(&jb->next, 1);
        if (i >= jb->files->len)
            break;
        size_t len = 0;
        char *text = read_all(jb->files->items[i], &len);
        if (!text) {
            fprintf(stderr, "parse: cannot read %s\n", jb->files->items[i]);
            atomic_fetch_add(&jb->failures, 1);
            continue;
        }
        TSTree *tree = ts_parser_parse_string(parser, NULL, text, (uint32_t)len);
        if (tree) {
            /* touch the result so the parse cannot be judged unused */
            atomic_fetch_add(&jb->nodes, ts_node_descendant_count(ts_tree_root_node(tree)));
            ts_tree_delete(tree);
        } else {
            atomic_fetch_add(&jb->failures, 1);
        }
        atomic_fetch_add(&jb->bytes, len);
        free(text);
    }
    ts_parser_delete(parser);
    return NULL;
}

int main(int argc, char **argv)
{
    int threads = 1, first = 1;
    if (argc > 2 && strcmp(argv[1], "-j") == 0) {
        threads = atoi(argv[2]);
        first = 3;
    }
    if (threads < 1 || first >= argc) {
        fputs("usage: parse [-j THREADS] PATH...\n", stderr);
        return 2;
    }
    paths files = {0};
    for (int i = first; i < argc; i++) {
        struct stat st;
        if (stat(argv[i], &st) == 0 && S_ISDIR(st.st_mode))
            walk(&files, argv[i]);
        else
            push(&files, strcpy(xrealloc(NULL, strlen(argv[i]) + 1), argv[i]));
    }
    job jb = {.files = &files};
    atomic_init(&jb.next, 0);
    atomic_init(&jb.bytes, 0);
    atomic_init(&jb.nodes, 0);
    atomic_init(&jb.failures, 0);
    pthread_t *ids = xrealloc(NULL, (size_t)threads * sizeof(pthread_t));
    int started = 0;
    for (int i = 0; i < threads; i++)
        if (pthread_create(&ids[i], NULL, worker, &jb) == 0)
            started++;
    if (started == 0)
        worker(&jb);
    for (int i = 0; i < started; i++)
        pthread_join(ids[i], NULL);
    fprintf(stderr, "parse: %zu files, %llu bytes, %llu nodes, %d failed\n", files.len,
            (unsigned long long)atomic_load(&jb.bytes), (unsigned long long)atomic_load(&jb.nodes),
            atomic_load(&jb.failures));
    for (size_t i = 0; i < files.len; i++)
        free(files.items[i]);
    free(files.items);
    free(ids);
    return atomic_load(&jb.failures) ? 1 : 0;
}
