package jetstream.client;

import java.time.Duration;
import java.util.Iterator;

/** Child JVM of {@link BoundedMemoryTest}: a snapshot of the whole archive through a small heap. */
public final class BoundedMemoryChild {
    private BoundedMemoryChild() {}

    public static void main(String[] args) {
        Options o = Options.builder().afterSeq(0).snapshotOnly().rawRecords().prefetchBytes(Long.parseLong(args[1]))
                .downloadConcurrency(2).retryBase(Duration.ofMillis(5)).zstd(false).build();
        long events = 0;
        long payload = 0;
        long last = 0;
        try (JetstreamClient c = Jetstream.subscribe(args[0], o)) {
            for (Iterator<Batch> it = c.events(); it.hasNext(); ) {
                for (Event e : it.next().events()) {
                    if (e.seq() != last + 1) {
                        throw new IllegalStateException("seq " + e.seq() + " after " + last);
                    }
                    last = e.seq();
                    events++;
                    payload += e.payloadLength();
                }
            }
            System.out.println("OK events=" + events + " payload=" + payload + " peakBuffered="
                    + c.stats().peakBufferedBytes() + " maxHeap=" + Runtime.getRuntime().maxMemory());
        }
    }
}
