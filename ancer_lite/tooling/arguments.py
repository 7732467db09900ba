"""The types of `ancer-certify`'s arguments (argparse's `type=`): each parses one command-line string or refuses it
with argparse's error, saying what was expected and what it got; and the help formatter of its commands."""
from __future__ import annotations

import argparse
import math
from typing import Callable

from ..core import devices
from ..core.certify import BATCH_SIZE

#: the datasets `certify` and `certify-ucan` read
DATASETS = ("cifar10", "imagenet", "fmnist", "digits", "mnist")


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
    """The type of an integer argument >= `minimum`.

    Parameters
    ----------
    minimum : int
        The smallest integer accepted.

    Returns
    -------
    callable
        The type function: the integer of a string, or argparse's error (`argparse.ArgumentTypeError`) naming what
        was expected; its `__name__` is "integer >= <minimum>".
    """
    def parse(text: str) -> int:
        return _parsed(text, int, lambda v: v >= minimum, f"an integer >= {minimum}")
    parse.__name__ = f"integer >= {minimum}"
    return parse


def positive(text: str) -> float:
    """A finite number > 0.

    Parameters
    ----------
    text : str
        The command-line value.

    Returns
    -------
    float
        The number.

    Raises
    ------
    argparse.ArgumentTypeError
        When `text` is not such a number.
    """
    return _parsed(text, float, lambda v: math.isfinite(v) and v > 0, "a finite number > 0")


def probability(text: str) -> float:
    """A number in (0, 1).

    Parameters
    ----------
    text : str
        The command-line value.

    Returns
    -------
    float
        The number.

    Raises
    ------
    argparse.ArgumentTypeError
        When `text` is not such a number.
    """
    return _parsed(text, float, lambda v: 0 < v < 1, "a number in (0, 1)")


def fraction(text: str) -> float:
    """A number in [0, 1).

    Parameters
    ----------
    text : str
        The command-line value.

    Returns
    -------
    float
        The number.

    Raises
    ------
    argparse.ArgumentTypeError
        When `text` is not such a number.
    """
    return _parsed(text, float, lambda v: 0 <= v < 1, "a number in [0, 1)")


def nonnegative(text: str) -> float:
    """A finite number >= 0.

    Parameters
    ----------
    text : str
        The command-line value.

    Returns
    -------
    float
        The number.

    Raises
    ------
    argparse.ArgumentTypeError
        When `text` is not such a number.
    """
    return _parsed(text, float, lambda v: math.isfinite(v) and v >= 0, "a finite number >= 0")


def max_inputs(text: str) -> int:
    """An input count: an integer >= 0, or -1 for no limit.

    Parameters
    ----------
    text : str
        The command-line value.

    Returns
    -------
    int
        The count, >= -1.

    Raises
    ------
    argparse.ArgumentTypeError
        When `text` is not an integer >= -1.
    """
    return _parsed(text, int, lambda v: v >= -1, "an integer >= 0, or -1 for no limit")


def device(text: str) -> str:
    """A device setting (`devices.check_setting`): "auto", "cpu", "cuda" or "cuda:N".

    Parameters
    ----------
    text : str
        The command-line value.

    Returns
    -------
    str
        `text`, unchanged.

    Raises
    ------
    argparse.ArgumentTypeError
        When `text` is not one of these settings.
    """
    try:
        return devices.check_setting(text, "device")
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be 'auto', 'cpu', 'cuda' or 'cuda:N', got {text!r}") from None


def certify_options(p: argparse.ArgumentParser) -> None:
    """The options of Cohen et al.'s `certify.py` that `certify` and `certify-ucan` share: --batch, --skip, --max,
    --N0, --N and --alpha.

    Parameters
    ----------
    p : argparse.ArgumentParser
        The subcommand's parser, to which the options are added.
    """
    p.add_argument("--batch", type=count(1), default=BATCH_SIZE, help="noise draws per forward pass")
    p.add_argument("--skip", type=count(1), default=1, help="certify every SKIP-th input of the split")
    p.add_argument("--max", type=max_inputs, default=-1, help="certify positions below MAX only (-1: no limit)")
    p.add_argument("--N0", type=count(1), default=100, help="CERTIFY's draws that choose the class")
    p.add_argument("--N", type=count(1), default=100_000, help="CERTIFY's draws that bound p_A")
    p.add_argument("--alpha", type=probability, default=0.001, help="CERTIFY's failure probability")
