package jetstream.bench;

import com.sun.management.OperatingSystemMXBean;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadInfo;
import java.lang.management.ThreadMXBean;
import jetstream.testing.ResultLine;

/**
 * CPU per event of a client backfill, the "per core" figure of issue [G]: the same archive and
 * in-process server as {@link ClientBackfillBench}, but scored by CPU time instead of wall time, so
 * the number holds on a machine shared with other work and does not count the server. Client CPU =
 * process CPU − the server's threads (its dispatcher and handler pool; they live for the whole run).
 * The floor is the CPU per event of raw zstd decompression of the same block frames, same run
 * ({@code RESULT client_backfill_raw_events_per_cpu_s}, {@code client_backfill_json_events_per_cpu_s}).
 *
 * <p>{@code bench/run --main jetstream.bench.ClientBackfillCpu [rounds]}
 */
public final class ClientBackfillCpu {
    private ClientBackfillCpu() {}

    public static void main(String[] args) throws Exception {
        int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 20;
        ClientBackfillBench b = new ClientBackfillBench();
        b.concurrency = 1;
        b.setup();
        try {
            OperatingSystemMXBean os = (OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
            ThreadMXBean threads = ManagementFactory.getThreadMXBean();
            String[] modes = {"raw-records", "record-json", "zstd-floor"};
            double[] perCore = new double[modes.length];
            for (int m = 0; m < modes.length; m++) {
                run(b, modes[m], Math.max(3, rounds / 4), os, threads);
                double[] r = run(b, modes[m], rounds, os, threads);
                perCore[m] = 1e9 / r[1];
                System.out.printf("%-12s events/s wall %,10.0f   client CPU %7.0f ns/event   events/s per core %,10.0f%n",
                        modes[m], r[0], r[1], perCore[m]);
            }
            ResultLine.print("client_backfill_raw_events_per_cpu_s", perCore[0], perCore[2]);
            ResultLine.print("client_backfill_json_events_per_cpu_s", perCore[1], perCore[2]);
        } finally {
            b.tearDown();
        }
    }

    /** {wall events/s, client CPU ns per event}. */
    private static double[] run(ClientBackfillBench b, String mode, int rounds, OperatingSystemMXBean os,
                                ThreadMXBean threads) {
        long cpu0 = os.getProcessCpuTime() - serverCpu(threads);
        long t0 = System.nanoTime();
        long events = 0;
        for (int i = 0; i < rounds; i++) {
            events += switch (mode) {
                case "raw-records" -> b.backfillRawRecords();
                case "record-json" -> b.backfillRecordJson();
                default -> {
                    b.rawZstdDecompress();
                    yield ClientBackfillBench.EVENTS;
                }
            };
        }
        long wall = System.nanoTime() - t0;
        long cpu = os.getProcessCpuTime() - serverCpu(threads) - cpu0;
        return new double[] {events * 1e9 / wall, (double) cpu / events};
    }

    private static long serverCpu(ThreadMXBean threads) {
        long total = 0;
        for (ThreadInfo t : threads.getThreadInfo(threads.getAllThreadIds())) {
            if (t != null && (t.getThreadName().startsWith(ClientBackfillBench.SERVER_THREAD_PREFIX)
                    || t.getThreadName().equals("HTTP-Dispatcher"))) {
                long c = threads.getThreadCpuTime(t.getThreadId());
                total += Math.max(0, c);
            }
        }
        return total;
    }
}
