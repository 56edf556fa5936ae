package jetstream.atproto.json;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.core.StreamReadConstraints;
import java.io.IOException;
import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import jetstream.atproto.DecodeException;
import jetstream.atproto.cbor.CborReader;
import jetstream.atproto.cbor.DagCbor;
import jetstream.atproto.cid.Cid;

/**
 * Parses atproto JSON into the data model (the tree {@link DagCbor} encodes), checking the data
 * model's JSON rules: {@code {"$link": cid}} and {@code {"$bytes": base64}} objects have that single
 * field of string type; {@code $type}, where present, is a non-empty string; a {@code $type: "blob"}
 * object has exactly {@code ref} (a link), {@code mimeType} (a string) and {@code size} (an
 * integer) besides; numbers must be integers in int64 ({@code 123.0} counts as 123); duplicate keys
 * and unpaired surrogate escapes are rejected. Failures are {@link DecodeException}s (the JSON may come from a client).
 */
public final class JsonToCbor {
    private static final JsonFactory FACTORY = JsonFactory.builder()
            .enable(com.fasterxml.jackson.core.StreamReadFeature.STRICT_DUPLICATE_DETECTION)
            .streamReadConstraints(StreamReadConstraints.builder().maxNestingDepth(CborReader.DEFAULT_MAX_DEPTH).build())
            .build();

    private JsonToCbor() {}

    /** The canonical DAG-CBOR of a JSON object (a record). */
    public static byte[] toCbor(byte[] json) {
        return DagCbor.encode(parseObject(json));
    }

    public static byte[] toCbor(String json) {
        return toCbor(json.getBytes(StandardCharsets.UTF_8));
    }

    /** A JSON object as a data-model map. */
    public static Map<String, Object> parseObject(byte[] json) {
        Object v = parse(json);
        if (!(v instanceof Map)) {
            throw new DecodeException("json_not_object", "top-level JSON value must be an object");
        }
        @SuppressWarnings("unchecked")
        Map<String, Object> m = (Map<String, Object>) v;
        return m;
    }

    /** Any JSON value as a data-model value. */
    public static Object parse(byte[] json) {
        try (JsonParser p = FACTORY.createParser(json)) {
            JsonToken t = p.nextToken();
            if (t == null) {
                throw new DecodeException("bad_json", "empty JSON input");
            }
            Object v = value(p, t, 0);
            if (p.nextToken() != null) {
                throw new DecodeException("bad_json", "trailing content after the JSON value");
            }
            return v;
        } catch (JsonProcessingException e) {
            throw new DecodeException("bad_json", "malformed JSON: " + e.getOriginalMessage(), e);
        } catch (IOException e) {
            throw new DecodeException("bad_json", "unreadable JSON: " + e.getMessage(), e);
        }
    }

    private static Object value(JsonParser p, JsonToken t, int depth) throws IOException {
        switch (t) {
            case START_OBJECT:
                return object(p, depth + 1);
            case START_ARRAY: {
                checkDepth(depth + 1);
                List<Object> list = new ArrayList<>();
                for (JsonToken e = p.nextToken(); e != JsonToken.END_ARRAY; e = p.nextToken()) {
                    list.add(value(p, e, depth + 1));
                }
                return list;
            }
            case VALUE_STRING:
                return checkedString(p.getText());
            case VALUE_NUMBER_INT:
                if (p.getNumberType() == JsonParser.NumberType.BIG_INTEGER) {
                    throw new DecodeException("json_int_range", "integer outside the signed 64-bit range");
                }
                return p.getLongValue();
            case VALUE_NUMBER_FLOAT:
                return integral(p.getDecimalValue());
            case VALUE_TRUE:
                return Boolean.TRUE;
            case VALUE_FALSE:
                return Boolean.FALSE;
            case VALUE_NULL:
                return null;
            default:
                throw new DecodeException("bad_json", "unexpected JSON token " + t);
        }
    }

    /** A JSON number written with a fraction or exponent is accepted only when it is a whole int64. */
    private static Long integral(BigDecimal d) {
        try {
            return d.stripTrailingZeros().longValueExact();
        } catch (ArithmeticException e) {
            throw new DecodeException("json_float", "floats are not allowed in the atproto data model: " + d);
        }
    }

    /** JSON escapes can spell lone surrogates, which no UTF-8 (hence no CBOR text) can hold. */
    private static String checkedString(String s) {
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (Character.isSurrogate(c)) {
                if (Character.isHighSurrogate(c) && i + 1 < s.length() && Character.isLowSurrogate(s.charAt(i + 1))) {
                    i++;
                } else {
                    throw new DecodeException("json_string", "string holds an unpaired surrogate");
                }
            }
        }
        return s;
    }

    private static void checkDepth(int depth) {
        if (depth > CborReader.DEFAULT_MAX_DEPTH) {
            throw new DecodeException("json_depth", "nesting deeper than " + CborReader.DEFAULT_MAX_DEPTH);
        }
    }

    private static Object object(JsonParser p, int depth) throws IOException {
        checkDepth(depth);
        Map<String, Object> m = new LinkedHashMap<>();
        for (JsonToken t = p.nextToken(); t != JsonToken.END_OBJECT; t = p.nextToken()) {
            String key = checkedString(p.currentName());
            m.put(key, value(p, p.nextToken(), depth));
        }
        if (m.containsKey("$link")) {
            return link(m);
        }
        if (m.containsKey("$bytes")) {
            Object b = m.get("$bytes");
            if (m.size() != 1 || !(b instanceof String)) {
                throw new DecodeException("json_bytes", "$bytes objects have exactly one string field");
            }
            String s = (String) b;
            if (s.indexOf('=') >= 0) {
                throw new DecodeException("json_bytes", "$bytes must be unpadded base64");
            }
            try {
                return Base64.getDecoder().decode(s);
            } catch (IllegalArgumentException e) {
                throw new DecodeException("json_bytes", "invalid base64 in $bytes", e);
            }
        }
        if (m.containsKey("$type")) {
            Object type = m.get("$type");
            if (!(type instanceof String) || ((String) type).isEmpty()) {
                throw new DecodeException("json_type", "$type must be a non-empty string");
            }
            if ("blob".equals(type)) {
                checkBlob(m);
            }
        }
        return m;
    }

    private static Cid link(Map<String, Object> m) {
        Object l = m.get("$link");
        if (m.size() != 1 || !(l instanceof String)) {
            throw new DecodeException("json_link", "$link objects have exactly one string field");
        }
        return Cid.parse((String) l);
    }

    private static void checkBlob(Map<String, Object> m) {
        if (m.size() != 4 || !(m.get("ref") instanceof Cid) || !(m.get("mimeType") instanceof String) || !(m.get("size") instanceof Long)) {
            throw new DecodeException("json_blob", "a blob has exactly $type, ref (link), mimeType (string) and size (integer)");
        }
    }
}
