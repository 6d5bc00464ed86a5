/**
 * The profile's `cardSignature`: what the registry found of the signatures of the A2A card a
 * provider was imported from (src/trust/card.trust.ts). Shown to everyone who may see the profile.
 */
import { builder } from "../builder.ts";
import { ProviderRef } from "../providers/provider.types.ts";
import type { CARD_SIGNATURE_STATUSES, CardSignature } from "./card.trust.ts";

const CardSignatureStatus = builder.enumType("CardSignatureStatus", {
  values: {
    VERIFIED: { description: "A signature verified with a trusted key: of a verified domain, or of the trust list" },
    UNTRUSTED_KEY: {
      description: "Signed with a key the registry does not trust (yet): no verified domain publishes it",
    },
    UNSIGNED: { description: "The card carried no signature" },
  } satisfies Record<(typeof CARD_SIGNATURE_STATUSES)[number], unknown>,
});

const CardSignatureRef = builder.objectRef<CardSignature>("CardSignature").implement({
  description: "The signature check of the A2A agent card the provider was imported from.",
  fields: (t) => ({
    status: t.field({ type: CardSignatureStatus, resolve: (c) => c.status }),
    domain: t.exposeString("domain", {
      nullable: true,
      description: "The verified domain whose JWKS holds the key; null for a key of the registry's trust list",
    }),
    kid: t.exposeString("kid", { nullable: true, description: "The key's id (JWS `kid`); null when unsigned" }),
  }),
});

builder.prismaObjectField(ProviderRef, "cardSignature", (t) =>
  t.field({
    type: CardSignatureRef,
    nullable: true,
    description: "Of an agent imported from an A2A card: whether the card's signature verified; null otherwise",
    resolve: (p) => (p.cardSignature as CardSignature | null) ?? null,
  }),
);
