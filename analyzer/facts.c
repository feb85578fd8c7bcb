/*
 * facts.c - shared questions about training code, answered from the model.
 * See facts.h.
 */
#include "facts.h"

#include <stdlib.h>
#include <string.h>

#include "diag.h"

/* What this layer keeps per file, in the model's facts_cache: regions'
 * events found by region node, which defs reset their name (reset_inside),
 * and the file's clear() calls. Freed by the model (facts_cache_free). */
typedef struct facts_cache {
    uint32_t *at;   /* per node: index + 1 into regions, or 0 */
    OL_VEC(ol_region_events *) regions;
    uint8_t *resets;          /* per def: 0 unknown, 1 no, 2 yes */
    uint32_t *reset_chain_at; /* per chain head def: index + 1 of its pair in reset_chains */
    OL_VEC(uint32_t) reset_chains; /* (start in reset_items, count) pairs */
    OL_VEC(uint32_t) reset_items;
    OL_VEC(uint32_t) clears;  /* calls of x.clear(), ascending */
    bool clears_built;
    uint32_t *loops_by_node;  /* loop indices by their node, ascending (the model
                                 pushes a comprehension after its first iterable) */
    uint8_t *reads_input;     /* per loop: 0 unknown, 1 no, 2 waits for the user's input */
    /* function_consumes_buffer's answers, by (function, holder's text): an
     * open-addressing table of indexes + 1 into consumed */
    OL_VEC(struct consumed_answer) consumed;
    uint32_t *consumed_slots;
    size_t consumed_mask;
    /* first-time blocks: per `if` node, 0 unknown, 1 no, 2 its test and block
     * make it one; the attribute names the file deletes (the name nodes of
     * `del x.name` and `delattr(x, "name")`), and whether a delattr names
     * what it deletes in a way the file does not spell */
    uint8_t *first_time;
    OL_VEC(ol_nid) deleted;
    bool deleted_built, deletes_unknown;
    /* how often a function's code runs when nothing inside it (a loop, a
     * first-time guard) decides: per (function, depth of the callers'
     * walk), a function's callers being walked again for every call in it */
    ol_often_local *often_fn;
    uint8_t *often_fn_known; /* a bit per depth */
} facts_cache;

typedef struct consumed_answer {
    uint64_t hash;  /* of the holder's text, mixed with the function */
    uint32_t fn;
    ol_nid holder;  /* the first holder asked about with this text */
    bool yes;
} consumed_answer;

void ol_region_events_free(ol_region_events *re)
{
    ol_vec_free(&re->events);
    ol_vec_free(&re->zeros);
    ol_vec_free(&re->backwards);
    ol_vec_free(&re->steps);
}

static void facts_cache_free(void *p)
{
    facts_cache *fc = p;
    for (size_t i = 0; i < fc->regions.len; i++) {
        ol_region_events_free(fc->regions.items[i]);
        free(fc->regions.items[i]);
    }
    ol_vec_free(&fc->regions);
    free(fc->at);
    free(fc->resets);
    free(fc->reset_chain_at);
    ol_vec_free(&fc->reset_chains);
    ol_vec_free(&fc->reset_items);
    ol_vec_free(&fc->clears);
    free(fc->loops_by_node);
    free(fc->reads_input);
    ol_vec_free(&fc->consumed);
    free(fc->consumed_slots);
    free(fc->first_time);
    ol_vec_free(&fc->deleted);
    free(fc->often_fn);
    free(fc->often_fn_known);
    free(fc);
}

/* Made on first use, after the model is built (defs and nodes are final). */
static facts_cache *cache_of(ol_model *m)
{
    if (!m->facts_cache) {
        facts_cache *fc = ol_xcalloc(1, sizeof(*fc));
        fc->at = ol_xcalloc(m->tree->nodes.len + 1, sizeof(uint32_t));
        fc->resets = ol_xcalloc(m->defs.len + 1, 1);
        fc->reset_chain_at = ol_xcalloc(m->defs.len + 1, sizeof(uint32_t));
        m->facts_cache = fc;
        m->facts_cache_free = facts_cache_free;
    }
    return m->facts_cache;
}

/* The loops whose node lies inside node n's subtree (n's own loop included):
 * [*first, end) of the returned array. Built once per file, so a question
 * per function costs a binary search, not a walk over the file's loops. */
static const uint32_t *loops_in(ol_model *m, ol_nid n, size_t *first, size_t *end)
{
    facts_cache *fc = cache_of(m);
    if (!fc->loops_by_node) {
        uint64_t *keyed = ol_xmalloc((m->loops.len + 1) * sizeof(uint64_t)); /* node, then index */
        for (uint32_t i = 0; i < m->loops.len; i++)
            keyed[i] = (uint64_t)m->loops.items[i].node << 32 | i;
        ol_sort(keyed, m->loops.len, sizeof(uint64_t), ol_cmp_u64);
        fc->loops_by_node = ol_xmalloc((m->loops.len + 1) * sizeof(uint32_t));
        for (uint32_t i = 0; i < m->loops.len; i++)
            fc->loops_by_node[i] = (uint32_t)keyed[i];
        free(keyed);
    }
    const uint32_t *by = fc->loops_by_node;
    size_t lo = 0, hi = m->loops.len;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (m->loops.items[by[mid]].node < n)
            lo = mid + 1;
        else
            hi = mid;
    }
    *first = lo;
    hi = m->loops.len;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (m->loops.items[by[mid]].node < m->subtree_end[n])
            lo = mid + 1;
        else
            hi = mid;
    }
    *end = lo;
    return by;
}

/* ---- backward, step, zero_grad, forward --------------------------------------- */

static const char *const NOT_OPTIMIZERS[] = {"scheduler", "sched", "env", "lr", "environment", "sim",
                                             "game", "world", "engine", "trainer", "scaler", "model",
                                             "runner", "agent", "pbar", "progress", "bar", "ema", "swa", NULL};

static bool named_like_optimizer(const ol_tree *t, ol_nid e)
{
    ol_nid name = e;
    if (ol_kind_of(t, e) == OL_N_attribute)
        name = ol_field(t, e, OL_F_attribute);
    if (name == OL_NONE || ol_kind_of(t, name) != OL_N_identifier)
        return false;
    uint32_t len;
    const char *s = ol_text(t, name, &len);
    static const char *const words[] = {"optimizer", "optimiser", "optim", "opt", "optimizers", "optimizerg",
                                        "optimizerd", "optg", "optd", NULL};
    return ol_name_looks_like(s, len, words) && !ol_name_looks_like(s, len, NOT_OPTIMIZERS);
}

ol_nid ol_step_optimizer(ol_model *m, uint32_t ci)
{
    const ol_tree *t = m->tree;
    const ol_call *c = &m->calls.items[ci];
    if (c->name != m->names.step || c->receiver == OL_NONE)
        return OL_NONE;
    ol_nid recv = ol_unparen(t, c->receiver);
    ol_val rv = ol_eval(m, recv);
    switch (rv.kind) {
    case OL_V_OPTIMIZER:
        return recv;
    case OL_V_SCALER: {
        ol_nid opt = ol_call_arg(m, c->node, 0, "optimizer");
        return opt != OL_NONE ? ol_unparen(t, opt) : OL_NONE;
    }
    case OL_V_UNKNOWN:
        return named_like_optimizer(t, recv) ? recv : OL_NONE;
    default:
        return OL_NONE;
    }
}

ol_nid ol_zero_grad_target(ol_model *m, uint32_t ci)
{
    const ol_call *c = &m->calls.items[ci];
    if (c->name != m->names.zero_grad || c->receiver == OL_NONE)
        return OL_NONE;
    return ol_unparen(m->tree, c->receiver);
}

/* The value expression an optimizer name or self-attribute was built from. */
static ol_nid optimizer_value(ol_model *m, ol_nid opt)
{
    const ol_tree *t = m->tree;
    opt = ol_unparen(t, opt);
    if (ol_kind_of(t, opt) == OL_N_identifier) {
        uint32_t defs[4];
        size_t n = ol_reaching_defs(m, m->node_scope[opt], ol_node_sym(m, opt), opt, defs, 4);
        for (size_t i = 0; i < n; i++)
            if (m->defs.items[defs[i]].kind == OL_DEF_ASSIGN && m->defs.items[defs[i]].path_len == 0)
                return m->defs.items[defs[i]].value;
    } else if (ol_kind_of(t, opt) == OL_N_attribute) {
        ol_nid obj = ol_field(t, opt, OL_F_object);
        ol_val self = ol_eval(m, obj);
        ol_nid attr = ol_field(t, opt, OL_F_attribute);
        if ((self.flags & OL_VF_LOCAL) && self.ref < m->classes.len && attr != OL_NONE) {
            const ol_member *attrs;
            size_t count = ol_class_attrs_named(m, self.ref, ol_node_sym(m, attr), &attrs);
            for (size_t i = 0; i < count; i++) {
                const ol_def *d = &m->defs.items[attrs[i].index];
                if (d->kind == OL_DEF_ASSIGN && d->path_len == 0)
                    return d->value;
            }
        }
    }
    return OL_NONE;
}

/* Receivers of .parameters() / .named_parameters() in expression e, and in
 * the values of names it uses (`params = list(a.parameters()) + ...`). */
