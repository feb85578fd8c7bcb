/*
 * OOM102 tensor-collected-in-loop: `outputs.append(out)`, `extend`,
 * `insert`, `store[k] = out`, `bank[idx] = feats`, `xs += [out]`, or a
 * comprehension over a loader, when the collected value carries the autograd
 * graph and the collection outlives the iterations of a loop that draws
 * batches. Each stored tensor keeps its whole graph (and the activations it
 * saved) alive: an epoch-long list of model outputs is an epoch of
 * activations, even if it is torch.cat'ed at the end.
 *
 * What does not count: detached values (`.detach()`, `.item()`, `.cpu()`
 * after detach), values computed under no_grad, collections reset inside the
 * loop (a per-step list consumed in the same iteration: REINFORCE log-probs,
 * multi-head outputs, decoder steps), and loops that do not draw batches.
 *
 * Fix (unsafe, it changes what is stored): collect `.detach()`ed tensors
 * (`.item()` for scalar losses, unless the collection is later used as
 * tensors: `torch.stack(losses)` needs tensors). No fix when the code
 * backwards through the collection later: a detached copy would stop the
 * gradients it wants.
 */
#include <stdlib.h>
#include <string.h>

#include "rule.h"

/* How the collection is used besides being filled, in the same function:
 * as tensors (`torch.stack(xs)`, `xs[-1].shape`), which a list of Python
 * numbers would break, or backwarded through (`torch.stack(xs).sum()
 * .backward()`), which a detached copy would silently stop. */
typedef struct later_use {
    bool as_tensor, backward;
} later_use;

/* The uses of one collection (by spelling) in one function, found once:
 * the first and last call of each kind, so that "a use outside the
 * statement being judged" is two comparisons. Scanning the function's calls
 * again for every finding grows with the square of a function full of
 * appends. */
typedef struct holder_uses {
    uint32_t fn;
    uint64_t hash;
    ol_nid holder;
    ol_nid backward_first, backward_last, tensor_first, tensor_last;
} holder_uses;

/* Per file: the holders seen, and what is left of the work budget (in
 * nodes read). A file with a great many distinct collections could still
 * make the scans quadratic; past the budget, which is proportional to the
 * file, a use is assumed everywhere: the finding stays, with the `.detach()`
 * help and no fix, so running out can only take a fix away. */
typedef struct uses_cache {
    OL_VEC(holder_uses) entries;
    uint64_t budget;
    bool budget_set;
} uses_cache;

static void note_use(ol_nid *first, ol_nid *last, ol_nid n)
{
    if (*first == OL_NONE || n < *first)
        *first = n;
    if (*last == OL_NONE || n > *last)
        *last = n;
}

static const holder_uses *holder_uses_of(ol_model *m, uses_cache *uc, ol_nid holder, uint32_t fn)
{
    const ol_tree *t = m->tree;
    if (!uc->budget_set) {
        uc->budget = 64 * (uint64_t)t->nodes.len + 1000000;
        uc->budget_set = true;
    }
    uint64_t h = ol_text_hash(t, holder);
    for (size_t i = 0; i < uc->entries.len; i++) {
        const holder_uses *e = &uc->entries.items[i];
        if (e->fn == fn && e->hash == h && ol_same_text(t, e->holder, holder))
            return e;
    }
    holder_uses hu = {fn, h, holder, OL_NONE, OL_NONE, OL_NONE, OL_NONE};
    /* the calls of the function (nested functions are skipped below), or
     * of the whole file for module-level code */
    size_t first = 0, end = m->calls.len;
    if (fn != OL_NO_INDEX)
        end = ol_calls_in(m, m->functions.items[fn].node, &first);
    for (size_t i = first; i < end; i++) {
        const ol_call *c = &m->calls.items[i];
        if (ol_function_of(m, c->node) != fn)
            continue;
        ol_nid recv = c->receiver != OL_NONE ? ol_unparen(t, c->receiver) : OL_NONE;
        ol_nid args = ol_field(t, c->node, OL_F_arguments);
        uint64_t work = 1 + (recv != OL_NONE ? m->subtree_end[recv] - recv : 0) +
                        (args != OL_NONE ? m->subtree_end[args] - args : 0);
        if (uc->budget < work) {
            uc->budget = 0;
            return NULL;
        }
        uc->budget -= work;
        /* xs.append(...), xs.clear(): the list itself, not its tensors */
        bool on_list = recv != OL_NONE && ol_same_text(t, recv, holder);
        bool via_receiver = recv != OL_NONE && !on_list && ol_mentions(t, recv, holder);
        bool via_args = args != OL_NONE && ol_mentions(t, args, holder);
        if (!via_receiver && !via_args)
            continue;
        if (c->name == m->names.backward && via_receiver)
            note_use(&hu.backward_first, &hu.backward_last, c->node);
        const char *q = ol_qualname(m, c->callee);
        if (via_receiver || (q && ol_str_has_prefix(q, "torch.")))
            note_use(&hu.tensor_first, &hu.tensor_last, c->node);
    }
    ol_vec_push(&uc->entries, hu);
    return &uc->entries.items[uc->entries.len - 1];
}

