/**
 * A provider's lifecycle: ACTIVE, DEPRECATED (with a message and maybe a successor) or
 * RETIRED. The rules are pure functions; `changeLifecycle` writes a change the way a PATCH writes a
 * profile: the row, one new version and one timeline event in one transaction.
 *
 * Who may do what:
 *
 * | from → to | owner (agent token) | reviewer |
 * |---|---|---|
 * | ACTIVE → DEPRECATED, RETIRED | yes | yes |
 * | DEPRECATED → DEPRECATED (new message or successor), RETIRED, ACTIVE | yes | yes |
 * | RETIRED → anything | no (409: retirement is final for the owner) | yes (undoes a retirement) |
 *
 * Retirement is final for the owner so that a directory user can rely on it, and so that a leaked
 * token cannot un-retire an agent; a reviewer can undo it (a retirement by a leaked token, a
 * mistake). A change to the state it is already in, with the same message and successor, is a 409.
 */
import { type Db, type RawTx, rawTransaction } from "../db/client.ts";
import { badInput, conflict, type FieldError } from "../errors.ts";
import { publicSnapshot } from "../events/event.rules.ts";
import { logWrite } from "../events/event.store.ts";
import { noteAppended } from "../feed/feed.outbox.ts";
import type { IfMatch } from "../http/if-match.ts";
import { isMcpServer } from "../interop/mcp.registry.rules.ts";
import { recordRelease } from "../interop/mcp.registry.store.ts";
import { mirroredConflict } from "../mirror/mirror.store.ts";
import { fits } from "../text.ts";
import { PROVIDER_CODE_PATTERN, type Profile, snapshotOf } from "./provider.rules.ts";
import { appendVersion, claimVersion, setColumns, successorByCode } from "./provider.store.ts";

export const LIFECYCLES = ["ACTIVE", "DEPRECATED", "RETIRED"] as const;
export type Lifecycle = (typeof LIFECYCLES)[number];
export const MAX_LIFECYCLE_MESSAGE = 500;
/** How far a successor chain is followed to refuse a cycle. */
const MAX_CHAIN = 32;

/** The timeline event each target state records. */
export const LIFECYCLE_EVENTS = { ACTIVE: "REACTIVATED", DEPRECATED: "DEPRECATED", RETIRED: "RETIRED" } as const;

export interface LifecycleState {
  lifecycle: Lifecycle;
  lifecycleMessage: string | null;
  successorCode: string | null;
}

export interface LifecycleRequest {
  state: Lifecycle;
  message?: string | null | undefined;
  successorCode?: string | null | undefined;
}

/** The lifecycle columns of a row, as a state (an unknown value reads as ACTIVE). */
export function lifecycleOf(row: {
  lifecycle: string;
  lifecycleMessage: string | null;
  successorCode: string | null;
}): LifecycleState {
  const lifecycle = (LIFECYCLES as readonly string[]).includes(row.lifecycle) ? (row.lifecycle as Lifecycle) : "ACTIVE";
  return { lifecycle, lifecycleMessage: row.lifecycleMessage, successorCode: row.successorCode };
}

/**
 * The lifecycle part of a version snapshot: nothing while ACTIVE (so the snapshots written before
 * lifecycles existed, and those of active agents, are alike), the three fields otherwise.
 */
export function lifecycleSnapshot(state: LifecycleState): Partial<LifecycleState> {
  return state.lifecycle === "ACTIVE" ? {} : { ...state };
}

/** The names a request's errors give its fields: the lifecycle route's, or a PATCH's (API.md §1). */
export interface LifecyclePaths {
  state: string;
  message: string;
  successorCode: string;
}
const ROUTE_PATHS: LifecyclePaths = { state: "state", message: "message", successorCode: "successorCode" };
export const PATCH_PATHS: LifecyclePaths = {
  state: "lifecycle",
  message: "lifecycleMessage",
  successorCode: "successorCode",
};

/**
 * The lifecycle fields of a PATCH body (API.md §1: `lifecycle`, `lifecycleMessage` and
 * `successorCode` are owner-settable) as a change of the current state: a field left out keeps its
 * value, except that a move to ACTIVE clears the message and the successor.
 */
