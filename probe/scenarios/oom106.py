"""OOM106 backward-create-graph-leak: backward(create_graph=True) makes each
.grad carry the graph that computed it; zeroing it in place keeps that graph,
and the next backward chains onto it."""
import torch
from torch import nn

from . import scenario
from .common import F32, seeded

MLP = dict(batch=32, features=64, hidden=256, lr=0.01)
MLP_CUDA = dict(batch=256, features=1024, hidden=4096, lr=0.01)


def forward_saved_bytes(p):
    """The forward activations the double-backward graph keeps: the input and
    the tanh output."""
    return F32 * p["batch"] * (p["features"] + p["hidden"])


@scenario("OOM106", "gradient-penalty", claims=("growth",), sizes=MLP, cuda_sizes=MLP_CUDA,
          scale=forward_saved_bytes,
          summary="manual SGD with backward(create_graph=True) and p.grad.zero_() (fixed: p.grad = None)")
def penalty(run, bad):
    p = run.params
    torch.manual_seed(6)
    model = nn.Sequential(nn.Linear(p["features"], p["hidden"]), nn.Tanh(), nn.Linear(p["hidden"], 1)).to(run.device)
    run.track(model)
    g = seeded(60)
    for _ in run.steps():
        x = torch.randn(p["batch"], p["features"], generator=g).to(run.device)
        y = torch.randn(p["batch"], 1, generator=g).to(run.device)
        loss = nn.functional.mse_loss(model(x), y)
        loss.backward(create_graph=True)
        penalty = sum(q.grad.pow(2).sum() for q in model.parameters())
        with torch.no_grad():
            for q in model.parameters():
                q -= p["lr"] * q.grad
                if bad:
                    q.grad.zero_()
                else:
                    q.grad = None
        run.checksum(loss.item() + penalty.item())
