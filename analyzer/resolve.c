/*
 * resolve.c - the second half of building a file's model, the part that needs
 * values: what each with-block, except clause and decorator turns on or off
 * (no_grad, autocast, catching out-of-memory), which method a call on an
 * instance of a local class runs, which bindings reach `.backward()`, and a
 * module-level `set_grad_enabled(False)`. model.c's walk (ol_model_bind)
 * records the syntax first; this pass sits above the evaluator it asks, so
 * the model below never calls up into it.
 */
#include "model.h"

#include "steps.h"

#include <stdlib.h>
#include <string.h>

/* Does an except clause catch CUDA out-of-memory (RuntimeError,
 * torch.cuda.OutOfMemoryError, torch.OutOfMemoryError, Exception, bare)? */
static bool except_catches_oom(ol_model *m, ol_nid clause, ol_nid *type_out)
{
    const ol_tree *t = m->tree;
    ol_nid type = ol_field(t, clause, OL_F_value);
    if (type == OL_NONE) {
        for (ol_nid c = ol_first_named(t, clause); c != OL_NONE; c = ol_next_named(t, c)) {
            ol_kind k = ol_kind_of(t, c);
            if (k == OL_N_block)
                break;
            type = k == OL_N_as_pattern ? ol_first_named(t, c) : c;
            break;
        }
    }
    if (type != OL_NONE && ol_kind_of(t, type) == OL_N_as_pattern)
        type = ol_first_named(t, type); /* except E as e: the value field is the whole pattern */
    *type_out = type;
    if (type == OL_NONE)
        return true; /* bare except */
    ol_nid items[16];
    size_t count = 0;
    ol_nid u = ol_unparen(t, type);
    if (ol_kind_of(t, u) == OL_N_tuple || ol_kind_of(t, u) == OL_N_expression_list) {
        for (ol_nid c = ol_first_named(t, u); c != OL_NONE && count < 16; c = ol_next_named(t, c))
            items[count++] = c;
    } else {
        items[count++] = u;
    }
    for (size_t i = 0; i < count; i++) {
        const char *q = ol_qualname(m, items[i]);
        if (q && (strcmp(q, "torch.cuda.OutOfMemoryError") == 0 || strcmp(q, "torch.OutOfMemoryError") == 0 ||
                  strcmp(q, "torch.cuda.memory.OutOfMemoryError") == 0))
            return true;
        if (ol_text_is(t, items[i], "RuntimeError") || ol_text_is(t, items[i], "Exception") ||
            ol_text_is(t, items[i], "BaseException") || ol_text_is(t, items[i], "MemoryError"))
            return true;
    }
    return false;
}

/* A helper named for turning grad off (`smart_inference_mode()`,
 * `maybe_no_grad()`) is taken at its word. */
static bool named_no_grad(const ol_tree *t, ol_nid e)
{
    e = ol_unparen(t, e);
    if (ol_kind_of(t, e) == OL_N_call)
        e = ol_field(t, e, OL_F_function);
    e = ol_tail_name(t, e);
    if (e == OL_NONE)
        return false;
    uint32_t len;
    const char *s = ol_text(t, e, &len);
    for (uint32_t i = 0; i + 7 <= len; i++)
        if (ol_mem_ieq(s + i, "no_grad", 7) || (i + 14 <= len && ol_mem_ieq(s + i, "inference_mode", 14)))
            return true;
    return false;
}

/* A context from a with item or a decorator: no_grad, autocast and friends. */
static bool context_of_value(ol_val v, ol_ctx *c)
{
    if (v.kind == OL_V_GRADMODE) {
        c->kind = OL_CTX_GRAD;
        c->gradmode = (ol_gradmode)v.info;
        return true;
    }
    if (v.kind == OL_V_AUTOCAST) {
        c->kind = OL_CTX_AUTOCAST;
        c->autocast = v.info;
        return true;
    }
    return false;
}

#define WITH_ITEMS_MAX 16

/* The items of with statement w and the context expression of each (the
 * part before `as`); returns how many. */
