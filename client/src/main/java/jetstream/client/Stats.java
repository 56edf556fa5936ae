package jetstream.client;

/**
 * A snapshot of a client's progress. {@code sealedTip} is the pinned S of the current sweep,
 * {@code plannedThrough} the last page's plannedThroughSeq, {@code residualGap} the seqs between the
 * cutover cursor and the first live event (filtered-out events included), -1 before the first one;
 * {@code sweeps} counts sealed sweeps started: more than one means the live tail answered
 * {@code CursorTooOld} and the client re-entered the archive (docs/client.md: Archive, then live step 5); {@code liveIdleReconnects}
 * counts live sessions reopened because the server went silent past {@code Options.liveIdleTimeout};
 * {@code failedUnits} counts units handed to the reader as {@link UnitFailedException};
 * {@code bufferedBytes} / {@code peakBufferedBytes} are the decoded archive bytes waiting for the
 * reader now and at most so far (bounded by {@code Options.prefetchBytes} plus one block).
 */
public record Stats(long pages, long sealedTip, long plannedThrough, long residualGap, long segments, long blocks,
                    long bytes, long events, long liveEvents, long duplicatesDropped, long retries,
                    long plannedUnits, long doneUnits, long lastSeq, long sweeps, long liveIdleReconnects,
                    long failedUnits, long bufferedBytes, long peakBufferedBytes) {}
