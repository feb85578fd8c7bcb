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
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/xattr.h>
#endif

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

/* ---- temporary files left by a signal -------------------------------------------
 *
 * A temporary file exists from its creation until it is renamed into place
 * or removed; a SIGINT, SIGTERM or SIGHUP in between would leave it in the
 * user's tree (an 11 MB `.report.json.oomlint-*`, a `.train.py.oomlint-*`
 * per thread of a --fix). So each one is entered in a table before it is
 * created, and a handler removes what the table holds, then lets the signal
 * do what it would have done. The table is fixed-size static memory because
 * the handler may touch nothing else (malloc'd memory could be freed under
 * it by another thread); it is, with the supervisor's child pid, the
 * process-wide state signals force on oomlint. A slot goes FREE -> CLAIMED
 * (its owner copies the path) -> LIVE (the handler may unlink it) -> FREE.
 *
 * Other threads go on while the handler runs. So the steps that must not be
 * cut short (entering a path and creating its file; rewriting a file in
 * place) run as critical sections: with these signals blocked on their
 * thread (the handler then runs on another one) and counted in `in_flight`.
 * The handler first marks the process as dying, waits for the sections in
 * flight to end, then unlinks; a section that starts after the mark sees it
 * and creates nothing (the mark and the count are sequentially consistent:
 * either the handler sees the section, or the section sees the mark). */

#define TEMP_SLOTS 64
#define TEMP_PATH_MAX 4096
enum { SLOT_FREE, SLOT_CLAIMED, SLOT_LIVE };

static struct temp_slot {
    atomic_int state;
    char path[TEMP_PATH_MAX];
} temp_slots[TEMP_SLOTS];

static const int cleanup_signals[] = {SIGINT, SIGTERM, SIGHUP};
static struct sigaction cleanup_previous[OL_ARRAY_LEN(cleanup_signals)];
static atomic_int cleanup_installed;
static atomic_int cleanup_dying; /* a signal came: no temporary file is created any more */
static atomic_int in_flight;     /* critical sections running now */

/* How long the handler waits for the critical sections in flight (an
 * in-place rewrite of a large file, fsync included): 10 s, in 1 ms steps. */
#define CLEANUP_WAIT_STEPS 10000

static void remove_temps_and_die(int sig)
{
    int saved = errno;
    atomic_store(&cleanup_dying, 1);
    for (int i = 0; i < CLEANUP_WAIT_STEPS && atomic_load(&in_flight) > 0; i++) {
        struct timespec ms = {0, 1000000};
        nanosleep(&ms, NULL); /* async-signal-safe */
    }
    for (size_t i = 0; i < TEMP_SLOTS; i++)
        if (atomic_load(&temp_slots[i].state) == SLOT_LIVE)
            unlink(temp_slots[i].path); /* async-signal-safe */
    for (size_t i = 0; i < OL_ARRAY_LEN(cleanup_signals); i++) {
        if (cleanup_signals[i] != sig)
            continue;
        const struct sigaction *old = &cleanup_previous[i];
        if (!(old->sa_flags & SA_SIGINFO) && old->sa_handler != SIG_DFL && old->sa_handler != SIG_IGN) {
            /* a handler of the program's own: it decides */
            old->sa_handler(sig);
            errno = saved;
            return;
        }
    }
    signal(sig, SIG_DFL);
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, sig);
    sigprocmask(SIG_UNBLOCK, &set, NULL);
    raise(sig);
    _exit(128 + sig);
}

/* Installs the handler once per process, leaving an ignored signal ignored
 * (`nohup` must still keep SIGHUP from ending a run). */
static void install_cleanup(void)
{
    int expected = 0;
    if (!atomic_compare_exchange_strong(&cleanup_installed, &expected, 1))
        return;
    for (size_t i = 0; i < OL_ARRAY_LEN(cleanup_signals); i++) {
        struct sigaction sa, old;
        if (sigaction(cleanup_signals[i], NULL, &old) != 0 || old.sa_handler == SIG_IGN)
            continue;
        cleanup_previous[i] = old;
        memset(&sa, 0, sizeof(sa));
        sa.sa_handler = remove_temps_and_die;
        sigfillset(&sa.sa_mask); /* one cleanup at a time */
        sigaction(cleanup_signals[i], &sa, NULL);
    }
}

/* Starts a critical section (see above): false, starting nothing, once a
 * signal has marked the process as dying. */
static bool critical_begin(sigset_t *saved)
{
    sigset_t block;
    sigemptyset(&block);
    for (size_t i = 0; i < OL_ARRAY_LEN(cleanup_signals); i++)
        sigaddset(&block, cleanup_signals[i]);
    pthread_sigmask(SIG_BLOCK, &block, saved);
    atomic_fetch_add(&in_flight, 1);
    if (atomic_load(&cleanup_dying)) {
        atomic_fetch_sub(&in_flight, 1);
        pthread_sigmask(SIG_SETMASK, saved, NULL);
        return false;
    }
    return true;
}

static void critical_end(const sigset_t *saved)
{
    atomic_fetch_sub(&in_flight, 1);
    pthread_sigmask(SIG_SETMASK, saved, NULL); /* a signal that came meanwhile is handled now */
}

