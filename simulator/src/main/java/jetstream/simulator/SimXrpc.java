package jetstream.simulator;

import java.io.IOException;

/** XRPC answers and query parameters shared by the simulator's relay and PDS endpoints. */
final class SimXrpc {
    private SimXrpc() {}

    static void notImplemented(Exchange ex) throws IOException {
        ex.send(501, "application/json", Json.error("MethodNotImplemented", "Method Not Implemented"));
    }

    static void badRequest(Exchange ex, String error, String message) throws IOException {
        ex.send(400, "application/json", Json.error(error, message));
    }

    /** {@code limit} in [1, max] (default when absent); -1 after answering 400. */
    static int limit(Exchange ex, int dflt, int max) throws IOException {
        String l = ex.param("limit");
        if (l == null) {
            return dflt;
        }
        try {
            int v = Integer.parseInt(l);
            if (v >= 1 && v <= max) {
                return v;
            }
        } catch (NumberFormatException e) {
            // answered below
        }
        badRequest(ex, "InvalidRequest", "limit must be an integer in [1, " + max + "]");
        return -1;
    }

    /** The opaque cursor (a position); -1 after answering 400. */
    static int cursor(Exchange ex) throws IOException {
        String c = ex.param("cursor");
        if (c == null || c.isEmpty()) {
            return 0;
        }
        try {
            int v = Integer.parseInt(c);
            if (v >= 0) {
                return v;
            }
        } catch (NumberFormatException e) {
            // answered below
        }
        badRequest(ex, "InvalidRequest", "malformed cursor");
        return -1;
    }
}
