"""OOM701 empty-cache-in-loop: torch.cuda.empty_cache() every batch hands the
allocator's cached blocks back to the driver, and the next step asks again."""
import torch
from torch import nn

from . import scenario
from .common import Block, block_activation_bytes, seeded, sequence_batch

BLOCK = dict(batch=8, seq=64, dim=64, heads=4, classes=10)
BLOCK_CUDA = dict(batch=32, seq=512, dim=1024, heads=16, classes=10)


@scenario("OOM701", "transformer", claims=("time",), sizes=BLOCK, cuda_sizes=BLOCK_CUDA,
          scale=block_activation_bytes, gpu_only=True,
          summary="training loop calling torch.cuda.empty_cache() after every step (fixed: no call)")
def transformer(run, bad):
    p = run.params
    model = Block(p).to(run.device)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    crit = nn.CrossEntropyLoss()
    run.track(model)
    g = seeded(160)
    for _ in run.steps():
        x, y = sequence_batch(g, p, run.device)
        opt.zero_grad(set_to_none=True)
        loss = crit(model(x), y)
        loss.backward()
        opt.step()
        if bad:
            torch.cuda.empty_cache()
        run.checksum(loss)
