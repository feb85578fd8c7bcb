/*
 * ask_data.c - is this value a whole dataset, and where does it go? (ask.h)
 *
 * The facts OOM301 stands on, read from the file (moves.h): where a value
 * comes from (read from disk, converted from an array or a table, or made
 * up by a factory), whether an index draws a batch, and whether a call
 * moves what it is given to the GPU. The door names them for the question
 * they answer; moves.c keeps how.
 */
#include "ask_internal.h"

#include "hardware.h"
#include "moves.h"

bool ol_value_read_from_data(ol_model *m, ol_nid e)
{
    return ol_loaded_data(m, e);
}

bool ol_value_made_up(ol_model *m, ol_nid e)
{
    return ol_made_from_nothing(m, e);
}

bool ol_index_draws_batch(ol_model *m, ol_nid index)
{
    return ol_batch_index(m, index);
}

ol_nid ol_method_chain_base(ol_model *m, ol_nid e)
{
    return ol_chain_base(m, e);
}

bool ol_method_chain_holds(ol_model *m, ol_nid e, ol_nid call)
{
    return ol_chain_contains(m, e, call);
}

bool ol_call_moves_to_gpu(ol_model *m, const ol_call *c)
{
    return ol_moves_to_gpu(m, c);
}

/* Does a call in the body of loop li move to the GPU a method chain whose
 * base is the name bound by def di (`x.float().to(device)`, `x.cuda()`)?
 * Returns that call, or OL_NONE. */
static ol_nid loop_moves_def(ol_model *m, uint32_t li, uint32_t di)
{
    const ol_tree *t = m->tree;
    ol_nid body = m->loops.items[li].body;
    if (body == OL_NONE)
        return OL_NONE;
    size_t first, end = ol_calls_in(m, body, &first);
    for (size_t i = first; i < end; i++) {
        const ol_call *c = &m->calls.items[i];
        if (c->receiver == OL_NONE)
            continue;
        ol_nid base = ol_chain_base(m, c->receiver);
        if (ol_kind_of(t, base) != OL_N_identifier || ol_node_sym(m, base) != m->defs.items[di].name ||
            !ol_moves_to_gpu(m, c))
            continue;
        uint32_t defs[2];
        if (ol_reaching_defs(m, m->node_scope[base], m->defs.items[di].name, base, defs, 2) == 1 && defs[0] == di)
            return c->node;
    }
    return OL_NONE;
}

bool ol_batch_left_on_host(ol_model *m, ol_nid e, ol_reasons *why)
{
    const ol_tree *t = m->tree;
    e = ol_unparen(t, e);
    if (ol_kind_of(t, e) != OL_N_identifier)
        return false;
    ol_sym name = ol_node_sym(m, e);
    uint32_t defs[2];
    if (ol_reaching_defs(m, m->node_scope[e], name, e, defs, 2) != 1 || m->defs.items[defs[0]].kind != OL_DEF_FOR)
        return false;
    ol_nid stmt = m->defs.items[defs[0]].stmt;
    uint32_t li = OL_NO_INDEX;
    for (uint32_t i = 0; i < m->loops.len && li == OL_NO_INDEX; i++)
        if (m->loops.items[i].node == stmt)
            li = i;
    if (li == OL_NO_INDEX || !ol_loop_draws_batches(m, li))
        return false;
    /* the other items of the same batch: one of them moved to the GPU says
     * the loader hands out host tensors */
    for (uint32_t di = 0; di < m->defs.len; di++) {
        const ol_def *d = &m->defs.items[di];
        if (d->kind != OL_DEF_FOR || d->stmt != stmt || d->name == name)
            continue;
        ol_nid move = loop_moves_def(m, li, di);
        if (move == OL_NONE)
            continue;
        char *moved = ol_node_str_short(t, move), *text = ol_node_str(t, e);
        ol_because(why, m, move, "`%s` moves another item of the batch to the GPU, not `%s`: the loader hands out "
                                 "host tensors",
                   moved, text);
        free(moved);
        free(text);
        return true;
    }
    return false;
}

bool ol_names_device_variable(ol_model *m, ol_nid e)
{
    return ol_is_device_variable(m, e);
}

bool ol_file_chooses_device(ol_model *m)
{
    ol_device_use use;
    ol_file_device_use(m, &use);
    return use.use == OL_DEVICE_NAMED || use.use == OL_DEVICE_VARIABLE;
}

bool ol_call_builds_dataset(ol_model *m, ol_nid call, ol_reasons *why)
{
    bool guess = false;
    if (!ol_builds_dataset(m, call, &guess))
        return false;
    if (guess && why)
        why->guess = "a class's name";
    return true;
}

bool ol_method_of_dataset(ol_model *m, uint32_t fn, ol_reasons *why)
{
    /* a function nested in a method belongs to the method's class */
    while (fn != OL_NO_INDEX && m->functions.items[fn].cls == OL_NO_INDEX)
        fn = m->scopes.items[m->functions.items[fn].outer_scope].function;
    bool guess = false;
    if (fn == OL_NO_INDEX || !ol_class_is_dataset(m, m->functions.items[fn].cls, &guess))
        return false;
    if (guess && why)
        why->guess = "a class's name";
    return true;
}
