package jetstream.simulator;

import java.util.LinkedHashMap;
import java.util.Map;
import jetstream.atproto.cbor.DagCbor;

/** {@code subscribeRepos} frames: a DAG-CBOR header {@code {op, t}} followed by the body. */
final class Frames {
    private Frames() {}

    static byte[] message(String type, Map<String, Object> body) {
        Map<String, Object> header = new LinkedHashMap<>();
        header.put("op", 1L);
        header.put("t", type);
        return concat(DagCbor.encode(header), DagCbor.encode(body));
    }

    static byte[] error(String error, String message) {
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("error", error);
        body.put("message", message);
        return concat(DagCbor.encode(Map.of("op", -1L)), DagCbor.encode(body));
    }

    static byte[] info(String name, String message) {
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("name", name);
        body.put("message", message);
        return message("#info", body);
    }

    private static byte[] concat(byte[] a, byte[] b) {
        byte[] out = new byte[a.length + b.length];
        System.arraycopy(a, 0, out, 0, a.length);
        System.arraycopy(b, 0, out, a.length, b.length);
        return out;
    }
}
