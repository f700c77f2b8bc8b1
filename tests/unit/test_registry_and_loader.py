"""Registry bookkeeping and suite loading: transactions per file, references, default conditions."""

from __future__ import annotations

import signal
import sys
import threading
from pathlib import Path

import pytest

from skillgym.errors import CollectionError, DefinitionError, UsageError
from skillgym.loader import discover_fixtures, load_suite, suite_files
from skillgym.model import Budget, Condition, PromptCase, Skill
from skillgym.registry import Registry, current_registry, default_conditions, use_registry
from tests.conftest import run_cli, write_suite

PROMPT = """
from skillgym import prompt_case

with prompt_case("{id}") as c:
    c.category("trigger")
    c.prompt("p")
    c.expect_skill(None)
"""


def _case(case_id: str, origin: str = "x.py:1") -> PromptCase:
    return PromptCase(id=case_id, category="c", prompt="p", budget=Budget(timeout_s=1), origin=origin)


def test_duplicate_case_ids_name_both_places() -> None:
    registry = Registry()
    registry.add_case(_case("dup", "a.py:3"))
    with pytest.raises(DefinitionError) as info:
        registry.add_case(_case("dup", "b.py:9"))
    message = str(info.value)
    assert "a.py:3" in message and "b.py:9" in message and "rename" in message
    assert isinstance(info.value, ValueError)


def test_mark_and_rollback_forget_only_later_definitions() -> None:
    registry = Registry()
    registry.add_case(_case("keep"))
    mark = registry.mark()
    registry.add_case(_case("drop"))
    registry.add_skill(Skill(name="s", path="skills/s"))
    registry.rollback(mark)
    assert [c.id for c in registry.cases] == ["keep"]
    assert registry.build("root").skills == ()


def test_use_registry_restores_the_previous_one_even_on_error() -> None:
    outer = current_registry()
    inner = Registry()
    seen = []

    def body() -> None:
        with use_registry(inner):
            seen.append(current_registry())
            raise RuntimeError("x")

    with pytest.raises(RuntimeError):
        body()
    assert seen == [inner]
    assert current_registry() is outer


def test_default_conditions_follow_the_declared_skills() -> None:
    assert [c.id for c in default_conditions(())] == ["none"]
    skills = (Skill(name="a", path="skills/a", stub="stub.md"), Skill(name="b", path="skills/b"))
    conditions = {c.id: c for c in default_conditions(skills)}
    assert list(conditions) == ["none", "self-load", "preloaded"]  # no stale material: no stale condition
    assert [(i.name, i.source) for i in conditions["self-load"].install] == [
        ("a", "skills/a"),
        ("b", "skills/b"),
    ]
    assert conditions["self-load"].inject == ("stub.md",)
    assert conditions["preloaded"].inject == ("skills/a/SKILL.md", "skills/b/SKILL.md")
    # The oracle gets the folders too, so the scripts SKILL.md names exist.
    assert conditions["preloaded"].install == conditions["self-load"].install
    assert conditions["none"].install == () and conditions["none"].inject == ()
    with_stale = default_conditions(
        (Skill(name="a", path="skills/a", stale="old.md"), Skill(name="b", path="b"))
    )
    assert with_stale[-1].id == "stale" and with_stale[-1].inject == ("old.md",)
    # The folder, then the stale text over its SKILL.md; a skill without stale material is not installed.
    assert [(i.name, i.source) for i in with_stale[-1].install] == [("a", "skills/a"), ("a", "old.md")]


def test_declared_conditions_add_to_the_defaults_or_replace_the_one_they_name() -> None:
    registry = Registry()
    registry.add_skill(Skill(name="a", path="skills/a", stale="old.md"))
    registry.add_condition(Condition(id="hinted", inject_text="Use the skill."))
    registry.add_condition(Condition(id="preloaded", inject_text="my own oracle"))
    registry.add_case(_case("c"))
    suite = registry.build("root")
    assert suite.cases[0].conditions == ("none", "self-load", "preloaded", "stale", "hinted")
    assert {c.id: c for c in suite.conditions}["preloaded"].inject_text == "my own oracle"


