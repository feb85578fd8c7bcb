/*
 * OOM201 eval-without-no-grad: a model's forward pass in evaluation code
 * that runs with autograd on. Evaluation code is, in order of evidence:
 *   - a function named for evaluation (evaluate, validate, test, predict,
 *     inference, generate, ...; not pytest tests, not train-and-evaluate);
 *   - code after `model.eval()` in a function, until `model.train()`;
 *   - a loop over a validation or test loader (`val_loader`, `test_dl`).
 * and in every case only when the code computes no gradients itself (no
 * backward, no torch.autograd.grad: saliency maps and adversarial
 * evaluation need them). Guards are honoured wherever they are:
 * no_grad / inference_mode / set_grad_enabled(False or a condition) blocks
 * and decorators, callers that only call under them, Lightning's
 * validation/test/predict steps.
 *
 * Fix (unsafe: gradients are no longer available there): decorate the
 * evaluation function with `@torch.no_grad()`, or wrap the validation loop in
 * `with torch.no_grad():`.
 */
#include <stdlib.h>
#include <string.h>

#include "rule.h"

static const char *const EVAL_WORDS[] = {"eval", "evaluate", "evaluation", "evaluating", "validate",
                                         "validation", "validating", "val", "valid", "test", "testing",
                                         "predict", "prediction", "predictions", "infer", "inference",
                                         "generate", "generation", "translate", "translation", "beam", NULL};
static const char *const TRAIN_WORDS[] = {"train", "training", "fit", "backward", "optimize", "update",
                                          "finetune", "learn", NULL};
static const char *const EVAL_LOADER_WORDS[] = {"val", "valid", "validation", "test", "testing", "eval",
                                                "evaluation", "dev", "holdout", "query", "gallery", NULL};

static bool sym_looks_like(ol_model *m, ol_sym s, const char *const *words)
{
    return ol_name_looks_like(ol_sym_str(m, s), ol_interned_len(&m->strings, s), words);
}

/* Tests measure nothing about memory: pytest functions and fixtures,
 * unittest cases, wherever they live (the door knows them). */
static bool is_pytest_function(ol_model *m, uint32_t fi)
{
    ol_nid body = ol_field(m->tree, m->functions.items[fi].node, OL_F_body);
    return body != OL_NONE && ol_code_kind_at(m, body, NULL) == OL_CODE_TEST;
}

/* Does region compute gradients: backward, an optimizer step, autograd.grad,
 * itself or through the functions it calls (`self.cac_grad(...)`)? */
static bool computes_gradients(ol_model *m, ol_nid region)
{
    return ol_gradient_call_in(m, region, OL_NONE, OL_NONE, NULL) != OL_NONE;
}

static ol_nid function_body(const ol_model *m, uint32_t fi)
{
    return ol_field(m->tree, m->functions.items[fi].node, OL_F_body);
}

/* An evaluation function by name, that computes no gradients. */
struct mode_cache;
static bool feeds_backward(ol_model *m, struct mode_cache *mc, ol_nid n, uint32_t fn);

/* Is method fi of a module called in this file other than as part of a
 * module's forward pass? A forward() that delegates to it (`forward` ->
 * `_predict`, or on through methods called only so: `-> self.q_net._predict`)
 * runs it wherever the module is called, in training too: that is no
 * evaluation seen here (Stable-Baselines3's policies, whose base class in
 * another file runs `_predict` under no_grad). Another method of the module
 * calling it counts, as does any code outside a module. */
static bool called_here(ol_model *m, uint32_t fi, int depth)
{
    const ol_function *f = &m->functions.items[fi];
    if (depth > 4)
        return true;
    for (size_t k = 0; k < f->callsites.len; k++) {
        uint32_t caller = ol_function_of(m, m->calls.items[f->callsites.items[k]].node);
        if (caller == OL_NO_INDEX)
            return true; /* module level: seen */
        if (caller == fi)
            continue;
        const ol_function *c = &m->functions.items[caller];
        if (c->cls == OL_NO_INDEX || !ol_class_is_module_in_run(m, c->cls))
            return true;
        if (c->name == m->names.forward || (c->name && strcmp(ol_sym_str(m, c->name), "__call__") == 0))
            continue;
        if (c->callsites.len == 0 || called_here(m, caller, depth + 1))
            return true;
    }
    return false;
}

static ol_nid after_eval_call(ol_model *m, struct mode_cache *mc, ol_nid n, uint32_t fn);
static uint32_t eval_loop(ol_model *m, struct mode_cache *mc, ol_nid n);
static bool is_eval_function(ol_model *m, struct mode_cache *mc, uint32_t fi);
static bool hands_on(ol_model *m, struct mode_cache *mc, uint32_t fi);

/* Does a forward of fi's own code hand its output on, through fi's return
 * value (`return torch.sigmoid(raw)`, `return State(self.dynamics(mean))`)?
 * Then fi computes a step of its callers' code, and they say what it is. */
static bool hands_on_uncached(ol_model *m, uint32_t fi)
{
    const ol_function *f = &m->functions.items[fi];
    size_t first, end = ol_calls_in(m, f->node, &first);
    for (size_t i = first; i < end; i++) {
        if (ol_function_of(m, m->calls.items[i].node) != fi || !ol_is_forward_call(m, (uint32_t)i))
            continue;
        for (size_t k = 0; k < f->returns.len && k < 16; k++)
            if (ol_value_reaches(m, m->calls.items[i].node, f->returns.items[k]))
                return true;
    }
    return false;
}

static bool looks_like_eval_name(const char *name)
{
    const char *last = strrchr(name, '.');
    last = last ? last + 1 : name;
    size_t len = strlen(last);
    return ol_name_looks_like(last, len, EVAL_WORDS) && !ol_name_looks_like(last, len, TRAIN_WORDS);
}

/* What fi's callers make of a function that hands its output on: 1 when
 * one is evaluation code (it uses the result up: compares, counts, shows
 * it; or hands it on from evaluation code), 0 when every caller seen hands
 * it on from other code (a renderer a forward runs, a filter's likelihood),
 * -1 when no caller is seen (here or in the run's call records). */
static int callers_evaluate(ol_model *m, struct mode_cache *mc, uint32_t fi, int depth, ol_reasons *why)
{
    const ol_function *f = &m->functions.items[fi];
    bool seen = false;
    for (size_t k = 0; k < f->callsites.len; k++) {
        uint32_t ci = f->callsites.items[k];
        ol_nid site = m->calls.items[ci].node;
        uint32_t caller = ol_function_of(m, site);
        if (caller == fi)
            continue;
        seen = true;
        unsigned use = ol_call_result_use(m, ci);
        if (use & OL_USE_BACKWARD)
            continue;
        if (!(use & OL_USE_RETURNED) || caller == OL_NO_INDEX) {
            ol_because(why, m, site, "what `%s()` returns is used up here: nothing backpropagates through it",
                       ol_sym_str(m, f->name));
            return 1;
        }
        ol_nid recv = m->calls.items[ci].receiver;
        if (is_eval_function(m, mc, caller) || after_eval_call(m, mc, site, caller) != OL_NONE ||
            eval_loop(m, mc, site) != OL_NO_INDEX ||
            (recv != OL_NONE && ol_module_in_eval_mode(m, recv, site, NULL) != OL_NONE)) {
            ol_because(why, m, site, "evaluation code hands on what `%s()` returns here", ol_sym_str(m, f->name));
            return 1;
        }
        /* handed on again: the callers of that caller say (a lambda, a sampler's loop) */
        if (depth < 6 && callers_evaluate(m, mc, caller, depth + 1, why) == 1)
            return 1;
    }
    /* a lambda or closure nothing here calls by name runs in the function
     * that makes it (`step = lambda x, t: x - self.predict(x, t)`) */
    uint32_t outer = m->scopes.items[f->outer_scope].function;
    if (!seen && outer != OL_NO_INDEX && outer != fi) {
        if (is_eval_function(m, mc, outer))
            return 1;
        return depth < 6 ? callers_evaluate(m, mc, outer, depth + 1, why) : -1;
    }
    ol_caller_use uses[16];
    size_t n = ol_run_caller_uses(m, fi, uses, 16);
    int verdict = seen || n ? 0 : -1;
    for (size_t k = 0; k < n && verdict != 1; k++) {
        if ((uses[k].use & OL_USE_BACKWARD) || uses[k].test)
            continue;
        if (!(uses[k].use & OL_USE_RETURNED) || !uses[k].caller || looks_like_eval_name(uses[k].caller)) {
            verdict = 1;
            ol_because_caller(why, m, &uses[k], "what `%s()` returns is used up here%s", ol_sym_str(m, f->name),
                              uses[k].use & OL_USE_RETURNED ? ", by evaluation code" : "");
        }
    }
    return verdict;
}

static bool eval_function(ol_model *m, struct mode_cache *mc, uint32_t fi)
{
    const ol_function *f = &m->functions.items[fi];
    if (f->is_lambda || !f->name)
        return false;
    if (!sym_looks_like(m, f->name, EVAL_WORDS) || sym_looks_like(m, f->name, TRAIN_WORDS))
        return false;
    if (is_pytest_function(m, fi))
        return false;
    /* a model's own predict()/generate() is called from elsewhere, usually
     * another file that may well guard it: only a caller seen here, running
     * it with grad on, makes it a finding */
    if (f->cls != OL_NO_INDEX && ol_class_is_module_in_run(m, f->cls) && !called_here(m, fi, 0))
        return false;
    ol_nid body = function_body(m, fi);
    if (body == OL_NONE || computes_gradients(m, body))
        return false;
    /* its result feeds a backward() where it is called (PPO's
     * `policy.evaluate(states, actions)` giving the log-probabilities of the
     * loss): its forwards are part of training. Called beside training
     * (`train(); evaluate(val_loader)`) it is still evaluation. */
    for (size_t k = 0; k < f->callsites.len; k++) {
        ol_nid site = m->calls.items[f->callsites.items[k]].node;
        uint32_t caller = ol_function_of(m, site);
        if (caller != fi && feeds_backward(m, mc, site, caller))
            return false;
        /* shared with a training step (Lightning's training_step returns
         * the loss it computes from the result): part of training, even if
         * validation_step calls it too */
        if (caller != OL_NO_INDEX && caller != fi && ol_function_hook(m, caller) == OL_HOOK_TRAIN_STEP)
            return false;
    }
    /* its role comes from its callers first: code that trains through it
     * is training code, whatever its name (a NeRF renderer's `inference`,
     * a filter's `predict` in a likelihood that is backpropagated) */
    if (ol_code_kind_at(m, body, NULL) == OL_CODE_TRAINING)
        return false;
    if (hands_on(m, mc, fi)) {
        int verdict = callers_evaluate(m, mc, fi, 0, NULL);
        if (verdict >= 0)
            return verdict == 1;
    }
    return true;
}

/* The expression naming the model a forward call runs: `net` for `net(x)`
 * and `net.forward(x)`. */
