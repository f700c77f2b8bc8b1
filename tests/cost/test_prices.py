"""The price table: the packaged default, overrides merged over it, a trial's cost (unknown stays None)."""

from __future__ import annotations

from pathlib import Path

import pytest

from skillgym.cost.prices import PriceError, load_prices, price_layers, priced, trial_cost
from skillgym.trace import TokenUsage


def test_the_default_table_is_dated_sourced_and_prices_the_models_the_readme_names() -> None:
    table = load_prices()
    for model in ("sonnet", "claude-sonnet-4-5-20250929", "gpt-5-codex"):
        found = table.price_of(model)
        assert found is not None, model
        assert found[1].taken and found[1].source
    assert table.price_of("gpt-5-codex-mini") is None  # no guessing from a prefix
    assert table.price_of("scripted") is None
    assert table.price_of(None) is None


def test_cost_counts_each_kind_of_token_at_its_price() -> None:
    table = load_prices()
    usage = TokenUsage(input=1_000_000, output=100_000, cache_read=2_000_000, cache_write=100_000)
    cost = priced(usage, "claude-sonnet-4-5", table)
    assert cost is not None
    assert cost.usd == pytest.approx(3.0 + 1.5 + 0.6 + 0.375)
    assert cost.source == "prices"
    assert cost.detail == "claude-sonnet-4-5 prices of 2025-11-24"


def test_unknown_stays_unknown_never_zero() -> None:
    table = load_prices()
    assert priced(TokenUsage(input=10, output=5), "no-such-model", table) is None
    assert priced(TokenUsage(output=5), "sonnet", table) is None  # input unknown: not a zero
    assert priced(None, "sonnet", table) is None
    assert trial_cost(None, None, None, table) is None


def test_the_clis_own_figure_wins_over_the_table() -> None:
    cost = trial_cost(0.0123, TokenUsage(input=10, output=5), "sonnet", load_prices())
    assert cost is not None
    assert (cost.usd, cost.source) == (0.0123, "cli")


def test_an_override_replaces_a_models_entry_and_adds_new_ones(tmp_path: Path) -> None:
    suite = tmp_path / "suite"
    suite.mkdir()
    (suite / "prices.toml").write_text(
        'schema = 1\ntaken = "2026-01-02"\n'
        '[models.sonnet-house]\naliases = ["house"]\ninput = 1\noutput = 2\n'
    )
    given = tmp_path / "mine.toml"
    given.write_text('taken = "2026-02-03"\n[models.claude-sonnet-4-5]\ninput = 10\noutput = 20\n')
    layers = price_layers(suite, given)
    assert layers == (suite / "prices.toml", given)
    table = load_prices(layers)
    house = table.price_of("house")
    assert house is not None and house[1].taken == "2026-01-02"
    sonnet = table.price_of("sonnet")
    assert sonnet is None  # the override's entry has no aliases: the default's alias went with it
    mine = table.price_of("claude-sonnet-4-5")
    assert mine is not None and (mine[1].input, mine[1].taken) == (10, "2026-02-03")
    assert table.price_of("gpt-5-codex") is not None  # the rest of the default stays


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("taken = 2026\n", "Expected `str`"),
        ('taken = "2026-01-01"\n[models.x]\ninput = -1\noutput = 1\n', ">= 0"),
        ('taken = "2026-01-01"\n[models.x]\ninput = 1\n', "missing required field `output`"),
        ('taken = "2026-01-01"\n[models.x]\ninput = 1\noutput = 1\nprice = 3\n', "unknown field `price`"),
        ("[models.x\n", "not valid TOML"),
        ("[models.x]\ninput = 1\noutput = 1\n", "missing required field `taken`"),
    ],
)
def test_a_bad_price_file_is_an_error_naming_the_file_and_field(
    tmp_path: Path, text: str, problem: str
) -> None:
    path = tmp_path / "prices.toml"
    path.write_text(text)
    with pytest.raises(PriceError) as caught:
        load_prices([path])
    assert str(path) in str(caught.value)
    assert problem in str(caught.value)
    assert caught.value.exit_code == 2


def test_a_missing_price_file_says_so(tmp_path: Path) -> None:
    with pytest.raises(PriceError, match="does not exist"):
        load_prices([tmp_path / "nope.toml"])
