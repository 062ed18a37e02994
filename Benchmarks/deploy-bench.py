#!/usr/bin/env python3
"""Push deploys against rsync: bytes on the wire and wall time.

usage: deploy-bench.py RELEASE_DIR CONTENT_DIR

Two published directories, each already on its target once: the repository's content/
(sonnets, catalogs, assets) and a 10,000-entry site (content-bench.py's JSON items). For each,
an unchanged deploy, then one entry edited and built again: `folio-build publish DIR URL` to a
folio-edge's admin listener against `rsync -a DIR/ rsync://…` to an rsync daemon holding the
previous version, both on loopback. A counting TCP relay in front of each target measures the
bytes both ways. The edit is made, built and deployed EDITS times (3; DEPLOY_BENCH_EDITS sets it),
each time both ways, and the medians are reported. Each target is checked to end up holding each
new build's files, byte for byte. The issue's target: the deploy at most half of rsync's bytes
and time after an edit, and an unchanged 10,000-entry deploy in under 1 s with no object uploaded.
"""
import filecmp, importlib.util, os, re, shutil, socket, statistics, subprocess, sys, tempfile, threading, time

HERE = os.path.dirname(os.path.abspath(__file__))
TOKEN = "deploy-bench-token-0123456789"
EDITS = int(os.environ.get("DEPLOY_BENCH_EDITS", "3"))


class Relay:
    """127.0.0.1:port → target, counting the bytes relayed both ways."""

    def __init__(self, target_port):
        self.target = target_port
        self.bytes = 0
        self.lock = threading.Lock()
        self.server = socket.socket()
        self.server.bind(("127.0.0.1", 0))
        self.server.listen(128)
        self.port = self.server.getsockname()[1]
        threading.Thread(target=self.accept, daemon=True).start()

    def accept(self):
        while True:
            client, _ = self.server.accept()
            upstream = socket.create_connection(("127.0.0.1", self.target))
            # Forwarded as it comes: with Nagle, a small piece behind an unacknowledged one
            # waits for the peer's delayed ACK (40 ms), a stall neither program makes.
            for s in (client, upstream):
                s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            for a, b in ((client, upstream), (upstream, client)):
                threading.Thread(target=self.pipe, args=(a, b), daemon=True).start()

    def pipe(self, src, dst):
        try:
            while data := src.recv(65536):
                with self.lock:
                    self.bytes += len(data)
                dst.sendall(data)
        except OSError:
            pass
        finally:
            for s in (src, dst):
                try:
                    s.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass

    def take(self):
        time.sleep(0.2)  # the last segments of a closing connection
        with self.lock:
            n, self.bytes = self.bytes, 0
        return n


def run(cmd, **kw):
    r = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if r.returncode != 0:
        sys.exit(f"deploy-bench: {' '.join(cmd[:3])} failed ({r.returncode}): {r.stderr[-800:]}")
    return r


def build(release, content, out):
    run([f"{release}/folio-build", "--content", content, "--output", out, "--quiet"], env=dict(os.environ, SOURCE_DATE_EPOCH="1700000000"))


def same_tree(a, b):
    """Whether every published file of a is in b with the same bytes (b may hold more: old
    objects). The builder's own state (`.folio-build-cache.plist`) is not published."""
    for dirpath, _, files in os.walk(a):
        for name in files:
            if name.startswith("."):
                continue
            rel = os.path.relpath(os.path.join(dirpath, name), a)
            other = os.path.join(b, rel)
            if not os.path.isfile(other) or not filecmp.cmp(os.path.join(dirpath, name), other, shallow=False):
                return False
    return True


