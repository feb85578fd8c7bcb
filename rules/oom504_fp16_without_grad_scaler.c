/*
 * OOM504 fp16-without-grad-scaler: a float16 autocast region (explicit
 * float16, or CUDA autocast's default) whose loss is backpropagated, in a
 * file with no GradScaler. Small float16 gradients underflow to zero and
 * training silently stalls; GradScaler scales the loss to keep them
 * representable. bfloat16 needs no scaler; CPU autocast defaults to
 * bfloat16; autocast under no_grad is inference; a dtype held in a variable
 * is unknown, and unknown is not flagged. A device type held in a name or
 * an attribute (`torch.autocast(self.device_type, dtype=torch.float16)`)
 * counts as CUDA when a binding the file shows names it (`self.device_type
 * = "cuda"` in `__init__`, or the type of a device the code chooses).
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

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

/* Where a device type held in a name or an attribute can name CUDA. */
typedef enum dev_answer { DEV_UNKNOWN, DEV_NOT_CUDA, DEV_CUDA } dev_answer;

static dev_answer device_type_of(ol_model *m, ol_nid e, ol_nid *where, int depth);

/* Joins the answers of a name's bindings: CUDA when one of them may name
 * it; not CUDA when every one is known and none does. */
static dev_answer join(dev_answer a, dev_answer b)
{
    if (a == DEV_CUDA || b == DEV_CUDA)
        return DEV_CUDA;
    return a == DEV_UNKNOWN || b == DEV_UNKNOWN ? DEV_UNKNOWN : DEV_NOT_CUDA;
}

/* The bindings of `self.<name>` in the methods of class cls. */
static dev_answer attribute_device_type(ol_model *m, uint32_t cls, ol_sym name, ol_nid *where, int depth)
{
    const ol_class *k = &m->classes.items[cls];
    dev_answer out = DEV_UNKNOWN;
    bool any = false;
    for (size_t i = 0; i < k->attr_defs.len; i++) {
        const ol_def *d = &m->defs.items[k->attr_defs.items[i]];
        if (d->name != name)
            continue;
        ol_nid at = OL_NONE;
        dev_answer a = d->kind == OL_DEF_ASSIGN && d->path_len == 0 ? device_type_of(m, d->value, &at, depth + 1)
                                                                     : DEV_UNKNOWN;
        out = any ? join(out, a) : a;
        any = true;
        if (a == DEV_CUDA && *where == OL_NONE)
            *where = at != OL_NONE ? at : d->value;
    }
    return out;
}

/* Can the device type e names be CUDA: a string, a conditional with a CUDA
 * branch, the type of a device the code chooses (`device.type`), or a name
 * or `self` attribute every binding of which the file shows? *where is the
 * binding that names CUDA. */
static dev_answer device_type_of(ol_model *m, ol_nid e, ol_nid *where, int depth)
{
    const ol_tree *t = m->tree;
    e = ol_unparen(t, e);
    if (e == OL_NONE || depth > 4)
        return DEV_UNKNOWN;
    const char *s;
    uint32_t len;
    if (ol_string_value(t, e, &s, &len)) {
        if (len >= 4 && memcmp(s, "cuda", 4) == 0) {
            *where = e;
            return DEV_CUDA;
        }
        return DEV_NOT_CUDA;
    }
    ol_kind k = ol_kind_of(t, e);
    if (k == OL_N_conditional_expression)
        return join(device_type_of(m, ol_named_child(t, e, 0), where, depth + 1),
                    device_type_of(m, ol_named_child(t, e, 2), where, depth + 1));
    if (k == OL_N_attribute) {
        ol_nid obj = ol_field(t, e, OL_F_object);
        ol_nid attr = ol_field(t, e, OL_F_attribute);
        if (ol_text_is(t, attr, "type")) {
            /* `device.type`: the type of a device the code chooses */
            ol_val v = ol_eval(m, obj);
            if (v.kind == OL_V_DEVICE || ol_names_device_variable(m, obj)) {
                *where = e;
                return DEV_CUDA;
            }
            return DEV_UNKNOWN;
        }
        uint32_t fi = ol_function_of(m, e);
        if (ol_kind_of(t, obj) != OL_N_identifier || !ol_text_is(t, obj, "self") || fi == OL_NO_INDEX ||
            m->functions.items[fi].cls == OL_NO_INDEX)
            return DEV_UNKNOWN;
        return attribute_device_type(m, m->functions.items[fi].cls, ol_node_sym(m, attr), where, depth);
    }
    if (k != OL_N_identifier)
        return DEV_UNKNOWN;
    uint32_t defs[8];
    size_t n = ol_reaching_defs(m, m->node_scope[e], ol_node_sym(m, e), e, defs, 8);
    if (n == 0 || n > 8)
        return DEV_UNKNOWN;
    dev_answer out = DEV_NOT_CUDA;
    for (size_t i = 0; i < n; i++) {
        const ol_def *d = &m->defs.items[defs[i]];
        bool plain = (d->kind == OL_DEF_ASSIGN && d->path_len == 0) || (d->kind == OL_DEF_PARAM && d->value != OL_NONE);
        ol_nid at = OL_NONE;
        dev_answer a = plain ? device_type_of(m, d->value, &at, depth + 1) : DEV_UNKNOWN;
        if (d->kind == OL_DEF_PARAM && a != DEV_CUDA)
            a = DEV_UNKNOWN; /* a caller may pass anything */
        if (a == DEV_CUDA && *where == OL_NONE)
            *where = at != OL_NONE ? at : d->value;
        out = join(out, a);
    }
    return out;
}

