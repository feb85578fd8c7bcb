/*
 * OOM702 data-parallel: constructing `nn.DataParallel(...)`.
 *
 * DataParallel runs one process that scatters each batch to the GPUs and
 * gathers every output (and the loss computation) back on the first GPU,
 * which therefore holds more than the others: the first card runs out of
 * memory while the rest sit half empty. `isinstance(m, nn.DataParallel)`
 * and unwrapping code are not flagged.
 */
#include "rule.h"

/* `device_ids=[d]` (keyword or second argument): a list or tuple of one
 * device. DataParallel over one GPU scatters and gathers nothing. */
static bool one_device(ol_model *m, ol_nid call)
{
    const ol_tree *t = m->tree;
    ol_nid ids = ol_call_arg(m, call, 1, "device_ids");
    if (ids == OL_NONE)
        return false;
    ids = ol_unparen(t, ids);
    ol_kind k = ol_kind_of(t, ids);
    if (k != OL_N_list && k != OL_N_tuple)
        return false;
    ol_nid first = ol_first_named(t, ids);
    return first != OL_NONE && ol_next_named(t, first) == OL_NONE && ol_kind_of(t, first) != OL_N_list_splat;
}

/* Does cond test `torch.cuda.is_available()`; *negated when under a `not`? */
static bool tests_cuda(ol_model *m, ol_nid cond, bool *negated)
{
    const ol_tree *t = m->tree;
    cond = ol_unparen(t, cond);
    *negated = false;
    if (ol_kind_of(t, cond) == OL_N_not_operator) {
        *negated = true;
        cond = ol_unparen(t, ol_field(t, cond, OL_F_argument));
    }
    if (ol_kind_of(t, cond) != OL_N_call)
        return false;
    static const char *const IS_AVAILABLE[] = {"torch.cuda.is_available", NULL};
    return ol_call_is(m, cond, IS_AVAILABLE);
}

/* Is n on the path taken when CUDA is not available: the `else` of
 * `if torch.cuda.is_available():`, or the body of `if not ...:`? No GPU,
 * nothing scattered or gathered. */
static bool without_cuda(ol_model *m, ol_nid n)
{
    const ol_tree *t = m->tree;
    for (ol_nid a = n, p = ol_parent(t, n); p != OL_NONE; a = p, p = ol_parent(t, p)) {
        ol_kind pk = ol_kind_of(t, p);
        if (pk == OL_N_function_definition || pk == OL_N_class_definition)
            return false;
        bool negated;
        if (pk == OL_N_if_statement && ol_field(t, p, OL_F_consequence) == a &&
            tests_cuda(m, ol_field(t, p, OL_F_condition), &negated) && negated)
            return true;
        if (pk == OL_N_else_clause) {
            ol_nid ifs = ol_parent(t, p);
            if (ifs != OL_NONE && ol_kind_of(t, ifs) == OL_N_if_statement &&
                tests_cuda(m, ol_field(t, ifs, OL_F_condition), &negated) && !negated)
                return true;
        }
    }
    return false;
}

/* Is `use`, a name bound to the wrapper, used in a way that runs no forward
 * through it: its inner model taken (`model.module`), a state dict loaded
 * or read (`model.load_state_dict(...)`, `model.state_dict()`: the reason
 * the wrapper is often built, a checkpoint saved or loaded with `module.`
 * keys), a statement that moves or switches it in place (`model.cuda()`,
 * `model.eval()`), or shown (`print(model)`, a notebook cell ending in
 * `model`)? *reads is set by the first three, which show what the wrapper
 * was built for. */
