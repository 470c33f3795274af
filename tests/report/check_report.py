#!/usr/bin/env python3
"""Load a tide HTML report in headless Chromium and check what it drew.

    check_report.py --chromium PATH --summary S.json [--scheme light|dark] [--out-dir DIR]
                    REPORT[,screenshot=OUT.png][,dom=OUT.html] [REPORT...]
    check_report.py --chromium PATH [--scheme light|dark] [--out-dir DIR]
                    --live http://HOST:PORT/[,screenshot=OUT.png][,dom=OUT.html]

Each report is opened in a fresh tab and browser context of one Chromium.
With --live the page is tide run's status page (see "Live mode" below).
Exit status: 0 all checks of all reports passed, 1 a check failed (each
failure is a line starting with "FAIL"; each report's lines end with
"RESULT NAME passed|FAILED (N)"), 2 the harness itself failed (Chromium did
not start, bad arguments).

How it watches the page: it drives Chromium over the DevTools protocol on
--remote-debugging-pipe (tests/report/cdp.py; standard library only). The
Runtime, Log, Network, Page and Inspector domains are enabled on the page's
session while it still shows about:blank, and only then is the report
navigated to, so every event of the report's document is seen from its first
byte: console messages (Runtime.consoleAPICalled), uncaught exceptions
(Runtime.exceptionThrown), messages Chromium itself logs for the page such as
failed loads or CSP violations (Log.entryAdded), every request the page makes
(Network.requestWillBeSent / loadingFailed) and renderer crashes. These are
structured events with a type and a level, matched to the report's own tab.
The alternative, --enable-logging=stderr --v=0, was tried and rejected: in
Chromium 156 it prints console.log, console.error and an uncaught exception
alike as 'INFO:CONSOLE(line)] "text", source: URL' (no level), amid thirty-odd
lines of the browser's own noise (D-Bus, GPU, ...) whose format changes
between versions, and a failed request does not appear there at all.

What it checks (all against the JSON summary written by the same run):
  - no console.error, console.warn or console.assert, no uncaught exception
    (nor unhandled rejection), no error the browser logs for the page (bad SVG
    attribute, failed load, CSP violation, ...), no crash;
  - no request other than the report file itself (data: and blob: URLs are
    self-contained and allowed). Chromium also runs with
    --host-resolver-rules="MAP * ~NOTFOUND", so a request that slipped through
    could not leave the machine either; it would fail to resolve and show up
    as a failed load as well as a request;
  - <html data-rendered="1">;
  - the charts expected from the summary are present: capacity:P and cost:P per
    policy P; queue:C and wait:C for "all" and every priority class C (the keys
    of wait_s_by_priority); util:measured, util:allocated, cost:total,
    spot:interruptions, spot:lost;
  - every chart has a caption and an <svg> with a path of at least 2 finite
    points, or (wait CDFs only) a <p class="note">; charts with one line per
    policy have a line for every policy (wait CDFs: every policy that started
    a job of that class);
  - the headline table has one column per policy, in the summary's order; in
    every value cell data-value is exactly the summary's value at data-key and
    the text is that value formatted for data-unit; a "-" cell only where the
    summary has no number;
  - the colour scheme asked for is the one in effect: prefers-color-scheme
    matches, the page background is the one the page's own theme switch gives
    for that scheme, and the screenshot's corner pixel is dark (or light).

Live mode (--live URL, the address of `tide run`'s HTTP server): the page at
URL is <body data-source="/api/v1/report" data-refresh="N">; its script
fetches that JSON (the format of a report's embedded data, one policy "live")
every N seconds and redraws. The checks are those above, with these changes:
  - allowed requests: the page itself and GETs of /api/v1/report on the same
    origin, each answered 200 (any other request, a failed load or an HTTP
    error answer fails);
  - what the DOM is compared against: the JSON the page itself drew. The
    JSON changes from one fetch to the next (cost and GPU-hours grow while a
    node is up, "end" is always now), so a summary the checker fetches is
    never certain to be the page's data, and retrying until the two agree
    can go on for as long as nodes run. Instead the page's own responses are
    read back over DevTools (Network.getResponseBody), and the one it drew is
    known exactly: the page fetches strictly one after another (the next
    fetch is scheduled once the previous one settled) and draws every
    successful one once, setting data-rendered again; the observer counts
    those sets, and the DOM read together with the count k (one
    Runtime.evaluate, which no redraw can interleave) shows the k-th
    successful response. The checker also fetches /api/v1/report itself
    (urllib) right after the first drawing: that answer must be mode "live"
    with the policies ["live"], as the page's, and the headline figures that
    changed in between are printed as a note;
  - charts: capacity:live, queue:all, wait:all, queue:C and wait:C per class C
    of wait_s_by_priority, util:measured, util:allocated, cost:total,
    cost:live, spot:interruptions, spot:lost; util:measured may show its
    <p class="note"> instead of lines, but only when the data has no util_gpus
    series (no utilization source configured);
  - headline: one column "live"; a row for every figure of the summary that
    the page's table knows (HEADLINE_KEYS);
  - refresh: at least 2 fetches of /api/v1/report start within 3 refresh
    intervals (data-refresh) of the navigation, answered 200; the page has
    drawn again (data-rendered set twice or more), its status line does not
    say "cannot refresh", and the headline of its latest drawing equals the
    JSON that drawing was made from.
"""
import argparse
import base64
import decimal
import html.parser
import json
import math
import os
import re
import struct
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
import zlib

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cdp  # noqa: E402

FAILS = []   # the current case's failures
SINKS = []   # where the current case's lines go besides stdout


def say(line):
    print(line, flush=True)
    for f in SINKS:
        f.write(line + "\n")


