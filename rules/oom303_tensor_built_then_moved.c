/*
 * OOM303 tensor-built-then-moved: a tensor made by a torch factory in host
 * memory only to be copied to a device at once: `torch.zeros(n).cuda()`,
 * `torch.randn(b, d).to(device)`, `torch.arange(n).to("cuda")`.
 *
 * The factory allocates and fills the tensor in host memory, `.to()` /
 * `.cuda()` allocates it again on the device and copies it over (a
 * synchronising host-to-device transfer), and the host copy is thrown away.
 * `device=` builds it where it is needed in one step.
 *
 * Flagged: zeros, ones, empty, full, arange, linspace, logspace, eye, rand,
 * randn, randint, randperm, followed directly by `.cuda()` or by `.to()` of
 * a device we can recognise (a device string other than "cpu",
 * `torch.device(...)`, a value known to be a device, or a name such as
 * `device`, `args.device`, `x.device`). Not flagged: `*_like` factories
 * (they follow their argument's device), `torch.tensor(data)` and
 * `torch.from_numpy(a)` (the data exists on the host anyway), a factory
 * given `device=`, `out=`, `pin_memory=` or `generator=` (a CPU generator
 * draws on the host only), and `.to(dtype)`.
 *
 * Also flagged: a chain of place-keeping methods, torch functions of one
 * tensor or arithmetic with a number between the factory and the move, and a
 * factory bound to a name that a later statement of the same block moves,
 * the host tensor used for nothing else (reported at the factory).
 *
 * The fix moves the device into the factory. It is safe for deterministic
 * factories when the move only names the device (`non_blocking` then has
 * nothing to do). Random factories draw different numbers on the device's
 * generator, and `requires_grad=True` makes the result a leaf where it was
 * not: those fixes are unsafe. A `.to()` that also changes the dtype, the
 * memory format or copies gets no fix.
 */
#include <stdlib.h>
#include <string.h>

#include "rule.h"

static const char *const DETERMINISTIC[] = {"zeros", "ones", "empty", "full", "arange", "linspace", "logspace",
                                            "eye", NULL};
static const char *const RANDOM[] = {"rand", "randn", "randint", "randperm", NULL};
/* legacy typed constructors: given sizes, an uninitialised tensor on the host */
static const char *const LEGACY[] = {"FloatTensor", "DoubleTensor", "HalfTensor", "BFloat16Tensor", "LongTensor",
                                     "IntTensor", "ShortTensor", "CharTensor", "ByteTensor", "BoolTensor", NULL};
/* `dev`, `args.device`, and the index of a process's GPU (`rank`, `local_rank`, `gpu_id`) */
static const char *const DEVICE_WORDS[] = {"device", "dev", "rank", "gpu", NULL};

static bool listed(const char *s, const char *const *list)
{
    for (; *list; list++)
        if (strcmp(s, *list) == 0)
            return true;
    return false;
}

/* The factory name (`zeros`) when call is `torch.zeros(...)`, else NULL. */
static const char *factory_name(ol_model *m, ol_nid call, bool *random)
{
    uint32_t ci = ol_call_at(m, call);
    if (ci == OL_NO_INDEX)
        return NULL;
    const char *q = ol_qualname(m, m->calls.items[ci].callee);
    if (!q || !ol_str_has_prefix(q, "torch.") || strchr(q + 6, '.') != NULL)
        return NULL;
    const char *name = q + 6;
    *random = listed(name, RANDOM);
    if (*random || listed(name, DETERMINISTIC))
        return name;
    /* a legacy typed constructor given sizes (`torch.FloatTensor(n, c, h,
     * w)`): two or more positional arguments, none of them data (one
     * argument may be the data it converts) */
    if (!listed(name, LEGACY))
        return NULL;
    const ol_tree *t = m->tree;
    ol_nid args = ol_field(t, call, OL_F_arguments);
    int sizes = 0;
    for (ol_nid a = ol_first_named(t, args); a != OL_NONE; a = ol_next_named(t, a)) {
        ol_kind k = ol_kind_of(t, ol_unparen(t, a));
        if (k == OL_N_keyword_argument)
            continue;
        if (k == OL_N_list || k == OL_N_tuple || k == OL_N_list_comprehension || k == OL_N_string ||
            k == OL_N_list_splat || k == OL_N_dictionary_splat || k == OL_N_generator_expression)
            return NULL;
        sizes++;
    }
    return sizes >= 2 ? name : NULL;
}

/* Keyword arguments that keep the tensor where it is, or that we cannot
 * carry over (`**kwargs` might hold a device). */
static bool factory_pins_place(const ol_tree *t, ol_nid call, bool *requires_grad)
{
    ol_nid args = ol_field(t, call, OL_F_arguments);
    for (ol_nid a = ol_first_named(t, args); a != OL_NONE; a = ol_next_named(t, a)) {
        ol_kind k = ol_kind_of(t, a);
        if (k == OL_N_dictionary_splat || k == OL_N_list_splat)
            return true;
        if (k != OL_N_keyword_argument)
            continue;
        ol_nid name = ol_field(t, a, OL_F_name);
        /* a generator draws on its own device: `device=` with a CPU one raises */
        if (ol_text_is(t, name, "device") || ol_text_is(t, name, "out") || ol_text_is(t, name, "pin_memory") ||
            ol_text_is(t, name, "generator"))
            return true;
        if (ol_text_is(t, name, "requires_grad"))
            *requires_grad = ol_kind_of(t, ol_field(t, a, OL_F_value)) != OL_N_false;
    }
    return false;
}

typedef enum device_kind { DEV_NOT, DEV_CPU, DEV_KNOWN } device_kind;