export function requestOfPatch(current: LifecycleState, patch: Partial<LifecycleState>): LifecycleRequest {
  const state = patch.lifecycle ?? current.lifecycle;
  const keep = state !== "ACTIVE";
  return {
    state,
    message: patch.lifecycleMessage !== undefined ? patch.lifecycleMessage : keep ? current.lifecycleMessage : null,
    successorCode: patch.successorCode !== undefined ? patch.successorCode : keep ? current.successorCode : null,
  };
}

/**
 * Checks a request on its own (400s): the target's message and successor rules. Answers the state
 * the provider would be in.
 */
export function validateLifecycle(
  request: LifecycleRequest,
  providerCode: string,
  paths: LifecyclePaths = ROUTE_PATHS,
): LifecycleState {
  const errors: FieldError[] = [];
  const message = request.message?.trim() || null;
  const successor = request.successorCode?.trim() || null;
  if (!(LIFECYCLES as readonly string[]).includes(request.state)) {
    errors.push({ path: paths.state, message: `must be one of ${LIFECYCLES.join(", ")}` });
  }
  if (request.state === "ACTIVE") {
    if (message) errors.push({ path: paths.message, message: "only DEPRECATED and RETIRED carry a message" });
    if (successor) errors.push({ path: paths.successorCode, message: "only DEPRECATED and RETIRED name a successor" });
  } else {
    if (request.state === "DEPRECATED" && !message) {
      errors.push({ path: paths.message, message: "is required to deprecate: say why, and what to use instead" });
    }
    if (message && !fits(message, MAX_LIFECYCLE_MESSAGE)) {
      errors.push({ path: paths.message, message: `at most ${MAX_LIFECYCLE_MESSAGE} characters` });
    }
    if (successor !== null) {
      if (!PROVIDER_CODE_PATTERN.test(successor))
        errors.push({ path: paths.successorCode, message: "not a provider code" });
      else if (successor === providerCode) {
        errors.push({ path: paths.successorCode, message: "a provider cannot succeed itself" });
      }
    }
  }
  if (errors.length)
    throw badInput(`The lifecycle change is not valid: ${errors[0]?.path} ${errors[0]?.message}`, errors);
  return { lifecycle: request.state, lifecycleMessage: message, successorCode: successor };
}

export type LifecycleOutcome =
  | { ok: true; event: (typeof LIFECYCLE_EVENTS)[Lifecycle] }
  | { ok: false; reason: string };

/** Whether `actor` may move a provider from `current` to `next` (409 otherwise, naming the state). */
export function lifecycleTransition(
  current: LifecycleState,
  next: LifecycleState,
  actor: "owner" | "reviewer",
): LifecycleOutcome {
  if (current.lifecycle === "RETIRED" && actor !== "reviewer") {
    return { ok: false, reason: "the provider is RETIRED; retirement is final (only a reviewer can undo it)" };
  }
  if (
    current.lifecycle === next.lifecycle &&
    current.lifecycleMessage === next.lifecycleMessage &&
    current.successorCode === next.successorCode
  ) {
    return {
      ok: false,
      reason: `the provider is already ${current.lifecycle}${next.lifecycle === "ACTIVE" ? "" : " with this message and successor"}`,
    };
  }
  return { ok: true, event: LIFECYCLE_EVENTS[next.lifecycle] };
}

/** The lifecycle fields whose value differs. */
export function changedLifecycleFields(before: LifecycleState, after: LifecycleState): (keyof LifecycleState)[] {
  return (["lifecycle", "lifecycleMessage", "successorCode"] as const).filter((f) => before[f] !== after[f]);
}

/** The timeline note of a change: the message and the successor, for the owner and reviewers. */
function noteOf(state: LifecycleState): string | null {
  const parts = [state.lifecycleMessage, state.successorCode ? `successor: ${state.successorCode}` : null];
  return parts.filter(Boolean).join(" — ") || null;
}

/**
 * Writes a lifecycle change: the row (only under the version it claims, like a PATCH), one new
 * version whose snapshot carries the lifecycle, one timeline event. `canSeeSuccessor` says whether
 * the caller may see a provider (the successor must be one it can see, so codes cannot be probed).
 * Answers the new version.
 */
