/**
 * Content identifiers (CIDv1 and CIDv0) and the multiformats encodings they use: varints, base32, base58.
 * May depend on {@code jetstream.atproto} only.
 */
package jetstream.atproto.cid;
