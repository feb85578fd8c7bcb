/*
 * ask_grad.c - is autograd on here? (ask.h)
 *
 * The file decides first (eval.c: the `with` blocks and `set_grad_enabled`
 * statements around the node, its function's decorators, framework hooks,
 * the function's call sites in the file). Where that leaves the answer to
 * the function's callers elsewhere, the run decides (summary.h's call
 * records): a function that nothing in its file calls runs without
 * autograd when every call of it in the run has autograd off, and one that
 * its own file only calls under no_grad still runs with autograd on where
 * another file calls it with it on (a base trainer's validate() called by a
 * subclass's training loop). The run's answer is per function, asked once.
 */
#include "ask_internal.h"

#include <stdlib.h>
#include <string.h>

#include "summary.h"

/* The grad mode the run gives function fi, with a caller as the reason:
 * 1 on, 2 off, 3 the run does not say (linted alone, or nobody calls it). */
static uint8_t run_mode(ol_model *m, uint32_t fi)
{
    ol_door *d = ol_door_of(m);
    ol_door_grad *g = &d->run_grad[fi];
    if (g->state)
        return g->state;
    size_t on = 0, offs = 0;
    ol_run_site sites[3];
    bool known = ol_run_callers_at(m, fi, &on, &offs, sites);
    char *label = ol_door_function_label(m, fi);
    if (!known || (on == 0 && offs == 0)) {
        g->state = 3;
    } else if (on > 0) {
        g->state = 1;
        ol_reasons_add(&g->why, OL_NONE, ol_door_path(m, sites[0].path), sites[0].line, true,
                       ol_door_printf(m, "%s is called with autograd on here%s", label,
                                      sites[0].through ? " (and by this file's callers in turn)" : ""));
    } else {
        g->state = 2;
        ol_reasons_add(&g->why, OL_NONE, ol_door_path(m, sites[1].path), sites[1].line, true,
                       ol_door_printf(m, "%s is called here with autograd off%s", label,
                                      offs > 1 ? ", as everywhere in the run" : ", its only caller in the run"));
    }
    free(label);
    return g->state;
}

/* The reason the file gives for its answer at n. */
static void local_reason(ol_model *m, const ol_grad_local *loc, ol_reasons *why)
{
    if (!why)
        return;
    const ol_tree *t = m->tree;
    char *label = loc->function != OL_NO_INDEX ? ol_door_function_label(m, loc->function) : NULL;
    switch (loc->cause) {
    case OL_GC_CONTEXT:
    case OL_GC_STATEMENT:
    case OL_GC_DECORATOR: {
        char *text = ol_node_str_short(t, loc->node);
        ol_reasons_add(why, loc->node, NULL, 0, false,
                       ol_door_printf(m, "`%s%s` turns autograd %s here", loc->cause == OL_GC_DECORATOR ? "@" : "",
                                      text, loc->off ? "off" : "on"));
        free(text);
        break;
    }
    case OL_GC_HOOK:
        ol_reasons_add(why, loc->node, NULL, 0, false,
                       ol_door_printf(m, "the framework runs %s without autograd", label ? label : "this hook"));
        break;
    case OL_GC_CALLERS: {
        uint32_t caller = ol_function_of(m, loc->node);
        char *who = caller != OL_NO_INDEX ? ol_door_function_label(m, caller) : ol_xstrdup("module code");
        ol_reasons_add(why, loc->node, NULL, 0, true,
                       loc->off ? ol_door_printf(m, "%s is only called with autograd off, as here from %s",
                                                 label ? label : "it", who)
                                : ol_door_printf(m, "%s is called with autograd on here, from %s", label ? label : "it",
                                                 who));
        free(who);
        break;
    }
    case OL_GC_OVERRIDE:
        ol_reasons_add(why, loc->node, NULL, 0, true,
                       ol_door_printf(m, "a base class calls %s through `self` here, with autograd %s",
                                      label ? label : "it", loc->off ? "off" : "on"));
        break;
    case OL_GC_GLOBAL:
        break;
    case OL_GC_MODULE:
    case OL_GC_NONE_CALLED:
        break;
    }
    free(label);
}

bool ol_grad_on(ol_model *m, ol_nid n, ol_reasons *why)
{
    if (n == OL_NONE)
        return true;
    ol_grad_local loc;
    ol_grad_explain(m, n, &loc);
    uint32_t root = ol_grad_root(m, n);
    bool off = loc.off;
    if (off && (root == OL_NO_INDEX || m->functions.items[root].callsites.len == 0)) {
        local_reason(m, &loc, why);
        return false;
    }
    if (!off && root == OL_NO_INDEX) {
        local_reason(m, &loc, why);
        return true;
    }
    /* the function's callers in the run decide: when the file turns autograd
     * off (all its own calls are under no_grad), only a call with autograd
     * on elsewhere turns it back on; when nothing here calls the function,
     * every call of the run with autograd off turns it off */
    if (m->functions.items[root].callsites.len == 0) {
        uint8_t st = run_mode(m, root);
        if (why)
            ol_reasons_merge(why, &ol_door_of(m)->run_grad[root].why);
        return st != 2;
    }
    if (off) {
        uint8_t st = run_mode(m, root);
        if (st == 1) {
            if (why)
                ol_reasons_merge(why, &ol_door_of(m)->run_grad[root].why);
            return true;
        }
        local_reason(m, &loc, why);
        return false;
    }
    /* on here, through callers of the file that nothing here calls (a
     * sampler's sample() calling the method around the forward): off when
     * every path up ends at functions the run only calls with autograd off */
    uint32_t *tops;
    size_t ntops;
    bool guarded = ol_grad_tops(m, root, &tops, &ntops);
    ol_reasons run_why = {0};
    for (size_t k = 0; k < ntops && guarded; k++) {
        guarded = run_mode(m, tops[k]) == 2;
        ol_reasons_merge(&run_why, &ol_door_of(m)->run_grad[tops[k]].why);
    }
    free(tops);
    if (guarded) {
        ol_reasons_merge(why, &run_why);
        return false;
    }
    local_reason(m, &loc, why);
    return true;
}
