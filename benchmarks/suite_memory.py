"""Peak memory of a command and everything it starts, as the machine sees it: run beside `make test`.

    python3 benchmarks/suite_memory.py -- make test

Samples /proc once a second while the command runs and prints, above the idle machine measured just before it
starts: memory in use (MemTotal − MemAvailable: what the machine must have; page cache the kernel can drop is not
counted) and the sum of every process's Pss (shared pages split between their processes; file-backed pages of
shared libraries and browser binaries included, so an upper bound). Sampling reads every process's smaps_rollup,
so the command runs a little slower. Nothing here is a test; figures go to benchmarks/RESULTS.md by hand.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time


def memory_in_use_kib() -> int:
    info = {}
    with open("/proc/meminfo") as meminfo:
        for line in meminfo:
            key, value = line.split(":")
            info[key] = int(value.split()[0])
    return info["MemTotal"] - info["MemAvailable"]


def pss_sum_kib() -> int:
    total = 0
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/smaps_rollup") as rollup:
                for line in rollup:
                    if line.startswith("Pss:"):
                        total += int(line.split()[1])
                        break
        except OSError:  # the process ended, or is not ours to read
            continue
    return total


def main(command: list[str]) -> int:
    idle_used = idle_pss = None
    for _ in range(3):  # the idle machine: the least of three readings half a second apart
        used, pss = memory_in_use_kib(), pss_sum_kib()
        idle_used = used if idle_used is None else min(idle_used, used)
        idle_pss = pss if idle_pss is None else min(idle_pss, pss)
        time.sleep(0.5)
    started = time.monotonic()
    process = subprocess.Popen(command)
    peak_used = peak_pss = (0, 0.0)
    while process.poll() is None:
        at = time.monotonic() - started
        peak_used = max(peak_used, (memory_in_use_kib() - idle_used, at))
        peak_pss = max(peak_pss, (pss_sum_kib() - idle_pss, at))
        time.sleep(1)
    print(
        f"exit {process.returncode} after {time.monotonic() - started:.0f} s; above the idle machine: "
        f"memory in use {peak_used[0] / 1024:.0f} MiB at its peak ({peak_used[1]:.0f} s in), "
        f"Pss summed {peak_pss[0] / 1024:.0f} MiB ({peak_pss[1]:.0f} s in)",
        file=sys.stderr,
    )
    return process.returncode


if __name__ == "__main__":
    arguments = sys.argv[1:]
    if arguments[:1] == ["--"]:
        arguments = arguments[1:]
    if not arguments:
        sys.exit(__doc__)
    sys.exit(main(arguments))
