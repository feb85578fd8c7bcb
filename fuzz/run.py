#!/usr/bin/env python3
"""Runs oomlint's fuzzers (`make fuzz`): builds the seed corpora, then runs
each fuzzer for --seconds with its dictionary, growing a corpus under
build/fuzz/corpus/ that later runs start from. Prints the executions of each
and exits 1 when a fuzzer found a crash, a leak, a hang (an input taking
longer than --timeout seconds) or an input needing more than --rss-mb MB;
the input is left in build/fuzz/artifacts/."""
import argparse
import os
import re
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))

FUZZERS = {
    # name: (max_len, dictionary)
    "lint": (262144, "python.dict"),
    "config": (65536, "toml.dict"),
    "explain": (262144, "explain.dict"),
}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dir", required=True, help="build/fuzz")
    ap.add_argument("--seconds", type=int, default=60, help="per fuzzer")
    ap.add_argument("--jobs", type=int, default=1, help="parallel fuzzing processes per fuzzer")
    ap.add_argument("--timeout", type=int, default=30, help="seconds one input may take")
    ap.add_argument("--rss-mb", type=int, default=4096)
    ap.add_argument("--only", choices=sorted(FUZZERS), help="run just this fuzzer")
    args = ap.parse_args()
    seeds = os.path.join(args.dir, "seeds")
    subprocess.run([sys.executable, os.path.join(HERE, "seeds.py"), "--lint", os.path.join(seeds, "lint"),
                    "--config", os.path.join(seeds, "config"), "--explain", os.path.join(seeds, "explain")],
                   check=True)
    artifacts = os.path.join(args.dir, "artifacts") + os.sep
    os.makedirs(artifacts, exist_ok=True)
    failed = False
    for name, (max_len, dictionary) in FUZZERS.items():
        if args.only and name != args.only:
            continue
        corpus = os.path.join(args.dir, "corpus", name)
        os.makedirs(corpus, exist_ok=True)
        cmd = [os.path.join(args.dir, f"{name}_fuzzer"), corpus, os.path.join(seeds, name),
               f"-max_total_time={args.seconds}", f"-max_len={max_len}", f"-timeout={args.timeout}",
               f"-rss_limit_mb={args.rss_mb}", f"-dict={os.path.join(HERE, dictionary)}",
               f"-artifact_prefix={artifacts}{name}-", "-print_final_stats=1"]
        if args.jobs > 1:
            cmd.append(f"-fork={args.jobs}")
        print(f"fuzz: {name} for {args.seconds} s", flush=True)
        start = time.time()
        proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, errors="replace")
        out = proc.stdout
        execs = re.findall(r"stat::number_of_executed_units:\s*(\d+)", out)
        total = sum(int(x) for x in execs)
        if not execs:
            # -fork=N: the parent's status lines count every job's executions
            total_m = re.findall(r"#(\d+)(?::\s+cov:|\s+(?:DONE|pulse|NEW|REDUCE|INITED))", out)
            total = int(total_m[-1]) if total_m else 0
        print(f"fuzz: {name}: {total} executions in {time.time() - start:.0f} s, exit {proc.returncode}")
        if proc.returncode != 0:
            failed = True
            print(out[-6000:])
            print(f"fuzz: {name} found a problem; the input is in {artifacts}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
