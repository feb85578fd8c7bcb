/*
 * flows.c - where a value goes and what a module is doing, within one file:
 * whether a call's result reaches a backward pass or a return
 * (ol_call_result_use), whether a call differentiates itself, whether a
 * module is in evaluation mode at a call, and which imported class an
 * object is an instance of. Per-file facts (see flows.h): the run's
 * summaries (summary.c) record them for every function, and the door (ask*.c)
 * adds the reasons it shows with a finding.
 */
#include "flows.h"

#include "facts.h"

#include <stdlib.h>
#include <string.h>

/* Functions that differentiate what they are given. */
static const char *const GRADIENT_FUNCTIONS[] = {
    "torch.autograd.grad", "torch.autograd.backward", "torch.autograd.functional.jacobian",
    "torch.autograd.functional.hessian", "torch.autograd.functional.vjp", "torch.autograd.functional.jvp",
    "torch.autograd.functional.hvp", "torch.autograd.functional.vhp", "torch.func.grad",
    "torch.func.grad_and_value", "torch.func.vjp", "torch.func.jvp", "torch.func.jacrev", "torch.func.jacfwd",
    "torch.func.hessian", "functorch.grad", "functorch.grad_and_value", "functorch.vjp", "functorch.jacrev",
    "functorch.jacfwd", NULL};

/* Does call ci compute gradients itself: backward(), an optimizer step, an
 * autograd function, switching gradients on for an input
 * (`x.requires_grad_()`, not `requires_grad_(False)`)? */
bool ol_call_differentiates(ol_model *m, uint32_t ci)
{
    const ol_call *c = &m->calls.items[ci];
    if (ol_is_backward_call(m, ci) || ol_step_optimizer(m, ci) != OL_NONE)
        return true;
    const char *q = ol_qualname(m, c->callee);
    for (const char *const *g = GRADIENT_FUNCTIONS; q && *g; g++)
        if (strcmp(q, *g) == 0)
            return true;
    if (c->name && strcmp(ol_sym_str(m, c->name), "requires_grad_") == 0) {
        ol_nid arg = ol_call_arg(m, c->node, 0, "requires_grad");
        return arg == OL_NONE || ol_kind_of(m->tree, ol_unparen(m->tree, arg)) != OL_N_false;
    }
    return false;
}

/* A value whose kind carries no graph: cutting there cuts what flowed in
 * (`.item()`, `.numpy()`, `.detach()`, a comparison, a count). */
static bool value_holds_no_graph(ol_model *m, ol_nid e)
{
    static const char *const method_cuts[] = {"detach", "detach_", "item", "tolist", "numpy", "argmax",
                                              "argmin", "numel", "size", "dim", NULL};
    static const char *const builtin_cuts[] = {"float", "int", "bool", "len", "str", NULL};
    const ol_tree *t = m->tree;
    ol_kind k = ol_kind_of(t, e);
    if (k == OL_N_comparison_operator || k == OL_N_not_operator)
        return true;
    uint32_t ci = k == OL_N_call ? ol_call_at(m, e) : OL_NO_INDEX;
    if (ci != OL_NO_INDEX && m->calls.items[ci].name) {
        /* `x.detach()`, `out.argmax(1)`, `float(loss)`: whatever x is */
        const char *name = ol_sym_str(m, m->calls.items[ci].name);
        for (const char *const *c = m->calls.items[ci].receiver != OL_NONE ? method_cuts : builtin_cuts; *c; c++)
            if (strcmp(name, *c) == 0)
                return true;
    }
    switch (k) {
    case OL_N_integer:
    case OL_N_float:
    case OL_N_string:
    case OL_N_true:
    case OL_N_false:
    case OL_N_none:
        return true;
    case OL_N_call:
    case OL_N_attribute:
    case OL_N_subscript:
        break;
    default:
        return false; /* arithmetic and names: what flows in decides */
    }
    /* a call or attribute whose value the evaluator knows holds none
     * (`np.vstack(rows)`, `x.shape`) */
    switch (ol_eval(m, e).kind) {
    case OL_V_NUMBER:
    case OL_V_STRING:
    case OL_V_NONE:
    case OL_V_ARRAY:
    case OL_V_DEVICE:
    case OL_V_RANGE:
        return true;
    default:
        return false;
    }
}