/* Is e a device other than the CPU? */
static device_kind classify_device(ol_model *m, ol_nid e)
{
    const ol_tree *t = m->tree;
    e = ol_unparen(t, e);
    const char *s;
    uint32_t len;
    if (ol_string_value(t, e, &s, &len)) {
        if (len >= 3 && memcmp(s, "cpu", 3) == 0)
            return DEV_CPU;
        static const char *const prefixes[] = {"cuda", "mps", "xpu", "hpu", "npu", NULL};
        for (const char *const *p = prefixes; *p; p++)
            if (len >= strlen(*p) && memcmp(s, *p, strlen(*p)) == 0)
                return DEV_KNOWN;
        return DEV_NOT;
    }
    ol_kind k = ol_kind_of(t, e);
    if (k == OL_N_call) {
        const char *q = ol_qualname(m, ol_field(t, e, OL_F_function));
        if (q && strcmp(q, "torch.device") == 0)
            return DEV_KNOWN;
        /* `x.get_device()`: the index of the GPU x lives on */
        ol_nid fn = ol_field(t, e, OL_F_function);
        if (ol_kind_of(t, fn) == OL_N_attribute && ol_text_is(t, ol_field(t, fn, OL_F_attribute), "get_device"))
            return DEV_KNOWN;
        return DEV_NOT;
    }
    if (k != OL_N_identifier && k != OL_N_attribute)
        return DEV_NOT;
    ol_val v = ol_eval(m, e);
    if (v.kind == OL_V_DEVICE)
        return DEV_KNOWN;
    if (v.kind != OL_V_UNKNOWN && v.kind != OL_V_OBJECT)
        return DEV_NOT; /* a tensor (`.to(other)` also casts), a dtype, a string we cannot read */
    ol_nid name = k == OL_N_attribute ? ol_field(t, e, OL_F_attribute) : e;
    const char *text = ol_text(t, name, &len);
    return ol_name_looks_like(text, len, DEVICE_WORDS) ? DEV_KNOWN : DEV_NOT;
}

/* Methods that reshape, cast or derive a tensor without changing where it
 * lives: a factory followed by them and then moved was still built on the
 * host (`torch.ones(n, n).triu(1).bool().to(device)`). */
static bool keeps_place(const char *name)
{
    static const char *const methods[] = {"triu", "tril", "repeat", "repeat_interleave", "view", "reshape",
                                          "unsqueeze", "squeeze", "expand", "t", "transpose", "permute", "flip",
                                          "float", "long", "bool", "int", "half", "double", "byte", "bfloat16",
                                          "type", "to", "contiguous", "clone", "fill_", "mul", "add", "neg",
                                          "abs", "exp", "log", "sqrt", "cumsum", "flatten", "zero_", NULL};
    return listed(name, methods);
}

/* torch functions of one tensor (the first argument) whose result stays where
 * it is: `torch.triu(torch.ones(n, n), diagonal=1)` is on the host. */
static const char *const FUNCTIONAL[] = {"triu", "tril", "repeat_interleave", "flip", "transpose", "reshape",
                                         "t", "permute", "unsqueeze", "squeeze", "flatten", "cumsum", "abs",
                                         "exp", "log", "sqrt", "neg", "clone", NULL};

/* A Python number: `2`, `-1.0`, or a name whose value is one. Arithmetic
 * with it keeps a tensor where it is (a tensor operand on the device would
 * not). */
static bool is_number(ol_model *m, ol_nid e)
{
    const ol_tree *t = m->tree;
    e = ol_unparen(t, e);
    ol_kind k = ol_kind_of(t, e);
    if (k == OL_N_unary_operator)
        return is_number(m, ol_field(t, e, OL_F_argument));
    if (k == OL_N_integer || k == OL_N_float)
        return true;
    return (k == OL_N_identifier || k == OL_N_attribute) && ol_eval(m, e).kind == OL_V_NUMBER;
}

/* The factory call under a chain of place-keeping methods and comparisons
 * (`(torch.rand(n) < p)`, `torch.arange(n).repeat(b)`), or OL_NONE. *direct
 * tells whether the factory is the moved value itself. A `.to()` in the
 * chain only counts when it names a dtype (`.to(x.dtype)`), not a device. */
static ol_nid factory_under(ol_model *m, ol_nid e, bool *direct)
{
    const ol_tree *t = m->tree;
    *direct = true;
    for (int depth = 0; depth < 8; depth++) {
        e = ol_unparen(t, e);
        ol_kind k = ol_kind_of(t, e);
        if (k == OL_N_comparison_operator) {
            e = ol_first_named(t, e);
            *direct = false;
            continue;
        }
        if (k == OL_N_binary_operator) {
            /* `torch.rand(n) * 2 - 1`: arithmetic with a number keeps it on the host */
            ol_nid l = ol_field(t, e, OL_F_left), r = ol_field(t, e, OL_F_right);
            if (is_number(m, r))
                e = l;
            else if (is_number(m, l))
                e = r;
            else
                return OL_NONE;
            *direct = false;
            continue;
        }
        if (k == OL_N_unary_operator) {
            e = ol_field(t, e, OL_F_argument);
            *direct = false;
            continue;
        }
        if (k != OL_N_call)
            return OL_NONE;
        bool random;
        if (factory_name(m, e, &random))
            return e;
        /* the functional form: `torch.triu(torch.ones(n, n), diagonal=1)` */
        const char *q = ol_qualname(m, ol_field(t, e, OL_F_function));
        if (q && ol_str_has_prefix(q, "torch.") && strchr(q + 6, '.') == NULL) {
            if (!listed(q + 6, FUNCTIONAL))
                return OL_NONE;
            e = ol_call_arg(m, e, 0, "input");
            *direct = false;
            continue;
        }
        uint32_t ci = ol_call_at(m, e);
        if (ci == OL_NO_INDEX || m->calls.items[ci].receiver == OL_NONE)
            return OL_NONE;
        const char *name = ol_sym_str(m, m->calls.items[ci].name);
        if (!name || !keeps_place(name))
            return OL_NONE;
        if (strcmp(name, "to") == 0) {
            ol_nid a = ol_call_arg(m, e, 0, "dtype");
            if (a == OL_NONE || classify_device(m, a) != DEV_NOT)
                return OL_NONE;
        }
        e = m->calls.items[ci].receiver;
        *direct = false;
    }
    return OL_NONE;
}

