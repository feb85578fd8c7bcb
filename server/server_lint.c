/*
 * server_lint.c - linting what the client has open, and turning findings into
 * LSP diagnostics.
 *
 * A unit is what the engine lints as one program: a Python text document, or
 * the code cells of a notebook document joined in order (as notebook.c joins
 * an .ipynb, IPython syntax blanked byte for byte). Findings come back as byte
 * ranges of that text; ol_unit_place maps them to a document (the buffer
 * itself, or the cell they fall in) and server_docs.c turns bytes into the
 * client's positions.
 *
 * The settings for a unit come from the same resolver as the command line's:
 * the nearest pyproject.toml with [tool.oomlint] above the file, then the
 * command line of `oomlint server` and the editor's settings on top. The
 * resolver caches what it read, so before each lint the server compares the
 * pyproject.toml files that could apply (on the way up from the file) with
 * what they were at the last lint, and starts afresh when one changed,
 * appeared or went away; file-watch notifications do the same without
 * waiting for an edit.
 *
 * Whole-program facts: a unit whose file lies in a workspace folder is
 * linted as one file of a project holding every Python file and notebook of
 * the folders (found as the command line finds them in a directory, with
 * the configuration's exclude; at most OL_WORKSPACE_MAX_FILES), so its
 * calls into neighbouring files read their summaries exactly as
 * `oomlint <folder>` does. The store is built at the first such lint;
 * summaries are computed when a lint first asks for them, from the buffer
 * for open documents and from the disk for the others, and kept until the
 * file changes. Typing in a buffer recomputes only that buffer's summary
 * (its own lint publishes it); a save or a change on disk also marks the
 * other open units for a new lint, since they may import it. Files outside
 * the folders, and untitled buffers, are linted alone, as before.
 *
 * A finding's evidence (its notes) goes out as the diagnostic's
 * relatedInformation, to clients that declared they show it: a note in the
 * unit's own text at its document (the cell it falls in, for a notebook), a
 * note in another file at that file's URI. The message stays the CLI's either
 * way; the hover (server_actions.c) lists the notes for every client. A
 * finding that rests on a guess says so in `data` (confidence, guessedFrom).
 */
#include "server.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "discover.h"
#include "notebook.h"
#include "portable.h"
#include "project.h"
#include "rule.h"

ol_unit *ol_unit_new(const char *uri, bool notebook)
{
    ol_unit *u = ol_xcalloc(1, sizeof(*u));
    u->uri = ol_xstrdup(uri);
    u->path = ol_uri_to_path(uri);
    u->notebook = notebook;
    u->dirty = true;
    u->project_file = (size_t)-1;
    return u;
}

static void clear_segments(ol_unit *u)
{
    for (size_t i = 0; i < u->segments.len; i++)
        free(u->segments.items[i].uri);
    u->segments.len = 0;
}

void ol_unit_free(ol_unit *u)
{
    if (!u)
        return;
    free(u->uri);
    free(u->path);
    for (size_t i = 0; i < u->cells.len; i++)
        free(u->cells.items[i].uri);
    ol_vec_free(&u->cells);
    ol_file_result_free(&u->result);
    clear_segments(u);
    ol_vec_free(&u->segments);
    free(u->config_error);
    ol_strvec_free(&u->pushed);
    cJSON_Delete(u->fix_all);
    free(u);
}

ol_unit *ol_server_unit(ol_server *s, const char *uri)
{
    for (size_t i = 0; i < s->units.len; i++)
        if (strcmp(s->units.items[i]->uri, uri) == 0)
            return s->units.items[i];
    return NULL;
}

ol_unit *ol_server_unit_of(ol_server *s, const char *doc_uri)
{
    ol_doc *d = ol_docs_find(&s->docs, doc_uri);
    if (d && d->notebook)
        return ol_server_unit(s, d->notebook);
    return ol_server_unit(s, doc_uri);
}

void ol_server_drop_unit(ol_server *s, const char *uri)
{
    for (size_t i = 0; i < s->units.len; i++) {
        if (strcmp(s->units.items[i]->uri, uri) == 0) {
            ol_unit_free(s->units.items[i]);
            s->units.items[i] = s->units.items[--s->units.len];
            return;
        }
    }
}

