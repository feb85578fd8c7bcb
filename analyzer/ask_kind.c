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

#include <stdlib.h>
#include <string.h>

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

#define KIND_COMPUTING 0xFF

static ol_code_kind function_kind(ol_model *m, uint32_t fi, bool test_module, int depth)
{
    ol_door *d = ol_door_of(m);
    if (d->kind[fi] == KIND_COMPUTING)
        return OL_CODE_OTHER; /* a cycle: the other callers decide */
    if (d->kind[fi])
        return (ol_code_kind)(d->kind[fi] - 1);
    d->kind[fi] = KIND_COMPUTING;
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
    d->kind[fi] = (uint8_t)(k + 1);
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
    return k;
}
