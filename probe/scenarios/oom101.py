"""OOM101 tensor-accumulated-with-graph: `total += loss` keeps every step's
graph reachable from `total`."""
import torch
from torch import nn

from . import scenario
from .common import classification_batch, mlp, mlp_saved_bytes, seeded

MLP = dict(batch=64, features=256, hidden=512, classes=10)
MLP_CUDA = dict(batch=256, features=1024, hidden=4096, classes=10)


@scenario("OOM101", "train", claims=("growth",), sizes=MLP, cuda_sizes=MLP_CUDA, scale=mlp_saved_bytes,
          summary="training loop: running_loss += loss after backward (fixed: loss.item())",
          note="backward has freed the saved tensors; what grows is the graph itself")
def train(run, bad):
    p = run.params
    model = mlp(p).to(run.device)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    crit = nn.CrossEntropyLoss()
    run.track(model)
    g = seeded(10)
    running = 0.0
    for _ in run.steps():
        x, y = classification_batch(g, p, run.device)
        opt.zero_grad()
        loss = crit(model(x), y)
        loss.backward()
        opt.step()
        if bad:
            running += loss
        else:
            running += loss.item()
        run.checksum(running)


@scenario("OOM101", "eval", claims=("growth",), sizes=MLP, cuda_sizes=MLP_CUDA, scale=mlp_saved_bytes,
          summary="validation loop with autograd on: total += loss (fixed: loss.item())")
def evaluate(run, bad):
    p = run.params
    model = mlp(p).to(run.device)
    model.eval()
    crit = nn.CrossEntropyLoss()
    run.track(model)
    g = seeded(11)
    total = 0.0
    for _ in run.steps():
        x, y = classification_batch(g, p, run.device)
        loss = crit(model(x), y)
        if bad:
            total += loss
        else:
            total += loss.item()
        run.checksum(total)
