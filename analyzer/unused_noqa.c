/*
 * unused_noqa.c - OOM003's findings: the suppressions of a file that
 * suppressed nothing (rules/oom003_unused_noqa.c says what counts, and
 * why). The engine reports them after every other rule has run and the
 * findings were filtered (lint.c), because only then is it known which
 * suppressions were needed; they are read from the suppression comments
 * (suppress.h), which no rule sees.
 */
#include <stdlib.h>
#include <string.h>

#include "rule.h"
#include "suppress.h"

static bool blank(char c)
{
    return c == ' ' || c == '\t';
}

static const char *directive_name(ol_suppression_kind kind)
{
    return kind == OL_SUPPRESS_NOQA ? "noqa" : kind == OL_SUPPRESS_DISABLE ? "oomlint: disable"
                                           : kind == OL_SUPPRESS_FILE_NOQA ? "oomlint: noqa"
                                                                          : "oomlint: disable-file";
}

/* Edits that take the whole directive out of its comment. */
static void remove_directive(const ol_source *src, const ol_suppression *sup, ol_fix *fix)
{
    const char *text = src->text;
    uint32_t after = sup->end;
    while (after < sup->comment_end && blank(text[after]))
        after++;
    if (after < sup->comment_end) {
        if (text[after] == '#')
            ol_fix_edit(fix, sup->start, after, "");       /* `# noqa: X  # note` -> `# note` */
        else
            ol_fix_edit(fix, sup->keyword, after, "");     /* `# noqa: X why` -> `# why` */
        return;
    }
    /* the directive ends the comment: the blanks before it go too */
    uint32_t from = sup->start;
    while (from > 0 && blank(text[from - 1]))
        from--;
    uint32_t line = ol_source_line_index(src, sup->start);
    uint32_t line_start = src->line_starts[line];
    if (from <= line_start && !src->notebook) {
        /* nothing else on the line: the line goes (notebooks keep their
         * line count, so there it is only emptied) */
        uint32_t to = line + 1 < src->line_count ? src->line_starts[line + 1] : (uint32_t)src->len;
        ol_fix_edit(fix, line_start, to, "");
    } else {
        ol_fix_edit(fix, from, sup->comment_end, "");
    }
}

typedef OL_VEC(const char *) code_list;

static void list_codes(ol_buf *b, const char *label, const code_list *codes, bool *first)
{
    if (!codes->len)
        return;
    ol_buf_printf(b, "%s%s: ", *first ? "" : "; ", label);
    for (size_t i = 0; i < codes->len; i++)
        ol_buf_printf(b, "%s`%s`", i ? ", " : "", codes->items[i]);
    *first = false;
}

static void judge(ol_check *c, const ol_suppression *sup, const bool *enabled)
{
    const ol_source *src = c->src;
    if (sup->codes.len == 0) {
        if (sup->kind == OL_SUPPRESS_NOQA || sup->used)
            return; /* a blanket `# noqa` may serve another linter */
        ol_diag *d = ol_report(c, sup->start, sup->end, "Unused blanket `%s` directive: it suppresses no finding",
                               directive_name(sup->kind));
        ol_diag_help(d, "remove the directive");
        ol_fix *fix = ol_fix_new(false, "Remove the unused directive");
        remove_directive(src, sup, fix);
        ol_diag_attach_fix(d, fix);
        return;
    }
    code_list unused = {0}, disabled = {0}, unknown = {0}, duplicated = {0};
    OL_VEC(size_t) kept = {0};
    for (size_t k = 0; k < sup->codes.len; k++) {
        const char *code = sup->codes.items[k];
        bool dup = false;
        for (size_t j = 0; j < k && !dup; j++)
            dup = strcmp(sup->codes.items[j], code) == 0;
        const ol_rule *rule = ol_rule_find(code);
        if (sup->code_used.items[k] || (!dup && rule == &ol_rule_oom003)) {
            /* OOM003 in the list is judged by OOM003's own findings */
            ol_vec_push(&kept, k);
        } else if (dup) {
            ol_vec_push(&duplicated, code);
        } else if (!rule) {
            if (sup->kind == OL_SUPPRESS_NOQA && strncmp(code, "OOM", 3) != 0)
                ol_vec_push(&kept, k); /* another linter's code */
            else
                ol_vec_push(&unknown, code);
        } else if (!enabled[ol_rule_index(rule)]) {
            ol_vec_push(&disabled, code);
        } else {
            ol_vec_push(&unused, code);
        }
    }
    if (kept.len < sup->codes.len) {
        ol_buf what = {0};
        bool first = true;
        list_codes(&what, "unused", &unused, &first);
        list_codes(&what, "non-enabled", &disabled, &first);
        list_codes(&what, "unknown", &unknown, &first);
        list_codes(&what, "duplicated", &duplicated, &first);
        ol_diag *d = ol_report(c, sup->start, sup->end, "Unused `%s` directive (%s)", directive_name(sup->kind),
                               what.data);
        ol_fix *fix;
        if (kept.len == 0) {
            ol_diag_help(d, "remove the directive: it suppresses no finding");
            fix = ol_fix_new(false, "Remove the unused directive");
            remove_directive(src, sup, fix);
        } else {
            ol_diag_help(d, "remove the codes that suppress nothing");
            fix = ol_fix_new(false, "Remove the unused codes");
            ol_buf rest = {0};
            for (size_t i = 0; i < kept.len; i++) {
                const ol_span *s = &sup->code_spans.items[kept.items[i]];
                if (i)
                    ol_buf_puts(&rest, ", ");
                ol_buf_add(&rest, src->text + s->start, s->end - s->start);
            }
            ol_fix_edit(fix, sup->code_spans.items[0].start, sup->code_spans.items[sup->code_spans.len - 1].end,
                        rest.data);
            ol_buf_free(&rest);
        }
        ol_diag_attach_fix(d, fix);
        ol_buf_free(&what);
    }
    ol_vec_free(&unused);
    ol_vec_free(&disabled);
    ol_vec_free(&unknown);
    ol_vec_free(&duplicated);
    ol_vec_free(&kept);
}

void ol_report_unused_suppressions(ol_check *c, const ol_suppressions *s, const bool *enabled)
{
    for (size_t i = 0; i < s->items.len; i++)
        judge(c, &s->items.items[i], enabled);
}
