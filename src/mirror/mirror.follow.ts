/**
 * One sync of an AGENT_REGISTRY source: another registry of this kind, read as anyone may read it
 * (or, where its reads need credentials, as a reader: with the source's credential, an API key of it).
 *
 * It follows the peer's event log (`/api/v1/events?after=<seq>`) from the stored seq, applies each
 * event's patch to the public snapshot the provider's entry holds, and checks the event's `stateHash`.
 * A first sync, a hash that does not match, or a 410 (the seq is past the log's retention) lists the
 * peer's directory instead (`/api/v1/providers`, each profile read whole), then follows the log from
 * the seq it had before that listing began.
 *
 * A profile read while the log moves on may be ahead of the events that follow: an entry's
 * `upstreamMark` is a seq its snapshot was read after, and an event up to it that does not apply is
 * one the snapshot holds already. Past it, a mismatch is the peer's state and ours parting: listed again.
 */
import type { Db } from "../db/client.ts";
import { type PublicSnapshot, stateHash } from "../events/event.rules.ts";
import {
  decodePeerRun,
  encodePeerRun,
  filteredOut,
  lifecycleOfStatus,
  MIRRORED_FIELDS,
  type MirrorFilter,
  mapPeerProvider,
  type PeerEvent,
  type PeerRun,
  patched,
  readPeerEvent,
  snapshotOfProfile,
  statusOfSnapshot,
} from "./mirror.rules.ts";
import {
  advance,
  type Claim,
  entryByName,
  finishRun,
  type Outcome,
  recordEntry,
  type SourceRow,
  type Step,
  setRun,
  unseenSince,
} from "./mirror.store.ts";
import { create, type Recorder, refusal, type StepOf, type SyncDeps, UpstreamError, update } from "./mirror.sync.ts";

/** Events and providers asked of a peer a page. */
const PAGE = 100;
/** Profiles read at once while listing. */
const PROFILE_READS = 8;

/** The peer's state and the held snapshot parted at this event. */
class Mismatch extends Error {}

/** A peer's answer: its status and JSON body (null when it has none that parses). */
async function getPeer(deps: SyncDeps, url: string): Promise<{ status: number; body: Record<string, unknown> | null }> {
  const answer = await deps.outbound.get(url, { accept: "application/json" }).catch((error: Error) => {
    throw new UpstreamError(`${url}: ${error.message}`);
  });
  let body: Record<string, unknown> | null = null;
  try {
    const parsed = JSON.parse(answer.body) as unknown;
    if (typeof parsed === "object" && parsed !== null && !Array.isArray(parsed))
      body = parsed as Record<string, unknown>;
  } catch {}
  if (answer.status === 200 && body === null)
    throw new UpstreamError(`${url} answered something that is not a JSON object`);
  return { status: answer.status, body };
}

const refused = refusal;

/** The newest seq the peer's log shows anyone, or null when it shows none. */
async function headSeq(deps: SyncDeps, base: string): Promise<number | null> {
  const url = `${base}/api/v1/events?last=1`;
  const { status, body } = await getPeer(deps, url);
  if (status !== 200) throw refused(url, status);
  const last = (body?.items as unknown[] | undefined)?.at(-1) as { seq?: unknown } | undefined;
  return Number.isSafeInteger(last?.seq) ? (last?.seq as number) : null;
}

/** A provider's public profile at the peer as a snapshot with its version; null when anyone is refused it. */
async function readProfile(
  deps: SyncDeps,
  base: string,
  code: string,
): Promise<{ snapshot: PublicSnapshot; version: number | null } | null> {
  const url = `${base}/api/v1/providers/${encodeURIComponent(code)}`;
  const { status, body } = await getPeer(deps, url);
  if (status === 404 || status === 403 || status === 401) return null;
  if (status !== 200 || body === null) throw refused(url, status);
  return {
    snapshot: snapshotOfProfile(body),
    version: Number.isSafeInteger(body.version) ? (body.version as number) : null,
  };
}

