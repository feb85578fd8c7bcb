/*
 * eval.c - what an expression is, computed the way a reader works it out.
 *
 * ol_eval() maps an expression to an ol_val: a kind (module, optimizer,
 * loader, tensor, imported name, ...) plus flags, chief among them
 * OL_VF_GRAPH, "this tensor may carry the autograd graph". Names are followed
 * through the bindings that reach them (ol_reaching_defs); imported names
 * become dotted names; calls are looked up in a table of what PyTorch and the
 * common libraries around it return; local functions yield what their
 * returns yield, and their parameters what their call sites in this file
 * pass. Where nothing is known, a name's spelling (`model`, `criterion`,
 * `optimizer`, `train_loader`) is the last resort, as it is for a reader.
 *
 * Graph-ness follows autograd: an operation under no_grad produces no graph;
 * `.item()`, `.detach()`, `.data`, `float()` drop it; comparisons and
 * argmax produce none; a binding whose value reaches `.backward()` has one.
 */
#include "model.h"

#include "dataflow.h"
#include "facts.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#define EVAL_MAX_DEPTH 80

static ol_val mk(ol_vkind kind, uint8_t flags)
{
    ol_val v = {(uint8_t)kind, flags, 0, 0};
    return v;
}

static ol_val mk_ref(ol_vkind kind, uint8_t flags, uint32_t ref)
{
    ol_val v = {(uint8_t)kind, flags, 0, ref};
    return v;
}

static const ol_val UNKNOWN = {OL_V_UNKNOWN, 0, 0, 0};
static const ol_val BOTTOM = {OL_V_BOTTOM, 0, 0, 0};

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

/* ---- names -------------------------------------------------------------- */

/* Splits an identifier into lowercase tokens at '_' and lower->Upper steps. */
static size_t name_tokens(const char *name, size_t len, char tokens[][24], size_t max_tokens)
{
    size_t count = 0, tl = 0;
    for (size_t i = 0; i <= len; i++) {
        char c = i < len ? name[i] : '_';
        bool boundary = c == '_' || (i > 0 && isupper((unsigned char)c) && islower((unsigned char)name[i - 1]));
        if (boundary && tl > 0) {
            if (count < max_tokens)
                tokens[count++][tl] = '\0';
            tl = 0;
        }
        if (c == '_')
            continue;
        if (count < max_tokens && tl < 23)
            tokens[count][tl++] = (char)tolower((unsigned char)c);
    }
    return count;
}

bool ol_name_looks_like(const char *name, size_t len, const char *const *words)
{
    char tokens[8][24];
    size_t n = name_tokens(name, len, tokens, 8);
    for (size_t i = 0; i < n; i++)
        for (const char *const *w = words; *w; w++)
            if (strcmp(tokens[i], *w) == 0)
                return true;
    return false;
}

static const char *const MODEL_WORDS[] = {"model", "net", "network", "encoder", "decoder", "generator",
                                          "discriminator", "backbone", "classifier", "critic", "teacher",
                                          "student", "unet", "vae", "autoencoder", "netg", "netd", "module", NULL};
static const char *const LOADER_WORDS[] = {"loader", "dataloader", "dl", "batches", NULL};
static const char *const OPTIMIZER_WORDS[] = {"optimizer", "optimiser", "optim", "opt", "optimizerg",
                                              "optimizerd", "optg", "optd", NULL};
static const char *const CRITERION_WORDS[] = {"criterion", "criterium", "criteria", "crit", NULL};
static const char *const NOT_OPTIMIZER_WORDS[] = {"scheduler", "sched", "env", "lr", "args", "options",
                                                  "opts", "config", "cfg", NULL};

/* Does the name call something a model (`model`, `teacher_model`, `netG`,
 * `model_ema`, `model_without_ddp`)? Not when a verb comes first
 * (`create_model_card`, `get_model`, `build_model`: a function about a
 * model) or when the model word only qualifies another noun after it
 * (`model_card`, `model_name`, `model_path`, `model_config`). */
static bool names_a_model(const char *name, size_t len)
{
    static const char *const verbs[] = {"create", "make", "build", "get", "load", "save", "init", "initialize",
                                        "setup", "prepare", "set", "wrap", "unwrap", "push", "freeze", "log",
                                        "print", "export", "convert", "compile", "update", "copy", "reset",
                                        "register", "is", "has", "num", "count", "check", "download", "upload",
                                        "write", "read", "store", "restore", "resolve", "select", NULL};
    static const char *const nouns[] = {"card", "name", "names", "path", "paths", "dir", "file", "files", "id",
                                        "ids", "type", "types", "config", "cfg", "conf", "args", "kwargs",
                                        "params", "parameters", "output", "outputs", "out", "state", "states",
                                        "dict", "url", "hub", "repo", "version", "size", "dim", "kind", "info",
                                        "summary", "key", "keys", "list", "dtype", "device", "inputs", "input",
                                        "tokenizer", "optimizer", "ckpt", "checkpoint", "weights", "str", "tag",
                                        "hash", "index", "registry", "zoo", NULL};
    char tokens[8][24];
    size_t n = name_tokens(name, len, tokens, 8);
    for (size_t i = 0; i < n; i++) {
        bool word = false;
        for (const char *const *w = MODEL_WORDS; *w && !word; w++)
            word = strcmp(tokens[i], *w) == 0;
        if (!word)
            continue;
        for (size_t k = 0; k < i; k++)
            for (const char *const *v = verbs; *v; v++)
                if (strcmp(tokens[k], *v) == 0)
                    return false;
        for (size_t k = i + 1; k < n; k++)
            for (const char *const *v = nouns; *v; v++)
                if (strcmp(tokens[k], *v) == 0)
                    return false;
        return true;
    }
    return false;
}

static bool looks_like_loss_fn(const char *name, size_t len)
{
    if (ol_name_looks_like(name, len, CRITERION_WORDS))
        return true;
    char tokens[8][24];
    size_t n = name_tokens(name, len, tokens, 8);
    for (size_t i = 0; i + 1 < n; i++)
        if (strcmp(tokens[i], "loss") == 0 &&
            (strcmp(tokens[i + 1], "fn") == 0 || strcmp(tokens[i + 1], "func") == 0 ||
             strcmp(tokens[i + 1], "function") == 0 || strcmp(tokens[i + 1], "fcn") == 0 ||
             strcmp(tokens[i + 1], "module") == 0))
            return true;
    return n == 1 && strcmp(tokens[0], "lossfn") == 0;
}

static ol_val guess_from_name_uncached(ol_model *m, ol_sym name);

/* What a name alone suggests, for values nothing else tells us about:
 * worked out once per name of the file (a name is asked about at every use
 * of every binding that has no better answer). */
static ol_val guess_from_name(ol_model *m, ol_sym name)
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
    if (ol_name_looks_like(s, len, makers) && !looks_like_loss_fn(s, len))
        return UNKNOWN;
    if (looks_like_loss_fn(s, len))
        return mk(OL_V_MODULE, OL_VF_LOSSFN);
    if (names_a_model(s, len))
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

static bool qeq(const char *q, const char *s)
{
    return strcmp(q, s) == 0;
}

static bool qin(const char *q, const char *const *list)
{
    for (; *list; list++)
        if (strcmp(q, *list) == 0)
            return true;
    return false;
}

static const char *last_part(const char *q)
{
    const char *dot = strrchr(q, '.');
    return dot ? dot + 1 : q;
}

static bool is_camel(const char *s)
{
    return isupper((unsigned char)s[0]);
}

/* ---- helpers over calls ---------------------------------------------------- */

ol_nid ol_call_arg(const ol_model *m, ol_nid call, int position, const char *keyword)
{
    const ol_tree *t = m->tree;
    ol_nid args = ol_field(t, call, OL_F_arguments);
    if (args == OL_NONE || ol_kind_of(t, args) != OL_N_argument_list)
        return OL_NONE;
    int pos = 0;
    for (ol_nid a = ol_first_named(t, args); a != OL_NONE; a = ol_next_named(t, a)) {
        ol_kind k = ol_kind_of(t, a);
        if (k == OL_N_keyword_argument) {
            if (keyword && ol_text_is(t, ol_field(t, a, OL_F_name), keyword))
                return ol_field(t, a, OL_F_value);
            continue;
        }
        if (k == OL_N_list_splat || k == OL_N_dictionary_splat)
            return OL_NONE; /* positions past a *args are unknowable */
        if (pos == position)
            return a;
        pos++;
    }
    return OL_NONE;
}

/* Union of the flags of every argument (ELEM_GRAPH of a list counts as
 * GRAPH: torch.cat(outputs) carries what outputs hold). */
static uint8_t args_flags(ol_model *m, ol_nid call, bool *any_tensor)
{
    const ol_tree *t = m->tree;
    uint8_t flags = 0;
    if (any_tensor)
        *any_tensor = false;
    ol_nid args = ol_field(t, call, OL_F_arguments);
    if (args == OL_NONE)
        return 0;
    for (ol_nid a = ol_first_named(t, args); a != OL_NONE; a = ol_next_named(t, a)) {
        ol_nid e = a;
        if (ol_kind_of(t, a) == OL_N_keyword_argument)
            e = ol_field(t, a, OL_F_value);
        else if (ol_kind_of(t, a) == OL_N_list_splat || ol_kind_of(t, a) == OL_N_dictionary_splat)
            e = ol_first_named(t, a);
        if (e == OL_NONE)
            continue;
        ol_val v = ol_eval(m, e);
        if (v.kind == OL_V_TENSOR && any_tensor)
            *any_tensor = true;
        if (v.flags & (OL_VF_GRAPH | OL_VF_ELEM_GRAPH))
            flags |= OL_VF_GRAPH;
        if (v.flags & OL_VF_LOSS)
            flags |= OL_VF_LOSS;
    }
    return flags;
}

static bool kwarg_is_true(ol_model *m, ol_nid call, const char *kw)
{
    ol_nid v = ol_call_arg(m, call, -1, kw);
    return v != OL_NONE && ol_kind_of(m->tree, v) == OL_N_true;
}

bool ol_call_is(ol_model *m, ol_nid call, const char *const *quals)
{
    if (ol_kind_of(m->tree, call) != OL_N_call)
        return false;
    const char *q = ol_qualname(m, ol_field(m->tree, call, OL_F_function));
    return q && qin(q, quals);
}

/* ---- autocast and grad-mode objects ---------------------------------------- */

static const char *const AUTOCAST_QUALS[] = {"torch.autocast",
                                             "torch.amp.autocast",
                                             "torch.amp.autocast_mode.autocast",
                                             "torch.cuda.amp.autocast",
                                             "torch.cuda.amp.autocast_mode.autocast",
                                             "torch.cpu.amp.autocast",
                                             "torch.cpu.amp.autocast_mode.autocast",
                                             NULL};

static uint16_t dtype_bits(ol_model *m, ol_nid e)
{
    if (e == OL_NONE)
        return 0;
    const char *q = ol_qualname(m, e);
    if (q) {
        if (qeq(q, "torch.float16") || qeq(q, "torch.half"))
            return OL_AC_FP16;
        if (qeq(q, "torch.bfloat16"))
            return OL_AC_BF16;
    }
    const char *s;
    uint32_t len;
    if (ol_string_value(m->tree, e, &s, &len)) {
        if (ol_mem_eq_cstr(s, len, "float16") || ol_mem_eq_cstr(s, len, "fp16") || ol_mem_eq_cstr(s, len, "half"))
            return OL_AC_FP16;
        if (ol_mem_eq_cstr(s, len, "bfloat16") || ol_mem_eq_cstr(s, len, "bf16"))
            return OL_AC_BF16;
    }
    return OL_AC_DTYPE_UNKNOWN;
}

static uint16_t device_bits(ol_model *m, ol_nid e)
{
    const char *s;
    uint32_t len;
    if (ol_string_value(m->tree, e, &s, &len)) {
        if (len >= 4 && memcmp(s, "cuda", 4) == 0)
            return OL_AC_DEV_CUDA;
        return OL_AC_DEV_CPU;
    }
    return OL_AC_DEV_UNKNOWN;
}

static ol_val autocast_value(ol_model *m, const char *q, ol_nid call)
{
    uint16_t info = 0;
    bool deprecated_cuda = ol_str_has_prefix(q, "torch.cuda.amp.");
    bool cpu = ol_str_has_prefix(q, "torch.cpu.amp.");
    ol_nid dtype, enabled;
    if (deprecated_cuda || cpu) {
        info |= deprecated_cuda ? OL_AC_DEV_CUDA | OL_AC_DEPRECATED : OL_AC_DEV_CPU;
        enabled = ol_call_arg(m, call, 0, "enabled");
        dtype = ol_call_arg(m, call, 1, "dtype");
    } else {
        info |= device_bits(m, ol_call_arg(m, call, 0, "device_type"));
        dtype = ol_call_arg(m, call, 1, "dtype");
        enabled = ol_call_arg(m, call, 2, "enabled");
    }
    if (dtype != OL_NONE)
        info |= dtype_bits(m, dtype);
    else if (info & OL_AC_DEV_CUDA)
        info |= OL_AC_FP16; /* CUDA autocast defaults to float16 */
    else if (info & OL_AC_DEV_CPU)
        info |= OL_AC_BF16; /* CPU autocast defaults to bfloat16 */
    else
        info |= OL_AC_DTYPE_UNKNOWN;
    if (enabled != OL_NONE) {
        ol_kind k = ol_kind_of(m->tree, enabled);
        if (k == OL_N_false)
            info |= OL_AC_DISABLED;
        else if (k != OL_N_true)
            info |= OL_AC_MAYBE_DISABLED;
    }
    ol_val v = mk(OL_V_AUTOCAST, 0);
    v.info = info;
    return v;
}

static ol_gradmode gradmode_of(const char *q)
{
    static const char *const no_grad[] = {"torch.no_grad", "torch.autograd.no_grad",
                                          "torch.autograd.grad_mode.no_grad", NULL};
    static const char *const inference[] = {"torch.inference_mode", "torch.autograd.inference_mode",
                                            "torch.autograd.grad_mode.inference_mode", NULL};
    static const char *const set_enabled[] = {"torch.set_grad_enabled", "torch.autograd.set_grad_enabled",
                                              "torch.autograd.grad_mode.set_grad_enabled", NULL};
    static const char *const enable[] = {"torch.enable_grad", "torch.autograd.enable_grad",
                                         "torch.autograd.grad_mode.enable_grad", NULL};
    if (qin(q, no_grad))
        return OL_GM_NO_GRAD;
    if (qin(q, inference))
        return OL_GM_INFERENCE;
    if (qin(q, set_enabled))
        return OL_GM_SET_COND;
    if (qin(q, enable))
        return OL_GM_ENABLE;
    return OL_GM_NONE;
}

