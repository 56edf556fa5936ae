package jetstream.gateway;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.netty.util.concurrent.EventExecutor;
import io.netty.util.concurrent.ScheduledFuture;

/**
 * {@code jetstream_gateway_event_loop_delay_seconds}: how late a task due on each event loop every {@link #PERIOD_NANOS}
 * starts. Every live subscriber's delivery runs as a task on its connection's event loop, so this is the wait each of
 * them pays on top of the ring's wake window: a loop busy with a long turn (hundreds of large request heads read in
 * one) or short of CPU (the JIT, the upgrade parser and GC on the same cores) shows here before any subscriber
 * complains. Each probe reschedules itself from when it ran, so one stall counts once, not once per missed period.
 */
final class EventLoopDelay implements AutoCloseable {
    static final long PERIOD_NANOS = TimeUnit.MILLISECONDS.toNanos(20);

    private final Timer delay;
    private final List<Probe> probes = new ArrayList<>();
    private volatile boolean closed;

    EventLoopDelay(Iterable<EventExecutor> loops, MeterRegistry registry) {
        delay = Timer.builder("jetstream.gateway.event.loop.delay").publishPercentileHistogram()
                .minimumExpectedValue(Duration.ofMillis(1)).maximumExpectedValue(Duration.ofSeconds(30)).register(registry);
        for (EventExecutor loop : loops) {
            Probe p = new Probe(loop);
            probes.add(p);
            p.arm(System.nanoTime());
        }
    }

    /** Event loops watched. */
    int loops() {
        return probes.size();
    }

    @Override
    public void close() {
        closed = true;
        for (Probe p : probes) {
            ScheduledFuture<?> f = p.next;
            if (f != null) {
                f.cancel(false);
            }
        }
    }

    private final class Probe implements Runnable {
        private final EventExecutor loop;
        private long due;
        private volatile ScheduledFuture<?> next;

        Probe(EventExecutor loop) {
            this.loop = loop;
        }

        void arm(long now) {
            if (!closed && !loop.isShuttingDown()) {
                due = now + PERIOD_NANOS;
                next = loop.schedule(this, PERIOD_NANOS, TimeUnit.NANOSECONDS);
            }
        }

        @Override
        public void run() {
            long now = System.nanoTime();
            delay.record(Math.max(0, now - due), TimeUnit.NANOSECONDS);
            arm(now);
        }
    }
}
