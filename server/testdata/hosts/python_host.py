"""A host written in Python with only the standard library, driving
`attune serve` over its stdin and stdout. Run by server/hosts_test.go:

    ATTUNE_BIN=... ATTUNE_CONFIG=... python3 python_host.py

Prints "ok" and exits 0 when every check passed; otherwise exits 1.
"""

import json
import os
import queue
import subprocess
import sys
import threading
import time


class Host:
    def __init__(self, argv):
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0)
        self.lock = threading.Lock()
        self.next_id = 0
        self.waiting = {}  # id -> queue of the response
        self.handlers = {}  # callback method -> function(params) -> result (or raise)
        self.notifications = []
        self.silent = set()  # callback paths never answered
        threading.Thread(target=self.read, daemon=True).start()

    def send(self, msg):
        data = (json.dumps(msg) + "\n").encode()
        with self.lock:
            self.proc.stdin.write(data)

    def read(self):
        for line in self.proc.stdout:
            if not line.strip():
                continue
            msg = json.loads(line)
            for m in msg if isinstance(msg, list) else [msg]:
                self.take(m)

    def take(self, m):
        if "method" in m and "id" in m:  # the engine asks the host
            threading.Thread(target=self.answer, args=(m,), daemon=True).start()
        elif "method" in m:
            self.notifications.append(m)
        else:
            q = self.waiting.pop(m["id"], None)
            if q is not None:
                q.put(m)

    def answer(self, m):
        handler = self.handlers[m["method"]]
        try:
            result = handler(m["params"])
        except Exception as e:  # noqa: BLE001 - a failing handler answers an error
            self.send({"jsonrpc": "2.0", "id": m["id"], "error": {"code": -32000, "message": str(e)}})
            return
        if result is NEVER:
            return
        self.send({"jsonrpc": "2.0", "id": m["id"], "result": result})

    def start(self, method, params):
        with self.lock:
            self.next_id += 1
            rid = self.next_id
        q = queue.Queue()
        self.waiting[rid] = q
        self.send({"jsonrpc": "2.0", "id": rid, "method": method, "params": params})
        return rid, q

    def call(self, method, params):
        _, q = self.start(method, params)
        return self.wait(q)

    @staticmethod
    def wait(q):
        m = q.get(timeout=20)
        return m


NEVER = object()


def check(cond, what, value):
    if not cond:
        raise AssertionError(f"{what}: {json.dumps(value)}")


def result(m, what):
    check("result" in m, what, m)
    return m["result"]


def main():
    h = Host([os.environ["ATTUNE_BIN"], "serve", os.environ["ATTUNE_CONFIG"]])
    cores, floors, reads = [], [], []

    def core(p):
        cores.append(p)
        if p["path"].startswith("slow/"):
            return NEVER
        return {"content": "data of " + p["args"]["path"]}

    def floor(p):
        floors.append(p)
        return {"refused": p["args"].get("path") == "secret", "reason": "not that one"}

    def read(p):
        reads.append(p)
        return "main"

    h.handlers = {"host/core": core, "host/floor": floor, "host/read": read}

    init = result(h.call("initialize", {"protocol_version": 1, "client": {"name": "python-host"},
                                        "capabilities": {"floor": True, "log": True, "notes": True},
                                        "host_timeout_ms": 500}), "initialize")
    check(init["protocol_version"] == 1 and init["capabilities"]["floor"] is True, "initialize", init)
    for path, effects in (("fs/read", ["read"]), ("slow/never", ["slow"]), ("slow/block", ["slow"])):
        result(h.call("tools/register", {"path": path, "effects": effects}), "register")

    # pipelined: start, turn/begin and round/begin without waiting for answers
    pending = [h.start("start", {"instance": "a", "bot": "main"}),
               h.start("turn/begin", {"instance": "a", "input": "hello"}),
               h.start("round/begin", {"instance": "a"})]
    answers = [result(h.wait(q), "pipelined") for _, q in pending]
    check(answers[0]["instance"] == "a" and answers[1]["turn"] == 1 and answers[2]["round"] == 1, "pipelined", answers)

    out = result(h.call("tool", {"instance": "a", "path": "fs/read", "args": {"path": "x"}}), "tool")
    check(out["status"] == "ok" and out["result"]["content"] == "data of x" and out["diagnostics"] == ["read x"], "tool", out)
    check(cores[0]["instance"] == "a" and cores[0]["call_id"] == out["call_id"] and cores[0]["marks"] == ["checked"], "core params", cores)
    check(floors[0]["call_id"] == out["call_id"], "floor params", floors)
    ref = result(h.call("tool", {"instance": "a", "path": "fs/read", "args": {"path": "secret"}}), "refused")
    check(ref["status"] == "refused" and ref["refused_by"] == "floor", "floor refusal", ref)
    re = result(h.call("round/end", {"instance": "a"}), "round/end")
    check(re["continue"] is True and re["notes"][0]["text"] == "on branch main" and len(reads) == 1, "round/end", re)

    m = result(h.call("method", {"instance": "a", "owner": "counter", "method": "add", "input": {"by": 5}}), "method")
    check(m["status"] == "ok" and m["result"] == 5 and m["revision"] == 1, "method", m)
    st = result(h.call("state", {"instance": "a", "owner": "counter"}), "state")
    check(st["state"]["n"] == 5, "state", st)

    # cancellation
    rid, q = h.start("tool", {"instance": "a", "path": "slow/block", "args": {}})
    time.sleep(0.1)
    h.send({"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": rid}})
    c = h.wait(q)
    check(c.get("error", {}).get("code") == -32800, "cancel", c)

    # a callback timeout; the instance stays usable
    t0 = time.time()
    slow = result(h.call("tool", {"instance": "a", "path": "slow/never", "args": {}}), "timeout")
    check(slow["status"] == "failed" and slow["code"] == "host-timeout" and time.time() - t0 < 10, "timeout", slow)
    again = result(h.call("tool", {"instance": "a", "path": "fs/read", "args": {"path": "y"}}), "again")
    check(again["status"] == "ok", "after the timeout", again)

    # JSON-RPC errors: a batch with an invalid request and an unknown method
    rid1, q1 = 1001, queue.Queue()
    h.waiting[rid1] = q1
    h.send([{"jsonrpc": "2.0", "id": rid1, "method": "nope"}, {"jsonrpc": "2.0", "method": "tool"}])
    e = h.wait(q1)
    check(e["error"]["code"] == -32601, "batch", e)
    e = h.call("rollback", {"instance": "a"})
    check(e["error"]["code"] == -32602 and e["error"]["data"]["param"] == "to_turn", "invalid params", e)

    te = result(h.call("turn/end", {"instance": "a", "addenda": ["done"]}), "turn/end")
    check(te["loop_end"]["addenda"] == ["done"], "turn/end", te)
    rp = result(h.call("replay", {"instance": "a"}), "replay")
    check(rp["steps"] >= 4 and rp["diverged"] == [], "replay", rp)

    logs = [n["params"] for n in h.notifications if n["method"] == "log"]
    notes = [n["params"] for n in h.notifications if n["method"] == "notes"]
    check(any(l["message"] == "print" and l["fields"]["text"] == "turn 1 begins" for l in logs), "log", logs)
    check(any(n["note"]["text"] == "on branch main" for n in notes), "notes", notes)

    h.proc.stdin.close()  # end of input: the server exits 0
    code = h.proc.wait(timeout=20)
    check(code == 0, "exit code", code)
    print("ok")


if __name__ == "__main__":
    try:
        main()
    except Exception as e:  # noqa: BLE001
        print(f"python host: {e!r}", file=sys.stderr)
        sys.exit(1)
