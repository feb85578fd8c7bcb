/*
 * classes.c - the file's own classes and functions as values: whether a class
 * is an nn.Module or a LightningModule (through its bases, in this file or,
 * through the links, another of the run), what an instance's attributes and
 * methods hold, what a local function returns, and where names are used the
 * way only an nn.Module is (the evidence that makes an unknown name a model).
 * Part of the evaluator.
 */
#include "model.h"

#include "dataflow.h"
#include "eval_internal.h"
#include "steps.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

/* ---- local classes and functions ------------------------------------------------ */

static bool class_is_kind(ol_model *m, uint32_t ci, bool lightning, int depth);

bool ol_eval__base_is_module_qual(const char *q, bool lightning)
{
    static const char *const lightning_bases[] = {
        "pytorch_lightning.LightningModule", "pytorch_lightning.core.LightningModule",
        "pytorch_lightning.core.lightning.LightningModule", "lightning.LightningModule",
        "lightning.pytorch.LightningModule", "lightning.pytorch.core.LightningModule",
        "pl.LightningModule", "L.LightningModule", NULL};
    if (qin(q, lightning_bases))
        return true;
    if (lightning)
        return false;
    if (qeq(q, "torch.nn.Module") || qeq(q, "torch.nn.modules.module.Module"))
        return true;
    if (ol_str_has_prefix(q, "torch.nn.") && is_camel(last_part(q)))
        return true; /* subclasses of nn.Sequential, nn.Linear, ... */
    if (ol_str_has_prefix(q, "transformers.") && (strstr(q, "PreTrainedModel") || strstr(q, "Model")))
        return true;
    return false;
}

bool ol_class_defines_call(ol_model *m, uint32_t ci)
{
    ol_sym call = m->names.__call__;
    for (int depth = 0; ci < m->classes.len && depth < 16; depth++) {
        const ol_class *c = &m->classes.items[ci];
        for (size_t i = 0; i < c->methods.len; i++)
            if (m->functions.items[c->methods.items[i]].name == call)
                return true;
        /* the first base of this file, as Python looks it up */
        uint32_t next = OL_NO_INDEX;
        for (size_t i = 0; i < c->bases.len && next == OL_NO_INDEX; i++) {
            ol_val v = ol_eval(m, c->bases.items[i]);
            if (v.kind == OL_V_CLASS && v.ref < m->classes.len && v.ref != ci)
                next = v.ref;
        }
        ci = next;
    }
    return false;
}

static bool class_is_kind(ol_model *m, uint32_t ci, bool lightning, int depth)
{
    ol_class *c = &m->classes.items[ci];
    int8_t *state = lightning ? &c->lightning_state : &c->module_state;
    if (*state >= 0)
        return *state == 1;
    if (depth > 16 || c->visiting)
        return false;
    c->visiting = 1;
    bool result = false, guessed = false;
    for (size_t i = 0; i < c->bases.len && !result; i++) {
        ol_val v = ol_eval(m, c->bases.items[i]);
        c = &m->classes.items[ci];
        if (v.kind == OL_V_EXTERN && ol_eval__base_is_module_qual(ol_sym_str(m, v.ref), lightning)) {
            result = true;
        } else if (v.kind == OL_V_CLASS && v.ref < m->classes.len && v.ref != ci &&
                   class_is_kind(m, v.ref, lightning, depth + 1)) {
            result = true;
            guessed = m->classes.items[v.ref].module_guessed == 1;
        }
    }
    c = &m->classes.items[ci];
    if (!result && !lightning && c->bases.len > 0) {
        /* a class with a base we cannot see and a forward() is a module
         * (a guess: another file of the run may show that base) */
        for (size_t i = 0; i < c->methods.len; i++)
            if (m->functions.items[c->methods.items[i]].name == m->names.forward)
                result = guessed = true;
        /* unless calling it runs a __call__ of its own, not a module's
         * forward (a data transform whose __call__ runs forward()) */
        if (result && ol_class_defines_call(m, ci))
            result = guessed = false;
        c = &m->classes.items[ci];
    }
    if (!lightning)
        c->module_guessed = result && guessed;
    c->visiting = 0;
    c->lightning_state = lightning ? (int8_t)result : c->lightning_state;
    c->module_state = lightning ? c->module_state : (int8_t)result;
    if (lightning && result)
        c->module_state = 1;
    return result;
}

