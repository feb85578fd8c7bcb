"""The fixed twin of gpu_after_backward.py: the running total takes each
step's loss as a Python number, so no graph outlives its step. Run by
tests/probe_tests.py where a GPU is present."""
import torch
from torch import nn

device = torch.device("cuda")
torch.manual_seed(0)
model = nn.Sequential(nn.Linear(1024, 4096), nn.ReLU(), nn.Linear(4096, 1000)).to(device)
opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
crit = nn.CrossEntropyLoss()
running = 0.0
for step in range(10000):
    x = torch.randn(256, 1024, device=device)
    y = torch.randint(1000, (256,), device=device)
    opt.zero_grad(set_to_none=True)
    loss = crit(model(x), y)
    loss.backward()
    opt.step()
    running += loss.item()
    if step % 100 == 0:
        print(step, float(running) / (step + 1))
