/*
 * OOM705 anomaly-detection-left-on: `torch.autograd.set_detect_anomaly(True)`
 * or `torch.autograd.detect_anomaly()` outside a debugging branch.
 *
 * Anomaly mode records the Python traceback of every forward operation so
 * that a failing backward can name the line that made the bad tensor, and
 * checks every backward result for NaN. It is a debugging tool: left on, it
 * slows every training step severalfold and keeps a traceback per node of
 * every graph. A call at module level switches it on for the whole process
 * as soon as the module is imported.
 *
 * Not flagged: a call whose argument is not literally True (it follows a
 * flag), calls in a branch or a function named for debugging (`if
 * args.debug:`, `def debug_step():`, `class DetectAnomalyHook`), files
 * named for debugging or anomaly detection, tests, and code that switches
 * the mode off again in the same function or class (a hook's before/after
 * pair).
 */
#include <string.h>

#include "rule.h"

static const char *const SET_MODE[] = {"torch.autograd.set_detect_anomaly",
                                       "torch.autograd.anomaly_mode.set_detect_anomaly", NULL};
static const char *const CONTEXT[] = {"torch.autograd.detect_anomaly", "torch.autograd.anomaly_mode.detect_anomaly",
                                      NULL};

/* The class a function is a method of, or OL_NO_INDEX. */
static uint32_t class_of(ol_model *m, uint32_t fn)
{
    return fn == OL_NO_INDEX ? OL_NO_INDEX : m->functions.items[fn].cls;
}

/* `set_detect_anomaly(False)` in the same function, in another method of
 * the same class (a hook's before/after pair), or at module level for a
 * module-level call: the mode is switched on around a stretch of code. */
static bool switched_off_nearby(ol_model *m, ol_nid call)
{
    uint32_t fn = ol_function_of(m, call), cls = class_of(m, fn);
    for (size_t i = 0; i < m->calls.len; i++) {
        const ol_call *c = &m->calls.items[i];
        if (!ol_call_is(m, c->node, SET_MODE))
            continue;
        uint32_t other = ol_function_of(m, c->node);
        if (other != fn && (cls == OL_NO_INDEX || class_of(m, other) != cls))
            continue;
        ol_nid mode = ol_call_arg(m, c->node, 0, "mode");
        if (mode != OL_NONE && ol_kind_of(m->tree, mode) == OL_N_false)
            return true;
    }
    return false;
}

static bool debugging_file(const ol_source *src)
{
    const char *base = strrchr(src->path, '/');
    base = base ? base + 1 : src->path;
    return strstr(base, "debug") != NULL || strstr(base, "anomaly") != NULL;
}

/* The evidence: a backward that runs with anomaly detection on (the first of
 * the function after the call, or of the file for a module-level call), or
 * else the absence of a debugging branch. */
static void slowed_backward(ol_model *m, ol_diag *d, ol_nid call, bool module_level)
{
    uint32_t fn = ol_function_of(m, call);
    ol_reasons why = {0};
    for (size_t i = 0; i < m->calls.len && !why.len; i++) {
        ol_nid n = m->calls.items[i].node;
        if (ol_is_backward_call(m, (uint32_t)i) && (module_level || ol_function_of(m, n) == fn) &&
            m->tree->nodes.items[n].start > m->tree->nodes.items[call].start)
            ol_because(&why, m, n, "this backward runs with anomaly detection on");
    }
    if (!why.len)
        ol_because(&why, m, call, "no debugging flag or branch guards the call");
    ol_diag_because(d, m, &why);
}

static void check(ol_check *c)
{
    ol_model *m = c->model;
    if (debugging_file(c->src))
        return;
    for (size_t i = 0; i < m->calls.len; i++) {
        const ol_call *call = &m->calls.items[i];
        bool set_mode = ol_call_is(m, call->node, SET_MODE);
        if (!set_mode && !ol_call_is(m, call->node, CONTEXT))
            continue;
        if (set_mode) {
            ol_nid mode = ol_call_arg(m, call->node, 0, "mode");
            if (mode == OL_NONE || ol_kind_of(c->tree, mode) != OL_N_true)
                continue;
        }
        if (ol_only_when_debugging(m, call->node) || switched_off_nearby(m, call->node))
            continue;
        ol_nid stmt = ol_parent(c->tree, call->node);
        bool module_level = ol_kind_of(c->tree, stmt) == OL_N_expression_statement &&
                            ol_kind_of(c->tree, ol_parent(c->tree, stmt)) == OL_N_module;
        ol_diag *d = ol_report_node(c, call->node,
                                    "anomaly detection records a traceback for every operation and checks every "
                                    "gradient%s: each training step runs several times slower",
                                    module_level ? ", for the whole process once this module is imported" : "");
        slowed_backward(m, d, call->node, module_level);
        ol_diag_help(d, "remove it, or turn it on only while debugging: `if args.detect_anomaly: "
                        "torch.autograd.set_detect_anomaly(True)`");
    }
}

const ol_rule ol_rule_oom705 = {
    .code = "OOM705",
    .name = "anomaly-detection-left-on",
    .severity = OL_SEV_WARNING,
    .device_memory = true,
    .summary = "Autograd anomaly detection is switched on outside a debugging branch.",
    .what = "Flags `torch.autograd.set_detect_anomaly(True)` and `torch.autograd.detect_anomaly()` (as a "
            "call, a `with` item or a decorator) outside a debugging branch. Not flagged: a mode that "
            "follows a variable (`set_detect_anomaly(args.debug)`), calls under `if` tests that name "
            "debugging (`args.debug`, `DEBUG`, `os.environ.get(\"DEBUG\")`, `cfg.detect_anomaly`, "
            "`__debug__`), in functions, classes or files named for debugging or anomaly detection "
            "(an opt-in `DetectAnomalyHook`), in tests, and where the same function or class switches "
            "the mode off again.",
    .why = "Anomaly mode exists to find the operation that produced a NaN or broke backward: it stores "
           "the Python stack of every forward operation in the graph and checks every gradient backward "
           "computes. That makes each step several times slower and keeps one traceback per graph node "
           "alive for as long as the graph. Set at module level, it is on for the whole process as soon "
           "as the module is imported, including in runs that never asked for it.",
    .example = "torch.autograd.set_detect_anomaly(True)\n"
               "\n"
               "for x, y in loader:\n"
               "    loss = criterion(model(x), y)\n"
               "    loss.backward()\n"
               "    optimizer.step()",
    .instead = "if args.detect_anomaly:\n"
               "    torch.autograd.set_detect_anomaly(True)\n"
               "\n"
               "for x, y in loader:\n"
               "    loss = criterion(model(x), y)\n"
               "    loss.backward()\n"
               "    optimizer.step()",
    .fix = NULL,
    .tags = "performance,debugging",
    .precision = "high",
    .check = check,
};
