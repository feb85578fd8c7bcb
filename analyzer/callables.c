/*
 * callables.c - what calling something the file imports returns: the table
 * of known callables of PyTorch and the libraries around it (optimizers,
 * loaders, loss functions, tensor factories, autocast and grad-mode
 * objects), and the methods of the objects they make. Part of the evaluator
 * (eval.c asks it for every call of an imported name).
 */
#include "model.h"

#include "dataflow.h"
#include "eval_internal.h"
#include "steps.h"

#include <ctype.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/* Union of the flags of every argument (ELEM_GRAPH of a list counts as
 * GRAPH: torch.cat(outputs) carries what outputs hold). */
uint8_t ol_eval__args_flags(ol_model *m, ol_nid call, bool *any_tensor)
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

ol_gradmode ol_eval__gradmode_of(const char *q)
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

ol_val ol_eval__eval_path(ol_model *m, ol_nid expr, bool elem, const int8_t *path, int path_len);
bool ol_eval__elem_of_expr(ol_model *m, ol_nid e, int index, const char *key, int depth, ol_val *out);
bool ol_eval__metric_output_param(ol_model *m, uint32_t di);
bool ol_eval__inherited(ol_model *m, uint32_t ci, ol_sym method, ol_sym *base_qual, ol_val *out, int depth);

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
/* What a known callable returns, as a row of the tables below: a value of
 * its own, or one read from an argument. */
typedef enum callable_result {
    CR_VALUE,        /* kind and flags of the row */
    CR_ARG,          /* the value of the first argument (or the keyword's) */
    CR_ARG_ELEMENT,  /* an element of it: `next(it)`, MONAI's `first(loader)` */
    CR_ARITHMETIC,   /* `max(a, b)`, `sum(xs)`: a tensor when an argument is one, else a number */
    CR_SEQUENCE,     /* `list(xs)`, `tuple(xs)`: keeps the elements' graph (kind of the row) */
    CR_NAMED_OBJECT, /* an object known by the dotted name `ref` of the row */
} callable_result;

typedef struct known_callable {
    const char *name;    /* a builtin's name, or a dotted name */
    uint8_t result;      /* callable_result */
    uint8_t kind;        /* ol_vkind, for CR_VALUE and CR_SEQUENCE */
    uint8_t flags;       /* OL_VF_*, for CR_VALUE */
    const char *keyword; /* CR_ARG, CR_ARG_ELEMENT: the argument's keyword, if any */
    const char *ref;     /* CR_NAMED_OBJECT */
} known_callable;

#define VALUE(n, k, f) {n, CR_VALUE, k, f, NULL, NULL}
#define ARG(n, kw) {n, CR_ARG, 0, 0, kw, NULL}

/* Python's builtins, by name (`builtins.len`); any other is unknown. */
static const known_callable BUILTINS[] = {
    VALUE("float", OL_V_NUMBER, 0), VALUE("int", OL_V_NUMBER, 0), VALUE("bool", OL_V_NUMBER, 0),
    VALUE("len", OL_V_NUMBER, 0), VALUE("hash", OL_V_NUMBER, 0), VALUE("id", OL_V_NUMBER, 0),
    VALUE("ord", OL_V_NUMBER, 0), VALUE("isinstance", OL_V_NUMBER, 0), VALUE("issubclass", OL_V_NUMBER, 0),
    VALUE("callable", OL_V_NUMBER, 0), VALUE("hasattr", OL_V_NUMBER, 0), VALUE("any", OL_V_NUMBER, 0),
    VALUE("all", OL_V_NUMBER, 0), VALUE("divmod", OL_V_NUMBER, 0),
    VALUE("str", OL_V_STRING, 0), VALUE("repr", OL_V_STRING, 0), VALUE("format", OL_V_STRING, 0),
    VALUE("chr", OL_V_STRING, 0),
    {"abs", CR_ARITHMETIC, 0, 0, NULL, NULL}, {"round", CR_ARITHMETIC, 0, 0, NULL, NULL},
    {"max", CR_ARITHMETIC, 0, 0, NULL, NULL}, {"min", CR_ARITHMETIC, 0, 0, NULL, NULL},
    {"sum", CR_ARITHMETIC, 0, 0, NULL, NULL}, {"pow", CR_ARITHMETIC, 0, 0, NULL, NULL},
    {"list", CR_SEQUENCE, OL_V_LIST, 0, NULL, NULL}, {"sorted", CR_SEQUENCE, OL_V_LIST, 0, NULL, NULL},
    {"reversed", CR_SEQUENCE, OL_V_LIST, 0, NULL, NULL}, {"tuple", CR_SEQUENCE, OL_V_TUPLE, 0, NULL, NULL},
    VALUE("dict", OL_V_DICT, 0), VALUE("set", OL_V_SET, 0), VALUE("frozenset", OL_V_SET, 0),
    VALUE("range", OL_V_RANGE, 0), VALUE("enumerate", OL_V_RANGE, 0), VALUE("zip", OL_V_RANGE, 0),
    VALUE("map", OL_V_RANGE, 0), VALUE("filter", OL_V_RANGE, 0),
    ARG("iter", NULL), {"next", CR_ARG_ELEMENT, 0, 0, NULL, NULL},
    VALUE("print", OL_V_NONE, 0), VALUE("setattr", OL_V_NONE, 0), VALUE("delattr", OL_V_NONE, 0),
    VALUE("open", OL_V_OBJECT, 0), VALUE("super", OL_V_OBJECT, 0), VALUE("getattr", OL_V_OBJECT, 0),
    VALUE("type", OL_V_OBJECT, 0), VALUE("vars", OL_V_OBJECT, 0), VALUE("object", OL_V_OBJECT, 0),
    VALUE("input", OL_V_OBJECT, 0),
};

