/*
 * server_main.c - the language server's loop, lifecycle, settings and
 * document notifications (see server.h).
 *
 * The loop reads every message the client has already sent before it lints:
 * edits are applied as they come, and only when no more input is waiting
 * does it lint the units that changed, one at a time, looking for input
 * again between them. A burst of didChange messages therefore costs one lint
 * of the latest text, and a lint never delays reading. Requests that need
 * findings (code actions, hover, pulled diagnostics) lint first if the text
 * changed, so answers always match the text the client has.
 *
 * Lifecycle as LSP 3.17 has it: requests before initialize get -32002 and
 * notifications are dropped (exit excepted); after shutdown, requests get
 * -32600; exit ends the loop with status 0 after shutdown and 1 without.
 * The end of the input ends it too, with the same status.
 *
 * The engine's model walk recurses deeply on deeply nested code, so the loop
 * runs on a thread with the same large stack the command line's workers get.
 */
#include "server.h"

#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rule.h"
#include "select.h"
#include "version.h"

/* ---- sending -------------------------------------------------------------------------- */

void ol_server_send(ol_server *s, cJSON *msg)
{
    ol_rpc_send(&s->out, msg);
    cJSON_Delete(msg);
}

void ol_server_log(ol_server *s, int type, const char *fmt, ...)
{
    ol_buf b = {0};
    va_list ap;
    va_start(ap, fmt);
    ol_buf_vprintf(&b, fmt, ap);
    va_end(ap);
    fprintf(stderr, "oomlint server: %s\n", b.data ? b.data : "");
    cJSON *params = cJSON_CreateObject();
    cJSON_AddNumberToObject(params, "type", type);
    cJSON_AddStringToObject(params, "message", b.data ? b.data : "");
    ol_server_send(s, ol_rpc_notification("window/logMessage", params));
    ol_buf_free(&b);
}

void ol_server_show(ol_server *s, int type, const char *text)
{
    cJSON *params = cJSON_CreateObject();
    cJSON_AddNumberToObject(params, "type", type);
    cJSON_AddStringToObject(params, "message", text);
    ol_server_send(s, ol_rpc_notification("window/showMessage", params));
}

static void send_request(ol_server *s, const char *method, cJSON *params)
{
    cJSON *m = ol_rpc_notification(method, params);
    char id[32];
    snprintf(id, sizeof id, "oomlint-%d", ++s->next_id);
    cJSON_AddStringToObject(m, "id", id);
    ol_server_send(s, m);
}

/* ---- settings ------------------------------------------------------------------------- */

static const cJSON *get(const cJSON *obj, const char *key)
{
    return cJSON_GetObjectItemCaseSensitive(obj, key);
}

static bool read_selectors(const cJSON *obj, const char *key, const char *alt, ol_strvec *out, bool *given,
                           ol_buf *err)
{
    const cJSON *v = get(obj, key);
    if (!v && alt)
        v = get(obj, alt);
    if (given)
        *given = false;
    if (!v || cJSON_IsNull(v))
        return true;
    if (cJSON_IsString(v)) {
        ol_selectors_add(out, v->valuestring);
    } else if (cJSON_IsArray(v)) {
        const cJSON *e;
        cJSON_ArrayForEach(e, v)
        {
            if (!cJSON_IsString(e)) {
                ol_buf_printf(err, "'%s' must be a list of rule codes, like [\"OOM101\", \"OOM5\"]", key);
                return false;
            }
            ol_selectors_add(out, e->valuestring);
        }
    } else {
        ol_buf_printf(err, "'%s' must be a list of rule codes, like [\"OOM101\", \"OOM5\"]", key);
        return false;
    }
    /* an empty list (an editor's default) selects nothing in particular */
    if (given)
        *given = out->len > 0;
    return true;
}

/* Reads the editor's settings object. */
static bool read_settings(const cJSON *obj, ol_server_settings *out, ol_buf *err)
{
    memset(out, 0, sizeof(*out));
    out->fail_on = OL_SEV_INFO;
    bool ok = read_selectors(obj, "select", NULL, &out->selection.select, &out->selection.has_select, err) &&
              read_selectors(obj, "extendSelect", "extend-select", &out->selection.extend_select, NULL, err) &&
              read_selectors(obj, "ignore", NULL, &out->selection.ignore, NULL, err);
    if (ok) {
        const char *bad = ol_selection_invalid(&out->selection);
        if (bad) {
            ol_buf_printf(err, "unknown rule code or prefix '%s' in the editor's settings (see 'oomlint rules')", bad);
            ok = false;
        }
    }
    const cJSON *unsafe = get(obj, "unsafeFixes");
    if (!unsafe)
        unsafe = get(obj, "unsafe-fixes");
    if (ok && unsafe && !cJSON_IsNull(unsafe)) {
        if (!cJSON_IsBool(unsafe)) {
            ol_buf_puts(err, "'unsafeFixes' must be true or false");
            ok = false;
        } else {
            out->unsafe_fixes = cJSON_IsTrue(unsafe);
        }
    }
    const cJSON *fail = get(obj, "failOn");
    if (!fail)
        fail = get(obj, "fail-on");
    if (ok && fail && !cJSON_IsNull(fail)) {
        const char *v = cJSON_IsString(fail) ? fail->valuestring : "";
        if (strcmp(v, "error") == 0)
            out->fail_on = OL_SEV_ERROR;
        else if (strcmp(v, "warning") == 0)
            out->fail_on = OL_SEV_WARNING;
        else if (strcmp(v, "info") == 0)
            out->fail_on = OL_SEV_INFO;
        else {
            ol_buf_puts(err, "'failOn' must be \"error\", \"warning\" or \"info\"");
            ok = false;
        }
    }
    if (!ok)
        ol_selection_free(&out->selection);
    return ok;
}