bool ol_class_is_module(ol_model *m, uint32_t cls)
{
    return cls < m->classes.len && class_is_kind(m, cls, false, 0);
}

bool ol_class_module_guessed(ol_model *m, uint32_t cls)
{
    return ol_class_is_module(m, cls) && m->classes.items[cls].module_guessed == 1;
}

bool ol_class_is_lightning(ol_model *m, uint32_t cls)
{
    return cls < m->classes.len && class_is_kind(m, cls, true, 0);
}

ol_val ol_eval__instance_of_class(ol_model *m, uint32_t ci)
{
    if (ol_class_is_module(m, ci)) {
        ol_val v = mk_ref(OL_V_MODULE, OL_VF_LOCAL, ci);
        const char *name = ol_sym_str(m, m->classes.items[ci].name);
        if (ol_str_has_suffix(name, "Loss") || ol_str_has_suffix(name, "Criterion"))
            v.flags |= OL_VF_LOSSFN;
        return v;
    }
    return mk_ref(OL_V_INSTANCE, OL_VF_LOCAL, ci);
}

/* The first method of class ci named `name`, or OL_NO_INDEX. */
static uint32_t own_method(ol_model *m, uint32_t ci, ol_sym name)
{
    const ol_member *k;
    return ol_class_methods_named(m, ci, name, &k) ? k[0].index : OL_NO_INDEX;
}

uint32_t ol_eval__find_method(ol_model *m, uint32_t ci, ol_sym name, int depth)
{
    if (ci >= m->classes.len || depth > 16)
        return OL_NO_INDEX;
    const ol_class *c = &m->classes.items[ci];
    uint32_t own = own_method(m, ci, name);
    if (own != OL_NO_INDEX)
        return own;
    for (size_t i = 0; i < c->bases.len; i++) {
        ol_val v = ol_eval(m, m->classes.items[ci].bases.items[i]);
        if (v.kind == OL_V_CLASS && v.ref != ci) {
            uint32_t f = ol_eval__find_method(m, v.ref, name, depth + 1);
            if (f != OL_NO_INDEX)
                return f;
        }
    }
    return OL_NO_INDEX;
}

ol_val ol_eval__function_result(ol_model *m, uint32_t fi)
{
    if (fi >= m->functions.len)
        return UNKNOWN;
    ol_val r = BOTTOM;
    size_t n = m->functions.items[fi].returns.len;
    for (size_t i = 0; i < n && i < 16; i++)
        r = ol_val_join(r, ol_eval(m, m->functions.items[fi].returns.items[i]));
    if (n == 0)
        return mk(OL_V_NONE, 0);
    return r.kind == OL_V_BOTTOM ? UNKNOWN : r;
}

bool ol_eval__inherited(ol_model *m, uint32_t ci, ol_sym method, ol_sym *base_qual, ol_val *out, int depth)
{
    if (!m->links || ci >= m->classes.len || depth > 8)
        return false;
    for (size_t i = 0; i < m->classes.items[ci].bases.len; i++) {
        ol_val b = ol_eval(m, m->classes.items[ci].bases.items[i]);
        if (b.kind == OL_V_EXTERN && m->links->call(m->links, m, b.ref, method, -1, NULL, out)) {
            *base_qual = b.ref;
            return true;
        }
        if (b.kind == OL_V_CLASS && b.ref != ci && ol_eval__inherited(m, b.ref, method, base_qual, out, depth + 1))
            return true;
    }
    return false;
}

