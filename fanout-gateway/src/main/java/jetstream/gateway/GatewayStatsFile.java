package jetstream.gateway;

import java.io.IOException;
import java.net.InetAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;

import io.vertx.core.json.JsonObject;
import org.jboss.logging.Logger;

/**
 * Publishes this gateway's subscriber counts for the archive-server's status page: a small JSON
 * file {@code <data-dir>/run/gateway-<id>.json}, rewritten every {@link #INTERVAL_MILLIS} through a
 * sibling temporary file and a rename (readers never see half a file), removed on a graceful
 * stop. Gateways are separate processes that share only the data directory (docs/decisions.md).
 * Status reporting is best effort: a write that fails (read-only mount, full disk) is logged once
 * and never stops the gateway, whose job is streaming. The writer itself must not die quietly: an
 * {@link Error} (an OutOfMemoryError under a hostile flood) cancels a scheduled task for good, which
 * left the file stale forever. {@link #watch} restarts a dead writer and reports whether it is
 * alive (readiness is false while it is dead or stuck).
 */
final class GatewayStatsFile implements AutoCloseable {
    private static final Logger LOG = Logger.getLogger(GatewayStatsFile.class);
    static final long INTERVAL_MILLIS = 2_000;
    /** Another gateway's file untouched this long is a leftover of a killed process. */
    static final long LEFTOVER_MICROS = 3_600_000_000L;

    /** What one file says. */
    interface Source {
        long subscribers();

        long subscribers(SubscribeMetrics.Compression c);

        boolean feedConnected();

        /** The public listener as host:port, empty until bound. */
        String address();
    }

    private final Path file;
    private final Path tmp;
    private final String id;
    private final Source source;
    private final LongSupplier clockMicros;
    private final long startedAt;
    private final ScheduledExecutorService timer;
    private final long intervalMillis;
    private boolean warned;
    private ScheduledFuture<?> writer;
    private boolean closed;
    /** When the writer last finished an attempt (written or not); 0 before the first. */
    private volatile long lastAttemptNanos;
    private final AtomicLong restarts = new AtomicLong();

    GatewayStatsFile(Path runDir, String id, Source source, LongSupplier clockMicros) {
        this(runDir, id, source, clockMicros, INTERVAL_MILLIS);
    }

    GatewayStatsFile(Path runDir, String id, Source source, LongSupplier clockMicros, long intervalMillis) {
        if (!id.matches("[A-Za-z0-9._-]{1,128}")) {
            throw new IllegalArgumentException("gateway id must be 1-128 of [A-Za-z0-9._-]: " + id);
        }
        this.id = id;
        this.file = runDir.resolve("gateway-" + id + ".json");
        this.tmp = runDir.resolve(".gateway-" + id + ".json.tmp");
        this.source = source;
        this.clockMicros = clockMicros;
        this.intervalMillis = intervalMillis;
        this.startedAt = clockMicros.getAsLong();
        this.timer = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "gateway-stats");
            t.setDaemon(true);
            return t;
        });
    }

    /** {@code JETSTREAM_GATEWAY_ID} when set, else {@code <hostname>-<pid>} (a pod name in k8s). */
    static String defaultId() {
        String host;
        try {
            host = InetAddress.getLocalHost().getHostName();
        } catch (IOException e) {
            host = "gateway";
        }
        return (host.replaceAll("[^A-Za-z0-9._-]", "_") + "-" + ProcessHandle.current().pid());
    }

    Path file() {
        return file;
    }

    void start() {
        removeLeftovers();
        lastAttemptNanos = System.nanoTime();
        schedule();
    }

    private synchronized void schedule() {
        if (!closed) {
            writer = timer.scheduleWithFixedDelay(this::writeQuietly, 0, intervalMillis, TimeUnit.MILLISECONDS);
        }
    }

    /**
     * Restarts the writer when it died (logged loud, with the cause) and tells whether it is alive:
     * started, not dead, and its last attempt no older than three intervals (a stuck write is not).
     */
    synchronized boolean watch(long nowNanos) {
        ScheduledFuture<?> w = writer;
        if (w == null || closed) {
            return false;
        }
        if (w.isDone()) {
            LOG.errorf(cause(w), "the gateway stats writer died; restarting it (%s goes stale meanwhile)", file);
            restarts.incrementAndGet();
            lastAttemptNanos = nowNanos;
            schedule();
            return false;
        }
        return nowNanos - lastAttemptNanos <= TimeUnit.MILLISECONDS.toNanos(3 * intervalMillis);
    }

    /** Times {@link #watch} found the writer dead and restarted it. */
    long restarts() {
        return restarts.get();
    }

    private static Throwable cause(ScheduledFuture<?> dead) {
        try {
            dead.get();
            return null;
        } catch (ExecutionException e) {
            return e.getCause();
        } catch (InterruptedException | java.util.concurrent.CancellationException e) {
            return e;
        }
    }

    String json() {
        JsonObject by = new JsonObject();
        for (SubscribeMetrics.Compression c : SubscribeMetrics.Compression.values()) {
            by.put(c.label, source.subscribers(c));
        }
        return new JsonObject().put("id", id).put("address", source.address()).put("pid", ProcessHandle.current().pid())
                .put("startedAt", startedAt).put("updatedAt", clockMicros.getAsLong())
                .put("subscribers", source.subscribers()).put("subscribersByCompression", by)
                .put("feedConnected", source.feedConnected()).encode();
    }

    void write() throws IOException {
        Files.createDirectories(file.getParent());
        Files.write(tmp, json().getBytes(StandardCharsets.UTF_8));
        try {
            Files.move(tmp, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
        } catch (AtomicMoveNotSupportedException e) {
            Files.move(tmp, file, StandardCopyOption.REPLACE_EXISTING);
        }
    }

    private void writeQuietly() {
        try {
            write();
            warned = false;
        } catch (IOException | RuntimeException e) {
            if (!warned) {
                LOG.warnf("cannot publish gateway stats to %s (the status page will show this gateway as stale): %s",
                        file, e.toString());
                warned = true;
            }
        } finally {
            lastAttemptNanos = System.nanoTime();
        }
    }

    /** A gateway killed with SIGKILL leaves its file; the next gateway to start clears old ones. */
    private void removeLeftovers() {
        Path dir = file.getParent();
        if (!Files.isDirectory(dir)) {
            return;
        }
        long now = clockMicros.getAsLong();
        try (DirectoryStream<Path> ds = Files.newDirectoryStream(dir, "gateway-*.json")) {
            for (Path p : ds) {
                if (now - Files.getLastModifiedTime(p).toMillis() * 1000 > LEFTOVER_MICROS) {
                    Files.deleteIfExists(p);
                }
            }
        } catch (IOException e) {
            // best effort, like every write here
        }
    }

    @Override
    public void close() {
        synchronized (this) {
            closed = true;
        }
        timer.shutdownNow();
        try {
            timer.awaitTermination(5, TimeUnit.SECONDS);
            Files.deleteIfExists(file);
            Files.deleteIfExists(tmp);
        } catch (IOException e) {
            LOG.debugf("cannot remove %s: %s", file, e.toString());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