export async function changeLifecycle<R>(
  db: Db,
  input: {
    providerCode: string;
    /** The change, or (a PATCH) how to make it from the current state. */
    request: LifecycleRequest | ((current: LifecycleState) => LifecycleRequest);
    /** How errors name the fields (the route's names by default). */
    paths?: LifecyclePaths;
    actor: string;
    by: "owner" | "reviewer";
    ifMatch: IfMatch;
    canSeeSuccessor: (provider: { id: number; visibility: string; reviewStage: string }) => boolean;
    /** A mirror source's change (src/mirror): runs inside the transaction (the sync's position). */
    mirror?: { within: (tx: RawTx) => Promise<void> };
  },
  /** Reads what the caller answers, inside the transaction: the provider as this change left it. */
  readBack: (tx: RawTx) => Promise<R>,
): Promise<{ version: number; written: R }> {
  const { request, paths } = input;
  // A request given outright is checked before anything is written; one made from the current
  // state, once that is read.
  const ready = typeof request === "function" ? null : validateLifecycle(request, input.providerCode, paths);
  const written = await rawTransaction(db, async (tx) => {
    // Claim the next version first, as a PATCH does: concurrent writes of one provider queue here.
    const now = new Date();
    const row = await claimVersion(tx, { providerCode: input.providerCode, ifMatch: input.ifMatch, now });
    if (row.mirrored && input.by === "owner") throw await mirroredConflict(tx, row);
    const version = row.version;
    const current = lifecycleOf(row);
    const next =
      ready ??
      validateLifecycle((request as (c: LifecycleState) => LifecycleRequest)(current), input.providerCode, paths);
    const outcome = lifecycleTransition(current, next, input.by);
    if (!outcome.ok) throw conflict(outcome.reason);

    if (next.successorCode && next.successorCode !== current.successorCode) {
      const path = paths?.successorCode ?? "successorCode";
      const refuse = (message: string) => badInput(`${path} ${message}`, [{ path, message }]);
      const found = await successorByCode(tx, next.successorCode);
      const visible = found && input.canSeeSuccessor(found);
      if (!found || !visible) throw refuse(`names no provider: "${next.successorCode}"`);
      if (found.lifecycle === "RETIRED") throw refuse(`names a RETIRED provider: "${next.successorCode}"`);
      // The successor's own chain must not lead back here.
      let hop = found.successorCode;
      for (let i = 0; hop && i < MAX_CHAIN; i++) {
        if (hop === input.providerCode) throw refuse(`would make a cycle: "${next.successorCode}" leads back here`);
        hop = (await successorByCode(tx, hop))?.successorCode ?? null;
      }
    }

    const { lifecycle, lifecycleMessage, successorCode } = next;
    await setColumns(tx, row.id, { lifecycle, lifecycleMessage, successorCode });
    // Every entry of its MCP server changes status (a retired server is deleted), and this version is a release.
    const profile = snapshotOf(row as unknown as Profile);
    await recordRelease(tx, {
      providerId: row.id,
      providerCode: row.providerCode,
      profile,
      wasMcpServer: isMcpServer(profile),
      version,
      now,
      all: true,
      statusChanged: true,
    });
    await appendVersion(tx, {
      providerId: row.id,
      version,
      actor: input.actor,
      changedFields: changedLifecycleFields(current, next),
      snapshot: { ...snapshotOf(row as unknown as Profile), ...lifecycleSnapshot(next) },
      event: { kind: outcome.event, note: noteOf(next) },
      now,
    });
    if (input.mirror) await input.mirror.within(tx);
    const answer = await readBack(tx);
    // Last: the log's append holds its order until the commit (src/events/event.store.ts).
    const events = await logWrite(tx, {
      providerId: row.id,
      before: publicSnapshot(row),
      after: { ...row, lifecycle, lifecycleMessage, successorCode },
      events: [{ kind: "LIFECYCLE_CHANGED" }],
    });
    return { version, written: answer, events };
  });
  // Committed: wake the feed's readers (src/feed).
  noteAppended(written.events);
  return { version: written.version, written: written.written };
}
