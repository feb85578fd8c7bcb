/*
 * ask_kind.c - what kind of code is this? (ask.h)
 *
 * Test code exercises behaviour on purpose: a test that runs a model with
 * autograd on, or keeps every output to compare them, is not training code
 * leaking memory. Files of tests are known by their paths (the default
 * per-file-ignores, config.c); this finds tests wherever they live: pytest
 * functions and fixtures (`def test_*` at module level, `@pytest.fixture`)
 * in a module that is a test module by its name (`tests.py`, `test_*.py`,
 * `*_test.py`, `conftest.py`, a `tests/` or `test/` folder; not `test.py`,
 * which is as often a script that evaluates a model) or that imports
 * pytest, and the test methods of a `unittest.TestCase` or of a pytest
 * class (`class Test*`), with the functions only they call. Asked once per
 * function.
 */
#include "ask_internal.h"
#include "facts.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "summary.h"

static bool test_module_name(const char *path)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    return ol_str_has_prefix(base, "test_") || ol_str_has_suffix(base, "_test.py") || strcmp(base, "tests.py") == 0 ||
           strcmp(base, "conftest.py") == 0 || strstr(path, "/tests/") ||
           ol_str_has_prefix(path, "tests/") || strstr(path, "/test/") || ol_str_has_prefix(path, "test/");
}

static bool imports_root(ol_model *m, const char *root)
{
    size_t n = strlen(root);
    for (size_t i = 0; i < m->imports.len; i++) {
        const char *q = ol_sym_str(m, m->imports.items[i].qual);
        if (strncmp(q, root, n) == 0 && (q[n] == '\0' || q[n] == '.'))
            return true;
    }
    return false;
}

/* A base that makes a class a test case: unittest's TestCase (also
 * through classes of the file), or a name ending in TestCase. */
static bool test_case_class(ol_model *m, uint32_t ci, int depth)
{
    if (ci >= m->classes.len || depth > 8)
        return false;
    const ol_class *c = &m->classes.items[ci];
    if (c->name && ol_str_has_prefix(ol_sym_str(m, c->name), "Test"))
        return true;
    for (size_t i = 0; i < c->bases.len; i++) {
        ol_val v = ol_eval(m, c->bases.items[i]);
        if (v.kind == OL_V_CLASS && v.ref != ci && test_case_class(m, v.ref, depth + 1))
            return true;
        const char *q = v.kind == OL_V_EXTERN ? ol_sym_str(m, v.ref) : NULL;
        if (q && (ol_str_has_suffix(q, "TestCase") || strcmp(q, "unittest.TestCase") == 0))
            return true;
    }
    return false;
}

static bool pytest_fixture(ol_model *m, uint32_t fi)
{
    const ol_tree *t = m->tree;
    ol_nid dec = m->functions.items[fi].decorated;
    for (ol_nid d = dec != OL_NONE ? ol_first_named(t, dec) : OL_NONE; d != OL_NONE; d = ol_next_named(t, d)) {
        if (ol_kind_of(t, d) != OL_N_decorator)
            continue;
        ol_nid e = ol_first_named(t, d);
        if (ol_kind_of(t, e) == OL_N_call)
            e = ol_field(t, e, OL_F_function);
        const char *q = ol_qualname(m, e);
        if (q && (strcmp(q, "pytest.fixture") == 0 || ol_str_has_prefix(q, "pytest.mark.")))
            return true;
    }
    return false;
}

/* Is function fi a test by itself (not through its callers)? */
static bool test_function(ol_model *m, uint32_t fi, bool test_module)
{
    const ol_function *f = &m->functions.items[fi];
    const char *name = f->name ? ol_sym_str(m, f->name) : NULL;
    if (!name)
        return false;
    if (pytest_fixture(m, fi))
        return true;
    if (!ol_str_has_prefix(name, "test"))
        return false;
    if (f->cls != OL_NO_INDEX)
        return test_case_class(m, f->cls, 0);
    /* a module-level test_* in a test module, or in a module that imports
     * pytest (its tests are collected wherever it lives) */
    return m->scopes.items[f->outer_scope].kind == OL_SCOPE_MODULE && (test_module || imports_root(m, "pytest"));
}