static size_t parameter_sources(ol_model *m, ol_nid e, ol_nid *out, size_t count, size_t cap, int depth)
{
    const ol_tree *t = m->tree;
    if (e == OL_NONE || depth > 2)
        return count;
    size_t first, end = ol_calls_in(m, e, &first);
    for (size_t i = first; i < end && count < cap; i++) {
        const ol_call *c = &m->calls.items[i];
        if ((c->name == m->names.parameters || c->name == m->names.named_parameters) && c->receiver != OL_NONE)
            out[count++] = ol_unparen(t, c->receiver);
    }
    for (ol_nid n = e; n < m->subtree_end[e] && count < cap; n++) {
        if (ol_kind_of(t, n) != OL_N_identifier || ol_node_at(t, n)->field == OL_F_attribute)
            continue;
        uint32_t defs[4];
        size_t nd = ol_reaching_defs(m, m->node_scope[n], ol_node_sym(m, n), n, defs, 4);
        for (size_t k = 0; k < nd; k++)
            if (m->defs.items[defs[k]].kind == OL_DEF_ASSIGN)
                count = parameter_sources(m, m->defs.items[defs[k]].value, out, count, cap, depth + 1);
    }
    return count;
}

size_t ol_optimizer_modules(ol_model *m, ol_nid opt, ol_nid *out, size_t cap)
{
    ol_nid value = optimizer_value(m, opt);
    if (value == OL_NONE || ol_kind_of(m->tree, value) != OL_N_call)
        return 0;
    return parameter_sources(m, value, out, 0, cap, 0);
}

ol_nid ol_optimizer_module(ol_model *m, ol_nid opt)
{
    ol_nid value = optimizer_value(m, opt);
    if (value == OL_NONE || ol_kind_of(m->tree, value) != OL_N_call)
        return OL_NONE;
    ol_nid sources[8];
    size_t n = parameter_sources(m, value, sources, 0, 8, 0);
    return n > 0 ? sources[0] : OL_NONE;
}

/* ---- accumulators ------------------------------------------------------------------- */

static bool self_attribute(ol_model *m, ol_nid n)
{
    const ol_tree *t = m->tree;
    if (ol_kind_of(t, n) != OL_N_attribute)
        return false;
    ol_nid obj = ol_field(t, n, OL_F_object);
    if (ol_kind_of(t, obj) != OL_N_identifier)
        return false;
    ol_val v = ol_eval(m, obj);
    return (v.kind == OL_V_MODULE || v.kind == OL_V_INSTANCE) && (v.flags & OL_VF_LOCAL);
}

bool ol_accumulator_of(ol_model *m, ol_nid target, ol_accumulator *acc)
{
    const ol_tree *t = m->tree;
    target = ol_unparen(t, target);
    memset(acc, 0, sizeof(*acc));
    acc->target = target;
    ol_nid holder = target;
    if (ol_kind_of(t, holder) == OL_N_subscript) {
        holder = ol_unparen(t, ol_field(t, holder, OL_F_value));
        acc->is_item = true;
    }
    if (ol_kind_of(t, holder) == OL_N_identifier) {
        acc->holder = holder;
        return true;
    }
    if (self_attribute(m, holder)) {
        acc->holder = holder;
        acc->is_attr = true;
        return true;
    }
    return false;
}

/* Does def d rebind its name to something new: a del, a loop or with
 * target, or an assignment whose value does not mention the name (`total =
 * 0`, not `total = total + x`)? Kept per def (cache->resets: 0 unknown, 1 no,
 * 2 yes), and per chain the defs that do, so that each accumulator in a
 * long loop looks at the resets only, not at every def of its name. */
static bool def_resets(ol_model *m, uint32_t d)
{
    facts_cache *fc = cache_of(m);
    if (fc->resets[d])
        return fc->resets[d] == 2;
    const ol_def *def = &m->defs.items[d];
    bool r = def->kind == OL_DEF_DELETE || def->kind == OL_DEF_FOR || def->kind == OL_DEF_WITH;
    if (!r && (def->kind == OL_DEF_ASSIGN || def->kind == OL_DEF_WALRUS))
        r = !ol_mentions(m->tree, def->value, def->target);
    fc->resets[d] = r ? 2 : 1;
    return r;
}

/* The resetting defs of the chain with this head, in pos order. */
static const uint32_t *chain_resets(ol_model *m, uint32_t head, size_t *count)
{
    facts_cache *fc = cache_of(m);
    if (!fc->reset_chain_at[head]) {
        const uint32_t *chain;
        size_t n = ol_def_chain(m, head, &chain);
        size_t begin = fc->reset_items.len;
        for (size_t i = 0; i < n; i++)
            if (def_resets(m, chain[i]))
                ol_vec_push(&fc->reset_items, chain[i]);
        ol_vec_push(&fc->reset_chains, (uint32_t)begin);
        ol_vec_push(&fc->reset_chains, (uint32_t)(fc->reset_items.len - begin));
        fc->reset_chain_at[head] = (uint32_t)(fc->reset_chains.len / 2);
    }
    size_t k = (fc->reset_chain_at[head] - 1) * 2;
    *count = fc->reset_chains.items[k + 1];
    return *count ? fc->reset_items.items + fc->reset_chains.items[k] : NULL;
}

/* Is the accumulator reset inside loop_node (other than at stmt)? A reset
 * bounds its lifetime to one iteration of that loop. */
static bool reset_inside(ol_model *m, const ol_accumulator *acc, ol_nid loop_node, ol_nid stmt)
{
    const ol_tree *t = m->tree;
    if (!acc->is_attr) {
        uint32_t scope = m->node_scope[acc->holder];
        ol_sym name = ol_node_sym(m, acc->holder);
        /* the binding may live in an enclosing scope (a closure's free name) */
        uint32_t defs[1];
        if (ol_scope_defs(m, scope, name) == OL_NO_INDEX &&
            ol_reaching_defs(m, scope, name, acc->holder, defs, 1) > 0)
            scope = m->defs.items[defs[0]].scope;
        uint32_t head = ol_scope_defs(m, scope, name);
        if (head != OL_NO_INDEX) {
            size_t count;
            const uint32_t *resets = chain_resets(m, head, &count);
            /* the resets that lie in the loop: a def inside it is visible
             * from within the loop's span (pos order) */
            const ol_node *loop = ol_node_at(t, loop_node);
            size_t lo = 0, hi = count;
            while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;
                if (m->defs.items[resets[mid]].pos < loop->start)
                    lo = mid + 1;
                else
                    hi = mid;
            }
            for (size_t i = lo; i < count && m->defs.items[resets[i]].pos <= loop->end; i++) {
                const ol_def *def = &m->defs.items[resets[i]];
                if (def->stmt != stmt && ol_contains(t, loop_node, def->stmt))
                    return true;
            }
        }
    } else {
        ol_nid obj = ol_field(t, acc->holder, OL_F_object);
        ol_val self = ol_eval(m, obj);
        ol_sym attr = ol_node_sym(m, ol_field(t, acc->holder, OL_F_attribute));
        if (self.ref < m->classes.len) {
            const ol_member *attrs;
            size_t count = ol_class_attrs_named(m, self.ref, attr, &attrs);
            for (size_t i = 0; i < count; i++) {
                const ol_def *def = &m->defs.items[attrs[i].index];
                if (def->stmt == stmt || !ol_contains(t, loop_node, def->stmt))
                    continue;
                if (def->kind == OL_DEF_ASSIGN && !ol_mentions(t, def->value, acc->holder))
                    return true;
            }
        }
    }
    if (acc->is_item) {
        /* the stores are in node order: those in the loop's subtree are a run */
        size_t lo = ol_lower_bound_u32(m->subscript_stores.items, m->subscript_stores.len, loop_node);
        for (size_t i = lo; i < m->subscript_stores.len && m->subscript_stores.items[i] < m->subtree_end[loop_node];
             i++) {
            ol_nid a = m->subscript_stores.items[i];
            if (a == stmt || !ol_contains(t, loop_node, a))
                continue;
            ol_nid left = ol_unparen(t, ol_field(t, a, OL_F_left));
            if (ol_same_text(t, left, acc->target) && !ol_mentions(t, ol_field(t, a, OL_F_right), acc->target))
                return true;
        }
    }
    /* holder.clear(), del holder[:]: the file's clear() calls, in call
     * (node) order, those in the loop found by binary search */
    facts_cache *fc = cache_of(m);
    if (!fc->clears_built) {
        for (size_t i = 0; i < m->calls.len; i++)
            if (m->calls.items[i].name == m->names.clear && m->calls.items[i].receiver != OL_NONE)
                ol_vec_push(&fc->clears, (uint32_t)i);
        fc->clears_built = true;
    }
    size_t lo = 0, hi = fc->clears.len;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (m->calls.items[fc->clears.items[mid]].node < loop_node)
            lo = mid + 1;
        else
            hi = mid;
    }
    for (size_t i = lo; i < fc->clears.len; i++) {
        const ol_call *c = &m->calls.items[fc->clears.items[i]];
        if (c->node >= m->subtree_end[loop_node])
            break;
        if (ol_same_text(t, ol_unparen(t, c->receiver), acc->holder))
            return true;
    }
    return false;
}

/* A loop that trains through a helper each iteration (`loss = train_step(b)`
 * in a `while` loop), and sits in no loop over batches. */
static bool loop_trains_through_calls(ol_model *m, uint32_t li)
{
    const ol_loop *loop = &m->loops.items[li];
    if (!m->links || loop->kind == OL_LOOP_COMPREHENSION || loop->body == OL_NONE)
        return false;
    for (uint32_t l = loop->parent; l != OL_NO_INDEX; l = m->loops.items[l].parent)
        if (ol_loop_is_data_loop(m, l))
            return false;
    uint32_t fn = ol_function_of(m, loop->node);
    size_t first, end = ol_calls_in(m, loop->body, &first);
    for (size_t i = first; i < end; i++)
        if (ol_function_of(m, m->calls.items[i].node) == fn &&
            (m->links->call_facts(m->links, m, (uint32_t)i) & (OL_FN_BACKWARD | OL_FN_STEP)))
            return true;
    return false;
}

