/*
 * explain_emit.c - the report of `oomlint explain`, as text, JSON or SARIF.
 *
 * Text reads top-down the way the user asks: what failed and where, the
 * verdicts (each with its figures and what to do), the figures as a small
 * table, the user's frames of the traceback, then the findings nearest the
 * failure first, each rendered by the linter's own text emitter (header,
 * code frame, help) under a line saying how it relates to the stack and
 * what the snapshot says it kept alive, then the snapshot's largest lines
 * crossed with the findings, the other errors of the log, and notes.
 *
 * JSON is one object with every parsed figure in bytes, every frame, every
 * verdict with its figures, and every finding (as the linter's JSON writes
 * it, with its relation to the stack added). SARIF is the linter's log with
 * the findings of the files on the stack as results, in rank order, each
 * with its relation in its properties, and the errors and verdicts in the
 * run's properties; results and rules are made by the linter's SARIF
 * emitter, so the log stays what the SARIF tests validate.
 */
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "explain_internal.h"
#include "rule.h"

#define TEXT_FINDINGS 10
#define TEXT_SNAP_LINES 8
#define TEXT_OTHER_ERRORS 12

#define C_RESET "\033[0m"
#define C_BOLD "\033[1m"
#define C_RED "\033[31m"
#define C_CYAN "\033[36m"
#define C_DIM "\033[2m"

typedef struct out_ctx {
    FILE *out;
    bool color;
} out_ctx;

static void put(const out_ctx *o, const char *color, const char *text)
{
    ol_buf b = {0};
    ol_escape_display(&b, text, false);
    if (o->color)
        fprintf(o->out, "%s%s%s", color, b.data ? b.data : "", C_RESET);
    else
        fputs(b.data ? b.data : "", o->out);
    ol_buf_free(&b);
}

static void put_plain(const out_ctx *o, const char *text)
{
    ol_buf b = {0};
    ol_escape_display(&b, text, false);
    fputs(b.data ? b.data : "", o->out);
    ol_buf_free(&b);
}

static void size_str(ol_buf *b, int64_t bytes)
{
    ol_oom_format_size(b, bytes);
}

static const char *file_name(const ol_explain *x, size_t file, const char *fallback)
{
    return file < x->files.len ? x->files.items[file].path : fallback;
}

/* The shim a single finding is rendered through: the file's result with
 * just that finding in it (nothing is copied or freed). */
static ol_file_result one_finding(const ol_explain *x, const ol_ex_finding *fd)
{
    ol_file_result r = x->files.items[fd->file].result;
    r.diags.items = &x->files.items[fd->file].result.diags.items[fd->diag];
    r.diags.len = 1;
    r.diags.cap = 1;
    return r;
}

static const ol_diag *diag_of(const ol_explain *x, const ol_ex_finding *fd)
{
    return &x->files.items[fd->file].result.diags.items[fd->diag];
}

static uint32_t finding_line(const ol_explain *x, const ol_ex_finding *fd)
{
    return ol_source_line_index(&x->files.items[fd->file].result.src, diag_of(x, fd)->start) + 1;
}

/* "on the failing line, train.py:61" and the like. */
static void relation_text(const ol_explain *x, const ol_ex_finding *fd, ol_buf *b)
{
    const char *path = x->files.items[fd->file].path;
    const char *near = fd->frame_depth == 0 ? "the failing line" : "a line of the stack";
    switch (fd->relation) {
    case OL_REL_LINE:
        ol_buf_printf(b, "on %s, %s:%u", near, path, fd->frame_line);
        break;
    case OL_REL_FUNCTION: {
        const ol_line_span *def = ol_explain_enclosing(&x->files.items[fd->file].defs, fd->frame_line);
        ol_buf_printf(b, "in `%s`, a function on the stack (%s:%u)", def && def->name ? def->name : "?", path,
                      fd->frame_line);
        if (fd->in_frame_loop)
            ol_buf_puts(b, ", inside the loop around it");
        break;
    }
    case OL_REL_LOOP:
        ol_buf_printf(b, "in the loop around %s:%u", path, fd->frame_line);
        break;
    case OL_REL_FILE:
        ol_buf_printf(b, "elsewhere in %s, a file on the stack", path);
        break;
    case OL_REL_RUN:
        ol_buf_printf(b, "in %s, another file of the run", path);
        break;
    }
}

static void alive_text(const ol_explain *x, const ol_ex_finding *fd, ol_buf *b)
{
    if (fd->alive_bytes < 0)
        return;
    size_str(b, fd->alive_bytes);
    uint32_t line = finding_line(x, fd);
    ol_buf_printf(b, " alive at the failure was allocated %s", fd->alive_line == line ? "on this line" : "under this code");
    if (fd->alive_line && fd->alive_line != line) {
        uint32_t len;
        const char *code = ol_explain_source_line(x, fd->alive_file, fd->alive_line, &len);
        ol_buf_printf(b, " (most at line %u", fd->alive_line);
        if (code && len < 120)
            ol_buf_printf(b, ", `%.*s`", (int)len, code);
        ol_buf_putc(b, ')');
    }
}

