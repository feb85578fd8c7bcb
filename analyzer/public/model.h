/*
 * model.h - the semantic model of one Python file: what a careful reader
 * knows about it before judging any line.
 *
 * Built once per file (model.c walks the tree once and records facts), then
 * read by every rule:
 *   - scopes (module, class, function, lambda, comprehension) and the
 *     bindings ("defs") of each name in each scope, in textual order;
 *   - imports resolved to full dotted names (`import torch as T`,
 *     `from torch import nn`, `from torch.cuda import amp`);
 *   - functions (decorators, parameters, call sites in this file, returns),
 *     classes (bases, attributes assigned through `self.x = ...`, methods);
 *   - loops (for, while, comprehensions) and, for every node, its innermost
 *     loop, scope and context (no_grad / inference_mode / set_grad_enabled /
 *     enable_grad / autocast);
 *   - the calls, augmented assignments, assignments and subscript stores a
 *     rule may want to inspect, so no rule walks the tree itself.
 *
 * Values are computed on demand (eval.c and the evaluator beside it) by
 * following bindings the way a reader does: `crit = nn.CrossEntropyLoss()`
 * makes `crit(out, y)` a loss tensor that carries the autograd graph;
 * `loss.item()` does not; a value computed under no_grad does not; a name
 * that reaches `.backward()` does.
 * Results are memoized per node and per binding, with cycle and depth guards.
 *
 * In analyzer/public/, the rules' side of the engine: this half declares
 * what rules may use; the engine's own declarations of the same part are
 * in analyzer/model.h, which includes this one. Rules are compiled with
 * analyzer/public/ alone on their include path.
 */
#ifndef OL_PUBLIC_MODEL_H
#define OL_PUBLIC_MODEL_H

#include <stdbool.h>
#include <stdint.h>

#include "syntax.h"
#include "util.h"

typedef uint32_t ol_sym; /* interned string; 0 = none */
#define OL_NO_INDEX UINT32_MAX

/* ---- values ------------------------------------------------------------- */

typedef enum ol_vkind {
    OL_V_UNKNOWN = 0,
    OL_V_MODULE,      /* an nn.Module instance: model, layer, loss module */
    OL_V_OPTIMIZER,
    OL_V_SCHEDULER,
    OL_V_LOADER,      /* a DataLoader or other iterable of batches */
    OL_V_DATASET,
    OL_V_SCALER,      /* GradScaler */
    OL_V_TENSOR,
    OL_V_NUMBER,      /* Python int / float / bool */
    OL_V_STRING,
    OL_V_NONE,
    OL_V_LIST,
    OL_V_DICT,
    OL_V_TUPLE,
    OL_V_SET,
    OL_V_ARRAY,       /* numpy array */
    OL_V_DEVICE,
    OL_V_AUTOCAST,    /* an autocast context object */
    OL_V_GRADMODE,    /* no_grad / inference_mode / set_grad_enabled / enable_grad object */
    OL_V_EXTERN,      /* an imported module, function or class: ref = dotted name */
    OL_V_OBJECT,      /* instance of an imported class: ref = class dotted name */
    OL_V_CLASS,       /* a class defined in this file: ref = class index */
    OL_V_FUNCTION,    /* a function defined in this file: ref = function index */
    OL_V_INSTANCE,    /* instance of a local class that is not a module: ref = class index */
    OL_V_RANGE,       /* range(...) and other iterables of numbers */
    OL_V_BOTTOM,      /* being computed (cycle): contributes nothing to a join */
} ol_vkind;

enum {
    OL_VF_GRAPH = 1 << 0,      /* tensor that may carry an autograd graph */
    OL_VF_LOSS = 1 << 1,       /* produced by a loss function */
    OL_VF_ELEM_GRAPH = 1 << 2, /* container holding graph-carrying tensors */
    OL_VF_PAIR = 1 << 3,       /* (values, indices) result: element 1 holds no graph */
    OL_VF_LOSSFN = 1 << 4,     /* MODULE that is a loss function */
    OL_VF_LOCAL = 1 << 5,      /* MODULE/INSTANCE: ref is a local class index */
    OL_VF_BATCH = 1 << 6,      /* data drawn from a loader */
    OL_VF_PARAM = 1 << 7,      /* model parameters */
};

