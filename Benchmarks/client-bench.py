#!/usr/bin/env python3
"""Client benchmark for `make bench`: folio sync against curl, on loopback, same edge.

(a) no-op sync: one conditional GET of the manifest (folio sync --force on a synced cache)
    vs curl doing the same single conditional GET; (b) a full sync into an empty cache vs
    curl --parallel --parallel-max 8 --compressed fetching the same objects; (c) requests
    after one sonnet changes, by delta and whole (Benchmarks/delta-bench.py measures deltas in
    full); (d) a full sync over HTTPS (HTTP/2, one connection) vs curl --http2 --parallel
    --compressed fetching the same objects from the same edge, both checked to get every object.
    Times are hyperfine means in the same run.

    FOLIO_BASELINE=DIR adds DIR/folio (a build of an earlier commit) to (a), (b) and (d): an A/B
    of the client in the same run, against the same edge. READER=PATH adds (e): FolioKit over
    URLSession, through Examples/Reader built in release, against curl."""
import hashlib, json, os, plistlib, re, shutil, subprocess, sys, tempfile, time

public, binaries = sys.argv[1], sys.argv[2]


def object_path(e):
    """objects/<sha256>.<ext>, the extension as PublishedLayout.objectExtension gives it."""
    name = e["path"].rsplit("/", 1)[-1]
    ext = name.rsplit(".", 1)[-1].lower() if "." in name[1:] else ""
    if e["path"].endswith(".plist"):
        ext = "plist"
    elif not (1 <= len(ext) <= 10 and ext.isascii() and ext.isalnum()):
        ext = "bin"
    return f"objects/{e['sha256']}.{ext}"


def tls_files(work):
    """A CA and a certificate for 127.0.0.1 made with openssl: (ca, cert, key)."""
    run = lambda *a: subprocess.run(list(a), check=True, capture_output=True)
    ca, cakey, cert, key, csr, ext = (os.path.join(work, n) for n in ("ca.pem", "ca.key", "cert.pem", "key.pem", "leaf.csr", "ext"))
    run("openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", cakey, "-out", ca,
        "-days", "1", "-subj", "/CN=client-bench CA", "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign")
    run("openssl", "req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", key, "-out", csr, "-subj", "/CN=127.0.0.1")
    open(ext, "w").write("subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth\n")
    run("openssl", "x509", "-req", "-in", csr, "-CA", ca, "-CAkey", cakey, "-CAcreateserial", "-days", "1", "-extfile", ext, "-out", cert)
    os.chmod(key, 0o600)
    return ca, cert, key
