/*
 * server_workspace.c - the workspace index: the folders a client opened and
 * the Python files the server has seen in them.
 *
 * Whole-program facts need the neighbours of a file: the summaries of the
 * functions it imports from utils.py, refreshed when utils.py is saved. This
 * index is where the server records which files exist for that purpose and
 * when each last changed (a generation number bumped by every save or change
 * on disk), and where the project store of the folders' files lives
 * (built and kept up to date by server_lint.c).
 */
#include "server.h"

#include <stdlib.h>
#include <string.h>

#include "project.h"

void ol_workspace_init(ol_workspace *w)
{
    memset(w, 0, sizeof(*w));
}

void ol_workspace_drop_project(ol_workspace *w)
{
    ol_project_free(w->project);
    w->project = NULL;
    ol_strvec_free(&w->project_paths);
    w->project_gen++;
    w->project_unindexed = false;
}

void ol_workspace_free(ol_workspace *w)
{
    ol_workspace_drop_project(w);
    ol_strvec_free(&w->folders);
    for (size_t i = 0; i < w->files.len; i++)
        free(w->files.items[i].path);
    ol_vec_free(&w->files);
    free(w->file_slots);
    memset(w, 0, sizeof(*w));
}

static void add_folder(ol_workspace *w, const char *uri)
{
    char *path = ol_uri_to_path(uri);
    if (!path)
        return;
    size_t n = strlen(path);
    while (n > 1 && path[n - 1] == '/')
        path[--n] = '\0';
    for (size_t i = 0; i < w->folders.len; i++) {
        if (strcmp(w->folders.items[i], path) == 0) {
            free(path);
            return;
        }
    }
    ol_vec_push(&w->folders, path);
}

static void remove_folder(ol_workspace *w, const char *uri)
{
    char *path = ol_uri_to_path(uri);
    if (!path)
        return;
    size_t n = strlen(path);
    while (n > 1 && path[n - 1] == '/')
        path[--n] = '\0';
    for (size_t i = 0; i < w->folders.len; i++) {
        if (strcmp(w->folders.items[i], path) == 0) {
            free(w->folders.items[i]);
            w->folders.items[i] = w->folders.items[--w->folders.len];
            break;
        }
    }
    free(path);
}

static void add_folder_list(ol_workspace *w, const cJSON *list, bool add)
{
    const cJSON *f;
    cJSON_ArrayForEach(f, list)
    {
        const cJSON *uri = cJSON_GetObjectItemCaseSensitive(f, "uri");
        if (!cJSON_IsString(uri))
            continue;
        if (add)
            add_folder(w, uri->valuestring);
        else
            remove_folder(w, uri->valuestring);
    }
}

void ol_workspace_set_folders(ol_workspace *w, const cJSON *init_params)
{
    const cJSON *folders = cJSON_GetObjectItemCaseSensitive(init_params, "workspaceFolders");
    if (cJSON_IsArray(folders) && cJSON_GetArraySize(folders) > 0) {
        add_folder_list(w, folders, true);
        return;
    }
    const cJSON *root = cJSON_GetObjectItemCaseSensitive(init_params, "rootUri");
    if (cJSON_IsString(root)) {
        add_folder(w, root->valuestring);
        return;
    }
    const cJSON *path = cJSON_GetObjectItemCaseSensitive(init_params, "rootPath");
    if (cJSON_IsString(path) && path->valuestring[0] == '/') {
        char *uri = ol_path_to_uri(path->valuestring);
        add_folder(w, uri);
        free(uri);
    }
}

void ol_workspace_change_folders(ol_workspace *w, const cJSON *event)
{
    add_folder_list(w, cJSON_GetObjectItemCaseSensitive(event, "removed"), false);
    add_folder_list(w, cJSON_GetObjectItemCaseSensitive(event, "added"), true);
    ol_workspace_drop_project(w);
}

/* ---- the files, by path ---------------------------------------------------------- */

static size_t path_hash(const char *path)
{
    uint64_t h = 1469598103934665603u;
    for (const unsigned char *p = (const unsigned char *)path; *p; p++)
        h = (h ^ *p) * 1099511628211u;
    return (size_t)(h ^ (h >> 29));
}

/* The slot of path: holding its index + 1, or empty (0) where it would go. */
static size_t file_slot(const ol_workspace *w, const char *path)
{
    size_t mask = w->file_slot_count - 1, i = path_hash(path) & mask;
    while (w->file_slots[i] && strcmp(w->files.items[w->file_slots[i] - 1].path, path) != 0)
        i = (i + 1) & mask;
    return i;
}

static void rehash_files(ol_workspace *w, size_t count)
{
    free(w->file_slots);
    w->file_slot_count = count;
    w->file_slots = ol_xcalloc(count, sizeof(size_t));
    for (size_t i = 0; i < w->files.len; i++)
        w->file_slots[file_slot(w, w->files.items[i].path)] = i + 1;
}

const ol_workspace_file *ol_workspace_find(const ol_workspace *w, const char *path)
{
    if (w->file_slot_count == 0)
        return NULL;
    size_t k = w->file_slots[file_slot(w, path)];
    return k ? &w->files.items[k - 1] : NULL;
}

static ol_workspace_file *add_file(ol_workspace *w, const char *path)
{
    if ((w->files.len + 1) * 2 > w->file_slot_count)
        rehash_files(w, w->file_slot_count ? w->file_slot_count * 2 : 64);
    ol_workspace_file nf = {ol_xstrdup(path), false, 0};
    ol_vec_push(&w->files, nf);
    w->file_slots[file_slot(w, path)] = w->files.len;
    return &ol_vec_last(&w->files);
}

static void remove_file(ol_workspace *w, const char *path)
{
    size_t mask = w->file_slot_count - 1, k = file_slot(w, path);
    size_t at = w->file_slots[k] - 1;
    /* backward-shift deletion keeps every probe sequence unbroken */
    w->file_slots[k] = 0;
    for (size_t j = (k + 1) & mask; w->file_slots[j]; j = (j + 1) & mask) {
        size_t home = path_hash(w->files.items[w->file_slots[j] - 1].path) & mask;
        bool stays = k <= j ? (home > k && home <= j) : (home > k || home <= j);
        if (!stays) {
            w->file_slots[k] = w->file_slots[j];
            w->file_slots[j] = 0;
            k = j;
        }
    }
    free(w->files.items[at].path);
    w->files.items[at] = w->files.items[--w->files.len];
    if (at < w->files.len)
        w->file_slots[file_slot(w, w->files.items[at].path)] = at + 1;
}

void ol_workspace_file_event(ol_workspace *w, const char *path, ol_ws_event ev)
{
    ol_workspace_file *f = (ol_workspace_file *)ol_workspace_find(w, path);
    if (ev == OL_WS_DELETED) {
        if (f) {
            remove_file(w, path);
            w->generation++;
        }
        return;
    }
    if (!f)
        f = add_file(w, path);
    switch (ev) {
    case OL_WS_OPENED:
        f->open = true;
        break;
    case OL_WS_CLOSED:
        f->open = false;
        break;
    case OL_WS_SAVED:
    case OL_WS_CHANGED:
        f->changed = ++w->generation;
        break;
    case OL_WS_DELETED:
        break;
    }
}

bool ol_workspace_covers(const ol_workspace *w, const char *path)
{
    for (size_t i = 0; i < w->folders.len; i++) {
        const char *dir = w->folders.items[i];
        size_t n = strlen(dir);
        if (strncmp(path, dir, n) == 0 && (path[n] == '/' || path[n] == '\0' || (n == 1 && dir[0] == '/')))
            return true;
    }
    return false;
}
