/*
 * steps.c - the training-step calls the evaluator itself must recognise:
 * which call runs a backward pass and on what (`loss.backward()`,
 * `scaler.scale(loss).backward()`, `accelerator.backward(loss)`), which runs
 * a model's forward, which modules are frozen before a point, which calls'
 * inputs carry a graph, and which functions update a metric once per batch.
 * A value that reaches `.backward()` carries a graph, so these answers sit in
 * the evaluator's layer, below the per-file facts (facts.c) that build on
 * them (steps.h; facts.h includes it).
 */
#include "steps.h"

#include <stdlib.h>
#include <string.h>

ol_nid ol_backward_operand(ol_model *m, uint32_t ci)
{
    const ol_tree *t = m->tree;
    const ol_call *c = &m->calls.items[ci];
    if (c->name == m->names.backward && c->receiver != OL_NONE) {
        ol_nid recv = ol_unparen(t, c->receiver);
        if (ol_kind_of(t, recv) == OL_N_call) {
            uint32_t inner = m->node_call[recv];
            if (inner != OL_NO_INDEX && m->calls.items[inner].name == m->names.scale)
                return ol_call_arg(m, recv, 0, NULL);
        }
        /* accelerator.backward(loss), engine.backward(loss): the argument */
        ol_nid arg = ol_call_arg(m, c->node, 0, NULL);
        if (arg != OL_NONE && ol_kind_of(t, recv) != OL_N_call) {
            ol_val rv = ol_eval(m, recv);
            if (rv.kind == OL_V_TENSOR)
                return recv;
            if (rv.kind == OL_V_OBJECT && rv.ref && strcmp(ol_sym_str(m, rv.ref), "accelerate.Accelerator") == 0)
                return arg;
            if (rv.kind == OL_V_MODULE)
                return arg; /* a DeepSpeed engine: engine.backward(loss) */
            ol_nid name = ol_kind_of(t, recv) == OL_N_attribute ? ol_field(t, recv, OL_F_attribute) : recv;
            static const char *const frameworks[] = {"accelerator", "fabric", "engine", "trainer", "ds", NULL};
            uint32_t len;
            const char *s = name != OL_NONE ? ol_text(t, name, &len) : "";
            if (name != OL_NONE && ol_kind_of(t, name) == OL_N_identifier && ol_name_looks_like(s, len, frameworks))
                return arg;
            return ol_val_is_graph(ol_eval(m, arg)) ? arg : OL_NONE;
        }
        return recv;
    }
    if (c->name == m->names.manual_backward)
        return ol_call_arg(m, c->node, 0, NULL);
    if (c->name == m->names.backward) {
        /* torch.autograd.backward(loss) */
        const char *q = ol_qualname(m, c->callee);
        if (q && strcmp(q, "torch.autograd.backward") == 0)
            return ol_call_arg(m, c->node, 0, "tensors");
    }
    return OL_NONE;
}

bool ol_is_backward_call(ol_model *m, uint32_t ci)
{
    return ol_backward_operand(m, ci) != OL_NONE;
}

bool ol_is_forward_call(ol_model *m, uint32_t ci)
{
    const ol_tree *t = m->tree;
    const ol_call *c = &m->calls.items[ci];
    ol_nid callee = ol_unparen(t, c->callee);
    if (c->name == m->names.forward && c->receiver != OL_NONE) {
        ol_val rv = ol_eval(m, c->receiver);
        return rv.kind == OL_V_MODULE && !(rv.flags & OL_VF_LOSSFN);
    }
    ol_kind k = ol_kind_of(t, callee);
    if (k == OL_N_call) {
        /* model.eval()(x), model.to(device)(x): the call returns the module */
        uint32_t inner = ol_call_at(m, callee);
        if (inner == OL_NO_INDEX || m->calls.items[inner].receiver == OL_NONE)
            return false;
    } else if (k != OL_N_identifier && k != OL_N_attribute && k != OL_N_subscript) {
        return false;
    }
    ol_val v = ol_eval(m, callee);
    return v.kind == OL_V_MODULE && !(v.flags & OL_VF_LOSSFN);
}