static void copy_strvec(ol_strvec *to, const ol_strvec *from)
{
    for (size_t i = 0; i < from->len; i++)
        ol_vec_push(to, ol_xstrdup(from->items[i]));
}

/* The command line's selectors with the editor's added, as if they had been
 * given there too (the editor's `select` replaces the command line's). */
static void merge_selection(ol_server *s)
{
    ol_selection_free(&s->selection);
    memset(&s->selection, 0, sizeof(s->selection));
    const ol_selection *cli = &s->cli->selection, *ed = &s->settings.selection;
    s->selection.has_select = cli->has_select || ed->has_select;
    copy_strvec(&s->selection.select, ed->has_select ? &ed->select : &cli->select);
    copy_strvec(&s->selection.extend_select, &cli->extend_select);
    copy_strvec(&s->selection.extend_select, &ed->extend_select);
    copy_strvec(&s->selection.ignore, &cli->ignore);
    copy_strvec(&s->selection.ignore, &ed->ignore);
}

/* A client's settings object: its "oomlint" member when it has one. */
static cJSON *settings_of(const cJSON *obj)
{
    const cJSON *inner = get(obj, "oomlint");
    if (cJSON_IsObject(inner))
        obj = inner;
    return cJSON_IsObject(obj) ? cJSON_Duplicate(obj, true) : cJSON_CreateObject();
}

/* Settings come in two layers: initializationOptions, then what
 * didChangeConfiguration sent last (key by key on top), so a client that
 * sends an empty configuration after starting keeps its initial options. */
static void apply_settings(ol_server *s, const cJSON *init, const cJSON *config)
{
    cJSON *init_next = init ? settings_of(init) : cJSON_Duplicate(s->init_options, true);
    cJSON *config_next = config ? settings_of(config) : cJSON_Duplicate(s->client_settings, true);
    cJSON *merged = cJSON_Duplicate(init_next, true);
    const cJSON *item;
    cJSON_ArrayForEach(item, config_next)
    {
        cJSON_DeleteItemFromObjectCaseSensitive(merged, item->string);
        cJSON_AddItemToObject(merged, item->string, cJSON_Duplicate(item, true));
    }
    ol_server_settings next;
    ol_buf err = {0};
    bool ok = read_settings(merged, &next, &err);
    cJSON_Delete(merged);
    if (!ok) {
        char *text = ol_xasprintf("oomlint: %s; the settings were not changed", err.data);
        ol_server_show(s, 1, text);
        free(text);
        ol_buf_free(&err);
        cJSON_Delete(init_next);
        cJSON_Delete(config_next);
        return;
    }
    ol_buf_free(&err);
    cJSON_Delete(s->init_options);
    cJSON_Delete(s->client_settings);
    s->init_options = init_next;
    s->client_settings = config_next;
    ol_selection_free(&s->settings.selection);
    s->settings = next;
    merge_selection(s);
    ol_server_reset_config(s);
    if (s->pull && s->refresh_support && s->initialized)
        send_request(s, "workspace/diagnostic/refresh", NULL);
}

/* ---- lifecycle --------------------------------------------------------------------------- */

