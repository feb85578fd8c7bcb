"""A minimal Language Server Protocol client for the wire-level tests and the
benchmark: starts `oomlint server`, frames messages, and reads what comes
back on a thread so a test can wait for a message with a timeout instead of
blocking forever on a server that misbehaves."""
import json
import os
import queue
import subprocess
import tempfile
import threading
import time


def frame(obj):
    body = json.dumps(obj).encode("utf-8")
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


class Server:
    def __init__(self, binary, args=(), cwd=None, env=None):
        self.stderr = tempfile.TemporaryFile()
        full_env = dict(os.environ)
        if env:
            full_env.update(env)
        self.proc = subprocess.Popen([binary, "server", *args], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=self.stderr, cwd=cwd, env=full_env)
        self.messages = queue.Queue()
        self.pending = []   # messages read but not yet taken
        self.next_id = 0
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self):
        out = self.proc.stdout
        while True:
            length = None
            while True:
                line = out.readline()
                if not line:
                    self.messages.put(None)
                    return
                line = line.strip()
                if not line:
                    break
                name, _, value = line.partition(b":")
                if name.strip().lower() == b"content-length":
                    length = int(value)
            if length is None:
                self.messages.put({"_bad_frame": True})
                continue
            body = out.read(length)
            self.messages.put(json.loads(body))

    # ---- sending
    def send_raw(self, data):
        try:
            self.proc.stdin.write(data)
            self.proc.stdin.flush()
        except BrokenPipeError:
            pass

    def send(self, obj):
        self.send_raw(frame(obj))

    def notify(self, method, params=None):
        msg = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            msg["params"] = params
        self.send(msg)

    def request_async(self, method, params=None):
        self.next_id += 1
        msg = {"jsonrpc": "2.0", "id": self.next_id, "method": method}
        if params is not None:
            msg["params"] = params
        self.send(msg)
        return self.next_id

    # ---- receiving
    def take(self, predicate, timeout=20):
        """The first message (already read or still to come) that predicate accepts."""
        for i, m in enumerate(self.pending):
            if predicate(m):
                return self.pending.pop(i)
        deadline = time.time() + timeout
        while True:
            left = deadline - time.time()
            if left <= 0:
                raise AssertionError(f"no expected message within {timeout}s; got {self.pending[-5:]}"
                                     f"\nstderr: {self.err()[-2000:]}")
            try:
                m = self.messages.get(timeout=left)
            except queue.Empty:
                continue
            if m is None:
                raise AssertionError(f"the server closed its output; stderr: {self.err()[-2000:]}")
            if predicate(m):
                return m
            self.pending.append(m)

    def response(self, rid, timeout=20):
        return self.take(lambda m: m.get("id") == rid and "method" not in m, timeout)

    def request(self, method, params=None, timeout=20):
        return self.response(self.request_async(method, params), timeout)

    def diagnostics(self, uri, version=None, timeout=20):
        """The next publishDiagnostics for uri (and version, when given)."""
        def ok(m):
            if m.get("method") != "textDocument/publishDiagnostics":
                return False
            p = m["params"]
            return p["uri"] == uri and (version is None or p.get("version") == version)
        return self.take(ok, timeout)["params"]["diagnostics"]

    def drain(self, seconds=0.2):
        end = time.time() + seconds
        while time.time() < end:
            try:
                m = self.messages.get(timeout=max(0.01, end - time.time()))
            except queue.Empty:
                break
            if m is not None:
                self.pending.append(m)

    def err(self):
        self.stderr.seek(0)
        return self.stderr.read().decode("utf-8", "replace")

    # ---- lifecycle
    def initialize(self, capabilities=None, options=None, root=None):
        params = {"processId": os.getpid(), "capabilities": capabilities or {},
                  "rootUri": ("file://" + root) if root else None}
        if options is not None:
            params["initializationOptions"] = options
        r = self.request("initialize", params)
        self.notify("initialized", {})
        return r

    def shutdown(self, timeout=20):
        r = self.request("shutdown")
        assert r.get("result", "missing") is None, r
        self.notify("exit")
        return self.wait(timeout)

    def wait(self, timeout=20):
        try:
            code = self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            raise AssertionError("the server did not exit")
        err = self.err()
        if "ERROR: AddressSanitizer" in err or "runtime error:" in err or "LeakSanitizer" in err:
            raise AssertionError("sanitizer report:\n" + err[-4000:])
        return code

    def kill(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        for f in (self.proc.stdin, self.proc.stdout):
            try:
                f.close()
            except OSError:
                pass
        self.stderr.close()


def uri(path):
    return "file://" + path
