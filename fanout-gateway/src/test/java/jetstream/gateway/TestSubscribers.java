package jetstream.gateway;

import java.nio.file.Path;
import java.util.concurrent.Executors;

import jetstream.filter.SubscriptionFilter;
import jetstream.replay.BlockCache;
import jetstream.replay.SegmentCatalog;
import jetstream.replay.VacancySet;

/** Subscribers over a ring for tests that drive one directly (no transport, no archive). */
final class TestSubscribers {
    private TestSubscribers() {}

    /** A v2 subscriber reading 10 events at a time, whose cold replay reads an empty archive in {@code dir}. */
    static Subscriber v2(Path dir, Ring ring, SubscriberSink sink, SubscribeMetrics metrics, SubscriptionFilter filter) {
        ColdReplay cold = new ColdReplay(new SegmentCatalog(dir), new BlockCache(1 << 20), new VacancySet(),
                Executors.newSingleThreadExecutor());
        SubscribeSettings settings = SubscribeSettings.builder().readBatch(10).build();
        return new Subscriber(Wire.V2, false, false, new Subscriber.Options(filter, 0), ring, cold, sink, metrics,
                settings, System::nanoTime);
    }
}