bool ol_server_shown(const ol_server *s, const ol_diag *d)
{
    return d->rule->severity <= s->settings.fail_on;
}

/* ---- configuration ----------------------------------------------------------------- */

void ol_server_reset_config(ol_server *s)
{
    /* the store was discovered with the configuration's exclude */
    ol_workspace_drop_project(&s->workspace);
    if (s->resolver_ready)
        ol_resolver_free(&s->resolver);
    s->resolver_ready = false;
    for (size_t i = 0; i < s->config_files.len; i++)
        free(s->config_files.items[i].path);
    s->config_files.len = 0;
    for (size_t i = 0; i < s->units.len; i++)
        s->units.items[i]->dirty = true;
}

static ol_config_stamp stamp_of(const char *file)
{
    ol_config_stamp st = {NULL, 0, 0, 0, false};
    struct stat sb;
    if (stat(file, &sb) == 0) {
        st.exists = true;
        st.mtime_ns = (int64_t)sb.st_mtim.tv_sec * 1000000000 + sb.st_mtim.tv_nsec;
        st.size = (int64_t)sb.st_size;
        st.ino = (int64_t)sb.st_ino;
    }
    return st;
}

static bool same_stamp(const ol_config_stamp *x, const ol_config_stamp *y)
{
    return x->exists == y->exists && x->mtime_ns == y->mtime_ns && x->size == y->size && x->ino == y->ino;
}

bool ol_server_check_config(ol_server *s)
{
    for (size_t i = 0; i < s->config_files.len; i++) {
        ol_config_stamp now = stamp_of(s->config_files.items[i].path);
        if (!same_stamp(&now, &s->config_files.items[i])) {
            ol_server_reset_config(s);
            return true;
        }
    }
    return false;
}

/* Records a file that could decide a unit's settings; true when it differs
 * from what was recorded before. */
static bool note_config_file(ol_server *s, const char *file)
{
    ol_config_stamp now = stamp_of(file);
    for (size_t i = 0; i < s->config_files.len; i++) {
        ol_config_stamp *seen = &s->config_files.items[i];
        if (strcmp(seen->path, file) == 0)
            return !same_stamp(&now, seen);
    }
    now.path = ol_xstrdup(file);
    ol_vec_push(&s->config_files, now);
    return false;
}

/* Notes the pyproject.toml files that could decide u's settings (on the way
 * up from its directory); true when one changed since the resolver looked. */
static bool config_changed_for(ol_server *s, const ol_unit *u)
{
    if (s->config_opts.isolated)
        return false;
    if (s->config_opts.config_path)
        return note_config_file(s, s->config_opts.config_path);
    char *dir;
    if (u->path && u->path[0] == '/') {
        dir = ol_xstrdup(u->path);
        char *slash = strrchr(dir, '/');
        slash[slash == dir ? 1 : 0] = '\0';
    } else {
        dir = ol_xstrdup(s->resolver_ready && s->resolver.cwd ? s->resolver.cwd : ".");
    }
    bool changed = false;
    for (;;) {
        char *file = ol_xasprintf("%s/pyproject.toml", strcmp(dir, "/") == 0 ? "" : dir);
        changed = note_config_file(s, file) || changed;
        free(file);
        char *slash = strrchr(dir, '/');
        if (!slash || strcmp(dir, "/") == 0)
            break;
        slash[slash == dir ? 1 : 0] = '\0';
    }
    free(dir);
    return changed;
}

static bool ensure_resolver(ol_server *s, ol_buf *err)
{
    if (s->resolver_ready)
        return true;
    if (!ol_resolver_init(&s->resolver, &s->config_opts)) {
        ol_buf_puts(err, s->resolver.error.data ? s->resolver.error.data : "bad configuration");
        ol_resolver_free(&s->resolver);
        return false;
    }
    s->resolver_ready = true;
    return true;
}

static void config_failed(ol_server *s, ol_unit *u, const char *why)
{
    free(u->config_error);
    u->config_error = ol_xstrdup(why);
    bool shown = false;
    for (size_t i = 0; i < s->shown_errors.len && !shown; i++)
        shown = strcmp(s->shown_errors.items[i], why) == 0;
    if (!shown) {
        ol_vec_push(&s->shown_errors, ol_xstrdup(why));
        char *text = ol_xasprintf("oomlint: %s (findings are not shown until it is fixed)", why);
        ol_server_show(s, 1, text);
        free(text);
    }
}

