/*
 * OOM301 dataset-moved-to-device: a whole dataset moved to the GPU before
 * the batch loop (`X = torch.tensor(data).cuda()`, `X_train.to(device)`,
 * `TensorDataset(X.cuda(), y.cuda())`, a Dataset that moves its tensors in
 * __init__), when the moved tensor is then used as a dataset: wrapped in a
 * Dataset or DataLoader, sliced or indexed by batch in a loop (also by an
 * index variable drawn each step: see ol_index_draws_batch), iterated, or indexed
 * in __getitem__; a cross-validation fold moved then cut; and data read from
 * disk fed whole to the model's forward in a file that trains in batches.
 * Also a Python list of every sample read from data, moved at once by a
 * helper that returns what it is given on the GPU, when the model then runs
 * on it (inference over a list of inputs).
 *
 * What does not count: moves inside a loop that draws batches (that is the
 * right place), batches drawn from a loader, and constants (mean/std, class
 * weights, fixed noise) that are never sliced per batch.
 */
#include <stdlib.h>
#include <string.h>

#include "rule.h"

static bool in_data_loop(ol_model *m, ol_nid n)
{
    for (uint32_t l = m->node_loop[n]; l != OL_NO_INDEX; l = m->loops.items[l].parent)
        if (ol_loop_is_data_loop(m, l))
            return true;
    return false;
}

/* A call that builds a dataset or loader: TensorDataset, DataLoader, a local Dataset class. */
static bool dataset_constructor(ol_model *m, ol_nid call)
{
    const ol_tree *t = m->tree;
    ol_nid callee = ol_field(t, call, OL_F_function);
    const char *q = ol_qualname(m, callee);
    if (q) {
        const char *last = strrchr(q, '.');
        last = last ? last + 1 : q;
        return ol_str_has_suffix(last, "Dataset") || strcmp(last, "DataLoader") == 0;
    }
    ol_val v = ol_eval(m, callee);
    if (v.kind == OL_V_CLASS && v.ref < m->classes.len) {
        const char *name = ol_sym_str(m, m->classes.items[v.ref].name);
        return ol_str_has_suffix(name, "Dataset") || ol_str_has_suffix(name, "DataLoader");
    }
    return false;
}

/* Is n inside a loop that does not also hold `target`, where the tensor is
 * bound, and that may run a model? A tensor bound in the loop that cuts it
 * (`for ids in items: t = torch.tensor(ids, device=d); t = t[:n]`) is that
 * iteration's item, made afresh each time, not a dataset; and a loop that
 * runs no model stores or rearranges what it cuts. */
static bool in_loop_outside(ol_model *m, ol_nid n, ol_nid target)
{
    for (uint32_t l = m->node_loop[n]; l != OL_NO_INDEX; l = m->loops.items[l].parent)
        if (target == OL_NONE || !ol_contains(m->tree, m->loops.items[l].node, target))
            return !ol_loop_runs_no_model(m, m->node_loop[n]);
    return false;
}

/* Does the function `call` runs draw batches from the parameter that `arg`
 * fills (per its summary): in a loop of its own, or cut per call inside
 * the caller's loop (one that does not hold target, see in_loop_outside)? */
static bool sliced_by_callee(ol_model *m, ol_nid call, ol_nid arg, ol_nid target)
{
    uint32_t ci = ol_call_at(m, call);
    ol_callee callee;
    const ol_callee *fs = ci != OL_NO_INDEX && ol_callee_of(m, ci, &callee) ? &callee : NULL;
    bool cross = fs && fs->cross_file;
    uint32_t cut = fs ? fs->param_batched | (in_loop_outside(m, call, target) ? fs->param_sliced : 0) : 0;
    for (uint32_t p = 0; cut && p < fs->param_count; p++)
        if ((cut & (1u << p)) && ol_callee_arg(m, ci, fs, p) == arg)
            return true;
    /* a function of this file that hands the parameter, in a loop, to a
     * batch helper of another file (`evaluate(val_data)` calling
     * `get_batch(data_source, i)` from utils.py) */
    uint32_t fi = fs && !cross ? ol_callee_function(m, call) : OL_NO_INDEX;
    if (fi == OL_NO_INDEX)
        return false;
    for (uint32_t p = 0; p < fs->param_count; p++) {
        if (ol_callee_arg(m, ci, fs, p) != arg)
            continue;
        size_t first, end = ol_calls_in(m, m->functions.items[fi].node, &first);
        for (size_t k = first; k < end; k++) {
            const ol_call *inner = &m->calls.items[k];
            ol_callee inner_callee;
            const ol_callee *is = ol_function_of(m, inner->node) == fi && m->node_loop[inner->node] != OL_NO_INDEX &&
                                          ol_callee_of(m, (uint32_t)k, &inner_callee)
                                      ? &inner_callee
                                      : NULL;
            if (!is || !is->cross_file)
                continue;
            for (uint32_t q = 0; q < is->param_count; q++) {
                ol_nid a = ((is->param_sliced | is->param_batched) & (1u << q)) ? ol_callee_arg(m, (uint32_t)k, is, q)
                                                                               : OL_NONE;
                if (a != OL_NONE && ol_kind_of(m->tree, a) == OL_N_identifier &&
                    ol_text_is(m->tree, a, fs->params[p]))
                    return true;
            }
        }
    }
    return false;
}

/* What counts as using a bound tensor as a dataset: cut per batch in a
 * loop, iterated or wrapped (USE_CUT); only wrapped in a Dataset or
 * DataLoader (USE_WRAPPED: where nothing trains); or handed whole to a
 * model's forward in a loop or an evaluation function (USE_FED_WHOLE). */
enum { USE_CUT, USE_WRAPPED, USE_FED_WHOLE };

/* Is the function that holds n an evaluation (`evaluate`, `validate`,
 * `test_epoch`, `predict`)? */
static bool in_eval_function(ol_model *m, ol_nid n)
{
    uint32_t fn = ol_function_of(m, n);
    if (fn == OL_NO_INDEX)
        return false;
    const char *name = ol_sym_str(m, m->functions.items[fn].name);
    return strstr(name, "eval") || strstr(name, "valid") || strstr(name, "test") || strstr(name, "predict");
}

/* Is `use` a direct argument of a model's forward (not a loss module
 * taking the labels) that evaluates: under no_grad or in an evaluation
 * function? *call_out is that call. */
static bool evaluated_whole(ol_model *m, ol_nid use, ol_nid *call_out)
{
    const ol_tree *t = m->tree;
    ol_nid p = ol_parent(t, use);
    if (ol_kind_of(t, p) != OL_N_argument_list)
        return false;
    ol_nid call = ol_parent(t, p);
    if (call == OL_NONE || ol_kind_of(t, call) != OL_N_call)
        return false;
    ol_val callee = ol_eval(m, ol_field(t, call, OL_F_function));
    if (callee.kind != OL_V_MODULE || (callee.flags & OL_VF_LOSSFN))
        return false;
    *call_out = call;
    return in_eval_function(m, call) || !ol_grad_on(m, call, NULL);
}

/* Does a function of this file that `call` runs hand the parameter that
 * `arg` fills whole to a model's forward that evaluates
 * (`evaluate(model, X_val)` running `model(X)` under no_grad)? */
