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
 */
#include <string.h>

#include "facts.h"
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

static void check(ol_check *c)
{
    ol_model *m = c->model;
    for (size_t i = 0; i < m->calls.len; i++) {
        const ol_call *call = &m->calls.items[i];
        if (!ol_is_backward_call(m, (uint32_t)i) || !creates_graph(m, call))
            continue;
        bool reset = false;
        if (!repeated(m, call->node, 0, &reset) || reset)
            continue;
        ol_diag *d = ol_report_node(c, call->node,
                                    "`backward(create_graph=True)` stores gradients that hold the graph that made "
                                    "them, and nothing here resets `.grad`: each iteration's graph stays alive in "
                                    "a parameter-gradient reference cycle");
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
            "`torch.autograd.grad(..., create_graph=True)` is not flagged.",
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
