package jetstream.bench;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;

/** {@link GatewayBench}'s side of the {@link GatewayLoadGen} child: its stdin commands and {@code LG} answers. */
final class LoadGenControl {
    private final BufferedReader out;
    private final PrintWriter in;

    LoadGenControl(Process p) {
        out = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
        in = new PrintWriter(new OutputStreamWriter(p.getOutputStream(), StandardCharsets.UTF_8));
    }

    String[] call(String cmd) throws IOException {
        in.println(cmd);
        in.flush();
        String line;
        while ((line = out.readLine()) != null) {
            if (line.startsWith("LG ")) {
                return line.substring(3).split(" ");
            }
            System.out.println("loadgen: " + line);
        }
        throw new IllegalStateException("load generator exited");
    }

    void open(int n, String url, boolean latency) throws IOException {
        String[] r = call("open " + n + " " + url + " " + (latency ? 1 : 0));
        if (!r[0].equals("opened") || Integer.parseInt(r[2]) > 0) {
            throw new IllegalStateException("could not open " + n + " subscriptions to " + url + ": " + String.join(" ", r));
        }
        System.out.printf("  opened %d subscriptions in %s ms%n", n, r[3]);
    }

    long[] stats() throws IOException {
        String[] r = call("stats");
        return new long[] {Long.parseLong(r[1]), Long.parseLong(r[2]), Long.parseLong(r[3]), Long.parseLong(r[4])};
    }

    long[] latency() throws IOException {
        String[] r = call("lat");
        return new long[] {Long.parseLong(r[1]), Long.parseLong(r[2]), Long.parseLong(r[3]), Long.parseLong(r[4]),
                Long.parseLong(r[5])};
    }

    void closeAll() throws IOException {
        call("closeall");
    }

    void exit() {
        in.println("exit");
        in.flush();
    }
}