static ol_nid forward_model(const ol_model *m, const ol_call *c)
{
    if (c->name == m->names.forward && c->receiver != OL_NONE)
        return ol_unparen(m->tree, c->receiver);
    return ol_unparen(m->tree, c->callee);
}

/* A `.eval()` call on a module in the chain e is built from, or in the
 * binding of the name e (seen from at); OL_NONE when there is none. */
static ol_nid eval_in_value(ol_model *m, ol_nid e, ol_nid at, int depth)
{
    const ol_tree *t = m->tree;
    e = ol_unparen(t, e);
    if (e == OL_NONE || depth > 2)
        return OL_NONE;
    if (ol_kind_of(t, e) == OL_N_identifier) {
        uint32_t defs[4];
        size_t n = ol_reaching_defs(m, m->node_scope[e], ol_node_sym(m, e), at, defs, 4);
        for (size_t i = 0; i < n; i++) {
            const ol_def *d = &m->defs.items[defs[i]];
            if (d->kind != OL_DEF_ASSIGN || d->path_len != 0)
                continue;
            ol_nid found = eval_in_value(m, d->value, at, depth + 1);
            if (found != OL_NONE)
                return found;
        }
        return OL_NONE;
    }
    for (int k = 0; k < 8; k++) {
        uint32_t ci = ol_call_at(m, e);
        if (ci == OL_NO_INDEX || m->calls.items[ci].receiver == OL_NONE)
            return OL_NONE;
        const ol_call *c = &m->calls.items[ci];
        if (c->name == m->names.eval && ol_call_arg(m, c->node, 0, NULL) == OL_NONE &&
            ol_eval(m, c->receiver).kind == OL_V_MODULE)
            return c->node;
        e = ol_unparen(t, c->receiver);
    }
    return OL_NONE;
}

/* The eval()/train() calls of each function body (and the module), found
 * once per file: asking, for every forward call, which of the calls before
 * it switched the model's mode would scan the body again each time. */
typedef struct mode_calls {
    bool built;
    OL_VEC(uint32_t) modes;  /* X.eval() / X.train() with no argument, X a module */
    OL_VEC(uint32_t) trains; /* X.train(...) with any argument, X a module */
    OL_VEC(uint32_t) switches; /* X.eval(...) / X.train(...), X anything */
} mode_calls;

/* What the evidence beyond names and eval() asks about a function again
 * and again, for every forward call in it, gathered once per function:
 * the backward operands of its body and the names they mention. */
typedef struct backward_operands {
    bool built;
    OL_VEC(ol_nid) operands; /* sorted */
    OL_VEC(ol_sym) syms;     /* identifiers inside them, sorted, unique */
} backward_operands;

/* (function, name, position) triples, sorted: where a name is used in a
 * function, found by binary search. */
typedef struct sym_site {
    uint32_t fn;
    ol_sym sym;
    uint32_t pos;
} sym_site;

typedef OL_VEC(sym_site) sym_site_vec;

typedef struct mode_cache {
    mode_calls *per_fn;      /* index fn + 1; 0 is the module */
    size_t count;
    /* the last after_eval_call verdict on events, reused while eval() and
     * the train() that ends it stay the same (consecutive forward calls) */
    ol_nid last_eval, last_stop;
    bool last_grads;
    /* per function (index fn + 1): 0 not known, 1 no, 2 yes */
    uint8_t *eval_fn;
    uint8_t *hands; /* hands_on, the same way */
    /* per loop: 0 not known, 1 computes no gradients, 2 computes some */
    uint8_t *loop_grads;
    backward_operands *operands; /* index fn + 1 */
    /* identifiers by (function, name, node) */
    bool ids_built;
    sym_site_vec ids;
    /* identifiers on the right of assignments, by (function of the
     * assignment, name, index in m->assigns); (node, index) pairs sorted by
     * node; incomplete past a size proportional to the file (chains of
     * assignments repeat their right sides) */
    bool assign_uses_built, assign_uses_incomplete;
    sym_site_vec assign_uses;
    OL_VEC(uint64_t) assign_at;
    /* how many of the calls before each call index are image calls */
    uint32_t *images_before;
    /* per function: 0 not known, 1 no, 2 shows or saves what it is given and runs no model */
    uint8_t *shows;
    /* per function: 0 not known, 1 no, 2 takes tensors to the host (`.numpy()`, `.detach()`, `.item()`) */
    uint8_t *to_host;
    /* per function: 0 not known, 1 no, 2 the run calls it on a model kept in evaluation mode */
    uint8_t *held_eval;
    /* Work left for the scans that have no index (nodes read): set in
     * proportion to the file. Heuristics that run out of it give up on
     * the side of no finding, so a huge degenerate file can only lose
     * findings of the weaker kinds (sample images, held-out data, shape
     * checks), never gain one. */
    uint64_t budget;
} mode_cache;

static bool spend(mode_cache *mc, uint64_t work)
{
    if (mc->budget < work) {
        mc->budget = 0;
        return false;
    }
    mc->budget -= work;
    return true;
}

static void mode_cache_free(mode_cache *mc)
{
    for (size_t i = 0; i < mc->count; i++) {
        ol_vec_free(&mc->per_fn[i].modes);
        ol_vec_free(&mc->per_fn[i].trains);
        ol_vec_free(&mc->per_fn[i].switches);
        if (mc->operands) {
            ol_vec_free(&mc->operands[i].operands);
            ol_vec_free(&mc->operands[i].syms);
        }
    }
    free(mc->per_fn);
    free(mc->eval_fn);
    free(mc->hands);
    free(mc->loop_grads);
    free(mc->operands);
    ol_vec_free(&mc->ids);
    ol_vec_free(&mc->assign_uses);
    ol_vec_free(&mc->assign_at);
    free(mc->images_before);
    free(mc->shows);
    free(mc->to_host);
    free(mc->held_eval);
    memset(mc, 0, sizeof(*mc));
}

static void mode_cache_init(mode_cache *mc, const ol_model *m)
{
    memset(mc, 0, sizeof(*mc));
    mc->count = m->functions.len + 1;
    mc->per_fn = ol_xcalloc(mc->count, sizeof(mode_calls));
    mc->operands = ol_xcalloc(mc->count, sizeof(backward_operands));
    mc->eval_fn = ol_xcalloc(mc->count, 1);
    mc->hands = ol_xcalloc(mc->count, 1);
    mc->loop_grads = ol_xcalloc(m->loops.len + 1, 1);
    mc->shows = ol_xcalloc(m->functions.len + 1, 1);
    mc->to_host = ol_xcalloc(m->functions.len + 1, 1);
    mc->held_eval = ol_xcalloc(m->functions.len + 1, 1);
    mc->last_eval = OL_NONE;
    mc->budget = 64 * (uint64_t)m->tree->nodes.len + 1000000;
}

static const mode_calls *mode_calls_of(ol_model *m, mode_cache *mc, uint32_t fn, ol_nid body)
{
    mode_calls *mcs = &mc->per_fn[fn == OL_NO_INDEX ? 0 : fn + 1];
    if (mcs->built)
        return mcs;
    mcs->built = true;
    size_t first, end = ol_calls_in(m, body, &first), count;
    const uint32_t *named = ol_mode_calls(m, &count);
    for (size_t k = ol_lower_bound_u32(named, count, (uint32_t)first); k < count && named[k] < end; k++) {
        uint32_t i = named[k];
        const ol_call *c = &m->calls.items[i];
        if (ol_function_of(m, c->node) != fn)
            continue;
        if (c->receiver != OL_NONE)
            ol_vec_push(&mcs->switches, (uint32_t)i);
        if (ol_eval(m, c->receiver).kind != OL_V_MODULE)
            continue;
        if (c->name == m->names.train)
            ol_vec_push(&mcs->trains, (uint32_t)i);
        if (c->receiver != OL_NONE && ol_call_arg(m, c->node, 0, NULL) == OL_NONE)
            ol_vec_push(&mcs->modes, (uint32_t)i);
    }
    return mcs;
}

