/*
 * supervise.c - the supervisor process and the workers' side of it (see
 * supervise.h for the design and why it is built this way).
 *
 * The shared page is written only by the child's workers and read by the
 * parent after the child is gone (or, for the watchdog, while it runs: a
 * torn read there can only delay the timeout by one poll). Slot fields are
 * written before `busy` is set (release) and read after it is seen set
 * (acquire), so a slot seen busy names the file really being linted.
 *
 * The watchdog counts the CPU time a worker spends on one file where the
 * system lets the parent read a thread's CPU clock (Linux's /proc), so a
 * machine busy with other work slows a file down without getting it killed;
 * wall time is the limit only where that clock cannot be read, and a
 * backstop of ten times the limit catches a file whose reading blocks
 * without using the CPU. A kill says which limit it was, with both times.
 *
 * The signal handler that passes SIGTERM and friends on to the child needs
 * the child's pid in a static variable: the one piece of process-wide state
 * in oomlint, set and read only in the single-threaded supervisor.
 */
#include "supervise.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "portable.h"
#include "source.h"
#include "util.h"
#ifdef OL_HAVE_PDEATHSIG
#include <sys/prctl.h>
#include <sys/syscall.h>
#endif

#define SLOT_COUNT 256        /* the most threads -j allows */
#define SLOT_PATH_MAX 4096    /* longer paths are matched by input index */
#define MAX_ROUNDS 16         /* crashed runs before giving up */
#define DEFAULT_FILE_TIMEOUT_S 300
/* wall time allowed per file, in limits, when its CPU time can be read */
#define WALL_BACKSTOP 10
#define OL_ISSUES_URL "https://github.com/oomlint/oomlint/issues"

enum { PHASE_SETUP, PHASE_LINT, PHASE_REPORT };

/* The slots are small and together; the paths are apart, so that clearing
 * the slots for a new child touches two pages, not one per slot. */
typedef struct guard_slot {
    atomic_uint busy;
    uint32_t path_len;        /* bytes stored (may be cut at SLOT_PATH_MAX) */
    uint64_t input;
    uint64_t since_ns;        /* CLOCK_MONOTONIC */
    uint64_t since_cpu_ns;    /* the worker thread's CPU time when the file began */
    int32_t tid;              /* the worker thread (Linux), 0 where unknown */
} guard_slot;

struct ol_guard_shared {
    atomic_uint phase;
    guard_slot slots[SLOT_COUNT];
    char paths[SLOT_COUNT][SLOT_PATH_MAX];
};

static uint64_t thread_cpu_ns(void)
{
    struct timespec ts;
    if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0)
        return 0;
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The CPU time (user + system) thread tid of process pid has used, read
 * from /proc; false where it cannot be read (another system, a thread that
 * has just ended). */
