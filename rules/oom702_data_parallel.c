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

static void check(ol_check *c)
{
    ol_model *m = c->model;
    for (size_t i = 0; i < m->calls.len; i++) {
        const ol_call *call = &m->calls.items[i];
        static const char *const DATA_PARALLEL[] = {"torch.nn.DataParallel", "torch.nn.parallel.DataParallel",
                                                    "torch.nn.parallel.data_parallel.DataParallel", NULL};
        if (!ol_call_is(m, call->node, DATA_PARALLEL))
            continue;
        if (one_device(m, call->node) || without_cuda(m, call->node))
            continue;
        ol_diag *d = ol_report_node(c, call->node,
                                    "`DataParallel` gathers every output on the first GPU, which runs out of memory "
                                    "before the others are full");
        ol_diag_help(d, "use `torch.nn.parallel.DistributedDataParallel` (one process per GPU, launched with "
                        "torchrun)");
    }
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
            "`else` of `if torch.cuda.is_available():`).",
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
