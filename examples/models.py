"""The two models the demo trains and the benchmark times: a multilayer perceptron and a small
transformer encoder block, both ending in a classifier trained with cross-entropy.

Everything they run (linear layers, relu, gelu, embedding, layer_norm, softmax, dropout,
residual adds, cross-entropy) has a native kernel in emu, forward and backward.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn


class MLP(nn.Module):
    """Three linear layers with relu: [batch, features] -> [batch, classes] logits."""

    def __init__(self, features: int = 64, hidden: int = 128, classes: int = 10) -> None:
        super().__init__()
        self.fc1 = nn.Linear(features, hidden)
        self.fc2 = nn.Linear(hidden, hidden)
        self.out = nn.Linear(hidden, classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.out(F.relu(self.fc2(F.relu(self.fc1(x)))))


class EncoderBlock(nn.Module):
    """Token embedding, one post-norm transformer encoder block (multi-head self-attention and
    a gelu feed-forward, each with dropout and a residual connection), mean pooling and a
    classifier: [batch, tokens] int64 -> [batch, classes] logits."""

    def __init__(
        self,
        vocabulary: int = 100,
        width: int = 64,
        heads: int = 4,
        feed_forward: int = 128,
        classes: int = 10,
        dropout: float = 0.1,
    ) -> None:
        super().__init__()
        self.embedding = nn.Embedding(vocabulary, width)
        self.qkv = nn.Linear(width, 3 * width)
        self.projection = nn.Linear(width, width)
        self.norm1 = nn.LayerNorm(width)
        self.norm2 = nn.LayerNorm(width)
        self.ff1 = nn.Linear(width, feed_forward)
        self.ff2 = nn.Linear(feed_forward, width)
        self.classifier = nn.Linear(width, classes)
        self.heads = heads
        self.dropout = dropout

    def _split_heads(self, x: torch.Tensor) -> torch.Tensor:
        batch, tokens, width = x.shape
        x = x.reshape(batch, tokens, self.heads, width // self.heads).transpose(1, 2)
        return x.reshape(batch * self.heads, tokens, width // self.heads)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        x = self.embedding(tokens)
        batch, length, width = x.shape
        q, k, v = (self._split_heads(t) for t in self.qkv(x).chunk(3, dim=-1))
        scores = torch.bmm(q, k.transpose(1, 2)) / math.sqrt(width // self.heads)
        attention = F.dropout(F.softmax(scores, dim=-1), self.dropout, self.training)
        y = torch.bmm(attention, v).reshape(batch, self.heads, length, width // self.heads)
        y = y.transpose(1, 2).reshape(batch, length, width)
        x = self.norm1(x + F.dropout(self.projection(y), self.dropout, self.training))
        hidden = F.gelu(self.ff1(x))
        x = self.norm2(x + F.dropout(self.ff2(hidden), self.dropout, self.training))
        return self.classifier(x.mean(dim=1))


def batches(model: str, count: int, seed: int = 1) -> list[tuple[torch.Tensor, torch.Tensor]]:
    """`count` fixed (input, target) CPU batches for "mlp" or "encoder"."""
    generator = torch.Generator().manual_seed(seed)
    data = []
    for _ in range(count):
        if model == "mlp":
            x = torch.randn(32, 64, generator=generator)
        else:
            x = torch.randint(0, 100, (8, 16), generator=generator)
        data.append((x, torch.randint(0, 10, (x.shape[0],), generator=generator)))
    return data


def build(model: str, device: str, seed: int = 0, **options: float) -> nn.Module:
    """The model "mlp" or "encoder" with weights from `seed`, on `device`."""
    torch.manual_seed(seed)
    network = MLP() if model == "mlp" else EncoderBlock(**options)
    return network.to(device)


def train_step(
    network: nn.Module, optimizer: torch.optim.Optimizer, x: torch.Tensor, target: torch.Tensor
) -> torch.Tensor:
    """One step: cross-entropy loss, backward, optimizer step.  Returns the loss (on device)."""
    loss = F.cross_entropy(network(x), target)
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    optimizer.step()
    return loss.detach()
