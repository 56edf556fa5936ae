/**
 * The operator side every service shares: the debug listener ({@code JETSTREAM_DEBUG_ADDR}: health,
 * metrics, thread dump, heap histogram), JVM diagnostics and the crash report written before a crash-loud exit.
 * Plain JDK (its {@code com.sun.net.httpserver}); may depend on {@code jetstream.config}.
 */
package jetstream.ops;
