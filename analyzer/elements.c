/*
 * elements.c - what the parts of a value hold: the element a `for` or an
 * unpacking (`a, (b, c) = v`) takes, an element of a tuple, list or dict a
 * known call or a local function returns, and what a parameter holds (its
 * annotation, its default, what the file's call sites pass). Part of the
 * evaluator.
 */
#include "model.h"

#include "dataflow.h"
#include "eval_internal.h"
#include "steps.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

/* ---- unpacking and iteration ------------------------------------------------------ */

/* The element a `for` over a value yields. */
ol_val ol_eval__elem_of_val(ol_val v)
{
    switch (v.kind) {
    case OL_V_LOADER:
    case OL_V_DATASET:
        return mk(OL_V_TENSOR, OL_VF_BATCH);
    case OL_V_LIST:
    case OL_V_TUPLE:
    case OL_V_SET:
        if (v.info == OL_V_DATASET)
            return mk(OL_V_DATASET, 0);
        if (v.flags & OL_VF_ELEM_GRAPH)
            return mk(OL_V_TENSOR, OL_VF_GRAPH | (v.flags & OL_VF_PARAM));
        return UNKNOWN;
    case OL_V_TENSOR:
        return mk(OL_V_TENSOR, v.flags & (OL_VF_GRAPH | OL_VF_BATCH));
    case OL_V_RANGE:
        return mk(OL_V_NUMBER, 0);
    case OL_V_ARRAY:
        return mk(OL_V_ARRAY, 0);
    default:
        return UNKNOWN;
    }
}

/* Element i of an unpacked value. */
static ol_val index_of_val(ol_val v, int i)
{
    switch (v.kind) {
    case OL_V_TENSOR: {
        ol_val r = mk(OL_V_TENSOR, v.flags & (OL_VF_GRAPH | OL_VF_BATCH | OL_VF_LOSS));
        if ((v.flags & OL_VF_PAIR) && i == 1)
            r.flags &= (uint8_t)~(OL_VF_GRAPH | OL_VF_LOSS);
        return r;
    }
    case OL_V_LIST:
    case OL_V_TUPLE:
        return ol_eval__elem_of_val(v);
    case OL_V_LOADER:
        return UNKNOWN;
    default:
        if (v.flags & OL_VF_GRAPH)
            return mk(OL_V_TENSOR, OL_VF_GRAPH);
        return UNKNOWN;
    }
}

bool ol_eval__callee_is_builtin(ol_model *m, ol_nid call, ol_sym name)
{
    ol_nid callee = ol_field(m->tree, call, OL_F_function);
    if (ol_kind_of(m->tree, callee) != OL_N_identifier || ol_node_sym(m, callee) != name)
        return false;
    ol_val v = ol_eval(m, callee);
    return v.kind == OL_V_EXTERN && ol_str_has_prefix(ol_sym_str(m, v.ref), "builtins.");
}

bool ol_eval__is_passthrough_iter(ol_model *m, ol_nid call)
{
    const char *q = ol_qualname(m, ol_field(m->tree, call, OL_F_function));
    if (!q)
        return false;
    static const char *const iters[] = {"builtins.iter", "builtins.list", "builtins.sorted", "builtins.reversed",
                                        "builtins.tuple", "tqdm.tqdm", "tqdm.auto.tqdm", "tqdm.notebook.tqdm",
                                        "tqdm", "tqdm.rich.tqdm", "rich.progress.track", "itertools.islice",
                                        "itertools.cycle", "itertools.chain", NULL};
    return qin(q, iters);
}

ol_nid ol_bound_value(ol_model *m, ol_nid name)
{
    const ol_tree *t = m->tree;
    name = ol_unparen(t, name);
    uint32_t defs[2];
    if (name == OL_NONE || ol_kind_of(t, name) != OL_N_identifier ||
        ol_reaching_defs(m, m->node_scope[name], ol_node_sym(m, name), name, defs, 2) != 1)
        return OL_NONE;
    const ol_def *d = &m->defs.items[defs[0]];
    if (d->kind != OL_DEF_ASSIGN || d->path_len != 0 || d->starred || d->value == OL_NONE)
        return OL_NONE;
    return ol_unparen(t, d->value);
}

/* The number of names `a, b, c = expr` unpacks expr into (0 when expr is
 * not the whole right side of such an assignment). */
