"""OOM705 anomaly-detection-left-on: set_detect_anomaly(True) records a
Python traceback for every autograd node and checks every backward result."""
import torch
from torch import nn

from . import scenario
from .common import Block, block_activation_bytes, seeded, sequence_batch

BLOCK = dict(batch=4, seq=16, dim=32, heads=4, classes=10)
BLOCK_CUDA = dict(batch=32, seq=512, dim=1024, heads=16, classes=10)


@scenario("OOM705", "transformer", claims=("time",), sizes=BLOCK, cuda_sizes=BLOCK_CUDA,
          scale=block_activation_bytes,
          summary="transformer block training with torch.autograd.set_detect_anomaly(True) "
                  "(fixed: anomaly detection off)")
def transformer(run, bad):
    p = run.params
    model = Block(p).to(run.device)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    crit = nn.CrossEntropyLoss()
    run.track(model)
    g = seeded(180)
    torch.autograd.set_detect_anomaly(bad)
    try:
        for _ in run.steps():
            x, y = sequence_batch(g, p, run.device)
            opt.zero_grad(set_to_none=True)
            loss = crit(model(x), y)
            loss.backward()
            opt.step()
            run.checksum(loss)
    finally:
        torch.autograd.set_detect_anomaly(False)
