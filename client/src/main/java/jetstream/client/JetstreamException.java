package jetstream.client;

/** A terminal client failure: the event stream ends with it. */
public class JetstreamException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public JetstreamException(String message) {
        super(message);
    }

    public JetstreamException(String message, Throwable cause) {
        super(message, cause);
    }
}
