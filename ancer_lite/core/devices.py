"""Where the base classifier runs: one `device` setting, resolved here for every
layer (model loading, CERTIFY, the optimizations, RANCER's Hessian, UCAN's generators and training).

"auto" means CUDA when torch finds a usable GPU, else the CPU; a device is named the torch way ("cpu", "cuda",
"cuda:1"). Every input's Monte Carlo draws come from its own CPU streams (`streams`): drawn on the CPU
(`certify.Smooth`'s draws="cpu"), a certificate in exact precision does not depend on the device beyond the last bits
of the model's arithmetic; drawn where the model runs (draws="device", the default on CUDA, `noise.BlockDrawStream`),
it is reproducible per device type. The memory step (Algorithm 1) is NumPy on the CPU: it handles one region per
input and costs milliseconds.
"""
from __future__ import annotations

import re

import torch

AUTO = "auto"


def resolve(device: str | torch.device | None = AUTO) -> torch.device:
    """The torch device for a setting: "auto" (or None) -> "cuda" when available, else "cpu"; anything else must
    name a device torch knows, and a CUDA device must be usable here (ValueError naming the setting otherwise).
    A CUDA device comes back with its index ("cuda" and "auto": torch's current device), so that it compares equal
    to the device of a model's parameters; resolving one switches TF32 off (`full_float32`).

    Parameters
    ----------
    device : str, torch.device or None, default "auto"
        The setting: "auto" or None, or a device torch knows ("cpu", "cuda", "cuda:1", a torch.device).

    Returns
    -------
    torch.device
        The device; a CUDA device with its index.

    Raises
    ------
    ValueError
        When torch does not know the device, or a CUDA device is named that is not usable here.
    """
    if device is None or (isinstance(device, str) and device == AUTO):
        device = "cuda" if torch.cuda.is_available() else "cpu"
    try:
        dev = torch.device(device)
    except (RuntimeError, TypeError) as e:
        raise ValueError(f"device must be 'auto' or a torch device such as 'cpu', 'cuda' or 'cuda:1', "
                         f"got {device!r}") from e
    if dev.type == "cuda":
        if not torch.cuda.is_available():
            raise ValueError(f"device = {str(device)!r}, but torch finds no usable CUDA device here "
                             "(torch.cuda.is_available() is False); use device='cpu' or 'auto'")
        if dev.index is None:
            dev = torch.device(dev.type, torch.cuda.current_device())
        elif dev.index >= torch.cuda.device_count():
            raise ValueError(f"device = {str(device)!r}, but torch finds {torch.cuda.device_count()} CUDA device(s)")
        full_float32()
    return dev


def full_float32() -> None:
    """Make CUDA compute float32 in full float32, as the CPU does. torch lets cuDNN's convolutions round their
    inputs to TF32 (a 10-bit mantissa) by default, and matrix products when asked: with TF32, CERTIFY's counts for the
    MNIST SmallCNN differed from the CPU's by 2 or 3 votes in 10,000 (an H200, torch 2.11; tests/test_gpu.py), so a
    certificate would depend on the device beyond rounding. Sets torch's process-wide flags
    `torch.backends.cudnn.allow_tf32` and `torch.backends.cuda.matmul.allow_tf32` to False."""
    torch.backends.cudnn.allow_tf32 = False
    torch.backends.cuda.matmul.allow_tf32 = False


#: the device settings a run may name (`check_setting`): "auto", the CPU, or a CUDA device by number
SETTING_PATTERN = r"auto|cpu|cuda(:[0-9]+)?"


def check_setting(device: object, name: str = "device") -> str:
    """A device setting as a profile stores it, checked without touching the hardware: "auto", "cpu", "cuda" or
    "cuda:N" (a str; ValueError naming `name` and the value otherwise). Whether a CUDA device is usable here is
    `resolve`'s to say, when the setting is used.

    Parameters
    ----------
    device : object
        The setting to check.
    name : str, default "device"
        The setting's name, used in the error message.

    Returns
    -------
    str
        `device`, unchanged.
    """
    if not isinstance(device, str) or re.fullmatch(SETTING_PATTERN, device) is None:
        raise ValueError(f"{name} must be 'auto', 'cpu', 'cuda' or 'cuda:N' (a str), got "
                         f"{type(device).__name__} {device!r}")
    return device


def model_device(model: torch.nn.Module) -> torch.device:
    """The device of the model's first parameter or buffer (the CPU for a model without either).

    Parameters
    ----------
    model : torch.nn.Module
        The model (TypeError naming it otherwise).

    Returns
    -------
    torch.device
        Where its first parameter (else its first buffer) lies; the CPU when it has neither.
    """
    if not isinstance(model, torch.nn.Module):
        raise TypeError(f"model must be a torch.nn.Module returning logits, got {type(model).__name__}")
    for t in model.parameters():
        return t.device
    for t in model.buffers():
        return t.device
    return torch.device("cpu")


def place(model: torch.nn.Module, device: str | torch.device | None = None) -> torch.device:
    """Move `model` to `device` (in place, as nn.Module.to does) and return that device; None leaves the model where
    it is and returns its device.

    Parameters
    ----------
    model : torch.nn.Module
        The model, moved in place when it is not on the device yet.
    device : str, torch.device or None, optional
        A setting for `resolve` ("auto", "cpu", "cuda:1", ...); None: leave the model where it is.

    Returns
    -------
    torch.device
        The resolved device, or the model's device (`model_device`) for None.
    """
    if device is None:
        return model_device(model)
    dev = resolve(device)
    if model_device(model) != dev:
        model.to(dev)
    return dev


def synchronize(device: str | torch.device | None) -> None:
    """Wait until the work queued on `device` is done (a CUDA device runs kernels asynchronously: a timer read
    without this measures the queueing); a no-op on the CPU and for None.

    Parameters
    ----------
    device : str, torch.device or None
        The device to wait for (anything torch.device accepts); None: nothing to wait for.
    """
    if device is None:
        return
    dev = torch.device(device)
    if dev.type == "cuda":
        torch.cuda.synchronize(dev)


def is_cuda(device: torch.device) -> bool:
    """Whether `device` (a torch.device) is a CUDA device: its copies from pinned host memory can run asynchronously
    and be waited for with CUDA events (`certify`'s drawing thread).

    Parameters
    ----------
    device : torch.device
        The device to test.

    Returns
    -------
    bool
        True when its type is "cuda".
    """
    return device.type == "cuda"
