/*
 * explain.c - `oomlint explain`: the command line, reading the inputs, and
 * the exit status. What the report holds is built by explain_link.c and
 * explain_diagnose.c and written by explain_emit.c (explain_internal.h).
 *
 *   oomlint explain [LOG|-] [SNAPSHOT.pickle] [--snapshot FILE] [--root DIR]...
 *
 * The log is read as a stream (a Slurm output of any size, standard input,
 * a FIFO), the snapshot whole (it must be a regular file of at most 1 GiB).
 * A second positional argument, or the only one, is the snapshot when it
 * names a .pickle/.pkl file or starts like a pickle.
 *
 * Exit status: 0 the error was explained and no file on its stack has a
 * finding at or above --fail-on (default warning); 1 such findings; 2 a
 * usage error, an input that cannot be read, a snapshot that is not one, no
 * out-of-memory error found in the log (and no snapshot to explain), or a
 * report that could not be written. --exit-zero turns 1 into 0, never 2.
 */
#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "explain_internal.h"
#include "writefile.h"

#define READ_CHUNK (1u << 20)

static void usage(FILE *out)
{
    fputs("Usage: oomlint explain [LOG|-] [SNAPSHOT.pickle] [OPTIONS]\n"
          "\n"
          "Reads the out-of-memory errors in a log (a Slurm output, a training log, several\n"
          "ranks, or - for standard input) and, where given, a memory snapshot written by\n"
          "torch.cuda.memory._dump_snapshot(); says what happened from the error's figures,\n"
          "finds the traceback's files on disk, lints them and the files of their run, and\n"
          "ranks the findings by their place on the failing stack.\n"
          "\n"
          "Options:\n"
          "  --snapshot FILE         a memory snapshot pickle (read without PyTorch)\n"
          "  --root DIR              where the job's code is: a frame's path is looked for as\n"
          "                          written, then by its last components under each DIR\n"
          "                          (repeatable; default: the current directory)\n"
          "  --output-format FORMAT  text (default), json or sarif; --format is the same option\n"
          "  -o, --output-file PATH  write the report to PATH instead of standard output\n"
          "  --color WHEN            auto (default), always or never\n"
          "  --fail-on SEVERITY      the least severe finding on the stack that fails the run:\n"
          "                          error, warning (default) or info\n"
          "  --exit-zero             exit 0 even when there are findings\n"
          "  --config PATH           the configuration to lint the files with\n"
          "  --isolated              ignore every configuration file\n"
          "  -j, --threads N         lint on N threads (default: one per CPU)\n"
          "  -q, --quiet             no warnings on standard error\n"
          "  -h, --help              print this help\n"
          "\n"
          "Exit status: 0 explained, and no finding on the failing stack; 1 findings on it;\n"
          "2 usage error, an unreadable input or snapshot, or no out-of-memory error found.\n",
          out);
}

static bool looks_like_pickle(const char *path)
{
    if (ol_str_has_suffix(path, ".pickle") || ol_str_has_suffix(path, ".pkl") || ol_str_has_suffix(path, ".pck"))
        return true;
    struct stat st;
    if (strcmp(path, "-") == 0 || stat(path, &st) != 0 || !S_ISREG(st.st_mode))
        return false;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return false;
    unsigned char head[2] = {0, 0};
    ssize_t n = read(fd, head, 2);
    close(fd);
    return n == 2 && head[0] == 0x80 && head[1] <= 5;
}

