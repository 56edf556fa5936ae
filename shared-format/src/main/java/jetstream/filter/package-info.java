/**
 * Subscription filters shared by the fanout gateway and the client: v1 {@code wantedCollections} /
 * {@code wantedDids} (facts §6.2–§6.3) and v2 {@code kinds} / {@code dids} / {@code collections}
 * (facts §7.3), with every validation message of the reference. A filter is evaluated on keys
 * computed once per event (kind, DID, collection), never on the rendered JSON.
 * May depend on {@code jetstream.atproto.syntax} only; the gateway and the client both use it.
 */
package jetstream.filter;
