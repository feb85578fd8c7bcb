/*
 * explain_diagnose.c - verdicts: what the numbers of an out-of-memory
 * error, its stack and the log around it say happened, each with the
 * figures it stands on.
 *
 * From the message's figures (explain_log.c; rounded to two decimals by
 * PyTorch, so comparisons allow for that):
 *   - one request near the whole device (half of it or more), at the line
 *     that asks for it, with what such a line usually builds (logits over a
 *     vocabulary, a dataset moved whole, a pairwise product);
 *   - memory held by other processes: total - free - this process's use;
 *     in a container the job's own process is listed as `Process N` (its PID
 *     is another namespace's), recognised by its bytes matching PyTorch's
 *     reserve plus a CUDA context, and not counted as another;
 *   - memory this process holds outside PyTorch's allocator;
 *   - fragmentation: more reserved-but-unallocated than the request;
 *   - a device full of live tensors, where the request itself is small;
 *   - a memory fraction or MPS's high-watermark limit;
 *   - library allocations (cuBLAS, cuDNN, a CUDA call) and the host's own
 *     out-of-memory killer, which have no figures.
 * From the stack: backward, forward, the optimizer's step, evaluation,
 * loading a checkpoint, moving to the device. From the log: memory figures
 * growing from step to step, several errors with PyTorch's allocation
 * rising, or the step the failure came at (the first, or after many).
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "explain_internal.h"

#define GIB ((int64_t)1 << 30)
#define MIB ((int64_t)1 << 20)
/* PyTorch prints sizes with two decimals: up to 0.005 GiB either way */
#define SLACK (6 * MIB)
/* a CUDA context, cuBLAS/cuDNN workspaces and NCCL buffers rarely pass this */
#define CONTEXT_MAX (2 * GIB)

typedef struct size_text {
    char s[32];
} size_text;

static size_text sz(int64_t bytes)
{
    size_text t;
    ol_buf b = {0};
    ol_oom_format_size(&b, bytes);
    snprintf(t.s, sizeof(t.s), "%s", b.data ? b.data : "?");
    ol_buf_free(&b);
    return t;
}

static double pct(int64_t part, int64_t whole)
{
    return whole > 0 ? 100.0 * (double)part / (double)whole : 0;
}

static ol_verdict *add(ol_verdicts *v, const char *kind, const char *fmt, ...) OL_PRINTF(3, 4);

static ol_verdict *add(ol_verdicts *v, const char *kind, const char *fmt, ...)
{
    ol_verdict vd;
    memset(&vd, 0, sizeof(vd));
    vd.kind = kind;
    ol_buf b = {0};
    va_list ap;
    va_start(ap, fmt);
    ol_buf_vprintf(&b, fmt, ap);
    va_end(ap);
    vd.message = ol_buf_take(&b);
    ol_vec_push(v, vd);
    return &ol_vec_last(v);
}

static void advise(ol_verdict *v, const char *fmt, ...) OL_PRINTF(2, 3);

static void advise(ol_verdict *v, const char *fmt, ...)
{
    ol_buf b = {0};
    va_list ap;
    va_start(ap, fmt);
    ol_buf_vprintf(&b, fmt, ap);
    va_end(ap);
    free(v->advice);
    v->advice = ol_buf_take(&b);
}

static void figure(ol_verdict *v, const char *name, int64_t value)
{
    if (value == OL_BYTES_UNKNOWN || v->nfigures == OL_VERDICT_FIGURES)
        return;
    v->figures[v->nfigures].name = name;
    v->figures[v->nfigures].value = value;
    v->nfigures++;
}

void ol_verdict_free(ol_verdict *v)
{
    free(v->message);
    free(v->advice);
}

/* ---- where ---------------------------------------------------------------------- */

/* "train.py:57 (`loss.backward()`)" for a frame, its code from the traceback
 * or from the file on disk. */
static void where(const ol_explain *x, const ol_ex_frame *fr, ol_buf *b)
{
    const ol_oom_frame *f = fr->frame;
    const char *name = fr->file != SIZE_MAX ? x->files.items[fr->file].path : f->file;
    ol_buf_printf(b, "%s:%u", name, f->line);
    uint32_t len = 0;
    const char *code = f->code;
    if (!code[0] && fr->file != SIZE_MAX) {
        const char *line = ol_explain_source_line(x, fr->file, f->line, &len);
        if (line && len < 160) {
            ol_buf_printf(b, " (`%.*s`)", (int)len, line);
            return;
        }
    }
    if (code[0] && strlen(code) < 160)
        ol_buf_printf(b, " (`%s`)", code);
}

