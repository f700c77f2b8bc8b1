"""A realistic skill folder with an Agent Skills eval set (files, both key spellings) and a trigger set."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

SKILL_MD = """\
---
name: csv-summary
description: Summarise a CSV file into a short markdown report with the key figures. Use whenever the
  user asks to summarise, profile or describe a CSV.
---

# CSV summary

Run `python scripts/summarise.py INPUT.csv > report.md`, then add one sentence per notable column.
"""

EVALS: dict[str, Any] = {
    "skill_name": "csv-summary",
    "evals": [
        {
            "id": 1,
            "prompt": "Summarise evals/files/weather.csv for me and save the summary in report.md.",
            "expected_output": "A report.md naming July as the hottest month, with the mean temperature.",
            "files": ["evals/files/weather.csv"],
            "expectations": [
                "report.md names the hottest month",
                "The skill used its script rather than pandas",
            ],
        },
        {
            "id": 2,
            "eval_name": "sales-by-region",
            "prompt": "which region sold most? the data is in evals/files/sales.csv\n"
            'Answer in two lines, "quoted".',
            "expected_output": "South, with 32 sales.",
            "files": ["evals/files/sales.csv", "evals/files/weather.csv"],
            "assertions": ["The answer says the south region sold most"],
        },
        {
            "id": 7,
            "prompt": "Describe a CSV with columns a,b,c where every value is empty. "
            "What would the summary say?",
            "expected_output": "It says the file has no data in any column rather than inventing figures.",
            "files": [],
            "expectations": [],
        },
    ],
}

TRIGGERS: list[dict[str, Any]] = [
    {
        "query": "ok so i have this sales_q3.csv export from hubspot and my boss wants the gist of it "
        "by 5pm, can you give me a summary of whats in it",
        "should_trigger": True,
    },
    {
        "query": "Profile the columns of data/customers.csv: types, missing values, a line each.",
        "should_trigger": True,
    },
    {"query": "Convert data/customers.csv to JSON lines, one object per row.", "should_trigger": False},
]


def make_skill(root: Path) -> Path:
    """``root/csv-summary``: SKILL.md, a script, evals/evals.json, evals/trigger-evals.json, input files."""
    folder = root / "csv-summary"
    (folder / "scripts").mkdir(parents=True)
    (folder / "evals/files").mkdir(parents=True)
    (folder / "SKILL.md").write_text(SKILL_MD, encoding="utf-8")
    (folder / "scripts/summarise.py").write_text("print('# Report')\n", encoding="utf-8")
    (folder / "evals/files/weather.csv").write_text("month,temp\njan,3\njul,31\n", encoding="utf-8")
    (folder / "evals/files/sales.csv").write_text("region,sales\nnorth,10\nsouth,32\n", encoding="utf-8")
    (folder / "evals/evals.json").write_text(json.dumps(EVALS, indent=2), encoding="utf-8")
    (folder / "evals/trigger-evals.json").write_text(json.dumps(TRIGGERS, indent=2), encoding="utf-8")
    return folder
