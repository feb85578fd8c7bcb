/*
 * eval.c - what an expression is, computed the way a reader works it out.
 *
 * ol_eval() maps an expression to an ol_val: a kind (module, optimizer,
 * loader, tensor, imported name, ...) plus flags, chief among them
 * OL_VF_GRAPH, "this tensor may carry the autograd graph". Names are followed
 * through the bindings that reach them (ol_reaching_defs, dataflow.c);
 * imported names become dotted names; calls are looked up in the table of
 * what PyTorch and the common libraries around it return (callables.c);
 * local functions yield what their returns yield (classes.c), and their
 * parameters what their call sites in this file pass (elements.c). Where
 * nothing is known, a name's spelling (`model`, `criterion`, `optimizer`,
 * `train_loader`) is the last resort, as it is for a reader.
 *
 * Graph-ness follows autograd: an operation under no_grad produces no graph
 * (grad.c says where autograd is off); `.item()`, `.detach()`, `.data`,
 * `float()` drop it; comparisons and argmax produce none; a binding whose
 * value reaches `.backward()` has one.
 */
#include "model.h"

#include "dataflow.h"
#include "eval_internal.h"
#include "steps.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

bool ol_val_is_graph(ol_val v)
{
    return v.kind == OL_V_TENSOR && (v.flags & OL_VF_GRAPH);
}

/* Least upper bound of two possible values of one expression. Unknown
 * defers to what is known: a reader who sees `x = model(a)` on one branch
 * and `x = something(b)` on another reads x as the model's output. */
static ol_val join(ol_val a, ol_val b)
{
    if (a.kind == OL_V_BOTTOM)
        return b;
    if (b.kind == OL_V_BOTTOM)
        return a;
    if (a.kind == OL_V_UNKNOWN && b.kind != OL_V_UNKNOWN) {
        b.flags |= a.flags;
        return b;
    }
    if (b.kind == OL_V_UNKNOWN && a.kind != OL_V_UNKNOWN) {
        a.flags |= b.flags;
        return a;
    }
    if (a.kind == b.kind) {
        ol_val r = a;
        r.flags = a.flags | b.flags;
        r.info = a.info | b.info;
        if (a.ref != b.ref) {
            /* a module of a known class of the project on one path and a module
             * known only by its name on the other (`decoder = Decoder()` or
             * `checkpoint['decoder']`): read it as that class */
            if (a.kind == OL_V_MODULE && !((a.flags | b.flags) & OL_VF_LOCAL) && (!a.ref || !b.ref))
                r.ref = a.ref ? a.ref : b.ref;
            else
                r.ref = 0, r.flags &= (uint8_t)~OL_VF_LOCAL;
        }
        return r;
    }
    /* a tensor on one side and a number on the other: still possibly a tensor */
    if (a.kind == OL_V_TENSOR && (b.kind == OL_V_NUMBER || b.kind == OL_V_NONE))
        return a;
    if (b.kind == OL_V_TENSOR && (a.kind == OL_V_NUMBER || a.kind == OL_V_NONE))
        return b;
    /* an optional model (`model=None`, built when None): a model where it is called */
    if (a.kind == OL_V_MODULE && b.kind == OL_V_NONE)
        return a;
    if (b.kind == OL_V_MODULE && a.kind == OL_V_NONE)
        return b;
    ol_val r = UNKNOWN;
    r.flags = (a.flags | b.flags) & (OL_VF_GRAPH | OL_VF_ELEM_GRAPH | OL_VF_LOSS);
    if (r.flags & OL_VF_GRAPH)
        r.kind = OL_V_TENSOR;
    return r;
}

static const char *const LOADER_WORDS[] = {"loader", "dataloader", "dl", "batches", NULL};
static const char *const OPTIMIZER_WORDS[] = {"optimizer", "optimiser", "optim", "opt", "optimizerg",
                                              "optimizerd", "optg", "optd", NULL};
static const char *const NOT_OPTIMIZER_WORDS[] = {"scheduler", "sched", "env", "lr", "args", "options",
                                                  "opts", "config", "cfg", NULL};

static ol_val guess_from_name_uncached(ol_model *m, ol_sym name);

/* What a name alone suggests, for values nothing else tells us about:
 * worked out once per name of the file (a name is asked about at every use
 * of every binding that has no better answer). */
ol_val ol_eval__guess_from_name(ol_model *m, ol_sym name)
{
    if (name == 0 || name >= m->strings.strings.len)
        return guess_from_name_uncached(m, name);
    if (name >= m->name_guess_cap) {
        size_t cap = m->strings.strings.len + 64;
        m->name_guess = ol_xrealloc(m->name_guess, cap * sizeof(ol_val));
        m->name_guessed = ol_xrealloc(m->name_guessed, cap);
        memset(m->name_guessed + m->name_guess_cap, 0, cap - m->name_guess_cap);
        m->name_guess_cap = cap;
    }
    if (!m->name_guessed[name]) {
        m->name_guess[name] = guess_from_name_uncached(m, name);
        m->name_guessed[name] = 1;
    }
    return m->name_guess[name];
}

static ol_val guess_from_name_uncached(ol_model *m, ol_sym name)
{
    const char *s = ol_sym_str(m, name);
    size_t len = ol_interned_len(&m->strings, name);
    /* `Discriminator`, `Model`: a class (passed in to be instantiated), not an instance */
    bool lower = false;
    for (size_t i = 1; i < len; i++)
        lower |= islower((unsigned char)s[i]) != 0;
    if (len > 1 && isupper((unsigned char)s[0]) && lower)
        return UNKNOWN;
    /* model_cls, net_factory, builder: something that makes a model */
    static const char *const makers[] = {"cls", "class", "klass", "type", "factory", "builder", "ctor", "fn",
                                         "func", "constructor", "maker", NULL};
    if (ol_name_looks_like(s, len, makers) && !ol_name_is_loss_fn(s, len))
        return UNKNOWN;
    if (ol_name_is_loss_fn(s, len))
        return mk(OL_V_MODULE, OL_VF_LOSSFN);
    if (ol_name_is_model(s, len))
        return mk(OL_V_MODULE, 0);
    if (ol_name_looks_like(s, len, LOADER_WORDS))
        return mk(OL_V_LOADER, 0);
    if (ol_name_looks_like(s, len, OPTIMIZER_WORDS) && !ol_name_looks_like(s, len, NOT_OPTIMIZER_WORDS))
        return mk(OL_V_OPTIMIZER, 0);
    if (strcmp(s, "scaler") == 0 || strcmp(s, "grad_scaler") == 0 || strcmp(s, "amp_scaler") == 0 ||
        strcmp(s, "loss_scaler") == 0)
        return mk(OL_V_SCALER, 0);
    return UNKNOWN;
}

/* ---- dotted names ----------------------------------------------------------- */

static ol_sym qual_join(ol_model *m, ol_sym base, ol_sym attr)
{
    const char *b = ol_sym_str(m, base);
    const char *a = ol_sym_str(m, attr);
    size_t bl = strlen(b), al = strlen(a);
    char stack_buf[256];
    char *buf = bl + al + 2 <= sizeof(stack_buf) ? stack_buf : ol_xmalloc(bl + al + 2);
    memcpy(buf, b, bl);
    buf[bl] = '.';
    memcpy(buf + bl + 1, a, al);
    ol_sym r = ol_intern(&m->strings, buf, bl + al + 1);
    if (buf != stack_buf)
        free(buf);
    return r;
}

ol_val ol_val_join(ol_val a, ol_val b)
{
    return join(a, b);
}
/* ---- defs ---------------------------------------------------------------------- */

static ol_val arith(ol_val a, ol_val b);
static bool loss_of_detached(ol_model *m, ol_nid call);
static bool graph_only_from_args(ol_model *m, uint32_t fi);
static bool args_known_graph_free(ol_model *m, ol_nid call);

