"""OOM401 non-inplace-op: `x = x * s + b` under no_grad allocates a new
tensor for every operation while the old one is still alive."""
import torch

from . import scenario
from .common import F32, seeded

BUF = dict(rows=2048, cols=2048)
BUF_CUDA = dict(rows=8192, cols=8192)


def buffer_bytes(p):
    return F32 * p["rows"] * p["cols"]


@scenario("OOM401", "normalize", claims=("peak",), sizes=BUF, cuda_sizes=BUF_CUDA, scale=buffer_bytes,
          summary="feature normalisation under no_grad: x = (x - mean) * scale (fixed: x -= mean; x *= scale)",
          note="on the CPU the peak is the process's resident peak (VmHWM)")
def normalize(run, bad):
    p = run.params
    g = seeded(110)
    mean = torch.randn(p["cols"], generator=g).to(run.device)
    scale = torch.rand(p["cols"], generator=g).to(run.device) + 0.5
    with torch.no_grad():
        for _ in run.steps():
            x = torch.randn(p["rows"], p["cols"], generator=g).to(run.device)
            if bad:
                x = x - mean
                x = x * scale
            else:
                x -= mean
                x *= scale
            run.checksum(x)
            del x
