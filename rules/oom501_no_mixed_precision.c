/*
 * OOM501 no-mixed-precision (info): a GPU training loop in a file with no
 * trace of mixed precision anywhere: no autocast, GradScaler, `.half()`,
 * bf16/fp16 dtype, nor a framework precision setting (Accelerate's
 * mixed_precision, Lightning's precision, DeepSpeed or HF fp16/bf16, apex
 * amp). One finding per training loop (the outermost loop around the
 * backward), at its first backward; a backward in a file that updates no
 * weights (input gradients for a saliency map) is not training.
 *
 * The file must be meant for an accelerator: it names CUDA (`.cuda()`, a
 * "cuda" device, `torch.cuda.*`) or `torch.accelerator`, or moves data to a
 * device held in a variable (`x.to(device)`, `device=args.device`) that is
 * not known to be the CPU. Without that we do not know the loop runs on a
 * GPU at all. Files that run on TPUs through torch_xla only are not GPU
 * code (XLA takes its precision from the environment).
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "rule.h"

static bool token_in(const char *s, size_t len, const char *const *words)
{
    return ol_name_looks_like(s, len, words);
}

/* `precision` as a setting: a keyword argument (`Fabric(precision=...)`) or
 * an attribute of the run's options (`args.precision`, `cfg.precision`).
 * A metric named precision (`precision, recall, f1 = ...`,
 * `precision_score`) says nothing of the arithmetic. */
static bool precision_setting(ol_model *m, ol_nid n)
{
    static const char *const options[] = {"args", "opt", "opts", "cfg", "config", "conf", "hparams", "params",
                                          "settings", "flags", NULL};
    const ol_tree *t = m->tree;
    if (!ol_text_is(t, n, "precision"))
        return false;
    ol_nid p = ol_parent(t, n);
    if (p == OL_NONE)
        return false;
    if (ol_kind_of(t, p) == OL_N_keyword_argument && ol_field(t, p, OL_F_name) == n)
        return true;
    if (ol_kind_of(t, p) != OL_N_attribute || ol_field(t, p, OL_F_attribute) != n)
        return false;
    ol_nid obj = ol_unparen(t, ol_field(t, p, OL_F_object));
    if (ol_kind_of(t, obj) == OL_N_attribute)
        obj = ol_field(t, obj, OL_F_attribute);
    uint32_t len;
    const char *s = ol_kind_of(t, obj) == OL_N_identifier ? ol_text(t, obj, &len) : NULL;
    return s && token_in(s, len, options);
}

static bool mentions_mixed_precision(ol_model *m)
{
    static const char *const words[] = {"amp", "autocast", "fp16", "bf16", "half", "bfloat16", "float16",
                                        "mixed", "scaler", "gradscaler", NULL};
    static const char *const strings[] = {"fp16", "bf16", "16", "16-mixed", "bf16-mixed", "float16",
                                          "bfloat16", "half", "mixed", "amp", NULL};
    const ol_tree *t = m->tree;
    for (ol_nid n = 0; n < t->nodes.len; n++) {
        ol_kind k = ol_kind_of(t, n);
        if (k == OL_N_identifier) {
            uint32_t len;
            const char *s = ol_text(t, n, &len);
            if (token_in(s, len, words) || precision_setting(m, n))
                return true;
        } else if (k == OL_N_string) {
            const char *s;
            uint32_t len;
            if (!ol_string_value(t, n, &s, &len))
                continue;
            for (const char *const *w = strings; *w; w++)
                if (ol_mem_eq_cstr(s, len, *w))
                    return true;
        }
    }
    return false;
}

/* Frameworks that take precision from their own config or command line
 * (`accelerate launch --mixed_precision`, `fabric run --precision`, a
 * DeepSpeed config file): the script alone cannot say it runs in fp32. */
