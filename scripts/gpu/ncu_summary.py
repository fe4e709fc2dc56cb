#!/usr/bin/env python3
"""Per-kernel totals of an Nsight Compute CSV (`ncu --metrics gpu__time_duration.sum --csv`), largest first:
time, launches, kernel name with its grid and block. scripts/gpu/check.sh's profile step prints these.
  ncu_summary.py FILE.csv [TOP]"""
import collections, csv, io, re, sys


def main():
    path, top = sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 15
    rows = list(csv.DictReader(io.StringIO("".join(l for l in open(path) if l.startswith('"')))))
    by_kernel = collections.defaultdict(lambda: [0, 0.0])
    total = 0.0
    for r in rows:
        if r.get("Metric Name") != "gpu__time_duration.sum":
            continue
        name = re.sub(r"\(.*", "", r["Kernel Name"].replace("void ", "").replace("unnamed>::", ""))
        key = f"{name[:60]} grid {r['Grid Size']} block {r['Block Size']}"
        ns = float(r["Metric Value"].replace(",", ""))
        by_kernel[key][0] += 1
        by_kernel[key][1] += ns
        total += ns
    print(f"{path}: {len(rows)} kernels, {total / 1e6:.3f} ms")
    for key, (n, ns) in sorted(by_kernel.items(), key=lambda kv: -kv[1][1])[:top]:
        print(f"{ns / 1e6:9.3f} ms {100 * ns / total:5.1f} % {n:5d}x  {key}")


if __name__ == "__main__":
    main()
