package jetstream.bench;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.stream.Stream;
import jetstream.atproto.firehose.ArchiveRow;
import jetstream.atproto.firehose.ByteSlice;
import jetstream.ingester.IngestMetrics;
import jetstream.ingester.store.MetaKeys;
import jetstream.ingester.store.MetaStore;
import jetstream.ingester.writer.SteadyWriter;
import jetstream.segment.BlockBuilder;
import jetstream.segment.SegmentReader;
import jetstream.segment.ZstdFrames;
import jetstream.segment.io.SegmentIO;
import jetstream.segment.io.SegmentWriter;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

/**
 * Durable append through the steady writer with real fsync: each invocation submits one block of
 * 4096 rows (corpus record payloads) and waits for its durable watermark, i.e. seq allocation inside
 * the lease, readable-log encoding, block encode + zstd, block fsync, then the synced RocksDB batch.
 * The floor is the box's fsync cost for the same block: write the compressed block's bytes,
 * fsync, then one synced RocksDB write. Scores are events/s.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
public class DurableAppendBench {
    static final int ROWS = 4096;

    private Path dir;
    private MetaStore store;
    private SteadyWriter writer;
    private List<ArchiveRow> rows;
    private long cursor;
    private FileChannel floorFile;
    private MetaStore floorStore;
    private ByteBuffer floorBlock;

    @Setup(Level.Trial)
    public void setup() throws Exception {
        dir = Files.createTempDirectory("durable-append-bench");
        List<byte[][]> records = new ArrayList<>();
        try (ZstdFrames zstd = new ZstdFrames()) {
            SegmentReader corpus = SegmentReader.open(BenchData.vectors().resolve("jetstream-corpus/golden_corpus_segment.jss"));
            corpus.forEachRow(zstd, (b, v, i) -> records.add(new byte[][] {
                v.collection(i).getBytes(StandardCharsets.UTF_8), v.payload(i)}));
            Random rnd = new Random(1);
            rows = new ArrayList<>(ROWS);
            BlockBuilder block = new BlockBuilder(ROWS);
            for (int i = 0; i < ROWS; i++) {
                byte[][] rec = records.get(rnd.nextInt(records.size()));
                String did = "did:plc:" + Long.toString(rnd.nextLong() & Long.MAX_VALUE, 32);
                String coll = new String(rec[0], StandardCharsets.UTF_8);
                rows.add(new ArchiveRow(ArchiveRow.KIND_CREATE, did, coll, "3l" + i, "3lrevabcdefgh",
                        new ByteSlice(rec[1], 0, rec[1].length)));
                block.add(i + 1, 1, 0, 1, did.getBytes(StandardCharsets.UTF_8), rec[0], ("3l" + i).getBytes(StandardCharsets.UTF_8),
                        "3lrevabcdefgh".getBytes(StandardCharsets.UTF_8), rec[1]);
            }
            byte[] body = block.toBody();
            floorBlock = ByteBuffer.wrap(zstd.compress(body, 0, body.length));
        }
        Path data = dir.resolve("data");
        store = MetaStore.open(data);
        writer = SteadyWriter.open(data, store, new SegmentWriter.Config(ROWS, 256L << 20, Duration.ofSeconds(30)),
                SegmentIO.PRODUCTION, ROWS, 64L << 20, () -> {}, new IngestMetrics(new SimpleMeterRegistry()),
                t -> t.printStackTrace());
        floorFile = FileChannel.open(dir.resolve("floor.bin"), StandardOpenOption.CREATE, StandardOpenOption.WRITE);
        floorStore = MetaStore.open(dir.resolve("floor"));
    }

    @TearDown(Level.Trial)
    public void tearDown() throws IOException {
        writer.close();
        store.close();
        floorFile.close();
        floorStore.close();
        try (Stream<Path> s = Files.walk(dir)) {
            s.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        }
    }

    @Benchmark
    @OperationsPerInvocation(ROWS)
    @Floor("fsyncFloor")
    public long durableAppend() throws InterruptedException {
        cursor++;
        long target = writer.log().nextSeq() + ROWS - 1;
        writer.submit(new SteadyWriter.Submission(rows, Map.of(MetaKeys.RELAY_CURSOR, MetaKeys.versionedU64le(cursor)), null));
        while (writer.log().durableSeq() < target) {
            LockSupport.parkNanos(20_000);
        }
        return target;
    }

    @Benchmark
    @OperationsPerInvocation(ROWS)
    public long fsyncFloor() throws IOException {
        floorBlock.rewind();
        while (floorBlock.hasRemaining()) {
            floorFile.write(floorBlock);
        }
        floorFile.force(false);
        cursor++;
        try (MetaStore.Batch b = floorStore.batch()) {
            b.put(MetaKeys.RELAY_CURSOR, MetaKeys.versionedU64le(cursor)).commit();
        }
        return cursor;
    }
}
