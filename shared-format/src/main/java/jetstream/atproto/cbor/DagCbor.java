package jetstream.atproto.cbor;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import jetstream.atproto.DecodeException;
import jetstream.atproto.cid.Cid;

/**
 * DAG-CBOR as the atproto data model defines it, to and from a plain object tree:
 * {@code LinkedHashMap<String,Object>} (entries in canonical key order), {@code ArrayList<Object>},
 * {@code Long}, {@code String}, {@code byte[]}, {@code Boolean}, {@code null}, {@link Cid}.
 *
 * <p>Decoding applies every rule of {@link CborReader}; encoding always produces the canonical
 * form, so {@code encode(decode(b))} equals {@code b} for every accepted input.
 */
public final class DagCbor {
    /** Canonical map key order over Java strings: UTF-8 length first, then bytewise. */
    public static final Comparator<byte[]> KEY_ORDER = (a, b) -> CborReader.compareKeys(a, 0, a.length, b, 0, b.length);

    private DagCbor() {}

    /** Decodes one item spanning all of {@code data}. */
    public static Object decode(byte[] data) {
        return decode(data, 0, data.length);
    }

    /** Decodes one item spanning exactly {@code data[off, off+len)}. */
    public static Object decode(byte[] data, int off, int len) {
        CborReader r = new CborReader(data, off, len);
        Object v = read(r);
        r.requireEnd();
        return v;
    }

    /** Decodes the next item at the reader's position (for inputs holding several items, e.g. frames). */
    public static Object read(CborReader r) {
        return read(r, 0);
    }

    private static Object read(CborReader r, int depth) {
        switch (r.peekKind()) {
            case CborReader.KIND_INT:
                return r.readInt();
            case CborReader.KIND_BYTES:
                return r.readByteArray();
            case CborReader.KIND_TEXT:
                return r.readString();
            case CborReader.KIND_ARRAY: {
                int n = r.readArrayHeader();
                r.checkDepth(depth + 1);
                List<Object> list = new ArrayList<>(n);
                for (int i = 0; i < n; i++) {
                    list.add(read(r, depth + 1));
                }
                return list;
            }
            case CborReader.KIND_MAP: {
                int n = r.readMapHeader();
                r.checkDepth(depth + 1);
                Map<String, Object> map = new LinkedHashMap<>(Math.max(4, n * 4 / 3 + 1));
                int prevOff = 0;
                int prevLen = -1;
                for (int i = 0; i < n; i++) {
                    prevLen = r.readKey(prevOff, prevLen);
                    prevOff = r.lastOffset();
                    String key = new String(r.buffer(), prevOff, prevLen, StandardCharsets.UTF_8);
                    map.put(key, read(r, depth + 1));
                }
                return map;
            }
            case CborReader.KIND_LINK:
                return r.readCid();
            case CborReader.KIND_BOOL:
                return r.readBool();
            default:
                r.readNull();
                return null;
        }
    }

    /** Checks that {@code data[off, off+len)} is exactly one valid item, without building anything. */
    public static void validate(byte[] data, int off, int len) {
        CborReader r = new CborReader(data, off, len);
        r.skip();
        r.requireEnd();
    }

    /**
     * Length of the first (validated) item in {@code data[off, off+len)}; the rest is left unread.
     * Firehose frames are two items back to back (header, body).
     */
    public static int itemLength(byte[] data, int off, int len) {
        CborReader r = new CborReader(data, off, len);
        r.skip();
        return r.position() - off;
    }

    /** Canonical DAG-CBOR of a tree (see the class comment for the accepted types; Integer/Short/Byte also). */
    public static byte[] encode(Object value) {
        CborWriter w = new CborWriter();
        encode(value, w);
        return w.toByteArray();
    }

    /**
     * Appends the canonical encoding of {@code value}.
     *
     * @throws IllegalArgumentException for values outside the data model (floats, other types,
     *     non-string map keys)
     */
    public static void encode(Object value, CborWriter w) {
        if (value == null) {
            w.writeNull();
        } else if (value instanceof String) {
            w.writeText((String) value);
        } else if (value instanceof Long || value instanceof Integer || value instanceof Short || value instanceof Byte) {
            w.writeInt(((Number) value).longValue());
        } else if (value instanceof Boolean) {
            w.writeBool((Boolean) value);
        } else if (value instanceof byte[]) {
            w.writeBytes((byte[]) value);
        } else if (value instanceof Cid) {
            w.writeLink((Cid) value);
        } else if (value instanceof List) {
            List<?> list = (List<?>) value;
            w.writeArrayHeader(list.size());
            for (Object o : list) {
                encode(o, w);
            }
        } else if (value instanceof Map) {
            encodeMap((Map<?, ?>) value, w);
        } else {
            throw new IllegalArgumentException("not an atproto data model value: " + value.getClass().getName());
        }
    }

    private static void encodeMap(Map<?, ?> map, CborWriter w) {
        byte[][] keys = new byte[map.size()][];
        Object[] values = new Object[map.size()];
        int i = 0;
        for (Map.Entry<?, ?> e : map.entrySet()) {
            if (!(e.getKey() instanceof String)) {
                throw new IllegalArgumentException("map keys must be strings, got " + e.getKey());
            }
            keys[i] = ((String) e.getKey()).getBytes(StandardCharsets.UTF_8);
            values[i] = e.getValue();
            i++;
        }
        Integer[] order = new Integer[keys.length];
        for (int k = 0; k < order.length; k++) {
            order[k] = k;
        }
        Arrays.sort(order, (a, b) -> KEY_ORDER.compare(keys[a], keys[b]));
        w.writeMapHeader(keys.length);
        for (int k = 0; k < order.length; k++) {
            byte[] key = keys[order[k]];
            if (k > 0 && Arrays.equals(key, keys[order[k - 1]])) {
                throw new IllegalArgumentException("duplicate map key " + new String(key, StandardCharsets.UTF_8));
            }
            w.writeTextUtf8(key, 0, key.length);
            encode(values[order[k]], w);
        }
    }

    /** Decodes one item that must be a map (records, frame bodies) spanning exactly {@code data[off, off+len)}. */
    public static Map<String, Object> decodeMap(byte[] data, int off, int len) {
        Object v = decode(data, off, len);
        if (!(v instanceof Map)) {
            throw new DecodeException("cbor_type", "expected a map at top level");
        }
        @SuppressWarnings("unchecked")
        Map<String, Object> m = (Map<String, Object>) v;
        return m;
    }
}
