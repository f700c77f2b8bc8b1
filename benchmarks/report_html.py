"""report.html at scale: its size and build time for synthetic runs, and how fast Chromium opens it.

Usage: python benchmarks/report_html.py [--trials N ...] [--source RUN_DIR] [--keep]

A synthetic run copies the traces and prompts of a real run (``--source``; by default the example suite
replayed into a scratch folder) onto more cases and trials, writes its events.jsonl and trial folders,
then rebuilds the report with ``skillgym report`` (report.json, report.md, report.html and one page per
trial). Printed: the files' sizes, the rebuild's time, and (with Chromium and playwright installed) the time
from navigation to the load event, and to a filtered and a sorted case table. Nothing here asserts.
"""

from __future__ import annotations

import argparse
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import msgspec

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from skillgym.eventlog import read_run_log  # noqa: E402
from skillgym.events import Counts, RunFinish, TrialFinish, event_encoder  # noqa: E402
from skillgym.identity import trial_id  # noqa: E402
from skillgym.launch import rebuild_report  # noqa: E402
from skillgym.results import TrialPaths, TrialResult  # noqa: E402

CONDITIONS_PER_CASE = 4
TRIALS_PER_CASE = 10
_result_encoder = msgspec.json.Encoder()


def source_run(scratch: Path) -> Path:
    """The example suite replayed (every lane, the default replay provider) into ``scratch``."""
    subprocess.run(
        [sys.executable, "-m", "skillgym", "run", "--output", str(scratch / "runs")],
        cwd=REPO,
        check=False,
        capture_output=True,
    )
    (run,) = [d for d in (scratch / "runs").iterdir() if not d.is_symlink()]
    return run


def synthetic_run(source: Path, out: Path, trials: int, seed: int = 1) -> Path:
    """A run of ``trials`` trials: cases copied from ``source``, ten trials per case and condition."""
    log = read_run_log(source)
    templates = [r for r in log.results if r.paths.trace is not None]
    by_group: dict[tuple[str, str], list[TrialResult]] = {}
    for r in templates:
        by_group.setdefault((r.id.lane, r.id.case_id), []).append(r)
    groups = list(by_group.values())
    rng = random.Random(seed)
    run_id = f"synthetic-{trials}"
    run_dir = out / run_id
    run_dir.mkdir(parents=True)
    start = msgspec.structs.replace(log.start, run_id=run_id, run_dir=str(run_dir), total_trials=trials)
    lines = [event_encoder.encode(start)]
    made = 0
    copy = 0
    while made < trials:
        group = groups[copy % len(groups)]
        for template in group:
            for n in range(1, TRIALS_PER_CASE + 1):
                if made >= trials:
                    break
                case = f"{template.id.case_id}-{copy // len(groups)}"
                tid = trial_id(
                    lane=template.id.lane,
                    case_id=case,
                    condition=template.id.condition,
                    provider=template.id.provider,
                    trial=n,
                    fingerprint=template.id.fingerprint,
                )
                key = tid.key
                folder = run_dir / "trials" / key
                folder.mkdir(parents=True)
                for name in ("trace.json", "prompt.txt", "transcript.md"):
                    if (source / template.paths.dir / name).is_file():
                        shutil.copyfile(source / template.paths.dir / name, folder / name)
                here = f"trials/{key}"
                flip = rng.random() < 0.2  # trials of one case disagree sometimes, as real ones do
                status = template.status
                if flip and status != "errored":
                    status = "failed" if status == "passed" else "passed"
                result = msgspec.structs.replace(
                    template,
                    id=tid,
                    status=status,
                    paths=TrialPaths(dir=here, result=f"{here}/result.json", trace=f"{here}/trace.json"),
                )
                (folder / "result.json").write_bytes(_result_encoder.encode(result))
                lines.append(event_encoder.encode(TrialFinish(run_id=run_id, at=0.0, result=result)))
                made += 1
        copy += 1
    finish = RunFinish(run_id=run_id, at=0.0, counts=Counts(total=made), exit_code=1, duration_s=1.0)
    lines.append(event_encoder.encode(finish))
    (run_dir / "events.jsonl").write_bytes(b"\n".join(lines) + b"\n")
    return run_dir


def size(path: Path) -> str:
    return f"{path.stat().st_size / 1e6:.2f} MB"


def measure(run_dir: Path) -> None:
    t0 = time.perf_counter()
    rebuild_report(run_dir)
    built = time.perf_counter() - t0
    pages = list(run_dir.glob("trials/*/*/*/*/*/trial.html"))
    total = sum(p.stat().st_size for p in pages)
    print(f"  report.html {size(run_dir / 'report.html')}, report.json {size(run_dir / 'report.json')}")
    each = total / max(len(pages), 1) / 1e3
    print(f"  {len(pages)} trial pages, {total / 1e6:.1f} MB in all, {each:.1f} kB each")
    print(f"  skillgym report (json, md, html and pages): {built:.1f} s")
    browse(run_dir)


def browse(run_dir: Path) -> None:
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        print("  (no playwright: browser timings skipped)")
        return
    executable = shutil.which("chromium") or "/usr/bin/chromium"
    if not Path(executable).exists():
        print("  (no chromium: browser timings skipped)")
        return
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=executable, headless=True)
        page = browser.new_page(viewport={"width": 1366, "height": 768})
        t0 = time.perf_counter()
        page.goto((run_dir / "report.html").resolve().as_uri(), wait_until="load")
        loaded = time.perf_counter() - t0
        t0 = time.perf_counter()
        page.select_option("#filter-lane", "execution")
        page.evaluate("() => document.querySelectorAll('#case-table tbody tr:not([hidden])').length")
        filtered = time.perf_counter() - t0
        t0 = time.perf_counter()
        page.locator("#case-table thead th", has_text="pass rate").locator("button").click()
        page.evaluate("() => document.querySelector('#case-table tbody tr').dataset.case")
        sorted_ = time.perf_counter() - t0
        rows = page.evaluate("() => document.querySelectorAll('#case-table tbody tr').length")
        browser.close()
    print(
        f"  chromium: load event {loaded:.2f} s; filter {filtered * 1000:.0f} ms; "
        f"sort {sorted_ * 1000:.0f} ms ({rows} case rows)"
    )


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--trials", type=int, action="append", default=[], help="synthetic run sizes")
    parser.add_argument("--source", type=Path, help="a finished run to copy traces from")
    parser.add_argument("--keep", action="store_true", help="keep the scratch folder and print it")
    args = parser.parse_args()
    scratch = Path(tempfile.mkdtemp(prefix="skillgym-html-bench-"))
    try:
        source = args.source or source_run(scratch)
        print(f"the example suite's run ({len(read_run_log(source).results)} trials):")
        measure(source)
        for trials in args.trials or [2000, 20000]:
            print(f"synthetic run of {trials} trials:")
            measure(synthetic_run(source, scratch, trials))
    finally:
        if args.keep:
            print(f"kept {scratch}")
        else:
            shutil.rmtree(scratch, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
