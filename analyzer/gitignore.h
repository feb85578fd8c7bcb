/*
 * gitignore.h - what git ignores, for directory discovery
 * (`respect-gitignore`, on by default as in Ruff).
 *
 * Inside a git work tree (a directory with .git at or above the walk's
 * root), a path is ignored by the last pattern that matches it, from the
 * lowest precedence to the highest: the global excludes file (git's
 * core.excludesFile when ~/.gitconfig sets it plainly, else
 * $XDG_CONFIG_HOME/git/ignore or ~/.config/git/ignore), .git/info/exclude,
 * then the .gitignore of each directory from the work tree's top down to
 * the path's own. Patterns follow gitignore(5): `#` comments, `!` negation,
 * a trailing `/` for directories only, a `/` at the start or in the middle
 * anchors a pattern to its .gitignore's directory (otherwise it matches a
 * name at any depth), `**` components match any number of directories,
 * backslash escapes. Discovery does not enter an ignored directory, so as
 * in git nothing inside it can be re-included. Matching is by dynamic
 * programming over path components, so no pattern can make it
 * exponential. Outside a work tree nothing is ignored (as in Ruff).
 */
#ifndef OL_GITIGNORE_H
#define OL_GITIGNORE_H

#include <stdbool.h>

typedef struct ol_gitignore ol_gitignore;

/* The rules that apply in directory `dir` (as the walk names it), read
 * from the work tree above it; NULL when dir is not in a work tree. */
ol_gitignore *ol_gitignore_open(const char *dir);
/* The rules for a subdirectory of `parent`'s directory: parent's plus the
 * subdirectory's own .gitignore. parent may be NULL (then NULL). */
ol_gitignore *ol_gitignore_enter(ol_gitignore *parent, const char *subdir);
/* Is the entry `name` of the rules' directory ignored? */
bool ol_gitignore_ignored(const ol_gitignore *g, const char *name, bool is_dir);
/* Frees every set made from the one ol_gitignore_open returned. */
void ol_gitignore_free(ol_gitignore *root);

#endif
