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
 * the evaluator's answer stands. Where the evaluator joins branches it
 * cannot tell apart, the branches are read one by one: a helper that
 * detaches what it returns in every branch that can hold a tensor
 * (`[o.detach() if torch.is_tensor(o) else o for o in outs]`) returns no
 * graph.
 */
#include "ask_internal.h"

#include <stdlib.h>
#include <string.h>

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


/* Is cond a test that x is a tensor (`isinstance(x, torch.Tensor)`,
 * `torch.is_tensor(x)`)? Sets *x. */
static bool tensor_test(ol_model *m, ol_nid cond, ol_nid *x)
{
    const ol_tree *t = m->tree;
    static const char *const is_tensor[] = {"torch.is_tensor", NULL};
    cond = ol_unparen(t, cond);
    if (ol_kind_of(t, cond) != OL_N_call)
        return false;
    ol_nid arg = ol_call_arg(m, cond, 0, NULL);
    if (arg == OL_NONE)
        return false;
    if (ol_call_is(m, cond, is_tensor)) {
        *x = arg;
        return true;
    }
    if (!ol_text_is(t, ol_field(t, cond, OL_F_function), "isinstance"))
        return false;
    ol_nid types = ol_unparen(t, ol_call_arg(m, cond, 1, NULL));
    if (types == OL_NONE)
        return false;
    /* `torch.Tensor`, or a tuple of types that holds it */
    ol_nid one = types;
    if (ol_kind_of(t, types) == OL_N_tuple)
        one = ol_first_named(t, types);
    for (; one != OL_NONE; one = ol_kind_of(t, types) == OL_N_tuple ? ol_next_named(t, one) : OL_NONE) {
        const char *q = ol_qualname(m, one);
        if (q && (strcmp(q, "torch.Tensor") == 0 || strcmp(q, "torch.nn.Parameter") == 0)) {
            *x = arg;
            return true;
        }
    }
    return false;
}

/* Is e known to carry no graph though the evaluator, joining what it
 * cannot tell apart, says it may: each return of a helper of the file, the
 * body of a comprehension, each element of a literal, and each branch of a
 * conditional, where the branch a tensor test keeps for non-tensors
 * (`o.detach() if torch.is_tensor(o) else o`) holds no tensor at all. */
static bool graph_free(ol_model *m, ol_nid e, int depth)
{
    const ol_tree *t = m->tree;
    e = ol_unparen(t, e);
    if (e == OL_NONE || depth > 6)
        return false;
    if (!graph_at(m, e))
        return true;
    switch (ol_kind_of(t, e)) {
    case OL_N_call: {
        uint32_t fi = ol_callee_function(m, e);
        if (fi == OL_NO_INDEX)
            return false;
        const ol_function *f = &m->functions.items[fi];
        if (f->returns.len == 0)
            return false;
        for (size_t i = 0; i < f->returns.len; i++)
            if (!graph_free(m, f->returns.items[i], depth + 1))
                return false;
        return true;
    }
    case OL_N_list_comprehension:
    case OL_N_set_comprehension:
    case OL_N_generator_expression:
        return graph_free(m, ol_field(t, e, OL_F_body), depth + 1);
    case OL_N_list:
    case OL_N_tuple:
        for (ol_nid c = ol_first_named(t, e); c != OL_NONE; c = ol_next_named(t, c))
            if (!graph_free(m, c, depth + 1))
                return false;
        return true;
    case OL_N_conditional_expression: {
        ol_nid yes = ol_named_child(t, e, 0), cond = ol_named_child(t, e, 1), no = ol_named_child(t, e, 2);
        ol_nid x = OL_NONE;
        bool non_tensor = tensor_test(m, cond, &x) && no != OL_NONE && ol_same_text(t, ol_unparen(t, no), x);
        return graph_free(m, yes, depth + 1) && (non_tensor || graph_free(m, no, depth + 1));
    }
    default:
        return false;
    }
}

