/*
 * ask_grad.c - is autograd on here? (ask.h)
 *
 * The file decides first (grad.c: the `with` blocks and `set_grad_enabled`
 * statements around the node, its function's decorators, framework hooks,
 * the function's call sites in the file). Where that leaves the answer to
 * the function's callers elsewhere, the run decides (summary.h's call
 * records): a function that nothing in its file calls runs without
 * autograd when every call of it in the run has autograd off, and one that
 * its own file only calls under no_grad still runs with autograd on where
 * another file calls it with it on (a base trainer's validate() called by a
 * subclass's training loop). The run's answer is per function, asked once.
 */
#include "ask_internal.h"
#include "facts.h"

#include <stdlib.h>
#include <string.h>

#include "summary.h"

/* The grad mode the run gives function fi, with a caller as the reason:
 * 1 on, 2 off, 3 the run does not say (linted alone, or nobody calls it). */
static uint8_t run_mode(ol_model *m, uint32_t fi)
{
    ol_door *d = ol_door_of(m);
    ol_door_grad *g = &d->run_grad[fi];
    if (g->state)
        return g->state;
    size_t on = 0, offs = 0;
    ol_run_site sites[3];
    bool known = ol_run_callers_at(m, fi, &on, &offs, sites);
    char *label = ol_door_function_label(m, fi);
    if (!known || (on == 0 && offs == 0)) {
        g->state = 3;
    } else if (on > 0) {
        g->state = 1;
        ol_reasons_add(&g->why, OL_NONE, ol_door_path(m, sites[0].path), sites[0].line, true,
                       ol_door_printf(m, "%s is called with autograd on here%s", label,
                                      sites[0].through ? " (and by this file's callers in turn)" : ""));
    } else {
        g->state = 2;
        ol_reasons_add(&g->why, OL_NONE, ol_door_path(m, sites[1].path), sites[1].line, true,
                       ol_door_printf(m, "%s is called here with autograd off%s", label,
                                      offs > 1 ? ", as everywhere in the run" : ", its only caller in the run"));
    }
    free(label);
    return g->state;
}

/* The reason the file gives for its answer at n. */
static void local_reason(ol_model *m, const ol_grad_local *loc, ol_reasons *why)
{
    if (!why)
        return;
    const ol_tree *t = m->tree;
    char *label = loc->function != OL_NO_INDEX ? ol_door_function_label(m, loc->function) : NULL;
    switch (loc->cause) {
    case OL_GC_CONTEXT:
    case OL_GC_STATEMENT:
    case OL_GC_DECORATOR: {
        char *text = ol_node_str_short(t, loc->node);
        ol_reasons_add(why, loc->node, NULL, 0, false,
                       ol_door_printf(m, "`%s%s` turns autograd %s here", loc->cause == OL_GC_DECORATOR ? "@" : "",
                                      text, loc->off ? "off" : "on"));
        free(text);
        break;
    }
    case OL_GC_HOOK:
        ol_reasons_add(why, loc->node, NULL, 0, false,
                       ol_door_printf(m, "the framework runs %s without autograd", label ? label : "this hook"));
        break;
    case OL_GC_CALLERS: {
        uint32_t caller = ol_function_of(m, loc->node);
        char *who = caller != OL_NO_INDEX ? ol_door_function_label(m, caller) : ol_xstrdup("module code");
        ol_reasons_add(why, loc->node, NULL, 0, true,
                       loc->off ? ol_door_printf(m, "%s is only called with autograd off, as here from %s",
                                                 label ? label : "it", who)
                                : ol_door_printf(m, "%s is called with autograd on here, from %s", label ? label : "it",
                                                 who));
        free(who);
        break;
    }
    case OL_GC_OVERRIDE:
        ol_reasons_add(why, loc->node, NULL, 0, true,
                       ol_door_printf(m, "a base class calls %s through `self` here, with autograd %s",
                                      label ? label : "it", loc->off ? "off" : "on"));
        break;
    case OL_GC_GLOBAL:
        break;
    case OL_GC_MODULE:
    case OL_GC_NONE_CALLED:
        break;
    }
    free(label);
}

