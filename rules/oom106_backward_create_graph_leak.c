/*
 * OOM106 backward-create-graph-leak: `.backward(create_graph=True)` run
 * repeatedly (in a loop, or a per-batch hook) where the gradients it writes
 * into `.grad` are never reset.
 *
 * With create_graph=True each gradient is itself a node of a graph that
 * reaches back to its parameter: parameter -> .grad -> graph -> parameter,
 * a reference cycle PyTorch warns about at run time. Until `.grad` is reset
 * the whole graph stays alive, and the next backward accumulates into it
 * differentiably, chaining one iteration's graph to the next. Resetting
 * breaks the cycle: `p.grad = None`, `zero_grad()` in any form (with
 * set_to_none=False it detaches the gradient in place), `p.grad.detach_()`.
 * `p.grad.zero_()` does not: the zeroed gradient still records its history.
 *
 * A reset anywhere in the function (or module level) that runs the
 * backward, or in a loop of a function that calls it, counts: the cycle
 * then lives at most one iteration. `torch.autograd.grad(...,
 * create_graph=True)` returns gradients instead of storing them and is not
 * this rule.
 *
 * An input's gradient is another matter: a leaf made to require grad
 * (`x.requires_grad_()`, a gradient penalty's interpolate) whose `.grad` the
 * backward fills and the code reads holds the graph that made it, and that
 * graph holds the leaf. Zeroing the model's gradients does not touch it, and
 * making the input afresh each call does not help: the cycle runs through
 * autograd's own objects, which Python's collector cannot see, so each
 * call's graph stays. Only resetting `x.grad` (or autograd.grad) frees it.
 */
#include <stdlib.h>
#include <string.h>

#include "rule.h"

static bool creates_graph(ol_model *m, const ol_call *c)
{
    const ol_tree *t = m->tree;
    ol_nid v = ol_call_arg(m, c->node, -1, "create_graph");
    if (v == OL_NONE && c->name == m->names.backward && c->receiver != OL_NONE &&
        ol_eval(m, c->receiver).kind == OL_V_TENSOR)
        v = ol_call_arg(m, c->node, 2, NULL); /* tensor.backward(gradient, retain_graph, create_graph) */
    if (v == OL_NONE) {
        const char *q = ol_qualname(m, c->callee);
        if (q && strcmp(q, "torch.autograd.backward") == 0)
            v = ol_call_arg(m, c->node, 3, NULL);
    }
    return v != OL_NONE && ol_kind_of(t, v) == OL_N_true;
}

/* `x.grad` (also `x.grad.data`) */
static bool is_grad(const ol_tree *t, ol_nid e)
{
    e = ol_unparen(t, e);
    if (ol_kind_of(t, e) != OL_N_attribute)
        return false;
    ol_nid attr = ol_field(t, e, OL_F_attribute);
    if (ol_text_is(t, attr, "data"))
        return is_grad(t, ol_field(t, e, OL_F_object));
    return ol_text_is(t, attr, "grad");
}

/* Does the subtree at region reset gradients in a way that drops their
 * graph: zero_grad(), `x.grad = ...`, `del x.grad`, `x.grad.detach_()`,
 * `x.grad.requires_grad_(False)`? */
static bool resets_grads(ol_model *m, ol_nid region)
{
    const ol_tree *t = m->tree;
    size_t first, end = ol_calls_in(m, region, &first);
    for (size_t i = first; i < end; i++) {
        const ol_call *c = &m->calls.items[i];
        if (c->name == m->names.zero_grad)
            return true;
        if (c->receiver != OL_NONE && is_grad(t, c->receiver)) {
            ol_nid attr = ol_field(t, c->callee, OL_F_attribute);
            if (ol_text_is(t, attr, "detach_") || ol_text_is(t, attr, "requires_grad_"))
                return true;
        }
    }
    for (ol_nid n = region; n < m->subtree_end[region]; n++) {
        ol_kind k = ol_kind_of(t, n);
        if (k == OL_N_assignment && is_grad(t, ol_field(t, n, OL_F_left)))
            return true;
        if (k == OL_N_delete_statement)
            for (ol_nid x = ol_first_named(t, n); x != OL_NONE; x = ol_next_named(t, x))
                if (is_grad(t, x))
                    return true;
    }
    return false;
}

