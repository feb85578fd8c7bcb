/*
 * select.c - resolving rule selectors against the registry.
 */
#include "select.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "rule.h"

void ol_strvec_free(ol_strvec *v)
{
    for (size_t i = 0; i < v->len; i++)
        free(v->items[i]);
    ol_vec_free(v);
}

void ol_selectors_add(ol_strvec *v, const char *text)
{
    const char *p = text;
    while (*p) {
        while (*p == ',' || *p == ' ' || *p == '\t')
            p++;
        const char *start = p;
        while (*p && *p != ',' && *p != ' ' && *p != '\t')
            p++;
        if (p > start) {
            char *sel = ol_xstrndup(start, (size_t)(p - start));
            for (char *c = sel; *c; c++)
                *c = (char)toupper((unsigned char)*c);
            ol_vec_push(v, sel);
        }
    }
}

static bool matches(const char *selector, const char *code)
{
    return strcmp(selector, "ALL") == 0 || ol_str_has_prefix(code, selector);
}

static bool valid(const char *selector)
{
    if (strcmp(selector, "ALL") == 0)
        return true;
    for (size_t i = 0; i < ol_rule_count; i++)
        if (ol_str_has_prefix(ol_rules[i]->code, selector))
            return true;
    return false;
}

const char *ol_selection_invalid(const ol_selection *s)
{
    const ol_strvec *lists[] = {&s->select, &s->extend_select, &s->ignore};
    for (size_t l = 0; l < 3; l++)
        for (size_t i = 0; i < lists[l]->len; i++)
            if (!valid(lists[l]->items[i]))
                return lists[l]->items[i];
    return NULL;
}

static size_t specificity(const char *selector)
{
    return strcmp(selector, "ALL") == 0 ? 0 : strlen(selector);
}

void ol_selection_resolve(const ol_selection *s, bool *enabled)
{
    for (size_t r = 0; r < ol_rule_count; r++) {
        const ol_rule *rule = ol_rules[r];
        /* the default: every rule that is not opt-in, at the lowest specificity */
        bool on = !s->has_select && !rule->opt_in;
        long best = s->has_select ? -1 : 0;
        bool exact_select = false;
        const ol_strvec *selects[] = {&s->select, &s->extend_select};
        for (size_t l = 0; l < 2; l++) {
            for (size_t i = 0; i < selects[l]->len; i++) {
                const char *sel = selects[l]->items[i];
                if (!matches(sel, rule->code))
                    continue;
                if (strcmp(sel, rule->code) == 0)
                    exact_select = true;
                long spec = (long)specificity(sel);
                if (spec >= best) {
                    best = spec;
                    on = true;
                }
            }
        }
        for (size_t i = 0; i < s->ignore.len; i++) {
            const char *sel = s->ignore.items[i];
            if (!matches(sel, rule->code))
                continue;
            long spec = (long)specificity(sel);
            if (spec >= best) {
                best = spec;
                on = false;
            }
        }
        if (rule->opt_in && !exact_select)
            on = false;
        if (strcmp(rule->code, "OOM001") == 0)
            on = true;
        if (strcmp(rule->code, "OOM002") == 0) {
            /* syntax errors show unless explicitly ignored */
            bool ignored = false;
            for (size_t i = 0; i < s->ignore.len; i++)
                if (matches(s->ignore.items[i], rule->code) && strcmp(s->ignore.items[i], "ALL") != 0 &&
                    specificity(s->ignore.items[i]) >= 4)
                    ignored = true;
            on = !ignored;
        }
        enabled[r] = on;
    }
}

void ol_selection_free(ol_selection *s)
{
    ol_strvec_free(&s->select);
    ol_strvec_free(&s->extend_select);
    ol_strvec_free(&s->ignore);
}
