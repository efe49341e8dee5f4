"""Runs independent test passes side by side: one lane per argument, each a bash command line
(its steps joined with &&), all lanes at once, every lane's output printed whole when it ends
(never interleaved), with its time.  Exits non-zero when any lane failed, after all ended.

make test runs its per-vendor pytest passes in two lanes: each pass is one process whose time
goes mostly to one thread (Python, the dispatcher), so a 2-core machine runs two at once in
little more than the longer one's time.

    python test/lanes.py "cmd1 && cmd2" "cmd3"
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
import time


def main(lanes: list[str]) -> int:
    if not lanes:
        print("lanes.py: no lanes given", file=sys.stderr)
        return 2
    running = []
    for index, command in enumerate(lanes, 1):
        log = tempfile.TemporaryFile(mode="w+", prefix=f"lane{index}-")
        process = subprocess.Popen(
            ["bash", "-eo", "pipefail", "-c", command], stdout=log, stderr=subprocess.STDOUT
        )
        running.append((index, command, process, log, time.monotonic()))
    failed = []
    pending = list(running)
    while pending:
        for entry in list(pending):
            index, command, process, log, start = entry
            status = process.poll()
            if status is None:
                continue
            pending.remove(entry)
            seconds = time.monotonic() - start
            log.seek(0)
            print(f"== lane {index} ({seconds:.0f} s, exit status {status}): {command}", flush=True)
            sys.stdout.write(log.read())
            print(f"== lane {index} ended", flush=True)
            log.close()
            if status != 0:
                failed.append(index)
        time.sleep(0.2)
    if failed:
        print(f"lanes.py: lane(s) {', '.join(map(str, failed))} failed", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
