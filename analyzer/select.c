/*
 * select.c - resolving rule selectors against the registry, one selection
 * or several layered (configuration, then command line).
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

bool ol_selector_valid(const char *selector)
{
    /* "" is a prefix of every code: as a selector it would mean ALL */
    if (selector[0] == '\0')
        return false;
    if (strcmp(selector, "ALL") == 0)
        return true;
    for (size_t i = 0; i < ol_rule_count; i++)
        if (ol_str_has_prefix(ol_rules[i]->code, selector))
            return true;
    return false;
}

/* Characters that look alike read alike when a code is compared (the
 * letter O for zero, l or I for one), and case does not matter. */
static char looks_like(char c)
{
    c = (char)toupper((unsigned char)c);
    switch (c) {
    case 'O':
        return '0';
    case 'I':
    case 'L':
        return '1';
    case 'S':
        return '5';
    default:
        return c;
    }
}

/* The rule whose code `selector` most likely mistypes: the only one at the
 * least distance, within one edit (two for six characters or more). */
static const ol_rule *near_code(const char *selector)
{
    char sel[65];
    size_t len = strlen(selector);
    if (len > 64)
        return NULL;
    for (size_t i = 0; i < len; i++)
        sel[i] = looks_like(selector[i]);
    const ol_rule *best = NULL;
    size_t best_d = len >= 6 ? 3 : 2;
    bool tied = false;
    for (size_t r = 0; r < ol_rule_count; r++) {
        char code[16];
        size_t n = strlen(ol_rules[r]->code);
        for (size_t i = 0; i < n && i < sizeof code; i++)
            code[i] = looks_like(ol_rules[r]->code[i]);
        size_t d = ol_edit_distance(sel, len, code, n < sizeof code ? n : sizeof code);
        if (d < best_d) {
            best_d = d;
            best = ol_rules[r];
            tied = false;
        } else if (d == best_d && best) {
            tied = true;
        }
    }
    return tied ? NULL : best;
}

/* The rule whose name `selector` spells or nearly spells, in any case and
 * with _ for -. */
static const ol_rule *near_name(const char *selector)
{
    char sel[65];
    size_t len = strlen(selector);
    if (len > 64 || len < 4)
        return NULL;
    for (size_t i = 0; i < len; i++)
        sel[i] = selector[i] == '_' ? '-' : (char)tolower((unsigned char)selector[i]);
    sel[len] = '\0';
    const char *names[64] = {0};
    size_t count = ol_rule_count < OL_ARRAY_LEN(names) ? ol_rule_count : OL_ARRAY_LEN(names);
    for (size_t r = 0; r < count; r++)
        names[r] = ol_rules[r]->name;
    const char *near = ol_closest_word(sel, len, names, count);
    for (size_t r = 0; near && r < count; r++)
        if (names[r] == near)
            return ol_rules[r];
    return NULL;
}

bool ol_selector_suggest(const char *selector, ol_buf *out)
{
    const ol_rule *r = near_name(selector);
    if (!r)
        r = near_code(selector);
    if (!r)
        return false;
    ol_buf_printf(out, "; did you mean '%s' (%s)?", r->code, r->name);
    return true;
}

const char *ol_selection_invalid(const ol_selection *s)
{
    const ol_strvec *lists[] = {&s->select, &s->extend_select, &s->ignore};
    for (size_t l = 0; l < 3; l++)
        for (size_t i = 0; i < lists[l]->len; i++)
            if (!ol_selector_valid(lists[l]->items[i]))
                return lists[l]->items[i];
    return NULL;
}

static size_t specificity(const char *selector)
{
    return strcmp(selector, "ALL") == 0 ? 0 : strlen(selector);
}

/* OOM002 (syntax errors) shows unless a selector at least as narrow as OOM0
 * turns it off: `ignore = ["ALL"]` or `["OOM"]` keeps reporting files that
 * could not be parsed. */
static bool narrow_enough_for_parse_errors(const char *selector)
{
    return specificity(selector) >= 4;
}

/* What one layer says about a rule: nothing (-1), or on/off and whether the
 * winning selector is the rule's exact code. */