bool ol_graph_made_with_grad(ol_model *m, ol_nid e, ol_reasons *why)
{
    if (graph_at(m, e) && graph_free(m, e, 0))
        return false; /* the evaluator's join: no branch that can run holds a graph */
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

static bool holds_graph(ol_model *m, ol_nid e, ol_reasons *why)
{
    return e != OL_NONE && ol_val_is_graph(ol_eval(m, e)) && ol_graph_made_with_grad(m, e, why);
}

bool ol_holds_graph(ol_model *m, ol_nid e, ol_reasons *why)
{
    bool answer = holds_graph(m, e, why);
    ol_door_audit(m, "graph", e, (int)(answer));
    return answer;
}

/* ---- the program shows there is no graph --------------------------------------------- */

/* Methods that keep a tensor's requires_grad: what comes out of them still
 * raises on `.numpy()` when what went in required grad. */
static const char *const KEEPS_GRAD[] = {"cpu", "cuda", "to", "float", "double", "half", "bfloat16", "type",
                                         "squeeze", "unsqueeze", "view", "reshape", "flatten", "contiguous",
                                         "permute", "transpose", "clone", "sum", "mean", NULL};

/* The `.numpy()` call a chain of such methods on u ends in, or OL_NONE. */
static ol_nid numpy_of_chain(ol_model *m, ol_nid u)
{
    const ol_tree *t = m->tree;
    ol_nid x = u;
    for (int depth = 0; depth < 8; depth++) {
        ol_nid p = ol_parent(t, x);
        if (ol_kind_of(t, p) != OL_N_attribute || ol_field(t, p, OL_F_object) != x)
            return OL_NONE;
        ol_nid name = ol_field(t, p, OL_F_attribute), call = ol_parent(t, p);
        if (name != OL_NONE && ol_text_is(t, name, "T")) {
            x = p;
            continue;
        }
        if (ol_kind_of(t, call) != OL_N_call || ol_field(t, call, OL_F_function) != p || name == OL_NONE)
            return OL_NONE;
        if (ol_text_is(t, name, "numpy")) {
            /* `.numpy(force=True)` detaches by itself */
            ol_nid args = ol_field(t, call, OL_F_arguments);
            return args != OL_NONE && ol_first_named(t, args) != OL_NONE ? OL_NONE : call;
        }
        bool keeps = false;
        for (const char *const *k = KEEPS_GRAD; *k && !keeps; k++)
            keeps = ol_text_is(t, name, *k);
        if (!keeps)
            return OL_NONE;
        x = call;
    }
    return OL_NONE;
}

/* Does the binding made at stmt reach use u, directly or through in-place
 * updates of the same name (`mu /= n` keeps what `mu += x` put in)? */
static bool reached_through_updates(ol_model *m, uint32_t scope, ol_sym sym, ol_nid u, ol_nid stmt)
{
    ol_nid at[8] = {u};
    size_t pending = 1, asked = 0;
    while (pending > 0 && asked < 8) {
        ol_nid from = at[--pending];
        asked++;
        uint32_t defs[16];
        size_t k = ol_reaching_defs(m, scope, sym, from, defs, 16);
        for (size_t d = 0; d < k && d < 16; d++) {
            const ol_def *def = &m->defs.items[defs[d]];
            if (def->stmt == stmt || def->stmt == ol_statement_of(m->tree, stmt))
                return true;
            if (def->kind == OL_DEF_AUGASSIGN && def->target != OL_NONE && def->target != from && pending < 8)
                at[pending++] = def->target;
        }
    }
    return false;
}

ol_nid ol_numpy_shows_no_graph(ol_model *m, ol_nid target, ol_nid stmt, ol_reasons *why)
{
    const ol_tree *t = m->tree;
    target = ol_unparen(t, target);
    if (target == OL_NONE || ol_kind_of(t, target) != OL_N_identifier || stmt == OL_NONE)
        return OL_NONE;
    uint32_t fn = ol_function_of(m, stmt);
    ol_nid body = fn != OL_NO_INDEX ? m->functions.items[fn].node : 0;
    uint32_t scope = m->node_scope[target];
    ol_sym sym = ol_node_sym(m, target);
    size_t n;
    const ol_nid *uses = ol_name_uses(m, target, m->subtree_end[stmt], m->subtree_end[body], &n, NULL);
    for (size_t i = 0; i < n; i++) {
        ol_nid u = uses[i];
        if (m->node_scope[u] != scope || ol_function_of(m, u) != fn)
            continue;
        ol_nid call = numpy_of_chain(m, u);
        if (call == OL_NONE)
            continue;
        if (!reached_through_updates(m, scope, sym, u, stmt))
            continue;
        if (why) {
            char *text = ol_node_str_short(t, call);
            ol_reasons_add(why, call, NULL, 0, false,
                           ol_door_printf(m, "`%s` would raise if it required grad: it carries no graph", text));
            free(text);
        }
        return call;
    }
    return OL_NONE;
}
