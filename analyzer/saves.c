/*
 * saves.c - what `torch.save` writes (see saves.h): host data or not, the
 * keys of a saved dict literal; the writers of training frameworks. The
 * files a path names are paths.c's.
 */
#include "saves.h"

#include <stdlib.h>
#include <string.h>

#include "dataflow.h"
#include "eval.h"
#include "hardware.h"
#include "util.h"

bool ol_is_torch_save(const char *q)
{
    return q && (strcmp(q, "torch.save") == 0 || strcmp(q, "torch.serialization.save") == 0);
}

/* Training frameworks' writers of checkpoints, and where their path goes:
 * Lightning Fabric's `fabric.save(path, state)` and the Trainer's
 * `trainer.save_checkpoint(filepath)` write what the processes hold, on
 * their devices; accelerate's `accelerator.save(obj, f)` is torch.save
 * on the main process. Each is named by the method and by the object it
 * is called on: the class the call resolves to, or, where the object's
 * class is not known, the name it goes by (`fabric`, `self.accelerator`).
 * torch_xla's `xm.save` is not one: it moves what it saves to the CPU. */
typedef struct {
    const char *method, *qual_tail, *receiver;
    int path_pos;
    const char *path_kw;
} framework_save;

static const framework_save FRAMEWORK_SAVES[] = {
    {"save", ".Fabric.save", "fabric", 0, "path"},
    {"save", ".Accelerator.save", "accelerator", 1, "f"},
    {"save_checkpoint", ".Trainer.save_checkpoint", "trainer", 0, "filepath"},
};

static const framework_save *framework_save_of(ol_model *m, ol_nid callee)
{
    const ol_tree *t = m->tree;
    callee = ol_unparen(t, callee);
    if (ol_kind_of(t, callee) != OL_N_attribute)
        return NULL;
    ol_nid attr = ol_field(t, callee, OL_F_attribute), recv = ol_unparen(t, ol_field(t, callee, OL_F_object));
    uint32_t alen;
    const char *a = ol_text(t, attr, &alen);
    const char *q = NULL;
    bool asked = false;
    for (size_t i = 0; i < sizeof FRAMEWORK_SAVES / sizeof FRAMEWORK_SAVES[0]; i++) {
        const framework_save *f = &FRAMEWORK_SAVES[i];
        size_t mlen = strlen(f->method);
        if (alen != mlen || memcmp(a, f->method, mlen) != 0)
            continue;
        if (!asked) {
            q = ol_qualname(m, callee);
            asked = true;
        }
        if (q) {
            /* resolved: the class's own method (`lightning.Fabric.save`) */
            if (ol_str_has_suffix(q, f->qual_tail))
                return f;
            continue;
        }
        ol_nid name = recv;
        if (ol_kind_of(t, name) == OL_N_attribute)
            name = ol_field(t, name, OL_F_attribute);
        uint32_t nlen;
        const char *n = ol_kind_of(t, name) == OL_N_identifier ? ol_text(t, name, &nlen) : NULL;
        if (n && nlen == strlen(f->receiver) && memcmp(n, f->receiver, nlen) == 0)
            return f;
    }
    return NULL;
}

bool ol_is_torch_load(const char *q)
{
    return q && (strcmp(q, "torch.load") == 0 || strcmp(q, "torch.serialization.load") == 0);
}

bool ol_save_site_of(ol_model *m, uint32_t ci, ol_save_site *out)
{
    const ol_call *c = &m->calls.items[ci];
    if (ol_is_torch_save(ol_qualname(m, c->callee))) {
        out->obj = ol_call_arg(m, c->node, 0, "obj");
        out->to = ol_call_arg(m, c->node, 1, "f");
        out->framework = false;
        return true;
    }
    const framework_save *f = framework_save_of(m, c->callee);
    if (!f)
        return false;
    out->obj = OL_NONE;
    out->to = ol_call_arg(m, c->node, f->path_pos, f->path_kw);
    out->framework = true;
    return true;
}

/* how far one question follows values (a converter's save: the joined dict,
 * the helper's result, its filled dict, the cast, the parameter, the call's
 * argument, the load onto the host is about ten); the steps bound the work */
#define HOST_MAX_DEPTH 16
/* steps one question may take at most (bindings branch out) */
#define HOST_MAX_STEPS 4000

/* What one host question is working out, innermost last: a binding's
 * value, a function's results, a parameter's arguments, a class's
 * attributes. A loop-carried binding (`step += 1`), a recursive call (a
 * tokenizer of nested records calling itself on each part) or an instance
 * holding another of its class reaches what is being worked out, and adds
 * nothing to what the others hold. Each question has its own stack: one
 * asked while another is being worked out on the same thread (a value of
 * another file of the run has that file linted first) starts empty and
 * gives the outer one's back when done (host_question). */
enum { OPEN_DEF, OPEN_RETURNS, OPEN_PARAM, OPEN_CLASS };
#define OPEN_MAX (3 * (HOST_MAX_DEPTH + 2))
/* instances of classes holding instances of classes, at most */
#define OPEN_CLASSES_MAX 4
typedef struct open_entry {
    const ol_model *m;
    uint32_t id;
    uint8_t what;
} open_entry;
static _Thread_local open_entry open_stack[OPEN_MAX];
static _Thread_local int open_len;

static bool is_open(const ol_model *m, uint8_t what, uint32_t id)
{
    for (int i = 0; i < open_len; i++)
        if (open_stack[i].m == m && open_stack[i].id == id && open_stack[i].what == what)
            return true;
    return false;
}

/* Pushes an entry; false (nothing pushed) when the stack is full. */
static bool open_push(const ol_model *m, uint8_t what, uint32_t id)
{
    int classes = 0;
    for (int i = 0; i < open_len && what == OPEN_CLASS; i++)
        classes += open_stack[i].what == OPEN_CLASS;
    if (open_len >= OPEN_MAX || classes >= OPEN_CLASSES_MAX)
        return false;
    open_entry e = {m, id, what};
    open_stack[open_len++] = e;
    return true;
}

static void open_pop(void)
{
    open_len--;
}

/* Does the file make torch's factories build on a GPU
 * (`torch.set_default_tensor_type("torch.cuda.FloatTensor")`,
 * `torch.set_default_device("cuda")`)? Asked once per question. */
static _Thread_local int default_device = -1;
static _Thread_local const ol_model *default_device_m;

static bool factories_on_device(ol_model *m)
{
    if (default_device >= 0 && default_device_m == m)
        return default_device == 1;
    default_device_m = m;
    default_device = 0;
    for (size_t i = 0; i < m->calls.len && !default_device; i++) {
        const char *q = ol_qualname(m, m->calls.items[i].callee);
        if (!q || (strcmp(q, "torch.set_default_tensor_type") != 0 && strcmp(q, "torch.set_default_device") != 0))
            continue;
        ol_nid a = ol_unparen(m->tree, ol_call_arg(m, m->calls.items[i].node, 0, NULL));
        uint32_t len;
        const char *text = a != OL_NONE ? ol_text(m->tree, a, &len) : NULL;
        ol_kind k = a != OL_NONE ? ol_kind_of(m->tree, a) : OL_N_module;
        /* a type or device spelled here is on a GPU when it names one
         * (`torch.cuda.FloatTensor`, `"cuda" if ok else "cpu"`); one held
         * by a name is not known, and counts */
        bool spelled = k == OL_N_string || k == OL_N_attribute || k == OL_N_conditional_expression;
        default_device = !text || !spelled || ol_find(text, len, "cuda") != NULL ? 1 : 0;
    }
    return default_device == 1;
}
static _Thread_local int host_steps;

/* Calls whose result is on the host: torch factories given no device. */
static const char *const HOST_FACTORIES[] = {
    "torch.Tensor", "torch.FloatTensor", "torch.DoubleTensor", "torch.HalfTensor", "torch.LongTensor",
    "torch.IntTensor", "torch.ShortTensor", "torch.ByteTensor", "torch.CharTensor", "torch.BoolTensor",
    "torch.zeros", "torch.ones", "torch.empty", "torch.full", "torch.arange", "torch.linspace", "torch.eye",
    "torch.rand", "torch.randn", "torch.randint", "torch.randperm", "torch.from_numpy",
    /* and Python builtins that make plain values */
    "builtins.len", "builtins.int", "builtins.float", "builtins.str", "builtins.bool", "builtins.round", NULL};

/* Libraries' objects whose saved state holds no tensor: torch2trt's
 * TRTModule keeps its TensorRT engine serialized as bytes (and the names of
 * its inputs and outputs) in its state dict, wherever the model it was
 * built from ran. */
static const char *const TENSORLESS_STATE[] = {"torch2trt.torch2trt", "torch2trt.TRTModule",
                                               "torch2trt.trt_module.TRTModule", NULL};

static bool host_only(ol_model *m, ol_nid e, int depth);
static bool param_host_only(ol_model *m, const ol_def *d, int depth);
static bool target_host_only(ol_model *m, const ol_def *d, int depth);
static bool self_attr_host_only(ol_model *m, ol_nid e, int depth);

/* Modules of the standard library whose functions return Python values
 * (paths, file names, times, parsed text), never a tensor. */
static const char *const PLAIN_MODULES[] = {"os.", "glob.", "pathlib.", "time.", "datetime.", "json.", "re.",
                                            "math.", "string.", "platform.", "socket.", "getpass.", "uuid.",
                                            "hashlib.", "shutil.", NULL};
/* Builtins whose result holds what their argument holds. */
static const char *const KEEPING_BUILTINS[] = {"builtins.sorted", "builtins.list", "builtins.tuple", "builtins.set",
                                               "builtins.reversed", NULL};

/* Made from Python data on the host, or on the device of a tensor given. */
static const char *const DATA_FACTORIES[] = {"torch.tensor", "torch.as_tensor", "torch.asarray", NULL};
/* Joined where their parts are. */
static const char *const JOINS[] = {"torch.stack", "torch.cat", "torch.concat", "torch.concatenate",
                                    "torch.hstack", "torch.vstack", "torch.dstack", NULL};

