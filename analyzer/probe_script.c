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
 * is confirmed when something grows at its line; growth elsewhere is listed
 * as growth at lines no rule flagged. Rules whose cost is a peak or time
 * rather than growth say so, and point at `oomlint probe --rules CODE`.
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

/* One thing followed over the steps: a holder, a line's saved bytes, or a
 * line's device allocations. */
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
} track;

enum { TRACK_HOLDER, TRACK_SITE, TRACK_DEVICE };

typedef struct script_run {
    ol_probe_env *env;
    const char *script_name; /* the file name the wrapper reports for the script */
    OL_VEC(track *) tracks;
    ol_dvec saved, rss, time, cuda;
    size_t steps;
    char *torch;
    char *end_reason;
    char *end_error;
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

static bool script_record(void *ctx, ol_child *c, const cJSON *rec, const char **why)
{
    script_run *sr = ctx;
    (void)c;
    const char *t = jstr(rec, "t");
    if (strcmp(t, "start") == 0) {
        const char *torch = jstr(rec, "torch");
        free(sr->torch);
        sr->torch = ol_xstrdup(torch ? torch : "?");
        return true;
    }
    if (strcmp(t, "end") == 0) {
        sr->ended = true;
        const char *reason = jstr(rec, "reason"), *error = jstr(rec, "error");
        free(sr->end_reason);
        free(sr->end_error);
        sr->end_reason = ol_xstrdup(reason ? reason : "");
        sr->end_error = error ? ol_xstrdup(error) : NULL;
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
        double threshold = t->kind == TRACK_DEVICE ? 4096 : 512;
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

typedef struct finding {
    const ol_rule *rule;
    uint32_t line, col;
    double bytes, nodes;
    bool confirmed;
    const char *held_by;
} finding;

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
    ol_resolver resolver;
    ol_settings fallback = {0};
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
    ol_lint_input(&lt, &in, NULL, 0, NULL, r);
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

static void emit_script_json(const script_run *sr, const finding *fs, size_t nf, FILE *out, const char *script)
{
    cJSON *root = cJSON_CreateObject();
    cJSON_AddStringToObject(root, "script", script);
    cJSON_AddStringToObject(root, "device", sr->env->device);
    cJSON_AddStringToObject(root, "torch", sr->torch ? sr->torch : sr->env->py.torch);
    cJSON_AddNumberToObject(root, "steps", (double)sr->steps);
    if (sr->end_error)
        cJSON_AddStringToObject(root, "error", sr->end_error);
    cJSON *arr = cJSON_AddArrayToObject(root, "findings");
    for (size_t i = 0; i < nf; i++) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "code", fs[i].rule->code);
        cJSON_AddStringToObject(o, "name", fs[i].rule->name);
        cJSON_AddNumberToObject(o, "line", fs[i].line);
        cJSON_AddStringToObject(o, "status", fs[i].confirmed ? "confirmed" : "not observed");
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
        cJSON_AddStringToObject(o, "kind", t->kind == TRACK_HOLDER ? "graph" : t->kind == TRACK_SITE ? "saved" : "device");
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
    ol_json_print(out, root);
}

static void emit_script_text(const script_run *sr, const finding *fs, size_t nf, FILE *out, const char *script)
{
    fprintf(out, "oomlint probe: ran %s for %zu optimizer step%s with %s (torch %s, %s)\n", script, sr->steps,
            sr->steps == 1 ? "" : "s", sr->env->py.path, sr->torch ? sr->torch : sr->env->py.torch, sr->env->device);
    if (sr->end_reason && strcmp(sr->end_reason, "steps") != 0)
        fprintf(out, "The script %s before step %d.\n",
                strcmp(sr->end_reason, "finished") == 0 ? "finished" : "stopped", sr->env->opts->steps);
    if (nf == 0)
        fputs("oomlint reports no findings in it.\n", out);
    ol_buf b = {0};
    for (size_t i = 0; i < nf; i++) {
        const finding *f = &fs[i];
        ol_buf_clear(&b);
        if (f->confirmed) {
            growth_text(&b, f->bytes, f->nodes);
            fprintf(out, "%s:%u:%u: %s %s: confirmed (%s per step at line %u%s%s%s)\n", script, f->line, f->col,
                    f->rule->code, f->rule->name, b.data, f->line, f->held_by ? ", held by `" : "",
                    f->held_by ? f->held_by : "", f->held_by ? "`" : "");
        } else if (growth_rule(f->rule->code)) {
            fprintf(out, "%s:%u:%u: %s %s: not observed\n", script, f->line, f->col, f->rule->code, f->rule->name);
        } else {
            fprintf(out,
                    "%s:%u:%u: %s %s: not observed (its cost is peak memory or time, not growth per step; "
                    "`oomlint probe --rules %s` measures it)\n",
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
        const char *what = t->kind == TRACK_HOLDER ? "kept reachable" : t->kind == TRACK_SITE ? "kept for backward" : "allocated on the device";
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
    if (sr->end_error)
        fprintf(out, "The script raised an error:\n%s", sr->end_error);
    ol_buf_free(&b);
}

static bool write_script_plot(const script_run *sr, const char *script, ol_buf *err)
{
    ol_svg_panels panels = {0};
    ol_svg_panel total = {0};
    total.title = ol_xstrdup("all saved for backward");
    total.unit = ol_xstrdup("bytes");
    total.lines[0] = (ol_svg_line){"total", "#444444", &sr->saved};
    total.line_count = 1;
    ol_vec_push(&panels, total);
    for (size_t i = 0; i < sr->tracks.len && panels.len < 9; i++) {
        const track *t = sr->tracks.items[i];
        if (!t->grows)
            continue;
        ol_svg_panel p = {0};
        bool nodes = t->kind == TRACK_HOLDER && !(t->bytes_slope > 512);
        if (t->line)
            p.title = ol_xasprintf("%s:%ld%s%s", t->file ? t->file : script, t->line, t->name ? " " : "",
                                   t->name ? t->name : "");
        else
            p.title = ol_xasprintf("%s", t->name ? t->name : "?");
        p.unit = ol_xstrdup(nodes ? "nodes" : "bytes");
        p.lines[0] = (ol_svg_line){nodes ? "autograd nodes" : "bytes", "#d62728", nodes ? &t->nodes : &t->bytes};
        p.line_count = 1;
        ol_vec_push(&panels, p);
    }
    char *title = ol_xasprintf("oomlint probe --script %s: what grows per optimizer step", script);
    ol_buf svg = {0};
    ol_svg_render(&svg, title, &panels);
    bool ok = ol_write_file_atomic(sr->env->opts->plot, svg.data, svg.len, err);
    ol_buf_free(&svg);
    free(title);
    ol_svg_panels_free(&panels);
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
    char **argv = ol_argv_new(env->py.path, wrapper, "--fd", "3", "--steps", steps, "--device", env->device,
                              "--script", o->script, "--", (const char *)NULL);
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
        const char *last = ol_child_last_line(&c, &line);
        fprintf(stderr, "oomlint probe: error: the run of %s %s%s%s\n", o->script,
                c.error ? c.error : c.exit_code ? "failed" : "ended without its end record", *last ? ": " : "", last);
        status = 1;
        if (sr.steps == 0) {
            ol_buf_free(&line);
            goto done;
        }
    }
    ol_buf_free(&line);
    if (sr.steps == 0) {
        fprintf(stderr, "oomlint probe: error: %s made no optimizer step%s%s\n", o->script,
                sr.end_error ? "; it raised:\n" : " (nothing to attribute)", sr.end_error ? sr.end_error : "");
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
        finding f = {d->rule, loc.line, loc.col, 0, 0, false, NULL};
        for (size_t k = 0; k < sr.tracks.len; k++) {
            track *t = sr.tracks.items[k];
            if (!t->grows || t->line != (long)loc.line || !t->file || strcmp(t->file, sr.script_name) != 0)
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
    if (o->json)
        emit_script_json(&sr, fs.items, fs.len, stdout, sr.script_name);
    else
        emit_script_text(&sr, fs.items, fs.len, stdout, sr.script_name);
    fflush(stdout);
    if (o->plot && !write_script_plot(&sr, sr.script_name, &err)) {
        fprintf(stderr, "oomlint probe: error: %s\n", err.data);
        status = 2;
    }
    ol_vec_free(&fs);

done:
    ol_buf_free(&err);
    ol_child_free(&c);
    for (size_t i = 0; i < sr.tracks.len; i++) {
        track *t = sr.tracks.items[i];
        free(t->name);
        free(t->file);
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
    free(sr.torch);
    free(sr.end_reason);
    free(sr.end_error);
    ol_file_result_free(&lint);
    return status;
}
