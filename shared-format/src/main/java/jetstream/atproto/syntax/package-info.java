/**
 * String syntax validators of atproto identifiers and lexicon formats (DID, handle, NSID, record key, TID,
 * AT-URI, datetime, language, CID string, URI). Checks only; nothing here decodes or resolves.
 * May depend on {@code jetstream.atproto} only.
 */
package jetstream.atproto.syntax;