/* The file's statements that seed the CPU generator
 * (`torch.manual_seed(s)`), in node order: found on the first question. */
typedef struct seed_list {
    OL_VEC(ol_nid) stmts;
    bool built;
} seed_list;

/* Was the CPU generator seeded earlier in the blocks around n
 * (`torch.manual_seed(s)` before `torch.randn(...).to(device)`), inside n's
 * function or class? Then the host draw is deliberate: the same numbers on
 * any device. A seeding statement counts when its block holds n, after it. */
static bool seeded_before(ol_model *m, seed_list *seeds, ol_nid n)
{
    const ol_tree *t = m->tree;
    if (!seeds->built) {
        static const char *const seeders[] = {"torch.manual_seed", "torch.random.manual_seed", NULL};
        seeds->built = true;
        for (ol_nid s = 0; s < t->nodes.len; s++) {
            if (ol_kind_of(t, s) != OL_N_expression_statement)
                continue;
            ol_nid call = ol_first_named(t, s);
            if (call != OL_NONE && ol_kind_of(t, call) == OL_N_call && ol_call_is(m, call, seeders))
                ol_vec_push(&seeds->stmts, s);
        }
    }
    if (seeds->stmts.len == 0)
        return false;
    /* the blocks looked at lie below n's innermost function or class */
    ol_nid owner = OL_NONE;
    for (ol_nid p = ol_parent(t, n); p != OL_NONE && owner == OL_NONE; p = ol_parent(t, p))
        if (ol_kind_of(t, p) == OL_N_function_definition || ol_kind_of(t, p) == OL_N_class_definition)
            owner = p;
    for (size_t i = seeds->stmts.len; i-- > 0;) {
        ol_nid s = seeds->stmts.items[i];
        if (owner != OL_NONE && s < owner)
            break;
        if (s >= n || ol_contains(t, s, n))
            continue; /* after n, or holding it */
        ol_nid block = ol_parent(t, s);
        ol_kind bk = ol_kind_of(t, block);
        if ((bk == OL_N_block || bk == OL_N_module) && (owner == OL_NONE || block > owner) &&
            ol_contains(t, block, n))
            return true;
    }
    return false;
}

/* used_as_tensor's answers, by the position of a name's first use in its
 * function among the file's identifiers (ol_name_uses): the end of the uses
 * asked about + 1, and the answer. A name's uses in one function are asked
 * about once per move of it (`.to(device)` thousands of times). */
typedef struct tensor_memo {
    uint32_t *end;
    bool *use;
} tensor_memo;

/* Uses of the name `id` among nodes [from, to). */
static size_t name_count(ol_model *m, ol_nid id, ol_nid from, ol_nid to)
{
    size_t len;
    ol_name_uses(m, id, from, to, &len, NULL);
    return len;
}

/* The last use of the name `id` before node `before`, or OL_NONE. */
static ol_nid name_last_before(ol_model *m, ol_nid id, ol_nid before)
{
    size_t len;
    const ol_nid *uses = ol_name_uses(m, id, 0, before, &len, NULL);
    return len ? uses[len - 1] : OL_NONE;
}

/* Is n, inside statement stmt, run only under a condition of an expression
 * (`a if c else b`, `c and b`) or later (a lambda, a comprehension)? */
static bool conditional_within(const ol_tree *t, ol_nid n, ol_nid stmt)
{
    for (ol_nid p = ol_parent(t, n); p != OL_NONE && p != stmt; p = ol_parent(t, p)) {
        ol_kind k = ol_kind_of(t, p);
        if (k == OL_N_conditional_expression || k == OL_N_boolean_operator || k == OL_N_lambda ||
            k == OL_N_list_comprehension || k == OL_N_generator_expression || k == OL_N_set_comprehension ||
            k == OL_N_dictionary_comprehension)
            return true;
    }
    return false;
}

/* The one binding of identifier id that reaches it, when it binds a
 * parameter of the function: its def, or NULL. */
static const ol_def *param_def(ol_model *m, ol_nid id)
{
    uint32_t defs[2];
    size_t n = ol_reaching_defs(m, m->node_scope[id], ol_node_sym(m, id), id, defs, 2);
    if (n != 1 || m->defs.items[defs[0]].kind != OL_DEF_PARAM)
        return NULL;
    return &m->defs.items[defs[0]];
}

/* Is function fi a method of an nn.Module (its inputs meet the module's
 * parameters) or a `forward()`? */
static bool module_method(ol_model *m, uint32_t fi)
{
    if (fi == OL_NO_INDEX)
        return false;
    const ol_function *f = &m->functions.items[fi];
    if (f->cls != OL_NO_INDEX && ol_class_is_module(m, f->cls))
        return true;
    const char *name = ol_sym_str(m, f->name);
    return name && strcmp(name, "forward") == 0;
}

/* The tensor under subscripts and place-keeping methods: `feats[0]` ->
 * `feats`, `x.float()` -> `x`. */
