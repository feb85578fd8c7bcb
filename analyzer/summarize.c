/*
 * summarize.c - building the per-function summaries of one file (see
 * summary.h): what each function returns, does (forward, backward, step,
 * eval mode), keeps, saves and moves to a device, and which of its calls
 * run other files' functions. It reads the model of the file: return
 * values through the evaluator, training events through facts.c, moves to
 * a device through moves.c, and a small syntactic flow analysis for which
 * parameters end up stored beyond the call. What functions do through the
 * local functions they call is propagated to a fixed point over the file's
 * call graph. summary.c serves them to the other files of the run.
 */
#include "summary.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "facts.h"
#include "flows.h"
#include "hardware.h"
#include "hostuse.h"
#include "moves.h"
#include "project.h"
#include "saves.h"

#define MAX_ELEMS 8
#define MAX_STORES 8

/* ---- building: small helpers -------------------------------------------------------- */

typedef OL_VEC(ol_sum_store) store_vec;

typedef struct sbuild {
    ol_model *m;
    ol_file_summary *s;
    store_vec *stores; /* per function, while building */
    const char **sym_text; /* a parameter name's text in the summary, by symbol (one copy per file) */
} sbuild;

static ol_sum_val sum_val(ol_val v)
{
    ol_sum_val r = {OL_V_UNKNOWN, (uint8_t)(v.flags & (uint8_t)~OL_VF_LOCAL)};
    switch ((ol_vkind)v.kind) {
    case OL_V_EXTERN:
    case OL_V_OBJECT:
    case OL_V_CLASS:
    case OL_V_FUNCTION:
    case OL_V_INSTANCE:
    case OL_V_BOTTOM:
        break;
    default:
        r.kind = v.kind;
        break;
    }
    return r;
}

/* Is autograd turned off around n by a context or decorator of this file
 * (not by where the function is called from: callers are other files)? */
static bool guarded(const ol_model *m, ol_nid n)
{
    for (uint32_t c = m->node_ctx[n]; c != OL_NO_INDEX; c = m->contexts.items[c].parent) {
        const ol_ctx *ctx = &m->contexts.items[c];
        if (ctx->kind != OL_CTX_GRAD)
            continue;
        if (ctx->gradmode == OL_GM_ENABLE)
            return false;
        if (ctx->gradmode != OL_GM_NONE)
            return true;
    }
    return false;
}

static const char *function_name(ol_model *m, uint32_t fi, ol_arena *a)
{
    const ol_function *f = &m->functions.items[fi];
    if (f->is_lambda || !f->name)
        return NULL;
    ol_buf b = {0};
    ol_buf_puts(&b, ol_sym_str(m, f->name));
    for (uint32_t sc = f->outer_scope; sc != OL_NO_INDEX && sc != 0; sc = m->scopes.items[sc].parent) {
        const ol_scope *scope = &m->scopes.items[sc];
        ol_sym name = 0;
        if (scope->kind == OL_SCOPE_CLASS)
            name = m->classes.items[scope->cls].name;
        else if (scope->kind == OL_SCOPE_FUNCTION)
            name = m->functions.items[scope->function].name;
        else
            continue;
        const char *n = ol_sym_str(m, name);
        size_t nl = strlen(n);
        ol_buf_reserve(&b, nl + 1);
        memmove(b.data + nl + 1, b.data, b.len + 1);
        memcpy(b.data, n, nl);
        b.data[nl] = '.';
        b.len += nl + 1;
    }
    char *r = ol_arena_strndup(a, b.data, b.len);
    ol_buf_free(&b);
    return r;
}

/* A statement's text on one line, shortened, for messages. */
static const char *statement_text(ol_model *m, ol_nid n, ol_arena *a)
{
    uint32_t len;
    const char *s = ol_text(m->tree, ol_statement_of(m->tree, n), &len);
    char buf[72];
    size_t o = 0;
    bool space = false;
    for (uint32_t i = 0; i < len && o < sizeof(buf) - 4; i++) {
        char c = s[i];
        if (c == '\n' || c == '\r' || c == '\t' || c == ' ' || c == '\\') {
            space = o > 0;
            continue;
        }
        if (space)
            buf[o++] = ' ';
        space = false;
        buf[o++] = c;
    }
    if (o >= sizeof(buf) - 4) {
        memcpy(buf + o, "...", 3);
        o += 3;
    }
    return ol_arena_strndup(a, buf, o);
}

/* The parameter def (of function fi itself) a name refers to, by position;
 * -1 when it is not one. */
static int param_position(ol_model *m, uint32_t fi, uint32_t def)
{
    const ol_def *d = &m->defs.items[def];
    const ol_function *f = &m->functions.items[fi];
    if (d->kind != OL_DEF_PARAM || d->starred || d->index == OL_NO_INDEX || d->index >= OL_SUM_MAX_PARAMS ||
        d->scope != f->scope)
        return -1;
    if (d->index == 0 && f->is_method)
        return -1; /* self: the object, not a value passed in */
    return (int)d->index;
}

static bool is_self(ol_model *m, uint32_t fi, ol_nid e)
{
    const ol_function *f = &m->functions.items[fi];
    /* a nested function sees its method's self as a closure */
    while (!f->is_method && m->scopes.items[f->outer_scope].function != OL_NO_INDEX)
        f = &m->functions.items[m->scopes.items[f->outer_scope].function];
    if (!f->is_method || f->is_classmethod || f->params.len == 0 || ol_kind_of(m->tree, e) != OL_N_identifier)
        return false;
    return ol_node_sym(m, e) == m->defs.items[f->params.items[0]].name;
}

/* Where a container expression lives, seen from inside function fi:
 * OL_INTO_SELF, OL_INTO_GLOBAL, a parameter position, or -1 (a local that
 * dies with the call). */
static int container_of(ol_model *m, uint32_t fi, ol_nid e)
{
    const ol_tree *t = m->tree;
    e = ol_unparen(t, e);
    bool through = false;
    for (int depth = 0; depth < 8; depth++) {
        ol_kind k = ol_kind_of(t, e);
        if (k == OL_N_attribute)
            e = ol_unparen(t, ol_field(t, e, OL_F_object));
        else if (k == OL_N_subscript)
            e = ol_unparen(t, ol_field(t, e, OL_F_value));
        else
            break;
        through = true;
    }
    if (e == OL_NONE || ol_kind_of(t, e) != OL_N_identifier)
        return -1;
    if (is_self(m, fi, e))
        return (int)OL_INTO_SELF;
    uint32_t defs[8];
    size_t n = ol_reaching_defs(m, m->node_scope[e], ol_node_sym(m, e), e, defs, 8);
    if (n == 0)
        return -1;
    int where = -2;
    for (size_t i = 0; i < n; i++) {
        const ol_def *d = &m->defs.items[defs[i]];
        int w;
        /* `import torch`: a module's function (`torch.add(x, 1)`), not a container's method */
        if (d->kind == OL_DEF_IMPORT && ol_kind_of(t, d->stmt) == OL_N_import_statement)
            return -1;
        if (d->scope == 0)
            w = (int)OL_INTO_GLOBAL;
        else if (param_position(m, fi, defs[i]) >= 0 && (through || d->kind == OL_DEF_PARAM))
            w = param_position(m, fi, defs[i]);
        else
            return -1;
        if (where != -2 && where != w)
            return -1;
        where = w;
    }
    return where;
}

static bool method_keeps_graph(const char *meth)
{
    static const char *const keep[] = {"mean", "sum", "clone", "view", "reshape", "float", "double", "half",
                                       "to", "cuda", "cpu", "squeeze", "unsqueeze", "flatten", "contiguous",
                                       "abs", "pow", "exp", "log", "sqrt", "norm", "type_as", "expand",
                                       "expand_as", "permute", "transpose", "t", "mul", "add", "div", "sub",
                                       NULL};
    for (const char *const *k = keep; *k; k++)
        if (strcmp(meth, *k) == 0)
            return true;
    return false;
}

/* The parameter of fi whose value flows, unchanged in kind, into e (`val`,
 * `val * n`, `val.mean()`, `(val, n)`), or -1. A name reassigned on some
 * path before e to something else (`val = val.item()`) does not flow. */