static bool uses_precision_framework(ol_model *m)
{
    static const char *const prefixes[] = {"accelerate", "lightning", "pytorch_lightning", "deepspeed",
                                           "transformers.Trainer", "transformers.trainer", "apex", "colossalai",
                                           "composer", "ignite", NULL};
    for (size_t i = 0; i < m->imports.len; i++) {
        const char *q = ol_sym_str(m, m->imports.items[i].qual);
        for (const char *const *p = prefixes; *p; p++) {
            size_t n = strlen(*p);
            if (strncmp(q, *p, n) == 0 && (q[n] == '\0' || q[n] == '.'))
                return true;
        }
    }
    return false;
}

/* Does the file update weights: an optimizer built, stepped or taken as a
 * parameter (`def train_step(model, batch, optimizer)`, stepped by the
 * caller), or a manual update from `.grad` (`w -= lr * w.grad`,
 * `p.data.add_(p.grad, alpha=-lr)`)? A backward alone may only want input
 * gradients (a saliency map, an adversarial example): that is not training. */
static bool updates_weights(ol_model *m)
{
    const ol_tree *t = m->tree;
    for (size_t i = 0; i < m->calls.len; i++) {
        if (ol_step_optimizer(m, (uint32_t)i) != OL_NONE || ol_eval(m, m->calls.items[i].node).kind == OL_V_OPTIMIZER)
            return true;
    }
    for (size_t i = 0; i < m->defs.len; i++)
        if (m->defs.items[i].kind == OL_DEF_PARAM && ol_def_value(m, (uint32_t)i).kind == OL_V_OPTIMIZER)
            return true;
    for (ol_nid n = 0; n < t->nodes.len; n++) {
        ol_nid from = OL_NONE;
        if (ol_kind_of(t, n) == OL_N_augmented_assignment)
            from = ol_field(t, n, OL_F_right);
        else if (ol_kind_of(t, n) == OL_N_call) {
            ol_nid callee = ol_field(t, n, OL_F_function);
            ol_nid attr = ol_kind_of(t, callee) == OL_N_attribute ? ol_field(t, callee, OL_F_attribute) : OL_NONE;
            if (attr != OL_NONE && (ol_text_is(t, attr, "add_") || ol_text_is(t, attr, "sub_")))
                from = ol_field(t, n, OL_F_arguments);
        }
        for (ol_nid x = from; x != OL_NONE && x < m->subtree_end[from]; x++)
            if (ol_kind_of(t, x) == OL_N_attribute && ol_text_is(t, ol_field(t, x, OL_F_attribute), "grad"))
                return true;
    }
    return false;
}

/* The training loop a backward belongs to: the outermost loop around it in
 * its function (a GAN's critic loop, an actor update or an auxiliary phase
 * nested in the loop over steps is the same training loop), or the loop
 * around a call of its function. */
static ol_nid training_loop_of(ol_model *m, ol_nid n, int depth)
{
    if (m->node_loop[n] != OL_NO_INDEX) {
        uint32_t loop = m->node_loop[n];
        while (m->loops.items[loop].parent != OL_NO_INDEX)
            loop = m->loops.items[loop].parent;
        return m->loops.items[loop].node;
    }
    uint32_t fn = ol_function_of(m, n);
    if (fn == OL_NO_INDEX || depth > 3)
        return OL_NONE;
    const ol_function *f = &m->functions.items[fn];
    for (size_t i = 0; i < f->callsites.len; i++) {
        ol_nid loop = training_loop_of(m, m->calls.items[f->callsites.items[i]].node, depth + 1);
        if (loop != OL_NONE)
            return loop;
    }
    return OL_NONE;
}

/* May call c put something on a GPU: `.cuda()`, `.to(d)` or `device=d`
 * where d is a GPU string or a device held in a variable (which may be
 * "cuda" on some machine)? */