/* 0 parsed, 1 --help printed, 2 usage error. */
static int parse_args(ol_explain_opts *o, int argc, char **argv, ol_buf *err)
{
    memset(o, 0, sizeof(*o));
    o->format = OL_FMT_TEXT;
    o->fail_on = OL_SEV_WARNING;
    ol_color color = OL_COLOR_AUTO;
    OL_VEC(const char *) positional = {0};
    bool options_done = false;
    int status = 0;
    for (int i = 1; i < argc && status == 0; i++) {
        const char *arg = argv[i];
        if (options_done || arg[0] != '-' || strcmp(arg, "-") == 0) {
            ol_vec_push(&positional, arg);
            continue;
        }
        if (strcmp(arg, "--") == 0) {
            options_done = true;
            continue;
        }
        if (strcmp(arg, "-h") == 0 || strcmp(arg, "--help") == 0) {
            usage(stdout);
            status = 1;
            break;
        }
        if (strcmp(arg, "--exit-zero") == 0) {
            o->exit_zero = true;
            continue;
        }
        if (strcmp(arg, "--isolated") == 0) {
            o->isolated = true;
            continue;
        }
        if (strcmp(arg, "-q") == 0 || strcmp(arg, "--quiet") == 0) {
            o->quiet = true;
            continue;
        }
        const char *name = arg;
        const char *eq = strncmp(arg, "--", 2) == 0 ? strchr(arg, '=') : NULL;
        size_t len = eq ? (size_t)(eq - arg) : strlen(arg);
        static const char *const known[] = {"--snapshot", "--root", "--output-format", "--format", "-o",
                                            "--output-file", "--color", "--fail-on", "--config", "-j", "--threads"};
        const char *key = NULL;
        for (size_t k = 0; k < OL_ARRAY_LEN(known); k++)
            if (strlen(known[k]) == len && strncmp(known[k], name, len) == 0)
                key = known[k];
        if (!key) {
            ol_buf_printf(err, "unknown option '%.*s' for 'explain'", (int)(len < 40 ? len : 40), name);
            status = 2;
            break;
        }
        const char *value = eq ? eq + 1 : NULL;
        if (!value) {
            if (i + 1 >= argc) {
                ol_buf_printf(err, "option '%s' needs a value", key);
                status = 2;
                break;
            }
            value = argv[++i];
        }
        if (strcmp(key, "--snapshot") == 0) {
            o->snapshot_path = value;
        } else if (strcmp(key, "--root") == 0) {
            ol_vec_push(&o->roots, value);
        } else if (strcmp(key, "--output-format") == 0 || strcmp(key, "--format") == 0) {
            ol_format f;
            if (!ol_format_parse(value, &f) || (f != OL_FMT_TEXT && f != OL_FMT_JSON && f != OL_FMT_SARIF)) {
                ol_buf_printf(err, "invalid value '%s' for '%s' (expected: text, json, sarif)", value, key);
                status = 2;
            }
            o->format = f;
        } else if (strcmp(key, "-o") == 0 || strcmp(key, "--output-file") == 0) {
            o->output_file = value;
        } else if (strcmp(key, "--color") == 0) {
            if (strcmp(value, "auto") == 0)
                color = OL_COLOR_AUTO;
            else if (strcmp(value, "always") == 0)
                color = OL_COLOR_ALWAYS;
            else if (strcmp(value, "never") == 0)
                color = OL_COLOR_NEVER;
            else {
                ol_buf_printf(err, "invalid value '%s' for '--color' (expected: auto, always, never)", value);
                status = 2;
            }
        } else if (strcmp(key, "--fail-on") == 0) {
            if (!ol_severity_parse(value, &o->fail_on)) {
                ol_buf_printf(err, "invalid value '%s' for '--fail-on' (expected: error, warning, info)", value);
                status = 2;
            }
        } else if (strcmp(key, "--config") == 0) {
            o->config_path = value;
        } else {
            char *end;
            long n = strtol(value, &end, 10);
            if (*end || n < 0 || n > 1024) {
                ol_buf_printf(err, "invalid value '%s' for '%s' (expected a number of threads)", value, key);
                status = 2;
            }
            o->threads = (int)n;
        }
    }
    /* positional: the log, and the snapshot by its name or first bytes */
    for (size_t i = 0; i < positional.len && status == 0; i++) {
        const char *p = positional.items[i];
        if (!o->snapshot_path && looks_like_pickle(p)) {
            o->snapshot_path = p;
        } else if (!o->log_path) {
            o->log_path = p;
        } else {
            ol_buf_printf(err, "'explain' reads one log and one snapshot (got '%s' as well)", p);
            status = 2;
        }
    }
    ol_vec_free(&positional);
    if (status == 0 && !o->log_path && !o->snapshot_path) {
        if (isatty(STDIN_FILENO)) {
            ol_buf_puts(err, "give the log to explain (a file, or - for standard input)");
            status = 2;
        } else {
            o->log_path = "-";
        }
    }
    if (color == OL_COLOR_ALWAYS)
        o->color = true;
    else if (color == OL_COLOR_AUTO && !o->output_file) {
        const char *no_color = getenv("NO_COLOR"), *force = getenv("FORCE_COLOR"), *term = getenv("TERM");
        o->color = (force && *force) ||
                   (!(no_color && *no_color) && isatty(STDOUT_FILENO) && !(term && strcmp(term, "dumb") == 0));
    }
    return status;
}

