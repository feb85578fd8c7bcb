/*
 * probe_script.c - `oomlint probe --script train.py`: lint the script, run
 * it under probe/wrapper.py for --steps optimizer steps, and say for each
 * finding whether what it warns about happens in this run.
 *
 * The wrapper reports after every step the saved tensors alive by the user
 * line that saved them, the names in the user's frames that keep autograd
 * graphs reachable (with the nodes and saved bytes behind each and the line
 * that last changed them), and on CUDA the allocator's live blocks by the
 * line that allocated them. Here each of those series is fitted (slope after
 * warm-up) and a series grows when it gains at least half an autograd node
 * or more than 512 bytes per step and ends above where it started. A finding
 * is confirmed when something grows at its line; OOM103 (retain_graph=True)
 * by what its backward kept, growing or not (then a peak); growth elsewhere
 * is listed as growth at lines no rule flagged. Rules whose cost is a peak
 * or time rather than growth say so, and point at `oomlint probe --rules
 * CODE`. A run that ends before --steps is reported with how it ended (its
 * exit status, the last step it reached) and fails the probe unless the
 * script finished or exited with status 0.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "config.h"
#include "emit.h"
#include "lint.h"
#include "probe_internal.h"
#include "rule.h"

/* One thing followed over the steps: a holder, a line's saved bytes, a
 * line's device allocations, what a line created that is still alive, or
 * what a backward(retain_graph=True) kept. */
typedef struct track {
    int kind;           /* TRACK_HOLDER, TRACK_SITE, TRACK_DEVICE */
    char *name;         /* holder name, or NULL */
    char *file;         /* the line's file (relative to the script's folder), or NULL */
    long line;          /* 0 when unknown */
    ol_dvec bytes, nodes;         /* what it keeps reachable, in full */
    ol_dvec own_bytes, own_nodes; /* what only it (the most specific holder) keeps */
    /* results */
    double bytes_slope, nodes_slope;
    bool grows;
    bool matched;       /* explained by a finding */
    char *held_by;      /* TRACK_ALLOC, _KEPT, _RETAINED: the name that keeps most of it, at the last step */
} track;

/* TRACK_ALLOC: live tensors (not parameters, gradients, optimizer state or
 * kept for backward) by the line that created them (CPU runs); TRACK_KEPT:
 * the tensors kept for backward, by the line that created them (CPU runs);
 * TRACK_RETAINED: what a backward(retain_graph=True) used and kept, by that
 * backward's line (OOM103's). */
enum { TRACK_HOLDER, TRACK_SITE, TRACK_DEVICE, TRACK_ALLOC, TRACK_KEPT, TRACK_RETAINED };

/* The parts of the budget, in the order they are counted and stacked. */
enum { PART_PARAMS, PART_GRADS, PART_OPTIM, PART_SAVED, PART_OTHER, PART_COUNT };
static const char *const part_keys[PART_COUNT] = {"parameters", "gradients", "optimizer", "saved", "other"};
static const char *const part_names[PART_COUNT] = {"parameters", "gradients", "optimizer state",
                                                   "kept for backward", "other live tensors"};
static const char *const part_short[PART_COUNT] = {"params", "grads", "optim", "saved", "other"};
static const char *const part_colors[PART_COUNT] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd"};

/* A census of live tensor storages at one instant of each step: when
 * backward() starts (the most alive) or when the optimizer step ends. */
typedef struct budget_series {
    ol_dvec part[PART_COUNT];
    ol_dvec total, measured;
    ol_dvec other_batch;        /* of the other tensors, those whose leading size is the batch's; NaN: unknown */
} budget_series;

typedef struct script_run {
    ol_probe_env *env;
    const char *script_name; /* the file name the wrapper reports for the script */
    OL_VEC(track *) tracks;
    ol_dvec saved, rss, time, cuda;
    ol_dvec heap;               /* the C allocator's bytes in use (glibc), per step */
    budget_series at_backward, at_end;
    double batch;               /* the leading size of the outermost module's input */
    bool cuda_mapped, heap_counters;
    char *autocast;             /* "off" when CUDA autocast was mapped away */
    double device_memory;       /* the GPU's, from torch */
    cJSON *mapped;              /* [{what, count}] the mapped CUDA uses */
    char *snapshot_error;
    bool snapshot_reported;
    size_t steps;
    char *torch;
    char *end_reason;
    char *end_error;
    double end_status;          /* the script's exit status where it chose one (sys.exit, os._exit) */
    bool ended;
} script_run;

static track *track_get(script_run *sr, int kind, const char *name, const char *file, long line)
{
    for (size_t i = 0; i < sr->tracks.len; i++) {
        track *t = sr->tracks.items[i];
        if (t->kind != kind)
            continue;
        if (kind == TRACK_HOLDER ? strcmp(t->name, name) == 0
                                 : (t->line == line && strcmp(t->file ? t->file : "", file ? file : "") == 0))
            return t;
    }
    track *t = ol_xcalloc(1, sizeof *t);
    t->kind = kind;
    t->name = name ? ol_xstrdup(name) : NULL;
    t->file = file ? ol_xstrdup(file) : NULL;
    t->line = line;
    ol_vec_push(&sr->tracks, t);
    return t;
}

/* Pads a series with zeros up to the current step (absent = holds nothing). */
static void pad(ol_dvec *v, size_t n)
{
    while (v->len < n)
        ol_vec_push(v, 0.0);
}

static const char *jstr(const cJSON *o, const char *k)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

static double jnum(const cJSON *o, const char *k)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}

static void add_sites(script_run *sr, const cJSON *arr, int kind, size_t step)
{
    const cJSON *it;
    cJSON_ArrayForEach(it, arr)
    {
        const char *file = jstr(it, "file");
        double line = jnum(it, "line"), bytes = jnum(it, "bytes");
        if (!file || !isfinite(line) || !isfinite(bytes))
            continue;
        track *t = track_get(sr, kind, NULL, file, (long)line);
        if (kind == TRACK_ALLOC || kind == TRACK_KEPT || kind == TRACK_RETAINED) {
            const char *held = jstr(it, "held_by");
            free(t->held_by);
            t->held_by = held ? ol_xstrdup(held) : NULL;
        }
        pad(&t->bytes, step - 1);
        pad(&t->nodes, step - 1);
        pad(&t->own_bytes, step - 1);
        pad(&t->own_nodes, step - 1);
        ol_vec_push(&t->bytes, bytes);
        ol_vec_push(&t->nodes, 0.0);
        ol_vec_push(&t->own_bytes, bytes);
        ol_vec_push(&t->own_nodes, 0.0);
    }
}

/* One instant's census; NaN for every part where the step had none. */
static void take_budget(budget_series *b, const cJSON *o)
{
    for (int k = 0; k < PART_COUNT; k++)
        ol_vec_push(&b->part[k], cJSON_IsObject(o) ? jnum(o, part_keys[k]) : NAN);
    ol_vec_push(&b->total, cJSON_IsObject(o) ? jnum(o, "total") : NAN);
    ol_vec_push(&b->measured, cJSON_IsObject(o) ? jnum(o, "measured") : NAN);
    ol_vec_push(&b->other_batch, cJSON_IsObject(o) ? jnum(o, "other_batch") : NAN);
}

static void take_mapped(script_run *sr, const cJSON *rec)
{
    const cJSON *m = cJSON_GetObjectItemCaseSensitive(rec, "mapped");
    if (!cJSON_IsArray(m))
        return;
    cJSON_Delete(sr->mapped);
    sr->mapped = cJSON_Duplicate(m, true);
}

static void budget_free(budget_series *b)
{
    for (int k = 0; k < PART_COUNT; k++)
        ol_vec_free(&b->part[k]);
    ol_vec_free(&b->total);
    ol_vec_free(&b->measured);
    ol_vec_free(&b->other_batch);
}

