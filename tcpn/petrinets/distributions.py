"""Random delays: the distributions a transition or an output arc may draw its delay from.

Each distribution checks its parameters when built (a clear :class:`InputError` naming the
parameter) and draws with a NumPy :class:`numpy.random.Generator`, so every draw comes
from the simulator's seeded stream. ``cpn_ml()`` gives the CPN Tools spelling used by the
exporter.

>>> import numpy as np
>>> rng = np.random.default_rng(1)
>>> d = Exponential(mean=2.0)
>>> round(d.sample(rng), 3), d.mean
(2.146, 2.0)
>>> Uniform(3.0, 1.0)
Traceback (most recent call last):
...
tcpn.errors.InputError: Uniform: low (3.0) must not exceed high (1.0)
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from tcpn.errors import InputError

__all__ = ["Discrete", "Distribution", "Empirical", "Exponential", "Interval", "TruncatedNormal",
           "Uniform"]


def _finite(owner: str, **values: float) -> None:
    for key, value in values.items():
        if not isinstance(value, int | float) or not math.isfinite(value):
            raise InputError(f"{owner}: {key} must be a finite number, got {value!r}")


class Distribution:
    """A non-negative random delay with a seeded ``sample`` and a known ``mean``."""

    def sample(self, rng: np.random.Generator) -> float:
        """Draw one delay."""
        raise NotImplementedError

    @property
    def mean(self) -> float:
        """The expected delay."""
        raise NotImplementedError

    def cpn_ml(self) -> str:
        """The CPN ML expression CPN Tools evaluates for this distribution."""
        raise NotImplementedError


@dataclass(frozen=True)
class Exponential(Distribution):
    """Exponential delay with the given ``mean`` (rate = 1/mean)."""

    mean_value: float

    def __init__(self, mean: float):
        _finite("Exponential", mean=mean)
        if mean <= 0:
            raise InputError(f"Exponential: mean must be > 0, got {mean!r}")
        object.__setattr__(self, "mean_value", float(mean))

    def sample(self, rng: np.random.Generator) -> float:
        return float(rng.exponential(self.mean_value))

    @property
    def mean(self) -> float:
        return self.mean_value

    def cpn_ml(self) -> str:
        return f"exponential({1.0 / self.mean_value!r})"


@dataclass(frozen=True)
class Uniform(Distribution):
    """Uniform delay on ``[low, high]``."""

    low: float
    high: float

    def __post_init__(self) -> None:
        _finite("Uniform", low=self.low, high=self.high)
        if self.low < 0:
            raise InputError(f"Uniform: low must be >= 0 for a delay, got {self.low!r}")
        if self.low > self.high:
            raise InputError(f"Uniform: low ({self.low}) must not exceed high ({self.high})")

    def sample(self, rng: np.random.Generator) -> float:
        return float(rng.uniform(self.low, self.high))

    @property
    def mean(self) -> float:
        return (self.low + self.high) / 2

    def cpn_ml(self) -> str:
        return f"uniform({float(self.low)!r}, {float(self.high)!r})"


@dataclass(frozen=True)
class Interval(Uniform):
    """CPN Tools 4's time interval ``@+[low,high]``: a delay anywhere in ``[low, high]``.

    The simulator draws it uniformly (as CPN Tools does); the explorer takes it as a
    nondeterministic choice among its points (``explore(net, delay_points=m)``,
    :mod:`tcpn.petrinets.statespace.intervals`). Integer bounds (``integer``) are CPN Tools' integer
    interval, exported as ``@+[low,high]``, its points integers; other bounds export as
    ``@++uniform(low, high)``.

    >>> Interval(2, 5).cpn_ml(), Interval(2, 5).integer, Interval(0.5, 1.0).integer
    ('[2,5]', True, False)
    """

    @property
    def integer(self) -> bool:
        """Whether both bounds are whole numbers (CPN Tools' integer time interval)."""
        return float(self.low).is_integer() and float(self.high).is_integer()

    def cpn_ml(self) -> str:
        # CPN Tools' intervals are integer; a real one is exported as the uniform draw
        # CPN Tools simulates alike (its state-space tool then refuses it)
        if not self.integer:
            return super().cpn_ml()
        return f"[{int(self.low)},{int(self.high)}]"


@dataclass(frozen=True)
class TruncatedNormal(Distribution):
    """Normal delay truncated at 0 (redrawn until non-negative, as a delay must be)."""

    mu: float
    sigma: float

    def __post_init__(self) -> None:
        _finite("TruncatedNormal", mu=self.mu, sigma=self.sigma)
        if self.sigma < 0:
            raise InputError(f"TruncatedNormal: sigma must be >= 0, got {self.sigma!r}")
        if self.sigma == 0 and self.mu < 0:
            raise InputError("TruncatedNormal: sigma = 0 and mu < 0 leaves no non-negative value")
        if self.sigma > 0 and self.mu / self.sigma < -6:
            raise InputError(
                f"TruncatedNormal: mu/sigma = {self.mu / self.sigma:.1f} puts almost no mass "
                "at or above 0; give a distribution that can produce a delay"
            )

    def sample(self, rng: np.random.Generator) -> float:
        while True:
            value = float(rng.normal(self.mu, self.sigma))
            if value >= 0:
                return value

    @property
    def mean(self) -> float:
        if self.sigma == 0:
            return self.mu
        alpha = -self.mu / self.sigma
        pdf = math.exp(-alpha * alpha / 2) / math.sqrt(2 * math.pi)
        tail = 0.5 * math.erfc(alpha / math.sqrt(2))
        return self.mu + self.sigma * pdf / tail

    def cpn_ml(self) -> str:
        return f"Real.max(0.0, normal({float(self.mu)!r}, {float(self.sigma) ** 2!r}))"


@dataclass(frozen=True)
class Discrete(Distribution):
    """One of ``values`` with the given ``weights`` (equal weights when omitted)."""

    values: tuple[float, ...]
    weights: tuple[float, ...]

    def __init__(self, values: Sequence[float], weights: Sequence[float] | None = None):
        values_t = tuple(values)
        weights_t = tuple(weights) if weights is not None else (1.0,) * len(values_t)
        if not values_t:
            raise InputError("Discrete: needs at least one value")
        if len(weights_t) != len(values_t):
            raise InputError(
                f"Discrete: {len(values_t)} values but {len(weights_t)} weights"
            )
        for i, (v, w) in enumerate(zip(values_t, weights_t, strict=True)):
            _finite("Discrete", **{f"values[{i}]": v, f"weights[{i}]": w})
            if v < 0:
                raise InputError(f"Discrete: values[{i}] = {v!r} is a negative delay")
            if w < 0:
                raise InputError(f"Discrete: weights[{i}] = {w!r} is negative")
        if sum(weights_t) <= 0:
            raise InputError("Discrete: weights sum to zero")
        object.__setattr__(self, "values", values_t)
        object.__setattr__(self, "weights", weights_t)

    def sample(self, rng: np.random.Generator) -> float:
        total = sum(self.weights)
        index = rng.choice(len(self.values), p=[w / total for w in self.weights])
        return float(self.values[int(index)])

    @property
    def mean(self) -> float:
        total = sum(self.weights)
        return sum(v * w for v, w in zip(self.values, self.weights, strict=True)) / total

    def cpn_ml(self) -> str:
        values = sorted(set(self.values))
        consecutive = values == list(range(int(values[0]), int(values[-1]) + 1))
        if consecutive and len(set(self.weights)) == 1 and len(values) == len(self.values):
            return f"discrete({int(values[0])}, {int(values[-1])})"
        raise InputError(
            "Discrete: CPN Tools' discrete(a, b) draws equally likely consecutive integers; "
            "this distribution has other values or weights"
        )


@dataclass(frozen=True)
class Empirical(Distribution):
    """A delay resampled uniformly from measured ``samples`` (e.g. measured service times)."""

    samples: tuple[float, ...]

    def __init__(self, samples: Sequence[float]):
        samples_t = tuple(float(s) for s in samples)
        if not samples_t:
            raise InputError("Empirical: needs at least one sample")
        for i, s in enumerate(samples_t):
            _finite("Empirical", **{f"samples[{i}]": s})
            if s < 0:
                raise InputError(f"Empirical: samples[{i}] = {s!r} is a negative delay")
        object.__setattr__(self, "samples", samples_t)

    def sample(self, rng: np.random.Generator) -> float:
        return self.samples[int(rng.integers(len(self.samples)))]

    @property
    def mean(self) -> float:
        return sum(self.samples) / len(self.samples)

    def cpn_ml(self) -> str:
        raise InputError("Empirical: CPN Tools has no empirical distribution function")
