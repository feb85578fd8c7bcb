/*
 * grad.c - is autograd on at a node, and why: the with-blocks, decorators,
 * `set_grad_enabled` statements and framework hooks around it, a callable
 * wrapped in a grad mode (`torch.no_grad()(model)`), and, within the file,
 * the call sites of its function (all of them under no_grad means no grad).
 * Part of the evaluator: values computed where autograd is off carry no graph.
 */
#include "model.h"

#include "dataflow.h"
#include "eval_internal.h"
#include "steps.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

/* ---- grad mode ---------------------------------------------------------------- */

/* A Lightning Callback (`pl.Callback`, `lightning.pytorch.callbacks.Callback`),
 * directly or through classes of the file. */
static bool class_is_lightning_callback(ol_model *m, uint32_t ci, int depth)
{
    if (ci >= m->classes.len || depth > 8)
        return false;
    for (size_t i = 0; i < m->classes.items[ci].bases.len; i++) {
        ol_val v = ol_eval(m, m->classes.items[ci].bases.items[i]);
        if (v.kind == OL_V_CLASS && v.ref != ci && class_is_lightning_callback(m, v.ref, depth + 1))
            return true;
        if (v.kind != OL_V_EXTERN)
            continue;
        const char *q = ol_sym_str(m, v.ref);
        if ((ol_str_has_prefix(q, "pytorch_lightning.") || ol_str_has_prefix(q, "lightning.") ||
             ol_str_has_prefix(q, "pl.") || ol_str_has_prefix(q, "L.")) &&
            ol_str_has_suffix(q, ".Callback"))
            return true;
    }
    return false;
}

ol_hook ol_function_hook(ol_model *m, uint32_t fi)
{
    const ol_function *f = &m->functions.items[fi];
    if (!f->is_method || f->cls == OL_NO_INDEX)
        return OL_HOOK_NONE;
    ol_sym n = f->name;
    bool train = n == m->names.training_step;
    bool eval = n == m->names.validation_step || n == m->names.test_step || n == m->names.predict_step;
    /* the hooks Lightning calls inside its evaluation loops, which run under
     * no_grad / inference_mode: on_validation_batch_end, on_test_epoch_start, ... */
    const char *name = ol_sym_str(m, n);
    bool eval_hook = name && (ol_str_has_prefix(name, "on_validation_") || ol_str_has_prefix(name, "on_test_") ||
                              ol_str_has_prefix(name, "on_predict_"));
    /* the hooks Lightning calls around each training batch, with autograd
     * on, on the module or on a Callback: per-batch bodies like
     * training_step (what they keep on self lives across the batches) */
    if (name && (strcmp(name, "on_train_batch_end") == 0 || strcmp(name, "on_train_batch_start") == 0))
        return ol_class_is_lightning(m, f->cls) || class_is_lightning_callback(m, f->cls, 0) ? OL_HOOK_TRAIN_STEP
                                                                                             : OL_HOOK_NONE;
    if (!train && !eval && !eval_hook)
        return OL_HOOK_NONE;
    if (eval_hook)
        return ol_class_is_lightning(m, f->cls) || class_is_lightning_callback(m, f->cls, 0) ? OL_HOOK_EVAL_HOOK
                                                                                             : OL_HOOK_NONE;
    if (!ol_class_is_lightning(m, f->cls))
        return OL_HOOK_NONE;
    return train ? OL_HOOK_TRAIN_STEP : OL_HOOK_EVAL_STEP;
}

/* The grad mode a decorator of function fi sets, with the decorator in
 * *where (when given). */
static ol_gradmode decorator_mode_at(ol_model *m, uint32_t fi, ol_nid *where)
{
    const ol_tree *t = m->tree;
    ol_nid dec = m->functions.items[fi].decorated;
    if (dec == OL_NONE)
        return OL_GM_NONE;
    for (ol_nid d = ol_first_named(t, dec); d != OL_NONE; d = ol_next_named(t, d)) {
        if (ol_kind_of(t, d) != OL_N_decorator)
            continue;
        ol_nid e = ol_first_named(t, d);
        ol_val v = ol_eval(m, e);
        ol_gradmode gm = OL_GM_NONE;
        if (v.kind == OL_V_GRADMODE)
            gm = (ol_gradmode)v.info;
        else if (v.kind == OL_V_EXTERN && (gm = ol_eval__gradmode_of(ol_sym_str(m, v.ref))) == OL_GM_SET_COND)
            gm = OL_GM_NONE;
        if (gm != OL_GM_NONE) {
            if (where)
                *where = d;
            return gm;
        }
    }
    return OL_GM_NONE;
}

