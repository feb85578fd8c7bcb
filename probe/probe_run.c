/*
 * probe_run.c - the probe's child processes: start a Python program with a
 * record pipe on fd 3 and its stdout+stderr on another pipe, read both with
 * poll(), hand each record line to a callback, and end it cleanly.
 *
 * A child runs in its own process group (so DataLoader workers it forks die
 * with it) and, on Linux, dies with oomlint (PR_SET_PDEATHSIG; elsewhere its
 * record pipe breaks when oomlint goes, and its next record ends it). A
 * process that leaves the group (a daemon started with setsid()) escapes that
 * kill, so on Linux oomlint is a child subreaper while children run: whatever
 * a probed program leaves behind is re-parented to oomlint, which kills and
 * reaps every such process once no child is running (reap_leftovers). It is
 * killed when it runs past the timeout, writes a line on the record pipe that
 * is not a JSON record, or when the probe is interrupted (the signal
 * descriptor in the environment becomes readable, portable.h). Everything it printed is kept, the last few
 * KiB of it, so a crash can be reported with its traceback's last line.
 *
 * fork() happens while the NVML sampler thread may run, so the child does
 * only async-signal-safe work between fork and exec: the environment and
 * argv are built before forking and handed to execve.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <dirent.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

#include <cjson/cJSON.h>

#include "lint.h"
#include "portable.h"
#include "probe_internal.h"

/* ---- argv ---------------------------------------------------------------------------- */

char **ol_argv_new(const char *first, ...)
{
    char **argv = ol_xcalloc(1, sizeof(char *));
    va_list ap;
    va_start(ap, first);
    for (const char *s = first; s; s = va_arg(ap, const char *))
        ol_argv_push(&argv, s);
    va_end(ap);
    return argv;
}

void ol_argv_push(char ***argv, const char *arg)
{
    size_t n = 0;
    while ((*argv)[n])
        n++;
    *argv = ol_xrealloc(*argv, (n + 2) * sizeof(char *));
    (*argv)[n] = ol_xstrdup(arg);
    (*argv)[n + 1] = NULL;
}

void ol_argv_free(char **argv)
{
    if (!argv)
        return;
    for (size_t i = 0; argv[i]; i++)
        free(argv[i]);
    free(argv);
}

/* ---- one child ------------------------------------------------------------------------- */

void ol_child_init(ol_child *c, char **argv, void *ctx)
{
    memset(c, 0, sizeof(*c));
    c->argv = argv;
    c->ctx = ctx;
    c->pid = -1;
    c->rec_fd = -1;
    c->out_fd = -1;
}

void ol_child_free(ol_child *c)
{
    ol_argv_free(c->argv);
    ol_buf_free(&c->line);
    ol_buf_free(&c->output);
    free(c->error);
    if (c->rec_fd >= 0)
        close(c->rec_fd);
    if (c->out_fd >= 0)
        close(c->out_fd);
    memset(c, 0, sizeof(*c));
    c->rec_fd = c->out_fd = -1;
}

const char *ol_child_last_line(const ol_child *c, ol_buf *scratch)
{
    ol_buf_clear(scratch);
    if (!c->output.data)
        return "";
    const char *s = c->output.data;
    size_t end = c->output.len;
    while (end > 0 && (s[end - 1] == '\n' || s[end - 1] == '\r' || s[end - 1] == ' '))
        end--;
    size_t start = end;
    while (start > 0 && s[start - 1] != '\n')
        start--;
    ol_buf_add(scratch, s + start, end - start);
    if (!scratch->data)
        ol_buf_puts(scratch, "");
    return scratch->data;
}

/* A pipe whose ends are close-on-exec and above the standard descriptors,
 * whatever oomlint itself was started with (a closed stdin gives pipe() fd 0). */