static const char *frame_code(const ol_explain *x, const ol_ex_frame *fr, ol_buf *tmp)
{
    if (fr->frame->code[0])
        return fr->frame->code;
    uint32_t len;
    const char *line = ol_explain_source_line(x, fr->file, fr->frame->line, &len);
    ol_buf_clear(tmp);
    if (line)
        ol_buf_add(tmp, line, len);
    return tmp->data ? tmp->data : "";
}

static bool has(const char *s, const char *w)
{
    return strstr(s, w) != NULL;
}

/* ---- phase ---------------------------------------------------------------------- */

static bool name_is(const char *f, const char *const *starts, size_t n_starts, const char *const *ends, size_t n_ends)
{
    size_t len = strlen(f);
    for (size_t i = 0; i < n_starts; i++)
        if (strncmp(f, starts[i], strlen(starts[i])) == 0)
            return true;
    for (size_t i = 0; i < n_ends; i++) {
        size_t k = strlen(ends[i]);
        if (len >= k && strcmp(f + len - k, ends[i]) == 0)
            return true;
    }
    return false;
}

/* 1: an evaluation function's name, 0: a training one's, -1: neither. */
static int eval_name(const char *f)
{
    static const char *const eval_starts[] = {"eval", "valid", "val_", "test", "predict", "infer", "generate",
                                              "sample", "run_eval", "run_valid", "do_eval", "do_predict"};
    static const char *const eval_ends[] = {"_eval", "_evaluate", "_evaluation", "_validate", "_validation",
                                            "_val", "_test", "_predict", "_prediction", "_inference", "_step_eval"};
    static const char *const train_starts[] = {"train", "fit", "do_train", "run_train", "training"};
    static const char *const train_ends[] = {"_train", "_training", "_train_step", "_fit", "_epoch"};
    if (strcmp(f, "val") == 0)
        return 1;
    if (name_is(f, train_starts, OL_ARRAY_LEN(train_starts), train_ends, OL_ARRAY_LEN(train_ends)))
        return 0;
    return name_is(f, eval_starts, OL_ARRAY_LEN(eval_starts), eval_ends, OL_ARRAY_LEN(eval_ends)) ? 1 : -1;
}

static void find_phase(const ol_explain *x, ol_ex_error *e)
{
    bool backward = false, optim = false, load = false, eval = false, to_device = false, forward = false;
    size_t eval_frame = SIZE_MAX;
    ol_buf tmp = {0};
    for (size_t k = 0; k < e->frames.len; k++) {
        const ol_oom_frame *f = e->frames.items[k].frame;
        const char *p = f->file;
        if (has(p, "torch/autograd/") || (has(p, "torch/_tensor.py") && strcmp(f->func, "backward") == 0) ||
            strcmp(f->func, "_engine_run_backward") == 0 || (has(p, "accelerate/") && strcmp(f->func, "backward") == 0))
            backward = true;
        else if (has(p, "torch/optim/") || (has(p, "torch/amp/grad_scaler.py") && strcmp(f->func, "step") == 0))
            optim = true;
        else if (has(p, "torch/serialization.py"))
            load = true;
        else if (has(p, "torch/nn/modules/module.py") && (strcmp(f->func, "_apply") == 0 || strcmp(f->func, "to") == 0 ||
                                                          strcmp(f->func, "cuda") == 0))
            to_device = true;
        else if (has(p, "torch/nn/modules/") || strcmp(f->func, "forward") == 0)
            forward = true;
        if (has(p, "transformers/generation/") ||
            (has(p, "transformers/trainer.py") && (has(f->func, "evaluat") || has(f->func, "predict"))) ||
            (has(p, "lightning") && (has(f->func, "validation") || has(f->func, "_evaluation") || has(f->func, "test_step")))) {
            eval = true;
        }
    }
    /* the innermost user function that says whether it trains or evaluates */
    for (size_t k = e->frames.len; k-- > 0;) {
        if (!e->frames.items[k].user)
            continue;
        int kind = eval_name(e->frames.items[k].frame->func);
        if (kind < 0)
            continue;
        if (kind == 1) {
            eval = true;
            eval_frame = k;
        }
        break;
    }
    if (e->innermost != SIZE_MAX) {
        const char *code = frame_code(x, &e->frames.items[e->innermost], &tmp);
        if (has(code, ".backward("))
            backward = true;
        else if (has(code, "optimizer.step(") || has(code, "optim.step(") || has(code, "opt.step(") ||
                 has(code, "scaler.step("))
            optim = true;
        else if (has(code, "torch.load("))
            load = true;
    }
    ol_buf_free(&tmp);
    e->phase_frame = e->innermost;
    if (backward)
        e->phase = "backward";
    else if (optim)
        e->phase = "optimizer step";
    else if (load)
        e->phase = "loading a checkpoint";
    else if (eval) {
        e->phase = "evaluation";
        if (eval_frame != SIZE_MAX)
            e->phase_frame = eval_frame;
    } else if (to_device)
        e->phase = "moving to the device";
    else if (forward)
        e->phase = "forward";
}