static ol_gradmode decorator_mode(ol_model *m, uint32_t fi)
{
    return decorator_mode_at(m, fi, NULL);
}

static bool mode_disables(ol_gradmode g)
{
    return g == OL_GM_NO_GRAD || g == OL_GM_INFERENCE || g == OL_GM_SET_FALSE || g == OL_GM_SET_COND;
}

static bool function_grad_disabled(ol_model *m, uint32_t fi, int depth);

/* Grad mode from contexts alone: 1 disabled, 0 enabled, -1 no context says. */
static int ctx_grad(const ol_model *m, ol_nid n)
{
    for (uint32_t c = m->node_ctx[n]; c != OL_NO_INDEX; c = m->contexts.items[c].parent) {
        const ol_ctx *ctx = &m->contexts.items[c];
        if (ctx->kind != OL_CTX_GRAD)
            continue;
        if (ctx->gradmode == OL_GM_ENABLE)
            return 0;
        if (mode_disables(ctx->gradmode))
            return 1;
    }
    return -1;
}

/* `torch.set_grad_enabled(False)` written as a statement earlier in a block
 * that holds n, inside n's function (or at module level for module code):
 * 1 when the last such statement before n turns autograd off, 0 when it
 * turns it on, -1 when none does. Only statements of blocks around n count,
 * so a switch in one branch of an `if` decides nothing for the code after. */
static int statement_grad_at(ol_model *m, ol_nid n, ol_nid *where);

static int statement_grad(ol_model *m, ol_nid n)
{
    return statement_grad_at(m, n, NULL);
}

static const char *const setters[] = {"torch.set_grad_enabled", "torch.autograd.set_grad_enabled",
                                      "torch.autograd.grad_mode.set_grad_enabled", NULL};

bool ol_grad_setters_spelled(const ol_model *m)
{
    const ol_source *src = m->tree->src;
    return ol_find(src->text, src->len, "set_grad_enabled") != NULL;
}

bool ol_grad_setter_statement(ol_model *m, ol_nid call)
{
    const ol_tree *t = m->tree;
    ol_nid stmt = ol_parent(t, call);
    return stmt != OL_NONE && ol_kind_of(t, stmt) == OL_N_expression_statement && ol_kind_of(t, call) == OL_N_call &&
           ol_call_is(m, call, setters);
}

/* Does the file call set_grad_enabled(...) as a statement anywhere? Looked
 * for once (bits 0-1 of grad_setter_stmts: 0 not looked for, 1 none,
 * 2 some; bits 2-3: the callable wrappers, any_wrappers). Most files have
 * none: then no block needs scanning, and most do not spell the name
 * (ol_grad_setters_spelled): then no call is evaluated either. */
bool ol_grad_any_setter_statements(ol_model *m)
{
    if ((m->grad_setter_stmts & 3) == 0) {
        m->grad_setter_stmts |= 1;
        size_t calls = ol_grad_setters_spelled(m) ? m->calls.len : 0;
        for (size_t i = 0; i < calls; i++) {
            if (ol_grad_setter_statement(m, m->calls.items[i].node)) {
                m->grad_setter_stmts = (uint8_t)((m->grad_setter_stmts & ~3u) | 2u);
                break;
            }
        }
    }
    return (m->grad_setter_stmts & 3) == 2;
}

static int statement_grad_at(ol_model *m, ol_nid n, ol_nid *where)
{
    const ol_tree *t = m->tree;
    if (!ol_grad_any_setter_statements(m))
        return -1;
    for (ol_nid a = n, p = ol_parent(t, n); p != OL_NONE; a = p, p = ol_parent(t, p)) {
        ol_kind pk = ol_kind_of(t, p);
        if (pk == OL_N_function_definition || pk == OL_N_lambda || pk == OL_N_class_definition)
            return -1;
        if (pk != OL_N_block && pk != OL_N_module)
            continue;
        int last = -1;
        for (ol_nid s = ol_first_named(t, p); s != OL_NONE && s != a; s = ol_next_named(t, s)) {
            if (ol_kind_of(t, s) != OL_N_expression_statement)
                continue;
            ol_nid call = ol_first_named(t, s);
            if (call == OL_NONE || !ol_grad_setter_statement(m, call))
                continue;
            ol_nid arg = ol_call_arg(m, call, 0, "mode");
            if (arg == OL_NONE)
                continue;
            ol_kind ak = ol_kind_of(t, ol_unparen(t, arg));
            if (ak != OL_N_false && ak != OL_N_true)
                continue;
            last = ak == OL_N_false;
            if (where)
                *where = call;
        }
        if (last >= 0)
            return last;
    }
    return -1;
}

