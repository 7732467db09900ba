"""Calling a base classifier safely, for certification and for the sample-wise optimizations.

- `eval_mode`: the base classifier f of randomized smoothing is a fixed function, so it runs in
  evaluation mode (dropout off, BatchNorm on its running statistics, which are left unchanged); each
  submodule's own training flag is restored afterwards.
- `fixed_weights`: the sample-wise optimizations differentiate with respect to the smoothing
  parameters only, so the weights require no gradient while they run (restored afterwards).
- `checked_logits`: a model whose output has the wrong shape or holds NaN/inf cannot be certified
  (argmax of a NaN row is class 0, which CERTIFY would then happily certify); such output raises. The Monte
  Carlo loops forward whole blocks of `ROW_BLOCK` rows (`blocked_forward`), so that a row's logits do not depend
  on the batch size.
- `check_per_example`: CERTIFY's guarantee needs f(x + ε) to depend on x + ε alone. A model whose output
  depends on the rest of its batch (train-mode BatchNorm in a wrapper, one random coin per call) gets
  counts that depend on how the draws are batched; CERTIFY checks the first rows of its first batch one
  by one against the batch and refuses such a model.
"""
from __future__ import annotations

from contextlib import contextmanager
from typing import Iterator

import torch

from .precision import EXACT, PER_EXAMPLE_TOLERANCE


@contextmanager
def eval_mode(model: torch.nn.Module) -> Iterator[torch.nn.Module]:
    """Run `model` in evaluation mode inside the block and restore every submodule's training flag
    after it (also on error). Callables that are not torch modules are used as they are.

    Parameters
    ----------
    model : torch.nn.Module or callable
        The base classifier; a callable that is not a torch module is left untouched.

    Yields
    ------
    torch.nn.Module or callable
        `model` itself, in evaluation mode inside the block.
    """
    if not isinstance(model, torch.nn.Module):
        yield model
        return
    flags = [(m, m.training) for m in model.modules()]
    model.eval()
    try:
        yield model
    finally:
        for m, training in flags:
            m.training = training


@contextmanager
def fixed_weights(model: torch.nn.Module) -> Iterator[torch.nn.Module]:
    """Inside the block the model's parameters require no gradient (the sample-wise optimizations
    differentiate with respect to the smoothing parameters alone, so the weights' gradients would be
    discarded; a model may then back-propagate more cheaply, as `models.SmallCNN` does); each parameter's
    flag is restored afterwards (also on error). Callables that are not torch modules are used as they are.

    Parameters
    ----------
    model : torch.nn.Module or callable
        The base classifier; a callable that is not a torch module is left untouched.

    Yields
    ------
    torch.nn.Module or callable
        `model` itself, its parameters not requiring gradients inside the block.
    """
    if not isinstance(model, torch.nn.Module):
        yield model
        return
    flags = [(p, p.requires_grad) for p in model.parameters()]
    for p, _ in flags:
        p.requires_grad_(False)
    try:
        yield model
    finally:
        for p, flag in flags:
            p.requires_grad_(flag)


#: rows per block of a forward pass. CPU matrix kernels give a row other last bits when the batch's row count
#: leaves a partial tile (measured on the quick MLP and CNNs, 1 and 2 threads: 1, 7 or 333 rows differ from the
#: same rows in a batch of 2,000 by up to 1.5e-7; row counts that are multiples of 4, padded or not, agree bit for
#: bit), which can flip a vote near a tie and make a count depend on the batch size
ROW_BLOCK = 16


def blocked_forward(model: torch.nn.Module, batch: torch.Tensor) -> torch.Tensor:
    """model(batch) computed on whole blocks of ROW_BLOCK rows: a batch of another size is padded with zero rows,
    whose outputs are dropped. Differentiable in batch.

    Parameters
    ----------
    model : torch.nn.Module or callable
        The base classifier, mapping (N, *input_shape) to (N, num_classes) logits.
    batch : torch.Tensor, shape (B, *input_shape)
        Its input, B >= 1.

    Returns
    -------
    torch.Tensor, shape (B, num_classes)
        model(batch): the model's output for the padded batch, cut to its first B rows (an output that is not a
        tensor with at least one dimension is returned as the model gave it).
    """
    extra = (-batch.shape[0]) % ROW_BLOCK
    if extra == 0:
        return model(batch)
    out = model(torch.cat([batch, batch.new_zeros((extra, *batch.shape[1:]))]))
    return out[:batch.shape[0]] if isinstance(out, torch.Tensor) and out.ndim >= 1 else out


#: how far from 1 every row of a batch must sum for its outputs to be read as probabilities: float32 softmax rows sum
#: to 1 within a few 1e-7
PROBABILITY_TOLERANCE = 1e-5