static bool read_thread_cpu_ns(pid_t pid, int32_t tid, uint64_t *ns)
{
#ifdef OL_HAVE_PDEATHSIG
    if (tid <= 0)
        return false;
    char path[64], buf[1024];
    snprintf(path, sizeof(path), "/proc/%ld/task/%ld/stat", (long)pid, (long)tid);
    FILE *f = fopen(path, "re");
    if (!f)
        return false;
    size_t got = fread(buf, 1, sizeof(buf) - 1, f);
    fclose(f);
    buf[got] = '\0';
    /* the command name in parentheses may hold spaces: count fields after
     * its closing one (utime and stime are fields 14 and 15) */
    const char *p = strrchr(buf, ')');
    unsigned long long utime, stime;
    if (!p || sscanf(p + 1, " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &utime, &stime) != 2)
        return false;
    long hz = sysconf(_SC_CLK_TCK);
    if (hz <= 0)
        return false;
    *ns = (utime + stime) * (1000000000ull / (unsigned long long)hz);
    return true;
#else
    (void)pid;
    (void)tid;
    (void)ns;
    return false;
#endif
}

/* ---- the workers' side ------------------------------------------------------ */

void ol_guard_begin(const ol_guard *g, size_t slot, size_t input, const char *path)
{
    if (!g || !g->shared || slot >= g->slot_count)
        return;
    guard_slot *s = &g->shared->slots[slot];
    size_t len = strlen(path);
    if (len > SLOT_PATH_MAX)
        len = SLOT_PATH_MAX;
    memcpy(g->shared->paths[slot], path, len);
    s->path_len = (uint32_t)len;
    s->input = input;
    s->since_ns = ol_now_ns();
    s->since_cpu_ns = thread_cpu_ns();
#ifdef OL_HAVE_PDEATHSIG
    s->tid = (int32_t)syscall(SYS_gettid);
#else
    s->tid = 0;
#endif
    atomic_store_explicit(&s->busy, 1, memory_order_release);
}

void ol_guard_end(const ol_guard *g, size_t slot)
{
    if (!g || !g->shared || slot >= g->slot_count)
        return;
    atomic_store_explicit(&g->shared->slots[slot].busy, 0, memory_order_release);
}

void ol_guard_reporting(const ol_guard *g)
{
    if (g && g->shared)
        atomic_store_explicit(&g->shared->phase, PHASE_REPORT, memory_order_release);
}

static bool same_input(const char *qpath, size_t qinput, size_t input, const char *path)
{
    return qpath ? strcmp(qpath, path) == 0 : qinput == input;
}

const ol_quarantined *ol_guard_quarantined(const ol_guard *g, size_t input, const char *path)
{
    if (!g)
        return NULL;
    for (size_t i = 0; i < g->quarantined.len; i++)
        if (same_input(g->quarantined.items[i].path, g->quarantined.items[i].input, input, path))
            return &g->quarantined.items[i];
    return NULL;
}

bool ol_guard_skips(const ol_guard *g, size_t input, const char *path)
{
    return g && g->probe && !same_input(g->probe_path, g->probe_input, input, path);
}

void ol_guard_maybe_fail(const ol_guard *g, const char *path)
{
    if (!g || g->fault == OL_FAULT_NONE || !strstr(path, g->fault_match))
        return;
    switch (g->fault) {
    case OL_FAULT_SEGV:
        /* a plain SIGSEGV, past any handler a sanitizer installed */
        signal(SIGSEGV, SIG_DFL);
        raise(SIGSEGV);
        break;
    case OL_FAULT_ABORT:
        abort();
    case OL_FAULT_OOM:
        ol_oom();
    case OL_FAULT_HANG:
        for (;;)
            pause();
    case OL_FAULT_SPIN:
        for (volatile unsigned long spin = 0;; spin++)
            ;
    case OL_FAULT_NONE:
        break;
    }
}

/* Under the sanitizers (make test SANITIZE=1) a defect they find must end
 * the child with a signal, as a crash does without them, so that the
 * supervisor sets the file aside instead of taking the child's exit status
 * for a finished run. Their report still goes to stderr. */
#ifdef __SANITIZE_ADDRESS__
const char *__asan_default_options(void);
const char *__ubsan_default_options(void);
const char *__asan_default_options(void)
{
    return "abort_on_error=1";
}
const char *__ubsan_default_options(void)
{
    return "abort_on_error=1:print_stacktrace=1";
}
#endif

/* ---- the supervisor ---------------------------------------------------------- */

static volatile sig_atomic_t current_child;

static void forward_signal(int sig)
{
    pid_t child = (pid_t)current_child;
    if (child > 0)
        kill(child, sig);
}

static const int stop_signals[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};

/* Signals that mean the child hit a bug or a resource limit. SIGKILL is
 * what the kernel's OOM killer sends (and what the watchdog sends). */
static bool crash_signal(int sig)
{
    switch (sig) {
    case SIGSEGV:
    case SIGBUS:
    case SIGILL:
    case SIGFPE:
    case SIGABRT:
    case SIGTRAP:
    case SIGSYS:
    case SIGKILL:
    case SIGXCPU:
    case SIGXFSZ:
        return true;
    default:
        return false;
    }
}

static const char *signal_name(int sig)
{
    switch (sig) {
    case SIGSEGV: return "SIGSEGV";
    case SIGBUS: return "SIGBUS";
    case SIGILL: return "SIGILL";
    case SIGFPE: return "SIGFPE";
    case SIGABRT: return "SIGABRT";
    case SIGTRAP: return "SIGTRAP";
    case SIGSYS: return "SIGSYS";
    case SIGKILL: return "SIGKILL";
    case SIGXCPU: return "SIGXCPU";
    case SIGXFSZ: return "SIGXFSZ";
    default: return "a signal";
    }
}

/* A child's report, held until the child is known to have finished: in
 * memory up to SPOOL_MEMORY bytes, the rest in an unlinked temporary file
 * (so that a large report costs disk, not memory), and in memory again
 * after that file failed (a full disk). */
#define SPOOL_MEMORY ((size_t)1 << 20)

typedef struct spool {
    ol_buf head;              /* the first bytes */
    int fd;                   /* then these, in a temporary file (-1: none) */
    size_t file_len;
    bool no_file;             /* a file could not be made or written: memory only */
    ol_buf tail;              /* then these */
} spool;

static void spool_add(spool *sp, const char *data, size_t len)
{
    if (sp->fd < 0 && !sp->no_file && sp->head.len + len > SPOOL_MEMORY) {
        sp->fd = ol_temp_fd("report");
        sp->no_file = sp->fd < 0;
    }
    if (sp->fd < 0 || sp->tail.len) {
        ol_buf_add(sp->fd < 0 && !sp->tail.len ? &sp->head : &sp->tail, data, len);
        return;
    }
    while (len > 0) {
        ssize_t w = write(sp->fd, data, len);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            /* what the file did not take goes after it, in memory */
            sp->no_file = true;
            ol_buf_add(&sp->tail, data, len);
            return;
        }
        sp->file_len += (size_t)w;
        data += w;
        len -= (size_t)w;
    }
}

static void spool_free(spool *sp)
{
    ol_buf_free(&sp->head);
    ol_buf_free(&sp->tail);
    if (sp->fd >= 0)
        close(sp->fd);
    sp->fd = -1;
}

/* What happened to one child. */
typedef struct outcome {
    bool exited;              /* normally, with status */
    int status;
    int signal;               /* killed by this signal */
    bool timed_out;           /* by the watchdog */
    bool cpu_limit;           /* for the time it used (CPU, or wall where CPU cannot be read), not the backstop */
    size_t timed_out_slot;    /* the slot of the file stopped */
    double cpu_s, wall_s;     /* what the file took when it was stopped */
    spool report;             /* its standard output */
    OL_VEC(ol_quarantined) in_flight; /* busy slots when it ended (owned) */
    bool report_phase;        /* it had finished linting */
} outcome;

static void quarantined_free(ol_quarantined *q)
{
    free(q->path);
    free(q->reason);
}

static void outcome_free(outcome *o)
{
    spool_free(&o->report);
    for (size_t i = 0; i < o->in_flight.len; i++)
        quarantined_free(&o->in_flight.items[i]);
    ol_vec_free(&o->in_flight);
}

typedef struct supervisor {
    ol_guard guard;
    ol_guarded_run run;
    void *ctx;
    uint64_t file_timeout_ns; /* 0: no watchdog */
} supervisor;

static void reset_slots(ol_guard_shared *sh)
{
    atomic_store(&sh->phase, PHASE_SETUP);
    for (size_t i = 0; i < SLOT_COUNT; i++)
        atomic_store(&sh->slots[i].busy, 0);
}

/* The child's side of a fork: becomes the run, returns its status. */
static int child_main(supervisor *s, int out_fd, int death[2], bool quiet)
{
    /* a supervisor killed outright (SIGKILL) takes its child with it */
#ifdef OL_HAVE_PDEATHSIG
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    (void)death;
#else
    if (death[0] >= 0)
        ol_pdeath_watch(death);
#endif
    for (size_t i = 0; i < OL_ARRAY_LEN(stop_signals); i++)
        signal(stop_signals[i], SIG_DFL);
    if (dup2(out_fd, STDOUT_FILENO) < 0)
        _exit(2);
    close(out_fd);
    if (quiet) {
        int null = open("/dev/null", O_WRONLY | O_CLOEXEC);
        if (null >= 0) {
            dup2(null, STDERR_FILENO);
            close(null);
        }
    }
    atomic_store(&s->guard.shared->phase, PHASE_LINT);
    int status = s->run(s->ctx, &s->guard);
    if (fflush(stdout) != 0)
        status = 2;
    return status;
}

/* Forks one child and waits for it. Returns false when no child could be
 * started. In the child, sets *child_status and returns true with
 * *in_child set. */
static bool run_child(supervisor *s, bool quiet, outcome *o, bool *in_child, int *child_status)
{
    memset(o, 0, sizeof(*o));
    o->report.fd = -1;
    *in_child = false;
    reset_slots(s->guard.shared);
    int fds[2];
    if (pipe(fds) != 0)
        return false;
    /* where prctl cannot tie the child's life to ours, a pipe does
     * (portable.h); without one the child just lacks that safety net */
    int death[2] = {-1, -1};
#ifndef OL_HAVE_PDEATHSIG
    if (!ol_pdeath_pipe(death))
        death[0] = death[1] = -1;
#endif
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid < 0) {
        close(fds[0]);
        close(fds[1]);
        if (death[0] >= 0) {
            close(death[0]);
            close(death[1]);
        }
        return false;
    }
    if (pid == 0) {
        close(fds[0]);
        *in_child = true;
        *child_status = child_main(s, fds[1], death, quiet);
        return true;
    }
    close(fds[1]);
    if (death[0] >= 0)
        close(death[0]);
    current_child = pid;
    fcntl(fds[0], F_SETFL, fcntl(fds[0], F_GETFL) | O_NONBLOCK);
    bool open_pipe = true, killed = false;
    while (open_pipe) {
        struct pollfd p = {fds[0], POLLIN, 0};
        int timeout_ms = s->file_timeout_ns ? 1000 : -1;
        int n = poll(&p, 1, timeout_ms);
        if (n < 0 && errno != EINTR)
            break;
        if (n > 0) {
            for (;;) {
                char chunk[65536];
                ssize_t got = read(fds[0], chunk, sizeof(chunk));
                if (got > 0) {
                    spool_add(&o->report, chunk, (size_t)got);
                    continue;
                }
                if (got == 0)
                    open_pipe = false;
                else if (errno != EAGAIN && errno != EINTR)
                    open_pipe = false;
                break;
            }
        }
        if (s->file_timeout_ns && !killed) {
            uint64_t now = ol_now_ns();
            for (size_t i = 0; i < SLOT_COUNT; i++) {
                guard_slot *slot = &s->guard.shared->slots[i];
                if (!atomic_load_explicit(&slot->busy, memory_order_acquire))
                    continue;
                /* a slot taken after `now` was read has since_ns past it:
                 * not a file over the limit (unsigned, now - since_ns
                 * would wrap to a huge age and kill a healthy run) */
                uint64_t since = slot->since_ns;
                if (now <= since)
                    continue;
                uint64_t wall = now - since, cpu = 0, since_cpu = slot->since_cpu_ns;
                bool have_cpu = read_thread_cpu_ns(pid, slot->tid, &cpu);
                cpu = have_cpu && cpu > since_cpu ? cpu - since_cpu : 0;
                bool over_cpu = have_cpu && cpu > s->file_timeout_ns;
                bool over_wall = have_cpu ? wall / WALL_BACKSTOP > s->file_timeout_ns : wall > s->file_timeout_ns;
                if (over_cpu || over_wall) {
                    kill(pid, SIGKILL);
                    killed = true;
                    o->timed_out = true;
                    o->cpu_limit = over_cpu || !have_cpu;
                    o->cpu_s = have_cpu ? (double)cpu / 1e9 : -1;
                    o->wall_s = (double)wall / 1e9;
                    o->timed_out_slot = i;
                    break;
                }
            }
        }
    }
    close(fds[0]);
    int wstatus = 0;
    while (waitpid(pid, &wstatus, 0) < 0 && errno == EINTR)
        ;
    current_child = 0;
    if (death[1] >= 0)
        close(death[1]);
    if (WIFEXITED(wstatus)) {
        o->exited = true;
        o->status = WEXITSTATUS(wstatus);
    } else if (WIFSIGNALED(wstatus)) {
        o->signal = WTERMSIG(wstatus);
    }
    o->report_phase = atomic_load(&s->guard.shared->phase) == PHASE_REPORT;
    for (size_t i = 0; i < SLOT_COUNT; i++) {
        guard_slot *slot = &s->guard.shared->slots[i];
        if (!atomic_load_explicit(&slot->busy, memory_order_acquire))
            continue;
        ol_quarantined q = {0};
        q.path = slot->path_len < SLOT_PATH_MAX ? ol_xstrndup(s->guard.shared->paths[i], slot->path_len) : NULL;
        q.input = (size_t)slot->input;
        /* the watchdog blames the file it stopped, not its neighbours */
        if (o->timed_out && i != o->timed_out_slot) {
            free(q.path);
            continue;
        }
        ol_vec_push(&o->in_flight, q);
    }
    return true;
}