/* Enters path in the table (inside a critical section, before the file
 * exists); returns its slot, -1 when the path is too long for it, or -2
 * when a signal came while every slot was taken. */
static int temp_track(const char *path)
{
    size_t len = strlen(path);
    if (len >= TEMP_PATH_MAX)
        return -1;
    for (;;) {
        if (atomic_load(&cleanup_dying))
            return -2;
        for (int i = 0; i < TEMP_SLOTS; i++) {
            int expected = SLOT_FREE;
            if (atomic_compare_exchange_strong(&temp_slots[i].state, &expected, SLOT_CLAIMED)) {
                memcpy(temp_slots[i].path, path, len + 1);
                atomic_store(&temp_slots[i].state, SLOT_LIVE);
                return i;
            }
        }
        /* every slot taken (more threads writing than slots): one frees as
         * soon as its file is renamed or removed */
        struct timespec ms = {0, 1000000};
        nanosleep(&ms, NULL);
    }
}

/* Takes path out of the table: it was renamed, removed, or must be kept. */
static void temp_untrack(const char *path)
{
    for (int i = 0; i < TEMP_SLOTS; i++) {
        if (atomic_load(&temp_slots[i].state) == SLOT_LIVE && strcmp(temp_slots[i].path, path) == 0) {
            atomic_store(&temp_slots[i].state, SLOT_FREE);
            return;
        }
    }
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
 * `mode` (less the umask), entered in the table before it exists. Returns
 * its path and sets *fd, or NULL with *err (EINTR once a signal has come). */
static char *temp_beside(const char *target, mode_t mode, int *fd, int *err)
{
    install_cleanup();
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
        sigset_t saved;
        if (!critical_begin(&saved)) {
            free(tmp);
            *err = EINTR;
            break;
        }
        int slot = temp_track(tmp);
        int f = slot == -2 ? -1 : open(tmp, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOCTTY, mode);
        *err = slot == -2 ? EINTR : f < 0 ? errno : 0; /* a stale errno would fail a created file */
        if (f < 0 && slot >= 0)
            atomic_store(&temp_slots[slot].state, SLOT_FREE); /* not ours to remove */
        critical_end(&saved);
        if (f >= 0) {
            free(dir);
            *fd = f;
            return tmp;
        }
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

/* Copies the extended attributes of the file at `from` (user.*, POSIX ACLs
 * as system.posix_acl_*, the SELinux label as security.selinux, ...) onto
 * fd, after take_identity so that an ACL's mask is the last word on the
 * mode. Returns 0 when fd now has them all (also when there are none or
 * the file system has none), else an errno value: the caller then writes in
 * place, which keeps them, rather than rename a file that lacks them. */
static int copy_xattrs(const char *from, int fd)
{
#ifdef __linux__
    ssize_t size = listxattr(from, NULL, 0);
    if (size < 0)
        return errno == ENOTSUP ? 0 : errno;
    if (size == 0)
        return 0;
    char *names = ol_xmalloc((size_t)size + 1);
    size = listxattr(from, names, (size_t)size);
    if (size < 0) {
        int err = errno; /* ERANGE: one was added meanwhile; in place is as good */
        free(names);
        return err;
    }
    int err = 0;
    char *value = NULL;
    for (ssize_t at = 0; at < size && !err; at += (ssize_t)strlen(names + at) + 1) {
        const char *name = names + at;
        ssize_t vlen = getxattr(from, name, NULL, 0);
        if (vlen < 0) {
            err = errno;
            break;
        }
        value = ol_xrealloc(value, (size_t)vlen + 1);
        vlen = getxattr(from, name, value, (size_t)vlen);
        if (vlen < 0 || fsetxattr(fd, name, value, (size_t)vlen, 0) != 0)
            err = errno;
    }
    free(value);
    free(names);
    return err;
#else
    (void)from;
    (void)fd;
    return 0;
#endif
}

/* Rewrites the regular file at target (whose stat was st) in place. Its
 * blocks are reserved first, so running out of space or into a size limit
 * changes nothing; if writing fails after that, `original` (when given) is
 * put back. Sets *damaged when the file may now hold neither text. */
static int rewrite_now(const char *target, const struct stat *st, const char *data, size_t len,
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

/* rewrite_now as a critical section: a signal never leaves the file half
 * written (the handler waits for it to end), and once one has come the
 * file is not touched. */
static int rewrite_in_place(const char *target, const struct stat *st, const char *data, size_t len,
                            const char *original, size_t original_len, bool *damaged)
{
    *damaged = false;
    sigset_t saved;
    if (!critical_begin(&saved))
        return EINTR;
    int err = rewrite_now(target, st, data, len, original, original_len, damaged);
    critical_end(&saved);
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
        if (!err && !in_place && copy_xattrs(target, tfd) != 0)
            in_place = true; /* the rename would lose an attribute */
        if (close(tfd) != 0 && !err)
            err = errno;
        if (err) {
            unlink(tmp);
            temp_untrack(tmp);
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
            temp_untrack(tmp); /* the only copy of the fixed text: kept whatever comes */
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
    if (tmp)
        temp_untrack(tmp); /* renamed into place or removed */
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
        temp_untrack(tmp);
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
    if (rf->tmp) {
        unlink(rf->tmp);
        temp_untrack(rf->tmp);
    }
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
            temp_untrack(rf->tmp);
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