uint32_t ol_accumulator_outlived_loop(ol_model *m, const ol_accumulator *acc, ol_nid stmt)
{
    for (uint32_t l = m->node_loop[stmt]; l != OL_NO_INDEX; l = m->loops.items[l].parent) {
        if (reset_inside(m, acc, m->loops.items[l].node, stmt))
            return OL_NO_INDEX;
        if (ol_loop_is_data_loop(m, l) || loop_trains_through_calls(m, l))
            return l;
    }
    return OL_NO_INDEX;
}

static bool function_consumes_buffer_uncached(ol_model *m, uint32_t g, ol_nid holder);

/* The first empty slot of the answers' table on hash h's probe sequence. */
static size_t consumed_free_slot(const facts_cache *fc, uint64_t h)
{
    size_t i = (size_t)(h ^ (h >> 31)) & fc->consumed_mask;
    while (fc->consumed_slots[i])
        i = (i + 1) & fc->consumed_mask;
    return i;
}

/* Does function g empty the buffer `holder` after a backward through it?
 * Asked once per append to the buffer, and answered from g's whole body:
 * kept per function and holder text (with its length, which ol_mentions
 * reads), so a function of thousands of appends is read once per buffer. */
static bool function_consumes_buffer(ol_model *m, uint32_t g, ol_nid holder)
{
    const ol_tree *t = m->tree;
    facts_cache *fc = cache_of(m);
    uint64_t h = ol_text_hash(t, holder) ^ ((uint64_t)g * 0x9E3779B97F4A7C15ull);
    uint32_t len = ol_node_at(t, holder)->end - ol_node_at(t, holder)->start;
    if (fc->consumed_slots) {
        for (size_t i = (size_t)(h ^ (h >> 31)) & fc->consumed_mask; fc->consumed_slots[i];
             i = (i + 1) & fc->consumed_mask) {
            const consumed_answer *a = &fc->consumed.items[fc->consumed_slots[i] - 1];
            if (a->hash == h && a->fn == g && ol_node_at(t, a->holder)->end - ol_node_at(t, a->holder)->start == len &&
                ol_same_text(t, a->holder, holder))
                return a->yes;
        }
    }
    bool yes = function_consumes_buffer_uncached(m, g, holder);
    if ((fc->consumed.len + 1) * 2 > fc->consumed_mask) {
        size_t cap = fc->consumed_mask ? (fc->consumed_mask + 1) * 2 : 64;
        free(fc->consumed_slots);
        fc->consumed_slots = ol_xcalloc(cap, sizeof(uint32_t));
        fc->consumed_mask = cap - 1;
        for (size_t k = 0; k < fc->consumed.len; k++)
            fc->consumed_slots[consumed_free_slot(fc, fc->consumed.items[k].hash)] = (uint32_t)k + 1;
    }
    consumed_answer a = {h, g, holder, yes};
    ol_vec_push(&fc->consumed, a);
    fc->consumed_slots[consumed_free_slot(fc, h)] = (uint32_t)fc->consumed.len;
    return yes;
}

static bool function_consumes_buffer_uncached(ol_model *m, uint32_t g, ol_nid holder)
{
    const ol_tree *t = m->tree;
    ol_nid node = m->functions.items[g].node;
    bool backward = false, through = false;
    /* the buffer must be emptied after the backward that consumed it: the
     * `losses = []` that starts a loop is no emptying */
    ol_nid first_backward = OL_NONE, last_reset = OL_NONE;
    size_t first, end = ol_calls_in(m, node, &first);
    for (size_t i = first; i < end; i++) {
        const ol_call *c = &m->calls.items[i];
        if (c->receiver == OL_NONE || ol_function_of(m, c->node) != g)
            continue;
        ol_nid r = ol_unparen(t, c->receiver);
        if (c->name == m->names.backward) {
            if (!backward)
                first_backward = c->node;
            backward = true;
            if (ol_mentions(t, r, holder))
                through = true;
        } else if (c->name == m->names.clear && ol_same_text(t, r, holder)) {
            last_reset = c->node;
        }
    }
    if (!backward)
        return false;
    size_t lfirst, lend;
    const uint32_t *loops = loops_in(m, node, &lfirst, &lend);
    for (size_t i = lfirst; !through && i < lend; i++) {
        const ol_loop *l = &m->loops.items[loops[i]];
        if (l->iter != OL_NONE && ol_mentions(t, l->iter, holder))
            through = true;
    }
    size_t lo = 0, hi = m->assigns.len;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (m->assigns.items[mid] < node)
            lo = mid + 1;
        else
            hi = mid;
    }
    for (size_t i = lo; i < m->assigns.len && m->assigns.items[i] < m->subtree_end[node]; i++) {
        ol_nid a = m->assigns.items[i];
        ol_nid left = ol_unparen(t, ol_field(t, a, OL_F_left));
        ol_nid right = ol_field(t, a, OL_F_right);
        if (left != OL_NONE && right != OL_NONE && ol_same_text(t, left, holder) && !ol_mentions(t, right, holder) &&
            (last_reset == OL_NONE || a > last_reset))
            last_reset = a;
    }
    return through && last_reset != OL_NONE && last_reset > first_backward;
}

bool ol_buffer_backwarded(ol_model *m, ol_nid holder, ol_nid stmt)
{
    const ol_tree *t = m->tree;
    holder = ol_unparen(t, holder);
    uint32_t fn = ol_function_of(m, stmt);
    if (holder == OL_NONE || fn == OL_NO_INDEX)
        return false;
    const ol_function *f = &m->functions.items[fn];
    ol_kind k = ol_kind_of(t, holder);
    if (k == OL_N_attribute && f->is_method && f->cls != OL_NO_INDEX) {
        ol_nid obj = ol_unparen(t, ol_field(t, holder, OL_F_object));
        if (ol_kind_of(t, obj) != OL_N_identifier || f->params.len == 0 ||
            ol_node_sym(m, obj) != m->defs.items[f->params.items[0]].name)
            return false;
        const ol_class *cls = &m->classes.items[f->cls];
        for (size_t i = 0; i < cls->methods.len; i++)
            if (function_consumes_buffer(m, cls->methods.items[i], holder))
                return true;
        return false;
    }
    return k == OL_N_identifier && function_consumes_buffer(m, fn, holder);
}

bool ol_accumulator_in_step_hook(ol_model *m, const ol_accumulator *acc, ol_nid stmt)
{
    if (!acc->is_attr || m->node_loop[stmt] != OL_NO_INDEX)
        return false;
    uint32_t fn = ol_function_of(m, stmt);
    return fn != OL_NO_INDEX && (ol_function_hook(m, fn) == OL_HOOK_TRAIN_STEP || ol_function_per_batch_metric(m, fn));
}

/* The container whose elements a loop variable walks: `meters` for `m` in
 * `for m in meters`, `for m, l in zip(meters, losses)` and `for i, m in
 * enumerate(meters)`, when `m` has no other binding reaching `at`.
 * OL_NONE otherwise. */
static ol_nid walked_container(ol_model *m, ol_nid name, ol_nid at)
{
    const ol_tree *t = m->tree;
    name = ol_unparen(t, name);
    if (name == OL_NONE || ol_kind_of(t, name) != OL_N_identifier)
        return OL_NONE;
    uint32_t defs[2];
    if (ol_reaching_defs(m, m->node_scope[name], ol_node_sym(m, name), at, defs, 2) != 1)
        return OL_NONE;
    const ol_def *d = &m->defs.items[defs[0]];
    if (d->kind != OL_DEF_FOR || d->starred)
        return OL_NONE;
    ol_nid iter = ol_unparen(t, d->value);
    int skip = 0;
    if (iter != OL_NONE && ol_kind_of(t, iter) == OL_N_call && d->path_len >= 1) {
        const char *q = ol_qualname(m, ol_field(t, iter, OL_F_function));
        if (q && strcmp(q, "builtins.zip") == 0)
            iter = ol_call_arg(m, iter, (uint32_t)d->path[0], NULL), skip = 1;
        else if (q && strcmp(q, "builtins.enumerate") == 0 && d->path[0] == 1)
            iter = ol_call_arg(m, iter, 0, "iterable"), skip = 1;
    }
    /* `for name, meter in meters.items()`, `for meter in meters.values()` */
    if (iter != OL_NONE && ol_kind_of(t, iter) == OL_N_call) {
        ol_nid callee = ol_field(t, iter, OL_F_function);
        if (ol_kind_of(t, callee) == OL_N_attribute) {
            ol_nid meth = ol_field(t, callee, OL_F_attribute);
            if (ol_text_is(t, meth, "items") && d->path_len == skip + 1 && d->path[skip] == 1)
                iter = ol_field(t, callee, OL_F_object), skip++;
            else if (ol_text_is(t, meth, "values") && d->path_len == skip)
                iter = ol_field(t, callee, OL_F_object);
        }
    }
    if (d->path_len != skip)
        return OL_NONE;
    iter = ol_unparen(t, iter);
    return iter != OL_NONE && ol_kind_of(t, iter) == OL_N_identifier ? iter : OL_NONE;
}