static ol_val def_value_uncached(ol_model *m, uint32_t di)
{
    const ol_def *d = &m->defs.items[di];
    const ol_tree *t = m->tree;
    switch (d->kind) {
    case OL_DEF_IMPORT:
        return mk_ref(OL_V_EXTERN, 0, d->qual);
    case OL_DEF_FUNCTION:
        return mk_ref(OL_V_FUNCTION, 0, d->index);
    case OL_DEF_CLASS:
        return mk_ref(OL_V_CLASS, 0, d->index);
    case OL_DEF_PARAM:
        return ol_eval__param_value(m, di);
    case OL_DEF_DELETE:
        return BOTTOM;
    case OL_DEF_EXCEPT:
    case OL_DEF_OTHER:
        return mk(OL_V_OBJECT, 0);
    case OL_DEF_WITH: {
        ol_val v = ol_eval(m, d->value);
        if (v.kind == OL_V_LOADER)
            return v;
        if (v.kind == OL_V_AUTOCAST || v.kind == OL_V_GRADMODE)
            return mk(OL_V_NONE, 0);
        return UNKNOWN;
    }
    case OL_DEF_FOR: {
        if (d->starred)
            return mk(OL_V_LIST, 0);
        return ol_eval__eval_path(m, d->value, true, d->path, d->path_len);
    }
    case OL_DEF_AUGASSIGN: {
        ol_nid aug = d->value;
        ol_nid left = ol_field(t, aug, OL_F_left);
        ol_nid right = ol_field(t, aug, OL_F_right);
        ol_val lv = ol_eval(m, left);
        ol_val rv = ol_eval(m, right);
        ol_val r = arith(lv, rv);
        if (ol_grad_disabled(m, aug))
            r.flags &= (uint8_t)~OL_VF_GRAPH;
        return r;
    }
    case OL_DEF_ASSIGN:
    case OL_DEF_WALRUS: {
        if (d->starred)
            return mk(OL_V_LIST, 0);
        ol_val v = ol_eval__eval_path(m, d->value, false, d->path, d->path_len);
        if (v.kind == OL_V_UNKNOWN && d->annotation != OL_NONE) {
            ol_val a = ol_eval__annotation_value(m, d->annotation);
            if (a.kind != OL_V_UNKNOWN)
                return a;
        }
        return v;
    }
    }
    return UNKNOWN;
}

/* An instance of a class imported from elsewhere may well be a module or an
 * optimizer (`model = Translator(...)` with the class in src/model.py); one
 * from a library that is not torch is not (`encoder = LabelEncoder()`). */
static bool object_may_be_torch(ol_model *m, ol_val v)
{
    if (v.info & OL_OBJ_PROJECT)
        return false;
    if (!v.ref)
        return true;
    const char *q = ol_sym_str(m, v.ref);
    static const char *const foreign[] = {"sklearn.", "xgboost.", "lightgbm.", "catboost.", "gensim.", "pandas.",
                                          "numpy.", "scipy.", "PIL.", "cv2.", "accelerate.", "transformers.",
                                          "tokenizers.", "datasets.", "matplotlib.", "wandb.", "tensorboardX.",
                                          "torch.utils.tensorboard.", "logging.", "argparse.", "tensorflow.",
                                          "keras.", "tf_keras.", "jax.", "flax.", "haiku.", "optax.", "equinox.",
                                          "mxnet.", "paddle.", NULL};
    for (size_t i = 0; foreign[i]; i++)
        if (ol_str_has_prefix(q, foreign[i]))
            return false;
    return strcmp(q, "torch.load") != 0;
}

/* Is e a call of a parameter of its function (`model(shape)`, also with
 * methods after it: `model(shape).to(device)`)? A parameter
 * named as a model reads as an instance, and calling it as a forward; but
 * what the call returns, when it is then used as only a module can be
 * (`self.net.parameters()` handed to an optimizer, `.eval()`,
 * `.state_dict()`), was built by it: the parameter is a class handed to
 * the constructor (`NeuralNet(data_set, CNN)`), and the call made a model. */
static bool calls_parameter(ol_model *m, ol_nid e)
{
    const ol_tree *t = m->tree;
    e = ol_unparen(t, e);
    if (e == OL_NONE || ol_kind_of(t, e) != OL_N_call)
        return false;
    ol_nid callee = ol_unparen(t, ol_field(t, e, OL_F_function));
    /* `model(shape).to(device)`: the call the method chain starts from */
    for (int depth = 0; depth < 8 && ol_kind_of(t, callee) == OL_N_attribute; depth++) {
        ol_nid obj = ol_unparen(t, ol_field(t, callee, OL_F_object));
        if (obj == OL_NONE || ol_kind_of(t, obj) != OL_N_call)
            break;
        callee = ol_unparen(t, ol_field(t, obj, OL_F_function));
    }
    if (callee == OL_NONE || ol_kind_of(t, callee) != OL_N_identifier)
        return false;
    uint32_t defs[4];
    size_t n = ol_reaching_defs(m, m->node_scope[callee], ol_node_sym(m, callee), callee, defs, 4);
    return n == 1 && m->defs.items[defs[0]].kind == OL_DEF_PARAM && !m->defs.items[defs[0]].starred;
}

/* ---- the memo -------------------------------------------------------------------- *
 *
 * Values are kept per node and per binding. A cycle (a loop's `total +=
 * loss` reads the binding being evaluated) is cut where it closes: the value
 * still being evaluated reads as BOTTOM. What is computed from that BOTTOM
 * is provisional: right for the evaluation that began the cycle, but had
 * the question begun elsewhere in the cycle the cut would have fallen
 * elsewhere. So it is kept only until that evaluation ends (reused inside
 * it, which keeps the work linear) and then forgotten, and a value no
 * longer depends on what other rules asked before (the value that began
 * the cycle is kept, so where a cycle is entered can still matter: two
 * values of the fixtures, tests/fixture_tests.py). Past EVAL_MAX_DEPTH
 * everything under way is provisional on the outermost evaluation. A state
 * of 3 + d (d at most EVAL_MAX_DEPTH, so it fits a byte) marks a value
 * provisional on the unfinished evaluation at depth d; each is listed in
 * m->provisional (a node n as 2n, a binding b as 2b + 1). */

/* A value that depends on the unfinished evaluation at `depth` was read. */
static void note_unfinished(ol_model *m, uint32_t depth)
{
    if (depth < m->eval_low)
        m->eval_low = depth;
}

/* A kept value's state, read: true with the value to use in *out (BOTTOM
 * for one being computed now), noting what it depends on; false when it
 * must be computed. */
static bool memo_read(ol_model *m, uint8_t state, const ol_val *memo, ol_val *out)
{
    if (state == 2) {
        *out = *memo;
        return true;
    }
    if (state >= 3) {
        note_unfinished(m, state - 3u);
        *out = *memo;
        return true;
    }
    if (state == 1) {
        note_unfinished(m, memo->ref);
        *out = BOTTOM;
        return true;
    }
    return false;
}

/* The start of an evaluation: the unfinished reads of the one around it
 * are put aside, and the depth it runs at is kept in its memo slot. */
static uint32_t memo_begin(ol_model *m, uint8_t *state, ol_val *memo, size_t *mark)
{
    uint32_t outer_low = m->eval_low;
    m->eval_low = UINT32_MAX;
    *state = 1;
    memo->ref = m->eval_depth;
    *mark = m->provisional.len;
    return outer_low;
}

/* The end of an evaluation begun at `depth` (as the entry `self` of the
 * list): its state (2 when it read nothing unfinished from further out,
 * else provisional); the values made provisional on it, or on
 * evaluations inside it, are forgotten. */
static uint8_t memo_end(ol_model *m, uint32_t depth, uint32_t outer_low, size_t mark, uint32_t self)
{
    size_t kept = mark;
    for (size_t i = mark; i < m->provisional.len; i++) {
        uint32_t e = m->provisional.items[i];
        uint8_t *st = (e & 1) ? &m->def_state[e >> 1] : &m->node_state[e >> 1];
        if ((uint32_t)(*st - 3u) >= depth)
            *st = 0;
        else
            m->provisional.items[kept++] = e;
    }
    m->provisional.len = kept;
    bool provisional = m->eval_low < depth;
    uint8_t state = provisional ? (uint8_t)(3u + m->eval_low) : 2;
    if (provisional)
        ol_vec_push(&m->provisional, self);
    else
        m->eval_low = UINT32_MAX;
    if (outer_low < m->eval_low)
        m->eval_low = outer_low;
    return state;
}

