/*
 * OOM101 tensor-accumulated-with-graph: `total += loss` (or `total = total +
 * loss`, `self.total += loss`, `stats["loss"] += loss`) where the added value
 * carries the autograd graph and the accumulator lives across iterations of
 * a loop that draws batches. Each iteration's graph is then kept alive by
 * the accumulator, and memory grows until the epoch ends or the GPU runs out.
 *
 * What does not count: values without a graph (`loss.item()`, `.detach()`,
 * anything computed under no_grad, `(pred == y).sum()`), accumulators reset
 * inside the loop (a per-step sum that is backward()ed, multi-head losses,
 * seq2seq decoding, gradient accumulation that resets after each step), and
 * loops that do not draw batches.
 *
 * Fix: `.item()` for a scalar loss (safe unless the accumulator is later
 * used as a tensor), `.detach()` otherwise (unsafe: it keeps a tensor but
 * cuts gradient flow through the sum).
 */
#include <stdlib.h>
#include <string.h>

#include "rule.h"

/* Compares two expressions' text, ignoring whitespace. */
static bool same_text(const ol_tree *t, ol_nid a, ol_nid b)
{
    uint32_t la, lb;
    const char *sa = ol_text(t, a, &la), *sb = ol_text(t, b, &lb);
    uint32_t i = 0, j = 0;
    for (;;) {
        while (i < la && (sa[i] == ' ' || sa[i] == '\t' || sa[i] == '\n' || sa[i] == '\r' || sa[i] == '\\'))
            i++;
        while (j < lb && (sb[j] == ' ' || sb[j] == '\t' || sb[j] == '\n' || sb[j] == '\r' || sb[j] == '\\'))
            j++;
        if (i == la || j == lb)
            return i == la && j == lb;
        if (sa[i] != sb[j])
            return false;
        i++;
        j++;
    }
}

/* The name that holds the accumulator: `total`, `self.total` (attr), or the
 * container in `stats["loss"]`. */
typedef struct accumulator {
    ol_nid target;     /* the full target expression */
    ol_nid holder;     /* identifier or self-attribute whose binding matters */
    bool is_attr;      /* holder is self.<attr> */
    bool is_item;      /* target is holder[...] */
} accumulator;

static bool self_attribute(ol_model *m, ol_nid n)
{
    const ol_tree *t = m->tree;
    if (ol_kind_of(t, n) != OL_N_attribute)
        return false;
    ol_nid obj = ol_field(t, n, OL_F_object);
    if (ol_kind_of(t, obj) != OL_N_identifier)
        return false;
    ol_val v = ol_eval(m, obj);
    return (v.kind == OL_V_MODULE || v.kind == OL_V_INSTANCE) && (v.flags & OL_VF_LOCAL);
}

static bool describe_target(ol_model *m, ol_nid target, accumulator *acc)
{
    const ol_tree *t = m->tree;
    target = ol_unparen(t, target);
    memset(acc, 0, sizeof(*acc));
    acc->target = target;
    ol_nid holder = target;
    if (ol_kind_of(t, holder) == OL_N_subscript) {
        holder = ol_unparen(t, ol_field(t, holder, OL_F_value));
        acc->is_item = true;
    }
    if (ol_kind_of(t, holder) == OL_N_identifier) {
        acc->holder = holder;
        return true;
    }
    if (self_attribute(m, holder)) {
        acc->holder = holder;
        acc->is_attr = true;
        return true;
    }
    return false;
}

/* Does expression e mention the holder's name (so `x = x + v` is an
 * accumulation, not a reset)? */
static bool mentions(const ol_tree *t, ol_nid e, ol_nid holder)
{
    /* the subtree is a contiguous run of the pre-order node array */
    if (e == OL_NONE)
        return false;
    const ol_node *h = ol_node_at(t, holder);
    uint32_t hl = h->end - h->start;
    const ol_node *n = ol_node_at(t, e);
    for (ol_nid i = e; i < t->nodes.len && ol_node_at(t, i)->start < n->end; i++) {
        const ol_node *c = ol_node_at(t, i);
        if (c->start < n->start)
            break;
        if (c->end - c->start >= hl && same_text(t, i, holder))
            return true;
    }
    return false;
}

/* Is the accumulator reset somewhere inside `loop` (other than by the
 * accumulating statement itself)? A reset bounds its lifetime to one
 * iteration of that loop. */
