/*
 * fix.c - fix application, verification, atomic writes and unified diffs.
 */
#include "fix.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "notebook.h"
#include "rule.h"

void ol_fix_outcome_free(ol_fix_outcome *o)
{
    free(o->diff);
    free(o->error);
    free(o->output);
    memset(o, 0, sizeof(*o));
}

typedef struct range {
    uint32_t start, end;
} range;

static bool overlaps(const range *taken, size_t n, uint32_t start, uint32_t end)
{
    for (size_t i = 0; i < n; i++) {
        /* insertions at the same point conflict too: their order is unclear */
        if (start < taken[i].end && taken[i].start < end)
            return true;
        if (start == end && start > taken[i].start && start < taken[i].end)
            return true;
        if (start == end && taken[i].start == taken[i].end && start == taken[i].start)
            return true;
        if (start == taken[i].start && end == taken[i].end)
            return true;
    }
    return false;
}

static int cmp_edit_ptr(const void *a, const void *b)
{
    const ol_edit *x = *(const ol_edit *const *)a, *y = *(const ol_edit *const *)b;
    if (x->start != y->start)
        return x->start < y->start ? -1 : 1;
    return x->end < y->end ? -1 : x->end > y->end;
}

size_t ol_apply_fixes(const char *text, size_t len, const ol_diag_vec *diags, bool unsafe, ol_buf *out)
{
    OL_VEC(range) taken = {0};
    OL_VEC(const ol_edit *) edits = {0};
    OL_VEC(const ol_fix *) applied_fixes = {0};
    size_t applied = 0;
    for (size_t i = 0; i < diags->len; i++) {
        const ol_fix *fix = diags->items[i].fix;
        if (!fix || (fix->unsafe && !unsafe) || fix->edits.len == 0)
            continue;
        /* the same fix reached through several findings is applied once */
        bool duplicate = false;
        for (size_t k = 0; k < applied_fixes.len && !duplicate; k++)
            duplicate = ol_fix_equal(applied_fixes.items[k], fix);
        if (duplicate) {
            applied++;
            continue;
        }
        bool clash = false;
        for (size_t e = 0; e < fix->edits.len && !clash; e++) {
            const ol_edit *ed = &fix->edits.items[e];
            if (ed->end > len)
                clash = true;
            else
                clash = overlaps(taken.items, taken.len, ed->start, ed->end);
        }
        if (clash)
            continue; /* applied in a later round, if still wanted */
        for (size_t e = 0; e < fix->edits.len; e++) {
            range r = {fix->edits.items[e].start, fix->edits.items[e].end};
            ol_vec_push(&taken, r);
            ol_vec_push(&edits, &fix->edits.items[e]);
        }
        ol_vec_push(&applied_fixes, fix);
        applied++;
    }
    ol_sort(edits.items, edits.len, sizeof(edits.items[0]), cmp_edit_ptr);
    ol_buf_clear(out);
    size_t pos = 0;
    for (size_t i = 0; i < edits.len; i++) {
        const ol_edit *e = edits.items[i];
        ol_buf_add(out, text + pos, e->start - pos);
        ol_buf_puts(out, e->content);
        pos = e->end;
    }
    ol_buf_add(out, text + pos, len - pos);
    ol_vec_free(&taken);
    ol_vec_free(&edits);
    ol_vec_free(&applied_fixes);
    return applied;
}

/* ---- writing ----------------------------------------------------------------- */

int ol_write_atomic(const char *path, const char *data, size_t len)
{
    struct stat st;
    if (stat(path, &st) != 0)
        return errno;
    const char *slash = strrchr(path, '/');
    char *tmpl = slash ? ol_xasprintf("%.*s/.oomlint-fix-XXXXXX", (int)(slash - path), path)
                       : ol_xstrdup(".oomlint-fix-XXXXXX");
    int fd = mkstemp(tmpl);
    if (fd < 0) {
        int err = errno;
        free(tmpl);
        return err;
    }
    int err = 0;
    size_t done = 0;
    while (done < len) {
        ssize_t w = write(fd, data + done, len - done);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            err = errno;
            break;
        }
        done += (size_t)w;
    }
    if (!err && fchmod(fd, st.st_mode & 07777) != 0)
        err = errno;
    if (!err && fsync(fd) != 0)
        err = errno;
    if (close(fd) != 0 && !err)
        err = errno;
    if (!err && rename(tmpl, path) != 0)
        err = errno;
    if (err)
        unlink(tmpl);
    free(tmpl);
    return err;
}

/* ---- diff -------------------------------------------------------------------- */

typedef struct lines {
    OL_VEC(const char *) ptr;
    OL_VEC(uint32_t) len; /* including the newline */
} lines;

static void split_lines(const char *s, size_t n, lines *out)
{
    size_t i = 0;
    while (i < n) {
        size_t e = i;
        while (e < n && s[e] != '\n')
            e++;
        if (e < n)
            e++;
        ol_vec_push(&out->ptr, s + i);
        ol_vec_push(&out->len, (uint32_t)(e - i));
        i = e;
    }
}

