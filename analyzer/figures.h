/*
 * figures.h - what each rule's pattern was measured to cost: the committed
 * results of `oomlint probe` (probe/results/ *.json, compiled in at build
 * time as build/gen/probe_results.c by scripts/probe_gen.py), which the
 * rule documentation (docs.c), SARIF's rule properties and the language
 * server's hover quote, each naming its device and torch version. The probe
 * (probe/) writes these files; the linter only reads what was committed.
 */
#ifndef OL_FIGURES_H
#define OL_FIGURES_H

#include <stdbool.h>
#include <stddef.h>

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