/* The region whose code runs around every backward: the body of the
 * function that holds n (the whole module for module-level code). */
static ol_nid function_region(ol_model *m, ol_nid n)
{
    uint32_t fn = ol_function_of(m, n);
    return fn == OL_NO_INDEX ? 0 : ol_field(m->tree, m->functions.items[fn].node, OL_F_body);
}

/* Is n run repeatedly: in a loop, in a per-batch hook, or in a function
 * called from a loop? Sets *reset when a reset is seen where it runs. */
static bool repeated(ol_model *m, ol_nid n, int depth, bool *reset)
{
    ol_nid region = function_region(m, n);
    if (region != OL_NONE && resets_grads(m, region))
        *reset = true;
    if (m->node_loop[n] != OL_NO_INDEX)
        return true;
    uint32_t fn = ol_function_of(m, n);
    if (fn == OL_NO_INDEX || depth > 2)
        return false;
    if (ol_function_hook(m, fn) == OL_HOOK_TRAIN_STEP)
        return true;
    bool rep = false;
    const ol_function *f = &m->functions.items[fn];
    for (size_t i = 0; i < f->callsites.len; i++) {
        ol_nid site = m->calls.items[m->functions.items[fn].callsites.items[i]].node;
        rep |= repeated(m, site, depth + 1, reset);
    }
    return rep;
}

/* ---- an input's .grad --------------------------------------------------------- */

/* The name a leaf made to require grad is bound to, at switch or call n:
 * `x.requires_grad_()`, `x.requires_grad = True`, `x = (...).requires_grad_()`,
 * `x = Variable(v, requires_grad=True)`; OL_NONE otherwise. */
static ol_nid leaf_name(ol_model *m, ol_nid n)
{
    const ol_tree *t = m->tree;
    if (ol_kind_of(t, n) == OL_N_assignment) {
        /* `x.requires_grad = True` */
        ol_nid left = ol_unparen(t, ol_field(t, n, OL_F_left));
        ol_nid obj = ol_field(t, left, OL_F_object);
        return ol_kind_of(t, ol_field(t, n, OL_F_right)) == OL_N_true && ol_kind_of(t, obj) == OL_N_identifier
                   ? obj
                   : OL_NONE;
    }
    uint32_t ci = ol_call_at(m, n);
    if (ci == OL_NO_INDEX)
        return OL_NONE;
    const ol_call *c = &m->calls.items[ci];
    const char *name = ol_sym_str(m, c->name);
    if (name && strcmp(name, "requires_grad_") == 0 && c->receiver != OL_NONE) {
        ol_nid on = ol_call_arg(m, n, 0, "requires_grad");
        if (on != OL_NONE && ol_kind_of(t, on) != OL_N_true)
            return OL_NONE;
        if (ol_kind_of(t, ol_unparen(t, c->receiver)) == OL_N_identifier)
            return ol_unparen(t, c->receiver);
    } else {
        ol_nid rg = ol_call_arg(m, n, -1, "requires_grad");
        if (rg == OL_NONE || ol_kind_of(t, rg) != OL_N_true)
            return OL_NONE;
    }
    /* bound by an assignment: `x = (...).requires_grad_()` */
    ol_nid p = ol_parent(t, n);
    while (p != OL_NONE && ol_kind_of(t, p) == OL_N_parenthesized_expression)
        p = ol_parent(t, p);
    if (p == OL_NONE || ol_kind_of(t, p) != OL_N_assignment || ol_unparen(t, ol_field(t, p, OL_F_right)) != n)
        return OL_NONE;
    ol_nid left = ol_field(t, p, OL_F_left);
    return ol_kind_of(t, left) == OL_N_identifier ? left : OL_NONE;
}

/* Is e `x.grad` for the name x? */
static bool grad_of(const ol_tree *t, ol_nid e, ol_nid x)
{
    e = ol_unparen(t, e);
    return ol_kind_of(t, e) == OL_N_attribute && ol_text_is(t, ol_field(t, e, OL_F_attribute), "grad") &&
           ol_same_text(t, ol_field(t, e, OL_F_object), x);
}