static bool reset_inside(ol_model *m, const accumulator *acc, ol_nid loop_node, ol_nid stmt)
{
    const ol_tree *t = m->tree;
    /* rebinding the holder: x = 0, x = [], del x, self.x = 0 */
    if (!acc->is_attr) {
        uint32_t scope = m->node_scope[acc->holder];
        ol_sym name = ol_node_sym(m, acc->holder);
        for (uint32_t d = ol_scope_defs(m, scope, name); d != OL_NO_INDEX; d = m->defs.items[d].next) {
            const ol_def *def = &m->defs.items[d];
            if (def->stmt == stmt || !ol_contains(t, loop_node, def->stmt))
                continue;
            if (def->kind == OL_DEF_DELETE || def->kind == OL_DEF_FOR || def->kind == OL_DEF_WITH)
                return true;
            if ((def->kind == OL_DEF_ASSIGN || def->kind == OL_DEF_WALRUS) && !mentions(t, def->value, acc->holder))
                return true;
        }
    } else {
        ol_nid obj = ol_field(t, acc->holder, OL_F_object);
        ol_val self = ol_eval(m, obj);
        ol_sym attr = ol_node_sym(m, ol_field(t, acc->holder, OL_F_attribute));
        if (self.ref < m->classes.len) {
            const ol_class *cls = &m->classes.items[self.ref];
            for (size_t i = 0; i < cls->attr_defs.len; i++) {
                const ol_def *def = &m->defs.items[cls->attr_defs.items[i]];
                if (def->name != attr || def->stmt == stmt || !ol_contains(t, loop_node, def->stmt))
                    continue;
                if (def->kind == OL_DEF_ASSIGN && !mentions(t, def->value, acc->holder))
                    return true;
            }
        }
    }
    /* item-wise: stats["loss"] = 0 inside the loop */
    if (acc->is_item) {
        for (size_t i = 0; i < m->subscript_stores.len; i++) {
            ol_nid a = m->subscript_stores.items[i];
            if (a == stmt || !ol_contains(t, loop_node, a))
                continue;
            ol_nid left = ol_unparen(t, ol_field(t, a, OL_F_left));
            if (same_text(t, left, acc->target) && !mentions(t, ol_field(t, a, OL_F_right), acc->target))
                return true;
        }
    }
    /* holder.clear() */
    for (size_t i = 0; i < m->calls.len; i++) {
        const ol_call *c = &m->calls.items[i];
        if (c->name != m->names.clear || c->receiver == OL_NONE || !ol_contains(t, loop_node, c->node))
            continue;
        if (same_text(t, ol_unparen(t, c->receiver), acc->holder))
            return true;
    }
    return false;
}

/* The innermost batch-drawing loop the accumulator outlives, or
 * OL_NO_INDEX. */
static uint32_t outlived_data_loop(ol_model *m, const accumulator *acc, ol_nid stmt)
{
    for (uint32_t l = m->node_loop[stmt]; l != OL_NO_INDEX; l = m->loops.items[l].parent) {
        ol_nid loop_node = m->loops.items[l].node;
        if (reset_inside(m, acc, loop_node, stmt))
            return OL_NO_INDEX;
        if (ol_loop_is_data_loop(m, l))
            return l;
    }
    return OL_NO_INDEX;
}

/* Lightning's training_step runs once per batch: a self.<attr> accumulated
 * there outlives the step. */
static bool in_training_step_hook(ol_model *m, const accumulator *acc, ol_nid stmt)
{
    if (!acc->is_attr || m->node_loop[stmt] != OL_NO_INDEX)
        return false;
    uint32_t fn = ol_function_of(m, stmt);
    return fn != OL_NO_INDEX && ol_function_hook(m, fn) == OL_HOOK_TRAIN_STEP;
}

/* Is the accumulator used as a tensor later (acc.item(), acc.backward())?
 * Then turning it into a float would break that code. */
static bool used_as_tensor(ol_model *m, const accumulator *acc)
{
    const ol_tree *t = m->tree;
    for (size_t i = 0; i < m->calls.len; i++) {
        const ol_call *c = &m->calls.items[i];
        if (c->receiver != OL_NONE && same_text(t, ol_unparen(t, c->receiver), acc->target))
            return true;
    }
    return false;
}

static bool is_scalar_loss(ol_model *m, ol_nid value, ol_val v)
{
    if (!(v.flags & OL_VF_LOSS))
        return false;
    /* reduction="none" keeps one loss per sample */
    const ol_tree *t = m->tree;
    ol_nid e = ol_unparen(t, value);
    if (ol_kind_of(t, e) == OL_N_call) {
        ol_nid r = ol_call_arg(m, e, -1, "reduction");
        const char *s;
        uint32_t len;
        if (r != OL_NONE && ol_string_value(t, r, &s, &len) && ol_mem_eq_cstr(s, len, "none"))
            return false;
    }
    return true;
}

static ol_fix *make_fix(ol_model *m, const accumulator *acc, ol_nid value, ol_val v)
{
    const ol_tree *t = m->tree;
    bool item = is_scalar_loss(m, value, v);
    const char *suffix = item ? ".item()" : ".detach()";
    bool unsafe = !item || used_as_tensor(m, acc);
    ol_fix *fix = ol_fix_new(unsafe, item ? "Accumulate the loss as a Python number with .item()"
                                          : "Accumulate a detached tensor");
    ol_kind k = ol_kind_of(t, value);
    const ol_node *n = ol_node_at(t, value);
    bool primary = k == OL_N_identifier || k == OL_N_attribute || k == OL_N_call || k == OL_N_subscript ||
                   k == OL_N_parenthesized_expression;
    if (primary) {
        ol_fix_edit(fix, n->end, n->end, suffix);
    } else {
        ol_fix_edit(fix, n->start, n->start, "(");
        char *close = ol_xasprintf(")%s", suffix);
        ol_fix_edit(fix, n->end, n->end, close);
        free(close);
    }
    return fix;
}