#define FLOW_SEEN 64

typedef struct flow {
    ol_model *m;
    ol_nid target;     /* the expression whose value is followed */
    long budget;       /* nodes left to read: past it, the answer is no */
    uint32_t seen[FLOW_SEEN];
    size_t nseen;
    OL_VEC(ol_nid) read; /* a walk for no one target: every expression it reads */
} flow;

static bool flows_from(flow *w, ol_nid e, int depth);

static const char *const FILLS[] = {"append", "extend", "insert", "add", "update", "appendleft", "put", NULL};

/* Is e an element of the container named name (`out[k]`)? */
static bool element_of(ol_model *m, ol_nid e, ol_sym name)
{
    const ol_tree *t = m->tree;
    if (e != OL_NONE && ol_kind_of(t, e) == OL_N_parenthesized_expression)
        e = ol_unparen(t, e);
    if (e == OL_NONE || ol_kind_of(t, e) != OL_N_subscript)
        return false;
    ol_nid obj = ol_unparen(t, ol_field(t, e, OL_F_value));
    return obj != OL_NONE && ol_kind_of(t, obj) == OL_N_identifier && ol_node_sym(m, obj) == name;
}

/* Does the container bound by def d receive the value, after it is bound
 * (`outs.append(x)`, `out[k] = x`), in its function? */
static bool fill_flows(flow *w, const ol_def *d, int depth)
{
    ol_model *m = w->m;
    const ol_tree *t = m->tree;
    uint32_t fn = m->scopes.items[d->scope].function;
    ol_nid region = fn != OL_NO_INDEX ? m->functions.items[fn].node : 0;
    size_t first, end = ol_calls_in(m, region, &first);
    for (size_t i = first; i < end; i++) {
        if (--w->budget <= 0)
            return false;
        const ol_call *c = &m->calls.items[i];
        ol_nid recv = c->receiver != OL_NONE ? ol_unparen(t, c->receiver) : OL_NONE;
        /* the container itself, or an element of it filled in turn
         * (`out[k].append(x)`: a dict of lists gathered chunk by chunk) */
        ol_kind rk = recv != OL_NONE ? ol_kind_of(t, recv) : OL_N_OTHER;
        bool own = rk == OL_N_identifier && ol_node_sym(m, recv) == d->name;
        if (!c->name || !(own || (rk == OL_N_subscript && element_of(m, recv, d->name))) ||
            ol_function_of(m, c->node) != fn)
            continue;
        const char *name = ol_sym_str(m, c->name);
        bool fills = false;
        for (const char *const *f = FILLS; *f && !fills; f++)
            fills = strcmp(name, *f) == 0;
        if (fills && flows_from(w, ol_field(t, c->node, OL_F_arguments), depth + 1))
            return true;
    }
    /* `out[k] += [x]`: an element extended (what is read is counted, not
     * the augmented assignments passed over) */
    size_t alo = ol_lower_bound_u32(m->aug_assigns.items, m->aug_assigns.len, region);
    for (size_t i = alo; i < m->aug_assigns.len && m->aug_assigns.items[i] < m->subtree_end[region]; i++) {
        ol_nid a = m->aug_assigns.items[i];
        if (!element_of(m, ol_field(t, a, OL_F_left), d->name) || ol_function_of(m, a) != fn)
            continue;
        if (--w->budget <= 0)
            return false;
        if (flows_from(w, ol_field(t, a, OL_F_right), depth + 1))
            return true;
    }
    /* the stores are in source order: those of the region are one run */
    size_t lo = ol_lower_bound_u32(m->subscript_stores.items, m->subscript_stores.len, region);
    for (size_t i = lo; i < m->subscript_stores.len && m->subscript_stores.items[i] < m->subtree_end[region]; i++) {
        ol_nid a = m->subscript_stores.items[i];
        if (--w->budget <= 0)
            return false;
        if (ol_function_of(m, a) != fn)
            continue;
        ol_nid left = ol_unparen(t, ol_field(t, a, OL_F_left));
        ol_nid obj = left != OL_NONE && ol_kind_of(t, left) == OL_N_subscript ? ol_unparen(t, ol_field(t, left, OL_F_value))
                                                                               : OL_NONE;
        if (obj != OL_NONE && ol_kind_of(t, obj) == OL_N_identifier && ol_node_sym(m, obj) == d->name &&
            flows_from(w, ol_field(t, a, OL_F_right), depth + 1))
            return true;
    }
    return false;
}

