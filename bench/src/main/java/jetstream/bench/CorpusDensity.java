package jetstream.bench;

import java.io.ByteArrayInputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import jetstream.atproto.DecodeException;
import jetstream.atproto.firehose.ArchiveRow;
import jetstream.atproto.firehose.FrameDecoder;
import jetstream.atproto.firehose.RelayFrameFile;
import jetstream.atproto.firehose.RowConverter;
import jetstream.segment.BlockBuilder;
import jetstream.segment.ZstdFrames;

/**
 * On-disk bytes per event for the real relay-frame corpus: every row the ingester would archive from
 * {@code jetstream-corpus/relay_frames.bin}, written as segment blocks (zstd level 3, 8-byte prefix).
 * Run: {@code bench/run --main jetstream.bench.CorpusDensity [zstd-level]} (see BENCHMARKS.md).
 */
public final class CorpusDensity {
    private CorpusDensity() {}

    public static void main(String[] args) throws Exception {
        List<ArchiveRow> rows = new ArrayList<>();
        FrameDecoder decoder = new FrameDecoder();
        RowConverter converter = new RowConverter();
        RelayFrameFile frames = new RelayFrameFile(new ByteArrayInputStream(BenchData.read("jetstream-corpus/relay_frames.bin")));
        byte[] frame;
        while ((frame = frames.next()) != null) {
            try {
                rows.addAll(converter.convert(decoder.decode(frame)).rows());
            } catch (DecodeException e) {
                // The corpus is real relay output: an undecodable frame is dropped exactly as ingest would.
            }
        }
        List<ArchiveRow> creates = rows.stream().filter(r -> r.kind() == ArchiveRow.KIND_CREATE).toList();
        int level = args.length > 0 ? Integer.parseInt(args[0]) : ZstdFrames.DEFAULT_LEVEL;
        System.out.println("zstd level " + level);
        try (ZstdFrames zstd = new ZstdFrames(level)) {
            report("all rows", rows, zstd);
            report("create rows only", creates, zstd);
        }
    }

    private static void report(String label, List<ArchiveRow> rows, ZstdFrames zstd) {
        BlockBuilder block = new BlockBuilder(rows.size());
        long seq = 1;
        long payloadBytes = 0;
        for (ArchiveRow r : rows) {
            block.add(seq, 1_750_000_000_000_000L + seq, 0, r.kind(), utf8(r.did()), utf8(r.collection()),
                    utf8(r.rkey()), utf8(r.rev()), r.payload().toByteArray());
            payloadBytes += r.payload().length();
            seq++;
        }
        byte[] body = block.toBody();
        int frameBytes = zstd.compress(body, 0, body.length).length + 8;
        System.out.printf("%-18s events=%d payload=%.1f B/event body=%.1f B/event on-disk=%.1f B/event (one block)%n",
                label, rows.size(), (double) payloadBytes / rows.size(), (double) body.length / rows.size(),
                (double) frameBytes / rows.size());
    }

    private static byte[] utf8(String s) {
        return s == null ? null : s.getBytes(StandardCharsets.UTF_8);
    }
}
