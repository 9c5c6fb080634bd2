#!/usr/bin/env python3
"""test_html.py — the HTML report (`report --html`): one self-contained
page with its charts, rendered by headless Chromium.

On a generated H100 trace (the roofline needs the GPU table) and on a
real trace of ../shared/data when present:
- the page has no script and fetches nothing (no src=/href= to http, no
  @import, no url());
- it holds the GPU time split with idle, the category, op and kernel bars,
  the roofline with its roof and labelled points, the short-kernel
  histogram, and one folded table per sheet;
- the compare page shows the reports' timelines side by side;
- headless Chromium (Debian's chromium) parses it (--dump-dom shows every
  chart) and draws it: the screenshot has more than 2 % non-white pixels.
  Without chromium that part says "skipped" (CI installs it).

usage: test_html.py BUILD_DIR
"""
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import zlib

from tlcheck import Checks

check = Checks()


def png_nonwhite_fraction(path):
    """Share of pixels that are not white in an 8-bit RGB/RGBA PNG
    (standard library only: the five PNG filters undone by hand)."""
    data = open(path, "rb").read()
    pos, idat, w = 8, b"", 0
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            w, h, depth, ctype = struct.unpack(">IIBB", body[:10])
            bpp = {2: 3, 6: 4}[ctype]
        elif kind == b"IDAT":
            idat += body
        pos += 12 + n
    raw = zlib.decompress(idat)
    stride = w * bpp
    prev = bytearray(stride)
    nonwhite = 0
    for y in range(h):
        f = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b = prev[i]
            c = prev[i - bpp] if i >= bpp else 0
            if f == 1:
                line[i] = (line[i] + a) & 255
            elif f == 2:
                line[i] = (line[i] + b) & 255
            elif f == 3:
                line[i] = (line[i] + ((a + b) >> 1)) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        for x in range(0, stride, bpp):
            if line[x] < 240 or line[x + 1] < 240 or line[x + 2] < 240:
                nonwhite += 1
        prev = line
    return nonwhite / float(w * h)


def check_page(page, name, want_roofline):
    html = open(page, encoding="utf-8").read()
    check("<script" not in html.lower(), f"{name}: the page has a script")
    check(not re.search(r"(src|href)\s*=\s*\"https?:|@import|url\(", html), f"{name}: the page fetches something")
    for kind in ("split", "bars", "histogram") + (("roofline",) if want_roofline else ()):
        check(f'<svg class="chart {kind}"' in html, f"{name}: no {kind} chart")
    check("idle_time" in html, f"{name}: the GPU split leaves out idle time")
    if want_roofline:
        roof = html[html.find('<svg class="chart roofline"'):]
        roof = roof[:roof.find("</svg>")]
        check('class="roof"' in roof, f"{name}: roofline without its roof")
        check(roof.count("<circle") >= 5 and roof.count('class="plabel"') >= 3,
              f"{name}: roofline points or labels missing")
    check(html.count("<details") >= 5, f"{name}: sheets are not listed")
    return html


def render(chromium, page, tmp, name, min_svg=5):
    shot = os.path.join(tmp, name + ".png")
    base = [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
            "--window-size=1200,1600"]
    r = subprocess.run(base + ["--dump-dom", "file://" + page], capture_output=True, text=True, timeout=120)
    dom = r.stdout
    check(dom.count("<svg") >= min_svg, f"{name}: chromium's DOM has {dom.count('<svg')} svg elements")
    subprocess.run(base + ["--screenshot=" + shot, "file://" + page], capture_output=True, timeout=120)
    check(os.path.exists(shot), f"{name}: no screenshot")
    if os.path.exists(shot):
        frac = png_nonwhite_fraction(shot)
        check(frac > 0.02, f"{name}: the screenshot is blank ({frac:.4f} non-white)")
        print(f"{name}: rendered, {frac * 100:.1f} % of the screenshot drawn")


def check_rank_page(page, name, sheet, chromium, tmp):
    check(os.path.exists(page), f"{name}: no page")
    if not os.path.exists(page):
        return
    html = open(page, encoding="utf-8").read()
    check("<script" not in html.lower(), f"{name}: the page has a script")
    bars = re.findall(r'<svg class="chart bars"[^>]*>.*?</svg>', html, re.S)
    per_rank = [b for b in bars if f"{sheet}:" in b and " per rank" in b]
    check(per_rank, f"{name}: no per-rank bars of {sheet}")
    for k in range(4):
        check(any(f"rank {k}<" in b for b in per_rank), f"{name}: rank {k} has no bar")
    if chromium:
        render(chromium, page, tmp, name, html.count("<svg"))


