package jetstream.gateway;

import java.net.InetSocketAddress;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.vertx.core.http.HttpServerRequest;
import jetstream.wire.RawUpgrades;

/**
 * The gateway's start-up warm-up: once the feed is steady and the public listener bound, and before readiness (a
 * gateway that was ready during the ingester's bootstrap skips it), the gateway sends itself a flood of
 * {@code JETSTREAM_SUBSCRIBE_WARM_UP_UPGRADES} 10,000-DID v1 upgrades over its own listener ({@link RawUpgrades},
 * {@link #INFLIGHT} at once, under no per-IP cap), then waits until the ones it was granted are closed. A gateway
 * meeting its first flood of large upgrades used to compile that flood's paths (Netty's reads and buffer pools, the
 * request line, the parser, the filters, the parked-subscriber check) while serving it: the JIT took ~0.4 of 2 cores
 * and live subscribers waited up to twice as long as in the gateway's second flood (BENCHMARKS.md, #21 flood section).
 *
 * <p>While it runs, every {@code jetstream_*} count the subscribe path makes goes to a scratch registry (the warm-up
 * is not traffic) and stream upgrades without the warm-up's per-process token are refused 503, as before the feed is
 * steady. Quarkus's own HTTP server metrics do count the warm-up's requests. It gives up after {@link #MAX_NANOS}; a
 * failure is logged and the gateway serves without it: it is an optimisation, never a condition of service.
 */
final class GatewayWarmUp {
    private static final org.jboss.logging.Logger LOG = org.jboss.logging.Logger.getLogger(GatewayWarmUp.class);
    /** The request header that carries {@link #token}. */
    static final String HEADER = "x-jetstream-warm-up";
    /** DIDs per warm-up upgrade: the largest filter a v1 client may send. */
    static final int DIDS = 10_000;
    /** Upgrades outstanding at once: a flood's concurrency, so the head and state budgets' refusals run too. */
    static final int INFLIGHT = 200;
    static final long MAX_NANOS = TimeUnit.SECONDS.toNanos(60);
    /** How long the warm-up waits for the gateway to close the subscriptions it granted. */
    private static final long DRAIN_NANOS = TimeUnit.SECONDS.toNanos(10);

    private enum State { PENDING, RUNNING, DONE }

    private final int upgrades;
    private final String token = UUID.randomUUID().toString();
    private final SubscribeMetrics scratch = new SubscribeMetrics(new SimpleMeterRegistry());
    private volatile State state;
    private volatile String outcome;

    GatewayWarmUp(int upgrades) {
        if (upgrades < 0) {
            throw new IllegalArgumentException("JETSTREAM_SUBSCRIBE_WARM_UP_UPGRADES must be >= 0 (0 = off)");
        }
        this.upgrades = upgrades;
        this.state = upgrades == 0 ? State.DONE : State.PENDING;
        this.outcome = upgrades == 0 ? "off" : "not run";
    }

    /** Done, given up, or off: the gateway may report ready. */
    boolean done() {
        return state == State.DONE;
    }

    /** What the last warm-up did (readiness data, logs). */
    String outcome() {
        return outcome;
    }

    /**
     * The metrics the subscribe path counts in now: the scratch registry while the warm-up runs, else {@code real} (a
     * gateway waiting for a steady feed, which may take days of bootstrap, counts its refusals as usual).
     */
    SubscribeMetrics metrics(SubscribeMetrics real) {
        return state == State.RUNNING ? scratch : real;
    }

    /** True for a request the warm-up sent. */
    boolean own(HttpServerRequest req) {
        return state == State.RUNNING && token.equals(req.getHeader(HEADER));
    }

    /** True while requests other than the warm-up's are to be refused. */
    boolean refuses(HttpServerRequest req) {
        return state != State.DONE && !own(req);
    }

    /**
     * Starts the warm-up on its own thread when it is pending, {@code steady} and the public listener is bound at
     * {@code address} ({@code host:port}, empty until bound). A gateway {@code readyBefore} the feed was steady (it
     * came up during the ingester's bootstrap) skips it: it would refuse the clients arriving at the phase change.
     */
    synchronized void startWhen(boolean steady, boolean readyBefore, String address) {
        if (state != State.PENDING || !steady || address.isEmpty()) {
            return;
        }
        if (readyBefore) {
            outcome = "skipped: the gateway was ready before the feed was steady";
            state = State.DONE;
            LOG.info("warm-up " + outcome);
            return;
        }
        state = State.RUNNING;
        Thread t = new Thread(() -> run(address), "warm-up");
        t.setDaemon(true);
        t.start();
    }

    /** The listener as this host reaches it: a wildcard bind is reached over loopback. */
    static InetSocketAddress target(String address) {
        int colon = address.lastIndexOf(':');
        String host = address.substring(0, colon);
        int port = Integer.parseInt(address.substring(colon + 1));
        if (host.isEmpty() || host.equals("0.0.0.0")) {
            host = "127.0.0.1";
        } else if (host.equals("::") || host.equals("[::]")) {
            host = "::1";
        }
        return new InetSocketAddress(host, port);
    }

    private void run(String address) {
        long t0 = System.nanoTime();
        try {
            RawUpgrades flood = new RawUpgrades(target(address), null, UpgradeFilter.V1_PATH, DIDS,
                    HEADER + ": " + token + "\r\n");
            flood.run(upgrades, INFLIGHT, MAX_NANOS);
            flood.closeHeld();
            long drainEnd = System.nanoTime() + DRAIN_NANOS;
            while (scratch.subscribers() > 0 && System.nanoTime() - drainEnd < 0) {
                Thread.sleep(20);
            }
            outcome = String.format("%d upgrades in %.1f s: %s", upgrades, (System.nanoTime() - t0) / 1e9,
                    new TreeMap<>(flood.outcomes));
            if (flood.outcomes.containsKey("101")) {
                LOG.infof("warm-up done: %s", outcome);
            } else {
                LOG.warnf("warm-up granted no upgrade (%s); serving without it", outcome);
            }
        } catch (java.io.IOException | RuntimeException e) {
            outcome = "failed: " + e;
            LOG.warnf("warm-up failed after %.1f s (%s); serving without it", (System.nanoTime() - t0) / 1e9, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            outcome = "interrupted";
        } finally {
            state = State.DONE;
        }
    }
}
