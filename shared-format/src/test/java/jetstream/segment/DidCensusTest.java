package jetstream.segment;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.SplittableRandom;
import java.util.zip.CRC32C;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The DID census: the seal's entries in probe order with row counts (checked against an encoder
 * written from docs/segment-format.md), the rewrite's subtraction, the probe-collision fallback, and
 * damaged bytes refused.
 */
@Tag("unit")
class DidCensusTest {
    private record Entry(long hi, int intra, int rows) {}

    private static final Comparator<Entry> PROBE_ORDER =
            Comparator.comparingLong(Entry::hi).thenComparingInt(Entry::intra);

    /** The layout written independently of {@link DidCensus}: sorted entries, LEB128 counts, CRC32C. */
    private static byte[] encode(List<Entry> entries) {
        List<Entry> sorted = new ArrayList<>(entries);
        sorted.sort(PROBE_ORDER);
        ByteArrayOutputStream body = new ByteArrayOutputStream();
        ByteBuffer fixed = ByteBuffer.allocate(12).order(ByteOrder.LITTLE_ENDIAN);
        for (Entry e : sorted) {
            fixed.clear();
            body.writeBytes(fixed.putLong(e.hi()).putInt(e.intra()).array());
            long v = Integer.toUnsignedLong(e.rows());
            do {
                body.write((int) (v & 0x7F) | (v > 0x7F ? 0x80 : 0));
                v >>>= 7;
            } while (v != 0);
        }
        ByteBuffer out = ByteBuffer.allocate(20 + body.size()).order(ByteOrder.LITTLE_ENDIAN);
        out.putInt(0x184D2A5B).putInt(12 + body.size()).putInt(0x3163646A).putInt(sorted.size()).put(body.toByteArray());
        return recrc(out.array());
    }

    private static byte[] recrc(byte[] census) {
        CRC32C crc = new CRC32C();
        crc.update(census, 8, census.length - 12);
        Le.put32(census, census.length - 4, (int) crc.getValue());
        return census;
    }

    private static byte[] did(int i) {
        return ("did:plc:" + Integer.toString(i, 36)).getBytes(StandardCharsets.US_ASCII);
    }

    /** A set of {@code n} DIDs (in a shuffled order) with random row counts, and its entries. */
    private static DidSet randomSet(SplittableRandom r, int n, List<Entry> entries) {
        int[] order = new int[n];
        for (int i = 0; i < n; i++) {
            order[i] = i;
        }
        for (int i = n - 1; i > 0; i--) {
            int j = r.nextInt(i + 1);
            int t = order[i];
            order[i] = order[j];
            order[j] = t;
        }
        DidSet set = new DidSet();
        for (int i : order) {
            byte[] d = did(i);
            GloomFilter.Probe p = GloomFilter.Probe.of(d);
            int rows = r.nextInt(10) == 0 ? 128 + r.nextInt(100_000) : 1 + r.nextInt(127);
            set.add(d, p);
            set.setValue(set.size() - 1, rows);
            entries.add(new Entry(p.hi(), p.intra(), rows));
        }
        return set;
    }

    @Test
    void theSealWritesEveryDidInProbeOrderWithItsRows() {
        SplittableRandom r = new SplittableRandom(3);
        for (int n : new int[] {0, 1, 2, 3, 100, 5000}) {
            List<Entry> entries = new ArrayList<>();
            DidSet set = randomSet(r, n, entries);
            DidCensus census = DidCensus.of(set);
            assertNotNull(census);
            byte[] bytes = census.serialize();
            assertArrayEquals(encode(entries), bytes, n + " DIDs");
            assertArrayEquals(bytes, DidCensus.parse(bytes, 0, bytes.length).serialize());
            DidSet reordered = new DidSet();
            for (int i = n - 1; i >= 0; i--) {
                reordered.add(set.key(i), set.probe(i));
                reordered.setValue(n - 1 - i, set.value(i));
            }
            assertArrayEquals(bytes, DidCensus.of(reordered).serialize(), "insertion order does not matter");
        }
    }