/* Streams the log through the reader. 0, or an errno. */
static int read_log(ol_explain *x, const char *path)
{
    bool from_stdin = strcmp(path, "-") == 0;
    int fd = from_stdin ? STDIN_FILENO : open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return errno;
    struct stat st;
    if (fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
        if (!from_stdin)
            close(fd);
        return EISDIR;
    }
    char *buf = ol_xmalloc(READ_CHUNK);
    int result = 0;
    for (;;) {
        ssize_t n = read(fd, buf, READ_CHUNK);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            result = errno;
            break;
        }
        if (n == 0)
            break;
        ol_oom_log_feed(&x->log, buf, (size_t)n);
    }
    ol_oom_log_finish(&x->log);
    free(buf);
    if (!from_stdin)
        close(fd);
    return result;
}

static bool device_error(ol_oom_kind k)
{
    return k != OL_OOM_CPU && k != OL_OOM_HOST_KILLED;
}

static void add_error(ol_explain *x, ol_oom_event *ev)
{
    ol_ex_error e;
    memset(&e, 0, sizeof(e));
    e.event = ev;
    e.innermost = SIZE_MAX;
    e.phase_frame = SIZE_MAX;
    for (size_t k = 0; k < ev->frames.len; k++) {
        ol_ex_frame fr = {&ev->frames.items[k], ol_oom_user_file(ev->frames.items[k].file), SIZE_MAX};
        if (fr.user && ev->frames.items[k].line)
            e.innermost = k;
        ol_vec_push(&e.frames, fr);
    }
    ol_vec_push(&x->errors, e);
}

/* With no error in the log, the snapshot's own OOM entry stands for it. */
static void event_from_snapshot(ol_explain *x)
{
    ol_oom_event *ev = &x->snapshot_event;
    memset(ev, 0, sizeof(*ev));
    ev->kind = OL_OOM_CUDA;
    ev->rank = "";
    ev->exc_type = "";
    ev->step = ev->steps_total = -1;
    ev->message = ol_xstrdup("the out-of-memory entry of the snapshot's trace");
    ev->fig.device = x->snap.device;
    ev->fig.requested = x->snap.oom_requested;
    ev->fig.free = x->snap.oom_device_free;
    /* what the allocator held, as the snapshot's segments show it */
    ev->fig.allocated = x->snap.alive;
    ev->fig.reserved = x->snap.reserved;
    ev->fig.reserved_unallocated = x->snap.inactive;
    ev->fig.total = ev->fig.this_process = OL_BYTES_UNKNOWN;
    ev->fig.allowed = ev->fig.private_pools = ev->fig.other_allocations = OL_BYTES_UNKNOWN;
    /* the trace's frames are innermost first; a traceback's outermost first */
    for (size_t k = x->snap.oom_frames.len; k-- > 0;)
        ol_vec_push(&ev->frames, x->snap.oom_frames.items[k]);
    ev->traceback = ev->frames.len > 0;
    x->have_snapshot_event = true;
    add_error(x, ev);
}

