/*
 * select.h - which rules run: --select / --extend-select / --ignore.
 *
 * Selectors are rule codes or code prefixes (`OOM5`, `OOM101`) or `ALL`.
 * Without --select every rule that is not opt-in runs. When selectors of
 * both kinds match a rule, the longer (more specific) one wins, and at equal
 * length ignoring wins, as in Ruff. Selections from configuration and the
 * command line are layered (ol_selection_resolve_layers). Opt-in rules
 * (OOM401) run only when selected by their exact code or by ALL, which is
 * every rule as in Ruff; a prefix (OOM4) leaves them out. OOM001 (io-error)
 * cannot be turned off: a file that was not analyzed is always reported;
 * OOM002 can be ignored.
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
/* Is one selector (upper-case) a rule code, a prefix of one, or ALL? */
bool ol_selector_valid(const char *selector);
/* For a selector that names no rule: appends "; did you mean 'OOM101'
 * (tensor-accumulated-with-graph)?" to out when a rule is near (a code
 * mistyped, or a rule's name where its code belongs) and returns true. */
bool ol_selector_suggest(const char *selector, ol_buf *out);
/* enabled[i] for each rule in the registry order. */
void ol_selection_resolve(const ol_selection *s, bool *enabled);
void ol_selection_resolve_exact(const ol_selection *s, bool *enabled, bool *exact);
/* The same for selections applied in order (configuration, then command
 * line), as Ruff layers them: each layer starts from the previous result; a
 * layer with `select` replaces it, otherwise the layer's selectors change
 * only the rules they match, the more specific selector winning within the
 * layer. Opt-in rules stay on only when the layer that turned them on named
 * their exact code. */
void ol_selection_resolve_layers(const ol_selection *const *layers, size_t count, bool *enabled);
/* The same, and exact[i]: the rule is on because a layer named its exact
 * code (`--extend-select OOM303`) or ALL, not a prefix or the default set.
 * Such a rule also reports what it finds in code that runs once
 * (ol_diag.once). */
void ol_selection_resolve_layers_exact(const ol_selection *const *layers, size_t count, bool *enabled,
                                       bool *exact);
/* Turns off the rules the selectors match (per-file ignores); OOM001 stays
 * on and OOM002 answers only to selectors at least as narrow as OOM0. */
void ol_selection_apply_ignores(const ol_strvec *selectors, bool *enabled);
void ol_selection_free(ol_selection *s);
void ol_strvec_free(ol_strvec *v);

#endif
