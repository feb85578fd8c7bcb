/*
 * util.h - the declarations of this part of the engine that only the
 * engine uses: reading files and streams, the interner's table (rules
 * intern through the model), where temporary files go, and the edit
 * distance behind "did you mean". What rules may use of it is declared in
 * public/util.h, included here, so each thing is declared once and rules,
 * whose include path holds only analyzer/public/, see only their half
 * (docs/how-it-works.md).
 */
#ifndef OL_UTIL_H
#define OL_UTIL_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "public/util.h"

/* CLOCK_MONOTONIC in nanoseconds. */
uint64_t ol_now_ns(void);

/* Where temporary files go: $TMPDIR, or /tmp when it is unset or empty. */
const char *ol_tmpdir(void);
/* A size in bytes from the environment variable `name`, given there in KB
 * (tests set bounds this way): `fallback` when it is unset, not a number,
 * below min_kb, or too large. */
size_t ol_env_kb(const char *name, unsigned long long min_kb, size_t fallback);
/* A temporary file, already unlinked (its bytes go when it is closed), named
 * oomlint-STEM-XXXXXX under ol_tmpdir() while it is made; -1 when it cannot
 * be made. */
int ol_temp_fd(const char *stem);
/* pwrite/pread of all n bytes at off, through short counts and EINTR; false
 * (errno set) when that fails. */
bool ol_pwrite_all(int fd, const void *data, size_t n, uint64_t off);
bool ol_pread_all(int fd, void *data, size_t n, uint64_t off);
void ol_interner_init(ol_interner *in);
uint32_t ol_intern(ol_interner *in, const char *s, size_t n);
uint32_t ol_intern_cstr(ol_interner *in, const char *s);

/* Returns the id of s if it was interned before, else 0 (interns nothing). */
uint32_t ol_intern_find(const ol_interner *in, const char *s, size_t n);
const char *ol_interned(const ol_interner *in, uint32_t id);
void ol_interner_free(ol_interner *in);

/* Appends a reader's description of a read error: "no such file or
 * directory", "file is larger than the 64 MiB oomlint reads", ... */
void ol_describe_read_error(ol_buf *out, int err, size_t max_bytes, const char *what);

/* Read errors that are no errno: the path names something other than a
 * regular file (reading a FIFO or a terminal would block, a device never
 * ends). ol_describe_read_error names the kind. */
#define OL_ERR_FIFO (-101)
#define OL_ERR_SOCKET (-102)
#define OL_ERR_DEVICE (-103)
#define OL_ERR_NOT_REGULAR (-104)

/* The OL_ERR_* for a file mode that is neither a regular file nor a
 * directory, or 0. */
int ol_file_type_error(unsigned mode);

/* Reads a whole regular file or a stream of at most max_bytes. Returns 0 on
 * success, else an errno value (EFBIG past max_bytes, EISDIR for a
 * directory) or an OL_ERR_* for anything that is not a regular file, which
 * is never opened in a way that blocks. The result is NUL-terminated. */
int ol_read_file(const char *path, size_t max_bytes, char **out, size_t *out_len);
/* The same, also giving what fstat said of the file that was read (st may
 * be NULL). */
struct stat;
int ol_read_file_stat(const char *path, size_t max_bytes, char **out, size_t *out_len, struct stat *st);
int ol_read_stream(int fd, size_t max_bytes, char **out, size_t *out_len);

/* Levenshtein distance between a (a_len bytes) and b (b_len bytes), for
 * "did you mean" suggestions; SIZE_MAX when either is longer than 64. */
size_t ol_edit_distance(const char *a, size_t a_len, const char *b, size_t b_len);

/* The one of names[0..count) that word (len bytes) most likely misspells:
 * the nearest within one edit for words of up to four letters, two up to
 * twelve, three beyond (the first of equals), else the only name that
 * begins with word (three letters at least). NULL when none is near. */
const char *ol_closest_word(const char *word, size_t len, const char *const *names, size_t count);

#endif
