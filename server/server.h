/*
 * server.h - `oomlint server`: the language server, LSP 3.17 over stdio.
 *
 * One process serves one client. It keeps the client's open buffers
 * (server_docs.c), lints each Python document or notebook in-process with
 * the same engine as the command line (server_lint.c), pushes or serves the
 * findings as diagnostics, and answers code actions and hovers
 * (server_actions.c). The loop, the lifecycle and the settings live in
 * server_main.c; framing in server_rpc.c; the workspace index that
 * whole-program facts will read in server_workspace.c.
 *
 * Everything the server knows lives in one ol_server value owned by the
 * loop: no global state, so a test can run several servers in one process.
 */
#ifndef OL_SERVER_H
#define OL_SERVER_H

#include <stdbool.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "cli.h"
#include "config.h"
#include "diag.h"
#include "lint.h"
#include "server_docs.h"
#include "server_rpc.h"

/* The most text (a document, or a notebook's cells together) the server
 * lints. Linting costs about 30 times the text in memory at its peak, so a
 * 50 MB buffer would take gigabytes for a result no editor can show; past
 * this the document is kept (edits still apply) but not linted, and the
 * client is told so. The command line reads up to OL_MAX_SOURCE_BYTES. */
#define OL_SERVER_MAX_LINT_BYTES (16u * 1024u * 1024u)

/* Runs the server on stdin/stdout until the client says exit or goes away.
 * Returns the process exit status: 0 after shutdown + exit, 1 otherwise. */
int ol_server_main(const ol_cli *cli);

/* ---- shared between the server_*.c files ------------------------------------ */

/* The workspace: folders the client opened and the Python files the server
 * has seen (open, saved, changed on disk). Whole-program facts (summaries of
 * neighbouring files) are looked up here: see server_lint.c. */
typedef struct ol_workspace_file {
    char *path;
    bool open;          /* a buffer for it is open in the client */
    uint64_t changed;   /* generation of its last save or change on disk */
} ol_workspace_file;

typedef struct ol_workspace {
    ol_strvec folders;  /* absolute paths */
    OL_VEC(ol_workspace_file) files;
    size_t *file_slots;     /* hash table of files' indexes + 1 (0 = empty), so a
                             * storm of file events costs one lookup each */
    size_t file_slot_count; /* a power of two, or 0 */
    uint64_t generation; /* bumped by every save or change on disk */
    /* The project store of the folders' Python files and their summaries
     * (project.h), built at the first lint that needs it; NULL before, and
     * after the folders or the configuration changed. */
    struct ol_project *project;
    ol_strvec project_paths; /* the project's files, by index, as discovered */
    uint64_t project_gen;    /* bumped whenever the store is dropped */
    bool project_unindexed;  /* files were added since its last ol_project_index */
} ol_workspace;

typedef enum ol_ws_event {
    OL_WS_OPENED,
    OL_WS_CLOSED,
    OL_WS_SAVED,
    OL_WS_CHANGED,   /* changed or created on disk */
    OL_WS_DELETED,
} ol_ws_event;

void ol_workspace_init(ol_workspace *w);
void ol_workspace_free(ol_workspace *w);
/* From initialize's workspaceFolders (or rootUri / rootPath). */
void ol_workspace_set_folders(ol_workspace *w, const cJSON *init_params);
/* workspace/didChangeWorkspaceFolders' event {added, removed}. */
void ol_workspace_change_folders(ol_workspace *w, const cJSON *event);
void ol_workspace_file_event(ol_workspace *w, const char *path, ol_ws_event ev);
/* Is path inside one of the folders? */
bool ol_workspace_covers(const ol_workspace *w, const char *path);
/* Drops the project store (rebuilt at the next lint that needs it). */
void ol_workspace_drop_project(ol_workspace *w);
const ol_workspace_file *ol_workspace_find(const ol_workspace *w, const char *path);

typedef struct ol_server_settings {
    ol_selection selection; /* the editor's: added to the command line's */
    bool unsafe_fixes;      /* fix-all applies unsafe fixes too */
    ol_severity fail_on;    /* findings below this severity are not shown */
} ol_server_settings;

/* A notebook cell as the notebook document lists it. */
typedef struct ol_nb_cell {
    char *uri;
    bool code;
} ol_nb_cell;

/* Where one code cell sits in a notebook's joined text. */
typedef struct ol_segment {
    char *uri;          /* the cell's document */
    uint32_t start;     /* first byte of the cell in the joined text */
    uint32_t len;       /* the cell's own length (joining may add a '\n') */
} ol_segment;

/* A configuration file as it was when the resolver last looked, to notice
 * when it changes, appears or goes away. */
typedef struct ol_config_stamp {
    char *path;
    int64_t mtime_ns, size, ino;
    bool exists;
} ol_config_stamp;

/* What is linted as one program: a text document, or a notebook's code cells. */
typedef struct ol_unit {
    char *uri;            /* the text document's or the notebook's URI */
    char *path;           /* the file, or NULL (untitled, other schemes) */
    bool notebook;
    int64_t version;      /* notebooks: the notebook's version */
    OL_VEC(ol_nb_cell) cells; /* notebooks: every cell, in order */
    bool dirty;           /* changed since the last lint */
    bool unpublished;     /* linted since its diagnostics were last pushed (whatever linted it) */
    bool linted;
    ol_file_result result;    /* the last lint: its text (joined for notebooks) and findings */
    const ol_settings *settings; /* the rule set it was linted with (the resolver's), or NULL */
    OL_VEC(ol_segment) segments; /* notebooks: the code cells of result's text */
    char *config_error;   /* why the configuration could not be read, or NULL */
    size_t too_large;     /* bytes of text when past OL_SERVER_MAX_LINT_BYTES (not linted), else 0 */
    bool told_too_large;  /* the user was shown that it is not linted */
    ol_strvec pushed;     /* URIs that were last sent a non-empty diagnostics list */
    cJSON *fix_all;       /* the fix-all WorkspaceEdit for result, once computed (or a JSON null) */
    size_t project_file;  /* its index in the workspace's project store, or (size_t)-1 */
    uint64_t project_gen; /* the store's project_gen when project_file was found; 0: not looked up */
} ol_unit;