static ol_val gradmode_value(ol_model *m, ol_gradmode mode, ol_nid call)
{
    if (mode == OL_GM_SET_COND) {
        ol_nid arg = ol_call_arg(m, call, 0, "mode");
        ol_kind k = ol_kind_of(m->tree, arg);
        if (k == OL_N_false)
            mode = OL_GM_SET_FALSE;
        else if (k == OL_N_true)
            mode = OL_GM_ENABLE;
    } else if (mode == OL_GM_INFERENCE) {
        ol_nid arg = ol_call_arg(m, call, 0, "mode");
        if (ol_kind_of(m->tree, arg) == OL_N_false)
            mode = OL_GM_ENABLE;
    }
    ol_val v = mk(OL_V_GRADMODE, 0);
    v.info = (uint16_t)mode;
    return v;
}

/* ---- the table of known callables --------------------------------------------- */

static bool is_functional_loss(const char *name)
{
    static const char *const losses[] = {"cross_entropy",
                                         "binary_cross_entropy",
                                         "binary_cross_entropy_with_logits",
                                         "kl_div",
                                         "nll_loss",
                                         NULL};
    return ol_str_has_suffix(name, "_loss") || qin(name, losses);
}

static bool torch_fn_drops_graph(const char *name)
{
    static const char *const fns[] = {
        "argmax", "argmin", "argsort", "argwhere", "eq", "ne", "lt", "gt", "le", "ge", "equal", "isnan",
        "isinf", "isfinite", "isclose", "allclose", "nonzero", "count_nonzero", "bincount", "histc",
        "unique", "unique_consecutive", "numel", "is_tensor", "is_floating_point", "randint", "randperm",
        "multinomial", "searchsorted", "bucketize", "logical_and", "logical_or", "logical_not",
        "logical_xor", "tensor", "as_tensor", "from_numpy", "zeros", "ones", "empty", "full", "rand",
        "randn", "arange", "linspace", "logspace", "eye", "zeros_like", "ones_like", "empty_like",
        "full_like", "rand_like", "randn_like", "randint_like", "manual_seed", "save", "load",
        "cuda", "device", "get_default_dtype", "is_grad_enabled", "topk_indices", NULL};
    return qin(name, fns);
}

static bool torch_fn_pair(const char *name)
{
    static const char *const fns[] = {"max", "min", "sort", "topk", "kthvalue", "median", "mode",
                                      "nanmedian", "cummax", "cummin", NULL};
    return qin(name, fns);
}

static bool is_tensor_factory(const char *name)
{
    static const char *const fns[] = {"tensor", "as_tensor", "zeros", "ones", "empty", "full", "rand",
                                      "randn", "arange", "linspace", "logspace", "eye", "zeros_like",
                                      "ones_like", "empty_like", "full_like", "rand_like", "randn_like",
                                      "from_numpy", "randint", "randperm", "stack", NULL};
    return qin(name, fns);
}

static ol_val tensor_result(ol_model *m, ol_nid call, uint8_t extra)
{
    (void)m;
    (void)call;
    return mk(OL_V_TENSOR, extra);
}

static bool transformers_model_class(const char *cls)
{
    /* TFBertModel, FlaxGPT2LMHeadModel: TensorFlow and JAX models, no autograd of torch's */
    if (ol_str_has_prefix(cls, "TF") || ol_str_has_prefix(cls, "Flax"))
        return false;
    if (strstr(cls, "Tokenizer") || strstr(cls, "Config") || strstr(cls, "Processor") ||
        strstr(cls, "FeatureExtractor") || strstr(cls, "Pipeline") || strstr(cls, "Trainer") ||
        strstr(cls, "Arguments") || strstr(cls, "Collator"))
        return false;
    return strstr(cls, "Model") != NULL || strstr(cls, "For") != NULL;
}

static ol_val eval_path(ol_model *m, ol_nid expr, bool elem, const int8_t *path, int path_len);
static bool elem_of_expr(ol_model *m, ol_nid e, int index, const char *key, int depth, ol_val *out);
static bool metric_output_param(ol_model *m, uint32_t di);
static bool inherited(ol_model *m, uint32_t ci, ol_sym method, ol_sym *base_qual, ol_val *out, int depth);

static bool progress_wrapper(const char *name)
{
    static const char *const words[] = {"tqdm", "progress", "track", "pbar", NULL};
    for (const char *const *w = words; *w; w++) {
        size_t wl = strlen(*w);
        for (const char *p = name; *p; p++)
            if (ol_mem_ieq(p, *w, wl) && strlen(p) >= wl)
                return true;
    }
    return false;
}

/* What calling the imported callable `q` returns. */
static ol_val call_extern(ol_model *m, const char *q, ol_nid call)
{
    const char *name = last_part(q);

    /* functools.reduce(operator.add, losses): a fold of graph-carrying values */
    if (strcmp(q, "functools.reduce") == 0) {
        ol_nid a = ol_call_arg(m, call, 1, NULL);
        ol_val v = a != OL_NONE ? ol_eval(m, a) : UNKNOWN;
        return (v.flags & (OL_VF_ELEM_GRAPH | OL_VF_GRAPH)) ? mk(OL_V_TENSOR, OL_VF_GRAPH) : UNKNOWN;
    }

    /* builtins */
    if (ol_str_has_prefix(q, "builtins.")) {
        static const char *const numeric[] = {"float", "int", "bool", "len", "hash", "id", "ord",
                                              "isinstance", "issubclass", "callable", "hasattr", "any",
                                              "all", "divmod", NULL};
        if (qin(name, numeric))
            return mk(OL_V_NUMBER, 0);
        if (qeq(name, "str") || qeq(name, "repr") || qeq(name, "format") || qeq(name, "chr"))
            return mk(OL_V_STRING, 0);
        if (qeq(name, "abs") || qeq(name, "round") || qeq(name, "max") || qeq(name, "min") ||
            qeq(name, "sum") || qeq(name, "pow")) {
            bool any_tensor = false;
            uint8_t f = args_flags(m, call, &any_tensor);
            if (any_tensor || (f & OL_VF_GRAPH))
                return mk(OL_V_TENSOR, f);
            return mk(OL_V_NUMBER, 0);
        }
        if (qeq(name, "list") || qeq(name, "sorted") || qeq(name, "reversed") || qeq(name, "tuple")) {
            ol_nid a = ol_call_arg(m, call, 0, NULL);
            ol_val v = a != OL_NONE ? ol_eval(m, a) : UNKNOWN;
            return mk(qeq(name, "tuple") ? OL_V_TUPLE : OL_V_LIST, v.flags & (OL_VF_ELEM_GRAPH | OL_VF_PARAM));
        }
        if (qeq(name, "dict"))
            return mk(OL_V_DICT, 0);
        if (qeq(name, "set") || qeq(name, "frozenset"))
            return mk(OL_V_SET, 0);
        if (qeq(name, "range") || qeq(name, "enumerate") || qeq(name, "zip") || qeq(name, "map") ||
            qeq(name, "filter"))
            return mk(OL_V_RANGE, 0);
        if (qeq(name, "iter")) {
            ol_nid a = ol_call_arg(m, call, 0, NULL);
            return a != OL_NONE ? ol_eval(m, a) : UNKNOWN;
        }
        if (qeq(name, "next")) {
            ol_nid a = ol_call_arg(m, call, 0, NULL);
            return a != OL_NONE ? eval_path(m, a, true, NULL, 0) : UNKNOWN;
        }
        if (qeq(name, "print") || qeq(name, "setattr") || qeq(name, "delattr"))
            return mk(OL_V_NONE, 0);
        if (qeq(name, "open") || qeq(name, "super") || qeq(name, "getattr") || qeq(name, "type") ||
            qeq(name, "vars") || qeq(name, "object") || qeq(name, "input"))
            return mk(OL_V_OBJECT, 0);
        return UNKNOWN;
    }

    /* MONAI's `first(loader)`: the first item, like `next(iter(loader))` */
    if (qeq(q, "monai.utils.first") || qeq(q, "monai.utils.misc.first")) {
        ol_nid a = ol_call_arg(m, call, 0, "iterable");
        return a != OL_NONE ? eval_path(m, a, true, NULL, 0) : UNKNOWN;
    }

    if (ol_str_has_prefix(q, "torch.")) {
        for (const char *const *a = AUTOCAST_QUALS; *a; a++)
            if (qeq(q, *a))
                return autocast_value(m, q, call);
        ol_gradmode gm = gradmode_of(q);
        if (gm != OL_GM_NONE)
            return gradmode_value(m, gm, call);
        static const char *const scalers[] = {"torch.cuda.amp.GradScaler", "torch.amp.GradScaler",
                                              "torch.cuda.amp.grad_scaler.GradScaler",
                                              "torch.amp.grad_scaler.GradScaler", "torch.GradScaler",
                                              "torch.cpu.amp.GradScaler", NULL};
        if (qin(q, scalers))
            return mk(OL_V_SCALER, 0);
        if (qeq(q, "torch.device"))
            return mk(OL_V_DEVICE, 0);
        if (qeq(q, "torch.nn.Parameter") || qeq(q, "torch.nn.parameter.Parameter"))
            return mk(OL_V_TENSOR, OL_VF_GRAPH | OL_VF_PARAM);
        if (qeq(q, "torch.compile") || qeq(q, "torch.jit.script") || qeq(q, "torch.jit.trace") ||
            qeq(q, "torch.nn.utils.parametrize.register_parametrization")) {
            ol_nid a = ol_call_arg(m, call, 0, NULL);
            return a != OL_NONE ? ol_eval(m, a) : UNKNOWN;
        }
        /* a data-parallel wrapper runs the module it wraps */
        static const char *const parallel[] = {"torch.nn.DataParallel", "torch.nn.parallel.DataParallel",
                                               "torch.nn.parallel.DistributedDataParallel",
                                               "torch.nn.parallel.data_parallel.DataParallel",
                                               "torch.nn.parallel.distributed.DistributedDataParallel", NULL};
        if (qin(q, parallel)) {
            ol_nid a = ol_call_arg(m, call, 0, "module");
            ol_val wrapped = a != OL_NONE ? ol_eval(m, a) : UNKNOWN;
            if (wrapped.kind == OL_V_MODULE)
                return wrapped;
        }
        if (qeq(q, "torch.autograd.Variable") || qeq(q, "torch.autograd.variable.Variable")) {
            ol_nid a = ol_call_arg(m, call, 0, NULL);
            ol_val v = a != OL_NONE ? ol_eval(m, a) : UNKNOWN;
            uint8_t f = v.flags & (OL_VF_GRAPH | OL_VF_LOSS | OL_VF_BATCH);
            if (kwarg_is_true(m, call, "requires_grad"))
                f |= OL_VF_GRAPH;
            if (kwarg_is_true(m, call, "volatile"))
                f &= (uint8_t)~OL_VF_GRAPH;
            return mk(OL_V_TENSOR, f);
        }
        if (ol_str_has_prefix(q, "torch.utils.data.")) {
            if (qeq(name, "DataLoader"))
                return mk(OL_V_LOADER, 0);
            if (qeq(name, "random_split")) {
                ol_val v = mk(OL_V_LIST, 0);
                v.info = OL_V_DATASET;
                return v;
            }
            if (ol_str_has_suffix(name, "Dataset") || qeq(name, "Subset"))
                return mk(OL_V_DATASET, 0);
            return mk(OL_V_OBJECT, 0);
        }
        if (ol_str_has_prefix(q, "torch.optim.")) {
            if (ol_str_has_prefix(q, "torch.optim.lr_scheduler.") || qeq(name, "SWALR"))
                return mk(OL_V_SCHEDULER, 0);
            if (qeq(name, "AveragedModel"))
                return mk(OL_V_MODULE, 0);
            if (is_camel(name))
                return mk(OL_V_OPTIMIZER, 0);
            return UNKNOWN;
        }
        if (ol_str_has_prefix(q, "torch.nn.functional.")) {
            bool any_tensor;
            uint8_t f = args_flags(m, call, &any_tensor);
            if (is_functional_loss(name))
                return mk(OL_V_TENSOR, OL_VF_GRAPH | OL_VF_LOSS);
            return tensor_result(m, call, f & OL_VF_GRAPH);
        }
        if (ol_str_has_prefix(q, "torch.nn.utils.")) {
            if (ol_str_has_prefix(name, "clip_grad"))
                return mk(OL_V_TENSOR, 0);
            if (qeq(name, "weight_norm") || qeq(name, "spectral_norm")) {
                ol_nid a = ol_call_arg(m, call, 0, NULL);
                return a != OL_NONE ? ol_eval(m, a) : UNKNOWN;
            }
            return UNKNOWN;
        }
        if (ol_str_has_prefix(q, "torch.nn.init."))
            return mk(OL_V_TENSOR, 0);
        if (ol_str_has_prefix(q, "torch.nn.") && is_camel(name)) {
            if (strstr(name, "Loss"))
                return mk(OL_V_MODULE, OL_VF_LOSSFN);
            return mk(OL_V_MODULE, 0);
        }
        if (ol_str_has_prefix(q, "torch.cuda.") || ol_str_has_prefix(q, "torch.backends.") ||
            ol_str_has_prefix(q, "torch.distributed.") || ol_str_has_prefix(q, "torch.multiprocessing."))
            return mk(OL_V_OBJECT, 0);
        if (qeq(q, "torch.load") || qeq(q, "torch.hub.load") || qeq(q, "torch.jit.load"))
            return mk_ref(OL_V_OBJECT, 0, ol_model_intern(m, "torch.load"));
        /* torch.<function>(...) */
        const char *rest = q + strlen("torch.");
        if (!strchr(rest, '.') || ol_str_has_prefix(rest, "linalg.") || ol_str_has_prefix(rest, "special.") ||
            ol_str_has_prefix(rest, "fft.")) {
            if (is_camel(name))
                return mk(OL_V_TENSOR, 0); /* torch.FloatTensor(...) and friends */
            if (is_tensor_factory(name) && !qeq(name, "stack")) {
                uint8_t f = kwarg_is_true(m, call, "requires_grad") ? OL_VF_GRAPH : 0;
                return mk(OL_V_TENSOR, f);
            }
            if (torch_fn_drops_graph(name))
                return mk(OL_V_TENSOR, 0);
            bool any_tensor;
            uint8_t f = args_flags(m, call, &any_tensor);
            ol_val v = mk(OL_V_TENSOR, f & (OL_VF_GRAPH | OL_VF_LOSS));
            if (torch_fn_pair(name))
                v.flags |= OL_VF_PAIR;
            return v;
        }
        return UNKNOWN;
    }

    if (ol_str_has_prefix(q, "numpy.") || ol_str_has_prefix(q, "np."))
        return mk(OL_V_ARRAY, 0);
    if (ol_str_has_prefix(q, "math."))
        return mk(OL_V_NUMBER, 0);
    if (qeq(name, "DataLoader"))
        return mk(OL_V_LOADER, 0);
    /* weights enums and their presets (`Weights.DEFAULT.transforms()`: a
     * parameter-free image transform), not models */
    if (ol_str_has_prefix(q, "torchvision.models.") &&
        (strstr(q, "_Weights") || ol_str_has_suffix(q, ".get_weight") || ol_str_has_suffix(q, ".get_model_weights") ||
         ol_str_has_suffix(q, ".list_models") || ol_str_has_suffix(q, ".get_model_builder")))
        return mk(OL_V_OBJECT, 0);
    if (qeq(q, "timm.create_model") || ol_str_has_prefix(q, "torchvision.models.") ||
        qeq(q, "peft.get_peft_model") || qeq(q, "segmentation_models_pytorch.create_model"))
        return mk(OL_V_MODULE, 0);
    if (ol_str_has_prefix(q, "torchvision.datasets."))
        return mk(OL_V_DATASET, 0);
    if (ol_str_has_prefix(q, "transformers.")) {
        if (ol_str_has_suffix(q, ".from_pretrained") || ol_str_has_suffix(q, ".from_config")) {
            size_t len = strlen(q) - strlen(ol_str_has_suffix(q, ".from_pretrained") ? ".from_pretrained"
                                                                                     : ".from_config");
            char cls[128];
            if (len < sizeof(cls)) {
                memcpy(cls, q, len);
                cls[len] = '\0';
                if (transformers_model_class(last_part(cls)))
                    return mk(OL_V_MODULE, 0);
            }
            /* a tokenizer, a config, a TF or Flax model: not torch's */
            return mk_ref(OL_V_OBJECT, 0, ol_model_intern(m, q));
        }
        /* a pipeline runs its model under no_grad itself and returns Python values */
        if (qeq(name, "pipeline"))
            return mk_ref(OL_V_OBJECT, 0, ol_model_intern(m, q));
        if (qeq(name, "AdamW") || qeq(name, "Adafactor"))
            return mk(OL_V_OPTIMIZER, 0);
        if (strstr(name, "schedule"))
            return mk(OL_V_SCHEDULER, 0);
        if (is_camel(name) && transformers_model_class(name))
            return mk(OL_V_MODULE, 0);
        if (is_camel(name))
            return mk_ref(OL_V_OBJECT, 0, ol_model_intern(m, q));
        return UNKNOWN;
    }
    if (ol_str_has_prefix(q, "bitsandbytes.optim.") || ol_str_has_prefix(q, "apex.optimizers.") ||
        ol_str_has_prefix(q, "timm.optim.") || qeq(q, "timm.optim.create_optimizer_v2"))
        return is_camel(name) || ol_str_has_prefix(name, "create_optimizer") ? mk(OL_V_OPTIMIZER, 0) : UNKNOWN;
    if (ol_str_has_prefix(q, "accelerate.") && qeq(name, "Accelerator"))
        return mk_ref(OL_V_OBJECT, 0, ol_model_intern(m, "accelerate.Accelerator"));
    if (qeq(q, "tqdm.tqdm") || qeq(q, "tqdm.auto.tqdm") || qeq(q, "tqdm.notebook.tqdm") || qeq(q, "tqdm") ||
        qeq(q, "tqdm.rich.tqdm") || qeq(q, "rich.progress.track")) {
        ol_nid a = ol_call_arg(m, call, 0, "iterable");
        return a != OL_NONE ? ol_eval(m, a) : UNKNOWN;
    }
    /* a function or class of another file of the run */
    ol_val linked;
    if (m->links && m->links->call(m->links, m, ol_model_intern(m, q), 0, -1, NULL, &linked))
        return linked;
    /* progress bars wrap what they iterate: TQDM(loader), track(loader) */
    if (progress_wrapper(name)) {
        ol_nid a = ol_call_arg(m, call, 0, "iterable");
        return a != OL_NONE ? ol_eval(m, a) : UNKNOWN;
    }
    if (is_camel(name))
        return mk_ref(OL_V_OBJECT, 0, ol_model_intern(m, q));
    return UNKNOWN;
}

