/*
 * writefile.c - safe replacement of sources and reports (see writefile.h
 * for the guarantees). Everything here is plain POSIX on file descriptors;
 * errors come back as errno values with a sentence, and every failure path
 * removes its temporary file unless that file holds the only complete copy
 * of the new text.
 */
#include "writefile.h"

#include "portable.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* How many symbolic links a path may go through, as the kernel allows. */
#define MAX_LINK_HOPS 40

ol_file_snapshot *ol_snapshot_new(const struct stat *st, const char *bytes, size_t len)
{
    ol_file_snapshot *s = ol_xcalloc(1, sizeof(*s));
    s->dev = st->st_dev;
    s->ino = st->st_ino;
    s->size = st->st_size;
    s->mtime = st->st_mtim;
    s->bytes = ol_xmalloc(len + 1);
    memcpy(s->bytes, bytes, len);
    s->bytes[len] = '\0';
    s->len = len;
    return s;
}

void ol_snapshot_free(ol_file_snapshot *s)
{
    if (!s)
        return;
    free(s->bytes);
    free(s);
}

static bool same_stamp(const struct stat *st, const ol_file_snapshot *s)
{
    return st->st_dev == s->dev && st->st_ino == s->ino && st->st_size == s->size &&
           st->st_mtim.tv_sec == s->mtime.tv_sec && st->st_mtim.tv_nsec == s->mtime.tv_nsec;
}

/* ---- paths ------------------------------------------------------------------ */

static char *dir_of(const char *path)
{
    const char *slash = strrchr(path, '/');
    if (!slash)
        return ol_xstrdup(".");
    if (slash == path)
        return ol_xstrdup("/");
    return ol_xstrndup(path, (size_t)(slash - path));
}

/* Follows symbolic links from path to what they finally name (which need
 * not exist yet). Returns NULL with *err set on a loop or a read error. */
static char *resolve_links(const char *path, int *err)
{
    char *cur = ol_xstrdup(path);
    for (int hops = 0;; hops++) {
        struct stat st;
        if (lstat(cur, &st) != 0 || !S_ISLNK(st.st_mode))
            return cur; /* not a link (or not there: it will be created) */
        if (hops >= MAX_LINK_HOPS) {
            free(cur);
            *err = ELOOP;
            return NULL;
        }
        size_t cap = st.st_size > 0 ? (size_t)st.st_size + 1 : PATH_MAX;
        char *link = ol_xmalloc(cap);
        ssize_t n = readlink(cur, link, cap);
        if (n < 0 || (size_t)n >= cap) {
            *err = n < 0 ? errno : ENAMETOOLONG;
            free(link);
            free(cur);
            return NULL;
        }
        link[n] = '\0';
        char *next;
        if (link[0] == '/') {
            next = link;
        } else {
            char *dir = dir_of(cur);
            next = ol_xasprintf("%s/%s", dir, link);
            free(dir);
            free(link);
        }
        free(cur);
        cur = next;
    }
}

/* Creates a new file beside target, named .NAME.oomlint-XXXXXX, with
 * `mode` (less the umask). Returns its path and sets *fd, or NULL with *err. */
static char *temp_beside(const char *target, mode_t mode, int *fd, int *err)
{
    char *dir = dir_of(target);
    const char *slash = strrchr(target, '/');
    const char *base = slash ? slash + 1 : target;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    uint64_t seed = (uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 20) ^ ((uint64_t)getpid() << 40) ^
                    (uint64_t)(uintptr_t)&ts;
    static const char digits[] = "abcdefghijklmnopqrstuvwxyz0123456789";
    for (int attempt = 0; attempt < 100; attempt++) {
        char suffix[7];
        for (int i = 0; i < 6; i++) {
            seed = seed * 6364136223846793005u + 1442695040888963407u;
            suffix[i] = digits[(seed >> 33) % 36];
        }
        suffix[6] = '\0';
        char *tmp = ol_xasprintf("%s/.%.200s.oomlint-%s", dir, base, suffix);
        int f = open(tmp, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOCTTY, mode);
        if (f >= 0) {
            free(dir);
            *fd = f;
            return tmp;
        }
        *err = errno;
        free(tmp);
        if (*err != EEXIST)
            break;
    }
    free(dir);
    return NULL;
}