/* ---- text --------------------------------------------------------------------- */

static const char *kind_title(ol_oom_kind k)
{
    switch (k) {
    case OL_OOM_CUDA: return "CUDA out of memory";
    case OL_OOM_CUDA_ASYNC: return "CUDA out of memory (cudaMallocAsync)";
    case OL_OOM_DEVICE: return "device out of memory";
    case OL_OOM_MPS: return "MPS out of memory";
    case OL_OOM_CUBLAS: return "cuBLAS allocation failed";
    case OL_OOM_CUDNN: return "cuDNN allocation failed";
    case OL_OOM_CUDA_ERROR: return "CUDA error: out of memory";
    case OL_OOM_CPU: return "host memory exhausted (DefaultCPUAllocator)";
    case OL_OOM_HOST_KILLED: return "killed by the host's out-of-memory killer";
    }
    return "out of memory";
}

static void title(const ol_explain *x, const ol_ex_error *e, ol_buf *b)
{
    const ol_oom_event *ev = e->event;
    ol_buf_puts(b, kind_title(ev->kind));
    if (ev->fig.device >= 0)
        ol_buf_printf(b, " on GPU %d", ev->fig.device);
    if (ev->rank[0])
        ol_buf_printf(b, " [%s]", ev->rank);
    if (e->innermost != SIZE_MAX) {
        const ol_ex_frame *fr = &e->frames.items[e->innermost];
        ol_buf_printf(b, ", at %s:%u", file_name(x, fr->file, fr->frame->file), fr->frame->line);
        if (fr->frame->func[0])
            ol_buf_printf(b, " in %s", fr->frame->func);
    }
    if (e->phase)
        ol_buf_printf(b, ", during %s", e->phase);
}

static void table_row(const out_ctx *o, const char *name, int64_t v, const char *note)
{
    if (v == OL_BYTES_UNKNOWN)
        return;
    ol_buf b = {0};
    size_str(&b, v);
    fprintf(o->out, "  %-24s %12s", name, b.data);
    if (note && *note)
        fprintf(o->out, "  %s", note);
    fputc('\n', o->out);
    ol_buf_free(&b);
}

static void figures_table(const out_ctx *o, const ol_ex_error *e)
{
    const ol_oom_figures *f = &e->event->fig;
    if (f->requested < 0 && f->total < 0 && f->allocated < 0)
        return;
    fputc('\n', o->out);
    char note[64] = "";
    table_row(o, f->total >= 0 ? "total capacity" : "", f->total, "");
    table_row(o, "free", f->free, "");
    if (f->allowed >= 0)
        table_row(o, e->event->kind == OL_OOM_MPS ? "max allowed" : "allowed (memory fraction)", f->allowed, "");
    table_row(o, "this process", f->this_process, "");
    table_row(o, "allocated by PyTorch", f->allocated, "");
    table_row(o, "  in private pools", f->private_pools, "");
    table_row(o, "reserved, unallocated", f->reserved_unallocated, "");
    table_row(o, "reserved by PyTorch", f->reserved, "");
    table_row(o, "other allocations", f->other_allocations, "");
    if (f->this_process >= 0 && f->reserved >= 0 && f->this_process >= f->reserved)
        table_row(o, "outside PyTorch", f->this_process - f->reserved, "(CUDA context, libraries)");
    for (size_t i = 0; i < f->nprocs; i++) {
        char name[48];
        snprintf(name, sizeof(name), "process %lld", (long long)f->procs[i].pid);
        table_row(o, name, f->procs[i].bytes, "");
    }
    if (f->total >= 0 && f->free >= 0 && f->this_process >= 0)
        table_row(o, "other processes", f->total - f->free - f->this_process > 0 ? f->total - f->free - f->this_process : 0,
                  "(total - free - this process)");
    if (f->requested >= 0 && f->total > 0)
        snprintf(note, sizeof(note), "(%.1f%% of the device)", 100.0 * (double)f->requested / (double)f->total);
    table_row(o, "requested", f->requested, note);
}

static void verdict_text(const out_ctx *o, const ol_verdict *v)
{
    put(o, C_BOLD C_RED, "verdict:");
    fputc(' ', o->out);
    put_plain(o, v->message);
    fputc('\n', o->out);
    if (v->advice) {
        fputs("  = ", o->out);
        put(o, C_BOLD, "do:");
        fputc(' ', o->out);
        put_plain(o, v->advice);
        fputc('\n', o->out);
    }
}