static bool pipe_high(int fds[2])
{
    int raw[2];
    if (pipe(raw) != 0)
        return false;
    for (int i = 0; i < 2; i++) {
        int fd = fcntl(raw[i], F_DUPFD_CLOEXEC, 10);
        if (fd < 0) {
            close(raw[0]);
            close(raw[1]);
            if (i == 1)
                close(fds[0]);
            return false;
        }
        fds[i] = fd;
    }
    close(raw[0]);
    close(raw[1]);
    return true;
}

static void set_nonblocking(int fd)
{
    int fl = fcntl(fd, F_GETFL);
    if (fl >= 0)
        fcntl(fd, F_SETFL, fl | O_NONBLOCK);
}

static void child_fail(ol_child *c, ol_child_status st, const char *fmt, ...) OL_PRINTF(3, 4);

static void child_fail(ol_child *c, ol_child_status st, const char *fmt, ...)
{
    if (c->error)
        return; /* the first reason is the one that matters */
    c->status = st;
    ol_buf b = {0};
    va_list ap;
    va_start(ap, fmt);
    ol_buf_vprintf(&b, fmt, ap);
    va_end(ap);
    c->error = ol_buf_take(&b);
}

static void kill_group(ol_child *c)
{
    if (c->pid > 0) {
        kill(-c->pid, SIGKILL);
        kill(c->pid, SIGKILL);
    }
}

static bool child_spawn(ol_probe_env *env, ol_child *c)
{
    int rec[2], out[2], err_pipe[2];
    if (!pipe_high(rec))
        goto no_pipe;
    if (!pipe_high(out)) {
        close(rec[0]);
        close(rec[1]);
        goto no_pipe;
    }
    if (!pipe_high(err_pipe)) {
        close(rec[0]);
        close(rec[1]);
        close(out[0]);
        close(out[1]);
        goto no_pipe;
    }
    int devnull = open("/dev/null", O_RDONLY | O_CLOEXEC);
    pid_t pid = fork();
    if (pid < 0) {
        int e = errno;
        close(rec[0]);
        close(rec[1]);
        close(out[0]);
        close(out[1]);
        close(err_pipe[0]);
        close(err_pipe[1]);
        if (devnull >= 0)
            close(devnull);
        child_fail(c, OL_CHILD_CRASHED, "could not start %s: %s", c->argv[0], strerror(e));
        return false;
    }
    if (pid == 0) {
        /* the child: only async-signal-safe calls from here to exec */
        setpgid(0, 0);
#ifdef __linux__
        prctl(PR_SET_PDEATHSIG, SIGKILL);
#endif
        sigset_t none;
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, NULL);
        signal(SIGPIPE, SIG_DFL);
        if (devnull >= 0)
            dup2(devnull, STDIN_FILENO);
        dup2(out[1], STDOUT_FILENO);
        dup2(out[1], STDERR_FILENO);
        dup2(rec[1], 3); /* rec[1] >= 10, so dup2 makes a fresh fd 3 without close-on-exec */
        execve(c->argv[0], c->argv, env->envp);
        int e = errno;
        ssize_t w = write(err_pipe[1], &e, sizeof e);
        (void)w;
        _exit(127);
    }
    close(rec[1]);
    close(out[1]);
    close(err_pipe[1]);
    if (devnull >= 0)
        close(devnull);
    setpgid(pid, pid); /* also from here: no race with the first kill */
    int exec_errno = 0;
    ssize_t got;
    do
        got = read(err_pipe[0], &exec_errno, sizeof exec_errno);
    while (got < 0 && errno == EINTR);
    close(err_pipe[0]);
    c->pid = pid;
    c->rec_fd = rec[0];
    c->out_fd = out[0];
    set_nonblocking(c->rec_fd);
    set_nonblocking(c->out_fd);
    c->started_ns = ol_now_ns();
    c->status = OL_CHILD_RUNNING;
    if (got == (ssize_t)sizeof exec_errno) {
        child_fail(c, OL_CHILD_CRASHED, "could not run %s: %s", c->argv[0], strerror(exec_errno));
        return true; /* reaped like any other child */
    }
    return true;

