package jetstream.bench;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.github.luben.zstd.Zstd;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import jetstream.atproto.DecodeException;
import jetstream.atproto.crypto.DidDocument;
import jetstream.atproto.crypto.PublicKey;
import jetstream.atproto.firehose.ArchiveRow;
import jetstream.atproto.firehose.FrameDecoder;
import jetstream.atproto.firehose.RelayFrameFile;
import jetstream.atproto.firehose.RowConverter;
import jetstream.segment.SegmentReader;
import jetstream.segment.ZstdFrames;

/** The real corpora of {@code ../shared/vectors/jetstream-corpus} as the benchmarks feed them to the code under test. */
final class BenchCorpus {
    private BenchCorpus() {}

    /** The relay corpus' frames ({@code relay_frames.bin}, {@code [u32 LE length][frame]} each), in order. */
    static List<byte[]> relayFrames() {
        RelayFrameFile file = new RelayFrameFile(new ByteArrayInputStream(BenchData.read("jetstream-corpus/relay_frames.bin")));
        List<byte[]> frames = new ArrayList<>();
        try {
            for (byte[] f = file.next(); f != null; f = file.next()) {
                frames.add(f);
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return frames;
    }

    /**
     * The archive rows ingest makes of the relay corpus, in order; a frame that does not decode is dropped
     * exactly as ingest drops it.
     */
    static List<ArchiveRow> relayRows() {
        FrameDecoder decoder = new FrameDecoder();
        RowConverter converter = new RowConverter();
        List<ArchiveRow> rows = new ArrayList<>();
        for (byte[] frame : relayFrames()) {
            try {
                rows.addAll(converter.convert(decoder.decode(frame)).rows());
            } catch (DecodeException e) {
                // dropped, as ingest would
            }
        }
        return rows;
    }

    /** The signing key of every DID document of the corpus ({@code did_docs.json.zst}), by DID. */
    static Map<String, PublicKey> signingKeys() throws IOException {
        byte[] zst = BenchData.read("jetstream-corpus/did_docs.json.zst");
        Map<String, PublicKey> keys = new HashMap<>();
        try (JsonParser p = new JsonFactory().createParser(Zstd.decompress(zst, (int) Zstd.getFrameContentSize(zst)))) {
            p.nextToken();
            while (p.nextToken() == JsonToken.FIELD_NAME) {
                String did = p.currentName();
                p.nextToken();
                keys.put(did, DidDocument.read(p).signingKey());
            }
        }
        return keys;
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
