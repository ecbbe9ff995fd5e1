"""A training loop that checkpoints its state every N steps, and a reader in
another process that waits for each checkpoint.

    python3 checkpoint_loop.py STORE [STEPS]

The loop keeps a NumPy array (its "weights") and a step counter. Every 10
steps it commits both as one batch, so the store holds the weights and the
step of one and the same checkpoint, and makes it durable in the background:
the commit costs the loop a copy into the page cache, and the fdatasync runs
on a thread of the library while the loop goes on (start_sync). After a
power loss the store holds the newest checkpoint covered by a barrier that
returned, or a newer whole one. The reader waits for each new commit of
"step" and loads the pair as one consistent set.
"""

import multiprocessing
import sys
import time

import numpy as np

import regionstore

WEIGHTS = 1 << 18  # float64 values: 2 MiB
EVERY = 10


def train(path, steps):
    with regionstore.open(path, "rw") as store:
        weights = np.zeros(WEIGHTS)
        for step in range(1, steps + 1):
            weights += 0.5  # the work of one step
            time.sleep(0.002)
            if step % EVERY == 0:
                # The array's buffer goes to the store as it is: one copy,
                # into the page cache, and no wait for the disk.
                store.commit_batch({"weights": weights,
                                    "step": np.array([step], dtype=np.int64)},
                                   "none")
                # The fdatasync on a library thread; the handle completes it
                # at a later call (the next checkpoint, at the latest).
                store.start_sync()
        # The last checkpoint durable, and a failed background fdatasync
        # raised here rather than lost at close.
        store.sync()


def watch(path, checkpoints, ready, seen):
    with regionstore.open(path) as store:
        ready.set()
        generation = 0
        for _ in range(checkpoints):
            _, meta = store.wait_newer("step", generation, timeout=60)
            generation = meta.generation
            # The step and the weights of one checkpoint, never a mix.
            pair = store.load_set(["step", "weights"])
            step = int(np.frombuffer(pair["step"], dtype=np.int64)[0])
            weights = np.frombuffer(pair["weights"])
            assert np.all(weights == 0.5 * step), "a mixed checkpoint"
            # The loop may have moved on: the newest checkpoint is what counts.
            seen.put(step)
            if step == checkpoints * EVERY:
                break


def main():
    path = sys.argv[1]
    steps = int(sys.argv[2]) if len(sys.argv) > 2 else 100
    regionstore.create(path, 4096, {"weights": WEIGHTS * 8, "step": 8}, replace=True)
    context = multiprocessing.get_context("spawn")
    ready, seen = context.Event(), context.Queue()
    reader = context.Process(target=watch, args=(path, steps // EVERY, ready, seen))
    reader.start()
    ready.wait(60)
    train(path, steps)
    reader.join(120)
    steps_seen = []
    while not seen.empty():
        steps_seen.append(seen.get())
    print(f"reader saw checkpoints at steps {steps_seen}; exit code {reader.exitcode}")
    return 0 if reader.exitcode == 0 and steps_seen and steps_seen[-1] == steps else 1


if __name__ == "__main__":
    sys.exit(main())
