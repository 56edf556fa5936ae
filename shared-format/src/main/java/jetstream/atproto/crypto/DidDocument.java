package jetstream.atproto.crypto;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import java.io.IOException;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import java.util.function.Consumer;
import jetstream.atproto.DecodeException;

/**
 * The atproto-relevant parts of a DID document (as served by PLC or did:web): the DID, the handle
 * claimed in {@code alsoKnownAs}, the {@code #atproto} signing key and the {@code #atproto_pds}
 * service endpoint. Each part is null when the document does not carry it.
 */
public record DidDocument(String did, String handle, PublicKey signingKey, String pdsEndpoint) {
    private static final JsonFactory JSON = JsonFactory.builder().build();

    /** Parses a JSON document; malformed JSON or an unparseable {@code #atproto} key throws DecodeException. */
    public static DidDocument parse(byte[] json) {
        try (JsonParser p = JSON.createParser(json)) {
            if (p.nextToken() != JsonToken.START_OBJECT) {
                throw new DecodeException("bad_did_doc", "DID document is not a JSON object");
            }
            DidDocument doc = read(p);
            if (p.nextToken() != null) {
                throw new DecodeException("bad_did_doc", "trailing data after DID document");
            }
            return doc;
        } catch (IOException e) {
            throw new DecodeException("bad_did_doc", "malformed DID document JSON: " + e.getMessage(), e);
        }
    }

    /**
     * Reads one document from a parser positioned on its START_OBJECT, leaving it on the matching
     * END_OBJECT (so a caller can read documents embedded in a larger JSON value).
     */
    public static DidDocument read(JsonParser p) throws IOException {
        if (p.currentToken() != JsonToken.START_OBJECT) {
            throw new DecodeException("bad_did_doc", "DID document is not a JSON object");
        }
        Parts parts = new Parts();
        while (p.nextToken() == JsonToken.FIELD_NAME) {
            String field = p.currentName();
            JsonToken value = p.nextToken();
            switch (field) {
                case "id" -> parts.did = textOrNull(p, value);
                case "alsoKnownAs" -> readAlsoKnownAs(p, value, parts);
                case "verificationMethod" -> readMethods(p, value, parts);
                case "service" -> readServices(p, value, parts);
                default -> p.skipChildren();
            }
        }
        if (p.currentToken() != JsonToken.END_OBJECT) {
            throw new DecodeException("bad_did_doc", "malformed DID document object");
        }
        return parts.finish();
    }

    private static final class Parts {
        String did;
        String handle;
        String keyId;
        String keyType;
        String keyMultibase;
        String pdsId;
        String pdsEndpoint;

        DidDocument finish() {
            PublicKey key = null;
            if (keyMultibase != null && isFragment(keyId, did, "#atproto")) {
                KeyCurve legacy = keyType == null ? null : KeyCurve.byLegacySuite(keyType);
                key = legacy != null
                        ? PublicKey.fromLegacyMultibase(keyMultibase, legacy)
                        : PublicKey.fromMultikey(keyMultibase);
            }
            String pds = pdsEndpoint != null && isFragment(pdsId, did, "#atproto_pds") ? pdsEndpoint : null;
            return new DidDocument(did, handle, key, pds);
        }
    }

    /** Method and service ids may be relative ("#atproto") or absolute ("did:plc:...#atproto"). */
    private static boolean isFragment(String id, String did, String fragment) {
        if (id == null) {
            return false;
        }
        return id.equals(fragment)
                || (did != null && id.length() == did.length() + fragment.length()
                        && id.startsWith(did) && id.endsWith(fragment));
    }

    private static void readAlsoKnownAs(JsonParser p, JsonToken value, Parts parts) throws IOException {
        if (value != JsonToken.START_ARRAY) {
            p.skipChildren();
            return;
        }
        JsonToken t;
        while ((t = nextInArray(p)) != JsonToken.END_ARRAY) {
            if (t == JsonToken.VALUE_STRING) {
                String aka = p.getText();
                if (parts.handle == null && aka.startsWith("at://")) {
                    parts.handle = aka.substring(5);
                }
            } else {
                p.skipChildren();
            }
        }
    }

    private static void readMethods(JsonParser p, JsonToken value, Parts parts) throws IOException {
        forEachObject(p, value, METHOD_FIELDS, f -> {
            String id = f.get("id");
            // the first method ending in #atproto wins; the DID may not be known yet
            if (parts.keyId == null && id != null && id.endsWith("#atproto")) {
                parts.keyId = id;
                parts.keyType = f.get("type");
                parts.keyMultibase = f.get("publicKeyMultibase");
            }
        });
    }

    private static void readServices(JsonParser p, JsonToken value, Parts parts) throws IOException {
        forEachObject(p, value, SERVICE_FIELDS, f -> {
            String id = f.get("id");
            if (parts.pdsId == null && id != null && id.endsWith("#atproto_pds")) {
                parts.pdsId = id;
                parts.pdsEndpoint = f.get("serviceEndpoint");
            }
        });
    }

    private static final Set<String> METHOD_FIELDS = Set.of("id", "type", "publicKeyMultibase");
    private static final Set<String> SERVICE_FIELDS = Set.of("id", "serviceEndpoint");

    /**
     * Hands {@code each} the text fields named in {@code names} of every object in the array that
     * {@code value} starts (anything else, and a non-array value, is skipped).
     */
    private static void forEachObject(JsonParser p, JsonToken value, Set<String> names,
                                      Consumer<Map<String, String>> each) throws IOException {
        if (value != JsonToken.START_ARRAY) {
            p.skipChildren();
            return;
        }
        JsonToken t;
        while ((t = nextInArray(p)) != JsonToken.END_ARRAY) {
            if (t != JsonToken.START_OBJECT) {
                p.skipChildren();
                continue;
            }
            Map<String, String> fields = new HashMap<>(4);
            while (p.nextToken() == JsonToken.FIELD_NAME) {
                String f = p.currentName();
                JsonToken v = p.nextToken();
                if (names.contains(f)) {
                    fields.put(f, textOrNull(p, v));
                } else {
                    p.skipChildren();
                }
            }
            each.accept(fields);
        }
    }

    /** The next token inside an array; jackson reports EOF as null, which must not loop forever. */
    private static JsonToken nextInArray(JsonParser p) throws IOException {
        JsonToken t = p.nextToken();
        if (t == null) {
            throw new DecodeException("bad_did_doc", "truncated DID document");
        }
        return t;
    }

    /** The string value, or null (skipping it) for any other JSON type. */
    private static String textOrNull(JsonParser p, JsonToken value) throws IOException {
        if (value == JsonToken.VALUE_STRING) {
            return p.getText();
        }
        p.skipChildren();
        return null;
    }
}
