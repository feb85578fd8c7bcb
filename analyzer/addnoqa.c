/*
 * addnoqa.c - `--add-noqa`: a `# noqa: CODES` on every line with a finding,
 * so that a project can adopt oomlint now and work through its findings
 * later (as `ruff check --add-noqa` does).
 *
 * Each line with findings gets its codes, sorted: appended to a `# noqa:`
 * list the line already ends with, else as `  # noqa: CODE, CODE` at its
 * end. The new text is linted again and kept only if it says what was
 * meant: no rule reports more than before, and no finding of a changed line
 * is left. When it does not (a line that ends inside a string or after a
 * backslash, where the comment would change the code or not be a comment),
 * each line is tried on its own and only the lines that pass are kept; the
 * others keep their findings, which the run then reports. The file is
 * written like a fix (writefile.h): atomically, in its own encoding and
 * line endings, never over a file that changed since it was read.
 * Syntax errors (OOM002) and unreadable files (OOM001) get no directive.
 */
#include <stdlib.h>
#include <string.h>

#include "addnoqa.h"
#include "notebook.h"
#include "rule.h"
#include "writefile.h"


static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

void ol_noqa_collect(const ol_source *src, const ol_diag_vec *diags, ol_noqa_lines *out)
{
    for (size_t i = 0; i < diags->len; i++) {
        const ol_diag *d = &diags->items[i];
        if (d->rule == &ol_rule_oom001 || d->rule == &ol_rule_oom002)
            continue;
        uint32_t line = ol_source_line_index(src, d->start);
        ol_noqa_line *lc = NULL;
        for (size_t k = 0; k < out->len && !lc; k++)
            if (out->items[k].line == line)
                lc = &out->items[k];
        if (!lc) {
            ol_noqa_line fresh = {line, {0}};
            ol_vec_push(out, fresh);
            lc = &ol_vec_last(out);
        }
        bool have = false;
        for (size_t k = 0; k < lc->codes.len; k++)
            have |= strcmp(lc->codes.items[k], d->rule->code) == 0;
        if (!have)
            ol_vec_push(&lc->codes, d->rule->code);
    }
    for (size_t k = 0; k < out->len; k++)
        ol_sort(out->items[k].codes.items, out->items[k].codes.len, sizeof(char *), cmp_str);
}

/* Where an existing `# noqa: CODES` list on [start, end) ends (the offset
 * after its last code), or 0 when the line has none. */
static size_t noqa_list_end(const char *text, size_t start, size_t end)
{
    for (size_t p = end; p-- > start;) {
        if (text[p] != '#')
            continue;
        size_t q = p + 1;
        while (q < end && text[q] == ' ')
            q++;
        if (end - q < 5 || strncasecmp(text + q, "noqa:", 5) != 0)
            return 0;
        q += 5;
        size_t last = 0;
        while (q < end) {
            while (q < end && (text[q] == ' ' || text[q] == ','))
                q++;
            size_t c = q;
            while (q < end && ((text[q] >= 'A' && text[q] <= 'Z') || (text[q] >= 'a' && text[q] <= 'z') ||
                               (text[q] >= '0' && text[q] <= '9')))
                q++;
            if (q == c)
                break;
            last = q;
        }
        return last;
    }
    return 0;
}

void ol_noqa_build(const ol_source *src, const ol_noqa_lines *lines, const bool *chosen, ol_buf *out)
{
    size_t from = 0;
    for (size_t k = 0; k < lines->len; k++) {
        if (!chosen[k])
            continue;
        const ol_noqa_line *lc = &lines->items[k];
        size_t start = src->line_starts[lc->line];
        size_t end = lc->line + 1 < src->line_count ? src->line_starts[lc->line + 1] : src->len;
        while (end > start && (src->text[end - 1] == '\n' || src->text[end - 1] == '\r'))
            end--;
        size_t list_end = noqa_list_end(src->text, start, end);
        size_t at = list_end ? list_end : end;
        if (!list_end)
            while (at > start && (src->text[at - 1] == ' ' || src->text[at - 1] == '\t'))
                at--;
        ol_buf_add(out, src->text + from, at - from);
        ol_buf_puts(out, list_end ? ", " : (at > start ? "  # noqa: " : "# noqa: "));
        for (size_t c = 0; c < lc->codes.len; c++)
            ol_buf_printf(out, "%s%s", c ? ", " : "", lc->codes.items[c]);
        from = list_end ? at : end;
    }
    ol_buf_add(out, src->text + from, src->len - from);
}

