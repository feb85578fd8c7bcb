"""Models and data the scenarios share: a small MLP, a small CNN, a
transformer block and a recurrent language model, with batches drawn from a
seeded generator (a fresh tensor per batch, as a DataLoader yields them).

Sizes come from the scenario's parameters; the byte formulas beside the
models say what autograd saves for them, which scenarios use as their scale.
"""
import contextlib

import torch
from torch import nn

F32 = 4


def seeded(seed):
    g = torch.Generator()
    g.manual_seed(seed)
    return g


def mlp(p, act=nn.ReLU):
    """in -> hidden -> hidden -> classes, with `act` between."""
    torch.manual_seed(1)
    return nn.Sequential(nn.Linear(p["features"], p["hidden"]), act(), nn.Linear(p["hidden"], p["hidden"]), act(),
                         nn.Linear(p["hidden"], p["classes"]))


def mlp_saved_bytes(p):
    """Bytes one training step of mlp() saves for backward (float32): the
    input, each hidden activation once (ReLU's result is the next Linear's
    input: one storage), the log-softmax output and the int64 targets."""
    b = p["batch"]
    return F32 * b * (p["features"] + 2 * p["hidden"] + p["classes"]) + 8 * b


def mlp_param_bytes(p):
    f, h, c = p["features"], p["hidden"], p["classes"]
    return F32 * (f * h + h + h * h + h + h * c + c)


def classification_batch(g, p, device):
    x = torch.randn(p["batch"], p["features"], generator=g)
    y = torch.randint(p["classes"], (p["batch"],), generator=g)
    return x.to(device), y.to(device)


class SmallCNN(nn.Module):
    def __init__(self, p):
        super().__init__()
        torch.manual_seed(2)
        c = p["channels"]
        self.features = nn.Sequential(
            nn.Conv2d(3, c, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(c, 2 * c, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1))
        self.head = nn.Linear(2 * c, p["classes"])

    def forward(self, x):
        return self.head(torch.flatten(self.features(x), 1))


def image_batch(g, p, device):
    s = p["image"]
    x = torch.randn(p["batch"], 3, s, s, generator=g)
    y = torch.randint(p["classes"], (p["batch"],), generator=g)
    return x.to(device), y.to(device)


def cnn_first_activation_bytes(p):
    """The first convolution's ReLU output: the largest tensor a forward saves."""
    return F32 * p["batch"] * p["channels"] * p["image"] * p["image"]


class TinyLM(nn.Module):
    """Embedding -> an Elman RNN cell unrolled over the sequence -> vocabulary
    logits: the shape of a word-level language model trained with truncated
    backpropagation through time."""

    def __init__(self, p):
        super().__init__()
        torch.manual_seed(3)
        self.embed = nn.Embedding(p["vocab"], p["embed"])
        self.cell = nn.RNNCell(p["embed"], p["hidden"])
        self.out = nn.Linear(p["hidden"], p["vocab"])

    def forward(self, tokens, hidden):
        xs = self.embed(tokens)            # (T, B, E)
        outs = []
        for t in range(xs.shape[0]):
            hidden = self.cell(xs[t], hidden)
            outs.append(hidden)
        return self.out(torch.stack(outs)), hidden


def lm_recurrent_bytes(p):
    """What the recurrent part of one TinyLM batch saves: the embedded inputs
    (one storage the cell's input slices share), each step's tanh state and the
    int64 token ids. A state carried without detach() keeps exactly this part
    of every batch reachable (the output layer's graph hangs off the loss,
    which is dropped each batch)."""
    t, b = p["seq"], p["batch"]
    return F32 * t * b * (p["embed"] + p["hidden"]) + 8 * t * b


def token_batch(g, p, device):
    tokens = torch.randint(p["vocab"], (p["seq"] + 1, p["batch"]), generator=g)
    return tokens[:-1].to(device), tokens[1:].to(device)


class Block(nn.Module):
    """A pre-norm transformer encoder block over (batch, seq, dim)."""

    def __init__(self, p):
        super().__init__()
        torch.manual_seed(4)
        d = p["dim"]
        self.norm1 = nn.LayerNorm(d)
        self.attn = nn.MultiheadAttention(d, p["heads"], batch_first=True)
        self.norm2 = nn.LayerNorm(d)
        self.ff = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))
        self.head = nn.Linear(d, p["classes"])

    def forward(self, x):
        h = self.norm1(x)
        x = x + self.attn(h, h, h, need_weights=False)[0]
        x = x + self.ff(self.norm2(x))
        return self.head(x.mean(dim=1))


def sequence_batch(g, p, device):
    x = torch.randn(p["batch"], p["seq"], p["dim"], generator=g)
    y = torch.randint(p["classes"], (p["batch"],), generator=g)
    return x.to(device), y.to(device)


def block_activation_bytes(p):
    """One (batch, seq, 4*dim) feed-forward activation: the block's largest."""
    return F32 * p["batch"] * p["seq"] * 4 * p["dim"]


def autocast(device, enabled, dtype=None):
    """torch.autocast for the device; torch 1.13's CPU autocast knows only
    bfloat16, so a float16 request on the CPU runs without autocast."""
    if dtype is None:
        dtype = torch.float16
    if device != "cuda" and dtype != torch.bfloat16:
        enabled = False
    if not enabled:
        # torch 1.13 checks the dtype even for a disabled CPU autocast
        return contextlib.nullcontext()
    return torch.autocast(device_type=device, dtype=dtype, enabled=True)


def grad_scaler(device, enabled=True):
    """torch.amp.GradScaler where it exists (2.3+), else torch.cuda.amp's;
    disabled off CUDA, where it would only warn."""
    enabled = enabled and device == "cuda"
    amp = getattr(torch, "amp", None)
    if amp is not None and hasattr(amp, "GradScaler"):
        try:
            return amp.GradScaler(device, enabled=enabled)
        except TypeError:
            pass
    return torch.cuda.amp.GradScaler(enabled=enabled)
