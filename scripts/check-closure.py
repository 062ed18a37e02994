#!/usr/bin/env python3
"""What the portable libraries reach on Apple platforms, checked against an allowed list.

Reads `swift package dump-package` of this package and of every dependency checkout
(.build/checkouts/*): `describe` would drop the conditions of target dependencies and linker
settings, which decide what an iOS or macOS build links. From each product or target named, it
follows target dependencies (by name, target or product, across packages) whose condition
includes the platform, and collects the targets, system libraries (with the libraries their module
map links) and linked libraries reached. Anything outside ALLOWED fails, with the path that
reaches it.

    scripts/check-closure.py                       # the default products and targets
    scripts/check-closure.py --product FolioPlist --target FolioSupport
    scripts/check-closure.py --self-test           # breaks a copy of the graph on purpose

Limits: a manifest is evaluated on this host (Linux). A manifest that branches with `#if os(...)`
or the environment instead of `.when(platforms:)` could differ on a Mac; swift-crypto's
FreeBSD switch is such a branch and leaves the Apple graph as dumped here. Frameworks from the
Apple SDK (CryptoKit, which Crypto re-exports there) are not modelled: only what SwiftPM builds
and links is.
"""

import argparse
import copy
import json
import os
import re
import subprocess
import sys
import tempfile
from collections import deque
from concurrent.futures import ThreadPoolExecutor

ROOT = "folio"
DEFAULT_PRODUCTS = ["FolioKit", "FolioPlist", "FolioLocalization"]
DEFAULT_TARGETS = ["FolioSupport", "FolioPublished"]
DEFAULT_PLATFORMS = ["ios", "macos"]

# What a portable library may reach, by package identity: its own targets (all of them), and the
# targets of the dependencies listed. On Apple platforms swift-crypto's Crypto target depends on
# nothing (its BoringSSL and XKCP targets are conditioned to Linux, Android, Windows, WASI and
# OpenBSD) and re-exports CryptoKit.
ALLOWED_TARGETS = {
    "swift-crypto": {"Crypto"},
    "swift-log": {"Logging"},
    "swift-system": {"SystemPackage", "CSystem"},
    "swift-http-types": {"HTTPTypes"},
}
# System-library targets of this package, and libraries linked by name.
ALLOWED_SYSTEM = {"CZlib"}
ALLOWED_LINKS = {"z"}


def dump(path):
    """The manifest of the package at `path`, as dump-package gives it."""
    with tempfile.TemporaryDirectory() as scratch:
        out = subprocess.run(
            ["swift", "package", "--package-path", path, "--scratch-path", scratch, "dump-package"],
            capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"check-closure: dump-package failed in {path}:\n{out.stderr}")
    return json.loads(out.stdout)


def load_live(root):
    """{identity: {"path", "manifest"}} for the root package and every checkout."""
    checkouts = os.path.join(root, ".build", "checkouts")
    if not os.path.isdir(checkouts):
        sys.exit("check-closure: no .build/checkouts; run `swift package resolve` first")
    paths = {ROOT: root}
    for name in sorted(os.listdir(checkouts)):
        paths[name.lower()] = os.path.join(checkouts, name)
    with ThreadPoolExecutor(max_workers=4) as pool:
        manifests = dict(zip(paths, pool.map(dump, paths.values())))
    return {k: {"path": paths[k], "manifest": manifests[k]} for k in paths}


def load_saved(directory):
    """The same, from `<identity>.json` files written by --self-test."""
    packages = {}
    for name in os.listdir(directory):
        with open(os.path.join(directory, name)) as f:
            packages[name[: -len(".json")]] = json.load(f)
    return packages


def applies(condition, platform):
    """Whether a dependency or setting with `condition` is part of a build for `platform`."""
    names = (condition or {}).get("platformNames")
    return not names or platform in names


def module_map_links(package, target):
    """The libraries a system-library target's module map links."""
    path = os.path.join(package["path"], target.get("path") or os.path.join("Sources", target["name"]))
    try:
        with open(os.path.join(path, "module.modulemap")) as f:
            return re.findall(r'^\s*link\s+(?:framework\s+)?"([^"]+)"', f.read(), re.M)
    except FileNotFoundError:
        return []