static int flows(ol_model *m, uint32_t fi, ol_nid e, int depth)
{
    const ol_tree *t = m->tree;
    e = ol_unparen(t, e);
    if (e == OL_NONE || depth > 6)
        return -1;
    switch (ol_kind_of(t, e)) {
    case OL_N_identifier: {
        uint32_t defs[8];
        size_t n = ol_reaching_defs(m, m->node_scope[e], ol_node_sym(m, e), e, defs, 8);
        if (n == 0 || n == 8)
            return -1;
        int p = -1;
        for (size_t i = 0; i < n; i++) {
            const ol_def *d = &m->defs.items[defs[i]];
            int q = param_position(m, fi, defs[i]);
            if (q < 0 && d->kind == OL_DEF_ASSIGN && d->path_len == 0 && !d->starred)
                q = flows(m, fi, d->value, depth + 1);
            if (q < 0)
                return -1;
            p = q;
        }
        return p;
    }
    case OL_N_binary_operator: {
        int p = flows(m, fi, ol_field(t, e, OL_F_left), depth + 1);
        return p >= 0 ? p : flows(m, fi, ol_field(t, e, OL_F_right), depth + 1);
    }
    case OL_N_unary_operator:
        return flows(m, fi, ol_field(t, e, OL_F_argument), depth + 1);
    case OL_N_subscript:
        return flows(m, fi, ol_field(t, e, OL_F_value), depth + 1);
    case OL_N_attribute: {
        ol_nid attr = ol_field(t, e, OL_F_attribute);
        if (ol_text_is(t, attr, "data") || ol_text_is(t, attr, "grad") || ol_text_is(t, attr, "shape"))
            return -1;
        return flows(m, fi, ol_field(t, e, OL_F_object), depth + 1);
    }
    case OL_N_tuple:
    case OL_N_list:
    case OL_N_expression_list:
        for (ol_nid c = ol_first_named(t, e); c != OL_NONE; c = ol_next_named(t, c)) {
            int p = flows(m, fi, c, depth + 1);
            if (p >= 0)
                return p;
        }
        return -1;
    case OL_N_conditional_expression: {
        int p = flows(m, fi, ol_named_child(t, e, 0), depth + 1);
        return p >= 0 ? p : flows(m, fi, ol_named_child(t, e, 2), depth + 1);
    }
    case OL_N_call: {
        uint32_t ci = ol_call_at(m, e);
        if (ci == OL_NO_INDEX)
            return -1;
        const ol_call *c = &m->calls.items[ci];
        if (c->receiver != OL_NONE && c->name) {
            ol_val rv = ol_eval(m, c->receiver);
            if (rv.kind == OL_V_EXTERN) {
                /* torch.sum(val), torch.stack(vals): results of torch keep the graph */
                const char *q = ol_sym_str(m, rv.ref);
                if (strcmp(q, "torch") == 0 || strcmp(q, "torch.nn.functional") == 0) {
                    ol_nid a = ol_call_arg(m, e, 0, NULL);
                    return a != OL_NONE ? flows(m, fi, a, depth + 1) : -1;
                }
                /* horovod's collectives on torch tensors are differentiable:
                 * hvd.allreduce(val) keeps val's graph */
                static const char *const collectives[] = {"allreduce", "allgather", "broadcast", "alltoall",
                                                          "reducescatter", NULL};
                if (strcmp(q, "horovod.torch") == 0)
                    for (size_t k = 0; collectives[k]; k++)
                        if (strcmp(ol_sym_str(m, c->name), collectives[k]) == 0) {
                            ol_nid a = ol_call_arg(m, e, 0, NULL);
                            return a != OL_NONE ? flows(m, fi, a, depth + 1) : -1;
                        }
                return -1;
            }
            if (method_keeps_graph(ol_sym_str(m, c->name)))
                return flows(m, fi, c->receiver, depth + 1);
        }
        return -1;
    }
    default:
        return -1;
    }
}

/* The value of `self.name` where e reads it in method fi: the one
 * assignment `self.name = value` of fi before e, or OL_NONE. */
static ol_nid self_attr_value(ol_model *m, uint32_t fi, ol_nid e)
{
    const ol_tree *t = m->tree;
    ol_nid found = OL_NONE;
    for (size_t i = 0; i < m->assigns.len && m->assigns.items[i] < e; i++) {
        ol_nid a = m->assigns.items[i];
        ol_nid left = ol_unparen(t, ol_field(t, a, OL_F_left));
        if (ol_function_of(m, a) != fi || !ol_same_text(t, left, e))
            continue;
        if (found != OL_NONE)
            return OL_NONE;
        found = ol_field(t, a, OL_F_right);
    }
    return found;
}

/* Is `self.name` a callable stored on the object rather than a method of
 * its class: no method of that name, and some binding of it in the class
 * (`self._update_function = update_function`, a lambda)? */
static bool stored_callable(ol_model *m, uint32_t fi, ol_nid callee)
{
    const ol_tree *t = m->tree;
    const ol_function *f = &m->functions.items[fi];
    if (f->cls == OL_NO_INDEX || ol_kind_of(t, callee) != OL_N_attribute || !is_self(m, fi, ol_field(t, callee, OL_F_object)))
        return false;
    const ol_class *cls = &m->classes.items[f->cls];
    ol_sym name = ol_node_sym(m, ol_field(t, callee, OL_F_attribute));
    for (size_t i = 0; i < cls->methods.len; i++)
        if (m->functions.items[cls->methods.items[i]].name == name)
            return false;
    for (size_t i = 0; i < cls->attr_defs.len; i++)
        if (m->defs.items[cls->attr_defs.items[i]].name == name)
            return true;
    return false;
}

/* The parameter whose value a callable stored on the object is applied to,
 * when e is its result (`self.fn(x)`, also through `self._stat = self.fn(x)`
 * and a local name bound to it), or -1. What the callable returns is not
 * known; a function of a tensor mostly returns one derived from it, graph
 * and all, and the store site asks that its total hold tensors. */
static int callable_flows(ol_model *m, uint32_t fi, ol_nid e, int depth)
{
    const ol_tree *t = m->tree;
    e = ol_unparen(t, e);
    if (e == OL_NONE || depth > 4)
        return -1;
    ol_kind k = ol_kind_of(t, e);
    if (k == OL_N_identifier || k == OL_N_attribute) {
        ol_nid v = OL_NONE;
        if (k == OL_N_attribute) {
            v = is_self(m, fi, ol_field(t, e, OL_F_object)) ? self_attr_value(m, fi, e) : OL_NONE;
        } else {
            uint32_t defs[2];
            if (ol_reaching_defs(m, m->node_scope[e], ol_node_sym(m, e), e, defs, 2) == 1 &&
                m->defs.items[defs[0]].kind == OL_DEF_ASSIGN && m->defs.items[defs[0]].path_len == 0)
                v = m->defs.items[defs[0]].value;
        }
        return v != OL_NONE ? callable_flows(m, fi, v, depth + 1) : -1;
    }
    if (k != OL_N_call || !stored_callable(m, fi, ol_unparen(t, ol_field(t, e, OL_F_function))))
        return -1;
    ol_nid args = ol_field(t, e, OL_F_arguments);
    for (ol_nid a = ol_first_named(t, args); a != OL_NONE; a = ol_next_named(t, a)) {
        ol_nid v = ol_kind_of(t, a) == OL_N_keyword_argument ? ol_field(t, a, OL_F_value) : a;
        int p = flows(m, fi, v, 0);
        if (p > 0 || (p == 0 && !m->functions.items[fi].is_method))
            return p;
    }
    return -1;
}

/* Does the class of method fi hold a tensor in `self.name`: a binding of
 * it to a torch function (`torch.zeros(shape)`) in one of its methods? A
 * running count (`self.n = 0`) is not. */
static bool attr_holds_tensor(ol_model *m, uint32_t fi, ol_nid left)
{
    const ol_tree *t = m->tree;
    const ol_function *f = &m->functions.items[fi];
    if (f->cls == OL_NO_INDEX || ol_kind_of(t, left) != OL_N_attribute)
        return false;
    const ol_class *cls = &m->classes.items[f->cls];
    ol_sym name = ol_node_sym(m, ol_field(t, left, OL_F_attribute));
    for (size_t i = 0; i < cls->attr_defs.len; i++) {
        const ol_def *d = &m->defs.items[cls->attr_defs.items[i]];
        if (d->name != name)
            continue;
        ol_nid v = d->value != OL_NONE ? ol_unparen(t, d->value) : OL_NONE;
        const char *q = v != OL_NONE && ol_kind_of(t, v) == OL_N_call ? ol_qualname(m, ol_field(t, v, OL_F_function))
                                                                      : NULL;
        if (q && ol_str_has_prefix(q, "torch."))
            return true;
    }
    return false;
}

/* Records that function fi keeps parameter `param` in `into`; true when
 * that is news. */
static bool add_store(sbuild *b, uint32_t fi, int param, int into, uint8_t how, const char *what)
{
    if (param < 0 || into < 0 || param >= OL_SUM_MAX_PARAMS)
        return false;
    const ol_function *f = &b->m->functions.items[fi];
    if (f->is_method && param == 0)
        return false; /* storing self somewhere is not storing a value passed in */
    if (into != (int)OL_INTO_SELF && into != (int)OL_INTO_GLOBAL && into == param)
        return false;
    store_vec *v = &b->stores[fi];
    for (size_t i = 0; i < v->len; i++)
        if (v->items[i].param == param && v->items[i].into == into) {
            uint8_t before = v->items[i].how;
            v->items[i].how |= how;
            return v->items[i].how != before;
        }
    if (v->len >= MAX_STORES)
        return false;
    ol_sum_store st = {(uint8_t)param, (uint8_t)into, how, what};
    ol_vec_push(v, st);
    return true;
}

/* ---- building: what each function does ---------------------------------------------- */

static void direct_stores(sbuild *b)
{
    ol_model *m = b->m;
    const ol_tree *t = m->tree;
    ol_arena *a = &b->s->arena;
    /* total += val (self.sum += val * n, stats[k] += val, GLOBAL_SUM += val) */
    for (size_t i = 0; i < m->aug_assigns.len; i++) {
        ol_nid n = m->aug_assigns.items[i];
        uint32_t fi = ol_function_of(m, n);
        ol_kind op = ol_kind_of(t, ol_field(t, n, OL_F_operator));
        if (fi == OL_NO_INDEX || (op != OL_T_PLUS_EQ && op != OL_T_MINUS_EQ))
            continue;
        ol_nid left = ol_unparen(t, ol_field(t, n, OL_F_left));
        int into = container_of(m, fi, left);
        if (into < 0 || (ol_kind_of(t, left) == OL_N_identifier && into != (int)OL_INTO_GLOBAL))
            continue;
        int p = flows(m, fi, ol_field(t, n, OL_F_right), 0);
        bool collect = ol_kind_of(t, ol_unparen(t, ol_field(t, n, OL_F_right))) == OL_N_list;
        /* `self._tensor += self.fn(x)`: a stored callable applied to a parameter, into a tensor total */
        if (p < 0 && into == (int)OL_INTO_SELF && attr_holds_tensor(m, fi, left))
            p = callable_flows(m, fi, ol_field(t, n, OL_F_right), 0);
        if (p >= 0)
            add_store(b, fi, p, into, collect ? OL_STORE_COLLECT : OL_STORE_ADD, statement_text(m, n, a));
    }
    for (size_t i = 0; i < m->assigns.len; i++) {
        ol_nid n = m->assigns.items[i];
        uint32_t fi = ol_function_of(m, n);
        if (fi == OL_NO_INDEX)
            continue;
        ol_nid left = ol_unparen(t, ol_field(t, n, OL_F_left));
        ol_nid right = ol_unparen(t, ol_field(t, n, OL_F_right));
        if (left == OL_NONE || right == OL_NONE)
            continue;
        if (ol_kind_of(t, left) == OL_N_subscript) {
            /* self.d[k] = val, store[k] = val */
            int into = container_of(m, fi, left);
            int p = flows(m, fi, right, 0);
            if (p >= 0)
                add_store(b, fi, p, into, OL_STORE_COLLECT, statement_text(m, n, a));
        } else if (ol_kind_of(t, right) == OL_N_binary_operator && ol_mentions(t, right, left)) {
            /* self.avg = 0.9 * self.avg + 0.1 * val; self.sum = self.sum + val */
            ol_kind k = ol_kind_of(t, left);
            int into = container_of(m, fi, left);
            if (into < 0 || (k == OL_N_identifier && into != (int)OL_INTO_GLOBAL))
                continue;
            int p = flows(m, fi, right, 0);
            if (p >= 0)
                add_store(b, fi, p, into, OL_STORE_ADD, statement_text(m, n, a));
        }
    }
    /* self.vals.append(val), history[k].append(val), LOSSES.append(val) */
    const ol_names *names = &m->names;
    for (size_t i = 0; i < m->calls.len; i++) {
        const ol_call *c = &m->calls.items[i];
        if (c->receiver == OL_NONE)
            continue;
        bool insert = c->name == names->insert;
        if (!(c->name == names->append || c->name == names->extend || c->name == names->appendleft ||
              c->name == names->extendleft || c->name == names->put || insert || c->name == names->add))
            continue;
        uint32_t fi = ol_function_of(m, c->node);
        if (fi == OL_NO_INDEX)
            continue;
        int into = container_of(m, fi, c->receiver);
        if (into < 0)
            continue;
        /* a buffer a method of the class backwards through and clears */
        if (into == (int)OL_INTO_SELF && ol_buffer_backwarded(m, c->receiver, c->node))
            continue;
        ol_nid value = ol_call_arg(m, c->node, insert ? 1 : 0, NULL);
        int p = value != OL_NONE ? flows(m, fi, value, 0) : -1;
        if (p >= 0)
            add_store(b, fi, p, into, OL_STORE_COLLECT, statement_text(m, c->node, a));
    }
}

