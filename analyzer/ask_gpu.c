/*
 * ask_gpu.c - does this run on a GPU? (ask.h)
 *
 * oomlint speaks of GPU memory: a leak or a waste in code that only ever
 * runs on the CPU costs host memory, which is not what its findings claim.
 * The file says first (hardware.h, most telling first): CUDA or
 * torch.accelerator named, data moved to a device variable not bound to the
 * CPU, a framework that places the model itself (Accelerate, Lightning's
 * Trainer, DeepSpeed), every device pinned to the CPU, or no device at all.
 * A file that names none (a models.py, a utils.py) runs wherever the files
 * that call it run: a file of the run that puts data on an accelerator and
 * calls one of its functions or classes makes it a GPU file. A notebook or
 * script that names no device, and that nothing of the run calls, runs on
 * the CPU. Asked once per file.
 */
#include "ask_internal.h"

#include <stdlib.h>

#include "hardware.h"
#include "summary.h"

static ol_gpu runs_on_gpu(ol_model *m, ol_reasons *why)
{
    ol_door *d = ol_door_of(m);
    if (d->gpu < 0) {
        const ol_tree *t = m->tree;
        ol_device_use use;
        ol_file_device_use(m, &use);
        /* `x.cuda` shown as the call `x.cuda()` it is part of */
        ol_nid up = use.node != OL_NONE ? ol_parent(t, use.node) : OL_NONE;
        if (ol_kind_of(t, use.node) == OL_N_attribute && ol_kind_of(t, up) == OL_N_call &&
            ol_field(t, up, OL_F_function) == use.node)
            use.node = up;
        char *text = use.node != OL_NONE ? ol_node_str_short(t, use.node) : NULL;
        switch (use.use) {
        case OL_DEVICE_NAMED:
            d->gpu = OL_GPU_YES;
            ol_reasons_add(&d->gpu_why, use.node, NULL, 0, false,
                           ol_door_printf(m, "this file puts data on a GPU: `%s`", text));
            break;
        case OL_DEVICE_VARIABLE:
            d->gpu = OL_GPU_YES;
            ol_reasons_add(&d->gpu_why, use.node, NULL, 0, false,
                           ol_door_printf(m, "this file moves data to a device: `%s`", text));
            break;
        case OL_DEVICE_FRAMEWORK:
            d->gpu = OL_GPU_YES;
            ol_reasons_add(&d->gpu_why, use.node, NULL, 0, false,
                           ol_door_printf(m, "a framework or a job of several processes places the model on its "
                                             "device: `%s`", text));
            break;
        case OL_DEVICE_WORD:
            /* "device", "gpu" in a name or a string, and nothing that says
             * where: a device comes from elsewhere (a parameter, a config) */
            d->gpu = OL_GPU_YES;
            d->gpu_why.guess = "a name that speaks of devices";
            ol_reasons_add(&d->gpu_why, use.node, NULL, 0, false,
                           ol_door_printf(m, "the device is chosen elsewhere: `%s`", text));
            break;
        case OL_DEVICE_CPU:
        case OL_DEVICE_NONE: {
            ol_run_site site;
            const char *what;
            if (ol_run_gpu_user(m, &site, &what)) {
                d->gpu = OL_GPU_YES;
                ol_reasons_add(&d->gpu_why, OL_NONE, ol_door_path(m, site.path), site.line, true,
                               ol_door_printf(m, "`%s` of this file is used here, in a file that puts data on a GPU",
                                              what));
            } else {
                d->gpu = use.use == OL_DEVICE_CPU ? OL_GPU_CPU : OL_GPU_NEVER;
                if (use.node != OL_NONE)
                    ol_reasons_add(&d->gpu_why, use.node, NULL, 0, false,
                                   ol_door_printf(m, "every device this file uses is the CPU: `%s`", text));
            }
            break;
        }
        }
        free(text);
    }
    ol_reasons_merge(why, &d->gpu_why);
    return (ol_gpu)d->gpu;
}

bool ol_runs_on_xla_only(ol_model *m)
{
    ol_door *d = ol_door_of(m);
    if (d->xla < 0)
        d->xla = ol_file_is_xla_only(m);
    return d->xla == 1;
}

ol_gpu ol_runs_on_gpu(ol_model *m, ol_reasons *why)
{
    ol_gpu answer = runs_on_gpu(m, why);
    ol_door_audit(m, "gpu", OL_NONE, (int)(answer));
    return answer;
}
