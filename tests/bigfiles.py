"""Generators of big and degenerate Python sources, for the scaling tests
(tests/scaling_tests.py) and for finding super-linear paths by hand:

    python3 tests/bigfiles.py KIND MEGABYTES OUT.py

Every generator is deterministic and returns text of about the size asked
for. Kinds:
  training     many modules, training and evaluation functions, classes: the
               shape of real training code, repeated with fresh names
  one_function the same statements, all inside one giant function
  module_level the same statements at module level (one scope, few names
               bound many times)
  expression   one giant expression (a list of calls)
  imports      import statements only (100,000 of them in 3 MB)
  autocast     deprecated autocast import/use pairs (OOM502's fix)
  torch_load   torch.load calls without map_location (OOM302)
  nested_calls calls nested in arguments, a few hundred deep, repeated
"""
import sys

TRAINING = '''import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.cuda.amp import autocast, GradScaler


class Net{i}(nn.Module):
    def __init__(self, width=64):
        super().__init__()
        self.fc1 = nn.Linear(width, width)
        self.fc2 = nn.Linear(width, 10)

    def forward(self, x):
        return self.fc2(F.relu(self.fc1(x)))


def train_{i}(model, loader, optimizer, device):
    criterion = nn.CrossEntropyLoss()
    scaler = GradScaler()
    total = 0
    losses = []
    model.train()
    for step, (x, y) in enumerate(loader):
        x, y = x.to(device), y.to(device)
        optimizer.zero_grad()
        with autocast():
            out = model(x)
            loss = criterion(out, y)
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
        total += loss
        losses.append(loss)
        if step % 10 == 0:
            print(step, total / (step + 1))
    return total


def evaluate_{i}(model, val_loader):
    model.eval()
    correct = 0
    for x, y in val_loader:
        pred = model(x).argmax(1)
        correct += (pred == y).sum().item()
    state = torch.load("ckpt_{i}.pt")
    return correct, state

'''


def repeat(template, megabytes, indent=""):
    size = int(megabytes * 1e6)
    parts, total, i = [], 0, 0
    while total < size:
        block = template.format(i=i)
        if indent:
            block = "".join(indent + line if line.strip() else line for line in block.splitlines(True))
        parts.append(block)
        total += len(block)
        i += 1
    return "".join(parts)


def training(mb):
    return repeat(TRAINING, mb)


def one_function(mb):
    body = repeat(TRAINING.replace("class Net{i}(nn.Module):", "class Net{i}:"), mb, "    ")
    return "import torch\n\n\ndef main(model, loader, val_loader, optimizer, device):\n" + body


def module_level(mb):
    stmt = ("x, y = next(it)\nout = model(x)\nloss = criterion(out, y)\nloss.backward()\noptimizer.step()\n"
            "total += loss\nlosses.append(out)\nstate = torch.load(path)\nbuf = torch.zeros(4).cuda()\n")
    head = ("import torch\nimport torch.nn as nn\nmodel = nn.Linear(4, 2).cuda()\ncriterion = nn.MSELoss()\n"
            "optimizer = torch.optim.SGD(model.parameters(), lr=0.1)\ntotal = 0\nlosses = []\n")
    return head + "for epoch in range(10):\n" + repeat("    " + stmt.replace("\n", "\n    ")[:-4], mb)


def expression(mb):
    item = "f(a, b), "
    return "x = [" + item * int(mb * 1e6 / len(item)) + "]\n"


def imports(mb):
    return repeat("import pkg{i}\nfrom torch import name{i}\n", mb)


def autocast(mb):
    return repeat("from torch.cuda.amp import autocast\nwith autocast():\n    y{i} = f(x)\n", mb)


def torch_load(mb):
    return "import torch\n" + repeat("s{i} = torch.load('m{i}.pt')\n", mb)


def nested_calls(mb):
    depth = 300
    return repeat("y{i} = " + "f(" * depth + "x" + ")" * depth + "\n", mb)


KINDS = {f.__name__: f for f in (training, one_function, module_level, expression, imports, autocast,
                                 torch_load, nested_calls)}


def main():
    kind, mb, out = sys.argv[1], float(sys.argv[2]), sys.argv[3]
    with open(out, "w") as f:
        f.write(KINDS[kind](mb))


if __name__ == "__main__":
    main()
