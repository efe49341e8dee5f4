"""A small CNN in the pattern of pytorch/examples' mnist (convolutions, batch norm, max
pooling, dropout, log-softmax, Adadelta with a step scheduler) on a synthetic, learnable
dataset: the training loss falls and the test accuracy rises well above chance."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

device = torch.accelerator.current_accelerator()


class Net(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(1, 8, 3, 1)
        self.bn = nn.BatchNorm2d(8)
        self.conv2 = nn.Conv2d(8, 16, 3, 1)
        self.dropout = nn.Dropout(0.25)
        self.fc = nn.Linear(16 * 5 * 5, 4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = F.relu(self.bn(self.conv1(x)))
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        return F.log_softmax(self.fc(torch.flatten(self.dropout(x), 1)), dim=1)


def batches(count: int, generator: torch.Generator) -> list[tuple[torch.Tensor, torch.Tensor]]:
    """Images whose class is the quadrant holding a bright square, with noise."""
    out = []
    for _ in range(count):
        labels = torch.randint(0, 4, (32,), generator=generator)
        images = torch.randn(32, 1, 14, 14, generator=generator) * 0.3
        for i, label in enumerate(labels.tolist()):
            r, c = divmod(label, 2)
            images[i, 0, r * 7 + 2 : r * 7 + 5, c * 7 + 2 : c * 7 + 5] += 2.0
        out.append((images.to(device), labels.to(device)))
    return out


if __name__ == "__main__":
    torch.manual_seed(0)
    generator = torch.Generator().manual_seed(0)
    model = Net().to(device)
    optimizer = torch.optim.Adadelta(model.parameters(), lr=1.0)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=1, gamma=0.7)
    train, test = batches(30, generator), batches(4, generator)
    losses = []
    for _epoch in range(2):
        model.train()
        for x, y in train:
            optimizer.zero_grad()
            loss = F.nll_loss(model(x), y)
            loss.backward()
            optimizer.step()
            losses.append(loss.item())
        scheduler.step()
    model.eval()
    with torch.no_grad():
        correct = sum((model(x).argmax(1) == y).sum().item() for x, y in test)
    accuracy = correct / (4 * 32)
    assert sum(losses[-5:]) < 0.3 * sum(losses[:5]), losses
    assert accuracy > 0.9, accuracy
    summary = f"loss {losses[0]:.3f} -> {losses[-1]:.3f}, accuracy {accuracy:.2f}"
    print(f"cnn: ok on {device} ({summary})")
