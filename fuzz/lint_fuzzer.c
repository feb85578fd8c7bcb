/*
 * lint_fuzzer.c - libFuzzer target over oomlint's whole per-file path.
 *
 * Each input is linted twice, as a Python file and as a notebook (most
 * inputs are not JSON and stop at the notebook loader, which is a path worth
 * fuzzing too): bytes -> decode (encodings, BOM, NULs) or notebook JSON ->
 * parse -> model -> every rule, opt-in ones included -> suppressions -> every
 * emitter (text with colour, JSON, SARIF, GitHub) -> every fix, safe and
 * unsafe, applied in rounds and re-parsed (fix.c's --diff path, which also
 * renders notebooks and re-encodes sources, and writes nothing).
 *
 * Besides the sanitizers' findings the target checks what the rest of
 * oomlint takes for granted: findings and fix edits lie inside the text,
 * edits are sorted and disjoint, and a file that parsed cleanly is never
 * turned by a fix into one that does not. The build (Makefile, `make fuzz`)
 * defines OL_STRICT_NODES, so reading a node the tree does not have aborts.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "emit.h"
#include "fix.h"
#include "lint.h"
#include "notebook.h"
#include "rule.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fail(const char *what, const ol_file_result *r)
{
    fprintf(stderr, "lint_fuzzer: %s (%s)\n", what, r->path);
    abort();
}

static void check_result(const ol_file_result *r)
{
    if (!r->has_source)
        return;
    uint32_t len = r->src.len;
    for (size_t i = 0; i < r->diags.len; i++) {
        const ol_diag *d = &r->diags.items[i];
        if (d->start > d->end || d->end > len)
            fail("a finding lies outside the text", r);
        if (!d->message)
            fail("a finding has no message", r);
        if (!d->fix)
            continue;
        for (size_t e = 0; e < d->fix->edits.len; e++) {
            const ol_edit *ed = &d->fix->edits.items[e];
            if (ed->start > ed->end || ed->end > len || !ed->content)
                fail("a fix edit lies outside the text", r);
            if (e > 0 && d->fix->edits.items[e - 1].end > ed->start)
                fail("a fix's edits overlap or are out of order", r);
        }
    }
}

static void emit_all(const ol_file_result *r)
{
    static const ol_format formats[] = {OL_FMT_TEXT, OL_FMT_CONCISE, OL_FMT_JSON, OL_FMT_SARIF, OL_FMT_GITHUB,
                                         OL_FMT_GITLAB, OL_FMT_JUNIT};
    for (size_t f = 0; f < OL_ARRAY_LEN(formats); f++) {
        for (int variant = 0; variant < 2; variant++) {
            char *buf = NULL;
            size_t n = 0;
            FILE *out = open_memstream(&buf, &n);
            if (!out)
                abort();
            ol_emit_options eo = {formats[f], variant == 1, false, variant == 1 && formats[f] == OL_FMT_TEXT,
                                  variant == 1};
            ol_emit(out, r, 1, &eo);
            fclose(out);
            /* the part made when a file is linted (its source freed after)
             * must be what the report made at the end would have said */
            ol_renderer rd;
            ol_renderer_init(&rd, &eo, false);
            ol_file_result part = *r;
            part.rendered = NULL;
            ol_render_part(&rd, &part);
            part.has_source = false;
            char *again = NULL;
            size_t again_n = 0;
            FILE *out2 = open_memstream(&again, &again_n);
            if (!out2)
                abort();
            ol_emit(out2, &part, 1, &eo);
            fclose(out2);
            if (r->has_source && (again_n != n || memcmp(again, buf, n) != 0))
                fail("a part rendered when the file was linted differs from the report", r);
            free(again);
            free(part.rendered);
            ol_renderer_free(&rd);
            free(buf);
        }
    }
}

static size_t parse_errors(const ol_file_result *r)
{
    size_t n = 0;
    for (size_t i = 0; i < r->diags.len; i++)
        n += r->diags.items[i].rule == &ol_rule_oom002;
    return n;
}

static void lint_as(ol_linter *lt, const char *path, const uint8_t *data, size_t size)
{
    char *bytes = ol_xmalloc(size + 1);
    memcpy(bytes, data, size);
    bytes[size] = '\0';
    ol_source src;
    ol_buf why = {0};
    bool ok = ol_is_notebook_path(path) ? ol_notebook_load(&src, path, bytes, size, &why)
                                        : ol_source_init(&src, path, bytes, size, &why);
    ol_buf_free(&why);
    if (!ok) {
        ol_source_free(&src);
        return;
    }
    ol_file_result r = {0};
    ol_lint_source(lt, &src, &r);
    check_result(&r);
    emit_all(&r);
    size_t errors_before = parse_errors(&r);
    /* fix with safe fixes only when that differs from fixing with all */
    bool any_safe = false, any_unsafe = false;
    for (size_t i = 0; i < r.diags.len; i++)
        if (r.diags.items[i].fix) {
            any_safe |= !r.diags.items[i].fix->unsafe;
            any_unsafe |= r.diags.items[i].fix->unsafe;
        }
    for (int unsafe = any_safe && any_unsafe ? 0 : 1; unsafe < 2 && (any_safe || any_unsafe); unsafe++) {
        /* fix a copy: ol_fix_file replaces the result with the fixed one */
        ol_file_result copy = {0};
        ol_source again;
        ol_buf why2 = {0};
        char *bytes2 = ol_xmalloc(size + 1);
        memcpy(bytes2, data, size);
        bytes2[size] = '\0';
        bool ok2 = ol_is_notebook_path(path) ? ol_notebook_load(&again, path, bytes2, size, &why2)
                                             : ol_source_init(&again, path, bytes2, size, &why2);
        ol_buf_free(&why2);
        if (!ok2)
            abort(); /* it decoded a moment ago */
        ol_lint_source(lt, &again, &copy);
        ol_fix_outcome outcome;
        ol_fix_file(lt, &copy, OL_FIX_DIFF, unsafe == 1, &outcome);
        check_result(&copy);
        if (outcome.applied && parse_errors(&copy) > errors_before)
            fail("a fix made the file unparsable", &copy);
        if (getenv("OL_FUZZ_STRICT_FIXES") && outcome.error && errors_before == 0 && strstr(outcome.error, "parse"))
            fail("a rule offered a fix that does not parse", &copy);
        if (outcome.applied)
            emit_all(&copy);
        ol_fix_outcome_free(&outcome);
        ol_file_result_free(&copy);
    }
    ol_file_result_free(&r);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* immutable after the first call, as in oomlint itself */
    static ol_grammar grammar;
    static bool *enabled;
    if (!enabled) {
        if (!ol_grammar_init(&grammar))
            abort();
        enabled = ol_xcalloc(ol_rule_count, sizeof(bool));
        for (size_t i = 0; i < ol_rule_count; i++)
            enabled[i] = true;
    }
    if (size > OL_MAX_SOURCE_BYTES)
        return 0;
    ol_settings settings;
    memset(&settings, 0, sizeof(settings));
    settings.enabled = enabled;
    ol_linter lt;
    ol_linter_init(&lt, &grammar, &settings);
    lint_as(&lt, "fuzz/train.py", data, size);
    lint_as(&lt, "fuzz/train.ipynb", data, size);
    ol_linter_free(&lt);
    return 0;
}