void ol_explain_free(ol_explain *x)
{
    for (size_t i = 0; i < x->errors.len; i++) {
        ol_ex_error *e = &x->errors.items[i];
        ol_vec_free(&e->frames);
        for (size_t k = 0; k < e->verdicts.len; k++)
            ol_verdict_free(&e->verdicts.items[k]);
        ol_vec_free(&e->verdicts);
    }
    ol_vec_free(&x->errors);
    for (size_t i = 0; i < x->snapshot_verdicts.len; i++)
        ol_verdict_free(&x->snapshot_verdicts.items[i]);
    ol_vec_free(&x->snapshot_verdicts);
    for (size_t i = 0; i < x->files.len; i++) {
        ol_ex_file *f = &x->files.items[i];
        free(f->path);
        ol_file_result_free(&f->result);
        ol_vec_free(&f->defs);
        ol_vec_free(&f->loops);
        ol_arena_free(&f->names);
    }
    ol_vec_free(&x->files);
    for (size_t i = 0; i < x->missing.len; i++)
        free(x->missing.items[i]);
    ol_vec_free(&x->missing);
    for (size_t i = 0; i < x->notes.len; i++)
        free(x->notes.items[i]);
    ol_vec_free(&x->notes);
    ol_vec_free(&x->findings);
    ol_vec_free(&x->snaplines);
    if (x->have_snapshot_event) {
        free(x->snapshot_event.message);
        ol_vec_free(&x->snapshot_event.frames);
    }
    if (x->have_snapshot)
        ol_mem_snapshot_free(&x->snap);
    ol_pickle_free(&x->pickle);
    free(x->snapshot_bytes);
    if (x->have_log)
        ol_oom_log_free(&x->log);
}

static void error_line(const char *fmt, ...) OL_PRINTF(1, 2);

/* "oomlint explain: error: ..." with file names made safe for a terminal. */
static void error_line(const char *fmt, ...)
{
    ol_buf msg = {0};
    va_list ap;
    va_start(ap, fmt);
    ol_buf_vprintf(&msg, fmt, ap);
    va_end(ap);
    ol_buf esc = {0};
    ol_escape_display(&esc, msg.data, false);
    fprintf(stderr, "oomlint explain: error: %s\n", esc.data ? esc.data : "");
    ol_buf_free(&msg);
    ol_buf_free(&esc);
}

static void warning_line(const char *path)
{
    ol_buf esc = {0};
    ol_escape_display(&esc, path, false);
    if (ol_oom_notebook_cell(path))
        fprintf(stderr, "oomlint explain: warning: '%s' (a frame of the traceback) is a notebook cell: lint the "
                        "notebook itself\n",
                esc.data ? esc.data : "");
    else
        fprintf(stderr, "oomlint explain: warning: '%s' (a frame of the traceback) is not on disk; --root DIR says "
                        "where the job's code is\n",
                esc.data ? esc.data : "");
    ol_buf_free(&esc);
}

