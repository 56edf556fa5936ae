package jetstream.bench;

import com.github.luben.zstd.ZstdDecompressCtx;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import jetstream.segment.BlockBuilder;
import jetstream.segment.BlockView;
import jetstream.segment.ZstdFrames;
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
 * Block encode and decode throughput on a realistic 4096-row block (record payloads of the Go
 * corpus segment, which are the records of repo.car, made distinct per row; 4096 DIDs; TID rkeys;
 * ~5 % deletes), with raw zstd compression/decompression of the same body as the floor. Scores are
 * events/s. {@code encodeBody} and {@code decodeBodyOnly} print {@code floor=none}: they are the zstd-free
 * share of the floored paths, which no cheaper operation on the same body bounds.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
public class SegmentBlockBench {
    static final int ROWS = 4096;

    private final List<byte[][]> rows = new ArrayList<>();
    private BlockBuilder builder;
    private BlockView view;
    private ZstdFrames zstd;
    private final ZstdDecompressCtx rawDecompressor = new ZstdDecompressCtx();
    private byte[] body;
    private byte[] frame;
    private byte[] frameOut;
    private byte[] rawOut;

    @Setup(Level.Trial)
    public void setup() throws Exception {
        zstd = new ZstdFrames();
        List<byte[][]> records = BenchCorpus.segmentRecords();
        Random rnd = new Random(1);
        String alphabet = "abcdefghijklmnopqrstuvwxyz234567";
        for (int i = 0; i < ROWS; i++) {
            byte[][] rec = records.get(rnd.nextInt(records.size()));
            boolean delete = rnd.nextInt(20) == 0;
            StringBuilder did = new StringBuilder("did:plc:");
            StringBuilder tid = new StringBuilder("3l");
            for (int c = 0; c < 24; c++) {
                did.append(alphabet.charAt(rnd.nextInt(32)));
            }
            for (int c = 0; c < 11; c++) {
                tid.append(alphabet.charAt(rnd.nextInt(32)));
            }
            rows.add(new byte[][] {
                {(byte) (delete ? 3 : 1)},
                did.toString().getBytes(StandardCharsets.UTF_8),
                rec[0],
                tid.toString().getBytes(StandardCharsets.UTF_8),
                tid.toString().replace("3l", "3m").getBytes(StandardCharsets.UTF_8),
                delete ? null : distinct(rec[1], rnd)});
        }
        builder = new BlockBuilder(ROWS);
        view = new BlockView();
        body = buildBody();
        frame = zstd.compress(body, 0, body.length);
        frameOut = new byte[ZstdFrames.compressBound(body.length)];
        rawOut = new byte[body.length];
        System.out.printf("%nblock: %d rows, body %d B, frame %d B, %.1f on-disk bytes/event (frame + prefix)%n",
                ROWS, body.length, frame.length, (frame.length + 8.0) / ROWS);
    }

    /**
     * A copy of a corpus record made distinct the way real records are: link digests (after
     * {@code 01 71 12 20}) become random bytes and identifier-like runs (13+ base32 characters: TIDs,
     * DID and CID strings) random base32, so zstd cannot reuse whole records across rows.
     */
    static byte[] distinct(byte[] record, Random rnd) {
        byte[] r = record.clone();
        String alphabet = "abcdefghijklmnopqrstuvwxyz234567";
        for (int i = 0; i + 36 <= r.length; i++) {
            if (r[i] == 0x01 && r[i + 1] == 0x71 && r[i + 2] == 0x12 && r[i + 3] == 0x20) {
                for (int j = i + 4; j < i + 36; j++) {
                    r[j] = (byte) rnd.nextInt(256);
                }
                i += 35;
            }
        }
        int run = 0;
        for (int i = 0; i <= r.length; i++) {
            boolean b32 = i < r.length && ((r[i] >= 'a' && r[i] <= 'z') || (r[i] >= '2' && r[i] <= '7'));
            if (b32) {
                run++;
                continue;
            }
            if (run >= 13) {
                for (int j = i - run; j < i; j++) {
                    r[j] = (byte) alphabet.charAt(rnd.nextInt(32));
                }
            }
            run = 0;
        }
        return r;
    }

    private byte[] buildBody() {
        builder.reset();
        long seq = 1_000_000;
        long w = 1_750_000_000_000_000L;
        for (byte[][] r : rows) {
            builder.add(seq++, w++, 0, r[0][0], r[1], r[2], r[3], r[4], r[5]);
        }
        return builder.toBody();
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        zstd.close();
        rawDecompressor.close();
    }

    /** Rows into a body (no compression). */
    @Benchmark
    @OperationsPerInvocation(ROWS)
    public int encodeBody() {
        builder.reset();
        long seq = 1_000_000;
        long w = 1_750_000_000_000_000L;
        for (byte[][] r : rows) {
            builder.add(seq++, w++, 0, r[0][0], r[1], r[2], r[3], r[4], r[5]);
        }
        return builder.writeBody(rawOut, 0);
    }

    /** Rows into a compressed block frame: what the writer does per block. */
    @Benchmark
    @OperationsPerInvocation(ROWS)
    @Floor("rawZstdCompress")
    public int encodeFrame() {
        int len = encodeBody();
        return zstd.compress(rawOut, 0, len, frameOut, 0);
    }

    /** Floor for encodeFrame: compressing the same body alone. */
    @Benchmark
    @OperationsPerInvocation(ROWS)
    public int rawZstdCompress() {
        return zstd.compress(body, 0, body.length, frameOut, 0);
    }

    /** Frame to a decoded view (decompress + column parse + validation). */
    @Benchmark
    @OperationsPerInvocation(ROWS)
    @Floor("rawZstdDecompress")
    public long decodeToView() {
        BlockView v = view.decodeFrame(zstd, frame, 0, frame.length, body.length);
        return v.seq(v.size() - 1);
    }

    /** The column parse and validation alone, on the already decompressed body. */
    @Benchmark
    @OperationsPerInvocation(ROWS)
    public long decodeBodyOnly() {
        BlockView v = view.decode(body, 0, body.length);
        return v.seq(v.size() - 1);
    }

    /** Floor for decodeToView: zstd-jni decompressing the same frame, nothing else. */
    @Benchmark
    @OperationsPerInvocation(ROWS)
    public int rawZstdDecompress() {
        return rawDecompressor.decompressByteArray(rawOut, 0, rawOut.length, frame, 0, frame.length);
    }
}
