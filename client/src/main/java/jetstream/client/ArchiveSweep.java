package jetstream.client;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import jetstream.atproto.json.JsonBuffer;
import jetstream.planner.PlanFilter;

/**
 * The archive half of a subscription (docs/client.md: Archive, then live): planSnapshot pages pinned to the first page's
 * sealedTipSeq, each page's units downloaded, decoded and delivered in plan order by the
 * {@link UnitPipeline}.
 */
final class ArchiveSweep {
    static final String PLAN_SNAPSHOT = "network.bsky.jetstream.planSnapshot";

    private final Options options;
    private final XrpcCalls xrpc;
    private final Delivery delivery;
    final UnitPipeline pipeline;
    final AtomicLong pages = new AtomicLong();
    final AtomicLong sweeps = new AtomicLong();
    final AtomicLong plannedUnits = new AtomicLong();
    volatile long sealedTip = -1;
    volatile long plannedThrough = -1;

    ArchiveSweep(Options options, XrpcCalls xrpc, Delivery delivery, UnitPipeline pipeline) {
        this.options = options;
        this.xrpc = xrpc;
        this.delivery = delivery;
        this.pipeline = pipeline;
    }

    /** One sealed sweep from {@code floor}; returns the pinned sealedTipSeq S. */
    long sweep(long floor) {
        sweeps.incrementAndGet();
        long cursor = floor;
        Long pinned = options.snapshotOnly ? options.beforeSeq : null;
        long tip = -1;
        while (true) {
            PlanPage page = plan(cursor, tip < 0 ? pinned : Long.valueOf(tip));
            pages.incrementAndGet();
            if (tip < 0) {
                tip = page.sealedTipSeq();
                sealedTip = tip;
            } else if (page.sealedTipSeq() > tip) {
                throw new JetstreamException("invalid plan: sealedTipSeq " + page.sealedTipSeq()
                        + " above the pinned " + tip);
            }
            plannedThrough = page.plannedThroughSeq();
            runPage(page, options.filter.withWindow(Math.max(cursor, delivery.lastSeq), tip));
            if (page.plannedThroughSeq() >= tip) {
                return tip;
            }
            if (page.plannedThroughSeq() <= cursor) {
                throw new JetstreamException("planSnapshot made no progress past seq " + cursor);
            }
            cursor = page.plannedThroughSeq();
        }
    }

    /** Requests one plan page with this client's filters. */
    PlanPage plan(long afterSeq, Long beforeSeq) {
        return PlanPage.parse(xrpc.post(PLAN_SNAPSHOT, planBody(options, afterSeq, beforeSeq)));
    }

    static byte[] planBody(Options o, long afterSeq, Long beforeSeq) {
        JsonBuffer b = new JsonBuffer(256);
        b.appendAscii("{\"afterSeq\":").appendLong(afterSeq);
        if (beforeSeq != null) {
            b.appendAscii(",\"beforeSeq\":").appendLong(beforeSeq);
        }
        list(b, "kinds", o.kinds);
        list(b, "dids", o.dids);
        list(b, "collections", o.collections);
        b.append((byte) '}');
        return b.toByteArray();
    }

    private static void list(JsonBuffer b, String key, List<String> values) {
        if (values.isEmpty()) {
            return;
        }
        b.appendAscii(",\"" + key + "\":[");
        for (int i = 0; i < values.size(); i++) {
            if (i > 0) {
                b.append((byte) ',');
            }
            b.appendString(values.get(i));
        }
        b.append((byte) ']');
    }

    private void runPage(PlanPage page, PlanFilter rows) {
        List<Task.Unit> units = new ArrayList<>();
        for (PlanPage.Entry e : page.segments()) {
            if (e.wholeSegment()) {
                units.add(new Task.Unit(units.size(), e.name(), -1, e.maxSeq()));
            } else {
                for (long[] r : e.ranges()) {
                    for (long b = r[0]; b <= r[1]; b++) {
                        units.add(new Task.Unit(units.size(), e.name(), (int) b, e.maxSeq()));
                    }
                }
            }
        }
        plannedUnits.addAndGet(units.size());
        pipeline.run(units, rows);
    }
}