    @Test
    void probesSharingTheirHighBitsAreOrderedByTheWholeProbe() {
        SplittableRandom r = new SplittableRandom(5);
        List<Entry> entries = new ArrayList<>();
        DidSet set = new DidSet();
        for (int i = 0; i < 3000; i++) {
            // few distinct high parts (negative ones too), clashing low bits and intra words
            long hi = (long) (r.nextInt(6) - 3) << 40 | r.nextInt(1 << 12);
            GloomFilter.Probe p = new GloomFilter.Probe(hi, r.nextInt(64) - 32);
            if (entries.stream().anyMatch(e -> e.hi() == p.hi() && e.intra() == p.intra())) {
                continue;
            }
            set.add(did(i), p);
            set.setValue(set.size() - 1, 1 + r.nextInt(3));
            entries.add(new Entry(p.hi(), p.intra(), set.value(set.size() - 1)));
        }
        assertArrayEquals(encode(entries), DidCensus.of(set).serialize());
    }

    @Test
    void twoDidsSharingAProbeGetNoCensus() {
        DidSet set = new DidSet();
        GloomFilter.Probe p = GloomFilter.Probe.of(did(1));
        set.add(did(1), p);
        set.add(did(2), GloomFilter.Probe.of(did(2)));
        set.add(did(3), p);
        for (int i = 0; i < 3; i++) {
            set.setValue(i, 1);
        }
        assertNull(DidCensus.of(set), "an entry must be exactly one DID");
    }

    @Test
    void droppedRowsAreSubtractedAndEmptiedDidsLeave() {
        SplittableRandom r = new SplittableRandom(9);
        List<Entry> entries = new ArrayList<>();
        DidSet set = randomSet(r, 2000, entries);
        // a row count at the top of the unsigned 32-bit range survives the round trip
        set.setValue(0, -1);
        DidCensus census = DidCensus.parse(DidCensus.of(set).serialize(), 0, DidCensus.of(set).serialize().length);
        DidSet dropped = new DidSet();
        List<Entry> left = new ArrayList<>();
        int leaving = 0;
        for (int i = 0; i < set.size(); i++) {
            long rows = Integer.toUnsignedLong(set.value(i));
            GloomFilter.Probe p = set.probe(i);
            int choice = r.nextInt(4);
            long gone = choice == 0 ? rows : choice == 1 ? 1 + r.nextLong(rows) : 0;
            if (gone > 0) {
                dropped.add(set.key(i), p);
                dropped.setValue(dropped.size() - 1, (int) gone);
            }
            if (gone < rows) {
                left.add(new Entry(p.hi(), p.intra(), (int) (rows - gone)));
            } else {
                leaving++;
            }
        }
        assertTrue(leaving > 100 && left.size() > 100);
        assertArrayEquals(encode(left), census.minus(dropped).serialize());
        assertEquals(set.size(), census.minus(new DidSet()).size(), "nothing dropped, nothing leaves");
    }

    @Test
    void aDropTheCensusCannotAccountForIsCorruption() {
        DidSet set = new DidSet();
        set.add(did(1), GloomFilter.Probe.of(did(1)));
        set.setValue(0, 2);
        DidCensus census = DidCensus.of(set);
        DidSet stranger = new DidSet();
        stranger.add(did(2), GloomFilter.Probe.of(did(2)));
        stranger.setValue(0, 1);
        assertEquals(SegmentException.Type.CORRUPT_SEGMENT,
                assertThrows(SegmentException.class, () -> census.minus(stranger)).type());
        DidSet tooMany = new DidSet();
        tooMany.add(did(1), GloomFilter.Probe.of(did(1)));
        tooMany.setValue(0, 3);
        assertThrows(SegmentException.class, () -> census.minus(tooMany));
    }