static bool use_runs_no_forward(ol_model *m, ol_nid use, bool *reads)
{
    const ol_tree *t = m->tree;
    static const char *const READS[] = {"module", "load_state_dict", "state_dict", NULL};
    static const char *const IN_PLACE[] = {"cuda", "to", "cpu", "eval", "train", "float", "half", "double",
                                           "requires_grad_", NULL};
    static const char *const SHOWN[] = {"builtins.print", "builtins.repr", "builtins.str", NULL};
    ol_nid attr = ol_parent(t, use);
    /* shown: the name alone as a statement (a notebook cell's last line
     * displays it), or printed */
    if (ol_kind_of(t, attr) == OL_N_expression_statement && ol_first_named(t, attr) == use &&
        ol_next_named(t, use) == OL_NONE)
        return true;
    if (ol_kind_of(t, attr) == OL_N_argument_list && ol_call_is(m, ol_parent(t, attr), SHOWN))
        return true;
    if (ol_kind_of(t, attr) != OL_N_attribute || ol_field(t, attr, OL_F_object) != use)
        return false;
    ol_nid name = ol_field(t, attr, OL_F_attribute);
    for (const char *const *r = READS; *r; r++)
        if (ol_text_is(t, name, *r)) {
            *reads = true;
            return true;
        }
    ol_nid call = ol_parent(t, attr);
    if (ol_kind_of(t, call) != OL_N_call || ol_field(t, call, OL_F_function) != attr ||
        ol_kind_of(t, ol_parent(t, call)) != OL_N_expression_statement)
        return false; /* `m2 = model.cuda()` is the wrapper under another name */
    for (const char *const *r = IN_PLACE; *r; r++)
        if (ol_text_is(t, name, *r))
            return true;
    return false;
}

/* Is `name` bound in a scope from `from` out to `to` (not `to` itself):
 * then a use in `from` reads that binding, not the one of `to`. A class
 * body's names are not seen from the functions inside it. */
static bool bound_between(ol_model *m, uint32_t from, uint32_t to, ol_sym name)
{
    for (uint32_t s = from; s != OL_NO_INDEX && s != to; s = m->scopes.items[s].parent)
        if ((s == from || m->scopes.items[s].kind != OL_SCOPE_CLASS) && ol_scope_defs(m, s, name) != OL_NO_INDEX)
            return true;
    return false;
}

/* The names of the file that some code unwraps or reads the state dict of
 * (`X.module`, `X.state_dict`, `X.load_state_dict`): only a wrapper bound
 * to one of them can be one only unwrapped. Found in one pass per file, so
 * that a file of many wrappers costs no walk per wrapper. */
typedef struct unwrapped_names {
    ol_sym *items;
    size_t len, cap;
} unwrapped_names;

static void find_unwrapped_names(ol_model *m, unwrapped_names *out)
{
    const ol_tree *t = m->tree;
    ol_sym module = ol_model_intern(m, "module"), state = ol_model_intern(m, "state_dict"),
           load = ol_model_intern(m, "load_state_dict");
    for (ol_nid n = 0; n < t->nodes.len; n++) {
        if (ol_kind_of(t, n) != OL_N_attribute)
            continue;
        ol_nid attr = ol_field(t, n, OL_F_attribute), obj = ol_field(t, n, OL_F_object);
        if (attr == OL_NONE || obj == OL_NONE || ol_kind_of(t, obj) != OL_N_identifier)
            continue;
        ol_sym a = ol_node_sym(m, attr);
        if (a != module && a != state && a != load)
            continue;
        ol_sym name = ol_node_sym(m, obj);
        bool have = false;
        for (size_t i = 0; i < out->len && !have; i++)
            have = out->items[i] == name;
        if (!have)
            ol_vec_push(out, name);
    }
}

/* The binding `name = <chain holding call>` the call's statement makes
 * (`model = nn.DataParallel(net).to(dev)`), or OL_NO_INDEX. */
