/*
 * OOM107 eval-predictions-accumulated-on-device: every evaluation batch's
 * full-vocabulary logits kept on the GPU until a metric runs at the end.
 *
 * Two forms:
 *   - a Hugging Face `Trainer` (`Seq2SeqTrainer`, trl's `SFTTrainer`, or a
 *     class of the file derived from one) for a language model, built with
 *     `compute_metrics=` and neither `preprocess_logits_for_metrics=` nor
 *     `eval_accumulation_steps` in its training arguments. The evaluation
 *     loop then concatenates every batch's logits (batch x sequence x
 *     vocabulary) on the device and moves them to the CPU only at the end;
 *   - a hand-written loop over batches that appends a language model's
 *     logits (or its output, softmaxed, gathered across processes) to a list
 *     that outlives the loop, without `.cpu()`, `.numpy()`, `.tolist()` or a
 *     reduction (`argmax`, `max`, `sum`, ...).
 *
 * Size is the point: only language models' outputs count (a class of
 * transformers' `*ForCausalLM`, `*ForConditionalGeneration`, `*LMHeadModel`,
 * `*ForMaskedLM`, `AutoModelForSeq2SeqLM`, unsloth's `FastLanguageModel`,
 * through peft wrappers, `.to(device)`, `accelerator.prepare`, function
 * parameters and `self.` attributes), or a trainer that exists for them
 * (`Seq2SeqTrainer`, `SFTTrainer`). The metric must also run: an
 * evaluation strategy other than "no" in the arguments, or an `evaluate()` /
 * `predict()` call in the file. A classifier's logits (batch x classes)
 * are small and never flagged. The training arguments are followed through
 * their name to the `TrainingArguments(...)` call, including a `**kwargs`
 * dict literal; arguments the file does not build (parsed from the command
 * line, passed in) keep the rule silent, as do `predict_with_generate=True`
 * (generated ids, not logits), `prediction_loss_only=True`,
 * `batch_eval_metrics=True` (the metric sees one batch at a time), a `**kwargs`
 * splat into the trainer and a subclass that overrides the evaluation or
 * prediction step.
 *
 * A value that carries the autograd graph belongs to OOM102 (the list keeps
 * every graph, a worse leak): OOM107 reports only what has no graph (under
 * no_grad, detached), so one line never gets both.
 *
 * No fix: both cures change what compute_metrics receives or when the
 * logits move (see the rule's Fix text).
 */
#include <stdlib.h>
#include <string.h>

#include "rule.h"

#define MAX_DEPTH 16

/* A walk through bindings, call sites and returns, with a budget of steps:
 * names bound in loops may reach themselves, and each step may branch. */
typedef struct walk {
    int steps;
} walk;
#define WALK_STEPS 400

static const char *last_part(const char *q)
{
    const char *d = strrchr(q, '.');
    return d ? d + 1 : q;
}

/* A transformers (or unsloth, peft) class whose output is vocabulary-sized. */
static bool lm_class_name(const char *name, size_t len)
{
    static const char *const parts[] = {"ForCausalLM", "ForSeq2SeqLM", "ForConditionalGeneration", "LMHeadModel",
                                        "WithLMHead", "ForMaskedLM", "FastLanguageModel", "FastModel", NULL};
    for (const char *const *p = parts; *p; p++) {
        size_t pl = strlen(*p);
        for (size_t i = 0; i + pl <= len; i++)
            if (memcmp(name + i, *p, pl) == 0)
                return true;
    }
    return false;
}

/* The class part of a dotted constructor or loader name:
 * `transformers.AutoModelForCausalLM.from_pretrained` ->
 * `AutoModelForCausalLM`, written to buf. */
static const char *class_of_qual(const char *q, char *buf, size_t cap)
{
    static const char *const loaders[] = {".from_pretrained", ".from_config", ".from_single_file", NULL};
    size_t len = strlen(q);
    for (const char *const *s = loaders; *s; s++)
        if (ol_str_has_suffix(q, *s)) {
            len -= strlen(*s);
            break;
        }
    if (len >= cap)
        return "";
    memcpy(buf, q, len);
    buf[len] = '\0';
    return last_part(buf);
}

static bool lm_expr(ol_model *m, ol_nid e, walk *w, int depth);

/* Does some def in defs[0..n) bind a language model? (The value at the
 * def's unpacking path: `model, tok = FastLanguageModel.from_pretrained(...)`,
 * `model, opt = accelerator.prepare(model, opt)`.) */
static bool lm_def(ol_model *m, uint32_t di, walk *w, int depth);

static bool lm_name(ol_model *m, ol_nid id, walk *w, int depth)
{
    uint32_t defs[8];
    size_t n = ol_reaching_defs(m, m->node_scope[id], ol_node_sym(m, id), id, defs, 8);
    for (size_t i = 0; i < n; i++)
        if (lm_def(m, defs[i], w, depth + 1))
            return true;
    return false;
}