class Targets:
    """A folio-edge serving a copy of the first build, and an rsync daemon holding another."""

    def __init__(self, release, work, first):
        self.edge_root, self.rsync_root = f"{work}/edge", f"{work}/rsync"
        shutil.copytree(first, self.edge_root)
        shutil.copytree(first, self.rsync_root)
        with open(f"{work}/token", "w") as f:
            f.write(TOKEN + "\n")
        self.edge = subprocess.Popen(
            [f"{release}/folio-edge", "--root", self.edge_root, "--port", "0", "--admin-listen", "127.0.0.1:0", "--threads", "1",
             "--no-access-log", "--deploy-token-file", f"{work}/token"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        admin = None
        while admin is None:
            line = self.edge.stdout.readline()
            if not line:
                sys.exit("deploy-bench: folio-edge did not start")
            if line.startswith("admin listening on http://"):
                admin = int(line.rsplit(":", 1)[1])
        port = free_port()
        with open(f"{work}/rsyncd.conf", "w") as f:
            f.write(f"use chroot = no\n[site]\npath = {self.rsync_root}\nread only = no\nuid = root\ngid = root\n")
        self.rsyncd = subprocess.Popen(["rsync", "--daemon", "--no-detach", f"--port={port}", f"--config={work}/rsyncd.conf"])
        wait_port(port)
        self.edge_relay, self.rsync_relay = Relay(admin), Relay(port)

    def deploy(self, release, public):
        start = time.perf_counter()
        r = run([f"{release}/folio-build", "publish", public, f"http://127.0.0.1:{self.edge_relay.port}", "--quiet"],
                env=dict(os.environ, FOLIO_DEPLOY_TOKEN=TOKEN))
        seconds = time.perf_counter() - start
        return seconds, self.edge_relay.take(), r.stdout.strip().splitlines()[-1]

    def rsync(self, public):
        start = time.perf_counter()
        # The builder's own state (dot files: the build cache, manifest prints) is not published.
        run(["rsync", "-a", "--exclude=.folio-build-*", public + "/", f"rsync://127.0.0.1:{self.rsync_relay.port}/site/"])
        return time.perf_counter() - start, self.rsync_relay.take()

    def stop(self):
        for p in (self.edge, self.rsyncd):
            p.terminate()
            p.wait(10)


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def wait_port(port):
    for _ in range(100):
        try:
            socket.create_connection(("127.0.0.1", port)).close()
            return
        except OSError:
            time.sleep(0.05)
    sys.exit(f"deploy-bench: nothing listens on {port}")


def scenario(release, label, content, edit, work):
    """Unchanged, then edited: one table row each."""
    public = f"{work}/public"
    build(release, content, public)
    targets = Targets(release, work, public)
    try:
        rows = []
        d = targets.deploy(release, public)
        r = targets.rsync(public)
        rows.append((f"{label}, unchanged", d, r))
        runs = []
        for n in range(EDITS):
            edit(content, n)
            # rsync's quick check compares sizes and whole-second mtimes: a build within the
            # second of the last one could leave it skipping a changed file of the same size.
            time.sleep(1)
            build(release, content, public)
            d = targets.deploy(release, public)
            r = targets.rsync(public)
            for root in (targets.edge_root, targets.rsync_root):
                if not same_tree(public, root):
                    sys.exit(f"deploy-bench: {root} does not hold the new build byte for byte")
            runs.append((d, r))
        median = lambda xs: statistics.median(xs)
        each = ", ".join(f"{x[0][0]:.3f}/{x[1][0]:.3f}" for x in runs)
        d = (median([x[0][0] for x in runs]), int(median([x[0][1] for x in runs])), f"{runs[-1][0][2]} (each edit, folio/rsync s: {each})")
        r = (median([x[1][0] for x in runs]), int(median([x[1][1] for x in runs])))
        rows.append((f"{label}, one entry edited", d, r))
        return rows
    finally:
        targets.stop()


def sonnet_edit(content, n):
    """Sonnet 18's first line, its season another each time."""
    path = f"{content}/sonnets/018.txt"
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    lines[2] = re.sub(r"summer|winter \d+", f"winter {n}", lines[2])
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n".join(lines))


def item_edit(content, n):
    """Item 5000 given a field, another value each time."""
    path = f"{content}/data/item-05000.json"
    with open(path, encoding="utf-8") as f:
        text = f.read()
    with open(path, "w", encoding="utf-8") as f:
        f.write(re.sub(r'"id": 5000,( "edited": \d+,)?', f'"id": 5000, "edited": {n},', text, count=1))


def ten_thousand(work):
    spec = importlib.util.spec_from_file_location("content_bench", f"{HERE}/content-bench.py")
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    import random
    rng = random.Random(bench.SEED)
    data = f"{work}/content/data"
    os.makedirs(data)
    for i in range(1, 10001):
        with open(f"{data}/item-{i:05d}.json", "w", encoding="utf-8") as f:
            f.write(bench.json.dumps(bench.data_item(rng, i), indent=1))
    return f"{work}/content"


def main(argv):
    release, content = argv[1], argv[2]
    rows = []
    with tempfile.TemporaryDirectory(prefix="folio-deploy-bench.") as work:
        shutil.copytree(content, f"{work}/a/content")
        rows += scenario(release, "content/ (sonnets)", f"{work}/a/content", sonnet_edit, f"{work}/a")
        os.makedirs(f"{work}/b")
        rows += scenario(release, "10,000 JSON entries", ten_thousand(f"{work}/b"), item_edit, f"{work}/b")
    print("folio-build publish (to folio-edge's admin listener) vs rsync -a (to an rsync daemon), loopback; bytes both ways;")
    print(f"an edit: the median of {EDITS}")
    print(f"{'deploy':<36} {'folio bytes':>12} {'rsync bytes':>12} {'ratio':>6} {'folio s':>8} {'rsync s':>8} {'ratio':>6}")
    for label, (ds, db, _), (rs, rb) in rows:
        print(f"{label:<36} {db:>12,} {rb:>12,} {db / max(rb, 1):>6.2f} {ds:>8.3f} {rs:>8.3f} {ds / rs:>6.2f}")
    for label, (_, _, summary), _ in rows:
        print(f"  {label}: {summary}")


if __name__ == "__main__":
    main(sys.argv)