typedef struct ol_server {
    const ol_cli *cli;
    ol_rpc_reader in;
    ol_rpc_writer out;
    bool initialized;     /* initialize was answered */
    bool shutdown;        /* shutdown was answered */
    bool exit;            /* exit arrived */
    ol_pos_encoding enc;
    bool pull;            /* the client pulls diagnostics: nothing is pushed */
    bool refresh_support; /* the client accepts workspace/diagnostic/refresh */
    bool watch_registration; /* the client lets us register file watchers */
    bool related_information; /* the client shows a diagnostic's relatedInformation */
    int next_id;          /* ids of requests we send */

    ol_grammar grammar;
    ol_linter linter;
    ol_linter side_linter;  /* summarizes neighbouring files while linter lints a unit */
    ol_config_options config_opts;
    ol_selection selection; /* the command line's and the editor's, merged */
    ol_resolver resolver;
    bool resolver_ready;
    ol_server_settings settings;
    cJSON *init_options;    /* initializationOptions (its "oomlint" member if it has one) */
    cJSON *client_settings; /* the last didChangeConfiguration's, likewise; keys here win */
    ol_strvec shown_errors; /* configuration errors already shown to the user */
    OL_VEC(ol_config_stamp) config_files; /* every pyproject.toml that could apply */

    ol_doc_store docs;
    OL_VEC(ol_unit *) units;
    ol_workspace workspace;

    uint64_t lints;         /* lints run, for the log */
} ol_server;

/* server_main.c */
void ol_server_send(ol_server *s, cJSON *msg); /* takes msg */
void ol_server_log(ol_server *s, int type, const char *fmt, ...) OL_PRINTF(3, 4);
void ol_server_show(ol_server *s, int type, const char *text);

/* server_lint.c */
ol_unit *ol_unit_new(const char *uri, bool notebook);
void ol_unit_free(ol_unit *u);
/* The unit a document belongs to: its own, or its notebook's. */
ol_unit *ol_server_unit_of(ol_server *s, const char *doc_uri);
ol_unit *ol_server_unit(ol_server *s, const char *uri);
void ol_server_drop_unit(ol_server *s, const char *uri);
/* Lints u now if it changed. */
void ol_server_lint(ol_server *s, ol_unit *u);
/* Sends the unit's diagnostics (push mode). */
void ol_server_publish(ol_server *s, ol_unit *u);
/* Clears what was pushed for u's documents. */
void ol_server_clear(ol_server *s, ol_unit *u);
/* Forgets the configuration read so far (it changed, or the settings did)
 * and marks every unit for a new lint. */
void ol_server_reset_config(ol_server *s);
/* Looks at the configuration files seen so far; resets when one changed.
 * Returns true when it did. */
bool ol_server_check_config(ol_server *s);
/* Whole-program facts: the file at path changed (a save, a change on disk,
 * or, with saved false, an edit in its buffer). Its summary is recomputed
 * when next needed; on a save or change on disk the other open units of the
 * workspace's project are marked for a new lint. Returns true when some
 * were. */
bool ol_server_file_changed(ol_server *s, const char *path, bool saved);
/* The workspace's project store unit u is linted in, and u's index there
 * (the store is built on first use); NULL when u is linted alone. */
struct ol_project *ol_server_unit_project(ol_server *s, ol_unit *u, size_t *file);
/* A Python file appeared in (or left) the workspace on disk. */
void ol_server_file_created(ol_server *s, const char *path);
/* Is the finding shown under the current settings? */
bool ol_server_shown(const ol_server *s, const ol_diag *d);
/* Where a byte of u's linted text is: the document and the byte in it.
 * is_end: an offset at a cell boundary ends the cell before it. */
bool ol_unit_place(ol_server *s, const ol_unit *u, uint32_t at, bool is_end, ol_doc **doc, uint32_t *byte);
/* A finding's byte range in its document; false when it is in no document. */
bool ol_unit_span(ol_server *s, const ol_unit *u, uint32_t start, uint32_t end, ol_doc **doc, uint32_t *x,
                  uint32_t *y);
/* A finding's LSP range in its document; false when it is in no document. */
bool ol_unit_range(ol_server *s, const ol_unit *u, uint32_t start, uint32_t end, ol_doc **doc, ol_lsp_pos *a,
                   ol_lsp_pos *b);
/* The LSP Diagnostic of a finding of u, at a..b: its evidence as
 * relatedInformation when the client shows it, a guess in `data`. */
cJSON *ol_server_diagnostic(ol_server *s, const ol_unit *u, const ol_diag *d, ol_lsp_pos a, ol_lsp_pos b);
/* Where a note of a finding of u is, for an LSP client: a document URI
 * (owned) and a range; false when it is in no document. */
bool ol_server_note_place(ol_server *s, const ol_unit *u, const ol_note *n, char **uri, ol_lsp_pos *a,
                          ol_lsp_pos *b);
/* The diagnostics of u that fall in document doc_uri (textDocument/diagnostic). */
cJSON *ol_server_diagnostics_for(ol_server *s, ol_unit *u, const char *doc_uri);

/* server_actions.c */
cJSON *ol_server_code_actions(ol_server *s, const cJSON *params, int *error);
cJSON *ol_server_hover(ol_server *s, const cJSON *params, int *error);

#endif