static bool script_record(void *ctx, ol_child *c, const cJSON *rec, const char **why)
{
    script_run *sr = ctx;
    (void)c;
    const char *t = jstr(rec, "t");
    if (strcmp(t, "start") == 0) {
        const char *torch = jstr(rec, "torch");
        free(sr->torch);
        sr->torch = ol_xstrdup(torch ? torch : "?");
        sr->cuda_mapped = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(rec, "cuda_mapped"));
        sr->heap_counters = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(rec, "heap_counters"));
        const char *autocast = jstr(rec, "autocast");
        free(sr->autocast);
        sr->autocast = autocast ? ol_xstrdup(autocast) : NULL;
        sr->device_memory = jnum(rec, "device_memory");
        return true;
    }
    if (strcmp(t, "end") == 0) {
        sr->ended = true;
        const char *reason = jstr(rec, "reason"), *error = jstr(rec, "error");
        free(sr->end_reason);
        free(sr->end_error);
        sr->end_reason = ol_xstrdup(reason ? reason : "");
        sr->end_error = error ? ol_xstrdup(error) : NULL;
        sr->end_status = jnum(rec, "status");
        take_mapped(sr, rec);
        if (cJSON_HasObjectItem(rec, "snapshot_error")) {
            const char *se = jstr(rec, "snapshot_error");
            sr->snapshot_reported = true;
            free(sr->snapshot_error);
            sr->snapshot_error = se ? ol_xstrdup(se) : NULL;
        }
        return true;
    }
    if (strcmp(t, "step") != 0) {
        *why = "an unknown record type";
        return false;
    }
    double step = jnum(rec, "step");
    if (!isfinite(step) || step != (double)(sr->steps + 1)) {
        *why = "a step record out of order";
        return false;
    }
    sr->steps++;
    ol_vec_push(&sr->saved, jnum(rec, "saved_bytes"));
    ol_vec_push(&sr->rss, jnum(rec, "rss_bytes"));
    ol_vec_push(&sr->time, jnum(rec, "time_s"));
    ol_vec_push(&sr->cuda, jnum(rec, "cuda_allocated"));
    ol_vec_push(&sr->heap, jnum(rec, "heap_bytes"));
    take_budget(&sr->at_backward, cJSON_GetObjectItemCaseSensitive(rec, "budget_backward"));
    take_budget(&sr->at_end, cJSON_GetObjectItemCaseSensitive(rec, "budget_end"));
    double batch = jnum(rec, "batch");
    if (isfinite(batch) && batch > 0)
        sr->batch = batch;
    take_mapped(sr, rec);
    const cJSON *it;
    cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(rec, "holders"))
    {
        const char *name = jstr(it, "name");
        if (!name)
            continue;
        track *h = track_get(sr, TRACK_HOLDER, name, NULL, 0);
        pad(&h->bytes, sr->steps - 1);
        pad(&h->nodes, sr->steps - 1);
        pad(&h->own_bytes, sr->steps - 1);
        pad(&h->own_nodes, sr->steps - 1);
        ol_vec_push(&h->bytes, jnum(it, "bytes"));
        ol_vec_push(&h->nodes, jnum(it, "nodes"));
        ol_vec_push(&h->own_bytes, jnum(it, "own_bytes"));
        ol_vec_push(&h->own_nodes, jnum(it, "own_nodes"));
        /* the line that changes it, else the line that saved most of what it keeps */
        const char *file = jstr(it, "file");
        double line = jnum(it, "line");
        if (!file || !isfinite(line)) {
            file = jstr(it, "site_file");
            line = jnum(it, "site_line");
        }
        if (file && isfinite(line) && (h->line == 0 || jstr(it, "file"))) {
            free(h->file);
            h->file = ol_xstrdup(file);
            h->line = (long)line;
        }
    }
    add_sites(sr, cJSON_GetObjectItemCaseSensitive(rec, "sites"), TRACK_SITE, sr->steps);
    add_sites(sr, cJSON_GetObjectItemCaseSensitive(rec, "cuda_sites"), TRACK_DEVICE, sr->steps);
    add_sites(sr, cJSON_GetObjectItemCaseSensitive(rec, "alloc_sites"), TRACK_ALLOC, sr->steps);
    add_sites(sr, cJSON_GetObjectItemCaseSensitive(rec, "kept_sites"), TRACK_KEPT, sr->steps);
    add_sites(sr, cJSON_GetObjectItemCaseSensitive(rec, "retained"), TRACK_RETAINED, sr->steps);
    ol_progress(sr->env, "running %s: step %zu/%d", sr->script_name, sr->steps, sr->env->opts->steps);
    return true;
}

static void fit(script_run *sr)
{
    size_t w = ol_stat_warmup(sr->steps);
    for (size_t i = 0; i < sr->tracks.len; i++) {
        track *t = sr->tracks.items[i];
        pad(&t->bytes, sr->steps);
        pad(&t->nodes, sr->steps);
        pad(&t->own_bytes, sr->steps);
        pad(&t->own_nodes, sr->steps);
        t->bytes_slope = ol_stat_slope(&t->bytes, w);
        t->nodes_slope = t->kind == TRACK_HOLDER ? ol_stat_slope(&t->nodes, w) : 0;
        double own_bytes = ol_stat_slope(&t->own_bytes, w);
        double own_nodes = t->kind == TRACK_HOLDER ? ol_stat_slope(&t->own_nodes, w) : 0;
        double threshold = t->kind == TRACK_DEVICE || t->kind == TRACK_ALLOC || t->kind == TRACK_KEPT ? 4096 : 512;
        size_t first = w < sr->steps ? w : 0;
        /* what it reaches must grow, and so must what only it keeps: a holder
         * that reaches a growing graph through another (`loss` through the
         * carried `hidden`) is not a second culprit */
        bool full = (isfinite(t->bytes_slope) && t->bytes_slope > threshold &&
                     ol_stat_last(&t->bytes) > t->bytes.items[first]) ||
                    (isfinite(t->nodes_slope) && t->nodes_slope >= 0.5 &&
                     ol_stat_last(&t->nodes) > t->nodes.items[first]);
        bool own = (isfinite(own_bytes) && own_bytes > threshold &&
                    ol_stat_last(&t->own_bytes) > t->own_bytes.items[first]) ||
                   (isfinite(own_nodes) && own_nodes >= 0.5 &&
                    ol_stat_last(&t->own_nodes) > t->own_nodes.items[first]);
        t->grows = sr->steps >= 3 && full && own;
        /* tensors created at a line and kept by a name: the name's growth
         * says it; what is kept for backward, by the line that created it:
         * the holders and the lines that saved it say it */
        if ((t->kind == TRACK_ALLOC && t->held_by) || t->kind == TRACK_KEPT)
            t->matched = true;
        if (isfinite(t->bytes_slope) && t->bytes_slope < 0)
            t->bytes_slope = 0;
    }
}

/* Rules whose cost is growth per step: the only ones --script can confirm at a line. */
static bool growth_rule(const char *code)
{
    static const char *const codes[] = {"OOM101", "OOM102", "OOM105", "OOM106"};
    for (size_t i = 0; i < OL_ARRAY_LEN(codes); i++)
        if (strcmp(codes[i], code) == 0)
            return true;
    return false;
}

typedef struct finding finding;
struct finding {
    const ol_rule *rule;
    uint32_t line, col;
    double bytes, nodes;
    bool confirmed;
    const char *held_by;
    double kept;        /* OOM103: bytes its backward kept, alive at the last step */
};

/* Does finding f account for track t: confirmed on the name that keeps
 * it, or at its line? Growth a name keeps can belong to several findings
 * (`total += loss` keeps what `backward(retain_graph=True)` did not free:
 * removing either stops it). */
static bool finding_explains(const finding *f, const track *t, const char *script)
{
    if (f->confirmed && t->held_by && f->held_by && strcmp(f->held_by, t->held_by) == 0)
        return true;
    return (long)f->line == t->line && t->file && strcmp(t->file, script) == 0;
}

/* The first finding that accounts for a line's growth, or NULL. */
static const finding *finding_for(const finding *fs, size_t nf, const track *t, const char *script)
{
    for (size_t i = 0; i < nf; i++)
        if (finding_explains(&fs[i], t, script))
            return &fs[i];
    return NULL;
}

/* ": OOM103 at line 15 and OOM101 at line 17", or ": no finding". */
static void findings_text(ol_buf *b, const finding *fs, size_t nf, const track *t, const char *script)
{
    size_t n = 0, count = 0;
    for (size_t i = 0; i < nf; i++)
        count += finding_explains(&fs[i], t, script);
    if (count == 0) {
        ol_buf_puts(b, ": no finding");
        return;
    }
    for (size_t i = 0; i < nf; i++) {
        if (!finding_explains(&fs[i], t, script))
            continue;
        ol_buf_puts(b, n == 0 ? ": " : n + 1 == count ? " and " : ", ");
        ol_buf_printf(b, "%s at line %u", fs[i].rule->code, fs[i].line);
        n++;
    }
}