static bool param_evaluated_whole(ol_model *m, ol_nid call, ol_nid arg)
{
    const ol_tree *t = m->tree;
    uint32_t ci = ol_call_at(m, call);
    ol_callee callee;
    const ol_callee *fs = ci != OL_NO_INDEX && ol_callee_of(m, ci, &callee) ? &callee : NULL;
    uint32_t fi = fs && !fs->cross_file ? ol_callee_function(m, call) : OL_NO_INDEX;
    if (fi == OL_NO_INDEX)
        return false;
    const ol_function *f = &m->functions.items[fi];
    for (uint32_t p = 0; p < fs->param_count; p++) {
        if (ol_callee_arg(m, ci, fs, p) != arg)
            continue;
        for (size_t i = 0; i < f->params.len; i++) {
            const ol_def *d = &m->defs.items[f->params.items[i]];
            if (strcmp(ol_sym_str(m, d->name), fs->params[p]) != 0)
                continue;
            for (ol_nid n = f->node; n < m->subtree_end[f->node]; n++) {
                if (ol_kind_of(t, n) != OL_N_identifier || ol_node_sym(m, n) != d->name ||
                    ol_function_of(m, n) != fi)
                    continue;
                uint32_t defs[4];
                size_t count = ol_reaching_defs(m, m->node_scope[n], d->name, n, defs, 4);
                ol_nid fwd;
                for (size_t k = 0; k < count; k++)
                    if (defs[k] == f->params.items[i] && evaluated_whole(m, n, &fwd))
                        return true;
            }
        }
    }
    return false;
}

/* Is `use` handed whole, as an argument, to a model's forward (`model(X_val)`)
 * that evaluates (under no_grad or in an evaluation function) and runs in a
 * loop not holding the binding or in an evaluation function of its own,
 * directly or through an evaluation helper of this file it is passed to? */
static bool fed_whole(ol_model *m, ol_nid use, ol_nid target)
{
    const ol_tree *t = m->tree;
    ol_nid call = OL_NONE;
    if (!evaluated_whole(m, use, &call)) {
        ol_nid p = ol_parent(t, use);
        call = ol_kind_of(t, p) == OL_N_argument_list ? ol_parent(t, p) : OL_NONE;
        if (call == OL_NONE || ol_kind_of(t, call) != OL_N_call || !param_evaluated_whole(m, call, use))
            return false;
    }
    if (in_loop_outside(m, call, target))
        return true;
    if (in_eval_function(m, call) && ol_function_of(m, call) != ol_function_of(m, target))
        return true;
    /* a function that reads, moves and evaluates the set itself, called
     * again each epoch (`validate(model, "val.pt")` in the epoch loop) */
    ol_often often = ol_how_often(m, call, NULL);
    return often == OL_PER_EPOCH || often == OL_PER_STEP;
}

/* Does loop li run a model on what it draws (a forward call in its body)?
 * Walking a tensor's rows only to add up a loss (`for g, logp in zip(G,
 * log_probs): loss += -g * logp`) is not batching a dataset. */
static bool loop_runs_model(ol_model *m, uint32_t li)
{
    ol_nid body = m->loops.items[li].body;
    if (body == OL_NONE)
        return false;
    size_t first = 0;
    size_t end = ol_calls_in(m, body, &first);
    for (size_t i = first; i < end; i++)
        if (ol_is_forward_call(m, (uint32_t)i))
            return true;
    return false;
}

/* Is `use` (`self.x`) indexed for reading in the `__getitem__` of a
 * Dataset class (ol_method_of_dataset)? */
static bool indexed_by_dataset(ol_model *m, ol_nid use)
{
    const ol_tree *t = m->tree;
    ol_nid p = ol_parent(t, use);
    if (p == OL_NONE || ol_kind_of(t, p) != OL_N_subscript || ol_field(t, p, OL_F_value) != use ||
        ol_kind_of(t, use) != OL_N_attribute)
        return false;
    uint32_t fn = ol_function_of(m, p);
    if (fn == OL_NO_INDEX || strcmp(ol_sym_str(m, m->functions.items[fn].name), "__getitem__") != 0 ||
        !ol_method_of_dataset(m, fn, NULL))
        return false;
    ol_nid gp = ol_parent(t, p);
    ol_kind gk = ol_kind_of(t, gp);
    return !((gk == OL_N_assignment || gk == OL_N_augmented_assignment) && ol_field(t, gp, OL_F_left) == p);
}

/* How is the tensor bound at `target` used as a dataset at `use` (an
 * identifier or self.attr use)? */
static bool used_as_dataset(ol_model *m, ol_nid use, ol_nid target, int mode)
{
    const ol_tree *t = m->tree;
    ol_nid p = ol_parent(t, use);
    if (p == OL_NONE)
        return false;
    if (mode == USE_FED_WHOLE)
        return fed_whole(m, use, target);
    bool wrapped_only = mode == USE_WRAPPED;
    ol_kind pk = ol_kind_of(t, p);
    /* for xb in X, X.split(bs) as a loop iterable */
    uint32_t over[16];
    size_t loops_over = wrapped_only ? 0 : ol_loops_iterating(m, use, over, 16);
    for (size_t k = 0; k < loops_over; k++) {
        uint32_t i = over[k];
        ol_nid it = m->loops.items[i].iter;
        ol_nid u = ol_unparen(t, it);
        /* a comprehension over the rows (`[tok.decode(t) for t in toks]`)
         * reads a result; only one over batches cut from it counts */
        bool comprehension = m->loops.items[i].kind == OL_LOOP_COMPREHENSION;
        if (u == use)
            return !comprehension && loop_runs_model(m, i);
        if (ol_kind_of(t, u) == OL_N_call) {
            /* zip(X, y), X.split(bs), torch.split(X, bs), enumerate(X) */
            ol_nid args = ol_field(t, u, OL_F_arguments);
            ol_nid callee = ol_field(t, u, OL_F_function);
            if (p == args)
                return !comprehension && loop_runs_model(m, i);
            if (pk == OL_N_attribute && p == callee && ol_field(t, p, OL_F_object) == use) {
                ol_nid meth = ol_field(t, p, OL_F_attribute);
                /* `weights.split("|")` splits a string (the same name bound to
                 * text on this path), not a tensor into batches */
                ol_nid sep = ol_first_named(t, args);
                const char *sv;
                uint32_t sl;
                if (sep != OL_NONE && ol_string_value(t, ol_unparen(t, sep), &sv, &sl))
                    return false;
                return ol_text_is(t, meth, "split") || ol_text_is(t, meth, "chunk");
            }
        }
    }
    /* TensorDataset(X, y), DataLoader(X); get_batch(X, i) in a loop, where
     * get_batch slices that parameter batch by batch */
    if (pk == OL_N_argument_list || pk == OL_N_keyword_argument) {
        ol_nid call = pk == OL_N_argument_list ? ol_parent(t, p) : ol_parent(t, ol_parent(t, p));
        if (call == OL_NONE || ol_kind_of(t, call) != OL_N_call)
            return false;
        if (dataset_constructor(m, call))
            return true;
        if (wrapped_only)
            return false;
        /* torch.index_select(X, 0, idx) with a batch of indices */
        const char *q = ol_qualname(m, ol_field(t, call, OL_F_function));
        if (q && strcmp(q, "torch.index_select") == 0 && ol_call_arg(m, call, 0, "input") == use)
            return ol_index_draws_batch(m, ol_call_arg(m, call, 2, "index")) && in_loop_outside(m, call, target);
        return sliced_by_callee(m, call, use, target);
    }
    /* where nothing trains, a Dataset's own `__getitem__` indexing what its
     * `__init__` stored still serves the whole set, item by item */
    if (wrapped_only)
        return indexed_by_dataset(m, use);
    /* X.index_select(0, idx) with a batch of indices */
    if (pk == OL_N_attribute && ol_field(t, p, OL_F_object) == use &&
        ol_text_is(t, ol_field(t, p, OL_F_attribute), "index_select")) {
        ol_nid call = ol_parent(t, p);
        return call != OL_NONE && ol_kind_of(t, call) == OL_N_call && ol_field(t, call, OL_F_function) == p &&
               ol_index_draws_batch(m, ol_call_arg(m, call, 1, "index")) && in_loop_outside(m, call, target);
    }
    /* X[i:i + bs], X[idx] inside a loop or in __getitem__ */
    if (pk == OL_N_subscript && ol_field(t, p, OL_F_value) == use) {
        ol_nid index = ol_field(t, p, OL_F_subscript);
        bool getitem = false;
        uint32_t gf = ol_function_of(m, p);
        if (gf != OL_NO_INDEX && strcmp(ol_sym_str(m, m->functions.items[gf].name), "__getitem__") == 0)
            getitem = true;
        if (!getitem && !ol_index_draws_batch(m, index))
            return false;
        /* writing into it (obs[step] = x) makes it a buffer, not a dataset */
        ol_nid gp = ol_parent(t, p);
        ol_kind gk = ol_kind_of(t, gp);
        if ((gk == OL_N_assignment || gk == OL_N_augmented_assignment) && ol_field(t, gp, OL_F_left) == p)
            return false;
        if (gk == OL_N_delete_statement || gk == OL_N_pattern_list)
            return false;
        return getitem || in_loop_outside(m, p, target);
    }
    return false;
}