/* What `receiver.method(...)` returns when receiver is an instance of the
 * imported class with dotted name `cls`. */
static ol_val call_object_method(ol_model *m, const char *cls, ol_sym method, ol_nid call)
{
    const char *meth = ol_sym_str(m, method);
    if (qeq(cls, "accelerate.Accelerator")) {
        if (qeq(meth, "prepare")) {
            ol_nid a = ol_call_arg(m, call, 0, NULL);
            if (a != OL_NONE && ol_call_arg(m, call, 1, NULL) == OL_NONE)
                return ol_eval(m, a);
            return mk(OL_V_TUPLE, 0);
        }
        if (qeq(meth, "prepare_model") || qeq(meth, "unwrap_model") || qeq(meth, "prepare_data_loader") ||
            qeq(meth, "prepare_optimizer") || qeq(meth, "prepare_scheduler")) {
            ol_nid a = ol_call_arg(m, call, 0, NULL);
            return a != OL_NONE ? ol_eval(m, a) : UNKNOWN;
        }
        if (qeq(meth, "autocast")) {
            ol_val v = mk(OL_V_AUTOCAST, 0);
            v.info = OL_AC_DEV_UNKNOWN | OL_AC_DTYPE_UNKNOWN | OL_AC_FRAMEWORK;
            return v;
        }
        if (qeq(meth, "gather") || qeq(meth, "gather_for_metrics") || qeq(meth, "reduce"))
            return mk(OL_V_TENSOR, 0);
    }
    ol_val linked;
    if (m->links && m->links->call(m->links, m, ol_model_intern(m, cls), method, -1, NULL, &linked))
        return linked;
    return mk(OL_V_OBJECT, 0);
}

/* ---- local classes and functions ------------------------------------------------ */

static bool class_is_kind(ol_model *m, uint32_t ci, bool lightning, int depth);

static bool base_is_module_qual(const char *q, bool lightning)
{
    static const char *const lightning_bases[] = {
        "pytorch_lightning.LightningModule", "pytorch_lightning.core.LightningModule",
        "pytorch_lightning.core.lightning.LightningModule", "lightning.LightningModule",
        "lightning.pytorch.LightningModule", "lightning.pytorch.core.LightningModule",
        "pl.LightningModule", "L.LightningModule", NULL};
    if (qin(q, lightning_bases))
        return true;
    if (lightning)
        return false;
    if (qeq(q, "torch.nn.Module") || qeq(q, "torch.nn.modules.module.Module"))
        return true;
    if (ol_str_has_prefix(q, "torch.nn.") && is_camel(last_part(q)))
        return true; /* subclasses of nn.Sequential, nn.Linear, ... */
    if (ol_str_has_prefix(q, "transformers.") && (strstr(q, "PreTrainedModel") || strstr(q, "Model")))
        return true;
    return false;
}

bool ol_class_defines_call(ol_model *m, uint32_t ci)
{
    ol_sym call = m->names.__call__;
    for (int depth = 0; ci < m->classes.len && depth < 16; depth++) {
        const ol_class *c = &m->classes.items[ci];
        for (size_t i = 0; i < c->methods.len; i++)
            if (m->functions.items[c->methods.items[i]].name == call)
                return true;
        /* the first base of this file, as Python looks it up */
        uint32_t next = OL_NO_INDEX;
        for (size_t i = 0; i < c->bases.len && next == OL_NO_INDEX; i++) {
            ol_val v = ol_eval(m, c->bases.items[i]);
            if (v.kind == OL_V_CLASS && v.ref < m->classes.len && v.ref != ci)
                next = v.ref;
        }
        ci = next;
    }
    return false;
}

static bool class_is_kind(ol_model *m, uint32_t ci, bool lightning, int depth)
{
    ol_class *c = &m->classes.items[ci];
    int8_t *state = lightning ? &c->lightning_state : &c->module_state;
    if (*state >= 0)
        return *state == 1;
    if (depth > 16 || c->visiting)
        return false;
    c->visiting = 1;
    bool result = false, guessed = false;
    for (size_t i = 0; i < c->bases.len && !result; i++) {
        ol_val v = ol_eval(m, c->bases.items[i]);
        c = &m->classes.items[ci];
        if (v.kind == OL_V_EXTERN && base_is_module_qual(ol_sym_str(m, v.ref), lightning)) {
            result = true;
        } else if (v.kind == OL_V_CLASS && v.ref < m->classes.len && v.ref != ci &&
                   class_is_kind(m, v.ref, lightning, depth + 1)) {
            result = true;
            guessed = m->classes.items[v.ref].module_guessed == 1;
        }
    }
    c = &m->classes.items[ci];
    if (!result && !lightning && c->bases.len > 0) {
        /* a class with a base we cannot see and a forward() is a module
         * (a guess: another file of the run may show that base) */
        for (size_t i = 0; i < c->methods.len; i++)
            if (m->functions.items[c->methods.items[i]].name == m->names.forward)
                result = guessed = true;
        /* unless calling it runs a __call__ of its own, not a module's
         * forward (a data transform whose __call__ runs forward()) */
        if (result && ol_class_defines_call(m, ci))
            result = guessed = false;
        c = &m->classes.items[ci];
    }
    if (!lightning)
        c->module_guessed = result && guessed;
    c->visiting = 0;
    c->lightning_state = lightning ? (int8_t)result : c->lightning_state;
    c->module_state = lightning ? c->module_state : (int8_t)result;
    if (lightning && result)
        c->module_state = 1;
    return result;
}

bool ol_class_is_module(ol_model *m, uint32_t cls)
{
    return cls < m->classes.len && class_is_kind(m, cls, false, 0);
}

bool ol_class_module_guessed(ol_model *m, uint32_t cls)
{
    return ol_class_is_module(m, cls) && m->classes.items[cls].module_guessed == 1;
}

bool ol_class_is_lightning(ol_model *m, uint32_t cls)
{
    return cls < m->classes.len && class_is_kind(m, cls, true, 0);
}

static ol_val instance_of_class(ol_model *m, uint32_t ci)
{
    if (ol_class_is_module(m, ci)) {
        ol_val v = mk_ref(OL_V_MODULE, OL_VF_LOCAL, ci);
        const char *name = ol_sym_str(m, m->classes.items[ci].name);
        if (ol_str_has_suffix(name, "Loss") || ol_str_has_suffix(name, "Criterion"))
            v.flags |= OL_VF_LOSSFN;
        return v;
    }
    return mk_ref(OL_V_INSTANCE, OL_VF_LOCAL, ci);
}

static uint32_t find_method(ol_model *m, uint32_t ci, ol_sym name, int depth)
{
    if (ci >= m->classes.len || depth > 16)
        return OL_NO_INDEX;
    const ol_class *c = &m->classes.items[ci];
    for (size_t i = 0; i < c->methods.len; i++)
        if (m->functions.items[c->methods.items[i]].name == name)
            return c->methods.items[i];
    for (size_t i = 0; i < c->bases.len; i++) {
        ol_val v = ol_eval(m, m->classes.items[ci].bases.items[i]);
        if (v.kind == OL_V_CLASS && v.ref != ci) {
            uint32_t f = find_method(m, v.ref, name, depth + 1);
            if (f != OL_NO_INDEX)
                return f;
        }
    }
    return OL_NO_INDEX;
}

static ol_val function_result(ol_model *m, uint32_t fi)
{
    if (fi >= m->functions.len)
        return UNKNOWN;
    ol_val r = BOTTOM;
    size_t n = m->functions.items[fi].returns.len;
    for (size_t i = 0; i < n && i < 16; i++)
        r = join(r, ol_eval(m, m->functions.items[fi].returns.items[i]));
    if (n == 0)
        return mk(OL_V_NONE, 0);
    return r.kind == OL_V_BOTTOM ? UNKNOWN : r;
}

static bool inherited(ol_model *m, uint32_t ci, ol_sym method, ol_sym *base_qual, ol_val *out, int depth)
{
    if (!m->links || ci >= m->classes.len || depth > 8)
        return false;
    for (size_t i = 0; i < m->classes.items[ci].bases.len; i++) {
        ol_val b = ol_eval(m, m->classes.items[ci].bases.items[i]);
        if (b.kind == OL_V_EXTERN && m->links->call(m->links, m, b.ref, method, -1, NULL, out)) {
            *base_qual = b.ref;
            return true;
        }
        if (b.kind == OL_V_CLASS && b.ref != ci && inherited(m, b.ref, method, base_qual, out, depth + 1))
            return true;
    }
    return false;
}

bool ol_inherited_method(ol_model *m, uint32_t ci, ol_sym method, ol_sym *base_qual, ol_val *out)
{
    return inherited(m, ci, method, base_qual, out, 0);
}

ol_val ol_function_result(ol_model *m, uint32_t fi)
{
    return function_result(m, fi);
}

ol_val ol_val_join(ol_val a, ol_val b)
{
    return join(a, b);
}

static ol_val class_attr(ol_model *m, uint32_t ci, ol_sym name, int depth)
{
    if (ci >= m->classes.len || depth > 16)
        return UNKNOWN;
    ol_val r = BOTTOM;
    size_t count = m->classes.items[ci].attr_defs.len;
    for (size_t i = 0; i < count; i++) {
        uint32_t d = m->classes.items[ci].attr_defs.items[i];
        if (m->defs.items[d].name == name)
            r = join(r, ol_def_value(m, d));
    }
    uint32_t d = ol_scope_defs(m, m->classes.items[ci].scope, name);
    for (; d != OL_NO_INDEX; d = m->defs.items[d].next)
        r = join(r, ol_def_value(m, d));
    if (r.kind == OL_V_BOTTOM) {
        for (size_t i = 0; i < m->classes.items[ci].bases.len; i++) {
            ol_val b = ol_eval(m, m->classes.items[ci].bases.items[i]);
            if (b.kind == OL_V_CLASS && b.ref != ci) {
                ol_val inherited = class_attr(m, b.ref, name, depth + 1);
                if (inherited.kind != OL_V_UNKNOWN)
                    return inherited;
            }
        }
        return guess_from_name(m, name);
    }
    if (r.kind == OL_V_UNKNOWN) {
        ol_val g = guess_from_name(m, name);
        if (g.kind != OL_V_UNKNOWN)
            return g;
    }
    return r;
}

/* ---- grad mode ---------------------------------------------------------------- */

uint32_t ol_function_of(const ol_model *m, ol_nid n)
{
    if (n == OL_NONE)
        return OL_NO_INDEX;
    uint32_t s = m->node_scope[n];
    while (s != OL_NO_INDEX) {
        const ol_scope *sc = &m->scopes.items[s];
        if (sc->function != OL_NO_INDEX)
            return sc->function;
        s = sc->parent;
    }
    return OL_NO_INDEX;
}

/* A Lightning Callback (`pl.Callback`, `lightning.pytorch.callbacks.Callback`),
 * directly or through classes of the file. */
