/*
 * syntax.h - the parsed tree, flattened into an array oomlint owns.
 *
 * tree-sitter parses; one walk then copies the tree into ol_tree: a
 * node array with parent / first-child / next-sibling links, node kinds and
 * field names mapped to small enums, comments set aside for suppression
 * parsing, and syntax errors collected for OOM002. Everything after parsing
 * (model, rules, emitters) reads this array: navigation is O(1), the
 * tree-sitter tree is freed at once, and no code downstream deals with
 * TSNode or the grammar's symbol numbering.
 *
 * Punctuation tokens are dropped; operator tokens that carry meaning (`+=`,
 * `+`, `==`, `not`, ...) are kept as anonymous nodes of their own kinds.
 *
 * In analyzer/public/, the rules' side of the engine: this half declares
 * what rules may use; the engine's own declarations of the same part are
 * in analyzer/syntax.h, which includes this one. Rules are compiled with
 * analyzer/public/ alone on their include path.
 */
#ifndef OL_PUBLIC_SYNTAX_H
#define OL_PUBLIC_SYNTAX_H

#include <stdbool.h>
#include <stdint.h>

#include "parse_arena.h"
#include "source.h"
#include "util.h"

typedef uint32_t ol_nid;
#define OL_NONE UINT32_MAX

/* Named node kinds, by their tree-sitter-python names. */
#define OL_NAMED_KINDS(X)                                                                    \
    X(module) X(block) X(expression_statement) X(assignment) X(augmented_assignment) X(call)    \
    X(attribute) X(identifier) X(subscript) X(argument_list) X(keyword_argument)                \
    X(for_statement) X(while_statement) X(with_statement) X(with_clause) X(with_item)           \
    X(as_pattern) X(as_pattern_target) X(function_definition) X(decorated_definition)          \
    X(decorator) X(class_definition) X(import_statement) X(import_from_statement)               \
    X(future_import_statement) X(aliased_import) X(dotted_name) X(relative_import)              \
    X(import_prefix) X(wildcard_import) X(binary_operator) X(boolean_operator)                  \
    X(comparison_operator) X(unary_operator) X(not_operator) X(list_comprehension)              \
    X(generator_expression) X(set_comprehension) X(dictionary_comprehension) X(for_in_clause)   \
    X(if_clause) X(lambda) X(lambda_parameters) X(return_statement) X(yield) X(await)           \
    X(try_statement) X(except_clause) X(finally_clause) X(else_clause) X(if_statement)          \
    X(elif_clause) X(string) X(concatenated_string) X(string_content) X(string_start)           \
    X(string_end) X(escape_sequence) X(interpolation) X(integer) X(float) X(true) X(false)      \
    X(none) X(ellipsis) X(list) X(tuple) X(dictionary) X(set) X(pair)                           \
    X(parenthesized_expression) X(pattern_list) X(tuple_pattern) X(list_pattern)                \
    X(expression_list) X(parameters) X(default_parameter) X(typed_parameter)                    \
    X(typed_default_parameter) X(list_splat) X(dictionary_splat) X(list_splat_pattern)          \
    X(dictionary_splat_pattern) X(parenthesized_list_splat) X(conditional_expression)           \
    X(named_expression) X(delete_statement) X(global_statement) X(nonlocal_statement)           \
    X(pass_statement) X(break_statement) X(continue_statement) X(raise_statement)               \
    X(assert_statement) X(match_statement) X(case_clause) X(slice) X(keyword_separator)        \
    X(positional_separator) X(print_statement) X(exec_statement) X(type) X(comment)             \
    X(line_continuation) X(ERROR)

/* Anonymous tokens we keep: enum suffix and token text. */
#define OL_TOKEN_KINDS(X)                                                                    \
    X(PLUS_EQ, "+=") X(MINUS_EQ, "-=") X(STAR_EQ, "*=") X(SLASH_EQ, "/=")                     \
    X(DSLASH_EQ, "//=") X(PERCENT_EQ, "%=") X(DSTAR_EQ, "**=") X(AT_EQ, "@=")                 \
    X(AMP_EQ, "&=") X(PIPE_EQ, "|=") X(CARET_EQ, "^=") X(SHL_EQ, "<<=") X(SHR_EQ, ">>=")      \
    X(PLUS, "+") X(MINUS, "-") X(STAR, "*") X(SLASH, "/") X(DSLASH, "//") X(PERCENT, "%")      \
    X(DSTAR, "**") X(AT, "@") X(AMP, "&") X(PIPE, "|") X(CARET, "^") X(SHL, "<<")            \
    X(SHR, ">>") X(TILDE, "~") X(LT, "<") X(GT, ">") X(EQEQ, "==") X(NE, "!=") X(LE, "<=")     \
    X(GE, ">=") X(LTGT, "<>") X(IN, "in") X(NOT, "not") X(IS, "is") X(AND, "and")             \
    X(OR, "or") X(ASYNC, "async") X(NOT_IN, "not in") X(IS_NOT, "is not")

