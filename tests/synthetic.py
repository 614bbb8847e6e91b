"""Synthetic traces for tests and benchmarks (no Django needed)."""

from __future__ import annotations

from pathlib import Path


def synthetic_swf(path: Path, jobs: int = 5000, procs: int = 128) -> Path:
    """A valid SWF with `jobs` jobs, deterministic, big enough for the simulator to report progress
    and consult should_stop (every 1000 event instants)."""
    lines = [f"; MaxProcs: {procs}", f"; MaxNodes: {procs}"]
    for i in range(1, jobs + 1):
        size = 1 + (i * 7) % (procs // 4)   # load about 0.8: queues stay short, runs stay fast
        runtime = 60 + (i * 37) % 600
        lines.append(f"{i} {i * 60} -1 {runtime} {size} -1 -1 {size} {runtime + 600} -1 1 {1 + i % 9} 1 -1 1 -1 -1 -1")
    path.write_text("\n".join(lines) + "\n")
    return path