ol_val ol_def_value(ol_model *m, uint32_t di)
{
    if (di >= m->defs.len)
        return UNKNOWN;
    ol_val kept;
    if (memo_read(m, m->def_state[di], &m->def_val[di], &kept))
        return kept;
    if (m->eval_depth > EVAL_MAX_DEPTH) {
        note_unfinished(m, 0);
        return BOTTOM;
    }
    size_t mark;
    uint32_t depth = m->eval_depth;
    uint32_t outer_low = memo_begin(m, &m->def_state[di], &m->def_val[di], &mark);
    m->eval_depth++;
    ol_val v = def_value_uncached(m, di);
    m->eval_depth--;
    const ol_def *d = &m->defs.items[di];
    if ((v.kind == OL_V_UNKNOWN || (v.kind == OL_V_OBJECT && object_may_be_torch(m, v))) &&
        (d->kind == OL_DEF_ASSIGN || d->kind == OL_DEF_WITH) && d->path_len == 0) {
        ol_val g = ol_eval__guess_from_name(m, d->name);
        /* a name alone only fills in what a call or attribute left open */
        ol_kind vk = ol_kind_of(m->tree, ol_unparen(m->tree, d->value));
        if (g.kind != OL_V_UNKNOWN && (vk == OL_N_call || vk == OL_N_attribute || vk == OL_N_subscript))
            v = g;
    }
    /* an instance of an imported class, a loaded object, a parameter, a loop
     * variable over a list of models: used like a module (x.eval(),
     * x.parameters()) it is one; a torch.load result that is called is a
     * pickled module */
    if (v.kind == OL_V_TENSOR && d->kind == OL_DEF_ASSIGN && d->path_len == 0 && calls_parameter(m, d->value) &&
        ol_eval__used_as_module(m, di, false))
        v = mk(OL_V_MODULE, 0); /* `self.net = model(shape)`, model a class handed in: see calls_parameter */
    if ((v.kind == OL_V_UNKNOWN || v.kind == OL_V_OBJECT) &&
        (d->kind == OL_DEF_ASSIGN || d->kind == OL_DEF_PARAM || d->kind == OL_DEF_WITH ||
         d->kind == OL_DEF_FOR)) {
        bool loaded = v.kind == OL_V_OBJECT && v.ref && strcmp(ol_sym_str(m, v.ref), "torch.load") == 0;
        if (ol_eval__used_as_module(m, di, loaded))
            v = mk(OL_V_MODULE, 0);
    }
    if (m->def_reaches_backward[di] &&
        (v.kind == OL_V_UNKNOWN || v.kind == OL_V_TENSOR || v.kind == OL_V_OBJECT || v.kind == OL_V_BOTTOM)) {
        v.kind = OL_V_TENSOR;
        v.flags |= OL_VF_GRAPH;
    }
    m->def_val[di] = v;
    m->def_state[di] = memo_end(m, depth, outer_low, mark, (uint32_t)di * 2 + 1);
    return v;
}

/* ---- expressions ------------------------------------------------------------------ */

static ol_val arith(ol_val a, ol_val b)
{
    uint8_t keep = OL_VF_GRAPH | OL_VF_LOSS | OL_VF_BATCH;
    /* an operand not known yet (a value read through the cut of a cycle) is
     * something else all the same: the batch does not survive it */
    if (a.kind == OL_V_BOTTOM)
        return b.kind == OL_V_TENSOR ? mk(OL_V_TENSOR, b.flags & keep & (uint8_t)~OL_VF_BATCH) : b;
    if (b.kind == OL_V_BOTTOM)
        return a.kind == OL_V_TENSOR ? mk(OL_V_TENSOR, a.flags & keep & (uint8_t)~OL_VF_BATCH) : a;
    if (a.kind == OL_V_TENSOR || b.kind == OL_V_TENSOR) {
        uint8_t f = 0;
        if (a.kind == OL_V_TENSOR)
            f |= a.flags & keep;
        if (b.kind == OL_V_TENSOR)
            f |= b.flags & keep;
        if ((a.flags | b.flags) & OL_VF_GRAPH)
            f |= OL_VF_GRAPH;
        /* a batch stops being "the batch" once combined with something else */
        if (!(a.kind == OL_V_TENSOR && (a.flags & OL_VF_BATCH) && b.kind == OL_V_TENSOR && (b.flags & OL_VF_BATCH)))
            f &= (uint8_t)~OL_VF_BATCH;
        return mk(OL_V_TENSOR, f);
    }
    if (a.kind == OL_V_NUMBER && b.kind == OL_V_NUMBER)
        return mk(OL_V_NUMBER, 0);
    if (a.kind == OL_V_LIST && b.kind == OL_V_LIST)
        return mk(OL_V_LIST, (a.flags | b.flags) & (OL_VF_ELEM_GRAPH | OL_VF_PARAM));
    if (a.kind == OL_V_STRING || b.kind == OL_V_STRING)
        return mk(OL_V_STRING, 0);
    if (a.kind == OL_V_ARRAY || b.kind == OL_V_ARRAY)
        return mk(OL_V_ARRAY, 0);
    if ((a.flags | b.flags) & OL_VF_GRAPH)
        return mk(OL_V_TENSOR, OL_VF_GRAPH | ((a.flags | b.flags) & OL_VF_LOSS));
    if (a.kind == OL_V_NUMBER)
        return b.kind == OL_V_UNKNOWN ? UNKNOWN : b;
    if (b.kind == OL_V_NUMBER)
        return a.kind == OL_V_UNKNOWN ? UNKNOWN : a;
    return UNKNOWN;
}

static ol_val eval_name(ol_model *m, ol_nid n)
{
    ol_sym name = ol_node_sym(m, n);
    uint32_t defs[32];
    size_t count = ol_reaching_defs(m, m->node_scope[n], name, n, defs, 32);
    if (count == 0) {
        /* bound nowhere in reach: a builtin, or a name from a star import */
        uint32_t s = m->node_scope[n];
        bool bound = false;
        while (s != OL_NO_INDEX && !bound) {
            bound = ol_scope_defs(m, s, name) != OL_NO_INDEX;
            s = m->scopes.items[s].parent;
        }
        if (!bound && m->links && m->links->star) {
            /* `from utils import *` of a file of the project that defines it */
            ol_sym q = m->links->star(m->links, m, name);
            if (q)
                return mk_ref(OL_V_EXTERN, 0, q);
        }
        if (!bound) {
            /* bound nowhere: a star import (`from utils import *`) brought it,
             * and the conventional spellings say what it is */
            static const struct { const char *name, *qual; } conventional[] = {
                {"torch", "torch"}, {"nn", "torch.nn"}, {"F", "torch.nn.functional"}, {"optim", "torch.optim"},
                {"np", "numpy"}, {"Variable", "torch.autograd.Variable"}, {"DataLoader", "torch.utils.data.DataLoader"},
            };
            const char *str = ol_sym_str(m, name);
            for (size_t i = 0; i < OL_ARRAY_LEN(conventional); i++)
                if (strcmp(str, conventional[i].name) == 0)
                    return mk_ref(OL_V_EXTERN, 0, ol_model_intern(m, conventional[i].qual));
        }
        if (!bound && ol_eval__is_builtin(ol_sym_str(m, name))) {
            char buf[96];
            const char *str = ol_sym_str(m, name);
            if (strlen(str) < sizeof(buf) - 10) {
                memcpy(buf, "builtins.", 9);
                strcpy(buf + 9, str);
                return mk_ref(OL_V_EXTERN, 0, ol_model_intern(m, buf));
            }
        }
        return UNKNOWN;
    }
    ol_val r = BOTTOM;
    for (size_t i = 0; i < count; i++)
        r = join(r, ol_def_value(m, defs[i]));
    return r;
}

