/**
 * Waiting on a condition the test cannot be told about by an event (a count in another object, a
 * row another process writes). The cap is generous on purpose: a passing test stops polling the
 * moment the condition holds, so only a failing test ever waits it out, and a machine busy with other
 * work never turns a slow pass into a failure.
 */

type Truthy<T> = Exclude<T, false | 0 | "" | null | undefined>;

/** Polls `check` every few milliseconds until it answers truthy, and answers that; throws after `ms`. */
export async function until<T>(check: () => T | Promise<T>, what: string, ms = 10_000): Promise<Truthy<T>> {
  const end = Date.now() + ms;
  for (;;) {
    const value = await check();
    if (value) return value as Truthy<T>;
    if (Date.now() > end) throw new Error(`${what}: still not so after ${ms} ms`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** What `promise` settles with, or a failure saying `what` did not happen within `ms`. */
export async function within<T>(promise: Promise<T>, what: string, ms = 10_000): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      promise,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`${what}: not within ${ms} ms`)), ms);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}
