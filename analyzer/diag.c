/*
 * diag.c - construction, copying, ordering and freeing of findings, their
 * notes (the evidence) and their fixes.
 */
#include "diag.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "rule.h"

const char *ol_severity_name(ol_severity s)
{
    switch (s) {
    case OL_SEV_ERROR:
        return "error";
    case OL_SEV_WARNING:
        return "warning";
    case OL_SEV_INFO:
        return "info";
    }
    return "error";
}

bool ol_severity_parse(const char *name, ol_severity *out)
{
    const ol_severity all[] = {OL_SEV_ERROR, OL_SEV_WARNING, OL_SEV_INFO};
    for (size_t i = 0; i < OL_ARRAY_LEN(all); i++)
        if (strcmp(name, ol_severity_name(all[i])) == 0) {
            *out = all[i];
            return true;
        }
    return false;
}

ol_fix *ol_fix_new(bool unsafe, const char *message)
{
    ol_fix *f = ol_xcalloc(1, sizeof(*f));
    f->unsafe = unsafe;
    f->message = ol_xstrdup(message ? message : "");
    return f;
}

void ol_fix_unsafe_because(ol_fix *f, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    ol_buf b = {0};
    ol_buf_vprintf(&b, fmt, ap);
    va_end(ap);
    free(f->unsafe_reason);
    f->unsafe_reason = ol_buf_take(&b);
    f->unsafe = true;
}

void ol_fix_edit(ol_fix *f, uint32_t start, uint32_t end, const char *content)
{
    ol_edit e = {start, end, ol_xstrdup(content), 0, 0};
    ol_vec_push(&f->edits, e);
}

static int edit_cmp(const void *a, const void *b)
{
    const ol_edit *x = a, *y = b;
    if (x->start != y->start)
        return x->start < y->start ? -1 : 1;
    if (x->end != y->end)
        return x->end < y->end ? -1 : 1;
    return 0;
}

bool ol_fix_normalize(ol_fix *f)
{
    ol_sort(f->edits.items, f->edits.len, sizeof(ol_edit), edit_cmp);
    for (size_t i = 1; i < f->edits.len; i++) {
        const ol_edit *prev = &f->edits.items[i - 1], *cur = &f->edits.items[i];
        /* two insertions at one point would be ambiguous too */
        if (cur->start < prev->end || (cur->start == prev->start && cur->start == prev->end &&
                                       cur->start == cur->end))
            return false;
    }
    return true;
}

ol_fix *ol_fix_copy(const ol_fix *f)
{
    ol_fix *c = ol_fix_new(f->unsafe, f->message);
    c->unsafe_reason = f->unsafe_reason ? ol_xstrdup(f->unsafe_reason) : NULL;
    for (size_t i = 0; i < f->edits.len; i++)
        ol_fix_edit(c, f->edits.items[i].start, f->edits.items[i].end, f->edits.items[i].content);
    return c;
}

bool ol_fix_equal(const ol_fix *a, const ol_fix *b)
{
    if (a->edits.len != b->edits.len)
        return false;
    for (size_t i = 0; i < a->edits.len; i++) {
        const ol_edit *x = &a->edits.items[i], *y = &b->edits.items[i];
        if (x->start != y->start || x->end != y->end || strcmp(x->content, y->content) != 0)
            return false;
    }
    return true;
}

void ol_fix_free(ol_fix *f)
{
    if (!f)
        return;
    for (size_t i = 0; i < f->edits.len; i++)
        free(f->edits.items[i].content);
    ol_vec_free(&f->edits);
    free(f->message);
    free(f->unsafe_reason);
    free(f);
}

static char *vformat(const char *fmt, va_list ap) OL_PRINTF(1, 0);

static char *vformat(const char *fmt, va_list ap)
{
    ol_buf b = {0};
    ol_buf_vprintf(&b, fmt, ap);
    return b.data ? ol_buf_take(&b) : ol_xstrdup("");
}

void ol_diag_note(ol_diag *d, ol_note_kind kind, uint32_t start, uint32_t end, const char *fmt, ...)
{
    ol_note n = {0};
    n.kind = kind;
    n.start = start;
    n.end = end < start ? start : end;
    va_list ap;
    va_start(ap, fmt);
    n.message = vformat(fmt, ap);
    va_end(ap);
    ol_vec_push(&d->notes, n);
}

void ol_diag_note_file(ol_diag *d, ol_note_kind kind, const char *path, uint32_t line, uint32_t col,
                       uint32_t end_line, uint32_t end_col, const char *fmt, ...)
{
    /* a note without a file has no place to point at: the own file's notes
     * are byte ranges (ol_diag_note) */
    if (!path)
        return;
    ol_note n = {0};
    n.kind = kind;
    n.path = ol_xstrdup(path);
    n.line = line ? line : 1;
    n.col = col;
    /* an end before the start (or none) is the start's line */
    n.end_line = end_line < n.line ? n.line : end_line;
    n.end_col = col ? end_col : 0;
    if (col && (n.end_col == 0 || (n.end_line == n.line && n.end_col < col))) {
        n.end_line = n.line;
        n.end_col = col;
    }
    va_list ap;
    va_start(ap, fmt);
    n.message = vformat(fmt, ap);
    va_end(ap);
    ol_vec_push(&d->notes, n);
}

const char *ol_note_kind_name(ol_note_kind k)
{
    return k == OL_NOTE_STEP ? "step" : "fact";
}

static bool same_text(const char *a, const char *b)
{
    return a == b || (a && b && strcmp(a, b) == 0);
}

bool ol_note_equal(const ol_note *a, const ol_note *b)
{
    return a->kind == b->kind && same_text(a->path, b->path) && a->start == b->start && a->end == b->end &&
           a->line == b->line && a->col == b->col && a->end_line == b->end_line && a->end_col == b->end_col &&
           same_text(a->message, b->message);
}

bool ol_diag_supersedes(const ol_diag *d, const ol_diag *kept)
{
    return kept->guess && !d->guess;
}

static void free_notes(ol_diag *d)
{
    for (size_t i = 0; i < d->notes.len; i++) {
        free(d->notes.items[i].path);
        free(d->notes.items[i].message);
    }
    ol_vec_free(&d->notes);
}

void ol_diag_free(ol_diag *d)
{
    free(d->message);
    free(d->help);
    ol_fix_free(d->fix);
    free_notes(d);
    memset(d, 0, sizeof(*d));
}

void ol_diag_slim(ol_diag *d)
{
    free(d->message);
    free(d->help);
    d->message = d->help = NULL;
    free_notes(d);
    if (d->fix) {
        for (size_t i = 0; i < d->fix->edits.len; i++)
            free(d->fix->edits.items[i].content);
        ol_vec_free(&d->fix->edits);
        free(d->fix->message);
        d->fix->message = NULL;
        free(d->fix->unsafe_reason);
        d->fix->unsafe_reason = NULL;
    }
}

void ol_diag_vec_free(ol_diag_vec *v)
{
    for (size_t i = 0; i < v->len; i++)
        ol_diag_free(&v->items[i]);
    ol_vec_free(v);
}

static int diag_cmp(const void *a, const void *b)
{
    const ol_diag *x = a, *y = b;
    if (x->start != y->start)
        return x->start < y->start ? -1 : 1;
    int c = strcmp(x->rule->code, y->rule->code);
    if (c)
        return c;
    if (x->end != y->end)
        return x->end < y->end ? -1 : 1;
    return 0;
}

void ol_diag_vec_sort(ol_diag_vec *v)
{
    ol_sort(v->items, v->len, sizeof(ol_diag), diag_cmp);
}
