/**
 * The ingester's side of the readable-log feed: the selector-thread server on {@code data/run/feed.sock}
 * (protocol in docs/feed-protocol.md; frames from {@code jetstream.feed}). May depend on {@code writer}.
 */
package jetstream.ingester.feed;
