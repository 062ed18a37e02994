#!/usr/bin/env python3
"""Generate Folio's CLDR tables and plural reference from the CLDR data that Babel ships.

Usage:  pip install babel   # the newest release; it carries one CLDR release
        python3 scripts/gen-cldr.py

Run by developers when CLDR moves on; the outputs are committed and the build never
runs this script or needs Babel. Standard library plus `babel` only. It writes:

  Sources/FolioLocalization/Locale/CLDRData.swift
      `CLDRData.version` (Babel's CLDR version), the cardinal plural rule groups,
      the parent locales and the likely subtags.
  Tests/Fixtures/cldr-plural-reference.txt
      Babel's own category for a fixed list of values, for every locale Babel knows
      (read by Tests/FolioLibraryTests/CLDRReferenceTests.swift; it lives outside the
      test target so SwiftPM has no unhandled resource to warn about).

Plural rules. Babel keeps CLDR's cardinal rules per locale as parsed trees
(`babel.Locale.parse(id).plural_form.abstract`); a locale carries its own
`plural_form` in its raw data only where CLDR gives it one. This script renders each
tree back into CLDR rule syntax ("i = 1 and v = 0", "n % 10 = 2..4 and n % 100 != 12..14"),
checks that Babel parses the text back to the same tree, and writes one table entry for
every locale whose Babel rules differ from what Folio's lookup (`PluralRules.init(locale:)`:
explicit non-root parent, else truncation, else root) would find without it. That gives
the languages plus the few regional exceptions such as pt-PT. The two-letter deprecated
codes in Babel's `language_aliases` (iw, in, ji, jw, mo, sh, tl, ...) join the group of
the locale they stand for, as CLDR's plurals.xml lists them. CLDR locales that Babel
ships no locale data for (e.g. ars, guw, nah, smi) cannot be taken from Babel and fall
back to root.

Sample lists. Babel does not keep CLDR's `@integer`/`@decimal` samples, so this script
makes equivalent lists in the same syntax by evaluating Babel's rule for each category
(one category at a time, which also checks that no two categories overlap) over:
  integers  0..1100 and 10000, 100000, 1000000, 10000000, 100000000;
  decimals  0.0..25.0 in steps of 0.1, 0.00..2.00 in steps of 0.01, and
            10.0, 100.0, 1000.0, 10000.0, 100000.0, 1000000.0.
Each list gives runs of consecutive matches as "a~b" (every value between a and b has
that category) up to about 16 values per kind (8 for two decimal places), then the round
numbers that match, then "…" when the category also matches values above 1000 (1001..1100,
1001.0..1100.9, 1001.00..1001.99 and 1011.00..1011.99, or the round numbers from 10000 up),
taken as the sign that it is not a finite set.
The Swift tests evaluate every sample and expect its category.

Parent locales. Babel's `parent_exceptions` are CLDR's explicit parents. Since CLDR 45
a locale of the form language-Script whose script is not the language's likely script
has root as its parent (the `nonlikelyScript` rule) instead of being listed; this script
writes those as explicit "root" entries for every such language-Script that Babel's
locale identifiers or likely subtags name, so `LocaleMatcher` keeps stopping there
(zh-Hant never falls back to zh).

Likely subtags: Babel's `likely_subtags` for the languages that have plural rules.
"""
import decimal
import os
import pickle
import sys

try:
    import babel
    from babel import localedata
    from babel.core import get_global
    from babel.plural import PluralRule
except ImportError:  # pragma: no cover
    sys.exit("gen-cldr.py needs Babel: pip install babel")

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
OUT = os.path.join(ROOT, "Sources", "FolioLocalization", "Locale", "CLDRData.swift")
REFERENCE = os.path.join(ROOT, "Tests", "Fixtures", "cldr-plural-reference.txt")
ORDER = ["zero", "one", "two", "few", "many", "other"]
LETTER = {"zero": "z", "one": "o", "two": "t", "few": "f", "many": "m", "other": "x"}

