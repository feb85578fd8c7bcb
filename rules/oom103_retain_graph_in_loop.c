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
 * A closure an optimizer step runs (`optimizer.step(closure)`) in a loop is
 * in that loop: the optimizer calls it once or more every iteration.
 *
 * Not flagged where a later backward (or `torch.autograd.grad`) in the same
 * iteration goes through the retained graph: a GAN step whose generator
 * loss reuses the discriminator's forward, or several losses backwarded
 * one by one through one forward. There the graph must be kept, unless
 * nothing between the two backward calls uses or changes the gradients or
 * the parameters (no optimizer step, zero_grad, read of `.grad`, clipping):
 * then `(loss1 + loss2).backward()` gives the same gradients in one pass and
 * retains nothing, and that is reported instead (without a fix).
 */
#include <stdlib.h>
#include <string.h>

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
    static const char *const AUTOGRAD_GRAD[] = {"torch.autograd.grad", NULL};
    if (ol_call_is(m, m->calls.items[ci].node, AUTOGRAD_GRAD))
        return ol_call_arg(m, m->calls.items[ci].node, 0, "outputs");
    return OL_NONE;
}

/* Do a and b share part of a graph: the same expression, or a binding both
 * are computed from that carries a graph? Two names unpacked from one
 * forward (`disc_reals, features_reals = discriminator(x)`) are one graph:
 * a loss on either goes through the forward both come from. */
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
        for (size_t k = 0; k < nb; k++) {
            const ol_def *e = &m->defs.items[sb[k]];
            bool same = sb[k] == sa[i] || (e->kind == OL_DEF_ASSIGN && d->kind == OL_DEF_ASSIGN &&
                                           e->value == d->value && e->value != OL_NONE);
            if (same && (ol_val_is_graph(ol_def_value(m, sa[i])) || ol_val_is_graph(ol_def_value(m, sb[k]))))
                return true;
        }
    }
    return false;
}

/* The region one iteration runs: the innermost loop's body, or the function
 * for a per-batch hook; OL_NONE at module level outside loops. */
static ol_nid iteration_region(ol_model *m, ol_nid n)
{
    uint32_t loop = m->node_loop[n];
    uint32_t fn = ol_function_of(m, n);
    return loop != OL_NO_INDEX ? m->loops.items[loop].node
           : fn != OL_NO_INDEX ? ol_field(m->tree, m->functions.items[fn].node, OL_F_body)
                               : OL_NONE;
}

/* The gradient calls after `call` in the same iteration that differentiate
 * through the graph the call retains: the first (OL_NO_INDEX when none), and
 * whether any of them is `torch.autograd.grad`. */
static uint32_t retained_graph_reused(ol_model *m, const ol_call *call, ol_nid operand, bool *by_grad)
{
    const ol_tree *t = m->tree;
    uint32_t fn = ol_function_of(m, call->node);
    ol_nid region = iteration_region(m, call->node);
    uint32_t first_reuse = OL_NO_INDEX;
    *by_grad = false;
    if (region == OL_NONE)
        return OL_NO_INDEX;
    size_t first, end = ol_calls_in(m, region, &first);
    for (size_t j = first; j < end; j++) {
        const ol_call *later = &m->calls.items[j];
        if (t->nodes.items[later->node].start < t->nodes.items[call->node].end || ol_function_of(m, later->node) != fn)
            continue;
        ol_nid op = differentiated(m, (uint32_t)j);
        if (op == OL_NONE || !share_graph(m, operand, op))
            continue;
        if (first_reuse == OL_NO_INDEX)
            first_reuse = (uint32_t)j;
        if (ol_backward_operand(m, (uint32_t)j) == OL_NONE)
            *by_grad = true; /* torch.autograd.grad */
    }
    return first_reuse;
}

/* Does the backward call pass anything but its operand and retain_graph
 * (a gradient, `inputs=`, `create_graph=`)? Summed losses would then not
 * give the same gradients. */
