"""junit.xml for CI systems: a testcase per trial, a testsuite per lane and case, and one for the gates."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path

from ..events import Event, RunFinish, RunStart, TrialFinish
from ..files import write_atomic
from ..gates.model import GateResult
from ..plugins import reporter
from ..results import TrialResult
from .base import ReporterContext

# What XML 1.0 forbids in a document even as a character reference: C0 controls other than tab, newline
# and carriage return, lone surrogates, U+FFFE and U+FFFF. An agent's stderr or a quoted message can hold
# any of them (a terminal escape, a stray \x01), and one of them makes the whole file unparsable.
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def _xml_safe(text: str) -> str:
    """``text`` with every character XML 1.0 forbids written out as a visible escape (``\\x1b``)."""
    return _NOT_XML.sub(_escaped, text)


def _escaped(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def render_junit(
    run_id: str,
    results: list[TrialResult],
    notes: list[str] | None = None,
    gates: Sequence[GateResult] = (),
) -> bytes:
    """The JUnit XML document for ``results`` (a failed trial is a failure, an errored one an error), and
    a ``gates`` testsuite with a testcase per gate: a failed or unshown gate is a failure, one that errors
    not the agent's left open an error, a skipped one skipped."""
    suites: dict[tuple[str, str], list[TrialResult]] = defaultdict(list)
    for result in results:
        suites[(result.id.lane, result.id.case_id)].append(result)
    root = ET.Element("testsuites", name=f"skillgym {run_id}")
    totals = {"tests": 0, "failures": 0, "errors": 0}
    for (lane, case_id), trials in suites.items():
        failures = sum(r.status == "failed" for r in trials)
        errors = sum(r.status == "errored" for r in trials)
        suite = ET.SubElement(
            root,
            "testsuite",
            name=f"{lane}/{case_id}",
            tests=str(len(trials)),
            failures=str(failures),
            errors=str(errors),
            time=f"{sum(r.duration_s for r in trials):.3f}",
        )
        totals["tests"] += len(trials)
        totals["failures"] += failures
        totals["errors"] += errors
        for r in trials:
            case = ET.SubElement(
                suite,
                "testcase",
                classname=f"{lane}.{case_id}",
                name=f"{r.id.condition}/{r.id.provider}/trial-{r.id.trial}",
                time=f"{r.duration_s:.3f}",
            )
            reasons = list(r.grade.reasons) if r.grade is not None else []
            if r.status == "failed":
                node = ET.SubElement(case, "failure", message=_xml_safe(reasons[0]) if reasons else "failed")
                node.text = _xml_safe("\n".join(reasons))
            elif r.status == "errored":
                message = f"{r.error_class}: {r.error_message or ''}"
                node = ET.SubElement(case, "error", message=_xml_safe(message))
                node.text = _xml_safe("\n".join([r.error_message or "", *reasons]).strip())
            out = ET.SubElement(case, "system-out")
            out.text = f"score {r.grade.score:.3f}" if r.grade is not None else "not graded"
    if gates:
        _gate_suite(root, gates, totals)
    for key, value in totals.items():
        root.set(key, str(value))
    if notes:
        props = ET.SubElement(root, "properties")
        for note in notes:
            ET.SubElement(props, "property", name="note", value=_xml_safe(note))
    ET.indent(root)
    document: bytes = ET.tostring(root, encoding="utf-8", xml_declaration=True)
    return document + b"\n"


def _gate_suite(root: ET.Element, gates: Sequence[GateResult], totals: dict[str, int]) -> None:
    judged = [g for g in gates if g.status != "skipped"]
    errors = sum(g.blocked_by_errors for g in judged)
    failures = sum(g.status in ("failed", "inconclusive") for g in judged) - errors
    suite = ET.SubElement(
        root, "testsuite", name="gates", tests=str(len(gates)), failures=str(failures), errors=str(errors)
    )
    for gate in gates:
        case = ET.SubElement(suite, "testcase", classname="gates", name=_xml_safe(gate.expression))
        message = _xml_safe(f"{gate.status}: {gate.detail}")
        if gate.status == "skipped":
            ET.SubElement(case, "skipped", message=message)
        elif gate.blocked_by_errors:
            ET.SubElement(case, "error", message=message)
        elif gate.status != "passed":
            ET.SubElement(case, "failure", message=message)
    totals["tests"] += len(gates)
    totals["failures"] += failures
    totals["errors"] += errors


@reporter
class JunitReporter:
    """Writes ``<run-dir>/junit.xml`` when the run finishes (also after an interruption)."""

    name = "junit"
    help = "junit.xml in the run directory, one testcase per trial"

    @classmethod
    def from_context(cls, context: ReporterContext) -> JunitReporter:
        return cls(context.run_dir / "junit.xml")

    def __init__(self, path: Path) -> None:
        self.path = path
        self._run_id = ""
        self._results: dict[str, TrialResult] = {}

    async def on_event(self, event: Event) -> None:
        if isinstance(event, RunStart):
            self._run_id = event.run_id
        elif isinstance(event, TrialFinish):
            self._results[event.result.id.key] = event.result
        elif isinstance(event, RunFinish):
            notes = ["interrupted: not every trial ran"] if event.interrupted else []
            notes += event.notes
            results = list(self._results.values())
            write_atomic(self.path, render_junit(self._run_id, results, notes, event.gates))

    async def finish(self) -> None:
        return None
