/*
 * OOM001 io-error and OOM002 parse-error: reported by the engine itself
 * (lint.c), not by a check over the model. Their entries here carry the
 * documentation and give them a place in the registry like any rule.
 */
#include "rule.h"

const ol_rule ol_rule_oom001 = {
    .code = "OOM001",
    .name = "io-error",
    .severity = OL_SEV_ERROR,
    .summary = "A file could not be read or decoded, so it was not analyzed.",
    .what = "Reports an input that oomlint could not read: a missing or unreadable path, a file that is "
            "not valid UTF-8 and declares no other encoding, a binary file, a file over the size limit, "
            "or a notebook that is not valid JSON. Also a file oomlint itself failed on (it crashed, ran "
            "out of memory, or took longer than `OOMLINT_FILE_TIMEOUT` seconds): the rest of the run is "
            "reported as usual, the exit status is 2, and the message asks for a bug report.",
    .why = "A file that is not analyzed can hide every other problem. oomlint says so, names the file "
           "and the reason, and goes on with the rest of the run.",
    .example = "# a Latin-1 file with no coding declaration:\nname = \"caf\\xe9\"",
    .instead = "# -*- coding: latin-1 -*-\nname = \"caf\\xe9\"",
    .fix = NULL,
    .tags = "correctness",
    .precision = "very-high",
    .check = NULL,
};

const ol_rule ol_rule_oom002 = {
    .code = "OOM002",
    .name = "parse-error",
    .severity = OL_SEV_ERROR,
    .summary = "The file has a syntax error; the code around it was analyzed as far as it parsed.",
    .what = "Reports syntax errors found while parsing, each where its trouble starts (the stray "
            "line, not the start of the function or file the parser could not finish). An error "
            "that is gone once the lines of the errors before it are blanked is the parser's "
            "recovery from them, not an error of its own, and is not reported: stray text in a "
            "method gives one finding per stray line, not one more at every later `def`. "
            "Analysis continues on the parts of the file that parsed, so findings elsewhere in "
            "the file are still reported.",
    .why = "Code that does not parse will not run, and code near the error may be misread by the "
           "analysis. Python 2 syntax (`print x`, `except E, e:`) is the most common cause in old "
           "training scripts.",
    .example = "for x, y in loader\n    loss = model(x)",
    .instead = "for x, y in loader:\n    loss = model(x)",
    .fix = NULL,
    .tags = "correctness",
    .precision = "very-high",
    .check = NULL,
};
