/*
 * model.c - building the semantic model: one recursive walk over the tree
 * records scopes, bindings, imports, functions, classes, loops and the facts
 * rules read (ol_model_bind), with the lookups that need no values (a call's
 * arguments, a node's function, the call sites syntax shows). What needs
 * values (with-contexts, method call sites, bindings that reach .backward())
 * is resolved after, by resolve.c, which ol_model_build runs.
 *
 * The walk recurses with an explicit depth bound (OL_MODEL_MAX_DEPTH): deeper
 * subtrees are skipped and the model is marked truncated, so a pathological
 * file costs neither a crash nor a hang. Nothing here evaluates a value:
 * model.c is the bottom of the engine's layers, above only the syntax.
 */
#include "model.h"

#include <stdlib.h>
#include <string.h>

typedef struct builder {
    ol_model *m;
    const ol_tree *t;
    uint32_t scope;
    uint32_t loop;
    uint32_t function;
    uint32_t cls;
} builder;

ol_sym ol_model_intern(ol_model *m, const char *s)
{
    return ol_intern_cstr(&m->strings, s);
}

/* Interned once per node: the analyses ask for the same names' symbols
 * again and again, and each interning hashes and compares the text. */
ol_sym ol_node_sym(ol_model *m, ol_nid n)
{
    if (!m->node_sym && m->tree->nodes.len)
        m->node_sym = ol_xcalloc(m->tree->nodes.len, sizeof(ol_sym));
    if (n < m->tree->nodes.len && m->node_sym[n])
        return m->node_sym[n];
    uint32_t len;
    const char *s = ol_text(m->tree, n, &len);
    ol_sym sym = ol_intern(&m->strings, s, len);
    if (n < m->tree->nodes.len)
        m->node_sym[n] = sym;
    return sym;
}

void ol_model_trim(ol_model *m)
{
    free(m->node_sym);
    m->node_sym = NULL;
}

const char *ol_sym_str(const ol_model *m, ol_sym s)
{
    return ol_interned(&m->strings, s);
}

/* ---- the (scope, name) -> defs table ------------------------------------ */

static uint64_t def_key(uint32_t scope, ol_sym name)
{
    return ((uint64_t)(scope + 1) << 32) | name;
}

/* The scope sits in the key's high half: the product's high bits are
 * folded into the low ones, or every scope's `x` would share one slot and
 * a lookup that misses would walk the cluster of them all. */
static size_t def_slot(const ol_model *m, uint64_t key)
{
    size_t mask = m->def_slots - 1;
    uint64_t h = key * 0x9E3779B97F4A7C15ull;
    size_t i = (size_t)(h ^ (h >> 29) ^ (h >> 47)) & mask;
    while (m->def_keys[i] != 0 && m->def_keys[i] != key)
        i = (i + 1) & mask;
    return i;
}

static void def_table_grow(ol_model *m)
{
    size_t old_slots = m->def_slots;
    uint64_t *old_keys = m->def_keys;
    uint32_t *old_heads = m->def_heads, *old_tails = m->def_tails;
    m->def_slots = old_slots ? old_slots * 2 : 1024;
    m->def_keys = ol_xcalloc(m->def_slots, sizeof(uint64_t));
    m->def_heads = ol_xmalloc(m->def_slots * sizeof(uint32_t));
    m->def_tails = ol_xmalloc(m->def_slots * sizeof(uint32_t));
    for (size_t i = 0; i < old_slots; i++) {
        if (!old_keys[i])
            continue;
        size_t s = def_slot(m, old_keys[i]);
        m->def_keys[s] = old_keys[i];
        m->def_heads[s] = old_heads[i];
        m->def_tails[s] = old_tails[i];
    }
    free(old_keys);
    free(old_heads);
    free(old_tails);
}

uint32_t ol_scope_defs(const ol_model *m, uint32_t scope, ol_sym name)
{
    if (!m->def_slots)
        return OL_NO_INDEX;
    size_t s = def_slot(m, def_key(scope, name));
    return m->def_keys[s] ? m->def_heads[s] : OL_NO_INDEX;
}

static uint32_t add_def(builder *b, ol_def d)
{
    ol_model *m = b->m;
    d.next = OL_NO_INDEX;
    uint32_t id = (uint32_t)m->defs.len;
    ol_vec_push(&m->defs, d);
    if ((m->defs.len + 1) * 2 > m->def_slots)
        def_table_grow(m);
    uint64_t key = def_key(d.scope, d.name);
    size_t s = def_slot(m, key);
    if (!m->def_keys[s]) {
        m->def_keys[s] = key;
        m->def_heads[s] = id;
        m->def_tails[s] = id;
    } else {
        /* defs arrive in walk order, which is textual order except that a
         * binding's visible position can trail its statement's start; keep
         * the chain sorted by pos */
        uint32_t tail = m->def_tails[s];
        if (m->defs.items[tail].pos <= d.pos) {
            m->defs.items[tail].next = id;
            m->def_tails[s] = id;
        } else {
            uint32_t *link = &m->def_heads[s];
            while (*link != OL_NO_INDEX && m->defs.items[*link].pos <= d.pos)
                link = &m->defs.items[*link].next;
            m->defs.items[id].next = *link;
            *link = id;
        }
    }
    return id;
}

/* ---- scopes -------------------------------------------------------------- */

static uint32_t push_scope(builder *b, ol_scope_kind kind, ol_nid node)
{
    ol_scope s = {0};
    s.kind = kind;
    s.node = node;
    s.parent = b->scope;
    s.function = OL_NO_INDEX;
    s.cls = OL_NO_INDEX;
    ol_vec_push(&b->m->scopes, s);
    return (uint32_t)b->m->scopes.len - 1;
}

/* ---- binding targets ------------------------------------------------------ */

typedef struct bind_info {
    ol_def_kind kind;
    ol_nid value;
    ol_nid stmt;
    uint32_t pos;
    ol_nid annotation;
} bind_info;

/* Is `n` the `self` parameter of the enclosing method? */
static bool is_self_name(builder *b, ol_nid n)
{
    if (ol_kind_of(b->t, n) != OL_N_identifier || b->function == OL_NO_INDEX)
        return false;
    const ol_function *f = &b->m->functions.items[b->function];
    /* nested functions inside a method see the method's self as a closure */
    uint32_t fi = b->function;
    while (fi != OL_NO_INDEX) {
        f = &b->m->functions.items[fi];
        if (f->is_method && f->params.len > 0) {
            const ol_def *self = &b->m->defs.items[f->params.items[0]];
            return ol_node_sym(b->m, n) == self->name;
        }
        uint32_t outer = b->m->scopes.items[f->outer_scope].function;
        if (outer == fi)
            break;
        fi = outer;
    }
    return false;
}

static uint32_t method_class(builder *b)
{
    uint32_t fi = b->function;
    while (fi != OL_NO_INDEX) {
        const ol_function *f = &b->m->functions.items[fi];
        if (f->is_method)
            return f->cls;
        fi = b->m->scopes.items[f->outer_scope].function;
    }
    return OL_NO_INDEX;
}

