/*
 * OOM101 tensor-accumulated-with-graph: `total += loss` (or `total = total +
 * loss`, `self.total += loss`, `stats["loss"] += loss`) where the added value
 * carries the autograd graph and the accumulator lives across iterations of
 * a loop that draws batches. Each iteration's graph is then kept alive by
 * the accumulator, and memory grows until the epoch ends or the GPU runs out.
 *
 * What does not count: values without a graph (`loss.item()`, `.detach()`,
 * anything computed under no_grad, `(pred == y).sum()`), accumulators reset
 * inside the loop (a per-step sum that is backward()ed, multi-head losses,
 * seq2seq decoding, gradient accumulation that resets after each step), and
 * loops that do not draw batches.
 *
 * Fix: `.item()` for a scalar loss (safe), `.detach()` otherwise, and also
 * for a scalar loss when the accumulator is later used as a tensor
 * (`total.item()` would fail on a float); `.detach()` is unsafe: it keeps a
 * tensor but cuts gradient flow through the sum.
 */
#include <stdlib.h>
#include <string.h>

#include "rule.h"

/* Is the accumulator used as a tensor later (acc.item(), acc.backward())?
 * Then turning it into a float would break that code. The receivers of the
 * file's method calls are indexed by text on first use (receivers). */
static bool used_as_tensor(ol_model *m, const ol_accumulator *acc, ol_text_index *receivers)
{
    const ol_tree *t = m->tree;
    if (receivers->entries.len == 0 && !receivers->sealed) {
        for (size_t i = 0; i < m->calls.len; i++) {
            const ol_call *c = &m->calls.items[i];
            if (c->receiver != OL_NONE)
                ol_text_index_add(receivers, t, ol_unparen(t, c->receiver));
        }
    }
    return ol_text_index_has(receivers, t, acc->target);
}

/* `.item()` when the total may become a Python number: the value is a
 * scalar loss and nothing later uses the total as a tensor. */
static bool fix_with_item(ol_model *m, const ol_accumulator *acc, ol_nid value, ol_val v, ol_text_index *receivers)
{
    return ol_is_scalar_loss(m, value, v) && !used_as_tensor(m, acc, receivers);
}

static ol_fix *make_fix(ol_model *m, const ol_accumulator *acc, ol_nid value, bool item)
{
    if (item) {
        ol_fix *fix = ol_fix_new(false, "Accumulate the loss as a Python number with .item()");
        ol_fix_call_on(fix, m->tree, value, ".item()");
        return fix;
    }
    ol_fix *fix = ol_fix_new(true, "Accumulate a detached tensor");
    char *target = ol_node_str(m->tree, acc->target);
    ol_fix_unsafe_because(fix,
                          "`.detach()` keeps `%s` a tensor but no gradient flows through it any more: code that "
                          "calls `%s.backward()` or differentiates through it would fail or change",
                          target, target);
    free(target);
    ol_fix_call_on(fix, m->tree, value, ".detach()");
    return fix;
}

/* Does this backward call keep its graph (`retain_graph=True`, or
 * `x.backward(gradient, True)`)? Then it frees nothing it saved. */
static bool keeps_graph(ol_model *m, const ol_call *call)
{
    ol_nid v = ol_call_arg(m, call->node, -1, "retain_graph");
    if (v == OL_NONE)
        v = ol_call_arg(m, call->node, 1, NULL);
    return v != OL_NONE && ol_kind_of(m->tree, v) == OL_N_true;
}

/* The backward calls of the file (those with a receiver), and the answers
 * already given: a long loop asks the same question of the same names at
 * every accumulator, and a walk over the file's calls each time made a
 * 4 MB module-level loop take minutes. */
typedef struct backward_answer {
    char *what;        /* the text asked about */
    uint32_t fn;
    ol_nid within;
    bool freeing;
    ol_nid first, last; /* first and last matching backward call, OL_NONE if none */
} backward_answer;

typedef struct backward_memo {
    bool built;
    struct {
        uint32_t *items;
        size_t len, cap;
    } calls;
    struct {
        backward_answer *items;
        size_t len, cap;
    } answers;
    uint32_t *buckets; /* index + 1 into answers, chained through next; 0 ends */
    uint32_t *next;
    size_t nbuckets;
} backward_memo;