static bool lm_def(ol_model *m, uint32_t di, walk *w, int depth)
{
    if (depth > MAX_DEPTH || di >= m->defs.len || w->steps-- <= 0)
        return false;
    const ol_tree *t = m->tree;
    ol_def d = m->defs.items[di];
    if (d.kind == OL_DEF_PARAM) {
        uint32_t fi = m->scopes.items[d.scope].function;
        if (fi == OL_NO_INDEX || d.starred)
            return false;
        const ol_function *f = &m->functions.items[fi];
        for (size_t i = 0; i < f->callsites.len && i < 16; i++) {
            f = &m->functions.items[fi];
            bool splat;
            ol_nid a = ol_callsite_arg(m, f, &m->calls.items[f->callsites.items[i]], &d, &splat);
            if (a != OL_NONE && lm_expr(m, a, w, depth + 1))
                return true;
        }
        return false;
    }
    if ((d.kind != OL_DEF_ASSIGN && d.kind != OL_DEF_WALRUS && d.kind != OL_DEF_WITH) || d.value == OL_NONE)
        return false;
    ol_nid v = ol_unparen(t, d.value);
    if (d.path_len == 0)
        return lm_expr(m, v, w, depth + 1);
    if (d.path_len != 1 || ol_kind_of(t, v) != OL_N_call)
        return false;
    uint32_t ci = ol_call_at(m, v);
    /* model, opt, loader = accelerator.prepare(model, opt, loader) */
    if (ci != OL_NO_INDEX && m->calls.items[ci].name == m->names.prepare) {
        ol_nid a = ol_call_arg(m, v, d.path[0], NULL);
        return a != OL_NONE && lm_expr(m, a, w, depth + 1);
    }
    /* model, tokenizer = FastLanguageModel.from_pretrained(...) */
    return d.path[0] == 0 && lm_expr(m, v, w, depth + 1);
}

/* `self.model` in a method: the values the class assigns to it. */
static bool lm_self_attr(ol_model *m, ol_nid attr, walk *w, int depth)
{
    const ol_tree *t = m->tree;
    ol_nid obj = ol_unparen(t, ol_field(t, attr, OL_F_object));
    ol_nid name = ol_field(t, attr, OL_F_attribute);
    if (obj == OL_NONE || name == OL_NONE || ol_kind_of(t, obj) != OL_N_identifier ||
        ol_node_sym(m, obj) != m->names.self)
        return false;
    uint32_t fi = ol_function_of(m, attr);
    if (fi == OL_NO_INDEX || m->functions.items[fi].cls == OL_NO_INDEX)
        return false;
    ol_sym s = ol_node_sym(m, name);
    const ol_class *cl = &m->classes.items[m->functions.items[fi].cls];
    for (size_t i = 0; i < cl->attr_defs.len; i++) {
        uint32_t di = cl->attr_defs.items[i];
        if (m->defs.items[di].name == s && lm_def(m, di, w, depth + 1))
            return true;
        cl = &m->classes.items[m->functions.items[fi].cls];
    }
    return false;
}

/* Does a local class derive (in this file) from a language-model class? */
static bool lm_class(ol_model *m, uint32_t ci, walk *w, int depth)
{
    if (depth > MAX_DEPTH || w->steps-- <= 0)
        return false;
    const ol_class *cl = &m->classes.items[ci];
    for (size_t i = 0; i < cl->bases.len; i++) {
        ol_nid b = m->classes.items[ci].bases.items[i];
        const char *q = ol_qualname(m, b);
        if (q) {
            if (lm_class_name(last_part(q), strlen(last_part(q))))
                return true;
            continue;
        }
        ol_val bv = ol_eval(m, b);
        if (bv.kind == OL_V_CLASS && bv.ref < m->classes.len && lm_class(m, bv.ref, w, depth + 1))
            return true;
    }
    return false;
}

static bool lm_expr(ol_model *m, ol_nid e, walk *w, int depth)
{
    const ol_tree *t = m->tree;
    e = ol_unparen(t, e);
    if (e == OL_NONE || depth > MAX_DEPTH || w->steps-- <= 0)
        return false;
    switch (ol_kind_of(t, e)) {
    case OL_N_identifier:
        return lm_name(m, e, w, depth);
    case OL_N_attribute:
        return lm_self_attr(m, e, w, depth);
    case OL_N_conditional_expression:
        for (ol_nid c = ol_first_named(t, e); c != OL_NONE; c = ol_next_named(t, c))
            if (c != ol_field(t, e, OL_F_condition) && lm_expr(m, c, w, depth + 1))
                return true;
        return false;
    case OL_N_call:
        break;
    default:
        return false;
    }
    uint32_t ci = ol_call_at(m, e);
    if (ci == OL_NO_INDEX)
        return false;
    const ol_call *c = &m->calls.items[ci];
    const char *q = ol_qualname(m, c->callee);
    if (q) {
        char buf[160];
        const char *cls = class_of_qual(q, buf, sizeof(buf));
        if (lm_class_name(cls, strlen(cls)))
            return true;
        /* wrappers that return the model they are given */
        static const char *const wrappers[] = {"get_peft_model", "prepare_model_for_kbit_training",
                                               "prepare_model_for_int8_training", "compile", "PeftModel", NULL};
        for (const char *const *wr = wrappers; *wr; wr++)
            if (strcmp(cls, *wr) == 0) {
                ol_nid a = ol_call_arg(m, e, 0, "model");
                return a != OL_NONE && lm_expr(m, a, w, depth + 1);
            }
        if (ol_str_has_prefix(q, "peft."))
            return false;
    }
    /* model.to(device), model.cuda(), model.half(), model.eval() */
    if (c->receiver != OL_NONE && q == NULL) {
        const ol_names *nm = &m->names;
        if (c->name == nm->to || c->name == nm->cuda || c->name == nm->half || c->name == nm->bfloat16 ||
            c->name == nm->eval || c->name == nm->train)
            return lm_expr(m, c->receiver, w, depth + 1);
        if (c->name == nm->prepare) {
            ol_nid a = ol_call_arg(m, e, 0, NULL);
            return a != OL_NONE && lm_expr(m, a, w, depth + 1);
        }
    }
    /* a class of this file derived from a language model */
    ol_val cv = ol_eval(m, c->callee);
    if (cv.kind == OL_V_CLASS && cv.ref < m->classes.len)
        return lm_class(m, cv.ref, w, depth + 1);
    /* a function of this file that returns one */
    uint32_t fi = ol_callee_function(m, e);
    if (fi != OL_NO_INDEX) {
        for (size_t i = 0; i < m->functions.items[fi].returns.len; i++)
            if (lm_expr(m, m->functions.items[fi].returns.items[i], w, depth + 1))
                return true;
    }
    return false;
}

