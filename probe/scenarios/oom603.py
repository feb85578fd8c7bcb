"""OOM603 zero-grad-keeps-grad-memory: zero_grad(set_to_none=False) keeps a
zero-filled gradient per parameter alive through the next forward pass."""
import torch
from torch import nn

from . import scenario
from .common import classification_batch, mlp, mlp_param_bytes, seeded

# a batch whose activations are of the order of the parameters: the saving is
# whichever of the two is smaller (the zero-filled gradients overlap the forward)
MLP = dict(batch=256, features=256, hidden=512, classes=10)
MLP_CUDA = dict(batch=4096, features=1024, hidden=8192, classes=10)


@scenario("OOM603", "train", claims=("peak",), sizes=MLP, cuda_sizes=MLP_CUDA, scale=mlp_param_bytes,
          summary="training step with optimizer.zero_grad(set_to_none=False) "
                  "(fixed: set_to_none=True, the default since torch 2.0)")
def train(run, bad):
    p = run.params
    model = mlp(p).to(run.device)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    crit = nn.CrossEntropyLoss()
    run.track(model)
    g = seeded(150)
    for _ in run.steps():
        x, y = classification_batch(g, p, run.device)
        opt.zero_grad(set_to_none=not bad)
        loss = crit(model(x), y)
        loss.backward()
        opt.step()
        run.checksum(loss)