static void phase_verdict(const ol_explain *x, ol_ex_error *e)
{
    if (!e->phase)
        return;
    ol_buf at = {0};
    if (e->phase_frame != SIZE_MAX) {
        ol_buf_puts(&at, " at ");
        if (strcmp(e->phase, "evaluation") == 0)
            ol_buf_printf(&at, "`%s`, ", e->frames.items[e->phase_frame].frame->func);
        where(x, &e->frames.items[e->phase_frame], &at);
    }
    const char *a = at.data ? at.data : "";
    ol_verdict *v;
    if (strcmp(e->phase, "backward") == 0) {
        v = add(&e->verdicts, "backward",
                "It failed in backward%s: the forward pass fitted, but the activations it saved for backward and the "
                "gradients being computed did not.", a);
        advise(v, "keep less for backward: a smaller batch or sequence, activation checkpointing "
                  "(torch.utils.checkpoint), mixed precision (torch.autocast); a graph kept alive from earlier steps "
                  "(OOM101, OOM102, OOM103) makes backward's share larger every step");
    } else if (strcmp(e->phase, "optimizer step") == 0) {
        v = add(&e->verdicts, "optimizer-step",
                "It failed in the optimizer's step%s: an optimizer such as Adam allocates its state on its first step, "
                "two tensors the size of every trained parameter.", a);
        advise(v, "train fewer parameters, or use an optimizer with less state (SGD, Adafactor, 8-bit Adam); "
                  "foreach=False avoids the temporary copies of the multi-tensor step");
    } else if (strcmp(e->phase, "loading a checkpoint") == 0) {
        v = add(&e->verdicts, "loading-checkpoint",
                "It failed loading a checkpoint%s: torch.load restores every tensor onto the device it was saved "
                "from, next to what is already there.", a);
        advise(v, "torch.load(path, map_location=\"cpu\"), then move the model once (OOM302)");
    } else if (strcmp(e->phase, "evaluation") == 0) {
        v = add(&e->verdicts, "evaluation",
                "It failed in evaluation%s: evaluation should hold less than training; when it holds more, its "
                "forward passes keep their graphs (autograd on) or its outputs pile up on the GPU.", a);
        advise(v, "run evaluation under torch.no_grad() or torch.inference_mode() (OOM201), and move what it keeps "
                  "to the CPU or reduce it per batch (OOM107)");
    } else if (strcmp(e->phase, "moving to the device") == 0) {
        v = add(&e->verdicts, "moving-to-device",
                "It failed moving a model or tensor to the device%s: it does not fit next to what is already there.", a);
        advise(v, "load weights in half precision, shard the model, or move only what each step needs");
    } else {
        v = add(&e->verdicts, "forward",
                "It failed in the forward pass%s: one forward's activations did not fit next to what was already "
                "alive.", a);
        advise(v, "a smaller batch or sequence, mixed precision (torch.autocast), or fewer tensors kept from "
                  "earlier steps (see the findings)");
    }
    ol_buf_free(&at);
}

/* ---- the figures ---------------------------------------------------------------- */

static void request_verdict(const ol_explain *x, ol_ex_error *e)
{
    const ol_oom_figures *f = &e->event->fig;
    int64_t limit = f->total >= 0 ? f->total : f->allowed;
    /* a quarter of the device in one tensor is rarely what a step should hold */
    if (f->requested < 0 || limit <= 0 || f->requested * 4 < limit)
        return;
    ol_buf at = {0};
    ol_buf tmp = {0};
    const char *code = "";
    if (e->innermost != SIZE_MAX) {
        ol_buf_puts(&at, " at ");
        where(x, &e->frames.items[e->innermost], &at);
        code = frame_code(x, &e->frames.items[e->innermost], &tmp);
    }
    char dev[32] = "the device";
    if (f->device >= 0)
        snprintf(dev, sizeof(dev), "GPU %d", f->device);
    ol_verdict *v;
    if (f->requested > limit + SLACK)
        v = add(&e->verdicts, "huge-request", "One request asks for %s, more than the whole of %s's %s%s.",
                sz(f->requested).s, dev, sz(limit).s, at.data ? at.data : " (the traceback does not show where)");
    else
        v = add(&e->verdicts, "huge-request", "One request asks for %s, %.0f%% of %s's %s%s.", sz(f->requested).s,
                pct(f->requested, limit), dev, sz(limit).s, at.data ? at.data : " (the traceback does not show where)");
    figure(v, "requested", f->requested);
    figure(v, "total", limit);
    if (has(code, "logits") || has(code, "lm_head") || has(code, "vocab") || has(code, "cross_entropy") ||
        has(code, "log_softmax") || has(code, "CrossEntropy"))
        advise(v, "a full-vocabulary tensor (batch x sequence x vocabulary) is this size: compute the loss over "
                  "chunks of the sequence, or only at the positions that need it; a smaller batch or sequence");
    else if (has(code, ".cuda(") || has(code, ".to("))
        advise(v, "a whole dataset or tensor moved to the device at once: keep it on the CPU and move each batch "
                  "inside the loop (OOM301)");
    else if (has(code, "cdist") || has(code, "matmul") || has(code, "bmm") || has(code, "einsum") || has(code, " @ "))
        advise(v, "a pairwise product grows with the square of its inputs: compute it in blocks");
    else
        advise(v, "no amount of freeing makes one tensor this size fit: find its shape at that line and make it "
                  "smaller (batch, sequence, resolution, or chunks)");
    ol_buf_free(&at);
    ol_buf_free(&tmp);
}

