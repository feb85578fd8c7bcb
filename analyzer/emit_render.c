/*
 * emit_render.c - a file's part of the report, made on the worker that
 * linted it (see ol_renderer in emit.h).
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "emit.h"
#include "util.h"

void ol_renderer_init(ol_renderer *rd, const ol_emit_options *o, bool discard)
{
    rd->o = *o;
    rd->discard = discard;
    rd->cwd = discard                        ? NULL
              : o->format == OL_FMT_SARIF  ? ol_sarif_cwd()
              : o->format == OL_FMT_GITLAB ? ol_gitlab_root()
                                           : NULL;
}

void ol_renderer_free(ol_renderer *rd)
{
    free(rd->cwd);
    rd->cwd = NULL;
}

/* A file's part in a report of this kind: text and annotations go through
 * a FILE (as to the report itself), JSON and SARIF objects into a buffer. */
static bool part_is_text(ol_format kind)
{
    return kind != OL_FMT_JSON && kind != OL_FMT_SARIF && kind != OL_FMT_GITLAB && kind != OL_FMT_JUNIT;
}

static void part_to_file(FILE *out, ol_format kind, const ol_renderer *rd, const ol_file_result *r)
{
    if (kind == OL_FMT_GITHUB)
        ol_emit_github_file(out, r);
    else
        ol_emit_text_file(out, r, &rd->o);
}

static void part_to_buf(ol_buf *b, ol_format kind, const ol_renderer *rd, const ol_file_result *r)
{
    if (kind == OL_FMT_JSON)
        ol_emit_json_file(b, r);
    else if (kind == OL_FMT_GITLAB)
        ol_emit_gitlab_file(b, rd->cwd, r);
    else if (kind == OL_FMT_JUNIT)
        ol_emit_junit_file(b, r);
    else
        ol_emit_sarif_file(b, rd->cwd, r);
}

/* JSON's --statistics counts findings and has no parts; SARIF has no such form */
static bool has_parts(ol_format kind, const ol_emit_options *o)
{
    return !(kind == OL_FMT_JSON && o->statistics);
}

void ol_render_part(const ol_renderer *rd, ol_file_result *r)
{
    ol_format kind = rd->o.format;
    if (rd->discard || !r->diags.len || r->rendered || !has_parts(kind, &rd->o))
        return;
    if (part_is_text(kind)) {
        char *data = NULL;
        size_t len = 0;
        FILE *mem = open_memstream(&data, &len);
        if (!mem)
            ol_oom();
        part_to_file(mem, kind, rd, r);
        if (fclose(mem) != 0 || !data)
            ol_oom();
        r->rendered = data;
        r->rendered_len = len;
    } else {
        ol_buf b = {0};
        part_to_buf(&b, kind, rd, r);
        r->rendered_len = b.len;
        r->rendered = b.data ? ol_buf_take(&b) : ol_xstrdup("");
    }
}

void ol_render_result(const ol_renderer *rd, ol_file_result *r)
{
    if (!rd || r->from_stdin || !r->has_source || r->rendered)
        return;
    ol_render_part(rd, r);
    ol_source_free(&r->src);
    r->has_source = false;
}

/* ---- writing the report file by file ------------------------------------- */

/* The bytes of waiting parts kept in memory. On the generated corpus of
 * training code (bench/), whose first files ask about callers all over the
 * run, 6.8 of its 7.5 MB of JSON waited at once. OOMLINT_REPORT_MEMORY_KB
 * sets it (tests make it 0, so that every waiting part goes to disk). */
#define OL_HOLD_BUDGET ((size_t)256 * 1024)

void ol_writer_init(ol_report_writer *w, FILE *out, ol_format kind, const ol_renderer *rd)
{
    memset(w, 0, sizeof(*w));
    w->out = out;
    w->kind = kind == OL_FMT_CONCISE ? OL_FMT_TEXT : kind;
    w->rd = rd;
    if (w->kind == OL_FMT_SARIF)
        ol_sarif_frame(rd->cwd, &w->sarif_head, &w->sarif_tail, &w->sarif_empty);
    w->spill_fd = -1;
    w->hold_budget = ol_env_kb("OOMLINT_REPORT_MEMORY_KB", 0, OL_HOLD_BUDGET);
}

void ol_writer_free(ol_report_writer *w)
{
    free(w->sarif_head);
    free(w->sarif_tail);
    free(w->sarif_empty);
    ol_buf_free(&w->scratch);
    if (w->spill_fd >= 0)
        close(w->spill_fd);
    memset(w, 0, sizeof(*w));
    w->spill_fd = -1;
}

