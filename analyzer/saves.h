/*
 * saves.h - what a `torch.save` call writes: whether it can hold a tensor
 * on a GPU, which string keys a saved dict literal has, and which file
 * names its path spells. OOM302 asks these of the saves of the file it
 * checks, and summaries (summary.h) record them for every file of a run, so
 * a load can be matched with a writer in another file.
 */
#ifndef OL_SAVES_H
#define OL_SAVES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model.h"

/* `torch.save` or `torch.serialization.save`, by qualified name. */
bool ol_is_torch_save(const char *qual);

/* Can e hold nothing on a GPU? Python literals, `x.cpu()`, `x.numpy()`,
 * `x.tolist()`, `x.item()`, `x.to("cpu")`, host factories without a
 * device, casts and views of those, parsed command-line values, arithmetic
 * and containers of those, and names bound only to them. Anything else (a
 * state_dict, a parameter, a call) may be on a GPU. */
bool ol_host_only(ol_model *m, ol_nid e);

/* `x["key"]` read (not stored into), with x the node n: the key's string
 * node, or OL_NONE. */
ol_nid ol_read_key(const ol_tree *t, ol_nid n);

/* The dict literal a save writes (`torch.save({"eigvec": v}, out)`, or a
 * name bound once to one and only read through keys before the save), when
 * every key is a string; else OL_NONE. */
ol_nid ol_saved_dict(ol_model *m, ol_nid obj);

/* Does the dict literal hold the string key `key` (a string node)? */
bool ol_dict_has_key(const ol_tree *t, ol_nid dict, ol_nid key);

/* Is what a save writes a literal that cannot be read through string keys
 * (a list, tuple or set literal, a number, a string), or a name bound once
 * to one? */
bool ol_saved_unkeyed(ol_model *m, ol_nid obj);

/* A plain string literal that names a file (`"trainfeat.pth"`,
 * `"ckpt/best.pt"`): a name and an extension, no spaces; *s and *len are its
 * value. */
bool ol_file_literal(const ol_tree *t, ol_nid n, const char **s, uint32_t *len);

/* The file-name literals in the expression e (a path: `os.path.join(d,
 * "feats.pth")`), in order: writes at most cap to s and len and returns
 * how many. */
size_t ol_file_literals(const ol_tree *t, ol_nid e, const char **s, uint32_t *len, size_t cap);

#endif