static void backward_memo_free(backward_memo *bm)
{
    for (size_t i = 0; i < bm->answers.len; i++)
        free(bm->answers.items[i].what);
    ol_vec_free(&bm->answers);
    ol_vec_free(&bm->calls);
    free(bm->buckets);
    free(bm->next);
}

static size_t answer_hash(const char *what, uint32_t fn, ol_nid within, bool freeing)
{
    size_t h = 1469598103934665603u ^ (size_t)fn ^ ((size_t)within << 20) ^ (size_t)freeing;
    for (const char *p = what; *p; p++)
        h = (h ^ (unsigned char)*p) * 1099511628211u;
    return h;
}

static void answers_rehash(backward_memo *bm)
{
    size_t n = bm->nbuckets ? bm->nbuckets * 2 : 64;
    free(bm->buckets);
    bm->buckets = ol_xcalloc(n, sizeof(uint32_t));
    bm->next = ol_xrealloc(bm->next, n / 2 * sizeof(uint32_t));
    bm->nbuckets = n;
    for (size_t i = 0; i < bm->answers.len; i++) {
        const backward_answer *a = &bm->answers.items[i];
        size_t b = answer_hash(a->what, a->fn, a->within, a->freeing) & (n - 1);
        bm->next[i] = bm->buckets[b];
        bm->buckets[b] = (uint32_t)i + 1;
    }
}

/* The first and last `X.backward()` in fn (inside `within` unless OL_NONE)
 * whose receiver mentions `what`; with `freeing`, only one that frees what
 * the graph saved counts. Each answer is kept by its question, and only the
 * backward calls inside the region asked about are read. */
static const backward_answer *backward_of(ol_model *m, backward_memo *bm, ol_nid what, uint32_t fn, ol_nid within,
                                          bool freeing)
{
    const ol_tree *t = m->tree;
    if (!bm->built) {
        bm->built = true;
        for (size_t i = 0; i < m->calls.len; i++)
            if (m->calls.items[i].name == m->names.backward && m->calls.items[i].receiver != OL_NONE)
                ol_vec_push(&bm->calls, (uint32_t)i);
    }
    char *text = ol_node_str(t, what);
    size_t h = answer_hash(text, fn, within, freeing);
    if (bm->nbuckets)
        for (uint32_t e = bm->buckets[h & (bm->nbuckets - 1)]; e; e = bm->next[e - 1]) {
            backward_answer *a = &bm->answers.items[e - 1];
            if (a->fn == fn && a->within == within && a->freeing == freeing && strcmp(a->what, text) == 0) {
                free(text);
                return a;
            }
        }
    backward_answer a = {text, fn, within, freeing, OL_NONE, OL_NONE};
    ol_nid region = within != OL_NONE ? within : fn != OL_NO_INDEX ? m->functions.items[fn].node : 0;
    ol_nid region_end = region < t->nodes.len ? m->subtree_end[region] : 0;
    size_t lo = 0, hi = bm->calls.len;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (m->calls.items[bm->calls.items[mid]].node < region)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (ol_kind_of(t, what) == OL_N_identifier) {
        /* a name: from its uses in the region up to the backward calls whose
         * receivers hold them (a loop of thousands of losses, each asked
         * about, reads each loss's own uses only) */
        size_t count;
        const ol_nid *uses = ol_name_uses(m, what, region, region_end, &count, NULL);
        for (size_t i = 0; i < count; i++)
            for (ol_nid c = uses[i], p = ol_parent(t, c); p != OL_NONE && p >= region; c = p, p = ol_parent(t, p)) {
                uint32_t ci = ol_call_at(m, p);
                const ol_call *call = ci != OL_NO_INDEX ? &m->calls.items[ci] : NULL;
                if (!call || call->name != m->names.backward || call->receiver == OL_NONE ||
                    !ol_contains(t, ol_unparen(t, call->receiver), uses[i]) || ol_function_of(m, p) != fn ||
                    (freeing && keeps_graph(m, call)) || !ol_same_text(t, uses[i], what))
                    continue;
                if (a.first == OL_NONE || p < a.first)
                    a.first = p;
                if (a.last == OL_NONE || p > a.last)
                    a.last = p;
            }
    } else {
        for (size_t k = lo; k < bm->calls.len; k++) {
            const ol_call *call = &m->calls.items[bm->calls.items[k]];
            if (call->node >= region_end)
                break;
            if (ol_function_of(m, call->node) != fn || (freeing && keeps_graph(m, call)) ||
                !ol_mentions(t, ol_unparen(t, call->receiver), what))
                continue;
            if (a.first == OL_NONE)
                a.first = call->node;
            a.last = call->node;
        }
    }
    ol_vec_push(&bm->answers, a);
    if (bm->answers.len > bm->nbuckets / 2)
        answers_rehash(bm);
    else {
        size_t b = h & (bm->nbuckets - 1), i = bm->answers.len - 1;
        bm->next[i] = bm->buckets[b];
        bm->buckets[b] = (uint32_t)i + 1;
    }
    return &ol_vec_last(&bm->answers);
}