def _refuse_probabilities(out: torch.Tensor) -> None:
    """Refuse outputs whose rows all sum to 1 and lie in [0, 1] with some entry strictly inside (0, 1): a final
    softmax, under which Smooth's votes are unchanged but the optimizers' soft smoothed classifier (a softmax of
    the logits) is not the paper's. Rows that are exactly one-hot are left alone (a model may score that way)."""
    if bool((out >= 0).all()) and bool((out <= 1).all()) and bool(((out > 0) & (out < 1)).any()):
        raise ValueError(f"model must return logits (unnormalized class scores), but every row of its output for a "
                         f"batch of {out.shape[0]} inputs lies in [0, 1] and sums to 1: probabilities. Remove its "
                         "final softmax (log-probabilities are logits and are fine)")


def checked_logits(model: torch.nn.Module, batch: torch.Tensor, num_classes: int | None = None, *,
                   blocked: bool = False) -> torch.Tensor:
    """model(batch), checked to be a (batch, num_classes) tensor of finite logits; with `blocked`, computed on whole
    blocks of rows (`blocked_forward`: the Monte Carlo loops, whose counts must not depend on the batch size).

    Parameters
    ----------
    model : torch.nn.Module or callable
        The base classifier; it must return logits, not probabilities.
    batch : torch.Tensor, shape (B, *input_shape)
        Its input.
    num_classes : int, optional
        The number of classes the output must have; None: any number of columns.
    blocked : bool, default False
        Compute the output with `blocked_forward` (whole blocks of ROW_BLOCK rows); False: model(batch) directly.

    Returns
    -------
    torch.Tensor, shape (B, num_classes)
        The model's logits, unchanged (gradients flow through them).

    Raises
    ------
    ValueError
        When the output is not a (B, num_classes) tensor, holds NaN or inf, or its rows are probabilities (all in
        [0, 1], summing to 1, some entry strictly inside (0, 1)).
    """
    out = blocked_forward(model, batch) if blocked else model(batch)
    if not isinstance(out, torch.Tensor) or out.ndim != 2 or out.shape[0] != batch.shape[0] or (
            num_classes is not None and out.shape[1] != num_classes):
        got = tuple(out.shape) if isinstance(out, torch.Tensor) else type(out).__name__
        want = f"({batch.shape[0]}, {num_classes if num_classes is not None else 'num_classes'})"
        raise ValueError(f"model output must have shape (batch, num_classes) = {want}, got {got}")
    # the row sums, then their sum: a sum of finite numbers is finite or overflows to inf, and an inf or NaN anywhere
    # makes it inf or NaN, so a finite sum proves every logit finite (a sum that overflowed is re-checked)
    rows = out.detach().float().sum(dim=1)
    if bool(torch.isfinite(rows.sum())):
        if bool(((rows - 1.0).abs() <= PROBABILITY_TOLERANCE).all()):
            _refuse_probabilities(out.detach())
        return out
    finite = torch.isfinite(out).all(dim=1)
    if not bool(finite.all()):
        bad = int((~finite).sum())
        raise ValueError(f"model returned non-finite logits (NaN or inf) for {bad} of {out.shape[0]} inputs "
                         "in a batch; a broken model cannot be certified (check its weights and inputs)")
    return out


def check_per_example(model: torch.nn.Module, batch: torch.Tensor, logits: torch.Tensor, rows: int = 4,
                      precision: str = EXACT) -> None:
    """Raise ValueError unless model(batch[i:i+1]) matches logits[i] = model(batch)[i] for the first `rows`
    rows (within `precision.PER_EXAMPLE_TOLERANCE` of the arithmetic they were computed in, relative to the logits'
    scale).

    Parameters
    ----------
    model : torch.nn.Module or callable
        The base classifier.
    batch : torch.Tensor, shape (B, *input_shape)
        The batch the logits were computed for.
    logits : torch.Tensor, shape (B, num_classes)
        The model's output for the whole batch, computed just before (in the same arithmetic).
    rows : int, default 4
        How many leading rows to recompute one by one (at most B).
    precision : str, default "exact"
        The arithmetic the logits were computed in, one of `precision.PRECISIONS`; it selects the tolerance
        `precision.PER_EXAMPLE_TOLERANCE[precision]`, scaled by max(1, the largest absolute logit of those rows).

    Raises
    ------
    ValueError
        When a row recomputed alone is non-finite or moves by more than the tolerance.
    """
    k = min(int(rows), batch.shape[0])
    alone = torch.cat([model(batch[i:i + 1]) for i in range(k)]).float()
    if not bool(torch.isfinite(alone).all()):  # a model gone NaN between calls is broken, not batch-dependent
        raise ValueError("model returned non-finite logits (NaN or inf) for an input on its own that it had "
                         "classified with finite logits in a batch just before; a broken model cannot be certified "
                         "(check its weights and inputs)")
    full = logits[:k].float()
    scale = max(1.0, float(full.abs().max()))
    err = float((alone - full).abs().max())
    if not err <= PER_EXAMPLE_TOLERANCE[precision] * scale:
        raise ValueError(f"the model's output for an input depends on the rest of its batch (logits moved by {err:.3g} "
                         "between a batch and the same input alone): randomized smoothing needs a deterministic, "
                         "per-example base classifier (no train-mode BatchNorm, no randomness inside forward)")
