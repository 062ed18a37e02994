#!/usr/bin/env python3
"""What GNU gettext answers for every msgid of a .po file, as JSON: the reference for Folio's lookups.

Usage: python3 scripts/gettext-reference.py FILE.po [--max-count N] [--msgfmt PATH] [--keep-mo PATH]

Compiles FILE.po with `msgfmt --check-format -o X.mo` (GNU gettext, Debian package `gettext`;
Django's `compilemessages` runs the same command), loads X.mo with Python's
`gettext.GNUTranslations`, and prints on stdout, for every entry of the .po other than the header
(untranslated and fuzzy entries included, obsolete `#~` entries left out):

  key        the key as msgfmt stores it: msgctxt + U+0004 + msgid when there is a context
  context, msgid, msgidPlural, flags, fuzzy, translated (a non-empty msgstr in the .po)
  inMo       whether the .mo catalog holds the key (else every answer is gettext's fallback
             to the msgid, or for plurals to msgid / msgid_plural by n == 1)
  moForms    plural entries in the .mo: how many msgstr[n] msgfmt stored
  text       singular entries: gettext(msgid), or pgettext(msgctxt, msgid)
  plural     plural entries: ngettext (npgettext) for n = 0 … max-count (default 200), index = n

plus `pluralForms` (the header's Plural-Forms), `maxCount` and msgfmt's own stderr (`msgfmtMessages`).
Exit status: 0, or msgfmt's when it refuses the file (its messages on stderr), 2 for bad usage.
Standard library only.
"""
import argparse
import gettext
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile

ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "a": "\a", "b": "\b", "f": "\f", "v": "\v",
           "\\": "\\", '"': '"', "'": "'", "?": "?"}


def unescape(s, where):
    """The text of one PO string literal's contents (C escapes)."""
    out = []
    i = 0
    while i < len(s):
        c = s[i]
        if c != "\\":
            out.append(c)
            i += 1
            continue
        i += 1
        if i >= len(s):
            raise ValueError(f"{where}: a backslash ends the string")
        c = s[i]
        if c in ESCAPES:
            out.append(ESCAPES[c])
            i += 1
        elif c in "01234567":
            j = i
            while j < len(s) and j < i + 3 and s[j] in "01234567":
                j += 1
            out.append(chr(int(s[i:j], 8)))
            i = j
        elif c == "x":
            j = i + 1
            while j < len(s) and s[j] in "0123456789abcdefABCDEF":
                j += 1
            out.append(chr(int(s[i + 1:j], 16)))
            i = j
        else:
            raise ValueError(f"{where}: unknown escape \\{c}")
    return "".join(out)


STRING = re.compile(r'^"((?:[^"\\]|\\.)*)"\s*$')
KEYWORD = re.compile(r'^(msgctxt|msgid_plural|msgid|msgstr(?:\[(\d+)\])?)\s+(".*)$')


def parse_po(text, path):
    """The non-obsolete entries of a .po file, header included (msgid "" without msgctxt)."""
    entries = []
    cur = None
    field = None  # (name, index) of the field continuation lines extend
    flags = []

    def finish():
        nonlocal cur
        if cur is not None and "msgid" in cur:
            entries.append(cur)
        cur = None

    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        where = f"{path}:{number}"
        if not line:
            continue
        if line.startswith("#"):
            if line.startswith("#~"):
                field = None
                continue  # obsolete: msgfmt ignores it
            if cur is not None and cur.get("msgstr") is not None:
                finish()
                flags = []
            if line.startswith("#,"):
                flags += [f.strip() for f in line[2:].split(",") if f.strip()]
            field = None
            continue
        m = KEYWORD.match(line)
        if m:
            name, index, rest = m.group(1), m.group(2), m.group(3)
            s = STRING.match(rest)
            if not s:
                raise ValueError(f"{where}: malformed string")
            value = unescape(s.group(1), where)
            if name in ("msgctxt", "msgid") and cur is not None and cur.get("msgstr") is not None:
                finish()
                flags = []
            if cur is None:
                cur = {"flags": flags, "line": number}
                flags = []
            if name.startswith("msgstr"):
                if cur.get("msgstr") is None:
                    cur["msgstr"] = {}
                i = int(index) if index is not None else -1
                cur["msgstr"][i] = value
                field = ("msgstr", i)
            else:
                cur[name] = value
                field = (name, None)
            continue
        s = STRING.match(line)
        if s and field is not None and cur is not None:
            value = unescape(s.group(1), where)
            if field[0] == "msgstr":
                cur["msgstr"][field[1]] += value
            else:
                cur[field[0]] += value
            continue
        raise ValueError(f"{where}: cannot parse: {raw!r}")
    finish()
    return entries


