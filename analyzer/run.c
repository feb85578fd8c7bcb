/*
 * run.c - a run: linting its files on a pool of threads, each file read,
 * linted and then, as the run asks, fixed (`--fix`, `--diff`) or given its
 * `# noqa` directives (`--add-noqa`), its part of the report made and, when
 * the files before it are done, written.
 *
 * Fixing goes in rounds, as in Ruff's lint_fix: fix.c plans a round (one
 * fix per statement, widest first) and applies it, and the new text is
 * linted here: the round must not add a syntax error or a finding of any
 * rule (a fix that breaks code downstream, or that stacks with another into
 * nonsense, shows up there). A round that fails is split in halves, and
 * halves again, to keep the fixes that are fine and set aside the one that
 * is not (a bounded number of extra lints per round); the final text is thus
 * always one that was parsed and linted. tree-sitter parses every Python at
 * once, so the round is also parsed under the oldest Python the project
 * declares (pyfloor.h): a round that brings in a syntax error, or a
 * construct that Python cannot parse (`f"{f(x="a")}"` before 3.12), fails as
 * well, and a fix set aside for it is named on stderr. `--add-noqa` is
 * checked the same way (addnoqa.c writes the directives; this lints the
 * result). fix.c and addnoqa.c never lint: the rounds are driven from here.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "emit.h"
#include "addnoqa.h"
#include "fix.h"
#include "lint.h"
#include "model.h"
#include "notebook.h"
#include "project.h"
#include "pyfloor.h"
#include "rule.h"
#include "supervise.h"
#include "writefile.h"

/* ---- fixing in rounds ------------------------------------------------------------- */

/* How many extra lints one round may spend finding the fix that broke it. */
#define OL_FIX_BISECT_LINTS 24

/* A new source holding `text`, with src's encoding, BOM and cell map. */
static void derive_source(const ol_source *src, const char *text, size_t len, ol_source *out)
{
    ol_source_init_text(out, src->path, ol_xstrndup(text, len), len);
    out->bom = src->bom;
    out->cr_newlines = src->cr_newlines;
    out->encoding = src->encoding ? ol_xstrdup(src->encoding) : NULL;
    out->notebook = src->notebook;
    if (src->raw) {
        out->raw = ol_xmalloc(src->raw_len + 1);
        memcpy(out->raw, src->raw, src->raw_len);
        out->raw[src->raw_len] = '\0';
        out->raw_len = src->raw_len;
    }
    for (size_t i = 0; i < src->cells.len; i++) {
        ol_cell c = src->cells.items[i];
        c.file_lines = ol_xmalloc(sizeof(uint32_t) * (c.line_count ? c.line_count : 1));
        memcpy(c.file_lines, src->cells.items[i].file_lines, sizeof(uint32_t) * c.line_count);
        ol_vec_push(&out->cells, c);
    }
}

/* Lints `text` as the new state of r, into *out. */
static void relint_text(ol_linter *lt, const ol_file_result *r, const char *text, size_t len, ol_file_result *out)
{
    ol_source fresh;
    derive_source(&r->src, text, len, &fresh);
    memset(out, 0, sizeof(*out));
    out->path = ol_xstrdup(r->path);
    ol_lint_source(lt, &fresh, out);
}

/* Moves the linted state `next` into r, keeping what belongs to the file
 * rather than to its text (where it came from, how it was read). */
static void adopt(ol_file_result *r, ol_file_result *next)
{
    struct ol_file_snapshot *snap = r->snapshot;
    bool from_stdin = r->from_stdin;
    r->snapshot = NULL;
    ol_file_result_free(r);
    *r = *next;
    r->snapshot = snap;
    r->from_stdin = from_stdin;
    memset(next, 0, sizeof(*next));
}

static void count_findings(const ol_diag_vec *diags, size_t *per_rule)
{
    memset(per_rule, 0, ol_rule_count * sizeof(size_t));
    for (size_t i = 0; i < diags->len; i++)
        per_rule[ol_rule_index(diags->items[i].rule)]++;
}

/* Is `after` an acceptable result of a round applied to `before`: no rule
 * (syntax errors included) reports more than before, and a notebook keeps
 * its cell map (its fixes must not add or remove lines). */