static void bind(builder *b, ol_nid target, const bind_info *info, int8_t *path, uint8_t path_len,
                 bool starred)
{
    const ol_tree *t = b->t;
    ol_model *m = b->m;
    target = ol_unparen(t, target);
    if (target == OL_NONE)
        return;
    switch (ol_kind_of(t, target)) {
    case OL_N_identifier: {
        ol_def d = {0};
        d.name = ol_node_sym(m, target);
        d.kind = info->kind;
        d.scope = b->scope;
        d.target = target;
        d.value = info->value;
        d.stmt = info->stmt;
        d.pos = info->pos;
        d.annotation = info->annotation;
        d.index = OL_NO_INDEX;
        d.path_len = path_len;
        memcpy(d.path, path, path_len);
        d.starred = starred;
        /* `global x` makes the binding a module-level one */
        const ol_scope *sc = &m->scopes.items[b->scope];
        for (size_t i = 0; i < sc->globals.len; i++)
            if (sc->globals.items[i] == d.name)
                d.scope = 0;
        add_def(b, d);
        break;
    }
    case OL_N_pattern_list:
    case OL_N_tuple_pattern:
    case OL_N_list_pattern:
    case OL_N_tuple:
    case OL_N_list:
    case OL_N_expression_list: {
        int8_t i = 0;
        for (ol_nid c = ol_first_named(t, target); c != OL_NONE; c = ol_next_named(t, c), i++) {
            if (path_len >= OL_PATH_MAX)
                break;
            path[path_len] = i;
            ol_kind ck = ol_kind_of(t, c);
            if (ck == OL_N_list_splat_pattern || ck == OL_N_list_splat)
                bind(b, ol_first_named(t, c), info, path, (uint8_t)(path_len + 1), true);
            else
                bind(b, c, info, path, (uint8_t)(path_len + 1), false);
        }
        break;
    }
    case OL_N_list_splat_pattern:
    case OL_N_list_splat:
        bind(b, ol_first_named(t, target), info, path, path_len, true);
        break;
    case OL_N_attribute: {
        ol_nid obj = ol_field(t, target, OL_F_object);
        ol_nid attr = ol_field(t, target, OL_F_attribute);
        uint32_t cls = method_class(b);
        if (cls != OL_NO_INDEX && attr != OL_NONE && is_self_name(b, obj)) {
            ol_def d = {0};
            d.name = ol_node_sym(m, attr);
            d.kind = info->kind;
            d.scope = m->classes.items[cls].scope;
            d.target = target;
            d.value = info->value;
            d.stmt = info->stmt;
            d.pos = info->pos;
            d.index = OL_NO_INDEX;
            d.path_len = path_len;
            memcpy(d.path, path, path_len);
            d.starred = starred;
            d.next = OL_NO_INDEX;
            /* attribute defs live in the class's table, not in a scope chain:
             * their order across methods says nothing about run order */
            uint32_t id = (uint32_t)m->defs.len;
            ol_vec_push(&m->defs, d);
            ol_vec_push(&m->classes.items[cls].attr_defs, id);
        }
        break;
    }
    case OL_N_subscript:
        break; /* recorded as a subscript store by the caller */
    default:
        break;
    }
}

static void bind_simple(builder *b, ol_nid target, ol_def_kind kind, ol_nid value, ol_nid stmt, uint32_t pos)
{
    int8_t path[OL_PATH_MAX];
    bind_info info = {kind, value, stmt, pos, OL_NONE};
    bind(b, target, &info, path, 0, false);
}

/* ---- walk ------------------------------------------------------------------ */

static void visit(builder *b, ol_nid n, uint32_t depth);

static void mark(builder *b, ol_nid n)
{
    b->m->node_scope[n] = b->scope;
    b->m->node_loop[n] = b->loop;
}

static void visit_children(builder *b, ol_nid n, uint32_t depth)
{
    for (ol_nid c = ol_first(b->t, n); c != OL_NONE; c = ol_next(b->t, c))
        visit(b, c, depth + 1);
}

static void visit_all_but(builder *b, ol_nid n, ol_nid skip, uint32_t depth)
{
    for (ol_nid c = ol_first(b->t, n); c != OL_NONE; c = ol_next(b->t, c))
        if (c != skip)
            visit(b, c, depth + 1);
}

static ol_sym join_dotted(ol_model *m, ol_nid dotted)
{
    /* dotted_name text may contain spaces or comments in odd code; rebuild
     * from its identifiers */
    ol_buf buf = {0};
    for (ol_nid c = ol_first_named(m->tree, dotted); c != OL_NONE; c = ol_next_named(m->tree, c)) {
        uint32_t len;
        const char *s = ol_text(m->tree, c, &len);
        if (buf.len)
            ol_buf_putc(&buf, '.');
        ol_buf_add(&buf, s, len);
    }
    if (ol_kind_of(m->tree, dotted) == OL_N_identifier) {
        uint32_t len;
        const char *s = ol_text(m->tree, dotted, &len);
        ol_buf_add(&buf, s, len);
    }
    ol_sym sym = ol_intern(&m->strings, buf.data ? buf.data : "", buf.len);
    ol_buf_free(&buf);
    return sym;
}

static void add_import(builder *b, ol_nid stmt, ol_nid name_node, ol_sym qual, ol_nid bound_node,
                       ol_sym bound)
{
    ol_model *m = b->m;
    ol_def d = {0};
    d.name = bound;
    d.kind = OL_DEF_IMPORT;
    d.scope = b->scope;
    d.target = bound_node;
    d.value = OL_NONE;
    d.stmt = stmt;
    d.pos = ol_node_at(m->tree, stmt)->end;
    d.qual = qual;
    d.index = OL_NO_INDEX;
    d.annotation = OL_NONE;
    const ol_scope *sc = &m->scopes.items[b->scope];
    for (size_t i = 0; i < sc->globals.len; i++)
        if (sc->globals.items[i] == d.name)
            d.scope = 0;
    uint32_t id = add_def(b, d);
    ol_import imp = {stmt, name_node, qual, bound, id};
    ol_vec_push(&m->imports, imp);
}