static uint32_t wrapper_def(ol_model *m, ol_nid call)
{
    const ol_tree *t = m->tree;
    ol_nid stmt = ol_statement_of(t, call);
    ol_nid a = stmt != OL_NONE ? ol_first_named(t, stmt) : OL_NONE;
    if (a == OL_NONE || ol_kind_of(t, a) != OL_N_assignment)
        return OL_NO_INDEX;
    ol_nid left = ol_field(t, a, OL_F_left);
    if (left == OL_NONE || ol_kind_of(t, left) != OL_N_identifier)
        return OL_NO_INDEX;
    for (uint32_t i = ol_scope_defs(m, m->node_scope[left], ol_node_sym(m, left)); i != OL_NO_INDEX;
         i = m->defs.items[i].next) {
        const ol_def *d = &m->defs.items[i];
        if (d->target == left && d->kind == OL_DEF_ASSIGN && d->path_len == 0 && d->value != OL_NONE &&
            ol_method_chain_holds(m, d->value, call))
            return i;
    }
    return OL_NO_INDEX;
}

/* Is the wrapper built by call bound to a name whose every use runs no
 * forward through it (use_runs_no_forward), one of them taking its inner
 * model or its state dict, all in its own scope: built to load a checkpoint
 * saved from a wrapper, then unwrapped (`model = model.module`) before
 * anything runs, or built to save one whose keys start with `module.`
 * (`torch.save(DataParallel(net).state_dict(), path)`)? Then nothing is
 * scattered or gathered. A name used in another scope, passed on,
 * returned, stored or called keeps the finding. */
static bool wrapper_only_unwrapped(ol_model *m, ol_nid call, const unwrapped_names *names)
{
    const ol_tree *t = m->tree;
    uint32_t di = wrapper_def(m, call);
    if (di == OL_NO_INDEX)
        return false;
    bool named = false;
    for (size_t i = 0; i < names->len && !named; i++)
        named = names->items[i] == m->defs.items[di].name;
    if (!named)
        return false; /* nothing takes its `.module` or its state dict */
    const ol_def *d = &m->defs.items[di];
    const ol_scope *sc = &m->scopes.items[d->scope];
    if (sc->kind == OL_SCOPE_CLASS)
        return false;
    bool reads = false; /* `model.module` or its state dict read somewhere: a wrapper merely unused is not one unwrapped */
    for (ol_nid n = sc->node; n < m->subtree_end[sc->node]; n++) {
        if (ol_kind_of(t, n) != OL_N_identifier || n == d->target || ol_node_sym(m, n) != d->name)
            continue;
        ol_nid p = ol_parent(t, n);
        if (ol_kind_of(t, p) == OL_N_attribute && ol_field(t, p, OL_F_attribute) == n)
            continue; /* `x.model`: an attribute, not the name */
        if (ol_kind_of(t, p) == OL_N_keyword_argument && ol_field(t, p, OL_F_name) == n)
            continue;
        bool rebinds = false;
        for (uint32_t j = ol_scope_defs(m, d->scope, d->name); j != OL_NO_INDEX; j = m->defs.items[j].next)
            if (m->defs.items[j].target == n)
                rebinds = true;
        if (rebinds)
            continue;
        /* in another scope (a nested function, or a function of the module
         * for a module-level wrapper): the binding it reads there, if any */
        uint32_t defs[8];
        size_t nd = ol_reaching_defs(m, m->node_scope[n], d->name, n, defs, 8);
        if (nd == 0 && !bound_between(m, m->node_scope[n], d->scope, d->name))
            return false; /* not resolved there: it may be the wrapper */
        bool reached = nd == 8;
        for (size_t k = 0; k < nd && !reached; k++) /* `global model`: unknown, may be the wrapper */
            reached = defs[k] == di || m->defs.items[defs[k]].kind == OL_DEF_OTHER;
        if (reached && !use_runs_no_forward(m, n, &reads))
            return false;
    }
    return reads;
}

