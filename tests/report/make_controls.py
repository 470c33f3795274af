#!/usr/bin/env python3
"""Broken copies of a tide HTML report, for render_test.sh's negative controls.

    make_controls.py REPORT.html OUTDIR

writes into OUTDIR, and prints one line per copy, "NAME<TAB>FILE<TAB>TEXT[<TAB>TEXT...]":
the checker must fail on FILE and its output must contain every TEXT.
  throw      a script that logs console.error and throws, run before the report's own
  data       the embedded summary's cost_total of the second policy raised by 1, so the
             headline shows a value that disagrees with the JSON summary
  text       after the report has drawn, one headline cell's text replaced (its
             data-value left alone)
  network    an <img> from http://tide-render-test.invalid/
"""
import json
import os
import re
import sys


def main():
    report, out = sys.argv[1], sys.argv[2]
    page = open(report, encoding="utf-8").read()
    os.makedirs(out, exist_ok=True)

    def write(name, text, *expect):
        path = os.path.join(out, "control-%s.html" % name)
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
        print("\t".join((name, path) + expect))

    def before(marker, text, last=False):
        i = page.rfind(marker) if last else page.find(marker)
        if i < 0:
            sys.exit("make_controls: no %s in %s" % (marker, report))
        return page[:i] + text + page[i:]

    write("throw", before("</head>", '<script>console.error("injected console error");'
                                     'throw new Error("injected by render_test");</script>\n'),
          "uncaught exception: Error: injected by render_test", "console.error: injected console error")

    m = re.search(r'(<script id="tide-data" type="application/json">)(.*?)(</script>)', page, re.S)
    if not m:
        sys.exit("make_controls: no tide-data script in %s" % report)
    data = json.loads(m.group(2))
    pol = data["summary"]["policies"][1 if len(data["summary"]["policies"]) > 1 else 0]
    pol["cost_total"] += 1
    blob = json.dumps(data, separators=(",", ":")).replace("<", "\\u003c")
    write("data", page[:m.start(2)] + blob + page[m.end(2):],
          "headline %s / cost_total: data-value" % pol["name"])

    write("text", before("</body>", '<script>document.addEventListener("DOMContentLoaded", () => {'
                                    'document.querySelector(\'#headline td[data-key="jobs_completed"]\').textContent = "7";'
                                    '});</script>\n', last=True),
          "/ jobs_completed: text '7'")

    write("network", before("</body>", '<img src="http://tide-render-test.invalid/pixel.png" alt="">\n', last=True),
          "network: request for http://tide-render-test.invalid/pixel.png")


if __name__ == "__main__":
    main()
