/**
 * Quarkus-side code shared by the three services (ingester, archive-server, fanout-gateway): the
 * {@link jetstream.service.Operations} bean behind each one's operator surface. Format and protocol code
 * stays in shared-format, which has no Quarkus.
 */
package jetstream.service;
