package jetstream.planner;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.github.luben.zstd.Zstd;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import jetstream.segment.CensusFiles;
import jetstream.segment.DidHashSection;
import jetstream.segment.GloomFilter;
import jetstream.segment.SegmentReader;
import jetstream.segment.ZstdFrames;
import jetstream.segment.io.SegmentName;
import jetstream.segment.io.SegmentWriter;
import jetstream.testing.Vectors;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The DID-hash section our seal appends after the collection-index frame: it lists exactly the
 * segment's DIDs, a plain zstd decoder steps over it (the collection index decodes as before), a
 * Go-written file has none, and a damaged one gets no group filter (its group falls back to the
 * segment blooms).
 */
@Tag("unit")
class DidHashSectionTest {
    @TempDir
    Path dir;

    private Path sealedSegment(Set<String> dids) throws IOException {
        try (SegmentWriter w = SegmentWriter.open(dir, new SegmentWriter.Config(16, 1 << 30, Duration.ZERO))) {
            for (long seq = 1; seq <= 200; seq++) {
                String did = "did:plc:" + String.format("%024d", seq % 37);
                dids.add(did);
                w.append(seq, 1_700_000_000_000_000L + seq, 0, 1, did.getBytes(StandardCharsets.UTF_8),
                        "app.bsky.feed.like".getBytes(StandardCharsets.UTF_8), "3kaaaaaaaaaa2".getBytes(),
                        "3kaaaaaaaaaa2".getBytes(), new byte[] {(byte) 0xa0});
            }
            w.seal();
        }
        List<SegmentName.Entry> files = SegmentName.scan(dir);
        assertEquals(1, files.size());
        return files.get(0).path();
    }

    private static SegmentSummary summary(byte[] file, long index) {
        try (ZstdFrames zstd = new ZstdFrames()) {
            return SegmentSummary.open(ByteBuffer.wrap(file), SegmentName.format(index), index, 0, zstd);
        }
    }

    @Test
    void sealWritesEveryDidAndReadersStillParseTheFile() throws IOException {
        Set<String> dids = new HashSet<>();
        Path p = sealedSegment(dids);
        SegmentReader r = SegmentReader.open(p, true);
        byte[] file = Files.readAllBytes(p);
        SegmentSummary s = summary(file, 0);
        ByteBuffer section = s.didHashes();
        assertNotNull(section, "our seal writes the section");
        assertTrue(DidHashSection.isValid(section));
        assertEquals(dids.size(), DidHashSection.count(section));
        assertEquals(r.header().uniqueDidCount(), DidHashSection.count(section));
        ByteBuffer viaReader = SegmentSummary.of(r, SegmentName.format(0), 0, 0).didHashes();
        assertEquals(section, viaReader, "the reader's summary finds the same section");
        Set<Integer> listed = new HashSet<>();
        for (int i = 0; i < DidHashSection.count(section); i++) {
            listed.add(DidHashSection.hashAt(section, i));
        }
        for (String d : dids) {
            assertTrue(listed.contains(DidHashSection.hash(GloomFilter.Probe.of(d.getBytes(StandardCharsets.UTF_8)))), d);
        }
        // libzstd decodes [frame, section, census] to the frame's content alone: both are skippable frames.
        assertNotNull(CensusFiles.census(file), "the DID census follows the section");
        int frameAt = (int) r.header().collectionIndexOffset() + 16;
        byte[] withSection = Arrays.copyOfRange(file, frameAt, file.length);
        int frameLen = (int) Zstd.findFrameCompressedSize(withSection, 0, withSection.length);
        assertEquals(withSection.length, frameLen + section.limit() + CensusFiles.census(file).length);
        long content = Zstd.getFrameContentSize(withSection, 0, frameLen);
        byte[] alone = Zstd.decompress(Arrays.copyOf(withSection, frameLen), (int) content);
        byte[] both = Zstd.decompress(withSection, (int) content);
        assertArrayEquals(alone, both);
    }

    @Test
    void goWrittenSegmentsHaveNoSection() throws IOException {
        byte[] golden = Vectors.bytes("jetstream-corpus/golden_corpus_segment.jss");
        assertNull(summary(golden, 0).didHashes());
        assertNull(CensusFiles.census(golden));
    }

    @Test
    void aDamagedSectionGetsNoGroupFilter() throws IOException {
        Set<String> dids = new HashSet<>();
        byte[] file = Files.readAllBytes(sealedSegment(dids));
        SegmentSummary intact = summary(file, 0);
        assertNotNull(DidGroupFilter.build(new SegmentSummary[] {intact}, Long.MAX_VALUE, DidFilterSpace.HEAP));
        // a hash byte near the section's end (before its CRC; the DID census follows)
        int sectionEnd = file.length - CensusFiles.census(file).length;
        file[sectionEnd - 6] ^= 0x40;
        SegmentSummary damaged = summary(file, 0);
        assertFalse(DidHashSection.isValid(damaged.didHashes()));
        assertNull(DidGroupFilter.build(new SegmentSummary[] {intact, damaged}, Long.MAX_VALUE, DidFilterSpace.HEAP));
    }
}
