"""OOM105 hidden-state-carried-across-batches: the recurrent state passed on
without .detach() chains every batch's graph to the next."""
import torch
from torch import nn

from . import scenario
from .common import TinyLM, lm_recurrent_bytes, seeded, token_batch

LM = dict(batch=16, seq=16, vocab=256, embed=64, hidden=128)
LM_CUDA = dict(batch=64, seq=32, vocab=8192, embed=512, hidden=1024)


@scenario("OOM105", "lm", claims=("growth",), sizes=LM, cuda_sizes=LM_CUDA, scale=lm_recurrent_bytes,
          summary="language model passing `hidden` on without .detach(), backward(retain_graph=True) "
                  "(fixed: hidden.detach(), plain backward)",
          note="no optimizer step, so both variants see the same weights: the fix changes which "
               "gradients flow (truncated backpropagation), the checksums compare the losses")
def lm(run, bad):
    p = run.params
    model = TinyLM(p).to(run.device)
    crit = nn.CrossEntropyLoss()
    run.track(model)
    g = seeded(50)
    hidden = torch.zeros(p["batch"], p["hidden"], device=run.device)
    for _ in run.steps():
        tokens, targets = token_batch(g, p, run.device)
        if not bad:
            hidden = hidden.detach()
        model.zero_grad(set_to_none=True)
        logits, hidden = model(tokens, hidden)
        loss = crit(logits.reshape(-1, p["vocab"]), targets.reshape(-1))
        loss.backward(retain_graph=bad)
        run.checksum(loss)