static bool grad_on(ol_model *m, ol_nid n, ol_reasons *why)
{
    if (n == OL_NONE)
        return true;
    ol_grad_local loc;
    ol_grad_explain(m, n, &loc);
    uint32_t root = ol_grad_root(m, n);
    bool off = loc.off;
    if (off && (root == OL_NO_INDEX || m->functions.items[root].callsites.len == 0)) {
        local_reason(m, &loc, why);
        return false;
    }
    if (!off && root == OL_NO_INDEX) {
        local_reason(m, &loc, why);
        return true;
    }
    /* the function's callers in the run decide: when the file turns autograd
     * off (all its own calls are under no_grad), only a call with autograd
     * on elsewhere turns it back on; when nothing here calls the function,
     * every call of the run with autograd off turns it off */
    if (m->functions.items[root].callsites.len == 0) {
        uint8_t st = run_mode(m, root);
        if (why)
            ol_reasons_merge(why, &ol_door_of(m)->run_grad[root].why);
        return st != 2;
    }
    if (off) {
        uint8_t st = run_mode(m, root);
        if (st == 1) {
            if (why)
                ol_reasons_merge(why, &ol_door_of(m)->run_grad[root].why);
            return true;
        }
        local_reason(m, &loc, why);
        return false;
    }
    /* on here, through callers of the file that nothing here calls (a
     * sampler's sample() calling the method around the forward): off when
     * every path up ends at functions the run only calls with autograd off */
    uint32_t *tops;
    size_t ntops;
    bool guarded = ol_grad_tops(m, root, &tops, &ntops);
    ol_reasons run_why = {0};
    for (size_t k = 0; k < ntops && guarded; k++) {
        guarded = run_mode(m, tops[k]) == 2;
        ol_reasons_merge(&run_why, &ol_door_of(m)->run_grad[tops[k]].why);
    }
    free(tops);
    if (guarded) {
        ol_reasons_merge(why, &run_why);
        return false;
    }
    local_reason(m, &loc, why);
    return true;
}

/* ---- does this code compute gradients? ------------------------------------------------ */

static bool body_computes_gradients(ol_model *m, uint32_t fi, int depth);

/* The call itself, or a function of the file it runs (`self.cac_grad(...)`
 * that calls torch.autograd.grad), or a function of another file whose
 * summary says it backwards or steps. *via: the function, when through one. */
static bool call_computes_gradients(ol_model *m, uint32_t ci, int depth, uint32_t *via)
{
    if (ol_call_differentiates(m, ci))
        return true;
    const uint32_t *called;
    size_t n = depth < 3 ? ol_call_functions(m, ci, &called) : 0;
    for (size_t k = 0; k < n; k++) {
        if (body_computes_gradients(m, called[k], depth + 1)) {
            if (via)
                *via = called[k];
            return true;
        }
    }
    if (m->links && m->links->call_facts && (m->links->call_facts(m->links, m, ci) & (OL_FN_BACKWARD | OL_FN_STEP)))
        return true;
    return false;
}

static bool body_computes_gradients(ol_model *m, uint32_t fi, int depth)
{
    ol_door *d = ol_door_of(m);
    unsigned state = (d->kind[fi] >> OL_DOOR_GRADS_SHIFT) & 3u;
    if (state == 1)
        return false; /* a cycle: the other calls decide */
    if (state)
        return state == 3;
    d->kind[fi] = (uint8_t)((d->kind[fi] & ~(3u << OL_DOOR_GRADS_SHIFT)) | (1u << OL_DOOR_GRADS_SHIFT));
    ol_nid body = ol_field(m->tree, m->functions.items[fi].node, OL_F_body);
    bool yes = false;
    size_t first = 0, end = body != OL_NONE ? ol_calls_in(m, body, &first) : 0;
    for (size_t i = first; i < end && !yes; i++)
        if (ol_function_of(m, m->calls.items[i].node) == fi)
            yes = call_computes_gradients(m, (uint32_t)i, depth, NULL);
    d->kind[fi] = (uint8_t)((d->kind[fi] & ~(3u << OL_DOOR_GRADS_SHIFT)) | ((yes ? 3u : 2u) << OL_DOOR_GRADS_SHIFT));
    return yes;
}

