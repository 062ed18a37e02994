#!/usr/bin/env python3
"""Diff benchmark for `make bench` (issue 29): `folio diff` against graphtage on 100 changed entries.

A copy of content/ is published (version 1), then edited with a fixed seed and published again
into the same directory (version 2). The edits touch distinct entries of four kinds: sonnets (a
word changed, a line inserted or a line removed, never in the first three lines, so
sonnets/index.plist keeps its previews), catalog strings (.po and .strings, one translated
value each), the app's YAML (a value changed, an array item inserted) and the article (front
matter array item inserted, a body line changed; title, date and image stay, so
articles/index.plist keeps its rows). sonnets/all.plist, which gathers every sonnet, changes
with them. The number of sonnets edited is chosen so that exactly DIFF_EDITS manifest entries
change; the script checks the changed set against the planned one, and against what
`folio diff --format json` reports.

Timed on core 0 (`taskset -c 0`), time.perf_counter around the child, medians:
  folio:     folio diff public/manifests/1.plist public/manifests/2.plist --format text
  graphtage: graphtage --no-color --no-status --quiet -k -ll --edit-digest old.json new.json,
             where old.json / new.json are one dict {logical path: decoded value} each, holding
             exactly the changed entries (read from public/objects/ with plistlib; dates as ISO
             8601 text, data as base64), so both tools make one run over the same values.
             --edit-digest prints one line per edit (path: old -> new), as folio diff prints
             changes only; -k -ll (keys matched by name, equal-length lists item by item) are
             graphtage's cheapest settings that still give a correct diff: with its defaults it
             takes minutes on sonnets/all.plist (DIFF_GRAPHTAGE_DEFAULTS=1 uses them, with the
             timeout below). graphtage must exit 0 or 1 with output, else the bench fails.
folio's runs are split before and after graphtage's. Lines of output are counted for the same
runs; graphtage's whole-document diff (no --edit-digest) is counted too, untimed (one run).

Usage: diff-bench.py RELEASE_DIR [CONTENT]
Environment: DIFF_EDITS (changed entries, default 100, at least 11), DIFF_REPS (folio runs,
             default 20), DIFF_GRAPHTAGE_REPS (graphtage runs, default 3), DIFF_GRAPHTAGE_TIMEOUT
             (seconds per graphtage run, default 600; past it the ratio is printed as a lower
             bound), DIFF_GRAPHTAGE_DEFAULTS=1 (graphtage's default matching, not -k -ll),
             DIFF_SEED (default 20261127), DIFF_BENCH_KEEP=1 keeps the work directory.
Exit 0 whatever the figures (the 100x target is reported, not asserted); 1 when a build or a
tool fails, or the changed entries are not the planned ones."""
import base64, datetime, json, os, plistlib, random, re, resource, shutil, statistics, subprocess, sys, tempfile, time

RELEASE = sys.argv[1] if len(sys.argv) > 1 else ".build/release"
CONTENT = sys.argv[2] if len(sys.argv) > 2 else "content"
EDITS = int(os.environ.get("DIFF_EDITS", "100"))
REPS = int(os.environ.get("DIFF_REPS", "20"))
G_REPS = int(os.environ.get("DIFF_GRAPHTAGE_REPS", "3"))
G_TIMEOUT = float(os.environ.get("DIFF_GRAPHTAGE_TIMEOUT", "600"))
SEED = int(os.environ.get("DIFF_SEED", "20261127"))
CPU = ["taskset", "-c", "0"] if shutil.which("taskset") and (os.cpu_count() or 1) >= 2 else []
ENV = dict(os.environ, SOURCE_DATE_EPOCH="1700000000", FOLIO_SOURCE_REVISION="bench", FOLIO_SEED="")
WORDS = ("summer winter rose beauty time love eye heart night day truth praise glass verse "
         "golden silver quiet gentle fading early endless distant morning evening").split()


class BenchFailure(Exception):
    pass


