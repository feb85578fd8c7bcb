/*
 * dataflow.c - the bindings that reach a use (ol_reaching_defs, the
 * evaluator's way from a name to its values), and from them value sources,
 * None on a path and debugging branches (see dataflow.h). Everything here
 * reads the model's bindings and the tree, never a value, so the evaluator
 * above may ask it. The bounds are small: these answers guide precision
 * decisions, and an answer cut short errs towards "not shown", never
 * towards a finding.
 */
#include "dataflow.h"

#include <string.h>

/* ---- reaching definitions ---------------------------------------------------- */

/* Does def d's statement run whenever control reaches `at`? False when it
 * sits in a branch (if/else, except, loop body, ...) that `at` is not in. */
static bool dominates(const ol_model *m, const ol_def *d, ol_nid at)
{
    const ol_tree *t = m->tree;
    ol_nid scope_node = m->scopes.items[d->scope].node;
    for (ol_nid a = d->stmt; a != OL_NONE && a != scope_node; a = ol_parent(t, a)) {
        ol_nid p = ol_parent(t, a);
        if (p == OL_NONE)
            break;
        ol_kind pk = ol_kind_of(t, p);
        bool conditional = false;
        switch (pk) {
        case OL_N_if_statement:
        case OL_N_elif_clause:
        case OL_N_else_clause:
        case OL_N_except_clause:
        case OL_N_for_statement:
        case OL_N_while_statement:
        case OL_N_case_clause:
        case OL_N_conditional_expression:
        case OL_N_boolean_operator:
            conditional = ol_kind_of(t, a) == OL_N_block || pk == OL_N_conditional_expression ||
                          pk == OL_N_boolean_operator;
            if (pk == OL_N_for_statement && ol_kind_of(t, a) != OL_N_block)
                conditional = false; /* the loop header itself */
            break;
        default:
            break;
        }
        if (conditional && !ol_contains(t, a, at))
            return false;
    }
    return true;
}

/* Built for every chain at once the first time one is asked for after defs
 * were added. */
size_t ol_def_chain(ol_model *m, uint32_t head, const uint32_t **out)
{
    if (m->chains_built != m->defs.len) {
        free(m->chain_items);
        free(m->chain_start);
        free(m->chain_count);
        m->chain_items = ol_xmalloc((m->defs.len + 1) * sizeof(uint32_t));
        m->chain_start = ol_xmalloc((m->defs.len + 1) * sizeof(uint32_t));
        m->chain_count = ol_xcalloc(m->defs.len + 1, sizeof(uint32_t));
        size_t at = 0;
        for (size_t slot = 0; slot < m->def_slots; slot++) {
            if (!m->def_keys[slot])
                continue;
            uint32_t first = m->def_heads[slot];
            size_t begin = at;
            for (uint32_t d = first; d != OL_NO_INDEX; d = m->defs.items[d].next)
                m->chain_items[at++] = d;
            m->chain_start[first] = (uint32_t)begin;
            m->chain_count[first] = (uint32_t)(at - begin);
        }
        m->chains_built = m->defs.len;
    }
    if (head >= m->defs.len) {
        *out = NULL;
        return 0;
    }
    *out = m->chain_items + m->chain_start[head];
    return m->chain_count[head];
}

static bool scope_binds(const ol_model *m, uint32_t scope, ol_sym name)
{
    return ol_scope_defs(m, scope, name) != OL_NO_INDEX;
}

