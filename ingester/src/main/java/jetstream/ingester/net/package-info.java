/**
 * The one way the ingester makes an outbound request: a GET with a whole-exchange deadline and a byte cap,
 * and a pinned dial to hosts an untrusted party named (addresses checked by the hostname policy).
 * May depend on {@code backfill} for {@code HostnamePolicy} only.
 */
package jetstream.ingester.net;