/* Python data that no tensor can be part of on a device once copied by
 * `torch.tensor`: a list or tuple display, a comprehension, `list(...)`, a
 * name bound only to those, or host data. */
static bool python_data(ol_model *m, ol_nid e, int depth)
{
    const ol_tree *t = m->tree;
    e = ol_unparen(t, e);
    if (e == OL_NONE || depth > HOST_MAX_DEPTH)
        return false;
    switch (ol_kind_of(t, e)) {
    case OL_N_list:
    case OL_N_tuple:
    case OL_N_list_comprehension:
        return true;
    case OL_N_call: {
        /* `list(...)`, a numpy array, what pickle or json read */
        const char *q = ol_qualname(m, ol_field(t, e, OL_F_function));
        if (q && (strcmp(q, "builtins.list") == 0 || strcmp(q, "builtins.tuple") == 0 ||
                  ol_str_has_prefix(q, "numpy.") || strcmp(q, "pickle.load") == 0 ||
                  strcmp(q, "pickle.loads") == 0 || strcmp(q, "json.load") == 0 || strcmp(q, "json.loads") == 0))
            return true;
        break;
    }
    case OL_N_subscript:
        /* `pkl[b"data"]` of such data */
        return python_data(m, ol_field(t, e, OL_F_value), depth + 1);
    case OL_N_identifier: {
        uint32_t defs[8];
        size_t n = ol_reaching_defs(m, m->node_scope[e], ol_node_sym(m, e), e, defs, 8);
        bool all = n > 0 && n < 8;
        for (size_t i = 0; i < n && all; i++) {
            const ol_def *d = &m->defs.items[defs[i]];
            all = d->kind == OL_DEF_ASSIGN && d->path_len == 0 && !d->starred &&
                  python_data(m, d->value, depth + 1);
        }
        if (all)
            return true;
        break;
    }
    default:
        break;
    }
    return host_only(m, e, depth);
}

static const char *const LIKE_FACTORIES[] = {"torch.zeros_like", "torch.ones_like", "torch.empty_like",
                                             "torch.full_like", "torch.rand_like", "torch.randn_like",
                                             "torch.randint_like", NULL};

/* A tokenizer called or asked to encode (`tokenizer(text, return_tensors=
 * "pt")`, `self.tokenizer.encode(s)`): its tensors are made on the host. */
static bool is_tokenizer(const ol_tree *t, ol_nid callee)
{
    static const char *const words[] = {"tokenizer", "tokeniser", NULL};
    static const char *const methods[] = {"encode", "encode_plus", "batch_encode_plus", "apply_chat_template",
                                          "convert_tokens_to_ids", "tokenize",
                                          "__call__", NULL};
    ol_nid name = callee;
    if (ol_kind_of(t, callee) == OL_N_attribute) {
        ol_nid attr = ol_field(t, callee, OL_F_attribute);
        bool encodes = false;
        for (const char *const *w = methods; *w && !encodes; w++)
            encodes = ol_text_is(t, attr, *w);
        ol_nid obj = ol_unparen(t, ol_field(t, callee, OL_F_object));
        name = encodes ? (ol_kind_of(t, obj) == OL_N_attribute ? ol_field(t, obj, OL_F_attribute) : obj) : attr;
    }
    uint32_t len;
    const char *s = name != OL_NONE && ol_kind_of(t, name) == OL_N_identifier ? ol_text(t, name, &len) : NULL;
    return s && ol_name_looks_like(s, len, words);
}

/* `args.ckpt` with `args = parser.parse_args()`: a command-line value (a
 * string, a number, a flag). */
static bool parsed_argument(ol_model *m, ol_nid e)
{
    const ol_tree *t = m->tree;
    ol_nid obj = ol_unparen(t, ol_field(t, e, OL_F_object));
    if (obj == OL_NONE || ol_kind_of(t, obj) != OL_N_identifier)
        return false;
    uint32_t defs[4];
    size_t n = ol_reaching_defs(m, m->node_scope[obj], ol_node_sym(m, obj), obj, defs, 4);
    if (n == 0 || n == 4)
        return false;
    for (size_t i = 0; i < n; i++) {
        const ol_def *d = &m->defs.items[defs[i]];
        ol_nid v = d->kind == OL_DEF_ASSIGN && d->path_len == 0 ? ol_unparen(t, d->value) : OL_NONE;
        uint32_t ci = v != OL_NONE && ol_kind_of(t, v) == OL_N_call ? ol_call_at(m, v) : OL_NO_INDEX;
        if (ci == OL_NO_INDEX || m->calls.items[ci].receiver == OL_NONE || !m->calls.items[ci].name ||
            strcmp(ol_sym_str(m, m->calls.items[ci].name), "parse_args") != 0)
            return false;
    }
    return true;
}

/* Tensor methods whose result is on the device of their input: dtype casts,
 * copies and views. */
static const char *const HOST_KEEPING[] = {"float", "double", "half", "bfloat16", "long", "int", "short", "bool",
                                           "byte", "char", "contiguous", "clone", "detach", "view", "reshape",
                                           "squeeze", "unsqueeze", "flatten", "t", "permute", "transpose", NULL};

static bool is_torch_dtype(const char *q)
{
    static const char *const dtypes[] = {"torch.float", "torch.float32", "torch.float64", "torch.double",
                                         "torch.float16", "torch.half", "torch.bfloat16", "torch.int",
                                         "torch.int8", "torch.int16", "torch.int32", "torch.int64", "torch.long",
                                         "torch.uint8", "torch.bool", "torch.short", NULL};
    for (const char *const *d = dtypes; *d; d++)
        if (strcmp(q, *d) == 0)
            return true;
    return false;
}

static bool is_call_of(ol_model *m, ol_nid call, const char *const *names)
{
    const char *q = ol_qualname(m, ol_field(m->tree, call, OL_F_function));
    for (const char *const *n = names; q && *n; n++)
        if (strcmp(q, *n) == 0)
            return true;
    return false;
}

/* Is a string node the plain "cpu"? */
static bool is_cpu_string(const ol_tree *t, ol_nid n)
{
    const char *s;
    uint32_t len;
    return n != OL_NONE && ol_string_value(t, n, &s, &len) && ol_mem_eq_cstr(s, len, "cpu");
}

/* A loader whose tensors come back on the host: `torch.load(p,
 * map_location="cpu")`, safetensors' `load_file(p)` (device "cpu" unless
 * told otherwise) and `load(data)`. */
static bool host_loader(ol_model *m, ol_nid call, const char *q)
{
    const ol_tree *t = m->tree;
    if (strcmp(q, "torch.load") == 0)
        return is_cpu_string(t, ol_call_arg(m, call, 1, "map_location"));
    if (strcmp(q, "safetensors.torch.load_file") == 0) {
        ol_nid device = ol_call_arg(m, call, 1, "device");
        return device == OL_NONE || is_cpu_string(t, device);
    }
    return strcmp(q, "safetensors.torch.load") == 0;
}

typedef struct filling {
    ol_model *m;
    int depth;
} filling;

static bool host_use(void *ctx, const ol_use *use);

/* A container handed to a function of this file (`save_manifest(d, names,
 * epoch)`): that function's parameter is filled with host data only, as
 * its own uses show (read, saved, or given host data). */
static bool filled_in_callee(ol_model *m, const ol_use *use, int depth)
{
    const ol_tree *t = m->tree;
    if (depth > HOST_MAX_DEPTH)
        return false;
    ol_nid p = ol_parent(t, use->node);
    if (p == OL_NONE || (ol_kind_of(t, p) != OL_N_argument_list &&
                         !(ol_kind_of(t, p) == OL_N_keyword_argument && ol_field(t, p, OL_F_value) == use->node)))
        return false; /* inside a literal given to it */
    uint32_t fi = ol_callee_function(m, use->call), ci = ol_call_at(m, use->call);
    if (fi == OL_NO_INDEX || ci == OL_NO_INDEX)
        return false;
    const ol_function *fn = &m->functions.items[fi];
    for (size_t i = 0; i < fn->params.len; i++) {
        const ol_def *d = &m->defs.items[fn->params.items[i]];
        bool splat;
        if (d->starred || ol_callsite_arg(m, fn, &m->calls.items[ci], d, &splat) != use->node)
            continue;
        filling f = {m, depth};
        return ol_container_uses(m, fn->params.items[i], host_use, &f);
    }
    return false;
}

static bool host_use(void *ctx, const ol_use *use)
{
    static const char *const readers[] = {"builtins.len", "builtins.print", "builtins.sorted", "builtins.list",
                                          "builtins.tuple", "builtins.set", "builtins.dict", "builtins.enumerate",
                                          "builtins.zip", "builtins.str", "builtins.repr", "builtins.min",
                                          "builtins.max", "builtins.sum", "builtins.any", "builtins.all",
                                          "builtins.isinstance", "builtins.iter", "builtins.reversed",
                                          "torch.save", "torch.serialization.save", "torch.stack", "torch.cat",
                                          "torch.concat", "torch.concatenate", "torch.hstack", "torch.vstack",
                                          "torch.dstack", "torch.tensor", "torch.as_tensor", "torch.asarray",
                                          NULL};
    filling *f = ctx;
    const ol_tree *t = f->m->tree;
    switch (use->kind) {
    case OL_USE_STORE:
        return host_only(f->m, use->value, f->depth + 1);
    case OL_USE_ADD: {
        ol_nid args = ol_field(t, use->call, OL_F_arguments);
        for (ol_nid a = args != OL_NONE ? ol_first_named(t, args) : OL_NONE; a != OL_NONE; a = ol_next_named(t, a))
            if (!host_only(f->m, ol_kind_of(t, a) == OL_N_keyword_argument ? ol_field(t, a, OL_F_value) : a,
                           f->depth + 1))
                return false;
        return true;
    }
    case OL_USE_PASSED:
        if (use->call == OL_NONE || ol_kind_of(t, use->call) != OL_N_call)
            return false;
        return is_call_of(f->m, use->call, readers) || filled_in_callee(f->m, use, f->depth + 1);
    case OL_USE_ALIASED:
        return false; /* another name holds it too */
    default:
        return true;
    }
}