static ol_nid tensor_root(ol_model *m, ol_nid e)
{
    const ol_tree *t = m->tree;
    for (int depth = 0; depth < 8; depth++) {
        e = ol_unparen(t, e);
        ol_kind k = ol_kind_of(t, e);
        if (k == OL_N_subscript) {
            e = ol_field(t, e, OL_F_value);
            continue;
        }
        if (k != OL_N_call)
            return e;
        uint32_t ci = ol_call_at(m, e);
        const char *name = ci != OL_NO_INDEX ? ol_sym_str(m, m->calls.items[ci].name) : NULL;
        if (!name || strcmp(name, "to") == 0 || !keeps_place(name) || m->calls.items[ci].receiver == OL_NONE)
            return e;
        e = m->calls.items[ci].receiver;
    }
    return e;
}

/* Is the value bound to e known to live in host memory: a factory or a
 * conversion of host data given no device (`torch.zeros(n)`,
 * `torch.from_numpy(a)`, `torch.tensor(v)`), or a `.cpu()` copy? Then a
 * move to its place keeps the tensor on the host. */
static bool known_on_host(ol_model *m, ol_nid e, int depth)
{
    const ol_tree *t = m->tree;
    static const char *const converters[] = {"torch.tensor", "torch.as_tensor", "torch.from_numpy", "torch.Tensor",
                                             NULL};
    e = tensor_root(m, e);
    if (depth > 4 || e == OL_NONE)
        return false;
    ol_kind k = ol_kind_of(t, e);
    if (k == OL_N_identifier) {
        ol_nid v = ol_bound_value(m, e);
        if (v == OL_NONE)
            return ol_batch_left_on_host(m, e, NULL); /* `y` of `for x, y in loader:`, x moved and y not */
        return known_on_host(m, v, depth + 1);
    }
    if (k != OL_N_call)
        return false;
    uint32_t ci = ol_call_at(m, e);
    if (ci != OL_NO_INDEX && m->calls.items[ci].name == m->names.cpu && m->calls.items[ci].receiver != OL_NONE)
        return true;
    bool direct, random, requires_grad = false;
    ol_nid factory = factory_under(m, e, &direct);
    if (factory != OL_NONE && factory_name(m, factory, &random))
        return !factory_pins_place(t, factory, &requires_grad) || ol_call_arg(m, factory, -1, "pin_memory") != OL_NONE;
    if (!ol_call_is(m, e, converters))
        return false;
    ol_nid args = ol_field(t, e, OL_F_arguments);
    for (ol_nid a = ol_first_named(t, args); a != OL_NONE; a = ol_next_named(t, a)) {
        ol_kind ak = ol_kind_of(t, a);
        if (ak == OL_N_dictionary_splat)
            return false;
        if (ak == OL_N_keyword_argument && ol_text_is(t, ol_field(t, a, OL_F_name), "device"))
            return false;
    }
    return true;
}

/* Is the tensor e known to live on the device: moved there where it is
 * bound (`x = x.to(device)`), a model's output or parameters, the input of a
 * module's method (it meets the module's parameters), or a parameter or
 * buffer of the module (`self.proj.weight`)? The reason is added to why. */
static bool known_on_device(ol_model *m, ol_nid e, ol_reasons *why, int depth)
{
    const ol_tree *t = m->tree;
    e = tensor_root(m, e);
    if (depth > 4 || e == OL_NONE)
        return false;
    ol_kind k = ol_kind_of(t, e);
    uint32_t fi = ol_function_of(m, e);
    if (k == OL_N_attribute) {
        /* `self.weight`, `self.proj.weight`: what the module holds moves with it */
        ol_nid base = e;
        while (ol_kind_of(t, base) == OL_N_attribute)
            base = ol_field(t, base, OL_F_object);
        if (ol_kind_of(t, base) == OL_N_identifier && ol_text_is(t, base, "self") && fi != OL_NO_INDEX &&
            m->functions.items[fi].cls != OL_NO_INDEX && ol_class_is_module(m, m->functions.items[fi].cls)) {
            char *text = ol_node_str_short(t, e);
            ol_because(why, m, e, "`%s` is held by the module, on the device the module is moved to", text);
            free(text);
            return true;
        }
        return false;
    }
    ol_val v = ol_eval(m, e);
    if ((v.kind == OL_V_TENSOR || v.kind == OL_V_UNKNOWN) && (v.flags & (OL_VF_GRAPH | OL_VF_PARAM))) {
        char *text = ol_node_str_short(t, e);
        ol_because(why, m, e, "`%s` is %s, on the model's device", text,
                   (v.flags & OL_VF_PARAM) ? "a model's parameters" : "computed by the model");
        free(text);
        return true;
    }
    if (k == OL_N_call) {
        /* a move in the chain: `x.float().to(device)` */
        for (int i = 0; i < 8 && ol_kind_of(t, e) == OL_N_call; i++) {
            uint32_t ci = ol_call_at(m, e);
            if (ci == OL_NO_INDEX)
                return false;
            const ol_call *c = &m->calls.items[ci];
            if (c->name == m->names.cpu)
                return false;
            if (ol_call_moves_to_gpu(m, c)) {
                char *text = ol_node_str_short(t, e);
                ol_because(why, m, e, "`%s` moves it to the GPU", text);
                free(text);
                return true;
            }
            if (c->receiver == OL_NONE)
                return false;
            e = ol_unparen(t, c->receiver);
        }
        return false;
    }
    if (k != OL_N_identifier)
        return false;
    const ol_def *pd = param_def(m, e);
    if (pd) {
        if (!module_method(m, fi) || pd->index == 0 || ol_text_is(t, pd->target, "self"))
            return false;
        char *name = ol_node_str(t, e);
        char *label = ol_node_str(t, ol_field(t, m->functions.items[fi].node, OL_F_name));
        ol_because(why, m, pd->target, "`%s` is an input of the module's `%s()`, on the module's device", name, label);
        free(name);
        free(label);
        return true;
    }
    ol_nid bound = ol_bound_value(m, e);
    return bound != OL_NONE && known_on_device(m, bound, why, depth + 1);
}