static bool line_eq(const lines *a, size_t i, const lines *b, size_t j)
{
    return a->len.items[i] == b->len.items[j] && memcmp(a->ptr.items[i], b->ptr.items[j], a->len.items[i]) == 0;
}

/* Edit script by dynamic programming over the differing middle (after
 * trimming the common prefix and suffix, fixes leave a small middle). */
typedef enum { OP_SAME, OP_DEL, OP_ADD } op_kind;
typedef struct op {
    op_kind kind;
    size_t a, b; /* line indexes */
} op;

typedef OL_VEC(op) op_vec;

static void diff_ops(const lines *A, const lines *B, op_vec *ops)
{
    size_t n = A->ptr.len, m = B->ptr.len;
    size_t pre = 0;
    while (pre < n && pre < m && line_eq(A, pre, B, pre))
        pre++;
    size_t suf = 0;
    while (suf < n - pre && suf < m - pre && line_eq(A, n - 1 - suf, B, m - 1 - suf))
        suf++;
    for (size_t i = 0; i < pre; i++) {
        op o = {OP_SAME, i, i};
        ol_vec_push(ops, o);
    }
    size_t an = n - pre - suf, bn = m - pre - suf;
    if ((an + 1) * (bn + 1) > 4000000) {
        /* too big to align: show it as a replacement */
        for (size_t i = 0; i < an; i++) {
            op o = {OP_DEL, pre + i, pre};
            ol_vec_push(ops, o);
        }
        for (size_t j = 0; j < bn; j++) {
            op o = {OP_ADD, pre + an, pre + j};
            ol_vec_push(ops, o);
        }
    } else {
        uint32_t *lcs = ol_xcalloc((an + 1) * (bn + 1), sizeof(uint32_t));
#define L(i, j) lcs[(i) * (bn + 1) + (j)]
        for (size_t i = an; i-- > 0;)
            for (size_t j = bn; j-- > 0;)
                L(i, j) = line_eq(A, pre + i, B, pre + j) ? L(i + 1, j + 1) + 1
                                                          : (L(i + 1, j) > L(i, j + 1) ? L(i + 1, j) : L(i, j + 1));
        size_t i = 0, j = 0;
        while (i < an || j < bn) {
            if (i < an && j < bn && line_eq(A, pre + i, B, pre + j)) {
                op o = {OP_SAME, pre + i, pre + j};
                ol_vec_push(ops, o);
                i++, j++;
            } else if (i < an && (j == bn || L(i + 1, j) >= L(i, j + 1))) {
                op o = {OP_DEL, pre + i, pre + j};
                ol_vec_push(ops, o);
                i++;
            } else {
                op o = {OP_ADD, pre + i, pre + j};
                ol_vec_push(ops, o);
                j++;
            }
        }
#undef L
        free(lcs);
    }
    for (size_t k = 0; k < suf; k++) {
        op o = {OP_SAME, n - suf + k, m - suf + k};
        ol_vec_push(ops, o);
    }
}

static void put_line(ol_buf *out, char mark, const char *s, uint32_t len)
{
    ol_buf_putc(out, mark);
    ol_buf_add(out, s, len);
    if (len == 0 || s[len - 1] != '\n')
        ol_buf_puts(out, "\n\\ No newline at end of file\n");
}

void ol_unified_diff(const char *path, const char *a, size_t alen, const char *b, size_t blen, ol_buf *out)
{
    lines A = {0}, B = {0};
    split_lines(a, alen, &A);
    split_lines(b, blen, &B);
    op_vec ops = {0};
    diff_ops(&A, &B, &ops);
    if (path[0] == '/')
        ol_buf_printf(out, "--- %s\n+++ %s\n", path, path);
    else
        ol_buf_printf(out, "--- a/%s\n+++ b/%s\n", path, path);
    const size_t ctx = 3;
    size_t k = 0;
    while (k < ops.len) {
        while (k < ops.len && ops.items[k].kind == OP_SAME)
            k++;
        if (k >= ops.len)
            break;
        /* a hunk: from ctx lines before this change to ctx after the last
         * change that is within 2*ctx of the previous one */
        size_t start = k >= ctx ? k - ctx : 0;
        size_t end = k;
        size_t last_change = k;
        while (end < ops.len) {
            if (ops.items[end].kind != OP_SAME)
                last_change = end;
            else if (end - last_change > 2 * ctx)
                break;
            end++;
        }
        end = last_change + ctx + 1 < ops.len ? last_change + ctx + 1 : ops.len;
        size_t a_start = ops.items[start].a, b_start = ops.items[start].b;
        size_t a_count = 0, b_count = 0;
        for (size_t i = start; i < end; i++) {
            if (ops.items[i].kind != OP_ADD)
                a_count++;
            if (ops.items[i].kind != OP_DEL)
                b_count++;
        }
        ol_buf_printf(out, "@@ -%zu,%zu +%zu,%zu @@\n", a_count ? a_start + 1 : a_start, a_count,
                      b_count ? b_start + 1 : b_start, b_count);
        for (size_t i = start; i < end; i++) {
            const op *o = &ops.items[i];
            if (o->kind == OP_SAME)
                put_line(out, ' ', A.ptr.items[o->a], A.len.items[o->a]);
            else if (o->kind == OP_DEL)
                put_line(out, '-', A.ptr.items[o->a], A.len.items[o->a]);
            else
                put_line(out, '+', B.ptr.items[o->b], B.len.items[o->b]);
        }
        k = end;
    }
    ol_vec_free(&ops);
    ol_vec_free(&A.ptr);
    ol_vec_free(&A.len);
    ol_vec_free(&B.ptr);
    ol_vec_free(&B.len);
}

