package jetstream.ops;

import java.lang.management.LockInfo;
import java.lang.management.ManagementFactory;
import java.lang.management.MonitorInfo;
import java.lang.management.ThreadInfo;
import java.lang.management.ThreadMXBean;
import javax.management.JMException;
import javax.management.ObjectName;

/**
 * JVM diagnostics, the JVM's answer to Go's pprof goroutine dump and heap profile: every thread's
 * full stack with its locks (ThreadMXBean; {@link ThreadInfo#toString()} cuts stacks at 8 frames,
 * so the dump is written out here) and the class histogram of the heap (the DiagnosticCommand MBean's
 * {@code gcClassHistogram}, what {@code jcmd <pid> GC.class_histogram} prints).
 */
public final class Diagnostics {
    private static final String DIAGNOSTIC_COMMAND = "com.sun.management:type=DiagnosticCommand";

    private Diagnostics() {}

    /** Every live thread's state and full stack, with held monitors and synchronizers. */
    public static String threadDump() {
        ThreadMXBean mx = ManagementFactory.getThreadMXBean();
        ThreadInfo[] infos = mx.dumpAllThreads(mx.isObjectMonitorUsageSupported(), mx.isSynchronizerUsageSupported());
        StringBuilder b = new StringBuilder(infos.length * 1024);
        b.append("threads: ").append(infos.length).append('\n');
        for (ThreadInfo t : infos) {
            append(b, t);
        }
        return b.toString();
    }

    private static void append(StringBuilder b, ThreadInfo t) {
        b.append('\n').append('"').append(t.getThreadName()).append('"').append(" id=").append(t.getThreadId());
        if (t.isDaemon()) {
            b.append(" daemon");
        }
        b.append(" prio=").append(t.getPriority()).append(' ').append(t.getThreadState());
        if (t.getLockName() != null) {
            b.append(" on ").append(t.getLockName());
        }
        if (t.getLockOwnerName() != null) {
            b.append(" owned by \"").append(t.getLockOwnerName()).append("\" id=").append(t.getLockOwnerId());
        }
        b.append('\n');
        StackTraceElement[] stack = t.getStackTrace();
        MonitorInfo[] monitors = t.getLockedMonitors();
        for (int i = 0; i < stack.length; i++) {
            b.append("\tat ").append(stack[i]).append('\n');
            for (MonitorInfo m : monitors) {
                if (m.getLockedStackDepth() == i) {
                    b.append("\t- locked ").append(m).append('\n');
                }
            }
        }
        LockInfo[] syncs = t.getLockedSynchronizers();
        if (syncs.length > 0) {
            b.append("\tlocked synchronizers:\n");
            for (LockInfo l : syncs) {
                b.append("\t- ").append(l).append('\n');
            }
        }
    }

    /**
     * The heap's class histogram (instances and bytes per class, largest first). Without
     * {@code all} only live objects are counted, which forces a full GC first, as jcmd does.
     */
    public static String heapHistogram(boolean all) {
        try {
            ObjectName name = new ObjectName(DIAGNOSTIC_COMMAND);
            Object[] args = {all ? new String[] {"-all"} : new String[0]};
            return (String) ManagementFactory.getPlatformMBeanServer().invoke(name, "gcClassHistogram", args,
                    new String[] {String[].class.getName()});
        } catch (JMException e) {
            throw new IllegalStateException("heap histogram unavailable: " + e.getMessage(), e);
        }
    }
}