/* Callables of PyTorch and the libraries around it known by their full
 * dotted name. The families known by a prefix (`torch.optim.*`,
 * `torch.nn.functional.*`, `transformers.*`, ...) follow in
 * ol_eval__call_extern, after these: no name here falls in a family that
 * would answer otherwise. */
static const known_callable CALLABLES[] = {
    /* MONAI's `first(loader)`: the first item, like `next(iter(loader))` */
    {"monai.utils.first", CR_ARG_ELEMENT, 0, 0, "iterable", NULL},
    {"monai.utils.misc.first", CR_ARG_ELEMENT, 0, 0, "iterable", NULL},
    VALUE("torch.cuda.amp.GradScaler", OL_V_SCALER, 0), VALUE("torch.amp.GradScaler", OL_V_SCALER, 0),
    VALUE("torch.cuda.amp.grad_scaler.GradScaler", OL_V_SCALER, 0),
    VALUE("torch.amp.grad_scaler.GradScaler", OL_V_SCALER, 0), VALUE("torch.GradScaler", OL_V_SCALER, 0),
    VALUE("torch.cpu.amp.GradScaler", OL_V_SCALER, 0),
    VALUE("torch.device", OL_V_DEVICE, 0),
    VALUE("torch.nn.Parameter", OL_V_TENSOR, OL_VF_GRAPH | OL_VF_PARAM),
    VALUE("torch.nn.parameter.Parameter", OL_V_TENSOR, OL_VF_GRAPH | OL_VF_PARAM),
    /* compiled, scripted or parametrized: still the module it was given */
    ARG("torch.compile", NULL), ARG("torch.jit.script", NULL), ARG("torch.jit.trace", NULL),
    ARG("torch.nn.utils.parametrize.register_parametrization", NULL),
    {"torch.load", CR_NAMED_OBJECT, 0, 0, NULL, "torch.load"},
    {"torch.hub.load", CR_NAMED_OBJECT, 0, 0, NULL, "torch.load"},
    {"torch.jit.load", CR_NAMED_OBJECT, 0, 0, NULL, "torch.load"},
    VALUE("timm.create_model", OL_V_MODULE, 0), VALUE("peft.get_peft_model", OL_V_MODULE, 0),
    VALUE("segmentation_models_pytorch.create_model", OL_V_MODULE, 0),
    /* progress bars wrap what they iterate */
    ARG("tqdm.tqdm", "iterable"), ARG("tqdm.auto.tqdm", "iterable"), ARG("tqdm.notebook.tqdm", "iterable"),
    ARG("tqdm", "iterable"), ARG("tqdm.rich.tqdm", "iterable"), ARG("rich.progress.track", "iterable"),
};

#undef VALUE
#undef ARG

/* Each table's rows by name, for a binary search: the evaluator looks a
 * dotted name up for every call of a library it meets (scanning the rows
 * was 2 million string comparisons on the benchmark corpus). */
static const known_callable *builtins_by_name[OL_ARRAY_LEN(BUILTINS)];
static const known_callable *callables_by_name[OL_ARRAY_LEN(CALLABLES)];
static pthread_once_t rows_once = PTHREAD_ONCE_INIT;

