package jetstream.feed;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import jetstream.atproto.DecodeException;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

@Tag("fuzz")
class FeedCodecTest {

    static List<FeedFrame> samples() {
        Random r = new Random(7);
        List<FeedFrame> out = new ArrayList<>(List.of(
                new FeedFrame.Subscribe(0), new FeedFrame.Subscribe(Long.MAX_VALUE),
                new FeedFrame.Subscribed(5, 1, 4, 9), new FeedFrame.TooOld(3, 100),
                new FeedFrame.Watermark(42), new FeedFrame.VacancyNotice(new Vacancy(10, 4106, Vacancy.Reason.ABANDONED_LEASE)),
                new FeedFrame.SegmentSealed("seg_000000000001.jss", -1L, 1, 4096, 4096, 123456),
                new FeedFrame.SegmentRewritten("seg_00000000000a.jss", 0x2D06800538D394C2L, 99),
                new FeedFrame.Phase(LifecyclePhase.STEADY_STATE, LifecyclePhase.MERGING, 1_700_000_000_000_000L),
                new FeedFrame.Phase(LifecyclePhase.BOOTSTRAP, LifecyclePhase.NONE, 0),
                new FeedFrame.WriterRunning(true), new FeedFrame.WriterRunning(false),
                new FeedFrame.BackfillProgress(10, 9, 8, 7, 6, 5), new FeedFrame.CompactionDeadline(0, 0, 0, 0, 0),
                new FeedFrame.CompactionDeadline(1_800_000_000_000_000L, 77, 1_790_000_000_000_000L, 3, 9),
                new FeedFrame.ImportStatus("job-1", "running ✓", 1, 2, 3, 4), new FeedFrame.ImportStatus("", "", 0, 0, 0, 0),
                new FeedFrame.Heartbeat(1, 2, 3), new FeedFrame.AuthChallenge(FeedAuth.nonce()),
                new FeedFrame.Auth(FeedAuth.mac(new byte[16], new byte[32])),
                new FeedFrame.ReadActive(4097, 0, 1_780_000_000_000_000L, 4 << 20), new FeedFrame.ActiveEnd(4097, 5000)));
        for (int i = 0; i < 50; i++) {
            out.add(randomEvent(r, i + 1));
        }
        byte[] block = new byte[3000];
        r.nextBytes(block);
        out.add(new FeedFrame.ActiveBlock(7, 256, 4097, 4200, 100, block));
        // last: its first 48 content bytes are a whole six-field frame, which the truncation tests' first 25 must not be
        out.add(new FeedFrame.BackfillProgress(10, 9, 8, 7, 6, 5, new FeedFrame.BackfillProgress.Hosts(100, 60, 3, 2)));
        return out;
    }

    static FeedFrame.Event randomEvent(Random r, long seq) {
        byte[] payload = new byte[r.nextInt(3) == 0 ? 0 : r.nextInt(5000)];
        r.nextBytes(payload);
        return new FeedFrame.Event(seq, r.nextLong(), r.nextInt(2) == 0 ? 0 : r.nextLong(), 1 + r.nextInt(7),
                ("did:plc:" + r.nextInt(100000)).getBytes(StandardCharsets.UTF_8),
                "app.bsky.feed.post".getBytes(StandardCharsets.UTF_8), "3kabc".getBytes(StandardCharsets.UTF_8),
                "3lxyz2222222a".getBytes(StandardCharsets.UTF_8), payload);
    }

    @Test
    void backfillProgressCarriesHostOutcomesAndStillReadsTheSixFieldFrame() {
        FeedFrame.BackfillProgress withHosts = new FeedFrame.BackfillProgress(10, 9, 8, 7, 6, 5,
                new FeedFrame.BackfillProgress.Hosts(100, 60, 3, 2));
        byte[] wire = FeedCodec.encode(withHosts);
        assertEquals(1 + 10 * 8, wire.length - FeedCodec.LENGTH_PREFIX);
        assertEquals(withHosts, roundTrip(wire));
        // the frame an older ingester sends: six u64, hosts not reported
        FeedFrame.BackfillProgress old = (FeedFrame.BackfillProgress) FeedCodec.decode(wire, FeedCodec.LENGTH_PREFIX, 1 + 6 * 8);
        assertEquals(new FeedFrame.BackfillProgress(10, 9, 8, 7, 6, 5), old);
        assertEquals(null, old.hosts());
        assertEquals(1 + 6 * 8, FeedCodec.encode(old).length - FeedCodec.LENGTH_PREFIX, "re-encoded as it came");
        // anything between the two shapes has trailing bytes
        for (int cut = 1 + 6 * 8 + 1; cut < 1 + 10 * 8; cut++) {
            final int c = cut;
            assertEquals("feed_trailing_bytes", assertThrows(DecodeException.class,
                    () -> FeedCodec.decode(wire, FeedCodec.LENGTH_PREFIX, c)).reason());
        }
    }