static int unpacked_arity(ol_model *m, ol_nid expr)
{
    const ol_tree *t = m->tree;
    ol_nid stmt = ol_parent(t, expr);
    while (stmt != OL_NONE && ol_kind_of(t, stmt) == OL_N_parenthesized_expression)
        stmt = ol_parent(t, stmt);
    if (stmt == OL_NONE || ol_kind_of(t, stmt) != OL_N_assignment)
        return 0;
    ol_nid left = ol_field(t, stmt, OL_F_left);
    ol_kind lk = ol_kind_of(t, left);
    if (lk != OL_N_pattern_list && lk != OL_N_tuple_pattern && lk != OL_N_list_pattern)
        return 0;
    int n = 0;
    for (ol_nid c = ol_first_named(t, left); c != OL_NONE; c = ol_next_named(t, c)) {
        if (ol_kind_of(t, c) == OL_N_list_splat_pattern)
            return 0;
        n++;
    }
    return n;
}

/* Value of an expression, or of its element (elem: what a for over it
 * yields), followed by an unpacking path. Works on syntax where it can:
 * enumerate, zip, tuple literals and accelerator.prepare unpack by position. */
ol_val ol_eval__eval_path(ol_model *m, ol_nid expr, bool elem, const int8_t *path, int path_len)
{
    const ol_tree *t = m->tree;
    expr = ol_unparen(t, expr);
    if (expr == OL_NONE)
        return UNKNOWN;
    ol_kind k = ol_kind_of(t, expr);
    if (k == OL_N_call && elem) {
        if (ol_eval__callee_is_builtin(m, expr, m->names.enumerate)) {
            if (path_len == 0)
                return mk(OL_V_TUPLE, 0);
            if (path[0] == 0)
                return mk(OL_V_NUMBER, 0);
            ol_nid inner = ol_call_arg(m, expr, 0, "iterable");
            return ol_eval__eval_path(m, inner, true, path + 1, path_len - 1);
        }
        if (ol_eval__callee_is_builtin(m, expr, m->names.zip)) {
            if (path_len == 0)
                return mk(OL_V_TUPLE, 0);
            ol_nid inner = ol_call_arg(m, expr, path[0], NULL);
            return ol_eval__eval_path(m, inner, true, path + 1, path_len - 1);
        }
        if (ol_eval__is_passthrough_iter(m, expr)) {
            ol_nid inner = ol_call_arg(m, expr, 0, "iterable");
            if (inner != OL_NONE)
                return ol_eval__eval_path(m, inner, true, path, path_len);
        }
        /* `d.values()` and the value of `d.items()` of a name bound once to
         * a dict literal: its values, joined */
        ol_nid callee = ol_field(t, expr, OL_F_function);
        if (ol_kind_of(t, callee) == OL_N_attribute) {
            ol_nid meth = ol_field(t, callee, OL_F_attribute);
            bool values = ol_text_is(t, meth, "values");
            bool items = !values && ol_text_is(t, meth, "items") && path_len > 0 && path[0] == 1;
            ol_nid lit = values || items ? ol_bound_value(m, ol_field(t, callee, OL_F_object)) : OL_NONE;
            if (lit != OL_NONE && ol_kind_of(t, lit) == OL_N_dictionary) {
                ol_val r = BOTTOM;
                for (ol_nid pair = ol_first_named(t, lit); pair != OL_NONE; pair = ol_next_named(t, pair))
                    if (ol_kind_of(t, pair) == OL_N_pair)
                        r = ol_val_join(r, ol_eval__eval_path(m, ol_field(t, pair, OL_F_value), false, path + items,
                                              path_len - items));
                if (r.kind != OL_V_BOTTOM)
                    return r;
            }
        }
    }
    if ((k == OL_N_tuple || k == OL_N_list || k == OL_N_expression_list) && path_len > 0 && !elem) {
        ol_nid item = ol_named_child(t, expr, (uint32_t)path[0]);
        if (item != OL_NONE && ol_kind_of(t, item) != OL_N_list_splat)
            return ol_eval__eval_path(m, item, false, path + 1, path_len - 1);
        return UNKNOWN;
    }
    if ((k == OL_N_tuple || k == OL_N_list) && elem) {
        ol_val r = BOTTOM;
        for (ol_nid c = ol_first_named(t, expr); c != OL_NONE; c = ol_next_named(t, c))
            r = ol_val_join(r, ol_eval__eval_path(m, c, false, path, path_len));
        return r.kind == OL_V_BOTTOM ? UNKNOWN : r;
    }
    if (k == OL_N_list_comprehension && elem) {
        ol_nid body = ol_field(t, expr, OL_F_body);
        if (body != OL_NONE)
            return ol_eval__eval_path(m, body, false, path, path_len);
    }
    if (k == OL_N_identifier && elem) {
        /* `meters = [AverageMeter(), AverageMeter()]` ... `for m in meters`:
         * an element of the literal the name is bound to, when that is its
         * only binding reaching here */
        ol_nid lit = ol_bound_value(m, expr);
        ol_kind vk = lit != OL_NONE ? ol_kind_of(t, lit) : OL_N_ERROR;
        if (vk == OL_N_list || vk == OL_N_tuple || vk == OL_N_list_comprehension) {
            ol_val r = ol_eval__eval_path(m, lit, true, path, path_len);
            if (r.kind != OL_V_UNKNOWN)
                return r;
        }
    }
    if (k == OL_N_call && !elem && path_len > 0) {
        uint32_t ci = m->node_call[expr];
        if (ci != OL_NO_INDEX && m->calls.items[ci].name == m->names.prepare &&
            m->calls.items[ci].receiver != OL_NONE) {
            ol_val rv = ol_eval(m, m->calls.items[ci].receiver);
            if (rv.kind == OL_V_OBJECT && rv.ref && qeq(ol_sym_str(m, rv.ref), "accelerate.Accelerator")) {
                ol_nid arg = ol_call_arg(m, expr, path[0], NULL);
                return ol_eval__eval_path(m, arg, false, path + 1, path_len - 1);
            }
        }
        const char *q = ol_qualname(m, ol_field(t, expr, OL_F_function));
        if (q && qeq(q, "deepspeed.initialize")) {
            static const ol_vkind parts[] = {OL_V_MODULE, OL_V_OPTIMIZER, OL_V_LOADER, OL_V_SCHEDULER};
            if (path[0] >= 0 && path[0] < 4)
                return mk(parts[path[0]], 0);
            return UNKNOWN;
        }
        if (q && qeq(q, "torch.utils.data.random_split"))
            return mk(OL_V_DATASET, 0);
    }
    if (!elem && path_len > 0 && (k == OL_N_call || k == OL_N_identifier)) {
        /* `loss, aux = step(batch)`: each name gets its own element */
        ol_val v;
        if (ol_eval__elem_of_expr(m, expr, path[0], NULL, 0, &v)) {
            if (v.kind == OL_V_BOTTOM)
                v = UNKNOWN;
            for (int i = 1; i < path_len; i++)
                v = index_of_val(v, path[i]);
            return v;
        }
    }
    ol_val v = ol_eval(m, expr);
    if (elem)
        v = ol_eval__elem_of_val(v);
    /* `loss, scores = criterion(out, y)`, the loss function not known here:
     * what it hands back beside the loss carries the graph unless every
     * loss class of the run with a forward of that many parts returns that
     * part without one (dice scores as numpy arrays) */
    if (!elem && path_len > 0 && path[0] > 0 && k == OL_N_call && v.kind == OL_V_TENSOR && (v.flags & OL_VF_LOSS) &&
        m->links && m->links->loss_part) {
        int arity = unpacked_arity(m, expr);
        if (arity > path[0] && m->links->loss_part(m->links, m, arity, path[0]) == 0)
            return UNKNOWN;
    }
    for (int i = 0; i < path_len; i++)
        v = index_of_val(v, path[i]);
    return v;
}

