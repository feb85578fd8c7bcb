/*
 * registry.c - the table of every rule, in code order, and the reporting
 * helpers rules use. The table is built from rules.def, the only list of
 * rules in oomlint: the CLI, the selectors, the emitters and the
 * documentation all read the table.
 */
#include "rule.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* Every rule's value, declared and then listed from rules.def: a rule is
 * registered by its one line there. (OOM001-003 are declared in rule.h too;
 * a repeated extern declaration is the same declaration.) */
#define OL_RULE(code, value) extern const ol_rule value;
#include "rules.def"
#undef OL_RULE

const ol_rule *const ol_rules[] = {
#define OL_RULE(code, value) &value,
#include "rules.def"
#undef OL_RULE
};

const size_t ol_rule_count = sizeof(ol_rules) / sizeof(ol_rules[0]);

const ol_rule *ol_rule_find(const char *code)
{
    for (size_t i = 0; i < ol_rule_count; i++)
        if (strcmp(ol_rules[i]->code, code) == 0)
            return ol_rules[i];
    return NULL;
}

size_t ol_rule_index(const ol_rule *r)
{
    for (size_t i = 0; i < ol_rule_count; i++)
        if (ol_rules[i] == r)
            return i;
    return 0;
}

static ol_diag *report_v(ol_check *c, uint32_t start, uint32_t end, const char *fmt, va_list ap) OL_PRINTF(4, 0);

static ol_diag *report_v(ol_check *c, uint32_t start, uint32_t end, const char *fmt, va_list ap)
{
    ol_diag d = {0};
    d.rule = c->rule;
    d.start = start;
    d.end = end < start ? start : end;
    ol_buf b = {0};
    ol_buf_vprintf(&b, fmt, ap);
    d.message = ol_buf_take(&b);
    ol_vec_push(c->out, d);
    return &ol_vec_last(c->out);
}

ol_diag *ol_report(ol_check *c, uint32_t start, uint32_t end, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    ol_diag *d = report_v(c, start, end, fmt, ap);
    va_end(ap);
    return d;
}

ol_diag *ol_report_node(ol_check *c, ol_nid n, const char *fmt, ...)
{
    const ol_node *node = ol_node_at(c->tree, n);
    va_list ap;
    va_start(ap, fmt);
    ol_diag *d = report_v(c, node->start, node->end, fmt, ap);
    va_end(ap);
    return d;
}

void ol_diag_help(ol_diag *d, const char *fmt, ...)
{
    ol_buf b = {0};
    va_list ap;
    va_start(ap, fmt);
    ol_buf_vprintf(&b, fmt, ap);
    va_end(ap);
    free(d->help);
    d->help = ol_buf_take(&b);
}

void ol_diag_attach_fix(ol_diag *d, ol_fix *f)
{
    if (!f)
        return;
    if (!ol_fix_normalize(f) || f->edits.len == 0) {
        ol_fix_free(f);
        return;
    }
    ol_fix_free(d->fix);
    d->fix = f;
}