def run(argv, ok=(0,), timeout=None):
    """Runs argv; returns ((wall seconds, CPU seconds: user + system), stdout); raises with its
    stderr when the exit code is not in ok. CPU time is the reaped child's, from RUSAGE_CHILDREN."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    p = subprocess.run(argv, env=ENV, capture_output=True, text=True, timeout=timeout)
    elapsed = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if p.returncode not in ok:
        raise BenchFailure(f"{' '.join(argv[:4])} exited {p.returncode}: {p.stderr[-2000:]}")
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    return (elapsed, cpu), p.stdout


# Edits: each takes (rng, content dir) and returns the logical path of the entry it changes.

def edit_text(path, change, encoding=None):
    """Rewrites a text file through change(text); keeps a UTF-16 file (BOM) in UTF-16."""
    raw = open(path, "rb").read()
    encoding = encoding or ("utf-16" if raw[:2] in (b"\xff\xfe", b"\xfe\xff") else "utf-8")
    text = raw.decode(encoding)
    new = change(text)
    if new == text:
        raise BenchFailure(f"edit left {path} unchanged")
    open(path, "wb").write(new.encode(encoding))


def edit_sonnet(rng, src, number):
    """A word changed, a line inserted or a line removed, from the poem's fourth line on."""
    def change(text):
        lines = text.split("\n")
        poem = [i for i in range(2, len(lines)) if lines[i].strip()][3:]
        i = rng.choice(poem)
        op = rng.choice(("word", "insert", "remove"))
        if op == "remove":
            del lines[i]
        elif op == "insert":
            lines.insert(i, "And " + " ".join(rng.sample(WORDS, 5)) + ",")
        else:
            words = lines[i].split(" ")
            k = rng.choice([j for j, w in enumerate(words) if w.isalpha()] or [len(words) - 1])
            words[k] = rng.choice([w for w in WORDS if w != words[k]])
            lines[i] = " ".join(words)
        return "\n".join(lines)
    edit_text(os.path.join(src, "sonnets", "%03d.txt" % number), change)
    return "sonnets/%03d.plist" % number


def edit_po(rng, src, locale):
    """One translated msgstr (not a fuzzy entry, not the header) gets a word appended."""
    def change(text):
        blocks = text.split("\n\n")
        ok = [b for b in range(len(blocks)) if "fuzzy" not in blocks[b]
              and re.search(r'^msgstr "[^"\n]+"$', blocks[b], re.M) and 'msgid ""' not in blocks[b]]
        b = rng.choice(ok)
        blocks[b] = re.sub(r'^(msgstr "[^"\n]+)"$', lambda m: m.group(1) + " " + rng.choice(WORDS) + '"',
                           blocks[b], count=1, flags=re.M)
        return "\n\n".join(blocks)
    edit_text(os.path.join(src, "catalogs", locale, "Localizable.po"), change)
    return f"catalogs/{locale}/Localizable.plist"


def edit_strings(rng, src, locale):
    """One value of a .strings table gets a word appended (UTF-8 or UTF-16 kept)."""
    def change(text):
        pairs = list(re.finditer(r'^("[^"\n]+"\s*=\s*"[^"\n]+)";', text, re.M))
        m = rng.choice(pairs)
        return text[:m.end(1)] + " " + rng.choice(WORDS) + text[m.end(1):]
    edit_text(os.path.join(src, "catalogs", locale, "Localizable.strings"), change)
    return f"catalogs/{locale}/Localizable.plist"


def edit_app(rng, src):
    """The subtitle changed and a sonnet inserted into the featured carousel."""
    def change(text):
        text = re.sub(r"^(subtitle: .*)$", lambda m: m.group(1) + ", " + rng.choice(WORDS), text, count=1, flags=re.M)
        return re.sub(r"sonnets: \[(\d+), ", lambda m: f"sonnets: [{m.group(1)}, {rng.randint(2, 154)}, ", text, count=1)
    edit_text(os.path.join(src, "app", "home.yaml"), change)
    return "app/home.plist"


def edit_article(rng, src):
    """A tag inserted (front matter array) and a body line changed; title, date, image kept."""
    def change(text):
        text = re.sub(r"^tags: \[", "tags: [" + rng.choice(WORDS) + ", ", text, count=1, flags=re.M)
        return text.replace("all on your device,", "all on your device, " + rng.choice(WORDS) + " and all,", 1)
    edit_text(os.path.join(src, "articles", "welcome.md"), change)
    return "articles/welcome.plist"


def apply_edits(rng, src):
    """Edits distinct entries so that EDITS manifest entries change; returns the planned paths."""
    planned = [edit_app(rng, src), edit_article(rng, src)]
    planned += [edit_po(rng, src, loc) for loc in ("ar", "pl", "ru")]
    planned += [edit_strings(rng, src, loc) for loc in ("cy", "de", "en", "fr")]
    sonnets = EDITS - len(planned) - 1  # and sonnets/all.plist
    if sonnets < 1:
        raise BenchFailure(f"DIFF_EDITS={EDITS}: need at least {len(planned) + 2}")
    available = sorted(int(f[:3]) for f in os.listdir(os.path.join(src, "sonnets")) if re.fullmatch(r"\d{3}\.txt", f))
    planned += [edit_sonnet(rng, src, n) for n in sorted(rng.sample(available, sonnets))]
    return set(planned) | {"sonnets/all.plist"}


