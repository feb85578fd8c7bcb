/*
 * lint.c - running the pipeline on one file, and on many in parallel.
 */
#include "lint.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ask.h"
#include "emit.h"
#include "facts.h"
#include "fix.h"
#include "model.h"
#include "notebook.h"
#include "project.h"
#include "pyfloor.h"
#include "rule.h"
#include "supervise.h"
#include "suppress.h"
#include "summary.h"
#include "writefile.h"

void ol_linter_init(ol_linter *lt, const ol_grammar *g, const ol_settings *s)
{
    ol_parser_init(&lt->parser, g);
    lt->settings = s;
    lt->timings = NULL;
    lt->project = NULL;
    lt->file = 0;
    lt->depth = 0;
    lt->chain_bytes = 0;
    lt->summary_only = false;
    lt->nested_ns = 0;
    lt->slot = 0;
    lt->kept = NULL;
    lt->keep_tree = false;
    lt->model = NULL;
}

/* ---- trees kept for their file's lint ----------------------------------------------- */

/* A file's tree, packed (ol_tree_pack): the file's own lint unpacks it
 * instead of parsing the text again, builds the model anew and goes on
 * from the summary the store still holds (or summarizes the file again, a
 * fraction of a parse, when the store dropped it). Packed, a tree takes
 * about a tenth of what it and its model take live (about 1.5 bytes per
 * byte of text), so the files summarized ahead of their turn (hundreds, on
 * a large run) fit. */
typedef struct kept_tree {
    ol_packed_tree packed;
    /* the text it was parsed from, which the file's own lint reads anew:
     * the tree is used only when that text has this length and hash */
    uint32_t text_len;
    uint64_t text_hash;
    size_t bytes;
} kept_tree;

struct ol_kept_trees {
    pthread_mutex_t lock;
    kept_tree **files; /* by the project's file index */
    size_t count;
    size_t bytes, budget;
};

ol_kept_trees *ol_kept_trees_new(size_t files, size_t budget)
{
    ol_kept_trees *k = ol_xcalloc(1, sizeof(*k));
    pthread_mutex_init(&k->lock, NULL);
    k->files = ol_xcalloc(files ? files : 1, sizeof(kept_tree *));
    k->count = files;
    k->budget = budget;
    return k;
}

static void kept_free(kept_tree *e)
{
    if (!e)
        return;
    ol_packed_tree_free(&e->packed);
    free(e);
}

void ol_kept_trees_free(ol_kept_trees *k)
{
    if (!k)
        return;
    for (size_t i = 0; i < k->count; i++)
        kept_free(k->files[i]);
    free(k->files);
    pthread_mutex_destroy(&k->lock);
    free(k);
}

/* A hash of a text, eight bytes at a time. */
static uint64_t text_hash(const char *s, size_t n)
{
    uint64_t h = 0x9E3779B97F4A7C15ull ^ (uint64_t)n;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t w;
        memcpy(&w, s + i, 8);
        h = (h ^ w) * 0xFF51AFD7ED558CCDull;
        h ^= h >> 32;
    }
    uint64_t w = 0;
    memcpy(&w, s + i, n - i);
    h = (h ^ w) * 0xC4CEB9FE1A85EC53ull;
    return h ^ (h >> 29);
}

/* Keeps file's tree, parsed from the text src, packed when it fits the
 * bound; *tree is freed either way. */
static void keep_tree(ol_kept_trees *k, size_t file, const ol_source *src, ol_tree *tree)
{
    if (file >= k->count) {
        ol_tree_free(tree);
        return;
    }
    kept_tree *e = ol_xcalloc(1, sizeof(*e));
    ol_tree_pack(tree, &e->packed);
    e->text_len = src->len;
    e->text_hash = text_hash(src->text, src->len);
    e->bytes = sizeof(*e) + e->packed.len + e->packed.comments.cap * sizeof(ol_span);
    pthread_mutex_lock(&k->lock);
    kept_tree *old = k->files[file];
    size_t held = k->bytes - (old ? old->bytes : 0);
    bool fits = held + e->bytes <= k->budget;
    if (fits) {
        k->files[file] = e;
        k->bytes = held + e->bytes;
    }
    pthread_mutex_unlock(&k->lock);
    kept_free(fits ? old : e);
}