static ol_code_kind function_kind(ol_model *m, uint32_t fi, bool test_module, int depth)
{
    ol_door *d = ol_door_of(m);
    uint8_t state = d->kind[fi] & OL_DOOR_KIND_MASK;
    if (state == OL_DOOR_KIND_BUSY)
        return OL_CODE_OTHER; /* a cycle: the other callers decide */
    if (state)
        return (ol_code_kind)(state - 1);
    d->kind[fi] = (uint8_t)((d->kind[fi] & ~OL_DOOR_KIND_MASK) | OL_DOOR_KIND_BUSY);
    ol_code_kind k = OL_CODE_OTHER;
    const ol_function *f = &m->functions.items[fi];
    if (test_function(m, fi, test_module)) {
        k = OL_CODE_TEST;
    } else if (depth < 6) {
        /* a helper of tests: every caller in the file is test code */
        bool all = f->callsites.len > 0;
        for (size_t i = 0; i < f->callsites.len && all; i++) {
            uint32_t caller = ol_function_of(m, m->calls.items[f->callsites.items[i]].node);
            all = caller != OL_NO_INDEX && caller != fi &&
                  function_kind(m, caller, test_module, depth + 1) == OL_CODE_TEST;
        }
        /* a function nested in a test, or a test case's set-up */
        uint32_t outer = m->scopes.items[f->outer_scope].function;
        if (all ||
            (f->callsites.len == 0 && outer != OL_NO_INDEX &&
             function_kind(m, outer, test_module, depth + 1) == OL_CODE_TEST) ||
            (f->cls != OL_NO_INDEX && f->name && test_case_class(m, f->cls, 0) &&
             ol_str_has_prefix(ol_sym_str(m, f->name), "setUp")))
            k = OL_CODE_TEST;
    }
    d->kind[fi] = (uint8_t)((d->kind[fi] & ~OL_DOOR_KIND_MASK) | (uint8_t)(k + 1));
    return k;
}

/* The test function that makes fi test code: itself, the function around
 * it, or its first caller, followed up. */
static uint32_t test_root(ol_model *m, uint32_t fi, bool test_module, int depth)
{
    if (test_function(m, fi, test_module) || depth > 6)
        return fi;
    const ol_function *f = &m->functions.items[fi];
    if (f->callsites.len > 0) {
        uint32_t caller = ol_function_of(m, m->calls.items[f->callsites.items[0]].node);
        return caller != OL_NO_INDEX && caller != fi ? test_root(m, caller, test_module, depth + 1) : fi;
    }
    uint32_t outer = m->scopes.items[f->outer_scope].function;
    return outer != OL_NO_INDEX ? test_root(m, outer, test_module, depth + 1) : fi;
}

static bool function_trains(ol_model *m, uint32_t fi, int depth);
static void trains_reason(ol_model *m, uint32_t fi, ol_reasons *why, int depth);

ol_code_kind ol_code_kind_at(ol_model *m, ol_nid n, ol_reasons *why)
{
    uint32_t fi = ol_function_of(m, n);
    if (fi == OL_NO_INDEX)
        return OL_CODE_OTHER;
    bool test_module = m->src && m->src->path && test_module_name(m->src->path);
    ol_code_kind k = function_kind(m, fi, test_module, 0);
    if (k == OL_CODE_TEST && why) {
        uint32_t root = test_root(m, fi, test_module, 0);
        char *label = ol_door_function_label(m, root);
        ol_reasons_add(why, ol_field(m->tree, m->functions.items[root].node, OL_F_name), NULL, 0, false,
                       ol_door_printf(m, "%s is a test", label));
        free(label);
    }
    if (k == OL_CODE_OTHER && function_trains(m, fi, 0)) {
        k = OL_CODE_TRAINING;
        if (why)
            trains_reason(m, fi, why, 0);
    }
    return k;
}

/* ---- where a value goes ----------------------------------------------------------- */

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
} flow;

static bool flows_from(flow *w, ol_nid e, int depth);

static const char *const FILLS[] = {"append", "extend", "insert", "add", "update", "appendleft", "put", NULL};

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
        if (!c->name || recv == OL_NONE || ol_kind_of(t, recv) != OL_N_identifier || ol_node_sym(m, recv) != d->name ||
            ol_function_of(m, c->node) != fn)
            continue;
        const char *name = ol_sym_str(m, c->name);
        bool fills = false;
        for (const char *const *f = FILLS; *f && !fills; f++)
            fills = strcmp(name, *f) == 0;
        if (fills && flows_from(w, ol_field(t, c->node, OL_F_arguments), depth + 1))
            return true;
    }
    /* the stores are in source order: those of the region are one run */
    size_t lo = 0, hi = m->subscript_stores.len;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (m->subscript_stores.items[mid] < region)
            lo = mid + 1;
        else
            hi = mid;
    }
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
    if (w->target == e)
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

