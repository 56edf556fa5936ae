package jetstream.bench;

import java.util.Map;
import java.util.concurrent.TimeUnit;
import jetstream.atproto.car.CarBlock;
import jetstream.atproto.car.CarReader;
import jetstream.atproto.cid.Cid;
import jetstream.atproto.crypto.Sha256;
import jetstream.atproto.mst.BlockStore;
import jetstream.atproto.mst.MstWalker;
import jetstream.atproto.sync.Repo;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.infra.Blackhole;

/**
 * Walking the production repo.car (23 records): from CAR bytes (block hashing, commit decode, verified
 * walk), and the walk alone over already-read blocks. Floor: SHA-256 over the same CAR bytes.
 * Records/s = ops/s x 23.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
public class MstWalkBench {
    private byte[] car;
    private Map<Cid, CarBlock> blocks;
    private Cid data;

    @Setup
    public void setup() {
        car = BenchData.read("jetstream-corpus/repo.car");
        Repo repo = Repo.read(car);
        data = repo.commit().data();
        blocks = CarReader.readAll(car, 0, car.length);
    }

    @Benchmark
    public long walkFromCarBytes(Blackhole bh) {
        return Repo.read(car).walk((key, cid, block) -> bh.consume(cid));
    }

    @Benchmark
    public long walkReadBlocks(Blackhole bh) {
        return MstWalker.walk(data, BlockStore.ofCar(blocks), (key, cid) -> bh.consume(cid));
    }

    @Benchmark
    public byte[] floorSha256OfCar() {
        return Sha256.digest(car);
    }
}
