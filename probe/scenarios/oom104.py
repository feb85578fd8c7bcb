"""OOM104 oom-recovery-inside-except: retrying inside the `except` keeps the
failed attempt's frames, activations and graph alive during the retry.

The out-of-memory error is simulated (a module raises the same RuntimeError
past a batch-size budget) so that the scenario is deterministic and safe on
any device; what it measures is what the live traceback keeps."""
import torch
from torch import nn

from . import scenario
from .common import F32, classification_batch, seeded

MLP = dict(batch=128, features=256, hidden=512, classes=10, budget=64)
MLP_CUDA = dict(batch=512, features=1024, hidden=4096, classes=10, budget=256)


class Budget(nn.Module):
    """Raises CUDA's out-of-memory error for batches over the budget."""

    def __init__(self, budget):
        super().__init__()
        self.budget = budget

    def forward(self, x):
        if x.shape[0] > self.budget:
            raise RuntimeError("CUDA out of memory. Tried to allocate 2.00 GiB (simulated by oomlint probe)")
        return x


def model_for(p):
    torch.manual_seed(5)
    return nn.Sequential(nn.Linear(p["features"], p["hidden"]), nn.ReLU(), nn.Linear(p["hidden"], p["hidden"]),
                         nn.ReLU(), Budget(p["budget"]), nn.Linear(p["hidden"], p["classes"]))


def failed_attempt_bytes(p):
    """What the failed attempt had saved when it raised: the input and the two
    hidden activations of the full batch."""
    return F32 * p["batch"] * (p["features"] + 2 * p["hidden"])


@scenario("OOM104", "retry", claims=("peak",), sizes=MLP, cuda_sizes=MLP_CUDA, scale=failed_attempt_bytes,
          summary="retrying with half batches inside `except RuntimeError` (fixed: set a flag, retry after)",
          note="the out-of-memory error is simulated")
def retry(run, bad):
    p = run.params
    model = model_for(p).to(run.device)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    crit = nn.CrossEntropyLoss()
    run.track(model)
    g = seeded(40)

    def step(x, y):
        loss = crit(model(x), y)
        loss.backward()
        return loss.item()

    def halves(x, y):
        half = x.shape[0] // 2
        return step(x[:half], y[:half]) + step(x[half:], y[half:])

    for _ in run.steps():
        x, y = classification_batch(g, p, run.device)
        opt.zero_grad()
        oom = False
        total = None
        try:
            total = step(x, y)
        except RuntimeError:
            if bad:
                total = halves(x, y)
            else:
                oom = True
        if oom:
            total = halves(x, y)
        opt.step()
        run.checksum(total)
