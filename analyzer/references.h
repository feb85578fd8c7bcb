/*
 * references.h - where to read more about each rule: PyTorch's own
 * documentation, issues and forum threads that explain what the pattern
 * costs. The table is keyed by rule code and kept apart from the rules, so a
 * page is one lookup away for every renderer (docs.c); a test checks that
 * every rule in the registry has at least one reference.
 */
#ifndef OL_REFERENCES_H
#define OL_REFERENCES_H

typedef struct ol_reference {
    const char *title; /* what the page says, in a few words */
    const char *url;
} ol_reference;

/* The references of a rule code, ended by an entry whose title is NULL; or
 * NULL when the code has none. */
const ol_reference *ol_rule_references(const char *code);

#endif
