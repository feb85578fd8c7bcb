/*
 * OOM704 deprecated-variable: `Variable(...)` (torch.autograd.Variable) and
 * its `volatile=True` flag. Since PyTorch 0.4 Variable is a no-op wrapper
 * that returns a Tensor, and `volatile` is ignored with a warning: code that
 * relied on `volatile=True` to avoid building a graph at inference now
 * builds one, and keeps every activation alive.
 */
#include <stdlib.h>
#include "rule.h"

static bool is_variable(ol_model *m, const ol_call *call)
{
    static const char *const VARIABLE[] = {"torch.autograd.Variable", "torch.autograd.variable.Variable", NULL};
    return ol_call_is(m, call->node, VARIABLE);
}

/* Does the lambda or function at node fn hand its keyword arguments on to
 * torch.autograd.Variable (`Variable = lambda *a, **k:
 * autograd.Variable(*a, **k).cuda()`)? Then `volatile=True` given to it
 * reaches Variable, and is ignored there. */
static bool forwards_to_variable(ol_model *m, ol_nid fn)
{
    const ol_tree *t = m->tree;
    size_t first = 0;
    size_t end = ol_calls_in(m, fn, &first);
    for (size_t i = first; i < end; i++) {
        const ol_call *call = &m->calls.items[i];
        if (!is_variable(m, call))
            continue;
        ol_nid args = ol_field(t, call->node, OL_F_arguments);
        for (ol_nid a = args != OL_NONE ? ol_first_named(t, args) : OL_NONE; a != OL_NONE; a = ol_next_named(t, a))
            if (ol_kind_of(t, a) == OL_N_dictionary_splat)
                return true;
    }
    return false;
}

/* The wrapper a call runs, when it is a name bound to a lambda or a
 * function of this file that forwards to Variable; else OL_NONE. */
static ol_nid variable_wrapper(ol_model *m, const ol_call *call)
{
    const ol_tree *t = m->tree;
    ol_nid callee = ol_unparen(t, ol_field(t, call->node, OL_F_function));
    uint32_t fi = ol_callee_function(m, call->node);
    if (fi != OL_NO_INDEX)
        return forwards_to_variable(m, m->functions.items[fi].node) ? m->functions.items[fi].node : OL_NONE;
    ol_nid v = callee != OL_NONE ? ol_bound_value(m, callee) : OL_NONE;
    if (v == OL_NONE || ol_kind_of(t, v) != OL_N_lambda)
        return OL_NONE;
    return forwards_to_variable(m, v) ? v : OL_NONE;
}

static bool true_arg(ol_model *m, const ol_call *call, const char *name)
{
    ol_nid a = ol_call_arg(m, call->node, -1, name);
    return a != OL_NONE && ol_kind_of(m->tree, a) == OL_N_true;
}

static void check(ol_check *c)
{
    ol_model *m = c->model;
    const ol_tree *t = c->tree;
    for (size_t i = 0; i < m->calls.len; i++) {
        const ol_call *call = &m->calls.items[i];
        if (!is_variable(m, call)) {
            /* `volatile=True` through a wrapper of this file that passes it on */
            if (call->name && true_arg(m, call, "volatile") && variable_wrapper(m, call) != OL_NONE) {
                char *callee = ol_node_str_short(t, ol_field(t, call->node, OL_F_function));
                ol_diag *d = ol_report_node(c, call->node,
                                            "`volatile=True` reaches `torch.autograd.Variable` through `%s`, and no "
                                            "longer disables autograd there (ignored since PyTorch 0.4): a forward "
                                            "pass on this value records a graph unless it runs under "
                                            "`torch.no_grad()`",
                                            callee);
                ol_diag_help(d, "pass the tensor itself and run the code under `with torch.no_grad():`");
                free(callee);
            }
            continue;
        }
        bool is_volatile = true_arg(m, call, "volatile");
        ol_diag *d;
        if (is_volatile) {
            d = ol_report_node(c, call->node,
                               "`Variable(..., volatile=True)` no longer disables autograd (ignored since PyTorch "
                               "0.4): a forward pass on this value records a graph unless it runs under "
                               "`torch.no_grad()`");
            ol_diag_help(d, "pass the tensor itself and run the code under `with torch.no_grad():`");
        } else if (ol_call_arg(m, call->node, 1, "requires_grad") != OL_NONE) {
            /* `Variable(t, requires_grad=True)` makes a leaf that needs gradients */
            d = ol_report_node(c, call->node,
                               "`Variable(..., requires_grad=...)` is deprecated since PyTorch 0.4; a tensor carries "
                               "`requires_grad` itself");
            ol_diag_help(d, "set it on the tensor: `x.requires_grad_()`, or `torch.tensor(..., requires_grad=True)`");
        } else {
            d = ol_report_node(c, call->node,
                               "`Variable(...)` is deprecated since PyTorch 0.4; wrapping a tensor in it changes "
                               "nothing");
            ol_diag_help(d, "use the tensor directly (`x.requires_grad_()` if it needs gradients)");
        }
    }
}

const ol_rule ol_rule_oom704 = {
    .code = "OOM704",
    .name = "deprecated-variable",
    .severity = OL_SEV_WARNING,
    .in_tests = true,
    .summary = "Uses the deprecated `torch.autograd.Variable`, or relies on `volatile=True`.",
    .what = "Flags calls of `Variable(...)` / `torch.autograd.Variable(...)`, however imported. "
            "`volatile=True` is called out: it used to disable autograd and is now silently ignored. "
            "The import alone is not flagged.",
    .why = "Since PyTorch 0.4 tensors carry autograd state themselves: `Variable(x)` gives back a tensor "
           "like `x`, and `Variable(x, requires_grad=True)` one that needs gradients, as "
           "`x.requires_grad_()` would. Old inference code that wrapped inputs in `Variable(x, volatile=True)` to avoid "
           "building a graph now builds one on every forward pass, keeping all activations alive: "
           "the classic reason an old evaluation script runs out of memory on a new PyTorch.",
    .example = "for images, labels in test_loader:\n"
               "    images = Variable(images.cuda(), volatile=True)\n"
               "    outputs = model(images)",
    .instead = "with torch.no_grad():\n"
               "    for images, labels in test_loader:\n"
               "        outputs = model(images.cuda())",
    .fix = NULL,
    .tags = "deprecation,memory",
    .precision = "very-high",
    .check = check,
};
