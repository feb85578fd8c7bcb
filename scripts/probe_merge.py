#!/usr/bin/env python3
"""Joins the probe runs that scripts/gpu_probe.sh made (one per group of
rules, each `oomlint probe --format json`) and its env.txt into one results
file, probe/results/<gpu>-torch<version>.json, as one full run would have
written it, plus where and how it was measured:

    scripts/probe_merge.py OUT.json ENV.txt RUN.json... [--missing RULE/SCENARIO=REASON ...]

Every run must come from the same device and torch and agree on every
scenario it measured; a scenario measured twice is refused. --missing names
scenarios no run measured, with the reason, so that readers and `oomlint
rule` can tell "not measured" from "no cost"."""
import json
import re
import sys


def environment(path):
    env = {}
    with open(path, encoding="utf-8") as f:
        text = f.read()
    m = re.search(r"^(.+), ([\d.]+), (\d+) MiB", text, re.M)
    if m and m.group(1) != "name":
        env.update(gpu=m.group(1), driver=m.group(2), gpu_memory_mib=int(m.group(3)))
    m = re.search(r"^torch (\S+) cuda (\S+) cudnn (\S+)", text, re.M)
    if m:
        env.update(torch=m.group(1), cuda=m.group(2), cudnn=m.group(3))
    m = re.search(r"^python (\S+)", text, re.M)
    if m:
        env["python"] = m.group(1)
    m = re.search(r"capability (\S+) memory (\d+) multiprocessors (\d+)", text)
    if m:
        env.update(capability=m.group(1), multiprocessors=int(m.group(3)))
    m = re.search(r'^PRETTY_NAME="(.+)"', text, re.M)
    if m:
        env["os"] = m.group(1)
    m = re.search(r"^(\d{4}-\d\d-\d\dT[\d:]+Z)", text, re.M)
    if m:
        env["date"] = m.group(1)
    return env


def main(argv):
    missing = []
    if "--missing" in argv:
        i = argv.index("--missing")
        missing, argv = argv[i + 1:], argv[:i]
    if len(argv) < 3:
        sys.stderr.write(__doc__)
        return 2
    out, env_path, runs = argv[0], argv[1], argv[2:]
    merged = None
    seen = set()
    for path in runs:
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
        head = {k: doc[k] for k in ("device", "device_kind", "torch", "iterations")}
        if merged is None:
            merged = dict(head, scenarios=[])
        elif {k: merged[k] for k in head} != head:
            raise SystemExit(f"{path}: another device, torch or iteration count: {head}")
        for s in doc["scenarios"]:
            key = (s["rule"], s["scenario"])
            if key in seen:
                raise SystemExit(f"{path}: {key} measured twice")
            if s.get("agree") is not True:
                raise SystemExit(f"{path}: {key} did not agree; a bug in the scenario, not a figure")
            seen.add(key)
            merged["scenarios"].append(s)
    merged["scenarios"].sort(key=lambda s: (s["rule"], s["scenario"]))
    merged["environment"] = environment(env_path)
    merged["runs"] = len(runs)
    merged["not_measured"] = []
    for item in missing:
        what, _, why = item.partition("=")
        rule, _, scenario = what.partition("/")
        merged["not_measured"].append({"rule": rule, "scenario": scenario, "why": why})
    with open(out, "w", encoding="utf-8") as f:
        json.dump(merged, f, indent=1)
        f.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
