package jetstream.client;

/**
 * A server answered with an XRPC error envelope ({@code {"error":..,"message":..}}), or with a
 * status and no envelope (then {@code error} is {@code HTTP<status>}).
 */
public final class XrpcException extends JetstreamException {
    private static final long serialVersionUID = 1L;

    private final int status;
    private final String error;
    private final String xrpcMessage;

    public XrpcException(int status, String error, String message) {
        super(error + (message == null || message.isEmpty() ? "" : ": " + message) + " (HTTP " + status + ")");
        this.status = status;
        this.error = error;
        this.xrpcMessage = message == null ? "" : message;
    }

    public int status() {
        return status;
    }

    /** The XRPC error name, e.g. {@code CursorTooOld}. */
    public String error() {
        return error;
    }

    public String xrpcMessage() {
        return xrpcMessage;
    }
}
