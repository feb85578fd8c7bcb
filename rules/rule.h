/*
 * rule.h - what a rule is, and the one registry table of all of them.
 *
 * A rule is one file in rules/: an ol_rule value with its code, name,
 * severity, documentation (what it does / why is this bad / example / use
 * instead, printed by `oomlint rule CODE`) and a check function. The check
 * reads the semantic model (model.h) and reports findings through the
 * ol_check context; it never walks the tree itself when the model already
 * has the fact. A rule includes this header alone, and rules are compiled
 * with rules/ and analyzer/public/ alone on their include path: for a rule
 * the includes below are the door and the public halves of the engine's
 * headers, and nothing else of the engine can be reached (the engine, which
 * includes this for the registry, finds its own fuller headers first).
 * Adding a rule touches rules/ (its file and its line in rules.def),
 * fixtures/ and its references (analyzer/references.c); `make rule`
 * (scripts/add_rule.py) writes all of them.
 */
#ifndef OL_RULE_H
#define OL_RULE_H

#include <stdbool.h>
#include <stddef.h>

#include "ask.h"
#include "dataflow.h"
#include "diag.h"
#include "facts.h"
#include "eval.h"

#define OL_DOCS_URL "https://github.com/oomlint/oomlint/blob/main/docs/rules/"

typedef struct ol_check ol_check;

typedef struct ol_rule {
    const char *code;        /* "OOM101": stable forever */
    const char *name;        /* "tensor-accumulated-with-graph" */
    ol_severity severity;
    bool opt_in;             /* runs only when selected by its exact code */
    bool in_tests;           /* left out of the default per-file-ignores for test code (config.c): deprecations are;
                                training patterns are not */
    bool device_memory;      /* its findings speak of GPU memory or time: on code that never runs on a GPU
                                (ask.h, ol_runs_on_gpu) they are kept for those who select the rule by its code */
    const char *summary;     /* one line: what it flags */
    const char *what;        /* What it does */
    const char *why;         /* Why is this bad? */
    const char *example;     /* Example (Python) */
    const char *instead;     /* Use instead (Python) */
    const char *fix;         /* what --fix does, or NULL */
    const char *fix_safety;  /* when the fix is safe, when unsafe and why (with a fix) */
    const char *tags;        /* comma-separated, for SARIF */
    const char *precision;   /* very-high | high | medium */
    const char *accuracy;    /* measured on real code (docs "Accuracy"), or NULL */
    void (*check)(ol_check *c);
} ol_rule;

struct ol_check {
    ol_model *model;
    const ol_tree *tree;
    const ol_source *src;
    const ol_rule *rule;   /* the rule now running */
    ol_diag_vec *out;
};

/* Reports a finding of the running rule over [start, end). The returned
 * pointer is valid until the next report. */
ol_diag *ol_report(ol_check *c, uint32_t start, uint32_t end, const char *fmt, ...) OL_PRINTF(4, 5);
/* Same, over a node's range. */
ol_diag *ol_report_node(ol_check *c, ol_nid n, const char *fmt, ...) OL_PRINTF(3, 4);
void ol_diag_help(ol_diag *d, const char *fmt, ...) OL_PRINTF(2, 3);
/* Attaches a fix; takes ownership. A fix whose edits overlap is dropped. */
void ol_diag_attach_fix(ol_diag *d, ol_fix *f);


/* ---- the registry ---- */

extern const ol_rule *const ol_rules[];
extern const size_t ol_rule_count;

const ol_rule *ol_rule_find(const char *code);
size_t ol_rule_index(const ol_rule *r);

/* Engine-reported rules (no check function). */
extern const ol_rule ol_rule_oom001;
extern const ol_rule ol_rule_oom002;
extern const ol_rule ol_rule_oom003;


#endif
