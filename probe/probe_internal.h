/*
 * probe_internal.h - what the probe's C files share: child processes with a
 * record pipe (probe_run.c), statistics (probe_stats.c), the NVML sampler
 * (probe_nvml.c), the SVG plot (probe_svg.c), and the two modes probe.c
 * dispatches to: the scenarios (probe_scenarios.c) and --script
 * (probe_script.c).
 */
#ifndef OL_PROBE_INTERNAL_H
#define OL_PROBE_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "probe.h"
#include "util.h"

struct cJSON;

/* ---- options shared by both modes ------------------------------------------------ */

typedef enum ol_probe_device {
    OL_PROBE_AUTO,
    OL_PROBE_CPU,
    OL_PROBE_CUDA,
} ol_probe_device;

typedef struct ol_probe_opts {
    ol_probe_device device;
    char *rules;             /* --rules, comma-separated codes or prefixes */
    int iterations;          /* --iterations */
    char *python;            /* --python */
    bool json;               /* --format json */
    char *plot;              /* --plot FILE.svg */
    int jobs;                /* --jobs: variants run at once (CPU only) */
    int timeout_s;           /* --timeout: per process */
    char *script;            /* --script FILE */
    int steps;               /* --steps */
    double memory;           /* --memory, bytes; 0 when not given */
    char *snapshot;          /* --snapshot FILE (CUDA) */
    char **script_args;      /* after --, borrowed from argv */
    int script_argc;
} ol_probe_opts;

/* The Python found for the probe. */
typedef struct ol_probe_python {
    char *path;              /* absolute path of the interpreter */
    char *torch;             /* torch.__version__ */
    bool cuda;               /* torch.cuda.is_available() */
    char *gpu;               /* first GPU's name, when cuda */
} ol_probe_python;

/* Everything a run of the probe needs from its surroundings. */
typedef struct ol_probe_env {
    const ol_probe_opts *opts;
    ol_probe_python py;
    const char *device;      /* "cpu" or "cuda" */
    char *dir;               /* where harness.py lives */
    bool dir_is_temp;        /* dir was made by us and is removed at the end */
    char **envp;             /* the children's environment */
    int sigfd;               /* signalfd for SIGINT/SIGTERM/SIGHUP, or -1 */
    bool interrupted;        /* a signal arrived: stop, clean up, exit 130 */
    bool progress;           /* stderr is a terminal: show progress */
    uint64_t started_ns;
} ol_probe_env;

/* ---- child processes (probe_run.c) ----------------------------------------------------- */

typedef enum ol_child_status {
    OL_CHILD_PENDING,
    OL_CHILD_RUNNING,
    OL_CHILD_EXITED,         /* exited on its own; see exit_code */
    OL_CHILD_CRASHED,        /* killed by a signal, or could not start */
    OL_CHILD_TIMEOUT,        /* ran past the timeout, killed */
    OL_CHILD_GARBAGE,        /* wrote something that is not a record, killed */
    OL_CHILD_STOPPED,        /* killed because the probe was interrupted */
} ol_child_status;

typedef struct ol_child ol_child;

/* Called for each record line (a JSON object with a string "t"). Return
 * false to reject it as garbage (the child is then killed); set *why. */
typedef bool (*ol_child_record_fn)(void *ctx, ol_child *c, const struct cJSON *rec, const char **why);
typedef void (*ol_child_event_fn)(void *ctx, ol_child *c);

struct ol_child {
    /* set by the caller */
    char **argv;             /* argv[0] is an absolute path; owned, NULL-terminated */
    void *ctx;               /* handed to the callbacks */
    ol_child_record_fn on_record;
    ol_child_event_fn on_start, on_end;
    /* state and outcome */
    ol_child_status status;
    pid_t pid;
    int rec_fd, out_fd;
    ol_buf line;             /* the record line being read */
    ol_buf output;           /* stdout+stderr, the last OL_CHILD_OUTPUT_KEEP bytes */
    uint64_t started_ns, ended_ns;
    int exit_code;           /* when EXITED */
    int term_signal;         /* when CRASHED by a signal */
    char *error;             /* why it failed, for the report */
    size_t records;
};

#define OL_CHILD_OUTPUT_KEEP 8192
#define OL_RECORD_MAX (4u * 1024u * 1024u)

void ol_child_init(ol_child *c, char **argv, void *ctx);
void ol_child_free(ol_child *c);

/* Runs children, at most `parallel` at once, each under env->opts->timeout_s.
 * Returns when all have ended or the probe was interrupted (env->interrupted). */
void ol_children_run(ol_probe_env *env, ol_child **kids, size_t n, int parallel, int timeout_s);

/* The last non-empty line of a child's output (for messages), or "". */
const char *ol_child_last_line(const ol_child *c, ol_buf *scratch);

/* argv helpers */
char **ol_argv_new(const char *first, ...);
void ol_argv_push(char ***argv, const char *arg);
void ol_argv_free(char **argv);

