package jetstream.atproto.mst;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.charset.StandardCharsets;
import java.util.List;
import jetstream.testing.Vectors;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** atproto interop MST key vectors, every case counted. */
@Tag("unit")
class MstKeysTest {
    private static final ObjectMapper MAPPER = new ObjectMapper();

    private static byte[] utf8(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    @Test
    void keyHeights() throws Exception {
        int cases = 0;
        for (JsonNode c : MAPPER.readTree(Vectors.bytes("atproto-interop/mst/key_heights.json"))) {
            assertEquals(c.get("height").asInt(), MstKeys.height(utf8(c.get("key").asText())), c.get("key").asText());
            cases++;
        }
        assertEquals(9, cases);
    }

    @Test
    void commonPrefix() throws Exception {
        int cases = 0;
        for (JsonNode c : MAPPER.readTree(Vectors.bytes("atproto-interop/mst/common_prefix.json"))) {
            byte[] l = utf8(c.get("left").asText());
            byte[] r = utf8(c.get("right").asText());
            assertEquals(c.get("len").asInt(), MstKeys.commonPrefixLength(l, r), c.toString());
            cases++;
        }
        assertEquals(13, cases);
    }

    /** Each example key's second character is the layer the generator placed it on. */
    @Test
    void exampleKeysSitOnTheirNamedLayer() {
        List<String> keys = Vectors.lines("atproto-interop/mst/example_keys.txt").filter(s -> !s.isBlank()).toList();
        for (String k : keys) {
            assertEquals(k.charAt(1) - '0', MstKeys.height(utf8(k)), k);
            assertTrue(MstKeys.isValid(utf8(k)), k);
        }
        assertEquals(26 * 6, keys.size());
    }

    @Test
    void keySyntax() {
        for (String ok : new String[] {"app.bsky.feed.post/3jzfcijpj2z2a", "a/b", "com.example/self", "x.y/a:b~c_d-e.f"}) {
            assertTrue(MstKeys.isValid(utf8(ok)), ok);
        }
        for (String bad : new String[] {"", "/", "a/", "/b", "ab", "a/b/c", "a b/c", "a/b\u00e9", "app.bsky/é",
                "a/b\u0000", "a/" + "x".repeat(MstKeys.MAX_KEY_BYTES)}) {
            assertFalse(MstKeys.isValid(utf8(bad)), bad);
        }
    }
}
