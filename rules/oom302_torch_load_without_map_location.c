/*
 * OOM302 torch-load-without-map-location: `torch.load(path)` with no
 * `map_location`. Tensors come back on the device they were saved from: a
 * checkpoint written on GPU 0 lands on GPU 0 in every process that loads it,
 * and a full training checkpoint (optimizer state included) can fill a card
 * before the model even starts. A positional second argument
 * (`torch.load(p, "cpu")`) counts as a map location.
 */
#include <string.h>

#include "rule.h"

static void check(ol_check *c)
{
    ol_model *m = c->model;
    const ol_tree *t = c->tree;
    for (size_t i = 0; i < m->calls.len; i++) {
        const ol_call *call = &m->calls.items[i];
        const char *q = ol_qualname(m, call->callee);
        if (!q || (strcmp(q, "torch.load") != 0 && strcmp(q, "torch.serialization.load") != 0))
            continue;
        ol_nid args = ol_field(t, call->node, OL_F_arguments);
        if (args == OL_NONE || ol_kind_of(t, args) != OL_N_argument_list)
            continue;
        bool given = false, splat = false;
        ol_nid first = OL_NONE, last = OL_NONE;
        int positional = 0;
        for (ol_nid a = ol_first_named(t, args); a != OL_NONE; a = ol_next_named(t, a)) {
            ol_kind k = ol_kind_of(t, a);
            last = a;
            if (k == OL_N_list_splat || k == OL_N_dictionary_splat)
                splat = true;
            else if (k == OL_N_keyword_argument) {
                if (ol_text_is(t, ol_field(t, a, OL_F_name), "map_location"))
                    given = true;
            } else {
                if (first == OL_NONE)
                    first = a;
                positional++;
            }
        }
        if (given || splat || positional >= 2 || first == OL_NONE)
            continue;
        ol_diag *d = ol_report_node(c, call->node,
                                    "`torch.load` without `map_location` restores tensors onto the device they were "
                                    "saved from (often GPU 0, in every process)");
        ol_diag_help(d, "load to the CPU and move what you need: `torch.load(path, map_location=\"cpu\")`");
        ol_fix *fix = ol_fix_new(false, "Load onto the CPU");
        ol_fix_edit(fix, t->nodes.items[last].end, t->nodes.items[last].end, ", map_location=\"cpu\"");
        ol_diag_attach_fix(d, fix);
    }
}

const ol_rule ol_rule_oom302 = {
    .code = "OOM302",
    .name = "torch-load-without-map-location",
    .severity = OL_SEV_WARNING,
    .summary = "`torch.load` without `map_location` restores tensors onto the GPU they were saved from.",
    .what = "Flags `torch.load(...)` calls that give no `map_location` (keyword or second positional "
            "argument). Calls that pass `**kwargs` are not flagged.",
    .why = "A checkpoint remembers the device of every tensor in it. Loaded without `map_location`, a "
           "checkpoint saved from `cuda:0` is materialised on GPU 0 again: in every process of a "
           "multi-GPU job, and in full (optimizer state and all) before `load_state_dict` copies what "
           "it needs. GPU 0 runs out of memory, or holds a second copy of the model for the whole run.",
    .example = "state = torch.load(\"checkpoint.pt\")\n"
               "model.load_state_dict(state[\"model\"])",
    .instead = "state = torch.load(\"checkpoint.pt\", map_location=\"cpu\")\n"
               "model.load_state_dict(state[\"model\"])",
    .fix = "Safe: adds `map_location=\"cpu\"`; `load_state_dict` copies the values onto the model's own "
           "devices.",
    .tags = "memory,checkpointing",
    .precision = "very-high",
    .check = check,
};