static size_t with_items(const ol_tree *t, ol_nid w, ol_nid *items, ol_nid *values)
{
    size_t n = 0;
    for (ol_nid clause = ol_first_named(t, w); clause != OL_NONE; clause = ol_next_named(t, clause)) {
        if (ol_kind_of(t, clause) != OL_N_with_clause)
            continue;
        for (ol_nid item = ol_first_named(t, clause); item != OL_NONE && n < WITH_ITEMS_MAX;
             item = ol_next_named(t, item)) {
            ol_nid value = ol_field(t, item, OL_F_value);
            if (value != OL_NONE && ol_kind_of(t, value) == OL_N_as_pattern)
                value = ol_first_named(t, value);
            if (value == OL_NONE)
                continue;
            items[n] = item;
            values[n++] = value;
        }
    }
    return n;
}

static void resolve_with(ol_model *m, ol_nid w)
{
    const ol_tree *t = m->tree;
    ol_nid body = ol_field(t, w, OL_F_body);
    uint32_t parent = m->node_ctx[w];
    ol_nid items[WITH_ITEMS_MAX], values[WITH_ITEMS_MAX];
    size_t n = with_items(t, w, items, values);
    for (size_t i = 0; i < n; i++) {
        ol_ctx c = {0};
        c.node = w;
        c.item = items[i];
        c.body = body;
        c.parent = parent;
        ol_val v = ol_eval(m, values[i]);
        if (v.kind != OL_V_GRADMODE && v.kind != OL_V_AUTOCAST && named_no_grad(t, values[i])) {
            v.kind = OL_V_GRADMODE;
            v.info = OL_GM_NO_GRAD;
        }
        if (context_of_value(v, &c))
            parent = ol_model__add_ctx(m, c);
    }
    if (parent != m->node_ctx[w])
        ol_model__set_ctx_range(m, body, parent);
}

/* Is with statement w's item torch.no_grad() / inference_mode() (also a
 * helper named for it)? */
static bool with_no_grad(ol_model *m, ol_nid w)
{
    const ol_tree *t = m->tree;
    ol_nid items[WITH_ITEMS_MAX], values[WITH_ITEMS_MAX];
    size_t n = with_items(t, w, items, values);
    for (size_t i = 0; i < n; i++) {
        ol_val v = ol_eval(m, values[i]);
        if ((v.kind == OL_V_GRADMODE && (v.info == OL_GM_NO_GRAD || v.info == OL_GM_INFERENCE)) ||
            named_no_grad(t, values[i]))
            return true;
    }
    return false;
}

/* Is local function fi a decorator that runs the function it is given under
 * no_grad (`def nograd(f): def new_f(*a, **k): with torch.no_grad(): return
 * f(*a, **k)`, then `return new_f`)? Its first parameter is called inside a
 * `with torch.no_grad()` of a function nested in it. */
static bool no_grad_decorator(ol_model *m, uint32_t fi)
{
    const ol_tree *t = m->tree;
    const ol_function *f = &m->functions.items[fi];
    if (f->params.len < 1 || f->is_method)
        return false;
    ol_sym wrapped = m->defs.items[f->params.items[0]].name;
    ol_nid body = ol_field(t, f->node, OL_F_body);
    if (body == OL_NONE)
        return false;
    for (ol_nid n = body; n < m->subtree_end[body]; n++) {
        if (ol_kind_of(t, n) != OL_N_with_statement || !with_no_grad(m, n))
            continue;
        ol_nid inner = ol_field(t, n, OL_F_body);
        for (ol_nid x = inner; inner != OL_NONE && x < m->subtree_end[inner]; x++) {
            if (ol_kind_of(t, x) != OL_N_call)
                continue;
            ol_nid callee = ol_unparen(t, ol_field(t, x, OL_F_function));
            if (ol_kind_of(t, callee) == OL_N_identifier && ol_node_sym(m, callee) == wrapped)
                return true;
        }
    }
    return false;
}