class Graph:
    def __init__(self, packages):
        self.packages = packages
        self.by_name = {}
        for identity, package in packages.items():
            self.by_name[identity] = identity
            self.by_name[package["manifest"]["name"].lower()] = identity

    def target(self, identity, name):
        return next((t for t in self.packages[identity]["manifest"]["targets"] if t["name"] == name), None)

    def product(self, identity, name):
        return next((p for p in self.packages[identity]["manifest"]["products"] if p["name"] == name), None)

    def dependency_packages(self, identity):
        for dep in self.packages[identity]["manifest"]["dependencies"]:
            for kind in dep.values():
                dep_identity = kind[0].get("identity", "")
                if dep_identity in self.packages:
                    yield dep_identity

    def edges(self, node, platform):
        """(child node, label) pairs of `node` on `platform`; a node is (kind, identity, name)."""
        kind, identity, name = node
        if kind == "product":
            for t in self.product(identity, name)["targets"]:
                yield ("target", identity, t)
            return
        if kind != "target":
            return
        target = self.target(identity, name)
        for dep in target["dependencies"]:
            (how, args), = dep.items()
            condition = args[-1] if isinstance(args[-1], dict) or args[-1] is None else None
            if not applies(condition, platform):
                continue
            if how == "target":
                yield ("target", identity, args[0])
            elif how == "product":
                package = self.by_name.get(args[1].lower())
                if package is None:
                    sys.exit(f"check-closure: {identity}:{name} names package {args[1]}, which has no checkout")
                yield ("product", package, args[0])
            else:  # byName: a target of this package, else a product of one of its dependencies
                if self.target(identity, args[0]):
                    yield ("target", identity, args[0])
                else:
                    owner = next((p for p in self.dependency_packages(identity) if self.product(p, args[0])), None)
                    if owner is None:
                        sys.exit(f"check-closure: {identity}:{name} depends on {args[0]}, found nowhere")
                    yield ("product", owner, args[0])
        if target["type"] == "system":
            for lib in module_map_links(self.packages[identity], target):
                yield ("link", identity, lib)
        for setting in target.get("settings") or []:
            if setting.get("tool") == "linker" and applies(setting.get("condition"), platform):
                (what, value), = setting["kind"].items()
                yield ("link" if what in ("linkedLibrary", "linkedFramework") else "flag", identity, str(value.get("_0", value)))

    def closure(self, start, platform):
        """Every node reached from `start`, each with its parent (None for `start`)."""
        parent = {start: None}
        queue = deque([start])
        while queue:
            node = queue.popleft()
            for child in self.edges(node, platform):
                if child not in parent:
                    parent[child] = node
                    queue.append(child)
        return parent

    def allowed(self, node):
        kind, identity, name = node
        if kind == "product":
            return True  # judged by the targets it brings
        if kind == "link":
            return name in ALLOWED_LINKS
        if kind == "flag":
            return False
        if identity != ROOT:
            return name in ALLOWED_TARGETS.get(identity, set())
        return self.target(identity, name)["type"] != "system" or name in ALLOWED_SYSTEM


def describe(node, graph):
    kind, identity, name = node
    where = "" if identity == ROOT else f"{identity}:"
    target = graph.target(identity, name) if kind == "target" else None
    if target and target["type"] == "system":
        links = module_map_links(graph.packages[identity], target)
        return f"{where}{name} (system library{': links ' + ', '.join(links) if links else ''})"
    if kind in ("link", "flag"):
        return f"{'links' if kind == 'link' else 'linker flag'} {name}"
    return f"{where}{name}{' (product)' if kind == 'product' else ''}"


def ancestors(node, parent):
    at = parent[node]
    while at is not None:
        yield at
        at = parent[at]


def check(graph, starts, platforms):
    """The violations (one line each) of every start on every platform; prints a summary."""
    failures = []
    for start in starts:
        for platform in platforms:
            parent = graph.closure(start, platform)
            for node in parent:
                # Only the first node on its path that is not allowed: what it brings goes with it.
                if graph.allowed(node) or (parent[node] and not all(graph.allowed(a) for a in ancestors(node, parent))):
                    continue
                path, at = [], node
                while at is not None:
                    path.append(describe(at, graph))
                    at = parent[at]
                failures.append(f"{platform}: " + " -> ".join(reversed(path)))
            reached = sorted(describe(n, graph) for n in parent if n != start)
            print(f"{describe(start, graph)} on {platform}: {', '.join(reached) or 'nothing else'}")
    return failures


