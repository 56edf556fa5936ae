package jetstream.cli.dev;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A stack whose test JVM died leaves its processes running on the data directory; the next run kills
 * the Java processes it recorded (a second stack there would be a second writer of the archive), and
 * nothing else.
 */
@Tag("component")
class StopLeftoversTest {
    @TempDir
    Path dir;

    @Test
    void theRecordedJavaProcessesOfAPreviousStackAreKilledAndNothingElse() throws Exception {
        Path main = Files.writeString(dir.resolve("Sleep.java"),
                "class Sleep { public static void main(String[] a) throws Exception { Thread.sleep(600_000); } }");
        Process java = new ProcessBuilder(ProcessHandle.current().info().command().orElseThrow(), main.toString()).start();
        Process other = new ProcessBuilder("sleep", "600").start();
        try {
            Files.writeString(dir.resolve(DevStack.PIDS), java.pid() + " ingester\n" + other.pid() + " not-ours\n"
                    + 999_999_999L + " gone\n");
            DevStack.stopLeftovers(dir);
            assertTrue(java.waitFor(30, TimeUnit.SECONDS), "the leftover Java process is killed");
            assertTrue(other.isAlive(), "a process that is not Java is not ours: left alone");
            assertFalse(Files.exists(dir.resolve(DevStack.PIDS)));
            DevStack.stopLeftovers(dir);
        } finally {
            java.destroyForcibly();
            other.destroyForcibly();
        }
    }
}
