package jetstream.atproto.cbor;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import jetstream.atproto.cid.Cid;

/** Seeded random atproto data-model trees for property tests. */
public final class RandomValues {
    private static final String[] KEYS = {"a", "b", "$type", "text", "createdAt", "ref", "size", "mimeType", "\u00e9", "<&>", "zz", "aa", "\u2028", "\ud83d\ude00"};
    private static final String[] STRINGS = {"", "x", "hello world", "quote\" back\\slash", "ctl\u0001\u001f\t\n\r\b\f", "<script>&amp;</script>",
        "line\u2028sep\u2029", "\u00e9\u00f1\u00a9", "\ud83d\ude00\ud83d\udc68\u200d\ud83d\udc69", "\u007f del", "/slash"};

    private static final String[] TYPES = {"app.bsky.feed.post", "com.example.record", "app.bsky.embed.images#image"};

    private RandomValues() {}

    /** A well-formed blob object (JSON renders its keys in Go's struct order). */
    public static Map<String, Object> blob(Random rnd) {
        byte[] data = new byte[16];
        rnd.nextBytes(data);
        Map<String, Object> b = new LinkedHashMap<>();
        b.put("$type", "blob");
        b.put("ref", Cid.ofRaw(data, 0, data.length));
        b.put("mimeType", rnd.nextBoolean() ? "image/jpeg" : "video/mp4");
        b.put("size", (long) rnd.nextInt(1 << 20));
        return b;
    }

    public static Object value(Random rnd, int depth) {
        int kind = rnd.nextInt(depth > 4 ? 7 : 9);
        switch (kind) {
            case 0:
                return null;
            case 1:
                return rnd.nextBoolean();
            case 2: {
                switch (rnd.nextInt(4)) {
                    case 0:
                        return (long) rnd.nextInt(30) - 10;
                    case 1:
                        return rnd.nextLong();
                    case 2:
                        return rnd.nextBoolean() ? Long.MAX_VALUE : Long.MIN_VALUE;
                    default:
                        return (long) rnd.nextInt();
                }
            }
            case 3:
                return rnd.nextInt(3) == 0 ? randomString(rnd) : STRINGS[rnd.nextInt(STRINGS.length)];
            case 4: {
                byte[] b = new byte[rnd.nextInt(40)];
                rnd.nextBytes(b);
                return b;
            }
            case 5: {
                byte[] data = new byte[8];
                rnd.nextBytes(data);
                return rnd.nextBoolean() ? Cid.ofDagCbor(data) : Cid.ofRaw(data, 0, data.length);
            }
            case 6:
                return randomString(rnd);
            case 7: {
                int n = rnd.nextInt(5);
                List<Object> list = new ArrayList<>();
                for (int i = 0; i < n; i++) {
                    list.add(value(rnd, depth + 1));
                }
                return list;
            }
            default:
                return map(rnd, depth);
        }
    }

    public static Map<String, Object> map(Random rnd, int depth) {
        int n = rnd.nextInt(6);
        Map<String, Object> m = new LinkedHashMap<>();
        for (int i = 0; i < n; i++) {
            String k = rnd.nextInt(4) == 0 ? randomString(rnd) : KEYS[rnd.nextInt(KEYS.length)];
            // $type must be a non-empty string in the data model
            m.put(k, k.equals("$type") ? TYPES[rnd.nextInt(TYPES.length)] : value(rnd, depth + 1));
        }
        if (rnd.nextInt(8) == 0) {
            m.put("blob" + depth, blob(rnd));
        }
        return m;
    }

    static String randomString(Random rnd) {
        int n = rnd.nextInt(12);
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < n; i++) {
            int r = rnd.nextInt(10);
            int cp;
            if (r < 5) {
                cp = 0x20 + rnd.nextInt(0x5f);
            } else if (r < 6) {
                cp = rnd.nextInt(0x20);
            } else if (r < 8) {
                cp = 0x80 + rnd.nextInt(0xd800 - 0x80);
            } else if (r < 9) {
                cp = 0xe000 + rnd.nextInt(0x2000);
            } else {
                cp = 0x10000 + rnd.nextInt(0x100000);
            }
            sb.appendCodePoint(cp);
        }
        return sb.toString();
    }
}