/* Does the value of name x (its bindings reaching it) come from the target? */
static bool name_flows(flow *w, ol_nid x, int depth)
{
    ol_model *m = w->m;
    uint32_t defs[8];
    size_t n = ol_reaching_defs(m, m->node_scope[x], ol_node_sym(m, x), x, defs, 8);
    for (size_t i = 0; i < n; i++) {
        bool seen = false;
        for (size_t k = 0; k < w->nseen && !seen; k++)
            seen = w->seen[k] == defs[i];
        if (seen)
            continue;
        if (w->nseen == FLOW_SEEN)
            return false;
        w->seen[w->nseen++] = defs[i];
        const ol_def *d = &m->defs.items[defs[i]];
        switch (d->kind) {
        case OL_DEF_ASSIGN:
        case OL_DEF_WALRUS:
        case OL_DEF_AUGASSIGN:
        case OL_DEF_FOR:
            if (d->value != OL_NONE && flows_from(w, d->value, depth + 1))
                return true;
            break;
        default:
            break;
        }
        if (fill_flows(w, &m->defs.items[defs[i]], depth))
            return true;
    }
    return false;
}

static bool flows_from(flow *w, ol_nid e, int depth)
{
    ol_model *m = w->m;
    const ol_tree *t = m->tree;
    e = e != OL_NONE ? ol_unparen(t, e) : OL_NONE;
    if (e == OL_NONE || depth > 12 || --w->budget <= 0)
        return false;
    if (w->target == OL_NONE)
        ol_vec_push(&w->read, e);
    else if (w->target == e)
        return true;
    /* what holds no graph cuts what flowed into it (`(out.argmax(1) == y).sum().item()`) */
    ol_kind k = ol_kind_of(t, e);
    if (k != OL_N_augmented_assignment && k != OL_N_argument_list && k != OL_N_keyword_argument &&
        value_holds_no_graph(m, e))
        return false;
    /* a name: through the bindings that reach it */
    if (k == OL_N_identifier)
        return (w->target < e || w->target >= m->subtree_end[e]) && name_flows(w, e, depth);
    for (ol_nid c = ol_first_named(t, e); c != OL_NONE; c = ol_next_named(t, c)) {
        if ((k == OL_N_attribute && ol_field(t, e, OL_F_attribute) == c) ||
            (k == OL_N_keyword_argument && ol_field(t, e, OL_F_name) == c))
            continue;
        if (flows_from(w, c, depth))
            return true;
    }
    return false;
}

/* What a walk from `into` reads, for every value asked of it: the walk
 * decides nothing by its target but whether it has reached it, so a value
 * reaches `into` exactly when the walk with no target reads it (within the
 * same budget). Kept per model, by `into`, in an open-addressing table;
 * forgotten with the model's values (ol_model_forget). */
typedef struct reach_entry {
    ol_nid into;     /* OL_NONE: an empty slot */
    uint32_t start;  /* its expressions in nodes[start, start + count), sorted */
    uint32_t count;
} reach_entry;

typedef struct reach_memo {
    reach_entry *slots;
    size_t cap, used;
    OL_VEC(ol_nid) nodes;
} reach_memo;

static void reach_memo_free(void *p)
{
    reach_memo *r = p;
    if (!r)
        return;
    free(r->slots);
    ol_vec_free(&r->nodes);
    free(r);
}

static size_t reach_slot(const reach_memo *r, ol_nid into)
{
    size_t i = ((size_t)into * 0x9E3779B97F4A7C15ull >> 17) & (r->cap - 1);
    while (r->slots[i].into != OL_NONE && r->slots[i].into != into)
        i = (i + 1) & (r->cap - 1);
    return i;
}

