"""OOM102 tensor-collected-in-loop: `outputs.append(out)` keeps each
output's graph alive for as long as the list lives."""
import torch
from torch import nn

from . import scenario
from .common import classification_batch, mlp, mlp_saved_bytes, seeded

MLP = dict(batch=64, features=256, hidden=512, classes=10)
MLP_CUDA = dict(batch=256, features=1024, hidden=4096, classes=10)


@scenario("OOM102", "train", claims=("growth",), sizes=MLP, cuda_sizes=MLP_CUDA, scale=mlp_saved_bytes,
          summary="training loop collecting logits for epoch metrics (fixed: logits.detach())",
          note="backward has freed the saved tensors; what grows is the graph itself")
def train(run, bad):
    p = run.params
    model = mlp(p).to(run.device)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    crit = nn.CrossEntropyLoss()
    run.track(model)
    g = seeded(20)
    outputs = []
    for _ in run.steps():
        x, y = classification_batch(g, p, run.device)
        opt.zero_grad()
        logits = model(x)
        loss = crit(logits, y)
        loss.backward()
        opt.step()
        outputs.append(logits if bad else logits.detach())
        run.checksum(sum(float(o.detach().double().sum()) for o in outputs))


@scenario("OOM102", "eval", claims=("growth",), sizes=MLP, cuda_sizes=MLP_CUDA, scale=mlp_saved_bytes,
          summary="prediction loop with autograd on collecting outputs (fixed: out.detach())")
def predict(run, bad):
    p = run.params
    model = mlp(p).to(run.device)
    model.eval()
    run.track(model)
    g = seeded(21)
    preds = []
    for _ in run.steps():
        x, _y = classification_batch(g, p, run.device)
        out = model(x)
        preds.append(out if bad else out.detach())
        run.checksum(sum(float(o.detach().double().sum()) for o in preds))