/* ---- calls of known functions, element by element --------------------------------- */

uint32_t ol_callee_function(ol_model *m, ol_nid call)
{
    const ol_tree *t = m->tree;
    if (call == OL_NONE || ol_kind_of(t, call) != OL_N_call)
        return OL_NO_INDEX;
    ol_nid callee = ol_unparen(t, ol_field(t, call, OL_F_function));
    uint32_t ci = m->node_call[call];
    if (callee == OL_NONE)
        return OL_NO_INDEX;
    if (ol_kind_of(t, callee) == OL_N_attribute && ci != OL_NO_INDEX) {
        const ol_call *c = &m->calls.items[ci];
        ol_val rv = ol_eval(m, c->receiver);
        bool local_instance = (rv.kind == OL_V_MODULE || rv.kind == OL_V_INSTANCE) && (rv.flags & OL_VF_LOCAL);
        if ((local_instance || rv.kind == OL_V_CLASS) && rv.ref < m->classes.len)
            return ol_eval__find_method(m, rv.ref, c->name, 0);
        return OL_NO_INDEX;
    }
    ol_val cv = ol_eval(m, callee);
    return cv.kind == OL_V_FUNCTION && cv.ref < m->functions.len ? cv.ref : OL_NO_INDEX;
}

/* The project name a call runs, for the links: an imported function
 * (`evaluate`, `U.evaluate`) or a method of an instance of an imported class. */