/* The allocation that failed builds logits over a vocabulary: the one
 * tensor of a language model that is batch x sequence x vocabulary. */
static void logits_verdict(const ol_explain *x, ol_ex_error *e)
{
    const ol_oom_figures *f = &e->event->fig;
    if (!e->frames.len || f->requested < 256 * MIB)
        return;
    const ol_ex_frame *last = &ol_vec_last(&e->frames);
    ol_buf tmp = {0};
    const char *code = frame_code(x, last, &tmp);
    if (has(code, "lm_head") || has(code, "logits =") || has(code, "vocab")) {
        ol_buf at = {0};
        const char *slash = strrchr(last->frame->file, '/');
        ol_buf_printf(&at, "%s:%u", slash ? slash + 1 : last->frame->file, last->frame->line);
        ol_verdict *v = add(&e->verdicts, "vocabulary-logits",
                            "The allocation that failed is `%s` (%s): logits over the whole vocabulary, batch x "
                            "sequence x vocabulary, %s at once.",
                            code, at.data, sz(f->requested).s);
        figure(v, "requested", f->requested);
        advise(v, "compute the loss over chunks of the sequence or only at the positions with labels; a shorter "
                  "sequence or a smaller batch; in evaluation keep the predictions (argmax) rather than the logits "
                  "(OOM107)");
        ol_buf_free(&at);
    }
    ol_buf_free(&tmp);
}

static void process_verdicts(ol_ex_error *e)
{
    const ol_oom_figures *f = &e->event->fig;
    if (f->total < 0 || f->free < 0)
        return;
    char dev[32] = "the device";
    if (f->device >= 0)
        snprintf(dev, sizeof(dev), "GPU %d", f->device);
    int64_t self = f->this_process;
    size_t self_proc = SIZE_MAX;
    if (self < 0 && f->nprocs && f->reserved >= 0) {
        /* a container: this job's own process is one of the "Process N" */
        int64_t best = INT64_MAX;
        for (size_t i = 0; i < f->nprocs; i++) {
            int64_t d = f->procs[i].bytes - f->reserved;
            int64_t cap = f->reserved / 10 > CONTEXT_MAX ? f->reserved / 10 : CONTEXT_MAX;
            if (d >= -SLACK && d <= cap && d < best) {
                best = d;
                self_proc = i;
            }
        }
        if (self_proc != SIZE_MAX) {
            self = f->procs[self_proc].bytes;
            ol_verdict *v = add(&e->verdicts, "container-process",
                                "Process %lld, with %s in use, is this job itself seen from a container (another PID "
                                "namespace): its %s match PyTorch's %s reserve plus %s of CUDA context and libraries.",
                                (long long)f->procs[self_proc].pid, sz(self).s, sz(self).s, sz(f->reserved).s,
                                sz(self > f->reserved ? self - f->reserved : 0).s);
            figure(v, "process_bytes", self);
            figure(v, "reserved", f->reserved);
            figure(v, "pid", f->procs[self_proc].pid);
        }
    }
    int64_t used = f->total - f->free;
    if (self >= 0) {
        int64_t others = used - self;
        int64_t listed = 0;
        ol_buf who = {0};
        for (size_t i = 0; i < f->nprocs; i++) {
            if (i == self_proc)
                continue;
            listed += f->procs[i].bytes;
            ol_buf_printf(&who, "%sProcess %lld: %s", who.len ? ", " : "", (long long)f->procs[i].pid,
                          sz(f->procs[i].bytes).s);
        }
        if (listed > others)
            others = listed;
        int64_t threshold = f->total / 33 > 512 * MIB ? f->total / 33 : 512 * MIB;
        if (others >= threshold) {
            ol_verdict *v = add(&e->verdicts, "other-process",
                                "Other processes hold %s of %s's %s (%s); this job's process has %s%s.", sz(others).s,
                                dev, sz(f->total).s, who.len ? who.data : "total - free - this process",
                                sz(self).s,
                                f->requested >= 0 && f->free + others >= f->requested
                                    ? ", and without them the request would have fit"
                                    : "");
            figure(v, "others", others);
            figure(v, "total", f->total);
            figure(v, "free", f->free);
            figure(v, "this_process", self);
            figure(v, "requested", f->requested);
            advise(v, "`nvidia-smi` on the node shows who holds it: another job, a leftover process of an earlier run, "
                      "or a second process of this job on the same GPU (check CUDA_VISIBLE_DEVICES and LOCAL_RANK)");
        }
        ol_buf_free(&who);
        if (f->reserved >= 0 && self - f->reserved > CONTEXT_MAX) {
            ol_verdict *v = add(&e->verdicts, "non-pytorch-memory",
                                "This process holds %s outside PyTorch's allocator (%s in use, %s reserved by "
                                "PyTorch): more than a CUDA context takes.",
                                sz(self - f->reserved).s, sz(self).s, sz(f->reserved).s);
            figure(v, "outside_pytorch", self - f->reserved);
            advise(v, "another library allocating on the GPU (NCCL buffers, cuDNN/cuBLAS workspaces, CuPy, JAX, "
                      "TensorRT, a custom extension), or torch.cuda.caching_allocator_alloc");
        }
    } else if (f->reserved >= 0) {
        int64_t outside = used - f->reserved;
        if (outside > CONTEXT_MAX) {
            ol_verdict *v = add(&e->verdicts, "outside-pytorch",
                                "%s of %s is held outside PyTorch's reserve (total %s, free %s, reserved by PyTorch "
                                "%s): by other processes, or by this one outside PyTorch (CUDA context, NCCL, "
                                "cuBLAS/cuDNN workspaces).",
                                sz(outside).s, dev, sz(f->total).s, sz(f->free).s, sz(f->reserved).s);
            figure(v, "outside_pytorch", outside);
            figure(v, "total", f->total);
            figure(v, "free", f->free);
            figure(v, "reserved", f->reserved);
            advise(v, "`nvidia-smi` on the node shows which processes hold it");
        }
    }
}

