/*
 * probe.h - `oomlint probe`: measuring what each rule's pattern really costs,
 * and confirming findings in a user's own script.
 *
 * The probe runs Python programs (probe/harness.py, probe/scenarios/,
 * probe/wrapper.py) that are compiled into the binary and written to a
 * private temporary folder at run time; C does the rest: finding a Python
 * with PyTorch, starting one process per variant with a record pipe,
 * timeouts, statistics, verdicts, the table, JSON and SVG output, and NVML.
 *
 * This header is what the rest of oomlint sees: the command's entry point,
 * the embedded Python files, and the committed measurements
 * (probe/results/ *.json, compiled in at build time) that rule documentation
 * quotes.
 */
#ifndef OL_PROBE_H
#define OL_PROBE_H

#include <stdbool.h>
#include <stddef.h>

/* `oomlint probe ...`; argv[0] is "probe". Returns the exit status:
 * 0 every scenario ran and agreed (or the script ran), 1 a scenario failed or
 * its variants disagreed, 2 usage error or no usable Python/PyTorch/device. */
int ol_probe_main(int argc, char **argv);

/* The probe's Python files (paths relative to probe/), from build/gen/probe_embed.c. */
typedef struct ol_probe_file {
    const char *path;
    const unsigned char *data;
    size_t len;
} ol_probe_file;

extern const ol_probe_file ol_probe_files[];
extern const size_t ol_probe_file_count;

/* One variant's committed figures. Absent figures are NaN. */
typedef struct ol_probe_side {
    double peak_bytes;                /* CPU: saved for backward + gradients; CUDA: max_memory_allocated */
    double growth_bytes_per_step;     /* CPU: saved bytes alive after the step; CUDA: memory_allocated */
    double graph_nodes_per_step;
    double rss_peak_bytes;
    double rss_growth_bytes_per_step;
    double time_per_step_s;
    double zero_grad_fraction;
    double reserved_peak_bytes;       /* CUDA: max memory_reserved (the caching allocator's segments) */
    double driver_peak_bytes;         /* CUDA: the process's memory as NVML sees it, context included */
} ol_probe_side;

/* One scenario of one committed results file (from build/gen/probe_results.c),
 * a rule's GPU figures before its CPU ones. */
typedef struct ol_probe_figure {
    const char *rule;         /* "OOM101" */
    const char *scenario;     /* "train" */
    const char *summary;      /* what the scenario does, bad vs fixed */
    const char *device;       /* "cpu", or the GPU's name */
    const char *torch;        /* torch.__version__ */
    const char *verdict;      /* "confirmed", "no measurable cost", "needs a GPU", "not measured" */
    const char *confirmed_by; /* "graph growth, memory growth", or "" */
    const char *note;         /* or ""; for "not measured", why */
    int agree;                /* 1 yes, 0 no, -1 not compared */
    bool measured;            /* false: bad and fixed carry no figures (needs a GPU) */
    ol_probe_side bad, fixed;
} ol_probe_figure;

extern const ol_probe_figure ol_probe_figures[];
extern const size_t ol_probe_figure_count;

#endif
