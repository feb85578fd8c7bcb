/*
 * hostuse.c - what code does with a value (see hostuse.h).
 */
#include "hostuse.h"

#include <string.h>

#include "eval.h"
#include "moves.h"

/* names followed at most, one inside the other (also into the functions
 * of the file a value is passed to, and back out through their returns) */
#define USE_MAX_DEPTH 10
/* scopes walked for the uses of a name, per question */
#define USE_MAX_WALKS 48
/* calls of the file entered at most, one inside the other */
#define USE_MAX_CALLS 6
/* call sites of a function a returned value is followed to */
#define USE_MAX_CALLERS 8

typedef struct walk {
    ol_model *m;
    ol_value_use use;
    int walks;
    int imports_pyplot; /* -1 not yet known */
    long *budget;
    ol_nid calls[USE_MAX_CALLS]; /* the calls entered, innermost last: a return goes back to it */
    int ncalls;
    bool from_param; /* a parameter's value: a return goes back to no caller (the one that passed it is unknown) */
} walk;

static bool in_list(const ol_tree *t, ol_nid name, const char *const *list)
{
    for (const char *const *w = list; *w; w++)
        if (ol_text_is(t, name, *w))
            return true;
    return false;
}

/* Tensor methods whose result stays where the tensor is. */
static const char *const KEEPING[] = {
    "mean", "sum", "max", "min", "std", "var", "prod", "cumsum", "abs", "exp", "log", "sqrt", "squeeze",
    "unsqueeze", "view", "reshape", "flatten", "transpose", "permute", "t", "clone", "detach", "contiguous",
    "float", "double", "long", "int", "half", "argmax", "argmin", "type", "get", "items", "values", NULL};
/* Methods of a tensor bound for a device: the value goes on, moved. */
static const char *const MOVES[] = {"to", "cuda", "cpu", NULL};
/* Methods of a model. */
static const char *const MODEL[] = {"eval", "train", "parameters", "named_parameters", "state_dict",
                                    "load_state_dict", "forward", "modules", "children", "apply",
                                    "requires_grad_", "zero_grad", "buffers", NULL};
/* numpy functions that turn their argument into an ndarray (raising on a
 * CUDA tensor); torch.from_numpy takes an ndarray only. */
static const char *const TO_NUMPY[] = {
    "numpy.array", "numpy.asarray", "numpy.asanyarray", "numpy.stack", "numpy.concatenate", "numpy.vstack",
    "numpy.hstack", "numpy.dstack", "numpy.column_stack", "numpy.save", "numpy.savez", "numpy.savez_compressed",
    "numpy.savetxt", "torch.from_numpy", NULL};
/* Plotting calls of matplotlib, which read their data with np.asarray. */
static const char *const PLOTS[] = {"plot", "scatter", "imshow", "hist", "hist2d", "bar", "barh",
                                    "fill_between", "errorbar", "semilogy", "semilogx", "loglog", "contour",
                                    "contourf", "pcolormesh", "boxplot", "violinplot", "matshow", "quiver",
                                    NULL};
/* torch functions whose result is on the device of their tensors. */
static const char *const TORCH_KEEPING[] = {"torch.stack", "torch.cat", "torch.concat", "torch.vstack",
                                            "torch.hstack", NULL};
/* Builtins whose result holds the elements of their argument. */
static const char *const KEEP_ELEMENTS[] = {"builtins.sorted", "builtins.list", "builtins.tuple",
                                            "builtins.reversed", "builtins.enumerate", "builtins.zip", NULL};

static bool imports_matplotlib(walk *w)
{
    if (w->imports_pyplot < 0) {
        w->imports_pyplot = 0;
        for (size_t i = 0; i < w->m->imports.len && !w->imports_pyplot; i++)
            w->imports_pyplot = strncmp(ol_sym_str(w->m, w->m->imports.items[i].qual), "matplotlib", 10) == 0;
    }
    return w->imports_pyplot;
}

static bool in_names(const char *s, const char *const *list)
{
    /* the first byte settles most names without a call */
    for (const char *const *p = list; s && *p; p++)
        if (**p == *s && strcmp(s, *p) == 0)
            return true;
    return false;
}

/* Does the qualified name end in `.name` for one of PLOTS? */
static bool plot_name(const char *q)
{
    const char *dot = strrchr(q, '.');
    return dot && in_names(dot + 1, PLOTS);
}

static void follow_expr(walk *w, ol_nid n, int depth, int elem);
static void follow_def(walk *w, uint32_t def, int depth, int elem);

static bool has_dict_splat(const ol_tree *t, ol_nid args)
{
    for (ol_nid a = ol_first_named(t, args); a != OL_NONE; a = ol_next_named(t, a))
        if (ol_kind_of(t, a) == OL_N_dictionary_splat)
            return true;
    return false;
}

