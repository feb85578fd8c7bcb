/*
 * OOM602 zero-grad-misordered: `zero_grad()` between `backward()` and
 * `step()` (the step then applies zero gradients: nothing trains), or
 * `step()` before any `backward()` in the iteration (each step applies the
 * previous iteration's gradients, or none on the first).
 *
 * Checked per optimizer, in the order calls run within one iteration
 * (following calls of local functions): a GAN that zeroes the generator's
 * optimizer after the discriminator's backward and before the generator's
 * own backward is in order. The finding is on the misplaced call.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rule.h"

/* The region whose order matters for a step: its innermost loop that runs
 * backward, else its function body if that runs backward; with its events. */
static ol_nid step_region(ol_model *m, ol_nid step, const ol_region_events **re)
{
    const ol_tree *t = m->tree;
    for (uint32_t l = m->node_loop[step]; l != OL_NO_INDEX; l = m->loops.items[l].parent) {
        *re = ol_events_of(m, m->loops.items[l].node);
        if ((*re)->has_backward)
            return m->loops.items[l].node;
    }
    uint32_t fn = ol_function_of(m, step);
    if (fn == OL_NO_INDEX)
        return OL_NONE;
    ol_nid body = ol_field(t, m->functions.items[fn].node, OL_F_body);
    if (body == OL_NONE)
        return OL_NONE;
    *re = ol_events_of(m, body);
    return (*re)->has_backward ? body : OL_NONE;
}

/* How many of the (ascending) indexes in v are below x. */
static size_t count_below(const uint32_t *v, size_t n, size_t x)
{
    return x > UINT32_MAX ? n : ol_lower_bound_u32(v, n, (uint32_t)x);
}

/* Is `outer` a module path that contains `inner` (`model` and `model.fc`,
 * `blocks` and `blocks[1]`)? */
static bool path_contains(const ol_tree *t, ol_nid outer, ol_nid inner)
{
    uint32_t lo, li;
    const char *so = ol_text(t, outer, &lo), *si = ol_text(t, inner, &li);
    return li > lo + 1 && memcmp(si, so, lo) == 0 && (si[lo] == '.' || si[lo] == '[');
}

/* What a gradient cleared parameter by parameter belongs to: `M` in
 * `for p in M.parameters(): p.grad = None` (or `p.grad.zero_()`), the
 * optimizer in `for g in opt.param_groups: for p in g["params"]: ...`.
 * OL_NONE when the loop is not one of those. */
static ol_nid zero_all_target(ol_model *m, const ol_event *e)
{
    const ol_tree *t = m->tree;
    ol_nid g = e->node;
    if (ol_kind_of(t, g) == OL_N_assignment)
        g = ol_field(t, g, OL_F_left);
    else if (ol_kind_of(t, g) == OL_N_call)
        g = ol_field(t, ol_field(t, g, OL_F_function), OL_F_object);
    /* p.grad (or p.grad.data): the parameter's name */
    while (g != OL_NONE && ol_kind_of(t, g) == OL_N_attribute)
        g = ol_field(t, g, OL_F_object);
    if (g == OL_NONE || ol_kind_of(t, g) != OL_N_identifier)
        return OL_NONE;
    ol_nid want = g;
    for (ol_nid a = ol_parent(t, e->node); a != OL_NONE; a = ol_parent(t, a)) {
        ol_kind k = ol_kind_of(t, a);
        if (k == OL_N_function_definition || k == OL_N_class_definition)
            break;
        /* `if not torch.isfinite(p.grad).all(): p.grad = None`: a bad
         * gradient dropped, not every gradient; `if p.grad is not None:`
         * only skips the parameters that have none */
        if (k == OL_N_if_statement) {
            ol_nid cond = ol_unparen(t, ol_field(t, a, OL_F_condition));
            uint32_t len = 0;
            const char *text = cond != OL_NONE ? ol_text(t, cond, &len) : NULL;
            uint32_t wl;
            const char *w = ol_text(t, want, &wl);
            char expect[96];
            int n = snprintf(expect, sizeof(expect), "%.*s.grad is not None", (int)wl, w);
            if (!text || n <= 0 || (uint32_t)n != len || memcmp(text, expect, len) != 0 ||
                ol_field(t, a, OL_F_alternative) != OL_NONE)
                return OL_NONE;
            continue;
        }
        if (k == OL_N_conditional_expression || k == OL_N_try_statement)
            return OL_NONE;
        if (k != OL_N_for_statement)
            continue;
        ol_nid left = ol_field(t, a, OL_F_left);
        if (left == OL_NONE || !ol_same_text(t, left, want))
            continue;
        ol_nid right = ol_unparen(t, ol_field(t, a, OL_F_right));
        if (ol_kind_of(t, right) == OL_N_call) {
            ol_nid callee = ol_field(t, right, OL_F_function);
            if (ol_kind_of(t, callee) == OL_N_attribute &&
                ol_text_is(t, ol_field(t, callee, OL_F_attribute), "parameters"))
                return ol_field(t, callee, OL_F_object);
            return OL_NONE;
        }
        /* g["params"] of a loop over opt.param_groups */
        if (ol_kind_of(t, right) == OL_N_subscript) {
            ol_nid group = ol_field(t, right, OL_F_value);
            if (group != OL_NONE && ol_kind_of(t, group) == OL_N_identifier) {
                want = group;
                continue;
            }
        }
        if (ol_kind_of(t, right) == OL_N_attribute && ol_text_is(t, ol_field(t, right, OL_F_attribute), "param_groups"))
            return ol_field(t, right, OL_F_object);
        return OL_NONE;
    }
    return OL_NONE;
}