/* Parameters whose value reaches code that only works on host data
 * (`json.dump(preds)`, `np.asarray(x)`), and never a model or a device. */
static void host_params(sbuild *b)
{
    ol_model *m = b->m;
    /* only functions that make such a call themselves (summaries see no
     * other function's): most have none, and are skipped */
    bool *sinks = NULL;
    long budget = OL_HOSTUSE_BUDGET;
    for (size_t ci = 0; ci < m->calls.len; ci++) {
        if (!ol_may_use_as_host(m, (uint32_t)ci))
            continue;
        if (!sinks)
            sinks = ol_xcalloc(m->functions.len + 1, sizeof(bool));
        for (uint32_t fi = ol_function_of(m, m->calls.items[ci].node); fi != OL_NO_INDEX && !sinks[fi];
             fi = m->scopes.items[m->functions.items[fi].outer_scope].function)
            sinks[fi] = true;
    }
    for (uint32_t fi = 0; sinks && fi < m->functions.len; fi++) {
        const ol_function *f = &m->functions.items[fi];
        if (!sinks[fi])
            continue;
        for (size_t i = 0; i < f->params.len; i++) {
            int p = param_position(m, fi, f->params.items[i]);
            if (p < 0)
                continue;
            ol_value_use u = ol_def_use_of(m, f->params.items[i], &budget);
            if (u.host && !u.device)
                b->s->fns[fi].param_host |= 1u << p;
        }
    }
    free(sinks);
}

/* Parameters indexed batch by batch: `source[i:i + n]`, `source[ix]` with
 * ix = torch.randint(0, len(source), (bs,)) (see ol_batch_index), or any
 * index in a Dataset's __getitem__. */
static void sliced_params(sbuild *b)
{
    ol_model *m = b->m;
    const ol_tree *t = m->tree;
    for (ol_nid n = 0; n < t->nodes.len; n++) {
        if (ol_kind_of(t, n) != OL_N_subscript)
            continue;
        ol_nid value = ol_unparen(t, ol_field(t, n, OL_F_value));
        if (value == OL_NONE || ol_kind_of(t, value) != OL_N_identifier)
            continue;
        uint32_t fi = ol_function_of(m, n);
        if (fi == OL_NO_INDEX || m->functions.items[fi].params.len == 0)
            continue;
        ol_nid parent = ol_parent(t, n);
        if (parent != OL_NONE && (ol_kind_of(t, parent) == OL_N_assignment ||
                                  ol_kind_of(t, parent) == OL_N_augmented_assignment) &&
            ol_field(t, parent, OL_F_left) == n)
            continue; /* writing into it: a buffer */
        if (!ol_batch_index(m, ol_field(t, n, OL_F_subscript)))
            continue;
        uint32_t defs[4];
        size_t nd = ol_reaching_defs(m, m->node_scope[value], ol_node_sym(m, value), value, defs, 4);
        for (size_t i = 0; i < nd; i++) {
            int p = param_position(m, fi, defs[i]);
            if (p < 0)
                continue;
            b->s->fns[fi].param_sliced |= 1u << p;
            if (m->node_loop[n] != OL_NO_INDEX && !ol_loop_runs_no_model(m, m->node_loop[n]))
                b->s->fns[fi].param_batched |= 1u << p;
        }
    }
    /* for xb in source.split(bs): a plain `for x in source` is not counted,
     * helpers walk lists and tuples of tensors that way */
    for (size_t li = 0; li < m->loops.len; li++) {
        const ol_loop *loop = &m->loops.items[li];
        ol_nid it = ol_unparen(t, loop->iter);
        uint32_t ci = ol_call_at(m, it);
        if (ci == OL_NO_INDEX || m->calls.items[ci].receiver == OL_NONE ||
            !(ol_text_is(t, ol_field(t, m->calls.items[ci].callee, OL_F_attribute), "split") ||
              ol_text_is(t, ol_field(t, m->calls.items[ci].callee, OL_F_attribute), "chunk")))
            continue;
        it = ol_unparen(t, m->calls.items[ci].receiver);
        uint32_t fi = ol_function_of(m, loop->node);
        if (loop->kind == OL_LOOP_WHILE || fi == OL_NO_INDEX || it == OL_NONE || ol_kind_of(t, it) != OL_N_identifier)
            continue;
        uint32_t defs[4];
        size_t nd = ol_reaching_defs(m, m->node_scope[it], ol_node_sym(m, it), it, defs, 4);
        for (size_t i = 0; i < nd; i++) {
            int p = param_position(m, fi, defs[i]);
            if (p >= 0)
                b->s->fns[fi].param_batched |= 1u << p;
        }
    }
}

/* Does e return a tensor moved to a device: `data.to(device)`, or a name
 * bound to one? Tensors built from nothing (buffers, noise) do not count. */
/* Is e a subscript that picks rows by an index held in a variable or built
 * by a call (`emb[idx]`, `x[ids.long()]`), not a slice or a constant? */
static bool gathers_rows(const ol_tree *t, ol_nid e)
{
    e = ol_unparen(t, e);
    if (ol_kind_of(t, e) != OL_N_subscript)
        return false;
    ol_nid index = ol_unparen(t, ol_field(t, e, OL_F_subscript));
    ol_kind k = ol_kind_of(t, index);
    return k == OL_N_identifier || k == OL_N_attribute || k == OL_N_call;
}

static bool device_move(ol_model *m, ol_nid e, int depth)
{
    const ol_tree *t = m->tree;
    e = ol_unparen(t, e);
    if (e == OL_NONE || depth > 3)
        return false;
    ol_kind k = ol_kind_of(t, e);
    if (k == OL_N_tuple || k == OL_N_expression_list) {
        for (ol_nid c = ol_first_named(t, e); c != OL_NONE; c = ol_next_named(t, c))
            if (device_move(m, c, depth + 1))
                return true;
        return false;
    }
    if (k == OL_N_identifier) {
        uint32_t defs[4];
        size_t n = ol_reaching_defs(m, m->node_scope[e], ol_node_sym(m, e), e, defs, 4);
        for (size_t i = 0; i < n; i++) {
            const ol_def *d = &m->defs.items[defs[i]];
            if (d->kind == OL_DEF_ASSIGN && d->path_len == 0 && device_move(m, d->value, depth + 1))
                return true;
        }
        return false;
    }
    for (ol_nid x = e; ol_call_at(m, x) != OL_NO_INDEX;) {
        const ol_call *c = &m->calls.items[ol_call_at(m, x)];
        if (ol_moves_to_gpu(m, c)) {
            bool method = c->receiver != OL_NONE && (c->name == m->names.cuda || c->name == m->names.to) &&
                          ol_eval(m, c->receiver).kind != OL_V_EXTERN;
            /* `self.emb[idx].to(device)`: the rows of the ids asked for, a
             * gather per call, not the table */
            if (method && gathers_rows(t, c->receiver))
                return false;
            return !ol_made_from_nothing(m, method ? ol_chain_base(m, c->receiver) : c->node);
        }
        if (c->receiver == OL_NONE)
            break;
        x = ol_unparen(t, c->receiver);
    }
    return false;
}

typedef struct edge {
    uint32_t caller, callee, call;
    bool guarded;
} edge;

typedef OL_VEC(edge) edge_vec;

/* `p.grad` (also `p.grad.data`). */
static bool grad_attr(const ol_tree *t, ol_nid e)
{
    e = ol_unparen(t, e);
    if (ol_kind_of(t, e) != OL_N_attribute)
        return false;
    ol_nid attr = ol_field(t, e, OL_F_attribute);
    if (ol_text_is(t, attr, "data"))
        return grad_attr(t, ol_field(t, e, OL_F_object));
    return ol_text_is(t, attr, "grad");
}

/* `p.grad.zero_()`: clears a gradient as zero_grad() does (`p.grad = None`
 * is found among the assignments). */
static bool clears_grad(ol_model *m, const ol_call *c)
{
    return c->receiver != OL_NONE && c->name && strcmp(ol_sym_str(m, c->name), "zero_") == 0 &&
           grad_attr(m->tree, c->receiver);
}