/* Every use of the binding made at `target` (an identifier or self.attr),
 * checked for dataset use. The uses are found by the name's spelling (an
 * attribute's by its last name), not by reading the file; an attribute's
 * in the methods of its class and of the classes it derives from or that
 * derive from it (another class's `self.data` is another object's). */
static bool binding_used_as_dataset(ol_model *m, ol_nid target, uint32_t def, int mode)
{
    const ol_tree *t = m->tree;
    bool attr = ol_kind_of(t, target) == OL_N_attribute;
    ol_nid key = attr ? ol_field(t, target, OL_F_attribute) : target;
    if (key == OL_NONE || ol_kind_of(t, key) != OL_N_identifier)
        return false;
    /* a name bound in a function (or class body) is read only inside it */
    ol_nid scope = attr ? 0 : m->scopes.items[m->defs.items[def].scope].node;
    uint32_t owner = attr ? m->scopes.items[m->defs.items[def].scope].cls : OL_NO_INDEX;
    size_t count;
    const ol_nid *uses = ol_name_uses(m, key, scope, m->subtree_end[scope], &count, NULL);
    for (size_t i = 0; i < count; i++) {
        ol_nid n = uses[i];
        if (attr) {
            /* `self.data`: the attribute whose last name this is */
            ol_nid p = ol_parent(t, n);
            if (ol_kind_of(t, p) != OL_N_attribute || ol_field(t, p, OL_F_attribute) != n ||
                !ol_same_text(t, p, target))
                continue;
            uint32_t fn = ol_function_of(m, p);
            uint32_t cls = fn != OL_NO_INDEX ? m->functions.items[fn].cls : OL_NO_INDEX;
            if (owner != OL_NO_INDEX && cls != OL_NO_INDEX && !ol_class_derives(m, cls, owner) &&
                !ol_class_derives(m, owner, cls))
                continue;
            n = p;
        } else {
            if (!ol_same_text(t, n, target))
                continue;
            uint32_t defs[16];
            size_t nd = ol_reaching_defs(m, m->node_scope[n], ol_node_sym(m, n), n, defs, 16);
            bool reaches = false;
            for (size_t k = 0; k < nd; k++)
                reaches |= defs[k] == def;
            if (!reaches)
                continue;
        }
        if (n != target && used_as_dataset(m, n, target, mode))
            return true;
    }
    return false;
}

/* Is loop a loop over cross-validation folds: `for tr, va in
 * kf.split(X)` (also under enumerate), whose targets are arrays of sample
 * indices? A tensor's or a string's split yields items, not index pairs. */
static bool fold_loop(ol_model *m, const ol_loop *loop)
{
    const ol_tree *t = m->tree;
    if (loop->kind != OL_LOOP_FOR || loop->iter == OL_NONE)
        return false;
    ol_nid target = ol_unparen(t, ol_field(t, loop->node, OL_F_left));
    ol_nid it = ol_unparen(t, loop->iter);
    const char *q = ol_kind_of(t, it) == OL_N_call ? ol_qualname(m, ol_field(t, it, OL_F_function)) : NULL;
    if (q && strcmp(q, "builtins.enumerate") == 0) {
        it = ol_unparen(t, ol_call_arg(m, it, 0, NULL));
        /* for k, (tr, va) in enumerate(...): the pair */
        ol_nid second = ol_kind_of(t, target) == OL_N_pattern_list || ol_kind_of(t, target) == OL_N_tuple_pattern
                            ? ol_next_named(t, ol_first_named(t, target))
                            : OL_NONE;
        target = ol_unparen(t, second);
    }
    if (target == OL_NONE || (ol_kind_of(t, target) != OL_N_pattern_list && ol_kind_of(t, target) != OL_N_tuple_pattern))
        return false;
    if (it == OL_NONE || ol_kind_of(t, it) != OL_N_call)
        return false;
    ol_nid callee = ol_field(t, it, OL_F_function);
    if (ol_kind_of(t, callee) != OL_N_attribute || !ol_text_is(t, ol_field(t, callee, OL_F_attribute), "split"))
        return false;
    ol_val rv = ol_eval(m, ol_field(t, callee, OL_F_object));
    if (rv.kind == OL_V_TENSOR || rv.kind == OL_V_ARRAY || rv.kind == OL_V_STRING || rv.kind == OL_V_LIST)
        return false;
    ol_nid args = ol_field(t, it, OL_F_arguments);
    ol_nid a = ol_first_named(t, args);
    const char *sv;
    uint32_t sl;
    return a != OL_NONE && !ol_string_value(t, ol_unparen(t, a), &sv, &sl) && ol_kind_of(t, a) != OL_N_integer;
}

/* Is every mention of name in e the index of a subscript (`X[train_idx]`)? */
static bool only_indexes(const ol_tree *t, ol_nid e, ol_nid name)
{
    bool any = false;
    for (ol_nid n = e; n < t->nodes.len && t->nodes.items[n].start < t->nodes.items[e].end; n++) {
        if (ol_kind_of(t, n) != OL_N_identifier || !ol_same_text(t, n, name))
            continue;
        bool indexed = false;
        for (ol_nid c = n, p = ol_parent(t, n); p != OL_NONE && c != e && !indexed; c = p, p = ol_parent(t, p))
            indexed = ol_kind_of(t, p) == OL_N_subscript && ol_field(t, p, OL_F_value) != c;
        if (!indexed)
            return false;
        any = true;
    }
    return any;
}

/* Does the moved expression e select a fold of a dataset by the index
 * arrays an enclosing cross-validation loop binds (`X[train_idx]`)? */
