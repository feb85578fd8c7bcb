/*
 * references.c - the reference table (see references.h). Every link points
 * at a page that exists and says what the title claims; prefer PyTorch's own
 * documentation, then its issue tracker and forums.
 */
#include "references.h"

#include <string.h>

#define PT_DOCS "https://pytorch.org/docs/stable/"
#define PT_TUTORIALS "https://pytorch.org/tutorials/"
#define FAQ_OOM PT_DOCS "notes/faq.html#my-model-reports-cuda-runtime-error-2-out-of-memory"
#define END {NULL, NULL}

typedef struct rule_references {
    const char *code;
    ol_reference refs[5];
} rule_references;

static const rule_references table[] = {
    {"OOM001",
     {{"PEP 263: Defining Python source code encodings", "https://peps.python.org/pep-0263/"}, END}},
    {"OOM002",
     {{"What's New in Python 3.0: the syntax Python 2 code must change",
       "https://docs.python.org/3/whatsnew/3.0.html"},
      END}},
    {"OOM003",
     {{"Ruff: unused-noqa (RUF100), the rule OOM003 follows", "https://docs.astral.sh/ruff/rules/unused-noqa/"},
      END}},
    {"OOM101",
     {{"PyTorch FAQ: out of memory, \"Don't accumulate history across your training loop\"", FAQ_OOM},
      {"PyTorch Forums: High memory usage while training (the FAQ's example)",
       "https://discuss.pytorch.org/t/high-memory-usage-while-training/162"},
      END}},
    {"OOM102",
     {{"PyTorch FAQ: out of memory, \"Don't accumulate history\" and \"Don't hold onto tensors\"", FAQ_OOM},
      {"Autograd mechanics: locally disabling gradient computation",
       PT_DOCS "notes/autograd.html#locally-disabling-gradient-computation"},
      END}},
    {"OOM103",
     {{"torch.Tensor.backward: retain_graph=True is \"in nearly all cases\" not needed",
       PT_DOCS "generated/torch.Tensor.backward.html"},
      END}},
    {"OOM104",
     {{"PyTorch FAQ: My out of memory exception handler can't allocate memory",
       PT_DOCS "notes/faq.html#my-out-of-memory-exception-handler-can-t-allocate-memory"},
      END}},
    {"OOM105",
     {{"PyTorch FAQ: out of memory, \"Avoid running RNNs on sequences that are too large\" (truncated BPTT)",
       FAQ_OOM},
      {"PyTorch Forums: Help clarifying repackage_hidden in word language model",
       "https://discuss.pytorch.org/t/help-clarifying-repackage-hidden-in-word-language-model/226"},
      END}},
    {"OOM106",
     {{"torch.autograd.backward: create_graph=True makes a reference cycle between a parameter and its gradient",
       PT_DOCS "generated/torch.autograd.backward.html"},
      {"pytorch/pytorch#4661: backward(create_graph=True) should warn of a potential memory leak",
       "https://github.com/pytorch/pytorch/issues/4661"},
      {"pytorch/pytorch#7343: memory leak with create_graph=True", "https://github.com/pytorch/pytorch/issues/7343"},
      END}},
    {"OOM201",
     {{"Performance Tuning Guide: Disable gradient calculation for validation or inference",
       PT_TUTORIALS "recipes/recipes/tuning_guide.html#disable-gradient-calculation-for-validation-or-inference"},
      {"Autograd mechanics: locally disabling gradient computation (no_grad, inference_mode)",
       PT_DOCS "notes/autograd.html#locally-disabling-gradient-computation"},
      END}},
    {"OOM301",
     {{"CUDA semantics: use pinned memory buffers", PT_DOCS "notes/cuda.html#use-pinned-memory-buffers"},
      {"torch.utils.data: memory pinning", PT_DOCS "data.html#memory-pinning"},
      END}},
    {"OOM302",
     {{"torch.load: storages are restored to the device they were saved from, unless map_location says otherwise",
       PT_DOCS "generated/torch.load.html"},
      {"Saving and loading models across devices",
       PT_TUTORIALS "beginner/saving_loading_models.html#saving-loading-model-across-devices"},
      END}},
    {"OOM303",
     {{"Performance Tuning Guide: Create tensors directly on the target device",
       PT_TUTORIALS "recipes/recipes/tuning_guide.html#create-tensors-directly-on-the-target-device"},
      END}},
    {"OOM401",
     {{"Autograd mechanics: in-place operations with autograd",
       PT_DOCS "notes/autograd.html#in-place-operations-with-autograd"},
      {"torch.nn.ReLU: the inplace argument", PT_DOCS "generated/torch.nn.ReLU.html"},
      END}},
    {"OOM501",
     {{"Automatic mixed precision (torch.amp)", PT_DOCS "amp.html"},
      {"Automatic Mixed Precision recipe", PT_TUTORIALS "recipes/recipes/amp_recipe.html"},
      END}},
    {"OOM502",
     {{"torch.amp: torch.cuda.amp.autocast(args...) is deprecated in favour of torch.amp.autocast(\"cuda\", args...)",
       PT_DOCS "amp.html"},
      END}},
    {"OOM503",
     {{"torch.amp autocasting: wrap only the forward pass and loss; backward passes under autocast are not "
       "recommended",
       PT_DOCS "amp.html#autocasting"},
      {"CUDA Automatic Mixed Precision examples", PT_DOCS "notes/amp_examples.html"},
      END}},
    {"OOM504",
     {{"torch.amp gradient scaling: float16 gradients underflow without it", PT_DOCS "amp.html#gradient-scaling"},
      {"CUDA Automatic Mixed Precision examples", PT_DOCS "notes/amp_examples.html"},
      END}},
    {"OOM601",
     {{"Zeroing out gradients in PyTorch", PT_TUTORIALS "recipes/recipes/zeroing_out_gradients.html"},
      {"torch.optim.Optimizer.zero_grad", PT_DOCS "generated/torch.optim.Optimizer.zero_grad.html"},
      END}},
    {"OOM602",
     {{"Zeroing out gradients in PyTorch", PT_TUTORIALS "recipes/recipes/zeroing_out_gradients.html"},
      {"torch.optim.Optimizer.zero_grad", PT_DOCS "generated/torch.optim.Optimizer.zero_grad.html"},
      END}},
    {"OOM603",
     {{"torch.optim.Optimizer.zero_grad: set_to_none (the default) frees the gradients",
       PT_DOCS "generated/torch.optim.Optimizer.zero_grad.html"},
      {"Performance Tuning Guide: Use parameter.grad = None instead of zero_grad()",
       PT_TUTORIALS "recipes/recipes/tuning_guide.html"
                    "#use-parameter-grad-none-instead-of-model-zero-grad-or-optimizer-zero-grad"},
      END}},
    {"OOM604",
     {{"CUDA Automatic Mixed Precision examples: gradient accumulation divides the loss by the number of steps",
       PT_DOCS "notes/amp_examples.html#gradient-accumulation"},
      END}},
    {"OOM701",
     {{"CUDA semantics: memory management (the caching allocator, and what empty_cache does not do)",
       PT_DOCS "notes/cuda.html#memory-management"},
      {"torch.cuda.empty_cache", PT_DOCS "generated/torch.cuda.empty_cache.html"},
      END}},
    {"OOM702",
     {{"CUDA semantics: Use nn.parallel.DistributedDataParallel instead of multiprocessing or nn.DataParallel",
       PT_DOCS "notes/cuda.html#use-nn-parallel-distributeddataparallel-instead-of-multiprocessing-or-nn-dataparallel"},
      {"torch.nn.DataParallel: DistributedDataParallel is recommended instead",
       PT_DOCS "generated/torch.nn.DataParallel.html"},
      END}},
    {"OOM703",
     {{"torch.nn.CrossEntropyLoss: size_average and reduce are deprecated (see reduction)",
       PT_DOCS "generated/torch.nn.CrossEntropyLoss.html"},
      {"torch/nn/_reduction.py: the legacy table from size_average/reduce to reduction",
       "https://github.com/pytorch/pytorch/blob/main/torch/nn/_reduction.py"},
      END}},
    {"OOM704",
     {{"torch.autograd: Variable (deprecated)", PT_DOCS "autograd.html#variable-deprecated"},
      {"PyTorch 0.4.0 migration guide: Tensor and Variable merged, volatile has no effect",
       "https://pytorch.org/blog/pytorch-0_4_0-migration-guide/"},
      END}},
    {"OOM705",
     {{"torch.autograd: anomaly detection", PT_DOCS "autograd.html#anomaly-detection"},
      {"Performance Tuning Guide: Disable debugging APIs",
       PT_TUTORIALS "recipes/recipes/tuning_guide.html#disable-debugging-apis"},
      END}},
};

const ol_reference *ol_rule_references(const char *code)
{
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
        if (strcmp(table[i].code, code) == 0)
            return table[i].refs;
    return NULL;
}
