/*
 * OOM301 dataset-moved-to-device: a whole dataset moved to the GPU before
 * the batch loop (`X = torch.tensor(data).cuda()`, `X_train.to(device)`,
 * `TensorDataset(X.cuda(), y.cuda())`, a Dataset that moves its tensors in
 * __init__), when the moved tensor is then used as a dataset: wrapped in a
 * Dataset or DataLoader, sliced or indexed by batch in a loop, iterated, or
 * indexed in __getitem__.
 *
 * What does not count: moves inside a loop that draws batches (that is the
 * right place), batches drawn from a loader, and constants (mean/std, class
 * weights, fixed noise) that are never sliced per batch.
 */
#include <stdlib.h>
#include <string.h>

#include "facts.h"
#include "rule.h"

static const char *const DEVICE_WORDS[] = {"device", "dev", "gpu", "cuda", "rank", "local_rank", NULL};

/* Is e a GPU device: "cuda", "cuda:0", torch.device("cuda"), a name like device? */
static bool gpu_device(ol_model *m, ol_nid e)
{
    const ol_tree *t = m->tree;
    e = ol_unparen(t, e);
    if (e == OL_NONE)
        return false;
    const char *s;
    uint32_t len;
    if (ol_string_value(t, e, &s, &len))
        return (len >= 4 && memcmp(s, "cuda", 4) == 0) || ol_mem_eq_cstr(s, len, "mps");
    if (ol_kind_of(t, e) == OL_N_integer)
        return true; /* .to(0): a device ordinal */
    ol_val v = ol_eval(m, e);
    if (v.kind == OL_V_DEVICE) {
        if (ol_kind_of(t, e) == OL_N_call) {
            ol_nid a = ol_call_arg(m, e, 0, "type");
            if (ol_string_value(t, a, &s, &len) && ol_mem_eq_cstr(s, len, "cpu"))
                return false;
        }
        return true;
    }
    if (v.kind == OL_V_EXTERN || v.kind == OL_V_TENSOR || v.kind == OL_V_MODULE)
        return false; /* .to(torch.float16), .to(other_tensor) */
    if (v.kind == OL_V_STRING)
        return false;
    ol_nid name = ol_kind_of(t, e) == OL_N_attribute ? ol_field(t, e, OL_F_attribute) : e;
    if (ol_kind_of(t, name) != OL_N_identifier)
        return false;
    const char *n = ol_text(t, name, &len);
    return ol_name_looks_like(n, len, DEVICE_WORDS);
}

/* Is this call a move to the GPU? */
static bool moves_to_gpu(ol_model *m, const ol_call *c)
{
    const ol_tree *t = m->tree;
    if (c->receiver != OL_NONE && c->name == m->names.cuda)
        return true;
    if (c->receiver != OL_NONE && c->name == m->names.to) {
        ol_nid dev = ol_call_arg(m, c->node, -1, "device");
        if (dev == OL_NONE)
            dev = ol_call_arg(m, c->node, 0, NULL);
        return gpu_device(m, dev);
    }
    const char *q = ol_qualname(m, c->callee);
    if (q && ol_str_has_prefix(q, "torch.") && strchr(q + 6, '.') == NULL) {
        ol_nid dev = ol_call_arg(m, c->node, -1, "device");
        return dev != OL_NONE && gpu_device(m, dev);
    }
    (void)t;
    return false;
}

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

/* Slicing out a batch: X[i:i + bs], X[perm[i:j]], X[start:end] with a
 * bound that is not a constant. A mask or a single index is not a batch. */
static bool batch_slice(const ol_tree *t, ol_nid index)
{
    for (ol_nid n = index; n < t->nodes.len && ol_node_at(t, n)->start < ol_node_at(t, index)->end; n++) {
        if (n != index && ol_node_at(t, n)->start < ol_node_at(t, index)->start)
            break;
        if (ol_kind_of(t, n) != OL_N_slice)
            continue;
        for (ol_nid c = ol_first_named(t, n); c != OL_NONE; c = ol_next_named(t, c)) {
            ol_kind k = ol_kind_of(t, ol_unparen(t, c));
            if (k != OL_N_integer && k != OL_N_unary_operator && k != OL_N_none)
                return true;
        }
    }
    return false;
}

