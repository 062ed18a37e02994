#!/usr/bin/env python3
"""Content benchmark for `make bench`: folio-build on 10,000 Markdown posts and 10,000 JSON files,
against Hugo building the same Markdown as a site.

Usage: content-bench.py RELEASE_DIR [--reference-only]
  RELEASE_DIR       the folder holding folio-build (`.build/release`)
  --reference-only  generate and time Hugo only (calibration; no folio-build needed)
Environment: CONTENT_BENCH_RUNS (timed runs per program and row, default 3),
             CONTENT_BENCH_KEEP=1 keeps the temp dir and prints its path,
             CONTENT_BENCH_DIR where the temp dir goes (default /dev/shm; see work_parent).

Generates (fixed seed, in a temp dir) posts/post-NNNNN.md: YAML front matter (title, date, tags,
draft: false, summary) and ~2 KB of Markdown (paragraphs, headings, lists, links, emphasis, a
fenced code block); data/item-NNNNN.json: ~1 KB objects with nested arrays. Hugo (Debian's
`hugo`) gets the same posts in content/posts/ with a minimal hugo.toml (no theme; taxonomy, term,
RSS, sitemap, robotsTXT and 404 disabled; no code highlighting, which folio-build does not do) and layouts/_default/{single,list}.html; the bench
checks that it wrote 10,000 post pages before timing it.

Rows (timings: time.perf_counter around the child, runs alternating with the reference, median
and best; peak RSS of the child from wait4's rusage):
  1. fresh folio-build --no-brotli of posts/ (Markdown kept as Markdown) vs fresh hugo, both
     `taskset -c 0`: ratio hugo / folio, target >= 3x (Hugo compresses nothing; folio-build still
     writes gzip variants); 1b. the same with brotli, folio-build's default: target >= 3x
  2. fresh folio-build --no-brotli with HTML rendering (folio.toml: [[rules]] match = "posts/**", html = true)
     vs fresh hugo: target >= 1.0x ("not available" when the builder refuses folio.toml or its
     output does not change)
  3. no-op rebuild of posts/ + data/ (20,000 files): target < 300 ms
  4. rebuild after editing one post: target < 300 ms (issue 39; was 500)
  5. peak RSS of the fresh build (row 1) vs Hugo's: target <= 0.5x
folio-build runs as `folio-build -q --content DIR --output OUT` with SOURCE_DATE_EPOCH=1700000000;
"fresh" means an empty output directory (and anything the builder left in the content dir removed).
Before timing, the bench checks OUT/manifest.json lists 10,000 entries under posts/ (and 10,000
under data/ for rows 3-4). Exit 0 whatever the figures; 1 when a program fails or publishes the
wrong thing (with its stderr)."""
import collections, json, os, random, shutil, statistics, subprocess, sys, tempfile, time

POSTS = 10_000
DATA = 10_000
SEED = 20261125
RUNS = int(os.environ.get("CONTENT_BENCH_RUNS", "3"))
EPOCH_ENV = {"SOURCE_DATE_EPOCH": "1700000000"}
FOLIO_TOML = '[[rules]]\nmatch = "posts/**"\nhtml = true\n'
# Hugo highlights fenced code (Chroma) by default; folio-build's HTML (cmark-gfm) does not, so the
# reference is set to do the same work: no highlighting.
HUGO_TOML = ('baseURL = "https://example.org/"\n'
             'disableKinds = ["taxonomy", "term", "RSS", "sitemap", "robotsTXT", "404"]\n'
             '[markup.highlight]\ncodeFences = false\n')
SINGLE_HTML = "{{ .Title }}{{ .Content }}\n"
LIST_HTML = "{{ .Title }}{{ range .Pages }}<a href=\"{{ .RelPermalink }}\">{{ .Title }}</a>{{ end }}\n"

WORDS = ("folio sonnet verse reader library shelf page chapter volume edition author title index margin "
         "note quote stanza rhyme meter poem copy draft print cover spine binding summer winter rose "
         "beauty time love eye heart night day truth praise glass river stone light shadow garden "
         "letter archive catalog bundle manifest build publish edge cache delta sync plist entry").split()
TAGS = "swift hugo markdown plist poetry build cache edge delta sync notes essays release docs".split()
LANGS = ("python", "swift", "go", "json", "sh")


class BenchFailure(Exception):
    pass


def sentence(rng, lo=6, hi=16):
    ws = [rng.choice(WORDS) for _ in range(rng.randint(lo, hi))]
    for _ in range(rng.randint(0, 2)):
        i = rng.randrange(len(ws))
        ws[i] = rng.choice(("*{}*", "**{}**", "`{}`", "[{}](https://example.org/{})")).format(ws[i], ws[i])
    return " ".join(ws).capitalize() + "."