/* A use of the kind [first, last] outside the statement stmt? */
static bool used_outside(const ol_model *m, ol_nid first, ol_nid last, ol_nid stmt)
{
    return first != OL_NONE && (first < stmt || last >= m->subtree_end[stmt]);
}

static later_use uses_of(ol_model *m, uses_cache *uc, ol_nid holder, ol_nid stmt)
{
    later_use u = {false, false};
    if (holder == OL_NONE)
        return u;
    const holder_uses *hu = holder_uses_of(m, uc, holder, ol_function_of(m, stmt));
    if (!hu) {
        later_use unknown = {true, true};
        return unknown;
    }
    u.backward = used_outside(m, hu->backward_first, hu->backward_last, stmt);
    u.as_tensor = used_outside(m, hu->tensor_first, hu->tensor_last, stmt);
    return u;
}

/* `.item()` for a scalar loss, `.detach()` otherwise; `.detach()` also for a
 * loss when the collection is used as tensors later; no fix when something
 * backwards through the collection (the graph is wanted there). */
static ol_fix *detach_fix(ol_model *m, uses_cache *uc, ol_nid value, ol_val v, ol_nid holder, ol_nid stmt)
{
    later_use u = uses_of(m, uc, holder, stmt);
    if (u.backward)
        return NULL;
    bool item = ol_is_scalar_loss(m, value, v) && !u.as_tensor;
    ol_fix *fix = ol_fix_new(true, item ? "Collect the loss as a Python number" : "Collect a detached tensor");
    char *name = holder != OL_NONE ? ol_node_str(m->tree, holder) : ol_xstrdup("the collection");
    if (item)
        ol_fix_unsafe_because(fix, "%s%s%s then holds Python numbers, not tensors: code elsewhere (another file, a "
                                   "caller) that uses them as tensors would fail",
                              holder != OL_NONE ? "`" : "", name, holder != OL_NONE ? "`" : "");
    else
        ol_fix_unsafe_because(fix, "the tensors kept in %s%s%s no longer carry gradients: code that differentiates "
                                   "through them would fail or change",
                              holder != OL_NONE ? "`" : "", name, holder != OL_NONE ? "`" : "");
    free(name);
    ol_fix_call_on(fix, m->tree, value, item ? ".item()" : ".detach()");
    return fix;
}

/* Does `holder` collect across batches, seen from stmt? */
static bool outlives_batches(ol_model *m, ol_nid holder, ol_nid stmt)
{
    ol_accumulator acc;
    if (!ol_accumulator_of(m, holder, &acc))
        return false;
    return ol_accumulator_outlived_loop(m, &acc, stmt) != OL_NO_INDEX || ol_accumulator_in_step_hook(m, &acc, stmt);
}

/* Does a backward run in the loop around stmt (or in a per-batch framework
 * hook, whose loss the framework backwards)? Then backward has freed the
 * activations the stored graphs saved, and what each batch leaves behind is
 * its graph's nodes: the probe measured no saved bytes but +8 autograd nodes
 * per step kept in a training loop, against a batch's activations per step
 * in an evaluation loop. The message says only what is really kept. */
static bool backward_each_batch(ol_model *m, ol_nid holder, ol_nid stmt)
{
    ol_accumulator acc;
    uint32_t loop = OL_NO_INDEX;
    if (holder != OL_NONE && ol_accumulator_of(m, holder, &acc)) {
        if (ol_accumulator_in_step_hook(m, &acc, stmt))
            return true;
        loop = ol_accumulator_outlived_loop(m, &acc, stmt);
    }
    if (loop == OL_NO_INDEX)
        loop = m->node_loop[stmt];
    /* the loop's events are computed once: asking per finding stays linear */
    return loop != OL_NO_INDEX && m->loops.items[loop].kind != OL_LOOP_COMPREHENSION &&
           ol_events_of(m, m->loops.items[loop].node)->has_backward;
}

/* The member of a stored tuple, list or dict that carries the graph:
 * `(loss.item(), out)` -> `out`, `{"loss": loss, "n": n}` -> `loss`, also
 * through a name bound once to such a literal (`log = {...}; xs.append(log)`).
 * OL_NONE when the value is no such literal. */
static ol_nid graph_member(ol_model *m, ol_nid value, int depth)
{
    const ol_tree *t = m->tree;
    value = ol_unparen(t, value);
    if (value == OL_NONE || depth > 3)
        return OL_NONE;
    ol_kind k = ol_kind_of(t, value);
    if (k == OL_N_identifier) {
        uint32_t defs[2];
        size_t n = ol_reaching_defs(m, m->node_scope[value], ol_node_sym(m, value), value, defs, 2);
        if (n != 1)
            return OL_NONE;
        const ol_def *d = &m->defs.items[defs[0]];
        if (d->kind != OL_DEF_ASSIGN || d->path_len != 0 || d->starred)
            return OL_NONE;
        return graph_member(m, d->value, depth + 1);
    }
    if (k != OL_N_tuple && k != OL_N_list && k != OL_N_dictionary)
        return OL_NONE;
    for (ol_nid c = ol_first_named(t, value); c != OL_NONE; c = ol_next_named(t, c)) {
        ol_nid e = ol_kind_of(t, c) == OL_N_pair ? ol_field(t, c, OL_F_value) : c;
        if (e == OL_NONE)
            continue;
        ol_val ev = ol_eval(m, e);
        if (ol_val_is_graph(ev))
            return e;
        if (ev.flags & OL_VF_ELEM_GRAPH) {
            ol_nid inner = graph_member(m, e, depth + 1);
            return inner != OL_NONE ? inner : e;
        }
    }
    return OL_NONE;
}