def test_replace_default_conditions_keeps_only_the_declared_ones_and_rolls_back() -> None:
    registry = Registry()
    registry.add_skill(Skill(name="a", path="skills/a"))
    registry.add_condition(Condition(id="plain"))
    mark = registry.mark()
    registry.replace_default_conditions("suite.py:3")
    registry.add_case(_case("c"))
    assert registry.build("root").cases[0].conditions == ("plain",)
    registry.rollback(mark)  # the file that called it failed to load: the defaults are back
    assert [c.id for c in registry.build("root").conditions] == ["none", "self-load", "preloaded", "plain"]


def test_replace_default_conditions_without_a_condition_fails_to_load() -> None:
    registry = Registry()
    registry.replace_default_conditions("evals/suite.py:4")
    with pytest.raises(CollectionError) as info:
        registry.build("root")
    assert str(info.value).startswith("evals/suite.py:4: replace_default_conditions() drops the default")


def test_unknown_references_are_all_reported_with_origin() -> None:
    registry = Registry()
    registry.add_skill(Skill(name="real", path="skills/real"))
    registry.add_case(
        PromptCase(
            id="bad",
            category="c",
            prompt="p",
            budget=Budget(timeout_s=1),
            origin="evals/p.py:4",
            conditions=("nonsense",),
            workspace="nope",
            expected_skill="fake",
        )
    )
    with pytest.raises(CollectionError) as info:
        registry.build("root")
    errors = info.value.errors
    assert len(errors) == 3
    assert all(e.startswith("evals/p.py:4: case 'bad'") for e in errors)
    assert "unknown condition 'nonsense'" in errors[0] and "none, self-load, preloaded" in errors[0]
    assert "unknown workspace preset 'nope'" in errors[1]
    assert "expected skill 'fake'" in errors[2] and "real" in errors[2]


def test_suite_files_skip_data_dirs_and_private_files(tmp_path: Path) -> None:
    root = write_suite(
        tmp_path,
        {
            "b.py": "",
            "a/z.py": "",
            "_helpers.py": "",
            ".hidden/x.py": "",
            "fixtures/app.py": "",
            "skills/s/scripts/tool.py": "",
            "cassettes/x.py": "",
            "templates/t/main.py": "",
            "_private/y.py": "",
        },
    )
    assert [p.relative_to(root).as_posix() for p in suite_files(root)] == ["a/z.py", "b.py"]
    assert [f.name for f in discover_fixtures(root)] == ["app"]


def test_a_failing_file_contributes_nothing_and_the_others_still_load(tmp_path: Path) -> None:
    root = write_suite(
        tmp_path,
        {
            "a.py": PROMPT.format(id="first"),
            "b.py": PROMPT.format(id="half") + "\nraise ValueError('after registering')\n",
            "c.py": PROMPT.format(id="third"),
        },
    )
    with pytest.raises(CollectionError) as info:
        load_suite(root)
    assert len(info.value.errors) == 1
    assert "b.py:8: ValueError: after registering" in info.value.errors[0]
    # Fix the broken file: both others were fine all along.
    (root / "b.py").write_text(PROMPT.format(id="second"))
    assert [c.id for c in load_suite(root).cases] == ["first", "second", "third"]


def test_case_files_can_import_private_helpers_beside_them(tmp_path: Path) -> None:
    root = write_suite(
        tmp_path,
        {
            "_common.py": "CATEGORY = 'shared'\n",
            "cases.py": PROMPT.format(id="x")
            .replace('c.category("trigger")', "c.category(_common.CATEGORY)")
            .replace("from skillgym import prompt_case", "import _common\nfrom skillgym import prompt_case"),
        },
    )
    suite = load_suite(root)
    assert suite.cases[0].category == "shared"
    assert str(root.resolve()) not in sys.path