folio, edge_bin, build = (os.path.join(binaries, n) for n in ("folio", "folio-edge", "folio-build"))
baseline = os.path.join(os.environ["FOLIO_BASELINE"], "folio") if os.environ.get("FOLIO_BASELINE") else None
work = tempfile.mkdtemp(prefix="folio-client-bench.")
root = os.path.join(work, "public")
shutil.copytree(public, root)
edge = subprocess.Popen([edge_bin, "--root", root, "--port", "0", "--no-access-log", "--watch-interval-ms", "100"],
                        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
try:
    line = edge.stdout.readline()
    url = re.search(r"listening on (\S+)", line).group(1)
    cache = os.path.join(work, "cache")

    def sync(*args):
        out = subprocess.run([folio, "--edge", url, "--cache-dir", cache, "sync", "--json", *args],
                             capture_output=True, text=True, check=True).stdout
        return json.loads(out)

    def hyperfine(*commands, prepare=None, runs=20):
        out = os.path.join(work, "hf.json")
        cmd = ["hyperfine", "-N", "--warmup", "3", "--runs", str(runs), "--export-json", out, "--style", "none"]
        if prepare:
            cmd += ["--prepare", prepare]
        subprocess.run(cmd + list(commands), check=True, stdout=subprocess.DEVNULL)
        return [r["mean"] * 1000 for r in json.load(open(out))["results"]]

    manifest = plistlib.load(open(os.path.join(root, "manifest.plist"), "rb"))
    objects = {e["sha256"]: e for e in manifest["entries"]}
    # What each object travels in: its smallest variant (sync and curl --compressed both ask for br).
    wire_total = sum(min(e["size"], e.get("gzipSize", e["size"]), e.get("brSize", e["size"])) for e in objects.values())

    # (a) no-op sync
    # A synced client revalidates head.plist (the first sync after a full one learns its ETag).
    first = sync()
    sync("--force")
    noop = sync("--force")
    etag = subprocess.run(["curl", "-s", "-D", "-", "-o", "/dev/null", "-H", "Accept-Encoding: gzip", url + "/head.plist"],
                          capture_output=True, text=True).stdout
    etag = re.search(r"(?im)^etag: (.*?)\r?$", etag).group(1)
    base_noop = []
    if baseline:
        for _ in range(3):
            subprocess.run([baseline, "--edge", url, "--cache-dir", f"{work}/base-cache", "sync", "--force"], check=True, capture_output=True)
        base_noop = [f"{baseline} --edge {url} --cache-dir {work}/base-cache sync --force"]
    t_folio, t_curl, *t_base = hyperfine(
        f"{folio} --edge {url} --cache-dir {cache} sync --force",
        f"curl -s -o /dev/null -H 'Accept-Encoding: gzip' -H 'If-None-Match: {etag}' {url}/head.plist",
        *base_noop, runs=100)  # ~10 ms each: enough runs to tame a noisy machine
    print("(a) no-op sync (one conditional GET, 304)")
    print(f"    folio sync --force   {t_folio:7.1f} ms   requests {noop['requests']}, ~{noop['bytes']} bytes received (headers + body)")
    print(f"    curl                 {t_curl:7.1f} ms")
    if t_base:
        print(f"    baseline folio       {t_base[0]:7.1f} ms   (FOLIO_BASELINE; this build / baseline {t_folio / t_base[0]:.2f}x)")
    print(f"    ratio folio/curl     {t_folio / t_curl:7.2f}x   (target <= 1.5x)")

    # (b) full sync into an empty cache vs curl --parallel
    urls = os.path.join(work, "urls.txt")
    with open(urls, "w") as f:
        for sha in objects:
            f.write(f'url = "{url}/{object_path(objects[sha])}"\noutput = "{work}/curl/{sha}"\n')
    t_full, t_curlp, *t_base_full = hyperfine(
        f"{folio} --edge {url} --cache-dir {work}/empty sync",
        f"curl -s --parallel --parallel-max 8 --compressed --create-dirs -K {urls}",
        *([f"{baseline} --edge {url} --cache-dir {work}/empty sync"] if baseline else []),
        prepare=f"rm -rf {work}/empty {work}/curl")
    shutil.rmtree(os.path.join(work, "empty"), ignore_errors=True)
    full = json.loads(subprocess.run([folio, "--edge", url, "--cache-dir", f"{work}/empty", "sync", "--json"],
                                     capture_output=True, text=True, check=True).stdout)
    curl_bytes = subprocess.run(["curl", "-s", "--parallel", "--parallel-max", "8", "--compressed", "--create-dirs",
                                 "-K", urls, "-w", "%{size_download} %{size_header}\n"], capture_output=True, text=True).stdout
    curl_total = sum(int(a) + int(b) for a, b in (l.split() for l in curl_bytes.splitlines() if l.strip()))
    print(f"(b) full sync into an empty cache: {len(objects)} objects, smallest variants sum to {wire_total} bytes")
    curl_body = sum(int(l.split()[0]) for l in curl_bytes.splitlines() if l.strip())
    # folio also fetches the manifest: compare its bodies with the smallest variants of all it fetched.
    manifest_wire = int(subprocess.run(["curl", "-s", "-o", "/dev/null", "-H", "Accept-Encoding: br, gzip", "-w", "%{size_download}",
                                        url + "/manifest.plist"], capture_output=True, text=True, check=True).stdout)
    fetched = wire_total + manifest_wire
    print(f"    folio sync           {t_full:7.1f} ms   requests {full['requests']}, bodies {full['bodyBytes']} bytes ({full['bodyBytes'] / fetched:.3f}x the smallest variants of the objects + manifest, {fetched}), heads+bodies ~{full['bytes']}")
    print(f"    curl --parallel 8    {t_curlp:7.1f} ms   bodies {curl_body} bytes ({curl_body / wire_total:.3f}x the smallest variants, objects only), heads+bodies ~{curl_total}")
    print(f"    ratio folio/curl     {t_full / t_curlp:7.2f}x   (target <= 1.0x; bytes target <= 1.05x)")
    if t_base_full:
        print(f"    baseline folio       {t_base_full[0]:7.1f} ms   (this build / baseline {t_full / t_base_full[0]:.2f}x)")

    # (d) a full sync over HTTPS: HTTP/2 by ALPN, against curl multiplexing on one connection too
    ca, cert, key = tls_files(work)
    tls_edge = subprocess.Popen([edge_bin, "--root", root, "--port", "0", "--no-access-log", "--tls-cert", cert, "--tls-key", key],
                                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        https = re.search(r"listening on (\S+)", tls_edge.stdout.readline()).group(1)
        h2urls = os.path.join(work, "h2urls.txt")
        with open(h2urls, "w") as f:
            for sha in objects:
                f.write(f'url = "{https}/{object_path(objects[sha])}"\noutput = "{work}/curl-h2/{sha}"\n')
        curl_h2 = f"curl -s --no-progress-meter --http2 --parallel --parallel-max 100 --compressed --cacert {ca} --create-dirs -K {h2urls}"
        env = dict(os.environ, FOLIO_CA_FILE=ca)
        synced = json.loads(subprocess.run([folio, "--edge", https, "--cache-dir", f"{work}/h2", "sync", "--json"],
                                           capture_output=True, text=True, check=True, env=env).stdout)
        subprocess.run(curl_h2.split(), check=True, stdout=subprocess.DEVNULL)
        bad = [sha for sha in objects if hashlib.sha256(open(f"{work}/curl-h2/{sha}", "rb").read()).hexdigest() != sha]
        if synced["objectsFetched"] != len(objects) or bad:
            sys.exit(f"(d) not every object arrived: folio fetched {synced['objectsFetched']} of {len(objects)}, curl got {len(bad)} wrong")
        os.environ["FOLIO_CA_FILE"] = ca  # hyperfine's children
        t_h2, t_curl_h2, *t_base_h2 = hyperfine(
            f"{folio} --edge {https} --cache-dir {work}/h2 sync", curl_h2,
            *([f"{baseline} --edge {https} --cache-dir {work}/h2 sync"] if baseline else []),
            prepare=f"rm -rf {work}/h2 {work}/curl-h2")
        print(f"(d) full sync over HTTPS (HTTP/2): {len(objects)} objects")
        print(f"    folio sync           {t_h2:7.1f} ms   requests {synced['requests']}")
        print(f"    curl --http2 --parallel {t_curl_h2:7.1f} ms")
        print(f"    ratio folio/curl     {t_h2 / t_curl_h2:7.2f}x   (target <= 1.0x)")
        if t_base_h2:
            print(f"    baseline folio       {t_base_h2[0]:7.1f} ms   (this build / baseline {t_h2 / t_base_h2[0]:.2f}x)")
    finally:
        tls_edge.terminate()
        tls_edge.wait()

    # (e) FolioKit as an app runs it: URLSession (FoundationNetworking, libcurl, here) through
    #     Examples/Reader built in release (READER=path), against an edge whose manifest is never
    #     fresh (--manifest-max-age 0), so that each sync of a synced cache asks again (a 304).
    #     The reader also reads three entries and a catalog after its sync (well under 1 ms).
    if os.environ.get("READER"):
        reader = os.environ["READER"]
        fresh0 = subprocess.Popen([edge_bin, "--root", root, "--port", "0", "--no-access-log", "--manifest-max-age", "0"],
                                  stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        try:
            url0 = re.search(r"listening on (\S+)", fresh0.stdout.readline()).group(1)
            first = subprocess.run([reader, url0, f"{work}/reader-cache"], capture_output=True, text=True, check=True).stdout
            again = subprocess.run([reader, url0, f"{work}/reader-cache"], capture_output=True, text=True, check=True).stdout
            if f"sync: updated, {len(objects)} objects" not in first or "sync: notModified, 0 objects" not in again:
                sys.exit(f"(e) the reader did not sync: {first!r} then {again!r}")
            urls0 = os.path.join(work, "urls0.txt")
            with open(urls0, "w") as f:
                for sha in objects:
                    f.write(f'url = "{url0}/{object_path(objects[sha])}"\noutput = "{work}/curl0/{sha}"\n')
            t_rfull, t_rcurl = hyperfine(f"{reader} {url0} {work}/reader-empty",
                                         f"curl -s --parallel --parallel-max 8 --compressed --create-dirs -K {urls0}",
                                         prepare=f"rm -rf {work}/reader-empty {work}/curl0")
            t_rnoop, t_rcurl_noop = hyperfine(f"{reader} {url0} {work}/reader-cache",
                                              f"curl -s -o /dev/null -H 'Accept-Encoding: gzip' -H 'If-None-Match: {etag}' {url0}/head.plist",
                                              runs=50)
            print("(e) FolioKit over URLSession (Examples/Reader, release; no target)")
            print(f"    full sync            {t_rfull:7.1f} ms   curl --parallel 8 {t_rcurl:7.1f} ms   ({t_rfull / t_rcurl:.2f}x)")
            print(f"    no-op sync (304)     {t_rnoop:7.1f} ms   curl {t_rcurl_noop:7.1f} ms   ({t_rnoop / t_rcurl_noop:.2f}x)")
        finally:
            fresh0.terminate()
            fresh0.wait()

    # (c) one sonnet changes
    content = os.path.join(work, "content")
    shutil.copytree(os.path.join(os.path.dirname(os.path.abspath(public)), "content"), content)
    p = os.path.join(content, "sonnets", "018.txt")
    text = open(p, encoding="utf-8").read().replace("summer’s day", "winter’s night")
    open(p, "w", encoding="utf-8").write(text)
    before = manifest["version"]
    subprocess.run([build, "--content", content, "--output", root, "--quiet"], check=True, stdout=subprocess.DEVNULL)
    new = plistlib.load(open(os.path.join(root, "manifest.plist"), "rb"))
    changed = sum(1 for e in new["entries"] if objects.get(e["sha256"]) is None)
    for _ in range(100):
        health = subprocess.run(["curl", "-s", url + "/healthz"], capture_output=True, text=True).stdout
        if f"version {new['version']}" in health:
            break
        time.sleep(0.05)
    whole_cache = os.path.join(work, "cache-whole")
    shutil.copytree(cache, whole_cache, symlinks=True)
    after = sync("--force")
    whole = json.loads(subprocess.run([folio, "--edge", url, "--cache-dir", whole_cache, "sync", "--json", "--force", "--no-delta"],
                                      capture_output=True, text=True, check=True).stdout)
    print(f"(c) after one sonnet changes (version {before} → {new['version']}, {changed} changed entries)")
    print(f"    folio sync           requests {after['requests']} (target 2: head.plist and one delta), "
          f"objects patched {after.get('objectsPatched', 0)}, fetched {after['objectsFetched']}, {after['bytes']} bytes")
    print(f"    folio sync --no-delta requests {whole['requests']} (target 1 + {changed} = {1 + changed}), "
          f"objects fetched {whole['objectsFetched']}, {whole['bytes']} bytes")
finally:
    edge.terminate()
    edge.wait()
    shutil.rmtree(work, ignore_errors=True)
