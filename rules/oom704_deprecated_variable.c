/*
 * OOM704 deprecated-variable: `Variable(...)` (torch.autograd.Variable) and
 * its `volatile=True` flag. Since PyTorch 0.4 Variable is a no-op wrapper
 * that returns a Tensor, and `volatile` is ignored with a warning: code that
 * relied on `volatile=True` to avoid building a graph at inference now
 * builds one, and keeps every activation alive.
 */
#include <stdlib.h>
#include <string.h>

#include "rule.h"

static void check(ol_check *c)
{
    ol_model *m = c->model;
    const ol_tree *t = c->tree;
    for (size_t i = 0; i < m->calls.len; i++) {
        const ol_call *call = &m->calls.items[i];
        const char *q = ol_qualname(m, call->callee);
        if (!q || (strcmp(q, "torch.autograd.Variable") != 0 && strcmp(q, "torch.autograd.variable.Variable") != 0))
            continue;
        ol_nid volatile_arg = ol_call_arg(m, call->node, -1, "volatile");
        bool is_volatile = volatile_arg != OL_NONE && ol_kind_of(t, volatile_arg) == OL_N_true;
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