def test_definition_error_inside_a_file_keeps_its_own_origin(tmp_path: Path) -> None:
    root = write_suite(tmp_path, {"p.py": PROMPT.format(id="Bad Id")})
    with pytest.raises(CollectionError) as info:
        load_suite(root)
    assert "p.py:3: invalid case id 'Bad Id'" in info.value.errors[0]


def test_missing_suite_dir_is_a_usage_error(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="does not exist"):
        load_suite(tmp_path / "absent")


def test_a_suite_file_given_as_the_suite_says_a_suite_is_a_folder(tmp_path: Path) -> None:
    root = write_suite(tmp_path, {"p.py": PROMPT.format(id="ok")})
    with pytest.raises(UsageError, match="is a file, but a suite is a folder"):
        load_suite(root / "p.py")


def test_the_load_timeout_names_the_file_and_gives_back_the_alarm_it_found(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = write_suite(tmp_path, {"a.py": PROMPT.format(id="ok"), "b.py": "while True:\n    pass\n"})
    monkeypatch.setenv("SKILLGYM_LOAD_TIMEOUT_S", "0.2")
    fired: list[int] = []

    def outer(signum: int, frame: object) -> None:
        fired.append(signum)

    previous = signal.signal(signal.SIGALRM, outer)
    signal.setitimer(signal.ITIMER_REAL, 30)
    try:
        with pytest.raises(CollectionError) as info:
            load_suite(root)
        handler = signal.getsignal(signal.SIGALRM)
        left, _ = signal.getitimer(signal.ITIMER_REAL)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    assert info.value.errors == [info.value.errors[0]] and "b.py:" in info.value.errors[0]
    assert "still importing after 0.2 s" in info.value.errors[0]
    assert handler is outer and 25 < left < 30 and not fired


def test_off_the_main_thread_a_suite_loads_without_a_timeout(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    slow = "import time\n\ntime.sleep(0.5)\n" + PROMPT.format(id="slow")
    root = write_suite(tmp_path, {"slow.py": slow})
    monkeypatch.setenv("SKILLGYM_LOAD_TIMEOUT_S", "0.1")
    loaded: list[str] = []
    worker = threading.Thread(target=lambda: loaded.extend(c.id for c in load_suite(root).cases))
    worker.start()
    worker.join(timeout=30)
    assert loaded == ["slow"]


SWALLOWING = {  # case files whose loop catches everything, the load timeout included
    "bare-except": "while True:\n    try:\n        pass\n    except:\n        pass\n",
    "sleep-except-base-continue": "import time\n\nwhile True:\n    try:\n        time.sleep(5)\n"
    "    except BaseException:\n        continue\n",
    "nested-in-a-function": "def spin():\n    while True:\n        try:\n            try:\n"
    "                pass\n            except:\n                pass\n        except:\n            pass\n\n\n"
    "spin()\n",
}


@pytest.mark.parametrize("name", list(SWALLOWING))
def test_the_load_timeout_is_not_swallowed_by_a_bare_except(tmp_path: Path, name: str) -> None:
    # In a process of its own: without the fix the load never ends, and the subprocess timeout says so.
    root = write_suite(tmp_path / "evals", {"a.py": PROMPT.format(id="ok"), "b.py": SWALLOWING[name]})
    proc = run_cli(
        "list", "--suite", str(root), cwd=tmp_path, env={"SKILLGYM_LOAD_TIMEOUT_S": "0.2"}, timeout=30
    )
    assert proc.returncode == 2, proc.stderr
    assert "b.py:" in proc.stderr and "still importing after 0.2 s" in proc.stderr


def test_the_tracer_that_stops_a_load_is_removed_with_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = write_suite(tmp_path, {"b.py": SWALLOWING["nested-in-a-function"]})
    monkeypatch.setenv("SKILLGYM_LOAD_TIMEOUT_S", "0.2")
    tracer = sys.gettrace()
    with pytest.raises(CollectionError, match=r"still importing after 0\.2 s"):
        load_suite(root)
    assert sys.gettrace() is tracer