static bool round_ok(const ol_file_result *before, const size_t *before_counts, const ol_file_result *after,
                     size_t *scratch)
{
    if (before->src.notebook && after->src.line_count != before->src.line_count)
        return false;
    count_findings(&after->diags, scratch);
    for (size_t i = 0; i < ol_rule_count; i++)
        if (scratch[i] > before_counts[i])
            return false;
    return true;
}

/* ---- the oldest Python the project declares ------------------------------------- */

/* What the fixes of one file must keep to: no syntax error and no construct
 * newer than the project's Python that the text did not have. */
typedef struct syntax_guard {
    unsigned floor;         /* the project's oldest Python (pyfloor.h); 0 until read */
    size_t errors, newer;   /* of the text the round starts from */
    const char *why;        /* why the last plan was refused, or NULL */
    ol_newer_syntax first;  /* what it would bring in */
    OL_VEC(char *) refused; /* "path:line: ..." for each fix set aside for its syntax */
    ol_fix_sigs refused_sigs; /* and its finding's ol_fix_signature() */
} syntax_guard;

/* Parses src as it is and counts what the guard watches. */
static void syntax_measure(ol_linter *lt, const ol_source *src, unsigned floor, size_t *errors, size_t *newer,
                           ol_newer_syntax *first)
{
    ol_tree t;
    ol_parse(&lt->parser, src, &t);
    *errors = t.timed_out ? 0 : t.errors.len;
    *newer = t.timed_out ? 0 : ol_syntax_newer_than(&t, floor, first);
    ol_tree_free(&t);
}

/* The start of a round: what its text has already. */
static void syntax_guard_begin(syntax_guard *g, ol_linter *lt, const ol_file_result *r)
{
    if (!g->floor)
        g->floor = ol_python_floor(r->path);
    syntax_measure(lt, &r->src, g->floor, &g->errors, &g->newer, NULL);
    g->why = NULL;
}

/* Whether `after` (a round's text, linted) keeps to the guard; if not, why. */
static bool syntax_guard_holds(syntax_guard *g, ol_linter *lt, const ol_file_result *after)
{
    size_t errors, newer;
    ol_newer_syntax first = {0, 0, 0, NULL};
    syntax_measure(lt, &after->src, g->floor, &errors, &newer, &first);
    g->why = NULL;
    if (errors > g->errors)
        g->why = "the fixed code would not parse";
    else if (newer > g->newer) {
        g->why = first.what;
        g->first = first;
    }
    return g->why == NULL;
}

/* A fix set aside on its own: if the guard refused it, say so (the finding
 * stays, without its fix, and the user should know why). */
static void syntax_guard_refused(syntax_guard *g, const ol_file_result *r, const ol_diag *d)
{
    if (!g->why)
        return;
    uint32_t line = ol_source_line_index(&r->src, d->start <= r->src.len ? d->start : r->src.len) + 1;
    char *msg;
    if (g->why == g->first.what && g->first.what)
        msg = ol_xasprintf("%s:%u: the fix for %s was not applied: it would bring in %s, which Python before %u.%u "
                           "cannot parse, and the project supports Python %u.%u (requires-python in pyproject.toml; "
                           "3.8 where none is declared)",
                           r->path, line, d->rule->code, g->why, g->first.needs / 100, g->first.needs % 100,
                           g->floor / 100, g->floor % 100);
    else
        msg = ol_xasprintf("%s:%u: the fix for %s was not applied: %s", r->path, line, d->rule->code, g->why);
    ol_vec_push(&g->refused, msg);
    ol_vec_push(&g->refused_sigs, ol_fix_signature(&r->src, d));
}

/* The end of the file's rounds: the messages go with the file's other
 * warnings, onto r as it finally is. */
static void syntax_guard_end(syntax_guard *g, ol_file_result *r)
{
    for (size_t i = 0; i < g->refused.len; i++)
        ol_vec_push(&r->warnings, g->refused.items[i]);
    ol_vec_free(&g->refused);
    /* the finding stays, but no longer offers the fix it cannot have */
    for (size_t i = 0; i < r->diags.len && g->refused_sigs.len; i++) {
        ol_diag *d = &r->diags.items[i];
        if (d->fix && ol_fix_blocked(&g->refused_sigs, &r->src, d)) {
            ol_fix_free(d->fix);
            d->fix = NULL;
        }
    }
    ol_fix_sigs_free(&g->refused_sigs);
}