/* What was kept for file, when it came from the same text as src; the
 * entry is dropped either way. */
static kept_tree *take_tree(ol_kept_trees *k, size_t file, const ol_source *src)
{
    if (file >= k->count)
        return NULL;
    pthread_mutex_lock(&k->lock);
    kept_tree *e = k->files[file];
    k->files[file] = NULL;
    if (e)
        k->bytes -= e->bytes;
    pthread_mutex_unlock(&k->lock);
    if (e && !(e->text_len == src->len && e->text_hash == text_hash(src->text, src->len))) {
        kept_free(e);
        e = NULL;
    }
    return e;
}

void ol_timings_init(ol_timings *t)
{
    memset(t, 0, sizeof(*t));
    t->rule_ns = ol_xcalloc(ol_rule_count, sizeof(uint64_t));
}

void ol_timings_add(ol_timings *into, const ol_timings *from)
{
    into->read_ns += from->read_ns;
    into->parse_ns += from->parse_ns;
    into->model_ns += from->model_ns;
    into->summarize_ns += from->summarize_ns;
    into->rebuild_ns += from->rebuild_ns;
    into->rules_ns += from->rules_ns;
    into->words_ns += from->words_ns;
    into->filter_ns += from->filter_ns;
    into->fix_ns += from->fix_ns;
    into->bytes += from->bytes;
    into->files += from->files;
    into->linted_ahead += from->linted_ahead;
    into->summarized_ahead += from->summarized_ahead;
    for (size_t i = 0; i < ol_rule_count; i++)
        into->rule_ns[i] += from->rule_ns[i];
}

void ol_timings_free(ol_timings *t)
{
    free(t->rule_ns);
    t->rule_ns = NULL;
}

void ol_linter_free(ol_linter *lt)
{
    ol_parser_free(&lt->parser);
}

void ol_file_result_free(ol_file_result *r)
{
    free(r->path);
    if (r->has_source)
        ol_source_free(&r->src);
    ol_diag_vec_free(&r->diags);
    free(r->fix_diff);
    free(r->fix_error);
    free(r->fix_output);
    free(r->rendered);
    ol_snapshot_free(r->snapshot);
    for (size_t i = 0; i < r->warnings.len; i++)
        free(r->warnings.items[i]);
    ol_vec_free(&r->warnings);
    memset(r, 0, sizeof(*r));
}

void ol_result_io_error(ol_file_result *r, const char *path, const char *reason)
{
    if (!r->path)
        r->path = ol_xstrdup(path);
    ol_diag d = {0};
    d.rule = &ol_rule_oom001;
    d.message = ol_xstrdup(reason);
    d.help = ol_xstrdup("oomlint skipped this file; fix the cause above and run again");
    ol_vec_push(&r->diags, d);
    r->read_ok = false;
}

static bool same_finding(const ol_diag *a, const ol_diag *b)
{
    return a->rule == b->rule && a->start == b->start && a->end == b->end;
}

/* "path:line" of a byte offset, or "path:cell N:line" in a notebook. */
static char *place(const char *path, const ol_source *src, uint32_t at)
{
    uint32_t line = ol_source_line_index(src, at);
    const ol_cell *cell = src->notebook ? ol_source_cell(src, line) : NULL;
    if (cell)
        return ol_xasprintf("%s:cell %u:%u", path, cell->index, line - cell->first_line + 1);
    return ol_xasprintf("%s:%u", path, line + 1);
}

