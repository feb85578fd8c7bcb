/*
 * moves.c - moves of tensors to an accelerator, and what is moved.
 *
 * Shared by the dataset rule (OOM301) and the function summaries (a helper
 * that returns `data.to(device)`): which calls move a tensor to the GPU
 * (`.cuda()`, `.to(device)`, `torch.tensor(..., device="cuda")`), what a
 * method chain starts from, whether a tensor is built from nothing (a
 * buffer, noise, a literal: never a dataset), and which indexing draws a
 * batch out of a tensor.
 */
#include "moves.h"

#include <string.h>

#include "eval.h"

static const char *const DEVICE_WORDS[] = {"device", "dev", "gpu", "cuda", "rank", "local_rank", NULL};

static bool gpu_string(const char *s, uint32_t len)
{
    return (len >= 4 && memcmp(s, "cuda", 4) == 0) || ol_mem_eq_cstr(s, len, "mps");
}

/* A device held as a string: a name whose bindings (a parameter's default
 * too) include a GPU's string, directly or as a branch of a choice
 * (`device = "cuda" if torch.cuda.is_available() else "cpu"`). A name bound
 * only to "cpu", or to strings the source does not show, is no GPU. */
static bool names_gpu_string(ol_model *m, ol_nid e, int depth)
{
    const ol_tree *t = m->tree;
    e = ol_unparen(t, e);
    if (e == OL_NONE || depth > 4)
        return false;
    const char *s;
    uint32_t len;
    switch (ol_kind_of(t, e)) {
    case OL_N_string:
        return ol_string_value(t, e, &s, &len) && gpu_string(s, len);
    case OL_N_conditional_expression: {
        ol_nid body = ol_named_child(t, e, 0), other = ol_named_child(t, e, 2);
        return names_gpu_string(m, body, depth + 1) || names_gpu_string(m, other, depth + 1);
    }
    case OL_N_identifier: {
        uint32_t defs[8];
        size_t n = ol_reaching_defs(m, m->node_scope[e], ol_node_sym(m, e), e, defs, 8);
        for (size_t i = 0; i < n; i++) {
            const ol_def *d = &m->defs.items[defs[i]];
            bool valued = (d->kind == OL_DEF_ASSIGN && d->path_len == 0 && !d->starred) || d->kind == OL_DEF_PARAM;
            if (valued && d->value != OL_NONE && d->value != e && names_gpu_string(m, d->value, depth + 1))
                return true;
        }
        return false;
    }
    default:
        return false;
    }
}

/* Is e a GPU device: "cuda", "cuda:0", torch.device("cuda"), a name like device? */
bool ol_gpu_device(ol_model *m, ol_nid e)
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
        return names_gpu_string(m, e, 0); /* `device = "cuda"`, then `.to(device)` */
    ol_nid name = ol_kind_of(t, e) == OL_N_attribute ? ol_field(t, e, OL_F_attribute) : e;
    if (ol_kind_of(t, name) != OL_N_identifier)
        return false;
    const char *n = ol_text(t, name, &len);
    return ol_name_looks_like(n, len, DEVICE_WORDS);
}

/* Is this call a move to the GPU? */
bool ol_moves_to_gpu(ol_model *m, const ol_call *c)
{
    const ol_tree *t = m->tree;
    if (c->receiver != OL_NONE && c->name == m->names.cuda)
        return true;
    if (c->receiver != OL_NONE && c->name == m->names.to) {
        ol_nid dev = ol_call_arg(m, c->node, -1, "device");
        if (dev == OL_NONE)
            dev = ol_call_arg(m, c->node, 0, NULL);
        return ol_gpu_device(m, dev);
    }
    const char *q = ol_qualname(m, c->callee);
    if (q && ol_str_has_prefix(q, "torch.") && strchr(q + 6, '.') == NULL) {
        ol_nid dev = ol_call_arg(m, c->node, -1, "device");
        return dev != OL_NONE && ol_gpu_device(m, dev);
    }
    (void)t;
    return false;
}

/* Slicing out a batch: X[i:i + bs], X[perm[i:j]], X[start:end] with a
 * bound that is not a constant. A mask or a single index is not a batch. */
