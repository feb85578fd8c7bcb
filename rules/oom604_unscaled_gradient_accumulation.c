/*
 * OOM604 unscaled-gradient-accumulation: the optimizer steps every N
 * batches (`if (i + 1) % N == 0: optimizer.step()`) while backward runs
 * every batch, and the loss is never divided by N. Gradients are summed
 * over N batches, so the update is N times larger than the effective batch
 * size implies. Finding at the backward of the undivided loss.
 *
 * Not accumulation: a `% log_interval` test that does not guard the step.
 * Any division of the loss before backward counts as scaling (the divisor
 * may be a copy of N under another name).
 */
#include <stdlib.h>
#include <string.h>

#include "rule.h"

/* The modulo test guarding n, as the `%` node, or OL_NONE. */
static ol_nid modulo_guard(const ol_tree *t, ol_nid n, ol_nid stop)
{
    for (ol_nid p = ol_parent(t, n); p != OL_NONE && p != stop; p = ol_parent(t, p)) {
        ol_kind k = ol_kind_of(t, p);
        if (k != OL_N_if_statement && k != OL_N_elif_clause)
            continue;
        ol_nid cond = ol_field(t, p, OL_F_condition);
        for (ol_nid x = cond; x != OL_NONE && x < t->nodes.len && ol_node_at(t, x)->start < ol_node_at(t, cond)->end; x++) {
            if (ol_kind_of(t, x) == OL_N_binary_operator && ol_kind_of(t, ol_field(t, x, OL_F_operator)) == OL_T_PERCENT)
                return x;
        }
    }
    return OL_NONE;
}

/* Is the expression a division by something (loss / N, loss * (1 / N))? */
static bool divided(const ol_tree *t, ol_nid e)
{
    e = ol_unparen(t, e);
    if (ol_kind_of(t, e) != OL_N_binary_operator)
        return false;
    ol_kind op = ol_kind_of(t, ol_field(t, e, OL_F_operator));
    if (op == OL_T_SLASH || op == OL_T_DSLASH)
        return true;
    if (op == OL_T_STAR)
        return divided(t, ol_field(t, e, OL_F_left)) || divided(t, ol_field(t, e, OL_F_right));
    return false;
}

/* Was the loss scaled before this backward: `(loss / N).backward()`,
 * `loss = loss / N`, `loss /= N`, `loss = criterion(...) / N`? A loss
 * bound by a context manager that scales it for mixed precision (apex's
 * `with amp.scale_loss(loss, optimizer) as scaled_loss:`) is the loss
 * handed to it, so the question goes to that argument. */
static bool scaled(ol_model *m, ol_nid operand, ol_nid loop_node, int depth)
{
    const ol_tree *t = m->tree;
    operand = ol_unparen(t, operand);
    if (divided(t, operand))
        return true;
    if (ol_kind_of(t, operand) != OL_N_identifier) {
        /* criterion(out, y).backward(): a loss straight from the loss function
         * is undivided; anything else we cannot follow, so assume it is scaled */
        ol_val v = ol_eval(m, operand);
        return !(v.flags & OL_VF_LOSS);
    }
    uint32_t defs[16];
    size_t n = ol_reaching_defs(m, m->node_scope[operand], ol_node_sym(m, operand), operand, defs, 16);
    for (size_t i = 0; i < n; i++) {
        const ol_def *d = &m->defs.items[defs[i]];
        if (!ol_contains(t, loop_node, d->stmt) && d->kind != OL_DEF_FOR)
            continue;
        if (d->kind == OL_DEF_AUGASSIGN) {
            ol_kind op = ol_kind_of(t, ol_field(t, d->value, OL_F_operator));
            if (op == OL_T_SLASH_EQ || op == OL_T_DSLASH_EQ || op == OL_T_STAR_EQ)
                return true;
        }
        if (d->kind == OL_DEF_ASSIGN && divided(t, d->value))
            return true;
        if (d->kind == OL_DEF_WITH && depth < 4 && d->value != OL_NONE && ol_kind_of(t, d->value) == OL_N_call) {
            ol_nid arg = ol_call_arg(m, d->value, 0, "loss");
            if (arg != OL_NONE && scaled(m, arg, loop_node, depth + 1))
                return true;
        }
    }
    /* a division anywhere in the loop that rebinds the loss */
    for (size_t i = 0; i < m->aug_assigns.len; i++) {
        ol_nid a = m->aug_assigns.items[i];
        ol_kind op = ol_kind_of(t, ol_field(t, a, OL_F_operator));
        if ((op == OL_T_SLASH_EQ || op == OL_T_DSLASH_EQ) && ol_contains(t, loop_node, a) &&
            ol_same_text(t, ol_field(t, a, OL_F_left), operand))
            return true;
    }
    return false;
}

