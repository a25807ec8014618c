#!/usr/bin/env python3
"""Renders `tmux capture-pane -e -p` output (ANSI SGR colours) to a PNG with Pillow.
Usage: ansi2png.py CAPTURE.txt OUT.png [COLS ROWS]"""
import re, sys
from PIL import Image, ImageDraw, ImageFont

BASE = [(0x1d, 0x1f, 0x21), (0xcc, 0x66, 0x66), (0xb5, 0xbd, 0x68), (0xf0, 0xc6, 0x74), (0x81, 0xa2, 0xbe),
        (0xb2, 0x94, 0xbb), (0x8a, 0xbe, 0xb7), (0xc5, 0xc8, 0xc6), (0x66, 0x66, 0x66), (0xd5, 0x4e, 0x53),
        (0xb9, 0xca, 0x4a), (0xe7, 0xc5, 0x47), (0x7a, 0xa6, 0xda), (0xc3, 0x97, 0xd8), (0x70, 0xc0, 0xb1), (0xea, 0xea, 0xea)]
FG, BG = (0xd8, 0xd8, 0xd8), (0x1d, 0x1f, 0x21)

def xterm(n):
    if n < 16: return BASE[n]
    if n < 232:
        n -= 16; steps = [0, 95, 135, 175, 215, 255]
        return (steps[n // 36], steps[(n // 6) % 6], steps[n % 6])
    v = 8 + 10 * (n - 232); return (v, v, v)

def parse(text):
    rows = []
    fg, bg, bold, rev, ul = None, None, False, False, False
    for line in text.split("\n"):
        cells = []
        for m in re.finditer(r"\x1b\[([0-9;:]*)m|\x1b\[[^a-zA-Z]*[a-zA-Z]|([^\x1b])", line):
            if m.group(2) is not None:
                f, b = fg or FG, bg or BG
                if rev: f, b = b, f
                cells.append((m.group(2), f, b, bold, ul))
                continue
            if m.group(1) is None: continue
            ps = [int(p) if p else 0 for p in re.split("[;:]", m.group(1))] or [0]
            i = 0
            while i < len(ps):
                p = ps[i]
                if p == 0: fg, bg, bold, rev, ul = None, None, False, False, False
                elif p == 1: bold = True
                elif p == 22: bold = False
                elif p == 4: ul = True
                elif p == 24: ul = False
                elif p == 7: rev = True
                elif p == 27: rev = False
                elif 30 <= p <= 37: fg = BASE[p - 30]
                elif 90 <= p <= 97: fg = BASE[p - 90 + 8]
                elif p == 39: fg = None
                elif 40 <= p <= 47: bg = BASE[p - 40]
                elif 100 <= p <= 107: bg = BASE[p - 100 + 8]
                elif p == 49: bg = None
                elif p in (38, 48) and i + 1 < len(ps):
                    if ps[i + 1] == 5 and i + 2 < len(ps):
                        c = xterm(ps[i + 2]); i += 2
                    elif ps[i + 1] == 2 and i + 4 < len(ps):
                        c = tuple(ps[i + 2:i + 5]); i += 4
                    else: c = None
                    if p == 38: fg = c
                    else: bg = c
                i += 1
        rows.append(cells)
    return rows

def main():
    text = open(sys.argv[1], encoding="utf-8", errors="replace").read().rstrip("\n")
    cols = int(sys.argv[3]) if len(sys.argv) > 3 else 100
    nrows = int(sys.argv[4]) if len(sys.argv) > 4 else None
    rows = parse(text)
    if nrows: rows = (rows + [[]] * nrows)[:nrows]
    font = ImageFont.truetype("/usr/share/fonts/truetype/dejavu/DejaVuSansMono.ttf", 16)
    bold_font = ImageFont.truetype("/usr/share/fonts/truetype/dejavu/DejaVuSansMono-Bold.ttf", 16)
    cw = round(font.getlength("M")); ch = 20; pad = 12
    img = Image.new("RGB", (cols * cw + 2 * pad, len(rows) * ch + 2 * pad), BG)
    d = ImageDraw.Draw(img)
    for y, cells in enumerate(rows):
        for x, (c, f, b, bold, ul) in enumerate(cells[:cols]):
            px, py = pad + x * cw, pad + y * ch
            if b != BG: d.rectangle([px, py, px + cw - 1, py + ch - 1], fill=b)
            if c != " ": d.text((px, py + 1), c, font=bold_font if bold else font, fill=f)
            if ul: d.line([px, py + ch - 3, px + cw - 1, py + ch - 3], fill=f)
    img.save(sys.argv[2])

main()