static int cmp_nid(const void *a, const void *b)
{
    ol_nid x = *(const ol_nid *)a, y = *(const ol_nid *)b;
    return x < y ? -1 : x > y;
}

/* The walk's budget grows with the function read, not the file: a file of
 * many functions asks once per function. */
static flow walk_from(ol_model *m, ol_nid target, ol_nid into)
{
    uint32_t fn = ol_function_of(m, into);
    size_t first, end = ol_calls_in(m, fn != OL_NO_INDEX ? m->functions.items[fn].node : 0, &first);
    flow w = {m, target, 4000 + 4 * (long)(end - first) / 64, {0}, 0, {0}};
    return w;
}

static bool sorted_has(const ol_nid *items, size_t n, ol_nid value)
{
    size_t at = ol_lower_bound_u32(items, n, value);
    return at < n && items[at] == value;
}

bool ol_value_reaches_walk(ol_model *m, ol_nid value, ol_nid into)
{
    if (value == OL_NONE || into == OL_NONE)
        return false;
    flow w = walk_from(m, value, into);
    return flows_from(&w, into, 0);
}

bool ol_value_reaches(ol_model *m, ol_nid value, ol_nid into)
{
    if (value == OL_NONE || into == OL_NONE)
        return false;
    /* asked while a value is being worked out, the walk may read values
     * not final yet: it is made for this question alone, as it was before */
    if (m->eval_depth > 0)
        return ol_value_reaches_walk(m, value, into);
    reach_memo *r = m->reach_cache;
    if (r && r->cap) {
        size_t k = reach_slot(r, into);
        if (r->slots[k].into == into)
            return sorted_has(r->nodes.items + r->slots[k].start, r->slots[k].count, value);
    }
    flow w = walk_from(m, OL_NONE, into);
    flows_from(&w, into, 0);
    if (w.read.len > 1)
        qsort(w.read.items, w.read.len, sizeof(ol_nid), cmp_nid);
    /* the walk may have asked questions that made or dropped the table */
    r = m->reach_cache;
    if (!r) {
        r = ol_xcalloc(1, sizeof(*r));
        m->reach_cache = r;
        m->reach_cache_free = reach_memo_free;
    }
    if ((r->used + 1) * 2 > r->cap) {
        reach_entry *old = r->slots;
        size_t old_cap = r->cap;
        r->cap = old_cap ? old_cap * 2 : 64;
        r->slots = ol_xmalloc(r->cap * sizeof(reach_entry));
        for (size_t i = 0; i < r->cap; i++)
            r->slots[i].into = OL_NONE;
        for (size_t i = 0; i < old_cap; i++)
            if (old[i].into != OL_NONE)
                r->slots[reach_slot(r, old[i].into)] = old[i];
        free(old);
    }
    reach_entry e = {into, (uint32_t)r->nodes.len, 0};
    for (size_t i = 0; i < w.read.len; i++)
        if (i == 0 || w.read.items[i] != w.read.items[i - 1]) {
            ol_vec_push(&r->nodes, w.read.items[i]);
            e.count++;
        }
    ol_vec_free(&w.read);
    size_t k = reach_slot(r, into);
    if (r->slots[k].into != into)
        r->used++;
    r->slots[k] = e;
    return sorted_has(r->nodes.items + e.start, e.count, value);
}

/* The operands of the backward() calls (and torch.autograd.grad) of
 * function fn's own code, OL_NO_INDEX for module code, found once per
 * function: every call of the function asks for them. */
