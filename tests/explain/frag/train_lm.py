# Fine-tunes a language model on batches of varying length: the allocator's
# reserve ends up in pieces of many sizes, and a long batch cannot find one
# block large enough. The log beside it is written from PyTorch's format
# strings, not recorded on a GPU.
import torch
from torch.utils.data import DataLoader


def collate(batch):
    longest = max(len(ids) for ids in batch)
    return torch.stack([torch.nn.functional.pad(ids, (0, longest - len(ids))) for ids in batch])


def train(model, dataset, optimizer, device):
    loader = DataLoader(dataset, batch_size=16, shuffle=True, collate_fn=collate)
    scaler = torch.amp.GradScaler("cuda")
    for step, input_ids in enumerate(loader):
        input_ids = input_ids.to(device)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = model(input_ids, labels=input_ids).loss
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
        optimizer.zero_grad(set_to_none=True)
        if step % 100 == 0:
            print(f"step {step} loss {loss.item():.4f} mem {torch.cuda.memory_allocated() / 2**30:.2f} GiB")