/* A 1.x message: 1.x has no expandable segments to offer. */
static bool old_message(const char *message)
{
    return strstr(message, "reserved in total by PyTorch") != NULL || strstr(message, " cached)") != NULL;
}

static void fragmentation_verdict(const ol_explain *x, ol_ex_error *e)
{
    const ol_oom_figures *f = &e->event->fig;
    if (f->requested <= 0 || f->reserved_unallocated < 0)
        return;
    const char *var = f->alloc_conf ? f->alloc_conf : "PYTORCH_CUDA_ALLOC_CONF";
    if (strcmp(var, "PYTORCH_MPS_HIGH_WATERMARK_RATIO") == 0)
        return;
    bool old = f->max_split_advice || old_message(e->event->message);
    ol_verdict *v = NULL;
    /* a few MiB of the reserve unusable is not what filled a device: the gap
     * must be a noticeable part of it (3%) to be worth changing the allocator */
    int64_t noticeable = f->total > 0 ? f->total / 33 : 0;
    if (f->reserved_unallocated < noticeable)
        return;
    if (f->reserved_unallocated + SLACK >= f->requested) {
        v = add(&e->verdicts, "fragmentation",
                "PyTorch holds %s reserved but unallocated, more than the %s it asked for, yet no free block of its "
                "reserve was large enough: the reserve is fragmented.",
                sz(f->reserved_unallocated).s, sz(f->requested).s);
    } else if (f->free >= 0 && f->reserved_unallocated + f->free >= f->requested &&
               f->reserved_unallocated >= f->requested / 4) {
        v = add(&e->verdicts, "fragmentation",
                "The %s free on the device and the %s PyTorch holds reserved but unallocated would together hold the "
                "%s request, but only in pieces.",
                sz(f->free).s, sz(f->reserved_unallocated).s, sz(f->requested).s);
    }
    if (!v)
        return;
    figure(v, "reserved_unallocated", f->reserved_unallocated);
    figure(v, "requested", f->requested);
    figure(v, "free", f->free);
    if (x->have_snapshot && x->snap.largest_inactive > 0) {
        figure(v, "largest_free_block", x->snap.largest_inactive);
    }
    if (old)
        advise(v, "PyTorch 2.1 and later: export %s=expandable_segments:True before the job starts; on earlier "
                  "releases %s=max_split_size_mb:128 keeps large blocks from being split",
                  var, var);
    else
        advise(v, "export %s=expandable_segments:True in the job script, before Python starts: segments then grow "
                  "in place instead of leaving gaps",
                  var);
}