static void growth_text(ol_buf *b, double bytes, double nodes)
{
    if (bytes > 512) {
        ol_buf_putc(b, '+');
        ol_fmt_bytes(b, bytes);
        if (nodes >= 0.5)
            ol_buf_printf(b, " and +%.1f autograd nodes", nodes);
    } else {
        ol_buf_printf(b, "+%.1f autograd nodes", nodes);
    }
}

static bool end_is(const script_run *sr, const char *reason)
{
    return sr->end_reason && strcmp(sr->end_reason, reason) == 0;
}

/* How a run that did not reach --steps ended, as what follows "the script":
 * what ended it, the exit status where there is one, the last step reached
 * (unless `steps` is false: the caller says there was none) and what the
 * wrapper saw (the call that exited, where). */
static void end_text(const script_run *sr, ol_buf *b, bool steps)
{
    int limit = sr->env->opts->steps;
    const char *detail = sr->end_error;
    if (end_is(sr, "finished")) {
        ol_buf_printf(b, "finished after step %zu, before step %d", sr->steps, limit);
        return;
    }
    if (end_is(sr, "exit") && isfinite(sr->end_status))
        ol_buf_printf(b, "exited with status %.0f", sr->end_status);
    else if (end_is(sr, "error"))
        ol_buf_puts(b, "raised an error");
    else if (end_is(sr, "out_of_scope"))
        ol_buf_puts(b, "stopped");
    else
        ol_buf_puts(b, detail ? detail : "stopped");
    if (steps)
        ol_buf_printf(b, "%s after step %zu of %d", end_is(sr, "killed") || end_is(sr, "timeout") ? "," : "",
                      sr->steps, limit);
    if (end_is(sr, "exit") && detail)
        ol_buf_printf(b, " (%s)", detail);
    if (end_is(sr, "out_of_scope"))
        ol_buf_puts(b, ": what it does is out of scope on the CPU");
}

/* ---- the budget, what grew, and when it runs out ---------------------------------------- */

typedef struct budget_view {
    bool any;
    size_t step;                 /* index of the step with the most memory */
    bool has_backward;
    double back[PART_COUNT], back_total, back_measured;
    double end[PART_COUNT], end_total, end_measured;
    double grown[PART_COUNT], grown_total; /* at the step's end: that step minus the first */
    ol_dvec peak;                /* per step, the higher of the two instants */
    double peak_slope, heap_slope;
    double memory;               /* 0: no size to project against */
    bool memory_is_gpu;
    double fixed, variable, peak_last;
    double oom_step;             /* NaN: does not run out at this rate */
    bool already_over;
    double batch_factor, batch_max;
} budget_view;

static double at(const ol_dvec *v, size_t i)
{
    return i < v->len ? v->items[i] : NAN;
}

static double nz(double v)
{
    return isfinite(v) ? v : 0;
}

/* The bytes of one census that scale with the batch: what is kept for
 * backward, and the other tensors whose leading size is the batch's (all of
 * them where the batch is unknown). */
static double batch_part(const budget_series *s, size_t i)
{
    double other = at(&s->part[PART_OTHER], i), other_batch = at(&s->other_batch, i);
    return nz(at(&s->part[PART_SAVED], i)) + (isfinite(other_batch) ? other_batch : nz(other));
}

static void budget_analyze(const script_run *sr, budget_view *bv)
{
    memset(bv, 0, sizeof *bv);
    bv->oom_step = NAN;
    bv->batch_factor = bv->batch_max = NAN;
    size_t n = sr->steps;
    double best = -1;
    for (size_t i = 0; i < n; i++) {
        double b = at(&sr->at_backward.total, i), e = at(&sr->at_end.total, i);
        double p = isfinite(b) && (!isfinite(e) || b > e) ? b : e;
        ol_vec_push(&bv->peak, p);
        if (isfinite(p) && p > best) {
            best = p;
            bv->step = i;
            bv->any = true;
        }
    }
    if (!bv->any)
        return;
    size_t i = bv->step;
    bv->has_backward = isfinite(at(&sr->at_backward.total, i));
    for (int k = 0; k < PART_COUNT; k++) {
        bv->back[k] = at(&sr->at_backward.part[k], i);
        bv->end[k] = at(&sr->at_end.part[k], i);
        bv->grown[k] = nz(at(&sr->at_end.part[k], i)) - nz(at(&sr->at_end.part[k], 0));
    }
    bv->back_total = at(&sr->at_backward.total, i);
    bv->back_measured = at(&sr->at_backward.measured, i);
    bv->end_total = at(&sr->at_end.total, i);
    bv->end_measured = at(&sr->at_end.measured, i);
    bv->grown_total = nz(at(&sr->at_end.total, i)) - nz(at(&sr->at_end.total, 0));
    size_t w = ol_stat_warmup(n);
    bv->peak_slope = ol_stat_slope(&bv->peak, w);
    bv->heap_slope = ol_stat_slope(&sr->heap, w);
    bv->memory = sr->env->opts->memory;
    if (bv->memory <= 0 && strcmp(sr->env->device, "cuda") == 0 && isfinite(sr->device_memory) &&
        sr->device_memory > 0) {
        bv->memory = sr->device_memory;
        bv->memory_is_gpu = true;
    }
    bv->peak_last = ol_stat_last(&bv->peak);
    /* what does not scale with the batch, at the step's end (its gradients
     * exist then); what does: all else alive when backward starts */
    bv->fixed = nz(bv->end[PART_PARAMS]) + nz(bv->end[PART_GRADS]) + nz(bv->end[PART_OPTIM]);
    /* what scales with the batch: what is kept for backward, and the other
     * tensors whose leading size is the batch's (all of them where the batch
     * is unknown), less what grew of them since step 1 at the same instant
     * of the step: what a leak kept from earlier steps (their logits, a
     * retained graph's saved tensors) is not the batch's, and the step
     * projection counts it */
    const budget_series *vs = bv->has_backward ? &sr->at_backward : &sr->at_end;
    bv->variable = batch_part(vs, i);
    double grown_variable = bv->variable - batch_part(vs, 0);
    if (grown_variable > 0)
        bv->variable -= grown_variable;
    if (bv->memory <= 0)
        return;
    bool grows = isfinite(bv->peak_slope) && bv->peak_slope > 4096 && n >= 3 &&
                 bv->peak_last > at(&bv->peak, w < n ? w : 0);
    if (bv->peak_last >= bv->memory) {
        bv->already_over = true;
        bv->oom_step = (double)n;
    } else if (grows) {
        bv->oom_step = (double)n + ceil((bv->memory - bv->peak_last) / bv->peak_slope);
    }
    if (bv->variable > 0 && bv->memory > bv->fixed) {
        bv->batch_factor = (bv->memory - bv->fixed) / bv->variable;
        if (sr->batch > 0)
            bv->batch_max = floor(sr->batch * bv->batch_factor);
    }
}

/* "1,234,567" */
static void fmt_count(ol_buf *b, double v)
{
    char digits[64];
    snprintf(digits, sizeof digits, "%.0f", v);
    size_t len = strlen(digits);
    for (size_t k = 0; k < len; k++) {
        ol_buf_putc(b, digits[k]);
        if (k + 1 < len && (len - k - 1) % 3 == 0 && digits[k] != '-')
            ol_buf_putc(b, ',');
    }
}

static void cell_bytes(ol_buf *b, double v, bool sign)
{
    if (!isfinite(v)) {
        ol_buf_puts(b, "-");
        return;
    }
    if (sign && v >= 0)
        ol_buf_putc(b, '+');
    ol_fmt_bytes(b, v);
}

static void budget_row(FILE *out, const char *name, double back, double end, double grown, bool has_back,
                       bool show_grown)
{
    ol_buf a = {0}, e = {0}, g = {0};
    if (has_back)
        cell_bytes(&a, back, false);
    else
        ol_buf_puts(&a, "-");
    cell_bytes(&e, end, false);
    if (show_grown)
        cell_bytes(&g, grown, true);
    if (show_grown)
        fprintf(out, "  %-26s %18s %16s %20s\n", name, a.data, e.data, g.data);
    else
        fprintf(out, "  %-26s %18s %16s\n", name, a.data, e.data);
    ol_buf_free(&a);
    ol_buf_free(&e);
    ol_buf_free(&g);
}

static void print_wrapped(FILE *out, const char *indent, const char *text)
{
    /* words to at most 99 columns */
    size_t col = 0, ind = strlen(indent);
    const char *p = text;
    fputs(indent, out);
    col = ind;
    while (*p) {
        while (*p == ' ')
            p++;
        const char *w = p;
        while (*p && *p != ' ')
            p++;
        size_t len = (size_t)(p - w);
        if (!len)
            break;
        if (col > ind && col + 1 + len > 99) {
            fputc('\n', out);
            fputs(indent, out);
            col = ind;
        } else if (col > ind) {
            fputc(' ', out);
            col++;
        }
        fwrite(w, 1, len, out);
        col += len;
    }
    fputc('\n', out);
}

