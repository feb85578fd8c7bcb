/*
 * ask_calls.c - what does this call do? (ask.h)
 *
 * A call of a function or method of the project, in this file or another
 * file of the run, is read through its summary (summary.h): what it does
 * (runs a model, steps an optimizer, returns a tensor it moved, ...), which
 * of its arguments it keeps beyond the call and how, which it cuts into
 * batches. Rules read these facts here, in the door's shape, and never the
 * summaries themselves: how the run's files are read and kept stays behind
 * the door.
 */
#include "ask_internal.h"

#include <stdlib.h>

#include "summary.h"

static void fill_callee(const ol_fn_summary *fs, bool cross, ol_callee *out)
{
    out->name = fs->name;
    out->facts = fs->facts;
    out->bound = fs->bound;
    out->cross_file = cross;
    out->param_count = fs->param_count;
    out->params = fs->params;
    out->param_sliced = fs->param_sliced;
    out->param_batched = fs->param_batched;
    out->summary = fs;
}

bool ol_callee_of(ol_model *m, uint32_t ci, ol_callee *out)
{
    bool cross = false;
    const ol_fn_summary *fs = ci < m->calls.len ? ol_call_summary(m, ci, &cross) : NULL;
    if (!fs)
        return false;
    fill_callee(fs, cross, out);
    return true;
}

ol_nid ol_callee_arg(ol_model *m, uint32_t ci, const ol_callee *callee, uint32_t param)
{
    return ol_call_param_arg(m, ci, callee->summary, param);
}

bool ol_forward_runs_without_grad(ol_model *m, uint32_t ci, ol_reasons *why)
{
    const ol_fn_summary *fwd = ol_forward_summary(m, ci);
    if (!fwd || !(fwd->facts & OL_FN_NO_GRAD))
        return false;
    ol_because(why, m, m->calls.items[ci].node, "the model's own `forward()` runs without autograd (`%s`)",
               fwd->name ? fwd->name : "forward");
    return true;
}

size_t ol_call_keeps(ol_model *m, uint32_t ci, ol_kept *out, size_t cap)
{
    ol_kept_arg kept[8];
    size_t n = ol_call_kept_args(m, ci, kept, cap < 8 ? cap : 8);
    for (size_t i = 0; i < n; i++) {
        out[i].arg = kept[i].arg;
        out[i].holder = kept[i].holder;
        out[i].adds = (kept[i].store->how & OL_STORE_ADD) != 0;
        out[i].collects = (kept[i].store->how & OL_STORE_COLLECT) != 0;
        out[i].callee = kept[i].fn->name;
        out[i].what = kept[i].store->what;
        out[i].cross_file = kept[i].cross_file;
    }
    return n;
}