bool ol_batch_slice(const ol_tree *t, ol_nid index)
{
    for (ol_nid n = index; n < t->nodes.len && t->nodes.items[n].start < t->nodes.items[index].end; n++) {
        if (n != index && t->nodes.items[n].start < t->nodes.items[index].start)
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

/* Walks a method chain down to its base: `torch.from_numpy(a).float().cuda()`
 * -> `torch.from_numpy(a)`. */
ol_nid ol_chain_base(ol_model *m, ol_nid e)
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
bool ol_chain_contains(ol_model *m, ol_nid e, ol_nid move)
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

static ol_nid first_data_arg(ol_model *m, ol_nid call)
{
    ol_nid a = ol_call_arg(m, call, 0, "data");
    return a == OL_NONE ? OL_NONE : ol_chain_base(m, a);
}

static bool made_from_nothing_arg(ol_model *m, ol_nid call)
{
    ol_nid a = first_data_arg(m, call);
    return a != OL_NONE && ol_made_from_nothing(m, a);
}

/* Buffers, noise and literals are not datasets: torch.zeros(...),
 * torch.randn(...), torch.tensor([0.5, 0.5]). */
bool ol_made_from_nothing(ol_model *m, ol_nid base)
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
    /* the wrapped value may be converted on the way: `Variable(torch.randn(...).float())` */
    if (strcmp(q, "torch.autograd.Variable") == 0)
        return made_from_nothing_arg(m, base);
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
            return made_from_nothing_arg(m, base);
    return false;
}

/* Calls that read data from disk or turn an array or a table into a tensor. */
static bool loader_call(ol_model *m, ol_nid call)
{
    const ol_tree *t = m->tree;
    ol_nid callee = ol_field(t, call, OL_F_function);
    const char *q = ol_qualname(m, callee);
    static const char *const quals[] = {"torch.from_numpy", "torch.load", "numpy.load", "numpy.loadtxt",
                                        "numpy.genfromtxt", "numpy.fromfile", "numpy.memmap",
                                        "h5py.File",
                                        "scipy.io.loadmat", "datasets.load_dataset", "datasets.load_from_disk",
                                        "safetensors.torch.load_file", NULL};
    if (q) {
        for (const char *const *w = quals; *w; w++)
            if (strcmp(q, *w) == 0)
                return true;
        if (ol_str_has_prefix(q, "pandas.read_"))
            return true;
    }
    /* table.values, frame.to_numpy(), a DataFrame's columns */
    if (ol_kind_of(t, callee) == OL_N_attribute) {
        ol_nid name = ol_field(t, callee, OL_F_attribute);
        return ol_text_is(t, name, "to_numpy") || ol_text_is(t, name, "read_csv") || ol_text_is(t, name, "read_parquet");
    }
    return false;
}

static bool loaded_data_at(ol_model *m, ol_nid e, int depth)
{
    const ol_tree *t = m->tree;
    if (e == OL_NONE || depth > 4)
        return false;
    for (ol_nid n = e; n < m->subtree_end[e]; n++) {
        ol_kind k = ol_kind_of(t, n);
        if (k == OL_N_call && loader_call(m, n))
            return true;

        if (k == OL_N_attribute && ol_text_is(t, ol_field(t, n, OL_F_attribute), "values"))
            return true;
        if (k != OL_N_identifier || depth == 4)
            continue;
        ol_nid p = ol_parent(t, n);
        if (p != OL_NONE && ol_kind_of(t, p) == OL_N_attribute && ol_field(t, p, OL_F_attribute) == n)
            continue; /* the name of an attribute, not a variable */
        if (p != OL_NONE && ol_kind_of(t, p) == OL_N_keyword_argument && ol_field(t, p, OL_F_name) == n)
            continue;
        uint32_t defs[8];
        size_t count = ol_reaching_defs(m, m->node_scope[n], ol_node_sym(m, n), n, defs, 8);
        for (size_t i = 0; i < count; i++) {
            const ol_def *d = &m->defs.items[defs[i]];
            /* values bound to the name; a function's body is not its value */
            bool value_def = d->kind == OL_DEF_ASSIGN || d->kind == OL_DEF_AUGASSIGN || d->kind == OL_DEF_FOR ||
                             d->kind == OL_DEF_WALRUS;
            if (value_def && d->value != OL_NONE && d->value != e && !ol_contains(t, d->value, e) &&
                loaded_data_at(m, d->value, depth + 1))
                return true;
        }
    }
    return false;
}

bool ol_loaded_data(ol_model *m, ol_nid e)
{
    return loaded_data_at(m, e, 0);
}

/* Is e (through a few bindings) an order of the samples: a permutation
 * (`torch.randperm(n)`, `np.random.permutation(n)`), a range of indices
 * (`torch.arange(n)`, `np.arange(n)`, `list(range(n))`), shuffled in place
 * or not? */
static bool index_order(ol_model *m, ol_nid e, int depth)
{
    const ol_tree *t = m->tree;
    e = ol_unparen(t, e);
    if (e == OL_NONE || depth > 3)
        return false;
    ol_kind k = ol_kind_of(t, e);
    if (k == OL_N_call) {
        const char *q = ol_qualname(m, ol_field(t, e, OL_F_function));
        if (q && (strcmp(q, "torch.randperm") == 0 || strcmp(q, "torch.arange") == 0 ||
                  strcmp(q, "numpy.random.permutation") == 0 || strcmp(q, "numpy.arange") == 0 ||
                  strcmp(q, "builtins.range") == 0))
            return true;
        if (q && (strcmp(q, "builtins.list") == 0 || strcmp(q, "numpy.array") == 0 || strcmp(q, "torch.tensor") == 0 ||
                  strcmp(q, "torch.as_tensor") == 0 || strcmp(q, "torch.from_numpy") == 0)) {
            ol_nid a = ol_call_arg(m, e, 0, NULL);
            return a != OL_NONE && index_order(m, a, depth + 1);
        }
        /* perm.cuda(), idx.long(): the same order */
        ol_nid base = ol_chain_base(m, e);
        return base != e && index_order(m, base, depth + 1);
    }
    if (k != OL_N_identifier)
        return false;
    uint32_t defs[8];
    size_t count = ol_reaching_defs(m, m->node_scope[e], ol_node_sym(m, e), e, defs, 8);
    for (size_t i = 0; i < count; i++) {
        const ol_def *d = &m->defs.items[defs[i]];
        if (d->kind == OL_DEF_ASSIGN && d->path_len == 0 && d->value != OL_NONE && !ol_contains(t, d->value, e) &&
            index_order(m, d->value, depth + 1))
            return true;
    }
    return false;
}

/* Is a draw's size a batch size (`(bs,)`, `64`, `size=batch_size`), not
 * the shape of another tensor (`src.size()`, `(len(batch), k)`: negatives
 * drawn for each item of a batch, looked up in a table)? */
static bool batch_sized(ol_model *m, ol_nid size)
{
    const ol_tree *t = m->tree;
    if (size == OL_NONE)
        return false;
    for (ol_nid n = size; n < m->subtree_end[size]; n++) {
        ol_kind k = ol_kind_of(t, n);
        if (k == OL_N_attribute) {
            ol_nid a = ol_field(t, n, OL_F_attribute);
            if (ol_text_is(t, a, "shape") || ol_text_is(t, a, "size") || ol_text_is(t, a, "numel"))
                return false;
        }
        if (k == OL_N_call && ol_text_is(t, ol_field(t, n, OL_F_function), "len"))
            return false;
    }
    return true;
}

/* Is call a draw of a batch of random indices: `torch.randint(0, n, (bs,))`,
 * `np.random.randint(0, n, size=bs)`, `np.random.choice(n, bs)`,
 * `random.sample(range(n), bs)`? One index (`np.random.randint(n)`) is a
 * sample, not a batch. */
static bool random_indices(ol_model *m, ol_nid call)
{
    const ol_tree *t = m->tree;
    const char *q = ol_qualname(m, ol_field(t, call, OL_F_function));
    if (!q)
        return false;
    if (strcmp(q, "torch.randint") == 0) {
        /* randint(high, size) or randint(low, high, size) */
        ol_nid size = ol_call_arg(m, call, 2, "size");
        if (size == OL_NONE) {
            ol_nid second = ol_call_arg(m, call, 1, NULL);
            ol_kind k = second != OL_NONE ? ol_kind_of(t, ol_unparen(t, second)) : OL_N_identifier;
            size = k == OL_N_tuple || k == OL_N_list ? second : OL_NONE;
        }
        return batch_sized(m, size);
    }
    if (strcmp(q, "numpy.random.randint") == 0)
        return batch_sized(m, ol_call_arg(m, call, 2, "size"));
    if (strcmp(q, "numpy.random.choice") == 0)
        return batch_sized(m, ol_call_arg(m, call, 1, "size"));
    if (strcmp(q, "random.sample") == 0)
        return batch_sized(m, ol_call_arg(m, call, 1, "k"));
    return false;
}

/* Is e a random mask over the samples: a comparison with a uniform draw
 * (`torch.rand(n) < p`, `np.random.rand(n) > 0.1`)? */
static bool random_mask(ol_model *m, ol_nid e)
{
    const ol_tree *t = m->tree;
    if (ol_kind_of(t, e) != OL_N_comparison_operator)
        return false;
    for (ol_nid side = ol_first_named(t, e); side != OL_NONE; side = ol_next_named(t, side)) {
        ol_nid base = ol_chain_base(m, ol_unparen(t, side));
        if (ol_kind_of(t, base) != OL_N_call)
            continue;
        const char *q = ol_qualname(m, ol_field(t, base, OL_F_function));
        if (q && (strcmp(q, "torch.rand") == 0 || strcmp(q, "torch.rand_like") == 0 ||
                  strcmp(q, "numpy.random.rand") == 0 || strcmp(q, "numpy.random.random") == 0 ||
                  strcmp(q, "numpy.random.uniform") == 0))
            return true;
    }
    return false;
}

/* The value expression itself draws a batch of indices. */
static bool batch_index_value(ol_model *m, ol_nid v)
{
    const ol_tree *t = m->tree;
    v = ol_unparen(t, v);
    if (v == OL_NONE)
        return false;
    if (random_mask(m, v))
        return true;
    ol_nid base = ol_kind_of(t, v) == OL_N_call ? ol_chain_base(m, v) : v;
    if (ol_kind_of(t, base) == OL_N_call)
        return random_indices(m, base);
    /* perm[i:i + bs], where perm is an order of the samples */
    if (ol_kind_of(t, base) == OL_N_subscript)
        return ol_batch_slice(t, ol_field(t, base, OL_F_subscript)) && index_order(m, ol_field(t, base, OL_F_value), 0);
    return false;
}

/* Is the iterable of a for loop a split of an order of the samples into
 * batches (`perm.split(bs)`, `torch.split(perm, bs)`, `np.array_split(perm, k)`)? */
static bool split_of_order(ol_model *m, ol_nid iter)
{
    const ol_tree *t = m->tree;
    iter = ol_unparen(t, iter);
    if (ol_kind_of(t, iter) != OL_N_call)
        return false;
    ol_nid callee = ol_field(t, iter, OL_F_function);
    const char *q = ol_qualname(m, callee);
    if (q && (strcmp(q, "torch.split") == 0 || strcmp(q, "torch.chunk") == 0 || strcmp(q, "numpy.array_split") == 0))
        return index_order(m, ol_call_arg(m, iter, 0, NULL), 0);
    if (ol_kind_of(t, callee) == OL_N_attribute) {
        ol_nid meth = ol_field(t, callee, OL_F_attribute);
        if (ol_text_is(t, meth, "split") || ol_text_is(t, meth, "chunk"))
            return index_order(m, ol_field(t, callee, OL_F_object), 0);
    }
    return false;
}

bool ol_batch_index(ol_model *m, ol_nid index)
{
    const ol_tree *t = m->tree;
    if (index == OL_NONE)
        return false;
    if (ol_batch_slice(t, index))
        return true;
    ol_nid e = ol_unparen(t, index);
    if (batch_index_value(m, e))
        return true;
    if (ol_kind_of(t, e) != OL_N_identifier)
        return false;
    uint32_t loop = m->node_loop[e];
    uint32_t fn = ol_function_of(m, e);
    uint32_t defs[8];
    size_t count = ol_reaching_defs(m, m->node_scope[e], ol_node_sym(m, e), e, defs, 8);
    for (size_t i = 0; i < count; i++) {
        const ol_def *d = &m->defs.items[defs[i]];
        /* drawn afresh each step: bound in a loop that holds this use, or
         * in the helper that uses it outside any loop (`get_batch` draws
         * its indices each call) */
        bool fresh = false;
        for (uint32_t l = loop; l != OL_NO_INDEX && !fresh; l = m->loops.items[l].parent)
            fresh = ol_contains(t, m->loops.items[l].node, d->target);
        if (!fresh && loop == OL_NO_INDEX && fn != OL_NO_INDEX && m->node_loop[d->target] == OL_NO_INDEX)
            fresh = ol_function_of(m, d->target) == fn;
        if (!fresh || d->value == OL_NONE)
            continue;
        if ((d->kind == OL_DEF_ASSIGN || d->kind == OL_DEF_WALRUS) && d->path_len == 0 &&
            batch_index_value(m, d->value))
            return true;
        if (d->kind == OL_DEF_FOR && d->path_len == 0 && split_of_order(m, d->value))
            return true;
    }
    return false;
}

/* ---- datasets ---------------------------------------------------------------------- */

/* The last part of a dotted name. */
static const char *last_part(const char *q)
{
    const char *dot = strrchr(q, '.');
    return dot ? dot + 1 : q;
}

/* A class of PyTorch's or torchvision's data modules that holds samples
 * (`torch.utils.data.Dataset`, `TensorDataset`, `Subset`,
 * `torchvision.datasets.ImageFolder`). */
static bool library_dataset(const char *q)
{
    if (ol_str_has_prefix(q, "torchvision.datasets."))
        return true;
    if (!ol_str_has_prefix(q, "torch.utils.data."))
        return false;
    const char *name = last_part(q);
    return ol_str_has_suffix(name, "Dataset") || strcmp(name, "Subset") == 0;
}

/* Does the class define a method of that name itself? */
static bool defines(ol_model *m, const ol_class *cls, const char *name)
{
    for (size_t i = 0; i < cls->methods.len; i++)
        if (strcmp(ol_sym_str(m, m->functions.items[cls->methods.items[i]].name), name) == 0)
            return true;
    return false;
}

static bool class_is_dataset(ol_model *m, uint32_t ci, bool *guess, int depth)
{
    if (ci >= m->classes.len || depth > 6)
        return false;
    const ol_class *cls = &m->classes.items[ci];
    bool named = false;
    for (size_t i = 0; i < cls->bases.len; i++) {
        ol_nid base = cls->bases.items[i];
        ol_val v = ol_eval(m, base);
        if (v.kind == OL_V_CLASS && v.ref != ci) {
            bool g = false;
            if (class_is_dataset(m, v.ref, &g, depth + 1)) {
                *guess |= g;
                return true;
            }
            continue;
        }
        const char *q = ol_qualname(m, base);
        if (q && library_dataset(q))
            return true;
        /* a base of another package or file, named for what it is */
        named |= q && !ol_str_has_prefix(q, "torch.") && ol_str_has_suffix(last_part(q), "Dataset");
    }
    /* the map-style protocol: items by index and a length, not a module */
    if (defines(m, cls, "__getitem__") && defines(m, cls, "__len__") && !ol_class_is_module(m, ci))
        return true;
    if (named)
        *guess = true;
    return named;
}

bool ol_class_is_dataset(ol_model *m, uint32_t cls, bool *guess)
{
    *guess = false;
    return class_is_dataset(m, cls, guess, 0);
}

bool ol_builds_dataset(ol_model *m, ol_nid call, bool *guess)
{
    const ol_tree *t = m->tree;
    *guess = false;
    if (call == OL_NONE || ol_kind_of(t, call) != OL_N_call)
        return false;
    ol_nid callee = ol_field(t, call, OL_F_function);
    ol_val v = ol_eval(m, callee);
    if (v.kind == OL_V_CLASS)
        return class_is_dataset(m, v.ref, guess, 0);
    const char *q = ol_qualname(m, callee);
    if (!q)
        return false;
    if (library_dataset(q) || strcmp(q, "torch.utils.data.DataLoader") == 0 ||
        strcmp(q, "torch.utils.data.dataloader.DataLoader") == 0)
        return true;
    if (ol_str_has_prefix(q, "torch.") || ol_str_has_prefix(q, "builtins."))
        return false;
    /* a class of another package or file, named for what it is */
    const char *name = last_part(q);
    *guess = ol_str_has_suffix(name, "Dataset") || ol_str_has_suffix(name, "DataLoader");
    return *guess;
}