static void visit_import(builder *b, ol_nid n)
{
    const ol_tree *t = b->t;
    ol_model *m = b->m;
    bool from = ol_kind_of(t, n) == OL_N_import_from_statement;
    ol_sym module = 0;
    ol_nid module_node = OL_NONE;
    if (from) {
        module_node = ol_field(t, n, OL_F_module_name);
        if (module_node == OL_NONE)
            return;
        if (ol_kind_of(t, module_node) == OL_N_relative_import) {
            uint32_t len;
            const char *s = ol_text(t, module_node, &len);
            module = ol_intern(&m->strings, s, len);
        } else {
            module = join_dotted(m, module_node);
        }
    }
    for (ol_nid c = ol_first(t, n); c != OL_NONE; c = ol_next(t, c)) {
        if (c == module_node)
            continue;
        ol_kind k = ol_kind_of(t, c);
        ol_nid name = OL_NONE, alias = OL_NONE;
        if (k == OL_N_dotted_name) {
            name = c;
        } else if (k == OL_N_aliased_import) {
            name = ol_field(t, c, OL_F_name);
            alias = ol_field(t, c, OL_F_alias);
        } else {
            continue;
        }
        if (name == OL_NONE)
            continue;
        ol_sym dotted = join_dotted(m, name);
        ol_sym qual = dotted;
        if (from) {
            const char *ms = ol_sym_str(m, module);
            const char *ds = ol_sym_str(m, dotted);
            size_t ml = strlen(ms);
            char *full = ol_xasprintf("%s%s%s", ms, (ml && ms[ml - 1] == '.') ? "" : ".", ds);
            qual = ol_model_intern(m, full);
            free(full);
        }
        ol_sym bound;
        ol_nid bound_node;
        if (alias != OL_NONE) {
            bound = ol_node_sym(m, alias);
            bound_node = alias;
        } else if (from) {
            bound = dotted;
            bound_node = name;
        } else {
            /* `import a.b.c` binds `a` */
            ol_nid first = ol_first_named(t, name);
            bound_node = first != OL_NONE ? first : name;
            bound = ol_node_sym(m, bound_node);
            if (first != OL_NONE && ol_next_named(t, first) != OL_NONE) {
                add_import(b, n, name, bound, bound_node, bound);
                /* remember the full path too, for rules that look at imports */
                ol_import imp = {n, name, qual, 0, OL_NO_INDEX};
                ol_vec_push(&m->imports, imp);
                continue;
            }
        }
        add_import(b, n, name, qual, bound_node, bound);
    }
}

static void visit_parameters(builder *b, ol_nid params, ol_function *f, uint32_t fn, uint32_t depth)
{
    const ol_tree *t = b->t;
    uint32_t index = 0;
    uint32_t body_pos = ol_node_at(t, params)->end;
    for (ol_nid p = ol_first(t, params); p != OL_NONE; p = ol_next(t, p)) {
        ol_kind k = ol_kind_of(t, p);
        ol_nid name = OL_NONE, value = OL_NONE, type = OL_NONE;
        bool starred = false;
        switch (k) {
        case OL_N_identifier:
            name = p;
            break;
        case OL_N_default_parameter:
            name = ol_field(t, p, OL_F_name);
            value = ol_field(t, p, OL_F_value);
            break;
        case OL_N_typed_parameter:
            name = ol_first_named(t, p);
            type = ol_field(t, p, OL_F_type);
            if (ol_kind_of(t, name) == OL_N_list_splat_pattern ||
                ol_kind_of(t, name) == OL_N_dictionary_splat_pattern) {
                name = ol_first_named(t, name);
                starred = true;
            }
            break;
        case OL_N_typed_default_parameter:
            name = ol_field(t, p, OL_F_name);
            value = ol_field(t, p, OL_F_value);
            type = ol_field(t, p, OL_F_type);
            break;
        case OL_N_list_splat_pattern:
        case OL_N_dictionary_splat_pattern:
            name = ol_first_named(t, p);
            starred = true;
            break;
        default:
            break;
        }
        /* defaults and annotations are evaluated in the enclosing scope */
        uint32_t inner = b->scope;
        b->scope = b->m->scopes.items[inner].parent;
        if (value != OL_NONE)
            visit(b, value, depth + 1);
        if (type != OL_NONE)
            visit(b, type, depth + 1);
        b->scope = inner;
        mark(b, p);
        if (name == OL_NONE || ol_kind_of(t, name) != OL_N_identifier)
            continue;
        mark(b, name);
        ol_def d = {0};
        d.name = ol_node_sym(b->m, name);
        d.kind = OL_DEF_PARAM;
        d.scope = b->scope;
        d.target = name;
        d.value = value;
        d.stmt = p;
        d.pos = body_pos;
        d.annotation = type;
        d.index = starred ? OL_NO_INDEX : index;
        d.starred = starred;
        uint32_t id = add_def(b, d);
        f = &b->m->functions.items[fn];
        ol_vec_push(&f->params, id);
        if (!starred)
            index++;
    }
}

static void visit_function(builder *b, ol_nid n, ol_nid decorated, uint32_t depth)
{
    const ol_tree *t = b->t;
    ol_model *m = b->m;
    bool lambda = ol_kind_of(t, n) == OL_N_lambda;
    ol_nid name = lambda ? OL_NONE : ol_field(t, n, OL_F_name);
    ol_nid params = ol_field(t, n, OL_F_parameters);
    ol_nid body = ol_field(t, n, OL_F_body);

    ol_function f = {0};
    f.node = n;
    f.decorated = decorated;
    f.name = name != OL_NONE ? ol_node_sym(m, name) : 0;
    f.outer_scope = b->scope;
    f.cls = OL_NO_INDEX;
    f.is_lambda = lambda;
    const ol_scope *outer = &m->scopes.items[b->scope];
    if (outer->kind == OL_SCOPE_CLASS && !lambda)
        f.cls = outer->cls;
    if (decorated != OL_NONE) {
        for (ol_nid d = ol_first_named(t, decorated); d != OL_NONE; d = ol_next_named(t, d)) {
            if (ol_kind_of(t, d) != OL_N_decorator)
                continue;
            ol_nid e = ol_first_named(t, d);
            if (ol_text_is(t, e, "staticmethod"))
                f.is_staticmethod = true;
            else if (ol_text_is(t, e, "classmethod"))
                f.is_classmethod = true;
        }
    }
    f.is_method = f.cls != OL_NO_INDEX && !f.is_staticmethod;
    uint32_t fn = (uint32_t)m->functions.len;
    ol_vec_push(&m->functions, f);
    if (f.cls != OL_NO_INDEX)
        ol_vec_push(&m->classes.items[f.cls].methods, fn);

    mark(b, n);
    if (name != OL_NONE) {
        mark(b, name);
        ol_def d = {0};
        d.name = f.name;
        d.kind = OL_DEF_FUNCTION;
        d.scope = b->scope;
        d.target = name;
        d.value = n;
        d.stmt = decorated != OL_NONE ? decorated : n;
        d.pos = ol_node_at(t, n)->end;
        d.index = fn;
        d.annotation = OL_NONE;
        /* methods are reached through the class, not as scope names */
        if (outer->kind == OL_SCOPE_CLASS) {
            d.next = OL_NO_INDEX;
            ol_vec_push(&m->classes.items[f.cls].attr_defs, (uint32_t)m->defs.len);
            ol_vec_push(&m->defs, d);
        } else {
            add_def(b, d);
        }
    }
    ol_nid ret = ol_field(t, n, OL_F_return_type);
    if (ret != OL_NONE)
        visit(b, ret, depth + 1);

    uint32_t saved_scope = b->scope, saved_loop = b->loop, saved_fn = b->function, saved_cls = b->cls;
    b->scope = push_scope(b, lambda ? OL_SCOPE_LAMBDA : OL_SCOPE_FUNCTION, n);
    m->scopes.items[b->scope].function = fn;
    m->functions.items[fn].scope = b->scope;
    b->function = fn;
    b->loop = OL_NO_INDEX;
    if (params != OL_NONE) {
        mark(b, params);
        visit_parameters(b, params, &m->functions.items[fn], fn, depth + 1);
    }
    /* `self` is known only once parameters exist */
    if (body != OL_NONE)
        visit(b, body, depth + 1);
    if (lambda && body != OL_NONE)
        ol_vec_push(&m->functions.items[fn].returns, body);
    b->scope = saved_scope;
    b->loop = saved_loop;
    b->function = saved_fn;
    b->cls = saved_cls;
}