static bool backward_has_options(ol_model *m, uint32_t ci, ol_nid operand)
{
    const ol_tree *t = m->tree;
    ol_nid args = ol_field(t, m->calls.items[ci].node, OL_F_arguments);
    for (ol_nid a = ol_first_named(t, args); a != OL_NONE; a = ol_next_named(t, a)) {
        if (a == operand || ol_kind_of(t, a) == OL_N_comment)
            continue;
        if (ol_kind_of(t, a) == OL_N_keyword_argument && ol_text_is(t, ol_field(t, a, OL_F_name), "retain_graph"))
            continue;
        return true;
    }
    return false;
}

/* Between the two backward calls (a, b), does anything use or change the
 * gradients or the parameters: an optimizer step, a zero_grad, a read of
 * `.grad` or `.data`, a loop over `.parameters()`, gradient clipping or
 * unscaling, a call of a function of the file (it may do any of these)? A
 * GAN's discriminator step between its losses' backwards is one. */
static bool gradients_touched_between(ol_model *m, const ol_call *a, const ol_call *b)
{
    const ol_tree *t = m->tree;
    uint32_t from = t->nodes.items[a->node].end, to = t->nodes.items[b->node].start;
    static const char *const touching[] = {"step", "zero_grad", "clip_grad_norm_", "clip_grad_value_", "unscale_",
                                           "parameters", "named_parameters", "backward", "manual_backward",
                                           "update", "grad", NULL};
    for (size_t j = 0; j < m->calls.len; j++) {
        const ol_call *c = &m->calls.items[j];
        uint32_t at = t->nodes.items[c->node].start;
        if (at < from || at >= to)
            continue;
        const char *name = ol_sym_str(m, c->name);
        if ((name && (strcmp(name, "step") == 0 || strcmp(name, "zero_grad") == 0)) ||
            ol_step_optimizer(m, (uint32_t)j) != OL_NONE || ol_zero_grad_target(m, (uint32_t)j) != OL_NONE ||
            ol_callee_function(m, c->node) != OL_NO_INDEX)
            return true;
        for (const char *const *w = touching; *w; w++)
            if (name && strcmp(name, *w) == 0)
                return true;
    }
    for (ol_nid i = a->node; i < t->nodes.len && t->nodes.items[i].start < to; i++) {
        if (t->nodes.items[i].start < from || t->nodes.items[i].kind != OL_N_attribute)
            continue;
        ol_nid attr = ol_field(t, i, OL_F_attribute);
        if (ol_text_is(t, attr, "grad") || ol_text_is(t, attr, "data"))
            return true;
    }
    return false;
}

/* `loss1.backward(retain_graph=True)` followed in the same block by
 * `loss2.backward()` through the same graph, nothing between them touching
 * the gradients or the parameters: `(loss1 + loss2).backward()` gives the
 * same gradients in one pass, with nothing retained. */
