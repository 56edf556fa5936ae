/**
 * Quarkus-side code shared by the three services (ingester, archive-server, fanout-gateway): the
 * {@link jetstream.service.Operations} bean behind each one's operator surface, and the public listener's
 * request-header deadline ({@link jetstream.service.HeaderDeadlineInstaller}). Format and protocol code
 * stays in shared-format, which has no Quarkus.
 */
package jetstream.service;