/* ---- the Trainer form ------------------------------------------------------ */

typedef enum trainer_kind {
    TR_NONE = 0,
    TR_TRAINER,     /* transformers.Trainer: the model says whether it is an LM */
    TR_SEQ2SEQ,     /* Seq2SeqTrainer: a seq2seq LM by construction */
    TR_SFT,         /* trl.SFTTrainer: a causal LM by construction */
} trainer_kind;

/* Does a class of this file override how the trainer evaluates? Then what
 * it gathers is its own business. */
static bool overrides_evaluation(ol_model *m, uint32_t ci)
{
    static const char *const hooks[] = {"prediction_step", "evaluation_loop", "evaluate", "predict",
                                        "prediction_loop", NULL};
    const ol_class *cl = &m->classes.items[ci];
    for (size_t i = 0; i < cl->methods.len; i++) {
        const char *name = ol_sym_str(m, m->functions.items[cl->methods.items[i]].name);
        for (const char *const *h = hooks; *h; h++)
            if (strcmp(name, *h) == 0)
                return true;
    }
    return false;
}

static trainer_kind trainer_qual(const char *q)
{
    if (ol_str_has_prefix(q, "trl.") && strcmp(last_part(q), "SFTTrainer") == 0)
        return TR_SFT;
    if (!ol_str_has_prefix(q, "transformers."))
        return TR_NONE;
    const char *name = last_part(q);
    if (strcmp(name, "Seq2SeqTrainer") == 0)
        return TR_SEQ2SEQ;
    if (strcmp(name, "Trainer") == 0)
        return TR_TRAINER;
    return TR_NONE;
}

static trainer_kind trainer_class(ol_model *m, ol_nid callee, int depth)
{
    if (depth > MAX_DEPTH)
        return TR_NONE;
    const char *q = ol_qualname(m, callee);
    if (q)
        return trainer_qual(q);
    ol_val v = ol_eval(m, callee);
    if (v.kind != OL_V_CLASS || v.ref >= m->classes.len)
        return TR_NONE;
    uint32_t ci = v.ref;
    if (overrides_evaluation(m, ci))
        return TR_NONE;
    for (size_t i = 0; i < m->classes.items[ci].bases.len; i++) {
        trainer_kind k = trainer_class(m, m->classes.items[ci].bases.items[i], depth + 1);
        if (k != TR_NONE)
            return k;
    }
    return TR_NONE;
}

/* Is e None on every path: the literal, or a name only ever bound to it? */
static bool is_none(ol_model *m, ol_nid e, int depth)
{
    const ol_tree *t = m->tree;
    e = ol_unparen(t, e);
    if (e == OL_NONE || depth > MAX_DEPTH)
        return false;
    if (ol_kind_of(t, e) == OL_N_none)
        return true;
    if (ol_kind_of(t, e) != OL_N_identifier)
        return false;
    uint32_t defs[8];
    size_t n = ol_reaching_defs(m, m->node_scope[e], ol_node_sym(m, e), e, defs, 8);
    if (n == 0)
        return false;
    for (size_t i = 0; i < n; i++) {
        const ol_def *d = &m->defs.items[defs[i]];
        if (d->kind != OL_DEF_ASSIGN || d->path_len != 0 || !is_none(m, d->value, depth + 1))
            return false;
    }
    return true;
}

static bool is_false(const ol_tree *t, ol_nid e)
{
    e = ol_unparen(t, e);
    if (e == OL_NONE)
        return false;
    ol_kind k = ol_kind_of(t, e);
    return k == OL_N_false || k == OL_N_none || (k == OL_N_integer && ol_text_is(t, e, "0"));
}

/* What the file's training arguments say about evaluation. */
typedef struct args_facts {
    bool known;       /* every setting that matters is visible */
    bool accumulates; /* eval_accumulation_steps given, or batch_eval_metrics on */
    bool generates;   /* predict_with_generate on (or maybe on) */
    bool loss_only;   /* prediction_loss_only on (or maybe on) */
    bool evaluates;   /* an evaluation strategy other than "no" (or maybe) */
} args_facts;

/* `"no"`, `IntervalStrategy.NO`, `None`: no evaluation during training. */
static bool strategy_is_no(const ol_tree *t, ol_nid e)
{
    e = ol_unparen(t, e);
    if (e == OL_NONE)
        return false;
    const char *s;
    uint32_t len;
    if (ol_string_value(t, e, &s, &len))
        return len == 2 && memcmp(s, "no", 2) == 0;
    if (ol_kind_of(t, e) == OL_N_attribute)
        return ol_text_is(t, ol_field(t, e, OL_F_attribute), "NO");
    return ol_kind_of(t, e) == OL_N_none;
}

static void note_setting(ol_model *m, args_facts *f, const char *key, size_t len, ol_nid value)
{
    const ol_tree *t = m->tree;
#define KEY_IS(s) (len == strlen(s) && memcmp(key, s, len) == 0)
    /* batch_eval_metrics: the metric sees one batch at a time and the
     * evaluation loop keeps none of them */
    if ((KEY_IS("eval_accumulation_steps") && !is_none(m, value, 0)) ||
        (KEY_IS("batch_eval_metrics") && !is_false(t, value)))
        f->accumulates = true;
    else if (KEY_IS("predict_with_generate") && !is_false(t, value))
        f->generates = true;
    else if (KEY_IS("prediction_loss_only") && !is_false(t, value))
        f->loss_only = true;
    else if ((KEY_IS("eval_strategy") || KEY_IS("evaluation_strategy")) && !strategy_is_no(t, value))
        f->evaluates = true;
#undef KEY_IS
}