/* A class deriving (in the file, or from the import) from ignite's Metric. */
static bool class_is_ignite_metric(ol_model *m, uint32_t ci, int depth)
{
    if (ci >= m->classes.len || depth > 8)
        return false;
    for (size_t i = 0; i < m->classes.items[ci].bases.len; i++) {
        ol_val v = ol_eval(m, m->classes.items[ci].bases.items[i]);
        if (v.kind == OL_V_CLASS && v.ref != ci && class_is_ignite_metric(m, v.ref, depth + 1))
            return true;
        if (v.kind != OL_V_EXTERN)
            continue;
        const char *q = ol_sym_str(m, v.ref);
        if (q && ol_str_has_prefix(q, "ignite.metrics.") && ol_str_has_suffix(q, "Metric"))
            return true;
    }
    return false;
}

bool ol_function_is_metric_update(ol_model *m, uint32_t fi)
{
    if (fi >= m->functions.len)
        return false;
    const ol_function *f = &m->functions.items[fi];
    const char *name = ol_sym_str(m, f->name);
    return f->is_method && f->cls != OL_NO_INDEX && name && strcmp(name, "update") == 0 &&
           class_is_ignite_metric(m, f->cls, 0);
}

/* The method of a base class (of this file) that fi overrides: `_update` of
 * an abstract base whose update() calls `self._update(...)`. */
static uint32_t overridden(ol_model *m, uint32_t fi)
{
    const ol_function *f = &m->functions.items[fi];
    uint32_t ci = f->cls;
    for (size_t i = 0; ci < m->classes.len && i < m->classes.items[ci].bases.len; i++) {
        ol_val v = ol_eval(m, m->classes.items[ci].bases.items[i]);
        if (v.kind != OL_V_CLASS || v.ref == ci || v.ref >= m->classes.len)
            continue;
        const ol_class *b = &m->classes.items[v.ref];
        for (size_t k = 0; k < b->methods.len; k++)
            if (m->functions.items[b->methods.items[k]].name == f->name)
                return b->methods.items[k];
    }
    return OL_NO_INDEX;
}

static bool per_batch_metric(ol_model *m, uint32_t fi, int depth)
{
    if (ol_function_is_metric_update(m, fi))
        return true;
    const ol_function *f = &m->functions.items[fi];
    if (depth >= 3 || !f->is_method || f->cls == OL_NO_INDEX || !class_is_ignite_metric(m, f->cls, 0))
        return false;
    if (f->callsites.len == 0) {
        /* called through the base class's declaration of it */
        uint32_t base = overridden(m, fi);
        return base != OL_NO_INDEX && base != fi && per_batch_metric(m, base, depth + 1);
    }
    for (size_t i = 0; i < f->callsites.len; i++) {
        uint32_t caller = ol_function_of(m, m->calls.items[f->callsites.items[i]].node);
        if (caller == OL_NO_INDEX || caller == fi || !per_batch_metric(m, caller, depth + 1))
            return false;
    }
    return true;
}

bool ol_function_per_batch_metric(ol_model *m, uint32_t fi)
{
    return fi < m->functions.len && per_batch_metric(m, fi, 0);
}

/* The methods of a module that hand the module itself back. */
static const char *const SAME_MODULE[] = {"eval", "train", "to", "cuda", "cpu", "float", "half", "double",
                                          "requires_grad_", NULL};

static bool hands_module_back(const ol_tree *t, ol_nid attribute)
{
    for (const char *const *w = SAME_MODULE; *w; w++)
        if (ol_text_is(t, ol_field(t, attribute, OL_F_attribute), *w))
            return true;
    return false;
}

/* e without the calls that hand the module itself back: `model.eval()`,
 * `model.to(device)`, `model.requires_grad_(False)` are `model`. */
static ol_nid module_itself(const ol_tree *t, ol_nid e)
{
    for (e = ol_unparen(t, e); e != OL_NONE && ol_kind_of(t, e) == OL_N_call; e = ol_unparen(t, e)) {
        ol_nid f = ol_unparen(t, ol_field(t, e, OL_F_function));
        if (f == OL_NONE || ol_kind_of(t, f) != OL_N_attribute)
            return e;
        if (!hands_module_back(t, f))
            return e;
        e = ol_field(t, f, OL_F_object);
    }
    return e;
}

/* The name a chain of calls that hand the module back binds, when the call
 * s is one of its links: `G = Net().train().requires_grad_(False).to(dev)`
 * freezes `G`. OL_NONE otherwise. */
