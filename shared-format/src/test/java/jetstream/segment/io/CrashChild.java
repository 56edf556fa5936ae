package jetstream.segment.io;

import java.nio.file.Path;
import java.time.Duration;
import java.util.SplittableRandom;

/**
 * The process {@link CrashRecoveryTest} kills with SIGKILL: it resumes the segment directory given
 * as its first argument and appends {@link Rows} forever in blocks of random size, with small
 * segments so seals and rotations happen constantly. It prints {@code durable <min> <max> ok}
 * after each block fsync and {@code sealed <name> ok} after each seal; a line without the trailing
 * {@code ok} was cut by the kill and means nothing.
 */
public final class CrashChild {
    private CrashChild() {}

    public static void main(String[] args) throws Exception {
        Path dir = Path.of(args[0]);
        long seed = Long.parseLong(args[1]);
        long maxSegmentBytes = Long.parseLong(args[2]);
        SplittableRandom random = new SplittableRandom(seed);
        SegmentWriter.Listener listener = new SegmentWriter.Listener() {
            @Override
            public void blockDurable(Path file, long minSeq, long maxSeq, int events) {
                System.out.println("durable " + minSeq + " " + maxSeq + " ok");
                System.out.flush();
            }

            @Override
            public void sealed(Path file, SegmentSealer.Result result) {
                System.out.println("sealed " + file.getFileName() + " ok");
                System.out.flush();
            }
        };
        // Small blocks put kills between fsyncs and inside seals; large ones inside a long positional write.
        int perBlock = random.nextBoolean() ? 1 + random.nextInt(64) : 256 + random.nextInt(2048);
        SegmentWriter.Config config = new SegmentWriter.Config(perBlock, maxSegmentBytes, Duration.ZERO);
        SegmentWriter w = SegmentWriter.open(SegmentIO.PRODUCTION, dir, config, System::nanoTime, listener);
        long seq = w.lastSeq() + 1;
        System.out.println("ready " + seq + " ok");
        System.out.flush();
        while (true) {
            Rows.append(w, seq++);
            int dice = random.nextInt(200);
            if (dice == 0) {
                w.forceRotate();
            } else if (dice < 8) {
                w.flush();
            }
        }
    }
}