size_t ol_reaching_defs(ol_model *m, uint32_t scope, ol_sym name, ol_nid at, uint32_t *out, size_t cap)
{
    const ol_tree *t = m->tree;
    size_t count = 0;
    /* Python scoping: a name assigned anywhere in a function is local to it;
     * otherwise it comes from an enclosing function or the module (class
     * bodies are skipped for code nested in them). */
    uint32_t s = scope;
    bool first = true;
    while (s != OL_NO_INDEX) {
        const ol_scope *sc = &m->scopes.items[s];
        if (!first && sc->kind == OL_SCOPE_CLASS) {
            s = sc->parent;
            continue;
        }
        bool is_global = false;
        /* `global x` at module level (legal, if pointless) names this very
         * scope: following it would loop here forever */
        for (size_t i = 0; i < sc->globals.len && s != 0; i++)
            if (sc->globals.items[i] == name)
                is_global = true;
        if (is_global) {
            s = 0;
            first = false;
            continue;
        }
        if (scope_binds(m, s, name))
            break;
        s = sc->parent;
        first = false;
    }
    if (s == OL_NO_INDEX)
        return 0;
    uint32_t head = ol_scope_defs(m, s, name);
    if (!first || s != scope) {
        /* a free variable: any binding in the outer scope may be the one seen
         * when the inner code runs */
        for (uint32_t d = head; d != OL_NO_INDEX && count < cap; d = m->defs.items[d].next)
            out[count++] = d;
        return count;
    }
    uint32_t pos = ol_node_at(t, at)->start;
    /* the chain of (scope, name), in pos order, as an array: a name bound
     * thousands of times in one scope is looked up by binary search */
    const uint32_t *chain;
    size_t chain_len = ol_def_chain(m, head, &chain);
    size_t lo = 0, hi = chain_len;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (m->defs.items[chain[mid]].pos > pos)
            hi = mid;
        else
            lo = mid + 1;
    }
    size_t visible = lo; /* chain[0, visible): defs visible before `at` */
    /* defs visible before `at`, latest first (the last 256 of them), until
     * one that surely ran */
    size_t oldest = visible > 256 ? visible - 256 : 0;
    uint32_t dominating = OL_NO_INDEX;
    for (size_t i = visible; i-- > oldest && count < cap;) {
        const ol_def *d = &m->defs.items[chain[i]];
        if (d->kind == OL_DEF_DELETE && dominates(m, d, at))
            break;
        out[count++] = chain[i];
        if (dominates(m, d, at)) {
            dominating = chain[i];
            break;
        }
    }
    /* loop-carried: defs later in an enclosing loop reach `at` through the
     * back edge, unless a def in the same iteration already dominates */
    for (uint32_t l = m->node_loop[at]; l != OL_NO_INDEX && count < cap; l = m->loops.items[l].parent) {
        const ol_loop *loop = &m->loops.items[l];
        if (m->loops.items[l].scope != s && loop->kind != OL_LOOP_COMPREHENSION)
            break;
        if (dominating != OL_NO_INDEX && ol_contains(t, loop->node, m->defs.items[dominating].stmt))
            break;
        /* the defs after `at` in the loop, latest first, until one that runs on
         * every iteration: it is the last word before the back edge */
        uint32_t later[64];
        size_t nl = 0;
        uint32_t loop_end = ol_node_at(t, loop->node)->end;
        for (size_t i = visible; i < chain_len && nl < OL_ARRAY_LEN(later); i++) {
            const ol_def *def = &m->defs.items[chain[i]];
            if (def->pos > loop_end)
                break; /* sorted by pos: the rest lie after the loop */
            if (ol_contains(t, loop->node, def->stmt))
                later[nl++] = chain[i];
        }
        bool killed = false;
        for (size_t k = nl; k-- > 0 && count < cap;) {
            const ol_def *def = &m->defs.items[later[k]];
            if (def->kind != OL_DEF_DELETE)
                out[count++] = later[k];
            if (loop->body != OL_NONE && dominates(m, def, loop->body)) {
                killed = true;
                break;
            }
        }
        if (killed)
            break;
    }
    return count;
}

#define SOURCES_MAX_EXPRS 64
#define NONE_MAX_DEPTH 4

static bool listed_def(const uint32_t *defs, size_t n, uint32_t d)
{
    for (size_t i = 0; i < n; i++)
        if (defs[i] == d)
            return true;
    return false;
}

/* Identifiers whose value flows on: not attribute names, not keyword
 * names, not a value cut from its history (`x.detach()`, `x.data`,
 * `x.item()`, `x.tolist()`). */
