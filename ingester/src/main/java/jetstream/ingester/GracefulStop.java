package jetstream.ingester;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Bounds the graceful close by {@code JETSTREAM_SHUTDOWN_TIMEOUT}: the close (consumer stop, last
 * block fsync + batch, lease collapse) runs on its own thread and the caller waits at most the
 * bound. A close that overruns is abandoned to the process exit, which is as safe as a crash:
 * restart cuts a torn tail, registers the uncollapsed lease as a vacancy and replays from the
 * durable relay cursor.
 */
public final class GracefulStop {
    private GracefulStop() {}

    /** True when {@code c} closed within {@code bound}; a failure of the close is rethrown. */
    public static boolean closeWithin(AutoCloseable c, Duration bound) throws Exception {
        AtomicReference<Exception> failed = new AtomicReference<>();
        Thread t = new Thread(() -> {
            try {
                c.close();
            } catch (Exception e) {
                failed.set(e);
            }
        }, "graceful-close");
        t.setDaemon(true);
        t.start();
        t.join(Math.max(1, bound.toMillis()));
        if (t.isAlive()) {
            return false;
        }
        if (failed.get() != null) {
            throw failed.get();
        }
        return true;
    }
}