static size_t backward_operands(ol_model *m, uint32_t fn, ol_nid body, const ol_nid **out)
{
    size_t slot = fn == OL_NO_INDEX ? 0 : (size_t)fn + 1;
    if (!m->bw_start) {
        size_t n = m->functions.len + 1;
        m->bw_start = ol_xmalloc(n * sizeof(uint32_t));
        m->bw_count = ol_xcalloc(n, sizeof(uint32_t));
        for (size_t i = 0; i < n; i++)
            m->bw_start[i] = OL_NO_INDEX;
    }
    if (m->bw_start[slot] == OL_NO_INDEX) {
        /* the function's operands go in one run at the end of bw_ops:
         * collected first, as finding one evaluates code that may ask for
         * another function's */
        OL_VEC(ol_nid) found = {0};
        size_t first, end = ol_calls_in(m, body, &first);
        for (size_t i = first; i < end; i++) {
            if (ol_function_of(m, m->calls.items[i].node) != fn)
                continue;
            ol_nid operand = ol_backward_operand(m, (uint32_t)i);
            if (operand == OL_NONE) {
                const char *q = ol_qualname(m, m->calls.items[i].callee);
                if (q && strcmp(q, "torch.autograd.grad") == 0)
                    operand = ol_call_arg(m, m->calls.items[i].node, 0, "outputs");
            }
            if (operand != OL_NONE)
                ol_vec_push(&found, operand);
        }
        m->bw_start[slot] = (uint32_t)m->bw_ops.len;
        m->bw_count[slot] = (uint32_t)found.len;
        for (size_t i = 0; i < found.len; i++)
            ol_vec_push(&m->bw_ops, found.items[i]);
        ol_vec_free(&found);
    }
    size_t n = m->bw_count[slot];
    *out = n ? m->bw_ops.items + m->bw_start[slot] : NULL; /* no operands: bw_ops may have no array */
    return n;
}

unsigned ol_call_result_use(ol_model *m, uint32_t ci)
{
    const ol_tree *t = m->tree;
    ol_nid call = m->calls.items[ci].node;
    uint32_t fn = ol_function_of(m, call);
    ol_nid body = fn != OL_NO_INDEX ? ol_field(t, m->functions.items[fn].node, OL_F_body) : 0;
    if (body == OL_NONE)
        return OL_USE_CONSUMED;
    unsigned use = 0;
    /* the backward() calls of the function itself (not ol_events_of: this
     * is also asked while the file's summary is made, before the other
     * files' facts are known, and events are kept) */
    const ol_nid *ops;
    size_t nops = backward_operands(m, fn, body, &ops);
    for (size_t i = 0; i < nops && !(use & OL_USE_BACKWARD); i++)
        if (ol_value_reaches(m, call, ops[i]))
            use |= OL_USE_BACKWARD;
    if (fn != OL_NO_INDEX) {
        const ol_function *f = &m->functions.items[fn];
        for (size_t k = 0; k < f->returns.len && k < 16 && !(use & OL_USE_RETURNED); k++)
            if (ol_value_reaches(m, call, f->returns.items[k]))
                use |= OL_USE_RETURNED;
        /* a framework backwards what a training step returns */
        if ((use & OL_USE_RETURNED) && ol_function_hook(m, fn) == OL_HOOK_TRAIN_STEP)
            use |= OL_USE_BACKWARD;
    }
    return use ? use : OL_USE_CONSUMED;
}

/* `.eval()` in the method chain e is built of (`model.eval().to(device)`). */
static ol_nid eval_in_chain(ol_model *m, ol_nid e)
{
    const ol_tree *t = m->tree;
    for (int k = 0; k < 8 && e != OL_NONE; k++) {
        e = ol_unparen(t, e);
        uint32_t ci = ol_kind_of(t, e) == OL_N_call ? ol_call_at(m, e) : OL_NO_INDEX;
        if (ci == OL_NO_INDEX || m->calls.items[ci].receiver == OL_NONE)
            return OL_NONE;
        const ol_call *c = &m->calls.items[ci];
        if (c->name == m->names.eval && ol_call_arg(m, c->node, 0, NULL) == OL_NONE)
            return c->node;
        e = c->receiver;
    }
    return OL_NONE;
}

/* Does `recv` take every element of a container spelled like the container
 * `module` is taken from: `self.model[key]` with key the target of a loop
 * over `self.model` or `self.model.keys()` around it, when module is
 * `self.model["generator"]` (models kept in a dict, switched together)? */
