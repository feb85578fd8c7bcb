/*
 * hostuse.h - what code does with a value: does some of it reach code that
 * only works on host data, and is some of it used the way a model or a
 * checkpoint is?
 *
 * `.numpy()`, `.pin_memory()`, `np.asarray(x)`, a matplotlib plot of x and
 * `json.dump(x)` raise on a CUDA tensor. Code that hands what `torch.load` returned to them
 * shows that the file holds no GPU tensor: the code could not run otherwise.
 * OOM302 asks this of its loads, and summaries (summary.h) record which
 * parameters of a function reach such code, so a load handed to a helper in
 * another file counts too.
 */
#ifndef OL_HOSTUSE_H
#define OL_HOSTUSE_H

#include <stdbool.h>

#include "model.h"

typedef struct ol_value_use {
    bool host;   /* some of it reaches code that raises on a CUDA tensor */
    bool device; /* some of it is restored into a model (`load_state_dict`), moved
                    (`.to()`, `.cuda()`, `.cpu()`), called, or used as a module
                    (`.eval()`, `.parameters()`) */
    bool model;  /* some of it is restored into a model, called, or used as a module */
    bool dataset; /* some of it builds a Dataset or a DataLoader (ol_builds_dataset):
                     `TensorDataset(*x)`, `MyDataset(x["train"])`, also once moved */
    ol_nid dataset_call; /* the first such call */
} ol_value_use;

/* Follows the value of expression e forward: through subscripts, unpacking
 * into a call's arguments (`f(*x)`),
 * attributes, arithmetic, tensor methods that keep the device (`.mean()`,
 * `.squeeze()`), comprehensions and `sorted()`/`list()`, the names it is
 * bound to (also by unpacking and for-loops), and the parameters of the
 * functions it is passed to (their summaries, when a run has them). Bounded:
 * a value passed through many names may come back with neither flag set. */
ol_value_use ol_value_use_of(ol_model *m, ol_nid e, long *budget);

/* The same for every use of def (a parameter, a name bound by an
 * assignment). */
ol_value_use ol_def_use_of(ol_model *m, uint32_t def, long *budget);

/* *budget: the nodes the questions of one file may still visit, spent by
 * each (a file of thousands of loads in one function stays linear); once it
 * is spent, they find nothing. */
#define OL_HOSTUSE_BUDGET 4000000L

/* Is call ci one that raises on a CUDA tensor it is given (or, for
 * `x.numpy()`, called on)? Cheap: to skip values no such call can see. */
bool ol_may_use_as_host(ol_model *m, uint32_t ci);

#endif