/* Autocast details, in ol_val.info for OL_V_AUTOCAST. */
enum {
    OL_AC_DEV_CUDA = 1 << 0,
    OL_AC_DEV_CPU = 1 << 1,    /* also other non-CUDA devices */
    OL_AC_DEV_UNKNOWN = 1 << 2,
    OL_AC_FP16 = 1 << 3,       /* float16, given or the CUDA default */
    OL_AC_BF16 = 1 << 4,
    OL_AC_DTYPE_UNKNOWN = 1 << 5,
    OL_AC_DISABLED = 1 << 6,   /* enabled=False */
    OL_AC_MAYBE_DISABLED = 1 << 7, /* enabled=<expression> */
    OL_AC_DEPRECATED = 1 << 8, /* torch.cuda.amp.autocast */
    OL_AC_FRAMEWORK = 1 << 9,  /* accelerator.autocast() and friends */
};

/* In ol_val.info for OL_V_OBJECT: an instance of a class of the project
 * that is known not to be an nn.Module (its name says nothing more). */
#define OL_OBJ_PROJECT 1u

/* Grad-mode details, in ol_val.info for OL_V_GRADMODE. */
typedef enum ol_gradmode {
    OL_GM_NONE = 0,
    OL_GM_NO_GRAD,
    OL_GM_INFERENCE,
    OL_GM_SET_FALSE,      /* set_grad_enabled(False) */
    OL_GM_SET_COND,       /* set_grad_enabled(<expression>) */
    OL_GM_ENABLE,         /* enable_grad() / set_grad_enabled(True) */
} ol_gradmode;

typedef struct ol_val {
    uint8_t kind;   /* ol_vkind */
    uint8_t flags;  /* OL_VF_* */
    uint16_t info;  /* kind-specific */
    uint32_t ref;   /* kind-specific: dotted-name symbol, class or function index */
} ol_val;

/* ---- scopes and bindings ------------------------------------------------ */

typedef enum ol_scope_kind {
    OL_SCOPE_MODULE,
    OL_SCOPE_CLASS,
    OL_SCOPE_FUNCTION,
    OL_SCOPE_LAMBDA,
    OL_SCOPE_COMPREHENSION,
} ol_scope_kind;

typedef struct ol_scope {
    ol_scope_kind kind;
    ol_nid node;
    uint32_t parent;    /* enclosing scope, OL_NO_INDEX for the module */
    uint32_t function;  /* function index for FUNCTION scopes, else OL_NO_INDEX */
    uint32_t cls;       /* class index for CLASS scopes, else OL_NO_INDEX */
    OL_VEC(ol_sym) globals; /* names declared `global` here */
} ol_scope;

typedef enum ol_def_kind {
    OL_DEF_ASSIGN,      /* x = v, x: T = v, a, b = v */
    OL_DEF_AUGASSIGN,   /* x += v (value is the augmented_assignment node) */
    OL_DEF_FOR,         /* for-loop / comprehension target (value is the iterable) */
    OL_DEF_WITH,        /* with v as x */
    OL_DEF_PARAM,       /* function parameter (value is the default, if any) */
    OL_DEF_IMPORT,      /* import; qual is the dotted name */
    OL_DEF_FUNCTION,
    OL_DEF_CLASS,
    OL_DEF_EXCEPT,      /* except E as x */
    OL_DEF_WALRUS,      /* (x := v) */
    OL_DEF_DELETE,      /* del x */
    OL_DEF_OTHER,       /* bound some other way (global, match, ...): unknown value */
} ol_def_kind;

#define OL_PATH_MAX 6

