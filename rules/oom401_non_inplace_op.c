/*
 * OOM401 non-inplace-op (opt-in): out-of-place operations where the
 * in-place form is safe and saves a tensor's worth of memory:
 *   - `x = x + y` (also -, *, /) on a fresh tensor under no_grad, where no
 *     autograd graph needs the old value;
 *   - manual updates through `.data` (`p.data = p.data - lr * p.grad.data`)
 *     and running averages rebuilt under no_grad (`ema = ema * decay + x *
 *     (1 - decay)`), where `sub_` / `mul_().add_()` allocate nothing;
 *   - `nn.ReLU()`, `nn.LeakyReLU(...)`, `nn.ReLU6()` without `inplace` inside
 *     `nn.Sequential(...)`, right after a layer that does not keep its output
 *     for backward (conv, linear, normalisation, pooling, dropout).
 * Opt-in because the saving is one tensor, not a leak, and in-place
 * arithmetic can fail on integer tensors.
 */
#include <stdlib.h>
#include <string.h>

#include "rule.h"

static const char *const SAFE_BEFORE_ACTIVATION[] = {
    "Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d", "Linear",
    "LazyLinear", "LazyConv1d", "LazyConv2d", "LazyConv3d", "BatchNorm1d", "BatchNorm2d", "BatchNorm3d",
    "SyncBatchNorm", "GroupNorm", "LayerNorm", "InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d",
    "MaxPool1d", "MaxPool2d", "MaxPool3d", "AvgPool1d", "AvgPool2d", "AvgPool3d", "AdaptiveAvgPool1d",
    "AdaptiveAvgPool2d", "AdaptiveAvgPool3d", "AdaptiveMaxPool2d", "Dropout", "Dropout2d", "Dropout3d", NULL};

static const char *torch_nn_name(ol_model *m, ol_nid call)
{
    const char *q = ol_qualname(m, ol_field(m->tree, call, OL_F_function));
    if (!q || !ol_str_has_prefix(q, "torch.nn."))
        return NULL;
    const char *last = strrchr(q, '.');
    return last ? last + 1 : q;
}

static bool listed(const char *name, const char *const *list)
{
    for (; *list; list++)
        if (strcmp(name, *list) == 0)
            return true;
    return false;
}

static void check_activations(ol_check *c)
{
    ol_model *m = c->model;
    const ol_tree *t = c->tree;
    for (size_t i = 0; i < m->calls.len; i++) {
        const ol_call *seq = &m->calls.items[i];
        static const char *const SEQUENTIAL[] = {"torch.nn.Sequential", NULL};
        if (!ol_call_is(m, seq->node, SEQUENTIAL))
            continue;
        ol_nid args = ol_field(t, seq->node, OL_F_arguments);
        ol_nid prev = OL_NONE;
        for (ol_nid a = ol_first_named(t, args); a != OL_NONE; prev = a, a = ol_next_named(t, a)) {
            if (ol_kind_of(t, a) != OL_N_call)
                continue;
            const char *name = torch_nn_name(m, a);
            if (!name || (strcmp(name, "ReLU") != 0 && strcmp(name, "ReLU6") != 0 && strcmp(name, "LeakyReLU") != 0))
                continue;
            bool leaky = strcmp(name, "LeakyReLU") == 0;
            ol_nid inplace = ol_call_arg(m, a, leaky ? 1 : 0, "inplace");
            if (inplace != OL_NONE)
                continue; /* inplace given, True or not: the author chose */
            if (prev == OL_NONE || ol_kind_of(t, prev) != OL_N_call)
                continue; /* first element: in place would modify the caller's tensor */
            const char *before = torch_nn_name(m, prev);
            if (!before || !listed(before, SAFE_BEFORE_ACTIVATION))
                continue;
            ol_diag *d = ol_report_node(c, a,
                                        "`nn.%s` without `inplace=True` after `nn.%s` allocates a second activation "
                                        "tensor that in-place would reuse",
                                        name, before);
            ol_diag_note(d, OL_NOTE_FACT, ol_node_at(t, prev)->start, ol_node_at(t, prev)->end,
                         "`nn.%s` makes a new tensor that only the activation reads", before);
            ol_diag_help(d, "use `nn.%s(%sinplace=True)`", name, leaky ? "..., " : "");
            ol_fix *fix = ol_fix_new(false, "Apply the activation in place");
            ol_nid cargs = ol_field(t, a, OL_F_arguments);
            ol_nid last = OL_NONE;
            for (ol_nid x = ol_first_named(t, cargs); x != OL_NONE; x = ol_next_named(t, x))
                last = x;
            if (last == OL_NONE)
                ol_fix_edit(fix, ol_node_at(t, cargs)->start + 1, ol_node_at(t, cargs)->start + 1, "inplace=True");
            else
                ol_fix_edit(fix, ol_node_at(t, last)->end, ol_node_at(t, last)->end, ", inplace=True");
            ol_diag_attach_fix(d, fix);
        }
    }
}

