package jetstream.bench;

import java.net.InetSocketAddress;

import jetstream.wire.RawUpgrades;

/** The unmeasured floods {@link UpgradeFloodBench} may send before its measured one. */
final class FloodWarmUps {
    private FloodWarmUps() {}

    /**
     * {@code warmGenerator=N} (default 3000, 0: off): the generator's own code compiled first, by a flood of {@code N}
     * upgrades at a {@link Refuser} in this JVM, not at the gateway. The generator stands for remote machines: cold, its
     * JIT took ~0.25 core of the 2 the gateway shares during the gateway's first flood.
     */
    static void generator(int upgrades, int dids, int inflight) throws Exception {
        if (upgrades <= 0) {
            return;
        }
        try (Refuser r = new Refuser()) {
            RawUpgrades warm = new RawUpgrades(r.address(), null, "/subscribe", dids);
            long t0 = System.nanoTime();
            warm.run(upgrades, inflight);
            System.out.printf("generator warmed: %d upgrades at a stand-in server in %.1f s, outcomes=%s%n", upgrades,
                    (System.nanoTime() - t0) / 1e9, new java.util.TreeMap<>(warm.outcomes));
        }
        Thread.sleep(2000); // its compilations finish before the quiet window
    }

    /**
     * {@code warmup=N}: a first flood of {@code N} upgrades at the {@code gateway} from one address, its accepted
     * upgrades then closed, so the measured flood meets a gateway whose flood paths the JIT has compiled, as a gateway
     * that has met one flood before would be; without it the measured flood also pays their compilation on the same
     * 2 cores. The gateway now runs such a flood itself before it is ready ({@code JETSTREAM_SUBSCRIBE_WARM_UP_UPGRADES},
     * default 2,000; {@code jvm=-Djetstream.subscribe-warm-up-upgrades=0} measures a cold gateway): this one comes on top.
     */
    static void gateway(InetSocketAddress gateway, int upgrades, int dids, int inflight) throws Exception {
        if (upgrades <= 0) {
            return;
        }
        RawUpgrades warm = new RawUpgrades(gateway, null, "/subscribe", dids);
        long t0 = System.nanoTime();
        warm.run(upgrades, inflight);
        warm.closeHeld();
        System.out.printf("warm-up flood: %d upgrades in %.1f s, outcomes=%s%n", upgrades, (System.nanoTime() - t0) / 1e9,
                new java.util.TreeMap<>(warm.outcomes));
        Thread.sleep(3000); // the closed subscriptions' state given back before the quiet window
    }
}