static bool switches_every_element(ol_model *m, ol_nid recv, ol_nid module)
{
    const ol_tree *t = m->tree;
    if (ol_kind_of(t, recv) != OL_N_subscript || ol_kind_of(t, module) != OL_N_subscript)
        return false;
    ol_nid holder = ol_unparen(t, ol_field(t, recv, OL_F_value));
    ol_nid key = ol_unparen(t, ol_field(t, recv, OL_F_subscript));
    if (holder == OL_NONE || key == OL_NONE || ol_kind_of(t, key) != OL_N_identifier ||
        !ol_same_text(t, holder, ol_unparen(t, ol_field(t, module, OL_F_value))))
        return false;
    uint32_t defs[4];
    size_t n = ol_reaching_defs(m, m->node_scope[key], ol_node_sym(m, key), key, defs, 4);
    if (n != 1 || m->defs.items[defs[0]].kind != OL_DEF_FOR || m->defs.items[defs[0]].path_len != 0)
        return false;
    ol_nid iter = ol_unparen(t, m->defs.items[defs[0]].value);
    if (iter != OL_NONE && ol_kind_of(t, iter) == OL_N_call) {
        uint32_t ci = ol_call_at(m, iter);
        if (ci == OL_NO_INDEX || m->calls.items[ci].receiver == OL_NONE || ol_call_arg(m, iter, 0, NULL) != OL_NONE ||
            !ol_text_is(t, ol_field(t, ol_unparen(t, m->calls.items[ci].callee), OL_F_attribute), "keys"))
            return false;
        iter = ol_unparen(t, m->calls.items[ci].receiver);
    }
    return iter != OL_NONE && ol_same_text(t, iter, holder);
}

/* Is call c named eval or train: the only calls that can switch a module's mode. */
static bool named_eval_or_train(const ol_model *m, const ol_call *c)
{
    return c->name == m->names.eval || c->name == m->names.train;
}

/* Does call c switch the mode of a module spelled like `module`, and to
 * what: 1 eval, 2 train, 0 neither. */
static int mode_switch(ol_model *m, const ol_call *c, ol_nid module)
{
    const ol_tree *t = m->tree;
    if (!named_eval_or_train(m, c) || c->receiver == OL_NONE ||
        (!ol_same_text(t, ol_unparen(t, c->receiver), module) &&
         !switches_every_element(m, ol_unparen(t, c->receiver), module)))
        return 0;
    ol_nid arg = ol_call_arg(m, c->node, 0, "mode");
    if (c->name == m->names.eval)
        return arg == OL_NONE ? 1 : 0;
    return arg != OL_NONE && ol_kind_of(t, ol_unparen(t, arg)) == OL_N_false ? 1 : 2;
}

/* Is a `b.module` (the wrapper's model, when b is a wrapper)? */
static bool unwraps(const ol_tree *t, ol_nid a, ol_nid b)
{
    return a != OL_NONE && b != OL_NONE && ol_kind_of(t, a) == OL_N_attribute &&
           ol_text_is(t, ol_field(t, a, OL_F_attribute), "module") && ol_same_text(t, ol_field(t, a, OL_F_object), b);
}

