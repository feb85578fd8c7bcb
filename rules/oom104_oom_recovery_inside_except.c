/*
 * OOM104 oom-recovery-inside-except: retrying the model inside the
 * `except` that caught the out-of-memory error.
 *
 * While the except block runs, the exception's traceback holds the frames
 * of the failed attempt, and with them every tensor they referenced: the
 * retry starts with the memory of the attempt that just failed still
 * allocated. PyTorch's FAQ: set a flag in the except, and retry after it.
 *
 * A retry is a model forward or backward call in the except body, a call of
 * the same function the try body called, or a call of a local function
 * that runs the model. The except must catch OOM (RuntimeError,
 * torch.cuda.OutOfMemoryError, Exception, bare) around a try that runs
 * the model (or name the OOM error explicitly).
 */
#include <ctype.h>
#include <string.h>

#include "rule.h"

/* Does the subtree (or a local function it calls, a few levels deep) run a
 * model forward or backward? */
static bool runs_model(ol_model *m, ol_nid n, int depth)
{
    size_t first, end = ol_calls_in(m, n, &first);
    for (size_t i = first; i < end; i++) {
        if (ol_is_forward_call(m, (uint32_t)i) || ol_is_backward_call(m, (uint32_t)i))
            return true;
        if (depth >= 2)
            continue;
        const uint32_t *called;
        size_t ncalled = ol_call_functions(m, (uint32_t)i, &called);
        for (size_t k = 0; k < ncalled; k++) {
            ol_nid body = ol_field(m->tree, m->functions.items[called[k]].node, OL_F_body);
            if (body != OL_NONE && runs_model(m, body, depth + 1))
                return true;
        }
    }
    return false;
}

static ol_nid try_body_of(const ol_tree *t, ol_nid except_clause)
{
    ol_nid try_stmt = ol_parent(t, except_clause);
    return try_stmt != OL_NONE ? ol_field(t, try_stmt, OL_F_body) : OL_NONE;
}

/* Is name `arg` (an identifier) bound in the try body before node `before`? */
static bool bound_in_try(ol_model *m, ol_nid arg, ol_nid try_body, ol_nid before)
{
    const ol_tree *t = m->tree;
    if (ol_kind_of(t, arg) != OL_N_identifier)
        return false;
    for (uint32_t d = ol_scope_defs(m, m->node_scope[arg], ol_node_sym(m, arg)); d != OL_NO_INDEX;
         d = m->defs.items[d].next) {
        ol_nid target = m->defs.items[d].target;
        if (target != OL_NONE && target >= try_body && target < m->subtree_end[try_body] && target < before)
            return true;
    }
    return false;
}

/* Does argument list `args` hold an argument written as `arg` is? */
static bool holds_argument(const ol_tree *t, ol_nid args, ol_nid arg)
{
    for (ol_nid a = ol_first_named(t, args); a != OL_NONE; a = ol_next_named(t, a))
        if (ol_same_text(t, a, arg))
            return true;
    return false;
}

/* Is the handler's call the try's call with arguments left out, each a name
 * the try body bound before the call: `model(g, x, pos_enc)` after
 * `pos_enc = g.ndata["pos_enc"]` in the try, `model(g, x)` in the handler?
 * A fallback for an input the try could not make (a missing key, an
 * optional feature), not the step again on less memory. */
static bool drops_try_inputs(ol_model *m, ol_nid try_call, ol_nid retry_call, ol_nid try_body)
{
    const ol_tree *t = m->tree;
    ol_nid targs = ol_field(t, try_call, OL_F_arguments), rargs = ol_field(t, retry_call, OL_F_arguments);
    if (targs == OL_NONE || rargs == OL_NONE)
        return false;
    size_t tn = 0, rn = 0;
    for (ol_nid r = ol_first_named(t, rargs); r != OL_NONE; r = ol_next_named(t, r), rn++)
        if (!holds_argument(t, targs, r))
            return false; /* the handler passes something the try did not */
    for (ol_nid a = ol_first_named(t, targs); a != OL_NONE; a = ol_next_named(t, a), tn++) {
        ol_nid value = ol_kind_of(t, a) == OL_N_keyword_argument ? ol_field(t, a, OL_F_value) : a;
        if (!holds_argument(t, rargs, a) && (value == OL_NONE || !bound_in_try(m, value, try_body, try_call)))
            return false;
    }
    return rn < tn;
}

/* Is call i a retry of something the try body called: the same callee (with
 * other arguments, when other_args)? A call that leaves out inputs the try
 * made (drops_try_inputs) is a fallback, not a retry. */
static bool retries_try(ol_model *m, uint32_t i, ol_nid try_body, bool other_args)
{
    const ol_tree *t = m->tree;
    const ol_call *c = &m->calls.items[i];
    size_t first, end = ol_calls_in(m, try_body, &first);
    for (size_t k = first; k < end; k++) {
        if (!ol_same_text(t, m->calls.items[k].callee, c->callee))
            continue;
        if (!other_args)
            return true;
        if (!ol_same_text(t, ol_field(t, m->calls.items[k].node, OL_F_arguments), ol_field(t, c->node, OL_F_arguments)) &&
            !drops_try_inputs(m, m->calls.items[k].node, c->node, try_body))
            return true;
    }
    return false;
}

