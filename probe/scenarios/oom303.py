"""OOM303 tensor-built-then-moved: torch.ones(...).to(device) fills a host
tensor and copies it over, where device= builds it in place."""
import torch

from . import scenario
from .common import F32, Block, seeded, sequence_batch

BLOCK = dict(batch=8, seq=64, dim=64, heads=4, classes=10)
BLOCK_CUDA = dict(batch=16, seq=1024, dim=512, heads=8, classes=10)


def mask_bytes(p):
    return F32 * p["batch"] * p["heads"] * p["seq"] * p["seq"]


@scenario("OOM303", "mask", claims=("time", "host_peak"), sizes=BLOCK, cuda_sizes=BLOCK_CUDA, scale=mask_bytes,
          gpu_only=True,
          summary="an attention bias built with torch.zeros(...).to(device) every step "
                  "(fixed: torch.zeros(..., device=device))")
def mask(run, bad):
    p = run.params
    model = Block(p).to(run.device)
    run.track(model)
    g = seeded(100)
    b, s, h = p["batch"], p["seq"], p["heads"]
    with torch.no_grad():
        for _ in run.steps():
            x, _y = sequence_batch(g, p, run.device)
            if bad:
                bias = torch.zeros(b * h, s, s).to(run.device)
            else:
                bias = torch.zeros(b * h, s, s, device=run.device)
            hx = model.norm1(x)
            out = model.attn(hx, hx, hx, attn_mask=bias, need_weights=False)[0]
            run.checksum(out)
