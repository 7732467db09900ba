"""Paired bootstrap intervals over test inputs, and the three-way verdict of a claim.

A claim of the papers compares two methods on the same test inputs: ANCER's ACR against Isotropic DD's (ANCER
§7, Tables 1-2), RANCER's against ANCER's (RANCER §4), and so on. Each side is a mean over the inputs of a
per-input value (the certified radius times correctness for ACR, the proxy radius for ACR~, correctness with a
radius >= r for certified accuracy at r), and the papers report the best over the noise level σ of each method (the
envelope of their Tables). The uncertainty that matters for a verdict is that of the test sample: another draw of
the same number of test inputs would give other means.

`paired_effect` gives the percentile bootstrap interval (Efron & Tibshirani, *An Introduction to the Bootstrap*,
1993, §13.3) of the effect "best of A minus best of B" (or their ratio minus 1): every bootstrap draw resamples the
test inputs with replacement, the same resample for both methods and every σ (a paired design: what the inputs share
cancels in the difference), and recomputes both envelopes, so the choice of the best σ is resampled too. Where two
σ of one method are close, the resampled maximum leans upward (a maximum of noisy means exceeds each of them), so
such an interval can start at the estimate and reach further above it than a fixed-σ interval would: the cost of
not pretending that the best σ was known in advance. The draws
come from the stream (seed, key, "bootstrap") (`core.streams`), so an interval is a function of its data, seed and
key alone.

The verdict (`Effect.verdict`) orients the effect so that a positive value is what the claim says: **holds** when
the whole interval lies above 0, **fails** when it lies below 0, and **within noise** when it contains 0 (the test
sample cannot tell). A claim of the form "at least" (ANCER's ℓp ACR >= Isotropic DD's) reads the same way: within
noise is then a tie the sample cannot separate, which such a claim allows but does not establish.
"""
from __future__ import annotations

import zlib
from dataclasses import dataclass
from typing import Callable

import numpy as np

from ..core.certify import lower_confidence_bound
from ..core.streams import BOOTSTRAP, stream_seed
from ..core.validation import check_count, check_probability

HOLDS, FAILS, WITHIN_NOISE = "holds", "fails", "within noise"
#: the three verdicts a claim can get
VERDICTS = (HOLDS, FAILS, WITHIN_NOISE)
#: bootstrap draws and the two-sided level of every interval, unless a caller says otherwise
DRAWS, LEVEL = 2000, 0.95
DIFFERENCE, RATIO = "difference", "ratio"
KINDS = (DIFFERENCE, RATIO)


def claim_key(label: str) -> int:
    """A stable stream key for a claim's label: its CRC-32.

    The key is the same in every process and Python version (Python's own `hash` of a str is salted per process).

    Parameters
    ----------
    label : str
        The claim's label, a non-empty string, e.g. "03/mnist/l2/C2".

    Returns
    -------
    int
        The key, an int in [0, 2^32).
    """
    if not isinstance(label, str) or not label:
        raise ValueError(f"label must be a non-empty string, got {label!r}")
    return zlib.crc32(label.encode("utf-8"))


def resample_indices(n: int, draws: int, seed: int, key: int) -> np.ndarray:
    """The bootstrap's resamples of n inputs, as input positions.

    Row b lists the n input positions (with repetition) of resample b, drawn uniformly from the stream
    (seed, key, "bootstrap") (`core.streams`).

    Parameters
    ----------
    n : int
        The number of inputs, an integer >= 1.
    draws : int
        The number of resamples, an integer >= 1.
    seed : int
        The run's seed, an integer >= 0.
    key : int
        The stream's key, an integer >= 0 (`claim_key` makes one of a label).

    Returns
    -------
    numpy.ndarray of int, shape (draws, n)
        Row b: the positions, in [0, n), of resample b's inputs.
    """
    n = check_count(n, "n")
    draws = check_count(draws, "draws")
    return np.random.default_rng(stream_seed(seed, key, BOOTSTRAP)).integers(0, n, size=(draws, n))


