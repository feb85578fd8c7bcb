/*
 * ask_often.c - how often does this run? (ask.h)
 *
 * The file decides first (facts.c, ol_often_explain: the loops around the
 * node, then its function's name and call sites). A function the file never
 * calls runs as often as its callers elsewhere in the run: the summaries
 * record, for every call of another file's function, how often that call
 * runs in its own file, so a helper that a training script's batch loop
 * calls runs per step. Asked once per function.
 */
#include "ask_internal.h"

#include <stdlib.h>

#include "facts.h"
#include "summary.h"

static const char *often_words(ol_often o)
{
    switch (o) {
    case OL_ONCE:
        return "once";
    case OL_PER_CALL:
        return "once per call";
    case OL_PER_EPOCH:
        return "once per epoch";
    case OL_PER_STEP:
        return "every step";
    }
    return "";
}

/* How often the run calls function fi, which its file does not call. */
static ol_often run_often(ol_model *m, uint32_t fi, ol_reasons *why)
{
    ol_door_often *d = &ol_door_of(m)->often[fi];
    if (!d->state) {
        size_t on = 0, off = 0;
        ol_run_site sites[3];
        if (!ol_run_callers_at(m, fi, &on, &off, sites) || sites[2].file == SIZE_MAX) {
            d->state = OL_PER_CALL + 1;
        } else {
            ol_often o = (ol_often)sites[2].often;
            d->state = (uint8_t)(o + 1);
            char *label = ol_door_function_label(m, fi);
            ol_reasons_add(&d->why, OL_NONE, ol_door_path(m, sites[2].path), sites[2].line, true,
                           ol_door_printf(m, "%s is called here, %s", label, often_words(o)));
            free(label);
        }
    }
    ol_reasons_merge(why, &d->why);
    return (ol_often)(d->state - 1);
}

ol_often ol_how_often(ol_model *m, ol_nid n, ol_reasons *why)
{
    ol_often_local loc;
    ol_often_explain(m, n, &loc);
    const ol_tree *t = m->tree;
    switch (loc.cause) {
    case OL_OC_STEP_LOOP:
    case OL_OC_EPOCH_LOOP: {
        uint32_t li = OL_NO_INDEX;
        for (uint32_t k = m->node_loop[n]; k != OL_NO_INDEX; k = m->loops.items[k].parent)
            if (m->loops.items[k].node == loc.node)
                li = k;
        ol_nid iter = li != OL_NO_INDEX ? m->loops.items[li].iter : OL_NONE;
        char *text = iter != OL_NONE ? ol_node_str_short(t, iter) : NULL;
        ol_reasons_add(why, loc.node, NULL, 0, false,
                       loc.cause == OL_OC_STEP_LOOP
                           ? (text ? ol_door_printf(m, "runs every step of the loop over `%s`", text)
                                   : ol_door_printf(m, "runs every step of this loop"))
                           : (text ? ol_door_printf(m, "runs once per epoch, in the loop over `%s`", text)
                                   : ol_door_printf(m, "runs once per epoch, in this loop")));
        free(text);
        return loc.often;
    }
    case OL_OC_INIT:
    case OL_OC_STEP_METHOD: {
        char *name = ol_node_str(t, loc.node);
        ol_reasons_add(why, loc.node, NULL, 0, false,
                       loc.cause == OL_OC_INIT ? ol_door_printf(m, "`%s()` runs once per object", name)
                                               : ol_door_printf(m, "`%s()` runs every step", name));
        free(name);
        return loc.often;
    }
    case OL_OC_CALLER:
        if (loc.often == OL_PER_CALL && loc.function != OL_NO_INDEX) {
            ol_often o = run_often(m, loc.function, why);
            ol_reasons_add(why, loc.node, NULL, 0, true, ol_door_printf(m, "called from here"));
            return o;
        }
        ol_reasons_add(why, loc.node, NULL, 0, true, ol_door_printf(m, "called from here, %s", often_words(loc.often)));
        return loc.often;
    case OL_OC_NO_CALLER:
        return loc.function != OL_NO_INDEX ? run_often(m, loc.function, why) : OL_PER_CALL;
    case OL_OC_MODULE:
        break;
    }
    return loc.often;
}
