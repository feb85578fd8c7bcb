"""OOM504 fp16-without-grad-scaler: float16 autocast with no GradScaler, so
small gradients underflow to zero in float16."""
import torch
from torch import nn

from . import scenario
from .common import autocast, grad_scaler, seeded

NET = dict(batch=64, features=128, hidden=256, noise=1e-3)
NET_CUDA = dict(batch=1024, features=1024, hidden=4096, noise=1e-3)


def gradient_bytes(p):
    return 4 * (p["features"] * p["hidden"] + p["hidden"] * p["hidden"])


@scenario("OOM504", "finetune", claims=("underflow",), sizes=NET, cuda_sizes=NET_CUDA, scale=gradient_bytes,
          gpu_only=True, rtol=1e-3,
          summary="float16 autocast near convergence without a GradScaler (fixed: GradScaler); "
                  "measures the share of gradient entries that are exactly zero",
          note="the learning rate is 0 so that both variants see the same weights; the cost is lost "
               "gradient, not memory")
def finetune(run, bad):
    p = run.params
    torch.manual_seed(7)
    model = nn.Sequential(nn.Linear(p["features"], p["hidden"]), nn.ReLU(), nn.Linear(p["hidden"], p["hidden"]),
                          nn.ReLU(), nn.Linear(p["hidden"], 1)).to(run.device)
    opt = torch.optim.SGD(model.parameters(), lr=0.0)
    run.track(model)
    scaler = grad_scaler(run.device, enabled=not bad)
    g = seeded(140)
    for _ in run.steps():
        x = torch.randn(p["batch"], p["features"], generator=g).to(run.device)
        with torch.no_grad():
            target = model(x) + p["noise"] * torch.randn(p["batch"], 1, generator=g).to(run.device)
        opt.zero_grad(set_to_none=True)
        with autocast(run.device, enabled=True, dtype=torch.float16):
            loss = nn.functional.mse_loss(model(x).float(), target)
        scaler.scale(loss).backward()
        scaler.unscale_(opt)
        grads = [q.grad for q in model.parameters() if q.grad is not None and q.dim() > 1]
        zeros = sum(int((gr == 0).sum()) for gr in grads)
        total = sum(gr.numel() for gr in grads)
        run.metric("zero_grad_fraction", zeros / max(total, 1))
        scaler.step(opt)
        scaler.update()
        run.checksum(loss)