static bool call_target(ol_model *m, ol_nid call, ol_sym *qual, ol_sym *method)
{
    const ol_tree *t = m->tree;
    ol_nid callee = ol_unparen(t, ol_field(t, call, OL_F_function));
    uint32_t ci = m->node_call[call];
    if (callee == OL_NONE || ci == OL_NO_INDEX)
        return false;
    if (ol_kind_of(t, callee) == OL_N_attribute) {
        ol_val rv = ol_eval(m, m->calls.items[ci].receiver);
        if ((rv.kind == OL_V_OBJECT || rv.kind == OL_V_MODULE) && rv.ref && !(rv.flags & OL_VF_LOCAL)) {
            *qual = rv.ref;
            *method = m->calls.items[ci].name;
            return true;
        }
        ol_val unused;
        if ((rv.kind == OL_V_MODULE || rv.kind == OL_V_INSTANCE) && (rv.flags & OL_VF_LOCAL) &&
            ol_eval__inherited(m, rv.ref, m->calls.items[ci].name, qual, &unused, 0)) {
            *method = m->calls.items[ci].name;
            return true;
        }
    }
    ol_val cv = ol_eval(m, callee);
    if (cv.kind != OL_V_EXTERN)
        return false;
    *qual = cv.ref;
    *method = 0;
    return true;
}

static bool function_element(ol_model *m, uint32_t fi, int index, const char *key, int depth, ol_val *out)
{
    if (fi >= m->functions.len || depth > 4)
        return false;
    size_t n = m->functions.items[fi].returns.len;
    if (n == 0 || n > 16)
        return false;
    ol_val r = BOTTOM;
    for (size_t i = 0; i < n; i++) {
        ol_val v;
        if (!ol_eval__elem_of_expr(m, m->functions.items[fi].returns.items[i], index, key, depth + 1, &v))
            return false;
        r = ol_val_join(r, v);
    }
    *out = r;
    return true;
}

bool ol_function_element(ol_model *m, uint32_t fi, int index, const char *key, ol_val *out)
{
    if (!function_element(m, fi, index, key, 0, out))
        return false;
    if (out->kind == OL_V_BOTTOM)
        *out = UNKNOWN;
    return true;
}

typedef struct dict_stores {
    const ol_tree *t;
    ol_nid *keys, *values;
    size_t n, cap;
} dict_stores;

static bool note_store(void *ctx, const ol_use *use)
{
    dict_stores *ds = ctx;
    switch (use->kind) {
    case OL_USE_READ:
        return true;
    case OL_USE_STORE:
        if (ol_kind_of(ds->t, use->key) != OL_N_string || ds->n == ds->cap)
            return false;
        ds->keys[ds->n] = use->key;
        ds->values[ds->n++] = use->value;
        return true;
    case OL_USE_ADD: /* append() and friends are no dict's; update() adds keys not known */
        return !ol_text_is(ds->t, use->method, "update") && !ol_text_is(ds->t, use->method, "setdefault") &&
               !ol_text_is(ds->t, use->method, "__setitem__");
    default:
        return false; /* passed on, held by another name, bound again: anything may be put in it */
    }
}

size_t ol_dict_stores(ol_model *m, uint32_t def, ol_nid *keys, ol_nid *values, size_t cap)
{
    dict_stores ds = {m->tree, keys, values, 0, cap};
    return ol_container_uses(m, def, note_store, &ds) ? ds.n : (size_t)-1;
}

/* The element `key` of the dict literal def binds, also through the stores
 * into it (`out = {}`, then `out["loss"] = loss`): false when the dict may
 * change otherwise, or has no such key. */