/* What a name says it belongs to, with the words for optimizers and
 * networks taken out: `optimizerD` and `netD` -> "d", `actor_opt` and
 * `self.actor` -> "actor". Writes at most cap bytes; empty when nothing is
 * left. */
static void name_key(const ol_tree *t, ol_nid e, char *out, size_t cap)
{
    static const char *const words[] = {"optimizer", "optim", "opt", "network", "net", "model", NULL};
    out[0] = '\0';
    e = ol_unparen(t, e);
    if (ol_kind_of(t, e) == OL_N_attribute)
        e = ol_field(t, e, OL_F_attribute);
    if (ol_kind_of(t, e) != OL_N_identifier)
        return;
    uint32_t len;
    const char *s = ol_text(t, e, &len);
    size_t n = 0;
    for (uint32_t i = 0; i < len;) {
        bool skipped = false;
        for (const char *const *w = words; *w && !skipped; w++) {
            size_t wl = strlen(*w);
            if (i + wl <= len && ol_mem_ieq(s + i, *w, wl)) {
                i += (uint32_t)wl;
                skipped = true;
            }
        }
        if (skipped)
            continue;
        if (s[i] != '_' && n + 1 < cap)
            out[n++] = (char)((s[i] >= 'A' && s[i] <= 'Z') ? s[i] - 'A' + 'a' : s[i]);
        i++;
    }
    out[n] = '\0';
}

/* Does the region run a forward of `module` (`netD(real)`) with autograd
 * on? Then the backward that follows computes gradients for its parameters
 * (a teacher run under no_grad gets none). */
static ol_nid forward_in(ol_model *m, ol_nid region, ol_nid module)
{
    size_t first, end = ol_calls_in(m, region, &first);
    for (size_t i = first; i < end; i++)
        if (ol_same_text(m->tree, m->calls.items[i].callee, module) && ol_is_forward_call(m, (uint32_t)i) &&
            ol_grad_on(m, m->calls.items[i].node, NULL))
            return m->calls.items[i].node;
    return OL_NONE;
}

/* An optimizer whose parameters the file does not show (a function's
 * parameter, built elsewhere): does zeroing `module` between its backward
 * and its step clear what it steps with? When it is the only optimizer the
 * region steps and the module ran the forward before the backward: yes, the
 * loop trains that module with it. With several optimizers (a GAN's
 * `optimizerD` and `optimizerG`), only the names can pair a network with
 * its optimizer: `netD` goes with `optimizerD`, not with `optimizerG`. */