static cJSON *initialize(ol_server *s, const cJSON *params, int *error)
{
    if (!cJSON_IsObject(params)) {
        *error = OL_RPC_INVALID_PARAMS;
        return NULL;
    }
    const cJSON *caps = get(params, "capabilities");
    const cJSON *encodings = get(get(caps, "general"), "positionEncodings");
    if (cJSON_IsArray(encodings) && cJSON_GetArraySize(encodings) > 0) {
        bool utf16 = false, utf8 = false, utf32 = false;
        const cJSON *e;
        cJSON_ArrayForEach(e, encodings)
        {
            if (!cJSON_IsString(e))
                continue;
            utf16 = utf16 || strcmp(e->valuestring, "utf-16") == 0;
            utf8 = utf8 || strcmp(e->valuestring, "utf-8") == 0;
            utf32 = utf32 || strcmp(e->valuestring, "utf-32") == 0;
        }
        /* UTF-16 is every client's default; take another only when offered alone */
        s->enc = utf16 ? OL_ENC_UTF16 : utf8 ? OL_ENC_UTF8 : utf32 ? OL_ENC_UTF32 : OL_ENC_UTF16;
    }
    s->pull = cJSON_IsObject(get(get(caps, "textDocument"), "diagnostic"));
    const cJSON *ws = get(caps, "workspace");
    s->refresh_support = cJSON_IsTrue(get(get(ws, "diagnostics"), "refreshSupport"));
    s->watch_registration = cJSON_IsTrue(get(get(ws, "didChangeWatchedFiles"), "dynamicRegistration"));
    /* pushed diagnostics declare it under publishDiagnostics; LSP 3.18 lets
     * pulled ones declare it under diagnostic */
    const cJSON *td = get(caps, "textDocument");
    s->related_information = cJSON_IsTrue(get(get(td, "publishDiagnostics"), "relatedInformation")) ||
                             cJSON_IsTrue(get(get(td, "diagnostic"), "relatedInformation"));
    ol_workspace_set_folders(&s->workspace, params);
    const cJSON *options = get(params, "initializationOptions");
    if (options && !cJSON_IsNull(options))
        apply_settings(s, options, NULL);

    cJSON *result = cJSON_CreateObject();
    cJSON *cap = cJSON_AddObjectToObject(result, "capabilities");
    cJSON_AddStringToObject(cap, "positionEncoding", ol_pos_encoding_name(s->enc));
    cJSON *sync = cJSON_AddObjectToObject(cap, "textDocumentSync");
    cJSON_AddBoolToObject(sync, "openClose", true);
    cJSON_AddNumberToObject(sync, "change", 2); /* incremental */
    cJSON_AddItemToObject(sync, "save", cJSON_CreateObject());
    cJSON *nb = cJSON_AddObjectToObject(cap, "notebookDocumentSync");
    cJSON *selectors = cJSON_AddArrayToObject(nb, "notebookSelector");
    const char *kinds[][2] = {{"notebookType", "jupyter-notebook"}, {"pattern", "**/*.ipynb"}};
    for (size_t i = 0; i < OL_ARRAY_LEN(kinds); i++) {
        cJSON *sel = cJSON_CreateObject();
        cJSON *filter = cJSON_AddObjectToObject(sel, "notebook");
        cJSON_AddStringToObject(filter, kinds[i][0], kinds[i][1]);
        cJSON *cells = cJSON_AddArrayToObject(sel, "cells");
        cJSON *lang = cJSON_CreateObject();
        cJSON_AddStringToObject(lang, "language", "python");
        cJSON_AddItemToArray(cells, lang);
        cJSON_AddItemToArray(selectors, sel);
    }
    cJSON_AddBoolToObject(nb, "save", true);
    cJSON *ca = cJSON_AddObjectToObject(cap, "codeActionProvider");
    cJSON *cak = cJSON_AddArrayToObject(ca, "codeActionKinds");
    cJSON_AddItemToArray(cak, cJSON_CreateString("quickfix"));
    cJSON_AddItemToArray(cak, cJSON_CreateString("source.fixAll.oomlint"));
    cJSON_AddBoolToObject(cap, "hoverProvider", true);
    cJSON *dp = cJSON_AddObjectToObject(cap, "diagnosticProvider");
    cJSON_AddStringToObject(dp, "identifier", "oomlint");
    /* whole-program facts: a save of utils.py can change train.py's findings */
    cJSON_AddBoolToObject(dp, "interFileDependencies", true);
    cJSON_AddBoolToObject(dp, "workspaceDiagnostics", false);
    cJSON *wsc = cJSON_AddObjectToObject(cap, "workspace");
    cJSON *wf = cJSON_AddObjectToObject(wsc, "workspaceFolders");
    cJSON_AddBoolToObject(wf, "supported", true);
    cJSON_AddBoolToObject(wf, "changeNotifications", true);
    cJSON *info = cJSON_AddObjectToObject(result, "serverInfo");
    cJSON_AddStringToObject(info, "name", "oomlint");
    cJSON_AddStringToObject(info, "version", OL_VERSION);
    return result;
}

static void initialized(ol_server *s)
{
    if (!s->watch_registration)
        return;
    /* configuration files re-read when they change; Python files for the
     * workspace index */
    cJSON *params = cJSON_CreateObject();
    cJSON *regs = cJSON_AddArrayToObject(params, "registrations");
    cJSON *reg = cJSON_CreateObject();
    cJSON_AddStringToObject(reg, "id", "oomlint-watch");
    cJSON_AddStringToObject(reg, "method", "workspace/didChangeWatchedFiles");
    cJSON *opts = cJSON_AddObjectToObject(reg, "registerOptions");
    cJSON *watchers = cJSON_AddArrayToObject(opts, "watchers");
    const char *globs[] = {"**/pyproject.toml", "**/*.py"};
    for (size_t i = 0; i < OL_ARRAY_LEN(globs); i++) {
        cJSON *w = cJSON_CreateObject();
        cJSON_AddStringToObject(w, "globPattern", globs[i]);
        cJSON_AddItemToArray(watchers, w);
    }
    cJSON_AddItemToArray(regs, reg);
    send_request(s, "client/registerCapability", params);
}