bool ol_holder_outlives_batches(ol_model *m, ol_nid holder, ol_nid stmt)
{
    /* a meter taken from a list of meters made before the loop outlives
     * the iterations as that list does */
    ol_nid container = holder != OL_NONE ? walked_container(m, holder, holder) : OL_NONE;
    if (container != OL_NONE && ol_holder_outlives_batches(m, container, stmt))
        return true;
    if (holder == OL_NONE) {
        for (uint32_t l = m->node_loop[stmt]; l != OL_NO_INDEX; l = m->loops.items[l].parent)
            if (ol_loop_is_data_loop(m, l))
                return true;
        return false;
    }
    ol_accumulator acc;
    if (!ol_accumulator_of(m, holder, &acc))
        return false;
    return ol_accumulator_outlived_loop(m, &acc, stmt) != OL_NO_INDEX || ol_accumulator_in_step_hook(m, &acc, stmt);
}

/* ---- training events ------------------------------------------------------------ */

static bool is_grad_attr(ol_model *m, ol_nid e)
{
    const ol_tree *t = m->tree;
    e = ol_unparen(t, e);
    if (ol_kind_of(t, e) != OL_N_attribute)
        return false;
    ol_nid attr = ol_field(t, e, OL_F_attribute);
    if (ol_text_is(t, attr, "data"))
        return is_grad_attr(m, ol_field(t, e, OL_F_object));
    return ol_text_is(t, attr, "grad");
}

static void collect(ol_model *m, ol_nid region, ol_nid site, uint32_t fn, int depth, ol_event_vec *out);

static void add_event(ol_event_vec *out, ol_event_kind kind, uint32_t call, ol_nid node, ol_nid site, ol_nid target)
{
    ol_event e = {kind, call, node, site, target};
    ol_vec_push(out, e);
}

/* Does call ci clear gradients in code the file does not show: a known
 * library zeroing function, or a function of another file of the run whose
 * summary says it zeroes (`zero_grad()`, `p.grad = None`, `p.grad.zero_()`)? */
static bool clears_grads_elsewhere(ol_model *m, uint32_t ci)
{
    static const char *const library[] = {"pyro.infer.util.zero_grads", NULL};
    const ol_call *c = &m->calls.items[ci];
    if (ol_call_is(m, c->node, library))
        return true;
    const uint32_t *called;
    if (ol_call_functions(m, ci, &called) > 0 || !m->links || !m->links->call_facts)
        return false; /* a local function: its own events are collected */
    return (m->links->call_facts(m->links, m, ci) & OL_FN_ZERO_GRAD) != 0;
}

static void collect(ol_model *m, ol_nid region, ol_nid site, uint32_t fn, int depth, ol_event_vec *out)
{
    const ol_tree *t = m->tree;
    size_t first, end = ol_calls_in(m, region, &first);
    size_t ai = 0;
    /* assignments p.grad = None, in order with the calls */
    while (ai < m->assigns.len && m->assigns.items[ai] < region)
        ai++;
    for (size_t i = first; i <= end; i++) {
        ol_nid at = i < end ? m->calls.items[i].node : m->subtree_end[region];
        for (; ai < m->assigns.len && m->assigns.items[ai] < at && m->assigns.items[ai] < m->subtree_end[region]; ai++) {
            ol_nid a = m->assigns.items[ai];
            if (ol_function_of(m, a) != fn)
                continue;
            ol_nid right = ol_field(t, a, OL_F_right);
            if (is_grad_attr(m, ol_field(t, a, OL_F_left)) && ol_kind_of(t, right) == OL_N_none)
                add_event(out, OL_EV_ZERO_ALL, OL_NO_INDEX, a, site != OL_NONE ? site : a, OL_NONE);
        }
        if (i == end)
            break;
        const ol_call *c = &m->calls.items[i];
        if (ol_function_of(m, c->node) != fn)
            continue; /* inside a nested def or lambda: runs when called */
        ol_nid where = site != OL_NONE ? site : c->node;
        if (ol_is_backward_call(m, (uint32_t)i)) {
            add_event(out, OL_EV_BACKWARD, (uint32_t)i, c->node, where, OL_NONE);
            continue;
        }
        ol_nid opt = ol_step_optimizer(m, (uint32_t)i);
        if (opt != OL_NONE) {
            add_event(out, OL_EV_STEP, (uint32_t)i, c->node, where, opt);
            continue;
        }
        ol_nid zeroed = ol_zero_grad_target(m, (uint32_t)i);
        if (zeroed != OL_NONE) {
            add_event(out, OL_EV_ZERO, (uint32_t)i, c->node, where, zeroed);
            continue;
        }
        if (c->name == m->names.zero_grad && c->receiver == OL_NONE)
            continue;
        if (ol_text_is(t, ol_field(t, c->callee, OL_F_attribute), "zero_") && c->receiver != OL_NONE &&
            is_grad_attr(m, c->receiver)) {
            add_event(out, OL_EV_ZERO_ALL, (uint32_t)i, c->node, where, OL_NONE);
            continue;
        }
        /* a known library function that clears the gradients of what it is
         * given (`pyro.infer.util.zero_grads(params)`), or a function of
         * another file of the run that clears gradients (its summary says so):
         * zeroing, of parameters the file does not name */
        if (clears_grads_elsewhere(m, (uint32_t)i)) {
            add_event(out, OL_EV_ZERO_ALL, (uint32_t)i, c->node, where, OL_NONE);
            continue;
        }
        /* a local function called here: its events happen here */
        if (depth < 3) {
            const uint32_t *called;
            size_t ncalled = ol_call_functions(m, (uint32_t)i, &called);
            for (size_t k = 0; k < ncalled; k++) {
                uint32_t f = called[k];
                const ol_function *callee = &m->functions.items[f];
                if (f == fn || (k > 0 && called[k - 1] == f))
                    continue;
                ol_nid body = ol_field(t, callee->node, OL_F_body);
                if (body != OL_NONE)
                    collect(m, body, where, (uint32_t)f, depth + 1, out);
            }
        }
    }
}

void ol_collect_events(ol_model *m, ol_nid region, ol_event_vec *out)
{
    /* a loop belongs to its function; a function's body block to the function itself */
    collect(m, region, OL_NONE, ol_function_of(m, region), 0, out);
}

static int cmp_step_event(const void *a, const void *b, const ol_event *events)
{
    uint32_t x = events[*(const uint32_t *)a].call, y = events[*(const uint32_t *)b].call;
    return x < y ? -1 : x > y;
}

const ol_region_events *ol_events_of(ol_model *m, ol_nid region)
{
    const ol_tree *t = m->tree;
    if (region >= t->nodes.len)
        region = 0;
    facts_cache *fc = cache_of(m);
    if (fc->at[region])
        return fc->regions.items[fc->at[region] - 1];
    ol_region_events re;
    memset(&re, 0, sizeof(re));
    ol_collect_events(m, region, &re.events);
    for (size_t i = 0; i < re.events.len; i++) {
        switch (re.events.items[i].kind) {
        case OL_EV_BACKWARD:
            re.has_backward = true;
            ol_vec_push(&re.backwards, (uint32_t)i);
            break;
        case OL_EV_STEP:
            re.has_step = true;
            ol_vec_push(&re.steps, (uint32_t)i);
            break;
        case OL_EV_ZERO:
        case OL_EV_ZERO_ALL:
            ol_vec_push(&re.zeros, (uint32_t)i);
            break;
        }
    }
    /* by call, for ol_events_step_of; a call's step appears once per site
     * it is reached through, and the first of them in event order is the one
     * wanted: insertion sort keeps equal calls in order (steps are few) */
    for (size_t i = 1; i < re.steps.len; i++) {
        uint32_t x = re.steps.items[i];
        size_t j = i;
        while (j > 0 && cmp_step_event(&re.steps.items[j - 1], &x, re.events.items) > 0) {
            re.steps.items[j] = re.steps.items[j - 1];
            j--;
        }
        re.steps.items[j] = x;
    }
    ol_region_events *kept = ol_xmalloc(sizeof(*kept));
    *kept = re;
    ol_vec_push(&fc->regions, kept);
    fc->at[region] = (uint32_t)fc->regions.len;
    return kept;
}

size_t ol_events_step_of(const ol_region_events *re, uint32_t call)
{
    size_t lo = 0, hi = re->steps.len;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (re->events.items[re->steps.items[mid]].call < call)
            lo = mid + 1;
        else
            hi = mid;
    }
    /* the last of equal calls: the original search kept the last match */
    size_t found = re->events.len;
    for (size_t i = lo; i < re->steps.len && re->events.items[re->steps.items[i]].call == call; i++)
        found = re->steps.items[i];
    return found;
}


/* ---- texts ------------------------------------------------------------------------ */

void ol_text_index_add(ol_text_index *ix, const ol_tree *t, ol_nid n)
{
    if (n == OL_NONE)
        return;
    ol_text_entry e = {ol_text_hash(t, n), n};
    ol_vec_push(&ix->entries, e);
    ix->sealed = false;
}

static int cmp_text_entry(const void *a, const void *b)
{
    const ol_text_entry *x = a, *y = b;
    if (x->hash != y->hash)
        return x->hash < y->hash ? -1 : 1;
    return x->node < y->node ? -1 : x->node > y->node;
}