/* ---- whole-program facts -------------------------------------------------------------- */

static bool excluded_path(void *ctx, const char *path)
{
    ol_server *s = ctx;
    return s->resolver_ready && ol_resolver_excluded(&s->resolver, path);
}

/* A workspace larger than this is cut to its first files (in discovery
 * order): building the store walks the folders once, and a huge tree (a home
 * directory opened as a folder) must not stall the first lint for long. */
#define OL_WORKSPACE_MAX_FILES 20000
/* ...and the walk stops descending after this many directory entries, so
 * a folder of data files costs a bounded time too. */
#define OL_WORKSPACE_MAX_ENTRIES 400000

/* The discovery of the store's files: counts what the walk sees. */
typedef struct ol_ws_walk {
    ol_server *s;
    size_t entries, sources;
    bool cut;
} ol_ws_walk;

static bool walk_excluded(void *ctx, const char *path)
{
    ol_ws_walk *w = ctx;
    if (w->cut || ++w->entries > OL_WORKSPACE_MAX_ENTRIES) {
        w->cut = true;
        return true;
    }
    if (excluded_path(w->s, path))
        return true;
    if (ol_str_has_suffix(path, ".py") || ol_str_has_suffix(path, ".ipynb"))
        w->cut = ++w->sources > OL_WORKSPACE_MAX_FILES;
    return w->cut;
}

static bool wanted_file(ol_server *s, const char *path)
{
    return (ol_str_has_suffix(path, ".py") || ol_str_has_suffix(path, ".ipynb")) &&
           ol_workspace_covers(&s->workspace, path) && !ol_path_excluded(path, &s->cli->exclude) &&
           !excluded_path(s, path);
}

static size_t add_project_file(ol_server *s, const char *path)
{
    ol_workspace *w = &s->workspace;
    size_t i = ol_project_add(w->project, path);
    if (i == w->project_paths.len)
        ol_vec_push(&w->project_paths, ol_xstrdup(path));
    return i;
}

/* The index of unit u's file in the project, or (size_t)-1 (cached until
 * the store is dropped). */
static size_t unit_file(ol_server *s, ol_unit *u)
{
    ol_workspace *w = &s->workspace;
    if (!w->project || !u->path || u->path[0] != '/')
        return (size_t)-1;
    if (u->project_gen != w->project_gen + 1) {
        u->project_file = ol_project_find(w->project, u->path);
        u->project_gen = w->project_gen + 1;
    }
    return u->project_file;
}

/* The project's processor: the lint of a unit asked for the summary of file
 * i, which has none yet. Its buffer when it is open, else the disk; always
 * publishes something, so the lint never waits. */
static void summarize_file(void *job, void *worker, size_t i)
{
    (void)worker; /* the unit's linter: its parser keeps the unit's tree for the next edit */
    ol_server *s = job;
    ol_workspace *w = &s->workspace;
    ol_linter *lt = &s->side_linter;
    if (i >= w->project_paths.len || !s->linter.settings || lt->project) {
        ol_project_publish_missing(w->project, i);
        return;
    }
    ol_doc *open = NULL;
    for (size_t k = 0; k < s->units.len && !open; k++) {
        ol_unit *u = s->units.items[k];
        if (!u->notebook && unit_file(s, u) == i)
            open = ol_docs_find(&s->docs, u->uri);
    }
    if (open && open->text.len > OL_SERVER_MAX_LINT_BYTES) {
        ol_project_publish_missing(w->project, i); /* too large to lint, as its own lint says */
        return;
    }
    lt->settings = s->linter.settings;
    lt->project = w->project;
    lt->file = i;
    lt->summary_only = true;
    ol_file_result scratch;
    if (open) {
        memset(&scratch, 0, sizeof(scratch));
        ol_source src;
        ol_source_init_text(&src, w->project_paths.items[i], ol_xstrndup(open->text.data, open->text.len),
                            open->text.len);
        ol_lint_source(lt, &src, &scratch);
    } else {
        ol_input in = {0};
        in.path = w->project_paths.items[i];
        ol_lint_input(lt, &in, NULL, 0, &scratch);
    }
    ol_file_result_free(&scratch);
    lt->project = NULL;
    lt->summary_only = false;
    ol_project_publish_missing(w->project, i);
}

