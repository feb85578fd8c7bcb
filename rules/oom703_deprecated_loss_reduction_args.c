/*
 * OOM703 deprecated-loss-reduction-args: `size_average=` / `reduce=` in a
 * loss call (an nn.*Loss constructor or a torch.nn.functional loss). Both
 * were replaced by `reduction=` in PyTorch 0.4 and warn on every call.
 *
 * The fix follows PyTorch's own legacy table (torch.nn._reduction):
 *   reduce=False                      -> reduction="none" (size_average ignored)
 *   size_average=False, reduce unset/True -> reduction="sum"
 *   otherwise (True / unset)          -> reduction="mean"
 * It is offered when every legacy value is a literal True, False or None
 * and no `reduction=` is given too.
 */
#include <stdlib.h>
#include <string.h>

#include "rule.h"

static bool is_loss_call(ol_model *m, ol_nid call)
{
    const char *q = ol_qualname(m, ol_field(m->tree, call, OL_F_function));
    if (!q)
        return false;
    const char *last = strrchr(q, '.');
    last = last ? last + 1 : q;
    if (ol_str_has_prefix(q, "torch.nn.functional."))
        return ol_str_has_suffix(last, "_loss") || strcmp(last, "cross_entropy") == 0 ||
               strcmp(last, "binary_cross_entropy") == 0 || strcmp(last, "binary_cross_entropy_with_logits") == 0 ||
               strcmp(last, "kl_div") == 0;
    return (ol_str_has_prefix(q, "torch.nn.") || ol_str_has_prefix(q, "torch.nn.modules.loss.")) &&
           ol_str_has_suffix(last, "Loss");
}

/* -1 for a non-literal, else 0 False, 1 True, 2 None. */
static int literal(const ol_tree *t, ol_nid v)
{
    switch (ol_kind_of(t, ol_unparen(t, v))) {
    case OL_N_false:
        return 0;
    case OL_N_true:
        return 1;
    case OL_N_none:
        return 2;
    default:
        return -1;
    }
}

static void check(ol_check *c)
{
    ol_model *m = c->model;
    const ol_tree *t = c->tree;
    for (size_t i = 0; i < m->calls.len; i++) {
        const ol_call *call = &m->calls.items[i];
        ol_nid args = ol_field(t, call->node, OL_F_arguments);
        if (args == OL_NONE || ol_kind_of(t, args) != OL_N_argument_list)
            continue;
        ol_nid size_average = OL_NONE, reduce = OL_NONE, reduction = OL_NONE, first = OL_NONE;
        bool splat = false;
        for (ol_nid a = ol_first_named(t, args); a != OL_NONE; a = ol_next_named(t, a)) {
            if (ol_kind_of(t, a) == OL_N_dictionary_splat)
                splat = true;
            if (ol_kind_of(t, a) != OL_N_keyword_argument)
                continue;
            ol_nid name = ol_field(t, a, OL_F_name);
            if (ol_text_is(t, name, "size_average"))
                size_average = a;
            else if (ol_text_is(t, name, "reduce"))
                reduce = a;
            else if (ol_text_is(t, name, "reduction"))
                reduction = a;
            else
                continue;
            if ((a == size_average || a == reduce) && first == OL_NONE)
                first = a;
        }
        if (first == OL_NONE || !is_loss_call(m, call->node))
            continue;
        int sa = size_average != OL_NONE ? literal(t, ol_field(t, size_average, OL_F_value)) : 2;
        int rd = reduce != OL_NONE ? literal(t, ol_field(t, reduce, OL_F_value)) : 2;
        const char *value = NULL;
        if (sa >= 0 && rd >= 0)
            value = rd == 0 ? "none" : sa == 0 ? "sum" : "mean";
        char *args_text = ol_node_str(t, first);
        ol_diag *d = ol_report_node(c, first,
                                    "`%s` is a legacy loss argument, deprecated since PyTorch 0.4; it warns on "
                                    "every call",
                                    args_text);
        free(args_text);
        if (value)
            ol_diag_help(d, "use `reduction=\"%s\"`", value);
        else
            ol_diag_help(d, "use `reduction=` (\"mean\", \"sum\" or \"none\")");
        if (!value || reduction != OL_NONE || splat)
            continue;
        ol_fix *fix = ol_fix_new(false, "Replace the legacy arguments with reduction=");
        char *repl = ol_xasprintf("reduction=\"%s\"", value);
        ol_fix_edit(fix, ol_node_at(t, first)->start, ol_node_at(t, first)->end, repl);
        free(repl);
        /* the other legacy argument goes, with the comma before it */
        ol_nid other = first == size_average ? reduce : size_average;
        if (other != OL_NONE) {
            ol_nid prev = OL_NONE;
            for (ol_nid a = ol_first_named(t, args); a != OL_NONE && a != other; a = ol_next_named(t, a))
                prev = a;
            ol_fix_edit(fix, ol_node_at(t, prev)->end, ol_node_at(t, other)->end, "");
        }
        ol_diag_attach_fix(d, fix);
    }
}

const ol_rule ol_rule_oom703 = {
    .code = "OOM703",
    .name = "deprecated-loss-reduction-args",
    .severity = OL_SEV_WARNING,
    .in_tests = true,
    .summary = "A loss uses the legacy `size_average=` / `reduce=` arguments instead of `reduction=`.",
    .what = "Flags `size_average=` and `reduce=` in loss calls: `nn.*Loss(...)` constructors and "
            "`torch.nn.functional` losses (`F.nll_loss(..., size_average=False)`). Other functions with a "
            "`reduce=` argument (`scatter_reduce`, `dist.reduce`, `functools.reduce`) are not loss calls.",
    .why = "These arguments were replaced by `reduction=` in PyTorch 0.4. They still work through a "
           "compatibility table and emit a deprecation warning each time the loss is built or called, "
           "and their combined meaning is easy to misread: `reduce=False` returns one loss per element "
           "whatever `size_average` says, which is a batch-sized tensor where a scalar was expected.",
    .example = "test_loss += F.nll_loss(output, target, size_average=False).item()",
    .instead = "test_loss += F.nll_loss(output, target, reduction=\"sum\").item()",
    .fix = "Safe: replaces the legacy arguments with the equivalent `reduction=` from PyTorch's legacy "
           "table, when their values are literals and no `reduction=` is present.",
    .fix_safety = "Safe: PyTorch maps the legacy `size_average` / `reduce` pair to exactly this `reduction=` "
                  "value itself (its legacy table), so the loss computes the same thing.",
    .tags = "deprecation",
    .precision = "very-high",
    .check = check,
};