typedef struct dict_settings {
    ol_model *m;
    args_facts *f;
} dict_settings;

/* One use of a dict of settings: `d["key"] = v` is a setting; spreading it
 * (`**d`) and reading it change nothing; anything else (passed to a
 * function, `update()`, held by another name) may put any key in it. */
static bool note_dict_use(void *ctx, const ol_use *use)
{
    dict_settings *ds = ctx;
    const ol_tree *t = ds->m->tree;
    switch (use->kind) {
    case OL_USE_READ:
        return true;
    case OL_USE_STORE: {
        const char *s;
        uint32_t len;
        if (!ol_string_value(t, use->key, &s, &len))
            return false;
        note_setting(ds->m, ds->f, s, len, use->value);
        return true;
    }
    case OL_USE_PASSED:
        return ol_kind_of(t, ol_parent(t, use->node)) == OL_N_dictionary_splat;
    default:
        return false;
    }
}

/* The settings of a dict spread into the arguments: a dict literal (or
 * `dict(k=v)`) bound once, with the stores into it the file makes. */
static bool read_dict_settings(ol_model *m, ol_nid e, args_facts *f)
{
    const ol_tree *t = m->tree;
    e = ol_unparen(t, e);
    if (e == OL_NONE || ol_kind_of(t, e) != OL_N_identifier)
        return false;
    uint32_t defs[4];
    size_t n = ol_reaching_defs(m, m->node_scope[e], ol_node_sym(m, e), e, defs, 4);
    if (n != 1)
        return false;
    const ol_def *d = &m->defs.items[defs[0]];
    if (d->kind != OL_DEF_ASSIGN || d->path_len != 0 || d->value == OL_NONE)
        return false;
    ol_nid v = ol_unparen(t, d->value);
    if (ol_kind_of(t, v) == OL_N_dictionary) {
        for (ol_nid p = ol_first_named(t, v); p != OL_NONE; p = ol_next_named(t, p)) {
            if (ol_kind_of(t, p) != OL_N_pair)
                return false; /* {**other} */
            const char *s;
            uint32_t len;
            if (!ol_string_value(t, ol_field(t, p, OL_F_key), &s, &len))
                return false;
            note_setting(m, f, s, len, ol_field(t, p, OL_F_value));
        }
    } else if (ol_kind_of(t, v) == OL_N_call && ol_text_is(t, ol_field(t, v, OL_F_function), "dict")) {
        ol_nid args = ol_field(t, v, OL_F_arguments);
        for (ol_nid a = args != OL_NONE ? ol_first_named(t, args) : OL_NONE; a != OL_NONE; a = ol_next_named(t, a)) {
            if (ol_kind_of(t, a) != OL_N_keyword_argument)
                return false;
            uint32_t len;
            const char *s = ol_text(t, ol_field(t, a, OL_F_name), &len);
            note_setting(m, f, s, len, ol_field(t, a, OL_F_value));
        }
    } else {
        return false;
    }
    dict_settings ds = {m, f};
    return ol_container_uses(m, defs[0], note_dict_use, &ds);
}

static bool training_arguments_call(ol_model *m, ol_nid call)
{
    const char *q = ol_qualname(m, ol_field(m->tree, call, OL_F_function));
    if (!q)
        return false;
    const char *name = last_part(q);
    if (ol_str_has_prefix(q, "transformers.") && ol_str_has_suffix(name, "TrainingArguments"))
        return true;
    return ol_str_has_prefix(q, "trl.") && strcmp(name, "SFTConfig") == 0;
}

static void read_args(ol_model *m, ol_nid e, args_facts *f, int depth)
{
    const ol_tree *t = m->tree;
    e = ol_unparen(t, e);
    if (e == OL_NONE || depth > MAX_DEPTH) {
        f->known = false;
        return;
    }
    if (ol_kind_of(t, e) == OL_N_identifier) {
        uint32_t defs[4];
        size_t n = ol_reaching_defs(m, m->node_scope[e], ol_node_sym(m, e), e, defs, 4);
        if (n == 0 || n == 4) {
            f->known = false;
            return;
        }
        for (size_t i = 0; i < n; i++) {
            const ol_def *d = &m->defs.items[defs[i]];
            if (d->kind != OL_DEF_ASSIGN || d->path_len != 0 || d->value == OL_NONE) {
                f->known = false;
                return;
            }
            read_args(m, d->value, f, depth + 1);
        }
        return;
    }
    if (ol_kind_of(t, e) != OL_N_call || !training_arguments_call(m, e)) {
        f->known = false;
        return;
    }
    ol_nid args = ol_field(t, e, OL_F_arguments);
    for (ol_nid a = args != OL_NONE ? ol_first_named(t, args) : OL_NONE; a != OL_NONE; a = ol_next_named(t, a)) {
        ol_kind k = ol_kind_of(t, a);
        if (k == OL_N_keyword_argument) {
            uint32_t len;
            const char *s = ol_text(t, ol_field(t, a, OL_F_name), &len);
            note_setting(m, f, s, len, ol_field(t, a, OL_F_value));
        } else if (k == OL_N_dictionary_splat) {
            if (!read_dict_settings(m, ol_first_named(t, a), f))
                f->known = false;
        } else if (k == OL_N_list_splat) {
            f->known = false;
        }
    }
}

