/*
 * select.h - which rules run: --select / --extend-select / --ignore.
 *
 * Selectors are rule codes or code prefixes (`OOM5`, `OOM101`) or `ALL`.
 * Without --select every rule that is not opt-in runs. When selectors of
 * both kinds match a rule, the longer (more specific) one wins, and at equal
 * length ignoring wins, as in Ruff. Opt-in rules (OOM401) run only when
 * selected by their exact code. OOM001 (io-error) cannot be turned off: a
 * file that was not analyzed is always reported; OOM002 can be ignored.
 */
#ifndef OL_SELECT_H
#define OL_SELECT_H

#include <stdbool.h>
#include <stddef.h>

#include "util.h"

typedef OL_VEC(char *) ol_strvec;

typedef struct ol_selection {
    bool has_select;      /* --select given: it replaces the default set */
    ol_strvec select;
    ol_strvec extend_select;
    ol_strvec ignore;
} ol_selection;

/* Adds comma-separated selectors from text to v (upper-cased). */
void ol_selectors_add(ol_strvec *v, const char *text);
/* Returns NULL if every selector names a rule or prefix, else the first bad one. */
const char *ol_selection_invalid(const ol_selection *s);
/* enabled[i] for each rule in the registry order. */
void ol_selection_resolve(const ol_selection *s, bool *enabled);
void ol_selection_free(ol_selection *s);
void ol_strvec_free(ol_strvec *v);

#endif
