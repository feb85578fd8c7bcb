# A script without functions: its top-level loop sums the loss with its
# graph (OOM101). The log beside it is written from PyTorch's format strings.
import torch
import torch.nn as nn

model = nn.Linear(8192, 8192).cuda()
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
data = torch.randn(100000, 8192).cuda()

running = 0
for epoch in range(3):
    for i in range(0, len(data), 512):
        x = data[i:i + 512]
        loss = model(x).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        running += loss
    print(epoch, running)