static void function_facts(sbuild *b, edge_vec *edges)
{
    ol_model *m = b->m;
    ol_fn_summary *fns = b->s->fns;
    /* `p.grad = None`: the function clears gradients */
    for (size_t i = 0; i < m->assigns.len; i++) {
        ol_nid a = m->assigns.items[i];
        uint32_t fi = ol_function_of(m, a);
        if (fi != OL_NO_INDEX && grad_attr(m->tree, ol_field(m->tree, a, OL_F_left)) &&
            ol_kind_of(m->tree, ol_field(m->tree, a, OL_F_right)) == OL_N_none)
            fns[fi].facts |= OL_FN_ZERO_GRAD;
    }
    for (size_t i = 0; i < m->calls.len; i++) {
        const ol_call *c = &m->calls.items[i];
        uint32_t fi = ol_function_of(m, c->node);
        if (fi == OL_NO_INDEX)
            continue;
        bool g = guarded(m, c->node);
        uint32_t *facts = &fns[fi].facts;
        if (ol_is_forward_call(m, (uint32_t)i)) {
            if (!g)
                *facts |= OL_FN_FORWARD;
        } else if (ol_is_backward_call(m, (uint32_t)i)) {
            *facts |= OL_FN_BACKWARD;
        } else if (ol_step_optimizer(m, (uint32_t)i) != OL_NONE) {
            *facts |= OL_FN_STEP;
        } else if (ol_zero_grad_target(m, (uint32_t)i) != OL_NONE || clears_grad(m, c)) {
            *facts |= OL_FN_ZERO_GRAD;
        } else if ((c->name == m->names.eval || c->name == m->names.train) && c->receiver != OL_NONE &&
                   ol_eval(m, c->receiver).kind == OL_V_MODULE) {
            ol_nid arg = ol_call_arg(m, c->node, 0, "mode");
            bool eval = c->name == m->names.eval ? arg == OL_NONE
                                                 : arg != OL_NONE && ol_kind_of(m->tree, arg) == OL_N_false;
            bool train = c->name == m->names.train && (arg == OL_NONE || ol_kind_of(m->tree, arg) == OL_N_true);
            *facts |= eval ? OL_FN_EVAL : train ? OL_FN_TRAIN : 0;
        } else {
            uint32_t callee = ol_callee_function(m, c->node);
            if (callee != OL_NO_INDEX && callee != fi) {
                edge e = {fi, callee, (uint32_t)i, g};
                ol_vec_push(edges, e);
            }
        }
    }
}

/* What functions do through the local functions they call, to a fixed point. */
static void propagate(sbuild *b, const edge *edges, size_t count)
{
    ol_model *m = b->m;
    ol_fn_summary *fns = b->s->fns;
    const uint32_t carried = OL_FN_FORWARD | OL_FN_EVAL | OL_FN_TRAIN | OL_FN_ZERO_GRAD | OL_FN_STEP | OL_FN_BACKWARD;
    for (int round = 0; round < 64; round++) {
        bool changed = false;
        for (size_t i = 0; i < count; i++) {
            const edge *e = &edges[i];
            uint32_t add = fns[e->callee].facts & carried;
            if (e->guarded)
                add &= ~(uint32_t)OL_FN_FORWARD;
            if (add & ~fns[e->caller].facts) {
                fns[e->caller].facts |= add;
                changed = true;
            }
            /* a parameter passed on to a callee that draws batches from it:
             * in a loop here, or in a loop of the callee's own */
            uint32_t cut = fns[e->callee].param_batched;
            uint32_t in_loop = m->node_loop[m->calls.items[e->call].node];
            if (in_loop != OL_NO_INDEX && !ol_loop_runs_no_model(m, in_loop))
                cut |= fns[e->callee].param_sliced;
            for (uint32_t q = 0; cut && q < fns[e->callee].param_count; q++) {
                if (!(cut & (1u << q)))
                    continue;
                ol_nid arg = ol_call_param_arg(m, e->call, &fns[e->callee], q);
                int p = arg != OL_NONE && ol_kind_of(m->tree, ol_unparen(m->tree, arg)) == OL_N_identifier
                            ? flows(m, e->caller, arg, 0)
                            : -1;
                if (p >= 0 && !(fns[e->caller].param_batched & (1u << p))) {
                    fns[e->caller].param_batched |= 1u << p;
                    changed = true;
                }
            }
            /* a parameter passed on to a callee that keeps it is kept */
            const ol_fn_summary *callee = &fns[e->callee];
            for (size_t k = 0; k < b->stores[e->callee].len; k++) {
                ol_sum_store st = b->stores[e->callee].items[k];
                ol_nid arg = ol_call_param_arg(m, e->call, callee, st.param);
                int p = arg != OL_NONE ? flows(m, e->caller, arg, 0) : -1;
                if (p < 0)
                    continue;
                ol_nid holder = OL_NONE;
                int into = (int)OL_INTO_GLOBAL;
                if (st.into == OL_INTO_SELF)
                    holder = m->calls.items[e->call].receiver;
                else if (st.into != OL_INTO_GLOBAL)
                    holder = ol_call_param_arg(m, e->call, callee, st.into);
                if (st.into != OL_INTO_GLOBAL) {
                    if (holder == OL_NONE)
                        continue;
                    holder = ol_unparen(m->tree, holder);
                    into = is_self(m, e->caller, holder) ? (int)OL_INTO_SELF : container_of(m, e->caller, holder);
                }
                if (add_store(b, e->caller, p, into, st.how, st.what))
                    changed = true;
            }
        }
        if (!changed)
            break;
    }
}

/* Adds the string key node k to keys, once. */
static void add_key(ol_nid k, const ol_tree *t, const char **keys, uint32_t *key_lens, size_t *nkeys)
{
    const char *s;
    uint32_t len;
    if (!ol_string_value(t, k, &s, &len) || len > 60 || memchr(s, '\0', len))
        return;
    for (size_t j = 0; j < *nkeys; j++)
        if (key_lens[j] == len && memcmp(keys[j], s, len) == 0)
            return;
    if (*nkeys < MAX_ELEMS) {
        keys[*nkeys] = s;
        key_lens[(*nkeys)++] = len;
    }
}

/* The literal shape of what a function returns: the largest tuple arity,
 * and the string keys of returned dict literals. */
static void return_shape(ol_model *m, uint32_t fi, int *arity, const char **keys, uint32_t *key_lens,
                         size_t *nkeys)
{
    const ol_tree *t = m->tree;
    *arity = 0;
    *nkeys = 0;
    const ol_function *f = &m->functions.items[fi];
    for (size_t i = 0; i < f->returns.len && i < 16; i++) {
        ol_nid e = ol_unparen(t, f->returns.items[i]);
        uint32_t def = OL_NO_INDEX;
        if (ol_kind_of(t, e) == OL_N_identifier) {
            uint32_t defs[2];
            if (ol_reaching_defs(m, m->node_scope[e], ol_node_sym(m, e), e, defs, 2) == 1 &&
                m->defs.items[defs[0]].kind == OL_DEF_ASSIGN && m->defs.items[defs[0]].path_len == 0) {
                def = defs[0];
                e = ol_unparen(t, m->defs.items[defs[0]].value);
            }
        }
        ol_kind k = ol_kind_of(t, e);
        if (k == OL_N_dictionary && def != OL_NO_INDEX) {
            /* `out = {}`, then `out["loss"] = loss`: the keys stored too */
            ol_nid skeys[32], svalues[32];
            size_t n = ol_dict_stores(m, def, skeys, svalues, 32);
            for (size_t j = 0; n != (size_t)-1 && j < n; j++)
                add_key(skeys[j], t, keys, key_lens, nkeys);
        }
        if (k == OL_N_tuple || k == OL_N_expression_list || k == OL_N_list) {
            int n = (int)ol_named_count(t, e);
            if (n > *arity)
                *arity = n > MAX_ELEMS ? MAX_ELEMS : n;
        } else if (k == OL_N_dictionary) {
            for (ol_nid c = ol_first_named(t, e); c != OL_NONE; c = ol_next_named(t, c))
                if (ol_kind_of(t, c) == OL_N_pair)
                    add_key(ol_field(t, c, OL_F_key), t, keys, key_lens, nkeys);
        }
    }
}

static void return_facts(sbuild *b, uint32_t fi)
{
    ol_model *m = b->m;
    const ol_tree *t = m->tree;
    ol_fn_summary *fs = &b->s->fns[fi];
    ol_val r = ol_function_result(m, fi);
    fs->ret = sum_val(r);
    if (ol_val_is_graph(r) && !(r.flags & OL_VF_LOSS))
        fs->facts |= OL_FN_RET_OUTPUT;
    const ol_function *f = &m->functions.items[fi];
    for (size_t i = 0; i < f->returns.len && i < 16; i++) {
        ol_nid e = f->returns.items[i];
        ol_nid stmt = ol_parent(t, e);
        if (stmt != OL_NONE && ol_kind_of(t, stmt) == OL_N_return_statement && device_move(m, e, 0)) {
            fs->facts |= OL_FN_RET_ON_DEVICE;
            if (ol_loaded_data(m, e))
                fs->facts |= OL_FN_RET_DATA;
        }
    }
    int arity;
    const char *keys[MAX_ELEMS];
    uint32_t key_lens[MAX_ELEMS];
    size_t nkeys;
    return_shape(m, fi, &arity, keys, key_lens, &nkeys);
    if (arity == 0 && nkeys == 0)
        return;
    fs->elems = ol_arena_alloc(&b->s->arena, sizeof(ol_sum_elem) * (size_t)(arity + (int)nkeys));
    for (int i = 0; i < arity; i++) {
        ol_val v;
        if (!ol_function_element(m, fi, i, NULL, &v))
            break;
        ol_sum_elem e = {NULL, (int16_t)i, sum_val(v)};
        fs->elems[fs->elem_count++] = e;
    }
    for (size_t i = 0; i < nkeys; i++) {
        char *key = ol_arena_strndup(&b->s->arena, keys[i], key_lens[i]);
        ol_val v;
        if (!ol_function_element(m, fi, -1, key, &v))
            continue;
        ol_sum_elem e = {key, -1, sum_val(v)};
        fs->elems[fs->elem_count++] = e;
    }
}