/* x's value at this point is a fresh tensor made here (a call or arithmetic),
 * not a view, a parameter, an attribute or a loader batch. */
static bool fresh_local_tensor(ol_model *m, ol_nid x)
{
    const ol_tree *t = m->tree;
    ol_val v = ol_eval(m, x);
    if (v.kind != OL_V_TENSOR || (v.flags & (OL_VF_BATCH | OL_VF_PARAM)))
        return false;
    uint32_t defs[8];
    size_t n = ol_reaching_defs(m, m->node_scope[x], ol_node_sym(m, x), x, defs, 8);
    if (n == 0)
        return false;
    for (size_t i = 0; i < n; i++) {
        const ol_def *d = &m->defs.items[defs[i]];
        if (d->kind != OL_DEF_ASSIGN || d->path_len != 0 || d->scope != m->node_scope[x])
            return false;
        ol_kind k = ol_kind_of(t, ol_unparen(t, d->value));
        if (k != OL_N_call && k != OL_N_binary_operator)
            return false;
        /* x = y.view(...), x = y.detach(): views share storage */
        if (k == OL_N_call) {
            uint32_t ci = m->node_call[ol_unparen(t, d->value)];
            const char *meth = ci != OL_NO_INDEX && m->calls.items[ci].name ? ol_sym_str(m, m->calls.items[ci].name) : "";
            static const char *const views[] = {"view", "view_as", "reshape", "detach", "expand", "expand_as",
                                                "squeeze", "unsqueeze", "transpose", "permute", "t", "narrow",
                                                "select", "flatten", "unflatten", "as_strided", "to", "cuda",
                                                "cpu", "contiguous", "type_as", "float", "double", "half", NULL};
            if (listed(meth, views))
                return false;
        }
    }
    return true;
}

/* The evidence that x, read at node x, is a tensor made where it is
 * assigned (fresh_local_tensor): its assignment. */
static void made_here(ol_reasons *why, ol_model *m, ol_nid x, const char *name)
{
    uint32_t defs[8];
    if (ol_reaching_defs(m, m->node_scope[x], ol_node_sym(m, x), x, defs, 8) > 0)
        ol_because(why, m, m->defs.items[defs[0]].stmt, "`%s` is a new tensor made here, shared with no other name",
                   name);
}

static void check_arithmetic(ol_check *c)
{
    ol_model *m = c->model;
    const ol_tree *t = c->tree;
    for (size_t i = 0; i < m->assigns.len; i++) {
        ol_nid a = m->assigns.items[i];
        ol_nid left = ol_field(t, a, OL_F_left);
        ol_nid right = ol_unparen(t, ol_field(t, a, OL_F_right));
        if (ol_kind_of(t, left) != OL_N_identifier || ol_kind_of(t, right) != OL_N_binary_operator)
            continue;
        ol_kind op = ol_kind_of(t, ol_field(t, right, OL_F_operator));
        const char *sym = op == OL_T_PLUS ? "+" : op == OL_T_MINUS ? "-" : op == OL_T_STAR ? "*" : op == OL_T_SLASH ? "/" : NULL;
        if (!sym)
            continue;
        ol_nid lhs = ol_unparen(t, ol_field(t, right, OL_F_left));
        ol_nid rhs = ol_field(t, right, OL_F_right);
        /* `ids = ids + [eos]`: a list grows, no tensor is there */
        ol_kind rk = ol_kind_of(t, ol_unparen(t, rhs));
        if (rk == OL_N_list || rk == OL_N_tuple || rk == OL_N_list_comprehension)
            continue;
        ol_reasons why = {0};
        /* what the file shows first: autograd's state may need its callers */
        if (!ol_same_text(t, lhs, left) || !fresh_local_tensor(m, lhs) || ol_grad_on(m, a, &why))
            continue;
        char *name = ol_node_str(t, left);
        char *operand = ol_node_str(t, rhs);
        ol_diag *d = ol_report_node(c, a, "`%s = %s %s ...` allocates a new tensor; under no_grad `%s %s= ...` reuses "
                                          "the old one",
                                    name, name, sym, name, sym);
        made_here(&why, m, lhs, name);
        ol_diag_because(d, m, &why);
        ol_diag_help(d, "write `%s %s= %s`", name, sym, operand);
        ol_fix *fix = ol_fix_new(true, "Update the tensor in place");
        ol_fix_unsafe_because(fix, "an in-place update changes the tensor for every name that shares it, and "
                                   "fails where the result needs a wider dtype than the tensor's (int += float)");
        char *text = ol_xasprintf("%s %s= %s", name, sym, operand);
        ol_fix_edit(fix, ol_node_at(t, a)->start, ol_node_at(t, a)->end, text);
        free(text);
        ol_diag_attach_fix(d, fix);
        free(name);
        free(operand);
    }
}