/* Is the accumulator backwarded after stmt, in the same function
 * (`total.backward()`, `(total / n).backward()`)? Then the graphs are kept
 * on purpose, for one backward over the whole sum. */
static bool backwarded_later(ol_model *m, backward_memo *bm, const ol_accumulator *acc, ol_nid stmt)
{
    const backward_answer *a = backward_of(m, bm, acc->target, ol_function_of(m, stmt), OL_NONE, false);
    return a->last != OL_NONE && a->last >= stmt;
}

/* Was the added value's own graph backwarded earlier in the same iteration
 * (`loss.backward()` or `scaler.scale(loss).backward()` before `total +=
 * loss`), by a backward that does not keep it (no `retain_graph=True`)?
 * Then backward has freed what the graph saved, and the total keeps
 * the graph's nodes in host memory and nothing on the device: on an H200
 * the probe measures 0 B of GPU memory per step for this form, against a
 * batch's activations per step where no backward runs. */
static bool backwarded_before(ol_model *m, backward_memo *bm, ol_nid value, ol_nid stmt, uint32_t loop)
{
    value = ol_unparen(m->tree, value);
    if (loop == OL_NO_INDEX || ol_kind_of(m->tree, value) != OL_N_identifier)
        return false;
    const backward_answer *a =
        backward_of(m, bm, value, ol_function_of(m, stmt), m->loops.items[loop].body, true);
    return a->first != OL_NONE && a->first < stmt;
}

/* What the checks of one file share: the receivers of its method calls
 * indexed by text, and the backward calls' answers. */
typedef struct oom101_scan {
    ol_text_index receivers;
    backward_memo backwards;
} oom101_scan;

/* Is stmt, outside any loop, in a method that its own file never calls
 * and that other files of the run call every step (a base class's batch
 * loop running `self.train_step(items)`, ol_how_often)? */
static bool step_of_other_file(ol_model *m, ol_nid stmt, ol_reasons *why)
{
    uint32_t fn = ol_function_of(m, stmt);
    if (m->node_loop[stmt] != OL_NO_INDEX || fn == OL_NO_INDEX || !m->functions.items[fn].is_method ||
        m->functions.items[fn].callsites.len != 0)
        return false;
    return ol_how_often(m, stmt, why) == OL_PER_STEP;
}

