/*
 * ask_internal.h - what the door's files share (ask.c, ask_grad.c, ...):
 * its per-file state and the helpers that write reasons. Not for rules.
 */
#ifndef OL_ASK_INTERNAL_H
#define OL_ASK_INTERNAL_H

#include "ask.h"
/* the engine's halves of what public/ask.h includes (their rule-facing halves) */
#include "diag.h"
#include "eval.h"
#include "flows.h"
#include "util.h"

/* A function's run-wide grad mode, once asked. */
typedef struct ol_door_grad {
    uint8_t state;        /* 0 not asked, 1 on, 2 off, 3 the run does not say */
    ol_reasons why;
} ol_door_grad;

/* A function's frequency as the run's callers give it, once asked. */
typedef struct ol_door_often {
    uint8_t state;        /* 0 not asked, else ol_often + 1 */
    ol_reasons why;
} ol_door_often;

typedef struct ol_door {
    ol_arena arena;       /* the texts of reasons */
    ol_door_grad *run_grad; /* per function */
    ol_door_often *often; /* per function */
    uint8_t *kind;        /* per function, three answers in one byte (OL_DOOR_KIND_*) */
    uint8_t *param_free;  /* per class (ask_grad.c): 0 not asked, 1 may hold parameters, 2 holds none */
    /* per function, then the module (ask_grad.c): the first call of its own
     * code that computes gradients, as node + 2; 1 none; 0 not asked */
    uint32_t *first_grad;
    int gpu;              /* -1 not asked, else ol_gpu */
    ol_reasons gpu_why;
    int xla;              /* -1 not asked */
    int file_trains;      /* ask_kind.c: 0 not asked, 1 a call of the file trains, 2 none does */
    char *cwd;
    void *load;           /* ask_load.c's caches of the file's saves and loads */
    void (*load_free)(void *load);
} ol_door;

/* The answers packed in ol_door.kind: the test kind (ask_kind.c: 0 not asked,
 * else ol_code_kind + 1, OL_DOOR_KIND_BUSY while asked), whether the
 * function trains (ask_kind.c) and whether its body computes gradients
 * (ask_grad.c): each 0 not asked, 1 being asked, 2 no, 3 yes. */
#define OL_DOOR_KIND_MASK 0x0Fu
#define OL_DOOR_KIND_BUSY 0x0Fu
#define OL_DOOR_TRAINS_SHIFT 4
#define OL_DOOR_GRADS_SHIFT 6

ol_door *ol_door_of(ol_model *m);
/* Records an answer of the door (question, node, answer, the rule asking)
 * when OOMLINT_DOOR_AUDIT names a file: the tests check from it that every
 * rule gets the same answer at the same node. Does nothing otherwise. */
void ol_door_audit(ol_model *m, const char *question, ol_nid n, int answer);
/* A text for a reason, kept as long as the model. */
const char *ol_door_printf(ol_model *m, const char *fmt, ...) OL_PRINTF(2, 3);
/* A project's absolute path as the run shows paths (relative under the working directory). */
const char *ol_door_path(ol_model *m, const char *path);
/* "`name()`" or "`Cls.name()`" (malloc'd). */
char *ol_door_function_label(ol_model *m, uint32_t fi);

/* call sites of a function a parameter is followed to at most */
#define OL_PARAM_SITES_MAX 8
/* The values parameter d (not starred) of a function of this source can
 * hold: its default, and what each call of the function here passes for it
 * (a class called for the parameters of its `__init__`), into out; how
 * many, or SIZE_MAX when they are unknown (a splat may fill it, the
 * function has more calls here than out holds, or it is a lambda). A call
 * that leaves the parameter to its default adds nothing more. */
size_t ol_door_param_values(ol_model *m, const ol_def *d, ol_nid *out, size_t cap);
/* The same for a name whose only binding reaching it is such a parameter
 * (SIZE_MAX otherwise). */
size_t ol_door_name_param_values(ol_model *m, ol_nid name, ol_nid *out, size_t cap);

void ol_reasons_add(ol_reasons *why, ol_nid node, const char *path, uint32_t line, bool step, const char *text);
/* Adds from's reasons not yet in into (and its guess). */
void ol_reasons_merge(ol_reasons *into, const ol_reasons *from);

#endif
