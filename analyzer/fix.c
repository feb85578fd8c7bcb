/*
 * fix.c - applying fixes: choosing which fixes go together in a round,
 * applying them in one pass, and handing the bytes to writefile.c; plus
 * unified diffs for --diff.
 *
 * A round takes the applicable fixes in order, widest first (a no_grad
 * decorator that covers a whole function before a `.detach()` inside it),
 * and keeps one fix per statement: every edit claims the statement it
 * changes (ol_fix_claim_statements, computed while the tree is at hand), and
 * a fix whose claims meet another fix's claims waits for the next round,
 * when it is recomputed on the new text (and often no longer needed). An
 * edit identical to one already taken (two findings fixed by the same
 * change, a name imported twice) is applied once. Claims are a bit per
 * byte of text, identical edits are found through a hash table, and the
 * new text is built in one pass over the old, so a round is O(n log n) in
 * the number of edits and linear in the text.
 *
 * Every round is proven before it is kept, by the run (run.c): the new
 * text is linted again and must not add a syntax error or a finding; a
 * round that fails is split in halves to find the fix that broke it, which
 * is then set aside by its signature (ol_fix_signature). This module never
 * lints. A fix that puts a string into an f-string's replacement field is
 * given the quote the f-string does not use (ol_fix_fit_quotes).
 *
 * Writing is writefile.c's. The file must still be what was read (device,
 * inode, size, mtime, then the bytes), else it is skipped and keeps the newer
 * text. The new text is first written to a temporary file beside it, synced
 * and read back. A file with one link is then replaced by rename: atomic,
 * so a crash leaves the old text or the new. A file with several hard links
 * cannot be renamed over without cutting the other links off from the fix,
 * so it is rewritten in place instead, after its blocks were reserved
 * (posix_fallocate: a full disk or `ulimit -f` fails before a byte changes),
 * with the original bytes put back if a write fails anyway and the verified
 * temporary copy kept if even that fails; the same holds when the owner
 * cannot be given to a new file (not root). Symbolic links are written
 * through, and mode and owner are kept.
 */
#include "fix.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "notebook.h"
#include "pyfloor.h"
#include "rule.h"
#include "writefile.h"

void ol_fix_outcome_free(ol_fix_outcome *o)
{
    free(o->diff);
    free(o->error);
    free(o->output);
    memset(o, 0, sizeof(*o));
}

/* ---- claims ------------------------------------------------------------------- */

static bool is_statement(const ol_tree *t, ol_nid n)
{
    ol_nid p = t->nodes.items[n].parent;
    if (p == OL_NONE)
        return false;
    ol_kind pk = (ol_kind)t->nodes.items[p].kind;
    return pk == OL_N_block || pk == OL_N_module;
}

/* The smallest statement holding [start, end], as [*cs, *ce). */
static void statement_around(const ol_tree *t, uint32_t start, uint32_t end, uint32_t *cs, uint32_t *ce)
{
    /* nodes are in preorder, so their starts never decrease: the last node
     * starting at or before `start` is the deepest candidate */
    size_t lo = 0, hi = t->nodes.len;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (t->nodes.items[mid].start <= start)
            lo = mid + 1;
        else
            hi = mid;
    }
    for (ol_nid n = lo > 0 ? (ol_nid)(lo - 1) : OL_NONE; n != OL_NONE; n = t->nodes.items[n].parent) {
        const ol_node *node = &t->nodes.items[n];
        if (node->start <= start && end <= node->end && is_statement(t, n)) {
            *cs = node->start;
            *ce = node->end > node->start ? node->end : node->start + 1;
            return;
        }
    }
    /* outside every statement (before the first, after the last) */
    *cs = start;
    *ce = end > start ? end : start + 1;
}

