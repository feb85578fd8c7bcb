/*
 * OOM503 backward-inside-autocast: `.backward()` (also
 * `scaler.scale(loss).backward()`) or `scaler.step(...)` inside an autocast
 * block, including `ctx = autocast(...)` / `with ctx:` and functions
 * decorated with autocast.
 *
 * PyTorch's AMP recipe exits autocast before backward: backward ops already
 * run in the dtype their forward ops chose, and running them under autocast
 * only adds casts (and memory for cast copies) while keeping the forward
 * block's tensors alive longer. The fix dedents the statements from the
 * first backward/step to the end of the block, so they run after it.
 */
#include <stdlib.h>
#include <string.h>

#include "facts.h"
#include "rule.h"

static bool is_scaler_step(ol_model *m, const ol_call *c)
{
    if (c->name != m->names.step || c->receiver == OL_NONE)
        return false;
    return ol_eval(m, c->receiver).kind == OL_V_SCALER;
}

/* The direct child of `block` that contains n, or OL_NONE. */
static ol_nid child_stmt(const ol_tree *t, ol_nid block, ol_nid n)
{
    for (ol_nid s = n; s != OL_NONE; s = ol_parent(t, s))
        if (ol_parent(t, s) == block)
            return s;
    return OL_NONE;
}

static uint32_t line_indent(const ol_source *src, uint32_t line, bool *blank)
{
    uint32_t len;
    const char *s = ol_source_line(src, line, &len);
    uint32_t i = 0;
    while (i < len && (s[i] == ' ' || s[i] == '\t'))
        i++;
    *blank = i == len;
    return i;
}

/* Does anything in [first, last] span lines in a way dedenting would change
 * (a multi-line string)? */
static bool has_multiline_string(const ol_tree *t, ol_nid first, ol_nid last)
{
    ol_nid end = last;
    const ol_source *src = t->src;
    for (ol_nid n = first; n < t->nodes.len && ol_node_at(t, n)->start < ol_node_at(t, end)->end; n++) {
        ol_kind k = ol_kind_of(t, n);
        if ((k == OL_N_string || k == OL_N_concatenated_string) &&
            ol_source_line_index(src, ol_node_at(t, n)->start) != ol_source_line_index(src, ol_node_at(t, n)->end))
            return true;
    }
    return false;
}

/* Moves the tail of the autocast block, from `first` on, out of it. */
static ol_fix *dedent_fix(ol_model *m, uint32_t ctx, ol_nid first)
{
    const ol_tree *t = m->tree;
    const ol_source *src = t->src;
    const ol_ctx *cx = &m->contexts.items[ctx];
    ol_nid block = cx->body;
    if (block == OL_NONE || ol_kind_of(t, cx->node) != OL_N_with_statement)
        return NULL;
    if (ol_first_named(t, block) == first)
        return NULL; /* the block would be left empty */
    ol_nid last = first;
    for (ol_nid s = first; s != OL_NONE; s = ol_next_named(t, s))
        last = s;
    if (has_multiline_string(t, first, last))
        return NULL;
    bool blank;
    uint32_t outer = line_indent(src, ol_source_line_index(src, ol_node_at(t, cx->node)->start), &blank);
    uint32_t first_line = ol_source_line_index(src, ol_node_at(t, first)->start);
    uint32_t last_line = ol_source_line_index(src, ol_node_at(t, last)->end);
    uint32_t inner = line_indent(src, first_line, &blank);
    if (inner <= outer)
        return NULL;
    uint32_t cut = inner - outer;
    bool unsafe = false;
    size_t cf, ce = ol_calls_in(m, first, &cf);
    for (ol_nid s = first; s != OL_NONE; s = ol_next_named(t, s)) {
        ce = ol_calls_in(m, s, &cf);
        for (size_t i = cf; i < ce; i++)
            if (ol_is_forward_call(m, (uint32_t)i))
                unsafe = true; /* a forward pass would leave autocast too */
    }
    ol_fix *fix = ol_fix_new(false, "Move backward and the optimizer step out of the autocast block");
    if (unsafe)
        ol_fix_unsafe_because(fix, "the statements moved out of the block also run a model forward pass, which "
                                   "would then run in full precision: slower, and with other numbers");
    for (uint32_t line = first_line; line <= last_line; line++) {
        uint32_t ind = line_indent(src, line, &blank);
        if (blank)
            continue;
        if (ind < inner) {
            /* a comment or continuation indented less: leave it be only if it
             * is a comment; anything else means we misread the block */
            uint32_t len;
            const char *s = ol_source_line(src, line, &len);
            if (ind < len && s[ind] == '#')
                continue;
            ol_fix_free(fix);
            return NULL;
        }
        uint32_t start = src->line_starts[line];
        ol_fix_edit(fix, start, start + cut, "");
    }
    return fix;
}

/* The `enabled=` expression of the autocast call a with item holds, or OL_NONE. */
static ol_nid enabled_expr(ol_model *m, const ol_ctx *cx)
{
    const ol_tree *t = m->tree;
    if (cx->item == OL_NONE)
        return OL_NONE;
    ol_nid v = ol_unparen(t, ol_kind_of(t, cx->item) == OL_N_with_item ? ol_field(t, cx->item, OL_F_value) : cx->item);
    if (ol_kind_of(t, v) == OL_N_as_pattern)
        v = ol_unparen(t, ol_first_named(t, v));
    return ol_kind_of(t, v) == OL_N_call ? ol_call_arg(m, v, -1, "enabled") : OL_NONE;
}