typedef struct round_state {
    ol_linter *lt;
    ol_file_result *r;
    const size_t *before_counts;
    size_t *scratch;
    int lints_left;
    ol_buf text;
    syntax_guard *syntax;
} round_state;

/* Applies plan[0..count) to r's text, lints it, and says whether it holds. */
static bool try_plan(round_state *st, const ol_diag *const *plan, size_t count, ol_file_result *out)
{
    ol_fix_apply_plan(st->r->src.text, st->r->src.len, plan, count, &st->text);
    if (st->text.len == st->r->src.len && memcmp(st->text.data ? st->text.data : "", st->r->src.text, st->text.len) == 0)
        return false; /* changes nothing */
    relint_text(st->lt, st->r, st->text.data ? st->text.data : "", st->text.len, out);
    st->syntax->why = NULL;
    if (round_ok(st->r, st->before_counts, out, st->scratch) && syntax_guard_holds(st->syntax, st->lt, out))
        return true;
    ol_file_result_free(out);
    return false;
}

/* Runs one round: the whole plan if it holds, else the largest part of it
 * that bisection finds holding. Updates r; returns the findings fixed. */
static size_t run_round(ol_linter *lt, ol_file_result *r, ol_fix_plan *plan, ol_fix_sigs *block,
                        syntax_guard *syntax)
{
    size_t *before = ol_xcalloc(ol_rule_count, sizeof(size_t));
    size_t *scratch = ol_xcalloc(ol_rule_count, sizeof(size_t));
    count_findings(&r->diags, before);
    syntax_guard_begin(syntax, lt, r);
    round_state st = {lt, r, before, scratch, OL_FIX_BISECT_LINTS, {0}, syntax};
    ol_file_result next;
    size_t fixed = 0;
    if (try_plan(&st, plan->items, plan->len, &next)) {
        fixed = plan->len;
        adopt(r, &next);
    } else {
        /* keep `kept` (a prefix of the reordered plan) and try the rest in
         * halves; a single fix that fails on its own is set aside */
        ol_fix_plan kept = {0}, trial = {0};
        OL_VEC(size_t) starts = {0}, ends = {0};
        size_t first_half = plan->len / 2;
        if (plan->len > 1) {
            ol_vec_push(&starts, first_half);
            ol_vec_push(&ends, plan->len);
            ol_vec_push(&starts, 0);
            ol_vec_push(&ends, first_half);
        } else {
            ol_vec_push(block, ol_fix_signature(&r->src, plan->items[0]));
            syntax_guard_refused(syntax, r, plan->items[0]);
        }
        ol_file_result best = {0};
        bool have_best = false;
        while (starts.len > 0 && st.lints_left > 0) {
            size_t lo = starts.items[--starts.len], hi = ends.items[--ends.len];
            trial.len = 0;
            for (size_t i = 0; i < kept.len; i++)
                ol_vec_push(&trial, kept.items[i]);
            for (size_t i = lo; i < hi; i++)
                ol_vec_push(&trial, plan->items[i]);
            st.lints_left--;
            ol_file_result attempt;
            if (try_plan(&st, trial.items, trial.len, &attempt)) {
                for (size_t i = lo; i < hi; i++)
                    ol_vec_push(&kept, plan->items[i]);
                if (have_best)
                    ol_file_result_free(&best);
                best = attempt;
                have_best = true;
            } else if (hi - lo == 1) {
                ol_vec_push(block, ol_fix_signature(&r->src, plan->items[lo]));
                syntax_guard_refused(syntax, r, plan->items[lo]);
            } else {
                size_t mid = lo + (hi - lo) / 2;
                ol_vec_push(&starts, mid);
                ol_vec_push(&ends, hi);
                ol_vec_push(&starts, lo);
                ol_vec_push(&ends, mid);
            }
        }
        if (have_best) {
            fixed = kept.len;
            adopt(r, &best);
        }
        ol_vec_free(&kept);
        ol_vec_free(&trial);
        ol_vec_free(&starts);
        ol_vec_free(&ends);
    }
    ol_buf_free(&st.text);
    free(before);
    free(scratch);
    return fixed;
}