void ol_fix_claim_statements(const ol_tree *t, ol_diag_vec *diags)
{
    for (size_t i = 0; i < diags->len; i++) {
        ol_fix *fix = diags->items[i].fix;
        if (!fix)
            continue;
        for (size_t e = 0; e < fix->edits.len; e++) {
            ol_edit *ed = &fix->edits.items[e];
            statement_around(t, ed->start, ed->end, &ed->claim_start, &ed->claim_end);
        }
    }
}

/* ---- quotes inside f-strings ----------------------------------------------------- */

/* The deepest node holding [start, end], or OL_NONE. */
static ol_nid node_around(const ol_tree *t, uint32_t start, uint32_t end)
{
    size_t lo = 0, hi = t->nodes.len;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (t->nodes.items[mid].start <= start)
            lo = mid + 1;
        else
            hi = mid;
    }
    for (ol_nid n = lo > 0 ? (ol_nid)(lo - 1) : OL_NONE; n != OL_NONE; n = t->nodes.items[n].parent)
        if (t->nodes.items[n].start <= start && end <= t->nodes.items[n].end)
            return n;
    return OL_NONE;
}

/* Where an edit lands, as f-strings see it: inside a replacement field of
 * one, of a one-line one, and the quotes it may not use there (the
 * delimiter of every one-line f-string whose field holds it: before Python
 * 3.12 the f-string ends at its quote wherever it stands). */
typedef struct field_context {
    bool inside, one_line;
    bool dq_taken, sq_taken;
} field_context;

static field_context field_context_of(const ol_tree *t, uint32_t start, uint32_t end)
{
    field_context c = {false, false, false, false};
    for (ol_nid n = node_around(t, start, end); n != OL_NONE; n = t->nodes.items[n].parent) {
        const ol_node *field = &t->nodes.items[n];
        if (field->kind != OL_N_interpolation || start <= field->start || end >= field->end)
            continue;
        ol_nid open = ol_first(t, field->parent);
        if (ol_kind_of(t, open) != OL_N_string_start)
            continue;
        uint32_t len;
        const char *s = ol_text(t, open, &len);
        uint32_t q = 0;
        bool f = false;
        for (; q < len && s[q] != '"' && s[q] != '\''; q++)
            f |= s[q] == 'f' || s[q] == 'F';
        if (!f || q == len)
            continue;
        c.inside = true;
        if (q + 1 == len) { /* one quote: a triple-quoted f-string takes either */
            c.one_line = true;
            c.dq_taken |= s[q] == '"';
            c.sq_taken |= s[q] == '\'';
        }
    }
    return c;
}

/* Fits one edit's text to the f-string it lands in; false when it cannot be
 * made to parse before Python 3.12 (a quote of each kind taken, or a
 * backslash, a comment or a line break in the replacement field). */
static bool fit_edit(const ol_tree *t, ol_edit *ed)
{
    const char *text = ed->content;
    bool dq = strchr(text, '"') != NULL, sq = strchr(text, '\'') != NULL;
    bool other = strchr(text, '\\') || strchr(text, '#') || strchr(text, '\n');
    if (!dq && !sq && !other)
        return true;
    field_context c = field_context_of(t, ed->start, ed->end);
    if (!c.inside)
        return true;
    if (strchr(text, '\\') || strchr(text, '#') || (c.one_line && strchr(text, '\n')))
        return false;
    if ((dq && c.dq_taken && sq) || (sq && c.sq_taken && dq))
        return false; /* both quotes in the text, one of them taken */
    if ((dq && !c.dq_taken) || (sq && !c.sq_taken))
        return true;
    if (dq ? c.sq_taken : c.dq_taken)
        return false; /* its quote taken, and the other one too */
    for (char *p = ed->content; *p; p++)
        if (*p == (dq ? '"' : '\''))
            *p = dq ? '\'' : '"';
    return true;
}