/* Is identifier id used as a tensor in its function (`x.size(0)`,
 * `x.shape`, `x.device`)? A dtype or a device never is. */
static bool used_as_tensor(ol_model *m, tensor_memo *memo, ol_nid id)
{
    static const char *const attrs[] = {"size", "shape", "device", "dim", "ndim", "numel", "is_cuda", "new_zeros",
                                        "new_ones", "new_empty", "new_full", "new_tensor", NULL};
    const ol_tree *t = m->tree;
    uint32_t fi = ol_function_of(m, id);
    ol_nid region = fi != OL_NO_INDEX ? m->functions.items[fi].node : 0;
    size_t lo, count;
    const ol_nid *uses = ol_name_uses(m, id, region, m->subtree_end[region], &count, &lo);
    if (count == 0)
        return false;
    size_t hi = lo + count;
    if (!memo->end) {
        memo->end = ol_xcalloc(ol_name_uses_total(m), sizeof(uint32_t));
        memo->use = ol_xcalloc(ol_name_uses_total(m), sizeof(bool));
    }
    if (memo->end[lo] == hi + 1)
        return memo->use[lo];
    bool found = false;
    for (size_t i = 0; i < count && !found; i++) {
        ol_nid use = uses[i];
        ol_nid p = ol_parent(t, use);
        if (ol_kind_of(t, p) != OL_N_attribute || ol_field(t, p, OL_F_object) != use)
            continue;
        uint32_t len;
        const char *a = ol_text(t, ol_field(t, p, OL_F_attribute), &len);
        for (const char *const *w = attrs; *w && !found; w++)
            found = strlen(*w) == len && memcmp(a, *w, len) == 0;
    }
    memo->end[lo] = (uint32_t)hi + 1;
    memo->use[lo] = found;
    return found;
}

/* Does an if statement's condition only ask where tensors live
 * (`x.is_cuda`, `x.device.type == "cuda"`, `torch.cuda.is_available()`)?
 * Then its body moving a tensor to the GPU picks the device of the data the
 * tensor meets, which `device=` says as well. A flag (`if use_cuda:`) is a
 * choice the code may leave off on purpose. */
static bool condition_picks_device(ol_model *m, ol_nid cond)
{
    const ol_tree *t = m->tree;
    static const char *const available[] = {"torch.cuda.is_available", NULL};
    cond = ol_unparen(t, cond);
    ol_kind k = ol_kind_of(t, cond);
    if (k == OL_N_attribute)
        return ol_text_is(t, ol_field(t, cond, OL_F_attribute), "is_cuda");
    if (k == OL_N_call)
        return ol_call_is(m, cond, available);
    if (k == OL_N_comparison_operator) {
        ol_nid l = ol_unparen(t, ol_first_named(t, cond));
        const char *s;
        uint32_t len;
        ol_nid r = ol_next_named(t, l);
        if (r == OL_NONE || ol_next_named(t, r) != OL_NONE || !ol_string_value(t, r, &s, &len) || len != 4 ||
            memcmp(s, "cuda", 4) != 0)
            return false;
        if (ol_kind_of(t, l) != OL_N_attribute || !ol_text_is(t, ol_field(t, l, OL_F_attribute), "type"))
            return false;
        ol_nid dev = ol_field(t, l, OL_F_object);
        return ol_kind_of(t, dev) == OL_N_attribute && ol_text_is(t, ol_field(t, dev, OL_F_attribute), "device");
    }
    return false;
}

/* The if statement around the move's statement stmt, when stmt is all its
 * body, it has no other branch and its condition only picks the device;
 * else OL_NONE. */
static ol_nid device_pick_around(ol_model *m, ol_nid stmt)
{
    const ol_tree *t = m->tree;
    ol_nid block = ol_parent(t, stmt);
    ol_nid ifs = ol_parent(t, block);
    if (ol_kind_of(t, block) != OL_N_block || ol_kind_of(t, ifs) != OL_N_if_statement ||
        ol_field(t, ifs, OL_F_consequence) != block || ol_field(t, ifs, OL_F_alternative) != OL_NONE ||
        ol_first_named(t, block) != stmt || ol_next_named(t, stmt) != OL_NONE)
        return OL_NONE;
    return condition_picks_device(m, ol_field(t, ifs, OL_F_condition)) ? ifs : OL_NONE;
}

/* `noise = torch.zeros(b, d)` and, in a later statement of the same block,
 * `noise = noise.to(device)` (or `self.buf = self.buf.cuda()`, or
 * `model(x) + noise.cuda()` where noise is used nowhere else): the factory
 * bound to the moved name, its host tensor used for nothing but the copy.
 * Returns the factory call (possibly under a chain), or OL_NONE. Silent when
 * the name is used between (filled in a loop, indexed, handed to numpy),
 * when the move runs under a condition, and for an attribute that is not
 * rebound by the move (other methods may read the host tensor). A move that
 * is all the body of an `if` whose condition only picks the device (`if
 * x.is_cuda:`, device_pick_around) counts: *picked is then that `if`. */