/* Does the file set `name` on `obj` later (`training_args.eval_accumulation_steps
 * = 8` for the arguments named `training_args`), or on the arguments of any
 * trainer (`trainer.args.eval_accumulation_steps = 8`)? With obj OL_NONE,
 * on any object (`trainer.preprocess_logits_for_metrics = fn`). */
static bool file_sets_attribute(ol_model *m, const char *name, ol_nid obj)
{
    const ol_tree *t = m->tree;
    for (size_t i = 0; i < m->assigns.len; i++) {
        ol_nid left = ol_unparen(t, ol_field(t, m->assigns.items[i], OL_F_left));
        if (left == OL_NONE || ol_kind_of(t, left) != OL_N_attribute ||
            !ol_text_is(t, ol_field(t, left, OL_F_attribute), name))
            continue;
        ol_nid target = ol_unparen(t, ol_field(t, left, OL_F_object));
        if (obj == OL_NONE || ol_same_text(t, target, obj) ||
            (ol_kind_of(t, target) == OL_N_attribute && ol_text_is(t, ol_field(t, target, OL_F_attribute), "args")))
            return true;
    }
    for (size_t i = 0; i < m->calls.len; i++) {
        const ol_call *c = &m->calls.items[i];
        if (c->receiver == OL_NONE && ol_text_is(t, c->callee, "setattr")) {
            ol_nid key = ol_call_arg(m, c->node, 1, NULL);
            const char *s;
            uint32_t len;
            if (key != OL_NONE && ol_string_value(t, key, &s, &len) && len == strlen(name) && memcmp(s, name, len) == 0)
                return true;
        }
    }
    return false;
}

/* Does the file run an evaluation or prediction itself
 * (`trainer.evaluate()`, `trainer.predict(test)`)? */
static bool file_runs_evaluation(ol_model *m)
{
    const ol_tree *t = m->tree;
    for (size_t i = 0; i < m->calls.len; i++) {
        const ol_call *c = &m->calls.items[i];
        if (c->receiver == OL_NONE || c->name == 0)
            continue;
        ol_nid attr = ol_field(t, c->callee, OL_F_attribute);
        if (attr != OL_NONE && (ol_text_is(t, attr, "evaluate") || ol_text_is(t, attr, "predict")))
            return true;
    }
    return false;
}

static ol_nid keyword_arg(const ol_tree *t, ol_nid call, const char *name)
{
    ol_nid args = ol_field(t, call, OL_F_arguments);
    for (ol_nid a = args != OL_NONE ? ol_first_named(t, args) : OL_NONE; a != OL_NONE; a = ol_next_named(t, a))
        if (ol_kind_of(t, a) == OL_N_keyword_argument && ol_text_is(t, ol_field(t, a, OL_F_name), name))
            return a;
    return OL_NONE;
}

static bool has_splat(const ol_tree *t, ol_nid call)
{
    ol_nid args = ol_field(t, call, OL_F_arguments);
    for (ol_nid a = args != OL_NONE ? ol_first_named(t, args) : OL_NONE; a != OL_NONE; a = ol_next_named(t, a))
        if (ol_kind_of(t, a) == OL_N_dictionary_splat || ol_kind_of(t, a) == OL_N_list_splat)
            return true;
    return false;
}

/* The model a trainer call trains: `model=`, the first positional argument,
 * or what `model_init=` returns. */
static bool trainer_model_is_lm(ol_model *m, ol_nid call)
{
    const ol_tree *t = m->tree;
    ol_nid model = ol_call_arg(m, call, 0, "model");
    walk w = {WALK_STEPS};
    if (model != OL_NONE)
        return lm_expr(m, model, &w, 0);
    ol_nid init = ol_call_arg(m, call, -1, "model_init");
    if (init == OL_NONE)
        return false;
    ol_val v = ol_eval(m, ol_unparen(t, init));
    if (v.kind != OL_V_FUNCTION || v.ref >= m->functions.len)
        return false;
    for (size_t i = 0; i < m->functions.items[v.ref].returns.len; i++)
        if (lm_expr(m, m->functions.items[v.ref].returns.items[i], &w, 0))
            return true;
    return false;
}