static void report(ol_check *c, uses_cache *uc, ol_nid at, ol_nid holder, ol_nid value, ol_val v, const char *how,
                   bool fixable, ol_reasons *why)
{
    const ol_tree *t = c->tree;
    later_use u = uses_of(c->model, uc, holder, at);
    uint32_t loop = c->model->node_loop[at];
    char *holder_text = ol_node_str_short(t, holder);
    if (loop != OL_NO_INDEX)
        ol_because(why, c->model, c->model->loops.items[loop].node,
                   "`%s` outlives this loop's iterations and keeps what each one adds", holder_text);
    else if (ol_how_often(c->model, at, why) != OL_ONCE && why->len == 0) {
        /* a per-batch hook or a metric's update(): the framework's loop */
        uint32_t fn = ol_function_of(c->model, at);
        if (fn != OL_NO_INDEX)
            ol_because(why, c->model, ol_field(t, c->model->functions.items[fn].node, OL_F_name),
                       "the framework calls this once per batch, and `%s` lives on the object between the calls",
                       holder_text);
    }
    free(holder_text);
    bool item = ol_is_scalar_loss(c->model, value, v) && !u.as_tensor;
    char *h = ol_node_str(t, holder);
    char *val = ol_node_str_short(t, value);
    const char *saved = backward_each_batch(c->model, holder, at) ? "" : " and the activations it saved";
    ol_nid member = ol_val_is_graph(v) ? OL_NONE : graph_member(c->model, value, 0);
    if (member != OL_NONE) {
        /* a container: name the member that carries the graph, which the
         * shortened text of the whole may have cut off */
        char *mem = ol_node_str_short(t, member);
        ol_diag *d = ol_report_node(c, at,
                                    "`%s` %s `%s`, whose member `%s` carries the autograd graph; the collection "
                                    "keeps every iteration's graph%s alive",
                                    h, how, val, mem, saved);
        ol_diag_because(d, c->model, why);
        ol_diag_help(d, "store a detached copy of that member: `%s%s` (`.item()` for a scalar loss), or collect "
                        "under `torch.no_grad()`",
                     ol_is_primary(t, member) ? mem : "(...)", ".detach()");
        free(mem);
        free(h);
        free(val);
        return;
    }
    ol_diag *d = ol_report_node(c, at,
                                "`%s` %s `%s`, which carries the autograd graph; the collection keeps every "
                                "iteration's graph%s alive",
                                h, how, val, saved);
    ol_diag_because(d, c->model, why);
    if (v.kind == OL_V_DICT || v.kind == OL_V_TUPLE || v.kind == OL_V_LIST) {
        /* a container from elsewhere (a helper's `log` dict): `.detach()` on
         * it would fail; the tensors inside are what to detach */
        ol_diag_help(d, "store detached copies of the tensors `%s` holds (`.item()` for a scalar loss), or collect "
                        "under `torch.no_grad()`",
                     val);
        free(h);
        free(val);
        return;
    }
    /* `.item()` gives a Python number, which lives on the CPU already: only a
     * detached tensor can still be moved off the GPU with `.cpu()` */
    const char *shown = ol_is_primary(t, value) ? val : "(...)";
    if (item)
        ol_diag_help(d, "store the number: `%s.item()`, or collect under `torch.no_grad()`", shown);
    else
        ol_diag_help(d, "store a detached copy: `%s.detach()` (`.detach().cpu()` to free GPU memory too), or "
                        "collect under `torch.no_grad()`",
                     shown);
    free(h);
    free(val);
    if (fixable)
        ol_diag_attach_fix(d, detach_fix(c->model, uc, value, v, holder, at));
}

/* `output = module.training_step(batch, i); output["loss"].backward();
 * outputs.append(output)`: whatever the helper returned, a member of it is
 * backwarded in the same function, so the stored container holds a graph. */
static bool member_backwarded(ol_model *m, ol_nid value, ol_nid stmt)
{
    const ol_tree *t = m->tree;
    value = ol_unparen(t, value);
    if (value == OL_NONE || ol_kind_of(t, value) != OL_N_identifier)
        return false;
    uint32_t fn = ol_function_of(m, stmt);
    size_t first = 0, end = m->calls.len;
    if (fn != OL_NO_INDEX)
        end = ol_calls_in(m, m->functions.items[fn].node, &first);
    for (size_t i = first; i < end; i++) {
        const ol_call *c = &m->calls.items[i];
        if (c->name != m->names.backward || c->receiver == OL_NONE || ol_function_of(m, c->node) != fn)
            continue;
        ol_nid r = ol_unparen(t, c->receiver);
        ol_kind k = ol_kind_of(t, r);
        ol_nid base = k == OL_N_subscript   ? ol_field(t, r, OL_F_value)
                      : k == OL_N_attribute ? ol_field(t, r, OL_F_object)
                                            : OL_NONE;
        if (base == OL_NONE || !ol_same_text(t, ol_unparen(t, base), value))
            continue;
        /* `output["loss"] = output["loss"].detach()` before the store: the
         * member was replaced by a graph-free copy */
        size_t lo = ol_lower_bound_u32(m->subscript_stores.items, m->subscript_stores.len, c->node);
        for (size_t j = lo; j < m->subscript_stores.len && m->subscript_stores.items[j] < stmt; j++) {
            ol_nid a = m->subscript_stores.items[j];
            ol_nid left = ol_unparen(t, ol_field(t, a, OL_F_left));
            ol_nid obj = left != OL_NONE ? ol_unparen(t, ol_field(t, left, OL_F_value)) : OL_NONE;
            if (obj != OL_NONE && ol_same_text(t, obj, value) && ol_function_of(m, a) == fn &&
                !ol_val_is_graph(ol_eval(m, ol_field(t, a, OL_F_right))))
                return false;
        }
        return true;
    }
    return false;
}

