/*
 * OOM302 torch-load-without-map-location: `torch.load(path)` with no
 * `map_location`. Tensors come back on the device they were saved from: a
 * checkpoint written on GPU 0 lands on GPU 0 in every process that loads it,
 * and a full training checkpoint (optimizer state included) can fill a card
 * before the model even starts. A positional second argument
 * (`torch.load(p, "cpu")`) counts as a map location; `map_location=None`,
 * also through a local that is None on some path, does not.
 *
 * Not flagged where no GPU tensor can come back: files that run on
 * TPUs/XLA only, the state of a GradScaler or an LR scheduler (numbers,
 * not device tensors), pickles of plain data named for what they hold
 * (a vocabulary, a config, parsed arguments, label maps), and files that
 * this very source writes with host data only (`torch.save(feats.cpu(),
 * os.path.join(d, "feats.pth"))`, then `torch.load(os.path.join(e,
 * "feats.pth"))`: a cache of extracted features; also linked by the shape
 * of the path, ol_path_shapes: a variable bound to the same f-string, the
 * method that names the file, the helper that wrote it and returns its
 * path), or, with no path in
 * common, whose every key the load is read through is in a dict literal
 * this source saves with host data only, while no other save here may
 * hold GPU tensors (`torch.save({"eigvec": v.to("cpu")}, args.out)`, then
 * `torch.load(args.factor)["eigvec"]`). When the run has several files, the
 * writer may be in another one: the summaries record every file's saves,
 * and a load linked to them by a file-name literal or by its keys is not
 * flagged when every such save holds host data only (a bare file name
 * matches the same name in any folder). A per-rank file (`f"queue{rank}.pt"`)
 * that this source writes and reads back is restored by its own rank onto
 * its own device: not flagged when its tensors are used in place, flagged
 * when they are restored into the model with `load_state_dict`.
 *
 * A `map_location` that is a parameter defaulting to None and handed
 * straight through (`def load_ckpt(path, map_location=None)`) is None at
 * the calls of that function that give none: reported at the load, naming
 * them. A load whose result feeds a Dataset (or is loaded by a Dataset's own
 * methods) reads samples, not a state beside a model: kept for an exact
 * selection, as a notebook's one-process reload is.
 *
 * Nor are weights that a run saving nothing of a device loads in code that
 * says it runs without a GPU (it asks `torch.cuda.is_available()`, names
 * the CPU as its device): such code must read the file on a machine with
 * no GPU, where one saved from a GPU does not load, so the published file
 * holds host tensors (ol_load_holds_device_tensors, published_for_cpu).
 *
 * Nor is a load the code itself reads as host data: handed to `.numpy()`,
 * `np.asarray`, a plot or `json.dump`, which raise on a CUDA tensor, and
 * never restored, moved or used as a model. Code that does so could not run
 * if the file held GPU tensors.
 *
 * What a load holds is the door's question (ask.h, ol_load_holds_device_tensors);
 * this rule reads the call's arguments and reports.
 */
#include <stdlib.h>
#include <string.h>

#include "rule.h"

/* What every finding says the load does: it costs a whole copy of what was
 * saved from a GPU, on that GPU; the notes say what else is there. */
#define LOAD_COST                                                                                                   \
    "loads each tensor back onto the device that saved it: a checkpoint saved from a GPU lands whole on that GPU, " \
    "in every process that loads it, on top of what is already there"