static void consider(ol_check *c, ol_nid stmt, ol_nid target, ol_nid value, oom101_scan *scan)
{
    ol_text_index *receivers = &scan->receivers;
    ol_model *m = c->model;
    const ol_tree *t = c->tree;
    ol_accumulator acc;
    if (value == OL_NONE || !ol_accumulator_of(m, target, &acc))
        return;
    ol_val v = ol_eval(m, value);
    ol_reasons why = {0};
    if (!ol_holds_graph(m, value, &why) || !ol_grad_on(m, stmt, NULL))
        return;
    ol_val holder = ol_eval(m, acc.is_item ? acc.holder : acc.target);
    if (holder.kind == OL_V_LIST || holder.kind == OL_V_SET)
        return; /* collecting, not summing: OOM102's business */
    /* the total later goes to NumPy undetached: at run time it holds no graph */
    if (!acc.is_item && ol_numpy_shows_no_graph(m, acc.target, stmt, NULL) != OL_NONE)
        return;
    uint32_t loop = ol_accumulator_outlived_loop(m, &acc, stmt);
    if (loop == OL_NO_INDEX && !ol_accumulator_in_step_hook(m, &acc, stmt) &&
        !(acc.is_attr && step_of_other_file(m, stmt, &why)))
        return;
    char *target_text = ol_node_str(t, acc.target);
    char *value_text = ol_node_str_short(t, value);
    if (loop != OL_NO_INDEX)
        ol_because(&why, m, m->loops.items[loop].node, "`%s` outlives this loop's iterations: each one adds a graph",
                   target_text);
    else
        ol_because(&why, m, acc.target, "`%s` lives across the calls of the training step", target_text);
    ol_diag *d = backwarded_before(m, &scan->backwards, value, stmt, loop)
                     ? ol_report_node(c, stmt,
                                      "`%s` accumulates `%s`, which carries the autograd graph; backward() has "
                                      "freed what it saved, but every iteration's graph nodes stay alive in `%s` "
                                      "(host memory that grows each step)",
                                      target_text, value_text, target_text)
                     : ol_report_node(c, stmt,
                                      "`%s` accumulates `%s`, which carries the autograd graph; every iteration's "
                                      "graph stays alive in `%s`",
                                      target_text, value_text, target_text);
    ol_diag_because(d, m, &why);
    if (backwarded_later(m, &scan->backwards, &acc, stmt)) {
        /* one backward over the sum of every batch's graph: `.item()` would
         * break it; the memory is saved by a backward per batch */
        ol_diag_help(d, "call `backward()` on each batch's loss inside the loop (gradients add up in `.grad`) "
                        "instead of one `%s.backward()` after it; accumulate `.item()` for reporting",
                     target_text);
        free(target_text);
        free(value_text);
        return;
    }
    /* a scalar loss becomes a Python number, unless the total is later used
     * as a tensor (`total.item()`): then a detached tensor, which keeps that
     * code working */
    bool item = fix_with_item(m, &acc, value, v, receivers);
    ol_diag_help(d, "accumulate a %s: `%s += %s%s`", item ? "Python number" : "detached tensor", target_text,
                 ol_is_primary(t, value) ? value_text : "(...)",
                 item ? ".item()" : ".detach()");
    free(target_text);
    free(value_text);
    ol_diag_attach_fix(d, make_fix(m, &acc, value, item));
}

/* Is e the target itself, or the target scaled by something that does not
 * involve it (`0.9 * avg`, `avg * beta`, `avg / 2`)? */
static bool scaled_copy(const ol_tree *t, ol_nid e, ol_nid target)
{
    e = ol_unparen(t, e);
    if (ol_same_text(t, e, target))
        return true;
    if (ol_kind_of(t, e) != OL_N_binary_operator)
        return false;
    ol_kind op = ol_kind_of(t, ol_field(t, e, OL_F_operator));
    if (op != OL_T_STAR && op != OL_T_SLASH)
        return false;
    ol_nid a = ol_unparen(t, ol_field(t, e, OL_F_left)), b = ol_unparen(t, ol_field(t, e, OL_F_right));
    if (ol_same_text(t, a, target))
        return !ol_mentions(t, b, target);
    return op == OL_T_STAR && ol_same_text(t, b, target) && !ol_mentions(t, a, target);
}

/* Could e carry the graph, or, written as a list or tuple, one of its
 * elements (what check_kept reports of an argument)? Its value only: whether
 * autograd was on where it was made is asked of what is reported. */
static bool carries_graph(ol_model *m, ol_nid e)
{
    const ol_tree *t = m->tree;
    ol_kind k = ol_kind_of(t, e);
    if (k != OL_N_list && k != OL_N_tuple)
        return ol_val_is_graph(ol_eval(m, e));
    for (ol_nid x = ol_first_named(t, e); x != OL_NONE; x = ol_next_named(t, x))
        if (ol_kind_of(t, x) != OL_N_list_splat && ol_val_is_graph(ol_eval(m, x)))
            return true;
    return false;
}

/* `meter.update(loss)` where update() does `self.sum += val * n`: the
 * meter is the accumulator. */