bool ol_text_index_has(ol_text_index *ix, const ol_tree *t, ol_nid n)
{
    if (n == OL_NONE)
        return false;
    if (!ix->sealed) {
        ol_sort(ix->entries.items, ix->entries.len, sizeof(ol_text_entry), cmp_text_entry);
        ix->sealed = true;
    }
    uint64_t h = ol_text_hash(t, n);
    size_t lo = 0, hi = ix->entries.len;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (ix->entries.items[mid].hash < h)
            lo = mid + 1;
        else
            hi = mid;
    }
    for (size_t i = lo; i < ix->entries.len && ix->entries.items[i].hash == h; i++)
        if (ol_same_text(t, ix->entries.items[i].node, n))
            return true;
    return false;
}

void ol_text_index_free(ol_text_index *ix)
{
    ol_vec_free(&ix->entries);
    ix->sealed = false;
}

static bool part_of(const ol_tree *t, ol_nid part, ol_nid whole);

bool ol_zero_clears(ol_model *m, ol_nid zero_target, ol_nid optimizer)
{
    const ol_tree *t = m->tree;
    if (ol_same_text(t, zero_target, optimizer))
        return true;
    ol_val zv = ol_eval(m, zero_target);
    if (zv.kind == OL_V_OPTIMIZER)
        return false; /* another optimizer */
    ol_nid value = optimizer_value(m, optimizer);
    ol_nid sources[8];
    size_t n = value != OL_NONE ? parameter_sources(m, value, sources, 0, 8, 0) : 0;
    if (n == 0)
        return zv.kind == OL_V_MODULE || zv.kind == OL_V_UNKNOWN || zv.kind == OL_V_OBJECT;
    /* the optimizer holds these modules' parameters: zeroing any of them,
     * or a module they are part of, counts (enc.zero_grad(); dec.zero_grad()
     * for Adam(enc + dec params); generator.zero_grad() for
     * Adam(generator.module.generator.parameters())) */
    for (size_t i = 0; i < n; i++)
        if (part_of(t, sources[i], zero_target))
            return true;
    return false;
}

/* Is `part` the same expression as `whole`, or an attribute chain below it
 * (`model.fc` below `model`)? */
static bool part_of(const ol_tree *t, ol_nid part, ol_nid whole)
{
    for (int depth = 0; depth < 8 && part != OL_NONE; depth++) {
        part = ol_unparen(t, part);
        if (ol_same_text(t, part, whole))
            return true;
        if (ol_kind_of(t, part) == OL_N_attribute)
            part = ol_field(t, part, OL_F_object);
        else if (ol_kind_of(t, part) == OL_N_subscript)
            part = ol_field(t, part, OL_F_value);
        else
            return false;
    }
    return false;
}

/* Does the call build a module that holds the modules it is given, their
 * parameters shared, not copied: a container (`nn.Sequential`,
 * `nn.ModuleList`, `nn.ModuleDict`), a wrapper (DDP, DataParallel, FSDP,
 * `torch.compile`), or a class of this file? Not `copy.deepcopy(student)`,
 * `AveragedModel(model)` or an EMA: a copy is trained by no optimizer of
 * the original. */
static bool shares_parameters(ol_model *m, ol_nid call)
{
    static const char *const holders[] = {"Sequential", "ModuleList", "ModuleDict", "DistributedDataParallel",
                                          "DataParallel", "FullyShardedDataParallel", "compile", NULL};
    ol_nid fn = ol_field(m->tree, call, OL_F_function);
    if (fn == OL_NONE)
        return false;
    if (ol_eval(m, fn).kind == OL_V_CLASS)
        return true;
    const char *q = ol_qualname(m, fn);
    if (!q || strncmp(q, "torch.", 6) != 0)
        return false;
    const char *last = strrchr(q, '.') + 1;
    for (const char *const *h = holders; *h; h++)
        if (strcmp(last, *h) == 0)
            return true;
    return false;
}

/* Was `module` (a name) built from `part`'s module: a binding of it that
 * reaches here is a call that holds that module (shares_parameters), given
 * it itself or through a name the call is given (`model =
 * nn.Sequential(backbone, head)`, then `model = DDP(model)`)? An optimizer of
 * `head.parameters()` then trains part of it. */
static bool built_from(ol_model *m, ol_nid module, ol_nid part, int depth)
{
    const ol_tree *t = m->tree;
    module = ol_unparen(t, module);
    ol_nid root = ol_unparen(t, part);
    while (root != OL_NONE && (ol_kind_of(t, root) == OL_N_attribute || ol_kind_of(t, root) == OL_N_subscript))
        root = ol_unparen(t, ol_field(t, root, ol_kind_of(t, root) == OL_N_attribute ? OL_F_object : OL_F_value));
    if (depth > 3 || module == OL_NONE || root == OL_NONE || ol_kind_of(t, module) != OL_N_identifier ||
        ol_kind_of(t, root) != OL_N_identifier)
        return false;
    uint32_t defs[4];
    size_t nd = ol_reaching_defs(m, m->node_scope[module], ol_node_sym(m, module), module, defs, 4);
    for (size_t k = 0; k < nd && nd < 4; k++) {
        const ol_def *d = &m->defs.items[defs[k]];
        ol_nid v = d->kind == OL_DEF_ASSIGN && d->path_len == 0 && !d->starred ? ol_unparen(t, d->value) : OL_NONE;
        ol_nid args = v != OL_NONE && ol_kind_of(t, v) == OL_N_call ? ol_field(t, v, OL_F_arguments) : OL_NONE;
        if (args == OL_NONE || ol_kind_of(t, args) != OL_N_argument_list || !shares_parameters(m, v))
            continue;
        for (ol_nid a = ol_first_named(t, args); a != OL_NONE; a = ol_next_named(t, a)) {
            ol_nid given = ol_kind_of(t, a) == OL_N_keyword_argument ? ol_field(t, a, OL_F_value) : a;
            given = ol_unparen(t, given);
            if (given == OL_NONE || ol_kind_of(t, given) != OL_N_identifier)
                continue;
            if (ol_node_sym(m, given) == ol_node_sym(m, root) || built_from(m, given, root, depth + 1))
                return true;
        }
    }
    return false;
}

bool ol_optimizer_may_train(ol_model *m, ol_nid optimizer, ol_nid module)
{
    const ol_tree *t = m->tree;
    ol_nid value = optimizer_value(m, optimizer);
    ol_nid sources[8];
    size_t n = value != OL_NONE ? parameter_sources(m, value, sources, 0, 8, 0) : 0;
    if (n == 0)
        return true;
    for (size_t i = 0; i < n; i++)
        if (part_of(t, sources[i], module) || part_of(t, module, sources[i]) || built_from(m, module, sources[i], 0))
            return true;
    return false;
}

bool ol_is_scalar_loss(ol_model *m, ol_nid value, ol_val v)
{
    if (!(v.flags & OL_VF_LOSS))
        return false;
    const ol_tree *t = m->tree;
    ol_nid e = ol_unparen(t, value);
    if (ol_kind_of(t, e) == OL_N_call) {
        ol_nid r = ol_call_arg(m, e, -1, "reduction");
        const char *s;
        uint32_t len;
        if (r != OL_NONE && ol_string_value(t, r, &s, &len) && ol_mem_eq_cstr(s, len, "none"))
            return false;
    }
    return true;
}

bool ol_is_primary(const ol_tree *t, ol_nid n)
{
    ol_kind k = ol_kind_of(t, n);
    return k == OL_N_identifier || k == OL_N_attribute || k == OL_N_call || k == OL_N_subscript ||
           k == OL_N_parenthesized_expression;
}

void ol_fix_call_on(ol_fix *fix, const ol_tree *t, ol_nid expr, const char *suffix)
{
    const ol_node *n = ol_node_at(t, expr);
    if (ol_is_primary(t, expr)) {
        ol_fix_edit(fix, n->end, n->end, suffix);
        return;
    }
    ol_fix_edit(fix, n->start, n->start, "(");
    char *close = ol_xasprintf(")%s", suffix);
    ol_fix_edit(fix, n->end, n->end, close);
    free(close);
}

const char *ol_torch_alias(ol_model *m, ol_nid n)
{
    for (size_t i = 0; i < m->imports.len; i++) {
        const ol_import *imp = &m->imports.items[i];
        if (imp->def == OL_NO_INDEX || strcmp(ol_sym_str(m, imp->qual), "torch") != 0)
            continue;
        uint32_t defs[8];
        size_t count = ol_reaching_defs(m, m->node_scope[n], imp->bound, n, defs, 8);
        /* the name must mean torch wherever the fix puts it */
        bool only_torch = count > 0;
        for (size_t k = 0; k < count; k++) {
            const ol_def *d = &m->defs.items[defs[k]];
            if (d->kind != OL_DEF_IMPORT || strcmp(ol_sym_str(m, d->qual), "torch") != 0)
                only_torch = false;
        }
        if (only_torch)
            return ol_sym_str(m, imp->bound);
    }
    return NULL;
}

/* Methods of tensors, containers, strings and loggers: none runs a model. */
static const char *const PLAIN_METHODS[] = {
    "tolist", "item", "numpy", "append", "extend", "insert", "pop", "add", "update", "items", "keys", "values",
    "get", "copy", "clear", "setdefault", "nonzero", "unique", "size", "dim", "numel", "sum", "mean", "max", "min",
    "std", "var", "abs", "any", "all", "view", "reshape", "flatten", "squeeze", "unsqueeze", "permute",
    "transpose", "contiguous", "clone", "detach", "cpu", "to", "cuda", "float", "long", "int", "bool", "half",
    "double", "type", "masked_fill", "fill_", "zero_", "index_select", "gather", "expand", "repeat",
    "repeat_interleave", "split", "chunk", "unbind", "cumsum", "argmax", "argmin", "topk", "sort", "argsort",
    "eq", "ne", "gt", "lt", "ge", "le", "format", "join", "strip", "startswith", "endswith", "lower", "upper",
    "replace", "info", "debug", "warning", "error", NULL};

