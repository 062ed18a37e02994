#!/usr/bin/env python3
"""Compare what folio-build published for a content directory with Python's own reading of it.

Usage:
  compare_content.py CONTENT_DIR PUBLISHED.json
  compare_content.py --selftest [CONTENT_DIR]      (CONTENT_DIR defaults to RealContent/ beside this file)
  compare_content.py --expected CONTENT_DIR        (print the expected PUBLISHED.json that Python derives)

PUBLISHED.json is one JSON object {logical path: value}, each value in FolioPlist's JSON form (what
`folio show PATH --json` prints): dates as ISO 8601 UTC strings ("2024-01-02T03:04:05Z"), data as
base64 strings, reals always written with a fraction or an exponent, so that 1 and 1.0 differ.

Which source files are compared (the builder's rules):
  x.json, x.yaml, x.yml, x.toml, x.plist   -> logical path x.plist in the same folder
  x.md / x.markdown whose first line (after a UTF-8 BOM; CR ignored) is exactly a fence (`---`
  YAML, `+++` TOML), closed by a line that is exactly the same fence (`...` also closes YAML)
  -> x.plist: the front matter's keys plus `body` (everything after the closing fence line, as
  written); a top-level `html` string in the published entry (the builder's rendering where
  folio.toml says html = true) is not compared; front matter keys `body`/`html` are reserved
Hidden files and folders (name starting with "."), folio.toml and .folioignore at the top, files
matched by the top .folioignore (gitignore syntax) and every other file (assets) are skipped.
A Markdown file without front matter is compared as {"body": whole text} only when PUBLISHED.json
has an entry for it; otherwise it is taken for an asset.

Sources are read with json, tomllib, PyYAML and plistlib. YAML is read with the YAML 1.2 core
schema's booleans and numbers, as the builder, GitHub Actions and docker compose read it (PyYAML's
own resolvers are YAML 1.1's: `on:` would be the key True and `80:80` the number 4880); YAML's
timestamps and merge keys stay as PyYAML reads them. Datetimes become UTC (naive ones are taken as
UTC), dates midnight UTC, bytes base64. A null is expected as JSON's null (the builder publishes it
as "$null", which `folio show --json` prints as null; folio.toml's `nulls` rules are not read here).
A source value a plist cannot hold (a non-string key, an integer outside 64 bits, a time of day, a
NaN or infinity, a duplicate JSON key) is reported as a mismatch of that entry.

Prints one line per mismatch (entry, JSON pointer, expected and published values), then
`compared N entries, M mismatches`. Exit 0 when M == 0, 1 otherwise, 2 on usage errors.
"""
import base64
import datetime as dt
import json
import math
import os
import plistlib
import re
import sys
import tempfile
import tomllib

try:
    import yaml
except ImportError:  # pragma: no cover
    yaml = None

STRUCTURED = {".json", ".yaml", ".yml", ".toml", ".plist"}
MARKDOWN = {".md", ".markdown"}
INT_MIN, INT_MAX = -(2 ** 63), 2 ** 64 - 1
UTC = dt.timezone.utc


class Unrepresentable(Exception):
    def __init__(self, pointer, message):
        super().__init__(message)
        self.pointer, self.message = pointer, message


class Date:
    """A plist date (UTC, aware)."""
    __slots__ = ("value",)

    def __init__(self, value):
        self.value = value

    def folio(self):
        v = self.value
        text = v.strftime("%Y-%m-%dT%H:%M:%S")
        if v.microsecond:
            text += (".%06d" % v.microsecond).rstrip("0")
        return text + "Z"


class Data:
    __slots__ = ("value",)

    def __init__(self, value):
        self.value = bytes(value)

    def folio(self):
        return base64.b64encode(self.value).decode("ascii")


def pointer_escape(key):
    return key.replace("~", "~0").replace("/", "~1")