static bool stored_element(ol_model *m, uint32_t def, const char *key, ol_val *out)
{
    const ol_tree *t = m->tree;
    ol_nid dict = ol_unparen(t, m->defs.items[def].value);
    ol_nid keys[32], values[32];
    size_t n = ol_dict_stores(m, def, keys, values, 32);
    if (n == (size_t)-1)
        return false;
    ol_val r = BOTTOM;
    bool found = false;
    size_t klen = strlen(key);
    for (ol_nid c = ol_first_named(t, dict); c != OL_NONE; c = ol_next_named(t, c)) {
        const char *s;
        uint32_t len;
        if (ol_kind_of(t, c) != OL_N_pair)
            return false; /* **other: any key may come from it */
        if (ol_string_value(t, ol_field(t, c, OL_F_key), &s, &len) && klen == len && memcmp(s, key, len) == 0) {
            r = ol_val_join(r, ol_eval(m, ol_field(t, c, OL_F_value)));
            found = true;
        }
    }
    for (size_t i = 0; i < n; i++) {
        const char *s;
        uint32_t len;
        if (ol_string_value(t, keys[i], &s, &len) && klen == len && memcmp(s, key, len) == 0) {
            r = ol_val_join(r, ol_eval(m, values[i]));
            found = true;
        }
    }
    if (found)
        *out = r;
    return found;
}

/* Element `index` (of a tuple or list) or `key` (of a dict) of what e
 * evaluates to, read from literals, through names bound once to them and
 * through the returns of known functions. False when it cannot be read
 * element by element (then the whole value stands for each element). A
 * `None` contributes nothing (BOTTOM). */
bool ol_eval__elem_of_expr(ol_model *m, ol_nid e, int index, const char *key, int depth, ol_val *out)
{
    const ol_tree *t = m->tree;
    e = ol_unparen(t, e);
    if (e == OL_NONE || depth > 6)
        return false;
    ol_kind k = ol_kind_of(t, e);
    if (k == OL_N_none) {
        *out = BOTTOM;
        return true;
    }
    if (!key && index >= 0 && (k == OL_N_tuple || k == OL_N_list || k == OL_N_expression_list)) {
        int i = 0;
        for (ol_nid c = ol_first_named(t, e); c != OL_NONE; c = ol_next_named(t, c), i++) {
            if (ol_kind_of(t, c) == OL_N_list_splat)
                return false;
            if (i == index) {
                *out = ol_eval(m, c);
                return true;
            }
        }
        return false;
    }
    if (key && k == OL_N_dictionary) {
        for (ol_nid c = ol_first_named(t, e); c != OL_NONE; c = ol_next_named(t, c)) {
            if (ol_kind_of(t, c) != OL_N_pair)
                return false; /* **other: any key may come from it */
            const char *s;
            uint32_t len;
            if (ol_string_value(t, ol_field(t, c, OL_F_key), &s, &len) && strlen(key) == len &&
                memcmp(s, key, len) == 0) {
                *out = ol_eval(m, ol_field(t, c, OL_F_value));
                return true;
            }
        }
        return false;
    }
    if (k == OL_N_call) {
        uint32_t fi = ol_callee_function(m, e);
        bool found = false;
        ol_val mod = fi == OL_NO_INDEX ? ol_eval(m, ol_field(t, e, OL_F_function)) : UNKNOWN;
        if (fi != OL_NO_INDEX) {
            found = function_element(m, fi, index, key, depth, out);
        } else if (mod.kind == OL_V_MODULE && !(mod.flags & OL_VF_LOSSFN)) {
            /* `preds, lengths = decoder(x)`: what the module's forward() returns */
            if ((mod.flags & OL_VF_LOCAL) && mod.ref < m->classes.len) {
                uint32_t fwd = ol_eval__find_method(m, mod.ref, m->names.forward, 0);
                found = fwd != OL_NO_INDEX && function_element(m, fwd, index, key, depth, out);
            } else if (mod.ref && m->links) {
                found = m->links->call(m->links, m, mod.ref, m->names.forward, index, key, out);
            }
        }
        if (!found && fi == OL_NO_INDEX && m->links) {
            ol_sym qual, method;
            found = call_target(m, e, &qual, &method) && m->links->call(m->links, m, qual, method, index, key, out);
        }
        if (found && (out->flags & OL_VF_GRAPH) && ol_grad_disabled(m, e))
            out->flags &= (uint8_t)~OL_VF_GRAPH;
        return found;
    }
    if (k == OL_N_identifier) {
        uint32_t defs[8];
        size_t n = ol_reaching_defs(m, m->node_scope[e], ol_node_sym(m, e), e, defs, 8);
        if (n == 0 || n == 8)
            return false;
        if (n == 1 && !key && ol_eval__metric_output_param(m, defs[0])) {
            /* `y_pred, y = output`: only the predictions carry the graph */
            *out = mk(OL_V_TENSOR, index == 0 ? OL_VF_GRAPH : 0);
            return true;
        }
        ol_val r = BOTTOM;
        for (size_t i = 0; i < n; i++) {
            const ol_def *d = &m->defs.items[defs[i]];
            if (d->kind != OL_DEF_ASSIGN || d->path_len != 0 || d->starred)
                return false;
            ol_val v;
            if (key && ol_kind_of(t, ol_unparen(t, d->value)) == OL_N_dictionary) {
                if (!stored_element(m, defs[i], key, &v))
                    return false;
            } else if (!ol_eval__elem_of_expr(m, d->value, index, key, depth + 1, &v)) {
                return false;
            }
            r = ol_val_join(r, v);
        }
        *out = r;
        return true;
    }
    return false;
}