void ol_fix_fit_quotes(const ol_tree *t, ol_diag_vec *diags)
{
    unsigned floor = 0; /* read only when a fix needs Python 3.12 */
    for (size_t i = 0; i < diags->len; i++) {
        ol_fix *fix = diags->items[i].fix;
        bool fits = true;
        for (size_t e = 0; fix && e < fix->edits.len; e++)
            fits &= fit_edit(t, &fix->edits.items[e]);
        if (fits)
            continue;
        if (!floor)
            floor = ol_python_floor(t->src ? t->src->path : NULL);
        if (floor < 312) {
            /* not offered: the finding stays, without a fix that would break the code */
            ol_fix_free(fix);
            diags->items[i].fix = NULL;
        }
    }
}

typedef struct claim {
    uint32_t start, end;
} claim;

static claim claim_of(const ol_edit *e)
{
    claim c = {e->claim_start, e->claim_end};
    if (c.end <= c.start || c.start > e->start || c.end < e->end) {
        /* not computed: the edit's own range, never empty */
        c.start = e->start;
        c.end = e->end > e->start ? e->end : e->start + 1;
    }
    return c;
}

/* The bytes of the text claimed so far, one bit each. Accepted claims never
 * overlap, so marking costs at most one pass over the text per round; a
 * query reads the claim's words. */
typedef struct claim_map {
    uint64_t *bits;
    size_t words;
} claim_map;

static void claim_map_init(claim_map *m, size_t text_len)
{
    m->words = (text_len + 1) / 64 + 2;
    m->bits = ol_xcalloc(m->words, sizeof(uint64_t));
}

static uint64_t span_mask(uint32_t from, uint32_t to) /* bits [from, to) of one word, 0 <= from < to <= 64 */
{
    uint64_t high = to == 64 ? ~(uint64_t)0 : (((uint64_t)1 << to) - 1);
    return high & ~(((uint64_t)1 << from) - 1);
}

/* Visits the words of [c.start, c.end): marks them, or tells whether any is set. */
static bool claim_map_visit(claim_map *m, claim c, bool mark)
{
    size_t end = c.end;
    if (end > m->words * 64)
        end = m->words * 64;
    for (size_t at = c.start; at < end;) {
        size_t w = at / 64;
        uint32_t from = (uint32_t)(at % 64);
        uint32_t to = end - w * 64 >= 64 ? 64 : (uint32_t)(end - w * 64);
        uint64_t mask = span_mask(from, to);
        if (mark)
            m->bits[w] |= mask;
        else if (m->bits[w] & mask)
            return true;
        at = (w + 1) * 64;
    }
    return false;
}

static int cmp_claim(const void *a, const void *b)
{
    const claim *x = a, *y = b;
    return x->start != y->start ? (x->start < y->start ? -1 : 1) : (x->end < y->end ? -1 : x->end > y->end);
}

/* ---- identical edits ------------------------------------------------------------ */

typedef struct edit_set {
    const ol_edit **slots;
    size_t cap; /* a power of two */
    size_t len;
} edit_set;

static uint64_t edit_hash(const ol_edit *e)
{
    uint64_t h = 1469598103934665603u ^ ((uint64_t)e->start << 32 | e->end);
    for (const char *c = e->content; *c; c++)
        h = (h ^ (unsigned char)*c) * 1099511628211u;
    return h ^ (h >> 29);
}

static bool edit_same(const ol_edit *a, const ol_edit *b)
{
    return a->start == b->start && a->end == b->end && strcmp(a->content, b->content) == 0;
}

static const ol_edit *edit_set_find(const edit_set *s, const ol_edit *e)
{
    if (!s->cap)
        return NULL;
    for (size_t i = edit_hash(e) & (s->cap - 1);; i = (i + 1) & (s->cap - 1)) {
        if (!s->slots[i])
            return NULL;
        if (edit_same(s->slots[i], e))
            return s->slots[i];
    }
}