static ol_val eval_attribute(ol_model *m, ol_nid n)
{
    const ol_tree *t = m->tree;
    ol_nid obj = ol_field(t, n, OL_F_object);
    ol_nid attr = ol_field(t, n, OL_F_attribute);
    if (attr == OL_NONE)
        return UNKNOWN;
    ol_sym a = ol_node_sym(m, attr);
    ol_val o = ol_eval(m, obj);
    const char *as = ol_sym_str(m, a);
    switch (o.kind) {
    case OL_V_EXTERN:
        return mk_ref(OL_V_EXTERN, 0, qual_join(m, o.ref, a));
    case OL_V_MODULE:
        if ((o.flags & OL_VF_LOCAL) && o.ref < m->classes.len)
            return ol_eval__class_attr(m, o.ref, a, 0);
        if (a == m->names.module)
            return mk(OL_V_MODULE, 0);
        /* a submodule of a model whose class is not known, named as one
         * (`self.model.encoder`, `model.decoder`) */
        if (ol_eval__guess_from_name(m, a).kind == OL_V_MODULE)
            return mk(OL_V_MODULE, 0);
        return UNKNOWN;
    case OL_V_INSTANCE:
        if ((o.flags & OL_VF_LOCAL) && o.ref < m->classes.len)
            return ol_eval__class_attr(m, o.ref, a, 0);
        return UNKNOWN;
    case OL_V_CLASS:
        return ol_eval__class_attr(m, o.ref, a, 0);
    case OL_V_TENSOR: {
        static const char *const no_graph[] = {"data", "grad", NULL};
        static const char *const meta[] = {"shape", "dtype", "device", "requires_grad", "is_cuda", "ndim",
                                           "grad_fn", "is_leaf", "layout", "names", NULL};
        if (qin(as, no_graph))
            return mk(OL_V_TENSOR, o.flags & OL_VF_BATCH);
        if (qin(as, meta))
            return mk(OL_V_OBJECT, 0);
        if (qeq(as, "indices"))
            return mk(OL_V_TENSOR, 0);
        return mk(OL_V_TENSOR, o.flags & (OL_VF_GRAPH | OL_VF_LOSS | OL_VF_BATCH));
    }
    case OL_V_UNKNOWN:
        if (qeq(as, "data") || qeq(as, "grad"))
            return mk(OL_V_TENSOR, 0);
        return UNKNOWN;
    default:
        return UNKNOWN;
    }
}

static ol_val tensor_method(ol_model *m, ol_val recv, const char *meth, ol_nid call)
{
    static const char *const to_number[] = {"item", "size", "dim", "numel", "nelement", "element_size",
                                            "stride", "data_ptr", "get_device", "is_contiguous",
                                            "is_floating_point", "ndimension", "__len__", NULL};
    static const char *const no_graph[] = {"detach", "detach_", "argmax", "argmin", "argsort", "eq", "ne",
                                           "lt", "gt", "le", "ge", "equal", "isnan", "isinf", "isfinite",
                                           "nonzero", "long", "int", "bool", "byte", "short", "char",
                                           "new_zeros", "new_ones", "new_empty", "new_full", "new_tensor",
                                           "zero_", "fill_", "count_nonzero", "bincount", "unique", NULL};
    static const char *const pair[] = {"max", "min", "sort", "topk", "kthvalue", "median", "mode", NULL};
    uint8_t keep = recv.flags & (OL_VF_GRAPH | OL_VF_LOSS | OL_VF_BATCH);
    if (qin(meth, to_number))
        return mk(OL_V_NUMBER, 0);
    if (qeq(meth, "tolist"))
        return mk(OL_V_LIST, 0);
    if (qeq(meth, "numpy"))
        return mk(OL_V_ARRAY, 0);
    if (qin(meth, no_graph))
        return mk(OL_V_TENSOR, recv.flags & OL_VF_BATCH);
    if (qeq(meth, "backward") || qeq(meth, "register_hook"))
        return mk(OL_V_NONE, 0);
    if (qeq(meth, "requires_grad_")) {
        ol_nid a = ol_call_arg(m, call, 0, "requires_grad");
        if (a != OL_NONE && ol_kind_of(m->tree, a) == OL_N_false)
            return mk(OL_V_TENSOR, keep & (uint8_t)~OL_VF_GRAPH);
        return mk(OL_V_TENSOR, keep | OL_VF_GRAPH);
    }
    if (qeq(meth, "type")) {
        if (ol_call_arg(m, call, 0, "dtype") == OL_NONE)
            return mk(OL_V_STRING, 0);
    }
    ol_val r = mk(OL_V_TENSOR, keep);
    if (qin(meth, pair))
        r.flags |= OL_VF_PAIR;
    /* x.add(y), x.mul(y): a graph-carrying argument makes one */
    static const char *const binary[] = {"add", "sub", "mul", "div", "matmul", "mm", "bmm", "pow",
                                         "add_", "sub_", "mul_", "div_", "copy_", "expand_as", "type_as",
                                         "masked_fill", "where", NULL};
    if (qin(meth, binary)) {
        uint8_t af = ol_eval__args_flags(m, call, NULL);
        r.flags |= af & OL_VF_GRAPH;
    }
    return r;
}

static ol_val module_method(ol_model *m, ol_val recv, ol_sym method, ol_nid call)
{
    static const char *const same[] = {"to", "cuda", "cpu", "half", "float", "double", "bfloat16", "train",
                                       "eval", "requires_grad_", "apply", "type", "share_memory", "compile",
                                       "to_empty", NULL};
    const char *meth = ol_sym_str(m, method);
    if (qin(meth, same))
        return recv;
    if (qeq(meth, "forward") || qeq(meth, "__call__"))
        return mk(OL_V_TENSOR, OL_VF_GRAPH | ((recv.flags & OL_VF_LOSSFN) ? OL_VF_LOSS : 0));
    if (qeq(meth, "parameters") || qeq(meth, "named_parameters"))
        return mk(OL_V_LIST, OL_VF_ELEM_GRAPH | OL_VF_PARAM);
    if (qeq(meth, "state_dict"))
        return mk(OL_V_DICT, 0);
    if (qeq(meth, "generate"))
        return mk(OL_V_TENSOR, 0);
    /* a model's named entry points run part of it: forward_features(),
     * encode_image(), extract_features(), get_text_features() */
    if (!(recv.flags & OL_VF_LOSSFN) &&
        (ol_str_has_prefix(meth, "forward_") || ol_str_has_prefix(meth, "encode") ||
         ol_str_has_prefix(meth, "decode") || ol_str_has_prefix(meth, "extract_feat") ||
         ol_str_has_suffix(meth, "_features") || qeq(meth, "embed")) &&
        !((recv.flags & OL_VF_LOCAL) && recv.ref < m->classes.len && ol_eval__find_method(m, recv.ref, method, 0) != OL_NO_INDEX))
        return mk(OL_V_TENSOR, OL_VF_GRAPH);
    ol_val linked;
    ol_sym base;
    if ((recv.flags & OL_VF_LOCAL) && recv.ref < m->classes.len) {
        uint32_t fi = ol_eval__find_method(m, recv.ref, method, 0);
        if (fi != OL_NO_INDEX)
            return ol_eval__function_result(m, fi);
        /* defined by a base class in another file of the project */
        if (ol_eval__inherited(m, recv.ref, method, &base, &linked, 0))
            return linked;
    }
    if (!(recv.flags & OL_VF_LOCAL) && recv.ref && m->links &&
        m->links->call(m->links, m, recv.ref, method, -1, NULL, &linked))
        return linked;
    (void)call;
    return UNKNOWN;
}

