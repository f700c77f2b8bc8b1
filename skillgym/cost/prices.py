"""The price table: dollars per million tokens by model, dated, packaged and overridable; a trial's cost."""

from __future__ import annotations

import re
import tomllib
from collections.abc import Sequence
from importlib import resources
from pathlib import Path
from typing import Annotated, Final, Literal, TypeAlias

import msgspec

from ..errors import SkillgymError
from ..model import Data
from ..trace import TokenUsage

PRICES_SCHEMA: Final = 1
SUITE_PRICES: Final = "prices.toml"  # a suite's own table, beside its suite.py, merged over the default
# A model id with a release date or "-latest" after it takes the entry's price: claude-sonnet-4-5-20250929.
_DATED: Final = re.compile(r"-(\d{8}|latest)$")

Rate = Annotated[float, msgspec.Meta(ge=0)]
CostSource: TypeAlias = Literal["cli", "prices"]


class PriceError(SkillgymError, ValueError):
    """A price table that does not read or validate: names the file, the field and the fix."""


class ModelPrice(Data, frozen=True, kw_only=True):
    """One model's prices in US dollars per million tokens.

    ``cache_read`` and ``cache_write`` default to ``input``: a vendor without a cache discount bills cached
    tokens as input. ``taken`` and ``source`` are the table's unless the entry gives its own.
    """

    input: Rate
    output: Rate
    cache_read: Rate | None = None
    cache_write: Rate | None = None
    aliases: tuple[str, ...] = ()
    taken: str | None = None
    source: str | None = None


class _File(Data, frozen=True, kw_only=True):
    schema: int = PRICES_SCHEMA
    taken: str
    source: str = ""
    models: dict[str, ModelPrice] = {}


class PriceTable(Data, frozen=True, kw_only=True):
    """The merged table: each model's entry from the last file that names it (default, suite, --prices)."""

    models: dict[str, ModelPrice]
    files: tuple[str, ...] = ()  # the files merged, first to last

    def price_of(self, model: str | None) -> tuple[str, ModelPrice] | None:
        """The entry for ``model`` (its id, an alias, or its id with a date suffix); None when unpriced."""
        if not model:
            return None
        for name in (model, _DATED.sub("", model)):
            if name in self.models:
                return name, self.models[name]
            for key, entry in self.models.items():
                if name in entry.aliases:
                    return key, entry
        return None


class Cost(Data, frozen=True, kw_only=True):
    """A trial's cost in dollars and where it came from: the agent CLI's own figure, or the price table."""

    usd: float
    source: CostSource
    detail: str = ""  # for "prices": the entry and the date its prices were taken


def default_prices_text() -> str:
    return resources.files("skillgym.cost").joinpath("prices.toml").read_text(encoding="utf-8")


def parse_prices(text: str, where: str) -> _File:
    """One price file, strictly: unknown fields, negative prices and a missing date are errors naming it."""
    try:
        raw = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise PriceError(f"{where}: not valid TOML ({exc}); fix the file or drop it") from exc
    try:
        parsed = msgspec.convert(raw, _File)
    except msgspec.ValidationError as exc:
        raise PriceError(
            f"{where}: {exc}; each [models.<id>] needs input and output in dollars per million tokens "
            '(optional cache_read, cache_write, aliases), and the file a `taken = "YYYY-MM-DD"` date'
        ) from exc
    if parsed.schema != PRICES_SCHEMA:
        raise PriceError(f"{where}: schema {parsed.schema} is not one this skillgym reads ({PRICES_SCHEMA})")
    return parsed


def load_prices(overrides: Sequence[Path] = ()) -> PriceTable:
    """The packaged table with each of ``overrides`` (that exists) merged over it, in order."""
    layers = [("skillgym default prices", default_prices_text())]
    for path in overrides:
        try:
            layers.append((str(path), path.read_text(encoding="utf-8")))
        except FileNotFoundError as exc:
            raise PriceError(f"price table {path} does not exist; fix the path or drop --prices") from exc
        except OSError as exc:
            raise PriceError(f"price table {path} cannot be read: {exc.strerror or exc}") from exc
    models: dict[str, ModelPrice] = {}
    for where, text in layers:
        parsed = parse_prices(text, where)
        for name, entry in parsed.models.items():
            models[name] = msgspec.structs.replace(
                entry, taken=entry.taken or parsed.taken, source=entry.source or parsed.source or where
            )
    return PriceTable(models=models, files=tuple(where for where, _ in layers))


def price_layers(suite_root: str | Path, given: Path | None) -> tuple[Path, ...]:
    """The override files a run merges: the suite's ``prices.toml`` when it has one, then ``--prices``."""
    own = Path(suite_root) / SUITE_PRICES
    return (*((own,) if own.is_file() else ()), *((given,) if given is not None else ()))


def priced(usage: TokenUsage | None, model: str | None, table: PriceTable) -> Cost | None:
    """``usage`` at ``model``'s prices; None when the model is unpriced or input or output is unknown.

    A cache count the CLI did not report is none (a CLI without a cache reports none); a missing input or
    output count is not a zero, so the cost stays unknown.
    """
    found = table.price_of(model)
    if usage is None or found is None or usage.input is None or usage.output is None:
        return None
    name, price = found
    cache_read = price.cache_read if price.cache_read is not None else price.input
    cache_write = price.cache_write if price.cache_write is not None else price.input
    dollars = (
        usage.input * price.input
        + usage.output * price.output
        + (usage.cache_read or 0) * cache_read
        + (usage.cache_write or 0) * cache_write
    ) / 1_000_000
    return Cost(usd=round(dollars, 6), source="prices", detail=f"{name} prices of {price.taken}")


def trial_cost(
    reported: float | None, usage: TokenUsage | None, model: str | None, table: PriceTable
) -> Cost | None:
    """The CLI's own figure when it printed one (Claude's ``total_cost_usd``), else the price table's."""
    if reported is not None:
        return Cost(usd=round(reported, 6), source="cli")
    return priced(usage, model, table)