/* ---- documents ------------------------------------------------------------------------- */

static bool is_python(const char *language, const char *uri)
{
    return strcmp(language, "python") == 0 || ol_str_has_suffix(uri, ".py") || ol_str_has_suffix(uri, ".pyi") ||
           ol_str_has_suffix(uri, ".pyw");
}

static bool read_version(const cJSON *td, int64_t *v)
{
    const cJSON *j = get(td, "version");
    if (!cJSON_IsNumber(j))
        return false;
    *v = ol_json_clamp(j->valuedouble, INT64_MIN, INT64_MAX);
    return true;
}

/* A TextDocumentItem into a new document. */
static ol_doc *doc_from_item(const cJSON *item)
{
    const cJSON *uri = get(item, "uri"), *lang = get(item, "languageId"), *text = get(item, "text");
    int64_t version = 0;
    if (!cJSON_IsString(uri) || !cJSON_IsString(text) || !read_version(item, &version))
        return NULL;
    return ol_doc_new(uri->valuestring, cJSON_IsString(lang) ? lang->valuestring : "", version, text->valuestring,
                      strlen(text->valuestring));
}

static void workspace_event(ol_server *s, const char *uri, ol_ws_event ev)
{
    char *path = ol_uri_to_path(uri);
    if (path)
        ol_workspace_file_event(&s->workspace, path, ev);
    free(path);
}

/* Whole-program facts: the file behind uri changed (see ol_server_file_changed);
 * a pulling client is asked to pull again when other documents may change. */
static void file_changed(ol_server *s, const char *uri, bool saved)
{
    char *path = ol_uri_to_path(uri);
    if (path && ol_server_file_changed(s, path, saved) && s->pull && s->refresh_support)
        send_request(s, "workspace/diagnostic/refresh", NULL);
    free(path);
}

static bool did_open(ol_server *s, const cJSON *params)
{
    ol_doc *d = doc_from_item(get(params, "textDocument"));
    if (!d)
        return false;
    bool python = is_python(d->language, d->uri);
    char *uri = ol_xstrdup(d->uri);
    ol_docs_put(&s->docs, d);
    if (python) {
        ol_unit *u = ol_server_unit(s, uri);
        if (!u) {
            u = ol_unit_new(uri, false);
            ol_vec_push(&s->units, u);
        }
        u->dirty = true;
        workspace_event(s, uri, OL_WS_OPENED);
        /* its summary comes from the buffer from now on */
        file_changed(s, uri, false);
    }
    free(uri);
    return true;
}

static bool apply_changes(ol_server *s, ol_doc *d, const cJSON *changes)
{
    const cJSON *c;
    cJSON_ArrayForEach(c, changes)
    {
        ol_buf err = {0};
        if (!ol_doc_apply_change(d, c, s->enc, &err)) {
            ol_server_log(s, 1, "%s: %s", d->uri, err.data);
            ol_buf_free(&err);
            return false;
        }
    }
    return true;
}

static void mark_dirty(ol_server *s, const char *doc_uri)
{
    ol_unit *u = ol_server_unit_of(s, doc_uri);
    if (u)
        u->dirty = true;
}

static bool did_change(ol_server *s, const cJSON *params)
{
    const cJSON *td = get(params, "textDocument"), *uri = get(td, "uri"), *changes = get(params, "contentChanges");
    int64_t version = 0;
    if (!cJSON_IsString(uri) || !cJSON_IsArray(changes) || !read_version(td, &version))
        return false;
    ol_doc *d = ol_docs_find(&s->docs, uri->valuestring);
    if (!d) {
        ol_server_log(s, 2, "a change to %s, which is not open, was ignored", uri->valuestring);
        return true;
    }
    apply_changes(s, d, changes);
    d->version = version;
    mark_dirty(s, d->uri);
    if (!d->notebook)
        file_changed(s, d->uri, false);
    return true;
}

static bool did_save(ol_server *s, const cJSON *params)
{
    const cJSON *uri = get(get(params, "textDocument"), "uri");
    if (!cJSON_IsString(uri))
        return false;
    const cJSON *text = get(params, "text");
    ol_doc *d = ol_docs_find(&s->docs, uri->valuestring);
    if (d && cJSON_IsString(text)) {
        ol_doc_set_text(d, text->valuestring, strlen(text->valuestring));
        mark_dirty(s, d->uri);
    }
    workspace_event(s, uri->valuestring, OL_WS_SAVED);
    ol_server_check_config(s);
    /* the files importing it see what was saved */
    if (!d || !d->notebook)
        file_changed(s, uri->valuestring, true);
    return true;
}