static const char *const needs_gpu_text =
    "cuDNN and cuBLAS workspaces, the CUDA allocator's caching and fragmentation, the CUDA context, "
    "and what mixed precision saves";

static void mapped_text(const script_run *sr, ol_buf *b)
{
    const cJSON *it;
    bool first = true;
    cJSON_ArrayForEach(it, sr->mapped)
    {
        const char *what = jstr(it, "what");
        double count = jnum(it, "count");
        if (!what || !isfinite(count))
            continue;
        ol_buf_printf(b, "%s%s x%.0f", first ? "" : ", ", what, count);
        first = false;
    }
}


static void emit_budget_text(const script_run *sr, const budget_view *bv, const finding *fs, size_t nf,
                             FILE *out, const char *script)
{
    if (!bv->any)
        return;
    bool cpu = strcmp(sr->env->device, "cuda") != 0;
    fprintf(out, "\nMemory budget at step %zu, the step with the most memory (live tensors, each storage once):\n",
            bv->step + 1);
    fprintf(out, "  %-26s %18s %16s %20s\n", "", "backward() starts", "step ends", "grown from step 1");
    for (int k = 0; k < PART_COUNT; k++)
        budget_row(out, part_names[k], bv->back[k], bv->end[k], bv->grown[k], bv->has_backward, true);
    budget_row(out, "total", bv->back_total, bv->end_total, bv->grown_total, bv->has_backward, true);
    budget_row(out, cpu ? "measured: C heap in use" : "measured: memory_allocated", bv->back_measured,
               bv->end_measured, NAN, bv->has_backward, false);
    double meas = isfinite(bv->back_measured) && bv->has_backward ? bv->back_measured : bv->end_measured;
    double tot = bv->has_backward ? bv->back_total : bv->end_total;
    if (isfinite(meas) && meas > 0) {
        ol_buf b = {0};
        ol_buf_printf(&b, "The parts are %.1f%% of the measured total (%s); the rest is ", 100.0 * tot / meas,
                      cpu ? "bytes the C allocator has handed out since the script started, glibc's counters, "
                            "not resident memory"
                          : "torch.cuda.memory_allocated()");
        ol_buf_puts(&b, cpu ? "autograd's nodes, Python's larger objects and torch's own buffers."
                            : "tensors no name of yours reaches (the allocator's own blocks, other threads).");
        print_wrapped(out, "  ", b.data);
        ol_buf_free(&b);
    }
    /* what grew, by the line that made it */
    bool any = false;
    ol_buf b = {0};
    for (size_t i = 0; i < sr->tracks.len; i++) {
        const track *t = sr->tracks.items[i];
        if ((t->kind != TRACK_ALLOC && t->kind != TRACK_KEPT && t->kind != TRACK_DEVICE) || !t->line)
            continue;
        double grown = ol_stat_last(&t->bytes) - t->bytes.items[0];
        if (!(grown > 4096) || !(t->bytes_slope > 0))
            continue;
        if (!any)
            fprintf(out, "Grew from step 1 to step %zu, by the line that made it:\n", sr->steps);
        any = true;
        ol_buf_clear(&b);
        ol_buf_printf(&b, "%s:%ld: ", t->file ? t->file : script, t->line);
        cell_bytes(&b, grown, true);
        ol_buf_puts(&b, " (");
        cell_bytes(&b, t->bytes_slope, true);
        ol_buf_puts(&b, " per step)");
        if (t->held_by)
            ol_buf_printf(&b, ", kept by `%s`", t->held_by);
        findings_text(&b, fs, nf, t, script);
        print_wrapped(out, "  ", b.data);
    }
    double grown_run = nz(ol_stat_last(&sr->at_end.total)) - nz(at(&sr->at_end.total, 0));
    if (!any && grown_run > 4096) {
        /* the parts say what grew; no line of the script created it as far
         * as the run could see (or, on a GPU, the lines need torch 2.0+) */
        ol_buf_clear(&b);
        ol_buf_printf(&b, "Grew from step 1 to step %zu: ", sr->steps);
        cell_bytes(&b, grown_run, true);
        bool first = true;
        for (int k = 0; k < PART_COUNT; k++) {
            double g = nz(ol_stat_last(&sr->at_end.part[k])) - nz(at(&sr->at_end.part[k], 0));
            if (!(g > 4096))
                continue;
            ol_buf_printf(&b, "%s%s ", first ? " (" : ", ", part_names[k]);
            cell_bytes(&b, g, true);
            first = false;
        }
        ol_buf_puts(&b, first ? "" : ")");
        ol_buf_puts(&b, cpu ? "; the run saw no line of yours create it." : "; the lines need torch 2.0 or later.");
        print_wrapped(out, "", b.data);
    }
    if (sr->heap_counters && isfinite(bv->heap_slope)) {
        ol_buf_clear(&b);
        ol_buf_puts(&b, "The C heap in use grows ");
        cell_bytes(&b, bv->heap_slope, true);
        ol_buf_puts(&b, cpu ? " per step (glibc's in-use counters, not resident memory): the CPU's tensors, and "
                              "the autograd nodes kept alive, which stay in host memory on a GPU too."
                            : " per step (glibc's in-use counters, not resident memory): the autograd nodes "
                              "kept alive hold host memory even when their tensors are on the GPU.");
        print_wrapped(out, "", b.data);
    }
    /* when it runs out */
    fputs("\nWhen it runs out", out);
    if (bv->memory <= 0) {
        fputs(": give --memory SIZE (your GPU's, e.g. 24GiB) to project it.\n", out);
        ol_buf_free(&b);
        return;
    }
    ol_buf_clear(&b);
    ol_fmt_bytes(&b, bv->memory);
    fprintf(out, " (against %s, %s):\n", b.data, bv->memory_is_gpu ? "the GPU's memory" : "--memory");
    ol_buf_clear(&b);
    if (bv->already_over) {
        ol_buf_puts(&b, "Already over: the step's peak is ");
        cell_bytes(&b, bv->peak_last, false);
        ol_buf_puts(&b, ".");
    } else if (isfinite(bv->oom_step)) {
        ol_buf_puts(&b, "At step ");
        fmt_count(&b, bv->oom_step);
        ol_buf_puts(&b, " at the current rate: the highest memory of a step grows ");
        cell_bytes(&b, bv->peak_slope, true);
        ol_buf_printf(&b, " per step (least squares after step %zu) from ", ol_stat_warmup(sr->steps));
        cell_bytes(&b, bv->peak_last, false);
        ol_buf_printf(&b, " at step %zu. Assumes growth stays linear.", sr->steps);
    } else {
        ol_buf_puts(&b, "Not from growth: the highest memory of a step does not grow (");
        cell_bytes(&b, isfinite(bv->peak_slope) ? bv->peak_slope : 0, true);
        ol_buf_puts(&b, " per step, under 4 KiB).");
    }
    print_wrapped(out, "  ", b.data);
    ol_buf_clear(&b);
    if (isfinite(bv->batch_factor)) {
        ol_buf_puts(&b, "Largest batch the budget suggests: ");
        if (isfinite(bv->batch_max)) {
            ol_buf_puts(&b, "about ");
            fmt_count(&b, bv->batch_max);
            ol_buf_printf(&b, " (now %.0f, ", sr->batch);
        } else {
            ol_buf_puts(&b, "(");
        }
        ol_buf_printf(&b, "%.1fx). Assumes: parameters, gradients and optimizer state (", bv->batch_factor);
        cell_bytes(&b, bv->fixed, false);
        ol_buf_puts(&b, ") stay; what is kept for backward and the other tensors whose leading size is the "
                        "batch's, when backward starts, less what grew of them since step 1 (");
        cell_bytes(&b, bv->variable, false);
        ol_buf_puts(&b, "), scale with the batch; the batch is the leading size of your outermost module's "
                        "input; nothing else is on the device.");
    } else {
        ol_buf_puts(&b, "Largest batch: the budget cannot say (nothing alive scales with the batch, or the "
                        "parameters, gradients and optimizer state alone exceed the memory).");
    }
    print_wrapped(out, "  ", b.data);
    if (cpu)
        print_wrapped(out, "  ", "Counted: tensors only, measured on the CPU; on a GPU add the CUDA context, "
                                  "workspaces and the allocator's caching, which a CPU run cannot measure.");
    ol_buf_free(&b);
}