/* How is the tensor bound at `ref` (an identifier or self.attr use) used as a dataset? */
static bool used_as_dataset(ol_model *m, ol_nid use)
{
    const ol_tree *t = m->tree;
    ol_nid p = ol_parent(t, use);
    if (p == OL_NONE)
        return false;
    ol_kind pk = ol_kind_of(t, p);
    /* for xb in X, X.split(bs) as a loop iterable */
    for (uint32_t i = 0; i < m->loops.len; i++) {
        ol_nid it = m->loops.items[i].iter;
        if (it == OL_NONE || !ol_contains(t, it, use))
            continue;
        ol_nid u = ol_unparen(t, it);
        if (u == use)
            return true;
        if (ol_kind_of(t, u) == OL_N_call) {
            /* zip(X, y), X.split(bs), torch.split(X, bs), enumerate(X) */
            ol_nid args = ol_field(t, u, OL_F_arguments);
            ol_nid callee = ol_field(t, u, OL_F_function);
            if (p == args)
                return true;
            if (pk == OL_N_attribute && p == callee && ol_field(t, p, OL_F_object) == use) {
                ol_nid meth = ol_field(t, p, OL_F_attribute);
                return ol_text_is(t, meth, "split") || ol_text_is(t, meth, "chunk");
            }
        }
    }
    /* TensorDataset(X, y), DataLoader(X) */
    if (pk == OL_N_argument_list || pk == OL_N_keyword_argument) {
        ol_nid call = pk == OL_N_argument_list ? ol_parent(t, p) : ol_parent(t, ol_parent(t, p));
        return call != OL_NONE && ol_kind_of(t, call) == OL_N_call && dataset_constructor(m, call);
    }
    /* X[i:i + bs], X[idx] inside a loop or in __getitem__ */
    if (pk == OL_N_subscript && ol_field(t, p, OL_F_value) == use) {
        ol_nid index = ol_field(t, p, OL_F_subscript);
        bool getitem = false;
        uint32_t gf = ol_function_of(m, p);
        if (gf != OL_NO_INDEX && strcmp(ol_sym_str(m, m->functions.items[gf].name), "__getitem__") == 0)
            getitem = true;
        if (!getitem && !batch_slice(t, index))
            return false;
        /* writing into it (obs[step] = x) makes it a buffer, not a dataset */
        ol_nid gp = ol_parent(t, p);
        ol_kind gk = ol_kind_of(t, gp);
        if ((gk == OL_N_assignment || gk == OL_N_augmented_assignment) && ol_field(t, gp, OL_F_left) == p)
            return false;
        if (gk == OL_N_delete_statement || gk == OL_N_pattern_list)
            return false;
        return getitem || m->node_loop[p] != OL_NO_INDEX;
    }
    return false;
}

/* Every use of the binding made at `target` (an identifier or self.attr),
 * checked for dataset use. */
static bool binding_used_as_dataset(ol_model *m, ol_nid target, uint32_t def)
{
    const ol_tree *t = m->tree;
    bool attr = ol_kind_of(t, target) == OL_N_attribute;
    ol_kind want = attr ? OL_N_attribute : OL_N_identifier;
    char first = t->src->text[ol_node_at(t, target)->start];
    for (ol_nid n = 0; n < t->nodes.len; n++) {
        if (n == target || ol_kind_of(t, n) != want || t->src->text[ol_node_at(t, n)->start] != first ||
            !ol_same_text(t, n, target))
            continue;
        if (!attr) {
            if (ol_kind_of(t, n) != OL_N_identifier)
                continue;
            uint32_t defs[16];
            size_t count = ol_reaching_defs(m, m->node_scope[n], ol_node_sym(m, n), n, defs, 16);
            bool reaches = false;
            for (size_t k = 0; k < count; k++)
                reaches |= defs[k] == def;
            if (!reaches)
                continue;
        } else if (ol_kind_of(t, n) != OL_N_attribute) {
            continue;
        }
        if (used_as_dataset(m, n))
            return true;
    }
    return false;
}

/* Walks a method chain down to its base: `torch.from_numpy(a).float().cuda()`
 * -> `torch.from_numpy(a)`. */
static ol_nid chain_base(ol_model *m, ol_nid e)
{
    const ol_tree *t = m->tree;
    e = ol_unparen(t, e);
    for (int depth = 0; depth < 32; depth++) {
        uint32_t ci = ol_call_at(m, e);
        if (ci == OL_NO_INDEX || m->calls.items[ci].receiver == OL_NONE)
            return e;
        ol_val rv = ol_eval(m, m->calls.items[ci].receiver);
        if (rv.kind == OL_V_EXTERN)
            return e; /* torch.from_numpy(...): a function, not a method */
        e = ol_unparen(t, m->calls.items[ci].receiver);
    }
    return e;
}