def paragraph(rng):
    return " ".join(sentence(rng) for _ in range(rng.randint(3, 5)))


def post(rng, i):
    title = " ".join(rng.choice(WORDS) for _ in range(rng.randint(3, 7))).title()
    day = 1_577_836_800 + rng.randrange(3 * 365 * 86400)  # 2020..2022: in the past, so Hugo publishes
    date = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(day))
    tags = ", ".join(rng.sample(TAGS, rng.randint(1, 4)))
    summary = sentence(rng, 8, 14).replace('"', "")
    out = [f'---\ntitle: "{title} {i}"\ndate: {date}\ntags: [{tags}]\ndraft: false\nsummary: "{summary}"\n---\n',
           paragraph(rng), ""]
    code_at = rng.randint(1, 2)
    for section in range(3):
        out += [f"## {' '.join(rng.choice(WORDS) for _ in range(rng.randint(2, 5))).capitalize()}", "", paragraph(rng), ""]
        if section == 1:
            out += [f"- {sentence(rng, 3, 8)}" for _ in range(rng.randint(3, 5))] + [""]
            out += [f"{n}. {sentence(rng, 3, 8)}" for n in range(1, rng.randint(3, 5))] + [""]
        if section == code_at:
            lang = rng.choice(LANGS)
            lines = [f"let {rng.choice(WORDS)}{n} = \"{rng.choice(WORDS)}\" // {rng.choice(WORDS)}" for n in range(rng.randint(4, 8))]
            out += [f"```{lang}", *lines, "```", ""]
        out += ["> " + sentence(rng), ""] if section == 2 else []
    return "\n".join(out)


def data_item(rng, i):
    return {
        "id": i,
        "name": " ".join(rng.choice(WORDS) for _ in range(3)),
        "active": rng.random() < 0.8,
        "price": round(rng.uniform(1, 500), 2),
        "rating": rng.randint(1, 5),
        "tags": rng.sample(TAGS, 4),
        "dimensions": [[rng.randint(1, 100) for _ in range(3)] for _ in range(2)],
        "variants": [{"sku": f"SKU-{i:05d}-{v}", "stock": rng.randint(0, 999),
                      "weights": [round(rng.uniform(0, 10), 3) for _ in range(4)],
                      "colors": rng.sample(["red", "green", "blue", "black", "white", "amber"], 2)}
                     for v in range(rng.randint(4, 6))],
        "history": [{"day": rng.randint(1, 28), "sold": rng.randint(0, 50)} for _ in range(5)],
        "description": sentence(rng, 10, 18),
    }


def generate(root):
    rng = random.Random(SEED)
    posts_dir = os.path.join(root, "src", "posts")
    data_dir = os.path.join(root, "src", "data")
    os.makedirs(posts_dir)
    os.makedirs(data_dir)
    md_bytes = js_bytes = 0
    for i in range(1, POSTS + 1):
        text = post(rng, i)
        md_bytes += len(text.encode())
        with open(os.path.join(posts_dir, f"post-{i:05d}.md"), "w", encoding="utf-8") as f:
            f.write(text)
    for i in range(1, DATA + 1):
        text = json.dumps(data_item(rng, i), indent=1)
        js_bytes += len(text.encode())
        with open(os.path.join(data_dir, f"item-{i:05d}.json"), "w", encoding="utf-8") as f:
            f.write(text)

    def linked(name, parts):  # content dirs sharing the generated files (hard links: no copy)
        d = os.path.join(root, name)
        for part in parts:
            shutil.copytree(os.path.join(root, "src", part), os.path.join(d, part), copy_function=os.link)
        return d

    dirs = {"md": linked("content-md", ["posts"]),
            "html": linked("content-html", ["posts"]),
            "all": linked("content-all", ["posts", "data"])}
    with open(os.path.join(dirs["html"], "folio.toml"), "w") as f:
        f.write(FOLIO_TOML)
    site = os.path.join(root, "hugo-site")
    os.makedirs(os.path.join(site, "layouts", "_default"))
    shutil.copytree(posts_dir, os.path.join(site, "content", "posts"), copy_function=os.link)
    for name, text in (("hugo.toml", HUGO_TOML), ("layouts/_default/single.html", SINGLE_HTML),
                       ("layouts/_default/list.html", LIST_HTML)):
        with open(os.path.join(site, name), "w") as f:
            f.write(text)
    dirs["hugo"] = site
    return dirs, md_bytes, js_bytes


