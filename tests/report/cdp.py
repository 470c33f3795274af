"""A minimal Chrome DevTools Protocol client over --remote-debugging-pipe.

Standard library only. Chromium reads NUL-terminated JSON commands from fd 3
and writes NUL-terminated JSON replies and events to fd 4, so no port, no
WebSocket library and no race for a free port are needed.
"""
import json
import os
import select
import shutil
import subprocess
import tempfile
import time


class CdpError(Exception):
    pass


class Browser:
    """A headless Chromium driven over the pipe; new_page() opens a tab to drive."""

    def __init__(self, chromium, extra_args=(), window=(1300, 4200), log_path=None):
        self.profile = tempfile.mkdtemp(prefix="tide-chromium-")
        to_chrome_r, self._w = os.pipe()
        self._r, from_chrome_w = os.pipe()

        def child_fds():  # fd 3: commands in, fd 4: replies out
            a, b = os.dup(to_chrome_r), os.dup(from_chrome_w)
            os.dup2(a, 3)
            os.dup2(b, 4)

        self.args = [chromium, "--headless", "--no-sandbox", "--disable-gpu",
                     "--disable-background-networking", "--user-data-dir=" + self.profile,
                     "--no-first-run", "--no-default-browser-check", "--hide-scrollbars",
                     "--window-size=%d,%d" % window, "--remote-debugging-pipe"] + list(extra_args) + ["about:blank"]
        self._log = open(log_path or os.devnull, "wb")
        self.proc = subprocess.Popen(self.args, stdin=subprocess.DEVNULL, stdout=self._log, stderr=self._log,
                                     preexec_fn=child_fds, close_fds=False)
        os.close(to_chrome_r)
        os.close(from_chrome_w)
        self._buf = b""
        self._next = 0
        self.events = []  # every event received, in order: (method, params, sessionId)
        self.call("Target.getTargets", timeout=30)  # the browser is up and talking

    def new_page(self, width, height):
        """A fresh tab showing about:blank in a fresh browser context (its own cache and storage)."""
        ctx = self.call("Target.createBrowserContext", {"disposeOnDetach": True})["browserContextId"]
        tid = self.call("Target.createTarget", {"url": "about:blank", "browserContextId": ctx,
                                                "width": width, "height": height})["targetId"]
        sid = self.call("Target.attachToTarget", {"targetId": tid, "flatten": True})["sessionId"]
        return Page(self, sid, tid, ctx)

    # ---- transport ----------------------------------------------------------
    def _read_message(self, deadline):
        while b"\0" not in self._buf:
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            ready, _, _ = select.select([self._r], [], [], left)
            if not ready:
                return None
            chunk = os.read(self._r, 1 << 20)
            if not chunk:
                raise CdpError("chromium closed the DevTools pipe (exit status %s)" % self.proc.poll())
            self._buf += chunk
        msg, _, self._buf = self._buf.partition(b"\0")
        return json.loads(msg)

    def pump(self, seconds):
        """Receive events for this long."""
        deadline = time.monotonic() + seconds
        while True:
            m = self._read_message(deadline)
            if m is None:
                return
            if "method" in m:
                self.events.append((m["method"], m.get("params", {}), m.get("sessionId")))

    def call(self, method, params=None, timeout=20, session=None):
        self._next += 1
        mid = self._next
        msg = {"id": mid, "method": method, "params": params or {}}
        if session:
            msg["sessionId"] = session
        os.write(self._w, json.dumps(msg).encode() + b"\0")
        deadline = time.monotonic() + timeout
        while True:
            m = self._read_message(deadline)
            if m is None:
                raise CdpError("%s: no reply in %s s" % (method, timeout))
            if "method" in m:
                self.events.append((m["method"], m.get("params", {}), m.get("sessionId")))
            elif m.get("id") == mid:
                if "error" in m:
                    raise CdpError("%s: %s" % (method, m["error"].get("message")))
                return m.get("result", {})

    def close(self):
        try:
            try:
                self.call("Browser.close", timeout=5)
            except (CdpError, OSError):
                pass
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        finally:
            for fd in (self._r, self._w):
                try:
                    os.close(fd)
                except OSError:
                    pass
            self._log.close()
            shutil.rmtree(self.profile, ignore_errors=True)


class Page:
    """One tab's DevTools session; its events are the browser's, filtered by session."""

    def __init__(self, browser, session, target, context):
        self.browser, self.session, self.target, self.context = browser, session, target, context
        self._first = len(browser.events)

    @property
    def events(self):
        return [e for e in self.browser.events[self._first:] if e[2] == self.session]

    def call(self, method, params=None, timeout=20):
        return self.browser.call(method, params, timeout, session=self.session)

    def pump(self, seconds):
        self.browser.pump(seconds)

    def evaluate(self, expression, timeout=20):
        r = self.call("Runtime.evaluate", {"expression": expression, "returnByValue": True, "awaitPromise": True},
                      timeout=timeout)
        if "exceptionDetails" in r:
            raise CdpError("evaluate %r: %s" % (expression[:60], r["exceptionDetails"].get("text")))
        return r["result"].get("value")

    def wait_for(self, expression, timeout, poll=0.02):
        """Poll a JS expression until it is truthy; returns its value or None."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                v = self.evaluate(expression)
            except CdpError:  # e.g. the context went away while the page navigates
                v = None
            if v:
                return v
            self.browser.pump(poll)
        return None

    def close(self):
        try:
            self.browser.call("Target.closeTarget", {"targetId": self.target})
            self.browser.call("Target.disposeBrowserContext", {"browserContextId": self.context})
        except CdpError:
            pass
