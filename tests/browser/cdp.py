"""A minimal Chrome DevTools Protocol client over --remote-debugging-pipe (no WebSocket library
needed): commands go to the browser on fd 3, answers and events come back on fd 4, each a JSON
message ended by a NUL byte. Used by tests/browser/serve.sh."""
import json, os, queue, subprocess, threading, time


class Browser:
    def __init__(self, exe, profile):
        to_chrome_r, self._to_chrome = os.pipe()
        self._from_chrome, from_chrome_w = os.pipe()

        def fds():
            # Past 4 first, so moving one pipe cannot overwrite the other.
            r, w = os.dup(to_chrome_r) + 10, os.dup(from_chrome_w) + 10
            os.dup2(to_chrome_r, r)
            os.dup2(from_chrome_w, w)
            os.dup2(r, 3)
            os.dup2(w, 4)

        self.proc = subprocess.Popen(
            [exe, "--headless", "--no-sandbox", "--disable-gpu", "--remote-debugging-pipe",
             "--user-data-dir=" + profile, "--no-first-run", "--disable-extensions",
             "--hide-scrollbars", "--force-device-scale-factor=1", "about:blank"],
            # The pipes become fds 3 and 4 in the child after the others are closed, so they are
            # moved there in preexec_fn and every fd is kept (close_fds would close them again).
            close_fds=False, preexec_fn=fds,
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        os.close(to_chrome_r)
        os.close(from_chrome_w)
        self._id = 0
        self._answers = {}
        self._cond = threading.Condition()
        self.events = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        buf = b""
        while True:
            chunk = os.read(self._from_chrome, 1 << 16)
            if not chunk:
                return
            buf += chunk
            while b"\0" in buf:
                raw, buf = buf.split(b"\0", 1)
                msg = json.loads(raw)
                if "id" in msg:
                    with self._cond:
                        self._answers[msg["id"]] = msg
                        self._cond.notify_all()
                else:
                    self.events.put(msg)

    def send(self, method, params=None, session=None, timeout=30):
        self._id += 1
        mid = self._id
        msg = {"id": mid, "method": method, "params": params or {}}
        if session:
            msg["sessionId"] = session
        os.write(self._to_chrome, json.dumps(msg).encode() + b"\0")
        deadline = time.time() + timeout
        with self._cond:
            while mid not in self._answers:
                left = deadline - time.time()
                if left <= 0:
                    raise TimeoutError(method)
                self._cond.wait(left)
            answer = self._answers.pop(mid)
        if "error" in answer:
            raise RuntimeError("%s: %s" % (method, answer["error"]))
        return answer["result"]

    def close(self):
        try:
            self.send("Browser.close", timeout=5)
        except Exception:
            pass
        try:
            self.proc.wait(5)
        except Exception:
            self.proc.kill()


class Page:
    """One tab: navigation, evaluation, and the errors its console and runtime reported."""

    def __init__(self, browser):
        self.b = browser
        target = browser.send("Target.createTarget", {"url": "about:blank"})["targetId"]
        self.s = browser.send("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        for domain in ("Page", "Runtime", "Log", "Network"):
            self.send(domain + ".enable")
        # Load events by navigation (loader id): a goto waits for its own page's load, not for
        # a load still due from a navigation a key started before it.
        self.send("Page.setLifecycleEventsEnabled", {"enabled": True})
        self.errors = []
        self.loaded = 0
        self.loaders = set()

    def send(self, method, params=None, timeout=30):
        return self.b.send(method, params, self.s, timeout)

    def pump(self):
        while True:
            try:
                ev = self.b.events.get_nowait()
            except queue.Empty:
                return
            if ev.get("sessionId") != self.s:
                continue
            m, p = ev.get("method"), ev.get("params", {})
            if m == "Page.loadEventFired":
                self.loaded += 1
            elif m == "Page.lifecycleEvent" and p.get("name") == "load":
                self.loaders.add(p.get("loaderId"))
            elif m == "Runtime.exceptionThrown":
                self.errors.append("exception: %s" % p["exceptionDetails"].get("text"))
            elif m == "Runtime.consoleAPICalled" and p.get("type") in ("error", "assert"):
                self.errors.append("console.%s: %s" % (p["type"], [a.get("value") for a in p.get("args", [])]))
            elif m == "Log.entryAdded" and p["entry"].get("level") == "error":
                self.errors.append("log: %s %s" % (p["entry"].get("text"), p["entry"].get("url", "")))

    def goto(self, url, timeout=30):
        self.pump()
        before = self.loaded
        loader = self.send("Page.navigate", {"url": url}).get("loaderId")
        if loader:
            self.wait(lambda: loader in self.loaders, timeout, "load of " + url)
        else:
            self.wait(lambda: self.loaded > before, timeout, "load of " + url)

    def wait(self, ready, timeout=15, what="condition"):
        deadline = time.time() + timeout
        while time.time() < deadline:
            self.pump()
            if ready():
                return
            time.sleep(0.05)
        raise AssertionError("timed out waiting for " + what)

    def js(self, expr):
        r = self.send("Runtime.evaluate", {"expression": expr, "returnByValue": True, "awaitPromise": True})
        if "exceptionDetails" in r:
            raise AssertionError("evaluating %r: %s" % (expr, r["exceptionDetails"]))
        return r["result"].get("value")

    def until(self, expr, timeout=15):
        self.wait(lambda: self.js(expr), timeout, expr)

    def type(self, selector, text):
        self.js("document.querySelector(%s).focus()" % json.dumps(selector))
        self.send("Input.insertText", {"text": text})

    def width(self, w):
        self.send("Emulation.setDeviceMetricsOverride", {"width": w, "height": 900, "deviceScaleFactor": 1, "mobile": False})

    def screenshot(self, path):
        import base64
        data = self.send("Page.captureScreenshot", {"format": "png"})["data"]
        with open(path, "wb") as f:
            f.write(base64.b64decode(data))

    def key(self, key, code=None):
        """A key pressed and released where the focus is (`j`, `Enter`, `/`)."""
        text = key if len(key) == 1 else ("\r" if key == "Enter" else "")
        for kind in ("keyDown", "keyUp"):
            p = {"type": kind, "key": key, "code": code or ("Key" + key.upper() if len(key) == 1 and key.isalpha() else key)}
            if kind == "keyDown" and text:
                p["text"] = text
            if key == "Enter":
                p["windowsVirtualKeyCode"] = 13
            self.send("Input.dispatchKeyEvent", p)

    def dark(self, on):
        """The page as a system in dark mode sees it (prefers-color-scheme)."""
        self.send("Emulation.setEmulatedMedia", {"features": [{"name": "prefers-color-scheme", "value": "dark" if on else "light"}]})
