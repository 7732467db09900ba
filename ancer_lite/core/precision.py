"""The arithmetic of the base classifier's forward passes: one `precision` setting for CERTIFY, PREDICT and the
optimizations (Isotropic DD, ANCER, RANCER, UCAN's soundness search).

=======  ==========================================================================================================
exact    float32 throughout, TF32 off (`devices.full_float32`): the same numbers on every device up to the last bits
         of the kernels. The default, and the quick profile's.
tf32     float32 tensors whose CUDA matrix products and convolutions round their inputs to TF32 (a 10-bit mantissa),
         torch's default for convolutions and the ANCER authors' code's. The CPU computes it as `exact`.
bf16     `torch.autocast` to bfloat16 (an 8-bit mantissa) on the model's device type; logits are read back as float32.
=======  ==========================================================================================================

A certificate certifies the classifier as it was evaluated: the base classifier f computed in that precision is a
function of its input like any other, and CERTIFY's Clopper-Pearson bound holds for it (tests/test_precision.py
checks over-certification <= alpha in every precision on linear classifiers with closed-form p_A). What changes with
the precision is which function f is, so a certificate in bf16 is not a certificate of the float32 network.
"""
from __future__ import annotations

from contextlib import contextmanager
from typing import Iterator

import torch

from .devices import is_cuda
from .validation import check_choice

EXACT, TF32, BF16 = "exact", "tf32", "bf16"
PRECISIONS = (EXACT, TF32, BF16)

#: how far (relative to the logits' scale) a row's logits may move between a batch and the row alone in each precision
#: (`base_classifier.check_per_example`): float32 kernels chosen by batch size differ in the last bits (~1e-6); TF32
#: rounds products to 10 mantissa bits and bf16 to 8 (2^-8 = 0.004 per operation, accumulated over a network's
#: layers); a model whose output depends on its batch (train-mode BatchNorm) moves them by order 1
PER_EXAMPLE_TOLERANCE = {EXACT: 1e-3, TF32: 1e-2, BF16: 1e-1}


def check_precision(precision: object, name: str = "precision") -> str:
    """One of PRECISIONS ("exact", "tf32", "bf16"): ValueError naming `name`, the value and the choices otherwise.

    Parameters
    ----------
    precision : object
        The setting to check.
    name : str, default "precision"
        The setting's name, used in the error message.

    Returns
    -------
    str
        `precision`, unchanged.
    """
    return check_choice(precision, name, PRECISIONS)


@contextmanager
def forward_precision(precision: str, device: torch.device) -> Iterator[None]:
    """Run the block's forward passes on `device` in `precision` (checked by the caller, `check_precision`; the
    optimizers enter it again around their backward passes, whose TF32 flags and cuDNN kernel choice it sets): exact and
    tf32 set torch's two TF32 flags (`torch.backends.cudnn.allow_tf32`, `torch.backends.cuda.matmul.allow_tf32`)
    to False / True for the block and restore them after it; bf16 adds `torch.autocast(device.type, torch.bfloat16)`
    with TF32 off. Outside exact, a CUDA device also times cuDNN's kernels for each new shape
    (`torch.backends.cudnn.benchmark`, restored after the block): the counting loop's batches repeat one shape.

    Parameters
    ----------
    precision : str
        One of PRECISIONS.
    device : torch.device
        Where the model runs (its type is autocast's device type).

    Yields
    ------
    None
        Control, with the precision's settings in force.
    """
    cudnn, matmul, timed = (torch.backends.cudnn.allow_tf32, torch.backends.cuda.matmul.allow_tf32,
                            torch.backends.cudnn.benchmark)
    torch.backends.cudnn.allow_tf32 = torch.backends.cuda.matmul.allow_tf32 = precision == TF32
    if precision != EXACT and is_cuda(device):
        torch.backends.cudnn.benchmark = True
    try:
        if precision == BF16:
            with torch.autocast(device.type, dtype=torch.bfloat16):
                yield
        else:
            yield
    finally:
        torch.backends.cudnn.allow_tf32, torch.backends.cuda.matmul.allow_tf32 = cudnn, matmul
        torch.backends.cudnn.benchmark = timed


def fast_layout(model: torch.nn.Module, batch: torch.Tensor, precision: str) -> torch.Tensor:
    """The batch (and the model's weights, in place) in the memory layout its precision runs fastest in: outside
    exact, an image batch (B, C, H, W) in channels_last (NHWC, the layout of tensor-core convolutions; the model's
    4-D weights follow, converted when the first of them is not channels_last yet); exact keeps torch's default layout, today's kernels. The values are the same in either
    layout.

    Parameters
    ----------
    model : torch.nn.Module
        The base classifier.
    batch : torch.Tensor, shape (B, *input_shape)
        Its input.
    precision : str
        One of PRECISIONS.

    Returns
    -------
    torch.Tensor, shape (B, *input_shape)
        The batch, channels_last when it is an image batch outside exact.
    """
    if precision == EXACT or batch.ndim != 4:
        return batch
    weight = next((p for p in model.parameters() if p.ndim == 4), None)
    if weight is not None and not weight.is_contiguous(memory_format=torch.channels_last):
        model.to(memory_format=torch.channels_last)
    return batch.contiguous(memory_format=torch.channels_last)
