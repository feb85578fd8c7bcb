/*
 * ask_often.c - how often does this run? (ask.h)
 *
 * The file decides first (facts.c, ol_often_explain: the loops around the
 * node, then its function's name and call sites). A function the file never
 * calls runs as often as its callers elsewhere in the run: the summaries
 * record, for every call of another file's function, how often that call
 * runs in its own file, so a helper that a training script's batch loop
 * calls runs per step. Asked once per function.
 */
#include "ask_internal.h"

#include <stdlib.h>
#include <string.h>

#include "dataflow.h"
#include "facts.h"
#include "summary.h"

static const char *often_words(ol_often o)
{
    switch (o) {
    case OL_ONCE:
        return "once";
    case OL_PER_CALL:
        return "once per call";
    case OL_PER_EPOCH:
        return "once per epoch";
    case OL_PER_STEP:
        return "every step";
    }
    return "";
}

/* How often the run calls function fi, which its file does not call. */
static ol_often run_often(ol_model *m, uint32_t fi, ol_reasons *why)
{
    ol_door_often *d = &ol_door_of(m)->often[fi];
    if (!d->state) {
        size_t on = 0, off = 0;
        ol_run_site sites[3];
        if (!ol_run_callers_at(m, fi, &on, &off, sites) || sites[2].file == SIZE_MAX) {
            d->state = OL_PER_CALL + 1;
        } else {
            ol_often o = (ol_often)sites[2].often;
            d->state = (uint8_t)(o + 1);
            char *label = ol_door_function_label(m, fi);
            ol_reasons_add(&d->why, OL_NONE, ol_door_path(m, sites[2].path), sites[2].line, true,
                           ol_door_printf(m, "%s is called here, %s", label, often_words(o)));
            free(label);
        }
    }
    ol_reasons_merge(why, &d->why);
    return (ol_often)(d->state - 1);
}

/* The call under a chain of method calls: `GPTModel(cfg).bfloat16().to(dev)`
 * -> `GPTModel(cfg)`; OL_NONE when the chain starts from a name
 * (`model.to(dev)`). */
static ol_nid built_by(ol_model *m, ol_nid e)
{
    const ol_tree *t = m->tree;
    for (int depth = 0; depth < 12; depth++) {
        e = ol_unparen(t, e);
        if (ol_kind_of(t, e) != OL_N_call)
            return OL_NONE;
        uint32_t ci = ol_call_at(m, e);
        if (ci == OL_NO_INDEX)
            return OL_NONE;
        ol_nid recv = m->calls.items[ci].receiver;
        if (recv == OL_NONE || ol_kind_of(t, ol_unparen(t, recv)) != OL_N_call)
            return recv == OL_NONE || ol_kind_of(t, ol_unparen(t, recv)) != OL_N_identifier ? e : OL_NONE;
        e = recv;
    }
    return OL_NONE;
}

static bool loop_runs_trials(ol_model *m, uint32_t li, ol_reasons *why);

/* Memoized per loop: every call in a long loop asks about the same loop, and
 * the answer walks the loop's calls. The reasons are only written when asked
 * for, so a yes met again with a reason list is worked out again (the walk
 * stops at the first trial it finds). */
bool ol_loop_runs_trials(ol_model *m, uint32_t li, ol_reasons *why)
{
    if (li >= m->loops.len)
        return false;
    ol_loop *l = &m->loops.items[li];
    if (l->trials_state == 0 || (l->trials_state == 1 && !why))
        return l->trials_state == 1;
    bool yes = loop_runs_trials(m, li, why);
    l->trials_state = yes ? 1 : 0;
    return yes;
}

static bool loop_runs_trials(ol_model *m, uint32_t li, ol_reasons *why)
{
    const ol_tree *t = m->tree;
    const ol_loop *l = &m->loops.items[li];
    if (l->kind == OL_LOOP_COMPREHENSION || l->body == OL_NONE)
        return false;
    if (l->iter != OL_NONE) {
        ol_val iv = ol_eval(m, l->iter);
        if (iv.kind == OL_V_LOADER || iv.kind == OL_V_DATASET || (iv.flags & OL_VF_BATCH))
            return false; /* drawing batches: steps, whatever it builds */
    }
    uint32_t fn = ol_function_of(m, l->node);
    size_t first, end = ol_calls_in(m, l->body, &first);
    for (size_t i = first; i < end; i++) {
        const ol_call *c = &m->calls.items[i];
        if (ol_function_of(m, c->node) != fn || !ol_is_forward_call(m, (uint32_t)i))
            continue;
        ol_nid callee = ol_unparen(t, c->callee);
        if (ol_kind_of(t, callee) != OL_N_identifier)
            continue;
        /* the model the forward runs is bound in this iteration, by a call
         * that builds it (a constructor, a factory, a copy), not by a
         * method of the model it had (`model = model.to(device)`) */
        uint32_t defs[4];
        size_t nd = ol_reaching_defs(m, m->node_scope[callee], ol_node_sym(m, callee), callee, defs, 4);
        if (nd == 0 || nd > 4)
            continue;
        ol_nid built = OL_NONE;
        bool all = true;
        for (size_t k = 0; k < nd && all; k++) {
            const ol_def *d = &m->defs.items[defs[k]];
            ol_nid b = d->kind == OL_DEF_ASSIGN && d->path_len == 0 && ol_contains(t, l->body, d->stmt)
                           ? built_by(m, d->value)
                           : OL_NONE;
            if (b == OL_NONE)
                all = false;
            else if (built == OL_NONE)
                built = b;
        }
        if (!all || built == OL_NONE)
            continue;
        char *model = ol_node_str_short(t, callee), *text = ol_node_str_short(t, built);
        ol_reasons_add(why, built, NULL, 0, false,
                       ol_door_printf(m, "each iteration builds a new `%s` (`%s`) and runs it: the iterations are "
                                         "trials of a search or a sweep, not training steps",
                                      model, text));
        free(model);
        free(text);
        return true;
    }
    return false;
}

