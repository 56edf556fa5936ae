package jetstream.gateway;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.netty.channel.DefaultEventLoopGroup;

/**
 * {@code jetstream_gateway_event_loop_delay_seconds} (docs/metrics.md): a task holding an event loop shows as that
 * loop's probe starting late, once per stall, and the probes go on after it; closing stops them.
 */
@Tag("unit")
class EventLoopDelayTest {
    @Test
    void aBlockedLoopShowsAsOneLateProbe() throws Exception {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        DefaultEventLoopGroup loops = new DefaultEventLoopGroup(1);
        try (EventLoopDelay d = new EventLoopDelay(loops, registry)) {
            assertEquals(1, d.loops());
            Timer t = registry.get("jetstream.gateway.event.loop.delay").timer();
            waitFor(() -> t.count() >= 4);
            long before = t.count();
            loops.next().submit(() -> sleep(300)).get(5, TimeUnit.SECONDS);
            waitFor(() -> t.max(TimeUnit.MILLISECONDS) >= 200);
            // one record for the whole 300 ms stall (a fixed-rate probe would add one per missed 20 ms period, ~15)
            long during = t.count() - before;
            assertTrue(during >= 1 && during <= 8, "a stall counted once, not per missed period: " + during);
            long after = t.count();
            waitFor(() -> t.count() > after + 4);
        } finally {
            loops.shutdownGracefully(0, 1, TimeUnit.SECONDS).sync();
        }
    }

    @Test
    void closingStopsTheProbes() throws Exception {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        DefaultEventLoopGroup loops = new DefaultEventLoopGroup(1);
        try {
            EventLoopDelay d = new EventLoopDelay(loops, registry);
            Timer t = registry.get("jetstream.gateway.event.loop.delay").timer();
            waitFor(() -> t.count() >= 2);
            d.close();
            long stopped = t.count();
            Thread.sleep(200);
            assertTrue(t.count() <= stopped + 1, "no probe after close: " + stopped + " then " + t.count());
        } finally {
            loops.shutdownGracefully(0, 1, TimeUnit.SECONDS).sync();
        }
    }

    private static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static void waitFor(java.util.function.BooleanSupplier c) throws InterruptedException {
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!c.getAsBoolean()) {
            if (System.nanoTime() > end) {
                throw new AssertionError("condition not met within 10 s");
            }
            Thread.sleep(10);
        }
    }
}
