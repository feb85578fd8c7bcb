/*
 * OOM302 torch-load-without-map-location: `torch.load(path)` with no
 * `map_location`. Tensors come back on the device they were saved from: a
 * checkpoint written on GPU 0 lands on GPU 0 in every process that loads it,
 * and a full training checkpoint (optimizer state included) can fill a card
 * before the model even starts. A positional second argument
 * (`torch.load(p, "cpu")`) counts as a map location.
 */
#include <stdlib.h>
#include <string.h>

#include "rule.h"

/* `n` is (through parentheses, subscripts and keywords) an argument of an
 * `x.load_state_dict(...)` call, which copies onto the model's own devices. */
static bool feeds_load_state_dict(ol_model *m, ol_nid n)
{
    const ol_tree *t = m->tree;
    for (ol_nid p = ol_parent(t, n); p != OL_NONE; n = p, p = ol_parent(t, p)) {
        ol_kind k = ol_kind_of(t, p);
        if (k == OL_N_parenthesized_expression || k == OL_N_keyword_argument ||
            (k == OL_N_subscript && ol_field(t, p, OL_F_value) == n))
            continue;
        if (k != OL_N_argument_list)
            return false;
        uint32_t ci = ol_call_at(m, ol_parent(t, p));
        return ci != OL_NO_INDEX && m->calls.items[ci].receiver != OL_NONE &&
               strcmp(ol_sym_str(m, m->calls.items[ci].name), "load_state_dict") == 0;
    }
    return false;
}

/* `ckpt["epoch"]`, `ckpt.get("best_acc")`: bookkeeping read from a checkpoint,
 * the same on any device. */
static bool reads_metadata(ol_model *m, ol_nid use)
{
    const ol_tree *t = m->tree;
    ol_nid p = ol_parent(t, use), key = OL_NONE;
    if (ol_kind_of(t, p) == OL_N_subscript && ol_field(t, p, OL_F_value) == use)
        key = ol_field(t, p, OL_F_subscript);
    else if (ol_kind_of(t, p) == OL_N_attribute && ol_text_is(t, ol_field(t, p, OL_F_attribute), "get")) {
        uint32_t ci = ol_call_at(m, ol_parent(t, p));
        if (ci != OL_NO_INDEX)
            key = ol_call_arg(m, m->calls.items[ci].node, 0, NULL);
    }
    if (key == OL_NONE || ol_kind_of(t, key) != OL_N_string)
        return false;
    static const char *const words[] = {"epoch", "step", "iter", "iteration", "best", "acc", "accuracy", "loss",
                                        "args", "config", "cfg", "lr", "score", "metric", "metrics", "version",
                                        NULL};
    char *text = ol_node_str(t, key);
    bool known = false;
    for (size_t i = 0; words[i] && !known; i++)
        known = strstr(text, words[i]) != NULL;
    free(text);
    return known;
}

/* The def a `name = torch.load(...)` statement makes, or OL_NO_INDEX.
 * def_of_target: per node, the index + 1 of the def binding it. */
static uint32_t load_def(ol_model *m, const uint32_t *def_of_target, ol_nid call)
{
    const ol_tree *t = m->tree;
    ol_nid stmt = ol_parent(t, call);
    if (ol_kind_of(t, stmt) != OL_N_assignment || ol_field(t, stmt, OL_F_right) != call)
        return OL_NO_INDEX;
    ol_nid target = ol_field(t, stmt, OL_F_left);
    if (ol_kind_of(t, target) != OL_N_identifier || target >= t->nodes.len)
        return OL_NO_INDEX;
    uint32_t d = def_of_target[target];
    /* the binding in the statement's own scope, as the assignment makes it */
    if (d == 0 || m->defs.items[d - 1].scope != m->node_scope[stmt])
        return OL_NO_INDEX;
    return d - 1;
}

/* How the uses of each loaded name's def look, found in one pass over the
 * file's identifiers (not one pass per load: a file of thousands of loads
 * stays linear). Per def: the uses after its statement that it reaches, and
 * whether any of them does more than restore state or read bookkeeping. */
typedef struct load_uses {
    uint32_t *uses;   /* per def */
    bool *other;      /* per def: a use that is neither */
    uint32_t *def_of_target; /* per node, see load_def */
} load_uses;

