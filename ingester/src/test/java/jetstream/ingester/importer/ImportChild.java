package jetstream.ingester.importer;

import java.nio.file.Path;

/**
 * A child ingester running the importer, for the kill -9 test. Args: dataDir, csv name or {@code -}
 * (resume only). Prints {@code JOB <id>}, then {@code APPLIED <n>} as segments are checkpointed and
 * {@code DONE <state>} when the job ends.
 */
public final class ImportChild {
    public static void main(String[] args) throws Exception {
        ImportHarness h = new ImportHarness(Path.of(args[0]), 4, 600);
        String id = args[1].equals("-") ? h.importer.status(null).id() : h.importer.submit(args[1]);
        System.out.println("JOB " + id);
        System.out.flush();
        long last = -1;
        while (true) {
            ImportJob j = h.importer.status(id);
            if (j.segmentsApplied() != last) {
                last = j.segmentsApplied();
                System.out.println("APPLIED " + last);
                System.out.flush();
            }
            if (!j.state().equals(ImportJob.RUNNING)) {
                System.out.println("DONE " + j.state());
                System.out.flush();
                break;
            }
            Thread.sleep(1);
        }
        h.close();
        System.exit(0);
    }
}
