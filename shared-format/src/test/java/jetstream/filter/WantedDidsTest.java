package jetstream.filter;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.SplittableRandom;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

@Tag("unit")
class WantedDidsTest {
    private static String did(SplittableRandom r) {
        StringBuilder b = new StringBuilder("did:plc:");
        int n = 1 + r.nextInt(24);
        for (int i = 0; i < n; i++) {
            b.append((char) ('a' + r.nextInt(3))); // a small alphabet: many near-misses and shared prefixes
        }
        return b.toString();
    }

    @Test
    void answersLikeAHashSetOfTheSameStrings() {
        SplittableRandom r = new SplittableRandom(21);
        for (int round = 0; round < 200; round++) {
            int n = r.nextInt(round < 100 ? 40 : 3_000);
            List<String> added = new ArrayList<>();
            for (int i = 0; i < n; i++) {
                added.add(did(r));
            }
            WantedDids set = WantedDids.of(added);
            Set<String> want = new LinkedHashSet<>(added);
            assertEquals(want.size(), set.size());
            assertEquals(new ArrayList<>(want), new ArrayList<>(set), "iteration keeps the first insertion order");
            assertEquals(want, set);
            for (int i = 0; i < 200; i++) {
                String probe = did(r);
                assertEquals(want.contains(probe), set.contains(probe), probe);
            }
            List<String> utf8 = new ArrayList<>();
            set.forEachUtf8(b -> utf8.add(new String(b, StandardCharsets.US_ASCII)));
            assertEquals(new ArrayList<>(want), utf8);
        }
    }

    /** A builder presized for its DIDs hands its arrays over; it is spent after building, whatever its size. */
    @Test
    void aBuilderIsSpentOnceBuilt() {
        for (int n : new int[] {0, 1, 100, 10_000}) {
            List<String> dids = new ArrayList<>();
            for (int i = 0; i < n; i++) {
                dids.add("did:plc:" + String.format("%024d", i)); // 32 chars: the presized length
            }
            WantedDids.Builder b = new WantedDids.Builder(n);
            dids.forEach(b::add);
            WantedDids set = b.build();
            assertEquals(new HashSet<>(dids), set);
            assertEquals(WantedDids.of(dids).heapBytes(), set.heapBytes(), "trimmed like a copy");
            assertThrows(IllegalStateException.class, () -> b.add("did:plc:x"));
            assertThrows(IllegalStateException.class, b::build);
            assertEquals(n, set.size(), "the set is not changed by the spent builder");
        }
    }

    @Test
    void equalHashCodesAreToldApartByTheirChars() {
        // "Aa" and "BB" have the same String.hashCode, and so have these DIDs.
        WantedDids set = WantedDids.of(List.of("did:web:Aa", "did:web:BBAa"));
        assertEquals("did:web:Aa".hashCode(), "did:web:BB".hashCode());
        assertTrue(set.contains("did:web:Aa"));
        assertFalse(set.contains("did:web:BB"));
        assertTrue(set.contains("did:web:BBAa"));
        assertFalse(set.contains("did:web:AaBB"));
        assertFalse(set.contains("did:web:AaAa"));
        assertFalse(set.contains(null));
        assertFalse(set.contains(42));
    }

    @Test
    void theBuilderSaysWhatWasNewAndRefusesNonAscii() {
        WantedDids.Builder b = new WantedDids.Builder();
        assertTrue(b.add("did:plc:a"));
        assertFalse(b.add("did:plc:a"));
        assertThrows(IllegalArgumentException.class, () -> b.add("did:plc:\u00e9"));
        assertTrue(b.add("did:plc:b"));
        WantedDids s = b.build();
        assertEquals(List.of("did:plc:a", "did:plc:b"), new ArrayList<>(s));
        assertFalse(s.contains("did:plc:\u00e9"));
        assertTrue(WantedDids.of(List.of()).isEmpty());
        assertFalse(WantedDids.of(List.of()).contains("did:plc:a"));
    }

    /** The point of the class: a 10,000-DID filter in well under half of what a hash set of strings holds. */
    @Test
    void tenThousandDidsTakeUnderHalfAMegabyte() {
        List<String> dids = new ArrayList<>();
        for (int i = 0; i < 10_000; i++) {
            dids.add("did:plc:" + String.format("%024d", i));
        }
        WantedDids set = WantedDids.of(dids);
        // A HashSet<String>: a 32-byte node and a 24-byte String with its 16-byte-header array per DID, plus the table.
        long hashSet = 16_384L * 4 + 10_000L * (32 + 24 + 16 + 32);
        assertTrue(set.heapBytes() < 500_000, set.heapBytes() + " bytes");
        assertTrue(set.heapBytes() * 2 < hashSet, set.heapBytes() + " vs " + hashSet);
        assertEquals(new HashSet<>(dids), set);
    }
}