static void edit_set_add(edit_set *s, const ol_edit *e)
{
    if ((s->len + 1) * 2 > s->cap) {
        edit_set bigger = {NULL, s->cap ? s->cap * 2 : 64, 0};
        bigger.slots = ol_xcalloc(bigger.cap, sizeof(*bigger.slots));
        for (size_t i = 0; i < s->cap; i++)
            if (s->slots[i])
                edit_set_add(&bigger, s->slots[i]);
        free(s->slots);
        *s = bigger;
    }
    size_t i = edit_hash(e) & (s->cap - 1);
    while (s->slots[i])
        i = (i + 1) & (s->cap - 1);
    s->slots[i] = e;
    s->len++;
}

/* ---- one round -------------------------------------------------------------------- */

typedef ol_fix_plan diag_list;
typedef ol_fix_sigs signature_list;

static char *signature(const ol_source *src, const ol_diag *d)
{
    uint32_t end = d->end <= src->len ? d->end : src->len;
    uint32_t start = d->start <= end ? d->start : end;
    return ol_xasprintf("%s\x1f%s\x1f%.*s", d->rule->code, d->message, (int)(end - start), src->text + start);
}

static bool blocked(const signature_list *b, const ol_source *src, const ol_diag *d)
{
    if (b->len == 0)
        return false;
    char *sig = signature(src, d);
    bool hit = false;
    for (size_t i = 0; i < b->len && !hit; i++)
        hit = strcmp(b->items[i], sig) == 0;
    free(sig);
    return hit;
}

static uint64_t claim_span(const ol_fix *f)
{
    uint64_t span = 0;
    for (size_t e = 0; e < f->edits.len; e++) {
        claim c = claim_of(&f->edits.items[e]);
        span += c.end - c.start;
    }
    return span;
}

typedef struct candidate {
    const ol_diag *diag;
    uint64_t span;
    size_t order;
} candidate;

static int cmp_candidate(const void *a, const void *b)
{
    const candidate *x = a, *y = b;
    if (x->span != y->span)
        return x->span > y->span ? -1 : 1;
    return x->order < y->order ? -1 : x->order > y->order;
}

/* Chooses the findings whose fixes go into one round (see the head comment). */
static void plan_round(const ol_source *src, const ol_diag_vec *diags, bool unsafe, const signature_list *block,
                       diag_list *plan)
{
    OL_VEC(candidate) cands = {0};
    for (size_t i = 0; i < diags->len; i++) {
        const ol_fix *fix = diags->items[i].fix;
        if (!fix || (fix->unsafe && !unsafe) || fix->edits.len == 0)
            continue;
        bool in_range = true;
        for (size_t e = 0; e < fix->edits.len && in_range; e++)
            in_range = fix->edits.items[e].start <= fix->edits.items[e].end && fix->edits.items[e].end <= src->len;
        if (!in_range || blocked(block, src, &diags->items[i]))
            continue;
        candidate c = {&diags->items[i], claim_span(fix), i};
        ol_vec_push(&cands, c);
    }
    ol_sort(cands.items, cands.len, sizeof(candidate), cmp_candidate);
    claim_map claims;
    claim_map_init(&claims, src->len);
    edit_set taken = {0};
    OL_VEC(claim) mine = {0};
    for (size_t i = 0; i < cands.len; i++) {
        const ol_fix *fix = cands.items[i].diag->fix;
        mine.len = 0;
        for (size_t e = 0; e < fix->edits.len; e++)
            if (!edit_set_find(&taken, &fix->edits.items[e]))
                ol_vec_push(&mine, claim_of(&fix->edits.items[e]));
        /* this fix's own claims may nest or repeat: merge them */
        ol_sort(mine.items, mine.len, sizeof(claim), cmp_claim);
        size_t merged = 0;
        for (size_t k = 0; k < mine.len; k++) {
            if (merged > 0 && mine.items[k].start < mine.items[merged - 1].end) {
                if (mine.items[k].end > mine.items[merged - 1].end)
                    mine.items[merged - 1].end = mine.items[k].end;
                continue;
            }
            mine.items[merged++] = mine.items[k];
        }
        mine.len = merged;
        bool clash = false;
        for (size_t k = 0; k < mine.len && !clash; k++)
            clash = claim_map_visit(&claims, mine.items[k], false);
        if (clash)
            continue; /* next round, if it is still wanted then */
        for (size_t k = 0; k < mine.len; k++)
            claim_map_visit(&claims, mine.items[k], true);
        for (size_t e = 0; e < fix->edits.len; e++)
            if (!edit_set_find(&taken, &fix->edits.items[e]))
                edit_set_add(&taken, &fix->edits.items[e]);
        ol_vec_push(plan, cands.items[i].diag);
    }
    ol_vec_free(&mine);
    free(claims.bits);
    free(taken.slots);
    ol_vec_free(&cands);
}