/* ---- callables wrapped in a grad mode: `torch.no_grad()(model)` ---- */

/* The grad mode a call `G()(f)` gives what f runs, G a grad-mode object
 * (no_grad, inference_mode, enable_grad, set_grad_enabled(...)), or
 * OL_GM_NONE when w is no such call. */
static ol_gradmode wrapper_mode(ol_model *m, ol_nid w)
{
    const ol_tree *t = m->tree;
    w = w != OL_NONE ? ol_unparen(t, w) : OL_NONE;
    if (w == OL_NONE || ol_kind_of(t, w) != OL_N_call)
        return OL_GM_NONE;
    ol_nid maker = ol_unparen(t, ol_field(t, w, OL_F_function));
    if (maker == OL_NONE || ol_kind_of(t, maker) != OL_N_call || ol_call_arg(m, w, 0, NULL) == OL_NONE)
        return OL_GM_NONE;
    ol_val v = ol_eval(m, maker);
    return v.kind == OL_V_GRADMODE ? (ol_gradmode)v.info : OL_GM_NONE;
}

/* Does the file wrap a callable so anywhere? Looked for once (bits 2-3 of
 * grad_setter_stmts: 4 looked for, 8 some). */
static bool any_wrappers(ol_model *m)
{
    if (!(m->grad_setter_stmts & 4)) {
        m->grad_setter_stmts |= 4;
        for (size_t i = 0; i < m->calls.len; i++) {
            ol_nid callee = ol_unparen(m->tree, m->calls.items[i].callee);
            if (callee != OL_NONE && ol_kind_of(m->tree, callee) == OL_N_call &&
                wrapper_mode(m, m->calls.items[i].node) != OL_GM_NONE) {
                m->grad_setter_stmts |= 8;
                break;
            }
        }
    }
    return (m->grad_setter_stmts & 8) != 0;
}

void ol_grad_find_switches(ol_model *m)
{
    ol_grad_any_setter_statements(m);
    any_wrappers(m);
}

/* Does call n run a callable wrapped in a grad mode: `torch.no_grad()(model)(x)`,
 * or `f(x)` with `f = torch.inference_mode()(g)` the only binding of f that
 * reaches it? The mode, with the wrapper in *where; OL_GM_NONE otherwise. */
static ol_gradmode wrapped_mode(ol_model *m, ol_nid n, ol_nid *where)
{
    const ol_tree *t = m->tree;
    if (ol_kind_of(t, n) != OL_N_call || !any_wrappers(m))
        return OL_GM_NONE;
    ol_nid callee = ol_unparen(t, ol_field(t, n, OL_F_function));
    if (callee == OL_NONE)
        return OL_GM_NONE;
    ol_nid w = OL_NONE;
    if (ol_kind_of(t, callee) == OL_N_call) {
        w = callee;
    } else if (ol_kind_of(t, callee) == OL_N_identifier) {
        uint32_t defs[2];
        size_t nd = ol_reaching_defs(m, m->node_scope[callee], ol_node_sym(m, callee), callee, defs, 2);
        if (nd == 1 && m->defs.items[defs[0]].kind == OL_DEF_ASSIGN && m->defs.items[defs[0]].path_len == 0)
            w = m->defs.items[defs[0]].value;
    }
    ol_gradmode gm = wrapper_mode(m, w);
    if (gm != OL_GM_NONE && where)
        *where = ol_unparen(t, w);
    return gm;
}

/* The wrappers of function fi: calls `G()(fi)` of the file. Each turns
 * autograd on or off for fi's body where the wrapped callable runs (the
 * callable is run where nothing here sees a call of fi). Returns 1 when
 * every wrapper turns it off, 0 when one leaves it on, -1 when there is
 * none; the first in *where. */
