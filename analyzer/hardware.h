/*
 * hardware.h - what a file says about the hardware it runs on: whether it
 * names CUDA or another accelerator, moves data to a device held in a
 * variable, or runs on TPUs through torch_xla only. Rules whose findings
 * matter only on a GPU (OOM302, OOM501) ask these once per file.
 */
#ifndef OL_HARDWARE_H
#define OL_HARDWARE_H

#include <stdbool.h>

#include "model.h"

/* `.cuda()`, a "cuda..." device string, `torch.cuda.*`, `torch.accelerator.*`. */
bool ol_file_names_accelerator(ol_model *m);
/* Data moved to a device held in a variable: `x.to(device)`,
 * `x.to(args.device)`, `device=args.device`, where the value is not known
 * to be the CPU. */
bool ol_file_moves_to_device_variable(ol_model *m);
/* Imports torch_xla and names no CUDA device: tensors live on TPUs/XLA. */
bool ol_file_is_xla_only(ol_model *m);
/* Does nothing in the file put data on an accelerator? No CUDA or device
 * named (ol_file_names_accelerator), no move to a device variable, and no
 * name or string of its code (comments aside) holding a word that may bring
 * one in another way: "device" (also
 * `device_map=`), "cuda", "gpu", "tpu", "xla", "mps" (these four not after
 * a letter), "accelerat", "fabric", "deepspeed", "trainer", "prepare". What
 * such a file saves holds host data only. */
bool ol_file_stays_on_cpu(ol_model *m);
/* Does the file run in several processes, each with its own device: a
 * process group, DistributedDataParallel or FSDP, `mp.spawn`, Accelerate,
 * DeepSpeed, Fabric, torchrun, Horovod, a `rank`, `local_rank` or
 * `world_size` (names and strings of its code)? A checkpoint saved from GPU
 * 0 and loaded without `map_location` lands on GPU 0 in every one of them. */
bool ol_file_runs_several_processes(ol_model *m);
/* Is e (a `.to()` argument or a `device=` value) a device held in a
 * variable: a name like `device`/`dev`, an attribute like `args.device`
 * or `x.device`, a value known to be a device, not a string? */
bool ol_is_device_variable(ol_model *m, ol_nid e);

/* What a file says about the device its data lives on, most telling first,
 * with the node that says it. */
typedef enum ol_device_kind {
    OL_DEVICE_NAMED,     /* CUDA or torch.accelerator named (`.cuda()`, "cuda:0", torch.cuda.*) */
    OL_DEVICE_VARIABLE,  /* data moved to a device variable not bound to the CPU (`x.to(device)`) */
    OL_DEVICE_FRAMEWORK, /* a framework that places the model itself (Accelerate, Lightning's Trainer, DeepSpeed) */
    OL_DEVICE_CPU,       /* every device it moves data to is the CPU */
    OL_DEVICE_WORD,      /* a word of devices ("gpu", "device") and nothing more telling */
    OL_DEVICE_NONE,      /* nothing */
} ol_device_kind;

typedef struct ol_device_use {
    ol_device_kind use;
    ol_nid node;         /* OL_NONE for NONE (and CPU without a word) */
} ol_device_use;

void ol_file_device_use(ol_model *m, ol_device_use *out);

/* The file's first call asking whether a GPU is there
 * (`torch.cuda.is_available()`), or OL_NONE: code that asks runs on a
 * machine without one as well. */
ol_nid ol_file_gpu_check(ol_model *m);
/* The file's first naming of the CPU as a device, or OL_NONE:
 * `torch.device("cpu")`, or "cpu" bound to a name like `device` (an
 * assignment, a parameter's default). */
ol_nid ol_file_cpu_device(ol_model *m);

#endif