static bool did_close(ol_server *s, const cJSON *params)
{
    const cJSON *uri = get(get(params, "textDocument"), "uri");
    if (!cJSON_IsString(uri))
        return false;
    ol_unit *u = ol_server_unit(s, uri->valuestring);
    if (u) {
        ol_server_clear(s, u);
        ol_server_drop_unit(s, uri->valuestring);
        workspace_event(s, uri->valuestring, OL_WS_CLOSED);
        /* the disk holds its text again, which may not be the buffer's */
        file_changed(s, uri->valuestring, true);
    }
    ol_docs_remove(&s->docs, uri->valuestring);
    return true;
}

/* ---- notebooks ------------------------------------------------------------------------ */

static bool read_cell(const cJSON *j, ol_nb_cell *out)
{
    const cJSON *kind = get(j, "kind"), *doc = get(j, "document");
    if (!cJSON_IsNumber(kind) || !cJSON_IsString(doc))
        return false;
    out->uri = ol_xstrdup(doc->valuestring);
    out->code = kind->valueint == 2;
    return true;
}

static bool open_cells(ol_server *s, const char *nb_uri, const cJSON *items)
{
    const cJSON *item;
    bool ok = true;
    cJSON_ArrayForEach(item, items)
    {
        ol_doc *d = doc_from_item(item);
        if (!d) {
            ok = false;
            continue;
        }
        d->notebook = ol_xstrdup(nb_uri);
        ol_docs_put(&s->docs, d);
    }
    return ok;
}

static bool nb_open(ol_server *s, const cJSON *params)
{
    const cJSON *nb = get(params, "notebookDocument"), *uri = get(nb, "uri"), *cells = get(nb, "cells");
    int64_t version = 0;
    if (!cJSON_IsString(uri) || !cJSON_IsArray(cells) || !read_version(nb, &version))
        return false;
    ol_server_drop_unit(s, uri->valuestring);
    ol_unit *u = ol_unit_new(uri->valuestring, true);
    u->version = version;
    const cJSON *c;
    cJSON_ArrayForEach(c, cells)
    {
        ol_nb_cell cell;
        if (read_cell(c, &cell))
            ol_vec_push(&u->cells, cell);
    }
    ol_vec_push(&s->units, u);
    open_cells(s, uri->valuestring, get(params, "cellTextDocuments"));
    workspace_event(s, uri->valuestring, OL_WS_OPENED);
    return true;
}

static int cmp_cell_uri(const void *a, const void *b)
{
    const ol_nb_cell *x = *(const ol_nb_cell *const *)a, *y = *(const ol_nb_cell *const *)b;
    return strcmp(x->uri, y->uri);
}

static bool nb_change(ol_server *s, const cJSON *params)
{
    const cJSON *nb = get(params, "notebookDocument"), *uri = get(nb, "uri");
    int64_t version = 0;
    if (!cJSON_IsString(uri) || !read_version(nb, &version))
        return false;
    ol_unit *u = ol_server_unit(s, uri->valuestring);
    if (!u || !u->notebook) {
        ol_server_log(s, 2, "a change to notebook %s, which is not open, was ignored", uri->valuestring);
        return true;
    }
    u->version = version;
    u->dirty = true;
    const cJSON *cells = get(get(params, "change"), "cells");
    const cJSON *structure = get(cells, "structure");
    if (structure) {
        const cJSON *array = get(structure, "array");
        const cJSON *start = get(array, "start"), *count = get(array, "deleteCount");
        if (!cJSON_IsNumber(start) || !cJSON_IsNumber(count) || start->valuedouble < 0 || count->valuedouble < 0)
            return false;
        size_t at = (size_t)ol_json_clamp(start->valuedouble, 0, INT32_MAX),
               del = (size_t)ol_json_clamp(count->valuedouble, 0, INT32_MAX);
        if (at > u->cells.len)
            at = u->cells.len;
        if (del > u->cells.len - at)
            del = u->cells.len - at;
        for (size_t i = at; i < at + del; i++)
            free(u->cells.items[i].uri);
        memmove(u->cells.items + at, u->cells.items + at + del, (u->cells.len - at - del) * sizeof(ol_nb_cell));
        u->cells.len -= del;
        const cJSON *added = get(array, "cells"), *c;
        size_t k = 0;
        cJSON_ArrayForEach(c, added)
        {
            ol_nb_cell cell;
            if (!read_cell(c, &cell))
                continue;
            ol_vec_push(&u->cells, cell); /* grows the array; moved into place below */
            memmove(u->cells.items + at + k + 1, u->cells.items + at + k,
                    (u->cells.len - 1 - at - k) * sizeof(ol_nb_cell));
            u->cells.items[at + k] = cell;
            k++;
        }
        const cJSON *closed = get(structure, "didClose");
        cJSON_ArrayForEach(c, closed)
        {
            const cJSON *cu = get(c, "uri");
            if (cJSON_IsString(cu))
                ol_docs_remove(&s->docs, cu->valuestring);
        }
        open_cells(s, uri->valuestring, get(structure, "didOpen"));
    }
    const cJSON *data = get(cells, "data"), *c;
    if (cJSON_GetArraySize(data) > 0) {
        /* the cells by URI, so that new data for every cell of a large
         * notebook costs a search each, not a pass over the cells each */
        ol_nb_cell **byuri = ol_xcalloc(u->cells.len + 1, sizeof(ol_nb_cell *));
        for (size_t i = 0; i < u->cells.len; i++)
            byuri[i] = &u->cells.items[i];
        ol_sort(byuri, u->cells.len, sizeof(ol_nb_cell *), cmp_cell_uri);
        cJSON_ArrayForEach(c, data)
        {
            ol_nb_cell cell;
            if (!read_cell(c, &cell))
                continue;
            ol_nb_cell *key = &cell;
            ol_nb_cell **hit = bsearch(&key, byuri, u->cells.len, sizeof(ol_nb_cell *), cmp_cell_uri);
            /* every cell of that URI (a notebook should have one) */
            for (ol_nb_cell **k = hit; k && k > byuri && cmp_cell_uri(k - 1, &key) == 0;)
                hit = --k;
            for (; hit && hit < byuri + u->cells.len && cmp_cell_uri(hit, &key) == 0; hit++)
                (*hit)->code = cell.code;
            free(cell.uri);
        }
        free(byuri);
    }
    const cJSON *texts = get(cells, "textContent");
    cJSON_ArrayForEach(c, texts)
    {
        const cJSON *td = get(c, "document"), *cu = get(td, "uri");
        int64_t v = 0;
        if (!cJSON_IsString(cu))
            continue;
        ol_doc *d = ol_docs_find(&s->docs, cu->valuestring);
        if (!d)
            continue;
        apply_changes(s, d, get(c, "changes"));
        if (read_version(td, &v))
            d->version = v;
    }
    return true;
}

