"""Reading evals.json and trigger sets: what is accepted, and each malformed input's error."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from skillgym.errors import ExitCode
from skillgym.evalsformat.schema import (
    AgentEval,
    EvalSet,
    EvalsFormatError,
    TriggerQuery,
    TriggerSet,
    parse_eval_file,
    read_eval_file,
)

PATH = Path("skill/evals/evals.json")


def _parse(doc: object) -> EvalSet | TriggerSet:
    return parse_eval_file(json.dumps(doc), PATH)


def _eval(**fields: object) -> dict[str, object]:
    return {"id": 1, "prompt": "Summarise data.csv", "expectations": ["names the hottest month"], **fields}


def test_an_eval_set_with_both_spellings_and_extra_keys() -> None:
    doc = {
        "skill_name": "csv-summary",
        "description": "regression evals",
        "evals": [
            _eval(expected_output="July", files=["evals/files/a.csv"], eval_name="hottest"),
            {"id": 2, "prompt": "p", "assertions": ["a", "b"], "scorers": []},
            {"id": "three", "prompt": "p", "expected_output": "only this"},
        ],
    }
    assert _parse(doc) == EvalSet(
        skill_name="csv-summary",
        ignored=("description",),
        evals=(
            AgentEval(
                id=1,
                prompt="Summarise data.csv",
                expected_output="July",
                files=("evals/files/a.csv",),
                expectations=("names the hottest month",),
                expectations_key="expectations",
                eval_name="hottest",
            ),
            AgentEval(
                id=2, prompt="p", expectations=("a", "b"), expectations_key="assertions", ignored=("scorers",)
            ),
            AgentEval(id="three", prompt="p", expected_output="only this"),
        ),
    )


def test_a_trigger_set() -> None:
    doc = [
        {"query": "summarise it", "should_trigger": True},
        {"query": "rename x", "should_trigger": False, "n": 1},
    ]
    assert _parse(doc) == TriggerSet(
        queries=(
            TriggerQuery(query="summarise it", should_trigger=True),
            TriggerQuery(query="rename x", should_trigger=False, ignored=("n",)),
        )
    )


BAD: list[tuple[object, str, str]] = [
    ("text", "$: expected an object", "start the file with"),
    ({"evals": [_eval()]}, "$: missing the required key 'skill_name'", 'add "skill_name"'),
    (
        {"skill_name": "CSV Summary", "evals": [_eval()]},
        "$.skill_name: 'CSV Summary' is not a skill name",
        "SKILL.md",
    ),
    ({"skill_name": "s"}, "$: missing the required key 'evals'", 'add "evals"'),
    (
        {"skill_name": "s", "evals": {}},
        "$.evals: expected a list of evals, found an object",
        'write "evals": [',
    ),
    ({"skill_name": "s", "evals": []}, "$.evals: is empty", "add at least one eval"),
    (
        {"skill_name": "s", "evals": [_eval(), "x"]},
        "$.evals[1]: expected an eval object, found the string",
        "write {",
    ),
    (
        {"skill_name": "s", "evals": [{"prompt": "p", "expectations": ["e"]}]},
        "$.evals[0]: missing the required key 'id'",
        'add "id"',
    ),
    (
        {"skill_name": "s", "evals": [_eval(id=True)]},
        "$.evals[0].id: expected a whole number, found the boolean true",
        '"id": 1',
    ),
    (
        {"skill_name": "s", "evals": [_eval(id=1.5)]},
        "$.evals[0].id: expected a whole number, found the number 1.5",
        '"id": 1',
    ),
    ({"skill_name": "s", "evals": [_eval(id=-1)]}, "$.evals[0].id: -1 is negative", "positive"),
    (
        {"skill_name": "s", "evals": [_eval(id="a b")]},
        '$.evals[0].id: "a b" is not usable in a case id',
        "use a number",
    ),
    (
        {"skill_name": "s", "evals": [_eval(), _eval()]},
        "$.evals[1].id: id 1 is also the id of $.evals[0]",
        "its own id",
    ),
    ({"skill_name": "s", "evals": [_eval(id="A"), _eval(id="a")]}, "$.evals[1].id", "its own id"),
    (
        {"skill_name": "s", "evals": [_eval(prompt=7)]},
        "$.evals[0].prompt: expected a string, found the number 7",
        "JSON string",
    ),
    ({"skill_name": "s", "evals": [_eval(prompt="  ")]}, "$.evals[0].prompt: is empty", "some text"),
    (
        {"skill_name": "s", "evals": [{"id": 1, "prompt": "p"}]},
        "$.evals[0]: has neither expectations nor an expected_output",
        'add "expectations"',
    ),
    (
        {"skill_name": "s", "evals": [_eval(expectations="x")]},
        "$.evals[0].expectations: expected a list of strings, found the string",
        '"expectations": ["..."]',
    ),
    (
        {"skill_name": "s", "evals": [_eval(expectations=["ok", 3])]},
        "$.evals[0].expectations[1]: expected a string, found the number 3",
        "as a string",
    ),
    (
        {"skill_name": "s", "evals": [_eval(expectations=["ok", ""])]},
        "$.evals[0].expectations[1]: empty expectation",
        "remove the empty string",
    ),
    (
        {"skill_name": "s", "evals": [{"id": 1, "prompt": "p", "assertions": [None]}]},
        "$.evals[0].assertions[0]: expected a string, found null",
        "as a string",
    ),
    (
        {"skill_name": "s", "evals": [_eval(assertions=["b"])]},
        "$.evals[0]: gives both 'expectations' and 'assertions'",
        "merge them",
    ),
    (
        {"skill_name": "s", "evals": [_eval(files=["/etc/passwd"])]},
        '$.evals[0].files[0]: "/etc/passwd" is absolute',
        "relative to the skill folder",
    ),
    (
        {"skill_name": "s", "evals": [_eval(files=["../x.csv"])]},
        '$.evals[0].files[0]: "../x.csv" climbs out',
        "relative to the skill folder",
    ),
    (
        {"skill_name": "s", "evals": [_eval(files=[3])]},
        "$.evals[0].files[0]: expected a string",
        "as a string",
    ),
    (
        {"skill_name": "s", "evals": [_eval(expectation=["x"])]},
        "$.evals[0].expectation: unknown key 'expectation'",
        "did you mean 'expectations'?",
    ),
    (
        {
            "skill_name": "s",
            "evals": [{"id": 1, "prompt": "p", "expected_ouput": "x", "expectations": ["e"]}],
        },
        "$.evals[0].expected_ouput: unknown key",
        "did you mean 'expected_output'?",
    ),
    (
        {"skil_name": "s", "evals": [_eval()]},
        "$.skil_name: unknown key 'skil_name'",
        "did you mean 'skill_name'?",
    ),
    ([], "$: the trigger set is empty", "add items"),
    ([3], "$[0]: expected a trigger eval object, found the number 3", '{"query"'),
    ([{"should_trigger": True}], "$[0]: missing the required key 'query'", 'add "query"'),
    ([{"query": "q"}], "$[0]: missing the required key 'should_trigger'", '"should_trigger": true'),
    (
        [{"query": "q", "should_trigger": "yes"}],
        '$[0].should_trigger: expected true or false, found the string "yes"',
        "without quotes",
    ),
    (
        [{"query": "q", "should_trigger": True}, {"query": "q", "should_trigger": False}],
        "$[1].query: repeats the query of $[0]",
        "remove one",
    ),
    ([{"querry": "q", "should_trigger": True}], "$[0].querry: unknown key 'querry'", "did you mean 'query'?"),
]


@pytest.mark.parametrize(("doc", "where", "fix"), BAD, ids=[b[1][:48] for b in BAD])
def test_each_malformed_input_names_the_file_the_json_path_and_the_fix(
    doc: object, where: str, fix: str
) -> None:
    with pytest.raises(EvalsFormatError) as caught:
        _parse(doc)
    message = str(caught.value)
    assert message.startswith(f"{PATH}: {where}"), message
    assert fix in message, message
    assert caught.value.exit_code == ExitCode.USAGE


def test_json_syntax_errors_name_the_line_and_column() -> None:
    with pytest.raises(EvalsFormatError, match=r"^skill/evals/evals.json:3:5: not valid JSON \("):
        parse_eval_file('{\n  "skill_name": "s",\n    ]\n}', PATH)


def test_a_key_given_twice_is_an_error() -> None:
    with pytest.raises(EvalsFormatError, match="key 'id' is given twice in one object; keep one"):
        parse_eval_file(
            '{"skill_name": "s", "evals": [{"id": 1, "id": 2, "prompt": "p", "expected_output": "o"}]}', PATH
        )


def test_unreadable_files(tmp_path: Path) -> None:
    with pytest.raises(
        EvalsFormatError, match=r"does not exist; give the path of the skill's evals/evals\.json"
    ):
        read_eval_file(tmp_path / "evals.json")
    with pytest.raises(EvalsFormatError, match="is a folder; give the JSON file itself"):
        read_eval_file(tmp_path)
    (tmp_path / "bad.json").write_bytes(b'{"skill_name": "\xff"}')
    with pytest.raises(EvalsFormatError, match="is not UTF-8 text"):
        read_eval_file(tmp_path / "bad.json")


def test_a_byte_order_mark_is_no_part_of_the_json(tmp_path: Path) -> None:
    path = tmp_path / "evals.json"
    path.write_text('\ufeff[{"query": "q", "should_trigger": true}]', encoding="utf-8")
    assert read_eval_file(path) == TriggerSet(queries=(TriggerQuery(query="q", should_trigger=True),))
