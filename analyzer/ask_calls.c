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
#include <string.h>

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

bool ol_call_hands(ol_model *m, uint32_t ci, bool (*test)(ol_model *m, ol_nid value))
{
    const ol_tree *t = m->tree;
    const ol_call *call = &m->calls.items[ci];
    if (call->receiver != OL_NONE && test(m, ol_unparen(t, call->receiver)))
        return true;
    ol_nid args = ol_field(t, call->node, OL_F_arguments);
    if (args == OL_NONE || ol_kind_of(t, args) != OL_N_argument_list)
        return false;
    for (ol_nid a = ol_first_named(t, args); a != OL_NONE; a = ol_next_named(t, a)) {
        ol_kind k = ol_kind_of(t, a);
        if (k == OL_N_list_splat || k == OL_N_dictionary_splat)
            continue;
        ol_nid v = k == OL_N_keyword_argument ? ol_field(t, a, OL_F_value) : a;
        if (v != OL_NONE && test(m, ol_unparen(t, v)))
            return true;
    }
    return false;
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

bool ol_callee_by_receiver_name(ol_model *m, uint32_t ci, ol_callee *out, ol_reasons *why)
{
    const ol_tree *t = m->tree;
    if (ci >= m->calls.len)
        return false;
    const ol_call *c = &m->calls.items[ci];
    if (c->receiver == OL_NONE || !c->name)
        return false;
    /* the receiver's own name: `task` of `self.task` or of `task` */
    ol_nid recv = ol_unparen(t, c->receiver);
    ol_kind k = ol_kind_of(t, recv);
    ol_nid name = k == OL_N_attribute ? ol_field(t, recv, OL_F_attribute) : k == OL_N_identifier ? recv : OL_NONE;
    if (name == OL_NONE || ol_kind_of(t, name) != OL_N_identifier)
        return false;
    ol_val rv = ol_eval(m, recv);
    if (rv.kind != OL_V_UNKNOWN)
        return false; /* the file knows what it is */
    char *hint = ol_node_str(t, name);
    const char *h = hint;
    while (*h == '_')
        h++;
    const char *cls = NULL, *path = NULL;
    const ol_fn_summary *fs = ol_run_method_by_hint(m, h, ol_sym_str(m, c->name), &cls, &path);
    if (fs) {
        fill_callee(fs, true, out);
        char *call = ol_node_str_short(t, c->node);
        ol_reasons_add(why, c->node, NULL, 0, true,
                       ol_door_printf(m, "`%s` runs `%s.%s()` of %s: the one class of the run named for `%s` that "
                                         "defines it",
                                      call, cls, ol_sym_str(m, c->name), ol_door_path(m, path), h));
        if (why && !why->guess)
            why->guess = "the name of the object a method is called on";
        free(call);
    }
    free(hint);
    return fs != NULL;
}

bool ol_callee_returns_graph(const ol_callee *callee, int index, const char *key)
{
    const ol_fn_summary *fs = callee->summary;
    if (!fs)
        return false;
    const uint8_t graph = OL_VF_GRAPH | OL_VF_ELEM_GRAPH;
    if (index < 0 && !key)
        return (fs->ret.flags & graph) != 0;
    for (size_t i = 0; i < fs->elem_count; i++) {
        const ol_sum_elem *e = &fs->elems[i];
        if ((key && e->key && strcmp(e->key, key) == 0) || (!key && !e->key && e->index == index))
            return (e->val.flags & graph) != 0;
    }
    return false;
}