static void full_device_verdict(ol_ex_error *e)
{
    const ol_oom_figures *f = &e->event->fig;
    int64_t limit = f->allowed >= 0 && (f->total < 0 || f->allowed < f->total) ? f->allowed : f->total;
    if (f->allocated < 0 || limit <= 0 || f->requested < 0 || e->event->kind == OL_OOM_MPS)
        return;
    /* most of the device allocated, and a request of a quarter of it or less */
    if (f->requested * 4 > limit || f->allocated * 10 < limit * 7)
        return;
    ol_verdict *v = add(&e->verdicts, "live-tensors",
                        "Live tensors fill the device: PyTorch had %s allocated, %.0f%% of %s, against a request of %s "
                        "(%.0f%%): what filled the device matters more than the line that asked last.",
                        sz(f->allocated).s, pct(f->allocated, limit), sz(limit).s, sz(f->requested).s,
                        pct(f->requested, limit));
    figure(v, "allocated", f->allocated);
    figure(v, "total", limit);
    figure(v, "requested", f->requested);
    advise(v, "see what the ranked lines below keep alive from step to step, and what one step holds (batch, "
              "sequence, precision)");
}

static void limit_verdicts(ol_ex_error *e)
{
    const ol_oom_figures *f = &e->event->fig;
    if (e->event->kind == OL_OOM_MPS) {
        if (f->allowed < 0)
            return;
        ol_verdict *v = add(&e->verdicts, "mps-limit",
                            "MPS had %s allocated and other allocations took %s; with the %s request that passes the "
                            "%s the allocator allows (the GPU shares the Mac's unified memory).",
                            sz(f->allocated).s, sz(f->other_allocations).s, sz(f->requested).s, sz(f->allowed).s);
        figure(v, "allocated", f->allocated);
        figure(v, "other_allocations", f->other_allocations);
        figure(v, "max_allowed", f->allowed);
        figure(v, "requested", f->requested);
        advise(v, "a smaller batch or model first; PYTORCH_MPS_HIGH_WATERMARK_RATIO=0.0 lifts the limit, at the risk "
                  "of the whole system swapping");
        return;
    }
    if (f->allowed >= 0 && f->total >= 0 && f->allowed + SLACK < f->total) {
        ol_verdict *v = add(&e->verdicts, "memory-fraction",
                            "A memory fraction limits PyTorch to %s of the device's %s "
                            "(torch.cuda.set_per_process_memory_fraction).",
                            sz(f->allowed).s, sz(f->total).s);
        figure(v, "allowed", f->allowed);
        figure(v, "total", f->total);
        advise(v, "raise the fraction if nothing else needs the rest of the GPU");
    }
}

static void library_verdicts(ol_ex_error *e)
{
    const char *m = e->event->message;
    ol_verdict *v;
    switch (e->event->kind) {
    case OL_OOM_CUBLAS:
        v = add(&e->verdicts, "library-allocation",
                "cuBLAS could not allocate its handle or workspace (CUBLAS_STATUS_ALLOC_FAILED): the device ran out "
                "outside PyTorch's allocator, which held the rest of it. The causes are those of a CUDA out-of-memory "
                "error; this one carries no figures.");
        advise(v, "reduce what is alive at that point (see the findings), or a smaller batch; if it fails at the first "
                  "matrix product, `nvidia-smi` shows whether another process holds the GPU");
        break;
    case OL_OOM_CUDNN:
        if (strstr(m, "NOT_ENOUGH_WORKSPACE")) {
            v = add(&e->verdicts, "cudnn-workspace",
                    "cuDNN could not get the workspace the algorithm it chose needs (CUDNN_STATUS_NOT_ENOUGH_WORKSPACE).");
            advise(v, "torch.backends.cudnn.benchmark = False lets cuDNN choose algorithms that need less workspace; "
                      "a smaller batch");
        } else {
            v = add(&e->verdicts, "library-allocation",
                    "cuDNN could not allocate (CUDNN_STATUS_ALLOC_FAILED): the device ran out outside PyTorch's "
                    "allocator. The causes are those of a CUDA out-of-memory error; this one carries no figures.");
            advise(v, "reduce what is alive at that point, or a smaller batch; torch.backends.cudnn.benchmark = False "
                      "needs less workspace");
        }
        break;
    case OL_OOM_CUDA_ERROR:
        v = add(&e->verdicts, "cuda-error",
                "A CUDA call outside PyTorch's caching allocator ran out of memory: often creating the CUDA context "
                "on a GPU something else already fills, or a kernel's or library's own allocation.");
        advise(v, "if it happens at start-up, `nvidia-smi` shows what holds the GPU, and CUDA_VISIBLE_DEVICES gives "
                  "each process its own; otherwise, as for any out-of-memory error, reduce what is alive");
        break;
    case OL_OOM_CPU:
        v = add(&e->verdicts, "host-memory",
                "PyTorch ran out of the host's memory (RAM), not the GPU's%s%s.",
                e->event->fig.requested >= 0 ? ", asking for " : "",
                e->event->fig.requested >= 0 ? sz(e->event->fig.requested).s : "");
        figure(v, "requested", e->event->fig.requested);
        advise(v, "a dataset held whole in memory (and copied by each DataLoader worker), a checkpoint loaded whole, "
                  "or tensors kept on the CPU every step; ask the scheduler for more memory if it is needed");
        break;
    case OL_OOM_HOST_KILLED:
        v = add(&e->verdicts, "host-oom-killer",
                "The kernel's out-of-memory killer ended the job: the host's memory (RAM) ran out, not the GPU's.");
        advise(v, "DataLoader workers each holding a copy of the dataset, pinned memory, checkpoints loaded without "
                  "map_location; lower num_workers or ask Slurm for more (--mem)");
        break;
    default:
        break;
    }
}

