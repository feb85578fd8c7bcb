# Evaluation that keeps every batch's logits on the GPU with autograd on
# (OOM201): the job dies here, in evaluation, not in training.
import torch


def evaluate(model, loader, device):
    model.eval()
    logits = []
    for batch in loader:
        logits.append(model(batch["input_ids"].to(device)).logits)
    return torch.cat(logits)
