#!/usr/bin/python3
"""Runs a program under the seccomp filters dist/systemd/folio-edge.service asks systemd for.

    seccomp-exec.py [--action kill|eperm] -- PROGRAM ARGS...

Loads, as systemd does (one filter per setting; the kernel applies the strictest answer):
  - SystemCallFilter=@system-service, then ~@privileged: an allow list, expanded from
    `systemd-analyze syscall-filter` (this machine's systemd); other calls kill the process
    (--action kill, systemd's default, the stricter check) or fail with EPERM (--action eperm,
    the unit's SystemCallErrorNumber=EPERM);
  - MemoryDenyWriteExecute=yes: mmap with PROT_WRITE|PROT_EXEC, mprotect/pkey_mprotect adding
    PROT_EXEC, and shmat with SHM_EXEC fail with EPERM;
  - RestrictAddressFamilies=AF_INET AF_INET6 AF_UNIX: socket() of another family fails with
    EAFNOSUPPORT;
  - NoNewPrivileges=yes (PR_SET_NO_NEW_PRIVS, which libseccomp sets before loading);
then execs PROGRAM. Needs Debian's python3-seccomp (run with /usr/bin/python3).
"""
import errno
import os
import re
import subprocess
import sys

import seccomp

PROT_WRITE, PROT_EXEC, SHM_EXEC = 0x2, 0x4, 0o100000
FAMILIES = {1, 2, 10}  # AF_UNIX, AF_INET, AF_INET6


def syscall_groups():
    """Every group `systemd-analyze syscall-filter` lists: name -> its members (calls and @groups)."""
    out = subprocess.run(["systemd-analyze", "syscall-filter", "--no-pager"], check=True, capture_output=True, text=True).stdout
    groups, current = {}, None
    for line in out.splitlines():
        if re.match(r"^@[\w-]+$", line):
            current = groups.setdefault(line, [])
        elif current is not None and line.startswith("    ") and not line.strip().startswith("#"):
            current.append(line.strip())
        elif not line.strip():
            current = None
    return groups


def expand(name, groups, seen=None):
    seen = set() if seen is None else seen
    if not name.startswith("@"):
        return {name}
    if name in seen:
        return set()
    seen.add(name)
    if name not in groups:
        sys.exit(f"seccomp-exec: systemd-analyze does not know the group {name}")
    return set().union(*(expand(m, groups, seen) for m in groups[name]))


def allow_list(default_action):
    groups = syscall_groups()
    allowed = expand("@system-service", groups) - expand("@privileged", groups)
    f = seccomp.SyscallFilter(defaction=default_action)
    for name in sorted(allowed):
        try:
            f.add_rule(seccomp.ALLOW, name)
        except (RuntimeError, ValueError):
            pass  # not a call of this architecture (or unknown to this libseccomp)
    return f, len(allowed)


def deny_write_execute():
    f = seccomp.SyscallFilter(defaction=seccomp.ALLOW)
    eperm = seccomp.ERRNO(errno.EPERM)
    f.add_rule(eperm, "mmap", seccomp.Arg(2, seccomp.MASKED_EQ, PROT_WRITE | PROT_EXEC, PROT_WRITE | PROT_EXEC))
    for name in ("mprotect", "pkey_mprotect"):
        f.add_rule(eperm, name, seccomp.Arg(2, seccomp.MASKED_EQ, PROT_EXEC, PROT_EXEC))
    f.add_rule(eperm, "shmat", seccomp.Arg(2, seccomp.MASKED_EQ, SHM_EXEC, SHM_EXEC))
    return f


def restrict_families():
    f = seccomp.SyscallFilter(defaction=seccomp.ALLOW)
    # Every family but the three: below AF_UNIX's, between them, and above AF_INET6 (< 64 on Linux).
    for family in range(0, 64):
        if family not in FAMILIES:
            f.add_rule(seccomp.ERRNO(errno.EAFNOSUPPORT), "socket", seccomp.Arg(0, seccomp.EQ, family))
    return f


def main(argv):
    action = "kill"
    if argv[:1] == ["--action"]:
        action, argv = argv[1], argv[2:]
    if argv[:1] == ["--"]:
        argv = argv[1:]
    if not argv or action not in ("kill", "eperm"):
        sys.exit("usage: seccomp-exec.py [--action kill|eperm] -- PROGRAM ARGS...")
    default = seccomp.KILL_PROCESS if action == "kill" else seccomp.ERRNO(errno.EPERM)
    allow, count = allow_list(default)
    print(f"seccomp-exec: {count} calls allowed (@system-service ~@privileged), others: {action}", file=sys.stderr)
    # The strict allow list last: the calls the other two filters make must pass it.
    restrict_families().load()
    deny_write_execute().load()
    allow.load()
    os.execv(argv[0], argv)


if __name__ == "__main__":
    main(sys.argv[1:])
