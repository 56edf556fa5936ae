package jetstream.bench;

import java.io.ByteArrayOutputStream;
import java.util.List;
import jetstream.atproto.firehose.ArchiveRow;
import jetstream.segment.BlockBuilder;
import jetstream.segment.ZstdFrames;
import jetstream.testing.ResultLine;

/**
 * On-disk bytes per event for the real relay-frame corpus: every row the ingester would archive from
 * {@code jetstream-corpus/relay_frames.bin}, written as segment blocks (zstd level 3, 8-byte prefix). Floor:
 * the same rows' bytes (kind, DID, collection, rkey, rev, record) concatenated row by row and compressed
 * as one zstd frame at the same level, i.e. what generic compression makes of the data without the
 * columnar block ({@code RESULT corpus_density_all_rows_bytes_per_event}, {@code _create_rows_}).
 * Run: {@code bench/run --main jetstream.bench.CorpusDensity [zstd-level]} (see BENCHMARKS.md).
 */
public final class CorpusDensity {
    private CorpusDensity() {}

    public static void main(String[] args) throws Exception {
        List<ArchiveRow> rows = BenchCorpus.relayRows();
        List<ArchiveRow> creates = rows.stream().filter(r -> r.kind() == ArchiveRow.KIND_CREATE).toList();
        int level = args.length > 0 ? Integer.parseInt(args[0]) : ZstdFrames.DEFAULT_LEVEL;
        System.out.println("zstd level " + level);
        try (ZstdFrames zstd = new ZstdFrames(level)) {
            report("all rows", "corpus_density_all_rows_bytes_per_event", rows, zstd);
            report("create rows only", "corpus_density_create_rows_bytes_per_event", creates, zstd);
        }
    }

    private static void report(String label, String metric, List<ArchiveRow> rows, ZstdFrames zstd) {
        BlockBuilder block = new BlockBuilder(rows.size());
        ByteArrayOutputStream rowWise = new ByteArrayOutputStream();
        long seq = 1;
        long payloadBytes = 0;
        for (ArchiveRow r : rows) {
            byte[][] c = BenchCorpus.columns(r);
            block.add(seq, 1_750_000_000_000_000L + seq, 0, r.kind(), c[1], c[2], c[3], c[4], c[5]);
            for (byte[] column : c) {
                rowWise.writeBytes(column);
            }
            payloadBytes += r.payload().length();
            seq++;
        }
        byte[] body = block.toBody();
        int frameBytes = zstd.compress(body, 0, body.length).length + 8;
        byte[] raw = rowWise.toByteArray();
        double floor = (double) zstd.compress(raw, 0, raw.length).length / rows.size();
        System.out.printf("%-18s events=%d payload=%.1f B/event body=%.1f B/event on-disk=%.1f B/event (one block)%n",
                label, rows.size(), (double) payloadBytes / rows.size(), (double) body.length / rows.size(),
                (double) frameBytes / rows.size());
        ResultLine.print(metric, (double) frameBytes / rows.size(), floor);
    }
}
