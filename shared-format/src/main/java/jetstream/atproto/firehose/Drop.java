package jetstream.atproto.firehose;

/**
 * Something a conversion refused to archive. {@code reason} is the {@code reason} label of the
 * ingest drop counter; {@code wholeEvent} says whether the entire upstream event was dropped or a
 * single op/row of it. {@code detail} is a short human description for the bounded log lines some
 * reasons get; it is cut to {@link #MAX_DETAIL} chars since it may quote hostile input.
 */
public record Drop(String reason, boolean wholeEvent, String detail) {
    public static final int MAX_DETAIL = 200;

    public static final String INVALID_DID = "invalid_did";
    public static final String INVALID_REV = "invalid_rev";
    public static final String INVALID_COLLECTION = "invalid_collection";
    public static final String INVALID_RKEY = "invalid_rkey";
    public static final String MISSING_BLOCK = "missing_block";
    /** A record block that is not exactly one DAG-CBOR map of the atproto data model. */
    public static final String INVALID_DATA_MODEL = "invalid_data_model";
    public static final String FIELD_TOO_LONG = "field_too_long";

    public Drop {
        if (detail.length() > MAX_DETAIL) {
            detail = detail.substring(0, MAX_DETAIL) + "...";
        }
    }
}
