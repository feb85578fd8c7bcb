/*
 * docs.h - a rule's documentation, rendered for each place that shows it.
 *
 * The words live in each rule's ol_rule value (rules/); this file decides how
 * they read in a terminal (`oomlint rule CODE`), as Markdown (docs/rules/,
 * SARIF help.markdown, the language server's hover) and as plain text (SARIF
 * help.text). Everything that shows a rule's page calls these, so an addition
 * to the page (references, measured costs) is made once, here.
 */
#ifndef OL_DOCS_H
#define OL_DOCS_H

#include "rule.h"
#include "util.h"

/* The page as `oomlint rule CODE` prints it. */
void ol_rule_doc_terminal(const ol_rule *r, ol_buf *b);
/* The page as Markdown (docs/rules/CODE.md, SARIF, hover). */
void ol_rule_doc_markdown(const ol_rule *r, ol_buf *b);
/* The page as plain text without indentation (SARIF help.text). */
void ol_rule_doc_plain(const ol_rule *r, ol_buf *b);

#endif