typedef enum ol_kind {
    OL_N_OTHER = 0,
#define OL_X(name) OL_N_##name,
    OL_NAMED_KINDS(OL_X)
#undef OL_X
#define OL_X(name, text) OL_T_##name,
    OL_TOKEN_KINDS(OL_X)
#undef OL_X
    OL_KIND_COUNT
} ol_kind;

#define OL_FIELDS(X)                                                                          \
    X(left) X(right) X(operator) X(operators) X(function) X(arguments) X(object) X(attribute)  \
    X(name) X(value) X(body) X(alternative) X(condition) X(consequence) X(alias)              \
    X(module_name) X(superclasses) X(parameters) X(definition) X(subscript) X(type) X(key)   \
    X(return_type) X(argument) X(subject) X(guard) X(cause) X(code)

typedef enum ol_field {
    OL_F_NONE = 0,
#define OL_X(name) OL_F_##name,
    OL_FIELDS(OL_X)
#undef OL_X
    OL_FIELD_COUNT
} ol_field_id;

enum {
    OL_NF_NAMED = 1,
    OL_NF_ERROR = 2,    /* an ERROR node */
    OL_NF_HAS_ERROR = 4 /* contains an error below */
};

typedef struct ol_node {
    uint16_t kind;   /* ol_kind */
    uint8_t field;   /* ol_field of this node within its parent */
    uint8_t flags;
    ol_nid parent, first_child, next_sibling;
    uint32_t start, end; /* byte offsets into the source text */
} ol_node;

typedef struct ol_span {
    uint32_t start, end;
} ol_span;

typedef OL_VEC(ol_span) ol_span_vec;

typedef struct ol_syntax_error {
    uint32_t start, end;
    char *message; /* owned */
    bool soft;     /* found after parsing; the tree itself is sound */
    uint32_t from; /* where the parser's error region starts: start, or
                    * before it for an ERROR node reported where its
                    * trouble starts (what it may have misread begins here) */
} ol_syntax_error;

typedef OL_VEC(ol_syntax_error) ol_syntax_error_vec;

/* Immutable after ol_grammar_init; shared by every thread. */
typedef struct ol_grammar {
    const void *language; /* const TSLanguage * */
    uint16_t *symbol_kind; /* grammar symbol -> ol_kind */
    bool *symbol_named;    /* grammar symbol -> a named node (aliases included) */
    uint32_t symbol_count;
    uint8_t *field_kind;   /* grammar field id -> ol_field */
    uint32_t field_count;
    /* production id x child index -> the grammar field id of that child, the
     * first of the production's field map that is not inherited (0: none);
     * child_field_width entries a production */
    uint8_t *child_field;
    uint32_t child_field_width, production_count;
} ol_grammar;

/* One per thread. Each parse makes its tree-sitter parser, tree and cursor
 * in the arena, and drops them all at once when the file is flattened;
 * except when incremental, where the tree must outlive the parse: then one
 * tree-sitter parser is kept (ts) and nothing goes into the arena. */
typedef struct ol_parser {
    ol_parse_arena arena;
    void *ts; /* TSParser *, made on the first incremental parse, or NULL */
    const ol_grammar *grammar;
    uint32_t timeout_ms; /* CPU time a parse may take, plus a second per megabyte of text (syntax.c) */
    /* Incremental reparsing, for the language server (off unless set): the
     * parser keeps the last tree and its text, and the next parse tells
     * tree-sitter what changed (the span between the common prefix and
     * suffix of the two texts) so unchanged subtrees are reused. */
    bool incremental;
    void *last_tree; /* TSTree *, or NULL */
    char *last_text;
    uint32_t last_len;
} ol_parser;

typedef struct ol_tree {
    const ol_source *src;
    OL_VEC(ol_node) nodes; /* index 0 is the module */
    ol_span_vec comments;
    ol_syntax_error_vec errors;
    uint32_t max_depth;
    bool timed_out;
    /* How often a node that does not exist was read (see ol_node_at); the
     * counter is owned by the tree, a pointer so that readers holding a
     * const tree can count. */
    uint32_t *absent_reads;
} ol_tree;

/* A tree recovered from syntax errors lacks nodes that code reading it may
 * expect: `from torch.cuda import amp@amp.@e` has an attribute with no
 * attribute name (tree-sitter's MISSING node, which flatten() drops), so
 * ol_field() answers OL_NONE where a well-formed tree always has a child.
 * Every accessor below therefore takes OL_NONE (or any id past the end):
 * the answer is the absent node, zero-width at offset 0 with no parent,
 * children or siblings, whose text is empty. A read of it is counted in
 * t->absent_reads; the linter drops the fixes of a rule that read one,
 * since an edit placed at an absent node's offset would land at the top of
 * the file. Checked builds (OL_STRICT_NODES: the sanitizer and fuzzing
 * builds) abort instead, so that the fuzzer finds such reads and they get
 * fixed at their source rather than hidden. */