static void check(ol_check *c)
{
    ol_model *m = c->model;
    unwrapped_names names = {0};
    bool names_found = false;
    for (size_t i = 0; i < m->calls.len; i++) {
        const ol_call *call = &m->calls.items[i];
        static const char *const DATA_PARALLEL[] = {"torch.nn.DataParallel", "torch.nn.parallel.DataParallel",
                                                    "torch.nn.parallel.data_parallel.DataParallel", NULL};
        if (!ol_call_is(m, call->node, DATA_PARALLEL))
            continue;
        if (one_device(m, call->node) || without_cuda(m, call->node))
            continue;
        if (!names_found) {
            find_unwrapped_names(m, &names);
            names_found = true;
        }
        if (wrapper_only_unwrapped(m, call->node, &names))
            continue;
        ol_diag *d = ol_report_node(c, call->node,
                                    "`DataParallel` gathers every output on the first GPU, which runs out of memory "
                                    "before the others are full");
        ol_diag_help(d, "use `torch.nn.parallel.DistributedDataParallel` (one process per GPU, launched with "
                        "torchrun)");
        /* what it wraps, and that no device list narrows it */
        ol_reasons why = {0};
        ol_nid module = ol_call_arg(m, call->node, 0, "module");
        if (module != OL_NONE) {
            char *text = ol_node_str_short(m->tree, module);
            ol_because(&why, m, module,
                       "wraps `%s`: each forward scatters the batch over the GPUs and gathers every output on the "
                       "first",
                       text);
            free(text);
        }
        if (ol_call_arg(m, call->node, 1, "device_ids") == OL_NONE)
            ol_because(&why, m, call->node, "no `device_ids`: every GPU the process sees takes part");
        /* code that computes no gradients through the wrapper (a test,
         * demo or sampling script): the gather holds outputs only, no
         * activations or loss for a backward */
        if (ol_wrapper_stays_untrained(m, call->node, &why))
            d->once = true;
        ol_diag_because(d, m, &why);
    }
    ol_vec_free(&names);
}

const ol_rule ol_rule_oom702 = {
    .code = "OOM702",
    .name = "data-parallel",
    .severity = OL_SEV_WARNING,
    .device_memory = true,
    .summary = "`nn.DataParallel` concentrates outputs and loss on one GPU.",
    .what = "Flags calls that construct `torch.nn.DataParallel` (however imported). `isinstance` checks "
            "against it are not flagged, nor is a DataParallel given one device (`device_ids=[rank]`), "
            "which scatters and gathers nothing, or one on the path taken when CUDA is not available (the "
            "`else` of `if torch.cuda.is_available():`), or one built only to load a checkpoint saved from a "
            "wrapper (`module.` keys) and unwrapped with `.module` before anything runs, or only to save one with "
            "those keys: a name whose every use takes its inner model, loads or reads its state dict, moves or "
            "switches it in place, or prints or shows it, and one of them takes its inner model or state dict. Reported only "
            "when the rule is selected by its code (`--extend-select OOM702`): a wrapper in a file that trains "
            "nothing (no backward, optimizer step, trainer, or call named for training or an optimizer), bound "
            "to a name that is only called, read through, printed, or handed to the file's own functions or to "
            "functions of other files of the run that neither backward nor step (an imported "
            "`evaluate(net, loader)`; uses in the other branch of the binding's `if` read another binding): "
            "an evaluation, demo or scoring script, where the gather holds outputs only.",
    .why = "DataParallel is single-process: every step it copies the model to each GPU, scatters the "
           "batch, and gathers all outputs back onto the first device, where the loss and its backward "
           "run. GPU 0 holds the gathered outputs on top of its own share, so it runs out of memory "
           "first, and the Python-side replication makes it slower than DistributedDataParallel even on "
           "one machine. PyTorch recommends DDP for all multi-GPU training.",
    .example = "model = nn.DataParallel(model).cuda()",
    .instead = "# launched with: torchrun --nproc-per-node=NUM_GPUS train.py\n"
               "dist.init_process_group(\"nccl\")\n"
               "local_rank = int(os.environ[\"LOCAL_RANK\"])\n"
               "model = DDP(model.to(local_rank), device_ids=[local_rank])",
    .fix = NULL,
    .tags = "memory,distributed",
    .precision = "very-high",
    .check = check,
};
