package jetstream.client;

import com.github.luben.zstd.ZstdDecompressCtx;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import jetstream.bench.ClientBackfillBench;
import jetstream.planner.PlanFilter;
import jetstream.segment.BlockIndexEntry;
import jetstream.segment.SegmentReader;
import jetstream.segment.io.SegmentName;
import jetstream.testing.ResultLine;

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
        ResultLine.print("client_decode_raw_events_per_cpu_s", perSecond[1], perSecond[0]);
        ResultLine.print("client_decode_json_events_per_cpu_s", perSecond[2], perSecond[0]);
    }

    private static long archive(List<byte[]> frames, List<BlockIndexEntry> entries) throws Exception {
        Path dir = Files.createTempDirectory("client-decode-bench");
        ClientBackfillBench.writeArchive(dir, 1L << 30);
        for (SegmentName.Entry e : SegmentName.scan(dir)) {
            SegmentReader r = SegmentReader.open(e.path());
            for (int b = 0; b < r.blockCount(); b++) {
                frames.add(r.frameBytes(b));
                entries.add(r.entry(b));
            }
        }
        return ClientBackfillBench.EVENTS;
    }
}
