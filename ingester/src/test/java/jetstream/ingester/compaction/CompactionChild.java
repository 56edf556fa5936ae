package jetstream.ingester.compaction;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.locks.ReentrantLock;
import jetstream.ingester.store.MetaStore;
import jetstream.segment.io.SegmentIO;

/**
 * A child process running one compaction pass over a finished archive (no writer: nothing to
 * rotate), for the kill -9 test. Prints {@code START} once the store is open and the pass begins,
 * {@code DONE <watermark>} after it. Args: dataDir, rewrite workers.
 */
public final class CompactionChild {
    public static void main(String[] args) throws Exception {
        Path data = Path.of(args[0]);
        int workers = Integer.parseInt(args[1]);
        try (MetaStore store = MetaStore.open(data)) {
            Compactor c = new Compactor(data, store, SegmentIO.PRODUCTION, new ReentrantLock(),
                    new Compactor.Config(Duration.ofHours(4), 32_000_000, workers), () -> { }, f -> { },
                    new SimpleMeterRegistry(), t -> Runtime.getRuntime().halt(70));
            System.out.println("START");
            System.out.flush();
            Compactor.PassResult r = c.runPass("crash test");
            System.out.println("DONE " + r.targetSeq() + " " + r.segmentsRewritten());
            System.out.flush();
        }
        System.exit(0);
    }
}
