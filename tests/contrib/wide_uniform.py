"""A toy noise family, written as CONTRIBUTING.md's walkthrough says a new family is written: one class (with its
certificate's radius function beside it) and one `families.register` line, no other file touched. U[-2λ, 2λ]^d
certifies ℓ1: ANCER Corollary 2 with half-widths 2 θ_i gives {||δ ⊘ θ||_1 <= 2 (2 p_A - 1)}, twice the uniform's
gap."""
from __future__ import annotations

import math

from ancer_lite.core import families
from ancer_lite.core.validation import check_positive


def wide_uniform_l1_radius(p_a, lam):
    """The toy's Table 1-like row: R = 2 λ (2 p_A - 1), ANCER Corollary 2 for U[-2λ, 2λ]^d."""
    p = families.check_p_a(p_a)
    return families.scalar_or_array(2.0 * check_positive(lam, "lam") * families.uniform_gap(p))


class WideUniform(families.NoiseFamily):
    """U[-2λ, 2λ]^d, a toy family certifying ℓ1: ANCER Corollary 2 with half-widths 2 θ_i certifies
    {||δ ⊘ θ||_1 <= 2 (2 p_A - 1)}, so its gap is twice the uniform's."""

    name, ancer_norm = "wide_uniform", "l1"
    rows = (families.Table1Row.of("wide_uniform", "l1", "ANCER Corollary 2 (half-width 2λ)", wide_uniform_l1_radius),)

    def draw(self, out, generator=None, a=None):
        return out.uniform_(-1.0, 1.0, generator=generator).mul_(2.0)

    def unit_variance_lambda(self, d=None, a=None):
        return math.sqrt(3.0) / 2.0

    def gap(self, p):
        return 2.0 * families.uniform_gap(p)
