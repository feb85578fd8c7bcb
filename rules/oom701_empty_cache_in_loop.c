/*
 * OOM701 empty-cache-in-loop: `torch.cuda.empty_cache()` inside a loop over
 * batches (or in a per-batch hook, or a function called per batch).
 *
 * empty_cache returns cached blocks to the driver; the next step allocates
 * them again through cudaMalloc, which synchronises the GPU. Every step pays
 * for it, memory in use does not go down (only the cache does), and
 * fragmentation can get worse. Between runs of a sweep, or once per epoch,
 * it is fine; so is between the trials of a loop that builds a new model
 * each iteration (a batch-size search), though each trial trains. A helper
 * with no loop of its own counts when the door says the run calls it every
 * step (a DDP worker's batch loop in another file).
 */
#include <stdlib.h>
#include <string.h>

#include "rule.h"

/* The innermost loop around n in its function is a batch loop and holds no
 * batch loop of its own (an epoch loop calling empty_cache once per epoch
 * is fine), and n does not run only every so many batches. */
static bool per_batch(ol_model *m, ol_nid n, int depth, ol_reasons *why)
{
    /* a handler runs after a failure (an out-of-memory error caught to retry
     * with less), not every batch */
    if (ol_in_handler(m->tree, n, OL_NONE))
        return false;
    uint32_t l = m->node_loop[n];
    if (l != OL_NO_INDEX) {
        if (!ol_loop_is_data_loop(m, l) || ol_periodic_branch(m->tree, n, m->loops.items[l].node) != OL_NONE)
            return false;
        for (uint32_t k = 0; k < m->loops.len; k++)
            if (k != l && m->loops.items[k].parent == l && ol_loop_is_data_loop(m, k))
                return false;
        /* a search that builds a new model each iteration (a batch-size
         * search, a sweep): between trials, not every batch */
        if (ol_loop_runs_trials(m, l, NULL))
            return false;
        ol_nid iter = m->loops.items[l].iter;
        char *text = iter != OL_NONE ? ol_node_str_short(m->tree, iter) : NULL;
        if (text)
            ol_because(why, m, m->loops.items[l].node, "runs every step of the loop over `%s`", text);
        else
            ol_because(why, m, m->loops.items[l].node, "runs every step of this loop");
        free(text);
        return true;
    }
    uint32_t fn = ol_function_of(m, n);
    if (fn == OL_NO_INDEX || depth > 2)
        return false;
    if (ol_function_hook(m, fn) == OL_HOOK_TRAIN_STEP || ol_function_hook(m, fn) == OL_HOOK_EVAL_STEP) {
        char *name = ol_node_str(m->tree, ol_field(m->tree, m->functions.items[fn].node, OL_F_name));
        ol_because(why, m, ol_field(m->tree, m->functions.items[fn].node, OL_F_name), "`%s()` runs every batch",
                   name);
        free(name);
        return true;
    }
    const ol_function *f = &m->functions.items[fn];
    for (size_t i = 0; i < f->callsites.len; i++) {
        ol_nid site = m->calls.items[m->functions.items[fn].callsites.items[i]].node;
        if (per_batch(m, site, depth + 1, why)) {
            uint8_t before = why->len;
            ol_because(why, m, site, "called from here");
            if (why->len > before)
                why->items[why->len - 1].step = true; /* a step of the chain of calls */
            return true;
        }
    }
    return false;
}

/* Outside any loop of its function, in a function its own file never runs
 * more than once per call: called every step as the door sees it, from a
 * batch loop of another file of the run (a helper that frees memory, called
 * by a DDP worker's training loop). */
static bool per_step_elsewhere(ol_model *m, ol_nid n, ol_reasons *why)
{
    if (m->node_loop[n] != OL_NO_INDEX || ol_in_handler(m->tree, n, OL_NONE) || ol_function_of(m, n) == OL_NO_INDEX)
        return false;
    /* the file's own callers are per_batch's to judge (a step method that
     * frees the cache between a rollout and an update is not a batch loop);
     * only where the file does not know, the run's callers decide */
    ol_often_local local;
    ol_often_explain(m, n, &local);
    if (local.often != OL_PER_CALL)
        return false;
    ol_reasons often = {0};
    if (ol_how_often(m, n, &often) != OL_PER_STEP)
        return false;
    for (uint8_t i = 0; i < often.len && why->len < OL_REASONS_MAX; i++)
        why->items[why->len++] = often.items[i];
    if (!why->guess)
        why->guess = often.guess;
    return true;
}

/* The allocators' cache releases, CUDA's under both of its names. */
static const char *const EMPTY_CACHE[] = {"torch.cuda.empty_cache", "torch.cuda.memory.empty_cache",
                                          "torch.mps.empty_cache", "torch.xpu.empty_cache", NULL};

static void check(ol_check *c)
{
    ol_model *m = c->model;
    for (size_t i = 0; i < m->calls.len; i++) {
        const ol_call *call = &m->calls.items[i];
        if (!ol_call_is(m, call->node, EMPTY_CACHE))
            continue;
        ol_reasons why = {0};
        if (!per_batch(m, call->node, 0, &why)) {
            why = (ol_reasons){0};
            if (!per_step_elsewhere(m, call->node, &why))
                continue;
        }
        ol_diag *d = ol_report_node(c, call->node,
                                    "`empty_cache()` every batch hands cached memory back to the driver only to "
                                    "allocate it again next step: slower, and it frees nothing in use");
        ol_diag_because(d, m, &why);
        ol_diag_help(d, "remove it from the loop; if memory runs out, find what keeps tensors alive (see "
                        "OOM101/OOM102) or set PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True against "
                        "fragmentation");
    }
}

const ol_rule ol_rule_oom701 = {
    .code = "OOM701",
    .name = "empty-cache-in-loop",
    .severity = OL_SEV_WARNING,
    .device_memory = true,
    .summary = "`torch.cuda.empty_cache()` runs every batch.",
    .what = "Flags `torch.cuda.empty_cache()` (and the MPS/XPU equivalents) inside a loop over batches, "
            "in Lightning's per-batch hooks, or in a function called from a batch loop. Calls between "
            "runs of a sweep, once per epoch, or every so many batches (in the body of an `if` that tests "
            "`step % n == 0`, as a periodic validation that drops its pipeline does) are not flagged, nor calls between "
            "the trials of a loop that builds a new model each iteration (a batch-size search). A helper with no "
            "loop of its own is flagged when another file of the run calls it every batch (a DDP worker's "
            "training loop).",
    .why = "`empty_cache` does not free memory that tensors use; it returns PyTorch's cached, already "
           "free blocks to the driver. The next step needs them again and gets them through "
           "`cudaMalloc`, which synchronises the device: each step gets slower, peak memory stays the "
           "same, and fragmentation can get worse. It is a habit copied from blog posts that treats a "
           "symptom; the cause of an out-of-memory error is something keeping tensors alive.",
    .example = "for x, y in loader:\n"
               "    loss = criterion(model(x), y)\n"
               "    loss.backward()\n"
               "    optimizer.step()\n"
               "    del loss\n"
               "    torch.cuda.empty_cache()",
    .instead = "for x, y in loader:\n"
               "    loss = criterion(model(x), y)\n"
               "    loss.backward()\n"
               "    optimizer.step()",
    .fix = NULL,
    .tags = "performance,memory",
    .precision = "high",
    .check = check,
};
