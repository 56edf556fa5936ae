package jetstream.ingester.importer;

import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Runs one import in a small-heap child JVM and prints
 * {@code DONE <state> <rowsTotal> <rowsValid> <rowsMutated> <millis> <peak RSS kB> <peak heap bytes> <floor millis>}.
 * The floor, measured in the same process before the job: one sequential read of the CSV counting
 * lines. Args: dataDir, csv name.
 */
public final class LargeImportChild {
    public static void main(String[] args) throws Exception {
        ImportHarness h = new ImportHarness(Path.of(args[0]), 64, 8 << 10);
        long floorStart = System.nanoTime();
        long lines = 0;
        try (var in = new java.io.BufferedInputStream(Files.newInputStream(h.data.resolve("imports").resolve(args[1])),
                1 << 16)) {
            byte[] buf = new byte[1 << 16];
            for (int n; (n = in.read(buf)) > 0; ) {
                for (int i = 0; i < n; i++) {
                    if (buf[i] == '\n') {
                        lines++;
                    }
                }
            }
        }
        long floorMillis = Math.max(1, (System.nanoTime() - floorStart) / 1_000_000);
        long start = System.nanoTime();
        ImportJob j = h.await(h.importer.submit(args[1]));
        long millis = (System.nanoTime() - start) / 1_000_000;
        long peakHeap = 0;
        for (var pool : java.lang.management.ManagementFactory.getMemoryPoolMXBeans()) {
            if (pool.getType() == java.lang.management.MemoryType.HEAP && pool.getPeakUsage() != null) {
                peakHeap += pool.getPeakUsage().getUsed();
            }
        }
        String hwm = Files.readAllLines(Path.of("/proc/self/status")).stream().filter(l -> l.startsWith("VmHWM:"))
                .map(l -> l.replaceAll("\\D", "")).findFirst().orElse("0");
        System.out.println("DONE " + j.state() + " " + j.rowsTotal() + " " + j.rowsValid() + " " + j.rowsMutated() + " "
                + millis + " " + hwm + " " + peakHeap + " " + floorMillis + " " + lines);
        System.out.flush();
        h.close();
        System.exit(0);
    }
}