static bool class_is_lightning_callback(ol_model *m, uint32_t ci, int depth)
{
    if (ci >= m->classes.len || depth > 8)
        return false;
    for (size_t i = 0; i < m->classes.items[ci].bases.len; i++) {
        ol_val v = ol_eval(m, m->classes.items[ci].bases.items[i]);
        if (v.kind == OL_V_CLASS && v.ref != ci && class_is_lightning_callback(m, v.ref, depth + 1))
            return true;
        if (v.kind != OL_V_EXTERN)
            continue;
        const char *q = ol_sym_str(m, v.ref);
        if ((ol_str_has_prefix(q, "pytorch_lightning.") || ol_str_has_prefix(q, "lightning.") ||
             ol_str_has_prefix(q, "pl.") || ol_str_has_prefix(q, "L.")) &&
            ol_str_has_suffix(q, ".Callback"))
            return true;
    }
    return false;
}

ol_hook ol_function_hook(ol_model *m, uint32_t fi)
{
    const ol_function *f = &m->functions.items[fi];
    if (!f->is_method || f->cls == OL_NO_INDEX)
        return OL_HOOK_NONE;
    ol_sym n = f->name;
    bool train = n == m->names.training_step;
    bool eval = n == m->names.validation_step || n == m->names.test_step || n == m->names.predict_step;
    /* the hooks Lightning calls inside its evaluation loops, which run under
     * no_grad / inference_mode: on_validation_batch_end, on_test_epoch_start, ... */
    const char *name = ol_sym_str(m, n);
    bool eval_hook = name && (ol_str_has_prefix(name, "on_validation_") || ol_str_has_prefix(name, "on_test_") ||
                              ol_str_has_prefix(name, "on_predict_"));
    /* the hooks Lightning calls around each training batch, with autograd
     * on, on the module or on a Callback: per-batch bodies like
     * training_step (what they keep on self lives across the batches) */
    if (name && (strcmp(name, "on_train_batch_end") == 0 || strcmp(name, "on_train_batch_start") == 0))
        return ol_class_is_lightning(m, f->cls) || class_is_lightning_callback(m, f->cls, 0) ? OL_HOOK_TRAIN_STEP
                                                                                             : OL_HOOK_NONE;
    if (!train && !eval && !eval_hook)
        return OL_HOOK_NONE;
    if (eval_hook)
        return ol_class_is_lightning(m, f->cls) || class_is_lightning_callback(m, f->cls, 0) ? OL_HOOK_EVAL_HOOK
                                                                                             : OL_HOOK_NONE;
    if (!ol_class_is_lightning(m, f->cls))
        return OL_HOOK_NONE;
    return train ? OL_HOOK_TRAIN_STEP : OL_HOOK_EVAL_STEP;
}

/* The grad mode a decorator of function fi sets, with the decorator in
 * *where (when given). */
static ol_gradmode decorator_mode_at(ol_model *m, uint32_t fi, ol_nid *where)
{
    const ol_tree *t = m->tree;
    ol_nid dec = m->functions.items[fi].decorated;
    if (dec == OL_NONE)
        return OL_GM_NONE;
    for (ol_nid d = ol_first_named(t, dec); d != OL_NONE; d = ol_next_named(t, d)) {
        if (ol_kind_of(t, d) != OL_N_decorator)
            continue;
        ol_nid e = ol_first_named(t, d);
        ol_val v = ol_eval(m, e);
        ol_gradmode gm = OL_GM_NONE;
        if (v.kind == OL_V_GRADMODE)
            gm = (ol_gradmode)v.info;
        else if (v.kind == OL_V_EXTERN && (gm = gradmode_of(ol_sym_str(m, v.ref))) == OL_GM_SET_COND)
            gm = OL_GM_NONE;
        if (gm != OL_GM_NONE) {
            if (where)
                *where = d;
            return gm;
        }
    }
    return OL_GM_NONE;
}

static ol_gradmode decorator_mode(ol_model *m, uint32_t fi)
{
    return decorator_mode_at(m, fi, NULL);
}

static bool mode_disables(ol_gradmode g)
{
    return g == OL_GM_NO_GRAD || g == OL_GM_INFERENCE || g == OL_GM_SET_FALSE || g == OL_GM_SET_COND;
}

static bool function_grad_disabled(ol_model *m, uint32_t fi, int depth);

/* Grad mode from contexts alone: 1 disabled, 0 enabled, -1 no context says. */
static int ctx_grad(const ol_model *m, ol_nid n)
{
    for (uint32_t c = m->node_ctx[n]; c != OL_NO_INDEX; c = m->contexts.items[c].parent) {
        const ol_ctx *ctx = &m->contexts.items[c];
        if (ctx->kind != OL_CTX_GRAD)
            continue;
        if (ctx->gradmode == OL_GM_ENABLE)
            return 0;
        if (mode_disables(ctx->gradmode))
            return 1;
    }
    return -1;
}

/* `torch.set_grad_enabled(False)` written as a statement earlier in a block
 * that holds n, inside n's function (or at module level for module code):
 * 1 when the last such statement before n turns autograd off, 0 when it
 * turns it on, -1 when none does. Only statements of blocks around n count,
 * so a switch in one branch of an `if` decides nothing for the code after. */
static int statement_grad_at(ol_model *m, ol_nid n, ol_nid *where);

static int statement_grad(ol_model *m, ol_nid n)
{
    return statement_grad_at(m, n, NULL);
}

static int statement_grad_at(ol_model *m, ol_nid n, ol_nid *where)
{
    const ol_tree *t = m->tree;
    static const char *const setters[] = {"torch.set_grad_enabled", "torch.autograd.set_grad_enabled",
                                          "torch.autograd.grad_mode.set_grad_enabled", NULL};
    /* bits 0-1 of grad_setter_stmts: 0 not looked for, 1 none, 2 some (bits
     * 2-3: the callable wrappers, wrapped_mode) */
    if ((m->grad_setter_stmts & 3) == 0) {
        /* most files have none: then no block needs scanning */
        m->grad_setter_stmts |= 1;
        for (size_t i = 0; i < m->calls.len; i++) {
            ol_nid stmt = ol_parent(t, m->calls.items[i].node);
            if (stmt != OL_NONE && ol_kind_of(t, stmt) == OL_N_expression_statement &&
                ol_call_is(m, m->calls.items[i].node, setters)) {
                m->grad_setter_stmts = (uint8_t)((m->grad_setter_stmts & ~3u) | 2u);
                break;
            }
        }
    }
    if ((m->grad_setter_stmts & 3) != 2)
        return -1;
    for (ol_nid a = n, p = ol_parent(t, n); p != OL_NONE; a = p, p = ol_parent(t, p)) {
        ol_kind pk = ol_kind_of(t, p);
        if (pk == OL_N_function_definition || pk == OL_N_lambda || pk == OL_N_class_definition)
            return -1;
        if (pk != OL_N_block && pk != OL_N_module)
            continue;
        int last = -1;
        for (ol_nid s = ol_first_named(t, p); s != OL_NONE && s != a; s = ol_next_named(t, s)) {
            if (ol_kind_of(t, s) != OL_N_expression_statement)
                continue;
            ol_nid call = ol_first_named(t, s);
            if (call == OL_NONE || ol_kind_of(t, call) != OL_N_call || !ol_call_is(m, call, setters))
                continue;
            ol_nid arg = ol_call_arg(m, call, 0, "mode");
            if (arg == OL_NONE)
                continue;
            ol_kind ak = ol_kind_of(t, ol_unparen(t, arg));
            if (ak != OL_N_false && ak != OL_N_true)
                continue;
            last = ak == OL_N_false;
            if (where)
                *where = call;
        }
        if (last >= 0)
            return last;
    }
    return -1;
}

/* ---- callables wrapped in a grad mode: `torch.no_grad()(model)` ---- */

/* The grad mode a call `G()(f)` gives what f runs, G a grad-mode object
 * (no_grad, inference_mode, enable_grad, set_grad_enabled(...)), or
 * OL_GM_NONE when w is no such call. */
static ol_gradmode wrapper_mode(ol_model *m, ol_nid w)
{
    const ol_tree *t = m->tree;
    w = w != OL_NONE ? ol_unparen(t, w) : OL_NONE;
    if (w == OL_NONE || ol_kind_of(t, w) != OL_N_call)
        return OL_GM_NONE;
    ol_nid maker = ol_unparen(t, ol_field(t, w, OL_F_function));
    if (maker == OL_NONE || ol_kind_of(t, maker) != OL_N_call || ol_call_arg(m, w, 0, NULL) == OL_NONE)
        return OL_GM_NONE;
    ol_val v = ol_eval(m, maker);
    return v.kind == OL_V_GRADMODE ? (ol_gradmode)v.info : OL_GM_NONE;
}

/* Does the file wrap a callable so anywhere? Looked for once (bits 2-3 of
 * grad_setter_stmts: 4 looked for, 8 some). */
static bool any_wrappers(ol_model *m)
{
    if (!(m->grad_setter_stmts & 4)) {
        m->grad_setter_stmts |= 4;
        for (size_t i = 0; i < m->calls.len; i++) {
            ol_nid callee = ol_unparen(m->tree, m->calls.items[i].callee);
            if (callee != OL_NONE && ol_kind_of(m->tree, callee) == OL_N_call &&
                wrapper_mode(m, m->calls.items[i].node) != OL_GM_NONE) {
                m->grad_setter_stmts |= 8;
                break;
            }
        }
    }
    return (m->grad_setter_stmts & 8) != 0;
}

/* Does call n run a callable wrapped in a grad mode: `torch.no_grad()(model)(x)`,
 * or `f(x)` with `f = torch.inference_mode()(g)` the only binding of f that
 * reaches it? The mode, with the wrapper in *where; OL_GM_NONE otherwise. */
static ol_gradmode wrapped_mode(ol_model *m, ol_nid n, ol_nid *where)
{
    const ol_tree *t = m->tree;
    if (ol_kind_of(t, n) != OL_N_call || !any_wrappers(m))
        return OL_GM_NONE;
    ol_nid callee = ol_unparen(t, ol_field(t, n, OL_F_function));
    if (callee == OL_NONE)
        return OL_GM_NONE;
    ol_nid w = OL_NONE;
    if (ol_kind_of(t, callee) == OL_N_call) {
        w = callee;
    } else if (ol_kind_of(t, callee) == OL_N_identifier) {
        uint32_t defs[2];
        size_t nd = ol_reaching_defs(m, m->node_scope[callee], ol_node_sym(m, callee), callee, defs, 2);
        if (nd == 1 && m->defs.items[defs[0]].kind == OL_DEF_ASSIGN && m->defs.items[defs[0]].path_len == 0)
            w = m->defs.items[defs[0]].value;
    }
    ol_gradmode gm = wrapper_mode(m, w);
    if (gm != OL_GM_NONE && where)
        *where = ol_unparen(t, w);
    return gm;
}

/* The wrappers of function fi: calls `G()(fi)` of the file. Each turns
 * autograd on or off for fi's body where the wrapped callable runs (the
 * callable is run where nothing here sees a call of fi). Returns 1 when
 * every wrapper turns it off, 0 when one leaves it on, -1 when there is
 * none; the first in *where. */
static int wrappers_of(ol_model *m, uint32_t fi, ol_nid *where)
{
    if (!any_wrappers(m))
        return -1;
    int verdict = -1;
    for (size_t i = 0; i < m->calls.len && verdict != 0; i++) {
        ol_nid node = m->calls.items[i].node;
        ol_gradmode gm = wrapper_mode(m, node);
        if (gm == OL_GM_NONE)
            continue;
        ol_val v = ol_eval(m, ol_call_arg(m, node, 0, NULL));
        if (v.kind != OL_V_FUNCTION || v.ref != fi)
            continue;
        if (where && verdict < 0)
            *where = node;
        verdict = mode_disables(gm) ? 1 : 0;
        if (verdict == 0 && where)
            *where = node;
    }
    return verdict;
}