/* An unknown code in a suppression is a typo that suppresses nothing, and a
 * directive written wrong (suppress.h) suppresses something other than what
 * was meant; say so on stderr whether or not OOM003 runs, as Ruff does. In `# noqa` only
 * codes that look like oomlint's count: the comment is shared with flake8
 * and Ruff, whose codes (E501) are none of our business. */
static void warn_unknown_codes(const ol_suppressions *sup, const ol_source *src, ol_file_result *r)
{
    for (size_t i = 0; i < sup->items.len; i++) {
        const ol_suppression *s = &sup->items.items[i];
        for (size_t k = 0; k < s->codes.len; k++) {
            const char *code = s->codes.items[k];
            if (ol_rule_find(code) || (s->kind == OL_SUPPRESS_NOQA && strncmp(code, "OOM", 3) != 0))
                continue;
            char *where = place(r->path, src, s->code_spans.items[k].start);
            ol_vec_push(&r->warnings,
                        ol_xasprintf("%s: unknown rule code '%s' in '# %s' (see 'oomlint rules')", where, code,
                                     s->kind == OL_SUPPRESS_NOQA        ? "noqa"
                                     : s->kind == OL_SUPPRESS_FILE_NOQA ? "oomlint: noqa"
                                                                        : "oomlint: disable"));
            free(where);
        }
    }
    for (size_t i = 0; i < sup->invalid.len; i++) {
        char *where = place(r->path, src, sup->invalid.items[i].at);
        ol_vec_push(&r->warnings, ol_xasprintf("%s: %s", where, sup->invalid.items[i].message));
        free(where);
    }
}

static bool has_hard_error(const ol_tree *t);

/* One finding stands for a notebook cell's syntax errors: its help says how
 * many more the cell holds. */
static void note_more_errors(ol_diag *d, size_t more)
{
    char *help = ol_xasprintf("%s (%zu more syntax error%s in this cell)", d->help, more, more == 1 ? "" : "s");
    free(d->help);
    d->help = help;
}

/* Drops findings of rules that are off and findings a comment suppresses,
 * then, when OOM003 is on and the whole file was analyzed, reports the
 * suppressions that were not needed. */
static void filter(const ol_settings *s, const ol_tree *t, ol_file_result *r)
{
    ol_diag_vec *diags = &r->diags;
    ol_suppressions sup;
    ol_suppressions_collect(&sup, t);
    warn_unknown_codes(&sup, t->src, r);
    ol_diag_vec_sort(diags);
    size_t keep = 0;
    ol_diag last_hidden = {0};
    bool have_hidden = false;
    for (size_t i = 0; i < diags->len; i++) {
        ol_diag *d = &diags->items[i];
        size_t rule = ol_rule_index(d->rule);
        bool hidden = s->hidden && s->hidden[rule];
        /* what runs once (a one-off tensor, a reload in one process) or
         * never on a GPU is reported only to those who asked for the rule
         * by its code */
        bool exact = s->exact && s->exact[rule];
        bool drop = (!s->enabled[rule] && !hidden) || (d->once && !exact);
        /* a test function outside a test file: as the test files' */
        if (!drop && d->in_test && s->test_defaults && !hidden)
            hidden = true;
        if (!drop && d->rule != &ol_rule_oom001) {
            uint32_t line = ol_source_line_index(t->src, d->start) + 1;
            drop = ol_suppression_use(&sup, line, d->rule->code);
        }
        if (!drop && keep > 0 && same_finding(&diags->items[keep - 1], d)) {
            /* one finding made twice: the one read from the code wins over a guess */
            if (!hidden && ol_diag_supersedes(d, &diags->items[keep - 1])) {
                ol_diag_free(&diags->items[keep - 1]);
                diags->items[keep - 1] = *d;
                continue;
            }
            drop = true;
        }
        /* counted after suppression: a `# noqa` of it is not unused */
        if (!drop && d->host_only && !exact) {
            r->host_only++;
            drop = true;
        }
        if (!drop && hidden) {
            /* found, and not reported only because of the default for test
             * code: counted (once, as a reported one would be kept once) */
            ol_diag key = {.rule = d->rule, .start = d->start, .end = d->end};
            if (!(have_hidden && same_finding(&last_hidden, &key)))
                r->hidden++;
            last_hidden = key;
            have_hidden = true;
            drop = true;
        }
        if (drop) {
            ol_diag_free(d);
            continue;
        }
        diags->items[keep++] = *d;
    }
    diags->len = keep;
    /* with a syntax error the rules saw part of the file: a suppression may
     * look unused only because its finding could not be made */
    if (s->enabled[ol_rule_index(&ol_rule_oom003)] && !t->timed_out && !has_hard_error(t)) {
        ol_diag_vec unused = {0};
        ol_check check = {NULL, t, t->src, &ol_rule_oom003, &unused};
        ol_report_unused_suppressions(&check, &sup, s->enabled);
        for (size_t i = 0; i < unused.len; i++) {
            uint32_t line = ol_source_line_index(t->src, unused.items[i].start) + 1;
            if (ol_suppression_use_other(&sup, line, ol_rule_oom003.code, unused.items[i].start))
                ol_diag_free(&unused.items[i]);
            else
                ol_vec_push(diags, unused.items[i]);
        }
        ol_vec_free(&unused);
        ol_diag_vec_sort(diags);
    }
    ol_suppressions_free(&sup);
}