bool ol_call_computes_gradients(ol_model *m, uint32_t ci, ol_reasons *why)
{
    uint32_t via = OL_NO_INDEX;
    if (!call_computes_gradients(m, ci, 0, &via))
        return false;
    if (why) {
        ol_nid node = m->calls.items[ci].node;
        char *text = ol_node_str_short(m->tree, node);
        char *label = via != OL_NO_INDEX ? ol_door_function_label(m, via) : NULL;
        ol_reasons_add(why, node, NULL, 0, false,
                       label ? ol_door_printf(m, "`%s` computes gradients, through %s", text, label)
                             : ol_door_printf(m, "`%s` computes gradients", text));
        free(label);
        free(text);
    }
    return true;
}

static ol_nid gradient_call_in(ol_model *m, ol_nid region, uint32_t fn, ol_nid after, ol_nid before,
                               ol_reasons *why);

ol_nid ol_gradient_call_in(ol_model *m, ol_nid region, ol_nid after, ol_nid before, ol_reasons *why)
{
    if (region == OL_NONE)
        return OL_NONE;
    uint32_t fn = ol_function_of(m, region);
    /* a function's whole body (or the whole module) is asked about once per
     * site of it by some rules: its answer is kept (a function of
     * thousands of statements made each of its sites scan it all) */
    uint32_t *kept = NULL;
    if (after == OL_NONE && before == OL_NONE &&
        (fn == OL_NO_INDEX ? region == 0
                           : ol_field(m->tree, m->functions.items[fn].node, OL_F_body) == region)) {
        ol_door *d = ol_door_of(m);
        kept = &d->first_grad[fn == OL_NO_INDEX ? m->functions.len : fn];
        if (*kept == 1)
            return OL_NONE;
        if (*kept) {
            ol_nid found = *kept - 2;
            if (why) /* the reasons of the call that answered */
                ol_call_computes_gradients(m, ol_call_at(m, found), why);
            return found;
        }
    }
    ol_nid found = gradient_call_in(m, region, fn, after, before, why);
    if (kept)
        *kept = found == OL_NONE ? 1 : found + 2;
    return found;
}

static ol_nid gradient_call_in(ol_model *m, ol_nid region, uint32_t fn, ol_nid after, ol_nid before,
                               ol_reasons *why)
{
    size_t first, end = ol_calls_in(m, region, &first);
    /* from the first call after `after`, up to `before` */
    if (after != OL_NONE)
        first = ol_calls_from(m, after + 1, first, end);
    for (size_t i = first; i < end; i++) {
        const ol_call *c = &m->calls.items[i];
        if (before != OL_NONE && c->node >= before)
            break;
        /* code of a nested def or lambda runs when it is called */
        if (ol_function_of(m, c->node) != fn)
            continue;
        if (ol_call_computes_gradients(m, (uint32_t)i, why))
            return c->node;
    }
    return OL_NONE;
}

/* ---- modules without parameters ------------------------------------------------------ */

/* torch.nn modules that hold no parameter (with their default arguments):
 * applied to a tensor they extend its graph, if it has one, but a graph
 * starts only at a model's parameters. */
static const char *const PARAMETER_FREE[] = {
    "ReLU", "ReLU6", "LeakyReLU", "RReLU", "ELU", "SELU", "CELU", "GELU", "SiLU", "Mish", "Sigmoid", "Tanh",
    "Softmax", "Softmax2d", "LogSoftmax", "Softmin", "Softplus", "Softsign", "Hardtanh", "Hardsigmoid",
    "Hardswish", "Hardshrink", "Softshrink", "Tanhshrink", "Threshold", "LogSigmoid", "GLU", "Dropout",
    "Dropout1d", "Dropout2d", "Dropout3d", "AlphaDropout", "FeatureAlphaDropout", "MaxPool1d", "MaxPool2d",
    "MaxPool3d", "AvgPool1d", "AvgPool2d", "AvgPool3d", "LPPool1d", "LPPool2d", "LPPool3d", "AdaptiveMaxPool1d",
    "AdaptiveMaxPool2d", "AdaptiveMaxPool3d", "AdaptiveAvgPool1d", "AdaptiveAvgPool2d", "AdaptiveAvgPool3d",
    "FractionalMaxPool2d", "FractionalMaxPool3d", "MaxUnpool1d", "MaxUnpool2d", "MaxUnpool3d", "Flatten",
    "Unflatten", "Identity", "Upsample", "UpsamplingNearest2d", "UpsamplingBilinear2d", "PixelShuffle",
    "PixelUnshuffle", "ChannelShuffle", "Fold", "Unfold", "LocalResponseNorm", "ZeroPad1d", "ZeroPad2d",
    "ZeroPad3d", "ConstantPad1d", "ConstantPad2d", "ConstantPad3d", "ReflectionPad1d", "ReflectionPad2d",
    "ReflectionPad3d", "ReplicationPad1d", "ReplicationPad2d", "ReplicationPad3d", "CircularPad1d",
    "CircularPad2d", "CircularPad3d", "CosineSimilarity", "PairwiseDistance", NULL};