static ol_nid bound_by_chain(const ol_tree *t, ol_nid s)
{
    ol_nid cur = s;
    for (;;) {
        ol_nid p = ol_parent(t, cur);
        while (p != OL_NONE && ol_kind_of(t, p) == OL_N_parenthesized_expression)
            cur = p, p = ol_parent(t, p);
        if (p == OL_NONE || ol_kind_of(t, p) != OL_N_attribute || ol_field(t, p, OL_F_object) != cur)
            break;
        ol_nid call = ol_parent(t, p);
        if (call == OL_NONE || ol_kind_of(t, call) != OL_N_call || ol_field(t, call, OL_F_function) != p)
            break;
        if (!hands_module_back(t, p))
            break;
        cur = call;
    }
    ol_nid assign = ol_parent(t, cur);
    if (assign == OL_NONE || ol_kind_of(t, assign) != OL_N_assignment || ol_field(t, assign, OL_F_right) != cur)
        return OL_NONE;
    return ol_unparen(t, ol_field(t, assign, OL_F_left));
}

/* Is the assignment a part of the model put in place (`model.fc = nn.Linear(...)`,
 * `model.classifier[6] = ...`): a new layer, trainable? */
static bool replaces_part(const ol_tree *t, ol_nid assign, ol_nid model)
{
    ol_nid left = ol_unparen(t, ol_field(t, assign, OL_F_left));
    for (ol_nid e = left; e != OL_NONE;) {
        ol_kind k = ol_kind_of(t, e);
        if (k == OL_N_attribute)
            e = ol_unparen(t, ol_field(t, e, OL_F_object));
        else if (k == OL_N_subscript)
            e = ol_unparen(t, ol_field(t, e, OL_F_value));
        else
            break;
        if (ol_same_text(t, e, model))
            return true;
    }
    return false;
}

const ol_nid *ol_grad_switches(ol_model *m, size_t *count)
{
    if (!m->grad_switches_built) {
        m->grad_switches_built = true;
        const ol_tree *t = m->tree;
        for (size_t i = 0; i < m->calls.len; i++) {
            const ol_call *c = &m->calls.items[i];
            if (c->receiver != OL_NONE && c->name && strcmp(ol_sym_str(m, c->name), "requires_grad_") == 0)
                ol_vec_push(&m->grad_switches, c->node);
        }
        for (size_t i = 0; i < m->assigns.len; i++) {
            ol_nid a = m->assigns.items[i];
            ol_nid left = ol_unparen(t, ol_field(t, a, OL_F_left));
            if (ol_kind_of(t, left) == OL_N_attribute &&
                ol_text_is(t, ol_field(t, left, OL_F_attribute), "requires_grad"))
                ol_vec_push(&m->grad_switches, a);
        }
        ol_sort(m->grad_switches.items, m->grad_switches.len, sizeof(ol_nid), ol_cmp_u32);
    }
    *count = m->grad_switches.len;
    return m->grad_switches.items;
}

static bool frozen_before(ol_model *m, ol_nid model, ol_nid at, int depth);

/* `g_ema = copy.deepcopy(g).eval()` with g frozen before the copy: the copy
 * is frozen too (its parameters are copies, requires_grad and all). */
static bool frozen_copy(ol_model *m, ol_nid model, ol_nid at, int depth)
{
    const ol_tree *t = m->tree;
    if (depth > 2 || ol_kind_of(t, model) != OL_N_identifier)
        return false;
    uint32_t defs[2];
    size_t n = ol_reaching_defs(m, m->node_scope[model], ol_node_sym(m, model), at, defs, 2);
    if (n != 1)
        return false;
    const ol_def *d = &m->defs.items[defs[0]];
    if (d->kind != OL_DEF_ASSIGN || d->path_len != 0 || d->value == OL_NONE)
        return false;
    ol_nid copy = module_itself(t, d->value);
    if (ol_kind_of(t, copy) != OL_N_call)
        return false;
    const char *q = ol_qualname(m, ol_field(t, copy, OL_F_function));
    ol_nid args = ol_field(t, copy, OL_F_arguments);
    ol_nid orig = args != OL_NONE ? ol_unparen(t, ol_first_named(t, args)) : OL_NONE;
    return q && strcmp(q, "copy.deepcopy") == 0 && orig != OL_NONE && ol_kind_of(t, orig) == OL_N_identifier &&
           frozen_before(m, orig, copy, depth + 1);
}

bool ol_frozen_before(ol_model *m, ol_nid model, ol_nid at)
{
    return frozen_before(m, model, at, 0);
}