/* Does call ci surely run no model: a builtin, a torch function, a method
 * of the list above, or a function of the file whose own calls all do so
 * (two levels deep)? */
static bool runs_no_model(ol_model *m, uint32_t ci, int depth)
{
    const ol_call *c = &m->calls.items[ci];
    const char *q = ol_qualname(m, c->callee);
    if (q && (ol_str_has_prefix(q, "builtins.") || ol_str_has_prefix(q, "torch.nn.functional.") ||
              (ol_str_has_prefix(q, "torch.") && !ol_str_has_prefix(q, "torch.nn."))))
        return true;
    const uint32_t *fns;
    size_t nf = ol_call_functions(m, ci, &fns);
    if (nf > 0) {
        if (depth >= 2)
            return false;
        for (size_t i = 0; i < nf; i++) {
            size_t first, end = ol_calls_in(m, m->functions.items[fns[i]].node, &first);
            for (size_t k = first; k < end; k++)
                if (!runs_no_model(m, (uint32_t)k, depth + 1))
                    return false;
        }
        return true;
    }
    if (c->receiver == OL_NONE || !c->name)
        return false;
    const char *name = ol_sym_str(m, c->name);
    for (const char *const *w = PLAIN_METHODS; *w; w++)
        if (strcmp(name, *w) == 0)
            return true;
    return false;
}

/* Does the loop surely run no model, so that what it cuts out of a tensor
 * is stored or rearranged, not fed batch by batch to a model (a replay
 * buffer filled group by group)? */
bool ol_loop_runs_no_model(ol_model *m, uint32_t loop)
{
    size_t first, end = ol_calls_in(m, m->loops.items[loop].node, &first);
    for (size_t k = first; k < end; k++)
        if (!runs_no_model(m, (uint32_t)k, 0))
            return false;
    return true;
}

static bool is_jump(ol_kind k)
{
    return k == OL_N_continue_statement || k == OL_N_break_statement || k == OL_N_return_statement ||
           k == OL_N_raise_statement;
}

bool ol_leaves_before(const ol_tree *t, ol_nid n, ol_nid later, ol_nid stop)
{
    uint32_t later_start = later != OL_NONE ? t->nodes.items[later].start : UINT32_MAX;
    for (ol_nid a = n, p = ol_parent(t, n); p != OL_NONE && a != stop; a = p, p = ol_parent(t, p)) {
        if (ol_kind_of(t, p) != OL_N_block && ol_kind_of(t, p) != OL_N_module)
            continue;
        for (ol_nid s = ol_next_named(t, a); s != OL_NONE; s = ol_next_named(t, s)) {
            if (t->nodes.items[s].start >= later_start || t->nodes.items[s].end > later_start)
                return false; /* `later` comes first, or lies inside this statement */
            if (is_jump(ol_kind_of(t, s)))
                return true;
        }
        if (p == stop)
            break;
    }
    return false;
}

bool ol_in_handler(const ol_tree *t, ol_nid n, ol_nid stop)
{
    for (ol_nid p = ol_parent(t, n); p != OL_NONE && p != stop; p = ol_parent(t, p))
        if (ol_kind_of(t, p) == OL_N_except_clause)
            return true;
    return false;
}

/* Is n in the body of `if __name__ == "__main__":` (a smoke test or a
 * benchmark of a module, run by hand)? */
static bool under_main_guard(const ol_tree *t, ol_nid n)
{
    for (ol_nid a = n, p = ol_parent(t, n); p != OL_NONE; a = p, p = ol_parent(t, p)) {
        if (ol_kind_of(t, p) != OL_N_if_statement || ol_field(t, p, OL_F_consequence) != a)
            continue;
        ol_nid cond = ol_unparen(t, ol_field(t, p, OL_F_condition));
        uint32_t len;
        const char *s = ol_text(t, cond, &len);
        for (uint32_t i = 0; i + 8 <= len; i++)
            if (memcmp(s + i, "__main__", 8) == 0)
                return true;
    }
    return false;
}

/* Does the code at n run once per training or inference step: in a loop, in
 * a forward or step method, or in a function called from such code? Module
 * level outside loops, `__init__`, a smoke test under the main guard, and a
 * function whose every caller in the file runs once build their tensor once:
 * copying it costs a moment at start-up and nothing per step. A function
 * with no caller in the file may be called from anywhere, and counts as per
 * step. */
static bool runs_per_step(ol_model *m, ol_nid n, int depth)
{
    const ol_tree *t = m->tree;
    if (under_main_guard(t, n))
        return false;
    if (m->node_loop[n] != OL_NO_INDEX)
        return true;
    uint32_t fn = ol_function_of(m, n);
    if (fn == OL_NO_INDEX)
        return false;
    const ol_function *f = &m->functions.items[fn];
    const char *name = ol_sym_str(m, f->name);
    if (name && (strcmp(name, "__init__") == 0 || strcmp(name, "reset_parameters") == 0))
        return false;
    if (f->callsites.len == 0 || depth >= 3 || ol_function_hook(m, fn) != OL_HOOK_NONE)
        return true;
    if (name && (strcmp(name, "forward") == 0 || strcmp(name, "__call__") == 0))
        return true;
    for (size_t i = 0; i < f->callsites.len; i++)
        if (runs_per_step(m, m->calls.items[f->callsites.items[i]].node, depth + 1))
            return true;
    return false;
}

bool ol_runs_per_step(ol_model *m, ol_nid n)
{
    return runs_per_step(m, n, 0);
}

/* Does loop li hold a loop of the same function that draws batches, while
 * it does not draw them itself (an epoch loop around the batch loop)? A
 * batch loop that runs a validation loop now and then stays a batch loop;
 * a loop that only runs a model each iteration inside a batch loop (time
 * steps, beams) does not make it an epoch loop. */
static bool holds_step_loop(ol_model *m, uint32_t li)
{
    const ol_tree *t = m->tree;
    if (ol_loop_draws_batches(m, li))
        return false;
    ol_nid node = m->loops.items[li].node;
    for (size_t k = li + 1; k < m->loops.len; k++) {
        ol_nid inner = m->loops.items[k].node;
        if (!ol_contains(t, node, inner))
            break; /* loops are in node order: the first one outside ends the subtree */
        if (m->loops.items[k].kind != OL_LOOP_COMPREHENSION && ol_loop_is_data_loop(m, (uint32_t)k) &&
            ol_function_of(m, inner) == ol_function_of(m, node))
            return true;
    }
    return false;
}

/* A loop of a few iterations by hand under the main guard (`for _ in
 * range(3):`), a smoke test rather than a run. */
static bool few_by_hand(ol_model *m, uint32_t li)
{
    const ol_tree *t = m->tree;
    ol_nid it = ol_unparen(t, m->loops.items[li].iter);
    if (it == OL_NONE || ol_kind_of(t, it) != OL_N_call || !ol_text_is(t, ol_field(t, it, OL_F_function), "range"))
        return false;
    ol_nid a = ol_call_arg(m, it, 0, NULL), b = ol_call_arg(m, it, 1, NULL);
    ol_nid stop = b != OL_NONE ? b : a;
    if (stop == OL_NONE || ol_kind_of(t, stop) != OL_N_integer)
        return false;
    uint32_t len;
    const char *s = ol_text(t, stop, &len);
    return len <= 2 && atoi(s) <= 10;
}

static bool names_once(const char *name)
{
    static const char *const once[] = {"__init__", "reset_parameters", "_reset_parameters", "init_weights",
                                       "_init_weights", "setup", "configure_optimizers", "__post_init__", NULL};
    for (const char *const *w = once; name && *w; w++)
        if (ol_str_eq(name, *w))
            return true;
    return false;
}

/* Is e `a % k`, parentheses aside? */
static bool modulo(const ol_tree *t, ol_nid e)
{
    e = ol_unparen(t, e);
    return ol_kind_of(t, e) == OL_N_binary_operator && ol_kind_of(t, ol_field(t, e, OL_F_operator)) == OL_T_PERCENT;
}

/* Is c `x == N` (either way round) for an integer literal N? *other gets x. */
static bool equals_integer(const ol_tree *t, ol_nid c, ol_nid *other)
{
    c = ol_unparen(t, c);
    if (ol_kind_of(t, c) != OL_N_comparison_operator)
        return false;
    ol_nid a = ol_first_named(t, c);
    ol_nid b = a != OL_NONE ? ol_next_named(t, a) : OL_NONE;
    if (b == OL_NONE || ol_next_named(t, b) != OL_NONE)
        return false;
    bool eq = false;
    for (ol_nid k = ol_node_at(t, c)->first_child; k != OL_NONE; k = ol_node_at(t, k)->next_sibling)
        if (ol_kind_of(t, k) == OL_T_EQEQ)
            eq = true;
    ol_nid ua = ol_unparen(t, a), ub = ol_unparen(t, b);
    if (!eq || (ol_kind_of(t, ua) != OL_N_integer && ol_kind_of(t, ub) != OL_N_integer))
        return false;
    if (other)
        *other = ol_kind_of(t, ub) == OL_N_integer ? ua : ub;
    return true;
}

/* Does the condition c hold only every so many iterations: `a % k == 0`
 * (either way round), `not a % k`, or such a test as one side of an `and`?
 * `a % k != 0` holds on most iterations, and a `%` elsewhere (string
 * formatting, an index) says nothing of how often. */