static void check(ol_check *c)
{
    ol_model *m = c->model;
    const ol_tree *t = c->tree;
    for (uint32_t li = 0; li < m->loops.len; li++) {
        if (!ol_loop_is_data_loop(m, li))
            continue;
        ol_nid loop = m->loops.items[li].node;
        const ol_event_vec ev = ol_events_of(m, loop)->events;
        /* a step guarded by a modulo test, in this loop's own iterations */
        /* every optimizer step in the iteration waits for a `% N` test; one
         * that steps each batch (a GAN critic beside a generator stepped every
         * n_critic batches) uses the gradients each batch */
        bool accumulates = false;
        ol_nid step = OL_NONE, guard = OL_NONE; /* the first step and its test: the evidence */
        for (size_t i = 0; i < ev.len; i++) {
            const ol_event *e = &ev.items[i];
            if (e->kind != OL_EV_STEP)
                continue;
            ol_nid g = e->site == e->node && m->node_loop[e->node] == li ? modulo_guard(t, e->node, loop) : OL_NONE;
            if (g == OL_NONE) {
                accumulates = false;
                break;
            }
            if (step == OL_NONE)
                step = e->node, guard = g;
            accumulates = true;
        }
        if (!accumulates)
            continue;
        for (size_t i = 0; i < ev.len; i++) {
            const ol_event *e = &ev.items[i];
            if (e->kind != OL_EV_BACKWARD || e->site != e->node || m->node_loop[e->node] != li)
                continue;
            if (modulo_guard(t, e->node, loop) != OL_NONE)
                continue; /* backward only on the stepping iterations: not accumulation */
            ol_nid operand = ol_backward_operand(m, e->call);
            if (operand == OL_NONE || scaled(m, operand, loop, 0))
                continue;
            char *text = ol_node_str(t, operand);
            ol_diag *d = ol_report_node(c, e->node,
                                        "gradients of `%s` accumulate over several batches before each step, but the "
                                        "loss is not divided by the number of accumulation steps",
                                        text);
            ol_reasons why = {0};
            ol_because(&why, m, guard, "the optimizer steps only when this test passes, once in several batches");
            ol_because(&why, m, step, "the step applies the gradients summed since the last one");
            ol_diag_because(d, m, &why);
            ol_diag_help(d, "divide the loss by the accumulation steps before backward: "
                            "`(%s / accumulation_steps).backward()`",
                         text);
            free(text);
        }
    }
}

const ol_rule ol_rule_oom604 = {
    .code = "OOM604",
    .name = "unscaled-gradient-accumulation",
    .severity = OL_SEV_WARNING,
    .summary = "Gradient accumulation without dividing the loss by the number of accumulation steps.",
    .what = "Flags the `backward()` in a batch loop whose optimizer steps only every N batches (the step "
            "guarded by a `% N` test) when the loss was not divided before backward. A `% log_interval` "
            "test that does not guard the step is not accumulation; any division of the loss counts.",
    .why = "Gradients add up across backward calls. Accumulating over N batches without dividing the "
           "loss by N makes each update N times larger than a batch of the effective size would: the "
           "same as silently multiplying the learning rate by N. Accumulation is the standard answer to "
           "running out of memory with large batches, and this is its most common mistake.",
    .example = "for i, (x, y) in enumerate(loader):\n"
               "    loss = criterion(model(x), y)\n"
               "    loss.backward()\n"
               "    if (i + 1) % accumulation_steps == 0:\n"
               "        optimizer.step()\n"
               "        optimizer.zero_grad()",
    .instead = "for i, (x, y) in enumerate(loader):\n"
               "    loss = criterion(model(x), y) / accumulation_steps\n"
               "    loss.backward()\n"
               "    if (i + 1) % accumulation_steps == 0:\n"
               "        optimizer.step()\n"
               "        optimizer.zero_grad()",
    .fix = NULL,
    .tags = "correctness,training",
    .precision = "high",
    .check = check,
};