static void traceback_text(const out_ctx *o, const ol_explain *x, const ol_ex_error *e)
{
    if (!e->frames.len) {
        fputs("\nno traceback in the log for this error: the failing line is not known\n", o->out);
        return;
    }
    fputs("\ntraceback (most recent call last), the user's frames:\n", o->out);
    size_t library = 0, wloc = 0, wfunc = 0;
    for (size_t k = 0; k < e->frames.len; k++) {
        const ol_ex_frame *fr = &e->frames.items[k];
        if (!fr->user)
            continue;
        char num[16];
        size_t l = strlen(file_name(x, fr->file, fr->frame->file)) + (size_t)snprintf(num, sizeof(num), ":%u", fr->frame->line);
        size_t f = strlen(fr->frame->func[0] ? fr->frame->func : "?") + 3;
        wloc = l > wloc ? l : wloc;
        wfunc = f > wfunc ? f : wfunc;
    }
    wloc = wloc > 60 ? 60 : wloc;
    wfunc = wfunc > 30 ? 30 : wfunc;
    for (size_t k = 0; k < e->frames.len; k++) {
        const ol_ex_frame *fr = &e->frames.items[k];
        if (!fr->user) {
            library++;
            continue;
        }
        ol_buf b = {0};
        ol_buf_printf(&b, "%s:%u", file_name(x, fr->file, fr->frame->file), fr->frame->line);
        fputs("  ", o->out);
        put_plain(o, b.data);
        fprintf(o->out, "%*s", b.len < wloc ? (int)(wloc - b.len) + 2 : 2, "");
        ol_buf_clear(&b);
        ol_buf_printf(&b, "in %s", fr->frame->func[0] ? fr->frame->func : "?");
        put_plain(o, b.data);
        fprintf(o->out, "%*s", b.len < wfunc ? (int)(wfunc - b.len) + 2 : 2, "");
        uint32_t len = 0;
        const char *code = fr->frame->code;
        ol_buf_clear(&b);
        if (code[0])
            ol_buf_puts(&b, code);
        else if ((code = ol_explain_source_line(x, fr->file, fr->frame->line, &len)) != NULL)
            ol_buf_add(&b, code, len);
        if (b.len)
            put(o, C_DIM, b.data);
        if (k == e->innermost)
            fputs("   <- failed here", o->out);
        if (fr->file == SIZE_MAX)
            fputs("   (not found on disk)", o->out);
        fputc('\n', o->out);
        ol_buf_free(&b);
    }
    if (library)
        fprintf(o->out, "  (%zu frame%s in PyTorch, the standard library and installed packages not shown)\n", library,
                library == 1 ? "" : "s");
    if (e->event->truncated)
        fprintf(o->out, "  (the traceback is truncated%s)\n",
                e->event->frames_dropped ? ": its outermost frames were dropped" : ": its start is not in the log");
}

static void findings_text(const out_ctx *o, const ol_explain *x, const ol_emit_options *eo)
{
    size_t shown = 0, more = 0, run = 0;
    OL_VEC(size_t) run_files = {0};
    for (size_t i = 0; i < x->findings.len; i++) {
        const ol_ex_finding *fd = &x->findings.items[i];
        if (fd->relation == OL_REL_RUN) {
            run++;
            bool seen = false;
            for (size_t k = 0; k < run_files.len; k++)
                seen |= run_files.items[k] == fd->file;
            if (!seen)
                ol_vec_push(&run_files, fd->file);
            continue;
        }
        if (shown == TEXT_FINDINGS) {
            more++;
            continue;
        }
        if (shown == 0)
            fputs("\nwhat to change, nearest the failure first:\n", o->out);
        shown++;
        ol_buf rel = {0};
        ol_buf_printf(&rel, "[%zu] ", shown);
        relation_text(x, fd, &rel);
        if (shown == 1)
            fputc('\n', o->out);
        put(o, C_BOLD C_CYAN, rel.data);
        fputc('\n', o->out);
        ol_buf_free(&rel);
        ol_file_result shim = one_finding(x, fd);
        ol_emit_text_file(o->out, &shim, eo);
        ol_buf alive = {0};
        alive_text(x, fd, &alive);
        if (alive.len) {
            fputs("  = ", o->out);
            put(o, C_BOLD, "snapshot:");
            fputc(' ', o->out);
            put_plain(o, alive.data);
            fputs("\n\n", o->out);

        }
        ol_buf_free(&alive);
    }
    if (shown == 0 && x->files.len)
        fputs("\nno finding in the files on the stack: nothing in this code is known to grow memory\n", o->out);
    if (more)
        fprintf(o->out, "and %zu more finding%s in the files on the stack (--format json lists every one)\n", more,
                more == 1 ? "" : "s");
    if (run)
        fprintf(o->out, "%zu finding%s in %zu other file%s of the run, not on the stack (--format json lists them)\n",
                run, run == 1 ? "" : "s", run_files.len, run_files.len == 1 ? "" : "s");
    ol_vec_free(&run_files);
}

