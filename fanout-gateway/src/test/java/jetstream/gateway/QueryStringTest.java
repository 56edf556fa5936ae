package jetstream.gateway;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import jetstream.filter.FilterException;

@Tag("unit")
class QueryStringTest {
    @Test
    void parsesRepeatedValuesInOrder() {
        Map<String, List<String>> q = QueryString.parse("a=1&b=x+y&a=%32&c&=v&&d=");
        assertEquals(List.of("1", "2"), q.get("a"));
        assertEquals(List.of("x y"), q.get("b"));
        assertEquals(List.of(""), q.get("c"));
        assertEquals(List.of("v"), q.get(""));
        assertEquals(List.of(""), q.get("d"));
        // a repeated key, written plainly or escaped, collects every value in order
        assertEquals(Map.of("a", List.of("1", "2", "3", "4"), "b", List.of("x")),
                QueryString.parse("a=1&a=2&b=x&%61=3&a=4"));
    }

    @Test
    void rejectsWhatGoRejects() {
        assertEquals("invalid URL escape \"%zz\"", assertThrows(FilterException.class, () -> QueryString.parse("a=%zz")).getMessage());
        assertEquals("invalid URL escape \"%4\"", assertThrows(FilterException.class, () -> QueryString.parse("a=%4")).getMessage());
        assertEquals("invalid semicolon separator in query",
                assertThrows(FilterException.class, () -> QueryString.parse("a=1;b=2")).getMessage());
        // Go keeps the semicolon error over an earlier escape error.
        assertEquals("invalid semicolon separator in query",
                assertThrows(FilterException.class, () -> QueryString.parse("a=%zz&b=1;c")).getMessage());
        assertEquals("invalid URL escape \"%g1\"",
                assertThrows(FilterException.class, () -> QueryString.parse("a=1&b=%g1&c=%zz")).getMessage());
        assertEquals("invalid URL escape \"%\"", assertThrows(FilterException.class, () -> QueryString.parse("a=%&b=1")).getMessage());
    }

    /** A request line's chars are its bytes: raw UTF-8 in the line decodes like its escaped form. */
    @Test
    void rawRequestLineBytesAreUtf8() {
        String raw = new String("k=\u00e9t\u00e9".getBytes(StandardCharsets.UTF_8), StandardCharsets.ISO_8859_1);
        assertEquals(List.of("\u00e9t\u00e9"), QueryString.parse(raw).get("k"));
        assertEquals(List.of("\u00e9t\u00e9"), QueryString.parse("k=%C3%A9t%C3%A9").get("k"));
        assertEquals(List.of("\u4e16 x"), QueryString.parse("k=\u4e16+x").get("k"));
    }

    /** Random ASCII queries (escapes, '+', '=' in values, empty pairs) parse as a plain split-and-decode does. */
    @Test
    void agreesWithSplitAndDecodeOnRandomQueries() {
        SplittableRandom r = new SplittableRandom(7);
        String alphabet = "ab=+&%:.-_";
        for (int round = 0; round < 5_000; round++) {
            StringBuilder q = new StringBuilder();
            int n = r.nextInt(40);
            for (int i = 0; i < n; i++) {
                char c = alphabet.charAt(r.nextInt(alphabet.length()));
                if (c == '%') {
                    q.append('%').append(Integer.toHexString(0x20 + r.nextInt(0x5f)));
                } else {
                    q.append(c);
                }
            }
            Map<String, List<String>> want = new java.util.LinkedHashMap<>();
            for (String pair : q.toString().split("&", -1)) {
                if (!pair.isEmpty()) {
                    int eq = pair.indexOf('=');
                    String k = URLDecoder.decode(eq < 0 ? pair : pair.substring(0, eq), StandardCharsets.UTF_8);
                    String v = eq < 0 ? "" : URLDecoder.decode(pair.substring(eq + 1), StandardCharsets.UTF_8);
                    want.computeIfAbsent(k, x -> new java.util.ArrayList<>()).add(v);
                }
            }
            assertEquals(want, QueryString.parse(q.toString()), q.toString());
        }
    }

    @Test
    void tenThousandEscapedDids() {
        StringBuilder q = new StringBuilder();
        for (int i = 0; i < 10_000; i++) {
            q.append("wantedDids=did%3Aplc%3A").append(String.format("%024d", i)).append('&');
        }
        List<String> dids = QueryString.parse(q.toString()).get("wantedDids");
        assertEquals(10_000, dids.size());
        assertEquals("did:plc:" + String.format("%024d", 9_999), dids.get(9_999));
    }
}
