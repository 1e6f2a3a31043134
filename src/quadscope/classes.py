"""Growth classes: one record per class, read by everything that fits, names, draws or judges one.

Contract: `REGISTRY` holds the built-in `GrowthClass`es simplest first; `NAMES`
is their names in that order, and `INCONCLUSIVE` the verdict that is none of
them. Everything here is pure: numpy in, numpy out, no I/O; numpy itself is imported
where a curve is first evaluated, not with the module, so the names and orders
(all that `quadscope --help` reads) cost no numpy. A `GrowthClass`
evaluates its own curve (`evaluate`, the one place a + b·f(n) is computed),
maps costs back to n (`linearise`), normalises itself for fitting
(`normalised`) and renames its size variable (`named`, "n log n" -> "i log i").
Fitting takes the registry as a parameter (default `REGISTRY`), so a test or a
caller can fit against another set of classes without touching this module.
`Registry.parse(text)` is the one reader of a class a person wrote (`--fail-above`,
`assert_scales(at_most=)`, the pytest fixture and marker): it accepts every spelling
quadscope prints or a reader would write ("n²", "n^2", "quadratic", "O(n log n)",
"nlogn", "√n", "sqrt(n)") and raises `UnknownClassError`, one sentence with examples,
for anything else. `get` stays exact: it reads stored names. `names_in(text)` and
`labels_in(text)` write every class in a free text (the doctor's class cells) by its
name, for JSON, or by its label, for people.

How to add a class: add one `GrowthClass` to `_BUILTIN`, where its `order`
puts it (the registry refuses classes out of order: selection prefers the
earlier, simpler one on a tie). The entry needs
- `name`, writing the size as the word "n" ("n^1.5"): it is what fits, stores,
  `--fail-above` and reports use, and `named` renames that word;
- `label` (the name in mathematical type, "n¹·⁵", what every report prints,
  renamed by `labelled` and `Registry.relabel`) and `words` ("n to the
  1.5"), for text meant for people;
- `order` (k, j) with f(n) growing as n^k·(log n)^j; (inf, 0) outgrows every
  power. It decides the position and the derived properties `growing`,
  `sublinear`, `linear_or_slower` and `superlinear` (what doctor calls
  pathological and reports paint red);
- `f`, vectorised over a float array, finite and positive for n ≥ 1;
- `inverse` (f⁻¹, for linearised plots) when f is invertible;
- `total`, how Σ f(i) over launches i = 1..K grows, for accumulate mode;
- `settling_span` when adaptive mode must see n span that factor before a
  slow-growth verdict is final;
- `max_n`, `ratio`, `scaled` and `min_visible_sizes` only when f overflows
  floats at sizes one can sweep, as cⁿ does; `bases` (a grid of c) makes the
  class one with a fitted base, specialised by `with_base(c)` (n_coef 3).
`n_coef` counts the fitted coefficients (a and b: 2); fitting itself fits
a + b·f(n), so a class with more coefficients needs a fitting method too.
Besides the constant "1" (the null every fit is tested against) and "n" (the
linear term fitting and doctor look for by name), nothing in quadscope names a
class. tests/test_classes.py fits data of a class that is not built in by
handing `fit_metric` a registry that holds it.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from itertools import pairwise
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np

INCONCLUSIVE = "inconclusive"

# A class is fitted on f(n)/f(n_max); a size whose ratio is below this carries no shape.
VISIBLE_RATIO = 1e-9

Curve = Callable[["np.ndarray"], "np.ndarray"]


@dataclass(frozen=True, slots=True)
class GrowthClass:
    """One growth class, cost = a + b·f(n) (see "How to add a class" above for each field)."""

    name: str
    label: str
    words: str
    order: tuple[float, float]
    f: Curve
    inverse: Curve | None = None
    n_coef: int = 2
    total: str | None = None
    settling_span: float = 0.0
    max_n: float = math.inf  # largest n_max at which the class can be fitted at all
    ratio: Callable[[np.ndarray, float], np.ndarray] | None = None  # f(n)/f(n_ref), overflow-free
    scaled: Callable[[np.ndarray, np.ndarray], np.ndarray] | None = None  # b·f(n), overflow-free
    min_visible_sizes: int = 0  # sizes with f(n)/f(n_max) ≥ VISIBLE_RATIO needed to fit
    aliases: tuple[str, ...] = ()  # older names that still mean this class (stored fits, gates)
    bases: tuple[float, ...] = ()  # f(n) = cⁿ with c fitted over this grid (empty: no base)
    base: float | None = None  # the fitted c of a class specialised by `with_base`

    @property
    def growing(self) -> bool:
        """Grows with n at all (log n and up)."""
        return self.order > (0.0, 0.0)

    @property
    def sublinear(self) -> bool:
        """Grows slower than n (the constant included)."""
        return self.order < (1.0, 0.0)

    @property
    def linear_or_slower(self) -> bool:
        """Grows no faster than n."""
        return self.order <= (1.0, 0.0)

    @property
    def superlinear(self) -> bool:
        """Faster than n by a power, not just a log factor: n² and up, not n log n."""
        return self.order[0] > 1.0

    @property
    def outgrows_powers(self) -> bool:
        """Faster than every power of n: a free power law's exponent runs to its bound."""
        return self.order[0] == math.inf

    def with_base(self, c: float) -> GrowthClass:
        """This exponential class with its base fixed at c: f(n) = cⁿ, computed in logs."""
        if not self.bases:
            raise ValueError(f"{self.name} has no base to fit")
        ln_c = math.log(c)
        return replace(
            self, base=c, f=lambda n: _exp_ln(_float(n) * ln_c),
            inverse=lambda u: _log_base(u, ln_c),
            ratio=lambda n, n_ref: _exp_ln((_float(n) - n_ref) * ln_c),
            scaled=lambda b, n: _exp_scaled(b, _float(n) * ln_c),
            max_n=_LN_MAX / ln_c,
        )

    def normalised_bases(self, n: np.ndarray, n_ref: float,
                         cs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """`with_base(c).normalised(n, n_ref)` for every base c in `cs` at once.

        Returns g, shaped (len(cs), n.size), and whether each row can be fitted
        (where `normalised` would return None, the row is all NaN and False).
        """
        import numpy as np

        if not self.bases:
            raise ValueError(f"{self.name} has no base to fit")
        ln_c = np.log(np.asarray(cs, dtype=float))[:, None]
        n_ = np.asarray(n, dtype=float)[None, :]
        with np.errstate(over="ignore"):
            g = np.exp((n_ - n_ref) * ln_c)
        ok = (n_ref * ln_c[:, 0] <= _LN_MAX) & np.isfinite(np.exp(np.minimum(n_ref * ln_c[:, 0],
                                                                           _LN_MAX)))
        ok &= np.count_nonzero(g >= VISIBLE_RATIO, axis=1) >= self.min_visible_sizes
        return np.where(ok[:, None], g, np.nan), ok

    def phrase(self) -> str:
        """How a person would say it: "quadratic", or "exponential, ×1.62 per step"."""
        if self.base is not None:
            return f"{self.words}, ×{self.base:.3g} per step"
        return self.words

    def named(self, var: str) -> str:
        """The name with its size variable renamed, e.g. "n log n" -> "i log i"."""
        return re.sub(r"\bn\b", var, self.name)

    def labelled(self, var: str = "n") -> str:
        """The label with its size variable renamed: "n log n" -> "i log i", "cⁿ" -> "cⁱ"."""
        text = re.sub(r"(?<![A-Za-z])n(?![A-Za-z])", var, self.label)
        return text.replace("ⁿ", _SUPERSCRIPT_VAR.get(var, f"^{var}"))

    def evaluate(
        self, a: float | np.ndarray, b: float | np.ndarray, n: Sequence[float] | np.ndarray
    ) -> np.ndarray:
        """a + b·f(n), shaped (*a.shape, n.size): vectorised over a and b, safe where f overflows."""
        import numpy as np

        a_ = np.asarray(a, dtype=float)[..., None]
        b_ = np.asarray(b, dtype=float)[..., None]
        n_ = np.asarray(n, dtype=float)
        with np.errstate(over="ignore"):
            return a_ + (self.scaled(b_, n_) if self.scaled is not None else b_ * self.f(n_))

    def normalised(self, n: np.ndarray, n_ref: float) -> tuple[np.ndarray, float] | None:
        """(f(n)/f(n_ref), f(n_ref)), or None when the class cannot be fitted at these sizes."""
        import numpy as np

        if n_ref > self.max_n:
            return None
        f_ref = float(self.f(np.array([n_ref]))[0])
        if not np.isfinite(f_ref) or f_ref <= 0:
            return None
        g = self.ratio(n, n_ref) if self.ratio is not None else self.f(n) / f_ref
        # Negligible at all but one or two sizes, the class would just fit a step at the top.
        if np.count_nonzero(g >= VISIBLE_RATIO) < self.min_visible_sizes:
            return None
        return g, f_ref

    def linearise(self, a: float, b: float, values: Sequence[float] | np.ndarray) -> np.ndarray:
        """f⁻¹((y − a)/b): a cost mapped to something linear in n, for "√time against n" plots.

        Negative (y − a)/b are clipped to 0 first, results to ≥ 0. Without an
        inverse (the constant), or with b ≤ 0, every entry is NaN.
        """
        import numpy as np

        y = np.asarray(values, dtype=float)
        if self.inverse is None or b <= 0:
            return np.full(y.shape, np.nan)
        u = np.maximum((y - a) / b, 0.0)
        with np.errstate(over="ignore", divide="ignore"):
            return np.maximum(self.inverse(u), 0.0)


@dataclass(frozen=True, slots=True)
class Registry:
    """The growth classes a fit chooses among, simplest first; the first is the constant "1"."""

    classes: tuple[GrowthClass, ...]

    def __post_init__(self) -> None:
        names = [c.name for c in self.classes]
        if not self.classes or names[0] != "1" or self.classes[0].growing:
            raise ValueError('a registry starts with the constant "1": every fit is tested against it')
        if len(set(names)) != len(names) or INCONCLUSIVE in names:
            raise ValueError(f"class names must be distinct and not {INCONCLUSIVE!r}: {names}")
        for prev, cur in pairwise(self.classes):
            if not prev.order < cur.order:
                raise ValueError(f"{cur.name} must grow faster than {prev.name}, which precedes it")

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(c.name for c in self.classes)

    def __iter__(self) -> Iterator[GrowthClass]:
        return iter(self.classes)

    def __len__(self) -> int:
        return len(self.classes)

    def __contains__(self, name: object) -> bool:
        return self.get(name) is not None

    def __getitem__(self, name: str) -> GrowthClass:
        found = self.get(name)
        if found is None:
            raise KeyError(name)
        return found

    def get(self, name: object) -> GrowthClass | None:
        """The class called `name` (or one of its aliases), or None for INCONCLUSIVE, "", unknown."""
        return next((c for c in self.classes if c.name == name or name in c.aliases), None)

    def parse(self, text: str) -> GrowthClass:
        """The class `text` names in any spelling quadscope prints (see the module docstring)."""
        __tracebackhide__ = True  # a test's bad `at_most` fails at the test's line, not here
        if not isinstance(text, str):  # `at_most=2` was AttributeError: no attribute 'strip'
            raise UnknownClassError(f"{text!r} is not a class: write it as text, e.g. "
                                    f"{CLASS_EXAMPLES}")
        key = spelling_key(text)
        key = spelling_key(_EXTRA_SPELLINGS.get(key, key))
        for growth in self.classes:
            spellings = (growth.name, growth.label, growth.words, *growth.aliases)
            if key and any(spelling_key(s) == key for s in spellings):
                return growth
        raise UnknownClassError(f"{text!r} is not a class; write one as quadscope prints "
                                f"it, e.g. {CLASS_EXAMPLES}")

    def index(self, name: str) -> int:
        """Position of `name` (or an alias): a larger index grows faster."""
        return self.names.index(self[name].name)

    def of(self, name: str, coefficients: Mapping[str, float]) -> GrowthClass | None:
        """The class of a fit, specialised by its fitted base `c` when it has one."""
        growth = self.get(name)
        if growth is not None and growth.bases and "c" in coefficients:
            return growth.with_base(float(coefficients["c"]))
        return growth

    def rename(self, name: str, var: str) -> str:
        """`named(var)` of the class called `name`; any other text is returned as it is."""
        found = self.get(name)
        return found.named(var) if found is not None else name

    def relabel(self, name: str, var: str = "n") -> str:
        """`labelled(var)` of the class called `name` (what reports print: "n²");
        any other text is returned as it is."""
        found = self.get(name)
        return found.labelled(var) if found is not None else name

    def names_in(self, text: str, variables: str = "ni") -> str:
        """`text` (a table cell: "plain n, libs n²? (k=1.9)", "probe √i") with every class
        label in it written as the class's name ("n^2", "sqrt i"), for files machines read;
        `variables` the size variables labels may be written in. `labels_in` undoes it."""
        return self._swapped(text, variables, to_names=True)

    def labels_in(self, text: str, variables: str = "ni") -> str:
        """`text` with every class name in it written as its label: `names_in` undone."""
        return self._swapped(text, variables, to_names=False)

    def _swapped(self, text: str, variables: str, *, to_names: bool) -> str:
        for growth in self.classes:
            for var in variables:
                label, name = growth.labelled(var), growth.named(var)
                if label != name:
                    old, new = (label, name) if to_names else (name, label)
                    text = re.sub(rf"(?<![\w^√]){re.escape(old)}(?![\w^·]|\.\d)", new, text)
        return text

    def with_class(self, extra: GrowthClass) -> Registry:
        """This registry plus `extra`, placed by its order."""
        return Registry(tuple(sorted((*self.classes, extra), key=lambda c: c.order)))


class UnknownClassError(ValueError):
    """A class written in no spelling `Registry.parse` knows; the message lists examples."""


_SUPERSCRIPT_VAR = {"n": "ⁿ", "i": "ⁱ"}  # a size variable as the exponent of cⁿ
# Superscripts as written in labels ("n²", "n¹·⁵", "cⁿ"); a "·" inside a run is a decimal point.
_SUPERSCRIPT = str.maketrans("⁰¹²³⁴⁵⁶⁷⁸⁹ⁿ·", "0123456789n.")
_SUPERSCRIPT_RUN = re.compile("[⁰¹²³⁴⁵⁶⁷⁸⁹ⁿ](?:[⁰¹²³⁴⁵⁶⁷⁸⁹ⁿ·]*[⁰¹²³⁴⁵⁶⁷⁸⁹ⁿ])?")
_BIG_O = re.compile(r"^[oθΘ]\s*\((.*)\)$")
_EXTRA_SPELLINGS = {"nlgn": "n log n", "lgn": "log n", "loglinear": "n log n", "n^1": "n",
                    "n^0.5": "sqrt n",
                    "n^1/2": "sqrt n", "n^0": "1", "const": "1", "e^n": "c^n"}
CLASS_EXAMPLES = "1, log n, √n, n, n log n (or nlogn), n² (or n^2, quadratic, O(n^2)), n³, cⁿ"


def spelling_key(text: str) -> str:
    """`text` reduced to what every spelling of one class shares: "O(n²)" and "n ^ 2" → "n^2"."""
    key = _SUPERSCRIPT_RUN.sub(lambda m: "^" + m.group(0).translate(_SUPERSCRIPT),
                               text.strip().lower())
    big_o = _BIG_O.match(key)
    if big_o:
        key = big_o.group(1)
    key = key.replace("**", "^").replace("√", "sqrt")
    return re.sub(r"[\s·*()_\-]", "", key)


# The curves import numpy where they run: a repeated import is a dictionary look-up.
def _float(n: np.ndarray) -> np.ndarray:
    import numpy as np

    return np.asarray(n, dtype=float)


def _log_n(n: np.ndarray) -> np.ndarray:
    import numpy as np

    # Logs are natural; log n is clipped at n = 1 so that it never goes negative.
    return np.log(np.maximum(_float(n), 1.0))


def _ones(n: np.ndarray) -> np.ndarray:
    import numpy as np

    return np.ones_like(_float(n))


def _sqrt(n: np.ndarray) -> np.ndarray:
    import numpy as np

    return np.sqrt(np.maximum(_float(n), 0.0))


def _square(u: np.ndarray) -> np.ndarray:
    import numpy as np

    return np.square(u)


def _exp(u: np.ndarray) -> np.ndarray:
    import numpy as np

    return np.exp(u)


def _root(u: np.ndarray) -> np.ndarray:
    import numpy as np

    return np.sqrt(u)


def _cube_root(u: np.ndarray) -> np.ndarray:
    import numpy as np

    return np.cbrt(u)


# cⁿ is only fitted while c^n_max is representable with room to spare: e^700 < 1.8e308.
_LN_MAX = 700.0


def _exp_ln(x: np.ndarray) -> np.ndarray:
    import numpy as np

    with np.errstate(over="ignore"):
        return np.exp(x)


def _exp_scaled(b: np.ndarray, x: np.ndarray) -> np.ndarray:
    import numpy as np

    # b·eˣ as e^(x + ln b): finite wherever the product is, far past e^709.
    with np.errstate(divide="ignore", over="ignore"):
        return np.where(b > 0, np.exp(x + np.log(np.where(b > 0, b, 1.0))), 0.0)


def _log_base(u: np.ndarray, ln_c: float) -> np.ndarray:
    import numpy as np

    return np.log(np.maximum(u, np.finfo(float).tiny)) / ln_c


def _log_grid(lo: float, hi: float, count: int) -> tuple[float, ...]:
    # As numpy's exp(linspace(log lo, log hi, count)): evenly in log, both ends exact.
    ln_lo, ln_hi = math.log(lo), math.log(hi)
    step = (ln_hi - ln_lo) / (count - 1)
    return (*(math.exp(ln_lo + i * step) for i in range(count - 1)), math.exp(ln_hi))


# Bases an exponential is fitted over: ×1.05 to ×4 per step, evenly in log c, then refined.
_BASES = _log_grid(1.05, 4.0, 48)


def _inverse_n_log_n(u: np.ndarray) -> np.ndarray:
    # Imported here: every module that reads a Fit imports this one, and scipy.special
    # takes a quarter of a second to load.
    import numpy as np
    from scipy.special import lambertw

    # n·ln n = u  ⇔  n = u / W(u) for u > 0 (Lambert W, principal branch).
    out = np.ones_like(u)
    pos = u > 0
    out[pos] = u[pos] / np.real(lambertw(u[pos]))
    return out


# Settling spans: growth hidden under start-up cost at small n is the classic way to
# be fooled (and growing a program that really is constant costs nothing extra), and
# n and n log n differ by a factor log n that needs decades to show.
_BUILTIN = (
    GrowthClass("1", "1", "constant", (0.0, 0.0), _ones,
                n_coef=1, total="K", settling_span=1000.0),
    GrowthClass("log n", "log n", "logarithmic", (0.0, 1.0), _log_n,
                inverse=_exp, total="K log K", settling_span=1000.0),
    GrowthClass("sqrt n", "√n", "square root", (0.5, 0.0), _sqrt,
                inverse=_square, total="K^1.5", settling_span=100.0),
    GrowthClass("n", "n", "linear", (1.0, 0.0), _float,
                inverse=lambda u: u, total="K²", settling_span=100.0),
    GrowthClass("n log n", "n log n", "linearithmic", (1.0, 1.0),
                lambda n: _float(n) * _log_n(n),
                inverse=_inverse_n_log_n, total="K² log K", settling_span=100.0),
    GrowthClass("n^2", "n²", "quadratic", (2.0, 0.0), lambda n: _float(n) ** 2,
                inverse=_root, total="K³"),
    GrowthClass("n^3", "n³", "cubic", (3.0, 0.0), lambda n: _float(n) ** 3,
                inverse=_cube_root, total="K⁴"),
    GrowthClass("c^n", "cⁿ", "exponential", (math.inf, 0.0), lambda n: _exp_ln(_float(n) * math.log(2)),
                n_coef=3, total="c^K", aliases=("2^n",), bases=_BASES, min_visible_sizes=3,
                max_n=_LN_MAX / math.log(2)).with_base(2.0),
)

REGISTRY = Registry(_BUILTIN)
NAMES: tuple[str, ...] = REGISTRY.names