/* When nothing more particular is known: the request against what was free. */
static void plain_verdict(ol_ex_error *e)
{
    const ol_oom_figures *f = &e->event->fig;
    if (f->requested < 0 || f->free < 0)
        return;
    ol_verdict *v = add(&e->verdicts, "does-not-fit", "The request of %s did not fit in the %s free%s%s%s.",
                        sz(f->requested).s, sz(f->free).s, f->allocated >= 0 ? ", with " : "",
                        f->allocated >= 0 ? sz(f->allocated).s : "", f->allocated >= 0 ? " allocated by PyTorch" : "");
    figure(v, "requested", f->requested);
    figure(v, "free", f->free);
    figure(v, "allocated", f->allocated);
    advise(v, "make what is alive at that point smaller (the findings below), or what one step holds");
}

/* ---- the log around it ---------------------------------------------------------- */

static const ol_oom_series *series_for(const ol_explain *x, const char *rank)
{
    const ol_oom_series *any = NULL;
    for (size_t i = 0; i < x->log.series.len; i++) {
        const ol_oom_series *s = &x->log.series.items[i];
        if (s->rank == rank)
            return s;
        if (!any || s->samples.len > any->samples.len)
            any = s;
    }
    return any;
}

static bool growth_from_samples(const ol_explain *x, ol_ex_error *e)
{
    const ol_oom_series *s = series_for(x, e->event->rank);
    if (!s || s->samples.len < 3)
        return false;
    /* the samples before the failure */
    size_t n = 0;
    while (n < s->samples.len && s->samples.items[n].log_line < e->event->log_line)
        n++;
    if (n < 3)
        return false;
    const ol_oom_sample *first = &s->samples.items[0], *last = &s->samples.items[n - 1];
    size_t rises = 0;
    for (size_t i = 1; i < n; i++)
        rises += s->samples.items[i].bytes >= s->samples.items[i - 1].bytes;
    int64_t grew = last->bytes - first->bytes;
    if (grew >= 256 * MIB && last->bytes * 10 >= first->bytes * 12 && rises * 10 >= (n - 1) * 7) {
        ol_buf per = {0};
        if (last->step > first->step && first->step >= 0)
            ol_buf_printf(&per, ", %s per step", sz(grew / (last->step - first->step)).s);
        ol_verdict *v = add(&e->verdicts, "growth",
                            "Memory grew from step to step: the log's memory figures rose from %s (line %llu) to %s "
                            "(line %llu) over %zu reports before the failure%s.",
                            sz(first->bytes).s, (unsigned long long)first->log_line, sz(last->bytes).s,
                            (unsigned long long)last->log_line, n, per.data ? per.data : "");
        ol_buf_free(&per);
        figure(v, "first_bytes", first->bytes);
        figure(v, "last_bytes", last->bytes);
        figure(v, "first_step", first->step);
        figure(v, "last_step", last->step);
        advise(v, "something keeps each step's tensors: a total or list of graph-carrying tensors (OOM101, OOM102), "
                  "a hidden state carried across batches (OOM105), or outputs kept on the GPU; the ranked lines below "
                  "say where");
        return true;
    }
    int64_t change = grew < 0 ? -grew : grew;
    if (change * 10 < first->bytes) {
        ol_verdict *v = add(&e->verdicts, "steady",
                            "Memory did not grow: the log's memory figures stayed near %s over %zu reports before the "
                            "failure.",
                            sz(last->bytes).s, n);
        figure(v, "last_bytes", last->bytes);
        advise(v, "nothing accumulated; the failing step needed more than the others (a longer sequence, a larger "
                  "batch, evaluation) or a new phase began");
        return true;
    }
    return false;
}