static ol_val eval_call(ol_model *m, ol_nid n)
{
    const ol_tree *t = m->tree;
    ol_nid callee = ol_unparen(t, ol_field(t, n, OL_F_function));
    if (callee == OL_NONE)
        return UNKNOWN;
    uint32_t ci = m->node_call[n];
    if (ol_kind_of(t, callee) == OL_N_attribute && ci != OL_NO_INDEX) {
        const ol_call *c = &m->calls.items[ci];
        ol_sym method = c->name;
        ol_val rv = ol_eval(m, c->receiver);
        const char *meth = ol_sym_str(m, method);
        /* it.next() (Python 2 spelling) / it.__next__(): one element */
        if ((strcmp(meth, "next") == 0 || strcmp(meth, "__next__") == 0) && ol_call_arg(m, n, 0, NULL) == OL_NONE &&
            rv.kind != OL_V_EXTERN && rv.kind != OL_V_OBJECT)
            return ol_eval__eval_path(m, c->receiver, true, NULL, 0);
        switch (rv.kind) {
        case OL_V_EXTERN: {
            const char *q = ol_sym_str(m, qual_join(m, rv.ref, method));
            return ol_eval__call_extern(m, q, n);
        }
        case OL_V_TENSOR:
            return tensor_method(m, rv, meth, n);
        case OL_V_MODULE: {
            ol_val r = module_method(m, rv, method, n);
            if (r.kind != OL_V_UNKNOWN || !(rv.flags & OL_VF_LOCAL))
                return r;
            break; /* self.encoder(x): a submodule held in an attribute */
        }
        case OL_V_INSTANCE:
            if ((rv.flags & OL_VF_LOCAL) && rv.ref < m->classes.len) {
                uint32_t fi = ol_eval__find_method(m, rv.ref, method, 0);
                if (fi != OL_NO_INDEX)
                    return ol_eval__function_result(m, fi);
                ol_sym base;
                ol_val linked;
                if (ol_eval__inherited(m, rv.ref, method, &base, &linked, 0))
                    return linked;
            }
            break; /* an attribute holding a callable: self.criterion(...) */
        case OL_V_CLASS: {
            uint32_t fi = ol_eval__find_method(m, rv.ref, method, 0);
            if (fi != OL_NO_INDEX)
                return ol_eval__function_result(m, fi);
            break;
        }
        case OL_V_OBJECT:
            if (rv.ref)
                return ol_eval__call_object_method(m, ol_sym_str(m, rv.ref), method, n);
            return mk(OL_V_OBJECT, 0);
        case OL_V_SCALER:
            if (method == m->names.scale) {
                ol_nid a = ol_call_arg(m, n, 0, "outputs");
                return a != OL_NONE ? ol_eval(m, a) : UNKNOWN;
            }
            return mk(OL_V_NONE, 0);
        case OL_V_OPTIMIZER:
        case OL_V_SCHEDULER:
            if (qeq(meth, "state_dict"))
                return mk(OL_V_DICT, 0);
            return mk(OL_V_OBJECT, 0);
        case OL_V_NUMBER:
            return mk(OL_V_NUMBER, 0);
        case OL_V_STRING:
            return qeq(meth, "split") ? mk(OL_V_LIST, 0) : mk(OL_V_STRING, 0);
        case OL_V_ARRAY:
            return qeq(meth, "item") ? mk(OL_V_NUMBER, 0) : mk(OL_V_ARRAY, 0);
        case OL_V_LIST:
            if (qeq(meth, "pop"))
                return ol_eval__elem_of_val(rv);
            if (qeq(meth, "copy"))
                return rv;
            return mk(OL_V_NONE, 0);
        case OL_V_DICT:
            if (qeq(meth, "get") || qeq(meth, "pop") || qeq(meth, "setdefault")) {
                if (rv.flags & OL_VF_ELEM_GRAPH)
                    return mk(OL_V_TENSOR, OL_VF_GRAPH);
                return UNKNOWN;
            }
            if (qeq(meth, "values") || qeq(meth, "items") || qeq(meth, "copy"))
                return mk(OL_V_LIST, rv.flags & OL_VF_ELEM_GRAPH);
            if (qeq(meth, "keys"))
                return mk(OL_V_LIST, 0);
            return UNKNOWN;
        case OL_V_LOADER:
        case OL_V_DATASET:
            return UNKNOWN;
        default: {
            /* receiver unknown: the method name alone can still tell */
            static const char *const number_methods[] = {"item", "numel", "nelement", NULL};
            if (qin(meth, number_methods))
                return mk(OL_V_NUMBER, 0);
            if (qeq(meth, "detach") || qeq(meth, "detach_"))
                return mk(OL_V_TENSOR, 0);
            if (qeq(meth, "tolist"))
                return mk(OL_V_LIST, 0);
            if (qeq(meth, "numpy"))
                return mk(OL_V_ARRAY, 0);
            if (qeq(meth, "forward")) {
                /* self.model.forward(x) on something nothing is known about */
                ol_nid recv = c->receiver;
                ol_nid name_node = ol_kind_of(t, recv) == OL_N_attribute ? ol_field(t, recv, OL_F_attribute) : recv;
                if (name_node != OL_NONE && ol_kind_of(t, name_node) == OL_N_identifier) {
                    ol_val g = ol_eval__guess_from_name(m, ol_node_sym(m, name_node));
                    if (g.kind == OL_V_MODULE)
                        return mk(OL_V_TENSOR, OL_VF_GRAPH);
                }
            }
            return UNKNOWN;
        }
        }
    }
    ol_val cv = ol_eval(m, callee);
    switch (cv.kind) {
    case OL_V_EXTERN:
        return ol_eval__call_extern(m, ol_sym_str(m, cv.ref), n);
    case OL_V_CLASS:
        if (cv.ref < m->classes.len)
            return ol_eval__instance_of_class(m, cv.ref);
        return UNKNOWN;
    case OL_V_FUNCTION: {
        ol_val r = ol_eval__function_result(m, cv.ref);
        if ((r.flags & OL_VF_GRAPH) && graph_only_from_args(m, cv.ref) && args_known_graph_free(m, n))
            r.flags &= (uint8_t)~OL_VF_GRAPH;
        return r;
    }
    case OL_V_MODULE:
        if ((cv.flags & OL_VF_LOSSFN) && loss_of_detached(m, n))
            return mk(OL_V_TENSOR, OL_VF_LOSS);
        return mk(OL_V_TENSOR, OL_VF_GRAPH | ((cv.flags & OL_VF_LOSSFN) ? OL_VF_LOSS : 0));
    default:
        return UNKNOWN;
    }
}

/* A helper whose every call is arithmetic on its arguments, a tensor method
 * or a torch function (`tre(fixed, moving)`: `((fixed - moving) ** 2).sum(-1)
 * .sqrt().mean()`): whatever graph its result has comes through the
 * arguments, not from a model it runs. Its result is otherwise joined over
 * every caller, so a call on data alone took the graph of a call on a
 * model's output elsewhere. */
static const char *const TENSOR_ONLY_METHODS[] = {
    "clone", "contiguous", "unsqueeze", "squeeze", "view", "view_as", "reshape", "reshape_as", "flatten",
    "permute", "transpose", "expand", "expand_as", "gather", "scatter", "index_select", "masked_fill",
    "masked_select", "log_softmax", "softmax", "sigmoid", "exp", "log", "sqrt", "pow", "abs", "clamp", "sum",
    "mean", "prod", "norm", "float", "double", "half", "long", "int", "bool", "ne", "eq", "lt", "gt", "le", "ge",
    "argmax", "argmin", "max", "min", "cumsum", "narrow", "roll", "flip", "type_as", "new_zeros", "new_ones",
    "size", "dim", "numel", "item", "detach", NULL};

static bool graph_only_from_args(ol_model *m, uint32_t fi)
{
    const ol_tree *t = m->tree;
    if (fi >= m->functions.len || m->functions.items[fi].is_method)
        return false;
    ol_nid node = m->functions.items[fi].node;
    size_t first, end = ol_calls_in(m, node, &first);
    for (size_t i = first; i < end; i++) {
        const ol_call *c = &m->calls.items[i];
        if (c->receiver != OL_NONE) {
            ol_val rv = ol_eval(m, c->receiver);
            if (rv.kind == OL_V_EXTERN) {
                const char *q = ol_sym_str(m, rv.ref);
                if (q && (strcmp(q, "torch") == 0 || ol_str_has_prefix(q, "torch.")))
                    continue;
                return false;
            }
            if (rv.kind == OL_V_TENSOR || rv.kind == OL_V_NUMBER)
                continue;
            /* a receiver of unknown kind (a parameter whose callers pass
             * several kinds) on which only a tensor has the method */
            if (rv.kind == OL_V_UNKNOWN && qin(ol_sym_str(m, c->name), TENSOR_ONLY_METHODS))
                continue;
            return false;
        }
        const char *q = ol_qualname(m, ol_unparen(t, c->callee));
        if (q && (ol_str_has_prefix(q, "torch.") || ol_str_has_prefix(q, "builtins.")))
            continue;
        return false;
    }
    return true;
}

/* Does the callee's name say it moves its first argument to a device and
 * returns it (`to_device(batch, device)`, Accelerate's `send_to_device`)?
 * Its result is then that argument, moved. */
static bool device_move_helper(ol_model *m, ol_nid call)
{
    static const char *const names[] = {"to_device", "send_to_device", "move_to_device", "batch_to_device",
                                        "to_cuda", "to_gpu", "move_to", NULL};
    const ol_tree *t = m->tree;
    ol_nid callee = ol_unparen(t, ol_field(t, call, OL_F_function));
    if (callee != OL_NONE && ol_kind_of(t, callee) == OL_N_attribute)
        callee = ol_field(t, callee, OL_F_attribute);
    return callee != OL_NONE && ol_kind_of(t, callee) == OL_N_identifier &&
           qin(ol_sym_str(m, ol_node_sym(m, callee)), names);
}

