"""The run report: aggregation, baseline comparison and rendering."""

from __future__ import annotations

from .aggregate import Report as Report
from .aggregate import build_report as build_report
from .baseline import compare_to_baseline as compare_to_baseline
from .baseline import load_report as load_report
from .markdown import render_markdown as render_markdown

__all__ = ("Report", "build_report", "compare_to_baseline", "load_report", "render_markdown")