static bool nb_close(ol_server *s, const cJSON *params)
{
    const cJSON *uri = get(get(params, "notebookDocument"), "uri");
    if (!cJSON_IsString(uri))
        return false;
    ol_unit *u = ol_server_unit(s, uri->valuestring);
    if (u) {
        ol_server_clear(s, u);
        for (size_t i = 0; i < u->cells.len; i++)
            ol_docs_remove(&s->docs, u->cells.items[i].uri);
        ol_server_drop_unit(s, uri->valuestring);
    }
    const cJSON *c;
    cJSON_ArrayForEach(c, get(params, "cellTextDocuments"))
    {
        const cJSON *cu = get(c, "uri");
        if (cJSON_IsString(cu))
            ol_docs_remove(&s->docs, cu->valuestring);
    }
    workspace_event(s, uri->valuestring, OL_WS_CLOSED);
    return true;
}

/* ---- workspace ------------------------------------------------------------------------ */

/* Does uri name a regular file (or a link to one) that exists now? */
static bool regular_file(const char *uri)
{
    char *path = ol_uri_to_path(uri);
    struct stat st;
    bool ok = path && stat(path, &st) == 0 && S_ISREG(st.st_mode);
    free(path);
    return ok;
}

static bool watched_files(ol_server *s, const cJSON *params)
{
    const cJSON *changes = get(params, "changes"), *c;
    if (!cJSON_IsArray(changes))
        return false;
    bool config = false, dependents = false;
    size_t missing = 0;
    cJSON_ArrayForEach(c, changes)
    {
        const cJSON *uri = get(c, "uri"), *type = get(c, "type");
        if (!cJSON_IsString(uri))
            continue;
        if (ol_str_has_suffix(uri->valuestring, "/pyproject.toml")) {
            config = true;
        } else if (ol_str_has_suffix(uri->valuestring, ".py")) {
            int kind = cJSON_IsNumber(type) ? type->valueint : 2;
            if (kind != 3 && !regular_file(uri->valuestring)) {
                /* created or changed, and gone already (or never there, or
                 * not a file): nothing to add; a file we knew is gone */
                if (kind == 1) {
                    missing++;
                    continue;
                }
                kind = 3;
            }
            workspace_event(s, uri->valuestring, kind == 3 ? OL_WS_DELETED : OL_WS_CHANGED);
            /* an open document's buffer is what counts, not the disk */
            if (ol_server_unit(s, uri->valuestring))
                continue;
            char *path = ol_uri_to_path(uri->valuestring);
            if (kind == 1)
                ol_server_file_created(s, path);
            dependents = ol_server_file_changed(s, path, true) || dependents;
            free(path);
        }
    }
    if (missing)
        ol_server_log(s, 4, "%zu file%s reported created that do%s not exist were ignored", missing,
                      missing == 1 ? "" : "s", missing == 1 ? "es" : "");
    if (dependents && !config && s->pull && s->refresh_support)
        send_request(s, "workspace/diagnostic/refresh", NULL);
    if (config) {
        ol_server_reset_config(s);
        if (s->pull && s->refresh_support)
            send_request(s, "workspace/diagnostic/refresh", NULL);
    }
    return true;
}

/* ---- dispatch -------------------------------------------------------------------------- */