static void check_kept(ol_check *c)
{
    ol_model *m = c->model;
    const ol_tree *t = c->tree;
    for (size_t i = 0; i < m->calls.len; i++) {
        if (!ol_call_hands(m, (uint32_t)i, carries_graph))
            continue;
        ol_kept kept[4];
        size_t n = ol_call_keeps(m, (uint32_t)i, kept, 4);
        for (size_t k = 0; k < n; k++) {
            if (!kept[k].adds)
                continue;
            ol_nid call = m->calls.items[i].node;
            ol_reasons why = {0};
            /* a list or tuple written at the call (`meter.update([coarse,
             * refine])`) is added into the total element by element: its
             * first element with a graph is what stays alive */
            ol_nid arg = ol_unparen(t, kept[k].arg);
            ol_kind ak = ol_kind_of(t, arg);
            if (ak == OL_N_list || ak == OL_N_tuple) {
                ol_nid found = OL_NONE;
                for (ol_nid e = ol_first_named(t, arg); e != OL_NONE && found == OL_NONE; e = ol_next_named(t, e))
                    if (ol_kind_of(t, e) != OL_N_list_splat && ol_holds_graph(m, e, NULL))
                        found = e;
                if (found == OL_NONE)
                    continue;
                kept[k].arg = found;
            }
            ol_val v = ol_eval(m, kept[k].arg);
            if (!ol_holds_graph(m, kept[k].arg, &why) || !ol_grad_on(m, call, NULL))
                continue;
            ol_nid stmt = ol_statement_of(t, call);
            ol_accumulator acc;
            if (!ol_holder_outlives_batches(m, kept[k].holder, stmt) &&
                !(kept[k].holder != OL_NONE && ol_accumulator_of(m, kept[k].holder, &acc) && acc.is_attr &&
                  step_of_other_file(m, stmt, &why)))
                continue;
            char *value_text = ol_node_str_short(t, kept[k].arg);
            char *holder = kept[k].holder != OL_NONE ? ol_node_str(t, kept[k].holder) : ol_xstrdup("a global");
            char *callee = ol_node_str_short(t, m->calls.items[i].callee);
            ol_diag *d = ol_report_node(c, call,
                                        "`%s(...)` adds `%s`, which carries the autograd graph, into `%s` (`%s()` does "
                                        "`%s`); every iteration's graph stays alive in it",
                                        callee, value_text, holder, kept[k].callee,
                                        kept[k].what);
            ol_how_often(m, call, &why);
            ol_diag_because(d, m, &why);
            bool item = ol_is_scalar_loss(m, kept[k].arg, v);
            ol_diag_help(d, "pass a %s: `%s%s`", item ? "Python number" : "detached tensor",
                         ol_is_primary(t, kept[k].arg) ? value_text : "(...)", item ? ".item()" : ".detach()");
            ol_fix *fix = ol_fix_new(true, item ? "Pass the loss as a Python number with .item()" : "Pass a detached tensor");
            if (item)
                ol_fix_unsafe_because(fix, "`%s()` then receives a Python number instead of a tensor: code in it "
                                           "or reading what it keeps that uses tensor methods would fail",
                                      callee);
            else
                ol_fix_unsafe_because(fix, "`%s()` then keeps a tensor that no gradient flows through: code that "
                                           "differentiates through what it keeps would fail or change",
                                      callee);
            ol_fix_call_on(fix, t, kept[k].arg, item ? ".item()" : ".detach()");
            ol_diag_attach_fix(d, fix);
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
    check_kept(c);
    ol_model *m = c->model;
    const ol_tree *t = c->tree;
    oom101_scan scan = {{{NULL, 0, 0}, false}, {0}};
    for (size_t i = 0; i < m->aug_assigns.len; i++) {
        ol_nid n = m->aug_assigns.items[i];
        ol_nid op = ol_field(t, n, OL_F_operator);
        ol_kind k = ol_kind_of(t, op);
        if (k != OL_T_PLUS_EQ && k != OL_T_MINUS_EQ)
            continue;
        consider(c, n, ol_field(t, n, OL_F_left), ol_field(t, n, OL_F_right), &scan);
    }
    /* x = x + v, x = v + x, and running averages: x = 0.9 * x + 0.1 * v */
    for (size_t i = 0; i < m->assigns.len; i++) {
        ol_nid n = m->assigns.items[i];
        ol_nid left = ol_unparen(t, ol_field(t, n, OL_F_left));
        ol_nid right = ol_unparen(t, ol_field(t, n, OL_F_right));
        if (left == OL_NONE || right == OL_NONE)
            continue;
        if (ol_kind_of(t, right) == OL_N_conditional_expression) {
            /* x = v if x is None else 0.9 * x + 0.1 * v */
            ol_nid a = ol_unparen(t, ol_named_child(t, right, 0)), b = ol_unparen(t, ol_named_child(t, right, 2));
            right = ol_kind_of(t, b) == OL_N_binary_operator && ol_mentions(t, b, left) ? b : a;
        }
        if (ol_kind_of(t, right) != OL_N_binary_operator)
            continue;
        ol_kind op = ol_kind_of(t, ol_field(t, right, OL_F_operator));
        if (op != OL_T_PLUS && op != OL_T_MINUS)
            continue;
        ol_nid a = ol_field(t, right, OL_F_left), b = ol_field(t, right, OL_F_right);
        if (a != OL_NONE && b != OL_NONE && scaled_copy(t, a, left) && !ol_mentions(t, b, left))
            consider(c, n, left, b, &scan);
        else if (op == OL_T_PLUS && a != OL_NONE && b != OL_NONE && scaled_copy(t, b, left) && !ol_mentions(t, a, left))
            consider(c, n, left, a, &scan);
    }
    ol_text_index_free(&scan.receivers);
    backward_memo_free(&scan.backwards);
}

const ol_rule ol_rule_oom101 = {
    .code = "OOM101",
    .name = "tensor-accumulated-with-graph",
    .severity = OL_SEV_ERROR,
    .device_memory = true,
    .summary = "A running total of a graph-carrying tensor keeps every iteration's autograd graph alive.",
    .what = "Flags `total += loss`, `total = total + loss`, `self.total += loss`, `stats[k] += loss` "
            "and running averages (`avg = 0.9 * avg + 0.1 * loss`) inside a loop that draws batches or "
            "steps an optimizer, when the added value carries the autograd graph (a model's output, a "
            "loss, arithmetic on them, also when a helper returns it: `loss, aux = step(batch)`) and "
            "the accumulator outlives the iteration. Meters whose method adds its argument "
            "(`meter.update(loss)` where `update` does `self.sum += val * n`) are flagged at the call; "
            "functions and classes of other files of the same run are followed through imports. So are "
            "statistics whose `update(x)` adds into a tensor they hold the result of a function stored on the "
            "object (`self._tensor += self.fn(x)`). A total the function later turns into a NumPy array "
            "without detaching it (`mu.cpu().numpy()`) is not flagged: PyTorch raises on that call when "
            "the tensor requires grad, so the model it sums has frozen parameters. What a loss function this file does not show hands "
            "back beside the loss (`loss, scores = criterion(out, y)`, the criterion handed in) is not "
            "flagged when every loss class of the run whose forward returns that many parts returns that "
            "part without a graph (per-class scores as a NumPy array).",
    .why = "A tensor that requires grad remembers how it was computed. Adding it to a running total "
           "makes the total depend on it, so the total keeps every iteration's graph alive. Where no "
           "backward runs (an evaluation loop with autograd on) that graph still holds the activations "
           "it saved, and memory grows by a batch's activations every step until the epoch ends, or "
           "until CUDA runs out of memory. After `backward()` the saved activations are freed but the "
           "graph's nodes are not: the total still gains a graph per step, a smaller leak that lasts "
           "until the total is reset. This is the first item of PyTorch's own FAQ on memory.",
    .example = "total_loss = 0\n"
               "for x, y in loader:\n"
               "    loss = criterion(model(x), y)\n"
               "    loss.backward()\n"
               "    optimizer.step()\n"
               "    total_loss += loss",
    .instead = "total_loss = 0\n"
               "for x, y in loader:\n"
               "    loss = criterion(model(x), y)\n"
               "    loss.backward()\n"
               "    optimizer.step()\n"
               "    total_loss += loss.item()",
    .fix = "Appends `.item()` to a scalar loss, or `.detach()` to other tensors and to a scalar loss whose "
           "total is later used as a tensor (`total_loss.item()`, `total_loss.cpu()`), so that code keeps "
           "working. At a meter's call (`meter.update(loss)`), the same suffix on the argument.",
    .fix_safety = "`.item()` on a scalar loss is safe: the total becomes a Python number, which is all a "
                  "running sum of a loss is read for, and nothing in the file uses it as a tensor (when "
                  "something does, the fix uses `.detach()` instead). `.detach()` is unsafe: the total stays a "
                  "tensor, but no gradient flows through it any more, so code that calls `backward()` on it "
                  "or differentiates through it would fail or compute something else. At a meter's call "
                  "both are unsafe: the meter's own code, which oomlint may not see whole, receives a number "
                  "or a detached tensor.",
    .tags = "memory,autograd",
    .precision = "high",
    .check = check,
};
