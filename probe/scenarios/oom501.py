"""OOM501 no-mixed-precision: a CUDA training loop in float32 keeps twice the
activation memory of autocast and leaves the tensor cores idle."""
import torch
from torch import nn

from . import scenario
from .common import Block, autocast, block_activation_bytes, grad_scaler, seeded, sequence_batch

BLOCK = dict(batch=8, seq=64, dim=64, heads=4, classes=10)
BLOCK_CUDA = dict(batch=32, seq=512, dim=1024, heads=16, classes=10)


def amp_dtype(device):
    if device == "cuda" and torch.cuda.is_bf16_supported():
        return torch.bfloat16
    return torch.float16


@scenario("OOM501", "transformer", claims=("peak", "time"), sizes=BLOCK, cuda_sizes=BLOCK_CUDA,
          scale=block_activation_bytes, gpu_only=True, rtol=0.05,
          summary="transformer block trained in float32 (fixed: autocast, bfloat16 where the GPU has it, "
                  "else float16 with a GradScaler)")
def transformer(run, bad):
    p = run.params
    model = Block(p).to(run.device)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    crit = nn.CrossEntropyLoss()
    run.track(model)
    dtype = amp_dtype(run.device)
    scaler = grad_scaler(run.device, enabled=not bad and dtype == torch.float16)
    g = seeded(120)
    for _ in run.steps():
        x, y = sequence_batch(g, p, run.device)
        opt.zero_grad(set_to_none=True)
        with autocast(run.device, enabled=not bad, dtype=dtype):
            loss = crit(model(x), y)
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()
        run.checksum(loss.float())