static ol_often how_often(ol_model *m, ol_nid n, ol_reasons *why)
{
    ol_often_local loc;
    ol_often_explain(m, n, &loc);
    const ol_tree *t = m->tree;
    switch (loc.cause) {
    case OL_OC_STEP_LOOP:
    case OL_OC_EPOCH_LOOP: {
        uint32_t li = OL_NO_INDEX;
        for (uint32_t k = m->node_loop[n]; k != OL_NO_INDEX; k = m->loops.items[k].parent)
            if (m->loops.items[k].node == loc.node)
                li = k;
        /* a loop whose every iteration builds the model it runs: a trial
         * each, as often as epochs are */
        if (loc.cause == OL_OC_STEP_LOOP && ol_loop_runs_trials(m, li, why))
            return OL_PER_EPOCH;
        ol_nid iter = li != OL_NO_INDEX ? m->loops.items[li].iter : OL_NONE;
        char *text = iter != OL_NONE ? ol_node_str_short(t, iter) : NULL;
        ol_reasons_add(why, loc.node, NULL, 0, false,
                       loc.cause == OL_OC_STEP_LOOP
                           ? (text ? ol_door_printf(m, "runs every step of the loop over `%s`", text)
                                   : ol_door_printf(m, "runs every step of this loop"))
                           : (text ? ol_door_printf(m, "runs once per epoch, in the loop over `%s`", text)
                                   : ol_door_printf(m, "runs once per epoch, in this loop")));
        free(text);
        return loc.often;
    }
    case OL_OC_PERIODIC:
    case OL_OC_FIRST_TIME: {
        /* the test of the `if` around it */
        char *text = ol_node_str_short(t, loc.node);
        ol_reasons_add(why, loc.node, NULL, 0, false,
                       loc.cause == OL_OC_PERIODIC
                           ? ol_door_printf(m, "runs every so many steps, when `%s`", text)
                           : ol_door_printf(m, "runs the first time only: `%s`, and the block sets it", text));
        free(text);
        return loc.often;
    }
    case OL_OC_INTERACTIVE:
        ol_reasons_add(why, loc.node, NULL, 0, false,
                       ol_door_printf(m, "runs once per request of this loop, which waits for the user's input"));
        return loc.often;
    case OL_OC_INIT:
    case OL_OC_STEP_METHOD: {
        char *name = ol_node_str(t, loc.node);
        ol_reasons_add(why, loc.node, NULL, 0, false,
                       loc.cause == OL_OC_INIT ? ol_door_printf(m, "`%s()` runs once per object", name)
                                               : ol_door_printf(m, "`%s()` runs every step", name));
        free(name);
        return loc.often;
    }
    case OL_OC_CALLER:
        if (loc.often == OL_PER_CALL && loc.function != OL_NO_INDEX) {
            ol_often o = run_often(m, loc.function, why);
            ol_reasons_add(why, loc.node, NULL, 0, true, ol_door_printf(m, "called from here"));
            return o;
        }
        ol_reasons_add(why, loc.node, NULL, 0, true, ol_door_printf(m, "called from here, %s", often_words(loc.often)));
        return loc.often;
    case OL_OC_NO_CALLER:
        return loc.function != OL_NO_INDEX ? run_often(m, loc.function, why) : OL_PER_CALL;
    case OL_OC_MODULE:
        break;
    }
    return loc.often;
}

bool ol_only_when_debugging(ol_model *m, ol_nid n)
{
    return ol_in_debug_branch(m, n);
}

ol_often ol_how_often(ol_model *m, ol_nid n, ol_reasons *why)
{
    ol_often answer = how_often(m, n, why);
    ol_door_audit(m, "often", n, (int)(answer));
    return answer;
}

/* ---- a closure an optimizer step runs ------------------------------------------------ */

ol_nid ol_closure_stepped_in_loop(ol_model *m, uint32_t fi, ol_reasons *why)
{
    const ol_tree *t = m->tree;
    if (fi >= m->functions.len || m->functions.items[fi].is_lambda)
        return OL_NONE;
    for (size_t i = 0; i < m->calls.len; i++) {
        const ol_call *c = &m->calls.items[i];
        if (c->receiver == OL_NONE || !c->name || strcmp(ol_sym_str(m, c->name), "step") != 0)
            continue;
        ol_nid arg = ol_call_arg(m, c->node, 0, "closure");
        if (arg == OL_NONE)
            continue;
        /* the function itself, or what a call of the file returns
         * (`closure = self._setup_closure(...)`, which returns it) */
        ol_val v = ol_eval(m, arg);
        if (v.kind != OL_V_FUNCTION || v.ref != fi)
            continue;
        uint32_t li = m->node_loop[c->node];
        if (li == OL_NO_INDEX || ol_function_of(m, m->loops.items[li].node) == fi)
            continue;
        if (why) {
            char *text = ol_node_str_short(t, c->node);
            ol_reasons_add(why, c->node, NULL, 0, true,
                           ol_door_printf(m, "`%s` runs `%s()` every iteration of this loop", text,
                                          ol_sym_str(m, m->functions.items[fi].name)));
            free(text);
        }
        return m->loops.items[li].node;
    }
    return OL_NONE;
}
