/*
 * OOM601 missing-zero-grad: a loop that runs backward() and steps an
 * optimizer, where nothing clears that optimizer's gradients each iteration.
 *
 * Gradients accumulate into .grad until cleared, so every step applies the
 * sum of all gradients so far: training diverges, and for gradient-heavy
 * setups the sums keep growing. Zeroing counts wherever it runs each
 * iteration: `opt.zero_grad()`, `model.zero_grad()` on the optimized model,
 * `p.grad = None`, inside a function called in the loop, in the caller of a
 * step function, or in an LBFGS closure passed to step(). Per optimizer: a
 * GAN's discriminator step needs its own zeroing. `scheduler.step()` and
 * `env.step()` are not optimizer steps. A helper that clears gradients
 * counts too: one of the file, one of another file of the run whose summary
 * says so, or a known library function (Pyro's `zero_grads(params)`).
 */
#include <stdlib.h>
#include <string.h>

#include "rule.h"

static bool zeroed_in(ol_model *m, const ol_region_events *re, ol_nid optimizer)
{
    for (size_t i = 0; i < re->zeros.len; i++) {
        const ol_event *e = &re->events.items[re->zeros.items[i]];
        if (e->kind == OL_EV_ZERO_ALL)
            return true;
        if (e->kind == OL_EV_ZERO && ol_zero_clears(m, e->target, optimizer))
            return true;
    }
    return false;
}

/* The innermost loop around n (in n's function) whose iterations run
 * backward, with its events; OL_NO_INDEX if none. */
static uint32_t training_loop(ol_model *m, ol_nid n, const ol_region_events **re)
{
    for (uint32_t l = m->node_loop[n]; l != OL_NO_INDEX; l = m->loops.items[l].parent) {
        *re = ol_events_of(m, m->loops.items[l].node);
        if ((*re)->has_backward)
            return l;
    }
    *re = NULL;
    return OL_NO_INDEX;
}

/* Is the step's closure argument a function that zeroes (LBFGS)? Any
 * closure counts: it is where such code zeroes. */
static bool has_closure(ol_model *m, const ol_call *c)
{
    ol_nid arg = ol_call_arg(m, c->node, 0, "closure");
    if (arg == OL_NONE)
        return false;
    ol_val v = ol_eval(m, arg);
    return v.kind == OL_V_FUNCTION || v.kind == OL_V_UNKNOWN;
}

/* For a step outside any loop of its function: do the loops that call the
 * function zero? Returns 1 zeroed, 0 not zeroed, -1 unknown (no caller in a
 * loop in this file). */
static int callers_zero(ol_model *m, uint32_t fn, ol_nid optimizer, int depth)
{
    if (fn == OL_NO_INDEX || depth > 3)
        return -1;
    const ol_function *f = &m->functions.items[fn];
    int verdict = -1;
    for (size_t i = 0; i < f->callsites.len; i++) {
        const ol_call *site = &m->calls.items[m->functions.items[fn].callsites.items[i]];
        const ol_region_events *re;
        uint32_t loop = training_loop(m, site->node, &re);
        int here;
        if (loop != OL_NO_INDEX)
            here = zeroed_in(m, re, optimizer) ? 1 : 0;
        else
            here = callers_zero(m, ol_function_of(m, site->node), optimizer, depth + 1);
        if (here == 0) {
            verdict = 0;
            break;
        }
        if (here == 1)
            verdict = 1;
    }
    return verdict;
}

static void check(ol_check *c)
{
    ol_model *m = c->model;
    const ol_tree *t = c->tree;
    for (size_t i = 0; i < m->calls.len; i++) {
        ol_nid opt = ol_step_optimizer(m, (uint32_t)i);
        if (opt == OL_NONE)
            continue;
        const ol_call *call = &m->calls.items[i];
        if (has_closure(m, call))
            continue;
        const ol_region_events *re;
        uint32_t loop = training_loop(m, call->node, &re);
        bool missing;
        if (loop != OL_NO_INDEX) {
            missing = !zeroed_in(m, re, opt);
        } else {
            /* a step function: zeroing in its body, or in the loop that calls it */
            uint32_t fn = ol_function_of(m, call->node);
            if (fn == OL_NO_INDEX)
                continue;
            ol_nid body = ol_field(t, m->functions.items[fn].node, OL_F_body);
            if (body == OL_NONE)
                continue;
            re = ol_events_of(m, body);
            if (!re->has_backward || zeroed_in(m, re, opt))
                continue;
            missing = callers_zero(m, fn, opt, 0) == 0;
        }
        if (!missing)
            continue;
        char *name = ol_node_str(t, opt);
        ol_reasons why = {0};
        if (re && re->backwards.len > 0)
            ol_because(&why, m, re->events.items[re->backwards.items[0]].site,
                       "adds into the gradients every iteration; nothing here clears them");
        ol_diag *d = ol_report_node(c, call->node,
                                    "`%s` steps every iteration but its gradients are never zeroed in the loop: "
                                    "each step applies the sum of all gradients so far",
                                    name);
        ol_diag_because(d, m, &why);
        ol_diag_help(d, "call `%s.zero_grad()` once per iteration, before `backward()` (or right after the step)",
                     name);
        free(name);
    }
}

const ol_rule ol_rule_oom601 = {
    .code = "OOM601",
    .name = "missing-zero-grad",
    .severity = OL_SEV_ERROR,
    .summary = "A training loop steps an optimizer whose gradients are never zeroed.",
    .what = "Flags `optimizer.step()` (and `scaler.step(optimizer)`) in a loop that runs `backward()` "
            "when nothing in the loop clears that optimizer's gradients: no `optimizer.zero_grad()`, "
            "no `model.zero_grad()` on the model it optimizes, no `p.grad = None`. Zeroing in a "
            "function called from the loop, in the caller of a step function, or in an LBFGS closure "
            "counts, and so do a helper of another file of the run that clears gradients and a known library "
            "zeroing function (Pyro's `zero_grads(params)`). Each optimizer is checked on its own.",
    .why = "`backward()` adds into `.grad`; it never overwrites. Without zeroing, every step applies "
           "the sum of all gradients since training began, so the effective learning rate grows each "
           "step and training diverges, often into inf/NaN losses that look like a memory or "
           "precision problem.",
    .example = "for x, y in loader:\n"
               "    loss = criterion(model(x), y)\n"
               "    loss.backward()\n"
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
