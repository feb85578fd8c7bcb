/*
 * docs.c - rendering a rule's documentation (see docs.h).
 */
#include "docs.h"

#include <string.h>

#include "references.h"

static void indent_block(ol_buf *b, const char *text, const char *prefix)
{
    const char *p = text;
    while (*p) {
        const char *nl = strchr(p, '\n');
        size_t len = nl ? (size_t)(nl - p) : strlen(p);
        ol_buf_puts(b, prefix);
        ol_buf_add(b, p, len);
        ol_buf_putc(b, '\n');
        p += len + (nl ? 1 : 0);
    }
}

/* ---- References: the pages that explain a rule's cost (references.c) ---- */

static void references_terminal(const ol_rule *r, ol_buf *b)
{
    const ol_reference *refs = ol_rule_references(r->code);
    if (!refs || !refs->title)
        return;
    ol_buf_puts(b, "\nReferences\n");
    for (; refs->title; refs++)
        ol_buf_printf(b, "  - %s\n    %s\n", refs->title, refs->url);
}

static void references_markdown(const ol_rule *r, ol_buf *b)
{
    const ol_reference *refs = ol_rule_references(r->code);
    if (!refs || !refs->title)
        return;
    ol_buf_puts(b, "\n## References\n\n");
    for (; refs->title; refs++)
        ol_buf_printf(b, "- [%s](%s)\n", refs->title, refs->url);
}

static void references_plain(const ol_rule *r, ol_buf *b)
{
    const ol_reference *refs = ol_rule_references(r->code);
    if (!refs || !refs->title)
        return;
    ol_buf_puts(b, "\nReferences\n");
    for (; refs->title; refs++)
        ol_buf_printf(b, "- %s: %s\n", refs->title, refs->url);
}

void ol_rule_doc_terminal(const ol_rule *r, ol_buf *b)
{
    ol_buf_printf(b, "%s %s [%s]%s\n\n%s\n\n", r->code, r->name, ol_severity_name(r->severity),
                  r->opt_in ? " (opt-in)" : "", r->summary);
    ol_buf_printf(b, "What it does\n  %s\n\nWhy is this bad?\n  %s\n\nExample\n", r->what, r->why);
    indent_block(b, r->example, "    ");
    ol_buf_puts(b, "\nUse instead\n");
    indent_block(b, r->instead, "    ");
    if (r->fix)
        ol_buf_printf(b, "\nFix\n  %s\n", r->fix);
    references_terminal(r, b);
    ol_buf_printf(b, "\nMore: %s%s.md\n", OL_DOCS_URL, r->code);
}

void ol_rule_doc_markdown(const ol_rule *r, ol_buf *b)
{
    ol_buf_printf(b, "# %s %s\n\n", r->code, r->name);
    ol_buf_printf(b, "Severity: %s%s. Fix: %s.\n\n", ol_severity_name(r->severity),
                  r->opt_in ? " (opt-in: runs only when selected by its code)" : "",
                  r->fix ? "available" : "none");
    ol_buf_printf(b, "%s\n\n", r->summary);
    ol_buf_printf(b, "## What it does\n\n%s\n\n", r->what);
    ol_buf_printf(b, "## Why is this bad?\n\n%s\n\n", r->why);
    ol_buf_puts(b, "## Example\n\n```python\n");
    ol_buf_puts(b, r->example);
    ol_buf_puts(b, "\n```\n\n## Use instead\n\n```python\n");
    ol_buf_puts(b, r->instead);
    ol_buf_puts(b, "\n```\n");
    if (r->fix)
        ol_buf_printf(b, "\n## Fix\n\n%s\n", r->fix);
    references_markdown(r, b);
}

void ol_rule_doc_plain(const ol_rule *r, ol_buf *b)
{
    ol_buf_printf(b, "%s\n\nWhat it does\n%s\n\nWhy is this bad?\n%s\n\nExample\n%s\n\nUse instead\n%s\n", r->summary,
                  r->what, r->why, r->example, r->instead);
    if (r->fix)
        ol_buf_printf(b, "\nFix\n%s\n", r->fix);
    references_plain(r, b);
}