static cJSON *parts_json(const double *parts, double total, double measured)
{
    cJSON *o = cJSON_CreateObject();
    for (int k = 0; k < PART_COUNT; k++)
        cJSON_AddNumberToObject(o, part_keys[k], ol_stat_round(nz(parts[k])));
    cJSON_AddNumberToObject(o, "total", ol_stat_round(nz(total)));
    if (isfinite(measured))
        cJSON_AddNumberToObject(o, "measured", ol_stat_round(measured));
    else
        cJSON_AddNullToObject(o, "measured");
    return o;
}

static void budget_json(cJSON *root, const script_run *sr, const budget_view *bv, const finding *fs,
                        size_t nf, const char *script)
{
    bool cpu = strcmp(sr->env->device, "cuda") != 0;
    cJSON *dev = cJSON_AddObjectToObject(root, "cuda_on_cpu");
    cJSON_AddBoolToObject(dev, "mapped", sr->cuda_mapped);
    if (sr->cuda_mapped) {
        cJSON_AddStringToObject(dev, "autocast", sr->autocast ? sr->autocast : "off");
        cJSON_AddStringToObject(dev, "grad_scaler", "disabled");
        cJSON_AddItemToObject(dev, "calls", sr->mapped ? cJSON_Duplicate(sr->mapped, true) : cJSON_CreateArray());
        cJSON_AddStringToObject(dev, "needs_a_gpu", needs_gpu_text);
    }
    if (!bv->any) {
        cJSON_AddNullToObject(root, "budget");
        return;
    }
    cJSON *b = cJSON_AddObjectToObject(root, "budget");
    cJSON_AddNumberToObject(b, "step", (double)(bv->step + 1));
    cJSON_AddStringToObject(b, "unit", "bytes");
    cJSON_AddStringToObject(b, "measured_by", cpu ? "glibc heap in use since the script started (mallinfo2)"
                                                  : "torch.cuda.memory_allocated");
    if (bv->has_backward)
        cJSON_AddItemToObject(b, "at_backward", parts_json(bv->back, bv->back_total, bv->back_measured));
    else
        cJSON_AddNullToObject(b, "at_backward");
    cJSON_AddItemToObject(b, "at_step_end", parts_json(bv->end, bv->end_total, bv->end_measured));
    cJSON_AddItemToObject(b, "grown_since_first_step", parts_json(bv->grown, bv->grown_total, NAN));
    cJSON *per = cJSON_AddArrayToObject(b, "per_step");
    for (size_t i = 0; i < sr->steps; i++) {
        bool back = isfinite(at(&sr->at_backward.total, i)) &&
                    !(at(&sr->at_end.total, i) >= at(&sr->at_backward.total, i));
        const budget_series *s = back ? &sr->at_backward : &sr->at_end;
        double parts[PART_COUNT];
        for (int k = 0; k < PART_COUNT; k++)
            parts[k] = at(&s->part[k], i);
        cJSON *o = parts_json(parts, at(&s->total, i), at(&s->measured, i));
        cJSON_AddStringToObject(o, "at", back ? "backward" : "step_end");
        cJSON_AddItemToArray(per, o);
    }
    cJSON *grew = cJSON_AddArrayToObject(root, "growth_by_line");
    for (size_t i = 0; i < sr->tracks.len; i++) {
        const track *t = sr->tracks.items[i];
        if ((t->kind != TRACK_ALLOC && t->kind != TRACK_KEPT && t->kind != TRACK_DEVICE) || !t->line)
            continue;
        double grown = ol_stat_last(&t->bytes) - t->bytes.items[0];
        if (!(grown > 4096) || !(t->bytes_slope > 0))
            continue;
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "file", t->file ? t->file : "");
        cJSON_AddNumberToObject(o, "line", (double)t->line);
        cJSON_AddNumberToObject(o, "bytes_since_first_step", ol_stat_round(grown));
        cJSON_AddNumberToObject(o, "bytes_per_step", ol_stat_round(t->bytes_slope));
        if (t->held_by)
            cJSON_AddStringToObject(o, "held_by", t->held_by);
        else
            cJSON_AddNullToObject(o, "held_by");
        cJSON_AddStringToObject(o, "part", t->kind == TRACK_KEPT ? "saved" : t->kind == TRACK_ALLOC ? "other" : "device");
        const finding *f = finding_for(fs, nf, t, script);
        if (f) {
            cJSON *fo = cJSON_AddObjectToObject(o, "finding");
            cJSON_AddStringToObject(fo, "code", f->rule->code);
            cJSON_AddNumberToObject(fo, "line", f->line);
        } else {
            cJSON_AddNullToObject(o, "finding");
        }
        cJSON *all = cJSON_AddArrayToObject(o, "findings");
        for (size_t k = 0; k < nf; k++) {
            if (!finding_explains(&fs[k], t, script))
                continue;
            cJSON *fo = cJSON_CreateObject();
            cJSON_AddStringToObject(fo, "code", fs[k].rule->code);
            cJSON_AddNumberToObject(fo, "line", fs[k].line);
            cJSON_AddItemToArray(all, fo);
        }
        cJSON_AddItemToArray(grew, o);
    }
    cJSON *p = cJSON_AddObjectToObject(root, "projection");
    if (bv->memory > 0) {
        cJSON_AddNumberToObject(p, "memory_bytes", ol_stat_round(bv->memory));
        cJSON_AddStringToObject(p, "memory_from", bv->memory_is_gpu ? "gpu" : "--memory");
    } else {
        cJSON_AddNullToObject(p, "memory_bytes");
    }
    cJSON_AddNumberToObject(p, "peak_bytes_last_step", ol_stat_round(nz(bv->peak_last)));
    cJSON_AddNumberToObject(p, "peak_growth_bytes_per_step", ol_stat_round(nz(bv->peak_slope)));
    if (isfinite(bv->oom_step))
        cJSON_AddNumberToObject(p, "out_of_memory_at_step", bv->oom_step);
    else
        cJSON_AddNullToObject(p, "out_of_memory_at_step");
    cJSON_AddNumberToObject(p, "fixed_bytes", ol_stat_round(bv->fixed));
    cJSON_AddNumberToObject(p, "per_batch_bytes", ol_stat_round(bv->variable));
    if (sr->batch > 0)
        cJSON_AddNumberToObject(p, "batch", sr->batch);
    else
        cJSON_AddNullToObject(p, "batch");
    if (isfinite(bv->batch_factor))
        cJSON_AddNumberToObject(p, "batch_factor", ol_stat_round(bv->batch_factor * 100) / 100);
    else
        cJSON_AddNullToObject(p, "batch_factor");
    if (isfinite(bv->batch_max))
        cJSON_AddNumberToObject(p, "largest_batch", bv->batch_max);
    else
        cJSON_AddNullToObject(p, "largest_batch");
    cJSON_AddStringToObject(p, "assumptions",
                            "growth stays linear (least squares after the first fifth of the steps); the peak of a "
                            "step is its larger census (when backward starts, or when the step ends); parameters, "
                            "gradients and optimizer state do not scale with the batch; what is kept for backward "
                            "and the other tensors whose leading size is the batch's, when backward starts, less "
                            "what grew of them since step 1 (a leak is not the batch's), do; the batch is the "
                            "leading size of the outermost module's input; only tensors count: no CUDA context, "
                            "workspaces or allocator caching");
    if (sr->heap_counters && isfinite(bv->heap_slope))
        cJSON_AddNumberToObject(cJSON_GetObjectItemCaseSensitive(root, "total"), "heap_growth_bytes_per_step",
                                ol_stat_round(bv->heap_slope));
}