# Values evaluated for the sample lists.
SMALL_INTEGERS = list(range(0, 1101))
ROUND_INTEGERS = [10000, 100000, 1000000, 10000000, 100000000]
ONE_PLACE = ["%d.%d" % divmod(k, 10) for k in range(0, 251)]
TWO_PLACES = ["%d.%02d" % divmod(k, 100) for k in range(0, 201)]
ROUND_DECIMALS = ["10.0", "100.0", "1000.0", "10000.0", "100000.0", "1000000.0"]
LARGE_DECIMALS = ["%d.%d" % (n, d) for n in range(1001, 1101) for d in range(10)] + \
    ["%d.%02d" % (n, d) for n in (1001, 1011) for d in range(100)]
SAMPLE_LIMIT = 16

# Values in the reference file: integers 0...200, larger integers, and decimals whose
# visible fraction digits (v, w, f, t) matter; all are plain decimals PluralOperands accepts.
REFERENCE_VALUES = (
    [str(k) for k in range(0, 201)]
    + ["1000", "1001", "1011", "1021", "10000", "100000", "1000000", "1000001", "2000000",
       "10000000", "1000000000", "12345678901234567890121", "-1", "-2", "-5"]
    + ["%d.%d" % divmod(k, 10) for k in range(0, 31)]
    + ["0.00", "0.01", "0.02", "0.05", "0.10", "0.11", "0.20", "0.21", "0.25", "1.00", "1.01",
       "1.10", "1.11", "1.50", "2.00", "2.01", "2.10", "3.00", "0.000", "1.000", "1.010", "1.500",
       "10.0", "11.0", "11.1", "12.0", "21.0", "21.1", "22.0", "100.0", "101.0", "1000.0",
       "1000000.0", "1000000.00", "-1.0", "-1.5"]
)


def swift_str(s):
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def hyphen(locale_id):
    return locale_id.replace("_", "-")


# ---------------------------------------------------------------------------
# Rendering Babel's rule trees as CLDR rule text


def render_ranges(node):
    kind, ranges = node
    assert kind == "range_list", node
    parts = []
    for low, high in ranges:
        lo, hi = low[1][0], high[1][0]
        parts.append(str(lo) if lo == hi else "%d..%d" % (lo, hi))
    return ",".join(parts)


def render_expr(node):
    kind, args = node
    if kind == "mod":
        operand, modulus = args
        return "%s %% %d" % (operand[0], modulus[1][0])
    assert args == (), node
    return kind


def render_relation(node):
    negated = False
    if node[0] == "not":
        negated = True
        node = node[1][0]
    kind, (method, expr, ranges) = node
    assert kind == "relation", node
    left, right = render_expr(expr), render_ranges(ranges)
    if method == "in":
        return "%s %s %s" % (left, "!=" if negated else "=", right)
    if method == "within":
        return "%s %swithin %s" % (left, "not " if negated else "", right)
    raise ValueError("unsupported relation %r" % (node,))


def flatten(node, op):
    if node[0] == op:
        return flatten(node[1][0], op) + flatten(node[1][1], op)
    return [node]


def render_condition(node):
    alternatives = []
    for conjunction in flatten(node, "or"):
        relations = flatten(conjunction, "and")
        for r in relations:
            assert r[0] in ("relation", "not"), "an 'or' below an 'and' has no CLDR syntax"
        alternatives.append(" and ".join(render_relation(r) for r in relations))
    return " or ".join(alternatives)


def rules_of(locale_id):
    """The locale's rules as ((category, condition text), ...) in CLDR order, without `other`."""
    rule = babel.Locale.parse(locale_id).plural_form
    rendered = {tag: render_condition(ast) for tag, ast in rule.abstract}
    if sorted(PluralRule(rendered).abstract) != sorted(rule.abstract):
        raise SystemExit("%s: rendered rules do not parse back to Babel's: %r" % (locale_id, rendered))
    return tuple(sorted(rendered.items(), key=lambda kv: ORDER.index(kv[0])))


# ---------------------------------------------------------------------------
# Evaluating rules with Babel