/* The findings a snapshot line relates to: on it, or in the loop around it
 * (at most max, in rank order); their indices in x->findings. */
static size_t snap_related(const ol_explain *x, const ol_ex_snapline *sl, size_t *out, size_t max)
{
    if (sl->file == SIZE_MAX)
        return 0;
    const ol_ex_file *f = &x->files.items[sl->file];
    const ol_line_span *loop = ol_explain_enclosing(&f->loops, sl->line->line);
    size_t n = 0;
    for (size_t i = 0; i < x->findings.len && n < max; i++) {
        const ol_ex_finding *fd = &x->findings.items[i];
        if (fd->file != sl->file)
            continue;
        uint32_t line = finding_line(x, fd);
        if (line == sl->line->line || (loop && loop->first <= line && line <= loop->last))
            out[n++] = i;
    }
    return n;
}

static void snap_findings(const ol_explain *x, const ol_ex_snapline *sl, ol_buf *b)
{
    size_t idx[3];
    size_t n = snap_related(x, sl, idx, 3);
    for (size_t k = 0; k < n; k++) {
        const ol_ex_finding *fd = &x->findings.items[idx[k]];
        const ol_diag *d = diag_of(x, fd);
        uint32_t line = finding_line(x, fd);
        if (line == sl->line->line) {
            ol_buf_printf(b, ", %s", d->rule->code);
            continue;
        }
        uint32_t len;
        const char *code = ol_explain_source_line(x, fd->file, line, &len);
        ol_buf_printf(b, ", %s at line %u", d->rule->code, line);
        if (code && len < 100)
            ol_buf_printf(b, " (`%.*s`)", (int)len, code);
    }
}

static void snapshot_text(const out_ctx *o, const ol_explain *x)
{
    if (!x->have_snapshot)
        return;
    const ol_mem_snapshot *s = &x->snap;
    ol_buf b = {0};
    size_str(&b, s->alive);
    fprintf(o->out, "\nalive at the %s (%s", s->at_oom ? "failure" : "snapshot", x->opts->snapshot_path);
    if (s->device >= 0)
        fprintf(o->out, ", GPU %d", s->device);
    fprintf(o->out, "): %s in %llu block%s", b.data, (unsigned long long)s->alive_blocks, s->alive_blocks == 1 ? "" : "s");
    ol_buf_clear(&b);
    size_str(&b, s->reserved);
    fprintf(o->out, " of %s reserved", b.data);
    if (s->partial)
        fputs(" (read in part: the snapshot is larger than oomlint walks)", o->out);
    fputs(", by the line that allocated them:\n", o->out);
    size_t shown = 0;
    for (size_t i = 0; i < x->snaplines.len && shown < TEXT_SNAP_LINES; i++) {
        const ol_ex_snapline *sl = &x->snaplines.items[i];
        if (!sl->line->leaf)
            continue;
        shown++;
        ol_buf_clear(&b);
        size_str(&b, sl->line->bytes);
        fprintf(o->out, "  %10s  ", b.data);
        ol_buf_clear(&b);
        ol_buf_printf(&b, "%s:%u", file_name(x, sl->file, sl->line->file), sl->line->line);
        uint32_t len;
        const char *code = ol_explain_source_line(x, sl->file, sl->line->line, &len);
        if (code && len < 120)
            ol_buf_printf(&b, " (`%.*s`)", (int)len, code);
        snap_findings(x, sl, &b);
        put_plain(o, b.data);
        fputc('\n', o->out);
    }
    if (!shown)
        fputs("  (no block's stack passes through the user's code)\n", o->out);
    /* the callers whose lines carry findings */
    for (size_t i = 0; i < x->snaplines.len; i++) {
        const ol_ex_snapline *sl = &x->snaplines.items[i];
        if (sl->line->leaf)
            continue;
        ol_buf fnd = {0};
        snap_findings(x, sl, &fnd);
        if (fnd.len) {
            ol_buf_clear(&b);
            size_str(&b, sl->line->bytes);
            fprintf(o->out, "  %10s  ", b.data);
            ol_buf_clear(&b);
            ol_buf_printf(&b, "under %s:%u", file_name(x, sl->file, sl->line->file), sl->line->line);
            uint32_t len;
            const char *code = ol_explain_source_line(x, sl->file, sl->line->line, &len);
            if (code && len < 120)
                ol_buf_printf(&b, " (`%.*s`)", (int)len, code);
            ol_buf_add(&b, fnd.data, fnd.len);
            put_plain(o, b.data);
            fputc('\n', o->out);
        }
        ol_buf_free(&fnd);
    }
    ol_buf_free(&b);
    for (size_t i = 0; i < x->snapshot_verdicts.len; i++)
        verdict_text(o, &x->snapshot_verdicts.items[i]);
}

