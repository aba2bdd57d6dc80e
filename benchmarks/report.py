"""The Markdown page of one benchmark run, rendered from its JSON document alone.

Rendering only reads the document, so a table can be regenerated from any saved
``benchmarks/results/*.json`` (``python -m benchmarks --render FILE``).
"""

from __future__ import annotations

from typing import Any

__all__ = ["markdown", "machine_line"]


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}%"


def _num(value: Any, digits: int = 2) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return str(value)


def machine_line(document: dict[str, Any]) -> str:
    """One sentence: hardware, software versions, commit and load at start."""
    m = document["machine"]
    versions = ", ".join(f"{name} {version}" for name, version in m["versions"].items()
                         if version)
    commit = (m.get("git_commit") or "unknown")[:10]
    dirty = " with uncommitted changes in the work tree" if m.get("git_dirty") else ""
    load = m.get("load_average_at_start")
    return (f"{m['cpu']}, {m['cpus']} CPUs, {m['platform']}; Python {m['python']}; "
            f"{versions}; commit {commit}{dirty}; load average at start "
            f"{load[0] if load else '-'}.")


def _psplib(results: list[dict[str, Any]]) -> list[str]:
    lines = ["## RCPSP on PSPLIB: gap to the best known makespan", "",
             "PyJobShop's CP-SAT solves the same instances in the same run, at the same "
             "limit and workers.", "",
             "| set | solver | instances | limit | at best known | proven optimal | "
             "mean gap | max gap | mean time | max time | all legal | final status |",
             "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---|---|"]
    published = []
    for result in results:
        figures = result.get("figures") or {}
        for name, found in figures.get("sets", {}).items():
            if "skipped" in found or not found.get("instances"):
                lines.append(f"| {name.upper()} | {found.get('skipped', 'no instances')} "
                             "| | | | | | | | | | |")
                continue
            sample = " (sample)" if figures.get("sample") else ""
            limit = f"{_num(figures['time_limit_s'], 0)} s"
            for who, label in (("ours", "schedsearch"), ("peer", "PyJobShop CP-SAT")):
                s = found.get(who)
                if not s or not s.get("instances"):
                    continue
                n = s["instances"]
                statuses = ", ".join(f"{k} {v}" for k, v in s.get("statuses", {}).items())
                lines.append(
                    f"| {name.upper()} | {label} | {n}{sample} | {limit} | "
                    f"{s['at_best_known']}/{n} | {s['proven_optimal']}/{n} | "
                    f"{_pct(s['mean_gap_pct'])} | {_pct(s['max_gap_pct'])} | "
                    f"{_num(s['mean_wall_s'])} s | {_num(s['max_wall_s'])} s | "
                    f"{'yes' if s['all_legal'] else 'NO'} | {statuses} |")
            if found.get("peer_missing"):
                lines.append(f"| {name.upper()} | PyJobShop CP-SAT | no answer on "
                             f"{found['peer_missing']} | | | | | | | | | |")
            published.append(f"- {name.upper()}, published: {found['published']}.")
    return [*lines, "", *published, ""]


def _peer(result: dict[str, Any]) -> list[str]:
    figures = result.get("figures") or {}
    lines = ["## Peer: PyJobShop (OR-Tools CP-SAT) on our workloads, VTCM made ample", ""]
    if "rows" not in figures:
        return [*lines, figures.get("skipped", "no figures"), ""]
    lines += [f"Same problem, time limit {_num(figures['time_limit_s'], 0)} s, "
              f"{figures['workers']} workers, seed {figures['seed']}; makespans in ns. "
              "Ratios are ours / peer: below 1 is better for us. Time to equal quality: "
              "when each first reached the worse of the two final makespans.", "",
              "| workload | ops | ours | peer | makespan ratio | ours: time to equal | "
              "peer: time to equal | time ratio | legal (ours, peer) |",
              "|---|---:|---:|---:|---:|---:|---:|---:|---|"]
    for row in figures["rows"]:
        legal = f"{'yes' if row['ours_legal'] else 'NO'}, " + (
            "-" if row.get("peer_legal") is None else
            "yes" if row["peer_legal"] else "NO")
        lines.append(
            f"| {row['workload']} x{row['factor']:g} | {row['ops']} | {row['ours_makespan']} "
            f"| {_num(row.get('peer_makespan'))} | {_num(row.get('makespan_ratio'), 3)} | "
            f"{_num(row.get('ours_time_to_equal_s'))} s | "
            f"{_num(row.get('peer_time_to_equal_s'))} s | "
            f"{_num(row.get('time_to_equal_ratio'), 3)} | {legal} |")
    return [*lines, ""]


def _verbatim(result: dict[str, Any]) -> list[str]:
    head = f"### {result['title']}"
    if "skipped" in result:
        return [head, "", f"Skipped: {result['skipped']}.", ""]
    return [head, "", f"`{result['command']}`: exit {result['exit_code']}, "
                      f"{result['wall_s']} s, peak RSS {result['peak_rss_mib']} MiB.", "",
            "```text", result.get("output", "").rstrip(), "```", ""]


def _costs(results: list[dict[str, Any]]) -> list[str]:
    lines = ["## What each benchmark cost", "",
             "| benchmark | wall s | CPU s | peak RSS MiB | exit |",
             "|---|---:|---:|---:|---|"]
    for r in results:
        if "skipped" in r:
            lines.append(f"| {r['name']} | | | | skipped |")
            continue
        status = "timed out" if r["timed_out"] else str(r["exit_code"])
        lines.append(f"| {r['name']} | {r['wall_s']} | {r['cpu_s']} | "
                     f"{r['peak_rss_mib']} | {status} |")
    return [*lines, ""]


def markdown(document: dict[str, Any]) -> str:
    """The whole page: machine, PSPLIB, peer, the colleagues' tables, and costs."""
    results = document["benchmarks"]
    ours = {"psplib", "peer"}
    lines = [f"# Benchmarks, {document['profile']} run of {document['started']}", "",
             f"Machine: {machine_line(document)}", "",
             f"Seed {document['seed']}, {document['workers']} workers, "
             f"{document.get('wall_s', '-')} s in all. Figures from a shared machine are "
             "noisy; the load average above says how shared.", ""]
    psplib = [r for r in results if r["name"].startswith("psplib") and "figures" in r]
    if psplib:
        lines += _psplib(psplib)
    for result in results:
        if result["name"].startswith("peer"):
            lines += _peer(result)
    others = [r for r in results if r["name"].split("-")[0] not in ours]
    failed = [r for r in results if r["name"].split("-")[0] in ours and "figures" not in r
              and "skipped" not in r]
    if others or failed:
        lines += ["## Scaling and speed (each script's own table, verbatim)", ""]
        for result in [*others, *failed]:
            lines += _verbatim(result)
    lines += _costs(results)
    return "\n".join(lines)