/* Builds the project store of the workspace folders when it does not exist. */
static void ensure_project(ol_server *s)
{
    ol_workspace *w = &s->workspace;
    if (w->project || w->folders.len == 0)
        return;
    uint64_t start = ol_now_ns();
    ol_input_vec inputs = {0};
    ol_ws_walk walk = {s, 0, 0, false};
    ol_discover_options dopts = {&s->cli->exclude, false, NULL, walk_excluded, &walk, NULL, false};
    ol_discover((const char *const *)w->folders.items, w->folders.len, &dopts, &inputs);
    w->project = ol_project_new();
    size_t n = inputs.len < OL_WORKSPACE_MAX_FILES ? inputs.len : OL_WORKSPACE_MAX_FILES;
    for (size_t i = 0; i < n; i++)
        if (!inputs.items[i].from_stdin)
            add_project_file(s, inputs.items[i].path);
    ol_project_index(w->project);
    ol_project_set_processor(w->project, summarize_file, s);
    if (walk.cut || inputs.len > n)
        ol_server_log(s, 2,
                      "the workspace folders are large: facts across files use the first %zu Python files found",
                      n);
    ol_server_log(s, 4, "workspace: %zu files indexed for facts across files in %.1f ms", n,
                  (double)(ol_now_ns() - start) / 1e6);
    ol_input_vec_free(&inputs);
}

/* The project unit u is linted in, and its index there; NULL to lint it
 * alone (outside the folders, untitled, or no folders). */
ol_project *ol_server_unit_project(ol_server *s, ol_unit *u, size_t *file)
{
    if (!u->path || u->path[0] != '/' || !ol_workspace_covers(&s->workspace, u->path))
        return NULL;
    ensure_project(s);
    ol_workspace *w = &s->workspace;
    if (!w->project)
        return NULL;
    if (w->project_unindexed) {
        ol_project_index(w->project);
        w->project_unindexed = false;
    }
    size_t i = unit_file(s, u);
    if (i == (size_t)-1) {
        /* open but not discovered (excluded, new, not named .py): still one of the project's */
        i = add_project_file(s, u->path);
        ol_project_index(w->project);
        u->project_file = i;
    }
    *file = i;
    return w->project;
}

bool ol_server_file_changed(ol_server *s, const char *path, bool saved)
{
    ol_workspace *w = &s->workspace;
    if (!w->project || !path)
        return false;
    size_t i = ol_project_find(w->project, path);
    if (i == (size_t)-1)
        return false;
    ol_project_forget(w->project, i);
    if (!saved)
        return false;
    bool marked = false;
    for (size_t k = 0; k < s->units.len; k++) {
        ol_unit *u = s->units.items[k];
        size_t f = unit_file(s, u);
        if (f != (size_t)-1 && f != i) {
            u->dirty = true;
            marked = true;
        }
    }
    return marked;
}

void ol_server_file_created(ol_server *s, const char *path)
{
    ol_workspace *w = &s->workspace;
    if (!w->project || !path || !wanted_file(s, path))
        return;
    size_t before = ol_project_count(w->project);
    size_t i = add_project_file(s, path);
    if (ol_project_count(w->project) != before)
        w->project_unindexed = true; /* indexed once at the next lint, not once per file of a storm */
    else
        ol_project_forget(w->project, i);
}

/* ---- linting ------------------------------------------------------------------------ */

