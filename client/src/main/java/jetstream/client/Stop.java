package jetstream.client;

/** Unwinds the driver thread after {@link JetstreamClient#close()}; never reaches the caller. */
final class Stop extends RuntimeException {
    private static final long serialVersionUID = 1L;

    Stop() {
        super(null, null, false, false);
    }
}
