/**
 * Group commit: what is handed in while a batch is being written waits for the next batch, so a
 * burst costs one transaction (on SQLite one sync of the log) rather than one each, and a lone item
 * is written at once. `write` answers one result per item, in order; when it throws, every item of
 * that batch fails with its error.
 */
export function groupCommit<T, R>(write: (batch: T[]) => Promise<R[]>): (item: T) => Promise<R> {
  let queue: { item: T; done: (result: R) => void; fail: (error: unknown) => void }[] = [];
  let writing = false;
  async function flush(): Promise<void> {
    writing = true;
    while (queue.length > 0) {
      const batch = queue;
      queue = [];
      try {
        const results = await write(batch.map((b) => b.item));
        for (const [i, b] of batch.entries()) b.done(results[i] as R);
      } catch (error) {
        for (const b of batch) b.fail(error);
      }
    }
    writing = false;
  }
  return (item) =>
    new Promise((done, fail) => {
      queue.push({ item, done, fail });
      if (!writing) void flush();
    });
}