static void params_of(sbuild *b, uint32_t fi)
{
    ol_model *m = b->m;
    const ol_function *f = &m->functions.items[fi];
    ol_fn_summary *fs = &b->s->fns[fi];
    fs->bound = f->is_method;
    size_t count = 0;
    for (size_t i = 0; i < f->params.len; i++) {
        const ol_def *d = &m->defs.items[f->params.items[i]];
        if (!d->starred && d->index != OL_NO_INDEX && d->index < OL_SUM_MAX_PARAMS && d->index + 1 > count)
            count = d->index + 1;
    }
    fs->param_count = (uint8_t)count;
    if (!count)
        return;
    fs->params = ol_arena_alloc_aligned(&b->s->arena, sizeof(char *) * count, sizeof(char *));
    for (size_t i = 0; i < count; i++)
        fs->params[i] = "";
    for (size_t i = 0; i < f->params.len; i++) {
        const ol_def *d = &m->defs.items[f->params.items[i]];
        if (d->starred || d->index == OL_NO_INDEX || d->index >= count)
            continue;
        /* `self`, `model`, `x`: a file's functions share most parameter names */
        if (!b->sym_text[d->name]) {
            const char *text = ol_sym_str(m, d->name);
            b->sym_text[d->name] = ol_arena_strndup(&b->s->arena, text, strlen(text));
        }
        fs->params[d->index] = b->sym_text[d->name];
    }
}

static int cmp_fn(const void *a, const void *b, const ol_fn_summary *fns)
{
    return strcmp(fns[*(const uint32_t *)a].name, fns[*(const uint32_t *)b].name);
}

/* qsort has no context argument: sort indices with a small insertion merge */
static void sort_fns(uint32_t *idx, size_t n, const ol_fn_summary *fns)
{
    if (n < 2)
        return;
    size_t half = n / 2;
    sort_fns(idx, half, fns);
    sort_fns(idx + half, n - half, fns);
    uint32_t *tmp = ol_xmalloc(n * sizeof(uint32_t));
    size_t i = 0, j = half, o = 0;
    while (i < half && j < n)
        tmp[o++] = cmp_fn(&idx[j], &idx[i], fns) < 0 ? idx[j++] : idx[i++];
    while (i < half)
        tmp[o++] = idx[i++];
    while (j < n)
        tmp[o++] = idx[j++];
    memcpy(idx, tmp, n * sizeof(uint32_t));
    free(tmp);
}

static int cmp_class(const void *a, const void *b)
{
    return strcmp(((const ol_class_summary *)a)->name, ((const ol_class_summary *)b)->name);
}

static int cmp_import(const void *a, const void *b)
{
    return strcmp(((const ol_sum_import *)a)->bound, ((const ol_sum_import *)b)->bound);
}

static void classes_and_imports(sbuild *b)
{
    ol_model *m = b->m;
    ol_file_summary *s = b->s;
    ol_arena *a = &s->arena;
    s->classes = ol_xcalloc(m->classes.len ? m->classes.len : 1, sizeof(ol_class_summary));
    for (size_t ci = 0; ci < m->classes.len; ci++) {
        const ol_class *c = &m->classes.items[ci];
        if (!c->name)
            continue;
        ol_class_summary *cs = &s->classes[s->class_count++];
        const char *name = ol_sym_str(m, c->name);
        cs->name = ol_arena_strndup(a, name, strlen(name));
        cs->is_module = ol_class_is_module(m, (uint32_t)ci);
        cs->module_guess = cs->is_module && ol_class_module_guessed(m, (uint32_t)ci);
        cs->has_call = ol_class_defines_call(m, (uint32_t)ci);
        cs->is_lossfn = cs->is_module && (ol_str_has_suffix(name, "Loss") || ol_str_has_suffix(name, "Criterion"));
        /* a plain class's instances, for a save of one in another file */
        cs->host_only = !cs->is_module && c->bases.len <= 1 && ol_class_holds_host_data(m, (uint32_t)ci);
        cs->bases = ol_arena_alloc(a, sizeof(char *) * (c->bases.len ? c->bases.len : 1));
        cs->ext_bases = ol_arena_alloc(a, sizeof(char *) * (c->bases.len ? c->bases.len : 1));
        for (size_t i = 0; i < m->classes.items[ci].bases.len; i++) {
            ol_val v = ol_eval(m, m->classes.items[ci].bases.items[i]);
            if (v.kind == OL_V_CLASS && v.ref < m->classes.len && v.ref != ci) {
                const char *bn = ol_sym_str(m, m->classes.items[v.ref].name);
                cs->bases[cs->base_count++] = ol_arena_strndup(a, bn, strlen(bn));
            } else if (v.kind == OL_V_EXTERN && v.ref) {
                const char *qn = ol_sym_str(m, v.ref);
                cs->ext_bases[cs->ext_base_count++] = ol_arena_strndup(a, qn, strlen(qn));
            }
        }
    }
    ol_sort(s->classes, s->class_count, sizeof(ol_class_summary), cmp_class);
    s->imports = ol_xcalloc(m->imports.len ? m->imports.len : 1, sizeof(ol_sum_import));
    for (size_t i = 0; i < m->imports.len; i++) {
        const ol_import *imp = &m->imports.items[i];
        if (imp->def == OL_NO_INDEX || !imp->bound || m->defs.items[imp->def].scope != 0)
            continue;
        const char *bound = ol_sym_str(m, imp->bound), *qual = ol_sym_str(m, imp->qual);
        ol_sum_import e = {ol_arena_strndup(a, bound, strlen(bound)), ol_arena_strndup(a, qual, strlen(qual))};
        s->imports[s->import_count++] = e;
    }
    ol_sort(s->imports, s->import_count, sizeof(ol_sum_import), cmp_import);
}

/* ---- saves ---------------------------------------------------------------------------- */

#define MAX_SAVE_KEYS 32
#define MAX_SAVE_FILES 4

/* A string literal's value, NUL-terminated in the arena; NULL when it holds
 * a NUL of its own. */
static const char *arena_literal(ol_arena *a, const char *s, uint32_t len)
{
    return memchr(s, '\0', len) ? NULL : ol_arena_strndup(a, s, len);
}

/* Does the subtree at e name one of syms? */
static bool names_any(ol_model *m, ol_nid e, const ol_sym *syms, size_t n)
{
    const ol_tree *t = m->tree;
    for (ol_nid x = e; e != OL_NONE && x < m->subtree_end[e]; x++)
        if (ol_kind_of(t, x) == OL_N_identifier)
            for (size_t i = 0; i < n; i++)
                if (ol_node_sym(m, x) == syms[i])
                    return true;
    return false;
}

/* Is e `loaded` itself, or a part of it (`loaded["state_dict"]`,
 * `loaded.items()`)? */
static bool rooted_at(ol_model *m, ol_nid e, const ol_sym *syms, size_t n)
{
    const ol_tree *t = m->tree;
    e = ol_unparen(t, e);
    for (;;) {
        ol_kind k = ol_kind_of(t, e);
        if (k == OL_N_subscript)
            e = ol_unparen(t, ol_field(t, e, OL_F_value));
        else if (k == OL_N_attribute)
            e = ol_unparen(t, ol_field(t, e, OL_F_object));
        else if (k == OL_N_call && ol_kind_of(t, ol_field(t, e, OL_F_function)) == OL_N_attribute)
            e = ol_field(t, e, OL_F_function);
        else
            break;
    }
    if (e == OL_NONE || ol_kind_of(t, e) != OL_N_identifier)
        return false;
    for (size_t i = 0; i < n; i++)
        if (ol_node_sym(m, e) == syms[i])
            return true;
    return false;
}

/* Is what the save writes (obj) what `loaded = torch.load(...)` read: the
 * name itself, or a name bound to a part of it or filled from it
 * (`fresh[k] = loaded[k]`, also through a loop over it: `for k, v in
 * loaded.items(): fresh[k] = v`)? A new dict that only takes a value of it
 * (`{"model": net.state_dict(), "epoch": old["epoch"] + 1}`) is not. */
static bool saves_what_was_read(ol_model *m, ol_nid obj, ol_sym loaded, ol_nid region)
{
    const ol_tree *t = m->tree;
    ol_sym from[8] = {loaded};
    size_t nfrom = 1;
    obj = ol_unparen(t, obj);
    if (obj == OL_NONE || rooted_at(m, obj, from, nfrom))
        return true;
    if (ol_kind_of(t, obj) != OL_N_identifier)
        return false;
    ol_sym name = ol_node_sym(m, obj);
    for (ol_nid n = region; n < m->subtree_end[region]; n++) {
        ol_kind k = ol_kind_of(t, n);
        if (k == OL_N_for_statement && rooted_at(m, ol_field(t, n, OL_F_right), from, nfrom)) {
            ol_nid left = ol_field(t, n, OL_F_left);
            for (ol_nid x = left; left != OL_NONE && x < m->subtree_end[left] && nfrom < 8; x++)
                if (ol_kind_of(t, x) == OL_N_identifier)
                    from[nfrom++] = ol_node_sym(m, x);
            continue;
        }
        if (k != OL_N_assignment)
            continue;
        ol_nid left = ol_field(t, n, OL_F_left), right = ol_field(t, n, OL_F_right);
        bool store = false;
        while (left != OL_NONE && ol_kind_of(t, left) == OL_N_subscript) {
            left = ol_field(t, left, OL_F_value);
            store = true;
        }
        if (left == OL_NONE || ol_kind_of(t, left) != OL_N_identifier || ol_node_sym(m, left) != name)
            continue;
        /* `name = loaded["model"]`, or `name[k] = v` from it */
        if (store ? names_any(m, right, from, nfrom) : rooted_at(m, right, from, nfrom))
            return true;
    }
    return false;
}