/* A value whose kind is not known but which cannot carry a graph because of
 * where it comes from: an attribute or item of a name whose every binding
 * reaching here was computed with autograd off (`with torch.no_grad():
 * outputs = model(**batch)` ... `outputs.logits`), or is a graph-free tensor
 * such as a loader's batch, possibly passed through a helper that moves it
 * to the device (`batch = to_device(batch, device)`). */
static bool graph_free_by_origin(ol_model *m, ol_nid e, int depth)
{
    const ol_tree *t = m->tree;
    e = ol_unparen(t, e);
    if (e == OL_NONE || depth > 4)
        return false;
    ol_val v = ol_eval(m, e);
    if (v.kind != OL_V_UNKNOWN && v.kind != OL_V_BOTTOM)
        return !(v.flags & (OL_VF_GRAPH | OL_VF_ELEM_GRAPH));
    ol_kind k = ol_kind_of(t, e);
    if (k == OL_N_attribute)
        return graph_free_by_origin(m, ol_field(t, e, OL_F_object), depth + 1);
    if (k == OL_N_subscript)
        return graph_free_by_origin(m, ol_field(t, e, OL_F_value), depth + 1);
    if (k == OL_N_call) {
        if (ol_grad_disabled(m, e))
            return true;
        if (device_move_helper(m, e)) {
            ol_nid a = ol_call_arg(m, e, 0, NULL);
            return a != OL_NONE && graph_free_by_origin(m, a, depth + 1);
        }
        return false;
    }
    if (k != OL_N_identifier)
        return false;
    uint32_t defs[8];
    size_t n = ol_reaching_defs(m, m->node_scope[e], ol_node_sym(m, e), e, defs, 8);
    if (n == 0 || n > 8)
        return false;
    for (size_t i = 0; i < n; i++) {
        const ol_def *d = &m->defs.items[defs[i]];
        if (d->kind != OL_DEF_ASSIGN || d->path_len != 0 || d->value == OL_NONE)
            return false;
        if (ol_grad_disabled(m, d->value))
            continue;
        if (!graph_free_by_origin(m, d->value, depth + 1))
            return false;
    }
    return true;
}

/* Is every argument of the call known, and none of them carrying a graph? */
static bool args_known_graph_free(ol_model *m, ol_nid call)
{
    const ol_tree *t = m->tree;
    ol_nid args = ol_field(t, call, OL_F_arguments);
    if (args == OL_NONE || ol_kind_of(t, args) != OL_N_argument_list)
        return false;
    for (ol_nid a = ol_first_named(t, args); a != OL_NONE; a = ol_next_named(t, a)) {
        ol_kind k = ol_kind_of(t, a);
        if (k == OL_N_list_splat || k == OL_N_dictionary_splat)
            return false;
        ol_nid e = k == OL_N_keyword_argument ? ol_field(t, a, OL_F_value) : a;
        ol_val v = ol_eval(m, e);
        if (v.kind == OL_V_UNKNOWN || v.kind == OL_V_BOTTOM) {
            if (!graph_free_by_origin(m, e, 0))
                return false;
        } else if (v.flags & (OL_VF_GRAPH | OL_VF_ELEM_GRAPH)) {
            return false;
        }
    }
    return true;
}

/* Does expression e cut the graph on its way: `p.detach()`, `p.detach().cpu()`,
 * `p.data`? */
static bool cuts_graph(ol_model *m, ol_nid e, int depth)
{
    const ol_tree *t = m->tree;
    e = ol_unparen(t, e);
    if (e == OL_NONE || depth > 8)
        return false;
    ol_kind k = ol_kind_of(t, e);
    if (k == OL_N_attribute) {
        uint32_t len;
        const char *a = ol_text(t, ol_field(t, e, OL_F_attribute), &len);
        if (len == 4 && memcmp(a, "data", 4) == 0)
            return true;
        return false;
    }
    if (k != OL_N_call)
        return false;
    ol_nid f = ol_unparen(t, ol_field(t, e, OL_F_function));
    if (ol_kind_of(t, f) != OL_N_attribute)
        return false;
    uint32_t len;
    const char *a = ol_text(t, ol_field(t, f, OL_F_attribute), &len);
    if ((len == 6 && memcmp(a, "detach", 6) == 0) || (len == 5 && memcmp(a, "numpy", 5) == 0))
        return true;
    return cuts_graph(m, ol_field(t, f, OL_F_object), depth + 1);
}

/* A loss function called on detached inputs, `criterion(pred.detach().cpu(),
 * true.detach().cpu())`: at least one argument cuts the graph and none
 * carries one, so the loss has no graph (a validation loss computed for
 * reporting). */
static bool loss_of_detached(ol_model *m, ol_nid call)
{
    const ol_tree *t = m->tree;
    ol_nid args = ol_field(t, call, OL_F_arguments);
    if (args == OL_NONE || ol_kind_of(t, args) != OL_N_argument_list)
        return false;
    bool cut = false;
    for (ol_nid a = ol_first_named(t, args); a != OL_NONE; a = ol_next_named(t, a)) {
        ol_kind k = ol_kind_of(t, a);
        if (k == OL_N_list_splat || k == OL_N_dictionary_splat)
            return false;
        ol_nid e = k == OL_N_keyword_argument ? ol_field(t, a, OL_F_value) : a;
        if (cuts_graph(m, e, 0)) {
            cut = true;
            continue;
        }
        ol_val v = ol_eval(m, e);
        if (v.kind == OL_V_UNKNOWN || (v.flags & (OL_VF_GRAPH | OL_VF_ELEM_GRAPH)))
            return false;
    }
    return cut;
}

/* A model kept under a key of a dict or in a list (`{"generator": G(...),
 * "discriminator": D(...)}`): a module the evaluator knows, not a loss
 * function, built or named here, not a name's guess. */
static bool object_may_be_torch(ol_model *m, ol_val v);

/* The name of the class or factory a value's method chain starts from
 * (`Loss(...).to(device)` -> "Loss", `models.Generator(...)` ->
 * "Generator"), or NULL. */
static const char *chain_callee_name(ol_model *m, ol_nid e, uint32_t *len)
{
    const ol_tree *t = m->tree;
    ol_nid callee = ol_unparen(t, e);
    if (ol_kind_of(t, callee) != OL_N_call)
        return NULL;
    for (int depth = 0; depth < 8 && ol_kind_of(t, callee) == OL_N_call; depth++) {
        callee = ol_unparen(t, ol_field(t, callee, OL_F_function));
        ol_nid obj = ol_kind_of(t, callee) == OL_N_attribute ? ol_unparen(t, ol_field(t, callee, OL_F_object)) : OL_NONE;
        if (obj != OL_NONE && ol_kind_of(t, obj) == OL_N_call)
            callee = obj; /* `Loss(...).to(device)`: the call the chain starts from */
    }
    if (ol_kind_of(t, callee) == OL_N_attribute)
        callee = ol_field(t, callee, OL_F_attribute);
    if (callee == OL_NONE || ol_kind_of(t, callee) != OL_N_identifier)
        return NULL;
    return ol_text(t, callee, len);
}

/* A class named as a model, also where an acronym hides the word from the
 * name's tokens (`ParallelWaveGANGenerator`, `ResNet`): it ends in one. */
static bool class_named_as_model(const char *s, uint32_t len)
{
    static const char *const ends[] = {"model", "net", "network", "encoder", "decoder", "generator",
                                       "discriminator", "classifier", "backbone", "critic", NULL};
    if (ol_name_is_model(s, len))
        return true;
    for (size_t i = 0; ends[i]; i++) {
        size_t el = strlen(ends[i]);
        if (len > el && strncasecmp(s + len - el, ends[i], el) == 0)
            return true;
    }
    return false;
}

static bool object_may_be_torch(ol_model *m, ol_val v);