static void sync_dir_of(const char *path)
{
    /* makes the rename durable; a failure here loses nothing that was not
     * already at the file system's mercy, so it is not reported */
    char *dir = dir_of(path);
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd >= 0) {
        (void)fsync(fd);
        close(fd);
    }
    free(dir);
}

/* ---- descriptors ------------------------------------------------------------- */

static int pwrite_all(int fd, const char *data, size_t len, off_t at)
{
    size_t done = 0;
    while (done < len) {
        ssize_t w = pwrite(fd, data + done, len - done, at + (off_t)done);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            return errno;
        }
        if (w == 0)
            return EIO;
        done += (size_t)w;
    }
    return 0;
}

/* Do the first len bytes of fd, and nothing after them, equal data? */
static int verify_fd(int fd, const char *data, size_t len)
{
    struct stat st;
    if (fstat(fd, &st) != 0)
        return errno;
    if ((uintmax_t)st.st_size != (uintmax_t)len)
        return EIO;
    char buf[65536];
    size_t done = 0;
    while (done < len) {
        size_t want = len - done < sizeof buf ? len - done : sizeof buf;
        ssize_t got = pread(fd, buf, want, (off_t)done);
        if (got < 0) {
            if (errno == EINTR)
                continue;
            return errno;
        }
        if (got == 0 || memcmp(buf, data + done, (size_t)got) != 0)
            return EIO;
        done += (size_t)got;
    }
    return 0;
}

/* Writes data into a fresh temporary file, syncs it and reads it back. */
static int fill_temp(int fd, const char *data, size_t len)
{
    int err = pwrite_all(fd, data, len, 0);
    if (!err && fsync(fd) != 0)
        err = errno;
    if (!err)
        err = verify_fd(fd, data, len);
    return err;
}

/* Gives the temporary file fd the identity of st. Sets *owner_kept. */
static int take_identity(int fd, const struct stat *st, bool *owner_kept)
{
    *owner_kept = true;
    if (st->st_uid != geteuid() || st->st_gid != getegid()) {
        /* root can; anyone else keeps the owner by writing in place */
        if (fchown(fd, st->st_uid, st->st_gid) != 0)
            *owner_kept = false;
    }
    /* after fchown, which clears set-user-ID bits */
    if (fchmod(fd, st->st_mode & 07777) != 0)
        return errno;
    return 0;
}

/* Rewrites the regular file at target (whose stat was st) in place. Its
 * blocks are reserved first, so running out of space or into a size limit
 * changes nothing; if writing fails after that, `original` (when given) is
 * put back. Sets *damaged when the file may now hold neither text. */
