/**
 * Group commit (src/db/group.commit.ts), what the prober's and the webhooks' records share: a lone
 * item is written at once, what arrives while a batch is being written goes in the next one, each
 * caller gets its own item's result, and a failed batch fails its own items only.
 */
import { expect, test } from "@jest/globals";
import { groupCommit } from "../../src/db/group.commit.ts";

/** Once every promise reaction already queued has run. */
const settled = () => new Promise((resolve) => setImmediate(resolve));

/** A writer whose batches end when the test says so. */
function heldWriter() {
  const batches: number[][] = [];
  const pending: { resolve: () => void; reject: (e: Error) => void }[] = [];
  const write = groupCommit(async (batch: number[]) => {
    batches.push(batch);
    await new Promise<void>((resolve, reject) => pending.push({ resolve, reject }));
    return batch.map((n) => n * 10);
  });
  return { write, batches, pending };
}

test("a lone item is written at once; those that come during a write share the next batch, in order", async () => {
  const { write, batches, pending } = heldWriter();
  const first = write(1);
  expect(batches).toEqual([[1]]);
  const later = [write(2), write(3), write(4)];
  expect(batches).toEqual([[1]]);
  pending[0]?.resolve();
  expect(await first).toBe(10);
  await settled();
  expect(batches).toEqual([[1], [2, 3, 4]]);
  pending[1]?.resolve();
  expect(await Promise.all(later)).toEqual([20, 30, 40]);
  // Idle again: the next item starts a batch of its own at once.
  const next = write(5);
  expect(batches.at(-1)).toEqual([5]);
  pending[2]?.resolve();
  expect(await next).toBe(50);
});

test("a batch that fails fails its own items, and the next batch is still written", async () => {
  const { write, batches, pending } = heldWriter();
  const first = write(1);
  const second = write(2);
  pending[0]?.reject(new Error("disk full"));
  await expect(first).rejects.toThrow("disk full");
  await settled();
  expect(batches).toEqual([[1], [2]]);
  pending[1]?.resolve();
  expect(await second).toBe(20);
});