static bool moves_fold(ol_model *m, ol_nid e)
{
    const ol_tree *t = m->tree;
    for (uint32_t l = m->node_loop[e]; l != OL_NO_INDEX; l = m->loops.items[l].parent) {
        const ol_loop *loop = &m->loops.items[l];
        if (!fold_loop(m, loop))
            continue;
        ol_nid target = ol_field(t, loop->node, OL_F_left);
        for (ol_nid n = target; n != OL_NONE && n < m->subtree_end[target]; n++)
            if (ol_kind_of(t, n) == OL_N_identifier && ol_mentions(t, e, n) && only_indexes(t, e, n))
                return true;
    }
    return false;
}

/* Is e (or part of it) a variable the enclosing for-loops bind each
 * iteration? Then what is moved is this iteration's item, not a dataset.
 * A cross-validation fold's index array used as an index (`X[train_idx]`)
 * selects from the dataset: that is no item. */
static bool moves_loop_variable(ol_model *m, ol_nid e)
{
    const ol_tree *t = m->tree;
    for (uint32_t l = m->node_loop[e]; l != OL_NO_INDEX; l = m->loops.items[l].parent) {
        const ol_loop *loop = &m->loops.items[l];
        if (loop->kind == OL_LOOP_WHILE)
            continue;
        if (loop->kind == OL_LOOP_FOR) {
            bool folds = fold_loop(m, loop);
            ol_nid target = ol_field(t, loop->node, OL_F_left);
            for (ol_nid n = target; n != OL_NONE && n < m->subtree_end[target]; n++)
                if (ol_kind_of(t, n) == OL_N_identifier && ol_mentions(t, e, n) && !(folds && only_indexes(t, e, n)))
                    return true;
            continue;
        }
        /* [x.cuda() for x in items]: the for clauses' targets */
        for (ol_nid clause = ol_first_named(t, loop->node); clause != OL_NONE; clause = ol_next_named(t, clause)) {
            if (ol_kind_of(t, clause) != OL_N_for_in_clause)
                continue;
            ol_nid target = ol_field(t, clause, OL_F_left);
            for (ol_nid n = target; n != OL_NONE && n < m->subtree_end[target]; n++)
                if (ol_kind_of(t, n) == OL_N_identifier && ol_mentions(t, e, n))
                    return true;
        }
    }
    return false;
}

/* Is the value that expression `value` (inside statement stmt) produces used
 * as a dataset: an argument of a dataset constructor, or bound to a name
 * (or self attribute) that is then sliced, iterated or wrapped? */
static bool result_used_as_dataset(ol_model *m, ol_nid stmt, ol_nid value, int pos, int mode)
{
    const ol_tree *t = m->tree;
    for (ol_nid p = ol_parent(t, value); p != OL_NONE && p != stmt && mode != USE_FED_WHOLE; p = ol_parent(t, p)) {
        if (ol_kind_of(t, p) != OL_N_argument_list)
            continue;
        ol_nid ctor = ol_parent(t, p);
        for (ol_nid a = ol_first_named(t, p); a != OL_NONE; a = ol_next_named(t, a))
            if (ol_method_chain_holds(m, a, value) && dataset_constructor(m, ctor))
                return true;
    }
    ol_nid assign = ol_kind_of(t, stmt) == OL_N_expression_statement ? ol_first_named(t, stmt) : OL_NONE;
    if (assign == OL_NONE || ol_kind_of(t, assign) != OL_N_assignment ||
        !ol_contains(t, ol_field(t, assign, OL_F_right), value))
        return false;
    ol_nid left = ol_unparen(t, ol_field(t, assign, OL_F_left));
    ol_nid right = ol_unparen(t, ol_field(t, assign, OL_F_right));
    if ((ol_kind_of(t, left) == OL_N_identifier || ol_kind_of(t, left) == OL_N_attribute) &&
        ol_method_chain_holds(m, right, value)) {
        uint32_t def = ol_def_of_target(m, left);
        return def != OL_NO_INDEX && binding_used_as_dataset(m, left, def, mode);
    }
    if ((ol_kind_of(t, left) == OL_N_pattern_list || ol_kind_of(t, left) == OL_N_tuple_pattern) &&
        (ol_kind_of(t, right) == OL_N_expression_list || ol_kind_of(t, right) == OL_N_tuple)) {
        /* X, y = X.cuda(), y.cuda(): the target paired with this move */
        ol_nid tgt = ol_first_named(t, left);
        for (ol_nid val = ol_first_named(t, right); val != OL_NONE && tgt != OL_NONE;
             val = ol_next_named(t, val), tgt = ol_next_named(t, tgt)) {
            if (!ol_method_chain_holds(m, val, value) || ol_kind_of(t, tgt) != OL_N_identifier)
                continue;
            uint32_t def = ol_def_of_target(m, tgt);
            if (def != OL_NO_INDEX && binding_used_as_dataset(m, tgt, def, mode))
                return true;
        }
        return false;
    }
    if ((ol_kind_of(t, left) == OL_N_pattern_list || ol_kind_of(t, left) == OL_N_tuple_pattern) &&
        ol_method_chain_holds(m, right, value)) {
        /* train_x, train_y = load_split(...): any target used as a dataset,
         * or the one at pos when the value is known to be that element of
         * a returned tuple */
        int k = 0;
        for (ol_nid tgt = ol_first_named(t, left); tgt != OL_NONE; tgt = ol_next_named(t, tgt), k++) {
            if (ol_kind_of(t, tgt) != OL_N_identifier || (pos >= 0 && k != pos))
                continue;
            uint32_t def = ol_def_of_target(m, tgt);
            if (def != OL_NO_INDEX && binding_used_as_dataset(m, tgt, def, mode))
                return true;
        }
    }
    return false;
}

/* Which element of a returned tuple (`return x, y`) holds e, or -1 when e
 * is the whole returned value. */
static int returned_element(const ol_tree *t, ol_nid v, ol_nid e, bool same_name)
{
    v = ol_unparen(t, v);
    if (ol_kind_of(t, v) != OL_N_expression_list && ol_kind_of(t, v) != OL_N_tuple)
        return -1;
    int k = 0;
    for (ol_nid el = ol_first_named(t, v); el != OL_NONE; el = ol_next_named(t, el), k++)
        if (same_name ? ol_same_text(t, ol_unparen(t, el), e) : ol_contains(t, el, e))
            return k;
    return -1;
}

/* The function whose return value the statement holding `move` produces:
 * `return data.to(device)`, or `data = data.to(device)` followed by
 * `return data`; *pos is the element when it leaves in a tuple
 * (`return x, y`), else -1. OL_NO_INDEX when the move does not leave that way. */
