"""The fixed twin of gpu_eval_leak.py: the held-out batch is evaluated under
torch.no_grad() and its loss taken as a Python number. Run by
tests/probe_tests.py where a GPU is present."""
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
    with torch.no_grad():
        val_loss = crit(model(val_x), val_y)
    val_total += val_loss.item()
    if step % 100 == 0:
        print(step, float(val_total) / (step + 1))