/* Does the save write back what a torch.load before it in its function
 * read from the file it writes (its path spells the literal s), as a
 * converter renaming the keys of a released checkpoint does? Such a save
 * writes what the file held: it says nothing of where the file's tensors
 * are, and a load elsewhere is not linked to it. A save of anything else
 * (the model's state after a resume, a best checkpoint written before it
 * is read back) is a writer like any other. */
static bool reads_back(ol_model *m, ol_nid save, const char *s, uint32_t len)
{
    const ol_tree *t = m->tree;
    uint32_t fn = ol_function_of(m, save);
    ol_nid region = fn == OL_NO_INDEX ? 0 : m->functions.items[fn].node;
    ol_nid obj = ol_call_arg(m, save, 0, "obj");
    size_t first = 0;
    size_t end = ol_calls_in(m, region, &first);
    for (size_t k = first; k < end && m->calls.items[k].node < save; k++) {
        const ol_call *c = &m->calls.items[k];
        if (ol_function_of(m, c->node) != fn || !ol_is_torch_load(ol_qualname(m, c->callee)))
            continue;
        const char *lits[MAX_SAVE_FILES];
        uint32_t lens[MAX_SAVE_FILES];
        size_t n = ol_path_literals(m, ol_call_arg(m, c->node, 0, "f"), lits, lens, MAX_SAVE_FILES);
        bool same_file = false;
        for (size_t i = 0; i < n && !same_file; i++)
            same_file = lens[i] == len && memcmp(lits[i], s, len) == 0;
        if (!same_file)
            continue;
        /* what the load is bound to: `loaded = torch.load(p)`, `... = torch.load(p)["key"]` */
        ol_nid v = c->node, p = ol_parent(t, v);
        while (p != OL_NONE && ol_kind_of(t, p) == OL_N_subscript && ol_field(t, p, OL_F_value) == v) {
            v = p;
            p = ol_parent(t, v);
        }
        ol_nid target = p != OL_NONE && ol_kind_of(t, p) == OL_N_assignment && ol_field(t, p, OL_F_right) == v
                            ? ol_field(t, p, OL_F_left)
                            : OL_NONE;
        if (target != OL_NONE && ol_kind_of(t, target) == OL_N_identifier &&
            saves_what_was_read(m, obj, ol_node_sym(m, target), region))
            return true;
    }
    return false;
}

static void record_save(ol_model *m, ol_arena *a, ol_sum_save *sv, ol_nid call, const ol_save_site *site,
                        int *cpu_only)
{
    const ol_tree *t = m->tree;
    memset(sv, 0, sizeof(*sv));
    /* a framework's writer saves what the processes hold, wherever it is:
     * it names a file, and nothing of what is in it */
    ol_nid obj = site->obj, to = site->to;
    sv->host_only = !site->framework && ol_save_holds_host_data(m, call, cpu_only);
    ol_nid dict = obj != OL_NONE ? ol_saved_dict(m, obj) : OL_NONE;
    if (dict != OL_NONE) {
        size_t n = 0;
        for (ol_nid p = ol_first_named(t, dict); p != OL_NONE; p = ol_next_named(t, p))
            n++;
        if (n <= MAX_SAVE_KEYS) {
            sv->keys = ol_arena_alloc(a, sizeof(char *) * (n ? n : 1));
            sv->shape = OL_SAVE_DICT;
            for (ol_nid p = ol_first_named(t, dict); p != OL_NONE; p = ol_next_named(t, p)) {
                const char *k;
                uint32_t len;
                const char *copy = ol_string_value(t, ol_field(t, p, OL_F_key), &k, &len) ? arena_literal(a, k, len)
                                                                                           : NULL;
                if (!copy) {
                    sv->shape = OL_SAVE_OTHER; /* a key that cannot be told apart */
                    sv->key_count = 0;
                    break;
                }
                sv->keys[sv->key_count++] = copy;
            }
        }
    } else if (obj != OL_NONE && ol_saved_unkeyed(m, obj)) {
        sv->shape = OL_SAVE_UNKEYED;
    }
    if (to == OL_NONE)
        return;
    const char *files[MAX_SAVE_FILES];
    uint32_t lens[MAX_SAVE_FILES];
    size_t n = ol_path_literals(m, to, files, lens, MAX_SAVE_FILES);
    sv->files = ol_arena_alloc(a, sizeof(char *) * MAX_SAVE_FILES);
    for (size_t i = 0; i < n; i++) {
        if (reads_back(m, call, files[i], lens[i]))
            continue;
        const char *copy = arena_literal(a, files[i], lens[i]);
        if (copy)
            sv->files[sv->file_count++] = copy;
    }
}

/* ---- calls of other files' functions ------------------------------------------------ */

typedef struct call_rec {
    char *qual;
    bool grad_off;
    char *root; /* with autograd on at the call: the function whose callers elsewhere decide, or NULL */
    uint8_t often; /* ol_often at the call, as the file shows it */
    bool gpu;      /* the calling file puts data on an accelerator */
    uint32_t line;
    uint8_t use;   /* what the calling code does with the result (OL_USE_*) */
    char *caller;  /* the calling function's name, or NULL */
    char *args;    /* the project classes of the instances passed (ol_sum_call.args), or NULL */
} call_rec;

typedef OL_VEC(call_rec) call_rec_vec;

/* One record per qual, grad mode and root (the key); the first line of
 * each is kept. */
static int cmp_call_key(const call_rec *x, const call_rec *y)
{
    int c = strcmp(x->qual, y->qual);
    if (c)
        return c;
    if (x->grad_off != y->grad_off)
        return (int)x->grad_off - (int)y->grad_off;
    if (x->often != y->often)
        return (int)x->often - (int)y->often;
    if (x->use != y->use)
        return (int)x->use - (int)y->use;
    if (!x->caller || !y->caller) {
        if (x->caller || y->caller)
            return (int)(x->caller != NULL) - (int)(y->caller != NULL);
    } else {
        int k = strcmp(x->caller, y->caller);
        if (k)
            return k;
    }
    if (!x->args || !y->args) {
        if (x->args || y->args)
            return (int)(x->args != NULL) - (int)(y->args != NULL);
    } else {
        int k = strcmp(x->args, y->args);
        if (k)
            return k;
    }
    if (!x->root || !y->root)
        return (int)(x->root != NULL) - (int)(y->root != NULL);
    return strcmp(x->root, y->root);
}


static int cmp_call_rec(const void *a, const void *b)
{
    const call_rec *x = a, *y = b;
    int c = cmp_call_key(x, y);
    return c ? c : (x->line > y->line) - (x->line < y->line);
}

/* Libraries whose functions are never the run's own: calls of them need no
 * record (the records are kept past the summary's budget). */
static bool library_qual(const char *q)
{
    static const char *const roots[] = {"torch", "numpy", "os", "sys", "math", "random", "json", "time", "re",
                                        "collections", "itertools", "functools", "typing", "logging", "argparse",
                                        "pathlib", "tqdm", "matplotlib", "pandas", "scipy", "sklearn",
                                        "transformers", "torchvision", "PIL", "cv2", "copy", "pickle", "shutil",
                                        "glob", "datetime", "warnings", "einops", "wandb", "builtins", NULL};
    size_t n = strcspn(q, ".");
    for (const char *const *r = roots; *r; r++)
        if (ol_mem_eq_cstr(q, n, *r))
            return true;
    return false;
}

bool ol_distinctive_method(const char *name)
{
    size_t n = strlen(name);
    return n >= 10 && strchr(name, '_') && !(name[0] == '_' && name[1] == '_');
}

#define CANDIDATE_CLASSES 8

/* The classes this file imports from the project (a capitalised last
 * part, not a library's), as candidates for the class of a value the
 * file cannot tell: `model.forward_test_wikikg(...)` after `from .models
 * import KEModel`. The callee's file resolves each; only a class that
 * defines the method does. */
static size_t imported_classes(ol_model *m, const char **out, size_t cap)
{
    size_t n = 0;
    for (size_t d = 0; d < m->defs.len && n < cap; d++) {
        const ol_def *def = &m->defs.items[d];
        if (def->kind != OL_DEF_IMPORT || !def->qual || def->scope != 0)
            continue;
        const char *q = ol_sym_str(m, def->qual);
        const char *dot = strrchr(q, '.');
        const char *last = dot ? dot + 1 : q;
        if (last[0] >= 'A' && last[0] <= 'Z' && !library_qual(q))
            out[n++] = q;
    }
    return n;
}

/* The project classes of the instances call passes (ol_sum_call.args), or
 * NULL: the callee's file learns from them what its parameters hold
 * (`eval_model(predictor, loader)` with `predictor = Predictor(model)`). */
static char *arg_classes(ol_model *m, ol_nid call)
{
    const ol_tree *t = m->tree;
    ol_nid args = ol_field(t, call, OL_F_arguments);
    ol_buf b = {0};
    int pos = 0;
    for (ol_nid a = args != OL_NONE ? ol_first_named(t, args) : OL_NONE; a != OL_NONE && pos < 16;
         a = ol_next_named(t, a)) {
        ol_kind k = ol_kind_of(t, a);
        if (k == OL_N_list_splat || k == OL_N_dictionary_splat)
            break;
        bool kw = k == OL_N_keyword_argument;
        ol_nid value = kw ? ol_field(t, a, OL_F_value) : a;
        ol_val v = ol_eval(m, value);
        const char *cls = v.kind == OL_V_OBJECT && v.ref ? ol_sym_str(m, v.ref) : ol_instance_class(m, value);
        if (cls && !library_qual(cls)) {
            if (kw) {
                char *name = ol_node_str(t, ol_field(t, a, OL_F_name));
                ol_buf_printf(&b, "%s=%s;", name, cls);
                free(name);
            } else {
                ol_buf_printf(&b, "%d=%s;", pos, cls);
            }
        }
        if (!kw)
            pos++;
    }
    return b.data;
}

/* Is what function fi returns backpropagated, as its file alone shows: it
 * is a framework's training step, or a caller of the file backpropagates
 * its result or returns it from such a function; a module's `forward()` is
 * also called as `self(...)` by the methods of its class (Lightning's
 * training_step). A body that backpropagates something else (a training
 * loop returning its metrics) does not count. memo: per function, 0 not
 * asked, 1 busy, 2 no, 3 yes. */
