"""A training loop written for a GPU that keeps every step's logits with their
autograd graphs (OOM102). `oomlint probe --script` runs it on the CPU in
tests/probe_tests.py; cuda_fixed.py is its fixed twin."""
import torch
from torch import nn

device = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")
torch.manual_seed(0)
model = nn.Sequential(nn.Linear(512, 1024), nn.ReLU(), nn.Linear(1024, 1000)).to(device)
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
scaler = torch.cuda.amp.GradScaler()
data = torch.randn(64, 512).pin_memory()
labels = torch.randint(1000, (64,), device="cuda")
seen = []
for step in range(10000):
    x = data.to(device, non_blocking=True)
    opt.zero_grad(set_to_none=True)
    with torch.autocast("cuda", dtype=torch.float16):
        logits = model(x)
        loss = nn.functional.cross_entropy(logits, labels)
    scaler.scale(loss).backward()
    scaler.step(opt)
    scaler.update()
    seen.append(logits)
    torch.cuda.synchronize()
    # the script's own view of its memory, answered from the CPU
    assert torch.cuda.max_memory_allocated() >= torch.cuda.memory_allocated() > 0
torch.cuda.empty_cache()