static int run(const ol_explain_opts *o)
{
    ol_explain x;
    memset(&x, 0, sizeof(x));
    x.opts = o;
    int status = 0;
    if (o->log_path) {
        ol_oom_log_init(&x.log);
        x.have_log = true;
        int err = read_log(&x, o->log_path);
        if (err) {
            ol_buf why = {0};
            ol_describe_read_error(&why, err, 0, "the log");
            error_line("cannot read '%s': %s", strcmp(o->log_path, "-") == 0 ? "<stdin>" : o->log_path, why.data);
            ol_buf_free(&why);
            ol_explain_free(&x);
            return 2;
        }
        for (size_t i = 0; i < x.log.events.len; i++)
            add_error(&x, &x.log.events.items[i]);
        for (size_t i = 0; i < x.errors.len; i++) {
            if (device_error(x.errors.items[i].event->kind)) {
                x.primary = i;
                break;
            }
        }
    }
    if (o->snapshot_path) {
        int err = ol_read_file(o->snapshot_path, OL_PICKLE_MAX_BYTES, &x.snapshot_bytes, &x.snapshot_len);
        ol_buf why = {0};
        if (err) {
            ol_describe_read_error(&why, err, OL_PICKLE_MAX_BYTES, "the snapshot");
            error_line("cannot read '%s': %s", o->snapshot_path, why.data);
        } else if (!ol_pickle_read(&x.pickle, x.snapshot_bytes, x.snapshot_len, &why)) {
            error_line("'%s' is not a memory snapshot: %s", o->snapshot_path, why.data);
            err = -1;
        } else {
            int device = x.errors.len ? x.errors.items[x.primary].event->fig.device : -1;
            if (!ol_mem_snapshot_read(&x.snap, x.pickle.root, device, &why)) {
                error_line("'%s' is %s", o->snapshot_path, why.data);
                err = -1;
            } else {
                x.have_snapshot = true;
            }
        }
        ol_buf_free(&why);
        if (err) {
            ol_explain_free(&x);
            return 2;
        }
        if (!x.errors.len && x.snap.at_oom)
            event_from_snapshot(&x);
    }
    if (!x.errors.len && !x.have_snapshot) {
        error_line("no out-of-memory error found in '%s' (%llu lines read)",
                   strcmp(o->log_path, "-") == 0 ? "<stdin>" : o->log_path, (unsigned long long)x.log.lines);
        ol_explain_free(&x);
        return 2;
    }

    ol_explain_link(&x);
    ol_explain_diagnose(&x);

    FILE *out = stdout;
    ol_report_file report = {0};
    if (o->output_file) {
        ol_buf why = {0};
        if (!ol_report_open(&report, o->output_file, &why)) {
            error_line("cannot write '%s': %s", o->output_file, why.data ? why.data : "unknown reason");
            ol_buf_free(&why);
            ol_explain_free(&x);
            return 2;
        }
        ol_buf_free(&why);
        out = report.fp;
    }
    ol_explain_emit(&x, out);
    status = ol_explain_failing(&x) > 0 && !o->exit_zero ? 1 : 0;
    if (!o->quiet && o->format != OL_FMT_TEXT) {
        for (size_t i = 0; i < x.missing.len; i++)
            warning_line(x.missing.items[i]);
    }
    if (out == stdout) {
        int werr = 0;
        if (!ol_stream_ok(stdout, &werr)) {
            error_line("cannot write the report to standard output: %s", strerror(werr));
            status = 2;
        }
    } else {
        ol_buf why = {0};
        if (!ol_report_commit(&report, &why)) {
            error_line("cannot write '%s': %s", o->output_file, why.data ? why.data : "unknown reason");
            status = 2;
        }
        ol_buf_free(&why);
    }
    ol_explain_free(&x);
    return status;
}

int ol_explain_main(int argc, char **argv)
{
    ol_explain_opts opts;
    ol_buf err = {0};
    int rc = parse_args(&opts, argc, argv, &err);
    if (rc != 0) {
        if (rc == 2) {
            ol_buf esc = {0};
            ol_escape_display(&esc, err.data ? err.data : "bad usage", false);
            fprintf(stderr, "oomlint explain: error: %s\nRun 'oomlint explain --help' for usage.\n", esc.data);
            ol_buf_free(&esc);
        }
        ol_buf_free(&err);
        ol_vec_free(&opts.roots);
        return rc == 1 ? 0 : 2;
    }
    ol_buf_free(&err);
    int status = run(&opts);
    ol_vec_free(&opts.roots);
    return status;
}