static char *failure_reason(const outcome *o, uint64_t timeout_ns, bool with_others)
{
    static const char *const bug = "This is a bug in oomlint: please report it, with the file, at " OL_ISSUES_URL;
    double limit = (double)timeout_ns / 1e9;
    if (o->timed_out && o->cpu_limit && o->cpu_s >= 0)
        return ol_xasprintf("oomlint spent more than %g s of CPU time on this file (%.0f s of wall time) and "
                            "stopped; the file was not analyzed. Exclude it or raise OOMLINT_FILE_TIMEOUT if it is "
                            "unusually large; otherwise this is a bug in oomlint: please report it, with the file, at "
                            OL_ISSUES_URL,
                            limit, o->wall_s);
    if (o->timed_out && o->cpu_limit)
        return ol_xasprintf("oomlint took longer than %g s on this file and stopped; the file was not analyzed. "
                            "On a busy machine, raise OOMLINT_FILE_TIMEOUT; otherwise this is a bug in oomlint: please "
                            "report it, with the file, at " OL_ISSUES_URL,
                            limit);
    if (o->timed_out)
        return ol_xasprintf("oomlint timed out under load on this file: %.0f s went by while it used %.0f s of CPU "
                            "time (the machine is busy with other work, or reading the file blocked) and it was "
                            "stopped; the file was not analyzed. Run it again on a quieter machine or raise "
                            "OOMLINT_FILE_TIMEOUT",
                            o->wall_s, o->cpu_s);
    const char *what, *after = bug;
    switch (o->signal) {
    case SIGKILL:
        what = "was killed (SIGKILL), most likely by the system for using too much memory,";
        after = "If memory was not short, this is a bug in oomlint: please report it, with the file, at "
                OL_ISSUES_URL;
        break;
    case SIGABRT:
        what = "aborted (SIGABRT: out of memory or a failed internal check)";
        break;
    case SIGXCPU:
        what = "ran out of its CPU time limit (SIGXCPU)";
        after = "Raise the limit (ulimit -t), or exclude the file";
        break;
    case SIGXFSZ:
        what = "exceeded the file size limit (SIGXFSZ)";
        after = "Raise the limit (ulimit -f)";
        break;
    default:
        what = NULL;
        break;
    }
    char *crash = what ? NULL : ol_xasprintf("crashed (%s, %s)", signal_name(o->signal), strsignal(o->signal));
    char *msg = ol_xasprintf("oomlint %s %s; the file was not analyzed. %s", what ? what : crash,
                             with_others ? "while linting this file among others" : "while linting this file", after);
    free(crash);
    return msg;
}