/* A list, dict or set that def binds holds host data only while all that is
 * put into it is (appended, added, stored), and while it goes to no call
 * but builtins that only read it and the save itself: another call may fill
 * it with anything, and so may another name that holds it. Every use in the
 * def's scope counts, before the save or after it (a loop comes back). */
static bool filled_from_host(ol_model *m, const ol_def *d, int depth)
{
    filling f = {m, depth};
    return ol_container_uses(m, (uint32_t)(d - m->defs.items), host_use, &f);
}

/* A binding in a block that ends by leaving the function (`x = load(p)`,
 * then `return x`) reaches nothing after that block, whatever the model's
 * bindings say. */
static bool leaves_before(ol_model *m, const ol_def *d, ol_nid use)
{
    const ol_tree *t = m->tree;
    ol_nid block = ol_parent(t, d->stmt);
    if (block == OL_NONE || ol_kind_of(t, block) != OL_N_block ||
        (use >= block && use < m->subtree_end[block]))
        return false;
    ol_nid last = OL_NONE;
    for (ol_nid c = ol_first_named(t, block); c != OL_NONE; c = ol_next_named(t, c))
        last = c;
    return last != OL_NONE &&
           (ol_kind_of(t, last) == OL_N_return_statement || ol_kind_of(t, last) == OL_N_raise_statement);
}

/* Is n `name.is_cuda` (or `name.device.type == "cuda"`), name the
 * identifier spelled like `var`? */
static bool tests_cuda(ol_model *m, ol_nid n, ol_sym var)
{
    const ol_tree *t = m->tree;
    n = ol_unparen(t, n);
    ol_nid obj = OL_NONE;
    if (ol_kind_of(t, n) == OL_N_attribute && ol_text_is(t, ol_field(t, n, OL_F_attribute), "is_cuda")) {
        obj = ol_unparen(t, ol_field(t, n, OL_F_object));
    } else if (ol_kind_of(t, n) == OL_N_comparison_operator) {
        ol_nid left = ol_unparen(t, ol_first_named(t, n)), right = ol_next_named(t, ol_first_named(t, n));
        const char *s;
        uint32_t len;
        if (left == OL_NONE || right == OL_NONE || ol_next_named(t, right) != OL_NONE ||
            !ol_string_value(t, right, &s, &len) || !ol_mem_eq_cstr(s, len, "cuda") ||
            ol_kind_of(t, left) != OL_N_attribute || !ol_text_is(t, ol_field(t, left, OL_F_attribute), "type"))
            return false;
        ol_nid dev = ol_unparen(t, ol_field(t, left, OL_F_object));
        if (ol_kind_of(t, dev) != OL_N_attribute || !ol_text_is(t, ol_field(t, dev, OL_F_attribute), "device"))
            return false;
        obj = ol_unparen(t, ol_field(t, dev, OL_F_object));
    }
    return obj != OL_NONE && ol_kind_of(t, obj) == OL_N_identifier && ol_node_sym(m, obj) == var;
}

/* Is the value d binds to a name moved to the host before use reads it,
 * whenever it is on the GPU: an `if x.is_cuda: x = x.cpu()` (no else)
 * between them, in the block of use's statement (`for k, v in
 * sd.items(): if v.is_cuda: v = v.cpu(); out[k] = v`)? Then d's value
 * reaches use only when it is not on the GPU; the `.cpu()` binding is a
 * reaching binding of its own. */
static bool moved_to_host_if_cuda(ol_model *m, const ol_def *d, ol_nid use)
{
    const ol_tree *t = m->tree;
    ol_nid stmt = ol_statement_of(t, use);
    ol_nid block = stmt != OL_NONE ? ol_parent(t, stmt) : OL_NONE;
    if (block == OL_NONE)
        return false;
    for (ol_nid s = ol_first_named(t, block); s != OL_NONE && s != stmt; s = ol_next_named(t, s)) {
        if (ol_kind_of(t, s) != OL_N_if_statement || t->nodes.items[s].start < d->pos ||
            ol_field(t, s, OL_F_alternative) != OL_NONE || !tests_cuda(m, ol_field(t, s, OL_F_condition), d->name))
            continue;
        ol_nid body = ol_field(t, s, OL_F_consequence);
        for (ol_nid b = body != OL_NONE ? ol_first_named(t, body) : OL_NONE; b != OL_NONE; b = ol_next_named(t, b)) {
            ol_nid a = ol_kind_of(t, b) == OL_N_expression_statement ? ol_first_named(t, b) : OL_NONE;
            if (a == OL_NONE || ol_kind_of(t, a) != OL_N_assignment)
                continue;
            ol_nid left = ol_field(t, a, OL_F_left), right = ol_unparen(t, ol_field(t, a, OL_F_right));
            if (ol_kind_of(t, left) != OL_N_identifier || ol_node_sym(m, left) != d->name ||
                ol_kind_of(t, right) != OL_N_call)
                continue;
            ol_nid callee = ol_unparen(t, ol_field(t, right, OL_F_function));
            if (ol_kind_of(t, callee) == OL_N_attribute && ol_text_is(t, ol_field(t, callee, OL_F_attribute), "cpu"))
                return true;
        }
    }
    return false;
}

/* Is e (through subscripts, attributes and names) what a torch.load
 * returned? A call that hands back what a load read (`cls(**spec["kwargs"])`
 * after `spec = torch.load(p)`) passes what that file holds, which says
 * nothing of what is written to it. */
static bool from_load(ol_model *m, ol_nid e, int depth)
{
    const ol_tree *t = m->tree;
    e = ol_unparen(t, e);
    if (e == OL_NONE || depth > 4)
        return false;
    switch (ol_kind_of(t, e)) {
    case OL_N_list_splat:
    case OL_N_dictionary_splat:
        return from_load(m, ol_first_named(t, e), depth + 1);
    case OL_N_subscript:
        return from_load(m, ol_field(t, e, OL_F_value), depth + 1);
    case OL_N_attribute:
        return from_load(m, ol_field(t, e, OL_F_object), depth + 1);
    case OL_N_call: {
        const char *q = ol_qualname(m, ol_field(t, e, OL_F_function));
        return q && (strcmp(q, "torch.load") == 0 || strcmp(q, "torch.serialization.load") == 0);
    }
    case OL_N_identifier: {
        uint32_t defs[4];
        size_t n = ol_reaching_defs(m, m->node_scope[e], ol_node_sym(m, e), e, defs, 4);
        for (size_t i = 0; i < n && n < 4; i++) {
            const ol_def *d = &m->defs.items[defs[i]];
            if (d->kind == OL_DEF_ASSIGN && d->value != OL_NONE && from_load(m, d->value, depth + 1))
                return true;
        }
        return false;
    }
    default:
        return false;
    }
}

/* `*args` (1) or `**kwargs` (2) for a starred parameter, else 0. */
static int star_of(const ol_tree *t, const ol_def *d)
{
    if (!d->starred)
        return 0;
    ol_nid p = ol_parent(t, d->target);
    return p != OL_NONE && ol_kind_of(t, p) == OL_N_dictionary_splat_pattern ? 2 : 1;
}

/* Is the argument a call gives host data, where it is given? A value a
 * load read (from_load) is left out: *skip is set; unless the load put it
 * on the host (`map_location="cpu"`), which says what it is whatever the
 * file holds. */
static bool given_host(ol_model *m, ol_nid arg, int depth, bool *skip)
{
    if (from_load(m, arg, 0)) {
        if (host_only(m, arg, depth))
            return true;
        *skip = true;
        return true;
    }
    const ol_tree *t = m->tree;
    ol_kind k = ol_kind_of(t, arg);
    if (k == OL_N_list_splat || k == OL_N_dictionary_splat)
        arg = ol_first_named(t, arg);
    return host_only(m, arg, depth);
}

/* Does call c give host data for parameter d of function f? `shift`: the
 * call fills no `self` (a class called to build an instance runs
 * `__init__` with the instance first, as a method called on an object
 * does). *given: the call names the parameter or gives it a value. */
static bool site_host_only(ol_model *m, const ol_function *f, ol_nid call, bool shift, const ol_def *d, int depth,
                           bool *given)
{
    const ol_tree *t = m->tree;
    ol_nid args = ol_field(t, call, OL_F_arguments);
    if (args == OL_NONE || ol_kind_of(t, args) != OL_N_argument_list)
        return false;
    int star = star_of(t, d);
    /* the positional parameters before *args, as the call fills them */
    uint32_t named = 0;
    for (size_t i = 0; i < f->params.len; i++)
        named += !m->defs.items[f->params.items[i]].starred;
    uint32_t index = d->index;
    if (shift) {
        named = named > 0 ? named - 1 : 0;
        index = index > 0 ? index - 1 : 0;
    }
    const char *name = ol_sym_str(m, d->name);
    uint32_t pos = 0;
    bool splat = false, skip = false;
    for (ol_nid a = ol_first_named(t, args); a != OL_NONE; a = ol_next_named(t, a)) {
        ol_kind k = ol_kind_of(t, a);
        bool mine;
        ol_nid value = a;
        if (k == OL_N_keyword_argument) {
            value = ol_field(t, a, OL_F_value);
            ol_nid key = ol_field(t, a, OL_F_name);
            if (star == 2) {
                /* **kwargs: the keywords no named parameter takes */
                mine = true;
                for (size_t i = 0; i < f->params.len && mine; i++)
                    mine = m->defs.items[f->params.items[i]].starred ||
                           !ol_text_is(t, key, ol_sym_str(m, m->defs.items[f->params.items[i]].name));
            } else {
                mine = star == 0 && ol_text_is(t, key, name);
            }
        } else if (k == OL_N_dictionary_splat) {
            mine = star == 2;
            if (!mine && star == 0)
                return false; /* `f(**d)`: may be this parameter */
        } else if (k == OL_N_list_splat) {
            mine = star == 1;
            if (!mine && star == 0 && !splat)
                splat = true; /* positions are unknown from here on */
        } else {
            mine = star == 1 ? pos >= named : (star == 0 && pos == index && !splat);
            pos++;
        }
        if (!mine)
            continue;
        *given = true;
        if (!given_host(m, value, depth, &skip))
            return false;
    }
    if (star == 0 && !*given) {
        if (splat)
            return false;
        /* not given: the default */
        *given = true;
        return d->value != OL_NONE && host_only(m, d->value, depth);
    }
    if (skip)
        *given = false; /* what a load read: counts neither way */
    return true;
}

