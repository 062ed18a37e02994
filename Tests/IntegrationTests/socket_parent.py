#!/usr/bin/env python3
"""Holds the edge's listening socket as systemd's socket unit does, and restarts and upgrades
the edge under load: the test of "restarts and upgrades that drop nothing".

usage: socket_parent.py FOLIO_EDGE ROOT [SECONDS_PER_PHASE]

The socket is bound here (127.0.0.1, an ephemeral port) and passed to each edge process as
fd 3 with LISTEN_FDS=1, LISTEN_FDNAMES=http and LISTEN_PID set to the child's own pid. Each
child gets its own NOTIFY_SOCKET, read here like systemd reads it. Phases, under a load of
keep-alive HTTP/1.1 clients: an upgrade (start the new process, wait for its READY=1, then
SIGTERM the old), a restart (SIGTERM, wait for the exit, start again), and a reload (SIGHUP:
RELOADING=1 with MONOTONIC_USEC, then READY=1). Prints one JSON object: requests, failures,
each process's exit status and notify messages. Bounded: every wait has a timeout.
"""
import http.client
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

# The listening socket first, so that it is fd 3 here and in each child (pass_fds keeps numbers).
LISTENER = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
LISTENER.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
LISTENER.bind(("127.0.0.1", 0))
LISTENER.listen(1024)
if LISTENER.fileno() != 3:
    os.dup2(LISTENER.fileno(), 3)
PORT = LISTENER.getsockname()[1]

EDGE, ROOT = sys.argv[1], sys.argv[2]
PHASE = float(sys.argv[3]) if len(sys.argv) > 3 else 1.5
WORK = tempfile.mkdtemp(prefix="folio-socket-parent-")


class Child:
    """One edge process with its own notify socket and the messages it sent."""

    def __init__(self, name):
        self.name = name
        self.messages = []
        path = os.path.join(WORK, "notify-" + name)
        self.notify = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.notify.bind(path)
        self.notify.settimeout(0.2)
        env = dict(os.environ, LISTEN_FDS="1", LISTEN_FDNAMES="http", NOTIFY_SOCKET=path)
        self.log = open(os.path.join(WORK, name + ".log"), "wb")
        # sh sets LISTEN_PID to its own pid, which exec keeps for the edge.
        self.process = subprocess.Popen(
            ["/bin/sh", "-c", 'export LISTEN_PID=$$; exec "$0" "$@"', EDGE, "--root", ROOT, "--no-access-log",
             "--threads", "1", "--drain-timeout", "5"],
            env=env, pass_fds=(3,), stdout=subprocess.DEVNULL, stderr=self.log)
        self.reader = threading.Thread(target=self.read, daemon=True)
        self.reader.start()

    def read(self):
        while True:
            try:
                data = self.notify.recv(4096)
            except socket.timeout:
                if self.process.poll() is not None:
                    return
                continue
            except OSError:
                return
            self.messages.append(data.decode())

    def wait_for(self, text, timeout=20, after=0):
        deadline = time.time() + timeout
        while time.time() < deadline:
            if any(text in m for m in self.messages[after:]):
                return True
            if self.process.poll() is not None:
                return False
            time.sleep(0.01)
        return False

    def stop(self, timeout=20):
        self.process.send_signal(signal.SIGTERM)
        try:
            return self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            return "killed"

    def report(self):
        self.reader.join(2)
        self.log.close()
        with open(self.log.name, "rb") as f:
            log = f.read().decode(errors="replace")
        return {"exit": self.process.returncode, "messages": self.messages, "log": log[-2000:]}


class Load:
    """Clients on keep-alive connections, each sending its next request as soon as the last
    answer is read, and opening a new connection after one that says Connection: close."""

    def __init__(self, clients=4):
        self.stop = threading.Event()
        self.lock = threading.Lock()
        self.requests = 0
        self.failures = []
        self.threads = [threading.Thread(target=self.client, daemon=True) for _ in range(clients)]

    def client(self):
        conn = None
        while not self.stop.is_set():
            try:
                if conn is None:
                    conn = http.client.HTTPConnection("127.0.0.1", PORT, timeout=10)
                conn.request("GET", "/manifest.plist")
                response = conn.getresponse()
                body = response.read()
                ok = response.status == 200 and len(body) > 0
                with self.lock:
                    self.requests += 1
                    if not ok:
                        self.failures.append("status %d" % response.status)
                if response.getheader("Connection", "").lower() == "close":
                    conn.close()
                    conn = None
            except Exception as error:  # a refused, reset or cut request is a failure
                with self.lock:
                    self.failures.append(repr(error))
                if conn is not None:
                    conn.close()
                conn = None

    def __enter__(self):
        for t in self.threads:
            t.start()
        return self

    def __exit__(self, *exc):
        self.stop.set()
        for t in self.threads:
            t.join(15)


def main():
    deadline_all = time.time() + 120
    children, steps = [], []
    first = Child("first")
    children.append(first)
    if not first.wait_for("READY=1"):
        print(json.dumps({"error": "the first edge never sent READY=1", "children": [c.report() for c in children]}))
        return
    with Load() as load:
        time.sleep(PHASE)
        # Upgrade: the new process accepts beside the old one, then the old one drains.
        second = Child("second")
        children.append(second)
        steps.append(("upgrade: second ready", second.wait_for("READY=1")))
        steps.append(("upgrade: first exit", first.stop()))
        time.sleep(PHASE)
        # Restart: stop, then start; connections wait in the socket's queue meanwhile.
        steps.append(("restart: second exit", second.stop()))
        third = Child("third")
        children.append(third)
        steps.append(("restart: third ready", third.wait_for("READY=1")))
        time.sleep(PHASE)
        # Reload.
        seen = len(third.messages)
        third.process.send_signal(signal.SIGHUP)
        steps.append(("reload: reloading", third.wait_for("RELOADING=1", after=seen)))
        steps.append(("reload: ready again", third.wait_for("READY=1", after=seen + 1)))
        time.sleep(PHASE)
    steps.append(("end: third exit", third.stop()))
    result = {
        "port": PORT,
        "requests": load.requests,
        "failures": len(load.failures),
        "failureSamples": load.failures[:5],
        "steps": steps,
        "children": [c.report() for c in children],
        "inTime": time.time() < deadline_all,
    }
    print(json.dumps(result))


if __name__ == "__main__":
    main()