static bool may_go_to_gpu(ol_model *m, const ol_call *c)
{
    if (ol_call_moves_to_gpu(m, c))
        return true;
    ol_nid dev = ol_call_arg(m, c->node, -1, "device");
    if (dev == OL_NONE && c->receiver != OL_NONE && c->name == m->names.to)
        dev = ol_call_arg(m, c->node, 0, NULL);
    if (dev == OL_NONE)
        return false;
    const char *s;
    uint32_t len;
    const ol_tree *t = m->tree;
    dev = ol_unparen(t, dev);
    if (ol_string_value(t, dev, &s, &len))
        return !(len >= 3 && memcmp(s, "cpu", 3) == 0);
    if (ol_names_device_variable(m, dev))
        return true;
    /* `device = "cuda" if torch.cuda.is_available() else "cpu"`: a string
     * that may name a GPU, in a name made for a device */
    static const char *const words[] = {"device", "dev", NULL};
    ol_nid name = ol_kind_of(t, dev) == OL_N_attribute ? ol_field(t, dev, OL_F_attribute) : dev;
    if (name == OL_NONE || ol_kind_of(t, name) != OL_N_identifier)
        return false;
    s = ol_text(t, name, &len);
    return ol_name_looks_like(s, len, words);
}

/* A training loop that runs on the CPU in a file that uses a GPU elsewhere
 * (a course notebook that trains on the CPU first): nothing in the loop
 * moves to a GPU, and every model it runs is a name bound here to a value
 * that never went to a GPU, nor was moved there before the loop. */
static bool loop_stays_on_cpu(ol_model *m, ol_nid loop)
{
    const ol_tree *t = m->tree;
    size_t first, end = ol_calls_in(m, loop, &first);
    int models = 0;
    /* the last few names found not moved before the loop (a loop runs the
     * same few models at each of its forwards) */
    ol_sym clear[8] = {0};
    size_t cleared = 0;
    for (size_t k = first; k < end; k++) {
        const ol_call *c = &m->calls.items[k];
        if (may_go_to_gpu(m, c))
            return false;
        if (!ol_is_forward_call(m, (uint32_t)k))
            continue;
        ol_nid model = ol_unparen(t, c->callee);
        if (ol_kind_of(t, model) != OL_N_identifier)
            return false; /* self.model, a model from a call: its device is not known here */
        uint32_t defs[8];
        size_t nd = ol_reaching_defs(m, m->node_scope[model], ol_node_sym(m, model), model, defs, 8);
        if (nd == 0 || nd == 8)
            return false;
        for (size_t d = 0; d < nd; d++) {
            const ol_def *def = &m->defs.items[defs[d]];
            if (def->kind != OL_DEF_ASSIGN || def->value == OL_NONE)
                return false;
            size_t vf, ve = ol_calls_in(m, def->value, &vf);
            for (size_t v = vf; v < ve; v++)
                if (may_go_to_gpu(m, &m->calls.items[v]))
                    return false;
        }
        ol_sym name = ol_node_sym(m, model);
        bool known = false;
        for (size_t j = 0; j < 8 && !known; j++)
            known = clear[j] == name;
        if (known) {
            models++;
            continue;
        }
        /* `model.to(device)`, `model.cuda()` anywhere before the loop: a
         * call on one of the name's uses before the loop's first call */
        size_t count;
        const ol_nid *uses = ol_name_uses(m, model, 0, m->calls.items[first].node, &count, NULL);
        for (size_t u = 0; u < count; u++) {
            ol_nid r = uses[u];
            while (ol_kind_of(t, ol_parent(t, r)) == OL_N_parenthesized_expression)
                r = ol_parent(t, r);
            ol_nid attr = ol_parent(t, r);
            if (ol_kind_of(t, attr) != OL_N_attribute || ol_field(t, attr, OL_F_object) != r)
                continue;
            uint32_t v = ol_call_at(m, ol_parent(t, attr));
            const ol_call *mv = v != OL_NO_INDEX ? &m->calls.items[v] : NULL;
            if (mv && v < first && mv->receiver != OL_NONE && ol_unparen(t, mv->receiver) == uses[u] &&
                ol_same_text(t, uses[u], model) && may_go_to_gpu(m, mv))
                return false;
        }
        clear[cleared++ % 8] = name;
        models++;
    }
    return models > 0;
}