    private static FeedFrame roundTrip(byte[] frame) {
        int len = FeedCodec.contentLength(frame, 0);
        assertEquals(frame.length - FeedCodec.LENGTH_PREFIX, len);
        return FeedCodec.decode(frame, FeedCodec.LENGTH_PREFIX, len);
    }

    @Test
    void everyFrameTypeRoundTrips() {
        List<FeedFrame> frames = samples();
        int types = 0;
        for (FeedFrame f : frames) {
            assertEquals(f, roundTrip(FeedCodec.encode(f)));
        }
        types = (int) frames.stream().map(FeedFrame::type).distinct().count();
        assertEquals(19, types, "every frame type is covered");
    }

    @Test
    void eventFromSlicesEqualsEventFromRecord() {
        byte[] big = "xxdid:plc:abcyy".getBytes(StandardCharsets.UTF_8);
        byte[] frame = FeedCodec.encodeEvent(9, 1, 2, 4, big, 2, 11, new byte[0], 0, 0, new byte[0], 0, 0,
                new byte[0], 0, 0, big, 0, 3);
        FeedFrame.Event e = (FeedFrame.Event) roundTrip(frame);
        assertEquals("did:plc:abc", new String(e.did(), StandardCharsets.UTF_8));
        assertEquals("xxd", new String(e.payload(), StandardCharsets.UTF_8));
        assertEquals(4, e.kind());
    }

    @Test
    void everyTruncationIsTyped() {
        int cases = 0;
        for (FeedFrame f : samples().subList(0, 25)) {
            byte[] frame = FeedCodec.encode(f);
            int len = frame.length - FeedCodec.LENGTH_PREFIX;
            for (int cut = 0; cut < len; cut++) {
                final int c = cut;
                DecodeException e = assertThrows(DecodeException.class,
                        () -> FeedCodec.decode(frame, FeedCodec.LENGTH_PREFIX, c));
                assertTrue(e.reason().startsWith("feed_"), e.reason());
                cases++;
            }
        }
        assertTrue(cases > 1000, "ran " + cases);
    }

    @Test
    void trailingBytesAreRejected() {
        for (FeedFrame f : samples().subList(0, 20)) {
            byte[] frame = FeedCodec.encode(f);
            byte[] longer = Arrays.copyOf(frame, frame.length + 1);
            DecodeException e = assertThrows(DecodeException.class,
                    () -> FeedCodec.decode(longer, FeedCodec.LENGTH_PREFIX, longer.length - FeedCodec.LENGTH_PREFIX));
            assertEquals("feed_trailing_bytes", e.reason());
        }
    }

