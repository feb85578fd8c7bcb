"""OOM503 backward-inside-autocast: backward run inside the autocast block."""
import torch
from torch import nn

from . import scenario
from .common import Block, autocast, block_activation_bytes, grad_scaler, seeded, sequence_batch

BLOCK = dict(batch=8, seq=64, dim=64, heads=4, classes=10)
BLOCK_CUDA = dict(batch=32, seq=512, dim=1024, heads=16, classes=10)


@scenario("OOM503", "transformer", claims=("peak", "time"), sizes=BLOCK, cuda_sizes=BLOCK_CUDA,
          scale=block_activation_bytes, gpu_only=True, rtol=1e-3,
          summary="float16 autocast with scaler.scale(loss).backward() inside the `with` block "
                  "(fixed: backward after it)")
def transformer(run, bad):
    p = run.params
    model = Block(p).to(run.device)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    crit = nn.CrossEntropyLoss()
    run.track(model)
    scaler = grad_scaler(run.device)
    g = seeded(130)
    for _ in run.steps():
        x, y = sequence_batch(g, p, run.device)
        opt.zero_grad(set_to_none=True)
        with autocast(run.device, enabled=True, dtype=torch.float16):
            loss = crit(model(x), y)
            if bad:
                scaler.scale(loss).backward()
        if not bad:
            scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()
        run.checksum(loss.float())
