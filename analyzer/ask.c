/*
 * ask.c - the door's own state and its reasons (see ask.h for the design).
 *
 * The answers of one file are kept in the model (m->door), made on first
 * use and kept as long as the model: the door is asked only by rules, which
 * run once the file's cross references answer (after the last
 * ol_model_forget), so a question asked twice costs one answer, and every
 * rule gets the same one.
 * The texts of the reasons live in the door's arena, so a rule may keep an
 * ol_reasons as long as the model lives.
 */
#include "ask_internal.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "eval.h"
#include "summary.h"
#include "torchfloor.h"

static void door_free(void *p)
{
    ol_door *d = p;
    if (!d)
        return;
    if (d->load_free)
        d->load_free(d->load);
    ol_arena_free(&d->arena);
    free(d->run_grad);
    free(d->often);
    free(d->kind);
    free(d->param_free);
    free(d->first_grad);
    free(d->cwd);
    free(d);
}

/* ---- the audit of answers (tests only) ---------------------------------------------- */

static pthread_once_t audit_once = PTHREAD_ONCE_INIT;
static pthread_mutex_t audit_lock = PTHREAD_MUTEX_INITIALIZER;
static FILE *audit_file;

static void audit_open(void)
{
    const char *path = getenv("OOMLINT_DOOR_AUDIT");
    if (path && *path)
        audit_file = fopen(path, "a");
}

void ol_door_audit(ol_model *m, const char *question, ol_nid n, int answer)
{
    pthread_once(&audit_once, audit_open);
    if (!audit_file)
        return;
    const ol_tree *t = m->tree;
    const char *path = t->src && t->src->path ? t->src->path : "-";
    uint32_t start = n != OL_NONE && n < t->nodes.len ? t->nodes.items[n].start : 0;
    uint32_t end = n != OL_NONE && n < t->nodes.len ? t->nodes.items[n].end : 0;
    pthread_mutex_lock(&audit_lock);
    fprintf(audit_file, "%s\t%u\t%u\t%s\t%d\t%s\n", path, start, end, question, answer,
            m->asking ? m->asking : "-");
    fflush(audit_file);
    pthread_mutex_unlock(&audit_lock);
}

ol_door *ol_door_of(ol_model *m)
{
    if (!m->door) {
        ol_door *d = ol_xcalloc(1, sizeof(*d));
        size_t nf = m->functions.len ? m->functions.len : 1;
        d->run_grad = ol_xcalloc(nf, sizeof(d->run_grad[0]));
        d->often = ol_xcalloc(nf, sizeof(d->often[0]));
        d->kind = ol_xcalloc(nf, sizeof(d->kind[0]));
        d->param_free = ol_xcalloc(m->classes.len + 1, sizeof(d->param_free[0]));
        d->first_grad = ol_xcalloc(m->functions.len + 1, sizeof(d->first_grad[0]));
        d->gpu = -1;
        d->xla = -1;
        m->door = d;
        m->door_free = door_free;
    }
    return m->door;
}

const char *ol_door_printf(ol_model *m, const char *fmt, ...)
{
    ol_door *d = ol_door_of(m);
    ol_buf b = {0};
    va_list ap;
    va_start(ap, fmt);
    ol_buf_vprintf(&b, fmt, ap);
    va_end(ap);
    char *kept = ol_arena_strndup(&d->arena, b.data ? b.data : "", b.len);
    ol_buf_free(&b);
    return kept;
}

/* A project path (absolute) as the user named the run's files: relative to
 * the working directory when it lies under it. */
const char *ol_door_path(ol_model *m, const char *path)
{
    if (!path)
        return NULL;
    ol_door *d = ol_door_of(m);
    if (!d->cwd) {
        char buf[4096];
        d->cwd = ol_xstrdup(getcwd(buf, sizeof(buf)) ? buf : "");
    }
    size_t n = strlen(d->cwd);
    if (n > 0 && strncmp(path, d->cwd, n) == 0 && path[n] == '/')
        return path + n + 1;
    return path;
}

void ol_reasons_add(ol_reasons *why, ol_nid node, const char *path, uint32_t line, bool step, const char *text)
{
    if (!why || why->len >= OL_REASONS_MAX || !text)
        return;
    if (node == OL_NONE && !path)
        return;
    ol_reason *r = &why->items[why->len++];
    r->node = node;
    r->path = path;
    r->line = line;
    r->text = text;
    r->step = step;
}