static bool frozen_before(ol_model *m, ol_nid model, ol_nid at, int depth)
{
    const ol_tree *t = m->tree;
    model = ol_unparen(t, model);
    if (model == OL_NONE || (ol_kind_of(t, model) != OL_N_identifier && ol_kind_of(t, model) != OL_N_attribute))
        return false;
    size_t n;
    const ol_nid *sw = ol_grad_switches(m, &n);
    uint32_t fn = ol_function_of(m, at);
    ol_nid root = fn == OL_NO_INDEX ? 0 : m->functions.items[fn].node;
    size_t i = ol_lower_bound_u32(sw, n, root);
    if (i >= n || sw[i] >= at)
        return false; /* nothing frozen in this function before it */
    ol_nid frozen_at = OL_NONE;
    for (; i < n && sw[i] < at; i++) {
        ol_nid s = sw[i];
        if (ol_function_of(m, s) != fn)
            continue;
        if (ol_kind_of(t, s) == OL_N_call) {
            uint32_t ci = ol_call_at(m, s);
            const ol_call *c = &m->calls.items[ci];
            ol_nid base = module_itself(t, c->receiver);
            if (!ol_same_text(t, base, model) && !ol_same_text(t, bound_by_chain(t, s), model)) {
                if (ol_mentions(t, c->receiver, model))
                    return false; /* a part of it, frozen or not: not the whole */
                continue;
            }
            ol_nid a = ol_call_arg(m, c->node, 0, "requires_grad");
            if (a == OL_NONE || ol_kind_of(t, a) != OL_N_false)
                return false; /* made to learn again */
            if (frozen_at == OL_NONE)
                frozen_at = s;
            continue;
        }
        /* for p in model.parameters(): p.requires_grad = False, unconditionally */
        uint32_t l = m->node_loop[s];
        if (l == OL_NO_INDEX || m->loops.items[l].kind != OL_LOOP_FOR)
            continue;
        ol_nid it = ol_unparen(t, m->loops.items[l].iter);
        uint32_t ci = it != OL_NONE && ol_kind_of(t, it) == OL_N_call ? ol_call_at(m, it) : OL_NO_INDEX;
        bool whole = ci != OL_NO_INDEX && m->calls.items[ci].receiver != OL_NONE && m->calls.items[ci].name &&
                     strcmp(ol_sym_str(m, m->calls.items[ci].name), "parameters") == 0 &&
                     ol_same_text(t, module_itself(t, m->calls.items[ci].receiver), model);
        if (!whole) {
            if (ol_mentions(t, m->loops.items[l].iter, model))
                return false; /* some of its parameters only */
            continue;
        }
        /* directly in the loop's body: not under an `if name not in [...]` */
        ol_nid stmt = ol_parent(t, s);
        ol_nid block = stmt != OL_NONE ? ol_parent(t, stmt) : OL_NONE;
        if (block == OL_NONE || ol_field(t, m->loops.items[l].node, OL_F_body) != block ||
            ol_kind_of(t, ol_unparen(t, ol_field(t, s, OL_F_right))) != OL_N_false)
            return false;
        if (frozen_at == OL_NONE)
            frozen_at = s;
    }
    if (frozen_at == OL_NONE)
        return frozen_copy(m, model, at, depth); /* no switch of its own: a copy of a frozen one? */
    /* a layer put in after the freeze learns (looked for over a bounded
     * stretch: beyond it, the model is not taken for frozen) */
    size_t k = ol_lower_bound_u32(m->assigns.items, m->assigns.len, frozen_at);
    for (size_t seen = 0; k < m->assigns.len && m->assigns.items[k] < at; k++, seen++)
        if (seen >= 4096 ||
            (ol_function_of(m, m->assigns.items[k]) == fn && replaces_part(t, m->assigns.items[k], model)))
            return false;
    return true;
}

bool ol_inputs_carry_graph(ol_model *m, ol_nid call)
{
    const ol_tree *t = m->tree;
    ol_nid args = ol_field(t, call, OL_F_arguments);
    for (ol_nid a = args != OL_NONE ? ol_first_named(t, args) : OL_NONE; a != OL_NONE; a = ol_next_named(t, a)) {
        ol_nid e = ol_kind_of(t, a) == OL_N_keyword_argument ? ol_field(t, a, OL_F_value) : a;
        if (ol_kind_of(t, e) == OL_N_list_splat || ol_kind_of(t, e) == OL_N_dictionary_splat)
            e = ol_first_named(t, e);
        ol_val v = ol_eval(m, e);
        if ((v.flags & (OL_VF_GRAPH | OL_VF_ELEM_GRAPH)) && !(v.flags & OL_VF_BATCH))
            return true;
    }
    return false;
}