/* A rule that read a node the tree does not have (see ol_node_at) may have
 * placed an edit at the absent node's offset, the top of the file: its
 * findings stand, their fixes are not offered. Findings from `from` on. */
static void drop_fixes(ol_diag_vec *diags, size_t from)
{
    for (size_t i = from; i < diags->len; i++) {
        ol_fix_free(diags->items[i].fix);
        diags->items[i].fix = NULL;
    }
}

static bool has_hard_error(const ol_tree *t)
{
    for (size_t i = 0; i < t->errors.len; i++)
        if (!t->errors.items[i].soft)
            return true;
    return false;
}

/* A syntax error in one notebook cell can make the parser misread the
 * cells after it. Each cell is parsed alone: its errors are reported where
 * they really are, and when the joined parse went wrong outside the broken
 * cells, the notebook is analyzed again with those cells blanked (same
 * length, so every position stays where it was). Returns true when *t now
 * parses *out (a blanked copy the caller frees); otherwise *t keeps the
 * joined tree, with the per-cell errors. */
static bool recover_notebook(ol_linter *lt, const ol_source *src, ol_tree *t, ol_source *out)
{
    char *text = ol_xstrndup(src->text, src->len);
    OL_VEC(ol_syntax_error) errors = {0};
    bool blanked = false, damage_elsewhere = false;
    for (size_t ci = 0; ci < src->cells.len; ci++) {
        const ol_cell *cell = &src->cells.items[ci];
        uint32_t start = src->line_starts[cell->first_line];
        uint32_t end = cell->first_line + cell->line_count < src->line_count
                           ? src->line_starts[cell->first_line + cell->line_count]
                           : src->len;
        ol_source one;
        ol_source_init_text(&one, src->path, ol_xstrndup(src->text + start, end - start), end - start);
        ol_tree ct;
        ol_parse(&lt->parser, &one, &ct);
        bool broken = has_hard_error(&ct);
        for (size_t e = 0; e < ct.errors.len; e++) {
            ol_syntax_error err = ct.errors.items[e];
            err.start += start;
            err.end += start;
            err.from += start;
            ct.errors.items[e].message = NULL;
            ol_vec_push(&errors, err);
        }
        if (broken) {
            blanked = true;
            for (uint32_t i = start; i < end; i++)
                if (text[i] != '\n')
                    text[i] = ' ';
        } else {
            /* the joined parse found an error in a cell that is fine alone */
            for (size_t e = 0; e < t->errors.len; e++)
                if (!t->errors.items[e].soft && t->errors.items[e].from >= start && t->errors.items[e].from < end)
                    damage_elsewhere = true;
        }
        ol_tree_free(&ct);
        ol_source_free(&one);
    }
    /* the per-cell errors replace the joined ones either way */
    for (size_t i = 0; i < t->errors.len; i++)
        free(t->errors.items[i].message);
    t->errors.len = 0;
    bool reparse = blanked && damage_elsewhere;
    if (reparse) {
        ol_source_init_text(out, src->path, text, src->len);
        ol_tree_free(t);
        ol_parse(&lt->parser, out, t);
        t->src = out;
        for (size_t i = 0; i < t->errors.len; i++)
            free(t->errors.items[i].message);
        t->errors.len = 0;
    } else {
        free(text);
    }
    for (size_t i = 0; i < errors.len; i++)
        ol_vec_push(&t->errors, errors.items[i]);
    ol_vec_free(&errors);
    return reparse;
}