/* The unit's text as a source: the buffer, or the notebook's code cells. */
static void build_source(ol_server *s, ol_unit *u, ol_source *src)
{
    const char *path = u->path ? u->path : u->uri;
    clear_segments(u);
    if (!u->notebook) {
        ol_doc *d = ol_docs_find(&s->docs, u->uri);
        const char *text = d ? d->text.data : "";
        size_t len = d ? d->text.len : 0;
        ol_source_init_text(src, path, ol_xstrndup(text, len), len);
        return;
    }
    size_t n = 0;
    for (size_t i = 0; i < u->cells.len; i++)
        n += u->cells.items[i].code;
    const char **texts = ol_xcalloc(n ? n : 1, sizeof(char *));
    size_t *lens = ol_xcalloc(n ? n : 1, sizeof(size_t));
    uint32_t *indexes = ol_xcalloc(n ? n : 1, sizeof(uint32_t));
    size_t k = 0;
    uint32_t at = 0;
    for (size_t i = 0; i < u->cells.len; i++) {
        if (!u->cells.items[i].code)
            continue;
        ol_doc *d = ol_docs_find(&s->docs, u->cells.items[i].uri);
        texts[k] = d ? d->text.data : "";
        lens[k] = d ? d->text.len : 0;
        indexes[k] = (uint32_t)i + 1;
        ol_segment seg = {ol_xstrdup(u->cells.items[i].uri), at, (uint32_t)lens[k]};
        ol_vec_push(&u->segments, seg);
        /* joining ends every cell with a line break */
        at += (uint32_t)lens[k] + (lens[k] == 0 || texts[k][lens[k] - 1] != '\n' ? 1 : 0);
        k++;
    }
    ol_notebook_from_cells(src, path, texts, lens, indexes, n);
    free(texts);
    free(lens);
    free(indexes);
}

/* The size of the text a lint of u reads. */
static size_t unit_bytes(ol_server *s, const ol_unit *u)
{
    if (!u->notebook) {
        ol_doc *d = ol_docs_find(&s->docs, u->uri);
        return d ? d->text.len : 0;
    }
    size_t n = 0;
    for (size_t i = 0; i < u->cells.len; i++) {
        ol_doc *d = u->cells.items[i].code ? ol_docs_find(&s->docs, u->cells.items[i].uri) : NULL;
        n += d ? d->text.len + 1 : 0;
    }
    return n;
}

void ol_server_lint(ol_server *s, ol_unit *u)
{
    if (config_changed_for(s, u)) {
        /* a pyproject.toml changed: read them all again */
        ol_server_reset_config(s);
        config_changed_for(s, u);
    }
    if (u->linted && !u->dirty)
        return;
    cJSON_Delete(u->fix_all);
    u->fix_all = NULL;
    free(u->config_error);
    u->config_error = NULL;
    ol_file_result_free(&u->result);
    u->settings = NULL;
    u->linted = true;
    u->dirty = false;
    u->unpublished = true;
    s->lints++;

    size_t bytes = unit_bytes(s, u);
    u->too_large = bytes > OL_SERVER_MAX_LINT_BYTES ? bytes : 0;
    if (u->too_large) {
        clear_segments(u);
        if (!u->told_too_large) {
            u->told_too_large = true;
            char *text = ol_xasprintf("oomlint: %s is not linted: its %.1f MB are past the %u MiB the language "
                                      "server lints (run `oomlint` on the file instead)",
                                      u->path ? u->path : u->uri, (double)bytes / 1e6,
                                      OL_SERVER_MAX_LINT_BYTES / (1024u * 1024u));
            ol_server_show(s, 2, text);
            free(text);
        }
        return;
    }
    u->told_too_large = false;
    ol_buf err = {0};
    if (!ensure_resolver(s, &err)) {
        config_failed(s, u, err.data);
        ol_buf_free(&err);
        clear_segments(u);
        return;
    }
    ol_input in = {0};
    in.path = u->path ? u->path : "-";
    in.from_stdin = u->path == NULL;
    const ol_settings *settings = NULL;
    if (!ol_resolver_settings_for(&s->resolver, &in, &settings)) {
        config_failed(s, u, s->resolver.error.data ? s->resolver.error.data : "bad configuration");
        /* the resolver keeps its first error: start afresh next time */
        ol_server_reset_config(s);
        clear_segments(u);
        return;
    }
    ol_source src;
    build_source(s, u, &src);
    u->settings = settings;
    s->linter.settings = settings;
    /* whole-program facts: the unit's own summary is published anew by its
     * lint, its neighbours' are read from the store */
    size_t file = 0;
    ol_project *project = ol_server_unit_project(s, u, &file);
    if (project)
        ol_project_forget(project, file);
    s->linter.project = project;
    s->linter.file = file;
    ol_lint_source(&s->linter, &src, &u->result);
    s->linter.project = NULL;
    s->linter.file = 0;
}