/* Is n, inside the block, on a path where the block's `enabled=` flag is
 * false: the `else` of `if <flag>:`, or the body of `if not <flag>:`? There
 * autocast is off, and backward runs as it would outside the block. */
static bool where_autocast_is_off(ol_model *m, const ol_ctx *cx, ol_nid n)
{
    const ol_tree *t = m->tree;
    ol_nid flag = enabled_expr(m, cx);
    if (flag == OL_NONE)
        return false;
    for (ol_nid a = n, p = ol_parent(t, n); p != OL_NONE && p != cx->node; a = p, p = ol_parent(t, p)) {
        if (ol_kind_of(t, p) == OL_N_if_statement && ol_field(t, p, OL_F_consequence) == a) {
            ol_nid cond = ol_unparen(t, ol_field(t, p, OL_F_condition));
            if (ol_kind_of(t, cond) == OL_N_not_operator &&
                ol_same_text(t, ol_unparen(t, ol_field(t, cond, OL_F_argument)), flag))
                return true;
        }
        if (ol_kind_of(t, p) == OL_N_else_clause) {
            ol_nid ifs = ol_parent(t, p);
            if (ifs != OL_NONE && ol_kind_of(t, ifs) == OL_N_if_statement &&
                ol_same_text(t, ol_unparen(t, ol_field(t, ifs, OL_F_condition)), flag))
                return true;
        }
    }
    return false;
}

static void check(ol_check *c)
{
    ol_model *m = c->model;
    const ol_tree *t = c->tree;
    /* one fix per block: from the first offending statement to the end */
    for (size_t i = 0; i < m->calls.len; i++) {
        const ol_call *call = &m->calls.items[i];
        bool backward = ol_is_backward_call(m, (uint32_t)i);
        bool step = !backward && is_scaler_step(m, call);
        if (!backward && !step)
            continue;
        uint32_t ctx = ol_autocast_at(m, call->node);
        if (ctx == OL_NO_INDEX)
            continue;
        const ol_ctx *cx = &m->contexts.items[ctx];
        if ((cx->autocast & OL_AC_DISABLED) || where_autocast_is_off(m, cx, call->node))
            continue;
        /* code in a function defined inside the block does not run there */
        if (ol_function_of(m, call->node) != ol_function_of(m, cx->node) &&
            ol_kind_of(t, cx->node) == OL_N_with_statement)
            continue;
        char *text = ol_node_str(t, call->node);
        if (strlen(text) > 48)
            strcpy(text + 45, "...");
        ol_diag *d = ol_report_node(c, call->node,
                                    backward ? "`%s` runs inside an autocast block: backward (and the optimizer "
                                               "step) should come after the block exits"
                                             : "`%s` steps the optimizer inside an autocast block: it should "
                                               "come after the block exits",
                                    text);
        free(text);
        ol_diag_help(d, "end the `with autocast(...)` block after the loss is computed and call backward, "
                        "`scaler.step` and `scaler.update` outside it");
        /* the first offending statement of this block */
        ol_nid block = cx->body;
        ol_nid first = OL_NONE;
        if (block != OL_NONE) {
            size_t bf, be = ol_calls_in(m, block, &bf);
            for (size_t k = bf; k < be && first == OL_NONE; k++) {
                const ol_call *other = &m->calls.items[k];
                if (ol_autocast_at(m, other->node) != ctx)
                    continue;
                if (ol_is_backward_call(m, (uint32_t)k) || is_scaler_step(m, other))
                    first = child_stmt(t, block, other->node);
            }
        }
        if (first != OL_NONE)
            ol_diag_attach_fix(d, dedent_fix(m, ctx, first));
    }
}

const ol_rule ol_rule_oom503 = {
    .code = "OOM503",
    .name = "backward-inside-autocast",
    .severity = OL_SEV_WARNING,
    .device_memory = true,
    .summary = "`backward()` or `scaler.step()` runs inside an autocast block.",
    .what = "Flags `.backward()`, `scaler.scale(loss).backward()` and `scaler.step(...)` inside a "
            "`with autocast(...)` block (also through `ctx = torch.autocast(...)` / `with ctx:`, and in "
            "functions decorated with autocast), unless the block is disabled with `enabled=False`.",
    .why = "Autocast is meant for the forward pass and the loss. Backward ops already run in the dtype "
           "their forward ops chose, so running backward under autocast only adds casts and the memory "
           "of cast copies, and keeps the block's intermediates alive longer; PyTorch's AMP examples "
           "exit the block before calling backward.",
    .example = "with torch.autocast(\"cuda\"):\n"
               "    out = model(x)\n"
               "    loss = criterion(out, y)\n"
               "    scaler.scale(loss).backward()\n"
               "    scaler.step(optimizer)\n"
               "    scaler.update()",
    .instead = "with torch.autocast(\"cuda\"):\n"
               "    out = model(x)\n"
               "    loss = criterion(out, y)\n"
               "scaler.scale(loss).backward()\n"
               "scaler.step(optimizer)\n"
               "scaler.update()",
    .fix = "Safe: dedents the statements from the first backward/step to the end of the block, so they "
           "run right after it. Unsafe when those statements also run a model forward pass. No fix when "
           "the block would be left empty or contains multi-line strings.",
    .fix_safety = "Safe when the statements moved out of the block are backward, the optimizer step and "
                  "other bookkeeping: autocast does not apply to backward anyway (its ops run in the dtypes "
                  "of the forward), so only the memory the block kept changes. Unsafe when they also run a "
                  "forward pass, which would leave autocast too and run in full precision.",
    .tags = "mixed-precision,memory",
    .precision = "very-high",
    .check = check,
};