static bool every_so_often(const ol_tree *t, ol_nid c, int depth)
{
    c = ol_unparen(t, c);
    if (c == OL_NONE || depth > 8)
        return false;
    switch (ol_kind_of(t, c)) {
    case OL_N_not_operator:
        return modulo(t, ol_field(t, c, OL_F_argument));
    case OL_N_boolean_operator: {
        ol_nid l = ol_field(t, c, OL_F_left), r = ol_field(t, c, OL_F_right);
        bool el = every_so_often(t, l, depth + 1), er = every_so_often(t, r, depth + 1);
        if (ol_kind_of(t, ol_field(t, c, OL_F_operator)) == OL_T_AND)
            return el || er;
        /* `step % k == 0 or step == 1`: every k steps and once more */
        return (el || er) && (el || equals_integer(t, l, NULL)) && (er || equals_integer(t, r, NULL));
    }
    case OL_N_comparison_operator: {
        ol_nid other;
        if (!equals_integer(t, c, &other))
            return false;
        /* `a % k == 0`: the integer is 0 */
        ol_nid a = ol_unparen(t, ol_first_named(t, c));
        ol_nid zero = a == other ? ol_unparen(t, ol_next_named(t, ol_first_named(t, c))) : a;
        return modulo(t, other) && ol_text_is(t, zero, "0");
    }
    default:
        return false;
    }
}

ol_nid ol_periodic_branch(const ol_tree *t, ol_nid n, ol_nid top)
{
    for (ol_nid a = n, p = ol_parent(t, n); p != OL_NONE && a != top; a = p, p = ol_parent(t, p)) {
        ol_kind pk = ol_kind_of(t, p);
        if ((pk != OL_N_if_statement && pk != OL_N_elif_clause) || ol_field(t, p, OL_F_consequence) != a)
            continue;
        ol_nid cond = ol_field(t, p, OL_F_condition);
        if (every_so_often(t, cond, 0))
            return cond;
    }
    return OL_NONE;
}

/* Does each iteration of loop li wait for the user (`input()`, a line of
 * standard input) in its own body? */
static bool reads_input_uncached(ol_model *m, uint32_t li)
{
    static const char *const readers[] = {"sys.stdin.readline", NULL};
    const ol_tree *t = m->tree;
    const ol_loop *l = &m->loops.items[li];
    if (l->body == OL_NONE)
        return false;
    size_t first, end = ol_calls_in(m, l->body, &first);
    for (size_t i = first; i < end; i++) {
        ol_nid call = m->calls.items[i].node;
        if (m->node_loop[call] != li)
            continue;
        ol_nid f = ol_unparen(t, ol_field(t, call, OL_F_function));
        uint32_t none[1];
        /* the builtin `input()` (`raw_input()` in Python 2), not a name of the file's own */
        if (ol_kind_of(t, f) == OL_N_identifier && (ol_text_is(t, f, "input") || ol_text_is(t, f, "raw_input")) &&
            ol_reaching_defs(m, m->node_scope[f], ol_node_sym(m, f), f, none, 1) == 0)
            return true;
        if (ol_call_is(m, call, readers))
            return true;
    }
    return false;
}

/* Asked for every node of the loop: answered once per loop. */
static bool reads_input(ol_model *m, uint32_t li)
{
    facts_cache *fc = cache_of(m);
    if (!fc->reads_input)
        fc->reads_input = ol_xcalloc(m->loops.len + 1, 1);
    if (!fc->reads_input[li])
        fc->reads_input[li] = reads_input_uncached(m, li) ? 2 : 1;
    return fc->reads_input[li] == 2;
}

/* The object and attribute a first-time test names: `not hasattr(obj,
 * "name")`; false for anything else. */
static bool first_time_test(const ol_tree *t, ol_nid cond, ol_nid *obj, const char **name, uint32_t *len)
{
    if (ol_kind_of(t, cond) != OL_N_not_operator)
        return false;
    ol_nid call = ol_unparen(t, ol_field(t, cond, OL_F_argument));
    if (ol_kind_of(t, call) != OL_N_call || !ol_text_is(t, ol_field(t, call, OL_F_function), "hasattr"))
        return false;
    ol_nid args = ol_field(t, call, OL_F_arguments);
    ol_nid o = args != OL_NONE ? ol_first_named(t, args) : OL_NONE;
    ol_nid s = o != OL_NONE ? ol_next_named(t, o) : OL_NONE;
    if (s == OL_NONE || ol_next_named(t, s) != OL_NONE || ol_kind_of(t, o) != OL_N_identifier ||
        !ol_string_value(t, s, name, len))
        return false;
    *obj = o;
    return true;
}

/* Is node e `obj.name` (obj spelled as the test spells it)? */
static bool is_attr_named(const ol_tree *t, ol_nid e, ol_nid obj, const char *name, uint32_t len)
{
    e = ol_unparen(t, e);
    if (ol_kind_of(t, e) != OL_N_attribute)
        return false;
    ol_nid o = ol_unparen(t, ol_field(t, e, OL_F_object)), at = ol_field(t, e, OL_F_attribute);
    uint32_t al;
    const char *as = at != OL_NONE ? ol_text(t, at, &al) : NULL;
    return as && al == len && memcmp(as, name, len) == 0 && (obj == OL_NONE || ol_same_text(t, o, obj));
}

/* The attribute names the file deletes, gathered once. */
static void gather_deleted(ol_model *m, facts_cache *fc)
{
    const ol_tree *t = m->tree;
    fc->deleted_built = true;
    for (ol_nid x = 0; x < t->nodes.len; x++) {
        ol_kind xk = ol_kind_of(t, x);
        if (xk == OL_N_delete_statement) {
            for (ol_nid d = x + 1; d < m->subtree_end[x]; d++)
                if (ol_kind_of(t, d) == OL_N_attribute && ol_field(t, d, OL_F_attribute) != OL_NONE)
                    ol_vec_push(&fc->deleted, ol_field(t, d, OL_F_attribute));
        } else if (xk == OL_N_call && ol_text_is(t, ol_field(t, x, OL_F_function), "delattr")) {
            ol_nid args = ol_field(t, x, OL_F_arguments);
            ol_nid what = args != OL_NONE ? ol_first_named(t, args) : OL_NONE;
            what = what != OL_NONE ? ol_next_named(t, what) : OL_NONE;
            const char *text;
            uint32_t len;
            if (what != OL_NONE && ol_string_value(t, what, &text, &len))
                ol_vec_push(&fc->deleted, what);
            else
                fc->deletes_unknown = true;
        }
    }
}

/* Does the file delete attributes spelled name (`del x.name`, `delattr(x, "name")`)? */
static bool file_deletes(ol_model *m, facts_cache *fc, const char *name, uint32_t len)
{
    if (!fc->deleted_built)
        gather_deleted(m, fc);
    if (fc->deletes_unknown)
        return true;
    const ol_tree *t = m->tree;
    for (size_t i = 0; i < fc->deleted.len; i++) {
        ol_nid d = fc->deleted.items[i];
        const char *text;
        uint32_t l;
        if (ol_kind_of(t, d) == OL_N_identifier)
            text = ol_text(t, d, &l);
        else if (!ol_string_value(t, d, &text, &l))
            continue;
        if (l == len && memcmp(text, name, len) == 0)
            return true;
    }
    return false;
}

/* `if not hasattr(self, "queue"): self.queue = ...`: the block sets what its
 * test asks about, so it runs the first time only (once per object),
 * unless the file takes the attribute away again (`del`, `delattr`). The
 * test, or OL_NONE. `if self.queue is None:` is not read so: the corpus's
 * objects that cache that way are often made every step (a Pyro plate's
 * indices), and once per object is then every step. Answered once per `if`. */
static ol_nid first_time_guard(ol_model *m, ol_nid n)
{
    const ol_tree *t = m->tree;
    facts_cache *fc = NULL;
    for (ol_nid a = n, p = ol_parent(t, n); p != OL_NONE; a = p, p = ol_parent(t, p)) {
        ol_kind pk = ol_kind_of(t, p);
        if (pk == OL_N_function_definition || pk == OL_N_class_definition || pk == OL_N_lambda)
            break;
        if (pk != OL_N_if_statement || ol_field(t, p, OL_F_consequence) != a)
            continue;
        ol_nid cond = ol_unparen(t, ol_field(t, p, OL_F_condition)), obj = OL_NONE;
        const char *name = NULL;
        uint32_t len = 0;
        if (!first_time_test(t, cond, &obj, &name, &len))
            continue;
        if (!fc) {
            fc = cache_of(m);
            if (!fc->first_time)
                fc->first_time = ol_xcalloc(t->nodes.len + 1, 1);
        }
        if (!fc->first_time[p]) {
            bool sets = false;
            for (ol_nid x = a; x < m->subtree_end[a] && !sets; x++)
                sets = ol_kind_of(t, x) == OL_N_assignment &&
                       is_attr_named(t, ol_field(t, x, OL_F_left), obj, name, len);
            fc->first_time[p] = sets && !file_deletes(m, fc, name, len) ? 2 : 1;
        }
        if (fc->first_time[p] == 2)
            return cond;
    }
    return OL_NONE;
}

/* The depths of the walk through callers: 0 to 4 (often_of_function). */
#define OFTEN_DEPTHS 5

static void often_of_function(ol_model *m, uint32_t fn, ol_often_local *out, int depth);