/* A model kept under a key of a dict or in a list (`{"generator": G(...),
 * "discriminator": D(...)}`): a module the evaluator knows, not a loss
 * function; or an instance of a class imported from elsewhere whose class
 * and key are both named as models (`"generator":
 * ParallelWaveGANGenerator(...).to(device)`), as a name bound to it would be
 * read (ol_def_value). Two names, for the key alone also names the
 * optimizer of that model in the optimizers' dict. */
static bool element_is_model(ol_model *m, ol_nid pair, ol_nid e, ol_val v)
{
    const ol_tree *t = m->tree;
    uint32_t clen = 0;
    const char *cname = chain_callee_name(m, e, &clen);
    if (cname && ol_name_is_loss_fn(cname, clen))
        return false; /* a criterion of another file the evaluator may not know for a loss */
    const char *key;
    uint32_t klen;
    if ((v.kind == OL_V_UNKNOWN || (v.kind == OL_V_OBJECT && object_may_be_torch(m, v))) && pair != OL_NONE &&
        cname && class_named_as_model(cname, clen) &&
        ol_string_value(t, ol_field(t, pair, OL_F_key), &key, &klen) && ol_name_is_model(key, klen) &&
        !ol_name_is_loss_fn(key, klen))
        return true;
    return v.kind == OL_V_MODULE && !(v.flags & OL_VF_LOSSFN);
}

static ol_val collection(ol_model *m, ol_nid n, ol_vkind kind)
{
    const ol_tree *t = m->tree;
    uint8_t flags = 0;
    size_t count = 0, models = 0;
    for (ol_nid c = ol_first_named(t, n); c != OL_NONE; c = ol_next_named(t, c)) {
        ol_nid e = c;
        if (ol_kind_of(t, c) == OL_N_pair)
            e = ol_field(t, c, OL_F_value);
        else if (ol_kind_of(t, c) == OL_N_list_splat || ol_kind_of(t, c) == OL_N_dictionary_splat)
            e = ol_first_named(t, c), count++; /* elements nobody here sees */
        ol_val v = ol_eval(m, e);
        if ((v.flags & (OL_VF_GRAPH | OL_VF_ELEM_GRAPH)))
            flags |= OL_VF_ELEM_GRAPH;
        count++;
        models += element_is_model(m, ol_kind_of(t, c) == OL_N_pair ? c : OL_NONE, e, v);
    }
    ol_val r = mk(kind, flags);
    /* every element a model: an element taken by a key or an index that
     * cannot be read where it is taken (`self.model[key]`, the dict handed
     * to a trainer) is one of them */
    if ((kind == OL_V_DICT || kind == OL_V_LIST) && count > 0 && models == count)
        r.info = OL_V_MODULE;
    return r;
}

/* A forward of a model frozen before it (ol_frozen_before) on input that
 * carries no graph: autograd records nothing. */
static bool frozen_forward(ol_model *m, ol_nid n)
{
    const ol_tree *t = m->tree;
    uint32_t ci = m->node_call[n];
    if (ci == OL_NO_INDEX)
        return false;
    ol_nid callee = ol_unparen(t, m->calls.items[ci].callee);
    return ol_is_forward_call(m, ci) && ol_frozen_before(m, callee, n) && !ol_inputs_carry_graph(m, n);
}

static ol_val eval_node(ol_model *m, ol_nid n)
{
    const ol_tree *t = m->tree;
    switch (ol_kind_of(t, n)) {
    case OL_N_identifier:
        return eval_name(m, n);
    case OL_N_attribute:
        return eval_attribute(m, n);
    case OL_N_call: {
        ol_val v = eval_call(m, n);
        if ((v.flags & OL_VF_GRAPH) && (ol_grad_disabled(m, n) || frozen_forward(m, n)))
            v.flags &= (uint8_t)~OL_VF_GRAPH;
        return v;
    }
    case OL_N_parenthesized_expression:
    case OL_N_await:
        return ol_eval(m, ol_first_named(t, n));
    case OL_N_named_expression:
        return ol_eval(m, ol_field(t, n, OL_F_value));
    case OL_N_binary_operator: {
        ol_val r = arith(ol_eval(m, ol_field(t, n, OL_F_left)), ol_eval(m, ol_field(t, n, OL_F_right)));
        if ((r.flags & OL_VF_GRAPH) && ol_grad_disabled(m, n))
            r.flags &= (uint8_t)~OL_VF_GRAPH;
        return r;
    }
    case OL_N_unary_operator: {
        ol_val r = ol_eval(m, ol_field(t, n, OL_F_argument));
        if (r.kind == OL_V_TENSOR && (r.flags & OL_VF_GRAPH) && ol_grad_disabled(m, n))
            r.flags &= (uint8_t)~OL_VF_GRAPH;
        return r;
    }
    case OL_N_comparison_operator:
    case OL_N_not_operator:
    case OL_N_boolean_operator: {
        if (ol_kind_of(t, n) == OL_N_boolean_operator) {
            ol_val a = ol_eval(m, ol_field(t, n, OL_F_left));
            ol_val b = ol_eval(m, ol_field(t, n, OL_F_right));
            return join(a, b);
        }
        bool tensor = false;
        for (ol_nid c = ol_first_named(t, n); c != OL_NONE; c = ol_next_named(t, c))
            if (ol_eval(m, c).kind == OL_V_TENSOR)
                tensor = true;
        return tensor ? mk(OL_V_TENSOR, 0) : mk(OL_V_NUMBER, 0);
    }
    case OL_N_conditional_expression: {
        ol_nid a = ol_named_child(t, n, 0);
        ol_nid b = ol_named_child(t, n, 2);
        return join(ol_eval(m, a), ol_eval(m, b));
    }
    case OL_N_subscript: {
        ol_val v = ol_eval(m, ol_field(t, n, OL_F_value));
        ol_nid idx = ol_field(t, n, OL_F_subscript);
        ol_val r;
        switch (v.kind) {
        case OL_V_TENSOR:
            r = mk(OL_V_TENSOR, v.flags & (OL_VF_GRAPH | OL_VF_LOSS | OL_VF_BATCH));
            if ((v.flags & OL_VF_PAIR) && ol_text_is(t, idx, "1"))
                r.flags &= (uint8_t)~(OL_VF_GRAPH | OL_VF_LOSS);
            if (ol_kind_of(t, idx) == OL_N_string) {
                /* a tensor has no string keys: what was called returned a dict.
                 * Its element when the callee's returns say; else a model's
                 * outputs all carry the graph, while a loss function's "loss"
                 * entries are losses and its other entries (a reward, an
                 * accuracy) may be anything */
                ol_val e;
                const char *ks;
                uint32_t klen;
                static const char *const loss_words[] = {"loss", "losses", NULL};
                if (ol_eval__subscript_element(m, n, &e))
                    r = e;
                else if ((v.flags & OL_VF_LOSS) &&
                         (!ol_string_value(t, idx, &ks, &klen) || !ol_name_looks_like(ks, klen, loss_words)))
                    r = UNKNOWN;
            }
            break;
        case OL_V_LIST:
        case OL_V_TUPLE:
        case OL_V_DICT:
            if (ol_kind_of(t, idx) == OL_N_slice)
                r = v;
            else if (ol_eval__subscript_element(m, n, &r))
                break;
            else if (v.flags & OL_VF_ELEM_GRAPH)
                r = mk(OL_V_TENSOR, OL_VF_GRAPH);
            else if (v.info == OL_V_DATASET)
                r = mk(OL_V_DATASET, 0);
            else if (v.info == OL_V_MODULE && ol_kind_of(t, idx) != OL_N_slice)
                r = mk(OL_V_MODULE, 0);
            else
                r = UNKNOWN;
            break;
        case OL_V_LOADER:
        case OL_V_DATASET:
            r = mk(OL_V_TENSOR, OL_VF_BATCH);
            break;
        case OL_V_ARRAY:
            r = mk(OL_V_ARRAY, 0);
            break;
        case OL_V_STRING:
            r = mk(OL_V_STRING, 0);
            break;
        default:
            r = (v.flags & OL_VF_GRAPH) ? mk(OL_V_TENSOR, OL_VF_GRAPH) : UNKNOWN;
            break;
        }
        if ((r.flags & OL_VF_GRAPH) && r.kind == OL_V_TENSOR && v.kind == OL_V_TENSOR && ol_grad_disabled(m, n))
            r.flags &= (uint8_t)~OL_VF_GRAPH;
        return r;
    }
    case OL_N_integer:
    case OL_N_float:
    case OL_N_true:
    case OL_N_false:
        return mk(OL_V_NUMBER, 0);
    case OL_N_string:
    case OL_N_concatenated_string:
        return mk(OL_V_STRING, 0);
    case OL_N_none:
        return mk(OL_V_NONE, 0);
    case OL_N_list:
        return collection(m, n, OL_V_LIST);
    case OL_N_tuple:
    case OL_N_expression_list:
        return collection(m, n, OL_V_TUPLE);
    case OL_N_set:
        return collection(m, n, OL_V_SET);
    case OL_N_dictionary:
        return collection(m, n, OL_V_DICT);
    case OL_N_list_comprehension:
    case OL_N_set_comprehension:
    case OL_N_generator_expression:
    case OL_N_dictionary_comprehension: {
        ol_nid body = ol_field(t, n, OL_F_body);
        if (ol_kind_of(t, body) == OL_N_pair)
            body = ol_field(t, body, OL_F_value);
        ol_val v = ol_eval(m, body);
        ol_vkind kind = ol_kind_of(t, n) == OL_N_dictionary_comprehension ? OL_V_DICT
                        : ol_kind_of(t, n) == OL_N_set_comprehension  ? OL_V_SET
                                                                      : OL_V_LIST;
        return mk(kind, (v.flags & (OL_VF_GRAPH | OL_VF_ELEM_GRAPH)) ? OL_VF_ELEM_GRAPH : 0);
    }
    case OL_N_lambda: {
        for (size_t i = 0; i < m->functions.len; i++)
            if (m->functions.items[i].node == n)
                return mk_ref(OL_V_FUNCTION, 0, (uint32_t)i);
        return UNKNOWN;
    }
    default:
        return UNKNOWN;
    }
}

