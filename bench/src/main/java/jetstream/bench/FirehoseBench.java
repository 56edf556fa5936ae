package jetstream.bench;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import jetstream.atproto.cbor.DagCbor;
import jetstream.atproto.crypto.PublicKey;
import jetstream.atproto.firehose.ArchiveRow;
import jetstream.atproto.firehose.ByteSlice;
import jetstream.atproto.firehose.FirehoseMessage;
import jetstream.atproto.firehose.FrameDecoder;
import jetstream.atproto.firehose.RepoRecord;
import jetstream.atproto.firehose.RowConverter;
import jetstream.atproto.json.JsonBuffer;
import jetstream.atproto.sync.CommitVerifier;
import jetstream.atproto.sync.Repo;
import jetstream.atproto.sync.RepoOp;
import jetstream.wire.V1Json;
import jetstream.wire.WireEvent;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;

/**
 * The ingest hot path on real bytes: the 91 relay frames of the corpus to archive rows (with and
 * without Sync 1.1 verification), repo.car to backfill rows, and v1 JSON encoding of those rows.
 * Scores are per event (per record for the CAR), thanks to {@code @OperationsPerInvocation}. The floor is
 * a strict CBOR validating walk over the same frames.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
public class FirehoseBench {
    static final int FRAMES = 91;
    static final int CAR_RECORDS = 23;

    private final FrameDecoder decoder = new FrameDecoder();
    private final RowConverter converter = new RowConverter();
    private final V1Json v1 = new V1Json();
    private final WireEvent event = new WireEvent();
    private final JsonBuffer json = new JsonBuffer(4096);
    private Map<String, PublicKey> keys;
    private List<byte[]> frames;
    private List<ArchiveRow> rows;
    private byte[] car;

    @Setup
    public void setup() throws IOException {
        frames = BenchCorpus.relayFrames();
        keys = BenchCorpus.signingKeys();
        rows = new ArrayList<>();
        for (byte[] f : frames) {
            rows.addAll(converter.convert(decoder.decode(f)).rows());
        }
        car = BenchData.read("jetstream-corpus/repo.car");
        if (frames.size() != FRAMES || rows.size() != FRAMES || framesToRows(true) != FRAMES || carToRows() != CAR_RECORDS) {
            throw new IllegalStateException("corpus does not convert or verify as expected");
        }
    }

    /** Floor: a strict DAG-CBOR validating walk over both items of every frame, producing nothing. */
    @Benchmark
    @OperationsPerInvocation(FRAMES)
    public int floorCborValidate() {
        int n = 0;
        for (byte[] f : frames) {
            int h = DagCbor.itemLength(f, 0, f.length);
            DagCbor.validate(f, 0, h);
            DagCbor.validate(f, h, f.length - h);
            n += f.length;
        }
        return n;
    }

    /** Frame bytes → decoded message → archive rows, no signature or MST check. */
    @Benchmark
    @OperationsPerInvocation(FRAMES)
    public int framesToRowsUnverified() {
        return framesToRows(false);
    }

    /** As above plus Sync 1.1 verification of every #commit (signature + MST inversion), keys already resolved. */
    @Benchmark
    @OperationsPerInvocation(FRAMES)
    public int framesToRowsVerified() {
        return framesToRows(true);
    }

    /** repo.car → verified MST walk → one create row per record (the backfill path). */
    @Benchmark
    @OperationsPerInvocation(CAR_RECORDS)
    public int carToRows() {
        Repo repo = Repo.read(car);
        List<RepoRecord> records = new ArrayList<>(CAR_RECORDS);
        repo.walk((key, cid, block) -> records.add(new RepoRecord(new String(key, StandardCharsets.US_ASCII),
                block == null ? null : new ByteSlice(block.buffer(), block.offset(), block.length()))));
        return converter.backfill(repo.commit().did(), repo.commit().rev(), records).rows().size();
    }

    /** One v1 JSON event per archive row, into a reused buffer. */
    @Benchmark
    @OperationsPerInvocation(FRAMES)
    public int v1Encode() {
        int bytes = 0;
        for (int i = 0; i < rows.size(); i++) {
            json.reset();
            v1.write(event.set(i + 1, 1_750_000_000_000_000L + i, rows.get(i)), json);
            bytes += json.length();
        }
        return bytes;
    }

    private int framesToRows(boolean verify) {
        int n = 0;
        for (byte[] f : frames) {
            FirehoseMessage m = decoder.decode(f);
            if (verify && m instanceof FirehoseMessage.Commit c && !verified(c)) {
                throw new IllegalStateException("corpus commit failed verification: " + c.repo());
            }
            n += converter.convert(m).rows().size();
        }
        return n;
    }

    private boolean verified(FirehoseMessage.Commit c) {
        List<RepoOp> ops = new ArrayList<>(c.ops().size());
        for (FirehoseMessage.RepoOp op : c.ops()) {
            ops.add(new RepoOp(op.action(), op.path(), op.cid(), op.prev()));
        }
        ByteSlice b = c.blocks();
        return CommitVerifier.verify(c.repo(), c.rev(), c.commit(), b.buffer(), b.offset(), b.length(), ops, c.prevData(),
                keys.get(c.repo())).ok();
    }
}