/* call sites of a function a parameter is followed to at most */
#define PARAM_SITES_MAX 16

/* A parameter is host data when every call of its function in this file
 * gives it host data (a class called for the parameters of its
 * `__init__`): `save_manifest(d, names, epoch)` inside `for epoch in
 * range(n)`. A constructor's `*args` and `**kwargs` are the values a model
 * is built from (sizes, names, flags): host data unless a call here gives
 * them something else. `self` and a function nothing here calls are not
 * known. */
static bool param_sites_host_only(ol_model *m, const ol_def *d, int depth);

/* A parameter being worked out (`tokenize(o)` for each `o` of `obj`,
 * inside `tokenize`) holds what the other calls pass: at least one call
 * from outside the function must give it host data (param_sites_host_only).
 * The parameters of the constructor of a class being worked out
 * (class_host_only) are not known: its instances may be built anywhere. */
static bool param_host_only(ol_model *m, const ol_def *d, int depth)
{
    uint32_t di = (uint32_t)(d - m->defs.items);
    if (is_open(m, OPEN_PARAM, di))
        return true;
    uint32_t fi = m->scopes.items[d->scope].function;
    if (fi != OL_NO_INDEX && m->functions.items[fi].cls != OL_NO_INDEX &&
        is_open(m, OPEN_CLASS, m->functions.items[fi].cls)) {
        const char *fname = ol_sym_str(m, m->functions.items[fi].name);
        if (strcmp(fname, "__init__") == 0 || strcmp(fname, "__new__") == 0)
            return false;
    }
    if (!open_push(m, OPEN_PARAM, di))
        return false;
    bool host = param_sites_host_only(m, d, depth);
    open_pop();
    return host;
}

static bool param_sites_host_only(ol_model *m, const ol_def *d, int depth)
{
    const ol_tree *t = m->tree;
    uint32_t fi = m->scopes.items[d->scope].function;
    if (fi == OL_NO_INDEX || depth > HOST_MAX_DEPTH)
        return false;
    const ol_function *f = &m->functions.items[fi];
    if (f->is_lambda || (f->is_method && d->index == 0 && !d->starred))
        return false;
    const char *fname = ol_sym_str(m, f->name);
    bool ctor = f->cls != OL_NO_INDEX && (strcmp(fname, "__init__") == 0 || strcmp(fname, "__new__") == 0);
    size_t sites = 0;
    for (size_t i = 0; i < f->callsites.len && i < PARAM_SITES_MAX; i++) {
        const ol_call *c = &m->calls.items[f->callsites.items[i]];
        bool given = false;
        if (!site_host_only(m, f, c->node, f->is_method && c->receiver != OL_NONE, d, depth + 1, &given))
            return false;
        /* a recursive call passes on what the outside ones gave */
        sites += given && ol_function_of(m, c->node) != fi;
    }
    if (f->callsites.len > PARAM_SITES_MAX)
        return false;
    if (ctor) {
        size_t seen = 0;
        for (size_t i = 0; i < m->calls.len; i++) {
            ol_nid callee = ol_field(t, m->calls.items[i].node, OL_F_function);
            ol_val v = callee != OL_NONE ? ol_eval(m, callee) : (ol_val){0};
            if (v.kind != OL_V_CLASS || v.ref != f->cls)
                continue;
            if (++seen > PARAM_SITES_MAX)
                return false;
            bool given = false;
            if (!site_host_only(m, f, m->calls.items[i].node, true, d, depth + 1, &given))
                return false;
            sites += given;
        }
    }
    return sites > 0 || (ctor && d->starred);
}

/* A loop's target: the numbers of a `range`, the index of an `enumerate`,
 * the elements of host data. */
static bool target_host_only(ol_model *m, const ol_def *d, int depth)
{
    const ol_tree *t = m->tree;
    ol_nid iter = d->value != OL_NONE ? ol_unparen(t, d->value) : OL_NONE;
    if (iter == OL_NONE || d->starred)
        return false;
    if (ol_kind_of(t, iter) == OL_N_call) {
        const char *q = ol_qualname(m, ol_field(t, iter, OL_F_function));
        if (q && strcmp(q, "builtins.range") == 0)
            return true;
        if (q && strcmp(q, "builtins.enumerate") == 0) {
            if (d->path_len >= 1 && d->path[0] == 0)
                return true;
            return d->path_len >= 1 && d->path[0] == 1 && host_only(m, ol_call_arg(m, iter, 0, NULL), depth);
        }
    }
    return host_only(m, iter, depth);
}

/* Is the attribute `name` of class cls changed other than by assigning it
 * (`self.hist.append(loss)`, `self.d[k] = v`, `self.n += x`)? */
/* Every argument of a call is host data (`append(x)`, `update(d)`). */
static bool args_host_only(ol_model *m, ol_nid call, int depth)
{
    const ol_tree *t = m->tree;
    ol_nid args = ol_field(t, call, OL_F_arguments);
    if (args != OL_NONE && ol_kind_of(t, args) == OL_N_generator_expression)
        return host_only(m, args, depth + 1);
    for (ol_nid a = args != OL_NONE ? ol_first_named(t, args) : OL_NONE; a != OL_NONE; a = ol_next_named(t, a)) {
        ol_kind k = ol_kind_of(t, a);
        if (k == OL_N_list_splat || k == OL_N_dictionary_splat ||
            !host_only(m, k == OL_N_keyword_argument ? ol_field(t, a, OL_F_value) : a, depth + 1))
            return false;
    }
    return true;
}

/* Is attribute node n (`obj.name`) changed there with what may not be
 * host data: a store into it, also through subscripts and attributes
 * (`self.log[k] = v`, `self.rows["train"][i] = v`, `self.stats.count =
 * v`), an augmented assignment, a method that adds to it
 * (`self.rows.append(v)`, `self.rows["train"].append(v)`), or, when it
 * holds an instance (`instance`), any method given what may not be host
 * data (`self.meter.update(loss)`)? A plain assignment to it counts when
 * `plain` (outside its class, where it is not one of the class's bindings).
 * A tensor written in place stays where it is (`self.log[-1, i] +=
 * loss.item()`), whatever is written. */
static bool changed_at(ol_model *m, ol_nid n, bool tensor, bool plain, bool instance, int depth)
{
    const ol_tree *t = m->tree;
    static const char *const changers[] = {"append", "extend", "insert", "add", "update", "setdefault",
                                           "__setitem__", "appendleft", "extendleft", NULL};
    ol_nid top = n;
    bool through_attr = false;
    for (;;) {
        ol_nid p = ol_parent(t, top);
        if (p == OL_NONE)
            break;
        ol_kind k = ol_kind_of(t, p);
        if (k == OL_N_subscript && ol_field(t, p, OL_F_value) == top) {
            top = p;
            continue;
        }
        /* `x.part` read on the way to a store, not a method called */
        ol_nid gp = ol_parent(t, p);
        if (k == OL_N_attribute && ol_field(t, p, OL_F_object) == top &&
            !(gp != OL_NONE && ol_kind_of(t, gp) == OL_N_call && ol_field(t, gp, OL_F_function) == p)) {
            top = p;
            through_attr = true;
            continue;
        }
        break;
    }
    ol_nid p = ol_parent(t, top);
    ol_kind pk = p != OL_NONE ? ol_kind_of(t, p) : OL_N_module;
    if ((pk == OL_N_assignment || pk == OL_N_augmented_assignment) && ol_field(t, p, OL_F_left) == top) {
        if (top == n && pk == OL_N_assignment && !plain)
            return false; /* a binding of the class's, read as one */
        return !(tensor && top != n && !through_attr) && !(tensor && pk == OL_N_augmented_assignment) &&
               !host_only(m, ol_field(t, p, OL_F_right), depth + 1);
    }
    if (pk == OL_N_attribute && ol_field(t, p, OL_F_object) == top) {
        ol_nid meth = ol_field(t, p, OL_F_attribute), call = ol_parent(t, p);
        bool is_call = call != OL_NONE && ol_kind_of(t, call) == OL_N_call;
        for (const char *const *c = changers; *c; c++)
            if (ol_text_is(t, meth, *c))
                return !is_call || !args_host_only(m, call, depth);
        if ((instance || through_attr) && is_call && !args_host_only(m, call, depth))
            return true;
    }
    return false;
}

/* Is attribute `name` of the class changed in place, in the class, with
 * what may not be host data (changed_at)? */
static bool attr_changed(ol_model *m, const ol_class *cls, ol_sym name, bool tensor, bool instance, int depth)
{
    const ol_tree *t = m->tree;
    ol_nid body = cls->node;
    for (ol_nid n = body; n < m->subtree_end[body]; n++)
        if (ol_kind_of(t, n) == OL_N_attribute && ol_node_sym(m, ol_field(t, n, OL_F_attribute)) == name &&
            changed_at(m, n, tensor, false, instance, depth))
            return true;
    return false;
}

/* Is the value binding d holds changed where it is bound (its function, or
 * the module) with what may not be host data: an attribute stored or added
 * to (`state.weights = model.state_dict()`, `outputs.losses.append(loss)`)?
 * For an instance of a class (`escapes`), also any method given what may
 * not be host data (`meter.update(loss)`), and the instance handed to a
 * call that is not the save or a builtin that only reads
 * (`fill(state, model)`, `setattr(state, k, v)`) or bound to another name
 * (`s = state`), where the change cannot be seen. */