static int wrappers_of(ol_model *m, uint32_t fi, ol_nid *where)
{
    if (!any_wrappers(m))
        return -1;
    int verdict = -1;
    for (size_t i = 0; i < m->calls.len && verdict != 0; i++) {
        ol_nid node = m->calls.items[i].node;
        ol_gradmode gm = wrapper_mode(m, node);
        if (gm == OL_GM_NONE)
            continue;
        ol_val v = ol_eval(m, ol_call_arg(m, node, 0, NULL));
        if (v.kind != OL_V_FUNCTION || v.ref != fi)
            continue;
        if (where && verdict < 0)
            *where = node;
        verdict = mode_disables(gm) ? 1 : 0;
        if (verdict == 0 && where)
            *where = node;
    }
    return verdict;
}

static bool grad_disabled_at(ol_model *m, ol_nid n, int depth);

/* call sites and parameters read for a branch's callers at most */
#define DISPATCH_SITES_MAX 32
#define DISPATCH_PARAMS_MAX 8

/* Does call site ci of function f skip node n of f: it gives a parameter a
 * literal for which the `if`/`elif` around n is not taken
 * (`all_batches("train")` never runs the `elif type_ == "valid":` branch)? */
static bool site_skips(ol_model *m, const ol_function *f, const ol_call *c, ol_nid n)
{
    const ol_tree *t = m->tree;
    bool shift = f->is_method && c->receiver != OL_NONE;
    for (size_t i = 0; i < f->params.len && i < DISPATCH_PARAMS_MAX; i++) {
        const ol_def *d = &m->defs.items[f->params.items[i]];
        if (d->starred || (shift && d->index == 0))
            continue;
        bool splat;
        ol_nid arg = ol_call_arg_for(m, c->node, shift, d, &splat);
        if (arg == OL_NONE && !splat)
            arg = d->value; /* the default */
        ol_nid branch;
        if (arg != OL_NONE && ol_is_literal(m, ol_unparen(t, arg)) &&
            ol_skipped_when(m, n, d->name, ol_unparen(t, arg), &branch))
            return true;
    }
    return false;
}

/* The slot of arm's state in m->branch_grads, or where it goes (a state
 * takes the low three bits). */
static size_t branch_slot(const ol_model *m, ol_nid arm)
{
    return ol_lower_bound_u64(m->branch_grads.items, m->branch_grads.len, (uint64_t)arm << 3);
}

static void branch_set(ol_model *m, ol_nid arm, uint64_t state)
{
    size_t k = branch_slot(m, arm);
    if (k < m->branch_grads.len && (m->branch_grads.items[k] >> 3) == (uint64_t)arm) {
        m->branch_grads.items[k] = (uint64_t)arm << 3 | state;
        return;
    }
    ol_vec_push(&m->branch_grads, 0);
    memmove(&m->branch_grads.items[k + 1], &m->branch_grads.items[k],
            (m->branch_grads.len - 1 - k) * sizeof(uint64_t));
    m->branch_grads.items[k] = (uint64_t)arm << 3 | state;
}

/* The grad mode at node n of function fi from the calls of fi that reach n:
 * where a branch of fi runs only for some literal of a parameter (a loop
 * over batches dispatching on `mode`), the calls that pass another literal
 * never run it. 1 disabled, 0 enabled, -1 when no call is left out (the
 * function's own answer holds) or none is left. Kept per arm of the
 * innermost `if` around n: every node of an arm has the same branches
 * around it, so the same answer. */