/* What every rule's findings share, asked of the door once per file rather
 * than by each rule: a finding that speaks of GPU memory, on code that never
 * runs on a GPU, is kept only for those who select its rule by code (and
 * otherwise shows where the device comes from); a training rule's finding
 * inside a test function is left out as a test file's would be. */
static void ask_shared_facts(ol_model *m, const ol_settings *s, ol_file_result *r, size_t first)
{
    int gpu = -1;
    ol_reasons gpu_why = {0};
    for (size_t i = first; i < r->diags.len; i++) {
        ol_diag *d = &r->diags.items[i];
        if (!d->rule || !d->rule->check)
            continue;
        if (d->rule->device_memory) {
            if (gpu < 0)
                gpu = (int)ol_runs_on_gpu(m, &gpu_why);
            if (gpu != OL_GPU_YES && !s->ran_on_gpu)
                d->host_only = true;
            else
                ol_diag_because(d, m, &gpu_why);
        }
        if (!d->rule->in_tests) {
            ol_nid at = ol_node_covering(m->tree, d->start, d->end);
            ol_reasons why = {0};
            if (at != OL_NONE && ol_code_kind_at(m, at, &why) == OL_CODE_TEST) {
                d->in_test = true;
                ol_diag_because(d, m, &why);
            }
        }
    }
}

