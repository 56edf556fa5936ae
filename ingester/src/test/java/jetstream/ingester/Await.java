package jetstream.ingester;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.function.BooleanSupplier;

/** Test helper: waits up to 30 s for a condition, polling every 20 ms; fails the test when it never holds. */
final class Await {
    private Await() {}

    static void until(BooleanSupplier done) throws InterruptedException {
        long deadline = System.nanoTime() + 30_000_000_000L;
        while (!done.getAsBoolean() && System.nanoTime() < deadline) {
            Thread.sleep(20);
        }
        assertTrue(done.getAsBoolean(), "timed out");
    }
}
