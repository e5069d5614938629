"""Every kind of measure, by the outcome kind it reads (a new measure is a module and one entry).

``register`` adds one at run time (a plug-in or a test); ``measure_of`` looks one up and names the
known kinds when it is not there.
"""

from __future__ import annotations

from oloproof.measures import auc, mean_score, pass_rate, quantile, regression_error
from oloproof.measures.base import Measure

MEASURES: dict[str, Measure] = {
    measure.name: measure
    for measure in (
        pass_rate.MEASURE,
        mean_score.MEASURE,
        quantile.MEASURE,
        auc.MEASURE,
        regression_error.MAE,
        regression_error.RMSE,
    )
}


def measure_of(kind: str) -> Measure:
    """The measure of outcomes of ``kind``; a KeyError naming the known kinds otherwise."""
    try:
        return MEASURES[kind]
    except KeyError:
        raise KeyError(f"no measure reads outcomes of kind '{kind}'; known: {', '.join(sorted(MEASURES))}") from None


def register(measure: Measure) -> None:
    """Add ``measure`` (replacing none: a name already taken is a programming error)."""
    if measure.name in MEASURES:
        raise ValueError(f"a measure named '{measure.name}' is already registered")
    MEASURES[measure.name] = measure
