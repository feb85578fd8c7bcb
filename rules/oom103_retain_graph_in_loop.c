/*
 * OOM103 retain-graph-in-loop: `.backward(retain_graph=True)` inside a loop.
 *
 * retain_graph=True keeps the graph's saved tensors after backward, so they
 * live until the graph itself is dropped. In a loop that usually means a
 * second graph's worth of activations per step, and when a tensor carried
 * across iterations (an RNN hidden state that is never detached, a running
 * total) links each step's graph to the last, it means every step's graph:
 * the error message "Trying to backward through the graph a second time"
 * that people silence with retain_graph=True is the sign of exactly that.
 *
 * Not flagged where a later backward (or `torch.autograd.grad`) in the same
 * iteration goes through the retained graph: a GAN step whose generator
 * loss reuses the discriminator's forward, or several losses backwarded
 * one by one through one forward. There the graph must be kept.
 */
#include <string.h>

#include "dataflow.h"
#include "facts.h"
#include "rule.h"

#define SHARED_MAX_SOURCES 128

static bool retains(ol_model *m, const ol_call *c)
{
    ol_nid v = ol_call_arg(m, c->node, -1, "retain_graph");
    if (v == OL_NONE && c->name == m->names.backward && c->receiver != OL_NONE) {
        /* tensor.backward(gradient, retain_graph, ...) */
        ol_val rv = ol_eval(m, c->receiver);
        if (rv.kind == OL_V_TENSOR)
            v = ol_call_arg(m, c->node, 1, NULL);
    }
    return v != OL_NONE && ol_kind_of(m->tree, v) == OL_N_true;
}

/* The expression a gradient call differentiates: a backward's operand, or
 * `torch.autograd.grad(outputs, ...)`'s outputs. */
static ol_nid differentiated(ol_model *m, uint32_t ci)
{
    ol_nid op = ol_backward_operand(m, ci);
    if (op != OL_NONE)
        return op;
    const char *q = ol_qualname(m, m->calls.items[ci].callee);
    if (q && strcmp(q, "torch.autograd.grad") == 0)
        return ol_call_arg(m, m->calls.items[ci].node, 0, "outputs");
    return OL_NONE;
}

/* Do a and b share part of a graph: the same expression, or a binding both
 * are computed from that carries a graph? */
static bool share_graph(ol_model *m, ol_nid a, ol_nid b)
{
    if (ol_same_text(m->tree, a, b))
        return true;
    uint32_t sa[SHARED_MAX_SOURCES], sb[SHARED_MAX_SOURCES];
    size_t na = ol_value_sources(m, a, sa, SHARED_MAX_SOURCES);
    size_t nb = ol_value_sources(m, b, sb, SHARED_MAX_SOURCES);
    for (size_t i = 0; i < na; i++) {
        const ol_def *d = &m->defs.items[sa[i]];
        if (d->kind == OL_DEF_FOR || d->kind == OL_DEF_PARAM || d->kind == OL_DEF_IMPORT ||
            d->kind == OL_DEF_FUNCTION || d->kind == OL_DEF_CLASS)
            continue;
        for (size_t k = 0; k < nb; k++)
            if (sb[k] == sa[i] && ol_val_is_graph(ol_def_value(m, sa[i])))
                return true;
    }
    return false;
}

/* Does a gradient call after `call` in the same iteration (the innermost
 * loop's body, or the function for a per-batch hook) differentiate through
 * the graph the call retains? */
static bool retained_graph_reused(ol_model *m, const ol_call *call, ol_nid operand)
{
    const ol_tree *t = m->tree;
    uint32_t loop = m->node_loop[call->node];
    uint32_t fn = ol_function_of(m, call->node);
    ol_nid region = loop != OL_NO_INDEX ? m->loops.items[loop].node
                    : fn != OL_NO_INDEX ? ol_field(t, m->functions.items[fn].node, OL_F_body)
                                        : OL_NONE;
    if (region == OL_NONE)
        return false;
    size_t first, end = ol_calls_in(m, region, &first);
    for (size_t j = first; j < end; j++) {
        const ol_call *later = &m->calls.items[j];
        if (t->nodes.items[later->node].start < t->nodes.items[call->node].end || ol_function_of(m, later->node) != fn)
            continue;
        ol_nid op = differentiated(m, (uint32_t)j);
        if (op != OL_NONE && share_graph(m, operand, op))
            return true;
    }
    return false;
}

static void check(ol_check *c)
{
    ol_model *m = c->model;
    for (size_t i = 0; i < m->calls.len; i++) {
        const ol_call *call = &m->calls.items[i];
        if (call->name != m->names.backward && call->name != m->names.manual_backward)
            continue;
        if (!ol_is_backward_call(m, (uint32_t)i) || !retains(m, call))
            continue;
        bool in_loop = m->node_loop[call->node] != OL_NO_INDEX;
        uint32_t fn = ol_function_of(m, call->node);
        if (!in_loop && !(fn != OL_NO_INDEX && ol_function_hook(m, fn) == OL_HOOK_TRAIN_STEP))
            continue;
        if (retained_graph_reused(m, call, ol_backward_operand(m, (uint32_t)i)))
            continue;
        ol_diag *d = ol_report_node(c, call->node,
                                    "`retain_graph=True` in a loop keeps this step's graph and saved activations "
                                    "alive after backward; a graph linked across iterations then grows every step");
        ol_diag_help(d, "drop `retain_graph=True`; if backward then fails with \"backward through the graph a "
                        "second time\", `.detach()` the tensor carried between iterations (e.g. an RNN hidden "
                        "state), or sum the losses and call backward once");
    }
}

const ol_rule ol_rule_oom103 = {
    .code = "OOM103",
    .name = "retain-graph-in-loop",
    .severity = OL_SEV_WARNING,
    .summary = "`backward(retain_graph=True)` inside a loop keeps graphs alive across backward passes.",
    .what = "Flags `.backward(retain_graph=True)` (also through `scaler.scale(loss)`, "
            "`accelerator.backward` and Lightning's `manual_backward`) inside a loop or a "
            "`training_step`, unless a later backward or `torch.autograd.grad` in the same iteration "
            "goes through the retained graph (a GAN step whose generator loss reuses the "
            "discriminator's forward, several losses backwarded through one forward): there the "
            "graph must be kept.",
    .why = "Backward normally frees the graph's saved tensors as it goes. With `retain_graph=True` they "
           "stay until the graph is garbage-collected, so each iteration holds a second graph's worth "
           "of activations; if anything carried from one iteration to the next (a hidden state, a "
           "running total) still links to the old graph, memory grows every step. The flag is most "
           "often added to silence \"Trying to backward through the graph a second time\", which is "
           "that link showing itself.",
    .example = "hidden = model.init_hidden()\n"
               "for x, y in loader:\n"
               "    out, hidden = model(x, hidden)\n"
               "    loss = criterion(out, y)\n"
               "    loss.backward(retain_graph=True)\n"
               "    optimizer.step()",
    .instead = "hidden = model.init_hidden()\n"
               "for x, y in loader:\n"
               "    hidden = hidden.detach()\n"
               "    out, hidden = model(x, hidden)\n"
               "    loss = criterion(out, y)\n"
               "    loss.backward()\n"
               "    optimizer.step()",
    .fix = NULL,
    .tags = "memory,autograd",
    .precision = "high",
    .check = check,
};