void ol_fix_file(ol_linter *lt, ol_file_result *r, ol_fix_mode mode, bool unsafe, ol_fix_outcome *outcome)
{
    memset(outcome, 0, sizeof(*outcome));
    if (!r->has_source || !r->read_ok)
        return;
    char *orig_text = ol_xstrndup(r->src.text, r->src.len);
    size_t orig_len = r->src.len;
    ol_fix_sigs block = {0};
    syntax_guard syntax = {0};
    size_t applied = 0;
    for (int round = 0; round < OL_FIX_ROUNDS; round++) {
        ol_fix_plan plan = {0};
        ol_fix_plan_round(&r->src, &r->diags, unsafe, &block, &plan);
        size_t n = plan.len ? run_round(lt, r, &plan, &block, &syntax) : 0;
        ol_vec_free(&plan);
        if (n == 0)
            break;
        applied += n;
    }
    ol_fix_sigs_free(&block);
    if (applied == 0) {
        syntax_guard_end(&syntax, r);
        free(orig_text);
        return;
    }
    outcome->applied = applied;
    if (mode == OL_FIX_NONE) {
        /* in memory only (the language server's fix-all): r holds the result */
        syntax_guard_end(&syntax, r);
        free(orig_text);
        return;
    }
    ol_fix_write(&r->src, r->path, orig_text, orig_len, r->snapshot, mode, outcome);
    if (outcome->applied == 0) {
        /* nothing was written: report the file as it is */
        ol_file_result again;
        relint_text(lt, r, orig_text, orig_len, &again);
        adopt(r, &again);
    }
    syntax_guard_end(&syntax, r);
    free(orig_text);
}

/* ---- --add-noqa ------------------------------------------------------------------ */

static bool try_lines(ol_linter *lt, const ol_file_result *r, const ol_noqa_lines *lines, const bool *chosen,
                      ol_buf *text, ol_file_result *after)
{
    ol_buf_clear(text);
    ol_noqa_build(&r->src, lines, chosen, text);
    relint_text(lt, r, text->data ? text->data : "", text->len, after);
    bool ok = ol_noqa_as_meant(&r->src, &r->diags, &after->src, &after->diags, lines, chosen);
    if (!ok)
        ol_file_result_free(after);
    return ok;
}

static void add_noqa(ol_linter *lt, ol_file_result *r, ol_fix_outcome *outcome)
{
    memset(outcome, 0, sizeof(*outcome));
    if (!r->has_source || !r->read_ok)
        return;
    ol_noqa_lines lines = {0};
    ol_noqa_collect(&r->src, &r->diags, &lines);
    if (!lines.len) {
        ol_vec_free(&lines);
        return;
    }
    bool *chosen = ol_xcalloc(lines.len, sizeof(bool));
    for (size_t k = 0; k < lines.len; k++)
        chosen[k] = true;
    ol_buf text = {0};
    ol_file_result after;
    bool ok = try_lines(lt, r, &lines, chosen, &text, &after);
    if (!ok) {
        /* one line at a time, then the lines that passed together */
        bool *one = ol_xcalloc(lines.len, sizeof(bool));
        for (size_t k = 0; k < lines.len; k++) {
            memset(one, 0, lines.len * sizeof(bool));
            one[k] = true;
            ol_file_result single;
            chosen[k] = try_lines(lt, r, &lines, one, &text, &single);
            if (chosen[k])
                ol_file_result_free(&single);
        }
        free(one);
        bool any = false;
        for (size_t k = 0; k < lines.len; k++)
            any |= chosen[k];
        ok = any && try_lines(lt, r, &lines, chosen, &text, &after);
    }
    size_t added = 0;
    for (size_t k = 0; ok && k < lines.len; k++)
        added += chosen[k];
    if (ok) {
        bool written = ol_noqa_write(&r->src, &after.src, r->path, r->snapshot, text.data ? text.data : "", text.len,
                                     outcome);
        if (written) {
            /* r becomes the file as written: what is left is what could not be suppressed */
            struct ol_file_snapshot *snap = r->snapshot;
            bool from_stdin = r->from_stdin;
            r->snapshot = NULL;
            ol_file_result_free(r);
            *r = after;
            r->snapshot = snap;
            r->from_stdin = from_stdin;
            outcome->applied = added;
        } else {
            ol_file_result_free(&after);
        }
    }
    for (size_t k = 0; k < lines.len && !outcome->error; k++)
        if (!ok || !chosen[k])
            ol_vec_push(&r->warnings, ol_xasprintf("%s:%u: no noqa directive added: a comment at the end of this line "
                                                   "would not be one, or would change the code (a string or a "
                                                   "backslash continues it); its findings are reported",
                                                   r->path, lines.items[k].line + 1));
    ol_buf_free(&text);
    free(chosen);
    ol_noqa_lines_free(&lines);
}