/* The autocast call of a with item (`with torch.autocast(...) as ac:`). */
static ol_nid autocast_call(const ol_tree *t, ol_nid item)
{
    if (item == OL_NONE || ol_kind_of(t, item) != OL_N_with_item)
        return OL_NONE;
    ol_nid v = ol_unparen(t, ol_field(t, item, OL_F_value));
    if (ol_kind_of(t, v) == OL_N_as_pattern)
        v = ol_unparen(t, ol_first_named(t, v));
    return ol_kind_of(t, v) == OL_N_call ? v : OL_NONE;
}

/* An fp16 autocast whose device type is held in a name or an attribute
 * that may name CUDA (device_type_of): `torch.autocast(self.device_type,
 * dtype=torch.float16)` with `self.device_type = "cuda"`. The evaluator
 * leaves such a device unknown; the float16 it then needs is given, or is
 * CUDA's default when no dtype is. */
static bool cuda_in_variable(ol_model *m, const ol_ctx *x, ol_reasons *why)
{
    static const char *const quals[] = {"torch.autocast", "torch.amp.autocast", "torch.amp.autocast_mode.autocast",
                                        NULL};
    const ol_tree *t = m->tree;
    uint16_t a = x->autocast;
    if (!(a & OL_AC_DEV_UNKNOWN) || (a & (OL_AC_BF16 | OL_AC_DISABLED | OL_AC_FRAMEWORK)))
        return false;
    ol_nid call = autocast_call(t, x->item);
    if (call == OL_NONE || !ol_call_is(m, call, quals))
        return false;
    ol_nid dtype = ol_call_arg(m, call, 1, "dtype");
    if (dtype != OL_NONE ? !(a & OL_AC_FP16) || (a & OL_AC_DTYPE_UNKNOWN) : false)
        return false;
    ol_nid dev = ol_call_arg(m, call, 0, "device_type");
    ol_nid where = OL_NONE;
    if (dev == OL_NONE || device_type_of(m, dev, &where, 0) != DEV_CUDA)
        return false;
    char *name = ol_node_str_short(t, dev);
    char *value = where != OL_NONE ? ol_node_str_short(t, where) : NULL;
    const char *dflt = dtype == OL_NONE ? ", where autocast defaults to float16" : "";
    if (where != OL_NONE && ol_kind_of(t, where) == OL_N_attribute)
        ol_because(why, m, where, "`%s` takes the type of a device the code chooses, CUDA on a GPU: `%s`%s", name,
                   value, dflt);
    else
        ol_because(why, m, where != OL_NONE ? where : dev, "`%s` names CUDA: `%s`%s", name, value ? value : name,
                   dflt);
    free(name);
    free(value);
    return true;
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
        ol_reasons why = {0};
        if ((!(a & OL_AC_FP16) || (a & (OL_AC_DTYPE_UNKNOWN | OL_AC_BF16 | OL_AC_DISABLED | OL_AC_FRAMEWORK)) ||
             !(a & OL_AC_DEV_CUDA)) &&
            !cuda_in_variable(m, x, &why))
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
        ol_diag_because(d, m, &why);
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
            "autocast, autocast under no_grad, and a dtype held in a variable are not flagged. A device type held "
            "in a name or an attribute counts when a binding the file shows names CUDA (`self.device_type = "
            "\"cuda\"`, `\"cuda\" if ... else \"cpu\"`, the type of a device the code chooses).",
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
