#!/usr/bin/env python3
"""Compares the committed GPU figures with the CPU ones, scenario by scenario:
a Markdown table and an SVG plot for docs/probe.md.

    scripts/probe_compare.py GPU.json CPU.json              print the table
    scripts/probe_compare.py GPU.json CPU.json --write DOC.md PLOT.svg
                                  rewrite DOC.md between its markers, and the plot

The plot shows, per scenario, how much more the bad variant takes than the
fixed one: peak memory and time per step, bad / fixed, on each device. A
scenario that needs a GPU has no CPU bar; one the GPU run did not reach has
no GPU bar."""
import json
import sys
from xml.sax.saxutils import escape

BEGIN = "<!-- probe_compare: begin (scripts/probe_compare.py writes this part) -->\n"
END = "<!-- probe_compare: end -->\n"


def mib(v):
    if v is None:
        return "-"
    if abs(v) < 1024:
        return "%d B" % v
    if abs(v) < 1 << 20:
        return "%.1f KiB" % (v / 1024)
    if abs(v) < 1 << 30:
        return "%.1f MiB" % (v / 2**20)
    return "%.2f GiB" % (v / 2**30)


def ms(v):
    return "-" if v is None else "%.1f ms" % (v * 1e3) if v >= 1e-3 else "%.0f us" % (v * 1e6)


def ratio(bad, fixed):
    return bad / fixed if bad is not None and fixed else None


def rows(gpu, cpu):
    g = {(s["rule"], s["scenario"]): s for s in gpu["scenarios"]}
    missing = {(m["rule"], m["scenario"]) for m in gpu.get("not_measured", [])}
    out = []
    for c in cpu["scenarios"]:
        key = (c["rule"], c["scenario"])
        out.append((key, g.get(key), c, key in missing))
    return out


def verdict(s):
    by = ", ".join(s.get("confirmed_by") or [])
    return s["verdict"] + (f" ({by})" if by else "")


def table(gpu, cpu):
    dev, tg, tc = gpu["device"], gpu["torch"], cpu["torch"]
    lines = [f"| rule | scenario | CPU, torch {tc} | {dev}, torch {tg} | {dev}: peak bad / fixed | "
             "growth per step bad / fixed | the driver sees bad / fixed | time per step bad / fixed |",
             "|---|---|---|---|---|---|---|---|"]
    for (rule, name), g, c, missing in rows(gpu, cpu):
        if g is None:
            lines.append(f"| {rule} | {name} | {verdict(c)} | {'not measured' if missing else '-'} | - | - | - | - |")
            continue
        b, f = g["bad"], g["fixed"]
        lines.append(f"| {rule} | {name} | {verdict(c)} | {verdict(g)} | {mib(b['peak_bytes'])} / "
                     f"{mib(f['peak_bytes'])} | {mib(b['growth_bytes_per_step'])} / {mib(f['growth_bytes_per_step'])}"
                     f" | {mib(b.get('driver_peak_bytes'))} / {mib(f.get('driver_peak_bytes'))} | "
                     f"{ms(b['time_per_step_s'])} / {ms(f['time_per_step_s'])} |")
    return "\n".join(lines) + "\n"


def plot(gpu, cpu):
    data = []
    for (rule, name), g, c, _ in rows(gpu, cpu):
        def pair(s, key):
            if s is None or not isinstance(s.get("bad"), dict) or not isinstance(s.get("fixed"), dict):
                return None
            return ratio(s["bad"].get(key), s["fixed"].get(key))
        data.append((f"{rule} {name}", pair(c, "peak_bytes"), pair(g, "peak_bytes"),
                     pair(c, "time_per_step_s"), pair(g, "time_per_step_s")))
    row_h, left, panel_w, top = 26, 170, 300, 58
    width = left + 2 * panel_w + 60
    height = top + row_h * len(data) + 40
    colours = ("#8c8c8c", "#c0392b")
    svg = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
           f'font-family="sans-serif" font-size="12">',
           f'<rect width="{width}" height="{height}" fill="white"/>',
           f'<text x="10" y="20" font-size="14">bad / fixed per scenario: CPU (torch {escape(cpu["torch"])}, grey) '
           f'and {escape(gpu["device"])} (torch {escape(gpu["torch"])}, red)</text>']
    for p, (title, lo, hi) in enumerate((("peak memory, bad / fixed", 0, 8), ("time per step, bad / fixed", 0, 4))):
        x0 = left + p * (panel_w + 30)
        svg.append(f'<text x="{x0}" y="{top - 14}">{title}</text>')
        for t in range(lo, hi + 1):
            x = x0 + (t - lo) / (hi - lo) * panel_w
            svg.append(f'<line x1="{x:.1f}" y1="{top - 6}" x2="{x:.1f}" y2="{top + row_h * len(data)}" '
                       f'stroke="{"#555" if t == 1 else "#ddd"}"/>')
            svg.append(f'<text x="{x:.1f}" y="{top + row_h * len(data) + 14}" text-anchor="middle">{t}x</text>')
        for i, row in enumerate(data):
            y = top + i * row_h
            for k, colour in enumerate(colours):
                v = row[1 + 2 * p + k]
                if v is None:
                    continue
                w = min(max(v, 0), hi) / (hi - lo) * panel_w
                svg.append(f'<rect x="{x0}" y="{y + 3 + k * 10}" width="{w:.1f}" height="9" fill="{colour}">'
                           f'<title>{escape(row[0])}: {v:.2f}x</title></rect>')
                if v > hi:
                    svg.append(f'<text x="{x0 + w + 3:.1f}" y="{y + 11 + k * 10}" font-size="10">{v:.1f}x</text>')
    for i, row in enumerate(data):
        svg.append(f'<text x="{left - 8}" y="{top + i * row_h + 16}" text-anchor="end">{escape(row[0])}</text>')
    svg.append("</svg>")
    return "\n".join(svg) + "\n"


def main(argv):
    if len(argv) not in (2, 5) or (len(argv) == 5 and argv[2] != "--write"):
        sys.stderr.write(__doc__)
        return 2
    with open(argv[0], encoding="utf-8") as f:
        gpu = json.load(f)
    with open(argv[1], encoding="utf-8") as f:
        cpu = json.load(f)
    if len(argv) == 2:
        sys.stdout.write(table(gpu, cpu))
        return 0
    doc, svg = argv[3], argv[4]
    with open(doc, encoding="utf-8") as f:
        text = f.read()
    if BEGIN not in text or END not in text:
        sys.stderr.write(f"{doc}: no probe_compare markers\n")
        return 1
    head, rest = text.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    with open(doc, "w", encoding="utf-8") as f:
        f.write(head + BEGIN + table(gpu, cpu) + END + tail)
    with open(svg, "w", encoding="utf-8") as f:
        f.write(plot(gpu, cpu))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
