/*
 * OOM105 hidden-state-carried-across-batches: in a loop over batches,
 * `out, hidden = model(x, hidden)` feeds the previous iteration's hidden
 * state, still attached to its graph, into this iteration's forward pass.
 * Each iteration's graph then links to the one before: with autograd on,
 * nothing is ever freed (memory grows every batch), or backward fails with
 * "Trying to backward through the graph a second time" and gets papered over
 * with retain_graph=True (OOM103). Truncated backpropagation through time
 * detaches the state at each batch boundary.
 *
 * Not flagged: a state detached (also in place, `h.detach_()`) or
 * re-initialised earlier in the iteration,
 * loops that do not draw batches (time steps within one sequence), and code
 * under no_grad.
 */
#include <stdlib.h>
#include <string.h>

#include "facts.h"
#include "rule.h"

/* The call's argument that is the identifier `name`, or OL_NONE. */
static ol_nid argument_named(ol_model *m, ol_nid call, ol_sym name)
{
    const ol_tree *t = m->tree;
    ol_nid args = ol_field(t, call, OL_F_arguments);
    for (ol_nid a = ol_first_named(t, args); a != OL_NONE; a = ol_next_named(t, a)) {
        ol_nid v = ol_kind_of(t, a) == OL_N_keyword_argument ? ol_field(t, a, OL_F_value) : a;
        v = ol_unparen(t, v);
        if (ol_kind_of(t, v) == OL_N_identifier && ol_node_sym(m, v) == name)
            return v;
    }
    return OL_NONE;
}

/* The identifier an expression is rooted at: `h` for h, h[0], h.data. */
static ol_nid root_identifier(const ol_tree *t, ol_nid n)
{
    for (;;) {
        n = ol_unparen(t, n);
        ol_kind k = ol_kind_of(t, n);
        if (k == OL_N_identifier)
            return n;
        if (k == OL_N_subscript || k == OL_N_attribute)
            n = ol_field(t, n, k == OL_N_subscript ? OL_F_value : OL_F_object);
        else
            return OL_NONE;
    }
}

/* True when the iteration detaches `name` in place before `before`:
 * `h.detach_()`, `h[0].detach_()`, or `for s in h: s.detach_()`. */
static bool detached_in_place(ol_model *m, ol_nid loop_node, ol_nid before, ol_sym name)
{
    const ol_tree *t = m->tree;
    for (size_t i = 0; i < m->calls.len; i++) {
        const ol_call *c = &m->calls.items[i];
        if (c->receiver == OL_NONE || !ol_contains(t, loop_node, c->node) ||
            ol_node_at(t, c->node)->start >= ol_node_at(t, before)->start ||
            strcmp(ol_sym_str(m, c->name), "detach_") != 0)
            continue;
        ol_nid r = root_identifier(t, c->receiver);
        if (r == OL_NONE)
            continue;
        if (ol_node_sym(m, r) == name)
            return true;
        /* a loop variable over the state */
        for (ol_nid p = c->node; p != OL_NONE && p != loop_node; p = ol_parent(t, p)) {
            if (ol_kind_of(t, p) != OL_N_for_statement)
                continue;
            ol_nid var = ol_field(t, p, OL_F_left), over = root_identifier(t, ol_field(t, p, OL_F_right));
            if (ol_kind_of(t, var) == OL_N_identifier && ol_node_sym(m, var) == ol_node_sym(m, r) &&
                over != OL_NONE && ol_node_sym(m, over) == name)
                return true;
        }
    }
    return false;
}