/* ---- positions ------------------------------------------------------------------------ */

bool ol_unit_place(ol_server *s, const ol_unit *u, uint32_t at, bool is_end, ol_doc **doc, uint32_t *byte)
{
    if (!u->notebook) {
        ol_doc *d = ol_docs_find(&s->docs, u->uri);
        if (!d)
            return false;
        *doc = d;
        *byte = at > d->text.len ? (uint32_t)d->text.len : at;
        return true;
    }
    if (u->segments.len == 0)
        return false;
    /* the last segment starting at or before `at` (strictly before, for an
     * end); segments are in order of their start */
    size_t lo = 0, hi = u->segments.len;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        uint32_t st = u->segments.items[mid].start;
        if (st < at || (st == at && !is_end))
            lo = mid + 1;
        else
            hi = mid;
    }
    size_t k = lo > 0 ? lo - 1 : 0;
    const ol_segment *seg = &u->segments.items[k];
    ol_doc *d = ol_docs_find(&s->docs, seg->uri);
    if (!d)
        return false;
    uint32_t off = at > seg->start ? at - seg->start : 0;
    if (off > seg->len)
        off = seg->len; /* the line break joining added */
    if (off > d->text.len)
        off = (uint32_t)d->text.len;
    *doc = d;
    *byte = off;
    return true;
}

bool ol_unit_span(ol_server *s, const ol_unit *u, uint32_t start, uint32_t end, ol_doc **doc, uint32_t *x,
                  uint32_t *y)
{
    ol_doc *da = NULL, *db = NULL;
    if (!ol_unit_place(s, u, start, false, &da, x))
        return false;
    if (end < start)
        end = start;
    if (!ol_unit_place(s, u, end, end > start, &db, y) || db != da || *y < *x)
        *y = (uint32_t)da->text.len; /* a range running past its cell stops at the cell's end */
    *doc = da;
    return true;
}

bool ol_unit_range(ol_server *s, const ol_unit *u, uint32_t start, uint32_t end, ol_doc **doc, ol_lsp_pos *a,
                   ol_lsp_pos *b)
{
    uint32_t x = 0, y = 0;
    if (!ol_unit_span(s, u, start, end, doc, &x, &y))
        return false;
    *a = ol_doc_position(*doc, x, s->enc);
    *b = ol_doc_position(*doc, y, s->enc);
    return true;
}

/* ---- diagnostics ------------------------------------------------------------------------ */

/* The file: URI of a file of the run as the run names it: absolute in a
 * workspace's project; a relative name is taken from the current directory. */
static char *run_file_uri(const char *path)
{
    if (path[0] == '/')
        return ol_path_to_uri(path);
    char *cwd = getcwd(NULL, 0);
    char *abs = ol_xasprintf("%s/%s", cwd ? cwd : "", path);
    free(cwd);
    char *uri = ol_path_to_uri(abs);
    free(abs);
    return uri;
}

bool ol_server_note_place(ol_server *s, const ol_unit *u, const ol_note *n, char **uri, ol_lsp_pos *a,
                          ol_lsp_pos *b)
{
    if (!n->path) {
        ol_doc *doc;
        if (!ol_unit_range(s, u, n->start, n->end, &doc, a, b))
            return false;
        *uri = ol_xstrdup(doc->uri);
        return true;
    }
    *uri = run_file_uri(n->path);
    if (!*uri)
        return false;
    /* lines and code-point columns: exact in the client's units where the
     * file is open here; else code points stand for UTF-16 units (they differ
     * only past characters outside the BMP); no columns: the line's start */
    ol_lsp_pos from = {n->line ? n->line - 1 : 0, n->col ? n->col - 1 : 0};
    ol_lsp_pos to = {n->end_line ? n->end_line - 1 : 0, n->end_col ? n->end_col - 1 : 0};
    if (!n->col || to.line < from.line || (to.line == from.line && to.character < from.character))
        to = from;
    ol_doc *doc = ol_docs_find(&s->docs, *uri);
    if (doc && !doc->notebook && n->col && s->enc != OL_ENC_UTF32) {
        from = ol_doc_position(doc, ol_doc_offset(doc, from, OL_ENC_UTF32), s->enc);
        to = ol_doc_position(doc, ol_doc_offset(doc, to, OL_ENC_UTF32), s->enc);
    }
    *a = from;
    *b = to;
    return true;
}

