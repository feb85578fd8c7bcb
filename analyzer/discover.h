/*
 * discover.h - turning the command line's paths into the list of files to
 * lint.
 *
 * A directory is searched recursively for *.py and *.ipynb files, skipping
 * hidden directories, __pycache__, virtual environments (a pyvenv.cfg, or
 * the usual names) and the directories Ruff skips by default, plus anything
 * matching --exclude or a configuration's `exclude`, and (respect-gitignore)
 * what git ignores. A path named explicitly is always linted unless
 * --force-exclude is given. `-` is standard input. A path that does not
 * exist or cannot be read, or that names a FIFO, socket or device, becomes an
 * input carrying its error, so it is reported (OOM001) in its place in the
 * output and the run goes on.
 */
#ifndef OL_DISCOVER_H
#define OL_DISCOVER_H

#include <stdbool.h>
#include <stddef.h>

#include "lint.h"
#include "select.h"

typedef OL_VEC(ol_input) ol_input_vec;

typedef struct ol_discover_options {
    const ol_strvec *exclude;   /* glob patterns */
    bool force_exclude;         /* apply exclude to explicit paths too */
    const char *stdin_filename; /* display name for `-` */
    /* more exclusion (configuration files: ol_resolver_excluded), or NULL */
    bool (*excluded)(void *ctx, const char *path);
    void *excluded_ctx;
    /* counts the files and directories left out because they are excluded
     * (so a run whose every path was excluded can say so), or NULL */
    size_t *excluded_count;
    /* leave out what git ignores while walking a directory (gitignore.h);
     * a path named explicitly is linted all the same */
    bool respect_gitignore;
} ol_discover_options;

void ol_discover(const char *const *paths, size_t count, const ol_discover_options *opts, ol_input_vec *out);
void ol_input_vec_free(ol_input_vec *v);

/* Does path (or its final component) match any of the patterns? */
bool ol_path_excluded(const char *path, const ol_strvec *patterns);

#endif
