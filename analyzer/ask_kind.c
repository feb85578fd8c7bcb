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

ol_nid ol_module_in_eval_mode(ol_model *m, ol_nid module, ol_nid at, ol_reasons *why)
{
    bool by_class = false;
    ol_nid found = ol_module_eval_switch(m, module, at, &by_class);
    if (found == OL_NONE || !why)
        return found;
    char *text = ol_node_str_short(m->tree, found);
    if (!by_class) {
        ol_reasons_add(why, found, NULL, 0, false,
                       ol_door_printf(m, "`%s` puts the model in evaluation mode before this call", text));
    } else {
        uint32_t in = ol_function_of(m, found);
        char *label = in != OL_NO_INDEX ? ol_door_function_label(m, in) : ol_xstrdup("the class");
        ol_reasons_add(why, found, NULL, 0, false,
                       ol_door_printf(m, "`%s` in %s keeps the model in evaluation mode: no method of the class "
                                         "switches it back or computes gradients",
                                      text, label));
        free(label);
    }
    free(text);
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

/* ---- code that trains nothing ------------------------------------------------------- */

/* Does s hold word, in any case? */
static bool holds_word(const char *s, const char *word)
{
    size_t n = strlen(word);
    for (; *s; s++)
        if (ol_mem_ieq(s, word, n))
            return true;
    return false;
}

static bool file_trains(ol_model *m)
{
    static const char *const TRAINS[] = {"backward", "zero_grad", "step", "grad", "fit", "manual_backward", NULL};
    ol_sym syms[8];
    size_t k = 0;
    for (const char *const *w = TRAINS; *w; w++)
        syms[k++] = ol_model_intern(m, *w);
    ol_sym training_step = ol_model_intern(m, "training_step");
    for (size_t i = 0; i < m->calls.len; i++) {
        ol_sym name = m->calls.items[i].name;
        for (size_t j = 0; j < k; j++)
            if (name == syms[j])
                return true;
        /* `model.train()`, a trainer of another module (`train_qa_s2s(model,
         * ...)`), an optimizer built by a helper (`lib.make_optimizer(...)`) */
        const char *s = name ? ol_sym_str(m, name) : NULL;
        if (s && (holds_word(s, "train") || holds_word(s, "optim")))
            return true;
    }
    for (size_t i = 0; i < m->functions.len; i++)
        if (m->functions.items[i].name == training_step)
            return true;
    return false;
}

/* Is n in the body of an `if __name__ == "__main__":` block, code no
 * importer runs? */
static bool under_main_guard(ol_model *m, ol_nid n)
{
    const ol_tree *t = m->tree;
    for (ol_nid a = n, p = ol_parent(t, n); p != OL_NONE; a = p, p = ol_parent(t, p)) {
        if (ol_kind_of(t, p) != OL_N_if_statement || ol_field(t, p, OL_F_consequence) != a)
            continue;
        ol_nid cond = ol_field(t, p, OL_F_condition);
        for (ol_nid x = cond; x != OL_NONE && x < m->subtree_end[cond]; x++)
            if (ol_kind_of(t, x) == OL_N_identifier && ol_text_is(t, x, "__name__"))
                return true;
    }
    return false;
}

/* Is call's callee a function of another file of the run that neither
 * backwards nor steps an optimizer (an evaluation helper may put the model
 * back in training mode when it is done: that trains nothing)? */
static bool callee_elsewhere_trains_nothing(ol_model *m, ol_nid call)
{
    uint32_t ci = ol_call_at(m, call);
    if (ci == OL_NO_INDEX || !m->links || !m->links->call_facts)
        return false;
    uint32_t facts = m->links->call_facts(m->links, m, ci);
    return (facts & OL_FN_KNOWN) && !(facts & (OL_FN_BACKWARD | OL_FN_STEP));
}

/* Built-ins that read an object and keep nothing of it (`print(net)`,
 * `len(x)`, `isinstance(net, nn.DataParallel)`). */
static bool keeps_nothing(ol_model *m, ol_nid call)
{
    static const char *const readers[] = {"builtins.print", "builtins.len",        "builtins.str",
                                          "builtins.repr",  "builtins.format",     "builtins.isinstance",
                                          "builtins.type",  "builtins.id",         "builtins.hasattr",
                                          "builtins.callable", NULL};
    ol_nid callee = ol_field(m->tree, call, OL_F_function);
    const char *q = callee != OL_NONE && ol_kind_of(m->tree, callee) == OL_N_identifier ? ol_qualname(m, callee) : NULL;
    for (const char *const *r = readers; q && *r; r++)
        if (strcmp(q, *r) == 0)
            return true;
    return false;
}

/* Are a and b in two branches of one `if` (its body and an `elif` or
 * `else`, or two of those): never both run in one pass? */
static bool exclusive_branches(const ol_model *m, ol_nid a, ol_nid b)
{
    const ol_tree *t = m->tree;
    for (ol_nid ca = a, pa = ol_parent(t, a); pa != OL_NONE; ca = pa, pa = ol_parent(t, pa)) {
        if (b <= pa || b >= m->subtree_end[pa])
            continue; /* b is not under pa: further up */
        if (ol_kind_of(t, pa) != OL_N_if_statement)
            return false;
        /* pa is the lowest `if` holding both: the child of it that holds b */
        ol_nid cb = b;
        while (ol_parent(t, cb) != pa)
            cb = ol_parent(t, cb);
        ol_kind ka = ol_kind_of(t, ca), kb = ol_kind_of(t, cb);
        bool branch_a = ca == ol_field(t, pa, OL_F_consequence) || ka == OL_N_elif_clause || ka == OL_N_else_clause;
        bool branch_b = cb == ol_field(t, pa, OL_F_consequence) || kb == OL_N_elif_clause || kb == OL_N_else_clause;
        return ca != cb && branch_a && branch_b;
    }
    return false;
}

/* May the model bound to name at target leave the code that binds it: is
 * the name, anywhere in that function (the whole file for a module-level
 * binding), used other than called (`net(x)`), read through an attribute
 * (`net.eval()`, `net.module`) or bound again? Handed as an argument, put
 * in a container or another object (`Munch(generator=net)`, `nets.fan =
 * net`), aliased or returned, it may reach a trainer elsewhere. */
static bool name_may_leave(ol_model *m, ol_nid target, ol_sym name)
{
    const ol_tree *t = m->tree;
    uint32_t fi = ol_function_of(m, target);
    ol_nid stmt = ol_statement_of(t, target);
    if (fi == OL_NO_INDEX && !m->src->notebook && !under_main_guard(m, target))
        return true; /* a module's global: another file may import it */
    ol_nid from = fi != OL_NO_INDEX ? m->functions.items[fi].node : 0;
    ol_nid to = fi != OL_NO_INDEX ? m->subtree_end[from] : (ol_nid)t->nodes.len;
    /* in a function and outside loops, the binding reaches only what
     * follows it, up to the name's next binding in the same block (a
     * module's functions read its globals from anywhere) */
    bool straight = fi != OL_NO_INDEX && stmt != OL_NONE && m->node_loop[stmt] == OL_NO_INDEX;
    if (straight)
        from = m->subtree_end[stmt];
    size_t count;
    const ol_nid *uses = ol_name_uses(m, target, from, to, &count, NULL);
    for (size_t u = 0; u < count; u++) {
        ol_nid v = uses[u];
        if (stmt != OL_NONE && v >= stmt && v < m->subtree_end[stmt])
            continue; /* the binding itself: `net = DataParallel(net)` */
        if (v == target || ol_kind_of(t, v) != OL_N_identifier || ol_node_sym(m, v) != name)
            continue;
        /* the other branch of the `if` that binds it (`else: net =
         * DataParallel(net)` where CUDA is not available) reads another
         * binding */
        if (straight && exclusive_branches(m, stmt, v))
            continue;
        uint8_t field = ol_node_at(t, v)->field;
        ol_nid p = ol_parent(t, v);
        if (field == OL_F_attribute || p == OL_NONE)
            continue; /* `x.net`: another thing */
        ol_kind pk = ol_kind_of(t, p);
        if ((pk == OL_N_assignment || pk == OL_N_augmented_assignment) && field == OL_F_left) {
            ol_nid again = ol_statement_of(t, v);
            if (straight && pk == OL_N_assignment && again != OL_NONE && ol_parent(t, again) == ol_parent(t, stmt))
                break; /* bound anew: what follows reads that */
            continue;
        }
        if ((pk == OL_N_call && field == OL_F_function) || (pk == OL_N_attribute && field == OL_F_object) ||
            (pk == OL_N_keyword_argument && field == OL_F_name))
            continue;
        /* an argument of a function of this file, where nothing trains
         * (`validate(net, loader)`) */
        ol_nid arg = pk == OL_N_keyword_argument ? p : v;
        ol_nid list = ol_parent(t, arg);
        ol_nid call = list != OL_NONE && ol_kind_of(t, list) == OL_N_argument_list ? ol_parent(t, list) : OL_NONE;
        if (call != OL_NONE && ol_kind_of(t, call) == OL_N_call && ol_callee_function(m, call) != OL_NO_INDEX)
            continue;
        /* or of another file of the run, which neither backwards nor steps
         * (`evaluate(net, loader)` imported from the project's utilities),
         * or a built-in that only reads it (`print(net)`) */
        if (call != OL_NONE && ol_kind_of(t, call) == OL_N_call &&
            (callee_elsewhere_trains_nothing(m, call) || keeps_nothing(m, call)))
            continue;
        return true;
    }
    return false;
}

bool ol_wrapper_stays_untrained(ol_model *m, ol_nid n, ol_reasons *why)
{
    const ol_tree *t = m->tree;
    if (n == OL_NONE)
        return false;
    ol_door *d = ol_door_of(m);
    if (d->file_trains == 0)
        d->file_trains = file_trains(m) ? 1 : 2;
    if (d->file_trains == 1)
        return false;
    ol_nid stmt = ol_statement_of(t, n);
    if (stmt == OL_NONE || ol_kind_of(t, stmt) == OL_N_return_statement)
        return false; /* handed to the caller */
    /* bound to a name the function does not return: `self.model = ...`, a
     * subscript or an argument (`run(DataParallel(net))`) may reach a
     * trainer elsewhere */
    ol_nid a = ol_first_named(t, stmt);
    if (a == OL_NONE || ol_kind_of(t, a) != OL_N_assignment)
        return false;
    ol_nid left = ol_field(t, a, OL_F_left);
    if (left == OL_NONE || ol_kind_of(t, left) != OL_N_identifier || name_may_leave(m, left, ol_node_sym(m, left)))
        return false;
    ol_because(why, m, n,
               "nothing in this file computes gradients (no backward, optimizer step or trainer) and the model "
               "reaches no code that does: evaluation or sampling, where the gather holds outputs only");
    return true;
}