# ---------------------------------------------------------------- running


Run = collections.namedtuple("Run", "seconds cpu rss")  # wall s, user + system s, peak RSS KiB


def run(cmd, env=None, cwd=None):
    """Runs cmd; returns (Run, exit code, stderr text)."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        full_env = dict(os.environ, **(env or {}))
        t0 = time.perf_counter()
        p = subprocess.Popen(cmd, stdout=out, stderr=err, stdin=subprocess.DEVNULL, env=full_env, cwd=cwd)
        _, status, usage = os.wait4(p.pid, 0)
        seconds = time.perf_counter() - t0
        p.returncode = os.waitstatus_to_exitcode(status)
        err.seek(0)
        return Run(seconds, usage.ru_utime + usage.ru_stime, usage.ru_maxrss), p.returncode, \
            err.read().decode(errors="replace")


def checked(name, cmd, env=None):
    result, code, stderr = run(cmd, env)
    if code != 0:
        raise BenchFailure(f"{name} exited {code}: {' '.join(cmd)}\n{stderr.strip()}")
    return result


def pin(cmd):
    return (["taskset", "-c", "0"] + cmd) if shutil.which("taskset") else cmd


class Folio:
    def __init__(self, build, content, out, extra=()):
        self.build, self.content, self.out, self.extra = build, content, out, list(extra)
        self.pristine = set(os.listdir(content))

    def cmd(self):
        return [self.build, "-q", "--content", self.content, "--output", self.out] + self.extra

    def clean(self):
        shutil.rmtree(self.out, ignore_errors=True)
        for name in set(os.listdir(self.content)) - self.pristine:  # a cache the builder may keep
            path = os.path.join(self.content, name)
            shutil.rmtree(path) if os.path.isdir(path) and not os.path.islink(path) else os.remove(path)

    def fresh(self, pinned=True):
        self.clean()
        return checked("folio-build", pin(self.cmd()) if pinned else self.cmd(), EPOCH_ENV)

    def again(self):
        return checked("folio-build", self.cmd(), EPOCH_ENV)

    def entries(self):
        path = os.path.join(self.out, "manifest.json")
        try:
            with open(path, encoding="utf-8") as f:
                return json.load(f)["entries"]
        except (OSError, ValueError, KeyError, TypeError) as e:
            raise BenchFailure(f"folio-build: cannot read {path}: {e}")

    def expect(self, folders):
        paths = [e.get("path", "") for e in self.entries()]
        for folder, n in folders.items():
            got = sum(1 for p in paths if p.lstrip("/").startswith(folder + "/"))
            if got != n:
                raise BenchFailure(f"folio-build published {got} entries under {folder}/, expected {n} "
                                   f"(content {self.content}; first paths: {paths[:5]})")

    def posts_fingerprint(self):
        return json.dumps(sorted((json.dumps(e, sort_keys=True) for e in self.entries()
                                  if str(e.get("path", "")).lstrip("/").startswith("posts/"))))


class Hugo:
    def __init__(self, site, out):
        self.site, self.out = site, out

    def fresh(self):
        shutil.rmtree(self.out, ignore_errors=True)
        shutil.rmtree(os.path.join(self.site, "resources"), ignore_errors=True)
        return checked("hugo", pin(["hugo", "--quiet", "--source", self.site, "--destination", self.out]))

    def check(self):
        posts = os.path.join(self.out, "posts")
        pages = sum(1 for d in os.listdir(posts) if os.path.isfile(os.path.join(posts, d, "index.html"))) \
            if os.path.isdir(posts) else 0
        if pages != POSTS:
            raise BenchFailure(f"hugo wrote {pages} post pages under {posts}, expected {POSTS}")
        sample = open(os.path.join(posts, "post-00001", "index.html"), encoding="utf-8").read()
        if "<h2" not in sample or "<pre" not in sample:
            raise BenchFailure(f"hugo's post-00001 page has no rendered Markdown:\n{sample[:400]}")


def alternate(a, b, runs):
    """Runs a() and b() `runs` times each, alternating which goes first; two lists of Run."""
    ra, rb = [], []
    for i in range(runs):
        if i % 2 == 0:
            ra.append(a()); rb.append(b())
        else:
            rb.append(b()); ra.append(a())
    return ra, rb


def secs(runs):
    return [r.seconds for r in runs]


def cpus(runs):
    return [r.cpu for r in runs]


def ms(xs):
    return statistics.median(xs) * 1000, min(xs) * 1000


def fmt_time(xs):
    med, best = ms(xs)
    return f"{med:,.0f} ms (best {best:,.0f})" if med >= 100 else f"{med:.1f} ms (best {best:.1f})"


def fresh_row(folio, hugo, label, target, note, rows, notes):
    """Times fresh builds of folio and hugo alternating, checks both outputs, adds the row and its
    CPU-time note; returns both lists of runs."""
    f, h = alternate(folio.fresh, hugo.fresh, RUNS)
    folio.expect({"posts": POSTS})
    hugo.check()
    ratio = statistics.median(secs(h)) / statistics.median(secs(f))
    verdict = None if target is None else ratio >= target  # no target: a figure only
    rows.append((label, fmt_time(secs(f)), "hugo " + fmt_time(secs(h)), f"{ratio:.2f}x", "" if target is None else f">= {target}x", verdict))
    notes.append(f"{note}: folio {fmt_time(cpus(f))}, hugo {fmt_time(cpus(h))}, "
                 f"{statistics.median(cpus(h)) / statistics.median(cpus(f)):.2f}x")
    return f, h


def ensure_hugo():
    if shutil.which("hugo"):
        return
    print("content-bench: installing hugo (apt-get)", flush=True)
    sudo = [] if os.geteuid() == 0 else ["sudo"]
    subprocess.run(sudo + ["apt-get", "update", "-qq"], check=False)
    subprocess.run(sudo + ["apt-get", "install", "-y", "-qq", "hugo"], check=False,
                   env=dict(os.environ, DEBIAN_FRONTEND="noninteractive"), stdout=subprocess.DEVNULL)
    if not shutil.which("hugo"):
        raise BenchFailure("hugo is not installed and apt-get could not install it")


def work_parent():
    """Where the generated trees and both programs' outputs go: CONTENT_BENCH_DIR, else /dev/shm.

    A file system in memory, for both programs alike: on this VM's disk (ext4 without a journal)
    every new inode is allocated past the inodes deleted in the last 12 hours (the kernel's
    recently_deleted check), so creating 20,000 files right after deleting as many costs seconds
    of kernel time that grow with whatever ran before, and swamps what the programs themselves
    do (perf: 60% of folio-build's samples in ext4's find_inode_bit/recently_deleted)."""
    explicit = os.environ.get("CONTENT_BENCH_DIR")
    if explicit:
        return explicit
    return "/dev/shm" if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK) else None


def main(argv):
    args = [a for a in argv if not a.startswith("--")]
    flags = {a for a in argv if a.startswith("--")}
    if len(args) != 1 or flags - {"--reference-only"}:
        print(__doc__, file=sys.stderr)
        return 2
    reference_only = "--reference-only" in flags
    build = os.path.join(args[0], "folio-build")
    if not reference_only and not os.access(build, os.X_OK):
        print(f"content-bench: {build} not found; run `make build`", file=sys.stderr)
        return 1
    build = os.path.abspath(build)
    ensure_hugo()
    hugo_version = subprocess.run(["hugo", "version"], capture_output=True, text=True).stdout.strip()

    root = tempfile.mkdtemp(prefix="content-bench-", dir=work_parent())
    try:
        print(f"== content: folio-build vs Hugo, {POSTS:,} Markdown posts + {DATA:,} JSON files ==", flush=True)
        t0 = time.perf_counter()
        dirs, md_bytes, js_bytes = generate(root)
        print(f"generated {POSTS:,} posts ({md_bytes / POSTS / 1024:.1f} KiB avg) and {DATA:,} JSON files "
              f"({js_bytes / DATA / 1024:.1f} KiB avg) in {time.perf_counter() - t0:.1f} s; {RUNS} timed runs each; "
              f"{hugo_version.split(' BuildDate')[0]}", flush=True)

        hugo = Hugo(dirs["hugo"], os.path.join(root, "hugo-public"))
        hugo.fresh()  # warm-up, and the check that it builds what we think
        hugo.check()
        if reference_only:
            h = [hugo.fresh() for _ in range(RUNS)]
            hugo.check()
            print(f"hugo fresh build (taskset -c 0): {fmt_time(secs(h))}, CPU {fmt_time(cpus(h))}, "
                  f"peak RSS {max(r.rss for r in h) / 1024:,.0f} MiB")
            return 0

        rows, notes = [], []
        # Rows 1-2 without brotli: Hugo compresses nothing (folio-build still writes gzip).
        md = Folio(build, dirs["md"], os.path.join(root, "out-md"), ["--no-brotli"])
        md.fresh()
        md.expect({"posts": POSTS})
        f1, h1 = fresh_row(md, hugo, "fresh build, Markdown kept (1 core)", 3, "row 1 in CPU time (user + system)", rows, notes)
        brotli = Folio(build, dirs["md"], os.path.join(root, "out-br"))
        brotli.fresh()
        brotli.expect({"posts": POSTS})
        fresh_row(brotli, hugo, "the same with brotli, the default (1 core)", 3, "row 1b in CPU time", rows, notes)

        html = Folio(build, dirs["html"], os.path.join(root, "out-html"), ["--no-brotli"])
        _, code, stderr = run(pin(html.cmd()), EPOCH_ENV)
        reason = None
        if code != 0:
            last = stderr.strip().splitlines()[-1][:100] if stderr.strip() else ""
            reason = f"folio-build exited {code} with folio.toml: {last}"
        else:
            html.expect({"posts": POSTS})
            if html.posts_fingerprint() == md.posts_fingerprint():
                reason = "folio.toml's html = true changed no posts/ entry in the manifest"
        if reason:
            rows.append(("fresh build, HTML rendered (1 core)", "not available", "", "", ">= 1.0x", None))
            notes.append(f"row 2 not available: {reason}")
        else:
            fresh_row(html, hugo, "fresh build, HTML rendered (1 core)", 1.0, "row 2 in CPU time", rows, notes)

        both = Folio(build, dirs["all"], os.path.join(root, "out-all"))
        both.fresh(pinned=False)
        both.expect({"posts": POSTS, "data": DATA})
        both.again()
        noop = [both.again() for _ in range(max(RUNS, 5))]
        both.expect({"posts": POSTS, "data": DATA})
        nmed = statistics.median(secs(noop)) * 1000
        rows.append((f"no-op rebuild, {POSTS + DATA:,} files (2 cores)", fmt_time(secs(noop)), "", "", "< 300 ms", nmed < 300))

        target = os.path.join(dirs["all"], "posts", f"post-{POSTS // 2:05d}.md")
        with open(target, encoding="utf-8") as f:
            original = f.read()
        edited_path = f"posts/post-{POSTS // 2:05d}.plist"
        before = [e for e in both.entries() if str(e.get("path", "")).lstrip("/") == edited_path]
        edits = []
        for i in range(max(RUNS, 5)):
            tmp = target + ".tmp"  # a new inode: the hard-linked copies elsewhere stay as generated
            with open(tmp, "w", encoding="utf-8") as f:
                f.write(original + f"\nEdited paragraph {i}: {' '.join(WORDS[i:i + 8])}.\n")
            os.replace(tmp, target)
            edits.append(both.again())
        both.expect({"posts": POSTS, "data": DATA})
        after = [e for e in both.entries() if str(e.get("path", "")).lstrip("/") == edited_path]
        if not before or before == after:
            raise BenchFailure(f"folio-build did not republish {edited_path} after its source was edited "
                               f"(manifest entry before {before}, after {after})")
        emed = statistics.median(secs(edits)) * 1000
        rows.append(("rebuild after editing one post (2 cores)", fmt_time(secs(edits)), "", "", "< 300 ms", emed < 300))
        notes.append(f"rows 3-4 in CPU time: no-op {fmt_time(cpus(noop))}, one edit {fmt_time(cpus(edits))}")

        frss, hrss = max(r.rss for r in f1), max(r.rss for r in h1)
        mratio = frss / hrss
        rows.append(("peak RSS, fresh build (row 1)", f"{frss / 1024:,.0f} MiB", f"hugo {hrss / 1024:,.0f} MiB",
                     f"{mratio:.2f}x", "<= 0.5x", mratio <= 0.5))

        head = ("measure", "folio", "reference", "ratio", "target")
        widths = [max(len(str(r[i])) for r in rows + [head]) for i in range(5)]
        print("  ".join(h.ljust(w) for h, w in zip(head, widths)) + "  result")
        for r in rows:
            verdict = "n/a" if r[5] is None else ("pass" if r[5] else "FAIL")
            print("  ".join(str(c).ljust(w) for c, w in zip(r[:5], widths)) + "  " + verdict)
        print("ratios: hugo / folio for times, folio / hugo for memory; medians of runs alternating with hugo")
        for note in notes:
            print("  " + note)
        return 0
    except BenchFailure as e:
        print(f"content-bench: FAILED: {e}", file=sys.stderr)
        return 1
    finally:
        if os.environ.get("CONTENT_BENCH_KEEP") == "1":
            print(f"content-bench: kept {root}")
        else:
            shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