/* `out[0]`, `out["loss"]` on a container: the element itself when it can be read. */
bool ol_eval__subscript_element(ol_model *m, ol_nid subscript, ol_val *out)
{
    const ol_tree *t = m->tree;
    ol_nid idx = ol_field(t, subscript, OL_F_subscript);
    const char *s;
    uint32_t len;
    char key[64];
    bool found;
    if (ol_kind_of(t, idx) == OL_N_integer) {
        uint32_t tl;
        const char *txt = ol_text(t, idx, &tl);
        if (tl == 0 || tl > 2 || !isdigit((unsigned char)txt[0]) || (tl == 2 && !isdigit((unsigned char)txt[1])))
            return false;
        int index = tl == 1 ? txt[0] - '0' : (txt[0] - '0') * 10 + (txt[1] - '0');
        found = ol_eval__elem_of_expr(m, ol_field(t, subscript, OL_F_value), index, NULL, 0, out);
    } else if (ol_string_value(t, idx, &s, &len) && len < sizeof(key) && !memchr(s, '\0', len)) {
        memcpy(key, s, len);
        key[len] = '\0';
        found = ol_eval__elem_of_expr(m, ol_field(t, subscript, OL_F_value), -1, key, 0, out);
    } else {
        return false;
    }
    if (found && out->kind == OL_V_BOTTOM)
        *out = UNKNOWN;
    return found;
}

/* ---- parameters ---------------------------------------------------------------- */

ol_val ol_eval__annotation_value(ol_model *m, ol_nid ann)
{
    if (ann == OL_NONE)
        return UNKNOWN;
    ol_nid e = ann;
    if (ol_kind_of(m->tree, e) == OL_N_type)
        e = ol_first_named(m->tree, e);
    ol_val v = ol_eval(m, e);
    if (v.kind == OL_V_CLASS)
        return ol_eval__instance_of_class(m, v.ref);
    if (v.kind != OL_V_EXTERN)
        return UNKNOWN;
    const char *q = ol_sym_str(m, v.ref);
    if (qeq(q, "torch.nn.Module") || qeq(q, "torch.nn.modules.module.Module") ||
        ol_eval__base_is_module_qual(q, false))
        return mk(OL_V_MODULE, 0);
    if (qeq(q, "torch.optim.Optimizer") || qeq(q, "torch.optim.optimizer.Optimizer"))
        return mk(OL_V_OPTIMIZER, 0);
    if (qeq(last_part(q), "DataLoader"))
        return mk(OL_V_LOADER, 0);
    if (qeq(q, "torch.Tensor"))
        return mk(OL_V_TENSOR, 0);
    if (qeq(q, "builtins.int") || qeq(q, "builtins.float") || qeq(q, "builtins.bool"))
        return mk(OL_V_NUMBER, 0);
    if (qeq(q, "builtins.str"))
        return mk(OL_V_STRING, 0);
    if (qeq(q, "torch.device"))
        return mk(OL_V_DEVICE, 0);
    /* a class of another file of the run (`model: Transformer` with the
     * class in model.py): an instance of it, as calling it would make */
    ol_val linked;
    if (m->links && m->links->call && m->links->call(m->links, m, v.ref, 0, -1, NULL, &linked) &&
        (linked.kind == OL_V_MODULE || linked.kind == OL_V_OBJECT))
        return linked;
    return UNKNOWN;
}