typedef struct ol_def {
    ol_sym name;
    ol_def_kind kind;
    uint32_t scope;
    ol_nid target;      /* the identifier (or attribute for attribute defs) bound */
    ol_nid value;       /* the value expression (see ol_def_kind) */
    ol_nid stmt;        /* the statement that binds */
    uint32_t pos;       /* byte offset from which the binding is visible */
    ol_sym qual;        /* imports: full dotted name */
    ol_nid annotation;  /* parameters and annotated assignments */
    uint32_t index;     /* parameters: position; functions/classes: their index */
    uint8_t path_len;   /* unpacking path into the value: `a, (b, c) = v` */
    int8_t path[OL_PATH_MAX];
    bool starred;       /* *rest in an unpacking */
    uint32_t next;      /* next def of the same name in the same scope, in order */
} ol_def;

/* ---- functions, classes, loops, contexts --------------------------------- */

typedef enum ol_hook {
    OL_HOOK_NONE = 0,
    OL_HOOK_TRAIN_STEP,     /* Lightning training_step */
    OL_HOOK_EVAL_STEP,      /* Lightning validation_step / test_step / predict_step */
    OL_HOOK_EVAL_HOOK,      /* on_validation_* / on_test_* / on_predict_* of a LightningModule or
                               a Callback: run inside the evaluation loop, without grad */
} ol_hook;

typedef struct ol_function {
    ol_nid node;            /* function_definition */
    ol_nid decorated;       /* decorated_definition around it, or OL_NONE */
    ol_sym name;
    uint32_t scope;         /* the function's own scope */
    uint32_t outer_scope;   /* scope where the name is bound */
    uint32_t cls;           /* class index for methods, else OL_NO_INDEX */
    bool is_method;         /* first parameter is self */
    bool is_staticmethod, is_classmethod;
    bool is_lambda;
    ol_gradmode decorator_mode; /* @torch.no_grad() and friends */
    OL_VEC(uint32_t) params;    /* def indices, in order */
    OL_VEC(uint32_t) callsites; /* call indices resolving to this function */
    OL_VEC(ol_nid) returns;     /* return/yield value expressions */
    int8_t grad_state;          /* memo for ol_grad_disabled: 0 unknown, 1 computing, 2 enabled, 3 disabled */
} ol_function;

typedef struct ol_class {
    ol_nid node;
    ol_sym name;
    uint32_t scope;          /* the class body's scope */
    OL_VEC(ol_nid) bases;
    OL_VEC(uint32_t) methods;    /* function indices */
    OL_VEC(uint32_t) attr_defs;  /* defs of self.x = ... (and class-body names) */
    int8_t module_state;         /* -1 unknown yet, 0 no, 1 yes (memo) */
    int8_t module_guessed;       /* 1: a module only because a base is unseen and it defines forward() */
    int8_t lightning_state;
    int8_t visiting;
} ol_class;

typedef enum ol_loop_kind {
    OL_LOOP_FOR,
    OL_LOOP_WHILE,
    OL_LOOP_COMPREHENSION,
} ol_loop_kind;

typedef struct ol_loop {
    ol_loop_kind kind;
    ol_nid node;        /* for_statement / while_statement / comprehension */
    ol_nid iter;        /* iterable (for / first for_in_clause), OL_NONE for while */
    ol_nid body;        /* block, or the comprehension's body expression */
    uint32_t parent;    /* enclosing loop in the same function, or OL_NO_INDEX */
    uint32_t scope;
    int8_t data_state;  /* memo for ol_loop_is_data_loop: -1 unknown */
    int8_t trials_state; /* memo for ol_loop_runs_trials: -1 unknown, 0 no, 1 yes */
} ol_loop;

typedef enum ol_ctx_kind {
    OL_CTX_GRAD,        /* with torch.no_grad() and friends; mode in gradmode */
    OL_CTX_AUTOCAST,    /* with autocast(...); details in autocast */
    OL_CTX_EXCEPT,      /* an except clause body; oom says whether it catches OOM */
} ol_ctx_kind;

typedef struct ol_ctx {
    ol_ctx_kind kind;
    ol_nid node;        /* with_statement / except_clause */
    ol_nid item;        /* with_item (or the except clause's type expression) */
    ol_nid body;
    uint32_t parent;    /* enclosing context, OL_NO_INDEX at the top */
    ol_gradmode gradmode;
    uint16_t autocast;  /* OL_AC_* */
    bool catches_oom;
} ol_ctx;