static int branch_grad(ol_model *m, uint32_t fi, ol_nid n, int depth)
{
    const ol_tree *t = m->tree;
    const ol_function *f = &m->functions.items[fi];
    if (f->callsites.len == 0 || f->callsites.len > DISPATCH_SITES_MAX || f->params.len == 0 || depth > 12)
        return -1;
    ol_nid arm = OL_NONE; /* the child of the innermost if/elif on the way up from n */
    for (ol_nid a = n, p = ol_parent(t, n); p != OL_NONE && a != f->node && arm == OL_NONE; a = p, p = ol_parent(t, p))
        if (ol_kind_of(t, p) == OL_N_if_statement || ol_kind_of(t, p) == OL_N_elif_clause)
            arm = a;
    if (arm == OL_NONE || decorator_mode(m, fi) != OL_GM_NONE || wrappers_of(m, fi, NULL) >= 0)
        return -1;
    size_t k = branch_slot(m, arm);
    if (k < m->branch_grads.len && (m->branch_grads.items[k] >> 3) == (uint64_t)arm) {
        uint64_t st = m->branch_grads.items[k] & 7;
        return st == 3 ? 0 : st == 4 ? 1 : -1; /* asking (a cycle): the function's answer */
    }
    branch_set(m, arm, 1);
    size_t kept = 0, skipped = 0;
    bool disabled = true;
    for (size_t i = 0; i < m->functions.items[fi].callsites.len; i++) {
        f = &m->functions.items[fi];
        const ol_call *c = &m->calls.items[f->callsites.items[i]];
        if (site_skips(m, f, c, n)) {
            skipped++;
            continue;
        }
        kept++;
        disabled = disabled && grad_disabled_at(m, c->node, depth + 1);
    }
    int answer = skipped == 0 || kept == 0 ? -1 : disabled ? 1 : 0;
    branch_set(m, arm, answer < 0 ? 2 : answer == 0 ? 3 : 4);
    return answer;
}

static bool grad_disabled_at(ol_model *m, ol_nid n, int depth)
{
    if (n == OL_NONE)
        return false;
    ol_gradmode wm = wrapped_mode(m, n, NULL);
    if (wm != OL_GM_NONE)
        return mode_disables(wm);
    int c = ctx_grad(m, n);
    if (c >= 0)
        return c == 1;
    int st = statement_grad(m, n);
    if (st >= 0)
        return st == 1;
    uint32_t fi = ol_function_of(m, n);
    if (fi != OL_NO_INDEX) {
        int b = ol_function_hook(m, fi) == OL_HOOK_NONE ? branch_grad(m, fi, n, depth) : -1;
        return b >= 0 ? b == 1 : function_grad_disabled(m, fi, depth);
    }
    return m->grad_globally_disabled;
}

/* Does class ci derive from class base (through classes of the file)? */
static bool class_derives(ol_model *m, uint32_t ci, uint32_t base, int depth)
{
    if (ci >= m->classes.len || depth > 16)
        return false;
    for (size_t i = 0; i < m->classes.items[ci].bases.len; i++) {
        ol_val v = ol_eval(m, m->classes.items[ci].bases.items[i]);
        if (v.kind == OL_V_CLASS && v.ref != ci && (v.ref == base || class_derives(m, v.ref, base, depth + 1)))
            return true;
    }
    return false;
}

/* A method never called here that overrides a method of a base class of
 * this file runs where the base class calls it through self (a base's
 * `@torch.no_grad() def predict(self, x): return self._forward(x)` runs the
 * subclass's _forward): 1 when every such call has autograd off, 0 when
 * one has it on, -1 when there is none. */
static int overridden_grad_at(ol_model *m, uint32_t fi, int depth, ol_nid *where);

static int overridden_grad(ol_model *m, uint32_t fi, int depth)
{
    return overridden_grad_at(m, fi, depth, NULL);
}

/* *where: the base's call that decides (one with autograd on when the
 * answer is 0, else the first). */