static bool names_oom(ol_model *m, ol_nid type)
{
    const char *q = ol_qualname(m, type);
    return q && (strstr(q, "OutOfMemoryError") != NULL);
}

/* Does a string in the handler speak of running out of memory (`if "out of
 * memory" in str(e)`, a log line saying so)? A broad `except Exception:`
 * is an out-of-memory handler only when its code is about one. */
static bool handler_mentions_oom(ol_model *m, ol_nid body)
{
    const ol_tree *t = m->tree;
    static const char *const words[] = {"out of memory", "outofmemory", "oom", NULL};
    for (ol_nid n = body; n < m->subtree_end[body]; n++) {
        const char *s;
        uint32_t len;
        if (!ol_string_value(t, n, &s, &len))
            continue;
        for (const char *const *w = words; *w; w++) {
            size_t wl = strlen(*w);
            for (uint32_t i = 0; i + wl <= len; i++) {
                if (!ol_mem_ieq(s + i, *w, wl))
                    continue;
                /* "oom" as a word, not inside "room" or "zoom" */
                bool word = wl > 3 || ((i == 0 || !isalpha((unsigned char)s[i - 1])) &&
                                       (i + wl == len || !isalpha((unsigned char)s[i + wl])));
                if (word)
                    return true;
            }
        }
    }
    return false;
}

static void check(ol_check *c)
{
    ol_model *m = c->model;
    const ol_tree *t = c->tree;
    for (size_t ci = 0; ci < m->contexts.len; ci++) {
        const ol_ctx *x = &m->contexts.items[ci];
        if (x->kind != OL_CTX_EXCEPT || !x->catches_oom || x->body == OL_NONE)
            continue;
        ol_nid try_body = try_body_of(t, x->node);
        if (try_body == OL_NONE)
            continue;
        /* a handler that names the OOM error or speaks of one is about it;
         * a broad one (Exception, RuntimeError, bare) only when what it calls
         * again is what the try ran: a retry of the step */
        bool about_oom = names_oom(m, x->item) || handler_mentions_oom(m, x->body);
        if (!about_oom && !runs_model(m, try_body, 0))
            continue;
        size_t first, end = ol_calls_in(m, x->body, &first);
        for (size_t i = first; i < end; i++) {
            const ol_call *call = &m->calls.items[i];
            if (ol_except_at(m, call->node) != ci || ol_function_of(m, call->node) != ol_function_of(m, x->node))
                continue;
            bool retry = false;
            if (about_oom) {
                retry = ol_is_forward_call(m, (uint32_t)i) || ol_is_backward_call(m, (uint32_t)i);
                if (!retry && runs_model(m, call->node, 0) && call->receiver == OL_NONE)
                    retry = true; /* a local function that runs the model */
            }
            /* without a word about memory, a retry of the step is a call of
             * what the try called with other arguments (a smaller batch, a
             * cast); the same call again handles another error (an output
             * unpacked another way) */
            if (!retry && retries_try(m, (uint32_t)i, try_body, true) && runs_model(m, call->node, 0))
                retry = true;
            if (!retry)
                continue;
            ol_diag *d = ol_report_node(c, call->node,
                                        "this retry runs inside the `except` that caught the out-of-memory error: "
                                        "the traceback still holds the failed attempt's tensors");
            ol_diag_help(d, "set a flag in the `except` and retry after the block, so the failed attempt's "
                            "frames are freed first");
            break; /* one finding per handler */
        }
    }
}

const ol_rule ol_rule_oom104 = {
    .code = "OOM104",
    .name = "oom-recovery-inside-except",
    .severity = OL_SEV_ERROR,
    .device_memory = true,
    .summary = "A model is re-run inside the `except` that caught an out-of-memory error.",
    .what = "Flags the first model forward/backward, or call of a function that runs the model, inside "
            "an `except torch.cuda.OutOfMemoryError` handler, or a broader one (`RuntimeError`, "
            "`Exception`, bare) whose code is about running out of memory (it tests or prints \"out of "
            "memory\"), when the `try` runs the model. A broad handler that says nothing of memory is "
            "flagged only when it calls again what the `try` called, with other arguments (a smaller "
            "batch, a cast), and that runs the model: a retry of the step. One around loading a checkpoint "
            "that then builds or runs a model, one that makes the same call again to handle another "
            "error, or one that makes it without inputs the `try` computed first (a fallback for a "
            "missing feature: `model(g, x)` after `model(g, x, g.ndata[\"pos_enc\"])` failed), is not.",
    .why = "Inside an `except` block the exception is alive, and its traceback references the frames of "
           "the failed attempt and every tensor they held: activations, the half-built graph, the batch. "
           "A retry with a smaller batch in the handler starts with all of that still allocated, so it "
           "often fails too. PyTorch's FAQ recommends setting a flag and retrying outside the handler.",
    .example = "try:\n"
               "    run_model(batch_size)\n"
               "except RuntimeError:  # out of memory\n"
               "    for _ in range(batch_size):\n"
               "        run_model(1)",
    .instead = "oom = False\n"
               "try:\n"
               "    run_model(batch_size)\n"
               "except RuntimeError:  # out of memory\n"
               "    oom = True\n"
               "if oom:\n"
               "    for _ in range(batch_size):\n"
               "        run_model(1)",
    .fix = NULL,
    .tags = "memory",
    .precision = "high",
    .check = check,
};
