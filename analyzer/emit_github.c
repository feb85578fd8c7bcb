/*
 * emit_github.c - GitHub Actions workflow-command annotations
 * (`--format github`), one line per finding:
 *
 *   ::error file=PATH,line=L,col=C,endLine=EL,endColumn=EC,title=CODE::MESSAGE
 *
 * errors are `::error`, warnings `::warning` and info findings `::notice`.
 * GitHub shows each as an annotation on the file and line in the run and
 * the pull request. Lines and columns are the ones the text and JSON outputs
 * give (1-based, columns in code points, end exclusive). A notebook finding
 * points at the lines of the .ipynb file itself, with no columns, and names
 * the cell and line in its message. The message carries the help line after
 * a line break.
 *
 * Workflow commands have their own escaping: in the message `%`, CR and LF
 * become %25, %0D and %0A; property values also escape `:` and `,` (%3A,
 * %2C), which would otherwise end the value. Other control characters and
 * bytes that are not UTF-8 (only a file name can hold them) are written as
 * %XX too: the runner leaves those as they are, so the log shows them
 * visibly instead of passing them to the terminal.
 */
#include <string.h>

#include "emit.h"
#include "rule.h"

void ol_github_escape(ol_buf *b, const char *s, bool property)
{
    const char *end = s + strlen(s);
    for (; *s; s++) {
        const unsigned char u = (unsigned char)*s;
        if (u >= 0x80) {
            int len = ol_utf8_seq_len((const unsigned char *)s, (size_t)(end - s));
            if (len == 0) {
                ol_buf_printf(b, "%%%02X", u);
            } else {
                ol_buf_add(b, s, (size_t)len);
                s += len - 1;
            }
            continue;
        }
        if ((u < 0x20 && u != '\r' && u != '\n') || u == 0x7F) {
            ol_buf_printf(b, "%%%02X", u);
            continue;
        }
        switch (*s) {
        case '%':
            ol_buf_puts(b, "%25");
            break;
        case '\r':
            ol_buf_puts(b, "%0D");
            break;
        case '\n':
            ol_buf_puts(b, "%0A");
            break;
        case ':':
            ol_buf_puts(b, property ? "%3A" : ":");
            break;
        case ',':
            ol_buf_puts(b, property ? "%2C" : ",");
            break;
        default:
            ol_buf_putc(b, *s);
        }
    }
}

static const char *command(ol_severity s)
{
    return s == OL_SEV_ERROR ? "error" : s == OL_SEV_WARNING ? "warning" : "notice";
}

static void annotation(ol_buf *b, const ol_file_result *r, const ol_diag *d)
{
    const ol_rule *rule = d->rule;
    ol_location loc = ol_diag_location(r, d);
    bool located = r->has_source && rule != &ol_rule_oom001;
    bool notebook = located && r->src.notebook;

    ol_buf_printf(b, "::%s file=", command(rule->severity));
    ol_github_escape(b, r->path, true);
    if (!located || (notebook && !loc.cell))
        ol_buf_puts(b, ",line=1");
    else if (notebook)
        ol_buf_printf(b, ",line=%u,endLine=%u", loc.file_line, loc.file_end_line);
    else
        ol_buf_printf(b, ",line=%u,col=%u,endLine=%u,endColumn=%u", loc.line, loc.col, loc.end_line, loc.end_col);
    ol_buf_puts(b, ",title=");
    ol_github_escape(b, rule->code, true);
    ol_buf_puts(b, "::");
    ol_github_escape(b, d->message, false);
    if (notebook && loc.cell)
        ol_buf_printf(b, " (cell %u, line %u)", loc.cell, loc.line);
    if (d->help) {
        ol_buf_puts(b, "%0Ahelp: ");
        ol_github_escape(b, d->help, false);
    }
    ol_buf_putc(b, '\n');
}

void ol_emit_github_file(FILE *out, const ol_file_result *r)
{
    ol_buf line = {0};
    for (size_t i = 0; i < r->diags.len; i++) {
        ol_buf_clear(&line);
        annotation(&line, r, &r->diags.items[i]);
        fwrite(line.data, 1, line.len, out);
    }
    ol_buf_free(&line);
}
