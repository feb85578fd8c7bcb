/*
 * writefile.h - writing files so that none is ever lost or left half
 * written: the sources `--fix` rewrites, and the report `--output-file`
 * names.
 *
 * A file is never written in place while the new text is incomplete. The
 * new bytes go to a temporary file beside the destination (so the rename is
 * atomic and the temporary file shares the destination's file system),
 * which is flushed, fsynced and read back to verify it before the
 * destination is touched. Then:
 *   - a file with one link is replaced by rename(2): readers see the old
 *     text or the new, never a mix, even across a crash;
 *   - a file with several hard links, or whose owner the temporary file
 *     cannot take (not root), is rewritten in place, so every link and the
 *     owner stay: its blocks are reserved first (posix_fallocate), so a full
 *     disk or a file-size limit fails before a byte of it changes, and a
 *     write that fails anyway puts the original bytes back.
 * A symbolic link is written through: its target gets the new text and the
 * link stays a link. Mode and owner are kept.
 *
 * Sources are checked for changes since they were read (device, inode,
 * size, modification time, and then the bytes themselves): if another
 * program or an editor changed the file meanwhile, nothing is written and
 * the caller reports it (OL_ERR_CHANGED).
 */
#ifndef OL_WRITEFILE_H
#define OL_WRITEFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "util.h"

/* The file changed on disk between reading and writing. */
#define OL_ERR_CHANGED (-110)

/* What a file was when it was read. */
typedef struct ol_file_snapshot {
    dev_t dev;
    ino_t ino;
    off_t size;
    struct timespec mtime;
    char *bytes;          /* exactly what was read; owned */
    size_t len;
} ol_file_snapshot;

/* Records st and a copy of the bytes read. */
ol_file_snapshot *ol_snapshot_new(const struct stat *st, const char *bytes, size_t len);
void ol_snapshot_free(ol_file_snapshot *s);

/* Replaces the contents of the regular file at path (through symbolic links)
 * with data, as described above. With a snapshot, refuses (OL_ERR_CHANGED)
 * when the file is no longer what was read. Returns 0, or an errno value or
 * OL_ERR_* with a sentence in why (without the path). */
int ol_replace_file(const char *path, const char *data, size_t len, const ol_file_snapshot *snap, ol_buf *why);

/* The report file of --output-file. Opened once the run's arguments and
 * configuration are known good, written through fp, and committed at the
 * end: a report over a regular file is built in a temporary file and only
 * then renamed over the old one (or copied into it, for a hard-linked or
 * foreign-owned file), so a run that fails leaves the old report whole. A
 * FIFO or a device (`-o /dev/stderr`) is written directly: opening a FIFO
 * waits for its reader, which is what a writer into a pipe asks for. */
typedef struct ol_report_file {
    FILE *fp;
    char *target;         /* the destination after symbolic links */
    char *tmp;            /* the temporary file, or NULL when writing directly */
    bool in_place;        /* copy into the existing file instead of renaming */
} ol_report_file;

bool ol_report_open(ol_report_file *rf, const char *path, ol_buf *why);
/* Flushes and checks every write, then puts the report in place. */
bool ol_report_commit(ol_report_file *rf, ol_buf *why);
/* Drops an unfinished report; the destination keeps what it had. */
void ol_report_discard(ol_report_file *rf);

/* Flushes a stream and reports whether everything written to it arrived
 * (fflush and ferror: a full disk, a closed pipe, /dev/full). */
bool ol_stream_ok(FILE *fp, int *err);

#endif