static bool instance_changed(ol_model *m, const ol_def *d, bool escapes, int depth)
{
    const ol_tree *t = m->tree;
    uint32_t fn = m->scopes.items[d->scope].function;
    ol_nid region = fn != OL_NO_INDEX ? m->functions.items[fn].node : 0;
    for (ol_nid n = region; n < m->subtree_end[region]; n++) {
        if (ol_kind_of(t, n) != OL_N_identifier || ol_node_sym(m, n) != d->name || n == d->target)
            continue;
        ol_nid p = ol_parent(t, n);
        ol_kind pk = p != OL_NONE ? ol_kind_of(t, p) : OL_N_module;
        if (pk == OL_N_attribute && ol_field(t, p, OL_F_object) == n) {
            if (changed_at(m, n, false, true, escapes, depth))
                return true;
            continue;
        }
        /* handed to a call (`fill(state, model)`, `setattr(state, k, v)`) or
         * bound to another name (`s = state`): changed where this cannot see,
         * unless the call is the save itself or a builtin that only reads */
        if (!escapes)
            continue;
        if (pk == OL_N_argument_list || pk == OL_N_keyword_argument) {
            ol_nid call = pk == OL_N_argument_list ? ol_parent(t, p) : ol_parent(t, ol_parent(t, p));
            ol_nid callee = call != OL_NONE ? ol_field(t, call, OL_F_function) : OL_NONE;
            const char *q = callee != OL_NONE ? ol_qualname(m, callee) : NULL;
            static const char *const readers[] = {"torch.save", "builtins.print", "builtins.len",
                                                  "builtins.isinstance", "builtins.str", "builtins.repr",
                                                  "builtins.id", "builtins.type", NULL};
            bool reads = false;
            for (const char *const *r = readers; q && *r && !reads; r++)
                reads = strcmp(q, *r) == 0;
            /* put into a container (`examples.append(example)`): kept, not changed */
            static const char *const keepers[] = {"append", "extend", "insert", "add", "appendleft", NULL};
            for (const char *const *k = keepers; !reads && *k && callee != OL_NONE &&
                                                 ol_kind_of(t, callee) == OL_N_attribute;
                 k++)
                reads = ol_text_is(t, ol_field(t, callee, OL_F_attribute), *k);
            if (!reads)
                return true;
            continue;
        }
        if ((pk == OL_N_assignment && ol_field(t, p, OL_F_right) == n) || pk == OL_N_expression_list ||
            pk == OL_N_list || pk == OL_N_tuple || pk == OL_N_pair || pk == OL_N_dictionary)
            return true;
    }
    return false;
}

static bool host_opened(const ol_model *m, uint32_t def);
static bool def_value_host_only(ol_model *m, const ol_def *d, int depth);

/* The literals of the path the save being asked about writes
 * (ol_save_holds_host_data), for restores_saved. */
typedef struct save_path {
    const ol_model *m;
    const char *s[4];
    uint32_t len[4];
    size_t n;
} save_path;
static _Thread_local save_path saving;

/* Is d's value a torch.load of the file the save being asked about
 * writes (its path spells one of the same literals)? */
static bool restores_saved(ol_model *m, const ol_def *d)
{
    if (saving.m != m || saving.n == 0 || d->kind != OL_DEF_ASSIGN || d->value == OL_NONE)
        return false;
    ol_nid v = ol_unparen(m->tree, d->value);
    if (ol_kind_of(m->tree, v) != OL_N_call)
        return false;
    if (!ol_is_torch_load(ol_qualname(m, ol_field(m->tree, v, OL_F_function))))
        return false;
    const char *s[4];
    uint32_t len[4];
    size_t n = ol_path_literals(m, ol_call_arg(m, v, 0, "f"), s, len, 4);
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < saving.n; j++)
            if (len[i] == saving.len[j] && memcmp(s[i], saving.s[j], len[i]) == 0)
                return true;
    return false;
}

/* A call of torch that makes a tensor (a factory, a join of tensors). */
static bool makes_tensor(ol_model *m, ol_nid e)
{
    e = ol_unparen(m->tree, e);
    if (ol_kind_of(m->tree, e) != OL_N_call)
        return false;
    const char *q = ol_qualname(m, ol_field(m->tree, e, OL_F_function));
    if (!q)
        return false;
    for (const char *const *f = HOST_FACTORIES; *f; f++)
        if (strcmp(q, *f) == 0)
            return ol_str_has_prefix(q, "torch.");
    for (const char *const *f = JOINS; *f; f++)
        if (strcmp(q, *f) == 0)
            return true;
    return false;
}

/* Is v a class of another file of the run whose instances hold host data
 * (the run's summaries say, ol_links.host_instance)? */
static bool extern_host_instance(ol_model *m, ol_val v)
{
    return v.kind == OL_V_EXTERN && v.ref && m->links && m->links->host_instance &&
           m->links->host_instance(m->links, m, v.ref);
}

/* Attribute `name` of class ci: every assignment of it in the class is
 * host data, and nothing changes it otherwise. */
static bool makes_instance(ol_model *m, ol_nid e);

static bool attr_host_only(ol_model *m, uint32_t ci, ol_sym name, int depth)
{
    const ol_class *cls = &m->classes.items[ci];
    size_t assigned = 0;
    bool tensor = true, instance = false;
    const ol_member *attrs;
    size_t count = ol_class_attrs_named(m, ci, name, &attrs);
    for (size_t i = 0; i < count && attrs[i].place < 256; i++) {
        const ol_def *d = &m->defs.items[attrs[i].index];
        /* an assignment being worked out (`self.log = torch.cat((self.log,
         * row))`) holds what the others do; a restore of the file being
         * saved (`self.log = torch.load(path)`) holds what was saved */
        if (host_opened(m, attrs[i].index) || restores_saved(m, d))
            continue;
        if ((d->kind != OL_DEF_ASSIGN && d->kind != OL_DEF_AUGASSIGN) || d->starred || d->value == OL_NONE ||
            !def_value_host_only(m, d, depth))
            return false;
        tensor &= d->kind == OL_DEF_ASSIGN && makes_tensor(m, d->value);
        instance |= d->kind == OL_DEF_ASSIGN && makes_instance(m, d->value);
        assigned++;
    }
    return assigned > 0 && !attr_changed(m, cls, name, tensor, instance, depth);
}

/* Is e a call of a class of this file, or of another file of the run whose
 * instances hold host data? */
static bool makes_instance(ol_model *m, ol_nid e)
{
    e = ol_unparen(m->tree, e);
    if (ol_kind_of(m->tree, e) != OL_N_call)
        return false;
    ol_val v = ol_eval(m, ol_field(m->tree, e, OL_F_function));
    return v.kind == OL_V_CLASS || extern_host_instance(m, v);
}

/* Does the class fill itself in ways its attribute bindings do not show:
 * a decorator (`@dataclass` makes fields of annotations), `setattr`,
 * `__dict__`, `__slots__`, `__setattr__`? */
static bool fills_itself(ol_model *m, const ol_class *c)
{
    const ol_tree *t = m->tree;
    ol_nid p = ol_parent(t, c->node);
    if (p != OL_NONE && ol_kind_of(t, p) == OL_N_decorated_definition)
        return true;
    for (ol_nid n = c->node; n < m->subtree_end[c->node]; n++)
        if (ol_kind_of(t, n) == OL_N_identifier &&
            (ol_text_is(t, n, "setattr") || ol_text_is(t, n, "__dict__") || ol_text_is(t, n, "__slots__") ||
             ol_text_is(t, n, "__setattr__") || ol_text_is(t, n, "vars")))
            return true;
    return false;
}

static bool class_host_only(ol_model *m, uint32_t ci, int depth)
{
    if (ci >= m->classes.len)
        return false;
    const ol_class *c = &m->classes.items[ci];
    for (size_t i = 0; i < c->bases.len; i++)
        if (!ol_text_is(m->tree, c->bases.items[i], "object"))
            return false;
    if (is_open(m, OPEN_CLASS, ci))
        return true;
    if (c->attr_defs.len == 0 || c->attr_defs.len > 64 || fills_itself(m, c) || !open_push(m, OPEN_CLASS, ci))
        return false;
    bool host = true;
    size_t data = 0;
    for (size_t i = 0; i < c->attr_defs.len && host; i++) {
        const ol_def *d = &m->defs.items[c->attr_defs.items[i]];
        if (d->kind == OL_DEF_FUNCTION || d->kind == OL_DEF_CLASS)
            continue; /* the class's methods and nested classes: not its data */
        ol_sym name = d->name;
        bool seen = false;
        for (size_t j = 0; j < i && !seen; j++)
            seen = m->defs.items[c->attr_defs.items[j]].name == name;
        host = seen || attr_host_only(m, ci, name, depth + 1);
        data++;
    }
    open_pop();
    /* a class with no data of its own shows nothing of what it holds */
    return host && data > 0;
}

/* `self.name` in a method: host data when every assignment of it in the
 * class is, and nothing changes it otherwise (`self._init_args = {"args":
 * args, "kwargs": kwargs}` in `__init__`). */
static bool self_attr_host_only(ol_model *m, ol_nid e, int depth)
{
    const ol_tree *t = m->tree;
    ol_nid obj = ol_unparen(t, ol_field(t, e, OL_F_object));
    if (obj == OL_NONE || ol_kind_of(t, obj) != OL_N_identifier)
        return false;
    uint32_t defs[2];
    if (ol_reaching_defs(m, m->node_scope[obj], ol_node_sym(m, obj), obj, defs, 2) != 1)
        return false;
    const ol_def *self = &m->defs.items[defs[0]];
    uint32_t fi = m->scopes.items[self->scope].function;
    if (self->kind != OL_DEF_PARAM || self->index != 0 || fi == OL_NO_INDEX || !m->functions.items[fi].is_method ||
        m->functions.items[fi].cls == OL_NO_INDEX)
        return false;
    return attr_host_only(m, m->functions.items[fi].cls, ol_node_sym(m, ol_field(t, e, OL_F_attribute)), depth);
}

static bool host_opened(const ol_model *m, uint32_t def)
{
    return is_open(m, OPEN_DEF, def);
}

/* The value of binding d (not a parameter or a loop target) is host data:
 * an assignment's value, or an augmented assignment's operand and the
 * value it updates (`total += 1`). */