/* ---- facts for rules ---------------------------------------------------- */

typedef struct ol_call {
    ol_nid node;        /* call */
    ol_nid callee;      /* its function expression */
    ol_nid receiver;    /* attribute object for `x.m(...)`, else OL_NONE */
    ol_sym name;        /* method name for `x.m(...)`, identifier for `f(...)`, else 0 */
} ol_call;

typedef struct ol_import {
    ol_nid stmt;        /* import_statement / import_from_statement */
    ol_nid name_node;   /* dotted_name or aliased_import bound */
    ol_sym qual;        /* full dotted name imported */
    ol_sym bound;       /* local name bound */
    uint32_t def;       /* def index */
} ol_import;

/* Well-known names, interned once per model. */
typedef struct ol_names {
#define OL_WELL_KNOWN(X)                                                                      \
    X(backward) X(step) X(zero_grad) X(item) X(detach) X(append) X(extend) X(insert) X(add)  \
    X(clear) X(self) X(cls) X(forward) X(training_step) X(validation_step) X(test_step)      \
    X(predict_step) X(eval) X(train) X(parameters) X(set_to_none) X(retain_graph)           \
    X(scale) X(update) X(unscale_) X(to) X(cuda) X(cpu) X(half)        \
    X(bfloat16) X(enumerate) X(zip) X(range) X(len) X(str) X(list) X(dict) \
    X(tuple) X(set) X(sum) X(max) X(min) X(abs) X(round) X(iter) X(next) X(sorted)       \
    X(reversed) X(map) X(filter) X(isinstance) X(getattr) X(print) X(super) X(tolist)      \
    X(numpy) X(data) X(grad) X(shape) X(dtype) X(device) X(requires_grad) X(manual_backward) \
    X(loss) X(update_parameters) X(closure) X(empty_cache) X(prepare) X(autocast)          \
    X(__init__) X(__call__) X(setdefault) X(copy_) X(mean) X(value) X(values) X(indices)               \
    X(from_pretrained) X(generate) X(module) X(state_dict) X(named_parameters) X(items)    \
    X(keys) X(get) X(pop) X(extendleft) X(appendleft) X(put) X(copy) X(clone)
#define OL_X(n) ol_sym n;
    OL_WELL_KNOWN(OL_X)
#undef OL_X
} ol_names;

/* A use that only makes sense on an nn.Module: `x.eval()`, `x.parameters()`
 * (receiver is x), or calling x (callee is x). */
typedef struct ol_evidence {
    ol_sym name;      /* identifier, or attribute name for self.x */
    ol_nid use;       /* the identifier or attribute node used */
    bool called;      /* x(...) rather than x.method() */
} ol_evidence;

/* What a function does (ol_fn_summary.facts in summary.h; ol_links.call_facts). */
enum {
    OL_FN_FORWARD = 1u << 0,       /* runs a model's forward pass with autograd on */
    OL_FN_EVAL = 1u << 1,          /* calls .eval() on a module */
    OL_FN_TRAIN = 1u << 2,         /* calls .train() on a module */
    OL_FN_ZERO_GRAD = 1u << 3,
    OL_FN_STEP = 1u << 4,          /* steps an optimizer */
    OL_FN_BACKWARD = 1u << 5,
    OL_FN_NO_GRAD = 1u << 6,       /* its whole body runs without autograd */
    OL_FN_RET_ON_DEVICE = 1u << 7, /* returns a tensor it moved to a device */
    OL_FN_RET_OUTPUT = 1u << 8,    /* returns a model's output (graph, not a loss) */
    OL_FN_CALLERS_NO_GRAD = 1u << 9, /* called in its file, only where autograd is off */
    OL_FN_RET_DATA = 1u << 10,     /* what it returns on a device is data read from disk or an array */
    OL_FN_KNOWN = 1u << 11,        /* (ol_links.call_facts only) the callee is a function of the run */
};

