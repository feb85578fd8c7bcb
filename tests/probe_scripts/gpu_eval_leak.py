"""A training loop for a GPU that checks a held-out batch after every step
without torch.no_grad() and adds the validation loss tensor to a total
(OOM101, OOM201): each step's evaluation graph, with the activations it saved
for a backward that never comes, stays on the GPU. gpu_eval_fixed.py is the
fixed twin. Run by tests/probe_tests.py where a GPU is present."""
import torch
from torch import nn

device = torch.device("cuda")
torch.manual_seed(0)
model = nn.Sequential(nn.Linear(1024, 4096), nn.ReLU(), nn.Linear(4096, 1000)).to(device)
opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
crit = nn.CrossEntropyLoss()
val_x = torch.randn(256, 1024, device=device)
val_y = torch.randint(1000, (256,), device=device)
val_total = 0.0
for step in range(10000):
    x = torch.randn(256, 1024, device=device)
    y = torch.randint(1000, (256,), device=device)
    model.train()
    opt.zero_grad(set_to_none=True)
    loss = crit(model(x), y)
    loss.backward()
    opt.step()
    model.eval()
    val_loss = crit(model(val_x), val_y)
    val_total += val_loss
    if step % 100 == 0:
        print(step, float(val_total) / (step + 1))