static bool grad_disabled_at(ol_model *m, ol_nid n, int depth)
{
    if (n == OL_NONE)
        return false;
    ol_gradmode wm = wrapped_mode(m, n, NULL);
    if (wm != OL_GM_NONE)
        return mode_disables(wm);
    int c = ctx_grad(m, n);
    if (c >= 0)
        return c == 1;
    int st = statement_grad(m, n);
    if (st >= 0)
        return st == 1;
    uint32_t fi = ol_function_of(m, n);
    if (fi != OL_NO_INDEX)
        return function_grad_disabled(m, fi, depth);
    return m->grad_globally_disabled;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* Does class ci derive from class base (through classes of the file)? */
static bool class_derives(ol_model *m, uint32_t ci, uint32_t base, int depth)
{
    if (ci >= m->classes.len || depth > 16)
        return false;
    for (size_t i = 0; i < m->classes.items[ci].bases.len; i++) {
        ol_val v = ol_eval(m, m->classes.items[ci].bases.items[i]);
        if (v.kind == OL_V_CLASS && v.ref != ci && (v.ref == base || class_derives(m, v.ref, base, depth + 1)))
            return true;
    }
    return false;
}

/* A method never called here that overrides a method of a base class of
 * this file runs where the base class calls it through self (a base's
 * `@torch.no_grad() def predict(self, x): return self._forward(x)` runs the
 * subclass's _forward): 1 when every such call has autograd off, 0 when
 * one has it on, -1 when there is none. */
static int overridden_grad_at(ol_model *m, uint32_t fi, int depth, ol_nid *where);

static int overridden_grad(ol_model *m, uint32_t fi, int depth)
{
    return overridden_grad_at(m, fi, depth, NULL);
}

/* *where: the base's call that decides (one with autograd on when the
 * answer is 0, else the first). */
static int overridden_grad_at(ol_model *m, uint32_t fi, int depth, ol_nid *where)
{
    const ol_function *f = &m->functions.items[fi];
    if (f->cls == OL_NO_INDEX || !f->name)
        return -1;
    const ol_class *cls = &m->classes.items[f->cls];
    int verdict = -1;
    for (size_t i = 0; i < cls->bases.len && verdict != 0; i++) {
        ol_val v = ol_eval(m, cls->bases.items[i]);
        if (v.kind != OL_V_CLASS || v.ref == f->cls)
            continue;
        uint32_t bf = find_method(m, v.ref, f->name, 0);
        if (bf == OL_NO_INDEX || bf == fi)
            continue;
        const ol_function *b = &m->functions.items[bf];
        for (size_t k = 0; k < b->callsites.len; k++) {
            const ol_call *c = &m->calls.items[b->callsites.items[k]];
            ol_nid recv = ol_unparen(m->tree, c->receiver);
            uint32_t len;
            const char *rt = recv != OL_NONE && ol_kind_of(m->tree, recv) == OL_N_identifier ? ol_text(m->tree, recv, &len)
                                                                                            : NULL;
            if (!rt || len != 4 || memcmp(rt, "self", 4) != 0)
                continue;
            if (where && (verdict < 0 || !grad_disabled_at(m, c->node, depth + 1)))
                *where = c->node;
            if (!grad_disabled_at(m, c->node, depth + 1))
                return 0;
            verdict = 1;
        }
    }
    if (verdict != 0) {
        /* `self._valid_epoch()` in a base that leaves the method to its
         * subclasses (the call runs no method of the file) */
        if (!m->unbound_self_calls_built) {
            m->unbound_self_calls_built = true;
            for (size_t i = 0; i < m->calls.len; i++) {
                const ol_call *c = &m->calls.items[i];
                ol_nid recv = ol_unparen(m->tree, c->receiver);
                if (!c->name || recv == OL_NONE || ol_kind_of(m->tree, recv) != OL_N_identifier ||
                    !ol_text_is(m->tree, recv, "self") || ol_callee_function(m, c->node) != OL_NO_INDEX)
                    continue;
                ol_vec_push(&m->unbound_self_calls, (uint64_t)c->name << 32 | (uint64_t)i);
            }
            ol_sort(m->unbound_self_calls.items, m->unbound_self_calls.len, sizeof(uint64_t), cmp_u64);
        }
        const uint64_t *v = m->unbound_self_calls.items;
        size_t lo = 0, hi = m->unbound_self_calls.len, key = (uint64_t)f->name << 32;
        while (lo < hi) {
            size_t mid = lo + (hi - lo) / 2;
            if (v[mid] < key)
                lo = mid + 1;
            else
                hi = mid;
        }
        for (; lo < m->unbound_self_calls.len && (v[lo] >> 32) == f->name; lo++) {
            const ol_call *c = &m->calls.items[(uint32_t)v[lo]];
            uint32_t cf = ol_function_of(m, c->node);
            /* called from a method of one of its class's bases */
            if (cf == OL_NO_INDEX || m->functions.items[cf].cls == OL_NO_INDEX || m->functions.items[cf].cls == f->cls ||
                !class_derives(m, f->cls, m->functions.items[cf].cls, 0))
                continue;
            if (where && (verdict < 0 || !grad_disabled_at(m, c->node, depth + 1)))
                *where = c->node;
            if (!grad_disabled_at(m, c->node, depth + 1))
                return 0;
            verdict = 1;
        }
    }
    return verdict;
}

static bool function_grad_disabled(ol_model *m, uint32_t fi, int depth)
{
    ol_function *f = &m->functions.items[fi];
    if (f->grad_state >= 2)
        return f->grad_state == 3;
    if (f->grad_state == 1 || depth > 12)
        return false;
    f->grad_state = 1;
    bool disabled = false;
    ol_gradmode dm = decorator_mode(m, fi);
    if (dm != OL_GM_NONE) {
        disabled = mode_disables(dm);
    } else if (ol_function_hook(m, fi) == OL_HOOK_EVAL_STEP || ol_function_hook(m, fi) == OL_HOOK_EVAL_HOOK) {
        disabled = true;
    } else {
        f = &m->functions.items[fi];
        int wrapped = wrappers_of(m, fi, NULL);
        if (f->callsites.len > 0) {
            /* called only where grad is off: its body runs without grad */
            disabled = wrapped != 0;
            for (size_t i = 0; i < m->functions.items[fi].callsites.len && disabled; i++) {
                const ol_call *c = &m->calls.items[m->functions.items[fi].callsites.items[i]];
                if (!grad_disabled_at(m, c->node, depth + 1))
                    disabled = false;
            }
        } else if (wrapped >= 0) {
            /* `evaluate = torch.no_grad()(evaluate)`: it runs as wrapped */
            disabled = wrapped == 1;
        } else if (overridden_grad(m, fi, depth) >= 0) {
            disabled = overridden_grad(m, fi, depth) == 1;
        } else {
            /* never called here: it follows the grad mode where it is defined */
            int c = ctx_grad(m, f->node);
            if (c >= 0)
                disabled = c == 1;
            else if (m->scopes.items[f->outer_scope].function != OL_NO_INDEX)
                disabled = function_grad_disabled(m, m->scopes.items[f->outer_scope].function, depth + 1);
            else
                disabled = m->grad_globally_disabled;
        }
    }
    m->functions.items[fi].grad_state = disabled ? 3 : 2;
    return disabled;
}

bool ol_grad_disabled(ol_model *m, ol_nid n)
{
    return grad_disabled_at(m, n, 0);
}

uint32_t ol_grad_root(ol_model *m, ol_nid n)
{
    if (n == OL_NONE || wrapped_mode(m, n, NULL) != OL_GM_NONE || ctx_grad(m, n) >= 0 || statement_grad(m, n) >= 0)
        return OL_NO_INDEX;
    uint32_t fi = ol_function_of(m, n);
    if (fi == OL_NO_INDEX || decorator_mode(m, fi) != OL_GM_NONE)
        return OL_NO_INDEX;
    ol_hook hook = ol_function_hook(m, fi);
    if (hook == OL_HOOK_EVAL_STEP || hook == OL_HOOK_EVAL_HOOK)
        return OL_NO_INDEX;
    const ol_function *f = &m->functions.items[fi];
    /* never called here, defined inside a function or under a context, or
     * wrapped in a grad mode: that decides */
    if (f->callsites.len == 0 && (ctx_grad(m, f->node) >= 0 || m->scopes.items[f->outer_scope].function != OL_NO_INDEX ||
                                  wrappers_of(m, fi, NULL) >= 0))
        return OL_NO_INDEX;
    return fi;
}

/* What decides the grad mode in function fi (its body, not one node of it). */
static void explain_function(ol_model *m, uint32_t fi, ol_grad_local *out, int depth)
{
    const ol_function *f = &m->functions.items[fi];
    out->function = fi;
    ol_nid where = OL_NONE;
    if (decorator_mode_at(m, fi, &where) != OL_GM_NONE) {
        out->cause = OL_GC_DECORATOR;
        out->node = where;
        return;
    }
    ol_hook hook = ol_function_hook(m, fi);
    if (hook == OL_HOOK_EVAL_STEP || hook == OL_HOOK_EVAL_HOOK) {
        out->cause = OL_GC_HOOK;
        out->node = ol_field(m->tree, f->node, OL_F_name);
        return;
    }
    if (f->callsites.len == 0 && wrappers_of(m, fi, &where) >= 0) {
        out->cause = OL_GC_CONTEXT;
        out->node = where;
        return;
    }
    if (f->callsites.len > 0) {
        /* a call with autograd on when the body runs with it, else the first */
        out->cause = OL_GC_CALLERS;
        out->node = m->calls.items[f->callsites.items[0]].node;
        for (size_t i = 0; i < f->callsites.len; i++) {
            ol_nid at = m->calls.items[f->callsites.items[i]].node;
            if (!grad_disabled_at(m, at, depth + 1)) {
                out->node = at;
                break;
            }
        }
        return;
    }
    if (overridden_grad_at(m, fi, depth, &where) >= 0) {
        out->cause = OL_GC_OVERRIDE;
        out->node = where;
        return;
    }
    for (uint32_t c = m->node_ctx[f->node]; c != OL_NO_INDEX; c = m->contexts.items[c].parent) {
        const ol_ctx *ctx = &m->contexts.items[c];
        if (ctx->kind == OL_CTX_GRAD && (ctx->gradmode == OL_GM_ENABLE || mode_disables(ctx->gradmode))) {
            out->cause = OL_GC_CONTEXT;
            out->node = ctx->item;
            return;
        }
    }
    uint32_t outer = m->scopes.items[f->outer_scope].function;
    if (outer != OL_NO_INDEX && depth < 12) {
        explain_function(m, outer, out, depth + 1);
        if (out->cause == OL_GC_NONE_CALLED)
            out->function = fi;
        return;
    }
    out->cause = m->grad_globally_disabled ? OL_GC_GLOBAL : OL_GC_NONE_CALLED;
    out->node = OL_NONE;
}

void ol_grad_explain(ol_model *m, ol_nid n, ol_grad_local *out)
{
    out->off = ol_grad_disabled(m, n);
    out->cause = OL_GC_MODULE;
    out->node = OL_NONE;
    out->function = OL_NO_INDEX;
    if (n == OL_NONE)
        return;
    ol_nid where = OL_NONE;
    if (wrapped_mode(m, n, &where) != OL_GM_NONE) {
        out->cause = OL_GC_CONTEXT;
        out->node = where;
        return;
    }
    for (uint32_t c = m->node_ctx[n]; c != OL_NO_INDEX; c = m->contexts.items[c].parent) {
        const ol_ctx *ctx = &m->contexts.items[c];
        if (ctx->kind == OL_CTX_GRAD && (ctx->gradmode == OL_GM_ENABLE || mode_disables(ctx->gradmode))) {
            out->cause = OL_GC_CONTEXT;
            out->node = ctx->item;
            return;
        }
    }
    if (statement_grad_at(m, n, &where) >= 0) {
        out->cause = OL_GC_STATEMENT;
        out->node = where;
        return;
    }
    uint32_t fi = ol_function_of(m, n);
    if (fi != OL_NO_INDEX) {
        explain_function(m, fi, out, 0);
        return;
    }
    out->cause = m->grad_globally_disabled ? OL_GC_GLOBAL : OL_GC_MODULE;
}

typedef OL_VEC(uint32_t) u32_list;

static bool u32_has(const u32_list *v, uint32_t x)
{
    for (size_t i = 0; i < v->len; i++)
        if (v->items[i] == x)
            return true;
    return false;
}

static bool grad_tops(ol_model *m, uint32_t fi, int depth, u32_list *seen, u32_list *tops)
{
    if (u32_has(seen, fi))
        return true; /* a cycle: the other paths into it decide */
    if (depth > 12)
        return false;
    ol_vec_push(seen, fi);
    ol_gradmode dm = decorator_mode(m, fi);
    if (dm != OL_GM_NONE)
        return mode_disables(dm);
    ol_hook hook = ol_function_hook(m, fi);
    if (hook == OL_HOOK_EVAL_STEP || hook == OL_HOOK_EVAL_HOOK)
        return true;
    const ol_function *f = &m->functions.items[fi];
    if (f->callsites.len == 0) {
        int wrapped = wrappers_of(m, fi, NULL);
        if (wrapped >= 0)
            return wrapped == 1;
        /* defined under a context: that decides; inside a function (a
         * lambda, a closure): it runs in the grad mode of that function */
        int c = ctx_grad(m, f->node);
        if (c >= 0)
            return c == 1;
        uint32_t outer = m->scopes.items[f->outer_scope].function;
        if (outer != OL_NO_INDEX)
            return grad_tops(m, outer, depth + 1, seen, tops);
        ol_vec_push(tops, fi);
        return true;
    }
    for (size_t i = 0; i < m->functions.items[fi].callsites.len; i++) {
        ol_nid at = m->calls.items[m->functions.items[fi].callsites.items[i]].node;
        int c = ctx_grad(m, at);
        if (c < 0)
            c = statement_grad(m, at);
        if (c == 1)
            continue;
        if (c == 0)
            return false;
        uint32_t caller = ol_function_of(m, at);
        if (caller == OL_NO_INDEX) {
            if (m->grad_globally_disabled)
                continue;
            return false;
        }
        if (!grad_tops(m, caller, depth + 1, seen, tops))
            return false;
    }
    return true;
}

bool ol_grad_tops(ol_model *m, uint32_t fi, uint32_t **tops, size_t *n)
{
    *tops = NULL;
    *n = 0;
    if (fi >= m->functions.len)
        return false;
    u32_list seen = {0}, found = {0};
    bool ok = grad_tops(m, fi, 0, &seen, &found) && found.len > 0;
    ol_vec_free(&seen);
    if (!ok) {
        ol_vec_free(&found);
        return false;
    }
    *tops = found.items;
    *n = found.len;
    return true;
}

uint32_t ol_autocast_at(const ol_model *m, ol_nid n)
{
    for (uint32_t c = m->node_ctx[n]; c != OL_NO_INDEX; c = m->contexts.items[c].parent)
        if (m->contexts.items[c].kind == OL_CTX_AUTOCAST)
            return c;
    return OL_NO_INDEX;
}

uint32_t ol_except_at(const ol_model *m, ol_nid n)
{
    for (uint32_t c = m->node_ctx[n]; c != OL_NO_INDEX; c = m->contexts.items[c].parent)
        if (m->contexts.items[c].kind == OL_CTX_EXCEPT)
            return c;
    return OL_NO_INDEX;
}

/* ---- reaching definitions ---------------------------------------------------- */

/* Does def d's statement run whenever control reaches `at`? False when it
 * sits in a branch (if/else, except, loop body, ...) that `at` is not in. */
static bool dominates(const ol_model *m, const ol_def *d, ol_nid at)
{
    const ol_tree *t = m->tree;
    ol_nid scope_node = m->scopes.items[d->scope].node;
    for (ol_nid a = d->stmt; a != OL_NONE && a != scope_node; a = ol_parent(t, a)) {
        ol_nid p = ol_parent(t, a);
        if (p == OL_NONE)
            break;
        ol_kind pk = ol_kind_of(t, p);
        bool conditional = false;
        switch (pk) {
        case OL_N_if_statement:
        case OL_N_elif_clause:
        case OL_N_else_clause:
        case OL_N_except_clause:
        case OL_N_for_statement:
        case OL_N_while_statement:
        case OL_N_case_clause:
        case OL_N_conditional_expression:
        case OL_N_boolean_operator:
            conditional = ol_kind_of(t, a) == OL_N_block || pk == OL_N_conditional_expression ||
                          pk == OL_N_boolean_operator;
            if (pk == OL_N_for_statement && ol_kind_of(t, a) != OL_N_block)
                conditional = false; /* the loop header itself */
            break;
        default:
            break;
        }
        if (conditional && !ol_contains(t, a, at))
            return false;
    }
    return true;
}

/* Built for every chain at once the first time one is asked for after defs
 * were added. */
size_t ol_def_chain(ol_model *m, uint32_t head, const uint32_t **out)
{
    if (m->chains_built != m->defs.len) {
        free(m->chain_items);
        free(m->chain_start);
        free(m->chain_count);
        m->chain_items = ol_xmalloc((m->defs.len + 1) * sizeof(uint32_t));
        m->chain_start = ol_xmalloc((m->defs.len + 1) * sizeof(uint32_t));
        m->chain_count = ol_xcalloc(m->defs.len + 1, sizeof(uint32_t));
        size_t at = 0;
        for (size_t slot = 0; slot < m->def_slots; slot++) {
            if (!m->def_keys[slot])
                continue;
            uint32_t first = m->def_heads[slot];
            size_t begin = at;
            for (uint32_t d = first; d != OL_NO_INDEX; d = m->defs.items[d].next)
                m->chain_items[at++] = d;
            m->chain_start[first] = (uint32_t)begin;
            m->chain_count[first] = (uint32_t)(at - begin);
        }
        m->chains_built = m->defs.len;
    }
    if (head >= m->defs.len) {
        *out = NULL;
        return 0;
    }
    *out = m->chain_items + m->chain_start[head];
    return m->chain_count[head];
}

static bool scope_binds(const ol_model *m, uint32_t scope, ol_sym name)
{
    return ol_scope_defs(m, scope, name) != OL_NO_INDEX;
}

size_t ol_reaching_defs(ol_model *m, uint32_t scope, ol_sym name, ol_nid at, uint32_t *out, size_t cap)
{
    const ol_tree *t = m->tree;
    size_t count = 0;
    /* Python scoping: a name assigned anywhere in a function is local to it;
     * otherwise it comes from an enclosing function or the module (class
     * bodies are skipped for code nested in them). */
    uint32_t s = scope;
    bool first = true;
    while (s != OL_NO_INDEX) {
        const ol_scope *sc = &m->scopes.items[s];
        if (!first && sc->kind == OL_SCOPE_CLASS) {
            s = sc->parent;
            continue;
        }
        bool is_global = false;
        /* `global x` at module level (legal, if pointless) names this very
         * scope: following it would loop here forever */
        for (size_t i = 0; i < sc->globals.len && s != 0; i++)
            if (sc->globals.items[i] == name)
                is_global = true;
        if (is_global) {
            s = 0;
            first = false;
            continue;
        }
        if (scope_binds(m, s, name))
            break;
        s = sc->parent;
        first = false;
    }
    if (s == OL_NO_INDEX)
        return 0;
    uint32_t head = ol_scope_defs(m, s, name);
    if (!first || s != scope) {
        /* a free variable: any binding in the outer scope may be the one seen
         * when the inner code runs */
        for (uint32_t d = head; d != OL_NO_INDEX && count < cap; d = m->defs.items[d].next)
            out[count++] = d;
        return count;
    }
    uint32_t pos = ol_node_at(t, at)->start;
    /* the chain of (scope, name), in pos order, as an array: a name bound
     * thousands of times in one scope is looked up by binary search */
    const uint32_t *chain;
    size_t chain_len = ol_def_chain(m, head, &chain);
    size_t lo = 0, hi = chain_len;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (m->defs.items[chain[mid]].pos > pos)
            hi = mid;
        else
            lo = mid + 1;
    }
    size_t visible = lo; /* chain[0, visible): defs visible before `at` */
    /* defs visible before `at`, latest first (the last 256 of them), until
     * one that surely ran */
    size_t oldest = visible > 256 ? visible - 256 : 0;
    uint32_t dominating = OL_NO_INDEX;
    for (size_t i = visible; i-- > oldest && count < cap;) {
        const ol_def *d = &m->defs.items[chain[i]];
        if (d->kind == OL_DEF_DELETE && dominates(m, d, at))
            break;
        out[count++] = chain[i];
        if (dominates(m, d, at)) {
            dominating = chain[i];
            break;
        }
    }
    /* loop-carried: defs later in an enclosing loop reach `at` through the
     * back edge, unless a def in the same iteration already dominates */
    for (uint32_t l = m->node_loop[at]; l != OL_NO_INDEX && count < cap; l = m->loops.items[l].parent) {
        const ol_loop *loop = &m->loops.items[l];
        if (m->loops.items[l].scope != s && loop->kind != OL_LOOP_COMPREHENSION)
            break;
        if (dominating != OL_NO_INDEX && ol_contains(t, loop->node, m->defs.items[dominating].stmt))
            break;
        /* the defs after `at` in the loop, latest first, until one that runs on
         * every iteration: it is the last word before the back edge */
        uint32_t later[64];
        size_t nl = 0;
        uint32_t loop_end = ol_node_at(t, loop->node)->end;
        for (size_t i = visible; i < chain_len && nl < OL_ARRAY_LEN(later); i++) {
            const ol_def *def = &m->defs.items[chain[i]];
            if (def->pos > loop_end)
                break; /* sorted by pos: the rest lie after the loop */
            if (ol_contains(t, loop->node, def->stmt))
                later[nl++] = chain[i];
        }
        bool killed = false;
        for (size_t k = nl; k-- > 0 && count < cap;) {
            const ol_def *def = &m->defs.items[later[k]];
            if (def->kind != OL_DEF_DELETE)
                out[count++] = later[k];
            if (loop->body != OL_NONE && dominates(m, def, loop->body)) {
                killed = true;
                break;
            }
        }
        if (killed)
            break;
    }
    return count;
}