/* `torch.nn.Softmax`, `torch.nn.modules.activation.ReLU`: a parameter-free class of torch.nn. */
static bool parameter_free_qual(const char *q)
{
    if (!q || !ol_str_has_prefix(q, "torch.nn."))
        return false;
    const char *last = strrchr(q, '.') + 1;
    if (last != q + strlen("torch.nn.") && !ol_str_has_prefix(q, "torch.nn.modules."))
        return false;
    for (const char *const *w = PARAMETER_FREE; *w; w++)
        if (strcmp(last, *w) == 0)
            return true;
    return false;
}

/* Image transforms and augmentations of libraries that make them modules
 * with no learned parameter (`kornia.augmentation.Normalize`,
 * `torchvision.transforms.Resize`). */
static bool augmentation_qual(const char *q)
{
    return q && (ol_str_has_prefix(q, "kornia.augmentation.") || ol_str_has_prefix(q, "torchvision.transforms."));
}

static bool class_without_parameters(ol_model *m, uint32_t ci, int depth);
static bool runs_no_parameters(ol_model *m, const ol_call *call);

/* Does the call build a module with no parameter: a parameter-free torch.nn
 * class, or a class of this file that makes none (also through `.eval()`,
 * `.to(device)` and the other methods that return the module itself)? */
static bool ctor_without_parameters(ol_model *m, ol_nid e, int depth)
{
    static const char *const same_module[] = {"eval", "train", "to", "cuda", "cpu", "float", "half", "double",
                                              "bfloat16", "type", NULL};
    const ol_tree *t = m->tree;
    for (int k = 0; k < 8; k++) {
        e = ol_unparen(t, e);
        uint32_t ci = e != OL_NONE && ol_kind_of(t, e) == OL_N_call ? ol_call_at(m, e) : OL_NO_INDEX;
        if (ci == OL_NO_INDEX)
            return false;
        const ol_call *c = &m->calls.items[ci];
        bool chained = false;
        for (const char *const *w = same_module; *w && c->receiver != OL_NONE && c->name && !chained; w++)
            chained = strcmp(ol_sym_str(m, c->name), *w) == 0;
        if (chained) {
            e = c->receiver;
            continue;
        }
        const char *q = ol_qualname(m, c->callee);
        if (parameter_free_qual(q) || augmentation_qual(q))
            return true;
        /* a container of such modules (`nn.Sequential(PreProcess(), K.augmentation.Normalize(...))`) */
        if (q && (strcmp(q, "torch.nn.Sequential") == 0 || strcmp(q, "torch.nn.ModuleList") == 0 ||
                  strcmp(q, "torch.nn.modules.container.Sequential") == 0)) {
            ol_nid args = ol_field(t, c->node, OL_F_arguments);
            ol_nid a = args != OL_NONE ? ol_first_named(t, args) : OL_NONE;
            if (a != OL_NONE && ol_kind_of(t, a) == OL_N_list && ol_next_named(t, a) == OL_NONE)
                a = ol_first_named(t, a); /* nn.ModuleList([...]) */
            bool all = a != OL_NONE && depth < 4;
            for (; a != OL_NONE && all; a = ol_next_named(t, a))
                all = ctor_without_parameters(m, a, depth + 1);
            return all;
        }
        ol_val v = ol_eval(m, c->callee);
        return v.kind == OL_V_CLASS && v.ref < m->classes.len && class_without_parameters(m, v.ref, depth + 1);
    }
    return false;
}

