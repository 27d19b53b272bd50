"""Medians and ranges, per shape, of the figures several `connecta-bench
run` reports give for the floor of the added cost (docs/performance.md
"The floor, measured" and "The HTTP stacks alone" quote them):

    for i in 1 2 3 4 5 6; do
      target/release/connecta-bench run --quick --shapes small,large,wide --out-dir /tmp/floor$i
    done
    python3 scripts/report_medians.py /tmp/floor*

Each report's first target is taken as connecta. A figure a report does
not have (a relay not measured, a failed load level) is left out of that
figure's median; a figure no report has is not printed.
"""

import argparse
import json
import os
import statistics


def measured(figure):
    return figure.get("value") if figure and figure.get("status") == "measured" else None


def p50(figure):
    latency = (measured(figure) or {}).get("latency")
    return latency and latency.get("p50Ms")


def at(report, in_flight, pick):
    """`pick` of the load level at `in_flight` of a measured report."""
    if report is None:
        return None
    for level in report.get("load", []):
        value = measured(level)
        if value and value.get("inFlight") == in_flight:
            return pick(value)
    return None


def figures(shape):
    """The figures of one shape of one report, by name."""
    alone = measured(shape["downstream"])
    # Reports before the HTTP relay called the TCP relay's figure `relayed`.
    tcp = measured(shape.get("tcpRelayed") or shape.get("relayed"))
    http = measured(shape.get("httpRelayed"))
    target = shape["targets"][0] if shape["targets"] else {}
    out = {}

    def hop(relayed):
        if relayed is None:
            return None
        through, straight = p50(relayed["directCall"]), p50(relayed["alongside"])
        return through - straight if through is not None and straight is not None else None

    out["a bare hop adds, p50 ms (TCP relay, in turn)"] = hop(tcp)
    out["the hop with HTTP adds, p50 ms (HTTP relay, in turn)"] = hop(http)
    ours, theirs = p50(target.get("directCall", {})), alone and p50(alone["directCall"])
    out["connecta adds, p50 ms"] = ours - theirs if ours is not None and theirs is not None else None
    for n in (1, 64):
        for name, report in (("TCP relay", tcp), ("HTTP relay", http), ("downstream", alone),
                             ("connecta", target)):
            out[f"server CPU per call at {n} in flight, µs: {name}"] = at(
                report, n, lambda l: l.get("serverCpuUsPerCall"))
    base = at(alone, 64, lambda l: l.get("throughputPerSec"))
    base_p99 = at(alone, 64, lambda l: (l.get("latency") or {}).get("p99Ms"))
    for name, report in (("TCP relay", tcp), ("HTTP relay", http), ("connecta", target)):
        tp = at(report, 64, lambda l: l.get("throughputPerSec"))
        out[f"throughput at 64, share of the downstream's: {name}"] = (
            tp / base if tp is not None and base else None)
        p99 = at(report, 64, lambda l: (l.get("latency") or {}).get("p99Ms"))
        out[f"p99 at 64, times the downstream's: {name}"] = (
            p99 / base_p99 if p99 is not None and base_p99 else None)
    return out


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("reports", nargs="+", help="directories holding report.json")
    args = p.parse_args()
    by_shape = {}
    for directory in args.reports:
        with open(os.path.join(directory, "report.json")) as f:
            report = json.load(f)
        for shape in report["shapes"]:
            rows = by_shape.setdefault(shape["shape"]["name"], {})
            for name, value in figures(shape).items():
                if value is not None:
                    rows.setdefault(name, []).append(value)
    for shape, rows in by_shape.items():
        print(f"{shape} ({len(args.reports)} reports)")
        for name, values in rows.items():
            print(f"  {name}: median {statistics.median(values):.3f} "
                  f"(range {min(values):.3f}–{max(values):.3f}, {len(values)} reports)")


if __name__ == "__main__":
    main()