/* ---- unpacking and iteration ------------------------------------------------------ */

/* The element a `for` over a value yields. */
static ol_val elem_of_val(ol_val v)
{
    switch (v.kind) {
    case OL_V_LOADER:
    case OL_V_DATASET:
        return mk(OL_V_TENSOR, OL_VF_BATCH);
    case OL_V_LIST:
    case OL_V_TUPLE:
    case OL_V_SET:
        if (v.info == OL_V_DATASET)
            return mk(OL_V_DATASET, 0);
        if (v.flags & OL_VF_ELEM_GRAPH)
            return mk(OL_V_TENSOR, OL_VF_GRAPH | (v.flags & OL_VF_PARAM));
        return UNKNOWN;
    case OL_V_TENSOR:
        return mk(OL_V_TENSOR, v.flags & (OL_VF_GRAPH | OL_VF_BATCH));
    case OL_V_RANGE:
        return mk(OL_V_NUMBER, 0);
    case OL_V_ARRAY:
        return mk(OL_V_ARRAY, 0);
    default:
        return UNKNOWN;
    }
}

/* Element i of an unpacked value. */
static ol_val index_of_val(ol_val v, int i)
{
    switch (v.kind) {
    case OL_V_TENSOR: {
        ol_val r = mk(OL_V_TENSOR, v.flags & (OL_VF_GRAPH | OL_VF_BATCH | OL_VF_LOSS));
        if ((v.flags & OL_VF_PAIR) && i == 1)
            r.flags &= (uint8_t)~(OL_VF_GRAPH | OL_VF_LOSS);
        return r;
    }
    case OL_V_LIST:
    case OL_V_TUPLE:
        return elem_of_val(v);
    case OL_V_LOADER:
        return UNKNOWN;
    default:
        if (v.flags & OL_VF_GRAPH)
            return mk(OL_V_TENSOR, OL_VF_GRAPH);
        return UNKNOWN;
    }
}

static bool callee_is_builtin(ol_model *m, ol_nid call, ol_sym name)
{
    ol_nid callee = ol_field(m->tree, call, OL_F_function);
    if (ol_kind_of(m->tree, callee) != OL_N_identifier || ol_node_sym(m, callee) != name)
        return false;
    ol_val v = ol_eval(m, callee);
    return v.kind == OL_V_EXTERN && ol_str_has_prefix(ol_sym_str(m, v.ref), "builtins.");
}

static bool is_passthrough_iter(ol_model *m, ol_nid call)
{
    const char *q = ol_qualname(m, ol_field(m->tree, call, OL_F_function));
    if (!q)
        return false;
    static const char *const iters[] = {"builtins.iter", "builtins.list", "builtins.sorted", "builtins.reversed",
                                        "builtins.tuple", "tqdm.tqdm", "tqdm.auto.tqdm", "tqdm.notebook.tqdm",
                                        "tqdm", "tqdm.rich.tqdm", "rich.progress.track", "itertools.islice",
                                        "itertools.cycle", "itertools.chain", NULL};
    return qin(q, iters);
}

ol_nid ol_bound_value(ol_model *m, ol_nid name)
{
    const ol_tree *t = m->tree;
    name = ol_unparen(t, name);
    uint32_t defs[2];
    if (name == OL_NONE || ol_kind_of(t, name) != OL_N_identifier ||
        ol_reaching_defs(m, m->node_scope[name], ol_node_sym(m, name), name, defs, 2) != 1)
        return OL_NONE;
    const ol_def *d = &m->defs.items[defs[0]];
    if (d->kind != OL_DEF_ASSIGN || d->path_len != 0 || d->starred || d->value == OL_NONE)
        return OL_NONE;
    return ol_unparen(t, d->value);
}

/* Value of an expression, or of its element (elem: what a for over it
 * yields), followed by an unpacking path. Works on syntax where it can:
 * enumerate, zip, tuple literals and accelerator.prepare unpack by position. */
static ol_val eval_path(ol_model *m, ol_nid expr, bool elem, const int8_t *path, int path_len)
{
    const ol_tree *t = m->tree;
    expr = ol_unparen(t, expr);
    if (expr == OL_NONE)
        return UNKNOWN;
    ol_kind k = ol_kind_of(t, expr);
    if (k == OL_N_call && elem) {
        if (callee_is_builtin(m, expr, m->names.enumerate)) {
            if (path_len == 0)
                return mk(OL_V_TUPLE, 0);
            if (path[0] == 0)
                return mk(OL_V_NUMBER, 0);
            ol_nid inner = ol_call_arg(m, expr, 0, "iterable");
            return eval_path(m, inner, true, path + 1, path_len - 1);
        }
        if (callee_is_builtin(m, expr, m->names.zip)) {
            if (path_len == 0)
                return mk(OL_V_TUPLE, 0);
            ol_nid inner = ol_call_arg(m, expr, path[0], NULL);
            return eval_path(m, inner, true, path + 1, path_len - 1);
        }
        if (is_passthrough_iter(m, expr)) {
            ol_nid inner = ol_call_arg(m, expr, 0, "iterable");
            if (inner != OL_NONE)
                return eval_path(m, inner, true, path, path_len);
        }
        /* `d.values()` and the value of `d.items()` of a name bound once to
         * a dict literal: its values, joined */
        ol_nid callee = ol_field(t, expr, OL_F_function);
        if (ol_kind_of(t, callee) == OL_N_attribute) {
            ol_nid meth = ol_field(t, callee, OL_F_attribute);
            bool values = ol_text_is(t, meth, "values");
            bool items = !values && ol_text_is(t, meth, "items") && path_len > 0 && path[0] == 1;
            ol_nid lit = values || items ? ol_bound_value(m, ol_field(t, callee, OL_F_object)) : OL_NONE;
            if (lit != OL_NONE && ol_kind_of(t, lit) == OL_N_dictionary) {
                ol_val r = BOTTOM;
                for (ol_nid pair = ol_first_named(t, lit); pair != OL_NONE; pair = ol_next_named(t, pair))
                    if (ol_kind_of(t, pair) == OL_N_pair)
                        r = join(r, eval_path(m, ol_field(t, pair, OL_F_value), false, path + items,
                                              path_len - items));
                if (r.kind != OL_V_BOTTOM)
                    return r;
            }
        }
    }
    if ((k == OL_N_tuple || k == OL_N_list || k == OL_N_expression_list) && path_len > 0 && !elem) {
        ol_nid item = ol_named_child(t, expr, (uint32_t)path[0]);
        if (item != OL_NONE && ol_kind_of(t, item) != OL_N_list_splat)
            return eval_path(m, item, false, path + 1, path_len - 1);
        return UNKNOWN;
    }
    if ((k == OL_N_tuple || k == OL_N_list) && elem) {
        ol_val r = BOTTOM;
        for (ol_nid c = ol_first_named(t, expr); c != OL_NONE; c = ol_next_named(t, c))
            r = join(r, eval_path(m, c, false, path, path_len));
        return r.kind == OL_V_BOTTOM ? UNKNOWN : r;
    }
    if (k == OL_N_list_comprehension && elem) {
        ol_nid body = ol_field(t, expr, OL_F_body);
        if (body != OL_NONE)
            return eval_path(m, body, false, path, path_len);
    }
    if (k == OL_N_identifier && elem) {
        /* `meters = [AverageMeter(), AverageMeter()]` ... `for m in meters`:
         * an element of the literal the name is bound to, when that is its
         * only binding reaching here */
        ol_nid lit = ol_bound_value(m, expr);
        ol_kind vk = lit != OL_NONE ? ol_kind_of(t, lit) : OL_N_ERROR;
        if (vk == OL_N_list || vk == OL_N_tuple || vk == OL_N_list_comprehension) {
            ol_val r = eval_path(m, lit, true, path, path_len);
            if (r.kind != OL_V_UNKNOWN)
                return r;
        }
    }
    if (k == OL_N_call && !elem && path_len > 0) {
        uint32_t ci = m->node_call[expr];
        if (ci != OL_NO_INDEX && m->calls.items[ci].name == m->names.prepare &&
            m->calls.items[ci].receiver != OL_NONE) {
            ol_val rv = ol_eval(m, m->calls.items[ci].receiver);
            if (rv.kind == OL_V_OBJECT && rv.ref && qeq(ol_sym_str(m, rv.ref), "accelerate.Accelerator")) {
                ol_nid arg = ol_call_arg(m, expr, path[0], NULL);
                return eval_path(m, arg, false, path + 1, path_len - 1);
            }
        }
        const char *q = ol_qualname(m, ol_field(t, expr, OL_F_function));
        if (q && qeq(q, "deepspeed.initialize")) {
            static const ol_vkind parts[] = {OL_V_MODULE, OL_V_OPTIMIZER, OL_V_LOADER, OL_V_SCHEDULER};
            if (path[0] >= 0 && path[0] < 4)
                return mk(parts[path[0]], 0);
            return UNKNOWN;
        }
        if (q && qeq(q, "torch.utils.data.random_split"))
            return mk(OL_V_DATASET, 0);
    }
    if (!elem && path_len > 0 && (k == OL_N_call || k == OL_N_identifier)) {
        /* `loss, aux = step(batch)`: each name gets its own element */
        ol_val v;
        if (elem_of_expr(m, expr, path[0], NULL, 0, &v)) {
            if (v.kind == OL_V_BOTTOM)
                v = UNKNOWN;
            for (int i = 1; i < path_len; i++)
                v = index_of_val(v, path[i]);
            return v;
        }
    }
    ol_val v = ol_eval(m, expr);
    if (elem)
        v = elem_of_val(v);
    for (int i = 0; i < path_len; i++)
        v = index_of_val(v, path[i]);
    return v;
}

/* ---- calls of known functions, element by element --------------------------------- */

uint32_t ol_callee_function(ol_model *m, ol_nid call)
{
    const ol_tree *t = m->tree;
    if (call == OL_NONE || ol_kind_of(t, call) != OL_N_call)
        return OL_NO_INDEX;
    ol_nid callee = ol_unparen(t, ol_field(t, call, OL_F_function));
    uint32_t ci = m->node_call[call];
    if (callee == OL_NONE)
        return OL_NO_INDEX;
    if (ol_kind_of(t, callee) == OL_N_attribute && ci != OL_NO_INDEX) {
        const ol_call *c = &m->calls.items[ci];
        ol_val rv = ol_eval(m, c->receiver);
        bool local_instance = (rv.kind == OL_V_MODULE || rv.kind == OL_V_INSTANCE) && (rv.flags & OL_VF_LOCAL);
        if ((local_instance || rv.kind == OL_V_CLASS) && rv.ref < m->classes.len)
            return find_method(m, rv.ref, c->name, 0);
        return OL_NO_INDEX;
    }
    ol_val cv = ol_eval(m, callee);
    return cv.kind == OL_V_FUNCTION && cv.ref < m->functions.len ? cv.ref : OL_NO_INDEX;
}

/* The project name a call runs, for the links: an imported function
 * (`evaluate`, `U.evaluate`) or a method of an instance of an imported class. */