def starts_for(graph, products, targets):
    starts = []
    for p in products:
        if not graph.product(ROOT, p):
            sys.exit(f"check-closure: no product {p}")
        starts.append(("product", ROOT, p))
    for t in targets:
        if not graph.target(ROOT, t):
            sys.exit(f"check-closure: no target {t}")
        starts.append(("target", ROOT, t))
    return starts


def self_test(packages):
    """Breaks copies of the graph in each way the check must catch, and runs the script on them."""
    def broken(mutate):
        copy_ = copy.deepcopy(packages)
        target = next(t for t in copy_[ROOT]["manifest"]["targets"] if t["name"] == "FolioPlist")
        mutate(target)
        return copy_

    nio = {"product": ["NIOCore", "swift-nio", None, None]}
    linux = {"platformNames": ["linux"]}
    cases = [
        ("NIO added to FolioPlist", lambda t: t["dependencies"].append(nio), "swift-nio:NIOCore"),
        ("libxml2 by name", lambda t: t["dependencies"].append({"byName": ["CLibXML2", None]}), "CLibXML2 (system library: links xml2)"),
        ("a linked library", lambda t: t.setdefault("settings", []).append(
            {"tool": "linker", "kind": {"linkedLibrary": {"_0": "deflate"}}}), "links deflate"),
        ("NIO for Linux only", lambda t: t["dependencies"].append({"product": ["NIOCore", "swift-nio", None, linux]}), None),
        ("libdeflate for Linux only", lambda t: t.setdefault("settings", []).append(
            {"tool": "linker", "kind": {"linkedLibrary": {"_0": "deflate"}}, "condition": linux}), None),
    ]
    ok = True
    for name, mutate, expected in cases:
        with tempfile.TemporaryDirectory() as directory:
            for identity, package in broken(mutate).items():
                with open(os.path.join(directory, identity + ".json"), "w") as f:
                    json.dump(package, f)
            run = subprocess.run([sys.executable, __file__, "--dumps", directory, "--product", "FolioPlist"],
                                 capture_output=True, text=True)
        caught = run.returncode == 1 and expected is not None and expected in run.stderr
        passed = run.returncode == 0 and expected is None
        print(f"self-test: {name}: {'ok' if caught or passed else 'WRONG'}")
        if not (caught or passed):
            ok = False
            print(run.stdout + run.stderr, file=sys.stderr)
    # swift-crypto's BoringSSL is in Crypto's closure on Linux and not on iOS.
    graph = Graph(packages)
    crypto = ("product", "swift-crypto", "Crypto")
    boring = ("target", "swift-crypto", "CCryptoBoringSSL")
    conditions = boring in graph.closure(crypto, "linux") and boring not in graph.closure(crypto, "ios")
    print(f"self-test: Crypto reaches BoringSSL on linux only: {'ok' if conditions else 'WRONG'}")
    return ok and conditions


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--product", action="append", default=[], help="a product of this package")
    parser.add_argument("--target", action="append", default=[], help="a target of this package")
    parser.add_argument("--platform", action="append", default=[], help="ios, macos, ... (default: ios and macos)")
    parser.add_argument("--package-path", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    parser.add_argument("--dumps", help=argparse.SUPPRESS)  # saved manifests, for --self-test
    parser.add_argument("--self-test", action="store_true")
    args = parser.parse_args()
    packages = load_saved(args.dumps) if args.dumps else load_live(os.path.abspath(args.package_path))
    if args.self_test:
        sys.exit(0 if self_test(packages) else 1)
    products, targets = args.product, args.target
    if not products and not targets:
        products, targets = DEFAULT_PRODUCTS, DEFAULT_TARGETS
    graph = Graph(packages)
    failures = check(graph, starts_for(graph, products, targets), args.platform or DEFAULT_PLATFORMS)
    if failures:
        print("check-closure: not allowed in a portable library:", file=sys.stderr)
        for line in sorted(set(failures)):
            print("  " + line, file=sys.stderr)
        sys.exit(1)
    print("check-closure: ok")


if __name__ == "__main__":
    main()