static void check_trainers(ol_check *c)
{
    ol_model *m = c->model;
    const ol_tree *t = c->tree;
    int later_preprocess = -1, runs_evaluation = -1; /* computed on first need */
    for (size_t i = 0; i < m->calls.len; i++) {
        ol_nid call = m->calls.items[i].node;
        ol_nid metrics_kw = keyword_arg(t, call, "compute_metrics");
        if (metrics_kw == OL_NONE || is_none(m, ol_field(t, metrics_kw, OL_F_value), 0))
            continue;
        trainer_kind kind = trainer_class(m, m->calls.items[i].callee, 0);
        if (kind == TR_NONE || has_splat(t, call))
            continue;
        ol_nid pre = ol_call_arg(m, call, -1, "preprocess_logits_for_metrics");
        if (pre != OL_NONE && !is_none(m, pre, 0))
            continue;
        args_facts f = {true, false, false, false, false};
        ol_nid args = ol_call_arg(m, call, 1, "args");
        if (args != OL_NONE)
            read_args(m, args, &f, 0);
        if (!f.known || f.accumulates || f.generates || f.loss_only)
            continue;
        /* no evaluation during training and none run by the file: the
         * metric never runs */
        if (!f.evaluates) {
            if (runs_evaluation < 0)
                runs_evaluation = file_runs_evaluation(m);
            if (!runs_evaluation)
                continue;
        }
        if (later_preprocess < 0)
            later_preprocess = file_sets_attribute(m, "preprocess_logits_for_metrics", OL_NONE);
        if (later_preprocess)
            continue;
        /* the arguments' settings changed after they were built */
        ol_nid args_obj = args != OL_NONE ? ol_unparen(t, args) : OL_NONE;
        if (args_obj != OL_NONE && ol_kind_of(t, args_obj) != OL_N_identifier)
            args_obj = OL_NONE;
        if (args_obj != OL_NONE && (file_sets_attribute(m, "eval_accumulation_steps", args_obj) ||
                                    file_sets_attribute(m, "predict_with_generate", args_obj) ||
                                    file_sets_attribute(m, "prediction_loss_only", args_obj)))
            continue;
        bool lm = kind != TR_TRAINER || trainer_model_is_lm(m, call);
        if (!lm)
            continue;
        char *callee = ol_node_str_short(t, m->calls.items[i].callee);
        const char *what = kind == TR_SEQ2SEQ ? "a sequence-to-sequence model, without `predict_with_generate`,"
                                              : "a language model";
        ol_diag *d = ol_report_node(c, metrics_kw,
                                    "`%s(...)` evaluates %s with `compute_metrics` and neither "
                                    "`eval_accumulation_steps` nor `preprocess_logits_for_metrics`: every evaluation "
                                    "batch's full-vocabulary logits are gathered on the GPU before the metric runs",
                                    callee, what);
        ol_diag_help(d, "reduce the logits per batch with `preprocess_logits_for_metrics=` (e.g. a function that "
                        "returns `logits.argmax(-1)`), or set `eval_accumulation_steps` in the training arguments "
                        "to move them to the CPU every few steps");
        free(callee);
    }
}

/* ---- the hand-written form ------------------------------------------------- */

static bool method_in(ol_model *m, ol_sym name, const char *const *list)
{
    const char *s = ol_sym_str(m, name);
    for (const char *const *p = list; *p; p++)
        if (strcmp(s, *p) == 0)
            return true;
    return false;
}

/* A `.to(...)` whose target is the CPU (or a dtype only): the result is on
 * the host, or the move says nothing. */
static bool to_cpu(ol_model *m, ol_nid call)
{
    const ol_tree *t = m->tree;
    ol_nid a = ol_call_arg(m, call, 0, "device");
    if (a == OL_NONE)
        return false;
    const char *s;
    uint32_t len;
    if (ol_string_value(t, a, &s, &len))
        return len >= 3 && memcmp(s, "cpu", 3) == 0;
    uint32_t alen;
    const char *text = ol_text(t, a, &alen);
    for (uint32_t i = 0; i + 3 <= alen; i++)
        if (memcmp(text + i, "cpu", 3) == 0)
            return true;
    return false;
}

static bool lm_output(ol_model *m, ol_nid e, walk *w, int depth);

static bool lm_output_name(ol_model *m, ol_nid id, walk *w, int depth)
{
    const ol_tree *t = m->tree;
    uint32_t defs[8];
    size_t n = ol_reaching_defs(m, m->node_scope[id], ol_node_sym(m, id), id, defs, 8);
    for (size_t i = 0; i < n; i++) {
        const ol_def *d = &m->defs.items[defs[i]];
        if ((d->kind != OL_DEF_ASSIGN && d->kind != OL_DEF_WALRUS) || d->value == OL_NONE)
            continue;
        if (d->path_len == 0) {
            if (lm_output(m, d->value, w, depth + 1))
                return true;
            continue;
        }
        /* `loss, logits = model(...)[:2]`, `_, logits = ...`: the element
         * named for logits */
        uint32_t len;
        const char *name = ol_text(t, d->target, &len);
        static const char *const words[] = {"logits", "logit", NULL};
        if (ol_name_looks_like(name, len, words) && lm_output(m, d->value, w, depth + 1))
            return true;
    }
    return false;
}

/* Is e, at its position, a language model's vocabulary-sized output still
 * on the device: the forward's result, its `.logits`, an element of it, and
 * what keeps its size and place (softmax, casts, views, `.detach()`,
 * gathering across processes)? */
static bool lm_output(ol_model *m, ol_nid e, walk *w, int depth)
{
    const ol_tree *t = m->tree;
    e = ol_unparen(t, e);
    if (e == OL_NONE || depth > MAX_DEPTH || w->steps-- <= 0)
        return false;
    switch (ol_kind_of(t, e)) {
    case OL_N_identifier:
        return lm_output_name(m, e, w, depth);
    case OL_N_attribute: {
        ol_nid attr = ol_field(t, e, OL_F_attribute);
        if (!ol_text_is(t, attr, "logits"))
            return false;
        return lm_output(m, ol_field(t, e, OL_F_object), w, depth + 1);
    }
    case OL_N_subscript: {
        ol_nid key = ol_unparen(t, ol_field(t, e, OL_F_subscript));
        const char *s;
        uint32_t len;
        if (key != OL_NONE && ol_string_value(t, key, &s, &len) && !(len == 6 && memcmp(s, "logits", 6) == 0))
            return false; /* out["loss"] */
        return lm_output(m, ol_field(t, e, OL_F_value), w, depth + 1);
    }
    case OL_N_call:
        break;
    default:
        return false;
    }
    uint32_t ci = ol_call_at(m, e);
    if (ci == OL_NO_INDEX)
        return false;
    const ol_call *c = &m->calls.items[ci];
    if (ol_is_forward_call(m, ci))
        return lm_expr(m, c->callee, w, depth + 1);
    const char *q = ol_qualname(m, c->callee);
    if (q) {
        static const char *const keep[] = {"torch.softmax", "torch.log_softmax", "torch.nn.functional.softmax",
                                           "torch.nn.functional.log_softmax", "torch.sigmoid", "torch.exp", NULL};
        for (const char *const *k = keep; *k; k++)
            if (strcmp(q, *k) == 0) {
                ol_nid a = ol_call_arg(m, e, 0, "input");
                return a != OL_NONE && lm_output(m, a, w, depth + 1);
            }
        return false;
    }
    if (c->receiver == OL_NONE)
        return false;
    /* accelerator.gather(logits): every process's logits, on the device */
    static const char *const gathers[] = {"gather", "gather_for_metrics", "pad_across_processes", NULL};
    if (method_in(m, c->name, gathers)) {
        ol_nid a = ol_call_arg(m, e, 0, "tensor");
        return a != OL_NONE && lm_output(m, a, w, depth + 1);
    }
    static const char *const same[] = {"detach", "float", "half", "bfloat16", "double", "contiguous", "clone",
                                       "view", "reshape", "flatten", "squeeze", "unsqueeze", "permute",
                                       "transpose", "softmax", "log_softmax", "sigmoid", "exp", "cuda", NULL};
    if (c->name == m->names.to) {
        if (to_cpu(m, e))
            return false;
        return lm_output(m, c->receiver, w, depth + 1);
    }
    if (method_in(m, c->name, same))
        return lm_output(m, c->receiver, w, depth + 1);
    return false; /* .cpu(), .numpy(), .tolist(), .argmax(), .max(), ... */
}