static void others_text(const out_ctx *o, const ol_explain *x)
{
    size_t others = x->errors.len - 1;
    size_t unkept = x->log.events_total > x->errors.len ? x->log.events_total - x->errors.len : 0;
    if (!others && !unkept)
        return;
    fprintf(o->out, "\nalso in this log: %zu more out-of-memory error%s\n", others + unkept,
            others + unkept == 1 ? "" : "s");
    size_t shown = 0;
    for (size_t i = 0; i < x->errors.len && shown < TEXT_OTHER_ERRORS; i++) {
        if (i == x->primary)
            continue;
        const ol_ex_error *e = &x->errors.items[i];
        ol_buf b = {0};
        ol_buf_printf(&b, "  line %llu: ", (unsigned long long)e->event->log_line);
        title(x, e, &b);
        if (e->verdicts.len)
            ol_buf_printf(&b, " (%s)", e->verdicts.items[0].kind);
        put_plain(o, b.data);
        fputc('\n', o->out);
        ol_buf_free(&b);
        shown++;
    }
    if (others > shown)
        fprintf(o->out, "  and %zu more (--format json lists them)\n", others - shown);
}

static void emit_text(const ol_explain *x, FILE *out)
{
    out_ctx o = {out, x->opts->color};
    ol_emit_options eo = {OL_FMT_TEXT, x->opts->color, true, false, false};
    if (x->errors.len) {
        const ol_ex_error *e = &x->errors.items[x->primary];
        ol_buf head = {0};
        title(x, e, &head);
        put(&o, C_BOLD, head.data);
        ol_buf_free(&head);
        fputc('\n', out);
        if (x->have_snapshot_event && e->event == &x->snapshot_event) {
            fputs("  (from the snapshot's OOM entry, ", out);
            put_plain(&o, x->opts->snapshot_path);
            fputs(")\n", out);
        } else {
            ol_buf msg = {0};
            ol_buf_printf(&msg, "  %s:%llu: ",
                          x->opts->log_path && strcmp(x->opts->log_path, "-") != 0 ? x->opts->log_path : "<stdin>",
                          (unsigned long long)e->event->log_line);
            put_plain(&o, msg.data);
            ol_buf_clear(&msg);
            if (e->event->exc_type[0])
                ol_buf_printf(&msg, "%s: ", e->event->exc_type);
            ol_buf_puts(&msg, e->event->message);
            put(&o, C_DIM, msg.data);
            fputc('\n', out);
            ol_buf_free(&msg);
        }
        fputc('\n', out);
        for (size_t i = 0; i < e->verdicts.len; i++)
            verdict_text(&o, &e->verdicts.items[i]);
        if (!e->verdicts.len)
            fputs("no verdict: the message carries no figures to read and the stack shows no phase\n", out);
        figures_table(&o, e);
        traceback_text(&o, x, e);
    } else {
        fputs("no out-of-memory error in the input or in the snapshot's trace: what follows is what was alive when "
              "the snapshot was taken\n",
              out);
    }
    findings_text(&o, x, &eo);
    snapshot_text(&o, x);
    others_text(&o, x);
    if (x->missing.len) {
        fputs("\nnot found on disk (looked under", out);
        for (size_t i = 0; i < x->opts->roots.len; i++)
            fprintf(out, " %s", x->opts->roots.items[i]);
        if (!x->opts->roots.len)
            fputs(" .", out);
        fputs("; --root DIR says where the job's code is):\n", out);
        for (size_t i = 0; i < x->missing.len; i++) {
            fputs("  ", out);
            put_plain(&o, x->missing.items[i]);
            if (ol_oom_notebook_cell(x->missing.items[i]))
                fputs("  (a notebook cell: lint the notebook itself, `oomlint notebook.ipynb`)", out);
            fputc('\n', out);
        }
    }
    for (size_t i = 0; i < x->notes.len; i++) {
        fputs("note: ", out);
        put_plain(&o, x->notes.items[i]);
        fputc('\n', out);
    }
}

/* ---- JSON ----------------------------------------------------------------------- */

static void add_bytes(cJSON *obj, const char *key, int64_t v)
{
    if (v == OL_BYTES_UNKNOWN)
        cJSON_AddNullToObject(obj, key);
    else
        cJSON_AddNumberToObject(obj, key, (double)v);
}