static void check(ol_check *c)
{
    ol_model *m = c->model;
    const ol_tree *t = c->tree;
    int once = -1;
    if (ol_runs_on_xla_only(m))
        return;
    for (size_t i = 0; i < m->calls.len; i++) {
        const ol_call *call = &m->calls.items[i];
        ol_loader loader = ol_load_kind(m, call->callee);
        if (loader == OL_LOADER_NONE)
            continue;
        ol_nid args = ol_field(t, call->node, OL_F_arguments);
        if (args == OL_NONE || ol_kind_of(t, args) != OL_N_argument_list)
            continue;
        bool splat = false;
        ol_nid first = OL_NONE, last = OL_NONE, location = OL_NONE;
        int positional = 0;
        for (ol_nid a = ol_first_named(t, args); a != OL_NONE; a = ol_next_named(t, a)) {
            ol_kind k = ol_kind_of(t, a);
            last = a;
            if (k == OL_N_list_splat || k == OL_N_dictionary_splat)
                splat = true;
            else if (k == OL_N_keyword_argument) {
                if (ol_text_is(t, ol_field(t, a, OL_F_name), "map_location"))
                    location = ol_field(t, a, OL_F_value);
            } else {
                if (first == OL_NONE)
                    first = a;
                else if (positional == (loader == OL_LOADER_URL ? 2 : 1))
                    location = a; /* load_url(url, model_dir, map_location) */
                positional++;
            }
        }
        if (splat || first == OL_NONE)
            continue;
        /* PyTorch's own published weights are host tensors, whatever map
         * location (None included) the load is given */
        if (loader == OL_LOADER_URL && ol_load_published(m, first))
            continue;
        ol_reasons why = {0};
        /* a parameter that defaults to None, handed straight through: None
         * where the helper is called without it */
        bool defaulted = false;
        if (location != OL_NONE && !ol_value_may_be_none(m, location)) {
            if (!ol_load_location_defaults_none(m, (uint32_t)i, location, &why))
                continue;
            defaulted = true;
        }
        if (!ol_load_holds_device_tensors(m, (uint32_t)i, first, &why))
            continue;
        /* a notebook of one process restores once, onto the GPU that saved
         * the checkpoint; samples read for a Dataset are data, not a state
         * beside a model; a model restored before it moves to the GPU takes
         * one passing copy: all kept for an exact selection */
        if (once < 0)
            once = ol_load_in_one_session(m);
        bool aside = ol_load_feeds_dataset(m, (uint32_t)i, &why) || ol_load_precedes_move(m, (uint32_t)i, &why) ||
                     ol_load_from_outside_run(m, (uint32_t)i, &why);
        if (location != OL_NONE) {
            char *text = ol_node_str(t, location);
            bool literal = ol_kind_of(t, ol_unparen(t, location)) == OL_N_none;
            uint32_t fn = ol_function_of(m, call->node);
            ol_diag *d;
            if (defaulted)
                d = ol_report_node(c, call->node,
                                   "`%s` defaults to None and is None where `%s()` is called without it; then "
                                   "`torch.load` " LOAD_COST,
                                   text, ol_sym_str(m, m->functions.items[fn].name));
            else
                d = ol_report_node(c, call->node, "`map_location%s%s` %s, and then `torch.load` " LOAD_COST,
                                   literal ? "" : "=", literal ? "" : text, literal ? "is None" : "may be None here");
            if (defaulted)
                ol_diag_help(d, "default `%s` to a device (`\"cpu\"`), or give one at every call", text);
            else
                ol_diag_help(d, "give a device on every path, e.g. `\"cpu\"` where `%s` would be None", text);
            ol_diag_because(d, m, &why);
            d->once = once || aside;
            free(text);
            continue;
        }
        const char *q = ol_qualname(m, call->callee);
        const char *shown = strstr(q, "load_url") || strstr(q, "from_url") ? strrchr(q, '.') + 1 : "torch.load";
        ol_diag *d = ol_report_node(c, call->node, "`%s` without `map_location` " LOAD_COST, shown);
        ol_diag_help(d, "load to the CPU and move what you need: `torch.load(path, map_location=\"cpu\")`");
        ol_diag_because(d, m, &why);
        d->once = once || aside;
        ol_fix *fix = ol_fix_new(false, "Load onto the CPU");
        if (!ol_load_only_restores_state(m, (uint32_t)i))
            ol_fix_unsafe_because(fix, "what is loaded is used other than through `load_state_dict()`: its "
                                       "tensors (or a pickled model) would now be on the CPU, where the code may "
                                       "expect them on the device they were saved from");
        ol_fix_edit(fix, ol_node_at(t, last)->end, ol_node_at(t, last)->end, ", map_location=\"cpu\"");
        ol_diag_attach_fix(d, fix);
    }
}

