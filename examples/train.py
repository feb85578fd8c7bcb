"""A small image-classification training script with the memory mistakes
oomlint exists to catch. Run `make demo` (or `oomlint examples/`) to see them;
`oomlint --diff examples/` shows the safe fixes."""
import torch
import torch.nn as nn
from torch.cuda.amp import autocast, GradScaler
from torch.utils.data import DataLoader, TensorDataset


class SmallNet(nn.Module):
    def __init__(self, classes=10):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(32, 64, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1),
        )
        self.head = nn.Linear(64, classes)

    def forward(self, x):
        return self.head(self.features(x).flatten(1))


def train(model, loader, optimizer, scaler, device):
    criterion = nn.CrossEntropyLoss()
    model.train()
    total_loss = 0.0
    correct = 0
    for step, (images, labels) in enumerate(loader):
        images, labels = images.to(device), labels.to(device)
        optimizer.zero_grad()
        with autocast():
            logits = model(images)
            loss = criterion(logits, labels)
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
        total_loss += loss
        correct += (logits.argmax(1) == labels).sum().item()
    return total_loss / len(loader), correct


def main():
    device = "cuda"
    data = TensorDataset(torch.randn(512, 3, 32, 32), torch.randint(0, 10, (512,)))
    loader = DataLoader(data, batch_size=64, shuffle=True)
    model = SmallNet().to(device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    scaler = GradScaler()
    for epoch in range(3):
        loss, correct = train(model, loader, optimizer, scaler, device)
        print(f"epoch {epoch}: loss {loss:.3f}, {correct} correct")


if __name__ == "__main__":
    main()