/* Does region drop the graph `x.grad` holds: `x.grad = None` (any
 * assignment), `del x.grad`, `x.grad.detach_()`,
 * `x.grad.requires_grad_(False)`, or zero_grad() of an optimizer built over
 * x? Zeroing the model's gradients does not touch an input's. */
static bool resets_input_grad(ol_model *m, ol_nid region, ol_nid x)
{
    const ol_tree *t = m->tree;
    size_t first, end = ol_calls_in(m, region, &first);
    for (size_t i = first; i < end; i++) {
        const ol_call *c = &m->calls.items[i];
        if (c->name == m->names.zero_grad && c->receiver != OL_NONE) {
            ol_nid built = ol_bound_value(m, ol_unparen(t, c->receiver));
            if (built != OL_NONE && ol_mentions(t, built, x))
                return true;
        }
        if (c->receiver != OL_NONE && grad_of(t, c->receiver, x)) {
            ol_nid attr = ol_field(t, c->callee, OL_F_attribute);
            if (ol_text_is(t, attr, "detach_") || ol_text_is(t, attr, "requires_grad_"))
                return true;
        }
    }
    for (ol_nid n = region; n < m->subtree_end[region]; n++) {
        ol_kind k = ol_kind_of(t, n);
        if (k == OL_N_assignment && grad_of(t, ol_field(t, n, OL_F_left), x))
            return true;
        if (k == OL_N_delete_statement)
            for (ol_nid d = ol_first_named(t, n); d != OL_NONE; d = ol_next_named(t, d))
                if (grad_of(t, d, x))
                    return true;
    }
    return false;
}

/* An input the backward writes its gradient into and the code reads back:
 * a leaf made to require grad in the function of the backward, before it,
 * whose `.grad` is read after it (a gradient penalty on `x.requires_grad_()`).
 * Returns the leaf's binding (the switch), or OL_NONE; *x is the name. */
static ol_nid input_grad_read(ol_model *m, ol_nid call, ol_nid region, ol_nid *x)
{
    const ol_tree *t = m->tree;
    size_t first, end = ol_calls_in(m, region, &first);
    size_t nsw;
    const ol_nid *sw = ol_grad_switches(m, &nsw);
    /* candidates: the grad switches and the calls given requires_grad=True before the backward */
    for (int pass = 0; pass < 2; pass++) {
        size_t count = pass == 0 ? nsw : end - first;
        for (size_t i = 0; i < count; i++) {
            ol_nid s = pass == 0 ? sw[i] : m->calls.items[first + i].node;
            if (s < region || s >= m->subtree_end[region] || s >= call)
                continue;
            if (pass == 1 && ol_call_arg(m, s, -1, "requires_grad") == OL_NONE)
                continue;
            if (ol_function_of(m, s) != ol_function_of(m, call))
                continue;
            ol_nid name = leaf_name(m, s);
            if (name == OL_NONE)
                continue;
            /* `x.grad` read after the backward, in the same function */
            for (ol_nid n = m->subtree_end[call]; n < m->subtree_end[region]; n++) {
                if (ol_kind_of(t, n) != OL_N_attribute || !grad_of(t, n, name))
                    continue;
                ol_nid p = ol_parent(t, n);
                if (ol_kind_of(t, p) == OL_N_assignment && ol_field(t, p, OL_F_left) == n)
                    continue;
                *x = name;
                return s;
            }
        }
    }
    return OL_NONE;
}