static uint32_t returned_by(ol_model *m, ol_nid stmt, ol_nid move, int *pos)
{
    const ol_tree *t = m->tree;
    *pos = -1;
    uint32_t fn = ol_function_of(m, move);
    if (fn == OL_NO_INDEX || m->functions.items[fn].is_lambda)
        return OL_NO_INDEX;
    if (ol_kind_of(t, stmt) == OL_N_return_statement) {
        ol_nid v = ol_first_named(t, stmt);
        if (v == OL_NONE || !(ol_method_chain_holds(m, v, move) || ol_contains(t, v, move)))
            return OL_NO_INDEX;
        *pos = returned_element(t, v, move, false);
        return fn;
    }
    ol_nid assign = ol_kind_of(t, stmt) == OL_N_expression_statement ? ol_first_named(t, stmt) : OL_NONE;
    if (assign == OL_NONE || ol_kind_of(t, assign) != OL_N_assignment)
        return OL_NO_INDEX;
    ol_nid left = ol_unparen(t, ol_field(t, assign, OL_F_left));
    if (ol_kind_of(t, left) != OL_N_identifier || !ol_method_chain_holds(m, ol_field(t, assign, OL_F_right), move))
        return OL_NO_INDEX;
    const ol_function *f = &m->functions.items[fn];
    for (size_t i = 0; i < f->returns.len; i++) {
        ol_nid r = ol_unparen(t, f->returns.items[i]);
        if (ol_kind_of(t, ol_parent(t, f->returns.items[i])) != OL_N_return_statement)
            continue;
        /* return x, y: the element that names the moved binding */
        int k = returned_element(t, r, left, true);
        if (k >= 0) {
            ol_nid el = ol_first_named(t, r);
            for (int j = 0; j < k; j++)
                el = ol_next_named(t, el);
            r = ol_unparen(t, el);
        }
        if (ol_kind_of(t, r) == OL_N_identifier && ol_same_text(t, r, left)) {
            uint32_t defs[4];
            size_t n = ol_reaching_defs(m, m->node_scope[r], ol_node_sym(m, r), r, defs, 4);
            for (size_t d = 0; d < n; d++)
                if (m->defs.items[defs[d]].stmt == stmt) {
                    *pos = k;
                    return fn;
                }
        }
    }
    return OL_NO_INDEX;
}

/* Could a value of this kind be a tensor of data (not a model, an object
 * of some library, a loader)? */
static bool moved_tensor_kind(ol_val v)
{
    return v.kind == OL_V_TENSOR || v.kind == OL_V_UNKNOWN || v.kind == OL_V_ARRAY || v.kind == OL_V_BOTTOM;
}

static bool moved_tensor(ol_model *m, ol_nid e)
{
    return moved_tensor_kind(ol_eval(m, e));
}

/* Does a call of function fn outside a batch loop produce a value used as a
 * dataset? */
static bool helper_result_used_as_dataset(ol_model *m, uint32_t fn, int pos, int mode)
{
    const ol_function *f = &m->functions.items[fn];
    for (size_t i = 0; i < f->callsites.len && i < 32; i++) {
        ol_nid site = m->calls.items[m->functions.items[fn].callsites.items[i]].node;
        if (in_data_loop(m, site))
            continue;
        if (result_used_as_dataset(m, ol_statement_of(m->tree, site), site, pos, mode))
            return true;
    }
    return false;
}

/* A Dataset's __init__ that moves each sample as it stores it
 * (`self.items = [torch.tensor(s).cuda() for s in samples]`): the loop is
 * over the whole dataset, not over batches. */
static bool moved_in_dataset_init(ol_model *m, ol_nid move)
{
    const ol_tree *t = m->tree;
    uint32_t fn = ol_function_of(m, move);
    if (fn == OL_NO_INDEX || m->functions.items[fn].name != ol_model_intern(m, "__init__") ||
        m->functions.items[fn].cls == OL_NO_INDEX)
        return false;
    ol_nid stmt = ol_statement_of(t, move);
    ol_nid e = ol_kind_of(t, stmt) == OL_N_expression_statement ? ol_first_named(t, stmt) : OL_NONE;
    ol_nid target = OL_NONE;
    if (e != OL_NONE && ol_kind_of(t, e) == OL_N_assignment)
        target = ol_unparen(t, ol_field(t, e, OL_F_left));
    else if (e != OL_NONE && ol_kind_of(t, e) == OL_N_call) {
        uint32_t ci = ol_call_at(m, e);
        if (ci != OL_NO_INDEX && m->calls.items[ci].name == m->names.append)
            target = ol_unparen(t, m->calls.items[ci].receiver);
    }
    if (target == OL_NONE || ol_kind_of(t, target) != OL_N_attribute)
        return false;
    /* the bindings of the attribute in this class, its bases and the
     * classes derived from it */
    ol_nid key = ol_field(t, target, OL_F_attribute);
    if (key == OL_NONE || ol_kind_of(t, key) != OL_N_identifier)
        return false;
    uint32_t cls = m->functions.items[fn].cls;
    size_t count;
    const ol_nid *uses = ol_name_uses(m, key, 0, (ol_nid)t->nodes.len, &count, NULL);
    for (size_t i = 0; i < count; i++) {
        ol_nid p = ol_parent(t, uses[i]);
        if (ol_kind_of(t, p) != OL_N_attribute || ol_field(t, p, OL_F_attribute) != uses[i] ||
            !ol_same_text(t, p, target))
            continue;
        uint32_t d = ol_def_of_target(m, p);
        uint32_t owner = d != OL_NO_INDEX ? m->scopes.items[m->defs.items[d].scope].cls : OL_NO_INDEX;
        if (d == OL_NO_INDEX ||
            (owner != OL_NO_INDEX && !ol_class_derives(m, cls, owner) && !ol_class_derives(m, owner, cls)))
            continue;
        if (binding_used_as_dataset(m, p, d, false))
            return true;
    }
    return false;
}

/* ---- a whole list of inputs moved at once through a helper -------------------------- */

/* Is node n inside a loop that also holds `at`: made afresh in each of
 * its iterations (a batch), not once for all of them? */
static bool in_loop_holding(ol_model *m, ol_nid n, ol_nid at)
{
    for (uint32_t l = m->node_loop[n]; l != OL_NO_INDEX; l = m->loops.items[l].parent)
        if (ol_contains(m->tree, m->loops.items[l].node, at))
            return true;
    return false;
}

/* Is e a sample read from data: itself (ol_value_read_from_data), or what
 * a function of the file returns that reads one (`load_sample(p)` returning
 * `torch.load(p)`)? */
static bool sample_read(ol_model *m, ol_nid e)
{
    const ol_tree *t = m->tree;
    if (ol_value_read_from_data(m, e))
        return true;
    e = ol_unparen(t, e);
    uint32_t fi = ol_kind_of(t, e) == OL_N_call ? ol_callee_function(m, e) : OL_NO_INDEX;
    const ol_function *f = fi != OL_NO_INDEX ? &m->functions.items[fi] : NULL;
    for (size_t r = 0; f && !ol_contains(t, f->node, e) && r < f->returns.len && r < 8; r++)
        if (ol_value_read_from_data(m, f->returns.items[r]))
            return true;
    return false;
}

typedef struct samples_seen {
    ol_model *m;
    ol_nid at;        /* the call the list is handed to */
    ol_nid sample;    /* a sample appended: the appended value */
    bool other;       /* something else done to it */
} samples_seen;

static bool appended_sample(void *ctx, const ol_use *use)
{
    samples_seen *s = ctx;
    ol_model *m = s->m;
    const ol_tree *t = m->tree;
    if (use->kind == OL_USE_ADD) {
        ol_nid v = ol_call_arg(m, use->call, 0, NULL);
        /* read in a loop that does not hold the call: one sample per iteration */
        if (v != OL_NONE && m->node_loop[use->call] != OL_NO_INDEX && !in_loop_holding(m, use->call, s->at) &&
            sample_read(m, v)) {
            s->sample = v;
            return true;
        }
        s->other = true;
        return false;
    }
    (void)t;
    return use->kind == OL_USE_READ || use->kind == OL_USE_PASSED;
}