def evaluator(rules):
    """A function from a decimal string to its category, checking that no two rules match."""
    singles = [(tag, PluralRule({tag: cond})) for tag, cond in rules]
    cache = {}

    def category(text):
        if text not in cache:
            number = decimal.Decimal(text)
            found = [tag for tag, rule in singles if rule(number) == tag]
            if len(found) > 1:
                raise SystemExit("rules %r overlap at %s: %r" % (rules, text, found))
            cache[text] = found[0] if found else "other"
        return cache[text]

    return category


def runs(values, matches, limit):
    """CLDR sample items for the matching values of an ordered list: "a~b" for consecutive runs."""
    items, count, k = [], 0, 0
    while k < len(values) and count < limit:
        if not matches(values[k]):
            k += 1
            continue
        start = k
        while k + 1 < len(values) and matches(values[k + 1]) and count + (k + 1 - start) < limit:
            k += 1
        if start == k:
            items.append(values[k])
        elif start + 1 == k:
            items += [values[start], values[k]]
        else:
            items.append("%s~%s" % (values[start], values[k]))
        count += k - start + 1
        k += 1
    return items


def samples(category_of, tag):
    def is_tag(value):
        return category_of(value) == tag

    ints = [str(n) for n in SMALL_INTEGERS]
    integer = runs(ints, is_tag, SAMPLE_LIMIT)
    listed = set(expand(integer))
    integer += [str(n) for n in [100, 1000] + ROUND_INTEGERS if str(n) not in listed and is_tag(str(n))]
    infinite = any(is_tag(str(n)) for n in list(range(1001, 1101)) + ROUND_INTEGERS)
    dec = runs(ONE_PLACE, is_tag, SAMPLE_LIMIT) + runs(TWO_PLACES, is_tag, SAMPLE_LIMIT // 2)
    dec += [d for d in ROUND_DECIMALS if is_tag(d) and d not in set(expand(dec))]
    decimal_infinite = any(is_tag(d) for d in LARGE_DECIMALS + ROUND_DECIMALS[2:])
    if integer and infinite:
        integer.append("…")
    if dec and decimal_infinite:
        dec.append("…")
    return ", ".join(integer), ", ".join(dec)


def expand(items):
    out = []
    for item in items:
        if "~" not in item:
            out.append(item)
            continue
        low, high = item.split("~")
        places = len(low.split(".")[1]) if "." in low else 0
        a, b = int(low.replace(".", "")), int(high.replace(".", ""))
        for v in range(a, b + 1):
            s = str(v).rjust(places + 1, "0")
            out.append(s[: len(s) - places] + "." + s[len(s) - places:] if places else s)
    return out


# ---------------------------------------------------------------------------
# Locale resolution as PluralRules.init(locale:) does it


def resolve(tag, table, parents):
    candidate = tag.lower()
    while candidate is not None:
        if candidate in table:
            return candidate
        parent = parents.get(candidate)
        if parent is not None and parent != "root":
            candidate = parent
        elif "-" in candidate:
            candidate = candidate.rsplit("-", 1)[0]
        else:
            candidate = "root" if candidate != "root" else None
    return None


def has_own_plural_rules(locale_id):
    """Whether CLDR gives the locale rules of its own (not inherited), from its raw Babel data file.

    Read directly: `localedata.load(id, merge_inherited=False)` would leave the unmerged data
    in Babel's cache, where `Locale.parse` would then find it.
    """
    with open(localedata.resolve_locale_filename(locale_id), "rb") as f:
        return "plural_form" in pickle.load(f)


def script_of(locale_id):
    parts = locale_id.split("_")
    if len(parts) > 1 and len(parts[1]) == 4 and parts[1].isalpha():
        return parts[1]
    return None


def main():
    cldr_version = babel.core.get_cldr_version()
    babel_version = babel.__version__
    identifiers = sorted(localedata.locale_identifiers())
    likely = get_global("likely_subtags")

    # Parent locales: Babel's explicit ones, plus root for non-likely scripts (CLDR 45+ rule).
    parents = {hyphen(k): hyphen(v) for k, v in get_global("parent_exceptions").items()}
    combos = set()
    for text in identifiers + list(likely) + list(likely.values()):
        parts = text.split("_")
        if parts[0] != "und" and script_of(text):
            combos.add(parts[0] + "_" + parts[1])

    # Plural rules: root, then every locale whose rules Folio's lookup would otherwise miss.
    rules_by_locale = {"root": rules_of("root")}
    explicit = {i for i in identifiers if has_own_plural_rules(i)}
    for locale_id in sorted(identifiers, key=lambda i: (i.count("_"), i not in explicit, i)):
        rules = rules_of(locale_id)
        lowered = {k.lower(): v for k, v in rules_by_locale.items()}
        found = resolve(hyphen(locale_id), lowered, {k.lower(): v.lower() for k, v in parents.items()})
        is_language = "_" not in locale_id
        if (is_language and locale_id in explicit) or lowered[found] != rules:
            rules_by_locale[hyphen(locale_id)] = rules
    languages = {tag.split("-")[0] for tag in rules_by_locale}

    # Deprecated two-letter codes share the rules of the locale they stand for.
    aliases = {}
    for alias, target in sorted(get_global("language_aliases").items()):
        if len(alias) != 2 or alias in identifiers or alias in rules_by_locale:
            continue
        lowered = {k.lower(): v for k, v in rules_by_locale.items()}
        found = resolve(hyphen(target), lowered, {k.lower(): v.lower() for k, v in parents.items()})
        if found not in (None, "root"):
            aliases[alias] = target
            rules_by_locale[alias] = lowered[found]

    for combo in sorted(combos):
        lang, script = combo.split("_")
        tag = hyphen(combo)
        if tag in parents or (lang not in languages and combo not in identifiers):
            continue
        base = likely.get(lang)
        if base is not None and script_of(base) != script:
            parents[tag] = "root"

    likely_map = {}
    for frm, to in likely.items():
        if frm.split("_")[0] in languages:
            likely_map[hyphen(frm)] = hyphen(to)

    # Groups of locales with identical rules, fewest categories first (as in plurals.xml).
    groups = {}
    for locale, rules in rules_by_locale.items():
        groups.setdefault(rules, []).append(locale)
    ordered = sorted(groups.items(), key=lambda kv: (len(kv[0]), "root" not in kv[1], sorted(kv[1])[0]))

    out = []
    w = out.append
    w("// GENERATED FILE — do not edit by hand.")
    w("// Generated by `python3 scripts/gen-cldr.py` from Unicode CLDR %s, as shipped by Babel %s"
      % (cldr_version, babel_version))
    w("// (babel.Locale.plural_form, parent_exceptions, likely_subtags). Sample lists are made by")
    w("// evaluating Babel's rules (see the script). Locale identifiers use hyphens (BCP 47 style).")
    w("")
    w("/// Unicode CLDR data tables embedded at generation time, so nothing is read at run time.")
    w("public enum CLDRData {")
    w("    /// One plural category's rule as CLDR writes it: the condition text and its sample lists.")
    w("    package struct PluralRuleText: Sendable {")
    w("        /// The category keyword: zero, one, two, few, many or other.")
    w("        package let category: String")
    w("        /// The rule condition in CLDR syntax; empty for `other`.")
    w("        package let condition: String")
    w("        /// The `@integer` sample list in CLDR sample syntax (may be empty).")
    w("        package let integerSamples: String")
    w("        /// The `@decimal` sample list in CLDR sample syntax (may be empty).")
    w("        package let decimalSamples: String")
    w("    }")
    w("")
    w("    /// A set of locales that share one set of cardinal plural rules.")
    w("    package struct PluralRuleGroup: Sendable {")
    w("        /// The locale identifiers in this group, hyphenated (e.g. `pt-PT`).")
    w("        package let locales: [String]")
    w("        /// The rules, one per category, in CLDR order (zero … other).")
    w("        package let rules: [PluralRuleText]")
    w("    }")
    w("")
    w("    /// The CLDR version these tables were generated from.")
    w("    public static let version = %s" % swift_str(cldr_version))
    w("")
    w("    /// The Babel release whose CLDR data these tables were generated from.")
    w("    package static let babelVersion = %s" % swift_str(babel_version))
    w("")
    w("    /// Every cardinal plural rule group, one per distinct set of rules.")
    w("    package static let cardinalPluralRules: [PluralRuleGroup] = [")
    rule_count = 0
    for rules, locales in ordered:
        category_of = evaluator(rules)
        w("        PluralRuleGroup(")
        w("            locales: [%s]," % ", ".join(swift_str(l) for l in sorted(locales)))
        w("            rules: [")
        for tag, cond in list(rules) + [("other", "")]:
            integer, dec = samples(category_of, tag)
            if not integer and not dec:
                print("warning: no samples for %s in %s" % (tag, sorted(locales)[0]), file=sys.stderr)
            w("                PluralRuleText(")
            w("                    category: %s, condition: %s," % (swift_str(tag), swift_str(cond)))
            w("                    integerSamples: %s," % swift_str(integer))
            w("                    decimalSamples: %s)," % swift_str(dec))
            rule_count += 1
        w("            ]),")
    w("    ]")
    w("")
    w("    /// CLDR's parent locales (child → parent), consulted before truncation; \"root\" ends the chain.")
    w("    package static let parentLocales: [String: String] = [")
    for k in sorted(parents):
        w("        %s: %s," % (swift_str(k), swift_str(parents[k])))
    w("    ]")
    w("")
    w("    /// CLDR likely subtags for the languages that have plural rules (e.g. `zh-HK` → `zh-Hant-HK`).")
    w("    package static let likelySubtags: [String: String] = [")
    for k in sorted(likely_map):
        w("        %s: %s," % (swift_str(k), swift_str(likely_map[k])))
    w("    ]")
    w("}")
    w("")
    with open(OUT, "w", encoding="utf-8") as f:
        f.write("\n".join(out))
    print("wrote %s: CLDR %s (Babel %s), %d plural groups, %d rules, %d locales, "
          "%d parent locales, %d likely subtags"
          % (os.path.relpath(OUT), cldr_version, babel_version, len(ordered), rule_count,
             len(rules_by_locale), len(parents), len(likely_map)))

    write_reference(cldr_version, babel_version, identifiers, aliases)


def write_reference(cldr_version, babel_version, identifiers, aliases):
    """One line per locale Babel knows (and per alias): its pattern of categories over REFERENCE_VALUES.

    Babel evaluates its own rules here (PluralRule.__call__ with a Decimal, so "1.0" keeps v = 1),
    independently of the rule text rendered into CLDRData.swift.
    """
    patterns = {}
    lines = []
    entries = [("root", "root")] + [(i, i) for i in identifiers] + sorted(aliases.items())
    for name, source in entries:
        rule = babel.Locale.parse(source).plural_form
        letters = "".join(LETTER[rule(decimal.Decimal(v))] for v in REFERENCE_VALUES)
        number = patterns.setdefault(letters, len(patterns) + 1)
        lines.append("%s %d" % (name, number))
    out = [
        "# Cardinal plural categories computed by Babel %s (Unicode CLDR %s) for every locale"
        % (babel_version, cldr_version),
        "# Babel knows, plus the deprecated two-letter codes. Generated by `python3 scripts/gen-cldr.py`;",
        "# read by Tests/FolioLibraryTests/CLDRReferenceTests.swift. Do not edit by hand.",
        "# Lines: `cldr VERSION`, `babel VERSION`, `values V...` (the numbers, as decimal strings),",
        "# `pattern N LETTERS` (one letter per value: z zero, o one, t two, f few, m many, x other),",
        "# then `LOCALE N` (a Babel locale identifier and the pattern its values follow).",
        "cldr %s" % cldr_version,
        "babel %s" % babel_version,
        "values " + " ".join(REFERENCE_VALUES),
    ]
    for letters, number in sorted(patterns.items(), key=lambda kv: kv[1]):
        out.append("pattern %d %s" % (number, letters))
    out.extend(lines)
    os.makedirs(os.path.dirname(REFERENCE), exist_ok=True)
    with open(REFERENCE, "w", encoding="utf-8") as f:
        f.write("\n".join(out) + "\n")
    print("wrote %s: %d locales, %d values, %d distinct patterns"
          % (os.path.relpath(REFERENCE), len(lines), len(REFERENCE_VALUES), len(patterns)))


if __name__ == "__main__":
    main()