    @Test
    void damagedBytesAreRefused() {
        List<Entry> entries = new ArrayList<>();
        DidSet set = randomSet(new SplittableRandom(4), 20, entries);
        byte[] good = DidCensus.of(set).serialize();
        for (int i = 0; i < good.length; i++) {
            byte[] bad = good.clone();
            bad[i] ^= 0x10;
            int at = i;
            assertThrows(SegmentException.class, () -> DidCensus.parse(bad, 0, bad.length), "byte " + at);
        }
        // one-byte row counts, so only the shape is wrong
        entries.replaceAll(e -> new Entry(e.hi(), e.intra(), 3));
        entries.sort(PROBE_ORDER);
        List<Entry> swapped = new ArrayList<>(entries);
        swapped.set(0, entries.get(1));
        swapped.set(1, entries.get(0));
        List<List<Entry>> shapes = List.of(swapped, List.of(entries.get(0), entries.get(0)),
                List.of(new Entry(entries.get(0).hi(), entries.get(0).intra(), 0)));
        for (List<Entry> shape : shapes) {
            byte[] bad = unsortedEncode(shape);
            assertThrows(SegmentException.class, () -> DidCensus.parse(bad, 0, bad.length), shape.toString());
        }
        // a row count written in two bytes where one does
        byte[] one = encode(List.of(new Entry(1, 1, 5)));
        byte[] padded = new byte[one.length + 1];
        System.arraycopy(one, 0, padded, 0, 28);
        padded[28] = (byte) 0x85;
        padded[29] = 0;
        Le.put32(padded, 4, padded.length - 8);
        byte[] nonMinimal = recrc(padded);
        assertThrows(SegmentException.class, () -> DidCensus.parse(nonMinimal, 0, nonMinimal.length));
    }

    /** As {@link #encode} without sorting: for entries out of order or repeated. */
    private static byte[] unsortedEncode(List<Entry> entries) {
        ByteArrayOutputStream body = new ByteArrayOutputStream();
        for (Entry e : entries) {
            body.writeBytes(ByteBuffer.allocate(12).order(ByteOrder.LITTLE_ENDIAN).putLong(e.hi()).putInt(e.intra()).array());
            body.write(e.rows());
        }
        ByteBuffer out = ByteBuffer.allocate(20 + body.size()).order(ByteOrder.LITTLE_ENDIAN);
        out.putInt(0x184D2A5B).putInt(12 + body.size()).putInt(0x3163646A).putInt(entries.size()).put(body.toByteArray());
        return recrc(out.array());
    }

    @Test
    void theVerifierChecksTheCensusAgainstTheRows() {
        try (ZstdFrames zstd = new ZstdFrames()) {
            List<byte[]> bodies = new ArrayList<>();
            long seq = 0;
            for (int b = 0; b < 4; b++) {
                BlockBuilder bb = new BlockBuilder(64);
                for (int i = 0; i < 64; i++) {
                    seq++;
                    bb.add(seq, 1_700_000_000_000_000L + seq, 0, 1, did((int) (seq * 7 % 29)),
                            "app.bsky.feed.like".getBytes(StandardCharsets.US_ASCII), "3kaaaaaaaaaa2".getBytes(StandardCharsets.US_ASCII),
                            "3kaaaaaaaaaa2".getBytes(StandardCharsets.US_ASCII), new byte[] {(byte) 0xa0});
                }
                bodies.add(bb.toBody());
            }
            byte[] file = TestSegments.seal(zstd, bodies);
            assertTrue(SegmentVerifier.verify(ByteBuffer.wrap(file)).ok());
            byte[] census = CensusFiles.census(file);
            assertNotNull(census, "the seal writes a census");
            assertEquals(29, Le.u32(census, 12));
            byte[] miscounted = census.clone();
            miscounted[DidCensus.HEAD + 12]++;
            SegmentVerifier.Result r = SegmentVerifier.verify(ByteBuffer.wrap(CensusFiles.withCensus(file, recrc(miscounted))));
            assertFalse(r.ok());
            assertTrue(r.reason().contains("DID census"), r.reason());
            assertTrue(SegmentVerifier.verify(ByteBuffer.wrap(CensusFiles.withoutCensus(file))).ok(), "the census is optional");
        }
    }
}