/* Is e a Python list of every sample, each read from data: a comprehension
 * over the inputs whose element is read from disk (`[load_sample(p) for p
 * in paths]`), or a list every element of which is appended so in a loop,
 * built once for all of them (not inside a loop that also holds the call
 * `at`: a batch's list)? *sample: the element read. */
static bool list_of_samples(ol_model *m, ol_nid e, ol_nid at, ol_nid *sample, int depth)
{
    const ol_tree *t = m->tree;
    e = ol_unparen(t, e);
    if (e == OL_NONE || depth > 2)
        return false;
    ol_kind k = ol_kind_of(t, e);
    if (k == OL_N_list_comprehension) {
        ol_nid body = ol_field(t, e, OL_F_body);
        if (body == OL_NONE || in_loop_holding(m, e, at) || !sample_read(m, body))
            return false;
        *sample = body;
        return true;
    }
    if (k != OL_N_identifier)
        return false;
    uint32_t defs[4];
    size_t n = ol_reaching_defs(m, m->node_scope[e], ol_node_sym(m, e), e, defs, 4);
    if (n != 1)
        return false;
    const ol_def *d = &m->defs.items[defs[0]];
    if (d->kind != OL_DEF_ASSIGN || d->path_len != 0 || d->starred || d->value == OL_NONE ||
        in_loop_holding(m, d->stmt, at))
        return false;
    ol_nid v = ol_unparen(t, d->value);
    if (ol_kind_of(t, v) == OL_N_list && ol_first_named(t, v) == OL_NONE) {
        samples_seen seen = {m, at, OL_NONE, false};
        if (!ol_container_uses(m, defs[0], appended_sample, &seen) || seen.other || seen.sample == OL_NONE)
            return false;
        *sample = seen.sample;
        return true;
    }
    return list_of_samples(m, v, at, sample, depth + 1);
}

/* Does the node n (a value) reach a model's forward: an argument of it,
 * also inside the calls that join it (`model(torch.stack(batch))`)? */
static bool reaches_forward(ol_model *m, ol_nid n)
{
    const ol_tree *t = m->tree;
    for (int steps = 0; steps < 8; steps++) {
        ol_nid p = ol_parent(t, n);
        if (p == OL_NONE)
            return false;
        ol_kind pk = ol_kind_of(t, p);
        if (pk == OL_N_parenthesized_expression || pk == OL_N_list_splat || pk == OL_N_keyword_argument) {
            n = p;
            continue;
        }
        if (pk != OL_N_argument_list)
            return false;
        ol_nid call = ol_parent(t, p);
        uint32_t ci = ol_call_at(m, call);
        if (ci == OL_NO_INDEX)
            return false;
        if (ol_is_forward_call(m, ci))
            return true;
        n = call;
    }
    return false;
}

/* Does the model run on what the call returns: handed to a forward, or
 * iterated by a loop (a comprehension too) that runs one? */
static bool model_runs_on(ol_model *m, ol_nid stmt, ol_nid call)
{
    const ol_tree *t = m->tree;
    if (reaches_forward(m, call))
        return true;
    ol_nid assign = ol_kind_of(t, stmt) == OL_N_expression_statement ? ol_first_named(t, stmt) : OL_NONE;
    if (assign == OL_NONE || ol_kind_of(t, assign) != OL_N_assignment || ol_unparen(t, ol_field(t, assign, OL_F_right)) != call)
        return false;
    ol_nid target = ol_field(t, assign, OL_F_left);
    if (ol_kind_of(t, target) != OL_N_identifier)
        return false;
    uint32_t def = ol_def_of_target(m, target);
    if (def == OL_NO_INDEX)
        return false;
    ol_nid root = m->scopes.items[m->defs.items[def].scope].node;
    for (ol_nid u = m->subtree_end[stmt]; u < m->subtree_end[root]; u++) {
        if (ol_kind_of(t, u) != OL_N_identifier || ol_node_sym(m, u) != m->defs.items[def].name ||
            ol_node_at(t, u)->field == OL_F_attribute)
            continue;
        uint32_t defs[8];
        size_t n = ol_reaching_defs(m, m->node_scope[u], ol_node_sym(m, u), u, defs, 8);
        bool reached = false;
        for (size_t k = 0; k < n && !reached; k++)
            reached = defs[k] == def;
        if (!reached)
            continue;
        if (reaches_forward(m, u))
            return true;
        uint32_t over[16];
        size_t loops_over = ol_loops_iterating(m, u, over, 16);
        for (size_t k = 0; k < loops_over; k++)
            if (ol_unparen(t, m->loops.items[over[k]].iter) == u && loop_runs_model(m, over[k]))
                return true;
    }
    return false;
}

/* A call of a helper that returns what it is given moved to the GPU
 * (`to_device(inputs, device)`), given a list of every sample read from
 * data, whose result the model then runs on: the argument moved, or
 * OL_NONE. */
static ol_nid list_moved_whole(ol_model *m, uint32_t ci, const ol_callee *fs, ol_nid *sample)
{
    const ol_tree *t = m->tree;
    const ol_call *call = &m->calls.items[ci];
    if (!(fs->facts & OL_FN_RET_ON_DEVICE) || in_data_loop(m, call->node))
        return OL_NONE;
    ol_nid args = ol_field(t, call->node, OL_F_arguments);
    for (ol_nid a = args != OL_NONE ? ol_first_named(t, args) : OL_NONE; a != OL_NONE; a = ol_next_named(t, a)) {
        ol_nid v = ol_kind_of(t, a) == OL_N_keyword_argument ? ol_field(t, a, OL_F_value) : a;
        if (list_of_samples(m, v, call->node, sample, 0) &&
            model_runs_on(m, ol_statement_of(t, call->node), call->node))
            return v;
    }
    return OL_NONE;
}

static void report(ol_check *c, ol_nid stmt, ol_nid what, const char *helper, bool whole)
{
    char *text = ol_node_str(c->tree, what);
    if (strlen(text) > 48)
        strcpy(text + 45, "...");
    ol_diag *d;
    if (whole) {
        d = ol_report_node(c, stmt,
                           "`%s` moves a whole data set to the GPU and the model takes all of it in one forward; "
                           "the data and the activations of every sample are resident at once",
                           text);
        free(text);
        ol_diag_help(d, "keep it on the CPU and run the model over it in batches, moving each batch inside the loop "
                        "(a DataLoader with `pin_memory=True`, or `X.split(bs)` and `.to(device, non_blocking=True)`)");
        return;
    }
    if (helper)
        d = ol_report_node(c, stmt,
                           "`%s` returns a whole dataset moved to the GPU by `%s()`, before the batch loop; all of "
                           "it stays resident next to the model, activations and optimizer state",
                           text, helper);
    else
        d = ol_report_node(c, stmt,
                           "`%s` moves a whole dataset to the GPU before the batch loop; all of it stays resident "
                           "next to the model, activations and optimizer state",
                           text);
    free(text);
    ol_diag_help(d, "keep the dataset on the CPU and move each batch inside the loop "
                    "(`x = x.to(device, non_blocking=True)`, with `pin_memory=True` on the DataLoader)");
}