static ol_nid factory_bound_before(ol_model *m, const ol_call *move, ol_nid *picked)
{
    const ol_tree *t = m->tree;
    /* `causal.bool().to(device)`: the name under place-keeping methods */
    ol_nid recv = ol_unparen(t, move->receiver);
    for (int depth = 0; depth < 8 && ol_kind_of(t, recv) == OL_N_call; depth++) {
        uint32_t ci = ol_call_at(m, recv);
        const char *name = ci != OL_NO_INDEX ? ol_sym_str(m, m->calls.items[ci].name) : NULL;
        if (!name || strcmp(name, "to") == 0 || !keeps_place(name) || m->calls.items[ci].receiver == OL_NONE)
            return OL_NONE;
        recv = ol_unparen(t, m->calls.items[ci].receiver);
    }
    /* key: the identifier whose uses are counted (`buf` of `self.buf`) */
    ol_nid key = recv, self = OL_NONE;
    if (ol_kind_of(t, recv) == OL_N_attribute) {
        self = ol_field(t, recv, OL_F_object);
        key = ol_field(t, recv, OL_F_attribute);
        if (ol_kind_of(t, self) != OL_N_identifier || !ol_text_is(t, self, "self") ||
            ol_kind_of(t, key) != OL_N_identifier)
            return OL_NONE;
    } else if (ol_kind_of(t, recv) != OL_N_identifier) {
        return OL_NONE;
    }
    ol_nid stmt = ol_statement_of(t, move->node);
    ol_kind sk = ol_kind_of(t, stmt);
    if ((sk != OL_N_expression_statement && sk != OL_N_return_statement) || conditional_within(t, move->node, stmt))
        return OL_NONE;
    ol_nid inner = ol_first_named(t, stmt);
    bool rebind = ol_kind_of(t, inner) == OL_N_assignment && ol_same_text(t, ol_field(t, inner, OL_F_left), recv);
    if (self != OL_NONE && !rebind)
        return OL_NONE;
    /* the binding: the last use of the name before the move's statement */
    ol_nid last = name_last_before(m, key, stmt);
    if (last == OL_NONE)
        return OL_NONE;
    ol_nid target = self != OL_NONE ? ol_parent(t, last) : last;
    ol_nid bind = ol_statement_of(t, target);
    ol_nid assign = ol_first_named(t, bind);
    *picked = OL_NONE;
    if (ol_parent(t, bind) != ol_parent(t, stmt)) {
        ol_nid ifs = device_pick_around(m, stmt);
        if (ifs == OL_NONE || ol_parent(t, bind) != ol_parent(t, ifs))
            return OL_NONE;
        *picked = ifs;
    }
    if ( ol_kind_of(t, bind) != OL_N_expression_statement ||
        ol_kind_of(t, assign) != OL_N_assignment || ol_field(t, assign, OL_F_left) != target ||
        !ol_same_text(t, target, recv))
        return OL_NONE;
    bool direct;
    ol_nid factory = factory_under(m, ol_field(t, assign, OL_F_right), &direct);
    if (factory == OL_NONE)
        return OL_NONE;
    /* from the binding to the end of the move's statement: the binding's
     * target, the move's receiver, a rebinding target, nothing else */
    ol_nid after = m->subtree_end[stmt];
    if (name_count(m, key, bind, after) != 2 + (size_t)rebind)
        return OL_NONE;
    /* `self.buf.fill_(...)` through a method called in between */
    if (self != OL_NONE && name_count(m, self, m->subtree_end[bind], stmt) != 0)
        return OL_NONE;
    if (!rebind) {
        /* the host tensor is read nowhere else: not after the move, not in an
         * earlier iteration's statements before the binding */
        uint32_t fn = ol_function_of(m, move->node);
        ol_nid region = fn != OL_NO_INDEX ? m->functions.items[fn].node : 0;
        if (name_count(m, key, region, m->subtree_end[region]) != 2)
            return OL_NONE;
    }
    return factory;
}

