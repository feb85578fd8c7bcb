# Trains, then evaluates through project.evaluation; run with torchrun on
# several GPUs. The log beside it is written from PyTorch's format strings.
import torch

from project.evaluation import evaluate


def run(model, train_loader, val_loader, optimizer, device):
    for batch in train_loader:
        loss = model(batch["input_ids"].to(device), labels=batch["labels"].to(device)).loss
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
    return evaluate(model, val_loader, device)