static bool def_value_host_only(ol_model *m, const ol_def *d, int depth)
{
    if (d->starred || d->value == OL_NONE || !open_push(m, OPEN_DEF, (uint32_t)(d - m->defs.items)))
        return false;
    bool host;
    if (d->kind == OL_DEF_AUGASSIGN) {
        ol_nid v = d->value;
        host = ol_kind_of(m->tree, v) == OL_N_augmented_assignment &&
               host_only(m, ol_field(m->tree, v, OL_F_left), depth + 1) &&
               host_only(m, ol_field(m->tree, v, OL_F_right), depth + 1);
    } else {
        host = d->kind == OL_DEF_ASSIGN && host_only(m, d->value, depth + 1);
    }
    open_pop();
    return host;
}

/* `dict()`, `OrderedDict()`, `list()`, `set()`: an empty container, as
 * `{}` or `[]` is. */
static bool empty_container_call(ol_model *m, ol_nid e)
{
    static const char *const EMPTY[] = {"builtins.dict", "builtins.list", "builtins.set", "collections.OrderedDict",
                                        "collections.Counter",
                                        NULL};
    const ol_tree *t = m->tree;
    e = ol_unparen(t, e);
    if (ol_kind_of(t, e) != OL_N_call)
        return false;
    ol_nid args = ol_field(t, e, OL_F_arguments);
    if (args == OL_NONE || ol_first_named(t, args) != OL_NONE)
        return false;
    const char *q = ol_qualname(m, ol_field(t, e, OL_F_function));
    for (const char *const *k = EMPTY; q && *k; k++)
        if (strcmp(q, *k) == 0)
            return true;
    return false;
}

/* Every binding of the name that reaches `use` is host data. A binding
 * whose value is being worked out (the name's own update in a loop) holds
 * what the others do; at least one other must say so. */
static bool name_host_only(ol_model *m, ol_nid use, int depth)
{
    uint32_t defs[16];
    size_t n = ol_reaching_defs(m, m->node_scope[use], ol_node_sym(m, use), use, defs, 16);
    if (n == 0 || n == 16)
        return false;
    size_t reaching = 0;
    for (size_t i = 0; i < n; i++) {
        const ol_def *d = &m->defs.items[defs[i]];
        if (leaves_before(m, d, use) || host_opened(m, defs[i]) || moved_to_host_if_cuda(m, d, use))
            continue;
        reaching++;
        if (d->kind == OL_DEF_PARAM) {
            if (!param_host_only(m, d, depth + 1))
                return false;
            continue;
        }
        if (d->kind == OL_DEF_FOR) {
            if (!target_host_only(m, d, depth + 1))
                return false;
            continue;
        }
        /* `with open(path) as f`: what the context gives */
        if (d->kind == OL_DEF_WITH) {
            if (d->path_len != 0 || d->starred || d->value == OL_NONE || !host_only(m, d->value, depth + 1))
                return false;
            continue;
        }
        /* `a, b = host_data`: each part is */
        if (!def_value_host_only(m, d, depth))
            return false;
        /* an instance of a class of host data (also one a function of the
         * file returns), changed where it is bound */
        if (d->kind == OL_DEF_ASSIGN && d->path_len == 0) {
            bool made = makes_instance(m, d->value);
            if ((made || ol_callee_function(m, ol_unparen(m->tree, d->value)) != OL_NO_INDEX) &&
                instance_changed(m, d, made, depth))
                return false;
        }
        if (d->kind == OL_DEF_AUGASSIGN)
            continue;
        if (d->path_len != 0)
            continue;
        ol_kind k = ol_kind_of(m->tree, ol_unparen(m->tree, d->value));
        if ((k == OL_N_list || k == OL_N_dictionary || k == OL_N_set || k == OL_N_list_comprehension ||
             k == OL_N_set_comprehension || empty_container_call(m, d->value)) &&
            !filled_from_host(m, d, depth))
            return false;
    }
    return reaching > 0;
}

/* Does a method of that name move its object (`.to(d)`, `.cuda()`,
 * `.type(torch.cuda.FloatTensor)`, `.to_device(d)`)? */
static bool moves(const ol_tree *t, ol_nid attr)
{
    uint32_t len;
    const char *s = ol_text(t, attr, &len);
    if (ol_mem_eq_cstr(s, len, "to") || ol_mem_eq_cstr(s, len, "type") || ol_mem_eq_cstr(s, len, "to_") ||
        ol_mem_eq_cstr(s, len, "set_") || ol_mem_eq_cstr(s, len, "copy_"))
        return true;
    static const char *const words[] = {"cuda", "device", "gpu", "xla", "mps", "accelerator", NULL};
    for (const char *const *w = words; *w; w++) {
        size_t wl = strlen(*w);
        for (uint32_t i = 0; i + wl <= len; i++)
            if (ol_mem_ieq(s + i, *w, wl))
                return true;
    }
    return false;
}

/* Every value function fn returns (it returns something) is host data. */
static bool returns_host_data(ol_model *m, uint32_t fn, int depth)
{
    const ol_function *f = &m->functions.items[fn];
    if (f->returns.len == 0 || f->returns.len > 16)
        return false;
    if (is_open(m, OPEN_RETURNS, fn))
        return true;
    if (!open_push(m, OPEN_RETURNS, fn))
        return false;
    bool host = true;
    for (size_t i = 0; i < f->returns.len && host; i++)
        host = host_only(m, f->returns.items[i], depth);
    open_pop();
    return host;
}

/* `SparseTensor(row=r, col=c, value=v, sparse_sizes=...)`: its tensors
 * (index and value arguments, by keyword or position) are host data. */
static bool sparse_parts_host(ol_model *m, ol_nid call, int depth)
{
    static const char *const parts[] = {"row", "rowptr", "col", "value", NULL};
    bool any = false;
    for (int i = 0; parts[i]; i++) {
        ol_nid a = ol_call_arg(m, call, i, parts[i]);
        if (a == OL_NONE)
            continue;
        if (!host_only(m, a, depth))
            return false;
        any = true;
    }
    return any;
}

/* A name or attribute spelled `dtype` (`x.to(dtype)`, `x.to(self.dtype)`):
 * a cast's argument, as a device's is spelled `device`. */
static bool named_dtype(const ol_tree *t, ol_nid e)
{
    ol_nid name = ol_tail_name(t, e);
    if (name == OL_NONE)
        return false;
    uint32_t len;
    const char *s = ol_text(t, name, &len);
    return len >= 5 && memcmp(s + len - 5, "dtype", 5) == 0 && (len == 5 || s[len - 6] == '_');
}

/* See ol_host_only; depth bounds the walk through bindings. */
/* The model a method call acts on: its receiver, through the calls chained
 * on it (`net.cpu().cuda()`: `net`). */
static ol_nid acted_on(const ol_tree *t, ol_nid recv)
{
    recv = ol_unparen(t, recv);
    for (int i = 0; i < 8 && recv != OL_NONE && ol_kind_of(t, recv) == OL_N_call; i++) {
        ol_nid fn = ol_unparen(t, ol_field(t, recv, OL_F_function));
        recv = fn != OL_NONE && ol_kind_of(t, fn) == OL_N_attribute ? ol_unparen(t, ol_field(t, fn, OL_F_object))
                                                                    : OL_NONE;
    }
    return recv;
}

/* Is `a` the same expression as `b`, or an attribute chain below it? */
static bool below(const ol_tree *t, ol_nid a, ol_nid b)
{
    for (int i = 0; i < 8 && a != OL_NONE; i++) {
        if (ol_same_text(t, a, b))
            return true;
        a = ol_kind_of(t, a) == OL_N_attribute ? ol_unparen(t, ol_field(t, a, OL_F_object)) : OL_NONE;
    }
    return false;
}

/* `net.module.state_dict()` at `at`, where the last move of the model
 * before it in the same function is to the CPU (`net.cpu()`,
 * `net.to("cpu")`), in a block that holds `at` (a move on one branch only,
 * or in a loop `at` is not in, says nothing of the other paths): the state
 * of a model moved off the GPU to be saved. A move is of the model when it
 * is of `net`, of `net.module` or of something below it. Not a model
 * restored in that function before (`net.load_state_dict(...)`): what it
 * saves is a write-back of what a load read (a merge of two checkpoints),
 * which counts neither way. */
static bool state_after_cpu_move(ol_model *m, ol_nid obj, ol_nid at)
{
    const ol_tree *t = m->tree;
    obj = ol_unparen(t, obj);
    if (obj == OL_NONE)
        return false;
    uint32_t fn = ol_function_of(m, at);
    size_t first, end = ol_calls_in(m, fn != OL_NO_INDEX ? m->functions.items[fn].node : 0, &first);
    int last = 0; /* 1: to the CPU, -1: elsewhere, or not on every path */
    uint32_t last_end = 0; /* where it ends: a chained call (`net.cpu().cuda()`) ends after its receiver */
    for (size_t i = first; i < end && m->calls.items[i].node < at; i++) {
        const ol_call *c = &m->calls.items[i];
        if (c->receiver == OL_NONE || ol_function_of(m, c->node) != fn)
            continue;
        ol_nid model = acted_on(t, c->receiver);
        if (model == OL_NONE || !(below(t, obj, model) || below(t, model, obj)))
            continue;
        const char *name = ol_sym_str(m, c->name);
        if (name && strcmp(name, "load_state_dict") == 0)
            return false;
        int move = 0;
        if (c->name == m->names.cuda) {
            move = -1;
        } else if (c->name == m->names.to) {
            ol_nid where = ol_call_arg(m, c->node, 0, "device");
            const char *str;
            uint32_t len;
            move = where != OL_NONE && ol_string_value(t, where, &str, &len) && ol_mem_eq_cstr(str, len, "cpu") ? 1 : -1;
        } else if (c->name == m->names.cpu) {
            move = 1;
        }
        if (!move)
            continue;
        ol_nid stmt = ol_statement_of(t, c->node);
        ol_nid block = stmt != OL_NONE ? ol_parent(t, stmt) : OL_NONE;
        bool every_path = block != OL_NONE && at >= block && at < m->subtree_end[block];
        uint32_t ends = t->nodes.items[c->node].end;
        if (ends >= last_end) {
            last = every_path ? move : -1;
            last_end = ends;
        }
    }
    return last == 1;
}

/* Set while ol_save_holds_host_data asks of a file that stays on the CPU:
 * records of its own plain classes count as host data there. */
static _Thread_local bool host_records;