def resample_weights(n: int, draws: int, seed: int, key: int) -> np.ndarray:
    """The resamples of `resample_indices` as weights, so that weights @ values is each resample's mean.

    Parameters
    ----------
    n : int
        The number of inputs, an integer >= 1.
    draws : int
        The number of resamples, an integer >= 1.
    seed : int
        The run's seed, an integer >= 0.
    key : int
        The stream's key, an integer >= 0.

    Returns
    -------
    numpy.ndarray of float64, shape (draws, n)
        Row b holds how often each input was drawn in resample b, divided by n (each row sums to 1).
    """
    picks = resample_indices(n, draws, seed, key)
    draws, n = picks.shape
    offset = picks + n * np.arange(draws)[:, None]  # row b's picks, offset by b n
    return np.bincount(offset.reshape(-1), minlength=draws * n).reshape(draws, n) / n


def _values(values: object, name: str) -> np.ndarray:
    """values as a finite float64 (k, n) matrix: k >= 1 configurations (σ) of one method, n >= 1 inputs."""
    try:
        a = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a real array (one row per σ, one column per input), got "
                         f"{type(values).__name__}") from None
    if a.ndim == 1:
        a = a[None]
    if a.ndim != 2 or a.shape[0] == 0 or a.shape[1] == 0:
        raise ValueError(f"{name} must have shape (n,) or (k, n) with k, n >= 1 (one row per σ, one column per "
                         f"input), got shape {a.shape}")
    if not np.isfinite(a).all():
        raise ValueError(f"{name} must be finite (found NaN or Inf)")
    return a


@dataclass(frozen=True)
class Effect:
    """A claim's effect on the test inputs with its bootstrap interval; positive is what the claim says.

    Parameters
    ----------
    estimate : float
        The effect on all the inputs: best of A vs best of B (`kind`), or a share or mean against a threshold.
    low, high : float
        The interval's ends at `level`.
    level : float
        The interval's two-sided level, in (0, 1).
    n : int
        The number of test inputs (or trials).
    draws : int
        The number of bootstrap draws (0 for an exact interval, `proportion_effect`).
    kind : str
        "difference" (A - B) or "ratio" (A / B - 1).
    """
    estimate: float
    low: float
    high: float
    level: float
    n: int
    draws: int
    kind: str = DIFFERENCE

    @property
    def verdict(self) -> str:
        """The claim's verdict: "holds", "fails" or "within noise".

        Returns
        -------
        str
            "holds" when the interval lies above 0, "fails" when it lies below 0, "within noise" when it contains 0.
        """
        if self.low > 0:
            return HOLDS
        if self.high < 0:
            return FAILS
        return WITHIN_NOISE

    @property
    def half_width(self) -> float:
        """Half the interval's width: the resolution of a test sample of this size.

        Returns
        -------
        float
            (high - low) / 2.
        """
        return 0.5 * (self.high - self.low)

    def text(self, digits: int = 3, percent: bool | None = None) -> str:
        """The effect and its interval as text, e.g. "+0.123 [+0.045, +0.201]" or, for a ratio, "+12% [+5%, +20%]".

        Parameters
        ----------
        digits : int
            Decimal places of a value not shown in percent.
        percent : bool or None
            Whether to show the values in percent; None: for a ratio only.

        Returns
        -------
        str
            "estimate [low, high]", signed.
        """
        pct = self.kind == RATIO if percent is None else percent
        if pct:
            return f"{self.estimate:+.0%} [{self.low:+.0%}, {self.high:+.0%}]"
        return f"{self.estimate:+.{digits}f} [{self.low:+.{digits}f}, {self.high:+.{digits}f}]"

    def as_dict(self) -> dict:
        """The effect's fields and its verdict as a dict.

        Returns
        -------
        dict
            Keys estimate, low, high, level, n, draws, kind and verdict.
        """
        return dict(estimate=self.estimate, low=self.low, high=self.high, level=self.level, n=self.n,
                    draws=self.draws, kind=self.kind, verdict=self.verdict)