/* ---- one input ------------------------------------------------------------------- */

/* Reads, lints and (as the run asks) fixes or adds noqa to input i, then
 * makes its part of the report. */
static void lint_input(ol_linter *lt, const ol_input *in, const char *stdin_bytes, size_t stdin_len,
                       const ol_run_options *run, ol_file_result *r)
{
    if (run)
        ol_guard_maybe_fail(run->guard, in->path);
    const ol_settings *saved = lt->settings;
    if (in->settings)
        lt->settings = in->settings;
    bool snapshot = run && (run->fix_mode == OL_FIX_WRITE || run->add_noqa);
    if (!ol_lint_read(lt, in, stdin_bytes, stdin_len, snapshot, r)) {
        lt->settings = saved;
        return;
    }
    uint64_t fix_start = lt->timings ? ol_now_ns() : 0;
    if (run && run->add_noqa && !in->from_stdin) {
        ol_fix_outcome outcome;
        add_noqa(lt, r, &outcome);
        r->noqa_added = outcome.applied;
        r->fix_error = outcome.error;
        r->fix_failed = outcome.failed;
        ol_snapshot_free(r->snapshot);
        r->snapshot = NULL;
    } else if (run && run->fix_mode != OL_FIX_NONE) {
        ol_fix_mode mode = (ol_fix_mode)run->fix_mode;
        if (run->guard && run->guard->probe && mode == OL_FIX_WRITE)
            mode = OL_FIX_DIFF; /* a probe re-runs a file to see it fail, and writes nothing */
        if (in->from_stdin && mode == OL_FIX_WRITE)
            mode = OL_FIX_OUTPUT;
        ol_fix_outcome outcome;
        ol_fix_file(lt, r, mode, run->unsafe_fixes, &outcome);
        r->fixed = outcome.applied;
        r->fix_diff = outcome.diff;
        r->fix_error = outcome.error;
        r->fix_failed = outcome.failed;
        ol_snapshot_free(r->snapshot);
        r->snapshot = NULL;
        r->fix_output = outcome.output;
        r->fix_output_len = outcome.output_len;
        if (mode == OL_FIX_OUTPUT && !r->fix_output) {
            /* nothing changed: stdin goes back out as it came */
            r->fix_output = ol_xmalloc(stdin_len + 1);
            memcpy(r->fix_output, stdin_bytes, stdin_len);
            r->fix_output_len = stdin_len;
        }
        if (lt->timings)
            lt->timings->fix_ns += ol_now_ns() - fix_start;
    }
    /* keep the text only while a finding needs it for a code frame, and
     * only until the file's part of the report is made */
    if (r->diags.len == 0) {
        ol_source_free(&r->src);
        r->has_source = false;
    } else if (run && run->render) {
        ol_render_result(run->render, r);
        /* streamed, the part is written from its text: the findings keep
         * only what the run's end counts (what stream_out leaves of them
         * once written), since a file linted ahead of its turn may wait
         * for thousands of others before it */
        if (run->stream && r->rendered)
            for (size_t k = 0; k < r->diags.len; k++)
                ol_diag_slim(&r->diags.items[k]);
    }
    lt->settings = saved;
}

/* ---- the pool ------------------------------------------------------------- */