/* Does `holder` keep what it collects across the iterations of a loop over
 * batches, seen from stmt? */
static bool outlives_batches(ol_model *m, ol_nid holder, ol_nid stmt)
{
    ol_accumulator acc;
    if (!ol_accumulator_of(m, holder, &acc))
        return false;
    return ol_accumulator_outlived_loop(m, &acc, stmt) != OL_NO_INDEX;
}

static void report_kept(ol_check *c, ol_nid stmt, ol_nid holder, ol_nid value, const char *how)
{
    const ol_tree *t = c->tree;
    char *h = ol_node_str_short(t, holder);
    char *v = ol_node_str_short(t, value);
    ol_diag *d = ol_report_node(c, stmt,
                                "`%s` %s `%s`, a language model's full-vocabulary logits, on the device for every "
                                "batch: the whole evaluation set's logits end up in GPU memory",
                                h, how, v);
    ol_diag_help(d, "reduce them per batch (`%s.argmax(-1)`, or the metric's running statistics), or keep them on "
                    "the host: `%s.cpu()`",
                 ol_is_primary(t, value) ? v : "(...)", ol_is_primary(t, value) ? v : "(...)");
    free(h);
    free(v);
}

/* Does OOM102 report this store already (the value carries the graph)? */
static bool oom102_case(ol_model *m, ol_nid value, ol_nid at)
{
    return ol_val_is_graph(ol_eval(m, value)) && ol_grad_on(m, at, NULL);
}

/* Does the file's code run on a GPU? Asked once, and only for a store the
 * file's own text already condemns: the answer may consult the callers of its
 * functions in every file of the run, which summarizes those files. */
static bool on_gpu(ol_model *m, int *known)
{
    if (*known < 0)
        *known = ol_runs_on_gpu(m, NULL) == OL_GPU_YES;
    return *known;
}

static void check_loops(ol_check *c)
{
    ol_model *m = c->model;
    const ol_tree *t = c->tree;
    if (m->loops.len == 0)
        return;
    int gpu = -1;
    const ol_names *n = &m->names;
    for (size_t i = 0; i < m->calls.len; i++) {
        const ol_call *call = &m->calls.items[i];
        if (call->receiver == OL_NONE || (call->name != n->append && call->name != n->insert) ||
            m->node_loop[call->node] == OL_NO_INDEX)
            continue;
        ol_nid value = ol_call_arg(m, call->node, call->name == n->insert ? 1 : 0, NULL);
        ol_nid recv = ol_unparen(t, call->receiver);
        walk w = {WALK_STEPS};
        if (value == OL_NONE || !lm_output(m, value, &w, 0))
            continue;
        ol_nid stmt = ol_statement_of(t, call->node);
        if (!outlives_batches(m, recv, stmt) || !on_gpu(m, &gpu) || oom102_case(m, value, call->node))
            continue;
        report_kept(c, stmt, recv, value, "keeps");
    }
    /* all_logits = torch.cat([all_logits, logits]) */
    for (size_t i = 0; i < m->assigns.len; i++) {
        ol_nid a = m->assigns.items[i];
        if (m->node_loop[a] == OL_NO_INDEX)
            continue;
        ol_nid left = ol_unparen(t, ol_field(t, a, OL_F_left));
        ol_nid right = ol_unparen(t, ol_field(t, a, OL_F_right));
        if (left == OL_NONE || right == OL_NONE || ol_kind_of(t, right) != OL_N_call)
            continue;
        ol_kind lk = ol_kind_of(t, left);
        if (lk != OL_N_identifier && lk != OL_N_attribute)
            continue;
        static const char *const cats[] = {"torch.cat", "torch.concat", "torch.concatenate", "torch.vstack",
                                           "torch.stack", NULL};
        if (!ol_call_is(m, right, cats))
            continue;
        ol_nid seq = ol_unparen(t, ol_call_arg(m, right, 0, "tensors"));
        if (seq == OL_NONE || (ol_kind_of(t, seq) != OL_N_list && ol_kind_of(t, seq) != OL_N_tuple))
            continue;
        bool has_self = false;
        ol_nid value = OL_NONE;
        for (ol_nid x = ol_first_named(t, seq); x != OL_NONE; x = ol_next_named(t, x)) {
            if (ol_same_text(t, x, left))
                has_self = true;
            else
                value = x;
        }
        walk w = {WALK_STEPS};
        if (!has_self || value == OL_NONE || !lm_output(m, value, &w, 0))
            continue;
        ol_nid stmt = ol_statement_of(t, a);
        if (!outlives_batches(m, left, stmt) || !on_gpu(m, &gpu) || oom102_case(m, value, a))
            continue;
        report_kept(c, stmt, left, value, "concatenates");
    }
}

