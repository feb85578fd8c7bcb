/*
 * portable.c - see portable.h.
 *
 * The self-pipe's write end and the handlers it replaced are process-wide
 * state (a signal handler can reach nothing else); one watch is open at a
 * time, as in the probe, its only user.
 */
#include "portable.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#ifdef OL_HAVE_SIGNALFD
#include <sys/signalfd.h>
#endif

#define WATCH_MAX 8

int ol_fallocate(int fd, off_t len)
{
#if defined(__APPLE__)
    struct stat st;
    if (fstat(fd, &st) != 0)
        return errno;
    if (st.st_size >= len)
        return 0;
    fstore_t store = {F_ALLOCATECONTIG | F_ALLOCATEALL, F_PEOFPOSMODE, 0, len - st.st_size, 0};
    if (fcntl(fd, F_PREALLOCATE, &store) != 0) {
        store.fst_flags = F_ALLOCATEALL;
        if (fcntl(fd, F_PREALLOCATE, &store) != 0)
            return errno;
    }
    return ftruncate(fd, len) == 0 ? 0 : errno;
#else
    return posix_fallocate(fd, 0, len);
#endif
}

/* ---- signals as a descriptor ------------------------------------------------ */

static struct {
    bool open;
    ol_sigwatch_how how;
    int fd;
    int sigs[WATCH_MAX];
    size_t n;
    sigset_t old_mask;                  /* signalfd: the mask before blocking */
    struct sigaction old_act[WATCH_MAX]; /* self-pipe: the handlers replaced */
} watch;

static volatile sig_atomic_t pipe_write_fd = -1;

static void pipe_handler(int sig)
{
    int saved = errno;
    unsigned char b = (unsigned char)sig;
    int fd = pipe_write_fd;
    if (fd >= 0) {
        ssize_t w = write(fd, &b, 1); /* a full pipe already says "signalled" */
        (void)w;
    }
    errno = saved;
}

static bool set_flags(int fd)
{
    int fl = fcntl(fd, F_GETFL);
    int fdfl = fcntl(fd, F_GETFD);
    return fl >= 0 && fdfl >= 0 && fcntl(fd, F_SETFL, fl | O_NONBLOCK) == 0 &&
           fcntl(fd, F_SETFD, fdfl | FD_CLOEXEC) == 0;
}

static int open_self_pipe(void)
{
    int p[2];
    if (pipe(p) != 0)
        return -1;
    if (!set_flags(p[0]) || !set_flags(p[1])) {
        close(p[0]);
        close(p[1]);
        return -1;
    }
    pipe_write_fd = p[1];
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = pipe_handler;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART;
    for (size_t i = 0; i < watch.n; i++) {
        if (sigaction(watch.sigs[i], &sa, &watch.old_act[i]) != 0) {
            while (i-- > 0)
                sigaction(watch.sigs[i], &watch.old_act[i], NULL);
            pipe_write_fd = -1;
            close(p[0]);
            close(p[1]);
            return -1;
        }
    }
    return p[0];
}

#ifdef OL_HAVE_SIGNALFD
static int open_signalfd(void)
{
    sigset_t set;
    sigemptyset(&set);
    for (size_t i = 0; i < watch.n; i++)
        sigaddset(&set, watch.sigs[i]);
    if (sigprocmask(SIG_BLOCK, &set, &watch.old_mask) != 0)
        return -1;
    int fd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
    if (fd < 0)
        sigprocmask(SIG_SETMASK, &watch.old_mask, NULL);
    return fd;
}
#endif

int ol_sigwatch_open(const int *sigs, size_t n, ol_sigwatch_how how)
{
    if (watch.open || n > WATCH_MAX)
        return -1;
    memcpy(watch.sigs, sigs, n * sizeof *sigs);
    watch.n = n;
#ifdef OL_HAVE_SIGNALFD
    if (how == OL_SIGWATCH_NATIVE) {
        watch.fd = open_signalfd();
        watch.how = OL_SIGWATCH_NATIVE;
    } else
#endif
    {
        watch.fd = open_self_pipe();
        watch.how = OL_SIGWATCH_SELF_PIPE;
    }
    (void)how;
    watch.open = watch.fd >= 0;
    return watch.fd;
}

int ol_sigwatch_take(int fd)
{
    if (fd < 0 || !watch.open || fd != watch.fd)
        return 0;
#ifdef OL_HAVE_SIGNALFD
    if (watch.how == OL_SIGWATCH_NATIVE) {
        struct signalfd_siginfo info;
        ssize_t got = read(fd, &info, sizeof info);
        return got == (ssize_t)sizeof info ? (int)info.ssi_signo : 0;
    }
#endif
    unsigned char b;
    ssize_t got = read(fd, &b, 1);
    return got == 1 ? (int)b : 0;
}

void ol_sigwatch_close(int fd)
{
    if (fd < 0 || !watch.open || fd != watch.fd)
        return;
    if (watch.how == OL_SIGWATCH_SELF_PIPE) {
        for (size_t i = 0; i < watch.n; i++)
            sigaction(watch.sigs[i], &watch.old_act[i], NULL);
        int w = pipe_write_fd;
        pipe_write_fd = -1;
        close(w);
    } else {
        /* a signal that came after the last read is dropped with the
         * descriptor, as signalfd's reader would have handled it */
        close(fd);
        fd = -1;
        sigprocmask(SIG_SETMASK, &watch.old_mask, NULL);
    }
    if (fd >= 0)
        close(fd);
    watch.open = false;
    watch.fd = -1;
}

/* ---- dying with the parent ------------------------------------------------- */

bool ol_pdeath_pipe(int fds[2])
{
    if (pipe(fds) != 0)
        return false;
    if (!set_flags(fds[0]) || !set_flags(fds[1])) {
        int e = errno;
        close(fds[0]);
        close(fds[1]);
        errno = e;
        return false;
    }
    /* the child blocks in read; only the write end's other copies matter */
    int fl = fcntl(fds[0], F_GETFL);
    if (fl >= 0)
        (void)fcntl(fds[0], F_SETFL, fl & ~O_NONBLOCK);
    return true;
}

static void *pdeath_thread(void *arg)
{
    int fd = (int)(intptr_t)arg;
    char b;
    for (;;) {
        ssize_t got = read(fd, &b, 1);
        if (got < 0 && errno == EINTR)
            continue;
        if (got > 0) /* nobody writes; a byte is not a goodbye */
            continue;
        break;
    }
    kill(getpid(), SIGKILL);
    return NULL;
}

bool ol_pdeath_watch(int fds[2])
{
    close(fds[1]);
    fds[1] = -1;
    pthread_attr_t attr;
    if (pthread_attr_init(&attr) != 0)
        return false;
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    pthread_attr_setstacksize(&attr, 64 * 1024);
    pthread_t t;
    bool ok = pthread_create(&t, &attr, pdeath_thread, (void *)(intptr_t)fds[0]) == 0;
    pthread_attr_destroy(&attr);
    return ok;
}