static int rewrite_in_place(const char *target, const struct stat *st, const char *data, size_t len,
                            const char *original, size_t original_len, bool *damaged)
{
    *damaged = false;
    int fd = open(target, O_WRONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
    if (fd < 0)
        return errno;
    struct stat now;
    if (fstat(fd, &now) != 0 || now.st_dev != st->st_dev || now.st_ino != st->st_ino || !S_ISREG(now.st_mode)) {
        close(fd);
        return OL_ERR_CHANGED;
    }
    if ((uintmax_t)len > (uintmax_t)now.st_size) {
        int rc = ol_fallocate(fd, (off_t)len);
        if (rc != 0) {
            /* an emulated fallocate may have grown the file: undo that */
            struct stat after;
            if (fstat(fd, &after) == 0 && after.st_size != now.st_size)
                (void)ftruncate(fd, now.st_size);
            close(fd);
            return rc;
        }
    }
    int err = pwrite_all(fd, data, len, 0);
    if (!err && (uintmax_t)len < (uintmax_t)now.st_size && ftruncate(fd, (off_t)len) != 0)
        err = errno;
    if (!err && fsync(fd) != 0)
        err = errno;
    if (err) {
        bool restored = original && pwrite_all(fd, original, original_len, 0) == 0 &&
                        ftruncate(fd, (off_t)original_len) == 0 && fsync(fd) == 0;
        *damaged = !restored;
    }
    close(fd);
    return err;
}

/* ---- sources ------------------------------------------------------------------- */

static const char *reason(int err)
{
    switch (err) {
    case OL_ERR_CHANGED:
        return "it changed on disk since oomlint read it";
    case OL_ERR_FIFO:
    case OL_ERR_SOCKET:
    case OL_ERR_DEVICE:
    case OL_ERR_NOT_REGULAR:
        return "it is not a regular file";
    default:
        return strerror(err);
    }
}

/* Describes err in why, optionally followed by what was being done. */
static int fail(ol_buf *why, int err, const char *doing)
{
    ol_buf_printf(why, "%s%s%s; the file was left unchanged", reason(err), doing ? " " : "", doing ? doing : "");
    return err;
}

int ol_replace_file(const char *path, const char *data, size_t len, const ol_file_snapshot *snap, ol_buf *why)
{
    int err = 0;
    char *target = resolve_links(path, &err);
    if (!target)
        return fail(why, err, NULL);
    int fd = open(target, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0) {
        err = errno;
        if (fd >= 0)
            close(fd);
        free(target);
        return fail(why, err, NULL);
    }
    err = S_ISDIR(st.st_mode) ? EISDIR : ol_file_type_error(st.st_mode);
    char *current = NULL;
    size_t current_len = 0;
    if (!err && snap && !same_stamp(&st, snap))
        err = OL_ERR_CHANGED;
    if (!err) {
        /* the bytes on disk now: compared with the snapshot, and put back
         * if an in-place rewrite fails halfway */
        int rc = ol_read_stream(fd, snap ? snap->len : (size_t)st.st_size, &current, &current_len);
        if (rc == EFBIG)
            err = OL_ERR_CHANGED; /* it grew */
        else if (rc)
            err = rc;
        else if (snap && (current_len != snap->len || memcmp(current, snap->bytes, current_len) != 0))
            err = OL_ERR_CHANGED;
    }
    close(fd);
    if (err) {
        free(current);
        free(target);
        return fail(why, err, NULL);
    }

    bool in_place = st.st_nlink > 1;
    int tfd = -1, terr = 0;
    char *tmp = temp_beside(target, 0600, &tfd, &terr);
    if (tmp) {
        bool owner_kept;
        err = fill_temp(tfd, data, len);
        if (!err)
            err = take_identity(tfd, &st, &owner_kept);
        if (!err && !owner_kept)
            in_place = true;
        if (close(tfd) != 0 && !err)
            err = errno;
        if (err) {
            unlink(tmp);
            free(tmp);
            free(current);
            free(target);
            return fail(why, err, "(while writing the new text to a temporary file)");
        }
    } else if (terr == EACCES || terr == EPERM) {
        /* a directory we may not add to, holding a file we may write */
        in_place = true;
    } else {
        free(current);
        free(target);
        return fail(why, terr, "(while creating a temporary file beside it)");
    }

    /* a last look, as late as possible: an editor may have saved meanwhile */
    struct stat now;
    if (snap && (stat(target, &now) != 0 || !same_stamp(&now, snap)))
        err = OL_ERR_CHANGED;
    bool keep_tmp = false;
    if (!err && !in_place) {
        if (rename(tmp, target) != 0)
            err = errno;
        else
            sync_dir_of(target);
    } else if (!err) {
        bool damaged;
        err = rewrite_in_place(target, &st, data, len, current, current_len, &damaged);
        if (err && damaged && tmp) {
            keep_tmp = true;
            ol_buf_printf(why, "%s while rewriting it in place; it could not be restored and may be damaged: "
                               "the fixed text is in %s",
                          reason(err), tmp);
        } else if (err && damaged) {
            ol_buf_printf(why, "%s while rewriting it in place; it could not be restored and may be damaged",
                          reason(err));
        } else if (err) {
            fail(why, err, NULL);
        }
    } else {
        fail(why, err, NULL);
    }
    if (err && !why->len)
        fail(why, err, NULL);
    if (tmp && !keep_tmp && (err || in_place))
        unlink(tmp);
    free(tmp);
    free(current);
    free(target);
    return err;
}

/* ---- reports ------------------------------------------------------------------- */

bool ol_stream_ok(FILE *fp, int *err)
{
    errno = 0;
    if (fflush(fp) != 0) {
        *err = errno ? errno : EIO;
        return false;
    }
    if (ferror(fp)) {
        *err = EIO;
        return false;
    }
    return true;
}

bool ol_report_open(ol_report_file *rf, const char *path, ol_buf *why)
{
    memset(rf, 0, sizeof(*rf));
    int err = 0;
    char *target = resolve_links(path, &err);
    if (!target) {
        ol_buf_puts(why, reason(err));
        return false;
    }
    struct stat st;
    bool exists = stat(target, &st) == 0;
    if (!exists && errno != ENOENT) {
        ol_buf_puts(why, strerror(errno));
        free(target);
        return false;
    }
    if (exists && S_ISDIR(st.st_mode)) {
        ol_buf_puts(why, "it is a directory");
        free(target);
        return false;
    }
    if (exists && !S_ISREG(st.st_mode)) {
        /* a FIFO, a terminal, /dev/null: written as it is */
        rf->fp = fopen(target, "w");
        if (!rf->fp) {
            ol_buf_puts(why, strerror(errno));
            free(target);
            return false;
        }
        rf->target = target;
        return true;
    }
    int fd = -1;
    char *tmp = temp_beside(target, exists ? 0600 : 0666, &fd, &err);
    if (!tmp) {
        ol_buf_printf(why, "%s (while creating a temporary file beside it)", strerror(err));
        free(target);
        return false;
    }
    bool owner_kept = true;
    if (exists) {
        err = take_identity(fd, &st, &owner_kept);
        rf->in_place = st.st_nlink > 1 || !owner_kept;
    }
    rf->fp = err ? NULL : fdopen(fd, "w");
    if (!rf->fp) {
        ol_buf_puts(why, strerror(err ? err : errno));
        close(fd);
        unlink(tmp);
        free(tmp);
        free(target);
        return false;
    }
    rf->target = target;
    rf->tmp = tmp;
    return true;
}

void ol_report_discard(ol_report_file *rf)
{
    if (rf->fp)
        fclose(rf->fp);
    if (rf->tmp)
        unlink(rf->tmp);
    free(rf->tmp);
    free(rf->target);
    memset(rf, 0, sizeof(*rf));
}

bool ol_report_commit(ol_report_file *rf, ol_buf *why)
{
    int err = 0;
    bool ok = ol_stream_ok(rf->fp, &err);
    if (ok && rf->tmp && fsync(fileno(rf->fp)) != 0) {
        err = errno;
        ok = false;
    }
    FILE *fp = rf->fp;
    rf->fp = NULL;
    if (fclose(fp) != 0 && ok) {
        err = errno;
        ok = false;
    }
    if (ok && rf->tmp && !rf->in_place) {
        if (rename(rf->tmp, rf->target) != 0) {
            err = errno;
            ok = false;
        } else {
            sync_dir_of(rf->target);
            free(rf->tmp);
            rf->tmp = NULL;
        }
    } else if (ok && rf->tmp) {
        char *bytes = NULL;
        size_t len = 0;
        struct stat st;
        err = ol_read_file(rf->tmp, SIZE_MAX / 2, &bytes, &len);
        if (!err && stat(rf->target, &st) != 0)
            err = errno;
        bool damaged = false;
        if (!err)
            err = rewrite_in_place(rf->target, &st, bytes, len, NULL, 0, &damaged);
        free(bytes);
        ok = err == 0;
    }
    if (!ok) {
        ol_buf_puts(why, reason(err));
        ol_report_discard(rf);
        return false;
    }
    ol_report_discard(rf); /* removes the temporary file, if it is still there */
    return true;
}