def check_ranks(build, tmp, db, chromium):
    """Per-rank bars: a 4-rank corpus through collective and corpus-report."""
    corpus = os.path.join(tmp, "corpus", "cfg")
    subprocess.run([os.path.join(build, "tracegen"), "--size", "300K", "--ranks", "4", "-q", "-o", corpus],
                   check=True)
    tl = os.path.join(build, "tracelens")
    page = os.path.join(tmp, "collective.html")
    r = subprocess.run([tl, "--db", db, "collective", "--trace_pattern", os.path.join(corpus, "rank_*.json"),
                        "--world_size", "4", "--html", page, "-q"], capture_output=True, text=True)
    check(r.returncode == 0, f"collective --html: {r.returncode} {r.stderr[-300:]}")
    check(not os.path.exists(os.path.join(corpus, "nccl_analysis_report.xlsx")),
          "collective --html alone wrote a workbook")
    check_rank_page(page, "collective", "imbalance_ranks", chromium, tmp)
    r = subprocess.run([tl, "--db", db, "corpus-report", "-b", os.path.dirname(corpus), "-f", "rank_", "--html",
                        "-q"], capture_output=True, text=True)
    check(r.returncode == 0, f"corpus-report --html: {r.returncode} {r.stderr[-300:]}")
    check_rank_page(os.path.join(corpus, "cfg_rank__performance_report.html"), "corpus", "imbalance_ranks",
                    chromium, tmp)


def main():
    build = os.path.abspath(sys.argv[1])
    tl = os.path.join(build, "tracelens")
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    with tempfile.TemporaryDirectory(prefix="tl_html_") as tmp:
        db = os.path.join(tmp, "db")
        trace = os.path.join(tmp, "h100.json")
        subprocess.run([os.path.join(build, "tracegen"), "--size", "2M", "-q", "-o", trace], check=True)
        page = os.path.join(tmp, "h100.html")
        r = subprocess.run([tl, "--db", db, "report", trace, "--html", page, "--enable_kernel_summary",
                            "--short_kernel_study"], capture_output=True, text=True)
        check(r.returncode == 0 and os.path.exists(page), f"report --html: {r.returncode} {r.stderr[-300:]}")
        if os.path.exists(page):
            check_page(page, "h100", True)
            if chromium:
                render(chromium, page, tmp, "h100")
        # compare: the reports side by side
        g = os.path.join(os.path.dirname(os.path.abspath(__file__)), "golden")
        page3 = os.path.join(tmp, "compare.html")
        r = subprocess.run([os.path.join(build, "TraceLens_compare_perf_reports_pytorch"),
                            os.path.join(g, "b200_eager_window", "reference_csvs"),
                            os.path.join(g, "hta_mi250_minitoy", "reference_csvs"), "--names", "b200", "mi250",
                            "-o", os.path.join(tmp, "c.xlsx"), "--html", page3], capture_output=True, text=True)
        check(r.returncode == 0 and os.path.exists(page3), f"compare --html: {r.returncode} {r.stderr[-300:]}")
        if os.path.exists(page3):
            html = open(page3, encoding="utf-8").read()
            check("busy_time (b200)" in html and "busy_time (mi250)" in html, "compare page: reports side by side")
            check("<script" not in html.lower(), "compare page has a script")

        check_ranks(build, tmp, db, chromium)

        data = os.environ.get("TL_SHARED_DATA") or os.path.join(os.path.dirname(__file__), "..", "..", "shared",
                                                               "data")
        real = os.path.join(data, "public", "xdit_sd35", "xdit_sd35.json.gz")
        if os.path.exists(real):
            page2 = os.path.join(tmp, "xdit.html")
            r = subprocess.run([os.path.join(build, "TraceLens_generate_perf_report_pytorch"), "--profile_json_path",
                                real, "--html", page2, "--short_kernel_study", "--gpu_arch_platform", "MI300X"],
                               capture_output=True, text=True, env=dict(os.environ, TRACELENS_DB=db))
            check(r.returncode == 0 and os.path.exists(page2), f"compat --html: {r.returncode} {r.stderr[-300:]}")
            if os.path.exists(page2):
                check_page(page2, "xdit_sd35", True)
        else:
            print("real trace: skipped (no ../shared/data)")
    if not chromium:
        print("rendering: skipped (no chromium; tools/setup.sh installs it)")
    return check.summary()


if __name__ == "__main__":
    sys.exit(main())
