"""Falsifiable numerical checks of the theory behind ANCER, RANCER and UCAN (notebook 01).

Every check function takes `mc_samples` (the Monte Carlo budget, from `profiles.Profile.mc_samples`) and
`seed`, draws its own random instances from a generator keyed by (seed, check id) so that results do not
depend on the order in which checks run, and returns a `CheckResult`: what was measured, the value, the
bound it is compared with, the slack (bound - value for an upper bound, value - bound for a lower bound,
-|value - reference| for an equality), the tolerance and why, and PASS/FAIL (PASS iff slack >= -tol).

Each check also takes one keyword argument, `formula`, the formula under test, defaulting to the correct
(or corrected) one, or for a constant that is sound as printed (ANCER Prop. 6, Cor. 3) to the printed one.
Passing a wrong formula must make the check FAIL. A PASS/FAIL is about one check; the verdict on a printed
formula (`registry.form_verdict`) uses honest words: a falsified bound is "unsound", a falsified identity
"fails", a bound that passes its soundness check but fails its tightness check "sound but not
tight". `TYPO_DEMOS` lists the seeds' typos found this way and `tests/test_proof_checks.py` injects wrong
formulas. Base classifiers are chosen so that the smoothed classifier is known in closed form:

- half-spaces f(z) = 1[w.z + b >= 0]: under N(0, Σ), g = Φ((w.x + b) / ||Σ^½ w||) (the extremal f* of
  Prop. 2's proof); under U[-λ, λ] with w = e_k, g = clip((x_k - c + λ_k) / (2 λ_k), 0, 1);
- random rectilinear "grid" classifiers (each cell of a random grid, in a possibly rotated frame V, gets
  a random class): g^c = sum over cells of class c of a product of 1-D interval probabilities, exact for
  N(0, V diag(σ²) V^T) and for axis-aligned U[-λ, λ].

References for App. D and RANCER are independent of `geometry` and `rotated`: SLSQP for the ellipsoid
problems (convex QCQPs), HiGHS linear programs for the cross-polytope ones.

The checks are split by paper; this package re-exports every public name of its modules:

- `common`: `CheckResult`, tolerances and RNG helpers, random instances, the closed-form base classifiers,
  Lipschitz-ratio probing, certificate-margin machinery, Monte Carlo volumes and the solver references shared
  by more than one paper;
- `ancer`: the ANCER paper (seed 000): §4-5, App. B.1 and App. D, and notebook 01's App. D figure data;
- `rancer`: RANCER (seed 002): Eq. 3, Eq. 5, Eq. 6 and LargestOutSubset;
- `ucan`: UCAN (seed 003): Thm. 3.2, Cor. 3.3 and Thm. C.2;
- `registry`: `CHECKS` (every check, by paper section, in notebook order), `run_section` / `run_all`, the
  results table and verdicts, and `TYPO_DEMOS`.

The blog post (seed 004) restates ANCER's setting with no results of its own, so no checks are drawn from it.
"""
from __future__ import annotations

from . import ancer, common, rancer, registry, ucan
from .ancer import *  # noqa: F401,F403
from .common import *  # noqa: F401,F403
from .rancer import *  # noqa: F401,F403
from .registry import *  # noqa: F401,F403
from .ucan import *  # noqa: F401,F403

__all__ = common.__all__ + ancer.__all__ + rancer.__all__ + ucan.__all__ + registry.__all__
