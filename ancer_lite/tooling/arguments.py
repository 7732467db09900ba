"""The types of `ancer-certify`'s arguments (argparse's `type=`): each parses one command-line string or refuses it
with argparse's error, saying what was expected and what it got; and the help formatter of its commands."""
from __future__ import annotations

import argparse
import math
from typing import Callable

from ..core import devices


class HelpFormatter(argparse.RawDescriptionHelpFormatter, argparse.ArgumentDefaultsHelpFormatter):
    """Descriptions and examples as written, each option's default shown."""


def _parsed(text: str, convert: Callable[[str], float], ok: Callable[[float], bool], want: str) -> float:
    """`convert(text)` when it parses and passes `ok`, else argparse's error "must be <want>, got <text>"."""
    try:
        value = convert(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be {want}, got {text!r}") from None
    if not ok(value):
        raise argparse.ArgumentTypeError(f"must be {want}, got {text!r}")
    return value


def count(minimum: int) -> Callable[[str], int]:
    """The type of an integer argument >= `minimum`."""
    def parse(text: str) -> int:
        return _parsed(text, int, lambda v: v >= minimum, f"an integer >= {minimum}")
    parse.__name__ = f"integer >= {minimum}"
    return parse


def positive(text: str) -> float:
    """A finite number > 0."""
    return _parsed(text, float, lambda v: math.isfinite(v) and v > 0, "a finite number > 0")


def probability(text: str) -> float:
    """A number in (0, 1)."""
    return _parsed(text, float, lambda v: 0 < v < 1, "a number in (0, 1)")


def fraction(text: str) -> float:
    """A number in [0, 1)."""
    return _parsed(text, float, lambda v: 0 <= v < 1, "a number in [0, 1)")


def nonnegative(text: str) -> float:
    """A finite number >= 0."""
    return _parsed(text, float, lambda v: math.isfinite(v) and v >= 0, "a finite number >= 0")


def max_inputs(text: str) -> int:
    """An input count: an integer >= 0, or -1 for no limit."""
    return _parsed(text, int, lambda v: v >= -1, "an integer >= 0, or -1 for no limit")


def device(text: str) -> str:
    """A device setting (`devices.check_setting`): "auto", "cpu", "cuda" or "cuda:N"."""
    try:
        return devices.check_setting(text, "device")
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be 'auto', 'cpu', 'cuda' or 'cuda:N', got {text!r}") from None