static void check(ol_check *c)
{
    check_trainers(c);
    check_loops(c);
}

const ol_rule ol_rule_oom107 = {
    .code = "OOM107",
    .name = "eval-predictions-accumulated-on-device",
    .severity = OL_SEV_WARNING,
    .device_memory = true,
    .opt_in = true,
    .summary = "Every evaluation batch's full-vocabulary logits are kept on the GPU until the metric runs.",
    .what = "Flags a Hugging Face `Trainer` (also `Seq2SeqTrainer`, trl's `SFTTrainer` and classes of the file "
            "derived from them) for a language model that is built with `compute_metrics=` and neither "
            "`preprocess_logits_for_metrics=` nor `eval_accumulation_steps` in its training arguments. The "
            "language model is what the file shows: a transformers `*ForCausalLM`, `*ForConditionalGeneration`, "
            "`*LMHeadModel`, `*ForMaskedLM` or `AutoModelForSeq2SeqLM` (also through peft, unsloth, `.to()`, "
            "parameters and `self.` attributes), or a `Seq2SeqTrainer`/`SFTTrainer`; and the metric must run: an "
            "evaluation strategy other than `\"no\"`, or an `evaluate()`/`predict()` call in the file. Also flags hand-written "
            "loops over batches that append such a model's logits to a list that outlives the loop (or "
            "`torch.cat` them onto it) without moving them off the device. Silent for classification models "
            "(their logits are small), `predict_with_generate=True`, `prediction_loss_only=True`, "
            "`batch_eval_metrics=True`, "
            "`compute_metrics=None`, training arguments the file does not build (parsed from the command line, "
            "passed in), subclasses that override the evaluation or prediction step, and `.cpu()`, `.numpy()`, "
            "`.tolist()` or reduced values (`argmax`). A value that still carries the autograd graph is "
            "OOM102's finding, not this rule's.",
    .why = "Without `eval_accumulation_steps`, `Trainer.evaluate()` concatenates the predictions of every "
           "evaluation batch on the device and moves them to the CPU only once the loop ends. For a language "
           "model the predictions are logits of size batch x sequence x vocabulary: 1,000 sequences of 512 "
           "tokens over a 32,000-token vocabulary are 65 GB in float32, so training that fit runs out of memory "
           "at the first evaluation. A hand-written loop that appends every batch's logits on the GPU and "
           "concatenates them at the end does the same (and the concatenation briefly needs twice that).",
    .example = "model = AutoModelForCausalLM.from_pretrained(\"gpt2\")\n"
               "args = TrainingArguments(\"out\", eval_strategy=\"epoch\")\n"
               "trainer = Trainer(model=model, args=args, train_dataset=train, eval_dataset=val,\n"
               "                  compute_metrics=compute_metrics)",
    .instead = "def preprocess_logits_for_metrics(logits, labels):\n"
               "    return logits.argmax(dim=-1)  # token ids, not the full vocabulary\n"
               "\n"
               "trainer = Trainer(model=model, args=args, train_dataset=train, eval_dataset=val,\n"
               "                  compute_metrics=compute_metrics,\n"
               "                  preprocess_logits_for_metrics=preprocess_logits_for_metrics)",
    .fix = NULL,
    .accuracy = "Measured before the rule was put in any set, on 48 public repositories (8,689 Python files and "
                "notebooks: 19 chosen for Hugging Face `Trainer` code, among them huggingface/notebooks, "
                "huggingface/peft, hiyouga/LLaMA-Factory and THUDM/ChatGLM-6B; 29 other PyTorch training "
                "repositories) and one file pinned at an older commit (chrismun/LLM4VV `fine-tune/train-orca.py` at "
                "430939d). They build about 300 trainers with a `compute_metrics`, most in the translated copies of "
                "the Hugging Face course and documentation notebooks. OOM107 reports 13, all right but from only 2 "
                "distinct pieces of code: the image-captioning documentation notebook (a GIT `AutoModelForCausalLM` "
                "with a word-error-rate metric over argmax'd logits, 12 copies across languages) and a "
                "`LlamaForCausalLM` fine-tune with default arguments. It is silent, rightly, on 219 classification, "
                "token-classification, audio, vision and CTC models, 53 seq2seq trainers that evaluate with "
                "`predict_with_generate`, 3 language models that pass `preprocess_logits_for_metrics`, 10 "
                "segmentation trainers that set `eval_accumulation_steps`, and a reward model. The loop form reports "
                "nothing there; one list of a language model's logits kept on the device (a PPO helper whose model is "
                "a parameter filled elsewhere) is not reported. Dense-prediction outputs (segmentation logits per "
                "pixel) are large too and not covered. Two distinct cases are no measure of precision, so the rule "
                "stays opt-in: select it with `--extend-select OOM107`. No fix: `preprocess_logits_for_metrics` "
                "changes what `compute_metrics` receives (reduced predictions instead of logits) and "
                "`eval_accumulation_steps` moves predictions to the host every N steps (slower evaluation, host "
                "memory instead of device memory), so either is the user's choice.",
    .tags = "memory,evaluation,transformers",
    .precision = "medium",
    .check = check,
};