static int cmp_edit_ptr(const void *a, const void *b)
{
    const ol_edit *x = *(const ol_edit *const *)a, *y = *(const ol_edit *const *)b;
    if (x->start != y->start)
        return x->start < y->start ? -1 : 1;
    if (x->end != y->end)
        return x->end < y->end ? -1 : 1;
    return strcmp(x->content, y->content);
}

/* Builds the text with the fixes of plan[0..count) applied, in one pass. */
static void apply_plan(const char *text, size_t len, const ol_diag *const *plan, size_t count, ol_buf *out)
{
    OL_VEC(const ol_edit *) edits = {0};
    for (size_t i = 0; i < count; i++)
        for (size_t e = 0; e < plan[i]->fix->edits.len; e++)
            ol_vec_push(&edits, &plan[i]->fix->edits.items[e]);
    ol_sort(edits.items, edits.len, sizeof(edits.items[0]), cmp_edit_ptr);
    ol_buf_clear(out);
    ol_buf_reserve(out, len + 64);
    size_t pos = 0;
    for (size_t i = 0; i < edits.len; i++) {
        const ol_edit *e = edits.items[i];
        if (i > 0 && edit_same(edits.items[i - 1], e))
            continue; /* the same change for two findings: once */
        if (e->start < pos)
            continue; /* cannot happen for a plan: its claims are disjoint */
        ol_buf_add(out, text + pos, e->start - pos);
        ol_buf_puts(out, e->content);
        pos = e->end;
    }
    ol_buf_add(out, text + pos, len - pos);
    ol_vec_free(&edits);
}

size_t ol_apply_fixes(const char *text, size_t len, const ol_diag_vec *diags, bool unsafe, ol_buf *out)
{
    ol_source src = {0};
    src.text = (char *)text;
    src.len = (uint32_t)len;
    signature_list none = {0};
    diag_list plan = {0};
    plan_round(&src, diags, unsafe, &none, &plan);
    apply_plan(text, len, plan.items, plan.len, out);
    size_t n = plan.len;
    ol_vec_free(&plan);
    return n;
}

/* ---- writing ----------------------------------------------------------------- */