/* ---- statistics (probe_stats.c) ---------------------------------------------------------- */

typedef OL_VEC(double) ol_dvec;

/* Least-squares slope of v[i] over i for i >= from; NaN where fewer than 2
 * finite points remain. */
double ol_stat_slope(const ol_dvec *v, size_t from);
double ol_stat_max(const ol_dvec *v, size_t from);
double ol_stat_median(const ol_dvec *v, size_t from);
double ol_stat_last(const ol_dvec *v);
/* The iterations left out of fits: the first fifth, at least one. */
size_t ol_stat_warmup(size_t n);
/* Checksums agree: |a-b| <= rtol * max(|a|,|b|) + 1e-12. */
bool ol_stat_close(double a, double b, double rtol);
/* v rounded half away from zero (NaN and infinities unchanged). Not libm's
 * round(): the release binary links nothing but the C library. */
double ol_stat_round(double v);

/* "1.5 MiB", "312 B", "-4.0 KiB" */
void ol_fmt_bytes(ol_buf *b, double bytes);
/* "12.3 ms", "1.20 s" */
void ol_fmt_seconds(ol_buf *b, double s);

/* ---- NVML (probe_nvml.c) ------------------------------------------------------------- */

typedef struct ol_nvml ol_nvml;

/* Loads libnvidia-ml.so.1 and initialises it; NULL (with a reason in why)
 * where there is no driver library or no device. */
ol_nvml *ol_nvml_open(ol_buf *why);
void ol_nvml_close(ol_nvml *n);
/* Starts sampling pid's device memory every few milliseconds on a thread.
 * gpu_id is the device's UUID or PCI bus id as torch reports it, or NULL
 * (then the device is found by the process). */
bool ol_nvml_start(ol_nvml *n, pid_t pid);
void ol_nvml_set_device(ol_nvml *n, const char *uuid, const char *pci_bus_id);
/* The highest reading since the last call (or the start), and whether it is
 * the process's own figure (true) or the whole device's (false, where the
 * driver does not list the process, as in some containers). */
bool ol_nvml_take_peak(ol_nvml *n, double *bytes, bool *process_scope);
void ol_nvml_stop(ol_nvml *n);

/* ---- SVG (probe_svg.c) ------------------------------------------------------------------ */

typedef struct ol_svg_line {
    const char *label;       /* "bad", "fixed", "total" */
    const char *color;
    const ol_dvec *y;
} ol_svg_line;

/* A reference line across (hline: a value, such as --memory) or up
 * (vline: a step, such as the one where memory runs out); absent where
 * the label is NULL. */
typedef struct ol_svg_mark {
    const char *label;       /* owned by the caller: "--memory 24.00 GiB" */
    const char *kind;        /* the SVG class: "memory", "run-out" */
    double at;
} ol_svg_mark;

typedef struct ol_svg_panel {
    char *title;             /* owned */
    char *unit;              /* owned: "bytes", "nodes", "s" */
    ol_svg_line lines[6];
    size_t line_count;
    /* per line: the steps of its points (NULL: 1, 2, ...), and whether it
     * is a projection rather than a measurement (dashed) */
    const ol_dvec *line_x[6];
    bool line_dashed[6];
    bool stacked;            /* lines are parts of a whole: filled, one on top of the other */
    ol_svg_mark hline, vline;
    char *empty_note;        /* owned, or NULL: what a panel without figures says ("no figures") */
} ol_svg_panel;

typedef OL_VEC(ol_svg_panel) ol_svg_panels;

/* Renders panels in a grid as one standalone SVG document. Each panel is a
 * <g class="panel"> with its plot area (<rect class="plot-area">), its
 * series (class "data"), its reference lines (<line class="memory">, ...)
 * and, above the plot area and never on it, its legend
 * (<g class="legend"> around a <rect class="legend-box">). */
void ol_svg_render(ol_buf *out, const char *title, const ol_svg_panels *panels);
void ol_svg_panels_free(ol_svg_panels *p);
/* Writes data to path through a temporary file and rename: never half a file. */
bool ol_write_file_atomic(const char *path, const char *data, size_t len, ol_buf *err);

/* "24GiB", "24G", "16GB", "8000MiB", "1e9": bytes (probe.c). */
bool ol_parse_size(const char *s, double *out);

/* ---- modes ------------------------------------------------------------------------ */

/* The scenarios: run, judge, report (probe_scenarios.c). */
int ol_probe_scenarios(ol_probe_env *env);
/* --script: lint the script, run it under wrapper.py, report (probe_script.c). */
int ol_probe_script(ol_probe_env *env);

/* The progress line (stderr, terminals only). */
void ol_progress(ol_probe_env *env, const char *fmt, ...) OL_PRINTF(2, 3);
void ol_progress_clear(ol_probe_env *env);


#endif
