package jetstream.ingester;

import io.micrometer.core.instrument.MeterRegistry;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.function.Consumer;
import java.util.function.UnaryOperator;
import jetstream.feed.FeedFrame;
import jetstream.feed.LifecyclePhase;
import jetstream.ingester.feed.FeedServer;
import jetstream.ingester.live.IdentityResolver;
import jetstream.ingester.live.LiveConsumer;
import jetstream.ingester.store.MetaKeys;
import jetstream.ingester.store.MetaStore;
import jetstream.ingester.writer.SteadyWriter;
import jetstream.segment.io.SegmentIO;
import jetstream.segment.io.SegmentWriter;

/**
 * The ingester's processes wired together, framework-free so tests can run it as a child process:
 * metadata store, steady writer (seq lease, readable log), feed server, and the live consumer when
 * a relay is configured. Only the steady state exists until the bootstrap issue lands: a fresh data
 * directory enters it directly when {@code startSteady} is set, any other phase is refused.
 */
public final class IngesterCore implements AutoCloseable {

    public record Settings(Path dataDir, String relayUrl, String plcUrl, boolean verify, boolean startSteady,
                           SegmentWriter.Config segments, long leaseSize, long logBudgetBytes,
                           UnaryOperator<String> pdsRoute) {}

    private final Settings settings;
    private final MetaStore store;
    private final SteadyWriter writer;
    private final FeedServer feed;
    private final LiveConsumer live;
    private final LifecyclePhase phase;

    private IngesterCore(Settings settings, MetaStore store, SteadyWriter writer, FeedServer feed, LiveConsumer live,
                         LifecyclePhase phase) {
        this.settings = settings;
        this.store = store;
        this.writer = writer;
        this.feed = feed;
        this.live = live;
        this.phase = phase;
    }

    public static IngesterCore open(Settings s, MeterRegistry registry, Consumer<Throwable> onFatal) throws IOException {
        IngestMetrics metrics = new IngestMetrics(registry);
        Files.createDirectories(s.dataDir());
        MetaStore store = MetaStore.open(s.dataDir());
        store.observe(metrics::storeOp);
        try {
            long enteredAt = 0;
            byte[] stored = store.get(MetaKeys.PHASE);
            LifecyclePhase phase;
            if (stored == null) {
                if (!s.startSteady()) {
                    throw new IllegalStateException("the data directory " + s.dataDir() + " is fresh and bootstrap is not"
                            + " implemented yet: set JETSTREAM_INGEST_START_STEADY=true to start in steady state"
                            + " directly against the relay (empty archive)");
                }
                Instant now = Instant.now();
                try (MetaStore.Batch b = store.batch()) {
                    b.put(MetaKeys.PHASE, LifecyclePhase.STEADY_STATE.stored().getBytes(StandardCharsets.US_ASCII))
                            .put(MetaKeys.PHASE_ENTERED_AT, now.toString().getBytes(StandardCharsets.US_ASCII)).commit();
                }
                phase = LifecyclePhase.STEADY_STATE;
                enteredAt = now.getEpochSecond() * 1_000_000 + now.getNano() / 1000;
            } else {
                phase = LifecyclePhase.ofStored(new String(stored, StandardCharsets.US_ASCII));
                if (phase == null) {
                    throw new IllegalStateException("metadata key phase holds an unknown value");
                }
                if (phase != LifecyclePhase.STEADY_STATE) {
                    throw new IllegalStateException("phase " + phase.stored() + " cannot be resumed by this build"
                            + " (only steady_state is implemented)");
                }
                byte[] at = store.get(MetaKeys.PHASE_ENTERED_AT);
                if (at != null) {
                    Instant i = Instant.parse(new String(at, StandardCharsets.US_ASCII));
                    enteredAt = i.getEpochSecond() * 1_000_000 + i.getNano() / 1000;
                }
            }
            FeedServer[] feedRef = new FeedServer[1];
            SteadyWriter writer = SteadyWriter.open(s.dataDir(), store, s.segments(), SegmentIO.PRODUCTION, s.leaseSize(),
                    s.logBudgetBytes(), () -> {
                        FeedServer f = feedRef[0];
                        if (f != null) {
                            f.wake();
                        }
                    }, metrics, onFatal);
            writer.log().control(new FeedFrame.Phase(phase, LifecyclePhase.NONE, enteredAt));
            FeedServer feed = new FeedServer(s.dataDir().resolve("run").resolve("feed.sock"), writer.log(), metrics);
            feedRef[0] = feed;
            feed.start();
            LiveConsumer live = null;
            if (s.relayUrl() != null && !s.relayUrl().isEmpty()) {
                HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10))
                        .followRedirects(HttpClient.Redirect.NORMAL).build();
                IdentityResolver ids = new IdentityResolver(http, s.plcUrl(), store, Duration.ofHours(24));
                LifecyclePhase p = phase;
                live = new LiveConsumer(URI.create(s.relayUrl()), http, store, writer, ids, metrics, s.verify(),
                        () -> p == LifecyclePhase.STEADY_STATE, s.pdsRoute());
                live.start();
            }
            metrics.gauge("jetstream_ingest_active_segment_bytes", writer::activeSegmentBytes);
            metrics.gauge("jetstream_ingest_next_seq", () -> writer.log().nextSeq());
            metrics.gauge("jetstream_ingest_readable_log_bytes", () -> writer.log().bytes());
            metrics.gauge("jetstream_ingest_readable_log_pinned_bytes", () -> writer.log().pinnedBytes());
            metrics.gauge("jetstream_ingest_readable_log_pinned_overrun_bytes", () -> writer.log().pinnedOverrunBytes());
            metrics.gauge("jetstream_ingest_readable_log_floor_seq", () -> writer.log().floorSeq());
            metrics.gauge("jetstream_ingest_readable_log_durable_seq", () -> writer.log().durableSeq());
            metrics.gauge("jetstream_feed_readers", feed::readerCount);
            Path dataDir = s.dataDir();
            metrics.gauge("jetstream_data_dir_free_bytes", () -> {
                try {
                    return Files.getFileStore(dataDir).getUsableSpace();
                } catch (IOException e) {
                    return -1;
                }
            });
            return new IngesterCore(s, store, writer, feed, live, phase);
        } catch (RuntimeException | IOException e) {
            store.close();
            throw e;
        }
    }

    public SteadyWriter writer() {
        return writer;
    }

    public FeedServer feed() {
        return feed;
    }

    public LiveConsumer live() {
        return live;
    }

    public LifecyclePhase phase() {
        return phase;
    }

    public Settings settings() {
        return settings;
    }

    /** Graceful stop: the consumer first, then the writer (last block durable, lease collapsed), feed, store. */
    @Override
    public void close() throws IOException {
        if (live != null) {
            live.close();
        }
        writer.close();
        feed.close();
        store.close();
    }
}