bool ol_inherited_method(ol_model *m, uint32_t ci, ol_sym method, ol_sym *base_qual, ol_val *out)
{
    return ol_eval__inherited(m, ci, method, base_qual, out, 0);
}

ol_val ol_function_result(ol_model *m, uint32_t fi)
{
    return ol_eval__function_result(m, fi);
}

ol_val ol_eval__class_attr(ol_model *m, uint32_t ci, ol_sym name, int depth)
{
    if (ci >= m->classes.len || depth > 16)
        return UNKNOWN;
    ol_val r = BOTTOM;
    const ol_member *attrs;
    size_t count = ol_class_attrs_named(m, ci, name, &attrs);
    for (size_t i = 0; i < count; i++)
        r = ol_val_join(r, ol_def_value(m, attrs[i].index));
    uint32_t d = ol_scope_defs(m, m->classes.items[ci].scope, name);
    for (; d != OL_NO_INDEX; d = m->defs.items[d].next)
        r = ol_val_join(r, ol_def_value(m, d));
    if (r.kind == OL_V_BOTTOM) {
        for (size_t i = 0; i < m->classes.items[ci].bases.len; i++) {
            ol_val b = ol_eval(m, m->classes.items[ci].bases.items[i]);
            if (b.kind == OL_V_CLASS && b.ref != ci) {
                ol_val ol_eval__inherited = ol_eval__class_attr(m, b.ref, name, depth + 1);
                if (ol_eval__inherited.kind != OL_V_UNKNOWN)
                    return ol_eval__inherited;
            }
        }
        return ol_eval__guess_from_name(m, name);
    }
    if (r.kind == OL_V_UNKNOWN) {
        ol_val g = ol_eval__guess_from_name(m, name);
        if (g.kind != OL_V_UNKNOWN)
            return g;
    }
    return r;
}

static bool derives(ol_model *m, uint32_t ci, uint32_t base, int depth, int *budget)
{
    if (ci == base)
        return true;
    if (depth >= 16 || ci >= m->classes.len || --*budget < 0)
        return false;
    for (size_t i = 0; i < m->classes.items[ci].bases.len; i++) {
        ol_val b = ol_eval(m, m->classes.items[ci].bases.items[i]);
        if (b.kind == OL_V_CLASS && b.ref != ci && derives(m, b.ref, base, depth + 1, budget))
            return true;
    }
    return false;
}

bool ol_class_derives(ol_model *m, uint32_t ci, uint32_t base)
{
    int budget = 64; /* classes visited: a lattice of mixins stays cheap */
    return derives(m, ci, base, 0, &budget);
}

/* ---- module evidence ------------------------------------------------------------ */

static const char *const MODULE_ONLY_METHODS[] = {"eval", "train", "parameters", "named_parameters", "modules",
                                                  "named_modules", "children", "named_children", "apply",
                                                  "register_forward_hook", "register_buffer", "add_module",
                                                  "get_submodule", "requires_grad_", NULL};

static int cmp_attr_use(const void *a, const void *b)
{
    const ol_attr_use *x = a, *y = b;
    if (x->cls != y->cls)
        return x->cls < y->cls ? -1 : 1;
    return x->name < y->name ? -1 : x->name > y->name;
}

/* Turns the evidence around, once: instead of scanning every use for every
 * def asked about (defs x uses on a big file), each use marks the defs it
 * can see (names) or its (class, attribute) pair (self.x in a method). */