def fail(msg):
    FAILS.append(msg)
    say("FAIL " + msg)


def ok(msg):
    say("ok   " + msg)


# ---- the page's number formats, re-implemented (src/report/html/report.js) ----
def _round_half_up(d, digits):
    return d.quantize(decimal.Decimal(1).scaleb(-digits), rounding=decimal.ROUND_HALF_UP)


def thousands(v, digits):
    # Number.toLocaleString("en-US", {min/maxFractionDigits}): ICU rounds the
    # shortest decimal form of the double (what repr() gives), half away from 0.
    d = _round_half_up(decimal.Decimal(repr(float(v))), digits)
    s = "{:,.{}f}".format(d, digits)
    return s


def to_fixed(v, digits):
    # Number.prototype.toFixed: the exact binary value, ties to the larger magnitude.
    d = _round_half_up(decimal.Decimal(float(v)), digits)
    return "{:.{}f}".format(d, digits)


def js_round(s):  # Math.round: ties toward +infinity
    f = math.floor(s)
    return int(f + 1 if s - f >= 0.5 else f)


def human(s):
    s = js_round(s)
    if s < 60:
        return "%ds" % s
    if s < 3600:
        return "%dm" % (s // 60) + ("%ds" % (s % 60) if s % 60 else "")
    if s < 86400:
        return "%dh" % (s // 3600) + ("%dm" % (s // 60 % 60) if s // 60 % 60 else "")
    return "%dd" % (s // 86400) + ("%dh" % (s // 3600 % 24) if s // 3600 % 24 else "")


UNITS = {
    "money": lambda v: thousands(v, 2 if v != 0 and abs(v) < 100 else 0),  # small sums (a live page) keep the cents
    "count": lambda v: thousands(v, 0),
    "hours": lambda v: thousands(v, 1),
    "pct": lambda v: to_fixed(v * 100, 1) + "%",
    "ratio": lambda v: to_fixed(v, 2) + "x",
    "duration": human,
}


# ---- a small DOM from the serialised page ----------------------------------
VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}


class Node:
    def __init__(self, tag, attrs, parent):
        self.tag, self.attrs, self.parent, self.children, self.text = tag, dict(attrs), parent, [], []

    def iter(self):
        yield self
        for c in self.children:
            yield from c.iter()

    def find_all(self, tag=None, **attrs):
        for n in self.iter():
            if (tag is None or n.tag == tag) and all(
                    (v is True and k.replace("_", "-") in n.attrs) or n.attrs.get(k.replace("_", "-")) == v
                    for k, v in attrs.items()):
                yield n

    def find(self, tag=None, **attrs):
        return next(self.find_all(tag, **attrs), None)

    def classes(self):
        return (self.attrs.get("class") or "").split()

    def all_text(self):
        return "".join(t for n in self.iter() for t in n.text)


class TreeBuilder(html.parser.HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.root = Node("#document", {}, None)
        self.cur = self.root

    def handle_starttag(self, tag, attrs):
        n = Node(tag, attrs, self.cur)
        self.cur.children.append(n)
        if tag not in VOID:
            self.cur = n

    def handle_startendtag(self, tag, attrs):
        self.cur.children.append(Node(tag, attrs, self.cur))

    def handle_endtag(self, tag):
        n = self.cur
        while n is not None and n.tag != tag:
            n = n.parent
        if n is not None and n.parent is not None:
            self.cur = n.parent

    def handle_data(self, data):
        self.cur.text.append(data)


def parse_dom(text):
    b = TreeBuilder()
    b.feed(text)
    b.close()
    return b.root


# ---- PNG: one pixel, for the colour-scheme check -----------------------------
def png_pixel(data, x, y):
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat, ihdr = 8, b"", None
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            ihdr = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        pos += 12 + n
    w, h, depth, ctype = ihdr[:4]
    assert depth == 8 and ctype in (2, 6), "PNG colour type %d depth %d" % (ctype, depth)
    bpp = 3 if ctype == 2 else 4
    stride = w * bpp
    raw = zlib.decompressobj().decompress(idat, (y + 1) * (stride + 1))
    prev = bytearray(stride)
    for r in range(y + 1):
        f, line = raw[r * (stride + 1)], bytearray(raw[r * (stride + 1) + 1:(r + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b = prev[i]
            c = prev[i - bpp] if i >= bpp else 0
            if f == 1:
                line[i] = (line[i] + a) & 255
            elif f == 2:
                line[i] = (line[i] + b) & 255
            elif f == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        prev = line
    return tuple(prev[x * bpp:x * bpp + 3])


def luminance(rgb):
    return (0.2126 * rgb[0] + 0.7152 * rgb[1] + 0.0722 * rgb[2]) / 255


# ---- the page session --------------------------------------------------------
# Installed before the report's own scripts: records when data-rendered appears
# (performance.now(), i.e. ms since navigation start) and the next frame, and
# counts how often <html data-rendered> is set (the live page sets it at every
# drawing; a set with an unchanged value is a mutation record too). It only
# observes; it changes nothing on the page.
OBSERVER = r"""
(() => {
  window.__tideRenders = 0;
  const mark = (records) => {
    for (const r of records) if (r.target === document.documentElement) window.__tideRenders += 1;
    if (window.__tideRenderedAt !== undefined) return;
    if (document.documentElement && document.documentElement.getAttribute("data-rendered") === "1") {
      window.__tideRenderedAt = performance.now();
      requestAnimationFrame(() => { window.__tideFrameAt = performance.now(); });
    }
  };
  new MutationObserver(mark).observe(document, { subtree: true, attributes: true, attributeFilter: ["data-rendered"] });
})();
"""

SCHEME_PROBE = r"""
(() => {
  const root = document.documentElement, bg = () => getComputedStyle(document.body).backgroundColor;
  const had = root.getAttribute("data-theme");
  const out = { dark: matchMedia("(prefers-color-scheme: dark)").matches, auto: bg() };
  root.setAttribute("data-theme", "light"); out.light = bg();
  root.setAttribute("data-theme", "dark"); out.forcedDark = bg();
  if (had === null) root.removeAttribute("data-theme"); else root.setAttribute("data-theme", had);
  return out;
})()
"""


def where(url, line, col):  # DevTools' line and column numbers count from 0
    if not url:
        return ""
    out = " at " + os.path.basename(url)
    if line is not None:
        out += ":%d" % (line + 1)
        if col is not None:
            out += ":%d" % (col + 1)
    return out


def console_problems(events, page_url, browser_own=()):
    """Console errors/warnings, exceptions and browser-logged errors of the page.

    browser_own: URLs the browser itself loads for a page served over HTTP (/favicon.ico); what it logs
    about them (a 404) is printed, not failed: no script of the page asked for them."""
    out, info = [], []
    for method, p, _ in events:
        if method == "Runtime.consoleAPICalled":
            text = " ".join(str(a.get("value", a.get("description", a.get("type")))) for a in p.get("args", []))
            frames = (p.get("stackTrace") or {}).get("callFrames") or [{}]
            line = "console.%s: %s%s" % (p["type"], text, where(frames[0].get("url"), frames[0].get("lineNumber"),
                                                                  frames[0].get("columnNumber")))
            (out if p["type"] in ("error", "assert", "warning") else info).append(line)
        elif method == "Runtime.exceptionThrown":
            d = p["exceptionDetails"]
            desc = (d.get("exception") or {}).get("description") or d.get("text")
            out.append("uncaught exception: %s%s" % (desc.splitlines()[0] if desc else "?",
                                                      where(d.get("url"), d.get("lineNumber"), d.get("columnNumber"))))
        elif method == "Log.entryAdded":
            e = p["entry"]
            line = "browser log (%s, %s): %s%s" % (e.get("source"), e.get("level"), e.get("text"),
                                                   where(e.get("url"), e.get("lineNumber"), None))
            # The browser's warnings (deprecations, interventions) are its opinion of
            # the page, not a fault of it: printed, not failed.
            (out if e.get("level") == "error" and e.get("url") not in browser_own else info).append(line)
        elif method in ("Inspector.targetCrashed", "Inspector.detached"):
            out.append("page %s %s" % (method.split(".")[1], p))
    return out, info


def network_problems(events, page_url, allowed=(), browser_own=()):
    """Requests other than the page itself (and GETs of the URLs in allowed), failed loads, HTTP errors.

    browser_own: URLs the browser itself may load for the page (initiator "other", not a script or the
    document): such a request is returned in the second list, not as a problem."""
    out, own, urls, base, skip = [], [], {}, page_url.split("#")[0], set()
    for method, p, _ in events:
        if method == "Network.requestWillBeSent":
            url = p["request"]["url"]
            urls[p["requestId"]] = url
            if url.split("#")[0] == base and p.get("type") == "Document":
                continue
            if url.startswith(("data:", "blob:")):
                continue
            if url in allowed and p["request"].get("method") == "GET":
                continue
            if url in browser_own and (p.get("initiator") or {}).get("type") == "other":
                own.append(url)
                skip.add(p["requestId"])
                continue
            out.append("request for %s (%s, initiator %s)" % (url[:200], p.get("type"), (p.get("initiator") or {}).get("type")))
        elif p.get("requestId") in skip:
            continue
        elif method == "Network.loadingFailed":
            out.append("failed load of %s: %s" % (urls.get(p["requestId"], p["requestId"])[:200], p.get("errorText")))
        elif method == "Network.responseReceived" and p["response"].get("status", 0) >= 400:
            r = p["response"]
            out.append("HTTP %s %s for %s" % (r["status"], r.get("statusText", ""), r.get("url", "")[:200]))
    return out, own


# ---- checks of the DOM against the summary ----------------------------------
def get(obj, key):
    for k in key.split("."):
        if not isinstance(obj, dict) or k not in obj:
            return None
        obj = obj[k]
    return obj


def is_number(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool)


NUM = r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?"
POINT = re.compile(r"([MLml])\s*(" + NUM + r")[ ,]+(" + NUM + ")")


def path_points(d):
    """Number of M/L points of a path's d, or None if a coordinate is not finite."""
    if re.search(r"NaN|Infinity|undefined", d):
        return None
    return len(POINT.findall(d))


def check_charts(dom, summary, util_note_ok=False):
    """util_note_ok: util:measured may show its note instead of lines (live data without a util_gpus series)."""
    n_fails = len(FAILS)
    policies = [p["name"] for p in summary["policies"]]
    classes = []
    for p in summary["policies"]:
        for c in (p.get("wait_s_by_priority") or {}):
            if c not in classes:
                classes.append(c)
    expected = ["capacity:" + p for p in policies]
    expected += ["queue:" + c for c in ["all"] + classes] + ["wait:" + c for c in ["all"] + classes]
    expected += ["util:measured", "util:allocated", "cost:total"] + ["cost:" + p for p in policies]
    expected += ["spot:interruptions", "spot:lost"]
    figs = {}
    for f in dom.find_all("figure"):
        if "chart" in f.classes():
            cid = f.attrs.get("data-chart")
            if cid in figs:
                fail("chart %s: appears twice" % cid)
            figs[cid] = f
    for cid in expected:
        if cid not in figs:
            fail("chart %s: missing (expected from the summary: policies %s, classes %s)" % (cid, policies, classes))
    extra = [c for c in figs if c not in expected]
    if extra:
        say("note charts not derived from the summary (checked for lines only): %s" % extra)

    def started(policy, cls):
        p = next(x for x in summary["policies"] if x["name"] == policy)
        w = p.get("wait_s") if cls == "all" else (p.get("wait_s_by_priority") or {}).get(cls)
        return (w or {}).get("count", 0) > 0

    good = 0
    for cid, f in figs.items():
        cap = f.find("figcaption")
        if cap is None or not cap.all_text().strip():
            fail("chart %s: no caption" % cid)
        svg = f.find("svg")
        if svg is None:
            fail("chart %s: no <svg>" % cid)
            continue
        group = next((g for g in svg.find_all("g") if "series" in g.classes()), None)
        paths = list(group.find_all("path")) if group is not None else []
        drawn, bad = [], []
        for p in paths:
            n = path_points(p.attrs.get("d", ""))
            name = p.attrs.get("data-series")
            if n is None:
                bad.append(name)
            elif n >= 2:
                drawn.append(name)
        for name in bad:
            fail("chart %s: series %r has a non-finite coordinate in its path" % (cid, name))
        note = next((p for p in f.find_all("p") if "note" in p.classes()), None)
        if not drawn:
            if cid.startswith("wait:") and note is not None:
                if any(started(p, cid[5:]) for p in policies):
                    fail("chart %s: shows the note %r but the summary has started jobs of that class" % (cid, note.all_text()))
                else:
                    good += 1
                continue
            if cid == "util:measured" and note is not None:
                if util_note_ok:
                    good += 1
                    say("ok   chart %s: no utilization series in the data, the note instead: %r" % (cid, note.all_text()))
                else:
                    fail("chart %s: shows the note %r but the data has a util_gpus series" % (cid, note.all_text()))
                continue
            fail("chart %s: no line with at least 2 points (%d path(s) in g.series)" % (cid, len(paths)))
            continue
        # Charts with one line per policy.
        kind = cid.split(":")[0]
        want = []
        if kind in ("queue", "util", "spot") or cid == "cost:total":
            want = policies
        elif kind == "wait":
            want = [p for p in policies if started(p, cid[5:])]
        elif kind == "capacity":
            want = ["demand"]
        missing = [w for w in want if w not in drawn]
        if missing:
            fail("chart %s: no line for %s (lines drawn: %s)" % (cid, missing, drawn))
        else:
            good += 1
    say("%s %d of %d charts drawn (expected %d from the summary: %d policies, classes %s)"
        % ("ok  " if n_fails == len(FAILS) else "....", good, len(figs), len(expected), len(policies), classes))


# The figures of the page's headline table (src/report/html/report.js, headline()).
HEADLINE_KEYS = [
    "cost_total", "cost_by_tier.reserved", "cost_by_tier.on-demand", "cost_by_tier.spot", "cost_to_lower_bound",
    "gpu_hours_paid", "gpu_hours_busy", "utilization", "gpu_util_mean",
    "wait_s.p50", "wait_s.p95", "wait_s.p99", "jct_s.p50", "jct_s.p95",
    "jobs_completed", "jobs_unstarted", "jobs_pending", "jobs_running", "nodes_bought", "nodes_live", "peak_nodes",
    "spot_interruptions", "preemptions", "reclaims", "lost_work_gpu_hours",
]
FILE_REQUIRED = ("cost_total", "gpu_hours_paid", "utilization", "wait_s.p95", "jobs_completed")
LIVE_REQUIRED = ("cost_total", "gpu_hours_paid", "nodes_bought", "nodes_live", "spot_interruptions",
                 "lost_work_gpu_hours")


def check_headline(dom, summary, required=FILE_REQUIRED, title="headline"):
    policies = [p["name"] for p in summary["policies"]]
    byname = {p["name"]: p for p in summary["policies"]}
    n_fails = len(FAILS)
    table = dom.find("table", id="headline")
    if table is None:
        fail("headline: no <table id=headline>")
        return
    head = table.find("thead")
    cols = [th.all_text().strip() for th in head.find_all("th")][1:] if head is not None else []
    if cols != policies:
        fail("headline: columns %s, the summary's policies are %s" % (cols, policies))
    body = table.find("tbody") or table
    cells, keys = 0, set()
    for tr in body.find_all("tr"):
        tds = list(tr.find_all("td"))
        if not tds:
            continue
        label = (tr.find("th").all_text().strip() if tr.find("th") else "?")
        rowkeys = {td.attrs.get("data-key") for td in tds if "data-key" in td.attrs}
        if len(rowkeys) != 1:
            fail("headline row %r: cells with keys %s" % (label, sorted(k or "" for k in rowkeys)))
            continue
        key = rowkeys.pop()
        if len(tds) != len(policies):
            fail("headline row %r (%s): %d cells for %d policies" % (label, key, len(tds), len(policies)))
        for i, td in enumerate(tds):
            col = policies[i] if i < len(policies) else "?"
            text = td.all_text().strip()
            if "data-key" not in td.attrs:
                if text != "-" or is_number(get(byname.get(col, {}), key)):
                    fail("headline %s / %s: cell %r without data-key, summary value %r" % (col, key, text, get(byname.get(col, {}), key)))
                continue
            cells += 1
            keys.add(key)
            pol, unit, raw = td.attrs.get("data-policy"), td.attrs.get("data-unit"), td.attrs.get("data-value")
            where_ = "headline %s / %s" % (pol, key)
            if pol != col:
                fail("%s: in the column of %s" % (where_, col))
            if pol not in byname:
                fail("%s: no such policy in the summary" % where_)
                continue
            want = get(byname[pol], key)
            if not is_number(want):
                fail("%s: summary has no number there (%r), page shows %r" % (where_, want, text))
                continue
            try:
                got = float(raw)
            except (TypeError, ValueError):
                fail("%s: data-value %r is not a number" % (where_, raw))
                continue
            if got != want:
                fail("%s: data-value %s, summary %r" % (where_, raw, want))
            if unit not in UNITS:
                fail("%s: unknown data-unit %r" % (where_, unit))
                continue
            shown = UNITS[unit](want)
            if text != shown:
                fail("%s: text %r, the summary's %r formatted as %s is %r" % (where_, text, want, unit, shown))
    for k in required:
        if k not in keys:
            fail("headline: no row for %s" % k)
    say("%s %s: %d value cells, %d rows, %d policy columns checked against the summary"
        % ("ok  " if n_fails == len(FAILS) else "....", title, cells, len(keys), len(cols)))


# ---- main ----------------------------------------------------------------------
def report_console(events, url, browser_own=()):
    problems, info = console_problems(events, url, browser_own)
    for line in info:
        say("note console: " + line)
    for line in problems:
        fail("console: " + line)
    if not problems:
        ok("console: no error, warning or uncaught exception (%d other console messages)" % len(info))


def take_screenshot(page, a, page_height, path):
    """The whole page (at least the window's height) as PNG, written to path; returns the PNG."""
    height = max(a.height, int(page_height or 0))
    r = page.call("Page.captureScreenshot", {"format": "png", "captureBeyondViewport": True,
                                             "clip": {"x": 0, "y": 0, "width": a.width, "height": height,
                                                      "scale": 1}}, timeout=a.timeout)
    shot = base64.b64decode(r["data"])
    with open(path, "wb") as f:
        f.write(shot)
    return shot


def check_case(b, a, summary, report, screenshot=None, dom_out=None):
    """Open one report in a fresh tab and browser context and check it."""
    url = "file://" + os.path.abspath(report)
    t0 = time.monotonic()
    rendered, dom_text, scheme, shot, timing = None, "", None, None, [None, None, 0, None, None]
    t_nav = t_rendered = t0
    page = None
    try:
        page = b.new_page(a.width, a.height)
        for domain in ("Runtime", "Log", "Network", "Page", "Inspector"):
            page.call(domain + ".enable")
        page.call("Page.addScriptToEvaluateOnNewDocument", {"source": OBSERVER})
        t_nav = time.monotonic()
        nav = page.call("Page.navigate", {"url": url}, timeout=a.timeout)
        if nav.get("errorText"):
            fail("navigation to %s: %s" % (url, nav["errorText"]))
        rendered = page.wait_for(
            "document.readyState === 'complete' && document.documentElement.getAttribute('data-rendered')", a.timeout)
        t_rendered = time.monotonic()
        page.pump(0.3)  # let late errors (timers, promise rejections) arrive
        timing = page.evaluate("[window.__tideRenderedAt, window.__tideFrameAt, document.documentElement.scrollHeight,"
                               " innerWidth, innerHeight]")
        dom_text = page.evaluate("document.documentElement.outerHTML")
        if dom_out:
            with open(dom_out, "w", encoding="utf-8") as f:
                f.write("<!doctype html>\n" + dom_text)
        if screenshot:
            shot = take_screenshot(page, a, timing[2], screenshot)
        scheme = page.evaluate(SCHEME_PROBE)
        page.pump(0.05)
    except cdp.CdpError as e:
        fail("DevTools session: %s" % e)
    events = page.events if page else []
    if page:
        page.close()

    report_console(events, url)
    net, _ = network_problems(events, url)
    for line in net:
        fail("network: " + line)
    if not net:
        ok("network: no request besides the report itself")

    if rendered != "1":
        fail("not rendered: <html data-rendered> is %r after %.0f s" % (rendered, a.timeout))
    else:
        ok("rendered: data-rendered=1 %.0f ms after navigation start (next frame at %.0f ms; wall %.2f s; "
           "viewport %sx%s, page height %s)" % (timing[0] or -1, timing[1] or -1, t_rendered - t_nav,
                                                timing[3], timing[4], timing[2]))
    if dom_text:
        dom = parse_dom(dom_text)
        html_el = dom.find("html")
        if html_el is None or html_el.attrs.get("data-rendered") != "1":
            fail("DOM: <html> has no data-rendered=\"1\"")
        check_charts(dom, summary)
        check_headline(dom, summary)

    check_scheme(a, scheme, shot)
    if shot:
        say("screenshot %s (%d bytes)" % (os.path.abspath(screenshot), len(shot)))


def check_scheme(a, scheme, shot):
    """The colour scheme asked for is the one in effect (SCHEME_PROBE's answer, the screenshot)."""
    if scheme is not None:
        want_dark = a.scheme == "dark"
        own = scheme["forcedDark"] if want_dark else scheme["light"]
        other = scheme["light"] if want_dark else scheme["forcedDark"]
        if scheme["dark"] != want_dark:
            fail("scheme: asked for %s, but prefers-color-scheme: dark %s"
                 % (a.scheme, "matches" if scheme["dark"] else "does not match"))
        elif scheme["auto"] != own or own == other:
            fail("scheme: page background %s, the page's %s theme is %s and the other %s"
                 % (scheme["auto"], a.scheme, own, other))
        else:
            msg = "scheme: %s (prefers-color-scheme matches; background %s)" % (a.scheme, scheme["auto"])
            if shot:
                px = png_pixel(shot, 4, 4)
                lum = luminance(px)
                if (lum < 0.5) != want_dark or 0.3 <= lum <= 0.7:
                    fail("scheme: screenshot pixel (4,4) is rgb%s, luminance %.2f, not %s" % (px, lum, a.scheme))
                    msg = None
                else:
                    msg += "; screenshot pixel rgb%s" % (px,)
            if msg:
                ok(msg)


# ---- live mode (tide run's status page) -------------------------------------------
LIVE_SOURCE = "/api/v1/report"
# One evaluation: no drawing can come between the DOM read and the count of drawings.
LIVE_SNAPSHOT = r"""
(() => {
  const st = document.getElementById("status");
  return { renders: window.__tideRenders || 0, html: document.documentElement.outerHTML,
           status: st ? st.textContent : "", statusBad: st ? st.classList.contains("bad") : false };
})()
"""
LIVE_BODY = "({source: document.body.getAttribute('data-source'), refresh: document.body.getAttribute('data-refresh')})"


class LiveError(Exception):
    """The live check cannot go on (no page, nothing drawn)."""


def source_fetches(events, source_url):
    """The page's requests for source_url, in the order sent: requestId, CDP timestamp (s), HTTP status, done, error."""
    out, by_id = [], {}
    for method, p, _ in events:
        rid = p.get("requestId")
        if method == "Network.requestWillBeSent" and p["request"]["url"] == source_url:
            by_id[rid] = {"id": rid, "t": p["timestamp"], "status": None, "done": False, "error": None}
            out.append(by_id[rid])
        elif rid in by_id:
            if method == "Network.responseReceived":
                by_id[rid]["status"] = p["response"]["status"]
            elif method == "Network.loadingFinished":
                by_id[rid]["done"] = True
            elif method == "Network.loadingFailed":
                by_id[rid]["error"] = p.get("errorText")
    return out


def drawn_data(page, source_url, k, timeout=5):
    """(fetch, JSON) of the page's k-th successful fetch of source_url, i.e. what its k-th drawing shows; or None.

    The response body is read back from the page's own session (Network.getResponseBody): exactly the bytes the
    page's script got."""
    if k < 1:
        fail("live: the page has not drawn anything from %s" % source_url)
        return None
    deadline = time.monotonic() + timeout
    while True:
        good = [f for f in source_fetches(page.events, source_url) if f["done"] and f["status"] == 200]
        if len(good) >= k:
            break
        if time.monotonic() > deadline:
            fail("live: the page drew %d time(s), but only %d fetch(es) of %s succeeded" % (k, len(good), source_url))
            return None
        page.pump(0.05)
    f = good[k - 1]
    try:
        r = page.call("Network.getResponseBody", {"requestId": f["id"]})
        body = base64.b64decode(r["body"]) if r.get("base64Encoded") else r["body"].encode("utf-8")
        f["bytes"] = len(body)
        return f, json.loads(body)
    except (cdp.CdpError, ValueError) as e:
        fail("live: cannot read the body of the page's fetch #%d of %s: %s" % (k, source_url, e))
        return None


def http_json(url, timeout):
    """GET url with urllib (never through a proxy: the controller is local) and parse it as JSON."""
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    with opener.open(urllib.request.Request(url, headers={"Accept": "application/json"}), timeout=timeout) as r:
        return json.loads(r.read().decode("utf-8"))


def live_policy_names(data):
    return [p.get("name") for p in ((data or {}).get("summary") or {}).get("policies") or []]


def live_required(summary):
    """Headline rows the live page must show: the controller's own figures, and every other one it reports."""
    req = list(LIVE_REQUIRED)
    for p in summary.get("policies") or []:
        req += [k for k in HEADLINE_KEYS if k not in req and is_number(get(p, k))]
    return req


def check_live(b, a, url, screenshot=None, dom_out=None):
    """Open tide run's status page at url, check its first drawing, its refresh and its latest drawing."""
    source_url = urllib.parse.urljoin(url, LIVE_SOURCE)
    t0 = time.monotonic()
    t_nav = t_rendered = t0
    page, first, last, attrs, timing, scheme, shot = None, None, None, {}, [None] * 5, None, None
    drawn = {}  # drawing number -> (fetch, JSON) or None
    served, served_err, served_after = None, None, None
    interval = 5.0  # the page's own default, until data-refresh is read
    try:
        page = b.new_page(a.width, a.height)
        for domain in ("Runtime", "Log", "Network", "Page", "Inspector"):
            # Room for every response body the page gets during the check (read back by drawn_data).
            params = {"maxTotalBufferSize": 256 << 20, "maxResourceBufferSize": 64 << 20} if domain == "Network" else None
            page.call(domain + ".enable", params)
        page.call("Page.addScriptToEvaluateOnNewDocument", {"source": OBSERVER})
        t_nav = time.monotonic()
        nav = page.call("Page.navigate", {"url": url}, timeout=a.timeout)
        if nav.get("errorText"):
            raise LiveError("navigation to %s: %s" % (url, nav["errorText"]))
        rendered = page.wait_for(
            "document.readyState === 'complete' && document.documentElement.getAttribute('data-rendered')", a.timeout)
        t_rendered = time.monotonic()
        if rendered != "1":
            st = page.evaluate("(document.getElementById('status') || {}).textContent || ''")
            raise LiveError("not rendered: <html data-rendered> is %r after %.0f s (status line: %r)"
                            % (rendered, a.timeout, st))
        # The first drawing, right away; then the controller's own answer, fetched by us.
        first = page.evaluate(LIVE_SNAPSHOT)
        t_first = time.monotonic()
        try:
            served = http_json(source_url, a.timeout)
            served_after = time.monotonic() - t_first
        except (OSError, ValueError) as e:  # URLError and HTTPError are OSErrors
            served_err = "%s: %s" % (type(e).__name__, e)
        drawn[first["renders"]] = drawn_data(page, source_url, first["renders"])
        attrs = page.evaluate(LIVE_BODY) or {}
        try:  # as the page reads it: Math.max(1, +body.dataset.refresh || 5)
            interval = max(1.0, float(attrs.get("refresh")) or 5.0)
        except (TypeError, ValueError):
            pass
        page.pump(0.3)  # let late errors (timers, promise rejections) arrive
        timing = page.evaluate("[window.__tideRenderedAt, window.__tideFrameAt, document.documentElement.scrollHeight,"
                               " innerWidth, innerHeight]")
        if dom_out:
            with open(dom_out, "w", encoding="utf-8") as f:
                f.write("<!doctype html>\n" + first["html"])
        if screenshot:
            shot = take_screenshot(page, a, timing[2], screenshot)
        scheme = page.evaluate(SCHEME_PROBE)
        # The refresh: wait (at most 3 intervals after the navigation, and a little slack for the
        # events to arrive) for a second successful fetch and a second drawing.
        deadline = t_nav + 3 * interval + 2
        while time.monotonic() < deadline:
            good = [f for f in source_fetches(page.events, source_url) if f["done"] and f["status"] == 200]
            if len(good) >= 2 and (page.evaluate("window.__tideRenders || 0") or 0) >= 2:
                break
            page.pump(0.1)
        last = page.evaluate(LIVE_SNAPSHOT)
        if last["renders"] not in drawn:
            drawn[last["renders"]] = drawn_data(page, source_url, last["renders"])
        page.pump(0.05)
    except (cdp.CdpError, LiveError) as e:
        fail("live: %s" % e)
    events = page.events if page else []
    if page:
        page.close()

    # Chromium asks an HTTP page's origin for /favicon.ico by itself (the page declares no icon); tide answers
    # 404. That request is the browser's, not the page's (which may fetch only /api/v1/report): a note.
    favicon = urllib.parse.urljoin(url, "/favicon.ico")
    report_console(events, url, browser_own={favicon})
    net, own = network_problems(events, url, allowed={source_url}, browser_own={favicon})
    for u in own:
        say("note network: the browser's own request for %s (not made by the page; not counted)" % u)
    for line in net:
        fail("network: " + line)
    fetches = source_fetches(events, source_url)
    if not net:
        ok("network: no request besides the page and its %d GET(s) of %s, all answered 200" % (len(fetches), LIVE_SOURCE))
    if first is None:
        return
    ok("rendered: data-rendered=1 %.0f ms after navigation start (next frame at %.0f ms; wall %.2f s; "
       "viewport %sx%s, page height %s)" % (timing[0] or -1, timing[1] or -1, t_rendered - t_nav,
                                            timing[3], timing[4], timing[2]))
    if attrs.get("source") != LIVE_SOURCE:
        fail("live page: <body data-source> is %r, want %r" % (attrs.get("source"), LIVE_SOURCE))

    # The first drawing against the JSON it was drawn from.
    k = first["renders"]
    page_data = None
    if drawn.get(k):
        f, page_data = drawn[k]
        say("note drawing #%d is of the page's fetch #%d of %s (%d bytes, HTTP %s)"
            % (k, [x["id"] for x in fetches].index(f["id"]) + 1, LIVE_SOURCE, f["bytes"], f["status"]))
        if page_data.get("mode") != "live" or live_policy_names(page_data) != ["live"]:
            fail("live data: mode %r, summary policies %s; want mode 'live' and ['live']"
                 % (page_data.get("mode"), live_policy_names(page_data)))
        summary = page_data.get("summary") or {"policies": []}
        dom = parse_dom(first["html"])
        html_el = dom.find("html")
        if html_el is None or html_el.attrs.get("data-rendered") != "1":
            fail("DOM: <html> has no data-rendered=\"1\"")
        util_note_ok = not any("util_gpus" in ((p.get("timeline") or {}).get("series") or {})
                               for p in page_data.get("policies") or [])
        check_charts(dom, summary, util_note_ok=util_note_ok)
        check_headline(dom, summary, required=live_required(summary))

    # The controller's answer to our own request.
    if served_err:
        fail("live: our own GET of %s: %s" % (source_url, served_err))
    elif served is not None:
        if served.get("mode") != "live" or live_policy_names(served) != ["live"]:
            fail("live: our own GET of %s: mode %r, summary policies %s; want mode 'live' and ['live']"
                 % (source_url, served.get("mode"), live_policy_names(served)))
        else:
            changed = []
            if page_data is not None:
                mine, theirs = served["summary"]["policies"][0], (page_data.get("summary") or {}).get("policies", [{}])[0]
                changed = ["%s %s -> %s" % (key, get(theirs, key), get(mine, key)) for key in HEADLINE_KEYS
                           if get(theirs, key) != get(mine, key)]
            ok("own GET of %s %.2f s after the first drawing: mode live, policies ['live']; headline figures "
               "changed since the page's fetch: %s" % (LIVE_SOURCE, served_after, ", ".join(changed) or "none"))

    # The refresh.
    n_fails = len(FAILS)
    refresh = attrs.get("refresh")
    try:
        if not float(refresh) > 0:
            raise ValueError
    except (TypeError, ValueError):
        fail("refresh: <body data-refresh> is %r, not a number of seconds" % refresh)
    t_doc = next((p["timestamp"] for m, p, _ in events if m == "Network.requestWillBeSent"
                  and p.get("type") == "Document" and p["request"]["url"].split("#")[0] == url.split("#")[0]), None)
    window = 3 * interval
    if t_doc is None:
        fail("refresh: no request of the page itself seen")
    else:
        started = [f for f in fetches if f["t"] - t_doc <= window]
        good = [f for f in started if f["done"] and f["status"] == 200]
        at = ", ".join("+%.2f s%s" % (f["t"] - t_doc, "" if f in good else " (HTTP %s%s)" % (
            f["status"], ", " + f["error"] if f["error"] else "")) for f in fetches)
        if len(good) < 2:
            fail("refresh: %d successful fetch(es) of %s within 3 x %g s of the navigation, want 2 or more "
                 "(fetches at %s)" % (len(good), LIVE_SOURCE, interval, at or "none"))
        else:
            ok("refresh: %d fetches of %s started within 3 x %g s of the navigation (at %s)"
               % (len(good), LIVE_SOURCE, interval, at))
    if last is not None:
        if last["renders"] < 2:
            fail("refresh: the page drew %d time(s) in %.1f s, want 2 or more" % (last["renders"], time.monotonic() - t_nav))
        if last["statusBad"] or first["statusBad"]:
            fail("refresh: the page's status line says %r" % (last["status"] if last["statusBad"] else first["status"]))
        if last["renders"] > k and drawn.get(last["renders"]):
            f, data = drawn[last["renders"]]
            check_headline(parse_dom(last["html"]), data.get("summary") or {"policies": []},
                           required=live_required(data.get("summary") or {}),
                           title="headline of drawing #%d (fetch of +%.2f s)" % (last["renders"], f["t"] - (t_doc or 0)))
    if n_fails == len(FAILS):
        ok("refresh: the page fetched and drew again (%d drawings; status line %r)"
           % (last["renders"] if last else 0, last["status"] if last else ""))

    check_scheme(a, scheme, shot)
    if shot:
        say("screenshot %s (%d bytes)" % (os.path.abspath(screenshot), len(shot)))


def split_options(case):
    """'TARGET,screenshot=A,dom=B' -> ('TARGET', {'screenshot': 'A', 'dom': 'B'}) (a URL may hold commas)."""
    opts = {}
    while True:
        m = re.search(r",(screenshot|dom)=([^,]*)$", case)
        if not m:
            return case, opts
        opts[m.group(1)] = m.group(2)
        case = case[:m.start()]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("cases", nargs="*", metavar="REPORT[,screenshot=PNG][,dom=HTML]",
                    help="reports to check, each in a fresh tab and browser context of one Chromium")
    ap.add_argument("--chromium", required=True)
    ap.add_argument("--summary", help="the JSON summary (tide simulate --json) of the same run (with REPORTs)")
    ap.add_argument("--live", action="append", default=[], metavar="URL[,screenshot=PNG][,dom=HTML]",
                    help="instead of REPORTs: the address of tide run's status page, e.g. http://127.0.0.1:8080/")
    ap.add_argument("--scheme", choices=("light", "dark"), default="light")
    ap.add_argument("--out-dir", help="also write each case's lines to OUT_DIR/NAME.out (NAME: the report's stem; "
                                      "live, live-2, ... with --live)")
    ap.add_argument("--browser-log", help="write Chromium's own stderr here")
    ap.add_argument("--timeout", type=float, default=30)
    ap.add_argument("--width", type=int, default=1300)
    ap.add_argument("--height", type=int, default=4200)
    a = ap.parse_args()
    if a.live and (a.cases or a.summary):
        ap.error("--live checks a live page against its own data: no REPORT and no --summary with it")
    if not a.live and not (a.cases and a.summary):
        ap.error("give REPORT(s) and --summary, or --live URL")

    jobs = []  # (name, title, check)
    if a.live:
        for i, case in enumerate(a.live):
            url, opt = split_options(case)
            if urllib.parse.urlsplit(url).scheme not in ("http", "https"):
                ap.error("--live %s: not an http(s) URL" % url)
            jobs.append(("live" if i == 0 else "live-%d" % (i + 1), url,
                         lambda b, url=url, opt=opt: check_live(b, a, url, opt.get("screenshot"), opt.get("dom"))))
    else:
        summary = json.load(open(a.summary))
        for case in a.cases:
            report, *opts = case.split(",")
            opt = dict(o.split("=", 1) for o in opts)
            jobs.append((os.path.splitext(os.path.basename(report))[0], report,
                         lambda b, report=report, opt=opt: check_case(b, a, summary, report, opt.get("screenshot"),
                                                                      opt.get("dom"))))
    if a.out_dir:
        os.makedirs(a.out_dir, exist_ok=True)
    flags = [
        # prefers-color-scheme for the page: 0 = dark, 1 = light (Blink's PreferredColorScheme).
        "--blink-settings=preferredColorScheme=%d" % (0 if a.scheme == "dark" else 1),
        # No name resolves (but a live page's own host): nothing the page asks for can leave the machine.
        "--host-resolver-rules=MAP * ~NOTFOUND" + "".join(
            ", EXCLUDE " + h for h in sorted({urllib.parse.urlsplit(split_options(c)[0]).hostname for c in a.live})),
    ]
    if a.live:
        flags.append("--no-proxy-server")  # the controller is local; a proxy from the environment must not be used
    try:
        b = cdp.Browser(a.chromium, flags, window=(a.width, a.height), log_path=a.browser_log)
    except (cdp.CdpError, OSError) as e:
        print("ERROR cannot drive %s: %s" % (a.chromium, e))
        return 2
    failed = 0
    try:
        for name, title, check in jobs:
            FAILS.clear()
            sink = open(os.path.join(a.out_dir, name + ".out"), "w") if a.out_dir else None
            SINKS[:] = [sink] if sink else []
            t0 = time.monotonic()
            say("== %s (%s scheme)" % (title, a.scheme))
            check(b)
            say("RESULT %s %s in %.1f s" % (name, "FAILED (%d)" % len(FAILS) if FAILS else "passed",
                                           time.monotonic() - t0))
            failed += bool(FAILS)
            SINKS.clear()
            if sink:
                sink.close()
    finally:
        b.close()
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
