/*
 * eval_internal.h - what the evaluator's files (eval.c, callables.c,
 * classes.c, elements.c, grad.c) share and nothing else sees: the small value
 * constructors, dotted-name tests, and the functions one of them answers for
 * another (`ol_eval__` names, private to the evaluator: the layers above ask
 * through model.h). Include after model.h.
 */
#ifndef OL_EVAL_INTERNAL_H
#define OL_EVAL_INTERNAL_H

#include <ctype.h>
#include <stdbool.h>
#include <string.h>

#include "eval.h"

/* How deep evaluation recurses before it answers "unknown". */
#define EVAL_MAX_DEPTH 80

static inline ol_val mk(ol_vkind kind, uint8_t flags)
{
    ol_val v = {(uint8_t)kind, flags, 0, 0};
    return v;
}

static inline ol_val mk_ref(ol_vkind kind, uint8_t flags, uint32_t ref)
{
    ol_val v = {(uint8_t)kind, flags, 0, ref};
    return v;
}

static const ol_val UNKNOWN = {OL_V_UNKNOWN, 0, 0, 0};
static const ol_val BOTTOM = {OL_V_BOTTOM, 0, 0, 0};

static inline bool qeq(const char *q, const char *s)
{
    return ol_str_eq(q, s);
}

static inline bool qin(const char *q, const char *const *list)
{
    for (; *list; list++)
        if (ol_str_eq(q, *list))
            return true;
    return false;
}

static inline const char *last_part(const char *q)
{
    const char *dot = strrchr(q, '.');
    return dot ? dot + 1 : q;
}

static inline bool is_camel(const char *s)
{
    return isupper((unsigned char)s[0]);
}

/* eval.c */
ol_val ol_eval__guess_from_name(ol_model *m, ol_sym name);

/* callables.c */
uint8_t ol_eval__args_flags(ol_model *m, ol_nid call, bool *any_tensor);
/* Is name one of Python's builtins the evaluator knows (`len`, `zip`)? */
bool ol_eval__is_builtin(const char *name);
ol_val ol_eval__call_extern(ol_model *m, const char *q, ol_nid call);
ol_val ol_eval__call_object_method(ol_model *m, const char *cls, ol_sym method, ol_nid call);
ol_gradmode ol_eval__gradmode_of(const char *q);

/* classes.c */
bool ol_eval__base_is_module_qual(const char *q, bool lightning);
ol_val ol_eval__class_attr(ol_model *m, uint32_t ci, ol_sym name, int depth);
uint32_t ol_eval__find_method(ol_model *m, uint32_t ci, ol_sym name, int depth);
ol_val ol_eval__function_result(ol_model *m, uint32_t fi);
bool ol_eval__inherited(ol_model *m, uint32_t ci, ol_sym method, ol_sym *base_qual, ol_val *out, int depth);
ol_val ol_eval__instance_of_class(ol_model *m, uint32_t ci);
bool ol_eval__used_as_module(ol_model *m, uint32_t di, bool called_counts);

/* elements.c */
ol_val ol_eval__annotation_value(ol_model *m, ol_nid ann);
bool ol_eval__callee_is_builtin(ol_model *m, ol_nid call, ol_sym name);
bool ol_eval__elem_of_expr(ol_model *m, ol_nid e, int index, const char *key, int depth, ol_val *out);
ol_val ol_eval__elem_of_val(ol_val v);
ol_val ol_eval__eval_path(ol_model *m, ol_nid expr, bool elem, const int8_t *path, int path_len);
bool ol_eval__is_passthrough_iter(ol_model *m, ol_nid call);
bool ol_eval__metric_output_param(ol_model *m, uint32_t di);
ol_val ol_eval__param_value(ol_model *m, uint32_t di);
bool ol_eval__subscript_element(ol_model *m, ol_nid subscript, ol_val *out);

#endif