static void often_at(ol_model *m, ol_nid n, ol_often_local *out, int depth)
{
    ol_nid first = first_time_guard(m, n);
    if (first != OL_NONE) {
        out->often = OL_ONCE;
        out->cause = OL_OC_FIRST_TIME;
        out->node = first;
        out->function = OL_NO_INDEX;
        return;
    }
    out->often = OL_ONCE;
    out->cause = OL_OC_MODULE;
    out->node = OL_NONE;
    out->function = OL_NO_INDEX;
    /* the loops around n, innermost first: a loop runs its body per step
     * (per batch, per frame, per environment step), unless it is the epoch
     * loop around a batch loop, or a smoke test of a few iterations by hand
     * under the main guard */
    bool by_hand = under_main_guard(m->tree, n);
    uint32_t epoch = OL_NO_INDEX;
    for (uint32_t li = m->node_loop[n]; li != OL_NO_INDEX; li = m->loops.items[li].parent) {
        if (m->loops.items[li].kind == OL_LOOP_COMPREHENSION && !ol_loop_is_data_loop(m, li))
            continue; /* a comprehension runs within the code around it */
        if (holds_step_loop(m, li)) {
            if (epoch == OL_NO_INDEX)
                epoch = li;
            continue;
        }
        if (by_hand && few_by_hand(m, li))
            continue;
        /* a prompt loop: each iteration waits for the user, once per request */
        if (reads_input(m, li)) {
            out->often = OL_PER_EPOCH;
            out->cause = OL_OC_INTERACTIVE;
            out->node = m->loops.items[li].node;
            return;
        }
        /* a periodic validation, log or checkpoint: every so many steps */
        ol_nid every = ol_periodic_branch(m->tree, n, m->loops.items[li].node);
        if (every != OL_NONE) {
            out->often = OL_PER_EPOCH;
            out->cause = OL_OC_PERIODIC;
            out->node = every;
            return;
        }
        out->often = OL_PER_STEP;
        out->cause = OL_OC_STEP_LOOP;
        out->node = m->loops.items[li].node;
        return;
    }
    if (epoch != OL_NO_INDEX) {
        out->often = OL_PER_EPOCH;
        out->cause = OL_OC_EPOCH_LOOP;
        out->node = m->loops.items[epoch].node;
        return;
    }
    uint32_t fn = ol_function_of(m, n);
    if (fn == OL_NO_INDEX)
        return;
    facts_cache *fc = cache_of(m);
    if (!fc->often_fn) {
        fc->often_fn = ol_xcalloc((m->functions.len + 1) * OFTEN_DEPTHS, sizeof(ol_often_local));
        fc->often_fn_known = ol_xcalloc(m->functions.len + 1, 1);
    }
    size_t slot = (size_t)fn * OFTEN_DEPTHS + (size_t)depth;
    if (fc->often_fn_known[fn] & (1u << depth)) {
        *out = fc->often_fn[slot];
        return;
    }
    often_of_function(m, fn, out, depth);
    fc->often_fn[slot] = *out;
    fc->often_fn_known[fn] |= (uint8_t)(1u << depth);
}

/* How often function fn's code runs, for code in it that no loop of its
 * own or first-time guard decides: once (a constructor's name), per step
 * (a forward, a per-batch hook), or as often as its callers in the file. */
static void often_of_function(ol_model *m, uint32_t fn, ol_often_local *out, int depth)
{
    out->often = OL_ONCE;
    out->cause = OL_OC_MODULE;
    out->node = OL_NONE;
    out->function = OL_NO_INDEX;
    const ol_function *f = &m->functions.items[fn];
    const char *name = ol_sym_str(m, f->name);
    ol_nid fname = ol_field(m->tree, f->node, OL_F_name);
    if (names_once(name)) {
        out->cause = OL_OC_INIT;
        out->node = fname;
        return;
    }
    if (ol_function_hook(m, fn) != OL_HOOK_NONE ||
        (name && (strcmp(name, "forward") == 0 || strcmp(name, "__call__") == 0))) {
        out->often = OL_PER_STEP;
        out->cause = OL_OC_STEP_METHOD;
        out->node = fname;
        return;
    }
    if (f->callsites.len == 0 || depth >= 4) {
        /* a nested function runs when the function around it calls it */
        uint32_t outer = m->scopes.items[f->outer_scope].function;
        if (f->callsites.len == 0 && outer != OL_NO_INDEX && depth < 4) {
            often_at(m, m->functions.items[outer].node, out, depth + 1);
            return;
        }
        out->often = OL_PER_CALL;
        out->cause = OL_OC_NO_CALLER;
        out->function = fn;
        return;
    }
    /* as often as its most frequent caller in the file */
    ol_often_local best = {OL_ONCE, OL_OC_MODULE, OL_NONE, OL_NO_INDEX};
    bool any = false;
    for (size_t i = 0; i < f->callsites.len; i++) {
        ol_nid at = m->calls.items[f->callsites.items[i]].node;
        if (ol_function_of(m, at) == fn)
            continue; /* recursion */
        ol_often_local c;
        often_at(m, at, &c, depth + 1);
        if (!any || c.often > best.often) {
            best = c;
            best.node = at;
            any = true;
        }
        if (best.often == OL_PER_STEP)
            break;
    }
    if (!any) {
        out->often = OL_PER_CALL;
        out->cause = OL_OC_NO_CALLER;
        out->function = fn;
        return;
    }
    out->often = best.often;
    out->cause = OL_OC_CALLER;
    out->node = best.node;
    out->function = best.often == OL_PER_CALL ? best.function : OL_NO_INDEX;
}

void ol_often_explain(ol_model *m, ol_nid n, ol_often_local *out)
{
    if (n == OL_NONE || n >= m->tree->nodes.len) {
        out->often = OL_PER_CALL;
        out->cause = OL_OC_MODULE;
        out->node = OL_NONE;
        out->function = OL_NO_INDEX;
        return;
    }
    often_at(m, n, out, 0);
}

/* Does the file import PyTorch or a library built on it? Without one, a
 * call named like a model is something else (a Keras layer, a pydantic
 * model's method, an HTTP client for a hosted LLM), and torch.no_grad()
 * would not even be at hand. */
static const char *const torch_family[] = {"torch", "torchvision", "torchaudio", "torchtext", "lightning",
                                           "pytorch_lightning", "transformers", "timm", "accelerate", "diffusers",
                                           "peft", "trl", "deepspeed", "fairseq", "detectron2", "mmcv", "mmengine",
                                           "ignite", "fastai", "skorch", "torch_geometric", "dgl", "einops", NULL};

/* Does the file itself import a module under one of roots? */
static bool imports_a_root(ol_model *m, const char *const *roots)
{
    for (size_t i = 0; i < m->imports.len; i++) {
        const char *q = ol_sym_str(m, m->imports.items[i].qual);
        size_t n = strcspn(q, ".");
        for (const char *const *r = roots; *r; r++)
            if (strlen(*r) == n && strncmp(q, *r, n) == 0)
                return true;
    }
    return false;
}

bool ol_other_framework(ol_model *m)
{
    static const char *const others[] = {"paddle", "tensorflow", "keras", "tf_keras", "jax", "flax", "haiku",
                                         "mxnet", "mindspore", "oneflow", "jittor", "megengine", "chainer", NULL};
    return imports_a_root(m, others) && !imports_a_root(m, torch_family);
}

bool ol_imports_torch_family(ol_model *m)
{
    if (imports_a_root(m, torch_family))
        return true;
    /* `from ..network import *` may well bring torch in: unknown, so yes */
    const ol_tree *t = m->tree;
    for (ol_nid c = t->nodes.len ? ol_first_named(t, 0) : OL_NONE; c != OL_NONE; c = ol_next_named(t, c)) {
        if (ol_kind_of(t, c) != OL_N_import_from_statement)
            continue;
        for (ol_nid k = ol_first_named(t, c); k != OL_NONE; k = ol_next_named(t, k))
            if (ol_kind_of(t, k) == OL_N_wildcard_import)
                return true;
    }
    /* a module of a package whose other modules bring torch in (a trainer
     * that only imports the package's inputters and utils) */
    return m->links && m->links->imports_root && m->links->imports_root(m->links, m, torch_family);
}


bool ol_may_use_torch(ol_model *m)
{
    if (ol_imports_torch_family(m))
        return true;
    static const char *const without_torch[] = {
        "numpy", "pandas", "matplotlib", "scipy", "sklearn", "seaborn", "tqdm", "PIL", "cv2", "IPython", "jax",
        "flax", "optax", "haiku", "tensorflow", "keras", "tf_keras", "mxnet", "paddle", "plotly", "bokeh",
        "statsmodels", "sympy", "networkx", "requests", "yaml", "h5py", "imageio", "skimage", "numba", "tabulate",
        "os", "sys", "math", "random", "time", "json", "re", "collections", "itertools", "functools", "typing",
        "pathlib", "glob", "shutil", "pickle", "copy", "argparse", "logging", "datetime", "string", "csv",
        "struct", "io", "gzip", "zipfile", "urllib", "subprocess", "warnings", "dataclasses", "abc", "enum",
        "operator", "statistics", "heapq", "bisect", "timeit", "pprint", "textwrap", "unittest", "doctest",
        "__future__", NULL};
    for (size_t i = 0; i < m->imports.len; i++) {
        const char *q = ol_sym_str(m, m->imports.items[i].qual);
        size_t n = strcspn(q, ".");
        bool known = false;
        for (const char *const *w = without_torch; *w && !known; w++)
            known = strlen(*w) == n && strncmp(q, *w, n) == 0;
        if (!known)
            return true; /* a project module, or a library we cannot vouch for */
    }
    return false;
}