static void visit_class(builder *b, ol_nid n, uint32_t depth)
{
    const ol_tree *t = b->t;
    ol_model *m = b->m;
    ol_nid name = ol_field(t, n, OL_F_name);
    ol_nid supers = ol_field(t, n, OL_F_superclasses);
    ol_nid body = ol_field(t, n, OL_F_body);
    mark(b, n);
    if (supers != OL_NONE)
        visit(b, supers, depth + 1);
    ol_class c = {0};
    c.node = n;
    c.name = name != OL_NONE ? ol_node_sym(m, name) : 0;
    c.module_state = -1;
    c.lightning_state = -1;
    if (supers != OL_NONE)
        for (ol_nid s = ol_first_named(t, supers); s != OL_NONE; s = ol_next_named(t, s))
            if (ol_kind_of(t, s) != OL_N_keyword_argument)
                ol_vec_push(&c.bases, s);
    uint32_t ci = (uint32_t)m->classes.len;
    ol_vec_push(&m->classes, c);
    if (name != OL_NONE) {
        mark(b, name);
        ol_def d = {0};
        d.name = m->classes.items[ci].name;
        d.kind = OL_DEF_CLASS;
        d.scope = b->scope;
        d.target = name;
        d.value = n;
        d.stmt = ol_kind_of(t, ol_parent(t, n)) == OL_N_decorated_definition ? ol_parent(t, n) : n;
        d.pos = ol_node_at(t, n)->end;
        d.index = ci;
        d.annotation = OL_NONE;
        add_def(b, d);
    }
    uint32_t saved_scope = b->scope, saved_cls = b->cls;
    b->scope = push_scope(b, OL_SCOPE_CLASS, n);
    m->scopes.items[b->scope].cls = ci;
    m->classes.items[ci].scope = b->scope;
    b->cls = ci;
    if (body != OL_NONE)
        visit(b, body, depth + 1);
    b->scope = saved_scope;
    b->cls = saved_cls;
}

static uint32_t push_loop(builder *b, ol_loop_kind kind, ol_nid node, ol_nid iter, ol_nid body)
{
    ol_loop l = {kind, node, iter, body, b->loop, b->scope, -1, -1};
    ol_vec_push(&b->m->loops, l);
    return (uint32_t)b->m->loops.len - 1;
}

static void visit_comprehension(builder *b, ol_nid n, uint32_t depth)
{
    const ol_tree *t = b->t;
    ol_model *m = b->m;
    mark(b, n);
    ol_nid body = ol_field(t, n, OL_F_body);
    /* the first iterable is evaluated in the enclosing scope, outside the loop */
    ol_nid first_clause = OL_NONE;
    for (ol_nid c = ol_first_named(t, n); c != OL_NONE; c = ol_next_named(t, c))
        if (ol_kind_of(t, c) == OL_N_for_in_clause) {
            first_clause = c;
            break;
        }
    ol_nid first_iter = first_clause != OL_NONE ? ol_field(t, first_clause, OL_F_right) : OL_NONE;
    if (first_iter != OL_NONE)
        visit(b, first_iter, depth + 1);
    uint32_t saved_scope = b->scope, saved_loop = b->loop;
    uint32_t loop = push_loop(b, OL_LOOP_COMPREHENSION, n, first_iter, body);
    b->scope = push_scope(b, OL_SCOPE_COMPREHENSION, n);
    m->loops.items[loop].scope = b->scope;
    b->loop = loop;
    for (ol_nid c = ol_first_named(t, n); c != OL_NONE; c = ol_next_named(t, c)) {
        if (ol_kind_of(t, c) == OL_N_for_in_clause) {
            mark(b, c);
            ol_nid left = ol_field(t, c, OL_F_left);
            ol_nid right = ol_field(t, c, OL_F_right);
            if (right != OL_NONE && right != first_iter)
                visit(b, right, depth + 1);
            if (left != OL_NONE) {
                visit(b, left, depth + 1);
                bind_simple(b, left, OL_DEF_FOR, right, c, ol_node_at(t, n)->start);
            }
        } else if (c != body) {
            visit(b, c, depth + 1);
        }
    }
    if (body != OL_NONE)
        visit(b, body, depth + 1);
    b->scope = saved_scope;
    b->loop = saved_loop;
}

static void record_assignment(builder *b, ol_nid n, uint32_t depth)
{
    const ol_tree *t = b->t;
    ol_model *m = b->m;
    ol_nid left = ol_field(t, n, OL_F_left);
    ol_nid right = ol_field(t, n, OL_F_right);
    ol_nid type = ol_field(t, n, OL_F_type);
    mark(b, n);
    if (right != OL_NONE)
        visit(b, right, depth + 1);
    if (type != OL_NONE)
        visit(b, type, depth + 1);
    if (left != OL_NONE)
        visit(b, left, depth + 1);
    ol_vec_push(&m->assigns, n);
    /* a = b = value: the innermost right side is the value of every target */
    ol_nid value = right;
    while (value != OL_NONE && ol_kind_of(t, value) == OL_N_assignment)
        value = ol_field(t, value, OL_F_right);
    if (left == OL_NONE)
        return;
    if (ol_kind_of(t, ol_unparen(t, left)) == OL_N_subscript)
        ol_vec_push(&m->subscript_stores, n);
    int8_t path[OL_PATH_MAX];
    bind_info info = {OL_DEF_ASSIGN, value, ol_statement_of(t, n), ol_node_at(t, n)->end, type};
    if (right == OL_NONE)
        info.kind = OL_DEF_OTHER; /* bare annotation: x: int */
    if (right == OL_NONE && type != OL_NONE)
        return; /* `x: int` binds nothing */
    bind(b, left, &info, path, 0, false);
}