/* `run_loss = CumulativeAverage(); run_loss.append(loss)`: the receiver is
 * an instance of a class of another library (not a list, deque or queue),
 * whose append() may well detach or reduce what it is given. */
static bool library_object(ol_model *m, ol_nid recv)
{
    const ol_tree *t = m->tree;
    if (ol_kind_of(t, recv) != OL_N_identifier)
        return false;
    uint32_t defs[4];
    size_t n = ol_reaching_defs(m, m->node_scope[recv], ol_node_sym(m, recv), recv, defs, 4);
    if (n == 0 || n == 4)
        return false;
    for (size_t i = 0; i < n; i++) {
        const ol_def *d = &m->defs.items[defs[i]];
        ol_nid v = d->kind == OL_DEF_ASSIGN && d->path_len == 0 ? ol_unparen(t, d->value) : OL_NONE;
        if (v == OL_NONE || ol_kind_of(t, v) != OL_N_call)
            return false;
        const char *q = ol_qualname(m, ol_field(t, v, OL_F_function));
        if (!q || !strchr(q, '.'))
            return false;
        static const char *const std[] = {"builtins.", "collections.", "queue.", "multiprocessing.",
                                          "torch.",    "typing.",      "asyncio.", NULL};
        for (size_t k = 0; std[k]; k++)
            if (ol_str_has_prefix(q, std[k]))
                return false;
    }
    return true;
}

/* Does e mention holder, itself or through a name bound from it
 * (`meta = torch.stack(task_losses).mean()`), a level or two down? */
static bool derives_from(ol_model *m, ol_nid e, ol_nid holder, int depth)
{
    const ol_tree *t = m->tree;
    if (e == OL_NONE || depth > 2)
        return false;
    if (ol_mentions(t, e, holder))
        return true;
    for (ol_nid n = e; n < m->subtree_end[e]; n++) {
        if (ol_kind_of(t, n) != OL_N_identifier || ol_node_at(t, n)->field == OL_F_attribute)
            continue;
        uint32_t defs[4];
        size_t nd = ol_reaching_defs(m, m->node_scope[n], ol_node_sym(m, n), n, defs, 4);
        for (size_t k = 0; k < nd && k < 4; k++) {
            const ol_def *d = &m->defs.items[defs[k]];
            if ((d->kind == OL_DEF_ASSIGN || d->kind == OL_DEF_AUGASSIGN) && d->value != OL_NONE &&
                derives_from(m, d->value, holder, depth + 1))
                return true;
        }
    }
    return false;
}

/* A list made afresh where a step starts (in its function, or in the body
 * of a loop around the loop that fills it), filled in that inner loop, which
 * walks the parts of the step rather than a loader's batches, and
 * backwarded through after it, in the same place it was made, without
 * leaving the function: `task_losses = []`, one loss per task (each task's
 * adaptation steps an optimizer, so the task loop draws batches), then
 * `torch.stack(task_losses).mean().backward()`. The graphs it keeps are
 * what that backward needs, and the list dies with the step. Returns the
 * backward, or OL_NONE. */