void ol_lint_source(ol_linter *lt, ol_source *src, ol_file_result *r)
{
    if (!r->path)
        r->path = ol_xstrdup(src->path);
    r->src = *src;
    memset(src, 0, sizeof(*src));
    r->has_source = true;
    r->read_ok = true;

    ol_timings *tm = lt->timings;
    uint64_t t0 = tm ? ol_now_ns() : 0;
    ol_project_time_words(tm != NULL);
    ol_tree tree;
    ol_source recovered;
    bool use_recovered = false;
    size_t text_len = r->src.len;
    lt->chain_bytes += text_len;
    /* the model lives on the heap: what it caches may point at it */
    ol_model *model = NULL;
    ol_file_summary *own = NULL;
    uint32_t model_absent = 0;
    kept_tree *kt = lt->kept && lt->project && !r->src.notebook ? take_tree(lt->kept, lt->file, &r->src) : NULL;
    bool reused = kt != NULL;
    if (kt) {
        /* the tree of this very text: the model is built from it below */
        ol_tree_unpack(&kt->packed, &r->src, &tree);
        own = ol_project_held(lt->project, lt->file);
        kept_free(kt);
    } else {
        ol_parse(&lt->parser, &r->src, &tree);
        /* a notebook's errors are read cell by cell (recover_notebook) */
        if (!r->src.notebook)
            ol_drop_cascades(&lt->parser, &r->src, &tree);
    }
    if (r->src.notebook && has_hard_error(&tree) && !tree.timed_out)
        use_recovered = recover_notebook(lt, &r->src, &tree, &recovered);
    if (tm) {
        uint64_t t1 = ol_now_ns();
        tm->parse_ns += t1 - t0;
        if (!reused) {
            /* files parsed: a kept tree is not parsed again */
            tm->bytes += r->src.len;
            tm->files++;
        }
        t0 = t1;
    }
    /* a notebook's cell that does not parse costs one finding: the cell is
     * often prose or output pasted into code, and every line of it would
     * otherwise be reported */
    const ol_cell *last_cell = NULL;
    ol_diag *cell_diag = NULL;
    size_t cell_errors = 0;
    for (size_t i = 0; i < tree.errors.len; i++) {
        if (r->src.notebook) {
            const ol_cell *cell =
                ol_source_cell(&r->src, ol_source_line_index(&r->src, tree.errors.items[i].start));
            if (cell && cell == last_cell && cell_diag) {
                cell_errors++;
                continue;
            }
            if (cell_diag && cell_errors > 0)
                note_more_errors(cell_diag, cell_errors);
            last_cell = cell;
            cell_errors = 0;
        }
        ol_diag d = {0};
        d.rule = &ol_rule_oom002;
        d.start = tree.errors.items[i].start;
        d.end = tree.errors.items[i].end;
        d.message = ol_xstrdup(tree.errors.items[i].message);
        d.help = ol_xstrdup(tree.timed_out ? "split the file, or exclude it with --exclude"
                                           : "fix the syntax; oomlint analyzed the rest of the file");
        ol_vec_push(&r->diags, d);
        cell_diag = r->src.notebook ? &ol_vec_last(&r->diags) : NULL;
    }
    if (cell_diag && cell_errors > 0)
        note_more_errors(cell_diag, cell_errors);
    /* a file only summarized reports nothing: its findings come in its turn */
    if (!tree.timed_out && !lt->summary_only)
        ol_python2_report(&tree, &r->diags);
    bool keep = lt->keep_tree && lt->kept && lt->summary_only && lt->project && !r->src.notebook && !tree.timed_out;
    if (!tree.timed_out) {
        if (!model) {
            model = ol_xmalloc(sizeof(*model));
            ol_model_build(model, &tree);
            /* reads of absent nodes (ol_node_at): the model's, then each rule's */
            model_absent = ol_absent_reads(&tree);
        }
        if (tm) {
            uint64_t t1 = ol_now_ns();
            tm->model_ns += t1 - t0;
            /* its summary was made ahead of its turn, from a model built then */
            if (reused)
                tm->rebuild_ns += t1 - t0;
            t0 = t1;
        }
        /* publish what this file's functions do before its rules ask about others' */
        ol_xref *xref = own ? ol_xref_resume(model, lt->project, lt->file, lt, own)
                            : ol_xref_begin(model, lt->project, lt->file, lt);
        if (own)
            ol_file_summary_release(own);
        if (tm) {
            uint64_t t1 = ol_now_ns();
            tm->summarize_ns += t1 - t0;
            t0 = t1;
        }
        ol_check check = {model, &tree, &r->src, NULL, &r->diags};
        const ol_settings *s = lt->settings;
        size_t first_rule_diag = r->diags.len;
        struct ol_model *outer = lt->model;
        lt->model = model;
        /* another framework's file (a Paddle port beside the PyTorch code):
         * every rule speaks of PyTorch's API, so none runs */
        bool foreign = !lt->summary_only && ol_other_framework(model);
        for (size_t i = 0; i < ol_rule_count && !lt->summary_only && !foreign; i++) {
            const ol_rule *rule = ol_rules[i];
            if (!rule->check || !(s->enabled[i] || (s->hidden && s->hidden[i])))
                continue;
            check.rule = rule;
            lt->nested_ns = 0;
            uint64_t words0 = ol_project_words_ns();
            size_t first_diag = r->diags.len;
            uint32_t absent = ol_absent_reads(&tree);
            model->asking = rule->code;
            rule->check(&check);
            model->asking = NULL;
            if (ol_absent_reads(&tree) != absent)
                drop_fixes(&r->diags, first_diag);
            if (tm) {
                /* another file linted on the way is timed as itself, and
                 * the words read for the rule's questions as their own phase */
                uint64_t t1 = ol_now_ns();
                uint64_t words = ol_project_words_ns() - words0;
                uint64_t aside = lt->nested_ns + words;
                uint64_t spent = t1 - t0 > aside ? t1 - t0 - aside : 0;
                tm->words_ns += words;
                tm->rule_ns[i] += spent;
                tm->rules_ns += spent;
                t0 = t1;
            }
        }
        ask_shared_facts(model, lt->settings, r, first_rule_diag);
        lt->model = outer;
        ol_xref_end(xref);
        if (model_absent)
            drop_fixes(&r->diags, 0);
        ol_model_free(model);
        free(model);
    }
    if (!lt->summary_only) {
        filter(lt->settings, &tree, r);
        ol_fix_fit_quotes(&tree, &r->diags);
        ol_fix_claim_statements(&tree, &r->diags);
    }
    if (keep)
        keep_tree(lt->kept, lt->file, &r->src, &tree);
    else
        ol_tree_free(&tree);
    if (use_recovered)
        ol_source_free(&recovered);
    lt->chain_bytes -= text_len;
    if (tm)
        tm->filter_ns += ol_now_ns() - t0;
}