/* @torch.no_grad(), @torch.autocast("cuda"): the decorated body runs inside. */
static void resolve_decorators(ol_model *m, uint32_t fi)
{
    const ol_tree *t = m->tree;
    const ol_function *f = &m->functions.items[fi];
    ol_nid body = ol_field(t, f->node, OL_F_body);
    uint32_t parent = m->node_ctx[f->node];
    for (ol_nid d = ol_first_named(t, f->decorated); d != OL_NONE; d = ol_next_named(t, d)) {
        if (ol_kind_of(t, d) != OL_N_decorator)
            continue;
        ol_nid e = ol_first_named(t, d);
        ol_val v = ol_eval(m, e);
        if (v.kind == OL_V_EXTERN) {
            /* a bare decorator: @torch.no_grad, @torch.inference_mode */
            const char *q = ol_sym_str(m, v.ref);
            if (strcmp(q, "torch.no_grad") == 0 || strcmp(q, "torch.inference_mode") == 0 ||
                strcmp(q, "torch.autograd.no_grad") == 0) {
                v.kind = OL_V_GRADMODE;
                v.info = strcmp(q, "torch.inference_mode") == 0 ? OL_GM_INFERENCE : OL_GM_NO_GRAD;
            }
        }
        if (v.kind != OL_V_GRADMODE && v.kind != OL_V_AUTOCAST &&
            (named_no_grad(t, e) ||
             (v.kind == OL_V_FUNCTION && v.ref < m->functions.len && v.ref != fi && no_grad_decorator(m, v.ref)))) {
            v.kind = OL_V_GRADMODE;
            v.info = OL_GM_NO_GRAD;
        }
        ol_ctx c = {0};
        c.node = f->node;
        c.item = d;
        c.body = body;
        c.parent = parent;
        if (context_of_value(v, &c))
            parent = ol_model__add_ctx(m, c);
    }
    if (parent != m->node_ctx[f->node])
        ol_model__set_ctx_range(m, body, parent);
}

typedef struct ctx_site {
    ol_nid node;
    int kind; /* 0 with, 1 except, 2 decorated function */
    uint32_t index;
} ctx_site;

static int cmp_site(const void *a, const void *b)
{
    const ctx_site *x = a, *y = b;
    return x->node < y->node ? -1 : x->node > y->node;
}

static void resolve_except(ol_model *m, ol_nid clause)
{
    const ol_tree *t = m->tree;
    ol_ctx c = {0};
    c.kind = OL_CTX_EXCEPT;
    c.node = clause;
    c.parent = m->node_ctx[clause];
    c.catches_oom = except_catches_oom(m, clause, &c.item);
    ol_nid body = OL_NONE;
    for (ol_nid ch = ol_first_named(t, clause); ch != OL_NONE; ch = ol_next_named(t, ch))
        if (ol_kind_of(t, ch) == OL_N_block)
            body = ch;
    c.body = body;
    uint32_t id = ol_model__add_ctx(m, c);
    ol_model__set_ctx_range(m, body, id);
}

static void resolve_contexts(ol_model *m)
{
    /* outermost first: sites in pre-order, so inner contexts chain onto outer ones */
    OL_VEC(ctx_site) sites = {0};
    for (size_t i = 0; i < m->withs.len; i++) {
        ctx_site s = {m->withs.items[i], 0, (uint32_t)i};
        ol_vec_push(&sites, s);
    }
    for (size_t i = 0; i < m->excepts.len; i++) {
        ctx_site s = {m->excepts.items[i], 1, (uint32_t)i};
        ol_vec_push(&sites, s);
    }
    for (size_t i = 0; i < m->functions.len; i++) {
        if (m->functions.items[i].decorated == OL_NONE)
            continue;
        ctx_site s = {m->functions.items[i].node, 2, (uint32_t)i};
        ol_vec_push(&sites, s);
    }
    ol_sort(sites.items, sites.len, sizeof(ctx_site), cmp_site);
    for (size_t i = 0; i < sites.len; i++) {
        if (sites.items[i].kind == 0)
            resolve_with(m, sites.items[i].node);
        else if (sites.items[i].kind == 1)
            resolve_except(m, sites.items[i].node);
        else
            resolve_decorators(m, sites.items[i].index);
    }
    ol_vec_free(&sites);
}