static cJSON *pull_diagnostics(ol_server *s, const cJSON *params, int *error)
{
    const cJSON *uri = get(get(params, "textDocument"), "uri");
    if (!cJSON_IsString(uri)) {
        *error = OL_RPC_INVALID_PARAMS;
        return NULL;
    }
    cJSON *report = cJSON_CreateObject();
    cJSON_AddStringToObject(report, "kind", "full");
    ol_unit *u = ol_server_unit_of(s, uri->valuestring);
    if (!u) {
        cJSON_AddItemToObject(report, "items", cJSON_CreateArray());
        return report;
    }
    ol_server_lint(s, u);
    cJSON_AddItemToObject(report, "items", ol_server_diagnostics_for(s, u, uri->valuestring));
    return report;
}

static void request(ol_server *s, const cJSON *id, const char *method, const cJSON *params)
{
    if (!s->initialized && strcmp(method, "initialize") != 0) {
        ol_server_send(s, ol_rpc_error(id, OL_RPC_SERVER_NOT_INITIALIZED, "the server is not initialized yet"));
        return;
    }
    if (s->shutdown) {
        ol_server_send(s, ol_rpc_error(id, OL_RPC_INVALID_REQUEST, "the server is shutting down"));
        return;
    }
    int error = 0;
    cJSON *result = NULL;
    if (strcmp(method, "initialize") == 0) {
        if (s->initialized) {
            ol_server_send(s, ol_rpc_error(id, OL_RPC_INVALID_REQUEST, "initialize was already received"));
            return;
        }
        result = initialize(s, params, &error);
        if (result)
            s->initialized = true;
    } else if (strcmp(method, "shutdown") == 0) {
        s->shutdown = true;
        result = cJSON_CreateNull();
    } else if (strcmp(method, "textDocument/codeAction") == 0) {
        result = ol_server_code_actions(s, params, &error);
    } else if (strcmp(method, "textDocument/hover") == 0) {
        result = ol_server_hover(s, params, &error);
    } else if (strcmp(method, "textDocument/diagnostic") == 0) {
        result = pull_diagnostics(s, params, &error);
    } else {
        char *text = ol_xasprintf("unknown method '%s'", method);
        ol_server_send(s, ol_rpc_error(id, OL_RPC_METHOD_NOT_FOUND, text));
        free(text);
        return;
    }
    if (!result) {
        char *text = ol_xasprintf("invalid params for '%s'", method);
        ol_server_send(s, ol_rpc_error(id, error ? error : OL_RPC_INTERNAL_ERROR, text));
        free(text);
        return;
    }
    ol_server_send(s, ol_rpc_response(id, result));
}

static void notification(ol_server *s, const char *method, const cJSON *params)
{
    if (strcmp(method, "exit") == 0) {
        s->exit = true;
        return;
    }
    if (!s->initialized)
        return; /* dropped, as the protocol asks */
    bool ok = true;
    if (strcmp(method, "initialized") == 0)
        initialized(s);
    else if (strcmp(method, "textDocument/didOpen") == 0)
        ok = did_open(s, params);
    else if (strcmp(method, "textDocument/didChange") == 0)
        ok = did_change(s, params);
    else if (strcmp(method, "textDocument/didSave") == 0)
        ok = did_save(s, params);
    else if (strcmp(method, "textDocument/didClose") == 0)
        ok = did_close(s, params);
    else if (strcmp(method, "notebookDocument/didOpen") == 0)
        ok = nb_open(s, params);
    else if (strcmp(method, "notebookDocument/didChange") == 0)
        ok = nb_change(s, params);
    else if (strcmp(method, "notebookDocument/didSave") == 0) {
        const cJSON *uri = get(get(params, "notebookDocument"), "uri");
        ok = cJSON_IsString(uri);
        if (ok)
            workspace_event(s, uri->valuestring, OL_WS_SAVED);
        ol_server_check_config(s);
    } else if (strcmp(method, "notebookDocument/didClose") == 0)
        ok = nb_close(s, params);
    else if (strcmp(method, "workspace/didChangeConfiguration") == 0)
        apply_settings(s, NULL, get(params, "settings"));
    else if (strcmp(method, "workspace/didChangeWatchedFiles") == 0)
        ok = watched_files(s, params);
    else if (strcmp(method, "workspace/didChangeWorkspaceFolders") == 0)
        ol_workspace_change_folders(&s->workspace, get(params, "event"));
    /* others ($/cancelRequest, $/setTrace, ...) need nothing from us */
    if (!ok)
        ol_server_log(s, 1, "invalid params for '%s'; the notification was ignored", method);
}

