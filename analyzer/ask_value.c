/*
 * ask_value.c - what does this value hold? (ask.h)
 *
 * The evaluator (eval.c) says what kind of value an expression has, reading
 * one file: a model's output or a loss carries the autograd graph unless it
 * was computed under no_grad in that file. Whether autograd is on where the
 * graph is made is the door's question (ask_grad.c), which also reads the
 * run's callers, so the two are joined here: the value is followed back to
 * the call that made its graph (the forward or the loss, through names,
 * arithmetic, method chains, subscripts and the returns of the file's
 * functions), and the graph counts only when autograd is on there. Where
 * the origin cannot be followed (a parameter, a helper of another file),
 * the evaluator's answer stands.
 */
#include "ask_internal.h"

#include <stdlib.h>

#include "facts.h"

#define ORIGIN_DEPTH 12

static ol_nid origin(ol_model *m, ol_nid e, int depth);

/* Does e carry a graph, itself or in its elements (a tuple of outputs)? */
static bool graph_at(ol_model *m, ol_nid e)
{
    if (e == OL_NONE)
        return false;
    ol_val v = ol_eval(m, e);
    return ol_val_is_graph(v) || (v.flags & (OL_VF_GRAPH | OL_VF_ELEM_GRAPH)) != 0;
}

/* The first graph-carrying child expression's origin. */
static ol_nid origin_of_children(ol_model *m, ol_nid e, int depth)
{
    const ol_tree *t = m->tree;
    for (ol_nid c = ol_first_named(t, e); c != OL_NONE; c = ol_next_named(t, c)) {
        if (!graph_at(m, c))
            continue;
        ol_nid o = origin(m, c, depth + 1);
        if (o != OL_NONE)
            return o;
    }
    return OL_NONE;
}

static ol_nid origin_of_name(ol_model *m, ol_nid e, int depth)
{
    uint32_t defs[8];
    size_t n = ol_reaching_defs(m, m->node_scope[e], ol_node_sym(m, e), e, defs, 8);
    for (size_t i = 0; i < n && i < 8; i++) {
        const ol_def *d = &m->defs.items[defs[i]];
        if (d->value == OL_NONE)
            continue;
        if (d->kind != OL_DEF_ASSIGN && d->kind != OL_DEF_AUGASSIGN && d->kind != OL_DEF_WALRUS &&
            d->kind != OL_DEF_WITH)
            continue;
        ol_nid v = d->kind == OL_DEF_AUGASSIGN ? ol_field(m->tree, d->value, OL_F_right) : d->value;
        if (!graph_at(m, v))
            continue;
        ol_nid o = origin(m, v, depth + 1);
        if (o != OL_NONE)
            return o;
    }
    return OL_NONE;
}

static ol_nid origin_of_call(ol_model *m, ol_nid e, int depth)
{
    uint32_t ci = ol_call_at(m, e);
    if (ci == OL_NO_INDEX)
        return OL_NONE;
    ol_val v = ol_eval(m, e);
    if (ol_is_forward_call(m, ci) || (v.flags & OL_VF_LOSS))
        return e;
    /* a function of the file: where its returned graph is made */
    uint32_t fi = ol_callee_function(m, e);
    if (fi != OL_NO_INDEX) {
        const ol_function *f = &m->functions.items[fi];
        for (size_t i = 0; i < f->returns.len; i++) {
            ol_nid r = f->returns.items[i];
            if (!graph_at(m, r))
                continue;
            ol_nid o = origin(m, r, depth + 1);
            if (o != OL_NONE)
                return o;
        }
        return OL_NONE;
    }
    /* a method that keeps the graph of what it is called on (`out.mean()`,
     * `loss.view(-1)`), or a torch function of graph-carrying arguments */
    const ol_call *c = &m->calls.items[ci];
    if (c->receiver != OL_NONE && graph_at(m, c->receiver)) {
        ol_nid o = origin(m, ol_unparen(m->tree, c->receiver), depth + 1);
        if (o != OL_NONE)
            return o;
    }
    ol_nid args = ol_field(m->tree, e, OL_F_arguments);
    if (args != OL_NONE) {
        ol_nid o = origin_of_children(m, args, depth);
        if (o != OL_NONE)
            return o;
    }
    /* a helper of another file returning a graph: made at the call */
    return c->receiver == OL_NONE || !graph_at(m, c->receiver) ? e : OL_NONE;
}

static ol_nid origin(ol_model *m, ol_nid e, int depth)
{
    const ol_tree *t = m->tree;
    e = ol_unparen(t, e);
    if (e == OL_NONE || depth > ORIGIN_DEPTH)
        return OL_NONE;
    switch (ol_kind_of(t, e)) {
    case OL_N_call:
        return origin_of_call(m, e, depth);
    case OL_N_identifier:
        return origin_of_name(m, e, depth);
    case OL_N_attribute:
        return origin(m, ol_field(t, e, OL_F_object), depth + 1);
    case OL_N_subscript:
        return origin(m, ol_field(t, e, OL_F_value), depth + 1);
    case OL_N_keyword_argument:
        return origin(m, ol_field(t, e, OL_F_value), depth + 1);
    case OL_N_binary_operator:
    case OL_N_unary_operator:
    case OL_N_conditional_expression:
    case OL_N_tuple:
    case OL_N_list:
    case OL_N_expression_list:
    case OL_N_await:
        return origin_of_children(m, e, depth);
    default:
        return OL_NONE;
    }
}

ol_nid ol_graph_origin(ol_model *m, ol_nid e)
{
    return graph_at(m, e) ? origin(m, e, 0) : OL_NONE;
}


bool ol_graph_made_with_grad(ol_model *m, ol_nid e, ol_reasons *why)
{
    ol_nid o = graph_at(m, e) ? origin(m, e, 0) : OL_NONE;
    if (o == OL_NONE)
        return true; /* made where the file cannot see: the evaluator's answer stands */
    ol_reasons grad = {0};
    if (!ol_grad_on(m, o, why ? &grad : NULL))
        return false;
    if (why) {
        char *text = ol_node_str_short(m->tree, o);
        ol_val v = ol_eval(m, o);
        ol_reasons_add(why, o, NULL, 0, false,
                       ol_door_printf(m, "the graph is made here: `%s` %s with autograd on", text,
                                      (v.flags & OL_VF_LOSS) ? "computes a loss" : "runs a model"));
        free(text);
        ol_reasons_merge(why, &grad);
    }
    return true;
}

bool ol_holds_graph(ol_model *m, ol_nid e, ol_reasons *why)
{
    return e != OL_NONE && ol_val_is_graph(ol_eval(m, e)) && ol_graph_made_with_grad(m, e, why);
}
