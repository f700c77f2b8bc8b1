"""Prompt lane, should-not-trigger: ordinary coding requests where no terminal skill belongs.

A parametrized family, written with the decorator form: one builder, six cases.
"""

from skillgym import prompt_case

NEGATIVES = (
    (
        "pure-reasoning",
        "Explain how the Linux CFS scheduler decides which process runs next.",
        r"vruntime|virtual runtime",
    ),
    (
        "code-review",
        "Review this function for bugs:\n\n    def mean(xs):\n        return sum(xs) / len(xs)\n",
        r"empty|ZeroDivision",
    ),
    ("plain-file-edit", "Rename the function parse_args to parse_arguments in cli.py", r"parse_arguments"),
    ("web-development", "Build a React component for a paginated table of users.", r"useState|page"),
    ("documentation", "Write API docs for our /auth/login and /auth/refresh endpoints.", r"token"),
    (
        "git-operations",
        "Rebase my feature branch on main and resolve the conflicts in setup.cfg.",
        r"git rebase",
    ),
)

for case_id, request, topic in NEGATIVES:

    @prompt_case(case_id)
    def build(c, request=request, topic=topic):
        c.category("should-not-trigger")
        c.prompt(request)
        c.grader_notes("No terminal program is driven here, so neither skill should be used.")
        c.expect_skill(None)
        with c.step("stays-on-task") as s:
            s.must_mention(topic)
            s.must_not_mention(r"\btmux\b", r"terminal session")
