/*
 * explain_link.c - from the traceback's frames to the user's files, their
 * findings, and what the snapshot says each line kept alive.
 *
 * A job ran on another machine, so a frame's path (/home/u/proj/train.py)
 * rarely exists here as written: it is looked for as written, then by its
 * trailing components under each --root (the current directory by
 * default), the longest suffix first, so proj/train.py wins over train.py.
 * A frame whose file is not found is named in the report and the rest goes
 * on. Only the user's own files count (ol_oom_user_file): the standard
 * library, installed packages and PyTorch are where the error surfaced,
 * not what to change.
 *
 * The files on the stack are linted with the Python files beside them (the
 * files of their run, so that a call into utils.py resolves as in a normal
 * run), through the linter's own entry points (lint.h) with the
 * configuration that covers them and test-code ignores off: the user ran
 * this code. Each file is parsed once more to learn where its defs and
 * loops start and end, and every finding is ranked by its relation to the
 * stack: on a line of it, in a function on it (in the loop around the
 * failing line first), in a loop around a line of it outside any function
 * (a script's top level), elsewhere in the file, elsewhere in the run.
 * Within a relation, the nearer to the failure and the more severe first.
 *
 * With a snapshot, each finding is credited with the bytes alive at the
 * failure that were allocated on its line or under its loop (the snapshot's
 * lines include each allocation's callers, so the loop's call line counts
 * what the model allocated beneath it).
 */
#include <dirent.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "config.h"
#include "explain_internal.h"
#include "rule.h"
#include "syntax.h"

#define MAX_RUN_FILES 1000
#define MAX_DIR_FILES 200
#define MAX_COMPONENTS 64
#define SNAP_LINES_LINKED 40

const char *ol_relation_name(ol_relation r)
{
    switch (r) {
    case OL_REL_LINE: return "line";
    case OL_REL_FUNCTION: return "function";
    case OL_REL_LOOP: return "loop";
    case OL_REL_FILE: return "file";
    case OL_REL_RUN: return "run";
    }
    return "run";
}

/* ---- finding files ------------------------------------------------------------ */