    @Test
    void badValuesAreTyped() {
        assertReason("feed_unknown_type", new byte[] {0x7F});
        assertReason("feed_truncated", new byte[] {});
        byte[] wr = FeedCodec.encode(new FeedFrame.WriterRunning(true));
        wr[FeedCodec.LENGTH_PREFIX + 1] = 2;
        assertReason("feed_bad_value", Arrays.copyOfRange(wr, FeedCodec.LENGTH_PREFIX, wr.length));
        byte[] ph = FeedCodec.encode(new FeedFrame.Phase(LifecyclePhase.MERGING, LifecyclePhase.NONE, 0));
        ph[FeedCodec.LENGTH_PREFIX + 1] = 9;
        assertReason("feed_bad_value", Arrays.copyOfRange(ph, FeedCodec.LENGTH_PREFIX, ph.length));
        byte[] vac = FeedCodec.encode(new FeedFrame.VacancyNotice(new Vacancy(1, 2, Vacancy.Reason.ABANDONED_LEASE)));
        vac[vac.length - 1] = 0;
        assertReason("feed_bad_value", Arrays.copyOfRange(vac, FeedCodec.LENGTH_PREFIX, vac.length));
        byte[] vac2 = FeedCodec.encode(new FeedFrame.VacancyNotice(new Vacancy(1, 2, Vacancy.Reason.ABANDONED_LEASE)));
        vac2[FeedCodec.LENGTH_PREFIX + 16] = 0; // end 2 -> 0
        assertReason("feed_bad_value", Arrays.copyOfRange(vac2, FeedCodec.LENGTH_PREFIX, vac2.length));
        byte[] ev = FeedCodec.encode(randomEvent(new Random(1), 3));
        ev[FeedCodec.LENGTH_PREFIX + 25] = 8;
        assertReason("feed_bad_kind", Arrays.copyOfRange(ev, FeedCodec.LENGTH_PREFIX, ev.length));
        byte[] is = FeedCodec.encode(new FeedFrame.ImportStatus("ab", "", 0, 0, 0, 0));
        is[FeedCodec.LENGTH_PREFIX + 3] = (byte) 0xC3;
        is[FeedCodec.LENGTH_PREFIX + 4] = (byte) 0x28;
        assertReason("feed_bad_utf8", Arrays.copyOfRange(is, FeedCodec.LENGTH_PREFIX, is.length));
        // an active block whose row count cannot fit its seq envelope
        byte[] ab = FeedCodec.encode(new FeedFrame.ActiveBlock(1, 256, 10, 12, 3, new byte[] {1, 2}));
        ab[FeedCodec.LENGTH_PREFIX + 1 + 4 * 8 + 7] = 4;
        assertReason("feed_bad_value", Arrays.copyOfRange(ab, FeedCodec.LENGTH_PREFIX, ab.length));
        byte[] ab2 = FeedCodec.encode(new FeedFrame.ActiveBlock(1, 256, 10, 12, 3, new byte[] {1, 2}));
        ab2[FeedCodec.LENGTH_PREFIX + 1 + 3 * 8 + 7] = 9; // maxSeq 12 -> 9, below minSeq
        assertReason("feed_bad_value", Arrays.copyOfRange(ab2, FeedCodec.LENGTH_PREFIX, ab2.length));
    }

    @Test
    void lengthPrefixIsBounded() {
        assertEquals("feed_frame_length", assertThrows(DecodeException.class,
                () -> FeedCodec.contentLength(new byte[] {0, 0, 0, 0}, 0)).reason());
        assertEquals("feed_frame_length", assertThrows(DecodeException.class,
                () -> FeedCodec.contentLength(new byte[] {(byte) 0xFF, 0, 0, 0}, 0)).reason());
        assertEquals("feed_frame_length", assertThrows(DecodeException.class,
                () -> FeedCodec.contentLength(new byte[] {0x04, 0, 0, 1}, 0)).reason());
    }

    @Test
    void randomCorruptionOnlyEverThrowsDecodeException() {
        Random r = new Random(11);
        List<FeedFrame> frames = samples();
        int iterations = Math.min(Integer.getInteger("jetstream.fuzz.iterations", 100_000), 200_000);
        int rejected = 0;
        for (int i = 0; i < iterations; i++) {
            byte[] frame = FeedCodec.encode(frames.get(r.nextInt(frames.size())));
            int flips = 1 + r.nextInt(3);
            for (int k = 0; k < flips; k++) {
                int at = FeedCodec.LENGTH_PREFIX + r.nextInt(frame.length - FeedCodec.LENGTH_PREFIX);
                frame[at] = (byte) r.nextInt(256);
            }
            try {
                FeedFrame f = FeedCodec.decode(frame, FeedCodec.LENGTH_PREFIX, frame.length - FeedCodec.LENGTH_PREFIX);
                assertEquals(f, roundTrip(FeedCodec.encode(f)));
            } catch (DecodeException e) {
                assertTrue(e.reason().startsWith("feed_"));
                rejected++;
            }
        }
        assertTrue(rejected > 0, "corruption was never detected in " + iterations + " runs");
    }

    private static void assertReason(String reason, byte[] content) {
        assertEquals(reason, assertThrows(DecodeException.class, () -> FeedCodec.decode(content, 0, content.length)).reason());
    }
}
