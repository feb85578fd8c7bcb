/*
 * glob.h - shell wildcard matching that cannot backtrack without bound.
 *
 * The same language as fnmatch(3) with no flags (or FNM_PATHNAME): `*`, `?`,
 * bracket expressions (`[a-z]`, `[!abc]`, `[^abc]`, `[[:alpha:]]`) and
 * backslash escapes, over bytes. fnmatch tries every way to split the text
 * between the stars, which is exponential in the number of stars; exclude
 * patterns come from a repository's configuration, so a pattern like
 * `*a*a*a*a*a*a*a*a*b` must not be able to stall a run. Here a star only
 * ever resumes from the last star seen, so a match costs at most the
 * pattern's length times the text's. Configuration patterns add `{a,b}`
 * alternatives and path components (ol_glob_path_match), matched in the
 * same spirit: never by writing the alternatives out.
 */
#ifndef OL_GLOB_H
#define OL_GLOB_H

#include <stdbool.h>

/* fnmatch(pattern, text, pathname ? FNM_PATHNAME : 0) == 0, in
 * O(strlen(pattern) * strlen(text)). With pathname, wildcards do not match
 * '/' and each '/' of the text must meet a '/' of the pattern. */
bool ol_wildmatch(const char *pattern, const char *text, bool pathname);

/* Bounds on a configuration's path patterns: a longer or more deeply
 * nested pattern is a configuration error (ol_glob_check), and matches
 * nothing if it is matched anyway. */
#define OL_GLOB_MAX_BYTES 4096
#define OL_GLOB_MAX_NESTING 8
#define OL_GLOB_STR_(x) #x
#define OL_GLOB_STR(x) OL_GLOB_STR_(x)

/* Why pattern is past the bounds ("is longer than 4096 bytes"), or NULL. */
const char *ol_glob_check(const char *pattern);

/* Does a path pattern of a configuration match a path relative to the
 * configuration's directory (rel) or absolute (abs)? Either may be NULL.
 * On top of ol_wildmatch's wildcards within a component: `{a,b}` is either
 * alternative (nested, with backslash escapes; a '{' that no '}' closes,
 * and all after it, is literal); a pattern matches a path when it matches
 * its first k >= 1 components (so a directory matches all below it), a
 * `**` component matching any number of them, empty and `.` components
 * dropped; an alternative that starts with '/' is matched against abs,
 * others against rel; and one of a single component without '/' (a bare
 * name) also matches the path's last component, or with any_name any one.
 * Alternatives are never written out: a match costs the pattern's length
 * times the path's. A bracket expression is read within the text between
 * a group's tokens: a `[` whose `]` lies past a '{', ',' or '}' of a group
 * is an ordinary character (writing the alternatives out made one bracket
 * of `[{]x}` and the next alternative's text). */
bool ol_glob_path_match(const char *pattern, const char *rel, const char *abs, bool any_name);

#endif