/* ---- the rounds ------------------------------------------------------------------ */

static size_t count_errors(const ol_diag_vec *diags)
{
    size_t n = 0;
    for (size_t i = 0; i < diags->len; i++)
        if (diags->items[i].rule == &ol_rule_oom002)
            n++;
    return n;
}

/* A new source holding `text`, with src's encoding, BOM and cell map. */
static void derive_source(const ol_source *src, const char *text, size_t len, ol_source *out)
{
    ol_source_init_text(out, src->path, ol_xstrndup(text, len), len);
    out->bom = src->bom;
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

void ol_fix_file(ol_linter *lt, ol_file_result *r, ol_fix_mode mode, bool unsafe, ol_fix_outcome *outcome)
{
    memset(outcome, 0, sizeof(*outcome));
    if (!r->has_source || !r->read_ok)
        return;
    size_t original_errors = count_errors(&r->diags);
    const ol_source *orig = &r->src;
    char *orig_text = ol_xstrndup(orig->text, orig->len);
    size_t orig_len = orig->len;
    ol_buf next = {0};
    size_t applied = 0;
    for (int round = 0; round < OL_FIX_ROUNDS; round++) {
        size_t n = ol_apply_fixes(r->src.text, r->src.len, &r->diags, unsafe, &next);
        if (n == 0 || (next.len == r->src.len && memcmp(next.data, r->src.text, next.len) == 0))
            break;
        if (r->src.notebook) {
            /* notebooks are fixed line for line: the cell map must still hold */
            uint32_t line_count = 1;
            for (size_t i = 0; i < next.len; i++)
                line_count += next.data[i] == '\n';
            if (line_count != r->src.line_count)
                break;
        }
        applied += n;
        ol_source fresh;
        derive_source(&r->src, next.data, next.len, &fresh);
        ol_file_result again = {0};
        again.path = ol_xstrdup(r->path);
        ol_lint_source(lt, &fresh, &again);
        ol_file_result_free(r);
        *r = again;
    }
    ol_buf_free(&next);
    if (applied == 0) {
        free(orig_text);
        return;
    }
    if (count_errors(&r->diags) > original_errors) {
        outcome->error = ol_xstrdup("the fixed code would not parse; the file was left unchanged");
        /* restore the original findings */
        ol_source fresh;
        derive_source(&r->src, orig_text, orig_len, &fresh);
        ol_file_result again = {0};
        again.path = ol_xstrdup(r->path);
        ol_lint_source(lt, &fresh, &again);
        ol_file_result_free(r);
        *r = again;
        free(orig_text);
        return;
    }
    outcome->applied = applied;
    if (mode == OL_FIX_NONE) {
        /* in memory only (the language server's fix-all): r holds the result */
        free(orig_text);
        return;
    }
    /* bytes to write, in the file's own form */
    ol_buf bytes = {0}, why = {0}, original_bytes = {0};
    bool ok;
    if (r->src.notebook)
        ok = ol_notebook_render(&r->src, r->src.text, r->src.len, &bytes, &why);
    else
        ok = ol_source_encode(&r->src, r->src.text, r->src.len, &bytes, &why);
    if (!ok) {
        outcome->error = ol_xasprintf("cannot write the fix: %s", why.data ? why.data : "unknown reason");
        outcome->applied = 0;
    } else if (mode == OL_FIX_DIFF) {
        ol_buf d = {0};
        if (r->src.notebook) {
            ol_unified_diff(r->path, r->src.raw, r->src.raw_len, bytes.data, bytes.len, &d);
        } else {
            /* diff in the decoded text: what a reader wants to see */
            ol_unified_diff(r->path, orig_text, orig_len, r->src.text, r->src.len, &d);
        }
        outcome->diff = ol_buf_take(&d);
    } else if (mode == OL_FIX_OUTPUT) {
        outcome->output_len = bytes.len;
        outcome->output = ol_buf_take(&bytes);
    } else if (mode == OL_FIX_WRITE) {
        int err = ol_write_atomic(r->path, bytes.data, bytes.len);
        if (err) {
            outcome->error = ol_xasprintf("cannot write `%s`: %s", r->path, strerror(err));
            outcome->applied = 0;
        }
    }
    ol_buf_free(&bytes);
    ol_buf_free(&why);
    ol_buf_free(&original_bytes);
    free(orig_text);
}