static void index_evidence(ol_model *m)
{
    const ol_tree *t = m->tree;
    m->def_module_use = ol_xcalloc(m->defs.len + 1, 1);
    m->def_module_use_len = m->defs.len;
    for (size_t i = 0; i < m->evidence.len; i++) {
        const ol_evidence *e = &m->evidence.items[i];
        uint8_t bit = e->called ? 2 : 1;
        ol_kind uk = ol_kind_of(t, e->use);
        if (uk == OL_N_identifier) {
            uint32_t defs[16];
            size_t n = ol_reaching_defs(m, m->node_scope[e->use], e->name, e->use, defs, 16);
            for (size_t k = 0; k < n; k++)
                if (defs[k] < m->def_module_use_len)
                    m->def_module_use[defs[k]] |= bit;
        } else if (uk == OL_N_attribute) {
            /* self.x used in a method of the same class */
            ol_nid obj = ol_field(t, e->use, OL_F_object);
            uint32_t fn = ol_function_of(m, e->use);
            if (fn == OL_NO_INDEX || ol_kind_of(t, obj) != OL_N_identifier)
                continue;
            const ol_function *f = &m->functions.items[fn];
            while (!f->is_method && m->scopes.items[f->outer_scope].function != OL_NO_INDEX)
                f = &m->functions.items[m->scopes.items[f->outer_scope].function];
            if (f->is_method && f->params.len > 0 && m->defs.items[f->params.items[0]].name == ol_node_sym(m, obj)) {
                ol_attr_use u = {f->cls, e->name, bit};
                ol_vec_push(&m->attr_module_uses, u);
            }
        }
    }
    ol_sort(m->attr_module_uses.items, m->attr_module_uses.len, sizeof(ol_attr_use), cmp_attr_use);
}

static void build_evidence(ol_model *m)
{
    const ol_tree *t = m->tree;
    m->evidence_built = true;
    for (size_t i = 0; i < m->calls.len; i++) {
        const ol_call *c = &m->calls.items[i];
        ol_nid callee = ol_unparen(t, c->callee);
        ol_evidence e = {0};
        if (c->receiver != OL_NONE && c->name) {
            if (!qin(ol_sym_str(m, c->name), MODULE_ONLY_METHODS))
                continue;
            /* eval()/train() take no argument but a mode flag (pandas' df.eval takes text) */
            ol_nid arg = ol_call_arg(m, c->node, 0, NULL);
            if (arg != OL_NONE && (c->name == m->names.eval ||
                                   (c->name == m->names.train && ol_kind_of(t, arg) != OL_N_true &&
                                    ol_kind_of(t, arg) != OL_N_false)))
                continue;
            e.use = ol_unparen(t, c->receiver);
        } else {
            e.use = callee;
            e.called = true;
        }
        ol_nid name = e.use;
        if (ol_kind_of(t, name) == OL_N_attribute)
            name = ol_field(t, name, OL_F_attribute);
        if (name == OL_NONE || ol_kind_of(t, name) != OL_N_identifier)
            continue;
        e.name = ol_node_sym(m, name);
        ol_vec_push(&m->evidence, e);
    }
    index_evidence(m);
}

/* Is the binding made by def d used as an nn.Module somewhere: a module-only
 * method called on it, or (when `called_counts`) the value called? */
bool ol_eval__used_as_module(ol_model *m, uint32_t di, bool called_counts)
{
    const ol_tree *t = m->tree;
    if (!m->evidence_built)
        build_evidence(m);
    const ol_def *d = &m->defs.items[di];
    uint8_t mask = called_counts ? 3 : 1;
    if (ol_kind_of(t, d->target) == OL_N_attribute) {
        ol_attr_use key = {m->scopes.items[d->scope].cls, d->name, 0};
        size_t lo = 0, hi = m->attr_module_uses.len;
        while (lo < hi) {
            size_t mid = lo + (hi - lo) / 2;
            if (cmp_attr_use(&m->attr_module_uses.items[mid], &key) < 0)
                lo = mid + 1;
            else
                hi = mid;
        }
        for (size_t i = lo; i < m->attr_module_uses.len && cmp_attr_use(&m->attr_module_uses.items[i], &key) == 0;
             i++)
            if (m->attr_module_uses.items[i].bits & mask)
                return true;
        return false;
    }
    return di < m->def_module_use_len && (m->def_module_use[di] & mask) != 0;
}
