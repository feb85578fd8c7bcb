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
 * flagged when every such save holds host data only. A per-rank file
 * (`f"queue{rank}.pt"`) that this source writes and reads back under the
 * same shape is restored by its own rank onto its own device: not flagged
 * whatever it holds.
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
        if (location == OL_NONE && loader == OL_LOADER_URL && ol_load_published(m, first))
            continue;
        if (location != OL_NONE && !ol_value_may_be_none(m, location))
            continue;
        ol_reasons why = {0};
        if (!ol_load_holds_device_tensors(m, (uint32_t)i, first, &why))
            continue;
        /* a notebook of one process restores once, onto the GPU that saved
         * the checkpoint: kept for an exact selection */
        if (once < 0)
            once = ol_load_in_one_session(m);
        if (location != OL_NONE) {
            char *text = ol_node_str(t, location);
            bool literal = ol_kind_of(t, ol_unparen(t, location)) == OL_N_none;
            ol_diag *d = ol_report_node(c, call->node,
                                        "`map_location%s%s` %s, and then `torch.load` restores tensors onto the "
                                        "device they were saved from (often GPU 0, in every process)",
                                        literal ? "" : "=", literal ? "" : text,
                                        literal ? "is None" : "may be None here");
            ol_diag_help(d, "give a device on every path, e.g. `\"cpu\"` where `%s` would be None", text);
            ol_diag_because(d, m, &why);
            d->once = once;
            free(text);
            continue;
        }
        const char *q = ol_qualname(m, call->callee);
        const char *shown = strstr(q, "load_url") || strstr(q, "from_url") ? strrchr(q, '.') + 1 : "torch.load";
        ol_diag *d = ol_report_node(c, call->node,
                                    "`%s` without `map_location` restores tensors onto the device they were "
                                    "saved from (often GPU 0, in every process)",
                                    shown);
        ol_diag_help(d, "load to the CPU and move what you need: `torch.load(path, map_location=\"cpu\")`");
        ol_diag_because(d, m, &why);
        d->once = once;
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
    .what = "Flags `torch.load(...)` calls that give no `map_location` (keyword or second positional "
            "argument), or give one that may be None (`map_location=None`, or a local that is None on "
            "some path; not a branch the source rules out, as in `\"cpu\" if offload else None` after "
            "`offload = True`). Not flagged: calls that pass `**kwargs`, files that run on TPUs through "
            "`torch_xla` only, loads that only restore a GradScaler's or an LR scheduler's state, "
            "plain data named for what it is (a vocabulary, a config, parsed arguments, label maps; by the "
            "name it is bound to or its file name, also inside `os.path.join(..., \"training_args.bin\")`), "
            "and files the same source writes with host data only (`torch.save(feats.cpu(), path)`, "
            "a tuple of CPU tensors, Python values, `torch.tensor` of Python data, `torch.stack` or "
            "`torch.cat` of host tensors, a sparse tensor of host indices, what a function of the file "
            "returns when all it returns is host data, what safetensors or `torch.load(p, "
            "map_location=\"cpu\")` loaded), found by the same path expression, the same file-name "
            "literal, the same shape of path (a variable bound to the same f-string or `os.path.join` "
            "of the same parts, in another method of the class too; each name of `A if c else B` or of "
            "a loop over `(A, B)`, every one written here; a method of the class naming the file, "
            "`self.ckpt_path(epoch)`, given the same string literals, whatever else; a helper that "
            "saves the file and returns its path, `path = preprocess(...)`), or the keys the load is "
            "read through "
            "(`torch.load(p)[\"eigvec\"]` and a saved dict literal holding `\"eigvec\"`, when no "
            "other save of the source may hold GPU tensors). A file whose path names the process's rank "
            "(`f\"queue{rank}.pt\"`, `trainer.global_rank`), written and read back here under the same "
            "shape, is restored by the rank that wrote it onto its own device, and is not flagged even "
            "when it holds GPU tensors; a file every rank reads, or that one rank reads for all (a loop "
            "over the ranks), still is. Linting a directory, the writer may be another file of the run (a feature "
            "extraction script, a converter): the same file-name literal (also the file name an f-string "
            "ends with, `f\"{out}/feats.pt\"`), or a dict literal holding every "
            "key the load is read through, saved with host data only by every save that matches; a load "
            "whose keys reach `load_state_dict` is a checkpoint and is never excused that way. A list or "
            "dict counts as host data only while all that is appended or stored into it is. Nor are loads "
            "the code reads as host data: some of what they return reaches code that raises on a CUDA "
            "tensor (`.numpy()`, `np.asarray`, `torch.from_numpy`, a matplotlib plot, `json.dump` without "
            "`default=`, or a function of the run that hands its parameter to one of these), and none of "
            "it is restored into a model, moved (`.to()`, `.cuda()`, `.cpu()`), called or used as a "
            "module; another load of the same file in the same function that is read so counts too. "
            "In a script that never puts anything on an accelerator (no CUDA, device, `device_map`, "
            "GPU, TPU, XLA, MPS, Accelerate, Fabric, DeepSpeed or Trainer in its code), what it saves "
            "outside a function with parameters is host data: a CPU tutorial that saves and reloads "
            "its own model is not flagged, nor a sibling script loading that file. A write-back of what "
            "a load read from the same path counts neither way. URL loaders are flagged like "
            "`torch.load`, except for weights from PyTorch's model zoo (`download.pytorch.org`, formerly "
            "`s3.amazonaws.com/pytorch/`), which torchvision loads on CPU-only machines. A load in a notebook that speaks of no other process (no "
            "process group, DDP or FSDP, `mp.spawn`, Accelerate, DeepSpeed, Fabric, torchrun, `rank` or "
            "`world_size`) restores once, in the session and onto the GPU that saved it, and is reported "
            "only when the rule is selected by its code (`--extend-select OOM302`); scripts, which also "
            "run on machines with fewer GPUs or none and in jobs of several processes, are reported by "
            "default.",
    .why = "A checkpoint remembers the device of every tensor in it. Loaded without `map_location`, a "
           "checkpoint saved from `cuda:0` is materialised on GPU 0 again: in every process of a "
           "multi-GPU job, and in full (optimizer state and all) before `load_state_dict` copies what "
           "it needs. GPU 0 runs out of memory, or holds a second copy of the model for the whole run.",
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