static const char *inplace_method(ol_kind op)
{
    return op == OL_T_PLUS ? "add_" : op == OL_T_MINUS ? "sub_" : op == OL_T_STAR ? "mul_" : op == OL_T_SLASH ? "div_" : NULL;
}

/* `x.data` */
static bool is_data_attr(const ol_tree *t, ol_nid e)
{
    return ol_kind_of(t, e) == OL_N_attribute && ol_text_is(t, ol_field(t, e, OL_F_attribute), "data");
}

/* A running value kept in an attribute or a container (`self.ema`,
 * `shadow[name]`, `p.data`) that holds a tensor. */
static bool stored_tensor(ol_model *m, ol_nid target)
{
    const ol_tree *t = m->tree;
    if (is_data_attr(t, target))
        return true;
    ol_kind k = ol_kind_of(t, target);
    if (k != OL_N_attribute && k != OL_N_subscript)
        return false;
    if (ol_eval(m, target).kind == OL_V_TENSOR)
        return true;
    static const char *const words[] = {"ema", "shadow", "running", "avg", "average", "moving", NULL};
    ol_nid name = k == OL_N_attribute ? ol_field(t, target, OL_F_attribute)
                                      : ol_unparen(t, ol_field(t, target, OL_F_value));
    if (ol_kind_of(t, name) == OL_N_attribute)
        name = ol_field(t, name, OL_F_attribute);
    uint32_t len;
    const char *s = ol_kind_of(t, name) == OL_N_identifier ? ol_text(t, name, &len) : NULL;
    return s && ol_name_looks_like(s, len, words);
}

/* Manual updates written out of place: `p.data = p.data - lr * p.grad.data`
 * (`.data` is outside autograd, so in place is always allowed), and running
 * averages rebuilt each step under no_grad: `ema = ema * decay + x * (1 -
 * decay)` (two new tensors per update where `mul_().add_()` makes none). */
static void check_updates(ol_check *c)
{
    ol_model *m = c->model;
    const ol_tree *t = c->tree;
    for (size_t i = 0; i < m->assigns.len; i++) {
        ol_nid a = m->assigns.items[i];
        ol_nid left = ol_field(t, a, OL_F_left);
        ol_nid right = ol_unparen(t, ol_field(t, a, OL_F_right));
        if (ol_kind_of(t, right) != OL_N_binary_operator)
            continue;
        bool data = is_data_attr(t, left), local = ol_kind_of(t, left) == OL_N_identifier;
        ol_kind op = ol_kind_of(t, ol_field(t, right, OL_F_operator));
        ol_nid lhs = ol_unparen(t, ol_field(t, right, OL_F_left));
        ol_nid rhs = ol_field(t, right, OL_F_right);
        ol_nid factor = OL_NONE, old_value = lhs; /* `x * factor + rhs`; where x is read */
        if (!ol_same_text(t, lhs, left)) {
            if ((op != OL_T_PLUS && op != OL_T_MINUS) || ol_kind_of(t, lhs) != OL_N_binary_operator ||
                ol_kind_of(t, ol_field(t, lhs, OL_F_operator)) != OL_T_STAR)
                continue;
            ol_nid p = ol_unparen(t, ol_field(t, lhs, OL_F_left)), q = ol_field(t, lhs, OL_F_right);
            if (ol_same_text(t, p, left))
                factor = q, old_value = p;
            else if (ol_same_text(t, ol_unparen(t, q), left))
                factor = p, old_value = ol_unparen(t, q);
            else
                continue;
        }
        const char *meth = inplace_method(op);
        if (!meth)
            continue;
        /* `x = x op y` on a local is check_arithmetic's; a local running
         * average must be a tensor this code made (no alias to update) */
        if (local ? factor == OL_NONE || !fresh_local_tensor(m, old_value) : !stored_tensor(m, left))
            continue;
        if (factor != OL_NONE && ol_mentions(t, rhs, left))
            continue;
        ol_reasons why = {0};
        if (!data && ol_grad_on(m, a, &why))
            continue;
        char *target = ol_node_str(t, left);
        char *operand = ol_node_str(t, rhs);
        char *text;
        ol_diag *d;
        if (factor == OL_NONE) {
            d = ol_report_node(c, a, "`%s = %s ...` allocates a new tensor; `%s.%s(...)` updates it "
                                     "in place",
                               target, target, target, meth);
            text = ol_xasprintf("%s.%s(%s)", target, meth, operand);
        } else {
            char *f = ol_node_str(t, factor);
            d = ol_report_node(c, a, "`%s = %s * ... %s ...` allocates two new tensors; "
                                     "`%s.mul_(...).%s(...)` updates it in place",
                               target, target, op == OL_T_PLUS ? "+" : "-", target, meth);
            text = ol_xasprintf("%s.mul_(%s).%s(%s)", target, f, meth, operand);
            free(f);
        }
        if (data)
            ol_because(&why, m, left, "`.data` is outside autograd: updating it in place is always allowed");
        else if (local)
            made_here(&why, m, old_value, target);
        ol_diag_because(d, m, &why);
        ol_diag_help(d, "write `%s`", text);
        ol_fix *fix = ol_fix_new(true, "Update the tensor in place");
        ol_fix_unsafe_because(fix, "an in-place update changes the tensor for every name that shares it, and "
                                   "fails where the result needs a wider dtype than the tensor's (int += float)");
        ol_fix_edit(fix, t->nodes.items[a].start, t->nodes.items[a].end, text);
        ol_diag_attach_fix(d, fix);
        free(text);
        free(target);
        free(operand);
    }
}

