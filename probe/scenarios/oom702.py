"""OOM702 data-parallel: nn.DataParallel replicates the model and gathers
every output on the first GPU each step."""
import torch
from torch import nn

from . import scenario
from .common import SmallCNN, cnn_first_activation_bytes, image_batch, seeded

CNN = dict(batch=32, image=32, channels=16, classes=10)
CNN_CUDA = dict(batch=256, image=64, channels=64, classes=10)


@scenario("OOM702", "cnn", claims=("peak", "time"), sizes=CNN, cuda_sizes=CNN_CUDA,
          scale=cnn_first_activation_bytes, gpu_only=True,
          summary="CNN training through nn.DataParallel(model) (fixed: the model itself; "
                  "DistributedDataParallel for several GPUs)",
          note="with one GPU DataParallel adds only its scatter/gather; the imbalance it is known for "
               "needs several GPUs")
def cnn(run, bad):
    p = run.params
    model = SmallCNN(p).to(run.device)
    net = nn.DataParallel(model) if bad else model
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    crit = nn.CrossEntropyLoss()
    run.track(model)
    g = seeded(170)
    for _ in run.steps():
        x, y = image_batch(g, p, run.device)
        opt.zero_grad(set_to_none=True)
        loss = crit(net(x), y)
        loss.backward()
        opt.step()
        run.checksum(loss)