def mo_keys(path, charset):
    """Every original string of a .mo file mapped to its number of translations (plural forms)."""
    with open(path, "rb") as f:
        data = f.read()
    magic = struct.unpack("<I", data[:4])[0]
    order = "<" if magic == 0x950412DE else ">"
    _, count, orig_at, trans_at = struct.unpack(order + "4I", data[4:20])
    keys = {}
    for i in range(count):
        olen, ooff = struct.unpack(order + "2I", data[orig_at + 8 * i:orig_at + 8 * i + 8])
        tlen, toff = struct.unpack(order + "2I", data[trans_at + 8 * i:trans_at + 8 * i + 8])
        original = data[ooff:ooff + olen].decode(charset)
        translation = data[toff:toff + tlen]
        keys[original.split("\0")[0]] = len(translation.split(b"\0"))
    return keys


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("po")
    ap.add_argument("--max-count", type=int, default=200)
    ap.add_argument("--msgfmt", default=shutil.which("msgfmt") or "msgfmt")
    ap.add_argument("--keep-mo", help="also write the compiled .mo here")
    args = ap.parse_args()

    with open(args.po, "rb") as f:
        raw = f.read()
    head = raw[:4096].decode("ascii", "replace")
    m = re.search(r"charset=([A-Za-z0-9_.:-]+)", head)
    charset = m.group(1) if m and m.group(1).upper() != "CHARSET" else "utf-8"
    entries = parse_po(raw.decode(charset), args.po)

    with tempfile.TemporaryDirectory() as tmp:
        mo = args.keep_mo or os.path.join(tmp, "messages.mo")
        r = subprocess.run([args.msgfmt, "--check-format", "-o", mo, args.po], capture_output=True, text=True)
        if r.returncode != 0:
            sys.stderr.write(r.stderr)
            sys.stderr.write(f"gettext-reference: msgfmt --check-format refused {args.po} (exit {r.returncode})\n")
            return r.returncode
        with open(mo, "rb") as f:
            translations = gettext.GNUTranslations(f)
        stored = mo_keys(mo, translations.charset() or "utf-8")

    header = next((e for e in entries if e["msgid"] == "" and "msgctxt" not in e), None)
    plural_forms = None
    if header is not None:
        for line in header["msgstr"].get(-1, "").split("\n"):
            if line.lower().startswith("plural-forms:"):
                plural_forms = line.split(":", 1)[1].strip()

    out = []
    seen = set()
    for e in entries:
        if e is header:
            continue
        ctxt = e.get("msgctxt")
        msgid = e["msgid"]
        key = msgid if ctxt is None else ctxt + "\x04" + msgid
        seen.add(key)
        plural = e.get("msgid_plural")
        msgstrs = e.get("msgstr") or {}
        item = {
            "key": key, "context": ctxt, "msgid": msgid, "msgidPlural": plural,
            "line": e["line"], "flags": e["flags"], "fuzzy": "fuzzy" in e["flags"],
            "translated": any(v != "" for v in msgstrs.values()),
            "inMo": key in stored,
        }
        if plural is None:
            item["text"] = translations.gettext(msgid) if ctxt is None else translations.pgettext(ctxt, msgid)
        else:
            item["moForms"] = stored.get(key, 0)
            if ctxt is None:
                item["plural"] = [translations.ngettext(msgid, plural, n) for n in range(args.max_count + 1)]
            else:
                item["plural"] = [translations.npgettext(ctxt, msgid, plural, n) for n in range(args.max_count + 1)]
        out.append(item)

    missing = [k for k in stored if k != "" and k not in seen]
    if missing:
        sys.stderr.write(f"gettext-reference: the .mo holds keys this parser did not find: {missing[:5]!r}\n")
        return 1

    json.dump({
        "po": args.po, "pluralForms": plural_forms, "maxCount": args.max_count,
        "msgfmtMessages": r.stderr, "entries": out,
    }, sys.stdout, ensure_ascii=False, indent=1)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except (OSError, ValueError, UnicodeDecodeError) as error:
        sys.stderr.write(f"gettext-reference: {error}\n")
        sys.exit(2)