# Publishing and reading what was published.

def publish(src, out):
    run([os.path.join(RELEASE, "folio-build"), "-q", "--content", src, "--output", out])
    return plistlib.load(open(os.path.join(out, "manifest.plist"), "rb"))["version"]


def entries(manifest):
    return {e["path"]: e for e in plistlib.load(open(manifest, "rb"))["entries"]}


def changed_paths(old, new):
    """Logical paths added, removed or changed (by sha256) between two manifests."""
    a, b = entries(old), entries(new)
    return {p for p in a.keys() | b.keys() if p not in a or p not in b or a[p]["sha256"] != b[p]["sha256"]}


def jsonable(value):
    """A decoded plist value as JSON: dates as ISO 8601 text, data as base64."""
    if isinstance(value, dict):
        return {k: jsonable(v) for k, v in value.items()}
    if isinstance(value, list):
        return [jsonable(v) for v in value]
    if isinstance(value, datetime.datetime):
        return value.isoformat()
    if isinstance(value, (bytes, bytearray)):
        return base64.b64encode(value).decode()
    return value


def export_json(out, manifest, paths, dest):
    """Writes {path: decoded value} of the given entries of one manifest; returns its size in bytes."""
    es = entries(manifest)
    doc = {}
    for p in sorted(paths):
        if p in es:
            with open(os.path.join(out, "objects", es[p]["sha256"] + ".plist"), "rb") as f:
                doc[p] = jsonable(plistlib.load(f))
    with open(dest, "w", encoding="utf-8") as f:
        json.dump(doc, f, ensure_ascii=False, indent=1)
    return os.path.getsize(dest)


def folio_counts(report):
    """(added, removed, changed) from `folio diff --format json`, or None if it has no such lists."""
    try:
        doc = json.loads(report)
        return tuple(len(doc[k]) for k in ("added", "removed", "changed"))
    except (ValueError, KeyError, TypeError):
        return None


# Timing.

def time_folio(old, new, reps):
    """Times `folio diff OLD NEW --format text` (exit 1: different) reps times; ([(wall, CPU)], last output)."""
    argv = CPU + [os.path.join(RELEASE, "folio"), "diff", old, new, "--format", "text"]
    times, out = [], ""
    for _ in range(reps):
        t, out = run(argv, ok=(1,))
        times.append(t)
    if not out.strip():
        raise BenchFailure("folio diff printed nothing")
    return times, out


# graphtage's cheapest settings that still give a correct diff, and the closest to folio diff's:
# dictionary entries matched by key only (-k), lists of equal length matched item by item (-ll).
# With its defaults, graphtage weighs every list insertion and removal and every key rename:
# sonnets/all.plist alone (154 sonnets) then takes minutes (DIFF_GRAPHTAGE_DEFAULTS=1 times it).
G_SETTINGS = [] if os.environ.get("DIFF_GRAPHTAGE_DEFAULTS") == "1" else ["--no-key-edits", "--no-list-edits-when-same-length"]


def graphtage_argv(mode, old_json, new_json):
    return CPU + ["graphtage", "--no-color", "--no-status", "--quiet", *G_SETTINGS, *mode, old_json, new_json]


def time_graphtage(old_json, new_json, reps):
    """Times graphtage --edit-digest; ([(wall, CPU)], last output, timed out?). Exit 0 or 1 with output."""
    times, out = [], ""
    for _ in range(reps):
        try:
            t, out = run(graphtage_argv(["--edit-digest"], old_json, new_json), ok=(0, 1), timeout=G_TIMEOUT)
        except subprocess.TimeoutExpired:
            return [(G_TIMEOUT, G_TIMEOUT)], "", True
        if not out.strip():
            raise BenchFailure("graphtage printed nothing")
        times.append(t)
    return times, out, False


def lines(text):
    return len(text.splitlines())


def ms(runs, which=0):
    """Median of the runs' wall (which=0) or CPU (which=1) times, in milliseconds."""
    return statistics.median(r[which] for r in runs) * 1000


def best(runs):
    return min(r[0] for r in runs) * 1000


