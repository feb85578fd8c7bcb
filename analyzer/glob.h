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
 * pattern's length times the text's.
 */
#ifndef OL_GLOB_H
#define OL_GLOB_H

#include <stdbool.h>

/* fnmatch(pattern, text, pathname ? FNM_PATHNAME : 0) == 0, in
 * O(strlen(pattern) * strlen(text)). With pathname, wildcards do not match
 * '/' and each '/' of the text must meet a '/' of the pattern. */
bool ol_wildmatch(const char *pattern, const char *text, bool pathname);

#endif