def paired_effect(a: np.ndarray, b: np.ndarray, *, kind: str = DIFFERENCE, seed: int = 0, key: int = 0,
                  draws: int = DRAWS, level: float = LEVEL) -> Effect:
    """The effect of method A over method B on the same test inputs, with its paired percentile bootstrap interval.

    The effect is max_i mean(a_i) - max_j mean(b_j) (kind "difference") or max_i mean(a_i) / max_j mean(b_j) - 1
    (kind "ratio"): the best row (σ) of each method is taken, as the papers' Tables take the best σ, and re-taken in
    every resample. Every resample draws the test inputs with replacement, the same resample for both methods and
    every σ (see the module's text). For kind "ratio", a resample where b's best mean is 0 counts as an unbounded gain
    (+inf) when a's is positive, and as none (0) otherwise.

    Parameters
    ----------
    a : numpy.ndarray, shape (n,) or (k_a, n)
        Per-input values of A, one row per σ, finite; nonnegative for kind "ratio".
    b : numpy.ndarray, shape (n,) or (k_b, n)
        Per-input values of B, one row per σ, the same inputs in the same order as a, finite; for kind "ratio"
        nonnegative, with a positive best mean (the ACR~ of a method that certifies something).
    kind : str
        "difference" or "ratio".
    seed : int
        The bootstrap stream's seed, an integer >= 0.
    key : int
        The bootstrap stream's key, an integer >= 0 (`claim_key` makes a key of a label).
    draws : int
        The number of bootstrap draws, an integer >= 100.
    level : float
        The interval's two-sided level, in (0, 1).

    Returns
    -------
    Effect
        The estimate on all the inputs and its interval.
    """
    a, b = _values(a, "a"), _values(b, "b")
    if a.shape[1] != b.shape[1]:
        raise ValueError(f"a and b must hold the same test inputs (paired): a has {a.shape[1]} inputs, b "
                         f"{b.shape[1]}")
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {list(KINDS)}, got {kind!r}")
    draws = check_count(draws, "draws", 100)
    level = check_probability(level, "level")
    n = a.shape[1]
    w = resample_weights(n, draws, seed, key)
    best_a, best_b = (w @ a.T).max(axis=1), (w @ b.T).max(axis=1)
    est_a, est_b = float(a.mean(axis=1).max()), float(b.mean(axis=1).max())
    if kind == RATIO:
        if (a < 0).any() or (b < 0).any() or est_b <= 0:
            raise ValueError("a and b must be nonnegative and b's best mean positive for kind 'ratio' (B certifies "
                             f"something), got best mean {est_b:g}")
        # a resample in which B certifies nothing: an unbounded gain if A certifies something there, else none
        with np.errstate(divide="ignore", invalid="ignore"):
            boot = np.where(best_b > 0, best_a / best_b - 1.0, np.where(best_a > 0, np.inf, 0.0))
        estimate = est_a / est_b - 1.0
    else:
        boot, estimate = best_a - best_b, est_a - est_b
    return Effect(float(estimate), *_interval(boot, level), level, n, draws, kind)


def _interval(boot: np.ndarray, level: float) -> tuple[float, float]:
    """The percentile interval of the bootstrap draws `boot` (which may hold +inf: an unbounded ratio)."""
    with np.errstate(invalid="ignore"):
        low, high = np.quantile(boot, [(1.0 - level) / 2.0, (1.0 + level) / 2.0])
    return (float(low) if np.isfinite(low) or low == np.inf else np.inf,  # inf - inf in the interpolation: inf
            float(high) if np.isfinite(high) or high == np.inf else np.inf)