static void visit_with(builder *b, ol_nid n, uint32_t depth)
{
    const ol_tree *t = b->t;
    ol_model *m = b->m;
    mark(b, n);
    ol_vec_push(&m->withs, n);
    ol_nid body = ol_field(t, n, OL_F_body);
    for (ol_nid c = ol_first(t, n); c != OL_NONE; c = ol_next(t, c)) {
        if (c == body)
            continue;
        mark(b, c);
        if (ol_kind_of(t, c) != OL_N_with_clause) {
            visit(b, c, depth + 1);
            continue;
        }
        for (ol_nid item = ol_first_named(t, c); item != OL_NONE; item = ol_next_named(t, item)) {
            mark(b, item);
            ol_nid value = ol_field(t, item, OL_F_value);
            if (value == OL_NONE)
                continue;
            if (ol_kind_of(t, value) == OL_N_as_pattern) {
                mark(b, value);
                ol_nid expr = ol_first_named(t, value);
                ol_nid alias = ol_field(t, value, OL_F_alias);
                if (expr != OL_NONE)
                    visit(b, expr, depth + 2);
                if (alias != OL_NONE) {
                    visit(b, alias, depth + 2);
                    ol_nid target = ol_first_named(t, alias);
                    if (target == OL_NONE)
                        target = alias;
                    uint32_t pos = body != OL_NONE ? ol_node_at(t, body)->start : ol_node_at(t, n)->end;
                    bind_simple(b, target, OL_DEF_WITH, expr, n, pos);
                }
            } else {
                visit(b, value, depth + 2);
            }
        }
    }
    if (body != OL_NONE)
        visit(b, body, depth + 1);
}

static void visit(builder *b, ol_nid n, uint32_t depth)
{
    const ol_tree *t = b->t;
    ol_model *m = b->m;
    if (depth > OL_MODEL_MAX_DEPTH) {
        m->truncated = true;
        return;
    }
    mark(b, n);
    switch (ol_kind_of(t, n)) {
    case OL_N_decorated_definition: {
        ol_nid def = ol_field(t, n, OL_F_definition);
        for (ol_nid c = ol_first(t, n); c != OL_NONE; c = ol_next(t, c))
            if (c != def)
                visit(b, c, depth + 1);
        if (def != OL_NONE) {
            if (ol_kind_of(t, def) == OL_N_function_definition)
                visit_function(b, def, n, depth + 1);
            else
                visit(b, def, depth + 1);
        }
        return;
    }
    case OL_N_function_definition:
        visit_function(b, n, OL_NONE, depth);
        return;
    case OL_N_lambda:
        visit_function(b, n, OL_NONE, depth);
        return;
    case OL_N_class_definition:
        visit_class(b, n, depth);
        return;
    case OL_N_import_statement:
    case OL_N_import_from_statement:
        visit_children(b, n, depth);
        visit_import(b, n);
        return;
    case OL_N_global_statement:
    case OL_N_nonlocal_statement:
        for (ol_nid c = ol_first_named(t, n); c != OL_NONE; c = ol_next_named(t, c)) {
            mark(b, c);
            if (ol_kind_of(t, n) == OL_N_global_statement && ol_kind_of(t, c) == OL_N_identifier)
                ol_vec_push(&m->scopes.items[b->scope].globals, ol_node_sym(m, c));
        }
        return;
    case OL_N_assignment:
        record_assignment(b, n, depth);
        return;
    case OL_N_augmented_assignment: {
        visit_children(b, n, depth);
        ol_vec_push(&m->aug_assigns, n);
        ol_nid left = ol_field(t, n, OL_F_left);
        if (left != OL_NONE && ol_kind_of(t, ol_unparen(t, left)) == OL_N_identifier)
            bind_simple(b, left, OL_DEF_AUGASSIGN, n, ol_statement_of(t, n), ol_node_at(t, n)->end);
        else if (left != OL_NONE && ol_kind_of(t, ol_unparen(t, left)) == OL_N_attribute)
            bind_simple(b, left, OL_DEF_AUGASSIGN, n, ol_statement_of(t, n), ol_node_at(t, n)->end);
        return;
    }
    case OL_N_named_expression: {
        visit_children(b, n, depth);
        ol_nid name = ol_field(t, n, OL_F_name);
        /* a walrus in a comprehension binds in the enclosing function */
        uint32_t saved = b->scope;
        while (m->scopes.items[b->scope].kind == OL_SCOPE_COMPREHENSION)
            b->scope = m->scopes.items[b->scope].parent;
        bind_simple(b, name, OL_DEF_WALRUS, ol_field(t, n, OL_F_value), ol_statement_of(t, n),
                    ol_node_at(t, n)->end);
        b->scope = saved;
        return;
    }
    case OL_N_for_statement: {
        ol_nid left = ol_field(t, n, OL_F_left);
        ol_nid right = ol_field(t, n, OL_F_right);
        ol_nid body = ol_field(t, n, OL_F_body);
        ol_nid alt = ol_field(t, n, OL_F_alternative);
        if (right != OL_NONE)
            visit(b, right, depth + 1);
        uint32_t saved_loop = b->loop;
        uint32_t loop = push_loop(b, OL_LOOP_FOR, n, right, body);
        b->loop = loop;
        if (left != OL_NONE) {
            visit(b, left, depth + 1);
            uint32_t pos = body != OL_NONE ? ol_node_at(t, body)->start : ol_node_at(t, n)->end;
            bind_simple(b, left, OL_DEF_FOR, right, n, pos);
        }
        if (body != OL_NONE)
            visit(b, body, depth + 1);
        b->loop = saved_loop;
        if (alt != OL_NONE)
            visit(b, alt, depth + 1);
        return;
    }
    case OL_N_while_statement: {
        ol_nid body = ol_field(t, n, OL_F_body);
        ol_nid alt = ol_field(t, n, OL_F_alternative);
        uint32_t saved_loop = b->loop;
        uint32_t loop = push_loop(b, OL_LOOP_WHILE, n, OL_NONE, body);
        b->loop = loop;
        visit_all_but(b, n, alt, depth);
        b->loop = saved_loop;
        if (alt != OL_NONE)
            visit(b, alt, depth + 1);
        return;
    }
    case OL_N_list_comprehension:
    case OL_N_set_comprehension:
    case OL_N_generator_expression:
    case OL_N_dictionary_comprehension:
        visit_comprehension(b, n, depth);
        return;
    case OL_N_with_statement:
        visit_with(b, n, depth);
        return;
    case OL_N_except_clause: {
        ol_vec_push(&m->excepts, n);
        /* `except E as e:` binds e for the clause body */
        for (ol_nid c = ol_first(t, n); c != OL_NONE; c = ol_next(t, c)) {
            visit(b, c, depth + 1);
            if (ol_kind_of(t, c) == OL_N_as_pattern) {
                ol_nid alias = ol_field(t, c, OL_F_alias);
                ol_nid target = alias != OL_NONE ? ol_first_named(t, alias) : OL_NONE;
                if (target == OL_NONE)
                    target = alias;
                if (target != OL_NONE)
                    bind_simple(b, target, OL_DEF_EXCEPT, ol_first_named(t, c), n, ol_node_at(t, c)->end);
            }
        }
        ol_nid alias = ol_field(t, n, OL_F_alias);
        if (alias != OL_NONE)
            bind_simple(b, alias, OL_DEF_EXCEPT, ol_field(t, n, OL_F_value), n, ol_node_at(t, alias)->end);
        return;
    }
    case OL_N_delete_statement:
        visit_children(b, n, depth);
        for (ol_nid c = ol_first_named(t, n); c != OL_NONE; c = ol_next_named(t, c)) {
            ol_nid target = c;
            if (ol_kind_of(t, c) == OL_N_expression_list) {
                for (ol_nid d = ol_first_named(t, c); d != OL_NONE; d = ol_next_named(t, d))
                    if (ol_kind_of(t, d) == OL_N_identifier)
                        bind_simple(b, d, OL_DEF_DELETE, OL_NONE, n, ol_node_at(t, n)->end);
                continue;
            }
            if (ol_kind_of(t, target) == OL_N_identifier)
                bind_simple(b, target, OL_DEF_DELETE, OL_NONE, n, ol_node_at(t, n)->end);
        }
        return;
    case OL_N_return_statement:
    case OL_N_yield:
        visit_children(b, n, depth);
        if (b->function != OL_NO_INDEX) {
            ol_nid v = ol_first_named(t, n);
            if (v != OL_NONE)
                ol_vec_push(&m->functions.items[b->function].returns, v);
        }
        return;
    case OL_N_call: {
        ol_call c = {n, ol_field(t, n, OL_F_function), OL_NONE, 0};
        if (c.callee != OL_NONE) {
            ol_nid callee = ol_unparen(t, c.callee);
            if (ol_kind_of(t, callee) == OL_N_attribute) {
                c.receiver = ol_field(t, callee, OL_F_object);
                ol_nid attr = ol_field(t, callee, OL_F_attribute);
                if (attr != OL_NONE)
                    c.name = ol_node_sym(m, attr);
            } else if (ol_kind_of(t, callee) == OL_N_identifier) {
                c.name = ol_node_sym(m, callee);
            }
        }
        m->node_call[n] = (uint32_t)m->calls.len;
        ol_vec_push(&m->calls, c);
        visit_children(b, n, depth);
        return;
    }
    default:
        visit_children(b, n, depth);
        return;
    }
}

