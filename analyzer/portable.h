/*
 * portable.h - the few places where Linux and macOS differ, behind one
 * interface each, so that the rest of oomlint calls the same function on both.
 *
 *   st_mtim          macOS spells it st_mtimespec
 *   ol_fallocate     posix_fallocate; macOS has F_PREALLOCATE + ftruncate instead
 *   ol_sigwatch_*    SIGINT/SIGTERM/SIGHUP as a readable descriptor: Linux's
 *                    signalfd, or a self-pipe written by a signal handler
 *                    (macOS, and Linux builds with -DOL_PORTABLE_PATHS)
 *   ol_pdeath_*      a child that dies with its parent: Linux's
 *                    prctl(PR_SET_PDEATHSIG), or a pipe whose write end only
 *                    the parent holds, watched by a thread in the child
 *
 * Both alternatives of the last two are compiled on Linux (the portable ones
 * are unit-tested there, tests/unit.c); OL_PORTABLE_PATHS makes the whole
 * program use them, as a macOS build does (`make test-portable`).
 */
#ifndef OL_PORTABLE_H
#define OL_PORTABLE_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>
#include <sys/types.h>

#if defined(__APPLE__) && !defined(st_mtim)
#define st_mtim st_mtimespec
#endif

#if defined(__linux__) && !defined(OL_PORTABLE_PATHS)
#define OL_HAVE_SIGNALFD 1
#define OL_HAVE_PDEATHSIG 1
#endif

/* Makes fd's file at least len bytes long with the space reserved, like
 * posix_fallocate. Returns 0 or an errno value. */
int ol_fallocate(int fd, off_t len);

/* How ol_sigwatch_open delivers signals. */
typedef enum { OL_SIGWATCH_NATIVE, OL_SIGWATCH_SELF_PIPE } ol_sigwatch_how;

/* Starts watching the n signals in sigs (at most 8): returns a non-blocking,
 * close-on-exec descriptor that polls readable once one has arrived, or -1
 * (the signals then keep their old disposition). NATIVE is signalfd on Linux
 * (the signals are blocked) and the self-pipe elsewhere. One watch at a time
 * per process. */
int ol_sigwatch_open(const int *sigs, size_t n, ol_sigwatch_how how);
/* Reads one arrival off fd: the signal's number, or 0 when none is pending. */
int ol_sigwatch_take(int fd);
/* Stops the watch: closes fd and puts back the signal mask and handlers. */
void ol_sigwatch_close(int fd);

/* The parent's side: a close-on-exec pipe; the parent keeps fds[1] until
 * the child is reaped. Returns false (errno set) when none could be made. */
bool ol_pdeath_pipe(int fds[2]);
/* The child's side, after fork and before anything else: closes the write
 * end and starts a thread that kills this process (SIGKILL) once the read
 * end reports end of file, which happens when the parent has gone however it
 * ended. Returns false when the thread could not be started. */
bool ol_pdeath_watch(int fds[2]);

#endif