bool ol_lint_read(ol_linter *lt, const ol_input *in, const char *stdin_bytes, size_t stdin_len, bool snapshot,
                  ol_file_result *r)
{
    memset(r, 0, sizeof(*r));
    r->path = ol_xstrdup(in->path);
    r->from_stdin = in->from_stdin;
    const ol_settings *saved = lt->settings;
    if (in->settings)
        lt->settings = in->settings;
    uint64_t read_start = lt->timings ? ol_now_ns() : 0;
    char *bytes = NULL;
    size_t len = 0;
    int err = in->error;
    if (!err) {
        if (in->from_stdin) {
            bytes = ol_xmalloc(stdin_len + 1);
            memcpy(bytes, stdin_bytes, stdin_len);
            bytes[stdin_len] = '\0';
            len = stdin_len;
        } else {
            struct stat st;
            err = ol_read_file_stat(in->path, OL_MAX_SOURCE_BYTES, &bytes, &len, &st);
            /* --fix writes only over the file it read */
            if (!err && snapshot)
                r->snapshot = ol_snapshot_new(&st, bytes, len);
        }
    }
    if (err) {
        ol_buf why = {0};
        ol_describe_read_error(&why, err, OL_MAX_SOURCE_BYTES, NULL);
        char *msg = ol_xasprintf("cannot read `%s`: %s", in->path, why.data);
        ol_buf_free(&why);
        ol_result_io_error(r, in->path, msg);
        free(msg);
        lt->settings = saved;
        return false;
    }
    ol_source src;
    ol_buf why = {0};
    bool ok;
    if (ol_is_notebook_path(in->path))
        ok = ol_notebook_load(&src, in->path, bytes, len, &why);
    else
        ok = ol_source_init(&src, in->path, bytes, len, &why);
    if (!ok) {
        char *msg = ol_xasprintf("cannot decode `%s`: %s", in->path, why.data ? why.data : "unknown reason");
        ol_result_io_error(r, in->path, msg);
        free(msg);
        ol_buf_free(&why);
        ol_source_free(&src);
        lt->settings = saved;
        return false;
    }
    ol_buf_free(&why);
    if (lt->timings)
        lt->timings->read_ns += ol_now_ns() - read_start;
    ol_lint_source(lt, &src, r);
    lt->settings = saved;
    return true;
}

void ol_lint_input(ol_linter *lt, const ol_input *in, const char *stdin_bytes, size_t stdin_len, ol_file_result *r)
{
    if (ol_lint_read(lt, in, stdin_bytes, stdin_len, false, r) && r->diags.len == 0) {
        ol_source_free(&r->src);
        r->has_source = false;
    }
}
