/*
 * emit_junit.c - JUnit XML (`--output-format junit`), the test report CI
 * systems show (GitLab's artifacts:reports:junit, Jenkins, Azure, ...):
 *
 *   <testsuites name="oomlint">
 *     <testsuite name="PATH" tests="N" failures="N" errors="0" skipped="0">
 *       <testcase name="OOM101 at 13:9" classname="PATH" file="PATH" line="13">
 *         <failure message="MESSAGE" type="OOM101">PATH:13:9: MESSAGE&#10;help: ...&#10;note: ...</failure>
 *       </testcase>
 *     </testsuite>
 *   </testsuites>
 *
 * One suite per file with findings, one failing test case per finding (an
 * error-severity one too: `errors` is for a test that could not run). A
 * run with no findings is one passing test case, so the report is never
 * empty. The report is written file by file as files are linted, so the
 * top element carries no totals (they are optional in the schema; each
 * suite has its own). The failure's text ends with the finding's evidence,
 * a `note: MESSAGE (PLACE)` line per note, and whether it rests on a guess,
 * as the text output prints them. Text is escaped for XML 1.0: markup characters as
 * entities, the control characters XML cannot hold and bytes that are not
 * UTF-8 as U+FFFD.
 */
#include <stdio.h>
#include <string.h>

#include "emit.h"
#include "rule.h"

const char ol_junit_head[] = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"oomlint\">\n";
const char ol_junit_tail[] = "</testsuites>\n";
const char ol_junit_empty[] =
    "  <testsuite name=\"oomlint\" tests=\"1\" failures=\"0\" errors=\"0\" skipped=\"0\">\n"
    "    <testcase name=\"no findings\" classname=\"oomlint\"/>\n"
    "  </testsuite>\n";

void ol_xml_escape(ol_buf *b, const char *s)
{
    const char *end = s + strlen(s);
    for (; *s; s++) {
        unsigned char u = (unsigned char)*s;
        if (u >= 0x80) {
            int len = ol_utf8_seq_len((const unsigned char *)s, (size_t)(end - s));
            if (len == 0) {
                ol_buf_puts(b, "\xEF\xBF\xBD");
            } else {
                ol_buf_add(b, s, (size_t)len);
                s += len - 1;
            }
            continue;
        }
        switch (u) {
        case '&': ol_buf_puts(b, "&amp;"); break;
        case '<': ol_buf_puts(b, "&lt;"); break;
        case '>': ol_buf_puts(b, "&gt;"); break;
        case '"': ol_buf_puts(b, "&quot;"); break;
        case '\'': ol_buf_puts(b, "&apos;"); break;
        /* attribute values normalise raw whitespace away: keep it as references */
        case '\n': ol_buf_puts(b, "&#10;"); break;
        case '\r': ol_buf_puts(b, "&#13;"); break;
        case '\t': ol_buf_puts(b, "&#9;"); break;
        default:
            if (u < 0x20 || u == 0x7F)
                ol_buf_puts(b, "\xEF\xBF\xBD");
            else
                ol_buf_putc(b, (char)u);
        }
    }
}

/* The notes of d and its guess, one line each after the failure's text. */
static void junit_notes(ol_buf *b, const ol_file_result *r, const ol_diag *d)
{
    for (size_t i = 0; i < d->notes.len; i++) {
        const ol_note *n = &d->notes.items[i];
        const char *path;
        ol_location loc = ol_note_location(r, n, &path);
        char where[64];
        if (loc.cell)
            snprintf(where, sizeof where, ":cell %u:%u:%u", loc.cell, loc.line, loc.col);
        else if (loc.col)
            snprintf(where, sizeof where, ":%u:%u", loc.line, loc.col);
        else
            snprintf(where, sizeof where, ":%u", loc.line);
        ol_buf_puts(b, "&#10;note: ");
        ol_xml_escape(b, n->message);
        ol_buf_puts(b, " (");
        ol_xml_escape(b, path);
        ol_buf_puts(b, where);
        ol_buf_putc(b, ')');
    }
    if (d->guess) {
        ol_buf_puts(b, "&#10;note: this finding rests on a guess (");
        ol_xml_escape(b, d->guess);
        ol_buf_putc(b, ')');
    }
}

void ol_emit_junit_file(ol_buf *b, const ol_file_result *r)
{
    ol_buf_puts(b, "  <testsuite name=\"");
    ol_xml_escape(b, r->path);
    ol_buf_printf(b, "\" tests=\"%zu\" failures=\"%zu\" errors=\"0\" skipped=\"0\">\n", r->diags.len, r->diags.len);
    for (size_t i = 0; i < r->diags.len; i++) {
        const ol_diag *d = &r->diags.items[i];
        ol_location loc = ol_diag_location(r, d);
        bool located = r->has_source && d->rule != &ol_rule_oom001;
        char where[64];
        if (located && r->src.notebook && loc.cell)
            snprintf(where, sizeof where, "cell %u, %u:%u", loc.cell, loc.line, loc.col);
        else
            snprintf(where, sizeof where, "%u:%u", located ? loc.line : 1, located ? loc.col : 1);
        uint32_t file_line = located ? (r->src.notebook ? (loc.cell ? loc.file_line : 1) : loc.line) : 1;
        ol_buf_printf(b, "    <testcase name=\"%s at %s\" classname=\"", d->rule->code, where);
        ol_xml_escape(b, r->path);
        ol_buf_puts(b, "\" file=\"");
        ol_xml_escape(b, r->path);
        ol_buf_printf(b, "\" line=\"%u\">\n      <failure message=\"", file_line);
        ol_xml_escape(b, d->message);
        ol_buf_printf(b, "\" type=\"%s\">", d->rule->code);
        ol_xml_escape(b, r->path);
        ol_buf_printf(b, ":%s: %s [%s] ", where, d->rule->code, ol_severity_name(d->rule->severity));
        ol_xml_escape(b, d->message);
        if (d->help) {
            ol_buf_puts(b, "&#10;help: ");
            ol_xml_escape(b, d->help);
        }
        junit_notes(b, r, d);
        ol_buf_puts(b, "</failure>\n    </testcase>\n");
    }
    ol_buf_puts(b, "  </testsuite>\n");
}
