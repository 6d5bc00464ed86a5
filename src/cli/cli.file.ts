/**
 * The agent's file, `agent-registry.json`: the intake body, checked offline by the registry's own
 * rules (src/providers/provider.rules.ts and src/text.ts, imported, not copied), each problem named by
 * its JSON Pointer into the file as the registry would name it. And what publishing it would change
 * in a profile the registry already has: the owner fields that differ, as a merge patch to send and
 * as an RFC 6902 patch to show.
 */
import { readFileSync } from "node:fs";
import { createPatch, type Operation } from "rfc6902";
import { Pointer } from "rfc6902/pointer.js";
import { pointerOf } from "../http/rest/problem.ts";
import { escapePointer } from "../interop/import.ts";
import {
  changedFields,
  deriveProviderCode,
  type Intake,
  OWNER_FIELDS,
  type OwnerField,
  type Profile,
  REVIEWED_FIELDS,
  snapshotOf,
  validateIntake,
} from "../providers/provider.rules.ts";
import { isStorableText } from "../text.ts";
import { CliError, type Problem } from "./cli.errors.ts";

export const DEFAULT_FILE = "agent-registry.json";

/** The file as read: its JSON, or the problem that stops it from being read as JSON at all. */
export function readAgentFile(path: string): Record<string, unknown> {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") {
      throw new CliError(`There is no ${path}: write one with agent-registry init, or name the file`);
    }
    throw new CliError(`Cannot read ${path}: ${(error as NodeJS.ErrnoException).code ?? "unreadable"}`);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new CliError(`${path} is not valid JSON`, 1, {
      problems: [{ path: "", message: (error as Error).message }],
    });
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
    throw new CliError(`${path} must hold a JSON object: the intake body`, 1, {
      problems: [{ path: "", message: "must be an object" }],
    });
  }
  return parsed as Record<string, unknown>;
}

/** Every text the registry would refuse to store (a NUL, a lone surrogate), by pointer. */
function textProblems(value: unknown, pointer = ""): Problem[] {
  if (typeof value === "string") {
    return isStorableText(value) ? [] : [{ path: pointer, message: "must be text without NUL or lone surrogates" }];
  }
  if (typeof value !== "object" || value === null) return [];
  return Object.entries(value).flatMap(([key, child]) => textProblems(child, `${pointer}/${escapePointer(key)}`));
}

export type Checked = { ok: true; intake: Intake; providerCode: string } | { ok: false; problems: Problem[] };

/** The file checked as the registry checks an intake: every problem at once, none sent anywhere. */
export function checkIntake(body: Record<string, unknown>): Checked {
  const text = textProblems(body);
  const validated = validateIntake(body);
  const problems = [
    ...text,
    ...(validated.ok ? [] : validated.errors.map((e) => ({ path: pointerOf(e.path), message: e.message }))),
  ];
  if (!validated.ok || problems.length > 0) return { ok: false, problems };
  const intake = validated.value;
  return { ok: true, intake, providerCode: intake.providerCode ?? deriveProviderCode(intake.name) };
}

/** The provider code a file names, or the one the registry would derive from its name; null if neither. */
export function codeOfFile(body: Record<string, unknown>): string | null {
  if (typeof body.providerCode === "string" && body.providerCode.trim()) return body.providerCode.trim();
  if (typeof body.name === "string" && body.name.trim()) return deriveProviderCode(body.name);
  return null;
}

export interface Change {
  fields: OwnerField[];
  /** The merge patch (RFC 7396) to send: each changed field with the file's value. */
  patch: Partial<Profile>;
  /** What changes, as RFC 6902 operations on the profile's owner fields, each with the value it replaces. */
  operations: (Operation & { old?: unknown })[];
  /** The changed fields that send an approved agent's change to review. */
  reviewed: OwnerField[];
  /** contactEmail could not be compared: the caller may not see it. */
  contactUnseen: boolean;
}

/** Members the registry adds to what it answers (a package's runCommand), which are not the owner's to set. */
function ownerPart(snapshot: Record<string, unknown>): Record<string, unknown> {
  const owned = Object.fromEntries(OWNER_FIELDS.map((f) => [f, snapshot[f] ?? null]));
  if (Array.isArray(owned.packages)) {
    owned.packages = owned.packages.map((p) => {
      const { runCommand: _derived, ...rest } = p as Record<string, unknown>;
      return rest;
    });
  }
  return owned;
}

/**
 * What publishing `intake` over the profile whose latest snapshot is `current` would change. The
 * snapshot goes through the same rules as the file, so both sides are in the registry's normal form
 * and only real differences remain.
 */
export function changeOf(current: Record<string, unknown>, intake: Intake): Change {
  const wanted = snapshotOf(intake);
  const raw = ownerPart(current);
  const contactUnseen = raw.contactEmail === null;
  if (contactUnseen) raw.contactEmail = wanted.contactEmail;
  const normal = validateIntake(raw);
  const before = normal.ok ? snapshotOf(normal.value) : (raw as unknown as Profile);
  const fields = changedFields(before, wanted);
  const pick = (p: Profile) => Object.fromEntries(fields.map((f) => [f, p[f]]));
  const operations = createPatch(pick(before), pick(wanted)).map((op) => {
    if (op.op !== "replace" && op.op !== "remove") return op;
    return { ...op, old: Pointer.fromJSON(op.path).get(before) };
  });
  return {
    fields,
    patch: pick(wanted) as Partial<Profile>,
    operations,
    reviewed: fields.filter((f) => REVIEWED_FIELDS.includes(f)),
    contactUnseen,
  };
}
