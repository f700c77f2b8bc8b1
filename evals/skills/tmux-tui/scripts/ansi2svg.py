#!/usr/bin/env python3
"""ansi2svg.py: turn `tmux capture-pane -e -p` output (text with SGR colour codes) into an SVG image.

Reads stdin, writes stdout. Handles the 16 basic colours, 256-colour and truecolor foregrounds and
backgrounds, bold, italic, underline and reverse video, and wide (CJK) characters. Standard library only.
"""

from __future__ import annotations

import argparse
import re
import sys
import unicodedata
from html import escape

CELL_W, CELL_H, PAD = 8.4, 17, 6
FONT = "DejaVu Sans Mono, Menlo, monospace"
DEFAULT_FG, DEFAULT_BG = "#d0d0d0", "#1c1c1c"
# xterm's 16 colours: black red green yellow blue magenta cyan white, then the bright ones.
# fmt: off
BASIC = (
    "#000000", "#cd0000", "#00cd00", "#cdcd00", "#0000ee", "#cd00cd", "#00cdcd", "#e5e5e5",
    "#7f7f7f", "#ff0000", "#00ff00", "#ffff00", "#5c5cff", "#ff00ff", "#00ffff", "#ffffff",
)
# fmt: on
SGR = re.compile(r"\x1b\[([0-9;:]*)m")
OTHER_ESCAPE = re.compile(r"\x1b(?:\[[0-9;?]*[A-Za-ln-z]|\][^\x07\x1b]*(?:\x07|\x1b\\)|[()][0-9A-B])")


def palette(n: int) -> str:
    if n < 16:
        return BASIC[n]
    if n < 232:
        n -= 16
        steps = (0, 95, 135, 175, 215, 255)
        return f"#{steps[n // 36]:02x}{steps[(n // 6) % 6]:02x}{steps[n % 6]:02x}"
    level = 8 + (n - 232) * 10
    return f"#{level:02x}{level:02x}{level:02x}"


class Style:
    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        self.fg: str | None = None
        self.bg: str | None = None
        self.bold = self.italic = self.underline = self.reverse = False

    def key(self) -> tuple[object, ...]:
        return (self.fg, self.bg, self.bold, self.italic, self.underline, self.reverse)

    def apply(self, params: str) -> None:
        codes = [int(p) if p.isdigit() else 0 for p in re.split(r"[;:]", params)] if params else [0]
        i = 0
        while i < len(codes):
            c = codes[i]
            if c == 0:
                self.reset()
            elif c == 1:
                self.bold = True
            elif c == 3:
                self.italic = True
            elif c == 4:
                self.underline = True
            elif c == 7:
                self.reverse = True
            elif c == 22:
                self.bold = False
            elif c == 23:
                self.italic = False
            elif c == 24:
                self.underline = False
            elif c == 27:
                self.reverse = False
            elif 30 <= c <= 37 or 90 <= c <= 97:
                self.fg = BASIC[c - 30 if c < 90 else c - 90 + 8]
            elif 40 <= c <= 47 or 100 <= c <= 107:
                self.bg = BASIC[c - 40 if c < 100 else c - 100 + 8]
            elif c == 39:
                self.fg = None
            elif c == 49:
                self.bg = None
            elif c in (38, 48) and i + 1 < len(codes):
                colour = None
                if codes[i + 1] == 5 and i + 2 < len(codes):
                    colour, i = palette(codes[i + 2]), i + 2
                elif codes[i + 1] == 2 and i + 4 < len(codes):
                    r, g, b = codes[i + 2 : i + 5]
                    colour, i = f"#{r:02x}{g:02x}{b:02x}", i + 4
                if c == 38:
                    self.fg = colour
                else:
                    self.bg = colour
            i += 1


def cells(line: str, style: Style) -> list[tuple[str, tuple[object, ...], int]]:
    """(character, style key, width) for each character of one captured line."""
    out: list[tuple[str, tuple[object, ...], int]] = []
    pos = 0
    line = OTHER_ESCAPE.sub("", line)
    for match in SGR.finditer(line + "\x1b[m"):
        for ch in line[pos : match.start()]:
            if unicodedata.combining(ch) and out:
                prev = out[-1]
                out[-1] = (prev[0] + ch, prev[1], prev[2])
                continue
            if ch < " ":
                continue
            out.append((ch, style.key(), 2 if unicodedata.east_asian_width(ch) in "WF" else 1))
        if match.end() <= len(line):
            style.apply(match.group(1))
        pos = match.end()
    return out


def runs(row: list[tuple[str, tuple[object, ...], int]]) -> list[tuple[int, str, tuple[object, ...], int]]:
    """(start cell, text, style, width in cells) for each run of same-style cells in one line."""
    found: list[tuple[int, str, tuple[object, ...], int]] = []
    x = 0
    for ch, style, w in row:
        if found and found[-1][2] == style:
            start, text, _style, width = found[-1]
            found[-1] = (start, text + ch, style, width + w)
        else:
            found.append((x, ch, style, w))
        x += w
    return found


def render(text: str, cols: int | None, rows: int | None, title: str) -> str:
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    style = Style()
    grid = [cells(line, style) for line in lines]
    width = cols or max((sum(w for _c, _k, w in row) for row in grid), default=80)
    height = rows or len(grid)
    w_px, h_px = width * CELL_W + 2 * PAD, height * CELL_H + 2 * PAD
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{w_px:.0f}" height="{h_px:.0f}" '
        f'viewBox="0 0 {w_px:.1f} {h_px:.1f}" font-family="{FONT}" font-size="14">',
        f"<title>{escape(title)} ({width}x{height})</title>",
        f'<rect width="100%" height="100%" fill="{DEFAULT_BG}"/>',
    ]
    for y, row in enumerate(grid[:height]):
        top = PAD + y * CELL_H
        for x, run, style, w in runs(row):
            fg, bg, bold, italic, underline, reverse = style
            fill, back = fg or DEFAULT_FG, bg
            if reverse:
                fill, back = (bg or DEFAULT_BG), (fg or DEFAULT_FG)
            left = PAD + x * CELL_W
            if back:
                box = f'x="{left:.1f}" y="{top}" width="{w * CELL_W:.1f}" height="{CELL_H}"'
                out.append(f'<rect {box} fill="{back}"/>')
            if run.strip():
                attrs = f'fill="{fill}"'
                attrs += ' font-weight="bold"' if bold else ""
                attrs += ' font-style="italic"' if italic else ""
                attrs += ' text-decoration="underline"' if underline else ""
                # textLength pins each run to its cells, whatever the viewer's font.
                attrs += f' textLength="{w * CELL_W:.1f}" lengthAdjust="spacingAndGlyphs"'
                place = f'x="{left:.1f}" y="{top + CELL_H - 4}" xml:space="preserve"'
                out.append(f"<text {place} {attrs}>{escape(run)}</text>")
    out.append("</svg>")
    return "\n".join(out) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", help="'COLS ROWS' of the pane (default: from the text)")
    parser.add_argument("--title", default="terminal")
    args = parser.parse_args()
    cols = rows = None
    if args.size:
        cols, rows = (int(n) for n in args.size.split())
    sys.stdout.write(render(sys.stdin.read(), cols, rows, args.title))
    return 0


if __name__ == "__main__":
    sys.exit(main())