static void check(ol_check *c)
{
    check_activations(c);
    check_arithmetic(c);
    check_updates(c);
}

const ol_rule ol_rule_oom401 = {
    .code = "OOM401",
    .name = "non-inplace-op",
    .severity = OL_SEV_INFO,
    .device_memory = true,
    .opt_in = true,
    .summary = "An out-of-place operation where the in-place form is safe and saves a tensor.",
    .what = "Opt-in. Flags `x = x + y` (and -, *, /) on a freshly computed tensor under `no_grad`, "
            "manual parameter updates through `.data` (`p.data = p.data - lr * p.grad.data`), running "
            "averages rebuilt out of place under `no_grad` (`ema = ema * decay + x * (1 - decay)`, also in "
            "attributes and dict entries), and "
            "`nn.ReLU()`, `nn.LeakyReLU(...)`, `nn.ReLU6()` without `inplace` inside `nn.Sequential(...)` "
            "right after a convolution, linear, normalisation, pooling or dropout layer.",
    .why = "An out-of-place operation allocates a new tensor the size of its input while the old one is "
           "still alive. In-place forms reuse the memory. Under no_grad nothing needs the old value; "
           "after a layer that does not keep its output for backward, an in-place activation is safe "
           "too. The saving is one activation at a time, which is why this rule is opt-in.",
    .example = "block = nn.Sequential(nn.Conv2d(64, 64, 3), nn.BatchNorm2d(64), nn.ReLU())\n"
               "with torch.no_grad():\n"
               "    y = model(x)\n"
               "    y = y * scale",
    .instead = "block = nn.Sequential(nn.Conv2d(64, 64, 3), nn.BatchNorm2d(64), nn.ReLU(inplace=True))\n"
               "with torch.no_grad():\n"
               "    y = model(x)\n"
               "    y *= scale",
    .fix = "Adds `inplace=True` to the activation (safe); rewrites `x = x op y` as `x op= y`, "
           "`p.data = p.data - u` as `p.data.sub_(u)` and `ema = ema * d + u` as `ema.mul_(d).add_(u)` "
           "(unsafe: in-place arithmetic fails where the result needs a wider dtype, and changes a tensor "
           "other names may share).",
    .fix_safety = "`inplace=True` on an activation is safe: it is offered only inside `nn.Sequential`, right "
                  "after a layer that does not keep its output for backward, so nothing else reads the tensor "
                  "it overwrites. Rewriting arithmetic in place is unsafe: the tensor changes for every "
                  "other name that shares it (a view, an alias kept in a list), and in-place arithmetic fails "
                  "where the result needs a wider dtype than the tensor's (an integer tensor plus a float).",
    .tags = "memory,performance",
    .precision = "medium",
    .check = check,
};