no_pipe:
    child_fail(c, OL_CHILD_CRASHED, "could not start %s: %s", c->argv[0], strerror(errno));
    return false;
}

static void keep_output(ol_child *c, const char *data, size_t n)
{
    ol_buf_add(&c->output, data, n);
    if (c->output.len > 2 * OL_CHILD_OUTPUT_KEEP) {
        size_t drop = c->output.len - OL_CHILD_OUTPUT_KEEP;
        memmove(c->output.data, c->output.data + drop, c->output.len - drop);
        c->output.len -= drop;
        c->output.data[c->output.len] = '\0';
    }
}

/* Shows a line of garbage readably in one short excerpt. */
static void excerpt(ol_buf *b, const char *s, size_t n)
{
    size_t k = 0;
    for (size_t i = 0; i < n && k < 60; i++, k++) {
        unsigned char ch = (unsigned char)s[i];
        if (ch >= 0x20 && ch < 0x7f && ch != '\\')
            ol_buf_putc(b, (char)ch);
        else
            ol_buf_printf(b, "\\x%02x", ch);
    }
    if (n > 60)
        ol_buf_puts(b, "...");
}

static void handle_line(ol_child *c, const char *s, size_t n)
{
    if (c->error)
        return;
    while (n > 0 && (s[n - 1] == '\r' || s[n - 1] == ' '))
        n--;
    if (n == 0)
        return;
    cJSON *rec = cJSON_ParseWithLength(s, n);
    const char *why = NULL;
    bool ok = false;
    if (!rec || !cJSON_IsObject(rec) || !cJSON_IsString(cJSON_GetObjectItemCaseSensitive(rec, "t")))
        why = "not a JSON record";
    else if (c->on_record)
        ok = c->on_record(c->ctx, c, rec, &why);
    else
        ok = true;
    cJSON_Delete(rec);
    if (ok) {
        c->records++;
        return;
    }
    ol_buf ex = {0};
    excerpt(&ex, s, n);
    child_fail(c, OL_CHILD_GARBAGE, "wrote a bad record (%s): '%s'", why ? why : "rejected", ex.data ? ex.data : "");
    ol_buf_free(&ex);
    kill_group(c);
}

/* Reads what is there; returns false at end of file. */
static bool drain(ol_child *c, int fd, bool records)
{
    char chunk[16384];
    for (;;) {
        ssize_t n = read(fd, chunk, sizeof chunk);
        if (n > 0) {
            if (!records) {
                keep_output(c, chunk, (size_t)n);
                continue;
            }
            size_t start = 0;
            for (size_t i = 0; i < (size_t)n; i++) {
                if (chunk[i] != '\n')
                    continue;
                ol_buf_add(&c->line, chunk + start, i - start);
                handle_line(c, c->line.data ? c->line.data : "", c->line.len);
                ol_buf_clear(&c->line);
                start = i + 1;
            }
            ol_buf_add(&c->line, chunk + start, (size_t)n - start);
            if (c->line.len > OL_RECORD_MAX) {
                child_fail(c, OL_CHILD_GARBAGE, "wrote a record line longer than %u MiB", OL_RECORD_MAX >> 20);
                ol_buf_clear(&c->line);
                kill_group(c);
            }
            continue;
        }
        if (n == 0)
            return false;
        if (errno == EINTR)
            continue;
        return errno == EAGAIN || errno == EWOULDBLOCK;
    }
}

static void child_close_fds(ol_child *c)
{
    if (c->rec_fd >= 0) {
        close(c->rec_fd);
        c->rec_fd = -1;
    }
    if (c->out_fd >= 0) {
        close(c->out_fd);
        c->out_fd = -1;
    }
}

/* The process has exited (status from waitpid): drain, record the outcome,
 * and kill what it may have left behind in its group. */