typedef struct pool_job {
    ol_project *project; /* NULL when the run has one file */
    ol_kept_trees *kept; /* with a project: trees parsed for a summary, for their file's lint */
    const ol_grammar *grammar;
    const ol_settings *settings;
    const ol_run_options *run;
    const ol_input *inputs;
    size_t count;
    const char *stdin_bytes;
    size_t stdin_len;
    ol_file_result *results;
    atomic_size_t next;
    atomic_size_t workers; /* numbers each worker, for its supervisor slot */
    pthread_mutex_t lock; /* guards merging timings */
    /* streaming the report (run->stream): files done, and the first not yet
     * written; guarded by out_lock */
    bool *done;
    size_t cursor;
    pthread_mutex_t out_lock;
} pool_job;

/* A file a crashed run failed on (supervise.c): reported, not linted. */
static void set_aside(const pool_job *job, const ol_input *in, const ol_quarantined *q, ol_file_result *r)
{
    memset(r, 0, sizeof(*r));
    r->from_stdin = in->from_stdin;
    ol_result_io_error(r, in->path, q->reason);
    free(ol_vec_last(&r->diags).help);
    ol_vec_last(&r->diags).help =
        ol_xstrdup("the other files were analyzed; exclude this one (--exclude) until the bug is fixed");
    if (in->from_stdin && job->run && job->run->fix_mode == OL_FIX_WRITE && job->stdin_bytes) {
        /* `--fix -` prints the fixed code, which an editor puts in place of
         * its buffer: what it gets back is the code as it came */
        r->fix_output = ol_xmalloc(job->stdin_len + 1);
        memcpy(r->fix_output, job->stdin_bytes, job->stdin_len);
        r->fix_output[job->stdin_len] = '\0';
        r->fix_output_len = job->stdin_len;
    }
}

static const ol_guard *job_guard(const pool_job *job)
{
    return job->run ? job->run->guard : NULL;
}

/* Whether the supervisor says input i is not to be linted in this child
 * (quarantined after a crash, or not the one a probe child tries); r, when
 * given, gets what is reported instead. */
static bool guard_withholds(const pool_job *job, size_t i, ol_file_result *r)
{
    const ol_guard *guard = job_guard(job);
    if (!guard)
        return false;
    const ol_input *in = &job->inputs[i];
    const ol_quarantined *q = ol_guard_quarantined(guard, i, in->path);
    if (q) {
        if (r)
            set_aside(job, in, q, r);
        return true;
    }
    if (ol_guard_skips(guard, i, in->path)) {
        if (r) {
            memset(r, 0, sizeof(*r));
            r->path = ol_xstrdup(in->path);
        }
        return true;
    }
    return false;
}

/* Lints (or only summarises) input i with the worker's supervisor slot
 * naming it: a file linted inside another's rules (project.h) is the
 * suspect while it runs, and then the outer file is again. */
static void lint_guarded(pool_job *job, ol_linter *lt, size_t i, const ol_run_options *run, ol_file_result *r)
{
    const ol_guard *guard = job_guard(job);
    size_t outer = lt->file;
    bool nested = lt->depth > 0;
    lt->file = i;
    lt->depth++;
    ol_guard_begin(guard, lt->slot, i, job->inputs[i].path);
    lint_input(lt, &job->inputs[i], job->stdin_bytes, job->stdin_len, run, r);
    if (nested)
        ol_guard_begin(guard, lt->slot, outer, job->inputs[outer].path);
    else
        ol_guard_end(guard, lt->slot);
    lt->depth--;
    lt->file = outer;
}

/* Input i is done: its part of the report, and those of the done files
 * after it, are written if every file before them has been. */
static void stream_out(pool_job *job, size_t i)
{
    ol_report_writer *w = job->run ? job->run->stream : NULL;
    if (!w)
        return;
    pthread_mutex_lock(&job->out_lock);
    job->done[i] = true;
    while (job->cursor < job->count && job->done[job->cursor]) {
        ol_file_result *r = &job->results[job->cursor++];
        ol_writer_part(w, r);
        for (size_t k = 0; k < r->diags.len; k++)
            ol_diag_slim(&r->diags.items[k]);
        free(r->rendered);
        r->rendered = NULL;
        r->rendered_len = 0;
        r->held = r->spilled = false;
        r->written = true;
    }
    /* linted ahead of its turn: its part waits for the files before it */
    if (!job->results[i].written)
        ol_writer_hold(w, &job->results[i]);
    pthread_mutex_unlock(&job->out_lock);
}