/* The def an identifier bound by a statement makes, or OL_NO_INDEX. */
static uint32_t def_bound_at(ol_model *m, ol_nid target)
{
    uint32_t head = ol_scope_defs(m, m->node_scope[target], ol_node_sym(m, target));
    if (head == OL_NO_INDEX)
        return OL_NO_INDEX;
    const uint32_t *chain;
    size_t n = ol_def_chain(m, head, &chain);
    for (size_t i = 0; i < n; i++)
        if (m->defs.items[chain[i]].target == target)
            return chain[i];
    return OL_NO_INDEX;
}

/* elem, in what follows: the position of the value in the tuple or list
 * being followed (`return train, val`), so that unpacking it (`a, b = ...`)
 * follows its own name only; -1 for the whole value. */
static void follow_def(walk *w, uint32_t def, int depth, int elem)
{
    ol_model *m = w->m;
    const ol_tree *t = m->tree;
    if (def >= m->defs.len || depth > USE_MAX_DEPTH || w->walks >= USE_MAX_WALKS)
        return;
    w->walks++;
    const ol_def *d = &m->defs.items[def];
    ol_nid root = m->scopes.items[d->scope].node;
    ol_nid end = m->subtree_end[root];
    if (end - root > 50000 || *w->budget < (long)(end - root))
        return;
    *w->budget -= (long)(end - root);
    ol_nid after = d->stmt != OL_NONE ? m->subtree_end[d->stmt] : root;
    if (d->kind == OL_DEF_PARAM)
        after = root;
    for (ol_nid u = root; u < end && !(w->use.host && w->use.device); u++) {
        if (ol_kind_of(t, u) != OL_N_identifier || ol_node_at(t, u)->field == OL_F_attribute ||
            ol_node_sym(m, u) != d->name || u == d->target)
            continue;
        /* a use in the scope, or in a comprehension or lambda inside it */
        uint32_t s = m->node_scope[u];
        while (s != d->scope && s != OL_NO_INDEX && m->scopes.items[s].kind != OL_SCOPE_FUNCTION &&
               m->scopes.items[s].kind != OL_SCOPE_CLASS)
            s = m->scopes.items[s].parent;
        if (s != d->scope || (u < after && d->kind != OL_DEF_FOR))
            continue;
        uint32_t defs[8];
        size_t nd = ol_reaching_defs(m, m->node_scope[u], d->name, u, defs, 8);
        bool reached = false;
        for (size_t k = 0; k < nd && !reached; k++)
            reached = defs[k] == def;
        if (reached)
            follow_expr(w, u, depth, elem);
    }
}

/* Follows the names a binding target binds (`a`, `a, (b, c)`): with elem
 * set, only the name at that position. */
static void follow_targets(walk *w, ol_nid target, int depth, int elem)
{
    const ol_tree *t = w->m->tree;
    ol_kind k = ol_kind_of(t, target);
    if (k == OL_N_identifier) {
        follow_def(w, def_bound_at(w->m, target), depth + 1, elem);
        return;
    }
    if (k == OL_N_parenthesized_expression) {
        follow_targets(w, ol_first_named(t, target), depth, elem);
        return;
    }
    if (k != OL_N_pattern_list && k != OL_N_tuple_pattern && k != OL_N_list_pattern && k != OL_N_tuple &&
        k != OL_N_list)
        return;
    bool starred = false;
    for (ol_nid c = ol_first_named(t, target); c != OL_NONE; c = ol_next_named(t, c))
        starred |= ol_kind_of(t, c) == OL_N_list_splat_pattern || ol_kind_of(t, c) == OL_N_list_splat;
    int i = 0;
    for (ol_nid c = ol_first_named(t, target); c != OL_NONE; c = ol_next_named(t, c), i++)
        if (elem < 0 || starred || i == elem)
            follow_targets(w, c, depth, -1);
}

/* n is an argument (a direct child of the argument list, or a keyword
 * argument's value) of call: what does the callee do with it? */