/* `self.level = level` with `def __init__(self, level=0.5)`: a setting, as
 * its default (a number, a string, a bool) says; `gate=None` says nothing. */
static bool literal_parameter(ol_model *m, ol_nid e)
{
    const ol_tree *t = m->tree;
    e = ol_unparen(t, e);
    if (e == OL_NONE || ol_kind_of(t, e) != OL_N_identifier)
        return false;
    uint32_t defs[2];
    size_t n = ol_reaching_defs(m, m->node_scope[e], ol_node_sym(m, e), e, defs, 2);
    if (n != 1 || m->defs.items[defs[0]].kind != OL_DEF_PARAM || m->defs.items[defs[0]].value == OL_NONE)
        return false;
    ol_nid dflt = ol_unparen(t, m->defs.items[defs[0]].value);
    if (ol_kind_of(t, dflt) == OL_N_unary_operator)
        dflt = ol_field(t, dflt, OL_F_argument);
    switch (ol_kind_of(t, dflt)) {
    case OL_N_integer:
    case OL_N_float:
    case OL_N_string:
    case OL_N_true:
    case OL_N_false:
        return true;
    default:
        return false;
    }
}

/* `super().forward(x)`: the class's own base, checked as such. */
static bool calls_super(ol_model *m, const ol_call *c)
{
    const ol_tree *t = m->tree;
    ol_nid r = c->receiver != OL_NONE ? ol_unparen(t, c->receiver) : OL_NONE;
    uint32_t ri = r != OL_NONE && ol_kind_of(t, r) == OL_N_call ? ol_call_at(m, r) : OL_NO_INDEX;
    return ri != OL_NO_INDEX && m->calls.items[ri].name && strcmp(ol_sym_str(m, m->calls.items[ri].name), "super") == 0 &&
           m->calls.items[ri].receiver == OL_NONE;
}

/* Names that make, register or switch on something a gradient flows to. */
static const char *const GRAD_SOURCES[] = {"Parameter", "ParameterList", "ParameterDict", "UninitializedParameter",
                                           "register_parameter", "register_module", "add_module", "setattr",
                                           "__setattr__", "requires_grad", "requires_grad_", "load_state_dict",
                                           "enable_grad", "set_grad_enabled", NULL};

/* A class of this file that is an nn.Module holding no parameter: its bases
 * are nn.Module or such classes, every attribute it sets is a plain value, a
 * tensor built without requires_grad or a parameter-free module, and its
 * methods build no parameter, run no other model and switch on no
 * gradient. Such a module applied to data records no graph of its own. */
