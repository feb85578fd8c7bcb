"""OOM103 retain-graph-in-loop: backward(retain_graph=True) keeps the step's
saved tensors until the graph is dropped, overlapping the next forward."""
import torch
from torch import nn

from . import scenario
from .common import classification_batch, mlp, mlp_saved_bytes, seeded

MLP = dict(batch=64, features=256, hidden=512, classes=10)
MLP_CUDA = dict(batch=256, features=1024, hidden=4096, classes=10)


@scenario("OOM103", "train", claims=("peak",), sizes=MLP, cuda_sizes=MLP_CUDA, scale=mlp_saved_bytes,
          summary="training step with loss.backward(retain_graph=True) (fixed: plain backward())")
def train(run, bad):
    p = run.params
    model = mlp(p).to(run.device)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    crit = nn.CrossEntropyLoss()
    run.track(model)
    g = seeded(30)
    for _ in run.steps():
        x, y = classification_batch(g, p, run.device)
        opt.zero_grad()
        out = model(x)
        loss = crit(out, y)
        loss.backward(retain_graph=bad)
        opt.step()
        run.checksum(loss)