static bool lint_script(const char *path, ol_file_result *r, ol_buf *err)
{
    ol_grammar grammar;
    if (!ol_grammar_init(&grammar)) {
        ol_buf_puts(err, "the bundled Python grammar is not compatible with the tree-sitter runtime");
        return false;
    }
    ol_config_options copts = {0};
    ol_selection none = {0};
    copts.cli = &none;
    /* A script under tests/ that the user runs to confirm its findings is
     * training code to them: its findings are what the run is checked
     * against. The configuration's own per-file-ignores still apply. */
    copts.test_code_linted = true;
    copts.ran_on_gpu = true; /* a script written for a GPU, whatever device it names */
    ol_resolver resolver;
    ol_settings fallback = {0};
    fallback.ran_on_gpu = true;
    fallback.enabled = ol_xcalloc(ol_rule_count, sizeof(bool));
    ol_selection_resolve(&none, fallback.enabled);
    bool have_resolver = ol_resolver_init(&resolver, &copts);
    ol_input in = {0};
    in.path = (char *)path;
    const ol_settings *settings = &fallback;
    if (have_resolver && !ol_resolver_settings_for(&resolver, &in, &settings)) {
        fprintf(stderr, "oomlint probe: warning: %s; linting with the default rules\n", resolver.error.data);
        settings = &fallback;
    }
    ol_linter lt;
    ol_linter_init(&lt, &grammar, settings);
    ol_lint_input(&lt, &in, NULL, 0, r);
    ol_linter_free(&lt);
    if (have_resolver)
        ol_resolver_free(&resolver);
    free(fallback.enabled);
    ol_grammar_free(&grammar);
    return true;
}

static const char *base_name(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

static void emit_script_json(const script_run *sr, const budget_view *bv, const finding *fs, size_t nf, FILE *out,
                             const char *script)
{
    cJSON *root = cJSON_CreateObject();
    cJSON_AddStringToObject(root, "script", script);
    cJSON_AddStringToObject(root, "device", sr->env->device);
    cJSON_AddStringToObject(root, "torch", sr->torch ? sr->torch : sr->env->py.torch);
    cJSON_AddNumberToObject(root, "steps", (double)sr->steps);
    if (sr->end_error && end_is(sr, "error"))
        cJSON_AddStringToObject(root, "error", sr->end_error);
    cJSON *end = cJSON_AddObjectToObject(root, "end");
    cJSON_AddStringToObject(end, "reason", sr->end_reason ? sr->end_reason : "");
    cJSON_AddNumberToObject(end, "after_step", (double)sr->steps);
    if (end_is(sr, "exit") && isfinite(sr->end_status))
        cJSON_AddNumberToObject(end, "exit_status", sr->end_status);
    else
        cJSON_AddNullToObject(end, "exit_status");
    if (sr->end_error && !end_is(sr, "error"))
        cJSON_AddStringToObject(end, "detail", sr->end_error);
    else
        cJSON_AddNullToObject(end, "detail");
    cJSON *arr = cJSON_AddArrayToObject(root, "findings");
    for (size_t i = 0; i < nf; i++) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "code", fs[i].rule->code);
        cJSON_AddStringToObject(o, "name", fs[i].rule->name);
        cJSON_AddNumberToObject(o, "line", fs[i].line);
        cJSON_AddStringToObject(o, "status", fs[i].confirmed ? "confirmed" : "not observed");
        if (fs[i].confirmed && fs[i].kept > 0)
            cJSON_AddNumberToObject(o, "kept_after_backward_bytes", ol_stat_round(fs[i].kept));
        if (fs[i].confirmed) {
            cJSON_AddNumberToObject(o, "growth_bytes_per_step", ol_stat_round(fs[i].bytes));
            cJSON_AddNumberToObject(o, "growth_nodes_per_step", ol_stat_round(fs[i].nodes * 10) / 10);
            if (fs[i].held_by)
                cJSON_AddStringToObject(o, "held_by", fs[i].held_by);
        } else {
            cJSON_AddNullToObject(o, "growth_bytes_per_step");
            if (!growth_rule(fs[i].rule->code))
                cJSON_AddStringToObject(o, "note", "its cost is peak memory or time, not growth per step");
        }
        cJSON_AddItemToArray(arr, o);
    }
    cJSON *un = cJSON_AddArrayToObject(root, "unflagged");
    for (size_t i = 0; i < sr->tracks.len; i++) {
        const track *t = sr->tracks.items[i];
        if (!t->grows || t->matched)
            continue;
        cJSON *o = cJSON_CreateObject();
        if (t->file)
            cJSON_AddStringToObject(o, "file", t->file);
        if (t->line)
            cJSON_AddNumberToObject(o, "line", (double)t->line);
        else
            cJSON_AddNullToObject(o, "line");
        cJSON_AddNumberToObject(o, "growth_bytes_per_step", ol_stat_round(isfinite(t->bytes_slope) ? t->bytes_slope : 0));
        cJSON_AddNumberToObject(o, "growth_nodes_per_step", ol_stat_round((isfinite(t->nodes_slope) ? t->nodes_slope : 0) * 10) / 10);
        cJSON_AddStringToObject(o, "kind", t->kind == TRACK_HOLDER     ? "graph"
                                           : t->kind == TRACK_SITE     ? "saved"
                                           : t->kind == TRACK_ALLOC    ? "allocated"
                                           : t->kind == TRACK_RETAINED ? "retained"
                                                                       : "device");
        if (t->name)
            cJSON_AddStringToObject(o, "held_by", t->name);
        cJSON_AddItemToArray(un, o);
    }
    size_t w = ol_stat_warmup(sr->steps);
    cJSON *total = cJSON_AddObjectToObject(root, "total");
    double s = ol_stat_slope(&sr->saved, w), r = ol_stat_slope(&sr->rss, w);
    if (isfinite(s))
        cJSON_AddNumberToObject(total, "saved_growth_bytes_per_step", ol_stat_round(s));
    if (isfinite(r))
        cJSON_AddNumberToObject(total, "rss_growth_bytes_per_step", ol_stat_round(r));
    double cu = ol_stat_slope(&sr->cuda, w);
    if (isfinite(cu))
        cJSON_AddNumberToObject(total, "cuda_growth_bytes_per_step", ol_stat_round(cu));
    budget_json(root, sr, bv, fs, nf, script);
    ol_json_print(out, root);
}

static void emit_script_text(const script_run *sr, const budget_view *bv, const finding *fs, size_t nf, FILE *out,
                             const char *script)
{
    fprintf(out, "oomlint probe: ran %s for %zu optimizer step%s with %s (torch %s, %s)\n", script, sr->steps,
            sr->steps == 1 ? "" : "s", sr->env->py.path, sr->torch ? sr->torch : sr->env->py.torch, sr->env->device);
    if (sr->cuda_mapped && cJSON_GetArraySize(sr->mapped) > 0) {
        ol_buf m = {0};
        ol_buf_puts(&m, "CUDA mapped to the CPU (no GPU here): ");
        mapped_text(sr, &m);
        ol_buf_printf(&m, ". CUDA autocast is %s (float32 throughout); GradScaler is disabled.",
                      sr->autocast ? sr->autocast : "off");
        print_wrapped(out, "", m.data);
        ol_buf_clear(&m);
        ol_buf_printf(&m, "Needs a GPU, not measured here: %s.", needs_gpu_text);
        print_wrapped(out, "", m.data);
        ol_buf_free(&m);
    }
    if (sr->end_reason && !end_is(sr, "steps")) {
        ol_buf e = {0};
        ol_buf_puts(&e, "The script ");
        end_text(sr, &e, true);
        ol_buf_puts(&e, end_is(sr, "error") ? "; its traceback ends this report." : ".");
        print_wrapped(out, "", e.data);
        ol_buf_free(&e);
    }
    if (nf == 0)
        fputs("oomlint reports no findings in it.\n", out);
    ol_buf b = {0};
    for (size_t i = 0; i < nf; i++) {
        const finding *f = &fs[i];
        ol_buf_clear(&b);
        if (f->confirmed && f->kept > 0 && !(f->bytes > 512)) {
            /* OOM103 where the kept graph is dropped each step: a peak */
            cell_bytes(&b, f->kept, false);
            fprintf(out,
                    "%s:%u:%u: %s %s: confirmed (keeps %s saved for backward alive after backward at line %u, "
                    "until the graph is dropped: a peak, not growth)\n",
                    script, f->line, f->col, f->rule->code, f->rule->name, b.data, f->line);
        } else if (f->confirmed && f->kept > 0) {
            growth_text(&b, f->bytes, 0);
            fprintf(out, "%s:%u:%u: %s %s: confirmed (%s per step at line %u: saved tensors this backward kept%s%s%s)\n",
                    script, f->line, f->col, f->rule->code, f->rule->name, b.data, f->line,
                    f->held_by ? ", held by `" : "", f->held_by ? f->held_by : "", f->held_by ? "`" : "");
        } else if (f->confirmed) {
            growth_text(&b, f->bytes, f->nodes);
            ol_buf heap = {0};
            if (!(f->bytes > 512) && sr->heap_counters && isfinite(bv->heap_slope) && bv->heap_slope > 0) {
                /* only graph nodes: what they hold is host memory, from the allocator's counters */
                ol_buf_puts(&heap, "; C heap ");
                cell_bytes(&heap, bv->heap_slope, true);
                ol_buf_puts(&heap, " per step in all");
            }
            fprintf(out, "%s:%u:%u: %s %s: confirmed (%s per step at line %u%s%s%s%s)\n", script, f->line, f->col,
                    f->rule->code, f->rule->name, b.data, f->line, f->held_by ? ", held by `" : "",
                    f->held_by ? f->held_by : "", f->held_by ? "`" : "", heap.data ? heap.data : "");
            ol_buf_free(&heap);
        } else if (growth_rule(f->rule->code)) {
            fprintf(out, "%s:%u:%u: %s %s: not observed\n", script, f->line, f->col, f->rule->code, f->rule->name);
        } else {
            fprintf(out,
                    "%s:%u:%u: %s %s: not observed (a peak or time cost: see `oomlint probe --rules %s`)\n",
                    script, f->line, f->col, f->rule->code, f->rule->name, f->rule->code);
        }
    }
    bool any = false;
    for (size_t i = 0; i < sr->tracks.len; i++) {
        const track *t = sr->tracks.items[i];
        if (!t->grows || t->matched)
            continue;
        if (!any)
            fputs("Growth at lines no rule flagged:\n", out);
        any = true;
        ol_buf_clear(&b);
        growth_text(&b, isfinite(t->bytes_slope) ? t->bytes_slope : 0, isfinite(t->nodes_slope) ? t->nodes_slope : 0);
        const char *what = t->kind == TRACK_HOLDER     ? "kept reachable"
                           : t->kind == TRACK_SITE     ? "kept for backward"
                           : t->kind == TRACK_ALLOC    ? "created here and still alive"
                           : t->kind == TRACK_RETAINED ? "kept after backward(retain_graph=True)"
                                                       : "allocated on the device";
        if (t->line)
            fprintf(out, "  %s:%ld: %s per step %s", t->file ? t->file : script, t->line, b.data, what);
        else
            fprintf(out, "  (no line of yours): %s per step %s", b.data, what);
        if (t->name)
            fprintf(out, " by `%s`", t->name);
        fputc('\n', out);
    }
    if (!any)
        fputs("No growth at lines no rule flagged.\n", out);
    emit_budget_text(sr, bv, fs, nf, out, script);
    if (sr->end_error && end_is(sr, "out_of_scope")) {
        ol_buf_clear(&b);
        ol_buf_printf(&b, "Out of scope: %s", sr->end_error);
        print_wrapped(out, "", b.data);
    } else if (sr->end_error && end_is(sr, "error")) {
        fprintf(out, "The script raised an error after step %zu:\n%s", sr->steps, sr->end_error);
    }
    ol_buf_free(&b);
}

