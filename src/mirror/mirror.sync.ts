/**
 * One sync of one source, claimed by this replica: the upstream paged from where the last committed
 * step left it, each entry written through the provider writes (intake, PATCH, lifecycle; the same
 * rules, versions and event log as an owner's) with the run's step in the same transaction.
 *
 * MCP_REGISTRY: `GET {url}/v0.1/servers?updated_since=<mark>&include_deleted=true&limit=100&cursor=…`;
 * a server's latest version is what its provider holds. The run's mark is the newest `updatedAt` it
 * saw; an entry whose `updatedAt` was applied already changes nothing, so pages that overlap are safe.
 *
 * A page's entries are written in its order, on PostgreSQL a few at once (`AT_ONCE`): each begins
 * once the one before has only the database left to wait for, and its step waits for that one to
 * commit (StepOrder), so the steps commit in order and a failure stops the ones after it. Two
 * entries of one server name, or of one provider code, are never written at once. What a page
 * wrote is announced (the response cache emptied, the feed woken) once, after its last entry, so
 * reads stay cached while a sync runs.
 */
import type { Db, Queryable } from "../db/client.ts";
import { codeOf } from "../errors.ts";
import { type FeedNote, withOutbox } from "../feed/feed.outbox.ts";
import type { Outbound } from "../outbound/outbound.ts";
import { changeLifecycle } from "../providers/provider.lifecycle.ts";
import { type Intake, validatePatch } from "../providers/provider.rules.ts";
import { intakeProvider, patchProvider } from "../providers/provider.write.ts";
import {
  changedUpstream,
  codeOfName,
  filteredOut,
  lifecycleOfStatus,
  type Mapped,
  type McpEntry,
  type MirrorFilter,
  mapMcpServer,
  readMcpEntry,
  wholePatch,
} from "./mirror.rules.ts";
import {
  advance,
  type Claim,
  type EntryRow,
  entryByName,
  finishRun,
  nextPage,
  type Outcome,
  recordEntry,
  type SourceRow,
  type Step,
  startRun,
} from "./mirror.store.ts";

/** Entries asked of an upstream a page: the most its API gives. */
export const PAGE_SIZE = 100;

/**
 * Entries of a page written at once. An entry's write on PostgreSQL is a score of round trips and a
 * commit's flush, mostly waited for: a few at once keep the process busy (docs/performance.md, "The
 * mirror at scale"). SQLite's one connection runs one transaction at a time.
 */
export const AT_ONCE: Record<Db["dialect"], number> = { sqlite: 1, postgresql: 4 };

export interface SyncDeps {
  db: Db;
  outbound: Outbound;
  /** Publishes committed writes: the response cache forgets, the feed announces. */
  announce: (notes: FeedNote[]) => Promise<void>;
  /** Extends the lease; called between pages. */
  renew: () => Promise<void>;
  /** Told after each entry, for progress (the CLI's bar). */
  onEntry?: (outcome: Outcome) => void;
  /** Whether the run should stop now (the replica is shutting down). */
  stopped?: () => boolean;
}

/** An upstream that could not be read: the message is in plain words and goes to `lastErrors`. */
export class UpstreamError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "UpstreamError";
  }
}

/** An upstream's refusal in plain words: a 401 or 403 says what the source's credential has to do with it. */
export function refusal(url: string, status: number): UpstreamError {
  const why =
    status === 401
      ? " (401 Unauthorized: the upstream needs a credential, or refused the source's; set or replace it)"
      : status === 403
        ? " (403 Forbidden: the source's credential may not read this)"
        : "";
  return new UpstreamError(`${url} answered ${status}${why}`);
}

async function getJson(outbound: Outbound, url: string): Promise<Record<string, unknown>> {
  const answer = await outbound.get(url, { accept: "application/json" }).catch((error: Error) => {
    throw new UpstreamError(`${url}: ${error.message}`);
  });
  if (answer.status !== 200) throw refusal(url, answer.status);
  try {
    const body = JSON.parse(answer.body) as unknown;
    if (typeof body !== "object" || body === null || Array.isArray(body)) throw new Error("not an object");
    return body as Record<string, unknown>;
  } catch {
    throw new UpstreamError(`${url} answered something that is not a JSON object`);
  }
}

/** The newer of two RFC 3339 times (as text; both from one upstream, so they compare as instants). */
function newer(a: string | null, b: string | null): string | null {
  if (a === null) return b;
  if (b === null) return a;
  return Date.parse(b) > Date.parse(a) ? b : a;
}

