"""Recorded judge answers: a cache on this machine and the suite's committed verdict cassettes.

Both hold one file per question, named by its key: the BLAKE3 digest of the judge prompt version, the
judge (provider and model) and the whole question (task, expectation and material, as the prompt shows
them). The same question to the same judge is asked once; a replayed run re-grades for free.

- the cache: ``$SKILLGYM_JUDGE_CACHE``, else ``$XDG_CACHE_HOME/skillgym/judge``, else
  ``~/.cache/skillgym/judge`` (``--judge-cache DIR`` for one run, ``--no-judge-cache`` to bypass it);
- the cassettes: ``<suite>/judge/verdicts/<key>.json``, written by ``--judge-record`` and read first, so
  a suite can ship its judged checks' verdicts and run them offline (``--judge replay``).

An answer the judge gave but that could not be read as a verdict is never stored: asking again may work.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Final, Literal, TypeAlias

import blake3
import msgspec

from ..files import write_atomic
from ..model import Data
from ..trace import TokenUsage
from .questions import JUDGE_PROMPT_VERSION

CACHE_VAR: Final = "SKILLGYM_JUDGE_CACHE"
VERDICTS_DIR: Final = ("judge", "verdicts")
_KEY_CONTEXT: Final = "skillgym 2026-12 judge verdict key v1"

Source: TypeAlias = Literal["judge", "cache", "cassette"]


class StoredAnswer(Data, frozen=True, kw_only=True):
    """One recorded judge answer: who gave it, to which prompt version, and its usage."""

    key: str
    judge: str
    model: str | None = None
    prompt_version: str
    raw_answer: str
    usage: TokenUsage | None = None
    recorded_at: float = 0.0


_decoder = msgspec.json.Decoder(StoredAnswer)
_encoder = msgspec.json.Encoder(order="deterministic")


def question_key(judge: str, prompt: str) -> str:
    """The cache key of ``prompt`` put to ``judge`` (``provider:model``) under this prompt version."""
    payload = json.dumps([JUDGE_PROMPT_VERSION, judge, prompt], ensure_ascii=False).encode()
    return blake3.blake3(payload, derive_key_context=_KEY_CONTEXT).hexdigest()


def default_cache_dir() -> Path:
    """Where judge answers are cached on this machine unless ``--judge-cache`` says otherwise."""
    configured = os.environ.get(CACHE_VAR)
    if configured:
        return Path(configured)
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg) if xdg else Path.home() / ".cache"
    return base / "skillgym" / "judge"


def verdicts_dir(suite_root: str | Path) -> Path:
    """The suite's committed judge answers (``--judge-record`` writes them, every run reads them)."""
    return Path(suite_root).joinpath(*VERDICTS_DIR)


class VerdictStore:
    """Looks answers up in the cassettes, then the cache; stores new ones in the cache (and, recording,
    in the cassettes)."""

    def __init__(self, *, cassettes: Path | None, cache: Path | None, record: bool = False) -> None:
        self.cassettes = cassettes
        self.cache = cache
        self.record = record

    def find(self, key: str) -> tuple[StoredAnswer, Source] | None:
        for folder, source in ((self.cassettes, "cassette"), (self.cache, "cache")):
            if folder is None:
                continue
            found = _read(folder / f"{key}.json")
            if found is not None and found.key == key:
                return found, source  # type: ignore[return-value]
        return None

    def keep(self, answer: StoredAnswer, *, cache: bool = True) -> None:
        """Store ``answer`` in the cache (unless ``cache`` is False), and in the cassettes when recording."""
        stamped = msgspec.structs.replace(answer, recorded_at=answer.recorded_at or round(time.time(), 3))
        encoded = _encoder.encode(stamped) + b"\n"
        targets = [self.cache] if self.cache is not None and cache else []
        if self.record and self.cassettes is not None:
            targets.append(self.cassettes)
        for folder in targets:
            folder.mkdir(parents=True, exist_ok=True)
            write_atomic(str(folder / f"{answer.key}.json"), encoded)


def _read(path: Path) -> StoredAnswer | None:
    try:
        return _decoder.decode(path.read_bytes())
    except FileNotFoundError:
        return None
    except (OSError, msgspec.DecodeError):
        return None  # a damaged entry is asked again, and overwritten