/* relatedInformation: each note the client can be pointed at, in order. */
static void add_related(ol_server *s, const ol_unit *u, const ol_diag *d, cJSON *j)
{
    cJSON *list = NULL;
    for (size_t i = 0; i < d->notes.len; i++) {
        char *uri;
        ol_lsp_pos a, b;
        if (!ol_server_note_place(s, u, &d->notes.items[i], &uri, &a, &b))
            continue;
        if (!list)
            list = cJSON_AddArrayToObject(j, "relatedInformation");
        cJSON *info = cJSON_CreateObject();
        cJSON *loc = cJSON_AddObjectToObject(info, "location");
        cJSON_AddStringToObject(loc, "uri", uri);
        cJSON_AddItemToObject(loc, "range", ol_lsp_range_json(a, b));
        cJSON_AddStringToObject(info, "message", d->notes.items[i].message);
        cJSON_AddItemToArray(list, info);
        free(uri);
    }
}

cJSON *ol_server_diagnostic(ol_server *s, const ol_unit *u, const ol_diag *d, ol_lsp_pos a, ol_lsp_pos b)
{
    cJSON *j = cJSON_CreateObject();
    cJSON_AddItemToObject(j, "range", ol_lsp_range_json(a, b));
    int severity = d->rule->severity == OL_SEV_ERROR ? 1 : d->rule->severity == OL_SEV_WARNING ? 2 : 3;
    cJSON_AddNumberToObject(j, "severity", severity);
    cJSON_AddStringToObject(j, "code", d->rule->code);
    cJSON *desc = cJSON_AddObjectToObject(j, "codeDescription");
    char *url = ol_xasprintf("%s%s.md", OL_DOCS_URL, d->rule->code);
    cJSON_AddStringToObject(desc, "href", url);
    free(url);
    cJSON_AddStringToObject(j, "source", "oomlint");
    cJSON_AddStringToObject(j, "message", d->message);
    if (s->related_information && d->notes.len)
        add_related(s, u, d, j);
    if (d->guess) {
        cJSON *data = cJSON_AddObjectToObject(j, "data");
        cJSON_AddStringToObject(data, "confidence", "low");
        cJSON_AddStringToObject(data, "guessedFrom", d->guess);
    }
    return j;
}

/* The one diagnostic of a unit that was not linted: its configuration is
 * broken, or it is too large. */
static cJSON *unlinted_diagnostic(const ol_unit *u)
{
    cJSON *j = cJSON_CreateObject();
    ol_lsp_pos zero = {0, 0};
    cJSON_AddItemToObject(j, "range", ol_lsp_range_json(zero, zero));
    cJSON_AddNumberToObject(j, "severity", u->config_error ? 1 : 2);
    cJSON_AddStringToObject(j, "source", "oomlint");
    char *msg = u->config_error
                    ? ol_xasprintf("oomlint cannot read its configuration: %s", u->config_error)
                    : ol_xasprintf("oomlint did not lint this document: its %.1f MB are past the %u MiB the language "
                                   "server lints (run `oomlint` on the file instead)",
                                   (double)u->too_large / 1e6, OL_SERVER_MAX_LINT_BYTES / (1024u * 1024u));
    cJSON_AddStringToObject(j, "message", msg);
    free(msg);
    return j;
}

/* The document URIs a unit's diagnostics go to. */
static void unit_targets(const ol_unit *u, ol_strvec *out)
{
    if (!u->notebook) {
        ol_vec_push(out, ol_xstrdup(u->uri));
        return;
    }
    for (size_t i = 0; i < u->cells.len; i++)
        if (u->cells.items[i].code)
            ol_vec_push(out, ol_xstrdup(u->cells.items[i].uri));
}