/** Runs (or resumes) a sync of the claimed source to its end; false when it stopped first. */
export async function syncSource(deps: SyncDeps, claim: Claim, source: SourceRow): Promise<boolean> {
  let since = source.runSince;
  if (since === null) {
    since = source.mark ?? "";
    await startRun(deps.db, claim, since);
    source = { ...source, runCursor: null, runOffset: 0, runHigh: source.mark };
  }
  let cursor = source.runCursor;
  let offset = source.runOffset;
  let high = source.runHigh;
  for (;;) {
    if (deps.stopped?.()) return false;
    const query = new URLSearchParams({ limit: String(PAGE_SIZE), include_deleted: "true" });
    if (since) query.set("updated_since", since);
    if (cursor) query.set("cursor", cursor);
    const page = await getJson(deps.outbound, `${source.url}/v0.1/servers?${query}`);
    if (!Array.isArray(page.servers)) throw new UpstreamError(`${source.url}/v0.1/servers answered no servers list`);
    const items = page.servers as unknown[];
    const applied = await applyPage(deps, claim, source, { items, offset, cursor, high });
    high = applied.high;
    if (applied.stopped) return false;
    const next = (page.metadata as { nextCursor?: unknown } | undefined)?.nextCursor;
    if (typeof next !== "string" || next === "" || items.length === 0) break;
    cursor = next;
    offset = 0;
    // The page boundary is a step of its own: a run that fails on the next page resumes there.
    await nextPage(deps.db, claim, cursor);
    await deps.renew();
  }
  await finishRun(deps.db, claim, { mark: high, next: new Date(Date.now() + source.intervalSeconds * 1000) });
  return true;
}

/**
 * A page's entries from `offset` on, in order, `AT_ONCE` at most at a time (see the file's header);
 * answers the newest mark seen, and whether the run was stopped before the page's end. A failed
 * entry stops the page: the entries after it roll back, and its error is thrown once the others end.
 */
async function applyPage(
  deps: SyncDeps,
  claim: Claim,
  source: SourceRow,
  page: { items: unknown[]; offset: number; cursor: string | null; high: string | null },
): Promise<{ high: string | null; stopped: boolean }> {
  const notes: FeedNote[] = [];
  const run: SyncDeps = { ...deps, announce: async (noted) => void notes.push(...noted) };
  const limit = AT_ONCE[deps.db.dialect];
  const writing = new Set<{ keys: string[]; done: Promise<void> }>();
  let failure: { at: number; error: unknown } | undefined;
  let high = page.high;
  let stopped = false;
  /** The previous entry committed, and its writes begun (or its end). */
  let previous: { ended: Promise<void>; begun: Promise<void> } = { ended: Promise.resolve(), begun: Promise.resolve() };
  try {
    for (let i = page.offset; i < page.items.length && !failure; i++) {
      if (deps.stopped?.()) {
        stopped = true;
        break;
      }
      // What waits on the event loop (requests) runs between two entries, not after a page of them.
      await new Promise((resolve) => setImmediate(resolve));
      const item = page.items[i];
      const entry = readMcpEntry(item);
      const keys = entry ? [entry.name, codeOfName(entry.name, false)] : [];
      const clash = () => [...writing].find((w) => w.keys.some((k) => keys.includes(k)));
      while (writing.size >= limit || clash()) await Promise.race([...writing].map((w) => w.done));
      await previous.begun;
      if (failure) break;
      high = newer(high, entry?.updatedAt ?? null);
      const ended = settleable();
      const begun = settleable();
      const order = { from: i, previous: previous.ended };
      previous = { ended: ended.promise, begun: begun.promise };
      const at = i;
      const done = applyEntry(
        run,
        claim,
        source,
        item,
        entry,
        { high, cursor: page.cursor, offset: i + 1, order },
        begun.resolve,
      )
        .then(
          (outcome) => {
            ended.resolve();
            deps.onEntry?.(outcome);
          },
          (error: unknown) => {
            ended.reject(error);
            if (!failure || at < failure.at) failure = { at, error };
          },
        )
        .finally(() => {
          begun.resolve();
          writing.delete(flight);
        });
      const flight = { keys, done };
      writing.add(flight);
    }
    await Promise.all([...writing].map((w) => w.done));
  } finally {
    if (notes.length > 0) await deps.announce(inOrder(notes));
  }
  if (failure) throw failure.error;
  return { high, stopped };
}

/** A promise with its settlers; a rejection nobody waits for is not an unhandled one. */
function settleable(): { promise: Promise<void>; resolve: () => void; reject: (error: unknown) => void } {
  let resolve!: () => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<void>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  promise.catch(() => undefined);
  return { promise, resolve, reject };
}