static bool class_without_parameters(ol_model *m, uint32_t ci, int depth)
{
    if (ci >= m->classes.len || depth > 4)
        return false;
    if (ol_door_of(m)->param_free[ci])
        return ol_door_of(m)->param_free[ci] == 2;
    ol_door_of(m)->param_free[ci] = 1; /* a cycle through its own attributes: not known, so no */
    const ol_tree *t = m->tree;
    const ol_class *cls = &m->classes.items[ci];
    bool ok = cls->bases.len > 0;
    for (size_t i = 0; i < cls->bases.len && ok; i++) {
        ol_val v = ol_eval(m, cls->bases.items[i]);
        if (v.kind == OL_V_EXTERN) {
            const char *q = ol_sym_str(m, v.ref);
            ok = strcmp(q, "torch.nn.Module") == 0 || strcmp(q, "torch.nn.modules.module.Module") == 0;
        } else {
            ok = v.kind == OL_V_CLASS && v.ref != ci && class_without_parameters(m, v.ref, depth + 1);
        }
        cls = &m->classes.items[ci];
    }
    for (size_t i = 0; i < cls->attr_defs.len && ok; i++) {
        const ol_def *d = &m->defs.items[cls->attr_defs.items[i]];
        if (d->kind == OL_DEF_FUNCTION)
            continue;
        if (d->kind != OL_DEF_ASSIGN || d->path_len != 0 || d->starred) {
            ok = false;
            break;
        }
        ol_nid value = d->value;
        if (literal_parameter(m, value))
            continue;
        ol_val v = ol_eval(m, value);
        switch (v.kind) {
        case OL_V_NUMBER:
        case OL_V_STRING:
        case OL_V_NONE:
        case OL_V_DEVICE:
        case OL_V_RANGE:
        case OL_V_ARRAY:
            break;
        case OL_V_TENSOR:
            ok = !(v.flags & (OL_VF_GRAPH | OL_VF_PARAM));
            break;
        default:
            ok = ctor_without_parameters(m, value, depth);
            break;
        }
        cls = &m->classes.items[ci];
    }
    /* nothing in the class's text names a parameter or switches on gradients */
    ol_nid node = m->classes.items[ci].node;
    for (ol_nid n = node; ok && n < m->subtree_end[node]; n++) {
        if (ol_kind_of(t, n) != OL_N_identifier)
            continue;
        uint32_t len;
        const char *s = ol_text(t, n, &len);
        for (const char *const *w = GRAD_SOURCES; *w && ok; w++)
            ok = !ol_mem_eq_cstr(s, len, *w);
    }
    /* its methods run no other model and build no module that has parameters */
    size_t first = 0, end = ok ? ol_calls_in(m, node, &first) : 0;
    for (size_t i = first; ok && i < end; i++) {
        const ol_call *c = &m->calls.items[i];
        if (calls_super(m, c))
            continue;
        if (ol_call_arg(m, c->node, -1, "requires_grad") != OL_NONE ||
            (ol_is_forward_call(m, (uint32_t)i) && !runs_no_parameters(m, c))) {
            ok = false;
            break;
        }
        ol_callee callee;
        if (ol_callee_of(m, (uint32_t)i, &callee) && (callee.facts & OL_FN_FORWARD)) {
            ok = false;
            break;
        }
        const char *q = ol_qualname(m, c->callee);
        if (q && ol_str_has_prefix(q, "torch.nn.") && !ol_str_has_prefix(q, "torch.nn.functional.") &&
            !ol_str_has_prefix(q, "torch.nn.init.") && !parameter_free_qual(q))
            ok = false;
        else if (ol_eval(m, c->node).kind == OL_V_MODULE && !ctor_without_parameters(m, c->node, depth))
            ok = false;
    }
    ol_door_of(m)->param_free[ci] = ok ? 2 : 1;
    return ok;
}

/* Does the module a forward call runs hold no parameter? `smax(out)` with
 * `smax = nn.Softmax(dim=1)`, `self.pool(x)` with `self.pool =
 * nn.AdaptiveAvgPool2d(1)`, `Decoder().eval()(x)` where the class builds
 * its kernels from constants. Such a call extends the graph of its input, if
 * there is one, where that graph began: not a model's forward. */
bool ol_call_runs_no_parameters(ol_model *m, uint32_t ci)
{
    return runs_no_parameters(m, &m->calls.items[ci]);
}

static bool runs_no_parameters(ol_model *m, const ol_call *call)
{
    const ol_tree *t = m->tree;
    ol_nid model = call->name == m->names.forward && call->receiver != OL_NONE ? ol_unparen(t, call->receiver)
                                                                               : ol_unparen(t, call->callee);
    if (model == OL_NONE)
        return false;
    ol_val v = ol_eval(m, model);
    if (v.kind == OL_V_MODULE && (v.flags & OL_VF_LOCAL) && v.ref < m->classes.len &&
        class_without_parameters(m, v.ref, 0))
        return true;
    if (ol_kind_of(t, model) == OL_N_call)
        return ctor_without_parameters(m, model, 0);
    if (ol_kind_of(t, model) == OL_N_identifier) {
        uint32_t defs[8];
        size_t n = ol_reaching_defs(m, m->node_scope[model], ol_node_sym(m, model), model, defs, 8);
        if (n == 0 || n == 8)
            return false;
        for (size_t i = 0; i < n; i++) {
            const ol_def *d = &m->defs.items[defs[i]];
            if (d->kind != OL_DEF_ASSIGN || d->path_len != 0 || d->starred ||
                !ctor_without_parameters(m, d->value, 0))
                return false;
        }
        return true;
    }
    /* self.x in a method: every `self.x = ...` of the class */
    if (ol_kind_of(t, model) == OL_N_attribute) {
        ol_nid obj = ol_field(t, model, OL_F_object), attr = ol_field(t, model, OL_F_attribute);
        uint32_t fn = ol_function_of(m, call->node);
        if (obj == OL_NONE || attr == OL_NONE || !ol_text_is(t, obj, "self") || fn == OL_NO_INDEX ||
            m->functions.items[fn].cls == OL_NO_INDEX)
            return false;
        const ol_member *attrs;
        size_t count = ol_class_attrs_named(m, m->functions.items[fn].cls, ol_node_sym(m, attr), &attrs);
        for (size_t i = 0; i < count; i++) {
            const ol_def *d = &m->defs.items[attrs[i].index];
            if (d->kind != OL_DEF_ASSIGN || d->path_len != 0 || d->starred ||
                !ctor_without_parameters(m, d->value, 0))
                return false;
        }
        return count > 0;
    }
    return false;
}