static cJSON *verdict_json(const ol_verdict *v)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "kind", v->kind);
    ol_json_add_text(o, "message", v->message);
    if (v->advice)
        ol_json_add_text(o, "advice", v->advice);
    else
        cJSON_AddNullToObject(o, "advice");
    cJSON *f = cJSON_AddObjectToObject(o, "figures");
    for (size_t i = 0; i < v->nfigures; i++)
        cJSON_AddNumberToObject(f, v->figures[i].name, (double)v->figures[i].value);
    return o;
}

static cJSON *figures_json(const ol_oom_figures *f)
{
    cJSON *o = cJSON_CreateObject();
    if (f->device >= 0)
        cJSON_AddNumberToObject(o, "device", f->device);
    else
        cJSON_AddNullToObject(o, "device");
    add_bytes(o, "requested", f->requested);
    add_bytes(o, "total", f->total);
    add_bytes(o, "free", f->free);
    add_bytes(o, "this_process", f->this_process);
    add_bytes(o, "allocated", f->allocated);
    add_bytes(o, "reserved_unallocated", f->reserved_unallocated);
    add_bytes(o, "reserved", f->reserved);
    add_bytes(o, "allowed", f->allowed);
    add_bytes(o, "private_pools", f->private_pools);
    add_bytes(o, "other_allocations", f->other_allocations);
    cJSON *procs = cJSON_AddArrayToObject(o, "processes");
    for (size_t i = 0; i < f->nprocs; i++) {
        cJSON *p = cJSON_CreateObject();
        cJSON_AddNumberToObject(p, "pid", (double)f->procs[i].pid);
        cJSON_AddNumberToObject(p, "bytes", (double)f->procs[i].bytes);
        cJSON_AddItemToArray(procs, p);
    }
    if (f->alloc_conf)
        cJSON_AddStringToObject(o, "alloc_conf", f->alloc_conf);
    else
        cJSON_AddNullToObject(o, "alloc_conf");
    return o;
}

static cJSON *error_json(const ol_explain *x, size_t i)
{
    const ol_ex_error *e = &x->errors.items[i];
    const ol_oom_event *ev = e->event;
    cJSON *o = cJSON_CreateObject();
    cJSON_AddBoolToObject(o, "primary", i == x->primary);
    cJSON_AddStringToObject(o, "kind", ol_oom_kind_name(ev->kind));
    cJSON_AddStringToObject(o, "source", ev == &x->snapshot_event ? "snapshot" : "log");
    if (ev == &x->snapshot_event)
        cJSON_AddNullToObject(o, "line");
    else
        cJSON_AddNumberToObject(o, "line", (double)ev->log_line);
    if (ev->rank[0])
        ol_json_add_text(o, "rank", ev->rank);
    else
        cJSON_AddNullToObject(o, "rank");
    ol_json_add_text(o, "exception", ev->exc_type);
    ol_json_add_text(o, "message", ev->message);
    cJSON_AddItemToObject(o, "figures", figures_json(&ev->fig));
    if (e->phase)
        cJSON_AddStringToObject(o, "phase", e->phase);
    else
        cJSON_AddNullToObject(o, "phase");
    add_bytes(o, "step", ev->step);
    add_bytes(o, "steps_total", ev->steps_total);
    cJSON_AddNumberToObject(o, "repeats", (double)ev->repeats);
    cJSON *tb = cJSON_AddArrayToObject(o, "traceback");
    for (size_t k = 0; k < e->frames.len; k++) {
        const ol_ex_frame *fr = &e->frames.items[k];
        cJSON *f = cJSON_CreateObject();
        ol_json_add_text(f, "file", fr->frame->file);
        cJSON_AddNumberToObject(f, "line", fr->frame->line);
        ol_json_add_text(f, "function", fr->frame->func);
        ol_json_add_text(f, "code", fr->frame->code);
        cJSON_AddBoolToObject(f, "user", fr->user);
        if (fr->file != SIZE_MAX)
            ol_json_add_text(f, "found", x->files.items[fr->file].path);
        else
            cJSON_AddNullToObject(f, "found");
        cJSON_AddBoolToObject(f, "failing", k == e->innermost);
        cJSON_AddItemToArray(tb, f);
    }
    cJSON_AddBoolToObject(o, "traceback_truncated", ev->truncated);
    cJSON_AddNumberToObject(o, "frames_dropped", (double)ev->frames_dropped);
    cJSON *vs = cJSON_AddArrayToObject(o, "verdicts");
    for (size_t k = 0; k < e->verdicts.len; k++)
        cJSON_AddItemToArray(vs, verdict_json(&e->verdicts.items[k]));
    return o;
}