/* ---- post-pass ------------------------------------------------------------ */

static void compute_subtree_ends(ol_model *m)
{
    const ol_tree *t = m->tree;
    size_t count = t->nodes.len;
    for (size_t i = 0; i < count; i++)
        m->subtree_end[i] = (uint32_t)i + 1;
    for (size_t i = count; i-- > 1;) {
        ol_nid p = ol_node_at(t, i)->parent;
        if (p != OL_NONE && m->subtree_end[p] < m->subtree_end[i])
            m->subtree_end[p] = m->subtree_end[i];
    }
}

void ol_model__set_ctx_range(ol_model *m, ol_nid body, uint32_t ctx)
{
    if (body == OL_NONE)
        return;
    for (uint32_t i = body; i < m->subtree_end[body]; i++)
        m->node_ctx[i] = ctx;
}

uint32_t ol_model__add_ctx(ol_model *m, ol_ctx c)
{
    ol_vec_push(&m->contexts, c);
    return (uint32_t)m->contexts.len - 1;
}

/* Syntactic call-site resolution: `f(...)` where f names a local function in
 * an enclosing scope, and `self.m(...)` inside a class with method m. */
static void resolve_callsites(ol_model *m)
{
    const ol_tree *t = m->tree;
    for (size_t ci = 0; ci < m->calls.len; ci++) {
        const ol_call *c = &m->calls.items[ci];
        ol_nid callee = ol_unparen(t, c->callee);
        uint32_t target = OL_NO_INDEX;
        if (ol_kind_of(t, callee) == OL_N_identifier) {
            uint32_t scope = m->node_scope[c->node];
            while (scope != OL_NO_INDEX) {
                const ol_scope *sc = &m->scopes.items[scope];
                if (sc->kind != OL_SCOPE_CLASS || scope == m->node_scope[c->node]) {
                    uint32_t d = ol_scope_defs(m, scope, c->name);
                    if (d != OL_NO_INDEX) {
                        /* only when every binding of the name is that function */
                        uint32_t fn = OL_NO_INDEX;
                        bool all_same = true;
                        for (uint32_t di = d; di != OL_NO_INDEX; di = m->defs.items[di].next) {
                            const ol_def *def = &m->defs.items[di];
                            if (def->kind != OL_DEF_FUNCTION || (fn != OL_NO_INDEX && fn != def->index)) {
                                all_same = false;
                                break;
                            }
                            fn = def->index;
                        }
                        if (all_same)
                            target = fn;
                        break;
                    }
                }
                scope = sc->parent;
            }
        } else if (ol_kind_of(t, callee) == OL_N_attribute && c->receiver != OL_NONE &&
                   ol_kind_of(t, c->receiver) == OL_N_identifier) {
            uint32_t fn = ol_function_of(m, c->node);
            /* find the method's class through the enclosing methods' self */
            while (fn != OL_NO_INDEX) {
                const ol_function *f = &m->functions.items[fn];
                if (f->is_method && f->params.len > 0) {
                    if (m->defs.items[f->params.items[0]].name == ol_node_sym(m, c->receiver)) {
                        /* the last method of the name */
                        const ol_member *k;
                        size_t n = ol_class_methods_named(m, f->cls, c->name, &k);
                        if (n)
                            target = k[n - 1].index;
                    }
                    break;
                }
                fn = m->scopes.items[f->outer_scope].function;
            }
        }
        if (target != OL_NO_INDEX)
            ol_vec_push(&m->functions.items[target].callsites, (uint32_t)ci);
    }
}

/* The functions' call sites turned around: call -> the local functions it
 * calls, so that following a call into a function costs no search. */
void ol_model__index_calls(ol_model *m)
{
    m->call_functions_begin = ol_xcalloc(m->calls.len + 2, sizeof(uint32_t));
    size_t total = 0;
    for (size_t f = 0; f < m->functions.len; f++)
        for (size_t k = 0; k < m->functions.items[f].callsites.len; k++) {
            uint32_t ci = m->functions.items[f].callsites.items[k];
            if (ci < m->calls.len) {
                m->call_functions_begin[ci + 1]++;
                total++;
            }
        }
    for (size_t ci = 0; ci < m->calls.len + 1; ci++)
        m->call_functions_begin[ci + 1] += m->call_functions_begin[ci];
    m->call_functions = ol_xmalloc((total + 1) * sizeof(uint32_t));
    uint32_t *fill = ol_xmalloc((m->calls.len + 1) * sizeof(uint32_t));
    memcpy(fill, m->call_functions_begin, (m->calls.len + 1) * sizeof(uint32_t));
    for (size_t f = 0; f < m->functions.len; f++) /* in function order within each call */
        for (size_t k = 0; k < m->functions.items[f].callsites.len; k++) {
            uint32_t ci = m->functions.items[f].callsites.items[k];
            if (ci < m->calls.len)
                m->call_functions[fill[ci]++] = (uint32_t)f;
        }
    free(fill);
}