static const char *instance_class(ol_model *m, ol_nid e, int depth)
{
    static const char *const same[] = {"eval", "train", "to", "cuda", "cpu", "float", "half", "double", "bfloat16",
                                       "requires_grad_", "share_memory", NULL};
    const ol_tree *t = m->tree;
    for (int hop = 0; hop < 8; hop++) {
        e = e != OL_NONE ? ol_unparen(t, e) : OL_NONE;
        if (e == OL_NONE)
            return NULL;
        ol_kind k = ol_kind_of(t, e);
        if (k == OL_N_identifier) {
            e = ol_bound_value(m, e);
            continue;
        }
        if (k == OL_N_conditional_expression) {
            /* `self.model.module if multigpus else self.model`: unwrapping
             * a DataParallel or DDP wrapper when there is one, so the model
             * either way; otherwise the class both branches hold */
            if (depth >= 3)
                return NULL;
            ol_nid a = ol_unparen(t, ol_named_child(t, e, 0)), b = ol_unparen(t, ol_named_child(t, e, 2));
            if (unwraps(t, a, b)) {
                e = b;
                continue;
            }
            if (unwraps(t, b, a)) {
                e = a;
                continue;
            }
            const char *ca = instance_class(m, a, depth + 1);
            const char *cb = ca ? instance_class(m, b, depth + 1) : NULL;
            return ca && cb && strcmp(ca, cb) == 0 ? ca : NULL;
        }
        if (k == OL_N_attribute) {
            /* self.x: its one binding in the class */
            ol_nid obj = ol_unparen(t, ol_field(t, e, OL_F_object)), attr = ol_field(t, e, OL_F_attribute);
            uint32_t fn = ol_function_of(m, e);
            if (obj == OL_NONE || !ol_text_is(t, obj, "self") || fn == OL_NO_INDEX ||
                m->functions.items[fn].cls == OL_NO_INDEX)
                return NULL;
            const ol_member *attrs;
            size_t count = ol_class_attrs_named(m, m->functions.items[fn].cls, ol_node_sym(m, attr), &attrs);
            ol_nid value = OL_NONE;
            for (size_t i = 0; i < count; i++) {
                const ol_def *d = &m->defs.items[attrs[i].index];
                if (value != OL_NONE || d->kind != OL_DEF_ASSIGN || d->path_len != 0)
                    return NULL;
                value = d->value;
            }
            e = value;
            continue;
        }
        uint32_t ci = k == OL_N_call ? ol_call_at(m, e) : OL_NO_INDEX;
        if (ci == OL_NO_INDEX)
            return NULL;
        const ol_call *c = &m->calls.items[ci];
        bool chained = false;
        for (const char *const *w = same; *w && c->receiver != OL_NONE && c->name && !chained; w++)
            chained = strcmp(ol_sym_str(m, c->name), *w) == 0;
        if (chained) {
            e = c->receiver;
            continue;
        }
        ol_val v = ol_eval(m, c->callee);
        return v.kind == OL_V_EXTERN && v.ref ? ol_sym_str(m, v.ref) : NULL;
    }
    return NULL;
}

const char *ol_instance_class(ol_model *m, ol_nid e)
{
    return instance_class(m, e, 0);
}

/* Does function fn put `module` in evaluation mode after `bound` (the value
 * it binds to it), with no switch back to training after that eval()? */
static bool switched_after(ol_model *m, ol_nid module, uint32_t fn, ol_nid bound)
{
    const ol_tree *t = m->tree;
    size_t first, end = ol_calls_in(m, m->functions.items[fn].node, &first);
    uint32_t from = t->nodes.items[bound].end;
    int last = 0;
    for (size_t i = first; i < end; i++) {
        const ol_call *c = &m->calls.items[i];
        if (t->nodes.items[c->node].start < from || ol_function_of(m, c->node) != fn)
            continue;
        int s = mode_switch(m, c, module);
        if (s)
            last = s;
    }
    return last == 1;
}

/* A class of a framework that calls its subclasses' methods itself (torch,
 * Lightning, Hugging Face, ...), by its dotted name. */
static bool framework_class(const char *q)
{
    static const char *const frameworks[] = {"torch.", "lightning.", "pytorch_lightning.", "transformers.",
                                             "accelerate.", "ignite.", "fairseq.", "detectron2.", "mmcv.",
                                             "mmengine.", "catalyst.", "fastai.", "keras.", "tensorflow.",
                                             "composer.", "deepspeed.", "timm.", "skorch.", "allennlp.", NULL};
    if (!q || !strchr(q, '.'))
        return true; /* a builtin, or a name nothing says more of */
    for (size_t i = 0; frameworks[i]; i++)
        if (ol_str_has_prefix(q, frameworks[i]))
            return true;
    return false;
}

