/*
 * ask_data.c - is this value a whole dataset, and where does it go? (ask.h)
 *
 * The facts OOM301 stands on, read from the file (device.h): where a value
 * comes from (read from disk, converted from an array or a table, or made
 * up by a factory), whether an index draws a batch, and whether a call
 * moves what it is given to the GPU. The door names them for the question
 * they answer; device.c keeps how.
 */
#include "ask_internal.h"

#include "device.h"
#include "devices.h"

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