size_t ol_call_functions(const ol_model *m, uint32_t call, const uint32_t **out)
{
    if (!m->call_functions_begin || call >= m->calls.len) {
        *out = NULL;
        return 0;
    }
    *out = m->call_functions + m->call_functions_begin[call];
    return m->call_functions_begin[call + 1] - m->call_functions_begin[call];
}

/* Drops every memoized value and verdict, after a pass that changed what
 * they depend on (call sites, contexts, backward reach). */
static void forget_values(ol_model *m)
{
    free(m->bw_start);
    free(m->bw_count);
    m->bw_start = m->bw_count = NULL;
    m->bw_ops.len = 0;
    if (m->reach_cache_free)
        m->reach_cache_free(m->reach_cache);
    m->reach_cache = NULL;
    memset(m->node_state, 0, m->tree->nodes.len);
    memset(m->def_state, 0, m->defs.len + 1);
    m->provisional.len = 0;
    for (size_t i = 0; i < m->functions.len; i++)
        m->functions.items[i].grad_state = 0;
    for (size_t i = 0; i < m->loops.len; i++)
    {
        m->loops.items[i].data_state = -1;
        m->loops.items[i].trials_state = -1;
    }
}

void ol_model_forget(ol_model *m)
{
    forget_values(m);
}

static void init_names(ol_model *m)
{
#define OL_X(n) m->names.n = ol_model_intern(m, #n);
    OL_WELL_KNOWN(OL_X)
#undef OL_X
}

ol_nid ol_call_arg(const ol_model *m, ol_nid call, int position, const char *keyword)
{
    const ol_tree *t = m->tree;
    ol_nid args = ol_field(t, call, OL_F_arguments);
    if (args == OL_NONE || ol_kind_of(t, args) != OL_N_argument_list)
        return OL_NONE;
    int pos = 0;
    for (ol_nid a = ol_first_named(t, args); a != OL_NONE; a = ol_next_named(t, a)) {
        ol_kind k = ol_kind_of(t, a);
        if (k == OL_N_keyword_argument) {
            if (keyword && ol_text_is(t, ol_field(t, a, OL_F_name), keyword))
                return ol_field(t, a, OL_F_value);
            continue;
        }
        if (k == OL_N_list_splat || k == OL_N_dictionary_splat)
            return OL_NONE; /* positions past a *args are unknowable */
        if (pos == position)
            return a;
        pos++;
    }
    return OL_NONE;
}

uint32_t ol_function_of(const ol_model *m, ol_nid n)
{
    if (n == OL_NONE)
        return OL_NO_INDEX;
    uint32_t s = m->node_scope[n];
    while (s != OL_NO_INDEX) {
        const ol_scope *sc = &m->scopes.items[s];
        if (sc->function != OL_NO_INDEX)
            return sc->function;
        s = sc->parent;
    }
    return OL_NO_INDEX;
}

size_t ol_calls_from(const ol_model *m, ol_nid n, size_t lo, size_t hi)
{
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (m->calls.items[mid].node < n)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static bool named_eval_or_train(const ol_model *m, const ol_call *c)
{
    return c->name == m->names.eval || c->name == m->names.train;
}

const uint32_t *ol_mode_calls(ol_model *m, size_t *count)
{
    if (!m->mode_calls_built) {
        m->mode_calls_built = true;
        size_t n = 0;
        for (size_t i = 0; i < m->calls.len; i++)
            n += named_eval_or_train(m, &m->calls.items[i]);
        m->mode_calls = n ? ol_xmalloc(n * sizeof(uint32_t)) : NULL;
        for (size_t i = 0; i < m->calls.len; i++)
            if (named_eval_or_train(m, &m->calls.items[i]))
                m->mode_calls[m->mode_calls_len++] = (uint32_t)i;
    }
    *count = m->mode_calls_len;
    return m->mode_calls;
}

size_t ol_calls_in(const ol_model *m, ol_nid n, size_t *first)
{
    /* the end too by binary search: walking to it made every question
     * about a big region (the module, for top-level code) cost its calls */
    *first = ol_calls_from(m, n, 0, m->calls.len);
    return ol_calls_from(m, m->subtree_end[n], *first, m->calls.len);
}

/* ---- the loops over an expression ---------------------------------------- */

size_t ol_loops_iterating(ol_model *m, ol_nid n, uint32_t *out, size_t cap)
{
    const ol_tree *t = m->tree;
    if (!m->iter_loops_built) {
        m->iter_loops_built = true;
        m->iter_loops = ol_xmalloc((m->loops.len + 1) * sizeof(uint64_t));
        for (uint32_t i = 0; i < m->loops.len; i++)
            if (m->loops.items[i].iter != OL_NONE)
                m->iter_loops[m->iter_loops_len++] = (uint64_t)m->loops.items[i].iter << 32 | i;
        ol_sort(m->iter_loops, m->iter_loops_len, sizeof(uint64_t), ol_cmp_u64);
    }
    size_t count = 0;
    if (m->iter_loops_len == 0)
        return 0;
    for (ol_nid a = n; a != OL_NONE && count < cap; a = ol_parent(t, a)) {
        size_t lo = ol_lower_bound_u64(m->iter_loops, m->iter_loops_len, (uint64_t)a << 32);
        for (; lo < m->iter_loops_len && m->iter_loops[lo] >> 32 == a && count < cap; lo++)
            out[count++] = (uint32_t)m->iter_loops[lo];
    }
    /* in loop order (found innermost first) */
    ol_sort(out, count, sizeof(uint32_t), ol_cmp_u32);
    return count;
}

/* ---- the def a binding makes ------------------------------------------------ */

uint32_t ol_def_of_target(ol_model *m, ol_nid target)
{
    if (!m->target_defs_built) {
        m->target_defs_built = true;
        m->target_defs = ol_xmalloc((m->defs.len + 1) * sizeof(uint64_t));
        for (size_t i = 0; i < m->defs.len; i++)
            m->target_defs[i] = (uint64_t)m->defs.items[i].target << 32 | i;
        ol_sort(m->target_defs, m->defs.len, sizeof(uint64_t), ol_cmp_u64);
    }
    size_t lo = ol_lower_bound_u64(m->target_defs, m->defs.len, (uint64_t)target << 32);
    return lo < m->defs.len && m->target_defs[lo] >> 32 == target ? (uint32_t)m->target_defs[lo] : OL_NO_INDEX;
}

/* ---- a class's members by name ------------------------------------------- */

static int cmp_member(const void *a, const void *b)
{
    const ol_member *x = a, *y = b;
    if (x->key != y->key)
        return x->key < y->key ? -1 : 1;
    return x->place < y->place ? -1 : x->place > y->place;
}

/* Every class's methods (or attribute defs) in one table sorted by class,
 * name and place. */
static ol_member *member_table(ol_model *m, bool methods, size_t *len)
{
    size_t n = 0;
    for (size_t c = 0; c < m->classes.len; c++)
        n += methods ? m->classes.items[c].methods.len : m->classes.items[c].attr_defs.len;
    ol_member *keys = n ? ol_xmalloc(n * sizeof(ol_member)) : NULL;
    *len = 0;
    for (size_t c = 0; c < m->classes.len; c++) {
        const ol_class *cls = &m->classes.items[c];
        size_t count = methods ? cls->methods.len : cls->attr_defs.len;
        for (size_t i = 0; i < count; i++) {
            uint32_t index = methods ? cls->methods.items[i] : cls->attr_defs.items[i];
            ol_sym name = methods ? m->functions.items[index].name : m->defs.items[index].name;
            ol_member k = {(uint64_t)c << 32 | name, (uint32_t)i, index};
            keys[(*len)++] = k;
        }
    }
    if (n)
        ol_sort(keys, n, sizeof(ol_member), cmp_member);
    return keys;
}

/* The run of keys equal to (ci, name). */
static size_t members_named(const ol_member *keys, size_t len, uint32_t ci, ol_sym name, const ol_member **out)
{
    uint64_t key = (uint64_t)ci << 32 | name;
    size_t lo = 0, hi = len;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (keys[mid].key < key)
            lo = mid + 1;
        else
            hi = mid;
    }
    size_t end = lo;
    while (end < len && keys[end].key == key)
        end++;
    *out = keys ? keys + lo : NULL;
    return end - lo;
}

