"""pytorch/examples' word language model, on a synthetic corpus with structure to learn:
an embedding, an LSTM or a Transformer encoder with a causal mask, a decoder; truncated
backpropagation through time with the hidden state detached between batches, gradient
clipping, and SGD (LSTM) or AdamW (Transformer).  The loss must fall.

    python language_model.py lstm|transformer
"""

from __future__ import annotations

import math
import sys

import torch
import torch.nn.functional as F
from torch import nn

device = torch.accelerator.current_accelerator()
VOCAB, BATCH, BPTT = 64, 8, 16


class RNNModel(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.encoder = nn.Embedding(VOCAB, 32)
        self.rnn = nn.LSTM(32, 48, 2)
        self.decoder = nn.Linear(48, VOCAB)

    def forward(self, x: torch.Tensor, hidden: tuple) -> tuple[torch.Tensor, tuple]:
        output, hidden = self.rnn(self.encoder(x), hidden)
        return self.decoder(output), hidden


class TransformerModel(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.encoder = nn.Embedding(VOCAB, 32)
        layer = nn.TransformerEncoderLayer(32, 4, 64, dropout=0.1)
        self.transformer = nn.TransformerEncoder(layer, 2, enable_nested_tensor=False)
        self.decoder = nn.Linear(32, VOCAB)
        position = torch.arange(BPTT).unsqueeze(1)
        scale = torch.exp(torch.arange(0, 32, 2) * (-math.log(10000.0) / 32))
        table = torch.zeros(BPTT, 1, 32)
        table[:, 0, 0::2] = torch.sin(position * scale)
        table[:, 0, 1::2] = torch.cos(position * scale)
        self.register_buffer("positions", table)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        mask = nn.Transformer.generate_square_subsequent_mask(len(x), device=x.device)
        h = self.encoder(x) * math.sqrt(32) + self.positions[: len(x)]
        return self.decoder(self.transformer(h, mask, is_causal=True))


def corpus() -> torch.Tensor:
    """A token stream made of a few repeated phrases: (length, BATCH) columns."""
    generator = torch.Generator().manual_seed(0)
    phrases = [torch.randint(0, VOCAB, (7,), generator=generator) for _ in range(5)]
    order = torch.randint(0, 5, (300,), generator=generator)
    stream = torch.cat([phrases[i] for i in order.tolist()])
    length = len(stream) // BATCH
    return stream[: length * BATCH].view(BATCH, length).t().contiguous().to(device)


if __name__ == "__main__":
    kind = sys.argv[1]
    torch.manual_seed(0)
    data = corpus()
    model = (RNNModel() if kind == "lstm" else TransformerModel()).to(device)
    optimizer = (
        torch.optim.SGD(model.parameters(), lr=20.0)
        if kind == "lstm"
        else torch.optim.AdamW(model.parameters(), lr=3e-3)
    )
    hidden = None
    if kind == "lstm":
        zeros = torch.zeros(2, BATCH, 48, device=device)
        hidden = (zeros, zeros)
    losses = []
    for _epoch in range(3):
        for i in range(0, data.size(0) - 1 - BPTT, BPTT):
            x, y = data[i : i + BPTT], data[i + 1 : i + 1 + BPTT]
            optimizer.zero_grad()
            if kind == "lstm":
                hidden = tuple(h.detach() for h in hidden)  # truncated backpropagation
                output, hidden = model(x, hidden)
            else:
                output = model(x)
            loss = F.cross_entropy(output.view(-1, VOCAB), y.reshape(-1))
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 0.25)
            optimizer.step()
            losses.append(loss.item())
    first, last = sum(losses[:5]) / 5, sum(losses[-5:]) / 5
    assert last < 0.5 * first, (first, last)
    print(f"language model ({kind}): ok on {device} (loss {first:.3f} -> {last:.3f})")