def canonical(value, pointer=""):
    """Python value from a reader -> canonical tree (dict/list/str/int/float/bool/None/Date/Data)."""
    if value is None:
        return None
    if isinstance(value, bool):
        return value
    if isinstance(value, int):
        if not INT_MIN <= value <= INT_MAX:
            raise Unrepresentable(pointer, f"integer {value} does not fit in 64 bits")
        return value
    if isinstance(value, float):
        if math.isnan(value) or math.isinf(value):
            raise Unrepresentable(pointer, f"real {value!r} has no JSON form")
        return value
    if isinstance(value, str):
        return value
    if isinstance(value, (bytes, bytearray)):
        return Data(value)
    if isinstance(value, dt.datetime):
        if value.tzinfo is None or value.tzinfo.utcoffset(value) is None:
            value = value.replace(tzinfo=UTC)
        return Date(value.astimezone(UTC))
    if isinstance(value, dt.date):
        return Date(dt.datetime(value.year, value.month, value.day, tzinfo=UTC))
    if isinstance(value, dt.time):
        raise Unrepresentable(pointer, f"time of day {value.isoformat()} (a plist has no such type)")
    if isinstance(value, dict):
        out = {}
        for k, v in value.items():
            if not isinstance(k, str):
                raise Unrepresentable(pointer, f"non-string key {k!r}")
            out[k] = canonical(v, pointer + "/" + pointer_escape(k))
        return out
    if isinstance(value, (list, tuple)):
        return [canonical(v, f"{pointer}/{i}") for i, v in enumerate(value)]
    if isinstance(value, plistlib.UID):
        raise Unrepresentable(pointer, "plist UID")
    raise Unrepresentable(pointer, f"unsupported type {type(value).__name__}")


def to_folio(value):
    """Canonical tree -> plain JSON-able tree in FolioPlist's JSON form."""
    if isinstance(value, (Date, Data)):
        return value.folio()
    if isinstance(value, dict):
        return {k: to_folio(v) for k, v in value.items()}
    if isinstance(value, list):
        return [to_folio(v) for v in value]
    return value


def dump_folio(value):
    """JSON text in FolioPlist's form: keys sorted, reals always with a fraction or exponent."""
    return json.dumps(to_folio(value), sort_keys=True, ensure_ascii=False)  # float repr has "." or "e"


def show(value):
    text = dump_folio(value) if not isinstance(value, _Missing) else "(missing)"
    return text if len(text) <= 200 else text[:197] + "..."


class _Missing:
    pass


MISSING = _Missing()

# ---------------------------------------------------------------- readers


def _json_pairs(pairs):
    out = {}
    for k, v in pairs:
        if k in out:
            raise Unrepresentable("", f"duplicate JSON key {k!r}")
        out[k] = v
    return out


def _json_constant(name):
    raise Unrepresentable("", f"JSON constant {name} (not JSON)")


def read_json(data):
    return json.loads(data.decode("utf-8"), object_pairs_hook=_json_pairs, parse_constant=_json_constant)