/* What other functions and files say about calls this file makes (whole-
 * program facts, see summary.h). The model only asks; the answers come from
 * the run's summaries. NULL, or a hook returning false, means "not known",
 * which is how a file linted alone is read. */
struct ol_model;
typedef struct ol_links {
    void *ctx;
    /* Value of calling the project's function `qual` (method 0), or method
     * `method` of the project's class `qual`; index >= 0 or key asks for one
     * element of a returned tuple or dict. */
    bool (*call)(const struct ol_links *l, struct ol_model *m, ol_sym qual, ol_sym method, int index,
                 const char *key, ol_val *out);
    /* What the callee of call `ci` does (OL_FN_* of summary.h, with
     * OL_FN_KNOWN when the run has it), 0 if unknown. */
    uint32_t (*call_facts)(const struct ol_links *l, struct ol_model *m, uint32_t ci);
    /* The dotted name a name bound nowhere in this file comes from, through
     * `from module import *` of a project module; 0 if none. */
    ol_sym (*star)(const struct ol_links *l, struct ol_model *m, ol_sym name);
    /* Does another file of the run this file imports bring in one of the
     * packages `roots` (NULL-terminated: "torch", ...)? */
    bool (*imports_root)(const struct ol_links *l, struct ol_model *m, const char *const *roots);
    /* What the callee of call ci (summarized by the run) does with the
     * argument `arg`: false when its summary is unknown or arg is passed to
     * none of its parameters; else true with the parameter's index, whether
     * the callee uses it on the host (*host) and whether it lives in another
     * file (*cross_file). */
    bool (*param_use)(const struct ol_links *l, struct ol_model *m, uint32_t ci, ol_nid arg, uint32_t *param,
                      bool *host, bool *cross_file);
    /* The run's loss classes (nn.Modules named like a loss) whose forward
     * returns a tuple of `arity` parts: 1 when part `index` of one of them
     * may carry the graph, 0 when every one's is known not to, -1 when no
     * such class is known. */
    int (*loss_part)(const struct ol_links *l, struct ol_model *m, int arity, int index);
    /* Is `qual` a class of another file of the run whose instances hold
     * host data only (ol_class_holds_host_data, in its own file)? */
    bool (*host_instance)(const struct ol_links *l, struct ol_model *m, ol_sym qual);
} ol_links;

typedef struct ol_attr_use {
    uint32_t cls;
    ol_sym name;
    uint8_t bits;
} ol_attr_use;

