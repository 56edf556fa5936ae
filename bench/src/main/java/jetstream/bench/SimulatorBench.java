package jetstream.bench;

import java.io.IOException;
import java.util.concurrent.TimeUnit;
import jetstream.atproto.crypto.KeyCurve;
import jetstream.atproto.crypto.PrivateKey;
import jetstream.simulator.SimConfig;
import jetstream.simulator.Simulator;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

/**
 * Signed firehose events generated per second on one thread: each {@code #commit} mutates a real
 * MST, signs the commit, computes the Sync 1.1 proof nodes, writes the CAR diff and the frame.
 * The floor is one signature (the part no generator can skip). 1 000 accounts, every repo already
 * in memory (the setup touches them all), the production event mix.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
public class SimulatorBench {
    private Simulator sim;
    private PrivateKey key;
    private final byte[] message = new byte[120];
    private int counter;

    @Setup
    public void setup() throws IOException {
        SimConfig cfg = SimConfig.small();
        cfg.accounts = 1_000;
        cfg.hosts = 8;
        cfg.recordsMean = 40;
        cfg.bigRepos = 0;
        cfg.replayBuffer = 10_000;
        sim = Simulator.start(cfg);
        sim.advance(20_000);
        byte[] scalar = new byte[32];
        scalar[31] = 7;
        key = PrivateKey.fromBytes(KeyCurve.SECP256K1, scalar);
    }

    @TearDown
    public void tearDown() {
        sim.close();
    }

    @Benchmark
    public long signedEvent() {
        sim.advance(1);
        return sim.headSeq();
    }

    @Benchmark
    public byte[] floorSignature() {
        message[counter++ & 63]++;
        return key.sign(message);
    }
}
