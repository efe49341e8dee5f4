"""The model zoo (examples/zoo.py): models users bring -- torchvision CNNs, Hugging Face language
models with tied weights, a pretrained sentence-transformers model, an LSTM/GRU network -- take
one training step on the device exactly as on the CPU: outputs, every gradient and every
updated parameter within the case's stated tolerance.  On the reference vendor nothing runs
through the CPU fallback."""

from __future__ import annotations

import sys

import pytest
from conftest import DEV, REPO

sys.path.insert(0, str(REPO / "examples"))
import zoo

# The models each bundled accelerator runs without the CPU fallback: emu and opencl (device
# type ocl) implement every operator of the zoo, npu those of the transformer models (its
# convolution, batch norm, pooling and RNN cells run on the CPU fallback).
NATIVE = {
    "emu": set(zoo.CASES),
    "ocl": set(zoo.CASES),
    "npu": {"gpt2", "bert-mlm", "llama", "all-minilm-l6-v2"},
}.get(DEV, set())


@pytest.mark.parametrize("name", list(zoo.CASES))
def test_training_step_matches_cpu(name):
    result = zoo.compare(zoo.CASES[name], DEV)
    assert not result.mismatches, "\n".join(result.mismatches[:10])
    if name in NATIVE:
        assert result.fallbacks == {}, f"ran through the CPU fallback: {result.fallbacks}"


@pytest.mark.parametrize(
    ("name", "tied"),
    [
        ("gpt2", lambda m: m.lm_head.weight is m.transformer.wte.weight),
        ("bert-mlm", lambda m: m.cls.predictions.decoder.bias is m.cls.predictions.bias),
    ],
)
def test_hub_models_keep_their_tied_weights(name, tied):
    model, _ = zoo.build(zoo.CASES[name])
    assert tied(model)
    model.to(DEV)
    assert tied(model)


def test_the_table():
    """`make models` prints one row per model and exits 0 when every comparison holds."""
    code = zoo.main(["lstm-gru", "gpt2", "--no-timing"])
    assert code == 0


def test_gpt2_generates_as_on_the_cpu():
    """Hugging Face generate() with GPT-2: greedy decoding and beam search give the CPU's tokens;
    sampling (top-k, top-p, repetition penalty and temperature) gives valid tokens and repeats
    under a seed.  On opencl and emu nothing runs through the CPU fallback: argmax, topk, sort,
    scatter, exponential_ / multinomial, isin over a slice of the tokens, // and % of beam
    search."""
    import torch

    import torch_backend

    model, _ = zoo.build(zoo.CASES["gpt2"])
    model.eval()
    ids = torch.randint(1, 256, (2, 5), generator=torch.Generator().manual_seed(0))
    device_model = zoo.build(zoo.CASES["gpt2"])[0].eval().to(DEV)
    options = {"max_new_tokens": 6, "pad_token_id": 0}
    torch_backend.reset_fallback_counts()
    for mode in ({"do_sample": False}, {"do_sample": False, "num_beams": 2}):
        want = model.generate(ids, **options, **mode)
        got = device_model.generate(ids.to(DEV), **options, **mode).cpu()
        assert torch.equal(got, want), mode
    sampling = [
        {"do_sample": True},
        {"do_sample": True, "top_k": 0, "top_p": 0.9},
        {"do_sample": True, "repetition_penalty": 1.3, "temperature": 0.7},
    ]
    for mode in sampling:
        torch.manual_seed(4)
        first = device_model.generate(ids.to(DEV), **options, **mode).cpu()
        torch.manual_seed(4)
        again = device_model.generate(ids.to(DEV), **options, **mode).cpu()
        assert torch.equal(first, again), mode
        assert first.shape == (2, 11) and torch.equal(first[:, :5], ids)
        assert int(first.min()) >= 0 and int(first.max()) < 256
    if DEV in ("ocl", "emu"):
        assert torch_backend.fallback_counts() == {}