static void handle(ol_server *s, const char *body, size_t len)
{
    cJSON *msg = cJSON_ParseWithLength(body, len);
    if (!msg) {
        ol_server_send(s, ol_rpc_error(NULL, OL_RPC_PARSE_ERROR, "the message is not valid JSON"));
        return;
    }
    const cJSON *id = get(msg, "id"), *method = get(msg, "method");
    bool good_id = !id || cJSON_IsNumber(id) || cJSON_IsString(id);
    if (!cJSON_IsObject(msg) || !good_id) {
        ol_server_send(s, ol_rpc_error(NULL, OL_RPC_INVALID_REQUEST, "expected a JSON-RPC request or notification"));
    } else if (!method) {
        /* a response to one of our requests: nothing waits for it */
        if (!id)
            ol_server_send(s, ol_rpc_error(NULL, OL_RPC_INVALID_REQUEST, "a message without a method"));
    } else if (!cJSON_IsString(method)) {
        if (id)
            ol_server_send(s, ol_rpc_error(id, OL_RPC_INVALID_REQUEST, "'method' must be a string"));
    } else if (id) {
        request(s, id, method->valuestring, get(msg, "params"));
    } else {
        notification(s, method->valuestring, get(msg, "params"));
    }
    cJSON_Delete(msg);
}

/* Lints one changed unit and publishes it; false when none changed. A unit
 * a request linted first (a hover or a code action right after an edit) is
 * published here too: every version a pushing client has gets its
 * diagnostics once. */
static bool lint_one(ol_server *s)
{
    if (s->pull)
        return false; /* the client asks when it wants findings */
    for (size_t i = 0; i < s->units.len; i++) {
        ol_unit *u = s->units.items[i];
        if (u->dirty || u->unpublished) {
            ol_server_lint(s, u);
            ol_server_publish(s, u);
            return true;
        }
    }
    return false;
}

static void serve(ol_server *s)
{
    while (!s->exit && !s->out.broken) {
        char *body = NULL, *error = NULL;
        size_t len = 0;
        ol_rpc_status st = ol_rpc_next(&s->in, &body, &len, &error);
        if (st == OL_RPC_MESSAGE) {
            handle(s, body, len);
            free(body);
            continue;
        }
        if (st == OL_RPC_BAD_FRAME) {
            ol_server_log(s, 1, "%s", error);
            free(error);
            continue;
        }
        if (ol_rpc_fill(&s->in, 0))
            continue; /* more was waiting: take it before linting */
        if (s->in.eof)
            break;
        if (s->initialized && !s->shutdown && lint_one(s))
            continue;
        ol_rpc_fill(&s->in, -1);
        if (s->in.eof && s->in.buf.len == s->in.pos)
            break;
    }
}

/* ---- setup ------------------------------------------------------------------------------ */

typedef struct server_run {
    const ol_cli *cli;
    int status;
} server_run;

static void *server_thread(void *arg)
{
    server_run *run = arg;
    ol_server *s = ol_xcalloc(1, sizeof(*s));
    s->cli = run->cli;
    ol_rpc_reader_init(&s->in, STDIN_FILENO);
    s->out.fd = STDOUT_FILENO;
    s->enc = OL_ENC_UTF16;
    s->settings.fail_on = OL_SEV_INFO;
    s->init_options = cJSON_CreateObject();
    s->client_settings = cJSON_CreateObject();
    ol_workspace_init(&s->workspace);
    if (!ol_grammar_init(&s->grammar)) {
        fputs("oomlint: error: the bundled Python grammar is not compatible with the tree-sitter runtime\n", stderr);
        run->status = 2;
        free(s);
        return NULL;
    }
    ol_linter_init(&s->linter, &s->grammar, NULL);
    ol_linter_init(&s->side_linter, &s->grammar, NULL);
    /* an edit reparses only what it touched */
    s->linter.parser.incremental = true;
    merge_selection(s);
    s->config_opts.isolated = run->cli->isolated;
    s->config_opts.config_path = run->cli->config_path;
    s->config_opts.cli = &s->selection;
    s->config_opts.cli_exclude = &run->cli->exclude;
    s->config_opts.stdin_filename = run->cli->stdin_filename;

    serve(s);
    run->status = s->exit || s->in.eof ? (s->shutdown ? 0 : 1) : 1;

    for (size_t i = 0; i < s->units.len; i++)
        ol_unit_free(s->units.items[i]);
    ol_vec_free(&s->units);
    ol_docs_free(&s->docs);
    ol_workspace_free(&s->workspace);
    ol_server_reset_config(s);
    ol_vec_free(&s->config_files);
    ol_strvec_free(&s->shown_errors);
    ol_selection_free(&s->settings.selection);
    ol_selection_free(&s->selection);
    cJSON_Delete(s->init_options);
    cJSON_Delete(s->client_settings);
    ol_linter_free(&s->linter);
    ol_linter_free(&s->side_linter);
    ol_grammar_free(&s->grammar);
    ol_rpc_reader_free(&s->in);
    free(s);
    return NULL;
}

int ol_server_main(const ol_cli *cli)
{
    /* a client that goes away must not kill us mid-write: writes fail instead */
    signal(SIGPIPE, SIG_IGN);
    server_run run = {cli, 1};
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, 64u * 1024u * 1024u);
    pthread_t id;
    if (pthread_create(&id, &attr, server_thread, &run) == 0)
        pthread_join(id, NULL);
    else
        server_thread(&run);
    pthread_attr_destroy(&attr);
    return run.status;
}
