package jetstream.client;

import com.github.luben.zstd.ZstdDecompressCtx;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import jetstream.bench.ClientBackfillBench;
import jetstream.planner.PlanFilter;
import jetstream.segment.BlockIndexEntry;
import jetstream.segment.SegmentReader;
import jetstream.segment.io.SegmentName;
import jetstream.segment.io.SegmentWriter;

/**
 * The client's decode path alone, per core: {@link BlockDecoder} over the block frames of a sealed
 * archive (the rows {@link ClientBackfillBench} serves: Go corpus records, random DIDs, ~5 %
 * deletes), scored by the decoding thread's CPU time, against raw zstd decompression of the same
 * frames on the same thread in the same run (the floor). No HTTP, no queues: what a decode worker
 * spends per event. Prints {@code RESULT client_decode_raw_events_per_cpu_s} (ratio = to the floor,
 * targets ≥ 1,500,000 and ≥ 0.25) and {@code RESULT client_decode_json_events_per_cpu_s} (record
 * JSON + CID rendered in the worker, target ≥ 500,000).
 *
 * <p>{@code bench/run --main jetstream.client.ClientDecodeBench [rounds=20]}
 */
public final class ClientDecodeBench {
    private ClientDecodeBench() {}

    public static void main(String[] args) throws Exception {
        int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 20;
        List<byte[]> frames = new ArrayList<>();
        List<BlockIndexEntry> entries = new ArrayList<>();
        long events = archive(frames, entries);
        ThreadMXBean cpu = ManagementFactory.getThreadMXBean();
        ZstdDecompressCtx raw = new ZstdDecompressCtx();
        byte[] out = new byte[64 << 20];
        double[] perSecond = new double[3];
        String[] modes = {"zstd-floor", "raw-records", "record-json"};
        for (int m = 0; m < 3; m++) {
            BlockDecoder d = new BlockDecoder(m != 2, false);
            List<Event> sink = new ArrayList<>(4096);
            long n = 0;
            long t0 = 0;
            for (int round = -Math.max(3, rounds / 4); round < rounds; round++) {
                if (round == 0) {
                    t0 = cpu.getCurrentThreadCpuTime();
                    n = 0;
                }
                for (int b = 0; b < frames.size(); b++) {
                    byte[] f = frames.get(b);
                    if (m == 0) {
                        raw.decompressByteArray(out, 0, out.length, f, 0, f.length);
                        n += entries.get(b).eventCount();
                    } else {
                        sink.clear();
                        d.decode(f, entries.get(b), PlanFilter.all(), sink);
                        n += sink.size();
                    }
                }
            }
            long ns = cpu.getCurrentThreadCpuTime() - t0;
            perSecond[m] = n * 1e9 / ns;
            System.out.printf("%-12s %,12.0f events per CPU-second (%.0f ns/event, %d events)%n", modes[m],
                    perSecond[m], ns / (double) n, n);
        }
        System.out.printf("archive: %d events, %d blocks%n", events, frames.size());
        System.out.printf("RESULT client_decode_raw_events_per_cpu_s value=%.0f floor=%.0f ratio=%.3f%n",
                perSecond[1], perSecond[0], perSecond[1] / perSecond[0]);
        System.out.printf("RESULT client_decode_json_events_per_cpu_s value=%.0f floor=%.0f ratio=%.3f%n",
                perSecond[2], perSecond[0], perSecond[2] / perSecond[0]);
    }

    private static long archive(List<byte[]> frames, List<BlockIndexEntry> entries) throws Exception {
        Path dir = Files.createTempDirectory("client-decode-bench");
        List<byte[][]> records = ClientBackfillBench.corpusRecords();
        Random rnd = new Random(7);
        String alphabet = "abcdefghijklmnopqrstuvwxyz234567";
        int total = 4096 * 32;
        try (SegmentWriter w = SegmentWriter.open(dir, new SegmentWriter.Config(4096, 1L << 30, Duration.ZERO))) {
            for (int s = 1; s <= total; s++) {
                byte[][] rec = records.get(rnd.nextInt(records.size()));
                boolean delete = rnd.nextInt(20) == 0;
                StringBuilder did = new StringBuilder("did:plc:");
                StringBuilder tid = new StringBuilder("3l");
                for (int c = 0; c < 24; c++) {
                    did.append(alphabet.charAt(rnd.nextInt(1 << 10) % 32));
                }
                for (int c = 0; c < 11; c++) {
                    tid.append(alphabet.charAt(rnd.nextInt(32)));
                }
                w.append(s, 1_750_000_000_000_000L + s, 0, delete ? 3 : 1, did.toString().getBytes(StandardCharsets.UTF_8),
                        rec[0], tid.toString().getBytes(StandardCharsets.UTF_8),
                        tid.toString().replace("3l", "3m").getBytes(StandardCharsets.UTF_8), delete ? null : rec[1]);
            }
            w.seal();
        }
        for (SegmentName.Entry e : SegmentName.scan(dir)) {
            SegmentReader r = SegmentReader.open(e.path());
            for (int b = 0; b < r.blockCount(); b++) {
                frames.add(r.frameBytes(b));
                entries.add(r.entry(b));
            }
        }
        return total;
    }
}