static bool growth_from_errors(const ol_explain *x, ol_ex_error *e)
{
    /* the same rank failed again and again (the error caught, the run going on) */
    int64_t first = OL_BYTES_UNKNOWN, last = OL_BYTES_UNKNOWN;
    size_t count = 0;
    uint64_t first_line = 0, last_line = 0;
    for (size_t i = 0; i < x->errors.len; i++) {
        const ol_oom_event *o = x->errors.items[i].event;
        if (o->rank != e->event->rank || o->fig.allocated < 0)
            continue;
        if (first < 0) {
            first = o->fig.allocated;
            first_line = o->log_line;
        }
        last = o->fig.allocated;
        last_line = o->log_line;
        count++;
    }
    if (count < 2 || last - first < 256 * MIB)
        return false;
    ol_verdict *v = add(&e->verdicts, "growth",
                        "The log holds %zu out-of-memory errors from the same process, PyTorch's allocated memory "
                        "rising from %s (line %llu) to %s (line %llu): the run caught the error and went on while the "
                        "tensors of the failed steps stayed alive.",
                        count, sz(first).s, (unsigned long long)first_line, sz(last).s, (unsigned long long)last_line);
    figure(v, "first_allocated", first);
    figure(v, "last_allocated", last);
    advise(v, "do not retry inside the except block: leave it first, so the failed step's tensors are freed (OOM104)");
    return true;
}

static void step_verdict(ol_ex_error *e)
{
    int64_t step = e->event->step;
    if (step < 0)
        return;
    ol_verdict *v;
    if (step <= 1) {
        v = add(&e->verdicts, "first-step",
                "It failed on the first step: nothing had time to accumulate; one step's model, optimizer state, "
                "activations and batch do not fit.");
        advise(v, "make one step smaller: batch, sequence length, mixed precision, activation checkpointing");
    } else {
        ol_buf of = {0};
        if (e->event->steps_total > 0)
            ol_buf_printf(&of, " of %lld", (long long)e->event->steps_total);
        v = add(&e->verdicts, "late-step",
                "It failed at step %lld%s, after earlier steps had run: either memory grows from step to step, or "
                "this step was larger than the others.",
                (long long)step, of.data ? of.data : "");
        ol_buf_free(&of);
        advise(v, "look for what outlives a step (the findings below); if nothing does, a longer sequence or a larger "
                  "batch at this step");
    }
    figure(v, "step", step);
    figure(v, "steps_total", e->event->steps_total);
}

static void snapshot_verdicts(ol_explain *x)
{
    if (!x->have_snapshot)
        return;
    const ol_mem_snapshot *s = &x->snap;
    int64_t request = s->oom_requested;
    if (request < 0 && x->errors.len)
        request = x->errors.items[x->primary].event->fig.requested;
    if (request > 0 && s->inactive >= request && s->largest_inactive < request) {
        ol_verdict *v = add(&x->snapshot_verdicts, "fragmentation",
                            "The snapshot shows %s free inside PyTorch's reserve, but in blocks of at most %s: none "
                            "holds the %s asked for.",
                            sz(s->inactive).s, sz(s->largest_inactive).s, sz(request).s);
        figure(v, "inactive", s->inactive);
        figure(v, "largest_free_block", s->largest_inactive);
        figure(v, "requested", request);
        advise(v, "export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True before the job starts");
    }
    if (s->alive > 0 && s->unattributed * 2 > s->alive) {
        ol_verdict *v = add(&x->snapshot_verdicts, "no-stacks",
                            "%s of the %s alive have no recorded stack in the user's code.", sz(s->unattributed).s,
                            sz(s->alive).s);
        figure(v, "unattributed", s->unattributed);
        figure(v, "alive", s->alive);
        advise(v, "call torch.cuda.memory._record_memory_history() before the run, so each block keeps the stack "
                  "that allocated it");
    }
}

void ol_explain_diagnose(ol_explain *x)
{
    for (size_t i = 0; i < x->errors.len; i++) {
        ol_ex_error *e = &x->errors.items[i];
        find_phase(x, e);
        /* the most specific first: what the figures prove, then where it
         * failed and how memory got there, then the general picture */
        request_verdict(x, e);
        bool huge = e->verdicts.len > 0;
        process_verdicts(e);
        fragmentation_verdict(x, e);
        limit_verdicts(e);
        library_verdicts(e);
        if (!huge)
            logits_verdict(x, e);
        if (i == x->primary && !growth_from_errors(x, e) && !growth_from_samples(x, e))
            step_verdict(e);
        phase_verdict(x, e);
        /* "the device is full of live tensors" says nothing a more
         * particular verdict has not said better */
        static const char *const particular[] = {"huge-request", "other-process", "outside-pytorch", "fragmentation",
                                                 "memory-fraction", "mps-limit", "growth"};
        bool explained = false;
        for (size_t k = 0; k < e->verdicts.len; k++)
            for (size_t j = 0; j < OL_ARRAY_LEN(particular); j++)
                explained |= strcmp(e->verdicts.items[k].kind, particular[j]) == 0;
        if (!explained)
            full_device_verdict(e);
        if (!e->verdicts.len)
            plain_verdict(e);
    }
    snapshot_verdicts(x);
}
