package jetstream.cli.dev;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;
import picocli.CommandLine.TypeConversionException;

/** {@code jetstream frontdoor}: runs a {@link FrontDoor} in the foreground until the process is stopped. */
@Command(name = "frontdoor", mixinStandardHelpOptions = true,
        description = "one address for everything: routes by path to the gateways, the archive-server and (imports) the ingester")
public final class FrontDoorCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Option(names = "--archive", required = true, paramLabel = "HOST:PORT", converter = BackendConverter.class,
            description = "the archive-server")
    FrontDoor.Backend archive;

    @Option(names = "--gateway", required = true, paramLabel = "HOST:PORT", converter = BackendConverter.class,
            description = "a fanout gateway; repeat for more")
    List<FrontDoor.Backend> gateways = new ArrayList<>();

    @Option(names = "--ingester", paramLabel = "HOST:PORT", converter = BackendConverter.class,
            description = "the ingester's listener, for the timestamp import paths")
    FrontDoor.Backend ingester;

    @Option(names = "--addr", paramLabel = "[HOST:]PORT", defaultValue = "127.0.0.1:6008",
            description = "where to listen (default ${DEFAULT-VALUE})")
    String addr;

    @Override
    public Integer call() throws Exception {
        int c = addr.lastIndexOf(':');
        String host = c <= 0 ? "127.0.0.1" : addr.substring(0, c);
        int port;
        try {
            port = Integer.parseInt(addr.substring(c + 1));
        } catch (NumberFormatException e) {
            throw new ParameterException(spec.commandLine(),
                    "--addr must be [host:]port, not '" + addr + "'");
        }
        FrontDoor d = FrontDoor.start(host, port, archive, ingester, gateways);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            try {
                d.close();
            } catch (Exception ignored) {
                // exiting anyway
            }
        }));
        System.out.println("frontdoor: listening on http://" + host + ":" + d.port() + " (archive " + archive.host()
                + ":" + archive.port() + (ingester == null ? "" : ", ingester " + ingester.host() + ":" + ingester.port())
                + ", gateways " + gateways + ")");
        System.out.flush();
        Thread.currentThread().join();
        return 0;
    }

    /** {@code host:port} or an {@code http://host:port} URL. */
    static final class BackendConverter implements ITypeConverter<FrontDoor.Backend> {
        @Override
        public FrontDoor.Backend convert(String value) {
            try {
                return FrontDoor.Backend.parse(value);
            } catch (IllegalArgumentException e) {
                throw new TypeConversionException(e.getMessage());
            }
        }
    }
}
