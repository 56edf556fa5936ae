/**
 * Per-client limits used by the archive-server and the gateways: which IP a request counts against
 * (trusted proxies), token buckets keyed by client with bounded memory, and open-item concurrency limits.
 * Time is passed in by the caller. Depends on the JDK only.
 */
package jetstream.ratelimit;
