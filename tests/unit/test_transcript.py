"""Tests for skillgym.transcript: a trial's transcript.md says what the agent was told, said and ran."""

from __future__ import annotations

from skillgym.trace import Message, SkillEvidence, TokenUsage, ToolCall, Trace
from skillgym.transcript import MAX_OUTPUT_CHARS, render_transcript


def test_prompt_messages_calls_skills_answer_and_tokens_in_order() -> None:
    trace = Trace(
        final_text="Saved result.md.",
        messages=(
            Message(role="assistant", text="Let me look."),
            Message(role="assistant", text="One file; writing the summary."),
        ),
        tool_calls=(
            ToolCall(name="Bash", command="ls", output="a.txt\n", exit_code=0, after_messages=1),
            ToolCall(name="Write", input='{"file_path": "r.md"}', after_messages=2),
        ),
        skills=(SkillEvidence(skill="csv-summary", source="skill-tool", confidence="high"),),
        usage=TokenUsage(input=9, output=5, total=14),
    )
    text = render_transcript("execution/c/none/command/trial-1", "Do the task", trace)
    assert text == (
        "# execution/c/none/command/trial-1\n\n## Prompt\n\n```\nDo the task\n```\n\n"
        "## Conversation\n\n**assistant**\n\n```\nLet me look.\n```\n\n"
        "**tool call 1: Bash**, exit 0\n\n```\n$ ls\na.txt\n```\n\n"
        "**assistant**\n\n```\nOne file; writing the summary.\n```\n\n"
        '**tool call 2: Write**\n\n```\n{"file_path": "r.md"}\n```\n\n'
        "## Skill evidence\n\n- csv-summary: skill-tool (high)\n\n"
        "## Final answer\n\n```\nSaved result.md.\n```\n\n## Tokens\n\ninput 9, output 5, total 14\n"
    )


def test_calls_whose_place_is_unknown_follow_the_messages() -> None:
    # A trace.json written before the order was recorded: its calls carry no after_messages.
    trace = Trace(
        messages=(Message(role="assistant", text="a"), Message(role="assistant", text="b")),
        tool_calls=(ToolCall(name="Bash", command="ls", exit_code=1, is_error=True),),
    )
    text = render_transcript("k", "p", trace)
    assert text.index("```\nb\n```") < text.index("**tool call 1: Bash**, exit 1 (error)")
    assert "## Conversation" in text
    assert "## Conversation" not in render_transcript("k", "p", Trace(final_text="x"))


def test_backticks_inside_keep_the_fence_and_long_output_is_cut() -> None:
    trace = Trace(
        final_text="use ```sh blocks```",
        tool_calls=(ToolCall(name="Bash", command="yes", output="y" * (MAX_OUTPUT_CHARS + 10)),),
        is_error=True,
    )
    text = render_transcript("k", "", trace)
    assert "````\nuse ```sh blocks```\n````" in text
    assert "[... 10 more characters in trace.json]" in text
    assert "## Final answer (the agent reported an error)" in text
    assert "```\n(empty)\n```" in text