/* May the value of e come from a call that host_only cannot vouch for
 * (`feats = encoder(images)`, then `Record(f)` for `f` in `zip(feats,
 * labels)`)? What a function is handed (a parameter), what it makes of
 * Python values (numpy's, the builtins'), and the elements of what it
 * iterates over are not such a source; the builtins that iterate
 * (`enumerate`, `zip`, `sorted`) pass on what they are given. */
static bool from_opaque_call(ol_model *m, ol_nid e, int depth)
{
    static const char *const passing[] = {"builtins.enumerate", "builtins.zip", "builtins.sorted", "builtins.list",
                                          "builtins.tuple", "builtins.reversed", "builtins.iter", NULL};
    const ol_tree *t = m->tree;
    e = ol_unparen(t, e);
    if (e == OL_NONE)
        return false;
    ol_kind k = ol_kind_of(t, e);
    if (k != OL_N_identifier && ol_first_named(t, e) == OL_NONE)
        return false; /* a literal */
    if (depth > 8 && k != OL_N_identifier)
        return true;
    switch (k) {
    case OL_N_call: {
        const char *q = ol_qualname(m, ol_field(t, e, OL_F_function));
        for (const char *const *p = passing; q && *p; p++)
            if (strcmp(q, *p) == 0) {
                ol_nid args = ol_field(t, e, OL_F_arguments);
                for (ol_nid a = args != OL_NONE ? ol_first_named(t, args) : OL_NONE; a != OL_NONE; a = ol_next_named(t, a))
                    if (from_opaque_call(m, a, depth + 1))
                        return true;
                return false;
            }
        /* numpy holds nothing on a GPU; the other builtins make Python values */
        if (q && (strncmp(q, "numpy.", 6) == 0 || strncmp(q, "builtins.", 9) == 0))
            return false;
        return !host_only(m, e, depth + 1);
    }
    case OL_N_identifier: {
        uint32_t defs[4];
        size_t n = depth > 8 ? 4 : ol_reaching_defs(m, m->node_scope[e], ol_node_sym(m, e), e, defs, 4);
        if (n == 4)
            return true;
        for (size_t i = 0; i < n; i++) {
            const ol_def *d = &m->defs.items[defs[i]];
            if (d->kind == OL_DEF_PARAM)
                continue;
            if ((d->kind != OL_DEF_ASSIGN && d->kind != OL_DEF_FOR && d->kind != OL_DEF_AUGASSIGN) ||
                d->value == OL_NONE || from_opaque_call(m, d->value, depth + 1))
                return true;
        }
        return false;
    }
    case OL_N_attribute:
        return from_opaque_call(m, ol_field(t, e, OL_F_object), depth + 1);
    case OL_N_subscript:
        return from_opaque_call(m, ol_field(t, e, OL_F_value), depth + 1);
    case OL_N_augmented_assignment:
        return from_opaque_call(m, ol_field(t, e, OL_F_left), depth + 1) ||
               from_opaque_call(m, ol_field(t, e, OL_F_right), depth + 1);
    case OL_N_list_comprehension:
    case OL_N_set_comprehension:
    case OL_N_generator_expression:
        return from_opaque_call(m, ol_field(t, e, OL_F_body), depth + 1);
    default:
        for (ol_nid c = ol_first_named(t, e); c != OL_NONE; c = ol_next_named(t, c))
            if (from_opaque_call(m, c, depth + 1))
                return true;
        return false;
    }
}

/* `InputExample(guid=..., text_a=...)`: a call of a class of this file that
 * has no base but `object` and calls nothing of torch in its body, given
 * nothing a call host_only cannot vouch for returned (from_opaque_call). */
static bool plain_record_call(ol_model *m, ol_nid call)
{
    const ol_tree *t = m->tree;
    ol_nid callee = ol_unparen(t, ol_field(t, call, OL_F_function));
    if (callee == OL_NONE || ol_kind_of(t, callee) != OL_N_identifier)
        return false;
    ol_val v = ol_eval(m, callee);
    if (v.kind != OL_V_CLASS || v.ref == OL_NO_INDEX || v.ref >= m->classes.len)
        return false;
    const ol_class *cls = &m->classes.items[v.ref];
    for (size_t i = 0; i < cls->bases.len; i++)
        if (!ol_text_is(t, cls->bases.items[i], "object"))
            return false;
    size_t first, end = ol_calls_in(m, cls->node, &first);
    for (size_t i = first; i < end; i++) {
        const char *q = ol_qualname(m, m->calls.items[i].callee);
        if (q && (strncmp(q, "torch.", 6) == 0 || strcmp(q, "torch") == 0))
            return false;
    }
    ol_nid args = ol_field(t, call, OL_F_arguments);
    for (ol_nid a = args != OL_NONE ? ol_first_named(t, args) : OL_NONE; a != OL_NONE; a = ol_next_named(t, a)) {
        ol_kind k = ol_kind_of(t, a);
        if (k == OL_N_list_splat || k == OL_N_dictionary_splat ||
            from_opaque_call(m, k == OL_N_keyword_argument ? ol_field(t, a, OL_F_value) : a, 0))
            return false;
    }
    return true;
}

static bool host_only(ol_model *m, ol_nid e, int depth)
{
    const ol_tree *t = m->tree;
    e = ol_unparen(t, e);
    if (e == OL_NONE || depth > HOST_MAX_DEPTH || --host_steps < 0)
        return false;
    switch (ol_kind_of(t, e)) {
    case OL_N_string:
    case OL_N_concatenated_string:
    case OL_N_integer:
    case OL_N_float:
    case OL_N_true:
    case OL_N_false:
    case OL_N_none:
        return true;
    case OL_N_identifier:
        return name_host_only(m, e, depth);
    case OL_N_attribute: {
        /* sizes and types of a tensor are Python values */
        ol_nid attr = ol_field(t, e, OL_F_attribute);
        if (ol_text_is(t, attr, "shape") || ol_text_is(t, attr, "ndim") || ol_text_is(t, attr, "dtype"))
            return true;
        /* an attribute of host data (`enc.input_ids` of a tokenizer's output),
         * or one the class only ever assigns host data */
        return parsed_argument(m, e) || self_attr_host_only(m, e, depth) ||
               host_only(m, ol_field(t, e, OL_F_object), depth + 1);
    }
    case OL_N_subscript:
        return host_only(m, ol_field(t, e, OL_F_value), depth + 1);
    case OL_N_tuple:
    case OL_N_list:
    case OL_N_set:
    case OL_N_expression_list:
        for (ol_nid a = ol_first_named(t, e); a != OL_NONE; a = ol_next_named(t, a))
            if (!host_only(m, a, depth + 1))
                return false;
        return true;
    case OL_N_dictionary:
        for (ol_nid a = ol_first_named(t, e); a != OL_NONE; a = ol_next_named(t, a))
            if (ol_kind_of(t, a) != OL_N_pair || !host_only(m, ol_field(t, a, OL_F_value), depth + 1))
                return false;
        return true;
    case OL_N_list_comprehension:
    case OL_N_set_comprehension:
    case OL_N_generator_expression:
        return host_only(m, ol_field(t, e, OL_F_body), depth + 1);
    case OL_N_dictionary_comprehension: {
        /* `{k: v.cpu() for k, v in sd.items()}` */
        ol_nid pair = ol_field(t, e, OL_F_body);
        return pair != OL_NONE && ol_kind_of(t, pair) == OL_N_pair &&
               host_only(m, ol_field(t, pair, OL_F_value), depth + 1);
    }
    case OL_N_binary_operator:
        return host_only(m, ol_field(t, e, OL_F_left), depth + 1) &&
               host_only(m, ol_field(t, e, OL_F_right), depth + 1);
    case OL_N_conditional_expression:
        /* `net.module.state_dict() if hasattr(net, "module") else net.state_dict()` */
        return host_only(m, ol_named_child(t, e, 0), depth + 1) && host_only(m, ol_named_child(t, e, 2), depth + 1);
    case OL_N_call: {
        if (host_records && plain_record_call(m, e))
            return true;
        ol_nid callee = ol_unparen(t, ol_field(t, e, OL_F_function));
        if (ol_kind_of(t, callee) == OL_N_attribute) {
            ol_nid attr = ol_field(t, callee, OL_F_attribute);
            if (ol_text_is(t, attr, "state_dict") && state_after_cpu_move(m, ol_field(t, callee, OL_F_object), e))
                return true;
            if (ol_text_is(t, attr, "cpu") || ol_text_is(t, attr, "numpy") || ol_text_is(t, attr, "tolist") ||
                ol_text_is(t, attr, "item") || ol_text_is(t, attr, "size") || ol_text_is(t, attr, "numel") ||
                ol_text_is(t, attr, "dim"))
                return true;
            if (ol_text_is(t, attr, "to")) {
                ol_nid where = ol_call_arg(m, e, 0, "device");
                const char *s;
                uint32_t len;
                if (where != OL_NONE && ol_string_value(t, where, &s, &len) && ol_mem_eq_cstr(s, len, "cpu"))
                    return true;
                /* `x.to(torch.float32)`, `x.to(dtype)`: a cast, where x is */
                const char *dq = where != OL_NONE ? ol_qualname(m, where) : NULL;
                return ((dq && is_torch_dtype(dq)) || named_dtype(t, where)) &&
                       ol_call_arg(m, e, 1, "device") == OL_NONE && ol_call_arg(m, e, -1, "device") == OL_NONE &&
                       host_only(m, ol_field(t, callee, OL_F_object), depth + 1);
            }
            /* casts and views stay where their input is */
            for (const char *const *k = HOST_KEEPING; *k; k++)
                if (ol_text_is(t, attr, *k))
                    return host_only(m, ol_field(t, callee, OL_F_object), depth + 1);
        }
        if (is_tokenizer(t, callee) || empty_container_call(m, e))
            return true;
        /* an instance of a class that only ever holds host data (a corpus
         * of token ids), of this file or another of the run */
        ol_val made = ol_eval(m, callee);
        if (made.kind == OL_V_CLASS && made.ref < m->classes.len)
            return class_host_only(m, made.ref, depth + 1);
        if (extern_host_instance(m, made))
            return true;
        const char *q = made.kind == OL_V_EXTERN ? ol_sym_str(m, made.ref) : NULL; /* ol_qualname's answer */
        if (q && host_loader(m, e, q))
            return true;
        if (ol_call_arg(m, e, -1, "device") != OL_NONE)
            return false;
        for (const char *const *p = PLAIN_MODULES; q && *p; p++)
            if (ol_str_has_prefix(q, *p))
                return true;
        /* `dict(pairs)`, `dict((k, v) for ...)`, `dict(a=x)`: what it is given */
        if (q && strcmp(q, "builtins.dict") == 0)
            return args_host_only(m, e, depth);
        /* a file opened for reading or writing: its text or bytes */
        if (q && strcmp(q, "builtins.open") == 0)
            return true;
        for (const char *const *k = KEEPING_BUILTINS; q && *k; k++)
            if (strcmp(q, *k) == 0) {
                ol_nid a = ol_call_arg(m, e, 0, NULL);
                return a == OL_NONE || host_only(m, a, depth + 1);
            }
        /* a function of this source whose every result is host data */
        uint32_t fn = ol_callee_function(m, e);
        if (fn != OL_NO_INDEX)
            return returns_host_data(m, fn, depth + 1);
        /* `x.coo()`, `s.split("/")`: a method of host data that moves
         * nothing keeps it where it is */
        if (ol_kind_of(t, callee) == OL_N_attribute && !moves(t, ol_field(t, callee, OL_F_attribute)) &&
            host_only(m, ol_field(t, callee, OL_F_object), depth + 1))
            return true;
        if (!q)
            return false;
        /* a sparse tensor lives where its index and value tensors do */
        if (strcmp(q, "torch_sparse.SparseTensor") == 0 || strcmp(q, "torch_sparse.tensor.SparseTensor") == 0)
            return sparse_parts_host(m, e, depth + 1);
        for (const char *const *f = HOST_FACTORIES; *f; f++)
            if (strcmp(q, *f) == 0)
                return !ol_str_has_prefix(q, "torch.") || !factories_on_device(m);
        for (const char *const *f = TENSORLESS_STATE; *f; f++)
            if (strcmp(q, *f) == 0)
                return true;
        /* `torch.ones_like(x)`: where x is */
        for (const char *const *f = LIKE_FACTORIES; *f; f++)
            if (strcmp(q, *f) == 0)
                return host_only(m, ol_call_arg(m, e, 0, "input"), depth + 1);
        /* `torch.tensor(data)`: made on the host from Python data, where
         * data is from a tensor */
        for (const char *const *f = DATA_FACTORIES; *f; f++)
            if (strcmp(q, *f) == 0)
                return python_data(m, ol_call_arg(m, e, 0, "data"), depth + 1);
        /* `torch.stack(xs)`, `torch.cat([a, b])`: where the parts are */
        for (const char *const *f = JOINS; *f; f++)
            if (strcmp(q, *f) == 0)
                return host_only(m, ol_call_arg(m, e, 0, "tensors"), depth + 1);
        return false;
    }
    default:
        return false;
    }
}