static int overridden_grad_at(ol_model *m, uint32_t fi, int depth, ol_nid *where)
{
    const ol_function *f = &m->functions.items[fi];
    if (f->cls == OL_NO_INDEX || !f->name)
        return -1;
    const ol_class *cls = &m->classes.items[f->cls];
    int verdict = -1;
    for (size_t i = 0; i < cls->bases.len && verdict != 0; i++) {
        ol_val v = ol_eval(m, cls->bases.items[i]);
        if (v.kind != OL_V_CLASS || v.ref == f->cls)
            continue;
        uint32_t bf = ol_eval__find_method(m, v.ref, f->name, 0);
        if (bf == OL_NO_INDEX || bf == fi)
            continue;
        const ol_function *b = &m->functions.items[bf];
        for (size_t k = 0; k < b->callsites.len; k++) {
            const ol_call *c = &m->calls.items[b->callsites.items[k]];
            ol_nid recv = ol_unparen(m->tree, c->receiver);
            uint32_t len;
            const char *rt = recv != OL_NONE && ol_kind_of(m->tree, recv) == OL_N_identifier ? ol_text(m->tree, recv, &len)
                                                                                            : NULL;
            if (!rt || len != 4 || memcmp(rt, "self", 4) != 0)
                continue;
            if (where && (verdict < 0 || !grad_disabled_at(m, c->node, depth + 1)))
                *where = c->node;
            if (!grad_disabled_at(m, c->node, depth + 1))
                return 0;
            verdict = 1;
        }
    }
    if (verdict != 0) {
        /* `self._valid_epoch()` in a base that leaves the method to its
         * subclasses (the call runs no method of the file) */
        if (!m->unbound_self_calls_built) {
            m->unbound_self_calls_built = true;
            for (size_t i = 0; i < m->calls.len; i++) {
                const ol_call *c = &m->calls.items[i];
                ol_nid recv = ol_unparen(m->tree, c->receiver);
                if (!c->name || recv == OL_NONE || ol_kind_of(m->tree, recv) != OL_N_identifier ||
                    !ol_text_is(m->tree, recv, "self") || ol_callee_function(m, c->node) != OL_NO_INDEX)
                    continue;
                ol_vec_push(&m->unbound_self_calls, (uint64_t)c->name << 32 | (uint64_t)i);
            }
            ol_sort(m->unbound_self_calls.items, m->unbound_self_calls.len, sizeof(uint64_t), ol_cmp_u64);
        }
        const uint64_t *v = m->unbound_self_calls.items;
        size_t lo = 0, hi = m->unbound_self_calls.len, key = (uint64_t)f->name << 32;
        while (lo < hi) {
            size_t mid = lo + (hi - lo) / 2;
            if (v[mid] < key)
                lo = mid + 1;
            else
                hi = mid;
        }
        for (; lo < m->unbound_self_calls.len && (v[lo] >> 32) == f->name; lo++) {
            const ol_call *c = &m->calls.items[(uint32_t)v[lo]];
            uint32_t cf = ol_function_of(m, c->node);
            /* called from a method of one of its class's bases */
            if (cf == OL_NO_INDEX || m->functions.items[cf].cls == OL_NO_INDEX || m->functions.items[cf].cls == f->cls ||
                !class_derives(m, f->cls, m->functions.items[cf].cls, 0))
                continue;
            if (where && (verdict < 0 || !grad_disabled_at(m, c->node, depth + 1)))
                *where = c->node;
            if (!grad_disabled_at(m, c->node, depth + 1))
                return 0;
            verdict = 1;
        }
    }
    return verdict;
}

static bool function_grad_disabled(ol_model *m, uint32_t fi, int depth)
{
    ol_function *f = &m->functions.items[fi];
    if (f->grad_state >= 2)
        return f->grad_state == 3;
    if (f->grad_state == 1 || depth > 12)
        return false;
    f->grad_state = 1;
    bool disabled = false;
    ol_gradmode dm = decorator_mode(m, fi);
    if (dm != OL_GM_NONE) {
        disabled = mode_disables(dm);
    } else if (ol_function_hook(m, fi) == OL_HOOK_EVAL_STEP || ol_function_hook(m, fi) == OL_HOOK_EVAL_HOOK) {
        disabled = true;
    } else {
        f = &m->functions.items[fi];
        int wrapped = wrappers_of(m, fi, NULL);
        if (f->callsites.len > 0) {
            /* called only where grad is off: its body runs without grad */
            disabled = wrapped != 0;
            for (size_t i = 0; i < m->functions.items[fi].callsites.len && disabled; i++) {
                const ol_call *c = &m->calls.items[m->functions.items[fi].callsites.items[i]];
                if (!grad_disabled_at(m, c->node, depth + 1))
                    disabled = false;
            }
        } else if (wrapped >= 0) {
            /* `evaluate = torch.no_grad()(evaluate)`: it runs as wrapped */
            disabled = wrapped == 1;
        } else if (overridden_grad(m, fi, depth) >= 0) {
            disabled = overridden_grad(m, fi, depth) == 1;
        } else {
            /* never called here: it follows the grad mode where it is defined */
            int c = ctx_grad(m, f->node);
            if (c >= 0)
                disabled = c == 1;
            else if (m->scopes.items[f->outer_scope].function != OL_NO_INDEX)
                disabled = function_grad_disabled(m, m->scopes.items[f->outer_scope].function, depth + 1);
            else
                disabled = m->grad_globally_disabled;
        }
    }
    m->functions.items[fi].grad_state = disabled ? 3 : 2;
    return disabled;
}