static bool regular_file(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

static char *join(const char *root, const char *rel)
{
    if (strcmp(root, ".") == 0)
        return ol_xstrdup(rel);
    size_t n = strlen(root);
    return ol_xasprintf("%s%s%s", root, n && root[n - 1] == '/' ? "" : "/", rel);
}

char *ol_explain_find_file(const char *path, const char *const *roots, size_t nroots)
{
    if (!path || !*path || path[0] == '<' || ol_oom_notebook_cell(path))
        return NULL; /* a cell's temporary file would match any file of its name */
    const char *dot[] = {"."};
    if (nroots == 0) {
        roots = dot;
        nroots = 1;
    }
    if (path[0] == '~' && path[1] == '/') {
        const char *home = getenv("HOME");
        if (home && *home) {
            char *full = ol_xasprintf("%s%s", home, path + 1);
            if (regular_file(full))
                return full;
            free(full);
        }
    } else if (regular_file(path)) {
        return ol_xstrdup(path);
    }
    /* the components, '/' or '\' separated, without empty, "." and "~" ones */
    const char *start[MAX_COMPONENTS];
    size_t count = 0;
    const char *p = path;
    while (*p) {
        while (*p == '/' || *p == '\\')
            p++;
        if (!*p)
            break;
        const char *s = p;
        while (*p && *p != '/' && *p != '\\')
            p++;
        size_t len = (size_t)(p - s);
        if ((len == 1 && (*s == '.' || *s == '~')) || (len == 2 && s[1] == ':') ||
            (len == 2 && s[0] == '.' && s[1] == '.'))
            continue; /* ".", "~", a drive letter; ".." would lead out of the root */
        if (count == MAX_COMPONENTS)
            memmove(start, start + 1, (MAX_COMPONENTS - 1) * sizeof(*start)), count--;
        start[count++] = s;
    }
    for (size_t k = count; k >= 1; k--) {
        /* the last k components, '/'-joined */
        ol_buf rel = {0};
        for (size_t i = count - k; i < count; i++) {
            const char *s = start[i];
            size_t len = strcspn(s, "/\\");
            if (rel.len)
                ol_buf_putc(&rel, '/');
            ol_buf_add(&rel, s, len);
        }
        for (size_t r = 0; r < nroots; r++) {
            char *cand = join(roots[r], rel.data);
            if (regular_file(cand)) {
                ol_buf_free(&rel);
                return cand;
            }
            free(cand);
        }
        ol_buf_free(&rel);
    }
    return NULL;
}

/* The report's file for a path found on disk (one entry per real file). */
static size_t file_index(ol_explain *x, const char *found, bool on_stack)
{
    char *real = realpath(found, NULL);
    for (size_t i = 0; i < x->files.len; i++) {
        char *other = realpath(x->files.items[i].path, NULL);
        bool same = real && other ? strcmp(real, other) == 0 : strcmp(found, x->files.items[i].path) == 0;
        free(other);
        if (same) {
            free(real);
            x->files.items[i].on_stack |= on_stack;
            return i;
        }
    }
    free(real);
    ol_ex_file f;
    memset(&f, 0, sizeof(f));
    f.path = ol_xstrdup(found);
    f.on_stack = on_stack;
    ol_vec_push(&x->files, f);
    return x->files.len - 1;
}

typedef struct path_cache {
    OL_VEC(const char *) remote;
    OL_VEC(size_t) index; /* SIZE_MAX: not found */
} path_cache;

static size_t resolve(ol_explain *x, path_cache *pc, const char *remote, bool on_stack)
{
    for (size_t i = 0; i < pc->remote.len; i++) {
        if (strcmp(pc->remote.items[i], remote) == 0) {
            if (pc->index.items[i] != SIZE_MAX)
                x->files.items[pc->index.items[i]].on_stack |= on_stack;
            return pc->index.items[i];
        }
    }
    char *found = ol_explain_find_file(remote, x->opts->roots.items, x->opts->roots.len);
    size_t idx = SIZE_MAX;
    if (found) {
        idx = file_index(x, found, on_stack);
        free(found);
    } else if (on_stack) {
        ol_vec_push(&x->missing, ol_xstrdup(remote));
    }
    ol_vec_push(&pc->remote, remote);
    ol_vec_push(&pc->index, idx);
    return idx;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The Python files beside a file on the stack: the rest of its run. */
static void add_siblings(ol_explain *x, const char *path)
{
    char *dir = ol_xstrdup(path);
    char *slash = strrchr(dir, '/');
    if (slash)
        *slash = '\0';
    else
        strcpy(dir, ".");
    DIR *d = opendir(*dir ? dir : "/");
    if (!d) {
        free(dir);
        return;
    }
    OL_VEC(char *) names = {0};
    struct dirent *e;
    while ((e = readdir(d)) != NULL && names.len < MAX_DIR_FILES) {
        const char *n = e->d_name;
        if (n[0] == '.' || !ol_str_has_suffix(n, ".py"))
            continue;
        ol_vec_push(&names, ol_xstrdup(n));
    }
    closedir(d);
    ol_sort(names.items, names.len, sizeof(char *), cmp_str);
    for (size_t i = 0; i < names.len; i++) {
        char *full = slash ? ol_xasprintf("%s/%s", dir, names.items[i]) : ol_xstrdup(names.items[i]);
        if (x->files.len < MAX_RUN_FILES && regular_file(full))
            file_index(x, full, false);
        free(full);
        free(names.items[i]);
    }
    ol_vec_free(&names);
    free(dir);
}

/* ---- structure: defs and loops by line ------------------------------------------ */

static uint32_t line_of(const ol_source *src, uint32_t byte)
{
    return ol_source_line_index(src, byte) + 1;
}

static void read_structure(ol_ex_file *f, ol_parser *parser)
{
    const ol_source *src = &f->result.src;
    ol_tree tree;
    ol_parse(parser, src, &tree);
    for (ol_nid n = 0; n < tree.nodes.len; n++) {
        const ol_node *node = &tree.nodes.items[n];
        ol_kind k = (ol_kind)node->kind;
        if (k != OL_N_function_definition && k != OL_N_for_statement && k != OL_N_while_statement)
            continue;
        ol_line_span sp = {line_of(src, node->start), line_of(src, node->end > node->start ? node->end - 1 : node->start),
                           NULL};
        if (k == OL_N_function_definition) {
            ol_nid name = ol_field(&tree, n, OL_F_name);
            const ol_node *nn = name != OL_NONE ? ol_node_at(&tree, name) : NULL;
            sp.name = nn && nn->end > nn->start ? ol_arena_strndup(&f->names, src->text + nn->start, nn->end - nn->start)
                                                : "";
            ol_vec_push(&f->defs, sp);
        } else {
            ol_vec_push(&f->loops, sp);
        }
    }
    ol_tree_free(&tree);
}

const ol_line_span *ol_explain_enclosing(const ol_line_spans *spans, uint32_t line)
{
    const ol_line_span *best = NULL;
    for (size_t i = 0; i < spans->len; i++) {
        const ol_line_span *s = &spans->items[i];
        if (s->first <= line && line <= s->last && (!best || s->last - s->first < best->last - best->first))
            best = s;
    }
    return best;
}

const char *ol_explain_source_line(const ol_explain *x, size_t file, uint32_t line, uint32_t *len)
{
    if (file >= x->files.len || line == 0)
        return NULL;
    const ol_file_result *r = &x->files.items[file].result;
    if (!r->has_source || r->src.notebook || line > r->src.line_count)
        return NULL;
    uint32_t n;
    const char *s = ol_source_line(&r->src, line - 1, &n);
    while (n && (*s == ' ' || *s == '\t')) {
        s++;
        n--;
    }
    while (n && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\r'))
        n--;
    *len = n;
    return s;
}

/* ---- linting --------------------------------------------------------------------- */

static void lint_files(ol_explain *x)
{
    if (!x->files.len)
        return;
    ol_grammar grammar;
    if (!ol_grammar_init(&grammar)) {
        x->lint_failed = true;
        ol_vec_push(&x->notes, ol_xstrdup("the bundled Python grammar is not compatible with the tree-sitter runtime: "
                                          "nothing was linted"));
        return;
    }
    ol_config_options copts = {0};
    ol_selection none = {0};
    copts.cli = &none;
    copts.isolated = x->opts->isolated;
    copts.config_path = x->opts->config_path;
    copts.test_code_linted = true; /* the job ran this code: it is what to look at */
    copts.ran_on_gpu = true;       /* and it ran out of a GPU's memory */
    ol_settings fallback = {0};
    fallback.ran_on_gpu = true;
    fallback.enabled = ol_xcalloc(ol_rule_count, sizeof(bool));
    ol_selection_resolve(&none, fallback.enabled);
    ol_resolver resolver;
    bool have_resolver = ol_resolver_init(&resolver, &copts);
    if (!have_resolver)
        ol_vec_push(&x->notes, ol_xasprintf("configuration: %s; linted with the default rules",
                                            resolver.error.data ? resolver.error.data : "unreadable"));
    size_t count = x->files.len;
    ol_input *inputs = ol_xcalloc(count, sizeof(ol_input));
    for (size_t i = 0; i < count; i++) {
        inputs[i].path = x->files.items[i].path;
        if (have_resolver && !resolver.failed && !ol_resolver_settings_for(&resolver, &inputs[i], &inputs[i].settings)) {
            ol_vec_push(&x->notes, ol_xasprintf("configuration: %s; linted with the default rules",
                                                resolver.error.data ? resolver.error.data : "unreadable"));
            inputs[i].settings = NULL;
        }
    }
    ol_file_result *results = ol_xcalloc(count, sizeof(ol_file_result));
    ol_lint_all(&grammar, &fallback, NULL, inputs, count, NULL, 0, results, x->opts->threads);
    ol_parser parser;
    ol_parser_init(&parser, &grammar);
    for (size_t i = 0; i < count; i++) {
        ol_ex_file *f = &x->files.items[i];
        f->result = results[i];
        if (f->result.read_ok && f->result.has_source && !f->result.src.notebook)
            read_structure(f, &parser);
    }
    ol_parser_free(&parser);
    free(results);
    free(inputs);
    if (have_resolver)
        ol_resolver_free(&resolver);
    free(fallback.enabled);
    ol_grammar_free(&grammar);
}

/* ---- ranking ------------------------------------------------------------------- */

static uint32_t diag_line(const ol_ex_file *f, const ol_diag *d, uint32_t *last)
{
    *last = line_of(&f->result.src, d->end > d->start ? d->end - 1 : d->start);
    return line_of(&f->result.src, d->start);
}

static bool within(const ol_line_span *s, uint32_t first, uint32_t last)
{
    return s && s->first <= first && last <= s->last;
}

/* The finding's best relation to one error's frames in its file. */
static void relate(const ol_explain *x, const ol_ex_error *e, size_t file, ol_ex_finding *fd)
{
    const ol_ex_file *f = &x->files.items[file];
    uint32_t last;
    uint32_t first = diag_line(f, &f->result.diags.items[fd->diag], &last);
    size_t depth = 0;
    for (size_t k = e->frames.len; k-- > 0;) {
        const ol_ex_frame *fr = &e->frames.items[k];
        if (!fr->user)
            continue;
        size_t this_depth = depth++;
        if (fr->file != file || fr->frame->line == 0)
            continue;
        uint32_t line = fr->frame->line;
        ol_relation rel = OL_REL_FILE;
        const ol_line_span *def = ol_explain_enclosing(&f->defs, line);
        const ol_line_span *loop = ol_explain_enclosing(&f->loops, line);
        bool in_loop = within(loop, first, last) && (!def || within(def, loop->first, loop->last));
        if (first <= line && line <= last)
            rel = OL_REL_LINE;
        else if (def && strcmp(fr->frame->func, "<module>") != 0 && within(def, first, last))
            rel = OL_REL_FUNCTION;
        else if (!def && within(loop, first, last))
            rel = OL_REL_LOOP;
        bool better = rel < fd->relation || (rel == fd->relation && (in_loop > fd->in_frame_loop ||
                                                                      (in_loop == fd->in_frame_loop && this_depth < fd->frame_depth)));
        if (better) {
            fd->relation = rel;
            fd->frame_line = line;
            fd->frame_depth = this_depth;
            fd->in_frame_loop = in_loop;
        }
    }
}

static int by_rank(const void *a, const void *b)
{
    const ol_ex_finding *x = a, *y = b;
    if (x->relation != y->relation)
        return x->relation < y->relation ? -1 : 1;
    if (x->in_frame_loop != y->in_frame_loop)
        return x->in_frame_loop ? -1 : 1;
    if (x->frame_depth != y->frame_depth)
        return x->frame_depth < y->frame_depth ? -1 : 1;
    if (x->severity != y->severity)
        return x->severity < y->severity ? -1 : 1;
    if (x->alive_bytes != y->alive_bytes)
        return x->alive_bytes > y->alive_bytes ? -1 : 1;
    if (x->file != y->file)
        return x->file < y->file ? -1 : 1;
    if (x->start != y->start)
        return x->start < y->start ? -1 : 1;
    return strcmp(x->code, y->code);
}

/* Bytes alive at the failure allocated on the finding's lines or under the
 * loop (else the def) around it. */
static void credit(ol_explain *x, ol_ex_finding *fd)
{
    const ol_ex_file *f = &x->files.items[fd->file];
    uint32_t last;
    uint32_t first = diag_line(f, &f->result.diags.items[fd->diag], &last);
    const ol_line_span *around = ol_explain_enclosing(&f->loops, first);
    if (!around)
        around = ol_explain_enclosing(&f->defs, first);
    int64_t sum = 0, best = 0;
    for (size_t i = 0; i < x->snaplines.len; i++) {
        const ol_ex_snapline *sl = &x->snaplines.items[i];
        if (sl->file != fd->file)
            continue;
        uint32_t line = sl->line->line;
        bool on = (first <= line && line <= last) || (around && around->first <= line && line <= around->last);
        if (!on)
            continue;
        sum += sl->line->bytes;
        if (sl->line->bytes > best) {
            best = sl->line->bytes;
            fd->alive_line = line;
            fd->alive_file = sl->file;
        }
    }
    if (sum > 0)
        fd->alive_bytes = sum;
}

void ol_explain_link(ol_explain *x)
{
    path_cache pc = {0};
    /* the stack's files, innermost error first so the failing file leads */
    for (size_t ei = 0; ei < x->errors.len; ei++) {
        size_t order = ei == 0 ? x->primary : (ei <= x->primary ? ei - 1 : ei);
        ol_ex_error *e = &x->errors.items[order];
        for (size_t k = e->frames.len; k-- > 0;) {
            ol_ex_frame *fr = &e->frames.items[k];
            fr->file = fr->user ? resolve(x, &pc, fr->frame->file, true) : SIZE_MAX;
        }
    }
    /* the snapshot's largest lines */
    size_t linked = 0;
    for (size_t i = 0; x->have_snapshot && i < x->snap.lines.len; i++) {
        const ol_snap_line *l = &x->snap.lines.items[i];
        if (linked >= SNAP_LINES_LINKED && l->leaf)
            continue;
        if (l->leaf)
            linked++;
        ol_ex_snapline sl = {l, resolve(x, &pc, l->file, false)};
        ol_vec_push(&x->snaplines, sl);
    }
    size_t stack_files = x->files.len;
    for (size_t i = 0; i < stack_files; i++)
        if (x->files.items[i].on_stack)
            add_siblings(x, x->files.items[i].path);
    ol_vec_free(&pc.remote);
    ol_vec_free(&pc.index);

    lint_files(x);

    for (size_t fi = 0; fi < x->files.len; fi++) {
        const ol_ex_file *f = &x->files.items[fi];
        if (!f->result.read_ok)
            continue;
        for (size_t di = 0; di < f->result.diags.len; di++) {
            const ol_diag *d = &f->result.diags.items[di];
            if (d->rule == &ol_rule_oom001)
                continue;
            ol_ex_finding fd = {fi, di, f->on_stack ? OL_REL_FILE : OL_REL_RUN, 0, SIZE_MAX, false,
                                OL_BYTES_UNKNOWN, 0, SIZE_MAX, (int)d->rule->severity, d->start, d->rule->code};
            if (f->on_stack && !f->result.src.notebook)
                for (size_t ei = 0; ei < x->errors.len; ei++)
                    relate(x, &x->errors.items[ei], fi, &fd);
            if (!f->result.src.notebook)
                credit(x, &fd);
            ol_vec_push(&x->findings, fd);
        }
    }
    ol_sort(x->findings.items, x->findings.len, sizeof(ol_ex_finding), by_rank);
}
