"""A toy smoothing method, written as CONTRIBUTING.md's walkthrough says a new method is written: one class and
one `registry.register` line, no other file touched. Per input, it tries σ = m θ0 for each multiple m of a grid
and keeps the σ with the largest Monte Carlo estimate of Cohen et al.'s radius σ · gap (the proxy that Isotropic
DD ascends), drawing from the input's own stream."""
from __future__ import annotations

from dataclasses import dataclass

import torch

from ancer_lite.methods.optimize import proxy_gap, smoothed_probabilities
from ancer_lite.methods.registry import SmoothingMethod


@dataclass(frozen=True)
class GridSigma(SmoothingMethod):
    """One σ per input from `grid` (multiples of θ0), the one with the largest estimated radius σ · gap."""

    grid: tuple[float, ...] = (0.5, 1.0, 2.0)
    samples: int = 64

    def optimize(self, model, x, noise, theta0, settings, seed, keys, start):
        draws = self.streams(noise, x, seed, keys)
        best = torch.full((len(x),), float(theta0))
        score = torch.full((len(x),), -float("inf"))
        with torch.no_grad():
            for multiple in self.grid:
                sigma = multiple * float(theta0)
                theta = torch.full((len(x),) + (1,) * (x.ndim - 1), sigma, device=x.device)
                probs = smoothed_probabilities(model, x, theta, noise, self.samples, draws)
                radius = sigma * proxy_gap(probs, noise).cpu()
                better = radius > score
                best[better], score[better] = sigma, radius[better]
        return best