typedef struct layer_verdict {
    long best;
    bool on, exact;
} layer_verdict;

static layer_verdict judge(const ol_selection *s, const char *code, bool parse_error_rule)
{
    layer_verdict v = {-1, false, false};
    const ol_strvec *selects[] = {&s->select, &s->extend_select};
    for (size_t l = 0; l < 2; l++) {
        for (size_t i = 0; i < selects[l]->len; i++) {
            const char *sel = selects[l]->items[i];
            if (!matches(sel, code) || (parse_error_rule && !narrow_enough_for_parse_errors(sel)))
                continue;
            long spec = (long)specificity(sel);
            if (spec >= v.best) {
                v.best = spec;
                v.on = true;
                /* ALL is every rule, as in Ruff: the opt-in ones and what
                 * rules keep for a selection by code too */
                v.exact = strcmp(sel, code) == 0 || strcmp(sel, "ALL") == 0;
            }
        }
    }
    for (size_t i = 0; i < s->ignore.len; i++) {
        const char *sel = s->ignore.items[i];
        if (!matches(sel, code) || (parse_error_rule && !narrow_enough_for_parse_errors(sel)))
            continue;
        long spec = (long)specificity(sel);
        if (spec >= v.best) {
            v.best = spec;
            v.on = false;
            v.exact = false;
        }
    }
    return v;
}

void ol_selection_resolve_layers(const ol_selection *const *layers, size_t count, bool *enabled)
{
    ol_selection_resolve_layers_exact(layers, count, enabled, NULL);
}

void ol_selection_resolve_layers_exact(const ol_selection *const *layers, size_t count, bool *enabled,
                                       bool *exact_out)
{
    for (size_t r = 0; r < ol_rule_count; r++) {
        const ol_rule *rule = ol_rules[r];
        if (exact_out)
            exact_out[r] = false;
        if (strcmp(rule->code, "OOM001") == 0) {
            enabled[r] = true; /* a file that was not analyzed is always reported */
            continue;
        }
        if (strcmp(rule->code, "OOM002") == 0) {
            bool on = true;
            for (size_t l = 0; l < count; l++) {
                layer_verdict v = judge(layers[l], rule->code, true);
                if (v.best >= 0)
                    on = v.on;
            }
            enabled[r] = on;
            continue;
        }
        /* the default set: every rule that is not opt-in */
        bool on = !rule->opt_in;
        bool exact = false; /* turned on by its exact code */
        for (size_t l = 0; l < count; l++) {
            layer_verdict v = judge(layers[l], rule->code, false);
            if (layers[l]->has_select) {
                on = v.best >= 0 && v.on;
                exact = on && v.exact;
            } else if (v.best >= 0) {
                exact = v.on && ((on && exact) || v.exact);
                on = v.on;
            }
        }
        enabled[r] = on && (!rule->opt_in || exact);
        if (exact_out)
            exact_out[r] = enabled[r] && exact;
    }
}

void ol_selection_resolve(const ol_selection *s, bool *enabled)
{
    ol_selection_resolve_layers(&s, 1, enabled);
}

void ol_selection_resolve_exact(const ol_selection *s, bool *enabled, bool *exact)
{
    ol_selection_resolve_layers_exact(&s, 1, enabled, exact);
}

void ol_selection_apply_ignores(const ol_strvec *selectors, bool *enabled)
{
    for (size_t r = 0; r < ol_rule_count; r++) {
        const char *code = ol_rules[r]->code;
        if (strcmp(code, "OOM001") == 0)
            continue;
        bool parse_error_rule = strcmp(code, "OOM002") == 0;
        for (size_t i = 0; i < selectors->len; i++)
            if (matches(selectors->items[i], code) &&
                (!parse_error_rule || narrow_enough_for_parse_errors(selectors->items[i])))
                enabled[r] = false;
    }
}

void ol_selection_free(ol_selection *s)
{
    ol_strvec_free(&s->select);
    ol_strvec_free(&s->extend_select);
    ol_strvec_free(&s->ignore);
}