static bool write_all(int fd, const char *data, size_t len)
{
    while (len > 0) {
        ssize_t w = write(fd, data, len);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            return false;
        }
        data += w;
        len -= (size_t)w;
    }
    return true;
}

/* The child finished: pass its report and status on. */
/* Writes the spooled report to fd, in order. */
static bool spool_write(const spool *sp, int fd)
{
    if (sp->head.len && !write_all(fd, sp->head.data, sp->head.len))
        return false;
    char chunk[65536];
    for (size_t at = 0; sp->fd >= 0 && at < sp->file_len;) {
        size_t want = sp->file_len - at < sizeof(chunk) ? sp->file_len - at : sizeof(chunk);
        ssize_t got = pread(sp->fd, chunk, want, (off_t)at);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0) {
            if (got == 0)
                errno = EIO;
            return false;
        }
        if (!write_all(fd, chunk, (size_t)got))
            return false;
        at += (size_t)got;
    }
    return !sp->tail.len || write_all(fd, sp->tail.data, sp->tail.len);
}

static int finish(const outcome *o)
{
    int status = o->status;
    if (!spool_write(&o->report, STDOUT_FILENO)) {
        fprintf(stderr, "oomlint: error: cannot write the report to standard output: %s\n", strerror(errno));
        status = 2;
    }
    return status;
}