static void consider(ol_check *c, ol_nid stmt, ol_nid target, ol_nid value)
{
    ol_model *m = c->model;
    const ol_tree *t = c->tree;
    accumulator acc;
    if (value == OL_NONE || !describe_target(m, target, &acc))
        return;
    ol_val v = ol_eval(m, value);
    if (!ol_val_is_graph(v) || ol_grad_disabled(m, stmt))
        return;
    ol_val holder = ol_eval(m, acc.is_item ? acc.holder : acc.target);
    if (holder.kind == OL_V_LIST || holder.kind == OL_V_SET)
        return; /* collecting, not summing: OOM102's business */
    uint32_t loop = outlived_data_loop(m, &acc, stmt);
    if (loop == OL_NO_INDEX && !in_training_step_hook(m, &acc, stmt))
        return;
    char *target_text = ol_node_str(t, acc.target);
    char *value_text = ol_node_str(t, value);
    if (strlen(value_text) > 40)
        strcpy(value_text + 37, "...");
    ol_diag *d = ol_report_node(c, stmt,
                                "`%s` accumulates `%s`, which carries the autograd graph; every iteration's "
                                "graph stays alive in `%s`",
                                target_text, value_text, target_text);
    bool item = is_scalar_loss(m, value, v);
    ol_diag_help(d, "accumulate a %s: `%s += %s%s`", item ? "Python number" : "detached tensor", target_text,
                 ol_kind_of(t, value) == OL_N_identifier || ol_kind_of(t, value) == OL_N_attribute ||
                         ol_kind_of(t, value) == OL_N_call || ol_kind_of(t, value) == OL_N_subscript
                     ? value_text
                     : "(...)",
                 item ? ".item()" : ".detach()");
    free(target_text);
    free(value_text);
    ol_diag_attach_fix(d, make_fix(m, &acc, value, v));
}

static void check(ol_check *c)
{
    ol_model *m = c->model;
    const ol_tree *t = c->tree;
    for (size_t i = 0; i < m->aug_assigns.len; i++) {
        ol_nid n = m->aug_assigns.items[i];
        ol_nid op = ol_field(t, n, OL_F_operator);
        ol_kind k = ol_kind_of(t, op);
        if (k != OL_T_PLUS_EQ && k != OL_T_MINUS_EQ)
            continue;
        consider(c, n, ol_field(t, n, OL_F_left), ol_field(t, n, OL_F_right));
    }
    /* x = x + v, x = v + x */
    for (size_t i = 0; i < m->assigns.len; i++) {
        ol_nid n = m->assigns.items[i];
        ol_nid left = ol_field(t, n, OL_F_left);
        ol_nid right = ol_unparen(t, ol_field(t, n, OL_F_right));
        if (left == OL_NONE || ol_kind_of(t, right) != OL_N_binary_operator)
            continue;
        ol_kind op = ol_kind_of(t, ol_field(t, right, OL_F_operator));
        if (op != OL_T_PLUS && op != OL_T_MINUS)
            continue;
        ol_nid a = ol_field(t, right, OL_F_left), b = ol_field(t, right, OL_F_right);
        if (a != OL_NONE && same_text(t, ol_unparen(t, a), ol_unparen(t, left)))
            consider(c, n, left, b);
        else if (op == OL_T_PLUS && b != OL_NONE && same_text(t, ol_unparen(t, b), ol_unparen(t, left)))
            consider(c, n, left, a);
    }
}

const ol_rule ol_rule_oom101 = {
    .code = "OOM101",
    .name = "tensor-accumulated-with-graph",
    .severity = OL_SEV_ERROR,
    .summary = "A running total of a graph-carrying tensor keeps every iteration's autograd graph alive.",
    .what = "Flags `total += loss`, `total = total + loss`, `self.total += loss` and `stats[k] += loss` "
            "inside a loop that draws batches, when the added value carries the autograd graph (a "
            "model's output, a loss, arithmetic on them) and the accumulator outlives the iteration.",
    .why = "A tensor that requires grad remembers how it was computed. Adding it to a running total "
           "makes the total depend on it, so the total keeps each iteration's graph, and the "
           "activations it saved, alive. Memory then grows every step until the epoch ends, or until "
           "CUDA runs out of memory. This is the first item of PyTorch's own FAQ on memory.",
    .example = "total_loss = 0\n"
               "for x, y in loader:\n"
               "    loss = criterion(model(x), y)\n"
               "    loss.backward()\n"
               "    optimizer.step()\n"
               "    total_loss += loss",
    .instead = "total_loss = 0\n"
               "for x, y in loader:\n"
               "    loss = criterion(model(x), y)\n"
               "    loss.backward()\n"
               "    optimizer.step()\n"
               "    total_loss += loss.item()",
    .fix = "Appends `.item()` to a scalar loss (safe unless the accumulator is later used as a tensor, "
           "then unsafe), or `.detach()` to other tensors (unsafe: no gradient flows through the total).",
    .tags = "memory,autograd",
    .precision = "high",
    .check = check,
};