static ol_nid consumed_in_step(ol_model *m, ol_nid holder, ol_nid stmt)
{
    const ol_tree *t = m->tree;
    holder = ol_unparen(t, holder);
    uint32_t fn = ol_function_of(m, stmt);
    if (fn == OL_NO_INDEX || ol_kind_of(t, holder) != OL_N_identifier)
        return OL_NONE;
    ol_accumulator acc;
    if (!ol_accumulator_of(m, holder, &acc))
        return OL_NONE;
    uint32_t filled = ol_accumulator_outlived_loop(m, &acc, stmt);
    uint32_t defs[2];
    if (filled == OL_NO_INDEX ||
        ol_reaching_defs(m, m->node_scope[holder], ol_node_sym(m, holder), holder, defs, 2) != 1)
        return OL_NONE;
    const ol_def *d = &m->defs.items[defs[0]];
    ol_nid fresh = d->kind == OL_DEF_ASSIGN && d->path_len == 0 ? ol_unparen(t, d->value) : OL_NONE;
    if (fresh == OL_NONE || ol_function_of(m, d->stmt) != fn ||
        !((ol_kind_of(t, fresh) == OL_N_list && ol_first_named(t, fresh) == OL_NONE) ||
          (ol_kind_of(t, fresh) == OL_N_call && ol_text_is(t, fresh, "list()"))))
        return OL_NONE;
    /* the filling loop lies inside the place the list is made, and walks the
     * parts of one step (tasks, chunks, heads), not batches of a loader: an
     * epoch's losses waiting for one backward at its end are an epoch of
     * graphs */
    uint32_t made_in = m->node_loop[d->stmt];
    ol_nid loop = m->loops.items[filled].node;
    ol_nid iter = m->loops.items[filled].iter;
    if (iter != OL_NONE) {
        ol_val iv = ol_eval(m, iter);
        if (iv.kind == OL_V_LOADER || iv.kind == OL_V_DATASET)
            return OL_NONE;
    }
    if (made_in == filled || (made_in != OL_NO_INDEX && !ol_contains(t, m->loops.items[made_in].body, loop)))
        return OL_NONE;
    const ol_function *f = &m->functions.items[fn];
    ol_nid backward = OL_NONE;
    size_t first, end = ol_calls_in(m, f->node, &first);
    for (size_t i = first; i < end; i++) {
        const ol_call *c = &m->calls.items[i];
        if (c->node < m->subtree_end[loop] || ol_function_of(m, c->node) != fn)
            continue;
        if (backward == OL_NONE && ol_is_backward_call(m, (uint32_t)i) && m->node_loop[c->node] == made_in) {
            ol_nid operand = ol_backward_operand(m, (uint32_t)i);
            if (operand != OL_NONE && derives_from(m, operand, holder, 0))
                backward = c->node;
        }
    }
    if (backward == OL_NONE)
        return OL_NONE;
    /* the list leaves the function: returned, or kept by an attribute or a container */
    for (size_t i = 0; i < f->returns.len; i++)
        if (ol_mentions(t, f->returns.items[i], holder))
            return OL_NONE;
    for (size_t i = 0; i < m->assigns.len; i++) {
        ol_nid a = m->assigns.items[i];
        if (a < f->node || a >= m->subtree_end[f->node])
            continue;
        ol_nid left = ol_unparen(t, ol_field(t, a, OL_F_left));
        ol_nid right = ol_field(t, a, OL_F_right);
        if (ol_kind_of(t, left) != OL_N_identifier && right != OL_NONE && ol_mentions(t, right, holder))
            return OL_NONE;
    }
    return backward;
}

/* A value from a method the file cannot see into, on an object it does not
 * know (`_, _, log = self.task.train_step(sample, self.model,
 * self.criterion, self.optimizer)`), that the run's one class named for the
 * receiver says carries the graph: a trainer reaching a criterion through
 * its task, whose logging dict keeps the loss. The reasons get the step
 * through that method. */
static bool dispatched_graph(ol_model *m, ol_nid value, ol_reasons *why)
{
    const ol_tree *t = m->tree;
    value = ol_unparen(t, value);
    int index = -1;
    ol_nid from = value;
    if (ol_kind_of(t, value) == OL_N_identifier) {
        uint32_t defs[2];
        if (ol_reaching_defs(m, m->node_scope[value], ol_node_sym(m, value), value, defs, 2) != 1)
            return false;
        const ol_def *d = &m->defs.items[defs[0]];
        if (d->kind != OL_DEF_ASSIGN || d->starred || d->path_len > 1)
            return false;
        index = d->path_len == 1 ? d->path[0] : -1;
        from = ol_unparen(t, d->value);
    }
    if (index < 0 && ol_kind_of(t, from) == OL_N_subscript) {
        /* `self.task.train_step(...)[2]` */
        ol_nid key = ol_unparen(t, ol_field(t, from, OL_F_subscript));
        if (key == OL_NONE || ol_kind_of(t, key) != OL_N_integer)
            return false;
        char *text = ol_node_str(t, key);
        index = atoi(text);
        free(text);
        from = ol_unparen(t, ol_field(t, from, OL_F_value));
    }
    uint32_t ci = ol_call_at(m, from);
    ol_callee callee;
    if (ci == OL_NO_INDEX || ol_callee_of(m, ci, &callee))
        return false; /* the file, or the run through its imports, knows the callee */
    ol_reasons found = {0};
    if (!ol_callee_by_receiver_name(m, ci, &callee, &found) || !ol_callee_returns_graph(&callee, index, NULL))
        return false;
    for (uint8_t i = 0; i < found.len && why->len < OL_REASONS_MAX; i++)
        why->items[why->len++] = found.items[i];
    why->guess = found.guess;
    if (index >= 0)
        ol_because(why, m, value, "`%s()` returns, as its element %d, a value that carries the autograd graph",
                   callee.name, index + 1);
    return true;
}

static bool is_collection(ol_val v)
{
    return v.kind == OL_V_LIST || v.kind == OL_V_DICT || v.kind == OL_V_SET || v.kind == OL_V_TUPLE ||
           v.kind == OL_V_UNKNOWN || v.kind == OL_V_OBJECT || v.kind == OL_V_BOTTOM;
}