static void check(ol_check *c)
{
    ol_model *m = c->model;
    const ol_tree *t = c->tree;
    for (size_t i = 0; i < m->assigns.len; i++) {
        ol_nid a = m->assigns.items[i];
        ol_nid right = ol_unparen(t, ol_field(t, a, OL_F_right));
        uint32_t ci = ol_call_at(m, right);
        if (ci == OL_NO_INDEX || !ol_is_forward_call(m, ci))
            continue;
        uint32_t loop = m->node_loop[a];
        if (loop == OL_NO_INDEX || !ol_loop_is_data_loop(m, loop) || !ol_grad_on(m, a, NULL))
            continue;
        /* each identifier target that is also passed in */
        ol_nid left = ol_field(t, a, OL_F_left);
        for (ol_nid tgt = left; tgt != OL_NONE && tgt < m->subtree_end[left]; tgt++) {
            if (ol_kind_of(t, tgt) != OL_N_identifier)
                continue;
            ol_sym name = ol_node_sym(m, tgt);
            ol_nid arg = argument_named(m, right, name);
            if (arg == OL_NONE)
                continue;
            /* the value passed in is last iteration's output: the def made by this
             * very statement reaches the argument through the loop */
            uint32_t defs[16];
            size_t n = ol_reaching_defs(m, m->node_scope[arg], name, arg, defs, 16);
            bool carried = false;
            for (size_t k = 0; k < n; k++)
                if (m->defs.items[defs[k]].target == tgt)
                    carried = true;
            /* any assignment to it earlier in the iteration (a detach, even a
             * conditional one, a fresh state) is taken as the author's reset */
            ol_nid loop_node = m->loops.items[loop].node;
            for (uint32_t d = ol_scope_defs(m, m->node_scope[a], name); d != OL_NO_INDEX && carried;
                 d = m->defs.items[d].next) {
                const ol_def *def = &m->defs.items[d];
                if (def->target != tgt && ol_contains(t, loop_node, def->stmt) &&
                    ol_node_at(t, def->stmt)->start < ol_node_at(t, a)->start)
                    carried = false;
            }
            if (!carried || detached_in_place(m, loop_node, a, name))
                continue;
            char *h = ol_node_str(t, tgt);
            ol_diag *d = ol_report_node(c, a,
                                        "`%s` carries the previous batch's autograd graph into this forward pass: "
                                        "every batch's graph stays linked to the last",
                                        h);
            ol_diag_help(d, "detach the state at the start of each batch: `%s = %s.detach()` (for an LSTM's "
                            "(h, c): `%s = tuple(s.detach() for s in %s)`)",
                         h, h, h, h);
            free(h);
            break;
        }
    }
}

const ol_rule ol_rule_oom105 = {
    .code = "OOM105",
    .name = "hidden-state-carried-across-batches",
    .severity = OL_SEV_ERROR,
    .device_memory = true,
    .summary = "A recurrent hidden state is fed from one batch to the next without being detached.",
    .what = "Flags `out, hidden = model(x, hidden)` (any forward call that takes a name and rebinds it) "
            "in a loop over batches, when the state passed in is the previous iteration's output with no "
            "`.detach()` or re-initialisation earlier in the iteration. Loops over time steps within one "
            "sequence, and code under no_grad, are not flagged.",
    .why = "The hidden state returned by a forward pass is part of that pass's graph. Passing it into the "
           "next batch links the two graphs, and so on for every batch: autograd can free nothing, and "
           "memory grows until the GPU runs out. With a backward per batch the second backward fails "
           "instead (\"Trying to backward through the graph a second time\"), and adding "
           "retain_graph=True to silence it turns the failure into the leak. Truncated backpropagation "
           "through time detaches the state at each batch.",
    .example = "hidden = model.init_hidden(batch_size)\n"
               "for x, y in loader:\n"
               "    output, hidden = model(x, hidden)\n"
               "    loss = criterion(output, y)\n"
               "    loss.backward()",
    .instead = "hidden = model.init_hidden(batch_size)\n"
               "for x, y in loader:\n"
               "    hidden = hidden.detach()\n"
               "    output, hidden = model(x, hidden)\n"
               "    loss = criterion(output, y)\n"
               "    loss.backward()",
    .fix = NULL,
    .tags = "memory,autograd",
    .precision = "high",
    .check = check,
};