/* Is `e`'s value the result of `move` (possibly followed by more method
 * calls such as .float())? */
static bool chain_contains(ol_model *m, ol_nid e, ol_nid move)
{
    const ol_tree *t = m->tree;
    e = ol_unparen(t, e);
    for (int depth = 0; depth < 32; depth++) {
        if (e == move)
            return true;
        uint32_t ci = ol_call_at(m, e);
        if (ci == OL_NO_INDEX || m->calls.items[ci].receiver == OL_NONE)
            return false;
        e = ol_unparen(t, m->calls.items[ci].receiver);
    }
    return false;
}

/* Buffers, noise and literals are not datasets: torch.zeros(...),
 * torch.randn(...), torch.tensor([0.5, 0.5]). */
static bool made_from_nothing(ol_model *m, ol_nid base)
{
    const ol_tree *t = m->tree;
    base = ol_unparen(t, base);
    ol_kind k = ol_kind_of(t, base);
    if (k == OL_N_list || k == OL_N_tuple || k == OL_N_list_comprehension || k == OL_N_integer || k == OL_N_float)
        return true;
    if (k != OL_N_call)
        return false;
    const char *q = ol_qualname(m, ol_field(t, base, OL_F_function));
    if (!q || !ol_str_has_prefix(q, "torch."))
        return false;
    if (strcmp(q, "torch.autograd.Variable") == 0)
        return made_from_nothing(m, ol_call_arg(m, base, 0, "data"));
    const char *name = q + 6;
    static const char *const factories[] = {"zeros", "ones", "empty", "full", "rand", "randn", "randint",
                                            "randperm", "arange", "linspace", "logspace", "eye", "zeros_like",
                                            "ones_like", "empty_like", "full_like", "rand_like", "randn_like",
                                            "randint_like", "normal", "bernoulli", "multinomial", NULL};
    for (const char *const *f = factories; *f; f++)
        if (strcmp(name, *f) == 0)
            return true;
    static const char *const wrappers[] = {"tensor", "as_tensor", "Tensor", "FloatTensor", "LongTensor",
                                           "IntTensor", "BoolTensor", "from_numpy", NULL};
    for (const char *const *w = wrappers; *w; w++)
        if (strcmp(name, *w) == 0)
            return made_from_nothing(m, ol_call_arg(m, base, 0, "data"));
    return false;
}

/* Is e (or part of it) a variable the enclosing for-loops bind each
 * iteration? Then what is moved is this iteration's item, not a dataset. */
static bool moves_loop_variable(ol_model *m, ol_nid e)
{
    const ol_tree *t = m->tree;
    for (uint32_t l = m->node_loop[e]; l != OL_NO_INDEX; l = m->loops.items[l].parent) {
        const ol_loop *loop = &m->loops.items[l];
        if (loop->kind != OL_LOOP_FOR)
            continue;
        ol_nid target = ol_field(t, loop->node, OL_F_left);
        for (ol_nid n = target; n != OL_NONE && n < m->subtree_end[target]; n++) {
            if (ol_kind_of(t, n) == OL_N_identifier && ol_mentions(t, e, n))
                return true;
        }
    }
    return false;
}

/* The def an assignment statement makes for a plain target, or OL_NO_INDEX. */
static uint32_t def_of_target(ol_model *m, ol_nid target)
{
    for (size_t i = 0; i < m->defs.len; i++)
        if (m->defs.items[i].target == target)
            return (uint32_t)i;
    return OL_NO_INDEX;
}

