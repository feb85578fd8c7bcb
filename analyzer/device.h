/*
 * device.h - moves of tensors to an accelerator, and what is moved (see
 * device.c). Answers from the model; walks nothing but the expressions asked
 * about.
 */
#ifndef OL_DEVICE_H
#define OL_DEVICE_H

#include <stdbool.h>

#include "model.h"

/* Is e a GPU device: "cuda", "cuda:0", torch.device("cuda"), a name like device? */
bool ol_gpu_device(ol_model *m, ol_nid e);
/* Is this call a move to the GPU (`.cuda()`, `.to(dev)`, `torch.f(..., device=dev)`)? */
bool ol_moves_to_gpu(ol_model *m, const ol_call *c);
/* Does this subscript index draw a batch: `X[i:i + bs]`, `X[perm[i:j]]`? */
bool ol_batch_slice(const ol_tree *t, ol_nid index);
/* Does this subscript index draw a batch, also through an index variable
 * drawn afresh in the loop that uses it: a slice of a permutation
 * (`idx = perm[i:i + bs]`), random indices (`torch.randint(0, n, (bs,))`),
 * a random mask (`torch.rand(n) < p`), a split of a permutation
 * (`for idx in perm.split(bs)`)? A single index, labels or a loader's
 * batch used as indices do not count. */
bool ol_batch_index(ol_model *m, ol_nid index);
/* The base of a method chain: `torch.from_numpy(a).float().cuda()` -> `torch.from_numpy(a)`. */
ol_nid ol_chain_base(ol_model *m, ol_nid e);
/* Is e's value the result of `move`, possibly followed by more method calls? */
bool ol_chain_contains(ol_model *m, ol_nid e, ol_nid move);
/* Buffers, noise and literals are not datasets: torch.zeros(...), torch.randn(...). */
bool ol_made_from_nothing(ol_model *m, ol_nid base);
/* Does e hold data read from disk or converted from an array or a table:
 * `torch.from_numpy(a)`, `torch.load(p)`, `np.load`, `pd.read_csv`,
 * `frame.values`, `.to_numpy()`, `load_dataset(...)`, directly or through
 * the values of the names it uses (a few bindings deep)? */
bool ol_loaded_data(ol_model *m, ol_nid e);
/* Is local class cls a Dataset: a subclass of one of `torch.utils.data` or
 * `torchvision.datasets` (also through local bases), or a class with items by
 * index and a length (`__getitem__` and `__len__`) that is not a module?
 * *guess: only because a base imported from elsewhere is named `...Dataset`. */
bool ol_class_is_dataset(ol_model *m, uint32_t cls, bool *guess);
/* Does the call build a dataset, or a DataLoader over one: a class of
 * `torch.utils.data` or `torchvision.datasets`, or a local Dataset class
 * (ol_class_is_dataset)? *guess: a class of elsewhere named `...Dataset` or
 * `...DataLoader`. */
bool ol_builds_dataset(ol_model *m, ol_nid call, bool *guess);

#endif
