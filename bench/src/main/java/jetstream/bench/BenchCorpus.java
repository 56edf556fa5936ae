package jetstream.bench;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import jetstream.atproto.DecodeException;
import jetstream.atproto.firehose.ArchiveRow;
import jetstream.atproto.firehose.FrameDecoder;
import jetstream.atproto.firehose.RelayFrameFile;
import jetstream.atproto.firehose.RowConverter;
import jetstream.segment.SegmentReader;
import jetstream.segment.ZstdFrames;

/** The real corpora of {@code ../shared/vectors/jetstream-corpus} as the benchmarks feed them to the code under test. */
final class BenchCorpus {
    private BenchCorpus() {}

    /**
     * The archive rows ingest makes of the relay corpus ({@code relay_frames.bin}), in order; a frame that does
     * not decode is dropped exactly as ingest drops it.
     */
    static List<ArchiveRow> relayRows() {
        FrameDecoder decoder = new FrameDecoder();
        RowConverter converter = new RowConverter();
        RelayFrameFile frames = new RelayFrameFile(new ByteArrayInputStream(BenchData.read("jetstream-corpus/relay_frames.bin")));
        List<ArchiveRow> rows = new ArrayList<>();
        try {
            byte[] frame;
            while ((frame = frames.next()) != null) {
                try {
                    rows.addAll(converter.convert(decoder.decode(frame)).rows());
                } catch (DecodeException e) {
                    // dropped, as ingest would
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return rows;
    }

    /** A row as the columns the feed codec and the segment writer take: kind, did, collection, rkey, rev, payload. */
    static byte[][] columns(ArchiveRow r) {
        return new byte[][] {new byte[] {(byte) r.kind()}, utf8(r.did()), utf8(r.collection()), utf8(r.rkey()),
            utf8(r.rev()), r.payload().toByteArray()};
    }

    /** {collection, record CBOR} of every row of the Go corpus segment ({@code golden_corpus_segment.jss}). */
    static List<byte[][]> segmentRecords() throws IOException {
        List<byte[][]> records = new ArrayList<>();
        try (ZstdFrames zstd = new ZstdFrames()) {
            SegmentReader corpus = SegmentReader.open(BenchData.vectors().resolve("jetstream-corpus/golden_corpus_segment.jss"));
            corpus.forEachRow(zstd, (b, v, i) -> records.add(new byte[][] {utf8(v.collection(i)), v.payload(i)}));
        }
        return records;
    }

    private static byte[] utf8(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }
}