ol_nid ol_module_eval_switch(ol_model *m, ol_nid module, ol_nid at, bool *by_class)
{
    const ol_tree *t = m->tree;
    module = module != OL_NONE ? ol_unparen(t, module) : OL_NONE;
    if (module == OL_NONE || at == OL_NONE)
        return OL_NONE;
    uint32_t fn = ol_function_of(m, at);
    ol_nid region = fn != OL_NO_INDEX ? m->functions.items[fn].node : 0;
    /* the last switch of it before `at` in the same function */
    size_t first, end = ol_calls_in(m, region, &first);
    /* from the last call before `at` */
    end = ol_calls_from(m, at, first, end);
    /* the last switch is looked for among the calls named eval or train
     * (ol_mode_calls), not among every call before `at` (a script of tens
     * of thousands of method calls made that quadratic) */
    size_t switches;
    const uint32_t *sw = ol_mode_calls(m, &switches);
    /* from the last switch before `at` back to the region's first call */
    for (size_t next = ol_lower_bound_u32(sw, switches, (uint32_t)end); next-- > 0 && sw[next] >= first;) {
        const ol_call *c = &m->calls.items[sw[next]];
        if (ol_function_of(m, c->node) != fn)
            continue;
        int s = mode_switch(m, c, module);
        if (s == 2)
            return OL_NONE;
        if (s == 1) {
            if (by_class)
                *by_class = false;
            return c->node;
        }
    }
    /* an attribute of self: the class's methods decide, when they put it in
     * evaluation mode (in `__init__`, or where it is bound:
     * `self.model_ = model.eval().to(device)`) and never back in training
     * mode, and none of them computes gradients */
    if (ol_kind_of(t, module) != OL_N_attribute || fn == OL_NO_INDEX || m->functions.items[fn].cls == OL_NO_INDEX)
        return OL_NONE;
    ol_nid obj = ol_unparen(t, ol_field(t, module, OL_F_object));
    if (obj == OL_NONE || ol_kind_of(t, obj) != OL_N_identifier || !ol_text_is(t, obj, "self"))
        return OL_NONE;
    const ol_class *cls = &m->classes.items[m->functions.items[fn].cls];
    /* a method a base class may call through self (a framework's hook, an
     * override) runs in the grad mode its caller there chooses: only a class
     * of its own, or whose bases of the file do not define the method, is
     * judged so */
    bool called_by_users = m->functions.items[fn].name == m->names.__call__;
    for (size_t i = 0; i < cls->bases.len; i++) {
        ol_val v = ol_eval(m, cls->bases.items[i]);
        if (v.kind == OL_V_EXTERN && called_by_users && !framework_class(ol_sym_str(m, v.ref)))
            continue; /* `__call__` of a project's interface (`class Yolov5(IModel)`): its users call it */
        if (v.kind == OL_V_EXTERN && strcmp(ol_sym_str(m, v.ref), "object") != 0)
            return OL_NONE;
        if (v.kind != OL_V_CLASS || v.ref >= m->classes.len)
            return OL_NONE;
        const ol_class *base = &m->classes.items[v.ref];
        for (size_t k = 0; k < base->methods.len; k++)
            if (m->functions.items[base->methods.items[k]].name == m->functions.items[fn].name)
                return OL_NONE;
    }
    ol_nid found = OL_NONE;
    size_t cf, ce = ol_calls_in(m, cls->node, &cf);
    for (size_t i = cf; i < ce; i++) {
        const ol_call *c = &m->calls.items[i];
        int s = mode_switch(m, c, module);
        if (s == 2 || ol_call_differentiates(m, (uint32_t)i))
            return OL_NONE;
        if (s == 1 && found == OL_NONE)
            found = c->node;
    }
    ol_nid attr = ol_field(t, module, OL_F_attribute);
    const ol_member *attrs = NULL;
    size_t count = attr != OL_NONE ? ol_class_attrs_named(m, m->functions.items[fn].cls, ol_node_sym(m, attr), &attrs) : 0;
    for (size_t i = 0; i < count; i++) {
        const ol_def *d = &m->defs.items[attrs[i].index];
        if (d->kind != OL_DEF_ASSIGN || d->path_len != 0)
            continue;
        ol_nid e = eval_in_chain(m, d->value);
        if (e == OL_NONE) {
            /* bound without it: fine in `__init__` before an eval() of it, or
             * in the method that puts it in evaluation mode after binding it
             * (a loader: `self._model = torch.jit.load(...)` then
             * `self._model.eval()`); a model bound again elsewhere may be in
             * training mode */
            uint32_t in = ol_function_of(m, d->value);
            if (found == OL_NONE || in == OL_NO_INDEX ||
                (m->functions.items[in].name != m->names.__init__ && !switched_after(m, module, in, d->value)))
                return OL_NONE;
        } else if (found == OL_NONE) {
            found = e;
        }
    }
    if (found != OL_NONE && by_class)
        *by_class = true;
    return found;
}