static void check(ol_check *c)
{
    ol_model *m = c->model;
    bool checked_file = false;
    OL_VEC(ol_nid) loops = {0};
    for (size_t i = 0; i < m->calls.len; i++) {
        if (!ol_is_backward_call(m, (uint32_t)i))
            continue;
        if (!checked_file) {
            checked_file = true;
            if (mentions_mixed_precision(m) || uses_precision_framework(m) || ol_runs_on_xla_only(m) ||
                !ol_file_chooses_device(m) || !updates_weights(m))
                break;
        }
        const ol_call *call = &m->calls.items[i];
        ol_nid loop = training_loop_of(m, call->node, 0);
        if (loop == OL_NONE)
            continue;
        /* each loop is decided once, at its first backward (a loop of
         * thousands of steps asked at each was read thousands of times) */
        bool seen = loops.len > 0 && ol_vec_last(&loops) == loop;
        for (size_t k = 0; k < loops.len && !seen; k++)
            seen = loops.items[k] == loop;
        if (seen)
            continue;
        ol_vec_push(&loops, loop);
        if (loop_stays_on_cpu(m, loop))
            continue;
        ol_diag *d = ol_report_node(c, call->node,
                                    "this GPU training loop runs entirely in float32; mixed precision would "
                                    "roughly halve activation memory and speed up matrix math");
        ol_diag_help(d, "run the forward pass and loss under `torch.autocast(\"cuda\", dtype=torch.bfloat16)` "
                        "(or float16 with `torch.amp.GradScaler(\"cuda\")`)");
    }
    ol_vec_free(&loops);
}

const ol_rule ol_rule_oom501 = {
    .code = "OOM501",
    .name = "no-mixed-precision",
    .severity = OL_SEV_INFO,
    .device_memory = true,
    .opt_in = true,
    .summary = "A GPU training loop in a file that uses no mixed precision at all.",
    .what = "Reports, once per training loop at its first `backward()`, files that train on an "
            "accelerator (they call `.cuda()`, name a \"cuda\" device, use `torch.cuda` or "
            "`torch.accelerator`, or move data to a device held in a variable: `x.to(device)`, "
            "`device=args.device`) and show no sign of mixed precision anywhere: no autocast, "
            "GradScaler, `.half()`, bf16/fp16 dtype, or framework precision setting (Accelerate "
            "`mixed_precision`, Lightning `precision`, DeepSpeed or Hugging Face fp16/bf16, apex amp). "
            "A training loop is the outermost loop around a backward (nested critic, actor or "
            "auxiliary updates belong to it), in a file that updates weights (an optimizer, or a "
            "manual update from `.grad`): a backward for input gradients alone is not training. A loop "
            "that moves nothing to a GPU and runs only models that were never put on one (a course "
            "notebook that trains on the CPU before it moves to the GPU) is not reported. Opt-in: it runs only "
            "when selected by its code (`--extend-select OOM501`), because it is advice that fits most "
            "GPU training scripts, not a defect; on fresh repositories most of its findings were small "
            "models where mixed precision buys little.",
    .why = "Activations saved for backward are usually the largest use of GPU memory in training. "
           "Under autocast most of them are stored in 16 bits instead of 32, roughly halving that "
           "memory, and tensor cores run the matrix math several times faster. bfloat16 needs no "
           "loss scaling; float16 needs a GradScaler.",
    .example = "for x, y in loader:\n"
               "    x, y = x.cuda(), y.cuda()\n"
               "    optimizer.zero_grad()\n"
               "    loss = criterion(model(x), y)\n"
               "    loss.backward()\n"
               "    optimizer.step()",
    .instead = "for x, y in loader:\n"
               "    x, y = x.cuda(), y.cuda()\n"
               "    optimizer.zero_grad()\n"
               "    with torch.autocast(\"cuda\", dtype=torch.bfloat16):\n"
               "        loss = criterion(model(x), y)\n"
               "    loss.backward()\n"
               "    optimizer.step()",
    .fix = NULL,
    .tags = "memory,performance,mixed-precision",
    .precision = "medium",
    .check = check,
};