static void check(ol_check *c)
{
    ol_model *m = c->model;
    const ol_tree *t = c->tree;
    ol_nid last_stmt = OL_NONE;
    for (size_t i = 0; i < m->calls.len; i++) {
        const ol_call *call = &m->calls.items[i];
        if (!moves_to_gpu(m, call))
            continue;
        if (in_data_loop(m, call->node))
            continue;
        /* what is moved */
        if (call->receiver != OL_NONE) {
            ol_val v = ol_eval(m, call->receiver);
            if (v.kind == OL_V_MODULE || v.kind == OL_V_OPTIMIZER ||
                (v.flags & OL_VF_BATCH) || v.kind == OL_V_DEVICE)
                continue;
        }
        ol_nid stmt = ol_statement_of(t, call->node);
        if (stmt == last_stmt)
            continue;
        bool method_move = call->receiver != OL_NONE && (call->name == m->names.cuda || call->name == m->names.to) &&
                           ol_eval(m, call->receiver).kind != OL_V_EXTERN;
        if (made_from_nothing(m, method_move ? chain_base(m, call->receiver) : call->node))
            continue;
        if (method_move && moves_loop_variable(m, call->receiver))
            continue;
        /* the moved value is an argument of a dataset constructor */
        bool dataset = false;
        for (ol_nid p = ol_parent(t, call->node); p != OL_NONE && p != stmt && !dataset; p = ol_parent(t, p)) {
            if (ol_kind_of(t, p) != OL_N_argument_list)
                continue;
            ol_nid ctor = ol_parent(t, p);
            for (ol_nid a = ol_first_named(t, p); a != OL_NONE && !dataset; a = ol_next_named(t, a))
                if (chain_contains(m, a, call->node) && dataset_constructor(m, ctor))
                    dataset = true;
        }
        /* or its binding is used as a dataset */
        ol_nid assign = ol_kind_of(t, stmt) == OL_N_expression_statement ? ol_first_named(t, stmt) : OL_NONE;
        if (!dataset && assign != OL_NONE && ol_kind_of(t, assign) == OL_N_assignment &&
            ol_contains(t, ol_field(t, assign, OL_F_right), call->node)) {
            ol_nid left = ol_unparen(t, ol_field(t, assign, OL_F_left));
            ol_nid right = ol_unparen(t, ol_field(t, assign, OL_F_right));
            if ((ol_kind_of(t, left) == OL_N_identifier || ol_kind_of(t, left) == OL_N_attribute) &&
                chain_contains(m, right, call->node)) {
                uint32_t def = def_of_target(m, left);
                if (def != OL_NO_INDEX)
                    dataset = binding_used_as_dataset(m, left, def);
            } else if ((ol_kind_of(t, left) == OL_N_pattern_list || ol_kind_of(t, left) == OL_N_tuple_pattern) &&
                       (ol_kind_of(t, right) == OL_N_expression_list || ol_kind_of(t, right) == OL_N_tuple)) {
                /* X, y = X.cuda(), y.cuda(): the target paired with this move */
                ol_nid tgt = ol_first_named(t, left);
                for (ol_nid val = ol_first_named(t, right); val != OL_NONE && tgt != OL_NONE;
                     val = ol_next_named(t, val), tgt = ol_next_named(t, tgt)) {
                    if (!chain_contains(m, val, call->node) || ol_kind_of(t, tgt) != OL_N_identifier)
                        continue;
                    uint32_t def = def_of_target(m, tgt);
                    if (def != OL_NO_INDEX)
                        dataset = binding_used_as_dataset(m, tgt, def);
                }
            }
        }
        if (!dataset)
            continue;
        last_stmt = stmt;
        char *text = ol_node_str(t, call->node);
        if (strlen(text) > 48)
            strcpy(text + 45, "...");
        ol_diag *d = ol_report_node(c, stmt,
                                    "`%s` moves a whole dataset to the GPU before the batch loop; all of it stays "
                                    "resident next to the model, activations and optimizer state",
                                    text);
        free(text);
        ol_diag_help(d, "keep the dataset on the CPU and move each batch inside the loop "
                        "(`x = x.to(device, non_blocking=True)`, with `pin_memory=True` on the DataLoader)");
    }
}

const ol_rule ol_rule_oom301 = {
    .code = "OOM301",
    .name = "dataset-moved-to-device",
    .severity = OL_SEV_WARNING,
    .summary = "A whole dataset is moved to the GPU before the batch loop.",
    .what = "Flags `.cuda()` / `.to(device)` (and `torch.tensor(..., device=...)`) applied outside the "
            "batch loop to tensors that are then used as a dataset: wrapped in `TensorDataset` / a "
            "`Dataset` / `DataLoader`, sliced or indexed per batch in a loop, iterated, or indexed in "
            "`__getitem__`. Moves inside the batch loop, batches drawn from a loader, and constants "
            "such as normalisation statistics, class weights or fixed noise are not flagged.",
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
