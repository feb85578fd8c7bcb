"""OOM201 eval-without-no-grad: a forward pass in evaluation code records a
graph and saves its activations, though nothing will call backward."""
import torch

from . import scenario
from .common import SmallCNN, cnn_first_activation_bytes, image_batch, seeded

CNN = dict(batch=32, image=32, channels=16, classes=10)
CNN_CUDA = dict(batch=256, image=64, channels=64, classes=10)


@scenario("OOM201", "eval", claims=("peak", "time"), sizes=CNN, cuda_sizes=CNN_CUDA,
          scale=cnn_first_activation_bytes,
          summary="CNN evaluation loop computing accuracy without no_grad (fixed: torch.no_grad())")
def evaluate(run, bad):
    p = run.params
    model = SmallCNN(p).to(run.device)
    model.eval()
    run.track(model)
    g = seeded(70)
    correct = 0
    for _ in run.steps():
        x, y = image_batch(g, p, run.device)
        if bad:
            out = model(x)
        else:
            with torch.no_grad():
                out = model(x)
        correct += int((out.argmax(dim=1) == y).sum())
        run.checksum(float(out.detach().double().sum()) + correct)