/* Lints input i on this thread, as the one that claimed it. */
static void lint_claimed(pool_job *job, ol_linter *lt, size_t i)
{
    if (!guard_withholds(job, i, &job->results[i]))
        lint_guarded(job, lt, i, job->run, &job->results[i]);
    if (job->project)
        ol_project_publish_missing(job->project, i);
    stream_out(job, i);
}

/* Files importing each other are linted one inside the other on a thread;
 * past this depth, or once the files of the chain hold this much text
 * (each keeps its tree and model until the one it waits on is done: on the
 * benchmark's corpus, chains of large modules held 17 MB of them), only a
 * summary is built, and the file's tree is kept for its own turn. */
#define OL_MAX_NESTED_FILES 16
#define OL_MAX_NESTED_BYTES ((size_t)128 * 1024)

/* The project's processor: a file's rules asked about file i, which has no
 * summary yet (project.h). */
static void process_file(void *arg, void *worker_linter, size_t i)
{
    pool_job *job = arg;
    ol_linter *lt = worker_linter;
    uint64_t start = lt->timings ? ol_now_ns() : 0;
    /* words read inside this file's turn are in the time it takes: not
     * counted again for the asking rule (ol_project_words_rewind) */
    uint64_t words0 = ol_project_words_ns();
    bool saved_only = lt->summary_only;
    uint64_t saved_nested = lt->nested_ns;
    /* the asking file's model waits while this one is linted: what it
     * caches only to answer faster is let go (ol_model_trim) */
    if (lt->model)
        ol_model_trim(lt->model);
    bool nest = lt->depth < OL_MAX_NESTED_FILES && lt->chain_bytes < OL_MAX_NESTED_BYTES;
    if (nest && ol_project_claim(job->project, i)) {
        lt->summary_only = false;
        if (lt->timings)
            lt->timings->linted_ahead++;
        lint_claimed(job, lt, i);
    } else if (!ol_project_claimed(job->project, i) || !nest || ol_project_evicted(job->project, i)) {
        if (!guard_withholds(job, i, NULL)) {
            ol_file_result scratch;
            lt->summary_only = true;
            /* a file whose own lint is still to come: its tree is kept for it */
            lt->keep_tree = !ol_project_claimed(job->project, i);
            if (lt->timings && lt->keep_tree)
                lt->timings->summarized_ahead++;
            lint_guarded(job, lt, i, NULL, &scratch);
            lt->keep_tree = false;
            ol_file_result_free(&scratch);
        }
        ol_project_publish_missing(job->project, i);
    }
    lt->summary_only = saved_only;
    lt->nested_ns = saved_nested + (lt->timings ? ol_now_ns() - start : 0);
    ol_project_words_rewind(words0);
}

static void *worker(void *arg)
{
    pool_job *job = arg;
    ol_linter lt;
    ol_linter_init(&lt, job->grammar, job->settings);
    lt.project = job->project;
    lt.kept = job->kept;
    lt.slot = atomic_fetch_add(&job->workers, 1);
    ol_timings mine;
    bool timed = job->run && job->run->timings;
    if (timed) {
        ol_timings_init(&mine);
        lt.timings = &mine;
    }
    for (;;) {
        size_t i = atomic_fetch_add(&job->next, 1);
        if (i >= job->count)
            break;
        if (!job->project || ol_project_claim(job->project, i))
            lint_claimed(job, &lt, i);
    }
    if (timed) {
        pthread_mutex_lock(&job->lock);
        ol_timings_add(job->run->timings, &mine);
        pthread_mutex_unlock(&job->lock);
        ol_timings_free(&mine);
    }
    ol_linter_free(&lt);
    return NULL;
}

/* The bytes of other files' summaries a run keeps: enough for every file of
 * a repository of about 1,500 modules (the benchmark's corpus of 1,483 files
 * holds 5.9 MB of them), so that only larger runs parse a file twice (when
 * it is asked about after its summary was dropped), and a bound on memory
 * however many files there are. The generated corpus (3,117 files, 18 MB
 * of summaries) builds as many again with 6.5 MB as with 16 (117), and
 * peaks at 23.4 MB with the default rules on one thread (25.1 with 8 MB).
 * OOMLINT_SUMMARY_BUDGET_KB sets it (tests make it tiny to exercise the
 * rebuilds). */
