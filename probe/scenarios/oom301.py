"""OOM301 dataset-moved-to-device: the whole dataset copied to the GPU
before the loop occupies device memory for the whole run."""
import torch
from torch import nn

from . import scenario
from .common import F32, mlp, seeded

DATA = dict(samples=4096, batch=64, features=256, hidden=512, classes=10)
DATA_CUDA = dict(samples=131072, batch=256, features=1024, hidden=1024, classes=10)


def dataset_bytes(p):
    return F32 * p["samples"] * p["features"]


@scenario("OOM301", "dataset", claims=("peak",), sizes=DATA, cuda_sizes=DATA_CUDA, scale=dataset_bytes,
          gpu_only=True,
          summary="X_train.to(device) before the batch loop (fixed: each batch moved as it is used)")
def dataset(run, bad):
    p = run.params
    g = seeded(80)
    features = torch.randn(p["samples"], p["features"], generator=g)
    labels = torch.randint(p["classes"], (p["samples"],), generator=g)
    if bad:
        features = features.to(run.device)
        labels = labels.to(run.device)
    model = mlp(p).to(run.device)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    crit = nn.CrossEntropyLoss()
    run.track(model)
    n_batches = p["samples"] // p["batch"]
    for i in run.steps():
        k = i % n_batches
        x = features[k * p["batch"]:(k + 1) * p["batch"]].to(run.device)
        y = labels[k * p["batch"]:(k + 1) * p["batch"]].to(run.device)
        opt.zero_grad()
        loss = crit(model(x), y)
        loss.backward()
        opt.step()
        run.checksum(loss)
