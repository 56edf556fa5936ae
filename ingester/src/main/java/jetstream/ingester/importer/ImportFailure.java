package jetstream.ingester.importer;

/** A refused import request: the HTTP status, XRPC error name and message of docs/http-api.md: Timestamp import. */
public final class ImportFailure extends Exception {
    private final int status;
    private final String name;

    public ImportFailure(int status, String name, String message) {
        super(message, null, false, false);
        this.status = status;
        this.name = name;
    }

    public int status() {
        return status;
    }

    public String name() {
        return name;
    }
}