static void check(ol_check *c)
{
    ol_model *m = c->model;
    const ol_tree *t = c->tree;
    tensor_memo tensors = {0};
    seed_list seeds = {0};
    for (size_t i = 0; i < m->calls.len; i++) {
        const ol_call *call = &m->calls.items[i];
        bool is_cuda = call->name == m->names.cuda, is_to = call->name == m->names.to;
        const char *method = ol_sym_str(m, call->name);
        bool is_type_as = method && strcmp(method, "type_as") == 0;
        if ((!is_cuda && !is_to && !is_type_as) || call->receiver == OL_NONE)
            continue;
        bool direct = true, later = false;
        ol_nid picked = OL_NONE;
        ol_nid factory = factory_under(m, call->receiver, &direct);
        if (factory == OL_NONE) {
            factory = factory_bound_before(m, call, &picked);
            later = factory != OL_NONE;
            direct = false;
        }
        bool random = false, requires_grad = false;
        const char *name = factory != OL_NONE ? factory_name(m, factory, &random) : NULL;
        if (!name || factory_pins_place(t, factory, &requires_grad))
            continue;
        if (random && seeded_before(m, &seeds, later ? factory : call->node))
            continue; /* drawn on the host on purpose, for the same numbers on any device */
        ol_nid args = ol_field(t, call->node, OL_F_arguments);
        ol_nid device = OL_NONE;
        char *device_text = NULL;
        bool carry = true; /* the move names nothing but the device */
        ol_reasons why = {0};
        /* the place of another tensor: `.type_as(x)`, `.to(x)`, reported when
         * that tensor is known to be on the device, never when it may be on
         * the host (a batch never moved, a host tensor, a parameter of a
         * helper that may run anywhere) */
        ol_nid other = OL_NONE;
        if (is_type_as || is_to) {
            ol_nid a = ol_call_arg(m, call->node, 0, "other");
            if (a != OL_NONE && (is_type_as || classify_device(m, a) == DEV_NOT)) {
                ol_nid root = tensor_root(m, a);
                bool tensor = is_type_as || ol_eval(m, root).kind == OL_V_TENSOR ||
                              (ol_kind_of(t, root) == OL_N_identifier && used_as_tensor(m, &tensors, root));
                if (!tensor || known_on_host(m, a, 0) || !known_on_device(m, a, &why, 0))
                    continue;
                other = a;
            } else if (is_type_as) {
                continue;
            }
        }
        if (other != OL_NONE) {
            char *text = ol_node_str(t, ol_unparen(t, other));
            bool primary = ol_is_primary(t, ol_unparen(t, other));
            const char *open = primary ? "" : "(", *close = primary ? "" : ")";
            /* `.type_as(x)` casts to x's dtype as well */
            device_text = is_type_as ? ol_xasprintf("%s%s%s.device, dtype=%s%s%s.dtype", open, text, close, open,
                                                    text, close)
                                     : ol_xasprintf("%s%s%s.device", open, text, close);
            free(text);
            carry = false; /* the move also casts to the other tensor's dtype */
        } else if (picked != OL_NONE) {
            /* `if x.is_cuda: z = z.cuda()`: x's device says both branches */
            ol_nid cond = ol_unparen(t, ol_field(t, picked, OL_F_condition));
            if (ol_kind_of(t, cond) == OL_N_attribute) {
                char *text = ol_node_str(t, ol_field(t, cond, OL_F_object));
                device_text = ol_xasprintf("%s.device", text);
                free(text);
            }
            char *text = ol_node_str_short(t, cond);
            ol_because(&why, m, cond, "`%s` only picks the device the tensor goes to, as `device=` would",
                       text);
            free(text);
            carry = false;
        }
        for (ol_nid a = ol_first_named(t, args); a != OL_NONE; a = ol_next_named(t, a)) {
            if (ol_kind_of(t, a) == OL_N_keyword_argument) {
                ol_nid kw = ol_field(t, a, OL_F_name);
                if (ol_text_is(t, kw, "device"))
                    device = ol_field(t, a, OL_F_value);
                else if (!ol_text_is(t, kw, "non_blocking"))
                    carry = false;
            } else if (device == OL_NONE && a == ol_first_named(t, args)) {
                device = a;
            } else {
                carry = false;
            }
        }
        if (other != OL_NONE) {
            /* the device is the other tensor's */
        } else if (is_cuda) {
            if (device_text) {
                /* picked by the condition around the move */
            } else if (device == OL_NONE) {
                device_text = ol_xstrdup("\"cuda\"");
            } else if (ol_kind_of(t, ol_unparen(t, device)) == OL_N_integer) {
                char *index = ol_node_str(t, ol_unparen(t, device));
                device_text = ol_xasprintf("\"cuda:%s\"", index);
                free(index);
            } else {
                carry = false; /* `.cuda(gpu)`: gpu may be None (the current device) */
            }
        } else {
            if (device == OL_NONE || classify_device(m, device) != DEV_KNOWN) {
                free(device_text);
                continue;
            }
            /* `.to(x.device)`: a copy only when x is (or may be) on an
             * accelerator; where x is known to be in host memory the tensor
             * stays there */
            ol_nid dev = ol_unparen(t, device);
            if (ol_kind_of(t, dev) == OL_N_attribute && ol_text_is(t, ol_field(t, dev, OL_F_attribute), "device")) {
                ol_nid holder = ol_field(t, dev, OL_F_object);
                if (known_on_host(m, holder, 0)) {
                    free(device_text);
                    continue;
                }
                known_on_device(m, holder, &why, 0);
            }
            if (!device_text)
                device_text = ol_node_str(t, device);
        }
        ol_diag *d;
        if (later) {
            /* reported at the factory, where `device=` goes; no fix: the device
             * named at the move may not be known yet where the tensor is built */
            char *moved = ol_node_str_short(t, call->node);
            d = ol_report_node(c, factory,
                               "`torch.%s(...)` is built in host memory only to be copied to the device by "
                               "`%s` later; `device=` builds it there directly",
                               name, moved);
            free(moved);
        } else if (other != OL_NONE) {
            char *text = ol_node_str_short(t, other);
            d = ol_report_node(c, call->node,
                               "`torch.%s(...)` is built in host memory and then copied to the device of `%s`; "
                               "`device=` builds it there directly",
                               name, text);
            free(text);
        } else {
            d = ol_report_node(c, call->node,
                               "`torch.%s(...)` is built in host memory and then copied to the device; "
                               "`device=` builds it there directly",
                               name);
        }
        ol_diag_because(d, m, &why);
        bool legacy = listed(name, LEGACY);
        if (legacy)
            ol_diag_help(d, "build it on the device with a factory: `torch.zeros(..., dtype=..., device=%s)` "
                            "(a legacy constructor takes no device)",
                         device_text ? device_text : "...");
        else
            ol_diag_help(d, "pass the device to the factory: `torch.%s(..., device=%s)`", name,
                         device_text ? device_text : "...");
        /* kept for an exact selection where the code is known to run once
         * or once per epoch; where its callers are not known (a method called
         * through an attribute, a function passed as a value) it may well run
         * every step */
        ol_often often = ol_how_often(m, call->node, NULL);
        d->once = often == OL_ONCE || often == OL_PER_EPOCH;
        if (carry && device_text && direct && !legacy) {
            ol_fix *fix = ol_fix_new(false, "Build the tensor on the device");
            if (random)
                ol_fix_unsafe_because(fix, "`torch.%s` then draws from the device's random generator instead of "
                                           "the CPU's: the numbers change, also under a fixed seed",
                                      name);
            else if (requires_grad)
                ol_fix_unsafe_because(fix, "with `requires_grad=True` the tensor built on the device becomes the "
                                           "leaf that gets `.grad`; before, the CPU tensor was the leaf and the "
                                           "moved copy had no `.grad`");
            ol_nid fargs = ol_field(t, factory, OL_F_arguments);
            ol_nid last = OL_NONE;
            for (ol_nid a = ol_first_named(t, fargs); a != OL_NONE; a = ol_next_named(t, a))
                last = a;
            char *insert = ol_xasprintf("%sdevice=%s", last == OL_NONE ? "" : ", ", device_text);
            uint32_t at = last == OL_NONE ? t->nodes.items[fargs].start + 1 : t->nodes.items[last].end;
            ol_fix_edit(fix, at, at, insert);
            ol_fix_edit(fix, t->nodes.items[call->receiver].end, t->nodes.items[call->node].end, "");
            free(insert);
            ol_diag_attach_fix(d, fix);
        }
        free(device_text);
    }
    free(tensors.end);
    free(tensors.use);
    ol_vec_free(&seeds.stmts);
}

