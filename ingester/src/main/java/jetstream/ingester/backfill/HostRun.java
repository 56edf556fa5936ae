package jetstream.ingester.backfill;

import java.util.ArrayDeque;
import java.util.concurrent.LinkedBlockingDeque;
import java.util.concurrent.Semaphore;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * One roster host in a backfill run: its durable row, its download queue and slots, the listRepos
 * pages not yet settled and the cursor bookkeeping. Guarded by itself, except the concurrent fields.
 */
final class HostRun {
    final String hostname;
    final String base;
    final PdsHost row;
    final Semaphore slots;
    final LinkedBlockingDeque<Job> queue = new LinkedBlockingDeque<>();
    final AtomicInteger inFlight = new AtomicInteger();
    final ArrayDeque<Page> pages = new ArrayDeque<>();
    volatile long parkedUntil;
    volatile boolean exhausted;
    long failureParkUntil;
    int hostFailures;
    String completedCursor;
    String stagedCursor;
    long coveredSinceStage;
    long lastStageNanos = System.nanoTime();
    boolean listingDone;

    HostRun(String hostname, String base, PdsHost row, int hostWorkers) {
        this.hostname = hostname;
        this.base = base;
        this.row = row;
        this.slots = new Semaphore(hostWorkers);
    }

    /** One listRepos page: the cursor after it and how many of its repos are not yet terminal. */
    static final class Page {
        final String nextCursor;
        final boolean last;
        int outstanding;
        int size;

        Page(String nextCursor, boolean last) {
            this.nextCursor = nextCursor;
            this.last = last;
        }
    }

    /** One repo to download, on the page that listed it. */
    static final class Job {
        final String did;
        final Page page;
        int attempts;
        int parks;
        /** Holds a {@link DiscoveryBacklog} permit until terminal. */
        boolean leased;

        Job(String did, Page page) {
            this.did = did;
            this.page = page;
            page.size++;
        }
    }
}