static void finding_extra(const ol_explain *x, const ol_ex_finding *fd, cJSON *o)
{
    cJSON_AddStringToObject(o, "relation", ol_relation_name(fd->relation));
    if (fd->relation <= OL_REL_LOOP) {
        cJSON_AddNumberToObject(o, "stack_line", fd->frame_line);
        cJSON_AddNumberToObject(o, "stack_depth", (double)fd->frame_depth);
    } else {
        cJSON_AddNullToObject(o, "stack_line");
        cJSON_AddNullToObject(o, "stack_depth");
    }
    cJSON_AddBoolToObject(o, "in_stack_loop", fd->in_frame_loop);
    add_bytes(o, "alive_bytes", fd->alive_bytes);
    if (fd->alive_bytes >= 0 && fd->alive_line)
        cJSON_AddNumberToObject(o, "alive_line", fd->alive_line);
    else
        cJSON_AddNullToObject(o, "alive_line");
    ol_buf rel = {0};
    relation_text(x, fd, &rel);
    ol_json_add_text(o, "relation_text", rel.data);
    ol_buf_free(&rel);
}

/* The linter's own JSON object for one finding. */
static cJSON *finding_json(const ol_explain *x, const ol_ex_finding *fd)
{
    ol_file_result shim = one_finding(x, fd);
    ol_buf b = {0};
    ol_emit_json_file(&b, &shim);
    cJSON *o = cJSON_Parse(b.data ? b.data : "");
    ol_buf_free(&b);
    if (!o)
        ol_oom(); /* the linter wrote it: only memory can fail */
    finding_extra(x, fd, o);
    return o;
}

static cJSON *snapshot_json(const ol_explain *x)
{
    const ol_mem_snapshot *s = &x->snap;
    cJSON *o = cJSON_CreateObject();
    ol_json_add_text(o, "path", x->opts->snapshot_path);
    cJSON_AddStringToObject(o, "format", s->format);
    if (s->device >= 0)
        cJSON_AddNumberToObject(o, "device", s->device);
    else
        cJSON_AddNullToObject(o, "device");
    add_bytes(o, "reserved", s->reserved);
    add_bytes(o, "alive", s->alive);
    cJSON_AddNumberToObject(o, "alive_blocks", (double)s->alive_blocks);
    add_bytes(o, "pending_free", s->pending_free);
    add_bytes(o, "inactive", s->inactive);
    add_bytes(o, "largest_free_block", s->largest_inactive);
    add_bytes(o, "unattributed", s->unattributed);
    cJSON_AddBoolToObject(o, "at_oom", s->at_oom);
    add_bytes(o, "oom_requested", s->oom_requested);
    add_bytes(o, "oom_device_free", s->oom_device_free);
    cJSON_AddBoolToObject(o, "partial", s->partial);
    cJSON *lines = cJSON_AddArrayToObject(o, "lines");
    for (size_t i = 0; i < x->snaplines.len; i++) {
        const ol_ex_snapline *sl = &x->snaplines.items[i];
        cJSON *l = cJSON_CreateObject();
        ol_json_add_text(l, "file", sl->line->file);
        if (sl->file != SIZE_MAX)
            ol_json_add_text(l, "found", x->files.items[sl->file].path);
        else
            cJSON_AddNullToObject(l, "found");
        cJSON_AddNumberToObject(l, "line", sl->line->line);
        ol_json_add_text(l, "function", sl->line->func);
        uint32_t len;
        const char *code = ol_explain_source_line(x, sl->file, sl->line->line, &len);
        if (code) {
            char *c = ol_xstrndup(code, len);
            ol_json_add_text(l, "code", c);
            free(c);
        } else {
            cJSON_AddNullToObject(l, "code");
        }
        cJSON_AddNumberToObject(l, "bytes", (double)sl->line->bytes);
        cJSON_AddNumberToObject(l, "blocks", (double)sl->line->blocks);
        cJSON_AddBoolToObject(l, "allocated_here", sl->line->leaf);
        size_t idx[8];
        size_t n = snap_related(x, sl, idx, 8);
        cJSON *related = cJSON_AddArrayToObject(l, "findings");
        for (size_t k = 0; k < n; k++) {
            const ol_ex_finding *fd = &x->findings.items[idx[k]];
            cJSON *r = cJSON_CreateObject();
            cJSON_AddStringToObject(r, "code", diag_of(x, fd)->rule->code);
            ol_json_add_text(r, "path", x->files.items[fd->file].path);
            cJSON_AddNumberToObject(r, "line", finding_line(x, fd));
            cJSON_AddItemToArray(related, r);
        }
        cJSON_AddItemToArray(lines, l);
    }
    cJSON *vs = cJSON_AddArrayToObject(o, "verdicts");
    for (size_t k = 0; k < x->snapshot_verdicts.len; k++)
        cJSON_AddItemToArray(vs, verdict_json(&x->snapshot_verdicts.items[k]));
    return o;
}