ol_nid ol_read_key(const ol_tree *t, ol_nid n)
{
    ol_nid p = ol_parent(t, n);
    if (p == OL_NONE || ol_kind_of(t, p) != OL_N_subscript || ol_field(t, p, OL_F_value) != n)
        return OL_NONE;
    ol_nid key = ol_field(t, p, OL_F_subscript), stmt = ol_parent(t, p);
    if (key == OL_NONE || ol_kind_of(t, key) != OL_N_string)
        return OL_NONE;
    if (stmt != OL_NONE && (ol_kind_of(t, stmt) == OL_N_assignment || ol_kind_of(t, stmt) == OL_N_augmented_assignment) &&
        ol_field(t, stmt, OL_F_left) == p)
        return OL_NONE;
    return key;
}

ol_nid ol_saved_dict(ol_model *m, ol_nid obj)
{
    const ol_tree *t = m->tree;
    obj = ol_unparen(t, obj);
    if (obj != OL_NONE && ol_kind_of(t, obj) == OL_N_identifier) {
        uint32_t defs[2];
        ol_sym name = ol_node_sym(m, obj);
        if (ol_reaching_defs(m, m->node_scope[obj], name, obj, defs, 2) != 1 ||
            m->defs.items[defs[0]].kind != OL_DEF_ASSIGN || m->defs.items[defs[0]].path_len != 0)
            return OL_NONE;
        /* nothing else touches the dict on the way (`d["model"] = ...`,
         * `d.update(...)`, a call it is passed to): only reads of a key */
        const ol_def *d = &m->defs.items[defs[0]];
        ol_nid stmt = d->stmt;
        if (obj < m->subtree_end[stmt] || obj - m->subtree_end[stmt] > 20000)
            return OL_NONE; /* far apart: not worth the walk */
        for (ol_nid u = m->subtree_end[stmt]; u < obj; u++) {
            if (ol_kind_of(t, u) != OL_N_identifier || ol_node_at(t, u)->field == OL_F_attribute ||
                ol_node_sym(m, u) != name || m->node_scope[u] != m->node_scope[obj])
                continue;
            if (ol_read_key(t, u) == OL_NONE)
                return OL_NONE;
        }
        obj = ol_unparen(t, d->value);
    }
    if (obj == OL_NONE || ol_kind_of(t, obj) != OL_N_dictionary)
        return OL_NONE;
    for (ol_nid a = ol_first_named(t, obj); a != OL_NONE; a = ol_next_named(t, a))
        if (ol_kind_of(t, a) != OL_N_pair || ol_kind_of(t, ol_field(t, a, OL_F_key)) != OL_N_string)
            return OL_NONE;
    return obj;
}

bool ol_dict_has_key(const ol_tree *t, ol_nid dict, ol_nid key)
{
    const char *k;
    uint32_t klen;
    if (!ol_string_value(t, key, &k, &klen))
        return false;
    for (ol_nid a = ol_first_named(t, dict); a != OL_NONE; a = ol_next_named(t, a)) {
        const char *s;
        uint32_t len;
        if (ol_string_value(t, ol_field(t, a, OL_F_key), &s, &len) && len == klen && memcmp(s, k, len) == 0)
            return true;
    }
    return false;
}

/* One question asked from outside: its own budget of steps and its own
 * mode. A question may be asked while another is being worked out on the
 * same thread (a value of another file of the run has that file linted
 * first, and its rules ask their own): it starts with a stack of what is
 * being worked out of its own, and the outer question's budget, mode and
 * stack come back after. */
typedef struct host_question {
    int steps;
    bool records;
    int open_len;
    open_entry open[OPEN_MAX];
    int default_device;
} host_question;

static void question_begin(host_question *q, bool records)
{
    q->steps = host_steps;
    q->records = host_records;
    q->open_len = open_len;
    memcpy(q->open, open_stack, sizeof(open_entry) * (size_t)open_len);
    q->default_device = default_device;
    host_steps = HOST_MAX_STEPS;
    host_records = records;
    open_len = 0;
    default_device = -1;
}

static void question_end(const host_question *q)
{
    host_steps = q->steps;
    host_records = q->records;
    open_len = q->open_len;
    memcpy(open_stack, q->open, sizeof(open_entry) * (size_t)open_len);
    default_device = q->default_device;
}

static bool save_holds_host_data(ol_model *m, ol_nid call, ol_nid obj, int *cpu_only)
{
    host_question q;
    question_begin(&q, false);
    bool host = host_only(m, obj, 0);
    question_end(&q);
    if (host)
        return true;
    if (*cpu_only < 0)
        *cpu_only = ol_file_stays_on_cpu(m);
    if (!*cpu_only)
        return false;
    /* a file that never puts anything on an accelerator: the records of
     * its own plain classes hold what it makes of what it reads (a cache of
     * text examples and token ids), wherever they are built */
    question_begin(&q, true);
    bool records = host_only(m, obj, 0);
    question_end(&q);
    if (records)
        return true;
    uint32_t fn = ol_function_of(m, call);
    return fn == OL_NO_INDEX || m->functions.items[fn].params.len == 0;
}

bool ol_save_holds_host_data(ol_model *m, ol_nid call, int *cpu_only)
{
    ol_nid obj = ol_call_arg(m, call, 0, "obj");
    if (obj == OL_NONE)
        return false;
    save_path outer = saving; /* a save asked about while another is */
    saving.n = ol_path_literals(m, ol_call_arg(m, call, 1, "f"), saving.s, saving.len, 4);
    saving.m = m;
    bool host = save_holds_host_data(m, call, obj, cpu_only);
    saving = outer;
    return host;
}

bool ol_class_holds_host_data(ol_model *m, uint32_t ci)
{
    host_question q;
    question_begin(&q, false);
    bool host = class_host_only(m, ci, 0);
    question_end(&q);
    return host;
}

bool ol_host_only(ol_model *m, ol_nid e)
{
    host_question q;
    question_begin(&q, false);
    bool host = host_only(m, e, 0);
    question_end(&q);
    return host;
}

bool ol_saved_unkeyed(ol_model *m, ol_nid obj)
{
    const ol_tree *t = m->tree;
    obj = ol_unparen(t, obj);
    if (obj != OL_NONE && ol_kind_of(t, obj) == OL_N_identifier) {
        uint32_t defs[2];
        if (ol_reaching_defs(m, m->node_scope[obj], ol_node_sym(m, obj), obj, defs, 2) != 1 ||
            m->defs.items[defs[0]].kind != OL_DEF_ASSIGN || m->defs.items[defs[0]].path_len != 0 ||
            m->defs.items[defs[0]].starred)
            return false;
        obj = ol_unparen(t, m->defs.items[defs[0]].value);
    }
    if (obj == OL_NONE)
        return false;
    switch (ol_kind_of(t, obj)) {
    case OL_N_list:
    case OL_N_tuple:
    case OL_N_set:
    case OL_N_expression_list:
    case OL_N_list_comprehension:
    case OL_N_set_comprehension:
    case OL_N_string:
    case OL_N_concatenated_string:
    case OL_N_integer:
    case OL_N_float:
        return true;
    default:
        return false;
    }
}

