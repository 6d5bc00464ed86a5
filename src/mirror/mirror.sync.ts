/**
 * One sync of one source, claimed by this replica: the upstream paged from where the last committed
 * step left it, each entry written through the provider writes (intake, PATCH, lifecycle; the same
 * rules, versions and event log as an owner's) with the run's step in the same transaction.
 *
 * MCP_REGISTRY: `GET {url}/v0.1/servers?updated_since=<mark>&include_deleted=true&limit=100&cursor=…`;
 * a server's latest version is what its provider holds. The run's mark is the newest `updatedAt` it
 * saw; an entry whose `updatedAt` was applied already changes nothing, so pages that overlap are safe.
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

async function getJson(outbound: Outbound, url: string): Promise<Record<string, unknown>> {
  const answer = await outbound.get(url, { accept: "application/json" }).catch((error: Error) => {
    throw new UpstreamError(`${url}: ${error.message}`);
  });
  if (answer.status !== 200) throw new UpstreamError(`${url} answered ${answer.status}`);
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
    for (let i = offset; i < items.length; i++) {
      if (deps.stopped?.()) return false;
      const entry = readMcpEntry(items[i]);
      high = newer(high, entry?.updatedAt ?? null);
      const step = { high, cursor, offset: i + 1 };
      const outcome = await applyEntry(deps, claim, source, items[i], entry, step);
      deps.onEntry?.(outcome);
    }
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
    if (read?.isLatest) return applyEntry(deps, claim, source, latest, read, at);
    entry = { ...entry, isLatest: true };
  }
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