static cJSON *report_json(const ol_explain *x)
{
    cJSON *root = cJSON_CreateObject();
    if (x->have_log) {
        cJSON *log = cJSON_AddObjectToObject(root, "log");
        ol_json_add_text(log, "path", x->opts->log_path);
        cJSON_AddNumberToObject(log, "lines", (double)x->log.lines);
        cJSON_AddNumberToObject(log, "bytes", (double)x->log.bytes);
        cJSON_AddNumberToObject(log, "errors_total", (double)x->log.events_total);
    } else {
        cJSON_AddNullToObject(root, "log");
    }
    cJSON *errs = cJSON_AddArrayToObject(root, "errors");
    for (size_t i = 0; i < x->errors.len; i++)
        cJSON_AddItemToArray(errs, error_json(x, i));
    cJSON *missing = cJSON_AddArrayToObject(root, "missing_files");
    for (size_t i = 0; i < x->missing.len; i++)
        cJSON_AddItemToArray(missing, cJSON_CreateString(x->missing.items[i]));
    cJSON *files = cJSON_AddArrayToObject(root, "files");
    for (size_t i = 0; i < x->files.len; i++) {
        cJSON *f = cJSON_CreateObject();
        ol_json_add_text(f, "path", x->files.items[i].path);
        cJSON_AddBoolToObject(f, "on_stack", x->files.items[i].on_stack);
        cJSON_AddBoolToObject(f, "linted", x->files.items[i].result.read_ok);
        cJSON_AddItemToArray(files, f);
    }
    cJSON *fs = cJSON_AddArrayToObject(root, "findings");
    for (size_t i = 0; i < x->findings.len; i++)
        cJSON_AddItemToArray(fs, finding_json(x, &x->findings.items[i]));
    if (x->have_snapshot)
        cJSON_AddItemToObject(root, "snapshot", snapshot_json(x));
    else
        cJSON_AddNullToObject(root, "snapshot");
    cJSON *notes = cJSON_AddArrayToObject(root, "notes");
    for (size_t i = 0; i < x->notes.len; i++)
        cJSON_AddItemToArray(notes, cJSON_CreateString(x->notes.items[i]));
    return root;
}

/* ---- SARIF ---------------------------------------------------------------------- */

static void emit_sarif(const ol_explain *x, FILE *out)
{
    char *cwd = ol_sarif_cwd();
    char *head, *tail, *empty;
    ol_sarif_frame(cwd, &head, &tail, &empty);
    cJSON *log = cJSON_Parse(empty);
    free(head);
    free(tail);
    free(empty);
    if (!log)
        ol_oom();
    cJSON *run = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(log, "runs"), 0);
    cJSON *results = cJSON_GetObjectItemCaseSensitive(run, "results");
    size_t rank = 0;
    for (size_t i = 0; i < x->findings.len; i++) {
        const ol_ex_finding *fd = &x->findings.items[i];
        if (fd->relation == OL_REL_RUN)
            continue;
        ol_file_result shim = one_finding(x, fd);
        ol_buf b = {0};
        ol_emit_sarif_file(&b, cwd, &shim);
        cJSON *res = cJSON_Parse(b.data ? b.data : "");
        ol_buf_free(&b);
        if (!res)
            ol_oom();
        cJSON *props = cJSON_AddObjectToObject(res, "properties");
        cJSON *ex = cJSON_AddObjectToObject(props, "explain");
        cJSON_AddNumberToObject(ex, "rank", (double)++rank);
        finding_extra(x, fd, ex);
        cJSON_AddItemToArray(results, res);
    }
    cJSON *props = cJSON_AddObjectToObject(run, "properties");
    cJSON *errs = cJSON_AddArrayToObject(props, "explainErrors");
    for (size_t i = 0; i < x->errors.len; i++)
        cJSON_AddItemToArray(errs, error_json(x, i));
    if (x->have_snapshot)
        cJSON_AddItemToObject(props, "explainSnapshot", snapshot_json(x));
    free(cwd);
    ol_json_print(out, log);
}

void ol_explain_emit(const ol_explain *x, FILE *out)
{
    switch (x->opts->format) {
    case OL_FMT_JSON:
        ol_json_print(out, report_json(x));
        break;
    case OL_FMT_SARIF:
        emit_sarif(x, out);
        break;
    default:
        emit_text(x, out);
        break;
    }
}

size_t ol_explain_failing(const ol_explain *x)
{
    size_t n = 0;
    for (size_t i = 0; i < x->findings.len; i++) {
        const ol_ex_finding *fd = &x->findings.items[i];
        if (fd->relation != OL_REL_RUN && diag_of(x, fd)->rule->severity <= x->opts->fail_on)
            n++;
    }
    return n;
}