static void die_like(int sig)
{
    signal(sig, SIG_DFL);
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, sig);
    sigprocmask(SIG_UNBLOCK, &set, NULL);
    raise(sig);
    _exit(128 + sig);
}

/* The longest OOMLINT_FILE_TIMEOUT taken (about 31 years): past it the
 * nanoseconds would not fit the watchdog's clock arithmetic. */
#define MAX_FILE_TIMEOUT_S 1e9

/* OOMLINT_FILE_TIMEOUT in nanoseconds (0: no watchdog). A value that is not
 * a number of seconds is an error, not a silent fall back to the default:
 * someone set it to get a different limit. */
static bool file_timeout_from_env(uint64_t *ns)
{
    *ns = (uint64_t)DEFAULT_FILE_TIMEOUT_S * 1000000000u;
    const char *v = getenv("OOMLINT_FILE_TIMEOUT");
    if (!v || !*v)
        return true;
    char *end;
    errno = 0;
    double s = strtod(v, &end);
    while (end != v && (*end == ' ' || *end == '\t'))
        end++;
    /* s == s rules out NaN; the bound rules out inf and overflow */
    if (end == v || *end != '\0' || errno == ERANGE || !(s == s) || s < 0 || s > MAX_FILE_TIMEOUT_S) {
        fprintf(stderr,
                "oomlint: error: OOMLINT_FILE_TIMEOUT must be a number of seconds from 0 (no limit) to %.0f; "
                "got '%s'\n",
                MAX_FILE_TIMEOUT_S, v);
        return false;
    }
    *ns = (uint64_t)(s * 1e9);
    return true;
}