/** Runs (or resumes) a sync of the claimed peer to its end; false when it stopped first. */
export async function followSource(deps: SyncDeps, claim: Claim, source: SourceRow): Promise<boolean> {
  const base = source.url;
  let run: PeerRun = decodePeerRun(source.runSince ?? "follow");
  let high = source.runHigh;
  let cursor = source.runCursor;
  let offset = source.runOffset;
  /** Listed in this run: a second parting is the peer's fault, not a reason to list again. */
  let listed = false;
  const list = async () => {
    run = { phase: "list", head: await headSeq(deps, base), since: new Date() };
    high = run.head === null ? null : String(run.head);
    cursor = null;
    offset = 0;
    await setRun(deps.db, claim, { since: encodePeerRun(run), high, fresh: source.runSince === null });
    source = { ...source, runSince: encodePeerRun(run) };
  };
  const follow = async (from: string | null) => {
    run = { phase: "follow" };
    high = from;
    await setRun(deps.db, claim, { since: encodePeerRun(run), high, fresh: false });
  };
  if (source.runSince === null && source.mark === null) await list();
  else if (source.runSince === null) {
    run = { phase: "follow" };
    await setRun(deps.db, claim, { since: encodePeerRun(run), high: source.mark, fresh: true });
    source = { ...source, runSince: encodePeerRun(run) };
  }
  for (;;) {
    if (deps.stopped?.()) return false;
    const now = run;
    if (now.phase === "list") {
      listed = true;
      const page = await listPage(deps, claim, source, { cursor, offset, high });
      if (page === "stopped") return false;
      if (page.next !== null) {
        cursor = page.next;
        offset = 0;
        await deps.renew();
        continue;
      }
      if (!(await lookUpUnseen(deps, claim, source, now.since, { cursor, offset: page.offset, high }))) return false;
      await follow(high);
      continue;
    }
    const query = new URLSearchParams({ limit: String(PAGE) });
    if (high !== null) query.set("after", high);
    const url = `${base}/api/v1/events?${query}`;
    const answer = await getPeer(deps, url);
    if (answer.status === 410) {
      if (listed && high !== null) {
        // Just listed, so every event still kept is one the snapshots hold or follow: from the oldest kept.
        await follow(null);
        continue;
      }
      if (listed) throw new UpstreamError(`${url} answered 410 right after a listing`);
      await list();
      continue;
    }
    if (answer.status !== 200) throw refused(url, answer.status);
    const items = Array.isArray(answer.body?.items) ? (answer.body.items as unknown[]) : null;
    if (items === null) throw new UpstreamError(`${url} answered no items list`);
    try {
      for (const item of items) {
        if (deps.stopped?.()) return false;
        const event = readPeerEvent(item);
        const seq = (item as { seq?: unknown } | null)?.seq;
        const step = { high: Number.isSafeInteger(seq) ? String(seq) : high, cursor: null, offset: 0 };
        const outcome = event ? await applyEvent(deps, claim, source, event, step) : await passed(deps, claim, step);
        high = step.high;
        deps.onEntry?.(outcome);
      }
    } catch (error) {
      if (!(error instanceof Mismatch)) throw error;
      if (listed) throw new UpstreamError(`${error.message}, again after listing ${base} anew`);
      await list();
      continue;
    }
    await deps.renew();
    if (items.length < PAGE) break;
  }
  await finishRun(deps.db, claim, { mark: high, next: new Date(Date.now() + source.intervalSeconds * 1000) });
  return true;
}

/**
 * One page of the peer's directory from `offset`: each profile read (a few at once), then the log's
 * head, so each snapshot is known to be at or after that seq; then each applied with its step.
 */
async function listPage(
  deps: SyncDeps,
  claim: Claim,
  source: SourceRow,
  at: { cursor: string | null; offset: number; high: string | null },
): Promise<{ next: string | null; offset: number } | "stopped"> {
  const query = new URLSearchParams({ limit: String(PAGE), includeRetired: "true" });
  if (at.cursor) query.set("cursor", at.cursor);
  const url = `${source.url}/api/v1/providers?${query}`;
  const { status, body } = await getPeer(deps, url);
  if (status !== 200) throw refused(url, status);
  if (!Array.isArray(body?.items)) throw new UpstreamError(`${url} answered no items list`);
  const codes = (body.items as { providerCode?: unknown }[]).map((i) => String(i?.providerCode ?? ""));
  const todo = codes.slice(at.offset);
  const profiles = await inBatches(todo, (code) => (code ? readProfile(deps, source.url, code) : null));
  const head = await headSeq(deps, source.url);
  for (const [i, code] of todo.entries()) {
    if (deps.stopped?.()) return "stopped";
    const step = { high: at.high, cursor: at.cursor, offset: at.offset + i + 1 };
    const read = profiles[i] ?? null;
    const outcome = code
      ? await applySnapshot(deps, claim, source, code, read && { ...read, bound: head }, step)
      : await passed(deps, claim, step, "no providerCode");
    deps.onEntry?.(outcome);
  }
  const next = (body as { nextCursor?: unknown }).nextCursor;
  return { next: typeof next === "string" && next !== "" && codes.length > 0 ? next : null, offset: codes.length };
}

/** Entries the listing did not meet (not seen since it began): each looked up by its code. */
async function lookUpUnseen(
  deps: SyncDeps,
  claim: Claim,
  source: SourceRow,
  since: Date,
  step: Omit<Step, "outcome">,
): Promise<boolean> {
  // In name order, so an entry that stays unwritten (an upstream change refused) is passed, not met again.
  for (let after = ""; ; ) {
    const codes = await unseenSince(deps.db, source.id, { since, after, limit: PAGE });
    if (codes.length === 0) return true;
    after = codes.at(-1) as string;
    const profiles = await inBatches(codes, (code) => readProfile(deps, source.url, code));
    const head = await headSeq(deps, source.url);
    for (const [i, code] of codes.entries()) {
      if (deps.stopped?.()) return false;
      const read = profiles[i] ?? null;
      deps.onEntry?.(await applySnapshot(deps, claim, source, code, read && { ...read, bound: head }, step));
    }
  }
}