static bool one_backward_would_do(ol_model *m, uint32_t ci, ol_nid operand, uint32_t later)
{
    const ol_tree *t = m->tree;
    const ol_call *call = &m->calls.items[ci], *next = &m->calls.items[later];
    ol_nid next_operand = ol_backward_operand(m, later);
    if (next_operand == OL_NONE || ol_same_text(t, operand, next_operand))
        return false; /* the same loss twice is another matter */
    ol_nid s1 = ol_statement_of(t, call->node), s2 = ol_statement_of(t, next->node);
    if (ol_parent(t, s1) != ol_parent(t, s2) || ol_kind_of(t, s1) != OL_N_expression_statement ||
        ol_kind_of(t, s2) != OL_N_expression_statement)
        return false; /* one of them runs under a condition, or in a loop of its own */
    if (ol_first_named(t, s1) != call->node || ol_first_named(t, s2) != next->node)
        return false; /* a backward inside a larger expression */
    if (backward_has_options(m, ci, operand) || backward_has_options(m, later, next_operand))
        return false;
    if (ol_leaves_before(t, call->node, next->node, iteration_region(m, call->node)))
        return false;
    return !gradients_touched_between(m, call, next);
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
        ol_reasons stepped = {0};
        ol_nid step_loop = !in_loop && fn != OL_NO_INDEX ? ol_closure_stepped_in_loop(m, fn, &stepped) : OL_NONE;
        if (!in_loop && step_loop == OL_NONE && !(fn != OL_NO_INDEX && ol_function_hook(m, fn) == OL_HOOK_TRAIN_STEP))
            continue;
        ol_nid operand = ol_backward_operand(m, (uint32_t)i);
        bool by_grad;
        uint32_t reuse = retained_graph_reused(m, call, operand, &by_grad);
        if (reuse != OL_NO_INDEX) {
            if (by_grad || !one_backward_would_do(m, (uint32_t)i, operand, reuse))
                continue; /* the graph must be kept */
            char *later = ol_node_str_short(c->tree, m->calls.items[reuse].node);
            ol_diag *d = ol_report_node(c, call->node,
                                        "`retain_graph=True` keeps this graph only for `%s` to go through it "
                                        "again; with no optimizer step between them, summing the losses and "
                                        "calling backward once gives the same gradients in one pass, with "
                                        "nothing retained",
                                        later);
            free(later);
            ol_diag_note(d, OL_NOTE_FACT, c->tree->nodes.items[m->calls.items[reuse].node].start,
                         c->tree->nodes.items[m->calls.items[reuse].node].end,
                         "the second backward through the retained graph, with no optimizer step before it");
            ol_diag_help(d, "add the losses and call `.backward()` once on the sum, without `retain_graph=True`");
            continue;
        }
        ol_diag *d = ol_report_node(c, call->node,
                                    "`retain_graph=True` in a loop keeps this step's graph and saved activations "
                                    "alive after backward, though no later backward goes through them; where a "
                                    "value carried to the next iteration links the graphs, they pile up every step");
        ol_reasons why = {0};
        if (in_loop)
            ol_because(&why, m, m->loops.items[m->node_loop[call->node]].node,
                       "this loop runs the backward every iteration, and no later backward reads the graph");
        else if (step_loop != OL_NONE)
            why = stepped;
        else
            ol_because(&why, m, ol_field(c->tree, m->functions.items[fn].node, OL_F_name),
                       "the framework runs this training step every batch");
        ol_diag_because(d, m, &why);
        ol_diag_help(d, "drop `retain_graph=True`; if backward then fails with \"backward through the graph a "
                        "second time\", `.detach()` the tensor carried between iterations (e.g. an RNN hidden "
                        "state), or sum the losses and call backward once");
    }
}

const ol_rule ol_rule_oom103 = {
    .code = "OOM103",
    .name = "retain-graph-in-loop",
    .severity = OL_SEV_WARNING,
    .device_memory = true,
    .summary = "`backward(retain_graph=True)` inside a loop keeps graphs alive across backward passes.",
    .what = "Flags `.backward(retain_graph=True)` (also through `scaler.scale(loss)`, "
            "`accelerator.backward` and Lightning's `manual_backward`) inside a loop or a "
            "`training_step`, or in a closure that `optimizer.step(closure)` runs in a loop (the "
            "closure defined there or returned by a function of the file), unless a later backward or `torch.autograd.grad` in the same iteration "
            "goes through the retained graph (a GAN step whose generator loss reuses the "
            "discriminator's forward, several losses backwarded through one forward with a step "
            "between them): there the graph must be kept. When the next backward through the "
            "retained graph follows in the same block with nothing between that uses or changes "
            "the gradients or the parameters (an optimizer step, a `zero_grad`, a read of `.grad` "
            "or `.data`, clipping, unscaling, a loop over `.parameters()`, a function of the file), "
            "and neither call passes a gradient or `inputs=`, the two backward passes are one too "
            "many: summing the losses and calling backward once gives the same gradients in one "
            "traversal with nothing retained, and that is reported at the retaining call. Not when "
            "`torch.autograd.grad` still goes through the graph later, or when the same loss is "
            "backwarded twice.",
    .why = "Backward normally frees the graph's saved tensors as it goes. With `retain_graph=True` they "
           "stay until the graph itself is dropped, usually when the next iteration rebinds the loss, "
           "so the next forward runs while the last step's activations are still held: the peak rises "
           "by a step's activations, but memory does not grow from step to step. It grows every step "
           "when something carried from one iteration to the next (a hidden state, a running total) "
           "links each graph to the last. The flag is most often added to silence \"Trying to backward "
           "through the graph a second time\", which is that link showing itself.",
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