/* How many of the calls (indexes into m->calls, ascending) have nodes before n. */
static size_t calls_before(const ol_model *m, const uint32_t *calls, size_t count, ol_nid n)
{
    size_t lo = 0, hi = count;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (m->calls.items[calls[mid]].node < n)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* `X.eval()` earlier in the same function (or at module level) for the
 * model the call at n runs, with no `X.train()` between, and no gradients
 * computed from it to the next train() or the end. Returns the eval() call
 * node, or OL_NONE. */
static ol_nid after_eval_call(ol_model *m, mode_cache *mc, ol_nid n, uint32_t fn)
{
    const ol_tree *t = m->tree;
    /* a function's body, or the module itself (scripts and notebooks
     * evaluate at top level) */
    ol_nid body = fn != OL_NO_INDEX ? function_body(m, fn) : 0;
    if (body == OL_NONE)
        return OL_NONE;
    const mode_calls *mcs = mode_calls_of(m, mc, fn, body);
    uint32_t self_call = ol_call_at(m, n);
    ol_nid model = self_call != OL_NO_INDEX ? forward_model(m, &m->calls.items[self_call]) : OL_NONE;
    /* a helper that runs the model over a loader (`extract(model,
     * query_loader)`, `compute_accuracy(model, train_loader)`) is judged by
     * the model it is handed; one handed a single sample may well compute
     * gradients in a library (a saliency map: GradCAM) */
    bool over_loader = false;
    for (int i = 0; i < 8 && !over_loader && self_call != OL_NO_INDEX; i++) {
        ol_nid a = ol_call_arg(m, n, i, NULL);
        if (a == OL_NONE)
            continue;
        a = ol_unparen(t, a);
        uint32_t len;
        const char *text = ol_kind_of(t, a) == OL_N_identifier ? ol_text(t, a, &len) : NULL;
        over_loader = ol_eval(m, a).kind == OL_V_LOADER ||
                      (text && len > 6 && (memcmp(text + len - 6, "loader", 6) == 0 || memcmp(text + len - 6, "Loader", 6) == 0));
    }
    if (self_call != OL_NO_INDEX && over_loader && !ol_is_forward_call(m, self_call)) {
        for (size_t k = calls_before(m, mcs->modes.items, mcs->modes.len, n); k-- > 0;) {
            ol_nid recv = ol_unparen(t, m->calls.items[mcs->modes.items[k]].receiver);
            bool passed = false;
            for (int i = 0; i < 8 && !passed; i++) {
                ol_nid a = ol_call_arg(m, n, i, NULL);
                passed = a != OL_NONE && ol_same_text(t, ol_unparen(t, a), recv);
            }
            if (passed) {
                model = recv;
                break;
            }
        }
    }
    /* the last mode switch of this model before n decides */
    ol_nid eval_call = OL_NONE;
    for (size_t k = calls_before(m, mcs->modes.items, mcs->modes.len, n); k-- > 0;) {
        const ol_call *c = &m->calls.items[mcs->modes.items[k]];
        if (model != OL_NONE && !ol_same_text(t, ol_unparen(t, c->receiver), model))
            continue;
        eval_call = c->name == m->names.eval ? c->node : OL_NONE;
        break;
    }
    /* `net = model.eval()` then `net(x)`, and `model.eval()(x)` */
    if (eval_call == OL_NONE && model != OL_NONE)
        eval_call = eval_in_value(m, model, n, 0);
    /* a model its holder keeps in evaluation mode: `self.model.eval()` in
     * `__init__`, `self.model_ = model.eval().to(device)`, the forward (or
     * the model's own method, `self.model_.slide(...)`) in another method */
    if (eval_call == OL_NONE && self_call != OL_NO_INDEX && fn != OL_NO_INDEX) {
        ol_nid held = ol_is_forward_call(m, self_call) ? model : m->calls.items[self_call].receiver;
        if (held == OL_NONE || computes_gradients(m, body))
            return OL_NONE;
        return ol_module_in_eval_mode(m, held, n, NULL);
    }
    if (eval_call == OL_NONE)
        return OL_NONE;
    /* from eval() to the next train() (or the end), nothing computes gradients */
    ol_nid stop = OL_NONE;
    for (size_t k = calls_before(m, mcs->trains.items, mcs->trains.len, eval_call + 1); k < mcs->trains.len; k++) {
        const ol_call *c = &m->calls.items[mcs->trains.items[k]];
        if (model == OL_NONE || ol_same_text(t, ol_unparen(t, c->receiver), model)) {
            stop = c->node;
            break;
        }
    }
    if (mc->last_eval != eval_call || mc->last_stop != stop) {
        /* also through a method it calls: `self.cac_grad(loss)` */
        bool grads = ol_gradient_call_in(m, body, eval_call, stop, NULL) != OL_NONE;
        mc->last_eval = eval_call;
        mc->last_stop = stop;
        mc->last_grads = grads;
    }
    return mc->last_grads ? OL_NONE : eval_call;
}

/* The innermost for-loop around n over a validation/test iterable that
 * computes no gradients, or OL_NO_INDEX. */
static uint32_t eval_loop(ol_model *m, mode_cache *mc, ol_nid n)
{
    const ol_tree *t = m->tree;
    for (uint32_t l = m->node_loop[n]; l != OL_NO_INDEX; l = m->loops.items[l].parent) {
        const ol_loop *loop = &m->loops.items[l];
        if (loop->kind == OL_LOOP_WHILE || loop->iter == OL_NONE)
            continue;
        /* the name of what is iterated, through enumerate/tqdm/zip */
        ol_nid it = ol_unparen(t, loop->iter);
        for (int depth = 0; depth < 4 && ol_kind_of(t, it) == OL_N_call; depth++) {
            ol_nid callee = ol_field(t, it, OL_F_function);
            ol_nid arg = ol_call_arg(m, it, 0, NULL);
            /* self.val_dataloader(): the method name says it */
            if (arg == OL_NONE && ol_kind_of(t, callee) == OL_N_attribute) {
                it = ol_field(t, callee, OL_F_attribute);
                break;
            }
            it = ol_unparen(t, arg);
        }
        bool eval_named = false;
        if (ol_kind_of(t, it) == OL_N_subscript) {
            /* loaders['val'], dataloaders["test"] */
            const char *key;
            uint32_t len;
            if (ol_string_value(t, ol_field(t, it, OL_F_subscript), &key, &len))
                eval_named = ol_name_looks_like(key, len, EVAL_LOADER_WORDS);
        } else {
            ol_nid name = ol_kind_of(t, it) == OL_N_attribute ? ol_field(t, it, OL_F_attribute) : it;
            eval_named = name != OL_NONE && ol_kind_of(t, name) == OL_N_identifier &&
                         sym_looks_like(m, ol_node_sym(m, name), EVAL_LOADER_WORDS);
        }
        if (!eval_named)
            continue;
        /* once per loop: a long loop has many forward calls */
        if (!mc->loop_grads[l])
            mc->loop_grads[l] = computes_gradients(m, loop->node) ? 2 : 1;
        if (mc->loop_grads[l] == 2)
            return OL_NO_INDEX;
        return l;
    }
    return OL_NO_INDEX;
}

/* hands_on, asked once per function: the walk follows values through the
 * whole function, and a report asks again for each finding in it */
static bool hands_on(ol_model *m, struct mode_cache *mc, uint32_t fi)
{
    if (!mc->hands[fi + 1])
        mc->hands[fi + 1] = hands_on_uncached(m, fi) ? 2 : 1;
    return mc->hands[fi + 1] == 2;
}

static bool is_eval_function(ol_model *m, struct mode_cache *mc, uint32_t fi)
{
    if (!mc->eval_fn[fi + 1]) {
        mc->eval_fn[fi + 1] = 1; /* a cycle of callers: not evaluation */
        mc->eval_fn[fi + 1] = eval_function(m, mc, fi) ? 2 : 1;
    }
    return mc->eval_fn[fi + 1] == 2;
}

/* ---- fixes ---------------------------------------------------------------------- */

static uint32_t indent_of(const ol_source *src, uint32_t byte)
{
    uint32_t line = ol_source_line_index(src, byte);
    uint32_t i = src->line_starts[line];
    while (i < src->len && (src->text[i] == ' ' || src->text[i] == '\t'))
        i++;
    return i - src->line_starts[line];
}

static ol_fix *decorator_fix(ol_model *m, uint32_t fi)
{
    const ol_tree *t = m->tree;
    const ol_source *src = t->src;
    const ol_function *f = &m->functions.items[fi];
    /* async def: a context-manager decorator does not hold across awaits */
    uint32_t len;
    const char *s = ol_text(t, f->node, &len);
    if (len >= 5 && memcmp(s, "async", 5) == 0)
        return NULL;
    const char *torch = ol_torch_alias(m, f->node);
    if (!torch)
        return NULL;
    uint32_t def_start = ol_node_at(t, f->node)->start;
    uint32_t line = ol_source_line_index(src, def_start);
    uint32_t indent = indent_of(src, def_start);
    if (src->line_starts[line] + indent != def_start)
        return NULL; /* `def` does not start its line */
    ol_fix *fix = ol_fix_new(true, "Run the evaluation function under torch.no_grad()");
    ol_fix_unsafe_because(fix, "under `no_grad()` nothing the function computes carries a gradient: a caller "
                               "that calls `backward()` on its result, or needs gradients from it, would fail");
    char *text = ol_xasprintf("@%s.no_grad()%s%.*s", torch, src->crlf ? "\r\n" : "\n", (int)indent,
                              src->text + src->line_starts[line]);
    ol_fix_edit(fix, def_start, def_start, text);
    free(text);
    return fix;
}

static bool multiline_string_in(const ol_tree *t, ol_nid n)
{
    const ol_source *src = t->src;
    for (ol_nid i = n; i < t->nodes.len && ol_node_at(t, i)->start < ol_node_at(t, n)->end; i++) {
        if (i != n && ol_node_at(t, i)->start < ol_node_at(t, n)->start)
            break;
        ol_kind k = ol_kind_of(t, i);
        if ((k == OL_N_string || k == OL_N_concatenated_string) &&
            ol_source_line_index(src, ol_node_at(t, i)->start) != ol_source_line_index(src, ol_node_at(t, i)->end))
            return true;
    }
    return false;
}

static ol_fix *wrap_fix(ol_model *m, ol_nid loop_node)
{
    const ol_tree *t = m->tree;
    const ol_source *src = t->src;
    if (multiline_string_in(t, loop_node))
        return NULL;
    const char *torch = ol_torch_alias(m, loop_node);
    if (!torch)
        return NULL;
    uint32_t start = ol_node_at(t, loop_node)->start;
    uint32_t first = ol_source_line_index(src, start);
    uint32_t last = ol_source_line_index(src, ol_node_at(t, loop_node)->end);
    uint32_t indent = indent_of(src, start);
    if (src->line_starts[first] + indent != start)
        return NULL;
    /* indent with what the file already uses one level deeper, else 4 spaces */
    const char *unit = "    ";
    uint32_t body_line = first + 1 <= last ? first + 1 : first;
    uint32_t body_indent = indent_of(src, src->line_starts[body_line]);
    if (body_indent > indent && src->text[src->line_starts[body_line] + indent] == '\t')
        unit = "\t";
    ol_fix *fix = ol_fix_new(true, "Run the evaluation loop under torch.no_grad()");
    ol_fix_unsafe_because(fix, "under `no_grad()` nothing the loop computes carries a gradient: code in it or "
                               "after it that calls `backward()` or needs gradients would fail");
    char *head = ol_xasprintf("%.*swith %s.no_grad():%s", (int)indent, src->text + src->line_starts[first], torch,
                              src->crlf ? "\r\n" : "\n");
    ol_fix_edit(fix, src->line_starts[first], src->line_starts[first], head);
    free(head);
    for (uint32_t line = first; line <= last; line++) {
        uint32_t len;
        const char *s = ol_source_line(src, line, &len);
        bool blank = true;
        for (uint32_t k = 0; k < len && blank; k++)
            blank = s[k] == ' ' || s[k] == '\t';
        if (blank)
            continue;
        if (line == first) {
            /* the head insertion and this indentation share one point */
            ol_edit *e = &fix->edits.items[0];
            char *merged = ol_xasprintf("%s%s", e->content, unit);
            free(e->content);
            e->content = merged;
            continue;
        }
        ol_fix_edit(fix, src->line_starts[line], src->line_starts[line], unit);
    }
    return fix;
}

/* Inside an explicit `with torch.enable_grad():` the author asked for grads. */
static bool grad_enabled_explicitly(const ol_model *m, ol_nid n)
{
    for (uint32_t c = m->node_ctx[n]; c != OL_NO_INDEX; c = m->contexts.items[c].parent)
        if (m->contexts.items[c].kind == OL_CTX_GRAD)
            return m->contexts.items[c].gradmode == OL_GM_ENABLE;
    return false;
}

/* Which model a forward call runs, for reporting once per model and region:
 * inside a module's own method every self.<submodule> is part of one model. */
static char *model_key(ol_model *m, ol_nid callee, uint32_t fn)
{
    const ol_tree *t = m->tree;
    ol_nid root = ol_unparen(t, callee);
    while (ol_kind_of(t, root) == OL_N_attribute)
        root = ol_field(t, root, OL_F_object);
    if (fn != OL_NO_INDEX && m->functions.items[fn].is_method && ol_text_is(t, root, "self") &&
        ol_class_is_module(m, m->functions.items[fn].cls))
        return ol_xstrdup("self");
    /* parts of one model (`self.model.encoder`, `self.model.decoder`,
     * `self.model.generator.forward`) are that model */
    ol_nid e = ol_unparen(t, callee), whole = OL_NONE;
    if (ol_kind_of(t, e) == OL_N_attribute && ol_text_is(t, ol_field(t, e, OL_F_attribute), "forward"))
        e = ol_unparen(t, ol_field(t, e, OL_F_object));
    for (ol_nid p = e; ol_kind_of(t, p) == OL_N_attribute;) {
        p = ol_unparen(t, ol_field(t, p, OL_F_object));
        if (ol_eval(m, p).kind == OL_V_MODULE)
            whole = p;
    }
    return ol_node_str(t, whole != OL_NONE ? whole : callee);
}

/* ---- evidence beyond names and eval() ---------------------------------------------- */

/* Is every input of a forward call built from nothing (`net(torch.randn(2,
 * 3, 32, 32))`)? That is a shape check or a smoke test, not evaluation. */
static bool inputs_made_from_nothing(ol_model *m, ol_nid call)
{
    const ol_tree *t = m->tree;
    ol_nid args = ol_field(t, call, OL_F_arguments);
    bool any = false;
    for (ol_nid a = args != OL_NONE ? ol_first_named(t, args) : OL_NONE; a != OL_NONE; a = ol_next_named(t, a)) {
        ol_nid e = ol_kind_of(t, a) == OL_N_keyword_argument ? ol_field(t, a, OL_F_value) : a;
        e = ol_unparen(t, e);
        if (e == OL_NONE)
            return false;
        if (ol_kind_of(t, e) == OL_N_identifier) {
            uint32_t defs[4];
            size_t n = ol_reaching_defs(m, m->node_scope[e], ol_node_sym(m, e), e, defs, 4);
            if (n == 0)
                return false;
            for (size_t i = 0; i < n; i++) {
                const ol_def *d = &m->defs.items[defs[i]];
                if (d->kind != OL_DEF_ASSIGN || d->path_len != 0 || !ol_value_made_up(m, ol_method_chain_base(m, d->value)))
                    return false;
            }
        } else if (!ol_value_made_up(m, ol_method_chain_base(m, e))) {
            return false;
        }
        any = true;
    }
    return any;
}

/* How a forward's output is used: 2 for its shape only (`.shape`, `.size()`,
 * `.dtype`, `len()`, an assert), 1 for printing it, 0 for anything else. */
static int shape_use(ol_model *m, ol_nid use)
{
    const ol_tree *t = m->tree;
    ol_nid stmt = ol_statement_of(t, use);
    for (ol_nid p = ol_parent(t, use), child = use; p != OL_NONE; child = p, p = ol_parent(t, p)) {
        ol_kind k = ol_kind_of(t, p);
        if (k == OL_N_attribute && ol_field(t, p, OL_F_object) == child) {
            ol_nid attr = ol_field(t, p, OL_F_attribute);
            return ol_text_is(t, attr, "shape") || ol_text_is(t, attr, "size") || ol_text_is(t, attr, "dtype") ||
                           ol_text_is(t, attr, "ndim") || ol_text_is(t, attr, "dim")
                       ? 2
                       : 0;
        }
        if (k == OL_N_assert_statement)
            return 2;
        if (k == OL_N_call) {
            ol_nid callee = ol_field(t, p, OL_F_function);
            return ol_text_is(t, callee, "len") ? 2 : ol_text_is(t, callee, "print") ? 1 : 0;
        }
        if (p == stmt)
            break;
    }
    return 0;
}

/* A shape check: a forward whose output is only looked at for its shape,
 * or printed when its input is made up (`print(net(torch.randn(2, 3, 32,
 * 32)))`). Not evaluation: one small batch, once. */
static int cmp_sym_site(const void *a, const void *b)
{
    const sym_site *x = a, *y = b;
    if (x->fn != y->fn)
        return x->fn < y->fn ? -1 : 1;
    if (x->sym != y->sym)
        return x->sym < y->sym ? -1 : 1;
    return x->pos < y->pos ? -1 : x->pos > y->pos;
}

/* The first site of (fn, sym) at or after pos in a sorted vector. */
static size_t sites_from(const sym_site_vec *v, uint32_t fn, ol_sym sym, uint32_t pos)
{
    sym_site key = {fn, sym, pos};
    size_t lo = 0, hi = v->len;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (cmp_sym_site(&v->items[mid], &key) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static const sym_site_vec *identifiers(ol_model *m, mode_cache *mc)
{
    if (mc->ids_built)
        return &mc->ids;
    mc->ids_built = true;
    const ol_tree *t = m->tree;
    for (ol_nid n = 0; n < t->nodes.len; n++) {
        if (ol_kind_of(t, n) != OL_N_identifier)
            continue;
        sym_site site = {ol_function_of(m, n), ol_node_sym(m, n), n};
        ol_vec_push(&mc->ids, site);
    }
    ol_sort(mc->ids.items, mc->ids.len, sizeof(sym_site), cmp_sym_site);
    return &mc->ids;
}

static bool shape_check(ol_model *m, mode_cache *mc, ol_nid call, uint32_t fn)
{
    const ol_tree *t = m->tree;
    int need = inputs_made_from_nothing(m, call) ? 1 : 2;
    int direct = shape_use(m, call);
    if (direct)
        return direct >= need;
    ol_nid stmt = ol_statement_of(t, call);
    ol_nid assign = ol_kind_of(t, stmt) == OL_N_expression_statement ? ol_first_named(t, stmt) : OL_NONE;
    if (assign == OL_NONE || ol_kind_of(t, assign) != OL_N_assignment ||
        ol_unparen(t, ol_field(t, assign, OL_F_right)) != call)
        return false;
    ol_nid left = ol_unparen(t, ol_field(t, assign, OL_F_left));
    ol_kind lk = ol_kind_of(t, left);
    if (lk != OL_N_identifier && lk != OL_N_pattern_list && lk != OL_N_tuple_pattern)
        return false;
    ol_nid scope_node = fn != OL_NO_INDEX ? m->functions.items[fn].node : 0;
    const sym_site_vec *ids = identifiers(m, mc);
    bool used = false;
    for (ol_nid target = left; target < m->subtree_end[left]; target++) {
        if (ol_kind_of(t, target) != OL_N_identifier)
            continue;
        /* the uses of the name after the assignment, in the same function */
        ol_sym sym = ol_node_sym(m, target);
        for (size_t k = sites_from(ids, fn, sym, m->subtree_end[left]); k < ids->len; k++) {
            const sym_site *site = &ids->items[k];
            if (site->fn != fn || site->sym != sym || site->pos >= m->subtree_end[scope_node])
                break;
            /* bound again in the same block (`output = model(real_input)` further
             * down a script): the uses after that are of another value */
            ol_nid bind = ol_parent(t, site->pos);
            if (bind != OL_NONE && ol_kind_of(t, bind) == OL_N_assignment && ol_field(t, bind, OL_F_left) == site->pos &&
                ol_parent(t, ol_statement_of(t, site->pos)) == ol_parent(t, stmt))
                break;
            /* out of work: count it as a shape check (no finding) */
            if (!spend(mc, 16))
                return true;
            if (shape_use(m, site->pos) < need)
                return false;
            used = true;
        }
    }
    return used || need == 1;
}

/* Names bound from the statement holding n, and from statements that use
 * those names (two steps): where a forward's output goes. */
typedef OL_VEC(ol_nid) nid_vec;

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static void build_assign_uses(ol_model *m, mode_cache *mc)
{
    mc->assign_uses_built = true;
    const ol_tree *t = m->tree;
    size_t cap = 8 * (size_t)t->nodes.len + 1000000;
    for (size_t i = 0; i < m->assigns.len; i++) {
        ol_nid a = m->assigns.items[i];
        uint64_t at = (uint64_t)a << 32 | i;
        ol_vec_push(&mc->assign_at, at);
        ol_nid right = ol_field(t, a, OL_F_right);
        if (right == OL_NONE || mc->assign_uses_incomplete)
            continue;
        uint32_t fn = ol_function_of(m, a);
        for (ol_nid x = right; x < m->subtree_end[right]; x++) {
            if (ol_kind_of(t, x) != OL_N_identifier)
                continue;
            if (mc->assign_uses.len >= cap) {
                mc->assign_uses_incomplete = true;
                break;
            }
            sym_site site = {fn, ol_node_sym(m, x), (uint32_t)i};
            ol_vec_push(&mc->assign_uses, site);
        }
    }
    ol_sort(mc->assign_at.items, mc->assign_at.len, sizeof(uint64_t), cmp_u64);
    ol_sort(mc->assign_uses.items, mc->assign_uses.len, sizeof(sym_site), cmp_sym_site);
    /* one site per (function, name, assignment) */
    size_t w = 0;
    for (size_t r = 0; r < mc->assign_uses.len; r++)
        if (w == 0 || cmp_sym_site(&mc->assign_uses.items[w - 1], &mc->assign_uses.items[r]) != 0)
            mc->assign_uses.items[w++] = mc->assign_uses.items[r];
    mc->assign_uses.len = w;
}

/* The index of assignment node a in m->assigns, or UINT32_MAX. */
static uint32_t assign_index(const mode_cache *mc, ol_nid a)
{
    size_t lo = 0, hi = mc->assign_at.len;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if ((mc->assign_at.items[mid] >> 32) < a)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == mc->assign_at.len || (mc->assign_at.items[lo] >> 32) != a)
        return UINT32_MAX;
    return (uint32_t)(mc->assign_at.items[lo] & 0xffffffffu);
}

/* False when the names cannot be known within the work budget. */
static bool outputs_of(ol_model *m, mode_cache *mc, ol_nid n, uint32_t fn, nid_vec *names)
{
    const ol_tree *t = m->tree;
    ol_nid stmt = ol_statement_of(t, n);
    ol_nid assign = stmt != OL_NONE && ol_kind_of(t, stmt) == OL_N_expression_statement ? ol_first_named(t, stmt)
                                                                                         : OL_NONE;
    if (assign == OL_NONE || ol_kind_of(t, assign) != OL_N_assignment)
        return true;
    ol_nid left = ol_field(t, assign, OL_F_left);
    for (ol_nid x = left; x != OL_NONE && x < m->subtree_end[left]; x++)
        if (ol_kind_of(t, x) == OL_N_identifier)
            ol_vec_push(names, x);
    /* one step further: `loss = crit(out, y)`, the assignments after this
     * one in the same function that mention a direct name, in the order of
     * m->assigns (inner assignments of a chain come before the outer), up
     * to 32 names in all. Each direct name's assignments are a sorted run
     * of the index; they are merged. */
    if (!mc->assign_uses_built)
        build_assign_uses(m, mc);
    if (mc->assign_uses_incomplete)
        return false;
    size_t direct = names->len;
    if (direct == 0)
        return true;
    uint32_t self = assign_index(mc, assign);
    if (self == UINT32_MAX)
        return false;
    const sym_site_vec *uses = &mc->assign_uses;
    OL_VEC(size_t) cursor = {0};
    ol_sym *syms = ol_xcalloc(direct, sizeof(ol_sym));
    for (size_t k = 0; k < direct; k++) {
        syms[k] = ol_node_sym(m, names->items[k]);
        size_t at = sites_from(uses, fn, syms[k], self + 1);
        /* assignments nested in this one (a chain) come just before it */
        while (at > 0) {
            const sym_site *prev = &uses->items[at - 1];
            ol_nid a = m->assigns.items[prev->pos];
            if (prev->fn != fn || prev->sym != syms[k] || a <= assign || a >= m->subtree_end[assign])
                break;
            at--;
        }
        ol_vec_push(&cursor, at);
    }
    bool known = true;
    while (names->len < 32) {
        /* the next assignment, by index, among the direct names' runs */
        uint32_t next = UINT32_MAX;
        for (size_t k = 0; k < direct; k++) {
            size_t at = cursor.items[k];
            if (at < uses->len && uses->items[at].fn == fn && uses->items[at].sym == syms[k] &&
                uses->items[at].pos < next)
                next = uses->items[at].pos;
        }
        if (next == UINT32_MAX)
            break;
        for (size_t k = 0; k < direct; k++) {
            size_t at = cursor.items[k];
            if (at < uses->len && uses->items[at].fn == fn && uses->items[at].sym == syms[k] &&
                uses->items[at].pos == next)
                cursor.items[k]++;
        }
        ol_nid a = m->assigns.items[next];
        if (a <= assign)
            continue;
        ol_nid l = ol_field(t, a, OL_F_left);
        if (!spend(mc, direct + (l != OL_NONE ? m->subtree_end[l] - l : 0))) {
            known = false;
            break;
        }
        for (ol_nid x = l; x != OL_NONE && x < m->subtree_end[l] && names->len < 32; x++)
            if (ol_kind_of(t, x) == OL_N_identifier)
                ol_vec_push(names, x);
    }
    free(syms);
    ol_vec_free(&cursor);
    return known;
}

static int cmp_sym(const void *a, const void *b)
{
    ol_sym x = *(const ol_sym *)a, y = *(const ol_sym *)b;
    return x < y ? -1 : x > y;
}

/* The backward operands of fn's body (or, for the module, of the whole
 * file) and the names they mention, gathered once. NULL when fn has no body. */
static const backward_operands *operands_of(ol_model *m, mode_cache *mc, uint32_t fn)
{
    ol_nid body = fn != OL_NO_INDEX ? function_body(m, fn) : 0;
    if (body == OL_NONE)
        return NULL;
    backward_operands *bo = &mc->operands[fn == OL_NO_INDEX ? 0 : fn + 1];
    if (bo->built)
        return bo;
    bo->built = true;
    const ol_tree *t = m->tree;
    size_t first, end = ol_calls_in(m, body, &first);
    for (size_t i = first; i < end; i++) {
        ol_nid operand = ol_backward_operand(m, (uint32_t)i);
        if (operand == OL_NONE)
            continue;
        ol_vec_push(&bo->operands, operand);
        for (ol_nid x = operand; x < m->subtree_end[operand]; x++)
            if (ol_kind_of(t, x) == OL_N_identifier)
                ol_vec_push(&bo->syms, ol_node_sym(m, x));
    }
    ol_sort(bo->operands.items, bo->operands.len, sizeof(ol_nid), ol_cmp_u32);
    ol_sort(bo->syms.items, bo->syms.len, sizeof(ol_sym), cmp_sym);
    size_t w = 0;
    for (size_t r = 0; r < bo->syms.len; r++)
        if (w == 0 || bo->syms.items[w - 1] != bo->syms.items[r])
            bo->syms.items[w++] = bo->syms.items[r];
    bo->syms.len = w;
    return bo;
}

static bool sorted_has(const uint32_t *items, size_t len, uint32_t x)
{
    size_t lo = ol_lower_bound_u32(items, len, x);
    return lo < len && items[lo] == x;
}

/* Does the output of the forward at n feed a backward() in its function?
 * True also when that cannot be known within the work budget. */
static bool feeds_backward(ol_model *m, mode_cache *mc, ol_nid n, uint32_t fn)
{
    const backward_operands *bo = operands_of(m, mc, fn);
    if (!bo)
        return true;
    if (bo->operands.len == 0)
        return false;
    /* the forward is inside an operand: `model(x).sum().backward()` */
    for (ol_nid p = n; p != OL_NONE && p >= bo->operands.items[0]; p = ol_parent(m->tree, p)) {
        if (!spend(mc, 1))
            return true;
        if (sorted_has(bo->operands.items, bo->operands.len, p))
            return true;
    }
    nid_vec names = {0};
    bool feeds = !outputs_of(m, mc, n, fn, &names);
    for (size_t k = 0; k < names.len && !feeds; k++)
        feeds = sorted_has(bo->syms.items, bo->syms.len, ol_node_sym(m, names.items[k]));
    ol_vec_free(&names);
    return feeds;
}

static const char *const IMAGE_CALLS[] = {"save_image", "make_grid", "imsave", "imshow", "imwrite", "add_image",
                                          "add_images", "Image", "save", "show", "log_images", NULL};

static bool image_call_named(ol_model *m, const ol_call *c)
{
    if (!c->name)
        return false;
    const char *name = ol_sym_str(m, c->name);
    /* torch.save / numpy.save write tensors and arrays (features, caches), not images */
    const char *q = ol_qualname(m, c->callee);
    if (q && (strncmp(q, "torch.", 6) == 0 || strncmp(q, "numpy.", 6) == 0))
        return false;
    for (const char *const *w = IMAGE_CALLS; *w; w++)
        if (strcmp(name, *w) == 0)
            return true;
    return false;
}

/* An image call, or a call of a function of the file that shows or saves
 * what it is given (`self.save_grid(out, path)` whose body calls
 * save_image) and runs no model. */
static bool image_call(ol_model *m, mode_cache *mc, const ol_call *c)
{
    if (image_call_named(m, c))
        return true;
    uint32_t fi = c->name ? ol_callee_function(m, c->node) : OL_NO_INDEX;
    if (fi == OL_NO_INDEX)
        return false;
    if (!mc->shows[fi]) {
        bool shows = false, runs = false;
        size_t first, end = ol_calls_in(m, m->functions.items[fi].node, &first);
        for (size_t i = first; i < end && !runs; i++) {
            runs = ol_is_forward_call(m, (uint32_t)i);
            shows = shows || image_call_named(m, &m->calls.items[i]);
        }
        mc->shows[fi] = shows && !runs ? 2 : 1;
    }
    return mc->shows[fi] == 2;
}

/* A forward whose output only becomes sample images (`save_image(netG(z))`,
 * `fake = netG(fixed_noise)` shown or saved, never trained on). */
/* How many image calls there are among calls [first, end). */
static uint32_t image_calls_in(ol_model *m, mode_cache *mc, size_t first, size_t end)
{
    if (!mc->images_before) {
        mc->images_before = ol_xcalloc(m->calls.len + 1, sizeof(uint32_t));
        for (size_t i = 0; i < m->calls.len; i++)
            mc->images_before[i + 1] = mc->images_before[i] + (image_call(m, mc, &m->calls.items[i]) ? 1 : 0);
    }
    return mc->images_before[end] - mc->images_before[first];
}

/* Does function fi take tensors to the host (`x.cpu().data.numpy()`,
 * `.detach()`, `.item()`, `.tolist()`, NumPy, `int()`): a converter for
 * plotting or a metric, which trains on nothing it is given? */
static bool takes_to_host(ol_model *m, mode_cache *mc, uint32_t fi)
{
    if (!mc->to_host[fi]) {
        static const char *const host[] = {"numpy", "detach", "item", "tolist", NULL};
        bool found = false;
        size_t first, end = ol_calls_in(m, m->functions.items[fi].node, &first);
        for (size_t i = first; i < end && !found; i++) {
            const ol_call *c = &m->calls.items[i];
            if (!c->name)
                continue;
            /* NumPy and Python numbers: what reaches them is host data */
            const char *q = ol_qualname(m, c->callee);
            if (q && (strncmp(q, "numpy.", 6) == 0 || strcmp(q, "int") == 0 || strcmp(q, "float") == 0)) {
                found = true;
                break;
            }
            if (c->receiver == OL_NONE)
                continue;
            const char *name = ol_sym_str(m, c->name);
            for (const char *const *h = host; *h && !found; h++)
                found = strcmp(name, *h) == 0;
        }
        mc->to_host[fi] = found ? 2 : 1;
    }
    return mc->to_host[fi] == 2;
}

/* Is call c one of the project's own code that may train on what it is
 * given: a function of the file that neither shows images nor takes
 * tensors to the host (`self.losses(pred, target)`), or a method of the
 * object's own class the file does not define (`self.compute_loss(out)`,
 * inherited from a base elsewhere)? */
static bool project_code_may_train(ol_model *m, mode_cache *mc, const ol_call *c)
{
    if (!c->name)
        return false;
    uint32_t fi = ol_callee_function(m, c->node);
    if (fi != OL_NO_INDEX)
        return !takes_to_host(m, mc, fi);
    return c->receiver != OL_NONE && ol_kind_of(m->tree, c->receiver) == OL_N_identifier &&
           ol_text_is(m->tree, c->receiver, "self");
}

static bool only_images(ol_model *m, mode_cache *mc, ol_nid n, uint32_t fn)
{
    const ol_tree *t = m->tree;
    for (ol_nid p = ol_parent(t, n); p != OL_NONE && p != ol_statement_of(t, n); p = ol_parent(t, p)) {
        uint32_t ci = ol_call_at(m, p);
        if (ci != OL_NO_INDEX && image_call(m, mc, &m->calls.items[ci]) && ol_field(t, p, OL_F_arguments) != OL_NONE &&
            ol_contains(t, ol_field(t, p, OL_F_arguments), n))
            return true;
    }
    ol_nid body = fn != OL_NO_INDEX ? function_body(m, fn) : 0;
    if (body == OL_NONE)
        return false;
    size_t first, end = ol_calls_in(m, body, &first);
    /* the calls after n: without an image call among them, nothing is shown */
    size_t after = ol_calls_from(m, n + 1, first, end);
    if (image_calls_in(m, mc, after, end) == 0)
        return false;
    nid_vec names = {0};
    if (!outputs_of(m, mc, n, fn, &names)) {
        ol_vec_free(&names);
        return false;
    }
    bool shown = false, other = false;
    for (size_t i = after; i < end && !other; i++) {
        const ol_call *c = &m->calls.items[i];
        if (c->node <= n)
            continue;
        ol_nid args = ol_field(t, c->node, OL_F_arguments);
        /* out of work: no finding */
        if (!spend(mc, 1 + (args != OL_NONE ? (m->subtree_end[args] - args) * (uint64_t)names.len : 0))) {
            ol_vec_free(&names);
            return false;
        }
        bool mentions = false;
        for (size_t k = 0; k < names.len && !mentions; k++)
            mentions = args != OL_NONE && ol_mentions(t, args, names.items[k]);
        if (!mentions)
            continue;
        if (image_call(m, mc, c))
            shown = true;
        else if (ol_is_forward_call(m, (uint32_t)i) || (ol_eval(m, c->node).flags & OL_VF_LOSS))
            other = true; /* netD(fake), criterion(fake, real): trained on */
        else if (ol_function_of(m, c->node) == fn && project_code_may_train(m, mc, c))
            other = true; /* self.losses(pred, gt): the project's own code may train on it */
    }
    ol_vec_free(&names);
    return shown && !other && !feeds_backward(m, mc, n, fn);
}

static const char *const HELD_OUT_WORDS[] = {"val", "valid", "validation", "test", "testing", "dev", "holdout",
                                              NULL};

/* A forward over held-out data (`model(x_val)`, `net(test_images)`) whose
 * output never reaches backward(): evaluation inside a training loop. */
/* Is the name bound only to made-up values (`test_image = torch.randn(3,
 * 64, 64)`, a row of one): a shape demo, whatever the name says? */
static bool made_up(ol_model *m, ol_nid name, int depth)
{
    const ol_tree *t = m->tree;
    if (depth > 3)
        return false;
    uint32_t defs[4];
    size_t nd = ol_reaching_defs(m, m->node_scope[name], ol_node_sym(m, name), name, defs, 4);
    if (nd == 0 || nd == 4)
        return false;
    for (size_t i = 0; i < nd; i++) {
        const ol_def *d = &m->defs.items[defs[i]];
        if (d->kind != OL_DEF_ASSIGN || d->path_len != 0 || d->value == OL_NONE)
            return false;
        ol_nid v = ol_unparen(t, d->value);
        while (v != OL_NONE && ol_kind_of(t, v) == OL_N_subscript)
            v = ol_unparen(t, ol_field(t, v, OL_F_value));
        if (v != OL_NONE && ol_kind_of(t, v) == OL_N_identifier) {
            if (!made_up(m, v, depth + 1)) /* `test_image = images[0]` */
                return false;
            continue;
        }
        if (v == OL_NONE || ol_kind_of(t, v) == OL_N_list || ol_kind_of(t, v) == OL_N_tuple ||
            !ol_value_made_up(m, ol_method_chain_base(m, v)))
            return false;
    }
    return true;
}

static bool held_out_forward(ol_model *m, mode_cache *mc, ol_nid n, uint32_t fn)
{
    const ol_tree *t = m->tree;
    ol_nid args = ol_field(t, n, OL_F_arguments);
    ol_nid a = args != OL_NONE ? ol_first_named(t, args) : OL_NONE;
    if (a == OL_NONE)
        return false;
    a = ol_unparen(t, ol_kind_of(t, a) == OL_N_keyword_argument ? ol_field(t, a, OL_F_value) : a);
    if (ol_kind_of(t, a) == OL_N_attribute)
        a = ol_field(t, a, OL_F_attribute);
    if (a == OL_NONE || ol_kind_of(t, a) != OL_N_identifier || !sym_looks_like(m, ol_node_sym(m, a), HELD_OUT_WORDS))
        return false;
    return !made_up(m, a, 0) && !feeds_backward(m, mc, n, fn);
}

/* ---- a training function called to evaluate ---------------------------------------- */

/* A call in this file that runs training function fn (it backwards or
 * steps) with a literal for one of its parameters under which every
 * gradient computation of fn is skipped while the forward at n still runs
 * (`run_epoch(val_loader, cross_valid=True)` where the backward is under
 * `if not cross_valid:`): fn evaluates there, with autograd on. The call's
 * node, the parameter's def in *param, the literal in *value, and the
 * skipped gradient call and its `if` in *grad and *branch; OL_NONE when there is none. */
/* `torch.set_grad_enabled(flag)` as a statement before n in a block around
 * it, in its function, with flag the parameter `name`: autograd follows the
 * flag, off when the call passes the false literal `lit`. */
static bool grad_follows_flag(ol_model *m, ol_nid n, ol_sym name, ol_nid lit)
{
    const ol_tree *t = m->tree;
    static const char *const setters[] = {"torch.set_grad_enabled", "torch.autograd.set_grad_enabled",
                                          "torch.autograd.grad_mode.set_grad_enabled", NULL};
    ol_kind lk = ol_kind_of(t, lit);
    if (lk != OL_N_false && lk != OL_N_none && !(lk == OL_N_integer && ol_text_is(t, lit, "0")))
        return false;
    for (ol_nid a = n, p = ol_parent(t, n); p != OL_NONE; a = p, p = ol_parent(t, p)) {
        ol_kind pk = ol_kind_of(t, p);
        if (pk == OL_N_function_definition || pk == OL_N_lambda || pk == OL_N_class_definition)
            return false;
        if (pk != OL_N_block)
            continue;
        for (ol_nid st = ol_first_named(t, p); st != OL_NONE && st != a; st = ol_next_named(t, st)) {
            ol_nid call = ol_kind_of(t, st) == OL_N_expression_statement ? ol_first_named(t, st) : OL_NONE;
            if (call == OL_NONE || ol_kind_of(t, call) != OL_N_call || !ol_call_is(m, call, setters))
                continue;
            ol_nid arg = ol_call_arg(m, call, 0, "mode");
            arg = arg != OL_NONE ? ol_unparen(t, arg) : OL_NONE;
            if (arg != OL_NONE && ol_kind_of(t, arg) == OL_N_identifier && ol_node_sym(m, arg) == name)
                return true;
        }
    }
    return false;
}

static ol_nid flag_eval_call(ol_model *m, ol_nid n, uint32_t fn, uint32_t *param, ol_nid *value, ol_nid *grad,
                             ol_nid *branch)
{
    const ol_tree *t = m->tree;
    if (fn == OL_NO_INDEX || m->functions.items[fn].callsites.len == 0)
        return OL_NONE;
    const ol_function *f = &m->functions.items[fn];
    ol_nid grads[16];
    size_t ng = 0;
    size_t first, end = ol_calls_in(m, f->node, &first);
    for (size_t i = first; i < end && ng < 16; i++)
        if (ol_function_of(m, m->calls.items[i].node) == fn && ol_call_computes_gradients(m, (uint32_t)i, NULL))
            grads[ng++] = m->calls.items[i].node;
    if (ng == 0 || ng == 16)
        return OL_NONE;
    for (size_t pi = 0; pi < f->params.len && pi < 16; pi++) {
        const ol_def *pd = &m->defs.items[f->params.items[pi]];
        for (size_t k = 0; k < f->callsites.len; k++) {
            const ol_call *c = &m->calls.items[f->callsites.items[k]];
            bool splat = false;
            ol_nid lit = ol_callsite_arg(m, f, c, pd, &splat);
            if (lit == OL_NONE && !splat)
                lit = pd->value; /* the default */
            lit = lit != OL_NONE && !splat ? ol_unparen(t, lit) : OL_NONE;
            if (lit == OL_NONE || !ol_is_literal(m, lit))
                continue;
            bool all = true;
            ol_nid b = OL_NONE, first_b = OL_NONE;
            for (size_t g = 0; g < ng && all; g++) {
                all = ol_skipped_when(m, grads[g], pd->name, lit, &b);
                if (g == 0)
                    first_b = b;
            }
            if (!all || ol_skipped_when(m, n, pd->name, lit, &b) || !ol_grad_on(m, c->node, NULL) ||
                grad_follows_flag(m, n, pd->name, lit) ||
                (ol_call_result_use(m, f->callsites.items[k]) & OL_USE_BACKWARD))
                continue;
            *param = f->params.items[pi];
            *value = lit;
            *grad = grads[0];
            *branch = first_b;
            return c->node;
        }
    }
    return OL_NONE;
}

/* A model run inside training code whose parameters are not trained there
 * and not frozen (`teacher.eval()` in distillation, then `teacher(x)` with
 * autograd on): autograd keeps its activations for a backward pass that
 * never reaches it. Not when its input carries a graph: a frozen
 * discriminator or a perceptual loss must pass gradients back. */
static bool untrained_model(ol_model *m, mode_cache *mc, const ol_call *call, uint32_t fn)
{
    const ol_tree *t = m->tree;
    ol_nid model = forward_model(m, call);
    ol_nid body = fn != OL_NO_INDEX ? function_body(m, fn) : 0;
    if (body == OL_NONE || ol_kind_of(t, model) == OL_N_call)
        return false;
    /* evidence that it is not meant to learn: eval() on it here, or its name */
    bool evidence = false;
    ol_nid name = ol_kind_of(t, model) == OL_N_attribute ? ol_field(t, model, OL_F_attribute) : model;
    static const char *const teacher_words[] = {"teacher", NULL};
    if (name != OL_NONE && ol_kind_of(t, name) == OL_N_identifier && sym_looks_like(m, ol_node_sym(m, name), teacher_words))
        evidence = true;
    /* the last eval()/train() on it before the call, in this function, is
     * eval() (the switches of each function are gathered once) */
    const mode_calls *mcs = mode_calls_of(m, mc, fn, body);
    for (size_t k = calls_before(m, mcs->switches.items, mcs->switches.len, call->node); k-- > 0;) {
        /* out of work: no finding */
        if (!spend(mc, 4))
            return false;
        const ol_call *c = &m->calls.items[mcs->switches.items[k]];
        if (ol_same_text(t, ol_unparen(t, c->receiver), model)) {
            evidence = c->name == m->names.eval;
            break;
        }
    }
    if (!evidence)
        return false;
    /* the optimizer stepped here trains something else */
    const ol_region_events *re = ol_events_of(m, body);
    bool steps_other = false, trains_it = false;
    for (size_t k = 0; k < re->steps.len; k++) {
        const ol_event *e = &re->events.items[re->steps.items[k]];
        /* true also when what the optimizer holds is not known */
        if (ol_optimizer_may_train(m, e->target, model) || ol_optimizer_may_hold(m, e->target, model))
            trains_it = true;
        else
            steps_other = true;
    }
    if (trains_it || !steps_other)
        return false;
    /* frozen: requires_grad_(False) on it, or `p.requires_grad = False` over its parameters */
    size_t nsw;
    const ol_nid *sw = ol_grad_switches(m, &nsw);
    for (size_t k = 0; k < nsw; k++) {
        ol_nid s = sw[k];
        if (ol_kind_of(t, s) == OL_N_call) {
            if (ol_mentions(t, m->calls.items[ol_call_at(m, s)].receiver, name))
                return false;
            continue;
        }
        uint32_t l = m->node_loop[s];
        if (l == OL_NO_INDEX || ol_mentions(t, m->loops.items[l].iter, name))
            return false;
    }
    /* its input is data, not something a gradient must flow back through */
    return !ol_inputs_carry_graph(m, call->node);
}

/* ---- wrappers --------------------------------------------------------------------- */

/* A call of a function that runs a model with autograd on (`self.infer(x)`,
 * `predict(model, x)` from utils.py), judged where it is called: not one
 * named for evaluation (those are judged where they are defined) and not
 * one that trains. */
static bool wrapper_call(ol_model *m, mode_cache *mc, uint32_t ci, bool *local, const char **eval_name)
{
    ol_callee callee;
    const ol_callee *fs = ol_callee_of(m, ci, &callee) ? &callee : NULL;
    bool cross = fs && fs->cross_file;
    *local = !cross;
    *eval_name = NULL;
    if (!fs || !fs->name || !(fs->facts & OL_FN_FORWARD) ||
        (fs->facts & (OL_FN_BACKWARD | OL_FN_STEP | OL_FN_NO_GRAD)))
        return false;
    const char *last = strrchr(fs->name, '.');
    last = last ? last + 1 : fs->name;
    if (strcmp(last, "forward") == 0)
        return false;
    size_t len = strlen(last);
    if (ol_name_looks_like(last, len, TRAIN_WORDS))
        return false;
    if (!ol_name_looks_like(last, len, EVAL_WORDS))
        return true;
    /* a local one its callers give another role (it hands its output on to
     * them): judged at the call, like any helper */
    uint32_t fi = !cross ? ol_callee_function(m, m->calls.items[ci].node) : OL_NO_INDEX;
    if (fi != OL_NO_INDEX && !is_eval_function(m, mc, fi))
        return true;
    /* an evaluation function of another file (a plain function, not a
     * method) that its own file only calls under no_grad (`test()` of
     * test.py, guarded by its __main__) called here with autograd on: the
     * call is where the guard is missing */
    if (cross && !fs->bound && (fs->facts & OL_FN_CALLERS_NO_GRAD)) {
        *eval_name = last;
        return true;
    }
    /* a method of an object of another file (a predictor that holds the
     * model: `predictor.predict(x)`) is reported in its file, and at the
     * call too, where the evaluation that runs it would guard it */
    return cross && fs->bound;
}

/* ---- the check -------------------------------------------------------------------- */

typedef struct reported {
    ol_nid region;
    char *model;
    size_t diag; /* its finding's index in the check's output */
} reported;

typedef OL_VEC(reported) reported_vec;

typedef enum evidence {
    EV_NONE,
    EV_FUNCTION,   /* in an evaluation function */
    EV_LOOP,       /* in a loop over validation/test data */
    EV_AFTER_EVAL, /* after model.eval() */
    EV_UNTRAINED,  /* a model not trained here: a distillation teacher */
    EV_IMAGES,     /* only produces sample images */
    EV_HELD_OUT,   /* held-out data, output never trained on */
    EV_CALLEE,     /* calls an evaluation function of another file */
    EV_FLAG,       /* a training function called with the flag that skips its backward */
    EV_CALLERS_EVAL, /* a model's method that the run calls on the model in evaluation mode */
} evidence;

/* A method of a module (`Model.slide()`) that nothing here calls, and that
 * every call of the run runs on a model its caller keeps in evaluation mode
 * (`self.model_ = model.eval().to(device)`, then `self.model_.slide(x)`),
 * none backpropagating through it: evaluation, decided in another file.
 * The first such call in *first. */
static bool callers_put_in_eval(ol_model *m, mode_cache *mc, uint32_t fn, const ol_call *call, ol_caller_use *first)
{
    const ol_tree *t = m->tree;
    const ol_function *f = &m->functions.items[fn];
    if (f->callsites.len || f->cls == OL_NO_INDEX || !ol_class_is_module_in_run(m, f->cls))
        return false;
    ol_nid root = forward_model(m, call);
    while (root != OL_NONE && ol_kind_of(t, root) == OL_N_attribute)
        root = ol_unparen(t, ol_field(t, root, OL_F_object));
    if (root == OL_NONE || !ol_text_is(t, root, "self") || mc->held_eval[fn] == 1)
        return false;
    if (!mc->held_eval[fn] && computes_gradients(m, function_body(m, fn))) {
        mc->held_eval[fn] = 1;
        return false;
    }
    ol_caller_use uses[16];
    size_t n = ol_run_caller_uses(m, fn, uses, 16), seen = 0;
    for (size_t k = 0; k < n; k++) {
        if (uses[k].test)
            continue;
        if (!(uses[k].use & OL_USE_EVAL) || (uses[k].use & OL_USE_BACKWARD)) {
            seen = 0;
            break;
        }
        if (seen++ == 0)
            *first = uses[k];
    }
    mc->held_eval[fn] = seen > 0 ? 2 : 1;
    return seen > 0;
}

static void report_site(ol_check *c, const ol_call *call, uint32_t fn, bool wrapper, const char *eval_name,
                        reported_vec *seen, nid_vec *sites, mode_cache *modes)
{
    ol_model *m = c->model;
    const ol_tree *t = c->tree;
    if (grad_enabled_explicitly(m, call->node))
        return;
    if (fn != OL_NO_INDEX && is_pytest_function(m, fn))
        return;
    /* a module's own forward() is not evaluation code; Lightning-style eval
     * hooks on a module run under no_grad by contract */
    if (fn != OL_NO_INDEX) {
        const ol_function *f = &m->functions.items[fn];
        if (f->name == m->names.forward)
            return;
        if ((f->name == m->names.validation_step || f->name == m->names.test_step ||
             f->name == m->names.predict_step) && f->cls != OL_NO_INDEX && ol_class_is_module(m, f->cls))
            return;
    }
    /* a shape check on made-up input keeps one small batch, once */
    if (shape_check(m, modes, call->node, fn))
        return;
    if (!wrapper && ol_forward_frozen(m, (uint32_t)(call - m->calls.items)))
        return;
    evidence ev = EV_NONE;
    char *where = NULL;
    ol_fix *fix = NULL;
    ol_nid anchor = OL_NONE, eval_call, flag_call = OL_NONE, flag_value = OL_NONE, flag_grad = OL_NONE,
           flag_if = OL_NONE;
    uint32_t loop, flag_param = OL_NO_INDEX;
    ol_caller_use held_by = {0};
    if (fn != OL_NO_INDEX && is_eval_function(m, modes, fn)) {
        ev = EV_FUNCTION;
        anchor = m->functions.items[fn].node;
        where = ol_xasprintf("`%s()`", ol_sym_str(m, m->functions.items[fn].name));
        fix = decorator_fix(m, fn);
    } else if ((loop = eval_loop(m, modes, call->node)) != OL_NO_INDEX) {
        ev = EV_LOOP;
        anchor = m->loops.items[loop].node;
        ol_nid it = m->loops.items[loop].iter;
        char *text = ol_node_str_short(t, it);
        where = ol_xasprintf("`%s`", text);
        free(text);
        if (m->loops.items[loop].kind == OL_LOOP_FOR)
            fix = wrap_fix(m, m->loops.items[loop].node);
    } else if ((eval_call = after_eval_call(m, modes, call->node, fn)) != OL_NONE) {
        ev = EV_AFTER_EVAL;
        anchor = eval_call;
        char *text = ol_node_str(t, eval_call);
        where = ol_xasprintf("`%s`", text);
        free(text);
    } else if (!wrapper && fn != OL_NO_INDEX && callers_put_in_eval(m, modes, fn, call, &held_by)) {
        ev = EV_CALLERS_EVAL;
        anchor = m->functions.items[fn].node;
        where = ol_xasprintf("`%s()`", ol_sym_str(m, m->functions.items[fn].name));
    } else if ((flag_call = flag_eval_call(m, call->node, fn, &flag_param, &flag_value, &flag_grad, &flag_if)) != OL_NONE) {
        ev = EV_FLAG;
        anchor = m->functions.items[fn].node;
    } else if (!wrapper && untrained_model(m, modes, call, fn)) {
        ev = EV_UNTRAINED;
        anchor = fn != OL_NO_INDEX ? m->functions.items[fn].node : 0;
    } else if (!wrapper && only_images(m, modes, call->node, fn)) {
        ev = EV_IMAGES;
        anchor = fn != OL_NO_INDEX ? m->functions.items[fn].node : 0;
    } else if (!wrapper && held_out_forward(m, modes, call->node, fn)) {
        ev = EV_HELD_OUT;
        anchor = fn != OL_NO_INDEX ? m->functions.items[fn].node : 0;
    } else if (eval_name) {
        ev = EV_CALLEE;
        anchor = call->node;
        where = ol_xasprintf("`%s()`", eval_name);
    } else {
        return;
    }
    /* one finding per model and loop (a second evaluation loop is its own) */
    uint32_t inner = m->node_loop[call->node];
    ol_nid region = inner != OL_NO_INDEX && ol_contains(t, anchor, m->loops.items[inner].node) ? m->loops.items[inner].node
                                                                                                  : anchor;
    char *key = model_key(m, call->callee, fn);
    bool dup = false;
    size_t other = SIZE_MAX; /* a finding of another model in the same loop or function */
    for (size_t k = 0; k < seen->len && !dup; k++) {
        if (seen->items[k].region != region)
            continue;
        dup = strcmp(seen->items[k].model, key) == 0;
        if (other == SIZE_MAX)
            other = k;
    }
    if (dup) {
        free(key);
        free(where);
        ol_fix_free(fix);
        return;
    }
    /* whether autograd is on at the forward: the door reads the blocks,
     * decorators and hooks around it and the function's callers in every
     * file of the run (asked only of what would be reported) */
    ol_reasons why = {0};
    if (!ol_grad_on(m, call->node, &why)) {
        free(key);
        free(where);
        ol_fix_free(fix);
        return;
    }
    /* a second model in a loop or function already reported: one finding
     * for the loop, naming both (the same fix guards them) */
    if (other != SIZE_MAX && region != call->node && seen->items[other].diag < c->out->len) {
        char *callee = ol_node_str_short(t, call->callee);
        ol_reasons also = {0};
        ol_because(&also, m, call->node, "`%s(...)` runs here too, with autograd on", callee);
        ol_diag_because(&c->out->items[seen->items[other].diag], m, &also);
        free(callee);
        free(key);
        free(where);
        ol_fix_free(fix);
        return;
    }
    reported r = {region, key, SIZE_MAX};
    ol_vec_push(seen, r);
    ol_vec_push(sites, call->node);
    char *callee = ol_node_str_short(t, call->callee);
    /* "`f(...)` runs a model in evaluation function `g()` with autograd on: ..." */
    const char *tail = wrapper ? "with autograd on: every activation is kept for a backward pass that never comes"
                               : "runs with autograd on: every activation is kept for a backward pass that never comes";
    ol_diag *d;
    switch (ev) {
    case EV_FUNCTION:
        d = ol_report_node(c, call->node, "`%s(...)` %sin evaluation function %s %s", callee,
                           wrapper ? "runs a model " : "", where, tail);
        break;
    case EV_LOOP:
        d = ol_report_node(c, call->node, "`%s(...)` %sin a loop over %s %s", callee, wrapper ? "runs a model " : "",
                           where, tail);
        break;
    case EV_AFTER_EVAL:
        d = ol_report_node(c, call->node, "`%s(...)` %safter %s %s", callee, wrapper ? "runs a model " : "", where,
                           tail);
        break;
    case EV_UNTRAINED:
        d = ol_report_node(c, call->node,
                           "`%s(...)` runs with autograd on, though this code does not train `%s`: its activations "
                           "are kept for a backward pass that never reaches it",
                           callee, callee);
        break;
    case EV_IMAGES:
        d = ol_report_node(c, call->node, "the output of `%s(...)` is only shown or saved (plotted, written as an image), and %s", callee, tail);
        break;
    case EV_FLAG: {
        char *site = ol_node_str_short(t, ol_field(t, flag_call, OL_F_function));
        char *value = ol_node_str_short(t, flag_value);
        d = ol_report_node(c, call->node,
                           "`%s(...)` %sruns with autograd on when `%s(...)` is called with `%s` %s to evaluate: no "
                           "backward runs then, and every activation is kept for a backward pass that never comes",
                           callee, wrapper ? "runs a model that " : "", site,
                           ol_sym_str(m, m->defs.items[flag_param].name), value);
        free(value);
        free(site);
        break;
    }
    case EV_CALLERS_EVAL:
        d = ol_report_node(c, call->node, "`%s(...)` in %s, which the run calls on a model in evaluation mode, %s",
                           callee, where, tail);
        break;
    case EV_CALLEE:
        d = ol_report_node(c, call->node,
                           "`%s(...)` runs evaluation function %s of another file with autograd on, which its own "
                           "file only calls under no_grad: every activation is kept for a backward pass that never "
                           "comes",
                           callee, where);
        break;
    default:
        d = ol_report_node(c, call->node, "`%s(...)` evaluates held-out data, and %s", callee, tail);
        break;
    }
    ol_vec_last(seen).diag = c->out->len - 1; /* d is the finding just made */
    /* what makes it evaluation, and whether that rests on a name */
    char *label = fn != OL_NO_INDEX ? ol_node_str(t, ol_field(t, m->functions.items[fn].node, OL_F_name)) : NULL;
    switch (ev) {
    case EV_FUNCTION:
        ol_because(&why, m, ol_field(t, m->functions.items[fn].node, OL_F_name),
                   "`%s()` is evaluation code: named for it, and it computes no gradient", label);
        why.guess = "a function's name";
        /* it hands its output on: the caller that makes it evaluation */
        if (hands_on(m, modes, fn))
            callers_evaluate(m, modes, fn, 0, &why);
        break;
    case EV_LOOP:
        ol_because(&why, m, anchor, "this loop draws %s, held-out data by its name", where);
        why.guess = "a loader's name";
        break;
    case EV_AFTER_EVAL:
        if (ol_function_of(m, anchor) == fn)
            ol_because(&why, m, anchor, "%s switches the model to evaluation before this forward", where);
        else /* kept in evaluation mode by its holder: the door says how */
            ol_module_in_eval_mode(m, wrapper || !ol_is_forward_call(m, ol_call_at(m, call->node)) ? call->receiver
                                                                                                   : forward_model(m, call),
                                   call->node, &why);
        break;
    case EV_UNTRAINED:
        ol_because(&why, m, call->callee, "no optimizer here steps this model's parameters");
        break;
    case EV_IMAGES:
        ol_because(&why, m, call->node, "its output only reaches plots or image files, never a backward()");
        break;
    case EV_HELD_OUT:
        ol_because(&why, m, call->node, "it runs on held-out data and its output never reaches a backward()");
        why.guess = "a variable's name";
        break;
    case EV_CALLEE:
        ol_because(&why, m, call->node, "%s is only called under no_grad in its own file", where);
        break;
    case EV_CALLERS_EVAL:
        ol_because_caller(&why, m, &held_by, "`%s` calls %s here on a model it keeps in evaluation mode, and nothing "
                          "backpropagates through what it returns", held_by.caller ? held_by.caller : "module code", where);
        break;
    case EV_FLAG: {
        const char *flag = ol_sym_str(m, m->defs.items[flag_param].name);
        char *grad = ol_node_str_short(t, flag_grad);
        ol_because(&why, m, flag_call, "called here with `%s` set so that it evaluates", flag);
        ol_because(&why, m, flag_if != OL_NONE ? flag_if : flag_grad, "`%s` runs only under this `if`, skipped then",
                   grad);
        free(grad);
        break;
    }
    default:
        break;
    }
    free(label);
    ol_often often = ol_how_often(m, call->node, &why);
    ol_diag_because(d, m, &why);
    ol_diag_help(d, ev == EV_FLAG ? "turn autograd off where it evaluates: `with torch.set_grad_enabled(...)` on the flag "
                                    "around the forward"
                    : ev == EV_CALLEE ? "call it under `with torch.no_grad():`"
                    : ev == EV_FUNCTION || ev == EV_LOOP || ev == EV_AFTER_EVAL || ev == EV_CALLERS_EVAL
                        ? "evaluate under `torch.no_grad()` (or `torch.inference_mode()`): decorate the function or "
                          "wrap the loop"
                        : "run it under `with torch.no_grad():` (or freeze it with `requires_grad_(False)`)");
    /* one forward in a notebook cell or a demo helper called a few times
     * keeps one forward's activations: reported when selected by code */
    d->once = often == OL_ONCE;
    free(callee);
    free(where);
    ol_diag_attach_fix(d, fix);
}

static void check(ol_check *c)
{
    ol_model *m = c->model;
    if (!ol_imports_torch_family(m))
        return;
    reported_vec seen = {0};
    nid_vec sites = {0};
    mode_cache modes;
    mode_cache_init(&modes, m);
    for (size_t i = 0; i < m->calls.len; i++) {
        if (!ol_is_forward_call(m, (uint32_t)i) || ol_call_runs_no_parameters(m, (uint32_t)i))
            continue;
        /* a model whose own forward (in another file) runs under no_grad or
         * inference_mode records no graph */
        if (ol_forward_runs_without_grad(m, (uint32_t)i, NULL))
            continue;
        const ol_call *call = &m->calls.items[i];
        report_site(c, call, ol_function_of(m, call->node), false, NULL, &seen, &sites, &modes);
    }
    /* functions that run a model, called from evaluation code: judged at the
     * call, unless the function was already reported inside */
    for (size_t i = 0; i < m->calls.len; i++) {
        bool local;
        const char *eval_name;
        if (ol_is_forward_call(m, (uint32_t)i) || !wrapper_call(m, &modes, (uint32_t)i, &local, &eval_name))
            continue;
        const ol_call *call = &m->calls.items[i];
        if (local) {
            uint32_t callee = ol_callee_function(m, call->node);
            bool inside = false;
            for (size_t k = 0; k < sites.len && !inside && callee != OL_NO_INDEX; k++)
                inside = ol_contains(c->tree, m->functions.items[callee].node, sites.items[k]);
            if (inside)
                continue;
        }
        report_site(c, call, ol_function_of(m, call->node), true, eval_name, &seen, &sites, &modes);
    }
    for (size_t k = 0; k < seen.len; k++)
        free(seen.items[k].model);
    ol_vec_free(&seen);
    ol_vec_free(&sites);
    mode_cache_free(&modes);
}

const ol_rule ol_rule_oom201 = {
    .code = "OOM201",
    .name = "eval-without-no-grad",
    .severity = OL_SEV_WARNING,
    .device_memory = true,
    .summary = "A model's forward pass in evaluation code runs with autograd on.",
    .what = "Flags model forward calls in evaluation code with no `torch.no_grad()`, "
            "`torch.inference_mode()` or `torch.set_grad_enabled(False)` around them: in functions "
            "named for evaluation (evaluate, validate, test, predict, inference, generate), after "
            "`model.eval()` until `model.train()` (also `net = model.eval()`), in loops over "
            "validation or test loaders, on held-out data inside a training loop, for sample images, "
            "and for a model that the surrounding training code does not train (a distillation "
            "teacher put in eval mode and not frozen). Each evaluation loop is its own finding, "
            "naming every model it runs with autograd on; "
            "helpers that run the model (`predict(model, x)`, also from another file of the run, or "
            "`extract(model, query_loader)` after `model.eval()`) are flagged where evaluation code calls "
            "them, as is a call of another file's evaluation function that its own file only calls "
            "under no_grad. Grad mode follows the callers in the whole run: a function that every "
            "caller (other files included) runs under no_grad or inference_mode is guarded, one that "
            "its own file guards but another file calls with autograd on is not; a subclass's method "
            "runs where its base class calls it through `self`; a model whose own `forward` is "
            "decorated `@torch.no_grad()` / `@torch.inference_mode()` (in another file too) and a "
            "module frozen whole in `__init__` record no graph; a helper that a Lightning "
            "`training_step` shares is part of training. Code that computes gradients (backward, "
            "`torch.autograd.grad`) is not evaluation; Lightning's validation/test/predict steps "
            "already run without grad; a function only ever called under no_grad, or a script that "
            "calls `torch.set_grad_enabled(False)` at module level, is guarded; a shape check on "
            "made-up input (`print(net(torch.randn(2, 3, 32, 32)).shape)`) is not evaluation; a module "
            "that holds no parameter (`nn.Softmax()`, pooling, dropout, or a class of the file that "
            "creates none) is not a model; a model frozen whole before the call "
            "(`model.eval().requires_grad_(False)`, or `p.requires_grad = False` over all of "
            "`model.parameters()`, with no layer put in after) records no graph on data input; a "
            "torchvision weights preset (`weights.transforms()`) is an image transform, not a model; "
            "and a tensor made up with a factory (`test_image = torch.randn(...)[0]`) is no held-out "
            "data, whatever its name. `torch.set_grad_enabled(False)` as a statement earlier in the "
            "blocks around the call, Lightning's evaluation hooks (`on_validation_*`, `on_test_*`, "
            "`on_predict_*`, also of a Callback), and models that are not PyTorch's (TensorFlow, Keras, "
            "Flax, a transformers pipeline) are not flagged. By default only evaluation that runs per "
            "step is reported (in a loop, or in a function called from one or with no caller in the "
            "file); one forward run once (a notebook cell, a demo helper called a few times) is "
            "reported when the rule is selected by its code (`--extend-select OOM201`).",
    .why = "With autograd on, every forward pass records its graph and keeps the activations that "
           "backward would need. Evaluation never calls backward, so that memory is pure waste: "
           "typically the largest single use of GPU memory, and the reason a model that trains fine "
           "runs out of memory in validation with a larger batch. `model.eval()` does not turn "
           "autograd off; it only changes dropout and batch-norm behaviour.",
    .example = "def evaluate(model, loader):\n"
               "    model.eval()\n"
               "    correct = 0\n"
               "    for x, y in loader:\n"
               "        correct += (model(x).argmax(1) == y).sum().item()\n"
               "    return correct",
    .instead = "@torch.no_grad()\n"
               "def evaluate(model, loader):\n"
               "    model.eval()\n"
               "    correct = 0\n"
               "    for x, y in loader:\n"
               "        correct += (model(x).argmax(1) == y).sum().item()\n"
               "    return correct",
    .fix = "Unsafe (gradients are no longer available there): decorates an evaluation function with "
           "`@torch.no_grad()`, or wraps a validation loop in `with torch.no_grad():`. Needs `torch` "
           "imported; not offered for async functions or code with multi-line strings.",
    .fix_safety = "Always unsafe: under `torch.no_grad()` no gradient is recorded for anything the function "
                  "or loop computes, so code that calls `backward()` on a result, reads `.grad_fn`, or "
                  "otherwise needs gradients from it (oomlint judged that nothing does, but a caller in "
                  "another file may) would fail.",
    .tags = "memory,inference",
    .precision = "high",
    .check = check,
};