const ol_node *ol_absent_node(const ol_tree *t, ol_nid n);
static inline uint32_t ol_absent_reads(const ol_tree *t) { return t->absent_reads ? *t->absent_reads : 0; }

static inline const ol_node *ol_node_at(const ol_tree *t, ol_nid n)
{
    if (n < t->nodes.len)
        return &t->nodes.items[n];
    return ol_absent_node(t, n);
}
static inline ol_kind ol_kind_of(const ol_tree *t, ol_nid n)
{
    return n == OL_NONE ? OL_N_OTHER : (ol_kind)ol_node_at(t, n)->kind;
}
static inline ol_nid ol_first(const ol_tree *t, ol_nid n)
{
    return n == OL_NONE ? OL_NONE : ol_node_at(t, n)->first_child;
}
static inline ol_nid ol_next(const ol_tree *t, ol_nid n)
{
    return n == OL_NONE ? OL_NONE : ol_node_at(t, n)->next_sibling;
}
static inline ol_nid ol_parent(const ol_tree *t, ol_nid n)
{
    return n == OL_NONE ? OL_NONE : ol_node_at(t, n)->parent;
}
static inline bool ol_is_named(const ol_tree *t, ol_nid n)
{
    return n != OL_NONE && (ol_node_at(t, n)->flags & OL_NF_NAMED) != 0;
}

/* The accessors the engine calls most, inline: first child carrying the
 * given field, or OL_NONE. */
static inline ol_nid ol_field(const ol_tree *t, ol_nid n, ol_field_id f)
{
    if (n == OL_NONE)
        return OL_NONE;
    for (ol_nid c = t->nodes.items[n].first_child; c != OL_NONE; c = t->nodes.items[c].next_sibling)
        if (t->nodes.items[c].field == f)
            return c;
    return OL_NONE;
}
/* The named node among c and its later siblings, or OL_NONE. */
static inline ol_nid ol_named_from(const ol_tree *t, ol_nid c)
{
    for (; c != OL_NONE; c = t->nodes.items[c].next_sibling)
        if (t->nodes.items[c].flags & OL_NF_NAMED)
            return c;
    return OL_NONE;
}
/* First named child (of any field), or OL_NONE. */
static inline ol_nid ol_first_named(const ol_tree *t, ol_nid n)
{
    return n == OL_NONE ? OL_NONE : ol_named_from(t, t->nodes.items[n].first_child);
}
/* The next named sibling, or OL_NONE. */
static inline ol_nid ol_next_named(const ol_tree *t, ol_nid n)
{
    return n == OL_NONE ? OL_NONE : ol_named_from(t, t->nodes.items[n].next_sibling);
}
/* i-th named child (0-based), or OL_NONE. */
ol_nid ol_named_child(const ol_tree *t, ol_nid n, uint32_t i);
uint32_t ol_named_count(const ol_tree *t, ol_nid n);

/* Nearest ancestor (excluding n) of the given kind, or OL_NONE. */
ol_nid ol_ancestor(const ol_tree *t, ol_nid n, ol_kind k);
/* True when a contains b (or a == b). */
bool ol_contains(const ol_tree *t, ol_nid a, ol_nid b);

/* Source text of a node. */
static inline const char *ol_text(const ol_tree *t, ol_nid n, uint32_t *len)
{
    const ol_node *node = ol_node_at(t, n);
    *len = node->end - node->start;
    return t->src->text + node->start;
}
bool ol_text_is(const ol_tree *t, ol_nid n, const char *s);
/* Skips parentheses: (x) -> x. */
static inline ol_nid ol_unparen(const ol_tree *t, ol_nid n)
{
    while (n != OL_NONE && t->nodes.items[n].kind == OL_N_parenthesized_expression) {
        ol_nid inner = ol_first_named(t, n);
        if (inner == OL_NONE)
            break;
        n = inner;
    }
    return n;
}
/* The name an expression ends with: the identifier of `x` or of `a.b.x`
 * (through parentheses), else OL_NONE. */
ol_nid ol_tail_name(const ol_tree *t, ol_nid n);

/* Value of a plain string literal without prefixes or escapes ('cuda',
 * "cuda"); returns false for f-strings, concatenations and escapes. */
bool ol_string_value(const ol_tree *t, ol_nid n, const char **s, uint32_t *len);

/* Statement containing n (the nearest ancestor whose parent is a block or the
 * module), or n itself. */
ol_nid ol_statement_of(const ol_tree *t, ol_nid n);

/* Text of a node as a new string (for messages and fixes). */
char *ol_node_str(const ol_tree *t, ol_nid n);
/* The same, cut for a message: past 40 bytes, the first 37 and "...". */
char *ol_node_str_short(const ol_tree *t, ol_nid n);

/* The innermost node whose range holds [start, end) (the module when none
 * smaller does). */
ol_nid ol_node_covering(const ol_tree *t, uint32_t start, uint32_t end);

#endif