ol_val ol_eval(ol_model *m, ol_nid n)
{
    if (n == OL_NONE || n >= m->tree->nodes.len)
        return UNKNOWN;
    ol_val kept;
    if (memo_read(m, m->node_state[n], &m->node_val[n], &kept))
        return kept;
    if (m->eval_depth > EVAL_MAX_DEPTH) {
        note_unfinished(m, 0);
        return UNKNOWN;
    }
    size_t mark;
    uint32_t depth = m->eval_depth;
    uint32_t outer_low = memo_begin(m, &m->node_state[n], &m->node_val[n], &mark);
    m->eval_depth++;
    ol_val v = eval_node(m, n);
    m->eval_depth--;
    m->node_val[n] = v;
    m->node_state[n] = memo_end(m, depth, outer_low, mark, (uint32_t)n * 2);
    return v;
}

const char *ol_qualname(ol_model *m, ol_nid expr)
{
    if (expr == OL_NONE)
        return NULL;
    ol_val v = ol_eval(m, ol_unparen(m->tree, expr));
    if (v.kind != OL_V_EXTERN)
        return NULL;
    return ol_sym_str(m, v.ref);
}

/* ---- rule-facing predicates ----------------------------------------------------- */

bool ol_is_optimizer_expr(ol_model *m, ol_nid expr)
{
    ol_val v = ol_eval(m, expr);
    return v.kind == OL_V_OPTIMIZER;
}

static bool iter_draws_batches(ol_model *m, ol_nid iter, int depth)
{
    const ol_tree *t = m->tree;
    iter = ol_unparen(t, iter);
    if (iter == OL_NONE || depth > 6)
        return false;
    ol_kind k = ol_kind_of(t, iter);
    if (k == OL_N_call) {
        if (ol_eval__callee_is_builtin(m, iter, m->names.enumerate) || ol_eval__is_passthrough_iter(m, iter))
            return iter_draws_batches(m, ol_call_arg(m, iter, 0, "iterable"), depth + 1);
        if (ol_eval__callee_is_builtin(m, iter, m->names.zip)) {
            for (int i = 0; i < 4; i++) {
                ol_nid a = ol_call_arg(m, iter, i, NULL);
                if (a == OL_NONE)
                    break;
                if (iter_draws_batches(m, a, depth + 1))
                    return true;
            }
            return false;
        }
    }
    ol_val v = ol_eval(m, iter);
    if (v.kind == OL_V_LOADER)
        return true;
    if (v.kind == OL_V_UNKNOWN || v.kind == OL_V_OBJECT) {
        ol_nid name = iter;
        if (k == OL_N_attribute)
            name = ol_field(t, iter, OL_F_attribute);
        if (name != OL_NONE && ol_kind_of(t, name) == OL_N_identifier) {
            uint32_t len;
            const char *s = ol_text(t, name, &len);
            return ol_name_looks_like(s, len, LOADER_WORDS);
        }
    }
    return false;
}

/* Does the loop iterate something that yields batches? */
static bool loop_iterates_batches(ol_model *m, uint32_t li)
{
    const ol_loop *loop = &m->loops.items[li];
    return loop->iter != OL_NONE && iter_draws_batches(m, loop->iter, 0);
}

bool ol_loop_draws_batches(ol_model *m, uint32_t li)
{
    return loop_iterates_batches(m, li);
}

/* Is n inside a per-batch context already: a loop over batches around it in
 * its function, or a Lightning training_step (or a function nested in one)? */
static bool inside_batch_context(ol_model *m, uint32_t li)
{
    for (uint32_t l = m->loops.items[li].parent; l != OL_NO_INDEX; l = m->loops.items[l].parent)
        if (loop_iterates_batches(m, l))
            return true;
    for (uint32_t fn = ol_function_of(m, m->loops.items[li].node); fn != OL_NO_INDEX;
         fn = m->scopes.items[m->functions.items[fn].outer_scope].function) {
        if (ol_function_hook(m, fn) == OL_HOOK_TRAIN_STEP)
            return true;
        if (m->scopes.items[m->functions.items[fn].outer_scope].function == fn)
            break;
    }
    return false;
}

/* `next(train_iter)`, `next(loader_iterator)`: a batch drawn from a data
 * loader's iterator (by its value, or a name made for one). */
static bool draws_from_iterator(ol_model *m, const ol_call *c)
{
    const ol_tree *t = m->tree;
    const char *q = ol_qualname(m, c->callee);
    if (!q || strcmp(q, "builtins.next") != 0)
        return false;
    ol_nid a = ol_unparen(t, ol_call_arg(m, c->node, 0, NULL));
    if (a == OL_NONE)
        return false;
    if (ol_eval(m, a).kind == OL_V_LOADER)
        return true;
    ol_nid name = ol_kind_of(t, a) == OL_N_attribute ? ol_field(t, a, OL_F_attribute) : a;
    if (name == OL_NONE || ol_kind_of(t, name) != OL_N_identifier)
        return false;
    static const char *const words[] = {"iter", "iterator", "it", "loader", "dataloader", "dl", "batches", NULL};
    uint32_t len;
    const char *s = ol_text(t, name, &len);
    return ol_name_looks_like(s, len, words);
}

bool ol_loop_is_data_loop(ol_model *m, uint32_t li)
{
    ol_loop *loop = &m->loops.items[li];
    if (loop->data_state >= 0)
        return loop->data_state == 1;
    loop->data_state = 0;
    bool data = loop_iterates_batches(m, li);
    /* a loop that trains each iteration draws a batch each iteration, unless
     * it repeats over a batch some enclosing loop or hook already drew */
    if (!data && m->loops.items[li].kind != OL_LOOP_COMPREHENSION && !inside_batch_context(m, li)) {
        ol_nid body = m->loops.items[li].body;
        if (body != OL_NONE) {
            uint32_t fn = ol_function_of(m, m->loops.items[li].node);
            size_t first, end = ol_calls_in(m, body, &first);
            for (size_t i = first; i < end; i++) {
                const ol_call *c = &m->calls.items[i];
                if (ol_function_of(m, c->node) != fn)
                    continue;
                if (c->name == m->names.backward || c->name == m->names.manual_backward) {
                    data = true;
                    break;
                }
                if (c->name == m->names.step && c->receiver != OL_NONE && ol_is_optimizer_expr(m, c->receiver)) {
                    data = true;
                    break;
                }
                if (draws_from_iterator(m, c)) {
                    data = true;
                    break;
                }
            }
        }
    }
    m->loops.items[li].data_state = data ? 1 : 0;
    return data;
}