static bool call_target(ol_model *m, ol_nid call, ol_sym *qual, ol_sym *method)
{
    const ol_tree *t = m->tree;
    ol_nid callee = ol_unparen(t, ol_field(t, call, OL_F_function));
    uint32_t ci = m->node_call[call];
    if (callee == OL_NONE || ci == OL_NO_INDEX)
        return false;
    if (ol_kind_of(t, callee) == OL_N_attribute) {
        ol_val rv = ol_eval(m, m->calls.items[ci].receiver);
        if ((rv.kind == OL_V_OBJECT || rv.kind == OL_V_MODULE) && rv.ref && !(rv.flags & OL_VF_LOCAL)) {
            *qual = rv.ref;
            *method = m->calls.items[ci].name;
            return true;
        }
        ol_val unused;
        if ((rv.kind == OL_V_MODULE || rv.kind == OL_V_INSTANCE) && (rv.flags & OL_VF_LOCAL) &&
            inherited(m, rv.ref, m->calls.items[ci].name, qual, &unused, 0)) {
            *method = m->calls.items[ci].name;
            return true;
        }
    }
    ol_val cv = ol_eval(m, callee);
    if (cv.kind != OL_V_EXTERN)
        return false;
    *qual = cv.ref;
    *method = 0;
    return true;
}

static bool function_element(ol_model *m, uint32_t fi, int index, const char *key, int depth, ol_val *out)
{
    if (fi >= m->functions.len || depth > 4)
        return false;
    size_t n = m->functions.items[fi].returns.len;
    if (n == 0 || n > 16)
        return false;
    ol_val r = BOTTOM;
    for (size_t i = 0; i < n; i++) {
        ol_val v;
        if (!elem_of_expr(m, m->functions.items[fi].returns.items[i], index, key, depth + 1, &v))
            return false;
        r = join(r, v);
    }
    *out = r;
    return true;
}

bool ol_function_element(ol_model *m, uint32_t fi, int index, const char *key, ol_val *out)
{
    if (!function_element(m, fi, index, key, 0, out))
        return false;
    if (out->kind == OL_V_BOTTOM)
        *out = UNKNOWN;
    return true;
}

typedef struct dict_stores {
    const ol_tree *t;
    ol_nid *keys, *values;
    size_t n, cap;
} dict_stores;

static bool note_store(void *ctx, const ol_use *use)
{
    dict_stores *ds = ctx;
    switch (use->kind) {
    case OL_USE_READ:
        return true;
    case OL_USE_STORE:
        if (ol_kind_of(ds->t, use->key) != OL_N_string || ds->n == ds->cap)
            return false;
        ds->keys[ds->n] = use->key;
        ds->values[ds->n++] = use->value;
        return true;
    case OL_USE_ADD: /* append() and friends are no dict's; update() adds keys not known */
        return !ol_text_is(ds->t, use->method, "update") && !ol_text_is(ds->t, use->method, "setdefault") &&
               !ol_text_is(ds->t, use->method, "__setitem__");
    default:
        return false; /* passed on, held by another name, bound again: anything may be put in it */
    }
}

size_t ol_dict_stores(ol_model *m, uint32_t def, ol_nid *keys, ol_nid *values, size_t cap)
{
    dict_stores ds = {m->tree, keys, values, 0, cap};
    return ol_container_uses(m, def, note_store, &ds) ? ds.n : (size_t)-1;
}

/* The element `key` of the dict literal def binds, also through the stores
 * into it (`out = {}`, then `out["loss"] = loss`): false when the dict may
 * change otherwise, or has no such key. */
static bool stored_element(ol_model *m, uint32_t def, const char *key, ol_val *out)
{
    const ol_tree *t = m->tree;
    ol_nid dict = ol_unparen(t, m->defs.items[def].value);
    ol_nid keys[32], values[32];
    size_t n = ol_dict_stores(m, def, keys, values, 32);
    if (n == (size_t)-1)
        return false;
    ol_val r = BOTTOM;
    bool found = false;
    size_t klen = strlen(key);
    for (ol_nid c = ol_first_named(t, dict); c != OL_NONE; c = ol_next_named(t, c)) {
        const char *s;
        uint32_t len;
        if (ol_kind_of(t, c) != OL_N_pair)
            return false; /* **other: any key may come from it */
        if (ol_string_value(t, ol_field(t, c, OL_F_key), &s, &len) && klen == len && memcmp(s, key, len) == 0) {
            r = join(r, ol_eval(m, ol_field(t, c, OL_F_value)));
            found = true;
        }
    }
    for (size_t i = 0; i < n; i++) {
        const char *s;
        uint32_t len;
        if (ol_string_value(t, keys[i], &s, &len) && klen == len && memcmp(s, key, len) == 0) {
            r = join(r, ol_eval(m, values[i]));
            found = true;
        }
    }
    if (found)
        *out = r;
    return found;
}

/* Element `index` (of a tuple or list) or `key` (of a dict) of what e
 * evaluates to, read from literals, through names bound once to them and
 * through the returns of known functions. False when it cannot be read
 * element by element (then the whole value stands for each element). A
 * `None` contributes nothing (BOTTOM). */
static bool elem_of_expr(ol_model *m, ol_nid e, int index, const char *key, int depth, ol_val *out)
{
    const ol_tree *t = m->tree;
    e = ol_unparen(t, e);
    if (e == OL_NONE || depth > 6)
        return false;
    ol_kind k = ol_kind_of(t, e);
    if (k == OL_N_none) {
        *out = BOTTOM;
        return true;
    }
    if (!key && index >= 0 && (k == OL_N_tuple || k == OL_N_list || k == OL_N_expression_list)) {
        int i = 0;
        for (ol_nid c = ol_first_named(t, e); c != OL_NONE; c = ol_next_named(t, c), i++) {
            if (ol_kind_of(t, c) == OL_N_list_splat)
                return false;
            if (i == index) {
                *out = ol_eval(m, c);
                return true;
            }
        }
        return false;
    }
    if (key && k == OL_N_dictionary) {
        for (ol_nid c = ol_first_named(t, e); c != OL_NONE; c = ol_next_named(t, c)) {
            if (ol_kind_of(t, c) != OL_N_pair)
                return false; /* **other: any key may come from it */
            const char *s;
            uint32_t len;
            if (ol_string_value(t, ol_field(t, c, OL_F_key), &s, &len) && strlen(key) == len &&
                memcmp(s, key, len) == 0) {
                *out = ol_eval(m, ol_field(t, c, OL_F_value));
                return true;
            }
        }
        return false;
    }
    if (k == OL_N_call) {
        uint32_t fi = ol_callee_function(m, e);
        bool found = false;
        ol_val mod = fi == OL_NO_INDEX ? ol_eval(m, ol_field(t, e, OL_F_function)) : UNKNOWN;
        if (fi != OL_NO_INDEX) {
            found = function_element(m, fi, index, key, depth, out);
        } else if (mod.kind == OL_V_MODULE && !(mod.flags & OL_VF_LOSSFN)) {
            /* `preds, lengths = decoder(x)`: what the module's forward() returns */
            if ((mod.flags & OL_VF_LOCAL) && mod.ref < m->classes.len) {
                uint32_t fwd = find_method(m, mod.ref, m->names.forward, 0);
                found = fwd != OL_NO_INDEX && function_element(m, fwd, index, key, depth, out);
            } else if (mod.ref && m->links) {
                found = m->links->call(m->links, m, mod.ref, m->names.forward, index, key, out);
            }
        }
        if (!found && fi == OL_NO_INDEX && m->links) {
            ol_sym qual, method;
            found = call_target(m, e, &qual, &method) && m->links->call(m->links, m, qual, method, index, key, out);
        }
        if (found && (out->flags & OL_VF_GRAPH) && ol_grad_disabled(m, e))
            out->flags &= (uint8_t)~OL_VF_GRAPH;
        return found;
    }
    if (k == OL_N_identifier) {
        uint32_t defs[8];
        size_t n = ol_reaching_defs(m, m->node_scope[e], ol_node_sym(m, e), e, defs, 8);
        if (n == 0 || n == 8)
            return false;
        if (n == 1 && !key && metric_output_param(m, defs[0])) {
            /* `y_pred, y = output`: only the predictions carry the graph */
            *out = mk(OL_V_TENSOR, index == 0 ? OL_VF_GRAPH : 0);
            return true;
        }
        ol_val r = BOTTOM;
        for (size_t i = 0; i < n; i++) {
            const ol_def *d = &m->defs.items[defs[i]];
            if (d->kind != OL_DEF_ASSIGN || d->path_len != 0 || d->starred)
                return false;
            ol_val v;
            if (key && ol_kind_of(t, ol_unparen(t, d->value)) == OL_N_dictionary) {
                if (!stored_element(m, defs[i], key, &v))
                    return false;
            } else if (!elem_of_expr(m, d->value, index, key, depth + 1, &v)) {
                return false;
            }
            r = join(r, v);
        }
        *out = r;
        return true;
    }
    return false;
}

/* `out[0]`, `out["loss"]` on a container: the element itself when it can be read. */
static bool subscript_element(ol_model *m, ol_nid subscript, ol_val *out)
{
    const ol_tree *t = m->tree;
    ol_nid idx = ol_field(t, subscript, OL_F_subscript);
    const char *s;
    uint32_t len;
    char key[64];
    bool found;
    if (ol_kind_of(t, idx) == OL_N_integer) {
        uint32_t tl;
        const char *txt = ol_text(t, idx, &tl);
        if (tl == 0 || tl > 2 || !isdigit((unsigned char)txt[0]) || (tl == 2 && !isdigit((unsigned char)txt[1])))
            return false;
        int index = tl == 1 ? txt[0] - '0' : (txt[0] - '0') * 10 + (txt[1] - '0');
        found = elem_of_expr(m, ol_field(t, subscript, OL_F_value), index, NULL, 0, out);
    } else if (ol_string_value(t, idx, &s, &len) && len < sizeof(key) && !memchr(s, '\0', len)) {
        memcpy(key, s, len);
        key[len] = '\0';
        found = elem_of_expr(m, ol_field(t, subscript, OL_F_value), -1, key, 0, out);
    } else {
        return false;
    }
    if (found && out->kind == OL_V_BOTTOM)
        *out = UNKNOWN;
    return found;
}

/* ---- parameters ---------------------------------------------------------------- */

static ol_val annotation_value(ol_model *m, ol_nid ann)
{
    if (ann == OL_NONE)
        return UNKNOWN;
    ol_nid e = ann;
    if (ol_kind_of(m->tree, e) == OL_N_type)
        e = ol_first_named(m->tree, e);
    ol_val v = ol_eval(m, e);
    if (v.kind == OL_V_CLASS)
        return instance_of_class(m, v.ref);
    if (v.kind != OL_V_EXTERN)
        return UNKNOWN;
    const char *q = ol_sym_str(m, v.ref);
    if (qeq(q, "torch.nn.Module") || qeq(q, "torch.nn.modules.module.Module") ||
        base_is_module_qual(q, false))
        return mk(OL_V_MODULE, 0);
    if (qeq(q, "torch.optim.Optimizer") || qeq(q, "torch.optim.optimizer.Optimizer"))
        return mk(OL_V_OPTIMIZER, 0);
    if (qeq(last_part(q), "DataLoader"))
        return mk(OL_V_LOADER, 0);
    if (qeq(q, "torch.Tensor"))
        return mk(OL_V_TENSOR, 0);
    if (qeq(q, "builtins.int") || qeq(q, "builtins.float") || qeq(q, "builtins.bool"))
        return mk(OL_V_NUMBER, 0);
    if (qeq(q, "builtins.str"))
        return mk(OL_V_STRING, 0);
    if (qeq(q, "torch.device"))
        return mk(OL_V_DEVICE, 0);
    /* a class of another file of the run (`model: Transformer` with the
     * class in model.py): an instance of it, as calling it would make */
    ol_val linked;
    if (m->links && m->links->call && m->links->call(m->links, m, v.ref, 0, -1, NULL, &linked) &&
        (linked.kind == OL_V_MODULE || linked.kind == OL_V_OBJECT))
        return linked;
    return UNKNOWN;
}

ol_nid ol_callsite_arg(ol_model *m, const ol_function *f, const ol_call *c, const ol_def *d, bool *splat)
{
    const ol_tree *t = m->tree;
    *splat = false;
    ol_nid args = ol_field(t, c->node, OL_F_arguments);
    if (args == OL_NONE)
        return OL_NONE;
    uint32_t index = d->index;
    /* self.method(a) passes a as the second parameter */
    if (f->is_method && c->receiver != OL_NONE) {
        if (index == 0)
            return OL_NONE;
        index--;
    }
    const char *name = ol_sym_str(m, d->name);
    uint32_t pos = 0;
    for (ol_nid a = ol_first_named(t, args); a != OL_NONE; a = ol_next_named(t, a)) {
        ol_kind k = ol_kind_of(t, a);
        if (k == OL_N_keyword_argument) {
            if (ol_text_is(t, ol_field(t, a, OL_F_name), name))
                return ol_field(t, a, OL_F_value);
            continue;
        }
        if (k == OL_N_list_splat || k == OL_N_dictionary_splat) {
            *splat = true;
            continue;
        }
        if (pos == index && !*splat)
            return a;
        pos++;
    }
    return OL_NONE;
}

/* The `output` of a metric's update(output), called by the engine with each
 * batch's output: `(y_pred, y)`, the model's predictions (graph and all, in a
 * training run) and the batch's targets; also the parameter of the override
 * of a method that update() calls with it. */
static bool metric_output_param(ol_model *m, uint32_t di)
{
    const ol_def *d = &m->defs.items[di];
    if (d->kind != OL_DEF_PARAM || d->index != 1 || d->starred)
        return false;
    uint32_t fi = m->scopes.items[d->scope].function;
    return fi != OL_NO_INDEX && m->functions.items[fi].callsites.len == 0 && ol_function_per_batch_metric(m, fi);
}

