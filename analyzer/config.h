/*
 * config.h - project configuration: `[tool.oomlint]` in pyproject.toml.
 *
 * A configuration sets rule selection (`select`, `extend-select`, `ignore`),
 * `per-file-ignores` and `exclude`, and for the run as a whole
 * `output-format` and `fail-on`. For each linted file the nearest
 * pyproject.toml with a [tool.oomlint] table, searched upward from the
 * file's directory, applies (pyproject files without the table are passed
 * over, as Ruff does); `--config PATH` names one file for every input
 * instead, and `--isolated` ignores configuration altogether.
 *
 * Rule selection is resolved in layers, as Ruff does: the configuration's
 * selectors first, then the command line's. Within a layer the more specific
 * selector wins; a later layer's `select` replaces everything before it,
 * while its `extend-select` and `ignore` adjust only the rules they match.
 * So a CLI --select replaces the file's rule set, and CLI --ignore and
 * --extend-select add to it and win over it. Per-file ignores then switch
 * rules off for the files they match. Patterns in a configuration are
 * relative to the directory holding it (see ol_glob_match for the syntax).
 *
 * The resolver (ol_resolver) owns everything: configurations are parsed
 * once, and the answer "which configuration covers this directory" is
 * cached for every directory on the way up, so a tree of thousands of files
 * reads each pyproject.toml once. Each distinct rule set becomes one
 * ol_settings that inputs point to (ol_input.settings). The resolver is
 * used on one thread, before linting starts; what it hands out is immutable
 * and shared by the lint threads.
 */
#ifndef OL_CONFIG_H
#define OL_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lint.h"
#include "select.h"

typedef struct ol_per_file_ignore {
    char *pattern;
    ol_strvec selectors;
    uint32_t line;        /* where the pattern is written */
} ol_per_file_ignore;

typedef OL_VEC(ol_per_file_ignore) ol_pfi_vec;

typedef struct ol_config {
    char *path;           /* the file, as shown in messages */
    char *dir;            /* absolute directory that patterns are relative to */
    ol_selection selection;
    /* `per-file-ignores` replaces the default (test code: see
     * ol_default_per_file_ignores), `extend-per-file-ignores` adds to it */
    ol_pfi_vec per_file_ignores;
    bool has_per_file_ignores;
    ol_pfi_vec extend_per_file_ignores;
    ol_strvec exclude;    /* `exclude` and `extend-exclude`: both add to the built-in skips */
    int respect_gitignore; /* `respect-gitignore`: -1 not set, else 0 or 1 */
    /* Run-wide settings, taken from the configuration that covers the
     * current directory (as Ruff takes its own): NULL when not set. */
    char *output_format;  /* `output-format`, a name ol_format_parse knows */
    char *fail_on;        /* `fail-on`: error, warning or info */
} ol_config;

/* Reads the [tool.oomlint] table of a TOML document. *found says whether
 * the table exists (when it does not, c is empty). On an error (bad TOML,
 * unknown key, wrong type, unknown rule code) returns false and writes
 * "display:line: message" to err. */
bool ol_config_parse(ol_config *c, const char *display, const char *text, size_t len, bool *found, ol_buf *err);
void ol_config_free(ol_config *c);

/* The default per-file-ignores: the patterns that name test code
 * (test_*.py, *_test.py, conftest.py, and everything under a tests/ or
 * test/ directory) and, for each, the rules that are not run on tests as
 * selectors (every rule whose `in_tests` is false, as short prefixes). A
 * finding these hide is counted, and the summary says how many there were.
 * A configuration's `per-file-ignores` replaces them. */
extern const char *const ol_default_test_patterns[];
void ol_default_test_ignores(ol_strvec *out);

/* Does a configuration pattern match a path relative to its directory?
 * `*` and `?` and `[...]` match within one path component, a `**`
 * component matches any number of components, `{a,b}` is either. A pattern
 * also matches every path below a directory it matches. With `any_name`,
 * a pattern without `/` matches any single component (exclude); without,
 * it matches the file name too (per-file-ignores). rel may be NULL for a
 * file outside the configuration's directory: then only name matching and
 * absolute patterns (matched against abs) apply. */
bool ol_glob_match(const char *pattern, const char *rel, const char *abs, bool any_name);

typedef struct ol_config_options {
    bool isolated;                 /* --isolated: no configuration at all */
    const char *config_path;       /* --config PATH, or NULL to search */
    const ol_selection *cli;       /* the command line's selectors */
    const ol_strvec *cli_exclude;  /* the command line's --exclude, for --show-settings */
    const char *stdin_filename;    /* --stdin-filename, or NULL */
    bool test_code_linted;         /* the default per-file-ignores of test code do not apply
                                      (probe --script: the user asks about this very script) */
    bool ran_on_gpu;               /* the code is known to have run on a GPU (oomlint explain, from an
                                      out-of-memory error): findings of GPU memory are kept on code that
                                      names no device */
} ol_config_options;

typedef struct ol_config_cache ol_config_cache;

typedef struct ol_resolver {
    ol_config_options opts;
    char *cwd;                     /* absolute; NULL when isolated */
    ol_config *explicit_config;    /* --config */
    OL_VEC(ol_config *) configs;   /* every configuration read */
    ol_config_cache *cache;        /* directory -> configuration (or none) */
    OL_VEC(ol_settings *) settings; /* distinct rule sets handed out */
    ol_buf error;                  /* the first error, "path:line: message" */
    bool failed;
    /* the last directory whose project top was looked up, and that top (or
     * NULL): files come sorted, so a directory's files ask one after another */
    char *top_of_dir;
    char *top;
} ol_resolver;

/* Reads --config when given. Returns false with r->error set on failure;
 * ol_resolver_free is needed either way. */
bool ol_resolver_init(ol_resolver *r, const ol_config_options *o);
void ol_resolver_free(ol_resolver *r);

/* For directory discovery: is path excluded by the configuration covering
 * the directory it is in? After an error, answers true (so the walk ends
 * quickly) and r->failed is set. ctx is the resolver. */
bool ol_resolver_excluded(void *ctx, const char *path);

/* The configuration of the run itself (for `output-format` and `fail-on`):
 * --config's file, else the one covering the current directory; *out is
 * NULL when there is none (or --isolated). Returns false on an error. */
bool ol_resolver_run_config(ol_resolver *r, const ol_config **out);

/* The settings (rule set) for one input. Returns false on an error. */
bool ol_resolver_settings_for(ol_resolver *r, const ol_input *in, const ol_settings **out);

/* --show-settings: the resolved settings for one path, as readable text. */
bool ol_resolver_show(ol_resolver *r, const ol_input *in, ol_buf *out);

#endif
