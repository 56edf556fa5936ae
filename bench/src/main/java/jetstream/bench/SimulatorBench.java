package jetstream.bench;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.concurrent.TimeUnit;
import jetstream.atproto.crypto.KeyCurve;
import jetstream.atproto.crypto.PrivateKey;
import jetstream.simulator.SimConfig;
import jetstream.simulator.Simulator;
import org.openjdk.jmh.annotations.AuxCounters;
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
 * The floor is one RFC 6979 signature by {@link PrivateKey} (what each event would cost with the
 * general-purpose signer alone). 1 000 accounts, the busy repos already in memory after a
 * 10 000-event warm-up, the production event mix.
 *
 * <p>On a shared, overloaded machine the wall-clock score mostly measures how much CPU the
 * scheduler granted; {@link Cpu} also sums the benchmark thread's CPU time, so
 * {@code ops / cpuMicros} gives operations per CPU-second on one core.
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
        sim.advance(10_000);
        byte[] scalar = new byte[32];
        scalar[31] = 7;
        key = PrivateKey.fromBytes(KeyCurve.SECP256K1, scalar);
    }

    @TearDown
    public void tearDown() {
        sim.close();
    }

    /** Per-iteration sums: operations, and CPU microseconds the benchmark thread spent in them. */
    @State(Scope.Thread)
    @AuxCounters(AuxCounters.Type.EVENTS)
    public static class Cpu {
        private static final ThreadMXBean MX = ManagementFactory.getThreadMXBean();
        public long ops;
        public long cpuMicros;

        long start() {
            return MX.getCurrentThreadCpuTime();
        }

        void stop(long start) {
            ops++;
            cpuMicros += (MX.getCurrentThreadCpuTime() - start) / 1000;
        }
    }

    @Benchmark
    public long signedEvent(Cpu cpu) {
        long t = cpu.start();
        sim.advance(1);
        cpu.stop(t);
        return sim.headSeq();
    }

    @Benchmark
    public byte[] floorSignature(Cpu cpu) {
        long t = cpu.start();
        message[counter++ & 63]++;
        byte[] sig = key.sign(message);
        cpu.stop(t);
        return sig;
    }
}
