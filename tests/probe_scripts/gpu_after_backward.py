"""A training loop for a GPU that adds each step's loss tensor to a running
total after backward() (OOM101): `running` keeps every step's autograd graph
reachable. backward() has already freed the tensors the graph saved, so this
measures what a graph keeps once its backward has run. gpu_after_backward_fixed.py
is the fixed twin. Run by tests/probe_tests.py where a GPU is present."""
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
    running += loss
    if step % 100 == 0:
        print(step, float(running) / (step + 1))