/* Is a holder of this name plotted (it grows)? Then what it keeps is in
 * its panel, and a line's panel for the same bytes would show them twice. */
static bool holder_plotted(const script_run *sr, const char *name)
{
    for (size_t i = 0; name && i < sr->tracks.len; i++) {
        const track *t = sr->tracks.items[i];
        if (t->kind == TRACK_HOLDER && t->grows && strcmp(t->name, name) == 0)
            return true;
    }
    return false;
}

/* The plot: the budget per step by part (what), a panel per growing thing
 * that no other panel shows (where), and against --memory, the peak per
 * step with its projection to the step where it runs out (when). Each
 * byte is shown once per view: the budget's "kept for backward" layer is
 * what a separate panel of saved bytes would repeat, and what a plotted
 * holder keeps is not drawn again by the line that created it. */
static bool write_script_plot(const script_run *sr, const budget_view *bv, const finding *fs, size_t nf,
                              const char *script, ol_buf *err)
{
    ol_svg_panels panels = {0};
    budget_series stack = {0};
    ol_dvec proj_x = {0}, proj_y = {0};
    ol_buf memory_label = {0}, oom_label = {0};
    if (bv->any) {
        /* per step, the census with more alive, its parts stacked */
        for (size_t i = 0; i < sr->steps; i++) {
            bool back = isfinite(at(&sr->at_backward.total, i)) &&
                        !(at(&sr->at_end.total, i) >= at(&sr->at_backward.total, i));
            const budget_series *src = back ? &sr->at_backward : &sr->at_end;
            for (int k = 0; k < PART_COUNT; k++)
                ol_vec_push(&stack.part[k], at(&src->part[k], i));
        }
        ol_svg_panel bp = {0};
        bp.title = ol_xstrdup("memory per step, by part");
        bp.unit = ol_xstrdup("bytes");
        bp.stacked = true;
        for (int k = 0; k < PART_COUNT; k++)
            if (ol_stat_max(&stack.part[k], 0) > 0) /* a part that is 0 throughout has no layer to name */
                bp.lines[bp.line_count++] = (ol_svg_line){part_short[k], part_colors[k], &stack.part[k]};
        ol_vec_push(&panels, bp);
    } else if (ol_stat_max(&sr->saved, 0) > 0) {
        /* no census (it failed in the script's process): what is kept for backward, alone */
        ol_svg_panel total = {0};
        total.title = ol_xstrdup("saved for backward");
        total.unit = ol_xstrdup("bytes");
        total.lines[0] = (ol_svg_line){"alive after the step", "#444444", &sr->saved};
        total.line_count = 1;
        ol_vec_push(&panels, total);
    }
    for (size_t i = 0; i < sr->tracks.len && panels.len < 8; i++) {
        const track *t = sr->tracks.items[i];
        if (!t->grows || t->kind == TRACK_KEPT || (t->kind == TRACK_ALLOC && t->matched) ||
            ((t->kind == TRACK_ALLOC || t->kind == TRACK_RETAINED) && holder_plotted(sr, t->held_by)))
            continue;
        ol_svg_panel p = {0};
        bool nodes = t->kind == TRACK_HOLDER && !(t->bytes_slope > 512);
        ol_buf title = {0};
        if (t->line)
            ol_buf_printf(&title, "%s:%ld", t->file ? t->file : script, t->line);
        if (t->name)
            ol_buf_printf(&title, "%s`%s`", title.len ? " " : "", t->name);
        size_t codes = 0;
        for (size_t k = 0; k < nf; k++) {
            bool by_name = fs[k].confirmed && t->name && fs[k].held_by && strcmp(fs[k].held_by, t->name) == 0;
            if (!by_name && !finding_explains(&fs[k], t, script))
                continue;
            ol_buf_printf(&title, "%s%s", codes++ ? ", " : ": ", fs[k].rule->code);
        }
        p.title = ol_buf_take(&title);
        p.unit = ol_xstrdup(nodes ? "nodes" : "bytes");
        p.lines[0] = (ol_svg_line){nodes ? "autograd nodes kept" : "bytes kept", "#d62728", nodes ? &t->nodes : &t->bytes};
        p.line_count = 1;
        ol_vec_push(&panels, p);
    }
    if (bv->any && bv->memory > 0) {
        ol_svg_panel p = {0};
        ol_buf_puts(&memory_label, bv->memory_is_gpu ? "the GPU's " : "--memory ");
        ol_fmt_bytes(&memory_label, bv->memory);
        p.title = ol_xstrdup(isfinite(bv->oom_step) ? "when it runs out" : "when it runs out: not at this rate");
        p.unit = ol_xstrdup("bytes");
        p.lines[0] = (ol_svg_line){"highest per step", "#444444", &bv->peak};
        p.line_count = 1;
        p.hline = (ol_svg_mark){memory_label.data, "memory", bv->memory};
        if (isfinite(bv->oom_step)) {
            /* the measured rate, from the last step to the memory's end */
            ol_vec_push(&proj_x, (double)sr->steps);
            ol_vec_push(&proj_x, bv->oom_step);
            ol_vec_push(&proj_y, bv->peak_last);
            ol_vec_push(&proj_y, bv->already_over ? bv->peak_last : bv->memory);
            p.lines[1] = (ol_svg_line){"at the current rate", "#444444", &proj_y};
            p.line_x[1] = &proj_x;
            p.line_dashed[1] = true;
            p.line_count = 2;
            ol_buf_puts(&oom_label, bv->already_over ? "over it at step " : "runs out at step ");
            fmt_count(&oom_label, bv->oom_step);
            p.vline = (ol_svg_mark){oom_label.data, "run-out", bv->oom_step};
        }
        ol_vec_push(&panels, p);
    }
    char *title = ol_xasprintf("oomlint probe --script %s: where the memory goes, per optimizer step", script);
    ol_buf svg = {0};
    ol_svg_render(&svg, title, &panels);
    bool ok = ol_write_file_atomic(sr->env->opts->plot, svg.data, svg.len, err);
    ol_buf_free(&svg);
    free(title);
    ol_svg_panels_free(&panels);
    budget_free(&stack);
    ol_vec_free(&proj_x);
    ol_vec_free(&proj_y);
    ol_buf_free(&memory_label);
    ol_buf_free(&oom_label);
    return ok;
}

