"""OOM302 torch-load-without-map-location: a checkpoint saved from GPU
tensors is restored onto the GPU, beside the model it is loaded into."""
import os
import tempfile

import torch
from torch import nn

from . import scenario
from .common import classification_batch, mlp, mlp_param_bytes, seeded

MLP = dict(batch=64, features=256, hidden=512, classes=10)
MLP_CUDA = dict(batch=256, features=1024, hidden=4096, classes=10)


@scenario("OOM302", "resume", claims=("peak",), sizes=MLP, cuda_sizes=MLP_CUDA, scale=mlp_param_bytes,
          gpu_only=True,
          summary="checkpoint = torch.load(path) then load_state_dict, each step resumes "
                  "(fixed: map_location=\"cpu\")")
def resume(run, bad):
    p = run.params
    model = mlp(p).to(run.device)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    crit = nn.CrossEntropyLoss()
    run.track(model)
    g = seeded(90)
    fd, path = tempfile.mkstemp(prefix="oomlint-probe-", suffix=".pt")
    os.close(fd)
    try:
        torch.save(model.state_dict(), path)
        for _ in run.steps():
            checkpoint = torch.load(path) if bad else torch.load(path, map_location="cpu")
            model.load_state_dict(checkpoint)
            x, y = classification_batch(g, p, run.device)
            opt.zero_grad()
            loss = crit(model(x), y)
            loss.backward()
            opt.step()
            run.checksum(loss)
    finally:
        os.unlink(path)
