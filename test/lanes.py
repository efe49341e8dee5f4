"""Runs independent test jobs side by side on a fixed number of workers (lanes): each job a bash
command line (its steps joined with &&), started in the order given as soon as a lane is free,
its output printed whole when it ends (never interleaved), with its time.  Exits non-zero when
any job failed, after all ended.

make test splits its pytest passes into jobs (a vendor's suites, or part of them): each is one
process whose time goes mostly to one thread (Python, the dispatcher), so a 2-core machine runs
two at once in little more than the longer one's time.  Listing the jobs longest first, as the
Makefile does, keeps both lanes busy to the end (the longest-first rule of list scheduling); the
summary at the end shows each job's time and how long each lane stood idle, which is what to
look at when the split needs redrawing.

    python test/lanes.py [--lanes N] "cmd1 && cmd2" "cmd3" "cmd4"
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from typing import IO


@dataclass
class Job:
    index: int
    command: str
    log: IO[str] = field(init=False)
    process: subprocess.Popen[bytes] = field(init=False)
    lane: int = 0
    start: float = 0.0
    seconds: float = 0.0
    status: int | None = None

    def launch(self, lane: int) -> None:
        self.lane = lane
        self.log = tempfile.TemporaryFile(mode="w+", prefix=f"job{self.index}-")
        self.start = time.monotonic()
        self.process = subprocess.Popen(
            ["bash", "-eo", "pipefail", "-c", self.command],
            stdout=self.log,
            stderr=subprocess.STDOUT,
        )


def run(commands: list[str], lanes: int) -> int:
    queue = [Job(index, command) for index, command in enumerate(commands, 1)]
    free = list(range(lanes, 0, -1))
    running: list[Job] = []
    finished: list[Job] = []
    began = time.monotonic()
    while queue or running:
        while queue and free:
            job = queue.pop(0)
            job.launch(free.pop())
            running.append(job)
        time.sleep(0.2)
        for job in list(running):
            status = job.process.poll()
            if status is None:
                continue
            running.remove(job)
            job.status = status
            job.seconds = time.monotonic() - job.start
            free.append(job.lane)
            job.log.seek(0)
            print(
                f"== job {job.index} (lane {job.lane}, {job.seconds:.0f} s, exit status {status}): "
                f"{job.command}",
                flush=True,
            )
            sys.stdout.write(job.log.read())
            print(f"== job {job.index} ended", flush=True)
            job.log.close()
            finished.append(job)
    total = time.monotonic() - began
    print(f"== lanes.py: {len(finished)} jobs on {lanes} lanes in {total:.0f} s")
    for job in sorted(finished, key=lambda j: j.index):
        first = job.command.split(" && ")[0].removeprefix("echo == ")
        shown = first if len(first) <= 90 else first[:87] + "..."
        print(f"  job {job.index:2d}  lane {job.lane}  {job.seconds:5.0f} s  {shown}")
    for lane in range(1, lanes + 1):
        seconds = sum(job.seconds for job in finished if job.lane == lane)
        print(f"  lane {lane}: busy {seconds:.0f} s, idle {max(0.0, total - seconds):.0f} s")
    failed = [job.index for job in finished if job.status != 0]
    if failed:
        print(f"lanes.py: job(s) {', '.join(map(str, failed))} failed", file=sys.stderr)
        return 1
    return 0


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--lanes",
        type=int,
        default=min(2, os.cpu_count() or 1),
        help="jobs run at once (default: 2, or 1 on a 1-core machine)",
    )
    parser.add_argument("jobs", nargs="*", metavar="JOB", help="a bash command line")
    options = parser.parse_args(argv)
    if not options.jobs:
        parser.error("no jobs given")
    if options.lanes < 1:
        parser.error("--lanes must be at least 1")
    return run(options.jobs, options.lanes)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