size_t ol_class_methods_named(ol_model *m, uint32_t ci, ol_sym name, const ol_member **out)
{
    if (!m->method_keys_built) {
        m->method_keys_built = true;
        m->method_keys = member_table(m, true, &m->method_keys_len);
    }
    return members_named(m->method_keys, m->method_keys_len, ci, name, out);
}

size_t ol_class_attrs_named(ol_model *m, uint32_t ci, ol_sym name, const ol_member **out)
{
    if (!m->attr_keys_built) {
        m->attr_keys_built = true;
        m->attr_keys = member_table(m, false, &m->attr_keys_len);
    }
    return members_named(m->attr_keys, m->attr_keys_len, ci, name, out);
}

void ol_model_bind(ol_model *m, const ol_tree *t)
{
    memset(m, 0, sizeof(*m));
    m->tree = t;
    m->src = t->src;
    ol_interner_init(&m->strings);
    init_names(m);
    size_t count = t->nodes.len;
    m->node_scope = ol_xcalloc(count, sizeof(uint32_t));
    m->node_loop = ol_xmalloc(count * sizeof(uint32_t));
    m->node_ctx = ol_xmalloc(count * sizeof(uint32_t));
    m->subtree_end = ol_xmalloc(count * sizeof(uint32_t));
    m->node_call = ol_xmalloc(count * sizeof(uint32_t));
    for (size_t i = 0; i < count; i++) {
        m->node_loop[i] = OL_NO_INDEX;
        m->node_ctx[i] = OL_NO_INDEX;
        m->node_call[i] = OL_NO_INDEX;
    }
    /* read only once node_state says written (ol_eval): not zeroed, so a
     * large file's pages are touched only where a value is computed */
    m->node_val = ol_xmalloc((count ? count : 1) * sizeof(ol_val));
    m->node_state = ol_xcalloc(count, 1);
    def_table_grow(m);

    builder b = {m, t, 0, OL_NO_INDEX, OL_NO_INDEX, OL_NO_INDEX};
    ol_scope module = {0};
    module.kind = OL_SCOPE_MODULE;
    module.node = 0;
    module.parent = OL_NO_INDEX;
    module.function = OL_NO_INDEX;
    module.cls = OL_NO_INDEX;
    ol_vec_push(&m->scopes, module);
    if (count > 0)
        visit(&b, 0, 0);

    m->def_val = ol_xmalloc((m->defs.len + 1) * sizeof(ol_val)); /* read once def_state says written */
    m->def_state = ol_xcalloc(m->defs.len + 1, 1);
    m->def_reaches_backward = ol_xcalloc(m->defs.len + 1, sizeof(bool));
    compute_subtree_ends(m);
    resolve_callsites(m);
}

void ol_model_free(ol_model *m)
{
    for (size_t i = 0; i < m->scopes.len; i++)
        ol_vec_free(&m->scopes.items[i].globals);
    for (size_t i = 0; i < m->functions.len; i++) {
        ol_vec_free(&m->functions.items[i].params);
        ol_vec_free(&m->functions.items[i].callsites);
        ol_vec_free(&m->functions.items[i].returns);
    }
    for (size_t i = 0; i < m->classes.len; i++) {
        ol_vec_free(&m->classes.items[i].bases);
        ol_vec_free(&m->classes.items[i].methods);
        ol_vec_free(&m->classes.items[i].attr_defs);
    }
    ol_vec_free(&m->scopes);
    ol_vec_free(&m->defs);
    ol_vec_free(&m->functions);
    ol_vec_free(&m->classes);
    ol_vec_free(&m->loops);
    ol_vec_free(&m->contexts);
    ol_vec_free(&m->calls);
    ol_vec_free(&m->imports);
    ol_vec_free(&m->aug_assigns);
    ol_vec_free(&m->provisional);
    ol_vec_free(&m->assigns);
    ol_vec_free(&m->subscript_stores);
    ol_vec_free(&m->grad_switches);
    ol_vec_free(&m->unbound_self_calls);
    ol_vec_free(&m->branch_grads);
    ol_vec_free(&m->withs);
    ol_vec_free(&m->excepts);
    free(m->bw_start);
    free(m->bw_count);
    ol_vec_free(&m->bw_ops);
    ol_vec_free(&m->evidence);
    free(m->def_module_use);
    ol_vec_free(&m->attr_module_uses);
    free(m->node_scope);
    free(m->node_loop);
    free(m->node_ctx);
    free(m->subtree_end);
    free(m->node_call);
    free(m->node_sym);
    free(m->def_keys);
    free(m->def_heads);
    free(m->def_tails);
    if (m->facts_cache_free)
        m->facts_cache_free(m->facts_cache);
    if (m->door_free)
        m->door_free(m->door);
    if (m->devices_cache_free)
        m->devices_cache_free(m->devices_cache);
    if (m->reach_cache_free)
        m->reach_cache_free(m->reach_cache);
    free(m->name_guess);
    free(m->name_guessed);
    free(m->call_functions_begin);
    free(m->call_functions);
    free(m->plain_calls);
    free(m->mode_calls);
    ol_name_index_free(m->name_index);
    free(m->method_keys);
    free(m->attr_keys);
    free(m->iter_loops);
    free(m->target_defs);
    free(m->chain_items);
    free(m->chain_start);
    free(m->chain_count);
    free(m->node_val);
    free(m->node_state);
    free(m->def_val);
    free(m->def_state);
    free(m->def_reaches_backward);
    ol_interner_free(&m->strings);
    ol_arena_free(&m->arena);
    memset(m, 0, sizeof(*m));
}
