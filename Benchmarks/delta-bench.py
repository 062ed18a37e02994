#!/usr/bin/env python3
"""Delta benchmark for `make bench`: bytes on the wire for an update, by delta and whole.

A copy of content/ is published, served by folio-edge on loopback, and edited version by
version: single-line edits of several sonnets, a whole-sonnet rewrite, a catalog change and a
new sonnet. For each, a cache synced to the previous version takes the update twice, from two
copies: `folio sync` (deltas) and `folio sync --no-delta` (the manifest and changed objects
whole, the reference). Then caches 1, 5 and 20 versions behind do the same. Bytes are what
`folio sync --json` counts: response heads and bodies as received. For scale, the sizes
`zstd -19 --patch-from` gives for the one-line edit's objects (binary deltas) are shown too.

usage: delta-bench.py CONTENT RELEASE_DIR"""
import json, os, re, shutil, subprocess, sys, tempfile

content, binaries = sys.argv[1], sys.argv[2]
folio, edge_bin, build = (os.path.join(binaries, n) for n in ("folio", "folio-edge", "folio-build"))
work = tempfile.mkdtemp(prefix="folio-delta-bench.")
src = os.path.join(work, "content")
root = os.path.join(work, "public")
shutil.copytree(content, src)
env = dict(os.environ, SOURCE_DATE_EPOCH="1700000000", FOLIO_SOURCE_REVISION="bench", FOLIO_SEED="")


def publish():
    subprocess.run([build, "-q", "--content", src, "--output", root], check=True, env=env, capture_output=True)
    return plist_version()


def plist_version():
    import plistlib
    m = plistlib.load(open(os.path.join(root, "manifest.plist"), "rb"))
    return m["version"]


def sonnet_path(n):
    return os.path.join(src, "sonnets", "%03d.txt" % n)


def edit_line(n, line_index, transform):
    path = sonnet_path(n)
    lines = open(path, encoding="utf-8").read().split("\n")
    poem = [i for i in range(2, len(lines)) if lines[i].strip()]
    i = poem[line_index]
    indent = lines[i][: len(lines[i]) - len(lines[i].lstrip(" "))]
    lines[i] = indent + transform(lines[i].strip())
    open(path, "w", encoding="utf-8").write("\n".join(lines))