static void check(ol_check *c)
{
    ol_model *m = c->model;
    for (size_t i = 0; i < m->calls.len; i++) {
        const ol_call *call = &m->calls.items[i];
        if (!ol_is_backward_call(m, (uint32_t)i) || !creates_graph(m, call))
            continue;
        bool reset = false;
        bool rep = repeated(m, call->node, 0, &reset);
        if (!rep || reset) {
            /* the gradient of an input: zeroing the model's gradients leaves
             * it, and a fresh input each call does not break the cycle
             * between the input, its `.grad` and the graph that made it */
            ol_nid region = function_region(m, call->node), x = OL_NONE;
            ol_nid leaf = region != OL_NONE ? input_grad_read(m, call->node, region, &x) : OL_NONE;
            if (leaf == OL_NONE || resets_input_grad(m, region, x))
                continue;
            ol_reasons why = {0};
            ol_often often = ol_how_often(m, call->node, &why);
            if (often == OL_ONCE)
                continue;
            char *name = ol_node_str(c->tree, x);
            ol_because(&why, m, leaf, "`%s` is a leaf that requires grad: the backward stores its gradient in "
                                      "`%s.grad`, read below",
                       name, name);
            ol_diag *d = ol_report_node(c, call->node,
                                        "`backward(create_graph=True)` stores the gradient of `%s` in `%s.grad`, "
                                        "where it holds the graph that made it, and nothing resets `%s.grad`: "
                                        "`%s`, its gradient and that graph keep each other alive after every call",
                                        name, name, name, name);
            ol_diag_because(d, m, &why);
            ol_diag_help(d, "take the gradient with `torch.autograd.grad(out, %s, create_graph=True)[0]`, or set "
                            "`%s.grad = None` once it is used",
                         name, name);
            free(name);
            continue;
        }
        ol_reasons why = {0};
        ol_how_often(m, call->node, &why);
        ol_diag *d = ol_report_node(c, call->node,
                                    "`backward(create_graph=True)` stores gradients that hold the graph that made "
                                    "them, and nothing here resets `.grad`: each iteration's graph stays alive in "
                                    "a parameter-gradient reference cycle");
        ol_diag_because(d, m, &why);
        ol_diag_help(d, "take the gradients with `torch.autograd.grad(loss, params, create_graph=True)`, or reset "
                        "them after use (`optimizer.zero_grad()` or `p.grad = None`)");
    }
}

const ol_rule ol_rule_oom106 = {
    .code = "OOM106",
    .name = "backward-create-graph-leak",
    .severity = OL_SEV_ERROR,
    .device_memory = true,
    .summary = "`backward(create_graph=True)` in a loop, with gradients never reset.",
    .what = "Flags `.backward(create_graph=True)` (also `torch.autograd.backward(..., create_graph=True)` "
            "and the positional forms) inside a loop, a Lightning `training_step`, or a function called "
            "from a loop, where neither that function nor its callers reset the gradients: no "
            "`zero_grad()` of any kind, no `p.grad = None`, no `p.grad.detach_()`. "
            "`torch.autograd.grad(..., create_graph=True)` is not flagged. Also flagged, in code that runs more than "
            "once: a backward with `create_graph=True` into the `.grad` of an input made to require grad "
            "(a gradient penalty's `x.requires_grad_()`) that the code reads back and never resets (`x.grad = "
            "None`): zeroing the model's gradients does not clear it, and a fresh input each call still leaks.",
    .why = "With `create_graph=True`, backward records how each gradient was computed so it can be "
           "differentiated again. The gradient stored in `p.grad` then references a graph that "
           "references `p`: a reference cycle (PyTorch warns about it) that keeps the whole graph, "
           "saved activations included, alive until `.grad` is reset. Without a reset the next "
           "backward accumulates into the old gradient, linking every iteration's graph to the last: "
           "memory grows each step until the GPU runs out. `p.grad.zero_()` does not help: the zeroed "
           "gradient still records its history.",
    .example = "for x, y in loader:\n"
               "    loss = criterion(model(x), y)\n"
               "    loss.backward(create_graph=True)\n"
               "    penalty = sum(p.grad.pow(2).sum() for p in model.parameters())\n"
               "    penalty.backward()\n"
               "    optimizer.step()",
    .instead = "for x, y in loader:\n"
               "    optimizer.zero_grad()\n"
               "    loss = criterion(model(x), y)\n"
               "    grads = torch.autograd.grad(loss, list(model.parameters()), create_graph=True)\n"
               "    penalty = sum(g.pow(2).sum() for g in grads)\n"
               "    (loss + penalty).backward()\n"
               "    optimizer.step()",
    .fix = NULL,
    .tags = "memory,autograd",
    .precision = "high",
    .check = check,
};