static void hold_in_memory(ol_report_writer *w, ol_file_result *r)
{
    r->held = true;
    w->held_bytes += r->rendered_len;
    if (w->held_bytes > w->most_held)
        w->most_held = w->held_bytes;
}

void ol_writer_hold(ol_report_writer *w, ol_file_result *r)
{
    if (!r->rendered || r->held || r->spilled)
        return;
    if (w->held_bytes + r->rendered_len <= w->hold_budget || w->no_spill) {
        hold_in_memory(w, r);
        return;
    }
    if (w->spill_fd < 0)
        w->spill_fd = ol_temp_fd("report");
    if (w->spill_fd < 0 || !ol_pwrite_all(w->spill_fd, r->rendered, r->rendered_len, w->spill_len)) {
        /* a full disk, or no temporary directory: the parts wait in memory,
         * as they would with no bound */
        w->no_spill = true;
        hold_in_memory(w, r);
        return;
    }
    r->spill_off = w->spill_len;
    w->spill_len += r->rendered_len;
    r->spilled = true;
    free(r->rendered);
    r->rendered = NULL;
}

void ol_writer_part(ol_report_writer *w, const ol_file_result *r)
{
    if (!r->diags.len || !has_parts(w->kind, &w->rd->o))
        return;
    if (w->kind == OL_FMT_JSON || w->kind == OL_FMT_GITLAB)
        fputs(w->parts ? ",\n  " : "[\n  ", w->out);
    else if (w->kind == OL_FMT_JUNIT && !w->parts)
        fputs(ol_junit_head, w->out);
    else if (w->kind == OL_FMT_SARIF)
        fputs(w->parts ? ",\n        " : w->sarif_head, w->out);
    if (r->held)
        w->held_bytes -= r->rendered_len;
    if (r->spilled) {
        char *part = ol_xmalloc(r->rendered_len ? r->rendered_len : 1);
        if (ol_pread_all(w->spill_fd, part, r->rendered_len, r->spill_off)) {
            fwrite(part, 1, r->rendered_len, w->out);
        } else {
            int err = errno; /* before the escaping below allocates */
            ol_buf b = {0};
            ol_escape_display(&b, r->path ? r->path : "-", false);
            fprintf(stderr, "oomlint: error: the findings of '%s' could not be read back from the report's temporary file: %s\n",
                    b.data ? b.data : "", strerror(err));
            ol_buf_free(&b);
            w->failed = true;
        }
        free(part);
    } else if (r->rendered) {
        fwrite(r->rendered, 1, r->rendered_len, w->out);
    } else if (part_is_text(w->kind)) {
        part_to_file(w->out, w->kind, w->rd, r);
    } else {
        ol_buf_clear(&w->scratch);
        part_to_buf(&w->scratch, w->kind, w->rd, r);
        fwrite(w->scratch.data, 1, w->scratch.len, w->out);
    }
    w->parts++;
}

void ol_writer_end(ol_report_writer *w, const ol_file_result *results, size_t count)
{
    const ol_emit_options *o = &w->rd->o;
    switch (w->kind) {
    case OL_FMT_TEXT:
    case OL_FMT_CONCISE:
        ol_emit_text_end(w->out, results, count, o);
        break;
    case OL_FMT_JSON:
        ol_emit_json_end(w->out, results, count, o, w->parts);
        break;
    case OL_FMT_SARIF:
        fputs(w->parts ? w->sarif_tail : w->sarif_empty, w->out);
        break;
    case OL_FMT_GITLAB:
        fputs(w->parts ? "\n]\n" : "[]\n", w->out);
        break;
    case OL_FMT_JUNIT:
        if (!w->parts)
            fprintf(w->out, "%s%s", ol_junit_head, ol_junit_empty);
        fputs(ol_junit_tail, w->out);
        break;
    case OL_FMT_GITHUB:
        break;
    }
}

static void emit_as(FILE *out, ol_format kind, const ol_file_result *results, size_t count,
                    const ol_emit_options *o)
{
    ol_renderer rd;
    ol_renderer_init(&rd, o, false);
    ol_report_writer w;
    ol_writer_init(&w, out, kind, &rd);
    for (size_t i = 0; i < count; i++)
        ol_writer_part(&w, &results[i]);
    ol_writer_end(&w, results, count);
    ol_writer_free(&w);
    ol_renderer_free(&rd);
}

void ol_emit(FILE *out, const ol_file_result *results, size_t count, const ol_emit_options *o)
{
    emit_as(out, o->format, results, count, o);
}

void ol_emit_text(FILE *out, const ol_file_result *results, size_t count, const ol_emit_options *o)
{
    emit_as(out, OL_FMT_TEXT, results, count, o);
}
