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
 * device, `torch.tensor` of Python data (a list, numpy, what pickle read),
 * `torch.stack`/`torch.cat` of host tensors, a torch_sparse SparseTensor of
 * host indices and values, casts, views and other methods of those that
 * move nothing, what a function of the file returns when every value it
 * returns is one of these, parsed command-line values, arithmetic and
 * containers of those, and names bound only to them (unpacked too).
 * Anything else (a state_dict, a parameter, a call) may be on a GPU. */
bool ol_host_only(ol_model *m, ol_nid e);

/* Does the torch.save at `call` write host data only: what it saves is
 * (ol_host_only), or it sits in a script that never puts anything on an
 * accelerator, outside any function with parameters (a CPU tutorial saving
 * its own model; not a helper, whose parameters come from elsewhere)?
 * cpu_only caches ol_file_stays_on_cpu for the file: -1 not asked yet. */
bool ol_save_holds_host_data(ol_model *m, ol_nid call, int *cpu_only);

/* `x["key"]` read (not stored into), with x the node n: the key's string
 * node, or OL_NONE. */
ol_nid ol_read_key(const ol_tree *t, ol_nid n);

/* Is qual `torch.load` (not a URL loader)? */
bool ol_is_torch_load(const char *qual);

/* A writer of checkpoints: `torch.save(obj, f)`, or a training framework's
 * (`fabric.save(path, state)`, `accelerator.save(obj, f)`,
 * `trainer.save_checkpoint(path)`), which writes what the processes hold on
 * their devices, so nothing of what it saves is read (obj is OL_NONE). */
typedef struct ol_save_site {
    ol_nid obj, to; /* what it writes, and the path; OL_NONE when not given */
    bool framework;
} ol_save_site;

/* Is call ci a writer of checkpoints? *out gets what and where it writes. */
bool ol_save_site_of(ol_model *m, uint32_t ci, ol_save_site *out);


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
 * `"ckpt/best.pt"`), or the file name an f-string ends with
 * (`f"{out}/feats.pt"`: "feats.pt"): a name and an extension, no spaces;
 * *s and *len are its value. */
bool ol_file_literal(const ol_tree *t, ol_nid n, const char **s, uint32_t *len);

/* The file-name literals in the expression e (a path: `os.path.join(d,
 * "feats.pth")`), in order: writes at most cap to s and len and returns
 * how many. */
size_t ol_file_literals(const ol_tree *t, ol_nid e, const char **s, uint32_t *len, size_t cap);

/* The file-name literals a path is spelled with: in its own text, and in
 * what the names in it are bound to, a few bindings deep (`save_path =
 * os.path.join(d, name)` after `name = "%s_net_%s.pth" % (epoch, which)`):
 * a writer and a reader that build the same file name in separate
 * statements, separate methods or separate files spell the same literal.
 * Writes at most cap and returns how many. */
size_t ol_path_literals(ol_model *m, ol_nid e, const char **s, uint32_t *len, size_t cap);

/* Does every instance of class ci hold host data only? No base but
 * `object`, and every attribute the class assigns (in any method) is host
 * data and nothing changes it otherwise (a corpus: a dictionary of words
 * and `torch.LongTensor`s of their ids). */
bool ol_class_holds_host_data(ol_model *m, uint32_t ci);

/* The shapes a path expression may take, each a normalized text: names
 * replaced by what their reaching bindings hold (`path = f"{d.dir}/a.pt"`
 * is the f-string; `x if c else y` and `for f in (A, B)` are each
 * alternative), one spelling per string, a call of a function of this
 * source as that function whatever its arguments (`self.ckpt_path(e)`), a
 * name whose value is not followed (a parameter, a loop over something
 * else) as a token of that binding alone, `self` and `super()` as "self".
 * Two paths with a shape in common name the same file, or files named the
 * same way by the same code. */
#define OL_SHAPES_MAX 8
typedef struct ol_shapes {
    char *items[OL_SHAPES_MAX];
    size_t len;
} ol_shapes;

/* Fills out (emptied first) with e's shapes; false (out empty) when e has
 * more than OL_SHAPES_MAX of them or a part that has no shape (a
 * comprehension, a lambda, an unpacked argument). */
bool ol_path_shapes(ol_model *m, ol_nid e, ol_shapes *out);
void ol_shapes_free(ol_shapes *s);
/* Adds a copy of x; false when s is full. */
bool ol_shapes_add(ol_shapes *s, const char *x);
/* Is x one of s's shapes? A shape of s that ends in "(" (a function
 * that returns the path it wrote, as save_shapes of OOM302 adds it) has
 * every call of that function: "fn#3(" has "fn#3(*,)". */
bool ol_shapes_has(const ol_shapes *s, const char *x);
/* Have a and b a shape in common? */
bool ol_shapes_meet(const ol_shapes *a, const ol_shapes *b);

/* Does the path name the process's rank (`f"queue{rank}.pt"`,
 * `join(d, "q" + str(trainer.global_rank))`, also through the bindings
 * of its names and what the class assigns to a `self.` attribute of it)?
 * Such a file is written and read back by the same rank, on its own
 * device. */
bool ol_path_per_rank(ol_model *m, ol_nid e);

#endif
