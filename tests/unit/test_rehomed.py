"""A result whose run folder moved (a merge, a trial sent back from a cluster node) still finds its files."""

from __future__ import annotations

import os

from skillgym.results import TrialPaths, rehomed
from tests.results import result_for


def test_a_cassette_in_the_suite_is_found_from_the_folder_the_run_moved_to() -> None:
    shard = "/srv/ci/tmp/s1/20261203-000000-abcdef"  # two levels deeper than where the merge writes
    out = "/srv/ci/tmp/merged"
    cassette = os.path.relpath("/srv/repo/evals/cassettes/x.jsonl", shard)
    result = result_for(
        "prompt/a/none/replay/trial-1",
        "passed",
        paths=TrialPaths(dir="trials/a", result="trials/a/result.json", cassette=cassette),
        error_message=f"see {shard}/trials/a/stderr.txt",
    )
    moved = rehomed(result, shard, out)
    assert moved.paths.cassette is not None
    assert os.path.normpath(os.path.join(out, moved.paths.cassette)) == "/srv/repo/evals/cassettes/x.jsonl"
    assert moved.paths.dir == "trials/a"  # paths inside the run folder stay as they are
    assert moved.error_message == f"see {out}/trials/a/stderr.txt"


def test_a_result_that_names_neither_comes_back_equal() -> None:
    result = result_for("prompt/a/none/stub/trial-1", "failed")
    assert rehomed(result, "/runs/r1", "/elsewhere/r1") == result