static bool trains_here(ol_model *m, uint8_t *memo, uint32_t fi, int depth);

/* Is the result of call ci, made in function caller, backpropagated there or
 * returned from it to code that trains through it? */
static bool result_trains(ol_model *m, uint8_t *memo, uint32_t ci, uint32_t caller, int depth)
{
    unsigned use = ol_call_result_use(m, ci);
    return (use & OL_USE_BACKWARD) ||
           ((use & OL_USE_RETURNED) && caller != OL_NO_INDEX && trains_here(m, memo, caller, depth + 1));
}

static bool trains_here(ol_model *m, uint8_t *memo, uint32_t fi, int depth)
{
    if (fi >= m->functions.len || memo[fi] == 1 || depth > 8)
        return false;
    if (memo[fi])
        return memo[fi] == 3;
    memo[fi] = 1;
    const ol_function *f = &m->functions.items[fi];
    bool yes = ol_function_hook(m, fi) == OL_HOOK_TRAIN_STEP;
    for (size_t k = 0; k < f->callsites.len && !yes; k++) {
        uint32_t ci = f->callsites.items[k];
        uint32_t caller = ol_function_of(m, m->calls.items[ci].node);
        yes = result_trains(m, memo, ci, caller != fi ? caller : OL_NO_INDEX, depth);
    }
    if (!yes && f->is_method && f->cls != OL_NO_INDEX && f->name == m->names.forward) {
        const ol_tree *t = m->tree;
        for (size_t ci = 0; ci < m->calls.len && !yes; ci++) {
            const ol_call *c = &m->calls.items[ci];
            ol_nid callee = ol_unparen(t, c->callee);
            if (c->receiver != OL_NONE || callee == OL_NONE || ol_kind_of(t, callee) != OL_N_identifier ||
                !ol_text_is(t, callee, "self"))
                continue;
            uint32_t caller = ol_function_of(m, c->node);
            if (caller == OL_NO_INDEX || caller == fi || m->functions.items[caller].cls != f->cls)
                continue;
            yes = result_trains(m, memo, (uint32_t)ci, caller, depth);
        }
    }
    memo[fi] = yes ? 3 : 2;
    return yes;
}

/* The calls this file makes of functions it does not define, as the
 * callee's file needs them (ol_sum_call). */
static void collect_calls(ol_model *m, call_rec_vec *out)
{
    uint8_t *trains = ol_xcalloc(m->functions.len + 1, 1);
    const ol_tree *t = m->tree;
    ol_device_use device;
    bool device_known = false;
    const char *classes[CANDIDATE_CLASSES];
    size_t class_count = (size_t)-1;
    for (size_t i = 0; i < m->calls.len; i++) {
        const ol_call *c = &m->calls.items[i];
        if (!c->name)
            continue;
        ol_nid recv = ol_unparen(t, c->receiver);
        uint32_t len;
        const char *rt = recv != OL_NONE && ol_kind_of(t, recv) == OL_N_identifier ? ol_text(t, recv, &len) : NULL;
        uint32_t fi = ol_function_of(m, c->node);
        bool on_self = rt && len == 4 && memcmp(rt, "self", 4) == 0 && fi != OL_NO_INDEX &&
                       m->functions.items[fi].is_method && m->functions.items[fi].cls != OL_NO_INDEX;
        char *quals[CANDIDATE_CLASSES + 2];
        size_t nq = 0;
        bool own_record = false;
        if (on_self && !m->functions.items[fi].is_classmethod) {
            /* a method's call of its own object, whatever this file runs
             * for it: for a subclass of another file that defines the
             * method, it is a call of the subclass's (the template method:
             * a base's batch loop calls `self.train_step(items)`) */
            const ol_class *own = &m->classes.items[m->functions.items[fi].cls];
            if (own->name && own->scope != OL_NO_INDEX && m->scopes.items[own->scope].parent == 0 &&
                m->functions.items[fi].outer_scope == own->scope) {
                quals[nq++] = ol_xasprintf("%s%s.%s", OL_OWN_CALL, ol_sym_str(m, own->name), ol_sym_str(m, c->name));
                own_record = true;
            }
        }
        bool local = ol_callee_function(m, c->node) != OL_NO_INDEX;
        if (local && nq == 0)
            continue;
        char *qual = NULL;
        if (local) {
            /* a function of this file: only the record above */
        } else if (on_self) {
            /* self.method() of a class whose bases come from elsewhere */
            const ol_class *cls = &m->classes.items[m->functions.items[fi].cls];
            for (size_t k = 0; k < cls->bases.len && !qual; k++) {
                ol_val v = ol_eval(m, cls->bases.items[k]);
                if (v.kind == OL_V_EXTERN && v.ref && !library_qual(ol_sym_str(m, v.ref)))
                    qual = ol_xasprintf("%s.%s", ol_sym_str(m, v.ref), ol_sym_str(m, c->name));
            }
        } else {
            const char *q = ol_qualname(m, c->callee);
            if (q && !library_qual(q))
                qual = ol_xstrndup(q, strlen(q));
        }
        if (!qual && !local && recv != OL_NONE) {
            /* obj.method() on an instance of a class of another file
             * (`solver = DPM_Solver(...); solver.sample(x)`) */
            ol_val v = ol_eval(m, recv);
            /* also through `self.x = Model(...).eval().to(device)` */
            const char *cls = v.kind == OL_V_OBJECT && v.ref ? ol_sym_str(m, v.ref) : ol_instance_class(m, recv);
            if (cls && !library_qual(cls))
                qual = ol_xasprintf("%s.%s", cls, ol_sym_str(m, c->name));
            else if ((v.kind == OL_V_UNKNOWN || (v.kind == OL_V_MODULE && !v.ref)) &&
                     ol_distinctive_method(ol_sym_str(m, c->name))) {
                if (class_count == (size_t)-1)
                    class_count = imported_classes(m, classes, CANDIDATE_CLASSES);
                for (size_t k = 0; k < class_count; k++)
                    quals[nq++] = ol_xasprintf("%s.%s", classes[k], ol_sym_str(m, c->name));
                /* and by the name alone, for a class this file does not import
                 * (`test_dataset.multi_scale_inference(...)` on a dataset made
                 * by another file) */
                quals[nq++] = ol_xasprintf("%s%s", OL_ANY_CALL, ol_sym_str(m, c->name));
            }
        }
        if (qual)
            quals[nq++] = qual;
        if (nq == 0)
            continue;
        bool grad_off = ol_grad_disabled(m, c->node);
        /* for the subclasses, autograd is off at a call of its own object
         * only where the base's code turns it off (a context, a statement,
         * a decorator, an evaluation hook): the base's method may also be
         * called from outside the project (a library's trainer calls an
         * overridden `compute_loss()` with autograd on) whatever its callers
         * in this file do */
        bool own_off = grad_off;
        if (own_off && own_record) {
            ol_grad_local gl;
            ol_grad_explain(m, c->node, &gl);
            own_off = gl.cause != OL_GC_CALLERS && gl.cause != OL_GC_OVERRIDE && gl.cause != OL_GC_NONE_CALLED;
        }
        char *root_name = NULL;
        if (!grad_off) {
            /* a function of the module (or a method of one of its classes)
             * that nothing in this file calls: its callers in other files
             * decide the grad mode at this call */
            uint32_t root = ol_grad_root(m, c->node);
            if (root != OL_NO_INDEX && m->functions.items[root].callsites.len == 0) {
                ol_arena a = {0};
                const char *name = function_name(m, root, &a);
                if (name)
                    root_name = ol_xstrndup(name, strlen(name));
                ol_arena_free(&a);
            }
        }
        uint32_t line = ol_source_line_index(t->src, t->nodes.items[c->node].start) + 1;
        ol_often_local often;
        ol_often_explain(m, c->node, &often);
        if (!device_known) {
            ol_file_device_use(m, &device);
            device_known = true;
        }
        bool gpu = device.use == OL_DEVICE_NAMED || device.use == OL_DEVICE_VARIABLE ||
                   device.use == OL_DEVICE_FRAMEWORK;
        /* a call of the file's own method is recorded only for subclasses
         * elsewhere, which read its grad mode, frequency and caller: what
         * the caller does with the result, and its arguments, are not asked
         * of it (and cost the most to work out) */
        bool own_only = own_record && nq == 1;
        /* a call recorded by its method's name alone is read for its grad
         * mode only (ol_project_visit_any_calls) */
        bool any_only = nq == 1 && strncmp(quals[0], OL_ANY_CALL, sizeof(OL_ANY_CALL) - 1) == 0;
        bool mode_only = own_only || any_only;
        /* what the calling function does with the result: a callee that
         * hands on a model's output learns its role from it */
        uint8_t use = mode_only ? 0 : (uint8_t)ol_call_result_use(m, (uint32_t)i);
        /* returned to code of this file that trains through it: the callee's
         * result is backpropagated there, as another file must know (a
         * renderer whose chunks a Lightning forward gathers for its
         * training_step) */
        if ((use & OL_USE_RETURNED) && !(use & OL_USE_BACKWARD) && fi != OL_NO_INDEX &&
            trains_here(m, trains, fi, 0))
            use |= OL_USE_BACKWARD;
        if (!mode_only && recv != OL_NONE && ol_module_eval_switch(m, recv, c->node, NULL) != OL_NONE)
            use |= OL_USE_EVAL; /* `self.model_.slide(...)` on a model kept in evaluation mode */
        char *caller = NULL;
        if (fi != OL_NO_INDEX && !any_only) {
            ol_arena a = {0};
            const char *name = function_name(m, fi, &a);
            if (name)
                caller = ol_xstrndup(name, strlen(name));
            ol_arena_free(&a);
        }
        char *args = mode_only ? NULL : arg_classes(m, c->node);
        for (size_t k = 0; k < nq; k++) {
            call_rec r = {quals[k], own_record && k == 0 ? own_off : grad_off, root_name && k + 1 < nq ? ol_xstrndup(root_name, strlen(root_name))
                                                                      : root_name, (uint8_t)often.often, gpu, line,
                          use, caller && k + 1 < nq ? ol_xstrndup(caller, strlen(caller)) : caller,
                          args && k + 1 < nq ? ol_xstrndup(args, strlen(args)) : args};
            ol_vec_push(out, r);
        }
    }
    free(trains);
}