cJSON *ol_server_diagnostics_for(ol_server *s, ol_unit *u, const char *doc_uri)
{
    cJSON *items = cJSON_CreateArray();
    if (u->config_error || u->too_large) {
        /* one diagnostic, at the start of the document (a notebook's first code cell) */
        const char *first = u->notebook ? NULL : u->uri;
        for (size_t i = 0; i < u->cells.len && !first; i++)
            if (u->cells.items[i].code)
                first = u->cells.items[i].uri;
        if (first && strcmp(first, doc_uri) == 0)
            cJSON_AddItemToArray(items, unlinted_diagnostic(u));
        return items;
    }
    for (size_t i = 0; i < u->result.diags.len; i++) {
        const ol_diag *d = &u->result.diags.items[i];
        if (!ol_server_shown(s, d))
            continue;
        ol_doc *doc;
        ol_lsp_pos a, b;
        if (!ol_unit_range(s, u, d->start, d->end, &doc, &a, &b) || strcmp(doc->uri, doc_uri) != 0)
            continue;
        cJSON_AddItemToArray(items, ol_server_diagnostic(s, u, d, a, b));
    }
    return items;
}

static void push(ol_server *s, const char *uri, cJSON *items)
{
    cJSON *params = cJSON_CreateObject();
    cJSON_AddStringToObject(params, "uri", uri);
    ol_doc *d = ol_docs_find(&s->docs, uri);
    if (d)
        cJSON_AddNumberToObject(params, "version", (double)d->version);
    cJSON_AddItemToObject(params, "diagnostics", items);
    ol_server_send(s, ol_rpc_notification("textDocument/publishDiagnostics", params));
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

void ol_server_publish(ol_server *s, ol_unit *u)
{
    u->unpublished = false;
    if (s->pull)
        return;
    ol_strvec targets = {0};
    unit_targets(u, &targets);
    /* every finding placed once, into its document's list: a notebook of N
     * cells and M findings costs N + M, not N * M */
    size_t n = targets.len;
    cJSON **lists = ol_xcalloc(n ? n : 1, sizeof(cJSON *));
    size_t *target_of = ol_xcalloc(s->docs.docs.len + 1, sizeof(size_t)); /* store index -> target + 1 */
    for (size_t i = 0; i < n; i++) {
        lists[i] = cJSON_CreateArray();
        ol_doc *d = ol_docs_find(&s->docs, targets.items[i]);
        if (d && !target_of[d->store_index])
            target_of[d->store_index] = i + 1;
    }
    if (u->config_error || u->too_large) {
        for (size_t i = 0; i < n; i++) {
            cJSON_Delete(lists[i]);
            lists[i] = ol_server_diagnostics_for(s, u, targets.items[i]);
            if (cJSON_GetArraySize(lists[i]) > 0)
                break; /* one diagnostic, in the first code cell */
        }
    } else {
        for (size_t i = 0; i < u->result.diags.len; i++) {
            const ol_diag *d = &u->result.diags.items[i];
            ol_doc *doc;
            ol_lsp_pos a, b;
            if (!ol_server_shown(s, d) || !ol_unit_range(s, u, d->start, d->end, &doc, &a, &b))
                continue;
            size_t t = target_of[doc->store_index];
            if (t)
                cJSON_AddItemToArray(lists[t - 1], ol_server_diagnostic(s, u, d, a, b));
        }
    }
    for (size_t i = 0; i < n; i++)
        push(s, targets.items[i], lists[i]);
    free(lists);
    free(target_of);
    /* documents that left the unit (cells removed) lose what they were sent */
    char **sorted = ol_xcalloc(n ? n : 1, sizeof(char *));
    if (n)
        memcpy(sorted, targets.items, n * sizeof(char *));
    ol_sort(sorted, n, sizeof(char *), cmp_str);
    for (size_t i = 0; i < u->pushed.len; i++)
        if (!bsearch(&u->pushed.items[i], sorted, n, sizeof(char *), cmp_str))
            push(s, u->pushed.items[i], cJSON_CreateArray());
    free(sorted);
    ol_strvec_free(&u->pushed);
    u->pushed = targets;
}

void ol_server_clear(ol_server *s, ol_unit *u)
{
    if (!s->pull)
        for (size_t i = 0; i < u->pushed.len; i++)
            push(s, u->pushed.items[i], cJSON_CreateArray());
    ol_strvec_free(&u->pushed);
}