/** A page's notes as one announcement: its appended events together, in log order. */
function inOrder(notes: FeedNote[]): FeedNote[] {
  const events = notes.flatMap((n) => (n.kind === "APPENDED" ? [...n.events] : [])).sort((a, b) => a.seq - b.seq);
  const others = notes.filter((n) => n.kind !== "APPENDED");
  return events.length > 0 ? [...others, { kind: "APPENDED", events }] : others;
}

/** Runs a write with an outbox, then publishes what it committed. */
async function published<T>(deps: SyncDeps, write: () => Promise<T>): Promise<T> {
  const notes: FeedNote[] = [];
  const result = await withOutbox(notes, write);
  if (notes.length > 0) await deps.announce(notes);
  return result;
}

/** One upstream entry: made, changed, retired, skipped or left as it was, with the run's step. */
async function applyEntry(
  deps: SyncDeps,
  claim: Claim,
  source: SourceRow,
  item: unknown,
  read: McpEntry | null,
  at: Omit<Step, "outcome">,
  /** Told when only the database is left to wait for: the next entry may begin. */
  begun: () => void = () => undefined,
): Promise<Outcome> {
  const { db } = deps;
  let entry = read;
  /** The run's step past this entry; a skip is named by the upstream's name and version. */
  const step: StepOf = (outcome, reason) => ({
    ...at,
    outcome,
    ...(reason !== undefined && { skip: { name: entry?.name ?? "?", version: entry?.version ?? null, reason } }),
  });
  /** The step alone, nothing else written: the entry left as it was, or skipped. */
  const only = async (outcome: "unchanged" | "skipped", reason?: string) => {
    await advance(db, claim, step(outcome, reason));
    return outcome;
  };
  if (entry === null) return only("skipped", "not an MCP registry entry (no server, or a server without a name)");
  const existing = await entryByName(db, source.id, entry.name);
  if (!entry.isLatest && existing?.upstreamVersion === entry.version && entry.status !== existing.upstreamStatus) {
    // The version held changed status and is no longer the latest (the upstream moved `isLatest` to
    // another without touching that one's `updatedAt`): the latest is asked for by name.
    const latest = await getJson(
      deps.outbound,
      `${source.url}/v0.1/servers/${encodeURIComponent(entry.name)}/versions/latest`,
    ).catch((error) => {
      if (error instanceof UpstreamError && / answered 404$/.test(error.message)) return null;
      throw error;
    });
    const read = latest && readMcpEntry(latest);
    if (read?.isLatest) return applyEntry(deps, claim, source, latest, read, at, begun);
    entry = { ...entry, isLatest: true };
  }
  begun();
  const server = (item as { server: Record<string, unknown> }).server;
  // Older versions are the upstream's history; the provider holds the latest.
  const current = existing && existing.upstreamMark === entry.updatedAt && existing.upstreamVersion === entry.version;
  if (!entry.isLatest || current) return only("unchanged");
  const outside = filteredOut(source.filter as unknown as MirrorFilter, server);
  if (outside !== null && !existing) return only("unchanged");
  const mapped: Mapped =
    entry.status === "deleted" && existing
      ? { ok: true, fields: existing.snapshot, unmapped: existing.unmapped }
      : mapMcpServer(server, source.contactEmail);
  if (!mapped.ok) return only("skipped", mapped.reason);
  const wanted =
    outside !== null
      ? lifecycleOfStatus("withdrawn", `no longer in the filter of ${source.url}`)
      : lifecycleOfStatus(entry.status, entry.statusMessage);
  const record: Recorder = (providerId, final) => (tx) =>
    recordEntry(tx, {
      providerId,
      source,
      upstreamName: entry.name,
      upstreamVersion: entry.version,
      upstreamStatus: entry.status,
      upstreamMark: final ? entry.updatedAt : null,
      upstreamMeta: entry.meta,
      snapshot: mapped.fields,
      unmapped: mapped.unmapped,
    });
  if (!existing) {
    if (entry.status === "deleted") return only("unchanged");
    if (!mapped.intake) throw new Error("a new entry is mapped from its server.json");
    return create(deps, claim, source, entry.name, mapped.intake, wanted, step, record);
  }
  return update(deps, claim, source, existing, mapped.fields, wanted, step, record);
}

export type Wanted = ReturnType<typeof lifecycleOfStatus>;
/** Writes the provider's entry in a step's transaction; `final` marks the entry as applied whole. */
export type Recorder = (providerId: number, final: boolean) => (tx: Queryable) => Promise<void>;
export type StepOf = (outcome: Outcome, skipReason?: string) => Step;