const ol_rule ol_rule_oom302 = {
    .code = "OOM302",
    .name = "torch-load-without-map-location",
    .severity = OL_SEV_WARNING,
    .summary = "`torch.load` without `map_location` restores tensors onto the GPU they were saved from.",
    .what = "Flags `torch.load(...)` calls that give no `map_location` (keyword or second positional argument), "
            "or one that may be None: `map_location=None`, a local None on some path (not a branch the source "
            "rules out), or a parameter that defaults to None and is handed straight through where a call of that "
            "function in the file gives none (not one nothing here calls). Not flagged: `**kwargs` calls, files "
            "that run on TPUs through `torch_xla` only, a GradScaler's or an LR scheduler's state, plain data "
            "named for what it is (a vocabulary, a config, parsed arguments, label maps, by name or file name), "
            "and files written with host data only: `x.cpu()`, a state after `net.cpu()`, Python values (also "
            "what `os`, `glob`, `json` or `time` return, a `range`'s numbers, a parameter every call "
            "in the file gives such values, an attribute the class only assigns them (a tensor also written in "
            "place), a constructor's `*args` and `**kwargs`), `torch.tensor` of "
            "Python data, `torch.stack` or `torch.cat` of host tensors, a host function's result, what "
            "safetensors or a `map_location=\"cpu\"` load read, a value moved to the CPU whenever it is on the "
            "GPU (`if v.is_cuda: v = v.cpu()`). The writer is linked by the same path expression, file-name "
            "literal or shape of path (the same f-string or `os.path.join` through a variable, a helper returning "
            "the path), or by the keys the load is read through (`torch.load(p)[\"eigvec\"]` and a saved dict "
            "literal holding them, when no other save here may hold GPU tensors). Linting a directory, the writer "
            "may be another file of the run, linked by a file-name literal (a bare `\"net.pth\"` names any "
            "folder's; two folders are two files), also through the name the path is (a binding, a parameter's "
            "default), or by keys; keys reaching `load_state_dict` never excuse a load. A per-rank file "
            "(`f\"queue{rank}.pt\"`) written and read back here goes back onto its own rank's device and is not "
            "flagged when its tensors are used in place (a memory bank, a queue); restored into the model with "
            "`load_state_dict`, it is. A list or dict is host data while all put into it is; in a file that never "
            "names an accelerator, so are records of its own plain classes (no base but `object`, nothing of "
            "torch inside, given nothing a call it cannot read returned). Nor are loads the code reads as host data (some of it reaches `.numpy()`, "
            "`np.asarray`, a plot, `json.dump`, or a function of the run that does, and none is restored, moved, "
            "called or used as a module). In a script that never names an accelerator, what it saves outside a "
            "function with parameters is host data. A write-back of what a load read counts neither way; a "
            "framework's save (`fabric.save`, `accelerator.save`, `trainer.save_checkpoint`) may hold GPU "
            "tensors. URL "
            "loaders are flagged like `torch.load`, except for PyTorch's model zoo (`download.pytorch.org`, "
            "through torchvision's URL tables or the file's, and a helper's parameter). Nor are weights that a "
            "run of several files saving nothing that may be on a device (no such `torch.save`; no trainer, "
            "checkpoint callback, Accelerate, Fabric or DeepSpeed named) loads in code that says it runs without "
            "a GPU (asks `torch.cuda.is_available()`, names the CPU as its device, or moves data to the CPU only; "
            "no job of several processes): a GPU-saved file would not load there. Reported only when the rule is "
            "selected by its code (`--extend-select OOM302`): a load in a notebook of one process (nothing in it "
            "starts several), which restores once onto the GPU that saved it, and a load whose result feeds a "
            "data set (`TensorDataset(*torch.load(p))`, a Dataset's own load) and is never restored into a model: "
            "samples, not a state beside a model; a load in a file naming no device, in such a run: weights from "
            "outside it, landing at most once, before anything moves the model; and weights restored into a model "
            "that is not on the GPU yet, in a run of one process (moved there only after the load, or built "
            "afresh and not moved since), or, whatever the run, released weights a URL loader fetches into a "
            "model a builder has just made: one passing copy at most, once.",
    .why = "A checkpoint remembers the device of every tensor in it. Loaded without `map_location`, a "
           "checkpoint saved from `cuda:0` is materialised on GPU 0 again, in full (optimizer state and "
           "all), before `load_state_dict` copies what it needs: while the model (and, on a resume, the "
           "optimizer) is already there, so the peak at load is about twice the state. In a job of several "
           "processes every rank does it on GPU 0. GPU 0 runs out of memory at the restore, or keeps a "
           "second copy of the model for the whole run while the loaded object lives.",
    .example = "state = torch.load(\"checkpoint.pt\")\n"
               "model.load_state_dict(state[\"model\"])",
    .instead = "state = torch.load(\"checkpoint.pt\", map_location=\"cpu\")\n"
               "model.load_state_dict(state[\"model\"])",
    .fix = "Adds `map_location=\"cpu\"`. Safe where what is loaded only reaches `load_state_dict` (directly, "
           "or through a checkpoint dict whose other reads are bookkeeping such as `ckpt[\"epoch\"]`): it "
           "copies the values onto the model's own devices. Unsafe elsewhere: a pickled model or a tensor "
           "used as loaded would now be on the CPU.",
    .fix_safety = "Safe when what is loaded only reaches `load_state_dict()` (directly, or through a "
                  "checkpoint dict whose other reads are bookkeeping such as `ckpt[\"epoch\"]`): "
                  "`load_state_dict()` copies the values onto the model's own devices, so the result is the "
                  "same. Unsafe otherwise: a pickled model or a tensor used as loaded would now be on the CPU, "
                  "where the code may expect it on a GPU.",
    .tags = "memory,checkpointing",
    .precision = "very-high",
    .check = check,
};