void ol_reasons_merge(ol_reasons *into, const ol_reasons *from)
{
    if (!into || !from)
        return;
    for (size_t i = 0; i < from->len; i++) {
        const ol_reason *r = &from->items[i];
        bool dup = false;
        for (size_t k = 0; k < into->len && !dup; k++)
            dup = into->items[k].node == r->node && into->items[k].line == r->line &&
                  (into->items[k].path == r->path ||
                   (into->items[k].path && r->path && strcmp(into->items[k].path, r->path) == 0)) &&
                  strcmp(into->items[k].text, r->text) == 0;
        if (!dup)
            ol_reasons_add(into, r->node, r->path, r->line, r->step, r->text);
    }
    if (!into->guess)
        into->guess = from->guess;
}

char *ol_door_function_label(ol_model *m, uint32_t fi)
{
    if (fi >= m->functions.len)
        return ol_xstrdup("module code");
    const ol_function *f = &m->functions.items[fi];
    const char *name = f->name ? ol_sym_str(m, f->name) : "<lambda>";
    if (f->cls != OL_NO_INDEX && m->classes.items[f->cls].name)
        return ol_xasprintf("`%s.%s()`", ol_sym_str(m, m->classes.items[f->cls].name), name);
    return ol_xasprintf("`%s()`", name);
}

void ol_because(ol_reasons *why, ol_model *m, ol_nid node, const char *fmt, ...)
{
    if (!why || why->len >= OL_REASONS_MAX)
        return;
    ol_buf b = {0};
    va_list ap;
    va_start(ap, fmt);
    ol_buf_vprintf(&b, fmt, ap);
    va_end(ap);
    ol_door *d = ol_door_of(m);
    const char *text = ol_arena_strndup(&d->arena, b.data ? b.data : "", b.len);
    ol_buf_free(&b);
    ol_reasons_add(why, node, NULL, 0, false, text);
}

void ol_diag_because(ol_diag *d, ol_model *m, const ol_reasons *why)
{
    if (!d || !why)
        return;
    const ol_tree *t = m->tree;
    for (size_t i = 0; i < why->len; i++) {
        const ol_reason *r = &why->items[i];
        ol_note_kind kind = r->step ? OL_NOTE_STEP : OL_NOTE_FACT;
        if (r->path)
            ol_diag_note_file(d, kind, r->path, r->line, 0, 0, 0, "%s", r->text);
        else if (r->node != OL_NONE && r->node < t->nodes.len)
            ol_diag_note(d, kind, t->nodes.items[r->node].start, t->nodes.items[r->node].end, "%s", r->text);
    }
    if (why->guess && !d->guess)
        d->guess = why->guess;
}

unsigned ol_project_torch_floor(const char *path)
{
    return ol_torch_floor(path);
}

size_t ol_door_param_values(ol_model *m, const ol_def *d, ol_nid *out, size_t cap)
{
    const ol_tree *t = m->tree;
    uint32_t fi = m->scopes.items[d->scope].function;
    if (fi == OL_NO_INDEX || d->kind != OL_DEF_PARAM || d->starred)
        return SIZE_MAX;
    const ol_function *f = &m->functions.items[fi];
    if (f->is_lambda)
        return SIZE_MAX;
    size_t n = 0;
    if (d->value != OL_NONE)
        out[n++] = d->value;
    const char *fname = ol_sym_str(m, f->name);
    bool ctor = f->cls != OL_NO_INDEX && fname && strcmp(fname, "__init__") == 0;
    for (size_t i = 0; i < f->callsites.len + (ctor ? m->calls.len : 0); i++) {
        ol_nid call;
        bool shift;
        if (i < f->callsites.len) {
            const ol_call *c = &m->calls.items[f->callsites.items[i]];
            call = c->node;
            shift = f->is_method && c->receiver != OL_NONE;
        } else {
            call = m->calls.items[i - f->callsites.len].node;
            ol_nid callee = ol_field(t, call, OL_F_function);
            ol_val v = callee != OL_NONE ? ol_eval(m, callee) : (ol_val){0};
            if (v.kind != OL_V_CLASS || v.ref != f->cls)
                continue;
            shift = true;
        }
        bool splat = false;
        ol_nid arg = ol_call_arg_for(m, call, shift, d, &splat);
        if ((arg == OL_NONE && splat) || (shift && d->index == 0) || (arg != OL_NONE && n == cap))
            return SIZE_MAX; /* filled through a splat, or the instance itself */
        if (arg != OL_NONE)
            out[n++] = arg;
    }
    return n;
}

size_t ol_door_name_param_values(ol_model *m, ol_nid name, ol_nid *out, size_t cap)
{
    uint32_t defs[2];
    if (ol_kind_of(m->tree, name) != OL_N_identifier ||
        ol_reaching_defs(m, m->node_scope[name], ol_node_sym(m, name), name, defs, 2) != 1)
        return SIZE_MAX;
    return ol_door_param_values(m, &m->defs.items[defs[0]], out, cap);
}