static bool reads_variable(const ol_tree *t, ol_nid n)
{
    if (ol_kind_of(t, n) != OL_N_identifier)
        return false;
    ol_field_id f = (ol_field_id)ol_node_at(t, n)->field;
    if (f == OL_F_attribute)
        return false;
    ol_nid p = ol_parent(t, n);
    if (f == OL_F_name && ol_kind_of(t, p) == OL_N_keyword_argument)
        return false;
    if (f == OL_F_object && ol_kind_of(t, p) == OL_N_attribute) {
        ol_nid attr = ol_field(t, p, OL_F_attribute);
        if (ol_text_is(t, attr, "detach") || ol_text_is(t, attr, "data") || ol_text_is(t, attr, "item") ||
            ol_text_is(t, attr, "tolist"))
            return false;
    }
    return true;
}

size_t ol_value_sources(ol_model *m, ol_nid expr, uint32_t *out, size_t cap)
{
    const ol_tree *t = m->tree;
    if (expr == OL_NONE || cap == 0)
        return 0;
    ol_nid work[SOURCES_MAX_EXPRS];
    size_t nwork = 0, count = 0;
    work[nwork++] = expr;
    for (size_t w = 0; w < nwork && count < cap; w++) {
        ol_nid e = work[w];
        for (ol_nid n = e; n < m->subtree_end[e] && count < cap; n++) {
            if (!reads_variable(t, n))
                continue;
            uint32_t defs[8];
            size_t nd = ol_reaching_defs(m, m->node_scope[n], ol_node_sym(m, n), n, defs, 8);
            for (size_t k = 0; k < nd && count < cap; k++) {
                if (listed_def(out, count, defs[k]))
                    continue;
                out[count++] = defs[k];
                const ol_def *d = &m->defs.items[defs[k]];
                bool flows = d->kind == OL_DEF_ASSIGN || d->kind == OL_DEF_AUGASSIGN ||
                             d->kind == OL_DEF_WALRUS || d->kind == OL_DEF_WITH;
                if (flows && d->value != OL_NONE && nwork < SOURCES_MAX_EXPRS)
                    work[nwork++] = d->value;
            }
        }
    }
    return count;
}

/* The truth of a condition known from the source alone: True or False, a
 * local bound only to one of them (`cpu_offload = True`), an attribute of a
 * local built by a call that sets it by that keyword to one of them
 * (`options = StateDictOptions(cpu_offload=True)`, then
 * `options.cpu_offload`), or `not` of those. 1 true, 0 false, -1 unknown. */
static int known_truth(ol_model *m, ol_nid e, int depth)
{
    const ol_tree *t = m->tree;
    e = ol_unparen(t, e);
    if (e == OL_NONE || depth > NONE_MAX_DEPTH)
        return -1;
    ol_kind k = ol_kind_of(t, e);
    if (k == OL_N_true)
        return 1;
    if (k == OL_N_false)
        return 0;
    if (k == OL_N_not_operator) {
        int v = known_truth(m, ol_field(t, e, OL_F_argument), depth + 1);
        return v < 0 ? -1 : !v;
    }
    ol_nid name = e, attr = OL_NONE;
    if (k == OL_N_attribute) {
        name = ol_unparen(t, ol_field(t, e, OL_F_object));
        attr = ol_field(t, e, OL_F_attribute);
    }
    if (name == OL_NONE || ol_kind_of(t, name) != OL_N_identifier)
        return -1;
    uint32_t defs[8];
    size_t nd = ol_reaching_defs(m, m->node_scope[name], ol_node_sym(m, name), name, defs, 8);
    int truth = -1;
    for (size_t i = 0; i < nd; i++) {
        const ol_def *d = &m->defs.items[defs[i]];
        if (d->kind != OL_DEF_ASSIGN || d->path_len != 0 || d->starred || d->value == OL_NONE)
            return -1;
        ol_nid v = ol_unparen(t, d->value);
        if (attr != OL_NONE) {
            if (ol_kind_of(t, v) != OL_N_call)
                return -1;
            uint32_t len;
            const char *a = ol_text(t, attr, &len);
            char key[64];
            if (len >= sizeof(key))
                return -1;
            memcpy(key, a, len);
            key[len] = '\0';
            v = ol_call_arg(m, v, -1, key);
            if (v == OL_NONE)
                return -1;
        }
        int here = ol_kind_of(t, v) == OL_N_true ? 1 : ol_kind_of(t, v) == OL_N_false ? 0 : -1;
        if (here < 0 || (truth >= 0 && here != truth))
            return -1;
        truth = here;
    }
    return truth;
}