/** The step past an item that is not a provider's: an event of another kind, or a list item without a code. */
async function passed(deps: SyncDeps, claim: Claim, at: Omit<Step, "outcome">, skip?: string): Promise<Outcome> {
  const outcome = skip ? "skipped" : "unchanged";
  await advance(deps.db, claim, { ...at, outcome, ...(skip && { skip: { name: "?", version: null, reason: skip } }) });
  return outcome;
}

async function inBatches<T, R>(items: readonly T[], read: (item: T) => Promise<R> | R): Promise<R[]> {
  const out: R[] = [];
  for (let i = 0; i < items.length; i += PROFILE_READS) {
    out.push(...(await Promise.all(items.slice(i, i + PROFILE_READS).map(read))));
  }
  return out;
}

/** One event of the peer's log: the snapshot it leads to, checked by its hash, then applied. */
async function applyEvent(
  deps: SyncDeps,
  claim: Claim,
  source: SourceRow,
  event: PeerEvent,
  step: Omit<Step, "outcome">,
): Promise<Outcome> {
  const held = await entryByName(deps.db, source.id, event.providerCode);
  if (held) {
    const bound = held.upstreamMark === null ? null : Number(held.upstreamMark);
    const next = patched(held.snapshot, event.patch);
    let snapshot: PublicSnapshot;
    if (next && stateHash(next) === event.stateHash) snapshot = next;
    else if (held.stateHash === event.stateHash || (bound !== null && event.seq <= bound)) snapshot = held.snapshot;
    else
      throw new Mismatch(
        `${source.url}: the state of "${event.providerCode}" after seq ${event.seq} is not its stateHash`,
      );
    const version = event.version ?? (held.upstreamVersion === null ? null : Number(held.upstreamVersion));
    return applySnapshot(deps, claim, source, event.providerCode, { snapshot, version, bound }, step);
  }
  // First seen: made by this event (a provider that entered the directory as it was made), or read whole.
  const made = event.kind === "PROVIDER_CREATED" ? patched({}, event.patch) : null;
  if (made && stateHash(made) === event.stateHash) {
    return applySnapshot(
      deps,
      claim,
      source,
      event.providerCode,
      { snapshot: made, version: event.version, bound: null },
      step,
    );
  }
  const read = await readProfile(deps, source.url, event.providerCode);
  const head = read && (await headSeq(deps, source.url));
  return applySnapshot(deps, claim, source, event.providerCode, read && { ...read, bound: head }, step);
}

/**
 * A peer's provider as its mirrored one should be: made, changed, retired (out of the peer's
 * directory, or of the source's filter) or left, with the step, through the same writes as an MCP
 * registry's entries. `read` is null when the peer shows the provider to no one.
 */
async function applySnapshot(
  deps: SyncDeps,
  claim: Claim,
  source: SourceRow,
  code: string,
  read: { snapshot: PublicSnapshot; version: number | null; bound: number | null } | null,
  at: Omit<Step, "outcome">,
): Promise<Outcome> {
  const db: Db = deps.db;
  const existing = await entryByName(db, source.id, code);
  const step: StepOf = (outcome, reason) => ({
    ...at,
    outcome,
    ...(reason !== undefined && { skip: { name: code, version: read?.version?.toString() ?? null, reason } }),
  });
  const only = async (outcome: "unchanged" | "skipped", reason?: string) => {
    await advance(db, claim, step(outcome, reason));
    return outcome;
  };
  const { status, message } = read ? statusOfSnapshot(read.snapshot) : { status: "withdrawn", message: null };
  const outside = filteredOut(source.filter as unknown as MirrorFilter, { name: code });
  if (!existing && (outside !== null || status === "withdrawn" || status === "retired")) return only("unchanged");
  const wanted =
    outside !== null
      ? lifecycleOfStatus("withdrawn", `no longer in the filter of ${source.url}`)
      : lifecycleOfStatus(status, status === "withdrawn" ? `no longer in the directory of ${source.url}` : message);
  const snapshot = read?.snapshot ?? existing?.snapshot ?? {};
  const hash = stateHash(snapshot);
  const record: Recorder = (providerId, final) => (tx) =>
    recordEntry(tx, {
      providerId,
      source,
      upstreamName: code,
      upstreamVersion: read?.version?.toString() ?? existing?.upstreamVersion ?? null,
      upstreamStatus: status,
      upstreamMark: final ? String(read?.bound ?? existing?.upstreamMark ?? "") || null : null,
      upstreamMeta: null,
      snapshot,
      stateHash: hash,
      unmapped: [],
    });
  if (!existing) {
    const mapped = mapPeerProvider(snapshot, source.contactEmail);
    if (!mapped.ok || !mapped.intake) return only("skipped", mapped.ok ? "no intake" : mapped.reason);
    return create(deps, claim, source, code, mapped.intake, wanted, step, record);
  }
  const fields = Object.fromEntries(MIRRORED_FIELDS.map((f) => [f, snapshot[f] ?? null]));
  return update(deps, claim, source, existing, fields, wanted, step, record);
}
