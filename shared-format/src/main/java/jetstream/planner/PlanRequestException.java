package jetstream.planner;

/** A planSnapshot request the server refuses; the message is the exact 400 {@code InvalidRequest} text. */
public final class PlanRequestException extends RuntimeException {
    public PlanRequestException(String message) {
        super(message);
    }
}