bool ol_grad_disabled(ol_model *m, ol_nid n)
{
    return grad_disabled_at(m, n, 0);
}

uint32_t ol_grad_root(ol_model *m, ol_nid n)
{
    if (n == OL_NONE || wrapped_mode(m, n, NULL) != OL_GM_NONE || ctx_grad(m, n) >= 0 || statement_grad(m, n) >= 0)
        return OL_NO_INDEX;
    uint32_t fi = ol_function_of(m, n);
    if (fi == OL_NO_INDEX || decorator_mode(m, fi) != OL_GM_NONE)
        return OL_NO_INDEX;
    ol_hook hook = ol_function_hook(m, fi);
    if (hook == OL_HOOK_EVAL_STEP || hook == OL_HOOK_EVAL_HOOK)
        return OL_NO_INDEX;
    const ol_function *f = &m->functions.items[fi];
    /* never called here, defined inside a function or under a context, or
     * wrapped in a grad mode: that decides */
    if (f->callsites.len == 0 && (ctx_grad(m, f->node) >= 0 || m->scopes.items[f->outer_scope].function != OL_NO_INDEX ||
                                  wrappers_of(m, fi, NULL) >= 0))
        return OL_NO_INDEX;
    return fi;
}

/* What decides the grad mode in function fi (its body, not one node of it). */
static void explain_function(ol_model *m, uint32_t fi, ol_grad_local *out, int depth)
{
    const ol_function *f = &m->functions.items[fi];
    out->function = fi;
    ol_nid where = OL_NONE;
    if (decorator_mode_at(m, fi, &where) != OL_GM_NONE) {
        out->cause = OL_GC_DECORATOR;
        out->node = where;
        return;
    }
    ol_hook hook = ol_function_hook(m, fi);
    if (hook == OL_HOOK_EVAL_STEP || hook == OL_HOOK_EVAL_HOOK) {
        out->cause = OL_GC_HOOK;
        out->node = ol_field(m->tree, f->node, OL_F_name);
        return;
    }
    if (f->callsites.len == 0 && wrappers_of(m, fi, &where) >= 0) {
        out->cause = OL_GC_CONTEXT;
        out->node = where;
        return;
    }
    if (f->callsites.len > 0) {
        /* a call with autograd on when the body runs with it, else the first */
        out->cause = OL_GC_CALLERS;
        out->node = m->calls.items[f->callsites.items[0]].node;
        for (size_t i = 0; i < f->callsites.len; i++) {
            ol_nid at = m->calls.items[f->callsites.items[i]].node;
            if (!grad_disabled_at(m, at, depth + 1)) {
                out->node = at;
                break;
            }
        }
        return;
    }
    if (overridden_grad_at(m, fi, depth, &where) >= 0) {
        out->cause = OL_GC_OVERRIDE;
        out->node = where;
        return;
    }
    for (uint32_t c = m->node_ctx[f->node]; c != OL_NO_INDEX; c = m->contexts.items[c].parent) {
        const ol_ctx *ctx = &m->contexts.items[c];
        if (ctx->kind == OL_CTX_GRAD && (ctx->gradmode == OL_GM_ENABLE || mode_disables(ctx->gradmode))) {
            out->cause = OL_GC_CONTEXT;
            out->node = ctx->item;
            return;
        }
    }
    uint32_t outer = m->scopes.items[f->outer_scope].function;
    if (outer != OL_NO_INDEX && depth < 12) {
        explain_function(m, outer, out, depth + 1);
        if (out->cause == OL_GC_NONE_CALLED)
            out->function = fi;
        return;
    }
    out->cause = m->grad_globally_disabled ? OL_GC_GLOBAL : OL_GC_NONE_CALLED;
    out->node = OL_NONE;
}