static void load_uses_build(ol_model *m, load_uses *lu)
{
    const ol_tree *t = m->tree;
    lu->uses = ol_xcalloc(m->defs.len + 1, sizeof(uint32_t));
    lu->other = ol_xcalloc(m->defs.len + 1, sizeof(bool));
    lu->def_of_target = ol_xcalloc(t->nodes.len + 1, sizeof(uint32_t));
    /* the last def of a target wins, as a scan of its chain would find */
    for (size_t d = 0; d < m->defs.len; d++)
        if (m->defs.items[d].target < t->nodes.len &&
            (!lu->def_of_target[m->defs.items[d].target] ||
             m->defs.items[d].scope == m->node_scope[m->defs.items[d].target]))
            lu->def_of_target[m->defs.items[d].target] = (uint32_t)d + 1;
    bool *is_load_def = ol_xcalloc(m->defs.len + 1, sizeof(bool));
    OL_VEC(ol_sym) names = {0};
    for (size_t i = 0; i < m->calls.len; i++) {
        uint32_t d = load_def(m, lu->def_of_target, m->calls.items[i].node);
        if (d == OL_NO_INDEX || d >= m->defs.len)
            continue;
        is_load_def[d] = true;
        ol_vec_push(&names, m->defs.items[d].name);
    }
    ol_sort(names.items, names.len, sizeof(ol_sym), ol_cmp_u32);
    for (ol_nid u = 0; names.len > 0 && u < t->nodes.len; u++) {
        if (ol_kind_of(t, u) != OL_N_identifier)
            continue;
        ol_sym name = ol_node_sym(m, u);
        if (!bsearch(&name, names.items, names.len, sizeof(ol_sym), ol_cmp_u32))
            continue;
        uint32_t defs[16];
        size_t n = ol_reaching_defs(m, m->node_scope[u], name, u, defs, 16);
        int benign = -1; /* computed once per use, when a load def is reached */
        for (size_t k = 0; k < n; k++) {
            uint32_t d = defs[k];
            if (d >= m->defs.len || !is_load_def[d] || u < m->subtree_end[m->defs.items[d].stmt])
                continue;
            if (benign < 0)
                benign = feeds_load_state_dict(m, u) || reads_metadata(m, u);
            lu->uses[d]++;
            if (!benign)
                lu->other[d] = true;
        }
    }
    free(is_load_def);
    ol_vec_free(&names);
}

/* Moving the load to the CPU changes nothing when the result only reaches
 * load_state_dict (directly, or through a name whose every use does so or
 * reads bookkeeping). Anything else (a pickled model, a tensor used as is)
 * would now live on the CPU: that fix is unsafe. */
static bool only_restores_state(ol_model *m, load_uses *lu, ol_nid call)
{
    if (feeds_load_state_dict(m, call))
        return true;
    if (!lu->uses)
        load_uses_build(m, lu);
    uint32_t def = load_def(m, lu->def_of_target, call);
    if (def == OL_NO_INDEX || def >= m->defs.len)
        return false;
    return lu->uses[def] > 0 && !lu->other[def];
}

static void check(ol_check *c)
{
    ol_model *m = c->model;
    const ol_tree *t = c->tree;
    load_uses lu = {NULL, NULL, NULL};
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
        ol_fix *fix = ol_fix_new(!only_restores_state(m, &lu, call->node), "Load onto the CPU");
        ol_fix_edit(fix, ol_node_at(t, last)->end, ol_node_at(t, last)->end, ", map_location=\"cpu\"");
        ol_diag_attach_fix(d, fix);
    }
    free(lu.uses);
    free(lu.other);
    free(lu.def_of_target);
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
    .fix = "Adds `map_location=\"cpu\"`. Safe where what is loaded only reaches `load_state_dict` (directly, "
           "or through a checkpoint dict whose other reads are bookkeeping such as `ckpt[\"epoch\"]`): it "
           "copies the values onto the model's own devices. Unsafe elsewhere: a pickled model or a tensor "
           "used as loaded would now be on the CPU.",
    .tags = "memory,checkpointing",
    .precision = "very-high",
    .check = check,
};