ol_nid ol_call_arg_for(ol_model *m, ol_nid call, bool shift, const ol_def *d, bool *splat)
{
    const ol_tree *t = m->tree;
    *splat = false;
    ol_nid args = ol_field(t, call, OL_F_arguments);
    if (args == OL_NONE)
        return OL_NONE;
    uint32_t index = d->index;
    /* self.method(a), Cls(a): a is the second parameter */
    if (shift) {
        if (index == 0)
            return OL_NONE;
        index--;
    }
    const char *name = ol_sym_str(m, d->name);
    uint32_t pos = 0;
    for (ol_nid a = ol_first_named(t, args); a != OL_NONE; a = ol_next_named(t, a)) {
        ol_kind k = ol_kind_of(t, a);
        if (k == OL_N_keyword_argument) {
            if (ol_text_is(t, ol_field(t, a, OL_F_name), name))
                return ol_field(t, a, OL_F_value);
            continue;
        }
        if (k == OL_N_list_splat || k == OL_N_dictionary_splat) {
            *splat = true;
            continue;
        }
        if (pos == index && !*splat)
            return a;
        pos++;
    }
    return OL_NONE;
}

ol_nid ol_callsite_arg(ol_model *m, const ol_function *f, const ol_call *c, const ol_def *d, bool *splat)
{
    return ol_call_arg_for(m, c->node, f->is_method && c->receiver != OL_NONE, d, splat);
}

/* The `output` of a metric's update(output), called by the engine with each
 * batch's output: `(y_pred, y)`, the model's predictions (graph and all, in a
 * training run) and the batch's targets; also the parameter of the override
 * of a method that update() calls with it. */
bool ol_eval__metric_output_param(ol_model *m, uint32_t di)
{
    const ol_def *d = &m->defs.items[di];
    if (d->kind != OL_DEF_PARAM || d->index != 1 || d->starred)
        return false;
    uint32_t fi = m->scopes.items[d->scope].function;
    return fi != OL_NO_INDEX && m->functions.items[fi].callsites.len == 0 && ol_function_per_batch_metric(m, fi);
}

/* What the constructor calls of this file pass for parameter di of a
 * class's `__init__` (`Trainer(model=model, ...)`), when each of them passes
 * a dict or list of models (`model = {"generator": G(...), ...}`): the
 * container, so that `self.model["generator"](x)` is a model's forward.
 * Any other argument leaves the parameter as its name and annotation say:
 * only a container of models is told this way. */
/* The calls of the bare name `name` (no receiver), in the order of the
 * file: *count of them from the returned key on (the call's index is its
 * low 32 bits). One sorted index per model, so that asking about each
 * class's constructor calls does not walk every call of a file with
 * thousands of classes once per class. */
static const uint64_t *plain_calls_of(ol_model *m, ol_sym name, size_t *count)
{
    if (!m->plain_calls_built) {
        m->plain_calls_built = true;
        size_t n = 0;
        for (size_t ci = 0; ci < m->calls.len; ci++)
            n += m->calls.items[ci].name && m->calls.items[ci].receiver == OL_NONE;
        m->plain_calls = n ? ol_xmalloc(n * sizeof(uint64_t)) : NULL;
        for (size_t ci = 0; ci < m->calls.len; ci++)
            if (m->calls.items[ci].name && m->calls.items[ci].receiver == OL_NONE)
                m->plain_calls[m->plain_calls_len++] = (uint64_t)m->calls.items[ci].name << 32 | (uint32_t)ci;
        ol_sort(m->plain_calls, n, sizeof(uint64_t), ol_cmp_u64);
    }
    size_t lo = 0, hi = m->plain_calls_len;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if ((m->plain_calls[mid] >> 32) < name)
            lo = mid + 1;
        else
            hi = mid;
    }
    size_t end = lo;
    while (end < m->plain_calls_len && (m->plain_calls[end] >> 32) == name)
        end++;
    *count = end - lo;
    return m->plain_calls ? m->plain_calls + lo : NULL;
}