def threshold_effect(values: np.ndarray, threshold: float, *, seed: int = 0, key: int = 0, draws: int = DRAWS,
                     level: float = LEVEL) -> Effect:
    """The effect mean(values) - threshold of one method's mean over n inputs against a fixed number.

    The interval is the percentile bootstrap interval of the mean (`mean_interval`) shifted by the threshold: e.g. a
    share against the paper's 90%.

    Parameters
    ----------
    values : numpy.ndarray, shape (n,)
        The method's per-input values, finite.
    threshold : float
        The fixed number, finite.
    seed : int
        The bootstrap stream's seed, an integer >= 0.
    key : int
        The bootstrap stream's key, an integer >= 0.
    draws : int
        The number of bootstrap draws, an integer >= 100.
    level : float
        The interval's two-sided level, in (0, 1).

    Returns
    -------
    Effect
        kind "difference", n = the number of values.
    """
    if not np.isfinite(threshold):
        raise ValueError(f"threshold must be a finite number, got {threshold!r}")
    mean, low, high = mean_interval(values, seed=seed, key=key, draws=draws, level=level)
    return Effect(mean - threshold, low - threshold, high - threshold, level, int(np.size(values)), draws)


def proportion_effect(count: int, n: int, threshold: float = 0.0, *, at_most: bool = False,
                      level: float = LEVEL) -> Effect:
    """The effect of a share count / n of independent trials against a fixed number, with its exact interval.

    The interval is the exact two-sided Clopper-Pearson interval (Clopper & Pearson 1934) of the share, not a bootstrap
    one (a bootstrap interval of a share with one or two successes collapses onto 0). Both ends are CERTIFY's one-sided
    bound (`certify.lower_confidence_bound`, Cohen et al.) at (1 - level) / 2: the upper end is one minus the lower
    bound on the share of failures (the Beta quantiles' symmetry).

    Parameters
    ----------
    count : int
        The number of successes, an integer in [0, n].
    n : int
        The number of trials, an integer >= 1.
    threshold : float
        The fixed number, finite.
    at_most : bool
        False: the claim is that the share exceeds the threshold, and the effect is share - threshold. True: the
        claim is that the share stays at most the threshold (e.g. a certificate's soundness: the share of certified
        regions holding a verified violation is 0), and the effect is threshold - share.
    level : float
        The interval's two-sided level, in (0, 1).

    Returns
    -------
    Effect
        kind "difference", draws = 0 (no bootstrap).
    """
    n = check_count(n, "n")
    if isinstance(count, bool) or not isinstance(count, (int, np.integer)) or not 0 <= count <= n:
        raise ValueError(f"count must be an integer in [0, n] = [0, {n}], got {count!r}")
    if not np.isfinite(threshold):
        raise ValueError(f"threshold must be a finite number, got {threshold!r}")
    level = check_probability(level, "level")
    tail = (1.0 - level) / 2.0
    share = count / n
    low = float(lower_confidence_bound(count, n, tail))
    high = 1.0 - float(lower_confidence_bound(n - count, n, tail))
    if at_most:
        return Effect(threshold - share, threshold - high, threshold - low, level, n, 0)
    return Effect(share - threshold, low - threshold, high - threshold, level, n, 0)


