#!/usr/bin/env python3
"""Reference timings for `make bench`: Python's plistlib and libplist (C, through ctypes)
decoding and encoding the same sonnets/all.plist the Swift benchmark uses."""
import ctypes, ctypes.util, json, plistlib, sys, time

root = sys.argv[1] if len(sys.argv) > 1 else "public"
manifest = plistlib.load(open(f"{root}/manifest.plist", "rb"))
entry = next(e for e in manifest["entries"] if e["path"] == "sonnets/all.plist")
data = open(f"{root}/objects/{entry['sha256']}.plist", "rb").read()

def measure(fn, n):
    for _ in range(max(3, n // 10)):
        fn()
    samples = []
    for _ in range(n):
        t = time.perf_counter(); fn(); samples.append((time.perf_counter() - t) * 1e3)
    samples.sort()
    return samples[len(samples) // 2], samples[0]

rows = []
value = plistlib.loads(data)
rows.append(("python plistlib", measure(lambda: plistlib.loads(data), 100),
             measure(lambda: plistlib.dumps(value, fmt=plistlib.FMT_BINARY), 100)))

name = ctypes.util.find_library("plist-2.0") or "libplist-2.0.so.3"
try:
    lib = ctypes.CDLL(name)
    lib.plist_from_bin.argtypes = [ctypes.c_char_p, ctypes.c_uint32, ctypes.POINTER(ctypes.c_void_p)]
    lib.plist_to_bin.argtypes = [ctypes.c_void_p, ctypes.POINTER(ctypes.c_char_p), ctypes.POINTER(ctypes.c_uint32)]
    lib.plist_free.argtypes = [ctypes.c_void_p]
    def dec():
        p = ctypes.c_void_p()
        lib.plist_from_bin(data, len(data), ctypes.byref(p))
        lib.plist_free(p)
    node = ctypes.c_void_p()
    lib.plist_from_bin(data, len(data), ctypes.byref(node))
    def enc():
        out = ctypes.c_char_p(); n = ctypes.c_uint32()
        lib.plist_to_bin(node, ctypes.byref(out), ctypes.byref(n))
        ctypes.CDLL(None).free(out)
    rows.append(("libplist (C)", measure(dec, 300), measure(enc, 300)))
except OSError as e:
    print(f"  libplist not found ({e}); install libplist-utils", file=sys.stderr)

for name, d, e in rows:
    print(f"  {name:<17} {d[0]:8.3f} ms / {d[1]:8.3f} ms   {e[0]:8.3f} ms / {e[1]:8.3f} ms")
