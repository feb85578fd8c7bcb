/*
 * ask.h - the door: the questions rules ask about the code, each answered in
 * one place for the whole run, with the evidence of its answer.
 *
 * A memory finding is only as right as the facts it stands on: is autograd
 * on where the model runs, does this code reach a GPU, what does this value
 * hold, how often does this line run, is this training, evaluation or test
 * code. Each question has one owner here, so two rules asking about the same
 * node get the same answer, and each answer looks as far as the run lets it:
 * the blocks and decorators around the node, the function's callers in this
 * file and in every other file of the run (their summaries, summary.h),
 * framework hooks, the devices the project names.
 *
 * Every question takes an optional ol_reasons: the places the answer rests
 * on, each with a short message ("called under `torch.no_grad()` from
 * `validate()` at eval.py:41"), and, when the answer rests on a guess (a
 * name's spelling, a base class the run does not show), what it guessed
 * from. A rule hands the reasons of the facts it used to its finding
 * (ol_diag_because), and every output shows them: the text output's notes,
 * JSON's evidence, SARIF's related locations and code flows, the language
 * server's related information.
 *
 * Rules include rule.h, which includes this; the engine's own headers
 * (eval.h, summary.h, devices.h, ...) are not on the rules' include path.
 */
#ifndef OL_ASK_H
#define OL_ASK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "diag.h"
#include "model.h"

/* ---- reasons ------------------------------------------------------------------ */

#define OL_REASONS_MAX 4

/* One fact an answer stands on. */
typedef struct ol_reason {
    ol_nid node;       /* in this file; OL_NONE when the fact is in another file */
    const char *path;  /* the other file, as the run names it (NULL: this file) */
    uint32_t line;     /* in `path`, 1-based */
    const char *text;  /* what it shows; lives as long as the model */
    bool step;         /* a step of a chain through calls (a caller, its caller...) */
} ol_reason;

typedef struct ol_reasons {
    ol_reason items[OL_REASONS_MAX];
    uint8_t len;
    const char *guess; /* NULL: read from the code; else what the answer guesses from */
} ol_reasons;

/* Adds the reasons to a finding as notes (and its guess as the finding's). */
void ol_diag_because(ol_diag *d, ol_model *m, const ol_reasons *why);
/* Adds a fact a rule established itself (the loop an accumulator outlives,
 * the container that keeps a value) at node, in this file. */
void ol_because(ol_reasons *why, ol_model *m, ol_nid node, const char *fmt, ...) OL_PRINTF(4, 5);

/* ---- is autograd on here? ------------------------------------------------------ */

/* Whether operations at node n record an autograd graph: the `with` blocks
 * and `set_grad_enabled` statements around it, its function's decorators,
 * framework hooks that run without grad (Lightning's validation, test and
 * predict steps and evaluation callbacks), and the function's callers, in
 * this file and in the other files of the run: a function every caller runs
 * under no_grad runs without it; one called with autograd on anywhere runs
 * with it. */
bool ol_grad_on(ol_model *m, ol_nid n, ol_reasons *why);

/* ---- does this run on a GPU? ------------------------------------------------------ */

typedef enum ol_gpu {
    OL_GPU_YES,    /* a CUDA or other accelerator device is chosen here, or by a file of the run that imports this one */
    OL_GPU_CPU,    /* every device the file names is the CPU */
    OL_GPU_NEVER,  /* no device is named, here or by a file of the run that imports this one */
} ol_gpu;

/* Can the code of this file put tensors on a GPU (or another accelerator)?
 * Answered per file. */
ol_gpu ol_runs_on_gpu(ol_model *m, ol_reasons *why);
/* Imports torch_xla and names no CUDA device: the tensors live on TPUs. */
bool ol_runs_on_xla_only(ol_model *m);

/* ---- what does this value hold? --------------------------------------------------- */

/* Does the value of expression e carry an autograd graph: a model's output
 * or a loss (also through the helpers and files it comes from), computed
 * where autograd is on? The reasons name where the graph is made and why
 * autograd is on there. */
bool ol_holds_graph(ol_model *m, ol_nid e, ol_reasons *why);
/* For a value the evaluator says carries a graph, itself or in its elements
 * (a tuple of outputs): is autograd on where that graph is made? True when
 * the origin cannot be followed. The reasons name the origin and why
 * autograd is on there. */
bool ol_graph_made_with_grad(ol_model *m, ol_nid e, ol_reasons *why);
/* The call that makes the graph e carries (a forward, a loss), followed
 * through names, arithmetic, methods and the file's functions; OL_NONE when
 * e carries none or it cannot be followed. */
ol_nid ol_graph_origin(ol_model *m, ol_nid e);

/* ---- how often does this run? ----------------------------------------------------- */

/* ol_often (model.h): once, per call, per epoch, per step. The loops around
 * n and its function's callers in this file decide, and, for a function
 * nothing here calls, the call sites of the run: a helper that another
 * file's batch loop calls runs per step. */
ol_often ol_how_often(ol_model *m, ol_nid n, ol_reasons *why);

/* ---- what kind of code is this? --------------------------------------------------- */

typedef enum ol_code_kind {
    OL_CODE_OTHER,
    OL_CODE_TRAINING,   /* runs backward() or steps an optimizer, or is called from code that does */
    OL_CODE_TEST,       /* a pytest test or fixture, a unittest case, wherever it lives */
} ol_code_kind;

ol_code_kind ol_code_kind_at(ol_model *m, ol_nid n, ol_reasons *why);

#endif