/* A summary lives as long as the run: what its arenas hold goes into one
 * block each, their empty tails let go (a third of the corpus's summary
 * bytes were tails). Every pointer into the arenas is moved: the text and
 * arrays the structures below point to. */
/* An array of n strings of the arena, moved with what it points to. */
static const char **moved_strings(const ol_arena_compaction *c, const char **v, size_t n)
{
    v = ol_arena_moved(c, v);
    for (size_t k = 0; k < n; k++)
        v[k] = ol_arena_moved(c, v[k]);
    return v;
}

static void compact_saves(ol_file_saves *fs)
{
    ol_arena_compaction c;
    if (!ol_arena_compact_begin(&fs->arena, &c))
        return;
    fs->items = ol_arena_moved(&c, fs->items);
    for (size_t i = 0; i < fs->count; i++) {
        ol_sum_save *sv = &fs->items[i];
        sv->keys = moved_strings(&c, sv->keys, sv->key_count);
        sv->files = moved_strings(&c, sv->files, sv->file_count);
    }
    fs->calls = ol_arena_moved(&c, fs->calls);
    for (size_t i = 0; i < fs->call_count; i++) {
        ol_sum_call *sc = &fs->calls[i];
        sc->qual = ol_arena_moved(&c, sc->qual);
        sc->name = ol_arena_moved(&c, sc->name);
        sc->root = ol_arena_moved(&c, sc->root);
        sc->caller = ol_arena_moved(&c, sc->caller);
        sc->args = ol_arena_moved(&c, sc->args);
    }
    ol_arena_compact_end(&c);
}

static void compact_summary(ol_file_summary *s)
{
    ol_arena_compaction c;
    if (!ol_arena_compact_begin(&s->arena, &c))
        return;
    for (size_t i = 0; i < s->fn_count; i++) {
        ol_fn_summary *f = &s->fns[i];
        f->name = ol_arena_moved(&c, f->name);
        f->elems = ol_arena_moved(&c, f->elems);
        for (size_t k = 0; k < f->elem_count; k++)
            f->elems[k].key = ol_arena_moved(&c, f->elems[k].key);
        f->params = moved_strings(&c, f->params, f->param_count);
        f->stores = ol_arena_moved(&c, f->stores);
        for (size_t k = 0; k < f->store_count; k++)
            f->stores[k].what = ol_arena_moved(&c, f->stores[k].what);
    }
    for (size_t i = 0; i < s->class_count; i++) {
        ol_class_summary *cs = &s->classes[i];
        cs->name = ol_arena_moved(&c, cs->name);
        cs->bases = moved_strings(&c, cs->bases, cs->base_count);
        cs->ext_bases = moved_strings(&c, cs->ext_bases, cs->ext_base_count);
    }
    for (size_t i = 0; i < s->import_count; i++) {
        s->imports[i].bound = ol_arena_moved(&c, s->imports[i].bound);
        s->imports[i].qual = ol_arena_moved(&c, s->imports[i].qual);
    }
    ol_arena_compact_end(&c);
}

/* The texts of a file's call records, one copy each in its arena. */
typedef struct saves_texts {
    ol_interner ids;
    const char **copies; /* by id */
    size_t cap;
    ol_arena *arena;
} saves_texts;

static const char *saves_text(saves_texts *t, const char *s)
{
    if (!s)
        return NULL;
    size_t n = strlen(s);
    uint32_t id = ol_intern(&t->ids, s, n);
    if (id >= t->cap) {
        size_t cap = t->cap ? t->cap * 2 : 64;
        while (cap <= id)
            cap *= 2;
        t->copies = ol_xrealloc(t->copies, cap * sizeof(*t->copies));
        memset(t->copies + t->cap, 0, (cap - t->cap) * sizeof(*t->copies));
        t->cap = cap;
    }
    if (!t->copies[id])
        t->copies[id] = ol_arena_strndup(t->arena, s, n);
    return t->copies[id];
}

/* The file's saves and its call records, or NULL when it has neither. */
static ol_file_saves *file_saves(ol_model *m)
{
    size_t n = 0;
    ol_save_site site;
    for (size_t i = 0; i < m->calls.len; i++)
        n += ol_save_site_of(m, (uint32_t)i, &site);
    call_rec_vec recs = {0};
    collect_calls(m, &recs);
    if (n == 0 && recs.len == 0)
        return NULL;
    ol_file_saves *fs = ol_xcalloc(1, sizeof(*fs));
    atomic_init(&fs->refs, 1);
    fs->items = ol_arena_alloc(&fs->arena, sizeof(ol_sum_save) * (n ? n : 1));
    int cpu_only = -1; /* ol_file_stays_on_cpu, asked once for the file's saves */
    for (size_t i = 0; i < m->calls.len && n; i++)
        if (ol_save_site_of(m, (uint32_t)i, &site))
            record_save(m, &fs->arena, &fs->items[fs->count++], m->calls.items[i].node, &site, &cpu_only);
    if (recs.len) {
        ol_sort(recs.items, recs.len, sizeof(call_rec), cmp_call_rec);
        size_t unique = 0;
        for (size_t i = 0; i < recs.len; i++)
            unique += i == 0 || cmp_call_key(&recs.items[i], &recs.items[i - 1]) != 0;
        fs->calls = ol_arena_alloc(&fs->arena, sizeof(ol_sum_call) * unique);
        /* a file's calls repeat their texts (the caller, the function whose
         * callers decide, the classes passed): each is copied once */
        saves_texts texts = {0};
        ol_interner_init(&texts.ids);
        texts.arena = &fs->arena;
        for (size_t i = 0; i < recs.len; i++) {
            if (i > 0 && cmp_call_key(&recs.items[i], &recs.items[i - 1]) == 0)
                continue;
            ol_sum_call *sc = &fs->calls[fs->call_count++];
            sc->qual = saves_text(&texts, recs.items[i].qual);
            const char *dot = strrchr(sc->qual, '.');
            sc->name = dot ? dot + 1 : sc->qual;
            sc->grad_off = recs.items[i].grad_off;
            sc->line = recs.items[i].line;
            sc->often = recs.items[i].often;
            sc->gpu = recs.items[i].gpu;
            sc->root = saves_text(&texts, recs.items[i].root);
            sc->use = recs.items[i].use;
            sc->caller = saves_text(&texts, recs.items[i].caller);
            sc->args = saves_text(&texts, recs.items[i].args);
        }
        ol_interner_free(&texts.ids);
        free(texts.copies);
    }
    for (size_t i = 0; i < recs.len; i++) {
        free(recs.items[i].qual);
        free(recs.items[i].root);
        free(recs.items[i].caller);
        free(recs.items[i].args);
    }
    ol_vec_free(&recs);
    compact_saves(fs);
    return fs;
}

ol_file_summary *ol_summarize(ol_model *m)
{
    ol_file_summary *s = ol_file_summary_empty();
    size_t nf = m->functions.len;
    s->fn_count = nf;
    s->fns = ol_xcalloc(nf ? nf : 1, sizeof(ol_fn_summary));
    sbuild b = {m, s, ol_xcalloc(nf ? nf : 1, sizeof(b.stores[0])),
                ol_xcalloc(m->strings.strings.len + 1, sizeof(const char *))};
    for (uint32_t fi = 0; fi < nf; fi++) {
        s->fns[fi].name = function_name(m, fi, &s->arena);
        params_of(&b, fi);
        const ol_function *f = &m->functions.items[fi];
        ol_nid body = ol_field(m->tree, f->node, OL_F_body);
        ol_hook hook = ol_function_hook(m, fi);
        if ((body != OL_NONE && guarded(m, body)) || hook == OL_HOOK_EVAL_STEP || hook == OL_HOOK_EVAL_HOOK)
            s->fns[fi].facts |= OL_FN_NO_GRAD;
        bool callers_off = f->callsites.len > 0;
        for (size_t k = 0; k < m->functions.items[fi].callsites.len && callers_off; k++)
            callers_off = ol_grad_disabled(m, m->calls.items[m->functions.items[fi].callsites.items[k]].node);
        if (callers_off)
            s->fns[fi].facts |= OL_FN_CALLERS_NO_GRAD;
    }
    edge_vec edges = {0};
    function_facts(&b, &edges);
    direct_stores(&b);
    sliced_params(&b);
    host_params(&b);
    propagate(&b, edges.items, edges.len);
    ol_vec_free(&edges);
    for (uint32_t fi = 0; fi < nf; fi++) {
        return_facts(&b, fi);
        ol_fn_summary *fs = &s->fns[fi];
        fs->store_count = (uint8_t)b.stores[fi].len;
        if (fs->store_count) {
            fs->stores = ol_arena_alloc(&s->arena, sizeof(ol_sum_store) * fs->store_count);
            memcpy(fs->stores, b.stores[fi].items, sizeof(ol_sum_store) * fs->store_count);
        }
        ol_vec_free(&b.stores[fi]);
    }
    free(b.stores);
    free(b.sym_text);
    s->fn_order = ol_xmalloc(sizeof(uint32_t) * (nf ? nf : 1));
    for (uint32_t fi = 0; fi < nf; fi++)
        if (s->fns[fi].name)
            s->fn_order[s->named_count++] = fi;
    sort_fns(s->fn_order, s->named_count, s->fns);
    classes_and_imports(&b);
    s->saves = file_saves(m);
    compact_summary(s);
    s->bytes = sizeof(*s) + ol_arena_bytes(&s->arena) + (s->saves ? ol_arena_bytes(&s->saves->arena) : 0) +
               nf * (sizeof(ol_fn_summary) + sizeof(uint32_t)) + s->class_count * sizeof(ol_class_summary) +
               s->import_count * sizeof(ol_sum_import);
    return s;
}