static int cmp_row(const void *a, const void *b)
{
    return strcmp((*(const known_callable *const *)a)->name, (*(const known_callable *const *)b)->name);
}

static void sort_rows(void)
{
    for (size_t i = 0; i < OL_ARRAY_LEN(BUILTINS); i++)
        builtins_by_name[i] = &BUILTINS[i];
    for (size_t i = 0; i < OL_ARRAY_LEN(CALLABLES); i++)
        callables_by_name[i] = &CALLABLES[i];
    ol_sort(builtins_by_name, OL_ARRAY_LEN(BUILTINS), sizeof(builtins_by_name[0]), cmp_row);
    ol_sort(callables_by_name, OL_ARRAY_LEN(CALLABLES), sizeof(callables_by_name[0]), cmp_row);
}

static const known_callable *find_callable(const known_callable *const *rows, size_t n, const char *name)
{
    pthread_once(&rows_once, sort_rows);
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = strcmp(rows[mid]->name, name);
        if (c == 0)
            return rows[mid];
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

bool ol_eval__is_builtin(const char *name)
{
    return find_callable(builtins_by_name, OL_ARRAY_LEN(BUILTINS), name) != NULL;
}

/* The value a row says call returns. */
static ol_val callable_value(ol_model *m, const known_callable *row, ol_nid call)
{
    switch ((callable_result)row->result) {
    case CR_VALUE:
        return mk((ol_vkind)row->kind, row->flags);
    case CR_ARG: {
        ol_nid a = ol_call_arg(m, call, 0, row->keyword);
        return a != OL_NONE ? ol_eval(m, a) : UNKNOWN;
    }
    case CR_ARG_ELEMENT: {
        ol_nid a = ol_call_arg(m, call, 0, row->keyword);
        return a != OL_NONE ? ol_eval__eval_path(m, a, true, NULL, 0) : UNKNOWN;
    }
    case CR_ARITHMETIC: {
        bool any_tensor = false;
        uint8_t f = ol_eval__args_flags(m, call, &any_tensor);
        if (any_tensor || (f & OL_VF_GRAPH))
            return mk(OL_V_TENSOR, f);
        return mk(OL_V_NUMBER, 0);
    }
    case CR_SEQUENCE: {
        ol_nid a = ol_call_arg(m, call, 0, NULL);
        ol_val v = a != OL_NONE ? ol_eval(m, a) : UNKNOWN;
        return mk((ol_vkind)row->kind, v.flags & (OL_VF_ELEM_GRAPH | OL_VF_PARAM));
    }
    case CR_NAMED_OBJECT:
        return mk_ref(OL_V_OBJECT, 0, ol_model_intern(m, row->ref));
    }
    return UNKNOWN;
}

ol_val ol_eval__call_extern(ol_model *m, const char *q, ol_nid call)
{
    const char *name = last_part(q);

    /* functools.reduce(operator.add, losses): a fold of graph-carrying values */
    if (strcmp(q, "functools.reduce") == 0) {
        ol_nid a = ol_call_arg(m, call, 1, NULL);
        ol_val v = a != OL_NONE ? ol_eval(m, a) : UNKNOWN;
        return (v.flags & (OL_VF_ELEM_GRAPH | OL_VF_GRAPH)) ? mk(OL_V_TENSOR, OL_VF_GRAPH) : UNKNOWN;
    }

    /* builtins, by name */
    if (ol_str_has_prefix(q, "builtins.")) {
        const known_callable *b = find_callable(builtins_by_name, OL_ARRAY_LEN(BUILTINS), name);
        return b ? callable_value(m, b, call) : UNKNOWN;
    }

    /* autocast and grad-mode objects, whose arguments say what they do */
    for (const char *const *a = AUTOCAST_QUALS; *a; a++)
        if (qeq(q, *a))
            return autocast_value(m, q, call);
    ol_gradmode gm = ol_eval__gradmode_of(q);
    if (gm != OL_GM_NONE)
        return gradmode_value(m, gm, call);

    const known_callable *row = find_callable(callables_by_name, OL_ARRAY_LEN(CALLABLES), q);
    if (row)
        return callable_value(m, row, call);

    if (ol_str_has_prefix(q, "torch.")) {
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
            uint8_t f = ol_eval__args_flags(m, call, &any_tensor);
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
            uint8_t f = ol_eval__args_flags(m, call, &any_tensor);
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
    if (ol_str_has_prefix(q, "torchvision.models."))
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
ol_val ol_eval__call_object_method(ol_model *m, const char *cls, ol_sym method, ol_nid call)
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
