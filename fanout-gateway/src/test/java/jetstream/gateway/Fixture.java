package jetstream.gateway;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Comparator;
import java.util.List;
import java.util.SplittableRandom;
import java.util.stream.Stream;

import jetstream.segment.io.SegmentWriter;

/**
 * The archive and ring the Quarkus wire tests run against: rows 1..ARCHIVED in segment files under
 * the test data dir (several sealed segments plus an active one), the ring holding the archive's
 * last rows (durable) and RING_ONLY more (pinned). All rows are older than the 36 h lookback, so the
 * floor is the last sealed segment's min seq.
 */
final class Fixture {
    static final int ARCHIVED = 600;
    static final int RING_ONLY = 200;
    /** First seq the ring holds: a little above the lookback floor, so cursors at the floor replay cold first. */
    static long RING_FIRST;
    static List<TestRows.Row> rows;
    private static boolean built;

    private Fixture() {}

    static synchronized void install(Gateway gateway) {
        if (!built) {
            rows = TestRows.rows(new SplittableRandom(7), 1, ARCHIVED + RING_ONLY, 12);
            Path segs = Path.of("target/gw-test-data/segments");
            try {
                if (Files.exists(segs)) {
                    try (Stream<Path> s = Files.walk(segs)) {
                        s.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
                    }
                }
                Files.createDirectories(segs);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
            try (SegmentWriter w = SegmentWriter.open(segs, new SegmentWriter.Config(32, 4_000, Duration.ZERO))) {
                for (int i = 0; i < ARCHIVED; i++) {
                    rows.get(i).append(w);
                }
                w.flush();
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
            built = true;
            RING_FIRST = Math.min(ARCHIVED, lastSealedMinSeq(gateway) + 15);
        }
        reset(gateway);
    }

    /** Puts the ring back to the fixture state (dropping anything a test appended) and marks steady state. */
    static void reset(Gateway gateway) {
        for (Subscriber s : gateway.subscribers()) {
            s.close(1001, "test reset");
        }
        EventEncoder enc = new EventEncoder();
        Ring ring = gateway.ring();
        ring.reset(RING_FIRST, ARCHIVED);
        for (int i = (int) RING_FIRST - 1; i < ARCHIVED + RING_ONLY; i++) {
            ring.append(rows.get(i).encode(enc));
        }
        ring.publish();
        gateway.setPhase(Gateway.STEADY_STATE);
        gateway.setWriterRunning(true);
        gateway.setFeedConnected(true);
    }

    static TestRows.Row row(long seq) {
        return rows.get((int) seq - 1);
    }

    static long lastSealedMinSeq(Gateway gateway) {
        var sealed = gateway.cold().catalog().refresh().sealed();
        return sealed.get(sealed.size() - 1).minSeq();
    }
}