edge = None
try:
    publish()
    edge = subprocess.Popen([edge_bin, "--root", root, "--port", "0", "--no-access-log", "--watch-interval-ms", "50"],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    url = re.search(r"listening on (\S+)", edge.stdout.readline()).group(1)

    def sync(cache, *args):
        out = subprocess.run([folio, "--edge", url, "--cache-dir", cache, "sync", "--force", "--json", *args],
                             capture_output=True, text=True, env=env, check=True).stdout
        return json.loads(out)

    def wait_for(version):
        import time, urllib.request, plistlib
        for _ in range(200):
            with urllib.request.urlopen(url + "/manifest.plist") as r:
                if plistlib.loads(r.read())["version"] == version:
                    return
            time.sleep(0.05)
        raise SystemExit("the edge did not serve version %d" % version)

    caches = {}  # version -> a cache synced to it

    def snapshot(version):
        cache = os.path.join(work, "at-%d" % version)
        sync(cache, "--no-delta")
        caches[version] = cache

    def twin(cache, label):
        copy = os.path.join(work, "%s-%s" % (os.path.basename(cache), label))
        shutil.rmtree(copy, ignore_errors=True)
        shutil.copytree(cache, copy, symlinks=True)
        return copy

    def measure(from_version):
        d = sync(twin(caches[from_version], "delta"))
        w = sync(twin(caches[from_version], "whole"), "--no-delta")
        assert d["versionAfter"] == w["versionAfter"], (d, w)
        return d, w

    rows = []

    def step(label, change):
        previous = plist_version()
        change()
        version = publish()
        wait_for(version)
        d, w = measure(previous)
        rows.append((label, d, w))
        snapshot(version)

    snapshot(1)
    words = ["winter’s", "autumn’s", "spring’s", "morning’s", "evening’s", "golden", "silver", "April", "northern", "western",
             "quiet", "gentle", "fading", "early", "endless", "distant"]
    # A series of single-line edits, each of a different sonnet.
    series = [18, 1, 73, 116, 130, 29, 55, 60, 94, 106, 127, 138, 141, 146, 151, 154]
    for i, n in enumerate(series):
        step("one-line edit (sonnet %d)" % n, lambda n=n, i=i: edit_line(n, 0, lambda t: t.rstrip(",.;:?!") + " (" + words[i] + ")"))
    step("whole-sonnet rewrite (sonnet 30)", lambda: [edit_line(30, k, lambda t, k=k: "A line rewritten entirely, number %d of fourteen" % k) for k in range(14)])

    def catalog():
        path = os.path.join(src, "catalogs", "pl", "Localizable.po")
        text = open(path, encoding="utf-8").read()
        open(path, "w", encoding="utf-8").write(text.replace('msgstr "Sonety Williama Szekspira"', 'msgstr "Wszystkie sonety Williama Szekspira"', 1))
    step("catalog change (pl, one string)", catalog)

    def new_sonnet():
        lines = open(sonnet_path(154), encoding="utf-8").read().split("\n")
        lines[0] = "CLV"
        open(sonnet_path(155), "w", encoding="utf-8").write("\n".join(l.replace("Love", "Time") for l in lines))
    step("new sonnet (155)", new_sonnet)
    step("one-line edit (sonnet 2)", lambda: edit_line(2, 3, lambda t: t + " indeed"))

    current = plist_version()
    behind = []
    for k in (1, 5, 20):
        if current - k in caches:
            d, w = measure(current - k)
            behind.append(("%d version%s behind" % (k, "" if k == 1 else "s"), d, w))

    def table(title, rows):
        print(title)
        print("  %-36s %17s %19s %9s" % ("", "delta bytes (req)", "whole bytes (req)", "saved"))
        for label, d, w in rows:
            how = d.get("method", "?")
            print("  %-36s %11d (%2d)   %13d (%2d)   %7.1f%%  %s" % (
                label, d["bytes"], d["requests"], w["bytes"], w["requests"], 100.0 * (1 - d["bytes"] / max(1, w["bytes"])),
                how if how != "delta" else ""))

    table("update after each change, client one version behind:", rows)
    edits = [r for r in rows if r[0].startswith("one-line")]
    sizes = sorted(d["bytes"] for _, d, _ in edits)
    print("  one-line edits: median %d bytes, max %d bytes, over %d edits (goal: under 2048)" % (sizes[len(sizes) // 2], sizes[-1], len(sizes)))
    table("clients further behind (at version %d):" % current, behind)
    ms = lambda xs: sorted(xs)[len(xs) // 2]
    print("  sync time, one-line edits (median): delta %.1f ms, whole %.1f ms" % (
        ms([d["durationMs"] for _, d, _ in edits]), ms([w["durationMs"] for _, _, w in edits])))

    # What writing the deltas costs a publish: the same one-line edits published into two copies
    # of the root, with the default history (10 deltas each) and with none.
    import time
    timings = {}
    for k in ("10", "0"):
        shutil.copytree(root, os.path.join(work, "public-k" + k), symlinks=True)
    for i in range(7):
        edit_line(99, 0, lambda t, i=i: t.rstrip(" 0123456789") + " %d" % i)
        for k in ("10", "0"):
            start = time.perf_counter()
            subprocess.run([build, "-q", "--content", src, "--output", os.path.join(work, "public-k" + k), "--delta-history", k],
                           check=True, env=env, capture_output=True)
            timings.setdefault(k, []).append((time.perf_counter() - start) * 1000)
    print("  folio-build of a one-line edit (median of 7): %.0f ms with 10 deltas, %.0f ms with none (%.2fx)" % (
        ms(timings["10"]), ms(timings["0"]), ms(timings["10"]) / ms(timings["0"])))

    # For scale: zstd's binary deltas of the first one-line edit's objects.
    if shutil.which("zstd"):
        import plistlib
        a = plistlib.load(open(os.path.join(root, "manifests", "1.plist"), "rb"))
        b = plistlib.load(open(os.path.join(root, "manifests", "2.plist"), "rb"))
        old = {e["path"]: e["sha256"] for e in a["entries"]}
        out = []
        for e in b["entries"]:
            if old.get(e["path"]) not in (None, e["sha256"]):
                src_obj = os.path.join(root, "objects", old[e["path"]] + ".plist")
                dst_obj = os.path.join(root, "objects", e["sha256"] + ".plist")
                patch = os.path.join(work, "patch.zst")
                subprocess.run(["zstd", "-q", "-f", "-19", "--patch-from=" + src_obj, dst_obj, "-o", patch], check=True, stderr=subprocess.DEVNULL)
                out.append("%s %d B" % (e["path"], os.path.getsize(patch)))
        m1, m2 = (os.path.join(root, "manifests", "%d.plist" % v) for v in (1, 2))
        subprocess.run(["zstd", "-q", "-f", "-19", "--patch-from=" + m1, m2, "-o", os.path.join(work, "m.zst")], check=True, stderr=subprocess.DEVNULL)
        out.append("manifest %d B" % os.path.getsize(os.path.join(work, "m.zst")))
        print("zstd -19 --patch-from, first edit (bodies only): " + ", ".join(out))
        print("folio, same edit (bodies only): %d B for head.plist and the delta" % rows[0][1]["bodyBytes"])
finally:
    if edge:
        edge.kill()
        edge.wait()
    shutil.rmtree(work, ignore_errors=True)
