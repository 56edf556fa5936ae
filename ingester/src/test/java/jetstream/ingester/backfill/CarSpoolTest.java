package jetstream.ingester.backfill;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.io.ByteArrayInputStream;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import jetstream.ingester.IngestMetrics;
import jetstream.ingester.store.MetaStore;
import jetstream.ingester.writer.SteadyWriter;
import jetstream.simulator.SimConfig;
import jetstream.simulator.Simulator;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * CARs larger than the in-heap threshold, or arriving while the in-flight budget is spent, are
 * spooled to {@code <data>/backfill-spool/}, parsed from there (same checks, same rows) and deleted.
 */
@Tag("component")
class CarSpoolTest {

    @Test
    @Timeout(240)
    void carsAboveTheThresholdAreSpooledParsedAndDeleted(@TempDir Path dir) throws Exception {
        // most CARs of this network exceed 2 KiB; the faults corrupt, truncate and abort some of them
        runAgainstSimulator(dir, BackfillSettings.DEFAULT_MAX_INFLIGHT_BYTES, 2 << 10);
    }

    @Test
    @Timeout(240)
    void aSpentInFlightBudgetOverflowsToDisk(@TempDir Path dir) throws Exception {
        runAgainstSimulator(dir, 8 << 10, BackfillSettings.DEFAULT_SPOOL_THRESHOLD_BYTES);
    }

    private static void runAgainstSimulator(Path dir, long inflight, long threshold) throws Exception {
        SimConfig cfg = SimConfig.small();
        cfg.seed = 21;
        cfg.accounts = 40;
        cfg.bigRepos = 2;
        cfg.faults.truncateCarEvery = 7;
        cfg.faults.abortCarEvery = 11;
        cfg.faults.corruptCarEvery = 13;
        Path data = dir.resolve("data");
        IngestMetrics metrics = BackfillFixture.metrics();
        try (Simulator sim = Simulator.start(cfg); MetaStore store = MetaStore.open(data)) {
            BackfillSettings s = BackfillFixture.settings(sim.url()).withCarBudget(inflight, threshold);
            try (SteadyWriter writer = BackfillFixture.openWriter(data, store, metrics);
                 BackfillEngine engine = new BackfillEngine(s, BackfillFixture.client(), store, writer, metrics,
                         BackfillFixture.route(sim))) {
                engine.run(BackfillEngine.Mode.FULL);
                assertEquals(0, engine.inflightCarBytes(), "every held CAR byte was given back");
            }
            double spooled = metrics.registry().counter("jetstream_backfill_spooled_cars_total").count();
            assertTrue(spooled >= cfg.bigRepos, "CARs were spooled: " + spooled);
            try (Stream<Path> left = Files.list(data.resolve("backfill-spool/engine"))) {
                assertEquals(List.of(), left.toList(), "every spool file was deleted after parsing");
            }
            BackfillFixture.assertArchiveMatches(sim, BackfillFixture.expected(sim, false), store,
                    BackfillFixture.scan(data));
        }
    }

    @Test
    void heapWhileTheBudgetAllowsOtherwiseAFile(@TempDir Path dir) throws Exception {
        Counter spooled = new SimpleMeterRegistry().counter("spooled");
        CarSpool spool = new CarSpool(new jetstream.ingester.writer.ByteBudget(250_000), 50_000, dir.resolve("spool"), spooled);
        byte[] small = bytes(30_000);
        Object a = spool.read(new ByteArrayInputStream(small), small.length, 1 << 20);
        assertArrayEquals(small, (byte[]) a);
        assertEquals(75_000, spool.inflightBytes(), "a CAR in heap holds what parsing it takes, 2.5 times its bytes");
        // unknown length, over the threshold: spooled whatever the budget
        byte[] big = bytes(200_000);
        Path f = assertInstanceOf(Path.class, spool.read(unsized(big), -1, 1 << 20));
        assertArrayEquals(big, Files.readAllBytes(f));
        assertEquals(75_000, spool.inflightBytes(), "a spooled CAR holds no budget");
        // under the threshold but the budget cannot take its parse: spooled
        Object c = spool.read(new ByteArrayInputStream(bytes(45_001)), 45_001, 1 << 20);
        Object d = spool.read(unsized(bytes(45_000)), -1, 1 << 20);
        assertInstanceOf(byte[].class, c);
        assertInstanceOf(Path.class, d);
        assertEquals(75_000 + CarSpool.heapCost(45_001), spool.inflightBytes());
        Object e = spool.read(unsized(bytes(10_001)), -1, 1 << 20);
        assertInstanceOf(byte[].class, e);
        assertEquals(75_000 + CarSpool.heapCost(45_001) + CarSpool.heapCost(10_001), spool.inflightBytes(),
                "a body of unknown length read in pieces holds its cost exactly");
        spool.release(CarSpool.heapCost(30_000));
        spool.release(CarSpool.heapCost(45_001));
        spool.release(CarSpool.heapCost(10_001));
        assertEquals(0, spool.inflightBytes());
        assertEquals(2, spooled.count());
        // beyond the CAR cap: refused, nothing left behind
        assertNull(spool.read(unsized(big), -1, 100_000));
        CarSpool.delete(f);
        CarSpool.delete((Path) d);
        try (Stream<Path> left = Files.list(dir.resolve("spool"))) {
            assertEquals(0, left.count());
        }
        assertEquals(0, spool.inflightBytes());
        // a restart clears what a crash left
        Files.write(dir.resolve("spool/repo-left.car"), small);
        new CarSpool(new jetstream.ingester.writer.ByteBudget(100_000), 50_000, dir.resolve("spool"), spooled);
        assertTrue(Files.notExists(dir.resolve("spool/repo-left.car")));
    }

    private static byte[] bytes(int n) {
        byte[] b = new byte[n];
        for (int i = 0; i < n; i++) {
            b[i] = (byte) (i * 31 + 7);
        }
        return b;
    }

    /** A stream that does not say how long it is (no content-length). */
    private static InputStream unsized(byte[] b) {
        return new ByteArrayInputStream(b);
    }
}