typedef struct ol_model {
    const ol_tree *tree;
    const ol_source *src;
    ol_interner strings;
    ol_names names;
    ol_arena arena;

    OL_VEC(ol_scope) scopes;
    OL_VEC(ol_def) defs;
    OL_VEC(ol_function) functions;
    OL_VEC(ol_class) classes;
    OL_VEC(ol_loop) loops;
    OL_VEC(ol_ctx) contexts;
    OL_VEC(ol_call) calls;
    OL_VEC(ol_import) imports;
    OL_VEC(ol_nid) aug_assigns;     /* augmented_assignment nodes */
    OL_VEC(ol_nid) assigns;         /* assignment nodes */
    OL_VEC(ol_nid) subscript_stores; /* assignments whose target is x[k] */
    OL_VEC(ol_nid) grad_switches;    /* `x.requires_grad_(...)` calls and `x.requires_grad = ...`
                                        assignments, in node order (facts.c, built on first use) */
    bool grad_switches_built;
    OL_VEC(uint64_t) unbound_self_calls; /* `self.name(...)` calls that run no method of the file:
                                          * (name << 32 | call index), sorted (grad.c) */
    bool unbound_self_calls_built;
    OL_VEC(uint64_t) branch_grads;  /* the grad mode of each branch arm asked (grad.c): the arm's node
                                     * << 3 | state (1 asking, 2 no answer, 3 on, 4 off), sorted */
    /* the operands of the backward() calls of each function's own code
     * (flows.c, per function on first use, forgotten with the values they
     * were read from): index fn + 1, 0 for module code; bw_start is NULL
     * until asked, OL_NO_INDEX for a function not looked at yet */
    uint32_t *bw_start, *bw_count;
    OL_VEC(ol_nid) bw_ops;
    OL_VEC(ol_nid) withs;           /* with_statement nodes */
    OL_VEC(ol_nid) excepts;         /* except_clause nodes */

    /* per node (indexed by ol_nid) */
    uint32_t *node_scope;   /* innermost scope */
    uint32_t *node_loop;    /* innermost loop in the same function, or OL_NO_INDEX */
    uint32_t *node_ctx;     /* innermost context, or OL_NO_INDEX */
    uint32_t *subtree_end;  /* one past the last descendant (pre-order) */
    uint32_t *node_call;    /* call index for call nodes, else OL_NO_INDEX */
    ol_sym *node_sym;       /* the node's text interned, once asked (ol_node_sym), else 0; NULL until asked */

    /* (scope, name) -> first def, as an open-addressing table */
    uint64_t *def_keys;
    uint32_t *def_heads, *def_tails;
    size_t def_slots;
    /* the same chains as arrays, for binary search (dataflow.c, def_chain):
     * chain_items holds every chain in turn; for a chain's head def,
     * chain_start/chain_count say where its chain lies */
    uint32_t *chain_items, *chain_start, *chain_count;
    size_t chains_built;    /* defs.len when they were built */
    /* call -> local functions it calls (see ol_call_functions) */
    uint32_t *call_functions_begin, *call_functions;
    /* the calls of a bare name (`Net(...)`, no receiver), as name << 32 |
     * call index, sorted: built when first asked (elements.c) */
    uint64_t *plain_calls;
    size_t plain_calls_len;
    bool plain_calls_built;
    /* every class's methods and attribute defs, keyed by (class << 32 |
     * name) and sorted (ol_class_methods_named, ol_class_attrs_named):
     * built when first asked */
    struct ol_member *method_keys, *attr_keys;
    size_t method_keys_len, attr_keys_len;
    bool method_keys_built, attr_keys_built;
    /* the calls of a method named eval or train, as call indexes in order:
     * the only ones that can switch a module's mode (ol_mode_calls) */
    uint32_t *mode_calls;
    size_t mode_calls_len;
    bool mode_calls_built;
    /* the loops with an iterable, as iter << 32 | loop index, sorted
     * (ol_loops_iterating): built when first asked */
    uint64_t *iter_loops;
    size_t iter_loops_len;
    bool iter_loops_built;
    /* the defs as target << 32 | def index, sorted (ol_def_of_target):
     * built when first asked */
    uint64_t *target_defs;
    bool target_defs_built;
    /* every identifier by its spelling (names.c, ol_name_uses): built when first asked */
    struct ol_name_index *name_index;
    /* what the layer above keeps per file (facts.c: training events per
     * region); the model frees it with the function given, knowing nothing
     * of its shape */
    void *facts_cache;
    void (*facts_cache_free)(void *cache);
    /* the same for hardware.c: the words of devices and processes the code holds */
    void *devices_cache;
    void (*devices_cache_free)(void *cache);
    /* the same for flows.c: what each walk of ol_value_reaches read */
    void *reach_cache;
    void (*reach_cache_free)(void *cache);
    /* the same for the door (ask.c): its answers and their reasons */
    void *door;
    void (*door_free)(void *door);
    const char *asking; /* the code of the rule whose check runs (lint.c), for the door's audit */

    /* what each name alone suggests (eval.c, guess_from_name), by symbol */
    ol_val *name_guess;
    uint8_t *name_guessed;
    size_t name_guess_cap;

    /* lazy evaluation state */
    ol_val *node_val;       /* memo per node */
    uint8_t *node_state;    /* 0 = not computed, 1 = in progress, 2 = done, 3 + d = provisional (eval.c) */
    ol_val *def_val;
    uint8_t *def_state;
    bool *def_reaches_backward; /* the binding's value reaches .backward() */
    uint32_t eval_depth;
    /* the least depth of a value read while still being evaluated (a
     * cycle) since the evaluation at this depth began, UINT32_MAX if none;
     * and the values computed from such a read, kept only until the
     * evaluation at that depth is done (eval.c) */
    uint32_t eval_low;
    OL_VEC(uint32_t) provisional;

    /* where names are used like nn.Modules (built on first use, classes.c) */
    OL_VEC(struct ol_evidence) evidence;
    bool evidence_built;
    /* the same, per def: bit 1 a module-only method is called on a use it
     * reaches, bit 2 such a use is called; and for self.x in methods, per
     * (class, attribute), sorted */
    uint8_t *def_module_use;
    size_t def_module_use_len;
    OL_VEC(struct ol_attr_use) attr_module_uses;

    /* file-wide facts */
    bool grad_globally_disabled;   /* module-level torch.set_grad_enabled(False) */
    uint8_t grad_setter_stmts;     /* set_grad_enabled(...) as a statement anywhere: 0 not looked
                                      for yet, 1 none, 2 some (grad.c) */
    bool mentions_cuda;            /* .cuda(), "cuda" device, torch.cuda.* */
    bool mentions_mixed_precision; /* autocast, .half(), bf16, framework precision */
    bool truncated;                /* nesting beyond OL_MODEL_MAX_DEPTH was skipped */

    const ol_links *links;         /* whole-program facts, or NULL */
} ol_model;

