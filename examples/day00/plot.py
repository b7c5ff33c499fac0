"""plot: Day 0's one plot, the loop's time against its length, drawn with
litkit.plot from the facts (make plots; litkit/plot.py says what it writes).
"""

import sys

from litkit import plot


def time(facts, ax, narrow):
    """The fastest time (µs) at each size, log-log; a row per size."""
    sizes = facts.keys_like(r"saxpy\.(\d+)\.us")
    us = [facts.fact(f"saxpy.{n}.us") for n in sizes]
    ax.loglog([int(n) for n in sizes], us, marker="o", color="#1b6ac9",
              label="saxpy")
    ax.set_xlabel("elements")
    ax.set_ylabel("µs (fastest of 5)")
    return "The loop's time", ["elements", "us"], [
        [int(n), t] for n, t in zip(sizes, us)]


if __name__ == "__main__":
    sys.exit(plot.main({"time": (time, 360, 360)}, sys.argv[1:],
                       "saxpy.1000.us", "Not yet measured: make measure"))
