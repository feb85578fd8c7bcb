/*
 * supervise.h - one file's crash never takes down a run.
 *
 * A linter that runs on every commit must not lose a whole run's report
 * because one file hit a bug (a crash) or a limit (memory, time). The
 * command line therefore runs the lint in a child process, and the parent
 * (the supervisor) stays small and single-threaded:
 *
 *   parent: parse argv, read standard input (so a retry can see it again),
 *           map a shared page of per-thread "now linting" slots, fork.
 *   child:  the whole run as before (config, discovery, threads, fixes,
 *           report). Each worker thread marks its slot busy with the input's
 *           index and path before linting it and clears it after: two stores
 *           to shared memory, no system call. The report goes to a pipe.
 *   parent: collects the report. A child that exits normally had nothing go
 *           wrong: its report and status are passed on. A child killed by a
 *           crash signal (SIGSEGV, SIGABRT, SIGBUS, SIGFPE, SIGILL, SIGKILL
 *           from the kernel's OOM killer, SIGXCPU) or by the watchdog (one
 *           file in flight longer than the time limit) leaves busy slots: the
 *           files it was in the middle of. With one suspect, that file is the
 *           culprit; with several (threads), each is re-run alone in a probe
 *           child of its own (no writes, report discarded) to tell the
 *           culprit from bystanders. Then a fresh child runs the whole run
 *           again with the culprits quarantined: each gets an OOM001 finding
 *           ("oomlint crashed on this file ...") instead of being linted, and
 *           the run's exit status is 2. The report is written only once, by
 *           the child that finishes, so a crashed child has printed nothing.
 *
 * Re-running is safe: --fix is idempotent, and a file is written only after
 * its fixes were verified (fix.c). Signals that mean "stop" rather than
 * "bug" (SIGINT, SIGTERM, SIGHUP, SIGPIPE, SIGQUIT) end the run as they
 * would have without a supervisor: the parent passes them on to the child
 * and then dies of the same signal.
 *
 * The cost is one fork and one pipe per run, and two stores per file
 * (measured in tests/trust_tests.py's notes and the benchmark: well under 1%).
 * The library keeps its in-process path: ol_lint_source() and ol_lint_all()
 * take no guard (NULL) and never fork; the language server uses them so.
 *
 * OOMLINT_FILE_TIMEOUT (seconds, default 300) is the watchdog's limit per
 * file; 0 turns the watchdog off. OOMLINT_NO_SUPERVISOR=1 runs in process
 * (for debuggers). OOMLINT_TEST_FAULT=KIND:TEXT makes linting any file whose
 * path contains TEXT fail on purpose (KIND: segv, abort, oom, hang), for the
 * tests of this machinery; it is read once, here, never in the library.
 */
#ifndef OL_SUPERVISE_H
#define OL_SUPERVISE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util.h"

typedef struct ol_guard_shared ol_guard_shared;

typedef enum ol_fault {
    OL_FAULT_NONE,
    OL_FAULT_SEGV,
    OL_FAULT_ABORT,
    OL_FAULT_OOM,
    OL_FAULT_HANG,   /* blocks without using the CPU (a read that never returns) */
    OL_FAULT_SPIN,   /* loops forever on the CPU */
} ol_fault;

/* A file a previous child failed on, reported instead of linted. */
typedef struct ol_quarantined {
    char *path;        /* display path; NULL when only the index is known */
    size_t input;      /* index among the run's inputs */
    char *reason;      /* the OOM001 message */
} ol_quarantined;

/* What a child is told by its supervisor. */
typedef struct ol_guard {
    ol_guard_shared *shared;   /* the slots (MAP_SHARED) */
    size_t slot_count;
    OL_VEC(ol_quarantined) quarantined;
    char *probe_path;          /* probe child: lint only this input (owned) */
    size_t probe_input;
    bool probe;
    /* standard input, read by the parent before the first fork */
    bool stdin_read;
    int stdin_error;           /* errno, or 0 */
    char *stdin_bytes;
    size_t stdin_len;
    bool stdout_tty;           /* the real stdout is a terminal (the child's is a pipe) */
    ol_fault fault;            /* OOMLINT_TEST_FAULT */
    const char *fault_match;
} ol_guard;

/* The run a child performs; returns its exit status. */
typedef int (*ol_guarded_run)(void *ctx, const ol_guard *guard);

typedef struct ol_supervise_options {
    bool read_stdin;           /* an input is `-`: read it before forking */
} ol_supervise_options;

/* Runs run(ctx, guard) in supervised children as described above and
 * returns the exit status for the process. It returns in the children too,
 * with the child's own status, so that main frees what it owns and returns
 * it as usual. Falls back to running in process when no child can be
 * started. */
int ol_supervise(const ol_supervise_options *o, ol_guarded_run run, void *ctx);

/* For the lint workers (lint.c). slot: the worker's number. Tolerate a
 * NULL guard (in-process runs). */
void ol_guard_begin(const ol_guard *g, size_t slot, size_t input, const char *path);
void ol_guard_end(const ol_guard *g, size_t slot);
/* The quarantine entry for this input, or NULL. */
const ol_quarantined *ol_guard_quarantined(const ol_guard *g, size_t input, const char *path);
/* Whether a probe child skips this input. */
bool ol_guard_skips(const ol_guard *g, size_t input, const char *path);
/* OOMLINT_TEST_FAULT: fails on purpose when path matches. */
void ol_guard_maybe_fail(const ol_guard *g, const char *path);
/* The run has finished linting and is writing its report. */
void ol_guard_reporting(const ol_guard *g);

#endif