static void check_calls(ol_check *c, uses_cache *uc)
{
    ol_model *m = c->model;
    const ol_tree *t = c->tree;
    const ol_names *n = &m->names;
    for (size_t i = 0; i < m->calls.len; i++) {
        const ol_call *call = &m->calls.items[i];
        ol_sym name = call->name;
        if (call->receiver == OL_NONE)
            continue;
        bool append = name == n->append || name == n->appendleft || name == n->put;
        bool extend = name == n->extend || name == n->extendleft;
        bool insert = name == n->insert;
        bool add = name == n->add;
        if (!append && !extend && !insert && !add)
            continue;
        ol_nid recv = ol_unparen(t, call->receiver);
        ol_val rv = ol_eval(m, recv);
        if (!is_collection(rv) || (add && rv.kind != OL_V_SET))
            continue;
        if (rv.kind != OL_V_LIST && rv.kind != OL_V_SET && library_object(m, recv))
            continue;
        ol_nid value = ol_call_arg(m, call->node, insert ? 1 : 0, NULL);
        if (value == OL_NONE)
            continue;
        ol_val v = ol_eval(m, value);
        /* a tuple of outputs, `(out, y)`, keeps them as much as `out` alone */
        bool tuple = !extend && (v.kind == OL_V_TUPLE || v.kind == OL_V_LIST || v.kind == OL_V_DICT) &&
                     (v.flags & (OL_VF_ELEM_GRAPH | OL_VF_GRAPH));
        bool graph = extend ? (v.flags & (OL_VF_ELEM_GRAPH | OL_VF_GRAPH)) != 0 : ol_val_is_graph(v) || tuple;
        ol_nid stmt = ol_statement_of(t, call->node);
        if (!graph && !extend && member_backwarded(m, value, stmt)) {
            graph = tuple = true;
            v.kind = OL_V_DICT;
        }
        ol_reasons why = {0};
        if (!graph && !extend && v.kind == OL_V_UNKNOWN && dispatched_graph(m, value, &why)) {
            /* a container whose member carries the graph: no automatic fix */
            graph = tuple = true;
            v.kind = OL_V_DICT;
        }
        if (!graph || !ol_grad_on(m, call->node, NULL) || !ol_graph_made_with_grad(m, value, &why))
            continue;
        if (!outlives_batches(m, recv, stmt) || ol_buffer_backwarded(m, recv, stmt) ||
            consumed_in_step(m, recv, stmt) != OL_NONE)
            continue;
        report(c, uc, stmt, recv, value, v, extend ? "is extended with" : "collects", !extend && !tuple, &why);
    }
}

/* A subscript that names the same slot on every iteration: a literal key
 * (`loss_dict["d"] = d_loss`, `outs[0] = y`), or a tuple of them. Each
 * iteration overwrites what the last one stored, so one graph at most stays
 * alive, not one per batch. */
static bool constant_key(const ol_tree *t, ol_nid key, int depth)
{
    key = ol_unparen(t, key);
    if (key == OL_NONE || depth > 4)
        return false;
    switch (ol_kind_of(t, key)) {
    case OL_N_integer:
    case OL_N_true:
    case OL_N_false:
    case OL_N_none:
        return true;
    case OL_N_string:
        for (ol_nid c = ol_first_named(t, key); c != OL_NONE; c = ol_next_named(t, c))
            if (ol_kind_of(t, c) == OL_N_interpolation)
                return false; /* an f-string may differ per iteration */
        return true;
    case OL_N_unary_operator:
        return constant_key(t, ol_field(t, key, OL_F_argument), depth + 1);
    case OL_N_tuple:
        for (ol_nid c = ol_first_named(t, key); c != OL_NONE; c = ol_next_named(t, c))
            if (!constant_key(t, c, depth + 1))
                return false;
        return true;
    default:
        return false;
    }
}

