#!/usr/bin/env python3
"""How long headless Chromium takes to open and draw a tide HTML report.

    report_open_time.py --chromium PATH [--runs 5] REPORT.html

One Chromium (tests/report/cdp.py, DevTools over --remote-debugging-pipe);
each run opens the report in a fresh tab and browser context. Times are the
page's own performance.now(), i.e. milliseconds since its navigation start:
  read      responseEnd: the file has been read
  parsed    domInteractive: the HTML (with its embedded data) is parsed
  rendered  <html data-rendered="1"> set, seen by a MutationObserver installed
            before the page's scripts: the data parsed, every chart built
  frame     the next animation frame after that: the browser is about to paint
            the drawn page
Prints one line per run, then the medians, as "KEY VALUE" lines for the caller.
"""
import argparse
import os
import statistics
import sys
import time

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "report"))
import cdp  # noqa: E402
from check_report import OBSERVER  # noqa: E402

PROBE = """(() => {
  const n = performance.getEntriesByType("navigation")[0] || {};
  return [n.responseEnd, n.domInteractive, window.__tideRenderedAt, window.__tideFrameAt];
})()"""


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--chromium", required=True)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--timeout", type=float, default=120)
    ap.add_argument("report")
    a = ap.parse_args()
    url = "file://" + os.path.abspath(a.report)
    b = cdp.Browser(a.chromium, ["--host-resolver-rules=MAP * ~NOTFOUND"], window=(1300, 4200))
    rows = []
    try:
        for i in range(a.runs):
            page = b.new_page(1300, 4200)
            page.call("Page.enable")
            page.call("Runtime.enable")
            page.call("Page.addScriptToEvaluateOnNewDocument", {"source": OBSERVER})
            t0 = time.monotonic()
            page.call("Page.navigate", {"url": url}, timeout=a.timeout)
            if not page.wait_for("window.__tideFrameAt !== undefined", a.timeout, poll=0.005):
                sys.exit("run %d: the report did not render in %.0f s" % (i + 1, a.timeout))
            wall = (time.monotonic() - t0) * 1000
            r = page.evaluate(PROBE) + [wall]
            errors = [e for e in page.events if e[0] == "Runtime.exceptionThrown"]
            page.close()
            if errors:
                sys.exit("run %d: uncaught exception: %s" % (i + 1, errors[0][1]["exceptionDetails"].get("text")))
            rows.append(r)
            print("run %d: read %.0f ms, parsed %.0f ms, rendered %.0f ms, frame %.0f ms (harness wall %.0f ms)"
                  % ((i + 1,) + tuple(r)), flush=True)
    finally:
        b.close()
    for k, name in enumerate(("read", "parsed", "rendered", "frame", "wall")):
        v = [r[k] for r in rows]
        print("%s %.0f %.0f %.0f" % (name, statistics.median(v), min(v), max(v)))


if __name__ == "__main__":
    main()