/* ---- what an optimizer trains ------------------------------------------------------- */

/* Does the optimizer `opt` step the parameters of a container that may hold
 * the model: one the caller hands in (`SGD(trainable.parameters())` with
 * `trainable` a parameter: the caller may have put
 * `model.get_feat_modules()` in it), or one this code fills with a part of
 * the model (`trainable.append(model.head)`)? */
bool ol_optimizer_may_hold(ol_model *m, ol_nid opt, ol_nid model)
{
    const ol_tree *t = m->tree;
    opt = ol_unparen(t, opt);
    ol_nid value = opt != OL_NONE && ol_kind_of(t, opt) == OL_N_identifier ? ol_bound_value(m, opt) : OL_NONE;
    ol_nid root = model;
    while (root != OL_NONE && ol_kind_of(t, root) == OL_N_attribute)
        root = ol_unparen(t, ol_field(t, root, OL_F_object));
    if (value == OL_NONE || root == OL_NONE || ol_kind_of(t, root) != OL_N_identifier)
        return false;
    size_t first, end = ol_calls_in(m, value, &first);
    for (size_t i = first; i < end; i++) {
        const ol_call *c = &m->calls.items[i];
        if ((c->name != m->names.parameters && c->name != m->names.named_parameters) || c->receiver == OL_NONE)
            continue;
        ol_nid holder = ol_unparen(t, c->receiver);
        while (holder != OL_NONE && (ol_kind_of(t, holder) == OL_N_attribute || ol_kind_of(t, holder) == OL_N_subscript))
            holder = ol_unparen(t, ol_field(t, holder, ol_kind_of(t, holder) == OL_N_attribute ? OL_F_object : OL_F_value));
        if (holder == OL_NONE || ol_kind_of(t, holder) != OL_N_identifier)
            continue;
        uint32_t defs[4];
        size_t nd = ol_reaching_defs(m, m->node_scope[holder], ol_node_sym(m, holder), holder, defs, 4);
        for (size_t k = 0; k < nd; k++) {
            const ol_def *d = &m->defs.items[defs[k]];
            if (d->kind == OL_DEF_PARAM)
                return true; /* built by the caller: its contents are not seen here */
            if (d->kind != OL_DEF_ASSIGN)
                continue;
            /* filled here: `ModuleList([model.head])`, `.append(model.get_feat_modules())` */
            if (ol_mentions(t, d->value, root))
                return true;
            uint32_t hf = ol_function_of(m, holder);
            size_t ff, fe = ol_calls_in(m, hf != OL_NO_INDEX ? m->functions.items[hf].node : 0, &ff);
            for (size_t j = ff; j < fe; j++) {
                const ol_call *f = &m->calls.items[j];
                if (f->receiver != OL_NONE && ol_same_text(t, ol_unparen(t, f->receiver), holder) &&
                    (f->name == m->names.append || f->name == m->names.extend || f->name == m->names.insert) &&
                    ol_mentions(t, ol_field(t, f->node, OL_F_arguments), root))
                    return true;
            }
        }
    }
    return false;
}


/* ---- frozen models ------------------------------------------------------------------ */

