package jetstream.client;

import java.io.IOException;
import java.net.http.HttpClient;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import jetstream.planner.PlanFilter;

/**
 * The live half of a subscription: v2 subscribeEvents sessions from the delivery cursor, reopened
 * with backoff after drops and silences, with dictionary zstd when the server offers it. Rows at or
 * below the cursor (reconnect replays, the backfill seam) are dropped by seq.
 */
final class LiveTail {
    static final String GET_DICTIONARY = "network.bsky.jetstream.getZstdDictionary";
    private static final long LIVE_FLUSH_MS = 20;
    private static final long MAX_RECONNECT_MS = 30_000;

    private final Options options;
    private final XrpcCalls xrpc;
    private final HttpClient http;
    private final Delivery delivery;
    final AtomicLong idleReconnects = new AtomicLong();
    volatile long residualGap = -1;
    private volatile LiveSession session;
    private byte[] dictionary;
    private boolean dictionaryFetched;

    LiveTail(Options options, XrpcCalls xrpc, HttpClient http, Delivery delivery) {
        this.options = options;
        this.xrpc = xrpc;
        this.http = http;
        this.delivery = delivery;
    }

    /** Closes the open session, if any (from {@link JetstreamClient#close()}). */
    void close() {
        LiveSession s = session;
        if (s != null) {
            s.close();
        }
    }

    private String query(long cursor, boolean withCursor) {
        StringBuilder q = new StringBuilder();
        if (withCursor) {
            q.append("cursor=").append(cursor);
        }
        for (String k : options.kinds) {
            q.append(q.isEmpty() ? "" : "&").append("kinds=").append(XrpcCalls.enc(k));
        }
        for (String c : options.collections) {
            q.append(q.isEmpty() ? "" : "&").append("collections=").append(XrpcCalls.enc(c));
        }
        for (String d : options.dids) {
            q.append(q.isEmpty() ? "" : "&").append("dids=").append(XrpcCalls.enc(d));
        }
        if (options.zstd && dictionary != null) {
            q.append(q.isEmpty() ? "" : "&").append("zstdDictionary=").append(dictionaryId(dictionary));
        }
        return q.toString();
    }

    static long dictionaryId(byte[] dict) {
        return (dict[4] & 0xFFL) | (dict[5] & 0xFFL) << 8 | (dict[6] & 0xFFL) << 16 | (dict[7] & 0xFFL) << 24;
    }

    /** Fetches the current dictionary; on any failure the tail runs uncompressed (not an error). */
    private void fetchDictionary() {
        dictionaryFetched = true;
        if (!options.zstd) {
            return;
        }
        try {
            byte[] d = xrpc.get(GET_DICTIONARY, "", false);
            dictionary = d.length >= 8 && dictionaryId(d) != 0 ? d : null;
        } catch (RuntimeException e) {
            dictionary = null;
        }
    }

    /**
     * Follows the live tail until close. Returns true when the server said CursorTooOld and the
     * caller should sweep the archive again (backfill mode only).
     */
    boolean run(boolean backfillMode) {
        if (!dictionaryFetched) {
            fetchDictionary();
        }
        residualGap = -1;
        PlanFilter match = options.filter.withWindow(0, -1);
        long backoff = 250;
        boolean delivered = delivery.lastSeq > 0;
        boolean refetched = false;
        while (!delivery.closed.get()) {
            // Before the first delivery a pure-live client with cursor 0 starts at the tip.
            boolean withCursor = backfillMode || delivered || options.liveCursor > 0;
            LiveSession s;
            try {
                s = LiveSession.open(http, xrpc.base, query(delivery.lastSeq, withCursor), options.zstd ? dictionary : null);
            } catch (XrpcException e) {
                switch (e.error()) {
                    case "CursorTooOld" -> {
                        if (backfillMode) {
                            return true;
                        }
                        throw e;
                    }
                    case "UnknownZstdDictionary" -> {
                        byte[] old = dictionary;
                        if (refetched) {
                            dictionary = null;
                        } else {
                            refetched = true;
                            fetchDictionary();
                            if (dictionary != null && old != null && dictionaryId(dictionary) == dictionaryId(old)) {
                                dictionary = null;
                            }
                        }
                        continue;
                    }
                    default -> {
                        if (e.status() >= 400 && e.status() < 500) {
                            throw e;
                        }
                    }
                }
                backoff = sleepBackoff(backoff);
                continue;
            } catch (IOException e) {
                backoff = sleepBackoff(backoff);
                continue;
            }
            session = s;
            if (delivery.closed.get()) {
                s.close();
                throw new Stop();
            }
            boolean progressed = readSession(s, match);
            s.close();
            session = null;
            if (progressed) {
                delivered = true;
                backoff = 250;
            } else {
                backoff = sleepBackoff(backoff);
            }
        }
        throw new Stop();
    }

    private static long sleepBackoff(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            throw new Stop();
        }
        return Math.min(ms * 2, MAX_RECONNECT_MS);
    }

    /** Reads one session to its end; returns whether it delivered any new event. */
    private boolean readSession(LiveSession s, PlanFilter match) {
        boolean progressed = false;
        long cutover = delivery.lastSeq;
        try {
            while (!delivery.closed.get()) {
                Object o = s.queue.poll(LIVE_FLUSH_MS, TimeUnit.MILLISECONDS);
                if (o == null) {
                    delivery.flush();
                    if (s.silentNanos() > options.liveIdleTimeout.toNanos()) {
                        idleReconnects.incrementAndGet();
                        return progressed;
                    }
                    continue;
                }
                if (o instanceof LiveSession.End) {
                    delivery.flush();
                    return progressed;
                }
                Event ev = ((LiveFrame) o).event();
                if (residualGap < 0) {
                    residualGap = Math.max(0, ev.seq() - cutover - 1);
                }
                if (delivery.duplicate(ev.seq()) || !match.matches(ev.storedKind(), ev.did(), ev.collection(), ev.seq())) {
                    continue;
                }
                delivery.add(ev, true);
                progressed = true;
            }
        } catch (InterruptedException e) {
            throw new Stop();
        }
        throw new Stop();
    }
}