static bool unknown_optimizer_trains(ol_model *m, ol_nid region, const ol_region_events *re, ol_nid module,
                                     ol_nid opt, ol_reasons *why)
{
    const ol_tree *t = m->tree;
    if (ol_eval(m, module).kind == OL_V_OPTIMIZER)
        return false;
    ol_nid fwd = forward_in(m, region, module);
    if (fwd == OL_NONE)
        return false;
    bool several = false;
    for (size_t i = 0; i < re->steps.len && !several; i++) {
        ol_nid other = re->events.items[re->steps.items[i]].target;
        several = other != OL_NONE && !ol_same_text(t, other, opt);
    }
    char *mod = ol_node_str_short(t, module), *name = ol_node_str_short(t, opt);
    bool trains = true;
    if (several) {
        char mk[64], ok[64];
        name_key(t, module, mk, sizeof mk);
        name_key(t, opt, ok, sizeof ok);
        trains = mk[0] != '\0' && strcmp(mk, ok) == 0;
        if (trains) {
            why->guess = "the names of the network and its optimizer";
            ol_because(why, m, opt, "`%s` is the optimizer of `%s`, by their names", name, mod);
        }
    } else {
        ol_because(why, m, fwd, "`%s` runs the forward whose gradients `%s`, the only optimizer stepped here, "
                                "applies",
                   mod, name);
    }
    free(mod);
    free(name);
    return trains;
}

static bool zero_targets_optimizer(ol_model *m, const ol_event *e, ol_nid opt, ol_nid region,
                                   const ol_region_events *re, ol_reasons *why)
{
    const ol_tree *t = m->tree;
    ol_nid target = e->target;
    if (e->kind == OL_EV_ZERO_ALL)
        target = zero_all_target(m, e);
    else if (e->kind != OL_EV_ZERO)
        return false;
    if (target == OL_NONE)
        return false;
    if (ol_same_text(t, target, opt))
        return true;
    if (ol_eval(m, target).kind == OL_V_OPTIMIZER)
        return false; /* another optimizer */
    /* a module's zero_grad() only when we know this optimizer trains it: one
     * of the modules it was built over, a module containing one, or a part of one */
    ol_nid modules[8];
    size_t n = ol_optimizer_modules(m, opt, modules, 8);
    if (n == 0 && e->kind == OL_EV_ZERO && ol_optimizer_may_train(m, opt, target))
        return unknown_optimizer_trains(m, region, re, target, opt, why);
    /* parameters cleared one by one: only those of a whole module the
     * optimizer trains (clearing a part of it between backward and step
     * keeps that part from moving, which may be the point) */
    for (size_t i = 0; i < n; i++)
        if (ol_same_text(t, target, modules[i]) ||
            (e->kind == OL_EV_ZERO && (path_contains(t, target, modules[i]) || path_contains(t, modules[i], target))))
            return true;
    return false;
}