def bootstrap_effect(statistic: Callable[[np.ndarray], float], n: int, *, seed: int = 0, key: int = 0,
                     draws: int = DRAWS, level: float = LEVEL) -> Effect:
    """Any effect statistic(indices) of n paired inputs (a difference of medians, say), with its bootstrap interval.

    The interval is the percentile bootstrap interval of the statistic over resamples of the input positions.

    Parameters
    ----------
    statistic : callable
        indices -> float: the effect on the inputs at the given positions, an int array of shape (n,); it must return
        a finite number for every resample.
    n : int
        The number of inputs, an integer >= 1.
    seed : int
        The bootstrap stream's seed, an integer >= 0.
    key : int
        The bootstrap stream's key, an integer >= 0.
    draws : int
        The number of bootstrap draws, an integer >= 100.
    level : float
        The interval's two-sided level, in (0, 1).

    Returns
    -------
    Effect
        The estimate statistic(arange(n)) and the percentile interval of statistic over `draws` resamples of the
        positions (`resample_indices`); kind "difference".
    """
    if not callable(statistic):
        raise TypeError(f"statistic must be a callable indices -> float, got {type(statistic).__name__}")
    level = check_probability(level, "level")
    draws = check_count(draws, "draws", 100)
    picks = resample_indices(n, draws, seed, key)
    boot = np.array([float(statistic(row)) for row in picks])
    estimate = float(statistic(np.arange(n)))
    if not (np.isfinite(boot).all() and np.isfinite(estimate)):
        raise ValueError("statistic must return a finite number for every resample")
    return Effect(estimate, *_interval(boot, level), level, n, draws)


def mean_interval(values: np.ndarray, *, seed: int = 0, key: int = 0, draws: int = DRAWS,
                  level: float = LEVEL) -> tuple[float, float, float]:
    """One method's mean over n inputs with its percentile bootstrap interval (e.g. a headline ACR).

    The draws come from the stream (seed, key, "bootstrap").

    Parameters
    ----------
    values : numpy.ndarray, shape (n,)
        The method's per-input values, finite.
    seed : int
        The bootstrap stream's seed, an integer >= 0.
    key : int
        The bootstrap stream's key, an integer >= 0.
    draws : int
        The number of bootstrap draws, an integer >= 100.
    level : float
        The interval's two-sided level, in (0, 1).

    Returns
    -------
    tuple of float
        (mean, low, high).
    """
    v = _values(values, "values")
    if v.shape[0] != 1:
        raise ValueError(f"values must be one method's per-input values, shape (n,), got shape {np.shape(values)}")
    draws = check_count(draws, "draws", 100)
    level = check_probability(level, "level")
    boot = resample_weights(v.shape[1], draws, seed, key) @ v[0]
    return (float(v.mean()), *_interval(boot, level))



def input_matrix(frames: list, column: str) -> np.ndarray:
    """The per-input values value_i 1(correct_i) of one method, one row per frame (e.g. per σ).

    This is what ACR (column "radius") or ACR~ ("radius_proxy") averages, or 1(correct, radius >= r) as 0/1 for
    certified accuracy (a boolean column). Rows are aligned by idx (sorted).

    Parameters
    ----------
    frames : list of pandas.DataFrame
        k >= 1 frames of per-input rows with columns "idx", "correct" and `column`, every frame holding the same
        inputs (idx), each once.
    column : str
        The column holding the values.

    Returns
    -------
    numpy.ndarray of float64, shape (k, n)
        Row j: frame j's values times correctness, by increasing idx.
    """
    if not frames:
        raise ValueError("frames must hold at least one frame of per-input rows")
    rows, ref = [], None
    for k, f in enumerate(frames):
        missing = [c for c in ("idx", "correct", column) if c not in getattr(f, "columns", ())]
        if missing:
            raise ValueError(f"frames[{k}] must be a DataFrame with columns idx, correct and {column!r}; it lacks "
                             f"{missing}")
        f = f.sort_values("idx")
        idx = f["idx"].to_numpy()
        if len(np.unique(idx)) != len(idx):
            raise ValueError(f"frames[{k}] holds an input (idx) more than once")
        if ref is None:
            ref = idx
        elif not np.array_equal(idx, ref):
            raise ValueError(f"frames[{k}] holds other inputs than frames[0] (a paired comparison needs the same "
                             f"test inputs): {len(np.setxor1d(idx, ref))} idx differ")
        rows.append(f[column].to_numpy(dtype=np.float64) * f["correct"].to_numpy(dtype=bool))
    return np.stack(rows)