static void child_reaped(ol_child *c, int wstatus)
{
    if (c->rec_fd >= 0)
        drain(c, c->rec_fd, true);
    if (c->out_fd >= 0)
        drain(c, c->out_fd, false);
    if (c->line.len > 0 && !c->error) {
        ol_buf rest = {0};
        ol_buf_add(&rest, c->line.data, c->line.len);
        ol_buf_clear(&c->line);
        handle_line(c, rest.data, rest.len);
        ol_buf_free(&rest);
    }
    kill(-c->pid, SIGKILL);
    child_close_fds(c);
    c->ended_ns = ol_now_ns();
    if (c->error)
        return;
    if (WIFEXITED(wstatus)) {
        c->status = OL_CHILD_EXITED;
        c->exit_code = WEXITSTATUS(wstatus);
    } else if (WIFSIGNALED(wstatus)) {
        c->term_signal = WTERMSIG(wstatus);
        child_fail(c, OL_CHILD_CRASHED, "was killed by signal %d (%s)", c->term_signal, strsignal(c->term_signal));
    } else {
        child_fail(c, OL_CHILD_CRASHED, "ended with wait status %d", wstatus);
    }
}

/* Started and not yet reaped (a child being killed still needs reaping). */
static bool child_active(const ol_child *c)
{
    return c->pid > 0 && c->ended_ns == 0;
}

#ifdef __linux__
/* This process's children, from /proc: each /proc/PID/stat whose fourth
 * field (after the command name, which may hold anything up to its last
 * ')') is our pid. */
static size_t list_children(pid_t *out, size_t cap)
{
    DIR *proc = opendir("/proc");
    if (!proc)
        return 0;
    pid_t self = getpid();
    size_t count = 0;
    struct dirent *e;
    while ((e = readdir(proc)) != NULL && count < cap) {
        char *end;
        long pid = strtol(e->d_name, &end, 10);
        if (*end != '\0' || pid <= 0)
            continue;
        char path[64], buf[512];
        snprintf(path, sizeof path, "/proc/%ld/stat", pid);
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
            continue;
        ssize_t n = read(fd, buf, sizeof buf - 1);
        close(fd);
        if (n <= 0)
            continue;
        buf[n] = '\0';
        char *paren = strrchr(buf, ')');
        char state;
        int ppid;
        if (paren && sscanf(paren + 1, " %c %d", &state, &ppid) == 2 && ppid == self)
            out[count++] = (pid_t)pid;
    }
    closedir(proc);
    return count;
}
#endif

/* Kills and reaps every process of ours that is not a running child: what
 * the probed programs left behind (re-parented to us as their subreaper).
 * Killing one re-parents its own children to us, so this goes round until
 * none is left. Without a subreaper (not Linux) a daemon is out of reach;
 * what can be done is to reap the zombies of ours. */
static void reap_leftovers(ol_child **kids, size_t n)
{
#ifdef __linux__
    for (int round = 0; round < 1000; round++) {
        pid_t found[256];
        size_t count = list_children(found, OL_ARRAY_LEN(found)), kept = 0;
        for (size_t i = 0; i < count; i++) {
            bool running = false;
            for (size_t k = 0; k < n && !running; k++)
                running = kids[k]->pid == found[i] && child_active(kids[k]);
            if (!running)
                found[kept++] = found[i];
        }
        if (kept == 0)
            break;
        for (size_t i = 0; i < kept; i++)
            kill(found[i], SIGKILL);
        for (size_t i = 0; i < kept; i++)
            while (waitpid(found[i], NULL, 0) < 0 && errno == EINTR)
                ;
    }
#else
    (void)kids;
    (void)n;
    while (waitpid(-1, NULL, WNOHANG) > 0)
        ;
#endif
}

static bool signal_arrived(ol_probe_env *env)
{
    return ol_sigwatch_take(env->sigfd) != 0;
}

