/*
 * registry.c - the table of every rule, in code order, and the reporting
 * helpers rules use. The table is the only list of rules in oomlint: the
 * CLI, the selectors, the emitters and the documentation all read it.
 */
#include "rule.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

extern const ol_rule ol_rule_oom101;
extern const ol_rule ol_rule_oom102;
extern const ol_rule ol_rule_oom103;
extern const ol_rule ol_rule_oom104;
extern const ol_rule ol_rule_oom105;
extern const ol_rule ol_rule_oom106;
extern const ol_rule ol_rule_oom107;
extern const ol_rule ol_rule_oom201;
extern const ol_rule ol_rule_oom301;
extern const ol_rule ol_rule_oom302;
extern const ol_rule ol_rule_oom303;
extern const ol_rule ol_rule_oom401;
extern const ol_rule ol_rule_oom501;
extern const ol_rule ol_rule_oom502;
extern const ol_rule ol_rule_oom503;
extern const ol_rule ol_rule_oom504;
extern const ol_rule ol_rule_oom601;
extern const ol_rule ol_rule_oom602;
extern const ol_rule ol_rule_oom603;
extern const ol_rule ol_rule_oom604;
extern const ol_rule ol_rule_oom701;
extern const ol_rule ol_rule_oom702;
extern const ol_rule ol_rule_oom703;
extern const ol_rule ol_rule_oom704;
extern const ol_rule ol_rule_oom705;

const ol_rule *const ol_rules[] = {
    &ol_rule_oom001,
    &ol_rule_oom002,
    &ol_rule_oom003,
    &ol_rule_oom101,
    &ol_rule_oom102,
    &ol_rule_oom103,
    &ol_rule_oom104,
    &ol_rule_oom105,
    &ol_rule_oom106,
    &ol_rule_oom107,
    &ol_rule_oom201,
    &ol_rule_oom301,
    &ol_rule_oom302,
    &ol_rule_oom303,
    &ol_rule_oom401,
    &ol_rule_oom501,
    &ol_rule_oom502,
    &ol_rule_oom503,
    &ol_rule_oom504,
    &ol_rule_oom601,
    &ol_rule_oom602,
    &ol_rule_oom603,
    &ol_rule_oom604,
    &ol_rule_oom701,
    &ol_rule_oom702,
    &ol_rule_oom703,
    &ol_rule_oom704,
    &ol_rule_oom705,
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

