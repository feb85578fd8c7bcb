# A training loop whose step grows: every iteration's output is kept with its
# autograd graph (OOM102), so the job dies in backward at step 450. The logs
# beside it are written from PyTorch's format strings, not recorded on a GPU.
import torch
import torch.nn as nn


def evaluate(model, loader):
    model.eval()
    preds = []
    for x, _ in loader:
        preds.append(model(x.cuda()).argmax(1))
    return torch.cat(preds)


def train(model, loader, optimizer):
    model.train()
    outputs = []
    for step, (x, y) in enumerate(loader):
        out = model(x.cuda())
        outputs.append(out)
        loss = nn.functional.cross_entropy(out, y.cuda())
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    return outputs


def main():
    model = nn.Sequential(nn.Linear(4096, 4096), nn.ReLU(), nn.Linear(4096, 1000)).cuda()
    optimizer = torch.optim.Adam(model.parameters())
    loader = [(torch.randn(256, 4096), torch.randint(0, 1000, (256,))) for _ in range(1000)]
    train(model, loader, optimizer)
    evaluate(model, loader)


if __name__ == "__main__":
    main()