static bool may_be_none(ol_model *m, ol_nid e, int depth)
{
    const ol_tree *t = m->tree;
    e = ol_unparen(t, e);
    if (e == OL_NONE || depth > NONE_MAX_DEPTH)
        return false;
    ol_kind k = ol_kind_of(t, e);
    if (k == OL_N_none)
        return true;
    if (k == OL_N_conditional_expression) {
        /* `a if test else b`: the branch the test picks, when it is known */
        int truth = known_truth(m, ol_named_child(t, e, 1), 0);
        if (truth >= 0)
            return may_be_none(m, ol_named_child(t, e, truth ? 0 : 2), depth + 1);
        for (ol_nid c = ol_first_named(t, e); c != OL_NONE; c = ol_next_named(t, c))
            if (c != ol_named_child(t, e, 1) && may_be_none(m, c, depth + 1))
                return true; /* a branch, not the test */
        return false;
    }
    if (k != OL_N_identifier)
        return false;
    uint32_t defs[8];
    size_t nd = ol_reaching_defs(m, m->node_scope[e], ol_node_sym(m, e), e, defs, 8);
    for (size_t i = 0; i < nd; i++) {
        const ol_def *d = &m->defs.items[defs[i]];
        if ((d->kind == OL_DEF_ASSIGN || d->kind == OL_DEF_WALRUS) && d->path_len == 0 && !d->starred &&
            may_be_none(m, d->value, depth + 1))
            return true;
    }
    return false;
}

bool ol_may_be_none(ol_model *m, ol_nid expr)
{
    return may_be_none(m, expr, 0);
}

static const char *const DEBUG_WORDS[] = {"debug", "debugging", "anomaly", "anomalies", "detect", "nan",
                                          "nans", "sanity", NULL};

/* Does an expression name debugging: an identifier or attribute name, or a
 * plain string (`os.environ.get("DEBUG")`), made of a debugging word? */
static bool names_debugging(ol_model *m, ol_nid e)
{
    const ol_tree *t = m->tree;
    for (ol_nid n = e; n < m->subtree_end[e]; n++) {
        ol_kind k = ol_kind_of(t, n);
        const char *s;
        uint32_t len;
        if (k == OL_N_identifier) {
            s = ol_text(t, n, &len);
        } else if (k == OL_N_string) {
            if (!ol_string_value(t, n, &s, &len))
                continue;
        } else {
            continue;
        }
        if (ol_name_looks_like(s, len, DEBUG_WORDS))
            return true;
    }
    return false;
}

bool ol_in_debug_branch(ol_model *m, ol_nid n)
{
    const ol_tree *t = m->tree;
    for (ol_nid a = n, p = ol_parent(t, n); p != OL_NONE; a = p, p = ol_parent(t, p)) {
        ol_kind pk = ol_kind_of(t, p);
        if ((pk == OL_N_if_statement || pk == OL_N_elif_clause) && ol_field(t, p, OL_F_consequence) == a) {
            ol_nid test = ol_field(t, p, OL_F_condition);
            if (test != OL_NONE && names_debugging(m, test))
                return true;
        }
        if (pk == OL_N_conditional_expression && ol_named_child(t, p, 0) == a) {
            ol_nid test = ol_named_child(t, p, 1);
            if (test != OL_NONE && names_debugging(m, test))
                return true;
        }
        if (pk == OL_N_function_definition || pk == OL_N_class_definition) {
            ol_nid name = ol_field(t, p, OL_F_name);
            uint32_t len;
            const char *s = name != OL_NONE ? ol_text(t, name, &len) : NULL;
            if (s && ol_name_looks_like(s, len, DEBUG_WORDS))
                return true;
        }
    }
    return false;
}