static void report_list(ol_check *c, ol_nid stmt, ol_nid call, ol_nid list, ol_nid sample, const char *helper)
{
    ol_model *m = c->model;
    char *text = ol_node_str(c->tree, call), *what = ol_node_str_short(c->tree, list);
    if (strlen(text) > 48)
        strcpy(text + 45, "...");
    ol_diag *d = ol_report_node(c, stmt,
                                "`%s` moves the whole list `%s` to the GPU at once through `%s()` before the "
                                "model runs on it; every sample is resident there together, next to the model",
                                text, what, helper);
    ol_diag_help(d, "keep the samples on the CPU and move them a batch at a time inside the loop that runs the "
                    "model (a DataLoader with `pin_memory=True`, or slices of the list)");
    ol_reasons why = {0};
    char *one = ol_node_str_short(c->tree, sample);
    ol_because(&why, m, sample, "each element is a sample read from data (`%s`), for every input", one);
    ol_diag_because(d, m, &why);
    free(one);
    free(what);
    free(text);
}

/* Is e one item picked by a constant index (`dataset[0]["image"]`, also
 * through a method chain and the name it is bound to): a sample, not a
 * data set? */
static bool one_item(ol_model *m, ol_nid e, int depth)
{
    const ol_tree *t = m->tree;
    e = ol_unparen(t, ol_method_chain_base(m, e));
    if (e == OL_NONE || depth > 3)
        return false;
    if (ol_kind_of(t, e) == OL_N_identifier) {
        uint32_t defs[2];
        if (ol_reaching_defs(m, m->node_scope[e], ol_node_sym(m, e), e, defs, 2) != 1)
            return false;
        const ol_def *d = &m->defs.items[defs[0]];
        return d->kind == OL_DEF_ASSIGN && d->path_len == 0 && !d->starred && d->value != OL_NONE &&
               one_item(m, d->value, depth + 1);
    }
    bool picked = false;
    while (ol_kind_of(t, e) == OL_N_subscript) {
        ol_nid index = ol_unparen(t, ol_field(t, e, OL_F_subscript));
        ol_kind k = ol_kind_of(t, index);
        if (k == OL_N_unary_operator)
            k = ol_kind_of(t, ol_unparen(t, ol_field(t, index, OL_F_argument)));
        if (k == OL_N_integer)
            picked = true;
        else if (k != OL_N_string)
            return false;
        e = ol_unparen(t, ol_field(t, e, OL_F_value));
    }
    return picked;
}

/* Does the file train: a backward pass or an optimizer step anywhere? */
static bool file_trains(ol_model *m)
{
    for (size_t i = 0; i < m->calls.len; i++)
        if (ol_is_backward_call(m, (uint32_t)i) || ol_step_optimizer(m, (uint32_t)i) != OL_NONE)
            return true;
    return false;
}

/* Where a move is reported, and what a statement's moves are told apart
 * by: the element of a tuple on the right of an assignment that holds it
 * (`X, Y = X.to(device), Y.to(device)` moves two datasets), else the
 * statement. */
static ol_nid report_site(const ol_tree *t, ol_nid stmt, ol_nid move)
{
    ol_nid assign = ol_kind_of(t, stmt) == OL_N_expression_statement ? ol_first_named(t, stmt) : OL_NONE;
    if (assign == OL_NONE || ol_kind_of(t, assign) != OL_N_assignment)
        return stmt;
    ol_nid right = ol_unparen(t, ol_field(t, assign, OL_F_right));
    if (right == OL_NONE || (ol_kind_of(t, right) != OL_N_expression_list && ol_kind_of(t, right) != OL_N_tuple))
        return stmt;
    ol_nid first = ol_first_named(t, right);
    for (ol_nid e = first; e != OL_NONE; e = ol_next_named(t, e))
        if (ol_contains(t, e, move))
            return e == first ? stmt : e;
    return stmt;
}

/* Does the file draw batches: a loop over a loader, or a tensor cut by a
 * batch index in a loop that runs a model? Then a data set fed whole to
 * the model is not full-batch training by design. */
static bool file_cuts_batches(ol_model *m)
{
    const ol_tree *t = m->tree;
    for (size_t i = 0; i < m->loops.len; i++) {
        ol_nid it = m->loops.items[i].iter;
        if (it != OL_NONE && ol_eval(m, it).kind == OL_V_LOADER)
            return true;
    }
    for (ol_nid n = 0; n < t->nodes.len; n++)
        if (ol_kind_of(t, n) == OL_N_subscript && m->node_loop[n] != OL_NO_INDEX &&
            !ol_loop_runs_no_model(m, m->node_loop[n]) && ol_index_draws_batch(m, ol_field(t, n, OL_F_subscript)))
            return true;
    return false;
}

/* Is the call's value data read from disk or an array
 * (ol_value_read_from_data)? Asked of a call only once its other tests
 * pass: *known holds the answer (-1: not asked yet). */
static bool reads_data(ol_model *m, const ol_call *call, int *known)
{
    if (*known < 0)
        *known = ol_value_read_from_data(m, call->node);
    return *known;
}

/* How a call's moved value must be used to be a dataset: where nothing
 * trains, only data read from disk or an array is taken as cut in batches. */
static int cut_mode(ol_model *m, const ol_call *call, bool trains, int *known)
{
    return !trains && !reads_data(m, call, known) ? USE_WRAPPED : USE_CUT;
}

static void check(ol_check *c)
{
    ol_model *m = c->model;
    const ol_tree *t = c->tree;
    ol_nid last_stmt = OL_NONE;
    /* Where nothing trains (a generation pipeline, an inference script, a
     * model library), a tensor cut in a loop may be a sampler's schedule or
     * the call's own images cut for a VAE: a dataset shows by being wrapped
     * in a Dataset or DataLoader, or by being data read from disk or an
     * array (ol_value_read_from_data). */
    bool trains = file_trains(m);
    int cuts = -1; /* file_cuts_batches, asked once when needed */
    for (size_t i = 0; i < m->calls.len; i++) {
        const ol_call *call = &m->calls.items[i];
        int loaded = -1; /* reads_data, asked once when needed */
        if (!ol_call_moves_to_gpu(m, call)) {
            ol_callee callee;
            const ol_callee *fs = ol_callee_of(m, (uint32_t)i, &callee) ? &callee : NULL;
            /* every sample in a Python list, moved at once by a helper, for
             * the model to run on */
            ol_nid sample = OL_NONE, list = fs ? list_moved_whole(m, (uint32_t)i, fs, &sample) : OL_NONE;
            ol_nid stmt = ol_statement_of(t, call->node);
            if (list != OL_NONE && stmt != last_stmt) {
                last_stmt = stmt;
                report_list(c, stmt, call->node, list, sample, fs->name);
                continue;
            }
            /* a helper of another file that returns its data on the GPU */
            if (!fs || !fs->cross_file || !(fs->facts & OL_FN_RET_ON_DEVICE) || in_data_loop(m, call->node))
                continue;
            /* data the helper read from disk or an array: cut in a loop, it
             * is a data set even where nothing trains */
            int helper_mode = (fs->facts & OL_FN_RET_DATA) ? USE_CUT : cut_mode(m, call, trains, &loaded);
            if (stmt != last_stmt && result_used_as_dataset(m, stmt, call->node, -1, helper_mode)) {
                last_stmt = stmt;
                report(c, stmt, call->node, fs->name, false);
            }
            continue;
        }
        /* a fold selected in a cross-validation loop that trains: the
         * batches are cut from it in a loop inside */
        ol_nid moved = call->receiver != OL_NONE ? call->receiver : call->node;
        if (in_data_loop(m, call->node) && !moves_fold(m, moved))
            continue;
        /* what is moved */
        if (call->receiver != OL_NONE) {
            ol_val v = ol_eval(m, call->receiver);
            if (v.kind == OL_V_MODULE || v.kind == OL_V_OPTIMIZER || (v.flags & OL_VF_BATCH) || v.kind == OL_V_DEVICE)
                continue;
        }
        ol_nid stmt = ol_statement_of(t, call->node);
        ol_nid site = report_site(t, stmt, call->node);
        if (site == last_stmt)
            continue;
        bool method_move = call->receiver != OL_NONE && (call->name == m->names.cuda || call->name == m->names.to) &&
                           ol_eval(m, call->receiver).kind != OL_V_EXTERN;
        if (ol_value_made_up(m, method_move ? ol_method_chain_base(m, call->receiver) : call->node))
            continue;
        /* one sample of a data set (`dataset[0]["image"].to(device)`) */
        if (method_move && one_item(m, call->receiver, 0))
            continue;
        bool dataset;
        if (method_move && moves_loop_variable(m, call->receiver))
            dataset = moved_in_dataset_init(m, call->node);
        else
            dataset = result_used_as_dataset(m, stmt, call->node, -1, cut_mode(m, call, trains, &loaded));
        /* a helper that returns the moved data (`return data.to(device)`):
         * its callers decide whether that is a dataset */
        if (!dataset && (!method_move || moved_tensor(m, call->receiver))) {
            int pos;
            uint32_t fn = returned_by(m, stmt, call->node, &pos);
            dataset = fn != OL_NO_INDEX && (pos >= 0 || moved_tensor_kind(ol_function_result(m, fn))) &&
                      helper_result_used_as_dataset(m, fn, pos, cut_mode(m, call, trains, &loaded));
        }
        /* data read from disk, moved whole and fed whole to the model's
         * forward (a validation set), in a file that trains in batches */
        bool whole = false;
        if (!dataset && trains && reads_data(m, call, &loaded) && !(method_move && moves_loop_variable(m, call->receiver))) {
            if (cuts < 0)
                cuts = file_cuts_batches(m) ? 1 : 0;
            whole = cuts && result_used_as_dataset(m, stmt, call->node, -1, USE_FED_WHOLE);
        }
        if (!dataset && !whole)
            continue;
        last_stmt = site;
        report(c, site, call->node, NULL, whole);
    }
}

