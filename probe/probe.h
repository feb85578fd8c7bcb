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
 * This header is what the rest of oomlint sees: the command's entry point
 * and the embedded Python files. The committed measurements the rule
 * documentation quotes are the linter's (analyzer/figures.h).
 */
#ifndef OL_PROBE_H
#define OL_PROBE_H

#include <stdbool.h>
#include <stddef.h>

#include "figures.h"

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


#endif
