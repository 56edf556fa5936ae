package jetstream.bench;

import java.util.concurrent.TimeUnit;
import java.util.function.DoubleConsumer;

/** A server under {@link GatewayBench}'s load (the gateway or a floor): its process, port and event-rate control. */
final class ServerUnderTest {
    final String name;
    final Process process;
    final int port;
    private final DoubleConsumer rate;

    /** {@code rate} sets the events per second: the floor generates its own, the gateway follows the feed. */
    ServerUnderTest(String name, Process process, int port, DoubleConsumer rate) {
        this.name = name;
        this.process = process;
        this.port = port;
        this.rate = rate;
    }

    void rate(double r) {
        rate.accept(r);
    }

    void stop() throws InterruptedException {
        process.destroy();
        if (!process.waitFor(20, TimeUnit.SECONDS)) {
            process.destroyForcibly();
        }
    }
}