static void check(ol_check *c)
{
    ol_model *m = c->model;
    const ol_tree *t = c->tree;
    bool *reported = NULL; /* per node: a zeroing already reported */
    for (size_t i = 0; i < m->calls.len; i++) {
        ol_nid opt = ol_step_optimizer(m, (uint32_t)i);
        if (opt == OL_NONE)
            continue;
        const ol_call *call = &m->calls.items[i];
        if (ol_call_arg(m, call->node, 0, "closure") != OL_NONE && ol_eval(m, opt).kind != OL_V_SCALER) {
            ol_val a = ol_eval(m, ol_call_arg(m, call->node, 0, "closure"));
            if (a.kind == OL_V_FUNCTION || a.kind == OL_V_UNKNOWN)
                continue; /* LBFGS: the closure runs backward inside step() */
        }
        const ol_region_events *re = NULL;
        ol_nid region = step_region(m, call->node, &re);
        if (region == OL_NONE)
            continue;
        const ol_event_vec *ev = &re->events;
        /* find this step among the region's events */
        size_t at = ol_events_step_of(re, (uint32_t)i);
        if (at == ev->len)
            continue;
        /* the last backward before the step, then the last zeroing of this
         * optimizer after it (and before the step): the events between them
         * are all that decides, whatever the loop's length */
        size_t nb = count_below(re->backwards.items, re->backwards.len, at);
        bool backward_before = nb > 0;
        size_t last_relevant = ev->len; /* last backward or zero of this optimizer before the step */
        ol_reasons why = {0};
        if (backward_before) {
            size_t last_backward = re->backwards.items[nb - 1];
            last_relevant = last_backward;
            for (size_t z = count_below(re->zeros.items, re->zeros.len, at); z-- > 0;) {
                size_t k = re->zeros.items[z];
                if (k < last_backward)
                    break;
                why = (ol_reasons){0};
                if (zero_targets_optimizer(m, &ev->items[k], opt, region, re, &why)) {
                    last_relevant = k;
                    break;
                }
            }
        }
        char *name = ol_node_str(t, opt);
        if (backward_before && last_relevant < ev->len && last_relevant != re->backwards.items[nb - 1]) {
            ol_nid site = ev->items[last_relevant].site;
            /* `if not finite: opt.zero_grad(); continue`: the batch is skipped,
             * this step never sees the cleared gradients */
            if (ol_leaves_before(t, site, call->node, region)) {
                free(name);
                continue;
            }
            if (!reported)
                reported = ol_xcalloc(t->nodes.len + 1, sizeof(bool));
            if (site < t->nodes.len && !reported[site]) {
                reported[site] = true;
                ol_nid back = ev->items[re->backwards.items[nb - 1]].site;
                ol_because(&why, m, back, "the gradients are computed here");
                ol_because(&why, m, call->node, "`%s` applies them here", name);
                ol_diag *d = ol_report_node(c, site,
                                            "gradients are zeroed after `backward()` and before `%s` steps: "
                                            "the step applies zero gradients and nothing trains",
                                            name);
                ol_diag_because(d, m, &why);
                ol_diag_help(d, "move the `zero_grad()` before `backward()` (or after the `step()`)");
            }
        } else if (!backward_before) {
            bool backward_after = re->backwards.len > 0 && ol_vec_last(&re->backwards) > at;
            /* a step outside any loop, before a loop whose iterations run the
             * backward passes, runs once (a warm-up step, so a scheduler sees
             * one first): no iteration is out of order. A step function
             * called per batch (no loop of its own) still is. */
            if (backward_after && m->node_loop[call->node] == OL_NO_INDEX) {
                size_t nb_after = count_below(re->backwards.items, re->backwards.len, at);
                ol_nid first_backward = ev->items[re->backwards.items[nb_after]].site;
                if (m->node_loop[first_backward] != OL_NO_INDEX)
                    backward_after = false;
            }
            if (backward_after) {
                size_t nb_after = count_below(re->backwards.items, re->backwards.len, at);
                ol_reasons after = {0};
                ol_because(&after, m, ev->items[re->backwards.items[nb_after]].site,
                           "the iteration's gradients are computed only here, after the step");
                ol_diag *d = ol_report_node(c, ev->items[at].site,
                                            "`%s` steps before `backward()` in the iteration: each step applies "
                                            "the previous iteration's gradients",
                                            name);
                ol_diag_because(d, m, &after);
                ol_diag_help(d, "call `%s.step()` after `loss.backward()`", name);
            }
        }
        free(name);
    }
    free(reported);
}

const ol_rule ol_rule_oom602 = {
    .code = "OOM602",
    .name = "zero-grad-misordered",
    .severity = OL_SEV_ERROR,
    .summary = "`zero_grad()` runs between `backward()` and `step()`, or `step()` before `backward()`.",
    .what = "Flags, per optimizer and in the order calls run within one iteration, a `zero_grad()` of "
            "that optimizer (or of a model it optimizes, a module containing one or a part of one; "
            "also `zero_grad(set_to_none=False)`) that comes after the iteration's "
            "`backward()` and before its `step()`, and a `step()` that comes before any `backward()` in "
            "the iteration. Another optimizer's `zero_grad()` is not misordered (GANs, actor-critic). For an "
            "optimizer whose parameters the file does not show, a module's zeroing counts when that module ran "
            "the forward and the optimizer is the only one stepped there, or when their names pair them "
            "(`netD` and `optimizerD`).",
    .why = "`zero_grad()` clears what `backward()` just computed, so a step after it applies nothing: "
           "the model silently stops learning while the loss curve looks merely flat. A step before "
           "backward applies the previous iteration's gradients, one step late (and nothing at the "
           "first step).",
    .example = "for x, y in loader:\n"
               "    loss = criterion(model(x), y)\n"
               "    loss.backward()\n"
               "    optimizer.zero_grad()\n"
               "    optimizer.step()",
    .instead = "for x, y in loader:\n"
               "    optimizer.zero_grad()\n"
               "    loss = criterion(model(x), y)\n"
               "    loss.backward()\n"
               "    optimizer.step()",
    .fix = NULL,
    .tags = "correctness,training",
    .precision = "high",
    .check = check,
};