/* ---- uses of a container ---------------------------------------------------- */

static bool adds_to(const ol_tree *t, ol_nid method)
{
    static const char *const adders[] = {"append", "extend", "insert", "add", "update", "setdefault", "__setitem__",
                                         NULL};
    for (const char *const *a = adders; *a; a++)
        if (ol_text_is(t, method, *a))
            return true;
    return false;
}

/* What the use u of a container does with it. */
static ol_use classify_use(const ol_tree *t, ol_nid u)
{
    ol_use use = {OL_USE_READ, u, OL_NONE, OL_NONE, OL_NONE, OL_NONE};
    ol_nid p = ol_parent(t, u);
    ol_kind pk = p != OL_NONE ? ol_kind_of(t, p) : OL_N_module;
    if (pk == OL_N_attribute && ol_field(t, p, OL_F_object) == u) {
        ol_nid call = ol_parent(t, p), attr = ol_field(t, p, OL_F_attribute);
        if (call != OL_NONE && ol_kind_of(t, call) == OL_N_call && ol_field(t, call, OL_F_function) == p &&
            adds_to(t, attr)) {
            use.kind = OL_USE_ADD;
            use.call = call;
            use.method = attr;
        }
        return use;
    }
    if (pk == OL_N_subscript && ol_field(t, p, OL_F_value) == u) {
        ol_nid stmt = ol_parent(t, p);
        ol_kind sk = stmt != OL_NONE ? ol_kind_of(t, stmt) : OL_N_module;
        if ((sk == OL_N_assignment || sk == OL_N_augmented_assignment) && ol_field(t, stmt, OL_F_left) == p) {
            use.kind = OL_USE_STORE;
            use.key = ol_field(t, p, OL_F_subscript);
            use.value = ol_field(t, stmt, OL_F_right);
        }
        return use;
    }
    if ((pk == OL_N_assignment || pk == OL_N_augmented_assignment || pk == OL_N_for_statement) &&
        ol_field(t, p, OL_F_left) == u) {
        use.kind = OL_USE_REBOUND;
        return use;
    }
    /* inside a literal built around it: where the literal goes */
    ol_nid held = u;
    while (pk == OL_N_list || pk == OL_N_tuple || pk == OL_N_set || pk == OL_N_expression_list || pk == OL_N_pair ||
           pk == OL_N_dictionary || pk == OL_N_parenthesized_expression || pk == OL_N_list_splat ||
           pk == OL_N_dictionary_splat || (pk == OL_N_keyword_argument && ol_field(t, p, OL_F_value) == held)) {
        held = p;
        p = ol_parent(t, p);
        pk = p != OL_NONE ? ol_kind_of(t, p) : OL_N_module;
    }
    if (pk == OL_N_argument_list) {
        use.kind = OL_USE_PASSED;
        use.call = ol_parent(t, p);
    } else if ((pk == OL_N_assignment || pk == OL_N_augmented_assignment) && ol_field(t, p, OL_F_right) == held) {
        use.kind = OL_USE_ALIASED;
    }
    return use;
}

bool ol_container_uses(ol_model *m, uint32_t def, ol_use_visitor fn, void *ctx)
{
    const ol_tree *t = m->tree;
    if (def >= m->defs.len)
        return false;
    const ol_def *d = &m->defs.items[def];
    ol_nid root = m->scopes.items[d->scope].node;
    ol_nid end = m->subtree_end[root];
    if (end - root > 50000)
        return false; /* not worth the walk */
    for (ol_nid u = root; u < end; u++) {
        if (ol_kind_of(t, u) != OL_N_identifier || ol_node_at(t, u)->field == OL_F_attribute ||
            ol_node_sym(m, u) != d->name || m->node_scope[u] != d->scope || u == d->target)
            continue;
        ol_use use = classify_use(t, u);
        if (!fn(ctx, &use))
            return false;
    }
    return true;
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
