/**
 * Quarkus-side code shared by the three services (ingester, archive-server, fanout-gateway): the
 * {@link jetstream.service.Operations} bean behind each one's operator surface, and the public listener's
 * request-header deadline ({@link jetstream.service.HeaderDeadlineInstaller}). Format and protocol code
 * stays in shared-format, which has no Quarkus.
 * May depend on shared-format ({@code jetstream.config}, {@code jetstream.ops}, {@code jetstream.atproto.json}) and
 * on Quarkus, Vert.x, Netty and Micrometer; the three services depend on it, never the reverse.
 */
package jetstream.service;
