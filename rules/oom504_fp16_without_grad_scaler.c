/*
 * OOM504 fp16-without-grad-scaler: a float16 autocast region (explicit
 * float16, or CUDA autocast's default) whose loss is backpropagated, in a
 * file with no GradScaler. Small float16 gradients underflow to zero and
 * training silently stalls; GradScaler scales the loss to keep them
 * representable. bfloat16 needs no scaler; CPU autocast defaults to
 * bfloat16; autocast under no_grad is inference; a dtype held in a variable
 * is unknown, and unknown is not flagged.
 */
#include <ctype.h>
#include <string.h>

#include "facts.h"
#include "rule.h"

/* Any sign of loss scaling in the file: GradScaler, a `scaler` of any kind,
 * or a framework that scales (apex amp, Accelerate, Lightning, DeepSpeed). */
static bool file_scales(ol_model *m)
{
    const ol_tree *t = m->tree;
    for (ol_nid n = 0; n < t->nodes.len; n++) {
        if (ol_kind_of(t, n) != OL_N_identifier)
            continue;
        uint32_t len;
        const char *s = ol_text(t, n, &len);
        for (uint32_t i = 0; i + 6 <= len; i++)
            if (ol_mem_ieq(s + i, "scaler", 6))
                return true;
    }
    static const char *const frameworks[] = {"apex", "accelerate", "lightning", "pytorch_lightning", "deepspeed", NULL};
    for (size_t i = 0; i < m->imports.len; i++) {
        const char *q = ol_sym_str(m, m->imports.items[i].qual);
        for (const char *const *f = frameworks; *f; f++) {
            size_t n = strlen(*f);
            if (strncmp(q, *f, n) == 0 && (q[n] == '\0' || q[n] == '.'))
                return true;
        }
    }
    return false;
}

/* Is there a backward in the function (or module level) around the
 * region, or in the loop the region sits in? */
static bool backward_near(ol_model *m, ol_nid region)
{
    ol_nid scope_node = OL_NONE;
    uint32_t fn = ol_function_of(m, region);
    if (ol_kind_of(m->tree, region) == OL_N_block)
        scope_node = region;
    else if (m->node_loop[region] != OL_NO_INDEX)
        scope_node = m->loops.items[m->node_loop[region]].node;
    else if (fn != OL_NO_INDEX)
        scope_node = ol_field(m->tree, m->functions.items[fn].node, OL_F_body);
    else
        scope_node = 0;
    /* the model keeps each region's events: many regions share one scope */
    return scope_node != OL_NONE && ol_events_of(m, scope_node)->has_backward;
}

static void check(ol_check *c)
{
    ol_model *m = c->model;
    int scales = -1;
    for (size_t ci = 0; ci < m->contexts.len; ci++) {
        const ol_ctx *x = &m->contexts.items[ci];
        if (x->kind != OL_CTX_AUTOCAST)
            continue;
        uint16_t a = x->autocast;
        if (!(a & OL_AC_FP16) || (a & (OL_AC_DTYPE_UNKNOWN | OL_AC_BF16 | OL_AC_DISABLED | OL_AC_FRAMEWORK)) ||
            !(a & OL_AC_DEV_CUDA))
            continue;
        /* a decorated function: its own body is where the backward would be */
        ol_nid region = ol_kind_of(c->tree, x->node) == OL_N_with_statement ? x->node : x->body;
        /* grad mode inside the block: `with torch.no_grad(), torch.autocast(...)` is inference */
        ol_nid inside = x->body != OL_NONE ? x->body : x->node;
        if (region == OL_NONE || !ol_grad_on(m, inside, NULL) || !backward_near(m, region))
            continue;
        if (scales < 0)
            scales = file_scales(m);
        if (scales)
            break;
        ol_nid at = x->item != OL_NONE ? x->item : x->node;
        ol_diag *d = ol_report_node(c, at,
                                    "float16 autocast with backward but no GradScaler: small gradients underflow to "
                                    "zero in float16 and training silently stalls");
        ol_diag_help(d, "scale the loss with `scaler = torch.amp.GradScaler(\"cuda\")` "
                        "(`scaler.scale(loss).backward(); scaler.step(optimizer); scaler.update()`), or use "
                        "`dtype=torch.bfloat16`, which needs no scaling");
    }
}

const ol_rule ol_rule_oom504 = {
    .code = "OOM504",
    .name = "fp16-without-grad-scaler",
    .severity = OL_SEV_WARNING,
    .device_memory = true,
    .summary = "float16 autocast is used for training without a GradScaler.",
    .what = "Flags CUDA autocast regions in float16 (given explicitly, or CUDA's default) whose loss is "
            "backpropagated, in files with no GradScaler or loss-scaling framework. bfloat16, CPU "
            "autocast, autocast under no_grad, and a dtype held in a variable are not flagged.",
    .why = "float16 has a narrow exponent range: gradients below about 6e-8 become zero. Without loss "
           "scaling many of them do, so parts of the model stop learning while nothing errors. "
           "`GradScaler` multiplies the loss before backward and unscales before the step, skipping "
           "steps that overflow. bfloat16 keeps float32's range and needs none of this.",
    .example = "with torch.autocast(\"cuda\"):\n"
               "    loss = criterion(model(x), y)\n"
               "loss.backward()\n"
               "optimizer.step()",
    .instead = "scaler = torch.amp.GradScaler(\"cuda\")\n"
               "with torch.autocast(\"cuda\"):\n"
               "    loss = criterion(model(x), y)\n"
               "scaler.scale(loss).backward()\n"
               "scaler.step(optimizer)\n"
               "scaler.update()",
    .fix = NULL,
    .tags = "mixed-precision,correctness",
    .precision = "high",
    .check = check,
};