static void check_stores(ol_check *c, uses_cache *uc)
{
    ol_model *m = c->model;
    const ol_tree *t = c->tree;
    /* store[k] = out, bank[idx] = feats */
    for (size_t i = 0; i < m->subscript_stores.len; i++) {
        ol_nid a = m->subscript_stores.items[i];
        ol_nid left = ol_unparen(t, ol_field(t, a, OL_F_left));
        ol_nid value = ol_field(t, a, OL_F_right);
        ol_nid holder = ol_unparen(t, ol_field(t, left, OL_F_value));
        if (value == OL_NONE || holder == OL_NONE || ol_kind_of(t, value) == OL_N_assignment)
            continue;
        /* the same slot each iteration: every subscript on the way is a constant
         * (`stats["loss"] = l`, `self.log["d"]["real"] = l`, not `hist[step]["x"] = l`) */
        bool same_slot = true;
        for (ol_nid x = left; same_slot && x != OL_NONE;) {
            ol_kind k = ol_kind_of(t, x);
            if (k == OL_N_subscript) {
                ol_nid base = ol_field(t, x, OL_F_value);
                /* `h[0, "last"]`: every index after the value is a constant */
                same_slot = ol_field(t, x, OL_F_subscript) != OL_NONE;
                for (ol_nid key = ol_first_named(t, x); same_slot && key != OL_NONE; key = ol_next_named(t, key))
                    same_slot = key == base || constant_key(t, key, 0);
                x = ol_unparen(t, base);
            } else if (k == OL_N_attribute) {
                x = ol_unparen(t, ol_field(t, x, OL_F_object));
            } else {
                break;
            }
        }
        if (same_slot)
            continue;
        ol_val v = ol_eval(m, value);
        bool tuple = (v.kind == OL_V_TUPLE || v.kind == OL_V_LIST || v.kind == OL_V_DICT) &&
                     (v.flags & OL_VF_ELEM_GRAPH);
        ol_reasons why = {0};
        if (!(ol_val_is_graph(v) || tuple) || !ol_grad_on(m, a, NULL) || !ol_graph_made_with_grad(m, value, &why))
            continue;
        ol_val hv = ol_eval(m, holder);
        if (!is_collection(hv) && hv.kind != OL_V_TENSOR)
            continue;
        if (hv.kind == OL_V_TENSOR && (hv.flags & OL_VF_GRAPH))
            continue; /* building a graph tensor in place: part of the computation */
        ol_nid stmt = ol_statement_of(t, a);
        if (!outlives_batches(m, holder, stmt))
            continue;
        report(c, uc, stmt, holder, value, v, "stores", !tuple, &why);
    }
    /* xs += [out], xs = xs + [out] */
    for (size_t i = 0; i < m->aug_assigns.len; i++) {
        ol_nid a = m->aug_assigns.items[i];
        if (ol_kind_of(t, ol_field(t, a, OL_F_operator)) != OL_T_PLUS_EQ)
            continue;
        ol_nid left = ol_unparen(t, ol_field(t, a, OL_F_left));
        ol_nid value = ol_field(t, a, OL_F_right);
        ol_val lv = ol_eval(m, left);
        ol_val v = ol_eval(m, value);
        ol_reasons why = {0};
        if (lv.kind != OL_V_LIST || !(v.flags & OL_VF_ELEM_GRAPH) || !ol_grad_on(m, a, NULL) ||
            !ol_graph_made_with_grad(m, value, &why))
            continue;
        ol_nid stmt = ol_statement_of(t, a);
        if (!outlives_batches(m, left, stmt) || consumed_in_step(m, left, stmt) != OL_NONE)
            continue;
        report(c, uc, stmt, left, value, v, "is extended with", false, &why);
    }
}

static void check_comprehensions(ol_check *c, uses_cache *uc)
{
    ol_model *m = c->model;
    const ol_tree *t = c->tree;
    for (size_t i = 0; i < m->loops.len; i++) {
        const ol_loop *l = &m->loops.items[i];
        if (l->kind != OL_LOOP_COMPREHENSION || ol_kind_of(t, l->node) == OL_N_generator_expression)
            continue;
        ol_nid body = l->body;
        if (ol_kind_of(t, body) == OL_N_pair)
            body = ol_field(t, body, OL_F_value);
        ol_val v = ol_eval(m, body);
        ol_reasons why = {0};
        if (!ol_val_is_graph(v) || !ol_grad_on(m, l->node, NULL) || !ol_loop_is_data_loop(m, (uint32_t)i) ||
            !ol_graph_made_with_grad(m, body, &why))
            continue;
        char *val = ol_node_str_short(t, body);
        ol_diag *d = ol_report_node(c, l->node,
                                    "this comprehension over batches keeps `%s` for every batch, each with its "
                                    "autograd graph and activations",
                                    val);
        ol_diag_because(d, m, &why);
        /* `.cpu()` alone is no cure: the CPU copy is still part of the graph */
        ol_diag_help(d, "collect `%s.detach()` (`.detach().cpu()` to free GPU memory too, `.item()` for a "
                        "scalar), or build the list under `torch.no_grad()`",
                     ol_is_primary(t, body) ? val : "(...)");
        free(val);
        ol_diag_attach_fix(d, detach_fix(m, uc, body, v, OL_NONE, l->node));
    }
}

/* Is e's value one that carries the graph, or holds members that do (what
 * check_kept reports of a value kept)? */
static bool holds_graph_value(ol_model *m, ol_nid e)
{
    ol_val v = ol_eval(m, e);
    return ol_val_is_graph(v) || (v.flags & OL_VF_ELEM_GRAPH);
}