static void fault_from_env(ol_guard *g)
{
    const char *v = getenv("OOMLINT_TEST_FAULT");
    if (!v)
        return;
    static const struct { const char *name; ol_fault fault; } kinds[] = {
        {"segv:", OL_FAULT_SEGV}, {"abort:", OL_FAULT_ABORT}, {"oom:", OL_FAULT_OOM}, {"hang:", OL_FAULT_HANG},
        {"spin:", OL_FAULT_SPIN},
    };
    for (size_t i = 0; i < OL_ARRAY_LEN(kinds); i++) {
        if (ol_str_has_prefix(v, kinds[i].name) && v[strlen(kinds[i].name)] != '\0') {
            g->fault = kinds[i].fault;
            g->fault_match = v + strlen(kinds[i].name);
        }
    }
}

static void guard_free(ol_guard *g)
{
    for (size_t i = 0; i < g->quarantined.len; i++)
        quarantined_free(&g->quarantined.items[i]);
    ol_vec_free(&g->quarantined);
    free(g->stdin_bytes);
    free(g->probe_path);
    if (g->shared)
        munmap(g->shared, sizeof(ol_guard_shared));
    memset(g, 0, sizeof(*g));
}

static bool already_quarantined(const ol_guard *g, const ol_quarantined *q)
{
    for (size_t i = 0; i < g->quarantined.len; i++)
        if (same_input(g->quarantined.items[i].path, g->quarantined.items[i].input, q->input,
                       q->path ? q->path : "") &&
            (q->path != NULL) == (g->quarantined.items[i].path != NULL))
            return true;
    return false;
}