void ol_grad_explain(ol_model *m, ol_nid n, ol_grad_local *out)
{
    out->off = ol_grad_disabled(m, n);
    out->cause = OL_GC_MODULE;
    out->node = OL_NONE;
    out->function = OL_NO_INDEX;
    if (n == OL_NONE)
        return;
    ol_nid where = OL_NONE;
    if (wrapped_mode(m, n, &where) != OL_GM_NONE) {
        out->cause = OL_GC_CONTEXT;
        out->node = where;
        return;
    }
    for (uint32_t c = m->node_ctx[n]; c != OL_NO_INDEX; c = m->contexts.items[c].parent) {
        const ol_ctx *ctx = &m->contexts.items[c];
        if (ctx->kind == OL_CTX_GRAD && (ctx->gradmode == OL_GM_ENABLE || mode_disables(ctx->gradmode))) {
            out->cause = OL_GC_CONTEXT;
            out->node = ctx->item;
            return;
        }
    }
    if (statement_grad_at(m, n, &where) >= 0) {
        out->cause = OL_GC_STATEMENT;
        out->node = where;
        return;
    }
    uint32_t fi = ol_function_of(m, n);
    if (fi != OL_NO_INDEX) {
        explain_function(m, fi, out, 0);
        return;
    }
    out->cause = m->grad_globally_disabled ? OL_GC_GLOBAL : OL_GC_MODULE;
}

typedef OL_VEC(uint32_t) u32_list;

static bool u32_has(const u32_list *v, uint32_t x)
{
    for (size_t i = 0; i < v->len; i++)
        if (v->items[i] == x)
            return true;
    return false;
}

static bool grad_tops(ol_model *m, uint32_t fi, int depth, u32_list *seen, u32_list *tops)
{
    if (u32_has(seen, fi))
        return true; /* a cycle: the other paths into it decide */
    if (depth > 12)
        return false;
    ol_vec_push(seen, fi);
    ol_gradmode dm = decorator_mode(m, fi);
    if (dm != OL_GM_NONE)
        return mode_disables(dm);
    ol_hook hook = ol_function_hook(m, fi);
    if (hook == OL_HOOK_EVAL_STEP || hook == OL_HOOK_EVAL_HOOK)
        return true;
    const ol_function *f = &m->functions.items[fi];
    if (f->callsites.len == 0) {
        int wrapped = wrappers_of(m, fi, NULL);
        if (wrapped >= 0)
            return wrapped == 1;
        /* defined under a context: that decides; inside a function (a
         * lambda, a closure): it runs in the grad mode of that function */
        int c = ctx_grad(m, f->node);
        if (c >= 0)
            return c == 1;
        uint32_t outer = m->scopes.items[f->outer_scope].function;
        if (outer != OL_NO_INDEX)
            return grad_tops(m, outer, depth + 1, seen, tops);
        ol_vec_push(tops, fi);
        return true;
    }
    for (size_t i = 0; i < m->functions.items[fi].callsites.len; i++) {
        ol_nid at = m->calls.items[m->functions.items[fi].callsites.items[i]].node;
        int c = ctx_grad(m, at);
        if (c < 0)
            c = statement_grad(m, at);
        if (c == 1)
            continue;
        if (c == 0)
            return false;
        uint32_t caller = ol_function_of(m, at);
        if (caller == OL_NO_INDEX) {
            if (m->grad_globally_disabled)
                continue;
            return false;
        }
        if (!grad_tops(m, caller, depth + 1, seen, tops))
            return false;
    }
    return true;
}

bool ol_grad_tops(ol_model *m, uint32_t fi, uint32_t **tops, size_t *n)
{
    *tops = NULL;
    *n = 0;
    if (fi >= m->functions.len)
        return false;
    u32_list seen = {0}, found = {0};
    bool ok = grad_tops(m, fi, 0, &seen, &found) && found.len > 0;
    ol_vec_free(&seen);
    if (!ok) {
        ol_vec_free(&found);
        return false;
    }
    *tops = found.items;
    *n = found.len;
    return true;
}

uint32_t ol_autocast_at(const ol_model *m, ol_nid n)
{
    for (uint32_t c = m->node_ctx[n]; c != OL_NO_INDEX; c = m->contexts.items[c].parent)
        if (m->contexts.items[c].kind == OL_CTX_AUTOCAST)
            return c;
    return OL_NO_INDEX;
}

uint32_t ol_except_at(const ol_model *m, ol_nid n)
{
    for (uint32_t c = m->node_ctx[n]; c != OL_NO_INDEX; c = m->contexts.items[c].parent)
        if (m->contexts.items[c].kind == OL_CTX_EXCEPT)
            return c;
    return OL_NO_INDEX;
}