static void passed(walk *w, ol_nid call, ol_nid arg, ol_nid value, int depth, int elem)
{
    ol_model *m = w->m;
    const ol_tree *t = m->tree;
    uint32_t ci = ol_call_at(m, call);
    if (ci == OL_NO_INDEX)
        return;
    const ol_call *c = &m->calls.items[ci];
    const char *q = ol_qualname(m, c->callee);
    bool keyword = ol_kind_of(t, arg) == OL_N_keyword_argument;
    int position = -1;
    if (!keyword) {
        position = 0;
        ol_nid args = ol_parent(t, arg);
        for (ol_nid a = ol_first_named(t, args); a != OL_NONE && a != arg; a = ol_next_named(t, a))
            position++;
    }
    if (c->name && strcmp(ol_sym_str(m, c->name), "load_state_dict") == 0) {
        w->use.device = w->use.model = true;
        return;
    }
    bool guess;
    if (ol_builds_dataset(m, call, &guess)) {
        if (!w->use.dataset)
            w->use.dataset_call = call;
        w->use.dataset = true;
        return;
    }
    if (!keyword && in_names(q, TO_NUMPY)) {
        bool saves = q && strncmp(q, "numpy.save", 10) == 0;
        if (!saves || position >= 1)
            w->use.host = true;
        return;
    }
    if (!keyword && position == 0 && q && (strcmp(q, "json.dump") == 0 || strcmp(q, "json.dumps") == 0)) {
        /* unless an encoder turns anything into JSON */
        if (ol_call_arg(m, call, -1, "default") == OL_NONE && ol_call_arg(m, call, -1, "cls") == OL_NONE &&
            !has_dict_splat(t, ol_parent(t, arg)))
            w->use.host = true;
        return;
    }
    bool plots = q ? strncmp(q, "matplotlib.", 11) == 0 && plot_name(q)
                   : c->receiver != OL_NONE && c->name && in_names(ol_sym_str(m, c->name), PLOTS) &&
                         imports_matplotlib(w); /* `axs[0].plot(x)` */
    if (!keyword && plots) {
        w->use.host = true;
        return;
    }
    if (!keyword && ((position == 0 && in_names(q, KEEP_ELEMENTS)) || in_names(q, TORCH_KEEPING))) {
        follow_expr(w, call, depth, -1);
        return;
    }
    /* the callee's summary, from the run (the links): this file's own
     * functions are summarized too, so the same answer holds for both */
    bool cross_file = false, host = false;
    uint32_t param = OL_NO_INDEX;
    if (!m->links || !m->links->param_use || !m->links->param_use(m->links, m, ci, value, &param, &host, &cross_file))
        return;
    if (host) {
        w->use.host = true;
        return;
    }
    /* a function of this file: follow the parameter in it, and what it
     * returns back out of this call */
    const uint32_t *fns;
    if (cross_file || ol_call_functions(m, ci, &fns) != 1 || w->ncalls >= USE_MAX_CALLS)
        return;
    const ol_function *f = &m->functions.items[fns[0]];
    if (param >= f->params.len)
        return;
    w->calls[w->ncalls++] = call;
    follow_def(w, f->params.items[param], depth + 1, elem);
    w->ncalls--;
}

/* n is returned by its function: on at the call that entered it, or at
 * each call of the function in the file. */
static void returned(walk *w, ol_nid n, int depth, int elem)
{
    ol_model *m = w->m;
    uint32_t fi = ol_function_of(m, n);
    if (fi == OL_NO_INDEX || depth >= USE_MAX_DEPTH)
        return;
    if (w->ncalls > 0) {
        ol_nid call = w->calls[--w->ncalls];
        follow_expr(w, call, depth, elem);
        w->calls[w->ncalls++] = call;
        return;
    }
    if (w->from_param)
        return;
    const ol_function *f = &m->functions.items[fi];
    for (size_t i = 0; i < f->callsites.len && i < USE_MAX_CALLERS; i++)
        if (f->callsites.items[i] < m->calls.len)
            follow_expr(w, m->calls.items[f->callsites.items[i]].node, depth + 1, elem);
}

