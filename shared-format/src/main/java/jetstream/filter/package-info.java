/**
 * Subscription filters shared by the fanout gateway and the client: v1 {@code wantedCollections} /
 * {@code wantedDids} (docs/wire.md: v1 parameters, v1 delivery filter) and v2 {@code kinds} / {@code dids} / {@code collections}
 * (docs/wire.md: v2 parameters), with every validation message of the reference. A filter is evaluated on keys
 * computed once per event (kind, DID, collection), never on the rendered JSON.
 * May depend on {@code jetstream.atproto.syntax} only; the gateway and the client both use it.
 */
package jetstream.filter;