/* Does `after` say what the directives meant: no rule reports more than in
 * `before`, and no finding is left on a line that got a directive? */
bool ol_noqa_as_meant(const ol_source *before_src, const ol_diag_vec *before, const ol_source *after_src,
                      const ol_diag_vec *after, const ol_noqa_lines *lines, const bool *chosen)
{
    size_t *counts = ol_xcalloc(ol_rule_count ? ol_rule_count : 1, sizeof(size_t));
    bool ok = true;
    for (size_t i = 0; i < before->len; i++)
        counts[ol_rule_index(before->items[i].rule)]++;
    for (size_t i = 0; i < after->len && ok; i++) {
        const ol_diag *d = &after->items[i];
        size_t *n = &counts[ol_rule_index(d->rule)];
        if (*n == 0)
            ok = false;
        else
            (*n)--;
        uint32_t line = ol_source_line_index(after_src, d->start);
        for (size_t k = 0; k < lines->len && ok; k++)
            if (chosen[k] && lines->items[k].line == line && d->rule != &ol_rule_oom002)
                ok = false;
    }
    free(counts);
    return ok && after_src->line_count == before_src->line_count;
}

bool ol_noqa_write(const ol_source *src, const ol_source *after_src, const char *path,
                   const struct ol_file_snapshot *snapshot, const char *text, size_t text_len, ol_fix_outcome *outcome)
{
        ol_buf bytes = {0}, why = {0};
        /* one change from the first byte that differs to the last: every byte
         * outside it is written back as it was read (ol_source_encode) */
        const char *old_text = src->text ? src->text : "";
        size_t old_len = src->len, new_len = text_len, pre = 0, post = 0;
        while (pre < old_len && pre < new_len && old_text[pre] == text[pre])
            pre++;
        while (post < old_len - pre && post < new_len - pre &&
               old_text[old_len - 1 - post] == text[new_len - 1 - post])
            post++;
        /* keep the change on whole UTF-8 characters */
        while (pre > 0 && ((unsigned char)old_text[pre] & 0xC0) == 0x80)
            pre--;
        while (post > 0 && ((unsigned char)old_text[old_len - post] & 0xC0) == 0x80)
            post--;
        ol_text_change change = {(uint32_t)pre, (uint32_t)(old_len - post), (uint32_t)pre, (uint32_t)(new_len - post)};
        bool encoded = src->notebook ? ol_notebook_render(after_src, text, text_len, &bytes, &why)
                                       : ol_source_encode(src, text, text_len, &change, 1, &bytes, &why);
        int err = 0;
        if (!encoded) {
            outcome->error = ol_xasprintf("cannot add noqa directives to `%s`: %s; the file was left unchanged",
                                          path, why.data ? why.data : "unknown reason");
        } else {
            ol_buf_clear(&why);
            err = ol_replace_file(path, bytes.data ? bytes.data : "", bytes.len, snapshot, &why);
            if (err == OL_ERR_CHANGED)
                outcome->error = ol_xasprintf("`%s` changed on disk while oomlint was adding noqa directives; it "
                                              "was skipped and keeps the newer text (run oomlint again)",
                                              path);
            else if (err)
                outcome->error = ol_xasprintf("cannot write the noqa directives to `%s`: %s", path,
                                              why.data ? why.data : strerror(err));
            outcome->failed = err != 0;
        }
    ol_buf_free(&bytes);
    ol_buf_free(&why);
    return encoded && !err;
}

void ol_noqa_lines_free(ol_noqa_lines *lines)
{
    for (size_t k = 0; k < lines->len; k++)
        ol_vec_free(&lines->items[k].codes);
    ol_vec_free(lines);
}