const ol_rule ol_rule_oom301 = {
    .code = "OOM301",
    .name = "dataset-moved-to-device",
    .severity = OL_SEV_WARNING,
    .device_memory = true,
    .summary = "A whole dataset is moved to the GPU before the batch loop.",
    .what = "Flags `.cuda()` / `.to(device)` (and `torch.tensor(..., device=...)`) applied outside the "
            "batch loop to tensors that are then used as a dataset: wrapped in `TensorDataset` / a "
            "`Dataset` / `DataLoader`, sliced or indexed per batch in a loop, iterated, or indexed in "
            "`__getitem__`, or handed to a function that cuts batches out of it. A batch may be cut "
            "by an index variable drawn afresh each step rather than a slice: a slice of a permutation "
            "or a range of indices (`idx = perm[i:i + bs]`, `for idx in perm.split(bs)`), random "
            "indices (`torch.randint(0, n, (bs,))`, `np.random.choice(n, bs)`), a random mask "
            "(`torch.rand(n) < p`), or `torch.index_select(X, 0, idx)` / `X.index_select(0, idx)` "
            "with such an index, also in a helper called each step that draws its indices itself "
            "(`get_batch(X, bs)`). Also slices of a "
            "dataset (`X[:18000].cuda()`), a cross-validation fold selected by the index arrays of a "
            "`for tr, va in kf.split(X)` loop, moved, then cut in a loop inside (`X[tr].cuda()`), each "
            "tensor of a tuple (`X, Y = X.to(device), Y.to(device)`, reported at its own element), "
            "a Dataset's `__init__` that moves its samples, and helpers "
            "that return their data on the GPU (`batchify(corpus.train, bs)`, also `return x, y` "
            "unpacked at the call: flagged at the move of each element used as a dataset, "
            "or at the call when the helper is in another file of the run). In a file that trains in "
            "batches (a loop over a loader, or a tensor cut by a batch index), data read from disk or "
            "an array (see below) that is moved whole and fed whole to the model's forward to evaluate "
            "(under `no_grad` or in an evaluation function), in a loop or an evaluation function "
            "(`model(X_val)`, also through a helper of the file: `evaluate(model, X_val)`, or in a function "
            "called each epoch that reads, moves and evaluates it), is flagged too, with its own message: the "
            "activations of every sample are alive at once. So is a helper that returns what it is given "
            "moved (`to_device(inputs, device)`) called with a Python list of every sample read from data "
            "(a comprehension or a loop that appends them, not a batch's list) when the model then runs on "
            "what it returns. Moves inside the batch "
            "loop (also a `while` loop that draws `next(train_iter)` each time), batches drawn from "
            "a loader, and constants such as normalisation statistics, class weights or fixed noise "
            "are not flagged, nor a tensor indexed by a single index, by a loader batch's labels "
            "(a class-weight table), by random indices shaped like a batch's tensor (negatives drawn "
            "per item from a feature table), by a fixed mask or a fixed list of columns, nor the index "
            "tensor itself (a permutation moved and sliced); nor is a tensor bound inside the loop that "
            "cuts it (this iteration's item, truncated), one a comprehension reads row by row "
            "(`[tok.decode(t) for t in tokens]`; a comprehension over `X.split(bs)` still counts), or "
            "one cut in a loop that surely runs no model (only builtins, torch functions, tensor and "
            "container methods, and helpers of the file made of those): what it cuts is stored, as "
            "in a replay buffer filled group by group. In a file where nothing trains (no backward, "
            "no optimizer step: a generation pipeline, an inference script, a model library), a tensor "
            "cut in a loop counts only when it is data read from disk or converted from an array or a "
            "table (`torch.from_numpy`, `torch.load`, `np.load`, `pd.read_csv`, `.values`), or wrapped "
            "in a Dataset or DataLoader, or indexed by a Dataset's `__getitem__`, or returned moved by a "
            "helper of another file that read it: a sampler's timestep schedule or the call's own images "
            "cut for a VAE is not a dataset. A helper that gathers rows by an index (`return self.emb[idx].to("
            "device)`) returns those rows, not a whole table.",
    .why = "A dataset on the GPU occupies memory for the whole run, on top of the model, its "
           "gradients, the optimizer state and the activations of every step. It fits on a small "
           "experiment and runs out of memory the day the data grows. Moving each batch as it is "
           "used costs little with pinned memory and `non_blocking=True`.",
    .example = "X = torch.from_numpy(features).float().cuda()\n"
               "y = torch.from_numpy(labels).cuda()\n"
               "loader = DataLoader(TensorDataset(X, y), batch_size=64)\n"
               "for xb, yb in loader:\n"
               "    loss = criterion(model(xb), yb)",
    .instead = "X = torch.from_numpy(features).float()\n"
               "y = torch.from_numpy(labels)\n"
               "loader = DataLoader(TensorDataset(X, y), batch_size=64, pin_memory=True)\n"
               "for xb, yb in loader:\n"
               "    xb, yb = xb.cuda(non_blocking=True), yb.cuda(non_blocking=True)\n"
               "    loss = criterion(model(xb), yb)",
    .fix = NULL,
    .tags = "memory,data",
    .precision = "high",
    .check = check,
};