int ol_write_atomic(const char *path, const char *data, size_t len)
{
    ol_buf why = {0};
    int err = ol_replace_file(path, data, len, NULL, &why);
    ol_buf_free(&why);
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

/* One diff header name, `prefix` + path, quoted as git quotes it when the
 * path holds a control character, a quote, a backslash or a byte that is
 * not printable UTF-8: "a/x\nb" with C escapes. A name with a newline or an
 * escape sequence then cannot forge a line or recolour the terminal, and
 * patch and git apply still read it. */
static void put_diff_name(ol_buf *out, const char *prefix, const char *path)
{
    size_t n = strlen(path);
    bool quote = false;
    for (size_t i = 0; i < n && !quote;) {
        const unsigned char *u = (const unsigned char *)path + i;
        int len = ol_utf8_seq_len(u, n - i);
        quote = len == 0 || u[0] < 0x20 || u[0] == 0x7F || u[0] == '"' || u[0] == '\\' ||
                (len == 2 && u[0] == 0xC2 && u[1] < 0xA0);
        i += len > 0 ? (size_t)len : 1;
    }
    if (!quote) {
        ol_buf_printf(out, "%s%s", prefix, path);
        return;
    }
    ol_buf_printf(out, "\"%s", prefix);
    for (size_t i = 0; i < n;) {
        const unsigned char *u = (const unsigned char *)path + i;
        int len = ol_utf8_seq_len(u, n - i);
        bool c1 = len == 2 && u[0] == 0xC2 && u[1] < 0xA0;
        if (len == 1 && u[0] >= 0x20 && u[0] != 0x7F && u[0] != '"' && u[0] != '\\') {
            ol_buf_putc(out, (char)u[0]);
        } else if (len == 1 && strchr("\a\b\t\n\v\f\r\"\\", u[0])) {
            ol_buf_putc(out, '\\');
            ol_buf_putc(out, "abtnvfr\"\\"[strchr("\a\b\t\n\v\f\r\"\\", u[0]) - "\a\b\t\n\v\f\r\"\\"]);
        } else if (len > 1 && !c1) {
            ol_buf_add(out, path + i, (size_t)len);
        } else {
            int count = len > 0 ? len : 1;
            for (int k = 0; k < count; k++)
                ol_buf_printf(out, "\\%03o", u[k]);
            i += (size_t)count;
            continue;
        }
        i += (size_t)len;
    }
    ol_buf_putc(out, '"');
}

void ol_unified_diff(const char *path, const char *a, size_t alen, const char *b, size_t blen, ol_buf *out)
{
    lines A = {0}, B = {0};
    split_lines(a, alen, &A);
    split_lines(b, blen, &B);
    op_vec ops = {0};
    diff_ops(&A, &B, &ops);
    bool absolute = path[0] == '/';
    ol_buf_puts(out, "--- ");
    put_diff_name(out, absolute ? "" : "a/", path);
    ol_buf_puts(out, "\n+++ ");
    put_diff_name(out, absolute ? "" : "b/", path);
    ol_buf_putc(out, '\n');
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

typedef OL_VEC(ol_text_change) change_vec;

/* The spans where b differs from a: the line diff's hunks, each narrowed to
 * the characters that differ, so that writing them back touches as few of
 * the file's bytes as possible. */
static void text_changes(const char *a, size_t alen, const char *b, size_t blen, change_vec *out)
{
    lines A = {0}, B = {0};
    split_lines(a, alen, &A);
    split_lines(b, blen, &B);
    op_vec ops = {0};
    diff_ops(&A, &B, &ops);
    size_t k = 0;
    while (k < ops.len) {
        if (ops.items[k].kind == OP_SAME) {
            k++;
            continue;
        }
        size_t first = k;
        while (k < ops.len && ops.items[k].kind != OP_SAME)
            k++;
        size_t a0 = ops.items[first].a, b0 = ops.items[first].b;
        size_t a1 = k < ops.len ? ops.items[k].a : A.ptr.len, b1 = k < ops.len ? ops.items[k].b : B.ptr.len;
        size_t os = a0 < A.ptr.len ? (size_t)(A.ptr.items[a0] - a) : alen;
        size_t oe = a1 < A.ptr.len ? (size_t)(A.ptr.items[a1] - a) : alen;
        size_t ns = b0 < B.ptr.len ? (size_t)(B.ptr.items[b0] - b) : blen;
        size_t ne = b1 < B.ptr.len ? (size_t)(B.ptr.items[b1] - b) : blen;
        size_t hs = os;
        while (os < oe && ns < ne && a[os] == b[ns])
            os++, ns++;
        while (os > hs && ((unsigned char)a[os] & 0xC0) == 0x80) /* back to a character's start */
            os--, ns--;
        size_t he = oe;
        while (oe > os && ne > ns && a[oe - 1] == b[ne - 1])
            oe--, ne--;
        while (oe < he && ((unsigned char)a[oe] & 0xC0) == 0x80)
            oe++, ne++;
        ol_text_change c = {(uint32_t)os, (uint32_t)oe, (uint32_t)ns, (uint32_t)ne};
        ol_vec_push(out, c);
    }
    ol_vec_free(&ops);
    ol_vec_free(&A.ptr);
    ol_vec_free(&A.len);
    ol_vec_free(&B.ptr);
    ol_vec_free(&B.len);
}

/* ---- writing a fixed file ---------------------------------------------------------- */

void ol_fix_write(const ol_source *src, const char *path, const char *orig_text, size_t orig_len,
                  const struct ol_file_snapshot *snapshot, ol_fix_mode mode, ol_fix_outcome *outcome)
{
    /* bytes to write, in the file's own form */
    ol_buf bytes = {0}, why = {0};
    bool ok;
    if (src->notebook)
        ok = ol_notebook_render(src, src->text, src->len, &bytes, &why);
    else
    {
        change_vec changes = {0};
        text_changes(orig_text, orig_len, src->text, src->len, &changes);
        ok = ol_source_encode(src, src->text, src->len, changes.items, changes.len, &bytes, &why);
        ol_vec_free(&changes);
    }
    if (!ok) {
        outcome->error = ol_xasprintf("cannot apply the fixes: %s; the file was left unchanged",
                                      why.data ? why.data : "unknown reason");
        outcome->applied = 0;
    } else if (mode == OL_FIX_DIFF) {
        ol_buf d = {0};
        if (src->notebook) {
            ol_unified_diff(path, src->raw, src->raw_len, bytes.data, bytes.len, &d);
        } else {
            /* diff in the decoded text: what a reader wants to see */
            ol_unified_diff(path, orig_text, orig_len, src->text, src->len, &d);
        }
        outcome->diff = ol_buf_take(&d);
    } else if (mode == OL_FIX_OUTPUT) {
        outcome->output_len = bytes.len;
        outcome->output = ol_buf_take(&bytes);
    } else if (mode == OL_FIX_WRITE) {
        ol_buf_clear(&why);
        int err = ol_replace_file(path, bytes.data ? bytes.data : "", bytes.len, snapshot, &why);
        if (err) {
            if (err == OL_ERR_CHANGED)
                outcome->error = ol_xasprintf("`%s` changed on disk while oomlint was fixing it; it was skipped "
                                              "and keeps the newer text (run oomlint again)",
                                              path);
            else
                outcome->error = ol_xasprintf("cannot write the fixes to `%s`: %s", path,
                                              why.data ? why.data : strerror(err));
            outcome->failed = true;
            outcome->applied = 0;
        }
    }
    ol_buf_free(&bytes);
    ol_buf_free(&why);
}

/* ---- the pieces of a round, for the linter that drives the rounds ---------------------- */

char *ol_fix_signature(const ol_source *src, const ol_diag *d)
{
    return signature(src, d);
}

bool ol_fix_blocked(const ol_fix_sigs *block, const ol_source *src, const ol_diag *d)
{
    return blocked(block, src, d);
}

void ol_fix_sigs_free(ol_fix_sigs *sigs)
{
    for (size_t i = 0; i < sigs->len; i++)
        free(sigs->items[i]);
    ol_vec_free(sigs);
}

void ol_fix_plan_round(const ol_source *src, const ol_diag_vec *diags, bool unsafe, const ol_fix_sigs *block,
                       ol_fix_plan *plan)
{
    plan_round(src, diags, unsafe, block, plan);
}

void ol_fix_apply_plan(const char *text, size_t len, const ol_diag *const *plan, size_t count, ol_buf *out)
{
    apply_plan(text, len, plan, count, out);
}