/** A provider made from the upstream entry `name`, with the step past it in the same transaction. */
export async function create(
  deps: SyncDeps,
  claim: Claim,
  source: SourceRow,
  name: string,
  intake: Intake,
  wanted: Wanted,
  step: StepOf,
  record: Recorder,
): Promise<Outcome> {
  const { db } = deps;
  const lifecycleToo = wanted.state !== "ACTIVE";
  let made: { providerId: number; providerCode: string } | null = null;
  for (const taken of [false, true]) {
    try {
      made = await published(deps, () =>
        intakeProvider(
          db,
          { ...intake, providerCode: codeOfName(name, taken) },
          async (tx, result) => {
            await record(result.providerId, !lifecycleToo)(tx);
            if (!lifecycleToo) await advance(tx, claim, step("created"));
          },
          {
            mirror: {
              actor: `mirror:${source.sourceId}`,
              approveAs: source.policy === "TRUSTED" ? source.trustTier : null,
            },
          },
        ),
      );
      break;
    } catch (error) {
      if (codeOf(error) !== "CONFLICT") throw error;
      const message = (error as Error).message;
      // A code taken gets its hashed form once; a server name held by another provider is skipped.
      if (!message.includes("providerCode") || taken) {
        await advance(db, claim, step("skipped", message));
        return "skipped";
      }
    }
  }
  if (made && lifecycleToo) {
    await setLifecycle(deps, claim, source, made.providerCode, wanted, step("created"), record(made.providerId, true));
  }
  return "created";
}

/** A mirrored provider brought to its upstream's fields and lifecycle, with the step past it. */
export async function update(
  deps: SyncDeps,
  claim: Claim,
  source: SourceRow,
  existing: EntryRow,
  fields: Record<string, unknown>,
  wanted: Wanted,
  step: StepOf,
  record: Recorder,
): Promise<Outcome> {
  const { db } = deps;
  const changed = changedUpstream(existing.snapshot, fields);
  const lifecycleMoves =
    wanted.state !== existing.lifecycle || (wanted.state !== "ACTIVE" && wanted.message !== existing.lifecycleMessage);
  const outcome: Outcome =
    lifecycleMoves && wanted.state === "RETIRED"
      ? "retired"
      : changed.length || lifecycleMoves
        ? "updated"
        : "unchanged";
  const final = record(existing.providerId, true);
  if (changed.length > 0) {
    const patch = validatePatch(wholePatch(existing as unknown as Record<string, unknown>, fields, changed));
    if (!patch.ok) {
      const reason = `the upstream change is not valid: ${patch.errors.map((e) => `${e.path} ${e.message}`).join("; ")}`;
      await advance(db, claim, step("skipped", reason));
      return "skipped";
    }
    await published(deps, () =>
      patchProvider(
        db,
        {
          providerCode: existing.providerCode,
          patch: patch.value,
          actor: `mirror:${source.sourceId}`,
          ifMatch: undefined,
          mirror: {
            trusted: source.policy === "TRUSTED",
            within: async (tx) => {
              await record(existing.providerId, !lifecycleMoves)(tx);
              if (!lifecycleMoves) await advance(tx, claim, step(outcome));
            },
          },
        },
        async () => null,
      ),
    );
  }
  if (lifecycleMoves) await setLifecycle(deps, claim, source, existing.providerCode, wanted, step(outcome), final);
  if (!changed.length && !lifecycleMoves) {
    // Nothing of the profile moved (a new `updatedAt` only): the entry and the step, alone.
    await db.$transaction(async (tx) => {
      await final(tx);
      await advance(tx, claim, step("unchanged"));
    });
  }
  return outcome;
}

async function setLifecycle(
  deps: SyncDeps,
  claim: Claim,
  source: SourceRow,
  providerCode: string,
  wanted: Wanted,
  at: Step,
  record: (tx: Queryable) => Promise<void>,
): Promise<void> {
  await published(deps, () =>
    changeLifecycle(
      deps.db,
      {
        providerCode,
        request: { state: wanted.state, message: wanted.message, successorCode: null },
        actor: `mirror:${source.sourceId}`,
        // A source may bring back what it retired, as a reviewer may.
        by: "reviewer",
        ifMatch: undefined,
        canSeeSuccessor: () => false,
        mirror: {
          within: async (tx) => {
            await record(tx);
            await advance(tx, claim, at);
          },
        },
      },
      async () => null,
    ),
  );
}
