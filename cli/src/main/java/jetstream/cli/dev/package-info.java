/**
 * {@code jetstream dev}: the whole system on one machine (simulator, ingester, archive-server, two gateways)
 * as child JVMs, and the front door that routes one address to them. Depends on the JDK and Vert.x only;
 * it starts the other modules as processes, never links them.
 */
package jetstream.cli.dev;