def core12_loader():
    """A SafeLoader whose booleans, integers and floats are the YAML 1.2 core schema's."""
    class Core12Loader(yaml.SafeLoader):
        pass

    replaced = {"tag:yaml.org,2002:bool", "tag:yaml.org,2002:int", "tag:yaml.org,2002:float", "tag:yaml.org,2002:value"}
    Core12Loader.yaml_implicit_resolvers = {
        first: [(tag, rx) for tag, rx in resolvers if tag not in replaced]
        for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()}
    Core12Loader.add_implicit_resolver(
        "tag:yaml.org,2002:bool", re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"), list("tTfF"))
    Core12Loader.add_implicit_resolver(
        "tag:yaml.org,2002:int", re.compile(r"^(?:[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+)$"), list("-+0123456789"))
    Core12Loader.add_implicit_resolver(
        "tag:yaml.org,2002:float",
        re.compile(r"^(?:[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$"),
        list("-+.0123456789"))

    def integer(loader, node):
        text = loader.construct_scalar(node)
        if text.startswith(("0o", "0x")):
            return int(text[2:], 8 if text[1] == "o" else 16)
        return int(text, 10)

    Core12Loader.add_constructor("tag:yaml.org,2002:int", integer)
    return Core12Loader


_CORE12 = None


def read_yaml(text):
    global _CORE12
    if yaml is None:
        raise SystemExit("compare_content.py: PyYAML is needed (pip install pyyaml)")
    _CORE12 = _CORE12 or core12_loader()
    return yaml.load(text, Loader=_CORE12)


def split_front_matter(text):
    """(fence, front matter text, body) or None when the file has no front matter.

    The first line (after a UTF-8 BOM, without its CR) must be exactly `---` or `+++`; the matter
    ends at the next line that is exactly the same fence (`...` also closes YAML); the body is
    everything after that line's line break. A fence never closed is an error."""
    if text.startswith("\ufeff"):
        text = text[1:]
    lines = text.split("\n")
    if lines[0].removesuffix("\r") not in ("---", "+++"):
        return None
    fence = lines[0].removesuffix("\r")
    closers = ("---", "...") if fence == "---" else ("+++",)
    pos = len(lines[0]) + 1
    for line in lines[1:]:
        if line.removesuffix("\r") in closers and pos <= len(text):
            start = len(lines[0]) + 1
            return fence, text[start:pos], text[pos + len(line) + 1:]
        pos += len(line) + 1
    raise Unrepresentable("", f"the front matter opened with {fence} is never closed")


def read_markdown(text, rel):
    parts = split_front_matter(text)
    if parts is None:
        return None
    fence, matter, body = parts
    meta = tomllib.loads(matter) if fence == "+++" else read_yaml(matter)
    if meta is None:
        meta = {}
    if not isinstance(meta, dict):
        raise Unrepresentable("", f"front matter is a {type(meta).__name__}, not a mapping")
    for key in ("body", "html"):  # the builder's: body is the Markdown, html the rendering
        if key in meta:
            raise Unrepresentable("/" + key, f"the front matter key `{key}` is reserved")
    meta = dict(meta)
    meta["body"] = body
    return meta


def read_source(path, rel):
    """Raw Python value of a structured source, or None when it is not structured (asset)."""
    ext = os.path.splitext(rel)[1].lower()
    with open(path, "rb") as f:
        data = f.read()
    if ext == ".json":
        return read_json(data)
    if ext in (".yaml", ".yml"):
        return read_yaml(data.decode("utf-8"))
    if ext == ".toml":
        return tomllib.loads(data.decode("utf-8"))
    if ext == ".plist":
        return plistlib.loads(data)
    if ext in MARKDOWN:
        return read_markdown(data.decode("utf-8"), rel)
    return None


# ---------------------------------------------------------------- .folioignore (gitignore syntax)


def _glob_regex(pat):
    out, i = [], 0
    while i < len(pat):
        c = pat[i]
        if pat.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif pat.startswith("/**", i) and i + 3 == len(pat):
            out.append("/.*")
            i += 3
        elif pat.startswith("**", i):
            out.append(".*")
            i += 2
        elif c == "*":
            out.append("[^/]*")
            i += 1
        elif c == "?":
            out.append("[^/]")
            i += 1
        elif c == "[":
            j = pat.find("]", i + 2)
            if j < 0:
                out.append(re.escape(c))
                i += 1
            else:
                cls = pat[i + 1:j]
                if cls.startswith("!"):
                    cls = "^" + cls[1:]
                out.append("[" + cls.replace("\\", "\\\\") + "]")
                i = j + 1
        elif c == "\\" and i + 1 < len(pat):
            out.append(re.escape(pat[i + 1]))
            i += 2
        else:
            out.append(re.escape(c))
            i += 1
    return "".join(out)


class Ignore:
    def __init__(self, text):
        self.rules = []
        for raw in text.splitlines():
            line = raw.rstrip("\r")
            if not line or line.startswith("#"):
                continue
            while line.endswith(" ") and not line.endswith("\\ "):
                line = line[:-1]
            negate = line.startswith("!")
            if negate:
                line = line[1:]
            dir_only = line.endswith("/")
            line = line.rstrip("/")
            if not line:
                continue
            anchored = "/" in line
            line = line.lstrip("/")
            body = _glob_regex(line)
            regex = re.compile(("" if anchored else "(?:.*/)?") + body + r"\Z", re.S)
            self.rules.append((regex, negate, dir_only))

    def _decide(self, rel, is_dir):
        ignored = False
        for regex, negate, dir_only in self.rules:
            if dir_only and not is_dir:
                continue
            if regex.match(rel):
                ignored = not negate
        return ignored

    def ignored(self, rel):
        parts = rel.split("/")
        for n in range(1, len(parts)):
            if self._decide("/".join(parts[:n]), True):
                return True
        return self._decide(rel, False)


# ---------------------------------------------------------------- walking and comparing


def source_files(content):
    ignore_path = os.path.join(content, ".folioignore")
    ignore = Ignore(open(ignore_path, encoding="utf-8").read()) if os.path.isfile(ignore_path) else Ignore("")
    out = []
    for root, dirs, files in os.walk(content):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for name in sorted(files):
            if name.startswith("."):
                continue
            rel = os.path.relpath(os.path.join(root, name), content).replace(os.sep, "/")
            if rel == "folio.toml" or ignore.ignored(rel):
                continue
            ext = os.path.splitext(name)[1].lower()
            if ext in STRUCTURED or ext in MARKDOWN:
                out.append(rel)
    return out


def logical_path(rel):
    return os.path.splitext(rel)[0] + ".plist"


def expected_entries(content, published=None):
    """{logical path: (source rel, canonical value | Unrepresentable)}; plus a list of problems."""
    entries, problems = {}, []
    for rel in source_files(content):
        logical = logical_path(rel)
        try:
            raw = read_source(os.path.join(content, rel), rel)
            if raw is None:  # Markdown without front matter
                if published is None or logical not in published:
                    continue
                with open(os.path.join(content, rel), encoding="utf-8") as f:
                    raw = {"body": f.read()}
            value = canonical(raw)
        except Unrepresentable as e:
            value = e
        except Exception as e:  # a reader refused the file
            value = Unrepresentable("", f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}")
        if logical in entries:
            problems.append(f"{logical}: sources {entries[logical][0]} and {rel} both map here")
            continue
        entries[logical] = (rel, value)
    return entries, problems


def diff(expected, published, pointer, out):
    """Append (pointer, expected, published) for every difference."""
    if isinstance(expected, Date):
        if not isinstance(published, str):
            out.append((pointer, expected, published))
            return
        try:
            got = dt.datetime.fromisoformat(published.replace("Z", "+00:00"))
        except ValueError:
            out.append((pointer, expected, published))
            return
        if got.tzinfo is None or got.utcoffset() != dt.timedelta(0) or abs((got - expected.value).total_seconds()) > 0.0005:
            out.append((pointer, expected, published))
        return
    if isinstance(expected, Data):
        try:
            ok = isinstance(published, str) and base64.b64decode(published, validate=True) == expected.value
        except ValueError:
            ok = False
        if not ok:
            out.append((pointer, expected, published))
        return
    if isinstance(expected, dict):
        if not isinstance(published, dict):
            out.append((pointer, expected, published))
            return
        for k in sorted(set(expected) | set(published)):
            p = pointer + "/" + pointer_escape(k)
            if k not in published:
                out.append((p, expected[k], MISSING))
            elif k not in expected:
                out.append((p, MISSING, published[k]))
            else:
                diff(expected[k], published[k], p, out)
        return
    if isinstance(expected, list):
        if not isinstance(published, list):
            out.append((pointer, expected, published))
            return
        for i in range(max(len(expected), len(published))):
            p = f"{pointer}/{i}"
            if i >= len(published):
                out.append((p, expected[i], MISSING))
            elif i >= len(expected):
                out.append((p, MISSING, published[i]))
            else:
                diff(expected[i], published[i], p, out)
        return
    # Scalars: the type must match exactly (bool is not int, int is not float).
    if type(expected) is not type(published) or expected != published:
        out.append((pointer, expected, published))


def compare(content, published, stream=sys.stdout):
    """Returns (entries compared, mismatches); prints one line per mismatch."""
    published = {k.lstrip("/"): v for k, v in published.items()}
    entries, problems = expected_entries(content, published)
    mismatches = 0
    for line in problems:
        print(f"CONFLICT {line}", file=stream)
        mismatches += 1
    for logical in sorted(entries):
        rel, value = entries[logical]
        if isinstance(value, Unrepresentable):
            state = "published" if logical in published else "not published"
            print(f"SOURCE {logical}#{value.pointer} ({rel}): {value.message}; {state}", file=stream)
            mismatches += 1
            continue
        if logical not in published:
            print(f"MISSING {logical} ({rel}): not in the published map", file=stream)
            mismatches += 1
            continue
        got = published[logical]
        if os.path.splitext(rel)[1].lower() in MARKDOWN and isinstance(got, dict) and isinstance(got.get("html"), str):
            got = {k: v for k, v in got.items() if k != "html"}  # the builder's rendering (html = true)
        found = []
        diff(value, got, "", found)
        for pointer, exp, got in found:
            print(f"MISMATCH {logical}#{pointer or '/'}: expected {show(exp)}, published {show(got)}", file=stream)
        mismatches += len(found)
    return len(entries), mismatches


def expected_map(content):
    entries, problems = expected_entries(content)
    bad = [f"{k}: {v.message}" for k, (_, v) in entries.items() if isinstance(v, Unrepresentable)]
    if problems or bad:
        raise SystemExit("compare_content.py: the sources cannot all be published:\n  " + "\n  ".join(problems + bad))
    return {k: to_folio(v) for k, (_, v) in entries.items()}


# ---------------------------------------------------------------- self-test

SYNTHETIC = {
    ".folioignore": "# comment\ndrafts/\n*.tmp.json\n/only-top.json\n!keep.tmp.json\n",
    ".hidden.json": '{"a": null}',
    ".git/config.json": '{"a": null}',
    "folio.toml": '[[rules]]\nmatch = "posts/**"\nhtml = true\n',
    "drafts/x.json": '{"a": null}',
    "a.tmp.json": '{"a": null}',
    "keep.tmp.json": '{"kept": true}',
    "only-top.json": '{"a": null}',
    "sub/only-top.json": '{"nested": [1, 1.0, -0.5, 1e300, 9223372036854775807, -9223372036854775808]}',
    "numbers.yaml": "int: 1\nreal: 1.0\nexp: 1e3\nyes_string: 'yes'\nbool: true\nhex: 0x1F\nbig: 18446744073709551615\n",
    "times.yml": ("date: 2024-01-02\naware: 2024-01-02T03:04:05+02:00\nnaive: 2024-01-02 03:04:05\n"
                  "frac: 2024-01-02T03:04:05.25Z\nanchor: &a [x, y]\nalias: *a\n"),
    "conf.toml": ('title = "t"\nodt = 1979-05-27T07:32:00-08:00\nldt = 1979-05-27T07:32:00\nld = 1979-05-27\n'
                  'r = 2.0\ni = 2\n[[arr]]\nk = "v"\n'),
    "posts/yaml-post.md": "---\ntitle: Hello\ndate: 2024-01-02T03:04:05Z\ntags: [a, b]\ndraft: false\n---\n# Body\n\ntext ---\n---\nafter\n",
    "posts/toml-post.md": "+++\ntitle = \"T\"\nweight = 3\n+++\nBody *here*\n",
    "posts/empty-matter.md": "---\n---\n",
    "posts/no-matter.md": "# Just markdown\n",
    "posts/crlf-bom.md": "\ufeff---\r\ntitle: CRLF\r\n...\r\nBody\r\n",
    "posts/spaced-fence.md": "--- \ntitle: not front matter\n---\n",
    "posts/null-matter.md": "---\ntitle: T\nsubtitle:\n---\nBody\n",
    "image.png": "\x89PNG not really",
    "workflow.yml": "on:\n  workflow_call:\n  push: ~\nports:\n  - 80:80\nflags: [yes, No, 012, 0o17]\n",
    "export.json": '{"middle_name": null, "tags": [null, "a"], "n": {"x": null}}',
}


def _write_synthetic(root):
    for rel, text in SYNTHETIC.items():
        path = os.path.join(root, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
    plist = {"d": dt.datetime(2001, 1, 1, 0, 0, 1), "b": b"\x00\x01bytes", "r": 0.1, "i": -3, "s": "é"}
    with open(os.path.join(root, "bin.plist"), "wb") as f:
        plistlib.dump(plist, f, fmt=plistlib.FMT_BINARY)
    with open(os.path.join(root, "xml.plist"), "wb") as f:
        plistlib.dump([1, 2.5, True, "x"], f, fmt=plistlib.FMT_XML)


def _mutations(published):
    """(description, mutated copy) pairs; each must produce at least one mismatch."""
    import copy
    out = []

    def find(pred, node=MISSING, path=()):  # (None is a value: a null)
        node = published if node is MISSING else node
        if isinstance(node, dict):
            items = sorted(node.items())
        elif isinstance(node, list):
            items = list(enumerate(node))
        else:
            items = []
        for k, v in items:
            if pred(v, k):
                return path + (k,)
            hit = find(pred, v, path + (k,))
            if hit:
                return hit
        return None

    def mutate(desc, path, fn):
        if path is None:
            return
        m = copy.deepcopy(published)
        node = m
        for k in path[:-1]:
            node = node[k]
        fn(node, path[-1])
        out.append((desc, m))

    def setv(value):
        def fn(node, key):
            node[key] = value(node[key])
        return fn

    is_int = lambda v, k: type(v) is int
    mutate("int 1 -> real 1.0", find(is_int), setv(lambda v: float(v)))
    mutate("real -> int", find(lambda v, k: type(v) is float and v.is_integer()), setv(lambda v: int(v)))
    mutate("bool -> int", find(lambda v, k: type(v) is bool), setv(lambda v: int(v)))
    mutate("string edited", find(lambda v, k: isinstance(v, str) and k != "body"), setv(lambda v: v + " "))
    mutate("body edited", find(lambda v, k: k == "body"), setv(lambda v: v.replace("\n", "\r\n", 1) + "x"))
    mutate("date moved a second", find(lambda v, k: isinstance(v, str) and re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", v)),
           setv(lambda v: v[:-3] + "%02dZ" % ((int(v[-3:-1]) + 1) % 60)))
    mutate("key removed", find(lambda v, k: isinstance(v, dict) and v), lambda n, k: n[k].pop(sorted(n[k])[0]))
    mutate("key added", find(lambda v, k: isinstance(v, dict)), lambda n, k: n[k].__setitem__("zz-extra", 1))
    mutate('null -> "$null"', find(lambda v, k: v is None), setv(lambda v: "$null"))
    mutate("null key dropped", find(lambda v, k: isinstance(v, dict) and None in v.values()),
           lambda n, k: n[k].pop(next(key for key, v in sorted(n[k].items()) if v is None)))
    mutate("array element dropped", find(lambda v, k: isinstance(v, list) and v), lambda n, k: n[k].pop())
    m = copy.deepcopy(published)
    m.pop(sorted(m)[0])
    out.append(("entry removed", m))
    return out


def selftest(content):
    failures = 0
    with tempfile.TemporaryDirectory(prefix="compare-selftest-") as tmp:
        synthetic = os.path.join(tmp, "synthetic")
        _write_synthetic(synthetic)
        exp = expected_map(synthetic)
        want = {"keep.tmp.plist", "sub/only-top.plist", "numbers.plist", "times.plist", "conf.plist",
                "posts/yaml-post.plist", "posts/toml-post.plist", "posts/empty-matter.plist", "posts/crlf-bom.plist",
                "posts/null-matter.plist", "workflow.plist", "export.plist", "bin.plist", "xml.plist"}
        checks = [
            ("synthetic entries", set(exp) == want, sorted(set(exp) ^ want)),
            ("dates to UTC", exp.get("times.plist", {}).get("aware") == "2024-01-02T01:04:05Z"
             and exp["times.plist"]["date"] == "2024-01-02T00:00:00Z" and exp["times.plist"]["naive"] == "2024-01-02T03:04:05Z",
             exp.get("times.plist")),
            ("toml datetimes", exp.get("conf.plist", {}).get("odt") == "1979-05-27T15:32:00Z"
             and exp["conf.plist"]["ld"] == "1979-05-27T00:00:00Z", exp.get("conf.plist")),
            ("front matter body", exp.get("posts/yaml-post.plist", {}).get("body") == "# Body\n\ntext ---\n---\nafter\n"
             and exp["posts/empty-matter.plist"] == {"body": ""}
             and exp.get("posts/crlf-bom.plist") == {"title": "CRLF", "body": "Body\r\n"}, exp.get("posts/yaml-post.plist")),
            ("bytes base64", exp.get("bin.plist", {}).get("b") == "AAFieXRlcw==", exp.get("bin.plist")),
            ("nulls as null", exp.get("export.plist") == {"middle_name": None, "tags": [None, "a"], "n": {"x": None}}
             and exp.get("posts/null-matter.plist") == {"title": "T", "subtitle": None, "body": "Body\n"}, exp.get("export.plist")),
            ("YAML 1.2 core: on is a key, 80:80 a string, yes/No strings, 012 decimal",
             exp.get("workflow.plist") == {"on": {"workflow_call": None, "push": None}, "ports": ["80:80"],
                                           "flags": ["yes", "No", 12, 15]}, exp.get("workflow.plist")),
            ("int vs real text", '"real": 1.0' in dump_folio(exp["numbers.plist"]) and '"int": 1,' in dump_folio(exp["numbers.plist"]),
             dump_folio(exp.get("numbers.plist"))),
        ]
        bad_dir = os.path.join(tmp, "bad")
        os.makedirs(bad_dir)
        with open(os.path.join(bad_dir, "n.json"), "w") as f:
            f.write('{"a": [1, null]}')
        with open(os.path.join(bad_dir, "n.yaml"), "w") as f:
            f.write("a: 1\n")
        with open(os.path.join(bad_dir, "k.yml"), "w") as f:
            f.write("1: one\n")
        with open(os.path.join(bad_dir, "unclosed.md"), "w") as f:
            f.write("---\ntitle: x\n")
        with open(os.path.join(bad_dir, "reserved.md"), "w") as f:
            f.write("---\nbody: x\n---\ntext\n")
        import io
        sink = io.StringIO()
        n, mm = compare(bad_dir, {"n.plist": {"a": [1]}, "k.plist": {"1": "one"}}, sink)
        text = sink.getvalue()
        checks.append(("null, conflict, non-string key, unclosed fence, reserved key reported",
                       mm == 5 and all(w in text for w in ("null", "both map", "non-string key", "never closed", "reserved")),
                       text))
        sink = io.StringIO()
        n, mm = compare(synthetic, dict(exp, **{"posts/no-matter.plist": {"body": "# Just markdown\n"},
                                                "posts/toml-post.plist": dict(exp["posts/toml-post.plist"], html="<p>x</p>")}), sink)
        checks.append(("no-front-matter document compared when published; html ignored", n == len(exp) + 1 and mm == 0,
                       sink.getvalue()))
        sink = io.StringIO()
        _, mm = compare(synthetic, dict(exp, **{"posts/no-matter.plist": {"body": "# Just"}}), sink)
        checks.append(("no-front-matter document body checked", mm == 1, sink.getvalue()))
        for name, ok, detail in checks:
            print(f"selftest {'ok  ' if ok else 'FAIL'} {name}" + ("" if ok else f": {detail}"))
            failures += not ok

        for label, root in (("synthetic", synthetic), (os.path.basename(os.path.normpath(content)), content)):
            published = expected_map(root) if root != synthetic else exp
            path = os.path.join(tmp, "published.json")
            with open(path, "w", encoding="utf-8") as f:
                f.write(dump_folio(published))
            with open(path, encoding="utf-8") as f:
                reread = json.load(f)  # through JSON text, as a real PUBLISHED.json comes
            sink = io.StringIO()
            n, mm = compare(root, reread, sink)
            ok = mm == 0 and n == len(published)
            print(f"selftest {'ok  ' if ok else 'FAIL'} {label}: clean copy, compared {n} entries, {mm} mismatches")
            if not ok:
                print(sink.getvalue(), end="")
            failures += not ok
            for desc, mutated in _mutations(reread):
                sink = io.StringIO()
                _, mm = compare(root, mutated, sink)
                first = sink.getvalue().splitlines()[0] if mm else ""
                ok = mm > 0
                print(f"selftest {'ok  ' if ok else 'FAIL'} {label}: {desc} caught ({mm}) {first[:110]}")
                failures += not ok
    print(f"selftest: {'passed' if failures == 0 else f'{failures} failed'}")
    return 0 if failures == 0 else 1


def main(argv):
    here = os.path.dirname(os.path.abspath(__file__))
    if argv[:1] == ["--selftest"] and len(argv) <= 2:
        content = argv[1] if len(argv) == 2 else os.path.join(here, "RealContent")
        if not os.path.isdir(content):
            print(f"compare_content.py: no directory {content}", file=sys.stderr)
            return 2
        return selftest(content)
    if argv[:1] == ["--expected"] and len(argv) == 2:
        print(dump_folio(expected_map(argv[1])))
        return 0
    if len(argv) != 2 or argv[0].startswith("-"):
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    content, published_path = argv
    if not os.path.isdir(content):
        print(f"compare_content.py: no directory {content}", file=sys.stderr)
        return 2
    try:
        with open(published_path, encoding="utf-8") as f:
            published = json.load(f)
    except (OSError, ValueError) as e:
        print(f"compare_content.py: cannot read {published_path}: {e}", file=sys.stderr)
        return 2
    if not isinstance(published, dict):
        print(f"compare_content.py: {published_path} is not one JSON object", file=sys.stderr)
        return 2
    n, mm = compare(content, published)
    print(f"compared {n} entries, {mm} mismatches")
    return 0 if mm == 0 else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