static ol_val param_value(ol_model *m, uint32_t di)
{
    const ol_def *d = &m->defs.items[di];
    uint32_t fi = m->scopes.items[d->scope].function;
    if (fi == OL_NO_INDEX)
        return UNKNOWN;
    const ol_function *f = &m->functions.items[fi];
    if (d->starred)
        return d->index == OL_NO_INDEX ? mk(OL_V_OBJECT, 0) : UNKNOWN;
    if (d->index == 0 && f->is_method && f->cls != OL_NO_INDEX) {
        if (f->is_classmethod)
            return mk_ref(OL_V_CLASS, 0, f->cls);
        return instance_of_class(m, f->cls);
    }
    ol_val r = BOTTOM;
    size_t nsites = f->callsites.len;
    if (metric_output_param(m, di))
        return mk(OL_V_TUPLE, OL_VF_ELEM_GRAPH);
    for (size_t i = 0; i < nsites && i < 32; i++) {
        f = &m->functions.items[fi];
        d = &m->defs.items[di];
        const ol_call *c = &m->calls.items[f->callsites.items[i]];
        bool splat;
        ol_nid arg = ol_callsite_arg(m, f, c, d, &splat);
        if (arg != OL_NONE)
            r = join(r, ol_eval(m, arg));
        else if (splat)
            r = join(r, UNKNOWN);
        else if (d->value != OL_NONE)
            r = join(r, ol_eval(m, d->value));
    }
    d = &m->defs.items[di];
    if (r.kind == OL_V_BOTTOM || r.kind == OL_V_UNKNOWN) {
        ol_val a = annotation_value(m, d->annotation);
        if (a.kind != OL_V_UNKNOWN)
            return a;
        if (r.kind == OL_V_BOTTOM && d->value != OL_NONE) {
            ol_val dv = ol_eval(m, d->value);
            if (dv.kind != OL_V_NONE && dv.kind != OL_V_UNKNOWN)
                return dv;
        }
        return guess_from_name(m, d->name);
    }
    return r;
}

/* ---- defs ---------------------------------------------------------------------- */

static ol_val arith(ol_val a, ol_val b);
static bool loss_of_detached(ol_model *m, ol_nid call);
static bool graph_only_from_args(ol_model *m, uint32_t fi);
static bool args_known_graph_free(ol_model *m, ol_nid call);

/* ---- module evidence ------------------------------------------------------------ */

static const char *const MODULE_ONLY_METHODS[] = {"eval", "train", "parameters", "named_parameters", "modules",
                                                  "named_modules", "children", "named_children", "apply",
                                                  "register_forward_hook", "register_buffer", "add_module",
                                                  "get_submodule", "requires_grad_", NULL};

static int cmp_attr_use(const void *a, const void *b)
{
    const ol_attr_use *x = a, *y = b;
    if (x->cls != y->cls)
        return x->cls < y->cls ? -1 : 1;
    return x->name < y->name ? -1 : x->name > y->name;
}

/* Turns the evidence around, once: instead of scanning every use for every
 * def asked about (defs x uses on a big file), each use marks the defs it
 * can see (names) or its (class, attribute) pair (self.x in a method). */
static void index_evidence(ol_model *m)
{
    const ol_tree *t = m->tree;
    m->def_module_use = ol_xcalloc(m->defs.len + 1, 1);
    m->def_module_use_len = m->defs.len;
    for (size_t i = 0; i < m->evidence.len; i++) {
        const ol_evidence *e = &m->evidence.items[i];
        uint8_t bit = e->called ? 2 : 1;
        ol_kind uk = ol_kind_of(t, e->use);
        if (uk == OL_N_identifier) {
            uint32_t defs[16];
            size_t n = ol_reaching_defs(m, m->node_scope[e->use], e->name, e->use, defs, 16);
            for (size_t k = 0; k < n; k++)
                if (defs[k] < m->def_module_use_len)
                    m->def_module_use[defs[k]] |= bit;
        } else if (uk == OL_N_attribute) {
            /* self.x used in a method of the same class */
            ol_nid obj = ol_field(t, e->use, OL_F_object);
            uint32_t fn = ol_function_of(m, e->use);
            if (fn == OL_NO_INDEX || ol_kind_of(t, obj) != OL_N_identifier)
                continue;
            const ol_function *f = &m->functions.items[fn];
            while (!f->is_method && m->scopes.items[f->outer_scope].function != OL_NO_INDEX)
                f = &m->functions.items[m->scopes.items[f->outer_scope].function];
            if (f->is_method && f->params.len > 0 && m->defs.items[f->params.items[0]].name == ol_node_sym(m, obj)) {
                ol_attr_use u = {f->cls, e->name, bit};
                ol_vec_push(&m->attr_module_uses, u);
            }
        }
    }
    ol_sort(m->attr_module_uses.items, m->attr_module_uses.len, sizeof(ol_attr_use), cmp_attr_use);
}

static void build_evidence(ol_model *m)
{
    const ol_tree *t = m->tree;
    m->evidence_built = true;
    for (size_t i = 0; i < m->calls.len; i++) {
        const ol_call *c = &m->calls.items[i];
        ol_nid callee = ol_unparen(t, c->callee);
        ol_evidence e = {0};
        if (c->receiver != OL_NONE && c->name) {
            if (!qin(ol_sym_str(m, c->name), MODULE_ONLY_METHODS))
                continue;
            /* eval()/train() take no argument but a mode flag (pandas' df.eval takes text) */
            ol_nid arg = ol_call_arg(m, c->node, 0, NULL);
            if (arg != OL_NONE && (c->name == m->names.eval ||
                                   (c->name == m->names.train && ol_kind_of(t, arg) != OL_N_true &&
                                    ol_kind_of(t, arg) != OL_N_false)))
                continue;
            e.use = ol_unparen(t, c->receiver);
        } else {
            e.use = callee;
            e.called = true;
        }
        ol_nid name = e.use;
        if (ol_kind_of(t, name) == OL_N_attribute)
            name = ol_field(t, name, OL_F_attribute);
        if (name == OL_NONE || ol_kind_of(t, name) != OL_N_identifier)
            continue;
        e.name = ol_node_sym(m, name);
        ol_vec_push(&m->evidence, e);
    }
    index_evidence(m);
}

/* Is the binding made by def d used as an nn.Module somewhere: a module-only
 * method called on it, or (when `called_counts`) the value called? */
static bool used_as_module(ol_model *m, uint32_t di, bool called_counts)
{
    const ol_tree *t = m->tree;
    if (!m->evidence_built)
        build_evidence(m);
    const ol_def *d = &m->defs.items[di];
    uint8_t mask = called_counts ? 3 : 1;
    if (ol_kind_of(t, d->target) == OL_N_attribute) {
        ol_attr_use key = {m->scopes.items[d->scope].cls, d->name, 0};
        size_t lo = 0, hi = m->attr_module_uses.len;
        while (lo < hi) {
            size_t mid = lo + (hi - lo) / 2;
            if (cmp_attr_use(&m->attr_module_uses.items[mid], &key) < 0)
                lo = mid + 1;
            else
                hi = mid;
        }
        for (size_t i = lo; i < m->attr_module_uses.len && cmp_attr_use(&m->attr_module_uses.items[i], &key) == 0;
             i++)
            if (m->attr_module_uses.items[i].bits & mask)
                return true;
        return false;
    }
    return di < m->def_module_use_len && (m->def_module_use[di] & mask) != 0;
}

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
        return param_value(m, di);
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
        return eval_path(m, d->value, true, d->path, d->path_len);
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
        ol_val v = eval_path(m, d->value, false, d->path, d->path_len);
        if (v.kind == OL_V_UNKNOWN && d->annotation != OL_NONE) {
            ol_val a = annotation_value(m, d->annotation);
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

ol_val ol_def_value(ol_model *m, uint32_t di)
{
    if (di >= m->defs.len)
        return UNKNOWN;
    if (m->def_state[di] == 2)
        return m->def_val[di];
    if (m->def_state[di] == 1 || m->eval_depth > EVAL_MAX_DEPTH)
        return BOTTOM;
    m->def_state[di] = 1;
    m->eval_depth++;
    ol_val v = def_value_uncached(m, di);
    m->eval_depth--;
    const ol_def *d = &m->defs.items[di];
    if ((v.kind == OL_V_UNKNOWN || (v.kind == OL_V_OBJECT && object_may_be_torch(m, v))) &&
        (d->kind == OL_DEF_ASSIGN || d->kind == OL_DEF_WITH) && d->path_len == 0) {
        ol_val g = guess_from_name(m, d->name);
        /* a name alone only fills in what a call or attribute left open */
        ol_kind vk = ol_kind_of(m->tree, ol_unparen(m->tree, d->value));
        if (g.kind != OL_V_UNKNOWN && (vk == OL_N_call || vk == OL_N_attribute || vk == OL_N_subscript))
            v = g;
    }
    /* an instance of an imported class, a loaded object, a parameter, a loop
     * variable over a list of models: used like a module (x.eval(),
     * x.parameters()) it is one; a torch.load result that is called is a
     * pickled module */
    if ((v.kind == OL_V_UNKNOWN || v.kind == OL_V_OBJECT) &&
        (d->kind == OL_DEF_ASSIGN || d->kind == OL_DEF_PARAM || d->kind == OL_DEF_WITH ||
         d->kind == OL_DEF_FOR)) {
        bool loaded = v.kind == OL_V_OBJECT && v.ref && strcmp(ol_sym_str(m, v.ref), "torch.load") == 0;
        if (used_as_module(m, di, loaded))
            v = mk(OL_V_MODULE, 0);
    }
    if (m->def_reaches_backward[di] &&
        (v.kind == OL_V_UNKNOWN || v.kind == OL_V_TENSOR || v.kind == OL_V_OBJECT || v.kind == OL_V_BOTTOM)) {
        v.kind = OL_V_TENSOR;
        v.flags |= OL_VF_GRAPH;
    }
    m->def_val[di] = v;
    m->def_state[di] = 2;
    return v;
}

/* ---- expressions ------------------------------------------------------------------ */

static ol_val arith(ol_val a, ol_val b)
{
    uint8_t keep = OL_VF_GRAPH | OL_VF_LOSS | OL_VF_BATCH;
    if (a.kind == OL_V_BOTTOM)
        return b.kind == OL_V_TENSOR ? mk(OL_V_TENSOR, b.flags & keep) : b;
    if (b.kind == OL_V_BOTTOM)
        return a.kind == OL_V_TENSOR ? mk(OL_V_TENSOR, a.flags & keep) : a;
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

static bool is_builtin_name(const char *s)
{
    static const char *const builtins[] = {
        "abs", "all", "any", "bool", "callable", "chr", "dict", "divmod", "enumerate", "filter", "float",
        "format", "frozenset", "getattr", "hasattr", "hash", "id", "input", "int", "isinstance", "issubclass",
        "iter", "len", "list", "map", "max", "min", "next", "object", "open", "ord", "pow", "print", "range",
        "repr", "reversed", "round", "set", "setattr", "delattr", "sorted", "str", "sum", "super", "tuple",
        "type", "vars", "zip", NULL};
    for (const char *const *b = builtins; *b; b++)
        if (strcmp(s, *b) == 0)
            return true;
    return false;
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
            bound = scope_binds(m, s, name);
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
        if (!bound && is_builtin_name(ol_sym_str(m, name))) {
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
            return class_attr(m, o.ref, a, 0);
        if (a == m->names.module)
            return mk(OL_V_MODULE, 0);
        /* a submodule of a model whose class is not known, named as one
         * (`self.model.encoder`, `model.decoder`) */
        if (guess_from_name(m, a).kind == OL_V_MODULE)
            return mk(OL_V_MODULE, 0);
        return UNKNOWN;
    case OL_V_INSTANCE:
        if ((o.flags & OL_VF_LOCAL) && o.ref < m->classes.len)
            return class_attr(m, o.ref, a, 0);
        return UNKNOWN;
    case OL_V_CLASS:
        return class_attr(m, o.ref, a, 0);
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
        uint8_t af = args_flags(m, call, NULL);
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
        !((recv.flags & OL_VF_LOCAL) && recv.ref < m->classes.len && find_method(m, recv.ref, method, 0) != OL_NO_INDEX))
        return mk(OL_V_TENSOR, OL_VF_GRAPH);
    ol_val linked;
    ol_sym base;
    if ((recv.flags & OL_VF_LOCAL) && recv.ref < m->classes.len) {
        uint32_t fi = find_method(m, recv.ref, method, 0);
        if (fi != OL_NO_INDEX)
            return function_result(m, fi);
        /* defined by a base class in another file of the project */
        if (inherited(m, recv.ref, method, &base, &linked, 0))
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
            return eval_path(m, c->receiver, true, NULL, 0);
        switch (rv.kind) {
        case OL_V_EXTERN: {
            const char *q = ol_sym_str(m, qual_join(m, rv.ref, method));
            return call_extern(m, q, n);
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
                uint32_t fi = find_method(m, rv.ref, method, 0);
                if (fi != OL_NO_INDEX)
                    return function_result(m, fi);
                ol_sym base;
                ol_val linked;
                if (inherited(m, rv.ref, method, &base, &linked, 0))
                    return linked;
            }
            break; /* an attribute holding a callable: self.criterion(...) */
        case OL_V_CLASS: {
            uint32_t fi = find_method(m, rv.ref, method, 0);
            if (fi != OL_NO_INDEX)
                return function_result(m, fi);
            break;
        }
        case OL_V_OBJECT:
            if (rv.ref)
                return call_object_method(m, ol_sym_str(m, rv.ref), method, n);
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
                return elem_of_val(rv);
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
                    ol_val g = guess_from_name(m, ol_node_sym(m, name_node));
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
        return call_extern(m, ol_sym_str(m, cv.ref), n);
    case OL_V_CLASS:
        if (cv.ref < m->classes.len)
            return instance_of_class(m, cv.ref);
        return UNKNOWN;
    case OL_V_FUNCTION: {
        ol_val r = function_result(m, cv.ref);
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

static ol_val collection(ol_model *m, ol_nid n, ol_vkind kind)
{
    const ol_tree *t = m->tree;
    uint8_t flags = 0;
    for (ol_nid c = ol_first_named(t, n); c != OL_NONE; c = ol_next_named(t, c)) {
        ol_nid e = c;
        if (ol_kind_of(t, c) == OL_N_pair)
            e = ol_field(t, c, OL_F_value);
        else if (ol_kind_of(t, c) == OL_N_list_splat || ol_kind_of(t, c) == OL_N_dictionary_splat)
            e = ol_first_named(t, c);
        ol_val v = ol_eval(m, e);
        if ((v.flags & (OL_VF_GRAPH | OL_VF_ELEM_GRAPH)))
            flags |= OL_VF_ELEM_GRAPH;
    }
    return mk(kind, flags);
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
                if (subscript_element(m, n, &e))
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
            else if (subscript_element(m, n, &r))
                break;
            else if (v.flags & OL_VF_ELEM_GRAPH)
                r = mk(OL_V_TENSOR, OL_VF_GRAPH);
            else if (v.info == OL_V_DATASET)
                r = mk(OL_V_DATASET, 0);
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
    uint8_t state = m->node_state[n];
    if (state == 2)
        return m->node_val[n];
    if (state == 1)
        return BOTTOM;
    if (m->eval_depth > EVAL_MAX_DEPTH)
        return UNKNOWN;
    m->node_state[n] = 1;
    m->eval_depth++;
    ol_val v = eval_node(m, n);
    m->eval_depth--;
    m->node_val[n] = v;
    m->node_state[n] = 2;
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
        if (callee_is_builtin(m, iter, m->names.enumerate) || is_passthrough_iter(m, iter))
            return iter_draws_batches(m, ol_call_arg(m, iter, 0, "iterable"), depth + 1);
        if (callee_is_builtin(m, iter, m->names.zip)) {
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