static void follow_expr(walk *w, ol_nid n, int depth, int elem)
{
    ol_model *m = w->m;
    const ol_tree *t = m->tree;
    for (int steps = 0; steps < 64; steps++) {
        ol_nid p = ol_parent(t, n);
        if (p == OL_NONE)
            return;
        switch (ol_kind_of(t, p)) {
        case OL_N_parenthesized_expression:
            n = p;
            continue;
        case OL_N_binary_operator:
        case OL_N_unary_operator:
            n = p;
            elem = -1;
            continue;
        case OL_N_subscript:
            if (ol_field(t, p, OL_F_value) != n)
                return;
            n = p;
            elem = -1;
            continue;
        case OL_N_attribute: {
            if (ol_field(t, p, OL_F_object) != n)
                return;
            ol_nid attr = ol_field(t, p, OL_F_attribute);
            ol_nid gp = ol_parent(t, p);
            if (gp == OL_NONE || ol_kind_of(t, gp) != OL_N_call || ol_field(t, gp, OL_F_function) != p) {
                n = p; /* an attribute read: `data["params"].recThrs` */
                elem = -1;
                continue;
            }
            if (ol_text_is(t, attr, "numpy") || ol_text_is(t, attr, "pin_memory")) {
                w->use.host = true;
                return;
            }
            if (in_list(t, attr, MODEL)) {
                w->use.device = w->use.model = true;
                return;
            }
            if (in_list(t, attr, MOVES)) {
                /* moved: what it is used as further on still counts (a Dataset
                 * built from it), what raises on CUDA no longer tells */
                w->use.device = true;
                n = gp;
                elem = -1;
                continue;
            }
            if (!in_list(t, attr, KEEPING))
                return;
            n = gp;
            elem = -1;
            continue;
        }
        case OL_N_list_comprehension:
        case OL_N_set_comprehension:
        case OL_N_generator_expression:
            /* `[x[i]["ids"] for i in ix]`: the elements are the value's */
            if (ol_field(t, p, OL_F_body) != n)
                return;
            n = p;
            elem = -1;
            continue;
        case OL_N_list:
        case OL_N_tuple:
        case OL_N_expression_list: {
            /* `np.stack([a, b])`, `torch.cat((x, pad))`, `return train, val` */
            int i = 0;
            bool starred = false;
            for (ol_nid c = ol_first_named(t, p); c != OL_NONE; c = ol_next_named(t, c)) {
                starred |= ol_kind_of(t, c) == OL_N_list_splat;
                if (c < n)
                    i++;
            }
            elem = elem < 0 && !starred ? i : -1;
            n = p;
            continue;
        }
        case OL_N_call:
            if (ol_field(t, p, OL_F_function) == n)
                w->use.device = w->use.model = true; /* called: a pickled model */
            return;
        case OL_N_list_splat:
        case OL_N_dictionary_splat:
            /* `TensorDataset(*x)`: its elements are the call's arguments */
            n = p;
            elem = -1;
            continue;
        case OL_N_keyword_argument: {
            ol_nid args = ol_parent(t, p);
            if (ol_field(t, p, OL_F_value) == n && args != OL_NONE && ol_kind_of(t, args) == OL_N_argument_list)
                passed(w, ol_parent(t, args), p, n, depth, elem);
            return;
        }
        case OL_N_argument_list:
            if (ol_kind_of(t, ol_parent(t, p)) == OL_N_call)
                passed(w, ol_parent(t, p), n, n, depth, elem);
            return;
        case OL_N_for_in_clause: {
            /* `[p for p in x if ...]`: the comprehension keeps x's elements */
            if (ol_field(t, p, OL_F_right) != n)
                return;
            follow_targets(w, ol_field(t, p, OL_F_left), depth, -1);
            ol_nid comp = ol_parent(t, p);
            if (comp == OL_NONE || ol_kind_of(t, comp) == OL_N_dictionary_comprehension)
                return;
            n = comp;
            elem = -1;
            continue;
        }
        case OL_N_for_statement:
            if (ol_field(t, p, OL_F_right) == n)
                follow_targets(w, ol_field(t, p, OL_F_left), depth, -1);
            return;
        case OL_N_assignment:
            if (ol_field(t, p, OL_F_right) == n)
                follow_targets(w, ol_field(t, p, OL_F_left), depth, elem);
            return;
        case OL_N_return_statement:
            returned(w, p, depth, elem);
            return;
        default:
            return;
        }
    }
}

bool ol_may_use_as_host(ol_model *m, uint32_t ci)
{
    const ol_call *c = &m->calls.items[ci];
    const char *q = ol_qualname(m, c->callee);
    if (q)
        return in_names(q, TO_NUMPY) || strcmp(q, "json.dump") == 0 || strcmp(q, "json.dumps") == 0 ||
               (strncmp(q, "matplotlib.", 11) == 0 && plot_name(q));
    if (c->receiver == OL_NONE || !c->name)
        return false;
    const char *name = ol_sym_str(m, c->name);
    if (strcmp(name, "numpy") == 0 || strcmp(name, "pin_memory") == 0)
        return true;
    long none = 0;
    walk w = {m, {false, false, false, false, OL_NONE}, 0, -1, &none, {0}, 0, false};
    return in_names(name, PLOTS) && imports_matplotlib(&w);
}

ol_value_use ol_value_use_of(ol_model *m, ol_nid e, long *budget)
{
    walk w = {m, {false, false, false, false, OL_NONE}, 0, -1, budget, {0}, 0, false};
    follow_expr(&w, e, 0, -1);
    return w.use;
}

ol_value_use ol_def_use_of(ol_model *m, uint32_t def, long *budget)
{
    walk w = {m, {false, false, false, false, OL_NONE}, 0, -1, budget, {0}, 0, def < m->defs.len && m->defs.items[def].kind == OL_DEF_PARAM};
    follow_def(&w, def, 0, -1);
    return w.use;
}
