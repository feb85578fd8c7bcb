"""A training loop that backwards each step's loss with retain_graph=True
(OOM103) and adds the loss to a running total (OOM101): the total keeps every
step's graph, and since backward kept what the graph saved, every step's
activations too. Removing either stops the growth: without retain_graph the
total keeps only the graph's nodes, without the total the kept graph is
dropped when `loss` is rebound. `oomlint probe --script` runs it on the CPU
in tests/probe_tests.py."""
import torch
from torch import nn

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
torch.manual_seed(0)
model = nn.Sequential(nn.Linear(256, 1024), nn.ReLU(), nn.Linear(1024, 100)).to(device)
opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
crit = nn.CrossEntropyLoss()
total = 0.0
for step in range(10000):
    x = torch.randn(128, 256, device=device)
    y = torch.randint(100, (128,), device=device)
    opt.zero_grad(set_to_none=True)
    loss = crit(model(x), y)
    loss.backward(retain_graph=True)
    opt.step()
    total += loss
