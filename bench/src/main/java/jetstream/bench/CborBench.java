package jetstream.bench;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import jetstream.atproto.car.CarBlock;
import jetstream.atproto.car.CarReader;
import jetstream.atproto.cbor.CborReader;
import jetstream.atproto.cbor.DagCbor;
import jetstream.atproto.cid.Cid;
import jetstream.atproto.json.CborJson;
import jetstream.atproto.json.JsonBuffer;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.infra.Blackhole;

/**
 * DAG-CBOR decode and CBOR -> JSON cost per record, over the real record blocks of repo.car and of
 * the relay-frame CARs (every commit op's record). Scores are ns per record; floors in the same
 * run: a byte copy of each record, and the validating skip walk (the CBOR work without JSON).
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class CborBench {
    /** Records in the corpus below (23 from repo.car, 87 from relay-frame CARs); JMH divides each invocation by it. */
    static final int RECORDS = 110;

    private byte[][] records;
    private byte[] copyTarget;
    private final CborReader reader = new CborReader();
    private final CborJson transcoder = new CborJson();
    private final JsonBuffer out = new JsonBuffer(64 * 1024);

    @Setup
    public void load() {
        List<byte[]> list = new ArrayList<>();
        byte[] repo = BenchData.read("jetstream-corpus/repo.car");
        Map<Cid, CarBlock> repoBlocks = CarReader.readAll(repo, 0, repo.length);
        for (String line : new String(BenchData.read("jetstream-corpus/car_expected_records.tsv"), java.nio.charset.StandardCharsets.UTF_8).split("\n")) {
            if (!line.isBlank()) {
                list.add(repoBlocks.get(Cid.parse(line.split("\t")[1])).copyData());
            }
        }
        byte[] all = BenchData.read("jetstream-corpus/relay_frames.bin");
        for (int p = 0; p < all.length; ) {
            int len = (all[p] & 0xff) | (all[p + 1] & 0xff) << 8 | (all[p + 2] & 0xff) << 16 | (all[p + 3] & 0xff) << 24;
            p += 4;
            int h = DagCbor.itemLength(all, p, len);
            Map<String, Object> body = DagCbor.decodeMap(all, p + h, len - h);
            p += len;
            if (body.get("ops") instanceof List && body.get("blocks") instanceof byte[]) {
                byte[] car = (byte[]) body.get("blocks");
                Map<Cid, CarBlock> blocks = CarReader.readAll(car, 0, car.length);
                for (Object op : (List<?>) body.get("ops")) {
                    CarBlock b = blocks.get(((Map<?, ?>) op).get("cid"));
                    if (b != null) {
                        list.add(b.copyData());
                    }
                }
            }
        }
        if (list.size() != RECORDS) {
            throw new IllegalStateException("corpus has " + list.size() + " records, RECORDS says " + RECORDS);
        }
        records = list.toArray(new byte[0][]);
        long bytes = 0;
        int max = 0;
        for (byte[] r : records) {
            bytes += r.length;
            max = Math.max(max, r.length);
        }
        copyTarget = new byte[max];
        System.out.printf("%n%d records, %d bytes, %.1f bytes/record%n", records.length, bytes, (double) bytes / records.length);
    }

    @Benchmark
    @OperationsPerInvocation(RECORDS)
    public void floorCopy(Blackhole bh) {
        for (byte[] r : records) {
            System.arraycopy(r, 0, copyTarget, 0, r.length);
            bh.consume(copyTarget);
        }
    }

    @Benchmark
    @OperationsPerInvocation(RECORDS)
    public void floorSkipWalk(Blackhole bh) {
        for (byte[] r : records) {
            reader.reset(r, 0, r.length);
            reader.skip();
            bh.consume(reader.position());
        }
    }

    @Benchmark
    @OperationsPerInvocation(RECORDS)
    @Floor("floorSkipWalk")
    public void decodeTree(Blackhole bh) {
        for (byte[] r : records) {
            bh.consume(DagCbor.decode(r));
        }
    }

    @Benchmark
    @OperationsPerInvocation(RECORDS)
    @Floor("floorSkipWalk")
    public void cborToJson(Blackhole bh) {
        for (byte[] r : records) {
            out.reset();
            transcoder.writeRecord(r, 0, r.length, out);
            bh.consume(out.length());
        }
    }
}
