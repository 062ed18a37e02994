#!/usr/bin/env python3
"""No unguarded Linux code in what an app links (issue 38).

usage: check-portable-sources.py [--self-test] [TARGET...]

For every Swift file of the targets FolioKit reaches (by default FolioKit, FolioKitCore, FolioHTTPFields,
FolioLocalization, FolioPlist, FolioPublished, FolioSupport), each `import` of a module that
exists on Linux only (Glibc, Musl, FoundationNetworking, CFolioLinux, Android) must sit in an
`#if`/`#elseif` clause that holds on Linux only (`canImport` of it or of Glibc, `os(Linux)`), so
that another clause, or Foundation itself, serves Apple platforms; an import of SwiftNIO,
AsyncHTTPClient, NIOSSL or the programs' C shims is refused outright. Then `swiftc -parse` reads every file, inactive
Darwin branches included. Exits 1 naming FILE:LINE for each problem.
"""
import os
import re
import subprocess
import sys
import tempfile

DEFAULT_TARGETS = ["FolioKit", "FolioKitCore", "FolioHTTPFields", "FolioLocalization", "FolioPlist", "FolioPublished", "FolioSupport"]
LINUX_ONLY = {"Glibc", "Musl", "FoundationNetworking", "CFolioLinux", "Android"}
NEVER = re.compile(r"^(NIO\w*|AsyncHTTPClient|CNIO\w*|CFolioSystem|CLibXML2|CCmarkGFM|FolioToolSupport|FolioHTTPCore|FolioKitNIO)$")
IMPORT = re.compile(r"^\s*(?:@\w+(?:\([^)]*\))?\s+)*import\s+(?:(?:struct|class|enum|protocol|func|var|let|typealias)\s+)?([A-Za-z_][\w]*)")
DIRECTIVE = re.compile(r"^\s*#(if|elseif|else|endif)\b(.*)$")


def problems_in(path, text):
    """The guard problems of one file's text, as `path:line: message`."""
    out = []
    stack = []  # the condition of the clause each open #if is in
    for n, line in enumerate(text.splitlines(), 1):
        d = DIRECTIVE.match(line)
        if d:
            kind, cond = d.group(1), d.group(2).strip()
            if kind == "if":
                stack.append(cond)
            elif kind in ("elseif", "else") and stack:
                stack[-1] = cond if kind == "elseif" else "else"
            elif kind == "endif" and stack:
                stack.pop()
            continue
        m = IMPORT.match(line)
        if not m:
            continue
        module = m.group(1)
        if NEVER.match(module):
            out.append(f"{path}:{n}: imports {module}, which an app does not link")
        elif module in LINUX_ONLY:
            linux = (f"canImport({module})", "canImport(Glibc)", "canImport(Musl)", "os(Linux)")
            guarded = any(any(g in c for g in linux) for c in stack)
            if not guarded:
                out.append(f"{path}:{n}: imports {module} outside an #if canImport({module}) clause: Apple platforms have no {module}")
    return out


def files_of(targets, root):
    for target in targets:
        base = os.path.join(root, "Sources", target)
        if not os.path.isdir(base):
            sys.exit(f"check-portable-sources: no target directory {base}")
        for dirpath, _, names in os.walk(base):
            for name in sorted(names):
                if name.endswith(".swift"):
                    yield os.path.join(dirpath, name)


def parse_errors(files):
    """`swiftc -parse` over the files: the parser reads every #if clause, active or not."""
    r = subprocess.run(["swiftc", "-parse", *files], capture_output=True, text=True)
    return [] if r.returncode == 0 else [r.stderr.strip() or f"swiftc -parse failed ({r.returncode})"]


def check(targets, root):
    files = list(files_of(targets, root))
    problems = []
    for f in files:
        with open(f, encoding="utf-8") as h:
            problems += problems_in(os.path.relpath(f, root), h.read())
    problems += parse_errors(files)
    return files, problems


def self_test():
    """Broken copies must be refused, guarded ones taken."""
    cases = [
        ("import Glibc\n", False),
        ("import NIOCore\n", False),
        ("#if canImport(Darwin)\nimport Darwin\n#else\nimport Glibc\n#endif\n", False),
        ("#if canImport(Darwin)\nimport Darwin\n#elseif canImport(Glibc)\nimport Glibc\n#endif\n", True),
        ("#if canImport(FoundationNetworking)\nimport FoundationNetworking\n#endif\n", True),
        ("import Foundation\n#if os(Linux)\n    import CFolioLinux\n#endif\n", True),
        ("@preconcurrency import FoundationNetworking\n", False),
    ]
    failed = 0
    for text, ok in cases:
        got = not problems_in("case.swift", text)
        if got != ok:
            failed += 1
            print(f"self-test: {'refused' if ok else 'took'} {text!r}", file=sys.stderr)
    with tempfile.TemporaryDirectory() as tmp:
        os.makedirs(f"{tmp}/Sources/Broken")
        with open(f"{tmp}/Sources/Broken/Bad.swift", "w") as h:
            h.write("#if canImport(Darwin)\nfunc f( {\n#endif\n")
        if not parse_errors([f"{tmp}/Sources/Broken/Bad.swift"]):
            failed += 1
            print("self-test: swiftc -parse took a broken Darwin branch", file=sys.stderr)
    if failed:
        sys.exit(f"check-portable-sources: self-test failed {failed} case(s)")
    print(f"check-portable-sources: self-test ok ({len(cases) + 1} cases)")


def main(argv):
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    if "--self-test" in argv:
        self_test()
        argv = [a for a in argv if a != "--self-test"]
    files, problems = check(argv or DEFAULT_TARGETS, root)
    if problems:
        print("\n".join(problems), file=sys.stderr)
        sys.exit(f"check-portable-sources: {len(problems)} problem(s)")
    print(f"check-portable-sources: {len(files)} files of {', '.join(argv or DEFAULT_TARGETS)}: imports guarded, every branch parses")


if __name__ == "__main__":
    main(sys.argv[1:])