static int supervise_rounds(supervisor *s, bool *is_child)
{
    int final_status = -1;
    for (int round = 0; round < MAX_ROUNDS && final_status < 0; round++) {
        outcome o;
        bool in_child;
        int child_status = 0;
        if (!run_child(s, false, &o, &in_child, &child_status)) {
            if (round == 0) {
                /* no child to be had: run in process, unsupervised */
                *is_child = true;
                return s->run(s->ctx, &s->guard);
            }
            fprintf(stderr, "oomlint: error: cannot start a process to lint the remaining files: %s\n",
                    strerror(errno));
            return 2;
        }
        if (in_child) {
            *is_child = true;
            return child_status;
        }
        if (o.exited) {
            final_status = finish(&o);
            if (s->guard.quarantined.len > 0 && final_status < 2)
                final_status = 2;
            outcome_free(&o);
            break;
        }
        if (!o.timed_out && !crash_signal(o.signal)) {
            /* interrupted (SIGINT, SIGTERM, SIGPIPE, ...): stop as the child did */
            outcome_free(&o);
            guard_free(&s->guard);
            die_like(o.signal);
        }
        if (o.in_flight.len == 0) {
            fprintf(stderr, "oomlint: error: oomlint failed %s (%s); no report was written. This is a bug in "
                            "oomlint: please report it, with the command line, at " OL_ISSUES_URL "\n",
                    o.report_phase ? "while writing the report" : "before linting any file",
                    o.timed_out ? "timeout" : signal_name(o.signal));
            outcome_free(&o);
            return 2;
        }
        /* several files were in flight: probe each alone */
        size_t found = 0;
        for (size_t i = 0; i < o.in_flight.len; i++) {
            ol_quarantined *q = &o.in_flight.items[i];
            bool culprit = o.in_flight.len == 1 || o.timed_out;
            outcome probe_outcome = {.report = {.fd = -1}};
            if (!culprit) {
                s->guard.probe = true;
                s->guard.probe_path = q->path ? ol_xstrdup(q->path) : NULL;
                s->guard.probe_input = q->input;
                bool probe_child;
                int probe_status = 0;
                bool started = run_child(s, true, &probe_outcome, &probe_child, &probe_status);
                if (started && probe_child) {
                    outcome_free(&o);
                    *is_child = true;
                    return probe_status;
                }
                s->guard.probe = false;
                free(s->guard.probe_path);
                s->guard.probe_path = NULL;
                culprit = started && !probe_outcome.exited &&
                          (probe_outcome.timed_out || crash_signal(probe_outcome.signal));
            }
            if (culprit) {
                const outcome *cause = probe_outcome.signal || probe_outcome.timed_out ? &probe_outcome : &o;
                q->reason = failure_reason(cause, s->file_timeout_ns, false);
                found++;
            }
            outcome_free(&probe_outcome);
        }
        if (found == 0) {
            /* none fails alone: it takes company; blame them all */
            for (size_t i = 0; i < o.in_flight.len; i++)
                o.in_flight.items[i].reason = failure_reason(&o, s->file_timeout_ns, true);
        }
        for (size_t i = 0; i < o.in_flight.len; i++) {
            ol_quarantined *q = &o.in_flight.items[i];
            if (!q->reason || already_quarantined(&s->guard, q)) {
                quarantined_free(q);
                continue;
            }
            fprintf(stderr, "oomlint: error: %s: %s\n", q->path ? q->path : "(a file)", q->reason);
            ol_vec_push(&s->guard.quarantined, *q);
        }
        o.in_flight.len = 0;
        outcome_free(&o);
    }
    if (final_status < 0) {
        fprintf(stderr, "oomlint: error: oomlint failed on more files than it can set aside (%d runs); "
                        "no report was written\n",
                MAX_ROUNDS);
        final_status = 2;
    }
    return final_status;
}

int ol_supervise(const ol_supervise_options *o, ol_guarded_run run, void *ctx)
{
    bool child = false, *is_child = &child;
    /* past a file-size limit (ulimit -f) a write should fail with EFBIG and
     * be reported as the write error it is, here and in the children, not
     * kill the process */
    signal(SIGXFSZ, SIG_IGN);
    supervisor s;
    memset(&s, 0, sizeof(s));
    s.run = run;
    s.ctx = ctx;
    if (!file_timeout_from_env(&s.file_timeout_ns))
        return 2;
    fault_from_env(&s.guard);
    s.guard.stdout_tty = isatty(STDOUT_FILENO);
    if (o->read_stdin) {
        s.guard.stdin_read = true;
        s.guard.stdin_error = ol_read_stream(STDIN_FILENO, OL_MAX_SOURCE_BYTES, &s.guard.stdin_bytes,
                                             &s.guard.stdin_len);
    }
    const char *off = getenv("OOMLINT_NO_SUPERVISOR");
    void *shared = MAP_FAILED;
    if (!(off && *off && strcmp(off, "0") != 0))
        shared = mmap(NULL, sizeof(ol_guard_shared), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (shared == MAP_FAILED) {
        /* in process: the guard still carries stdin and the fault hook */
        *is_child = true;
        s.guard.stdout_tty = isatty(STDOUT_FILENO);
        int status = run(ctx, &s.guard);
        guard_free(&s.guard);
        return status;
    }
    s.guard.shared = shared;
    s.guard.slot_count = SLOT_COUNT;
    struct sigaction sa, old[OL_ARRAY_LEN(stop_signals)];
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = forward_signal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART;
    for (size_t i = 0; i < OL_ARRAY_LEN(stop_signals); i++)
        sigaction(stop_signals[i], &sa, &old[i]);
    int status = supervise_rounds(&s, is_child);
    if (!*is_child)
        for (size_t i = 0; i < OL_ARRAY_LEN(stop_signals); i++)
            sigaction(stop_signals[i], &old[i], NULL);
    guard_free(&s.guard);
    return status;
}