#define OL_MODEL_MAX_DEPTH 2500

/* ---- queries ------------------------------------------------------------- */

ol_sym ol_model_intern(ol_model *m, const char *s);
ol_sym ol_node_sym(ol_model *m, ol_nid identifier);
const char *ol_sym_str(const ol_model *m, ol_sym s);

/* Defs of `name` that may reach position `at` (inside scope `scope`).
 * Returns the count written to out (at most cap). */
/* The local functions call `call` may call (the inverse of the functions'
 * callsites), in function order. */
size_t ol_call_functions(const ol_model *m, uint32_t call, const uint32_t **out);
size_t ol_reaching_defs(ol_model *m, uint32_t scope, ol_sym name, ol_nid at, uint32_t *out, size_t cap);
/* The loops whose iterable (ol_loop.iter) holds node n, in loop order: at
 * most cap written to out, how many returned. A table of the loops by
 * iterable, built on the first question, and a walk up from n. */
size_t ol_loops_iterating(ol_model *m, ol_nid n, uint32_t *out, size_t cap);
/* The first def whose target is node `target` (the identifier or self
 * attribute a binding writes), or OL_NO_INDEX: a table of the defs by
 * target, built on the first question. */
uint32_t ol_def_of_target(ol_model *m, ol_nid target);
/* First def of a name in a scope, or OL_NO_INDEX (then follow ol_def.next). */
uint32_t ol_scope_defs(const ol_model *m, uint32_t scope, ol_sym name);

/* How often code runs (ask.h's question; facts.c answers it within a file). */
typedef enum ol_often {
    OL_ONCE,       /* module code, `__init__`, a smoke test under the main guard */
    OL_PER_CALL,   /* a function whose callers the file (or the run) does not show */
    OL_PER_EPOCH,  /* a loop around the batch loop */
    OL_PER_STEP,   /* a loop over batches or one that runs a model, a forward or a per-batch hook, or a function
                      such code calls */
} ol_often;

/* What decides it, in this file. */
typedef enum ol_often_cause {
    OL_OC_MODULE,      /* module code outside loops */
    OL_OC_STEP_LOOP,   /* node: a loop that draws batches or runs a model each iteration */
    OL_OC_EPOCH_LOOP,  /* node: a loop around one that does */
    OL_OC_INIT,        /* node: the function's name (`__init__`, `reset_parameters`) */
    OL_OC_STEP_METHOD, /* node: the function's name (a forward, `__call__`, a framework's per-batch hook) */
    OL_OC_CALLER,      /* node: the call site in the file that runs it most often */
    OL_OC_NO_CALLER,   /* the function has no caller in the file */
    OL_OC_PERIODIC,    /* node: the condition of an `if` in a step loop that runs it every so many steps
                          (`if step % k == 0`) */
    OL_OC_INTERACTIVE, /* node: a loop that waits for the user's input each iteration (a prompt loop) */
    OL_OC_FIRST_TIME,  /* node: the test of an `if` whose block sets what it tests (`if not hasattr(self, "q")`):
                          the first time only */
} ol_often_cause;