/* The model was frozen in this function before the call
 * (`model.eval().requires_grad_(False)`, `model.requires_grad_(False)`, or
 * `p.requires_grad = False` over `model.parameters()`), and its inputs carry
 * no graph: autograd records nothing, no_grad or not (a metric's feature
 * network, a perceptual-path-length sampler). */
/* Is `model` (its text: `self` or `self.teacher`) frozen whole by the end
 * of the __init__ of class ci (`self.requires_grad_(False)`, or
 * `p.requires_grad = False` over all of `self.parameters()`)? */
static bool frozen_in_init(ol_model *m, ol_nid model, uint32_t ci)
{
    const ol_tree *t = m->tree;
    if (ci >= m->classes.len)
        return false;
    const ol_class *cls = &m->classes.items[ci];
    for (size_t i = 0; i < cls->methods.len; i++) {
        const ol_function *f = &m->functions.items[cls->methods.items[i]];
        if (f->name != m->names.__init__)
            continue;
        /* the last node of its body: everything the body holds comes before */
        ol_nid at = ol_field(t, f->node, OL_F_body);
        for (ol_nid last = at; last != OL_NONE;) {
            at = last;
            last = OL_NONE;
            for (ol_nid k = ol_first_named(t, at); k != OL_NONE; k = ol_next_named(t, k))
                last = k;
        }
        if (model == OL_NONE) {
            /* the class's own instance: its `self` */
            ol_nid params = ol_field(t, f->node, OL_F_parameters);
            model = params != OL_NONE ? ol_first_named(t, params) : OL_NONE;
            if (model == OL_NONE || ol_kind_of(t, model) != OL_N_identifier)
                return false;
        }
        return at != OL_NONE && ol_frozen_before(m, model, at);
    }
    return false;
}

bool ol_forward_frozen(ol_model *m, uint32_t ci)
{
    const ol_tree *t = m->tree;
    const ol_call *call = &m->calls.items[ci];
    ol_nid model = call->name == m->names.forward && call->receiver != OL_NONE ? ol_unparen(t, call->receiver)
                                                                               : ol_unparen(t, call->callee);
    if (model == OL_NONE || ol_kind_of(t, model) == OL_N_call)
        return false;
    if (ol_inputs_carry_graph(m, call->node))
        return false;
    if (ol_frozen_before(m, model, call->node))
        return true;
    /* frozen in __init__: a class of this file that freezes its own
     * parameters, or `self.teacher` frozen where the holder builds it */
    ol_val v = ol_eval(m, model);
    if (v.kind == OL_V_MODULE && (v.flags & OL_VF_LOCAL) && frozen_in_init(m, OL_NONE, v.ref))
        return true;
    uint32_t fn = ol_function_of(m, call->node);
    if (fn != OL_NO_INDEX && m->functions.items[fn].cls != OL_NO_INDEX && ol_kind_of(t, model) == OL_N_attribute) {
        ol_nid obj = ol_unparen(t, ol_field(t, model, OL_F_object));
        uint32_t len;
        const char *o = obj != OL_NONE && ol_kind_of(t, obj) == OL_N_identifier ? ol_text(t, obj, &len) : NULL;
        if (o && len == 4 && memcmp(o, "self", 4) == 0 && frozen_in_init(m, model, m->functions.items[fn].cls))
            return true;
    }
    /* a parameter that every call of its function here fills with a model
     * frozen before the call (`model.requires_grad_(False)`, then
     * `evaluate(loader, model)`) */
    ol_nid values[OL_PARAM_SITES_MAX + 1];
    size_t nv = ol_door_name_param_values(m, model, values, OL_PARAM_SITES_MAX + 1);
    bool all = nv != SIZE_MAX && nv > 0;
    for (size_t k = 0; k < nv && all; k++)
        all = ol_kind_of(t, ol_unparen(t, values[k])) != OL_N_call && ol_frozen_before(m, values[k], values[k]);
    return all;
}

bool ol_grad_on(ol_model *m, ol_nid n, ol_reasons *why)
{
    bool answer = grad_on(m, n, why);
    ol_door_audit(m, "grad", n, (int)(answer));
    return answer;
}