#define OL_SUMMARY_BUDGET ((size_t)13 * 512 * 1024)

/* The bytes of packed trees kept for their file's lint (ol_kept_trees),
 * about 1.5 bytes per byte of text: the hundreds of files a large run
 * summarizes ahead of their turn (15 MB at most on the benchmark's corpus),
 * so that a run parses each file once unless more than that wait at once. */
#define OL_KEPT_TREES_BUDGET ((size_t)16 * 1024 * 1024)

void ol_lint_all(const ol_grammar *g, const ol_settings *s, const ol_run_options *run, const ol_input *inputs,
                 size_t count, const char *stdin_bytes, size_t stdin_len, ol_file_result *results, int threads)
{
    pool_job job;
    job.grammar = g;
    job.settings = s;
    job.run = run;
    job.inputs = inputs;
    job.count = count;
    job.stdin_bytes = stdin_bytes;
    job.stdin_len = stdin_len;
    job.results = results;
    /* several files: their functions' summaries are shared between them */
    job.project = NULL;
    if (count > 1) {
        job.project = ol_project_new();
        /* the project numbers its files as the inputs are numbered; two
         * inputs that are one file (standard input named as a file also
         * given on disk) would shift that numbering and leave a file
         * unlinted, so such a run lints each file on its own */
        bool aligned = true;
        for (size_t i = 0; i < count && aligned; i++)
            aligned = ol_project_add(job.project, inputs[i].path) == i;
        if (!aligned) {
            ol_project_free(job.project);
            job.project = NULL;
        }
    }
    if (job.project) {
        for (size_t i = 0; i < count; i++)
            if (inputs[i].from_stdin)
                ol_project_text_elsewhere(job.project, i);
        ol_project_index(job.project);
        ol_project_set_processor(job.project, process_file, &job);
        ol_project_set_budget(job.project, ol_env_kb("OOMLINT_SUMMARY_BUDGET_KB", 1, OL_SUMMARY_BUDGET));
    }
    job.kept = job.project ? ol_kept_trees_new(count, OL_KEPT_TREES_BUDGET) : NULL;
    atomic_init(&job.next, 0);
    atomic_init(&job.workers, 0);
    pthread_mutex_init(&job.lock, NULL);
    pthread_mutex_init(&job.out_lock, NULL);
    job.done = run && run->stream ? ol_xcalloc(count ? count : 1, sizeof(bool)) : NULL;
    job.cursor = 0;
    if (threads <= 0) {
        long cpus = sysconf(_SC_NPROCESSORS_ONLN);
        threads = cpus > 0 ? (int)cpus : 1;
    }
    if ((size_t)threads > count)
        threads = (int)count;
    if (threads < 1) {
        pthread_mutex_destroy(&job.lock);
        pthread_mutex_destroy(&job.out_lock);
        free(job.done);
        ol_kept_trees_free(job.kept);
        ol_project_free(job.project);
        return;
    }
    /* even one worker runs on a thread of its own: the model walk wants a
     * bigger stack than the main thread may have */
    pthread_t *ids = ol_xcalloc((size_t)threads, sizeof(pthread_t));
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    /* the model walk recurses up to OL_MODEL_MAX_DEPTH frames */
    pthread_attr_setstacksize(&attr, 64u * 1024u * 1024u);
    int started = 0;
    for (int i = 0; i < threads; i++) {
        if (pthread_create(&ids[i], &attr, worker, &job) != 0)
            break;
        started++;
    }
    pthread_attr_destroy(&attr);
    if (started == 0)
        worker(&job); /* no threads to be had: do it here */
    for (int i = 0; i < started; i++)
        pthread_join(ids[i], NULL);
    free(ids);
    pthread_mutex_destroy(&job.lock);
    pthread_mutex_destroy(&job.out_lock);
    free(job.done);
    if (job.project && run && run->timings) {
        ol_project_usage u;
        ol_project_stats(job.project, &u);
        run->timings->summary_bytes = u.most_held;
        run->timings->summary_evictions = u.evictions;
        run->timings->summary_rebuilds = u.rebuilds;
    }
    ol_kept_trees_free(job.kept);
    ol_project_free(job.project);
}