/* `logger.log(out)` where log() does `self.outputs.append(v)`. */
static void check_kept(ol_check *c, uses_cache *uc)
{
    ol_model *m = c->model;
    const ol_tree *t = c->tree;
    for (size_t i = 0; i < m->calls.len; i++) {
        if (!ol_call_hands(m, (uint32_t)i, holds_graph_value))
            continue;
        ol_kept kept[4];
        size_t n = ol_call_keeps(m, (uint32_t)i, kept, 4);
        for (size_t k = 0; k < n; k++) {
            if (!kept[k].collects || kept[k].adds)
                continue;
            ol_val v = ol_eval(m, kept[k].arg);
            ol_nid call = m->calls.items[i].node;
            ol_reasons why = {0};
            if (!(ol_val_is_graph(v) || (v.flags & OL_VF_ELEM_GRAPH)) || !ol_grad_on(m, call, NULL) ||
                !ol_graph_made_with_grad(m, kept[k].arg, &why))
                continue;
            ol_nid stmt = ol_statement_of(t, call);
            if (!ol_holder_outlives_batches(m, kept[k].holder, stmt))
                continue;
            char *value_text = ol_node_str_short(t, kept[k].arg);
            char *holder = kept[k].holder != OL_NONE ? ol_node_str(t, kept[k].holder) : ol_xstrdup("a global");
            char *callee = ol_node_str_short(t, m->calls.items[i].callee);
            /* a tuple or dict: name the member that carries the graph, which the
             * shortened text may cut off */
            ol_nid member = ol_val_is_graph(v) ? OL_NONE : graph_member(m, kept[k].arg, 0);
            char *member_text = member != OL_NONE ? ol_node_str_short(t, member) : NULL;
            char *carries = member_text ? ol_xasprintf(", whose member `%s` carries the autograd graph,", member_text)
                                        : ol_xstrdup(", which carries the autograd graph,");
            ol_diag *d = ol_report_node(c, call,
                                        "`%s(...)` stores `%s`%s in `%s` (`%s()` does "
                                        "`%s`); every iteration's graph%s stays alive",
                                        callee, value_text, carries, holder, kept[k].callee, kept[k].what,
                                        backward_each_batch(m, OL_NONE, stmt) ? "" : " and the activations it saved");
            ol_diag_because(d, m, &why);
            free(carries);
            const char *shown = ol_is_primary(t, kept[k].arg) ? value_text : "(...)";
            if (member_text)
                ol_diag_help(d, "pass a detached copy of that member: `%s.detach()` (`.item()` for a scalar loss), "
                                "or collect under `torch.no_grad()`",
                             ol_is_primary(t, member) ? member_text : "(...)");
            else if (ol_is_scalar_loss(m, kept[k].arg, v))
                ol_diag_help(d, "pass the number: `%s.item()`, or collect under `torch.no_grad()`", shown);
            else
                ol_diag_help(d, "pass a detached copy: `%s.detach()` (`.detach().cpu()` to free GPU memory too), or "
                                "collect under `torch.no_grad()`",
                             shown);
            if (ol_val_is_graph(v))
                ol_diag_attach_fix(d, detach_fix(m, uc, kept[k].arg, v, OL_NONE, ol_statement_of(t, call)));
            free(member_text);
            free(value_text);
            free(holder);
            free(callee);
        }
    }
}

static void check(ol_check *c)
{
    if (!ol_may_use_torch(c->model))
        return; /* no torch, no autograd graph to keep */
    uses_cache uc;
    memset(&uc, 0, sizeof(uc));
    check_kept(c, &uc);
    check_calls(c, &uc);
    check_stores(c, &uc);
    check_comprehensions(c, &uc);
    ol_vec_free(&uc.entries);
}

const ol_rule ol_rule_oom102 = {
    .code = "OOM102",
    .name = "tensor-collected-in-loop",
    .severity = OL_SEV_ERROR,
    .device_memory = true,
    .summary = "A collection that outlives the batch loop stores tensors that carry the autograd graph.",
    .what = "Flags `xs.append(out)`, `xs.extend(...)`, `xs.insert(i, out)`, `store[k] = out`, "
            "`bank[idx] = feats`, `xs += [out]` and list/dict comprehensions over a loader, when the "
            "stored value (or a tuple of values) carries the autograd graph and the collection lives "
            "across iterations of a loop that draws batches (or across calls of Lightning's "
            "`training_step`). Loggers and collectors whose method stores its argument "
            "(`logger.log(out)` where `log` does `self.outputs.append(v)`) are flagged at the call, "
            "also when they live in another file of the same run. A list made afresh where a step starts, filled "
            "with the parts of that step (a meta-batch's tasks) and backwarded through in the same step is "
            "consumed, not kept; a value a method returns on an object the file does not know "
            "(`self.task.train_step(...)`) counts when the one class of the run named for that object says it "
            "carries the graph.",
    .why = "A stored tensor that requires grad keeps its whole graph alive. Until a backward runs, that "
           "graph holds every activation saved for it: collecting model outputs or losses over an epoch "
           "without detaching them keeps an epoch's worth of activations on the GPU, and evaluation "
           "loops without `no_grad` that gather predictions are the classic way to run out of memory "
           "after training fit fine. In a training loop backward frees the saved activations, but each "
           "stored tensor still keeps its graph's nodes: one more graph per batch.",
    .example = "predictions = []\n"
               "for x, y in val_loader:\n"
               "    out = model(x)\n"
               "    predictions.append(out)\n"
               "preds = torch.cat(predictions)",
    .instead = "predictions = []\n"
               "with torch.no_grad():\n"
               "    for x, y in val_loader:\n"
               "        predictions.append(model(x).cpu())\n"
               "preds = torch.cat(predictions)",
    .fix = "Unsafe (changes what is stored): appends `.detach()` to the collected tensor, or `.item()` "
           "to a scalar loss. Extending with a list has no automatic fix.",
    .fix_safety = "Always unsafe, because it changes what the collection holds: `.item()` stores Python "
                  "numbers where tensors were (used only when nothing in the file uses them as tensors, but "
                  "code elsewhere might), and `.detach()` stores tensors that no gradient flows through. No "
                  "fix is offered when something calls `backward()` through the collection.",
    .tags = "memory,autograd",
    .precision = "high",
    .check = check,
};