int ol_probe_script(ol_probe_env *env)
{
    const ol_probe_opts *o = env->opts;
    ol_file_result lint;
    ol_buf err = {0};
    if (!lint_script(o->script, &lint, &err)) {
        fprintf(stderr, "oomlint probe: error: %s\n", err.data);
        ol_buf_free(&err);
        return 2;
    }
    script_run sr = {0};
    sr.env = env;
    sr.script_name = base_name(o->script);
    fprintf(stderr, "oomlint probe: running %s with %s: this runs your code, until %d optimizer steps\n", o->script,
            env->py.path, o->steps);
    char *wrapper = ol_xasprintf("%s/wrapper.py", env->dir);
    char steps[32];
    snprintf(steps, sizeof steps, "%d", o->steps);
    char memory[64];
    snprintf(memory, sizeof memory, "%.0f", o->memory);
    bool map = strcmp(env->device, "cpu") == 0;
    char **argv = ol_argv_new(env->py.path, wrapper, "--fd", "3", "--steps", steps, "--device", env->device,
                              "--map-cuda", map ? "1" : "0", "--memory", memory, "--script", o->script,
                              (const char *)NULL);
    if (o->snapshot) {
        ol_argv_push(&argv, "--snapshot");
        ol_argv_push(&argv, o->snapshot);
    }
    ol_argv_push(&argv, "--");
    for (int i = 0; i < o->script_argc; i++)
        ol_argv_push(&argv, o->script_args[i]);
    free(wrapper);
    ol_child c;
    ol_child_init(&c, argv, &sr);
    c.on_record = script_record;
    ol_child *kids[] = {&c};
    ol_progress(env, "running %s", sr.script_name);
    ol_children_run(env, kids, 1, 1, o->timeout_s);
    ol_progress_clear(env);
    int status = 0;
    if (env->interrupted)
        goto done; /* said and answered 130 by ol_probe_main */
    ol_buf line = {0};
    if (c.error || !sr.ended) {
        /* it ended without reporting its end: killed, timed out, or gone by
         * an exit Python does not see (C's exit() or _exit() in native code) */
        free(sr.end_reason);
        free(sr.end_error);
        sr.end_reason = ol_xstrdup(c.status == OL_CHILD_TIMEOUT ? "timeout" : c.error ? "killed" : "exit");
        sr.end_status = c.error ? NAN : (double)c.exit_code;
        sr.end_error = ol_xstrdup(c.error ? c.error : "without reporting its end: it left outside Python's own exit");
        const char *last = ol_child_last_line(&c, &line);
        ol_buf why = {0};
        end_text(&sr, &why, sr.steps > 0);
        fprintf(stderr, "oomlint probe: error: the run of %s %s%s%s\n", o->script, why.data, *last ? ": " : "", last);
        ol_buf_free(&why);
        status = 1;
        if (sr.steps == 0) {
            ol_buf_free(&line);
            goto done;
        }
    }
    ol_buf_free(&line);
    if (sr.steps == 0) {
        if (end_is(&sr, "out_of_scope")) {
            fprintf(stderr, "oomlint probe: error: %s: %s\n", o->script, sr.end_error ? sr.end_error : "out of scope");
        } else if (end_is(&sr, "exit")) {
            ol_buf why = {0};
            end_text(&sr, &why, false);
            fprintf(stderr, "oomlint probe: error: %s made no optimizer step: it %s\n", o->script, why.data);
            ol_buf_free(&why);
        } else {
            fprintf(stderr, "oomlint probe: error: %s made no optimizer step%s%s\n", o->script,
                    sr.end_error ? "; it raised:\n" : " (nothing to attribute)", sr.end_error ? sr.end_error : "");
        }
        status = 1;
        goto done;
    }
    fit(&sr);
    /* the findings of the script, each with the growth at its line */
    OL_VEC(finding) fs = {0};
    for (size_t i = 0; i < lint.diags.len; i++) {
        const ol_diag *d = &lint.diags.items[i];
        if (strcmp(d->rule->code, "OOM001") == 0 || strcmp(d->rule->code, "OOM002") == 0)
            continue;
        ol_location loc = ol_diag_location(&lint, d);
        finding f = {d->rule, loc.line, loc.col, 0, 0, false, NULL, 0};
        bool retain_rule = strcmp(d->rule->code, "OOM103") == 0;
        for (size_t k = 0; k < sr.tracks.len; k++) {
            track *t = sr.tracks.items[k];
            if (t->line != (long)loc.line || !t->file || strcmp(t->file, sr.script_name) != 0)
                continue;
            /* OOM103 is about what its backward kept, and only that says it */
            if (retain_rule != (t->kind == TRACK_RETAINED))
                continue;
            if (retain_rule) {
                /* kept after backward, growing or not: that is the rule's claim */
                f.kept += nz(ol_stat_last(&t->bytes));
                f.confirmed = f.confirmed || f.kept > 0;
                if (t->held_by && !f.held_by)
                    f.held_by = t->held_by;
                t->matched = true;
            }
            if (!t->grows)
                continue;
            f.confirmed = true;
            t->matched = true;
            if (isfinite(t->bytes_slope) && t->bytes_slope > 0)
                f.bytes += t->bytes_slope;
            if (isfinite(t->nodes_slope) && t->nodes_slope > 0)
                f.nodes += t->nodes_slope;
            if (t->name && !f.held_by)
                f.held_by = t->name;
        }
        ol_vec_push(&fs, f);
    }
    budget_view bv;
    budget_analyze(&sr, &bv);
    if (o->json)
        emit_script_json(&sr, &bv, fs.items, fs.len, stdout, sr.script_name);
    else
        emit_script_text(&sr, &bv, fs.items, fs.len, stdout, sr.script_name);
    fflush(stdout);
    if (o->plot && !write_script_plot(&sr, &bv, fs.items, fs.len, sr.script_name, &err)) {
        fprintf(stderr, "oomlint probe: error: %s\n", err.data);
        status = 2;
    }
    if (o->snapshot) {
        if (sr.snapshot_reported && !sr.snapshot_error) {
            fprintf(stderr, "oomlint probe: wrote the CUDA memory snapshot %s (open it at https://pytorch.org/memory_viz)\n",
                    o->snapshot);
        } else {
            fprintf(stderr, "oomlint probe: error: %s\n",
                    sr.snapshot_error ? sr.snapshot_error : "the run ended before the snapshot was written");
            status = status ? status : 1;
        }
    }
    /* a run that did not end well fails, after its steps are reported: an
     * error, a non-zero exit status, out of scope */
    if (!status && (end_is(&sr, "out_of_scope") || end_is(&sr, "error") ||
                    (end_is(&sr, "exit") && !(sr.end_status == 0)))) {
        ol_buf why = {0};
        end_text(&sr, &why, true);
        fprintf(stderr, "oomlint probe: error: the run of %s %s\n", o->script, why.data);
        ol_buf_free(&why);
        status = 1;
    }
    ol_vec_free(&bv.peak);
    ol_vec_free(&fs);

done:
    ol_buf_free(&err);
    ol_child_free(&c);
    for (size_t i = 0; i < sr.tracks.len; i++) {
        track *t = sr.tracks.items[i];
        free(t->name);
        free(t->file);
        free(t->held_by);
        ol_vec_free(&t->bytes);
        ol_vec_free(&t->nodes);
        ol_vec_free(&t->own_bytes);
        ol_vec_free(&t->own_nodes);
        free(t);
    }
    ol_vec_free(&sr.tracks);
    ol_vec_free(&sr.saved);
    ol_vec_free(&sr.rss);
    ol_vec_free(&sr.time);
    ol_vec_free(&sr.cuda);
    ol_vec_free(&sr.heap);
    budget_free(&sr.at_backward);
    budget_free(&sr.at_end);
    cJSON_Delete(sr.mapped);
    free(sr.autocast);
    free(sr.snapshot_error);
    free(sr.torch);
    free(sr.end_reason);
    free(sr.end_error);
    ol_file_result_free(&lint);
    return status;
}