void ol_children_run(ol_probe_env *env, ol_child **kids, size_t n, int parallel, int timeout_s)
{
    if (parallel < 1)
        parallel = 1;
    size_t next = 0;
    uint64_t timeout_ns = (uint64_t)(timeout_s > 0 ? timeout_s : 600) * 1000000000u;
    struct pollfd *pfds = ol_xcalloc(2 * n + 1, sizeof *pfds);
    ol_child **owner = ol_xcalloc(2 * n + 1, sizeof *owner);
#ifdef __linux__
    /* what a child leaves behind (setsid() daemons included) becomes ours */
    prctl(PR_SET_CHILD_SUBREAPER, 1);
#endif
    for (;;) {
        size_t running = 0;
        for (size_t i = 0; i < n; i++)
            if (child_active(kids[i]))
                running++;
        while (!env->interrupted && running < (size_t)parallel && next < n) {
            ol_child *c = kids[next++];
            if (child_spawn(env, c)) {
                running++;
                if (c->on_start && !c->error)
                    c->on_start(c->ctx, c);
            } else {
                c->ended_ns = ol_now_ns();
                if (c->on_end)
                    c->on_end(c->ctx, c);
            }
        }
        if (running == 0)
            break;
        size_t np = 0;
        for (size_t i = 0; i < n; i++) {
            ol_child *c = kids[i];
            if (!child_active(c))
                continue;
            if (c->rec_fd >= 0) {
                pfds[np] = (struct pollfd){.fd = c->rec_fd, .events = POLLIN};
                owner[np++] = c;
            }
            if (c->out_fd >= 0) {
                pfds[np] = (struct pollfd){.fd = c->out_fd, .events = POLLIN};
                owner[np++] = c;
            }
        }
        if (env->sigfd >= 0) {
            pfds[np] = (struct pollfd){.fd = env->sigfd, .events = POLLIN};
            owner[np++] = NULL;
        }
        /* wake at least every 100 ms to reap exits and check deadlines */
        int ready = poll(pfds, np, 100);
        if (ready < 0 && errno != EINTR)
            break;
        for (size_t k = 0; ready > 0 && k < np; k++) {
            if (!pfds[k].revents)
                continue;
            ol_child *c = owner[k];
            if (!c) {
                if (signal_arrived(env))
                    env->interrupted = true;
                continue;
            }
            bool records = pfds[k].fd == c->rec_fd;
            if (!drain(c, pfds[k].fd, records)) {
                close(pfds[k].fd);
                if (records)
                    c->rec_fd = -1;
                else
                    c->out_fd = -1;
            }
        }
        uint64_t now = ol_now_ns();
        for (size_t i = 0; i < n; i++) {
            ol_child *c = kids[i];
            if (!child_active(c))
                continue;
            if (env->interrupted && !c->error) {
                child_fail(c, OL_CHILD_STOPPED, "stopped: the probe was interrupted");
                kill_group(c);
            } else if (!c->error && now - c->started_ns > timeout_ns) {
                child_fail(c, OL_CHILD_TIMEOUT, "timed out after %d s (%zu record%s received)",
                           timeout_s, c->records, c->records == 1 ? "" : "s");
                kill_group(c);
            }
            int wstatus = 0;
            pid_t w = waitpid(c->pid, &wstatus, WNOHANG);
            if (w == c->pid) {
                child_reaped(c, wstatus);
                /* with no other child running, what is left is this one's */
                size_t others = 0;
                for (size_t k = 0; k < n; k++)
                    others += child_active(kids[k]);
                if (others == 0)
                    reap_leftovers(kids, n);
                if (c->on_end)
                    c->on_end(c->ctx, c);
            }
        }
    }
    reap_leftovers(kids, n);
    /* an interrupt leaves the children not started as they are */
    for (size_t i = next; i < n; i++)
        if (kids[i]->status == OL_CHILD_PENDING)
            child_fail(kids[i], OL_CHILD_STOPPED, "not run: the probe was interrupted");
    free(pfds);
    free(owner);
}