static bool constructor_passes_models(ol_model *m, const ol_function *f, const ol_def *d, ol_val *out)
{
    const ol_tree *t = m->tree;
    if (!f->is_method || f->cls >= m->classes.len || f->name != m->names.__init__ || d->index == 0 ||
        d->index == OL_NO_INDEX)
        return false;
    ol_sym cname = m->classes.items[f->cls].name;
    const char *pname = ol_sym_str(m, d->name);
    ol_val r = BOTTOM;
    size_t seen = 0, count;
    const uint64_t *calls = plain_calls_of(m, cname, &count);
    for (size_t i = 0; i < count && seen < 16; i++) {
        const ol_call *c = &m->calls.items[(uint32_t)calls[i]];
        ol_val cv = ol_eval(m, c->callee);
        if (cv.kind != OL_V_CLASS || cv.ref != f->cls)
            continue;
        seen++;
        ol_nid args = ol_field(t, c->node, OL_F_arguments), arg = OL_NONE;
        uint32_t pos = 0;
        for (ol_nid a = args != OL_NONE ? ol_first_named(t, args) : OL_NONE; a != OL_NONE; a = ol_next_named(t, a)) {
            ol_kind k = ol_kind_of(t, a);
            if (k == OL_N_keyword_argument) {
                if (ol_text_is(t, ol_field(t, a, OL_F_name), pname))
                    arg = ol_field(t, a, OL_F_value);
                continue;
            }
            if (k == OL_N_list_splat || k == OL_N_dictionary_splat)
                return false; /* positions unknown from here */
            if (++pos == d->index)
                arg = a;
        }
        ol_val v = arg != OL_NONE ? ol_eval(m, arg) : UNKNOWN;
        if ((v.kind != OL_V_DICT && v.kind != OL_V_LIST) || v.info != OL_V_MODULE)
            return false;
        r = ol_val_join(r, v);
    }
    if (seen == 0 || r.info != OL_V_MODULE)
        return false;
    *out = r;
    return true;
}

ol_val ol_eval__param_value(ol_model *m, uint32_t di)
{
    const ol_def *d = &m->defs.items[di];
    uint32_t fi = m->scopes.items[d->scope].function;
    if (fi == OL_NO_INDEX)
        return UNKNOWN;
    const ol_function *f = &m->functions.items[fi];
    if (d->starred)
        return d->index == OL_NO_INDEX ? mk(OL_V_OBJECT, 0) : UNKNOWN;
    if (d->index == 0 && f->is_method && f->cls != OL_NO_INDEX) {
        if (f->is_classmethod)
            return mk_ref(OL_V_CLASS, 0, f->cls);
        return ol_eval__instance_of_class(m, f->cls);
    }
    ol_val r = BOTTOM;
    size_t nsites = f->callsites.len;
    if (ol_eval__metric_output_param(m, di))
        return mk(OL_V_TUPLE, OL_VF_ELEM_GRAPH);
    for (size_t i = 0; i < nsites && i < 32; i++) {
        f = &m->functions.items[fi];
        d = &m->defs.items[di];
        const ol_call *c = &m->calls.items[f->callsites.items[i]];
        bool splat;
        ol_nid arg = ol_callsite_arg(m, f, c, d, &splat);
        if (arg != OL_NONE)
            r = ol_val_join(r, ol_eval(m, arg));
        else if (splat)
            r = ol_val_join(r, UNKNOWN);
        else if (d->value != OL_NONE)
            r = ol_val_join(r, ol_eval(m, d->value));
    }
    d = &m->defs.items[di];
    if (r.kind == OL_V_BOTTOM && nsites == 0) {
        ol_val held;
        if (constructor_passes_models(m, &m->functions.items[fi], d, &held))
            return held;
        d = &m->defs.items[di];
    }
    if (r.kind == OL_V_BOTTOM || r.kind == OL_V_UNKNOWN) {
        ol_val a = ol_eval__annotation_value(m, d->annotation);
        if (a.kind != OL_V_UNKNOWN)
            return a;
        if (r.kind == OL_V_BOTTOM && d->value != OL_NONE) {
            ol_val dv = ol_eval(m, d->value);
            if (dv.kind != OL_V_NONE && dv.kind != OL_V_UNKNOWN)
                return dv;
        }
        return ol_eval__guess_from_name(m, d->name);
    }
    return r;
}