typedef struct ol_often_local {
    ol_often often;
    ol_often_cause cause;
    ol_nid node;
    uint32_t function;     /* for NO_CALLER: the function the run's callers decide */
} ol_often_local;

/* What decides the grad mode at a node, in this file. */
typedef enum ol_grad_cause {
    OL_GC_MODULE,      /* module code, where nothing turns autograd off */
    OL_GC_GLOBAL,      /* a module-level `torch.set_grad_enabled(False)` */
    OL_GC_CONTEXT,     /* a `with` block around it: node is the with item */
    OL_GC_STATEMENT,   /* a `set_grad_enabled(...)` statement before it: node is the call */
    OL_GC_DECORATOR,   /* a decorator of its function: node is the decorator */
    OL_GC_HOOK,        /* a framework hook that runs without grad: node is the function's name */
    OL_GC_CALLERS,     /* its function's call sites in the file: node is one with autograd on when the
                          body runs with it, else the first */
    OL_GC_OVERRIDE,    /* a base class calls the method through self: node is that call */
    OL_GC_NONE_CALLED, /* its function has no caller in the file and nothing around it decides */
} ol_grad_cause;

typedef struct ol_grad_local {
    bool off;              /* ol_grad_disabled's answer */
    ol_grad_cause cause;
    ol_nid node;           /* see the cause; OL_NONE for MODULE, GLOBAL and NONE_CALLED */
    uint32_t function;     /* the function whose mode it is, or OL_NO_INDEX at module level */
} ol_grad_local;

/* Enclosing function of a node, or OL_NO_INDEX (module level). */
uint32_t ol_function_of(const ol_model *m, ol_nid n);

/* The call at node n (OL_NO_INDEX if n is not a call). */
static inline uint32_t ol_call_at(const ol_model *m, ol_nid n)
{
    return n == OL_NONE ? OL_NO_INDEX : m->node_call[n];
}
/* Argument of a call by position (0-based, positional only) or keyword. */
ol_nid ol_call_arg(const ol_model *m, ol_nid call, int position, const char *keyword);

/* Name text helpers. */
bool ol_name_looks_like(const char *name, size_t len, const char *const *tokens);
/* Compares (names.c) two expressions' source text, ignoring whitespace. */
bool ol_same_text(const ol_tree *t, ol_nid a, ol_nid b);
/* Does the subtree at e contain an expression with the same text as x? */
bool ol_mentions(const ol_tree *t, ol_nid e, ol_nid x);
/* The calls named eval or train, the only ones that can switch a module's
 * mode: call indexes in order, *count of them (found on the first question). */
const uint32_t *ol_mode_calls(ol_model *m, size_t *count);
/* The first of the calls [lo, hi) whose node is n or after it (hi if
 * none): the calls are in node order, so a binary search. */
size_t ol_calls_from(const ol_model *m, ol_nid n, size_t lo, size_t hi);
/* The calls whose nodes lie in n's subtree: indexes [*first, return). */
size_t ol_calls_in(const ol_model *m, ol_nid n, size_t *first);
/* The hash of a node's text with whitespace ignored (ol_same_text's equality). */
uint64_t ol_text_hash(const ol_tree *t, ol_nid n);
/* The file's identifiers spelled like node id (by ol_text_hash), among nodes
 * [from, to), in node order: *len of them from the pointer returned (names.c;
 * built on the first question in linear time and kept with the model). *at,
 * unless NULL, is the first one's position among the ol_name_uses_total(m)
 * identifiers of the file, for a caller's table per use. */
const ol_nid *ol_name_uses(ol_model *m, ol_nid id, ol_nid from, ol_nid to, size_t *len, size_t *at);
size_t ol_name_uses_total(ol_model *m);

#endif