def prepare(work):
    """Publishes content/ and its edited copy; returns (public dir, old manifest, new manifest, changed paths)."""
    src, out = os.path.join(work, "content"), os.path.join(work, "public")
    shutil.copytree(CONTENT, src)
    v1 = publish(src, out)
    planned = apply_edits(random.Random(SEED), src)
    v2 = publish(src, out)
    old, new = (os.path.join(out, "manifests", f"{v}.plist") for v in (v1, v2))
    changed = changed_paths(old, new)
    if changed != planned or len(changed) != EDITS:
        raise BenchFailure(f"{len(changed)} entries changed, {EDITS} planned; unplanned: "
                           f"{sorted(changed - planned)}, unchanged: {sorted(planned - changed)}")
    _, report = run([os.path.join(RELEASE, "folio"), "diff", old, new, "--format", "json"], ok=(1,))
    counts = folio_counts(report)
    if counts is not None and counts != (0, 0, EDITS):
        raise BenchFailure(f"folio diff --format json reports (added, removed, changed) = {counts}, not (0, 0, {EDITS})")
    return out, old, new, changed, counts is not None


def measure(old, new, old_json, new_json):
    """folio's runs split before and after graphtage's; returns (folio runs, folio output, graphtage
    runs, graphtage output, timed out?, graphtage's whole-document diff or None)."""
    time_folio(old, new, 2)  # warm-up: page cache, binary
    f1, folio_out = time_folio(old, new, REPS // 2)
    g, graph_out, timed_out = time_graphtage(old_json, new_json, G_REPS)
    f2, _ = time_folio(old, new, REPS - REPS // 2)
    full = None if timed_out else run(graphtage_argv([], old_json, new_json), ok=(0, 1), timeout=G_TIMEOUT)[1]
    return f1 + f2, folio_out, g, graph_out, timed_out, full


def report(folio_t, folio_out, g, graph_out, timed_out, full):
    label = "graphtage " + ("" if not G_SETTINGS else "-k -ll ") + "--edit-digest"
    bound = ">= " if timed_out else ""
    print(f"  {'':34} {'median ms':>10} {'best ms':>9} {'CPU ms':>8} {'runs':>5} {'lines':>7}")
    print(f"  {'folio diff --format text':34} {ms(folio_t):10.1f} {best(folio_t):9.1f} {ms(folio_t, 1):8.1f} "
          f"{len(folio_t):5} {lines(folio_out):7}")
    print(f"  {label:34} {bound + format(ms(g), '.0f'):>10} {best(g):9.0f} {ms(g, 1):8.0f} {len(g):5} "
          f"{'-' if timed_out else lines(graph_out):>7}")
    if full is not None:
        print(f"  {'graphtage (whole document, untimed)':34} {'':>10} {'':>9} {'':>8} {'':>5} {lines(full):7}")
    print(f"ratio graphtage / folio: {bound}{ms(g) / ms(folio_t):.0f}x median wall time, {bound}"
          f"{ms(g, 1) / ms(folio_t, 1):.0f}x CPU time (target >= 100x), one core each (taskset -c 0)")
    if not timed_out:
        print(f"lines: folio {lines(folio_out)}, {label} {lines(graph_out)} "
              f"({lines(folio_out) / lines(graph_out):.2f}x; target <= 1.0x), whole-document diff {lines(full)}")


def main():
    for tool in (os.path.join(RELEASE, "folio"), os.path.join(RELEASE, "folio-build"), "graphtage"):
        if not shutil.which(tool):
            print(f"diff-bench: {tool} not found (graphtage: pip install graphtage, or make bench-deps)", file=sys.stderr)
            return 1
    work = tempfile.mkdtemp(prefix="folio-diff-bench.")
    try:
        out, old, new, changed, checked = prepare(work)
        kinds = sorted({p.split("/")[0] for p in changed})
        print(f"{len(changed)} changed entries ({', '.join(kinds)}); "
              f"folio diff --format json {'agrees' if checked else 'has no added/removed/changed lists: not checked'}")
        old_json, new_json = os.path.join(work, "old.json"), os.path.join(work, "new.json")
        sizes = export_json(out, old, changed, old_json), export_json(out, new, changed, new_json)
        print(f"exported for graphtage: {sizes[0]:,} / {sizes[1]:,} bytes of JSON (old / new)")
        report(*measure(old, new, old_json, new_json))
        return 0
    except (BenchFailure, subprocess.TimeoutExpired) as e:
        print(f"diff-bench: {e}", file=sys.stderr)
        return 1
    finally:
        if os.environ.get("DIFF_BENCH_KEEP") == "1":
            print(f"kept {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