bool ol_value_reaches(ol_model *m, ol_nid value, ol_nid into)
{
    if (value == OL_NONE || into == OL_NONE)
        return false;
    flow w = {m, value, 4000 + 4 * (long)m->calls.len / 64, {0}, 0};
    return flows_from(&w, into, 0);
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
    size_t first, end = ol_calls_in(m, body, &first);
    for (size_t i = first; i < end && !(use & OL_USE_BACKWARD); i++) {
        if (ol_function_of(m, m->calls.items[i].node) != fn)
            continue;
        ol_nid operand = ol_backward_operand(m, (uint32_t)i);
        if (operand == OL_NONE) {
            const char *q = ol_qualname(m, m->calls.items[i].callee);
            if (q && strcmp(q, "torch.autograd.grad") == 0)
                operand = ol_call_arg(m, m->calls.items[i].node, 0, "outputs");
        }
        if (operand != OL_NONE && ol_value_reaches(m, call, operand))
            use |= OL_USE_BACKWARD;
    }
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

/* ---- training code ---------------------------------------------------------------- */

/* Does function fi train, as far as the file and the run's call records
 * show: a framework's training step, a body that computes gradients
 * (itself or through the functions it calls), or a caller that backwards
 * through its result, or returns it to code that trains? */
static bool function_trains(ol_model *m, uint32_t fi, int depth)
{
    ol_door *d = ol_door_of(m);
    unsigned state = (d->kind[fi] >> OL_DOOR_TRAINS_SHIFT) & 3u;
    if (state == 1 || depth > 8)
        return false; /* a cycle: the other callers decide */
    if (state)
        return state == 3;
    d->kind[fi] = (uint8_t)((d->kind[fi] & ~(3u << OL_DOOR_TRAINS_SHIFT)) | (1u << OL_DOOR_TRAINS_SHIFT));
    const ol_function *f = &m->functions.items[fi];
    ol_nid body = ol_field(m->tree, f->node, OL_F_body);
    bool yes = ol_function_hook(m, fi) == OL_HOOK_TRAIN_STEP ||
               (body != OL_NONE && ol_gradient_call_in(m, body, OL_NONE, OL_NONE, NULL) != OL_NONE);
    for (size_t k = 0; k < m->functions.items[fi].callsites.len && !yes; k++) {
        uint32_t ci = m->functions.items[fi].callsites.items[k];
        uint32_t caller = ol_function_of(m, m->calls.items[ci].node);
        unsigned use = ol_call_result_use(m, ci);
        yes = (use & OL_USE_BACKWARD) ||
              ((use & OL_USE_RETURNED) && caller != OL_NO_INDEX && caller != fi && function_trains(m, caller, depth + 1));
    }
    if (!yes) {
        ol_caller_use uses[16];
        size_t n = ol_run_caller_uses(m, fi, uses, 16);
        for (size_t k = 0; k < n && !yes; k++)
            yes = (uses[k].use & OL_USE_BACKWARD) != 0;
    }
    d->kind[fi] = (uint8_t)((d->kind[fi] & ~(3u << OL_DOOR_TRAINS_SHIFT)) | ((yes ? 3u : 2u) << OL_DOOR_TRAINS_SHIFT));
    return yes;
}

/* Why fi trains: the first fact function_trains found, as a reason. */
static void trains_reason(ol_model *m, uint32_t fi, ol_reasons *why, int depth)
{
    const ol_tree *t = m->tree;
    const ol_function *f = &m->functions.items[fi];
    char *label = ol_door_function_label(m, fi);
    ol_nid body = ol_field(t, f->node, OL_F_body);
    if (ol_function_hook(m, fi) == OL_HOOK_TRAIN_STEP) {
        ol_reasons_add(why, ol_field(t, f->node, OL_F_name), NULL, 0, false,
                       ol_door_printf(m, "%s is a training step: the framework backwards what it returns", label));
    } else if (body != OL_NONE && ol_gradient_call_in(m, body, OL_NONE, OL_NONE, why) != OL_NONE) {
        /* the gradient call is the reason */
    } else {
        bool found = false;
        for (size_t k = 0; k < f->callsites.len && !found; k++) {
            uint32_t ci = f->callsites.items[k];
            uint32_t caller = ol_function_of(m, m->calls.items[ci].node);
            unsigned use = ol_call_result_use(m, ci);
            if (use & OL_USE_BACKWARD) {
                ol_reasons_add(why, m->calls.items[ci].node, NULL, 0, true,
                               ol_door_printf(m, "what %s returns is backpropagated here", label));
                found = true;
            } else if ((use & OL_USE_RETURNED) && caller != OL_NO_INDEX && caller != fi && depth < 8 &&
                       function_trains(m, caller, 0)) {
                char *who = ol_door_function_label(m, caller);
                ol_reasons_add(why, m->calls.items[ci].node, NULL, 0, true,
                               ol_door_printf(m, "%s hands what %s returns on to training code", who, label));
                free(who);
                trains_reason(m, caller, why, depth + 1);
                found = true;
            }
        }
        ol_caller_use uses[16];
        size_t n = found ? 0 : ol_run_caller_uses(m, fi, uses, 16);
        for (size_t k = 0; k < n && !found; k++) {
            if (!(uses[k].use & OL_USE_BACKWARD))
                continue;
            ol_reasons_add(why, OL_NONE, uses[k].path, uses[k].line, true,
                           ol_door_printf(m, "what %s returns is backpropagated here", label));
            found = true;
        }
    }
    free(label);
}

/* ---- the mode a module is in --------------------------------------------------------- */

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

/* Does call c switch the mode of a module spelled like `module`, and to
 * what: 1 eval, 2 train, 0 neither. */
static int mode_switch(ol_model *m, const ol_call *c, ol_nid module)
{
    const ol_tree *t = m->tree;
    if ((c->name != m->names.eval && c->name != m->names.train) || c->receiver == OL_NONE ||
        !ol_same_text(t, ol_unparen(t, c->receiver), module))
        return 0;
    ol_nid arg = ol_call_arg(m, c->node, 0, "mode");
    if (c->name == m->names.eval)
        return arg == OL_NONE ? 1 : 0;
    return arg != OL_NONE && ol_kind_of(t, ol_unparen(t, arg)) == OL_N_false ? 1 : 2;
}

ol_nid ol_module_in_eval_mode(ol_model *m, ol_nid module, ol_nid at, ol_reasons *why)
{
    const ol_tree *t = m->tree;
    module = module != OL_NONE ? ol_unparen(t, module) : OL_NONE;
    if (module == OL_NONE || at == OL_NONE)
        return OL_NONE;
    uint32_t fn = ol_function_of(m, at);
    ol_nid region = fn != OL_NO_INDEX ? m->functions.items[fn].node : 0;
    /* the last switch of it before `at` in the same function */
    size_t first, end = ol_calls_in(m, region, &first);
    for (size_t i = end; i-- > first;) {
        const ol_call *c = &m->calls.items[i];
        if (c->node >= at || ol_function_of(m, c->node) != fn)
            continue;
        int s = mode_switch(m, c, module);
        if (s == 2)
            return OL_NONE;
        if (s == 1) {
            if (why) {
                char *text = ol_node_str_short(t, c->node);
                ol_reasons_add(why, c->node, NULL, 0, false,
                               ol_door_printf(m, "`%s` puts the model in evaluation mode before this call", text));
                free(text);
            }
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
    for (size_t i = 0; i < cls->bases.len; i++) {
        ol_val v = ol_eval(m, cls->bases.items[i]);
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
    for (size_t i = 0; i < cls->attr_defs.len && attr != OL_NONE; i++) {
        const ol_def *d = &m->defs.items[cls->attr_defs.items[i]];
        if (d->name != ol_node_sym(m, attr) || d->kind != OL_DEF_ASSIGN || d->path_len != 0)
            continue;
        ol_nid e = eval_in_chain(m, d->value);
        if (e == OL_NONE) {
            /* bound without it: fine in `__init__` before an eval() of it; a
             * model bound again elsewhere may be in training mode */
            uint32_t in = ol_function_of(m, d->value);
            if (found == OL_NONE || in == OL_NO_INDEX || m->functions.items[in].name != m->names.__init__)
                return OL_NONE;
        } else if (found == OL_NONE) {
            found = e;
        }
    }
    if (found != OL_NONE && why) {
        char *text = ol_node_str_short(t, found);
        uint32_t in = ol_function_of(m, found);
        char *label = in != OL_NO_INDEX ? ol_door_function_label(m, in) : ol_xstrdup("the class");
        ol_reasons_add(why, found, NULL, 0, false,
                       ol_door_printf(m, "`%s` in %s keeps the model in evaluation mode: no method of the class "
                                         "switches it back or computes gradients",
                                      text, label));
        free(label);
        free(text);
    }
    return found;
}

size_t ol_run_caller_uses(ol_model *m, uint32_t fi, ol_caller_use *out, size_t cap)
{
    if (fi >= m->functions.len || cap == 0)
        return 0;
    ol_run_use recs[32];
    size_t n = ol_run_call_records(m, fi, recs, cap < 32 ? cap : 32);
    for (size_t i = 0; i < n; i++) {
        out[i].path = recs[i].path ? ol_door_printf(m, "%s", ol_door_path(m, recs[i].path)) : NULL;
        out[i].line = recs[i].line;
        out[i].use = recs[i].use;
        out[i].caller = recs[i].caller ? ol_door_printf(m, "%s", recs[i].caller) : NULL;
        /* tests exercise behaviour on purpose: what they do with a result is no role */
        const char *c = recs[i].caller ? recs[i].caller : "";
        const char *last = strrchr(c, '.');
        out[i].test = (recs[i].path && test_module_name(recs[i].path)) || ol_str_has_prefix(last ? last + 1 : c, "test") ||
                      ol_str_has_prefix(c, "Test");
    }
    ol_run_uses_free(recs, n);
    return n;
}

void ol_because_caller(ol_reasons *why, ol_model *m, const ol_caller_use *use, const char *fmt, ...)
{
    if (!why || !use || !use->path)
        return;
    ol_buf b = {0};
    va_list ap;
    va_start(ap, fmt);
    ol_buf_vprintf(&b, fmt, ap);
    va_end(ap);
    const char *text = ol_door_printf(m, "%s", b.data ? b.data : "");
    ol_buf_free(&b);
    ol_reasons_add(why, OL_NONE, use->path, use->line, true, text);
}

/* ---- what an object is ---------------------------------------------------------------- */

const char *ol_instance_class(ol_model *m, ol_nid e)
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
        if (k == OL_N_attribute) {
            /* self.x: its one binding in the class */
            ol_nid obj = ol_unparen(t, ol_field(t, e, OL_F_object)), attr = ol_field(t, e, OL_F_attribute);
            uint32_t fn = ol_function_of(m, e);
            if (obj == OL_NONE || !ol_text_is(t, obj, "self") || fn == OL_NO_INDEX ||
                m->functions.items[fn].cls == OL_NO_INDEX)
                return NULL;
            const ol_class *cls = &m->classes.items[m->functions.items[fn].cls];
            ol_nid value = OL_NONE;
            for (size_t i = 0; i < cls->attr_defs.len; i++) {
                const ol_def *d = &m->defs.items[cls->attr_defs.items[i]];
                if (d->name != ol_node_sym(m, attr))
                    continue;
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

/* ---- which branch runs ---------------------------------------------------------------- */

/* The truth of a literal: 1, 0, or -1 when it is no literal. */
static int literal_truth(ol_model *m, ol_nid lit)
{
    const ol_tree *t = m->tree;
    const char *s;
    uint32_t len;
    switch (ol_kind_of(t, lit)) {
    case OL_N_true:
        return 1;
    case OL_N_false:
    case OL_N_none:
        return 0;
    case OL_N_integer:
    case OL_N_float:
        s = ol_text(t, lit, &len);
        for (uint32_t i = 0; i < len; i++)
            if (s[i] != '0' && s[i] != '.')
                return 1;
        return 0;
    case OL_N_string:
        return ol_string_value(t, lit, &s, &len) ? len > 0 : -1;
    default:
        return -1;
    }
}

static bool same_literal(ol_model *m, ol_nid a, ol_nid b)
{
    const ol_tree *t = m->tree;
    const char *x, *y;
    uint32_t xl, yl;
    if (ol_kind_of(t, a) == OL_N_string && ol_kind_of(t, b) == OL_N_string)
        return ol_string_value(t, a, &x, &xl) && ol_string_value(t, b, &y, &yl) && xl == yl && memcmp(x, y, xl) == 0;
    return ol_kind_of(t, a) == ol_kind_of(t, b) && ol_same_text(t, a, b);
}

/* The truth of condition c when the name p holds the literal lit: `p`,
 * `not p`, `p == "train"`, `p is None`, `p and x`: 1, 0, or -1 unknown. */
static int cond_value(ol_model *m, ol_nid c, ol_sym p, ol_nid lit, int depth)
{
    const ol_tree *t = m->tree;
    c = ol_unparen(t, c);
    if (c == OL_NONE || depth > 8)
        return -1;
    switch (ol_kind_of(t, c)) {
    case OL_N_identifier:
        return ol_node_sym(m, c) == p ? literal_truth(m, lit) : -1;
    case OL_N_not_operator: {
        int v = cond_value(m, ol_field(t, c, OL_F_argument), p, lit, depth + 1);
        return v < 0 ? -1 : !v;
    }
    case OL_N_boolean_operator: {
        int l = cond_value(m, ol_field(t, c, OL_F_left), p, lit, depth + 1);
        int r = cond_value(m, ol_field(t, c, OL_F_right), p, lit, depth + 1);
        bool is_and = ol_kind_of(t, ol_field(t, c, OL_F_operator)) == OL_T_AND;
        if (is_and)
            return l == 0 || r == 0 ? 0 : l == 1 && r == 1 ? 1 : -1;
        return l == 1 || r == 1 ? 1 : l == 0 && r == 0 ? 0 : -1;
    }
    case OL_N_comparison_operator: {
        ol_nid a = ol_unparen(t, ol_first_named(t, c));
        ol_nid b = a != OL_NONE ? ol_unparen(t, ol_next_named(t, a)) : OL_NONE;
        if (b == OL_NONE || ol_next_named(t, b) != OL_NONE || ol_kind_of(t, a) != OL_N_identifier ||
            ol_node_sym(m, a) != p || literal_truth(m, b) < 0 || literal_truth(m, lit) < 0)
            return -1;
        /* the operator token between the two operands */
        ol_kind op = OL_N_OTHER;
        for (ol_nid k = ol_node_at(t, c)->first_child; k != OL_NONE; k = ol_node_at(t, k)->next_sibling)
            if (k != a && k != b && ol_kind_of(t, k) != OL_N_parenthesized_expression)
                op = ol_kind_of(t, k);
        bool same = same_literal(m, lit, b);
        if (op == OL_T_EQEQ || op == OL_T_IS)
            return same;
        if (op == OL_T_NE || op == OL_T_IS_NOT)
            return !same;
        return -1;
    }
    default:
        return -1;
    }
}

bool ol_skipped_when(ol_model *m, ol_nid x, ol_sym p, ol_nid lit, ol_nid *branch)
{
    const ol_tree *t = m->tree;
    uint32_t fn = ol_function_of(m, x);
    ol_nid top = fn != OL_NO_INDEX ? m->functions.items[fn].node : 0;
    for (ol_nid a = x, par = ol_parent(t, x); par != OL_NONE && a != top; a = par, par = ol_parent(t, par)) {
        ol_kind k = ol_kind_of(t, par);
        if (k != OL_N_if_statement && k != OL_N_elif_clause)
            continue;
        int v = cond_value(m, ol_field(t, par, OL_F_condition), p, lit, 0);
        bool in_body = a == ol_field(t, par, OL_F_consequence);
        bool in_else = k == OL_N_if_statement && !in_body && a != ol_field(t, par, OL_F_condition);
        if ((in_body && v == 0) || (in_else && v == 1)) {
            *branch = par;
            return true;
        }
    }
    return false;
}

bool ol_is_literal(ol_model *m, ol_nid e)
{
    return e != OL_NONE && literal_truth(m, ol_unparen(m->tree, e)) >= 0;
}

/* ---- modules across files ------------------------------------------------------------- */

/* An nn.Module class, also through a base class defined in another file of
 * the project (`class Learned(GaussianDiffusion)` with GaussianDiffusion an
 * nn.Module in diffusion.py): its summary says so. */
static bool class_is_module_anywhere(ol_model *m, uint32_t ci, int depth)
{
    if (ol_class_is_module(m, ci))
        return true;
    if (depth > 8 || !m->links)
        return false;
    for (size_t i = 0; i < m->classes.items[ci].bases.len; i++) {
        ol_val v = ol_eval(m, m->classes.items[ci].bases.items[i]), linked;
        if (v.kind == OL_V_CLASS && v.ref < m->classes.len && v.ref != ci &&
            class_is_module_anywhere(m, v.ref, depth + 1))
            return true;
        if (v.kind == OL_V_EXTERN && v.ref && m->links->call(m->links, m, v.ref, 0, -1, NULL, &linked) &&
            linked.kind == OL_V_MODULE)
            return true;
    }
    return false;
}

bool ol_class_is_module_in_run(ol_model *m, uint32_t ci)
{
    return ci < m->classes.len && class_is_module_anywhere(m, ci, 0);
}
