/*
 * OOM603 zero-grad-keeps-grad-memory: `zero_grad(set_to_none=False)`.
 * Zero-filled gradients stay allocated between steps (a full copy of the
 * parameters' size, through the forward pass when memory peaks), and the
 * fill itself is an extra kernel per tensor. set_to_none=True frees them and
 * is the default since PyTorch 2.0, so the fix drops the argument.
 */
#include <string.h>

#include "rule.h"

/* Code that adds into gradients by hand (`p.grad += g`, `p.grad.add_(g)`,
 * a parameter server summing workers' gradients) needs them to stay
 * allocated: there set_to_none=False is deliberate. */
static bool writes_into_grads(ol_model *m)
{
    const ol_tree *t = m->tree;
    for (ol_nid n = 0; n < t->nodes.len; n++) {
        if (ol_kind_of(t, n) != OL_N_attribute)
            continue;
        ol_nid attr = ol_field(t, n, OL_F_attribute);
        if (attr == OL_NONE || strcmp(ol_sym_str(m, ol_node_sym(m, attr)), "grad") != 0)
            continue;
        ol_nid p = ol_parent(t, n);
        if (p == OL_NONE)
            continue;
        if (ol_kind_of(t, p) == OL_N_augmented_assignment && ol_field(t, p, OL_F_left) == n)
            return true;
        /* p.grad.add_(...), p.grad.data.add_(...) */
        if (ol_kind_of(t, p) == OL_N_attribute) {
            ol_nid q = p;
            ol_nid a = ol_field(t, q, OL_F_attribute);
            if (strcmp(ol_sym_str(m, ol_node_sym(m, a)), "data") == 0 && ol_kind_of(t, ol_parent(t, q)) == OL_N_attribute) {
                q = ol_parent(t, q);
                a = ol_field(t, q, OL_F_attribute);
            }
            const char *meth = ol_sym_str(m, ol_node_sym(m, a));
            size_t len = strlen(meth);
            ol_nid call = ol_parent(t, q);
            if (len > 1 && meth[len - 1] == '_' && strcmp(meth, "zero_") != 0 && call != OL_NONE &&
                ol_kind_of(t, call) == OL_N_call && ol_field(t, call, OL_F_function) == q)
                return true;
        }
    }
    return false;
}

static void check(ol_check *c)
{
    ol_model *m = c->model;
    const ol_tree *t = c->tree;
    int manual = -1; /* writes_into_grads, computed once when needed */
    for (size_t i = 0; i < m->calls.len; i++) {
        const ol_call *call = &m->calls.items[i];
        if (call->name != m->names.zero_grad || call->receiver == OL_NONE)
            continue;
        ol_val rv = ol_eval(m, call->receiver);
        if (rv.kind != OL_V_OPTIMIZER && rv.kind != OL_V_MODULE && rv.kind != OL_V_UNKNOWN)
            continue;
        ol_nid arg = ol_call_arg(m, call->node, 0, "set_to_none");
        if (arg == OL_NONE || ol_kind_of(t, arg) != OL_N_false)
            continue;
        if (manual < 0)
            manual = writes_into_grads(m);
        if (manual)
            continue;
        ol_diag *d = ol_report_node(c, call->node,
                                    "`zero_grad(set_to_none=False)` keeps every gradient allocated (zero-filled) "
                                    "between steps, through the forward pass where memory peaks");
        ol_reasons why = {0};
        ol_how_often(m, call->node, &why);
        if (!why.len)
            ol_because(&why, m, arg, "`set_to_none=False` asks for zero-filled tensors instead of freeing them");
        ol_diag_because(d, m, &why);
        ol_diag_help(d, "call `zero_grad()`: it sets gradients to None and frees them (the default since "
                        "PyTorch 2.0)");
        ol_nid args = ol_field(t, call->node, OL_F_arguments);
        if (ol_named_count(t, args) != 1)
            continue;
        ol_fix *fix = ol_fix_new(false, "Let zero_grad() free the gradients");
        ol_fix_edit(fix, ol_node_at(t, args)->start, ol_node_at(t, args)->end, "()");
        ol_diag_attach_fix(d, fix);
    }
}

const ol_rule ol_rule_oom603 = {
    .code = "OOM603",
    .name = "zero-grad-keeps-grad-memory",
    .severity = OL_SEV_WARNING,
    .device_memory = true,
    .summary = "`zero_grad(set_to_none=False)` keeps zero-filled gradients allocated between steps.",
    .what = "Flags `optimizer.zero_grad(set_to_none=False)` and `model.zero_grad(set_to_none=False)` "
            "(also with a positional `False`). Not flagged in a file that adds into gradients by hand "
            "(`p.grad += g`, `p.grad.add_(g)`): those need the zero-filled tensors.",
    .why = "With `set_to_none=False` every parameter keeps a gradient tensor of its own size, filled "
           "with zeros, from one step to the next: a parameter-sized block of memory that is alive "
           "during the forward pass, exactly when activations push memory to its peak. Setting "
           "gradients to None frees that block until backward needs it, skips a fill kernel per "
           "tensor, and has been PyTorch's default since 2.0.",
    .example = "optimizer.zero_grad(set_to_none=False)",
    .instead = "optimizer.zero_grad()",
    .fix = "Safe: drops the argument. (Code that reads `p.grad` between zero_grad and backward must "
           "then expect None.)",
    .fix_safety = "Safe: `set_to_none=True` has been zero_grad's default since PyTorch 2.0, and backward and "
                  "the optimizers treat a None gradient as zero. Code that reads `p.grad` between "
                  "`zero_grad()` and `backward()` sees None instead of zeros.",
    .tags = "memory",
    .precision = "very-high",
    .check = check,
};