static void mark_backward_reach(ol_model *m)
{
    const ol_tree *t = m->tree;
    for (size_t ci = 0; ci < m->calls.len; ci++) {
        ol_nid operand = ol_backward_operand(m, (uint32_t)ci);
        operand = ol_unparen(t, operand);
        if (operand == OL_NONE)
            continue;
        if (ol_kind_of(t, operand) == OL_N_identifier) {
            uint32_t defs[32];
            size_t n = ol_reaching_defs(m, m->node_scope[operand], ol_node_sym(m, operand), operand, defs, 32);
            for (size_t i = 0; i < n; i++)
                m->def_reaches_backward[defs[i]] = true;
        } else if (ol_kind_of(t, operand) == OL_N_attribute) {
            ol_nid obj = ol_field(t, operand, OL_F_object);
            ol_nid attr = ol_field(t, operand, OL_F_attribute);
            uint32_t fn = ol_function_of(m, operand);
            if (fn == OL_NO_INDEX || attr == OL_NONE || ol_kind_of(t, obj) != OL_N_identifier)
                continue;
            const ol_function *f = &m->functions.items[fn];
            if (!f->is_method || f->params.len == 0 || m->defs.items[f->params.items[0]].name != ol_node_sym(m, obj))
                continue;
            const ol_member *attrs;
            size_t count = ol_class_attrs_named(m, f->cls, ol_node_sym(m, attr), &attrs);
            for (size_t i = 0; i < count; i++)
                m->def_reaches_backward[attrs[i].index] = true;
        }
    }
}

/* `obj.method(...)` where obj holds an instance of a class defined here:
 * found through values, so after the syntactic pass. */
static void resolve_method_callsites(ol_model *m)
{
    const ol_tree *t = m->tree;
    /* calls already resolved to a function, marked once (not searched per call) */
    bool *known = ol_xcalloc(m->calls.len + 1, sizeof(bool));
    for (size_t f = 0; f < m->functions.len; f++)
        for (size_t k = 0; k < m->functions.items[f].callsites.len; k++)
            if (m->functions.items[f].callsites.items[k] < m->calls.len)
                known[m->functions.items[f].callsites.items[k]] = true;
    /* the names the file's classes give their methods, by symbol */
    size_t names = m->strings.strings.len;
    bool *method_name = ol_xcalloc(names + 1, sizeof(bool));
    for (size_t k = 0; k < m->classes.len; k++)
        for (size_t i = 0; i < m->classes.items[k].methods.len; i++) {
            ol_sym name = m->functions.items[m->classes.items[k].methods.items[i]].name;
            if (name < names)
                method_name[name] = true;
        }
    for (size_t ci = 0; ci < m->calls.len; ci++) {
        const ol_call *c = &m->calls.items[ci];
        if (c->receiver == OL_NONE || !c->name || ol_kind_of(t, ol_unparen(t, c->callee)) != OL_N_attribute)
            continue;
        if (known[ci])
            continue;
        /* only a name some class of the file defines can be tied to one
         * (the receiver is not evaluated for the others) */
        if (c->name >= names || !method_name[c->name])
            continue;
        ol_val rv = ol_eval(m, c->receiver);
        if (!(rv.flags & OL_VF_LOCAL) || (rv.kind != OL_V_MODULE && rv.kind != OL_V_INSTANCE) ||
            rv.ref >= m->classes.len)
            continue;
        const ol_class *cls = &m->classes.items[rv.ref];
        for (size_t i = 0; i < cls->methods.len; i++) {
            uint32_t fi = cls->methods.items[i];
            if (m->functions.items[fi].name == c->name) {
                ol_vec_push(&m->functions.items[fi].callsites, (uint32_t)ci);
                break;
            }
        }
    }
    free(known);
    free(method_name);
}

/* `torch.set_grad_enabled(False)` as a statement at module level turns
 * autograd off for the whole script (inference scripts do this), unless the
 * module turns it back on too. */
static void find_global_grad_mode(ol_model *m)
{
    bool off = false, on = false;
    size_t calls = ol_grad_any_setter_statements(m) ? m->calls.len : 0;
    for (size_t i = 0; i < calls; i++) {
        const ol_call *c = &m->calls.items[i];
        if (m->scopes.items[m->node_scope[c->node]].kind != OL_SCOPE_MODULE || !ol_grad_setter_statement(m, c->node))
            continue;
        ol_nid arg = ol_call_arg(m, c->node, 0, "mode");
        if (ol_kind_of(m->tree, arg) == OL_N_false)
            off = true;
        else
            on = true;
    }
    m->grad_globally_disabled = off && !on;
}

void ol_model_build(ol_model *m, const ol_tree *t)
{
    ol_model_bind(m, t);
    resolve_method_callsites(m);
    ol_model__index_calls(m);
    ol_model_forget(m);
    resolve_contexts(m);
    /* contexts change what values mean: forget anything computed so far */
    ol_model_forget(m);
    mark_backward_reach(m);
    find_global_grad_mode(m);
    ol_grad_find_switches(m);
    ol_model_forget(m);
}