const ol_rule ol_rule_oom303 = {
    .code = "OOM303",
    .name = "tensor-built-then-moved",
    .severity = OL_SEV_WARNING,
    .device_memory = true,
    .summary = "A tensor is built in host memory only to be copied to the device (pass `device=`).",
    .what = "Flags `torch.zeros/ones/empty/full/arange/linspace/logspace/eye/rand/randn/randint/randperm(...)` "
            "(and legacy typed constructors given sizes, `torch.FloatTensor(n, c, h, w)`, reported without a "
            "fix: they take no device) followed directly by `.cuda()` or by `.to(device)` where the device is recognisable (a device "
            "string other than \"cpu\", `torch.device(...)`, a device value, or a name such as `device`, "
            "`args.device`, `x.device`). `*_like` factories, `torch.tensor(data)`, `torch.from_numpy(a)`, "
            "factories given `device=`, `out=`, `pin_memory=` or `generator=` (a CPU generator draws on "
            "the host only), and `.to(dtype)` are not flagged. A chain of methods that reshape, cast "
            "or compare the tensor on the host before the move (`torch.ones(n, n).triu(1).bool()"
            ".to(x.device)`, `(torch.rand(n) < p).to(x.device)`, `torch.arange(n).repeat(b)`), the "
            "same as torch functions (`torch.triu(torch.ones(n, n), diagonal=1).to(device)`), and "
            "arithmetic with a number (`(torch.rand(n) * 2 - 1).to(device)`) count too (reported "
            "without a fix), and so does `.to(x.get_device())`. So does a factory bound to a name "
            "that a later statement of the same block moves (`noise = torch.zeros(b, d)` then "
            "`noise = noise.to(device)`, or `model(x) + noise.cuda()` with the name used nowhere "
            "else; `self.buf = self.buf.to(device)` for an attribute), reported at the factory "
            "without a fix; not when the host tensor is used in between (filled, indexed, handed to "
            "numpy, read after the move) or the move runs under a condition. A random draw after "
            "`torch.manual_seed(...)` in the blocks around it is made on the host on purpose (the "
            "same numbers on any device) and is not flagged. By default only tensors built in code "
            "that runs every step are reported: in a loop, a forward or step method, or a function "
            "called from one; a tensor built once (module level, `__init__`, a smoke test under "
            "`if __name__ == \"__main__\":`, a function whose every caller in the file runs once, a "
            "buffer made the first time behind `if not hasattr(self, \"queue\"):`) "
            "costs a moment at start-up, and is reported only when the rule is selected by its code "
            "(`--extend-select OOM303`). A move to the place of another tensor counts when that tensor is known to "
            "be on the device and not on the host: `.type_as(x)` or `.to(x)` where x is the input of a module's "
            "method, a module's parameter or buffer, a model's output, or a tensor moved to the GPU (reported "
            "without a fix: it casts too); so does a factory bound to a name that is moved in the body of an "
            "`if` whose condition only asks where tensors live (`if x.is_cuda: z = z.cuda()`), but not under a "
            "flag (`if use_cuda:`). `.to(x.device)` counts unless x is known to be in host memory: a host "
            "factory or `.cpu()` copy, or a batch the loop leaves on the host while it moves another item of the "
            "same batch to the GPU (`for x, y in loader: x = x.to(device)`; then `.to(y.device)` moves nothing); "
            "a batch of a loop that moves none of it may be on the device already and still counts.",
    .why = "The factory allocates and fills the tensor in host memory, then `.to()` allocates it again on "
           "the device and copies it over a synchronising host-to-device transfer, and the host copy is "
           "thrown away. Passing `device=` allocates and fills the tensor on the device in one step: no "
           "host memory, no copy, no stall. In a training step this happens every iteration.",
    .example = "noise = torch.randn(batch_size, latent_dim).to(device)\n"
               "mask = torch.ones(seq_len, seq_len).cuda()",
    .instead = "noise = torch.randn(batch_size, latent_dim, device=device)\n"
               "mask = torch.ones(seq_len, seq_len, device=\"cuda\")",
    .fix = "Moves the device into the factory and drops the `.to()` / `.cuda()`. Safe for deterministic "
           "factories (zeros, ones, empty, full, arange, linspace, logspace, eye) when the move names only "
           "the device (and `non_blocking`). Unsafe for random factories (the device's generator draws "
           "different numbers) and with `requires_grad=True` (the result becomes a leaf). No fix when "
           "`.to()` also changes the dtype or memory format, when `.cuda(gpu)` takes a variable, for a "
           "chain between the factory and the move, or for a move in a later statement (the device it "
           "names may not be known yet where the tensor is built).",
    .fix_safety = "Safe for deterministic factories (zeros, ones, empty, full, arange, linspace, logspace, "
                  "eye) when the move names only the device: the tensor is the same, built where it ends up. "
                  "Unsafe for random factories (`randn`, `rand`, ...): the device's generator draws different "
                  "numbers than the CPU's, also under a fixed seed. Unsafe with `requires_grad=True`: the "
                  "tensor built on the device becomes the leaf that receives `.grad`, where before the CPU "
                  "tensor did.",
    .tags = "memory,performance",
    .precision = "very-high",
    .check = check,
};
